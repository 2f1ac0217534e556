// SPDX-License-Identifier: GPL-2.0
/*
 * Verified reads (the kernel's fs/verity/verify.c): each data block hashed
 * and checked up the tree to a tree block already checked (or the root);
 * the tree blocks checked on the way stay in the info's small cache. Data
 * blocks are hashed by each reader with a state of its own, outside the
 * lock, so parallel readers of one file hash in parallel; only the tree
 * walk and its cache are serialized.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "fsverity_private.h"

static uint8_t *cache_find(struct fsverity_info *vi, uint64_t index)
{
	unsigned int s = index % VERITY_CACHE_SLOTS;

	if (vi->slot_valid[s] && vi->slot_index[s] == index)
		return vi->slots + (size_t)s * vi->p.bs;
	return NULL;
}

static void cache_add(struct fsverity_info *vi, uint64_t index, const uint8_t *block)
{
	unsigned int s = index % VERITY_CACHE_SLOTS;

	memcpy(vi->slots + (size_t)s * vi->p.bs, block, vi->p.bs);
	vi->slot_index[s] = index;
	vi->slot_valid[s] = true;
}

/* verity_hash_block with the inode's reused state; caller holds vi->lock. */
static int vi_hash_block(struct fsverity_info *vi, const void *block, uint8_t *out)
{
	if (!EVP_MD_CTX_copy_ex(vi->ctx, vi->salted) ||
	    !EVP_DigestUpdate(vi->ctx, block, vi->p.bs) || !EVP_DigestFinal_ex(vi->ctx, out, NULL))
		return -EIO;
	return 0;
}

static int hash_data_block(const struct verity_params *p, EVP_MD_CTX *ctx, const void *block,
			   uint8_t *out)
{
	if (!EVP_DigestInit_ex(ctx, p->md, NULL) ||
	    (p->padded_salt_size && !EVP_DigestUpdate(ctx, p->padded_salt, p->padded_salt_size)) ||
	    !EVP_DigestUpdate(ctx, block, p->bs) || !EVP_DigestFinal_ex(ctx, out, NULL))
		return -EIO;
	return 0;
}

/*
 * Walk up from the data block until a tree block already verified (or the
 * root), then check each block read on the way back down, caching it.
 * Caller holds vi->lock.
 */
static int verify_block_locked(const struct fsverity_sb *vsb, struct fsverity_inode *inode,
			       struct fsverity_info *vi, uint64_t dblk, const uint8_t *dh)
{
	const struct verity_params *p = &vi->p;
	uint64_t idx = dblk, tblk[VERITY_MAX_LEVELS];
	unsigned int hoff[VERITY_MAX_LEVELS], ds = p->digest_size;
	uint8_t want[VERITY_MAX_DIGEST], h[VERITY_MAX_DIGEST];
	int level, ret;

	for (level = 0; level < (int)p->num_levels; level++) {
		const uint8_t *cached;

		hoff[level] = (unsigned int)(idx & ((1u << p->log_arity) - 1)) * ds;
		idx >>= p->log_arity;
		tblk[level] = p->level_start[level] + idx;
		cached = cache_find(vi, tblk[level]);
		if (cached) {
			memcpy(want, cached + hoff[level], ds);
			break;
		}
		ret = vsb->ops->read_merkle_tree(vsb->fs, inode, vi->scratch + (size_t)level * p->bs,
						 p->bs, tblk[level] << p->log_bs);
		if (ret)
			return ret;
	}
	if (level == (int)p->num_levels)
		memcpy(want, vi->root, ds);
	for (level--; level >= 0; level--) {
		const uint8_t *blk = vi->scratch + (size_t)level * p->bs;

		ret = vi_hash_block(vi, blk, h);
		if (ret)
			return ret;
		if (memcmp(h, want, ds))
			return fsverity_err(vsb, EIO, "inode %u: verity Merkle tree block %llu "
					    "(level %d) does not match its hash",
					    vsb->ops->ino(inode), (unsigned long long)tblk[level],
					    level);
		cache_add(vi, tblk[level], blk);
		memcpy(want, blk + hoff[level], ds);
	}
	if (memcmp(dh, want, ds))
		return fsverity_err(vsb, EIO, "inode %u: verity check failed for data block %llu",
				    vsb->ops->ino(inode), (unsigned long long)dblk);
	return 0;
}

int fsverity_verify_iov(const struct fsverity_sb *vsb, struct fsverity_inode *inode,
			struct fsverity_info *vi, uint64_t start, const struct iovec *iov,
			int cnt)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	uint8_t *pad = NULL, dh[VERITY_MAX_DIGEST];
	uint64_t pos = start;
	int ret = ctx ? 0 : -ENOMEM;

	for (int i = 0; i < cnt && !ret; i++) {
		const uint8_t *p = iov[i].iov_base;
		size_t left = iov[i].iov_len;

		while (left && !ret) {
			size_t n = VERITY_MIN(left, (size_t)vi->p.bs);
			const uint8_t *blk = p;

			if (n < vi->p.bs) {	/* EOF inside the block: hashed zero-padded */
				if (!pad)
					pad = malloc(vi->p.bs);
				if (!pad) {
					ret = -ENOMEM;
					break;
				}
				memset(pad, 0, vi->p.bs);
				memcpy(pad, p, n);
				blk = pad;
			}
			ret = hash_data_block(&vi->p, ctx, blk, dh);
			if (!ret) {
				pthread_mutex_lock(&vi->lock);
				ret = verify_block_locked(vsb, inode, vi, pos >> vi->p.log_bs, dh);
				pthread_mutex_unlock(&vi->lock);
			}
			p += n;
			pos += n;
			left -= n;
		}
	}
	EVP_MD_CTX_free(ctx);
	free(pad);
	return ret;
}
