// SPDX-License-Identifier: GPL-2.0
/*
 * Parsing of the library's -o options (max_folio_order, cache_size, backend,
 * checkpoint_interval, background_gc, dontcache, write_through, mode,
 * ipu_policy, acl, and the compress_* options of Linux f2fs) into struct
 * uf2fs_options, and the one way every front end mounts an image. The FUSE front end calls
 * cli_apply_lib_option() for each -o option it sees, so both front ends
 * accept exactly the same keys and values, and report bad values the same way.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opts.h"

/* The largest order that still makes sense: 2^12 blocks = 16 MiB folios. */
#define CLI_MAX_FOLIO_ORDER	12
/* A day: a longer interval only widens what a crash loses. */
#define CLI_MAX_CP_INTERVAL	86400

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

/*
 * The strings that options point at (paths, URIs' TLS settings, format=,
 * partition=) are needed until the image is closed, which for the FUSE
 * daemon is the end of the run: they are kept here and freed at once by
 * cli_free_option_strings when main is done.
 */
static char **opt_strings;
static size_t nr_opt_strings, opt_strings_cap;

/* The verity_cert= list itself (its strings are kept like the others). */
static const char **verity_cert_array;

/* s (which may be NULL) is ours to free at the end of the run. */
static char *cli_keep_string(char *s)
{
	if (s && nr_opt_strings == opt_strings_cap) {
		size_t cap = opt_strings_cap ? 2 * opt_strings_cap : 8;
		char **v = realloc(opt_strings, cap * sizeof(*v));

		if (!v) {
			free(s);
			return NULL;
		}
		opt_strings = v;
		opt_strings_cap = cap;
	}
	if (s)
		opt_strings[nr_opt_strings++] = s;
	return s;
}

void cli_free_option_strings(void)
{
	free(verity_cert_array);
	verity_cert_array = NULL;
	for (size_t i = 0; i < nr_opt_strings; i++)
		free(opt_strings[i]);
	free(opt_strings);
	opt_strings = NULL;
	nr_opt_strings = opt_strings_cap = 0;
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

/*
 * Seconds, 1 to a day: checkpoint_interval (Linux f2fs's cp_interval) and
 * dirty_expire (the kernel's dirty_expire_centisecs, in seconds).
 */
static int cli_parse_secs(const char *name, const char *val, unsigned int *out)
{
	unsigned long secs;
	char *end;

	errno = 0;
	secs = val ? strtoul(val, &end, 10) : 0;
	if (!val || errno || end == val || *end || *val == '-' || !secs ||
	    secs > CLI_MAX_CP_INTERVAL)
		return cli_bad_value(name, val ? val : "", "seconds, 1 to 86400");
	*out = secs;
	return 1;
}

/*
 * NAME=on|off: background_gc (as Linux f2fs's, less "sync", which the
 * library has no use for), dontcache, write_through.
 */
static int cli_parse_onoff(const char *name, const char *val, int *out)
{
	if (!val || (strcmp(val, "on") && strcmp(val, "off")))
		return cli_bad_value(name, val ? val : "", "on or off");
	*out = !strcmp(val, "on");
	return 1;
}

/* As Linux f2fs's mode= mount option, less the zoned-device "fragment" modes. */
static int cli_parse_mode(struct uf2fs_options *opts, const char *val)
{
	if (!val || (strcmp(val, "adaptive") && strcmp(val, "lfs")))
		return cli_bad_value("mode", val ? val : "", "adaptive or lfs");
	opts->mode_lfs = !strcmp(val, "lfs");
	return 1;
}

/* The bits of Linux f2fs's sysfs ipu_policy, decimal or 0x-hex. */
static int cli_parse_ipu_policy(struct uf2fs_options *opts, const char *val)
{
	unsigned long pol;
	char *end;

	errno = 0;
	pol = val ? strtoul(val, &end, 0) : 0;
	if (!val || errno || end == val || *end || *val == '-' || pol > 0xff)
		return cli_bad_value("ipu_policy", val ? val : "",
				     "the kernel's bits, 0 to 0xff (0x10: fsync, 0x1: force)");
	opts->ipu_policy = (int)pol;
	return 1;
}

/* As Linux f2fs's compress_algorithm: lzo, lz4[:3..12], zstd[:1..22] or lzo-rle. */
static int cli_parse_compress_algorithm(struct uf2fs_options *opts, const char *val)
{
	static const struct {
		const char *name;
		enum uf2fs_compress_algorithm algo;
		unsigned int min_level, max_level;	/* 0, 0: no level */
	} algos[] = {
		{ "lzo", UF2FS_COMPRESS_LZO, 0, 0 },
		{ "lz4", UF2FS_COMPRESS_LZ4, 3, 12 },
		{ "zstd", UF2FS_COMPRESS_ZSTD, 1, 22 },
		{ "lzo-rle", UF2FS_COMPRESS_LZORLE, 0, 0 },
	};
	const char *expected = "lzo, lz4[:3..12], zstd[:1..22] or lzo-rle";
	const char *colon = val ? strchr(val, ':') : NULL;
	size_t nlen = colon ? (size_t)(colon - val) : (val ? strlen(val) : 0);

	for (size_t i = 0; val && i < sizeof(algos) / sizeof(algos[0]); i++) {
		unsigned long level = 0;
		char *end;

		if (strlen(algos[i].name) != nlen || strncmp(val, algos[i].name, nlen))
			continue;
		if (colon) {
			errno = 0;
			level = strtoul(colon + 1, &end, 10);
			if (!algos[i].max_level || errno || end == colon + 1 || *end ||
			    colon[1] == '-' || level < algos[i].min_level ||
			    level > algos[i].max_level)
				return cli_bad_value("compress_algorithm", val, expected);
		}
		opts->compress.algorithm = algos[i].algo;
		opts->compress.level = level;
		return 1;
	}
	return cli_bad_value("compress_algorithm", val ? val : "", expected);
}

static int cli_parse_compress_log_size(struct uf2fs_options *opts, const char *val)
{
	unsigned long log;
	char *end;

	errno = 0;
	log = val ? strtoul(val, &end, 10) : 0;
	if (!val || errno || end == val || *end || *val == '-' || log < 2 || log > 8)
		return cli_bad_value("compress_log_size", val ? val : "", "2 to 8");
	opts->compress.log_size = log;
	return 1;
}

static int cli_parse_compress_extension(struct uf2fs_options *opts, const char *val)
{
	struct uf2fs_compress_options *c = &opts->compress;

	if (!val || !*val || strlen(val) >= UF2FS_COMPRESS_EXT_LEN)
		return cli_bad_value("compress_extension", val ? val : "", "1 to 7 characters");
	if (c->nr_ext == UF2FS_COMPRESS_EXT_MAX) {
		fprintf(stderr, "uf2fs: at most %d compress_extension options\n",
			UF2FS_COMPRESS_EXT_MAX);
		return -EINVAL;
	}
	strcpy(c->ext[c->nr_ext++], val);
	return 1;
}

/*
 * Where the image lives (lib/dev/nbd.c): format= for a VM disk, libnbd's TLS
 * settings for nbds://. The values are kept for the whole run.
 */
static bool cli_apply_source_option(struct uf2fs_options *opts, const char *opt, size_t klen,
				    const char *val)
{
	static const struct { const char *key; size_t off; } keys[] = {
		{ "format", offsetof(struct uf2fs_options, image_format) },
		{ "tls_certificates", offsetof(struct uf2fs_options, tls_certificates) },
		{ "tls_psk_file", offsetof(struct uf2fs_options, tls_psk_file) },
		{ "tls_username", offsetof(struct uf2fs_options, tls_username) },
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strlen(keys[i].key) == klen && !strncmp(opt, keys[i].key, klen)) {
			*(const char **)((char *)opts + keys[i].off) = cli_keep_string(strdup(val));
			return true;
		}
	}
	return false;
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
	if (klen == 19 && !strncmp(opt, "checkpoint_interval", klen))
		return cli_parse_secs("checkpoint_interval", val, &opts->checkpoint_interval);
	if (klen == 13 && !strncmp(opt, "background_gc", klen))
		return cli_parse_onoff("background_gc", val, &opts->background_gc);
	if (klen == 9 && !strncmp(opt, "dontcache", klen))
		return cli_parse_onoff("dontcache", val, &opts->dontcache);
	if (klen == 7 && !strncmp(opt, "flusher", klen))
		return cli_parse_onoff("flusher", val, &opts->flusher);
	if (klen == 12 && !strncmp(opt, "dirty_expire", klen))
		return cli_parse_secs("dirty_expire", val, &opts->dirty_expire);
	if (klen == 16 && !strncmp(opt, "dirty_background", klen)) {
		if (!val || cli_parse_size(val, &size) || !size)
			return cli_bad_value("dirty_background", val ? val : "",
					     "a size like 64M");
		opts->dirty_background = size;
		return 1;
	}
	if (klen == 13 && !strncmp(opt, "write_through", klen))
		return cli_parse_onoff("write_through", val, &opts->write_through);
	if (klen == 4 && !strncmp(opt, "mode", klen))
		return cli_parse_mode(opts, val);
	if (klen == 10 && !strncmp(opt, "ipu_policy", klen))
		return cli_parse_ipu_policy(opts, val);
	if (!strcmp(opt, "nodiratime") || !strcmp(opt, "diratime")) {
		opts->nodiratime = opt[0] == 'n';
		return 1;
	}
	if (!strcmp(opt, "relatime") || !strcmp(opt, "noatime") || !strcmp(opt, "strictatime")) {
		opts->atime_mode = opt[0] == 'r' ? 0 : opt[0] == 'n' ? 1 : 2;
		return 1;
	}
	/* As f2fs's mount options; acl is the default there too. */
	if (!strcmp(opt, "acl") || !strcmp(opt, "noacl")) {
		opts->noacl = opt[0] == 'n';
		return 1;
	}
	if (klen == 7 && !strncmp(opt, "keyfile", klen)) {
		if (!val || !*val)
			return cli_bad_value("keyfile", "", "a path");
		/*
		 * Read at mount time, when the option string may be gone and a
		 * daemon may have changed to "/": keep an absolute copy.
		 */
		opts->keyfile = cli_keep_string(realpath(val, NULL));
		if (!opts->keyfile)	/* the mount names the error */
			opts->keyfile = cli_keep_string(strdup(val));
		return opts->keyfile ? 1 : -ENOMEM;
	}
	if (!strcmp(opt, "verity_require_signatures")) {
		opts->verity_require_signatures = true;
		return 1;
	}
	if (klen == 11 && !strncmp(opt, "verity_cert", klen)) {
		const char **v;

		if (!val || !*val)
			return cli_bad_value("verity_cert", "", "a PEM file");
		v = realloc((void *)opts->verity_certs,
			    (opts->nr_verity_certs + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		opts->verity_certs = verity_cert_array = v;
		/* read at mount time, maybe after a daemon changed to "/" */
		v[opts->nr_verity_certs] = cli_keep_string(realpath(val, NULL));
		if (!v[opts->nr_verity_certs])	/* the mount names the error */
			v[opts->nr_verity_certs] = cli_keep_string(strdup(val));
		return v[opts->nr_verity_certs++] ? 1 : -ENOMEM;
	}
	if (klen == 9 && !strncmp(opt, "partition", klen)) {
		if (!val || !*val)
			return cli_bad_value("partition", "", "a GPT name or a partition number");
		opts->partition = cli_keep_string(strdup(val));	/* the last one wins */
		return opts->partition ? 1 : -ENOMEM;
	}
	if (klen == 6 && !strncmp(opt, "device", klen)) {
		if (!val || !*val)
			return cli_bad_value("device", "", "a path");
		if (opts->nr_devices == UF2FS_MAX_EXTRA_DEVICES) {
			fprintf(stderr, "uf2fs: at most %d device= options\n",
				UF2FS_MAX_EXTRA_DEVICES);
			return -EINVAL;
		}
		/* opened at mount time, maybe after a daemon changed to "/" */
		opts->devices[opts->nr_devices] = cli_keep_string(realpath(val, NULL));
		if (!opts->devices[opts->nr_devices])	/* the mount names it */
			opts->devices[opts->nr_devices] = cli_keep_string(strdup(val));
		return opts->devices[opts->nr_devices++] ? 1 : -ENOMEM;
	}
	if (klen == 13 && !strncmp(opt, "zone_capacity", klen)) {
		if (!val || cli_parse_size(val, &size) || !size)
			return cli_bad_value("zone_capacity", val ? val : "", "a size like 5M");
		opts->zone_capacity = size;
		return 1;
	}
	if (klen == 18 && !strncmp(opt, "compress_algorithm", klen))
		return cli_parse_compress_algorithm(opts, val);
	if (klen == 17 && !strncmp(opt, "compress_log_size", klen))
		return cli_parse_compress_log_size(opts, val);
	if (klen == 18 && !strncmp(opt, "compress_extension", klen))
		return cli_parse_compress_extension(opts, val);
	/* f2fs's quota options: limits enforced on quota_ino images (lib/quota.c) */
	if (!strcmp(opt, "usrquota") || !strcmp(opt, "quota") || !strcmp(opt, "grpquota") ||
	    !strcmp(opt, "prjquota")) {
		opts->quota_enforce |= opt[0] == 'g' ? 2u : opt[0] == 'p' ? 4u : 1u;
		return 1;
	}
	if (!strcmp(opt, "noquota")) {
		opts->quota_enforce = 0;
		return 1;
	}
	if (klen == 11 && !strncmp(opt, "nbd_timeout", klen))
		return cli_parse_secs("nbd_timeout", val, &opts->nbd_timeout);
	if (val && *val && cli_apply_source_option(opts, opt, klen, val))
		return 1;
	if (!strcmp(opt, "compress_chksum")) {
		opts->compress.chksum = true;
		return 1;
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

/*
 * One writer or any number of readers per image, across processes: a POSIX
 * record lock on the whole file, write or read, held until the process exits,
 * which is after its final checkpoint; the descriptor is kept open on
 * purpose, since closing it would drop the lock. POSIX locks rather than
 * flock because they never conflict within one process, so a lock the
 * library may take on its own descriptor cannot collide with this one. A
 * filesystem without locks (ENOLCK) is used unlocked, as before.
 */
#define LOCK_WAIT_TRIES	50	/* 5 s in steps of 100 ms */

static int cli_lock_image(const char *image, bool rw)
{
	struct flock fl = { .l_type = rw ? F_WRLCK : F_RDLCK, .l_whence = SEEK_SET };
	int fd, ret;

	fd = open(image, (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/*
	 * A FUSE unmount returns before the daemon has written its final
	 * checkpoint and exited; a mount right after it waits that out.
	 */
	for (int tries = 0; tries < LOCK_WAIT_TRIES; tries++) {
		if (fcntl(fd, F_SETLK, &fl) == 0)
			return 0;
		ret = -errno;
		if (ret != -EAGAIN && ret != -EACCES)
			break;
		usleep(100 * 1000);
	}
	close(fd);
	if (ret == -ENOLCK)
		return 0;
	if (ret == -EAGAIN || ret == -EACCES) {
		fprintf(stderr, "uf2fs: %s: in use by another uf2fs process (%s)\n", image,
			rw ? "read-write use needs it alone" : "it is being written");
		return -EBUSY;
	}
	return ret;
}

static int cli_open_image(const char *image, struct uf2fs_options *opts, struct uf2fs **fs,
			  struct uf2fs_partitions *parts)
{
	int ret;

	/*
	 * An NBD URI has no file; a VM disk is locked by the qemu-nbd serving
	 * it (our lock would make qemu's fail). The library checks both.
	 */
	if (uf2fs_image_kind(image, opts) != UF2FS_IMAGE_FILE)
		goto mount;
	/* The commonest mistake gets the plain coreutils message, and only that. */
	if (access(image, opts->read_only ? R_OK : R_OK | W_OK) < 0) {
		ret = -errno;
		fprintf(stderr, "uf2fs: %s: %s\n", image, strerror(errno));
		return ret;
	}
	ret = cli_lock_image(image, !opts->read_only);
	if (ret == -EBUSY)
		return ret;
	if (ret < 0) {
		fprintf(stderr, "uf2fs: %s: %s\n", image, strerror(-ret));
		return ret;
	}
mount:
	opts->device = image;
	*fs = NULL;
	ret = uf2fs_mount_or_partitions(opts, fs, parts);
	if (ret < 0)
		fprintf(stderr, "uf2fs: %s: cannot mount: %s\n", image, strerror(-ret));
	return ret;
}

int cli_mount_image(const char *image, struct uf2fs_options *opts, struct uf2fs **fs)
{
	return cli_open_image(image, opts, fs, NULL);
}

int cli_mount_or_partitions(const char *image, struct uf2fs_options *opts, struct uf2fs **fs,
			    struct uf2fs_partitions *parts)
{
	return cli_open_image(image, opts, fs, parts);
}
