// SPDX-License-Identifier: GPL-2.0
/*
 * Gathering an inode's xattr area the way the kernel does: the inline xattr
 * space at the end of the inode's address array, followed by the xattr node
 * block, in one buffer. The parsing of that buffer is in xattr.c.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "f2fs.h"

static unsigned int inline_xattr_bytes(const struct f2fs_inode_info *fi)
{
	if (!(fi->i_inline & F2FS_INLINE_XATTR))
		return 0;
	return fi->inline_xattr_addrs * sizeof(uint32_t);
}

static int read_xattr_node(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, nid_t nid,
			   uint8_t *dst)
{
	struct folio *f = f2fs_get_node_folio(sbi, nid);

	if (IS_ERR(f))
		return PTR_ERR(f);
	if (le32(folio_node(f)->footer.ino) != fi->ino ||
	    (le32(folio_node(f)->footer.flag) >> OFFSET_BIT_SHIFT) != XATTR_NODE_OFFSET) {
		folio_put(sbi, f);
		return f2fs_error(sbi, EFSCORRUPTED,
				  "xattr node %u of inode %u: footer does not match", nid, fi->ino);
	}
	memcpy(dst, f->data, VALID_XATTR_BLOCK_SIZE);
	folio_put(sbi, f);
	return 0;
}

/*
 * The caller holds the inode's lock (shared is enough): a setxattr that
 * adds or frees the xattr node between sizing the buffer and filling it
 * would otherwise overrun it. The node is sampled once all the same.
 */
int f2fs_read_xattr_area(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint8_t **buf,
			 size_t *len)
{
	unsigned int inline_size = inline_xattr_bytes(fi);
	nid_t xnid = fi->xattr_nid;
	size_t total = inline_size + (xnid ? VALID_XATTR_BLOCK_SIZE : 0);
	uint8_t *b;
	int ret;

	*buf = NULL;
	*len = 0;
	if (!total)
		return 0;
	b = calloc(1, total);
	if (!b)
		return -ENOMEM;
	if (inline_size) {
		struct folio *f = f2fs_get_inode_folio(sbi, fi->ino);

		if (IS_ERR(f)) {
			free(b);
			return PTR_ERR(f);
		}
		memcpy(b, f2fs_inline_xattr_addr(fi, folio_node(f)), inline_size);
		folio_put(sbi, f);
	}
	if (xnid) {
		ret = read_xattr_node(sbi, fi, xnid, b + inline_size);
		if (ret) {
			free(b);
			return ret;
		}
	}
	*buf = b;
	*len = total;
	return 0;
}

/*
 * ls -l asks every entry for security.selinux (and an ACL), which most
 * inodes do not have: once a read found the area empty, later lookups skip
 * the inode lock, the allocation and the node folio until the area is
 * stored again. A store bumps the generation after writing, so a read that
 * raced with it notes an older generation than the one it must match.
 */
unsigned int f2fs_xattr_gen(struct f2fs_inode_info *fi)
{
	return atomic_load_explicit(&fi->xattr_gen, memory_order_acquire);
}

void f2fs_xattrs_note_read(struct f2fs_inode_info *fi, unsigned int gen, const uint8_t *buf,
			   size_t len)
{
	if (f2fs_xattr_area_empty(buf, len))
		atomic_store_explicit(&fi->xattr_empty_at, gen + 1, memory_order_release);
}

bool f2fs_xattrs_known_empty(struct f2fs_inode_info *fi)
{
	unsigned int at = atomic_load_explicit(&fi->xattr_empty_at, memory_order_acquire);

	return at && at == f2fs_xattr_gen(fi) + 1;
}

/// Setting and removing ///

/* Write an updated area back: inline part, then the node (allocated or freed). */
static int store_xattr_area(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			    const uint8_t *buf, unsigned int inline_size,
			    const struct f2fs_xattr_update *up)
{
	if (inline_size) {
		struct folio *f = f2fs_get_inode_folio(sbi, fi->ino);

		if (IS_ERR(f))
			return PTR_ERR(f);
		memcpy(f2fs_inline_xattr_addr(fi, folio_node(f)), buf, inline_size);
		folio_mark_dirty(sbi, f);
		folio_put(sbi, f);
	}
	if (up->need_node) {
		struct folio *f;

		if (!fi->xattr_nid) {
			nid_t nid;
			int ret = f2fs_alloc_nid(sbi, fi->ino, &nid);

			if (ret)
				return ret;
			f = f2fs_new_node_folio(sbi, nid, fi->ino, XATTR_NODE_OFFSET,
						S_ISDIR(fi->mode));
			if (IS_ERR(f)) {
				f2fs_alloc_nid_failed(sbi, nid);
				return PTR_ERR(f);
			}
			fi->xattr_nid = nid;
			fi->blocks++;
		} else {
			f = f2fs_get_node_folio(sbi, fi->xattr_nid);
			if (IS_ERR(f))
				return PTR_ERR(f);
		}
		memcpy(f->data, buf + inline_size, VALID_XATTR_BLOCK_SIZE);
		folio_mark_dirty(sbi, f);
		folio_put(sbi, f);
	} else if (fi->xattr_nid) {
		/* as the kernel: once the list fits inline, the node goes */
		int ret = f2fs_truncate_node(sbi, fi->xattr_nid);

		if (ret)
			return ret;
		fi->xattr_nid = 0;
		if (fi->blocks > 1)
			fi->blocks--;
	}
	f2fs_mark_inode_dirty(sbi, fi);
	return 0;
}

/* The whole area an update may fill: inline part and a (possibly new) node. */
static uint8_t *read_xattr_area_full(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
				     size_t total, int *err)
{
	uint8_t *buf = calloc(1, total), *cur;
	size_t cur_len;

	*err = buf ? f2fs_read_xattr_area(sbi, fi, &cur, &cur_len) : -ENOMEM;
	if (*err) {
		free(buf);
		return NULL;
	}
	if (cur)	/* no xattr area yet: nothing to copy (memcpy from NULL is undefined) */
		memcpy(buf, cur, MIN(cur_len, total));
	free(cur);
	return buf;
}

/* Store a changed area; the inode notes the change as the kernel does. */
static int commit_xattr_area(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint8_t *buf,
			     const struct f2fs_xattr_update *up, bool creating)
{
	unsigned int inline_size = inline_xattr_bytes(fi);
	int ret = 0;

	if (up->need_node && !fi->xattr_nid)
		ret = f2fs_check_space(sbi, 1);
	if (!ret && up->dirty) {
		ret = store_xattr_area(sbi, fi, buf, inline_size, up);
		/* after the store, even a failed one: what a reader saw before is old */
		atomic_fetch_add_explicit(&fi->xattr_gen, 1, memory_order_release);
	}
	if (!ret && up->set_mode)
		fi->mode = up->mode;
	if (!ret && up->touched) {
		f2fs_mark_need_cp(sbi, fi);
		/* an inode being created keeps its birth times equal */
		if (!creating)
			f2fs_inode_touch(fi, false, true);
		f2fs_mark_inode_dirty(sbi, fi);
	}
	return ret;
}

static int update_xattr(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, const char *name,
			const void *value, size_t size, int flags, bool remove, bool creating)
{
	unsigned int inline_size = inline_xattr_bytes(fi);
	size_t total = inline_size + VALID_XATTR_BLOCK_SIZE;
	bool kill_sgid = flags & UF2FS_XATTR_KILL_SGID;
	struct f2fs_xattr_update up = { 0 };
	uint8_t *buf;
	int ret;

	buf = read_xattr_area_full(sbi, fi, total, &ret);
	if (!buf)
		return ret;
	ret = f2fs_xattr_set(buf, inline_size, total, fi->mode, name, value, size,
			     flags & ~UF2FS_XATTR_KILL_SGID, remove, &up);
	/* posix_acl_update_mode: only an access ACL being set changes the mode */
	if (!ret && up.set_mode && kill_sgid)
		up.mode &= ~S_ISGID;
	if (!ret)
		ret = commit_xattr_area(sbi, fi, buf, &up, creating);
	free(buf);
	return ret;
}

/*
 * An internal-index xattr (verity's location record, the fscrypt context);
 * inode held exclusively. creating: the inode is being made, so its birth
 * times stay equal.
 */
static int set_indexed(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, unsigned int index,
		       const char *name, const void *value, size_t size, int flags, bool creating)
{
	size_t total = inline_xattr_bytes(fi) + VALID_XATTR_BLOCK_SIZE;
	struct f2fs_xattr_update up;
	uint8_t *buf;
	int ret;

	buf = read_xattr_area_full(sbi, fi, total, &ret);
	if (!buf)
		return ret;
	ret = f2fs_xattr_set_indexed(buf, inline_xattr_bytes(fi), total, index, name, value,
				     size, flags, &up);
	if (!ret)
		ret = commit_xattr_area(sbi, fi, buf, &up, creating);
	free(buf);
	return ret;
}

int f2fs_setxattr_indexed(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			  unsigned int index, const char *name, const void *value, size_t size,
			  int flags)
{
	return set_indexed(sbi, fi, index, name, value, size, flags, false);
}

/* The fscrypt context of a new inode (index 9, "c"), as f2fs_set_context. */
int f2fs_set_crypt_context(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			   const void *ctx, size_t len)
{
	return set_indexed(sbi, fi, F2FS_XATTR_INDEX_ENCRYPTION, "c", ctx, len, XATTR_CREATE,
			   true);
}

/// POSIX ACLs of new inodes and chmod (fs/f2fs/acl.c) ///

#define XATTR_NAME_ACL_ACCESS	"system.posix_acl_access"
#define XATTR_NAME_ACL_DEFAULT	"system.posix_acl_default"

void f2fs_new_acl_free(struct f2fs_new_acl *na)
{
	free(na->access);
	free(na->dflt);
	*na = (struct f2fs_new_acl){ 0 };
}

/* dir's default ACL in VFS format (malloc'd), or NULL with 0 when it has none. */
static int get_default_acl(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			   uint8_t **acl, size_t *acl_len)
{
	uint8_t *buf;
	size_t len;
	ssize_t n;
	int ret;

	*acl = NULL;
	*acl_len = 0;
	ret = f2fs_read_xattr_area(sbi, dir, &buf, &len);
	if (ret)
		return ret;
	n = f2fs_xattr_get(buf, len, XATTR_NAME_ACL_DEFAULT, NULL, 0);
	if (n > 0) {
		*acl = malloc(n);
		n = *acl ? f2fs_xattr_get(buf, len, XATTR_NAME_ACL_DEFAULT, *acl, n) : -ENOMEM;
	}
	free(buf);
	if (n == -ENODATA)
		return 0;
	if (n < 0) {
		free(*acl);
		*acl = NULL;
		if (n == -EIO)
			n = f2fs_error(sbi, EIO, "xattrs of inode %u (xattr node %u): corrupt",
				       dir->ino, dir->xattr_nid);
		return (int)n;
	}
	*acl_len = n;
	return 0;
}

/*
 * f2fs_acl_create: what an inode of *mode created in dir gets. With a
 * default ACL in dir, *mode is masked by it and na holds the access ACL (only
 * when the mode cannot say it all) and, for a directory, the default ACL to
 * inherit; without one, umask applies. Symlinks take neither.
 */
int f2fs_acl_create(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, uint32_t *mode,
		    uint32_t umask, struct f2fs_new_acl *na)
{
	uint8_t *acl;
	size_t len;
	int ret;

	*na = (struct f2fs_new_acl){ 0 };
	if (S_ISLNK(*mode))
		return 0;
	if (sbi->opts.noacl) {
		*mode &= ~(umask & 0777);
		return 0;
	}
	ret = get_default_acl(sbi, dir, &acl, &len);
	if (ret || !acl) {
		*mode &= ~(umask & 0777);
		return ret;
	}
	if (S_ISDIR(*mode)) {
		na->dflt = malloc(len);
		if (!na->dflt) {
			free(acl);
			return -ENOMEM;
		}
		memcpy(na->dflt, acl, len);
		na->dflt_len = len;
	}
	ret = f2fs_acl_create_masq(acl, len, mode);
	if (ret > 0) {
		na->access = acl;
		na->access_len = len;
		return 0;
	}
	free(acl);
	if (ret < 0) {
		f2fs_new_acl_free(na);
		return f2fs_error(sbi, EIO, "default ACL of directory %u: no owner or group entry",
				  dir->ino);
	}
	return 0;
}

/* Store what f2fs_acl_create found on the new inode, before it has a name. */
int f2fs_init_acl(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
		  const struct f2fs_new_acl *na)
{
	int ret = 0;

	if (!na->dflt && !na->access)
		return 0;
	pthread_rwlock_wrlock(&fi->i_rwsem);
	if (na->dflt)
		ret = update_xattr(sbi, fi, XATTR_NAME_ACL_DEFAULT, na->dflt, na->dflt_len, 0,
				   false, true);
	if (!ret && na->access)
		ret = update_xattr(sbi, fi, XATTR_NAME_ACL_ACCESS, na->access, na->access_len, 0,
				   false, true);
	pthread_rwlock_unlock(&fi->i_rwsem);
	return ret;
}

/* posix_acl_chmod after a mode change; the caller holds fi's lock. */
int f2fs_acl_chmod(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	unsigned int inline_size = inline_xattr_bytes(fi);
	size_t total = inline_size + VALID_XATTR_BLOCK_SIZE;
	struct f2fs_xattr_update up;
	uint8_t *buf;
	int ret;

	if (sbi->opts.noacl || S_ISLNK(fi->mode) || (!inline_size && !fi->xattr_nid))
		return 0;
	buf = read_xattr_area_full(sbi, fi, total, &ret);
	if (!buf)
		return ret;
	ret = f2fs_xattr_acl_chmod(buf, inline_size, total, fi->mode, &up);
	if (ret == -EIO)
		ret = f2fs_error(sbi, EIO, "access ACL of inode %u: corrupt", fi->ino);
	if (!ret && up.dirty)
		ret = commit_xattr_area(sbi, fi, buf, &up, true);
	free(buf);
	return ret;
}

static int xattr_op(struct uf2fs *fs, uint32_t ino, const char *name, const void *value,
		    size_t size, int flags, bool remove)
{
	struct f2fs_sb_info *sbi = (struct f2fs_sb_info *)fs;
	struct f2fs_inode_info *fi;
	int ret;

	if (!name || !*name || strlen(name) > 255)
		return -ERANGE;
	ret = f2fs_begin_write(sbi);
	if (ret)
		return ret;
	fi = ino < F2FS_RESERVED_NODE_NUM ? ERR_PTR(-ENOENT) : f2fs_iget(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
	} else {
		pthread_rwlock_wrlock(&fi->i_rwsem);
		ret = (fi->flags & (F2FS_IMMUTABLE_FL | F2FS_APPEND_FL)) ? -EPERM :
			update_xattr(sbi, fi, name, value, size, flags, remove, false);
		pthread_rwlock_unlock(&fi->i_rwsem);
		f2fs_iput(sbi, fi);
	}
	f2fs_end_write(sbi);
	return ret;
}

int uf2fs_setxattr(struct uf2fs *fs, uint32_t ino, const char *name, const void *value,
		   size_t size, int flags)
{
	return F2FS_WITH_ROOM((struct f2fs_sb_info *)fs,
			      xattr_op(fs, ino, name, value, size, flags, false));
}

int uf2fs_removexattr(struct uf2fs *fs, uint32_t ino, const char *name)
{
	return xattr_op(fs, ino, name, NULL, 0, 0, true);
}
