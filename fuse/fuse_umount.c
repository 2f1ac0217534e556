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

/* An option's value into a field of the reply; false when it does not fit. */
static bool mount_info_opt(char *field, size_t size, const char *val)
{
	if (!val)
		return true;
	if (strlen(val) >= size)
		return false;
	strcpy(field, val);
	return true;
}

/* What opening the image again takes besides its name: a VM disk, a partition, TLS. */
static bool mount_info_opts(struct uf2fs_mount_info *info, const struct uf2fs_options *o)
{
	return mount_info_opt(info->format, sizeof(info->format), o->image_format) &&
	       mount_info_opt(info->partition, sizeof(info->partition), o->partition) &&
	       mount_info_opt(info->tls_certificates, sizeof(info->tls_certificates),
			      o->tls_certificates) &&
	       mount_info_opt(info->tls_psk_file, sizeof(info->tls_psk_file), o->tls_psk_file) &&
	       mount_info_opt(info->tls_username, sizeof(info->tls_username), o->tls_username);
}

void fuse_ioctl_mount_info(fuse_req_t req, size_t out_bufsz)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	struct uf2fs_mount_info info = { .version = 2, .pid = getpid() };
	struct stat st;
	bool clean;

	if (out_bufsz < sizeof(info)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (!u->fs || !u->image_abs || strlen(u->image_abs) >= sizeof(info.image) ||
	    !mount_info_opts(&info, u->lib_opts)) {
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
