// SPDX-License-Identifier: GPL-2.0
/*
 * `uf2fs info IMAGE`: what fsck.f2fs and dump.f2fs would say about an image
 * before anyone mounts it: geometry, features, checkpoint state and usage (all
 * from the library), plus whether fsync'd data waits past the last checkpoint.
 */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "opts.h"

static void cmd_info_help(void)
{
	printf("Usage: uf2fs info [-o OPTIONS] IMAGE\n"
	       "\n"
	       "Show the geometry, features, checkpoint state and usage of an f2fs image.\n"
	       "\n"
	       "  -o OPTIONS   library options, comma-separated:\n"
	       CLI_LIB_OPTS_HELP
	       "  -h, --help   show this help\n");
}

int cmd_info(int argc, char **argv)
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
			cmd_info_help();
			return CLI_EXIT_OK;
		}
		ret = cli_common_option("info", c, optarg, &opts);
		if (ret)
			return ret;
	}
	if (argc == optind)
		return cli_usage_error("info", "missing IMAGE");
	if (argc - optind > 1)
		return cli_usage_error("info", "too many arguments");
	if (cli_mount_image(argv[optind], &opts, &fs))
		return CLI_EXIT_FAIL;
	uf2fs_print_info(fs, stdout);
	printf("needs recovery: %s\n", uf2fs_needs_recovery(fs) ?
	       "yes (fsync'd data past the last checkpoint; not rolled forward read-only)" :
	       "no");
	uf2fs_unmount(fs);
	return fflush(stdout) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
