// SPDX-License-Identifier: GPL-2.0
/*
 * Partitions: an f2fs volume that is one partition of a disk (a UFS or eMMC
 * dump with a GPT whose "userdata" holds /data, a VM disk, an MBR image).
 * libblkid reads the partition table; this file picks the partition that
 * -o partition=NAME|N names and turns the device into a window over it
 * (dev->base, dev->size), under whichever backend serves the disk.
 *
 * libblkid reads through a file descriptor. For a disk behind psync or
 * io_uring that is the disk itself; for the other backends (a sparse image,
 * RAM, a network export) it is a memfd as large as the disk that holds only
 * its first and last MiB, where GPT keeps its two headers and entry arrays
 * and MBR its table. The rest reads as zeros, so an MBR's chain of logical
 * partitions stops at the first extended boot record outside those ranges.
 */
#include <blkid.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uf2fs/format.h"
#include "backend.h"

#define PART_SHADOW_BYTES	(1u << 20)

/// A file descriptor for libblkid ///

static int shadow_copy(struct f2fs_dev *dev, int fd, uint64_t off, uint64_t len, void *buf)
{
	while (len) {
		size_t n = len < PART_SHADOW_BYTES ? len : PART_SHADOW_BYTES;
		struct iovec v = { buf, n };
		int ret = dev->ops->readv(dev, &v, 1, off);

		if (ret)
			return ret;
		if (pwrite(fd, buf, n, off) != (ssize_t)n)
			return -errno;
		off += n;
		len -= n;
	}
	return 0;
}

/* The disk's head and tail in a sparse memfd of the disk's size. */
static int part_shadow(struct f2fs_dev *dev, uint64_t size)
{
	uint64_t head = size < PART_SHADOW_BYTES ? size : PART_SHADOW_BYTES;
	uint64_t tail = size - head < PART_SHADOW_BYTES ? size - head : PART_SHADOW_BYTES;
	void *buf = malloc(PART_SHADOW_BYTES);
	int fd = memfd_create("uf2fs-partition-table", MFD_CLOEXEC);
	int ret;

	if (fd < 0 || !buf) {
		ret = fd < 0 ? -errno : -ENOMEM;
		goto fail;
	}
	if (ftruncate(fd, size)) {
		ret = -errno;
		goto fail;
	}
	ret = shadow_copy(dev, fd, 0, head, buf);
	if (!ret)
		ret = shadow_copy(dev, fd, size - tail, tail, buf);
	if (ret)
		goto fail;
	free(buf);
	return fd;
fail:
	free(buf);
	if (fd >= 0)
		close(fd);
	return ret;
}

static bool dev_is_raw_fd(const struct f2fs_dev *dev)
{
	return dev->fd >= 0 && (dev->ops == &dev_psync_ops || dev->ops == &dev_uring_ops);
}

/// Reading the table ///

static void part_fill(struct uf2fs_partition *up, blkid_partition par, bool gpt)
{
	const char *s;

	up->number = blkid_partition_get_partno(par);
	up->start = (uint64_t)blkid_partition_get_start(par) << 9;	/* 512-byte units */
	up->size = (uint64_t)blkid_partition_get_size(par) << 9;
	s = blkid_partition_get_name(par);
	snprintf(up->name, sizeof(up->name), "%s", s ? s : "");
	s = blkid_partition_get_uuid(par);
	snprintf(up->uuid, sizeof(up->uuid), "%s", s ? s : "");
	s = blkid_partition_get_type_string(par);
	if (gpt && s)
		snprintf(up->type, sizeof(up->type), "%s", s);
	else
		snprintf(up->type, sizeof(up->type), "0x%02x", blkid_partition_get_type(par));
}

/* The table as libblkid sees it with one sector size: 0 with parts->nr set, or -errno. */
static int part_scan_sectors(int fd, uint64_t size, unsigned int ssz,
			     struct uf2fs_partitions *parts)
{
	blkid_probe pr = blkid_new_probe();
	blkid_partlist ls;
	blkid_parttable tab;
	int nr, ret = 0;

	if (!pr)
		return -ENOMEM;
	if (blkid_probe_set_device(pr, fd, 0, size) || blkid_probe_set_sectorsize(pr, ssz)) {
		ret = -EIO;
		goto out;
	}
	ls = blkid_probe_get_partitions(pr);
	nr = ls ? blkid_partlist_numof_partitions(ls) : 0;
	tab = ls ? blkid_partlist_get_table(ls) : NULL;
	if (nr <= 0 || !tab)
		goto out;
	parts->part = calloc(nr, sizeof(*parts->part));
	if (!parts->part) {
		ret = -ENOMEM;
		goto out;
	}
	snprintf(parts->table, sizeof(parts->table), "%s", blkid_parttable_get_type(tab));
	parts->sector_size = ssz;
	for (int i = 0; i < nr; i++)
		part_fill(&parts->part[i], blkid_partlist_get_partition(ls, i),
			  !strcmp(parts->table, "gpt"));
	parts->nr = nr;
out:
	blkid_free_probe(pr);
	return ret;
}

static bool f2fs_magic_at(struct f2fs_dev *dev, uint64_t off, uint64_t limit)
{
	uint32_t magic;
	struct iovec v = { &magic, sizeof(magic) };

	if (off + F2FS_SUPER_OFFSET + sizeof(magic) > limit)
		return false;
	if (dev->ops->readv(dev, &v, 1, off + F2FS_SUPER_OFFSET))
		return false;
	return le32toh(magic) == F2FS_SUPER_MAGIC;
}

/* The partitions of the disk behind dev (its base and size are the whole disk's). */
static int part_scan(struct f2fs_dev *dev, struct uf2fs_partitions *parts)
{
	static const unsigned int sector_sizes[] = { 512, 4096 };
	bool own = !dev_is_raw_fd(dev);
	int fd = own ? part_shadow(dev, dev->size) : dev->fd;
	int ret = 0;

	memset(parts, 0, sizeof(*parts));
	if (fd < 0)
		return fd;
	for (unsigned int i = 0; i < 2 && !parts->nr && !ret; i++)
		ret = part_scan_sectors(fd, dev->size, sector_sizes[i], parts);
	if (own)
		close(fd);
	if (ret)
		return ret;
	parts->whole_f2fs = f2fs_magic_at(dev, 0, dev->size);
	for (unsigned int i = 0; i < parts->nr; i++)
		parts->part[i].f2fs = f2fs_magic_at(dev, parts->part[i].start, dev->size);
	return 0;
}

void uf2fs_free_partitions(struct uf2fs_partitions *parts)
{
	free(parts->part);
	parts->part = NULL;
	parts->nr = 0;
}

/// Choosing one ///

static const struct uf2fs_partition *part_match(const struct uf2fs_partitions *parts,
						const char *want)
{
	char *end;
	unsigned long n = strtoul(want, &end, 10);
	bool number = *want && !*end;

	for (unsigned int i = 0; i < parts->nr; i++) {
		const struct uf2fs_partition *p = &parts->part[i];

		if (number ? p->number == n : !strcmp(p->name, want))
			return p;
	}
	return NULL;
}

/* "1 boot_a, 2 userdata, ..." for the error that names what the disk has. */
static void part_names(const struct uf2fs_partitions *parts, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (unsigned int i = 0; i < parts->nr && used < len; i++) {
		const struct uf2fs_partition *p = &parts->part[i];
		int n = snprintf(buf + used, len - used, "%s%u%s%s", i ? ", " : "", p->number,
				 p->name[0] ? " " : "", p->name);

		used += n > 0 ? (size_t)n : 0;
	}
}

int dev_part_select(struct f2fs_dev *dev, const char *want)
{
	struct uf2fs_partitions parts;
	const struct uf2fs_partition *p;
	char names[160];
	int ret = part_scan(dev, &parts);

	if (ret)
		return ret;
	if (!parts.nr) {
		snprintf(dev->open_error, sizeof(dev->open_error),
			 "partition=%s: no partition table found (neither GPT nor MBR)", want);
		return -ENXIO;
	}
	p = part_match(&parts, want);
	if (!p) {
		part_names(&parts, names, sizeof(names));
		snprintf(dev->open_error, sizeof(dev->open_error),
			 "partition=%s: no such partition; the %s table has: %s", want,
			 parts.table, names);
		ret = -ENXIO;
	} else if (p->start + p->size > dev->size || p->start + p->size < p->start) {
		snprintf(dev->open_error, sizeof(dev->open_error),
			 "partition %u ends at byte %llu, past the end of the disk (%llu bytes): "
			 "a truncated dump?", p->number, (unsigned long long)(p->start + p->size),
			 (unsigned long long)dev->size);
		ret = -EIO;
	} else {
		dev->base = p->start;
		dev->size = p->size;
	}
	uf2fs_free_partitions(&parts);
	return ret;
}

int f2fs_dev_partition_hint(struct f2fs_dev *dev, char *buf, size_t len)
{
	struct uf2fs_partitions parts;
	char names[160];

	if (dev->base || part_scan(dev, &parts) || !parts.nr)
		return -ENOENT;
	part_names(&parts, names, sizeof(names));
	snprintf(buf, len, "this is a partitioned disk (%s: %s): pick the f2fs one with "
		 "-o partition=NAME or -o partition=N (uf2fs info lists them)", parts.table, names);
	uf2fs_free_partitions(&parts);
	return 0;
}

int f2fs_dev_partitions(struct f2fs_dev *dev, struct uf2fs_partitions *out)
{
	if (dev->base) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;	/* a partition was chosen: dev is no longer the disk */
	}
	return part_scan(dev, out);
}
