// SPDX-License-Identifier: GPL-2.0
/*
 * EIO injection (uf2fs_options.fault_eio_at: the Nth device request, read or
 * write, fails with EIO). For a spread of N over a read-write workload:
 *
 *   - the error reaches the application: some call returns -EIO (the mount,
 *     an operation, a sync, or the unmount), never another error code, a
 *     crash or a hang (each N runs in a child process under an alarm);
 *   - after the first error the runner asks for a checkpoint (uf2fs_sync);
 *     when that fails, later writes, creates and fsyncs must return -EIO
 *     (the library stops metadata writes, as the kernel's stop_checkpoint);
 *   - what was promised before (fsync/sync returned 0) survives: in variant
 *     "crash" the RAM device's last flushed state (power-cut model) is
 *     recovered, in variant "unmount" the image file the psync backend wrote
 *     is, after uf2fs_unmount. The checks are the power-loss runner's
 *     (powerloss.h): promised states intact, no data a file never held,
 *     fsck.f2fs clean, a read-only remount shows the same tree.
 *
 * And reads: on an image with files and a large directory, every device
 * request of a read-only (and a read-write) session of lookups, getattrs,
 * readdirs and reads fails in turn; the failing call must return -EIO and
 * every call that succeeds must return the right bytes.
 *
 * Env: UF2FS_EIO_ALL=1 every N (default: a spread of ~60), UF2FS_EIO_ONLY=N,
 * UF2FS_EIO_TEST=workload|reads, UF2FS_EIO_NOFORK=1 (for a debugger),
 * UF2FS_POWERLOSS_VERBOSE=1, UF2FS_TMPDIR, KEEP_TMP=1.
 */
#include "powerloss.h"

#include <signal.h>
#include <sys/mman.h>

static bool eio_all;
static uint64_t eio_only;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
static size_t eio_points = 30;	/* sanitizer builds are slower */
#else
static size_t eio_points = 60;
#endif

/* Outcomes, summed over the child processes (shared memory). */
struct outcomes {
	int runs;
	int mount_failed;	/* the mount returned the error */
	int mount_absorbed;	/* a redundant copy answered: no error */
	int op_failed;		/* an operation returned the error first */
	int cp_stopped;		/* then the sync failed: writes refused after */
	int recovered;		/* then the sync succeeded */
	int unmount_failed;	/* no op failed; the unmount returned it */
	int not_issued;		/* request N came after the workload and unmount */
};

static struct outcomes *oc;

/* Device requests so far (reads + writes), from the stats text. */
static uint64_t dev_requests(struct uf2fs *fs)
{
	char *buf = malloc(UF2FS_IOC_STATS_SIZE), *p;
	uint64_t n = 0;

	uf2fs_format_stats(fs, buf, UF2FS_IOC_STATS_SIZE);
	for (p = buf; (p = strstr(p, " requests ")); p++)
		n += strtoull(p + 10, NULL, 10);
	free(buf);
	return n;
}

static const struct scenario eio_scn = { "eio-workload", "", 64, NULL, NULL };

/* The workload: namespace, inline and block data, fsync and sync. */
static void workload(struct run *r)
{
	char p[64];

	f_mkdir(r, "d");
	f_create(r, "a");
	f_create(r, "b");
	f_write(r, "a", 0, 100 * 1024, 1);
	f_write(r, "b", 0, 3000, 2);
	for (int i = 0; i < 20; i++) {
		snprintf(p, sizeof(p), "d/f%02d", i);
		f_create(r, p);
		f_write(r, p, 0, 500, 10 + i);
	}
	f_sync(r);
	f_write(r, "a", 4096, 8192, 3);
	f_fsync(r, "a", false);
	f_write(r, "b", 3000, 2000, 4);		/* inline to blocks */
	f_fsync(r, "b", false);
	f_create(r, "c");
	f_write(r, "c", 0, 1 << 20, 5);
	f_fsync(r, "c", false);
	for (int i = 0; i < 10; i++) {
		snprintf(p, sizeof(p), "d/f%02d", i);
		f_unlink(r, p);
	}
	f_rename(r, "d/f10", "d/g10");
	f_sync(r);
	f_write(r, "a", 200 * 1024, 65536, 6);
	f_truncate(r, "b", 100);
	f_fsync(r, "b", false);
	f_write(r, "c", 0, 4096, 7);
	f_fsync(r, "c", false);
	f_write(r, "a", 0, 10, 8);		/* never synced */
}

struct eio_result {
	uint64_t requests;	/* before the unmount */
	bool fired;		/* request N was issued before the unmount */
};

/*
 * A read that fails while mounting may be answered by the redundant copy
 * (the second superblock, the other checkpoint pack), as in the kernel: no
 * error has to reach the application then.
 */
static uint64_t mount_requests;

/*
 * After the first error: a checkpoint. If it fails, nothing may change the
 * filesystem any more.
 */
static void after_error(struct run *r)
{
	struct uf2fs_attr a;
	uint32_t ino = 0, nino;
	ssize_t w;
	int ret;

	ret = uf2fs_sync(r->fs);
	if (ret == 0)
		oc->recovered++;
	else
		oc->cp_stopped++;
	if (ret == 0) {
		/* the library says all is well: that is a promise too */
		for (unsigned int i = 0; i < r->np; i++)
			promise(r, &r->p[i]);
		return;
	}
	if (ret != -EIO)
		runfail(r, "sync after the error returned %d (%s), not EIO", ret, strerror(-ret));
	if (uf2fs_resolve(r->fs, "a", &ino) == 0) {
		char x = 'x';

		w = uf2fs_write(r->fs, ino, &x, 1, 0);
		if (w != -EIO)
			runfail(r, "after a failed checkpoint, write returned %zd, not EIO", w);
		ret = uf2fs_fsync(r->fs, ino, false);
		if (ret != -EIO)
			runfail(r, "after a failed checkpoint, fsync returned %d, not EIO", ret);
		memset(&a, 0, sizeof(a));
		a.size = 1;
		ret = uf2fs_setattr(r->fs, ino, &a, UF2FS_SET_SIZE, &a);
		if (ret != -EIO)
			runfail(r, "after a failed checkpoint, truncate returned %d, not EIO", ret);
	}
	ret = uf2fs_mknod(r->fs, uf2fs_root_ino(r->fs), "late", 4, S_IFREG | 0644, 0, 0, 0, &nino);
	if (ret != -EIO)
		runfail(r, "after a failed checkpoint, mknod returned %d, not EIO", ret);
	ret = uf2fs_sync(r->fs);
	if (ret != -EIO)
		runfail(r, "after a failed checkpoint, a second sync returned %d, not EIO", ret);
}

static void check_first_error(struct run *r)
{
	if (r->nerr && r->first_err != -EIO)
		runfail(r, "the first failing call returned %ld (%s), not EIO", r->first_err,
			r->first_err < 0 ? strerror((int)-r->first_err) : "short");
}

/* Variant "crash": RAM device, power-cut model, the last flushed state. */
static void eio_crash(const struct featset *f, struct image *base, uint64_t n, FILE *log,
		      struct eio_result *res)
{
	struct uf2fs_options o = base_opts(f);
	struct run r;
	void *img = NULL;
	size_t size;
	int ret;

	run_init(&r, &eio_scn, f, log);
	r.eio_mode = true;
	r.eio_at = n;
	r.eio_variant = "crash";
	o.backend = UF2FS_BACKEND_RAM;
	o.ram_image = base->data;
	o.ram_size = base->size;
	o.power_cut_model = true;
	o.fault_eio_at = n;
	ret = uf2fs_mount(&o, &r.fs);
	if (ret) {
		if (ret != -EIO)
			runfail(&r, "mount returned %d (%s), not EIO", ret, strerror(-ret));
		res->fired = true;
		oc->mount_failed++;
		model_release(&r);
		return;
	}
	mount_requests = dev_requests(r.fs);
	if (mount_requests >= n)
		oc->mount_absorbed++;
	workload(&r);
	res->requests = dev_requests(r.fs);
	if (r.nerr)
		oc->op_failed++;
	res->fired = res->requests >= n && n > mount_requests;
	if (n > (1ull << 40) && r.nerr)
		runfail(&r, "the dry run (no fault) failed: %s", r.first_err_desc);
	check_first_error(&r);
	if (res->fired && !r.nerr)
		runfail(&r, "request %" PRIu64 " failed (of %" PRIu64 " before the unmount), but "
			"no call returned an error", n, res->requests);
	if (r.nerr)
		after_error(&r);
	ret = uf2fs_test_persisted_image(r.fs, &img, &size);
	uf2fs_test_crash(r.fs);
	if (ret)
		runfail(&r, "uf2fs_test_persisted_image = %d", ret);
	else
		check_persisted(&r, img, size, 0);
	free(img);
	if (verbose)
		fprintf(log, "run EIO at %" PRIu64 " crash: %" PRIu64 " requests, %s\n", n,
			res->requests, r.nerr ? r.first_err_desc : "no error");
	model_release(&r);
}

/* Variant "unmount": psync on an image file, then uf2fs_unmount. */
static void eio_unmount(const struct featset *f, struct image *base, uint64_t n, FILE *log)
{
	struct uf2fs_options o = base_opts(f);
	char path[PATH_MAX];
	struct image after;
	struct run r;
	uint64_t reqs;
	int ret, uret;

	run_init(&r, &eio_scn, f, log);
	r.eio_mode = true;
	r.eio_at = n;
	r.eio_variant = "unmount";
	snprintf(path, sizeof(path), "%s/eio-%d.img", rw_tmp, (int)getpid());
	if (write_image(path, base->data, base->size)) {
		runfail(&r, "cannot write %s", path);
		model_release(&r);
		return;
	}
	o.device = path;
	o.fault_eio_at = n;
	ret = uf2fs_mount(&o, &r.fs);
	if (ret) {
		if (ret != -EIO)
			runfail(&r, "mount returned %d (%s), not EIO", ret, strerror(-ret));
		oc->mount_failed++;
		unlink(path);
		model_release(&r);
		return;
	}
	mount_requests = dev_requests(r.fs);
	if (mount_requests >= n)
		oc->mount_absorbed++;
	workload(&r);
	reqs = dev_requests(r.fs);
	if (r.nerr)
		oc->op_failed++;
	check_first_error(&r);
	if (reqs >= n && n > mount_requests && !r.nerr)
		runfail(&r, "request %" PRIu64 " failed (of %" PRIu64 " before the unmount), but "
			"no call returned an error", n, reqs);
	if (r.nerr)
		after_error(&r);
	uret = uf2fs_unmount(r.fs);
	r.fs = NULL;
	if (!r.nerr && n > reqs)
		*(uret == -EIO ? &oc->unmount_failed : &oc->not_issued) += 1;
	if (uret && uret != -EIO)
		runfail(&r, "unmount returned %d (%s), not EIO", uret, strerror(-uret));
	if (reqs < n && uret == 0 && verbose)
		fprintf(log, "  (request %" PRIu64 " was never issued, or the unmount hid it)\n", n);
	after = read_image(path);
	unlink(path);
	if (!after.data)
		runfail(&r, "cannot read back %s", path);
	else
		check_persisted(&r, after.data, after.size, 0);
	free(after.data);
	if (verbose)
		fprintf(log, "run EIO at %" PRIu64 " unmount: %" PRIu64 " requests, unmount %d, %s\n",
			n, reqs, uret, r.nerr ? r.first_err_desc : "no error");
	model_release(&r);
}

/* Runs fn in a child with an alarm: a crash or a hang is a finding too. */
static int in_child(const char *what, uint64_t n, FILE *log, void (*fn)(void *), void *arg)
{
	pid_t pid;
	int st;

	fflush(log);
	fflush(stdout);
	oc->runs++;
	if (getenv("UF2FS_EIO_NOFORK")) {
		g_runfails = 0;
		fn(arg);
		return g_runfails ? 1 : 0;
	}
	pid = fork();
	if (pid == 0) {
		alarm(120);
		g_runfails = 0;
		fn(arg);
		fflush(log);
		_exit(g_runfails ? 1 : 0);
	}
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st)) {
		fprintf(log, "FAIL %s: EIO at request %" PRIu64 ": the process died of signal %d%s\n",
			what, n, WTERMSIG(st), WTERMSIG(st) == SIGALRM ? " (a hang: 120 s)" : "");
		return 1;
	}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

struct wl_arg {
	const struct featset *f;
	struct image *base;
	uint64_t n;
	int variant;
	FILE *log;
};

static void wl_child(void *p)
{
	struct wl_arg *a = p;
	struct eio_result res = { 0 };

	snprintf(wenv.img_path, sizeof(wenv.img_path), "%s/chk-%d.img", rw_tmp, (int)getpid());
	if (a->variant == 0)
		eio_crash(a->f, a->base, a->n, a->log, &res);
	else
		eio_unmount(a->f, a->base, a->n, a->log);
	unlink(wenv.img_path);
}

static uint64_t *spread(uint64_t max, size_t want, size_t *out)
{
	uint64_t *v = malloc((want + 8) * sizeof(*v));
	size_t n = 0;

	if (eio_all || max <= want) {
		v = realloc(v, (max + 1) * sizeof(*v));
		for (uint64_t i = 1; i <= max; i++)
			v[n++] = i;
		*out = n;
		return v;
	}
	for (size_t k = 0; k < want; k++) {
		uint64_t p = 1 + k * (max - 1) / (want - 1);

		if (!n || v[n - 1] != p)
			v[n++] = p;
	}
	*out = n;
	return v;
}

static void t_workload(void **state)
{
	int fails = 0, runs = 0;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int fi = 0; fi < NR_FEATS; fi++) {
		const struct featset *f = &featsets[fi];
		struct image *base = base_image(64, fi);
		struct eio_result dry = { 0 };
		uint64_t *pts, max;
		size_t npts;

		/* the dry run: how many requests the workload makes */
		g_runfails = 0;
		eio_crash(f, base, UINT64_MAX / 2, stdout, &dry);
		if (g_runfails)
			fail_msg("the workload fails without faults");
		max = dry.requests + 40;	/* and some of the unmount's */
		pts = spread(max, eio_points, &npts);
		if (eio_only) {
			pts[0] = eio_only;
			npts = 1;
		}
		for (size_t i = 0; i < npts; i++) {
			for (int variant = 0; variant < 2; variant++) {
				struct wl_arg a = { f, base, pts[i], variant, stdout };

				fails += in_child("eio-workload", pts[i], stdout, wl_child, &a);
				runs++;
			}
		}
		printf("eio-workload [%-5s] %" PRIu64 " requests before the unmount; %zu values of N "
		       "x 2 variants = %zu runs\n", f->label, dry.requests, npts, 2 * npts);
		free(pts);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("eio-workload: %d runs, %d failed, %.1fs\n", runs, fails,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	printf("  outcomes: mount failed %d, fault absorbed by a redundant copy at mount %d, "
	       "an operation failed %d (then the sync failed and writes were refused %d, "
	       "the sync succeeded %d), only the unmount failed %d, request never issued %d\n",
	       oc->mount_failed, oc->mount_absorbed, oc->op_failed, oc->cp_stopped,
	       oc->recovered, oc->unmount_failed, oc->not_issued);
	if (fails)
		fail_msg("%d failed runs (details above)", fails);
}

/* /// Reads /// */

struct expect_file {
	const char *path;
	size_t size;
	uint64_t seed;
};

static const struct expect_file rfiles[] = {
	{ "a", 100 * 1024, 1 },
	{ "b", 3000, 2 },		/* inline */
	{ "c", 2 << 20, 3 },
	{ "d/big", 300 * 1024, 4 },
};

static struct image read_base[NR_FEATS];

static int make_read_image(int fi)
{
	struct uf2fs_options o = base_opts(&featsets[fi]);
	char path[PATH_MAX], name[32];
	struct uf2fs *fs;
	uint32_t ino, d;
	int ret;

	snprintf(path, sizeof(path), "%s/read-%s.img", rw_tmp, featsets[fi].label);
	if (write_image(path, base_image(64, fi)->data, base_image(64, fi)->size))
		return -1;
	o.device = path;
	ret = uf2fs_mount(&o, &fs);
	if (ret)
		return ret;
	ret = uf2fs_mkdir(fs, uf2fs_root_ino(fs), "d", 1, 0755, 0, 0, &d);
	for (int i = 0; !ret && i < 300; i++) {
		snprintf(name, sizeof(name), "entry%03d", i);
		ret = uf2fs_mknod(fs, d, name, strlen(name), S_IFREG | 0644, 0, 0, 0, &ino);
	}
	for (size_t i = 0; !ret && i < ARRAY_LEN(rfiles); i++) {
		uint8_t *buf = malloc(rfiles[i].size);
		const char *nm = strrchr(rfiles[i].path, '/');

		rw_fill(buf, rfiles[i].size, rfiles[i].seed);
		ret = uf2fs_mknod(fs, nm ? d : uf2fs_root_ino(fs), nm ? nm + 1 : rfiles[i].path,
				  strlen(nm ? nm + 1 : rfiles[i].path), S_IFREG | 0644, 0, 0, 0, &ino);
		if (!ret && uf2fs_write(fs, ino, buf, rfiles[i].size, 0) != (ssize_t)rfiles[i].size)
			ret = -EIO;
		free(buf);
	}
	if (uf2fs_unmount(fs) && !ret)
		ret = -EIO;
	if (!ret)
		read_base[fi] = read_image(path);
	unlink(path);
	return ret;
}

static int count_entries(void *arg, const char *name, size_t len, uint32_t ino,
			 unsigned int dtype, uint64_t next_pos)
{
	(*(int *)arg)++;
	return 0;
}

struct read_arg {
	int fi;
	bool rw;
	uint64_t n;
	uint64_t mount_reqs, total_reqs;	/* out, for the dry run */
	FILE *log;
};

/* The read session; with n = 0 it only counts. Returns the failures. */
static int read_session(struct read_arg *a)
{
	const struct featset *f = &featsets[a->fi];
	struct uf2fs_options o = base_opts(f);
	struct uf2fs *fs;
	int fails = 0, eio = 0, ret;
	uint8_t *want = NULL, *got = NULL;
	const char *mode = a->rw ? "rw" : "ro";
	char path[PATH_MAX];

#define RFAIL(...)                                                                    \
	do {                                                                          \
		fprintf(a->log, "FAIL eio-read [%s] %s, EIO at request %" PRIu64 ": ",     \
			f->label, mode, a->n);                                        \
		fprintf(a->log, __VA_ARGS__);                                         \
		fputc('\n', a->log);                                                  \
		fails++;                                                              \
	} while (0)

	/*
	 * An image file: the RAM backend ignores fault_eio_at on read-only
	 * mounts (see the report), and the faults go past the mount anyway.
	 */
	snprintf(path, sizeof(path), "%s/read-%d.img", rw_tmp, (int)getpid());
	if (write_image(path, read_base[a->fi].data, read_base[a->fi].size)) {
		RFAIL("cannot write %s", path);
		return fails;
	}
	o.device = path;
	o.read_only = !a->rw;
	o.fault_eio_at = a->n;
	ret = uf2fs_mount(&o, &fs);
	if (ret) {
		if (ret != -EIO)
			RFAIL("mount returned %d (%s), not EIO", ret, strerror(-ret));
		unlink(path);
		return fails;
	}
	a->mount_reqs = dev_requests(fs);
	for (size_t i = 0; i < ARRAY_LEN(rfiles); i++) {
		const struct expect_file *e = &rfiles[i];
		struct uf2fs_attr at;
		uint32_t ino;

		ret = uf2fs_resolve(fs, e->path, &ino);
		if (verbose)
			fprintf(a->log, "  resolve(%s) = %d, requests now %" PRIu64 "\n", e->path, ret,
				dev_requests(fs));
		if (ret) {
			if (ret == -EIO)
				eio++;
			else
				RFAIL("resolve(%s) = %d (%s), not EIO", e->path, ret, strerror(-ret));
			continue;
		}
		ret = uf2fs_getattr(fs, ino, &at);
		if (ret) {
			if (ret == -EIO)
				eio++;
			else
				RFAIL("getattr(%s) = %d, not EIO", e->path, ret);
			continue;
		}
		if (at.size != e->size)
			RFAIL("%s: size %" PRIu64 ", want %zu", e->path, at.size, e->size);
		want = realloc(want, e->size);
		got = realloc(got, e->size);
		rw_fill(want, e->size, e->seed);
		for (size_t off = 0; off < e->size; off += 128 * 1024) {
			size_t len = MIN((size_t)128 * 1024, e->size - off);
			ssize_t r = uf2fs_read(fs, ino, got + off, len, off);

			if (verbose)
				fprintf(a->log, "  read(%s, %zu@%zu) = %zd, requests now %" PRIu64 "\n",
					e->path, len, off, r, dev_requests(fs));

			if (r == -EIO) {
				eio++;
				continue;
			}
			if (r != (ssize_t)len)
				RFAIL("read(%s, %zu@%zu) = %zd, want %zu or EIO", e->path, len, off, r,
				      len);
			else if (memcmp(got + off, want + off, len))
				RFAIL("read(%s, %zu@%zu) succeeded with wrong bytes (a failed read "
				      "served as data?)", e->path, len, off);
		}
	}
	{
		uint32_t d;
		int n = 0;

		ret = uf2fs_resolve(fs, "d", &d);
		if (ret == -EIO) {
			eio++;
		} else if (ret) {
			RFAIL("resolve(d) = %d, not EIO", ret);
		} else {
			ret = uf2fs_readdir(fs, d, 0, count_entries, &n);
			if (ret == -EIO)
				eio++;
			else if (ret < 0)
				RFAIL("readdir(d) = %d, not EIO", ret);
			else if (n != 300 + 1 + 2)
				RFAIL("readdir(d) succeeded with %d entries, want 303", n);
		}
	}
	a->total_reqs = dev_requests(fs);
	if (a->n && a->n <= a->total_reqs && !eio)
		RFAIL("request %" PRIu64 " of the session failed, but no call returned EIO", a->n);
	ret = uf2fs_unmount(fs);
	if (ret && ret != -EIO)
		RFAIL("unmount = %d, not EIO", ret);
	unlink(path);
	free(want);
	free(got);
	return fails;
#undef RFAIL
}

static void read_child(void *p)
{
	g_runfails += read_session(p);
}

static void t_reads(void **state)
{
	int fails = 0, runs = 0;

	for (int fi = 0; fi < NR_FEATS; fi++) {
		int ret = make_read_image(fi);

		if (ret) {
			printf("cannot make the read image: %d\n", ret);
			fail();
		}
		for (int rw = 0; rw < 2; rw++) {
			struct read_arg dry = { fi, rw, 0, 0, 0, stdout };
			uint64_t *pts;
			size_t npts;

			if (read_session(&dry))
				fail_msg("the read session fails without faults");
			/*
			 * every request of the session after the mount, in turn (faults
			 * in the mount are the workload test's)
			 */
			pts = spread(dry.total_reqs - dry.mount_reqs, 80, &npts);
			for (size_t i = 0; i < npts; i++)
				pts[i] += dry.mount_reqs;
			if (eio_only) {
				pts[0] = eio_only;
				npts = 1;
			}
			for (size_t i = 0; i < npts; i++) {
				struct read_arg a = { fi, rw, pts[i], 0, 0, stdout };

				fails += in_child("eio-read", pts[i], stdout, read_child, &a);
				runs++;
			}
			printf("eio-read [%-5s] %s: %" PRIu64 " requests (mount %" PRIu64 "); %zu "
			       "values of N\n", featsets[fi].label, rw ? "rw" : "ro", dry.total_reqs,
			       dry.mount_reqs, npts);
			free(pts);
		}
		free(read_base[fi].data);
	}
	printf("eio-read: %d runs, %d failed\n", runs, fails);
	if (fails)
		fail_msg("%d failed runs (details above)", fails);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_workload),
		cmocka_unit_test(t_reads),
	};
	char img[PATH_MAX];
	const char *e;
	int failures;

	(void)argc;
	reexec_with_thp(argv);
	oc = mmap(NULL, sizeof(*oc), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (oc == MAP_FAILED)
		return 1;
	memset(oc, 0, sizeof(*oc));
	if (system("command -v mkfs.f2fs >/dev/null && command -v fsck.f2fs >/dev/null") != 0) {
		printf("SKIP: f2fs-tools (mkfs.f2fs, fsck.f2fs) not installed\n");
		return 77;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	e = getenv("UF2FS_EIO_ALL");
	eio_all = e && *e == '1';
	e = getenv("UF2FS_EIO_ONLY");
	eio_only = e && *e ? strtoull(e, NULL, 0) : 0;
	e = getenv("UF2FS_POWERLOSS_VERBOSE");
	verbose = e && *e == '1';
	if (!getenv("UF2FS_TMPDIR") && !access("/dev/shm", W_OK))
		setenv("UF2FS_TMPDIR", "/dev/shm", 1);
	rw_tmp_init("eio");
	snprintf(wenv.img_path, sizeof(wenv.img_path), "%s/chk.img", rw_tmp);
	for (int fi = 0; fi < NR_FEATS; fi++) {
		snprintf(img, sizeof(img), "%s/base-%s.img", rw_tmp, featsets[fi].label);
		if (rw_mkfs(img, 64, featsets[fi].mkfs)) {
			printf("mkfs.f2fs failed for %s\n", img);
			return 1;
		}
		base_img[0][fi] = read_image(img);
		unlink(img);
	}
	e = getenv("UF2FS_EIO_TEST");
	if (e && !strcmp(e, "workload"))
		failures = _cmocka_run_group_tests("eio", tests, 1, NULL, NULL);
	else if (e && !strcmp(e, "reads"))
		failures = _cmocka_run_group_tests("eio", tests + 1, 1, NULL, NULL);
	else
		failures = cmocka_run_group_tests(tests, NULL, NULL);
	for (int fi = 0; fi < NR_FEATS; fi++)
		free(base_img[0][fi].data);
	rw_tmp_done(failures);
	return failures ? 1 : 0;
}
