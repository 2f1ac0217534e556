// SPDX-License-Identifier: GPL-2.0
/*
 * Writing compressed files. This file owns what happens to a regular file
 * with F2FS_COMPR_FL once it is written: its compression context (taken
 * from the mount's compress_* options when a +c directory or a
 * compress_extension makes it, or when chattr +c marks it while empty),
 * the writeback of its dirty clusters, the truncation of a partial
 * cluster, and the block accounting Linux and fsck.f2fs expect.
 *
 * A compressed file's data folios are whole clusters (2^log_cluster_size
 * blocks, aligned), filled by f2fs_read_cluster; a write dirties blocks of
 * them. At writeback a cluster that lies within EOF is compressed with the
 * inode's algorithm; if that saves at least one block it is stored as Linux
 * fs/f2fs/compress.c (f2fs_write_compressed_pages) stores it: COMPRESS_ADDR
 * in the first slot, the compressed blocks, NEW_ADDR in the slots saved.
 * Otherwise, and always for the cluster that straddles EOF, the cluster is
 * stored raw, as f2fs_write_raw_pages does: its dirty blocks, or all of
 * them when it was compressed before, each in its own block; slots past
 * EOF are freed. In an encrypted file each block is then encrypted as
 * the file block of its slot, compressed blocks included, as Linux lays
 * them out (compress, then encrypt; the read side decrypts the same way).
 *
 * Accounting, as the kernel's and fsck's: every slot that is not NULL_ADDR
 * counts in i_blocks and in the checkpoint's valid blocks (COMPRESS_ADDR
 * and NEW_ADDR too: the kernel reserved them when the data was written),
 * only real blocks in the SIT; i_compr_blocks counts, per compressed
 * cluster, COMPRESS_ADDR and the NEW_ADDR slots after it. A released file
 * (F2FS_COMPRESS_RELEASED) gave those back and takes no writes.
 */
#include <stdlib.h>
#include <strings.h>

#include "f2fs.h"

#define STAGE_BLOCKS	256	/* 1 MiB of blocks per device request */

static bool is_real_blkaddr(block_t b)
{
	return b != NULL_ADDR && b != NEW_ADDR && b != COMPRESS_ADDR;
}

/// Compression context of new and newly marked inodes ///

/* As the kernel's extra attribute check: the compression fields must fit. */
static bool extra_fits_compression(unsigned int extra_isize_bytes)
{
	return extra_isize_bytes >=
	       offsetof(struct f2fs_inode, i_extra_end) - OFFSET_OF_END_OF_I_EXT;
}

struct compress_context {
	uint8_t algorithm;
	uint8_t log_cluster_size;
	uint16_t flag;		/* i_compress_flag: checksum bit, level above */
};

/* As the kernel's set_compress_context, from this mount's options. */
static struct compress_context mount_context(const struct f2fs_sb_info *sbi)
{
	static const uint8_t algos[] = {
		[UF2FS_COMPRESS_DEFAULT] = COMPRESS_LZ4, [UF2FS_COMPRESS_LZO] = COMPRESS_LZO,
		[UF2FS_COMPRESS_LZ4] = COMPRESS_LZ4, [UF2FS_COMPRESS_ZSTD] = COMPRESS_ZSTD,
		[UF2FS_COMPRESS_LZORLE] = COMPRESS_LZORLE,
	};
	const struct uf2fs_compress_options *o = &sbi->opts.compress;
	struct compress_context c = { COMPRESS_LZ4, MIN_COMPRESS_LOG_SIZE, 0 };
	unsigned int level = o->level;

	if ((unsigned int)o->algorithm < ARRAY_SIZE(algos))
		c.algorithm = algos[o->algorithm];
	if (o->log_size >= MIN_COMPRESS_LOG_SIZE && o->log_size <= MAX_COMPRESS_LOG_SIZE)
		c.log_cluster_size = o->log_size;
	/*
	 * Only lz4 and zstd have levels; a zstd inode always records one
	 * (the kernel's mount option defaults it to 1, and newer kernels
	 * refuse a zstd inode with level 0).
	 */
	if (c.algorithm == COMPRESS_ZSTD && !level)
		level = 1;
	if (c.algorithm != COMPRESS_LZ4 && c.algorithm != COMPRESS_ZSTD)
		level = 0;
	c.flag = (o->chksum ? COMPRESS_CHKSUM_FLAG : 0) |
		 (MIN(level, 255u) << COMPRESS_LEVEL_OFFSET);
	return c;
}

static void set_raw_context(struct f2fs_inode *ri, struct compress_context c)
{
	ri->i_compress_algorithm = c.algorithm;
	ri->i_log_cluster_size = c.log_cluster_size;
	ri->i_compress_flag = c.flag;
	ri->i_compr_blocks = 0;
	ri->i_flags = (ri->i_flags | F2FS_COMPR_FL) & ~F2FS_NOCOMP_FL;
	/* as f2fs_may_inline_data: compressed data never lives in the inode */
	if (S_ISREG(ri->i_mode))
		ri->i_inline &= ~(F2FS_INLINE_DATA | F2FS_DATA_EXIST);
}

/* As the kernel's is_extension_exist without temporary extensions: "name.ext" or "*". */
static bool name_has_ext(const char *name, size_t len, const uint8_t *ext)
{
	size_t el = strnlen((const char *)ext, F2FS_EXTENSION_LEN);

	if (el == 1 && ext[0] == '*')
		return true;
	if (!el || len < el + 2 || name[len - el - 1] != '.')
		return false;
	return !strncasecmp(name + len - el, (const char *)ext, el);
}

static bool is_hot_file(const struct f2fs_sb_info *sbi, const char *name, size_t len)
{
	unsigned int cold = le32(sbi->raw_super.extension_count);
	unsigned int end = MIN(cold + sbi->raw_super.hot_ext_count,
			       (unsigned int)F2FS_MAX_EXTENSION);

	for (unsigned int i = cold; i < end; i++)
		if (name_has_ext(name, len, sbi->raw_super.extension_list[i]))
			return true;
	return false;
}

/*
 * As the kernel's set_compress_new_inode: a regular file is compressed when
 * its name has a compress_extension, unless it has a hot extension of the
 * super block; otherwise it and a directory inherit the parent's
 * F2FS_NOCOMP_FL, or else its F2FS_COMPR_FL. Other inodes are never
 * compressed.
 */
enum new_compression { NEW_PLAIN, NEW_NOCOMP, NEW_COMPR };

static enum new_compression new_inode_compression(struct f2fs_sb_info *sbi,
						  const struct f2fs_inode_info *dir,
						  uint32_t mode, const char *name, size_t len)
{
	const struct uf2fs_compress_options *o = &sbi->opts.compress;
	unsigned int nr_ext = MIN(o->nr_ext, (unsigned int)UF2FS_COMPRESS_EXT_MAX);

	if (S_ISREG(mode)) {
		if (is_hot_file(sbi, name, len))
			return NEW_PLAIN;
		for (unsigned int i = 0; i < nr_ext; i++)
			if (name_has_ext(name, len, (const uint8_t *)o->ext[i]))
				return NEW_COMPR;
	} else if (!S_ISDIR(mode)) {
		return NEW_PLAIN;
	}
	if (dir->flags & F2FS_NOCOMP_FL)
		return NEW_NOCOMP;
	return (dir->flags & F2FS_COMPR_FL) ? NEW_COMPR : NEW_PLAIN;
}

void f2fs_compress_new_inode(struct f2fs_sb_info *sbi, const struct f2fs_inode_info *dir,
			     struct f2fs_inode *ri, const char *name, size_t len)
{
	if (!dir || !f2fs_has_feature(sbi, F2FS_FEATURE_COMPRESSION) ||
	    !(ri->i_inline & F2FS_EXTRA_ATTR) || !extra_fits_compression(ri->i_extra_isize))
		return;
	switch (new_inode_compression(sbi, dir, ri->i_mode, name, len)) {
	case NEW_NOCOMP:
		ri->i_flags |= F2FS_NOCOMP_FL;
		break;
	case NEW_COMPR:
		set_raw_context(ri, mount_context(sbi));
		break;
	case NEW_PLAIN:
		break;
	}
}

/*
 * The same rule for an inode made in an encrypted directory, which got the
 * encrypted name at creation: the kernel matches compress_extension
 * against the name the user gave (set_compress_new_inode sees the dentry's
 * plaintext name), so this runs once that name is known, on the new,
 * still empty inode.
 */
int f2fs_compress_new_encrypted(struct f2fs_sb_info *sbi, const struct f2fs_inode_info *dir,
				struct f2fs_inode_info *fi, const char *name, size_t len)
{
	if (!f2fs_has_feature(sbi, F2FS_FEATURE_COMPRESSION) || !(fi->i_inline & F2FS_EXTRA_ATTR) ||
	    !extra_fits_compression(fi->extra_isize * 4))
		return 0;
	switch (new_inode_compression(sbi, dir, fi->mode, name, len)) {
	case NEW_NOCOMP:
		fi->flags |= F2FS_NOCOMP_FL;
		f2fs_mark_inode_dirty(sbi, fi);
		return 0;
	case NEW_COMPR:
		return f2fs_set_compression(sbi, fi, true);
	case NEW_PLAIN:
		break;
	}
	return 0;
}

/* Where the block addresses start and how many the inode holds depends on compression. */
static void set_addrs_per_inode(struct f2fs_inode_info *fi)
{
	fi->addrs_per_inode = DEF_ADDRS_PER_INODE - fi->extra_isize - fi->inline_xattr_addrs;
	if (f2fs_is_compressed(fi))
		fi->addrs_per_inode &= ~(f2fs_cluster_size(fi) - 1);
}

static int set_dir_compression(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, bool on)
{
	struct folio *f;

	if (on) {
		f = f2fs_get_inode_folio(sbi, fi->ino);
		if (IS_ERR(f))
			return PTR_ERR(f);
		/* a directory only passes the flag on; its fields are what the kernel writes */
		set_raw_context(&folio_node(f)->i, mount_context(sbi));
		folio_mark_dirty(sbi, f);
		folio_put(sbi, f);
		fi->flags |= F2FS_COMPR_FL;
	} else {
		fi->flags &= ~F2FS_COMPR_FL;
	}
	f2fs_mark_inode_dirty(sbi, fi);
	return 0;
}

/*
 * As the kernel's f2fs_setflags_common: compression goes on only for an
 * empty regular file or a directory (inline data is converted first),
 * and off only while the file has no blocks. Data waiting in the cache
 * is written first, since the kernel would have reserved its blocks.
 */
int f2fs_set_compression(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, bool on)
{
	int ret;

	if (on && !extra_fits_compression(fi->extra_isize * 4))
		return -EOPNOTSUPP;
	if (S_ISDIR(fi->mode))
		return set_dir_compression(sbi, fi, on);
	if (!S_ISREG(fi->mode)) {
		if (on)
			return -EINVAL;
		fi->flags &= ~F2FS_COMPR_FL;
		return 0;
	}
	if (on && fi->atomic)
		return -EINVAL;
	ret = on ? f2fs_convert_inline_inode(sbi, fi) : 0;
	if (!ret)
		ret = f2fs_writeback_inode(sbi, fi);
	if (ret)
		return ret;
	if (fi->blocks > 1)
		return -EINVAL;
	/* the cached folios were cut for the other geometry; holes only, and clean */
	folio_truncate_owner(sbi, MAP_DATA, fi->ino, 0);
	f2fs_extent_invalidate(fi, 0, UINT64_MAX);
	if (on) {
		struct compress_context c = mount_context(sbi);

		fi->compress_algorithm = c.algorithm;
		fi->log_cluster_size = c.log_cluster_size;
		fi->compress_flag = c.flag;
		fi->flags = (fi->flags | F2FS_COMPR_FL) & ~F2FS_NOCOMP_FL;
		fi->max_order = 0;
	} else {
		fi->flags &= ~F2FS_COMPR_FL;
		fi->max_order = sbi->opts.max_folio_order;
	}
	fi->compr_blocks = 0;
	set_addrs_per_inode(fi);
	f2fs_mark_inode_dirty(sbi, fi);
	return 0;
}

/// Writing ///

int f2fs_prepare_cluster_write(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			       struct folio *f, uint64_t pos, uint64_t wend)
{
	uint64_t fstart = f->index << F2FS_BLKSIZE_BITS;
	uint64_t fend = fstart + ((uint64_t)F2FS_BLKSIZE << f->order);
	uint64_t eof = MAX(fi->size, fstart);
	int ret = 0;

	if (f->order != fi->log_cluster_size)
		return f2fs_error(sbi, EIO, "inode %u: data folio at block %llu is not one cluster",
				  fi->ino, (unsigned long long)f->index);
	/* a write of the whole cluster needs nothing of the old one */
	if (pos > fstart || wend < fend)
		ret = f2fs_read_cluster(sbi, fi, f);
	/* what lies past EOF must read as zeroes once the file grows over it */
	if (!ret && eof < fend)
		memset(f->data + (eof - fstart), 0, fend - eof);
	return ret;
}

/// Truncation ///

void f2fs_compr_blocks_on_free(struct f2fs_inode_info *fi, const uint32_t *addrs,
			       unsigned int from, unsigned int nr)
{
	unsigned int cs = f2fs_cluster_size(fi);
	uint64_t freed = 0;

	/* a released file counts none (fsck) */
	if (f2fs_compress_released(fi))
		return;
	/* nodes start on cluster boundaries, so a slot's cluster starts at a multiple of cs */
	for (unsigned int i = from; i < nr; i++) {
		unsigned int head = i & ~(cs - 1);

		if (le32(addrs[head]) == COMPRESS_ADDR && (i == head || le32(addrs[i]) == NEW_ADDR))
			freed++;
	}
	fi->compr_blocks = fi->compr_blocks > freed ? fi->compr_blocks - freed : 0;
}

/*
 * The kernel's f2fs_truncate_partial_cluster: the cluster the new EOF cuts
 * is read (decompressed) whole, zeroed past EOF and dirtied, so writeback
 * stores it again, raw. Only the blocks from the cut on are marked dirty:
 * a raw cluster then keeps its other blocks, a compressed one is rewritten
 * whole anyway.
 */
static int zero_cluster_tail(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t size)
{
	unsigned int cs = f2fs_cluster_size(fi);
	uint64_t blk = size >> F2FS_BLKSIZE_BITS, cstart = blk & ~(uint64_t)(cs - 1);
	uint64_t off = size - (cstart << F2FS_BLKSIZE_BITS);
	bool created;
	struct folio *f = folio_grab(sbi, MAP_DATA, fi->ino, cstart, fi->log_cluster_size,
				     &created);
	int ret;

	if (IS_ERR(f))
		return PTR_ERR(f);
	if (created) {
		ret = f2fs_read_cluster(sbi, fi, f);
		folio_end_fill(sbi, f, !ret);
	} else {
		ret = folio_wait_uptodate(f);
	}
	if (!ret && f->order != fi->log_cluster_size)
		ret = f2fs_error(sbi, EIO, "inode %u: data folio at block %llu is not one cluster",
				 fi->ino, (unsigned long long)f->index);
	if (!ret) {
		memset(f->data + off, 0, ((size_t)cs << F2FS_BLKSIZE_BITS) - off);
		f2fs_mark_range_dirty(sbi, f, blk, cstart + cs);
	}
	folio_put(sbi, f);
	return ret;
}

int f2fs_truncate_compressed(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t size)
{
	unsigned int cs = f2fs_cluster_size(fi);
	uint64_t cbytes = (uint64_t)cs << F2FS_BLKSIZE_BITS;
	int ret = 0;

	if (size % cbytes) {
		if (f2fs_compress_released(fi))
			return -EPERM;
		ret = f2fs_check_space(sbi, cs);
		if (!ret)
			ret = zero_cluster_tail(sbi, fi, size);
	}
	/* whole clusters only: the partial one is rewritten by writeback */
	if (!ret)
		ret = f2fs_truncate_blocks(sbi, fi, DIV_ROUND_UP(size, cbytes) * cs);
	if (ret)
		return ret;
	fi->size = size;
	/* as the kernel: once emptied, the file may be written again */
	if (!size)
		fi->i_inline &= ~F2FS_COMPRESS_RELEASED;
	return 0;
}

/// Writeback ///

/* Blocks of consecutive addresses gathered into one device request. */
struct cw_stage {
	uint8_t *buf;
	block_t start;
	unsigned int cnt;
	struct f2fs_inode_info *crypt_fi;	/* encrypted file: the blocks' file indexes */
	uint64_t lblk[STAGE_BLOCKS];
};

/* An encrypted file's staged plaintext, encrypted in place in one call. */
static int stage_encrypt(struct f2fs_sb_info *sbi, struct cw_stage *st)
{
	const uint8_t *ins[STAGE_BLOCKS];

	for (unsigned int i = 0; i < st->cnt; i++)
		ins[i] = st->buf + ((size_t)i << F2FS_BLKSIZE_BITS);
	atomic_fetch_add(&sbi->ctr->crypt_wb_calls, 1);
	atomic_fetch_add(&sbi->ctr->crypt_wb_blocks, st->cnt);
	return fscrypt_crypt_gather(sbi->keyring, &st->crypt_fi->fscrypt, st->lblk, ins, st->buf,
				    st->cnt, true);
}

static int stage_flush(struct f2fs_sb_info *sbi, struct cw_stage *st)
{
	struct iovec v = { st->buf, (size_t)st->cnt << F2FS_BLKSIZE_BITS };
	int ret;

	if (!st->cnt)
		return 0;
	ret = st->crypt_fi ? stage_encrypt(sbi, st) : 0;
	if (ret) {
		st->cnt = 0;	/* nothing of it goes out */
		return ret;
	}
	ret = f2fs_dev_writev_blocks(&sbi->dev, &v, 1, st->start);
	if (ret)
		ret = f2fs_error(sbi, EIO, "compressed file data write at block %u (%u blocks) "
				 "failed: %s", st->start, st->cnt, strerror(-ret));
	atomic_fetch_add(&sbi->ctr->written_blocks, st->cnt);
	st->cnt = 0;
	return ret;
}

/*
 * Stage src for device block blk. An encrypted file's blocks are encrypted
 * when the stage goes out, each as its file block lblk: compress, then
 * encrypt, as Linux does (f2fs_write_compressed_pages encrypts compressed
 * block i as the cluster's page i + 1; a raw block as itself).
 */
static int stage_add(struct f2fs_sb_info *sbi, struct cw_stage *st, block_t blk,
		     const uint8_t *src, struct f2fs_inode_info *crypt_fi, uint64_t lblk)
{
	uint8_t *dst;
	int ret = 0;

	if (st->cnt && (st->cnt == STAGE_BLOCKS || blk != st->start + st->cnt))
		ret = stage_flush(sbi, st);
	if (ret)
		return ret;
	if (!st->cnt)
		st->start = blk;
	dst = st->buf + ((size_t)st->cnt << F2FS_BLKSIZE_BITS);
	memcpy(dst, src, F2FS_BLKSIZE);
	st->crypt_fi = crypt_fi;
	st->lblk[st->cnt++] = lblk;
	return 0;
}

/*
 * Point a slot elsewhere. Every slot that is not NULL_ADDR is one block of
 * i_blocks and of the valid block count; a real block is in the SIT as
 * well, where the allocation put it and invalidation takes it out.
 */
static void set_slot(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint32_t *slot,
		     block_t nblk)
{
	block_t old = le32(*slot);
	int reserved = 0;

	if (old == nblk)
		return;
	if (is_real_blkaddr(old))
		f2fs_invalidate_block(sbi, old);
	else if (old != NULL_ADDR)
		reserved--;
	if (nblk == NEW_ADDR || nblk == COMPRESS_ADDR)
		reserved++;
	if (reserved) {
		pthread_mutex_lock(&sbi->sm.lock);
		sbi->sm.valid_blocks += reserved;
		pthread_mutex_unlock(&sbi->sm.lock);
	}
	fi->blocks = fi->blocks + (nblk != NULL_ADDR) - (old != NULL_ADDR);
	*slot = nblk;
}

/* What a cluster adds to i_compr_blocks, counted as fsck counts it. */
static unsigned int cluster_saved(const uint32_t *a, unsigned int cs)
{
	unsigned int n = 1;

	if (le32(a[0]) != COMPRESS_ADDR)
		return 0;
	for (unsigned int i = 1; i < cs; i++)
		n += le32(a[i]) == NEW_ADDR;
	return n;
}

static bool cluster_block_dirty(const struct folio *f, unsigned int i)
{
	unsigned int nr = folio_nr_blocks(f);

	return !f->state || (f->state->bits[(nr + i) / 64] & (1ull << ((nr + i) % 64)));
}

struct cluster_write {
	struct f2fs_inode_info *fi;
	struct folio *f;		/* the cluster's data */
	int nr_cblocks;			/* compressed blocks in cbuf, or <= 0: raw */
	const uint8_t *cbuf;
	uint64_t eof_blk;
	struct cw_stage *st;
};

/* A new block for slot i of the cluster, holding src. */
static int write_slot(struct f2fs_sb_info *sbi, struct cluster_write *cw, unsigned int i,
		      uint32_t *slot, const struct f2fs_summary *sum, const uint8_t *src)
{
	struct f2fs_inode_info *crypt_fi = f2fs_encrypted_file(cw->fi) ? cw->fi : NULL;
	block_t blk;
	int ret;

	/* the kernel logs compressed files' data as cold */
	ret = f2fs_allocate_block(sbi, CURSEG_COLD_DATA, sum, &blk);
	if (ret)
		return ret;
	set_slot(sbi, cw->fi, slot, blk);
	return stage_add(sbi, cw->st, blk, src, crypt_fi, cw->f->index + i);
}

/* Caller holds sbi->writepages. */
static int write_cluster(struct f2fs_sb_info *sbi, struct cluster_write *cw)
{
	struct f2fs_inode_info *fi = cw->fi;
	struct folio *f = cw->f;
	unsigned int cs = f2fs_cluster_size(fi), before;
	struct dnode_of_data dn;
	struct f2fs_summary sum;
	struct node_info ni;
	bool was_compressed;
	uint32_t *a;
	int ret;

	ret = f2fs_get_dnode_alloc(sbi, fi, f->index, &dn);
	if (ret)
		return ret;
	if (dn.ofs + cs > dn.nr) {
		ret = f2fs_error(sbi, EFSCORRUPTED,
				 "inode %u: cluster at block %llu crosses a node", fi->ino,
				 (unsigned long long)f->index);
		goto out;
	}
	sum.nid = le32(folio_node(dn.folio)->footer.nid);
	ret = f2fs_get_node_info(sbi, sum.nid, &ni);
	if (ret)
		goto out;
	sum.version = ni.version;
	a = (uint32_t *)dn.addrs + dn.ofs;
	before = cluster_saved(a, cs);
	was_compressed = le32(a[0]) == COMPRESS_ADDR;
	for (unsigned int i = 0; i < cs && !ret; i++) {
		const uint8_t *src = NULL;
		block_t keep = le32(a[i]);

		if (cw->nr_cblocks > 0) {
			if (!i)
				keep = COMPRESS_ADDR;
			else if (i <= (unsigned int)cw->nr_cblocks)
				src = cw->cbuf + ((size_t)(i - 1) << F2FS_BLKSIZE_BITS);
			else
				keep = NEW_ADDR;
		} else if (f->index + i >= cw->eof_blk) {
			keep = NULL_ADDR;
		} else if (was_compressed || cluster_block_dirty(f, i)) {
			/* a compressed cluster's slots mean nothing raw: all of it goes */
			src = folio_block_ptr(f, f->index + i);
		}
		sum.ofs_in_node = dn.ofs + i;
		if (src)
			ret = write_slot(sbi, cw, i, &a[i], &sum, src);
		else
			set_slot(sbi, fi, &a[i], keep);
	}
	fi->compr_blocks = fi->compr_blocks + cluster_saved(a, cs) - before;
	folio_mark_dirty(sbi, dn.folio);
	f2fs_extent_invalidate(fi, f->index, cs);
	f2fs_mark_inode_dirty(sbi, fi);
out:
	folio_put(sbi, dn.folio);
	return ret;
}

/* Zero what lies past EOF in the cluster, as the kernel writes it. */
static void zero_past_eof(const struct f2fs_inode_info *fi, struct folio *f)
{
	uint64_t fstart = f->index << F2FS_BLKSIZE_BITS;
	uint64_t fend = fstart + ((uint64_t)F2FS_BLKSIZE << f->order);

	if (fi->size > fstart && fi->size < fend)
		memset(f->data + (fi->size - fstart), 0, fend - fi->size);
}

static int cmp_folio_index(const void *a, const void *b)
{
	const struct folio *x = *(struct folio *const *)a, *y = *(struct folio *const *)b;

	return x->index < y->index ? -1 : x->index > y->index;
}

static void put_written(struct f2fs_sb_info *sbi, struct folio **v, size_t n, bool ok,
			uint64_t eof_blk)
{
	for (size_t i = 0; i < n; i++) {
		struct folio *f = v[i];
		/* as plain files: a cluster written whole leaves the cache under dontcache */
		bool drop = ok && sbi->opts.dontcache > 0 && !f->state &&
			    f->index + folio_nr_blocks(f) <= eof_blk;

		if (ok)
			folio_clear_dirty(sbi, f);
		if (drop)
			folio_put_dropbehind(sbi, f);
		else
			folio_put(sbi, f);
	}
}

/* Caller holds the inode exclusively (or the checkpoint lock exclusively). */
int f2fs_writeback_compressed(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	unsigned int cs = f2fs_cluster_size(fi);
	uint64_t eof_blk = DIV_ROUND_UP(fi->size, F2FS_BLKSIZE);
	struct cw_stage st = { 0 };
	struct f2fs_cctx cc;
	bool can_compress;
	uint8_t *cbuf;
	struct folio **v;
	size_t n;
	int ret;

	ret = folio_collect_dirty(sbi, MAP_DATA, fi->ino, &v, &n);
	if (ret || !n) {
		free(v);
		return ret;
	}
	qsort(v, n, sizeof(*v), cmp_folio_index);
	/* an encrypted file's key is needed before any slot moves */
	if (f2fs_encrypted_file(fi))
		ret = fscrypt_prepare(sbi->keyring, &fi->fscrypt);
	if (ret) {
		put_written(sbi, v, n, false, eof_blk);
		free(v);
		return ret;
	}
	/* without the codec (an algorithm unknown to us) clusters go raw: always legal */
	can_compress = !f2fs_cctx_init(&cc, fi->compress_algorithm,
				       fi->compress_flag >> COMPRESS_LEVEL_OFFSET,
				       fi->compress_flag & COMPRESS_CHKSUM_FLAG,
				       fi->log_cluster_size);
	cbuf = malloc((size_t)(cs - 1) << F2FS_BLKSIZE_BITS);
	st.buf = malloc((size_t)STAGE_BLOCKS << F2FS_BLKSIZE_BITS);
	if (!cbuf || !st.buf)
		ret = -ENOMEM;
	for (size_t i = 0; i < n && !ret; i++) {
		struct cluster_write cw = {
			.fi = fi, .f = v[i], .nr_cblocks = -EAGAIN, .cbuf = cbuf,
			.eof_blk = eof_blk, .st = &st,
		};

		if (cw.f->order != fi->log_cluster_size || (cw.f->index & (cs - 1))) {
			ret = f2fs_error(sbi, EIO, "inode %u: data folio at block %llu is not one "
					 "cluster", fi->ino, (unsigned long long)cw.f->index);
			break;
		}
		/* wholly past EOF: a truncation is dropping it */
		if (cw.f->index >= eof_blk)
			continue;
		zero_past_eof(fi, cw.f);
		/* as cluster_may_compress: only a cluster wholly within EOF */
		if (can_compress && cw.f->index + cs <= eof_blk)
			cw.nr_cblocks = f2fs_compress_cluster(&cc, cw.f->data, cbuf);
		pthread_mutex_lock(&sbi->writepages);
		ret = write_cluster(sbi, &cw);
		pthread_mutex_unlock(&sbi->writepages);
		if (cw.nr_cblocks > 0)
			atomic_fetch_add(&sbi->ctr->compressed_clusters, 1);
	}
	if (!ret) {
		pthread_mutex_lock(&sbi->writepages);
		ret = stage_flush(sbi, &st);
		pthread_mutex_unlock(&sbi->writepages);
	}
	put_written(sbi, v, n, !ret, eof_blk);
	if (can_compress)
		f2fs_cctx_destroy(&cc);
	free(cbuf);
	free(st.buf);
	free(v);
	return ret;
}
