// SPDX-License-Identifier: GPL-2.0
/*
 * Random-operation exerciser of the read-write library API, in the spirit of
 * fsx and fsstress: a seeded PRNG drives thousands of mixed operations on a
 * few files and directories, and an in-memory model (test_rw_common.h)
 * predicts every result, errors included.
 *
 * Operations: write (1 byte to 2 MiB, inline-sized to beyond 1 MiB, at any
 * offset), truncate up and down, punch hole, zero range, fallocate (0 and
 * KEEP_SIZE), collapse range and insert range (errors too), create, mkdir, symlink, link, unlink, rmdir, rename (plain,
 * over files and empty directories, across directories, RENAME_NOREPLACE,
 * RENAME_EXCHANGE), chmod/chown, unlink of an open file, bulk creates and
 * deletes (directories past the inline size), fsync, and periodically
 * uf2fs_sync and an unmount + fsck + read-write remount. After each data
 * operation the affected file is compared with the model (a window around
 * the change, the tail, the whole file when small); at every sync point the
 * whole tree is. At the end: unmount, fsck.f2fs clean, read-only remount,
 * full verify.
 *
 * Env:
 *   UF2FS_STRESS_OPS   operations (default 3000)
 *   UF2FS_SEED         the seed (default: from the clock; always printed)
 *   UF2FS_STRESS_MB    image size in MiB (default 1024, a sparse file)
 *   UF2FS_STRESS_MAXSIZE  largest file in bytes (default 4 MiB)
 *   UF2FS_STRESS_VERBOSE=1 print every operation
 *   UF2FS_STRESS_AVOID  comma list of known bugs to steer clear of (see avoid())
 * On failure the seed, the operation number and the last operations are
 * printed; UF2FS_SEED=<seed> UF2FS_STRESS_OPS=<n> reproduces the run.
 */
#include "test_rw_common.h"

#include <time.h>

static uint64_t rng;
static uint64_t seed;
static unsigned long nops, opno;
static uint64_t maxsize;
static bool verbose;
static struct uf2fs *fs;
static struct model M;
static char img[PATH_MAX];
static struct uf2fs_options mopts;

/* the last operations, for the failure report */
#define HIST 48
static char hist[HIST][320];

/*
 * UF2FS_STRESS_AVOID=a,b: steer clear of known, reported library bugs so that
 * a run can find the next one. Never set by make check.
 *   truncup-inline   growing an inline file past the inline size by truncate
 *   rmdir            rmdir and renames over directories (inline dentry eviction)
 *   orphan-getattr   getattr of an evicted orphan that was in a checkpoint
 */
static bool avoid(const char *what)
{
	const char *e = getenv("UF2FS_STRESS_AVOID");

	return e && strstr(e, what);
}

static uint64_t rnd(void)
{
	return rw_splitmix(&rng);
}

static uint64_t rr(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static void note(const char *fmt, ...)
{
	va_list ap;
	char *h = hist[opno % HIST];
	int n = snprintf(h, sizeof(hist[0]), "#%lu ", opno);

	va_start(ap, fmt);
	vsnprintf(h + n, sizeof(hist[0]) - n, fmt, ap);
	va_end(ap);
	if (verbose)
		printf("%s\n", h);
	snprintf(rw_context, sizeof(rw_context),
		 "seed %" PRIu64 ", op %lu: %s  (reproduce: UF2FS_SEED=%" PRIu64
		 " UF2FS_STRESS_OPS=%lu)", seed, opno, h, seed, nops);
}

static void dump_history(void)
{
	print_error("last operations (seed %" PRIu64 "):\n", seed);
	for (unsigned long i = opno >= HIST ? opno - HIST + 1 : 0; i <= opno; i++)
		if (hist[i % HIST][0])
			print_error("  %s\n", hist[i % HIST]);
}

#define FAILX(...)                                                                    \
	do {                                                                          \
		dump_history();                                                       \
		RW_FAIL(__VA_ARGS__);                                                 \
	} while (0)

#define EXPECT(call, want)                                                            \
	do {                                                                          \
		long long _g = (long long)(call), _w = (long long)(want);             \
		if (_g != _w)                                                         \
			FAILX("%s = %lld (%s), expected %lld (%s)", #call, _g,        \
			      _g < 0 ? strerror((int)-_g) : "-", _w,                  \
			      _w < 0 ? strerror((int)-_w) : "-");                     \
	} while (0)

static void mount_fs(bool ro)
{
	struct uf2fs_options o = mopts;
	int ret;

	o.read_only = ro;
	ret = uf2fs_mount(&o, &fs);
	if (ret)
		FAILX("mount(%s) = %d: %s", ro ? "ro" : "rw", ret, uf2fs_last_error(NULL));
}

static void full_verify(const char *when)
{
	if (!rw_verify_model(fs, &M, when))
		FAILX("the filesystem differs from the model (%s)", when);
}

/* /// Picking things /// */

/* A random model entry matching the filter, or NULL. */
static const char *pick(bool (*want)(const struct mnode *n))
{
	size_t cnt = 0, k;

	for (size_t i = 0; i < M.n; i++)
		if (want(M.d[i].n))
			cnt++;
	if (!cnt)
		return NULL;
	k = rr(cnt);
	for (size_t i = 0; i < M.n; i++)
		if (want(M.d[i].n) && !k--)
			return M.d[i].path;
	return NULL;
}

static bool is_reg(const struct mnode *n) { return S_ISREG(n->mode); }
static bool is_dir(const struct mnode *n) { return S_ISDIR(n->mode); }
static bool is_nondir(const struct mnode *n) { return !S_ISDIR(n->mode); }
static bool is_any(const struct mnode *n) { return true; }

/* A directory path ("" is the root), biased to the root and shallow dirs. */
static void pick_dir(char *out, size_t size)
{
	const char *d = rr(4) ? pick(is_dir) : NULL;

	snprintf(out, size, "%s", d ? d : "");
}

/* Names from a small set, so that creates collide and renames replace. */
static void pick_name(char *out, size_t size)
{
	unsigned int k = rr(48);
	int pad = (k * 7) % 41;

	snprintf(out, size, "e%u%.*s", k, pad, "_________________________________________");
}

static void join(char *out, size_t size, const char *dir, const char *name)
{
	snprintf(out, size, "%s%s%s", dir, *dir ? "/" : "", name);
}

static size_t count_children(const char *dir)
{
	size_t c = 0;
	size_t dl = strlen(dir);

	for (size_t i = 0; i < M.n; i++)
		if (!strncmp(M.d[i].path, dir, dl) && M.d[i].path[dl] == '/')
			c++;
	return c;
}

static int depth(const char *p)
{
	int d = *p ? 1 : 0;

	for (; *p; p++)
		d += *p == '/';
	return d;
}

static size_t total_bytes(void)
{
	size_t t = 0;

	for (size_t i = 0; i < M.n; i++)
		if (S_ISREG(M.d[i].n->mode))
			t += M.d[i].n->size;	/* hard links count twice: fine, a bound */
	return t;
}

static uint32_t ino_of(const char *p)
{
	uint32_t ino;
	int ret = uf2fs_resolve(fs, p, &ino);

	if (ret)
		FAILX("resolve(%s) = %d", p, ret);
	return ino;
}

/* /// Checking one file /// */

static void check_range(const char *p, uint32_t ino, const struct mnode *n, uint64_t off,
			uint64_t len)
{
	static uint8_t *buf;
	ssize_t r, want;

	if (!buf)
		buf = malloc(maxsize + 8192);
	if (off > n->size)
		off = n->size;
	if (off + len > n->size + 4096)
		len = n->size + 4096 - off;
	want = off + len > n->size ? (ssize_t)(n->size - off) : (ssize_t)len;
	r = uf2fs_read(fs, ino, buf, len, off);
	if (r != want)
		FAILX("%s: read(%" PRIu64 ", %" PRIu64 ") = %zd, want %zd (size %zu)", p, off, len, r,
		      want, n->size);
	if (want > 0 && memcmp(buf, n->data + off, want)) {
		ssize_t i = 0;

		while (buf[i] == n->data[off + i])
			i++;
		FAILX("%s: content differs at byte %" PRIu64 " (block %" PRIu64 "): 0x%02x, want "
		      "0x%02x (size %zu)", p, off + i, (off + i) / 4096, buf[i], n->data[off + i],
		      n->size);
	}
}

static void check_file(const char *p, uint64_t off, uint64_t len)
{
	struct mnode *n = model_get(&M, p);
	uint32_t ino = ino_of(p);
	struct uf2fs_attr a;
	uint64_t lo = off > 8192 ? off - 8192 : 0;

	EXPECT(uf2fs_getattr(fs, ino, &a), 0);
	if (a.size != n->size)
		FAILX("%s: size %" PRIu64 ", model %zu", p, a.size, n->size);
	if (n->size <= (256 << 10)) {
		check_range(p, ino, n, 0, n->size + 4096);
		return;
	}
	check_range(p, ino, n, lo, len + 16384);
	check_range(p, ino, n, n->size > 8192 ? n->size - 8192 : 0, 12288);
	check_range(p, ino, n, rr(n->size), 65536);
}

/* /// Operations /// */

static uint64_t rand_len(void)
{
	unsigned int c = rr(100);

	if (c < 35)
		return 1 + rr(100);		/* inline-sized */
	if (c < 60)
		return 1 + rr(4096);
	if (c < 85)
		return 1 + rr(65536);
	if (c < 97)
		return 1 + rr(1 << 20);
	return (1 << 20) + rr(1 << 20);		/* > 1 MiB */
}

static uint64_t rand_off(const struct mnode *n)
{
	unsigned int c = rr(10);

	if (c < 3)
		return n->size ? rr(n->size) : 0;		/* inside */
	if (c < 5)
		return n->size;					/* append */
	if (c < 6)
		return n->size + rr(3 * 4096);			/* a small gap */
	if (c < 8)
		return rr(4096 * 3);				/* the head */
	return rr(maxsize);
}

static void op_write(void)
{
	const char *p = pick(is_reg);
	static uint8_t *buf;
	struct mnode *n;
	uint64_t off, len;
	ssize_t r;

	if (!p)
		return;
	if (!buf)
		buf = malloc(2 << 20);
	n = model_get(&M, p);
	off = rand_off(n);
	len = rand_len();
	if (off > maxsize - 1)
		off = maxsize - 1;
	if (off + len > maxsize)
		len = maxsize - off;
	if (total_bytes() + len > 96ull << 20)
		return;
	rw_fill(buf, len, rnd());
	note("write %s off %" PRIu64 " len %" PRIu64 " (size %zu)", p, off, len, n->size);
	r = uf2fs_write(fs, ino_of(p), buf, len, off);
	if (r != (ssize_t)len)
		FAILX("write = %zd (%s)", r, r < 0 ? strerror(-r) : "short");
	mnode_write(n, off, buf, len);
	check_file(p, off, len);
}

static void op_truncate(void)
{
	const char *p = pick(is_reg);
	struct uf2fs_attr a = { 0 };
	struct mnode *n;
	uint64_t size;
	unsigned int c = rr(6);

	if (!p)
		return;
	n = model_get(&M, p);
	if (c == 0)
		size = 0;
	else if (c == 1)
		size = n->size ? rr(n->size) : 0;
	else if (c == 2)
		size = n->size + rr(65536);
	else if (c == 3)
		size = rr(4000);
	else if (c == 4)
		size = (n->size / 4096) * 4096 + (rr(2) ? 0 : rr(4096));
	else
		size = rr(maxsize);
	if (size > maxsize)
		size = maxsize;
	if (avoid("truncup-inline") && n->size <= 3500 && size > n->size && size > 3400)
		return;
	a.size = size;
	note("truncate %s %" PRIu64 " (size %zu)", p, size, n->size);
	EXPECT(uf2fs_setattr(fs, ino_of(p), &a, UF2FS_SET_SIZE, NULL), 0);
	mnode_truncate(n, size);
	check_file(p, size > 4096 ? size - 4096 : 0, 8192);
}

static void op_fallocate(void)
{
	static const int modes[] = {
		0, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, FALLOC_FL_ZERO_RANGE,
		FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
	};
	const char *p = pick(is_reg);
	struct mnode *n;
	uint64_t off, len;
	int mode;

	if (!p)
		return;
	n = model_get(&M, p);
	mode = modes[rr(6)];
	off = rand_off(n);
	len = 1 + rand_len();
	if (off > maxsize - 1)
		off = maxsize - 1;
	if (off + len > maxsize)
		len = maxsize - off;
	note("fallocate %s mode 0x%x off %" PRIu64 " len %" PRIu64 " (size %zu)", p, mode, off,
	     len, n->size);
	EXPECT(uf2fs_fallocate(fs, ino_of(p), mode, off, len), 0);
	if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
		mnode_zero(n, off, len);
	if (!(mode & FALLOC_FL_KEEP_SIZE) && off + len > n->size)
		mnode_truncate(n, off + len);
	check_file(p, off, len);
}

/* COLLAPSE_RANGE or INSERT_RANGE, mostly valid, sometimes misaligned or out of range. */
static bool has_data(const struct mnode *n) { return S_ISREG(n->mode) && n->size > 4096; }

static void op_shift(void)
{
	const char *p = pick(rr(8) ? has_data : is_reg);
	bool ins = rr(2);
	struct mnode *n;
	uint64_t blocks, off, len;
	unsigned int c = rr(10);
	int want = 0;

	if (!p)
		return;
	n = model_get(&M, p);
	blocks = (n->size + 4095) / 4096;
	if (c < 7)
		off = rr(blocks + 1) * 4096;
	else if (c < 8)
		off = 0;
	else
		off = rr(n->size + 4096);
	c = rr(10);
	if (c < 6)
		len = (1 + rr(16)) * 4096;
	else if (c < 9)
		len = (1 + rr(blocks + 1)) * 4096;
	else
		len = 1 + rr(3 * 4096);
	if (ins && (n->size + len > maxsize || total_bytes() + len > 96ull << 20))
		return;
	if (!ins && off + len >= n->size)
		want = -EINVAL;
	else if (ins && off >= n->size)
		want = -EINVAL;
	else if ((off | len) % 4096)
		want = -EINVAL;
	note("%s %s off %" PRIu64 " len %" PRIu64 " (size %zu)", ins ? "insert" : "collapse", p,
	     off, len, n->size);
	EXPECT(uf2fs_fallocate(fs, ino_of(p), ins ? FALLOC_FL_INSERT_RANGE :
			       FALLOC_FL_COLLAPSE_RANGE, off, len), want);
	if (want)
		return;
	if (ins)
		mnode_insert(n, off, len);
	else
		mnode_collapse(n, off, len);
	/* everything from off on moved: the whole file, while the model is small */
	check_file(p, off, len);
	check_range(p, ino_of(p), n, off, n->size - off + 4096);
}

static void op_read(void)
{
	const char *p = pick(is_reg);
	struct mnode *n;
	uint64_t off;

	if (!p)
		return;
	n = model_get(&M, p);
	off = rand_off(n);
	note("read %s off %" PRIu64, p, off);
	check_range(p, ino_of(p), n, off, rand_len());
}

/* setgid directories: new entries take the group, new directories the bit */
static void inherit(const char *dir, struct mnode *n)
{
	const struct mnode *d = *dir ? model_get(&M, dir) : NULL;

	if (d && (d->mode & S_ISGID)) {
		n->gid = d->gid;
		if (S_ISDIR(n->mode))
			n->mode |= S_ISGID;
	}
}

/* Create a file, dir, symlink or device at a random name: EEXIST if taken. */
static void op_create(int kind)
{
	char dir[4096], name[64], path[4200];
	struct mnode *existing, *n;
	uint32_t dino, ino;
	int ret, want;

	pick_dir(dir, sizeof(dir));
	if (kind == 1 && depth(dir) >= 4)
		return;
	pick_name(name, sizeof(name));
	join(path, sizeof(path), dir, name);
	existing = model_get(&M, path);
	want = existing ? -EEXIST : 0;
	dino = ino_of(dir);
	switch (kind) {
	case 0:
		note("create %s", path);
		ret = uf2fs_mknod(fs, dino, name, strlen(name), S_IFREG | 0644, 0, 0, 0, &ino);
		n = mnode_new(S_IFREG | 0644, 0, 0);
		break;
	case 1:
		note("mkdir %s", path);
		ret = uf2fs_mkdir(fs, dino, name, strlen(name), 0755, 0, 0, &ino);
		n = mnode_new(S_IFDIR | 0755, 0, 0);
		break;
	case 2: {
		char target[3000];
		size_t tl = rr(3) ? 1 + rr(60) : 1 + rr(sizeof(target) - 1);

		memset(target, 'a' + rr(26), tl);
		target[tl] = 0;
		note("symlink %s (%zu bytes)", path, tl);
		ret = uf2fs_symlink(fs, dino, name, strlen(name), target, 0, 0, &ino);
		n = mnode_new(S_IFLNK | 0777, 0, 0);
		n->target = strdup(target);
		break;
	}
	default: {
		uint64_t rdev = makedev(rr(4096), rr(1 << 20));
		uint32_t mode = rr(2) ? S_IFCHR | 0600 : (rr(2) ? S_IFIFO | 0644 : S_IFSOCK | 0755);

		note("mknod %s 0%o", path, mode);
		ret = uf2fs_mknod(fs, dino, name, strlen(name), mode, 0, 0, rdev, &ino);
		n = mnode_new(mode, 0, 0);
		n->rdev = S_ISCHR(mode) ? rdev : 0;
		break;
	}
	}
	inherit(dir, n);
	if (ret != want)
		FAILX("create %s = %d, expected %d", path, ret, want);
	if (!ret)
		model_add(&M, path, n);
	else
		mnode_put(n);
}

static void op_unlink(void)
{
	const char *p = pick(is_nondir);
	char parent[4096], path[4200];
	const char *name;

	if (!p)
		return;
	snprintf(path, sizeof(path), "%s", p);
	split_path(path, parent, sizeof(parent), &name);
	note("unlink %s", path);
	EXPECT(uf2fs_unlink(fs, ino_of(parent), name, strlen(name)), 0);
	model_del(&M, path);
	{
		uint32_t ino;

		EXPECT(uf2fs_resolve(fs, path, &ino), -ENOENT);
	}
}

static void op_rmdir(void)
{
	const char *p = pick(is_dir);
	char parent[4096], path[4200];
	const char *name;
	int want;

	if (!p || avoid("rmdir"))
		return;
	snprintf(path, sizeof(path), "%s", p);
	split_path(path, parent, sizeof(parent), &name);
	want = count_children(path) ? -ENOTEMPTY : 0;
	note("rmdir %s (%zu children)", path, count_children(path));
	EXPECT(uf2fs_rmdir(fs, ino_of(parent), name, strlen(name)), want);
	if (!want)
		model_del(&M, path);
}

static void op_link(void)
{
	const char *p = pick(is_nondir);
	char dir[4096], name[64], path[4200];
	int want;

	if (!p)
		return;
	pick_dir(dir, sizeof(dir));
	pick_name(name, sizeof(name));
	join(path, sizeof(path), dir, name);
	want = model_get(&M, path) ? -EEXIST : 0;
	note("link %s -> %s", p, path);
	EXPECT(uf2fs_link(fs, ino_of(p), ino_of(dir), name, strlen(name)), want);
	if (!want)
		model_add(&M, path, model_get(&M, p));
}

static bool is_under(const char *p, const char *dir)
{
	size_t l = strlen(dir);

	return !strncmp(p, dir, l) && (p[l] == '/' || !p[l]);
}

static void op_rename(void)
{
	const char *sp = pick(is_any);
	char src[4200], dir[4096], name[64], dst[4200], sparent[4096];
	const char *sname;
	struct mnode *s, *d;
	unsigned int flags = 0, c = rr(10);
	int want = 0;

	if (!sp)
		return;
	snprintf(src, sizeof(src), "%s", sp);
	s = model_get(&M, src);
	pick_dir(dir, sizeof(dir));
	/* sometimes aim at an existing entry of the same kind, to replace or exchange */
	if (c < 3) {
		const char *t = pick(S_ISDIR(s->mode) ? is_dir : is_nondir);

		if (t) {
			char tp[4200];

			snprintf(tp, sizeof(tp), "%s", t);
			split_path(tp, dir, sizeof(dir), &sname);
			snprintf(name, sizeof(name), "%s", sname);
		} else {
			pick_name(name, sizeof(name));
		}
	} else {
		pick_name(name, sizeof(name));
	}
	join(dst, sizeof(dst), dir, name);
	if (S_ISDIR(s->mode) && (is_under(dst, src) || depth(dst) > 5))
		return;		/* into itself: see test_rw_api's rename_into_descendant */
	d = model_get(&M, dst);
	if (rr(8) == 0)
		flags = RENAME_NOREPLACE;
	else if (rr(6) == 0 && d)
		flags = RENAME_EXCHANGE;
	if (d && S_ISDIR(d->mode) && flags != RENAME_EXCHANGE && avoid("rmdir"))
		return;
	if (flags == RENAME_EXCHANGE) {
		if (S_ISDIR(d->mode) && is_under(src, dst))
			return;	/* exchanging a directory with its own ancestor */
		if ((S_ISDIR(d->mode) && depth(src) + 4 > 6) || (S_ISDIR(s->mode) && depth(dst) > 5))
			return;
	}
	split_path(src, sparent, sizeof(sparent), &sname);
	if (!strcmp(src, dst))
		want = flags == RENAME_NOREPLACE ? -EEXIST : 0;
	else if (flags == RENAME_NOREPLACE && d)
		want = -EEXIST;
	else if (flags == RENAME_EXCHANGE)
		want = 0;
	else if (d && d == s)
		want = 0;	/* two names of one inode: nothing happens */
	else if (d && S_ISDIR(s->mode) && !S_ISDIR(d->mode))
		want = -ENOTDIR;
	else if (d && !S_ISDIR(s->mode) && S_ISDIR(d->mode))
		want = -EISDIR;
	else if (d && S_ISDIR(d->mode) && count_children(dst))
		want = -ENOTEMPTY;
	note("rename %s -> %s flags %u (dst %s)", src, dst, flags, d ? "exists" : "new");
	EXPECT(uf2fs_rename(fs, ino_of(sparent), sname, strlen(sname), ino_of(dir), name,
			    strlen(name), flags), want);
	if (want || !strcmp(src, dst) || (d && d == s && flags != RENAME_EXCHANGE))
		return;
	if (flags == RENAME_EXCHANGE) {
		model_rename(&M, src, "\x01tmp");
		model_rename(&M, dst, src);
		model_rename(&M, "\x01tmp", dst);
		return;
	}
	if (d)
		model_del(&M, dst);
	model_rename(&M, src, dst);
}

static void op_chattr(void)
{
	const char *p = pick(is_any);
	struct uf2fs_attr a = { 0 };
	struct mnode *n;
	unsigned int valid;

	if (!p)
		return;
	n = model_get(&M, p);
	if (rr(2)) {
		valid = UF2FS_SET_MODE;
		a.mode = rr(07777 + 1);
		if (S_ISDIR(n->mode))
			a.mode |= 0700;	/* keep it walkable: not that the library cares */
		note("chmod %s 0%o", p, a.mode);
	} else {
		valid = UF2FS_SET_UID | UF2FS_SET_GID;
		a.uid = rr(3) ? rr(70000) : 4000000000u + rr(1000);
		a.gid = rr(70000);
		note("chown %s %u:%u", p, a.uid, a.gid);
	}
	EXPECT(uf2fs_setattr(fs, ino_of(p), &a, valid, NULL), 0);
	if (valid & UF2FS_SET_MODE)
		n->mode = (n->mode & S_IFMT) | a.mode;
	else {
		n->uid = a.uid;
		n->gid = a.gid;
	}
}

/* Open, unlink the last name, use the inode, release: it must vanish. */
static void op_unlink_open(void)
{
	const char *p = pick(is_reg);
	char parent[4096], path[4200];
	const char *name;
	struct mnode *n;
	struct uf2fs_attr a;
	uint32_t ino;
	uint8_t tail[100];

	if (!p)
		return;
	n = model_get(&M, p);
	if (model_nlink(&M, n, p) != 1)
		return;
	snprintf(path, sizeof(path), "%s", p);
	split_path(path, parent, sizeof(parent), &name);
	ino = ino_of(path);
	note("open+unlink %s (size %zu)", path, n->size);
	n->refs++;	/* keep the model node while the name goes */
	EXPECT(uf2fs_open(fs, ino, O_RDWR), 0);
	EXPECT(uf2fs_unlink(fs, ino_of(parent), name, strlen(name)), 0);
	model_del(&M, path);
	if (rr(3) == 0)
		EXPECT(uf2fs_sync(fs), 0);
	EXPECT(uf2fs_getattr(fs, ino, &a), 0);
	if (a.nlink != 0 || a.size != n->size)
		FAILX("unlinked open file: nlink %u size %" PRIu64, a.nlink, a.size);
	check_range(path, ino, n, 0, n->size > (1 << 20) ? 1 << 20 : n->size);
	if (rr(2)) {
		rw_fill(tail, sizeof(tail), rnd());
		EXPECT(uf2fs_write(fs, ino, tail, sizeof(tail), n->size), (ssize_t)sizeof(tail));
		mnode_write(n, n->size, tail, sizeof(tail));
		check_range(path, ino, n, n->size - 4096 > n->size ? 0 : n->size - 4096, 4096);
	}
	uf2fs_release(fs, ino, O_RDWR);
	if (!avoid("orphan-getattr"))
		EXPECT(uf2fs_getattr(fs, ino, &a), -ENOENT);
	mnode_put(n);
}

/* Many empty files in one directory (past the inline dentry area), or all gone. */
static void op_bulk(void)
{
	char dir[4096], path[4200], name[64];
	uint32_t dino, ino;

	pick_dir(dir, sizeof(dir));
	dino = ino_of(dir);
	if (rr(2)) {
		int base = rr(100000);

		note("bulk create 60 in /%s", dir);
		for (int i = 0; i < 60; i++) {
			snprintf(name, sizeof(name), "bulk-%d-%.*s", base + i, (int)rr(60),
				 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
			join(path, sizeof(path), dir, name);
			if (model_get(&M, path))
				continue;
			EXPECT(uf2fs_mknod(fs, dino, name, strlen(name), S_IFREG | 0600, 0, 0, 0,
					   &ino), 0);
			{
				struct mnode *n = mnode_new(S_IFREG | 0600, 0, 0);

				inherit(dir, n);
				model_add(&M, path, n);
			}
		}
	} else {
		note("bulk delete in /%s", dir);
		for (size_t i = 0; i < M.n; i++) {
			const char *p = M.d[i].path, *nm;
			char parent[4096];

			if (strncmp(p, "bulk-", 5) && !strstr(p, "/bulk-"))
				continue;
			snprintf(path, sizeof(path), "%s", p);
			split_path(path, parent, sizeof(parent), &nm);
			if (strcmp(parent, dir) || strncmp(nm, "bulk-", 5) ||
			    !S_ISREG(M.d[i].n->mode) || rr(4) == 0)
				continue;
			EXPECT(uf2fs_unlink(fs, dino, nm, strlen(nm)), 0);
			model_del(&M, path);
			i--;	/* model_del moved the last entry here */
		}
	}
}

static void op_remount(void)
{
	note("unmount + fsck + rw remount");
	EXPECT(uf2fs_unmount(fs), 0);
	fs = NULL;
	if (!rw_fsck_clean(img))
		FAILX("fsck.f2fs is not clean after unmount");
	mount_fs(false);
	full_verify("after rw remount");
}

static void one_op(void)
{
	unsigned int c = rr(1000);

	if (c < 260)
		op_write();
	else if (c < 320)
		op_read();
	else if (c < 400)
		op_truncate();
	else if (c < 500)
		op_fallocate();
	else if (c < 570)
		op_create(0);
	else if (c < 600)
		op_create(1);
	else if (c < 615)
		op_create(2);
	else if (c < 625)
		op_create(3);
	else if (c < 690)
		op_unlink();
	else if (c < 715)
		op_rmdir();
	else if (c < 750)
		op_link();
	else if (c < 850)
		op_rename();
	else if (c < 880)
		op_chattr();
	else if (c < 890)
		op_unlink_open();
	else if (c < 900)
		op_bulk();
	else if (c < 910) {
		const char *p = pick(is_reg);

		if (p) {
			note("fsync %s", p);
			EXPECT(uf2fs_fsync(fs, ino_of(p), rr(2)), 0);
		}
	} else if (c < 915) {
		note("sync + full verify");
		EXPECT(uf2fs_sync(fs), 0);
		full_verify("after sync");
	} else if (c < 917) {
		op_remount();
	} else if (c < 960) {
		op_shift();
	} else {
		op_write();
	}
}

static void t_random(void **state)
{
	uint32_t ino;

	snprintf(img, sizeof(img), "%s/random.img", rw_tmp);
	rw_mkfs(img, getenv("UF2FS_STRESS_MB") ? atoi(getenv("UF2FS_STRESS_MB")) : 1024,
		RW_FEATURES_DEFAULT);
	uf2fs_default_options(&mopts);
	mopts.device = img;
	/* vary the cache: small caches evict dirty folios, small folios split writes */
	switch (seed % 4) {
	case 1:
		mopts.cache_size = 4 << 20;
		break;
	case 2:
		mopts.max_folio_order = 0;
		break;
	case 3:
		mopts.cache_size = 16 << 20;
		mopts.max_folio_order = 3;
		break;
	}
	/* drop-behind on every other seed pair: folios freed after reads and writeback */
	mopts.dontcache = (seed >> 2) & 1;
	printf("seed %" PRIu64 ", %lu ops, cache %" PRIu64 ", max folio order %u, dontcache %d\n",
	       seed, nops, mopts.cache_size, mopts.max_folio_order, mopts.dontcache);
	mount_fs(false);
	model_init(&M);
	/* a starting tree */
	for (int i = 0; i < 3; i++) {
		char p[32];

		snprintf(p, sizeof(p), "dir%d", i);
		EXPECT(uf2fs_mkdir(fs, uf2fs_root_ino(fs), p, strlen(p), 0755, 0, 0, &ino), 0);
		model_add(&M, p, mnode_new(S_IFDIR | 0755, 0, 0));
	}
	for (int i = 0; i < 6; i++) {
		char p[32];

		snprintf(p, sizeof(p), "%sf%d", i < 3 ? "" : "dir1/", i);
		rw_create(fs, &M, p, S_IFREG | 0644, 0, NULL);
	}
	for (opno = 1; opno <= nops; opno++) {
		one_op();
		if (opno % 250 == 0) {
			note("periodic sync + full verify");
			EXPECT(uf2fs_sync(fs), 0);
			full_verify("periodic");
		}
		if (opno % 1000 == 0)
			op_remount();
	}
	note("final: unmount, fsck, ro mount, verify");
	EXPECT(uf2fs_unmount(fs), 0);
	if (!rw_fsck_clean(img))
		FAILX("fsck.f2fs is not clean at the end");
	mount_fs(true);
	full_verify("final read-only mount");
	EXPECT(uf2fs_unmount(fs), 0);
	{
		size_t files = 0, dirs = 0;

		for (size_t i = 0; i < M.n; i++) {
			files += S_ISREG(M.d[i].n->mode);
			dirs += S_ISDIR(M.d[i].n->mode);
		}
		printf("done: %zu names (%zu files, %zu dirs), %zu bytes in files\n", M.n, files,
		       dirs, total_bytes());
	}
	model_free(&M);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_random),
	};
	const char *e;
	int failures;

	if (system("command -v mkfs.f2fs >/dev/null && command -v fsck.f2fs >/dev/null") != 0) {
		printf("SKIP: f2fs-tools (mkfs.f2fs, fsck.f2fs) not installed\n");
		return 77;
	}
	e = getenv("UF2FS_SEED");
	if (e && *e) {
		seed = strtoull(e, NULL, 0);
	} else {
		struct timespec t;

		clock_gettime(CLOCK_REALTIME, &t);
		seed = (uint64_t)t.tv_sec * 1000003u ^ t.tv_nsec ^ (uint64_t)getpid() << 20;
		seed %= 1000000000;
	}
	rng = seed;
	e = getenv("UF2FS_STRESS_OPS");
	nops = e && *e ? strtoul(e, NULL, 0) : 3000;
	e = getenv("UF2FS_STRESS_MAXSIZE");
	maxsize = e && *e ? strtoull(e, NULL, 0) : 4 << 20;
	e = getenv("UF2FS_STRESS_VERBOSE");
	verbose = e && *e == '1';
	rw_tmp_init("rw-random");
	failures = cmocka_run_group_tests(tests, NULL, NULL);
	if (failures)
		printf("FAILED with seed %" PRIu64 ": rerun with UF2FS_SEED=%" PRIu64
		       " UF2FS_STRESS_OPS=%lu\n", seed, seed, nops);
	rw_tmp_done(failures);
	return failures ? 1 : 0;
}
