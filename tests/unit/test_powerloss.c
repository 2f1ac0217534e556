// SPDX-License-Identifier: GPL-2.0
/*
 * Power-loss runner over the device layer (the RAM backend's power-cut model,
 * lib/dev.c): every scenario runs once without a cut to count its device
 * writes W, then again for a sample of cut points N in 1..W+1 (every N when W
 * is small or UF2FS_POWERLOSS_ALL=1), in two variants: "clean" (the writes
 * since the last flush are lost) and "tear" (they land, the last one torn in
 * half). After each cut the image power loss would leave is mounted
 * read-write (roll-forward recovery, orphan cleanup) and checked:
 *
 *   (a) every promised state survives: after an fsync or sync returned 0
 *       with the power still on, the file (fsync) or every path (sync) must
 *       show that state or a later one an operation begun before the cut
 *       produced (absence counts, for unlink and rename);
 *   (b) no file shows data it never held: each file's content, mode bits and
 *       xattrs equal one of the states that path had (the model keeps them
 *       all, full content included);
 *   (c) paths never promised may be absent or hold any of their versions;
 *       no name that was never created appears;
 *   (d) open-unlinked files (orphans) are gone and their space is back
 *       (statfs, loosely);
 *   (e) after unmount, fsck.f2fs -f --dry-run is clean, and a read-only
 *       mount shows the same tree as the recovered read-write mount did.
 *
 * The scenarios stop issuing operations after the one during which the
 * power went: later ones could not reach the disk. They are: fsync-seq,
 * inline-grow, rename-over, dir-growth, gc (a small image filled, every other
 * file deleted, writes that need foreground GC), cp-mid, orphan (unlink of
 * open files, crash before release), small-fsyncs, clean-mount (fsync right
 * after mounting a cleanly unmounted image), sparse (indirect nodes), xattr,
 * long-chain (a roll-forward chain longer than a segment), many-new, falloc,
 * atomic, crypt (fscrypt v1 and v2 directories, on an -O encrypt image
 * with the keys in a keyfile: the "crypt" feature set, which runs the crypt
 * scenarios only), and crypt-compr (compressed files in +c encrypted
 * directories, on an image of its own with encrypt and compression).
 *
 * Each (scenario, feature set) runs its cut points in worker processes; a
 * worker that dies (a crash, a sanitizer report) is a failure naming the run
 * it was in. Every failure line ends with the operation the power went in,
 * and each failed run prints the environment to rerun just it.
 *
 * Env:
 *   UF2FS_POWERLOSS_ALL=1       every cut point (make powerloss)
 *   UF2FS_POWERLOSS_POINTS=n    sampled points per scenario (default 40, 10 under
 *                               a sanitizer)
 *   UF2FS_POWERLOSS_JOBS=n      worker processes (default: online CPUs, max 8)
 *   UF2FS_POWERLOSS_SCENARIO=s  only scenarios whose name contains s
 *   UF2FS_POWERLOSS_FEATURES=f  only the feature set labelled f (none, extra)
 *   UF2FS_POWERLOSS_ONLY=scenario:features:N:tear   one run, verbosely
 *   UF2FS_POWERLOSS_VERBOSE=1   library messages and per-run lines
 *   UF2FS_TMPDIR                where the images go (default /dev/shm, else TMPDIR)
 *   KEEP_TMP=1                  keep the temp dir
 */
#define POWERLOSS_CRYPT	/* the "crypt" feature set, for sc_crypt */
#include "powerloss.h"

/* /// Scenarios /// */

/* create/write/fsync: several files, 1 byte to 3 MiB, appends, overwrites,
 * an inline file growing past the inline size, holes, truncate, punch. */
static void sc_fsync_seq(struct run *r)
{
	f_create(r, "a");
	f_create(r, "b");
	f_create(r, "c");
	f_create(r, "d");
	f_sync(r);
	f_write(r, "a", 0, 1, 1);
	f_fsync(r, "a", false);
	f_write(r, "b", 0, 3000, 2);
	f_fsync(r, "b", false);
	f_write(r, "b", 3000, 1000, 3);		/* past the inline area: converts */
	f_fsync(r, "b", false);
	f_write(r, "c", 0, 1 << 20, 4);
	f_write(r, "a", 1, 100, 5);
	f_fsync(r, "c", false);
	f_write(r, "c", 300000, 8192, 6);	/* overwrite, unaligned */
	f_fsync(r, "c", false);
	f_write(r, "d", 0, 3 << 20, 7);
	f_fsync(r, "d", true);
	f_write(r, "a", 4096, 5000, 8);		/* a hole, then data */
	f_fsync(r, "a", false);
	f_truncate(r, "c", 100 * 1024);
	f_fsync(r, "c", false);
	f_punch(r, "c", 8192, 16384);
	f_fsync(r, "c", false);
	f_create(r, "e");			/* new since the checkpoint */
	f_write(r, "e", 0, 20000, 9);
	f_fsync(r, "e", false);
	f_write(r, "b", 0, 1, 10);
	f_fsync(r, "b", false);
	f_write(r, "d", 1 << 20, 4096, 11);
	f_fsync(r, "d", false);
	f_write(r, "a", 9096, 7, 12);		/* never fsync'd */
	f_write(r, "d", 0, 4096, 13);
	f_write(r, "e", 20000, 100, 14);
}

/* Inline data growing by appends past ~3.4 KiB, fsync after each. */
static void sc_inline_grow(struct run *r)
{
	f_create(r, "f");
	f_create(r, "g");
	f_sync(r);
	f_write(r, "f", 0, 1, 20);
	f_fsync(r, "f", false);
	for (int i = 0; i < 9; i++) {
		f_write(r, "f", 1 + i * 500, 500, 21 + i);
		f_fsync(r, "f", false);
		f_write(r, "g", i, 1, 40 + i);
		if (i % 3 == 2)
			f_fsync(r, "g", true);
	}
	f_truncate(r, "f", 100);
	f_fsync(r, "f", false);
	f_write(r, "f", 100, 200, 50);
	f_fsync(r, "f", false);
}

/* The atomic-replace idiom: write a temp file, fsync, rename over. */
static void sc_rename_over(struct run *r)
{
	f_create(r, "x");
	f_create(r, "y");
	f_write(r, "x", 0, 5000, 60);
	f_write(r, "y", 0, 300, 61);
	f_sync(r);
	f_create(r, "x.tmp");
	f_write(r, "x.tmp", 0, 6000, 62);
	f_fsync(r, "x.tmp", false);
	f_rename(r, "x.tmp", "x");
	f_fsync(r, "x", false);
	f_create(r, "y.tmp");
	f_write(r, "y.tmp", 0, 200, 63);
	f_rename(r, "y.tmp", "y");
	f_sync(r);
	f_write(r, "x", 0, 100, 64);
	f_fsync(r, "x", false);
	f_create(r, "z.tmp");
	f_write(r, "z.tmp", 0, 70000, 65);
	f_fsync(r, "z.tmp", false);
	f_rename(r, "z.tmp", "x");
	f_write(r, "y", 0, 1, 66);
	f_fsync(r, "y", false);
	f_create(r, "w.tmp");
	f_write(r, "w.tmp", 0, 3, 67);
	f_rename(r, "w.tmp", "y");
	f_fsync(r, "y", false);
}

/* Directory growth: inline dir to blocks, hundreds of entries, levels. */
static void sc_dir_growth(struct run *r)
{
	char p[512];

	f_mkdir(r, "d");
	f_sync(r);
	for (int i = 0; i < 300; i++) {
		snprintf(p, sizeof(p), "d/f%03d", i);
		f_create(r, p);
		if (i % 7 == 3)
			f_write(r, p, 0, i % 14 == 3 ? 5000 : 10 + i, 100 + i);
		if (i == 9 || i % 100 == 99)
			f_sync(r);
	}
	f_mkdir(r, "d/s1");
	f_mkdir(r, "d/s1/s2");
	f_mkdir(r, "d/s1/s2/s3");
	for (int i = 0; i < 50; i++) {
		snprintf(p, sizeof(p), "d/s1/s2/s3/n%02d", i);
		f_create(r, p);
	}
	f_write(r, "d/s1/s2/s3/n07", 0, 777, 400);
	f_fsync(r, "d/s1/s2/s3/n07", false);
	for (int i = 0; i < 50; i += 3) {
		snprintf(p, sizeof(p), "d/f%03d", i);
		f_unlink(r, p);
	}
	f_sync(r);
	for (int i = 0; i < 100; i++) {
		snprintf(p, sizeof(p), "d/%0200d", i);
		f_create(r, p);
		if (i == 69)
			f_sync(r);
	}
	f_write(r, "d/f100", 0, 4000, 401);
	f_fsync(r, "d/f100", false);
}

/* GC under load: the setup fills ~80% and deletes every other file. */
#define GC_FILE (192 * 1024)
static unsigned int gc_nfiles;

static void sc_gc_setup(struct run *r)
{
	struct statvfs st;
	char p[64];
	uint64_t fill;

	uf2fs_statfs(r->fs, &st);
	/*
	 * uf2fs refuses writes well before statfs runs out on this image (see
	 * the report): fill 55% of the free blocks, about 80% of what it takes.
	 */
	fill = (uint64_t)st.f_bfree * 4096 * 55 / 100;
	gc_nfiles = fill / (GC_FILE + 4096);
	for (unsigned int i = 0; i < gc_nfiles; i++) {
		snprintf(p, sizeof(p), "g%03u", i);
		f_create(r, p);
		f_write(r, p, 0, GC_FILE, 500 + i);
	}
	f_sync(r);
	for (unsigned int i = 0; i < gc_nfiles; i += 2) {
		snprintf(p, sizeof(p), "g%03u", i);
		f_unlink(r, p);
	}
	f_sync(r);
}

static void sc_gc(struct run *r)
{
	char p[64];

	/* writing about what was deleted needs the half-valid segments back */
	for (unsigned int i = 0; i < gc_nfiles / 2 + 4; i++) {
		snprintf(p, sizeof(p), "n%03u", i);
		f_create(r, p);
		f_write(r, p, 0, GC_FILE, 900 + i);
		if (i % 4 == 1)
			f_fsync(r, p, false);
		if (i % 10 == 9)
			f_sync(r);
		if (i == gc_nfiles / 4)
			f_gc(r);
		if (i % 5 == 2) {
			snprintf(p, sizeof(p), "g%03u", 2 * i + 1);	/* overwrite survivors */
			if (mp_kind(mp_find(r, p)) == K_FILE) {
				f_write(r, p, 4096 * (i % 40), 8192, 1500 + i);
				f_fsync(r, p, false);
			}
		}
	}
}

/* A checkpoint in the middle of a stream of writes to several files. */
static void sc_cp_mid(struct run *r)
{
	f_create(r, "p");
	f_create(r, "q");
	f_create(r, "r");
	f_sync(r);
	for (int i = 0; i < 6; i++) {
		f_write(r, "p", i * 65536, 65536, 200 + i);
		f_write(r, "q", rnd(r, 30000), 1 + rnd(r, 4096), 210 + i);
		f_write(r, "r", i * 200000, 300000, 220 + i);
		if (i == 2)
			f_sync(r);
		if (i == 3)
			f_fsync(r, "q", false);
	}
	f_sync(r);
	f_write(r, "p", 10, 10, 230);
	f_write(r, "r", 4096, 4096, 231);
	f_fsync(r, "p", false);
	f_write(r, "q", 0, 50000, 232);
}

/* Unlink of open files: the next mount must free them. */
static void sc_orphan(struct run *r)
{
	uint32_t v1, v2;

	f_create(r, "victim");
	f_write(r, "victim", 0, 4 << 20, 300);
	f_create(r, "other");
	f_create(r, "victim2");
	f_write(r, "victim2", 0, 1 << 20, 301);
	f_sync(r);
	r->orphan_blocks = (4 << 20) / 4096;
	v1 = f_open(r, "victim");
	f_unlink(r, "victim");
	f_write_ino(r, v1, 0, 4096, 302);
	f_write(r, "other", 0, 10000, 303);
	f_fsync(r, "other", false);		/* roll-forward: the unlink is not in it */
	f_sync(r);				/* the orphan goes into the checkpoint */
	f_write(r, "other", 10000, 3000, 304);
	f_fsync(r, "other", false);
	f_write_ino(r, v1, 4 << 20, 4096, 305);
	f_fsync_ino(r, v1);			/* an unlinked file: a checkpoint */
	v2 = f_open(r, "victim2");
	f_unlink(r, "victim2");
	f_write(r, "other", 0, 100, 306);
	f_fsync(r, "other", false);
	f_write_ino(r, v2, 0, 100, 307);
	f_sync(r);
	f_write(r, "other", 100, 100, 308);
	/* the crash comes before any release */
}

/* Many small fsyncs between checkpoints: long roll-forward chains. */
static void sc_small_fsyncs(struct run *r)
{
	const char *f[] = { "s1", "s2", "s3" };

	for (int i = 0; i < 3; i++) {
		f_create(r, f[i]);
		f_write(r, f[i], 0, 12000, 600 + i);
	}
	f_sync(r);
	for (int i = 0; i < 40; i++) {
		const char *fn = f[i % 3];
		size_t size = mp_cur(mp_find(r, fn))->b->size;
		uint64_t off = rnd(r, size + 2000);

		f_write(r, fn, off, 1 + rnd(r, 700), 610 + i);
		if (i % 5 != 4)
			f_fsync(r, fn, i % 2);
		if (i == 25)
			f_sync(r);
	}
}

/* fsync right after mounting a cleanly unmounted image (no sync first). */
static void sc_clean_mount_setup(struct run *r)
{
	f_create(r, "a");
	f_write(r, "a", 0, 3000, 700);
	f_create(r, "b");
	f_write(r, "b", 0, 20000, 701);
}

static void sc_clean_mount(struct run *r)
{
	f_write(r, "a", 0, 100, 702);
	f_fsync(r, "a", false);
	f_create(r, "c");
	f_write(r, "c", 0, 5000, 703);
	f_fsync(r, "c", false);
	f_write(r, "b", 0, 1 << 20, 704);
	f_fsync(r, "b", false);
	f_write(r, "a", 3000, 2000, 705);
	f_fsync(r, "a", true);
	f_write(r, "b", 8192, 1, 706);
}

/* A sparse file whose blocks sit under an indirect node (past ~11.6 MiB). */
static void sc_sparse(struct run *r)
{
	f_create(r, "s");
	f_write(r, "s", 0, 4096, 800);
	f_sync(r);
	f_write(r, "s", 12 << 20, 8192, 801);
	f_fsync(r, "s", false);
	f_write(r, "s", (13 << 20) + 100, 5000, 802);
	f_fsync(r, "s", false);
	f_punch(r, "s", 12 << 20, 4096);
	f_fsync(r, "s", false);
	f_truncate(r, "s", (12 << 20) + 6000);
	f_fsync(r, "s", false);
	f_write(r, "s", 4096, 4096, 803);
	f_fsync(r, "s", false);
}

/* Mode and xattrs (inline and in an xattr node) with fsync. */
static void sc_xattr(struct run *r)
{
	f_create(r, "x1");
	f_create(r, "x2");
	f_write(r, "x2", 0, 100, 900);
	f_sync(r);
	f_xattr(r, "x1", "user.a", 10, 901);
	f_fsync(r, "x1", false);
	f_xattr(r, "x2", "user.big", 2000, 902);	/* past the inline area */
	f_fsync(r, "x2", false);
	f_chmod(r, "x1", 0600);
	f_fsync(r, "x1", false);
	f_write(r, "x2", 100, 5000, 903);
	f_fsync(r, "x2", false);
	f_xattr(r, "x1", "user.a", 0, 0);
	f_xattr(r, "x1", "user.b", 30, 904);
	f_fsync(r, "x1", false);
	f_xattr(r, "x2", "user.big", 1500, 905);
	f_fsync(r, "x2", true);
	f_create(r, "x3");				/* new since the checkpoint */
	f_xattr(r, "x3", "user.a", 50, 906);
	f_write(r, "x3", 0, 100, 907);
	f_fsync(r, "x3", false);
	f_sync(r);
	f_xattr(r, "x2", "user.big", 0, 0);
	f_fsync(r, "x2", false);
	f_xattr(r, "x1", "user.c", 3000, 908);	/* never fsync'd */
	f_chmod(r, "x3", 0640);
}

/* A roll-forward chain longer than a segment: hundreds of fsyncs, no sync. */
static void sc_long_chain(struct run *r)
{
	const char *f[] = { "l0", "l1", "l2", "l3" };

	for (int i = 0; i < 4; i++) {
		f_create(r, f[i]);
		f_write(r, f[i], 0, i == 0 ? 1000 : 8192, 1000 + i);
	}
	f_sync(r);
	for (int i = 0; i < 600; i++) {
		const char *fn = f[i % 4];
		uint64_t off = i % 4 == 0 ? rnd(r, 2000) : rnd(r, 12000);

		f_write(r, fn, off, 1 + rnd(r, 300), 1010 + i);
		f_fsync(r, fn, i % 7 == 3);
	}
}

/* Many files created after the checkpoint, each fsync'd (dentry marks). */
static void sc_many_new(struct run *r)
{
	char p[64];

	f_mkdir(r, "sub");
	f_sync(r);
	for (int i = 0; i < 80; i++) {
		snprintf(p, sizeof(p), "%snew%02d", i % 2 ? "sub/" : "", i);
		f_create(r, p);
		f_write(r, p, 0, 200 + rnd(r, 6000), 1700 + i);
		f_fsync(r, p, false);
		if (i % 9 == 4) {
			f_write(r, p, 100, 50, 1800 + i);
			f_fsync(r, p, false);
		}
	}
}

/* Preallocation (NEW_ADDR blocks), zero range and punch, with fsync. */
static void sc_falloc(struct run *r)
{
	f_create(r, "f");
	f_write(r, "f", 0, 8192, 1900);
	f_sync(r);
	f_falloc(r, "f", 0, 8192, 65536);			/* extends */
	f_fsync(r, "f", false);
	f_falloc(r, "f", FALLOC_FL_KEEP_SIZE, 73728, 131072);	/* past EOF */
	f_fsync(r, "f", false);
	f_write(r, "f", 100000, 4096, 1901);			/* into the preallocation */
	f_fsync(r, "f", false);
	f_falloc(r, "f", FALLOC_FL_ZERO_RANGE, 0, 4096);
	f_fsync(r, "f", false);
	f_punch(r, "f", 8192, 16384);
	f_fsync(r, "f", false);
	f_truncate(r, "f", 0);
	f_write(r, "f", 0, 3000, 1902);
	f_fsync(r, "f", false);
}

/*
 * One atomic write, as Android's SQLite does it: start, staged writes (a
 * checkpoint in between must not persist them), then commit or abort. The
 * model gets the committed content as a single new version, pushed before
 * the commit call (a cut during the commit may land either side) and
 * promised once the commit returned; staged states are never versions, so
 * a crash that exposes one fails the run.
 */
static void f_atomic(struct run *r, const char *path, bool commit, uint64_t seed)
{
	struct mpath *m;
	struct blob *nb;
	size_t osize, nsize;
	uint32_t ino;
	int ret;

	if (!op_begin(r, "atomic %s %s", commit ? "commit" : "abort", path))
		return;
	m = mp_find(r, path);
	osize = mp_cur(m)->b->size;
	nsize = MAX(osize, (size_t)24000);
	nb = blob_new(nsize);
	memset(nb->data, 0, nsize);
	memcpy(nb->data, mp_cur(m)->b->data, osize);
	rw_fill(nb->data + 1000, 6000, seed);
	rw_fill(nb->data + 16000, 8000, seed + 1);
	if (!resolve(r, path, &ino)) {
		blob_put(nb);
		op_end(r, true);
		return;
	}
	uf2fs_open(r->fs, ino, 0);
	ret = uf2fs_atomic_write(r->fs, ino, UF2FS_ATOMIC_START);
	if (ret)
		op_error(r, "atomic start", ret);
	if (!ret && uf2fs_write(r->fs, ino, nb->data + 1000, 6000, 1000) != 6000)
		op_error(r, "staged write", -EIO);
	if (!r->op_failed)
		uf2fs_sync(r->fs);	/* must not make staged data durable */
	if (!r->op_failed && uf2fs_write(r->fs, ino, nb->data + 16000, 8000, 16000) != 8000)
		op_error(r, "staged write", -EIO);
	if (commit && !r->op_failed) {
		mp_push(r, m, K_FILE, nb);
		nb = NULL;
		ret = uf2fs_atomic_write(r->fs, ino, UF2FS_ATOMIC_COMMIT);
		if (ret)
			op_error(r, "atomic commit", ret);
		else if (!power_cut(r))
			promise(r, m);
	} else if (!r->op_failed) {
		ret = uf2fs_atomic_write(r->fs, ino, UF2FS_ATOMIC_ABORT);
		if (ret)
			op_error(r, "atomic abort", ret);
	}
	uf2fs_release(r->fs, ino, 0);
	if (nb)
		blob_put(nb);
	op_end(r, true);
}

static void sc_atomic(struct run *r)
{
	f_create(r, "db");
	f_write(r, "db", 0, 12000, 2100);
	f_fsync(r, "db", false);
	f_create(r, "other");
	f_write(r, "other", 0, 5000, 2101);
	f_sync(r);
	f_atomic(r, "db", true, 2102);
	f_write(r, "other", 100, 300, 2103);
	f_fsync(r, "other", false);
	f_atomic(r, "db", false, 2104);
	f_atomic(r, "db", true, 2105);
	f_sync(r);
	f_atomic(r, "db", true, 2106);
}

static void f_chown(struct run *r, const char *path, uint32_t uid, uint32_t gid)
{
	struct uf2fs_attr a = { .uid = uid, .gid = gid }, out;
	uint32_t ino;
	int ret;

	if (!op_begin(r, "chown %s %u:%u", path, uid, gid))
		return;
	if (resolve(r, path, &ino)) {
		ret = uf2fs_setattr(r->fs, ino, &a, UF2FS_SET_UID | UF2FS_SET_GID, &out);
		if (ret)
			op_error(r, "setattr(uid, gid)", ret);
	}
	op_end(r, false);
}

static void f_setproj(struct run *r, const char *path, uint32_t projid)
{
	uint32_t ino;
	int ret;

	if (!op_begin(r, "set project %s %u", path, projid))
		return;
	if (resolve(r, path, &ino)) {
		ret = uf2fs_set_projid(r->fs, ino, projid);
		if (ret)
			op_error(r, "set project ID", ret);
	}
	op_end(r, false);
}

/*
 * On a quota_ino image (user, group, project): owners and project IDs
 * change around fsyncs, syncs, truncates, preallocation, unlinks and GC, so
 * that cuts land in roll-forward chains and checkpoints that carry quota
 * files. fsck.f2fs's recount after recovery checks them (check (e)).
 */
static void sc_quota(struct run *r)
{
	f_create(r, "q1");
	f_write(r, "q1", 0, 70000, 3000);
	f_chown(r, "q1", 1000, 1000);
	f_fsync(r, "q1", false);
	f_create(r, "q2");
	f_write(r, "q2", 0, 300000, 3001);
	f_chown(r, "q2", 1001, 1002);
	f_setproj(r, "q2", 5);
	f_sync(r);
	f_truncate(r, "q1", 5000);
	f_fsync(r, "q1", false);
	f_chown(r, "q2", 1003, 1002);
	f_write(r, "q2", 300000, 50000, 3002);
	f_fsync(r, "q2", false);
	f_falloc(r, "q1", 0, 8192, 65536);
	f_create(r, "q3");
	f_chown(r, "q3", 1004, 1004);
	f_write(r, "q3", 0, 20000, 3003);
	f_fsync(r, "q3", false);
	f_unlink(r, "q2");
	f_sync(r);
	f_write(r, "q3", 20000, 200000, 3004);
	f_gc(r);
	f_fsync(r, "q3", false);
	/* an orphan in the checkpoint: charged until the mount after the cut frees it */
	f_create(r, "q4");
	f_write(r, "q4", 0, 100000, 3005);
	f_chown(r, "q4", 1005, 1005);
	f_sync(r);
	r->orphan_blocks = 100000 / 4096;
	f_open(r, "q4");
	f_unlink(r, "q4");
	f_sync(r);
	f_write(r, "q3", 0, 4096, 3006);
	f_fsync(r, "q3", false);
}

/*
 * fscrypt. The "crypt" feature set (mkfs -O encrypt, pl_keyfile on every
 * mount, the verifying ones included) holds two keys: a v2 key and a v1 key
 * by descriptor. The setup makes x (v2, AES-256-XTS/AES-256-CTS, pad 32)
 * and a (v1, Adiantum, pad 16, DIRECT_KEY); the scenario writes through
 * both. After a cut every surviving file must decrypt to a state it had:
 * roll-forward recovery must keep the contexts and nonces of new inodes and
 * the ciphertext names of the dentries it re-links.
 */
static const uint8_t pl_desc[8] = { 0x0f, 0x5c, 0x41, 0x7e, 0x12, 0x34, 0x56, 0x78 };

static void pl_key(uint8_t key[64], int which)
{
	rw_fill(key, 64, 0xc0ffee00u + which);
}

static int pl_write_keyfile(const char *path)
{
	uint8_t k[64];
	FILE *fp;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || !(fp = fdopen(fd, "w")))
		return -1;
	pl_key(k, 2);
	for (int i = 0; i < 64; i++)
		fprintf(fp, "%02x", k[i]);
	fputc('\n', fp);
	for (int i = 0; i < 8; i++)
		fprintf(fp, "%02x", pl_desc[i]);
	fputc(':', fp);
	pl_key(k, 1);
	for (int i = 0; i < 64; i++)
		fprintf(fp, "%02x", k[i]);
	fputc('\n', fp);
	return fclose(fp);
}

/* Set a policy on the empty directory path (setup only: not a modelled op). */
static void f_policy(struct run *r, const char *path, int version, int cmode, int fmode,
		     int flags)
{
	struct uf2fs_fscrypt_policy p = { .version = version, .contents_mode = cmode,
					  .filenames_mode = fmode, .flags = flags };
	uint8_t key[64], id[16];
	uint32_t ino;
	int ret;

	if (!op_begin(r, "set_policy v%d %s", version, path))
		return;
	pl_key(key, version);
	if (version == 2) {
		ret = uf2fs_add_key(r->fs, key, sizeof(key), NULL, id);
		memcpy(p.key_spec, id, sizeof(id));
	} else {
		ret = uf2fs_add_key(r->fs, key, sizeof(key), pl_desc, id);
		memcpy(p.key_spec, pl_desc, sizeof(pl_desc));
	}
	if (ret)
		op_error(r, "add_key", ret);
	else if (resolve(r, path, &ino) && (ret = uf2fs_set_policy(r->fs, ino, &p)))
		op_error(r, "set_policy", ret);
	op_end(r, false);
}

/* The inode at path is encrypted under a policy of this version. */
static void f_expect_policy(struct run *r, const char *path, int version)
{
	struct uf2fs_fscrypt_policy p;
	uint32_t ino;
	int ret;

	if (!resolve(r, path, &ino))
		return;
	ret = uf2fs_get_policy(r->fs, ino, &p);
	if (ret || p.version != version)
		runfail(r, "%s: get_policy = %d, version %d, want version %d", path, ret,
			ret ? 0 : p.version, version);
}

static void sc_crypt_setup(struct run *r)
{
	f_mkdir(r, "x");
	f_policy(r, "x", 2, 1 /* AES-256-XTS */, 4 /* AES-256-CTS */, 0x3 /* PAD_32 */);
	f_mkdir(r, "a");
	f_policy(r, "a", 1, 9 /* Adiantum */, 9, 0x2 /* PAD_16 */ | 0x4 /* DIRECT_KEY */);
	f_create(r, "x/old");
	f_write(r, "x/old", 0, 20000, 2200);
	f_sync(r);
	f_expect_policy(r, "x/old", 2);
	f_expect_policy(r, "a", 1);
}

static void sc_crypt(struct run *r)
{
	char name[64];

	f_create(r, "x/small");
	f_write(r, "x/small", 0, 1, 2201);
	f_fsync(r, "x/small", false);
	f_create(r, "x/big");
	f_write(r, "x/big", 0, 1 << 20, 2202);
	f_fsync(r, "x/big", false);
	f_write(r, "x/old", 5000, 9000, 2203);		/* unaligned, over old blocks */
	f_fsync(r, "x/old", false);
	f_write(r, "x/big", 300000, 8192, 2204);
	f_truncate(r, "x/big", 100001);			/* zeroes the tail of a block */
	f_fsync(r, "x/big", false);
	f_create(r, "a/f");
	f_write(r, "a/f", 0, 20000, 2205);
	f_fsync(r, "a/f", true);
	f_mkdir(r, "x/sub");
	f_create(r, "x/sub/new-in-a-new-dir");
	f_write(r, "x/sub/new-in-a-new-dir", 0, 7000, 2206);
	f_fsync(r, "x/sub/new-in-a-new-dir", false);
	f_rename(r, "x/small", "x/renamed-to-a-name-longer-than-the-inline-dentry-area-"
		 "of-one-slot-so-that-it-takes-several-slots-and-more-than-149-bytes-of-"
		 "ciphertext-which-makes-its-no-key-name-a-hash-0123456789");
	f_sync(r);
	for (int i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "a/n%02d", i);
		f_create(r, name);
		f_write(r, name, 0, 100 + 300 * i, 2210 + i);
		f_fsync(r, name, false);
	}
	f_unlink(r, "a/f");
	f_write(r, "x/old", 20000, 4096, 2230);
	f_fsync(r, "x/old", true);
}

/* chattr +c on path (setup only: not a modelled op). */
static void f_compress(struct run *r, const char *path)
{
	uint32_t ino;
	int ret;

	if (!op_begin(r, "chattr +c %s", path))
		return;
	if (resolve(r, path, &ino) && (ret = uf2fs_set_flags(r->fs, ino, 0x4 /* FS_COMPR_FL */)))
		op_error(r, "set_flags", ret);
	op_end(r, false);
}

/*
 * Compressed files in encrypted directories (its own image: encrypt and
 * compression): the +c directories x (v2 XTS) and a (v1 Adiantum
 * DIRECT_KEY) hold files whose clusters are compressed, then encrypted.
 * Overwrites rewrite compressed clusters, a truncate cuts one (decompress,
 * cut, recompress); after a cut each file must decrypt and decompress to a
 * state it had.
 */
static void sc_crypt_compr_setup(struct run *r)
{
	f_mkdir(r, "x");
	f_policy(r, "x", 2, 1 /* AES-256-XTS */, 4 /* AES-256-CTS */, 0x3 /* PAD_32 */);
	f_compress(r, "x");
	f_mkdir(r, "a");
	f_policy(r, "a", 1, 9 /* Adiantum */, 9, 0x2 /* PAD_16 */ | 0x4 /* DIRECT_KEY */);
	f_compress(r, "a");
	f_create(r, "x/old");
	f_write_text(r, "x/old", 0, 65536, 2300);
	f_sync(r);
}

static void sc_crypt_compr(struct run *r)
{
	f_create(r, "x/c");
	f_write_text(r, "x/c", 0, 200000, 2301);
	f_fsync(r, "x/c", false);
	f_write_text(r, "x/old", 5000, 9000, 2302);		/* inside compressed clusters */
	f_fsync(r, "x/old", false);
	f_truncate(r, "x/c", 100001);			/* inside a cluster */
	f_fsync(r, "x/c", false);
	f_create(r, "a/f");
	f_write_text(r, "a/f", 0, 50000, 2303);
	f_fsync(r, "a/f", true);
	f_write_text(r, "a/f", 50000, 30000, 2304);	/* append */
	f_sync(r);
	f_write_text(r, "x/old", 0, 32768, 2305);
	f_fsync(r, "x/old", false);
	f_write(r, "a/f", 10000, 3000, 2306);
	f_fsync(r, "a/f", true);
}

static const struct scenario scenarios[] = {
	{ "fsync-seq", "create/write/fsync sequences, 1 B to 3 MiB", 64, NULL, sc_fsync_seq },
	{ "inline-grow", "inline file growing past the inline area", 64, NULL, sc_inline_grow },
	{ "rename-over", "rename over an existing file, fsync/sync", 64, NULL, sc_rename_over },
	{ "dir-growth", "hundreds of entries, inline dir to blocks, levels", 64, NULL,
	  sc_dir_growth },
	{ "gc", "small image filled, every other file deleted, writes need GC", 64, sc_gc_setup,
	  sc_gc },
	{ "cp-mid", "a checkpoint in the middle of writes", 64, NULL, sc_cp_mid },
	{ "orphan", "unlink of open files, crash before release", 64, NULL, sc_orphan },
	{ "small-fsyncs", "many small fsyncs between checkpoints", 64, NULL, sc_small_fsyncs },
	{ "clean-mount", "fsync after mounting a cleanly unmounted image", 64,
	  sc_clean_mount_setup, sc_clean_mount },
	{ "sparse", "a sparse file with blocks under an indirect node", 64, NULL, sc_sparse },
	{ "xattr", "mode and xattrs (inline, xattr node) with fsync", 64, NULL, sc_xattr },
	{ "long-chain", "600 fsyncs without a checkpoint: a chain past a segment", 64, NULL,
	  sc_long_chain },
	{ "many-new", "80 new files, each fsync'd (dentry marks)", 64, NULL, sc_many_new },
	{ "falloc", "preallocation, zero range, punch, truncate to 0", 64, NULL, sc_falloc },
	{ "atomic", "atomic writes: commit, abort, a checkpoint while staged", 64, NULL,
	  sc_atomic },
	{ "quota", "owners and project IDs changing on a quota_ino image", 64, NULL, sc_quota,
	  "extra_attr,inode_checksum,quota,project_quota", false },
	{ "crypt", "fscrypt v1 and v2 directories: writes, fsyncs, new dir, rename", 64,
	  sc_crypt_setup, sc_crypt, NULL, true },
	{ "crypt-compr", "compressed files in encrypted dirs: overwrite, cut cluster", 64,
	  sc_crypt_compr_setup, sc_crypt_compr, "extra_attr,inode_checksum,encrypt,compression",
	  true },
};
#define NR_SCENARIOS ((int)ARRAY_LEN(scenarios))

/* Images of scenarios with their own features, by scenario index. */
static struct image scn_img[NR_SCENARIOS];

static struct image *scn_base(const struct scenario *s, int fi)
{
	if (s->mkfs)
		return &scn_img[s - scenarios];
	return base_image(s->mb, fi);
}

struct prepared {
	struct image img;	/* the scenario's starting image */
	struct run setup;	/* its model (all promised) */
	uint64_t W;
	struct bound *bounds;
	unsigned int nb;
	uint64_t base_free;
	char gc_line[128];
	bool ok;
};

static void run_scenario(struct run *r, struct prepared *pr)
{
	struct uf2fs_options o = base_opts(r->f);
	int ret;

	model_copy_current(r, &pr->setup);
	o.backend = UF2FS_BACKEND_RAM;
	o.ram_image = pr->img.data;
	o.ram_size = pr->img.size;
	o.power_cut_model = true;
	o.fault_cut_at = r->dry ? UINT64_MAX : r->cut_at;
	o.fault_tear = r->tear;
	r->opno = 0;
	ret = uf2fs_mount(&o, &r->fs);
	if (ret) {
		runfail(r, "mount (rw, power-cut model) failed: %d: %s", ret,
			uf2fs_last_error(NULL));
		r->fs = NULL;
		return;
	}
	op_begin(r, "mount");
	op_end(r, false);
	r->s->fn(r);
}

static void one_cut(const struct scenario *s, const struct featset *f, struct prepared *pr,
		    uint64_t n, bool tear, FILE *log, int *fails)
{
	struct run r;
	void *img = NULL;
	size_t size = 0;
	int ret;

	run_init(&r, s, f, log);
	r.cut_at = n;
	r.tear = tear;
	run_scenario(&r, pr);
	if (r.fs) {
		ret = uf2fs_test_persisted_image(r.fs, &img, &size);
		uf2fs_test_crash(r.fs);
		r.fs = NULL;
		if (ret)
			runfail(&r, "uf2fs_test_persisted_image = %d", ret);
		else
			check_persisted(&r, img, size, pr->base_free);
		free(img);
	}
	if (verbose)
		fprintf(log, "run %s [%s] N=%" PRIu64 " %s: cut during op #%d (%s), %u promises, "
			"%d failures\n", s->name, f->label, n, tear ? "tear" : "clean", r.cut_op,
			r.cut_op ? r.cut_desc : "-", r.promises, r.fails);
	if (r.fails > 12)
		fprintf(log, "FAIL ... %d more findings in this run\n", r.fails - 12);
	if (r.fails)
		fprintf(log, "  rerun: UF2FS_POWERLOSS_ONLY=%s:%s:%" PRIu64 ":%d\n", s->name,
			f->label, n, tear);
	*fails += r.fails ? 1 : 0;
	model_release(&r);
}

/*
 * One run in a child of the worker: a crash (or a sanitizer report) in one
 * run is a failure of that run, and the worker goes on with the next.
 */
static int cut_in_child(const struct scenario *s, const struct featset *f, struct prepared *pr,
			uint64_t n, bool tear, FILE *log)
{
	pid_t pid;
	int st, fails = 0;

	if (only_one) {
		one_cut(s, f, pr, n, tear, log, &fails);
		return fails;
	}
	fflush(log);
	pid = fork();
	if (pid == 0) {
		one_cut(s, f, pr, n, tear, log, &fails);
		fflush(log);
		_exit(fails ? 3 : 0);	/* 1 is what a sanitizer's report exits with */
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0) {
		one_cut(s, f, pr, n, tear, log, &fails);	/* no fork: run it here */
		return fails;
	}
	if (WIFSIGNALED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 3)) {
		fprintf(log, "FAIL %s [%s] N=%" PRIu64 " %s: the run died (%s %d; a sanitizer "
			"report, if any, is on stderr)\n"
			"  rerun: UF2FS_POWERLOSS_ONLY=%s:%s:%" PRIu64 ":%d\n", s->name, f->label, n,
			tear ? "tear" : "clean", WIFSIGNALED(st) ? "signal" : "exit status",
			WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), s->name, f->label, n,
			tear);
		fflush(log);
		return 1;
	}
	return WEXITSTATUS(st) ? 1 : 0;
}

/* /// Preparation: setup image, dry run /// */

static bool prepare(const struct scenario *s, int fi, struct prepared *pr, FILE *log)
{
	const struct featset *f = &featsets[fi];
	struct run r;
	struct statvfs st;
	char path[PATH_MAX];
	char stats[UF2FS_IOC_STATS_SIZE];

	memset(pr, 0, sizeof(*pr));
	run_init(&pr->setup, s, f, log);
	pr->setup.setup = true;
	if (s->setup) {
		struct uf2fs_options o = base_opts(f);
		int ret;

		snprintf(path, sizeof(path), "%s/setup-%s-%s.img", rw_tmp, s->name, f->label);
		if (write_image(path, scn_base(s, fi)->data, scn_base(s, fi)->size))
			return false;
		o.device = path;
		ret = uf2fs_mount(&o, &pr->setup.fs);
		if (ret) {
			fprintf(log, "setup mount failed: %d\n", ret);
			return false;
		}
		s->setup(&pr->setup);
		ret = uf2fs_unmount(pr->setup.fs);
		pr->setup.fs = NULL;
		if (ret || pr->setup.fails) {
			fprintf(log, "setup of %s failed (unmount %d)\n", s->name, ret);
			return false;
		}
		if (!fsck_clean(path, log)) {
			fprintf(log, "setup image of %s is not fsck-clean\n", s->name);
			return false;
		}
		pr->img = read_image(path);
		unlink(path);
	} else {
		pr->img.size = scn_base(s, fi)->size;
		pr->img.data = malloc(pr->img.size);
		memcpy(pr->img.data, scn_base(s, fi)->data, pr->img.size);
	}
	/* the dry run */
	run_init(&r, s, f, log);
	r.dry = true;
	run_scenario(&r, pr);
	if (!r.fs || r.fails) {
		model_release(&r);
		return false;
	}
	pr->W = uf2fs_test_writes(r.fs);
	uf2fs_format_stats(r.fs, stats, sizeof(stats));
	{
		char *g = strstr(stats, "  gc ");

		if (g)
			snprintf(pr->gc_line, sizeof(pr->gc_line), "%.*s", (int)strcspn(g, "\n"), g);
	}
	uf2fs_test_crash(r.fs);
	pr->bounds = r.bounds;
	pr->nb = r.nb;
	model_release(&r);
	/* free blocks of the starting image, for the space check */
	{
		struct uf2fs_options o = base_opts(f);
		struct uf2fs *fs;

		o.backend = UF2FS_BACKEND_RAM;
		o.ram_image = pr->img.data;
		o.ram_size = pr->img.size;
		o.read_only = true;
		if (uf2fs_mount(&o, &fs))
			return false;
		uf2fs_statfs(fs, &st);
		pr->base_free = st.f_bfree;
		uf2fs_unmount(fs);
	}
	pr->ok = true;
	return true;
}

static void prepared_free(struct prepared *pr)
{
	free(pr->img.data);
	free(pr->bounds);
	model_release(&pr->setup);
	memset(pr, 0, sizeof(*pr));
}

/* /// Choosing cut points /// */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t uniq(uint64_t *v, size_t n, uint64_t max)
{
	size_t k = 0;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (v[i] >= 1 && v[i] <= max && (!k || v[k - 1] != v[i]))
			v[k++] = v[i];
	return k;
}

/* 1..W+1 (W+1: no cut, the crash comes after the last operation). */
static uint64_t *cut_points(struct prepared *pr, size_t *out)
{
	uint64_t W = pr->W, max = W + 1;
	uint64_t *v, *fl;
	size_t n = 0, nf = 0;

	if (all_points || max <= target_points) {
		v = malloc(max * sizeof(*v));
		for (uint64_t i = 1; i <= max; i++)
			v[n++] = i;
		*out = n;
		return v;
	}
	v = malloc((target_points + 16) * sizeof(*v) + 3 * pr->nb * sizeof(*v));
	fl = malloc((3 * pr->nb + 1) * sizeof(*fl));
	v[n++] = 1;
	v[n++] = 2;
	v[n++] = W - 1;
	v[n++] = W;
	v[n++] = max;
	/* around the end of every fsync/sync: the flush, the write before, the next */
	for (unsigned int i = 0; i < pr->nb; i++) {
		if (!pr->bounds[i].flush)
			continue;
		fl[nf++] = pr->bounds[i].writes - 1;
		fl[nf++] = pr->bounds[i].writes;
		fl[nf++] = pr->bounds[i].writes + 1;
	}
	nf = uniq(fl, nf, max);
	{
		size_t want = target_points * 3 / 5;

		for (size_t i = 0; i < want && i < nf; i++)
			v[n++] = fl[nf <= want ? i : i * nf / want];
	}
	n = uniq(v, n, max);
	/* spread the rest evenly */
	for (uint64_t k = 1; n < target_points && k <= target_points; k++) {
		uint64_t p = k * max / (target_points + 1);

		v[n++] = p ? p : 1;
		n = uniq(v, n, max);
	}
	free(fl);
	*out = n;
	return v;
}

/* /// Running a scenario over its cut points, in worker processes /// */

static int totals_runs, totals_fail_runs, totals_points;

static int scenario_feature(const struct scenario *s, int fi, FILE *summary)
{
	const struct featset *f = &featsets[fi];
	struct prepared pr;
	struct timespec t0, t1;
	uint64_t *pts;
	size_t npts;
	int fails = 0, runs = 0;
	pid_t pids[64];
	char outs[64][PATH_MAX];

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!prepare(s, fi, &pr, stdout)) {
		fprintf(summary, "%-13s [%-5s] preparation (setup or dry run) FAILED\n", s->name,
			f->label);
		prepared_free(&pr);
		return 1;
	}
	pts = cut_points(&pr, &npts);
	if (verbose)
		for (unsigned int i = 0; i < pr.nb; i++)
			printf("dry run: op #%u %-40s writes so far %" PRIu64 "\n", i + 1,
			       pr.bounds[i].desc, pr.bounds[i].writes);
	if (only_one) {
		npts = 1;
		pts[0] = only_n;
	}
	fflush(stdout);
	for (unsigned int j = 0; j < jobs; j++) {
		snprintf(outs[j], sizeof(outs[j]), "%s/worker%u.log", rw_tmp, j);
		pids[j] = fork();
		if (pids[j] == 0) {
			FILE *log = fopen(outs[j], "w");
			int wf = 0, wr = 0;

			snprintf(wenv.img_path, sizeof(wenv.img_path), "%s/w%u.img", rw_tmp, j);
			for (size_t i = j; i < npts; i += jobs) {
				for (int tear = 0; tear < 2; tear++) {
					if (only_one && tear != only_tear)
						continue;
					fprintf(log, "START %" PRIu64 " %d\n", pts[i], tear);
					fflush(log);
					wf += cut_in_child(s, f, &pr, pts[i], tear, log);
					wr++;
				}
			}
			fprintf(log, "RESULT %d %d\n", wr, wf);
			fclose(log);
			unlink(wenv.img_path);
			_exit(0);
		}
	}
	for (unsigned int j = 0; j < jobs; j++) {
		int st, wr = -1, wf = 0;
		char line[4096], last_start[64] = "";
		FILE *log;

		waitpid(pids[j], &st, 0);
		log = fopen(outs[j], "r");
		while (log && fgets(line, sizeof(line), log)) {
			if (!strncmp(line, "START ", 6)) {
				snprintf(last_start, sizeof(last_start), "%.*s",
					 (int)strcspn(line + 6, "\n"), line + 6);
				continue;
			}
			if (sscanf(line, "RESULT %d %d", &wr, &wf) == 2)
				continue;
			fputs(line, stdout);
		}
		if (log)
			fclose(log);
		unlink(outs[j]);
		if (!WIFEXITED(st) || WEXITSTATUS(st) || wr < 0) {
			char *sp = strchr(last_start, ' ');

			if (sp)
				*sp = ':';
			printf("FAIL %s [%s] worker %u died (%s %d) during the run N/tear = %s\n"
			       "  rerun: UF2FS_POWERLOSS_ONLY=%s:%s:%s\n", s->name, f->label, j,
			       WIFSIGNALED(st) ? "signal" : "exit",
			       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), last_start,
			       s->name, f->label, last_start);
			wf++;
		}
		if (wr > 0)
			runs += wr;
		fails += wf;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(summary, "%-13s [%-5s] W=%-6" PRIu64 " %3zu cut points x 2 = %4d runs, "
		"%d failed  %5.1fs%s%s\n", s->name, f->label, pr.W, npts, runs, fails,
		(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
		pr.gc_line[0] && !strstr(pr.gc_line, " 0 segments") ? "  " : "",
		pr.gc_line[0] && !strstr(pr.gc_line, " 0 segments") ? pr.gc_line + 2 : "");
	fflush(summary);
	totals_runs += runs;
	totals_fail_runs += fails;
	totals_points += npts;
	free(pts);
	prepared_free(&pr);
	return fails;
}

static char *summary_buf;
static size_t summary_len;
static FILE *summary;

static void t_scenario(void **state)
{
	const struct scenario *s = *state;
	int fails = 0;

	for (int fi = 0; fi < NR_FEATS; fi++) {
		if (only_features && strcmp(only_features, featsets[fi].label))
			continue;
		/* an image of its own: once, under "extra" (or "crypt" when encrypted) */
		if (s->mkfs && strcmp(featsets[fi].label, s->encrypt ? "crypt" : "extra"))
			continue;
		if (featsets[fi].encrypt != s->encrypt)
			continue;
		fails += scenario_feature(s, fi, summary);
	}
	if (fails)
		fail_msg("%s: %d failed runs (details above)", s->name, fails);
}

int main(int argc, char **argv)
{
	struct CMUnitTest tests[NR_SCENARIOS];
	int ntests = 0, failures;
	const char *e;
	struct timespec t0, t1;
	char img[PATH_MAX];

	(void)argc;
	reexec_with_thp(argv);
	if (system("command -v mkfs.f2fs >/dev/null && command -v fsck.f2fs >/dev/null") != 0) {
		printf("SKIP: f2fs-tools (mkfs.f2fs, fsck.f2fs) not installed\n");
		return 77;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	e = getenv("UF2FS_POWERLOSS_ALL");
	all_points = e && *e == '1';
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	target_points = 10;	/* sanitizer builds are ~5x slower per run */
#endif
	e = getenv("UF2FS_POWERLOSS_POINTS");
	if (e && *e)
		target_points = MAX(8, atoi(e));
	jobs = sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
	jobs = MIN(jobs, 8);
	e = getenv("UF2FS_POWERLOSS_JOBS");
	if (e && *e)
		jobs = MIN(MAX(atoi(e), 1), 64);
	only_scenario = getenv("UF2FS_POWERLOSS_SCENARIO");
	if (only_scenario && !*only_scenario)
		only_scenario = NULL;
	only_features = getenv("UF2FS_POWERLOSS_FEATURES");
	if (only_features && !*only_features)
		only_features = NULL;
	e = getenv("UF2FS_POWERLOSS_VERBOSE");
	verbose = e && *e == '1';
	e = getenv("UF2FS_POWERLOSS_ONLY");
	if (e && *e) {
		if (sscanf(e, "%63[^:]:%63[^:]:%" SCNu64 ":%d", only_scn, only_feat, &only_n,
			   &only_tear) != 4) {
			printf("UF2FS_POWERLOSS_ONLY=scenario:features:N:tear(0|1)\n");
			return 2;
		}
		only_one = true;
		only_features = only_feat;
		verbose = true;
		jobs = 1;
	}
	if (!getenv("UF2FS_TMPDIR") && !access("/dev/shm", W_OK))
		setenv("UF2FS_TMPDIR", "/dev/shm", 1);
	rw_tmp_init("powerloss");
	snprintf(pl_keyfile, sizeof(pl_keyfile), "%s/keys", rw_tmp);
	if (pl_write_keyfile(pl_keyfile)) {
		printf("cannot write %s\n", pl_keyfile);
		return 1;
	}
	summary = open_memstream(&summary_buf, &summary_len);
	for (int si = 0; si < NR_SIZES; si++) {
		for (int fi = 0; fi < NR_FEATS; fi++) {
			snprintf(img, sizeof(img), "%s/base-%u-%s.img", rw_tmp, base_sizes[si],
				 featsets[fi].label);
			if (rw_mkfs(img, base_sizes[si], featsets[fi].mkfs)) {
				printf("mkfs.f2fs failed for %s\n", img);
				return 1;
			}
			base_img[si][fi] = read_image(img);
			if (!base_img[si][fi].data) {
				printf("cannot read the base image %s\n", img);
				return 1;
			}
			unlink(img);
		}
	}
	for (int i = 0; i < NR_SCENARIOS; i++) {
		if (!scenarios[i].mkfs)
			continue;
		snprintf(img, sizeof(img), "%s/base-%s.img", rw_tmp, scenarios[i].name);
		if (rw_mkfs(img, scenarios[i].mb, scenarios[i].mkfs)) {
			printf("mkfs.f2fs failed for %s\n", img);
			return 1;
		}
		scn_img[i] = read_image(img);
		unlink(img);
		if (!scn_img[i].data)
			return 1;
	}
	for (int i = 0; i < NR_SCENARIOS; i++) {
		const char *want = only_one ? only_scn : only_scenario;

		if (want && (only_one ? strcmp(scenarios[i].name, want) :
				 !strstr(scenarios[i].name, want)))
			continue;
		tests[ntests].name = scenarios[i].name;
		tests[ntests].test_func = t_scenario;
		tests[ntests].setup_func = NULL;
		tests[ntests].teardown_func = NULL;
		tests[ntests].initial_state = (void *)&scenarios[i];
		ntests++;
	}
	printf("power-loss runner: %s cut points, %u worker(s)\n", all_points ? "all" : "sampled",
	       jobs);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	failures = _cmocka_run_group_tests("powerloss", tests, ntests, NULL, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fclose(summary);
	printf("\n%s", summary_buf ? summary_buf : "");
	printf("TOTAL: %d scenario runs over %d cut points x 2 variants; %d failed runs; "
	       "%.1fs\n", totals_runs, totals_points, totals_fail_runs,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	free(summary_buf);
	for (int si = 0; si < NR_SIZES; si++)
		for (int fi = 0; fi < NR_FEATS; fi++)
			free(base_img[si][fi].data);
	for (int i = 0; i < NR_SCENARIOS; i++)
		free(scn_img[i].data);
	rw_tmp_done(failures);
	return failures ? 1 : 0;
}
