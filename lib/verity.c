// SPDX-License-Identifier: GPL-2.0
/*
 * fs-verity for f2fs, on disk exactly as Linux keeps it (fs/f2fs/verity.c)
 * and computed as fs/verity does: FS_IOC_ENABLE_VERITY builds the Merkle
 * tree over the file's data, stores it from the first 64 KiB boundary at or
 * past EOF, appends the descriptor, records the descriptor's place in the
 * verity xattr and sets FADVISE_VERITY_BIT. Reads of a verity file are
 * checked block by block against the tree; tree blocks that have been
 * checked stay in a small per-inode cache, so a sequential reader hashes
 * each tree block once and each data block once per read.
 *
 * The metadata lives past EOF, where the folio cache shows zeroes; so it is
 * read and written here block by block through the block map and the device,
 * never through the cache. SHA-256 and SHA-512 come from OpenSSL.
 */
#include <linux/fsverity.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "fscrypt/fscrypt.h"
#include "f2fs.h"
#include "fsverity/fsverity.h"

#define SBI(fs) ((struct f2fs_sb_info *)(fs))
#define VERITY_CACHE_SLOTS	64	/* verified tree blocks kept per inode */
#define VERITY_MAX_FILE_BYTES	((uint64_t)(DEF_ADDRS_PER_INODE + 2 * DEF_ADDRS_PER_BLOCK + \
				 2ull * DEF_ADDRS_PER_BLOCK * NIDS_PER_BLOCK + \
				 (uint64_t)DEF_ADDRS_PER_BLOCK * NIDS_PER_BLOCK * NIDS_PER_BLOCK) \
				 << F2FS_BLKSIZE_BITS)

/// Metadata past EOF, through the block map ///

struct f2fs_verity_info {
	struct verity_params p;
	uint8_t root[VERITY_MAX_DIGEST];
	uint8_t digest[VERITY_MAX_DIGEST];
	uint64_t meta_pos;		/* bytes: where the tree starts */
	uint64_t desc_pos;
	uint32_t desc_size;		/* descriptor and signature */
	pthread_mutex_t lock;		/* the cache and the scratch blocks */
	uint64_t slot_index[VERITY_CACHE_SLOTS];
	bool slot_valid[VERITY_CACHE_SLOTS];
	uint8_t *slots;			/* VERITY_CACHE_SLOTS blocks */
	uint8_t *scratch;		/* VERITY_MAX_LEVELS blocks */
	EVP_MD_CTX *ctx;		/* under lock: one hash state, reused */
	EVP_MD_CTX *salted;		/* the state after the padded salt */
};

void f2fs_verity_free(struct f2fs_inode_info *fi)
{
	struct f2fs_verity_info *vi = fi->verity;

	if (!vi)
		return;
	fi->verity = NULL;
	pthread_mutex_destroy(&vi->lock);
	EVP_MD_CTX_free(vi->ctx);
	EVP_MD_CTX_free(vi->salted);
	free(vi->slots);
	free(vi->scratch);
	free(vi);
}

/* Bytes [pos, pos+len) of the file, past EOF as well: holes read as zeroes. */
static int meta_read(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, void *buf, size_t len,
		     uint64_t pos)
{
	uint8_t blk[F2FS_BLKSIZE];

	while (len) {
		struct f2fs_map_blocks map = { .lblk = pos >> F2FS_BLKSIZE_BITS, .len = 1 };
		size_t in = pos & (F2FS_BLKSIZE - 1), n = MIN(len, F2FS_BLKSIZE - in);
		int ret = f2fs_map_blocks(sbi, fi, &map);

		if (ret)
			return ret;
		if (map.pblk == NULL_ADDR || map.pblk == NEW_ADDR) {
			memset(blk, 0, sizeof(blk));
		} else if (map.pblk == COMPRESS_ADDR || !f2fs_valid_main_blkaddr(sbi, map.pblk)) {
			return f2fs_error(sbi, EFSCORRUPTED,
					  "inode %u: verity metadata block %llu has address %u",
					  fi->ino, (unsigned long long)map.lblk, map.pblk);
		} else {
			ret = f2fs_dev_read_blocks(&sbi->dev, blk, map.pblk, 1);
			if (ret)
				return f2fs_error(sbi, EIO, "inode %u: verity metadata read at %u "
						  "failed", fi->ino, map.pblk);
			/* f2fs keeps it in the page cache: encrypted as data at that index */
			if (fscrypt_file_data(fi))
				ret = fscrypt_crypt_blocks(sbi, fi, map.lblk, blk, blk, 1, false);
			if (ret)
				return ret;
		}
		memcpy(buf, blk + in, n);
		buf = (uint8_t *)buf + n;
		pos += n;
		len -= n;
	}
	return 0;
}

static int read_dloc(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
		     struct f2fs_verity_dloc *dloc)
{
	uint8_t *area;
	size_t len;
	ssize_t got;
	int ret = f2fs_read_xattr_area(sbi, fi, &area, &len);

	if (ret)
		return ret;
	got = f2fs_xattr_get_indexed(area, len, F2FS_XATTR_INDEX_VERITY, F2FS_VERITY_XATTR_NAME,
				     dloc, sizeof(*dloc));
	free(area);
	if (got < 0 && got != -ERANGE && got != -ENODATA)
		return (int)got;
	if (got != sizeof(*dloc) || le32(dloc->version) != F2FS_VERITY_XATTR_VER)
		return f2fs_error(sbi, EINVAL, "inode %u: unknown verity xattr format", fi->ino);
	/* f2fs_get_verity_descriptor's bounds (s_maxbytes: what four levels of nodes map) */
	if (le64(dloc->pos) + le32(dloc->size) < le64(dloc->pos) ||
	    le64(dloc->pos) + le32(dloc->size) > VERITY_MAX_FILE_BYTES ||
	    le64(dloc->pos) < verity_metadata_pos(fi->size) || le32(dloc->size) > INT32_MAX ||
	    le32(dloc->size) > VERITY_DESC_SIZE + VERITY_MAX_SIG)
		return f2fs_error(sbi, EFSCORRUPTED, "inode %u: invalid verity xattr", fi->ino);
	return 0;
}

static int load_verity(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
		       struct f2fs_verity_info **out)
{
	struct f2fs_verity_dloc dloc;
	struct f2fs_verity_info *vi;
	uint8_t *desc = NULL;
	int ret;

	if (f2fs_is_compressed(fi))
		return f2fs_error(sbi, EOPNOTSUPP, "inode %u: fs-verity on a compressed file is "
				  "not supported", fi->ino);
	/* the tree and descriptor are encrypted as the data: no key, no verity (ENOKEY) */
	if (fscrypt_file_data(fi)) {
		ret = fscrypt_prepare(sbi, fi);
		if (ret)
			return ret;
	}
	ret = read_dloc(sbi, fi, &dloc);
	if (ret)
		return ret;
	vi = calloc(1, sizeof(*vi));
	if (vi) {
		vi->desc_size = le32(dloc.size);
		vi->desc_pos = le64(dloc.pos);
		desc = malloc(vi->desc_size ? vi->desc_size : 1);
	}
	if (!vi || !desc) {
		free(vi);
		return -ENOMEM;
	}
	ret = meta_read(sbi, fi, desc, vi->desc_size, vi->desc_pos);
	if (!ret) {
		ret = verity_parse_descriptor(&vi->p, desc, vi->desc_size, fi->size, vi->root);
		if (ret)
			f2fs_error(sbi, -ret, "inode %u: invalid verity descriptor", fi->ino);
	}
	if (!ret) {
		/* the file digest covers the descriptor with no signature */
		verity_put_le32(desc + DESC_SIG_SIZE, 0);
		ret = verity_hash(&vi->p, desc, VERITY_DESC_SIZE, vi->digest);
	}
	free(desc);
	vi->meta_pos = verity_metadata_pos(fi->size);
	vi->slots = malloc((size_t)VERITY_CACHE_SLOTS * vi->p.bs);
	vi->scratch = malloc((size_t)VERITY_MAX_LEVELS * vi->p.bs);
	vi->ctx = EVP_MD_CTX_new();
	vi->salted = EVP_MD_CTX_new();
	if (!ret && (!vi->slots || !vi->scratch || !vi->ctx || !vi->salted))
		ret = -ENOMEM;
	if (!ret && (!EVP_DigestInit_ex(vi->salted, vi->p.md, NULL) ||
		     (vi->p.padded_salt_size &&
		      !EVP_DigestUpdate(vi->salted, vi->p.padded_salt, vi->p.padded_salt_size))))
		ret = -EIO;
	if (ret) {
		EVP_MD_CTX_free(vi->ctx);
		EVP_MD_CTX_free(vi->salted);
		free(vi->slots);
		free(vi->scratch);
		free(vi);
		return ret;
	}
	pthread_mutex_init(&vi->lock, NULL);
	*out = vi;
	return 0;
}

/* The inode's verity state, loaded on first use; the caller holds i_rwsem. */
static int get_verity(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
		      struct f2fs_verity_info **out)
{
	struct f2fs_verity_info *vi;
	int ret;

	pthread_mutex_lock(&fi->i_lock);
	vi = fi->verity;
	pthread_mutex_unlock(&fi->i_lock);
	if (!vi) {
		ret = load_verity(sbi, fi, &vi);
		if (ret)
			return ret;
		pthread_mutex_lock(&fi->i_lock);
		if (fi->verity) {	/* another reader won */
			struct f2fs_inode_info tmp = { .verity = vi };

			f2fs_verity_free(&tmp);
			vi = fi->verity;
		} else {
			fi->verity = vi;
		}
		pthread_mutex_unlock(&fi->i_lock);
	}
	*out = vi;
	return 0;
}

int f2fs_verity_open(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	struct f2fs_verity_info *vi;

	return get_verity(sbi, fi, &vi);
}

/// Verified reads (fs/verity/verify.c) ///

static uint8_t *cache_find(struct f2fs_verity_info *vi, uint64_t index)
{
	unsigned int s = index % VERITY_CACHE_SLOTS;

	if (vi->slot_valid[s] && vi->slot_index[s] == index)
		return vi->slots + (size_t)s * vi->p.bs;
	return NULL;
}

static void cache_add(struct f2fs_verity_info *vi, uint64_t index, const uint8_t *block)
{
	unsigned int s = index % VERITY_CACHE_SLOTS;

	memcpy(vi->slots + (size_t)s * vi->p.bs, block, vi->p.bs);
	vi->slot_index[s] = index;
	vi->slot_valid[s] = true;
}

/* verity_hash_block with the inode's reused state; caller holds vi->lock. */
static int vi_hash_block(struct f2fs_verity_info *vi, const void *block, uint8_t *out)
{
	if (!EVP_MD_CTX_copy_ex(vi->ctx, vi->salted) ||
	    !EVP_DigestUpdate(vi->ctx, block, vi->p.bs) || !EVP_DigestFinal_ex(vi->ctx, out, NULL))
		return -EIO;
	return 0;
}

/*
 * Data blocks are hashed by each reader with a state of its own, outside
 * the lock, so parallel readers of one file hash in parallel; only the tree
 * walk and its cache are serialized.
 */
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
static int verify_block_locked(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			       struct f2fs_verity_info *vi, uint64_t dblk, const uint8_t *dh)
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
		ret = meta_read(sbi, fi, vi->scratch + (size_t)level * p->bs, p->bs,
				vi->meta_pos + (tblk[level] << p->log_bs));
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
			return f2fs_error(sbi, EIO, "inode %u: verity Merkle tree block %llu "
					  "(level %d) does not match its hash", fi->ino,
					  (unsigned long long)tblk[level], level);
		cache_add(vi, tblk[level], blk);
		memcpy(want, blk + hoff[level], ds);
	}
	if (memcmp(dh, want, ds))
		return f2fs_error(sbi, EIO, "inode %u: verity check failed for data block %llu",
				  fi->ino, (unsigned long long)dblk);
	return 0;
}

/*
 * A read of a verity file goes through the zero-copy read path for whole
 * Merkle blocks; this callback checks each block in the folios (a partial
 * last block through a zero-padded copy, as fs/verity hashes it) and hands
 * on only the bytes asked for. Nothing reaches the caller unchecked.
 */
struct verity_read_ctx {
	struct f2fs_sb_info *sbi;
	struct f2fs_inode_info *fi;
	struct f2fs_verity_info *vi;
	uint64_t start;		/* Merkle-block aligned offset read */
	uint64_t off;		/* what the caller asked for */
	size_t len;
	uf2fs_emit_t emit;
	void *arg;
	ssize_t done;		/* bytes handed on */
	int err;
};

static int verify_iov(struct verity_read_ctx *c, const struct iovec *iov, int cnt)
{
	struct f2fs_verity_info *vi = c->vi;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	uint8_t *pad = NULL, dh[VERITY_MAX_DIGEST];
	uint64_t pos = c->start;
	int ret = ctx ? 0 : -ENOMEM;

	for (int i = 0; i < cnt && !ret; i++) {
		const uint8_t *p = iov[i].iov_base;
		size_t left = iov[i].iov_len;

		while (left && !ret) {
			size_t n = MIN(left, (size_t)vi->p.bs);
			const uint8_t *blk = p;

			if (n < vi->p.bs) {	/* EOF inside the block */
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
				ret = verify_block_locked(c->sbi, c->fi, vi, pos >> vi->p.log_bs,
							  dh);
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

static int verity_read_cb(void *arg, const struct iovec *iov, int cnt)
{
	struct verity_read_ctx *c = arg;
	struct iovec out[cnt > 0 ? cnt : 1];
	uint64_t pos = c->start, end = c->off + c->len;
	int n = 0;

	c->err = verify_iov(c, iov, cnt);
	if (c->err)
		return -1;
	/* trim to [off, off + len) */
	for (int i = 0; i < cnt; i++) {
		uint64_t s = MAX(pos, c->off), e = MIN(pos + iov[i].iov_len, end);

		if (s < e) {
			out[n].iov_base = (uint8_t *)iov[i].iov_base + (s - pos);
			out[n].iov_len = (size_t)(e - s);
			c->done += (ssize_t)out[n++].iov_len;
		}
		pos += iov[i].iov_len;
	}
	return c->emit(c->arg, out, n);
}

ssize_t f2fs_verity_read_iov(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, size_t len,
			     uint64_t off, uf2fs_emit_t emit, void *arg)
{
	struct verity_read_ctx c = { .sbi = sbi, .fi = fi, .off = off, .emit = emit, .arg = arg };
	uint64_t end;
	ssize_t ret = get_verity(sbi, fi, &c.vi);

	if (ret)
		return ret;
	if (off >= fi->size || !len)
		return emit(arg, NULL, 0) ? -EIO : 0;
	c.len = (size_t)MIN((uint64_t)len, fi->size - off);
	c.start = off & ~(uint64_t)(c.vi->p.bs - 1);
	end = MIN((off + c.len + c.vi->p.bs - 1) & ~(uint64_t)(c.vi->p.bs - 1), fi->size);
	ret = f2fs_file_read_iov(sbi, fi, (size_t)(end - c.start), c.start, verity_read_cb, &c);
	if (c.err)
		return c.err;
	return ret < 0 ? ret : c.done;
}

struct copy_sink {
	uint8_t *buf;
	size_t done;
};

static int copy_cb(void *arg, const struct iovec *iov, int cnt)
{
	struct copy_sink *s = arg;

	for (int i = 0; i < cnt; i++) {
		memcpy(s->buf + s->done, iov[i].iov_base, iov[i].iov_len);
		s->done += iov[i].iov_len;
	}
	return 0;
}

ssize_t f2fs_verity_read(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, void *buf,
			 size_t len, uint64_t off)
{
	struct copy_sink s = { .buf = buf };

	return f2fs_verity_read_iov(sbi, fi, len, off, copy_cb, &s);
}

/// FS_IOC_ENABLE_VERITY (fs/verity/enable.c, f2fs_end_enable_verity) ///

struct enable_ctx {
	struct f2fs_sb_info *sbi;
	struct f2fs_inode_info *fi;
	uint64_t meta_blk;	/* first file block of the metadata */
	unsigned int log_bs;
	uint8_t *meta;		/* Merkle blocks smaller than fs blocks: gathered here */
};

static ssize_t enable_read(void *arg, void *buf, size_t len, uint64_t off)
{
	struct enable_ctx *c = arg;

	return f2fs_file_read(c->sbi, c->fi, buf, len, off);
}

/*
 * One metadata block to a fresh block of the log, its dnode pointing at it.
 * The range past EOF was emptied first, so the slot is always a hole.
 */
static int write_meta_block(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t lblk,
			    const void *data)
{
	struct dnode_of_data dn;
	struct f2fs_summary sum;
	struct node_info ni;
	uint8_t enc[F2FS_BLKSIZE];
	struct iovec iov = { (void *)data, F2FS_BLKSIZE };
	uint32_t *addrs;
	block_t blk;
	int ret = 0;

	/* as f2fs writes it from the page cache: encrypted as data at that index */
	if (fscrypt_file_data(fi)) {
		ret = fscrypt_crypt_blocks(sbi, fi, lblk, data, enc, 1, true);
		iov.iov_base = enc;
	}
	if (!ret)
		ret = f2fs_get_dnode_alloc(sbi, fi, lblk, &dn);
	if (ret)
		return ret;
	addrs = (uint32_t *)dn.addrs;
	ret = f2fs_get_node_info(sbi, le32(folio_node(dn.folio)->footer.nid), &ni);
	if (!ret && addrs[dn.ofs] != NULL_ADDR)
		ret = f2fs_error(sbi, EEXIST, "inode %u: block %llu past EOF is in use", fi->ino,
				 (unsigned long long)lblk);
	if (!ret) {
		sum.nid = le32(folio_node(dn.folio)->footer.nid);
		sum.version = ni.version;
		sum.ofs_in_node = (uint16_t)dn.ofs;
		pthread_mutex_lock(&sbi->writepages);
		ret = f2fs_allocate_block(sbi, (fi->i_advise & FADVISE_COLD_BIT) ?
					  CURSEG_COLD_DATA : CURSEG_WARM_DATA, &sum, &blk);
		pthread_mutex_unlock(&sbi->writepages);
	}
	if (!ret) {
		addrs[dn.ofs] = blk;
		fi->blocks++;
		folio_mark_dirty(sbi, dn.folio);
		f2fs_mark_inode_dirty(sbi, fi);
		ret = f2fs_dev_writev_blocks(&sbi->dev, &iov, 1, blk);
	}
	folio_put(sbi, dn.folio);
	return ret;
}

static int enable_emit(void *arg, const void *block, uint64_t index)
{
	struct enable_ctx *c = arg;

	if (c->meta) {
		memcpy(c->meta + (index << c->log_bs), block, 1u << c->log_bs);
		return 0;
	}
	/* a 4 KiB Merkle block is one fs block: straight to the device */
	return write_meta_block(c->sbi, c->fi, c->meta_blk + index, block);
}

/*
 * The descriptor (and signature) at byte offset pos of the metadata, and
 * with small Merkle blocks the gathered tree before it, block by block.
 */
static int write_descriptor(struct enable_ctx *c, uint64_t pos, const uint8_t *desc,
			    const void *sig, uint32_t sig_size)
{
	uint64_t from = c->meta ? 0 : pos - (c->meta_blk << F2FS_BLKSIZE_BITS);
	uint64_t rel = pos - (c->meta_blk << F2FS_BLKSIZE_BITS);
	size_t blocks = DIV_ROUND_UP(rel + VERITY_DESC_SIZE + sig_size - from, F2FS_BLKSIZE);
	uint8_t *buf = c->meta ? c->meta : calloc(blocks, F2FS_BLKSIZE);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	memcpy(buf + rel - from, desc, VERITY_DESC_SIZE);
	verity_put_le32(buf + rel - from + DESC_SIG_SIZE, sig_size);
	if (sig_size)
		memcpy(buf + rel - from + VERITY_DESC_SIZE, sig, sig_size);
	for (size_t i = 0; i < blocks && !ret; i++)
		ret = write_meta_block(c->sbi, c->fi, c->meta_blk + (from >> F2FS_BLKSIZE_BITS) + i,
				       buf + i * F2FS_BLKSIZE);
	if (!c->meta)
		free(buf);
	return ret;
}

/* The checks of fsverity_ioctl_enable and f2fs_begin_enable_verity, in their order. */
static int enable_checks(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	if (fi->flags & F2FS_APPEND_FL)
		return -EPERM;
	if (fi->flags & F2FS_IMMUTABLE_FL)
		return -EPERM;	/* inode_permission(MAY_WRITE) */
	if (S_ISDIR(fi->mode))
		return -EISDIR;
	if (!S_ISREG(fi->mode))
		return -EINVAL;
	if (f2fs_is_verity(fi))
		return -EEXIST;
	if (fi->atomic)
		return -EOPNOTSUPP;
	if (f2fs_is_compressed(fi))
		return f2fs_error(sbi, EOPNOTSUPP, "inode %u: fs-verity on a compressed file is "
				  "not supported by uf2fs", fi->ino);
	/* the file was opened for writing: fscrypt_file_open wants the key */
	return fscrypt_file_data(fi) ? fscrypt_prepare(sbi, fi) : 0;
}

static int do_enable(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
		     const struct uf2fs_verity_arg *arg)
{
	struct enable_ctx c = { .sbi = sbi, .fi = fi };
	struct verity_params p;
	uint8_t root[VERITY_MAX_DIGEST], desc[VERITY_DESC_SIZE];
	uint64_t eof_blk = DIV_ROUND_UP(fi->size, F2FS_BLKSIZE), meta_pos, desc_pos;
	struct f2fs_verity_dloc dloc;
	int ret = enable_checks(sbi, fi);

	if (!ret)
		ret = verity_params_init(&p, arg->hash_algorithm, verity_ilog2_u32(arg->block_size),
					 arg->salt, arg->salt_size, fi->size);
	if (ret)
		return ret;
	meta_pos = verity_metadata_pos(fi->size);
	desc_pos = meta_pos + (p.tree_blocks << p.log_bs);
	c.meta_blk = meta_pos >> F2FS_BLKSIZE_BITS;
	c.log_bs = p.log_bs;
	if (p.bs < F2FS_BLKSIZE) {
		c.meta = calloc(DIV_ROUND_UP(desc_pos - meta_pos + VERITY_DESC_SIZE + arg->sig_size,
					     F2FS_BLKSIZE), F2FS_BLKSIZE);
		if (!c.meta)
			return -ENOMEM;
	}
	/* as f2fs_begin_enable_verity and end_enable_verity: no inline data, data on disk */
	ret = f2fs_convert_inline_inode(sbi, fi);
	if (!ret)
		ret = f2fs_writeback_inode(sbi, fi);
	/* what fallocate(KEEP_SIZE) left past EOF makes room for the metadata */
	if (!ret)
		ret = f2fs_truncate_blocks(sbi, fi, eof_blk);
	if (!ret)
		folio_drop_range(sbi, MAP_DATA, fi->ino, eof_blk, UINT64_MAX);
	if (!ret)
		ret = f2fs_check_space(sbi, p.tree_blocks + 2 * (p.tree_blocks / 1018 + 4) +
				       DIV_ROUND_UP(VERITY_DESC_SIZE + arg->sig_size,
						    F2FS_BLKSIZE));
	if (!ret)
		ret = verity_build_tree(&p, enable_read, enable_emit, &c, root);
	if (!ret) {
		verity_make_descriptor(&p, root, desc);
		ret = write_descriptor(&c, desc_pos, desc, arg->sig, arg->sig_size);
	}
	if (!ret) {
		dloc.version = le32(F2FS_VERITY_XATTR_VER);
		dloc.size = le32(VERITY_DESC_SIZE + arg->sig_size);
		dloc.pos = le64(desc_pos);
		ret = f2fs_setxattr_indexed(sbi, fi, F2FS_XATTR_INDEX_VERITY,
					    F2FS_VERITY_XATTR_NAME, &dloc, sizeof(dloc),
					    XATTR_CREATE);
	}
	free(c.meta);
	if (!ret) {
		fi->i_advise |= FADVISE_VERITY_BIT;
		f2fs_inode_touch(fi, false, true);
		f2fs_mark_inode_dirty(sbi, fi);
		return 0;
	}
	/* as the kernel's cleanup: whatever was written past EOF goes */
	f2fs_truncate_blocks(sbi, fi, eof_blk);
	return ret;
}

int uf2fs_enable_verity(struct uf2fs *fs, uint32_t ino, const struct uf2fs_verity_arg *arg)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;
	int ret;

	if (!f2fs_has_feature(sbi, F2FS_FEATURE_VERITY))
		return f2fs_error(sbi, EOPNOTSUPP, "the verity feature is not enabled on this "
				  "filesystem (mkfs.f2fs -O verity)");
	if (arg->block_size == 0 || (arg->block_size & (arg->block_size - 1)))
		return -EINVAL;
	if (arg->salt_size > VERITY_MAX_SALT || arg->sig_size > VERITY_MAX_SIG)
		return -EMSGSIZE;
	if ((arg->salt_size && !arg->salt) || (arg->sig_size && !arg->sig))
		return -EFAULT;
	if (sbi->opts.read_only)
		return -EROFS;
	ret = f2fs_begin_write(sbi);
	if (ret)
		return ret;
	fi = ino < F2FS_RESERVED_NODE_NUM ? ERR_PTR(-ENOENT) : f2fs_iget(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
	} else {
		pthread_rwlock_wrlock(&fi->i_rwsem);
		ret = do_enable(sbi, fi, arg);
		pthread_rwlock_unlock(&fi->i_rwsem);
		f2fs_iput(sbi, fi);
	}
	f2fs_end_write(sbi);
	return ret;
}

/// FS_IOC_MEASURE_VERITY and FS_IOC_READ_VERITY_METADATA ///

static int verity_op_begin(struct f2fs_sb_info *sbi, uint32_t ino, struct f2fs_inode_info **fip,
			   struct f2fs_verity_info **vip)
{
	struct f2fs_inode_info *fi;
	int ret;

	if (!f2fs_has_feature(sbi, F2FS_FEATURE_VERITY))
		return -EOPNOTSUPP;
	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	fi = ino < F2FS_RESERVED_NODE_NUM ? ERR_PTR(-ENOENT) : f2fs_iget(sbi, ino);
	if (IS_ERR(fi)) {
		pthread_rwlock_unlock(&sbi->cp_rwsem);
		return PTR_ERR(fi);
	}
	pthread_rwlock_rdlock(&fi->i_rwsem);
	ret = f2fs_is_verity(fi) ? get_verity(sbi, fi, vip) : -ENODATA;
	if (ret) {
		pthread_rwlock_unlock(&fi->i_rwsem);
		f2fs_iput(sbi, fi);
		pthread_rwlock_unlock(&sbi->cp_rwsem);
		return ret;
	}
	*fip = fi;
	return 0;
}

static void verity_op_end(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	pthread_rwlock_unlock(&fi->i_rwsem);
	f2fs_iput(sbi, fi);
	pthread_rwlock_unlock(&sbi->cp_rwsem);
}

int uf2fs_measure_verity(struct uf2fs *fs, uint32_t ino, uint16_t *alg, uint8_t *digest,
			 uint16_t *size)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;
	struct f2fs_verity_info *vi;
	int ret = verity_op_begin(sbi, ino, &fi, &vi);

	if (ret)
		return ret;
	*alg = (uint16_t)vi->p.alg;
	*size = (uint16_t)vi->p.digest_size;
	memcpy(digest, vi->digest, vi->p.digest_size);
	verity_op_end(sbi, fi);
	return 0;
}

/* As fsverity_ioctl_read_metadata: bytes copied, 0 past the end. */
ssize_t uf2fs_read_verity_metadata(struct uf2fs *fs, uint32_t ino, uint64_t type,
				   uint64_t off, void *buf, size_t len)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;
	struct f2fs_verity_info *vi;
	uint8_t *desc = NULL;
	uint64_t total = 0, base = 0;
	ssize_t ret = verity_op_begin(sbi, ino, &fi, &vi);

	if (ret)
		return ret;
	switch (type) {
	case FS_VERITY_METADATA_TYPE_MERKLE_TREE:
		base = vi->meta_pos;
		total = vi->p.tree_blocks << vi->p.log_bs;
		break;
	case FS_VERITY_METADATA_TYPE_DESCRIPTOR:
	case FS_VERITY_METADATA_TYPE_SIGNATURE:
		desc = malloc(vi->desc_size);
		ret = desc ? meta_read(sbi, fi, desc, vi->desc_size, vi->desc_pos) : -ENOMEM;
		if (ret)
			break;
		if (type == FS_VERITY_METADATA_TYPE_DESCRIPTOR) {
			verity_put_le32(desc + DESC_SIG_SIZE, 0);	/* as it is hashed */
			total = VERITY_DESC_SIZE;
		} else {
			total = verity_get_le32(desc + DESC_SIG_SIZE);
			ret = total ? 0 : -ENODATA;
		}
		break;
	default:
		ret = -EINVAL;
	}
	if (!ret) {
		len = off >= total ? 0 : MIN((uint64_t)len, total - off);
		if (desc)
			memcpy(buf, desc + (type == FS_VERITY_METADATA_TYPE_SIGNATURE ?
					    VERITY_DESC_SIZE : 0) + off, len);
		else if (len)
			ret = meta_read(sbi, fi, buf, len, base + off);
		if (!ret)
			ret = (ssize_t)len;
	}
	free(desc);
	verity_op_end(sbi, fi);
	return ret;
}

