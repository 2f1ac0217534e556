// SPDX-License-Identifier: GPL-2.0
/*
 * Multi-device volumes (`mkfs.f2fs -c`): which devices make the volume and
 * whether they are the right ones. The super block lists up to eight devices
 * by path and size in segments; the first holds the metadata area and its
 * segments, each next one the following segments, as the kernel's
 * f2fs_scan_devices lays them out. The first device is the one mounted; the
 * others come from the recorded paths, or from the device= options when the
 * files have moved. Every check runs before anything is written, and each
 * error names the device. The routing of I/O is lib/dev/multi.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "f2fs.h"

static unsigned int count_devices(const struct f2fs_super_block *sb, uint32_t *segs)
{
	unsigned int n = 0;

	*segs = 0;
	while (n < F2FS_MAX_DEVICES && sb->devs[n].path[0])
		*segs += le32(sb->devs[n++].total_segments);
	return n;
}

/*
 * Device i must not be the first device: swapped files would otherwise
 * mount with the metadata read as data. A secondary device starts with main
 * area blocks, so only this volume's own super block there is proof.
 */
static int check_not_first(struct f2fs_sb_info *sbi, struct f2fs_dev *m, unsigned int i)
{
	uint8_t *blk = malloc(F2FS_BLKSIZE);
	const struct f2fs_super_block *sb = (void *)(blk + F2FS_SUPER_OFFSET);
	struct iovec v = { blk, F2FS_BLKSIZE };
	int ret;

	if (!blk)
		return -ENOMEM;
	ret = m->ops->readv(m, &v, 1, 0);
	if (ret)
		ret = f2fs_error(sbi, -ret, "device %u (%s): cannot read: %s", i,
				 sbi->devs[i].path, strerror(-ret));
	else if (le32(sb->magic) == F2FS_SUPER_MAGIC &&
		 !memcmp(sb->uuid, sbi->raw_super.uuid, sizeof(sb->uuid)))
		ret = f2fs_error(sbi, EINVAL, "device %u (%s) holds this volume's super block: "
				 "it is the first device, not device %u (devices swapped?)", i,
				 sbi->devs[i].path, i);
	free(blk);
	return ret;
}

static int check_size(struct f2fs_sb_info *sbi, unsigned int i, uint64_t need)
{
	if (sbi->devs[i].size >= need)
		return 0;
	return f2fs_error(sbi, EINVAL, "device %u (%s) has %llu bytes but the volume puts %llu "
			  "on it: a wrong or truncated device", i, sbi->devs[i].path,
			  (unsigned long long)sbi->devs[i].size, (unsigned long long)need);
}

/* The same file named twice would be opened twice, which the lock refuses obscurely. */
static int check_distinct(struct f2fs_sb_info *sbi, unsigned int i)
{
	struct f2fs_devinfo *d = &sbi->devs[i];
	struct stat st;

	if (stat(d->path, &st))
		return 0;	/* the open names the error */
	d->st_dev = st.st_dev;
	d->st_ino = st.st_ino;
	for (unsigned int j = 0; j < i; j++)
		if (sbi->devs[j].st_dev == st.st_dev && sbi->devs[j].st_ino == st.st_ino)
			return f2fs_error(sbi, EINVAL, "device %u (%s) is the same file as device "
					  "%u (%s)%s", i, d->path, j, sbi->devs[j].path,
					  j ? "" : ", which holds the super block: devices swapped?");
	return 0;
}

static int add_device(struct f2fs_sb_info *sbi, unsigned int i, uint32_t segs)
{
	const struct f2fs_super_block *sb = &sbi->raw_super;
	struct f2fs_devinfo *d = &sbi->devs[i];
	uint64_t bytes = (uint64_t)segs * sbi->blocks_per_seg * F2FS_BLKSIZE;
	struct f2fs_dev *m;
	int ret;

	if (sbi->opts.nr_devices)
		snprintf(d->path, sizeof(d->path), "%s", sbi->opts.devices[i - 1]);
	else
		snprintf(d->path, sizeof(d->path), "%.*s", F2FS_MAX_PATH_LEN,
			 (const char *)sb->devs[i].path);
	d->start_blk = sbi->devs[i - 1].end_blk + 1;
	d->end_blk = d->start_blk + segs * sbi->blocks_per_seg - 1;
	ret = check_distinct(sbi, i);
	if (ret)
		return ret;
	ret = f2fs_dev_multi_add(&sbi->dev, d->path, bytes, &sbi->opts, &m);
	if (ret)
		return f2fs_error(sbi, -ret, "device %u (%s): %s%s", i, d->path,
				  sbi->dev.open_error[0] ? sbi->dev.open_error : strerror(-ret),
				  ret == -ENOENT && !sbi->opts.nr_devices ?
				  " (moved? give each device after the first with -o device=PATH)" :
				  "");
	d->size = m->size;
	ret = check_size(sbi, i, bytes);
	return ret ? ret : check_not_first(sbi, m, i);
}

int f2fs_open_devices(struct f2fs_sb_info *sbi)
{
	const struct f2fs_super_block *sb = &sbi->raw_super;
	uint32_t segs, segs_per_zone = sbi->segs_per_sec * le32(sb->secs_per_zone);
	unsigned int n = count_devices(sb, &segs);
	int ret;

	if (!n) {
		if (sbi->opts.nr_devices)
			return f2fs_error(sbi, EINVAL, "device=: %s is a single-device volume",
					  sbi->opts.device);
		return 0;
	}
	/* the kernel wants the sum exact; f2fs-tools also accepts it rounded to zones */
	if (segs != sbi->total_segs && segs / segs_per_zone * segs_per_zone != sbi->total_segs)
		return f2fs_error(sbi, EFSCORRUPTED, "super block: segment count %u does not match "
				  "the %u segments of its %u devices", sbi->total_segs, segs, n);
	if (sbi->opts.nr_devices && sbi->opts.nr_devices != n - 1)
		return f2fs_error(sbi, EINVAL, "the volume has %u devices: device= must name the "
				  "%u after the first, in order (got %u)", n, n - 1,
				  sbi->opts.nr_devices);
	sbi->ndevs = n;
	snprintf(sbi->devs[0].path, sizeof(sbi->devs[0].path), "%s",
		 sbi->opts.device ? sbi->opts.device : "(ram)");
	sbi->devs[0].start_blk = 0;
	sbi->devs[0].end_blk = sbi->seg0_blkaddr +
			       le32(sb->devs[0].total_segments) * sbi->blocks_per_seg - 1;
	sbi->devs[0].size = sbi->dev.size;
	ret = check_distinct(sbi, 0);
	if (!ret)
		ret = check_size(sbi, 0, ((uint64_t)sbi->devs[0].end_blk + 1) * F2FS_BLKSIZE);
	if (ret)
		return ret;
	ret = f2fs_dev_multi_begin(&sbi->dev, ((uint64_t)sbi->devs[0].end_blk + 1) * F2FS_BLKSIZE);
	if (ret)
		return f2fs_error(sbi, -ret, "%s", sbi->dev.open_error[0] ? sbi->dev.open_error
							       : strerror(-ret));
	for (unsigned int i = 1; i < n; i++) {
		ret = add_device(sbi, i, le32(sb->devs[i].total_segments));
		if (ret)
			return ret;
	}
	return 0;
}
