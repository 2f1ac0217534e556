// SPDX-License-Identifier: GPL-2.0
/*
 * Owners for a user who mounts an image made by someone else: -o fakeroot
 * and -o uid=N,gid=N.
 *
 * An image from mkfs.f2fs, a device or an Android build has its files owned
 * by root and others; a read-write mount has the kernel check permissions
 * against those owners (default_permissions), so the user who mounted it
 * cannot write to it.
 *
 * uid=N / gid=N map one image owner to the mounting user (the daemon's uid
 * and gid): files owned by N appear owned by the user, so the kernel grants
 * the user the owner's rights, and what the user creates, or chowns to
 * themself, is stored as N. Other owners show and stay as they are. An image
 * file owned by the mounting user's own uid also shows as theirs.
 *
 * fakeroot (as fuse2fs's: "pretend to be root for permission checks"): the
 * mounting user is root inside the image. The kernel checks no permissions
 * (no default_permissions, no ACL enforcement), chown and chgrp to anyone
 * work, setuid bits survive writes as they would for root, and new files are
 * stored as root's, 0:0 (or N with uid=/gid=), which is what a build of an
 * image as root would have made. Files keep showing their real owners. Since
 * FUSE lets only the mounting user into the mount, nobody else gains
 * anything; with allow_other everyone would be root, so that is refused.
 *
 * The map is per process (one daemon serves one mount), set once before the
 * session starts.
 */
#include <unistd.h>

#include "fuse_priv.h"

static struct {
	bool fakeroot;
	bool map_uid, map_gid;
	uint32_t img_uid, img_gid;	/* the image's ids that are the mounting user's */
	uint32_t host_uid, host_gid;	/* the mounting user */
} idmap;

void fuse_idmap_init(bool fakeroot, long img_uid, long img_gid)
{
	idmap.fakeroot = fakeroot;
	idmap.map_uid = img_uid >= 0;
	idmap.map_gid = img_gid >= 0;
	idmap.img_uid = img_uid;
	idmap.img_gid = img_gid;
	idmap.host_uid = getuid();
	idmap.host_gid = getgid();
}

bool fuse_idmap_fakeroot(void)
{
	return idmap.fakeroot;
}

/* An image owner as the kernel should see it. */
uint32_t fuse_idmap_uid_out(uint32_t uid)
{
	return idmap.map_uid && uid == idmap.img_uid ? idmap.host_uid : uid;
}

uint32_t fuse_idmap_gid_out(uint32_t gid)
{
	return idmap.map_gid && gid == idmap.img_gid ? idmap.host_gid : gid;
}

/* An owner from the kernel (a caller's id, a chown) as the image stores it. */
uint32_t fuse_idmap_uid_in(uint32_t uid)
{
	return idmap.map_uid && uid == idmap.host_uid ? idmap.img_uid : uid;
}

uint32_t fuse_idmap_gid_in(uint32_t gid)
{
	return idmap.map_gid && gid == idmap.host_gid ? idmap.img_gid : gid;
}

/* The owner of a new inode: the caller's, mapped; root's under fakeroot. */
uint32_t fuse_idmap_new_uid(uint32_t caller)
{
	if (idmap.fakeroot && !(idmap.map_uid && caller == idmap.host_uid))
		return 0;
	return fuse_idmap_uid_in(caller);
}

uint32_t fuse_idmap_new_gid(uint32_t caller)
{
	if (idmap.fakeroot && !(idmap.map_gid && caller == idmap.host_gid))
		return 0;
	return fuse_idmap_gid_in(caller);
}

/* The caller counts as root (CAP_FSETID and the like): uid 0, or fakeroot. */
bool fuse_caller_is_root(fuse_req_t req)
{
	return idmap.fakeroot || fuse_req_ctx(req)->uid == 0;
}
