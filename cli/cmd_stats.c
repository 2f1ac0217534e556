// SPDX-License-Identifier: GPL-2.0
/*
 * `uf2fs stats MNT`: the counters of a live mount, the analogue of
 * /sys/fs/f2fs/<dev>/ and iostat_info. The daemon answers the private
 * UF2FS_IOC_GET_STATS ioctl on any inode of the mount with the text of
 * uf2fs_format_stats(); this command only asks and prints.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

static void cmd_stats_help(void)
{
	printf("Usage: uf2fs stats MOUNTPOINT\n"
	       "\n"
	       "Show the cache, device and request-size counters of a mounted uf2fs.\n"
	       "Any path inside the mount works.\n"
	       "\n"
	       "  -h, --help   show this help\n");
}

static int stats_query(const char *path, char *buf)
{
	int fd, ret = 0;

	/* O_NONBLOCK so that naming a FIFO in the mount does not hang. */
	fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, UF2FS_IOC_GET_STATS, buf) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int cmd_stats(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *buf;
	int c, ret;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			cmd_stats_help();
			return CLI_EXIT_OK;
		}
		fprintf(stderr, "Try 'uf2fs stats --help' for more information.\n");
		return CLI_EXIT_USAGE;
	}
	if (argc - optind != 1)
		return cli_usage_error("stats", argc == optind ? "missing MOUNTPOINT" :
				       "too many arguments");
	buf = calloc(1, UF2FS_IOC_STATS_SIZE);
	if (!buf) {
		cli_error("%s", strerror(ENOMEM));
		return CLI_EXIT_FAIL;
	}
	ret = stats_query(argv[optind], buf);
	buf[UF2FS_IOC_STATS_SIZE - 1] = '\0';
	if (ret == -ENOTTY || ret == -EINVAL || ret == -ENOSYS)
		cli_error("%s: not a uf2fs mount", argv[optind]);
	else if (ret < 0)
		cli_path_error(argv[optind], ret);
	else
		fputs(buf, stdout);
	free(buf);
	return ret < 0 ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
