// SPDX-License-Identifier: GPL-2.0
/*
 * Every op that would modify the image. Until the write path lands they all
 * answer EROFS; each becomes a translation to the library's namei.c, file.c
 * and xattr.c calls, as the read ops are. The mount also carries the kernel's
 * "ro" flag, so the VFS normally refuses first; these answer whatever gets
 * through (a mount without it, or ops the VFS does not gate).
 */
#include "fuse_priv.h"

void fuse_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		     struct fuse_file_info *fi)
{
	fuse_reply_err(req, EROFS);
}

void fuse_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		   dev_t rdev)
{
	fuse_reply_err(req, EROFS);
}

void fuse_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	fuse_reply_err(req, EROFS);
}

void fuse_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EROFS);
}

void fuse_op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EROFS);
}

void fuse_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EROFS);
}

void fuse_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		    fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	fuse_reply_err(req, EROFS);
}

void fuse_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	fuse_reply_err(req, EROFS);
}

void fuse_op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		    struct fuse_file_info *fi)
{
	fuse_reply_err(req, EROFS);
}

void fuse_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	fuse_reply_err(req, EROFS);
}

void fuse_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		      size_t size, int flags)
{
	fuse_reply_err(req, EROFS);
}

void fuse_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	fuse_reply_err(req, EROFS);
}

void fuse_op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
		       struct fuse_file_info *fi)
{
	fuse_reply_err(req, EROFS);
}
