// SPDX-License-Identifier: GPL-2.0
/*
 * Ops that change a file's data or attributes, or make them durable:
 * setattr, write, fallocate, copy_file_range, flush, fsync and fsyncdir.
 * Each is a translation to the library's file.c calls, plus the one piece of
 * VFS policy the kernel leaves to us under direct_io: dropping setuid,
 * setgid and file capabilities on write (see fuse_write_kill_priv).
 *
 * Durability is the library's: a write is in its cache when we reply, fsync
 * makes one file durable, and the final checkpoint at unmount makes all of
 * it durable (fuse_uf2fs_shutdown).
 */
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuse_priv.h"

/* Larger requests are split: the reply's byte count is 32 bits. */
#define FUSE_COPY_MAX		(1u << 30)
/* The step of copy_file_range: a whole large folio's worth, like cat. */
#define FUSE_COPY_CHUNK		(1u << 20)
#define FUSE_XATTR_CAPS		"security.capability"

static const struct {
	int fuse;
	unsigned int uf2fs;
} fuse_setattr_bits[] = {
	{ FUSE_SET_ATTR_MODE,		UF2FS_SET_MODE },
	{ FUSE_SET_ATTR_UID,		UF2FS_SET_UID },
	{ FUSE_SET_ATTR_GID,		UF2FS_SET_GID },
	{ FUSE_SET_ATTR_SIZE,		UF2FS_SET_SIZE },
	{ FUSE_SET_ATTR_ATIME,		UF2FS_SET_ATIME },
	{ FUSE_SET_ATTR_MTIME,		UF2FS_SET_MTIME },
	{ FUSE_SET_ATTR_ATIME_NOW,	UF2FS_SET_ATIME_NOW },
	{ FUSE_SET_ATTR_MTIME_NOW,	UF2FS_SET_MTIME_NOW },
	{ FUSE_SET_ATTR_CTIME,		UF2FS_SET_CTIME },
};

/*
 * FUSE_SET_ATTR_* to UF2FS_SET_*. The kernel sends ATIME with ATIME_NOW (and
 * MTIME with MTIME_NOW) for "now", so _NOW wins. A size change without an
 * mtime is open(O_TRUNC) or ftruncate(2), where the kernel expects the
 * filesystem to stamp mtime itself (fuse_do_setattr's update_mtime()).
 * KILL_SUID (FATTR_KILL_SUIDGID) comes only with HANDLE_KILLPRIV_V2, on a
 * truncate by a caller without CAP_FSETID; fuse_op_setattr turns it into
 * UF2FS_SET_KILL_SUIDGID.
 */
static unsigned int fuse_setattr_valid(int to_set)
{
	unsigned int valid = 0;
	size_t i;

	for (i = 0; i < sizeof(fuse_setattr_bits) / sizeof(fuse_setattr_bits[0]); i++)
		if (to_set & fuse_setattr_bits[i].fuse)
			valid |= fuse_setattr_bits[i].uf2fs;
	if (valid & UF2FS_SET_ATIME_NOW)
		valid &= ~UF2FS_SET_ATIME;
	if (valid & UF2FS_SET_MTIME_NOW)
		valid &= ~UF2FS_SET_MTIME;
	if ((valid & UF2FS_SET_SIZE) && !(valid & (UF2FS_SET_MTIME | UF2FS_SET_MTIME_NOW)))
		valid |= UF2FS_SET_MTIME_NOW;
	return valid;
}

static void fuse_setattr_fill(const struct stat *st, struct uf2fs_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->mode = st->st_mode;
	attr->uid = fuse_idmap_uid_in(st->st_uid);
	attr->gid = fuse_idmap_gid_in(st->st_gid);
	attr->size = st->st_size;
	attr->atime = st->st_atim;
	attr->mtime = st->st_mtim;
	attr->ctime = st->st_ctim;
}

void fuse_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		     struct fuse_file_info *fi)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	uint32_t f2fs_ino = fuse_ino_to_f2fs(u, ino);
	struct uf2fs_attr in, out;
	unsigned int valid;
	struct stat st;
	int ret;

	if (fuse_uf2fs_refuse_ro(req, u))
		return;
	valid = fuse_setattr_valid(to_set);
	/* an older ctime than a chattr's is raised by the library (UF2FS_SET_CTIME) */
	fuse_setattr_fill(attr, &in);
	/* truncate without CAP_FSETID; and, under V2, every chown (chown_common) */
	if (((to_set & FUSE_SET_ATTR_KILL_SUID) && !fuse_idmap_fakeroot()) ||
	    (u->killpriv_v2 && (valid & (UF2FS_SET_UID | UF2FS_SET_GID))))
		valid |= UF2FS_SET_KILL_SUIDGID;
	uf2fs_quota_caller(fuse_req_ctx(req)->uid);	/* chgrp past a group's limit */
	/*
	 * Under writeback_cache the kernel keeps mtime and ctime itself: "now"
	 * comes as a value (iattr_to_fattr), and the times are written back
	 * even after the unlink that freed the inode (see UF2FS_SET_*).
	 */
	if (valid && u->writeback_cache)
		valid |= UF2FS_SET_MTIME_CACHED;
	/* Nothing we know to change (only FORCE or KILL bits): just the attributes. */
	if (valid)
		ret = uf2fs_setattr(u->fs, f2fs_ino, &in, valid | UF2FS_SET_FREED_OK, &out);
	else
		ret = uf2fs_getattr(u->fs, f2fs_ino, &out);
	if (ret < 0) {
		fuse_op_error(req, ret);
		return;
	}
	fuse_uf2fs_stat(&out, &st);
	/* a freed inode's (nlink 0) is not worth caching */
	fuse_reply_attr(req, &st, out.nlink ? u->timeout : 0);
}

/*
 * security.capability and the per-write GETXATTR
 *
 * On every write(2) through the page cache the kernel runs
 * file_remove_privs() (fuse_cache_write_iter, generic_file_write_iter under
 * writeback_cache, file_modified() for copy_file_range and fallocate). It
 * skips the check only for inodes marked S_NOSEC, which needs SB_NOSEC on the
 * superblock, which FUSE sets only when the server takes
 * HANDLE_KILLPRIV_V2. Without it, cap_inode_need_killpriv() asks for
 * security.capability with one FUSE_GETXATTR per write(2) call.
 *
 * So uf2fs takes HANDLE_KILLPRIV_V2 (fuse_killpriv.c; -o nokillpriv_v2 turns
 * it off) and clears setuid/setgid itself where the kernel says so: WRITE and
 * OPEN(O_TRUNC) carrying the kill flag, SETATTR with KILL_SUID (truncate), and
 * chown of a non-directory. The kernel decides the flags from the caller's
 * CAP_FSETID. Capabilities stay with the VFS (notify_change ATTR_KILL_PRIV
 * removes the xattr with a REMOVEXATTR), except under direct_io, where
 * fuse_direct_write_iter() never calls file_remove_privs(): there the daemon
 * drops security.capability on every write, and the kernel flags every WRITE
 * by a caller without CAP_FSETID, with or without V2.
 */
/* The caller is a member of group gid (fuse_req_getgroups reads /proc). */
static bool fuse_caller_in_group(fuse_req_t req, uint32_t gid)
{
	gid_t groups[64];
	int n;

	gid = fuse_idmap_gid_out(gid);	/* the image's group as the caller sees it */
	if (fuse_req_ctx(req)->gid == gid)
		return true;
	n = fuse_req_getgroups(req, 64, groups);
	for (int i = 0; i < n && i < 64; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/*
 * setuid always; setgid when group-executable, or else when the caller is
 * outside the file's group (setattr_should_drop_sgid, Linux 6.2 on).
 */
int fuse_kill_suidgid(fuse_req_t req, struct fuse_uf2fs *u, fuse_ino_t ino)
{
	uint32_t f2fs_ino = fuse_ino_to_f2fs(u, ino);
	struct uf2fs_attr attr, out;
	unsigned int valid = UF2FS_SET_KILL_SUIDGID;
	int ret = uf2fs_getattr(u->fs, f2fs_ino, &attr);

	if (ret < 0)
		return ret;
	if ((attr.mode & S_ISGID) && !(attr.mode & S_IXGRP) && !fuse_caller_in_group(req, attr.gid))
		valid |= UF2FS_SET_KILL_SGID;
	if (!(attr.mode & (S_ISUID | ((valid & UF2FS_SET_KILL_SGID) || (attr.mode & S_IXGRP) ?
				      S_ISGID : 0))))
		return 0;
	ret = uf2fs_setattr(u->fs, f2fs_ino, &attr, valid, &out);
	/* the kernel caches the mode */
	if (ret == 0)
		fuse_uf2fs_inval_attr(u, ino);
	return ret;
}

/*
 * fallocate and copy_file_range reach file_modified() in the kernel, whose
 * ATTR_KILL_SUID fuse_setattr drops under V2 without a SETATTR or a request
 * flag: V2 names only write, truncate and chown. The daemon keeps the VFS
 * rule with root standing in for CAP_FSETID.
 */
static int fuse_kill_unflagged(fuse_req_t req, struct fuse_uf2fs *u, fuse_ino_t ino)
{
	if (!u->killpriv_v2 || fuse_caller_is_root(req))
		return 0;
	return fuse_kill_suidgid(req, u, ino);
}

static int fuse_write_kill_caps(struct fuse_uf2fs *u, fuse_ino_t ino)
{
	uint32_t f2fs_ino = fuse_ino_to_f2fs(u, ino);
	int ret;

	if (uf2fs_getxattr(u->fs, f2fs_ino, FUSE_XATTR_CAPS, NULL, 0) < 0)
		return 0;
	ret = uf2fs_removexattr(u->fs, f2fs_ino, FUSE_XATTR_CAPS);
	if (ret == 0)
		fuse_uf2fs_inval_attr(u, ino);
	return ret == -ENODATA ? 0 : ret;
}

/*
 * An O_DIRECT write: the kernel drops the file's cached pages in the range
 * before it sends the WRITE, and after it only for a synchronous write (an
 * AIO one completes in FUSE without that step). A buffered reader that
 * fetched the range in between keeps the old data cached for good
 * (xfstests generic/451). So the range is dropped here, after the data is
 * in and before the reply: a page being read meanwhile is locked, and the
 * invalidation waits for it and then drops it. Only for an inode whose
 * pages a READ has filled: the notification also ends the kernel's cached
 * attributes, so the next write asks for them again, which halved O_DIRECT
 * write rates when done for every write. A READ notes its inode before it
 * reads, so one that read the old data is seen here. A mount without kept
 * pages (direct_io) has nothing to drop. Not covered: a mapping of a
 * handle opened with O_DIRECT, whose page faults read through that handle.
 */
static void fuse_write_direct_done(struct fuse_uf2fs *u, fuse_ino_t ino,
				   const struct fuse_file_info *fi, off_t off, ssize_t n)
{
	if (!(fi->fh & FUSE_FH_O_DIRECT) || fi->writepage || u->direct_io || !u->se ||
	    !fuse_page_read_seen(u, ino))
		return;
	fuse_uf2fs_inval_inode(u->se, ino, off, n);
}

void fuse_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	uint32_t f2fs_ino = fuse_ino_to_f2fs(u, ino);
	ssize_t n = 0;

	if (fuse_uf2fs_refuse_ro(req, u))
		return;
	if (fuse_direct_on_atomic(u, ino, fi)) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	/* As the VFS does, before the data: a write that cannot drop them fails. */
	if (u->direct_io && !fi->writepage)
		n = fuse_write_kill_caps(u, ino);
	/* the kernel flags callers without CAP_FSETID; a fakeroot caller has it */
	if (n == 0 && fuse_killpriv_request_flag() && !fuse_idmap_fakeroot())
		n = fuse_kill_suidgid(req, u, ino);
	uf2fs_quota_caller(fuse_req_ctx(req)->uid);	/* limits: root ignores them */
	/*
	 * The kernel's page writeback under writeback_cache: the kernel keeps
	 * mtime and ctime and writes them back with a SETATTR, which another
	 * thread may handle before this WRITE (a slow one: a compressed
	 * cluster); stamped here, they would end later than the kernel showed.
	 */
	if (n == 0)
		n = uf2fs_write_flags(u->fs, f2fs_ino, buf, size, off,
				      u->writeback_cache && fi->writepage ?
				      UF2FS_WRITE_KEEP_TIMES : 0);
	if (n > 0)
		fuse_write_direct_done(u, ino, fi, off, n);
	if (n < 0)
		fuse_op_error(req, n);
	else
		fuse_reply_write(req, n);
}

/*
 * The kernel passes on only KEEP_SIZE, PUNCH_HOLE and ZERO_RANGE
 * (fuse_file_fallocate answers EOPNOTSUPP to COLLAPSE_RANGE and
 * INSERT_RANGE itself, as of Linux 6.18, so those reach only library
 * users); which combinations work is the library's to say.
 */
void fuse_op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
		       struct fuse_file_info *fi)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	int ret;

	if (fuse_uf2fs_refuse_ro(req, u))
		return;
	if (offset < 0 || length <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	ret = fuse_kill_unflagged(req, u, ino);
	uf2fs_quota_caller(fuse_req_ctx(req)->uid);
	if (ret == 0)
		ret = uf2fs_fallocate(u->fs, fuse_ino_to_f2fs(u, ino), mode, offset, length);
	/*
	 * A failure may keep what it reserved, size included (ENOSPC part way,
	 * as f2fs), but the kernel refreshes its cached attributes only on
	 * success: drop them, so the next stat asks us.
	 */
	if (ret < 0 && u->se)
		fuse_uf2fs_inval_inode(u->se, ino, -1, 0);
	fuse_op_status(req, ret);
}

/*
 * Read and write in 1 MiB steps inside the daemon: the data never crosses
 * into the kernel, and each step is one large folio for the library. A
 * short count (EOF, or an error after some progress) is a valid answer;
 * the caller loops.
 */
static ssize_t fuse_copy(struct fuse_uf2fs *u, uint32_t in, uint64_t off_in, uint32_t out,
			 uint64_t off_out, size_t len)
{
	char *buf = fuse_uf2fs_buf(FUSE_COPY_CHUNK);
	size_t done = 0;
	ssize_t n = 0, w;

	if (!buf)
		return -ENOMEM;
	while (done < len) {
		n = uf2fs_read(u->fs, in, buf, len - done < FUSE_COPY_CHUNK ?
			       len - done : FUSE_COPY_CHUNK, off_in + done);
		if (n <= 0)
			break;
		w = uf2fs_write(u->fs, out, buf, n, off_out + done);
		if (w < 0) {
			n = w;
			break;
		}
		done += w;
		if (w < n)
			break;
	}
	return done ? (ssize_t)done : n;
}

void fuse_op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			     struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			     struct fuse_file_info *fi_out, size_t len, int flags)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	ssize_t n;

	if (fuse_uf2fs_refuse_ro(req, u))
		return;
	if (flags != 0 || off_in < 0 || off_out < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	uf2fs_quota_caller(fuse_req_ctx(req)->uid);
	n = fuse_kill_unflagged(req, u, ino_out);
	if (n == 0)
		n = fuse_copy(u, fuse_ino_to_f2fs(u, ino_in), off_in, fuse_ino_to_f2fs(u, ino_out),
			      off_out, len < FUSE_COPY_MAX ? len : FUSE_COPY_MAX);
	if (n < 0)
		fuse_op_error(req, n);
	else
		fuse_reply_write(req, n);
}

/*
 * Only sent under writeback_cache (fuse_uf2fs_file_setup sets noflush, which
 * the kernel ignores there), after the kernel has written the file's dirty
 * pages and waited for them: nothing is left for us to do. ENOSYS makes the
 * kernel set no_flush for the connection and stop sending FLUSH, one round
 * trip less per close(2) (untar: one per file). The kernel's fuse_flush
 * still writes the dirty pages back before it looks at no_flush, and
 * reports their errors to close(2) (older kernels left that to release,
 * which writes them back under writeback_cache as well).
 */
void fuse_op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, ENOSYS);
}

/* A read-only mount has nothing to make durable; fsync(2) succeeds there. */
static void fuse_do_fsync(fuse_req_t req, fuse_ino_t ino, int datasync)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);

	if (uf2fs_is_read_only(u->fs)) {
		fuse_reply_err(req, 0);
		return;
	}
	fuse_op_status(req, uf2fs_fsync(u->fs, fuse_ino_to_f2fs(u, ino), datasync != 0));
}

void fuse_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	fuse_do_fsync(req, ino, datasync);
}

void fuse_op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
		      struct fuse_file_info *fi)
{
	fuse_do_fsync(req, ino, datasync);
}
