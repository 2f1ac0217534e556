// SPDX-License-Identifier: GPL-2.0
/*
 * ioctls arriving through FUSE_IOCTL, on files and directories alike:
 * FS_IOC_GETFLAGS and FS_IOC_SETFLAGS (lsattr, chattr), their xfs-style
 * twins FS_IOC_FSGETXATTR and FS_IOC_FSSETXATTR, FS_IOC_GETVERSION, and
 * uf2fs's private UF2FS_IOC_GET_STATS (`uf2fs stats MNT`). The other f2fs
 * ioctls that modify the image (atomic writes, GC, ...) are to come.
 *
 * chattr needs FSGETXATTR too: the kernel turns FS_IOC_SETFLAGS into
 * vfs_fileattr_set(), which first reads the old attributes through
 * fuse_fileattr_get() with neither form asked for, and that sends
 * FS_IOC_FSGETXATTR.
 *
 * A FUSE filesystem only gets "restricted" ioctls: the kernel sizes the
 * output buffer from the size encoded in the command (_IOC_SIZE), so a 32-bit
 * caller (FUSE_IOCTL_COMPAT) sends the FS_IOC32_* encodings, and both widths
 * of each command are handled. Unknown commands answer ENOTTY, as ioctl(2)
 * requires.
 */
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>

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

/*
 * Under writeback_cache the kernel keeps a regular file's ctime itself and
 * ignores ours, and its fileattr_set does not touch it: invalidating the
 * attributes is not enough. Its dentry goes instead, so that the inode, which
 * FUSE never keeps unreferenced, is dropped at its last close, and the next
 * lookup reads our ctime. Only after the reply: the caller holds the file's
 * lock, and the kernel takes the parent's before it. Not with a single
 * worker, which would wait for the parent's lock that a request waiting for
 * this very worker may hold. The name is the one the inode records
 * (uf2fs_inode_name); other hard links keep their cached ctime.
 */
static void fuse_ioctl_drop_dentry(struct fuse_uf2fs *u, fuse_ino_t ino)
{
	char name[FUSE_UF2FS_NAME_MAX + 1];
	struct uf2fs_attr attr;
	uint32_t parent;
	fuse_ino_t fparent;
	size_t len;

	if (!u->se || !u->writeback_cache || fuse_rx_lone())
		return;
	if (uf2fs_getattr(u->fs, fuse_ino_to_f2fs(u, ino), &attr) || !S_ISREG(attr.mode))
		return;
	if (uf2fs_inode_name(u->fs, fuse_ino_to_f2fs(u, ino), &parent, name, &len))
		return;
	fparent = fuse_ino_from_f2fs(u, parent);
	if (fparent)
		fuse_uf2fs_inval_entry(u->se, fparent, name, len);
}

/* The kernel does not know the flags changed ctime: it is told. */
static void fuse_ioctl_set_done(fuse_req_t req, struct fuse_uf2fs *u, fuse_ino_t ino, int ret)
{
	if (ret < 0) {
		fuse_op_error(req, ret);
		return;
	}
	fuse_uf2fs_inval_attr(u, ino);
	fuse_reply_ioctl(req, 0, NULL, 0);
	fuse_ioctl_drop_dentry(u, ino);
}

/*
 * The kernel has checked ownership and CAP_LINUX_IMMUTABLE for the
 * immutable and append-only bits (vfs_fileattr_set), and sends the flags as
 * a 4-byte int; which bits f2fs keeps is the library's business.
 */
static void fuse_ioctl_setflags(fuse_req_t req, fuse_ino_t ino, const void *in_buf,
				size_t in_bufsz)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	uint32_t flags;
	int ret;

	if (fuse_uf2fs_refuse_ro(req, u))
		return;
	if (in_bufsz < sizeof(flags)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	memcpy(&flags, in_buf, sizeof(flags));
	ret = uf2fs_set_flags(u->fs, fuse_ino_to_f2fs(u, ino), flags);
	fuse_ioctl_set_done(req, u, ino, ret);
}

static void fuse_ioctl_fsgetxattr(fuse_req_t req, uint32_t ino, size_t out_bufsz)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	struct uf2fs_fsxattr x;
	struct fsxattr fsx = { 0 };
	int ret;

	if (out_bufsz < sizeof(fsx)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	ret = uf2fs_fsgetxattr(u->fs, ino, &x);
	if (ret < 0) {
		fuse_op_error(req, ret);
		return;
	}
	fsx.fsx_xflags = x.xflags;
	fsx.fsx_extsize = x.extsize;
	fsx.fsx_projid = x.projid;
	fsx.fsx_cowextsize = x.cowextsize;
	fuse_reply_ioctl(req, 0, &fsx, sizeof(fsx));
}

static void fuse_ioctl_fssetxattr(fuse_req_t req, fuse_ino_t ino, const void *in_buf,
				  size_t in_bufsz)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	struct fsxattr fsx;
	struct uf2fs_fsxattr x;
	int ret;

	if (fuse_uf2fs_refuse_ro(req, u))
		return;
	if (in_bufsz < sizeof(fsx)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	memcpy(&fsx, in_buf, sizeof(fsx));
	x = (struct uf2fs_fsxattr){ .xflags = fsx.fsx_xflags, .extsize = fsx.fsx_extsize,
				    .projid = fsx.fsx_projid, .cowextsize = fsx.fsx_cowextsize };
	uf2fs_quota_caller(fuse_req_ctx(req)->uid);	/* a project change past a limit */
	ret = uf2fs_fssetxattr(u->fs, fuse_ino_to_f2fs(u, ino), &x);
	fuse_ioctl_set_done(req, u, ino, ret);
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

/*
 * The daemon's own lines of the stats text: how the kernel's page cache
 * meets this mount (defaults depend on other options), and on a casefold
 * image how often its dentries were ended. NUL-terminated in buf.
 */
static size_t fuse_stats_mount(const struct fuse_uf2fs *u, char *buf, size_t size)
{
	const char *mode = !u->mounted_rw ? "read-only" :
			   u->direct_io ? "direct_io" :
			   u->writeback_cache ? "writeback_cache" : "no_writeback_cache";
	int n = snprintf(buf, size, "mount: %s\n", mode);

	if (n >= 0 && (size_t)n < size && u->casefold) {
		int m = snprintf(buf + n, size - n, "casefold: alias lookups %lu, epoch bumps %lu\n",
				 atomic_load(&u->cf_alias_lookups), atomic_load(&u->cf_bumps));

		n = m < 0 ? n : n + m;
	}
	return n < 0 ? 0 : (size_t)n;
}

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
	len = fuse_stats_mount(u, buf, UF2FS_IOC_STATS_SIZE);
	len += fuse_rx_format_stats(buf + len, UF2FS_IOC_STATS_SIZE - len);
	len += uf2fs_format_stats(u->fs, buf + len, UF2FS_IOC_STATS_SIZE - len);
	if (len >= UF2FS_IOC_STATS_SIZE)
		len = UF2FS_IOC_STATS_SIZE - 1;
	buf[len] = '\0';
	fuse_reply_ioctl(req, 0, buf, len + 1);
	free(buf);
}

/// f2fs ioctls (f2fs_io works unchanged) ///

/* The numbers, as include/uapi/linux/f2fs.h defines them. */
#define F2FS_IOCTL_MAGIC		0xf5
#define F2FS_IOC_START_ATOMIC_WRITE	_IO(F2FS_IOCTL_MAGIC, 1)
#define F2FS_IOC_COMMIT_ATOMIC_WRITE	_IO(F2FS_IOCTL_MAGIC, 2)
#define F2FS_IOC_ABORT_ATOMIC_WRITE	_IO(F2FS_IOCTL_MAGIC, 5)
#define F2FS_IOC_GARBAGE_COLLECT	_IOW(F2FS_IOCTL_MAGIC, 6, uint32_t)
#define F2FS_IOC_WRITE_CHECKPOINT	_IO(F2FS_IOCTL_MAGIC, 7)
#define F2FS_IOC_PRECACHE_EXTENTS	_IO(F2FS_IOCTL_MAGIC, 15)
#define F2FS_IOC_GET_COMPRESS_BLOCKS	_IOR(F2FS_IOCTL_MAGIC, 17, uint64_t)
#define F2FS_IOC_SHUTDOWN		_IOR('X', 125, uint32_t)	/* = XFS_IOC_GOINGDOWN */

/*
 * F2FS_IOC_SHUTDOWN is declared _IOR although the caller passes the mode
 * in: a restricted FUSE ioctl only carries input for _IOW, so the mode is
 * not in in_buf. The kernel hands us the caller's pointer, and as root we
 * may read it from the caller's memory (process_vm_readv); when that is not
 * possible we fall back to a full sync, the safest mode.
 */
static unsigned int fuse_ioctl_shutdown_mode(fuse_req_t req, void *arg)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	uint32_t mode = UF2FS_GOING_DOWN_FULLSYNC;
	struct iovec local = { &mode, sizeof(mode) }, remote = { arg, sizeof(mode) };

	if (process_vm_readv(ctx->pid, &local, 1, &remote, 1, 0) != sizeof(mode))
		mode = UF2FS_GOING_DOWN_FULLSYNC;
	return mode;
}

static void fuse_ioctl_reply_status(fuse_req_t req, int ret)
{
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_ioctl(req, 0, NULL, 0);
}

/*
 * Under writeback_cache the kernel holds a file's writes in its own pages and
 * sends them when it likes. An atomic write's boundaries must still fall where
 * the program put them: what it wrote before START reaches the file before
 * staging begins, and what it wrote before COMMIT or ABORT reaches the staged
 * copy before that is committed or dropped. Invalidating the inode's pages
 * makes the kernel write back (launder) each dirty page and wait for it, so
 * every boundary is preceded by one. Other workers serve those WRITEs; a lone
 * worker (-s, or the single-threaded flush loop that follows a SIGTERM) would
 * wait for itself, so atomic writes are refused there.
 */
static int fuse_atomic_drain(struct fuse_uf2fs *u, fuse_ino_t ino)
{
	int ret;

	if (!u->writeback_cache)
		return 0;
	if (!u->se || fuse_rx_lone())	/* -s, or the flush loop after SIGTERM */
		return -EOPNOTSUPP;
	ret = fuse_uf2fs_inval_inode(u->se, ino, 0, 0);
	return ret == -ENOENT ? 0 : ret;
}

static void fuse_ioctl_atomic(fuse_req_t req, fuse_ino_t ino, uint32_t f2fs_ino,
			      enum uf2fs_atomic_op op)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	int ret;

	ret = fuse_atomic_drain(u, ino);
	if (!ret)
		ret = uf2fs_atomic_write(u->fs, f2fs_ino, op);
	/* the kernel's page cache still holds the aborted bytes: drop them */
	if (!ret && op == UF2FS_ATOMIC_ABORT && u->se)
		fuse_uf2fs_inval_inode(u->se, ino, 0, 0);
	fuse_ioctl_reply_status(req, ret);
}

static bool fuse_ioctl_f2fs(fuse_req_t req, fuse_ino_t ino, uint32_t f2fs_ino, unsigned int cmd,
			    void *arg, const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct uf2fs *fs = fuse_uf2fs_of(req)->fs;
	uint32_t sync = 1;

	switch (cmd) {
	case (unsigned int)F2FS_IOC_START_ATOMIC_WRITE:
		fuse_ioctl_atomic(req, ino, f2fs_ino, UF2FS_ATOMIC_START);
		return true;
	case (unsigned int)F2FS_IOC_COMMIT_ATOMIC_WRITE:
		fuse_ioctl_atomic(req, ino, f2fs_ino, UF2FS_ATOMIC_COMMIT);
		return true;
	case (unsigned int)F2FS_IOC_ABORT_ATOMIC_WRITE:
		fuse_ioctl_atomic(req, ino, f2fs_ino, UF2FS_ATOMIC_ABORT);
		return true;
	case (unsigned int)F2FS_IOC_GARBAGE_COLLECT:
		if (in_bufsz >= sizeof(sync))
			memcpy(&sync, in_buf, sizeof(sync));
		fuse_ioctl_reply_status(req, uf2fs_gc(fs, sync != 0));
		return true;
	case (unsigned int)F2FS_IOC_WRITE_CHECKPOINT:
		fuse_ioctl_reply_status(req, uf2fs_sync(fs));
		return true;
	case (unsigned int)F2FS_IOC_PRECACHE_EXTENTS:
		fuse_ioctl_reply_status(req, uf2fs_precache_extents(fs, f2fs_ino));
		return true;
	case (unsigned int)F2FS_IOC_SHUTDOWN:
		fuse_ioctl_reply_status(req, uf2fs_shutdown(fs, fuse_ioctl_shutdown_mode(req, arg)));
		return true;
	case (unsigned int)F2FS_IOC_GET_COMPRESS_BLOCKS: {
		uint64_t blocks = 0;
		int ret = out_bufsz < sizeof(blocks) ? -EINVAL :
			  uf2fs_get_compress_blocks(fs, f2fs_ino, &blocks);

		if (ret < 0)
			fuse_reply_err(req, -ret);
		else
			fuse_reply_ioctl(req, 0, &blocks, sizeof(blocks));
		return true;
	}
	}
	return false;
}

/* `uf2fs quota MNT` and `uf2fs setquota MNT`: the quotactl FUSE lacks. */
static void fuse_ioctl_quota(fuse_req_t req, unsigned int cmd, const void *in_buf,
			     size_t in_bufsz, size_t out_bufsz)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	struct uf2fs_ioc_quota q;
	struct uf2fs_dquot d = { 0 };
	int ret;

	if (in_bufsz < sizeof(q) || (cmd == UF2FS_IOC_GETNEXTQUOTA && out_bufsz < sizeof(q))) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	memcpy(&q, in_buf, sizeof(q));
	if (cmd == UF2FS_IOC_SETQUOTA) {
		uf2fs_quota_caller(fuse_req_ctx(req)->uid);	/* only root sets limits */
		d.bsoft = q.bsoft, d.bhard = q.bhard, d.isoft = q.isoft, d.ihard = q.ihard;
		fuse_ioctl_reply_status(req, uf2fs_quota_set(u->fs, (int)q.type, q.id, &d,
							     q.bgrace, q.igrace, q.flags));
		return;
	}
	/*
	 * uf2fs allocates blocks at writeback, where Linux reserves them at
	 * write: a report (from id 0) writes dirty data back first.
	 */
	if (q.id == 0 && u->mounted_rw) {
		ret = uf2fs_sync(u->fs);
		if (ret < 0) {
			fuse_reply_err(req, -ret);
			return;
		}
	}
	ret = uf2fs_quota_getnext(u->fs, (int)q.type, q.id, &d, &q.bgrace, &q.igrace);
	if (ret < 0 && ret != -ENOENT) {
		fuse_reply_err(req, -ret);
		return;
	}
	q.flags = ret ? 0 : UF2FS_IOC_QUOTA_FOUND;
	q.id = d.id, q.space = d.space, q.inodes = d.inodes;
	q.bsoft = d.bsoft, q.bhard = d.bhard, q.isoft = d.isoft, q.ihard = d.ihard;
	q.btime = d.btime, q.itime = d.itime;
	fuse_reply_ioctl(req, 0, &q, sizeof(q));
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
	case (unsigned int)FS_IOC_SETFLAGS:
	case (unsigned int)FS_IOC32_SETFLAGS:
		fuse_ioctl_setflags(req, ino, in_buf, in_bufsz);
		break;
	case (unsigned int)FS_IOC_FSGETXATTR:
		fuse_ioctl_fsgetxattr(req, f2fs_ino, out_bufsz);
		break;
	case (unsigned int)FS_IOC_FSSETXATTR:
		fuse_ioctl_fssetxattr(req, ino, in_buf, in_bufsz);
		break;
	case (unsigned int)FS_IOC_GETVERSION:
	case (unsigned int)FS_IOC32_GETVERSION:
		fuse_ioctl_getversion(req, f2fs_ino, out_bufsz);
		break;
	case (unsigned int)UF2FS_IOC_GETNEXTQUOTA:
	case (unsigned int)UF2FS_IOC_SETQUOTA:
		fuse_ioctl_quota(req, cmd, in_buf, in_bufsz, out_bufsz);
		break;
	case (unsigned int)UF2FS_IOC_GET_STATS:
		fuse_ioctl_get_stats(req, out_bufsz);
		break;
	case (unsigned int)UF2FS_IOC_MOUNT_INFO:
		fuse_ioctl_mount_info(req, out_bufsz);
		break;
	case (unsigned int)UF2FS_IOC_FSCRYPT:
		fuse_ioctl_fscrypt(req, ino, in_buf, in_bufsz, out_bufsz);
		break;
	default:
		if (!fuse_ioctl_f2fs(req, ino, f2fs_ino, cmd, arg, in_buf, in_bufsz, out_bufsz) &&
		    !fuse_ioctl_verity(req, ino, f2fs_ino, cmd, in_buf, in_bufsz, out_bufsz))
			fuse_reply_err(req, ENOTTY);
		break;
	}
}
