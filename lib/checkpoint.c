// SPDX-License-Identifier: GPL-2.0
/*
 * Checkpoints: choosing the newest valid pack of the two (CRC and matching
 * versions at both ends), the payload that carries large version bitmaps, the
 * orphan inode blocks, and the check for fsync'd node blocks written after the
 * checkpoint, which mean the image needs roll-forward recovery.
 */
#include <stdlib.h>
#include <time.h>

#include "f2fs.h"
#include "quota.h"

/// Validating a pack ///

static int read_cp_block(struct f2fs_sb_info *sbi, block_t addr, uint8_t *buf, uint64_t *ver)
{
	struct f2fs_checkpoint *cp = (void *)buf;
	uint32_t off;
	int ret;

	ret = f2fs_dev_read_blocks(&sbi->dev, buf, addr, 1);
	if (ret)
		return f2fs_error(sbi, EIO, "checkpoint (block %u): read failed: %s", addr,
				  strerror(-ret));
	off = le32(cp->checksum_offset);
	if (off < CP_MIN_CHKSUM_OFFSET || off > CP_CHKSUM_OFFSET)
		return f2fs_error(sbi, EFSCORRUPTED,
				  "checkpoint (block %u): bad checksum offset %u", addr, off);
	if (f2fs_cp_chksum(cp) != le32(*(uint32_t *)(buf + off)))
		return f2fs_error(sbi, EFSCORRUPTED, "checkpoint (block %u): checksum mismatch",
				  addr);
	*ver = le64(cp->checkpoint_ver);
	return 0;
}

/* A pack is valid when its first and last blocks both check out and agree. */
static int validate_cp_pack(struct f2fs_sb_info *sbi, block_t addr, uint8_t *buf,
			    uint64_t *ver)
{
	struct f2fs_checkpoint *cp = (void *)buf;
	uint8_t *tail = malloc(F2FS_BLKSIZE);
	uint64_t v1, v2;
	uint32_t total;
	int ret;

	if (!tail)
		return -ENOMEM;
	ret = read_cp_block(sbi, addr, buf, &v1);
	if (ret)
		goto out;
	total = le32(cp->cp_pack_total_block_count);
	if (total < 2 || total > sbi->blocks_per_seg ||
	    total <= le32(sbi->raw_super.cp_payload)) {
		ret = f2fs_error(sbi, EFSCORRUPTED,
				 "checkpoint (block %u): bad pack size %u blocks", addr, total);
		goto out;
	}
	ret = read_cp_block(sbi, addr + total - 1, tail, &v2);
	if (ret)
		goto out;
	if (v1 != v2)
		ret = f2fs_error(sbi, EFSCORRUPTED,
				 "checkpoint (block %u): version %llu at the start but %llu at "
				 "the end (block %u): torn pack", addr, (unsigned long long)v1,
				 (unsigned long long)v2, addr + total - 1);
	*ver = v1;
out:
	free(tail);
	return ret;
}

/* The curseg and count fields must describe the main area we have. */
static int sanity_check_ckpt(struct f2fs_sb_info *sbi, const struct f2fs_checkpoint *cp)
{
	uint32_t sit_bm = le32(cp->sit_ver_bitmap_bytesize);
	uint32_t nat_bm = le32(cp->nat_ver_bitmap_bytesize);
	uint32_t sit_segs = le32(sbi->raw_super.segment_count_sit);
	uint32_t nat_segs = le32(sbi->raw_super.segment_count_nat);

	for (int i = 0; i < NR_CURSEG_NODE_TYPE; i++) {
		if (le32(cp->cur_node_segno[i]) >= sbi->main_segs ||
		    le16(cp->cur_node_blkoff[i]) > sbi->blocks_per_seg)
			goto bad;
	}
	for (int i = 0; i < NR_CURSEG_DATA_TYPE; i++) {
		if (le32(cp->cur_data_segno[i]) >= sbi->main_segs ||
		    le16(cp->cur_data_blkoff[i]) > sbi->blocks_per_seg)
			goto bad;
	}
	if (sit_bm != ((sit_segs / 2) << sbi->log_blocks_per_seg) / 8 ||
	    nat_bm != ((nat_segs / 2) << sbi->log_blocks_per_seg) / 8)
		return f2fs_error(sbi, EFSCORRUPTED,
				  "checkpoint (block %u): wrong SIT/NAT version bitmap sizes",
				  sbi->cur_cp_addr);
	if (le64(cp->valid_block_count) > le64(cp->user_block_count) ||
	    le64(cp->user_block_count) > sbi->block_count ||
	    le32(cp->cp_pack_start_sum) >= le32(cp->cp_pack_total_block_count))
		goto bad;
	return 0;
bad:
	return f2fs_error(sbi, EFSCORRUPTED,
			  "checkpoint (block %u): current segment or block counts out of range",
			  sbi->cur_cp_addr);
}

/* Newer of two versions, as the kernel compares them. */
static bool ver_after(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) > 0;
}

int f2fs_get_valid_checkpoint(struct f2fs_sb_info *sbi)
{
	block_t cp_start = le32(sbi->raw_super.cp_blkaddr);
	uint32_t payload = le32(sbi->raw_super.cp_payload);
	uint8_t *pack[2] = { malloc(F2FS_BLKSIZE), malloc(F2FS_BLKSIZE) };
	uint64_t ver[2] = { 0, 0 };
	int ok[2], best, ret;

	if (!pack[0] || !pack[1]) {
		ret = -ENOMEM;
		goto out;
	}
	int err[2];

	for (int i = 0; i < 2; i++) {
		err[i] = validate_cp_pack(sbi, cp_start + i * sbi->blocks_per_seg, pack[i],
					  &ver[i]);
		ok[i] = !err[i];
		/*
		 * An unreadable pack is an I/O error, not an invalid pack: falling
		 * back to the other (older) one would roll the filesystem back.
		 */
		if (err[i] == -EIO) {
			ret = -EIO;
			goto out;
		}
	}
	if (!ok[0] && !ok[1]) {
		ret = f2fs_error(sbi, EFSCORRUPTED,
				 "no valid checkpoint: both packs (blocks %u and %u) are invalid",
				 cp_start, cp_start + sbi->blocks_per_seg);
		goto out;
	}
	if (ok[0] && ok[1])
		best = ver_after(ver[1], ver[0]) ? 1 : 0;
	else
		best = ok[0] ? 0 : 1;
	if (!ok[0] || !ok[1])
		f2fs_msg(sbi, "checkpoint pack %d is invalid; using pack %d (version %llu)",
			 2 - best, best + 1, (unsigned long long)ver[best]);
	sbi->cur_cp_pack = best + 1;
	sbi->cur_cp_addr = cp_start + best * sbi->blocks_per_seg;
	sbi->cp_ver = ver[best];
	sbi->ckpt = malloc((size_t)(1 + payload) * F2FS_BLKSIZE);
	if (!sbi->ckpt) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(sbi->ckpt, pack[best], F2FS_BLKSIZE);
	sbi->cp_crc = le32(*(uint32_t *)((uint8_t *)sbi->ckpt +
					  le32(sbi->ckpt->checksum_offset)));
	if (payload) {
		ret = f2fs_dev_read_blocks(&sbi->dev, (uint8_t *)sbi->ckpt + F2FS_BLKSIZE,
					   sbi->cur_cp_addr + 1, payload);
		if (ret) {
			ret = f2fs_error(sbi, EIO, "checkpoint payload (block %u): read failed",
					 sbi->cur_cp_addr + 1);
			goto out;
		}
	}
	ret = sanity_check_ckpt(sbi, sbi->ckpt);
out:
	free(pack[0]);
	free(pack[1]);
	return ret;
}

/// Version bitmaps ///

static uint8_t *cp_bitmap(struct f2fs_sb_info *sbi, bool nat)
{
	struct f2fs_checkpoint *cp = sbi->ckpt;
	uint8_t *base = cp->sit_nat_version_bitmap;

	/* with a large NAT bitmap, both live after a leading checksum word */
	if (le32(cp->ckpt_flags) & CP_LARGE_NAT_BITMAP_FLAG)
		return base + sizeof(uint32_t) + (nat ? 0 : le32(cp->nat_ver_bitmap_bytesize));
	if (le32(sbi->raw_super.cp_payload)) {
		/* the SIT bitmap moved to the payload blocks */
		return nat ? base : (uint8_t *)cp + F2FS_BLKSIZE;
	}
	return base + (nat ? le32(cp->sit_ver_bitmap_bytesize) : 0);
}

uint8_t *f2fs_cp_nat_bitmap(struct f2fs_sb_info *sbi)
{
	return cp_bitmap(sbi, true);
}

uint8_t *f2fs_cp_sit_bitmap(struct f2fs_sb_info *sbi)
{
	return cp_bitmap(sbi, false);
}

/// Orphans ///

int f2fs_read_orphans(struct f2fs_sb_info *sbi)
{
	struct f2fs_checkpoint *cp = sbi->ckpt;
	uint32_t payload = le32(sbi->raw_super.cp_payload);
	uint32_t start = 1 + payload;
	uint32_t nblocks;
	struct f2fs_orphan_block *ob;
	int ret = 0;

	if (!(le32(cp->ckpt_flags) & CP_ORPHAN_PRESENT_FLAG))
		return 0;
	if (le32(cp->cp_pack_start_sum) < start)
		return f2fs_error(sbi, EFSCORRUPTED,
				  "checkpoint (block %u): orphan area overlaps the payload",
				  sbi->cur_cp_addr);
	nblocks = le32(cp->cp_pack_start_sum) - start;
	ob = malloc(F2FS_BLKSIZE);
	if (!ob)
		return -ENOMEM;
	for (uint32_t i = 0; i < nblocks; i++) {
		block_t addr = sbi->cur_cp_addr + start + i;
		uint32_t n;

		ret = f2fs_dev_read_blocks(&sbi->dev, ob, addr, 1);
		if (ret) {
			ret = f2fs_error(sbi, EIO, "orphan block %u: read failed", addr);
			break;
		}
		n = le32(ob->entry_count);
		if (n > F2FS_ORPHANS_PER_BLOCK) {
			ret = f2fs_error(sbi, EFSCORRUPTED, "orphan block %u: %u entries", addr, n);
			break;
		}
		nid_t *grown = realloc(sbi->orphans, sizeof(nid_t) * (sbi->nr_orphans + n));

		if (!grown) {
			ret = -ENOMEM;
			break;
		}
		sbi->orphans = grown;
		for (uint32_t j = 0; j < n; j++)
			sbi->orphans[sbi->nr_orphans++] = le32(ob->ino[j]);
	}
	free(ob);
	return ret;
}

/// Roll-forward detection ///

/*
 * A node block belongs to the chain written after the checkpoint when its
 * footer carries the checkpoint's version (and, under CRC recovery, the
 * checkpoint CRC in the upper half), as the kernel's recovery decides.
 */
static bool is_recoverable_dnode(struct f2fs_sb_info *sbi, const struct f2fs_node *node)
{
	uint32_t flags = le32(sbi->ckpt->ckpt_flags);
	uint64_t cp_ver = sbi->cp_ver;
	uint64_t node_ver = le64(node->footer.cp_ver);

	if (flags & CP_NOCRC_RECOVERY_FLAG)
		return (uint32_t)cp_ver == (uint32_t)node_ver;
	if (flags & CP_CRC_RECOVERY_FLAG)
		cp_ver |= (uint64_t)sbi->cp_crc << 32;
	return cp_ver == node_ver;
}

int f2fs_check_recovery(struct f2fs_sb_info *sbi)
{
	struct curseg_info *cs = &sbi->sm.curseg[CURSEG_WARM_NODE];
	block_t blk = sbi->main_blkaddr + cs->segno * sbi->blocks_per_seg + cs->next_blkoff;
	uint64_t limit = (uint64_t)sbi->main_segs * sbi->blocks_per_seg;
	struct f2fs_node *node = malloc(F2FS_BLKSIZE);

	if (!node)
		return -ENOMEM;
	/*
	 * Even after a clean unmount's checkpoint, a later session may have
	 * fsync'd and crashed without checkpointing: always look.
	 */
	sbi->need_recovery = false;
	sbi->nr_fsync_dnodes = 0;
	/*
	 * Left by checkpoint=disable: the kernel skips roll-forward then, and
	 * everything written after that checkpoint is gone (docs/decisions.md).
	 */
	if (le32(sbi->ckpt->ckpt_flags) & CP_DISABLED_FLAG) {
		free(node);
		return 0;
	}
	for (uint64_t n = 0; n < limit && f2fs_valid_main_blkaddr(sbi, blk); n++) {
		if (f2fs_dev_read_blocks(&sbi->dev, node, blk, 1))
			break;
		if (!is_recoverable_dnode(sbi, node))
			break;
		if (le32(node->footer.flag) & (1u << FSYNC_BIT_SHIFT))
			sbi->nr_fsync_dnodes++;
		blk = le32(node->footer.next_blkaddr);
	}
	sbi->need_recovery = sbi->nr_fsync_dnodes > 0;
	free(node);
	return 0;
}

/// Writing a checkpoint ///

uint64_t f2fs_node_cp_ver(const struct f2fs_sb_info *sbi)
{
	uint64_t ver = sbi->cp_ver;

	if (le32(sbi->ckpt->ckpt_flags) & CP_CRC_RECOVERY_FLAG)
		ver |= (uint64_t)sbi->cp_crc << 32;
	return ver;
}

static int meta_block_write(struct f2fs_sb_info *sbi, block_t addr, const void *buf, bool durable)
{
	struct iovec v = { (void *)buf, F2FS_BLKSIZE };
	struct folio *f = folio_lookup(sbi, MAP_META, 0, addr);
	int ret;

	if (f) {
		memcpy(f->data, buf, F2FS_BLKSIZE);
		folio_put(sbi, f);
	}
	ret = durable ? f2fs_dev_write_durable(&sbi->dev, &v, 1, addr) :
			f2fs_dev_writev_blocks(&sbi->dev, &v, 1, addr);
	if (ret)
		return f2fs_error(sbi, EIO, "metadata block %u: write failed: %s", addr,
				  strerror(-ret));
	return 0;
}

int f2fs_write_meta_block(struct f2fs_sb_info *sbi, block_t addr, const void *buf)
{
	return meta_block_write(sbi, addr, buf, false);
}

static int write_orphan_blocks(struct f2fs_sb_info *sbi, block_t start, unsigned int nblocks)
{
	struct f2fs_orphan_block *ob = malloc(F2FS_BLKSIZE);
	unsigned int done = 0;
	int ret = 0;

	if (!ob)
		return -ENOMEM;
	for (unsigned int b = 0; b < nblocks && !ret; b++) {
		unsigned int n = MIN(sbi->nr_orphans - done, (unsigned int)F2FS_ORPHANS_PER_BLOCK);

		memset(ob, 0, F2FS_BLKSIZE);
		for (unsigned int i = 0; i < n; i++)
			ob->ino[i] = sbi->orphans[done + i];
		ob->blk_addr = b + 1;
		ob->blk_count = nblocks;
		ob->entry_count = n;
		ob->check_sum = f2fs_crc32(F2FS_SUPER_MAGIC, ob, offsetof(struct f2fs_orphan_block,
									   check_sum));
		done += n;
		ret = f2fs_write_meta_block(sbi, start + b, ob);
	}
	free(ob);
	return ret;
}

static void fill_checkpoint(struct f2fs_sb_info *sbi, bool umount, unsigned int orphan_blocks)
{
	struct f2fs_checkpoint *cp = sbi->ckpt;
	struct f2fs_sm_info *sm = &sbi->sm;
	uint32_t payload = le32(sbi->raw_super.cp_payload);
	uint32_t flags = le32(cp->ckpt_flags);
	uint64_t now = time(NULL);

	cp->checkpoint_ver = sbi->cp_ver + 1;
	cp->valid_block_count = sm->valid_blocks;
	cp->free_segment_count = f2fs_cp_free_segments(sbi);
	for (int i = 0; i < NR_CURSEG_DATA_TYPE; i++) {
		cp->cur_data_segno[i] = sm->curseg[i].segno;
		cp->cur_data_blkoff[i] = sm->curseg[i].next_blkoff;
		cp->alloc_type[i] = sm->curseg[i].alloc_type;
	}
	for (int i = 0; i < NR_CURSEG_NODE_TYPE; i++) {
		struct curseg_info *cs = &sm->curseg[CURSEG_HOT_NODE + i];

		cp->cur_node_segno[i] = cs->segno;
		cp->cur_node_blkoff[i] = cs->next_blkoff;
		cp->alloc_type[CURSEG_HOT_NODE + i] = cs->alloc_type;
	}
	/* normal summaries, no nat_bits: layouts every reader accepts */
	flags &= ~(CP_UMOUNT_FLAG | CP_COMPACT_SUM_FLAG | CP_ORPHAN_PRESENT_FLAG |
		   CP_NAT_BITS_FLAG | CP_NOCRC_RECOVERY_FLAG | CP_FASTBOOT_FLAG | CP_TRIMMED_FLAG);
	flags |= CP_CRC_RECOVERY_FLAG;
	/* uf2fs never disables checkpoints: its first one enables them again */
	flags &= ~(CP_DISABLED_FLAG | CP_DISABLED_QUICK_FLAG);
	if (umount)
		flags |= CP_UMOUNT_FLAG;
	if (sbi->nr_orphans)
		flags |= CP_ORPHAN_PRESENT_FLAG;
	/* as the kernel's update_ckpt_flags: quota files that wait for a repair */
	flags &= ~CP_QUOTA_NEED_FSCK_FLAG;
	if (f2fs_quota_need_fsck(sbi))
		flags |= CP_QUOTA_NEED_FSCK_FLAG;
	cp->ckpt_flags = flags;
	cp->cp_pack_start_sum = 1 + payload + orphan_blocks;
	cp->cp_pack_total_block_count = 1 + payload + orphan_blocks + NR_CURSEG_DATA_TYPE +
					(umount ? NR_CURSEG_NODE_TYPE : 0) + 1;
	cp->valid_node_count = sbi->nm.valid_nodes;
	cp->valid_inode_count = sbi->nm.valid_inodes;
	cp->next_free_nid = sbi->nm.scan_nid;
	cp->elapsed_time = sm->elapsed_base + (now > sm->mount_time ? now - sm->mount_time : 0);
	*(uint32_t *)((uint8_t *)cp + le32(cp->checksum_offset)) = f2fs_cp_chksum(cp);
}

/*
 * Write the pack the current checkpoint does not occupy: the checkpoint
 * block, payload, orphans and summaries, then a flush, then the closing copy
 * of the checkpoint block, durable when written (FUA, or a write and a
 * flush). Until that last block lands, the old pack is the valid one, so a
 * crash anywhere leaves a consistent image.
 */
static int write_cp_pack(struct f2fs_sb_info *sbi, bool umount, unsigned int orphan_blocks)
{
	struct f2fs_checkpoint *cp = sbi->ckpt;
	uint32_t payload = le32(sbi->raw_super.cp_payload);
	block_t start = le32(sbi->raw_super.cp_blkaddr) +
			(sbi->cur_cp_pack == 1 ? sbi->blocks_per_seg : 0);
	block_t blk = start;
	int ret;

	ret = f2fs_write_meta_block(sbi, blk++, cp);
	for (uint32_t i = 0; i < payload && !ret; i++)
		ret = f2fs_write_meta_block(sbi, blk++, (uint8_t *)cp + (size_t)(i + 1) * F2FS_BLKSIZE);
	if (!ret && orphan_blocks)
		ret = write_orphan_blocks(sbi, blk, orphan_blocks);
	blk += orphan_blocks;
	for (int i = 0; i < NR_CURSEG_DATA_TYPE && !ret; i++)
		ret = f2fs_write_meta_block(sbi, blk++, sbi->sm.sum_blk[i]);
	for (int i = CURSEG_HOT_NODE; umount && i < NR_CURSEG_TYPE && !ret; i++)
		ret = f2fs_write_meta_block(sbi, blk++, sbi->sm.sum_blk[i]);
	if (!ret)
		ret = f2fs_dev_flush(&sbi->dev);
	/* the kernel's closing block is REQ_PREFLUSH | REQ_FUA: the same, in two steps */
	if (!ret)
		ret = meta_block_write(sbi, blk, cp, true);
	if (ret)
		return f2fs_error(sbi, EIO, "checkpoint pack at block %u: write failed", start);
	sbi->cur_cp_pack = sbi->cur_cp_pack == 1 ? 2 : 1;
	sbi->cur_cp_addr = start;
	sbi->cp_ver = le64(cp->checkpoint_ver);
	sbi->cp_crc = le32(*(uint32_t *)((uint8_t *)cp + le32(cp->checksum_offset)));
	return 0;
}

/*
 * The caller holds cp_rwsem exclusively: no operation runs, so the dirty
 * sets are stable. Data first (it dirties dnodes), then inodes and nodes,
 * then NAT and SIT, then the pack.
 */
int f2fs_write_checkpoint(struct f2fs_sb_info *sbi, bool umount)
{
	unsigned int orphan_blocks;
	int ret;

	if (sbi->opts.read_only)
		return 0;
	if (sbi->cp_stopped)
		return -EIO;
	ret = f2fs_writeback_all_data(sbi);
	if (!ret)
		ret = f2fs_quota_checkpoint(sbi);
	if (!ret)
		ret = f2fs_sync_dirty_inodes(sbi);
	if (!ret)
		ret = f2fs_write_dirty_nodes(sbi);
	if (!ret)
		ret = f2fs_flush_nat(sbi);
	if (!ret)
		ret = f2fs_fix_full_cursegs(sbi);
	if (!ret)
		ret = f2fs_flush_sit(sbi);
	if (!ret)
		ret = f2fs_write_curseg_ssa(sbi);
	if (ret)
		goto fail;
	orphan_blocks = DIV_ROUND_UP(sbi->nr_orphans, F2FS_ORPHANS_PER_BLOCK);
	if (1 + le32(sbi->raw_super.cp_payload) + orphan_blocks + 2 * NR_CURSEG_TYPE + 1 >
	    sbi->blocks_per_seg) {
		ret = f2fs_error(sbi, ENOSPC, "checkpoint: %u orphan inodes do not fit",
				 sbi->nr_orphans);
		goto fail;
	}
	fill_checkpoint(sbi, umount, orphan_blocks);
	ret = write_cp_pack(sbi, umount, orphan_blocks);
	if (ret)
		goto fail;
	f2fs_clear_prefree(sbi);
	f2fs_nat_after_checkpoint(sbi);
	atomic_fetch_add(&sbi->ctr->checkpoints, 1);
	return 0;
fail:
	/* as the kernel's f2fs_stop_checkpoint: no more metadata writes */
	sbi->cp_stopped = true;
	f2fs_error(sbi, -ret > 0 ? -ret : EIO,
		   "checkpoint failed (%s): metadata writes stopped; remount to recover",
		   strerror(-ret));
	return ret;
}

/// The checkpoint timer ///

/* A checkpoint under the exclusive checkpoint lock (f2fs_sync_fs). */
int f2fs_checkpoint_now(struct f2fs_sb_info *sbi, bool umount)
{
	int ret;

	if (sbi->opts.read_only)
		return 0;
	pthread_rwlock_wrlock(&sbi->cp_rwsem);
	ret = f2fs_write_checkpoint(sbi, umount);
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}

static bool anything_dirty(struct f2fs_sb_info *sbi)
{
	return folio_dirty_bytes(sbi) || sbi->nm.nr_dirty || f2fs_has_dirty_inodes(sbi);
}

#define BG_TICK		5	/* seconds between looks at idleness */
#define BG_DISCARD_SEGS	1024	/* per idle tick: 2 GiB of 2 MiB segments */

/*
 * checkpoint_interval as in the kernel: dirty state never waits longer than
 * that. In idle time (no operation for a tick) pending discards go out and
 * background GC takes a round.
 */
static void *checkpoint_thread(void *arg)
{
	struct f2fs_sb_info *sbi = arg;
	uint64_t last_cp = time(NULL);

	pthread_mutex_lock(&sbi->cp_thread_lock);
	while (!sbi->cp_thread_stop) {
		struct timespec until;
		uint64_t now;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += MIN(BG_TICK, sbi->opts.checkpoint_interval);
		pthread_cond_timedwait(&sbi->cp_thread_cond, &sbi->cp_thread_lock, &until);
		if (sbi->cp_thread_stop)
			break;
		pthread_mutex_unlock(&sbi->cp_thread_lock);
		now = time(NULL);
		if (!sbi->cp_stopped && now - last_cp >= sbi->opts.checkpoint_interval) {
			if (anything_dirty(sbi))
				f2fs_checkpoint_now(sbi, false);
			last_cp = now;
		}
		if (now - atomic_load(&sbi->last_op_time) >= BG_TICK) {
			f2fs_issue_discards(sbi, BG_DISCARD_SEGS);
			if (sbi->opts.background_gc != 0)
				f2fs_background_gc(sbi);
		}
		pthread_mutex_lock(&sbi->cp_thread_lock);
	}
	pthread_mutex_unlock(&sbi->cp_thread_lock);
	return NULL;
}

int f2fs_start_checkpoint_thread(struct f2fs_sb_info *sbi)
{
	pthread_mutex_init(&sbi->cp_thread_lock, NULL);
	pthread_cond_init(&sbi->cp_thread_cond, NULL);
	if (pthread_create(&sbi->cp_thread, NULL, checkpoint_thread, sbi))
		return -EAGAIN;
	sbi->cp_thread_running = true;
	return 0;
}

void f2fs_stop_checkpoint_thread(struct f2fs_sb_info *sbi)
{
	if (!sbi->cp_thread_running)
		return;
	pthread_mutex_lock(&sbi->cp_thread_lock);
	sbi->cp_thread_stop = true;
	pthread_cond_signal(&sbi->cp_thread_cond);
	pthread_mutex_unlock(&sbi->cp_thread_lock);
	pthread_join(sbi->cp_thread, NULL);
	sbi->cp_thread_running = false;
}
