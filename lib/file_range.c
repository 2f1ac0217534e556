// SPDX-License-Identifier: GPL-2.0
/*
 * fallocate's COLLAPSE_RANGE and INSERT_RANGE, as the kernel's
 * f2fs_collapse_range and f2fs_insert_range: the blocks from an offset to
 * EOF shift down over a removed range, or up to open a hole, and the size
 * follows. Checks and order of operations are the kernel's.
 *
 * How a block moves. The kernel moves a block's address from one dnode slot
 * to another only when the block was written after the last checkpoint; a
 * checkpointed block is copied through the page cache instead, because
 * moving it means rewriting its SSA entry (owner nid and slot) in place,
 * and a crash before the next checkpoint would leave the previous one with
 * a summary naming the wrong owner: fsck reports it, and GC takes the block
 * for dead. uf2fs copies every data block the same way: the source slot
 * becomes a hole, the block is invalidated, and its data lands in a new
 * dirty folio at the destination, which writeback gives a fresh block and a
 * fresh summary. Holes stay holes, and preallocated (NEW_ADDR) slots move
 * as they are: they own no block and no summary.
 *
 * The file's dirty data is written back first and its cache from the
 * offset on dropped, so every source is on disk and no folio holds a stale
 * view. The shift then runs in chunks of a dnode's worth of blocks, each
 * read out of its slots completely before any destination is touched, so
 * overlapping source and destination ranges need no special care; each
 * chunk is written back before the next, which bounds the dirty data.
 */
#include <stdlib.h>

#include "f2fs.h"

#define SHIFT_CHUNK	DEF_ADDRS_PER_BLOCK

static bool is_data_addr(block_t b)
{
	return b != NULL_ADDR && b != NEW_ADDR && b != COMPRESS_ADDR;
}

/* Take the addresses of [from, from + n) out of their slots (holes read NULL_ADDR). */
static int read_out(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t from,
		    unsigned int n, block_t *addrs)
{
	for (unsigned int i = 0; i < n;) {
		struct dnode_of_data dn;
		uint32_t *slots;
		bool changed = false;
		int ret = f2fs_get_dnode(sbi, fi, from + i, &dn);

		if (ret)
			return ret;
		if (!dn.folio) {
			i += MIN(dn.hole_blocks, (uint64_t)(n - i));
			continue;
		}
		slots = (uint32_t *)dn.addrs;
		for (; dn.ofs < dn.nr && i < n; dn.ofs++, i++) {
			addrs[i] = le32(slots[dn.ofs]);
			if (addrs[i] == NULL_ADDR)
				continue;
			slots[dn.ofs] = NULL_ADDR;
			changed = true;
		}
		if (changed)
			folio_mark_dirty(sbi, dn.folio);
		folio_put(sbi, dn.folio);
	}
	return 0;
}

static bool any_new_addr(const block_t *addrs, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (addrs[i] == NEW_ADDR)
			return true;
	return false;
}

/*
 * Empty the destination slots [to, to + n) and move the reservations there;
 * a reservation's count goes with it, so nothing is recounted.
 */
static int place_slots(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t to,
		       unsigned int n, block_t *addrs)
{
	for (unsigned int i = 0; i < n;) {
		struct dnode_of_data dn;
		uint32_t *slots;
		bool changed = false;
		int ret = f2fs_get_dnode(sbi, fi, to + i, &dn);

		if (!ret && !dn.folio) {
			uint64_t span = MIN(dn.hole_blocks, (uint64_t)(n - i));

			if (!any_new_addr(addrs + i, span)) {
				i += span;
				continue;
			}
			ret = f2fs_get_dnode_alloc(sbi, fi, to + i, &dn);
		}
		if (ret)
			return ret;
		slots = (uint32_t *)dn.addrs;
		for (; dn.ofs < dn.nr && i < n; dn.ofs++, i++) {
			if (slots[dn.ofs] != NULL_ADDR) {
				f2fs_free_data_addr(sbi, fi, slots[dn.ofs]);
				slots[dn.ofs] = NULL_ADDR;
				changed = true;
			}
			if (addrs[i] == NEW_ADDR) {
				slots[dn.ofs] = NEW_ADDR;
				addrs[i] = NULL_ADDR;	/* placed */
				changed = true;
			}
		}
		if (changed)
			folio_mark_dirty(sbi, dn.folio);
		folio_put(sbi, dn.folio);
	}
	return 0;
}

/* Largest folio order for file block pos that stays inside [pos, end). */
static unsigned int run_order(const struct f2fs_inode_info *fi, uint64_t pos, uint64_t end)
{
	unsigned int order = 0;

	while (order < fi->max_order && !(pos & (1ull << order)) && pos + (2ull << order) <= end)
		order++;
	return order;
}

/*
 * New dirty folios for file blocks [to, to + n), read from the n disk
 * blocks at blk. What lies past EOF in the last block needs no zeroing:
 * writeback zeroed it on disk, and a shift keeps EOF's offset in its block.
 */
static int copy_run(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t to,
		    unsigned int n, block_t blk)
{
	if (!f2fs_valid_main_blkaddr(sbi, blk) || !f2fs_valid_main_blkaddr(sbi, blk + n - 1))
		return f2fs_error(sbi, EFSCORRUPTED, "inode %u: data block address %u out of range",
				  fi->ino, blk);
	for (uint64_t pos = to; pos < to + n;) {
		bool created;
		struct folio *f = folio_grab(sbi, MAP_DATA, fi->ino, pos, run_order(fi, pos, to + n),
					     &created);
		unsigned int nr;
		int ret;

		if (IS_ERR(f))
			return PTR_ERR(f);
		if (!created) {
			/* cannot be: the cache of the range was dropped and the inode is ours */
			folio_put(sbi, f);
			return f2fs_error(sbi, EIO, "inode %u: block %llu cached during a shift",
					  fi->ino, (unsigned long long)pos);
		}
		nr = folio_nr_blocks(f);
		ret = f2fs_dev_read_blocks(&sbi->dev, f->data, blk + (pos - to), nr);
		folio_end_fill(sbi, f, !ret);
		if (!ret)
			folio_mark_dirty(sbi, f);
		folio_put(sbi, f);
		if (ret)
			return f2fs_error(sbi, EIO, "inode %u: data read at block %u failed: %s",
					  fi->ino, blk + (unsigned int)(pos - to), strerror(-ret));
		pos += nr;
	}
	return 0;
}

/* Copy the data blocks of a chunk to their destinations and free the sources. */
static int copy_blocks(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t to,
		       unsigned int n, block_t *addrs)
{
	for (unsigned int i = 0; i < n;) {
		unsigned int run = 1;
		int ret;

		if (!is_data_addr(addrs[i])) {
			i++;
			continue;
		}
		/* physically contiguous sources: one read per destination folio */
		while (i + run < n && is_data_addr(addrs[i + run]) &&
		       addrs[i + run] == addrs[i] + run)
			run++;
		ret = copy_run(sbi, fi, to + i, run, addrs[i]);
		if (ret)
			return ret;
		for (; run; run--, i++) {
			f2fs_free_data_addr(sbi, fi, addrs[i]);
			addrs[i] = NULL_ADDR;
		}
	}
	return 0;
}

/*
 * Move the contents of file blocks [src, src + n) to [dst, dst + n): in
 * index order when moving down, from the end when moving up, so that no
 * chunk reads a slot an earlier chunk wrote.
 */
static int shift_blocks(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t src,
			uint64_t dst, uint64_t n)
{
	block_t *addrs = malloc(SHIFT_CHUNK * sizeof(*addrs));
	int ret = 0;

	if (!addrs)
		return -ENOMEM;
	for (uint64_t done = 0; done < n && !ret;) {
		unsigned int c = MIN(n - done, (uint64_t)SHIFT_CHUNK);
		uint64_t s = dst < src ? src + done : src + n - done - c;
		uint64_t d = dst + (s - src);

		memset(addrs, 0, c * sizeof(*addrs));	/* NULL_ADDR */
		ret = read_out(sbi, fi, s, c, addrs);
		if (!ret)
			ret = place_slots(sbi, fi, d, c, addrs);
		if (!ret)
			ret = copy_blocks(sbi, fi, d, c, addrs);
		if (ret) {
			/* what was taken out and not placed is lost, but not leaked */
			for (unsigned int i = 0; i < c; i++)
				f2fs_free_data_addr(sbi, fi, addrs[i]);
			break;
		}
		ret = f2fs_writeback_inode(sbi, fi);
		done += c;
	}
	free(addrs);
	return ret;
}

/*
 * Everything that may still fail with -EAGAIN (make room and retry the whole
 * operation), before anything visible changes: the inline data becomes a
 * block, the dirty data goes to disk, and the log must have room for a copy
 * of every data block from block "from" to EOF.
 */
static int prepare_shift(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t from)
{
	uint64_t eof_blk = DIV_ROUND_UP(fi->size, F2FS_BLKSIZE), need = 0;
	int ret = f2fs_convert_inline_inode(sbi, fi);

	if (!ret)
		ret = f2fs_writeback_inode(sbi, fi);
	for (uint64_t b = from; b < eof_blk && !ret;) {
		struct f2fs_map_blocks map = { .lblk = b, .len = MIN(eof_blk - b, 1ull << 30) };

		ret = f2fs_map_blocks(sbi, fi, &map);
		if (!ret && is_data_addr(map.pblk))
			need += map.len;
		b += map.len ? map.len : 1;
	}
	return ret ? ret : f2fs_check_log_space(sbi, need);
}

/* Past the point of no return: the cached view of [start, EOF) goes. */
static void forget_from(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t start)
{
	folio_drop_range(sbi, MAP_DATA, fi->ino, start, UINT64_MAX);
	if (f2fs_extent_invalidate(fi, start, UINT64_MAX - start))
		f2fs_mark_inode_dirty(sbi, fi);
}

/*
 * A half-done shift cannot be retried: no -EAGAIN from here on. Roll-forward
 * recovery cannot replay the nodes a shift frees, so the next fsync of the
 * inode checkpoints.
 */
static int finish_shift(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, int ret)
{
	f2fs_mark_need_cp(sbi, fi);
	f2fs_mark_inode_dirty(sbi, fi);
	return ret == -EAGAIN ? -ENOSPC : ret;
}

int f2fs_collapse_range(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t off,
			uint64_t len)
{
	uint64_t start = off / F2FS_BLKSIZE, end = (off + len) / F2FS_BLKSIZE;
	uint64_t new_size = fi->size - len;
	int ret;

	if (off + len >= fi->size)
		return -EINVAL;	/* truncate is the tool for that */
	if ((off | len) % F2FS_BLKSIZE)
		return -EINVAL;
	ret = prepare_shift(sbi, fi, end);
	if (ret)
		return ret;
	forget_from(sbi, fi, start);
	ret = shift_blocks(sbi, fi, end, start, DIV_ROUND_UP(fi->size, F2FS_BLKSIZE) - end);
	/* the old tail: slots emptied by the shift, and preallocations past EOF */
	if (!ret)
		ret = f2fs_truncate_blocks(sbi, fi, DIV_ROUND_UP(new_size, F2FS_BLKSIZE));
	if (!ret)
		fi->size = new_size;
	return finish_shift(sbi, fi, ret);
}

int f2fs_insert_range(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t off,
		      uint64_t len)
{
	uint64_t start = off / F2FS_BLKSIZE, delta = len / F2FS_BLKSIZE;
	uint64_t eof_blk = DIV_ROUND_UP(fi->size, F2FS_BLKSIZE);
	int ret;

	if (off >= fi->size)
		return -EINVAL;	/* nothing to shift: an extending truncate does it */
	if ((off | len) % F2FS_BLKSIZE)
		return -EINVAL;
	ret = prepare_shift(sbi, fi, start);
	if (ret)
		return ret;
	/* preallocations past EOF would land inside the file */
	ret = f2fs_truncate_blocks(sbi, fi, eof_blk);
	if (ret)
		return finish_shift(sbi, fi, ret);
	forget_from(sbi, fi, start);
	/* first, so that writeback between chunks takes the blocks past the old EOF */
	fi->size += len;
	ret = shift_blocks(sbi, fi, start, start + delta, eof_blk - start);
	return finish_shift(sbi, fi, ret);
}
