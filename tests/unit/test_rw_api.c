// SPDX-License-Identifier: GPL-2.0
/*
 * The read-write library API, called directly (no FUSE), on fresh mkfs.f2fs
 * images: every namespace and data operation and its POSIX edge cases.
 *
 * Each test is one scenario on its own image. It records what it did in a
 * model (tests/unit/test_rw_common.h); at the end the model is verified on
 * the read-write mount, then the image is unmounted (final checkpoint),
 * checked with fsck.f2fs -f --dry-run, remounted read-write and verified
 * (no cache: everything comes from disk), unmounted, fsck'd again, mounted
 * read-only and verified once more. Scenarios whose files do not fit a flat
 * in-memory model (sparse files of TiBs) add their own checks to every phase.
 *
 * Env: UF2FS_TMPDIR/TMPDIR for the images, KEEP_TMP=1 keeps them, RW_TEST=glob
 * runs only the scenarios whose function name matches.
 */
#include "test_rw_common.h"

#include <sys/xattr.h>
#include <time.h>

struct ctx {
	char img[PATH_MAX];
	struct uf2fs *fs;
	struct model m;
	void (*extra)(struct uf2fs *fs, const char *when);
};

static struct ctx C;

#define FS (C.fs)
#define M (&C.m)

static void begin_feat(const char *name, const char *features, unsigned int mb)
{
	memset(&C, 0, sizeof(C));
	snprintf(rw_context, sizeof(rw_context), "test %s", name);
	rw_img_path(C.img, sizeof(C.img), name);
	rw_mkfs(C.img, mb, features);
	C.fs = rw_mount(C.img, false);
	model_init(&C.m);
}

static void begin(const char *name)
{
	begin_feat(name, RW_FEATURES_DEFAULT, 256);
}

static void verify_phase(const char *when)
{
	RW_VERIFY(C.fs, &C.m, when);
	if (C.extra)
		C.extra(C.fs, when);
}

/* Verify, then unmount / fsck / rw remount / verify / unmount / fsck / ro / verify. */
static void end(void)
{
	verify_phase("rw, before unmount");
	rw_unmount(C.fs);
	C.fs = NULL;
	RW_FSCK(C.img);
	C.fs = rw_mount(C.img, false);
	verify_phase("rw remount");
	rw_unmount(C.fs);
	C.fs = NULL;
	RW_FSCK(C.img);
	C.fs = rw_mount(C.img, true);
	verify_phase("ro remount");
	rw_unmount(C.fs);
	C.fs = NULL;
	RW_FSCK(C.img);
	model_free(&C.m);
	rw_context[0] = 0;
}

/* Unmount and mount read-write again in the middle of a scenario. */
static void remount_rw(void)
{
	rw_unmount(C.fs);
	RW_FSCK(C.img);
	C.fs = rw_mount(C.img, false);
}

static uint32_t ino_of(const char *path)
{
	return rw_ino(C.fs, path);
}

static struct uf2fs_attr attr_of(const char *path)
{
	struct uf2fs_attr a;

	RW_OK(uf2fs_getattr(C.fs, ino_of(path), &a));
	return a;
}

static int lookup_err(const char *path)
{
	uint32_t ino;

	return uf2fs_resolve(C.fs, path, &ino);
}

#define NAME(s) (s), strlen(s)

static struct timespec now_ts(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return t;
}

static int ts_cmp(struct timespec a, struct timespec b)
{
	if (a.tv_sec != b.tv_sec)
		return a.tv_sec < b.tv_sec ? -1 : 1;
	return a.tv_nsec < b.tv_nsec ? -1 : a.tv_nsec > b.tv_nsec;
}

/* t is in [lo, hi] (with a little slack for coarse clocks) */
static void expect_between(struct timespec t, struct timespec lo, struct timespec hi,
			   const char *what)
{
	lo.tv_sec -= 1;
	hi.tv_sec += 1;
	if (ts_cmp(t, lo) < 0 || ts_cmp(t, hi) > 0)
		RW_FAIL("%s: %lld.%09ld is not between %lld and %lld", what, (long long)t.tv_sec,
			t.tv_nsec, (long long)lo.tv_sec, (long long)hi.tv_sec);
}

/* /// Creation /// */

static void t_create_types(void **state)
{
	uint32_t root, ino, d;
	struct uf2fs_attr a;

	begin("create_types");
	root = uf2fs_root_ino(FS);
	rw_create(FS, M, "reg", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "fifo", S_IFIFO | 0600, 0, NULL);
	rw_create(FS, M, "sock", S_IFSOCK | 0755, 0, NULL);
	rw_create(FS, M, "chr", S_IFCHR | 0620, makedev(1, 3), NULL);
	rw_create(FS, M, "blk", S_IFBLK | 0660, makedev(8, 1), NULL);
	/* new (large) encodings: 12-bit major, 20-bit minor */
	rw_create(FS, M, "chr-big", S_IFCHR | 0600, makedev(259, 70000), NULL);
	rw_create(FS, M, "blk-big", S_IFBLK | 0600, makedev(4095, 1048575), NULL);
	rw_create(FS, M, "chr-minor256", S_IFCHR | 0600, makedev(10, 256), NULL);
	rw_create(FS, M, "chr-major256", S_IFCHR | 0600, makedev(256, 1), NULL);
	rw_create(FS, M, "mode0", S_IFREG | 0, 0, NULL);
	rw_create(FS, M, "suid", S_IFREG | 06755, 0, NULL);

	ino = ino_of("blk-big");
	RW_OK(uf2fs_getattr(FS, ino, &a));
	assert_int_equal(major(a.rdev), 4095);
	assert_int_equal(minor(a.rdev), 1048575);
	assert_int_equal(a.size, 0);
	assert_int_equal(a.nlink, 1);

	/* owners come from the caller */
	RW_OK(uf2fs_mknod(FS, root, NAME("owned"), S_IFREG | 0640, 1234, 5678, 0, &ino));
	{
		struct mnode *n = mnode_new(S_IFREG | 0640, 1234, 5678);

		model_add(M, "owned", n);
	}
	RW_OK(uf2fs_mkdir(FS, root, NAME("owned-dir"), 0750, 4000000000u, 4000000001u, &d));
	model_add(M, "owned-dir", mnode_new(S_IFDIR | 0750, 4000000000u, 4000000001u));

	/* errors */
	RW_EXPECT(uf2fs_mknod(FS, root, NAME("reg"), S_IFREG | 0644, 0, 0, 0, &ino), -EEXIST);
	RW_EXPECT(uf2fs_mkdir(FS, root, NAME("reg"), 0755, 0, 0, &ino), -EEXIST);
	RW_EXPECT(uf2fs_symlink(FS, root, NAME("fifo"), "x", 0, 0, &ino), -EEXIST);
	RW_EXPECT(uf2fs_mknod(FS, root, NAME("bad"), S_IFDIR | 0755, 0, 0, 0, &ino), -EINVAL);
	RW_EXPECT(uf2fs_mknod(FS, ino_of("reg"), NAME("x"), S_IFREG | 0644, 0, 0, 0, &ino),
		  -ENOTDIR);
	RW_EXPECT(uf2fs_mkdir(FS, ino_of("reg"), NAME("x"), 0755, 0, 0, &ino), -ENOTDIR);
	RW_EXPECT(lookup_err("nothing"), -ENOENT);
	RW_EXPECT(lookup_err("reg/x"), -ENOTDIR);
	RW_EXPECT(uf2fs_write(FS, ino_of("fifo"), "x", 1, 0), -EINVAL);
	RW_EXPECT(uf2fs_write(FS, root, "x", 1, 0), -EISDIR);
	end();
}

static void t_mkdir_nlink(void **state)
{
	uint32_t ino;

	begin("mkdir_nlink");
	assert_int_equal(attr_of("").nlink, 2);
	rw_create(FS, M, "a", S_IFDIR | 0755, 0, NULL);
	assert_int_equal(attr_of("").nlink, 3);
	assert_int_equal(attr_of("a").nlink, 2);
	rw_create(FS, M, "a/b", S_IFDIR | 0700, 0, NULL);
	rw_create(FS, M, "a/c", S_IFDIR | 0711, 0, NULL);
	rw_create(FS, M, "a/f", S_IFREG | 0644, 0, NULL);
	assert_int_equal(attr_of("a").nlink, 4);
	rw_create(FS, M, "a/b/d", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "a/b/d/e", S_IFDIR | 0755, 0, NULL);
	assert_int_equal(attr_of("a/b").nlink, 3);
	RW_OK(uf2fs_rmdir(FS, ino_of("a"), NAME("c")));
	model_del(M, "a/c");
	assert_int_equal(attr_of("a").nlink, 3);
	RW_EXPECT(uf2fs_mkdir(FS, ino_of("a"), NAME("b"), 0755, 0, 0, &ino), -EEXIST);
	assert_int_equal(attr_of("a").nlink, 3);
	/* "." and ".." in a new directory */
	RW_OK(uf2fs_lookup(FS, ino_of("a/b"), NAME("."), &ino));
	assert_int_equal(ino, ino_of("a/b"));
	RW_OK(uf2fs_lookup(FS, ino_of("a/b"), NAME(".."), &ino));
	assert_int_equal(ino, ino_of("a"));
	/* a deep path */
	{
		char p[4096] = "deep";

		rw_create(FS, M, p, S_IFDIR | 0755, 0, NULL);
		for (int i = 0; i < 60; i++) {
			strcat(p, "/d");
			rw_create(FS, M, p, S_IFDIR | 0755, 0, NULL);
		}
		strcat(p, "/file");
		rw_create(FS, M, p, S_IFREG | 0644, 0, NULL);
		rw_write_pat(FS, M, p, 0, 5000, 1);
	}
	end();
}

static void t_symlink(void **state)
{
	char *t3000 = malloc(4097), buf[8192];
	uint32_t root, ino;

	begin("symlink");
	root = uf2fs_root_ino(FS);
	for (int i = 0; i < 4096; i++)
		t3000[i] = 'a' + i % 26;
	t3000[3000] = 0;
	rw_create(FS, M, "short", S_IFLNK, 0, "x");
	rw_create(FS, M, "rel", S_IFLNK, 0, "../some/where/file.txt");
	rw_create(FS, M, "abs", S_IFLNK, 0, "/etc/passwd");
	rw_create(FS, M, "dangling", S_IFLNK, 0, "does-not-exist");
	rw_create(FS, M, "long3000", S_IFLNK, 0, t3000);
	t3000[3000] = 'x';
	t3000[3500] = 0;	/* past the inline limit */
	rw_create(FS, M, "long3500", S_IFLNK, 0, t3000);
	t3000[3500] = 'y';
	t3000[4095] = 0;
	rw_create(FS, M, "long4095", S_IFLNK, 0, t3000);
	t3000[4095] = 'z';
	t3000[4096] = 0;
	RW_EXPECT(uf2fs_symlink(FS, root, NAME("long4096"), t3000, 0, 0, &ino), -ENAMETOOLONG);
	RW_EXPECT(uf2fs_symlink(FS, root, NAME("empty"), "", 0, 0, &ino), -ENOENT);
	/* readlink into a small buffer: truncated, like readlink(2) */
	RW_EXPECT(uf2fs_readlink(FS, ino_of("long3000"), buf, 10), 10);
	assert_memory_equal(buf, "abcdefghij", 10);
	assert_int_equal(attr_of("long3000").size, 3000);
	RW_EXPECT(uf2fs_readlink(FS, ino_of("long3000"), buf, sizeof(buf)), 3000);
	/* readlink of a non-symlink */
	rw_create(FS, M, "file", S_IFREG | 0644, 0, NULL);
	RW_EXPECT(uf2fs_readlink(FS, ino_of("file"), buf, sizeof(buf)), -EINVAL);
	/* link to a symlink */
	RW_OK(uf2fs_link(FS, ino_of("long3000"), root, NAME("long3000-link")));
	model_add(M, "long3000-link", model_get(M, "long3000"));
	free(t3000);
	end();
}

/* /// link, unlink, rmdir /// */

static void t_link(void **state)
{
	uint32_t root, d1, d2;

	begin("link");
	root = uf2fs_root_ino(FS);
	d1 = rw_create(FS, M, "d1", S_IFDIR | 0755, 0, NULL);
	d2 = rw_create(FS, M, "d2", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "d1/f", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "d1/f", 0, 100000, 7);
	RW_OK(uf2fs_link(FS, ino_of("d1/f"), d2, NAME("g")));
	model_add(M, "d2/g", model_get(M, "d1/f"));
	assert_int_equal(attr_of("d1/f").nlink, 2);
	RW_OK(uf2fs_link(FS, ino_of("d1/f"), d1, NAME("f2")));
	model_add(M, "d1/f2", model_get(M, "d1/f"));
	assert_int_equal(attr_of("d2/g").nlink, 3);
	assert_int_equal(ino_of("d2/g"), ino_of("d1/f"));
	/* errors */
	RW_EXPECT(uf2fs_link(FS, d1, d2, NAME("dirlink")), -EPERM);
	RW_EXPECT(uf2fs_link(FS, ino_of("d1/f"), d2, NAME("g")), -EEXIST);
	RW_EXPECT(uf2fs_link(FS, ino_of("d1/f"), ino_of("d1/f"), NAME("x")), -ENOTDIR);
	/* writing through one name is seen through the others */
	rw_write_pat(FS, M, "d2/g", 5000, 3000, 8);
	/* unlink the first name: the others keep the data */
	RW_OK(uf2fs_unlink(FS, d1, NAME("f")));
	model_del(M, "d1/f");
	assert_int_equal(attr_of("d2/g").nlink, 2);
	/* links to a fifo and a device */
	rw_create(FS, M, "fifo", S_IFIFO | 0644, 0, NULL);
	RW_OK(uf2fs_link(FS, ino_of("fifo"), d2, NAME("fifo2")));
	model_add(M, "d2/fifo2", model_get(M, "fifo"));
	rw_create(FS, M, "dev", S_IFCHR | 0644, makedev(5, 1), NULL);
	RW_OK(uf2fs_link(FS, ino_of("dev"), root, NAME("dev2")));
	model_add(M, "dev2", model_get(M, "dev"));
	/* many links to one file */
	rw_create(FS, M, "many", S_IFREG | 0600, 0, NULL);
	rw_write_pat(FS, M, "many", 0, 10, 9);
	for (int i = 0; i < 200; i++) {
		char name[32], path[40];

		snprintf(name, sizeof(name), "many-%03d", i);
		snprintf(path, sizeof(path), "d2/%s", name);
		RW_OK(uf2fs_link(FS, ino_of("many"), d2, NAME(name)));
		model_add(M, path, model_get(M, "many"));
	}
	assert_int_equal(attr_of("many").nlink, 201);
	end();
}

static void t_unlink(void **state)
{
	uint32_t root, ino;
	struct statvfs s0, s1, s2;

	begin("unlink");
	root = uf2fs_root_ino(FS);
	RW_OK(uf2fs_sync(FS));
	RW_OK(uf2fs_statfs(FS, &s0));
	rw_create(FS, NULL, "big", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, NULL, "big", 0, 16 << 20, 1);
	rw_create(FS, NULL, "small", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, NULL, "small", 0, 100, 1);
	RW_OK(uf2fs_sync(FS));
	RW_OK(uf2fs_statfs(FS, &s1));
	if ((s0.f_bfree - s1.f_bfree) * s0.f_bsize < (16 << 20))
		RW_FAIL("statfs: 16 MiB written but only %llu blocks used",
			(unsigned long long)(s0.f_bfree - s1.f_bfree));
	ino = ino_of("big");
	RW_OK(uf2fs_unlink(FS, root, NAME("big")));
	RW_EXPECT(lookup_err("big"), -ENOENT);
	RW_EXPECT(uf2fs_unlink(FS, root, NAME("big")), -ENOENT);
	RW_EXPECT(uf2fs_getattr(FS, ino, &(struct uf2fs_attr){ 0 }), -ENOENT);
	RW_OK(uf2fs_unlink(FS, root, NAME("small")));
	RW_OK(uf2fs_sync(FS));
	RW_OK(uf2fs_statfs(FS, &s2));
	if (s2.f_bfree + 4 < s0.f_bfree || s2.f_ffree != s0.f_ffree)
		RW_FAIL("statfs after unlink+sync: bfree %llu ffree %llu, before %llu %llu",
			(unsigned long long)s2.f_bfree, (unsigned long long)s2.f_ffree,
			(unsigned long long)s0.f_bfree, (unsigned long long)s0.f_ffree);
	/* a directory is not unlinked */
	rw_create(FS, M, "dir", S_IFDIR | 0755, 0, NULL);
	RW_EXPECT(uf2fs_unlink(FS, root, NAME("dir")), -EISDIR);
	/* unlink of each kind */
	rw_create(FS, NULL, "fifo", S_IFIFO | 0644, 0, NULL);
	rw_create(FS, NULL, "sl", S_IFLNK, 0, "target");
	rw_create(FS, NULL, "dev", S_IFBLK | 0644, makedev(7, 0), NULL);
	RW_OK(uf2fs_unlink(FS, root, NAME("fifo")));
	RW_OK(uf2fs_unlink(FS, root, NAME("sl")));
	RW_OK(uf2fs_unlink(FS, root, NAME("dev")));
	RW_EXPECT(uf2fs_unlink(FS, ino_of("dir"), NAME("nope")), -ENOENT);
	/* name reuse after unlink */
	rw_create(FS, M, "small", S_IFREG | 0600, 0, NULL);
	rw_write_pat(FS, M, "small", 0, 50, 2);
	end();
}

static void t_rmdir(void **state)
{
	uint32_t root;

	begin("rmdir");
	root = uf2fs_root_ino(FS);
	rw_create(FS, M, "full", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "full/x", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "full2", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "full2/sub", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, NULL, "empty", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "file", S_IFREG | 0644, 0, NULL);
	RW_EXPECT(uf2fs_rmdir(FS, root, NAME("full")), -ENOTEMPTY);
	RW_EXPECT(uf2fs_rmdir(FS, root, NAME("full2")), -ENOTEMPTY);
	RW_EXPECT(uf2fs_rmdir(FS, root, NAME("file")), -ENOTDIR);
	RW_EXPECT(uf2fs_rmdir(FS, root, NAME("nope")), -ENOENT);
	RW_EXPECT(uf2fs_rmdir(FS, ino_of("full"), NAME(".")), -EINVAL);
	RW_EXPECT(uf2fs_rmdir(FS, ino_of("full"), NAME("..")), -ENOTEMPTY);
	RW_EXPECT(uf2fs_rmdir(FS, ino_of("file"), NAME("x")), -ENOTDIR);
	assert_int_equal(attr_of("").nlink, 5);
	RW_OK(uf2fs_rmdir(FS, root, NAME("empty")));
	assert_int_equal(attr_of("").nlink, 4);
	RW_EXPECT(lookup_err("empty"), -ENOENT);
	/* empty it, then it goes */
	RW_OK(uf2fs_unlink(FS, ino_of("full"), NAME("x")));
	model_del(M, "full/x");
	RW_OK(uf2fs_rmdir(FS, root, NAME("full")));
	model_del(M, "full");
	/* a directory that was large and became empty again */
	rw_create(FS, NULL, "wasbig", S_IFDIR | 0755, 0, NULL);
	for (int i = 0; i < 400; i++) {
		char p[64];

		snprintf(p, sizeof(p), "wasbig/entry-with-a-longish-name-%04d", i);
		rw_create(FS, NULL, p, S_IFREG | 0644, 0, NULL);
	}
	for (int i = 0; i < 400; i++) {
		char p[64];

		snprintf(p, sizeof(p), "entry-with-a-longish-name-%04d", i);
		RW_OK(uf2fs_unlink(FS, ino_of("wasbig"), NAME(p)));
	}
	RW_OK(uf2fs_rmdir(FS, root, NAME("wasbig")));
	end();
}

/* /// rename /// */

static void t_rename(void **state)
{
	uint32_t root, p1, p2, ino;

	begin("rename");
	root = uf2fs_root_ino(FS);
	p1 = rw_create(FS, M, "p1", S_IFDIR | 0755, 0, NULL);
	p2 = rw_create(FS, M, "p2", S_IFDIR | 0755, 0, NULL);

	/* plain, same directory */
	rw_create(FS, M, "p1/a", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "p1/a", 0, 5000, 1);
	RW_OK(uf2fs_rename(FS, p1, NAME("a"), p1, NAME("b"), 0));
	model_rename(M, "p1/a", "p1/b");
	RW_EXPECT(lookup_err("p1/a"), -ENOENT);

	/* across directories, a file */
	RW_OK(uf2fs_rename(FS, p1, NAME("b"), p2, NAME("b"), 0));
	model_rename(M, "p1/b", "p2/b");

	/* across directories, a directory with contents: '..' and nlinks follow */
	rw_create(FS, M, "p1/sub", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "p1/sub/inner", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "p1/sub/f", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "p1/sub/f", 0, 70000, 2);
	assert_int_equal(attr_of("p1").nlink, 3);
	RW_OK(uf2fs_rename(FS, p1, NAME("sub"), p2, NAME("sub-moved"), 0));
	model_rename(M, "p1/sub", "p2/sub-moved");
	assert_int_equal(attr_of("p1").nlink, 2);
	assert_int_equal(attr_of("p2").nlink, 3);
	RW_OK(uf2fs_lookup(FS, ino_of("p2/sub-moved"), NAME(".."), &ino));
	assert_int_equal(ino, p2);

	/* over an existing file, which has another link: that inode loses one */
	rw_create(FS, M, "p1/victim", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "p1/victim", 0, 300, 3);
	RW_OK(uf2fs_link(FS, ino_of("p1/victim"), root, NAME("victim-link")));
	model_add(M, "victim-link", model_get(M, "p1/victim"));
	rw_create(FS, M, "p2/src", S_IFREG | 0600, 0, NULL);
	rw_write_pat(FS, M, "p2/src", 0, 9000, 4);
	RW_OK(uf2fs_rename(FS, p2, NAME("src"), p1, NAME("victim"), 0));
	model_del(M, "p1/victim");
	model_rename(M, "p2/src", "p1/victim");
	assert_int_equal(attr_of("victim-link").nlink, 1);

	/* over an existing file, the last link: it is freed */
	rw_create(FS, M, "p1/x1", S_IFREG | 0644, 0, NULL);
	rw_create(FS, NULL, "p1/x2", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, NULL, "p1/x2", 0, 1 << 20, 5);
	ino = ino_of("p1/x2");
	RW_OK(uf2fs_rename(FS, p1, NAME("x1"), p1, NAME("x2"), 0));
	model_rename(M, "p1/x1", "p1/x2");
	RW_EXPECT(uf2fs_getattr(FS, ino, &(struct uf2fs_attr){ 0 }), -ENOENT);

	/* a directory over an empty directory, across parents */
	rw_create(FS, M, "p1/dsrc", S_IFDIR | 0700, 0, NULL);
	rw_create(FS, M, "p1/dsrc/content", S_IFREG | 0644, 0, NULL);
	rw_create(FS, NULL, "p2/dempty", S_IFDIR | 0755, 0, NULL);
	RW_OK(uf2fs_rename(FS, p1, NAME("dsrc"), p2, NAME("dempty"), 0));
	model_rename(M, "p1/dsrc", "p2/dempty");

	/* errors: ENOTEMPTY, EISDIR, ENOTDIR, ENOENT, EINVAL */
	rw_create(FS, M, "p1/d-a", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "p1/file-a", S_IFREG | 0644, 0, NULL);
	RW_EXPECT(uf2fs_rename(FS, p1, NAME("d-a"), p2, NAME("dempty"), 0), -ENOTEMPTY);
	RW_EXPECT(uf2fs_rename(FS, p1, NAME("file-a"), p1, NAME("d-a"), 0), -EISDIR);
	RW_EXPECT(uf2fs_rename(FS, p1, NAME("d-a"), p1, NAME("file-a"), 0), -ENOTDIR);
	RW_EXPECT(uf2fs_rename(FS, p1, NAME("nope"), p1, NAME("x"), 0), -ENOENT);
	RW_EXPECT(uf2fs_rename(FS, p1, NAME("file-a"), ino_of("p1/file-a"), NAME("x"), 0),
		  -ENOTDIR);
	RW_EXPECT(uf2fs_rename(FS, p1, NAME("file-a"), p1, NAME("y"),
			       RENAME_NOREPLACE | RENAME_EXCHANGE), -EINVAL);

	/* RENAME_NOREPLACE */
	rw_create(FS, M, "p1/keep", S_IFREG | 0644, 0, NULL);
	RW_EXPECT(uf2fs_rename(FS, p1, NAME("file-a"), p1, NAME("keep"), RENAME_NOREPLACE),
		  -EEXIST);
	RW_OK(uf2fs_rename(FS, p1, NAME("file-a"), p1, NAME("file-b"), RENAME_NOREPLACE));
	model_rename(M, "p1/file-a", "p1/file-b");

	/* RENAME_EXCHANGE of a file and a directory across parents */
	rw_create(FS, M, "p1/xf", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "p1/xf", 0, 4097, 6);
	rw_create(FS, M, "p2/xd", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "p2/xd/child", S_IFREG | 0644, 0, NULL);
	{
		uint32_t n1 = attr_of("p1").nlink, n2 = attr_of("p2").nlink;

		RW_OK(uf2fs_rename(FS, p1, NAME("xf"), p2, NAME("xd"), RENAME_EXCHANGE));
		model_rename(M, "p1/xf", "tmp-xchg");
		model_rename(M, "p2/xd", "p1/xf");
		model_rename(M, "tmp-xchg", "p2/xd");
		assert_int_equal(attr_of("p1").nlink, n1 + 1);
		assert_int_equal(attr_of("p2").nlink, n2 - 1);
		RW_OK(uf2fs_lookup(FS, ino_of("p1/xf"), NAME(".."), &ino));
		assert_int_equal(ino, p1);
	}
	/* RENAME_EXCHANGE of two directories across parents */
	rw_create(FS, M, "p1/ea", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "p2/eb", S_IFDIR | 0700, 0, NULL);
	rw_create(FS, M, "p2/eb/deeper", S_IFDIR | 0700, 0, NULL);
	RW_OK(uf2fs_rename(FS, p1, NAME("ea"), p2, NAME("eb"), RENAME_EXCHANGE));
	model_rename(M, "p1/ea", "tmp-xchg");
	model_rename(M, "p2/eb", "p1/ea");
	model_rename(M, "tmp-xchg", "p2/eb");
	/* RENAME_EXCHANGE with a missing target */
	RW_EXPECT(uf2fs_rename(FS, p1, NAME("keep"), p1, NAME("missing"), RENAME_EXCHANGE),
		  -ENOENT);

	/* renaming onto another name of the same inode does nothing */
	RW_OK(uf2fs_link(FS, ino_of("p1/keep"), p1, NAME("keep-alias")));
	model_add(M, "p1/keep-alias", model_get(M, "p1/keep"));
	RW_OK(uf2fs_rename(FS, p1, NAME("keep"), p1, NAME("keep-alias"), 0));
	/* to itself */
	RW_OK(uf2fs_rename(FS, p1, NAME("keep"), p1, NAME("keep"), 0));

	/* a symlink and a device move too */
	rw_create(FS, M, "p1/sl", S_IFLNK, 0, "somewhere");
	RW_OK(uf2fs_rename(FS, p1, NAME("sl"), root, NAME("sl-moved"), 0));
	model_rename(M, "p1/sl", "sl-moved");

	/* into a directory that is inline and grows past inline by renames */
	rw_create(FS, M, "p3", S_IFDIR | 0755, 0, NULL);
	for (int i = 0; i < 300; i++) {
		char from[64], to[64];

		snprintf(from, sizeof(from), "p1/mv-%03d-with-some-length", i);
		snprintf(to, sizeof(to), "p3/mv-%03d-with-some-length", i);
		rw_create(FS, M, from, S_IFREG | 0644, 0, NULL);
		RW_OK(uf2fs_rename(FS, p1, NAME(from + 3), ino_of("p3"), NAME(to + 3), 0));
		model_rename(M, from, to);
	}
	end();
}

/* Moving a directory below itself would detach a loop: POSIX says EINVAL. */
static void t_rename_into_descendant(void **state)
{
	begin("rename_into_descendant");
	rw_create(FS, M, "a", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "a/b", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "a/b/c", S_IFDIR | 0755, 0, NULL);
	RW_EXPECT(uf2fs_rename(FS, uf2fs_root_ino(FS), NAME("a"), ino_of("a/b/c"), NAME("a"), 0),
		  -EINVAL);
	RW_EXPECT(uf2fs_rename(FS, uf2fs_root_ino(FS), NAME("a"), ino_of("a"), NAME("x"), 0),
		  -EINVAL);
	RW_EXPECT(uf2fs_rename(FS, uf2fs_root_ino(FS), NAME("a"), ino_of("a/b"), NAME("c"),
			       RENAME_EXCHANGE), -EINVAL);
	end();
}

/*
 * An explicit ctime (FUSE's writeback cache writing back its cached times)
 * is raised to the ctime of a chattr the cache did not see, for every inode:
 * the floor is per inode, not a small table that forgets.
 */
static void t_ctime_floor(void **state)
{
	struct uf2fs_attr a = { 0 }, out, cur;
	char name[16];
	uint32_t first = 0;

	begin("ctime_floor");
	for (int i = 0; i < 70; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		rw_create(FS, M, name, S_IFREG | 0644, 0, NULL);
		RW_OK(uf2fs_set_flags(FS, ino_of(name), 0));
		if (!i)
			first = ino_of(name);
	}
	RW_OK(uf2fs_getattr(FS, first, &cur));
	/* older than the chattr: raised to it */
	a.ctime.tv_sec = 1000;
	RW_OK(uf2fs_setattr(FS, first, &a, UF2FS_SET_CTIME, &out));
	assert_int_equal(out.ctime.tv_sec, cur.ctime.tv_sec);
	assert_int_equal(out.ctime.tv_nsec, cur.ctime.tv_nsec);
	/* newer: kept as sent */
	a.ctime.tv_sec = cur.ctime.tv_sec + 100;
	a.ctime.tv_nsec = 5;
	RW_OK(uf2fs_setattr(FS, first, &a, UF2FS_SET_CTIME, &out));
	assert_int_equal(out.ctime.tv_sec, cur.ctime.tv_sec + 100);
	assert_int_equal(out.ctime.tv_nsec, 5);
	/* an inode never chattr'ed has no floor */
	rw_create(FS, M, "plain", S_IFREG | 0644, 0, NULL);
	a.ctime.tv_sec = 1000;
	a.ctime.tv_nsec = 0;
	RW_OK(uf2fs_setattr(FS, ino_of("plain"), &a, UF2FS_SET_CTIME, &out));
	assert_int_equal(out.ctime.tv_sec, 1000);
	end();
}

/* /// setattr /// */

static void t_setattr(void **state)
{
	struct uf2fs_attr a = { 0 }, out;
	struct timespec t0, t1;
	uint32_t ino;
	uint8_t zero[70000] = { 0 }, buf[70000];

	begin("setattr");
	rw_create(FS, M, "f", S_IFREG | 0644, 0, NULL);
	ino = ino_of("f");
	/* mode: permission bits only, the type stays */
	a.mode = S_IFDIR | 04751;
	RW_OK(uf2fs_setattr(FS, ino, &a, UF2FS_SET_MODE, &out));
	assert_int_equal(out.mode, S_IFREG | 04751);
	model_get(M, "f")->mode = S_IFREG | 04751;
	/* owner */
	a.uid = 1001;
	a.gid = 2002;
	RW_OK(uf2fs_setattr(FS, ino, &a, UF2FS_SET_UID | UF2FS_SET_GID, &out));
	assert_int_equal(out.uid, 1001);
	assert_int_equal(out.gid, 2002);
	model_get(M, "f")->uid = 1001;
	model_get(M, "f")->gid = 2002;
	a.uid = 4294967294u;
	RW_OK(uf2fs_setattr(FS, ino, &a, UF2FS_SET_UID, &out));
	model_get(M, "f")->uid = 4294967294u;
	/* explicit times with nanoseconds, before 1970 and past 2038 */
	a.atime = (struct timespec){ .tv_sec = -1, .tv_nsec = 500 };
	a.mtime = (struct timespec){ .tv_sec = 10000000000LL, .tv_nsec = 999999999 };
	t0 = now_ts();
	RW_OK(uf2fs_setattr(FS, ino, &a, UF2FS_SET_ATIME | UF2FS_SET_MTIME, &out));
	t1 = now_ts();
	expect_between(out.ctime, t0, t1, "ctime after setattr");
	model_get(M, "f")->check_times = true;
	model_get(M, "f")->atime = a.atime;
	model_get(M, "f")->mtime = a.mtime;
	/* *_NOW */
	rw_create(FS, M, "g", S_IFREG | 0600, 0, NULL);
	t0 = now_ts();
	RW_OK(uf2fs_setattr(FS, ino_of("g"), &a, UF2FS_SET_ATIME_NOW | UF2FS_SET_MTIME_NOW, &out));
	t1 = now_ts();
	expect_between(out.atime, t0, t1, "atime NOW");
	expect_between(out.mtime, t0, t1, "mtime NOW");
	model_get(M, "g")->check_times = true;
	model_get(M, "g")->atime = out.atime;
	model_get(M, "g")->mtime = out.mtime;
	/* directories and symlinks take modes and owners too */
	rw_create(FS, M, "d", S_IFDIR | 0755, 0, NULL);
	a.mode = 01777;
	a.uid = 7;
	a.gid = 8;
	RW_OK(uf2fs_setattr(FS, ino_of("d"), &a, UF2FS_SET_MODE | UF2FS_SET_UID | UF2FS_SET_GID,
			    NULL));
	model_get(M, "d")->mode = S_IFDIR | 01777;
	model_get(M, "d")->uid = 7;
	model_get(M, "d")->gid = 8;
	rw_create(FS, M, "sl", S_IFLNK, 0, "t");
	RW_OK(uf2fs_setattr(FS, ino_of("sl"), &a, UF2FS_SET_UID | UF2FS_SET_GID, NULL));
	model_get(M, "sl")->uid = 7;
	model_get(M, "sl")->gid = 8;
	a.size = 0;
	RW_EXPECT(uf2fs_setattr(FS, ino_of("d"), &a, UF2FS_SET_SIZE, NULL), -EISDIR);

	/* size: up and down, block-aligned or not, with and without a sync between */
	rw_create(FS, M, "s1", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "s1", 0, 10000, 11);
	rw_truncate(FS, M, "s1", 5000);
	rw_truncate(FS, M, "s1", 20000);
	if (uf2fs_read(FS, ino_of("s1"), buf, 15000, 5000) != 15000 || memcmp(buf, zero, 15000))
		RW_FAIL("s1: old bytes came back after truncate down + up");
	rw_create(FS, M, "s2", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "s2", 0, 1 << 20, 12);
	RW_OK(uf2fs_sync(FS));
	rw_truncate(FS, M, "s2", 123457);
	RW_OK(uf2fs_sync(FS));
	rw_truncate(FS, M, "s2", 2 << 20);
	if (uf2fs_read(FS, ino_of("s2"), buf, 70000, 123457) != 70000 || memcmp(buf, zero, 70000))
		RW_FAIL("s2: old bytes past a synced non-aligned truncate came back");
	rw_create(FS, M, "s3", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "s3", 0, 300000, 13);
	rw_truncate(FS, M, "s3", 0);
	RW_OK(uf2fs_sync(FS));
	rw_truncate(FS, M, "s3", 100000);
	assert_int_equal(attr_of("s3").blocks, 0);
	rw_write_pat(FS, M, "s3", 50000, 10, 14);
	/* inline-sized file: truncate down then up */
	rw_create(FS, M, "s4", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "s4", 0, 1000, 15);
	rw_truncate(FS, M, "s4", 100);
	rw_truncate(FS, M, "s4", 3000);
	rw_truncate(FS, M, "s4", 3400);
	rw_truncate(FS, M, "s4", 5000);	/* grows past inline with a hole */
	rw_write_pat(FS, M, "s4", 4500, 100, 16);
	/* truncate up to a far size, then down to a block boundary */
	rw_create(FS, M, "s5", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "s5", 0, 8192 + 100, 17);
	rw_truncate(FS, M, "s5", 8 << 20);
	rw_truncate(FS, M, "s5", 8192);
	rw_truncate(FS, M, "s5", 8193);
	/* the same, on data still dirty in the cache at a large folio */
	rw_create(FS, M, "s6", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "s6", 0, 4 << 20, 18);
	rw_truncate(FS, M, "s6", (1 << 20) + 1);
	rw_truncate(FS, M, "s6", 3 << 20);
	remount_rw();
	rw_truncate(FS, M, "s6", 999999);
	rw_truncate(FS, M, "s6", 1 << 20);
	rw_truncate(FS, M, "s1", 4096);
	rw_truncate(FS, M, "s1", 4097);
	end();
}

/* /// write /// */

static void t_write_inline(void **state)
{
	static const size_t sizes[] = { 1, 3400, 3451, 3452, 3453, 3487, 3488, 3489, 3490,
					4095, 4096, 4097 };
	char p[64];

	begin("write_inline");
	/* grow by small appends across the inline limit */
	rw_create(FS, M, "grow", S_IFREG | 0644, 0, NULL);
	for (size_t off = 0; off < 12000; off += 100)
		rw_write_pat(FS, M, "grow", off, 100, off);
	/* one write of each size around the limits */
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(p, sizeof(p), "one-%zu", sizes[i]);
		rw_create(FS, M, p, S_IFREG | 0644, 0, NULL);
		rw_write_pat(FS, M, p, 0, sizes[i], sizes[i]);
	}
	/* inline file, then a write far past it */
	rw_create(FS, M, "jump", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "jump", 0, 200, 1);
	rw_write_pat(FS, M, "jump", 1 << 20, 200, 2);
	/* inline, synced, then rewritten inline */
	rw_create(FS, M, "resync", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "resync", 0, 3000, 3);
	RW_OK(uf2fs_sync(FS));
	rw_write_pat(FS, M, "resync", 1000, 10, 4);
	RW_OK(uf2fs_sync(FS));
	rw_write_pat(FS, M, "resync", 3000, 1000, 5);	/* converts after a sync */
	/* inline file grows after a remount */
	rw_create(FS, M, "later", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "later", 0, 3000, 6);
	remount_rw();
	rw_write_pat(FS, M, "later", 2990, 600, 7);
	{
		struct uf2fs_attr a = attr_of("later");

		if (a.flags & FS_INLINE_DATA_FL)
			RW_FAIL("'later' (3590 bytes) still has FS_INLINE_DATA_FL");
		a = attr_of("one-1");
		if (!(a.flags & FS_INLINE_DATA_FL))
			print_message("note: a 1-byte file is not inline\n");
	}
	end();
}

static void t_write_sizes(void **state)
{
	static const uint64_t offs[] = { 0, 1, 4095, 4097, 65537, 1048575, 3333333 };
	static const size_t lens[] = { 1, 4096, 65536, 1048576, 12345, 999999, 4095 };
	uint64_t seed = 100;
	char p[64];

	begin("write_sizes");
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		snprintf(p, sizeof(p), "off-%" PRIu64, offs[i]);
		rw_create(FS, M, p, S_IFREG | 0644, 0, NULL);
		for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			/* each file: every length at its offset, shifted, overlapping */
			rw_write_pat(FS, M, p, offs[i] + j * 7777, lens[j], seed++);
		}
	}
	/* overwrite in the middle, before and after a sync, after a remount */
	rw_create(FS, M, "mid", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "mid", 0, 3 << 20, seed++);
	rw_write_pat(FS, M, "mid", 500000, 1000, seed++);
	RW_OK(uf2fs_sync(FS));
	rw_write_pat(FS, M, "mid", 500500, 100000, seed++);
	rw_write_pat(FS, M, "mid", 4096 * 100, 4096 * 3, seed++);
	remount_rw();
	rw_write_pat(FS, M, "mid", 499999, 3, seed++);
	rw_write_pat(FS, M, "mid", (3 << 20) - 1, 2, seed++);
	/* one big write */
	rw_create(FS, M, "big", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "big", 12345, 20 << 20, seed++);
	/* many tiny writes, interleaved over two files */
	rw_create(FS, M, "t1", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "t2", S_IFREG | 0644, 0, NULL);
	for (int i = 0; i < 2000; i++) {
		rw_write_pat(FS, M, "t1", (uint64_t)i * 37, 37, seed++);
		rw_write_pat(FS, M, "t2", (uint64_t)(1999 - i) * 53, 53, seed++);
	}
	/* a zero-length write changes nothing */
	RW_EXPECT(uf2fs_write(FS, ino_of("t1"), "", 0, 1 << 30), 0);
	end();
}

/* Files of holes and islands, too big for the flat model: checked here. */
struct island {
	uint64_t off;
	size_t len;
};
static const struct island islands[] = {
	{ 0, 100 },
	{ 5 << 20, 4096 },
	{ (1ULL << 30) + 1, 5000 },		/* 1 GiB */
	{ 9ULL << 30, 8192 },			/* past the indirect range */
	{ 3ULL << 40, 4097 },			/* 3 TiB: double indirect */
};
#define N_ISLANDS (sizeof(islands) / sizeof(islands[0]))

static void check_sparse(struct uf2fs *fs, const char *when)
{
	uint32_t ino;
	struct uf2fs_attr a;
	uint8_t want[8192], got[8192], zero[4096] = { 0 };

	snprintf(rw_context, sizeof(rw_context), "sparse file, %s", when);
	RW_OK(uf2fs_resolve(fs, "sparse", &ino));
	RW_OK(uf2fs_getattr(fs, ino, &a));
	assert_int_equal(a.size, islands[N_ISLANDS - 1].off + islands[N_ISLANDS - 1].len);
	if (a.blocks > 64 * 8)
		RW_FAIL("sparse: %" PRIu64 " sectors allocated", a.blocks);
	for (size_t i = 0; i < N_ISLANDS; i++) {
		size_t len = islands[i].len;

		rw_fill(want, len, 1000 + i);
		RW_EXPECT(uf2fs_read(fs, ino, got, len, islands[i].off), (ssize_t)len);
		if (memcmp(got, want, len))
			RW_FAIL("sparse: island %zu differs", i);
		if (i + 1 < N_ISLANDS) {
			uint64_t hole = islands[i].off + len;

			RW_EXPECT(uf2fs_read(fs, ino, got, 4096, hole), 4096);
			if (memcmp(got, zero, 4096))
				RW_FAIL("sparse: hole after island %zu is not zero", i);
			RW_EXPECT(uf2fs_read(fs, ino, got, 4096, islands[i + 1].off - 4096), 4096);
			if (memcmp(got, zero, 4096))
				RW_FAIL("sparse: hole before island %zu is not zero", i + 1);
		}
	}
	snprintf(rw_context, sizeof(rw_context), "test write_sparse");
}

static void t_write_sparse(void **state)
{
	uint32_t ino;
	uint8_t buf[8192];

	begin("write_sparse");
	rw_create(FS, M, "sparse", S_IFREG | 0644, 0, NULL);
	model_get(M, "sparse")->no_content = true;	/* check_sparse does it */
	ino = ino_of("sparse");
	/* written back to front, so each write extends nothing but fills a hole... */
	for (size_t i = N_ISLANDS; i-- > 0;) {
		rw_fill(buf, islands[i].len, 1000 + i);
		RW_EXPECT(uf2fs_write(FS, ino, buf, islands[i].len, islands[i].off),
			  (ssize_t)islands[i].len);
		if (i == 2)
			RW_OK(uf2fs_sync(FS));
	}
	/* past the largest file size: EFBIG, and nothing changes */
	RW_EXPECT(uf2fs_write(FS, ino, buf, 10, 5ULL << 40), -EFBIG);
	RW_EXPECT(uf2fs_write(FS, ino, buf, 10, UINT64_MAX - 5), -EFBIG);
	C.extra = check_sparse;
	/* a file that is one hole */
	rw_create(FS, M, "hole-only", S_IFREG | 0644, 0, NULL);
	rw_truncate(FS, M, "hole-only", 100 << 20);
	end();
}

/* /// fallocate /// */

static void t_fallocate(void **state)
{
	struct uf2fs_attr a;
	uint32_t ino;
	uint64_t before;

	begin("fallocate");
	/* mode 0 on an empty file: size and blocks, reads zeroes */
	rw_create(FS, M, "f0", S_IFREG | 0644, 0, NULL);
	RW_OK(uf2fs_fallocate(FS, ino_of("f0"), 0, 0, 100000));
	mnode_truncate(model_get(M, "f0"), 100000);
	a = attr_of("f0");
	assert_int_equal(a.size, 100000);
	if (a.blocks < 100000 / 512)
		RW_FAIL("fallocate(0): %" PRIu64 " sectors for 100000 bytes", a.blocks);
	rw_write_pat(FS, M, "f0", 50000, 1000, 1);	/* into a preallocated block */
	/* mode 0 beyond EOF of a file with data, unaligned */
	rw_create(FS, M, "f0b", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "f0b", 0, 10001, 2);
	RW_OK(uf2fs_fallocate(FS, ino_of("f0b"), 0, 5000, 30000));
	mnode_truncate(model_get(M, "f0b"), 35000);

	/* KEEP_SIZE: blocks beyond EOF, the size stays */
	rw_create(FS, M, "keep", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "keep", 0, 5000, 3);
	before = attr_of("keep").blocks;
	RW_OK(uf2fs_fallocate(FS, ino_of("keep"), FALLOC_FL_KEEP_SIZE, 0, 1 << 20));
	a = attr_of("keep");
	assert_int_equal(a.size, 5000);
	if (a.blocks < before + ((1 << 20) - 8192) / 512)
		RW_FAIL("KEEP_SIZE: %" PRIu64 " sectors, before %" PRIu64, a.blocks, before);
	rw_write_pat(FS, M, "keep", 600000, 5000, 4);	/* lands in preallocated blocks */
	RW_OK(uf2fs_sync(FS));
	rw_truncate(FS, M, "keep", 900000);		/* past it: zeroes, not garbage */
	/* KEEP_SIZE on an inline file, inside the inline area */
	rw_create(FS, M, "keep-inline", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "keep-inline", 0, 100, 5);
	RW_OK(uf2fs_fallocate(FS, ino_of("keep-inline"), FALLOC_FL_KEEP_SIZE, 0, 2000));
	RW_OK(uf2fs_fallocate(FS, ino_of("keep-inline"), FALLOC_FL_KEEP_SIZE, 0, 20000));

	/* PUNCH_HOLE|KEEP_SIZE: partial blocks at both ends, whole blocks between */
	rw_create(FS, M, "punch", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "punch", 0, 200 << 10, 6);
	RW_OK(uf2fs_sync(FS));
	ino = ino_of("punch");
	before = attr_of("punch").blocks;
	RW_OK(uf2fs_fallocate(FS, ino, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1000, 50000));
	mnode_zero(model_get(M, "punch"), 1000, 50000);
	a = attr_of("punch");
	assert_int_equal(a.size, 200 << 10);
	if (a.blocks > before - 10 * 8)
		RW_FAIL("punch: %" PRIu64 " sectors, before %" PRIu64 " (11 blocks freed?)",
			a.blocks, before);
	/* inside one block */
	RW_OK(uf2fs_fallocate(FS, ino, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 100010, 20));
	mnode_zero(model_get(M, "punch"), 100010, 20);
	/* exactly one aligned block, dirty in the cache */
	rw_write_pat(FS, M, "punch", 120000, 30000, 7);
	RW_OK(uf2fs_fallocate(FS, ino, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 32 * 4096,
			      4096));
	mnode_zero(model_get(M, "punch"), 32 * 4096, 4096);
	/* across EOF: the size stays */
	RW_OK(uf2fs_fallocate(FS, ino, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (200 << 10) - 5000, 1 << 20));
	mnode_zero(model_get(M, "punch"), (200 << 10) - 5000, 1 << 20);
	assert_int_equal(attr_of("punch").size, 200 << 10);
	/* wholly past EOF */
	RW_OK(uf2fs_fallocate(FS, ino, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 10 << 20, 4096));
	/* on an inline file */
	rw_create(FS, M, "punch-inline", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "punch-inline", 0, 3000, 8);
	RW_OK(uf2fs_fallocate(FS, ino_of("punch-inline"),
			      FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 10, 100));
	mnode_zero(model_get(M, "punch-inline"), 10, 100);
	/* then the punched range is written again */
	rw_write_pat(FS, M, "punch", 3000, 10000, 9);

	/* ZERO_RANGE: inside, partial blocks, keep size or extend */
	rw_create(FS, M, "zero", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "zero", 0, 100000, 10);
	RW_OK(uf2fs_sync(FS));
	RW_OK(uf2fs_fallocate(FS, ino_of("zero"), FALLOC_FL_ZERO_RANGE, 3000, 70000));
	mnode_zero(model_get(M, "zero"), 3000, 70000);
	assert_int_equal(attr_of("zero").size, 100000);
	RW_OK(uf2fs_fallocate(FS, ino_of("zero"), FALLOC_FL_ZERO_RANGE, 90000, 20000));
	mnode_truncate(model_get(M, "zero"), 110000);
	mnode_zero(model_get(M, "zero"), 90000, 20000);
	assert_int_equal(attr_of("zero").size, 110000);
	RW_OK(uf2fs_fallocate(FS, ino_of("zero"), FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
			      105000, 100000));
	mnode_zero(model_get(M, "zero"), 105000, 100000);
	assert_int_equal(attr_of("zero").size, 110000);
	rw_write_pat(FS, M, "zero", 4096 * 5, 100, 11);
	/* ZERO_RANGE on an inline file */
	rw_create(FS, M, "zero-inline", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "zero-inline", 0, 2000, 12);
	RW_OK(uf2fs_fallocate(FS, ino_of("zero-inline"), FALLOC_FL_ZERO_RANGE, 500, 500));
	mnode_zero(model_get(M, "zero-inline"), 500, 500);

	/* errors */
	ino = ino_of("zero");
	RW_EXPECT(uf2fs_fallocate(FS, ino, FALLOC_FL_PUNCH_HOLE, 0, 4096), -EOPNOTSUPP);
	RW_EXPECT(uf2fs_fallocate(FS, ino, 0, 0, 0), -EINVAL);
	RW_EXPECT(uf2fs_fallocate(FS, ino, 0x100, 0, 4096), -EOPNOTSUPP);
	RW_EXPECT(uf2fs_fallocate(FS, uf2fs_root_ino(FS), 0, 0, 4096), -EISDIR);
	RW_EXPECT(uf2fs_fallocate(FS, ino, 0, UINT64_MAX - 10, 100), -EINVAL);
	remount_rw();
	/* after a remount the preallocated blocks still read as zeroes, and take data */
	rw_write_pat(FS, M, "keep", 700000, 4096, 13);
	rw_write_pat(FS, M, "f0", 0, 10, 14);
	end();
}

/* Preallocated space is counted, and freed by truncate and unlink. */
static void t_fallocate_space(void **state)
{
	struct statvfs s0, s1, s2;
	uint32_t root;

	begin("fallocate_space");
	root = uf2fs_root_ino(FS);
	RW_OK(uf2fs_sync(FS));
	RW_OK(uf2fs_statfs(FS, &s0));
	rw_create(FS, NULL, "pre", S_IFREG | 0644, 0, NULL);
	RW_OK(uf2fs_fallocate(FS, ino_of("pre"), FALLOC_FL_KEEP_SIZE, 0, 32 << 20));
	RW_OK(uf2fs_sync(FS));
	RW_OK(uf2fs_statfs(FS, &s1));
	if (s0.f_bfree - s1.f_bfree < (32 << 20) / 4096)
		RW_FAIL("32 MiB preallocated, statfs shows %llu blocks used",
			(unsigned long long)(s0.f_bfree - s1.f_bfree));
	/* a file bigger than the free space: ENOSPC (what it got stays, t_fallocate_full) */
	RW_EXPECT(uf2fs_fallocate(FS, ino_of("pre"), 0, 0, 1ULL << 30), -ENOSPC);
	RW_OK(uf2fs_unlink(FS, root, NAME("pre")));
	RW_OK(uf2fs_sync(FS));
	RW_OK(uf2fs_statfs(FS, &s2));
	if (s2.f_bfree + 2 < s0.f_bfree)
		RW_FAIL("unlinked preallocated file: bfree %llu, at the start %llu",
			(unsigned long long)s2.f_bfree, (unsigned long long)s0.f_bfree);
	end();
}

/* statfs after a checkpoint (nothing dirty left to count). */
static struct statvfs synced_statfs(void)
{
	struct statvfs st;

	RW_OK(uf2fs_sync(FS));
	RW_OK(uf2fs_statfs(FS, &st));
	return st;
}

/*
 * What a fallocate past the free space left in path: ENOSPC, and nearly all
 * of the free blocks (free0) reserved, with st_blocks holding them and their
 * direct nodes, and statfs no longer showing them.
 */
static void check_falloc_full(const char *path, int mode, uint64_t free0)
{
	struct uf2fs_attr a;
	struct statvfs st;
	uint64_t want = (free0 + 4096) * 4096, held;

	RW_EXPECT(uf2fs_fallocate(FS, ino_of(path), mode, 0, want), -ENOSPC);
	a = attr_of(path);
	held = a.blocks / 8;
	if (held < free0 * 95 / 100)
		RW_FAIL("%s: %" PRIu64 " blocks held of %" PRIu64 " free", path, held, free0);
	if (mode & FALLOC_FL_KEEP_SIZE) {
		assert_int_equal(a.size, 0);
	} else if (a.size % 4096 || held < a.size / 4096 ||
		   held - a.size / 4096 > a.size / 4096 / 1000 + 3) {
		/* the data blocks, and a direct node per 1018 of them */
		RW_FAIL("%s: size %" PRIu64 " with st_blocks %" PRIu64 " after a partial "
			"fallocate", path, a.size, a.blocks);
	} else {
		/* as Linux: the size ends where the last reserved block does */
		uint32_t last = 0, next = 1;

		RW_OK(uf2fs_test_block_addr(FS, ino_of(path), a.size / 4096 - 1, &last));
		RW_OK(uf2fs_test_block_addr(FS, ino_of(path), a.size / 4096, &next));
		if (last != 0xffffffffu || next != 0)
			RW_FAIL("%s: size %" PRIu64 ", its last block at 0x%x, the next at 0x%x",
				path, a.size, last, next);
	}
	st = synced_statfs();
	print_message("  %s: %" PRIu64 " of %" PRIu64 " free blocks held, size %" PRIu64
		      ", statfs now %llu free\n", path, held, free0, a.size,
		      (unsigned long long)st.f_bfree);
	if (st.f_bfree > 8)
		RW_FAIL("%s: statfs shows %llu blocks free after ENOSPC", path,
			(unsigned long long)st.f_bfree);
	if (free0 - st.f_bfree > held + 4 || free0 - st.f_bfree + 4 < held)
		RW_FAIL("%s: statfs lost %llu blocks, the file holds %" PRIu64, path,
			(unsigned long long)(free0 - st.f_bfree), held);
}

/*
 * fallocate past the free space keeps what it reserved, as Linux f2fs does
 * (xfstests f2fs/001). The full filesystem then refuses what needs a block,
 * an inline file that cannot get one keeps its inline bytes, fsck is clean,
 * and everything is usable again once the file is gone.
 */
static void t_fallocate_full(void **state)
{
	uint8_t buf[4096];
	struct statvfs s0, st;
	uint32_t root;

	begin_feat("fallocate_full", RW_FEATURES_DEFAULT, 64);
	root = uf2fs_root_ino(FS);
	rw_create(FS, M, "small", S_IFREG | 0644, 0, NULL);
	memset(buf, 0x58, sizeof(buf));
	rw_write(FS, M, "small", 0, buf, 40);
	rw_create(FS, M, "other", S_IFREG | 0644, 0, NULL);
	rw_create(FS, NULL, "keep", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "big", S_IFREG | 0644, 0, NULL);
	s0 = synced_statfs();

	/* KEEP_SIZE: the blocks stay, the size does not move; unlink gives them back */
	check_falloc_full("keep", FALLOC_FL_KEEP_SIZE, s0.f_bfree);
	RW_OK(uf2fs_unlink(FS, root, NAME("keep")));
	st = synced_statfs();
	if (st.f_bfree + 2 < s0.f_bfree)
		RW_FAIL("unlinked the KEEP_SIZE file: %llu blocks free, %llu before",
			(unsigned long long)st.f_bfree, (unsigned long long)s0.f_bfree);

	/* mode 0: the size ends at the last block reserved */
	check_falloc_full("big", 0, s0.f_bfree);
	mnode_truncate(model_get(M, "big"), attr_of("big").size);
	RW_EXPECT(uf2fs_fallocate(FS, ino_of("other"), 0, 0, 1 << 20), -ENOSPC);
	assert_int_equal(attr_of("other").size, 0);

	/* f2fs/001: truncate within the inline area, then a write that needs blocks */
	rw_truncate(FS, M, "small", 96);
	RW_EXPECT(uf2fs_write(FS, ino_of("small"), buf, 4096, 8192), -ENOSPC);
	if (!(attr_of("small").flags & FS_INLINE_DATA_FL))
		RW_FAIL("'small' lost its inline data on ENOSPC");
	RW_EXPECT(uf2fs_write(FS, ino_of("other"), buf, 4096, 0), -ENOSPC);
	verify_phase("full");
	remount_rw();
	verify_phase("full, rw remount");

	RW_OK(uf2fs_unlink(FS, root, NAME("big")));
	model_del(M, "big");
	st = synced_statfs();
	if (st.f_bfree + 2 < s0.f_bfree)
		RW_FAIL("unlinked the full file: %llu blocks free, %llu before",
			(unsigned long long)st.f_bfree, (unsigned long long)s0.f_bfree);
	rw_write(FS, M, "small", 8192, buf, 4096);
	rw_write_pat(FS, M, "other", 0, s0.f_bfree / 2 * 4096, 7);
	RW_OK(uf2fs_fallocate(FS, ino_of("other"), 0, 0, s0.f_bfree * 3 / 4 * 4096));
	mnode_truncate(model_get(M, "other"), s0.f_bfree * 3 / 4 * 4096);
	end();
}

/* /// fallocate COLLAPSE_RANGE and INSERT_RANGE /// */

#define BLK 4096ULL
#define MIN_U64(a, b) ((a) < (b) ? (a) : (b))
#define MAX_U64(a, b) ((a) > (b) ? (a) : (b))

/* COLLAPSE_RANGE or INSERT_RANGE that must succeed, and the same on the model. */
static void shift(const char *path, int mode, uint64_t off, uint64_t len)
{
	int ret = uf2fs_fallocate(FS, ino_of(path), mode, off, len);

	if (ret)
		RW_FAIL("fallocate(%s, 0x%x, %" PRIu64 ", %" PRIu64 ") = %d (%s)", path, mode, off,
			len, ret, strerror(-ret));
	if (mode == FALLOC_FL_COLLAPSE_RANGE)
		mnode_collapse(model_get(M, path), off, len);
	else
		mnode_insert(model_get(M, path), off, len);
}

static void collapse(const char *path, uint64_t off, uint64_t len)
{
	shift(path, FALLOC_FL_COLLAPSE_RANGE, off, len);
}

static void insert(const char *path, uint64_t off, uint64_t len)
{
	shift(path, FALLOC_FL_INSERT_RANGE, off, len);
}

/* Sectors of a file after a checkpoint has given every dirty block its place. */
static uint64_t synced_blocks(const char *path)
{
	RW_OK(uf2fs_sync(FS));
	return attr_of(path).blocks;
}

static void t_shift(void **state)
{
	const int flags = FALLOC_FL_COLLAPSE_RANGE, flags_i = FALLOC_FL_INSERT_RANGE;
	struct uf2fs_attr a = { .mtime = { 1000, 0 }, .ctime = { 1000, 0 } };
	uint64_t before;
	uint32_t ino;

	begin("shift");
	/* at the start and in the middle of checkpointed data; blocks follow the size */
	rw_create(FS, M, "c", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "c", 0, 40 * BLK, 1);
	before = synced_blocks("c");
	collapse("c", 0, 3 * BLK);
	collapse("c", 8 * BLK, 5 * BLK);
	if (synced_blocks("c") != before - 8 * 8)
		RW_FAIL("collapse of 8 blocks: %" PRIu64 " sectors, before %" PRIu64,
			attr_of("c").blocks, before);
	rw_create(FS, M, "i", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "i", 0, 40 * BLK, 2);
	before = synced_blocks("i");
	insert("i", 0, 2 * BLK);
	insert("i", 20 * BLK, 7 * BLK);
	if (synced_blocks("i") != before)
		RW_FAIL("insert: %" PRIu64 " sectors, before %" PRIu64, attr_of("i").blocks, before);
	/* an unaligned size: the partial last block moves, and nothing past EOF shows */
	rw_create(FS, M, "u", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "u", 0, 100 * 1024 + 123, 3);
	collapse("u", 2 * BLK, 4 * BLK);
	insert("u", 21 * BLK, 3 * BLK);		/* only the block holding EOF */
	rw_truncate(FS, M, "u", model_get(M, "u")->size + 9000);
	/* dirty data that never reached a block, and a mix with checkpointed blocks */
	rw_create(FS, M, "dirty", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "dirty", 0, 300 * 1024 + 1, 4);
	collapse("dirty", 10 * BLK, 10 * BLK);
	RW_OK(uf2fs_sync(FS));
	rw_write_pat(FS, M, "dirty", 5 * BLK + 100, 30 * BLK, 5);
	insert("dirty", 6 * BLK, 11 * BLK);
	rw_write_pat(FS, M, "dirty", 3 * BLK, 100, 6);
	collapse("dirty", 0, BLK);
	/* holes move as holes */
	rw_create(FS, M, "holes", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "holes", 0, 5000, 7);
	rw_write_pat(FS, M, "holes", 1 << 20, 3 * BLK, 8);
	rw_truncate(FS, M, "holes", (2 << 20) + 77);
	RW_OK(uf2fs_sync(FS));
	before = synced_blocks("holes");
	collapse("holes", 4 * BLK, 100 * BLK);	/* a range of holes only */
	insert("holes", BLK, 50 * BLK);
	collapse("holes", 200 * BLK, 20 * BLK);	/* across the island */
	insert("holes", 300 * BLK, 64 * BLK);	/* in the hole after it */
	if (synced_blocks("holes") != before - 3 * 8)
		RW_FAIL("holes: %" PRIu64 " sectors, before %" PRIu64 " (3 blocks collapsed)",
			attr_of("holes").blocks, before);
	/* preallocated blocks move as preallocated; KEEP_SIZE ones past EOF go */
	rw_create(FS, M, "pre", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "pre", 0, 50 * BLK, 9);
	RW_OK(uf2fs_fallocate(FS, ino_of("pre"), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      10 * BLK, 20 * BLK));
	mnode_zero(model_get(M, "pre"), 10 * BLK, 20 * BLK);
	RW_OK(uf2fs_fallocate(FS, ino_of("pre"), 0, 12 * BLK, 5 * BLK));
	RW_OK(uf2fs_fallocate(FS, ino_of("pre"), FALLOC_FL_KEEP_SIZE, 50 * BLK, 30 * BLK));
	before = synced_blocks("pre");
	collapse("pre", 2 * BLK, 4 * BLK);
	if (synced_blocks("pre") != before - (4 + 30) * 8)
		RW_FAIL("prealloc: %" PRIu64 " sectors, before %" PRIu64 " (34 blocks gone)",
			attr_of("pre").blocks, before);
	RW_OK(uf2fs_fallocate(FS, ino_of("pre"), FALLOC_FL_KEEP_SIZE, 50 * BLK, 10 * BLK));
	insert("pre", BLK, 9 * BLK);
	if (synced_blocks("pre") != before - (4 + 30) * 8)
		RW_FAIL("prealloc: %" PRIu64 " sectors after insert, before %" PRIu64,
			attr_of("pre").blocks, before);
	rw_write_pat(FS, M, "pre", 20 * BLK + 10, 100, 10);	/* into a moved preallocation */
	/* an inline file: collapse cannot fit, insert converts it first */
	rw_create(FS, M, "inl", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "inl", 0, 3000, 11);
	RW_EXPECT(uf2fs_fallocate(FS, ino_of("inl"), flags, 0, BLK), -EINVAL);
	insert("inl", 0, 2 * BLK);
	if (attr_of("inl").flags & FS_INLINE_DATA_FL)
		RW_FAIL("insert left the file inline");
	/* mtime and ctime change */
	RW_OK(uf2fs_setattr(FS, ino_of("c"), &a, UF2FS_SET_MTIME | UF2FS_SET_CTIME, NULL));
	collapse("c", BLK, BLK);
	if (attr_of("c").mtime.tv_sec == 1000 || attr_of("c").ctime.tv_sec == 1000)
		RW_FAIL("collapse kept the old mtime or ctime");
	RW_OK(uf2fs_setattr(FS, ino_of("c"), &a, UF2FS_SET_MTIME | UF2FS_SET_CTIME, NULL));
	insert("c", BLK, BLK);
	if (attr_of("c").mtime.tv_sec == 1000 || attr_of("c").ctime.tv_sec == 1000)
		RW_FAIL("insert kept the old mtime or ctime");

	/* errors, as Linux: alignment, EOF, flags; nothing changes */
	ino = ino_of("c");
	RW_OK(uf2fs_setattr(FS, ino, &a, UF2FS_SET_MTIME, NULL));
	RW_EXPECT(uf2fs_fallocate(FS, ino, flags, 1, BLK), -EINVAL);
	RW_EXPECT(uf2fs_fallocate(FS, ino, flags, BLK, BLK + 1), -EINVAL);
	RW_EXPECT(uf2fs_fallocate(FS, ino_of("u"), flags, 0, 100), -EINVAL);
	RW_EXPECT(uf2fs_fallocate(FS, ino, flags, 0, attr_of("c").size), -EINVAL);
	RW_EXPECT(uf2fs_fallocate(FS, ino, flags, BLK, attr_of("c").size), -EINVAL);
	RW_EXPECT(uf2fs_fallocate(FS, ino, flags, 1 << 30, BLK), -EINVAL);
	RW_EXPECT(uf2fs_fallocate(FS, ino, flags_i, 3, BLK), -EINVAL);
	RW_EXPECT(uf2fs_fallocate(FS, ino, flags_i, 0, 512), -EINVAL);
	RW_EXPECT(uf2fs_fallocate(FS, ino, flags_i, attr_of("c").size, BLK), -EINVAL);
	RW_EXPECT(uf2fs_fallocate(FS, ino, flags_i, 1 << 30, BLK), -EINVAL);
	RW_EXPECT(uf2fs_fallocate(FS, ino, flags | FALLOC_FL_KEEP_SIZE, 0, BLK), -EOPNOTSUPP);
	RW_EXPECT(uf2fs_fallocate(FS, ino, flags_i | FALLOC_FL_KEEP_SIZE, 0, BLK), -EOPNOTSUPP);
	RW_EXPECT(uf2fs_fallocate(FS, ino, flags | flags_i, 0, BLK), -EOPNOTSUPP);
	RW_EXPECT(uf2fs_fallocate(FS, ino, flags | FALLOC_FL_PUNCH_HOLE, 0, BLK), -EOPNOTSUPP);
	RW_EXPECT(uf2fs_fallocate(FS, ino, flags, 0, 0), -EINVAL);
	RW_EXPECT(uf2fs_fallocate(FS, ino, flags, 5ULL << 40, BLK), -EFBIG);
	RW_EXPECT(uf2fs_fallocate(FS, uf2fs_root_ino(FS), flags, 0, BLK), -EISDIR);
	if (attr_of("c").mtime.tv_sec != 1000)
		RW_FAIL("a failed collapse or insert changed mtime");
	/* insert past the largest file size: EFBIG before any range check */
	rw_create(FS, NULL, "huge", S_IFREG | 0644, 0, NULL);
	rw_truncate(FS, NULL, "huge", 3ULL << 40);
	RW_EXPECT(uf2fs_fallocate(FS, ino_of("huge"), flags_i, 0, 1ULL << 40), -EFBIG);
	RW_EXPECT(uf2fs_fallocate(FS, ino_of("huge"), flags_i, 7ULL << 39, BLK), -EINVAL);
	RW_OK(uf2fs_unlink(FS, uf2fs_root_ino(FS), NAME("huge")));
	/* immutable and append-only files: EPERM */
	rw_create(FS, M, "imm", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "imm", 0, 10 * BLK, 12);
	RW_OK(uf2fs_set_flags(FS, ino_of("imm"), FS_IMMUTABLE_FL));
	RW_EXPECT(uf2fs_fallocate(FS, ino_of("imm"), flags, 0, BLK), -EPERM);
	RW_EXPECT(uf2fs_fallocate(FS, ino_of("imm"), flags_i, 0, BLK), -EPERM);
	RW_OK(uf2fs_set_flags(FS, ino_of("imm"), FS_APPEND_FL));
	RW_EXPECT(uf2fs_fallocate(FS, ino_of("imm"), flags, 0, BLK), -EPERM);
	RW_EXPECT(uf2fs_fallocate(FS, ino_of("imm"), flags_i, 0, BLK), -EPERM);
	RW_OK(uf2fs_set_flags(FS, ino_of("imm"), 0));
	remount_rw();
	/* after a remount everything comes from disk; shift once more */
	collapse("dirty", 0, 2 * BLK);
	insert("holes", 0, BLK);
	end();
}

/*
 * Files past the inode's direct addresses: the shift crosses direct, indirect
 * and double-indirect node boundaries, in chunks that overlap their own
 * destination (delta smaller than a chunk) and that do not.
 */
static void t_shift_nodes(void **state)
{
	begin("shift_nodes");
	rw_create(FS, M, "n", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "n", 0, 3500 * BLK + 999, 1);	/* inode, DIR1, DIR2, IND1 */
	RW_OK(uf2fs_sync(FS));
	collapse("n", 0, BLK);
	collapse("n", 900 * BLK, 50 * BLK);		/* the inode's last addresses */
	insert("n", 100 * BLK, 2000 * BLK);		/* delta bigger than a chunk */
	collapse("n", 1000 * BLK, 1500 * BLK);
	rw_write_pat(FS, M, "n", 2000 * BLK + 5, 3 * BLK, 2);	/* dirty, straddling */
	insert("n", 1017 * BLK, 3 * BLK);
	collapse("n", 2900 * BLK, 37 * BLK);
	RW_OK(uf2fs_fallocate(FS, ino_of("n"), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      1500 * BLK, 1100 * BLK));
	mnode_zero(model_get(M, "n"), 1500 * BLK, 1100 * BLK);
	insert("n", 10 * BLK, 1018 * BLK);		/* exactly a dnode */
	remount_rw();
	collapse("n", 1018 * BLK, 1018 * BLK);
	end();
}

/*
 * A shift copies every data block it moves, so it needs that much free log
 * space: when even a checkpoint and GC cannot make it, ENOSPC, and nothing
 * changed. A shift near EOF moves little and fits.
 */
static void t_shift_space(void **state)
{
	struct statvfs st;
	uint64_t size;

	begin_feat("shift_space", RW_FEATURES_DEFAULT, 64);
	RW_OK(uf2fs_statfs(FS, &st));
	size = st.f_bfree * 4096 * 9 / 10 / (1 << 20) * (1 << 20);
	rw_create(FS, M, "f", S_IFREG | 0644, 0, NULL);
	for (uint64_t off = 0; off < size; off += 1 << 20) {
		rw_write_pat(FS, M, "f", off, 1 << 20, off);
		RW_OK(uf2fs_sync(FS));
	}
	rw_write_pat(FS, M, "f", BLK, 100, 2);	/* dirty when the shift starts */
	RW_EXPECT(uf2fs_fallocate(FS, ino_of("f"), FALLOC_FL_COLLAPSE_RANGE, 0, BLK), -ENOSPC);
	RW_EXPECT(uf2fs_fallocate(FS, ino_of("f"), FALLOC_FL_INSERT_RANGE, BLK, BLK), -ENOSPC);
	RW_VERIFY(FS, M, "after ENOSPC");
	collapse("f", size - 20 * BLK, 4 * BLK);
	insert("f", size - 30 * BLK, 8 * BLK);
	RW_OK(uf2fs_fsync(FS, ino_of("f"), false));	/* a shift makes fsync checkpoint */
	end();
}

/* A sparse file too big for the flat model: islands of data, moved by hand. */
struct sisland {
	uint64_t off;
	size_t len;
	uint8_t *data;
};
static struct sisland sisl[16];
static size_t n_sisl;
static uint64_t sparse_size;

static void sparse_add(uint64_t off, size_t len, uint64_t seed)
{
	struct sisland *s = &sisl[n_sisl++];

	s->off = off;
	s->len = len;
	s->data = malloc(len);
	rw_fill(s->data, len, seed);
	RW_EXPECT(uf2fs_write(FS, ino_of("sp"), s->data, len, off), (ssize_t)len);
	if (off + len > sparse_size)
		sparse_size = off + len;
}

/* Cut every island at pos, so that a shift moves whole islands. */
static void sparse_split(uint64_t pos)
{
	for (size_t i = 0; i < n_sisl; i++) {
		struct sisland *s = &sisl[i], *t;

		if (pos <= s->off || pos >= s->off + s->len)
			continue;
		t = &sisl[n_sisl++];
		t->off = pos;
		t->len = s->off + s->len - pos;
		t->data = malloc(t->len);
		memcpy(t->data, s->data + (pos - s->off), t->len);
		s->len = pos - s->off;
	}
}

static void sparse_shift(int mode, uint64_t off, uint64_t len)
{
	RW_OK(uf2fs_fallocate(FS, ino_of("sp"), mode, off, len));
	sparse_split(off);
	if (mode == FALLOC_FL_COLLAPSE_RANGE)
		sparse_split(off + len);
	for (size_t i = 0; i < n_sisl; i++) {
		struct sisland *s = &sisl[i];

		if (s->off < off)
			continue;
		if (mode == FALLOC_FL_INSERT_RANGE)
			s->off += len;
		else if (s->off >= off + len)
			s->off -= len;
		else
			s->len = 0;	/* collapsed away */
	}
	sparse_size = mode == FALLOC_FL_INSERT_RANGE ? sparse_size + len : sparse_size - len;
}

/* Expected bytes of [from, from + len): the islands over zeroes. */
static void sparse_expect(uint8_t *buf, uint64_t from, size_t len)
{
	memset(buf, 0, len);
	for (size_t i = 0; i < n_sisl; i++) {
		const struct sisland *s = &sisl[i];
		uint64_t a = MAX_U64(from, s->off), b = MIN_U64(from + len, s->off + s->len);

		if (a < b)
			memcpy(buf + (a - from), s->data + (a - s->off), b - a);
	}
}

static void check_sparse_shift(struct uf2fs *fs, const char *when)
{
	static uint8_t want[1 << 20], got[1 << 20];
	struct uf2fs_attr a;
	uint32_t ino;

	snprintf(rw_context, sizeof(rw_context), "shift_sparse, %s", when);
	RW_OK(uf2fs_resolve(fs, "sp", &ino));
	RW_OK(uf2fs_getattr(fs, ino, &a));
	if (a.size != sparse_size)
		RW_FAIL("sparse: size %" PRIu64 ", want %" PRIu64, a.size, sparse_size);
	/* every island and 64 KiB around it, in 1 MiB reads */
	for (size_t i = 0; i < n_sisl; i++) {
		uint64_t from = sisl[i].off > 65536 ? sisl[i].off - 65536 : 0;
		uint64_t to = MIN_U64(sisl[i].off + sisl[i].len + 65536, sparse_size);

		for (uint64_t pos = from; pos < to; pos += sizeof(got)) {
			size_t n = MIN_U64(to - pos, sizeof(got));

			sparse_expect(want, pos, n);
			RW_EXPECT(uf2fs_read(fs, ino, got, n, pos), (ssize_t)n);
			if (memcmp(got, want, n)) {
				size_t k = 0;

				while (got[k] == want[k])
					k++;
				RW_FAIL("sparse: byte %" PRIu64 " is 0x%02x, want 0x%02x",
					pos + k, got[k], want[k]);
			}
		}
	}
	snprintf(rw_context, sizeof(rw_context), "test shift_sparse");
}

static void t_shift_sparse(void **state)
{
	/* the double-indirect node starts a little below this block, whatever the inode layout */
	const uint64_t dind = 2075607;

	begin("shift_sparse");
	rw_create(FS, M, "sp", S_IFREG | 0644, 0, NULL);
	model_get(M, "sp")->no_content = true;	/* check_sparse_shift does it */
	n_sisl = 0;
	sparse_size = 0;
	sparse_add(0, 100, 1);
	sparse_add(5 << 20, 3 * BLK, 2);
	sparse_add((dind - 1600) * BLK, 2400 * BLK + 77, 3);
	RW_OK(uf2fs_sync(FS));
	/* across the IND2/DIND boundary, both ways */
	sparse_shift(FALLOC_FL_COLLAPSE_RANGE, (dind - 1200) * BLK, 700 * BLK);
	sparse_shift(FALLOC_FL_INSERT_RANGE, (dind - 1400) * BLK, 2000 * BLK);
	/* gigabytes of holes shift without touching them */
	sparse_shift(FALLOC_FL_COLLAPSE_RANGE, 8 << 20, 3ULL << 30);
	sparse_shift(FALLOC_FL_INSERT_RANGE, 6 << 20, 3ULL << 30);
	sparse_shift(FALLOC_FL_INSERT_RANGE, 0, 100 * BLK);
	C.extra = check_sparse_shift;
	check_sparse_shift(FS, "before unmount");
	end();
	for (size_t i = 0; i < n_sisl; i++)
		free(sisl[i].data);
}

/* /// setgid directories /// */

static void t_setgid(void **state)
{
	uint32_t root, d, ino;
	struct uf2fs_attr a;

	begin("setgid");
	root = uf2fs_root_ino(FS);
	RW_OK(uf2fs_mkdir(FS, root, NAME("sg"), 02775, 0, 500, &d));
	model_add(M, "sg", mnode_new(S_IFDIR | 02775, 0, 500));
	RW_OK(uf2fs_getattr(FS, d, &a));
	assert_int_equal(a.mode, S_IFDIR | 02775);
	/* a file: the directory's group, no setgid bit added */
	RW_OK(uf2fs_mknod(FS, d, NAME("file"), S_IFREG | 0644, 1000, 1000, 0, &ino));
	model_add(M, "sg/file", mnode_new(S_IFREG | 0644, 1000, 500));
	/* a subdirectory: the group and the setgid bit */
	RW_OK(uf2fs_mkdir(FS, d, NAME("sub"), 0755, 1000, 1000, &ino));
	model_add(M, "sg/sub", mnode_new(S_IFDIR | 02755, 1000, 500));
	/* and below it, again */
	RW_OK(uf2fs_mkdir(FS, ino, NAME("subsub"), 0700, 1001, 1001, &ino));
	model_add(M, "sg/sub/subsub", mnode_new(S_IFDIR | 02700, 1001, 500));
	RW_OK(uf2fs_symlink(FS, d, NAME("sl"), "x", 1000, 1000, &ino));
	{
		struct mnode *n = mnode_new(S_IFLNK | 0777, 1000, 500);

		n->target = strdup("x");
		model_add(M, "sg/sl", n);
	}
	RW_OK(uf2fs_mknod(FS, d, NAME("fifo"), S_IFIFO | 0600, 1000, 1000, 0, &ino));
	model_add(M, "sg/fifo", mnode_new(S_IFIFO | 0600, 1000, 500));
	/* an ordinary directory: the caller's group */
	RW_OK(uf2fs_mkdir(FS, root, NAME("plain"), 0755, 0, 600, &d));
	model_add(M, "plain", mnode_new(S_IFDIR | 0755, 0, 600));
	RW_OK(uf2fs_mknod(FS, d, NAME("file"), S_IFREG | 0644, 1000, 1000, 0, &ino));
	model_add(M, "plain/file", mnode_new(S_IFREG | 0644, 1000, 1000));
	RW_OK(uf2fs_mkdir(FS, d, NAME("sub"), 0755, 1000, 1000, &ino));
	model_add(M, "plain/sub", mnode_new(S_IFDIR | 0755, 1000, 1000));
	end();
}

/* /// unlinked while open /// */

static void t_unlink_open(void **state)
{
	struct statvfs s0, s1, s2;
	uint32_t root, ino;
	uint8_t *want = malloc(8 << 20), *got = malloc(8 << 20);
	struct uf2fs_attr a;

	begin("unlink_open");
	root = uf2fs_root_ino(FS);
	RW_OK(uf2fs_sync(FS));
	RW_OK(uf2fs_statfs(FS, &s0));
	rw_create(FS, NULL, "doomed", S_IFREG | 0644, 0, NULL);
	ino = ino_of("doomed");
	rw_fill(want, 8 << 20, 77);
	RW_EXPECT(uf2fs_write(FS, ino, want, 8 << 20, 0), 8 << 20);
	RW_OK(uf2fs_open(FS, ino, O_RDWR));
	RW_OK(uf2fs_unlink(FS, root, NAME("doomed")));
	RW_EXPECT(lookup_err("doomed"), -ENOENT);
	/* still readable and writable through the inode */
	RW_OK(uf2fs_getattr(FS, ino, &a));
	assert_int_equal(a.nlink, 0);
	assert_int_equal(a.size, 8 << 20);
	RW_EXPECT(uf2fs_read(FS, ino, got, 8 << 20, 0), 8 << 20);
	assert_memory_equal(got, want, 8 << 20);
	RW_OK(uf2fs_sync(FS));	/* a checkpoint with the orphan */
	RW_EXPECT(uf2fs_read(FS, ino, got, 8 << 20, 0), 8 << 20);
	assert_memory_equal(got, want, 8 << 20);
	RW_EXPECT(uf2fs_write(FS, ino, "more", 4, 8 << 20), 4);
	RW_OK(uf2fs_statfs(FS, &s1));
	if (s1.f_bfree + (8 << 20) / 4096 > s0.f_bfree)
		RW_FAIL("the open unlinked file's blocks were freed early");
	/* a new file may take the name */
	rw_create(FS, M, "doomed", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "doomed", 0, 100, 1);
	uf2fs_release(FS, ino, O_RDWR);
	RW_EXPECT(uf2fs_getattr(FS, ino, &a), -ENOENT);
	RW_OK(uf2fs_sync(FS));
	RW_OK(uf2fs_statfs(FS, &s2));
	if (s2.f_bfree + 8 < s0.f_bfree)
		RW_FAIL("after release: bfree %llu, at the start %llu",
			(unsigned long long)s2.f_bfree, (unsigned long long)s0.f_bfree);
	/* two opens: the first release keeps it */
	rw_create(FS, NULL, "twice", S_IFREG | 0644, 0, NULL);
	ino = ino_of("twice");
	rw_write_pat(FS, NULL, "twice", 0, 5000, 2);
	RW_OK(uf2fs_open(FS, ino, O_RDONLY));
	RW_OK(uf2fs_open(FS, ino, O_RDONLY));
	RW_OK(uf2fs_unlink(FS, root, NAME("twice")));
	uf2fs_release(FS, ino, O_RDONLY);
	RW_EXPECT(uf2fs_read(FS, ino, got, 5000, 0), 5000);
	uf2fs_release(FS, ino, O_RDONLY);
	RW_EXPECT(uf2fs_getattr(FS, ino, &a), -ENOENT);
	/* an open file that is renamed over */
	rw_create(FS, NULL, "over", S_IFREG | 0644, 0, NULL);
	ino = ino_of("over");
	rw_write_pat(FS, NULL, "over", 0, 5000, 3);
	rw_create(FS, M, "newer", S_IFREG | 0644, 0, NULL);
	RW_OK(uf2fs_open(FS, ino, O_RDONLY));
	RW_OK(uf2fs_rename(FS, root, NAME("newer"), root, NAME("over"), 0));
	model_rename(M, "newer", "over");
	RW_EXPECT(uf2fs_read(FS, ino, got, 5000, 0), 5000);
	uf2fs_release(FS, ino, O_RDONLY);
	free(want);
	free(got);
	end();
}

/* Unmounting with an unlinked file still open: the orphan is freed, fsck is clean. */
static void t_unlink_open_unmount(void **state)
{
	uint32_t ino;
	struct statvfs s0, s1;

	begin("unlink_open_unmount");
	RW_OK(uf2fs_sync(FS));
	RW_OK(uf2fs_statfs(FS, &s0));
	rw_create(FS, NULL, "orphan", S_IFREG | 0644, 0, NULL);
	ino = ino_of("orphan");
	rw_write_pat(FS, NULL, "orphan", 0, 4 << 20, 1);
	RW_OK(uf2fs_open(FS, ino, O_RDWR));
	RW_OK(uf2fs_unlink(FS, uf2fs_root_ino(FS), NAME("orphan")));
	RW_OK(uf2fs_sync(FS));
	rw_create(FS, M, "other", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "other", 0, 10000, 2);
	rw_unmount(FS);		/* no release: the front end died, say */
	RW_FSCK(C.img);
	FS = rw_mount(C.img, false);
	RW_OK(uf2fs_statfs(FS, &s1));
	if (s1.f_bfree + 8 < s0.f_bfree)
		RW_FAIL("after remount the orphan's space is still used: bfree %llu, start %llu",
			(unsigned long long)s1.f_bfree, (unsigned long long)s0.f_bfree);
	end();
}

/* /// names /// */

static void t_names(void **state)
{
	char n255[256], n256[257], path[300];
	uint32_t root, ino, d;

	begin("names");
	root = uf2fs_root_ino(FS);
	memset(n255, 'n', 255);
	n255[255] = 0;
	memset(n256, 'm', 256);
	n256[256] = 0;
	rw_create(FS, M, n255, S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, n255, 0, 10, 1);
	d = rw_create(FS, M, "d", S_IFDIR | 0755, 0, NULL);
	n255[0] = 'D';
	snprintf(path, sizeof(path), "d/%s", n255);
	rw_create(FS, M, path, S_IFDIR | 0755, 0, NULL);
	n255[0] = 'n';
	RW_EXPECT(uf2fs_mknod(FS, root, NAME(n256), S_IFREG | 0644, 0, 0, 0, &ino),
		  -ENAMETOOLONG);
	RW_EXPECT(uf2fs_mkdir(FS, root, NAME(n256), 0755, 0, 0, &ino), -ENAMETOOLONG);
	RW_EXPECT(uf2fs_symlink(FS, root, NAME(n256), "x", 0, 0, &ino), -ENAMETOOLONG);
	RW_EXPECT(uf2fs_lookup(FS, root, NAME(n256), &ino), -ENAMETOOLONG);
	RW_EXPECT(uf2fs_link(FS, ino_of(n255), d, NAME(n256)), -ENAMETOOLONG);
	RW_EXPECT(uf2fs_rename(FS, root, NAME(n255), d, NAME(n256), 0), -ENAMETOOLONG);
	RW_EXPECT(uf2fs_unlink(FS, root, NAME(n256)), -ENAMETOOLONG);
	/* 255 bytes of UTF-8 (85 three-byte characters) and odd bytes */
	{
		char u[256] = "";

		for (int i = 0; i < 85; i++)
			strcat(u, "\xe2\x9c\x93");	/* U+2713 */
		rw_create(FS, M, u, S_IFREG | 0644, 0, NULL);
		rw_create(FS, M, "tab\there", S_IFREG | 0644, 0, NULL);
		rw_create(FS, M, "back\\slash", S_IFREG | 0644, 0, NULL);
		rw_create(FS, M, "\x01\x7f\xff", S_IFREG | 0644, 0, NULL);
		rw_create(FS, M, " ", S_IFREG | 0644, 0, NULL);
		rw_create(FS, M, "...", S_IFREG | 0644, 0, NULL);
	}
	/* names that differ only in case, and hash collisions of length */
	rw_create(FS, M, "Case", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "case", S_IFREG | 0644, 0, NULL);
	/* rename a 255-byte name to another 255-byte name across dirs */
	snprintf(path, sizeof(path), "d/%s", n255);
	RW_OK(uf2fs_rename(FS, root, NAME(n255), d, NAME(n255), 0));
	model_rename(M, n255, path);
	end();
}

/* /// big directories /// */

static void t_bigdir(void **state)
{
	enum { N = 5000 };
	char name[300], path[320];
	uint32_t d, ino;

	begin("bigdir");
	d = rw_create(FS, M, "big", S_IFDIR | 0755, 0, NULL);
	for (int i = 0; i < N; i++) {
		/* varied lengths: 1 to ~200 bytes; slots of 1 to 25 dentries */
		int len = 1 + (i * 37) % 200;

		snprintf(name, sizeof(name), "%d-", i);
		while ((int)strlen(name) < len)
			strcat(name, "x");
		snprintf(path, sizeof(path), "big/%s", name);
		if (i % 5 == 0)
			rw_create(FS, M, path, S_IFDIR | 0755, 0, NULL);
		else
			rw_create(FS, M, path, S_IFREG | 0644, 0, NULL);
		if (i % 500 == 1)
			rw_write_pat(FS, M, path, 0, 100 + i, i);
	}
	/* lookup every one */
	for (size_t i = 0; i < M->n; i++) {
		if (strncmp(M->d[i].path, "big/", 4))
			continue;
		RW_OK(uf2fs_lookup(FS, d, NAME(M->d[i].path + 4), &ino));
	}
	RW_OK(uf2fs_sync(FS));
	/* remove every other one (a sparse directory), then add new ones into the holes */
	for (int i = 0; i < N; i += 2) {
		int len = 1 + (i * 37) % 200;

		snprintf(name, sizeof(name), "%d-", i);
		while ((int)strlen(name) < len)
			strcat(name, "x");
		snprintf(path, sizeof(path), "big/%s", name);
		if (i % 5 == 0)
			RW_OK(uf2fs_rmdir(FS, d, NAME(name)));
		else
			RW_OK(uf2fs_unlink(FS, d, NAME(name)));
		model_del(M, path);
	}
	for (int i = 0; i < 1000; i++) {
		snprintf(path, sizeof(path), "big/new-%d", i);
		rw_create(FS, M, path, S_IFREG | 0644, 0, NULL);
	}
	assert_int_equal(attr_of("big").nlink, 2 + N / 10);
	end();
}

/* /// read-only mounts refuse writes /// */

static void t_erofs(void **state)
{
	uint32_t root, ino, f;
	struct uf2fs_attr a = { .mode = 0600 };

	begin("erofs");
	rw_create(FS, M, "f", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "d", S_IFDIR | 0755, 0, NULL);
	rw_unmount(FS);
	FS = rw_mount(C.img, true);
	root = uf2fs_root_ino(FS);
	f = ino_of("f");
	assert_true(uf2fs_is_read_only(FS));
	RW_EXPECT(uf2fs_mknod(FS, root, NAME("x"), S_IFREG | 0644, 0, 0, 0, &ino), -EROFS);
	RW_EXPECT(uf2fs_mkdir(FS, root, NAME("x"), 0755, 0, 0, &ino), -EROFS);
	RW_EXPECT(uf2fs_symlink(FS, root, NAME("x"), "y", 0, 0, &ino), -EROFS);
	RW_EXPECT(uf2fs_link(FS, f, root, NAME("x")), -EROFS);
	RW_EXPECT(uf2fs_unlink(FS, root, NAME("f")), -EROFS);
	RW_EXPECT(uf2fs_rmdir(FS, root, NAME("d")), -EROFS);
	RW_EXPECT(uf2fs_rename(FS, root, NAME("f"), root, NAME("g"), 0), -EROFS);
	RW_EXPECT(uf2fs_setattr(FS, f, &a, UF2FS_SET_MODE, NULL), -EROFS);
	RW_EXPECT(uf2fs_write(FS, f, "x", 1, 0), -EROFS);
	RW_EXPECT(uf2fs_fallocate(FS, f, 0, 0, 4096), -EROFS);
	RW_EXPECT(uf2fs_set_flags(FS, f, 0), -EROFS);
	RW_OK(uf2fs_sync(FS));
	rw_unmount(FS);
	FS = rw_mount(C.img, false);
	end();
}

/* /// times /// */

static int ignore_entry(void *arg, const char *name, size_t len, uint32_t ino,
			unsigned int dtype, uint64_t next_pos)
{
	return 0;
}

static struct uf2fs *mount_atime(bool ro, int atime_mode)
{
	struct uf2fs_options o;

	uf2fs_default_options(&o);
	o.device = C.img;
	o.read_only = ro;
	o.atime_mode = atime_mode;
	return rw_mount_opts(&o);
}

/* relatime, as the kernel's default: FUSE leaves atime to the server. */
static void t_atime(void **state)
{
	struct uf2fs_attr old = { .atime = { 1000000, 0 } }, a;
	char buf[16];
	uint32_t ino;

	begin("atime");
	rw_create(FS, M, "f", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "f", 0, 100, 1);
	rw_create(FS, M, "d", S_IFDIR | 0755, 0, NULL);
	ino = ino_of("f");
	rw_unmount(FS);
	FS = mount_atime(false, 0);
	RW_OK(uf2fs_setattr(FS, ino, &old, UF2FS_SET_ATIME, &a));
	RW_EXPECT(uf2fs_read(FS, ino, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	a = attr_of("f");
	if (a.atime.tv_sec < 1700000000)
		RW_FAIL("relatime: a read left atime at %lld", (long long)a.atime.tv_sec);
	old = a;
	RW_EXPECT(uf2fs_read(FS, ino, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	if (attr_of("f").atime.tv_nsec != old.atime.tv_nsec)
		RW_FAIL("relatime: a second read moved a fresh atime");
	old.atime.tv_sec = 1000000;
	RW_OK(uf2fs_setattr(FS, ino_of("d"), &old, UF2FS_SET_ATIME, &a));
	RW_OK(uf2fs_readdir(FS, ino_of("d"), 0, ignore_entry, NULL));
	if (attr_of("d").atime.tv_sec < 1700000000)
		RW_FAIL("relatime: readdir left the directory's atime");
	RW_OK(uf2fs_setattr(FS, ino, &old, UF2FS_SET_ATIME, &a));
	rw_unmount(FS);
	/* nodiratime: a readdir leaves the directory alone */
	{
		struct uf2fs_options o;

		uf2fs_default_options(&o);
		o.device = C.img;
		o.read_only = false;
		o.nodiratime = true;
		FS = rw_mount_opts(&o);
	}
	RW_OK(uf2fs_setattr(FS, ino_of("d"), &old, UF2FS_SET_ATIME, &a));
	RW_OK(uf2fs_readdir(FS, ino_of("d"), 0, ignore_entry, NULL));
	if (attr_of("d").atime.tv_sec != 1000000)
		RW_FAIL("nodiratime: readdir moved the directory's atime");
	rw_unmount(FS);
	/* noatime: nothing moves, and the old atime is what was stored */
	FS = mount_atime(false, 1);
	RW_EXPECT(uf2fs_read(FS, ino, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	if (attr_of("f").atime.tv_sec != 1000000)
		RW_FAIL("noatime: atime %lld", (long long)attr_of("f").atime.tv_sec);
	rw_unmount(FS);
	FS = mount_atime(false, 0);
	RW_EXPECT(uf2fs_read(FS, ino, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	rw_unmount(FS);
	FS = mount_atime(true, 0);
	if (attr_of("f").atime.tv_sec < 1700000000)
		RW_FAIL("the atime a read set was not stored");
	rw_unmount(FS);
	FS = rw_mount(C.img, false);
	end();
}

static void t_times(void **state)
{
	struct timespec t0, t1;
	struct uf2fs_attr a, b;
	uint32_t root, ino;

	begin("times");
	root = uf2fs_root_ino(FS);
	rw_create(FS, M, "d", S_IFDIR | 0755, 0, NULL);
	usleep(20000);
	t0 = now_ts();
	rw_create(FS, M, "d/f", S_IFREG | 0644, 0, NULL);
	t1 = now_ts();
	a = attr_of("d");
	expect_between(a.mtime, t0, t1, "dir mtime after create");
	expect_between(a.ctime, t0, t1, "dir ctime after create");
	a = attr_of("d/f");
	expect_between(a.mtime, t0, t1, "new file mtime");
	expect_between(a.ctime, t0, t1, "new file ctime");
	expect_between(a.atime, t0, t1, "new file atime");
	expect_between(a.crtime, t0, t1, "new file crtime (inode_crtime)");
	usleep(20000);
	t0 = now_ts();
	rw_write_pat(FS, M, "d/f", 0, 100, 1);
	t1 = now_ts();
	b = attr_of("d/f");
	expect_between(b.mtime, t0, t1, "mtime after write");
	expect_between(b.ctime, t0, t1, "ctime after write");
	usleep(20000);
	t0 = now_ts();
	RW_OK(uf2fs_link(FS, ino_of("d/f"), root, NAME("lnk")));
	model_add(M, "lnk", model_get(M, "d/f"));
	t1 = now_ts();
	a = attr_of("d/f");
	expect_between(a.ctime, t0, t1, "ctime after link");
	if (ts_cmp(a.mtime, b.mtime))
		RW_FAIL("link changed the file's mtime");
	expect_between(attr_of("").mtime, t0, t1, "root mtime after link");
	usleep(20000);
	t0 = now_ts();
	RW_OK(uf2fs_unlink(FS, root, NAME("lnk")));
	model_del(M, "lnk");
	t1 = now_ts();
	expect_between(attr_of("").mtime, t0, t1, "root mtime after unlink");
	expect_between(attr_of("d/f").ctime, t0, t1, "file ctime after unlink of another name");
	usleep(20000);
	t0 = now_ts();
	RW_OK(uf2fs_rename(FS, ino_of("d"), NAME("f"), root, NAME("f"), 0));
	model_rename(M, "d/f", "f");
	t1 = now_ts();
	expect_between(attr_of("").mtime, t0, t1, "new parent mtime after rename");
	expect_between(attr_of("d").mtime, t0, t1, "old parent mtime after rename");
	usleep(20000);
	t0 = now_ts();
	ino = ino_of("f");
	RW_OK(uf2fs_fallocate(FS, ino, FALLOC_FL_KEEP_SIZE, 0, 100000));
	RW_OK(uf2fs_getattr(FS, ino, &a));
	expect_between(a.ctime, t0, t1.tv_sec > t0.tv_sec ? t1 : now_ts(), "ctime after fallocate");
	/* the times survive a remount exactly */
	model_get(M, "f")->check_times = true;
	model_get(M, "f")->atime = a.atime;
	model_get(M, "f")->mtime = a.mtime;
	end();
}

/* /// xattrs /// */

static const char *const xnames[] = { "user.a", "user.empty", "user.big", "trusted.t",
				      "security.s", "user.spill" };

static size_t xval(int i, uint8_t *v)
{
	size_t len = i == 1 ? 0 : i == 2 ? 1500 : i == 5 ? 2500 : 5 + i;

	rw_fill(v, len, 500 + i);
	return len;
}

static void check_xattrs(struct uf2fs *fs, const char *when)
{
	uint8_t want[4096], got[4096];
	char list[4096];
	uint32_t ino;
	ssize_t n;

	snprintf(rw_context, sizeof(rw_context), "xattrs, %s", when);
	RW_OK(uf2fs_resolve(fs, "x", &ino));
	for (int i = 0; i < 6; i++) {
		size_t len = xval(i, want);

		if (i == 5 && !uf2fs_getxattr(fs, ino, xnames[i], NULL, 0))
			continue;
		RW_EXPECT(uf2fs_getxattr(fs, ino, xnames[i], NULL, 0), (ssize_t)len);
		RW_EXPECT(uf2fs_getxattr(fs, ino, xnames[i], got, sizeof(got)), (ssize_t)len);
		if (memcmp(got, want, len))
			RW_FAIL("xattr %s: value differs", xnames[i]);
	}
	RW_EXPECT(uf2fs_getxattr(fs, ino, "user.removed", got, sizeof(got)), -ENODATA);
	n = uf2fs_listxattr(fs, ino, list, sizeof(list));
	if (n <= 0 || !memmem(list, n, "user.big", 9) || memmem(list, n, "user.removed", 13))
		RW_FAIL("listxattr = %zd", n);
	RW_OK(uf2fs_resolve(fs, "d", &ino));
	RW_EXPECT(uf2fs_getxattr(fs, ino, "user.dir", got, sizeof(got)), 3);
	snprintf(rw_context, sizeof(rw_context), "test xattr");
}

static void t_xattr(void **state)
{
	uint8_t v[4096];
	uint32_t ino;

	begin("xattr");
	ino = rw_create(FS, M, "x", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "x", 0, 5000, 1);
	/*
	 * A miss notes the inode as having no xattrs (later misses skip the
	 * area); every store must end that, and bad names stay errors.
	 */
	for (int i = 0; i < 2; i++) {
		RW_EXPECT(uf2fs_getxattr(FS, ino, "security.selinux", NULL, 0), -ENODATA);
		RW_EXPECT(uf2fs_getxattr(FS, ino, "system.posix_acl_access", v, sizeof(v)),
			  -ENODATA);
		RW_EXPECT(uf2fs_getxattr(FS, ino, "bogus.ns", v, sizeof(v)), -EOPNOTSUPP);
		RW_EXPECT(uf2fs_getxattr(FS, ino, "user.", v, sizeof(v)), -EINVAL);
		RW_OK(uf2fs_setxattr(FS, ino, "user.early", i ? "22" : "1", i + 1, 0));
		RW_EXPECT(uf2fs_getxattr(FS, ino, "user.early", v, sizeof(v)), i + 1);
		RW_EXPECT(memcmp(v, i ? "22" : "1", i + 1), 0);
		RW_OK(uf2fs_removexattr(FS, ino, "user.early"));
		RW_EXPECT(uf2fs_getxattr(FS, ino, "user.early", v, sizeof(v)), -ENODATA);
	}
	for (int i = 0; i < 5; i++) {
		size_t len = xval(i, v);

		RW_OK(uf2fs_setxattr(FS, ino, xnames[i], v, len, XATTR_CREATE));
	}
	RW_EXPECT(uf2fs_setxattr(FS, ino, "user.a", "x", 1, XATTR_CREATE), -EEXIST);
	RW_EXPECT(uf2fs_setxattr(FS, ino, "user.nope", "x", 1, XATTR_REPLACE), -ENODATA);
	RW_OK(uf2fs_setxattr(FS, ino, "user.removed", "gone", 4, 0));
	RW_OK(uf2fs_removexattr(FS, ino, "user.removed"));
	RW_EXPECT(uf2fs_removexattr(FS, ino, "user.removed"), -ENODATA);
	/* replace with a longer value: moves within the area */
	xval(0, v);
	RW_OK(uf2fs_setxattr(FS, ino, "user.a", "short", 5, XATTR_REPLACE));
	RW_OK(uf2fs_setxattr(FS, ino, "user.a", v, xval(0, v), XATTR_REPLACE));
	/* more than fits (inline area + xattr node): E2BIG or ENOSPC, nothing half-done */
	{
		int ret = uf2fs_setxattr(FS, ino, "user.spill", v, xval(5, v), 0);

		if (ret && ret != -E2BIG && ret != -ENOSPC)
			RW_FAIL("a 2500-byte xattr next to 1500 bytes = %d", ret);
	}
	rw_create(FS, M, "d", S_IFDIR | 0755, 0, NULL);
	RW_OK(uf2fs_setxattr(FS, ino_of("d"), "user.dir", "yes", 3, 0));
	RW_EXPECT(uf2fs_setxattr(FS, ino, "bogus.ns", "x", 1, 0), -EOPNOTSUPP);
	check_xattrs(FS, "rw");
	C.extra = check_xattrs;
	end();
}

/* /// POSIX ACLs: inheritance, umask, chmod, setgid; handles /// */

#define A_UNDEF	0xffffffffu
#define A_N(a)	(sizeof(a) / sizeof((a)[0]))

/* A VFS-format ACL (version 2) of n {tag, perm, id} entries. */
static size_t acl_value(uint8_t *out, const uint32_t (*e)[3], size_t n)
{
	out[0] = 2;
	out[1] = out[2] = out[3] = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t *p = out + 4 + 8 * i;

		p[0] = (uint8_t)e[i][0];
		p[1] = (uint8_t)(e[i][0] >> 8);
		p[2] = (uint8_t)e[i][1];
		p[3] = 0;
		for (int b = 0; b < 4; b++)
			p[4 + b] = (uint8_t)(e[i][2] >> (8 * b));
	}
	return 4 + 8 * n;
}

/* The default ACL of "d": u::rwx u:1000:rwx g::r-x m::rwx o::--- */
static const uint32_t acl_dflt[][3] = {
	{ 1, 7, A_UNDEF }, { 2, 7, 1000 }, { 4, 5, A_UNDEF }, { 0x10, 7, A_UNDEF },
	{ 0x20, 0, A_UNDEF },
};

static void expect_acl(struct uf2fs *fs, const char *path, const char *name,
		       const uint32_t (*e)[3], size_t n)
{
	uint8_t want[128], got[128];
	size_t len = e ? acl_value(want, e, n) : 0;
	ssize_t r = uf2fs_getxattr(fs, rw_ino(fs, path), name, got, sizeof(got));

	if (!e && r != -ENODATA)
		RW_FAIL("%s: %s = %zd, expected none", path, name, r);
	if (e && (r != (ssize_t)len || memcmp(got, want, len)))
		RW_FAIL("%s: %s = %zd bytes, not the %zu expected", path, name, r, len);
}

static void check_acls(struct uf2fs *fs, const char *when)
{
	static const uint32_t f_acl[][3] = {
		{ 1, 6, A_UNDEF }, { 2, 7, 1000 }, { 4, 5, A_UNDEF }, { 0x10, 4, A_UNDEF },
		{ 0x20, 4, A_UNDEF },
	};
	static const uint32_t sub_acl[][3] = {
		{ 1, 7, A_UNDEF }, { 2, 7, 1000 }, { 4, 5, A_UNDEF }, { 0x10, 7, A_UNDEF },
		{ 0x20, 0, A_UNDEF },
	};
	static const uint32_t g_acl[][3] = {
		{ 1, 6, A_UNDEF }, { 2, 7, 1000 }, { 4, 5, A_UNDEF }, { 0x10, 4, A_UNDEF },
		{ 0x20, 0, A_UNDEF },
	};

	snprintf(rw_context, sizeof(rw_context), "test acl (%s)", when);
	expect_acl(fs, "d", "system.posix_acl_default", acl_dflt, A_N(acl_dflt));
	expect_acl(fs, "d", "system.posix_acl_access", NULL, 0);
	/* chmod 0644 after creation: owner, mask and other follow the mode */
	expect_acl(fs, "d/f", "system.posix_acl_access", f_acl, A_N(f_acl));
	expect_acl(fs, "d/f", "system.posix_acl_default", NULL, 0);
	expect_acl(fs, "d/sub", "system.posix_acl_access", sub_acl, A_N(sub_acl));
	expect_acl(fs, "d/sub", "system.posix_acl_default", acl_dflt, A_N(acl_dflt));
	expect_acl(fs, "d/sub/g", "system.posix_acl_access", g_acl, A_N(g_acl));
	expect_acl(fs, "d/sl", "system.posix_acl_access", NULL, 0);
	expect_acl(fs, "plain", "system.posix_acl_access", NULL, 0);
	expect_acl(fs, "d/equiv", "system.posix_acl_access", NULL, 0);
	snprintf(rw_context, sizeof(rw_context), "test acl");
}

static uint32_t acl_create(const char *path, uint32_t mode, uint32_t umask, uint32_t want)
{
	struct uf2fs_create_args a = { .mode = mode, .uid = 0, .gid = 0, .umask = umask,
				       .target = S_ISLNK(mode) ? "t" : NULL };
	char parent[256];
	const char *name;
	uint32_t ino;
	struct mnode *n;

	split_path(path, parent, sizeof(parent), &name);
	RW_OK(uf2fs_create(FS, ino_of(parent), NAME(name), &a, &ino));
	n = mnode_new(want, 0, 0);
	if (S_ISLNK(mode))
		n->target = strdup("t");
	model_add(M, path, n);
	if (attr_of(path).mode != want)
		RW_FAIL("%s: mode 0%o, expected 0%o", path, attr_of(path).mode, want);
	return ino;
}

static void t_acl(void **state)
{
	static const uint32_t named[][3] = {
		{ 1, 7, A_UNDEF }, { 2, 4, 1000 }, { 4, 7, A_UNDEF }, { 0x10, 7, A_UNDEF },
		{ 0x20, 5, A_UNDEF },
	};
	static const uint32_t equiv[][3] = { { 1, 7, A_UNDEF }, { 4, 5, A_UNDEF },
					     { 0x20, 0, A_UNDEF } };
	struct uf2fs_attr a = { .mode = 0644 }, got;
	uint8_t v[128];
	size_t n;
	uint32_t f;

	begin("acl");
	rw_create(FS, M, "d", S_IFDIR | 0755, 0, NULL);
	n = acl_value(v, acl_dflt, A_N(acl_dflt));
	RW_OK(uf2fs_setxattr(FS, ino_of("d"), "system.posix_acl_default", v, n, 0));
	/* the default ACL masks the mode, not the umask (posix_acl_create) */
	f = acl_create("d/f", S_IFREG | 0666, 022, S_IFREG | 0660);
	acl_create("d/sub", S_IFDIR | 0777, 077, S_IFDIR | 0770);
	acl_create("d/sub/g", S_IFREG | 0644, 0, S_IFREG | 0640);
	acl_create("d/sl", S_IFLNK | 0777, 077, S_IFLNK | 0777);
	acl_create("d/fifo", S_IFIFO | 0600, 0, S_IFIFO | 0600);
	/* without a default ACL the umask applies */
	acl_create("plain", S_IFREG | 0666, 027, S_IFREG | 0640);
	acl_create("pdir", S_IFDIR | 0777, 022, S_IFDIR | 0755);
	/* chmod rewrites the access ACL's owner, mask and other */
	RW_OK(uf2fs_setattr(FS, f, &a, UF2FS_SET_MODE, NULL));
	model_get(M, "d/f")->mode = S_IFREG | 0644;
	/* setting an access ACL: setgid goes when the caller says so */
	acl_create("sg", S_IFREG | 02775, 0, S_IFREG | 02775);
	n = acl_value(v, named, A_N(named));
	RW_OK(uf2fs_setxattr(FS, ino_of("sg"), "system.posix_acl_access", v, n, 0));
	if (attr_of("sg").mode != (S_IFREG | 02775))
		RW_FAIL("sg: setgid lost without UF2FS_XATTR_KILL_SGID");
	RW_OK(uf2fs_setxattr(FS, ino_of("sg"), "system.posix_acl_access", v, n,
			     UF2FS_XATTR_KILL_SGID));
	model_get(M, "sg")->mode = S_IFREG | 0775;
	/* an equivalent ACL is no ACL: only the mode changes */
	acl_create("d/equiv", S_IFREG | 02666, 0, S_IFREG | 02660);
	n = acl_value(v, equiv, A_N(equiv));
	RW_OK(uf2fs_setxattr(FS, ino_of("d/equiv"), "system.posix_acl_access", v, n,
			     UF2FS_XATTR_KILL_SGID));
	model_get(M, "d/equiv")->mode = S_IFREG | 0750;
	check_acls(FS, "rw");

	/* handles: an inode in use by number, with its generation; anything else stale */
	RW_OK(uf2fs_getattr_by_handle(FS, f, &got));
	if (got.ino != f || got.generation != attr_of("d/f").generation)
		RW_FAIL("getattr_by_handle(%u): ino %u generation %u", f, got.ino, got.generation);
	RW_OK(uf2fs_getattr_by_handle(FS, uf2fs_root_ino(FS), &got));
	for (uint32_t bad = 0; bad < 3; bad++)
		RW_EXPECT(uf2fs_getattr_by_handle(FS, bad, &got), -ESTALE);
	RW_EXPECT(uf2fs_getattr_by_handle(FS, UINT32_MAX, &got), -ESTALE);
	/* a file with dnodes and an xattr node: those nids are no inodes */
	rw_create(FS, M, "big", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "big", 8 << 20, 4096, 3);
	memset(v, 'x', sizeof(v));
	for (int i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "user.x%d", i);
		RW_OK(uf2fs_setxattr(FS, ino_of("big"), name, v, sizeof(v), 0));
	}
	for (uint32_t nid = 3; nid < 64; nid++) {
		int ret = uf2fs_getattr_by_handle(FS, nid, &got);

		if (ret && ret != -ESTALE)
			RW_FAIL("getattr_by_handle(%u) = %d", nid, ret);
		if (!ret && (got.ino != nid || uf2fs_getattr(FS, nid, &a)))
			RW_FAIL("getattr_by_handle(%u) found ino %u", nid, got.ino);
	}
	rw_create(FS, M, "gone", S_IFREG | 0644, 0, NULL);
	f = ino_of("gone");
	RW_OK(uf2fs_unlink(FS, uf2fs_root_ino(FS), NAME("gone")));
	model_del(M, "gone");
	RW_EXPECT(uf2fs_getattr_by_handle(FS, f, &got), -ESTALE);
	C.extra = check_acls;
	end();
}

/* /// inode flags /// */

static void t_flags(void **state)
{
	struct uf2fs_attr a = { .size = 0, .mode = 0600 };
	uint32_t root, f, g, d, x;

	begin("flags");
	root = uf2fs_root_ino(FS);
	f = rw_create(FS, M, "immutable", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "immutable", 0, 100, 1);
	g = rw_create(FS, M, "append", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "append", 0, 100, 2);
	d = rw_create(FS, M, "idir", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "idir/inside", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "adir", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "adir/inside", S_IFREG | 0644, 0, NULL);
	RW_OK(uf2fs_set_flags(FS, f, FS_IMMUTABLE_FL));
	RW_OK(uf2fs_set_flags(FS, g, FS_APPEND_FL));
	RW_OK(uf2fs_set_flags(FS, d, FS_IMMUTABLE_FL));
	RW_OK(uf2fs_set_flags(FS, ino_of("adir"), FS_APPEND_FL));
	/* Linux: an immutable inode changes in no way, and keeps its names */
	RW_SOFT(uf2fs_write(FS, f, "x", 1, 0), -EPERM);
	RW_SOFT(uf2fs_setattr(FS, f, &a, UF2FS_SET_SIZE, NULL), -EPERM);
	RW_SOFT(uf2fs_setattr(FS, f, &a, UF2FS_SET_MODE, NULL), -EPERM);
	RW_SOFT(uf2fs_fallocate(FS, f, 0, 0, 4096), -EPERM);
	RW_SOFT(uf2fs_setxattr(FS, f, "user.x", "1", 1, 0), -EPERM);
	RW_SOFT(uf2fs_link(FS, f, root, NAME("i-link")), -EPERM);
	RW_SOFT(uf2fs_rename(FS, root, NAME("immutable"), root, NAME("i-renamed"), 0), -EPERM);
	RW_SOFT(uf2fs_unlink(FS, root, NAME("immutable")), -EPERM);
	/* append-only: data only grows at the end; no truncate, link, rename or unlink */
	RW_SOFT(uf2fs_write(FS, g, "tail", 4, 0), 4);
	mnode_write(model_get(M, "append"), 100, "tail", 4);
	RW_SOFT(uf2fs_setattr(FS, g, &a, UF2FS_SET_SIZE, NULL), -EPERM);
	RW_SOFT(uf2fs_link(FS, g, root, NAME("a-link")), -EPERM);
	RW_SOFT(uf2fs_rename(FS, root, NAME("append"), root, NAME("a-renamed"), 0), -EPERM);
	RW_SOFT(uf2fs_unlink(FS, root, NAME("append")), -EPERM);
	/* an immutable directory: no entry comes or goes */
	RW_SOFT(uf2fs_mknod(FS, d, NAME("new"), S_IFREG | 0644, 0, 0, 0, &x), -EPERM);
	RW_SOFT(uf2fs_unlink(FS, d, NAME("inside")), -EPERM);
	RW_SOFT(uf2fs_rename(FS, d, NAME("inside"), root, NAME("out"), 0), -EPERM);
	/* an append-only directory: entries come, none go */
	RW_SOFT(uf2fs_unlink(FS, ino_of("adir"), NAME("inside")), -EPERM);
	RW_SOFT(uf2fs_mknod(FS, ino_of("adir"), NAME("new"), S_IFREG | 0644, 0, 0, 0, &x), 0);
	rw_soft_failures += lookup_err("adir/new") != 0;
	if (!lookup_err("adir/new"))
		model_add(M, "adir/new", mnode_new(S_IFREG | 0644, 0, 0));
	/* whatever went wrong above, bring the model in line with the tree before end() */
	for (size_t i = 0; i < M->n; i++)
		if (lookup_err(M->d[i].path))
			print_error("(%s is gone)\n", M->d[i].path);
	RW_SOFT_END();
	rw_create(FS, M, "nodump", S_IFREG | 0644, 0, NULL);
	RW_OK(uf2fs_set_flags(FS, ino_of("nodump"), FS_NODUMP_FL | FS_NOATIME_FL));
	end();
	/* the flags survived: check them on a fresh read-only mount */
	FS = rw_mount(C.img, true);
	{
		uint32_t fl = 0;

		RW_OK(uf2fs_get_flags(FS, ino_of("immutable"), &fl));
		if (!(fl & FS_IMMUTABLE_FL))
			RW_FAIL("immutable flag lost: 0x%x", fl);
		RW_OK(uf2fs_get_flags(FS, ino_of("append"), &fl));
		if (!(fl & FS_APPEND_FL))
			RW_FAIL("append flag lost: 0x%x", fl);
		RW_OK(uf2fs_get_flags(FS, ino_of("nodump"), &fl));
		if ((fl & (FS_NODUMP_FL | FS_NOATIME_FL)) != (FS_NODUMP_FL | FS_NOATIME_FL))
			RW_FAIL("nodump/noatime lost: 0x%x", fl);
	}
	rw_unmount(FS);
}

/* /// Features: the same basics on images with other mkfs feature sets /// */

static void basics(void)
{
	rw_create(FS, M, "d", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "d/inline", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "d/inline", 0, 3000, 1);
	rw_create(FS, M, "d/grown", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "d/grown", 0, 3000, 2);
	rw_write_pat(FS, M, "d/grown", 3000, 3000, 3);
	rw_create(FS, M, "d/big", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "d/big", 0, 5 << 20, 4);
	rw_truncate(FS, M, "d/big", 3333333);
	rw_create(FS, M, "sl", S_IFLNK, 0, "d/inline");
	rw_create(FS, M, "dev", S_IFCHR | 0644, makedev(300, 300000), NULL);
	for (int i = 0; i < 300; i++) {
		char p[64];

		snprintf(p, sizeof(p), "d/many-%d", i);
		rw_create(FS, M, p, S_IFREG | 0644, 0, NULL);
	}
	RW_OK(uf2fs_link(FS, ino_of("d/big"), uf2fs_root_ino(FS), NAME("big-link")));
	model_add(M, "big-link", model_get(M, "d/big"));
	RW_OK(uf2fs_rename(FS, ino_of("d"), NAME("many-7"), uf2fs_root_ino(FS), NAME("m7"), 0));
	model_rename(M, "d/many-7", "m7");
}

static void t_features_none(void **state)
{
	begin_feat("features_none", "", 256);
	basics();
	end();
}

static void t_features_more(void **state)
{
	begin_feat("features_more", "extra_attr,inode_checksum,inode_crtime,sb_checksum,"
		   "lost_found,project_quota,quota", 256);
	model_add(M, "lost+found", mnode_new(S_IFDIR | 0700, 0, 0));
	basics();
	end();
}

static void t_small_image(void **state)
{
	begin_feat("small_image", RW_FEATURES_DEFAULT, 64);
	basics();
	end();
}

/* /// In-place updates and SSR (the kernel's IPU policy and slack space recycling) /// */

/* A read-write mount with the space/placement options the tests vary. */
static struct uf2fs *mount_with(const char *img, bool lfs, int ipu_policy)
{
	struct uf2fs_options o;
	struct uf2fs *fs = NULL;
	int ret;

	uf2fs_default_options(&o);
	o.device = img;
	o.read_only = false;
	o.mode_lfs = lfs;
	o.ipu_policy = ipu_policy;
	o.background_gc = 0;	/* the counters below must be the foreground's */
	ret = uf2fs_mount(&o, &fs);
	if (ret)
		RW_FAIL("uf2fs_mount(%s, lfs %d, ipu_policy %d) = %d (%s): %s", img, lfs,
			ipu_policy, ret, strerror(-ret), uf2fs_last_error(NULL));
	return fs;
}

static uint32_t addr_of(const char *path, uint64_t lblk)
{
	uint32_t a = 0;

	RW_OK(uf2fs_test_block_addr(FS, ino_of(path), lblk, &a));
	return a;
}

/* The first number after label on its line of `uf2fs stats`. */
static uint64_t stat_of(const char *label)
{
	return rw_stat_number(FS, label);
}

#define IPU_STAT "in-place (IPU)"
#define SSR_STAT "clean (LFS),"
#define GC_STAT "gc  "

static void t_ipu_fsync(void **state)
{
	uint32_t f, a3, a5, a0, ipu;

	begin("ipu_fsync");
	/* a 256 MiB image would take the kernel's small-volume IPU_FORCE */
	rw_unmount(FS);
	FS = mount_with(C.img, false, 0x10);
	f = rw_create(FS, M, "f", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "f", 0, 64 << 10, 1);
	RW_OK(uf2fs_sync(FS));
	a3 = addr_of("f", 3);
	a5 = addr_of("f", 5);
	ipu = stat_of(IPU_STAT);
	/* fsync of a small overwrite: the block it has, no new one (F2FS_IPU_FSYNC) */
	rw_write_pat(FS, M, "f", 3 * 4096 + 10, 100, 2);
	RW_OK(uf2fs_fsync(FS, f, false));
	if (addr_of("f", 3) != a3)
		RW_FAIL("fsync'd 100-byte overwrite moved block 3 from %u to %u", a3,
			addr_of("f", 3));
	if (stat_of(IPU_STAT) != ipu + 1)
		RW_FAIL("IPU counter %llu, want %llu", (unsigned long long)stat_of(IPU_STAT),
			(unsigned long long)ipu + 1);
	/* more than min_fsync_blocks (8) dirty: out of place, as the kernel */
	rw_write_pat(FS, M, "f", 0, 12 * 4096, 3);
	a0 = addr_of("f", 0);
	RW_OK(uf2fs_fsync(FS, f, false));
	if (addr_of("f", 0) == a0 || addr_of("f", 5) == a5)
		RW_FAIL("fsync of 12 dirty blocks kept block 0 at %u / 5 at %u", a0, a5);
	/* fdatasync: in place whatever the count */
	a0 = addr_of("f", 0);
	a5 = addr_of("f", 5);
	rw_write_pat(FS, M, "f", 0, 12 * 4096, 4);
	RW_OK(uf2fs_fsync(FS, f, true));
	if (addr_of("f", 0) != a0 || addr_of("f", 5) != a5)
		RW_FAIL("fdatasync'd overwrite moved blocks 0 and 5");
	/* a checkpoint's writeback stays out of place under the default policy */
	rw_write_pat(FS, M, "f", 5 * 4096, 4096, 5);
	RW_OK(uf2fs_sync(FS));
	if (addr_of("f", 5) == a5)
		RW_FAIL("checkpoint writeback overwrote block 5 in place");
	/* a hole never goes in place; an append neither */
	rw_write_pat(FS, M, "f", 100 << 10, 4096, 6);
	RW_OK(uf2fs_fsync(FS, f, false));
	if (!addr_of("f", 25))
		RW_FAIL("fsync'd append has no block");
	/* power loss right after an in-place fsync: roll-forward keeps it */
	a3 = addr_of("f", 3);
	rw_write_pat(FS, M, "f", 3 * 4096, 4096, 7);
	rw_write_pat(FS, M, "f", 64 << 10, 3000, 8);	/* and the size grows */
	RW_OK(uf2fs_fsync(FS, f, false));
	if (addr_of("f", 3) != a3)
		RW_FAIL("second in-place fsync moved block 3");
	uf2fs_test_crash(FS);
	FS = mount_with(C.img, false, 0x10);
	verify_phase("after a crash past an in-place fsync");
	if (addr_of("f", 3) != a3)
		RW_FAIL("recovery moved block 3 from %u to %u", a3, addr_of("f", 3));
	end();
}

/*
 * The default on a volume of up to 16 GiB is the kernel's IPU_FORCE: a
 * checkpoint's writeback overwrites in place. mode=lfs and ipu_policy=0
 * never write in place; ipu_policy=1 (force) always.
 */
static void t_ipu_modes(void **state)
{
	uint32_t f, a;

	begin("ipu_modes");
	f = rw_create(FS, M, "f", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "f", 0, 32 << 10, 1);
	RW_OK(uf2fs_sync(FS));
	a = addr_of("f", 2);
	rw_write_pat(FS, M, "f", 2 * 4096, 4096, 9);
	RW_OK(uf2fs_sync(FS));
	if (addr_of("f", 2) != a)
		RW_FAIL("default policy on 256 MiB: checkpoint moved block 2 (%u -> %u), "
			"want in place", a, addr_of("f", 2));
	rw_unmount(FS);
	FS = mount_with(C.img, true, -1);
	a = addr_of("f", 2);
	rw_write_pat(FS, M, "f", 2 * 4096, 10, 2);
	RW_OK(uf2fs_fsync(FS, f, true));
	if (addr_of("f", 2) == a || stat_of(IPU_STAT))
		RW_FAIL("mode=lfs wrote in place");
	rw_unmount(FS);
	FS = mount_with(C.img, false, 0);
	a = addr_of("f", 2);
	rw_write_pat(FS, M, "f", 2 * 4096, 10, 3);
	RW_OK(uf2fs_fsync(FS, f, true));
	if (addr_of("f", 2) == a || stat_of(IPU_STAT))
		RW_FAIL("ipu_policy=0 wrote in place");
	rw_unmount(FS);
	FS = mount_with(C.img, false, 1);
	a = addr_of("f", 2);
	rw_write_pat(FS, M, "f", 0, 32 << 10, 4);
	RW_OK(uf2fs_sync(FS));
	if (addr_of("f", 2) != a || stat_of(IPU_STAT) != 8)
		RW_FAIL("ipu_policy=1 (force): block 2 at %u, was %u; %llu in place, want 8",
			addr_of("f", 2), a, (unsigned long long)stat_of(IPU_STAT));
	/* the kernel refuses IPU in LFS mode */
	{
		struct uf2fs_options o;
		struct uf2fs *fs2 = NULL;

		rw_unmount(FS);
		uf2fs_default_options(&o);
		o.device = C.img;
		o.read_only = false;
		o.mode_lfs = true;
		o.ipu_policy = 0x10;
		o.quiet = true;
		RW_EXPECT(uf2fs_mount(&o, &fs2), -EINVAL);
		FS = rw_mount(C.img, false);
	}
	end();
}

/*
 * A 64 MiB image nearly full, every other file deleted: new files go into
 * the freed slots of used segments (SSR) instead of needing clean segments
 * made by garbage collection.
 */
static void t_ssr_near_full(void **state)
{
	struct statvfs st;
	uint64_t files, ssr, gc;
	char p[64];

	begin_feat("ssr_near_full", RW_FEATURES_DEFAULT, 64);
	rw_unmount(FS);
	FS = mount_with(C.img, false, -1);
	RW_OK(uf2fs_statfs(FS, &st));
	files = st.f_bfree * 85 / 100 / 64;	/* 256 KiB each */
	for (uint64_t i = 0; i < files; i++) {
		snprintf(p, sizeof(p), "f%" PRIu64, i);
		rw_create(FS, M, p, S_IFREG | 0644, 0, NULL);
		rw_write_pat(FS, M, p, 0, 256 << 10, 100 + i);
	}
	RW_OK(uf2fs_sync(FS));
	for (uint64_t i = 0; i < files; i += 2) {
		snprintf(p, sizeof(p), "f%" PRIu64, i);
		RW_OK(uf2fs_unlink(FS, uf2fs_root_ino(FS), NAME(p)));
		model_del(M, p);
	}
	RW_OK(uf2fs_sync(FS));
	ssr = stat_of(SSR_STAT);
	gc = stat_of(GC_STAT);
	for (uint64_t i = 0; i < files / 2; i++) {
		snprintf(p, sizeof(p), "g%" PRIu64, i);
		rw_create(FS, M, p, S_IFREG | 0644, 0, NULL);
		rw_write_pat(FS, M, p, 0, 200 << 10, 1000 + i);
		if (i % 8 == 7)
			RW_OK(uf2fs_sync(FS));
	}
	RW_OK(uf2fs_sync(FS));
	if (stat_of(SSR_STAT) <= ssr)
		RW_FAIL("no SSR segment was used (%llu before, %llu after)",
			(unsigned long long)ssr, (unsigned long long)stat_of(SSR_STAT));
	if (stat_of(GC_STAT) != gc)
		RW_FAIL("garbage collection ran (%llu segments before, %llu after)",
			(unsigned long long)gc, (unsigned long long)stat_of(GC_STAT));
	remount_rw();
	verify_phase("rw remount after SSR");
	end();
}

/* Append to path in chunks until ENOSPC; returns the bytes written. */
static uint64_t fill_file(const char *path, size_t chunk, uint64_t seed)
{
	struct mnode *n = model_get(M, path);
	uint32_t ino = ino_of(path);
	uint8_t *buf = malloc(chunk);
	uint64_t off = n->size, done = 0;

	assert_non_null(buf);
	for (;;) {
		ssize_t w;

		rw_fill(buf, chunk, seed++);
		w = uf2fs_write(FS, ino, buf, chunk, off);
		if (w == -ENOSPC)
			break;
		if (w <= 0)
			RW_FAIL("write(%s, %zu at %" PRIu64 ") = %zd", path, chunk, off, w);
		mnode_write(n, off, buf, w);
		off += w;
		done += w;
	}
	free(buf);
	return done;
}

/*
 * A 64 MiB image takes nearly what statfs says is free (the kernel's user
 * block budget), not only what is left after the reserved segments.
 */
static void t_fill_small(void **state)
{
	struct statvfs st, end_st;
	uint64_t free_bytes, done;

	begin_feat("fill_small", RW_FEATURES_DEFAULT, 64);
	RW_OK(uf2fs_statfs(FS, &st));
	free_bytes = (uint64_t)st.f_bfree * st.f_frsize;
	rw_create(FS, M, "big", S_IFREG | 0644, 0, NULL);
	done = fill_file("big", 256 << 10, 1);
	rw_create(FS, M, "tail", S_IFREG | 0644, 0, NULL);
	done += fill_file("tail", 4096, 5000);
	RW_OK(uf2fs_sync(FS));
	RW_OK(uf2fs_statfs(FS, &end_st));
	if (done < free_bytes * 95 / 100)
		RW_FAIL("wrote %llu of %llu free bytes (%.1f%%) before ENOSPC",
			(unsigned long long)done, (unsigned long long)free_bytes,
			100.0 * done / free_bytes);
	print_message("  filled %.1f%% of the %llu free bytes; statfs now %llu blocks free\n",
		      100.0 * done / free_bytes, (unsigned long long)free_bytes,
		      (unsigned long long)end_st.f_bfree);
	/* full, the space comes back: delete and fill again */
	remount_rw();
	verify_phase("full, rw remount");
	RW_OK(uf2fs_unlink(FS, uf2fs_root_ino(FS), NAME("big")));
	model_del(M, "big");
	RW_OK(uf2fs_sync(FS));
	rw_create(FS, M, "again", S_IFREG | 0644, 0, NULL);
	done = fill_file("again", 64 << 10, 9000);
	if (done < free_bytes * 80 / 100)
		RW_FAIL("after deleting the big file only %llu bytes fit again",
			(unsigned long long)done);
	end();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_create_types),
		cmocka_unit_test(t_mkdir_nlink),
		cmocka_unit_test(t_symlink),
		cmocka_unit_test(t_link),
		cmocka_unit_test(t_unlink),
		cmocka_unit_test(t_rmdir),
		cmocka_unit_test(t_rename),
		cmocka_unit_test(t_rename_into_descendant),
		cmocka_unit_test(t_setattr),
		cmocka_unit_test(t_ctime_floor),
		cmocka_unit_test(t_write_inline),
		cmocka_unit_test(t_write_sizes),
		cmocka_unit_test(t_write_sparse),
		cmocka_unit_test(t_fallocate),
		cmocka_unit_test(t_fallocate_space),
		cmocka_unit_test(t_fallocate_full),
		cmocka_unit_test(t_shift),
		cmocka_unit_test(t_shift_nodes),
		cmocka_unit_test(t_shift_space),
		cmocka_unit_test(t_shift_sparse),
		cmocka_unit_test(t_setgid),
		cmocka_unit_test(t_unlink_open),
		cmocka_unit_test(t_unlink_open_unmount),
		cmocka_unit_test(t_names),
		cmocka_unit_test(t_bigdir),
		cmocka_unit_test(t_erofs),
		cmocka_unit_test(t_times),
		cmocka_unit_test(t_atime),
		cmocka_unit_test(t_xattr),
		cmocka_unit_test(t_acl),
		cmocka_unit_test(t_flags),
		cmocka_unit_test(t_features_none),
		cmocka_unit_test(t_features_more),
		cmocka_unit_test(t_small_image),
		cmocka_unit_test(t_ipu_fsync),
		cmocka_unit_test(t_ipu_modes),
		cmocka_unit_test(t_ssr_near_full),
		cmocka_unit_test(t_fill_small),
	};
	int failures;

	if (system("command -v mkfs.f2fs >/dev/null && command -v fsck.f2fs >/dev/null") != 0) {
		printf("SKIP: f2fs-tools (mkfs.f2fs, fsck.f2fs) not installed\n");
		return 77;
	}
	rw_tmp_init("rw-api");
	/* RW_TEST=t_fill_small (a glob) runs only the matching scenarios */
	if (getenv("RW_TEST"))
		cmocka_set_test_filter(getenv("RW_TEST"));
	failures = cmocka_run_group_tests(tests, NULL, NULL);
	rw_tmp_done(failures);
	return failures ? 1 : 0;
}
