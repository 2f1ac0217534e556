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
	       "\n"
	       "  --verify     on an Android sparse image, check every CRC32 chunk and the\n"
	       "               header's image_checksum (when not 0) first; a mismatch is\n"
	       "               reported by chunk and byte, and the exit status is 1\n"
	       "  -o OPTIONS   library options, comma-separated:\n"
	       CLI_LIB_OPTS_HELP
	       "  -h, --help   show this help\n");
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
	if (cli_mount_image(argv[optind], &opts, &fs))
		return CLI_EXIT_FAIL;
	uf2fs_print_info(fs, stdout);
	printf("needs recovery: %s\n", uf2fs_needs_recovery(fs) ?
	       "yes (fsync'd data past the last checkpoint; not rolled forward read-only)" :
	       "no");
	uf2fs_unmount(fs);
	return fflush(stdout) || bad ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
