// SPDX-License-Identifier: GPL-2.0
/*
 * `uf2fs simg IMAGE OUT`: write a new Android sparse image (what fastboot
 * flashes) of a raw f2fs image. uf2fs reads sparse images in place but will
 * not write into one; after editing the raw image (simg2img, then put/rm/...),
 * this turns it back into sparse form, leaving free blocks out.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"

static void cmd_simg_help(void)
{
	printf("Usage: uf2fs simg [-o OPTIONS] IMAGE OUT\n"
	       "\n"
	       "Write OUT, a new Android sparse image (the format of img2simg and fastboot)\n"
	       "of the raw f2fs IMAGE. The metadata area and every block in use are kept\n"
	       "(a block of one repeated 32-bit value as a fill chunk); free blocks of the\n"
	       "main area are left out (don't-care chunks), whatever stale data they hold.\n"
	       "OUT is created or truncated; IMAGE is opened read-only.\n"
	       "\n"
	       "  -o OPTIONS   library options, comma-separated:\n"
	       CLI_LIB_OPTS_HELP
	       "  -h, --help   show this help\n");
}

static int write_simg(struct uf2fs *fs, const char *out)
{
	struct uf2fs_sparse_report rep;
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int ret;

	if (fd < 0) {
		cli_error("%s: %s", out, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	ret = uf2fs_write_sparse(fs, fd, &rep);
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (ret) {
		cli_error("%s: cannot write the sparse image: %s", out, strerror(-ret));
		unlink(out);
		return CLI_EXIT_FAIL;
	}
	printf("%s: %llu blocks of data, %llu of fill, %llu left out (free)\n", out,
	       (unsigned long long)rep.data_blocks, (unsigned long long)rep.fill_blocks,
	       (unsigned long long)rep.dont_care_blocks);
	return CLI_EXIT_OK;
}

int cmd_simg(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct uf2fs_options opts;
	struct uf2fs *fs;
	int c, ret;

	uf2fs_default_options(&opts);
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		if (c == 'h') {
			cmd_simg_help();
			return CLI_EXIT_OK;
		}
		ret = cli_common_option("simg", c, optarg, &opts);
		if (ret)
			return ret;
	}
	if (argc - optind < 2)
		return cli_usage_error("simg", argc == optind ? "missing IMAGE and OUT" :
				       "missing OUT");
	if (argc - optind > 2)
		return cli_usage_error("simg", "too many arguments");
	if (cli_mount_image(argv[optind], &opts, &fs))
		return CLI_EXIT_FAIL;
	ret = write_simg(fs, argv[optind + 1]);
	uf2fs_unmount(fs);
	return ret;
}
