// SPDX-License-Identifier: GPL-2.0
/*
 * The device layer's core: opening the image through the backend the options
 * ask for (an Android sparse image is detected by its magic whatever was
 * asked), and the block-run API the file system uses. Every request is one
 * contiguous run of blocks; this file counts requests and bytes, keeps the
 * request-size histogram that shows batching and merging work, tracks which
 * writes a flush has covered (fsync's ordering), and hosts fault injection
 * (EIO at the Nth request) for tests.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uf2fs/format.h"
#include "backend.h"

/// Request accounting ///

static unsigned int hist_bucket(uint64_t bytes)
{
	unsigned int b = 0;

	/* bucket 0 is <= 4K, each next doubles, the last collects 2M and up */
	while (b < DEV_HIST_BUCKETS - 1 && bytes > (4096ull << b))
		b++;
	return b;
}


static int dev_account(struct f2fs_dev *dev, int dir, size_t bytes)
{
	uint64_t n = atomic_fetch_add(&dev->nr_submitted, 1) + 1;
	uint64_t fail = atomic_load(&dev->fail_at);

	atomic_fetch_add(&dev->st.reqs[dir], 1);
	atomic_fetch_add(&dev->st.bytes[dir], bytes);
	atomic_fetch_add(&dev->st.hist[dir][hist_bucket(bytes)], 1);
	if (fail && n == fail)
		return -EIO;
	return 0;
}


/// Open and the block-run API ///

static int dev_open_backend(struct f2fs_dev *dev, const struct uf2fs_options *opts)
{
	const char *format;
	int ret;

	if (opts->backend == UF2FS_BACKEND_RAM)
		return dev_ram_open(dev, opts);
	if (!opts->device)
		return -EINVAL;
	/* a URI with format= (not raw) is a VM disk stored in the export */
	if (dev_is_nbd_uri(opts->device))
		return dev_nbd_open(dev, opts, dev_vm_format(opts->device, opts));
	if (opts->image_format && strcmp(opts->image_format, "raw"))
		return dev_nbd_open(dev, opts, opts->image_format);
	/*
	 * The header is probed through the descriptor the image is opened
	 * with: opening and closing another would drop the POSIX lock the
	 * front end holds on it (a process's locks on a file all go with its
	 * first close), and with it the wait of a mount that follows this one.
	 */
	ret = dev_fd_open(dev, opts->device);
	if (ret)
		return ret;
	format = opts->image_format ? NULL : dev_fd_vm_format(dev->fd);
	if (format) {
		dev_fd_close(dev);	/* qemu-nbd takes its own locks on it */
		return dev_nbd_open(dev, opts, format);
	}
	ret = dev_sparse_probe(dev, NULL, dev->size);
	if (ret < 0) {
		dev_fd_close(dev);
		return ret;
	}
	if (!ret)
		dev->ops = opts->backend == UF2FS_BACKEND_URING ? &dev_uring_ops : &dev_psync_ops;
	return 0;
}

int f2fs_dev_open(struct f2fs_dev *dev, const struct uf2fs_options *opts)
{
	int ret;

	memset(dev, 0, sizeof(*dev));
	dev->fd = -1;
	dev->read_only = opts->read_only;
	dev->blkbits = F2FS_BLKSIZE_BITS;
	atomic_store(&dev->fail_at, opts->fault_eio_at);
	ret = dev_open_backend(dev, opts);
	if (ret || !opts->partition)
		return ret;
	ret = dev_part_select(dev, opts->partition);
	if (ret)
		f2fs_dev_close(dev);
	return ret;
}

void f2fs_dev_close(struct f2fs_dev *dev)
{
	if (dev->ops)
		dev->ops->close(dev);
	dev->ops = NULL;
	f2fs_dev_zones_free(dev);
}

static void (*dev_io_wait_hook)(void);

void uf2fs_set_io_wait_hook(void (*hook)(void))
{
	__atomic_store_n(&dev_io_wait_hook, hook, __ATOMIC_RELEASE);
}

static void dev_will_wait(void)
{
	void (*hook)(void) = __atomic_load_n(&dev_io_wait_hook, __ATOMIC_ACQUIRE);

	if (hook)
		hook();
}

int f2fs_dev_readv_blocks(struct f2fs_dev *dev, const struct iovec *iov, int cnt, block_t blk)
{
	size_t bytes = dev_iov_bytes(iov, cnt);
	uint64_t off = (uint64_t)blk << dev->blkbits;

	if (off + bytes > dev->size)
		return -EIO;	/* past the end: a truncated image */
	int ret = dev_account(dev, DEV_READ, bytes);

	if (ret)
		return ret;
	dev_will_wait();
	return dev->ops->readv(dev, iov, cnt, dev->base + off);
}

int f2fs_dev_read_blocks(struct f2fs_dev *dev, void *buf, block_t blkaddr, unsigned int nr)
{
	struct iovec v = { buf, (size_t)nr << dev->blkbits };

	return f2fs_dev_readv_blocks(dev, &v, 1, blkaddr);
}

static int dev_writev(struct f2fs_dev *dev, const struct iovec *iov, int cnt, block_t blk,
		      bool ordered, bool fua)
{
	size_t bytes = dev_iov_bytes(iov, cnt);
	uint64_t off = (uint64_t)blk << dev->blkbits;
	int ret;

	if (dev->read_only)
		return -EROFS;
	if (off + bytes > dev->size)
		return -ENOSPC;
	ret = dev_account(dev, DEV_WRITE, bytes);
	if (!ret && dev->zones)
		ret = dev_zones_write(dev, off, bytes);
	if (ret)
		return ret;
	dev_will_wait();
	ret = fua ? dev->ops->writev_fua(dev, iov, cnt, dev->base + off) :
		    dev->ops->writev(dev, iov, cnt, dev->base + off);
	if (!ret && dev->zones)
		ret = dev_zones_written(dev, off, bytes);
	/* counted once complete: a flush that starts after this covers it */
	if (ordered)
		atomic_fetch_add(&dev->order_gen, 1);
	return ret;
}

int f2fs_dev_writev_blocks(struct f2fs_dev *dev, const struct iovec *iov, int cnt, block_t blk)
{
	return dev_writev(dev, iov, cnt, blk, true, false);
}

int f2fs_dev_writev_inplace(struct f2fs_dev *dev, const struct iovec *iov, int cnt, block_t blk)
{
	return dev_writev(dev, iov, cnt, blk, false, false);
}

int f2fs_dev_flush(struct f2fs_dev *dev)
{
	uint64_t gen = atomic_load(&dev->order_gen), seen;
	int ret;

	if (dev->read_only)
		return 0;
	atomic_fetch_add(&dev->st.flushes, 1);
	dev_will_wait();
	ret = dev->ops->flush(dev);
	if (ret)
		return ret;
	/* flushes of several threads finish in any order: keep the largest */
	seen = atomic_load(&dev->flushed_gen);
	while (seen < gen && !atomic_compare_exchange_weak(&dev->flushed_gen, &seen, gen))
		;
	return 0;
}

int f2fs_dev_write_durable(struct f2fs_dev *dev, const struct iovec *iov, int cnt, block_t blk)
{
	int ret;

	if (!dev->ops->writev_fua) {
		ret = f2fs_dev_writev_blocks(dev, iov, cnt, blk);
		return ret ? ret : f2fs_dev_flush(dev);
	}
	/* not ordered: durable on completion, no later flush has to cover it */
	ret = dev_writev(dev, iov, cnt, blk, false, true);
	if (!ret)
		atomic_fetch_add(&dev->st.fua_writes, 1);
	return ret;
}

bool f2fs_dev_unflushed(struct f2fs_dev *dev)
{
	return atomic_load(&dev->flushed_gen) != atomic_load(&dev->order_gen);
}

int f2fs_dev_discard(struct f2fs_dev *dev, block_t blk, uint64_t nr)
{
	uint64_t off = (uint64_t)blk << dev->blkbits, len = nr << dev->blkbits;

	if (dev->read_only || !dev->ops->discard)
		return 0;
	atomic_fetch_add(&dev->st.discards, 1);
	if (dev->discard_hook)
		dev->discard_hook(dev->discard_hook_arg, blk, nr);
	/* advisory: a device that cannot discard loses nothing */
	if (!dev->zones || !dev_zones_discard(dev, off, len))
		dev->ops->discard(dev, dev->base + off, len);
	return 0;
}

int f2fs_dev_zone_reset(struct f2fs_dev *dev, block_t blk, uint64_t nr)
{
	if (dev->read_only || !dev->zones)
		return dev->read_only ? -EROFS : -EINVAL;
	return dev_zones_reset(dev, (uint64_t)blk << dev->blkbits, nr << dev->blkbits);
}
