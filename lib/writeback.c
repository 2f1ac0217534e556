// SPDX-License-Identifier: GPL-2.0
/*
 * The buffered write path and writeback. Writes land in data folios of the
 * folio cache (large when the write is long, reading only the partial head
 * and tail blocks); inline data stays in the inode until it outgrows it.
 *
 * Writeback walks an inode's dirty folios in index order and gives each
 * dirty block a new block from the current segment of its temperature
 * (out of place), so a sequential file gets contiguous blocks; runs of them
 * go to the device as one request, up to max_io_bytes. Where the kernel's
 * in-place-update policy allows it (by default: an fsync of a few blocks),
 * an overwrite goes to the block it already has instead: no allocation, no
 * node, NAT or SIT change.
 * The writepages lock serializes allocation+submission per inode, which
 * keeps one file's blocks together under concurrent writers (seed 004).
 *
 * Truncation frees data blocks and whole nodes past a file block.
 */
#include <stdlib.h>
#include <sys/stat.h>

#include "f2fs.h"

#define MAX_WB_IOV	256	/* 1 MiB of 4 KiB blocks per request */

/// Freeing addresses ///

/* Release what one address slot holds; the caller clears the slot. */
void f2fs_free_data_addr(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, block_t addr)
{
	/* a cluster header counts as a block, as NEW_ADDR does, until released */
	if (addr == NULL_ADDR || (addr == COMPRESS_ADDR && f2fs_compress_released(fi)))
		return;
	if (addr == NEW_ADDR || addr == COMPRESS_ADDR) {
		/* a reservation: counted as valid, never in the SIT */
		pthread_mutex_lock(&sbi->sm.lock);
		sbi->sm.valid_blocks--;
		pthread_mutex_unlock(&sbi->sm.lock);
	} else {
		f2fs_invalidate_block(sbi, addr);
	}
	if (fi->blocks > 1)
		fi->blocks--;
}

/* Free addrs[from..nr) of a node; returns how many slots it touched. */
static void free_addrs(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, struct folio *f,
		       uint32_t *addrs, unsigned int from, unsigned int nr)
{
	bool changed = false;

	if (f2fs_is_compressed(fi))
		f2fs_compr_blocks_on_free(fi, addrs, from, nr);
	for (unsigned int i = from; i < nr; i++) {
		if (addrs[i] == NULL_ADDR)
			continue;
		f2fs_free_data_addr(sbi, fi, addrs[i]);
		addrs[i] = NULL_ADDR;
		changed = true;
	}
	if (changed)
		folio_mark_dirty(sbi, f);
}

/// Truncation ///

static uint64_t trunc_apb(const struct f2fs_inode_info *fi)
{
	if (f2fs_is_compressed(fi))
		return DEF_ADDRS_PER_BLOCK & ~((1u << fi->log_cluster_size) - 1);
	return DEF_ADDRS_PER_BLOCK;
}

/*
 * Truncate the subtree rooted at nid whose first file block is base, and
 * which spans "span" blocks; depth 1 is a direct node. Returns 1 when the
 * whole node went away (the caller clears its pointer), 0 when it stays.
 */
static int truncate_subtree(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, nid_t nid,
			    int depth, uint64_t base, uint64_t span, uint64_t from)
{
	struct folio *f;
	int ret = 0;

	if (base + span <= from)
		return 0;
	f = f2fs_get_node_folio(sbi, nid);
	if (IS_ERR(f))
		return PTR_ERR(f);
	if (depth == 1) {
		uint32_t *addrs = (uint32_t *)dnode_addrs(folio_node(f));

		free_addrs(sbi, fi, f, addrs, from > base ? from - base : 0, trunc_apb(fi));
	} else {
		uint64_t child_span = span / NIDS_PER_BLOCK;
		uint32_t *nids = (uint32_t *)indirect_nids(folio_node(f));

		for (unsigned int i = 0; i < NIDS_PER_BLOCK && !ret; i++) {
			uint64_t cbase = base + i * child_span;

			if (!nids[i] || cbase + child_span <= from)
				continue;
			ret = truncate_subtree(sbi, fi, nids[i], depth - 1, cbase, child_span,
					       from);
			if (ret == 1) {
				nids[i] = 0;
				folio_mark_dirty(sbi, f);
				ret = 0;
			}
		}
	}
	folio_put(sbi, f);
	if (ret < 0 || from > base)
		return ret;
	ret = f2fs_truncate_node(sbi, nid);
	if (ret)
		return ret;
	if (fi->blocks > 1)
		fi->blocks--;
	return 1;
}

int f2fs_truncate_blocks(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t from)
{
	uint64_t apb = trunc_apb(fi), base = fi->addrs_per_inode;
	const uint64_t spans[DEF_NIDS_PER_INODE] = {
		apb, apb, apb * NIDS_PER_BLOCK, apb * NIDS_PER_BLOCK,
		apb * NIDS_PER_BLOCK * NIDS_PER_BLOCK,
	};
	const int depths[DEF_NIDS_PER_INODE] = { 1, 1, 2, 2, 3 };
	struct folio *ifolio;
	int ret = 0;

	folio_truncate_owner(sbi, MAP_DATA, fi->ino, from);
	f2fs_extent_invalidate(fi, from, UINT64_MAX - from);
	/* inline data and inline dentries fill i_addr with bytes, not addresses */
	if (f2fs_is_inline_data(fi) || f2fs_is_inline_dentry(fi))
		return 0;
	ifolio = f2fs_get_inode_folio(sbi, fi->ino);
	if (IS_ERR(ifolio))
		return PTR_ERR(ifolio);
	if (from < fi->addrs_per_inode)
		free_addrs(sbi, fi, ifolio,
			   (uint32_t *)inode_addrs(folio_node(ifolio)) + fi->extra_isize,
			   from, fi->addrs_per_inode);
	for (int i = 0; i < DEF_NIDS_PER_INODE && !ret; i++) {
		if (fi->i_nid[i]) {
			ret = truncate_subtree(sbi, fi, fi->i_nid[i], depths[i], base, spans[i],
					       from);
			if (ret == 1) {
				fi->i_nid[i] = 0;
				((uint32_t *)inode_nids(folio_node(ifolio)))[i] = 0;
				folio_mark_dirty(sbi, ifolio);
				ret = 0;
			}
		}
		base += spans[i];
	}
	folio_put(sbi, ifolio);
	f2fs_mark_inode_dirty(sbi, fi);
	return ret < 0 ? ret : 0;
}

/// Writeback ///

static int data_seg_type(const struct f2fs_inode_info *fi)
{
	if (S_ISDIR(fi->mode))
		return CURSEG_HOT_DATA;
	if (fi->i_advise & FADVISE_COLD_BIT)
		return CURSEG_COLD_DATA;
	return CURSEG_WARM_DATA;
}

/* A run of new blocks being gathered into one device request. */
struct wb_run {
	struct iovec iov[MAX_WB_IOV];
	unsigned int cnt;
	block_t start;
	bool moved;	/* a block of it is at a new address: a node will point at it */
};

/*
 * nblocks data blocks from start; a failure is the filesystem's (it goes
 * read-only). Only moved blocks make fsync flush before its nodes.
 */
static int wb_write(struct f2fs_sb_info *sbi, const struct iovec *iov, int cnt, block_t start,
		    unsigned int nblocks, bool moved)
{
	int ret = 0;

	if (nblocks)
		ret = moved ? f2fs_dev_writev_blocks(&sbi->dev, iov, cnt, start) :
		      f2fs_dev_writev_inplace(&sbi->dev, iov, cnt, start);
	if (ret)
		ret = f2fs_error(sbi, EIO, "data write at block %u (%u blocks) failed: %s",
				 start, nblocks, strerror(-ret));
	atomic_fetch_add(&sbi->ctr->written_blocks, nblocks);
	return ret;
}

static int wb_flush(struct f2fs_sb_info *sbi, struct wb_run *r)
{
	int ret = wb_write(sbi, r->iov, r->cnt, r->start, r->cnt, r->moved);

	r->cnt = 0;
	r->moved = false;
	return ret;
}

static int wb_add(struct f2fs_sb_info *sbi, struct wb_run *r, void *buf, block_t blk, bool moved)
{
	int ret = 0;

	if (r->cnt && (r->cnt == MAX_WB_IOV || blk != r->start + r->cnt))
		ret = wb_flush(sbi, r);
	if (!r->cnt)
		r->start = blk;
	r->moved |= moved;
	r->iov[r->cnt].iov_base = buf;
	r->iov[r->cnt++].iov_len = F2FS_BLKSIZE;
	return ret;
}

static bool block_dirty(struct folio *f, unsigned int i)
{
	unsigned int nr = folio_nr_blocks(f);

	if (!f->state)
		return true;
	return f->state->bits[(nr + i) / 64] & (1ull << ((nr + i) % 64));
}

/*
 * Give one dirty block its new home: allocate from the log, point the dnode
 * at it, release the old block. The caller keeps the extent cache and
 * i_ext true (wb_note_extent), a run at a time.
 */
static int write_one_block(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			   struct dnode_of_data *dn, uint64_t lblk, block_t *newblk)
{
	uint32_t *addrs = (uint32_t *)dn->addrs;
	block_t old = addrs[dn->ofs], blk;
	struct node_info ni;
	struct f2fs_summary sum;
	nid_t dnid = le32(folio_node(dn->folio)->footer.nid);
	int ret;

	ret = f2fs_get_node_info(sbi, dnid, &ni);
	if (ret)
		return ret;
	sum.nid = dnid;
	sum.version = ni.version;
	sum.ofs_in_node = dn->ofs;
	ret = f2fs_allocate_block(sbi, data_seg_type(fi), &sum, &blk);
	if (ret)
		return ret;
	if (old == NULL_ADDR) {
		fi->blocks++;
		f2fs_mark_inode_dirty(sbi, fi);
	} else if (old == NEW_ADDR) {
		pthread_mutex_lock(&sbi->sm.lock);
		sbi->sm.valid_blocks--;	/* the reservation became a real block */
		pthread_mutex_unlock(&sbi->sm.lock);
	} else {
		f2fs_invalidate_block(sbi, old);
	}
	addrs[dn->ofs] = blk;
	folio_mark_dirty(sbi, dn->folio);
	*newblk = blk;
	return 0;
}

/* Zero what lies past EOF in the last block, as the kernel does before writing it. */
static void zero_past_eof(struct f2fs_inode_info *fi, struct folio *f, uint64_t lblk, void *buf)
{
	uint64_t bstart = lblk << F2FS_BLKSIZE_BITS;

	if (fi->size > bstart && fi->size < bstart + F2FS_BLKSIZE)
		memset((uint8_t *)buf + (fi->size - bstart), 0, bstart + F2FS_BLKSIZE - fi->size);
}

/*
 * Drop-behind after writeback is for folios a streaming writer has filled and
 * left. A partly written one is kept: its next write would otherwise read its
 * other blocks back from the device.
 */
static bool folio_fully_dirty(struct folio *f, uint64_t eof_blk)
{
	if (f->index + folio_nr_blocks(f) > eof_blk)
		return false;
	for (unsigned int b = 0; b < folio_nr_blocks(f); b++)
		if (!block_dirty(f, b))
			return false;
	return true;
}

static int cmp_folio_index(const void *a, const void *b)
{
	const struct folio *x = *(struct folio *const *)a, *y = *(struct folio *const *)b;

	return x->index < y->index ? -1 : x->index > y->index;
}

/* Keep only the folios a streaming writer has filled whole; put the others. */
static size_t keep_whole_folios(struct f2fs_sb_info *sbi, struct folio **v, size_t n,
				uint64_t eof_blk)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (folio_fully_dirty(v[i], eof_blk))
			v[m++] = v[i];
		else
			folio_put(sbi, v[i]);
	}
	return m;
}

/// In place or out of place (the kernel's IPU policy, fs/f2fs/data.c) ///

static bool is_quota_inode(struct f2fs_sb_info *sbi, const struct f2fs_inode_info *fi)
{
	for (int i = 0; i < F2FS_MAX_QUOTAS; i++)
		if (le32(sbi->raw_super.qf_ino[i]) == fi->ino)
			return true;
	return false;
}

/*
 * f2fs_should_update_outplace: what is never updated in place. A pinned
 * file was checked when it was pinned (not on a zoned volume, where
 * nothing is). An image marked for fsck, LFS mode,
 * directories and quota files (their blocks are the checkpoint's), and
 * atomic writes (the commit must be all or nothing) always move. uf2fs
 * writes no compressed cluster, so those never reach here with data.
 */
static bool must_update_outplace(struct f2fs_sb_info *sbi, const struct f2fs_inode_info *fi,
				 unsigned int flags)
{
	/* a sequential zone takes no overwrite, pinned file or not */
	if (sbi->zoned)
		return true;
	if (fi->i_inline & F2FS_PIN_FILE)
		return false;
	if (le32(sbi->ckpt->ckpt_flags) & CP_FSCK_FLAG)
		return true;
	if (f2fs_lfs_mode(sbi) || S_ISDIR(fi->mode) || is_quota_inode(sbi, fi))
		return true;
	if (fi->atomic || (flags & WB_ATOMIC) || f2fs_is_compressed(fi))
		return true;
	return false;
}

/*
 * f2fs_should_update_inplace with check_inplace_update_policy: pinned and
 * cold files always (no fragmentation of what should stay put), then the
 * policy bits. need_ipu is the kernel's FI_NEED_IPU: set for the writeback
 * of an fdatasync, or of an fsync with at most min_fsync_blocks dirty.
 */
static bool may_update_inplace(struct f2fs_sb_info *sbi, const struct f2fs_inode_info *fi,
			       bool need_ipu)
{
	unsigned int pol = sbi->sm.ipu_policy;
	bool ssr = pol & ((1u << F2FS_IPU_SSR) | (1u << F2FS_IPU_SSR_UTIL)) ?
		   f2fs_need_ssr(sbi) : false;
	bool util = pol & ((1u << F2FS_IPU_UTIL) | (1u << F2FS_IPU_SSR_UTIL)) ?
		    f2fs_utilization(sbi) > sbi->sm.min_ipu_util : false;

	if ((fi->i_inline & F2FS_PIN_FILE) || (fi->i_advise & FADVISE_COLD_BIT))
		return true;
	if (pol & (1u << F2FS_IPU_FORCE))
		return true;
	if ((pol & (1u << F2FS_IPU_SSR)) && ssr)
		return true;
	if ((pol & (1u << F2FS_IPU_UTIL)) && util)
		return true;
	if ((pol & (1u << F2FS_IPU_SSR_UTIL)) && ssr && util)
		return true;
	return (pol & (1u << F2FS_IPU_FSYNC)) && need_ipu;
}

/*
 * One pass of writeback over an inode's blocks, in index order: the dnode
 * in hand, the in-place decision, the extent run and the device runs.
 * Shared by folio writeback and write-through.
 */
struct wb_ctx {
	struct wb_run r;
	struct dnode_of_data dn;
	uint64_t dn_start;
	bool ipu;
	uint64_t ipu_blocks;
	/* blocks moved since the extent cache last heard: one run, file and disk order */
	uint64_t ext_fofs;
	block_t ext_blk;
	uint32_t ext_len;
	/*
	 * Write-through: runs kept for after the writepages lock. Their bytes
	 * lie back to back in the caller's buffer, so a run is one iovec; the
	 * array has room for one run a block, so queueing never fails.
	 */
	bool defer;
	/*
	 * An encrypted file (folio writeback): each block goes into the slot
	 * of this bounce buffer that matches its place in the run, so the
	 * folio keeps the plaintext and the run stays one request. The slots
	 * are encrypted when the run goes out, consecutive blocks in one call
	 * (on the crypto pool when long enough), not one block a call.
	 */
	struct f2fs_inode_info *crypt_fi;
	uint8_t *bounce;		/* MAX_WB_IOV blocks */
	const uint8_t *plain[MAX_WB_IOV];	/* each slot's plaintext (in its folio) */
	uint64_t plain_lblk[MAX_WB_IOV];
	struct wt_run {
		block_t start;
		uint32_t cnt;
		const uint8_t *buf;
		bool moved;
	} *runs;
	unsigned int nruns;
};

static void wb_flush_extent(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			    struct wb_ctx *c)
{
	if (!c->ext_len)
		return;
	if (f2fs_extent_invalidate(fi, c->ext_fofs, c->ext_len))
		f2fs_mark_inode_dirty(sbi, fi);
	f2fs_extent_insert(fi, c->ext_fofs, c->ext_blk, c->ext_len);
	c->ext_len = 0;
}

/* A block moved: grow the pending run, or hand the old one to the extent cache. */
static void wb_note_extent(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			   struct wb_ctx *c, uint64_t lblk, block_t blk)
{
	if (c->ext_len && lblk == c->ext_fofs + c->ext_len && blk == c->ext_blk + c->ext_len &&
	    c->ext_len < UINT32_MAX) {
		c->ext_len++;
		return;
	}
	wb_flush_extent(sbi, fi, c);
	c->ext_fofs = lblk;
	c->ext_blk = blk;
	c->ext_len = 1;
}

/*
 * Encrypt the run's slots in one call (blocks of one folio and consecutive
 * file blocks are merged inside it; the pool takes long runs), then send it.
 */
static int wb_flush_encrypted(struct f2fs_sb_info *sbi, struct wb_ctx *c)
{
	struct wb_run *r = &c->r;
	int ret = 0;

	if (r->cnt) {
		ret = fscrypt_crypt_gather(sbi->keyring, &c->crypt_fi->fscrypt, c->plain_lblk,
					   c->plain, c->bounce, r->cnt, true);
		atomic_fetch_add(&sbi->ctr->crypt_wb_calls, 1);
		atomic_fetch_add(&sbi->ctr->crypt_wb_blocks, r->cnt);
	}
	if (ret) {
		r->cnt = 0;	/* nothing of it goes out */
		r->moved = false;
		return ret;
	}
	return wb_flush(sbi, r);
}

/* File block lblk into the bounce slot of its place in the run, to be encrypted there. */
static int wb_add_encrypted(struct f2fs_sb_info *sbi, struct wb_ctx *c, const uint8_t *buf,
			    uint64_t lblk, block_t blk, bool moved)
{
	struct wb_run *r = &c->r;
	int ret = 0;

	if (r->cnt && (r->cnt == MAX_WB_IOV || blk != r->start + r->cnt))
		ret = wb_flush_encrypted(sbi, c);
	if (ret)
		return ret;
	c->plain[r->cnt] = buf;
	c->plain_lblk[r->cnt] = lblk;
	return wb_add(sbi, r, c->bounce + ((size_t)r->cnt << F2FS_BLKSIZE_BITS), blk, moved);
}

/* Gather a block: into the run being built, or, deferred, into the list of runs. */
static int wb_queue(struct f2fs_sb_info *sbi, struct wb_ctx *c, void *buf, uint64_t lblk,
		    block_t blk, bool moved)
{
	struct wt_run *r;

	if (!c->defer && c->crypt_fi)
		return wb_add_encrypted(sbi, c, buf, lblk, blk, moved);
	if (!c->defer)
		return wb_add(sbi, &c->r, buf, blk, moved);
	r = c->nruns ? &c->runs[c->nruns - 1] : NULL;
	if (!r || r->cnt == MAX_WB_IOV || blk != r->start + r->cnt) {
		r = &c->runs[c->nruns++];
		r->start = blk;
		r->cnt = 0;
		r->buf = buf;
		r->moved = false;
	}
	r->moved |= moved;
	r->cnt++;
	return 0;
}

static bool write_in_place(struct f2fs_sb_info *sbi, block_t old);

/*
 * A device alias has no dnodes: i_ext maps its whole device, and Linux
 * overwrites those blocks in place (the file is pinned; prepare_write_begin
 * finds the block in the read extent cache). Past the device there is
 * nothing to write to, as the write path already refused.
 */
static int wb_alias_block(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			  struct wb_ctx *c, uint64_t lblk, void *buf)
{
	if (lblk >= fi->largest.len)
		return -ENODATA;
	c->ipu_blocks++;
	return wb_queue(sbi, c, buf, lblk, fi->largest.blk + (block_t)lblk, false);
}

/*
 * One block: its dnode (kept across consecutive blocks), then in place
 * where the policy allows and the block it has is a real one, else a new
 * block from the log.
 */
static int wb_block(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, struct wb_ctx *c,
		    uint64_t lblk, void *buf)
{
	struct dnode_of_data cur;
	block_t old;
	int ret;

	if (f2fs_is_device_alias(fi))
		return wb_alias_block(sbi, fi, c, lblk, buf);
	if (!c->dn.folio || lblk < c->dn_start || lblk >= c->dn_start + (c->dn.nr - c->dn.ofs)) {
		if (c->dn.folio)
			folio_put(sbi, c->dn.folio);
		ret = f2fs_get_dnode_alloc(sbi, fi, lblk, &c->dn);
		if (ret) {
			c->dn.folio = NULL;
			return ret;
		}
		c->dn_start = lblk;
	}
	cur = c->dn;
	cur.ofs = c->dn.ofs + (lblk - c->dn_start);
	old = cur.addrs[cur.ofs];
	if (c->ipu && write_in_place(sbi, old)) {
		c->ipu_blocks++;
		return wb_queue(sbi, c, buf, lblk, old, false);
	}
	ret = write_one_block(sbi, fi, &cur, lblk, &old);
	if (ret)
		return ret;
	wb_note_extent(sbi, fi, c, lblk, old);
	return wb_queue(sbi, c, buf, lblk, old, true);
}

/* Send what is gathered and release the dnode; the writepages lock is still held. */
static int wb_ctx_finish(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, struct wb_ctx *c,
			 int ret)
{
	wb_flush_extent(sbi, fi, c);
	if (!ret)
		ret = c->crypt_fi && !c->defer ? wb_flush_encrypted(sbi, c) : wb_flush(sbi, &c->r);
	atomic_fetch_add(&sbi->ctr->ipu_blocks, c->ipu_blocks);
	if (c->dn.folio)
		folio_put(sbi, c->dn.folio);
	c->dn.folio = NULL;
	return ret;
}

/* Dirty blocks below EOF: the kernel's get_dirty_pages for the fsync threshold. */
static uint64_t count_dirty_blocks(struct folio **v, size_t n, uint64_t eof_blk)
{
	uint64_t cnt = 0;

	for (size_t i = 0; i < n; i++)
		for (unsigned int b = 0; b < folio_nr_blocks(v[i]); b++)
			if (v[i]->index + b < eof_blk && block_dirty(v[i], b))
				cnt++;
	return cnt;
}

/*
 * An overwrite goes in place when the policy allows and the block it has
 * is a real, valid block of a data segment (anything else, a hole or a
 * reservation included, needs a new block anyway).
 */
static bool write_in_place(struct f2fs_sb_info *sbi, block_t old)
{
	if (old == NULL_ADDR || old == NEW_ADDR || old == COMPRESS_ADDR)
		return false;
	return f2fs_ipu_target_ok(sbi, old);
}

/* Caller holds the inode exclusively (or the checkpoint lock exclusively). */
int f2fs_writeback_inode_flags(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			       unsigned int flags)
{
	uint64_t eof_blk = DIV_ROUND_UP(fi->size, F2FS_BLKSIZE);
	bool need_ipu = false;
	struct wb_ctx *c;
	struct folio **v;
	size_t n;
	int ret;

	if (f2fs_is_compressed(fi))
		return f2fs_writeback_compressed(sbi, fi);
	ret = folio_collect_dirty(sbi, MAP_DATA, fi->ino, &v, &n);
	fi->fresh_blocks = 0;
	if (!ret && (flags & WB_WHOLE))
		n = keep_whole_folios(sbi, v, n, eof_blk);
	if (ret || !n) {
		free(v);
		return ret;
	}
	c = calloc(1, sizeof(*c));
	if (c && f2fs_encrypted_file(fi)) {
		c->crypt_fi = fi;
		c->bounce = malloc((size_t)MAX_WB_IOV << F2FS_BLKSIZE_BITS);
		ret = c->bounce ? fscrypt_prepare(sbi->keyring, &fi->fscrypt) : -ENOMEM;
	}
	if (!c || ret) {
		for (size_t i = 0; i < n; i++)
			folio_put(sbi, v[i]);
		free(v);
		if (c)
			free(c->bounce);
		free(c);
		return c ? ret : -ENOMEM;
	}
	if (flags & WB_DATASYNC)
		need_ipu = true;
	else if (flags & WB_FSYNC)
		need_ipu = count_dirty_blocks(v, n, eof_blk) <= sbi->sm.min_fsync_blocks;
	c->ipu = !must_update_outplace(sbi, fi, flags) && may_update_inplace(sbi, fi, need_ipu);
	qsort(v, n, sizeof(*v), cmp_folio_index);
	pthread_mutex_lock(&sbi->writepages);
	for (size_t i = 0; i < n && !ret; i++) {
		struct folio *f = v[i];

		for (unsigned int b = 0; b < folio_nr_blocks(f) && !ret; b++) {
			uint64_t lblk = f->index + b;
			uint8_t *buf = folio_block_ptr(f, lblk);

			if (lblk >= eof_blk || !block_dirty(f, b))
				continue;
			zero_past_eof(fi, f, lblk, buf);
			ret = wb_block(sbi, fi, c, lblk, buf);
		}
	}
	ret = wb_ctx_finish(sbi, fi, c, ret);
	pthread_mutex_unlock(&sbi->writepages);
	for (size_t i = 0; i < n; i++) {
		bool drop = !ret && sbi->opts.dontcache > 0 && folio_fully_dirty(v[i], eof_blk);

		if (!ret)
			folio_clear_dirty(sbi, v[i]);
		if (drop)
			folio_put_dropbehind(sbi, v[i]);
		else
			folio_put(sbi, v[i]);
	}
	free(v);
	free(c->bounce);
	free(c);
	return ret;
}

int f2fs_writeback_inode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	return f2fs_writeback_inode_flags(sbi, fi, 0);
}

/*
 * Write-behind for a streaming writer under drop-behind: the folios it has
 * filled go to the device now, are dropped, and their buffers serve the next
 * ones. Memory stays at a few folios and warm, instead of cache_size/4 of
 * freshly faulted pages waiting for the checkpoint. Only whole folios: a
 * partly written one would be written again, to a new block, by its next
 * write. Same locks as f2fs_writeback_inode.
 */
int f2fs_writebehind_inode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	return f2fs_writeback_inode_flags(sbi, fi, WB_WHOLE);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int f2fs_writeback_all_data(struct f2fs_sb_info *sbi)
{
	struct folio **v;
	uint64_t *owners;
	size_t n, nown = 0;
	int ret = folio_collect_dirty(sbi, MAP_DATA, 0, &v, &n);

	if (ret)
		return ret;
	owners = malloc((n ? n : 1) * sizeof(*owners));
	if (!owners)
		ret = -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (owners)
			owners[nown++] = folio_owner_key(v[i]);
		folio_put(sbi, v[i]);
	}
	free(v);
	if (ret)
		return ret;
	qsort(owners, nown, sizeof(*owners), cmp_u64);
	for (size_t i = 0; i < nown && !ret; i++) {
		struct f2fs_inode_info *fi;

		if (i && owners[i] == owners[i - 1])
			continue;
		fi = f2fs_iget(sbi, owners[i]);
		if (IS_ERR(fi)) {
			/* freed since: its dirty data died with it */
			folio_truncate_owner(sbi, MAP_DATA, owners[i], 0);
			continue;
		}
		/* an uncommitted atomic write must never reach a checkpoint */
		ret = fi->atomic ? 0 : f2fs_writeback_inode(sbi, fi);
		f2fs_iput(sbi, fi);
	}
	free(owners);
	return ret;
}

/// The buffered write path ///

/*
 * The largest folio that starts at the write's first block and ends inside
 * the write, as the kernel's __filemap_get_folio chooses ("if we're not
 * aligned, allocate a smaller folio"). A folio aligned down to before the
 * write would read its head back from the device and stay partly dirty, so
 * drop-behind would keep it: under writeback_cache the kernel's 1 MiB
 * requests start anywhere, and that filled the cache to cache_size.
 */
static unsigned int write_folio_order(const struct f2fs_inode_info *fi, uint64_t lblk,
				      uint64_t blocks)
{
	unsigned int order = 0;

	while (order < fi->max_order && (2ull << order) <= blocks && !(lblk & (1ull << order)))
		order++;
	return order;
}

/* Mark blocks [from, to) of the folio dirty, tracking sub-folio state only when needed. */
void f2fs_mark_range_dirty(struct f2fs_sb_info *sbi, struct folio *f, uint64_t from, uint64_t to)
{
	unsigned int nr = folio_nr_blocks(f);

	if (nr > 1 && (from > f->index || to < f->index + nr) && (f->state || !f->dirty)) {
		struct folio_state *st = folio_get_state(f);

		if (st) {
			for (uint64_t b = from; b < to; b++) {
				unsigned int bit = nr + (b - f->index);

				st->bits[bit / 64] |= 1ull << (bit % 64);
			}
		}
	} else if (f->state) {
		for (unsigned int i = nr; i < 2 * nr; i++)
			f->state->bits[i / 64] |= 1ull << (i % 64);
	}
	folio_mark_dirty(sbi, f);
}

/*
 * A new folio for a write only reads what the write does not cover: the
 * partial head and tail blocks, and whole blocks outside the write.
 */
static int prepare_write_folio(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			       struct folio *f, uint64_t wstart, uint64_t wend)
{
	uint64_t fstart = f->index, fend = f->index + folio_nr_blocks(f);
	uint64_t full_from = DIV_ROUND_UP(wstart, F2FS_BLKSIZE);
	uint64_t full_to = wend / F2FS_BLKSIZE;
	int ret;

	if (full_from >= full_to)
		return f2fs_fill_folio_range(sbi, fi, f, fstart, fend);
	ret = f2fs_fill_folio_range(sbi, fi, f, fstart, MAX(fstart, full_from));
	if (!ret)
		ret = f2fs_fill_folio_range(sbi, fi, f, MIN(fend, full_to), fend);
	return ret;
}

/* Blocks a write may need: a compressed file rewrites whole clusters. */
static uint64_t write_reserve(const struct f2fs_inode_info *fi, uint64_t off, uint64_t end)
{
	uint64_t first = off / F2FS_BLKSIZE, last = DIV_ROUND_UP(end, F2FS_BLKSIZE);

	if (f2fs_is_device_alias(fi))
		return 0;	/* overwritten in place: its blocks exist */
	if (f2fs_is_compressed(fi)) {
		first &= ~(uint64_t)(f2fs_cluster_size(fi) - 1);
		last = (last + f2fs_cluster_size(fi) - 1) & ~(uint64_t)(f2fs_cluster_size(fi) - 1);
	}
	return last - first;
}

/* After data went in: size (or the atomic size), times, the inode to write. */
static void write_done(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t end)
{
	if (fi->atomic) {
		if (end > fi->atomic_size)
			fi->atomic_size = end;
	} else if (end > fi->size) {
		fi->size = end;
	}
	/* mtime and ctime are the caller's: a user's write stamps them (do_write) */
	f2fs_mark_inode_dirty(sbi, fi);
}

ssize_t f2fs_file_write(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, const void *buf,
			size_t len, uint64_t off)
{
	uint64_t end = off + len, pos = off;
	int ret;

	if (!len)
		return 0;
	if (f2fs_encrypted_file(fi)) {
		ret = fscrypt_prepare(sbi->keyring, &fi->fscrypt);
		if (ret)
			return ret;
	}
	/* as the kernel: released blocks must be reserved again first */
	if (f2fs_is_compressed(fi) && f2fs_compress_released(fi))
		return -EPERM;
	if (f2fs_is_inline_data(fi)) {
		if (end <= f2fs_max_inline_data(fi)) {
			ret = f2fs_write_inline_data(sbi, fi, buf, len, off);
			if (ret)
				return ret;
			goto done;
		}
		ret = f2fs_convert_inline_inode(sbi, fi);
		if (ret)
			return ret;
	}
	ret = f2fs_check_space(sbi, write_reserve(fi, off, end));
	if (ret)
		return ret;
	while (pos < end) {
		uint64_t lblk = pos >> F2FS_BLKSIZE_BITS;
		uint64_t blocks = DIV_ROUND_UP(end, F2FS_BLKSIZE) - lblk;
		bool created;
		unsigned int order = f2fs_is_compressed(fi) ? fi->log_cluster_size :
				     write_folio_order(fi, lblk, blocks);
		struct folio *f = folio_grab(sbi, MAP_DATA, fi->ino, lblk, order, &created);
		uint64_t fbytes_end, wend;

		if (IS_ERR(f))
			return pos > off ? (ssize_t)(pos - off) : PTR_ERR(f);
		fbytes_end = (f->index + folio_nr_blocks(f)) << F2FS_BLKSIZE_BITS;
		wend = MIN(end, fbytes_end);
		if (created) {
			if (f2fs_is_compressed(fi))
				ret = f2fs_prepare_cluster_write(sbi, fi, f, pos, wend);
			else
				ret = prepare_write_folio(sbi, fi, f, pos, wend);
			folio_end_fill(sbi, f, !ret);
			/* lies inside the write (write_folio_order): written whole */
			fi->fresh_blocks += folio_nr_blocks(f);
		} else {
			ret = folio_wait_uptodate(f);
		}
		if (ret) {
			folio_put(sbi, f);
			return pos > off ? (ssize_t)(pos - off) : ret;
		}
		memcpy(f->data + (pos - (f->index << F2FS_BLKSIZE_BITS)),
		       (const uint8_t *)buf + (pos - off), wend - pos);
		f2fs_mark_range_dirty(sbi, f, pos >> F2FS_BLKSIZE_BITS,
				      DIV_ROUND_UP(wend, F2FS_BLKSIZE));
		folio_put(sbi, f);
		pos = wend;
	}
done:
	write_done(sbi, fi, end);
	return len;
}

/*
 * The ciphertext buffer of a write-through, kept per thread: a fresh 1 MiB
 * malloc per request came back from glibc as untouched pages each time (its
 * per-thread arenas give freed memory back), and faulting in and clearing
 * 256 pages cost about 7 % of an Adiantum write's daemon time. It holds only
 * ciphertext, so it needs no wiping; the thread's exit frees it. Only up to
 * FUSE's largest WRITE is kept: a library caller's bigger write allocates
 * its own, so that no thread holds on to a one-off large buffer.
 */
#define WT_BOUNCE_KEEP	(1u << 20)

struct wt_bounce {
	uint8_t *buf;
	size_t len;
};

static __thread struct wt_bounce *tls_bounce;
static pthread_key_t bounce_key;
static pthread_once_t bounce_once = PTHREAD_ONCE_INIT;

static void wt_bounce_destroy(void *p)
{
	struct wt_bounce *b = p;

	free(b->buf);
	free(b);
}

static void wt_bounce_key_init(void)
{
	pthread_key_create(&bounce_key, wt_bounce_destroy);
}

static uint8_t *wt_bounce_get(size_t len)
{
	struct wt_bounce *b = tls_bounce;

	if (!b) {
		pthread_once(&bounce_once, wt_bounce_key_init);
		b = calloc(1, sizeof(*b));
		if (!b)
			return NULL;
		pthread_setspecific(bounce_key, b);
		tls_bounce = b;
	}
	if (b->len < len) {
		uint8_t *n = malloc(len);

		if (!n)
			return NULL;
		free(b->buf);
		b->buf = n;
		b->len = len;
	}
	return b->buf;
}

/*
 * Write-through under drop-behind: whole blocks that no cached folio holds
 * go from the caller's buffer straight to their blocks, with writeback's
 * allocation, in-place policy and node updates. Through a folio they would
 * be copied once more and the folio dropped after its writeback anyway (the
 * kernel's page cache keeps the data under FUSE). The caller checked the
 * file (f2fs_write_through_ok) and holds it exclusively.
 */
ssize_t f2fs_write_through(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, const void *buf,
			   size_t len, uint64_t off)
{
	uint64_t first = off >> F2FS_BLKSIZE_BITS, nr = len >> F2FS_BLKSIZE_BITS, done = 0;
	uint8_t *bounce = NULL, *owned = NULL;
	struct wb_ctx *c;
	int ret, wret = 0;

	ret = f2fs_check_space(sbi, nr);
	if (!ret)
		ret = f2fs_convert_inline_inode(sbi, fi);
	if (!ret && f2fs_encrypted_file(fi)) {
		/* the ciphertext goes out from a copy: the caller's buffer stays as it is */
		bounce = len <= WT_BOUNCE_KEEP ? wt_bounce_get(len) : (owned = malloc(len));
		ret = bounce ? fscrypt_crypt_blocks(sbi->keyring, &fi->fscrypt, first, buf, bounce, nr, true) :
		      -ENOMEM;
		buf = bounce;
	}
	if (ret) {
		free(owned);
		return ret;
	}
	c = calloc(1, sizeof(*c));
	if (c)
		c->runs = calloc(nr, sizeof(*c->runs));
	if (!c || !c->runs) {
		free(c);
		free(owned);
		return -ENOMEM;
	}
	c->ipu = !must_update_outplace(sbi, fi, 0) && may_update_inplace(sbi, fi, false);
	/*
	 * The writepages lock keeps this request's new blocks consecutive; the
	 * data need not go out under it, so that writers of other files do
	 * not queue behind this one's I/O (seed 004's O_SYNC writers). Nothing
	 * can read or move these blocks before it lands: readers and fsync
	 * of this file wait on its lock, GC and checkpoints on cp_rwsem.
	 */
	c->defer = true;
	pthread_mutex_lock(&sbi->writepages);
	for (; done < nr && !ret; done += !ret)
		ret = wb_block(sbi, fi, c, first + done,
			       (uint8_t *)buf + (done << F2FS_BLKSIZE_BITS));
	ret = wb_ctx_finish(sbi, fi, c, ret);
	pthread_mutex_unlock(&sbi->writepages);
	/*
	 * Every block queued already has a dnode pointing at it: its data must
	 * go out even when a later block failed (ENOSPC), or the file would
	 * show whatever the block held before. That much is a short write.
	 */
	for (unsigned int i = 0; i < c->nruns && !wret; i++) {
		struct iovec v = { (void *)c->runs[i].buf,
				   (size_t)c->runs[i].cnt << F2FS_BLKSIZE_BITS };

		wret = wb_write(sbi, &v, 1, c->runs[i].start, c->runs[i].cnt, c->runs[i].moved);
	}
	free(c->runs);
	free(c);
	free(owned);
	if (wret)
		return wret;
	atomic_fetch_add(&sbi->ctr->through_blocks, done);
	if (!done)
		return ret;
	write_done(sbi, fi, off + (done << F2FS_BLKSIZE_BITS));
	return (ssize_t)(done << F2FS_BLKSIZE_BITS);
}

/*
 * Worth it and safe: drop-behind on, whole blocks, at least a few of them
 * (smaller writes batch better through write-behind), a plain file, and no
 * cached folio in the range whose contents would go stale.
 */
bool f2fs_write_through_ok(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, size_t len,
			   uint64_t off)
{
	/* its blocks go out after the writepages lock: out of a zone's order */
	if (sbi->zoned)
		return false;
	if (sbi->opts.dontcache <= 0 || !sbi->opts.write_through || len < WRITE_THROUGH_MIN ||
	    (off | len) & (F2FS_BLKSIZE - 1))
		return false;
	/* an empty inline file converts without a folio (f2fs_write_through) */
	if (fi->atomic || f2fs_is_compressed(fi) || f2fs_is_device_alias(fi) ||
	    (f2fs_is_inline_data(fi) && fi->size) ||
	    (f2fs_is_encrypted(fi) && (!f2fs_encrypted_file(fi) || fscrypt_prepare(sbi->keyring, &fi->fscrypt))))
		return false;
	return !folio_range_cached(sbi, MAP_DATA, fi->ino, off >> F2FS_BLKSIZE_BITS,
				   (off + len) >> F2FS_BLKSIZE_BITS);
}
