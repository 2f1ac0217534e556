// SPDX-License-Identifier: GPL-2.0
/*
 * ioctls arriving through FUSE_IOCTL, on files and directories alike:
 * FS_IOC_GETFLAGS (lsattr), FS_IOC_GETVERSION, and uf2fs's private
 * UF2FS_IOC_GET_STATS (`uf2fs stats MNT`). The f2fs ioctls that modify the
 * image (SETFLAGS, atomic writes, GC, ...) join here with the write path.
 *
 * A FUSE filesystem only gets "restricted" ioctls: the kernel sizes the
 * output buffer from the size encoded in the command (_IOC_SIZE), so a 32-bit
 * caller (FUSE_IOCTL_COMPAT) sends the FS_IOC32_* encodings, and both widths
 * of each command are handled. Unknown commands answer ENOTTY, as ioctl(2)
 * requires.
 */
#include <linux/fs.h>
#include <stdlib.h>

#include "fuse_priv.h"

/*
 * The flags are an int whatever the command's encoded size says (the long in
 * FS_IOC_GETFLAGS is a historical mistake): chattr and lsattr pass an int, so
 * the reply must be 4 bytes or it overwrites the caller's stack.
 */
static void fuse_ioctl_getflags(fuse_req_t req, uint32_t ino, size_t out_bufsz)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	uint32_t flags;
	int ret;

	if (out_bufsz < sizeof(flags)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	ret = uf2fs_get_flags(u->fs, ino, &flags);
	if (ret < 0)
		fuse_op_error(req, ret);
	else
		fuse_reply_ioctl(req, 0, &flags, sizeof(flags));
}

static void fuse_ioctl_getversion(fuse_req_t req, uint32_t ino, size_t out_bufsz)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	struct uf2fs_attr attr;
	int ret;

	if (out_bufsz < sizeof(attr.generation)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	ret = uf2fs_getattr(u->fs, ino, &attr);
	if (ret < 0)
		fuse_op_error(req, ret);
	else
		fuse_reply_ioctl(req, 0, &attr.generation, sizeof(attr.generation));
}

/* The text, NUL-terminated, in the caller's UF2FS_IOC_STATS_SIZE buffer. */
static void fuse_ioctl_get_stats(fuse_req_t req, size_t out_bufsz)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	size_t len;
	char *buf;

	if (out_bufsz < UF2FS_IOC_STATS_SIZE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	buf = malloc(UF2FS_IOC_STATS_SIZE);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	len = uf2fs_format_stats(u->fs, buf, UF2FS_IOC_STATS_SIZE);
	if (len >= UF2FS_IOC_STATS_SIZE)
		len = UF2FS_IOC_STATS_SIZE - 1;
	buf[len] = '\0';
	fuse_reply_ioctl(req, 0, buf, len + 1);
	free(buf);
}

void fuse_op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		   struct fuse_file_info *fi, unsigned int flags, const void *in_buf,
		   size_t in_bufsz, size_t out_bufsz)
{
	uint32_t f2fs_ino = fuse_ino_to_f2fs(fuse_uf2fs_of(req), ino);

	/* Only CUSE may do unrestricted ioctls; the kernel never sends one here. */
	if (flags & FUSE_IOCTL_UNRESTRICTED) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	switch (cmd) {
	case (unsigned int)FS_IOC_GETFLAGS:
	case (unsigned int)FS_IOC32_GETFLAGS:
		fuse_ioctl_getflags(req, f2fs_ino, out_bufsz);
		break;
	case (unsigned int)FS_IOC_GETVERSION:
	case (unsigned int)FS_IOC32_GETVERSION:
		fuse_ioctl_getversion(req, f2fs_ino, out_bufsz);
		break;
	case (unsigned int)UF2FS_IOC_GET_STATS:
		fuse_ioctl_get_stats(req, out_bufsz);
		break;
	default:
		fuse_reply_err(req, ENOTTY);
		break;
	}
}
