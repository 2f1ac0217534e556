// SPDX-License-Identifier: GPL-2.0
/*
 * The node manager: nid -> block address through the NAT (its journal in the
 * hot data summary first, then whichever of the two NAT copies the checkpoint
 * bitmap marks valid), and node blocks read through the node mapping of the
 * folio cache with their footers checked against the NAT. Indirect-node
 * readahead (seed 002) lives here too.
 */
#include <stdlib.h>

#include "f2fs.h"

/// NAT ///

int f2fs_build_node_manager(struct f2fs_sb_info *sbi)
{
	struct f2fs_nm_info *nm = &sbi->nm;

	pthread_mutex_init(&nm->lock, NULL);
	nm->nat_blkaddr = le32(sbi->raw_super.nat_blkaddr);
	nm->nat_blocks = (le32(sbi->raw_super.segment_count_nat) / 2) << sbi->log_blocks_per_seg;
	nm->max_nid = NAT_ENTRY_PER_BLOCK * nm->nat_blocks;
	nm->nat_bitmap_size = le32(sbi->ckpt->nat_ver_bitmap_bytesize);
	nm->nat_bitmap = f2fs_cp_nat_bitmap(sbi);
	nm->journal = &sbi->sm.sum_blk[CURSEG_HOT_DATA]->journal;
	nm->nat_hash_size = 4096;
	nm->nat_hash = calloc(nm->nat_hash_size, sizeof(*nm->nat_hash));
	if (!nm->nat_hash)
		return -ENOMEM;
	nm->valid_nodes = le32(sbi->ckpt->valid_node_count);
	nm->valid_inodes = le32(sbi->ckpt->valid_inode_count);
	nm->scan_nid = le32(sbi->ckpt->next_free_nid);
	if (nm->scan_nid < F2FS_RESERVED_NODE_NUM || nm->scan_nid >= nm->max_nid)
		nm->scan_nid = F2FS_RESERVED_NODE_NUM;
	return 0;
}

void f2fs_destroy_node_manager(struct f2fs_sb_info *sbi)
{
	struct f2fs_nm_info *nm = &sbi->nm;

	for (unsigned int b = 0; nm->nat_hash && b < nm->nat_hash_size; b++) {
		struct nat_entry *e = nm->nat_hash[b];

		while (e) {
			struct nat_entry *next = e->hnext;

			free(e);
			e = next;
		}
	}
	free(nm->nat_hash);
	free(nm->free_nids);
	free(nm->freed_nids);
	nm->nat_hash = NULL;
	nm->free_nids = nm->freed_nids = NULL;
	nm->journal = NULL;
}

static struct nat_entry *nat_cache_find(struct f2fs_nm_info *nm, nid_t nid)
{
	for (struct nat_entry *e = nm->nat_hash[nid % nm->nat_hash_size]; e; e = e->hnext)
		if (e->nid == nid)
			return e;
	return NULL;
}

static struct nat_entry *nat_cache_grab(struct f2fs_nm_info *nm, nid_t nid)
{
	struct nat_entry *e = nat_cache_find(nm, nid);

	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->nid = nid;
	e->hnext = nm->nat_hash[nid % nm->nat_hash_size];
	nm->nat_hash[nid % nm->nat_hash_size] = e;
	return e;
}

static int nat_journal_find(struct f2fs_journal *j, nid_t nid)
{
	for (int i = 0; i < le16(j->n_nats); i++)
		if (le32(j->nat_j.entries[i].nid) == nid)
			return i;
	return -1;
}

static block_t nat_block_addr(struct f2fs_nm_info *nm, nid_t nid, unsigned int log_bps)
{
	unsigned int block_off = nid / NAT_ENTRY_PER_BLOCK;
	unsigned int bps = 1u << log_bps;
	block_t addr = nm->nat_blkaddr + ((block_off >> log_bps) << (log_bps + 1)) +
		       (block_off & (bps - 1));

	if (f2fs_test_bit(block_off, nm->nat_bitmap))
		addr += bps;
	return addr;
}

/* Read one metadata block through the meta mapping of the cache. */
static struct folio *get_meta_folio(struct f2fs_sb_info *sbi, block_t addr, const char *what)
{
	bool created;
	struct folio *f = folio_grab(sbi, MAP_META, 0, addr, 0, &created);
	int ret;

	if (IS_ERR(f))
		return f;
	if (created) {
		ret = f2fs_dev_read_blocks(&sbi->dev, f->data, addr, 1);
		folio_end_fill(sbi, f, !ret);
		if (ret) {
			folio_put(sbi, f);
			return ERR_PTR(f2fs_error(sbi, EIO, "%s (block %u): read failed: %s",
						  what, addr, strerror(-ret)));
		}
		return f;
	}
	if (folio_wait_uptodate(f)) {
		folio_put(sbi, f);
		return ERR_PTR(-EIO);
	}
	return f;
}

/* What disk says, journal first: the state as of the last checkpoint. */
static int read_nat_entry(struct f2fs_sb_info *sbi, nid_t nid, struct f2fs_nat_entry *out)
{
	struct f2fs_nm_info *nm = &sbi->nm;
	struct folio *f;
	int i;

	pthread_mutex_lock(&nm->lock);
	i = nat_journal_find(nm->journal, nid);
	if (i >= 0)
		*out = nm->journal->nat_j.entries[i].ne;
	pthread_mutex_unlock(&nm->lock);
	if (i >= 0)
		return 0;
	f = get_meta_folio(sbi, nat_block_addr(nm, nid, sbi->log_blocks_per_seg), "NAT block");
	if (IS_ERR(f))
		return PTR_ERR(f);
	*out = ((struct f2fs_nat_block *)f->data)->entries[nid % NAT_ENTRY_PER_BLOCK];
	folio_put(sbi, f);
	return 0;
}

int f2fs_get_node_info(struct f2fs_sb_info *sbi, nid_t nid, struct node_info *ni)
{
	struct f2fs_nm_info *nm = &sbi->nm;
	struct f2fs_nat_entry e = { 0 };
	struct nat_entry *ce;
	int ret;

	if (nid < F2FS_RESERVED_NODE_NUM || nid >= nm->max_nid)
		return f2fs_error(sbi, EFSCORRUPTED, "node id %u is out of range (max %u)", nid,
				  nm->max_nid);
	pthread_mutex_lock(&nm->lock);
	ce = nat_cache_find(nm, nid);
	if (ce) {
		ni->nid = nid;
		ni->ino = ce->ino;
		ni->blk_addr = ce->blk;
		ni->version = ce->version;
	}
	pthread_mutex_unlock(&nm->lock);
	if (ce)
		return 0;
	ret = read_nat_entry(sbi, nid, &e);
	if (ret)
		return ret;
	ni->nid = nid;
	ni->ino = le32(e.ino);
	ni->blk_addr = le32(e.block_addr);
	ni->version = e.version;
	return 0;
}

/// Node blocks ///

static int check_footer_quiet(const struct f2fs_node *node, const struct node_info *ni)
{
	return le32(node->footer.nid) != ni->nid || le32(node->footer.ino) != ni->ino;
}

static int check_node_footer(struct f2fs_sb_info *sbi, const struct f2fs_node *node,
			     const struct node_info *ni)
{
	if (check_footer_quiet(node, ni))
		return f2fs_error(sbi, EFSCORRUPTED,
				  "node block %u: footer says nid %u ino %u, NAT says nid %u "
				  "ino %u", ni->blk_addr, le32(node->footer.nid),
				  le32(node->footer.ino), ni->nid, ni->ino);
	return 0;
}

static int read_node_block(struct f2fs_sb_info *sbi, struct folio *f, nid_t nid)
{
	struct node_info ni;
	int ret;

	ret = f2fs_get_node_info(sbi, nid, &ni);
	if (ret)
		return ret;
	if (ni.blk_addr == NULL_ADDR || ni.blk_addr == NEW_ADDR)
		return f2fs_error(sbi, EFSCORRUPTED, "NAT: node %u has no block (address 0x%x)",
				  nid, ni.blk_addr);
	if (!f2fs_valid_main_blkaddr(sbi, ni.blk_addr))
		return f2fs_error(sbi, EFSCORRUPTED,
				  "NAT: node %u points to block %u outside the main area", nid,
				  ni.blk_addr);
	ret = f2fs_dev_read_blocks(&sbi->dev, f->data, ni.blk_addr, 1);
	if (ret)
		return f2fs_error(sbi, EIO, "node block %u (nid %u): read failed: %s",
				  ni.blk_addr, nid, strerror(-ret));
	atomic_fetch_add(&sbi->ctr->node_reads, 1);
	return check_node_footer(sbi, folio_node(f), &ni);
}

struct folio *f2fs_get_node_folio(struct f2fs_sb_info *sbi, nid_t nid)
{
	bool created;
	struct folio *f = folio_grab(sbi, MAP_NODE, 0, nid, 0, &created);
	int ret;

	if (IS_ERR(f))
		return f;
	if (created) {
		ret = read_node_block(sbi, f, nid);
		folio_end_fill(sbi, f, !ret);
	} else {
		ret = folio_wait_uptodate(f);
	}
	if (ret) {
		folio_put(sbi, f);
		return ERR_PTR(ret);
	}
	return f;
}

/*
 * Readahead of sibling dnodes under one indirect node (seed 002): after a
 * miss, the following nids of the same parent are read in one batch, so a
 * walk over a large file costs one synchronous read per indirect node rather
 * than one per dnode. Nodes already cached are skipped; contiguous node
 * blocks are read with one request.
 */
/* Readahead batch entries in block order, so neighbouring blocks merge into one request. */
static void ra_sort_by_addr(struct folio **batch, struct node_info *info, unsigned int n)
{
	for (unsigned int i = 1; i < n; i++) {
		struct folio *f = batch[i];
		struct node_info ni = info[i];
		unsigned int j = i;

		for (; j && info[j - 1].blk_addr > ni.blk_addr; j--) {
			batch[j] = batch[j - 1];
			info[j] = info[j - 1];
		}
		batch[j] = f;
		info[j] = ni;
	}
}

int f2fs_ra_node_siblings(struct f2fs_sb_info *sbi, const nid_t *nids, unsigned int count)
{
	struct folio *batch[MAX_RA_NODE];
	struct node_info info[MAX_RA_NODE];
	unsigned int n = 0;
	int err = 0;

	for (unsigned int i = 0; i < count && n < MAX_RA_NODE; i++) {
		bool created;
		struct folio *f;

		if (!nids[i] || f2fs_get_node_info(sbi, nids[i], &info[n]) ||
		    !f2fs_valid_main_blkaddr(sbi, info[n].blk_addr))
			continue;
		f = folio_grab(sbi, MAP_NODE, 0, nids[i], 0, &created);
		if (IS_ERR(f))
			break;
		if (!created) {
			folio_put(sbi, f);
			continue;
		}
		batch[n++] = f;
	}
	ra_sort_by_addr(batch, info, n);
	/* issue runs of physically contiguous node blocks as single requests */
	for (unsigned int i = 0; i < n;) {
		struct iovec iov[MAX_RA_NODE];
		unsigned int j = i + 1;
		int ret;

		while (j < n && info[j].blk_addr == info[j - 1].blk_addr + 1)
			j++;
		for (unsigned int k = i; k < j; k++) {
			iov[k - i].iov_base = batch[k]->data;
			iov[k - i].iov_len = F2FS_BLKSIZE;
		}
		ret = f2fs_dev_readv_blocks(&sbi->dev, iov, j - i, info[i].blk_addr);
		if (ret && !err)
			err = ret;
		for (unsigned int k = i; k < j; k++) {
			/* a bad footer just leaves the node to a later synchronous read */
			bool ok = !ret && !check_footer_quiet(folio_node(batch[k]), &info[k]);

			atomic_fetch_add(&sbi->ctr->node_reads, 1);
			folio_end_fill(sbi, batch[k], ok);
			folio_put(sbi, batch[k]);
		}
		i = j;
	}
	return err;
}

/// Free nids ///

static int push_nid(nid_t **v, unsigned int *n, unsigned int *cap, nid_t nid)
{
	if (*n == *cap) {
		unsigned int nc = *cap ? *cap * 2 : 256;
		nid_t *nv = realloc(*v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = nid;
	return 0;
}

/*
 * Refill the free-nid list from the NAT, a block at a time from where the
 * last scan stopped. A nid is free when its newest entry (cache, journal,
 * block, in that order) has no block and nobody holds it in memory.
 */
static int scan_free_nids(struct f2fs_sb_info *sbi)
{
	struct f2fs_nm_info *nm = &sbi->nm;
	unsigned int nblocks = DIV_ROUND_UP(nm->max_nid, NAT_ENTRY_PER_BLOCK);
	unsigned int scanned = 0;

	while (nm->nr_free < 64 && scanned++ < nblocks) {
		nid_t start = nm->scan_nid - nm->scan_nid % NAT_ENTRY_PER_BLOCK;
		block_t addr = nat_block_addr(nm, start, sbi->log_blocks_per_seg);
		struct folio *f;

		pthread_mutex_unlock(&nm->lock);
		f = get_meta_folio(sbi, addr, "NAT block");
		pthread_mutex_lock(&nm->lock);
		if (IS_ERR(f))
			return PTR_ERR(f);
		const struct f2fs_nat_block *blk = (const void *)f->data;

		for (unsigned int i = 0; i < NAT_ENTRY_PER_BLOCK; i++) {
			nid_t nid = start + i;
			int j;

			if (nid < F2FS_RESERVED_NODE_NUM || nid >= nm->max_nid ||
			    le32(blk->entries[i].block_addr) != NULL_ADDR ||
			    nat_cache_find(nm, nid))
				continue;
			j = nat_journal_find(nm->journal, nid);
			if (j >= 0 && le32(nm->journal->nat_j.entries[j].ne.block_addr) != NULL_ADDR)
				continue;
			if (push_nid(&nm->free_nids, &nm->nr_free, &nm->free_cap, nid))
				break;
		}
		folio_put(sbi, f);
		nm->scan_nid = start + NAT_ENTRY_PER_BLOCK;
		if (nm->scan_nid >= nm->max_nid)
			nm->scan_nid = 0;
	}
	return 0;
}

int f2fs_alloc_nid(struct f2fs_sb_info *sbi, nid_t ino, nid_t *out)
{
	struct f2fs_nm_info *nm = &sbi->nm;
	struct nat_entry *e;
	int ret = 0;

	pthread_mutex_lock(&nm->lock);
	for (;;) {
		if (!nm->nr_free) {
			ret = scan_free_nids(sbi);
			if (ret)
				break;
			if (!nm->nr_free) {
				ret = -ENOSPC;
				break;
			}
		}
		/* lowest first, as the kernel hands them out */
		nid_t nid = nm->free_nids[0];

		memmove(nm->free_nids, nm->free_nids + 1, --nm->nr_free * sizeof(nid_t));

		if (nat_cache_find(nm, nid))
			continue;	/* taken since the scan */
		e = nat_cache_grab(nm, nid);
		if (!e) {
			ret = -ENOMEM;
			break;
		}
		e->ino = ino ? ino : nid;
		e->blk = NEW_ADDR;
		*out = nid;
		break;
	}
	pthread_mutex_unlock(&nm->lock);
	return ret;
}

static void nat_cache_remove(struct f2fs_nm_info *nm, nid_t nid)
{
	struct nat_entry **pp = &nm->nat_hash[nid % nm->nat_hash_size];

	while (*pp && (*pp)->nid != nid)
		pp = &(*pp)->hnext;
	if (*pp && !(*pp)->dirty) {
		struct nat_entry *e = *pp;

		*pp = e->hnext;
		free(e);
	}
}

void f2fs_alloc_nid_failed(struct f2fs_sb_info *sbi, nid_t nid)
{
	struct f2fs_nm_info *nm = &sbi->nm;

	pthread_mutex_lock(&nm->lock);
	nat_cache_remove(nm, nid);
	push_nid(&nm->free_nids, &nm->nr_free, &nm->free_cap, nid);
	pthread_mutex_unlock(&nm->lock);
}

static void nat_set_dirty(struct f2fs_nm_info *nm, struct nat_entry *e)
{
	if (e->dirty)
		return;
	e->dirty = true;
	e->dnext = nm->dirty;
	nm->dirty = e;
	nm->nr_dirty++;
}

/// Node blocks: create, drop, write ///

/* As the kernel's IS_DNODE: which node offsets hold data addresses. */
bool f2fs_is_dnode_ofs(unsigned int ofs)
{
	if (ofs == XATTR_NODE_OFFSET)
		return true;
	if (ofs == 3 || ofs == 4 + NIDS_PER_BLOCK || ofs == 5 + 2 * NIDS_PER_BLOCK)
		return false;
	if (ofs >= 6 + 2 * NIDS_PER_BLOCK) {
		ofs -= 6 + 2 * NIDS_PER_BLOCK;
		if (!(ofs % (NIDS_PER_BLOCK + 1)))
			return false;
	}
	return true;
}

struct folio *f2fs_new_node_folio(struct f2fs_sb_info *sbi, nid_t nid, nid_t ino,
				  unsigned int ofs, bool is_dir)
{
	bool created;
	struct folio *f = folio_grab(sbi, MAP_NODE, 0, nid, 0, &created);
	struct f2fs_node *n;

	if (IS_ERR(f))
		return f;
	if (!created) {
		/* a stale cached copy of a freed nid: it is ours now */
		folio_wait_uptodate(f);
	}
	n = folio_node(f);
	memset(n, 0, F2FS_BLKSIZE);
	n->footer.nid = nid;
	n->footer.ino = ino;
	/* non-directory nodes are "cold": their dnodes go to the warm node log */
	n->footer.flag = (ofs << OFFSET_BIT_SHIFT) | (is_dir ? 0 : 1u << COLD_BIT_SHIFT);
	if (created)
		folio_end_fill(sbi, f, true);
	folio_mark_dirty(sbi, f);
	return f;
}

int f2fs_truncate_node(struct f2fs_sb_info *sbi, nid_t nid)
{
	struct f2fs_nm_info *nm = &sbi->nm;
	struct node_info ni;
	struct nat_entry *e;
	struct folio *f;
	int ret;

	ret = f2fs_get_node_info(sbi, nid, &ni);
	if (ret)
		return ret;
	f = folio_lookup(sbi, MAP_NODE, 0, nid);
	if (f) {
		folio_clear_dirty(sbi, f);
		folio_put(sbi, f);
	}
	pthread_mutex_lock(&nm->lock);
	e = nat_cache_grab(nm, nid);
	if (!e) {
		pthread_mutex_unlock(&nm->lock);
		return -ENOMEM;
	}
	if (f2fs_valid_main_blkaddr(sbi, ni.blk_addr)) {
		nm->valid_nodes--;
		if (ni.ino == nid)
			nm->valid_inodes--;
	}
	if (ni.blk_addr == NEW_ADDR) {
		/* never written: nothing on disk refers to it */
		nat_cache_remove(nm, nid);
		push_nid(&nm->free_nids, &nm->nr_free, &nm->free_cap, nid);
		pthread_mutex_unlock(&nm->lock);
		return 0;
	}
	e->ino = 0;
	e->blk = NULL_ADDR;
	e->version = ni.version + 1;
	nat_set_dirty(nm, e);
	push_nid(&nm->freed_nids, &nm->nr_freed, &nm->freed_cap, nid);
	pthread_mutex_unlock(&nm->lock);
	if (f2fs_valid_main_blkaddr(sbi, ni.blk_addr))
		f2fs_invalidate_block(sbi, ni.blk_addr);
	return 0;
}

static int node_seg_type(const struct f2fs_node *n)
{
	if (!f2fs_is_dnode_ofs(ofs_of_node(n)))
		return CURSEG_COLD_NODE;
	return (n->footer.flag & (1u << COLD_BIT_SHIFT)) ? CURSEG_WARM_NODE : CURSEG_HOT_NODE;
}

/*
 * Out-of-place node write, in two halves around the device request: a new
 * block from the node log of its temperature, the footer stamped with the
 * checkpoint version (what roll-forward recovery matches) and the next
 * block of the log; after the write, the NAT pointed at the new block and
 * the old one invalidated.
 */
struct node_wb {
	struct folio *f;
	block_t old, blk;
	unsigned int version;
};

static int node_wb_prepare(struct f2fs_sb_info *sbi, struct node_wb *w)
{
	struct f2fs_node *n = folio_node(w->f);
	struct f2fs_summary sum = { .nid = (nid_t)w->f->index };
	struct node_info ni;
	block_t next;
	int ret;

	ret = f2fs_get_node_info(sbi, w->f->index, &ni);
	if (ret)
		return ret;
	ret = f2fs_allocate_block_next(sbi, node_seg_type(n), &sum, &w->blk, &next);
	if (ret)
		return ret;
	w->old = ni.blk_addr;
	w->version = ni.version;
	n->footer.cp_ver = f2fs_node_cp_ver(sbi);
	n->footer.next_blkaddr = next;
	f2fs_set_inode_chksum(sbi, n);
	return 0;
}

static int node_wb_commit(struct f2fs_sb_info *sbi, struct node_wb *w)
{
	struct f2fs_nm_info *nm = &sbi->nm;
	struct f2fs_node *n = folio_node(w->f);
	nid_t nid = w->f->index;
	struct nat_entry *e;

	pthread_mutex_lock(&nm->lock);
	e = nat_cache_grab(nm, nid);
	if (!e) {
		pthread_mutex_unlock(&nm->lock);
		f2fs_invalidate_block(sbi, w->blk);
		return -ENOMEM;
	}
	if (!f2fs_valid_main_blkaddr(sbi, w->old)) {
		nm->valid_nodes++;
		if (le32(n->footer.ino) == nid)
			nm->valid_inodes++;
	}
	e->ino = le32(n->footer.ino);
	e->blk = w->blk;
	e->version = w->version;
	nat_set_dirty(nm, e);
	pthread_mutex_unlock(&nm->lock);
	if (f2fs_valid_main_blkaddr(sbi, w->old))
		f2fs_invalidate_block(sbi, w->old);
	folio_clear_dirty(sbi, w->f);
	return 0;
}

#define NODE_WB_BATCH	64	/* 256 KiB of node blocks per request at most */

/* Write prepared nodes w[0..n) in runs of consecutive blocks, then commit them. */
static int node_wb_submit(struct f2fs_sb_info *sbi, struct node_wb *w, unsigned int n)
{
	struct iovec iov[NODE_WB_BATCH];
	int ret = 0;

	for (unsigned int i = 0; i < n;) {
		unsigned int j = i;

		while (j < n && w[j].blk == w[i].blk + (j - i)) {
			iov[j - i].iov_base = folio_node(w[j].f);
			iov[j - i].iov_len = F2FS_BLKSIZE;
			j++;
		}
		if (!ret && f2fs_dev_writev_blocks(&sbi->dev, iov, j - i, w[i].blk))
			ret = f2fs_error(sbi, EIO, "node %u: write to block %u (%u blocks) failed",
					 (nid_t)w[i].f->index, w[i].blk, j - i);
		for (unsigned int k = i; k < j; k++) {
			int err = ret ? ret : node_wb_commit(sbi, &w[k]);

			if (ret)
				f2fs_invalidate_block(sbi, w[k].blk);
			if (err && !ret)
				ret = err;
		}
		i = j;
	}
	return ret;
}

/*
 * Write the dirty ones of nodes v[0..n), in that order, merging blocks that
 * the log hands out consecutively into one request. writepages keeps other
 * writers' allocations from landing in between.
 */
int f2fs_write_node_folios(struct f2fs_sb_info *sbi, struct folio **v, size_t n)
{
	struct node_wb w[NODE_WB_BATCH];
	unsigned int nw = 0;
	int ret = 0;

	pthread_mutex_lock(&sbi->writepages);
	for (size_t i = 0; i < n && !ret; i++) {
		if (!v[i]->dirty)
			continue;
		w[nw].f = v[i];
		ret = node_wb_prepare(sbi, &w[nw]);
		if (ret)
			break;
		if (++nw == NODE_WB_BATCH) {
			ret = node_wb_submit(sbi, w, nw);
			nw = 0;
		}
	}
	if (ret) {
		for (unsigned int k = 0; k < nw; k++)
			f2fs_invalidate_block(sbi, w[k].blk);
	} else if (nw) {
		ret = node_wb_submit(sbi, w, nw);
	}
	pthread_mutex_unlock(&sbi->writepages);
	return ret;
}

int f2fs_write_node_folio(struct f2fs_sb_info *sbi, struct folio *f)
{
	return f2fs_write_node_folios(sbi, &f, 1);
}

/// Flushing the NAT at checkpoint ///

static void raw_nat_from(struct f2fs_nat_entry *raw, const struct nat_entry *e)
{
	raw->version = e->version;
	raw->ino = e->ino;
	raw->block_addr = e->blk;
}

/* Entries of one NAT block go to the other copy; the bit flip publishes it. */
static int write_nat_block(struct f2fs_sb_info *sbi, unsigned int blk_off,
			   struct nat_entry **entries, unsigned int n)
{
	struct f2fs_nm_info *nm = &sbi->nm;
	nid_t start = blk_off * NAT_ENTRY_PER_BLOCK;
	block_t old = nat_block_addr(nm, start, sbi->log_blocks_per_seg), addr;
	struct f2fs_nat_block *blk = malloc(F2FS_BLKSIZE);
	struct folio *f;
	int ret;

	if (!blk)
		return -ENOMEM;
	f = get_meta_folio(sbi, old, "NAT block");
	if (IS_ERR(f)) {
		free(blk);
		return PTR_ERR(f);
	}
	memcpy(blk, f->data, F2FS_BLKSIZE);
	folio_put(sbi, f);
	for (unsigned int i = 0; i < n; i++)
		raw_nat_from(&blk->entries[entries[i]->nid - start], entries[i]);
	f2fs_change_bit_msb(blk_off, nm->nat_bitmap);
	addr = nat_block_addr(nm, start, sbi->log_blocks_per_seg);
	ret = f2fs_write_meta_block(sbi, addr, blk);
	free(blk);
	return ret;
}

static int cmp_nat_entry(const void *a, const void *b)
{
	nid_t x = (*(struct nat_entry *const *)a)->nid, y = (*(struct nat_entry *const *)b)->nid;

	return x < y ? -1 : x > y;
}

int f2fs_flush_nat(struct f2fs_sb_info *sbi)
{
	struct f2fs_nm_info *nm = &sbi->nm;
	struct f2fs_journal *j = nm->journal;
	struct nat_entry **v;
	unsigned int n = 0, fresh = 0;
	int ret = 0;

	if (!nm->nr_dirty)
		return 0;
	v = malloc(nm->nr_dirty * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (struct nat_entry *e = nm->dirty; e; e = e->dnext) {
		v[n++] = e;
		if (nat_journal_find(j, e->nid) < 0)
			fresh++;
	}
	if (le16(j->n_nats) + fresh <= NAT_JOURNAL_ENTRIES) {
		for (unsigned int i = 0; i < n; i++) {
			int k = nat_journal_find(j, v[i]->nid);

			if (k < 0) {
				k = le16(j->n_nats);
				j->n_nats = k + 1;
				j->nat_j.entries[k].nid = v[i]->nid;
			}
			raw_nat_from(&j->nat_j.entries[k].ne, v[i]);
		}
	} else {
		/* move the journal into the dirty set, then write whole blocks */
		for (int k = 0; k < le16(j->n_nats); k++) {
			nid_t nid = le32(j->nat_j.entries[k].nid);
			struct nat_entry *e = nat_cache_grab(nm, nid);

			if (!e) {
				free(v);
				return -ENOMEM;
			}
			if (!e->dirty) {
				e->ino = le32(j->nat_j.entries[k].ne.ino);
				e->blk = le32(j->nat_j.entries[k].ne.block_addr);
				e->version = j->nat_j.entries[k].ne.version;
				nat_set_dirty(nm, e);
				struct nat_entry **nv = realloc(v, (n + 1) * sizeof(*v));

				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
				v[n++] = e;
			}
		}
		j->n_nats = 0;
		qsort(v, n, sizeof(*v), cmp_nat_entry);
		for (unsigned int i = 0; i < n && !ret;) {
			unsigned int blk_off = v[i]->nid / NAT_ENTRY_PER_BLOCK, k = i;

			while (k < n && v[k]->nid / NAT_ENTRY_PER_BLOCK == blk_off)
				k++;
			ret = write_nat_block(sbi, blk_off, v + i, k - i);
			i = k;
		}
	}
	if (!ret) {
		for (unsigned int i = 0; i < n; i++)
			v[i]->dirty = false;
		nm->dirty = NULL;
		nm->nr_dirty = 0;
	}
	free(v);
	return ret;
}

/* The new checkpoint no longer needs the freed nids' old nodes: reuse them. */
void f2fs_nat_after_checkpoint(struct f2fs_sb_info *sbi)
{
	struct f2fs_nm_info *nm = &sbi->nm;

	pthread_mutex_lock(&nm->lock);
	for (unsigned int i = 0; i < nm->nr_freed; i++) {
		nat_cache_remove(nm, nm->freed_nids[i]);
		push_nid(&nm->free_nids, &nm->nr_free, &nm->free_cap, nm->freed_nids[i]);
	}
	nm->nr_freed = 0;
	pthread_mutex_unlock(&nm->lock);
}

static int cmp_node_folio(const void *a, const void *b)
{
	const struct folio *x = *(struct folio *const *)a, *y = *(struct folio *const *)b;

	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * In nid order: sibling dnodes then sit at ascending addresses, so the
 * readahead of siblings (seed 002) reads them with one request.
 */
int f2fs_write_dirty_nodes(struct f2fs_sb_info *sbi)
{
	struct folio **v;
	size_t n;
	int ret = folio_collect_dirty(sbi, MAP_NODE, 0, &v, &n);

	if (ret)
		return ret;
	qsort(v, n, sizeof(*v), cmp_node_folio);
	ret = f2fs_write_node_folios(sbi, v, n);
	for (size_t i = 0; i < n; i++)
		folio_put(sbi, v[i]);
	free(v);
	return ret;
}

bool f2fs_nid_checkpointed(struct f2fs_sb_info *sbi, nid_t nid)
{
	struct f2fs_nat_entry e = { 0 };

	if (nid < F2FS_RESERVED_NODE_NUM || nid >= sbi->nm.max_nid || read_nat_entry(sbi, nid, &e))
		return false;
	return le32(e.block_addr) != NULL_ADDR;
}

int f2fs_claim_nid(struct f2fs_sb_info *sbi, nid_t nid)
{
	struct f2fs_nm_info *nm = &sbi->nm;
	struct nat_entry *e;
	int ret = 0;

	pthread_mutex_lock(&nm->lock);
	e = nat_cache_find(nm, nid);
	if (e && e->blk != NULL_ADDR) {
		ret = -EEXIST;
	} else {
		e = nat_cache_grab(nm, nid);
		if (!e) {
			ret = -ENOMEM;
		} else {
			e->ino = nid;
			e->blk = NEW_ADDR;
			for (unsigned int i = 0; i < nm->nr_free; i++) {
				if (nm->free_nids[i] == nid) {
					nm->free_nids[i] = nm->free_nids[--nm->nr_free];
					break;
				}
			}
		}
	}
	pthread_mutex_unlock(&nm->lock);
	return ret;
}

/* Inode blocks carry a checksum when the feature and extra attributes allow it. */
void f2fs_set_inode_chksum(struct f2fs_sb_info *sbi, struct f2fs_node *n)
{
	if (ofs_of_node(n) == 0 && le32(n->footer.ino) == le32(n->footer.nid) &&
	    f2fs_has_feature(sbi, F2FS_FEATURE_INODE_CHKSUM) && (n->i.i_inline & F2FS_EXTRA_ATTR))
		n->i.i_inode_checksum = f2fs_inode_chksum(sbi->chksum_seed, n);
}

/// Every inode, for a whole-image pass ///

#define WALK_NAT_RUN	256u	/* NAT blocks per read: 1 MiB */
#define WALK_NODE_RUN	256u	/* span of one inode read, in blocks */
#define WALK_NODE_GAP	16u	/* free blocks read through rather than split a run */

struct walk_list {
	uint64_t *v;		/* block address << 32 | nid: sorts by address */
	size_t n, cap;
};

static int walk_push(struct walk_list *l, block_t blk, nid_t nid)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 4096;
		uint64_t *nv = realloc(l->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = nc;
	}
	l->v[l->n++] = (uint64_t)blk << 32 | nid;
	return 0;
}

/* One NAT block's entries as of now: the block, then the journal, then the cache. */
static int walk_nat_block(struct f2fs_sb_info *sbi, nid_t start, struct f2fs_nat_entry *e,
			  struct walk_list *l)
{
	struct f2fs_nm_info *nm = &sbi->nm;
	struct f2fs_journal *j = nm->journal;

	pthread_mutex_lock(&nm->lock);
	for (int k = 0; k < le16(j->n_nats); k++) {
		nid_t nid = le32(j->nat_j.entries[k].nid);

		if (nid >= start && nid - start < NAT_ENTRY_PER_BLOCK)
			e[nid - start] = j->nat_j.entries[k].ne;
	}
	for (unsigned int i = 0; i < NAT_ENTRY_PER_BLOCK; i++) {
		struct nat_entry *ce = nat_cache_find(nm, start + i);

		if (ce)
			raw_nat_from(&e[i], ce);
	}
	pthread_mutex_unlock(&nm->lock);
	for (unsigned int i = 0; i < NAT_ENTRY_PER_BLOCK; i++) {
		nid_t nid = start + i;
		block_t blk = le32(e[i].block_addr);

		if (nid < F2FS_RESERVED_NODE_NUM || nid >= nm->max_nid ||
		    le32(e[i].ino) != nid || blk == NULL_ADDR)
			continue;
		if (!f2fs_valid_main_blkaddr(sbi, blk))
			return f2fs_error(sbi, EFSCORRUPTED, "NAT: inode %u points to block "
					  "0x%x outside the main area", nid, blk);
		if (walk_push(l, blk, nid))
			return -ENOMEM;
	}
	return 0;
}

/* The inodes the NAT maps, from its blocks read in runs of neighbouring addresses. */
static int walk_collect_inodes(struct f2fs_sb_info *sbi, struct walk_list *l)
{
	struct f2fs_nm_info *nm = &sbi->nm;
	unsigned int nblocks = DIV_ROUND_UP(nm->max_nid, NAT_ENTRY_PER_BLOCK);
	uint8_t *buf;
	int ret = 0;

	if (posix_memalign((void **)&buf, F2FS_BLKSIZE, (size_t)WALK_NAT_RUN * F2FS_BLKSIZE))
		return -ENOMEM;
	for (unsigned int b = 0; b < nblocks && !ret;) {
		block_t addr = nat_block_addr(nm, b * NAT_ENTRY_PER_BLOCK, sbi->log_blocks_per_seg);
		unsigned int n = 1;

		while (b + n < nblocks && n < WALK_NAT_RUN &&
		       nat_block_addr(nm, (b + n) * NAT_ENTRY_PER_BLOCK, sbi->log_blocks_per_seg) ==
		       addr + n)
			n++;
		ret = f2fs_dev_read_blocks(&sbi->dev, buf, addr, n);
		if (ret) {
			ret = f2fs_error(sbi, EIO, "NAT blocks %u..%u: read failed: %s", addr,
					 addr + n - 1, strerror(-ret));
			break;
		}
		for (unsigned int i = 0; i < n && !ret; i++) {
			struct f2fs_nat_block *nb = (void *)(buf + (size_t)i * F2FS_BLKSIZE);

			ret = walk_nat_block(sbi, (b + i) * NAT_ENTRY_PER_BLOCK, nb->entries, l);
		}
		b += n;
	}
	free(buf);
	return ret;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Read the sorted inode blocks in runs, a gap of a few free blocks read through. */
static int walk_read_inodes(struct f2fs_sb_info *sbi, const struct walk_list *l,
			    f2fs_inode_walk_fn fn, void *arg)
{
	uint8_t *buf;
	int ret = 0;

	if (posix_memalign((void **)&buf, F2FS_BLKSIZE, (size_t)WALK_NODE_RUN * F2FS_BLKSIZE))
		return -ENOMEM;
	for (size_t i = 0; i < l->n && !ret;) {
		block_t first = l->v[i] >> 32, last = first;
		size_t j = i + 1;

		while (j < l->n && (block_t)(l->v[j] >> 32) - first < WALK_NODE_RUN &&
		       (block_t)(l->v[j] >> 32) - last <= WALK_NODE_GAP)
			last = l->v[j++] >> 32;
		ret = f2fs_dev_read_blocks(&sbi->dev, buf, first, last - first + 1);
		if (ret) {
			ret = f2fs_error(sbi, EIO, "node blocks %u..%u: read failed: %s", first,
					 last, strerror(-ret));
			break;
		}
		atomic_fetch_add(&sbi->ctr->node_reads, j - i);
		for (; i < j && !ret; i++) {
			struct node_info ni = { .nid = (nid_t)l->v[i], .ino = (nid_t)l->v[i],
						.blk_addr = l->v[i] >> 32 };
			const struct f2fs_node *node =
				(const void *)(buf + (size_t)(ni.blk_addr - first) * F2FS_BLKSIZE);

			ret = check_node_footer(sbi, node, &ni);
			if (!ret)
				ret = fn(sbi, ni.nid, &node->i, arg);
		}
	}
	free(buf);
	return ret;
}

/*
 * Every inode block the NAT maps, in block order, for a pass over the whole
 * image (the quota recount). The NAT is read in merged runs and only its
 * inode entries are kept; the inode blocks are then read in runs sorted by
 * address, bypassing the cache, so the caller must have checkpointed with
 * no writer running (the disk holds every inode as the cache would).
 */
int f2fs_walk_inodes(struct f2fs_sb_info *sbi, f2fs_inode_walk_fn fn, void *arg)
{
	struct walk_list l = { 0 };
	int ret = walk_collect_inodes(sbi, &l);

	if (!ret) {
		qsort(l.v, l.n, sizeof(*l.v), cmp_u64);
		ret = walk_read_inodes(sbi, &l, fn, arg);
	}
	free(l.v);
	return ret;
}
