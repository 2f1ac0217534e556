// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's half of `uf2fs umount`: UF2FS_IOC_MOUNT_INFO says which
 * process serves the mount, whether it will write a final checkpoint, the
 * version of the checkpoint on the image now, and which image it is. umount(2)
 * of a /dev/fuse mount returns before the daemon has written anything; with
 * this, the command can wait for that process and then check the image
 * itself (cli/cmd_umount.c).
 */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuse_priv.h"

void fuse_ioctl_mount_info(fuse_req_t req, size_t out_bufsz)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	struct uf2fs_mount_info info = { .version = 1, .pid = getpid() };
	struct stat st;
	bool clean;

	if (out_bufsz < sizeof(info)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (!u->fs || !u->image_abs || strlen(u->image_abs) >= sizeof(info.image)) {
		fuse_reply_err(req, EIO);
		return;
	}
	info.rw = u->mounted_rw;
	info.cp_ver = uf2fs_checkpoint_version(u->fs, &clean);
	strcpy(info.image, u->image_abs);
	if (stat(u->image_abs, &st) == 0) {
		info.image_dev = st.st_dev;
		info.image_ino = st.st_ino;
	}
	fuse_reply_ioctl(req, 0, &info, sizeof(info));
}
