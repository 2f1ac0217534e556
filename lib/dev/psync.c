// SPDX-License-Identifier: GPL-2.0
/*
 * The psync backend: preadv/pwritev on the image file or block device, one
 * call per request (looping over short transfers). It also owns opening the
 * file (the one-writer lock, the size of a file or block device), fdatasync
 * as flush and discard as a punched hole or BLKDISCARD, which the io_uring,
 * RAM and sparse backends reuse.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define DEV_LOCK_WAIT_TRIES	100		/* 5 s in steps of 50 ms */
#define DEV_LOCK_WAIT_US	50000

size_t dev_iov_bytes(const struct iovec *iov, int cnt)
{
	size_t n = 0;

	for (int i = 0; i < cnt; i++)
		n += iov[i].iov_len;
	return n;
}

int dev_rw_full(int fd, const struct iovec *iov, int cnt, uint64_t off, bool write)
{
	struct iovec local[64];
	size_t total = dev_iov_bytes(iov, cnt);

	if (cnt > (int)ARRAY_SIZE(local)) {
		/* rare: fall back to one call per vector */
		for (int i = 0; i < cnt; i++) {
			int ret = dev_rw_full(fd, &iov[i], 1, off, write);

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
	return dev_rw_full(dev->fd, iov, cnt, off, false);
}

static int psync_writev(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off)
{
	return dev_rw_full(dev->fd, iov, cnt, off, true);
}

int dev_fd_flush(struct f2fs_dev *dev)
{
	return fdatasync(dev->fd) ? -errno : 0;
}

/* Freed segments: a hole in an image file, a discard on a block device. */
int dev_fd_discard(struct f2fs_dev *dev, uint64_t off, uint64_t len)
{
	if (dev->is_blkdev) {
		uint64_t range[2] = { off, len };

		return ioctl(dev->fd, BLKDISCARD, range) ? -errno : 0;
	}
	return fallocate(dev->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len) ? -errno : 0;
}

void dev_fd_close(struct f2fs_dev *dev)
{
	if (dev->fd >= 0)
		close(dev->fd);
	dev->fd = -1;
}

const struct f2fs_dev_ops dev_psync_ops = {
	.readv = psync_readv,
	.writev = psync_writev,
	.flush = dev_fd_flush,
	.discard = dev_fd_discard,
	.close = dev_fd_close,
};

int dev_fd_open(struct f2fs_dev *dev, const char *path)
{
	struct stat st;

	dev->fd = open(path, (dev->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (dev->fd < 0)
		return -errno;
	/*
	 * One writer or many readers: two writers would corrupt the image. A
	 * FUSE unmount returns before its daemon has written the final
	 * checkpoint and exited, so a mount right after one waits that out
	 * (bounded) rather than failing while the old daemon still holds this.
	 */
	int locked = flock(dev->fd, (dev->read_only ? LOCK_SH : LOCK_EX) | LOCK_NB);

	for (int tries = 0; locked && errno == EWOULDBLOCK && tries < DEV_LOCK_WAIT_TRIES; tries++) {
		usleep(DEV_LOCK_WAIT_US);
		locked = flock(dev->fd, (dev->read_only ? LOCK_SH : LOCK_EX) | LOCK_NB);
	}
	if (locked) {
		int err = errno == EWOULDBLOCK ? -EBUSY : -errno;

		dev_fd_close(dev);
		return err;
	}
	if (fstat(dev->fd, &st)) {
		int err = -errno;

		dev_fd_close(dev);
		return err;
	}
	if (S_ISBLK(st.st_mode)) {
		dev->is_blkdev = true;
		if (ioctl(dev->fd, BLKGETSIZE64, &dev->size)) {
			int err = -errno;

			dev_fd_close(dev);
			return err;
		}
	} else if (S_ISREG(st.st_mode)) {
		dev->size = st.st_size;
	} else {
		dev_fd_close(dev);
		return -EINVAL;
	}
	return 0;
}
