// SPDX-License-Identifier: GPL-2.0
/*
 * `uf2fs info IMAGE`: what fsck.f2fs and dump.f2fs would say about an image
 * before anyone mounts it: geometry, features, checkpoint state and usage (all
 * from the library), plus whether fsync'd data waits past the last checkpoint.
 * With --verify, an Android sparse image's checksums are checked first.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"

static void cmd_info_help(void)
{
	printf("Usage: uf2fs info [--verify] [-o OPTIONS] IMAGE\n"
	       "\n"
	       "Show the geometry, features, checkpoint state and usage of an f2fs image.\n"
	       "On a partitioned disk that is not f2fs itself, list its partitions.\n"
	       "\n"
	       "  --verify     on an Android sparse image, check every CRC32 chunk and the\n"
	       "               header's image_checksum (when not 0) first; a mismatch is\n"
	       "               reported by chunk and byte, and the exit status is 1\n"
	       "  -o OPTIONS   library options, comma-separated:\n"
	       CLI_LIB_OPTS_HELP
	       "  -h, --help   show this help\n");
}

static void print_size(uint64_t bytes)
{
	static const char units[] = "BKMGT";
	unsigned int u = 0;
	double v = bytes;

	while (v >= 1024 && u < sizeof(units) - 2) {
		v /= 1024;
		u++;
	}
	printf(u ? "%7.1f%c" : "%7.0f%c", v, units[u]);
}

/* A partitioned disk that is not f2fs itself: what it holds, and how to pick one. */
static void info_partitions(const char *image, const struct uf2fs_partitions *parts)
{
	printf("%s: a partitioned disk (%s, %u-byte sectors), not an f2fs volume itself\n",
	       image, parts->table, parts->sector_size);
	printf("%4s %14s %8s  %-4s  %-36s  %s\n", "part", "start (bytes)", "size", "f2fs",
	       "type", "name");
	for (unsigned int i = 0; i < parts->nr; i++) {
		const struct uf2fs_partition *p = &parts->part[i];

		printf("%4u %14llu ", p->number, (unsigned long long)p->start);
		print_size(p->size);
		printf("  %-4s  %-36s  %s\n", p->f2fs ? "yes" : "-", p->type, p->name);
	}
	printf("open one with -o partition=NAME or -o partition=N\n");
}

/*
 * 0: checked (or not sparse: nothing to check); 1: a checksum mismatch, the
 * image is still shown; < 0: it cannot be opened as what it claims to be.
 */
static int verify_sparse(const char *image)
{
	char msg[256];
	int ret = uf2fs_verify_sparse(image, msg, sizeof(msg));

	if (!ret || ret == -ENOTTY) {
		printf("verify: %s\n", msg);
		return 0;
	}
	if (ret == -EBADMSG) {
		cli_error("%s: checksum mismatch: %s", image, msg);
		return 1;
	}
	cli_error("%s: %s", image, ret == -EUCLEAN ? msg : strerror(-ret));
	return -1;
}

int cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "verify", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct uf2fs_options opts;
	struct uf2fs_partitions parts;
	struct uf2fs *fs;
	bool verify = false, bad = false;
	int c, ret;

	uf2fs_default_options(&opts);
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		if (c == 'h') {
			cmd_info_help();
			return CLI_EXIT_OK;
		}
		if (c == 'V') {
			verify = true;
			continue;
		}
		ret = cli_common_option("info", c, optarg, &opts);
		if (ret)
			return ret;
	}
	if (argc == optind)
		return cli_usage_error("info", "missing IMAGE");
	if (argc - optind > 1)
		return cli_usage_error("info", "too many arguments");
	if (verify) {
		ret = verify_sparse(argv[optind]);
		if (ret < 0)
			return CLI_EXIT_FAIL;
		bad = ret;
	}
	/* one open of the source for the table and the volume: one qemu-nbd */
	ret = cli_mount_or_partitions(argv[optind], &opts, &fs, &parts);
	if (ret < 0)
		return CLI_EXIT_FAIL;
	if (ret) {
		info_partitions(argv[optind], &parts);
		uf2fs_free_partitions(&parts);
		return fflush(stdout) || bad ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	}
	uf2fs_print_info(fs, stdout);
	printf("needs recovery: %s\n", uf2fs_needs_recovery(fs) ?
	       "yes (fsync'd data past the last checkpoint; not rolled forward read-only)" :
	       "no");
	uf2fs_unmount(fs);
	return fflush(stdout) || bad ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
