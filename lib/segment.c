// SPDX-License-Identifier: GPL-2.0
/*
 * The segment manager: current segments and their summaries (compact or
 * normal, in the checkpoint pack or in the SSA), the NAT and SIT journals that
 * ride in those summaries, and the per-segment valid-block counts from the SIT
 * with its journal applied. The read path needs the NAT journal; info, statfs
 * and the write path need the rest.
 */
#include <stdlib.h>

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
	sm->free_segments = 0;
	for (unsigned int s = 0; s < sbi->main_segs; s++)
		if (!sm->sentries[s].valid_blocks)
			sm->free_segments++;
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
	if (!sm->sentries)
		return -ENOMEM;
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
	sm->sentries = NULL;
}
