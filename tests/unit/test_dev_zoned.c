// SPDX-License-Identifier: GPL-2.0
/*
 * The device layer's write-pointer rule (lib/dev/zoned.c) on an image file
 * with two 1 MiB sequential zones at 1 MiB: a write must start at its zone's
 * pointer (a rewrite, a gap or a write past the capacity fails with EIO and
 * moves nothing), may run on into the next zone when it fills the first,
 * and a reset or a discard of a whole zone (not of part of one) sends the
 * pointer back. Writes outside the zones are free.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dev/dev.h"

#define MIB	(1u << 20)
#define BLK	4096u
#define ZONE0	(MIB / BLK)		/* first block of the first zone */
#define ZBLKS	(MIB / BLK)		/* blocks per zone */

static char path[] = "/tmp/uf2fs-dev-zoned.XXXXXX";
static uint8_t buf[2 * MIB];

static void open_zoned(struct f2fs_dev *dev, uint64_t cap)
{
	struct uf2fs_options opts;

	uf2fs_default_options(&opts);
	opts.device = path;
	opts.read_only = false;
	assert_int_equal(f2fs_dev_open(dev, &opts), 0);
	assert_int_equal(f2fs_dev_zones_add(dev, MIB, 2 * MIB, MIB, cap, dev, MIB), 0);
}

static int wr(struct f2fs_dev *dev, block_t blk, unsigned int nr)
{
	struct iovec v = { buf, (size_t)nr * BLK };

	return f2fs_dev_writev_blocks(dev, &v, 1, blk);
}

static void test_write_pointer(void **state)
{
	struct f2fs_dev dev;

	open_zoned(&dev, MIB);
	assert_true(f2fs_dev_zone_seq(&dev, ZONE0));
	assert_false(f2fs_dev_zone_seq(&dev, ZONE0 - 1));
	assert_int_equal(wr(&dev, 0, 8), 0);		/* outside: anywhere */
	assert_int_equal(wr(&dev, 0, 8), 0);
	assert_int_equal(wr(&dev, ZONE0, 4), 0);
	assert_int_equal(f2fs_dev_zone_wp(&dev, ZONE0), 4);
	assert_int_equal(wr(&dev, ZONE0 + 2, 1), -EIO);	/* behind the pointer */
	assert_int_equal(wr(&dev, ZONE0 + 6, 1), -EIO);	/* a gap */
	assert_int_equal(wr(&dev, ZONE0 + 4, 1), 0);
	assert_int_equal(f2fs_dev_zone_wp(&dev, ZONE0), 5);
	/* the rest of zone 0 and the start of zone 1 in one request */
	assert_int_equal(wr(&dev, ZONE0 + 5, ZBLKS - 5 + 3), 0);
	assert_int_equal(f2fs_dev_zone_wp(&dev, ZONE0), ZBLKS);
	assert_int_equal(f2fs_dev_zone_wp(&dev, ZONE0 + ZBLKS), 3);
	assert_int_equal(atomic_load(&dev.st.zone_refused), 2);
	/* part of a zone: no reset; all of it: reset */
	assert_int_equal(f2fs_dev_discard(&dev, ZONE0, 8), 0);
	assert_int_equal(f2fs_dev_zone_wp(&dev, ZONE0), ZBLKS);
	assert_int_equal(f2fs_dev_discard(&dev, ZONE0, ZBLKS), 0);
	assert_int_equal(f2fs_dev_zone_wp(&dev, ZONE0), 0);
	assert_int_equal(wr(&dev, ZONE0, 1), 0);
	assert_int_equal(f2fs_dev_zone_reset(&dev, ZONE0 + ZBLKS, ZBLKS), 0);
	assert_int_equal(f2fs_dev_zone_wp(&dev, ZONE0 + ZBLKS), 0);
	assert_int_equal(atomic_load(&dev.st.zone_resets), 2);
	/* a reset is of whole zones */
	assert_int_equal(f2fs_dev_zone_reset(&dev, ZONE0 + 1, ZBLKS), -EINVAL);
	f2fs_dev_close(&dev);
}

static void test_capacity(void **state)
{
	struct f2fs_dev dev;

	open_zoned(&dev, MIB / 2);
	assert_int_equal(wr(&dev, ZONE0, ZBLKS / 2 + 1), -EIO);
	assert_int_equal(f2fs_dev_zone_wp(&dev, ZONE0), 0);
	assert_int_equal(wr(&dev, ZONE0, ZBLKS / 2), 0);
	assert_int_equal(wr(&dev, ZONE0 + ZBLKS / 2, 1), -EIO);
	f2fs_dev_close(&dev);
	/* a layout that is not whole zones is refused */
	open_zoned(&dev, MIB);
	assert_int_equal(f2fs_dev_zones_add(&dev, 3 * MIB + BLK, MIB, MIB, MIB, &dev, 0), -EINVAL);
	assert_int_equal(f2fs_dev_zones_add(&dev, 4 * MIB, MIB, MIB, 2 * MIB, &dev, 0), -EINVAL);
	f2fs_dev_close(&dev);
}

static int setup(void **state)
{
	int fd = mkstemp(path);

	if (fd < 0 || ftruncate(fd, 8 * MIB))
		return -1;
	close(fd);
	memset(buf, 0x5a, sizeof(buf));
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
		cmocka_unit_test(test_write_pointer),
		cmocka_unit_test(test_capacity),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
