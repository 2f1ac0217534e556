// SPDX-License-Identifier: GPL-2.0
/*
 * The data read path. Block mapping walks the inode's direct, indirect and
 * double-indirect nodes (get_node_path as in the kernel) and returns runs of
 * physically contiguous blocks, consulting and feeding the extent cache.
 *
 * Reads go through data folios of the folio cache (seeds 000/001): a read
 * request grabs the folios it spans, sized up to the inode's max order, and
 * fills all newly created ones together. Each mapped run becomes one device
 * request spanning as many folios as it covers (the "batch" optimization);
 * holes and preallocated blocks are zero-filled without I/O; a folio that
 * one request fills completely gets no per-block state (the "skip").
 * Compressed clusters are decompressed into cluster-sized folios.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "fscrypt/workers.h"
#include "f2fs.h"

#define MAX_BATCH_FOLIOS	256
#define MAX_IOV			256

/// Node path ///

struct node_path {
	int level;		/* 0: in the inode, 1: direct node, 2: indirect, 3: double */
	unsigned int offset[4];	/* index at each level */
	unsigned int noffset[4];/* node offset (footer) of the node at each level */
};

static unsigned int addrs_per_block(const struct f2fs_inode_info *fi)
{
	if (f2fs_is_compressed(fi))
		return DEF_ADDRS_PER_BLOCK & ~((1u << fi->log_cluster_size) - 1);
	return DEF_ADDRS_PER_BLOCK;
}

unsigned int f2fs_addrs_per_block(const struct f2fs_inode_info *fi)
{
	return addrs_per_block(fi);
}

/* As the kernel's start_bidx_of_node: the first file block a dnode addresses. */
uint64_t f2fs_start_bidx_of_node(unsigned int node_ofs, const struct f2fs_inode_info *fi)
{
	unsigned int indirect_blks = 2 * NIDS_PER_BLOCK + 4;
	uint64_t bidx;

	if (node_ofs == 0)
		return 0;
	if (node_ofs <= 2)
		bidx = node_ofs - 1;
	else if (node_ofs <= indirect_blks)
		bidx = node_ofs - 2 - (node_ofs - 4) / (NIDS_PER_BLOCK + 1);
	else
		bidx = node_ofs - 5 - (node_ofs - indirect_blks - 3) / (NIDS_PER_BLOCK + 1);
	return bidx * addrs_per_block(fi) + fi->addrs_per_inode;
}

/* As the kernel's get_node_path, node offsets included. */
static int get_node_path(const struct f2fs_inode_info *fi, uint64_t block, struct node_path *p)
{
	const uint64_t direct_index = fi->addrs_per_inode;
	const uint64_t direct_blks = addrs_per_block(fi);
	const uint64_t indirect_blks = direct_blks * NIDS_PER_BLOCK;
	const uint64_t dindirect_blks = indirect_blks * NIDS_PER_BLOCK;
	const unsigned int dptrs = NIDS_PER_BLOCK;

	memset(p, 0, sizeof(*p));
	if (block < direct_index) {
		p->offset[0] = block;
		return 0;
	}
	block -= direct_index;
	for (int d = 0; d < 2; d++) {
		if (block < direct_blks) {
			p->level = 1;
			p->offset[0] = d ? NODE_DIR2_BLOCK : NODE_DIR1_BLOCK;
			p->noffset[1] = 1 + d;
			p->offset[1] = block;
			return 0;
		}
		block -= direct_blks;
	}
	for (int d = 0; d < 2; d++) {
		if (block < indirect_blks) {
			p->level = 2;
			p->offset[0] = d ? NODE_IND2_BLOCK : NODE_IND1_BLOCK;
			p->noffset[1] = d ? 4 + dptrs : 3;
			p->offset[1] = block / direct_blks;
			p->noffset[2] = p->noffset[1] + 1 + p->offset[1];
			p->offset[2] = block % direct_blks;
			return 0;
		}
		block -= indirect_blks;
	}
	if (block < dindirect_blks) {
		p->level = 3;
		p->offset[0] = NODE_DIND_BLOCK;
		p->noffset[1] = 5 + 2 * dptrs;
		p->offset[1] = block / indirect_blks;
		p->noffset[2] = 6 + 2 * dptrs + p->offset[1] * (dptrs + 1);
		p->offset[2] = (block / direct_blks) % dptrs;
		p->noffset[3] = 7 + 2 * dptrs + p->offset[1] * (dptrs + 1) + p->offset[2];
		p->offset[3] = block % direct_blks;
		return 0;
	}
	return -EFBIG;
}

/// Dnode walk ///

static uint64_t subtree_blocks(const struct f2fs_inode_info *fi, int level)
{
	uint64_t b = addrs_per_block(fi);

	while (level-- > 1)
		b *= NIDS_PER_BLOCK;
	return b;
}

static struct folio *get_child(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			       struct folio *parent, unsigned int idx, bool ra)
{
	const uint32_t *nids = indirect_nids(folio_node(parent));
	nid_t nid = le32(nids[idx]);
	struct folio *f;

	f = folio_lookup(sbi, MAP_NODE, 0, nid);
	if (f) {
		if (folio_wait_uptodate(f)) {
			folio_put(sbi, f);
			return ERR_PTR(-EIO);
		}
		return f;
	}
	f = f2fs_get_node_folio(sbi, nid);
	if (!IS_ERR(f) && ra && idx + 1 < NIDS_PER_BLOCK) {
		unsigned int n = MIN(NIDS_PER_BLOCK - idx - 1, (unsigned int)MAX_RA_NODE);
		nid_t sib[MAX_RA_NODE];

		for (unsigned int i = 0; i < n; i++)
			sib[i] = le32(nids[idx + 1 + i]);
		f2fs_ra_node_siblings(sbi, sib, n);
	}
	return f;
}

/*
 * A node reached through a file's tree belongs to the file and sits where
 * the path says: its footer offset is the one get_node_path computed. An
 * i_nid pointing back at the inode itself (or at another node of the file)
 * would otherwise be walked as a direct node, and a punch or truncate would
 * free blocks of the wrong part of the file (Linux: c18ecd99e0c7).
 */
static int check_dnode_owner(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			     struct folio *f, unsigned int want_ofs)
{
	const struct f2fs_node *n = folio_node(f);

	if (le32(n->footer.ino) != fi->ino)
		return f2fs_error(sbi, EFSCORRUPTED,
				  "node %u: belongs to inode %u, reached from inode %u",
				  le32(n->footer.nid), le32(n->footer.ino), fi->ino);
	if (ofs_of_node(n) != want_ofs)
		return f2fs_error(sbi, EFSCORRUPTED,
				  "node %u of inode %u: node offset %u where the tree needs %u",
				  le32(n->footer.nid), fi->ino, ofs_of_node(n), want_ofs);
	return 0;
}

int f2fs_get_dnode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t block,
		     struct dnode_of_data *dn)
{
	struct node_path p;
	struct folio *cur;
	int ret = get_node_path(fi, block, &p);

	if (ret)
		return ret;
	memset(dn, 0, sizeof(*dn));
	cur = f2fs_get_inode_folio(sbi, fi->ino);
	if (IS_ERR(cur))
		return PTR_ERR(cur);
	if (p.level == 0) {
		dn->folio = cur;
		dn->addrs = inode_addrs(folio_node(cur)) + fi->extra_isize;
		dn->ofs = p.offset[0];
		dn->nr = fi->addrs_per_inode;
		return 0;
	}
	/* first hop: the inode's i_nid slot */
	nid_t nid = le32(inode_nids(folio_node(cur))[p.offset[0] - NODE_DIR1_BLOCK]);

	folio_put(sbi, cur);
	cur = NULL;
	for (int lvl = 1; lvl <= p.level; lvl++) {
		if (!nid) {
			uint64_t span = subtree_blocks(fi, p.level - lvl + 1);
			uint64_t done = 0;

			/* blocks before ours inside the missing subtree */
			for (int k = lvl; k <= p.level; k++)
				done = done * (k == p.level ? addrs_per_block(fi) : NIDS_PER_BLOCK)
				       + p.offset[k];
			dn->hole_blocks = span - done;
			if (cur)
				folio_put(sbi, cur);
			return 0;
		}
		struct folio *next;

		if (cur) {
			next = get_child(sbi, fi, cur, p.offset[lvl - 1], lvl == p.level);
			folio_put(sbi, cur);
		} else {
			next = f2fs_get_node_folio(sbi, nid);
		}
		if (IS_ERR(next))
			return PTR_ERR(next);
		cur = next;
		ret = check_dnode_owner(sbi, fi, cur, p.noffset[lvl]);
		if (ret) {
			folio_put(sbi, cur);
			return ret;
		}
		if (lvl < p.level)
			nid = le32(indirect_nids(folio_node(cur))[p.offset[lvl]]);
	}
	dn->folio = cur;
	dn->addrs = dnode_addrs(folio_node(cur));
	dn->ofs = p.offset[p.level];
	dn->nr = addrs_per_block(fi);
	return 0;
}

/*
 * The dnode for a block, creating missing direct and indirect nodes on the
 * way (write path). New nodes take the node offset of their position, as
 * the kernel's get_node_path assigns it; each counts in i_blocks.
 */
int f2fs_get_dnode_alloc(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t block,
			 struct dnode_of_data *dn)
{
	bool is_dir = S_ISDIR(fi->mode);
	struct folio *parent, *child;
	struct node_path p;
	uint32_t *slot;
	int ret = get_node_path(fi, block, &p);

	if (ret)
		return ret;
	memset(dn, 0, sizeof(*dn));
	parent = f2fs_get_inode_folio(sbi, fi->ino);
	if (IS_ERR(parent))
		return PTR_ERR(parent);
	if (p.level == 0) {
		dn->folio = parent;
		dn->addrs = inode_addrs(folio_node(parent)) + fi->extra_isize;
		dn->ofs = p.offset[0];
		dn->nr = fi->addrs_per_inode;
		return 0;
	}
	slot = (uint32_t *)inode_nids(folio_node(parent)) + (p.offset[0] - NODE_DIR1_BLOCK);
	for (int lvl = 1; lvl <= p.level; lvl++) {
		nid_t nid = le32(*slot);

		if (!nid) {
			ret = f2fs_alloc_nid(sbi, fi->ino, &nid);
			if (ret)
				goto fail;
			child = f2fs_new_node_folio(sbi, nid, fi->ino, p.noffset[lvl], is_dir);
			if (IS_ERR(child)) {
				f2fs_alloc_nid_failed(sbi, nid);
				ret = PTR_ERR(child);
				goto fail;
			}
			*slot = nid;
			if (lvl == 1)
				fi->i_nid[p.offset[0] - NODE_DIR1_BLOCK] = nid;
			folio_mark_dirty(sbi, parent);
			fi->blocks++;
			f2fs_mark_inode_dirty(sbi, fi);
		} else {
			child = f2fs_get_node_folio(sbi, nid);
			if (IS_ERR(child)) {
				ret = PTR_ERR(child);
				goto fail;
			}
			ret = check_dnode_owner(sbi, fi, child, p.noffset[lvl]);
			if (ret) {
				folio_put(sbi, child);
				goto fail;
			}
		}
		folio_put(sbi, parent);
		parent = child;
		if (lvl < p.level)
			slot = (uint32_t *)indirect_nids(folio_node(parent)) + p.offset[lvl];
	}
	dn->folio = parent;
	dn->addrs = dnode_addrs(folio_node(parent));
	dn->ofs = p.offset[p.level];
	dn->nr = addrs_per_block(fi);
	return 0;
fail:
	folio_put(sbi, parent);
	return ret;
}

static bool is_data_blkaddr(block_t b)
{
	return b != NULL_ADDR && b != NEW_ADDR && b != COMPRESS_ADDR;
}

int f2fs_map_blocks(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
		    struct f2fs_map_blocks *map)
{
	struct extent_info ei;
	struct dnode_of_data dn;
	uint32_t want = map->len;
	int ret;

	atomic_fetch_add(&sbi->ctr->map_calls, 1);
	if (f2fs_is_device_alias(fi)) {
		/* i_ext alone maps a device alias (checked at load); past it, holes */
		ei = fi->largest;
		map->pblk = map->lblk < ei.len ? ei.blk + (block_t)map->lblk : NULL_ADDR;
		if (map->lblk < ei.len)
			map->len = MIN((uint64_t)want, ei.len - map->lblk);
		return 0;
	}
	if (f2fs_extent_lookup(fi, map->lblk, &ei)) {
		atomic_fetch_add(&sbi->ctr->extent_hits, 1);
		map->pblk = ei.blk + (map->lblk - ei.fofs);
		map->len = MIN((uint64_t)want, ei.fofs + ei.len - map->lblk);
		return 0;
	}
	ret = f2fs_get_dnode(sbi, fi, map->lblk, &dn);
	if (ret == -EFBIG) {
		map->pblk = NULL_ADDR;	/* beyond what f2fs can address: a hole */
		return 0;
	}
	if (ret)
		return ret;
	if (!dn.folio) {
		map->pblk = NULL_ADDR;
		map->len = MIN((uint64_t)want, dn.hole_blocks);
		return 0;
	}
	block_t first = le32(dn.addrs[dn.ofs]);
	uint32_t n = 1;
	uint32_t avail = MIN(want, dn.nr - dn.ofs);

	if (is_data_blkaddr(first)) {
		while (n < avail && le32(dn.addrs[dn.ofs + n]) == first + n)
			n++;
		if (!f2fs_valid_main_blkaddr(sbi, first) ||
		    !f2fs_valid_main_blkaddr(sbi, first + n - 1)) {
			ret = f2fs_error(sbi, EFSCORRUPTED,
					 "node %u (inode %u): data block address %u out of range",
					 le32(folio_node(dn.folio)->footer.nid), fi->ino, first);
			folio_put(sbi, dn.folio);
			return ret;
		}
		f2fs_extent_insert(fi, map->lblk, first, n);
	} else if (first != COMPRESS_ADDR) {
		/* holes and preallocated blocks read as zeroes alike */
		while (n < avail && (le32(dn.addrs[dn.ofs + n]) == NULL_ADDR ||
				     le32(dn.addrs[dn.ofs + n]) == NEW_ADDR))
			n++;
		first = NULL_ADDR;
	}
	folio_put(sbi, dn.folio);
	map->pblk = first;
	map->len = n;
	return 0;
}

int f2fs_get_block_addr(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t lblk,
			block_t *blk)
{
	struct f2fs_map_blocks map = { .lblk = lblk, .len = 1 };
	int ret = f2fs_map_blocks(sbi, fi, &map);

	*blk = map.pblk;
	return ret;
}

/// Filling folios ///

/* Folios being filled together, covering consecutive blocks [start, end). */
struct fill_batch {
	struct folio *folios[MAX_BATCH_FOLIOS];
	unsigned int nr;
	uint64_t start, end;
	struct f2fs_map_blocks hint;	/* made already for this read; len 0: none */
};

static uint8_t *batch_block_ptr(struct fill_batch *b, uint64_t blk, struct folio **owner)
{
	for (unsigned int i = 0; i < b->nr; i++) {
		struct folio *f = b->folios[i];

		if (blk >= f->index && blk < f->index + folio_nr_blocks(f)) {
			*owner = f;
			return f->data + ((blk - f->index) << F2FS_BLKSIZE_BITS);
		}
	}
	*owner = NULL;
	return NULL;
}

/* Per-folio state only for folios that more than one request (or a hole) touches. */
static void note_run(struct fill_batch *b, uint64_t pos, uint32_t len)
{
	for (unsigned int i = 0; i < b->nr; i++) {
		struct folio *f = b->folios[i];
		uint64_t fend = f->index + folio_nr_blocks(f);

		if (pos >= fend || pos + len <= f->index)
			continue;
		if (pos <= f->index && pos + len >= fend)
			continue;	/* one request covers it: no state ("skip") */
		if (!f->state && folio_get_state(f))
			f->state->read_pending = 0;
		if (f->state)
			f->state->read_pending++;
	}
}

/* An encrypted file's blocks are decrypted in the folio, once, as they arrive. */
static int decrypt_run(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
		       struct fill_batch *b, uint64_t pos, uint64_t end)
{
	while (pos < end) {
		struct folio *f;
		uint8_t *p = batch_block_ptr(b, pos, &f);
		uint64_t n = MIN(end, f->index + folio_nr_blocks(f)) - pos;
		int ret = fscrypt_crypt_blocks(sbi->keyring, &fi->fscrypt, pos, p, p, n, false);

		if (ret)
			return ret;
		pos += n;
	}
	return 0;
}

/* Blocks [pos, pos + len) from pblk on into the batch's folios; decrypt: each iov group too. */
static int read_blocks(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, struct fill_batch *b,
		       uint64_t pos, uint32_t len, block_t pblk, bool decrypt)
{
	struct iovec iov[MAX_IOV];
	unsigned int cnt = 0;
	uint64_t blk = pos, first_blk = pos;
	int ret = 0;

	while (blk < pos + len) {
		struct folio *f;
		uint8_t *p = batch_block_ptr(b, blk, &f);
		uint64_t fend = f->index + folio_nr_blocks(f);
		uint32_t n = MIN(pos + len, fend) - blk;

		iov[cnt].iov_base = p;
		iov[cnt++].iov_len = (size_t)n << F2FS_BLKSIZE_BITS;
		blk += n;
		if (cnt == MAX_IOV || blk == pos + len) {
			ret = f2fs_dev_readv_blocks(&sbi->dev, iov, cnt,
						    pblk + (first_blk - pos));
			if (!ret && decrypt)
				ret = decrypt_run(sbi, fi, b, first_blk, blk);
			if (ret)
				return ret;
			cnt = 0;
			first_blk = blk;
		}
	}
	return 0;
}

/*
 * An encrypted batch is read and decrypted in pieces of one crypto chunk,
 * all the batch's runs in one job of the crypto pool: each piece by
 * whichever thread claims it, decrypted while it is still in that core's
 * cache, the threads reading and decrypting side by side. Read whole and
 * then decrypted run by run, the decryption and a helper's wakeup per run
 * stayed after the reads on the request's critical path.
 */
#define CRYPT_READ_PIECES	64

struct crypt_read {
	struct f2fs_sb_info *sbi;
	struct f2fs_inode_info *fi;
	struct fill_batch *b;
	unsigned int piece;		/* blocks of one piece; 0: not in pieces */
	unsigned int n;
	struct {
		uint64_t pos;
		block_t pblk;
		uint32_t len;
	} p[CRYPT_READ_PIECES];
};

static int crypt_read_piece(void *arg, unsigned int i)
{
	const struct crypt_read *r = arg;

	return read_blocks(r->sbi, r->fi, r->b, r->p[i].pos, r->p[i].len, r->p[i].pblk, true);
}

static int crypt_read_flush(struct crypt_read *r)
{
	int ret = r->n ? crypt_workers_run(crypt_read_piece, r, r->n) : 0;

	r->n = 0;
	return ret;
}

/* Read (and decrypt) a mapped run now, or queue its pieces for the batch's job. */
static int read_run(struct crypt_read *r, uint64_t pos, uint32_t len, block_t pblk)
{
	int ret = 0;

	if (!r->piece)
		return read_blocks(r->sbi, r->fi, r->b, pos, len, pblk, f2fs_encrypted_file(r->fi));
	while (len && !ret) {
		uint32_t n = MIN(len, r->piece);

		r->p[r->n].pos = pos;
		r->p[r->n].pblk = pblk;
		r->p[r->n].len = n;
		if (++r->n == CRYPT_READ_PIECES)
			ret = crypt_read_flush(r);
		pos += n;
		pblk += n;
		len -= n;
	}
	return ret;
}

static void zero_run(struct fill_batch *b, uint64_t pos, uint32_t len)
{
	for (uint64_t blk = pos; blk < pos + len; blk++) {
		struct folio *f;
		uint8_t *p = batch_block_ptr(b, blk, &f);

		memset(p, 0, F2FS_BLKSIZE);
	}
}

/*
 * The mapping of map->lblk: from the hint when it covers that block (any
 * part of a run is a run), else from a map call.
 */
static int map_fill_run(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			const struct f2fs_map_blocks *hint, struct f2fs_map_blocks *map)
{
	uint64_t skip = map->lblk - hint->lblk;

	if (!hint->len || map->lblk < hint->lblk || skip >= hint->len)
		return f2fs_map_blocks(sbi, fi, map);
	map->pblk = is_data_blkaddr(hint->pblk) ? hint->pblk + skip : hint->pblk;
	map->len = MIN((uint64_t)map->len, hint->len - skip);
	return 0;
}

/* Fill blocks [b->start, b->end) of the batch's folios from disk or zeroes. */
static int fill_range(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, struct fill_batch *b)
{
	uint64_t eof_blk = DIV_ROUND_UP(fi->size, F2FS_BLKSIZE);
	uint64_t pos = b->start;
	struct crypt_read r = { .sbi = sbi, .fi = fi, .b = b };
	int ret = 0;

	/* in pieces only when there are two or more */
	if (f2fs_encrypted_file(fi)) {
		r.piece = fscrypt_chunk_blocks(sbi->keyring, &fi->fscrypt);
		if (b->end - b->start <= r.piece)
			r.piece = 0;
	}

	while (pos < b->end) {
		struct f2fs_map_blocks map = { .lblk = pos, .len = b->end - pos };

		if (pos >= eof_blk) {
			map.pblk = NULL_ADDR;	/* past EOF reads as zero whatever is mapped */
		} else {
			map.len = MIN(map.len, eof_blk - pos);
			ret = map_fill_run(sbi, fi, &b->hint, &map);
			if (ret)
				break;
			if (map.pblk == COMPRESS_ADDR) {
				ret = f2fs_error(sbi, EFSCORRUPTED,
						 "inode %u: compressed cluster in an uncompressed "
						 "file at block %llu", fi->ino,
						 (unsigned long long)pos);
				break;
			}
		}
		note_run(b, pos, map.len);
		if (map.pblk == NULL_ADDR) {
			zero_run(b, pos, map.len);
			atomic_fetch_add(&sbi->ctr->hole_blocks, map.len);
		} else {
			ret = read_run(&r, pos, map.len, map.pblk);
			if (ret) {
				ret = f2fs_error(sbi, EIO, "inode %u: data read at block %u failed: %s",
						 fi->ino, map.pblk, strerror(-ret));
				break;
			}
		}
		pos += map.len;
	}
	if (!ret) {
		ret = crypt_read_flush(&r);
		if (ret)
			ret = f2fs_error(sbi, EIO, "inode %u: data read of blocks %llu-%llu failed: %s",
					 fi->ino, (unsigned long long)b->start,
					 (unsigned long long)b->end - 1, strerror(-ret));
	}
	return ret;
}

static int fill_batch(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
		      struct fill_batch *b)
{
	int ret = fill_range(sbi, fi, b);

	for (unsigned int i = 0; i < b->nr; i++) {
		struct folio *f = b->folios[i];

		if (f->state) {
			atomic_fetch_add(&sbi->ctr->state_alloc, 1);
			f->state->read_pending = 0;
		} else {
			atomic_fetch_add(&sbi->ctr->state_skipped, 1);
		}
		folio_end_fill(sbi, f, !ret);
	}
	return ret;
}

int f2fs_fill_folio_range(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, struct folio *f,
			  uint64_t from, uint64_t to)
{
	struct fill_batch b = { .nr = 1, .start = from, .end = to };

	if (from >= to)
		return 0;
	b.folios[0] = f;
	return fill_range(sbi, fi, &b);
}

/*
 * The order of a new data folio: the inode's maximum, but no bigger than the
 * file needs, so a small file does not pin a megabyte of cache.
 */
static unsigned int data_folio_order(struct f2fs_inode_info *fi)
{
	uint64_t blocks = DIV_ROUND_UP(fi->size, F2FS_BLKSIZE);
	unsigned int order = fi->max_order;

	while (order && (1ull << (order - 1)) >= blocks)
		order--;
	return order;
}

/// Compressed clusters ///

int f2fs_read_cluster(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, struct folio *f)
{
	unsigned int cs = 1u << fi->log_cluster_size;
	struct dnode_of_data dn;
	block_t addrs[1u << MAX_COMPRESS_LOG_SIZE];
	unsigned int nr_c = 0;
	uint8_t *cbuf;
	int ret;

	ret = f2fs_get_dnode(sbi, fi, f->index, &dn);
	if (ret)
		return ret;
	if (!dn.folio) {
		memset(f->data, 0, (size_t)cs * F2FS_BLKSIZE);
		return 0;
	}
	for (unsigned int i = 0; i < cs; i++)
		addrs[i] = dn.ofs + i < dn.nr ? le32(dn.addrs[dn.ofs + i]) : NULL_ADDR;
	nid_t dnid = le32(folio_node(dn.folio)->footer.nid);

	folio_put(sbi, dn.folio);
	if (addrs[0] != COMPRESS_ADDR) {
		/* a cluster stored raw: read block by block like a normal file */
		for (unsigned int i = 0; i < cs; i++) {
			uint8_t *p = f->data + (size_t)i * F2FS_BLKSIZE;

			if (!is_data_blkaddr(addrs[i])) {
				memset(p, 0, F2FS_BLKSIZE);
				continue;
			}
			if (!f2fs_valid_main_blkaddr(sbi, addrs[i]))
				return f2fs_error(sbi, EFSCORRUPTED,
						  "node %u (inode %u): data block address %u out "
						  "of range", dnid, fi->ino, addrs[i]);
			ret = f2fs_dev_read_blocks(&sbi->dev, p, addrs[i], 1);
			if (!ret && f2fs_encrypted_file(fi))
				ret = fscrypt_crypt_blocks(sbi->keyring, &fi->fscrypt, f->index + i, p, p, 1, false);
			if (ret)
				return ret;
		}
		return 0;
	}
	while (nr_c + 1 < cs && is_data_blkaddr(addrs[nr_c + 1]))
		nr_c++;
	if (!nr_c)
		return f2fs_error(sbi, EFSCORRUPTED,
				  "compressed cluster (inode %u, node %u, block %llu): no "
				  "compressed blocks", fi->ino, dnid, (unsigned long long)f->index);
	cbuf = malloc((size_t)nr_c * F2FS_BLKSIZE);
	if (!cbuf)
		return -ENOMEM;
	for (unsigned int i = 0; i < nr_c && !ret; i++) {
		if (!f2fs_valid_main_blkaddr(sbi, addrs[i + 1]))
			ret = f2fs_error(sbi, EFSCORRUPTED,
					 "compressed cluster (inode %u, node %u): block address %u "
					 "out of range", fi->ino, dnid, addrs[i + 1]);
		else
			ret = f2fs_dev_read_blocks(&sbi->dev, cbuf + (size_t)i * F2FS_BLKSIZE,
						   addrs[i + 1], 1);
		/*
		 * Compress, then encrypt: Linux encrypts the compressed block in
		 * slot i + 1 of the cluster as file block start + i + 1
		 * (f2fs_set_compressed_page).
		 */
		if (!ret && f2fs_encrypted_file(fi))
			ret = fscrypt_crypt_blocks(sbi->keyring, &fi->fscrypt, f->index + i + 1,
						   cbuf + (size_t)i * F2FS_BLKSIZE,
						   cbuf + (size_t)i * F2FS_BLKSIZE, 1, false);
	}
	if (!ret) {
		ret = f2fs_decompress_cluster(fi->compress_algorithm, cbuf,
					      (size_t)nr_c * F2FS_BLKSIZE, f->data,
					      (size_t)cs * F2FS_BLKSIZE,
					      fi->compress_flag & COMPRESS_CHKSUM_FLAG);
		if (ret)
			ret = f2fs_error(sbi, -ret == EOPNOTSUPP ? EOPNOTSUPP : EIO,
					 "compressed cluster header (block %u, inode %u, file "
					 "block %llu): %s", addrs[1], fi->ino,
					 (unsigned long long)f->index,
					 ret == -EOPNOTSUPP ? "unsupported algorithm" :
					 "corrupt or failed decompression");
		else
			atomic_fetch_add(&sbi->ctr->decompressed_clusters, 1);
	}
	free(cbuf);
	return ret;
}

/// Read entry points ///

static ssize_t read_inline(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint8_t *buf,
			   size_t len, uint64_t off)
{
	struct folio *f = f2fs_get_inode_folio(sbi, fi->ino);
	unsigned int max = f2fs_max_inline_data(fi);

	if (IS_ERR(f))
		return PTR_ERR(f);
	if (fi->size > max) {
		folio_put(sbi, f);
		return f2fs_error(sbi, EFSCORRUPTED,
				  "inode %u: inline data size %llu exceeds %u bytes", fi->ino,
				  (unsigned long long)fi->size, max);
	}
	memcpy(buf, (uint8_t *)f2fs_inline_data_addr(fi, folio_node(f)) + off, len);
	folio_put(sbi, f);
	return len;
}

/*
 * Where read data goes: copied into a buffer, or, for a zero-copy reply,
 * described by iovecs into the folios, which stay referenced until the
 * caller's callback has run.
 */
struct read_sink {
	uint8_t *buf;
	struct iovec *iov;
	struct folio **keep;
	unsigned int nkeep;
};

static int sink_folio(struct f2fs_sb_info *sbi, struct read_sink *sk, struct folio *h,
		      uint64_t pos, size_t left, size_t *done)
{
	uint64_t fstart = h->index << F2FS_BLKSIZE_BITS;
	uint64_t fend = fstart + ((uint64_t)F2FS_BLKSIZE << h->order);
	size_t n = MIN((uint64_t)left, fend - pos);

	if (!sk->iov) {
		memcpy(sk->buf + *done, h->data + (pos - fstart), n);
		folio_put(sbi, h);
	} else if (sk->nkeep && sk->keep[sk->nkeep - 1] == h) {
		folio_put(sbi, h);	/* cannot happen twice in a row; defensive */
		return -EINVAL;
	} else {
		if (sk->nkeep == MAX_BATCH_FOLIOS) {
			folio_put(sbi, h);
			return -E2BIG;
		}
		sk->iov[sk->nkeep].iov_base = h->data + (pos - fstart);
		sk->iov[sk->nkeep].iov_len = n;
		sk->keep[sk->nkeep++] = h;
	}
	*done += n;
	return 0;
}

/*
 * Grab folios for [off, off+len) and fill the new ones in batches. hint:
 * a mapping the caller made already (or NULL).
 */
static ssize_t read_folios(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			   struct read_sink *sk, size_t len, uint64_t off,
			   const struct f2fs_map_blocks *hint)
{
	bool compressed = f2fs_is_compressed(fi);
	unsigned int order = compressed ? fi->log_cluster_size : data_folio_order(fi);
	struct fill_batch b = { .nr = 0, .hint = hint ? *hint : (struct f2fs_map_blocks){ 0 } };
	struct folio *held[MAX_BATCH_FOLIOS];
	unsigned int nheld = 0;
	uint64_t pos = off, end = off + len;
	ssize_t ret = 0;
	size_t done = 0;

	while (pos < end && !ret) {
		bool created;
		struct folio *f = folio_grab(sbi, MAP_DATA, fi->ino, pos >> F2FS_BLKSIZE_BITS,
					     order, &created);

		if (IS_ERR(f)) {
			ret = PTR_ERR(f);
			break;
		}
		held[nheld++] = f;
		if (created && compressed) {
			int err = f2fs_read_cluster(sbi, fi, f);

			folio_end_fill(sbi, f, !err);
			ret = err;
		} else if (created) {
			if (b.nr && b.end != f->index) {
				ret = fill_batch(sbi, fi, &b);
				b.nr = 0;
			}
			if (!b.nr)
				b.start = f->index;
			b.folios[b.nr++] = f;
			b.end = f->index + folio_nr_blocks(f);
		}
		pos = (f->index + folio_nr_blocks(f)) << F2FS_BLKSIZE_BITS;
		if (nheld == MAX_BATCH_FOLIOS || pos >= end || ret) {
			if (b.nr && !ret)
				ret = fill_batch(sbi, fi, &b);
			else
				for (unsigned int i = 0; i < b.nr; i++)
					folio_end_fill(sbi, b.folios[i], false);
			b.nr = 0;
			for (unsigned int i = 0; i < nheld; i++) {
				struct folio *h = held[i];

				if (!ret && folio_wait_uptodate(h))
					ret = -EIO;
				if (ret)
					folio_put(sbi, h);
				else
					ret = sink_folio(sbi, sk, h, off + done, len - done, &done);
			}
			nheld = 0;
		}
	}
	/* an error may leave created-but-unfilled folios in the batch */
	for (unsigned int i = 0; i < b.nr; i++)
		folio_end_fill(sbi, b.folios[i], false);
	for (unsigned int i = 0; i < nheld; i++)
		folio_put(sbi, held[i]);
	if (ret < 0)
		return ret;
	return done;
}

ssize_t f2fs_file_read(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, void *buf,
		       size_t len, uint64_t off)
{
	uint64_t size = fi->atomic ? fi->atomic_size : fi->size;

	atomic_fetch_add(&sbi->ctr->read_calls, 1);
	if (off >= size || !len)
		return 0;
	len = MIN((uint64_t)len, size - off);
	if (f2fs_encrypted_file(fi)) {
		int err = fscrypt_prepare(sbi->keyring, &fi->fscrypt);

		if (err)
			return err;
	}
	struct read_sink sk = { .buf = buf };
	ssize_t ret = f2fs_is_inline_data(fi) ? read_inline(sbi, fi, buf, len, off)
					      : read_folios(sbi, fi, &sk, len, off, NULL);

	if (ret > 0)
		atomic_fetch_add(&sbi->ctr->read_bytes, ret);
	return ret;
}

struct folio *f2fs_get_data_folio(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
				  uint64_t lblk)
{
	bool created;
	struct folio *f = folio_grab(sbi, MAP_DATA, fi->ino, lblk, 0, &created);
	int ret;

	if (IS_ERR(f))
		return f;
	if (created) {
		struct fill_batch b = { .nr = 1, .start = f->index, .end = f->index + 1 };

		b.folios[0] = f;
		ret = fill_batch(sbi, fi, &b);
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
 * Drop-behind for data the kernel's page cache now holds: a folio goes once a
 * read has reached its end (or EOF), so a large folio straddled by two
 * requests is not read twice. Eviction is a free into the buffer pool, cheap
 * enough for the reply path; the recycled buffer spares the next folio the
 * page faults of fresh memory.
 */
static void put_read_folios(struct f2fs_sb_info *sbi, struct folio **keep, unsigned int nr,
			    uint64_t read_end, uint64_t size)
{
	bool drop = sbi->opts.dontcache > 0 && read_end;

	for (unsigned int i = 0; i < nr; i++) {
		struct folio *f = keep[i];
		uint64_t fend = (f->index + folio_nr_blocks(f)) << F2FS_BLKSIZE_BITS;

		if (drop && (read_end >= fend || read_end >= size))
			folio_put_dropbehind(sbi, f);
		else
			folio_put(sbi, f);
	}
}

/*
 * A read that falls wholly in a hole of a file with nothing cached (the
 * rule under drop-behind) is answered from one shared zero region: no folio
 * to allocate and clear, and the kernel copies from pages that stay hot.
 * The shared inode lock keeps writers (and their folios) out meanwhile.
 */
#define ZERO_REGION	(1u << 20)
static const uint8_t zero_region[ZERO_REGION];

/*
 * The check maps from where the read's first folio will start (folios are
 * aligned to their order) to the end of its last one. When the read is not
 * a hole, that first mapping is the one the fill needs: *first keeps it,
 * so the fill makes no second map call for it.
 */
static bool read_is_hole(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t off,
			 size_t len, struct f2fs_map_blocks *first)
{
	uint64_t span = 1ull << data_folio_order(fi);
	uint64_t blk = off >> F2FS_BLKSIZE_BITS;
	uint64_t end = DIV_ROUND_UP(off + len, F2FS_BLKSIZE);
	uint64_t lim = (end + span - 1) & ~(span - 1);
	uint64_t pos = blk & ~(span - 1);

	first->len = 0;
	if (f2fs_is_compressed(fi) || folio_owner_cached(sbi, MAP_DATA, fi->ino))
		return false;
	while (pos < end) {
		struct f2fs_map_blocks map = { .lblk = pos, .len = lim - pos };

		if (f2fs_map_blocks(sbi, fi, &map))
			return false;
		if (!first->len)
			*first = map;
		if (map.pblk != NULL_ADDR && map.pblk != NEW_ADDR && pos + map.len > blk)
			return false;
		pos += map.len ? map.len : 1;
	}
	return true;
}

static ssize_t reply_zeroes(struct f2fs_sb_info *sbi, size_t len,
			    int (*cb)(void *, const struct iovec *, int), void *arg)
{
	struct iovec iov[MAX_BATCH_FOLIOS];
	size_t left = len;
	int n = 0;

	while (left && n < MAX_BATCH_FOLIOS) {
		iov[n].iov_base = (void *)zero_region;
		iov[n].iov_len = MIN(left, (size_t)ZERO_REGION);
		left -= iov[n++].iov_len;
	}
	if (left)
		return -E2BIG;
	atomic_fetch_add(&sbi->ctr->hole_blocks, DIV_ROUND_UP(len, F2FS_BLKSIZE));
	atomic_fetch_add(&sbi->ctr->read_bytes, len);
	return cb(arg, iov, n) ? -EIO : (ssize_t)len;
}

/*
 * Zero-copy variant: the callback sees iovecs into cached folios, valid only
 * during the call (the FUSE front end hands them to fuse_reply_iov).
 * Inline files, and requests spanning more folios than a batch, go through
 * a bounce buffer instead.
 */
ssize_t f2fs_file_read_iov(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, size_t len,
			   uint64_t off, int (*cb)(void *, const struct iovec *, int), void *arg)
{
	struct iovec iov[MAX_BATCH_FOLIOS];
	struct folio *keep[MAX_BATCH_FOLIOS];
	struct read_sink sk = { .iov = iov, .keep = keep };
	struct f2fs_map_blocks first;
	ssize_t ret;

	uint64_t size = fi->atomic ? fi->atomic_size : fi->size;

	if (off >= size || !len)
		return cb(arg, NULL, 0) ? -EIO : 0;
	len = MIN((uint64_t)len, size - off);
	if (f2fs_encrypted_file(fi)) {
		ret = fscrypt_prepare(sbi->keyring, &fi->fscrypt);
		if (ret)
			return ret;
	}
	if (!f2fs_is_inline_data(fi)) {
		atomic_fetch_add(&sbi->ctr->read_calls, 1);
		if (read_is_hole(sbi, fi, off, len, &first)) {
			ret = reply_zeroes(sbi, len, cb, arg);
			if (ret != -E2BIG)
				return ret;
		}
		ret = read_folios(sbi, fi, &sk, len, off, &first);
		if (ret >= 0) {
			atomic_fetch_add(&sbi->ctr->read_bytes, ret);
			if (cb(arg, iov, sk.nkeep))
				ret = -EIO;
		}
		put_read_folios(sbi, keep, sk.nkeep, ret > 0 ? off + ret : 0, size);
		if (ret != -E2BIG)
			return ret;
	}
	uint8_t *buf = malloc(len);

	if (!buf)
		return -ENOMEM;
	ret = f2fs_file_read(sbi, fi, buf, len, off);
	if (ret >= 0) {
		struct iovec one = { buf, (size_t)ret };

		if (cb(arg, &one, 1))
			ret = -EIO;
	}
	free(buf);
	return ret;
}
