/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the read-write library tests (test_rw_api.c, test_rw_random.c,
 * test_rw_threads.c): fresh images made with mkfs.f2fs, fsck.f2fs checks, and
 * an in-memory model of a tree (inodes and their names) that is compared
 * entry by entry with what the library returns: type, permission bits, owner,
 * size, link count, device number, content (uf2fs_read) and symlink target
 * (uf2fs_readlink), plus a readdir walk that must find exactly the model's
 * names, and the same inode number for every name of one model inode.
 *
 * Not a test itself (the Makefile builds tests/unit/test_*.c only).
 */
#ifndef TEST_RW_COMMON_H
#define TEST_RW_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>

#include <cmocka.h>

#include "uf2fs/uf2fs.h"

/* not every test uses every helper */
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wformat-truncation"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

#define RW_FEATURES_DEFAULT "extra_attr,inode_checksum,inode_crtime"

/* Printed with every failure: e.g. the seed of a random run. */
static char rw_context[512];

#define RW_FAIL(...)                                                                  \
	do {                                                                          \
		print_error("%s:%d: ", __FILE__, __LINE__);                           \
		print_error(__VA_ARGS__);                                             \
		print_error("\n");                                                    \
		if (rw_context[0])                                                    \
			print_error("  context: %s\n", rw_context);                  \
		fail();                                                               \
	} while (0)

/* An API call that must return exactly `want` (0, a count or a -errno). */
#define RW_EXPECT(call, want)                                                         \
	do {                                                                          \
		long long _got = (long long)(call), _want = (long long)(want);        \
		if (_got != _want)                                                    \
			RW_FAIL("%s returned %lld (%s), expected %lld (%s)", #call,   \
				_got, _got < 0 ? strerror((int)-_got) : "-", _want,   \
				_want < 0 ? strerror((int)-_want) : "-");             \
	} while (0)
#define RW_OK(call) RW_EXPECT(call, 0)

/* Like RW_EXPECT, but only counts the failure in rw_soft_failures (see RW_SOFT_END) */
static int rw_soft_failures __attribute__((unused));
#define RW_SOFT(call, want)                                                           \
	do {                                                                          \
		long long _got = (long long)(call), _want = (long long)(want);        \
		if (_got != _want) {                                                  \
			print_error("%s:%d: %s returned %lld (%s), expected %lld (%s)\n", \
				    __FILE__, __LINE__, #call, _got,                  \
				    _got < 0 ? strerror((int)-_got) : "-", _want,     \
				    _want < 0 ? strerror((int)-_want) : "-");         \
			rw_soft_failures++;                                           \
		}                                                                     \
	} while (0)
#define RW_SOFT_END()                                                                 \
	do {                                                                          \
		if (rw_soft_failures) {                                               \
			int _n = rw_soft_failures;                                    \
			rw_soft_failures = 0;                                         \
			RW_FAIL("%d of the checks above failed", _n);                 \
		}                                                                     \
	} while (0)

/* /// Images and fsck /// */

static char rw_tmp[PATH_MAX];
static int rw_failed_any;

static void rw_tmp_init(const char *name)
{
	const char *base = getenv("UF2FS_TMPDIR");

	if (!base)
		base = getenv("TMPDIR");
	if (!base)
		base = "/tmp";
	snprintf(rw_tmp, sizeof(rw_tmp), "%s/uf2fs-%s.XXXXXX", base, name);
	if (!mkdtemp(rw_tmp)) {
		perror("mkdtemp");
		exit(1);
	}
}

/* Remove the temp dir unless a test failed (or KEEP_TMP=1). */
static void rw_tmp_done(int failures)
{
	char cmd[PATH_MAX + 32];
	const char *keep = getenv("KEEP_TMP");

	if (failures || rw_failed_any || (keep && !strcmp(keep, "1"))) {
		fprintf(stderr, "(temp dir kept: %s)\n", rw_tmp);
		return;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rw_tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", rw_tmp);
}

static void rw_img_path(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s.img", rw_tmp, name);
}

/* A fresh image of mb MiB; features: mkfs.f2fs -O list, NULL/"" for none. */
static void rw_mkfs(const char *img, unsigned int mb, const char *features)
{
	char cmd[PATH_MAX * 2 + 256];
	int rc;

	snprintf(cmd, sizeof(cmd), "rm -f '%s' && truncate -s %uM '%s' && mkfs.f2fs -f -q %s%s '%s' "
		 ">'%s.mkfs.log' 2>&1", img, mb, img, features && *features ? "-O " : "",
		 features ? features : "", img, img);
	rc = system(cmd);
	if (rc != 0)
		RW_FAIL("mkfs failed (%d): %s", rc, cmd);
}

/*
 * fsck.f2fs -f --dry-run (never writes). Clean in f2fs-tools 1.15: exit 0, the
 * summary line "[FSCK] other corrupted bugs [Ok..]", and no [Fail], [ASSERT]
 * or [FIX] line ("[FSCK] fixing SIT types" is printed on every image and is not
 * a finding). Returns true when clean; otherwise prints the findings.
 */
static bool rw_fsck_clean(const char *img)
{
	char cmd[PATH_MAX + 64], line[1024];
	bool ok_line = false, bad = false;
	char *bad_lines = NULL;
	size_t bad_len = 0;
	FILE *p, *bl;
	int st;

	snprintf(cmd, sizeof(cmd), "fsck.f2fs -f --dry-run '%s' 2>&1", img);
	p = popen(cmd, "r");
	if (!p) {
		print_error("popen(fsck.f2fs) failed\n");
		return false;
	}
	bl = open_memstream(&bad_lines, &bad_len);
	while (fgets(line, sizeof(line), p)) {
		if (strstr(line, "[FSCK] other corrupted bugs") && strstr(line, "[Ok..]"))
			ok_line = true;
		if (strstr(line, "[Fail]") || strstr(line, "[ASSERT]") || !strncmp(line, "[FIX]", 5) ||
		    strstr(line, "Error")) {
			bad = true;
			fputs(line, bl);
		}
	}
	fclose(bl);
	st = pclose(p);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !ok_line || bad) {
		print_error("fsck.f2fs -f --dry-run %s: NOT clean (status %d, summary ok %d):\n%s",
			    img, WIFEXITED(st) ? WEXITSTATUS(st) : -1, ok_line,
			    bad_lines ? bad_lines : "");
		if (bad_len > 4000)
			print_error("...\n");
		free(bad_lines);
		rw_failed_any = 1;
		return false;
	}
	free(bad_lines);
	return true;
}

#define RW_FSCK(img)                                                                  \
	do {                                                                          \
		if (!rw_fsck_clean(img))                                              \
			RW_FAIL("fsck.f2fs is not clean on %s", img);                 \
	} while (0)

/* Mount with options o (device and read_only set by the caller). */
static struct uf2fs *rw_mount_opts(const struct uf2fs_options *o)
{
	struct uf2fs *fs = NULL;
	int ret = uf2fs_mount(o, &fs);

	if (ret)
		RW_FAIL("uf2fs_mount(%s, %s) = %d (%s): %s", o->device, o->read_only ? "ro" : "rw",
			ret, strerror(-ret), uf2fs_last_error(NULL));
	return fs;
}

static struct uf2fs *rw_mount(const char *img, bool ro)
{
	struct uf2fs_options o;

	uf2fs_default_options(&o);
	o.device = img;
	o.read_only = ro;
	/* verification reads are not the user's: they must not move atime */
	o.atime_mode = 1;
	return rw_mount_opts(&o);
}

/* The first number after label in `uf2fs stats`. */
static inline uint64_t rw_stat_number(struct uf2fs *fs, const char *label)
{
	static char buf[UF2FS_IOC_STATS_SIZE];
	unsigned long long v = 0;
	const char *p;

	uf2fs_format_stats(fs, buf, sizeof(buf));
	p = strstr(buf, label);
	if (!p || sscanf(p + strlen(label), "%*[^0-9]%llu", &v) != 1)
		RW_FAIL("stats have no number for '%s':\n%s", label, buf);
	return v;
}

static void rw_unmount(struct uf2fs *fs)
{
	int ret = uf2fs_unmount(fs);

	if (ret)
		RW_FAIL("uf2fs_unmount = %d (%s)", ret, strerror(-ret));
}

/* /// Deterministic bytes /// */

static inline uint64_t rw_splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Fill with bytes that depend on (seed, position): no zero runs to hide holes. */
static void rw_fill(void *buf, size_t len, uint64_t seed)
{
	uint8_t *p = buf;
	uint64_t s = seed * 0x100000001b3ULL + 1;

	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = rw_splitmix(&s) | 0x0101010101010101ULL;

		memcpy(p + i, &v, len - i < 8 ? len - i : 8);
	}
}

/* /// The model /// */

struct mnode {
	uint32_t mode, uid, gid, nlink_extra;
	uint64_t rdev;
	uint8_t *data;		/* regular files */
	size_t size, cap;
	char *target;		/* symlinks */
	uint32_t ino;		/* seen during a verify (0 = not yet) */
	bool check_times;
	bool no_content;	/* size and content are checked elsewhere */
	struct timespec mtime, atime;
	int refs;
};

struct mdent {
	char *path;		/* no leading slash, e.g. "a/b" */
	struct mnode *n;
};

struct model {
	struct mdent *d;
	size_t n, cap;
};

static struct mnode *mnode_new(uint32_t mode, uint32_t uid, uint32_t gid)
{
	struct mnode *n = calloc(1, sizeof(*n));

	assert_non_null(n);
	n->mode = mode;
	n->uid = uid;
	n->gid = gid;
	return n;
}

static void mnode_put(struct mnode *n)
{
	if (n && --n->refs <= 0) {
		free(n->data);
		free(n->target);
		free(n);
	}
}

static void mnode_reserve(struct mnode *n, size_t size)
{
	if (size > n->cap) {
		size_t cap = n->cap ? n->cap : 4096;

		while (cap < size)
			cap *= 2;
		n->data = realloc(n->data, cap);
		assert_non_null(n->data);
		memset(n->data + n->cap, 0, cap - n->cap);
		n->cap = cap;
	}
}

static void mnode_write(struct mnode *n, uint64_t off, const void *buf, size_t len)
{
	mnode_reserve(n, off + len);
	memcpy(n->data + off, buf, len);
	if (off + len > n->size)
		n->size = off + len;
}

static void mnode_truncate(struct mnode *n, uint64_t size)
{
	if (size == n->size)
		return;
	if (size < n->size) {
		memset(n->data + size, 0, n->size - size);
	} else {
		mnode_reserve(n, size);
		memset(n->data + n->size, 0, size - n->size);
	}
	n->size = size;
}

/* Zero [off, off+len) within the current size. */
static void mnode_zero(struct mnode *n, uint64_t off, uint64_t len)
{
	if (off >= n->size || !len)
		return;
	if (off + len > n->size)
		len = n->size - off;
	memset(n->data + off, 0, len);
}

/* FALLOC_FL_COLLAPSE_RANGE: [off, off+len) goes, what follows moves down. */
static void mnode_collapse(struct mnode *n, uint64_t off, uint64_t len)
{
	memmove(n->data + off, n->data + off + len, n->size - off - len);
	memset(n->data + n->size - len, 0, len);
	n->size -= len;
}

/* FALLOC_FL_INSERT_RANGE: what lies at off and after moves up by len; a hole opens. */
static void mnode_insert(struct mnode *n, uint64_t off, uint64_t len)
{
	mnode_reserve(n, n->size + len);
	memmove(n->data + off + len, n->data + off, n->size - off);
	memset(n->data + off, 0, len);
	n->size += len;
}

static void model_init(struct model *m)
{
	memset(m, 0, sizeof(*m));
}

static void model_free(struct model *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->d[i].path);
		mnode_put(m->d[i].n);
	}
	free(m->d);
	memset(m, 0, sizeof(*m));
}

static ssize_t model_index(const struct model *m, const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->d[i].path, path))
			return i;
	return -1;
}

static struct mnode *model_get(const struct model *m, const char *path)
{
	ssize_t i = model_index(m, path);

	return i < 0 ? NULL : m->d[i].n;
}

static void model_add(struct model *m, const char *path, struct mnode *n)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 64;
		m->d = realloc(m->d, m->cap * sizeof(*m->d));
		assert_non_null(m->d);
	}
	m->d[m->n].path = strdup(path);
	m->d[m->n].n = n;
	n->refs++;
	m->n++;
}

static void model_del(struct model *m, const char *path)
{
	ssize_t i = model_index(m, path);

	if (i < 0)
		RW_FAIL("model_del: no %s in the model", path);
	free(m->d[i].path);
	mnode_put(m->d[i].n);
	m->d[i] = m->d[--m->n];
}

/* Rename path and everything below it (directories). */
static void model_rename(struct model *m, const char *from, const char *to)
{
	size_t fl = strlen(from);

	for (size_t i = 0; i < m->n; i++) {
		char *p = m->d[i].path, *np;

		if (!strcmp(p, from) || (!strncmp(p, from, fl) && p[fl] == '/')) {
			if (asprintf(&np, "%s%s", to, p + fl) < 0)
				abort();
			free(p);
			m->d[i].path = np;
		}
	}
}

static bool path_is_child(const char *parent, const char *p)
{
	size_t pl = strlen(parent);

	if (!pl)
		return !strchr(p, '/');
	return !strncmp(p, parent, pl) && p[pl] == '/' && !strchr(p + pl + 1, '/');
}

/* Expected st_nlink: names of the inode, or 2 + subdirectories for a directory. */
static uint32_t model_nlink(const struct model *m, const struct mnode *n, const char *path)
{
	uint32_t c = 0;

	if (S_ISDIR(n->mode)) {
		c = 2;
		for (size_t i = 0; i < m->n; i++)
			if (S_ISDIR(m->d[i].n->mode) && path_is_child(path, m->d[i].path))
				c++;
		return c;
	}
	for (size_t i = 0; i < m->n; i++)
		if (m->d[i].n == n)
			c++;
	return c + n->nlink_extra;
}

/* /// Verifying the model against the filesystem /// */

static uint8_t *rw_readbuf;

/* Content of ino equals want[0..size), and nothing can be read past size. */
static bool rw_check_content(struct uf2fs *fs, uint32_t ino, const uint8_t *want, size_t size,
			     const char *what)
{
	const size_t chunk = 1 << 20;
	size_t off = 0;
	ssize_t r;

	if (!rw_readbuf)
		rw_readbuf = malloc(chunk + 4096);
	while (off < size) {
		size_t n = size - off < chunk ? size - off : chunk;

		r = uf2fs_read(fs, ino, rw_readbuf, n, off);
		if (r != (ssize_t)n) {
			print_error("%s: read(%zu at %zu) = %zd (%s)\n", what, n, off, r,
				    r < 0 ? strerror(-r) : "short");
			return false;
		}
		if (memcmp(rw_readbuf, want + off, n)) {
			size_t i = 0;

			while (i < n && rw_readbuf[i] == want[off + i])
				i++;
			print_error("%s: content differs at byte %zu (block %zu): got 0x%02x, "
				    "want 0x%02x (size %zu)\n", what, off + i, (off + i) / 4096,
				    rw_readbuf[i], want[off + i], size);
			return false;
		}
		off += n;
	}
	r = uf2fs_read(fs, ino, rw_readbuf, 4096, size);
	if (r != 0) {
		print_error("%s: read at EOF (%zu) = %zd, want 0\n", what, size, r);
		return false;
	}
	return true;
}

struct rw_names {
	char **names;
	uint32_t *inos;
	size_t n, cap;
	int dots;
};

static int rw_collect(void *arg, const char *name, size_t len, uint32_t ino, unsigned int dtype,
		      uint64_t next_pos)
{
	struct rw_names *c = arg;

	if ((len == 1 && name[0] == '.') || (len == 2 && !memcmp(name, "..", 2))) {
		c->dots++;
		return 0;
	}
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->names = realloc(c->names, c->cap * sizeof(char *));
		c->inos = realloc(c->inos, c->cap * sizeof(uint32_t));
	}
	c->names[c->n] = strndup(name, len);
	c->inos[c->n] = ino;
	c->n++;
	return 0;
}

/* Readdir of every directory in the model: exactly the model's children. */
static bool rw_check_dirs(struct uf2fs *fs, const struct model *m)
{
	bool ok = true;

	for (ssize_t i = -1; i < (ssize_t)m->n; i++) {
		const char *dpath = i < 0 ? "" : m->d[i].path;
		struct rw_names c = { 0 };
		size_t expect = 0;
		uint32_t dino;
		int ret;

		if (i >= 0 && !S_ISDIR(m->d[i].n->mode))
			continue;
		if (uf2fs_resolve(fs, dpath, &dino))
			continue;	/* reported by the entry check */
		ret = uf2fs_readdir(fs, dino, 0, rw_collect, &c);
		if (ret < 0) {
			print_error("readdir(/%s) = %d\n", dpath, ret);
			ok = false;
		}
		if (c.dots != 2) {
			print_error("readdir(/%s): %d of '.' and '..', want 2\n", dpath, c.dots);
			ok = false;
		}
		for (size_t j = 0; j < m->n; j++)
			if (path_is_child(dpath, m->d[j].path))
				expect++;
		for (size_t k = 0; k < c.n; k++) {
			char full[8192];
			ssize_t mi;

			snprintf(full, sizeof(full), "%s%s%s", dpath, *dpath ? "/" : "", c.names[k]);
			mi = model_index(m, full);
			if (mi < 0) {
				print_error("readdir(/%s): unexpected entry '%s'\n", dpath, c.names[k]);
				ok = false;
			} else if (m->d[mi].n->ino && m->d[mi].n->ino != c.inos[k]) {
				print_error("readdir(/%s): '%s' has ino %u, lookup gave %u\n", dpath,
					    c.names[k], c.inos[k], m->d[mi].n->ino);
				ok = false;
			}
			free(c.names[k]);
		}
		if (c.n != expect) {
			print_error("readdir(/%s): %zu entries, model has %zu\n", dpath, c.n, expect);
			ok = false;
		}
		free(c.names);
		free(c.inos);
	}
	return ok;
}

/* Every name of the model: lookup, attributes, content; then the readdir walk. */
static bool rw_verify_model(struct uf2fs *fs, struct model *m, const char *when)
{
	bool ok = true;

	for (size_t i = 0; i < m->n; i++)
		m->d[i].n->ino = 0;
	for (size_t i = 0; i < m->n; i++) {
		const char *p = m->d[i].path;
		struct mnode *n = m->d[i].n;
		struct uf2fs_attr a;
		uint32_t ino;
		char what[4200];
		int ret;

		snprintf(what, sizeof(what), "[%s] /%s", when, p);
		ret = uf2fs_resolve(fs, p, &ino);
		if (ret) {
			print_error("%s: resolve = %d (%s)\n", what, ret, strerror(-ret));
			ok = false;
			continue;
		}
		if (n->ino && n->ino != ino) {
			print_error("%s: ino %u, but another name of the same inode has %u\n", what,
				    ino, n->ino);
			ok = false;
		}
		n->ino = ino;
		ret = uf2fs_getattr(fs, ino, &a);
		if (ret) {
			print_error("%s: getattr = %d\n", what, ret);
			ok = false;
			continue;
		}
		if (a.mode != n->mode) {
			print_error("%s: mode 0%o, want 0%o\n", what, a.mode, n->mode);
			ok = false;
		}
		if (a.uid != n->uid || a.gid != n->gid) {
			print_error("%s: owner %u:%u, want %u:%u\n", what, a.uid, a.gid, n->uid,
				    n->gid);
			ok = false;
		}
		if (a.nlink != model_nlink(m, n, p)) {
			print_error("%s: nlink %u, want %u\n", what, a.nlink, model_nlink(m, n, p));
			ok = false;
		}
		if ((S_ISCHR(n->mode) || S_ISBLK(n->mode)) && a.rdev != n->rdev) {
			print_error("%s: rdev %u:%u, want %u:%u\n", what, major(a.rdev),
				    minor(a.rdev), major(n->rdev), minor(n->rdev));
			ok = false;
		}
		if (n->check_times && (a.mtime.tv_sec != n->mtime.tv_sec ||
				       a.mtime.tv_nsec != n->mtime.tv_nsec ||
				       a.atime.tv_sec != n->atime.tv_sec ||
				       a.atime.tv_nsec != n->atime.tv_nsec)) {
			print_error("%s: mtime %lld.%09ld atime %lld.%09ld, want %lld.%09ld "
				    "%lld.%09ld\n", what, (long long)a.mtime.tv_sec,
				    a.mtime.tv_nsec, (long long)a.atime.tv_sec, a.atime.tv_nsec,
				    (long long)n->mtime.tv_sec, n->mtime.tv_nsec,
				    (long long)n->atime.tv_sec, n->atime.tv_nsec);
			ok = false;
		}
		if (S_ISREG(n->mode) && n->no_content) {
			;
		} else if (S_ISREG(n->mode)) {
			if (a.size != n->size) {
				print_error("%s: size %" PRIu64 ", want %zu\n", what, a.size, n->size);
				ok = false;
			} else if (!rw_check_content(fs, ino, n->data, n->size, what)) {
				ok = false;
			}
		} else if (S_ISLNK(n->mode)) {
			char buf[8192];
			ssize_t r = uf2fs_readlink(fs, ino, buf, sizeof(buf));

			if (a.size != strlen(n->target)) {
				print_error("%s: symlink size %" PRIu64 ", want %zu\n", what, a.size,
					    strlen(n->target));
				ok = false;
			}
			if (r != (ssize_t)strlen(n->target) || memcmp(buf, n->target, r)) {
				print_error("%s: readlink = %zd, want %zu bytes '%.40s...'\n", what, r,
					    strlen(n->target), n->target);
				ok = false;
			}
		} else if (S_ISDIR(n->mode)) {
			uint32_t parent_ino, self_ino;
			char parent[4096];
			const char *slash = strrchr(p, '/');

			snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - p) : 0, p);
			if (uf2fs_resolve(fs, parent, &parent_ino) ||
			    uf2fs_lookup(fs, ino, "..", 2, &self_ino) || self_ino != parent_ino) {
				print_error("%s: '..' is not the parent /%s\n", what, parent);
				ok = false;
			}
		}
		if (!ok && getenv("RW_VERIFY_FIRST"))
			break;
	}
	{
		struct uf2fs_attr ra;
		struct mnode root = { .mode = S_IFDIR | 0755 };

		if (uf2fs_getattr(fs, uf2fs_root_ino(fs), &ra) ||
		    ra.nlink != model_nlink(m, &root, "")) {
			print_error("[%s] /: nlink %u, want %u\n", when, ra.nlink,
				    model_nlink(m, &root, ""));
			ok = false;
		}
	}
	if (!rw_check_dirs(fs, m))
		ok = false;
	if (!ok)
		rw_failed_any = 1;
	return ok;
}

#define RW_VERIFY(fs, m, when)                                                        \
	do {                                                                          \
		if (!rw_verify_model(fs, m, when))                                    \
			RW_FAIL("the filesystem differs from the model (%s)", when);  \
	} while (0)

/* /// Convenience: path-based calls, recording in the model /// */

static void split_path(const char *path, char *parent, size_t psize, const char **name)
{
	const char *slash = strrchr(path, '/');

	if (slash) {
		snprintf(parent, psize, "%.*s", (int)(slash - path), path);
		*name = slash + 1;
	} else {
		parent[0] = 0;
		*name = path;
	}
}

static uint32_t rw_ino(struct uf2fs *fs, const char *path)
{
	uint32_t ino = 0;
	int ret = uf2fs_resolve(fs, path, &ino);

	if (ret)
		RW_FAIL("resolve(%s) = %d (%s)", path, ret, strerror(-ret));
	return ino;
}

/* Create (mknod/mkdir/symlink) at path; returns the new inode number. */
static uint32_t rw_create(struct uf2fs *fs, struct model *m, const char *path, uint32_t mode,
			  uint64_t rdev, const char *target)
{
	char parent[4096];
	const char *name;
	uint32_t dir, ino = 0;
	int ret;

	split_path(path, parent, sizeof(parent), &name);
	dir = rw_ino(fs, parent);
	if (S_ISDIR(mode))
		ret = uf2fs_mkdir(fs, dir, name, strlen(name), mode & 07777, 0, 0, &ino);
	else if (S_ISLNK(mode))
		ret = uf2fs_symlink(fs, dir, name, strlen(name), target, 0, 0, &ino);
	else
		ret = uf2fs_mknod(fs, dir, name, strlen(name), mode, 0, 0, rdev, &ino);
	if (ret)
		RW_FAIL("create(%s, 0%o) = %d (%s)", path, mode, ret, strerror(-ret));
	if (m) {
		struct mnode *n = mnode_new(S_ISLNK(mode) ? (S_IFLNK | 0777) : mode, 0, 0);

		if (S_ISCHR(mode) || S_ISBLK(mode))
			n->rdev = rdev;
		if (target)
			n->target = strdup(target);
		model_add(m, path, n);
	}
	return ino;
}

static void rw_write(struct uf2fs *fs, struct model *m, const char *path, uint64_t off,
		     const void *buf, size_t len)
{
	uint32_t ino = rw_ino(fs, path);
	ssize_t r = uf2fs_write(fs, ino, buf, len, off);

	if (r != (ssize_t)len)
		RW_FAIL("write(%s, %zu at %" PRIu64 ") = %zd (%s)", path, len, off, r,
			r < 0 ? strerror(-r) : "short");
	if (m)
		mnode_write(model_get(m, path), off, buf, len);
}

/* Write len pattern bytes (seed) at off. */
static void rw_write_pat(struct uf2fs *fs, struct model *m, const char *path, uint64_t off,
			 size_t len, uint64_t seed)
{
	uint8_t *buf = malloc(len ? len : 1);

	rw_fill(buf, len, seed);
	rw_write(fs, m, path, off, buf, len);
	free(buf);
}

static void rw_truncate(struct uf2fs *fs, struct model *m, const char *path, uint64_t size)
{
	struct uf2fs_attr a = { .size = size }, out;
	int ret = uf2fs_setattr(fs, rw_ino(fs, path), &a, UF2FS_SET_SIZE, &out);

	if (ret)
		RW_FAIL("truncate(%s, %" PRIu64 ") = %d (%s)", path, size, ret, strerror(-ret));
	if (out.size != size)
		RW_FAIL("truncate(%s, %" PRIu64 "): attr size %" PRIu64, path, size, out.size);
	if (m)
		mnode_truncate(model_get(m, path), size);
}

/* Full remount cycle: unmount rw, fsck, mount ro, verify, unmount, fsck. */
static void rw_cycle_verify(struct uf2fs **fsp, const char *img, struct model *m)
{
	rw_unmount(*fsp);
	*fsp = NULL;
	RW_FSCK(img);
	*fsp = rw_mount(img, true);
	RW_VERIFY(*fsp, m, "read-only remount");
	rw_unmount(*fsp);
	*fsp = NULL;
	RW_FSCK(img);
}

#endif /* TEST_RW_COMMON_H */
