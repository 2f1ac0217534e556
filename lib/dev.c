// SPDX-License-Identifier: GPL-2.0
/*
 * The block device under the filesystem: an image file or a block device,
 * reached through one of three backends (psync, io_uring, RAM), or, for an
 * Android sparse image, a read-only layer over the file (lib/sparse.c). Every request
 * is one contiguous run of blocks; this file counts requests and bytes and
 * keeps the request-size histogram that proves batching and merging work. It
 * also hosts fault injection (EIO at the Nth request) for tests.
 */
#include <fcntl.h>
#include <linux/falloc.h>
#include <liburing.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "f2fs.h"
#include "sparse.h"

/// Request accounting ///

static unsigned int hist_bucket(uint64_t bytes)
{
	unsigned int b = 0;

	/* bucket 0 is <= 4K, each next doubles, the last collects 2M and up */
	while (b < DEV_HIST_BUCKETS - 1 && bytes > (4096ull << b))
		b++;
	return b;
}

static size_t iov_bytes(const struct iovec *iov, int cnt)
{
	size_t n = 0;

	for (int i = 0; i < cnt; i++)
		n += iov[i].iov_len;
	return n;
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

/// psync backend ///

static int rw_full(int fd, const struct iovec *iov, int cnt, uint64_t off, bool write)
{
	struct iovec local[64];
	size_t total = iov_bytes(iov, cnt);

	if (cnt > (int)ARRAY_SIZE(local)) {
		/* rare: fall back to one call per vector */
		for (int i = 0; i < cnt; i++) {
			int ret = rw_full(fd, &iov[i], 1, off, write);

			if (ret)
				return ret;
			off += iov[i].iov_len;
		}
		return 0;
	}
	memcpy(local, iov, sizeof(*iov) * cnt);
	struct iovec *v = local;

	while (total) {
		ssize_t n = write ? pwritev(fd, v, cnt, off) : preadv(fd, v, cnt, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;	/* short read past the end of the image */
		total -= n;
		off += n;
		while (n && cnt) {
			if ((size_t)n >= v->iov_len) {
				n -= v->iov_len;
				v++;
				cnt--;
			} else {
				v->iov_base = (uint8_t *)v->iov_base + n;
				v->iov_len -= n;
				n = 0;
			}
		}
	}
	return 0;
}

static int psync_readv(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off)
{
	return rw_full(dev->fd, iov, cnt, off, false);
}

static int psync_writev(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off)
{
	return rw_full(dev->fd, iov, cnt, off, true);
}

static int psync_flush(struct f2fs_dev *dev)
{
	return fdatasync(dev->fd) ? -errno : 0;
}

/* Freed segments: a hole in an image file, a discard on a block device. */
static int fd_discard(struct f2fs_dev *dev, uint64_t off, uint64_t len)
{
	if (dev->is_blkdev) {
		uint64_t range[2] = { off, len };

		return ioctl(dev->fd, BLKDISCARD, range) ? -errno : 0;
	}
	return fallocate(dev->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len) ? -errno : 0;
}

static void fd_close(struct f2fs_dev *dev)
{
	if (dev->fd >= 0)
		close(dev->fd);
	dev->fd = -1;
}

static const struct f2fs_dev_ops psync_ops = {
	.readv = psync_readv,
	.writev = psync_writev,
	.flush = psync_flush,
	.discard = fd_discard,
	.close = fd_close,
};

/// io_uring backend ///

/*
 * One ring per calling thread: FUSE worker threads issue requests
 * concurrently, and a shared ring would need a lock around submit+wait that
 * serializes them. Each thread's ring is created lazily and torn down at exit.
 */
static __thread struct io_uring *tls_ring;
static __thread bool tls_ring_failed;
static pthread_key_t ring_key;
static pthread_once_t ring_once = PTHREAD_ONCE_INIT;

static void ring_destroy(void *p)
{
	struct io_uring *ring = p;

	io_uring_queue_exit(ring);
	free(ring);
}

static void ring_key_init(void)
{
	pthread_key_create(&ring_key, ring_destroy);
}

static struct io_uring *thread_ring(void)
{
	if (tls_ring || tls_ring_failed)
		return tls_ring;
	pthread_once(&ring_once, ring_key_init);
	struct io_uring *ring = calloc(1, sizeof(*ring));

	if (!ring || io_uring_queue_init(8, ring, 0) < 0) {
		free(ring);
		tls_ring_failed = true;
		return NULL;
	}
	pthread_setspecific(ring_key, ring);
	tls_ring = ring;
	return ring;
}

static int uring_rw(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off,
		    bool write)
{
	struct io_uring *ring = thread_ring();
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	size_t want = iov_bytes(iov, cnt);
	int ret;

	if (!ring)
		return rw_full(dev->fd, iov, cnt, off, write);
	sqe = io_uring_get_sqe(ring);
	if (write)
		io_uring_prep_writev(sqe, dev->fd, iov, cnt, off);
	else
		io_uring_prep_readv(sqe, dev->fd, iov, cnt, off);
	ret = io_uring_submit_and_wait(ring, 1);
	if (ret < 0)
		return ret;
	ret = io_uring_wait_cqe(ring, &cqe);
	if (ret < 0)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	if (ret < 0)
		return ret;
	if ((size_t)ret != want) {
		/* a short transfer: finish it synchronously */
		struct iovec rest[64];
		int n = 0;
		size_t skip = ret;

		for (int i = 0; i < cnt && n < 64; i++) {
			if (skip >= iov[i].iov_len) {
				skip -= iov[i].iov_len;
				continue;
			}
			rest[n].iov_base = (uint8_t *)iov[i].iov_base + skip;
			rest[n++].iov_len = iov[i].iov_len - skip;
			skip = 0;
		}
		return rw_full(dev->fd, rest, n, off + ret, write);
	}
	return 0;
}

static int uring_readv(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off)
{
	return uring_rw(dev, iov, cnt, off, false);
}

static int uring_writev(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off)
{
	return uring_rw(dev, iov, cnt, off, true);
}

static const struct f2fs_dev_ops uring_ops = {
	.readv = uring_readv,
	.writev = uring_writev,
	.flush = psync_flush,
	.discard = fd_discard,
	.close = fd_close,
};

/// RAM backend ///

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
	size_t len = iov_bytes(iov, cnt), done = 0;

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

/// Android sparse images (read-only) ///

/*
 * Detected by magic whatever backend was asked for: the image is served from
 * the sparse file's chunk index (pread on the file, or the RAM copy), never
 * expanded. Writes cannot work in place (a block may live in a fill or
 * don't-care chunk), so a read-write open is refused before anything else.
 */
static int sparse_readv(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off)
{
	for (int i = 0; i < cnt; i++) {
		int ret = f2fs_sparse_pread(dev->priv, iov[i].iov_base, iov[i].iov_len, off);

		if (ret)
			return ret;
		off += iov[i].iov_len;
	}
	return 0;
}

static int sparse_writev(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off)
{
	return -EROFS;
}

static int sparse_flush(struct f2fs_dev *dev)
{
	return 0;
}

static void sparse_close(struct f2fs_dev *dev)
{
	f2fs_sparse_close(dev->priv);
	dev->priv = NULL;
	fd_close(dev);
	if (dev->ram_owned)
		free(dev->ram);
	dev->ram = NULL;
}

static const struct f2fs_dev_ops sparse_ops = {
	.readv = sparse_readv,
	.writev = sparse_writev,
	.flush = sparse_flush,
	.close = sparse_close,
};

/*
 * If the file (dev->fd) or the bytes (mem) are a sparse image, index it and
 * switch to the sparse layer: 1. Not sparse: 0. Refused or corrupt: < 0,
 * with the reason in dev->open_error.
 */
static int dev_try_sparse(struct f2fs_dev *dev, const uint8_t *mem, uint64_t size)
{
	uint8_t head[4];
	struct f2fs_sparse *sp;
	int ret;

	if (size < sizeof(head))
		return 0;
	if (mem)
		memcpy(head, mem, sizeof(head));
	else if (pread(dev->fd, head, sizeof(head), 0) != sizeof(head))
		return 0;	/* the mount's own reads will report it */
	if (!f2fs_sparse_magic(head, sizeof(head)))
		return 0;
	if (!dev->read_only) {
		snprintf(dev->open_error, sizeof(dev->open_error), "an Android sparse image "
			 "cannot be written: mount it read-only, or expand it first with "
			 "simg2img IMAGE RAW.img and write to that");
		return -EROFS;
	}
	ret = f2fs_sparse_open(mem ? -1 : dev->fd, mem, size, &sp, dev->open_error,
			       sizeof(dev->open_error));
	if (ret)
		return ret;
	dev->priv = sp;
	dev->size = f2fs_sparse_size(sp);
	dev->ops = &sparse_ops;
	return 1;
}

/// Open and the block-run API ///

static int dev_open_fd(struct f2fs_dev *dev, const char *path)
{
	struct stat st;

	dev->fd = open(path, (dev->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (dev->fd < 0)
		return -errno;
	/* one writer or many readers: two writers would corrupt the image */
	if (flock(dev->fd, (dev->read_only ? LOCK_SH : LOCK_EX) | LOCK_NB)) {
		int err = errno == EWOULDBLOCK ? -EBUSY : -errno;

		fd_close(dev);
		return err;
	}
	if (fstat(dev->fd, &st)) {
		int err = -errno;

		fd_close(dev);
		return err;
	}
	if (S_ISBLK(st.st_mode)) {
		dev->is_blkdev = true;
		if (ioctl(dev->fd, BLKGETSIZE64, &dev->size)) {
			int err = -errno;

			fd_close(dev);
			return err;
		}
	} else if (S_ISREG(st.st_mode)) {
		dev->size = st.st_size;
	} else {
		fd_close(dev);
		return -EINVAL;
	}
	return 0;
}

int f2fs_dev_open(struct f2fs_dev *dev, const struct uf2fs_options *opts)
{
	int ret;

	memset(dev, 0, sizeof(*dev));
	dev->fd = -1;
	dev->read_only = opts->read_only;
	if (opts->backend == UF2FS_BACKEND_RAM) {
		if (!opts->ram_image && opts->device) {
			ret = dev_open_fd(dev, opts->device);

			if (ret)
				return ret;
			dev->ram = malloc(dev->size ? dev->size : 1);
			if (!dev->ram) {
				fd_close(dev);
				return -ENOMEM;
			}
			dev->ram_owned = true;
			struct iovec v = { dev->ram, dev->size };

			ret = rw_full(dev->fd, &v, 1, 0, false);
			fd_close(dev);
			if (!ret)
				ret = dev_try_sparse(dev, dev->ram, dev->size);
			if (ret < 0) {
				free(dev->ram);
				dev->ram = NULL;
				return ret;
			}
			if (ret)
				goto sparse;
		} else {
			dev->size = opts->ram_size;
			ret = dev_try_sparse(dev, opts->ram_image, dev->size);
			if (ret < 0)
				return ret;
			if (ret)
				goto sparse;
			if (dev->read_only) {
				/* nothing writes: serve the caller's bytes in place */
				dev->ram = (uint8_t *)opts->ram_image;
				dev->ops = &ram_ops;
				atomic_store(&dev->fail_at, opts->fault_eio_at);
				return 0;
			}
			dev->ram = malloc(dev->size ? dev->size : 1);
			if (!dev->ram)
				return -ENOMEM;
			dev->ram_owned = true;
			memcpy(dev->ram, opts->ram_image, dev->size);
		}
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
		atomic_store(&dev->fail_at, opts->fault_eio_at);
		return 0;
	}
	atomic_store(&dev->fail_at, opts->fault_eio_at);
	if (!opts->device)
		return -EINVAL;
	ret = dev_open_fd(dev, opts->device);
	if (ret)
		return ret;
	ret = dev_try_sparse(dev, NULL, dev->size);
	if (ret < 0) {
		fd_close(dev);
		return ret;
	}
	if (!ret)
		dev->ops = opts->backend == UF2FS_BACKEND_URING ? &uring_ops : &psync_ops;
	return 0;
sparse:
	atomic_store(&dev->fail_at, opts->fault_eio_at);
	return 0;
}

void f2fs_dev_close(struct f2fs_dev *dev)
{
	if (dev->ops)
		dev->ops->close(dev);
	dev->ops = NULL;
}

int f2fs_dev_readv_blocks(struct f2fs_dev *dev, const struct iovec *iov, int cnt, block_t blk)
{
	size_t bytes = iov_bytes(iov, cnt);
	uint64_t off = (uint64_t)blk << F2FS_BLKSIZE_BITS;

	if (off + bytes > dev->size)
		return -EIO;	/* past the end: a truncated image */
	int ret = dev_account(dev, DEV_READ, bytes);

	if (ret)
		return ret;
	return dev->ops->readv(dev, iov, cnt, off);
}

int f2fs_dev_read_blocks(struct f2fs_dev *dev, void *buf, block_t blkaddr, unsigned int nr)
{
	struct iovec v = { buf, (size_t)nr << F2FS_BLKSIZE_BITS };

	return f2fs_dev_readv_blocks(dev, &v, 1, blkaddr);
}

static int dev_writev(struct f2fs_dev *dev, const struct iovec *iov, int cnt, block_t blk,
		      bool ordered)
{
	size_t bytes = iov_bytes(iov, cnt);
	uint64_t off = (uint64_t)blk << F2FS_BLKSIZE_BITS;
	int ret;

	if (dev->read_only)
		return -EROFS;
	if (off + bytes > dev->size)
		return -ENOSPC;
	ret = dev_account(dev, DEV_WRITE, bytes);
	if (ret)
		return ret;
	ret = dev->ops->writev(dev, iov, cnt, off);
	/* counted once complete: a flush that starts after this covers it */
	if (ordered)
		atomic_fetch_add(&dev->order_gen, 1);
	return ret;
}

int f2fs_dev_writev_blocks(struct f2fs_dev *dev, const struct iovec *iov, int cnt, block_t blk)
{
	return dev_writev(dev, iov, cnt, blk, true);
}

int f2fs_dev_writev_inplace(struct f2fs_dev *dev, const struct iovec *iov, int cnt, block_t blk)
{
	return dev_writev(dev, iov, cnt, blk, false);
}

int f2fs_dev_flush(struct f2fs_dev *dev)
{
	uint64_t gen = atomic_load(&dev->order_gen), seen;
	int ret;

	if (dev->read_only)
		return 0;
	atomic_fetch_add(&dev->st.flushes, 1);
	ret = dev->ops->flush(dev);
	if (ret)
		return ret;
	/* flushes of several threads finish in any order: keep the largest */
	seen = atomic_load(&dev->flushed_gen);
	while (seen < gen && !atomic_compare_exchange_weak(&dev->flushed_gen, &seen, gen))
		;
	return 0;
}

bool f2fs_dev_unflushed(struct f2fs_dev *dev)
{
	return atomic_load(&dev->flushed_gen) != atomic_load(&dev->order_gen);
}

int f2fs_dev_discard(struct f2fs_dev *dev, block_t blk, uint64_t nr)
{
	uint64_t off = (uint64_t)blk << F2FS_BLKSIZE_BITS, len = nr << F2FS_BLKSIZE_BITS;

	if (dev->read_only || !dev->ops->discard)
		return 0;
	atomic_fetch_add(&dev->st.discards, 1);
	if (dev->discard_hook)
		dev->discard_hook(dev->discard_hook_arg, blk, nr);
	/* advisory: a device that cannot discard loses nothing */
	dev->ops->discard(dev, off, len);
	return 0;
}
