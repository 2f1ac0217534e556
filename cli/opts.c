// SPDX-License-Identifier: GPL-2.0
/*
 * Parsing of the library's -o options (max_folio_order, cache_size, backend)
 * into struct uf2fs_options. The FUSE front end calls cli_apply_lib_option()
 * for each -o option it sees, so both front ends accept exactly the same keys
 * and values, and report bad values the same way.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opts.h"

/* The largest order that still makes sense: 2^12 blocks = 16 MiB folios. */
#define CLI_MAX_FOLIO_ORDER	12

int cli_parse_size(const char *str, uint64_t *out)
{
	unsigned int shift = 0;
	unsigned long long val;
	char *end;

	if (!*str || *str == '-')
		return -EINVAL;
	errno = 0;
	val = strtoull(str, &end, 10);
	if (errno || end == str)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	/* Accept "64M", "64MB" and "64MiB" alike: people type all three. */
	if (shift && (!strcmp(end, "B") || !strcmp(end, "iB")))
		end += strlen(end);
	if (*end)
		return -EINVAL;
	if (shift && val > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)val << shift;
	return 0;
}

static int cli_bad_value(const char *key, const char *val, const char *expected)
{
	fprintf(stderr, "uf2fs: invalid value '%s' for option '%s' (expected %s)\n",
		val, key, expected);
	return -EINVAL;
}

static int cli_parse_folio_order(struct uf2fs_options *opts, const char *val)
{
	unsigned long order;
	char *end;

	errno = 0;
	order = strtoul(val, &end, 10);
	if (errno || end == val || *end || *val == '-' || order > CLI_MAX_FOLIO_ORDER)
		return cli_bad_value("max_folio_order", val, "0 to 12");
	opts->max_folio_order = order;
	return 1;
}

static int cli_parse_backend(struct uf2fs_options *opts, const char *val)
{
	if (!strcmp(val, "psync"))
		opts->backend = UF2FS_BACKEND_PSYNC;
	else if (!strcmp(val, "uring") || !strcmp(val, "io_uring"))
		opts->backend = UF2FS_BACKEND_URING;
	else
		return cli_bad_value("backend", val, "psync or uring");
	return 1;
}

int cli_apply_lib_option(struct uf2fs_options *opts, const char *opt)
{
	const char *val = strchr(opt, '=');
	size_t klen = val ? (size_t)(val - opt) : strlen(opt);
	uint64_t size;

	if (val)
		val++;
	if (klen == 15 && !strncmp(opt, "max_folio_order", klen)) {
		if (!val)
			return cli_bad_value("max_folio_order", "", "0 to 12");
		return cli_parse_folio_order(opts, val);
	}
	if (klen == 10 && !strncmp(opt, "cache_size", klen)) {
		if (!val || cli_parse_size(val, &size))
			return cli_bad_value("cache_size", val ? val : "", "a size like 256M");
		opts->cache_size = size;
		return 1;
	}
	if (klen == 7 && !strncmp(opt, "backend", klen)) {
		if (!val)
			return cli_bad_value("backend", "", "psync or uring");
		return cli_parse_backend(opts, val);
	}
	return 0;
}

int cli_apply_lib_options(struct uf2fs_options *opts, const char *list)
{
	char *copy = strdup(list);
	char *save = NULL;
	char *opt;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (opt = strtok_r(copy, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
		ret = cli_apply_lib_option(opts, opt);
		if (ret < 0)
			break;
		if (ret == 0 && strcmp(opt, "ro") != 0) {
			fprintf(stderr, "uf2fs: unknown option '%s'\n", opt);
			ret = -EINVAL;
			break;
		}
		ret = 0;
	}
	free(copy);
	return ret;
}

int cli_mount_image(const char *image, struct uf2fs_options *opts, struct uf2fs **fs)
{
	int ret;

	/* The commonest mistake gets the plain coreutils message, and only that. */
	if (access(image, R_OK) < 0) {
		ret = -errno;
		fprintf(stderr, "uf2fs: %s: %s\n", image, strerror(errno));
		return ret;
	}
	opts->device = image;
	opts->read_only = true;
	*fs = NULL;
	ret = uf2fs_mount(opts, fs);
	if (ret < 0)
		fprintf(stderr, "uf2fs: %s: cannot mount: %s\n", image, strerror(-ret));
	return ret;
}
