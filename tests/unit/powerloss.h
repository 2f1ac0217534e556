/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the power-loss and EIO runners (test_powerloss.c, test_eio.c): a
 * model that keeps every state each path had, operations that record into it
 * (one library call each) and promise what fsync/sync made durable, and the
 * checks of a recovered image: promised states intact, no data a file never
 * held, no names never created, orphans gone, fsck.f2fs clean, and a
 * read-only remount that shows the same tree.
 *
 * Not a test itself (the Makefile builds tests/unit/test_*.c only).
 */
#ifndef UF2FS_POWERLOSS_H
#define UF2FS_POWERLOSS_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/falloc.h>

#include <cmocka.h>

#include "uf2fs/uf2fs.h"

/* not every runner uses every helper */
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wformat-truncation"

/* /// Temp dir, images, bytes /// */

static char rw_tmp[PATH_MAX];

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

/* Remove the temp dir unless something failed (or KEEP_TMP=1). */
static void rw_tmp_done(int failures)
{
	char cmd[PATH_MAX + 32];
	const char *keep = getenv("KEEP_TMP");

	if (failures || (keep && !strcmp(keep, "1"))) {
		fprintf(stderr, "(temp dir kept: %s)\n", rw_tmp);
		return;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rw_tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", rw_tmp);
}

/* A fresh image of mb MiB; features: mkfs.f2fs -O list, "" for none. */
static int rw_mkfs(const char *img, unsigned int mb, const char *features)
{
	char cmd[PATH_MAX * 2 + 256];

	snprintf(cmd, sizeof(cmd), "rm -f '%s' && truncate -s %uM '%s' && mkfs.f2fs -f -q %s%s '%s' "
		 ">/dev/null 2>&1", img, mb, img, *features ? "-O " : "", features, img);
	return system(cmd);
}

static inline uint64_t rw_splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Bytes that depend on (seed, position), never zero: holes cannot hide. */
static void rw_fill(void *buf, size_t len, uint64_t seed)
{
	uint8_t *p = buf;
	uint64_t s = seed * 0x100000001b3ULL + 1;

	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = rw_splitmix(&s) | 0x0101010101010101ULL;

		memcpy(p + i, &v, len - i < 8 ? len - i : 8);
	}
}

/* /// Settings /// */

static bool all_points;
static unsigned int target_points = 40;
static unsigned int jobs = 1;
static const char *only_scenario, *only_features;
static bool only_one;
static char only_scn[64], only_feat[64];
static uint64_t only_n;
static int only_tear;
static bool verbose;

/*
 * Each feature set also picks the in-place update policy: "none" pins
 * F2FS_IPU_FSYNC, under which a crash shows only promised states (or later
 * whole ones); "extra" takes the kernel's default for these small images,
 * IPU_FORCE, under which any overwritten file may show a mix of its
 * versions, piece by piece, as Linux f2fs does (ipu_mixture_ok), and turns
 * drop-behind on, as the FUSE front end does, so that whole-block writes go
 * through to the device without a folio (f2fs_write_through).
 */
struct featset {
	const char *label;
	const char *mkfs;	/* mkfs.f2fs -O list; "" for none */
	int ipu_policy;		/* -1: the library's (the kernel's) default */
	bool ipu_mix;		/* every overwrite may land in place */
	int dontcache;		/* drop-behind and write-through (-1: off, the default) */
	bool encrypt;		/* mounts load pl_keyfile; only encrypt scenarios run */
};

/* The fscrypt keys of the "crypt" feature set: written by the runner at start. */
static char pl_keyfile[PATH_MAX];

static const struct featset featsets[] = {
	{ "none", "", 0x10, false, -1, false },
	{ "extra", "extra_attr,inode_checksum,inode_crtime", -1, true, 1, false },
#ifdef POWERLOSS_CRYPT
	{ "crypt", "encrypt", 0x10, false, -1, true },
#endif
};
#define NR_FEATS ((int)ARRAY_LEN(featsets))
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* /// Shared content blobs (refcounted, immutable once published) /// */

struct blob {
	int refs;
	size_t size;
	uint8_t data[];
};

static struct blob *blob_new(size_t size)
{
	struct blob *b = malloc(sizeof(*b) + (size ? size : 1));

	if (!b)
		abort();
	b->refs = 1;
	b->size = size;
	return b;
}

static struct blob *blob_get(struct blob *b)
{
	if (b)
		b->refs++;
	return b;
}

static void blob_put(struct blob *b)
{
	if (b && --b->refs == 0)
		free(b);
}

/* /// The model: every state each path had /// */

enum { K_ABSENT, K_FILE, K_DIR };

struct ver {
	int kind;
	struct blob *b;		/* K_FILE */
	int op;			/* the operation that produced it */
	bool uncertain;		/* its call failed (EIO runs): it may or may not be */
	uint16_t mode;		/* permission bits (files) */
	char xa[200];		/* xattrs: "name=size:seed" joined by ',', sorted */
};

struct mpath {
	char *path;		/* no leading slash */
	struct ver *v;
	unsigned int nv, cap;
	int promised;		/* index into v, -1: nothing promised */
	int promised_op;	/* the fsync/sync that promised it */
	/*
	 * Contents the inode took after the name went (writes to an open
	 * unlinked file): under IPU_FORCE they can land in blocks the durable
	 * tree still gives this path, so they count as pieces of a mixture.
	 */
	struct blob **ghost;
	unsigned int nghost;
};

struct run;

struct scenario {
	const char *name;
	const char *what;
	unsigned int mb;
	void (*setup)(struct run *r);
	void (*fn)(struct run *r);
	const char *mkfs;	/* its own image's mkfs.f2fs -O list (then the "extra" set only) */
	bool encrypt;		/* runs under the encrypt feature sets only */
};

struct bound {
	uint64_t writes;	/* device writes after the operation */
	bool flush;		/* an fsync or sync */
	char desc[72];
};

struct run {
	const struct scenario *s;
	const struct featset *f;
	struct uf2fs *fs;
	bool dry, setup;
	uint64_t cut_at;
	bool tear;
	/* the model */
	struct mpath *p;
	unsigned int np, cap;
	/* operations */
	int opno;
	char opdesc[160];
	bool stop;		/* the power went (or a call failed): issue nothing more */
	int cut_op;
	char cut_desc[160];
	/* the path an fsync was writing when the power went ("" if none) */
	char fsync_path[128], cut_fsync_path[128];
	/* the dry run's record of operation boundaries */
	struct bound *bounds;
	unsigned int nb, bcap;
	/* open-unlinked files, and the path each was opened by */
	uint32_t orphan[16];
	char orphan_path[16][64];
	unsigned int norphans;
	uint64_t orphan_blocks;
	/* findings */
	FILE *log;
	int fails;
	unsigned int promises;
	uint64_t seed;
	/* EIO runs: the first failed call stops the workload; nothing is a finding here */
	bool eio_mode;
	uint64_t eio_at;
	const char *eio_variant;
	int nerr;		/* calls that failed */
	bool op_failed;		/* the current operation's call failed */
	long first_err;
	int first_err_op;
	char first_err_desc[200];
};

static void runfail(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Findings in this process (a worker or a child runs many runs). */
static int g_runfails;

static void runfail(struct run *r, const char *fmt, ...)
{
	va_list ap;

	g_runfails++;
	r->fails++;
	if (r->fails > 12)
		return;		/* the first ones say enough */
	if (r->eio_mode)
		fprintf(r->log, "FAIL %s [%s] EIO at request %" PRIu64 " (%s): ", r->s->name,
			r->f->label, r->eio_at, r->eio_variant);
	else if (r->dry || r->setup)
		fprintf(r->log, "FAIL %s [%s] %s: ", r->s->name, r->f->label,
			r->dry ? "dry run" : "setup");
	else
		fprintf(r->log, "FAIL %s [%s] N=%" PRIu64 " %s: ", r->s->name, r->f->label,
			r->cut_at, r->tear ? "tear" : "clean");
	va_start(ap, fmt);
	vfprintf(r->log, fmt, ap);
	va_end(ap);
	if (r->eio_mode && r->nerr)
		fprintf(r->log, " [first error: op #%d %s]", r->first_err_op, r->first_err_desc);
	else if (r->eio_mode)
		;
	else if (r->cut_op)
		fprintf(r->log, " [power went during op #%d: %s]", r->cut_op, r->cut_desc);
	else if (!r->dry && !r->setup)
		fprintf(r->log, " [no cut: crash after the last op]");
	fputc('\n', r->log);
	fflush(r->log);
}

static struct mpath *mp_find(struct run *r, const char *path)
{
	for (unsigned int i = 0; i < r->np; i++)
		if (!strcmp(r->p[i].path, path))
			return &r->p[i];
	return NULL;
}

static struct mpath *mp_get(struct run *r, const char *path)
{
	struct mpath *m = mp_find(r, path);

	if (m)
		return m;
	if (r->np == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->p = realloc(r->p, r->cap * sizeof(*r->p));
		if (!r->p)
			abort();
	}
	m = &r->p[r->np++];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	m->promised = -1;
	return m;
}

static struct ver *mp_cur(struct mpath *m)
{
	return m && m->nv ? &m->v[m->nv - 1] : NULL;
}

static int mp_kind(struct mpath *m)
{
	struct ver *v = mp_cur(m);

	return v ? v->kind : K_ABSENT;
}

/* Takes over the caller's reference to b. */
/* A new state; mode and xattrs carry over from the path's current file state. */
static void mp_push(struct run *r, struct mpath *m, int kind, struct blob *b)
{
	struct ver *c = mp_cur(m);
	uint16_t mode = c && c->kind == K_FILE ? c->mode : 0644;
	char xa[sizeof(c->xa)];

	snprintf(xa, sizeof(xa), "%s", c && c->kind == K_FILE ? c->xa : "");
	if (m->nv == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 8;
		m->v = realloc(m->v, m->cap * sizeof(*m->v));
		if (!m->v)
			abort();
	}
	m->v[m->nv].kind = kind;
	m->v[m->nv].b = b;
	m->v[m->nv].op = r->opno;
	m->v[m->nv].uncertain = r->op_failed;
	m->v[m->nv].mode = mode;
	snprintf(m->v[m->nv].xa, sizeof(m->v[m->nv].xa), "%s", xa);
	m->nv++;
}

static void model_release(struct run *r)
{
	for (unsigned int i = 0; i < r->np; i++) {
		for (unsigned int j = 0; j < r->p[i].nv; j++)
			blob_put(r->p[i].v[j].b);
		for (unsigned int j = 0; j < r->p[i].nghost; j++)
			blob_put(r->p[i].ghost[j]);
		free(r->p[i].ghost);
		free(r->p[i].v);
		free(r->p[i].path);
	}
	free(r->p);
	r->p = NULL;
	r->np = r->cap = 0;
}

/* The setup's end state, all promised (it ended with an unmount). */
static void model_copy_current(struct run *dst, struct run *src)
{
	for (unsigned int i = 0; i < src->np; i++) {
		struct ver *v = mp_cur(&src->p[i]);
		struct mpath *m;

		if (!v || v->kind == K_ABSENT)
			continue;
		m = mp_get(dst, src->p[i].path);
		mp_push(dst, m, v->kind, blob_get(v->b));
		m->v[0].mode = v->mode;
		memcpy(m->v[0].xa, v->xa, sizeof(v->xa));
		m->promised = 0;
	}
}

/* /// Operations: each is one library call (or a few for one step) /// */

static struct uf2fs_options base_opts(const struct featset *f)
{
	struct uf2fs_options o;

	uf2fs_default_options(&o);
	o.ipu_policy = f->ipu_policy;
	o.dontcache = f->dontcache;
	o.read_only = false;
	o.quiet = !verbose;
	o.checkpoint_interval = 100000;
	o.background_gc = 0;
	o.cache_size = 64 << 20;
	if (f->encrypt)
		o.keyfile = pl_keyfile;
	return o;
}

static bool op_begin(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool op_begin(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->stop)
		return false;
	r->opno++;
	r->op_failed = false;
	va_start(ap, fmt);
	vsnprintf(r->opdesc, sizeof(r->opdesc), fmt, ap);
	va_end(ap);
	return true;
}

static bool power_cut(struct run *r)
{
	return !r->dry && !r->setup && uf2fs_test_power_is_cut(r->fs);
}

static void op_end(struct run *r, bool flush)
{
	if (r->dry) {
		if (r->nb == r->bcap) {
			r->bcap = r->bcap ? r->bcap * 2 : 256;
			r->bounds = realloc(r->bounds, r->bcap * sizeof(*r->bounds));
			if (!r->bounds)
				abort();
		}
		r->bounds[r->nb].writes = uf2fs_test_writes(r->fs);
		r->bounds[r->nb].flush = flush;
		snprintf(r->bounds[r->nb].desc, sizeof(r->bounds[r->nb].desc), "%s", r->opdesc);
		r->nb++;
	} else if (!r->stop && power_cut(r)) {
		r->stop = true;
		r->cut_op = r->opno;
		snprintf(r->cut_desc, sizeof(r->cut_desc), "%s", r->opdesc);
		snprintf(r->cut_fsync_path, sizeof(r->cut_fsync_path), "%s", r->fsync_path);
	}
}

/* A call failed. During the operation the power went in, anything goes. */
static void op_error(struct run *r, const char *call, long ret)
{
	r->op_failed = true;
	if (r->eio_mode) {
		if (!r->nerr++) {
			r->first_err = ret;
			r->first_err_op = r->opno;
			snprintf(r->first_err_desc, sizeof(r->first_err_desc), "%s: %s = %ld (%s)",
				 r->opdesc, call, ret, ret < 0 ? strerror((int)-ret) : "short");
		}
		r->stop = true;
		return;
	}
	if (power_cut(r))
		return;
	runfail(r, "op #%d %s: %s returned %ld (%s)", r->opno, r->opdesc, call, ret,
		ret < 0 ? strerror((int)-ret) : "short");
	r->stop = true;
}

static void split(const char *path, char *parent, size_t psize, const char **name)
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

static bool resolve(struct run *r, const char *path, uint32_t *ino)
{
	int ret = uf2fs_resolve(r->fs, path, ino);

	if (ret)
		op_error(r, "resolve", ret);
	return !ret;
}

static void do_create(struct run *r, const char *path, bool dir)
{
	char parent[4096];
	const char *name;
	uint32_t pino, ino;
	int ret;

	if (!op_begin(r, "%s %s", dir ? "mkdir" : "create", path))
		return;
	split(path, parent, sizeof(parent), &name);
	if (resolve(r, parent, &pino)) {
		if (dir)
			ret = uf2fs_mkdir(r->fs, pino, name, strlen(name), 0755, 0, 0, &ino);
		else
			ret = uf2fs_mknod(r->fs, pino, name, strlen(name), S_IFREG | 0644, 0, 0, 0,
					  &ino);
		if (ret)
			op_error(r, dir ? "mkdir" : "mknod", ret);
		mp_push(r, mp_get(r, path), dir ? K_DIR : K_FILE, dir ? NULL : blob_new(0));
	}
	op_end(r, false);
}

static void f_create(struct run *r, const char *path)
{
	do_create(r, path, false);
}

static void f_mkdir(struct run *r, const char *path)
{
	do_create(r, path, true);
}

/* Compressible bytes: words of a small vocabulary, seeded. */
static void fill_words(uint8_t *p, size_t len, uint64_t seed)
{
	static const char *const words[] = { "power ", "cut ", "cluster ", "crypt ", "log\n" };
	uint64_t s = seed;

	for (size_t i = 0; i < len;) {
		const char *w = words[rw_splitmix(&s) % 5];
		size_t n = MIN(strlen(w), len - i);

		memcpy(p + i, w, n);
		i += n;
	}
}

/* One write call of at most 1 MiB (what FUSE sends); text: compressible bytes. */
static void f_write1_kind(struct run *r, const char *path, uint64_t off, size_t len,
			  uint64_t seed, bool text)
{
	struct mpath *m;
	struct ver *c;
	struct blob *nb;
	size_t nsize;
	uint32_t ino;
	ssize_t w;

	if (!op_begin(r, "write %s %zu@%" PRIu64, path, len, off))
		return;
	m = mp_find(r, path);
	c = mp_cur(m);
	if (!c || c->kind != K_FILE) {
		fprintf(stderr, "scenario bug: write to %s, which is not a file\n", path);
		abort();
	}
	nsize = off + len > c->b->size ? off + len : c->b->size;
	nb = blob_new(nsize);
	memcpy(nb->data, c->b->data, c->b->size);
	if (off > c->b->size)
		memset(nb->data + c->b->size, 0, off - c->b->size);
	if (text)
		fill_words(nb->data + off, len, seed);
	else
		rw_fill(nb->data + off, len, seed);
	if (resolve(r, path, &ino)) {
		w = uf2fs_write(r->fs, ino, nb->data + off, len, off);
		if (w != (ssize_t)len)
			op_error(r, "write", w);
	}
	mp_push(r, m, K_FILE, nb);
	op_end(r, false);
}

static void f_write1(struct run *r, const char *path, uint64_t off, size_t len, uint64_t seed)
{
	f_write1_kind(r, path, off, len, seed, false);
}

static void f_write(struct run *r, const char *path, uint64_t off, size_t len, uint64_t seed)
{
	const size_t chunk = 1 << 20;

	for (size_t done = 0; done < len; done += chunk)
		f_write1(r, path, off + done, len - done < chunk ? len - done : chunk,
			 seed * 131 + done / chunk);
}

/* A compressible write, of at most 1 MiB. */
static void f_write_text(struct run *r, const char *path, uint64_t off, size_t len,
			 uint64_t seed)
{
	f_write1_kind(r, path, off, len, seed, true);
}

static void f_truncate(struct run *r, const char *path, uint64_t size)
{
	struct uf2fs_attr a = { .size = size }, out;
	struct mpath *m;
	struct blob *nb;
	uint32_t ino;
	int ret;

	if (!op_begin(r, "truncate %s %" PRIu64, path, size))
		return;
	m = mp_find(r, path);
	nb = blob_new(size);
	memset(nb->data, 0, size);
	memcpy(nb->data, mp_cur(m)->b->data, MIN(size, mp_cur(m)->b->size));
	if (resolve(r, path, &ino)) {
		ret = uf2fs_setattr(r->fs, ino, &a, UF2FS_SET_SIZE, &out);
		if (ret)
			op_error(r, "setattr(size)", ret);
	}
	mp_push(r, m, K_FILE, nb);
	op_end(r, false);
}

static void f_punch(struct run *r, const char *path, uint64_t off, uint64_t len)
{
	struct mpath *m;
	struct blob *nb, *cb;
	uint32_t ino;
	int ret;

	if (!op_begin(r, "punch %s %" PRIu64 "@%" PRIu64, path, len, off))
		return;
	m = mp_find(r, path);
	cb = mp_cur(m)->b;
	nb = blob_new(cb->size);
	memcpy(nb->data, cb->data, cb->size);
	if (off < cb->size)
		memset(nb->data + off, 0, MIN(len, cb->size - off));
	if (resolve(r, path, &ino)) {
		ret = uf2fs_fallocate(r->fs, ino, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
				      len);
		if (ret)
			op_error(r, "fallocate(punch)", ret);
	}
	mp_push(r, m, K_FILE, nb);
	op_end(r, false);
}

static void f_chmod(struct run *r, const char *path, uint16_t mode)
{
	struct uf2fs_attr a = { .mode = S_IFREG | mode }, out;
	struct mpath *m;
	uint32_t ino;
	int ret;

	if (!op_begin(r, "chmod %s 0%o", path, mode))
		return;
	m = mp_find(r, path);
	if (resolve(r, path, &ino)) {
		ret = uf2fs_setattr(r->fs, ino, &a, UF2FS_SET_MODE, &out);
		if (ret)
			op_error(r, "setattr(mode)", ret);
	}
	mp_push(r, m, K_FILE, blob_get(mp_cur(m)->b));
	mp_cur(m)->mode = mode;
	op_end(r, false);
}

/* The xattr list of a model state with name set (size > 0) or removed (size 0). */
static void xa_edit(char *xa, size_t xsize, const char *name, size_t size, uint64_t seed)
{
	char out[512] = "", item[128], *save = NULL, *tok, copy[512];
	bool placed = false;
	size_t nl = strlen(name);

	snprintf(copy, sizeof(copy), "%s", xa);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int cmp = strncmp(tok, name, nl) == 0 && tok[nl] == '=' ? 0 :
			  strcmp(tok, name) < 0 ? -1 : 1;

		if (cmp > 0 && !placed && size) {
			snprintf(item, sizeof(item), "%s=%zu:%" PRIu64, name, size, seed);
			snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s",
				 *out ? "," : "", item);
			placed = true;
		}
		if (cmp == 0) {
			if (size && !placed) {
				snprintf(item, sizeof(item), "%s=%zu:%" PRIu64, name, size, seed);
				snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s",
					 *out ? "," : "", item);
				placed = true;
			}
			continue;
		}
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", *out ? "," : "",
			 tok);
	}
	if (size && !placed) {
		snprintf(item, sizeof(item), "%s=%zu:%" PRIu64, name, size, seed);
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", *out ? "," : "",
			 item);
	}
	snprintf(xa, xsize, "%s", out);
}

/* size 0: remove the xattr. */
static void f_xattr(struct run *r, const char *path, const char *name, size_t size,
		    uint64_t seed)
{
	struct mpath *m;
	uint32_t ino;
	uint8_t *val;
	int ret;

	if (!op_begin(r, "%s %s %s %zu", size ? "setxattr" : "removexattr", path, name, size))
		return;
	m = mp_find(r, path);
	val = malloc(size ? size : 1);
	rw_fill(val, size, seed);
	if (resolve(r, path, &ino)) {
		ret = size ? uf2fs_setxattr(r->fs, ino, name, val, size, 0)
			   : uf2fs_removexattr(r->fs, ino, name);
		if (ret)
			op_error(r, size ? "setxattr" : "removexattr", ret);
	}
	free(val);
	mp_push(r, m, K_FILE, blob_get(mp_cur(m)->b));
	xa_edit(mp_cur(m)->xa, sizeof(mp_cur(m)->xa), name, size, seed);
	op_end(r, false);
}

/* mode 0 (extends the size with zeroes), KEEP_SIZE, or ZERO_RANGE within the size. */
static void f_falloc(struct run *r, const char *path, int mode, uint64_t off, uint64_t len)
{
	struct mpath *m;
	struct blob *nb, *cb;
	size_t nsize;
	uint32_t ino;
	int ret;

	if (!op_begin(r, "fallocate %s mode %d %" PRIu64 "@%" PRIu64, path, mode, len, off))
		return;
	m = mp_find(r, path);
	cb = mp_cur(m)->b;
	nsize = cb->size;
	if (!(mode & FALLOC_FL_KEEP_SIZE) && off + len > nsize)
		nsize = off + len;
	nb = blob_new(nsize);
	memset(nb->data, 0, nsize);
	memcpy(nb->data, cb->data, cb->size);
	if (mode & FALLOC_FL_ZERO_RANGE)
		memset(nb->data + off, 0, MIN(len, nsize - off));
	if (resolve(r, path, &ino)) {
		ret = uf2fs_fallocate(r->fs, ino, mode, off, len);
		if (ret)
			op_error(r, "fallocate", ret);
	}
	mp_push(r, m, K_FILE, nb);
	op_end(r, false);
}

static void f_unlink(struct run *r, const char *path)
{
	char parent[4096];
	const char *name;
	uint32_t pino;
	int ret;

	if (!op_begin(r, "unlink %s", path))
		return;
	split(path, parent, sizeof(parent), &name);
	if (resolve(r, parent, &pino)) {
		ret = uf2fs_unlink(r->fs, pino, name, strlen(name));
		if (ret)
			op_error(r, "unlink", ret);
	}
	mp_push(r, mp_find(r, path), K_ABSENT, NULL);
	op_end(r, false);
}

/* Files only: the target (if any) is replaced. */
static void f_rename(struct run *r, const char *from, const char *to)
{
	char p1[4096], p2[4096];
	const char *n1, *n2;
	uint32_t d1, d2;
	struct mpath *mf, *mt;
	int ret;

	if (!op_begin(r, "rename %s -> %s", from, to))
		return;
	split(from, p1, sizeof(p1), &n1);
	split(to, p2, sizeof(p2), &n2);
	if (resolve(r, p1, &d1) && resolve(r, p2, &d2)) {
		ret = uf2fs_rename(r->fs, d1, n1, strlen(n1), d2, n2, strlen(n2), 0);
		if (ret)
			op_error(r, "rename", ret);
	}
	mf = mp_find(r, from);
	mt = mp_get(r, to);
	mp_push(r, mt, K_FILE, blob_get(mp_cur(mf)->b));
	mp_cur(mt)->mode = mp_cur(mf)->mode;
	memcpy(mp_cur(mt)->xa, mp_cur(mf)->xa, sizeof(mp_cur(mt)->xa));
	mp_push(r, mf, K_ABSENT, NULL);
	op_end(r, false);
}

/* The current state is promised; a state whose call failed cannot be. */
static void promise(struct run *r, struct mpath *m)
{
	int i = (int)m->nv - 1;

	while (i >= 0 && m->v[i].uncertain)
		i--;
	if (i >= 0 && i > m->promised) {
		m->promised = i;
		m->promised_op = r->opno;
		r->promises++;
	}
}

static void f_fsync(struct run *r, const char *path, bool datasync)
{
	uint32_t ino;
	int ret;

	if (!op_begin(r, "%s %s", datasync ? "fdatasync" : "fsync", path))
		return;
	if (resolve(r, path, &ino)) {
		snprintf(r->fsync_path, sizeof(r->fsync_path), "%s", path);
		ret = uf2fs_fsync(r->fs, ino, datasync);
		if (ret)
			op_error(r, "fsync", ret);
		else if (!power_cut(r))
			promise(r, mp_find(r, path));
	}
	op_end(r, true);
	r->fsync_path[0] = 0;
}

static void f_sync(struct run *r)
{
	int ret;

	if (!op_begin(r, "sync"))
		return;
	ret = uf2fs_sync(r->fs);
	if (ret)
		op_error(r, "sync", ret);
	else if (!power_cut(r))
		for (unsigned int i = 0; i < r->np; i++)
			promise(r, &r->p[i]);
	op_end(r, true);
}

/* Open a file and keep it open until the crash; returns its inode. */
static uint32_t f_open(struct run *r, const char *path)
{
	uint32_t ino = 0;
	int ret;

	if (!op_begin(r, "open %s", path))
		return 0;
	if (resolve(r, path, &ino)) {
		ret = uf2fs_open(r->fs, ino, O_RDWR);
		if (ret)
			op_error(r, "open", ret);
		if (r->norphans < ARRAY_LEN(r->orphan)) {
			snprintf(r->orphan_path[r->norphans], sizeof(r->orphan_path[0]), "%s",
				 path);
			r->orphan[r->norphans++] = ino;
		}
	}
	op_end(r, false);
	return ino;
}

/* The content an open inode had last under its name, with this write applied. */
static void note_ghost(struct run *r, uint32_t ino, const uint8_t *buf, uint64_t off, size_t len)
{
	struct blob *last = NULL, *nb;
	struct mpath *m = NULL;

	for (unsigned int i = 0; i < r->norphans && !m; i++)
		if (r->orphan[i] == ino)
			m = mp_find(r, r->orphan_path[i]);
	for (unsigned int i = m ? m->nv : 0; i-- > 0 && !last;)
		if (m->v[i].kind == K_FILE)
			last = m->v[i].b;
	if (!last)
		return;
	if (m->nghost)
		last = m->ghost[m->nghost - 1];
	nb = blob_new(last->size > off + len ? last->size : off + len);
	memset(nb->data, 0, nb->size);
	memcpy(nb->data, last->data, last->size);
	memcpy(nb->data + off, buf, len);
	m->ghost = realloc(m->ghost, (m->nghost + 1) * sizeof(*m->ghost));
	if (!m->ghost)
		abort();
	m->ghost[m->nghost++] = nb;
}

/* Write to an open inode that may have no name any more (modelled as a ghost only). */
static void f_write_ino(struct run *r, uint32_t ino, uint64_t off, size_t len, uint64_t seed)
{
	uint8_t *buf;
	ssize_t w;

	if (!op_begin(r, "write ino %u %zu@%" PRIu64, ino, len, off))
		return;
	buf = malloc(len);
	rw_fill(buf, len, seed);
	note_ghost(r, ino, buf, off, len);
	w = uf2fs_write(r->fs, ino, buf, len, off);
	if (w != (ssize_t)len)
		op_error(r, "write", w);
	free(buf);
	op_end(r, false);
}

static void f_fsync_ino(struct run *r, uint32_t ino)
{
	int ret;

	if (!op_begin(r, "fsync ino %u", ino))
		return;
	ret = uf2fs_fsync(r->fs, ino, false);
	if (ret)
		op_error(r, "fsync", ret);
	op_end(r, true);
}

static void f_gc(struct run *r)
{
	int ret;

	if (!op_begin(r, "gc"))
		return;
	ret = uf2fs_gc(r->fs, true);
	if (ret && ret != -EAGAIN)
		op_error(r, "gc", ret);
	op_end(r, true);
}

static uint64_t rnd(struct run *r, uint64_t n)
{
	return n ? rw_splitmix(&r->seed) % n : 0;
}


/* /// Images /// */

struct image {
	uint8_t *data;
	size_t size;
};

/*
 * Image sizes the scenarios use. 64 MiB is about the smallest mkfs.f2fs makes
 * (16 MiB of user blocks, of which uf2fs lets ~10 MiB be used); every run
 * copies its image a few times, so small is fast.
 */
static const unsigned int base_sizes[] = { 64 };
#define NR_SIZES ((int)ARRAY_LEN(base_sizes))
static struct image base_img[NR_SIZES][NR_FEATS];

static struct image *base_image(unsigned int mb, int fi)
{
	for (int i = 0; i < NR_SIZES; i++)
		if (base_sizes[i] == mb)
			return &base_img[i][fi];
	return NULL;
}

static struct image read_image(const char *path)
{
	struct image im = { 0 };
	FILE *fp = fopen(path, "rb");

	if (!fp)
		return im;
	fseek(fp, 0, SEEK_END);
	im.size = ftell(fp);
	rewind(fp);
	im.data = malloc(im.size);
	if (!im.data || fread(im.data, 1, im.size, fp) != im.size) {
		free(im.data);
		im.data = NULL;
	}
	fclose(fp);
	return im;
}

/* Only the non-zero blocks are written: tmpfs keeps the rest as holes. */
static int write_image(const char *path, const uint8_t *data, size_t size)
{
	static const uint8_t zero[4096];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	size_t i = 0;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, size)) {
		close(fd);
		return -errno;
	}
	while (i < size) {
		size_t j;

		if (!memcmp(data + i, zero, 4096)) {
			i += 4096;
			continue;
		}
		for (j = i + 4096; j < size && memcmp(data + j, zero, 4096); j += 4096)
			;
		if (pwrite(fd, data + i, j - i, i) != (ssize_t)(j - i)) {
			close(fd);
			return -EIO;
		}
		i = j;
	}
	close(fd);
	return 0;
}

/* fsck.f2fs -f --dry-run: exit 0, the summary line, no [ASSERT]/[FIX]/[Fail]. */
static bool fsck_clean(const char *img, FILE *log)
{
	char cmd[PATH_MAX + 64], line[1024];
	bool ok_line = false, bad = false;
	int st, shown = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "fsck.f2fs -f --dry-run '%s' 2>&1", img);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p)) {
		if (strstr(line, "[FSCK] other corrupted bugs") && strstr(line, "[Ok..]"))
			ok_line = true;
		/* quota files that disagree with the recount: "Fixing Quota file" */
		if (strstr(line, "[Fail]") || strstr(line, "[ASSERT]") || strstr(line, "[FIX]") ||
		    strstr(line, "Quota") || strstr(line, "quota entry")) {
			bad = true;
			if (log && shown++ < 8)
				fprintf(log, "    fsck: %s", line);
		}
	}
	st = pclose(p);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !ok_line || bad) {
		if (log)
			fprintf(log, "    fsck: exit %d, summary line %s\n",
				WIFEXITED(st) ? WEXITSTATUS(st) : -1, ok_line ? "ok" : "missing");
		return false;
	}
	return true;
}

/* /// Verifying a recovered image /// */

struct dent {
	char name[256];
	uint32_t ino;
	unsigned int dtype;
};

struct dents {
	struct dent *d;
	size_t n, cap;
};

static int collect(void *arg, const char *name, size_t len, uint32_t ino, unsigned int dtype,
		   uint64_t next_pos)
{
	struct dents *c = arg;

	if ((len == 1 && name[0] == '.') || (len == 2 && !memcmp(name, "..", 2)))
		return 0;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->d = realloc(c->d, c->cap * sizeof(*c->d));
		if (!c->d)
			abort();
	}
	snprintf(c->d[c->n].name, sizeof(c->d[c->n].name), "%.*s", (int)MIN(len, 255), name);
	c->d[c->n].ino = ino;
	c->d[c->n].dtype = dtype;
	c->n++;
	return 0;
}

struct walk {
	struct run *r;
	struct uf2fs *fs;
	const char *when;
	FILE *digest;		/* "path kind version" lines */
	uint64_t need_blocks;	/* what the files found can occupy */
	uint32_t *inos;
	size_t ninos, capinos;
	uint8_t *buf;
	size_t bufcap;
	bool *seen;		/* per model path */
};

/* What the filesystem shows besides the content: mode bits and xattrs. */
struct fmeta {
	uint16_t mode;
	int nx;
	char names[8][64];
	uint8_t *val[8];
	ssize_t len[8];
	bool bad;		/* listing or reading failed */
};

static void fmeta_read(struct uf2fs *fs, uint32_t ino, uint32_t mode, struct fmeta *fm)
{
	char list[1024];
	ssize_t n = uf2fs_listxattr(fs, ino, list, sizeof(list));

	memset(fm, 0, sizeof(*fm));
	fm->mode = mode & 07777;
	if (n < 0) {
		fm->bad = true;
		return;
	}
	for (ssize_t p = 0; p < n && fm->nx < 8; p += strlen(list + p) + 1) {
		int i = fm->nx++;

		snprintf(fm->names[i], sizeof(fm->names[i]), "%s", list + p);
		fm->val[i] = malloc(65536);
		fm->len[i] = uf2fs_getxattr(fs, ino, fm->names[i], fm->val[i], 65536);
		if (fm->len[i] < 0)
			fm->bad = true;
	}
}

static void fmeta_free(struct fmeta *fm)
{
	for (int i = 0; i < fm->nx; i++)
		free(fm->val[i]);
}

static bool fmeta_matches(const struct fmeta *fm, const struct ver *v)
{
	char copy[sizeof(v->xa)], *save = NULL, *tok;
	int count = 0;

	if (fm->bad || fm->mode != v->mode)
		return false;
	snprintf(copy, sizeof(copy), "%s", v->xa);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		size_t size;
		uint64_t seed;
		bool found = false;

		if (!eq || sscanf(eq + 1, "%zu:%" SCNu64, &size, &seed) != 2)
			return false;
		*eq = 0;
		count++;
		for (int i = 0; i < fm->nx; i++) {
			if (strcmp(fm->names[i], tok))
				continue;
			if (fm->len[i] == (ssize_t)size) {
				uint8_t *want = malloc(size ? size : 1);

				rw_fill(want, size, seed);
				found = !memcmp(want, fm->val[i], size);
				free(want);
			}
		}
		if (!found)
			return false;
	}
	return count == fm->nx;
}

static int match_version(struct mpath *m, const uint8_t *data, size_t size,
			 const struct fmeta *fm, int *best, bool *data_only)
{
	int n = 0;

	*best = -1;
	*data_only = false;
	for (unsigned int i = 0; i < m->nv; i++) {
		struct blob *b = m->v[i].b;

		if (m->v[i].kind == K_FILE && b->size == size && !memcmp(b->data, data, size)) {
			if (!fmeta_matches(fm, &m->v[i])) {
				*data_only = true;
				continue;
			}
			*best = i;
			n++;
		}
	}
	return n;
}

/* Bytes [off, off + len) of a content, read as zero past its end. */
static bool blob_range_matches(const struct blob *b, const uint8_t *data, size_t off, size_t len)
{
	size_t have = b->size > off ? MIN(len, b->size - off) : 0;

	if (have && memcmp(b->data + off, data + off, have))
		return false;
	for (size_t i = have; i < len; i++)
		if (data[off + i])
			return false;
	return true;
}

static bool range_matches(const struct ver *v, const uint8_t *data, size_t off, size_t len)
{
	return blob_range_matches(v->b, data, off, len);
}

/*
 * The file an fsync was writing when the power went (under IPU_FORCE: any
 * file written since its promise): an in-place update rewrites blocks the
 * durable tree already points at, before the inode that would make the new
 * state recoverable, and a torn request ends mid-block. As on Linux, the
 * file may then show its durable size and metadata with any of its blocks,
 * or half-blocks, new. Each 2 KiB piece must still come from one version at
 * or after the promised one, or from what the inode held after its unlink
 * (a shorter version reads as zeroes past its end: the new EOF block is
 * written zero-filled), and the size from one of them.
 */
static bool ipu_mixture_ok(struct mpath *m, const uint8_t *data, size_t size,
			   const struct fmeta *fm)
{
	unsigned int from = m->promised > 0 ? (unsigned int)m->promised : 0;
	bool size_ok = false, meta_ok = false;

	for (unsigned int i = from; i < m->nv; i++) {
		if (m->v[i].kind != K_FILE)
			continue;
		size_ok |= m->v[i].b->size == size;
		meta_ok |= fmeta_matches(fm, &m->v[i]);
	}
	if (!size_ok || !meta_ok)
		return false;
	for (size_t off = 0; off < size; off += 2048) {
		size_t len = MIN((size_t)2048, size - off);
		bool found = false;

		for (unsigned int i = from; i < m->nv && !found; i++)
			found = m->v[i].kind == K_FILE && range_matches(&m->v[i], data, off, len);
		for (unsigned int i = 0; i < m->nghost && !found; i++)
			found = blob_range_matches(m->ghost[i], data, off, len);
		if (!found)
			return false;
	}
	return true;
}

/* Where the content is closest to a version: for the report. */
static void describe_mismatch(struct walk *w, struct mpath *m, const uint8_t *data, size_t size,
			      const struct fmeta *fm, char *out, size_t outsz)
{
	size_t len = 0;

	len += snprintf(out + len, outsz - len, "found size %zu, mode 0%o, xattrs", size,
			fm->mode);
	for (int i = 0; i < fm->nx; i++)
		len += snprintf(out + len, outsz - len, " %s(%zd bytes)", fm->names[i],
				fm->len[i]);
	len += snprintf(out + len, outsz - len, "%s; versions:", fm->nx ? "" : " none");
	for (unsigned int i = 0; i < m->nv && len < outsz - 80; i++) {
		struct blob *b = m->v[i].b;

		if (m->v[i].kind != K_FILE) {
			len += snprintf(out + len, outsz - len, " #%u(%s,op%d)", i,
					m->v[i].kind == K_DIR ? "dir" : "absent", m->v[i].op);
			continue;
		}
		size_t k = 0, cmp = MIN(size, b->size);

		while (k < cmp && data[k] == b->data[k])
			k++;
		len += snprintf(out + len, outsz - len, " #%u(size %zu,op%d,%s %zu%s%s)", i, b->size,
				m->v[i].op, k == cmp ? "same up to" : "differs at", k,
				m->v[i].mode != 0644 || m->v[i].xa[0] ? ",meta " : "",
				m->v[i].mode != 0644 || m->v[i].xa[0] ? m->v[i].xa : "");
	}
	(void)w;
}

static void walk_file(struct walk *w, struct mpath *m, const char *path, uint32_t ino)
{
	struct run *r = w->r;
	struct uf2fs_attr a;
	struct fmeta fm;
	bool data_only;
	int best, ret;
	char desc[1500];

	ret = uf2fs_getattr(w->fs, ino, &a);
	if (ret) {
		runfail(r, "%s: /%s: getattr = %d", w->when, path, ret);
		return;
	}
	if (a.nlink != 1)
		runfail(r, "%s: /%s: nlink %u, want 1", w->when, path, a.nlink);
	if (a.size > (64u << 20)) {
		runfail(r, "%s: /%s: size %" PRIu64 " is more than any version", w->when, path,
			a.size);
		return;
	}
	if (a.size + 4096 > w->bufcap) {
		w->bufcap = a.size + 4096;
		w->buf = realloc(w->buf, w->bufcap);
	}
	for (size_t off = 0; off < a.size;) {
		size_t n = MIN(a.size - off, (size_t)1 << 20);
		ssize_t got = uf2fs_read(w->fs, ino, w->buf + off, n, off);

		if (got != (ssize_t)n) {
			runfail(r, "%s: /%s: read(%zu at %zu) = %zd", w->when, path, n, off, got);
			return;
		}
		off += n;
	}
	w->need_blocks += (a.size + 4095) / 4096 + 2 + a.size / (4096 * 1018);
	fmeta_read(w->fs, ino, a.mode, &fm);
	if (!match_version(m, w->buf, a.size, &fm, &best, &data_only) &&
	    (r->f->ipu_mix || !strcmp(r->cut_fsync_path, path)) &&
	    ipu_mixture_ok(m, w->buf, a.size, &fm)) {
		fprintf(w->digest, "%s file mix\n", path);
		fmeta_free(&fm);
		return;
	}
	if (best < 0) {
		describe_mismatch(w, m, w->buf, a.size, &fm, desc, sizeof(desc));
		runfail(r, "%s: (b) /%s %s: %s", w->when, path, data_only ?
			"has content of one of its versions but mode/xattrs of none with it" :
			"holds data it never held", desc);
		fprintf(w->digest, "%s file ?\n", path);
		fmeta_free(&fm);
		return;
	}
	if (m->promised >= 0 && best < m->promised) {
		describe_mismatch(w, m, w->buf, a.size, &fm, desc, sizeof(desc));
		runfail(r, "%s: (a) /%s lost its promised version #%d (promised by op #%d): "
			"it shows version #%d; %s", w->when, path, m->promised, m->promised_op,
			best, desc);
	}
	fprintf(w->digest, "%s file %d\n", path, best);
	fmeta_free(&fm);
}

static void walk_dir(struct walk *w, const char *dpath, uint32_t dino, int depth)
{
	struct run *r = w->r;
	struct dents c = { 0 };
	int ret;

	ret = uf2fs_readdir(w->fs, dino, 0, collect, &c);
	if (ret < 0)
		runfail(r, "%s: readdir(/%s) = %d", w->when, dpath, ret);
	for (size_t i = 0; i < c.n; i++) {
		char path[4096];
		struct mpath *m;
		struct uf2fs_attr a;

		snprintf(path, sizeof(path), "%s%s%s", dpath, *dpath ? "/" : "", c.d[i].name);
		if (w->ninos == w->capinos) {
			w->capinos = w->capinos ? w->capinos * 2 : 256;
			w->inos = realloc(w->inos, w->capinos * sizeof(*w->inos));
		}
		w->inos[w->ninos++] = c.d[i].ino;
		m = mp_find(r, path);
		if (!m) {
			runfail(r, "%s: (c) entry /%s (ino %u) was never created", w->when, path,
				c.d[i].ino);
			continue;
		}
		w->seen[m - r->p] = true;
		if (uf2fs_getattr(w->fs, c.d[i].ino, &a)) {
			runfail(r, "%s: /%s: getattr(ino %u) fails", w->when, path, c.d[i].ino);
			continue;
		}
		if (S_ISDIR(a.mode)) {
			bool ever = false;

			for (unsigned int k = 0; k < m->nv; k++)
				ever |= m->v[k].kind == K_DIR;
			if (!ever)
				runfail(r, "%s: /%s is a directory, never was one", w->when, path);
			fprintf(w->digest, "%s dir\n", path);
			w->need_blocks += 4;
			if (depth < 16)
				walk_dir(w, path, c.d[i].ino, depth + 1);
		} else if (S_ISREG(a.mode)) {
			walk_file(w, m, path, c.d[i].ino);
		} else {
			runfail(r, "%s: /%s has mode 0%o", w->when, path, a.mode);
		}
	}
	w->need_blocks += 2 + c.n / 20;
	free(c.d);
}

/* Checks (a)-(d) on a mounted recovered image; returns the digest. */
static char *verify_tree(struct run *r, struct uf2fs *fs, const char *when, bool space,
			 uint64_t base_free)
{
	struct walk w = { .r = r, .fs = fs, .when = when };
	char *digest = NULL;
	size_t dlen = 0;

	w.digest = open_memstream(&digest, &dlen);
	w.seen = calloc(r->np + 1, sizeof(bool));
	walk_dir(&w, "", uf2fs_root_ino(fs), 0);
	/* (a) promised paths that are missing */
	for (unsigned int i = 0; i < r->np; i++) {
		struct mpath *m = &r->p[i];
		bool may_be_absent = false;

		if (w.seen[i] || m->promised < 0)
			continue;
		for (unsigned int k = m->promised; k < m->nv; k++)
			may_be_absent |= m->v[k].kind == K_ABSENT;
		if (!may_be_absent)
			runfail(r, "%s: (a) /%s is missing; version #%d (%s) was promised by op #%d",
				when, m->path, m->promised,
				m->v[m->promised].kind == K_DIR ? "dir" : "file", m->promised_op);
	}
	/* (d) orphans: gone unless their name is still there */
	for (unsigned int i = 0; i < r->norphans; i++) {
		struct uf2fs_attr a;
		bool named = false;

		for (size_t k = 0; k < w.ninos; k++)
			named |= w.inos[k] == r->orphan[i];
		if (!named && !uf2fs_getattr(fs, r->orphan[i], &a))
			runfail(r, "%s: (d) orphan inode %u survives without a name (nlink %u, "
				"size %" PRIu64 ")", when, r->orphan[i], a.nlink, a.size);
	}
	if (space) {
		struct statvfs st;

		if (uf2fs_statfs(fs, &st)) {
			runfail(r, "%s: statfs fails", when);
		} else {
			uint64_t used = base_free > st.f_bfree ? base_free - st.f_bfree : 0;
			uint64_t allow = w.need_blocks + w.need_blocks / 20 + 256;

			if (used > allow)
				runfail(r, "%s: (d) %" PRIu64 " blocks in use beyond the base image, "
					"the files found need at most %" PRIu64 " (leaked space; "
					"orphan of %" PRIu64 " blocks?)", when, used, allow,
					r->orphan_blocks);
		}
	}
	fclose(w.digest);
	free(w.seen);
	free(w.inos);
	free(w.buf);
	return digest;
}

struct worker_env {
	char img_path[PATH_MAX];
};

static struct worker_env wenv;

/* After the run: recover the persisted image and check it. */
static void check_persisted(struct run *r, const uint8_t *img, size_t size, uint64_t base_free)
{
	struct uf2fs_options o = base_opts(r->f);
	struct uf2fs *fs = NULL;
	char *d1, *d2;
	int ret;

	ret = write_image(wenv.img_path, img, size);
	if (ret) {
		runfail(r, "cannot write %s: %s", wenv.img_path, strerror(-ret));
		return;
	}
	o.device = wenv.img_path;
	o.backend = UF2FS_BACKEND_PSYNC;
	ret = uf2fs_mount(&o, &fs);
	if (ret) {
		runfail(r, "recovery mount (rw) failed: %d (%s): %s", ret, strerror(-ret),
			uf2fs_last_error(NULL));
		return;
	}
	d1 = verify_tree(r, fs, "after recovery", true, base_free);
	ret = uf2fs_unmount(fs);
	if (ret)
		runfail(r, "unmount after recovery = %d (%s)", ret, strerror(-ret));
	if (!fsck_clean(wenv.img_path, r->log))
		runfail(r, "(e) fsck.f2fs is not clean after recovery and unmount");
	o.read_only = true;
	ret = uf2fs_mount(&o, &fs);
	if (ret) {
		runfail(r, "read-only mount after recovery failed: %d (%s): %s", ret,
			strerror(-ret), uf2fs_last_error(NULL));
		free(d1);
		return;
	}
	d2 = verify_tree(r, fs, "ro remount", false, 0);
	if (strcmp(d1, d2))
		runfail(r, "(e) the read-only remount shows another tree than the recovered "
			"mount did:\n--- recovered\n%.1500s--- remount\n%.1500s", d1, d2);
	uf2fs_unmount(fs);
	free(d1);
	free(d2);
}

/* Per (scenario, feature set): what the setup left and the dry run found. */
static void run_init(struct run *r, const struct scenario *s, const struct featset *f, FILE *log)
{
	memset(r, 0, sizeof(*r));
	r->s = s;
	r->f = f;
	r->log = log;
	r->seed = 0x5eed0000ull;
	for (const char *c = s->name; *c; c++)
		r->seed = r->seed * 31 + (uint8_t)*c;
}


/*
 * Every run copies 64 MiB images a few times (the RAM device, its durable
 * copy, the persisted image): with 4 KiB pages, page faults dominate. glibc
 * backs large allocations with transparent huge pages when told so at start.
 */
static void reexec_with_thp(char **argv)
{
	const char *t = getenv("GLIBC_TUNABLES");

	if (t && strstr(t, "glibc.malloc.hugetlb"))
		return;
	if (getenv("UF2FS_POWERLOSS_NO_THP"))
		return;
	if (t && *t) {
		char *nt;

		if (asprintf(&nt, "%s:glibc.malloc.hugetlb=1", t) < 0)
			return;
		setenv("GLIBC_TUNABLES", nt, 1);
		free(nt);
	} else {
		setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
	}
	execv("/proc/self/exe", argv);
	/* no /proc: carry on with small pages */
}

#endif /* UF2FS_POWERLOSS_H */
