// SPDX-License-Identifier: GPL-2.0
/*
 * `uf2fs verity enable|measure IMAGE PATH...`: fs-verity on an unmounted
 * image, for image builders with no mount: `fsverity enable` and
 * `fsverity measure` through the library, with the same options and the
 * same "ALG:HEX PATH" output.
 */
#include <getopt.h>
#include <linux/fsverity.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"

#define VERITY_SALT_MAX	32

static void cmd_verity_help(void)
{
	printf("Usage: uf2fs verity enable [--hash-alg=ALG] [--salt=HEX] [--block-size=4096]\n"
	       "                           [-o OPTIONS] IMAGE PATH...\n"
	       "       uf2fs verity measure [-o OPTIONS] IMAGE PATH...\n"
	       "\n"
	       "fs-verity on an f2fs image (made with -O verity), as Linux f2fs stores it.\n"
	       "enable builds each file's Merkle tree and makes it read-only and verified;\n"
	       "measure prints its digest as `fsverity measure` does (ALG:HEX PATH).\n"
	       "\n"
	       "  --hash-alg=ALG     sha256 (default) or sha512\n"
	       "  --salt=HEX         salt of up to 32 bytes, hex\n"
	       "  --block-size=SIZE  Merkle tree block size: 1024, 2048 or 4096 (default)\n"
	       "  -o OPTIONS         library options, comma-separated:\n"
	       CLI_LIB_OPTS_HELP
	       "  -h, --help         show this help\n");
}

static int parse_hex(const char *hex, uint8_t *out, uint32_t *len)
{
	size_t n = strlen(hex);

	if (n % 2 || n / 2 > VERITY_SALT_MAX)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned int v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	*len = (uint32_t)(n / 2);
	return 0;
}

static int verity_measure_one(struct uf2fs *fs, const char *path)
{
	uint8_t digest[64];
	uint16_t alg, size;
	uint32_t ino;
	int ret = cli_resolve(fs, path, true, &ino);

	if (!ret)
		ret = uf2fs_measure_verity(fs, ino, &alg, digest, &size);
	if (ret) {
		cli_path_error(path, ret);
		return CLI_EXIT_FAIL;
	}
	printf("%s:", alg == FS_VERITY_HASH_ALG_SHA512 ? "sha512" : "sha256");
	for (unsigned int i = 0; i < size; i++)
		printf("%02x", digest[i]);
	printf(" %s\n", path);
	return CLI_EXIT_OK;
}

static int verity_enable_one(struct uf2fs *fs, const char *path,
			     const struct uf2fs_verity_arg *arg)
{
	uint32_t ino;
	int ret = cli_resolve(fs, path, true, &ino);

	if (!ret)
		ret = uf2fs_enable_verity(fs, ino, arg);
	if (ret) {
		cli_path_error(path, ret);
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

static int verity_parse_option(int c, const char *arg, struct uf2fs_verity_arg *va,
			       uint8_t *salt, struct uf2fs_options *opts)
{
	switch (c) {
	case 'A':
		if (!strcmp(arg, "sha256"))
			va->hash_algorithm = FS_VERITY_HASH_ALG_SHA256;
		else if (!strcmp(arg, "sha512"))
			va->hash_algorithm = FS_VERITY_HASH_ALG_SHA512;
		else
			return cli_usage_error("verity", "unknown hash algorithm '%s'", arg);
		return 0;
	case 'S':
		if (parse_hex(arg, salt, &va->salt_size))
			return cli_usage_error("verity", "invalid salt '%s'", arg);
		return 0;
	case 'B':
		va->block_size = (uint32_t)strtoul(arg, NULL, 10);
		return 0;
	}
	return cli_common_option("verity", c, arg, opts);
}

int cmd_verity(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "hash-alg", required_argument, NULL, 'A' },
		{ "salt", required_argument, NULL, 'S' },
		{ "block-size", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint8_t salt[VERITY_SALT_MAX];
	struct uf2fs_verity_arg va = { .hash_algorithm = FS_VERITY_HASH_ALG_SHA256,
				       .block_size = 4096, .salt = salt };
	struct uf2fs_options opts;
	struct uf2fs *fs;
	bool enable;
	int c, ret, status = CLI_EXIT_OK;

	uf2fs_default_options(&opts);
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		if (c == 'h') {
			cmd_verity_help();
			return CLI_EXIT_OK;
		}
		ret = verity_parse_option(c, optarg, &va, salt, &opts);
		if (ret)
			return ret;
	}
	if (argc - optind < 3)
		return cli_usage_error("verity", "usage: verity enable|measure IMAGE PATH...");
	enable = !strcmp(argv[optind], "enable");
	if (!enable && strcmp(argv[optind], "measure"))
		return cli_usage_error("verity", "unknown action '%s'", argv[optind]);
	ret = enable ? cli_mount_rw(argv[optind + 1], &opts, &fs) :
		       cli_mount_image(argv[optind + 1], &opts, &fs);
	if (ret)
		return CLI_EXIT_FAIL;
	for (int i = optind + 2; i < argc; i++) {
		ret = enable ? verity_enable_one(fs, argv[i], &va) :
			       verity_measure_one(fs, argv[i]);
		if (ret)
			status = ret;
	}
	if (enable)
		return cli_unmount_rw(fs, argv[optind + 1], status);
	uf2fs_unmount(fs);
	return fflush(stdout) ? CLI_EXIT_FAIL : status;
}
