// SPDX-License-Identifier: GPL-2.0
/*
 * Zoned devices in the device layer: the kernel's zone ioctls for a real
 * zoned block device (BLKGETZONESZ, BLKREPORTZONE, BLKRESETZONE), and the
 * write-pointer rule for every sequential zone of a volume, kept here for
 * image files as a zoned device keeps it: a write into such a zone must start
 * at the zone's write pointer and stay within its capacity, or it fails with
 * EIO, exactly where the device would refuse it. A reset (or a discard of the
 * whole zone) sends the pointer back to the zone's start. Which ranges are
 * zoned, their size and their pointers at mount are the file system's
 * business (lib/zoned.c); this file only holds and enforces them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/blkzoned.h>

#include "backend.h"

#define SECTOR_SHIFT	9

struct dev_zone_range {
	uint64_t start, end;		/* volume bytes [start, end): whole zones */
	struct f2fs_dev *member;	/* the device holding them */
	uint64_t member_off;		/* where start lies on it */
	uint64_t first;			/* index of its first zone in wp[] */
};

struct f2fs_dev_zones {
	pthread_mutex_t lock;
	uint64_t zone_bytes, cap_bytes;
	unsigned int nr_ranges;
	struct dev_zone_range r[F2FS_DEV_MAX_MEMBERS];
	uint64_t nr_zones;
	uint64_t *wp;			/* bytes written into each zone */
};

/// Kernel zone ioctls (real zoned block devices) ///

int f2fs_dev_zone_bytes(struct f2fs_dev *dev, uint64_t *bytes)
{
	uint32_t sectors = 0;

	*bytes = 0;
	if (!dev->is_blkdev || dev->fd < 0)
		return 0;
	if (ioctl(dev->fd, BLKGETZONESZ, &sectors))
		return errno == ENOTTY || errno == EINVAL ? 0 : -errno;
	*bytes = (uint64_t)sectors << SECTOR_SHIFT;
	return 0;
}

int f2fs_dev_report_zones(struct f2fs_dev *dev, uint64_t off, struct f2fs_dev_zone_info *out,
			  unsigned int nr)
{
	size_t sz = sizeof(struct blk_zone_report) + nr * sizeof(struct blk_zone);
	struct blk_zone_report *rep = calloc(1, sz);
	int ret;

	if (!rep)
		return -ENOMEM;
	rep->sector = (dev->base + off) >> SECTOR_SHIFT;
	rep->nr_zones = nr;
	if (ioctl(dev->fd, BLKREPORTZONE, rep)) {
		ret = -errno;
		free(rep);
		return ret;
	}
	for (unsigned int i = 0; i < rep->nr_zones; i++) {
		const struct blk_zone *z = &rep->zones[i];

		out[i].start = (z->start << SECTOR_SHIFT) - dev->base;
		out[i].len = z->len << SECTOR_SHIFT;
		out[i].cap = (rep->flags & BLK_ZONE_REP_CAPACITY ? z->capacity : z->len)
			     << SECTOR_SHIFT;
		out[i].wp = z->type == BLK_ZONE_TYPE_CONVENTIONAL ? out[i].len :
			    (z->wp - z->start) << SECTOR_SHIFT;
		if (z->cond == BLK_ZONE_COND_FULL)
			out[i].wp = out[i].cap;
		out[i].seq = z->type == BLK_ZONE_TYPE_SEQWRITE_REQ;
	}
	ret = (int)rep->nr_zones;
	free(rep);
	return ret;
}

/// The zone table of a volume ///

int f2fs_dev_zones_add(struct f2fs_dev *dev, uint64_t start, uint64_t len, uint64_t zone_bytes,
		       uint64_t cap_bytes, struct f2fs_dev *member, uint64_t member_off)
{
	struct f2fs_dev_zones *z = dev->zones;
	struct dev_zone_range *r;
	uint64_t *wp;

	if (!zone_bytes || len % zone_bytes || start % zone_bytes || cap_bytes > zone_bytes)
		return -EINVAL;
	if (!z) {
		z = calloc(1, sizeof(*z));
		if (!z)
			return -ENOMEM;
		pthread_mutex_init(&z->lock, NULL);
		z->zone_bytes = zone_bytes;
		z->cap_bytes = cap_bytes;
		dev->zones = z;
	}
	if (z->zone_bytes != zone_bytes || z->cap_bytes != cap_bytes ||
	    z->nr_ranges == F2FS_DEV_MAX_MEMBERS)
		return -EINVAL;
	wp = realloc(z->wp, (z->nr_zones + len / zone_bytes) * sizeof(*wp));
	if (!wp)
		return -ENOMEM;
	memset(wp + z->nr_zones, 0, len / zone_bytes * sizeof(*wp));
	z->wp = wp;
	r = &z->r[z->nr_ranges++];
	r->start = start;
	r->end = start + len;
	r->member = member;
	r->member_off = member_off;
	r->first = z->nr_zones;
	z->nr_zones += len / zone_bytes;
	return 0;
}

void f2fs_dev_zones_free(struct f2fs_dev *dev)
{
	if (!dev->zones)
		return;
	pthread_mutex_destroy(&dev->zones->lock);
	free(dev->zones->wp);
	free(dev->zones);
	dev->zones = NULL;
}

/* The zone holding volume byte off, or -1 when it lies in no sequential zone. */
static int64_t zone_of(const struct f2fs_dev_zones *z, uint64_t off,
		       const struct dev_zone_range **range)
{
	for (unsigned int i = 0; i < z->nr_ranges; i++) {
		const struct dev_zone_range *r = &z->r[i];

		if (off >= r->start && off < r->end) {
			if (range)
				*range = r;
			return (int64_t)(r->first + (off - r->start) / z->zone_bytes);
		}
	}
	return -1;
}

/* From pos (in no zone), where the next zoned range starts, or end. */
static uint64_t skip_unzoned(const struct f2fs_dev_zones *z, uint64_t pos, uint64_t end)
{
	uint64_t next = end;

	for (unsigned int k = 0; k < z->nr_ranges; k++)
		if (z->r[k].start > pos && z->r[k].start < next)
			next = z->r[k].start;
	return next;
}

static bool touches_zones(const struct f2fs_dev_zones *z, uint64_t off, uint64_t end)
{
	for (unsigned int k = 0; k < z->nr_ranges; k++)
		if (off < z->r[k].end && end > z->r[k].start)
			return true;
	return false;
}

bool f2fs_dev_zone_seq(struct f2fs_dev *dev, block_t blk)
{
	return dev->zones && zone_of(dev->zones, (uint64_t)blk << dev->blkbits, NULL) >= 0;
}

void f2fs_dev_zone_set_wp(struct f2fs_dev *dev, block_t blk, uint64_t nr_written)
{
	struct f2fs_dev_zones *z = dev->zones;
	int64_t i = z ? zone_of(z, (uint64_t)blk << dev->blkbits, NULL) : -1;

	if (i < 0)
		return;
	pthread_mutex_lock(&z->lock);
	z->wp[i] = nr_written << dev->blkbits;
	pthread_mutex_unlock(&z->lock);
}

uint64_t f2fs_dev_zone_wp(struct f2fs_dev *dev, block_t blk)
{
	struct f2fs_dev_zones *z = dev->zones;
	int64_t i = z ? zone_of(z, (uint64_t)blk << dev->blkbits, NULL) : -1;
	uint64_t wp;

	if (i < 0)
		return 0;
	pthread_mutex_lock(&z->lock);
	wp = z->wp[i];
	pthread_mutex_unlock(&z->lock);
	return wp >> dev->blkbits;
}

/*
 * Called by core.c before a write of [off, off + len) (volume bytes): every
 * sequential zone it touches must be written exactly at its pointer and not
 * past its capacity; then the pointers move. A write that breaks the rule
 * changes nothing and fails, as the zoned device fails it.
 */
int dev_zones_write(struct f2fs_dev *dev, uint64_t off, uint64_t len)
{
	struct f2fs_dev_zones *z = dev->zones;
	uint64_t pos = off, end = off + len;
	int ret = 0;

	if (!touches_zones(z, off, end))
		return 0;
	pthread_mutex_lock(&z->lock);
	while (pos < end && !ret) {
		const struct dev_zone_range *r;
		int64_t i = zone_of(z, pos, &r);
		uint64_t zstart, zend;

		if (i < 0) {
			pos = skip_unzoned(z, pos, end);
			continue;
		}
		zstart = r->start + (uint64_t)(i - r->first) * z->zone_bytes;
		zend = zstart + z->zone_bytes;
		if (pos - zstart != z->wp[i] || (end < zend ? end : zend) - zstart > z->cap_bytes)
			ret = -EIO;
		pos = end < zend ? end : zend;
	}
	if (ret) {
		atomic_fetch_add(&dev->st.zone_refused, 1);
		pthread_mutex_unlock(&z->lock);
		return ret;
	}
	for (pos = off; pos < end;) {
		const struct dev_zone_range *r;
		int64_t i = zone_of(z, pos, &r);
		uint64_t zend;

		if (i < 0) {
			pos = skip_unzoned(z, pos, end);
			continue;
		}
		zend = r->start + (uint64_t)(i - r->first + 1) * z->zone_bytes;
		z->wp[i] += (end < zend ? end : zend) - pos;
		pos = end < zend ? end : zend;
		atomic_fetch_add(&dev->st.zone_writes, 1);
	}
	pthread_mutex_unlock(&z->lock);
	return 0;
}

/*
 * After a write into the sequential zones of a block device: the kernel's
 * page cache would send the pages later and in any order, which the device
 * refuses, so each write is sent and waited for here, before the next one
 * (the file system hands zone blocks out and writes them in one order).
 */
int dev_zones_written(struct f2fs_dev *dev, uint64_t off, uint64_t len)
{
	struct f2fs_dev_zones *z = dev->zones;
	unsigned int flags = SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
			     SYNC_FILE_RANGE_WAIT_AFTER;

	for (unsigned int k = 0; k < z->nr_ranges; k++) {
		const struct dev_zone_range *r = &z->r[k];
		uint64_t from = off > r->start ? off : r->start;
		uint64_t to = off + len < r->end ? off + len : r->end;

		if (from >= to || !r->member->is_blkdev)
			continue;
		if (sync_file_range(r->member->fd, r->member->base + r->member_off + from - r->start,
				    to - from, flags))
			return -errno;
	}
	return 0;
}

/*
 * Reset the zones of [off, off + len) (volume bytes, whole zones): the
 * kernel's BLKRESETZONE on a zoned block device, a discard of the bytes on
 * an image file (what the zone's reset would leave: nothing). The pointers
 * go back to the zones' starts.
 */
int dev_zones_reset(struct f2fs_dev *dev, uint64_t off, uint64_t len)
{
	struct f2fs_dev_zones *z = dev->zones;
	const struct dev_zone_range *r;
	int64_t i = zone_of(z, off, &r);
	int ret = 0;

	if (i < 0 || (off - r->start) % z->zone_bytes || len % z->zone_bytes ||
	    off + len > r->end)
		return -EINVAL;
	if (r->member->is_blkdev) {
		struct blk_zone_range zr = {
			.sector = (r->member->base + r->member_off + off - r->start) >> SECTOR_SHIFT,
			.nr_sectors = len >> SECTOR_SHIFT,
		};

		if (ioctl(r->member->fd, BLKRESETZONE, &zr))
			ret = -errno;
	} else if (r->member->ops->discard) {
		r->member->ops->discard(r->member, r->member->base + r->member_off + off - r->start,
					len);
	}
	if (ret)
		return ret;
	pthread_mutex_lock(&z->lock);
	for (uint64_t k = 0; k < len / z->zone_bytes; k++)
		z->wp[i + k] = 0;
	pthread_mutex_unlock(&z->lock);
	atomic_fetch_add(&dev->st.zone_resets, len / z->zone_bytes);
	return 0;
}

/*
 * A discard over zoned ranges: whole sequential zones are reset, the parts of
 * a sequential zone are left alone (a zoned device takes no partial
 * discard), anything else is discarded as usual. 1: handled here.
 */
int dev_zones_discard(struct f2fs_dev *dev, uint64_t off, uint64_t len)
{
	struct f2fs_dev_zones *z = dev->zones;
	uint64_t pos = off, end = off + len;

	if (!touches_zones(z, off, end))
		return 0;
	while (pos < end) {
		const struct dev_zone_range *r;
		int64_t i = zone_of(z, pos, &r);
		uint64_t zstart, zend;

		if (i < 0) {
			uint64_t next = skip_unzoned(z, pos, end);

			dev->ops->discard(dev, dev->base + pos, next - pos);
			pos = next;
			continue;
		}
		zstart = r->start + (uint64_t)(i - r->first) * z->zone_bytes;
		zend = zstart + z->zone_bytes;
		if (pos == zstart && end >= zend)
			dev_zones_reset(dev, zstart, z->zone_bytes);
		pos = end < zend ? end : zend;
	}
	return 1;
}
