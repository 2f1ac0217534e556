// SPDX-License-Identifier: GPL-2.0
/*
 * Namespace operations of the public API: mknod, mkdir, symlink, link,
 * unlink, rmdir and rename, with the POSIX rules Linux f2fs follows (nlink
 * and times, setgid directories, unlinked-but-open files kept as orphans).
 * Each takes the checkpoint lock shared and the directories' locks
 * exclusively, two directories in inode-number order.
 */
#include <linux/fs.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "f2fs.h"
#include "quota.h"

#define SBI(fs) ((struct f2fs_sb_info *)(fs))

int f2fs_begin_write(struct f2fs_sb_info *sbi)
{
	if (sbi->opts.read_only)
		return -EROFS;
	if (sbi->cp_stopped)
		return -EIO;
	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	atomic_store(&sbi->last_op_time, (uint64_t)time(NULL));
	return 0;
}

void f2fs_end_write(struct f2fs_sb_info *sbi)
{
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	f2fs_balance(sbi);
}

static struct f2fs_inode_info *get_dir(struct f2fs_sb_info *sbi, uint32_t ino)
{
	struct f2fs_inode_info *fi = ino < F2FS_RESERVED_NODE_NUM ? ERR_PTR(-ENOENT)
								     : f2fs_iget(sbi, ino);

	if (!IS_ERR(fi) && !S_ISDIR(fi->mode)) {
		f2fs_iput(sbi, fi);
		return ERR_PTR(-ENOTDIR);
	}
	return fi;
}

static void lock_two(struct f2fs_inode_info *a, struct f2fs_inode_info *b)
{
	if (a == b) {
		pthread_rwlock_wrlock(&a->i_rwsem);
	} else if (a->ino < b->ino) {
		pthread_rwlock_wrlock(&a->i_rwsem);
		pthread_rwlock_wrlock(&b->i_rwsem);
	} else {
		pthread_rwlock_wrlock(&b->i_rwsem);
		pthread_rwlock_wrlock(&a->i_rwsem);
	}
}

static void unlock_two(struct f2fs_inode_info *a, struct f2fs_inode_info *b)
{
	pthread_rwlock_unlock(&a->i_rwsem);
	if (a != b)
		pthread_rwlock_unlock(&b->i_rwsem);
}

/*
 * Immutable and append-only, as the VFS enforces them for local
 * filesystems (may_delete, may_linkat, inode_permission): through FUSE the
 * kernel does not know the flags, so the library applies them.
 */
static int may_add(const struct f2fs_inode_info *dir)
{
	return (dir->flags & F2FS_IMMUTABLE_FL) ? -EPERM : 0;
}

static int may_delete(const struct f2fs_inode_info *dir, const struct f2fs_inode_info *fi)
{
	if (dir->flags & (F2FS_IMMUTABLE_FL | F2FS_APPEND_FL))
		return -EPERM;
	if (fi && (fi->flags & (F2FS_IMMUTABLE_FL | F2FS_APPEND_FL)))
		return -EPERM;
	return 0;
}

/// Creation ///

static void encode_rdev(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t rdev)
{
	struct folio *f = f2fs_get_inode_folio(sbi, fi->ino);
	unsigned int ma = major(rdev), mi = minor(rdev);
	uint32_t *addrs;

	if (IS_ERR(f))
		return;
	addrs = (uint32_t *)inode_addrs(folio_node(f)) + fi->extra_isize;
	if (ma < 256 && mi < 256) {
		addrs[0] = (ma << 8) | mi;
		addrs[1] = 0;
	} else {
		addrs[0] = 0;
		addrs[1] = (mi & 0xff) | (ma << 8) | ((mi & ~0xffu) << 12);
	}
	fi->rdev = makedev(ma, mi);
	folio_mark_dirty(sbi, f);
	folio_put(sbi, f);
}

/*
 * As Linux's init_dent_inode: roll-forward has no key, so it cannot compute
 * the dirhash of a name in an encrypted, casefolded directory; the hash is
 * stored after the name in i_name (little-endian) when it fits. False when
 * it does not: the name cannot be recovered and fsync must checkpoint (the
 * kernel's file_lost_pino).
 */
static bool put_name_hash(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			  const struct f2fs_inode_info *dir, const struct f2fs_filename *fn)
{
	struct folio *f;
	uint8_t *p;

	if (!f2fs_dir_casefolded(sbi, dir))
		return true;
	if (fn->len + 4 > F2FS_NAME_LEN)
		return false;
	f = f2fs_get_inode_folio(sbi, fi->ino);
	if (IS_ERR(f))
		return false;
	p = folio_node(f)->i.i_name + fn->len;
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(fn->hash >> (8 * i));
	folio_mark_dirty(sbi, f);
	folio_put(sbi, f);
	return true;
}

/* struct fscrypt_symlink_data (le16 length, ciphertext) as the symlink's data. */
static int write_encrypted_link(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
				const char *target)
{
	uint8_t buf[F2FS_BLKSIZE];
	ssize_t n = fscrypt_encrypt_symlink(sbi->keyring, &fi->fscrypt, target, strlen(target), buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return f2fs_file_write(sbi, fi, buf, n, 0) < 0 ? -ENOSPC : 0;
}

static int do_create(struct f2fs_sb_info *sbi, uint32_t dir_ino, const char *name,
		     size_t len, const struct uf2fs_create_args *args, uint32_t *out)
{
	struct f2fs_inode_info *dir, *fi;
	struct f2fs_new_acl na = { 0 };
	/* symlinks are 0777, as on Linux, whatever the caller says */
	uint32_t mode = S_ISLNK(args->mode) ? S_IFLNK | 0777 : args->mode & (S_IFMT | 07777);
	uint32_t gid = args->gid;
	struct f2fs_filename efn;
	const char *iname = name;	/* i_name: the encrypted name in an encrypted dir */
	size_t ilen = len;
	unsigned int ftype;
	nid_t existing;
	int ret;

	if (len > F2FS_NAME_LEN)
		return -ENAMETOOLONG;
	if (!len)
		return -ENOENT;
	ret = f2fs_begin_write(sbi);
	if (ret)
		return ret;
	dir = get_dir(sbi, dir_ino);
	if (IS_ERR(dir)) {
		ret = PTR_ERR(dir);
		goto out;
	}
	pthread_rwlock_wrlock(&dir->i_rwsem);
	if (!dir->nlink) {
		ret = -ENOENT;
		goto unlock;
	}
	ret = f2fs_find_entry(sbi, dir, name, len, &existing, &ftype);
	if (ret != -ENOENT) {
		ret = ret ? ret : -EEXIST;
		goto unlock;
	}
	ret = may_add(dir);
	if (!ret)
		ret = f2fs_check_space(sbi, 2);
	/* an encrypted directory takes new names only with its key */
	if (!ret && f2fs_is_encrypted(dir)) {
		ret = fscrypt_prepare(sbi->keyring, &dir->fscrypt);
		if (!ret)
			ret = f2fs_setup_filename(sbi, dir, name, len, &efn);
		if (!ret) {
			iname = (const char *)efn.name;
			ilen = efn.len;
		}
	}
	if (ret)
		goto unlock;
	/* BSD group semantics in setgid directories, as Linux applies them */
	if (dir->mode & S_ISGID) {
		gid = dir->gid;
		if (S_ISDIR(mode))
			mode |= S_ISGID;
	}
	ret = f2fs_quota_reserve_inode(sbi, args->uid, gid, dir);
	if (ret)
		goto unlock;
	/* under dir's lock, so a concurrent setfacl -d is either seen whole or not at all */
	ret = f2fs_acl_create(sbi, dir, &mode, args->umask, &na);
	if (ret)
		goto unlock;
	fi = f2fs_new_inode(sbi, dir, mode, args->uid, gid, iname, ilen);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
		goto unlock;
	}
	ret = f2fs_init_acl(sbi, fi, &na);
	if (!ret && f2fs_is_encrypted(dir)) {
		uint64_t ns_changed_at = fi->ns_changed_at;

		ret = fscrypt_inherit_context(sbi->keyring, &dir->fscrypt, &fi->fscrypt);
		/*
		 * The context went into the new inode's inline xattrs, which
		 * roll-forward replays with the inode (recover_inline_xattr):
		 * setting it needs no checkpoint here.
		 */
		if (!ret && !fi->xattr_nid)
			fi->ns_changed_at = ns_changed_at;
		if (!ret)
			ret = f2fs_compress_new_encrypted(sbi, dir, fi, name, len);
		/* roll-forward re-adds the encrypted name from i_name, if it can hash it */
		if (!ret && !put_name_hash(sbi, fi, dir, &efn))
			f2fs_mark_need_cp(sbi, fi);
	}
	if (ret)
		;
	else if (S_ISDIR(mode))
		ret = f2fs_make_empty_dir(sbi, fi, dir->ino);
	else if (S_ISCHR(mode) || S_ISBLK(mode) || S_ISFIFO(mode) || S_ISSOCK(mode))
		encode_rdev(sbi, fi, args->rdev);
	else if (S_ISLNK(mode) && f2fs_is_encrypted(fi))
		ret = write_encrypted_link(sbi, fi, args->target);
	else if (S_ISLNK(mode))
		ret = f2fs_file_write(sbi, fi, args->target, strlen(args->target), 0) < 0 ?
		      -ENOSPC : 0;
	if (!ret)
		ret = f2fs_add_link(sbi, dir, name, len, fi->ino, mode);
	if (ret) {
		fi->nlink = 0;
		f2fs_evict_inode(sbi, fi);
	} else {
		if (S_ISDIR(mode))
			dir->nlink++;
		f2fs_mark_inode_dirty(sbi, fi);
		*out = fi->ino;
	}
	f2fs_iput(sbi, fi);
unlock:
	f2fs_new_acl_free(&na);
	pthread_rwlock_unlock(&dir->i_rwsem);
	f2fs_iput(sbi, dir);
out:
	f2fs_end_write(sbi);
	return ret;
}

int uf2fs_create(struct uf2fs *fs, uint32_t dir, const char *name, size_t len,
		 const struct uf2fs_create_args *args, uint32_t *ino)
{
	uint32_t type = args->mode & S_IFMT;

	if (type == S_IFLNK) {
		size_t tlen = args->target ? strlen(args->target) : 0;

		if (!tlen)
			return -ENOENT;
		if (tlen >= F2FS_BLKSIZE)
			return -ENAMETOOLONG;
	} else if (type != S_IFREG && type != S_IFDIR && type != S_IFCHR && type != S_IFBLK &&
		   type != S_IFIFO && type != S_IFSOCK) {
		return -EINVAL;
	}
	/* Operations that may need room retry after a checkpoint made some. */
	return F2FS_WITH_ROOM(SBI(fs), do_create(SBI(fs), dir, name, len, args, ino));
}

int uf2fs_mknod(struct uf2fs *fs, uint32_t dir, const char *name, size_t len, uint32_t mode,
		uint32_t uid, uint32_t gid, uint64_t rdev, uint32_t *ino)
{
	struct uf2fs_create_args a = { .mode = mode, .uid = uid, .gid = gid, .rdev = rdev };

	/* directories and symlinks have their own calls */
	if (S_ISDIR(mode) || S_ISLNK(mode))
		return -EINVAL;
	return uf2fs_create(fs, dir, name, len, &a, ino);
}

int uf2fs_mkdir(struct uf2fs *fs, uint32_t dir, const char *name, size_t len, uint32_t mode,
		uint32_t uid, uint32_t gid, uint32_t *ino)
{
	struct uf2fs_create_args a = { .mode = S_IFDIR | (mode & 07777), .uid = uid, .gid = gid };

	return uf2fs_create(fs, dir, name, len, &a, ino);
}

int uf2fs_symlink(struct uf2fs *fs, uint32_t dir, const char *name, size_t len,
		  const char *target, uint32_t uid, uint32_t gid, uint32_t *ino)
{
	struct uf2fs_create_args a = { .mode = S_IFLNK | 0777, .uid = uid, .gid = gid,
				       .target = target };

	return uf2fs_create(fs, dir, name, len, &a, ino);
}

/* A PROJINHERIT directory takes only inodes of its project (EXDEV otherwise). */
static bool project_ok(const struct f2fs_inode_info *dir, const struct f2fs_inode_info *fi)
{
	return !(dir->flags & F2FS_PROJINHERIT_FL) || dir->projid == fi->projid;
}

static int do_link(struct uf2fs *fs, uint32_t ino, uint32_t newdir, const char *name, size_t len)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *dir, *fi;
	unsigned int ftype;
	nid_t existing;
	int ret;

	if (len > F2FS_NAME_LEN)
		return -ENAMETOOLONG;
	ret = f2fs_begin_write(sbi);
	if (ret)
		return ret;
	dir = get_dir(sbi, newdir);
	fi = f2fs_iget(sbi, ino);
	if (IS_ERR(dir) || IS_ERR(fi)) {
		ret = IS_ERR(dir) ? PTR_ERR(dir) : PTR_ERR(fi);
		goto put;
	}
	if (!project_ok(dir, fi)) {
		ret = -EXDEV;
		goto put;
	}
	if (S_ISDIR(fi->mode) || (fi->flags & (F2FS_IMMUTABLE_FL | F2FS_APPEND_FL)) ||
	    may_add(dir)) {
		ret = -EPERM;
		goto put;
	}
	lock_two(dir, fi);
	ret = f2fs_find_entry(sbi, dir, name, len, &existing, &ftype);
	if (ret != -ENOENT)
		ret = ret ? ret : -EEXIST;
	else if (!fi->nlink)
		ret = -ENOENT;
	else if (fi->nlink >= 0xffffffffu)
		ret = -EMLINK;
	else if (!(ret = fscrypt_may_link(sbi->keyring, &dir->fscrypt, &fi->fscrypt)))
		ret = f2fs_add_link(sbi, dir, name, len, fi->ino, fi->mode);
	if (!ret) {
		fi->nlink++;
		f2fs_mark_need_cp(sbi, fi);
		f2fs_inode_touch(fi, false, true);
		f2fs_mark_inode_dirty(sbi, fi);
	}
	unlock_two(dir, fi);
put:
	if (!IS_ERR(dir))
		f2fs_iput(sbi, dir);
	if (!IS_ERR(fi))
		f2fs_iput(sbi, fi);
	f2fs_end_write(sbi);
	return ret;
}

/// Removal ///

/* The last name is gone: free now, or at the last close when still open. */
static int drop_nlink(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	f2fs_mark_need_cp(sbi, fi);
	if (S_ISDIR(fi->mode))
		fi->nlink = 0;
	else if (fi->nlink)
		fi->nlink--;
	f2fs_inode_touch(fi, false, true);
	f2fs_mark_inode_dirty(sbi, fi);
	if (fi->nlink)
		return 0;
	if (fi->open_count) {
		fi->orphan = true;
		return f2fs_add_orphan(sbi, fi->ino);
	}
	return f2fs_evict_inode(sbi, fi);
}

static int remove_common(struct f2fs_sb_info *sbi, uint32_t dir_ino, const char *name,
			 size_t len, bool rmdir)
{
	struct f2fs_inode_info *dir, *fi = NULL;
	unsigned int ftype;
	nid_t ino;
	int ret;

	if (len > F2FS_NAME_LEN)
		return -ENAMETOOLONG;
	if (rmdir && ((len == 1 && name[0] == '.') || (len == 2 && !memcmp(name, "..", 2))))
		return len == 1 ? -EINVAL : -ENOTEMPTY;
	ret = f2fs_begin_write(sbi);
	if (ret)
		return ret;
	dir = get_dir(sbi, dir_ino);
	if (IS_ERR(dir)) {
		ret = PTR_ERR(dir);
		goto out;
	}
	pthread_rwlock_wrlock(&dir->i_rwsem);
	ret = f2fs_find_entry(sbi, dir, name, len, &ino, &ftype);
	if (ret)
		goto unlock;
	fi = f2fs_iget(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
		fi = NULL;
		goto unlock;
	}
	pthread_rwlock_wrlock(&fi->i_rwsem);
	ret = may_delete(dir, fi);
	if (ret)
		;
	else if (rmdir && !S_ISDIR(fi->mode))
		ret = -ENOTDIR;
	else if (!rmdir && S_ISDIR(fi->mode))
		ret = -EISDIR;
	else if (rmdir)
		ret = f2fs_empty_dir(sbi, fi) == 1 ? 0 : -ENOTEMPTY;
	if (!ret)
		ret = f2fs_delete_entry(sbi, dir, name, len);
	if (!ret) {
		if (rmdir && dir->nlink > 2)
			dir->nlink--;
		ret = drop_nlink(sbi, fi);
	}
	pthread_rwlock_unlock(&fi->i_rwsem);
unlock:
	pthread_rwlock_unlock(&dir->i_rwsem);
	if (fi)
		f2fs_iput(sbi, fi);
	f2fs_iput(sbi, dir);
out:
	f2fs_end_write(sbi);
	return ret;
}

int uf2fs_unlink(struct uf2fs *fs, uint32_t dir, const char *name, size_t len)
{
	return remove_common(SBI(fs), dir, name, len, false);
}

int uf2fs_rmdir(struct uf2fs *fs, uint32_t dir, const char *name, size_t len)
{
	return remove_common(SBI(fs), dir, name, len, true);
}

/// Rename ///

struct rename_ctx {
	struct f2fs_inode_info *odir, *ndir, *src, *dst;
	const char *oname, *nname;
	size_t olen, nlen;
	unsigned int flags;
};

/* A directory moving to another parent: its ".." follows, and the link counts. */
static int reparent(struct f2fs_sb_info *sbi, struct f2fs_inode_info *child,
		    struct f2fs_inode_info *from, struct f2fs_inode_info *to)
{
	int ret;

	if (!S_ISDIR(child->mode) || from == to)
		return 0;
	ret = f2fs_set_link(sbi, child, "..", 2, to->ino, S_IFDIR);
	if (ret)
		return ret;
	if (from->nlink > 2)
		from->nlink--;
	to->nlink++;
	f2fs_mark_inode_dirty(sbi, from);
	f2fs_mark_inode_dirty(sbi, to);
	return 0;
}

/*
 * The renamed inode records its new parent and name, for roll-forward
 * recovery: in an encrypted directory the encrypted name (FADVISE_ENC_NAME).
 */
static void set_inode_name(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			   struct f2fs_inode_info *dir, const char *name, size_t len)
{
	nid_t pino = dir->ino;
	struct f2fs_filename fn;
	struct folio *f;

	fi->i_advise &= ~FADVISE_ENC_NAME_BIT;
	if (f2fs_is_encrypted(dir) && !f2fs_setup_filename(sbi, dir, name, len, &fn) &&
	    !fn.nokey) {
		name = (const char *)fn.name;
		len = fn.len;
		fi->i_advise |= FADVISE_ENC_NAME_BIT;
	}
	f = f2fs_get_inode_folio(sbi, fi->ino);
	if (IS_ERR(f))
		return;
	folio_node(f)->i.i_pino = pino;
	folio_node(f)->i.i_namelen = len;
	memset(folio_node(f)->i.i_name, 0, F2FS_NAME_LEN);
	memcpy(folio_node(f)->i.i_name, name, len);
	folio_mark_dirty(sbi, f);
	folio_put(sbi, f);
	if (fi->i_advise & FADVISE_ENC_NAME_BIT)
		put_name_hash(sbi, fi, dir, &fn);
	f2fs_mark_need_cp(sbi, fi);
	f2fs_inode_touch(fi, false, true);
	f2fs_mark_inode_dirty(sbi, fi);
}

/*
 * A directory may not move below itself: walk up from the new parent. The
 * kernel's VFS checks this before FUSE sees a rename; library callers get
 * the same answer (EINVAL).
 */
static bool is_ancestor(struct f2fs_sb_info *sbi, nid_t anc, nid_t dir)
{
	for (int depth = 0; depth < 4096 && dir != sbi->root_ino; depth++) {
		struct f2fs_inode_info *fi;
		unsigned int ft;
		nid_t parent;
		int ret;

		if (dir == anc)
			return true;
		fi = f2fs_iget(sbi, dir);
		if (IS_ERR(fi))
			return false;
		ret = f2fs_find_entry(sbi, fi, "..", 2, &parent, &ft);
		f2fs_iput(sbi, fi);
		if (ret)
			return false;
		dir = parent;
	}
	return dir == anc;
}

static int rename_exchange(struct f2fs_sb_info *sbi, struct rename_ctx *c)
{
	int ret = f2fs_set_link(sbi, c->odir, c->oname, c->olen, c->dst->ino, c->dst->mode);

	if (!ret)
		ret = f2fs_set_link(sbi, c->ndir, c->nname, c->nlen, c->src->ino, c->src->mode);
	if (!ret)
		ret = reparent(sbi, c->src, c->odir, c->ndir);
	if (!ret)
		ret = reparent(sbi, c->dst, c->ndir, c->odir);
	if (!ret) {
		set_inode_name(sbi, c->src, c->ndir, c->nname, c->nlen);
		set_inode_name(sbi, c->dst, c->odir, c->oname, c->olen);
	}
	return ret;
}

static int rename_move(struct f2fs_sb_info *sbi, struct rename_ctx *c)
{
	int ret;

	if (c->dst) {
		if (S_ISDIR(c->src->mode) && !S_ISDIR(c->dst->mode))
			return -ENOTDIR;
		if (!S_ISDIR(c->src->mode) && S_ISDIR(c->dst->mode))
			return -EISDIR;
		if (S_ISDIR(c->dst->mode) && f2fs_empty_dir(sbi, c->dst) != 1)
			return -ENOTEMPTY;
		ret = f2fs_set_link(sbi, c->ndir, c->nname, c->nlen, c->src->ino, c->src->mode);
		if (!ret && S_ISDIR(c->dst->mode) && c->ndir->nlink > 2)
			c->ndir->nlink--;
		if (!ret)
			ret = drop_nlink(sbi, c->dst);
	} else {
		ret = f2fs_check_space(sbi, 1);
		if (!ret)
			ret = f2fs_add_link(sbi, c->ndir, c->nname, c->nlen, c->src->ino,
					    c->src->mode);
	}
	if (!ret)
		ret = f2fs_delete_entry(sbi, c->odir, c->oname, c->olen);
	if (!ret)
		ret = reparent(sbi, c->src, c->odir, c->ndir);
	if (!ret)
		set_inode_name(sbi, c->src, c->ndir, c->nname, c->nlen);
	return ret;
}

static int do_rename(struct uf2fs *fs, uint32_t olddir, const char *oldname, size_t oldlen,
		     uint32_t newdir, const char *newname, size_t newlen, unsigned int flags)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct rename_ctx c = { .oname = oldname, .olen = oldlen, .nname = newname,
				.nlen = newlen, .flags = flags };
	unsigned int ftype;
	nid_t sino, dino;
	int ret;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE) ||
	    (flags & RENAME_NOREPLACE && flags & RENAME_EXCHANGE))
		return -EINVAL;
	if (oldlen > F2FS_NAME_LEN || newlen > F2FS_NAME_LEN)
		return -ENAMETOOLONG;
	ret = f2fs_begin_write(sbi);
	if (ret)
		return ret;
	c.odir = get_dir(sbi, olddir);
	c.ndir = get_dir(sbi, newdir);
	if (IS_ERR(c.odir) || IS_ERR(c.ndir)) {
		ret = IS_ERR(c.odir) ? PTR_ERR(c.odir) : PTR_ERR(c.ndir);
		goto put_dirs;
	}
	lock_two(c.odir, c.ndir);
	ret = f2fs_find_entry(sbi, c.odir, oldname, oldlen, &sino, &ftype);
	if (ret)
		goto unlock;
	ret = f2fs_find_entry(sbi, c.ndir, newname, newlen, &dino, &ftype);
	if (ret && ret != -ENOENT)
		goto unlock;
	if (!ret && (flags & RENAME_NOREPLACE)) {
		ret = -EEXIST;
		goto unlock;
	}
	if (ret == -ENOENT && (flags & RENAME_EXCHANGE))
		goto unlock;
	c.src = f2fs_iget(sbi, sino);
	c.dst = ret ? NULL : f2fs_iget(sbi, dino);
	if (IS_ERR(c.src) || IS_ERR(c.dst)) {
		ret = IS_ERR(c.src) ? PTR_ERR(c.src) : PTR_ERR(c.dst);
		goto put_inodes;
	}
	if (c.dst == c.src) {
		ret = 0;	/* two names of one inode: POSIX says do nothing */
		goto put_inodes;
	}
	/* as f2fs_rename and f2fs_cross_rename: a project tree keeps its own */
	if (!project_ok(c.ndir, c.src) || ((flags & RENAME_EXCHANGE) && !project_ok(c.odir, c.dst))) {
		ret = -EXDEV;
		goto put_inodes;
	}
	ret = may_delete(c.odir, c.src);
	if (!ret)
		ret = c.dst ? may_delete(c.ndir, c.dst) : may_add(c.ndir);
	if (!ret && (flags & RENAME_EXCHANGE))
		ret = may_add(c.odir);
	if (ret)
		goto put_inodes;
	/* fscrypt_prepare_rename: keys of both directories, policies that match */
	if (!ret && f2fs_is_encrypted(c.odir))
		ret = fscrypt_prepare(sbi->keyring, &c.odir->fscrypt);
	if (!ret)
		ret = fscrypt_may_link(sbi->keyring, &c.ndir->fscrypt, &c.src->fscrypt);
	if (!ret && (flags & RENAME_EXCHANGE))
		ret = fscrypt_may_link(sbi->keyring, &c.odir->fscrypt, &c.dst->fscrypt);
	if (ret)
		goto put_inodes;
	if ((S_ISDIR(c.src->mode) && is_ancestor(sbi, c.src->ino, c.ndir->ino)) ||
	    (c.dst && S_ISDIR(c.dst->mode) && (flags & RENAME_EXCHANGE) &&
	     is_ancestor(sbi, c.dst->ino, c.odir->ino))) {
		ret = -EINVAL;
		goto put_inodes;
	}
	ret = (flags & RENAME_EXCHANGE) ? rename_exchange(sbi, &c) : rename_move(sbi, &c);
put_inodes:
	if (!IS_ERR_OR_NULL(c.src))
		f2fs_iput(sbi, c.src);
	if (!IS_ERR_OR_NULL(c.dst))
		f2fs_iput(sbi, c.dst);
unlock:
	unlock_two(c.odir, c.ndir);
put_dirs:
	if (!IS_ERR(c.odir))
		f2fs_iput(sbi, c.odir);
	if (!IS_ERR(c.ndir))
		f2fs_iput(sbi, c.ndir);
	f2fs_end_write(sbi);
	return ret;
}

int uf2fs_rename(struct uf2fs *fs, uint32_t olddir, const char *oldname, size_t oldlen,
		 uint32_t newdir, const char *newname, size_t newlen, unsigned int flags)
{
	return F2FS_WITH_ROOM(SBI(fs), do_rename(fs, olddir, oldname, oldlen, newdir, newname,
						   newlen, flags));
}

int uf2fs_link(struct uf2fs *fs, uint32_t ino, uint32_t newdir, const char *name, size_t len)
{
	return F2FS_WITH_ROOM(SBI(fs), do_link(fs, ino, newdir, name, len));
}
