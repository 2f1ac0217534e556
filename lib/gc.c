// SPDX-License-Identifier: GPL-2.0
/*
 * Space reclamation. The log only writes into free segments; segments
 * emptied since the last checkpoint become free at the next one. When that
 * is not enough, garbage collection picks victim segments and moves their
 * valid blocks to the head of the log, so the victims empty out and become
 * free at the checkpoint that follows.
 *
 * Victims: greedy (fewest valid blocks) when an operation waits for space,
 * cost-benefit (utilization against age, as the kernel's background GC) when
 * idle. Node blocks move by re-dirtying the node; data blocks move by block
 * copy with the dnode re-pointed, which works for every kind of file
 * (compressed clusters and encrypted data included) without decoding it.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "f2fs.h"

/// Accounting ///

static unsigned int free_segments_now(struct f2fs_sb_info *sbi)
{
	unsigned int n;

	pthread_mutex_lock(&sbi->sm.lock);
	n = sbi->sm.nr_free;
	pthread_mutex_unlock(&sbi->sm.lock);
	return n;
}

static bool has_prefree(struct f2fs_sb_info *sbi)
{
	for (unsigned int i = 0; i < DIV_ROUND_UP(sbi->main_segs, 8); i++)
		if (sbi->sm.prefree[i])
			return true;
	return false;
}

static bool is_curseg_no(struct f2fs_sb_info *sbi, unsigned int segno)
{
	for (int i = 0; i < NR_CURSEG_TYPE; i++)
		if (sbi->sm.curseg[i].segno == segno)
			return true;
	return false;
}

/// Victim selection ///

enum gc_policy { GC_GREEDY, GC_COST_BENEFIT };

/*
 * Cost-benefit as f2fs's background GC scores it: favour segments that are
 * mostly invalid and whose data has not changed for a long time.
 */
static uint64_t victim_score(struct f2fs_sb_info *sbi, unsigned int segno, enum gc_policy p,
			     uint64_t now)
{
	struct seg_entry *se = &sbi->sm.sentries[segno];
	unsigned int bps = sbi->blocks_per_seg;

	if (p == GC_GREEDY)
		return bps - se->valid_blocks;
	uint64_t u = (uint64_t)se->valid_blocks * 100 / bps;
	uint64_t age = now > se->mtime ? now - se->mtime : 0;

	return (100 - u) * (age + 1) * 100 / (100 + u);
}

/*
 * A zoned volume frees whole sections (zones): the victim is the section
 * with the best score of its segments' summed counts, none of them a log's.
 */
static int pick_victim_section(struct f2fs_sb_info *sbi, enum gc_policy p, unsigned int *out)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	unsigned int spsec = sbi->segs_per_sec;
	uint64_t best = 0, now = sm->elapsed_base + (time(NULL) - sm->mount_time);
	int found = -1;

	pthread_mutex_lock(&sm->lock);
	for (unsigned int sec = 0; sec < sbi->main_segs / spsec; sec++) {
		unsigned int valid = 0, first = sec * spsec;
		/* a zone holds no more than its capacity: full at that */
		uint64_t secblks = f2fs_usable_blks_in_sec(sbi, sec);
		uint64_t mtime = 0, score, u, age;
		bool log = false;

		for (unsigned int s = first; s < first + spsec; s++) {
			valid += sm->sentries[s].valid_blocks;
			mtime = MAX(mtime, sm->sentries[s].mtime);
			log |= is_curseg_no(sbi, s);
		}
		if (log || !valid || valid >= secblks)
			continue;
		u = (uint64_t)valid * 100 / secblks;
		age = now > mtime ? now - mtime : 0;
		score = p == GC_GREEDY ? secblks - valid : (100 - u) * (age + 1) * 100 / (100 + u);
		if (found < 0 || score > best) {
			best = score;
			found = first;
		}
	}
	pthread_mutex_unlock(&sm->lock);
	if (found < 0)
		return -ENOENT;
	*out = found;
	return 0;
}

static int pick_victim_segment(struct f2fs_sb_info *sbi, enum gc_policy p, unsigned int *out)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	uint64_t best = 0, now = sm->elapsed_base + (time(NULL) - sm->mount_time);
	int found = -1;

	pthread_mutex_lock(&sm->lock);
	for (unsigned int s = 0; s < sbi->main_segs; s++) {
		struct seg_entry *se = &sm->sentries[s];
		uint64_t score;

		if (!se->valid_blocks || se->valid_blocks >= sbi->blocks_per_seg ||
		    is_curseg_no(sbi, s))
			continue;
		score = victim_score(sbi, s, p, now);
		if (found < 0 || score > best) {
			best = score;
			found = s;
		}
	}
	pthread_mutex_unlock(&sm->lock);
	if (found < 0)
		return -ENOENT;
	*out = found;
	return 0;
}

static int pick_victim(struct f2fs_sb_info *sbi, enum gc_policy p, unsigned int *out)
{
	return sbi->zoned ? pick_victim_section(sbi, p, out) : pick_victim_segment(sbi, p, out);
}

/// Moving blocks ///

static int read_segment_summary(struct f2fs_sb_info *sbi, unsigned int segno,
				struct f2fs_summary_block *sum)
{
	for (int i = 0; i < NR_CURSEG_TYPE; i++) {
		if (sbi->sm.curseg[i].segno == segno) {
			memcpy(sum, sbi->sm.sum_blk[i], sizeof(*sum));
			return 0;
		}
	}
	if (f2fs_dev_read_blocks(&sbi->dev, sum, sbi->ssa_blkaddr + segno, 1))
		return f2fs_error(sbi, EIO, "SSA block %u: read failed", sbi->ssa_blkaddr + segno);
	return 0;
}

/* Node blocks move by being written again: dirty the node if the NAT still points here. */
static int move_node_block(struct f2fs_sb_info *sbi, block_t blk, nid_t nid)
{
	struct node_info ni;
	struct folio *f;

	if (f2fs_get_node_info(sbi, nid, &ni) || ni.blk_addr != blk)
		return 0;	/* stale summary: the block is not that node's any more */
	f = f2fs_get_node_folio(sbi, nid);
	if (IS_ERR(f))
		return PTR_ERR(f);
	folio_mark_dirty(sbi, f);
	folio_put(sbi, f);
	return 0;
}


/*
 * Copy one data block to the log head and re-point its dnode. The block
 * moves even when the file has newer dirty data for it in the cache: that
 * data may be written in place (IPU) and so would never empty the victim;
 * written out of place, it simply invalidates the copy.
 */
static int move_data_block(struct f2fs_sb_info *sbi, block_t blk, const struct f2fs_summary *s)
{
	nid_t dnid = le32(s->nid);
	unsigned int ofs = le16(s->ofs_in_node);
	struct f2fs_inode_info *fi;
	struct f2fs_summary sum = *s;
	struct folio *dn;
	uint32_t *addrs;
	uint8_t *buf;
	block_t nblk;
	int ret;

	dn = f2fs_get_node_folio(sbi, dnid);
	if (IS_ERR(dn))
		return 0;	/* the dnode is gone: so is the block's owner */
	fi = f2fs_iget(sbi, le32(folio_node(dn)->footer.ino));
	if (IS_ERR(fi)) {
		folio_put(sbi, dn);
		return 0;
	}
	addrs = ofs_of_node(folio_node(dn)) == 0 ?
		(uint32_t *)inode_addrs(folio_node(dn)) + fi->extra_isize :
		(uint32_t *)dnode_addrs(folio_node(dn));
	ret = 0;
	if (ofs >= (ofs_of_node(folio_node(dn)) ? DEF_ADDRS_PER_BLOCK : fi->addrs_per_inode) ||
	    addrs[ofs] != blk)
		goto out;	/* stale summary */
	uint64_t lblk = f2fs_start_bidx_of_node(ofs_of_node(folio_node(dn)), fi) + ofs;

	buf = malloc(F2FS_BLKSIZE);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	ret = f2fs_dev_read_blocks(&sbi->dev, buf, blk, 1);
	/* a zone is written in the order its blocks are handed out */
	if (sbi->zoned)
		pthread_mutex_lock(&sbi->writepages);
	if (!ret)
		ret = f2fs_allocate_block(sbi, S_ISDIR(fi->mode) ? CURSEG_HOT_DATA :
					  CURSEG_COLD_DATA, &sum, &nblk);
	if (!ret) {
		struct iovec v = { buf, F2FS_BLKSIZE };

		ret = f2fs_dev_writev_blocks(&sbi->dev, &v, 1, nblk);
		if (sbi->zoned)
			pthread_mutex_unlock(&sbi->writepages);
		if (ret) {
			f2fs_invalidate_block(sbi, nblk);
		} else {
			addrs[ofs] = nblk;
			folio_mark_dirty(sbi, dn);
			f2fs_invalidate_block(sbi, blk);
			/* i_ext on disk must follow the move */
			if (f2fs_extent_invalidate(fi, lblk, 1))
				f2fs_mark_inode_dirty(sbi, fi);
			atomic_fetch_add(&sbi->ctr->gc_blocks, 1);
		}
	} else if (sbi->zoned) {
		pthread_mutex_unlock(&sbi->writepages);
	}
	free(buf);
out:
	f2fs_iput(sbi, fi);
	folio_put(sbi, dn);
	return ret;
}

static int gc_segment(struct f2fs_sb_info *sbi, unsigned int segno)
{
	struct f2fs_summary_block *sum = malloc(sizeof(*sum));
	struct seg_entry *se = &sbi->sm.sentries[segno];
	bool node = se->type >= CURSEG_HOT_NODE;
	int ret;

	if (!sum)
		return -ENOMEM;
	/* SSR must not refill the segment being emptied */
	pthread_mutex_lock(&sbi->sm.lock);
	sbi->sm.gc_victim = segno;
	pthread_mutex_unlock(&sbi->sm.lock);
	ret = read_segment_summary(sbi, segno, sum);
	for (unsigned int off = 0; !ret && off < sbi->blocks_per_seg; off++) {
		block_t blk = sbi->main_blkaddr + segno * sbi->blocks_per_seg + off;

		if (!f2fs_test_bit(off, se->valid_map))
			continue;
		if (node)
			ret = move_node_block(sbi, blk, le32(sum->entries[off].nid));
		else
			ret = move_data_block(sbi, blk, &sum->entries[off]);
	}
	free(sum);
	pthread_mutex_lock(&sbi->sm.lock);
	sbi->sm.gc_victim = NULL_SEGNO;
	pthread_mutex_unlock(&sbi->sm.lock);
	if (!ret)
		atomic_fetch_add(&sbi->ctr->gc_segments, 1);
	return ret;
}

/*
 * Called with the checkpoint lock held exclusively. Moves victims until
 * "want" free segments would exist after the next checkpoint, or nothing is
 * left to gain.
 */
static int run_gc(struct f2fs_sb_info *sbi, enum gc_policy p, unsigned int max_victims)
{
	int ret = 0;

	for (unsigned int n = 0; n < max_victims && !ret; n++) {
		unsigned int segno;

		if (pick_victim(sbi, p, &segno))
			break;
		ret = gc_segment(sbi, segno);
		/* on a zoned volume the victim is the whole section from segno */
		for (unsigned int k = 1; sbi->zoned && !ret && k < sbi->segs_per_sec; k++)
			ret = gc_segment(sbi, segno + k);
		/* moved node blocks are only dirty: write them so the victim empties */
		if (!ret)
			ret = f2fs_write_dirty_nodes(sbi);
	}
	return ret;
}

/// Entry points ///

/*
 * With the checkpoint lock held shared we cannot checkpoint or move blocks:
 * -EAGAIN asks the operation to drop its locks, call f2fs_make_room and
 * retry, when that can help at all.
 */
int f2fs_gc_for_space(struct f2fs_sb_info *sbi, uint64_t need)
{
	unsigned int segno;

	if (has_prefree(sbi) || folio_dirty_bytes(sbi) || !pick_victim(sbi, GC_GREEDY, &segno))
		return -EAGAIN;
	return -ENOSPC;
}

/*
 * Without locks: checkpoint (segments and slots freed since the last one
 * become usable), and if that frees too little, collect garbage. With SSR
 * every free slot is usable, so collection only helps when the room is on
 * the wrong side (node segments' holes cannot take data, nor the reverse);
 * in LFS mode it is what makes clean segments at all.
 */
int f2fs_make_room(struct f2fs_sb_info *sbi)
{
	unsigned int rsvd = le32(sbi->ckpt->rsvd_segment_count);
	int ret;

	ret = f2fs_checkpoint_now(sbi, false);
	if (ret)
		return ret;
	if (f2fs_lfs_mode(sbi) ? free_segments_now(sbi) > 2 * rsvd + 2 :
	    f2fs_room_ok(sbi, atomic_load(&sbi->sm.room_wanted)))
		return 0;
	pthread_rwlock_wrlock(&sbi->cp_rwsem);
	/* greedy victims until a comfortable margin, a bounded number per call */
	ret = run_gc(sbi, GC_GREEDY, 8);
	if (!ret)
		ret = f2fs_write_checkpoint(sbi, false);
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}

/*
 * Background GC, from the checkpoint thread when the filesystem has been
 * idle: one cost-benefit victim per round while free space is under a
 * third of the main area, as the kernel's gc thread works in idle time.
 */
int f2fs_background_gc(struct f2fs_sb_info *sbi)
{
	int ret;

	if (sbi->cp_stopped || free_segments_now(sbi) * 3 > sbi->main_segs)
		return 0;
	pthread_rwlock_wrlock(&sbi->cp_rwsem);
	ret = run_gc(sbi, GC_COST_BENEFIT, 1);
	if (!ret)
		ret = f2fs_write_checkpoint(sbi, false);
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}

/* F2FS_IOC_GARBAGE_COLLECT: one victim, foreground policy when sync. */
int uf2fs_gc(struct uf2fs *fs, bool sync)
{
	struct f2fs_sb_info *sbi = (struct f2fs_sb_info *)fs;
	unsigned int segno;
	int ret;

	if (sbi->opts.read_only)
		return -EROFS;
	if (pick_victim(sbi, sync ? GC_GREEDY : GC_COST_BENEFIT, &segno))
		return -EAGAIN;
	pthread_rwlock_wrlock(&sbi->cp_rwsem);
	ret = run_gc(sbi, sync ? GC_GREEDY : GC_COST_BENEFIT, 1);
	if (!ret)
		ret = f2fs_write_checkpoint(sbi, false);
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}
