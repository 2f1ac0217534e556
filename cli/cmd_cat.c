// SPDX-License-Identifier: GPL-2.0
/*
 * `uf2fs cat IMAGE PATH...`: copy files from an image to stdout, like cat(1).
 * Reads are 1 MiB so that the library sees whole large folios and can batch
 * device requests, as it would for a streaming reader through FUSE.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"

#define CAT_BUF_SIZE	(1u << 20)

static void cmd_cat_help(void)
{
	printf("Usage: uf2fs cat [-o OPTIONS] IMAGE PATH...\n"
	       "\n"
	       "Print files from an f2fs image to standard output. Symlinks are followed.\n"
	       "\n"
	       "  -o OPTIONS   library options, comma-separated:\n"
	       CLI_LIB_OPTS_HELP
	       "  -h, --help   show this help\n");
}

/* Returns 0, or a negative errno with *on_output telling which side failed. */
static int cat_copy(struct uf2fs *fs, uint32_t ino, char *buf, bool *on_output)
{
	uint64_t off = 0;
	ssize_t n;
	int ret;

	for (;;) {
		n = uf2fs_read(fs, ino, buf, CAT_BUF_SIZE, off);
		if (n <= 0)
			return n;
		ret = cli_write_all(STDOUT_FILENO, buf, n);
		if (ret < 0) {
			*on_output = true;
			return ret;
		}
		off += n;
	}
}

static int cat_one(struct uf2fs *fs, const char *path, char *buf, bool *output_failed)
{
	struct uf2fs_attr attr;
	uint32_t ino;
	int ret;

	ret = cli_resolve(fs, path, true, &ino);
	if (ret == 0)
		ret = uf2fs_getattr(fs, ino, &attr);
	if (ret == 0 && S_ISDIR(attr.mode))
		ret = -EISDIR;
	if (ret == 0)
		ret = cat_copy(fs, ino, buf, output_failed);
	if (ret < 0)
		cli_path_error(*output_failed ? "write error" : path, ret);
	return ret;
}

int cmd_cat(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct uf2fs_options opts;
	bool output_failed = false;
	int c, i, ret, status = CLI_EXIT_OK;
	struct uf2fs *fs;
	char *buf;

	uf2fs_default_options(&opts);
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		if (c == 'h') {
			cmd_cat_help();
			return CLI_EXIT_OK;
		}
		ret = cli_common_option("cat", c, optarg, &opts);
		if (ret)
			return ret;
	}
	if (argc - optind < 2)
		return cli_usage_error("cat", argc == optind ? "missing IMAGE" : "missing PATH");
	buf = malloc(CAT_BUF_SIZE);
	if (!buf) {
		cli_error("%s", strerror(ENOMEM));
		return CLI_EXIT_FAIL;
	}
	if (cli_mount_image(argv[optind], &opts, &fs)) {
		free(buf);
		return CLI_EXIT_FAIL;
	}
	for (i = optind + 1; i < argc && !output_failed; i++)
		if (cat_one(fs, argv[i], buf, &output_failed) < 0)
			status = CLI_EXIT_FAIL;
	uf2fs_unmount(fs);
	free(buf);
	return status;
}
