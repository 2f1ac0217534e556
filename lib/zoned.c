// SPDX-License-Identifier: GPL-2.0
/*
 * Zoned volumes (feature blkzoned, `mkfs.f2fs -m`): which parts of the
 * volume are sequential zones, their size and capacity, and their write
 * pointers at mount, as the kernel's init_blkz_info and
 * check_zone_write_pointer find them. A section is a zone (mkfs.f2fs -m sets
 * segs_per_sec from the zone size). On a real zoned block device the kernel
 * says so (BLKGETZONESZ, BLKREPORTZONE); image files carry no zone
 * information, so the device list decides: in a multi-device volume the
 * first device (metadata and the first sections) is conventional and every
 * other one zoned, as Android's `mkfs.f2fs -m -c zoned conventional` lays it
 * out, the capacity is the zone size (or -o zone_capacity=, checked against
 * the blocks in use), and a write pointer is the end of the
 * last block the SIT or a current segment holds in the zone (fsck.f2fs's
 * view). The device layer (lib/dev/zoned.c) then refuses any write that
 * would break a zone's order. A zoned volume is written as Linux writes it:
 * LFS only (no SSR, no in-place update), whole sections allocated and
 * collected, a zone reset before its section is written again, nothing
 * written past a zone's capacity (f2fs_usable_blks_in_seg; lib/segment.c,
 * lib/gc.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "f2fs.h"

#define ZONE_REPORT_BATCH	64

/// Layout ///

static uint64_t sec_bytes(const struct f2fs_sb_info *sbi)
{
	return (uint64_t)sbi->segs_per_sec * sbi->blocks_per_seg * F2FS_BLKSIZE;
}

/*
 * The device's range must be whole sections of the main area: its first
 * block where a section starts, its length whole sections.
 */
static int check_device_fits(struct f2fs_sb_info *sbi, unsigned int i, block_t start,
			     uint64_t nblocks)
{
	uint64_t secblks = (uint64_t)sbi->segs_per_sec * sbi->blocks_per_seg;

	if (start < sbi->main_blkaddr || (start - sbi->main_blkaddr) % secblks ||
	    nblocks % secblks)
		return f2fs_error(sbi, EINVAL, "zoned device %u (%s): blocks %u-%llu are not "
				  "whole zones of %llu blocks (one section each) of the main "
				  "area starting at block %u: the zone layout does not fit the "
				  "device", i, sbi->devs[i].path, start,
				  (unsigned long long)(start + nblocks - 1),
				  (unsigned long long)secblks, sbi->main_blkaddr);
	return 0;
}

/*
 * An image file: all of it sequential zones of one section each, of the
 * capacity zone_capacity= gives (the zone size without it).
 */
static int add_file_zones(struct f2fs_sb_info *sbi, unsigned int i, struct f2fs_dev *m)
{
	const struct f2fs_devinfo *d = &sbi->devs[i];
	uint64_t nblocks = (uint64_t)d->end_blk - d->start_blk + 1;
	int ret = check_device_fits(sbi, i, d->start_blk, nblocks);

	if (ret)
		return ret;
	ret = f2fs_dev_zones_add(&sbi->dev, (uint64_t)d->start_blk * F2FS_BLKSIZE,
				 nblocks * F2FS_BLKSIZE, sec_bytes(sbi),
				 sbi->zone_cap_blocks * F2FS_BLKSIZE, m, 0);
	return ret ? f2fs_error(sbi, -ret, "zoned device %u (%s): cannot set up its zones",
				i, d->path) : 0;
}

/*
 * A sequential zone's capacity as the device reports it. The volume's zones
 * must share one (the kernel's unusable_blocks_per_sec is one number; zones
 * of mixed capacities are only read, at the smallest), and zone_capacity=,
 * meant for image files, must not contradict the device.
 */
static int take_zone_capacity(struct f2fs_sb_info *sbi, unsigned int i, uint64_t cap)
{
	uint64_t want = sbi->opts.zone_capacity / F2FS_BLKSIZE;

	if (want && cap != want)
		return f2fs_error(sbi, EINVAL, "zoned device %u (%s): zone_capacity=%llu bytes, "
				  "but the device reports %llu", i, sbi->devs[i].path,
				  (unsigned long long)sbi->opts.zone_capacity,
				  (unsigned long long)cap * F2FS_BLKSIZE);
	if (sbi->zone_cap_known && cap != sbi->zone_cap_blocks && !sbi->opts.read_only)
		return f2fs_error(sbi, EOPNOTSUPP, "zoned device %u (%s): zones of capacities %llu "
				  "and %llu blocks: uf2fs writes zones of one capacity only "
				  "(mount -o ro)", i, sbi->devs[i].path, (unsigned long long)cap,
				  (unsigned long long)sbi->zone_cap_blocks);
	if (!sbi->zone_cap_known || cap < sbi->zone_cap_blocks)
		sbi->zone_cap_blocks = cap;
	sbi->zone_cap_known = true;
	return 0;
}

/* The kernel's report of the n zones from byte mofs of the device, in z[]. */
static int report_all_zones(struct f2fs_sb_info *sbi, unsigned int i, struct f2fs_dev *m,
			    uint64_t mofs, uint64_t zone_bytes, struct f2fs_dev_zone_info *z,
			    uint64_t n)
{
	for (uint64_t k = 0; k < n;) {
		unsigned int want = n - k < ZONE_REPORT_BATCH ? n - k : ZONE_REPORT_BATCH;
		int got = f2fs_dev_report_zones(m, mofs + k * zone_bytes, z + k, want);

		if (got <= 0)
			return f2fs_error(sbi, got ? -got : EIO, "zoned device %u (%s): zone report "
					  "failed", i, sbi->devs[i].path);
		k += got;
	}
	return 0;
}

/*
 * A zoned block device: its zone size must be a section's; its sequential
 * zones are registered run by run (conventional ones are not), each with
 * the write pointer the device reports.
 */
static int add_blkdev_zones(struct f2fs_sb_info *sbi, unsigned int i, struct f2fs_dev *m,
			    block_t start, uint64_t nblocks, uint64_t mofs, uint64_t zone_bytes)
{
	uint64_t n = nblocks * F2FS_BLKSIZE / zone_bytes, zblks = zone_bytes / F2FS_BLKSIZE;
	struct f2fs_dev_zone_info *z;
	int ret;

	if (zone_bytes != sec_bytes(sbi))
		return f2fs_error(sbi, EINVAL, "zoned device %u (%s): zones of %llu bytes but "
				  "sections of %llu: the zone layout does not fit the device", i,
				  sbi->devs[i].path, (unsigned long long)zone_bytes,
				  (unsigned long long)sec_bytes(sbi));
	ret = check_device_fits(sbi, i, start, nblocks);
	if (ret)
		return ret;
	z = calloc(n ? n : 1, sizeof(*z));
	if (!z)
		return -ENOMEM;
	ret = report_all_zones(sbi, i, m, mofs, zone_bytes, z, n);
	for (uint64_t k = 0; k < n && !ret; k++)
		if (z[k].seq)
			ret = take_zone_capacity(sbi, i, z[k].cap / F2FS_BLKSIZE);
	for (uint64_t k = 0, run = 0; k <= n && !ret; k++) {
		if (k < n && z[k].seq)
			continue;
		if (k > run)
			ret = f2fs_dev_zones_add(&sbi->dev, (uint64_t)start * F2FS_BLKSIZE +
						 run * zone_bytes, (k - run) * zone_bytes,
						 zone_bytes, sbi->zone_cap_blocks * F2FS_BLKSIZE, m,
						 mofs + run * zone_bytes);
		run = k + 1;
	}
	for (uint64_t k = 0; k < n && !ret; k++)
		if (z[k].seq)
			f2fs_dev_zone_set_wp(&sbi->dev, start + k * zblks, z[k].wp / F2FS_BLKSIZE);
	free(z);
	return ret;
}

/*
 * Which devices are zoned, checked against the layout. A device's volume
 * range is [start, start + nblocks); on the first device only the main area
 * can be zoned.
 */
static int find_zones(struct f2fs_sb_info *sbi)
{
	unsigned int n = sbi->ndevs ? sbi->ndevs : 1;
	int ret = 0;

	for (unsigned int i = 0; i < n && !ret; i++) {
		struct f2fs_dev *m = sbi->ndevs ? f2fs_dev_multi_member(&sbi->dev, i) : &sbi->dev;
		block_t start = sbi->ndevs ? sbi->devs[i].start_blk : 0;
		uint64_t end = sbi->ndevs ? (uint64_t)sbi->devs[i].end_blk + 1 : sbi->block_count;
		block_t dev_start = start;
		uint64_t zone_bytes = 0;

		ret = f2fs_dev_zone_bytes(m, &zone_bytes);
		if (ret)
			return f2fs_error(sbi, -ret, "device %u: cannot ask for its zone size", i);
		if (zone_bytes) {
			if (start < sbi->main_blkaddr)
				start = sbi->main_blkaddr;	/* its metadata zones: conventional */
			ret = add_blkdev_zones(sbi, i, m, start, end - start,
					       (uint64_t)(start - dev_start) * F2FS_BLKSIZE, zone_bytes);
			if (!ret)
				sbi->zoned_devs |= 1u << i;
		} else if (i > 0 && !m->is_blkdev) {
			ret = add_file_zones(sbi, i, m);
			if (!ret)
				sbi->zoned_devs |= 1u << i;
		}
	}
	if (!ret && !sbi->zoned_devs)
		ret = f2fs_error(sbi, EINVAL, "feature \"blkzoned\": %s", sbi->ndevs ?
				 "none of the volume's devices is zoned (its zoned devices are "
				 "image files after the first, or zoned block devices)" :
				 "a single device that is not a zoned block device: an image file "
				 "cannot tell which of its zones are sequential (a zoned volume "
				 "on files needs its devices list, mkfs.f2fs -m -c)");
	return ret;
}

/// Write pointers ///

/* Blocks of a section up to its last one in use, by the SIT or a current segment. */
static uint64_t section_used_blocks(struct f2fs_sb_info *sbi, unsigned int secno)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	unsigned int first = secno * sbi->segs_per_sec;
	uint64_t used = 0;

	for (unsigned int k = 0; k < sbi->segs_per_sec; k++) {
		unsigned int segno = first + k;
		const struct seg_entry *se = &sm->sentries[segno];
		uint64_t base = (uint64_t)k * sbi->blocks_per_seg;

		for (int t = 0; t < NR_CURSEG_TYPE; t++)
			if (sm->curseg[t].segno == segno && base + sm->curseg[t].next_blkoff > used)
				used = base + sm->curseg[t].next_blkoff;
		if (!se->valid_blocks && !se->ckpt_valid_blocks)
			continue;
		for (unsigned int off = sbi->blocks_per_seg; off-- > 0;) {
			if (f2fs_test_bit(off, se->valid_map) ||
			    f2fs_test_bit(off, se->ckpt_valid_map)) {
				if (base + off + 1 > used)
					used = base + off + 1;
				break;
			}
		}
	}
	return used;
}

/*
 * Image files: each zone's pointer from the SIT. A zoned block device
 * reported its own; a section that holds blocks past it is what the kernel's
 * check_zone_write_pointer reports as inconsistent: said, and left as the
 * device has it (nothing there is written again before a reset).
 */
static int derive_write_pointers(struct f2fs_sb_info *sbi)
{
	uint64_t secblks = (uint64_t)sbi->segs_per_sec * sbi->blocks_per_seg;

	for (unsigned int sec = 0; sec < sbi->main_segs / sbi->segs_per_sec; sec++) {
		block_t blk = sbi->main_blkaddr + sec * secblks;
		uint64_t used;

		if (!f2fs_dev_zone_seq(&sbi->dev, blk))
			continue;
		used = section_used_blocks(sbi, sec);
		if (used > sbi->zone_cap_blocks)
			return f2fs_error(sbi, EINVAL, "zone of section %u: blocks in use up to "
					  "block %llu of the zone, past its capacity of %llu "
					  "blocks%s", sec, (unsigned long long)used,
					  (unsigned long long)sbi->zone_cap_blocks,
					  f2fs_zone_on_blkdev(sbi, blk) ? "" :
					  " (is zone_capacity= right? this volume's zones hold "
					  "more)");
		if (!f2fs_zone_on_blkdev(sbi, blk))
			f2fs_dev_zone_set_wp(&sbi->dev, blk, used);
		else if (f2fs_dev_zone_wp(&sbi->dev, blk) < used)
			f2fs_msg(sbi, "zone of section %u: valid blocks up to %llu past its write "
				 "pointer %llu", sec, (unsigned long long)used,
				 (unsigned long long)f2fs_dev_zone_wp(&sbi->dev, blk));
	}
	return 0;
}

bool f2fs_zone_on_blkdev(struct f2fs_sb_info *sbi, block_t blk)
{
	unsigned int n = sbi->ndevs ? sbi->ndevs : 1;

	for (unsigned int i = 0; i < n; i++) {
		struct f2fs_dev *m = sbi->ndevs ? f2fs_dev_multi_member(&sbi->dev, i) : &sbi->dev;
		block_t start = sbi->ndevs ? sbi->devs[i].start_blk : 0;
		uint64_t end = sbi->ndevs ? (uint64_t)sbi->devs[i].end_blk + 1 : sbi->block_count;

		if (blk >= start && blk < end)
			return m->is_blkdev;
	}
	return false;
}

/// Mount ///

/*
 * zone_capacity= (image files: nothing on disk records it): whole blocks,
 * at most the zone (section) size. Zoned block devices report their own.
 */
static int init_zone_capacity(struct f2fs_sb_info *sbi)
{
	uint64_t cap = sbi->opts.zone_capacity;

	sbi->zone_cap_blocks = sec_bytes(sbi) / F2FS_BLKSIZE;
	if (!cap)
		return 0;
	if (cap % F2FS_BLKSIZE || cap > sec_bytes(sbi))
		return f2fs_error(sbi, EINVAL, "zone_capacity=%llu: must be whole %u-byte blocks, "
				  "at most the zone (section) size of %llu "
				  "bytes", (unsigned long long)cap, F2FS_BLKSIZE,
				  (unsigned long long)sec_bytes(sbi));
	sbi->zone_cap_blocks = cap / F2FS_BLKSIZE;
	return 0;
}

int f2fs_init_zones(struct f2fs_sb_info *sbi)
{
	int ret;

	if (!f2fs_has_feature(sbi, F2FS_FEATURE_BLKZONED))
		return sbi->opts.zone_capacity ?
		       f2fs_error(sbi, EINVAL, "zone_capacity=: the volume is not zoned "
				  "(no blkzoned feature)") : 0;
	ret = init_zone_capacity(sbi);
	if (!ret)
		ret = find_zones(sbi);
	if (ret)
		return ret;
	sbi->zoned = true;
	sbi->zone_cap_short = sbi->zone_cap_blocks < sec_bytes(sbi) / F2FS_BLKSIZE;
	/* as the kernel: a zoned volume is written in LFS mode only */
	sbi->opts.mode_lfs = true;
	ret = derive_write_pointers(sbi);
	if (ret)
		return ret;
	sbi->sm.nr_free = f2fs_usable_free_segments(sbi);
	return 0;
}

/*
 * The kernel's f2fs_usable_zone_blks_in_seg: in a sequential zone whose
 * capacity ends before the section does, a segment past the capacity has
 * no usable block and the one it ends in only those before it.
 */
unsigned int f2fs_usable_blks_in_seg(struct f2fs_sb_info *sbi, unsigned int segno)
{
	uint64_t off = (uint64_t)(segno % sbi->segs_per_sec) * sbi->blocks_per_seg;

	if (!sbi->zone_cap_short ||
	    !f2fs_dev_zone_seq(&sbi->dev, sbi->main_blkaddr + segno * sbi->blocks_per_seg))
		return sbi->blocks_per_seg;
	if (off >= sbi->zone_cap_blocks)
		return 0;
	return MIN(sbi->blocks_per_seg, sbi->zone_cap_blocks - off);
}

uint64_t f2fs_usable_blks_in_sec(struct f2fs_sb_info *sbi, unsigned int secno)
{
	uint64_t secblks = (uint64_t)sbi->segs_per_sec * sbi->blocks_per_seg;
	block_t blk = sbi->main_blkaddr + secno * secblks;

	return sbi->zone_cap_short && f2fs_dev_zone_seq(&sbi->dev, blk) ? sbi->zone_cap_blocks :
	       secblks;
}

/*
 * The kernel's fix_curseg_write_pointer, at a read-write mount: a log whose
 * next block is not where its zone's write pointer is (or that the image
 * left in SSR mode) moves to a fresh section.
 */
int f2fs_fix_zoned_cursegs(struct f2fs_sb_info *sbi)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	int ret = 0;

	if (!sbi->zoned || sbi->opts.read_only)
		return 0;
	for (int t = 0; t < NR_CURSEG_TYPE && !ret; t++) {
		struct curseg_info *cs = &sm->curseg[t];
		unsigned int k = cs->segno % sbi->segs_per_sec;
		block_t blk = sbi->main_blkaddr + cs->segno * sbi->blocks_per_seg;
		uint64_t pos = (uint64_t)k * sbi->blocks_per_seg + cs->next_blkoff;

		if (!f2fs_dev_zone_seq(&sbi->dev, blk))
			continue;
		if (cs->alloc_type == ALLOC_LFS && f2fs_dev_zone_wp(&sbi->dev, blk) == pos)
			continue;
		f2fs_msg(sbi, "log %d: next block %llu of its zone, write pointer %llu: moving "
			 "it to a new zone", t, (unsigned long long)pos,
			 (unsigned long long)f2fs_dev_zone_wp(&sbi->dev, blk));
		ret = f2fs_move_curseg(sbi, t);
	}
	return ret;
}

/*
 * A section about to be written from its start: its zone is reset unless
 * nothing was written there since the last reset.
 */
int f2fs_zone_prepare_section(struct f2fs_sb_info *sbi, unsigned int secno)
{
	uint64_t secblks = (uint64_t)sbi->segs_per_sec * sbi->blocks_per_seg;
	block_t blk = sbi->main_blkaddr + secno * secblks;
	int ret;

	if (!f2fs_dev_zone_seq(&sbi->dev, blk) || !f2fs_dev_zone_wp(&sbi->dev, blk))
		return 0;
	ret = f2fs_dev_zone_reset(&sbi->dev, blk, secblks);
	if (ret)
		return f2fs_error(sbi, -ret, "zone of section %u (block %u): reset failed: %s",
				  secno, blk, strerror(-ret));
	return 0;
}

/*
 * The kernel's init_free_segmap never marks a segment with no usable block
 * free, so its free_segments (what a checkpoint records) leaves them out;
 * so does fsck.f2fs on the zoned device, where it knows the capacity.
 * Debian's fsck.f2fs on image files cannot, and counts them: see
 * docs/decisions.md.
 */
unsigned int f2fs_cp_free_segments(struct f2fs_sb_info *sbi)
{
	unsigned int n = f2fs_count_free_segments(sbi);

	if (!sbi->zone_cap_short)
		return n;
	for (unsigned int s = 0; s < sbi->main_segs; s++)
		if (!sbi->sm.sentries[s].valid_blocks && !f2fs_usable_blks_in_seg(sbi, s))
			n--;
	return n;
}
