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
		/* an SSR log's summary is the whole segment's, as the kernel packs it */
		unsigned int n = sm->curseg[type].alloc_type == ALLOC_SSR ? sbi->blocks_per_seg :
				 sm->curseg[type].next_blkoff;

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
 * written so far, as the kernel's f2fs_restore_node_summary does. An SSR
 * log has blocks anywhere in its segment, so all of them are read.
 */
static int restore_node_summary(struct f2fs_sb_info *sbi, int type)
{
	struct curseg_info *cs = &sbi->sm.curseg[type];
	struct f2fs_summary_block *sum = sbi->sm.sum_blk[type];
	block_t start = sbi->main_blkaddr + cs->segno * sbi->blocks_per_seg;
	unsigned int nr = cs->alloc_type == ALLOC_SSR ? sbi->blocks_per_seg : cs->next_blkoff;
	struct f2fs_node *n = malloc(F2FS_BLKSIZE);

	if (!n)
		return -ENOMEM;
	memset(sum->entries, 0, sizeof(sum->entries));
	sum->footer.entry_type = SUM_TYPE_NODE;
	for (unsigned int i = 0; i < nr; i++) {
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

static void recount_ssr_slots(struct f2fs_sb_info *sbi);

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
	/* what the SIT says is what the checkpoint holds */
	memcpy(se->ckpt_valid_map, raw->valid_map, SIT_VBLOCK_MAP_SIZE);
	se->ckpt_valid_blocks = se->valid_blocks;
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
	recount_ssr_slots(sbi);
out:
	free(blk);
	return ret;
}

/*
 * The kernel's sanity_check_curseg: a log's next block is unused, and in an
 * LFS log so is everything after it; an SSR log may have used blocks
 * anywhere else. Allocating into a used block would corrupt another file.
 * (Roll-forward recovery then moves every log, so blocks written after the
 * checkpoint, which the SIT does not show, are not at stake here.)
 */
static int check_cursegs(struct f2fs_sb_info *sbi)
{
	for (int i = 0; i < NR_CURSEG_TYPE; i++) {
		struct curseg_info *cs = &sbi->sm.curseg[i];
		struct seg_entry *se = &sbi->sm.sentries[cs->segno];
		unsigned int off = cs->next_blkoff;

		if (cs->alloc_type != ALLOC_LFS && cs->alloc_type != ALLOC_SSR)
			return f2fs_error(sbi, EFSCORRUPTED, "checkpoint (block %u): log %d has "
					  "allocation type %u", sbi->cur_cp_addr, i, cs->alloc_type);
		for (; off < sbi->blocks_per_seg; off++) {
			if (f2fs_test_bit(off, se->valid_map))
				return f2fs_error(sbi, EFSCORRUPTED, "checkpoint (block %u): log %d's "
						  "next block %u of segment %u is in use "
						  "(block %u)", sbi->cur_cp_addr, i,
						  cs->next_blkoff, cs->segno, off);
			if (cs->alloc_type == ALLOC_SSR)
				break;
		}
	}
	return 0;
}

int f2fs_build_segment_manager(struct f2fs_sb_info *sbi)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	int ret;

	pthread_mutex_init(&sm->lock, NULL);
	pthread_cond_init(&sm->discard_done, NULL);
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
	sm->discard_inflight = calloc(DIV_ROUND_UP(sbi->main_segs, 8), 1);
	if (!sm->sentries || !sm->dirty_sit || !sm->prefree || !sm->discard_pending ||
	    !sm->discard_inflight)
		return -ENOMEM;
	sm->valid_blocks = le64(sbi->ckpt->valid_block_count);
	sm->user_blocks = le64(sbi->ckpt->user_block_count);
	sm->elapsed_base = le64(sbi->ckpt->elapsed_time);
	sm->mount_time = time(NULL);
	sm->gc_victim = NULL_SEGNO;
	ret = restore_cursegs(sbi);
	if (ret)
		return ret;
	ret = build_sit_entries(sbi);
	if (ret)
		return ret;
	/* only allocation trusts it: a read-only mount reads what it can */
	return sbi->opts.read_only ? 0 : check_cursegs(sbi);
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
	free(sm->discard_inflight);
	sm->sentries = NULL;
	sm->dirty_sit = sm->prefree = sm->discard_pending = sm->discard_inflight = NULL;
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

static block_t seg_start(struct f2fs_sb_info *sbi, unsigned int segno)
{
	return sbi->main_blkaddr + segno * sbi->blocks_per_seg;
}

/// SSR slot accounting ///

/* Data logs take holes of data segments only, node logs of node segments. */
static int slot_class(const struct seg_entry *se)
{
	return se->type > CURSEG_COLD_DATA;
}

/*
 * Free slots a segment offers SSR. Only used segments count: a clean one is
 * for LFS, an emptied (prefree) one still backs the checkpoint, and a
 * current segment is its own log's.
 */
static unsigned int ssr_slots_of(struct f2fs_sb_info *sbi, unsigned int segno)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	struct seg_entry *se = &sm->sentries[segno];

	if (!se->valid_blocks || is_curseg(sm, segno))
		return 0;
	return sbi->blocks_per_seg - se->ckpt_valid_blocks;
}

/*
 * Every change of a segment's maps, type or current-ness is bracketed by
 * these two, under sm->lock, so the per-class totals stay exact without a
 * scan: f2fs_check_space reads them on every write.
 */
static void slots_unaccount(struct f2fs_sb_info *sbi, unsigned int segno)
{
	struct seg_entry *se = &sbi->sm.sentries[segno];

	sbi->sm.ssr_slots[slot_class(se)] -= ssr_slots_of(sbi, segno);
}

static void slots_account(struct f2fs_sb_info *sbi, unsigned int segno)
{
	struct seg_entry *se = &sbi->sm.sentries[segno];

	sbi->sm.ssr_slots[slot_class(se)] += ssr_slots_of(sbi, segno);
}

static void recount_ssr_slots(struct f2fs_sb_info *sbi)
{
	sbi->sm.ssr_slots[0] = sbi->sm.ssr_slots[1] = 0;
	for (unsigned int s = 0; s < sbi->main_segs; s++)
		slots_account(sbi, s);
}

/*
 * The running totals must equal a fresh count; a drift would mean a map
 * change without its bracket. Say so once and go on with the fresh count
 * (the totals only size the space check).
 */
static void check_ssr_slots(struct f2fs_sb_info *sbi)
{
	uint64_t was[2] = { sbi->sm.ssr_slots[0], sbi->sm.ssr_slots[1] };
	static atomic_bool warned;

	recount_ssr_slots(sbi);
	if ((was[0] != sbi->sm.ssr_slots[0] || was[1] != sbi->sm.ssr_slots[1]) &&
	    !atomic_exchange(&warned, true)) {
		f2fs_msg(sbi, "internal: SSR slot totals drifted (data %llu, node %llu; counted "
			 "%llu, %llu)", (unsigned long long)was[0], (unsigned long long)was[1],
			 (unsigned long long)sbi->sm.ssr_slots[0],
			 (unsigned long long)sbi->sm.ssr_slots[1]);
#ifdef UF2FS_DEBUG_SLOTS
		abort();
#endif
	}
}

/// Choosing segments ///

/*
 * A segment can take new blocks only when it held nothing at the last
 * checkpoint either: "prefree" segments emptied since then still back the
 * old checkpoint's view and wait for the next one. A segment whose discard
 * is being sent is free but must not be written until the discard is done
 * (see f2fs_issue_discards): -EINPROGRESS when only such segments are left.
 */
static int find_free_segment(struct f2fs_sb_info *sbi, unsigned int *out)
{
	struct f2fs_sm_info *sm = &sbi->sm;

	for (unsigned int i = 0; i < sbi->main_segs; i++) {
		unsigned int s = (sm->alloc_hint + i) % sbi->main_segs;
		struct seg_entry *se = &sm->sentries[s];

		if (se->valid_blocks || se->ckpt_valid_blocks || is_curseg(sm, s) ||
		    bit_test(sm->prefree, s) || bit_test(sm->discard_inflight, s))
			continue;
		sm->alloc_hint = s + 1;
		bit_clear(sm->discard_pending, s);	/* about to be overwritten anyway */
		*out = s;
		return 0;
	}
	return sm->nr_discarding ? -EINPROGRESS : -ENOSPC;
}

/// Zoned volumes: whole sections ///

static bool seg_writable(struct f2fs_sm_info *sm, unsigned int s)
{
	const struct seg_entry *se = &sm->sentries[s];

	return !se->valid_blocks && !se->ckpt_valid_blocks && !is_curseg(sm, s) &&
	       !bit_test(sm->prefree, s) && !bit_test(sm->discard_inflight, s);
}

static bool sec_writable(struct f2fs_sb_info *sbi, unsigned int sec)
{
	for (unsigned int k = 0; k < sbi->segs_per_sec; k++)
		if (!seg_writable(&sbi->sm, sec * sbi->segs_per_sec + k))
			return false;
	return true;
}

/*
 * On a zoned volume a log fills its section (zone) segment after segment,
 * then takes a section that is free as a whole, its zone reset first, as the
 * kernel's get_new_segment does; new_sec (a log moved after recovery or by
 * a write-pointer mismatch) always takes a new one.
 */
static int find_free_zoned(struct f2fs_sb_info *sbi, int type, bool new_sec, unsigned int *out)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	unsigned int cur = sm->curseg[type].segno, spsec = sbi->segs_per_sec;
	unsigned int nsec = sbi->main_segs / spsec;

	if (!new_sec && (cur + 1) % spsec && cur + 1 < sbi->main_segs &&
	    seg_writable(sm, cur + 1) && f2fs_usable_blks_in_seg(sbi, cur + 1)) {
		bit_clear(sm->discard_pending, cur + 1);
		*out = cur + 1;
		return 0;
	}
	for (unsigned int i = 0; i < nsec; i++) {
		unsigned int sec = (sm->alloc_hint / spsec + i) % nsec;
		int ret;

		if (!sec_writable(sbi, sec))
			continue;
		ret = f2fs_zone_prepare_section(sbi, sec);
		if (ret)
			return ret;
		sm->alloc_hint = (sec + 1) * spsec;
		for (unsigned int k = 0; k < spsec; k++)
			bit_clear(sm->discard_pending, sec * spsec + k);
		*out = sec * spsec;
		return 0;
	}
	return sm->nr_discarding ? -EINPROGRESS : -ENOSPC;
}

/*
 * Free segments a log can still take: on a zoned volume those of free
 * sections and those after a log's segment in its own section, not the
 * holes of sections in use, nor segments past a zone's capacity (one it
 * ends in counts whole, as the kernel's f2fs_usable_segs_in_sec).
 */
unsigned int f2fs_usable_free_segments(struct f2fs_sb_info *sbi)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	unsigned int n = 0, spsec = sbi->segs_per_sec;

	if (!sbi->zoned)
		return f2fs_count_free_segments(sbi);
	for (unsigned int sec = 0; sec < sbi->main_segs / spsec; sec++) {
		unsigned int first = sec * spsec, from = first;

		for (int t = 0; t < NR_CURSEG_TYPE; t++)
			if (sm->curseg[t].segno / spsec == sec && sm->curseg[t].segno + 1 > from)
				from = sm->curseg[t].segno + 1;
		if (from == first && !sec_writable(sbi, sec))
			continue;
		for (unsigned int s = from; s < first + spsec; s++)
			n += seg_writable(sm, s) && f2fs_usable_blks_in_seg(sbi, s);
	}
	return n;
}

/*
 * The kernel's __next_free_blkoff: the first slot from start that is free in
 * both the current and the checkpoint valid maps.
 */
static unsigned int next_free_blkoff(struct f2fs_sb_info *sbi, unsigned int segno,
				     unsigned int start)
{
	struct seg_entry *se = &sbi->sm.sentries[segno];
	unsigned int off = start;

	while (off < sbi->blocks_per_seg) {
		uint8_t used = se->valid_map[off >> 3] | se->ckpt_valid_map[off >> 3];

		if (!(off & 7) && used == 0xff) {
			off += 8;
			continue;
		}
		if (!f2fs_test_bit(off, se->valid_map) && !f2fs_test_bit(off, se->ckpt_valid_map))
			return off;
		off++;
	}
	return sbi->blocks_per_seg;
}

/*
 * The kernel's f2fs_need_SSR: free segments at or below the dirty node
 * segments plus twice the reserved ones (min_ssr_sections defaults to the
 * reserved count). uf2fs writes data only at writeback, in bulk, so dirty
 * data counts too: when clean segments cannot take what is waiting, holes
 * must.
 */
static bool need_ssr_locked(struct f2fs_sb_info *sbi)
{
	unsigned int bps = sbi->blocks_per_seg;
	uint64_t rsvd = le32(sbi->ckpt->rsvd_segment_count);
	uint64_t dirty_nodes = folio_dirty_blocks(sbi, MAP_NODE);
	uint64_t free_segs = sbi->sm.nr_free;

	if (f2fs_lfs_mode(sbi))
		return false;
	if (free_segs <= DIV_ROUND_UP(dirty_nodes, bps) + 2 * rsvd)
		return true;
	return free_segs * bps < folio_dirty_blocks(sbi, MAP_DATA) + dirty_nodes;
}

bool f2fs_need_ssr(struct f2fs_sb_info *sbi)
{
	bool need;

	pthread_mutex_lock(&sbi->sm.lock);
	need = need_ssr_locked(sbi);
	pthread_mutex_unlock(&sbi->sm.lock);
	return need;
}

/*
 * The kernel's get_ssr_segment over SSR get_victim: among used segments of
 * a log type that still have a free slot, the one with the fewest
 * checkpoint-valid blocks (greedy). The log's own type first, then the
 * other logs of its kind: warm and cold search down from cold, hot up.
 */
static bool get_ssr_segment(struct f2fs_sb_info *sbi, int type, unsigned int *out)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	unsigned int best[NR_CURSEG_TYPE], cost[NR_CURSEG_TYPE];
	int base = type <= CURSEG_COLD_DATA ? CURSEG_HOT_DATA : CURSEG_HOT_NODE;
	bool down = type - base >= 1;
	int i = down ? base + 2 : base;

	for (int t = 0; t < NR_CURSEG_TYPE; t++) {
		best[t] = NULL_SEGNO;
		cost[t] = sbi->blocks_per_seg;	/* a full segment has no slot */
	}
	for (unsigned int s = 0; s < sbi->main_segs; s++) {
		struct seg_entry *se = &sm->sentries[s];

		if (!se->valid_blocks || se->type >= NR_CURSEG_TYPE ||
		    se->ckpt_valid_blocks >= cost[se->type] || s == sm->gc_victim ||
		    is_curseg(sm, s))
			continue;
		cost[se->type] = se->ckpt_valid_blocks;
		best[se->type] = s;
	}
	if (best[type] != NULL_SEGNO) {
		*out = best[type];
		return true;
	}
	for (int cnt = 3; cnt-- > 0; down ? i-- : i++) {
		if (i != type && best[i] != NULL_SEGNO) {
			*out = best[i];
			return true;
		}
	}
	return false;
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

static void reset_sum_footer(struct f2fs_summary_block *sum, int type)
{
	memset(&sum->footer, 0, sizeof(sum->footer));
	sum->footer.entry_type = type <= CURSEG_COLD_DATA ? SUM_TYPE_DATA : SUM_TYPE_NODE;
}

/*
 * SSR: the log continues in a used segment (the kernel's change_curseg).
 * Its summary comes from the SSA, so the entries of the blocks still valid
 * there survive; the journals of the data summaries stay where they are.
 */
static int change_curseg(struct f2fs_sb_info *sbi, int type, unsigned int segno)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	struct curseg_info *cs = &sm->curseg[type];
	struct f2fs_summary_block *sum = sm->sum_blk[type];
	struct f2fs_summary_block *blk = malloc(F2FS_BLKSIZE);
	int ret;

	if (!blk)
		return -ENOMEM;
	ret = f2fs_dev_read_blocks(&sbi->dev, blk, sbi->ssa_blkaddr + segno, 1);
	if (ret) {
		free(blk);
		return f2fs_error(sbi, EIO, "SSA block %u: read failed", sbi->ssa_blkaddr + segno);
	}
	memcpy(sum->entries, blk->entries, sizeof(sum->entries));
	free(blk);
	reset_sum_footer(sum, type);
	slots_unaccount(sbi, segno);
	cs->segno = segno;
	cs->alloc_type = ALLOC_SSR;
	cs->next_blkoff = next_free_blkoff(sbi, segno, 0);
	sm->sentries[segno].type = type;
	bit_set(sm->dirty_sit, segno);
	atomic_fetch_add(&sbi->ctr->ssr_segments, 1);
	return 0;
}

/* LFS: the log moves to a clean segment. */
static void open_clean_segment(struct f2fs_sb_info *sbi, int type, unsigned int segno)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	struct curseg_info *cs = &sm->curseg[type];
	struct f2fs_summary_block *sum = sm->sum_blk[type];

	memset(sum->entries, 0, sizeof(sum->entries));
	reset_sum_footer(sum, type);
	cs->segno = segno;
	cs->next_blkoff = 0;
	cs->alloc_type = ALLOC_LFS;
	if (sm->nr_free)
		sm->nr_free--;
	sm->sentries[segno].type = type;
	bit_set(sm->dirty_sit, segno);
	atomic_fetch_add(&sbi->ctr->lfs_segments, 1);
}

/*
 * The segment a log leaves becomes an ordinary one: an SSR candidate if it
 * holds valid blocks, else prefree (its blocks back the checkpoint) or free.
 */
static void leave_curseg(struct f2fs_sb_info *sbi, unsigned int segno)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	struct seg_entry *se = &sm->sentries[segno];

	if (is_curseg(sm, segno))
		return;
	if (!se->valid_blocks) {
		if (se->ckpt_valid_blocks)
			bit_set(sm->prefree, segno);
		else if (!bit_test(sm->prefree, segno))
			sm->nr_free++;
	}
	slots_account(sbi, segno);
}

/*
 * The current segment of a type is full (or must move): file its summary
 * and open the next one, as the kernel's allocate_segment_by_default does:
 * a used segment by SSR when free segments run low, else a clean one, and
 * SSR after all when no clean segment is left. force_lfs (after recovery)
 * asks for a clean one whenever there is one.
 */
static int new_curseg(struct f2fs_sb_info *sbi, int type, bool force_lfs)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	struct curseg_info *cs = &sm->curseg[type];
	unsigned int old = cs->segno, segno;
	int ret;

	ret = write_ssa_block(sbi, old, sm->sum_blk[type]);
	if (ret)
		return ret;
	if (!force_lfs && need_ssr_locked(sbi) && get_ssr_segment(sbi, type, &segno)) {
		ret = change_curseg(sbi, type, segno);
	} else {
		ret = sbi->zoned ? find_free_zoned(sbi, type, force_lfs, &segno) :
		      find_free_segment(sbi, &segno);
		if (!ret)
			open_clean_segment(sbi, type, segno);
		else if (ret == -EINPROGRESS)
			return ret;	/* clean ones are due back: no need to fill holes */
		else if (!f2fs_lfs_mode(sbi) && get_ssr_segment(sbi, type, &segno))
			ret = change_curseg(sbi, type, segno);
		else
			return -ENOSPC;
	}
	if (!ret)
		leave_curseg(sbi, old);
	if (!ret && sbi->zoned)
		sm->nr_free = f2fs_usable_free_segments(sbi);
	return ret;
}

/*
 * new_curseg, but when only segments whose discard is in flight are free,
 * wait for the discard to end. The wait drops sm->lock: another thread may
 * move the log meanwhile, and then this one has nothing left to do.
 */
static int new_curseg_wait(struct f2fs_sb_info *sbi, int type, bool force_lfs)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	unsigned int old = sm->curseg[type].segno;
	int ret;

	while ((ret = new_curseg(sbi, type, force_lfs)) == -EINPROGRESS) {
		atomic_fetch_add(&sbi->ctr->discard_waits, 1);
		pthread_cond_wait(&sm->discard_done, &sm->lock);
		if (sm->curseg[type].segno != old)
			return 0;
	}
	return ret;
}

int f2fs_allocate_block(struct f2fs_sb_info *sbi, int type, const struct f2fs_summary *sum,
			block_t *out)
{
	return f2fs_allocate_block_next(sbi, type, sum, out, NULL);
}

/*
 * Like the kernel, open the next segment as soon as one fills, so that the
 * address of the next free block (what node footers chain through for
 * roll-forward recovery) is known when a block is handed out. In an SSR
 * segment the next block is the next free slot.
 */
int f2fs_allocate_block_next(struct f2fs_sb_info *sbi, int type, const struct f2fs_summary *sum,
			     block_t *out, block_t *next)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	struct curseg_info *cs = &sm->curseg[type];
	struct seg_entry *se;
	int ret = 0;

	pthread_mutex_lock(&sm->lock);
	while (cs->next_blkoff >= f2fs_usable_blks_in_seg(sbi, cs->segno)) {
		ret = new_curseg_wait(sbi, type, false);
		if (ret)
			goto out;
	}
	se = &sm->sentries[cs->segno];
	*out = seg_start(sbi, cs->segno) + cs->next_blkoff;
	sm->sum_blk[type]->entries[cs->next_blkoff] = *sum;
	f2fs_set_bit_msb(cs->next_blkoff, se->valid_map);
	se->valid_blocks++;
	/* a block written since the checkpoint is not reused before the next one */
	if (!f2fs_test_bit(cs->next_blkoff, se->ckpt_valid_map)) {
		f2fs_set_bit_msb(cs->next_blkoff, se->ckpt_valid_map);
		se->ckpt_valid_blocks++;
	}
	se->type = type;
	se->mtime = seg_mtime(sm);
	bit_set(sm->dirty_sit, cs->segno);
	sm->valid_blocks++;
	if (cs->alloc_type == ALLOC_SSR) {
		atomic_fetch_add(&sbi->ctr->ssr_blocks, 1);
		cs->next_blkoff = next_free_blkoff(sbi, cs->segno, cs->next_blkoff + 1);
	} else {
		cs->next_blkoff++;
	}
	if (cs->next_blkoff >= f2fs_usable_blks_in_seg(sbi, cs->segno))
		new_curseg(sbi, type, false);	/* on failure the next allocation tries again */
	if (next)
		*next = cs->next_blkoff < f2fs_usable_blks_in_seg(sbi, cs->segno) ?
			seg_start(sbi, cs->segno) + cs->next_blkoff : 0;
out:
	pthread_mutex_unlock(&sm->lock);
	return ret;
}

/*
 * A checkpoint must not record a full current segment (fsck and the
 * kernel's sanity checks reject next_blkoff == blocks_per_seg): move any
 * log whose earlier move failed, or fail the checkpoint.
 */
int f2fs_fix_full_cursegs(struct f2fs_sb_info *sbi)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	int ret = 0;

	pthread_mutex_lock(&sm->lock);
	for (int i = 0; i < NR_CURSEG_TYPE && !ret; i++)
		while (!ret && sm->curseg[i].next_blkoff >=
			       f2fs_usable_blks_in_seg(sbi, sm->curseg[i].segno))
			ret = new_curseg_wait(sbi, i, false);
	pthread_mutex_unlock(&sm->lock);
	if (ret)
		return f2fs_error(sbi, -ret, "checkpoint: no segment left for a full log");
	return 0;
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
		slots_unaccount(sbi, segno);
		f2fs_clear_bit_msb(off, se->valid_map);
		se->valid_blocks--;
		sm->valid_blocks--;
		bit_set(sm->dirty_sit, segno);
		if (!se->valid_blocks && !is_curseg(sm, segno))
			bit_set(sm->prefree, segno);
		slots_account(sbi, segno);
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
 * As the kernel's f2fs_inplace_write_data checks: the old block is valid
 * and lies in a data segment. Anything else would overwrite a block that
 * is not this file's (or a node), so the caller writes out of place.
 */
bool f2fs_ipu_target_ok(struct f2fs_sb_info *sbi, block_t blk)
{
	unsigned int off, segno;
	bool ok;

	if (!f2fs_valid_main_blkaddr(sbi, blk))
		return false;
	segno = f2fs_segno(sbi, blk);
	off = (blk - sbi->main_blkaddr) & (sbi->blocks_per_seg - 1);
	pthread_mutex_lock(&sbi->sm.lock);
	ok = f2fs_test_bit(off, sbi->sm.sentries[segno].valid_map) &&
	     sbi->sm.sentries[segno].type <= CURSEG_COLD_DATA;
	pthread_mutex_unlock(&sbi->sm.lock);
	return ok;
}

unsigned int f2fs_utilization(struct f2fs_sb_info *sbi)
{
	uint64_t valid, user = sbi->sm.user_blocks;

	pthread_mutex_lock(&sbi->sm.lock);
	valid = sbi->sm.valid_blocks;
	pthread_mutex_unlock(&sbi->sm.lock);
	return user ? valid * 100 / user : 100;
}

void f2fs_log_room(struct f2fs_sb_info *sbi, struct f2fs_log_room *room)
{
	struct f2fs_sm_info *sm = &sbi->sm;

	pthread_mutex_lock(&sm->lock);
	room->free_blocks = (uint64_t)sm->nr_free * sbi->blocks_per_seg;
	/*
	 * The segment a zone's capacity ends in counts as a free one, but holds
	 * only part of one: scale down to the capacity (conservative where
	 * conventional sections are free too).
	 */
	if (sbi->zone_cap_short) {
		uint64_t bps = sbi->blocks_per_seg;
		uint64_t counted = DIV_ROUND_UP(sbi->zone_cap_blocks, bps) * bps;

		room->free_blocks = room->free_blocks * sbi->zone_cap_blocks / counted;
	}
	room->data_slots = f2fs_lfs_mode(sbi) ? 0 : sm->ssr_slots[0];
	room->node_slots = f2fs_lfs_mode(sbi) ? 0 : sm->ssr_slots[1];
	pthread_mutex_unlock(&sm->lock);
}

/*
 * After a checkpoint, segments emptied since the previous one are free for
 * good and can be reused. Their discard waits: as the kernel's discard
 * thread, it goes out in idle time or at unmount, and a segment written
 * again before then needs none. Punching a hole into an image file only for
 * the next write to fill it again took 12 % of the daemon's time under an
 * O_SYNC overwrite load (perf, fallocate in shmem_undo_range).
 */
void f2fs_clear_prefree(struct f2fs_sb_info *sbi)
{
	struct f2fs_sm_info *sm = &sbi->sm;

	pthread_mutex_lock(&sbi->sm.lock);
	for (unsigned int s = 0; s < sbi->main_segs; s++)
		if (bit_test(sm->prefree, s) && !sm->sentries[s].valid_blocks && !is_curseg(sm, s))
			bit_set(sm->discard_pending, s);
	memset(sbi->sm.prefree, 0, DIV_ROUND_UP(sbi->main_segs, 8));
	sbi->sm.nr_free = f2fs_usable_free_segments(sbi);
	check_ssr_slots(sbi);
	pthread_mutex_unlock(&sbi->sm.lock);
}

static bool discardable(struct f2fs_sm_info *sm, unsigned int s)
{
	return bit_test(sm->discard_pending, s) && !sm->sentries[s].valid_blocks &&
	       !is_curseg(sm, s) && !bit_test(sm->prefree, s);
}

#define DISCARD_BATCH	64	/* segments per hold of sm->lock: 128 MiB of 2 MiB ones */

/*
 * Choose up to max segments to discard, from *from on, and mark them in
 * flight. A pending segment that is in use again needs no discard.
 */
static unsigned int pick_discards(struct f2fs_sb_info *sbi, unsigned int *from,
				  unsigned int *batch, unsigned int max)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	unsigned int s, n = 0;

	pthread_mutex_lock(&sm->lock);
	for (s = *from; s < sbi->main_segs && n < max; s++) {
		bool wanted = discardable(sm, s);

		bit_clear(sm->discard_pending, s);
		if (wanted) {
			bit_set(sm->discard_inflight, s);
			batch[n++] = s;
		}
	}
	sm->nr_discarding += n;
	pthread_mutex_unlock(&sm->lock);
	*from = s;
	return n;
}

/* Runs of neighbours (the batch is in segment order) go as one request. */
static void send_discards(struct f2fs_sb_info *sbi, const unsigned int *batch, unsigned int n)
{
	for (unsigned int i = 0, e; i < n; i = e) {
		for (e = i + 1; e < n && batch[e] == batch[e - 1] + 1; e++)
			;
		f2fs_dev_discard(&sbi->dev, seg_start(sbi, batch[i]),
				 (uint64_t)(e - i) * sbi->blocks_per_seg);
	}
}

static void end_discards(struct f2fs_sb_info *sbi, const unsigned int *batch, unsigned int n)
{
	struct f2fs_sm_info *sm = &sbi->sm;

	pthread_mutex_lock(&sm->lock);
	for (unsigned int i = 0; i < n; i++)
		bit_clear(sm->discard_inflight, batch[i]);
	sm->nr_discarding -= n;
	pthread_cond_broadcast(&sm->discard_done);
	pthread_mutex_unlock(&sm->lock);
}

/*
 * The discard requests go out without sm->lock, so writers keep allocating
 * while a slow PUNCH_HOLE or BLKDISCARD runs. The danger is a segment
 * chosen here that is allocated and written before its discard lands: the
 * discard would destroy the new data, and no check after the request can
 * undo that. So the exclusion comes first: under the lock a batch moves
 * from discard_pending to discard_inflight, and find_free_segment skips
 * in-flight segments until the batch ends (an allocation that finds only
 * those waits for it). That covers every way a free segment gets blocks:
 * SSR and GC victims are segments with valid blocks, never free ones, and
 * recovery's f2fs_claim_block runs before any discard is pending. Each
 * caller clears only its own batch, so two callers cannot free each
 * other's segments early.
 */
unsigned int f2fs_issue_discards(struct f2fs_sb_info *sbi, unsigned int max_segs)
{
	unsigned int batch[DISCARD_BATCH], from = 0, done = 0;

	while (from < sbi->main_segs && (!max_segs || done < max_segs)) {
		unsigned int want = max_segs ? MIN(DISCARD_BATCH, max_segs - done) : DISCARD_BATCH;
		unsigned int n = pick_discards(sbi, &from, batch, want);

		if (!n)
			break;
		send_discards(sbi, batch, n);
		end_discards(sbi, batch, n);
		done += n;
	}
	return done;
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

/*
 * What the SIT now says is what the checkpoint being written holds, as the
 * kernel's seg_info_to_raw_sit copies cur_valid_map to ckpt_valid_map: the
 * blocks freed since the last one become reusable by SSR. Nothing allocates
 * between here and the checkpoint block (the caller holds the checkpoint
 * lock), and a checkpoint that fails stops all writes.
 */
static void sync_ckpt_maps(struct f2fs_sb_info *sbi)
{
	struct f2fs_sm_info *sm = &sbi->sm;

	for (unsigned int s = 0; s < sbi->main_segs; s++) {
		struct seg_entry *se = &sm->sentries[s];

		if (!bit_test(sm->dirty_sit, s))
			continue;
		slots_unaccount(sbi, s);
		memcpy(se->ckpt_valid_map, se->valid_map, SIT_VBLOCK_MAP_SIZE);
		se->ckpt_valid_blocks = se->valid_blocks;
		slots_account(sbi, s);
	}
	memset(sm->dirty_sit, 0, DIV_ROUND_UP(sbi->main_segs, 8));
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
		sync_ckpt_maps(sbi);
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
	sync_ckpt_maps(sbi);
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
	slots_unaccount(sbi, segno);
	if (!se->valid_blocks && !is_curseg(sm, segno))
		se->type = CURSEG_WARM_DATA;	/* a segment the crashed session opened */
	f2fs_set_bit_msb(off, se->valid_map);
	se->valid_blocks++;
	if (!f2fs_test_bit(off, se->ckpt_valid_map)) {
		f2fs_set_bit_msb(off, se->ckpt_valid_map);
		se->ckpt_valid_blocks++;
	}
	slots_account(sbi, segno);
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
		ret = new_curseg_wait(sbi, i, true);
	sm->nr_free = f2fs_usable_free_segments(sbi);
	pthread_mutex_unlock(&sm->lock);
	return ret;
}

int f2fs_move_curseg(struct f2fs_sb_info *sbi, int type)
{
	struct f2fs_sm_info *sm = &sbi->sm;
	int ret;

	pthread_mutex_lock(&sm->lock);
	ret = new_curseg_wait(sbi, type, true);
	sm->nr_free = f2fs_usable_free_segments(sbi);
	pthread_mutex_unlock(&sm->lock);
	return ret;
}
