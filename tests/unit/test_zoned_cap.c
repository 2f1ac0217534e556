// SPDX-License-Identifier: GPL-2.0
/*
 * Zone capacity arithmetic (lib/zoned.c), as the kernel's
 * f2fs_usable_zone_blks_in_seg and init_free_segmap: sections of 4 segments
 * of 512 blocks (8 MiB), the first section conventional, the next two
 * sequential zones of 5 MiB capacity. A zoned section's segments 0 and 1 are
 * usable whole, segment 2 for its first 256 blocks, segment 3 not at all;
 * a conventional section is usable whole; the checkpoint's free segment
 * count leaves out free segments with no usable block.
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

#include "f2fs.h"

#define MIB	(1u << 20)
#define MAIN	2048u			/* main area from 8 MiB: zones start on their size */
#define SECBLKS	2048u

static char path[] = "/tmp/uf2fs-zoned-cap.XXXXXX";

static struct f2fs_sb_info *zoned_sbi(uint64_t cap_blocks)
{
	struct f2fs_sb_info *sbi = calloc(1, sizeof(*sbi));
	struct uf2fs_options opts;

	assert_non_null(sbi);
	uf2fs_default_options(&opts);
	opts.device = path;
	assert_int_equal(f2fs_dev_open(&sbi->dev, &opts), 0);
	/* sections 1 and 2: 16 MiB of 8 MiB zones from block MAIN + SECBLKS */
	assert_int_equal(f2fs_dev_zones_add(&sbi->dev, (uint64_t)(MAIN + SECBLKS) * 4096,
					    16 * MIB, 8 * MIB, cap_blocks * 4096, &sbi->dev,
					    (uint64_t)(MAIN + SECBLKS) * 4096), 0);
	sbi->segs_per_sec = 4;
	sbi->blocks_per_seg = 512;
	sbi->main_blkaddr = MAIN;
	sbi->main_segs = 12;
	sbi->zoned = true;
	sbi->zone_cap_blocks = cap_blocks;
	sbi->zone_cap_short = cap_blocks < SECBLKS;
	sbi->sm.sentries = calloc(sbi->main_segs, sizeof(*sbi->sm.sentries));
	assert_non_null(sbi->sm.sentries);
	for (int t = 0; t < NR_CURSEG_TYPE; t++)
		sbi->sm.curseg[t].segno = t;	/* segments 0-5: section 0, half of 1 */
	return sbi;
}

static void put_sbi(struct f2fs_sb_info *sbi)
{
	f2fs_dev_zones_free(&sbi->dev);
	f2fs_dev_close(&sbi->dev);
	free(sbi->sm.sentries);
	free(sbi);
}

static void test_usable_blocks(void **state)
{
	struct f2fs_sb_info *sbi = zoned_sbi(1280);
	static const unsigned int want[12] = {
		512, 512, 512, 512,	/* conventional */
		512, 512, 256, 0,	/* zone 1: 5 MiB of 8 */
		512, 512, 256, 0,	/* zone 2 */
	};

	for (unsigned int s = 0; s < 12; s++)
		assert_int_equal(f2fs_usable_blks_in_seg(sbi, s), want[s]);
	assert_int_equal(f2fs_usable_blks_in_sec(sbi, 0), SECBLKS);
	assert_int_equal(f2fs_usable_blks_in_sec(sbi, 1), 1280);
	assert_int_equal(f2fs_usable_blks_in_sec(sbi, 2), 1280);
	put_sbi(sbi);
}

/* A capacity inside the first segment: only part of it is usable. */
static void test_small_capacity(void **state)
{
	struct f2fs_sb_info *sbi = zoned_sbi(100);

	assert_int_equal(f2fs_usable_blks_in_seg(sbi, 4), 100);
	for (unsigned int s = 5; s < 8; s++)
		assert_int_equal(f2fs_usable_blks_in_seg(sbi, s), 0);
	assert_int_equal(f2fs_usable_blks_in_seg(sbi, 3), 512);
	put_sbi(sbi);
}

/* Capacity = size: nothing changes. */
static void test_full_capacity(void **state)
{
	struct f2fs_sb_info *sbi = zoned_sbi(SECBLKS);

	for (unsigned int s = 0; s < 12; s++)
		assert_int_equal(f2fs_usable_blks_in_seg(sbi, s), 512);
	assert_int_equal(f2fs_cp_free_segments(sbi), f2fs_count_free_segments(sbi));
	put_sbi(sbi);
}

static void test_checkpoint_free_count(void **state)
{
	struct f2fs_sb_info *sbi = zoned_sbi(1280);

	/* free: segments 6-11 (0-5 are logs); 7 and 11 have no usable block */
	assert_int_equal(f2fs_count_free_segments(sbi), 6);
	assert_int_equal(f2fs_cp_free_segments(sbi), 4);
	sbi->sm.sentries[6].valid_blocks = 1;
	assert_int_equal(f2fs_count_free_segments(sbi), 5);
	assert_int_equal(f2fs_cp_free_segments(sbi), 3);
	put_sbi(sbi);
}

static int setup(void **state)
{
	int fd = mkstemp(path);

	if (fd < 0 || ftruncate(fd, 32 * MIB))
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usable_blocks),
		cmocka_unit_test(test_small_capacity),
		cmocka_unit_test(test_full_capacity),
		cmocka_unit_test(test_checkpoint_free_count),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
