// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the format algorithms in lib/hash.c against blocks written
 * by the real f2fs-tools and the real Linux f2fs: the super block CRC, both
 * checkpoint CRC layouts, inode checksums and the dentry hashes sload.f2fs
 * stored for names of every length class. The blocks live in
 * fixtures/format_blocks.h (gen_format_fixtures.py) and
 * fixtures/kernel_blocks.h (gen_kernel_fixtures.py); the CRC is also
 * checked against a published check value and a bit-by-bit reference.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "uf2fs/format.h"

struct fx_run {
	uint16_t off;
	uint8_t len;
	const char *bytes;
};

struct fx_dentry {
	uint32_t hash;
	uint32_t ino;
	uint16_t len;
	const char *name;
};

#include "fixtures/format_blocks.h"
#include "fixtures/kernel_blocks.h"

#define FX_N(runs) (sizeof(runs) / sizeof((runs)[0]))
#define FX_EXPAND(runs, buf) fx_expand(runs, FX_N(runs), buf, sizeof(buf))

static void fx_expand(const struct fx_run *r, size_t n, uint8_t *out, size_t len)
{
	memset(out, 0, len);
	for (size_t i = 0; i < n; i++) {
		assert_true((size_t)r[i].off + r[i].len <= len);
		memcpy(out + r[i].off, r[i].bytes, r[i].len);
	}
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Bit-at-a-time CRC32 (reflected, poly 0xEDB88320), no inversions. */
static uint32_t ref_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--) {
		crc ^= *p++;
		for (int i = 0; i < 8; i++)
			crc = (crc >> 1) ^ ((crc & 1) ? 0xEDB88320u : 0);
	}
	return crc;
}

/* /// CRC32 /// */

static void test_crc32_check_value(void **state)
{
	/* CRC-32 of "123456789" is 0xCBF43926; without the final inversion, 0x340BC6D9. */
	assert_int_equal(f2fs_crc32(0xFFFFFFFFu, "123456789", 9), 0x340BC6D9u);
	assert_int_equal(~f2fs_crc32(0xFFFFFFFFu, "123456789", 9), 0xCBF43926u);
}

static void test_crc32_empty_is_seed(void **state)
{
	assert_int_equal(f2fs_crc32(F2FS_SUPER_MAGIC, "", 0), F2FS_SUPER_MAGIC);
	assert_int_equal(f2fs_crc32(0, "", 0), 0);
}

static void test_crc32_matches_reference(void **state)
{
	static const uint32_t seeds[] = { 0, 1, 0xFFFFFFFFu, F2FS_SUPER_MAGIC, 0x12345678u };
	uint8_t buf[1000];

	srand(42);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rand();
	for (size_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++)
		for (size_t len = 0; len <= sizeof(buf); len += 37)
			assert_int_equal(f2fs_crc32(seeds[s], buf, len),
					 ref_crc32(seeds[s], buf, len));
}

/* Checksums are built by chaining: crc(crc(s, a), b) must equal crc(s, ab). */
static void test_crc32_chains(void **state)
{
	const char *msg = "flash-friendly file system";
	size_t n = strlen(msg);

	for (size_t cut = 0; cut <= n; cut++)
		assert_int_equal(f2fs_crc32(f2fs_crc32(7, msg, cut), msg + cut, n - cut),
				 f2fs_crc32(7, msg, n));
}

/* /// Super block /// */

static void test_sb_crc_real(void **state)
{
	uint8_t sb[FX_SB_LEN];
	const size_t crc_off = offsetof(struct f2fs_super_block, crc);

	FX_EXPAND(fx_sb_runs, sb);
	assert_int_equal(rd32(sb), F2FS_SUPER_MAGIC);
	assert_int_equal(rd32(sb + offsetof(struct f2fs_super_block, checksum_offset)), crc_off);
	assert_true(rd32(sb + offsetof(struct f2fs_super_block, feature)) &
		    F2FS_FEATURE_SB_CHKSUM);
	assert_int_equal(f2fs_block_crc(sb, crc_off), rd32(sb + crc_off));
}

static void test_sb_crc_detects_flip(void **state)
{
	uint8_t sb[FX_SB_LEN];
	const size_t crc_off = offsetof(struct f2fs_super_block, crc);

	FX_EXPAND(fx_sb_runs, sb);
	for (size_t off = 0; off < crc_off; off += 97) {
		sb[off] ^= 0x10;
		assert_int_not_equal(f2fs_block_crc(sb, crc_off), rd32(sb + crc_off));
		sb[off] ^= 0x10;
	}
}

/* /// Checkpoint /// */

static void test_cp_chksum_tail(void **state)
{
	uint8_t cp[FX_CP_LEN];
	const struct f2fs_checkpoint *ck = (const void *)cp;

	FX_EXPAND(fx_cp_runs, cp);
	assert_int_equal(ck->checksum_offset, CP_CHKSUM_OFFSET);
	assert_int_equal(f2fs_cp_chksum(ck), rd32(cp + CP_CHKSUM_OFFSET));
	cp[100] ^= 1;
	assert_int_not_equal(f2fs_cp_chksum(ck), rd32(cp + CP_CHKSUM_OFFSET));
}

/* With a large NAT bitmap the CRC sits at 192 and the bytes after it count too. */
static void test_cp_chksum_large_nat_bitmap(void **state)
{
	uint8_t cp[FX_CP_LARGE_LEN];
	const struct f2fs_checkpoint *ck = (const void *)cp;
	uint32_t stored;

	FX_EXPAND(fx_cp_large_runs, cp);
	assert_int_equal(ck->checksum_offset, CP_MIN_CHKSUM_OFFSET);
	assert_true(ck->ckpt_flags & CP_LARGE_NAT_BITMAP_FLAG);
	stored = rd32(cp + CP_MIN_CHKSUM_OFFSET);
	assert_int_equal(f2fs_cp_chksum(ck), stored);

	cp[F2FS_BLKSIZE - 1] ^= 0x80;
	assert_int_not_equal(f2fs_cp_chksum(ck), stored);
	cp[F2FS_BLKSIZE - 1] ^= 0x80;
	cp[CP_MIN_CHKSUM_OFFSET + 4] ^= 0x01;
	assert_int_not_equal(f2fs_cp_chksum(ck), stored);
}

/* An absurd checksum_offset must not read outside the block. */
static void test_cp_chksum_bad_offset_stays_in_block(void **state)
{
	uint8_t *cp = malloc(F2FS_BLKSIZE);
	struct f2fs_checkpoint *ck = (void *)cp;

	assert_non_null(cp);
	memset(cp, 0x5a, F2FS_BLKSIZE);
	ck->checksum_offset = 0xFFFFFFF0u;
	assert_int_equal(f2fs_cp_chksum(ck), f2fs_crc32(F2FS_SUPER_MAGIC, cp, F2FS_BLKSIZE));
	free(cp);
}

/* /// Inode checksum /// */

static uint32_t sb_chksum_seed(void)
{
	uint8_t sb[FX_SB_LEN];

	FX_EXPAND(fx_sb_runs, sb);
	return f2fs_crc32(0xFFFFFFFFu, sb + offsetof(struct f2fs_super_block, uuid), 16);
}

static void check_inode(const struct fx_run *runs, size_t n)
{
	struct f2fs_node *node = malloc(sizeof(*node));
	uint32_t seed = sb_chksum_seed();

	assert_non_null(node);
	fx_expand(runs, n, (uint8_t *)node, sizeof(*node));
	assert_true(node->i.i_inline & F2FS_EXTRA_ATTR);
	assert_int_not_equal(node->i.i_inode_checksum, 0);
	assert_int_equal(f2fs_inode_chksum(seed, node), node->i.i_inode_checksum);
	free(node);
}

#define CHECK_INODE(runs) check_inode(runs, FX_N(runs))

static void test_inode_chksum_real(void **state)
{
	CHECK_INODE(fx_root_inode_runs);
	CHECK_INODE(fx_file_inode_runs);
	CHECK_INODE(fx_long_inode_runs);
}

/* The stored checksum is excluded; ino, generation and the footer are not. */
static void test_inode_chksum_coverage(void **state)
{
	struct f2fs_node *node = malloc(sizeof(*node));
	uint32_t seed = sb_chksum_seed(), good;

	assert_non_null(node);
	fx_expand(fx_file_inode_runs, FX_N(fx_file_inode_runs), (uint8_t *)node, sizeof(*node));
	good = f2fs_inode_chksum(seed, node);

	node->i.i_inode_checksum ^= 0xFFFFFFFFu;
	assert_int_equal(f2fs_inode_chksum(seed, node), good);
	node->i.i_inode_checksum ^= 0xFFFFFFFFu;

	node->footer.ino++;
	assert_int_not_equal(f2fs_inode_chksum(seed, node), good);
	node->footer.ino--;
	node->i.i_generation++;
	assert_int_not_equal(f2fs_inode_chksum(seed, node), good);
	node->i.i_generation--;
	node->footer.next_blkaddr ^= 1;
	assert_int_not_equal(f2fs_inode_chksum(seed, node), good);
	node->footer.next_blkaddr ^= 1;
	assert_int_not_equal(f2fs_inode_chksum(seed ^ 1, node), good);
	assert_int_equal(f2fs_inode_chksum(seed, node), good);
	free(node);
}

/* The same checks on blocks the Linux kernel wrote. */
static void test_kernel_blocks(void **state)
{
	uint8_t sb[KFX_SB_LEN], cp[KFX_CP_LEN];
	struct f2fs_node *node = malloc(sizeof(*node));
	const struct f2fs_checkpoint *ck = (const void *)cp;
	const size_t crc_off = offsetof(struct f2fs_super_block, crc);
	uint32_t seed;

	assert_non_null(node);
	FX_EXPAND(kfx_sb_runs, sb);
	FX_EXPAND(kfx_cp_runs, cp);
	assert_int_equal(f2fs_block_crc(sb, crc_off), rd32(sb + crc_off));
	assert_int_equal(f2fs_cp_chksum(ck), rd32(cp + ck->checksum_offset));
	/* written by the kernel at umount, not by mkfs */
	assert_true(ck->ckpt_flags & CP_UMOUNT_FLAG);
	assert_true(ck->checkpoint_ver > 1);

	seed = f2fs_crc32(0xFFFFFFFFu, sb + offsetof(struct f2fs_super_block, uuid), 16);
	fx_expand(kfx_inode_x_runs, FX_N(kfx_inode_x_runs), (uint8_t *)node, sizeof(*node));
	assert_int_not_equal(node->i.i_xattr_nid, 0);
	assert_int_equal(f2fs_inode_chksum(seed, node), node->i.i_inode_checksum);
	fx_expand(kfx_inode_rle_runs, FX_N(kfx_inode_rle_runs), (uint8_t *)node, sizeof(*node));
	assert_int_equal(node->i.i_compress_algorithm, COMPRESS_LZORLE);
	assert_int_equal(f2fs_inode_chksum(seed, node), node->i.i_inode_checksum);
	free(node);
}

/* /// Dentry hash /// */

static void test_dentry_hash_fixture_names(void **state)
{
	size_t n = FX_N(fx_root_names);

	assert_true(n >= 10);
	for (size_t i = 0; i < n; i++) {
		const struct fx_dentry *d = &fx_root_names[i];

		assert_int_equal(strlen(d->name), d->len);
		assert_int_equal(f2fs_dentry_hash((const uint8_t *)d->name, d->len), d->hash);
	}
}

/* The same facts, spelled out: hashes sload.f2fs stored for these names. */
static void test_dentry_hash_known(void **state)
{
	static const struct {
		const char *name;
		uint32_t hash;
	} known[] = {
		{ "a", 0x6d0ea4c1 },
		{ "ab", 0xd27d8659 },
		{ "abc", 0xb1435ec5 },
		{ "abcd", 0x5a24112e },
		{ "abcde", 0x6937ed69 },
		{ "hello.txt", 0x5107c3f3 },
		{ "0123456789abcdef", 0x5a0788b2 },	/* exactly one TEA block */
		{ "0123456789abcdefg", 0xfb1a23ec },	/* spills into a second */
		{ "name with spaces", 0x2a38b6ae },
		{ "sub", 0x8a5e726c },
		{ "\xc3\xa9-utf8-\xe5\x90\x8d\xe5\x89\x8d", 0x47d80a22 },
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		assert_int_equal(f2fs_dentry_hash((const uint8_t *)known[i].name,
						  strlen(known[i].name)), known[i].hash);
}

static void test_dentry_hash_dots(void **state)
{
	assert_int_equal(f2fs_dentry_hash((const uint8_t *)".", 1), 0);
	assert_int_equal(f2fs_dentry_hash((const uint8_t *)"..", 2), 0);
	/* Only exactly "." and ".." are special. */
	assert_int_not_equal(f2fs_dentry_hash((const uint8_t *)"...", 3), 0);
	assert_int_not_equal(f2fs_dentry_hash((const uint8_t *)".a", 2), 0);
	assert_int_not_equal(f2fs_dentry_hash((const uint8_t *)"a.", 2), 0);
	/* The length is honoured: ".x" cut to one byte is ".". */
	assert_int_equal(f2fs_dentry_hash((const uint8_t *)".x", 1), 0);
}

/* Recompute the hash of every live slot of the real dentry block. */
static void test_dentry_hash_real_block(void **state)
{
	uint8_t blk[FX_ROOT_DENTRY_LEN];
	const struct f2fs_dentry_block *db = (const void *)blk;
	unsigned int seen = 0;

	FX_EXPAND(fx_root_dentry_runs, blk);
	for (unsigned int i = 0; i < NR_DENTRY_IN_BLOCK;) {
		const struct f2fs_dir_entry *de = &db->dentry[i];

		if (!test_bit_le(i, db->dentry_bitmap)) {
			i++;
			continue;
		}
		assert_true(de->name_len > 0 && de->name_len <= F2FS_NAME_LEN);
		assert_true(i + GET_DENTRY_SLOTS(de->name_len) <= NR_DENTRY_IN_BLOCK);
		assert_int_equal(f2fs_dentry_hash(db->filename[i], de->name_len), de->hash_code);
		seen++;
		i += GET_DENTRY_SLOTS(de->name_len);
	}
	assert_int_equal(seen, FX_N(fx_root_names));
}

int main(void)
{
	const struct CMUnitTest crc[] = {
		cmocka_unit_test(test_crc32_check_value),
		cmocka_unit_test(test_crc32_empty_is_seed),
		cmocka_unit_test(test_crc32_matches_reference),
		cmocka_unit_test(test_crc32_chains),
	};
	const struct CMUnitTest blocks[] = {
		cmocka_unit_test(test_sb_crc_real),
		cmocka_unit_test(test_sb_crc_detects_flip),
		cmocka_unit_test(test_cp_chksum_tail),
		cmocka_unit_test(test_cp_chksum_large_nat_bitmap),
		cmocka_unit_test(test_cp_chksum_bad_offset_stays_in_block),
		cmocka_unit_test(test_inode_chksum_real),
		cmocka_unit_test(test_inode_chksum_coverage),
		cmocka_unit_test(test_kernel_blocks),
	};
	const struct CMUnitTest hash[] = {
		cmocka_unit_test(test_dentry_hash_fixture_names),
		cmocka_unit_test(test_dentry_hash_known),
		cmocka_unit_test(test_dentry_hash_dots),
		cmocka_unit_test(test_dentry_hash_real_block),
	};
	int fails = 0;

	fails += cmocka_run_group_tests_name("crc32", crc, NULL, NULL);
	fails += cmocka_run_group_tests_name("checksums", blocks, NULL, NULL);
	fails += cmocka_run_group_tests_name("dentry_hash", hash, NULL, NULL);
	return fails ? 1 : 0;
}
