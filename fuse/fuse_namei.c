// SPDX-License-Identifier: GPL-2.0
/*
 * Namespace ops that change the image: create, mknod, mkdir, symlink, link,
 * unlink, rmdir and rename. Each is a translation to the library's namei
 * calls; the library keeps nlink, ctime, mtime, setgid inheritance, and the
 * umask and default ACL inheritance of new inodes (fuse_namei_args).
 *
 * Permission bits and sticky directories are the kernel's (rw mounts always
 * carry default_permissions); the caller's uid and gid come from the request
 * context. A new name is answered with the same entry and attribute
 * timeouts as a lookup: we are the only writer, so nothing the kernel caches
 * can go stale behind it (in a casefolded directory only while unlink, rmdir
 * and rename there end the kernel's dentries: see fuse_uf2fs_casefolded).
 */
#include <fcntl.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/stat.h>

#include "fuse_priv.h"

int fuse_uf2fs_name_len(const char *name, size_t *len)
{
	*len = strlen(name);
	return *len > FUSE_UF2FS_NAME_MAX ? -ENAMETOOLONG : 0;
}

/*
 * The checks every op on a name in a directory starts with. Returns false
 * after replying when the op cannot go on.
 */
static bool fuse_namei_begin(fuse_req_t req, struct fuse_uf2fs *u, const char *name,
			     size_t *len)
{
	int ret = fuse_uf2fs_name_len(name, len);

	if (ret < 0) {
		fuse_op_error(req, ret);
		return false;
	}
	return !fuse_uf2fs_refuse_ro(req, u);
}

/* Reply to a creation: the new inode's entry, or the error that stopped it. */
static void fuse_namei_reply_entry(fuse_req_t req, struct fuse_uf2fs *u, int ret, uint32_t ino,
				   fuse_ino_t parent)
{
	struct fuse_entry_param e;

	if (ret == 0)
		ret = fuse_uf2fs_entry(u, ino, &e);
	if (ret == 0 && fuse_uf2fs_cf_uncached(u, fuse_ino_to_f2fs(u, parent)))
		e.entry_timeout = 0;
	if (ret < 0)
		fuse_op_error(req, ret);
	else
		fuse_reply_entry(req, &e);
}

/*
 * The creation arguments from the request: the caller's ids and umask. The
 * kernel applies the umask itself unless DONT_MASK was negotiated (with
 * POSIX_ACL); the library applies it when the parent has no default ACL,
 * which is the same mask again in the first case.
 */
static struct uf2fs_create_args fuse_namei_args(fuse_req_t req, mode_t mode)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	return (struct uf2fs_create_args){
		.mode = mode, .uid = fuse_idmap_new_uid(ctx->uid),
		.gid = fuse_idmap_new_gid(ctx->gid), .umask = ctx->umask & 0777,
	};
}

void fuse_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		   dev_t rdev)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	struct uf2fs_create_args a = fuse_namei_args(req, mode);
	uint32_t ino = 0;
	size_t len;
	int ret;

	if (!fuse_namei_begin(req, u, name, &len))
		return;
	/* S_IFDIR and S_IFLNK come as their own requests */
	if (S_ISDIR(mode) || S_ISLNK(mode)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	a.rdev = rdev;
	ret = uf2fs_create(u->fs, fuse_ino_to_f2fs(u, parent), name, len, &a, &ino);
	fuse_namei_reply_entry(req, u, ret, ino, parent);
}

void fuse_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	struct uf2fs_create_args a = fuse_namei_args(req, S_IFDIR | (mode & 07777));
	uint32_t ino = 0;
	size_t len;
	int ret;

	if (!fuse_namei_begin(req, u, name, &len))
		return;
	ret = uf2fs_create(u->fs, fuse_ino_to_f2fs(u, parent), name, len, &a, &ino);
	fuse_namei_reply_entry(req, u, ret, ino, parent);
}

void fuse_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	struct uf2fs_create_args a = fuse_namei_args(req, S_IFLNK | 0777);
	uint32_t ino = 0;
	size_t len;
	int ret;

	if (!fuse_namei_begin(req, u, name, &len))
		return;
	/* The kernel stops targets at PATH_MAX; one f2fs block holds less. */
	if (strlen(link) >= FUSE_UF2FS_SYMLINK_MAX) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	a.target = link;
	ret = uf2fs_create(u->fs, fuse_ino_to_f2fs(u, parent), name, len, &a, &ino);
	fuse_namei_reply_entry(req, u, ret, ino, parent);
}

void fuse_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	uint32_t f2fs_ino = fuse_ino_to_f2fs(u, ino);
	size_t len;
	int ret;

	if (!fuse_namei_begin(req, u, newname, &len))
		return;
	ret = uf2fs_link(u->fs, f2fs_ino, fuse_ino_to_f2fs(u, newparent), newname, len);
	fuse_namei_reply_entry(req, u, ret, f2fs_ino, newparent);
}

void fuse_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	size_t len;

	uint32_t dir = fuse_ino_to_f2fs(u, parent);
	int ret;

	if (!fuse_namei_begin(req, u, name, &len))
		return;
	ret = uf2fs_unlink(u->fs, dir, name, len);
	if (ret == 0 && u->casefold)
		fuse_uf2fs_cf_changed(u, dir, dir);
	fuse_op_status(req, ret);
}

void fuse_op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	size_t len;

	uint32_t dir = fuse_ino_to_f2fs(u, parent);
	int ret;

	if (!fuse_namei_begin(req, u, name, &len))
		return;
	ret = uf2fs_rmdir(u->fs, dir, name, len);
	if (ret == 0 && u->casefold)
		fuse_uf2fs_cf_changed(u, dir, dir);
	fuse_op_status(req, ret);
}

/*
 * renameat2(2) flags: NOREPLACE and EXCHANGE, one at a time. WHITEOUT is for
 * overlayfs upper layers, which would need whiteout device nodes; the
 * kernel's own f2fs has it, but nothing asks a FUSE mount for it.
 */
void fuse_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		    fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	size_t len, newlen;
	int ret;

	if (flags != 0 && flags != RENAME_NOREPLACE && flags != RENAME_EXCHANGE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (!fuse_namei_begin(req, u, name, &len))
		return;
	ret = fuse_uf2fs_name_len(newname, &newlen);
	if (ret == 0)
		ret = uf2fs_rename(u->fs, fuse_ino_to_f2fs(u, parent), name, len,
				   fuse_ino_to_f2fs(u, newparent), newname, newlen, flags);
	if (ret == 0 && u->casefold)
		fuse_uf2fs_cf_changed(u, fuse_ino_to_f2fs(u, parent),
				      fuse_ino_to_f2fs(u, newparent));
	fuse_op_status(req, ret);
}

/*
 * The kernel sends CREATE only after a lookup missed, under the directory's
 * lock, and we are the only writer: so EEXIST means a real conflict, and
 * O_EXCL needs nothing more. A new file is empty, so O_TRUNC is moot too.
 */
void fuse_op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		    struct fuse_file_info *fi)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	struct uf2fs_create_args a = fuse_namei_args(req, (mode & S_IFMT) ? mode :
						     S_IFREG | mode);
	struct fuse_entry_param e;
	uint32_t ino = 0;
	size_t len;
	int ret;

	if (!fuse_namei_begin(req, u, name, &len))
		return;
	if (!S_ISREG(a.mode)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	ret = uf2fs_create(u->fs, fuse_ino_to_f2fs(u, parent), name, len, &a, &ino);
	if (ret == 0)
		ret = fuse_uf2fs_entry(u, ino, &e);
	if (ret == 0 && fuse_uf2fs_cf_uncached(u, fuse_ino_to_f2fs(u, parent)))
		e.entry_timeout = 0;
	if (ret == 0)
		ret = uf2fs_open(u->fs, ino, fi->flags);
	if (ret < 0) {
		fuse_op_error(req, ret);
		return;
	}
	fuse_uf2fs_file_setup(u, fi);
	/* Interrupted: the kernel forgets the entry and sends no release. */
	if (fuse_reply_create(req, &e, fi) == -ENOENT)
		uf2fs_release(u->fs, ino, fi->flags);
}
