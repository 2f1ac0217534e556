// SPDX-License-Identifier: GPL-2.0
/*
 * f2fs's side of fs-verity (the kernel's fs/f2fs/verity.c): the struct
 * fsverity_operations lib/fsverity calls back, on disk exactly as Linux
 * keeps it: the Merkle tree from the first 64 KiB boundary at or past EOF,
 * the descriptor right after it, the descriptor's place in the verity
 * xattr (index 11, "v") and FADVISE_VERITY_BIT. Also the uf2fs_ calls
 * (enable, measure, read metadata) with f2fs's locks and checks, and the
 * verified read paths.
 *
 * The metadata lives past EOF, where the folio cache shows zeroes; so it is
 * read and written here block by block through the block map and the device,
 * never through the cache. A compressed file needs no special case: as in
 * Linux, only clusters wholly within EOF are ever compressed, so the blocks
 * past EOF are plain blocks of raw clusters (docs/verity.md).
 */
#include <linux/fsverity.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "f2fs.h"

#define SBI(fs) ((struct f2fs_sb_info *)(fs))
#define VERITY_MAX_FILE_BYTES	((uint64_t)(DEF_ADDRS_PER_INODE + 2 * DEF_ADDRS_PER_BLOCK + \
				 2ull * DEF_ADDRS_PER_BLOCK * NIDS_PER_BLOCK + \
				 (uint64_t)DEF_ADDRS_PER_BLOCK * NIDS_PER_BLOCK * NIDS_PER_BLOCK) \
				 << F2FS_BLKSIZE_BITS)

static struct f2fs_inode_info *F2FS_VI(const struct fsverity_inode *inode)
{
	return (struct f2fs_inode_info *)((char *)inode -
					  offsetof(struct f2fs_inode_info, fsverity));
}

/// Metadata past EOF, through the block map ///

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
			if (f2fs_encrypted_file(fi))
				ret = fscrypt_crypt_blocks(sbi->keyring, &fi->fscrypt, map.lblk, blk, blk, 1, false);
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
	    le64(dloc->pos) < f2fs_verity_metadata_pos(fi->size) || le32(dloc->size) > INT32_MAX ||
	    le32(dloc->size) > VERITY_DESC_SIZE + VERITY_MAX_SIG)
		return f2fs_error(sbi, EFSCORRUPTED, "inode %u: invalid verity xattr", fi->ino);
	return 0;
}

/// struct fsverity_operations: reading ///

static uint32_t f2fs_verity_ino(const struct fsverity_inode *inode)
{
	return F2FS_VI(inode)->ino;
}

static uint64_t f2fs_verity_size(const struct fsverity_inode *inode)
{
	return F2FS_VI(inode)->size;
}

static int f2fs_get_verity_descriptor(void *fs, struct fsverity_inode *inode, void *buf,
				      size_t size)
{
	struct f2fs_inode_info *fi = F2FS_VI(inode);
	struct f2fs_verity_dloc dloc;
	int ret;

	/* the tree and descriptor are encrypted as the data: no key, no verity (ENOKEY) */
	if (f2fs_encrypted_file(fi)) {
		ret = fscrypt_prepare(SBI(fs)->keyring, &fi->fscrypt);
		if (ret)
			return ret;
	}
	ret = read_dloc(fs, fi, &dloc);
	if (ret)
		return ret;
	if (!buf)
		return (int)le32(dloc.size);
	if (size != le32(dloc.size))
		return -ERANGE;
	return meta_read(fs, fi, buf, size, le64(dloc.pos));
}

static int f2fs_read_merkle_tree(void *fs, struct fsverity_inode *inode, void *buf, size_t len,
				 uint64_t pos)
{
	struct f2fs_inode_info *fi = F2FS_VI(inode);

	return meta_read(fs, fi, buf, len, f2fs_verity_metadata_pos(fi->size) + pos);
}

static ssize_t f2fs_verity_read_data(void *fs, struct fsverity_inode *inode, void *buf,
				     size_t len, uint64_t off)
{
	return f2fs_file_read(fs, F2FS_VI(inode), buf, len, off);
}

/// struct fsverity_operations: enabling ///

/* Between begin and end_enable_verity: where the metadata goes. */
struct f2fs_verity_enable {
	uint64_t meta_blk;	/* first file block of the metadata */
	uint64_t eof_blk;
	unsigned int log_bs;
	uint8_t *meta;		/* Merkle blocks smaller than fs blocks: gathered here */
	size_t meta_size;
};

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
	if (f2fs_encrypted_file(fi)) {
		ret = fscrypt_crypt_blocks(sbi->keyring, &fi->fscrypt, lblk, data, enc, 1, true);
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

static int f2fs_write_merkle_tree_block(void *fs, struct fsverity_inode *inode, const void *buf,
					uint64_t pos, unsigned int log_bs)
{
	struct f2fs_inode_info *fi = F2FS_VI(inode);
	struct f2fs_verity_enable *e = fi->verity_enabling;

	if (e->meta) {
		memcpy(e->meta + pos, buf, (size_t)1 << log_bs);
		return 0;
	}
	/* a 4 KiB Merkle block is one fs block: straight to the device */
	return write_meta_block(fs, fi, e->meta_blk + (pos >> F2FS_BLKSIZE_BITS), buf);
}

/*
 * As f2fs_begin_enable_verity: no inline data, the data on disk, and what
 * fallocate(KEEP_SIZE) left past EOF gone to make room for the metadata.
 */
static int f2fs_begin_enable_verity(void *fs, struct fsverity_inode *inode, unsigned int log_bs,
				    uint64_t tree_size, size_t desc_size)
{
	struct f2fs_sb_info *sbi = fs;
	struct f2fs_inode_info *fi = F2FS_VI(inode);
	uint64_t meta_pos = f2fs_verity_metadata_pos(fi->size), tree_blocks = tree_size >> log_bs;
	struct f2fs_verity_enable *e = calloc(1, sizeof(*e));
	int ret;

	if (!e)
		return -ENOMEM;
	fi->verity_enabling = e;
	e->eof_blk = DIV_ROUND_UP(fi->size, F2FS_BLKSIZE);
	e->meta_blk = meta_pos >> F2FS_BLKSIZE_BITS;
	e->log_bs = log_bs;
	if (log_bs < F2FS_BLKSIZE_BITS) {
		e->meta_size = DIV_ROUND_UP(tree_size + desc_size, F2FS_BLKSIZE) * F2FS_BLKSIZE;
		e->meta = calloc(1, e->meta_size);
		if (!e->meta)
			return -ENOMEM;
	}
	ret = f2fs_convert_inline_inode(sbi, fi);
	if (!ret)
		ret = f2fs_writeback_inode(sbi, fi);
	if (!ret)
		ret = f2fs_truncate_blocks(sbi, fi, e->eof_blk);
	if (!ret)
		folio_drop_range(sbi, MAP_DATA, fi->ino, e->eof_blk, UINT64_MAX);
	if (!ret)
		ret = f2fs_check_space(sbi, tree_blocks + 2 * (tree_blocks / 1018 + 4) +
				       DIV_ROUND_UP(desc_size, F2FS_BLKSIZE));
	return ret;
}

/*
 * The descriptor (and signature) at byte offset tree_size of the metadata,
 * and with small Merkle blocks the gathered tree before it, block by block.
 */
static int write_descriptor(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			    struct f2fs_verity_enable *e, const void *desc, size_t desc_size,
			    uint64_t tree_size)
{
	uint64_t from = e->meta ? 0 : tree_size & ~(uint64_t)(F2FS_BLKSIZE - 1);
	size_t blocks = DIV_ROUND_UP(tree_size + desc_size - from, F2FS_BLKSIZE);
	uint8_t *buf = e->meta ? e->meta : calloc(blocks, F2FS_BLKSIZE);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	memcpy(buf + tree_size - from, desc, desc_size);
	for (size_t i = 0; i < blocks && !ret; i++)
		ret = write_meta_block(sbi, fi, e->meta_blk + (from >> F2FS_BLKSIZE_BITS) + i,
				       buf + i * F2FS_BLKSIZE);
	if (!e->meta)
		free(buf);
	return ret;
}

static int f2fs_end_enable_verity(void *fs, struct fsverity_inode *inode, const void *desc,
				  size_t desc_size, uint64_t tree_size)
{
	struct f2fs_sb_info *sbi = fs;
	struct f2fs_inode_info *fi = F2FS_VI(inode);
	struct f2fs_verity_enable *e = fi->verity_enabling;
	struct f2fs_verity_dloc dloc;
	int ret = 0;

	if (!e)
		return desc ? -EINVAL : 0;
	if (desc) {
		ret = write_descriptor(sbi, fi, e, desc, desc_size, tree_size);
		if (!ret) {
			dloc.version = le32(F2FS_VERITY_XATTR_VER);
			dloc.size = le32((uint32_t)desc_size);
			dloc.pos = le64((e->meta_blk << F2FS_BLKSIZE_BITS) + tree_size);
			ret = f2fs_setxattr_indexed(sbi, fi, F2FS_XATTR_INDEX_VERITY,
						    F2FS_VERITY_XATTR_NAME, &dloc, sizeof(dloc),
						    XATTR_CREATE);
		}
		if (!ret) {
			fi->i_advise |= FADVISE_VERITY_BIT;
			f2fs_inode_touch(fi, false, true);
			f2fs_mark_inode_dirty(sbi, fi);
		}
	} else {
		/* as the kernel's cleanup: whatever was written past EOF goes */
		f2fs_truncate_blocks(sbi, fi, e->eof_blk);
	}
	if (ret)	/* fsverity_enable calls again with NULL to undo */
		return ret;
	fi->verity_enabling = NULL;
	free(e->meta);
	free(e);
	return 0;
}

static int f2fs_verity_error(void *fs, int err, const char *msg)
{
	return f2fs_error(fs, err, "%s", msg);
}

static const struct fsverity_operations f2fs_verityops = {
	.ino = f2fs_verity_ino,
	.size = f2fs_verity_size,
	.get_verity_descriptor = f2fs_get_verity_descriptor,
	.read_merkle_tree = f2fs_read_merkle_tree,
	.read_data = f2fs_verity_read_data,
	.begin_enable_verity = f2fs_begin_enable_verity,
	.write_merkle_tree_block = f2fs_write_merkle_tree_block,
	.end_enable_verity = f2fs_end_enable_verity,
	.error = f2fs_verity_error,
};

void f2fs_fsverity_init(struct f2fs_sb_info *sbi)
{
	sbi->verity.ops = &f2fs_verityops;
	sbi->verity.fs = sbi;
	sbi->verity.max_log_bs = F2FS_BLKSIZE_BITS;
}

int f2fs_verity_open(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	struct fsverity_info *vi;

	return fsverity_get_info(&sbi->verity, &fi->fsverity, &vi);
}

/// Verified reads ///

/*
 * A read of a verity file goes through the zero-copy read path for whole
 * Merkle blocks; this callback checks each block in the folios (a partial
 * last block through a zero-padded copy, as fs/verity hashes it) and hands
 * on only the bytes asked for. Nothing reaches the caller unchecked.
 */
struct verity_read_ctx {
	struct f2fs_sb_info *sbi;
	struct f2fs_inode_info *fi;
	struct fsverity_info *vi;
	uint64_t start;		/* Merkle-block aligned offset read */
	uint64_t off;		/* what the caller asked for */
	size_t len;
	uf2fs_emit_t emit;
	void *arg;
	ssize_t done;		/* bytes handed on */
	int err;
};

static int verity_read_cb(void *arg, const struct iovec *iov, int cnt)
{
	struct verity_read_ctx *c = arg;
	struct iovec out[cnt > 0 ? cnt : 1];
	uint64_t pos = c->start, end = c->off + c->len;
	int n = 0;

	c->err = fsverity_verify_iov(&c->sbi->verity, &c->fi->fsverity, c->vi, c->start, iov,
				     cnt);
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
	uint64_t end, bs;
	ssize_t ret = fsverity_get_info(&sbi->verity, &fi->fsverity, &c.vi);

	if (ret)
		return ret;
	bs = fsverity_block_size(c.vi);
	if (off >= fi->size || !len)
		return emit(arg, NULL, 0) ? -EIO : 0;
	c.len = (size_t)MIN((uint64_t)len, fi->size - off);
	c.start = off & ~(bs - 1);
	end = MIN((off + c.len + bs - 1) & ~(bs - 1), fi->size);
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

/// FS_IOC_ENABLE_VERITY, FS_IOC_MEASURE_VERITY, FS_IOC_READ_VERITY_METADATA ///

static bool write_opened(struct f2fs_inode_info *fi)
{
	bool ret;

	pthread_mutex_lock(&fi->i_lock);
	ret = fi->write_opens;
	pthread_mutex_unlock(&fi->i_lock);
	return ret;
}

/*
 * close(2) of a FUSE file returns before its RELEASE reaches us (the kernel
 * sends it in the background), so a writer that just closed may still count
 * here; give such releases a moment before refusing with ETXTBSY. Called
 * with no lock held.
 */
static void wait_write_releases(struct f2fs_inode_info *fi)
{
	for (int i = 0; i < 50 && write_opened(fi); i++)
		usleep(2000);
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
	if (write_opened(fi))
		return -ETXTBSY;	/* deny_write_access */
	if (f2fs_is_verity(fi))
		return -EEXIST;
	if (fi->atomic)
		return -EOPNOTSUPP;
	/* the file was opened for writing: fscrypt_file_open wants the key */
	return f2fs_encrypted_file(fi) ? fscrypt_prepare(sbi->keyring, &fi->fscrypt) : 0;
}

/* inode_permission(MAY_WRITE) by the mode bits, with root's override */
static int caller_may_write(struct f2fs_sb_info *sbi, uint32_t ino,
			    const struct uf2fs_verity_arg *arg)
{
	struct f2fs_inode_info *fi;
	uint32_t bit;

	if (!arg->check_caller)
		return 0;
	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	fi = ino < F2FS_RESERVED_NODE_NUM ? ERR_PTR(-ENOENT) : f2fs_iget(sbi, ino);
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	if (IS_ERR(fi))
		return PTR_ERR(fi);
	bit = arg->caller_uid == fi->uid ? S_IWUSR : arg->caller_gid == fi->gid ? S_IWGRP : S_IWOTH;
	bit = fi->mode & bit ? 0 : EACCES;
	f2fs_iput(sbi, fi);
	return -(int)bit;
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
	ret = caller_may_write(sbi, ino, arg);
	if (ret)
		return ret;
	if (sbi->opts.read_only)
		return -EROFS;
	fi = ino < F2FS_RESERVED_NODE_NUM ? ERR_PTR(-ENOENT) : f2fs_iget(sbi, ino);
	if (!IS_ERR(fi)) {	/* as uf2fs_open, with no lock held */
		wait_write_releases(fi);
		f2fs_iput(sbi, fi);
	}
	ret = f2fs_begin_write(sbi);
	if (ret)
		return ret;
	fi = ino < F2FS_RESERVED_NODE_NUM ? ERR_PTR(-ENOENT) : f2fs_iget(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
	} else {
		pthread_rwlock_wrlock(&fi->i_rwsem);
		ret = enable_checks(sbi, fi);
		if (!ret)
			ret = fsverity_enable(&sbi->verity, &fi->fsverity, arg);
		pthread_rwlock_unlock(&fi->i_rwsem);
		f2fs_iput(sbi, fi);
	}
	f2fs_end_write(sbi);
	return ret;
}

static int verity_op_begin(struct f2fs_sb_info *sbi, uint32_t ino, struct f2fs_inode_info **fip)
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
	ret = f2fs_is_verity(fi) ? f2fs_verity_open(sbi, fi) : -ENODATA;
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
	int ret = verity_op_begin(sbi, ino, &fi);

	if (ret)
		return ret;
	ret = fsverity_measure(&sbi->verity, &fi->fsverity, alg, digest, size);
	verity_op_end(sbi, fi);
	return ret;
}

/* As fsverity_ioctl_read_metadata: bytes copied, 0 past the end. */
ssize_t uf2fs_read_verity_metadata(struct uf2fs *fs, uint32_t ino, uint64_t type,
				   uint64_t off, void *buf, size_t len)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;
	ssize_t ret = verity_op_begin(sbi, ino, &fi);

	if (ret)
		return ret;
	ret = fsverity_read_metadata(&sbi->verity, &fi->fsverity, type, off, buf, len);
	verity_op_end(sbi, fi);
	return ret;
}
