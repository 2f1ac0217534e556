// SPDX-License-Identifier: GPL-2.0
/*
 * The public API's entry points for inodes and their data: lookup and path
 * resolution, getattr, readdir, read, readlink, xattrs, flags and statfs.
 * Each one takes the checkpoint lock shared (so a future checkpoint sees a
 * quiescent tree), pins the inode through the inode cache and hands off to
 * the f2fs-level code in dir.c, data.c and xattr.c.
 */
#include <linux/fs.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "f2fs.h"

#define SBI(fs) ((struct f2fs_sb_info *)(fs))

/* FS_IOC_GETFLAGS bits that f2fs exposes, as its fsflags map does. */
#define F2FS_GETTABLE_FS_FL (FS_COMPR_FL | FS_SYNC_FL | FS_IMMUTABLE_FL | FS_APPEND_FL | \
			     FS_NODUMP_FL | FS_NOATIME_FL | FS_NOCOMP_FL | FS_INDEX_FL | \
			     FS_DIRSYNC_FL | FS_PROJINHERIT_FL | FS_CASEFOLD_FL)

static struct f2fs_inode_info *get_inode(struct f2fs_sb_info *sbi, uint32_t ino)
{
	if (ino < F2FS_RESERVED_NODE_NUM)
		return ERR_PTR(-ENOENT);
	return f2fs_iget(sbi, ino);
}

/// Namespace ///

int uf2fs_lookup(struct uf2fs *fs, uint32_t dir, const char *name, size_t len, uint32_t *ino)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *di;
	unsigned int ftype;
	int ret;

	if (len > F2FS_NAME_LEN)
		return -ENAMETOOLONG;
	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	di = get_inode(sbi, dir);
	if (IS_ERR(di)) {
		ret = PTR_ERR(di);
		goto out;
	}
	ret = f2fs_find_entry(sbi, di, name, len, ino, &ftype);
	f2fs_iput(sbi, di);
out:
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}

int uf2fs_resolve(struct uf2fs *fs, const char *path, uint32_t *ino)
{
	uint32_t cur = uf2fs_root_ino(fs);

	while (*path) {
		const char *end;
		int ret;

		while (*path == '/')
			path++;
		if (!*path)
			break;
		end = strchrnul(path, '/');
		ret = uf2fs_lookup(fs, cur, path, end - path, &cur);
		if (ret)
			return ret;
		path = end;
	}
	*ino = cur;
	return 0;
}

static void fill_attr(const struct f2fs_inode_info *fi, struct uf2fs_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = fi->ino;
	a->mode = fi->mode;
	a->nlink = fi->nlink;
	a->uid = fi->uid;
	a->gid = fi->gid;
	a->size = fi->size;
	/* i_blocks counts the inode block itself, which st_blocks does not */
	a->blocks = fi->blocks ? (fi->blocks - 1) * (F2FS_BLKSIZE / 512) : 0;
	a->rdev = fi->rdev;
	a->atime = fi->atime;
	a->mtime = fi->mtime;
	a->ctime = fi->ctime;
	a->crtime = fi->crtime;
	a->generation = fi->generation;
	a->flags = fi->flags & F2FS_GETTABLE_FS_FL;
	if (f2fs_is_encrypted(fi))
		a->flags |= FS_ENCRYPT_FL;
	if (f2fs_is_inline_data(fi))
		a->flags |= FS_INLINE_DATA_FL;
	if (fi->i_advise & FADVISE_VERITY_BIT)
		a->flags |= FS_VERITY_FL;
}

int uf2fs_getattr(struct uf2fs *fs, uint32_t ino, struct uf2fs_attr *attr)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;

	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	fi = get_inode(sbi, ino);
	if (!IS_ERR(fi)) {
		fill_attr(fi, attr);
		f2fs_iput(sbi, fi);
	}
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return IS_ERR(fi) ? PTR_ERR(fi) : 0;
}

int uf2fs_get_flags(struct uf2fs *fs, uint32_t ino, uint32_t *flags)
{
	struct uf2fs_attr a;
	int ret = uf2fs_getattr(fs, ino, &a);

	if (!ret)
		*flags = a.flags;
	return ret;
}

int uf2fs_readdir(struct uf2fs *fs, uint32_t dir, uint64_t pos, uf2fs_filldir_t fill, void *arg)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *di;
	int ret;

	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	di = get_inode(sbi, dir);
	if (IS_ERR(di)) {
		ret = PTR_ERR(di);
	} else {
		ret = f2fs_readdir(sbi, di, pos, fill, arg);
		f2fs_iput(sbi, di);
	}
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}

/// Data ///

ssize_t uf2fs_read(struct uf2fs *fs, uint32_t ino, void *buf, size_t len, uint64_t off)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;
	ssize_t ret;

	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	fi = get_inode(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
	} else {
		ret = S_ISDIR(fi->mode) ? -EISDIR : f2fs_file_read(sbi, fi, buf, len, off);
		f2fs_iput(sbi, fi);
	}
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}

ssize_t uf2fs_readlink(struct uf2fs *fs, uint32_t ino, char *buf, size_t size)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;
	ssize_t ret;

	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	fi = get_inode(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
	} else if (!S_ISLNK(fi->mode)) {
		ret = -EINVAL;
		f2fs_iput(sbi, fi);
	} else if (fi->size >= F2FS_BLKSIZE) {
		ret = f2fs_error(sbi, EFSCORRUPTED, "symlink inode %u: target length %llu",
				 fi->ino, (unsigned long long)fi->size);
		f2fs_iput(sbi, fi);
	} else {
		ret = f2fs_file_read(sbi, fi, buf, MIN(size, (size_t)fi->size), 0);
		f2fs_iput(sbi, fi);
	}
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}

/* Opening on a read-only image only has to prove the inode is readable. */
int uf2fs_open(struct uf2fs *fs, uint32_t ino, int flags)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi = get_inode(sbi, ino);

	if (IS_ERR(fi))
		return PTR_ERR(fi);
	f2fs_iput(sbi, fi);
	return 0;
}

void uf2fs_release(struct uf2fs *fs, uint32_t ino)
{
}

void uf2fs_forget(struct uf2fs *fs, uint32_t ino, uint64_t nlookup)
{
	f2fs_icache_forget(SBI(fs), ino, nlookup);
}

/// Xattrs ///

static ssize_t with_xattrs(struct uf2fs *fs, uint32_t ino, const char *name, void *value,
			   size_t size)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;
	uint8_t *buf = NULL;
	size_t len = 0;
	ssize_t ret;

	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	fi = get_inode(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
		goto out;
	}
	ret = f2fs_read_xattr_area(sbi, fi, &buf, &len);
	if (!ret) {
		if (name)
			ret = f2fs_xattr_get(buf, len, name, value, size);
		else
			ret = f2fs_xattr_list(buf, len, value, size);
		if (ret == -EIO)
			ret = f2fs_error(sbi, EIO, "xattrs of inode %u (xattr node %u): corrupt",
					 fi->ino, fi->xattr_nid);
	}
	free(buf);
	f2fs_iput(sbi, fi);
out:
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}

ssize_t uf2fs_getxattr(struct uf2fs *fs, uint32_t ino, const char *name, void *value,
		       size_t size)
{
	return with_xattrs(fs, ino, name, value, size);
}

ssize_t uf2fs_listxattr(struct uf2fs *fs, uint32_t ino, char *list, size_t size)
{
	return with_xattrs(fs, ino, NULL, list, size);
}

/// Filesystem ///

int uf2fs_statfs(struct uf2fs *fs, struct statvfs *st)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_checkpoint *cp = sbi->ckpt;
	uint64_t user = le64(cp->user_block_count);
	uint64_t valid = le64(cp->valid_block_count);
	uint64_t avail_nodes = sbi->nm.max_nid - F2FS_RESERVED_NODE_NUM;
	uint64_t valid_nodes = le32(cp->valid_node_count);

	memset(st, 0, sizeof(*st));
	st->f_bsize = F2FS_BLKSIZE;
	st->f_frsize = F2FS_BLKSIZE;
	st->f_blocks = le64(sbi->raw_super.block_count) - sbi->seg0_blkaddr;
	st->f_bfree = user > valid ? user - valid : 0;
	st->f_bavail = st->f_bfree;
	if (avail_nodes > user) {
		st->f_files = user;
		st->f_ffree = st->f_bfree;
	} else {
		st->f_files = avail_nodes;
		st->f_ffree = MIN(avail_nodes - MIN(valid_nodes, avail_nodes), st->f_bfree);
	}
	st->f_favail = st->f_ffree;
	st->f_namemax = F2FS_NAME_LEN;
	st->f_fsid = le32(*(uint32_t *)sbi->raw_super.uuid);
	st->f_flag = ST_RDONLY;
	return 0;
}
