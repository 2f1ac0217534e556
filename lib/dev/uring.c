// SPDX-License-Identifier: GPL-2.0
/*
 * The io_uring backend: each request is one readv/writev SQE on a ring of
 * the calling thread's, waited for at once; flush, discard and close are the
 * psync backend's.
 */
#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <stdlib.h>

#include "backend.h"


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
	size_t want = dev_iov_bytes(iov, cnt);
	int ret;

	if (!ring)
		return dev_rw_full(dev->fd, iov, cnt, off, write);
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
		return dev_rw_full(dev->fd, rest, n, off + ret, write);
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

const struct f2fs_dev_ops dev_uring_ops = {
	.readv = uring_readv,
	.writev = uring_writev,
	.flush = dev_fd_flush,
	.discard = dev_fd_discard,
	.close = dev_fd_close,
};
