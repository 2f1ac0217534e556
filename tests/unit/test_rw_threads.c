// SPDX-License-Identifier: GPL-2.0
/*
 * Concurrency of the read-write library API: 8 threads of mixed namespace
 * and data operations for a bounded time, then unmount, fsck.f2fs, and a
 * read-only remount that must show exactly what each thread's model says.
 *
 * Each thread works mostly in its own directory (t0..t7) and keeps a model
 * of its own files, so that its results are predictable; it also creates,
 * renames in and out of, and deletes entries in one shared directory (with
 * names of its own), and calls sync and fsync, so that checkpoints run
 * while the others write. Contended names (shared/c0..c7) are created and
 * unlinked by every thread: each attempt must either succeed or fail with
 * EEXIST/ENOENT, and a name must exist at the end exactly when the net count
 * of successful creates minus unlinks is 1 (never 2 or -1).
 *
 * Run it under ThreadSanitizer too: make SAN=thread build-san-thread/tests/test_rw_threads
 *
 * Env: UF2FS_THREADS_SECONDS (default 10), UF2FS_SEED, UF2FS_THREADS (default 8),
 *      UF2FS_STRESS_AVOID (known bugs to steer clear of, as in test_rw_random.c).
 */
#include "test_rw_common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#define MAX_THREADS 32
#define NCONT 8
#define TMAXSIZE (1 << 20)

static struct uf2fs *fs;
static uint64_t seed;
static int nthreads = 8;
static double seconds = 10;
static atomic_int stop;
static atomic_int cont_net[NCONT];
static atomic_ulong total_ops, total_syncs;

struct worker {
	int id;
	pthread_t th;
	uint64_t rng;
	struct model m;
	char err[2048];
	unsigned long ops;
	uint8_t *buf, *rbuf;
	char hist[16][200];
};

static struct worker W[MAX_THREADS];

static bool avoid(const char *what)
{
	const char *e = getenv("UF2FS_STRESS_AVOID");

	return e && strstr(e, what);
}

static uint64_t trr(struct worker *w, uint64_t n)
{
	return n ? rw_splitmix(&w->rng) % n : 0;
}

static void tnote(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->hist[w->ops % 16], sizeof(w->hist[0]), fmt, ap);
	va_end(ap);
}

#define TFAIL(w, ...)                                                                 \
	do {                                                                          \
		if (!(w)->err[0])                                                     \
			snprintf((w)->err, sizeof((w)->err), __VA_ARGS__);            \
		atomic_store(&stop, 1);                                               \
		return false;                                                         \
	} while (0)

#define TEXPECT(w, call, want)                                                        \
	do {                                                                          \
		long long _g = (long long)(call), _w = (long long)(want);             \
		if (_g != _w)                                                         \
			TFAIL(w, "thread %d op %lu: %s = %lld (%s), expected %lld",  \
			      (w)->id, (w)->ops, #call, _g,                           \
			      _g < 0 ? strerror((int)-_g) : "-", _w);                 \
	} while (0)

static const char *tpick(struct worker *w, bool want_dir)
{
	size_t cnt = 0, k;

	for (size_t i = 0; i < w->m.n; i++)
		if (!!S_ISDIR(w->m.d[i].n->mode) == want_dir && strchr(w->m.d[i].path, '/'))
			cnt++;
	if (!cnt)
		return NULL;
	k = trr(w, cnt);
	for (size_t i = 0; i < w->m.n; i++)
		if (!!S_ISDIR(w->m.d[i].n->mode) == want_dir && strchr(w->m.d[i].path, '/') && !k--)
			return w->m.d[i].path;
	return NULL;
}

static bool tcheck(struct worker *w, const char *p, uint32_t ino, const struct mnode *n)
{
	struct uf2fs_attr a;
	uint64_t off = 0, len = n->size;
	ssize_t r;

	TEXPECT(w, uf2fs_getattr(fs, ino, &a), 0);
	if (a.size != n->size)
		TFAIL(w, "thread %d: %s size %" PRIu64 ", model %zu", w->id, p, a.size, n->size);
	if (len > 65536) {
		off = trr(w, n->size - 65536);
		len = 65536;
	}
	r = uf2fs_read(fs, ino, w->rbuf, len, off);
	if (r != (ssize_t)len)
		TFAIL(w, "thread %d: %s read(%" PRIu64 ", %" PRIu64 ") = %zd", w->id, p, off, len, r);
	if (len && memcmp(w->rbuf, n->data + off, len))
		TFAIL(w, "thread %d op %lu: %s content differs in [%" PRIu64 ", +%" PRIu64 ")",
		      w->id, w->ops, p, off, len);
	return true;
}

static bool resolve(struct worker *w, const char *p, uint32_t *ino)
{
	int ret = uf2fs_resolve(fs, p, ino);

	if (ret)
		TFAIL(w, "thread %d op %lu: resolve(%s) = %d", w->id, w->ops, p, ret);
	return true;
}

static bool parent_of(struct worker *w, const char *p, uint32_t *dino, const char **name)
{
	char parent[512];

	split_path(p, parent, sizeof(parent), name);
	return resolve(w, parent, dino);
}

static int count_fill(void *arg, const char *name, size_t len, uint32_t ino, unsigned int dtype,
		      uint64_t next_pos)
{
	(*(int *)arg)++;
	return 0;
}

/* One random operation of thread w. */
static bool step(struct worker *w)
{
	unsigned int c = trr(w, 100);
	char path[512], name[128];
	uint32_t ino, dino;
	const char *p, *nm;

	w->ops++;
	if (c < 10) {		/* create a file: own dir, a subdir, or the shared dir */
		const char *d = trr(w, 3) == 0 ? "shared" : (tpick(w, true) ?: "");
		char dir[300];

		if (!*d)
			snprintf(dir, sizeof(dir), "t%d", w->id);
		else
			snprintf(dir, sizeof(dir), "%s", d);
		snprintf(name, sizeof(name), "t%d-f%lu", w->id, w->ops);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		tnote(w, "create %s", path);
		if (!resolve(w, dir, &dino))
			return false;
		TEXPECT(w, uf2fs_mknod(fs, dino, name, strlen(name), S_IFREG | 0644, w->id, 0, 0,
				       &ino), 0);
		model_add(&w->m, path, mnode_new(S_IFREG | 0644, w->id, 0));
	} else if (c < 35) {	/* write */
		struct mnode *n;
		uint64_t off, len;

		p = tpick(w, false);
		if (!p)
			return true;
		n = model_get(&w->m, p);
		if (!S_ISREG(n->mode))
			return true;
		len = trr(w, 4) ? 1 + trr(w, 8192) : 1 + trr(w, 256 << 10);
		off = trr(w, 2) ? n->size : trr(w, TMAXSIZE - len);
		if (!trr(w, 3)) {	/* whole blocks: write-through, under drop-behind */
			len = (len + (32 << 10)) & ~4095ull;
			off &= ~4095ull;
		}
		if (off + len > TMAXSIZE)
			off = (TMAXSIZE - len) & ~4095ull;
		rw_fill(w->buf, len, rw_splitmix(&w->rng));
		tnote(w, "write %s %" PRIu64 "+%" PRIu64, p, off, len);
		if (!resolve(w, p, &ino))
			return false;
		TEXPECT(w, uf2fs_write(fs, ino, w->buf, len, off), (ssize_t)len);
		mnode_write(n, off, w->buf, len);
		return tcheck(w, p, ino, n);
	} else if (c < 42) {	/* truncate */
		struct uf2fs_attr a = { 0 };
		struct mnode *n;

		p = tpick(w, false);
		if (!p || !S_ISREG((n = model_get(&w->m, p))->mode))
			return true;
		a.size = trr(w, 2) ? trr(w, n->size + 1) : trr(w, TMAXSIZE);
		if (avoid("truncup-inline") && a.size > n->size && n->size <= 3500 && a.size > 3400)
			a.size = n->size;
		tnote(w, "truncate %s %" PRIu64, p, a.size);
		if (!resolve(w, p, &ino))
			return false;
		TEXPECT(w, uf2fs_setattr(fs, ino, &a, UF2FS_SET_SIZE, NULL), 0);
		mnode_truncate(n, a.size);
		return tcheck(w, p, ino, n);
	} else if (c < 47) {	/* punch or zero */
		struct mnode *n;
		uint64_t off, len;
		int mode = trr(w, 2) ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
				     : FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;

		p = tpick(w, false);
		if (!p || !S_ISREG((n = model_get(&w->m, p))->mode) || !n->size)
			return true;
		off = trr(w, n->size);
		len = 1 + trr(w, 100000);
		tnote(w, "fallocate %s 0x%x %" PRIu64 "+%" PRIu64, p, mode, off, len);
		if (!resolve(w, p, &ino))
			return false;
		TEXPECT(w, uf2fs_fallocate(fs, ino, mode, off, len), 0);
		mnode_zero(n, off, len);
		return tcheck(w, p, ino, n);
	} else if (c < 55) {	/* rename between the own tree and the shared dir */
		char to[512], pbuf[512];
		uint32_t sd, td;
		const char *tn;

		p = tpick(w, false);
		if (!p)
			return true;
		snprintf(pbuf, sizeof(pbuf), "%s", p);
		if (!strncmp(pbuf, "shared/", 7))
			snprintf(to, sizeof(to), "t%d/t%d-r%lu", w->id, w->id, w->ops);
		else
			snprintf(to, sizeof(to), "shared/t%d-r%lu", w->id, w->ops);
		tnote(w, "rename %s -> %s", pbuf, to);
		if (!parent_of(w, pbuf, &sd, &nm) || !parent_of(w, to, &td, &tn))
			return false;
		TEXPECT(w, uf2fs_rename(fs, sd, nm, strlen(nm), td, tn, strlen(tn), 0), 0);
		model_rename(&w->m, pbuf, to);
	} else if (c < 60) {	/* link into the shared dir or own dir */
		char to[512];
		struct mnode *n;
		uint32_t td;
		const char *tn;

		p = tpick(w, false);
		if (!p)
			return true;
		n = model_get(&w->m, p);
		snprintf(to, sizeof(to), "%s/t%d-l%lu", trr(w, 2) ? "shared" : "", w->id, w->ops);
		if (to[0] == '/')
			snprintf(to, sizeof(to), "t%d/t%d-l%lu", w->id, w->id, w->ops);
		tnote(w, "link %s -> %s", p, to);
		if (!resolve(w, p, &ino) || !parent_of(w, to, &td, &tn))
			return false;
		TEXPECT(w, uf2fs_link(fs, ino, td, tn, strlen(tn)), 0);
		model_add(&w->m, to, n);
	} else if (c < 70) {	/* unlink */
		char pbuf[512];

		p = tpick(w, false);
		if (!p)
			return true;
		snprintf(pbuf, sizeof(pbuf), "%s", p);
		tnote(w, "unlink %s", pbuf);
		if (!parent_of(w, pbuf, &dino, &nm))
			return false;
		TEXPECT(w, uf2fs_unlink(fs, dino, nm, strlen(nm)), 0);
		model_del(&w->m, pbuf);
	} else if (c < 74) {	/* mkdir in own tree */
		snprintf(path, sizeof(path), "t%d/d%lu", w->id, w->ops);
		tnote(w, "mkdir %s", path);
		if (!parent_of(w, path, &dino, &nm))
			return false;
		TEXPECT(w, uf2fs_mkdir(fs, dino, nm, strlen(nm), 0750, w->id, 0, &ino), 0);
		model_add(&w->m, path, mnode_new(S_IFDIR | 0750, w->id, 0));
	} else if (c < 77) {	/* rmdir an own directory if empty */
		char pbuf[512];
		size_t children = 0;

		p = tpick(w, true);
		if (!p || avoid("rmdir"))
			return true;
		snprintf(pbuf, sizeof(pbuf), "%s", p);
		for (size_t i = 0; i < w->m.n; i++)
			if (!strncmp(w->m.d[i].path, pbuf, strlen(pbuf)) &&
			    w->m.d[i].path[strlen(pbuf)] == '/')
				children++;
		tnote(w, "rmdir %s", pbuf);
		if (!parent_of(w, pbuf, &dino, &nm))
			return false;
		TEXPECT(w, uf2fs_rmdir(fs, dino, nm, strlen(nm)), children ? -ENOTEMPTY : 0);
		if (!children)
			model_del(&w->m, pbuf);
	} else if (c < 87) {	/* contended names in the shared dir */
		int k = trr(w, NCONT), ret;

		snprintf(name, sizeof(name), "c%d", k);
		if (!resolve(w, "shared", &dino))
			return false;
		if (trr(w, 2)) {
			tnote(w, "contended create %s", name);
			ret = uf2fs_mknod(fs, dino, name, strlen(name), S_IFREG | 0600, 0, 0, 0, &ino);
			if (ret == 0)
				atomic_fetch_add(&cont_net[k], 1);
			else if (ret != -EEXIST)
				TFAIL(w, "thread %d: contended create %s = %d", w->id, name, ret);
		} else {
			tnote(w, "contended unlink %s", name);
			ret = uf2fs_unlink(fs, dino, name, strlen(name));
			if (ret == 0)
				atomic_fetch_sub(&cont_net[k], 1);
			else if (ret != -ENOENT)
				TFAIL(w, "thread %d: contended unlink %s = %d", w->id, name, ret);
		}
	} else if (c < 90) {	/* readdir of the shared dir while the others change it */
		int cnt = 0;

		tnote(w, "readdir shared");
		if (!resolve(w, "shared", &dino))
			return false;
		TEXPECT(w, uf2fs_readdir(fs, dino, 0, count_fill, &cnt) < 0, 0);
		if (cnt < 2)
			TFAIL(w, "thread %d: readdir(shared) saw %d entries", w->id, cnt);
	} else if (c < 92) {	/* open, unlink, use, release */
		struct mnode *n;
		char pbuf[512];

		p = tpick(w, false);
		if (!p || model_nlink(&w->m, (n = model_get(&w->m, p)), p) != 1)
			return true;
		snprintf(pbuf, sizeof(pbuf), "%s", p);
		tnote(w, "open+unlink %s", pbuf);
		if (!resolve(w, pbuf, &ino) || !parent_of(w, pbuf, &dino, &nm))
			return false;
		n->refs++;
		TEXPECT(w, uf2fs_open(fs, ino, O_RDWR), 0);
		TEXPECT(w, uf2fs_unlink(fs, dino, nm, strlen(nm)), 0);
		model_del(&w->m, pbuf);
		if (!tcheck(w, pbuf, ino, n))
			return false;
		uf2fs_release(fs, ino, O_RDWR);
		mnode_put(n);
	} else if (c < 94) {
		tnote(w, "sync");
		TEXPECT(w, uf2fs_sync(fs), 0);
		atomic_fetch_add(&total_syncs, 1);
	} else if (c < 96) {
		p = tpick(w, false);
		if (!p)
			return true;
		tnote(w, "fsync %s", p);
		if (!resolve(w, p, &ino))
			return false;
		TEXPECT(w, uf2fs_fsync(fs, ino, trr(w, 2)), 0);
	} else {		/* chmod / getattr of own entries */
		struct uf2fs_attr a = { .mode = 0600 | trr(w, 0100) };
		struct mnode *n;

		p = tpick(w, trr(w, 2));
		if (!p)
			return true;
		n = model_get(&w->m, p);
		if (S_ISDIR(n->mode))
			a.mode |= 0700;
		tnote(w, "chmod %s 0%o", p, a.mode);
		if (!resolve(w, p, &ino))
			return false;
		TEXPECT(w, uf2fs_setattr(fs, ino, &a, UF2FS_SET_MODE, NULL), 0);
		n->mode = (n->mode & S_IFMT) | a.mode;
	}
	return true;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load(&stop) && step(w))
		;
	atomic_fetch_add(&total_ops, w->ops);
	return NULL;
}

static void t_threads(void **state)
{
	char img[PATH_MAX];
	struct model all;
	struct timespec t0, t;
	uint32_t ino;
	int failed = 0;

	snprintf(img, sizeof(img), "%s/threads.img", rw_tmp);
	rw_mkfs(img, 1024, RW_FEATURES_DEFAULT);
	{
		struct uf2fs_options o;
		int ret;

		uf2fs_default_options(&o);
		o.device = img;
		o.read_only = false;
		/* the background checkpoint thread runs too, and the cache evicts */
		o.checkpoint_interval = 1;
		o.cache_size = (seed & 1) ? 8 << 20 : 0;
		/* drop-behind and write-through, as under FUSE, on every other seed */
		o.dontcache = (seed & 2) ? 1 : -1;
		ret = uf2fs_mount(&o, &fs);
		if (ret)
			RW_FAIL("mount = %d: %s", ret, uf2fs_last_error(NULL));
	}
	model_init(&all);
	RW_OK(uf2fs_mkdir(fs, uf2fs_root_ino(fs), "shared", 6, 0777, 0, 0, &ino));
	for (int i = 0; i < nthreads; i++) {
		struct worker *w = &W[i];
		char d[16];

		w->id = i;
		w->rng = seed * 1000 + i;
		w->buf = malloc(TMAXSIZE);
		w->rbuf = malloc(TMAXSIZE);
		model_init(&w->m);
		snprintf(d, sizeof(d), "t%d", i);
		RW_OK(uf2fs_mkdir(fs, uf2fs_root_ino(fs), d, strlen(d), 0755, i, 0, &ino));
		model_add(&w->m, d, mnode_new(S_IFDIR | 0755, i, 0));
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < nthreads; i++)
		assert_int_equal(pthread_create(&W[i].th, NULL, worker_main, &W[i]), 0);
	do {
		usleep(50000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!atomic_load(&stop) &&
		 (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	atomic_store(&stop, 1);
	for (int i = 0; i < nthreads; i++)
		pthread_join(W[i].th, NULL);
	printf("seed %" PRIu64 ": %d threads, %lu operations, %lu syncs in %.1f s%s\n", seed,
	       nthreads, atomic_load(&total_ops), atomic_load(&total_syncs), seconds,
	       (seed & 2) ? ", drop-behind and write-through" : "");
	for (int i = 0; i < nthreads; i++) {
		if (W[i].err[0]) {
			print_error("%s\n  last operations of thread %d:\n", W[i].err, i);
			for (unsigned long k = W[i].ops > 15 ? W[i].ops - 15 : 1; k <= W[i].ops; k++)
				print_error("    #%lu %s\n", k, W[i].hist[k % 16]);
			failed = 1;
		}
	}
	if (failed)
		RW_FAIL("a thread failed (seed %" PRIu64 "; UF2FS_SEED reproduces the op mix, "
			"not the interleaving)", seed);
	/* the combined model */
	model_add(&all, "shared", mnode_new(S_IFDIR | 0777, 0, 0));
	for (int k = 0; k < NCONT; k++) {
		int net = atomic_load(&cont_net[k]);
		char p[32];

		if (net != 0 && net != 1)
			RW_FAIL("contended name c%d: net creates - unlinks = %d", k, net);
		snprintf(p, sizeof(p), "shared/c%d", k);
		if (net)
			model_add(&all, p, mnode_new(S_IFREG | 0600, 0, 0));
	}
	for (int i = 0; i < nthreads; i++)
		for (size_t j = 0; j < W[i].m.n; j++)
			model_add(&all, W[i].m.d[j].path, W[i].m.d[j].n);
	if ((seed & 2) && !rw_stat_number(fs, "(data;"))
		RW_FAIL("seed %" PRIu64 ": drop-behind on, yet no block was written through", seed);
	snprintf(rw_context, sizeof(rw_context), "seed %" PRIu64 ", after the threads", seed);
	RW_VERIFY(fs, &all, "rw, after the threads");
	rw_unmount(fs);
	RW_FSCK(img);
	fs = rw_mount(img, true);
	RW_VERIFY(fs, &all, "ro remount");
	rw_unmount(fs);
	RW_FSCK(img);
	model_free(&all);
	for (int i = 0; i < nthreads; i++) {
		model_free(&W[i].m);
		free(W[i].buf);
		free(W[i].rbuf);
	}
}

/*
 * getxattr against a setxattr/removexattr that adds and frees the xattr
 * node (xfstests generic/403): the reader sized its buffer for the inline
 * area alone, then copied a node the writer had just added into it.
 */
static atomic_int xr_stop;

static void *xattr_reader(void *arg)
{
	uint32_t ino = *(uint32_t *)arg;
	char v[8];
	long bad = 0;

	while (!atomic_load(&xr_stop))
		if (uf2fs_getxattr(fs, ino, "trusted.small", v, sizeof(v)) != 1)
			bad++;
	return (void *)bad;
}

static void t_xattr_node_race(void **state)
{
	char img[PATH_MAX], big[512];
	pthread_t th[2];
	uint32_t ino;
	void *bad;
	long fails = 0;

	snprintf(img, sizeof(img), "%s/xattr-race.img", rw_tmp);
	rw_mkfs(img, 256, RW_FEATURES_DEFAULT);
	fs = rw_mount(img, false);
	RW_OK(uf2fs_mknod(fs, uf2fs_root_ino(fs), "file", 4, S_IFREG | 0644, 0, 0, 0, &ino));
	RW_OK(uf2fs_setxattr(fs, ino, "trusted.small", "a", 1, 0));
	memset(big, 'a', sizeof(big));
	atomic_store(&xr_stop, 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, xattr_reader, &ino), 0);
	for (int i = 0; i < 300; i++) {
		RW_OK(uf2fs_setxattr(fs, ino, "trusted.big", big, sizeof(big), 0));
		RW_OK(uf2fs_removexattr(fs, ino, "trusted.big"));
	}
	atomic_store(&xr_stop, 1);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], &bad);
		fails += (long)bad;
	}
	if (fails)
		RW_FAIL("%ld getxattr calls of trusted.small failed during the race", fails);
	rw_unmount(fs);
	RW_FSCK(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_threads),
		cmocka_unit_test(t_xattr_node_race),
	};
	const char *e;
	int failures;

	if (system("command -v mkfs.f2fs >/dev/null && command -v fsck.f2fs >/dev/null") != 0) {
		printf("SKIP: f2fs-tools (mkfs.f2fs, fsck.f2fs) not installed\n");
		return 77;
	}
	e = getenv("UF2FS_SEED");
	seed = e && *e ? strtoull(e, NULL, 0) : (uint64_t)time(NULL) % 1000000;
	e = getenv("UF2FS_THREADS_SECONDS");
	if (e && *e)
		seconds = atof(e);
	e = getenv("UF2FS_THREADS");
	if (e && *e)
		nthreads = atoi(e);
	if (nthreads < 1 || nthreads > MAX_THREADS)
		nthreads = 8;
	rw_tmp_init("rw-threads");
	failures = cmocka_run_group_tests(tests, NULL, NULL);
	rw_tmp_done(failures);
	return failures ? 1 : 0;
}
