// SPDX-License-Identifier: GPL-2.0
/*
 * The segment manager: current segments and their summaries (compact or
 * normal, in the checkpoint pack or in the SSA), the NAT and SIT journals that
 * ride in those summaries, and the per-segment valid-block counts from the SIT
 * with its journal applied. The read path needs the NAT journal; info, statfs
 * and the write path need the rest.
 */
#include <stdlib.h>
#include <time.h>

#include "f2fs.h"

/// Summaries ///

static bool node_summaries_in_cp(const struct f2fs_checkpoint *cp)
{
	return le32(cp->ckpt_flags) & (CP_UMOUNT_FLAG | CP_FASTBOOT_FLAG);
}

/* Block of the "type"-th summary counted back from the end of the pack. */
static block_t sum_blk_addr(struct f2fs_sb_info *sbi, int base, int type)
{
	return sbi->cur_cp_addr + le32(sbi->ckpt->cp_pack_total_block_count) - (base + 1) + type;
}

static int read_sum_block(struct f2fs_sb_info *sbi, block_t addr, void *buf, const char *what)
{
	int ret = f2fs_dev_read_blocks(&sbi->dev, buf, addr, 1);

	if (ret)
		return f2fs_error(sbi, EIO, "%s summary (block %u): read failed", what, addr);
	return 0;
}

/*
 * Compact summaries pack the NAT journal, the SIT journal and the entries of
 * the three current data segments back to back, skipping each block's
 * footer area.
 */
static int read_compacted_summaries(struct f2fs_sb_info *sbi)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	block_t addr = sbi->cur_cp_addr + le32(sbi->ckpt->cp_pack_start_sum);
	uint8_t *blk = malloc(F2FS_BLKSIZE);
	unsigned int off;
	int ret;

	if (!blk)
		return -ENOMEM;
	ret = read_sum_block(sbi, addr, blk, "compact");
	if (ret)
		goto out;
	memcpy(&sm->sum_blk[CURSEG_HOT_DATA]->journal, blk, SUM_JOURNAL_SIZE);
	memcpy(&sm->sum_blk[CURSEG_COLD_DATA]->journal, blk + SUM_JOURNAL_SIZE, SUM_JOURNAL_SIZE);
	off = 2 * SUM_JOURNAL_SIZE;
	for (int type = CURSEG_HOT_DATA; type <= CURSEG_COLD_DATA; type++) {
		struct f2fs_summary_block *sum = sm->sum_blk[type];
		unsigned int n = sm->curseg[type].next_blkoff;

		sum->footer.entry_type = SUM_TYPE_DATA;
		for (unsigned int j = 0; j < n; j++) {
			memcpy(&sum->entries[j], blk + off, SUMMARY_SIZE);
			off += SUMMARY_SIZE;
			if (off + SUMMARY_SIZE <= F2FS_BLKSIZE - SUM_FOOTER_SIZE)
				continue;
			ret = read_sum_block(sbi, ++addr, blk, "compact");
			if (ret)
				goto out;
			off = 0;
		}
	}
out:
	free(blk);
	return ret;
}

/*
 * After a checkpoint that was not an unmount, the SSA slot of a current
 * node segment is stale: rebuild it from the node footers of the blocks
 * written so far, as the kernel's f2fs_restore_node_summary does.
 */
static int restore_node_summary(struct f2fs_sb_info *sbi, int type)
{
	struct curseg_info *cs = &sbi->sm.curseg[type];
	struct f2fs_summary_block *sum = sbi->sm.sum_blk[type];
	block_t start = sbi->main_blkaddr + cs->segno * sbi->blocks_per_seg;
	struct f2fs_node *n = malloc(F2FS_BLKSIZE);

	if (!n)
		return -ENOMEM;
	memset(sum->entries, 0, sizeof(sum->entries));
	sum->footer.entry_type = SUM_TYPE_NODE;
	for (unsigned int i = 0; i < cs->next_blkoff; i++) {
		if (f2fs_dev_read_blocks(&sbi->dev, n, start + i, 1)) {
			free(n);
			return f2fs_error(sbi, EIO, "node block %u: read failed", start + i);
		}
		sum->entries[i].nid = n->footer.nid;
	}
	free(n);
	return 0;
}

static int read_normal_summary(struct f2fs_sb_info *sbi, int type)
{
	struct f2fs_checkpoint *cp = sbi->ckpt;
	struct curseg_info *cs = &sbi->sm.curseg[type];
	bool in_cp = node_summaries_in_cp(cp);
	block_t addr;
	int ret;

	if (type <= CURSEG_COLD_DATA)
		addr = sum_blk_addr(sbi, in_cp ? NR_CURSEG_TYPE : NR_CURSEG_DATA_TYPE, type);
	else if (in_cp)
		addr = sum_blk_addr(sbi, NR_CURSEG_NODE_TYPE, type - CURSEG_HOT_NODE);
	else
		addr = sbi->ssa_blkaddr + cs->segno;
	ret = read_sum_block(sbi, addr, sbi->sm.sum_blk[type],
			     type <= CURSEG_COLD_DATA ? "data" : "node");
	if (ret)
		return ret;
	if (type > CURSEG_COLD_DATA && !in_cp)
		return restore_node_summary(sbi, type);
	if (sbi->sm.sum_blk[type]->footer.entry_type !=
	    (type <= CURSEG_COLD_DATA ? SUM_TYPE_DATA : SUM_TYPE_NODE))
		return f2fs_error(sbi, EFSCORRUPTED, "summary (block %u): wrong summary type %u",
				  addr, sbi->sm.sum_blk[type]->footer.entry_type);
	return 0;
}

static int restore_cursegs(struct f2fs_sb_info *sbi)
{
	struct f2fs_checkpoint *cp = sbi->ckpt;
	struct f2fs_sm_info *sm = &sbi->sm;
	int ret;

	for (int i = 0; i < NR_CURSEG_TYPE; i++) {
		struct curseg_info *cs = &sm->curseg[i];

		sm->sum_blk[i] = calloc(1, sizeof(struct f2fs_summary_block));
		if (!sm->sum_blk[i])
			return -ENOMEM;
		if (i <= CURSEG_COLD_DATA) {
			cs->segno = le32(cp->cur_data_segno[i]);
			cs->next_blkoff = le16(cp->cur_data_blkoff[i]);
		} else {
			cs->segno = le32(cp->cur_node_segno[i - CURSEG_HOT_NODE]);
			cs->next_blkoff = le16(cp->cur_node_blkoff[i - CURSEG_HOT_NODE]);
		}
		cs->alloc_type = cp->alloc_type[i];
	}
	if (le32(cp->ckpt_flags) & CP_COMPACT_SUM_FLAG) {
		ret = read_compacted_summaries(sbi);
	} else {
		ret = 0;
		for (int i = CURSEG_HOT_DATA; i <= CURSEG_COLD_DATA && !ret; i++)
			ret = read_normal_summary(sbi, i);
	}
	for (int i = CURSEG_HOT_NODE; i < NR_CURSEG_TYPE && !ret; i++)
		ret = read_normal_summary(sbi, i);
	if (ret)
		return ret;
	if (le16(sm->sum_blk[CURSEG_HOT_DATA]->journal.n_nats) > NAT_JOURNAL_ENTRIES ||
	    le16(sm->sum_blk[CURSEG_COLD_DATA]->journal.n_sits) > SIT_JOURNAL_ENTRIES)
		return f2fs_error(sbi, EFSCORRUPTED,
				  "checkpoint (block %u): NAT/SIT journal entry count out of range",
				  sbi->cur_cp_addr);
	return 0;
}

/// SIT ///

static block_t sit_block_addr(struct f2fs_sb_info *sbi, unsigned int sit_blk)
{
	block_t addr = sbi->sm.sit_blkaddr + sit_blk;

	if (f2fs_test_bit(sit_blk, sbi->sm.sit_bitmap))
		addr += sbi->sm.sit_blocks;
	return addr;
}

static void set_seg_entry(struct seg_entry *se, const struct f2fs_sit_entry *raw)
{
	se->valid_blocks = le16(raw->vblocks) & SIT_VBLOCKS_MASK;
	se->type = le16(raw->vblocks) >> SIT_VBLOCKS_SHIFT;
	se->mtime = le64(raw->mtime);
	memcpy(se->valid_map, raw->valid_map, SIT_VBLOCK_MAP_SIZE);
}

static void get_seg_entry_raw(const struct seg_entry *se, struct f2fs_sit_entry *raw)
{
	raw->vblocks = se->valid_blocks | ((uint16_t)se->type << SIT_VBLOCKS_SHIFT);
	raw->mtime = se->mtime;
	memcpy(raw->valid_map, se->valid_map, SIT_VBLOCK_MAP_SIZE);
}

static int build_sit_entries(struct f2fs_sb_info *sbi)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	unsigned int nblocks = DIV_ROUND_UP(sbi->main_segs, SIT_ENTRY_PER_BLOCK);
	struct f2fs_sit_block *blk = malloc(F2FS_BLKSIZE);
	struct f2fs_journal *j = &sm->sum_blk[CURSEG_COLD_DATA]->journal;
	int ret = 0;

	if (!blk)
		return -ENOMEM;
	for (unsigned int b = 0; b < nblocks; b++) {
		block_t addr = sit_block_addr(sbi, b);

		ret = f2fs_dev_read_blocks(&sbi->dev, blk, addr, 1);
		if (ret) {
			ret = f2fs_error(sbi, EIO, "SIT block %u: read failed", addr);
			goto out;
		}
		for (unsigned int k = 0; k < SIT_ENTRY_PER_BLOCK; k++) {
			unsigned int segno = b * SIT_ENTRY_PER_BLOCK + k;

			if (segno >= sbi->main_segs)
				break;
			set_seg_entry(&sm->sentries[segno], &blk->entries[k]);
			if (sm->sentries[segno].valid_blocks > sbi->blocks_per_seg) {
				ret = f2fs_error(sbi, EFSCORRUPTED,
						 "SIT block %u: segment %u has %u valid blocks",
						 addr, segno, sm->sentries[segno].valid_blocks);
				goto out;
			}
		}
	}
	/* journalled entries are newer than the SIT blocks */
	for (unsigned int i = 0; i < le16(j->n_sits); i++) {
		unsigned int segno = le32(j->sit_j.entries[i].segno);

		if (segno >= sbi->main_segs) {
			ret = f2fs_error(sbi, EFSCORRUPTED, "SIT journal: segment %u out of range",
					 segno);
			goto out;
		}
		set_seg_entry(&sm->sentries[segno], &j->sit_j.entries[i].se);
	}
	sm->free_segments = f2fs_count_free_segments(sbi);
	sm->nr_free = sm->free_segments;
out:
	free(blk);
	return ret;
}

int f2fs_build_segment_manager(struct f2fs_sb_info *sbi)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	int ret;

	pthread_mutex_init(&sm->lock, NULL);
	sm->sit_blkaddr = le32(sbi->raw_super.sit_blkaddr);
	sm->sit_blocks = (le32(sbi->raw_super.segment_count_sit) / 2) << sbi->log_blocks_per_seg;
	sm->sit_bitmap_size = le32(sbi->ckpt->sit_ver_bitmap_bytesize);
	sm->sit_bitmap = f2fs_cp_sit_bitmap(sbi);
	if (DIV_ROUND_UP(sbi->main_segs, SIT_ENTRY_PER_BLOCK) > sm->sit_blocks)
		return f2fs_error(sbi, EFSCORRUPTED,
				  "super block: SIT area too small for %u segments", sbi->main_segs);
	sm->sentries = calloc(sbi->main_segs, sizeof(*sm->sentries));
	sm->dirty_sit = calloc(DIV_ROUND_UP(sbi->main_segs, 8), 1);
	sm->prefree = calloc(DIV_ROUND_UP(sbi->main_segs, 8), 1);
	sm->discard_pending = calloc(DIV_ROUND_UP(sbi->main_segs, 8), 1);
	if (!sm->sentries || !sm->dirty_sit || !sm->prefree || !sm->discard_pending)
		return -ENOMEM;
	sm->valid_blocks = le64(sbi->ckpt->valid_block_count);
	sm->user_blocks = le64(sbi->ckpt->user_block_count);
	sm->elapsed_base = le64(sbi->ckpt->elapsed_time);
	sm->mount_time = time(NULL);
	ret = restore_cursegs(sbi);
	if (ret)
		return ret;
	return build_sit_entries(sbi);
}

void f2fs_destroy_segment_manager(struct f2fs_sb_info *sbi)
{
	struct f2fs_sm_info *sm = &sbi->sm;

	for (int i = 0; i < NR_CURSEG_TYPE; i++) {
		free(sm->sum_blk[i]);
		sm->sum_blk[i] = NULL;
	}
	free(sm->sentries);
	free(sm->dirty_sit);
	free(sm->prefree);
	free(sm->discard_pending);
	sm->sentries = NULL;
	sm->dirty_sit = sm->prefree = sm->discard_pending = NULL;
}

/// Allocation (write side) ///

static bool is_curseg(struct f2fs_sm_info *sm, unsigned int segno)
{
	for (int i = 0; i < NR_CURSEG_TYPE; i++)
		if (sm->curseg[i].segno == segno)
			return true;
	return false;
}

static void bit_set(uint8_t *map, unsigned int nr)
{
	map[nr >> 3] |= 1u << (nr & 7);
}

static void bit_clear(uint8_t *map, unsigned int nr)
{
	map[nr / 8] &= ~(1u << (nr % 8));
}

static bool bit_test(const uint8_t *map, unsigned int nr)
{
	return map[nr >> 3] & (1u << (nr & 7));
}

/* As fsck counts them: empty and not a current segment. */
unsigned int f2fs_count_free_segments(struct f2fs_sb_info *sbi)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	unsigned int n = 0;

	for (unsigned int s = 0; s < sbi->main_segs; s++)
		if (!sm->sentries[s].valid_blocks && !is_curseg(sm, s))
			n++;
	return n;
}

static uint64_t seg_mtime(struct f2fs_sm_info *sm)
{
	uint64_t now = time(NULL);

	return sm->elapsed_base + (now > sm->mount_time ? now - sm->mount_time : 0);
}

/*
 * A segment can take new blocks only when it held nothing at the last
 * checkpoint either: "prefree" segments emptied since then still back the
 * old checkpoint's view and wait for the next one.
 */
static int find_free_segment(struct f2fs_sb_info *sbi, unsigned int *out)
{
	struct f2fs_sm_info *sm = &sbi->sm;

	for (unsigned int i = 0; i < sbi->main_segs; i++) {
		unsigned int s = (sm->alloc_hint + i) % sbi->main_segs;

		if (sm->sentries[s].valid_blocks || is_curseg(sm, s) || bit_test(sm->prefree, s))
			continue;
		sm->alloc_hint = s + 1;
		bit_clear(sm->discard_pending, s);	/* about to be overwritten anyway */
		*out = s;
		return 0;
	}
	return -ENOSPC;
}

static int write_ssa_block(struct f2fs_sb_info *sbi, unsigned int segno,
			   const struct f2fs_summary_block *sum)
{
	struct iovec v = { (void *)sum, F2FS_BLKSIZE };
	int ret = f2fs_dev_writev_blocks(&sbi->dev, &v, 1, sbi->ssa_blkaddr + segno);

	if (ret)
		return f2fs_error(sbi, EIO, "SSA block %u: write failed", sbi->ssa_blkaddr + segno);
	return 0;
}

/* The current segment of a type is full: file its summary and open a new one. */
static int new_curseg(struct f2fs_sb_info *sbi, int type)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	struct curseg_info *cs = &sm->curseg[type];
	struct f2fs_summary_block *sum = sm->sum_blk[type];
	unsigned int segno;
	int ret;

	ret = write_ssa_block(sbi, cs->segno, sum);
	if (ret)
		return ret;
	ret = find_free_segment(sbi, &segno);
	if (ret)
		return ret;
	/* journals live in the data summaries; keep them across segments */
	memset(sum->entries, 0, sizeof(sum->entries));
	sum->footer.entry_type = type <= CURSEG_COLD_DATA ? SUM_TYPE_DATA : SUM_TYPE_NODE;
	cs->segno = segno;
	cs->next_blkoff = 0;
	cs->alloc_type = 0;	/* LFS */
	if (sm->nr_free)
		sm->nr_free--;
	sm->sentries[segno].type = type;
	bit_set(sm->dirty_sit, segno);
	return 0;
}

int f2fs_allocate_block(struct f2fs_sb_info *sbi, int type, const struct f2fs_summary *sum,
			block_t *out)
{
	return f2fs_allocate_block_next(sbi, type, sum, out, NULL);
}

/*
 * Like the kernel, open the next segment as soon as one fills, so that the
 * address of the next free block (what node footers chain through for
 * roll-forward recovery) is known when a block is handed out.
 */
int f2fs_allocate_block_next(struct f2fs_sb_info *sbi, int type, const struct f2fs_summary *sum,
			     block_t *out, block_t *next)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	struct curseg_info *cs = &sm->curseg[type];
	struct seg_entry *se;
	int ret = 0;

	pthread_mutex_lock(&sm->lock);
	if (cs->next_blkoff >= sbi->blocks_per_seg) {
		ret = new_curseg(sbi, type);
		if (ret)
			goto out;
	}
	se = &sm->sentries[cs->segno];
	*out = sbi->main_blkaddr + cs->segno * sbi->blocks_per_seg + cs->next_blkoff;
	sm->sum_blk[type]->entries[cs->next_blkoff] = *sum;
	f2fs_set_bit_msb(cs->next_blkoff, se->valid_map);
	se->valid_blocks++;
	se->type = type;
	se->mtime = seg_mtime(sm);
	bit_set(sm->dirty_sit, cs->segno);
	cs->next_blkoff++;
	sm->valid_blocks++;
	if (cs->next_blkoff >= sbi->blocks_per_seg)
		new_curseg(sbi, type);	/* on failure the next allocation tries again */
	if (next)
		*next = cs->next_blkoff < sbi->blocks_per_seg ?
			sbi->main_blkaddr + cs->segno * sbi->blocks_per_seg + cs->next_blkoff : 0;
out:
	pthread_mutex_unlock(&sm->lock);
	return ret;
}

void f2fs_invalidate_block(struct f2fs_sb_info *sbi, block_t blk)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	unsigned int segno, off;
	struct seg_entry *se;

	if (!f2fs_valid_main_blkaddr(sbi, blk))
		return;
	segno = f2fs_segno(sbi, blk);
	off = (blk - sbi->main_blkaddr) & (sbi->blocks_per_seg - 1);
	pthread_mutex_lock(&sm->lock);
	se = &sm->sentries[segno];
	if (f2fs_test_bit(off, se->valid_map)) {
		f2fs_clear_bit_msb(off, se->valid_map);
		se->valid_blocks--;
		sm->valid_blocks--;
		bit_set(sm->dirty_sit, segno);
		if (!se->valid_blocks && !is_curseg(sm, segno))
			bit_set(sm->prefree, segno);
	}
	pthread_mutex_unlock(&sm->lock);
}

bool f2fs_block_is_valid(struct f2fs_sb_info *sbi, block_t blk)
{
	unsigned int off;
	bool valid;

	if (!f2fs_valid_main_blkaddr(sbi, blk))
		return false;
	off = (blk - sbi->main_blkaddr) & (sbi->blocks_per_seg - 1);
	pthread_mutex_lock(&sbi->sm.lock);
	valid = f2fs_test_bit(off, sbi->sm.sentries[f2fs_segno(sbi, blk)].valid_map);
	pthread_mutex_unlock(&sbi->sm.lock);
	return valid;
}

/*
 * After a checkpoint, segments emptied since the previous one are free for
 * good and can be reused. Their discard waits: as the kernel's discard
 * thread, it goes out in idle time or at unmount, and a segment written
 * again before then needs none. Punching a hole into an image file only for
 * the next write to fill it again cost a third of an O_SYNC overwrite load.
 */
void f2fs_clear_prefree(struct f2fs_sb_info *sbi)
{
	struct f2fs_sm_info *sm = &sbi->sm;

	pthread_mutex_lock(&sbi->sm.lock);
	for (unsigned int s = 0; s < sbi->main_segs; s++)
		if (bit_test(sm->prefree, s) && !sm->sentries[s].valid_blocks && !is_curseg(sm, s))
			bit_set(sm->discard_pending, s);
	memset(sbi->sm.prefree, 0, DIV_ROUND_UP(sbi->main_segs, 8));
	sbi->sm.nr_free = f2fs_count_free_segments(sbi);
	pthread_mutex_unlock(&sbi->sm.lock);
}

static bool discardable(struct f2fs_sm_info *sm, unsigned int s)
{
	return bit_test(sm->discard_pending, s) && !sm->sentries[s].valid_blocks &&
	       !is_curseg(sm, s) && !bit_test(sm->prefree, s);
}

/*
 * Runs of neighbours go as one request. The segment lock is held across the
 * requests: a segment must not be allocated and written between the choice
 * and its discard. max_segs bounds how long allocation can wait.
 */
void f2fs_issue_discards(struct f2fs_sb_info *sbi, unsigned int max_segs)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	unsigned int done = 0;

	pthread_mutex_lock(&sm->lock);
	for (unsigned int s = 0; s < sbi->main_segs && (!max_segs || done < max_segs);) {
		unsigned int e = s;

		while (e < sbi->main_segs && discardable(sm, e) && (!max_segs || done < max_segs)) {
			bit_clear(sm->discard_pending, e++);
			done++;
		}
		if (e > s)
			f2fs_dev_discard(&sbi->dev, sbi->main_blkaddr + s * sbi->blocks_per_seg,
					 (uint64_t)(e - s) * sbi->blocks_per_seg);
		else
			bit_clear(sm->discard_pending, s);	/* in use again: nothing to do */
		s = e > s ? e : s + 1;
	}
	pthread_mutex_unlock(&sm->lock);
}

/// Flushing the SIT at checkpoint ///

static int sit_journal_find(struct f2fs_journal *j, unsigned int segno)
{
	for (int i = 0; i < le16(j->n_sits); i++)
		if (le32(j->sit_j.entries[i].segno) == segno)
			return i;
	return -1;
}

static unsigned int count_dirty_not_journaled(struct f2fs_sb_info *sbi, struct f2fs_journal *j)
{
	unsigned int n = 0;

	for (unsigned int s = 0; s < sbi->main_segs; s++)
		if (bit_test(sbi->sm.dirty_sit, s) && sit_journal_find(j, s) < 0)
			n++;
	return n;
}

/*
 * Write one SIT block with all its entries to the copy the checkpoint does
 * not point at, then flip the bit: the old checkpoint keeps its copy intact.
 */
static int write_sit_block(struct f2fs_sb_info *sbi, unsigned int sit_blk)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	struct f2fs_sit_block *blk = calloc(1, F2FS_BLKSIZE);
	struct iovec v = { blk, F2FS_BLKSIZE };
	block_t addr;
	int ret;

	if (!blk)
		return -ENOMEM;
	for (unsigned int k = 0; k < SIT_ENTRY_PER_BLOCK; k++) {
		unsigned int segno = sit_blk * SIT_ENTRY_PER_BLOCK + k;

		if (segno >= sbi->main_segs)
			break;
		get_seg_entry_raw(&sm->sentries[segno], &blk->entries[k]);
	}
	f2fs_change_bit_msb(sit_blk, sm->sit_bitmap);
	addr = sit_block_addr(sbi, sit_blk);
	ret = f2fs_dev_writev_blocks(&sbi->dev, &v, 1, addr);
	free(blk);
	if (ret)
		return f2fs_error(sbi, EIO, "SIT block %u: write failed", addr);
	return 0;
}

int f2fs_flush_sit(struct f2fs_sb_info *sbi)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	struct f2fs_journal *j = &sm->sum_blk[CURSEG_COLD_DATA]->journal;
	unsigned int nblocks = DIV_ROUND_UP(sbi->main_segs, SIT_ENTRY_PER_BLOCK);
	int ret = 0;

	if (le16(j->n_sits) + count_dirty_not_journaled(sbi, j) <= SIT_JOURNAL_ENTRIES) {
		for (unsigned int s = 0; s < sbi->main_segs; s++) {
			int i;

			if (!bit_test(sm->dirty_sit, s))
				continue;
			i = sit_journal_find(j, s);
			if (i < 0) {
				i = le16(j->n_sits);
				j->n_sits = i + 1;
				j->sit_j.entries[i].segno = s;
			}
			get_seg_entry_raw(&sm->sentries[s], &j->sit_j.entries[i].se);
		}
		memset(sm->dirty_sit, 0, DIV_ROUND_UP(sbi->main_segs, 8));
		return 0;
	}
	/* too many for the journal: empty it into the blocks and write them all */
	for (int i = 0; i < le16(j->n_sits); i++)
		bit_set(sm->dirty_sit, le32(j->sit_j.entries[i].segno));
	j->n_sits = 0;
	for (unsigned int b = 0; b < nblocks && !ret; b++) {
		bool dirty = false;

		for (unsigned int k = 0; k < SIT_ENTRY_PER_BLOCK; k++) {
			unsigned int segno = b * SIT_ENTRY_PER_BLOCK + k;

			if (segno < sbi->main_segs && bit_test(sm->dirty_sit, segno))
				dirty = true;
		}
		if (dirty)
			ret = write_sit_block(sbi, b);
	}
	memset(sm->dirty_sit, 0, DIV_ROUND_UP(sbi->main_segs, 8));
	return ret;
}

/*
 * Current segments' summaries also go to their SSA slots at each
 * checkpoint, so the SSA is complete whatever the checkpoint carries.
 */
int f2fs_write_curseg_ssa(struct f2fs_sb_info *sbi)
{
	for (int i = 0; i < NR_CURSEG_TYPE; i++) {
		int ret = write_ssa_block(sbi, sbi->sm.curseg[i].segno, sbi->sm.sum_blk[i]);

		if (ret)
			return ret;
	}
	return 0;
}

/// Recovery support ///

static int update_ssa_entry(struct f2fs_sb_info *sbi, unsigned int segno, unsigned int off,
			    const struct f2fs_summary *sum)
{
	struct f2fs_summary_block *blk;
	int ret;

	for (int i = 0; i < NR_CURSEG_TYPE; i++) {
		if (sbi->sm.curseg[i].segno == segno) {
			sbi->sm.sum_blk[i]->entries[off] = *sum;
			return 0;
		}
	}
	blk = malloc(F2FS_BLKSIZE);
	if (!blk)
		return -ENOMEM;
	ret = f2fs_dev_read_blocks(&sbi->dev, blk, sbi->ssa_blkaddr + segno, 1);
	if (!ret) {
		blk->entries[off] = *sum;
		blk->footer.entry_type = SUM_TYPE_DATA;
		ret = write_ssa_block(sbi, segno, blk);
	}
	free(blk);
	return ret;
}

int f2fs_claim_block(struct f2fs_sb_info *sbi, block_t blk, const struct f2fs_summary *sum)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	unsigned int segno = f2fs_segno(sbi, blk);
	unsigned int off = (blk - sbi->main_blkaddr) & (sbi->blocks_per_seg - 1);
	struct seg_entry *se = &sm->sentries[segno];
	int ret;

	pthread_mutex_lock(&sm->lock);
	if (f2fs_test_bit(off, se->valid_map)) {
		pthread_mutex_unlock(&sm->lock);
		return f2fs_error(sbi, EFSCORRUPTED, "recovery: block %u is already in use", blk);
	}
	if (!se->valid_blocks && !is_curseg(sm, segno))
		se->type = CURSEG_WARM_DATA;	/* a segment the crashed session opened */
	f2fs_set_bit_msb(off, se->valid_map);
	se->valid_blocks++;
	sm->valid_blocks++;
	bit_set(sm->dirty_sit, segno);
	ret = update_ssa_entry(sbi, segno, off, sum);
	pthread_mutex_unlock(&sm->lock);
	return ret;
}

int f2fs_move_all_cursegs(struct f2fs_sb_info *sbi)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	int ret = 0;

	pthread_mutex_lock(&sm->lock);
	for (int i = 0; i < NR_CURSEG_TYPE && !ret; i++)
		ret = new_curseg(sbi, i);
	sm->nr_free = f2fs_count_free_segments(sbi);
	pthread_mutex_unlock(&sm->lock);
	return ret;
}
