// SPDX-License-Identifier: GPL-2.0
/*
 * The RAM backend: the image held in memory (tests, the fuzzer, and
 * backend=ram), with the power-cut model the power-loss runner uses: reads
 * see every write, but only flushed writes are durable, and after the Nth
 * write nothing more lands (optionally tearing the last one).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

static int ram_rw(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off,
		  bool write)
{
	for (int i = 0; i < cnt; i++) {
		if (off + iov[i].iov_len > dev->size || off + iov[i].iov_len < off)
			return -EIO;
		if (write)
			memcpy(dev->ram + off, iov[i].iov_base, iov[i].iov_len);
		else
			memcpy(iov[i].iov_base, dev->ram + off, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	return 0;
}

static int ram_readv(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off)
{
	return ram_rw(dev, iov, cnt, off, false);
}

/* Under the power-cut model a write is pending until a flush. */
static int remember_pending(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off)
{
	struct pending_write *p;
	size_t len = dev_iov_bytes(iov, cnt), done = 0;

	if (dev->nr_pending == dev->pending_cap) {
		unsigned int cap = dev->pending_cap ? dev->pending_cap * 2 : 64;

		p = realloc(dev->pending, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		dev->pending = p;
		dev->pending_cap = cap;
	}
	p = &dev->pending[dev->nr_pending];
	p->data = malloc(len ? len : 1);
	if (!p->data)
		return -ENOMEM;
	for (int i = 0; i < cnt; i++) {
		memcpy(p->data + done, iov[i].iov_base, iov[i].iov_len);
		done += iov[i].iov_len;
	}
	p->off = off;
	p->len = len;
	dev->nr_pending++;
	return 0;
}

static int ram_writev(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off)
{
	int ret = 0;

	if (!dev->durable)
		return ram_rw(dev, iov, cnt, off, true);
	pthread_mutex_lock(&dev->pc_lock);
	if (dev->cut) {
		pthread_mutex_unlock(&dev->pc_lock);
		return 0;	/* the power is off: the write goes nowhere */
	}
	ret = ram_rw(dev, iov, cnt, off, true);
	if (!ret)
		ret = remember_pending(dev, iov, cnt, off);
	if (++dev->nr_writes >= dev->cut_at && dev->cut_at)
		dev->cut = true;
	pthread_mutex_unlock(&dev->pc_lock);
	return ret;
}

static void drop_pending(struct f2fs_dev *dev)
{
	for (unsigned int i = 0; i < dev->nr_pending; i++)
		free(dev->pending[i].data);
	dev->nr_pending = 0;
}

static int ram_flush(struct f2fs_dev *dev)
{
	if (!dev->durable)
		return 0;
	pthread_mutex_lock(&dev->pc_lock);
	if (!dev->cut) {
		for (unsigned int i = 0; i < dev->nr_pending; i++)
			memcpy(dev->durable + dev->pending[i].off, dev->pending[i].data,
			       dev->pending[i].len);
		drop_pending(dev);
	}
	pthread_mutex_unlock(&dev->pc_lock);
	return 0;
}

int f2fs_dev_persisted(struct f2fs_dev *dev, uint8_t **out, size_t *len)
{
	uint8_t *img;

	if (!dev->durable)
		return -EINVAL;
	img = malloc(dev->size);
	if (!img)
		return -ENOMEM;
	pthread_mutex_lock(&dev->pc_lock);
	memcpy(img, dev->durable, dev->size);
	/* the torn variant: what was sent may have landed, the last one in part */
	for (unsigned int i = 0; dev->tear && i < dev->nr_pending; i++) {
		struct pending_write *p = &dev->pending[i];
		size_t n = i + 1 == dev->nr_pending ? p->len / 2 : p->len;

		memcpy(img + p->off, p->data, n);
	}
	pthread_mutex_unlock(&dev->pc_lock);
	*out = img;
	*len = dev->size;
	return 0;
}

static int ram_discard(struct f2fs_dev *dev, uint64_t off, uint64_t len)
{
	if (off + len > dev->size)
		return -EINVAL;
	memset(dev->ram + off, 0, len);
	return 0;
}

static void ram_close(struct f2fs_dev *dev)
{
	if (dev->durable) {
		drop_pending(dev);
		free(dev->pending);
		free(dev->durable);
		pthread_mutex_destroy(&dev->pc_lock);
		dev->durable = NULL;
	}
	if (dev->ram_owned)
		free(dev->ram);
	dev->ram = NULL;
}

static const struct f2fs_dev_ops ram_ops = {
	.readv = ram_readv,
	.writev = ram_writev,
	.flush = ram_flush,
	.discard = ram_discard,
	.close = ram_close,
};

/*
 * The image file read whole into memory (opts->device), or the caller's
 * bytes (opts->ram_image): served in place when nothing writes, else copied.
 */
static int ram_load(struct f2fs_dev *dev, const struct uf2fs_options *opts)
{
	struct iovec v;
	int ret;

	if (opts->ram_image) {
		dev->size = opts->ram_size;
		ret = dev_sparse_probe(dev, opts->ram_image, dev->size);
		if (ret)
			return ret;
		if (dev->read_only) {
			dev->ram = (uint8_t *)opts->ram_image;
			return 0;
		}
		dev->ram = malloc(dev->size ? dev->size : 1);
		if (!dev->ram)
			return -ENOMEM;
		dev->ram_owned = true;
		memcpy(dev->ram, opts->ram_image, dev->size);
		return 0;
	}
	if (!opts->device)
		return -EINVAL;
	ret = dev_fd_open(dev, opts->device);
	if (ret)
		return ret;
	dev->ram = malloc(dev->size ? dev->size : 1);
	if (!dev->ram) {
		dev_fd_close(dev);
		return -ENOMEM;
	}
	dev->ram_owned = true;
	v = (struct iovec){ dev->ram, dev->size };
	ret = dev_rw_full(dev->fd, &v, 1, 0, false);
	dev_fd_close(dev);
	if (!ret)
		ret = dev_sparse_probe(dev, dev->ram, dev->size);
	if (ret < 0) {
		free(dev->ram);
		dev->ram = NULL;
		dev->ram_owned = false;
	}
	return ret;
}

int dev_ram_open(struct f2fs_dev *dev, const struct uf2fs_options *opts)
{
	int ret = ram_load(dev, opts);

	if (ret)
		return ret < 0 ? ret : 0;	/* 1: the sparse layer took it */
	dev->ops = &ram_ops;
	if (!dev->read_only && opts->power_cut_model) {
		dev->durable = malloc(dev->size ? dev->size : 1);
		if (!dev->durable)
			return -ENOMEM;
		memcpy(dev->durable, dev->ram, dev->size);
		pthread_mutex_init(&dev->pc_lock, NULL);
		dev->cut_at = opts->fault_cut_at;
		dev->tear = opts->fault_tear;
	}
	return 0;
}
