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
	struct f2fs_journal *j = &sbi->sm.sum_blk[CURSEG_HOT_DATA]->journal;

	pthread_mutex_init(&nm->lock, NULL);
	nm->nat_blkaddr = le32(sbi->raw_super.nat_blkaddr);
	nm->nat_blocks = (le32(sbi->raw_super.segment_count_nat) / 2) << sbi->log_blocks_per_seg;
	nm->max_nid = NAT_ENTRY_PER_BLOCK * nm->nat_blocks;
	nm->nat_bitmap_size = le32(sbi->ckpt->nat_ver_bitmap_bytesize);
	nm->nat_bitmap = f2fs_cp_nat_bitmap(sbi);
	nm->journal_count = le16(j->n_nats);
	nm->journal = j->nat_j.entries;
	return 0;
}

void f2fs_destroy_node_manager(struct f2fs_sb_info *sbi)
{
	sbi->nm.journal = NULL;
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

int f2fs_get_node_info(struct f2fs_sb_info *sbi, nid_t nid, struct node_info *ni)
{
	struct f2fs_nm_info *nm = &sbi->nm;
	const struct f2fs_nat_entry *ne = NULL;
	struct f2fs_nat_entry e;
	struct folio *f;

	if (nid < F2FS_RESERVED_NODE_NUM || nid >= nm->max_nid)
		return f2fs_error(sbi, EFSCORRUPTED, "node id %u is out of range (max %u)", nid,
				  nm->max_nid);
	for (unsigned int i = 0; i < nm->journal_count; i++) {
		if (le32(nm->journal[i].nid) == nid) {
			ne = &nm->journal[i].ne;
			break;
		}
	}
	if (ne) {
		e = *ne;
	} else {
		block_t addr = nat_block_addr(nm, nid, sbi->log_blocks_per_seg);

		f = get_meta_folio(sbi, addr, "NAT block");
		if (IS_ERR(f))
			return PTR_ERR(f);
		e = ((struct f2fs_nat_block *)f->data)->entries[nid % NAT_ENTRY_PER_BLOCK];
		folio_put(sbi, f);
	}
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
void f2fs_ra_node_siblings(struct f2fs_sb_info *sbi, const nid_t *nids, unsigned int count)
{
	struct folio *batch[MAX_RA_NODE];
	struct node_info info[MAX_RA_NODE];
	unsigned int n = 0;

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
		for (unsigned int k = i; k < j; k++) {
			/* a bad footer just leaves the node to a later synchronous read */
			bool ok = !ret && !check_footer_quiet(folio_node(batch[k]), &info[k]);

			atomic_fetch_add(&sbi->ctr->node_reads, 1);
			folio_end_fill(sbi, batch[k], ok);
			folio_put(sbi, batch[k]);
		}
		i = j;
	}
}
