// SPDX-License-Identifier: GPL-2.0
/*
 * The NBD backend: images that are not a raw local file. An NBD URI
 * (nbd://, nbds://, nbd+unix://, everything nbd_connect_uri parses) is
 * served by its server; a VM disk (qcow2, VMDK, VDI, VHDX, QED, ... found by
 * the magic at the start of the file, or named by -o format=) by a qemu-nbd
 * that libnbd starts with socket activation (no port, no root) and that
 * exits when the handle closes. Both are one libnbd handle.
 *
 * Durability: FLUSH where the server has it (fsync, checkpoints), and FUA
 * on the checkpoint's closing block where it has that too.
 *
 * Concurrency: one handle, libnbd's asynchronous API, and no I/O thread of
 * its own. Caller threads submit their commands (one per run of contiguous
 * memory, so a vectored request is several commands in flight) and one of
 * the callers that wait drives the handle: it polls the socket and lets
 * libnbd receive every reply that has come, its own and the others'; the
 * rest sleep on their condition variables. A driver whose commands are done
 * hands the socket to the next waiter. A reply that its own caller receives
 * needs no wakeup at all, and its data is copied on to FUSE by the CPU that
 * received it. One handle rather than one per thread,
 * because socket activation starts one qemu-nbd per handle (several servers
 * on one qcow2 would each cache its metadata), and because a flush on one
 * connection covers the writes of another only when the server offers
 * multi-conn. libnbd calls run outside nd->lock (libnbd locks the handle
 * itself), so our bookkeeping never waits behind a receive's copy; nd->lock
 * guards only the waiters, their counts, and how many threads are inside
 * libnbd.
 *
 * Failure: a request that waits longer than nbd_timeout seconds, or a server
 * that closes the connection, makes the device dead: that request and every
 * later one fail with EIO, one message says why, and libnbd is not called
 * again. A caller that gives up returns only once no other thread is inside
 * libnbd, so no late reply can land in a buffer whose caller has gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <libnbd.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"

#define NBD_DEFAULT_TIMEOUT	30	/* seconds */
#define NBD_MAX_CMD		(8u << 20)	/* below every server's 32 MiB limit */
/*
 * A sequential reader's window: two 1 MiB FUSE reads in flight, so the
 * server reads the next while the last reply is copied out (with one, each
 * read waits a whole round trip). Deeper windows (4 and 8 MiB) measured
 * slower on a busy 2-CPU machine: the chain is CPU-bound there, and data
 * that waits in a deep window has left the cache before it is copied on.
 */
#define NBD_READAHEAD		(2u << 20)

/* What one command does (libnbd 1.14 names no command types). */
enum nbd_op { NBD_OP_READ, NBD_OP_WRITE, NBD_OP_TRIM, NBD_OP_FLUSH };

struct nbd_dev {
	struct nbd_handle *h;
	int wake_fd;			/* eventfd: breaks the driver's poll */
	pthread_mutex_t lock;		/* every libnbd call, and the fields below */
	pthread_condattr_t cattr;	/* CLOCK_MONOTONIC: deadlines ignore clock steps */
	struct nbd_wait *waiters;	/* callers waiting for replies: woken if it dies */
	struct nbd_wait *driver;	/* the waiter polling the socket, or NULL */
	unsigned int calls;		/* threads inside libnbd (or polling for it) */
	pthread_cond_t quiet;		/* dead, and calls fell to 0 */
	bool dead, can_trim, can_flush, can_fua;
	unsigned int timeout;
	const char *name;		/* the image string, for messages */
};

/*
 * One caller's request: commands in flight and the first error. Each has
 * its own condition variable: with a readahead window in flight, one shared
 * one woke every waiting thread at each reply.
 */
struct nbd_wait {
	struct nbd_dev *nd;
	pthread_cond_t done;		/* pending reached 0, it may drive, or it died */
	struct nbd_wait *prev, *next;	/* in nd->waiters while it waits */
	unsigned int pending;
	int err;
};

static void nbd_wake(struct nbd_dev *nd)
{
	uint64_t one = 1;

	if (write(nd->wake_fd, &one, sizeof(one)) < 0)
		return;	/* the counter is full: the driver wakes anyway */
}

/// Driving the handle ///

static void nbd_set_dead(struct nbd_dev *nd, const char *why)
{
	if (!why)
		why = "unknown error";
	if (!nd->dead)
		fprintf(stderr, "uf2fs: %s: NBD server lost (%s): I/O fails with EIO from now on;"
			" remount once the server is back\n", nd->name, why);
	__atomic_store_n(&nd->dead, true, __ATOMIC_RELEASE);	/* the driver reads it unlocked */
	for (struct nbd_wait *w = nd->waiters; w; w = w->next)
		pthread_cond_signal(&w->done);
	if (nd->driver)
		nbd_wake(nd);
}

/* This thread is the driver, inside its libnbd calls. */
static __thread bool nbd_driving;

/*
 * Runs inside a libnbd call, without nd->lock. Its waiter is still there:
 * a waiter leaves only when its count is 0, or once the device is dead and
 * no thread is inside libnbd (and a dead device's callbacks touch nothing).
 */
static int nbd_cmd_done(void *arg, int *error)
{
	struct nbd_wait *w = arg;
	struct nbd_dev *nd = w->nd;

	pthread_mutex_lock(&nd->lock);
	if (!nd->dead) {
		if (*error && !w->err)
			w->err = -*error;
		if (!--w->pending) {
			pthread_cond_signal(&w->done);
			if (nd->driver == w && !nbd_driving)
				nbd_wake(nd);	/* finished by another thread: stop polling */
		}
	}
	pthread_mutex_unlock(&nd->lock);
	return 1;
}

/* Before a libnbd call (nd->lock held): false once the device is dead. */
static bool nbd_enter(struct nbd_dev *nd)
{
	if (nd->dead)
		return false;
	nd->calls++;
	return true;
}

/* After it (nd->lock held). */
static void nbd_leave(struct nbd_dev *nd)
{
	if (!--nd->calls && nd->dead)
		pthread_cond_broadcast(&nd->quiet);
}

static int nbd_ms_left(const struct timespec *deadline)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (deadline->tv_sec - now.tv_sec) * 1000LL +
	     (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms < 0 ? 0 : ms > 1000 ? 1000 : ms;
}

/*
 * One round as the driver (nd->lock held on entry and exit, dropped for the
 * rest): wait for the socket (or a submission that left bytes to send),
 * then let libnbd move what it can. Replies complete their commands through
 * nbd_cmd_done, whoever they belong to.
 */
static void nbd_drive_once(struct nbd_dev *nd, struct nbd_wait *w,
			   const struct timespec *deadline)
{
	struct pollfd p[2] = { { .fd = -1 }, { .fd = nd->wake_fd, .events = POLLIN } };
	bool closed = false;
	uint64_t junk;
	unsigned int dir;
	int n;

	__atomic_store_n(&nd->driver, w, __ATOMIC_RELAXED);	/* nbd_kick reads it unlocked */
	nd->calls++;
	pthread_mutex_unlock(&nd->lock);
	dir = nbd_aio_get_direction(nd->h);
	p[0].fd = nbd_aio_get_fd(nd->h);
	p[0].events = (dir & LIBNBD_AIO_DIRECTION_READ ? POLLIN : 0) |
		      (dir & LIBNBD_AIO_DIRECTION_WRITE ? POLLOUT : 0);
	n = poll(p, 2, nbd_ms_left(deadline));
	if (p[1].revents & POLLIN && read(nd->wake_fd, &junk, sizeof(junk)) < 0)
		junk = 0;
	/* a device declared dead while we polled is not touched again */
	if (n > 0 && !__atomic_load_n(&nd->dead, __ATOMIC_ACQUIRE)) {
		nbd_driving = true;
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
			nbd_aio_notify_read(nd->h);
		else if (p[0].revents & POLLOUT)
			nbd_aio_notify_write(nd->h);
		nbd_driving = false;
		closed = nbd_aio_is_dead(nd->h) || nbd_aio_is_closed(nd->h);
	}
	pthread_mutex_lock(&nd->lock);
	__atomic_store_n(&nd->driver, NULL, __ATOMIC_RELAXED);
	if (closed)
		nbd_set_dead(nd, "connection closed");
	nbd_leave(nd);
}

/// Requests ///

/*
 * After a submission (inside libnbd, without nd->lock): libnbd sends a
 * command from within the aio call when the socket takes it, and a driver
 * already polls for the replies; it needs waking only when something is left
 * to send (POLLOUT). Without a driver, the submitter becomes one.
 */
static void nbd_kick(struct nbd_dev *nd)
{
	if (__atomic_load_n(&nd->driver, __ATOMIC_RELAXED) &&
	    nbd_aio_get_direction(nd->h) & LIBNBD_AIO_DIRECTION_WRITE)
		nbd_wake(nd);
}

static void nbd_wait_init(struct nbd_dev *nd, struct nbd_wait *w)
{
	memset(w, 0, sizeof(*w));
	w->nd = nd;
	pthread_cond_init(&w->done, &nd->cattr);
}

/* Enter w in the waiters (nd->lock held), before its first command. */
static void nbd_wait_link(struct nbd_dev *nd, struct nbd_wait *w)
{
	w->next = nd->waiters;
	if (w->next)
		w->next->prev = w;
	nd->waiters = w;
}

/*
 * Wait for w's commands, at most the timeout; called with nd->lock held.
 * While nobody drives the handle, this caller does. Leaves w finished (its
 * condition variable destroyed), and hands the driving to a waiter whose
 * commands are still out.
 */
static int nbd_wait_all(struct nbd_dev *nd, struct nbd_wait *w)
{
	struct timespec deadline;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += nd->timeout;
	while (w->pending && !nd->dead) {
		if (!nd->driver)
			nbd_drive_once(nd, w, &deadline);
		else
			pthread_cond_timedwait(&w->done, &nd->lock, &deadline);
		if (w->pending && !nd->dead && !nbd_ms_left(&deadline)) {
			char why[64];

			snprintf(why, sizeof(why), "no reply in %u s", nd->timeout);
			nbd_set_dead(nd, why);
		}
	}
	if (w->prev)
		w->prev->next = w->next;
	else
		nd->waiters = w->next;
	if (w->next)
		w->next->prev = w->prev;
	pthread_cond_destroy(&w->done);
	if (!nd->driver && nd->waiters)
		pthread_cond_signal(&nd->waiters->done);
	if (!w->pending)
		return w->err ? -EIO : 0;
	/* our buffers may still be libnbd's: wait until nobody can fill them */
	while (nd->calls)
		pthread_cond_wait(&nd->quiet, &nd->lock);
	return -EIO;
}

/* One command of w: counted before libnbd can complete it. */
static bool nbd_issue(struct nbd_dev *nd, struct nbd_wait *w, enum nbd_op op, void *buf, size_t len,
		      uint64_t off, uint32_t flags)
{
	nbd_completion_callback cb = { .callback = nbd_cmd_done, .user_data = w };
	int64_t cookie;

	pthread_mutex_lock(&nd->lock);
	if (nd->dead) {		/* declared while we issued the request's others */
		pthread_mutex_unlock(&nd->lock);
		return false;
	}
	w->pending++;
	pthread_mutex_unlock(&nd->lock);
	switch (op) {
	case NBD_OP_READ:
		cookie = nbd_aio_pread(nd->h, buf, len, off, cb, 0);
		break;
	case NBD_OP_WRITE:
		cookie = nbd_aio_pwrite(nd->h, buf, len, off, cb, flags);
		break;
	case NBD_OP_TRIM:
		cookie = nbd_aio_trim(nd->h, len, off, cb, 0);
		break;
	default:
		cookie = nbd_aio_flush(nd->h, cb, 0);
		break;
	}
	if (cookie >= 0)
		return true;
	pthread_mutex_lock(&nd->lock);
	w->pending--;
	nbd_set_dead(nd, nbd_get_error());
	pthread_mutex_unlock(&nd->lock);
	return false;
}

/*
 * A request's start: w waits from here, and this thread counts as inside
 * libnbd until nbd_end. False (nothing started) on a dead device.
 */
static bool nbd_begin(struct nbd_dev *nd, struct nbd_wait *w)
{
	bool ok;

	nbd_wait_init(nd, w);
	pthread_mutex_lock(&nd->lock);
	ok = nbd_enter(nd);
	if (ok)
		nbd_wait_link(nd, w);
	pthread_mutex_unlock(&nd->lock);
	if (!ok)
		pthread_cond_destroy(&w->done);
	return ok;
}

/* Its end, once its commands are issued (ok) or one failed: wait for them. */
static int nbd_end(struct nbd_dev *nd, struct nbd_wait *w, bool ok)
{
	int ret;

	if (ok)
		nbd_kick(nd);
	pthread_mutex_lock(&nd->lock);
	nbd_leave(nd);
	ret = nbd_wait_all(nd, w);
	pthread_mutex_unlock(&nd->lock);
	return ret;
}

/*
 * Submit one command per run of memory-contiguous segments (cut at
 * NBD_MAX_CMD), then wait for all. Writeback hands 4 KiB segments that are
 * mostly neighbours in one large folio: a command each cost a round trip's
 * overhead per block.
 */
static int nbd_rw(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off,
		  enum nbd_op op, uint32_t flags)
{
	struct nbd_dev *nd = dev->priv;
	struct nbd_wait w;
	bool ok;

	if (!nbd_begin(nd, &w))
		return -EIO;
	ok = true;
	for (int i = 0; i < cnt && ok; ) {
		uint8_t *buf = iov[i].iov_base;
		size_t n = 0;

		/* the first segment may itself be longer than a command */
		do {
			n += iov[i].iov_len;
		} while (++i < cnt && (uint8_t *)iov[i].iov_base == buf + n &&
			 n + iov[i].iov_len <= NBD_MAX_CMD);
		for (size_t done = 0, len; done < n && ok; done += len, off += len) {
			len = n - done < NBD_MAX_CMD ? n - done : NBD_MAX_CMD;
			ok = nbd_issue(nd, &w, op, buf + done, len, off, flags);
		}
	}
	return nbd_end(nd, &w, ok);
}

static int nbd_readv(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off)
{
	return nbd_rw(dev, iov, cnt, off, NBD_OP_READ, 0);
}

static int nbd_writev(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off)
{
	return nbd_rw(dev, iov, cnt, off, NBD_OP_WRITE, 0);
}

/* Only in the ops of a server that offers FUA (the checkpoint's last block). */
static int nbd_writev_fua(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off)
{
	return nbd_rw(dev, iov, cnt, off, NBD_OP_WRITE, LIBNBD_CMD_FLAG_FUA);
}

/* FLUSH or TRIM: one command. */
static int nbd_one(struct f2fs_dev *dev, bool trim, uint64_t off, uint64_t len)
{
	struct nbd_dev *nd = dev->priv;
	struct nbd_wait w;

	if (!nbd_begin(nd, &w))
		return -EIO;
	return nbd_end(nd, &w, nbd_issue(nd, &w, trim ? NBD_OP_TRIM : NBD_OP_FLUSH, NULL, len,
					  off, 0));
}

static int nbd_dev_flush(struct f2fs_dev *dev)
{
	struct nbd_dev *nd = dev->priv;

	/* a server without FLUSH writes through (or promises nothing more) */
	if (!nd->can_flush)
		return __atomic_load_n(&nd->dead, __ATOMIC_ACQUIRE) ? -EIO : 0;
	return nbd_one(dev, false, 0, 0);
}

static int nbd_discard(struct f2fs_dev *dev, uint64_t off, uint64_t len)
{
	struct nbd_dev *nd = dev->priv;

	if (!nd->can_trim)
		return 0;
	return nbd_one(dev, true, off, len);
}

static void nbd_dev_close(struct f2fs_dev *dev)
{
	struct nbd_dev *nd = dev->priv;

	if (!nd)
		return;
	/* a clean NBD_CMD_DISC; qemu-nbd then exits and nbd_close reaps it */
	if (!nd->dead)
		nbd_shutdown(nd->h, 0);
	nbd_close(nd->h);
	close(nd->wake_fd);
	pthread_mutex_destroy(&nd->lock);
	pthread_cond_destroy(&nd->quiet);
	pthread_condattr_destroy(&nd->cattr);
	free(nd);
	dev->priv = NULL;
}

static const struct f2fs_dev_ops dev_nbd_ops = {
	.readv = nbd_readv,
	.writev = nbd_writev,
	.flush = nbd_dev_flush,
	.discard = nbd_discard,
	.close = nbd_dev_close,
};

static const struct f2fs_dev_ops dev_nbd_fua_ops = {
	.readv = nbd_readv,
	.writev = nbd_writev,
	.writev_fua = nbd_writev_fua,
	.flush = nbd_dev_flush,
	.discard = nbd_discard,
	.close = nbd_dev_close,
};

/// Probing ///

bool dev_is_nbd_uri(const char *image)
{
	/* nbd://, nbds://, nbd+unix://, nbds+unix://, nbd+vsock://, ... */
	return !strncmp(image, "nbd://", 6) || !strncmp(image, "nbds://", 7) ||
	       !strncmp(image, "nbd+", 4) || !strncmp(image, "nbds+", 5);
}

struct vm_magic {
	const char *format;
	unsigned int off;
	const char *magic;
	unsigned int len;
};

/* The formats' own magics (qemu's block drivers probe the same bytes). */
static const struct vm_magic vm_magics[] = {
	{ "qcow2", 0, "QFI\xfb\0\0\0\x02", 8 },
	{ "qcow2", 0, "QFI\xfb\0\0\0\x03", 8 },
	{ "qcow", 0, "QFI\xfb\0\0\0\x01", 8 },
	{ "qed", 0, "QED\0", 4 },
	{ "vmdk", 0, "KDMV", 4 },
	{ "vmdk", 0, "# Disk DescriptorFile", 21 },
	{ "vdi", 0x40, "\x7f\x10\xda\xbe", 4 },
	{ "vhdx", 0, "vhdxfile", 8 },
	{ "vpc", 0, "conectix", 8 },
	{ "parallels", 0, "WithoutFreeSpace", 16 },
	{ "parallels", 0, "WithouFreSpacExt", 16 },
};

/* The VM disk format whose magic starts head, or NULL. */
static const char *vm_format_of(const uint8_t *head, size_t n)
{
	for (size_t i = 0; i < sizeof(vm_magics) / sizeof(vm_magics[0]); i++) {
		const struct vm_magic *m = &vm_magics[i];

		if (n >= m->off + m->len && !memcmp(head + m->off, m->magic, m->len))
			return m->format;
	}
	return NULL;
}

const char *dev_fd_vm_format(int fd)
{
	uint8_t head[128];
	ssize_t n = pread(fd, head, sizeof(head), 0);

	return n > 0 ? vm_format_of(head, n) : NULL;
}

/* The VM disk format of a file by its header, or NULL for anything else. */
static const char *dev_probe_vm_format(const char *path)
{
	const char *format;
	int fd;

	if (dev_is_nbd_uri(path))
		return NULL;	/* an export's contents are named by format= only */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	format = dev_fd_vm_format(fd);
	close(fd);
	return format;
}

int f2fs_dev_vm_hint(struct f2fs_dev *dev, char *buf, size_t len)
{
	uint8_t head[128];
	struct iovec v = { head, sizeof(head) };
	const char *format;

	if (dev->size < sizeof(head) || dev->ops->readv(dev, &v, 1, dev->base))
		return -EIO;
	format = vm_format_of(head, sizeof(head));
	if (!format)
		return -ENOENT;
	snprintf(buf, len, "this is a %s disk image, not an f2fs volume: open it with "
		 "-o format=%s", format, format);
	return 0;
}

/* The qemu format to open image with; NULL: a raw file opened directly. */
const char *dev_vm_format(const char *image, const struct uf2fs_options *opts)
{
	if (opts->image_format)
		return strcmp(opts->image_format, "raw") ? opts->image_format : NULL;
	return dev_probe_vm_format(image);
}

/// Open ///

static int nbd_fail(struct f2fs_dev *dev, struct nbd_dev *nd, int err, const char *fmt,
		    const char *arg)
{
	snprintf(dev->open_error, sizeof(dev->open_error), fmt, arg);
	if (nd->h)
		nbd_close(nd->h);
	if (nd->wake_fd >= 0)
		close(nd->wake_fd);
	free(nd);
	return err;
}

/*
 * Drive an asynchronous connect (and the handshake) to READY, at most
 * timeout seconds: a server that accepts and never answers must not hang the
 * open. 0, or -1 with why in buf.
 */
static int nbd_connect_wait(struct nbd_handle *h, unsigned int timeout, char *buf, size_t len)
{
	struct timespec now, end;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += timeout;
	while (nbd_aio_is_connecting(h) == 1) {
		unsigned int dir = nbd_aio_get_direction(h);
		struct pollfd p = { .fd = nbd_aio_get_fd(h) };
		long ms;

		p.events = (dir & LIBNBD_AIO_DIRECTION_READ ? POLLIN : 0) |
			   (dir & LIBNBD_AIO_DIRECTION_WRITE ? POLLOUT : 0);
		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (end.tv_sec - now.tv_sec) * 1000 + (end.tv_nsec - now.tv_nsec) / 1000000;
		if (ms <= 0) {
			snprintf(buf, len, "no answer to the handshake in %u s", timeout);
			return -1;
		}
		if (p.fd < 0 || poll(&p, 1, ms) < 0) {
			if (p.fd >= 0 && errno == EINTR)
				continue;
			snprintf(buf, len, "%s", nbd_get_error() ?: strerror(errno));
			return -1;
		}
		if ((p.revents & (POLLIN | POLLHUP | POLLERR) && nbd_aio_notify_read(h) < 0) ||
		    (p.revents & POLLOUT && nbd_aio_notify_write(h) < 0)) {
			snprintf(buf, len, "%s", nbd_get_error());
			return -1;
		}
	}
	if (nbd_aio_is_ready(h) != 1) {
		snprintf(buf, len, "%s", nbd_get_error() ?: "handshake failed");
		return -1;
	}
	return 0;
}

/*
 * qemu-nbd (7.2) gives each request a fresh buffer of its size. glibc hands
 * out those of 128 KiB and more with mmap, or returns the memory to the
 * kernel after each free, so every byte served cost a page fault and the
 * zeroing of a new page: 1 MiB reads ran at 310 MiB/s, with 131,664 page
 * faults per 512 MiB. With the malloc thresholds fixed above our largest
 * command (NBD_MAX_CMD) the buffers stay in the heap: 2,000-3,200 MiB/s, 4,708
 * faults (docs/decisions.md, "qemu-nbd's malloc"). glibc's MALLOC_*_
 * variables rather than one GLIBC_TUNABLES: env's own glibc cuts that
 * string at its first value before qemu-nbd sees it. A value the user set
 * stays.
 */
static const char *const qemu_nbd_malloc_env[] = {
	"MALLOC_MMAP_THRESHOLD_=33554432",
	"MALLOC_TRIM_THRESHOLD_=67108864",
};

static int nbd_connect_vm(struct nbd_handle *h, const char *path, const char *format,
			  bool read_only)
{
	char fmt_arg[64], name[64];
	/* env sets the variables and execs qemu-nbd in the same process: LISTEN_PID holds */
	char *argv[12] = { "env" };
	int argc = 1;

	for (size_t i = 0; i < sizeof(qemu_nbd_malloc_env) / sizeof(qemu_nbd_malloc_env[0]);
	     i++) {
		snprintf(name, sizeof(name), "%.*s",
			 (int)strcspn(qemu_nbd_malloc_env[i], "="), qemu_nbd_malloc_env[i]);
		if (!getenv(name))
			argv[argc++] = (char *)qemu_nbd_malloc_env[i];
	}
	argv[argc++] = "qemu-nbd";
	snprintf(fmt_arg, sizeof(fmt_arg), "--format=%s", format);
	argv[argc++] = fmt_arg;
	/* --discard=unmap: TRIM frees clusters; cache=writeback: FLUSH reaches the disk */
	argv[argc++] = "--discard=unmap";
	argv[argc++] = "--cache=writeback";
	if (read_only)
		argv[argc++] = "--read-only";
	argv[argc++] = (char *)path;
	argv[argc] = NULL;
	return nbd_aio_connect_systemd_socket_activation(h, argv);
}

/* The qemu-nbd that socket activation will run (execvp's PATH search), for info. */
static bool qemu_nbd_find(char *buf, size_t len)
{
	const char *path = getenv("PATH");

	for (const char *p = path ? path : "/usr/bin:/bin"; p && *p; ) {
		const char *end = strchr(p, ':');
		int n = end ? (int)(end - p) : (int)strlen(p);

		snprintf(buf, len, "%.*s/qemu-nbd", n, p);
		if (!access(buf, X_OK))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

static int nbd_apply_tls(struct nbd_handle *h, const struct uf2fs_options *opts)
{
	if (opts->tls_certificates && nbd_set_tls_certificates(h, opts->tls_certificates))
		return -1;
	if (opts->tls_psk_file && nbd_set_tls_psk_file(h, opts->tls_psk_file))
		return -1;
	if (opts->tls_username && nbd_set_tls_username(h, opts->tls_username))
		return -1;
	return 0;
}

static const char *nbd_why(const char *why)
{
	return why[0] ? why : nbd_get_error() ?: "unknown error";
}

static int nbd_connect_image(struct f2fs_dev *dev, struct nbd_dev *nd,
			     const struct uf2fs_options *opts, const char *format)
{
	const char *image = opts->device;
	char why[160] = "";

	if (format) {
		char qemu_nbd[160];

		bool in_export = dev_is_nbd_uri(image);

		if (!qemu_nbd_find(qemu_nbd, sizeof(qemu_nbd)))
			return nbd_fail(dev, nd, -ENOENT, "%s", "a VM disk image needs qemu-nbd"
					" (Debian: qemu-utils), which is not on PATH");
		/*
		 * In an export, qemu-nbd is the NBD client: qemu's nbd driver
		 * parses nbd:// and nbd+unix:// itself, but TLS would need
		 * qemu's own credential objects, which we do not set up.
		 */
		if (in_export && !strncmp(image, "nbds", 4))
			return nbd_fail(dev, nd, -EOPNOTSUPP, "format=%s inside a TLS export "
					"(nbds://) is not supported: serve it without TLS, or "
					"serve the disk's contents (qemu-nbd) instead", format);
		if (!in_export && access(image, opts->read_only ? R_OK : R_OK | W_OK))
			return nbd_fail(dev, nd, -errno, "%s", strerror(errno));
		if (nbd_connect_vm(nd->h, image, format, opts->read_only) ||
		    nbd_connect_wait(nd->h, nd->timeout, why, sizeof(why)))
			return nbd_fail(dev, nd, -EIO, "qemu-nbd: %s", nbd_why(why));
		snprintf(dev->source, sizeof(dev->source), "%s through %s (socket activation)%s%s",
			 format, qemu_nbd, in_export ? " from NBD " : "", in_export ? image : "");
		return 0;
	}
	if (nbd_apply_tls(nd->h, opts) || nbd_aio_connect_uri(nd->h, image) ||
	    nbd_connect_wait(nd->h, nd->timeout, why, sizeof(why)))
		return nbd_fail(dev, nd, -EIO, "NBD: %s", nbd_why(why));
	snprintf(dev->source, sizeof(dev->source), "NBD %s%s", image,
		 nbd_get_tls_negotiated(nd->h) == 1 ? " (TLS)" : "");
	return 0;
}

int dev_nbd_open(struct f2fs_dev *dev, const struct uf2fs_options *opts, const char *format)
{
	struct nbd_dev *nd = calloc(1, sizeof(*nd));
	int64_t size;
	int ret;

	if (!nd)
		return -ENOMEM;
	nd->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	nd->h = nbd_create();
	if (nd->wake_fd < 0 || !nd->h)
		return nbd_fail(dev, nd, -ENOMEM, "%s", "cannot create the NBD handle");
	/*
	 * libnbd zeroes every read buffer before the read by default, in case
	 * a caller uses one after a failed read: ours never does (a failed fill
	 * leaves the folio not uptodate), and the memset was a fifth of the
	 * daemon's copying per byte read.
	 */
	nbd_set_pread_initialize(nd->h, false);
	nd->name = opts->device;
	nd->timeout = opts->nbd_timeout ? opts->nbd_timeout : NBD_DEFAULT_TIMEOUT;
	ret = nbd_connect_image(dev, nd, opts, format);
	if (ret)
		return ret;
	if (!opts->read_only && nbd_is_read_only(nd->h) == 1)
		return nbd_fail(dev, nd, -EROFS, "%s", "the NBD export is read-only: open it"
				" read-only (without -o rw)");
	size = nbd_get_size(nd->h);
	if (size < 0)
		return nbd_fail(dev, nd, -EIO, "NBD: %s", nbd_why(""));
	nd->can_trim = nbd_can_trim(nd->h) == 1;
	nd->can_flush = nbd_can_flush(nd->h) == 1;
	nd->can_fua = nbd_can_fua(nd->h) == 1;
	pthread_condattr_init(&nd->cattr);
	pthread_condattr_setclock(&nd->cattr, CLOCK_MONOTONIC);
	pthread_mutex_init(&nd->lock, NULL);
	pthread_cond_init(&nd->quiet, NULL);
	dev->size = size;
	dev->readahead = NBD_READAHEAD;
	dev->priv = nd;
	dev->ops = nd->can_fua ? &dev_nbd_fua_ops : &dev_nbd_ops;
	snprintf(dev->source + strlen(dev->source), sizeof(dev->source) - strlen(dev->source),
		 ", %s%s%s%s, timeout %u s", nbd_get_protocol(nd->h) ?: "?",
		 nd->can_flush ? ", flush" : "", nd->can_fua ? ", fua" : "",
		 nd->can_trim ? ", trim" : "", nd->timeout);
	return 0;
}

/// Public: what an image string names ///

int uf2fs_image_kind(const char *image, const struct uf2fs_options *opts)
{
	if (!image)
		return UF2FS_IMAGE_FILE;
	if (dev_is_nbd_uri(image))
		return UF2FS_IMAGE_NBD;
	return dev_vm_format(image, opts) ? UF2FS_IMAGE_VMDISK : UF2FS_IMAGE_FILE;
}
