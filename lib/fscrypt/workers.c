// SPDX-License-Identifier: GPL-2.0
/*
 * A small process-wide pool of helper threads for fscrypt's contents
 * transforms. The kernel reads a file ahead one 1 MiB FUSE request at a
 * time, so a sequential reader waits for each request in turn, and the
 * decryption of that one request is on the critical path: one core doing
 * Adiantum (about 0.5 GB/s) halves the read rate however many cores idle.
 * crypt_workers_run() cuts such a job into chunks on a queue; helpers that
 * are free take chunks alongside the caller, which claims chunks too and
 * then waits only for the chunks a helper already holds. A helper that is
 * busy or not scheduled costs nothing but the wakeup.
 *
 * The pool starts with the first job of two chunks or more, so a process
 * that never encrypts file data has no extra threads. The helpers never
 * exit; a fork()ed child (the FUSE daemon after fuse_daemonize) starts its
 * own. They block every signal, which stays the business of the main and
 * FUSE threads.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "workers.h"

#define DEFAULT_MAX_HELPERS	3
#define MIN(a, b)		((a) < (b) ? (a) : (b))

struct cw_job {
	int (*fn)(void *arg, unsigned int chunk);
	void *arg;
	unsigned int nchunks;
	atomic_uint next;		/* the next chunk to claim */
	atomic_int err;
	/* under pool.lock */
	unsigned int helpers;		/* helpers working on this job now */
	bool queued;
	struct cw_job *next_job;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t work;		/* helpers wait here for a job */
	pthread_cond_t left;		/* a helper left a job (callers wait for theirs) */
	struct cw_job *head, *tail;
	int want;			/* helpers to start; -1: from the CPU count */
	int started;
	int idle;			/* helpers waiting on work */
	bool tried;			/* the start was attempted (in this process) */
	bool atfork;
} pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.left = PTHREAD_COND_INITIALIZER,
	.want = -1,
};

/* Run chunks of job until none is left to claim. */
static void run_chunks(struct cw_job *job)
{
	unsigned int i;

	while ((i = atomic_fetch_add(&job->next, 1)) < job->nchunks) {
		int err;

		if (atomic_load(&job->err))
			continue;	/* claim the rest so the job ends; do not run them */
		err = job->fn(job->arg, i);
		if (err) {
			int zero = 0;

			atomic_compare_exchange_strong(&job->err, &zero, err);
		}
	}
}

static void unqueue(struct cw_job *job)
{
	struct cw_job **pp, *prev = NULL;

	for (pp = &pool.head; *pp; prev = *pp, pp = &(*pp)->next_job) {
		if (*pp == job) {
			*pp = job->next_job;
			if (pool.tail == job)
				pool.tail = prev;
			break;
		}
	}
	job->queued = false;
}

/* The first queued job with chunks left; exhausted ones leave the queue. Lock held. */
static struct cw_job *take_job(void)
{
	while (pool.head) {
		struct cw_job *job = pool.head;

		if (atomic_load(&job->next) < job->nchunks)
			return job;
		unqueue(job);
	}
	return NULL;
}

static void *helper_main(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&pool.lock);
	for (;;) {
		struct cw_job *job = take_job();

		if (!job) {
			pool.idle++;
			pthread_cond_wait(&pool.work, &pool.lock);
			pool.idle--;
			continue;
		}
		job->helpers++;
		pthread_mutex_unlock(&pool.lock);
		run_chunks(job);
		pthread_mutex_lock(&pool.lock);
		/* after this the caller may return and the job (on its stack) is gone */
		if (!--job->helpers)
			pthread_cond_broadcast(&pool.left);
	}
	return NULL;
}

static int cpus_allowed(void)
{
	cpu_set_t set;

	if (!sched_getaffinity(0, sizeof(set), &set))
		return CPU_COUNT(&set);
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/*
 * In a child of fork() the helpers are gone (only the forking thread goes
 * on) and a job of the parent's may have been queued: start afresh.
 */
static void pool_atfork_prepare(void)
{
	pthread_mutex_lock(&pool.lock);
}

static void pool_atfork_parent(void)
{
	pthread_mutex_unlock(&pool.lock);
}

static void pool_atfork_child(void)
{
	pthread_mutex_init(&pool.lock, NULL);
	pthread_cond_init(&pool.work, NULL);
	pthread_cond_init(&pool.left, NULL);
	pool.head = pool.tail = NULL;
	pool.started = pool.idle = 0;
	pool.tried = false;
}

/* Start the helpers once. Lock held. */
static void pool_start(void)
{
	int want = pool.want;
	sigset_t all, old;

	pool.tried = true;
	if (want < 0) {
		want = cpus_allowed() - 1;
		if (want > DEFAULT_MAX_HELPERS)
			want = DEFAULT_MAX_HELPERS;
	}
	if (want <= 0)
		return;
	if (!pool.atfork && !pthread_atfork(pool_atfork_prepare, pool_atfork_parent,
					   pool_atfork_child))
		pool.atfork = true;
	if (!pool.atfork)
		return;	/* without the child handler a fork would inherit a dead pool */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 0; i < want; i++) {
		pthread_t t;
		pthread_attr_t attr;

		if (pthread_attr_init(&attr))
			break;
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, helper_main, NULL)) {
			pthread_attr_destroy(&attr);
			break;	/* fewer helpers; the caller does the rest */
		}
		pthread_attr_destroy(&attr);
		pthread_setname_np(t, "uf2fs-crypt");
		pool.started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int crypt_workers_configure(int helpers)
{
	int ret = 0;

	pthread_mutex_lock(&pool.lock);
	if (pool.tried)
		ret = -EBUSY;
	else
		pool.want = helpers < 0 ? -1 :
			    helpers > CRYPT_WORKERS_MAX ? CRYPT_WORKERS_MAX : helpers;
	pthread_mutex_unlock(&pool.lock);
	return ret;
}

int crypt_workers_count(void)
{
	int n;

	pthread_mutex_lock(&pool.lock);
	n = pool.started;
	pthread_mutex_unlock(&pool.lock);
	return n;
}

int crypt_workers_run(int (*fn)(void *arg, unsigned int chunk), void *arg,
		      unsigned int nchunks)
{
	struct cw_job job = { .fn = fn, .arg = arg, .nchunks = nchunks };
	bool queued;

	atomic_init(&job.next, 0);
	atomic_init(&job.err, 0);
	if (nchunks < 2) {
		run_chunks(&job);
		return atomic_load(&job.err);
	}
	pthread_mutex_lock(&pool.lock);
	if (!pool.tried)
		pool_start();
	/*
	 * Queued even when every helper is busy (or not yet waiting, just
	 * started): one that finishes its job early takes chunks of this one.
	 */
	queued = pool.started > 0;
	if (queued) {
		int wake = MIN(pool.idle, (int)nchunks - 1);

		job.queued = true;
		if (pool.tail)
			pool.tail->next_job = &job;
		else
			pool.head = &job;
		pool.tail = &job;
		if (wake == 1)
			pthread_cond_signal(&pool.work);
		else if (wake > 1)
			pthread_cond_broadcast(&pool.work);
	}
	pthread_mutex_unlock(&pool.lock);
	run_chunks(&job);
	if (queued) {
		pthread_mutex_lock(&pool.lock);
		if (job.queued)
			unqueue(&job);
		while (job.helpers)
			pthread_cond_wait(&pool.left, &pool.lock);
		pthread_mutex_unlock(&pool.lock);
	}
	return atomic_load(&job.err);
}
