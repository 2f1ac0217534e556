// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the fs-verity Merkle tree and file digest (lib/verity.c),
 * against Debian's fsverity tool (fsverity-utils), which computes both for a
 * plain file: for sizes 0, 1, 4096, 4097, a two-level tree (3 MiB) and a
 * three-level one (17 MiB with SHA-512), with SHA-256 and SHA-512, with and
 * without a salt, the digest must equal `fsverity digest`'s and every tree
 * block and the descriptor must equal what its --out-merkle-tree and
 * --out-descriptor write, byte for byte. Fixtures are made at test time from
 * a fixed pseudo-random stream; Merkle blocks of 1 and 2 KiB too. Also: the
 * tree's shape (levels, where each starts), the parameter checks fs-verity
 * makes, and descriptor parsing (every field fs/verity/open.c rejects).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/fsverity.h>

#include "f2fs.h"
#include "fsverity/fsverity.h"

static char tmpdir[] = "/tmp/uf2fs-verity-XXXXXX";

struct buf_src {
	const uint8_t *data;
	unsigned int bs;
	uint8_t *tree;		/* tree_blocks * bs, filled by emit */
	uint64_t emitted;
};

static ssize_t src_read(void *arg, void *buf, size_t len, uint64_t off)
{
	struct buf_src *s = arg;

	memcpy(buf, s->data + off, len);
	return (ssize_t)len;
}

static int src_emit(void *arg, const void *block, uint64_t index)
{
	struct buf_src *s = arg;

	memcpy(s->tree + index * s->bs, block, s->bs);
	s->emitted++;
	return 0;
}

static uint8_t *make_data(size_t size, uint32_t seed)
{
	uint8_t *d = malloc(size ? size : 1);
	uint64_t x = 0x9E3779B97F4A7C15ull ^ seed;

	assert_non_null(d);
	for (size_t i = 0; i < size; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		d[i] = (uint8_t)x;
	}
	return d;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	b = malloc(n ? (size_t)n : 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* `fsverity digest` of the file: the hex digest, tree and descriptor files. */
static void fsverity_digest(const char *file, const char *alg, const char *salt_hex,
			    unsigned int bs, char *hex, size_t hexlen)
{
	char cmd[1024];
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "fsverity digest --compact --hash-alg=%s --block-size=%u %s%s "
		 "--out-merkle-tree=%s/tree --out-descriptor=%s/desc %s",
		 alg, bs, salt_hex[0] ? "--salt=" : "", salt_hex, tmpdir, tmpdir, file);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(hex, (int)hexlen, p));
	assert_int_equal(pclose(p), 0);
	hex[strcspn(hex, "\n")] = '\0';
}

static void to_hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void check_bs(size_t size, unsigned int alg, const uint8_t *salt, unsigned int salt_len,
		     unsigned int log_bs)
{
	const char *alg_name = alg == FS_VERITY_HASH_ALG_SHA256 ? "sha256" : "sha512";
	char file[256], salt_hex[2 * VERITY_MAX_SALT + 1] = "", want[256], got[256], path[300];
	struct verity_params p;
	struct buf_src src;
	uint8_t root[VERITY_MAX_DIGEST], desc[VERITY_DESC_SIZE], digest[VERITY_MAX_DIGEST];
	uint8_t *tree, *ref;
	size_t ref_len;
	FILE *f;

	src.data = make_data(size, (uint32_t)size ^ alg);
	snprintf(file, sizeof(file), "%s/data", tmpdir);
	f = fopen(file, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(src.data, 1, size, f), size);
	fclose(f);
	to_hex(salt, salt_len, salt_hex);
	fsverity_digest(file, alg_name, salt_hex, 1u << log_bs, want, sizeof(want));

	assert_int_equal(verity_params_init(&p, alg, log_bs, salt, salt_len, size), 0);
	tree = calloc(p.tree_blocks ? p.tree_blocks : 1, p.bs);
	assert_non_null(tree);
	src.tree = tree;
	src.bs = p.bs;
	src.emitted = 0;
	assert_int_equal(verity_build_tree(&p, src_read, src_emit, &src, root), 0);
	assert_int_equal(src.emitted, p.tree_blocks);
	verity_make_descriptor(&p, root, desc);
	assert_int_equal(verity_hash(&p, desc, sizeof(desc), digest), 0);
	to_hex(digest, p.digest_size, got);
	if (strcmp(got, want))
		fail_msg("size %zu %s salt '%s' block %u: digest %s, fsverity says %s", size,
			 alg_name, salt_hex, p.bs, got, want);

	snprintf(path, sizeof(path), "%s/tree", tmpdir);
	ref = slurp(path, &ref_len);
	assert_int_equal(ref_len, p.tree_blocks * p.bs);
	assert_memory_equal(ref, tree, ref_len);
	free(ref);
	snprintf(path, sizeof(path), "%s/desc", tmpdir);
	ref = slurp(path, &ref_len);
	assert_int_equal(ref_len, VERITY_DESC_SIZE);
	assert_memory_equal(ref, desc, ref_len);
	free(ref);
	free(tree);
	free((void *)src.data);
}

static void check_one(size_t size, unsigned int alg, const uint8_t *salt, unsigned int salt_len)
{
	check_bs(size, alg, salt, salt_len, 12);
}

static const size_t sizes[] = { 0, 1, 4096, 4097, 3u << 20 };

static void test_digests_match_fsverity(void **state)
{
	static const uint8_t salt[] = { 0xde, 0xad, 0xbe, 0xef, 0x01 };
	static const uint8_t long_salt[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
					       16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
					       28, 29, 30, 31, 32 };

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		check_one(sizes[i], FS_VERITY_HASH_ALG_SHA256, NULL, 0);
		check_one(sizes[i], FS_VERITY_HASH_ALG_SHA512, NULL, 0);
		check_one(sizes[i], FS_VERITY_HASH_ALG_SHA256, salt, sizeof(salt));
		check_one(sizes[i], FS_VERITY_HASH_ALG_SHA512, salt, sizeof(salt));
	}
	/* a salt of 32 bytes pads to one SHA-256 block, and stays one for SHA-512 */
	check_one(4097, FS_VERITY_HASH_ALG_SHA256, long_salt, sizeof(long_salt));
	check_one(4097, FS_VERITY_HASH_ALG_SHA512, long_salt, sizeof(long_salt));
	/* three levels: 4353 blocks -> 69 -> 2 -> 1 with 64 SHA-512 hashes a block */
	check_one(4353u * 4096 - 100, FS_VERITY_HASH_ALG_SHA512, salt, sizeof(salt));
	/* Merkle blocks of 1 and 2 KiB (Linux 6.3 on): 3 levels of 1 KiB SHA-256 blocks */
	check_bs(1u << 20, FS_VERITY_HASH_ALG_SHA256, salt, sizeof(salt), 10);
	check_bs(4097, FS_VERITY_HASH_ALG_SHA512, NULL, 0, 10);
	check_bs(3u << 20, FS_VERITY_HASH_ALG_SHA512, salt, sizeof(salt), 11);
}

static void test_tree_shape(void **state)
{
	struct verity_params p;

	assert_int_equal(verity_params_init(&p, FS_VERITY_HASH_ALG_SHA256, 12, NULL, 0, 0), 0);
	assert_int_equal(p.num_levels, 0);
	assert_int_equal(p.tree_blocks, 0);
	assert_int_equal(verity_params_init(&p, FS_VERITY_HASH_ALG_SHA256, 12, NULL, 0, 4096), 0);
	assert_int_equal(p.num_levels, 0);
	assert_int_equal(verity_params_init(&p, FS_VERITY_HASH_ALG_SHA256, 12, NULL, 0, 4097), 0);
	assert_int_equal(p.num_levels, 1);
	assert_int_equal(p.tree_blocks, 1);
	/* 129 blocks: level 0 has 2 blocks, level 1 (stored first) 1 */
	assert_int_equal(verity_params_init(&p, FS_VERITY_HASH_ALG_SHA256, 12, NULL, 0,
					    129 * 4096), 0);
	assert_int_equal(p.num_levels, 2);
	assert_int_equal(p.level_start[1], 0);
	assert_int_equal(p.level_start[0], 1);
	assert_int_equal(p.tree_blocks, 3);
	assert_int_equal(verity_params_init(&p, FS_VERITY_HASH_ALG_SHA512, 12, NULL, 0,
					    129 * 4096), 0);
	assert_int_equal(p.tree_blocks, 3 + 1);	/* 3 level-0 blocks under one */
	assert_int_equal(p.digest_size, 64);
	/* the metadata starts at the first 64 KiB boundary at or past EOF */
	assert_int_equal(f2fs_verity_metadata_pos(0), 0);
	assert_int_equal(f2fs_verity_metadata_pos(1), 65536);
	assert_int_equal(f2fs_verity_metadata_pos(65536), 65536);
	assert_int_equal(f2fs_verity_metadata_pos(65537), 131072);
}

static void test_param_checks(void **state)
{
	struct verity_params p;
	uint8_t salt[33] = { 0 };

	assert_int_equal(verity_params_init(&p, 0, 12, NULL, 0, 1), -EINVAL);
	assert_int_equal(verity_params_init(&p, 3, 12, NULL, 0, 1), -EINVAL);
	assert_int_equal(verity_params_init(&p, 1, 9, NULL, 0, 1), -EINVAL);
	assert_int_equal(verity_params_init(&p, 1, 15, NULL, 0, 1), -EINVAL);
	assert_int_equal(verity_params_init(&p, 1, 12, salt, 33, 1), -EMSGSIZE);
	assert_int_equal(verity_params_init(&p, 1, 10, salt, 32, 1), 0);
	assert_int_equal(p.bs, 1024);
	assert_int_equal(p.padded_salt_size, 64);
	assert_int_equal(verity_params_init(&p, 2, 12, salt, 1, 1), 0);
	assert_int_equal(p.padded_salt_size, 128);
}

static void test_descriptor_parse(void **state)
{
	struct verity_params p, q;
	uint8_t root[VERITY_MAX_DIGEST] = { 7 }, out[VERITY_MAX_DIGEST];
	uint8_t desc[VERITY_DESC_SIZE + 8], bad[VERITY_DESC_SIZE + 8];
	const uint8_t salt[] = { 9, 8, 7 };

	assert_int_equal(verity_params_init(&p, 2, 12, salt, sizeof(salt), 5000), 0);
	memset(desc, 0, sizeof(desc));
	verity_make_descriptor(&p, root, desc);
	assert_int_equal(verity_parse_descriptor(&q, desc, VERITY_DESC_SIZE, 5000, out), 0);
	assert_int_equal(q.alg, 2);
	assert_int_equal(q.salt_size, 3);
	assert_memory_equal(q.salt, salt, 3);
	assert_memory_equal(out, root, 64);
	assert_int_equal(q.tree_blocks, p.tree_blocks);
	/* data_size must be i_size */
	assert_int_equal(verity_parse_descriptor(&q, desc, VERITY_DESC_SIZE, 5001, out), -EINVAL);
	/* too short */
	assert_int_equal(verity_parse_descriptor(&q, desc, 255, 5000, out), -EINVAL);
	/* version, algorithm, block size, salt size, reserved bytes, signature size */
	memcpy(bad, desc, sizeof(desc));
	bad[0] = 2;
	assert_int_equal(verity_parse_descriptor(&q, bad, VERITY_DESC_SIZE, 5000, out), -EINVAL);
	memcpy(bad, desc, sizeof(desc));
	bad[1] = 9;
	assert_int_equal(verity_parse_descriptor(&q, bad, VERITY_DESC_SIZE, 5000, out), -EINVAL);
	memcpy(bad, desc, sizeof(desc));
	bad[2] = 20;
	assert_int_equal(verity_parse_descriptor(&q, bad, VERITY_DESC_SIZE, 5000, out), -EINVAL);
	memcpy(bad, desc, sizeof(desc));
	bad[3] = 33;
	assert_int_equal(verity_parse_descriptor(&q, bad, VERITY_DESC_SIZE, 5000, out),
			 -EMSGSIZE);
	memcpy(bad, desc, sizeof(desc));
	bad[200] = 1;
	assert_int_equal(verity_parse_descriptor(&q, bad, VERITY_DESC_SIZE, 5000, out), -EINVAL);
	memcpy(bad, desc, sizeof(desc));
	bad[4] = 9;	/* sig_size 9, only 8 bytes follow */
	assert_int_equal(verity_parse_descriptor(&q, bad, VERITY_DESC_SIZE + 8, 5000, out),
			 -EBADMSG);
	bad[4] = 8;
	assert_int_equal(verity_parse_descriptor(&q, bad, VERITY_DESC_SIZE + 8, 5000, out), 0);
}

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_shape),
		cmocka_unit_test(test_param_checks),
		cmocka_unit_test(test_descriptor_parse),
		cmocka_unit_test(test_digests_match_fsverity),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
