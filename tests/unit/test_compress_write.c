// SPDX-License-Identifier: GPL-2.0
/*
 * Writing compressed files through the library (lib/compress_write.c), on
 * fresh "mkfs.f2fs -O extra_attr,compression" images, for every algorithm
 * (lz4, LZ4HC, zstd at two levels, lzo, lzo-rle) and cluster sizes of 4 to
 * 256 blocks, with and without compress_chksum.
 *
 * Files become compressed the three ways Linux makes them: chattr +c on an
 * empty file (uf2fs_set_flags), creation in a +c directory, and a
 * compress_extension. They get compressible and incompressible data,
 * overwrites of middle ranges, appends, truncation inside a cluster (the
 * cluster is decompressed, cut and stored again), growth past a cut, holes,
 * deletion, and garbage collection. Everything is recorded in the model of
 * test_rw_common.h and verified on the mount, after a remount from disk, and
 * read-only; fsck.f2fs -f must call every image clean, which includes
 * i_compr_blocks, i_blocks and the valid block count matching the cluster
 * layouts. i_compr_blocks (F2FS_IOC_GET_COMPRESS_BLOCKS) shows that the
 * compressible files really were stored compressed and the random ones not.
 *
 * Env: UF2FS_TMPDIR/TMPDIR for the images, KEEP_TMP=1 keeps them.
 */
#include "test_rw_common.h"

#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))

struct algo_case {
	const char *name;
	enum uf2fs_compress_algorithm algo;
	unsigned int level, log_size;
	bool chksum;
};

static const struct algo_case cases[] = {
	{ "lz4", UF2FS_COMPRESS_LZ4, 0, 2, false },
	{ "lz4hc", UF2FS_COMPRESS_LZ4, 9, 3, true },
	{ "zstd", UF2FS_COMPRESS_ZSTD, 0, 2, false },
	{ "zstd-l10", UF2FS_COMPRESS_ZSTD, 10, 4, true },
	{ "lzo", UF2FS_COMPRESS_LZO, 0, 2, false },
	{ "lzo-rle", UF2FS_COMPRESS_LZORLE, 0, 2, false },
	{ "lzo-rle-l5", UF2FS_COMPRESS_LZORLE, 0, 5, true },
	{ "lz4-l8", UF2FS_COMPRESS_LZ4, 0, 8, false },
};

#define COMPR_FEATURES "extra_attr,compression"

struct ctx {
	char img[PATH_MAX];
	struct uf2fs *fs;
	struct model m;
	struct uf2fs_options o;
	const struct algo_case *ac;
};

static struct ctx C;

#define FS (C.fs)
#define M (&C.m)

static void mount_rw(void)
{
	C.o.read_only = false;
	C.fs = rw_mount_opts(&C.o);
}

static void begin(const char *test, const struct algo_case *ac, unsigned int mb)
{
	memset(&C, 0, sizeof(C));
	C.ac = ac;
	snprintf(rw_context, sizeof(rw_context), "test %s, %s, cluster 2^%u blocks%s", test,
		 ac->name, ac->log_size, ac->chksum ? ", chksum" : "");
	rw_img_path(C.img, sizeof(C.img), test);
	rw_mkfs(C.img, mb, COMPR_FEATURES);
	uf2fs_default_options(&C.o);
	C.o.device = C.img;
	C.o.compress.algorithm = ac->algo;
	C.o.compress.level = ac->level;
	C.o.compress.log_size = ac->log_size;
	C.o.compress.chksum = ac->chksum;
	mount_rw();
	model_init(&C.m);
}

/* Verify, unmount, fsck, remount read-write (everything from disk), verify. */
static void cycle(const char *when)
{
	char what[128];

	snprintf(what, sizeof(what), "%s, on the mount", when);
	RW_VERIFY(FS, M, what);
	rw_unmount(FS);
	FS = NULL;
	RW_FSCK(C.img);
	mount_rw();
	snprintf(what, sizeof(what), "%s, after a remount", when);
	RW_VERIFY(FS, M, what);
}

static void end(void)
{
	cycle("end");
	rw_cycle_verify(&C.fs, C.img, M);
	model_free(M);
	rw_context[0] = 0;
}

static uint64_t cluster_bytes(void)
{
	return (uint64_t)4096 << C.ac->log_size;
}

/* Compressible bytes: words from a small vocabulary, seeded. */
static void fill_text(uint8_t *buf, size_t len, uint64_t seed)
{
	static const char *const words[] = {
		"flash ", "friendly ", "file ", "system ", "cluster ", "segment ",
		"checkpoint ", "node ", "compress ", "log\n",
	};
	uint64_t s = seed;
	size_t i = 0;

	while (i < len) {
		const char *w = words[rw_splitmix(&s) % 10];
		size_t n = strlen(w) < len - i ? strlen(w) : len - i;

		memcpy(buf + i, w, n);
		i += n;
	}
}

static void write_text(const char *path, uint64_t off, size_t len, uint64_t seed)
{
	uint8_t *buf = malloc(len ? len : 1);

	fill_text(buf, len, seed);
	rw_write(FS, M, path, off, buf, len);
	free(buf);
}

/* Incompressible bytes (rw_fill sets a bit in every byte, which compresses a little). */
static void write_random(const char *path, uint64_t off, size_t len, uint64_t seed)
{
	uint8_t *buf = malloc(len + 8);
	uint64_t s = seed;

	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = rw_splitmix(&s);

		memcpy(buf + i, &v, 8);
	}
	rw_write(FS, M, path, off, buf, len);
	free(buf);
}

static uint32_t flags_of(const char *path)
{
	uint32_t fl = 0;

	RW_OK(uf2fs_get_flags(FS, rw_ino(FS, path), &fl));
	return fl;
}

static uint64_t compr_blocks(const char *path)
{
	uint64_t n = 0;

	RW_OK(uf2fs_get_compress_blocks(FS, rw_ino(FS, path), &n));
	return n;
}

/* A regular file made compressed by chattr +c while empty. */
static void create_compressed(const char *path)
{
	uint32_t ino = rw_create(FS, M, path, S_IFREG | 0644, 0, NULL);

	RW_OK(uf2fs_set_flags(FS, ino, FS_COMPR_FL));
	if (!(flags_of(path) & FS_COMPR_FL))
		RW_FAIL("%s: no FS_COMPR_FL after chattr +c", path);
}

static void unlink_path(const char *path)
{
	RW_OK(uf2fs_unlink(FS, uf2fs_root_ino(FS), path, strlen(path)));
	model_del(M, path);
}

/// The scenario every algorithm runs ///

static void t_algo(const struct algo_case *ac)
{
	uint64_t cb, cbytes;
	struct uf2fs_attr a;

	begin(ac->name, ac, 256);
	cbytes = cluster_bytes();

	/* compressible, incompressible, and a mix of both */
	create_compressed("text");
	write_text("text", 0, 1 << 20, 1);
	create_compressed("random");
	write_random("random", 0, 300000, 2);
	/* at least two whole clusters of each, whatever the cluster size */
	create_compressed("mixed");
	for (int i = 0; i < 16; i++) {
		size_t seg = MAX(40000, cbytes / 6);

		if (i % 3)
			write_text("mixed", i * seg, seg, 10 + i);
		else
			write_random("mixed", i * seg, seg, 10 + i);
	}
	/* all zeroes, and a sparse file with data at odd places */
	create_compressed("zeros");
	{
		size_t zlen = MAX(200000, 2 * cbytes + 5);
		uint8_t *z = calloc(1, zlen);

		rw_write(FS, M, "zeros", 0, z, zlen);
		free(z);
	}
	/*
	 * Holes stay within the inode and its direct nodes: fsck.f2fs 1.15
	 * misplaces what follows a missing direct node inside an indirect node
	 * of a compressed file (fixed upstream in "f2fs: should use inode when
	 * updating file offset", 2023); Linux's own files trip it just the same.
	 */
	create_compressed("sparse");
	write_text("sparse", 5 * cbytes + 100, 3000, 3);
	write_text("sparse", MIN(40 * cbytes, 2000 * 4096) - 10, 20, 4);

	RW_OK(uf2fs_sync(FS));
	cb = compr_blocks("text");
	if (!cb)
		RW_FAIL("text: nothing was stored compressed (i_compr_blocks 0)");
	/* 1 MiB of words compresses at least 2:1 with every algorithm */
	if (cb < (1u << 20) / 4096 / 2)
		RW_FAIL("text: i_compr_blocks %" PRIu64 ", expected at least 128", cb);
	if (compr_blocks("random"))
		RW_FAIL("random: i_compr_blocks %" PRIu64 ", want 0 (incompressible)",
			compr_blocks("random"));
	if (!compr_blocks("zeros") || !compr_blocks("mixed"))
		RW_FAIL("zeros/mixed: no compressed cluster");
	/* as the kernel: the saved slots stay reserved, i_blocks counts whole clusters */
	RW_OK(uf2fs_getattr(FS, rw_ino(FS, "text"), &a));
	if (a.blocks != (1u << 20) / 512)
		RW_FAIL("text: st_blocks %" PRIu64 ", want %u", a.blocks, (1u << 20) / 512);
	cycle("written");

	/* overwrites inside, across and at the edges of clusters */
	write_text("text", 5000, 3000, 20);
	write_text("text", cbytes - 7, 14, 21);
	write_text("text", 3 * cbytes, cbytes, 22);
	write_random("text", 10 * cbytes + 4096, 4096, 23);	/* one block turns random */
	write_text("random", 4096, 8192, 24);	/* random turns partly text */
	write_random("mixed", 100000, 70000, 25);
	write_text("zeros", 1, 1, 26);
	cycle("overwritten");

	/* appends: block-unaligned, then past a cluster boundary */
	write_text("text", 1 << 20, 1000, 30);
	write_text("text", (1 << 20) + 1000, 3 * cbytes + 5, 31);
	write_random("random", 300000, 5000, 32);
	RW_OK(uf2fs_sync(FS));
	write_text("text", M->d[model_index(M, "text")].n->size, 777, 33);
	cycle("appended");

	/* truncation inside a compressed cluster, then growth over the cut */
	rw_truncate(FS, M, "text", 7 * cbytes + 1234);
	rw_truncate(FS, M, "mixed", 5 * cbytes + 4096);
	rw_truncate(FS, M, "zeros", 100);
	RW_OK(uf2fs_sync(FS));
	rw_truncate(FS, M, "text", 9 * cbytes);
	write_text("mixed", 8 * cbytes + 10, 50, 40);
	cycle("truncated");

	/* truncation to cluster boundaries and to nothing, rewrite after that */
	rw_truncate(FS, M, "text", 4 * cbytes);
	rw_truncate(FS, M, "random", 0);
	write_random("random", 0, 20000, 41);
	write_text("random", 20000, 2 * cbytes, 42);
	cycle("cut to clusters");

	/* whole clusters written again: the compressed ones stay compressed */
	for (int i = 0; i < 4; i++)
		write_text("text", i * cbytes, cbytes, 50 + i);
	RW_OK(uf2fs_sync(FS));
	if (!compr_blocks("text"))
		RW_FAIL("text: no compressed cluster after rewriting whole clusters");

	unlink_path("mixed");
	unlink_path("sparse");
	end();
}

/// Where compression comes from, and what cannot be done ///

static void t_inherit(void)
{
	const struct algo_case *ac = &cases[0];
	uint32_t dir, ino, fl;
	struct uf2fs_attr a = { .size = 0 };

	begin("inherit", ac, 128);
	dir = rw_create(FS, M, "cdir", S_IFDIR | 0755, 0, NULL);
	RW_OK(uf2fs_set_flags(FS, dir, FS_COMPR_FL));
	rw_create(FS, M, "cdir/file", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "cdir/sub", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "cdir/sub/deep", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "cdir/link", S_IFLNK, 0, "file");
	rw_create(FS, M, "cdir/fifo", S_IFIFO | 0644, 0, NULL);
	/* "db" is a hot extension of mkfs.f2fs: the kernel never compresses it */
	rw_create(FS, M, "cdir/x.db", S_IFREG | 0644, 0, NULL);
	if (!(flags_of("cdir/file") & FS_COMPR_FL) || !(flags_of("cdir/sub") & FS_COMPR_FL) ||
	    !(flags_of("cdir/sub/deep") & FS_COMPR_FL))
		RW_FAIL("the +c directory did not pass compression on");
	if ((flags_of("cdir/link") | flags_of("cdir/fifo") | flags_of("cdir/x.db")) & FS_COMPR_FL)
		RW_FAIL("a symlink, fifo or hot file inherited compression");
	/* inline data never lives in a compressed inode: even 10 bytes go to a cluster */
	write_text("cdir/file", 0, 10, 1);
	write_text("cdir/sub/deep", 0, 200000, 2);
	write_text("cdir/x.db", 0, 100000, 3);
	RW_OK(uf2fs_getattr(FS, rw_ino(FS, "cdir/file"), &a));
	if (a.flags & FS_INLINE_DATA_FL)
		RW_FAIL("cdir/file: compressed but inline");

	/* NOCOMP on a directory wins for what is made in it */
	dir = rw_create(FS, M, "ndir", S_IFDIR | 0755, 0, NULL);
	RW_OK(uf2fs_set_flags(FS, dir, FS_NOCOMP_FL));
	rw_create(FS, M, "ndir/f", S_IFREG | 0644, 0, NULL);
	fl = flags_of("ndir/f");
	if ((fl & FS_COMPR_FL) || !(fl & FS_NOCOMP_FL))
		RW_FAIL("ndir/f: flags %#x, want FS_NOCOMP_FL only", fl);
	RW_EXPECT(uf2fs_set_flags(FS, dir, FS_COMPR_FL | FS_NOCOMP_FL), -EINVAL);

	/* chattr +c: only while empty; -c only while without blocks */
	ino = rw_create(FS, M, "plain", S_IFREG | 0644, 0, NULL);
	write_text("plain", 0, 10000, 4);
	RW_EXPECT(uf2fs_set_flags(FS, ino, FS_COMPR_FL), -EINVAL);
	ino = rw_create(FS, M, "inline", S_IFREG | 0644, 0, NULL);
	write_text("inline", 0, 100, 5);
	RW_EXPECT(uf2fs_set_flags(FS, ino, FS_COMPR_FL), -EINVAL);
	ino = rw_ino(FS, "cdir/sub/deep");
	RW_EXPECT(uf2fs_set_flags(FS, ino, 0), -EINVAL);
	/* a sparse empty file may go either way */
	ino = rw_create(FS, M, "holes", S_IFREG | 0644, 0, NULL);
	rw_truncate(FS, M, "holes", 1 << 20);
	RW_OK(uf2fs_set_flags(FS, ino, FS_COMPR_FL));
	RW_OK(uf2fs_set_flags(FS, ino, 0));
	RW_OK(uf2fs_set_flags(FS, ino, FS_COMPR_FL));
	write_text("holes", 300000, 5000, 6);
	RW_EXPECT(uf2fs_get_compress_blocks(FS, rw_ino(FS, "plain"), &(uint64_t){ 0 }), -EINVAL);

	/* as the kernel: no punching or zeroing of clusters; preallocation is fine */
	ino = rw_ino(FS, "cdir/sub/deep");
	RW_EXPECT(uf2fs_fallocate(FS, ino, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096),
		  -EOPNOTSUPP);
	RW_EXPECT(uf2fs_fallocate(FS, ino, FALLOC_FL_ZERO_RANGE, 0, 4096), -EOPNOTSUPP);
	RW_OK(uf2fs_fallocate(FS, ino, 0, 150000, 200000));
	mnode_truncate(model_get(M, "cdir/sub/deep"), 350000);
	RW_OK(uf2fs_fallocate(FS, ino, FALLOC_FL_KEEP_SIZE, 350000, 100000));
	write_text("cdir/sub/deep", 340000, 20000, 7);
	cycle("made");
	if (!(flags_of("cdir/file") & FS_COMPR_FL) || !compr_blocks("cdir/sub/deep"))
		RW_FAIL("compression lost over a remount");
	end();
}

static void t_extension(void)
{
	struct algo_case ac = { "zstd-ext", UF2FS_COMPRESS_ZSTD, 3, 2, false };

	memset(&C, 0, sizeof(C));
	begin("extension", &ac, 128);
	rw_unmount(FS);
	strcpy(C.o.compress.ext[0], "txt");
	strcpy(C.o.compress.ext[1], "LOG");
	C.o.compress.nr_ext = 2;
	mount_rw();
	rw_create(FS, M, "a.txt", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "b.log", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "c.txt.bak", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "txt", S_IFREG | 0644, 0, NULL);
	if (!(flags_of("a.txt") & FS_COMPR_FL) || !(flags_of("b.log") & FS_COMPR_FL))
		RW_FAIL("compress_extension did not apply");
	if ((flags_of("c.txt.bak") | flags_of("txt")) & FS_COMPR_FL)
		RW_FAIL("compress_extension matched more than \"name.ext\"");
	write_text("a.txt", 0, 500000, 1);
	write_text("b.log", 0, 300000, 2);
	write_text("c.txt.bak", 0, 300000, 3);
	RW_OK(uf2fs_sync(FS));
	if (!compr_blocks("a.txt") || !compr_blocks("b.log"))
		RW_FAIL("a.txt/b.log not stored compressed");
	end();
}

/* Random writes, truncations and remounts against the model, then GC. */
static void t_random(void)
{
	struct algo_case ac = { "lz4-random", UF2FS_COMPRESS_LZ4, 0, 3, true };
	const char *names[] = { "r0", "r1", "r2" };
	uint64_t s = 12345;

	begin("random", &ac, 128);
	for (int i = 0; i < 3; i++)
		create_compressed(names[i]);
	for (int op = 0; op < 300; op++) {
		const char *p = names[rw_splitmix(&s) % 3];
		struct mnode *n = model_get(M, p);
		uint64_t r = rw_splitmix(&s), size = n->size;
		uint64_t off = size ? rw_splitmix(&s) % (size + 100000) : rw_splitmix(&s) % 100000;
		size_t len = 1 + rw_splitmix(&s) % 70000;

		snprintf(rw_context, sizeof(rw_context), "test random, op %d on %s", op, p);
		switch (r % 8) {
		case 0: case 1: case 2:
			write_text(p, off, len, r);
			break;
		case 3:
			write_random(p, off, len, r);
			break;
		case 4:
			write_text(p, size, len, r);
			break;
		case 5:
			rw_truncate(FS, M, p, size ? rw_splitmix(&s) % (size + 1) : 0);
			break;
		case 6:
			rw_truncate(FS, M, p, size + rw_splitmix(&s) % 50000);
			break;
		case 7:
			RW_OK(uf2fs_sync(FS));
			break;
		}
		if (op % 75 == 74)
			cycle("random ops");
	}
	/* garbage collection moves compressed blocks without decoding them */
	RW_OK(uf2fs_sync(FS));
	for (int i = 0; i < 20; i++) {
		int ret = uf2fs_gc(FS, true);

		if (ret && ret != -EAGAIN)
			RW_FAIL("uf2fs_gc = %d", ret);
	}
	cycle("after gc");
	end();
}

#define ALGO_TEST(i) static void t_algo_##i(void **state) { t_algo(&cases[i]); }
ALGO_TEST(0)
ALGO_TEST(1)
ALGO_TEST(2)
ALGO_TEST(3)
ALGO_TEST(4)
ALGO_TEST(5)
ALGO_TEST(6)
ALGO_TEST(7)
_Static_assert(sizeof(cases) / sizeof(cases[0]) == 8, "one ALGO_TEST per case");

static void t_inherit_case(void **state)
{
	t_inherit();
}

static void t_extension_case(void **state)
{
	t_extension();
}

static void t_random_case(void **state)
{
	t_random();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_algo_0),
		cmocka_unit_test(t_algo_1),
		cmocka_unit_test(t_algo_2),
		cmocka_unit_test(t_algo_3),
		cmocka_unit_test(t_algo_4),
		cmocka_unit_test(t_algo_5),
		cmocka_unit_test(t_algo_6),
		cmocka_unit_test(t_algo_7),
		cmocka_unit_test(t_inherit_case),
		cmocka_unit_test(t_extension_case),
		cmocka_unit_test(t_random_case),
	};
	int failures;

	if (system("command -v mkfs.f2fs >/dev/null && command -v fsck.f2fs >/dev/null") != 0) {
		printf("SKIP: f2fs-tools (mkfs.f2fs, fsck.f2fs) not installed\n");
		return 77;
	}
	rw_tmp_init("compress-write");
	failures = cmocka_run_group_tests(tests, NULL, NULL);
	rw_tmp_done(failures);
	return failures ? 1 : 0;
}
