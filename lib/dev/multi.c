// SPDX-License-Identifier: GPL-2.0
/*
 * The multi-device backend: a volume spread over up to eight devices, as
 * `mkfs.f2fs -c` makes it. It owns one struct f2fs_dev per member and maps
 * the volume's byte space onto them, each member holding one contiguous
 * range (the first one the metadata area too); a request that crosses a
 * boundary is split. The volume's own struct f2fs_dev keeps the accounting,
 * fault injection and flush ordering of core.c; the members only move bytes.
 * Which ranges and paths make the volume is the file system's business
 * (lib/super.c); this file only routes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

#define MIN_SZ(a, b) ((a) < (b) ? (a) : (b))

struct multi_member {
	struct f2fs_dev dev;
	uint64_t start, end;	/* the member's bytes in the volume: [start, end) */
};

struct multi_state {
	unsigned int nr;
	struct multi_member m[F2FS_DEV_MAX_MEMBERS];
};

static struct multi_state *multi(struct f2fs_dev *dev)
{
	return dev->priv;
}

/// Routing ///

static struct multi_member *member_at(struct multi_state *s, uint64_t off)
{
	for (unsigned int i = 0; i < s->nr; i++)
		if (off >= s->m[i].start && off < s->m[i].end)
			return &s->m[i];
	return NULL;
}

/*
 * The part of iov[] from byte skip on, at most len bytes, as a new vector
 * in out[] (which has room for cnt entries).
 */
static int iov_slice(const struct iovec *iov, int cnt, size_t skip, size_t len,
		     struct iovec *out)
{
	int n = 0;

	for (int i = 0; i < cnt && len; i++) {
		size_t l = iov[i].iov_len;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		out[n].iov_base = (uint8_t *)iov[i].iov_base + skip;
		out[n].iov_len = MIN_SZ(l - skip, len);
		len -= out[n].iov_len;
		skip = 0;
		n++;
	}
	return n;
}

/* Where a volume byte lies on its member: past the member's partition start, if any. */
static uint64_t member_off(const struct multi_member *m, uint64_t off)
{
	return m->dev.base + off - m->start;
}

static int multi_rw(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off,
		    bool write)
{
	struct multi_state *s = multi(dev);
	size_t total = dev_iov_bytes(iov, cnt), done = 0;
	struct iovec local[16], *part = local;
	int ret = 0;

	if (cnt > (int)(sizeof(local) / sizeof(local[0]))) {
		part = malloc(sizeof(*part) * cnt);
		if (!part)
			return -ENOMEM;
	}
	while (done < total && !ret) {
		struct multi_member *m = member_at(s, off + done);
		size_t len;
		int n;

		if (!m) {
			ret = write ? -ENOSPC : -EIO;
			break;
		}
		len = MIN_SZ(total - done, m->end - (off + done));
		n = iov_slice(iov, cnt, done, len, part);
		ret = write ? m->dev.ops->writev(&m->dev, part, n, member_off(m, off + done))
			    : m->dev.ops->readv(&m->dev, part, n, member_off(m, off + done));
		done += len;
	}
	if (part != local)
		free(part);
	return ret;
}

static int multi_readv(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off)
{
	return multi_rw(dev, iov, cnt, off, false);
}

static int multi_writev(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off)
{
	return multi_rw(dev, iov, cnt, off, true);
}

/* A flush orders what came before it on every member, as the kernel's on each bdev. */
static int multi_flush(struct f2fs_dev *dev)
{
	struct multi_state *s = multi(dev);
	int ret = 0;

	for (unsigned int i = 0; i < s->nr; i++) {
		int r = s->m[i].dev.ops->flush(&s->m[i].dev);

		if (r && !ret)
			ret = r;
	}
	return ret;
}

static int multi_discard(struct f2fs_dev *dev, uint64_t off, uint64_t len)
{
	struct multi_state *s = multi(dev);

	for (unsigned int i = 0; i < s->nr; i++) {
		struct multi_member *m = &s->m[i];
		uint64_t from = off > m->start ? off : m->start;
		uint64_t to = off + len < m->end ? off + len : m->end;

		if (from < to && m->dev.ops->discard)
			m->dev.ops->discard(&m->dev, member_off(m, from), to - from);
	}
	return 0;
}

static void multi_close(struct f2fs_dev *dev)
{
	struct multi_state *s = multi(dev);

	for (unsigned int i = 0; i < s->nr; i++)
		if (s->m[i].dev.ops)
			s->m[i].dev.ops->close(&s->m[i].dev);
	free(s);
	dev->priv = NULL;
}

static const struct f2fs_dev_ops dev_multi_ops = {
	.readv = multi_readv,
	.writev = multi_writev,
	.flush = multi_flush,
	.discard = multi_discard,
	.close = multi_close,
};

/// Assembly ///

int f2fs_dev_multi_begin(struct f2fs_dev *dev, uint64_t first_end)
{
	struct multi_state *s;

	if (dev->ops == &dev_multi_ops)
		return -EINVAL;
	if (dev->ram) {
		snprintf(dev->open_error, sizeof(dev->open_error),
			 "multi-device volumes need image files or block devices, not the RAM "
			 "backend");
		return -EOPNOTSUPP;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	/* the device already open becomes the first member, its backend state moved over */
	s->m[0].dev.ops = dev->ops;
	s->m[0].dev.fd = dev->fd;
	s->m[0].dev.size = dev->size;
	s->m[0].dev.read_only = dev->read_only;
	s->m[0].dev.priv = dev->priv;
	s->m[0].dev.is_blkdev = dev->is_blkdev;
	s->m[0].dev.blkbits = dev->blkbits;
	/* a partition (-o partition=) is the first member's window; members are reached raw */
	s->m[0].dev.base = dev->base;
	s->m[0].end = first_end;
	s->nr = 1;
	dev->ops = &dev_multi_ops;
	dev->priv = s;
	dev->fd = -1;
	dev->is_blkdev = false;
	dev->size = first_end;
	dev->base = 0;
	return 0;
}

int f2fs_dev_multi_add(struct f2fs_dev *dev, const char *path, uint64_t bytes,
		       const struct uf2fs_options *opts, struct f2fs_dev **member)
{
	struct multi_state *s = multi(dev);
	struct uf2fs_options o = *opts;
	struct multi_member *m;
	int ret;

	if (dev->ops != &dev_multi_ops || s->nr == F2FS_DEV_MAX_MEMBERS)
		return -EINVAL;
	m = &s->m[s->nr];
	o.device = path;
	o.partition = NULL;	/* the partition option names the first device's */
	o.fault_eio_at = 0;	/* counted once, on the volume */
	ret = f2fs_dev_open(&m->dev, &o);
	if (ret) {
		memcpy(dev->open_error, m->dev.open_error, sizeof(dev->open_error));
		return ret;
	}
	m->dev.blkbits = dev->blkbits;
	m->start = s->m[s->nr - 1].end;
	m->end = m->start + bytes;
	s->nr++;
	dev->size = m->end;
	*member = &m->dev;
	return 0;
}

struct f2fs_dev *f2fs_dev_multi_member(struct f2fs_dev *dev, unsigned int i)
{
	if (dev->ops != &dev_multi_ops || i >= multi(dev)->nr)
		return NULL;
	return &multi(dev)->m[i].dev;
}
