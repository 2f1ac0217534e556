// SPDX-License-Identifier: GPL-2.0
/*
 * The public API's entry points for inodes and their data: lookup and path
 * resolution, getattr, readdir, read, readlink, xattrs, flags and statfs.
 * Each one takes the checkpoint lock shared (so a future checkpoint sees a
 * quiescent tree), pins the inode through the inode cache and hands off to
 * the f2fs-level code in dir.c, data.c and xattr.c.
 */
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "f2fs.h"
#include "quota.h"

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
	return uf2fs_lookup_alias(fs, dir, name, len, ino, NULL);
}

int uf2fs_lookup_alias(struct uf2fs *fs, uint32_t dir, const char *name, size_t len,
		       uint32_t *ino, bool *alias)
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
	pthread_rwlock_rdlock(&di->i_rwsem);
	ret = f2fs_find_entry_alias(sbi, di, name, len, ino, &ftype, alias);
	pthread_rwlock_unlock(&di->i_rwsem);
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
	a->size = fi->atomic ? fi->atomic_size : fi->size;
	/* i_blocks counts the inode block itself, which st_blocks does not */
	a->blocks = fi->blocks ? (fi->blocks - 1) * (F2FS_BLKSIZE / 512) : 0;
	/* as f2fs_getattr: inline bytes show as the sectors they would take */
	if ((S_ISREG(fi->mode) && f2fs_is_inline_data(fi)) || f2fs_is_inline_dentry(fi))
		a->blocks += (fi->size + 511) >> 9;
	a->rdev = fi->rdev;
	a->atime = fi->atime;
	a->mtime = fi->mtime;
	a->ctime = fi->ctime;
	a->crtime = fi->crtime;
	a->generation = fi->generation;
	a->flags = fi->flags & F2FS_GETTABLE_FS_FL;
	a->blksize = F2FS_BLKSIZE;
	if (f2fs_is_encrypted(fi))
		a->flags |= FS_ENCRYPT_FL;
	if (f2fs_is_inline_data(fi))
		a->flags |= FS_INLINE_DATA_FL;
	if (fi->i_advise & FADVISE_VERITY_BIT)
		a->flags |= FS_VERITY_FL;
}

static ssize_t read_encrypted_link(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
				  char *buf, size_t size);

/*
 * As fscrypt_symlink_getattr: an encrypted symlink's st_size is the length
 * of what readlink returns (the target, or its no-key form), not i_size.
 */
static void encrypted_link_size(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
				struct uf2fs_attr *a)
{
	char buf[F2FS_BLKSIZE];
	ssize_t n;

	if (!S_ISLNK(fi->mode) || !f2fs_is_encrypted(fi) || fi->size >= F2FS_BLKSIZE)
		return;
	n = read_encrypted_link(sbi, fi, buf, sizeof(buf));
	if (n >= 0)
		a->size = n;
}

int uf2fs_getattr(struct uf2fs *fs, uint32_t ino, struct uf2fs_attr *attr)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;

	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	fi = get_inode(sbi, ino);
	if (!IS_ERR(fi)) {
		/* shared: atime stamps and namespace changes write these fields */
		pthread_rwlock_rdlock(&fi->i_rwsem);
		fill_attr(fi, attr);
		encrypted_link_size(sbi, fi, attr);
		pthread_rwlock_unlock(&fi->i_rwsem);
		f2fs_iput(sbi, fi);
	}
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return IS_ERR(fi) ? PTR_ERR(fi) : 0;
}

int uf2fs_getattr_by_handle(struct uf2fs *fs, uint32_t ino, struct uf2fs_attr *attr)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;
	struct node_info ni;
	int ret = -ESTALE;

	if (ino < F2FS_RESERVED_NODE_NUM || ino >= sbi->nm.max_nid || ino == sbi->node_ino ||
	    ino == sbi->meta_ino)
		return -ESTALE;
	/*
	 * Any number may come in: check that it names an inode block (its NAT
	 * entry is its own) before the inode cache reads it, which would call
	 * anything else corruption. A freed nid is reused only after a
	 * checkpoint, which the shared cp_rwsem holds off.
	 */
	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	if (f2fs_get_node_info(sbi, ino, &ni))
		ret = -EIO;
	else if (ni.ino == ino && ni.blk_addr != NULL_ADDR)
		ret = 0;
	if (!ret) {
		fi = f2fs_iget(sbi, ino);
		ret = IS_ERR(fi) ? PTR_ERR(fi) : 0;
	}
	if (!ret) {
		/* unlinked: an orphan, or open (and then the kernel would not ask) */
		pthread_rwlock_rdlock(&fi->i_rwsem);
		if (fi->nlink)
			fill_attr(fi, attr);
		else
			ret = -ESTALE;
		pthread_rwlock_unlock(&fi->i_rwsem);
		f2fs_iput(sbi, fi);
	}
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret == -ENOENT ? -ESTALE : ret;
}

int uf2fs_get_flags(struct uf2fs *fs, uint32_t ino, uint32_t *flags)
{
	struct uf2fs_attr a;
	int ret = uf2fs_getattr(fs, ino, &a);

	if (!ret)
		*flags = a.flags;
	return ret;
}

/*
 * atime, kept by the server: the kernel marks FUSE inodes S_NOATIME. relatime
 * as the kernel's default (atime_needs_update): when atime is not newer
 * than mtime or ctime, or is a day old.
 */
static bool atime_due(const struct f2fs_sb_info *sbi, const struct f2fs_inode_info *fi)
{
	struct timespec now;

	if (sbi->opts.read_only || sbi->opts.atime_mode == 1 || (fi->flags & F2FS_NOATIME_FL))
		return false;
	if (sbi->opts.atime_mode == 2)
		return true;
	if (fi->atime.tv_sec < fi->mtime.tv_sec || (fi->atime.tv_sec == fi->mtime.tv_sec &&
						  fi->atime.tv_nsec <= fi->mtime.tv_nsec))
		return true;
	if (fi->atime.tv_sec < fi->ctime.tv_sec || (fi->atime.tv_sec == fi->ctime.tv_sec &&
						  fi->atime.tv_nsec <= fi->ctime.tv_nsec))
		return true;
	clock_gettime(CLOCK_REALTIME, &now);
	return now.tv_sec - fi->atime.tv_sec >= 24 * 3600;
}

/* After a read under the shared inode lock found atime_due: rare, so exclusive. */
static void touch_atime(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	pthread_rwlock_wrlock(&fi->i_rwsem);
	if (atime_due(sbi, fi)) {
		clock_gettime(CLOCK_REALTIME, &fi->atime);
		f2fs_mark_inode_dirty(sbi, fi);
	}
	pthread_rwlock_unlock(&fi->i_rwsem);
}

struct readdir_plus {
	struct f2fs_sb_info *sbi;
	uf2fs_filldir_plus_t fill;
	void *arg;
};

/*
 * Called inside f2fs_readdir, so under cp_rwsem and the directory's lock.
 * "." and ".." go without attributes (the directory and its parent: the
 * front end sends neither's). An entry's inode is read under its own lock,
 * taken only if free: blocking on it under the directory's lock could close
 * a cycle with a rename, which locks two inodes in number order; a busy one
 * goes without attributes, and the kernel looks it up instead.
 */
static int readdir_plus_fill(void *arg, const char *name, size_t len, uint32_t ino,
			     unsigned int dtype, uint64_t next_pos)
{
	struct readdir_plus *rp = arg;
	struct f2fs_inode_info *fi;
	struct uf2fs_attr attr;
	bool got = false;

	if (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')))
		return rp->fill(rp->arg, name, len, ino, dtype, next_pos, NULL);
	fi = get_inode(rp->sbi, ino);
	if (IS_ERR(fi))
		return rp->fill(rp->arg, name, len, ino, dtype, next_pos, NULL);
	if (!pthread_rwlock_tryrdlock(&fi->i_rwsem)) {
		fill_attr(fi, &attr);
		encrypted_link_size(rp->sbi, fi, &attr);
		pthread_rwlock_unlock(&fi->i_rwsem);
		got = true;
	}
	f2fs_iput(rp->sbi, fi);
	return rp->fill(rp->arg, name, len, ino, dtype, next_pos, got ? &attr : NULL);
}

int uf2fs_readdir_plus(struct uf2fs *fs, uint32_t dir, uint64_t pos, uf2fs_filldir_plus_t fill,
		       void *arg)
{
	struct readdir_plus rp = { SBI(fs), fill, arg };

	return uf2fs_readdir(fs, dir, pos, readdir_plus_fill, &rp);
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
		bool due;

		pthread_rwlock_rdlock(&di->i_rwsem);
		ret = f2fs_readdir(sbi, di, pos, fill, arg);
		due = ret >= 0 && !pos && !sbi->opts.nodiratime && atime_due(sbi, di);
		pthread_rwlock_unlock(&di->i_rwsem);
		if (due)
			touch_atime(sbi, di);
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
		bool due;

		pthread_rwlock_rdlock(&fi->i_rwsem);
		ret = S_ISDIR(fi->mode) ? -EISDIR :
		      f2fs_is_verity(fi) ? f2fs_verity_read(sbi, fi, buf, len, off) :
		      f2fs_file_read(sbi, fi, buf, len, off);
		due = ret > 0 && atime_due(sbi, fi);
		pthread_rwlock_unlock(&fi->i_rwsem);
		if (due)
			touch_atime(sbi, fi);
		f2fs_iput(sbi, fi);
	}
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}

/*
 * Such a kernel stamps mtime with its coarse clock, up to a tick (a few
 * ms) behind ours: a file created (atime from our clock) and written at
 * once can show an mtime just before its atime. Within a tick they count
 * as equal, as they would on the kernel's one clock.
 */
#define ATIME_KERNEL_TICK_NS	20000000L

static bool atime_due_coarse(const struct f2fs_sb_info *sbi, const struct f2fs_inode_info *fi)
{
	int64_t a, m;

	if (atime_due(sbi, fi))
		return true;
	if (sbi->opts.read_only || sbi->opts.atime_mode == 1 || (fi->flags & F2FS_NOATIME_FL))
		return false;
	a = (int64_t)fi->atime.tv_sec * 1000000000L + fi->atime.tv_nsec;
	m = (int64_t)fi->mtime.tv_sec * 1000000000L + fi->mtime.tv_nsec;
	return a - m < ATIME_KERNEL_TICK_NS;
}

static void stamp_atime(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	pthread_rwlock_wrlock(&fi->i_rwsem);
	if (atime_due_coarse(sbi, fi)) {
		clock_gettime(CLOCK_REALTIME, &fi->atime);
		f2fs_mark_inode_dirty(sbi, fi);
	}
	pthread_rwlock_unlock(&fi->i_rwsem);
}

/*
 * The atime a read would stamp, without the read: for a front end whose
 * kernel serves reads from pages it wrote itself (FUSE writeback_cache).
 * 1 when atime moved, 0 when it was not due.
 */
int uf2fs_touch_atime(struct uf2fs *fs, uint32_t ino)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;
	int ret = 0;

	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	fi = get_inode(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
	} else {
		pthread_rwlock_rdlock(&fi->i_rwsem);
		ret = S_ISREG(fi->mode) && atime_due_coarse(sbi, fi);
		pthread_rwlock_unlock(&fi->i_rwsem);
		if (ret)
			stamp_atime(sbi, fi);
		f2fs_iput(sbi, fi);
	}
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}

ssize_t uf2fs_read_iov(struct uf2fs *fs, uint32_t ino, size_t len, uint64_t off,
		       uf2fs_emit_t emit, void *arg)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;
	ssize_t ret;

	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	fi = get_inode(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
	} else {
		bool due;

		pthread_rwlock_rdlock(&fi->i_rwsem);
		ret = S_ISDIR(fi->mode) ? -EISDIR :
		      f2fs_is_verity(fi) ? f2fs_verity_read_iov(sbi, fi, len, off, emit, arg) :
		      f2fs_file_read_iov(sbi, fi, len, off, emit, arg);
		due = ret > 0 && atime_due(sbi, fi);
		pthread_rwlock_unlock(&fi->i_rwsem);
		if (due)
			touch_atime(sbi, fi);
		f2fs_iput(sbi, fi);
	}
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}

/* The stored struct fscrypt_symlink_data, decrypted (or its no-key form). */
static ssize_t read_encrypted_link(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
				  char *buf, size_t size)
{
	uint8_t raw[F2FS_BLKSIZE];
	ssize_t n = f2fs_file_read(sbi, fi, raw, fi->size, 0);

	if (n < 0)
		return n;
	return fscrypt_symlink_to_usr(sbi->keyring, &fi->fscrypt, raw, n, buf, size);
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
	} else if (f2fs_is_encrypted(fi)) {
		ret = read_encrypted_link(sbi, fi, buf, size);
		f2fs_iput(sbi, fi);
	} else {
		ret = f2fs_file_read(sbi, fi, buf, MIN(size, (size_t)fi->size), 0);
		f2fs_iput(sbi, fi);
	}
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}

/*
 * Opens are counted so that an unlinked file stays readable (as an orphan)
 * until its last close, as POSIX requires.
 */
int uf2fs_open(struct uf2fs *fs, uint32_t ino, int flags)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi = get_inode(sbi, ino);

	if (IS_ERR(fi))
		return PTR_ERR(fi);
	/*
	 * As may_open: the kernel cannot see f2fs's inode flags through FUSE,
	 * so a write open of an immutable file, and a non-appending or
	 * truncating one of an append-only file, fail here and not at write.
	 */
	if (((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) &&
	    (f2fs_is_verity(fi) ||	/* as fsverity_file_open */
	     (fi->flags & F2FS_IMMUTABLE_FL) ||
	     ((fi->flags & F2FS_APPEND_FL) && (!(flags & O_APPEND) || (flags & O_TRUNC))))) {
		f2fs_iput(sbi, fi);
		return -EPERM;
	}
	/* as fscrypt_file_open: an encrypted file opens only with its key */
	if (f2fs_encrypted_file(fi)) {
		int ret = fscrypt_prepare(sbi->keyring, &fi->fscrypt);

		if (ret) {
			f2fs_iput(sbi, fi);
			return ret;
		}
	}
	if (f2fs_is_verity(fi)) {
		int ret;

		pthread_rwlock_rdlock(&fi->i_rwsem);
		ret = f2fs_verity_open(sbi, fi);
		pthread_rwlock_unlock(&fi->i_rwsem);
		if (ret) {
			f2fs_iput(sbi, fi);
			return ret;
		}
	}
	pthread_mutex_lock(&fi->i_lock);
	fi->open_count++;
	if ((flags & O_ACCMODE) != O_RDONLY)
		fi->write_opens++;
	pthread_mutex_unlock(&fi->i_lock);
	/* the open reference pins the inode until release */
	return 0;
}

void uf2fs_release(struct uf2fs *fs, uint32_t ino, int flags)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi = get_inode(sbi, ino);
	bool last;

	if (IS_ERR(fi))
		return;
	pthread_mutex_lock(&fi->i_lock);
	if ((flags & O_ACCMODE) != O_RDONLY && fi->write_opens)
		fi->write_opens--;
	last = fi->open_count && !--fi->open_count;
	pthread_mutex_unlock(&fi->i_lock);
	if (last && fi->atomic) {
		/* as the kernel: closing without commit aborts */
		pthread_rwlock_wrlock(&fi->i_rwsem);
		f2fs_atomic_abort(sbi, fi);
		pthread_rwlock_unlock(&fi->i_rwsem);
	}
	if (last && fi->orphan && !fi->nlink && !f2fs_begin_write(sbi)) {
		pthread_rwlock_wrlock(&fi->i_rwsem);
		if (fi->orphan && !fi->open_count) {
			fi->orphan = false;
			f2fs_remove_orphan(sbi, fi->ino);
			f2fs_evict_inode(sbi, fi);
		}
		pthread_rwlock_unlock(&fi->i_rwsem);
		f2fs_end_write(sbi);
	}
	f2fs_iput(sbi, fi);	/* the open's reference */
	f2fs_iput(sbi, fi);	/* ours */
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
	unsigned int gen;
	ssize_t ret;

	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	fi = get_inode(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
		goto out;
	}
	if (name && f2fs_xattrs_known_empty(fi)) {
		ret = f2fs_xattr_get(NULL, 0, name, value, size);	/* -ENODATA, or a bad name */
		goto put;
	}
	gen = f2fs_xattr_gen(fi);
	/* setxattr changes the area under the inode lock */
	pthread_rwlock_rdlock(&fi->i_rwsem);
	ret = f2fs_read_xattr_area(sbi, fi, &buf, &len);
	pthread_rwlock_unlock(&fi->i_rwsem);
	if (!ret) {
		f2fs_xattrs_note_read(fi, gen, buf, len);
		if (name)
			ret = f2fs_xattr_get(buf, len, name, value, size);
		else
			ret = f2fs_xattr_list(buf, len, value, size);
		if (ret == -EIO)
			ret = f2fs_error(sbi, EIO, "xattrs of inode %u (xattr node %u): corrupt",
					 fi->ino, fi->xattr_nid);
	}
	free(buf);
put:
	f2fs_iput(sbi, fi);
out:
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}

ssize_t uf2fs_getxattr(struct uf2fs *fs, uint32_t ino, const char *name, void *value,
		       size_t size)
{
	atomic_fetch_add(&SBI(fs)->ctr->xattr_gets, 1);
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
	st->f_flag = sbi->opts.read_only ? ST_RDONLY : 0;
	if (!sbi->opts.read_only) {
		pthread_mutex_lock(&sbi->sm.lock);
		valid = sbi->sm.valid_blocks;
		pthread_mutex_unlock(&sbi->sm.lock);
		pthread_mutex_lock(&sbi->nm.lock);	/* node writeback counts under it */
		valid_nodes = sbi->nm.valid_nodes;
		pthread_mutex_unlock(&sbi->nm.lock);
		/* dirty data not yet written is space already promised */
		valid += folio_dirty_bytes(sbi) / F2FS_BLKSIZE;
		st->f_bfree = user > valid ? user - valid : 0;
		st->f_bavail = st->f_bfree;
		st->f_ffree = MIN(avail_nodes - MIN(valid_nodes, avail_nodes), st->f_bfree);
		st->f_favail = st->f_ffree;
	}
	return 0;
}

/// Writing: data, attributes, space ///

bool uf2fs_is_read_only(const struct uf2fs *fs)
{
	return SBI(fs)->opts.read_only;
}

unsigned int uf2fs_readahead_bytes(const struct uf2fs *fs)
{
	unsigned int ra = SBI(fs)->dev.readahead;

	return ra ? ra : DEV_DEFAULT_READAHEAD;
}

static uint64_t max_file_blocks(const struct f2fs_inode_info *fi)
{
	/* a compressed file's nodes hold whole clusters only */
	uint64_t apb = f2fs_addrs_per_block(fi);

	return fi->addrs_per_inode + 2 * apb + 2 * apb * NIDS_PER_BLOCK +
	       apb * NIDS_PER_BLOCK * NIDS_PER_BLOCK;
}

#define WRITEBEHIND_BYTES	(4u << 20)	/* batch: requests of up to 1 MiB still merge */

/*
 * A write that crosses a 4 MiB boundary sends the whole folios behind it to
 * the device (drop-behind only: otherwise the cache is meant to keep them).
 * So does any write once writes have made 4 MiB of new folios since the
 * inode's last writeback: the kernel's writeback under writeback_cache sends
 * its requests out of order, and the one that crosses the boundary can come
 * a dozen requests late. Atomic files stage in the cache; compressed ones
 * write whole clusters at checkpoint.
 */
static bool writebehind_due(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t off,
			    size_t len)
{
	if (sbi->opts.dontcache <= 0 || fi->atomic || f2fs_is_compressed(fi))
		return false;
	return off / WRITEBEHIND_BYTES != (off + len) / WRITEBEHIND_BYTES ||
	       fi->fresh_blocks >= WRITEBEHIND_BYTES / F2FS_BLKSIZE;
}

static ssize_t do_write(struct uf2fs *fs, uint32_t ino, const void *buf, size_t len, uint64_t off,
			unsigned int flags)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;
	uint64_t qlen = len;
	ssize_t ret;

	ret = f2fs_begin_write(sbi);
	if (ret)
		return ret;
	fi = get_inode(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
		goto out;
	}
	if (!S_ISREG(fi->mode)) {
		ret = S_ISDIR(fi->mode) ? -EISDIR : -EINVAL;
	} else if (off + len < off ||
		   DIV_ROUND_UP(off + len, F2FS_BLKSIZE) > max_file_blocks(fi)) {
		ret = -EFBIG;
	} else if ((fi->flags & F2FS_IMMUTABLE_FL) || f2fs_is_verity(fi)) {
		ret = -EPERM;
	} else if (f2fs_is_device_alias(fi) &&
		   off + len > (uint64_t)fi->largest.len * F2FS_BLKSIZE) {
		/* past the device Linux fails in prepare_write_begin; inside, in place */
		ret = -ENODATA;
	} else {
		pthread_rwlock_wrlock(&fi->i_rwsem);
		if (fi->flags & F2FS_APPEND_FL)
			off = fi->size;
		ret = f2fs_quota_reserve_blocks(sbi, fi, off, &qlen, true);
		len = qlen;	/* a write past a block limit is cut short */
		if (ret)
			;
		else if (f2fs_write_through_ok(sbi, fi, len, off)) {
			ret = f2fs_write_through(sbi, fi, buf, len, off);
		} else {
			ret = f2fs_file_write(sbi, fi, buf, len, off);
			if (ret > 0 && writebehind_due(sbi, fi, off, ret))
				f2fs_writebehind_inode(sbi, fi);	/* errors resurface at fsync */
		}
		/*
		 * Only a user's write stamps the times: the file-system writes
		 * below (a symlink body, zeroing for truncate and fallocate) leave
		 * them to their callers, and the kernel's page writeback under
		 * writeback_cache (KEEP_TIMES) brings the kernel's own.
		 */
		if (ret > 0 && !(flags & UF2FS_WRITE_KEEP_TIMES)) {
			f2fs_inode_touch(fi, true, true);
			f2fs_mark_inode_dirty(sbi, fi);
		}
		pthread_rwlock_unlock(&fi->i_rwsem);
	}
	f2fs_iput(sbi, fi);
out:
	f2fs_end_write(sbi);
	return ret;
}

/* Zero [from, to) bytes of the file in the cache (partial blocks at a new EOF or a punch). */
static int zero_partial(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t from,
			uint64_t to)
{
	static const uint8_t zeroes[F2FS_BLKSIZE];

	while (from < to) {
		size_t n = MIN(to - from, (uint64_t)F2FS_BLKSIZE - from % F2FS_BLKSIZE);
		uint64_t size = fi->size;
		ssize_t ret = f2fs_file_write(sbi, fi, zeroes, n, from);

		fi->size = size;	/* zeroing never changes the size */
		if (ret < 0)
			return ret;
		from += n;
	}
	return 0;
}

static int truncate_to(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t size)
{
	uint64_t from = DIV_ROUND_UP(size, F2FS_BLKSIZE);
	int ret = 0;

	/* an inline inode never carries a size its inline area cannot hold */
	if (f2fs_is_inline_data(fi) && size > f2fs_max_inline_data(fi)) {
		ret = f2fs_convert_inline_inode(sbi, fi);
		if (ret)
			return ret;
	}
	if (size >= fi->size) {
		fi->size = size;
		return 0;
	}
	if (f2fs_is_compressed(fi))
		return f2fs_truncate_compressed(sbi, fi, size);
	if (f2fs_is_inline_data(fi)) {
		struct folio *f = f2fs_get_inode_folio(sbi, fi->ino);

		if (IS_ERR(f))
			return PTR_ERR(f);
		memset((uint8_t *)f2fs_inline_data_addr(fi, folio_node(f)) + size, 0,
		       f2fs_max_inline_data(fi) - size);
		folio_mark_dirty(sbi, f);
		folio_put(sbi, f);
		fi->size = size;
		return 0;
	}
	if (size % F2FS_BLKSIZE)
		ret = zero_partial(sbi, fi, size, from * F2FS_BLKSIZE);
	if (!ret)
		ret = f2fs_truncate_blocks(sbi, fi, from);
	/* a cached large folio straddling the new EOF must not resurrect old bytes */
	if (!ret && from) {
		struct folio *f = folio_lookup(sbi, MAP_DATA, fi->ino, from - 1);

		if (f) {
			uint64_t fend = f->index + folio_nr_blocks(f);

			if (fend > from)
				memset(folio_block_ptr(f, from), 0,
				       (fend - from) << F2FS_BLKSIZE_BITS);
			folio_put(sbi, f);
		}
	}
	if (!ret)
		fi->size = size;
	return ret;
}

static bool timespec_before(struct timespec a, struct timespec b)
{
	return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

/*
 * An explicit ctime is a cached copy (FUSE's writeback cache writes its
 * times back): it never undoes the ctime of a change made here that the
 * copy missed (chattr), so it is raised to that one; other explicit ctimes
 * are kept as sent (its writes' times, not when their data reached us).
 * The floor lives in the inode, which the lookup count keeps cached while
 * the kernel holds it.
 */
static void apply_times(struct f2fs_inode_info *fi, const struct uf2fs_attr *a,
			unsigned int valid)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	if (valid & UF2FS_SET_ATIME_NOW)
		fi->atime = now;
	else if (valid & UF2FS_SET_ATIME)
		fi->atime = a->atime;
	if (valid & UF2FS_SET_MTIME_NOW)
		fi->mtime = now;
	else if (valid & UF2FS_SET_MTIME)
		fi->mtime = a->mtime;
	if (valid & UF2FS_SET_CTIME)
		fi->ctime = timespec_before(a->ctime, fi->ctime_floor) ? fi->ctime_floor : a->ctime;
	else
		fi->ctime = now;
}

#define SETATTR_TIMES	(UF2FS_SET_ATIME | UF2FS_SET_MTIME | UF2FS_SET_ATIME_NOW | \
			 UF2FS_SET_MTIME_NOW | UF2FS_SET_CTIME)

/* UF2FS_SET_FREED_OK: the times asked, of an inode that is gone. */
static int setattr_freed(uint32_t ino, const struct uf2fs_attr *a, unsigned int valid,
			 struct uf2fs_attr *out)
{
	if (!valid || (valid & ~SETATTR_TIMES))
		return -ENOENT;
	if (out) {
		memset(out, 0, sizeof(*out));
		out->ino = ino;
		out->mode = S_IFREG;
		out->atime = a->atime;
		out->mtime = a->mtime;
		out->ctime = a->ctime;
	}
	return 0;
}

/* UF2FS_SET_MTIME_CACHED: an append-only file takes the cache's "now" as now. */
static unsigned int setattr_cached_now(const struct f2fs_inode_info *fi, unsigned int valid)
{
	if ((fi->flags & F2FS_APPEND_FL) && (valid & UF2FS_SET_ATIME_NOW) &&
	    (valid & UF2FS_SET_MTIME) && !(valid & UF2FS_SET_MTIME_NOW))
		valid = (valid & ~UF2FS_SET_MTIME) | UF2FS_SET_MTIME_NOW;
	return valid;
}

static int do_setattr(struct uf2fs *fs, uint32_t ino, const struct uf2fs_attr *a,
		      unsigned int valid, struct uf2fs_attr *out)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	unsigned int how = valid & (UF2FS_SET_MTIME_CACHED | UF2FS_SET_FREED_OK);
	struct f2fs_inode_info *fi;
	int ret;

	valid &= ~how;
	ret = f2fs_begin_write(sbi);
	if (ret)
		return ret;
	fi = get_inode(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
		if (ret == -ENOENT && (how & UF2FS_SET_FREED_OK))
			ret = setattr_freed(ino, a, valid, out);
		goto out;
	}
	pthread_rwlock_wrlock(&fi->i_rwsem);
	if (how & UF2FS_SET_MTIME_CACHED)
		valid = setattr_cached_now(fi, valid);
	/* as notify_change: an immutable inode takes no change, an append-only one only times */
	if ((fi->flags & F2FS_IMMUTABLE_FL) ||
	    ((fi->flags & F2FS_APPEND_FL) && (valid & (UF2FS_SET_MODE | UF2FS_SET_UID |
						    UF2FS_SET_GID | UF2FS_SET_ATIME |
						    UF2FS_SET_MTIME))))
		ret = -EPERM;
	else if ((valid & UF2FS_SET_SIZE) && (fi->flags & F2FS_APPEND_FL))
		ret = -EPERM;
	else if ((valid & UF2FS_SET_SIZE) && f2fs_is_verity(fi))
		ret = -EPERM;	/* fsverity_prepare_setattr */
	else if ((valid & UF2FS_SET_SIZE) && f2fs_is_device_alias(fi))
		ret = -EOPNOTSUPP;	/* f2fs_setattr, Linux 6.13 */
	else if ((valid & UF2FS_SET_SIZE) && !S_ISREG(fi->mode))
		ret = S_ISDIR(fi->mode) ? -EISDIR : -EINVAL;
	/* as f2fs_setattr: a released file keeps whole clusters or none */
	else if ((valid & UF2FS_SET_SIZE) && f2fs_is_compressed(fi) &&
		 f2fs_compress_released(fi) && a->size != fi->size &&
		 a->size % ((uint64_t)F2FS_BLKSIZE << fi->log_cluster_size))
		ret = -EPERM;
	else if ((valid & UF2FS_SET_SIZE) && DIV_ROUND_UP(a->size, F2FS_BLKSIZE) > max_file_blocks(fi))
		ret = -EFBIG;
	/* as fscrypt_prepare_setattr: an encrypted file changes size only with its key */
	else if ((valid & UF2FS_SET_SIZE) && f2fs_encrypted_file(fi))
		ret = fscrypt_prepare(sbi->keyring, &fi->fscrypt);
	/* as f2fs_setattr: the quota transfer first (EDQUOT past the new owner's limits) */
	if (!ret && (valid & (UF2FS_SET_UID | UF2FS_SET_GID)))
		ret = f2fs_quota_transfer(sbi, fi, (valid & UF2FS_SET_UID) ? a->uid : fi->uid,
					  (valid & UF2FS_SET_GID) ? a->gid : fi->gid, fi->projid);
	if (!ret && (valid & UF2FS_SET_SIZE) && a->size != fi->size) {
		ret = truncate_to(sbi, fi, a->size);
		if (!ret)
			f2fs_inode_touch(fi, true, true);
	}
	if (!ret && (valid & UF2FS_SET_KILL_SUIDGID) && !S_ISDIR(fi->mode)) {
		uint32_t kill = S_ISUID | ((fi->mode & S_IXGRP) || (valid & UF2FS_SET_KILL_SGID) ?
					   S_ISGID : 0);

		if (fi->mode & kill) {
			fi->mode &= ~kill;
			f2fs_inode_touch(fi, false, true);
		}
	}
	if (!ret) {
		if (valid & UF2FS_SET_MODE)
			fi->mode = (fi->mode & S_IFMT) | (a->mode & 07777);
		if (valid & UF2FS_SET_UID)
			fi->uid = a->uid;
		if (valid & UF2FS_SET_GID)
			fi->gid = a->gid;
		if (valid & ~UF2FS_SET_SIZE)
			apply_times(fi, a, valid);
		f2fs_mark_inode_dirty(sbi, fi);
		/* as f2fs_setattr: an access ACL follows the new mode (FUSE leaves it to us) */
		if (valid & UF2FS_SET_MODE)
			ret = f2fs_acl_chmod(sbi, fi);
		if (out)
			fill_attr(fi, out);
	}
	pthread_rwlock_unlock(&fi->i_rwsem);
	f2fs_iput(sbi, fi);
out:
	f2fs_end_write(sbi);
	return ret;
}

/* The compression flags, as f2fs_setflags_common checks them. */
static int set_compress_flags(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			      uint32_t flags)
{
	if ((flags & (F2FS_COMPR_FL | F2FS_NOCOMP_FL)) &&
	    !f2fs_has_feature(sbi, F2FS_FEATURE_COMPRESSION))
		return -EOPNOTSUPP;
	if ((flags & F2FS_COMPR_FL) && (flags & F2FS_NOCOMP_FL))
		return -EINVAL;
	if ((flags ^ fi->flags) & F2FS_COMPR_FL)
		return f2fs_set_compression(sbi, fi, flags & F2FS_COMPR_FL);
	return 0;
}

int uf2fs_set_flags(struct uf2fs *fs, uint32_t ino, uint32_t flags)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	const uint32_t settable = F2FS_SYNC_FL | F2FS_IMMUTABLE_FL | F2FS_APPEND_FL |
				  F2FS_NODUMP_FL | F2FS_NOATIME_FL | F2FS_DIRSYNC_FL |
				  F2FS_PROJINHERIT_FL | F2FS_NOCOMP_FL;
	struct f2fs_inode_info *fi;
	int ret;

	ret = f2fs_begin_write(sbi);
	if (ret)
		return ret;
	fi = get_inode(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
		goto out;
	}
	pthread_rwlock_wrlock(&fi->i_rwsem);
	/* +F only on an empty directory (f2fs_set_casefold_flag says why not) */
	if ((flags ^ fi->flags) & F2FS_CASEFOLD_FL)
		ret = f2fs_set_casefold_flag(sbi, fi, flags & F2FS_CASEFOLD_FL);
	if (!ret)
		ret = set_compress_flags(sbi, fi, flags);
	if (!ret) {
		fi->flags = (fi->flags & ~settable) | (flags & settable);
		f2fs_inode_touch(fi, false, true);
		/* a cached copy of the attributes (FUSE's) misses this ctime */
		fi->ctime_floor = fi->ctime;
		f2fs_mark_inode_dirty(sbi, fi);
	}
	pthread_rwlock_unlock(&fi->i_rwsem);
	f2fs_iput(sbi, fi);
out:
	f2fs_end_write(sbi);
	return ret;
}

/// FS_IOC_FSGETXATTR, FS_IOC_FSSETXATTR ///

/* The flags both forms carry, as fileattr_fill_flags() pairs them; f2fs keeps no DAX flag. */
static const struct {
	uint32_t fl, xflag;
} xflag_map[] = {
	{ FS_SYNC_FL,		FS_XFLAG_SYNC },
	{ FS_IMMUTABLE_FL,	FS_XFLAG_IMMUTABLE },
	{ FS_APPEND_FL,		FS_XFLAG_APPEND },
	{ FS_NODUMP_FL,		FS_XFLAG_NODUMP },
	{ FS_NOATIME_FL,	FS_XFLAG_NOATIME },
	{ FS_PROJINHERIT_FL,	FS_XFLAG_PROJINHERIT },
};

static uint32_t flags_to_xflags(uint32_t flags)
{
	uint32_t xflags = 0;

	for (size_t i = 0; i < ARRAY_SIZE(xflag_map); i++)
		if (flags & xflag_map[i].fl)
			xflags |= xflag_map[i].xflag;
	return xflags;
}

/* The FS_*_FL bits xflags can express are replaced; the rest are kept. */
static uint32_t apply_xflags(uint32_t flags, uint32_t xflags)
{
	for (size_t i = 0; i < ARRAY_SIZE(xflag_map); i++) {
		flags &= ~xflag_map[i].fl;
		if (xflags & xflag_map[i].xflag)
			flags |= xflag_map[i].fl;
	}
	return flags;
}

int uf2fs_fsgetxattr(struct uf2fs *fs, uint32_t ino, struct uf2fs_fsxattr *fsx)
{
	uint32_t flags;
	int ret = uf2fs_get_flags(fs, ino, &flags);

	memset(fsx, 0, sizeof(*fsx));
	if (ret)
		return ret;
	fsx->xflags = flags_to_xflags(flags);
	return uf2fs_get_projid(fs, ino, &fsx->projid);
}

int uf2fs_fssetxattr(struct uf2fs *fs, uint32_t ino, const struct uf2fs_fsxattr *fsx)
{
	uint32_t flags;
	int ret;

	if (fsx->extsize || fsx->cowextsize || (fsx->xflags & ~flags_to_xflags(~0u)))
		return -EOPNOTSUPP;
	ret = uf2fs_set_projid(fs, ino, fsx->projid);
	if (!ret)
		ret = uf2fs_get_flags(fs, ino, &flags);
	if (!ret)
		ret = uf2fs_set_flags(fs, ino, apply_xflags(flags, fsx->xflags));
	return ret;
}

/// fallocate ///

/* A slot preallocation must fill: no block, and no dirty data waiting to get one. */
static bool prealloc_hole(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, block_t addr,
			  uint64_t blk)
{
	struct folio *cached;
	bool dirty;

	if (addr != NULL_ADDR)
		return false;
	cached = folio_lookup(sbi, MAP_DATA, fi->ino, blk);
	if (!cached)
		return true;
	dirty = cached->dirty;
	folio_put(sbi, cached);
	return !dirty;
}

/*
 * Reserve NEW_ADDR blocks for the holes of the n slots from dn->ofs (file
 * block blk on), as many as the budget grants. Returns how many slots are
 * done: all n, or those up to the last one reserved when the budget ran out.
 */
static unsigned int prealloc_dnode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
				   struct dnode_of_data *dn, uint64_t blk, unsigned int n)
{
	uint32_t *addrs = (uint32_t *)dn->addrs + dn->ofs;
	uint64_t holes = 0, got, left;
	unsigned int i;

	for (i = 0; i < n; i++)
		holes += prealloc_hole(sbi, fi, addrs[i], blk + i);
	got = f2fs_reserve_blocks(sbi, holes);
	for (i = 0, left = got; left; i++) {
		if (!prealloc_hole(sbi, fi, addrs[i], blk + i))
			continue;
		addrs[i] = NEW_ADDR;
		fi->blocks++;
		left--;
	}
	if (got)
		folio_mark_dirty(sbi, dn->folio);
	return got == holes ? n : i;
}

/*
 * The dnode of blk for preallocation. A missing one (and the indirect
 * nodes above it) is made only while the budget has room for it and a
 * block: nodes count against user_block_count like data.
 */
static int prealloc_get_dnode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t blk,
			      struct dnode_of_data *dn)
{
	/* the dnode is rewritten or made: the node log must take it */
	int ret = f2fs_check_log_space(sbi, 0);

	if (!ret)
		ret = f2fs_get_dnode(sbi, fi, blk, dn);
	if (ret || dn->folio)
		return ret;
	if (!f2fs_has_budget(sbi, 1))
		return -ENOSPC;
	return f2fs_get_dnode_alloc(sbi, fi, blk, dn);
}

/*
 * Reserve NEW_ADDR blocks for the holes in [from, to): they read as zeroes.
 * As the kernel's PRE_AIO mapping, one dnode at a time: when space runs out
 * what was reserved stays, and *end is where the reserved range stops (the
 * block after the last one reserved, or after the last dnode done).
 */
static int preallocate(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t from,
		       uint64_t to, uint64_t *end)
{
	int ret = 0;

	for (*end = from; *end < to;) {
		struct dnode_of_data dn;
		unsigned int n, done;

		ret = prealloc_get_dnode(sbi, fi, *end, &dn);
		if (ret)
			break;
		n = MIN(dn.nr - dn.ofs, to - *end);
		done = prealloc_dnode(sbi, fi, &dn, *end, n);
		folio_put(sbi, dn.folio);
		*end += done;
		if (done < n) {
			ret = -ENOSPC;
			break;
		}
	}
	f2fs_mark_inode_dirty(sbi, fi);
	return ret;
}

/* Free the whole blocks of [from, to) and forget their cached folios. */
static int punch_blocks(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t from,
			uint64_t to)
{
	int ret = 0;

	/* settle dirty data first, so no folio straddles a hole in the cache */
	ret = f2fs_writeback_inode(sbi, fi);
	for (uint64_t b = from; b < to && !ret;) {
		struct dnode_of_data dn;
		uint32_t *addrs;

		ret = f2fs_get_dnode(sbi, fi, b, &dn);
		if (ret)
			break;
		if (!dn.folio) {
			b += dn.hole_blocks;
			continue;
		}
		addrs = (uint32_t *)dn.addrs;
		for (; dn.ofs < dn.nr && b < to; dn.ofs++, b++) {
			block_t a = addrs[dn.ofs];

			if (a == NULL_ADDR)
				continue;
			if (a == NEW_ADDR) {
				pthread_mutex_lock(&sbi->sm.lock);
				sbi->sm.valid_blocks--;
				pthread_mutex_unlock(&sbi->sm.lock);
			} else {
				f2fs_invalidate_block(sbi, a);
			}
			addrs[dn.ofs] = NULL_ADDR;
			if (fi->blocks > 1)
				fi->blocks--;
		}
		folio_mark_dirty(sbi, dn.folio);
		folio_put(sbi, dn.folio);
	}
	f2fs_extent_invalidate(fi, from, to - from);
	folio_drop_range(sbi, MAP_DATA, fi->ino, from, to);
	f2fs_mark_inode_dirty(sbi, fi);
	return ret;
}

static int do_fallocate(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, int mode,
			uint64_t off, uint64_t len)
{
	uint64_t end = off + len;
	uint64_t first_full = DIV_ROUND_UP(off, F2FS_BLKSIZE), last_full = end / F2FS_BLKSIZE;
	bool keep = mode & FALLOC_FL_KEEP_SIZE;
	int ret = 0;

	if (f2fs_is_inline_data(fi) && (end > f2fs_max_inline_data(fi) || !keep))
		ret = f2fs_convert_inline_inode(sbi, fi);
	if (ret)
		return ret;
	if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) {
		uint64_t zend = MIN(end, fi->size);

		if (f2fs_is_inline_data(fi))
			return zero_partial(sbi, fi, off, zend);
		if (first_full >= last_full) {
			ret = zero_partial(sbi, fi, off, MIN(zend, MAX(off, zend)));
		} else {
			ret = zero_partial(sbi, fi, off, MIN(zend, first_full * F2FS_BLKSIZE));
			if (!ret && last_full * F2FS_BLKSIZE < zend)
				ret = zero_partial(sbi, fi, last_full * F2FS_BLKSIZE, zend);
			if (!ret)
				ret = punch_blocks(sbi, fi, first_full, last_full);
		}
		if (ret || (mode & FALLOC_FL_PUNCH_HOLE))
			return ret;
	}
	if (!f2fs_is_inline_data(fi)) {
		uint64_t first = off / F2FS_BLKSIZE, done;

		ret = preallocate(sbi, fi, first, DIV_ROUND_UP(end, F2FS_BLKSIZE), &done);
		/* as the kernel: a failure keeps the size up to the end of what it reserved */
		if (ret && done == first)
			return ret;
		end = MIN(end, done * F2FS_BLKSIZE);
	}
	if (!keep && end > fi->size)
		fi->size = end;
	return ret;
}

/* COLLAPSE_RANGE and INSERT_RANGE (file_range.c), under the inode lock. */
static int do_shift_range(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, int mode,
			  uint64_t off, uint64_t len)
{
	if (mode == FALLOC_FL_COLLAPSE_RANGE)
		return f2fs_collapse_range(sbi, fi, off, len);
	/* as inode_newsize_ok, before the range checks */
	if (fi->size + len < fi->size ||
	    DIV_ROUND_UP(fi->size + len, F2FS_BLKSIZE) > max_file_blocks(fi))
		return -EFBIG;
	return f2fs_insert_range(sbi, fi, off, len);
}

static int do_fallocate_op(struct uf2fs *fs, uint32_t ino, int mode, uint64_t off, uint64_t len)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	const int supported = FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE |
			      FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE;
	const int shift = FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE;
	struct f2fs_inode_info *fi;
	uint64_t qlen = len;
	int ret;

	if (mode & ~supported)
		return -EOPNOTSUPP;
	if ((mode & FALLOC_FL_PUNCH_HOLE) && !(mode & FALLOC_FL_KEEP_SIZE))
		return -EOPNOTSUPP;
	/* as vfs_fallocate (Linux 6.13 on): collapse and insert take no other flag */
	if ((mode & shift) && mode != FALLOC_FL_COLLAPSE_RANGE && mode != FALLOC_FL_INSERT_RANGE)
		return -EOPNOTSUPP;
	if (!len || off + len < off)
		return -EINVAL;
	ret = f2fs_begin_write(sbi);
	if (ret)
		return ret;
	fi = get_inode(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
		goto out;
	}
	if (!S_ISREG(fi->mode))
		ret = S_ISDIR(fi->mode) ? -EISDIR : -ENODEV;
	/* as f2fs_fallocate: clusters cannot be punched; plain preallocation is fine */
	else if (f2fs_is_compressed(fi) && (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)))
		ret = -EOPNOTSUPP;
	else if (f2fs_is_compressed(fi) && f2fs_compress_released(fi))
		ret = -EPERM;
	else if ((fi->flags & (F2FS_IMMUTABLE_FL | F2FS_APPEND_FL)) || f2fs_is_verity(fi))
		ret = -EPERM;
	else if (f2fs_is_device_alias(fi))
		ret = -EOPNOTSUPP;	/* f2fs_fallocate */
	else if (DIV_ROUND_UP(off + len, F2FS_BLKSIZE) > max_file_blocks(fi))
		ret = -EFBIG;
	else if ((mode & shift) && f2fs_is_encrypted(fi))
		ret = -EOPNOTSUPP;	/* as f2fs_fallocate */
	if (!ret) {
		pthread_rwlock_wrlock(&fi->i_rwsem);
		/* a shift would write back the staged data of an atomic write: not offered */
		if ((mode & shift) && fi->atomic)
			ret = -EOPNOTSUPP;
		else if (mode & shift)
			ret = do_shift_range(sbi, fi, mode, off, len);
		else if (!(mode & FALLOC_FL_PUNCH_HOLE) &&
			 (ret = f2fs_quota_reserve_blocks(sbi, fi, off, &qlen, false)))
			;
		else
			ret = do_fallocate(sbi, fi, mode, off, len);
		if (!ret)	/* as f2fs_fallocate: times change only on success */
			f2fs_inode_touch(fi, !(mode == 0 || mode == FALLOC_FL_KEEP_SIZE), true);
		f2fs_mark_inode_dirty(sbi, fi);
		pthread_rwlock_unlock(&fi->i_rwsem);
	}
	f2fs_iput(sbi, fi);
out:
	f2fs_end_write(sbi);
	return ret;
}

/// Durability and balance ///

int uf2fs_sync(struct uf2fs *fs)
{
	return f2fs_checkpoint_now(SBI(fs), false);
}

/*
 * fsync: roll-forward (data, dnodes and the inode with the fsync mark, then
 * a flush) when the change allows it, else a checkpoint.
 */
int uf2fs_fsync(struct uf2fs *fs, uint32_t ino, bool datasync)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;
	int ret;

	if (sbi->opts.read_only)
		return 0;
	ret = f2fs_begin_write(sbi);
	if (ret)
		return ret;
	fi = get_inode(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
	} else {
		pthread_rwlock_wrlock(&fi->i_rwsem);
		if (fi->atomic)
			ret = 0;	/* staged data becomes durable at commit, not before */
		else
			ret = sbi->opts.fsync_mode_checkpoint ? 1 :
			      f2fs_fsync_file(sbi, fi, datasync);
		pthread_rwlock_unlock(&fi->i_rwsem);
		f2fs_iput(sbi, fi);
	}
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	if (ret == 1)
		ret = f2fs_checkpoint_now(sbi, false);
	return ret;
}

static uint64_t dirty_limit(struct f2fs_sb_info *sbi)
{
	return folio_cache_limit(sbi) / 4;
}

/*
 * Called after every modifying operation, without locks: past the dirty
 * limit, everything goes to disk by checkpoint, which bounds both memory
 * and the roll-back window.
 */
void f2fs_balance(struct f2fs_sb_info *sbi)
{
	if (sbi->opts.read_only || sbi->cp_stopped)
		return;
	if (folio_dirty_bytes(sbi) > dirty_limit(sbi) || sbi->nm.nr_dirty > 4096)
		f2fs_checkpoint_now(sbi, false);
	else
		f2fs_kick_flusher(sbi);
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * Whether the logs can take what writeback will allocate: the dirty data
 * plus nblocks, and every dirty node and inode (rewritten out of place)
 * with the direct nodes new data may need. Data can go to clean segments
 * and, with SSR, to free slots of data segments; nodes likewise to node
 * segments' slots. Slack covers segment granularity: each log may open a
 * clean segment it only starts. In LFS mode only clean segments count, and
 * the reserved segments stay free for GC, which then needs them to move
 * blocks (the kernel's reserved sections). With SSR nothing needs them:
 * GC moves blocks into slots like any other writer, and the kernel's
 * reserve is a threshold for starting GC, not a limit on allocation.
 */
bool f2fs_room_ok(struct f2fs_sb_info *sbi, uint64_t nblocks)
{
	uint64_t bps = sbi->blocks_per_seg;
	uint64_t data_need = folio_dirty_blocks(sbi, MAP_DATA) + nblocks;
	uint64_t node_need = folio_dirty_blocks(sbi, MAP_NODE) + f2fs_nr_dirty_inodes(sbi) +
			     DIV_ROUND_UP(data_need, DEF_ADDRS_PER_BLOCK) + 1;
	struct f2fs_log_room room;
	uint64_t slack;

	f2fs_log_room(sbi, &room);
	if (f2fs_lfs_mode(sbi))
		slack = (uint64_t)le32(sbi->ckpt->rsvd_segment_count) * bps;
	else
		slack = MIN(room.free_blocks, NR_CURSEG_TYPE * bps);
	return sub0(data_need, room.data_slots) + sub0(node_need, room.node_slots) + slack <=
	       room.free_blocks;
}

/*
 * The user-visible budget (ENOSPC): user_block_count valid blocks. Node
 * blocks count too (a checkpoint with more valid blocks than that is
 * corrupt), and dirty folios are blocks already promised.
 */
struct space_budget {
	uint64_t used;		/* valid + dirty */
	uint64_t dirty_data;
	uint64_t user;
};

/* Under sm.lock. */
static void read_budget(struct f2fs_sb_info *sbi, struct space_budget *b)
{
	b->dirty_data = folio_dirty_blocks(sbi, MAP_DATA);
	b->used = folio_dirty_bytes(sbi) / F2FS_BLKSIZE + sbi->sm.valid_blocks;
	b->user = sbi->sm.user_blocks;
}

/*
 * Nodes that writing back data may still have to create: a direct node per
 * ADDRS_PER_BLOCK blocks and an indirect one above them.
 */
static uint64_t nodes_for(uint64_t data)
{
	return data ? DIV_ROUND_UP(data, DEF_ADDRS_PER_BLOCK) + 1 : 0;
}

/* Whether nblocks more blocks of data to be written fit, with their nodes. */
static bool budget_fits(const struct space_budget *b, uint64_t nblocks)
{
	return b->used + nblocks + nodes_for(b->dirty_data + nblocks) <= b->user;
}

bool f2fs_has_budget(struct f2fs_sb_info *sbi, uint64_t nblocks)
{
	struct space_budget b;

	pthread_mutex_lock(&sbi->sm.lock);
	read_budget(sbi, &b);
	pthread_mutex_unlock(&sbi->sm.lock);
	return budget_fits(&b, nblocks);
}

/*
 * Count up to want reserved (NEW_ADDR) blocks as valid, as many as the
 * budget allows: the kernel's inc_valid_block_count also grants part of a
 * request. A reservation needs no nodes of its own, its caller made them
 * first. Checked and counted under one lock, so concurrent reservations
 * never overshoot the budget together.
 */
uint64_t f2fs_reserve_blocks(struct f2fs_sb_info *sbi, uint64_t want)
{
	struct space_budget b;
	uint64_t need, got;

	pthread_mutex_lock(&sbi->sm.lock);
	read_budget(sbi, &b);
	need = b.used + nodes_for(b.dirty_data);
	got = need < b.user ? MIN(want, b.user - need) : 0;
	sbi->sm.valid_blocks += got;
	pthread_mutex_unlock(&sbi->sm.lock);
	return got;
}

/*
 * Free space for nblocks more: the budget, then room in the logs; when
 * short, segments and slots freed since the last checkpoint become usable
 * at the next one, so the caller makes room.
 */
int f2fs_check_space(struct f2fs_sb_info *sbi, uint64_t nblocks)
{
	if (!f2fs_has_budget(sbi, nblocks))
		return -ENOSPC;
	return f2fs_check_log_space(sbi, nblocks);
}

/*
 * Only the log's side of f2fs_check_space: for blocks that replace as many
 * valid ones (a copy that frees its source), which change no user budget
 * but need room in the logs before the old blocks become reusable.
 */
int f2fs_check_log_space(struct f2fs_sb_info *sbi, uint64_t nblocks)
{
	if (f2fs_room_ok(sbi, nblocks))
		return 0;
	atomic_store(&sbi->sm.room_wanted, nblocks);
	return f2fs_gc_for_space(sbi, nblocks);
}

/// Retrying when space needs a checkpoint ///

ssize_t uf2fs_write(struct uf2fs *fs, uint32_t ino, const void *buf, size_t len, uint64_t off)
{
	return F2FS_WITH_ROOM(SBI(fs), do_write(fs, ino, buf, len, off, 0));
}

ssize_t uf2fs_write_flags(struct uf2fs *fs, uint32_t ino, const void *buf, size_t len,
			  uint64_t off, unsigned int flags)
{
	return F2FS_WITH_ROOM(SBI(fs), do_write(fs, ino, buf, len, off, flags));
}

int uf2fs_fallocate(struct uf2fs *fs, uint32_t ino, int mode, uint64_t off, uint64_t len)
{
	return F2FS_WITH_ROOM(SBI(fs), do_fallocate_op(fs, ino, mode, off, len));
}

/// Shutdown (F2FS_IOC_SHUTDOWN) ///

/*
 * The kernel's going-down modes: full sync and metadata sync checkpoint
 * first; "nosync" drops what is dirty, as a crash would; "need fsck" marks
 * the checkpoint. Afterwards every write fails with EIO, as after the
 * kernel's f2fs_stop_checkpoint, and a remount recovers what was fsync'd.
 */
int uf2fs_shutdown(struct uf2fs *fs, unsigned int mode)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	int ret = 0;

	if (sbi->opts.read_only)
		return -EROFS;
	switch (mode) {
	case UF2FS_GOING_DOWN_FULLSYNC:
	case UF2FS_GOING_DOWN_METASYNC:
	case UF2FS_GOING_DOWN_METAFLUSH:
		ret = f2fs_checkpoint_now(sbi, false);
		break;
	case UF2FS_GOING_DOWN_NOSYNC:
		break;
	case UF2FS_GOING_DOWN_NEED_FSCK:
		pthread_rwlock_wrlock(&sbi->cp_rwsem);
		sbi->ckpt->ckpt_flags |= CP_FSCK_FLAG;
		ret = f2fs_write_checkpoint(sbi, false);
		pthread_rwlock_unlock(&sbi->cp_rwsem);
		break;
	default:
		return -EINVAL;
	}
	pthread_rwlock_wrlock(&sbi->cp_rwsem);
	sbi->cp_stopped = true;
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}

/// Atomic writes ///

static bool inode_test(struct uf2fs *fs, uint32_t ino, bool (*test)(const struct f2fs_inode_info *))
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi = get_inode(sbi, ino);
	bool ret;

	if (IS_ERR(fi))
		return false;
	pthread_rwlock_rdlock(&fi->i_rwsem);
	ret = test(fi);
	pthread_rwlock_unlock(&fi->i_rwsem);
	f2fs_iput(sbi, fi);
	return ret;
}

static bool inode_is_atomic(const struct f2fs_inode_info *fi)
{
	return fi->atomic;
}

bool uf2fs_is_atomic(struct uf2fs *fs, uint32_t ino)
{
	return inode_test(fs, ino, inode_is_atomic);
}

bool uf2fs_writes_refused(struct uf2fs *fs, uint32_t ino)
{
	return inode_test(fs, ino, f2fs_compress_released);
}

int uf2fs_atomic_write(struct uf2fs *fs, uint32_t ino, enum uf2fs_atomic_op op)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;
	int ret;

	ret = f2fs_begin_write(sbi);
	if (ret)
		return ret;
	fi = get_inode(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
	} else {
		pthread_rwlock_wrlock(&fi->i_rwsem);
		if (op == UF2FS_ATOMIC_START)
			ret = f2fs_atomic_start(sbi, fi);
		else if (op == UF2FS_ATOMIC_COMMIT)
			ret = f2fs_atomic_commit(sbi, fi);
		else
			f2fs_atomic_abort(sbi, fi);
		pthread_rwlock_unlock(&fi->i_rwsem);
		f2fs_iput(sbi, fi);
	}
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	if (ret == 1)
		ret = f2fs_checkpoint_now(sbi, false);
	return ret;
}

/// F2FS_IOC_PRECACHE_EXTENTS (seed 002) ///

/*
 * Map the whole file once: every dnode is read (siblings under an indirect
 * node in batched readahead) and every run lands in the extent cache, so
 * later reads map without touching nodes.
 */
int uf2fs_precache_extents(struct uf2fs *fs, uint32_t ino)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;
	int ret = 0;

	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	fi = get_inode(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
		goto out;
	}
	pthread_rwlock_rdlock(&fi->i_rwsem);
	if (S_ISREG(fi->mode) && !f2fs_is_inline_data(fi) && !f2fs_is_compressed(fi)) {
		uint64_t end = DIV_ROUND_UP(fi->size, F2FS_BLKSIZE);

		for (uint64_t b = 0; b < end && !ret;) {
			struct f2fs_map_blocks map = { .lblk = b, .len = MIN(end - b, 1ull << 30) };

			ret = f2fs_map_blocks(sbi, fi, &map);
			b += map.len ? map.len : 1;
		}
	}
	pthread_rwlock_unlock(&fi->i_rwsem);
	f2fs_iput(sbi, fi);
out:
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}

int uf2fs_get_compress_blocks(struct uf2fs *fs, uint32_t ino, uint64_t *blocks)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;
	int ret = 0;

	if (!f2fs_has_feature(sbi, F2FS_FEATURE_COMPRESSION))
		return -EOPNOTSUPP;
	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	fi = get_inode(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
	} else {
		pthread_rwlock_rdlock(&fi->i_rwsem);
		if (f2fs_is_compressed(fi))
			*blocks = fi->compr_blocks;
		else
			ret = -EINVAL;
		pthread_rwlock_unlock(&fi->i_rwsem);
		f2fs_iput(sbi, fi);
	}
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	return ret;
}

/* A truncate that zeroes a partial block may need room, like a write. */
int uf2fs_setattr(struct uf2fs *fs, uint32_t ino, const struct uf2fs_attr *a,
		  unsigned int valid, struct uf2fs_attr *out)
{
	return F2FS_WITH_ROOM(SBI(fs), do_setattr(fs, ino, a, valid, out));
}

/// Testing ///

/* What the dnode slot holds: NEW_ADDR stays itself (reads map it to a hole). */
static int slot_addr(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t lblk,
		     block_t *blk)
{
	struct dnode_of_data dn;
	int ret = f2fs_get_dnode(sbi, fi, lblk, &dn);

	if (ret == -EFBIG)
		return 0;
	if (ret || !dn.folio)
		return ret;
	*blk = le32(dn.addrs[dn.ofs]);
	folio_put(sbi, dn.folio);
	return 0;
}

int uf2fs_test_block_addr(struct uf2fs *fs, uint32_t ino, uint64_t lblk, uint32_t *addr)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;
	block_t blk = NULL_ADDR;
	int ret;

	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	fi = get_inode(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
	} else {
		pthread_rwlock_rdlock(&fi->i_rwsem);
		ret = f2fs_is_inline_data(fi) ? -EINVAL : slot_addr(sbi, fi, lblk, &blk);
		pthread_rwlock_unlock(&fi->i_rwsem);
		f2fs_iput(sbi, fi);
	}
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	*addr = blk;
	return ret;
}
