// SPDX-License-Identifier: GPL-2.0
/*
 * Xattr ops: getxattr, listxattr, setxattr and removexattr. The reads follow
 * the xattr(7) size protocol: size 0 asks for the length, answered with
 * fuse_reply_xattr; otherwise the value, or ERANGE when it does not fit.
 *
 * getxattr is on the write path: the kernel asks for security.capability,
 * size 0, before every write(2) (see fuse_write.c). That probe allocates
 * nothing and costs one library lookup.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "fuse_priv.h"

/* The kernel's XATTR_SIZE_MAX: no request asks for more. */
#define FUSE_XATTR_SIZE_MAX	65536

static void fuse_xattr_reply(fuse_req_t req, ssize_t ret, const char *buf, size_t size)
{
	if (ret < 0)
		fuse_op_error(req, ret);
	else if (size == 0)
		fuse_reply_xattr(req, ret);
	else
		fuse_reply_buf(req, buf, ret);
}

void fuse_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	char *buf = NULL;
	ssize_t ret;

	if (size > FUSE_XATTR_SIZE_MAX)
		size = FUSE_XATTR_SIZE_MAX;
	if (size && !(buf = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ret = uf2fs_getxattr(u->fs, fuse_ino_to_f2fs(u, ino), name, buf, size);
	fuse_xattr_reply(req, ret, buf, size);
	free(buf);
}

void fuse_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	char *buf = NULL;
	ssize_t ret;

	if (size > FUSE_XATTR_SIZE_MAX)
		size = FUSE_XATTR_SIZE_MAX;
	if (size && !(buf = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ret = uf2fs_listxattr(u->fs, fuse_ino_to_f2fs(u, ino), buf, size);
	fuse_xattr_reply(req, ret, buf, size);
	free(buf);
}

/* The kernel's XATTR_NAME_MAX; the VFS checks it too, the library's limit is its own. */
#define FUSE_XATTR_NAME_MAX	255

/* Enough for any real group list; a longer one is read whole from the heap. */
#define FUSE_XATTR_GROUPS	64

/*
 * The caller's supplementary groups include gid (libfuse reads /proc for
 * them). Groups that cannot be read match nothing.
 */
static bool fuse_xattr_in_groups(fuse_req_t req, gid_t gid)
{
	gid_t small[FUSE_XATTR_GROUPS], *list = small;
	int cap = FUSE_XATTR_GROUPS, n = fuse_req_getgroups(req, cap, small);
	bool found = false;

	if (n > cap) {
		cap = n;
		list = malloc(cap * sizeof(*list));
		n = list ? fuse_req_getgroups(req, cap, list) : -ENOMEM;
	}
	for (int i = 0; i < n && i < cap; i++)
		found |= list[i] == gid;
	if (list != small)
		free(list);
	return found;
}

/*
 * posix_acl_update_mode drops setgid when whoever sets the access ACL is
 * neither in the file's group nor has CAP_FSETID. The kernel says so with
 * FUSE_SETXATTR_ACL_KILL_SGID only to servers speaking SETXATTR_EXT, which
 * libfuse 3.14 cannot, so the daemon decides: root stands in for
 * CAP_FSETID, as in fuse_write.c.
 */
static int fuse_xattr_acl_flags(fuse_req_t req, struct fuse_uf2fs *u, uint32_t ino,
				const char *name)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct uf2fs_attr attr;

	if (strcmp(name, "system.posix_acl_access") || fuse_caller_is_root(req) ||
	    uf2fs_getattr(u->fs, ino, &attr) < 0 || !(attr.mode & S_ISGID) ||
	    ctx->gid == fuse_idmap_gid_out(attr.gid) ||
	    fuse_xattr_in_groups(req, fuse_idmap_gid_out(attr.gid)))
		return 0;
	return UF2FS_XATTR_KILL_SGID;
}

void fuse_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		      size_t size, int flags)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	uint32_t f2fs_ino = fuse_ino_to_f2fs(u, ino);

	if (fuse_uf2fs_refuse_ro(req, u))
		return;
	if (strlen(name) > FUSE_XATTR_NAME_MAX) {
		fuse_reply_err(req, ERANGE);
		return;
	}
	if (flags & ~(XATTR_CREATE | XATTR_REPLACE)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	flags |= fuse_xattr_acl_flags(req, u, f2fs_ino, name);
	fuse_op_status(req, uf2fs_setxattr(u->fs, f2fs_ino, name, value, size, flags));
}

void fuse_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);

	if (fuse_uf2fs_refuse_ro(req, u))
		return;
	fuse_op_status(req, uf2fs_removexattr(u->fs, fuse_ino_to_f2fs(u, ino), name));
}
