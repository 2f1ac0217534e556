// SPDX-License-Identifier: GPL-2.0
/*
 * Compressed files in encrypted directories (issue 10), read-write. Linux
 * compresses a cluster, then encrypts each compressed block as the file
 * block of the slot it occupies (the slot after COMPRESS_ADDR is the
 * cluster's block 1); a cluster that does not compress is stored as plain
 * encrypted blocks. For three policies (v2 AES-256-XTS, v2 IV_INO_LBLK_64,
 * v1 Adiantum DIRECT_KEY) and the four algorithms: write, overwrite,
 * append, partial-cluster truncate and growth, punch (refused, as Linux),
 * garbage collection of the compressed ciphertext, chattr +c in an
 * encrypted directory, +c inherited into an encrypted tree and a
 * compress_extension matched on the plaintext name. Each case ends with a
 * remount compare, fsck.f2fs -f, and a look at the disk without the key:
 * no compressed cluster header and no plaintext block may be visible.
 */
#include "test_rw_common.h"

#include <linux/fscrypt.h>

#define FEATURES RW_FEATURES_DEFAULT ",encrypt,compression"
#define BS 4096
#define LOG_CS 2
#define CS (1u << LOG_CS)
#define CBYTES ((uint64_t)BS << LOG_CS)
#define COMPRESS_SLOT 0xfffffffeu	/* COMPRESS_ADDR */

struct policy_case {
	const char *name;
	struct uf2fs_fscrypt_policy pol;
};

static const struct policy_case policies[] = {
	{ "v2-xts", { .version = FSCRYPT_POLICY_V2, .contents_mode = FSCRYPT_MODE_AES_256_XTS,
		      .filenames_mode = FSCRYPT_MODE_AES_256_CTS,
		      .flags = FSCRYPT_POLICY_FLAGS_PAD_32 } },
	{ "v2-lblk64", { .version = FSCRYPT_POLICY_V2, .contents_mode = FSCRYPT_MODE_AES_256_XTS,
			 .filenames_mode = FSCRYPT_MODE_AES_256_CTS,
			 .flags = FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 } },
	{ "v1-adiantum", { .version = 1,	/* the context version, not FSCRYPT_POLICY_V1 */
			    .contents_mode = FSCRYPT_MODE_ADIANTUM,
			   .filenames_mode = FSCRYPT_MODE_ADIANTUM,
			   .flags = FSCRYPT_POLICY_FLAG_DIRECT_KEY } },
};

static const struct {
	const char *name;
	enum uf2fs_compress_algorithm algo;
	bool chksum;
} algos[] = {
	{ "lz4", UF2FS_COMPRESS_LZ4, false },
	{ "zstd", UF2FS_COMPRESS_ZSTD, true },
	{ "lzo", UF2FS_COMPRESS_LZO, false },
	{ "lzo-rle", UF2FS_COMPRESS_LZORLE, true },
};

static struct uf2fs *FS;
static struct model *M;
static char IMG[PATH_MAX];
static struct uf2fs_options O;
static const struct policy_case *P;
static uint8_t KEY[64], KEY_ID[16];
static const uint8_t DESC[8] = "cryptcmp";

static void mount_rw(void)
{
	O.read_only = false;
	FS = rw_mount_opts(&O);
}

static void add_key(void)
{
	uint8_t id[16];

	if (P->pol.version == 1) {
		RW_OK(uf2fs_add_key(FS, KEY, sizeof(KEY), DESC, id));
	} else {
		RW_OK(uf2fs_add_key(FS, KEY, sizeof(KEY), NULL, id));
		/* v2 policies name the key by its identifier */
		memcpy(KEY_ID, id, 16);
	}
}

static void set_policy(const char *dir)
{
	struct uf2fs_fscrypt_policy pol = P->pol;

	memset(pol.key_spec, 0, sizeof(pol.key_spec));
	if (pol.version == 1)
		memcpy(pol.key_spec, DESC, 8);
	else
		memcpy(pol.key_spec, KEY_ID, 16);
	RW_OK(uf2fs_set_policy(FS, rw_ino(FS, dir), &pol));
}

static uint32_t addr_of(const char *path, uint64_t lblk)
{
	uint32_t a = 0;

	RW_OK(uf2fs_test_block_addr(FS, rw_ino(FS, path), lblk, &a));
	return a;
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

/* Compressible bytes: words from a small vocabulary, seeded. */
static void write_text(const char *path, uint64_t off, size_t len, uint64_t seed)
{
	static const char *const words[] = {
		"encrypted ", "compressed ", "cluster ", "fscrypt ", "f2fs ", "block ",
		"nonce ", "adiantum ", "xts ", "zstd\n",
	};
	uint8_t *buf = malloc(len + 1);
	uint64_t s = seed;
	size_t i = 0;

	while (i < len) {
		const char *w = words[rw_splitmix(&s) % 10];
		size_t n = strlen(w) < len - i ? strlen(w) : len - i;

		memcpy(buf + i, w, n);
		i += n;
	}
	rw_write(FS, M, path, off, buf, len);
	free(buf);
}

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

/* Verify, unmount, fsck, remount with the key, verify. */
static void cycle(const char *when)
{
	char what[128];

	snprintf(what, sizeof(what), "%s, on the mount", when);
	RW_VERIFY(FS, M, what);
	rw_unmount(FS);
	RW_FSCK(IMG);
	mount_rw();
	add_key();
	snprintf(what, sizeof(what), "%s, after a remount", when);
	RW_VERIFY(FS, M, what);
}

/* Where compression comes from: the +c directory, chattr +c, an extension. */
static void make_files(void)
{
	uint32_t ino;

	rw_create(FS, M, "e", S_IFDIR | 0755, 0, NULL);
	set_policy("e");
	RW_OK(uf2fs_set_flags(FS, rw_ino(FS, "e"), FS_COMPR_FL));
	rw_create(FS, M, "e/text", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "e/rand", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "e/sub", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "e/sub/deep", S_IFREG | 0644, 0, NULL);
	/* a +c directory above an encrypted one: its files inherit both */
	rw_create(FS, M, "c", S_IFDIR | 0755, 0, NULL);
	RW_OK(uf2fs_set_flags(FS, rw_ino(FS, "c"), FS_COMPR_FL));
	rw_create(FS, M, "c/enc", S_IFDIR | 0755, 0, NULL);
	set_policy("c/enc");
	rw_create(FS, M, "c/enc/f", S_IFREG | 0644, 0, NULL);
	/* an encrypted directory without +c: chattr +c on an empty file, and extensions */
	rw_create(FS, M, "p", S_IFDIR | 0755, 0, NULL);
	set_policy("p");
	ino = rw_create(FS, M, "p/chattr", S_IFREG | 0644, 0, NULL);
	RW_OK(uf2fs_set_flags(FS, ino, FS_COMPR_FL));
	rw_create(FS, M, "p/notes.txt", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "p/plain", S_IFREG | 0644, 0, NULL);

	if (!(flags_of("e/text") & FS_COMPR_FL) || !(flags_of("e/sub/deep") & FS_COMPR_FL) ||
	    !(flags_of("c/enc/f") & FS_COMPR_FL) || !(flags_of("p/chattr") & FS_COMPR_FL))
		RW_FAIL("a file of an encrypted +c tree is not compressed");
	/* "txt" is matched on the name the user gave, not the encrypted one */
	if (!(flags_of("p/notes.txt") & FS_COMPR_FL))
		RW_FAIL("p/notes.txt: compress_extension txt not applied in an encrypted dir");
	if (flags_of("p/plain") & FS_COMPR_FL)
		RW_FAIL("p/plain: compressed without a reason");
}

static void write_files(void)
{
	write_text("e/text", 0, 256 << 10, 1);
	write_random("e/rand", 0, 40000, 2);
	write_text("e/sub/deep", 0, 5 * CBYTES + 100, 3);
	write_text("c/enc/f", 0, 3 * CBYTES, 4);
	write_text("p/chattr", 0, 2 * CBYTES + 17, 5);
	write_text("p/notes.txt", 0, 4 * CBYTES, 6);
	write_text("p/plain", 0, 3 * BS, 7);
	RW_OK(uf2fs_sync(FS));
	if (compr_blocks("e/text") < (256 << 10) / BS / 2)
		RW_FAIL("e/text: i_compr_blocks %" PRIu64 ", want at least 32",
			compr_blocks("e/text"));
	if (compr_blocks("e/rand"))
		RW_FAIL("e/rand: random data stored compressed");
	if (!compr_blocks("c/enc/f") || !compr_blocks("p/chattr") || !compr_blocks("p/notes.txt"))
		RW_FAIL("a compressible file has no compressed cluster");
	if (addr_of("e/text", 0) != COMPRESS_SLOT)
		RW_FAIL("e/text: cluster 0 is not compressed (slot 0 = %#x)", addr_of("e/text", 0));
}

static void modify_files(void)
{
	/* overwrites inside, across and at the edges of clusters */
	write_text("e/text", 5000, 3000, 20);
	write_text("e/text", CBYTES - 7, 14, 21);
	write_random("e/text", 10 * CBYTES + BS, BS, 22);
	write_text("e/rand", BS, 2 * BS, 23);		/* raw turns partly compressible */
	/* appends, block-unaligned and past a cluster boundary */
	write_text("e/text", 256 << 10, 1000, 24);
	write_text("e/text", (256 << 10) + 1000, CBYTES + 5, 25);
	RW_OK(uf2fs_sync(FS));
	/* truncate inside a compressed cluster (decompress, cut, recompress), then grow */
	rw_truncate(FS, M, "e/sub/deep", 3 * CBYTES + 1234);
	rw_truncate(FS, M, "c/enc/f", 2 * CBYTES + 3 * BS);
	RW_OK(uf2fs_sync(FS));
	rw_truncate(FS, M, "e/sub/deep", 5 * CBYTES);
	write_text("c/enc/f", 4 * CBYTES + 10, 50, 26);
	/* as f2fs_fallocate: clusters cannot be punched, the data stays */
	RW_EXPECT(uf2fs_fallocate(FS, rw_ino(FS, "e/text"),
				  FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, BS, 2 * BS),
		  -EOPNOTSUPP);
	RW_EXPECT(uf2fs_fallocate(FS, rw_ino(FS, "e/text"), FALLOC_FL_ZERO_RANGE, BS, BS),
		  -EOPNOTSUPP);
	/* whole clusters written again stay compressed */
	write_text("p/notes.txt", 0, 2 * CBYTES, 27);
	RW_OK(uf2fs_sync(FS));
	if (addr_of("e/sub/deep", 3 * CS) != COMPRESS_SLOT &&
	    addr_of("p/notes.txt", 0) != COMPRESS_SLOT)
		RW_FAIL("no compressed cluster after the rewrite");
}

/* The raw bytes of every real slot of path's first nblk blocks. */
static uint8_t *read_raw(const char *path, unsigned int nblk, uint32_t *addrs)
{
	uint8_t *buf = calloc(nblk, BS);
	int fd = open(IMG, O_RDONLY);

	assert_true(fd >= 0);
	for (unsigned int b = 0; b < nblk; b++) {
		addrs[b] = addr_of(path, b);
		if (addrs[b] && addrs[b] < 0xfffffffeu &&
		    pread(fd, buf + (size_t)b * BS, BS, (off_t)addrs[b] * BS) != BS)
			RW_FAIL("pread of %s block %u", path, b);
	}
	close(fd);
	return buf;
}

/* The compressed file interleaved on disk with plaintext fillers, which then go. */
static void fragment_and_gc(void)
{
	enum { CHUNK = 8 * BS, ROUNDS = 24, NBLK = ROUNDS * CHUNK / BS };
	uint32_t before[NBLK], after[NBLK];
	uint8_t *raw0, *raw1;
	unsigned int moved = 0, real = 0;
	char p[32];

	/* fillers in the +c directory: compressed files' data shares the cold log */
	rw_create(FS, M, "e/gc", S_IFREG | 0644, 0, NULL);
	for (int i = 0; i < ROUNDS; i++) {
		snprintf(p, sizeof(p), "c/fill%d", i);
		rw_create(FS, M, p, S_IFREG | 0644, 0, NULL);
		write_random(p, 0, CHUNK * 4, 5000 + i);
		RW_OK(uf2fs_fsync(FS, rw_ino(FS, p), false));
		if (i % 3)
			write_text("e/gc", (uint64_t)i * CHUNK, CHUNK, 900 + i);
		else
			write_random("e/gc", (uint64_t)i * CHUNK, CHUNK, 900 + i);
		RW_OK(uf2fs_fsync(FS, rw_ino(FS, "e/gc"), false));
	}
	RW_OK(uf2fs_sync(FS));
	for (int i = 0; i < ROUNDS; i++) {
		snprintf(p, sizeof(p), "fill%d", i);
		RW_OK(uf2fs_unlink(FS, rw_ino(FS, "c"), p, strlen(p)));
		snprintf(p, sizeof(p), "c/fill%d", i);
		model_del(M, p);
	}
	RW_OK(uf2fs_sync(FS));
	raw0 = read_raw("e/gc", NBLK, before);
	for (int i = 0; i < 40; i++) {
		int ret = uf2fs_gc(FS, true);

		if (ret == -EAGAIN)
			break;
		if (ret)
			RW_FAIL("uf2fs_gc = %d (%s)", ret, strerror(-ret));
	}
	RW_OK(uf2fs_sync(FS));
	raw1 = read_raw("e/gc", NBLK, after);
	/* compressed ciphertext is moved as it is: same bytes, same slots */
	for (unsigned int b = 0; b < NBLK; b++) {
		bool real_before = before[b] && before[b] < 0xfffffffeu;

		if (real_before != (after[b] && after[b] < 0xfffffffeu))
			RW_FAIL("e/gc block %u: slot changed kind (%#x -> %#x)", b, before[b],
				after[b]);
		if (!real_before)
			continue;
		real++;
		moved += before[b] != after[b];
		if (memcmp(raw0 + (size_t)b * BS, raw1 + (size_t)b * BS, BS))
			RW_FAIL("e/gc block %u: ciphertext changed when moved %u -> %u", b,
				before[b], after[b]);
	}
	free(raw0);
	free(raw1);
	if (!compr_blocks("e/gc") || moved < real / 2)
		RW_FAIL("gc moved %u of %u blocks of the compressed file", moved, real);
}

/*
 * Without the key: the block after COMPRESS_ADDR would start with struct
 * compress_data (clen, chksum, then 16 reserved zero bytes) in plaintext;
 * other blocks would equal the model's bytes.
 */
static unsigned int check_ciphertext(void)
{
	static const char *const files[] = { "e/text", "e/rand", "e/sub/deep", "c/enc/f",
					     "p/chattr", "p/notes.txt", "e/gc" };
	enum { NF = sizeof(files) / sizeof(files[0]) };
	static const uint8_t zero16[16];
	uint32_t inos[NF];
	uint8_t *blk = malloc(BS);
	unsigned int headers = 0;
	int fd;

	for (size_t f = 0; f < NF; f++)
		inos[f] = rw_ino(FS, files[f]);
	rw_unmount(FS);
	FS = rw_mount(IMG, true);
	fd = open(IMG, O_RDONLY);
	assert_true(fd >= 0);
	for (size_t f = 0; f < NF; f++) {
		struct mnode *n = model_get(M, files[f]);
		bool after_compress = false;

		for (uint64_t b = 0; b * BS < n->size; b++) {
			size_t len = n->size - b * BS < BS ? n->size - b * BS : BS;
			uint32_t a = 0;

			RW_OK(uf2fs_test_block_addr(FS, inos[f], b, &a));
			if (a == COMPRESS_SLOT) {
				after_compress = true;
				continue;
			}
			if (!a || a >= 0xfffffffeu)
				continue;
			if (pread(fd, blk, BS, (off_t)a * BS) != BS)
				RW_FAIL("pread block %u", a);
			if (after_compress) {
				uint32_t clen;

				/* 16 zero bytes by chance: 2^-128 */
				memcpy(&clen, blk, 4);
				if (!memcmp(blk + 8, zero16, 16))
					RW_FAIL("%s block %" PRIu64 " at %u: a plaintext "
						"compressed cluster header (clen %u)", files[f],
						b, a, clen);
				headers++;
			}
			after_compress = false;
			if (!memcmp(blk, n->data + b * BS, len))
				RW_FAIL("%s block %" PRIu64 " at %u holds the plaintext", files[f],
					b, a);
		}
	}
	close(fd);
	RW_EXPECT(uf2fs_read(FS, inos[0], blk, BS, 0), -ENOKEY);
	free(blk);
	rw_unmount(FS);
	mount_rw();
	add_key();
	return headers;
}

static void run_case(const struct policy_case *pc, unsigned int ai)
{
	char name[64];
	struct model m;
	unsigned int headers;

	P = pc;
	M = &m;
	model_init(&m);
	snprintf(name, sizeof(name), "cc-%s-%s", pc->name, algos[ai].name);
	snprintf(rw_context, sizeof(rw_context), "policy %s, %s", pc->name, algos[ai].name);
	rw_fill(KEY, sizeof(KEY), 777 + ai);
	rw_img_path(IMG, sizeof(IMG), name);
	rw_mkfs(IMG, 64, FEATURES);
	uf2fs_default_options(&O);
	O.device = IMG;
	O.background_gc = 0;
	O.compress.algorithm = algos[ai].algo;
	O.compress.log_size = LOG_CS;
	O.compress.chksum = algos[ai].chksum;
	strcpy(O.compress.ext[0], "txt");
	O.compress.nr_ext = 1;
	mount_rw();
	add_key();

	make_files();
	write_files();
	cycle("written");
	modify_files();
	cycle("modified");
	fragment_and_gc();
	cycle("after gc");
	headers = check_ciphertext();
	if (headers < 20)
		RW_FAIL("only %u compressed clusters checked on disk", headers);
	RW_VERIFY(FS, M, "with the key again");
	rw_unmount(FS);
	RW_FSCK(IMG);
	print_message("%s: %u compressed clusters, none readable without the key\n", name,
		      headers);
	model_free(&m);
	rw_context[0] = 0;
}

#define CASE(p, a) \
	static void t_##p##_##a(void **state) { (void)state; run_case(&policies[p], a); }
CASE(0, 0) CASE(0, 1) CASE(0, 2) CASE(0, 3)
CASE(1, 0) CASE(1, 1) CASE(1, 2) CASE(1, 3)
CASE(2, 0) CASE(2, 1) CASE(2, 2) CASE(2, 3)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_0_0), cmocka_unit_test(t_0_1), cmocka_unit_test(t_0_2),
		cmocka_unit_test(t_0_3), cmocka_unit_test(t_1_0), cmocka_unit_test(t_1_1),
		cmocka_unit_test(t_1_2), cmocka_unit_test(t_1_3), cmocka_unit_test(t_2_0),
		cmocka_unit_test(t_2_1), cmocka_unit_test(t_2_2), cmocka_unit_test(t_2_3),
	};
	int failures;

	if (system("command -v mkfs.f2fs >/dev/null && command -v fsck.f2fs >/dev/null") != 0) {
		printf("SKIP: f2fs-tools (mkfs.f2fs, fsck.f2fs) not installed\n");
		return 77;
	}
	rw_tmp_init("crypto-compress");
	failures = cmocka_run_group_tests(tests, NULL, NULL);
	rw_tmp_done(failures);
	return failures ? 1 : 0;
}
