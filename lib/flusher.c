// SPDX-License-Identifier: GPL-2.0
/*
 * The flusher: background writeback of dirty data, as the kernel's bdi
 * flusher does it, so that neither a checkpoint nor the unmount finds a large
 * backlog. Two triggers, with the kernel's names:
 *  - age (dirty_expire, 30 s as dirty_expire_centisecs): every tick (5 s, as
 *    dirty_writeback_centisecs, or the expiry if shorter) the inodes whose
 *    oldest dirty folio is older than that are written back, oldest first;
 *  - amount (dirty_background, as dirty_background_ratio/_bytes): past it,
 *    inodes are written back oldest first until the dirty data is down to
 *    half of it. Operations kick the thread from f2fs_balance.
 * Dirty nodes (every new inode is one) are bounded too: past half of
 * dirty_background of them the flusher checkpoints, as the kernel's
 * f2fs_balance_fs_bg syncs the filesystem on excess dirty nodes or NAT
 * entries. Without that an untar of small files leaves a node backlog up to
 * the dirty limit for the unmount to write.
 *
 * The flusher writes data only: blocks out of place (or in place where the
 * IPU policy says) with their dnodes dirtied, exactly as fsync's writeback
 * does it, under the same locks (cp_rwsem shared, the inode exclusively).
 * Nodes, NAT and SIT stay for the checkpoint, which the dirty limit, the
 * NAT count and checkpoint_interval already bound. Atomic files (staged
 * until commit) and compressed ones (whole clusters at checkpoint) are left
 * alone, as write-behind leaves them. A writeback error leaves the folios
 * dirty: the checkpoint or the next fsync meets it again.
 */
#include <stdlib.h>
#include <time.h>

#include "f2fs.h"

#define FLUSH_TICK		5		/* seconds, as dirty_writeback_centisecs */
#define DEF_DIRTY_EXPIRE	30		/* seconds, as dirty_expire_centisecs */
#define DEF_DIRTY_BACKGROUND	(32ull << 20)	/* bytes at most; see flush_threshold */

struct f2fs_flusher {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	atomic_bool stop;
	bool kicked;
	atomic_bool busy;	/* a round runs: kicks need not signal */
	atomic_uint quiet_until;	/* f2fs_now_secs(): the logs were short, no kicks */
};

uint32_t f2fs_now_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint32_t)ts.tv_sec;
}

static unsigned int dirty_expire(const struct f2fs_sb_info *sbi)
{
	return sbi->opts.dirty_expire ? sbi->opts.dirty_expire : DEF_DIRTY_EXPIRE;
}

/*
 * The background threshold: dirty_background if set, else half the dirty
 * limit (a quarter of cache_size), as the kernel's background ratio is half
 * its dirty ratio, capped at 32 MiB so that what an unmount finds (that, and
 * half as much in nodes) takes about a second to write even on a busy
 * machine: 64 MiB took 1.8 s on two shared cores.
 */
static uint64_t flush_threshold(struct f2fs_sb_info *sbi)
{
	if (sbi->opts.dirty_background)
		return sbi->opts.dirty_background;
	return MIN(folio_cache_limit(sbi) / 8, DEF_DIRTY_BACKGROUND);
}

static uint64_t dirty_data(struct f2fs_sb_info *sbi)
{
	return folio_dirty_blocks(sbi, MAP_DATA) * F2FS_BLKSIZE;
}

static bool excess_nodes(struct f2fs_sb_info *sbi)
{
	return folio_dirty_blocks(sbi, MAP_NODE) * F2FS_BLKSIZE > flush_threshold(sbi) / 2;
}

static bool flusher_enabled(const struct f2fs_sb_info *sbi)
{
	return sbi->flusher && !sbi->opts.read_only && !sbi->cp_stopped;
}

void f2fs_kick_flusher(struct f2fs_sb_info *sbi)
{
	struct f2fs_flusher *fl = sbi->flusher;

	if (!flusher_enabled(sbi) || atomic_load(&fl->busy) ||
	    (int32_t)(atomic_load(&fl->quiet_until) - f2fs_now_secs()) > 0 ||
	    (dirty_data(sbi) <= flush_threshold(sbi) && !excess_nodes(sbi)))
		return;
	pthread_mutex_lock(&fl->lock);
	fl->kicked = true;
	pthread_cond_signal(&fl->cond);
	pthread_mutex_unlock(&fl->lock);
}

/* One inode's dirty data, under the locks of an operation. */
static int flush_inode(struct f2fs_sb_info *sbi, uint64_t ino)
{
	struct f2fs_inode_info *fi;
	int ret = 0;

	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	/* the logs cannot take it without GC: leave it to the checkpoint */
	if (sbi->cp_stopped || !f2fs_room_ok(sbi, 0)) {
		pthread_rwlock_unlock(&sbi->cp_rwsem);
		return -ENOSPC;
	}
	fi = f2fs_iget(sbi, ino);
	if (!IS_ERR(fi)) {
		pthread_rwlock_wrlock(&fi->i_rwsem);
		if (!fi->atomic && !f2fs_is_compressed(fi))
			ret = f2fs_writeback_inode(sbi, fi);
		pthread_rwlock_unlock(&fi->i_rwsem);
		f2fs_iput(sbi, fi);
		atomic_fetch_add(&sbi->ctr->flusher_inodes, 1);
	}
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}

/*
 * One round: expired inodes, then, while over the threshold, the rest, both
 * oldest first. Returns early when stopped or when space is short; then
 * kicks are ignored for a tick, or every operation would start a round
 * that collects every dirty folio only to stop at once.
 */
static void flush_round(struct f2fs_sb_info *sbi)
{
	struct f2fs_flusher *fl = sbi->flusher;
	uint32_t expired = f2fs_now_secs() - dirty_expire(sbi);
	uint64_t thresh = flush_threshold(sbi);
	struct folio_dirty_owner *v;
	bool over = dirty_data(sbi) > thresh;
	size_t n;

	if (!dirty_data(sbi) || folio_dirty_owners(sbi, MAP_DATA, &v, &n))
		return;
	if (n && (over || (int32_t)(v[0].oldest - expired) <= 0))
		atomic_fetch_add(&sbi->ctr->flusher_runs, 1);
	for (size_t i = 0; i < n && !atomic_load(&fl->stop) && flusher_enabled(sbi); i++) {
		bool old = (int32_t)(v[i].oldest - expired) <= 0;

		if (!old && !(over && dirty_data(sbi) > thresh / 2))
			break;
		if (flush_inode(sbi, v[i].key) == -ENOSPC) {
			atomic_store(&fl->quiet_until, f2fs_now_secs() + FLUSH_TICK);
			break;
		}
	}
	free(v);
}

static void *flusher_thread(void *arg)
{
	struct f2fs_sb_info *sbi = arg;
	struct f2fs_flusher *fl = sbi->flusher;

	pthread_mutex_lock(&fl->lock);
	while (!fl->stop) {
		struct timespec until;

		if (!fl->kicked) {
			clock_gettime(CLOCK_MONOTONIC, &until);
			until.tv_sec += MIN(FLUSH_TICK, dirty_expire(sbi));
			pthread_cond_timedwait(&fl->cond, &fl->lock, &until);
		}
		fl->kicked = false;
		if (fl->stop)
			break;
		atomic_store(&fl->busy, true);
		pthread_mutex_unlock(&fl->lock);
		if (flusher_enabled(sbi))
			flush_round(sbi);
		if (flusher_enabled(sbi) && excess_nodes(sbi)) {
			atomic_fetch_add(&sbi->ctr->flusher_checkpoints, 1);
			f2fs_checkpoint_now(sbi, false);
		}
		pthread_mutex_lock(&fl->lock);
		atomic_store(&fl->busy, false);
	}
	pthread_mutex_unlock(&fl->lock);
	return NULL;
}

int f2fs_start_flusher(struct f2fs_sb_info *sbi)
{
	struct f2fs_flusher *fl;
	pthread_condattr_t attr;

	if (sbi->opts.flusher <= 0)
		return 0;
	fl = calloc(1, sizeof(*fl));
	if (!fl)
		return -ENOMEM;
	pthread_mutex_init(&fl->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&fl->cond, &attr);
	pthread_condattr_destroy(&attr);
	sbi->flusher = fl;
	if (pthread_create(&fl->thread, NULL, flusher_thread, sbi)) {
		sbi->flusher = NULL;
		free(fl);
		return -EAGAIN;
	}
	return 0;
}

/* Before the final checkpoint: the thread finishes its inode and leaves. */
void f2fs_stop_flusher(struct f2fs_sb_info *sbi)
{
	struct f2fs_flusher *fl = sbi->flusher;

	if (!fl)
		return;
	pthread_mutex_lock(&fl->lock);
	fl->stop = true;
	pthread_cond_signal(&fl->cond);
	pthread_mutex_unlock(&fl->lock);
	pthread_join(fl->thread, NULL);
	sbi->flusher = NULL;
	pthread_mutex_destroy(&fl->lock);
	pthread_cond_destroy(&fl->cond);
	free(fl);
}
