// SPDX-License-Identifier: GPL-2.0
/*
 * `uf2fs fscrypt`: fscrypt keys and policies on a live uf2fs mount, modelled
 * on fscryptctl (add_key, remove_key, key_status, get_policy, set_policy,
 * with its spellings of modes and options). Each subcommand is one
 * UF2FS_IOC_FSCRYPT ioctl to the daemon (fuse/fuse_fscrypt.c); keys are read
 * from standard input, never from the command line, and wiped after use.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"
#include "fscrypt/alg.h"

static void cmd_fscrypt_help(void)
{
	printf("Usage: uf2fs fscrypt add_key MOUNTPOINT              (raw key on stdin)\n"
	       "       uf2fs fscrypt remove_key KEYSPEC MOUNTPOINT\n"
	       "       uf2fs fscrypt key_status KEYSPEC MOUNTPOINT\n"
	       "       uf2fs fscrypt get_policy PATH\n"
	       "       uf2fs fscrypt set_policy [OPTIONS] KEYSPEC DIR\n"
	       "\n"
	       "fscrypt encryption on a mounted uf2fs, as fscryptctl does it on Linux.\n"
	       "KEYSPEC: 32 hex digits (a v2 key identifier) or 16 (a v1 descriptor).\n"
	       "add_key reads 16 to 64 raw bytes from stdin and prints the identifier;\n"
	       "--descriptor=HEX16 adds it as a v1 key under that descriptor instead.\n"
	       "\n"
	       "set_policy options:\n"
	       "  --contents=MODE     AES-256-XTS (default), AES-128-CBC, Adiantum\n"
	       "  --filenames=MODE    AES-256-CTS (default), AES-128-CTS, Adiantum,\n"
	       "                      AES-256-HCTR2\n"
	       "  --padding=N         4, 8, 16 or 32 (default)\n"
	       "  --direct-key        --iv-ino-lblk-64   --iv-ino-lblk-32\n"
	       "\n"
	       "Without its key an encrypted directory lists Linux's no-key names.\n");
}

static int hex_bytes(const char *s, uint8_t *out, size_t max)
{
	size_t n = strlen(s);

	if (n % 2 || n / 2 > max)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned int v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1 || !strchr("0123456789abcdefABCDEF",
								   s[2 * i + 1]))
			return -1;
		out[i] = (uint8_t)v;
	}
	return (int)(n / 2);
}

static int parse_keyspec(const char *s, struct uf2fs_fscrypt_arg *a)
{
	int n = hex_bytes(s, a->key_spec, sizeof(a->key_spec));

	if (n != 8 && n != 16) {
		cli_error("invalid key specifier '%s' (32 or 16 hex digits)", s);
		return -1;
	}
	a->spec_size = n;
	return 0;
}

static int fscrypt_ioctl(const char *path, struct uf2fs_fscrypt_arg *a)
{
	int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC), ret = 0;

	if (fd < 0) {
		cli_path_error(path, -errno);
		return -1;
	}
	if (ioctl(fd, UF2FS_IOC_FSCRYPT, a) < 0)
		ret = -errno;
	close(fd);
	explicit_bzero(a->key, sizeof(a->key));
	if (ret == -ENOTTY || ret == -EINVAL || ret == -ENOSYS) {
		cli_error("%s: not a uf2fs mount", path);
		return -1;
	}
	if (ret) {
		cli_path_error(path, ret);
		return -1;
	}
	return 0;
}

static void print_hex(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
}

static int do_add_key(int argc, char **argv, const char *desc)
{
	struct uf2fs_fscrypt_arg *a;
	ssize_t n, total = 0;
	int ret = CLI_EXIT_FAIL;

	if (argc != 1)
		return cli_usage_error("fscrypt", "add_key takes MOUNTPOINT");
	a = calloc(1, sizeof(*a));
	if (!a)
		return CLI_EXIT_FAIL;
	mlock(a, sizeof(*a));
	a->op = UF2FS_FSCRYPT_ADD_KEY;
	/* one byte more than a key may be, to tell a too-long key */
	while ((n = read(STDIN_FILENO, a->key + total, sizeof(a->key) - total)) > 0)
		total += n;
	if (total == sizeof(a->key)) {
		uint8_t extra;

		if (read(STDIN_FILENO, &extra, 1) == 1) {
			cli_error("the key on stdin is longer than 64 bytes");
			goto out;
		}
	}
	if (n < 0 || total < 16) {
		cli_error("expected a raw key of 16 to 64 bytes on stdin");
		goto out;
	}
	a->key_size = total;
	if (desc && hex_bytes(desc, a->key_spec, 8) != 8) {
		cli_error("invalid descriptor '%s' (16 hex digits)", desc);
		goto out;
	}
	a->spec_size = desc ? 8 : 16;
	if (fscrypt_ioctl(argv[0], a))
		goto out;
	if (a->result < 0) {
		cli_error("add_key: %s", strerror(-a->result));
		goto out;
	}
	print_hex(a->key_spec, a->spec_size);
	printf("\n");
	ret = CLI_EXIT_OK;
out:
	explicit_bzero(a, sizeof(*a));
	munlock(a, sizeof(*a));
	free(a);
	return ret;
}

static int do_key_op(int argc, char **argv, uint32_t op, const char *name)
{
	struct uf2fs_fscrypt_arg a = { .op = op };

	if (argc != 2)
		return cli_usage_error("fscrypt", "%s takes KEYSPEC MOUNTPOINT", name);
	if (parse_keyspec(argv[0], &a) || fscrypt_ioctl(argv[1], &a))
		return CLI_EXIT_FAIL;
	if (op == UF2FS_FSCRYPT_KEY_STATUS && a.result >= 0) {
		printf("%s\n", a.result ? "Present" : "Absent");
		return CLI_EXIT_OK;
	}
	if (a.result < 0) {
		cli_error("%s %s: %s", name, argv[0], a.result == -ENOKEY ?
			  "no such key on this mount" : strerror(-a.result));
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

static int do_get_policy(int argc, char **argv)
{
	struct uf2fs_fscrypt_arg a = { .op = UF2FS_FSCRYPT_GET_POLICY };
	const struct uf2fs_fscrypt_policy *p = &a.policy;

	if (argc != 1)
		return cli_usage_error("fscrypt", "get_policy takes PATH");
	if (fscrypt_ioctl(argv[0], &a))
		return CLI_EXIT_FAIL;
	if (a.result == -ENODATA) {
		cli_error("%s: file or directory not encrypted", argv[0]);
		return CLI_EXIT_FAIL;
	}
	if (a.result < 0) {
		cli_path_error(argv[0], a.result);
		return CLI_EXIT_FAIL;
	}
	printf("Encryption policy for %s:\n", argv[0]);
	printf("\tPolicy version: %u\n", p->version);
	printf("\tMaster key %s: ", p->version == 1 ? "descriptor" : "identifier");
	print_hex(p->key_spec, p->version == 1 ? 8 : 16);
	printf("\n\tContents encryption mode: %s\n", fscrypt_mode_name(p->contents_mode) ?:
	       "unknown");
	printf("\tFilenames encryption mode: %s\n", fscrypt_mode_name(p->filenames_mode) ?:
	       "unknown");
	printf("\tFlags: PAD_%d%s%s%s\n", 4 << (p->flags & 3), p->flags & 0x04 ?
	       ", DIRECT_KEY" : "", p->flags & 0x08 ? ", IV_INO_LBLK_64" : "",
	       p->flags & 0x10 ? ", IV_INO_LBLK_32" : "");
	if (p->log2_data_unit_size)
		printf("\tData unit size: %u\n", 1u << p->log2_data_unit_size);
	return CLI_EXIT_OK;
}

static int do_set_policy(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "contents", required_argument, NULL, 'c' },
		{ "filenames", required_argument, NULL, 'f' },
		{ "padding", required_argument, NULL, 'p' },
		{ "direct-key", no_argument, NULL, 'd' },
		{ "iv-ino-lblk-64", no_argument, NULL, '6' },
		{ "iv-ino-lblk-32", no_argument, NULL, '3' },
		{ "data-unit-size", required_argument, NULL, 'u' },
		{ NULL, 0, NULL, 0 },
	};
	struct uf2fs_fscrypt_arg a = { .op = UF2FS_FSCRYPT_SET_POLICY };
	struct uf2fs_fscrypt_policy *p = &a.policy;
	int c, m, pad = 32;

	p->contents_mode = FSCRYPT_MODE_AES_256_XTS;
	p->filenames_mode = FSCRYPT_MODE_AES_256_CTS;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
		case 'f':
			m = fscrypt_mode_from_name(optarg);
			if (m < 0) {
				cli_error("unknown encryption mode '%s'", optarg);
				return CLI_EXIT_USAGE;
			}
			*(c == 'c' ? &p->contents_mode : &p->filenames_mode) = (uint8_t)m;
			break;
		case 'p':
			pad = atoi(optarg);
			if (pad != 4 && pad != 8 && pad != 16 && pad != 32) {
				cli_error("padding must be 4, 8, 16 or 32");
				return CLI_EXIT_USAGE;
			}
			break;
		case 'd':
			p->flags |= 0x04;
			break;
		case '6':
			p->flags |= 0x08;
			break;
		case '3':
			p->flags |= 0x10;
			break;
		case 'u': {
			unsigned long du = strtoul(optarg, NULL, 0);

			if (du < 512 || du > 4096 || (du & (du - 1))) {
				cli_error("data unit size must be a power of 2 from 512 to 4096");
				return CLI_EXIT_USAGE;
			}
			p->log2_data_unit_size = (uint8_t)__builtin_ctzl(du);
			break;
		}
		default:
			return cli_usage_error("fscrypt", "unknown set_policy option");
		}
	}
	p->flags |= pad == 4 ? 0 : pad == 8 ? 1 : pad == 16 ? 2 : 3;
	if (argc - optind != 2)
		return cli_usage_error("fscrypt", "set_policy takes KEYSPEC DIR");
	if (parse_keyspec(argv[optind], &a))
		return CLI_EXIT_FAIL;
	memcpy(p->key_spec, a.key_spec, sizeof(p->key_spec));
	p->version = a.spec_size == 8 ? 1 : 2;
	if (fscrypt_ioctl(argv[optind + 1], &a))
		return CLI_EXIT_FAIL;
	if (a.result < 0) {
		const char *why = a.result == -ENOKEY ? "the key is not on this mount (add_key)" :
				  a.result == -EEXIST ? "already encrypted with another policy" :
				  a.result == -EINVAL ? "Linux refuses this policy" :
				  strerror(-a.result);

		cli_error("set_policy %s: %s", argv[optind + 1], why);
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

int cmd_fscrypt(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;

	if (!sub || !strcmp(sub, "-h") || !strcmp(sub, "--help")) {
		cmd_fscrypt_help();
		return sub ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	}
	if (!strcmp(sub, "add_key")) {
		const char *desc = NULL;
		int i = 2;

		if (argc > 2 && !strncmp(argv[2], "--descriptor=", 13))
			desc = argv[i++] + 13;
		return do_add_key(argc - i, argv + i, desc);
	}
	if (!strcmp(sub, "remove_key"))
		return do_key_op(argc - 2, argv + 2, UF2FS_FSCRYPT_REMOVE_KEY, "remove_key");
	if (!strcmp(sub, "key_status"))
		return do_key_op(argc - 2, argv + 2, UF2FS_FSCRYPT_KEY_STATUS, "key_status");
	if (!strcmp(sub, "get_policy"))
		return do_get_policy(argc - 2, argv + 2);
	if (!strcmp(sub, "set_policy"))
		return do_set_policy(argc - 1, argv + 1);
	return cli_usage_error("fscrypt", "unknown subcommand '%s'", sub);
}
