// SPDX-License-Identifier: GPL-2.0
/*
 * How worker threads take requests off /dev/fuse: one reader at a time,
 * which polls briefly before it sleeps.
 *
 * Under libfuse's own loop every idle worker sleeps in read(2) on the FUSE
 * device, so each request of a client that asks one thing at a time (ls -l,
 * stat, git status: one GETXATTR or LOOKUP, then the next) costs the client's
 * CPU a wakeup of a sleeping worker, and the worker a context switch, on top
 * of the round trip itself. perf on a cold `ls -lR` put 60 % of the daemon's
 * samples in those switches and wakeups. Here a single worker owns the device
 * at a time: it polls for up to spin_us before it blocks in read(2), so a
 * request that follows its predecessor's reply within that time is taken
 * without any thread being woken. The other idle workers wait in user space
 * where the kernel does not see them (a condition variable), and are promoted
 * only when concurrency is needed:
 * - at once, when the reader takes a request and another is already queued
 *   (the kernel's readahead and writeback send several at a time);
 * - when any thread is about to wait for the device (uf2fs_set_io_wait_hook),
 *   so that a slow read or flush never holds other requests up;
 * - before a notification to the kernel, which may wait for a request that
 *   only another worker can answer.
 * READ and WRITE requests turn this off for 100 ms (RX_DATA_HOLD_NS): every
 * worker then sleeps in read(2) as under libfuse's loop. So does a crowd:
 * RX_CROWD_READS reads in a row that each found another request queued
 * behind theirs (git status: 20 preload threads, each calling lstat).
 * A worker that polls keeps to one CPU, the first poller's (spin_pin,
 * default on). Left free, the poller and the client took turns on one CPU:
 * the scheduler woke the client onto the poller's CPU at each reply. Pinned,
 * the client settles on another CPU (a cold `ls -lR`: the daemon's context
 * switches fell about sixfold, its migrations to none; docs/decisions.md).
 * A worker that polled stays pinned while polling goes on, parked or not:
 * unpinning each one that parks cost about 3,000 pins and 1,365 migrations
 * per `ls -lR` and gave back part of the gain. When polling pauses (the
 * worker is about to sleep in read(2)), or data mode or a crowd begins, each
 * worker drops its pin as it next reads.
 * Polling pays only while requests follow replies within spin_us. After
 * RX_SPIN_MISSES polls in a row found nothing (an idle mount, a client that
 * thinks between requests, a machine so busy the client waits for a CPU)
 * the reader stops polling, until RX_SPIN_HITS requests in a row came that
 * soon after the reply again: a poll that never pays would burn a CPU.
 * A request never waits for a later request in uf2fs (no lock ops, no
 * interrupt handling), so a reader that processes without promoting anyone
 * delays others at most by its own processing.
 *
 * libfuse cancels its workers at unmount, in any of the waits here; cleanup
 * handlers leave the state consistent for the single-threaded flush loop that
 * follows (fuse_daemon_flush). spin_us=0 restores libfuse's behaviour.
 */
#include <errno.h>
#include <sched.h>
#include <linux/fuse.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "fuse_priv.h"

/*
 * Data requests (READ, WRITE) come several at a time and take long; for
 * them the discipline costs more than it saves (one parked worker promoted
 * per request, or requests waiting: fio sequential reads lost 10 %). The
 * first one switches to libfuse's way, every worker in read(2), until none
 * has come for this long.
 */
#define RX_DATA_HOLD_NS	100000000L
/*
 * Many clients at once: every request is a promotion (a condition variable
 * wake, then a read), where a worker already in read(2) would have taken it
 * straight from the kernel; a cold git status of 100k files ran 30 % faster
 * with spin_us=0. One client that asks one thing at a time queues a second
 * request only now and then (an async RELEASEDIR before the next OPENDIR),
 * never this many times in a row.
 */
#define RX_CROWD_READS	4
#define RX_SPIN_MISSES	8
#define RX_SPIN_HITS	2

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool reading;		/* a worker owns the device (polling or in read(2)) */
	unsigned int parked;	/* workers waiting to own it */
	unsigned int serving;	/* workers busy with a request they read */
	long spin_ns;		/* 0: off, every worker reads as libfuse's would */
	long data_until;	/* CLOCK_MONOTONIC ns: libfuse's way until then */
	bool spin_idle;		/* polling paused: recent polls found nothing */
	unsigned int spin_run;	/* misses in a row (polling), hits in a row (paused) */
	unsigned int crowd_run;	/* owner reads in a row with another request queued */
	/* for `uf2fs stats`: how often each rule fired, so tests need not time threads */
	unsigned long crowds;	/* the crowd rule switched to libfuse's way */
	unsigned long data_holds;	/* a READ or WRITE did */
	unsigned long spin_pauses;	/* polling paused: polls found nothing */
	unsigned long pins;		/* a worker was pinned to the polling CPU */
	int pin_cpu;		/* the polling CPU, -1 until a worker polls */
} rx = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0, 0, 0, 0, false, 0, 0,
	 0, 0, 0, 0, -1 };

/* This worker's last read gave it a request, which it has now answered. */
static _Thread_local bool rx_served;
/* The CPU this worker is pinned to (it polled there), or -1. */
static _Thread_local int rx_pin_cpu = -1;
/* The CPUs the daemon may use (set at setup; an unpinned worker's mask). */
static cpu_set_t rx_cpus;
static bool rx_pin_on;	/* spin_pin, and more than one CPU to choose from */

static long rx_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000L + t.tv_nsec;
}

static bool rx_pending(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

static bool rx_data_mode(long now)
{
	return now < __atomic_load_n(&rx.data_until, __ATOMIC_RELAXED);
}

static bool rx_data_request(const void *buf, ssize_t n)
{
	const struct fuse_in_header *h = buf;

	return (size_t)n >= sizeof(*h) && (h->opcode == FUSE_READ || h->opcode == FUSE_WRITE);
}

/*
 * rx.reading and rx.parked change under rx.lock but fuse_rx_may_block()
 * peeks at them without it, from any thread: stores are atomic so the
 * peek is a read of a whole value, not a data race.
 */
static void rx_set_reading(bool on)
{
	__atomic_store_n(&rx.reading, on, __ATOMIC_RELAXED);
}

static void rx_add_parked(int n)
{
	__atomic_store_n(&rx.parked, rx.parked + n, __ATOMIC_RELAXED);
}

/* With rx.lock held: let a parked worker take the device nobody owns. */
static void rx_promote_locked(void)
{
	if (!rx.reading && rx.parked)
		pthread_cond_signal(&rx.wake);
}

static void rx_unpark(void *arg)
{
	(void)arg;
	rx_add_parked(-1);
	pthread_mutex_unlock(&rx.lock);
}

static void rx_release(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&rx.lock);
	rx_set_reading(false);
	rx_promote_locked();
	pthread_mutex_unlock(&rx.lock);
}

/*
 * Keep this worker to one CPU (cpu >= 0) or give it back every CPU (-1).
 * A failure leaves the affinity as it was: pinning only saves time.
 */
static void rx_pin_to(int cpu)
{
	cpu_set_t one;
	int err;

	if (cpu == rx_pin_cpu || !rx_pin_on)
		return;
	if (cpu < 0) {
		err = pthread_setaffinity_np(pthread_self(), sizeof(rx_cpus), &rx_cpus);
	} else {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		err = pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	}
	if (err)
		return;
	rx_pin_cpu = cpu;
	if (cpu >= 0)
		__atomic_add_fetch(&rx.pins, 1, __ATOMIC_RELAXED);
}

/* A poller keeps to the polling CPU, chosen by the first one to poll. */
static void rx_pin_poller(void)
{
	int cpu = __atomic_load_n(&rx.pin_cpu, __ATOMIC_RELAXED);

	if (!rx_pin_on)
		return;
	if (cpu < 0) {
		cpu = sched_getcpu();
		if (cpu < 0 || cpu >= CPU_SETSIZE)
			return;
		__atomic_store_n(&rx.pin_cpu, cpu, __ATOMIC_RELAXED);
	}
	rx_pin_to(cpu);
}

/*
 * Polling stops (a pause, data mode, a crowd): this worker is free again.
 * Called for every read in data mode: the shared word is written only when
 * it changes, so workers reading side by side do not bounce its line.
 */
static void rx_unpin(void)
{
	if (!rx_pin_on)
		return;
	if (__atomic_load_n(&rx.pin_cpu, __ATOMIC_RELAXED) >= 0)
		__atomic_store_n(&rx.pin_cpu, -1, __ATOMIC_RELAXED);
	rx_pin_to(-1);
}

enum rx_role {
	RX_SPIN,	/* owner, back from a reply: poll, then read */
	RX_STANDBY,	/* owner, promoted or beside a busy worker: read at once */
	RX_SHARED,	/* data mode: read beside the others, as libfuse does */
};

/*
 * Become the device's reader: park while another worker is. A worker that
 * had to park was promoted to stand by for concurrent requests, not to
 * answer a client waiting on its last reply, and polling beside a busy
 * worker would take that worker's CPU (2-CPU machines): neither polls.
 */
static enum rx_role rx_own(void)
{
	volatile bool parked = false;	/* survives the cleanup frame */
	enum rx_role role;
	bool shared;

	pthread_mutex_lock(&rx.lock);
	if (rx_served) {
		rx_served = false;
		rx.serving--;
	}
	rx_add_parked(1);
	pthread_cleanup_push(rx_unpark, NULL);
	/* data mode is read once per check: it may end between two reads */
	while (!(shared = rx_data_mode(rx_now_ns())) && rx.reading) {
		parked = true;
		pthread_cond_wait(&rx.wake, &rx.lock);
	}
	pthread_cleanup_pop(0);
	rx_add_parked(-1);
	if (shared) {
		role = RX_SHARED;
	} else {
		rx_set_reading(true);
		role = parked || rx.serving ? RX_STANDBY : RX_SPIN;
	}
	pthread_mutex_unlock(&rx.lock);
	return role;
}

/* Poll up to spin_ns; true if a request came. */
static bool rx_spin(int fd)
{
	for (long end = rx_now_ns() + rx.spin_ns; rx_now_ns() < end;)
		if (rx_pending(fd))
			return true;
	return false;
}

/*
 * With rx.lock held, after a reader that came back from a reply took its
 * request: polled says whether it polled, came whether the request was there
 * within spin_ns of the reply. Pauses and resumes polling.
 */
static void rx_spin_learn(bool polled, bool came)
{
	if (polled && came) {
		rx.spin_run = 0;
	} else if (polled) {
		if (++rx.spin_run >= RX_SPIN_MISSES) {
			__atomic_store_n(&rx.spin_idle, true, __ATOMIC_RELAXED);
			rx.spin_run = 0;
			rx.spin_pauses++;
		}
	} else if (!came) {
		rx.spin_run = 0;
	} else if (++rx.spin_run >= RX_SPIN_HITS) {
		__atomic_store_n(&rx.spin_idle, false, __ATOMIC_RELAXED);
		rx.spin_run = 0;
	}
}

/* With rx.lock held, after an owner's read: true when a crowd has come. */
static bool rx_crowded(bool more)
{
	rx.crowd_run = more ? rx.crowd_run + 1 : 0;
	if (rx.crowd_run < RX_CROWD_READS)
		return false;
	rx.crowd_run = 0;
	return true;
}

struct rx_probe {
	bool polled;	/* the reader polled before read(2) */
	bool came;	/* the request came within spin_ns of the reply */
};

/* The owner's read: after a poll, or timed where a poll would have been. */
static ssize_t rx_read_owned(int fd, void *buf, size_t len, bool back, struct rx_probe *pr)
{
	long t0 = 0;
	ssize_t n;

	if (back && !__atomic_load_n(&rx.spin_idle, __ATOMIC_RELAXED)) {
		rx_pin_poller();
		pr->polled = true;
		pr->came = rx_spin(fd);
	} else if (back) {
		rx_unpin();	/* polling paused: about to sleep in read(2) */
		t0 = rx_now_ns();
	} else if (__atomic_load_n(&rx.pin_cpu, __ATOMIC_RELAXED) < 0) {
		rx_pin_to(-1);	/* standing by, still pinned from polling that has ended */
	}
	n = read(fd, buf, len);
	if (t0)
		pr->came = rx_now_ns() - t0 < rx.spin_ns;
	return n;
}

ssize_t fuse_rx_read(int fd, void *buf, size_t len)
{
	enum rx_role role;
	struct rx_probe pr = { false, false };
	bool data, crowd, more = false;
	ssize_t n;

	if (!rx.spin_ns)
		return read(fd, buf, len);
	role = rx_own();
	if (role == RX_SHARED) {
		rx_unpin();
		n = read(fd, buf, len);
	} else {
		/* poll(2) in rx_pending is a cancellation point too */
		pthread_cleanup_push(rx_release, NULL);
		n = rx_read_owned(fd, buf, len, role == RX_SPIN, &pr);
		/* another request queued behind this one: a second worker now */
		more = n > 0 && rx_pending(fd);
		pthread_cleanup_pop(0);
	}
	data = n > 0 && rx_data_request(buf, n);
	pthread_mutex_lock(&rx.lock);
	if (role == RX_SPIN && n > 0)
		rx_spin_learn(pr.polled, pr.came);
	if (role != RX_SHARED) {
		rx_set_reading(false);
		crowd = n > 0 && rx_crowded(more);
		if (data)
			rx.data_holds++;
		else if (crowd)
			rx.crowds++;
		data |= crowd;
	}
	if (data)
		__atomic_store_n(&rx.data_until, rx_now_ns() + RX_DATA_HOLD_NS, __ATOMIC_RELAXED);
	if (n > 0) {
		rx_served = true;
		rx.serving++;
	}
	if (data)
		pthread_cond_broadcast(&rx.wake);	/* everyone to read(2) */
	else if (more)
		rx_promote_locked();
	pthread_mutex_unlock(&rx.lock);
	return n;
}

/* Someone is about to wait (device I/O, a notification): keep the device read. */
void fuse_rx_may_block(void)
{
	if (!__atomic_load_n(&rx.parked, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&rx.reading, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&rx.lock);
	rx_promote_locked();
	pthread_mutex_unlock(&rx.lock);
}

/* The `rx:` line of `uf2fs stats`: the reading discipline and its switches. */
size_t fuse_rx_format_stats(char *buf, size_t size)
{
	int n;

	pthread_mutex_lock(&rx.lock);
	n = snprintf(buf, size, "rx: spin_us %ld, crowd switches %lu, data switches %lu, "
		     "polling pauses %lu, pins %lu\n", rx.spin_ns / 1000, rx.crowds,
		     rx.data_holds, rx.spin_pauses, __atomic_load_n(&rx.pins, __ATOMIC_RELAXED));
	pthread_mutex_unlock(&rx.lock);
	return n < 0 ? 0 : (size_t)n;
}

static bool rx_lone;

void fuse_rx_set_lone(void)
{
	__atomic_store_n(&rx_lone, true, __ATOMIC_RELAXED);
}

bool fuse_rx_lone(void)
{
	return __atomic_load_n(&rx_lone, __ATOMIC_RELAXED);
}

void fuse_rx_setup(unsigned int spin_us, bool single_thread, bool spin_pin)
{
	if (single_thread)
		fuse_rx_set_lone();
	/* one worker has no one to hand over to: it polls, then reads */
	rx.spin_ns = (long)spin_us * 1000;
	rx_pin_on = spin_pin && !sched_getaffinity(0, sizeof(rx_cpus), &rx_cpus) &&
		    CPU_COUNT(&rx_cpus) > 1;
	if (spin_us && !single_thread)
		uf2fs_set_io_wait_hook(fuse_rx_may_block);
}

/*
 * The kernel may hold a lock for a queued request while it delivers these.
 * Invalidating pages (off >= 0) waits for their writeback, whose WRITEs only
 * another thread could answer: a lone thread would wait for itself.
 */
int fuse_uf2fs_inval_inode(struct fuse_session *se, fuse_ino_t ino, off_t off, off_t len)
{
	if (off >= 0 && fuse_rx_lone())
		return -EDEADLK;
	fuse_rx_may_block();
	return fuse_lowlevel_notify_inval_inode(se, ino, off, len);
}

int fuse_uf2fs_inval_entry(struct fuse_session *se, fuse_ino_t parent, const char *name,
			   size_t len)
{
	fuse_rx_may_block();
	return fuse_lowlevel_notify_inval_entry(se, parent, name, len);
}
