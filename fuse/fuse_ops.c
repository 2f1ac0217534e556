// SPDX-License-Identifier: GPL-2.0
/*
 * The lowlevel ops table, the connection's life (init, and destroy with the
 * final checkpoint), and the namespace and attribute ops: lookup, forget,
 * getattr, readlink, statfs. Every handler is a translation: FUSE node ids
 * to f2fs inos, a library call, library attributes to struct stat, negative
 * errnos to replies. No f2fs logic lives here.
 */
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuse_priv.h"

const struct fuse_lowlevel_ops fuse_uf2fs_ops = {
	.init		= fuse_op_init,
	.destroy	= fuse_op_destroy,
	.lookup		= fuse_op_lookup,
	.forget		= fuse_op_forget,
	.forget_multi	= fuse_op_forget_multi,
	.getattr	= fuse_op_getattr,
	.readlink	= fuse_op_readlink,
	.statfs		= fuse_op_statfs,
	.opendir	= fuse_op_opendir,
	.readdir	= fuse_op_readdir,
	.readdirplus	= fuse_op_readdirplus,
	.releasedir	= fuse_op_releasedir,
	.open		= fuse_op_open,
	.read		= fuse_op_read,
	.release	= fuse_op_release,
	.getxattr	= fuse_op_getxattr,
	.listxattr	= fuse_op_listxattr,
	.ioctl		= fuse_op_ioctl,
	/* the write path; each answers EROFS on a read-only mount */
	.mknod		= fuse_op_mknod,
	.mkdir		= fuse_op_mkdir,
	.unlink		= fuse_op_unlink,
	.rmdir		= fuse_op_rmdir,
	.symlink	= fuse_op_symlink,
	.rename		= fuse_op_rename,
	.link		= fuse_op_link,
	.create		= fuse_op_create,
	.setattr	= fuse_op_setattr,
	.write		= fuse_op_write,
	.fallocate	= fuse_op_fallocate,
	.copy_file_range = fuse_op_copy_file_range,
	.flush		= fuse_op_flush,
	.fsync		= fuse_op_fsync,
	.fsyncdir	= fuse_op_fsyncdir,
	.setxattr	= fuse_op_setxattr,
	.removexattr	= fuse_op_removexattr,
};

static void fuse_want(struct fuse_conn_info *conn, unsigned int cap)
{
	if (conn->capable & cap)
		conn->want |= cap;
}

/*
 * Capabilities, each because:
 * - ASYNC_READ: the kernel may have several reads (readahead included) of one
 *   file in flight; the library is thread-safe, and batching needs them.
 * - READDIRPLUS(_AUTO): `ls -l` and `find` get attributes with the names, in
 *   one request per buffer instead of a LOOKUP per entry; AUTO lets the kernel
 *   fall back to plain READDIR when nobody stats the entries.
 * - PARALLEL_DIROPS: lookups and readdirs in one directory need not serialise
 *   on the kernel's directory lock; the library locks what it must itself.
 * - IOCTL_DIR: `uf2fs stats MNT` and lsattr -d ioctl a directory.
 * - CACHE_SYMLINKS: targets never change under us, so the page cache keeps
 *   them, except under direct_io where uf2fs's cache is the one measured.
 * - ATOMIC_O_TRUNC: open(O_TRUNC) is one OPEN instead of SETATTR and OPEN.
 * - EXPORT_SUPPORT: open_by_handle_at(2) and NFS export. A handle is the node
 *   id (the f2fs ino, stable across mounts) and i_generation; for an inode it
 *   has forgotten the kernel looks up "." in that node id, and ".." for a
 *   directory's parent (fuse_op_lookup).
 * - POSIX_ACL with DONT_MASK, unless -o noacl (and only where the kernel
 *   checks permissions, see want_acl): the kernel enforces ACLs, fetching
 *   them with GETXATTR and caching them per inode; everything else is ours.
 *   The library inherits the parent's default ACL on create, applies the
 *   umask the kernel no longer applies when there is none (DONT_MASK, so
 *   that a default ACL is not masked by the umask as well), keeps the mode in
 *   step when an access ACL is set, and the ACL in step on chmod, as Linux
 *   f2fs does: the kernel's FUSE code does none of these.
 * - WRITEBACK_CACHE, on a read-write mount unless -o no_writeback_cache or
 *   direct_io: the kernel keeps dirty pages and sends them in large WRITEs,
 *   and trusts its own mtime, ctime and size (what it does not change itself,
 *   chattr's ctime, fuse_ioctl.c and fuse_write.c make up for). Without it
 *   data reaches uf2fs at write(2), and only a shared mmap leaves dirty pages
 *   in the kernel; either way a SIGTERM flushes them before the final
 *   checkpoint (fuse_daemon_flush). docs/decisions.md says why it is the
 *   default.
 * Left off:
 * - HANDLE_KILLPRIV (v1, libfuse turns it on by default): with it the kernel
 *   leaves clearing setuid/setgid to us without telling us whether the
 *   caller has CAP_FSETID. V2 does tell, per request, and is negotiated
 *   below libfuse (fuse_killpriv.c); see fuse_write.c.
 * - AUTO_INVAL_DATA: nothing changes the image behind the kernel, so checking
 *   mtime on every cached read would only cost GETATTRs.
 * - SPLICE_*: reads are answered from a plain buffer (fuse_reply_buf); splice
 *   only pays with fd-backed replies (fuse_reply_data). Spliced WRITE
 *   payloads would need libfuse 3.14 to grow its pipe to 1 MiB + 4 KiB,
 *   past pipe-max-size, which takes CAP_SYS_RESOURCE; without it libfuse
 *   quietly reads instead (so does passthrough_ll, the bench's ceiling).
 * -o options that libfuse parses (async_read, max_readahead=, ...) apply
 * next, so the user can override most of this; the ones above that decide
 * correctness (WRITEBACK_CACHE, HANDLE_KILLPRIV, POSIX_ACL, DONT_MASK) are
 * applied last.
 */
void fuse_op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fuse_uf2fs *u = userdata;

	fuse_want(conn, FUSE_CAP_ASYNC_READ);
	fuse_want(conn, FUSE_CAP_READDIRPLUS);
	fuse_want(conn, FUSE_CAP_READDIRPLUS_AUTO);
	fuse_want(conn, FUSE_CAP_PARALLEL_DIROPS);
	fuse_want(conn, FUSE_CAP_IOCTL_DIR);
	fuse_want(conn, FUSE_CAP_ATOMIC_O_TRUNC);
	fuse_want(conn, FUSE_CAP_EXPORT_SUPPORT);
	if (!u->direct_io)
		fuse_want(conn, FUSE_CAP_CACHE_SYMLINKS);
	conn->want &= ~(FUSE_CAP_AUTO_INVAL_DATA | FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE |
			FUSE_CAP_SPLICE_READ);
	/*
	 * max_read stays 0 (no limit of our own): the kernel already caps a
	 * request at max_pages (256 pages with libfuse's 1 MiB max_write), and
	 * libfuse insists that a max_read here match a -o max_read= mount option.
	 */
	/*
	 * The kernel's FUSE readahead is min(bdi read_ahead_kb, this), the
	 * bdi's being 128 KiB unless raised (fuse_tune_bdi, as root). The
	 * library's figure: 1 MiB (one request, max_pages 256) for a local
	 * file, several requests in flight for a device behind a server.
	 */
	conn->max_readahead = uf2fs_readahead_bytes(u->fs);
	if (u->conn_opts)
		fuse_apply_conn_info_opts(u->conn_opts, conn);
	conn->want &= ~(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_HANDLE_KILLPRIV | FUSE_CAP_POSIX_ACL |
			FUSE_CAP_DONT_MASK);
	if (u->writeback_cache && u->mounted_rw)
		fuse_want(conn, FUSE_CAP_WRITEBACK_CACHE);
	/* Without DONT_MASK the kernel would mask modes that a default ACL decides. */
	if (u->want_acl && (conn->capable & FUSE_CAP_POSIX_ACL) &&
	    (conn->capable & FUSE_CAP_DONT_MASK))
		conn->want |= FUSE_CAP_POSIX_ACL | FUSE_CAP_DONT_MASK;
}

/*
 * uf2fs_unmount writes the final checkpoint of a read-write mount and returns
 * its failure. A library that turned read-only while mounted read-write did
 * so on an error, and what it had not checkpointed is lost: a failure too.
 */
int fuse_uf2fs_shutdown(struct fuse_uf2fs *u)
{
	bool failed_ro;
	int ret;

	pthread_mutex_lock(&u->shutdown_lock);
	if (u->fs) {
		failed_ro = u->mounted_rw && uf2fs_is_read_only(u->fs);
		u->shutdown_err = uf2fs_unmount(u->fs);
		if (failed_ro && u->shutdown_err == 0)
			u->shutdown_err = -EIO;
		u->fs = NULL;
	}
	ret = u->shutdown_err;
	pthread_mutex_unlock(&u->shutdown_lock);
	return ret;
}

/*
 * FUSE_DESTROY (sent by umount(2) on fuseblk mounts, which then wait for the
 * reply), or libfuse at session teardown. Either way no request follows.
 */
void fuse_op_destroy(void *userdata)
{
	fuse_uf2fs_shutdown(userdata);
}

void fuse_uf2fs_stat(const struct uf2fs_attr *attr, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = attr->ino;
	st->st_mode = attr->mode;
	st->st_nlink = attr->nlink;
	st->st_uid = fuse_idmap_uid_out(attr->uid);
	st->st_gid = fuse_idmap_gid_out(attr->gid);
	st->st_size = attr->size;
	st->st_blocks = attr->blocks;
	st->st_blksize = attr->blksize;
	st->st_rdev = attr->rdev;
	st->st_atim = attr->atime;
	st->st_mtim = attr->mtime;
	st->st_ctim = attr->ctime;
}

/* The entry for attributes at hand: node id, generation (for handles), stat. */
static void fuse_entry_fill(struct fuse_uf2fs *u, const struct uf2fs_attr *attr,
			    struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = fuse_ino_from_f2fs(u, attr->ino);
	e->generation = attr->generation;
	fuse_uf2fs_stat(attr, &e->attr);
	e->attr_timeout = u->timeout;
	e->entry_timeout = u->timeout;
}

/* The entry for attributes the library gave (readdirplus). */
int fuse_uf2fs_entry_attr(struct fuse_uf2fs *u, const struct uf2fs_attr *attr,
			  struct fuse_entry_param *e)
{
	if (!fuse_ino_from_f2fs(u, attr->ino))
		return -EIO;
	fuse_entry_fill(u, attr, e);
	return 0;
}

int fuse_uf2fs_entry(struct fuse_uf2fs *u, uint32_t ino, struct fuse_entry_param *e)
{
	struct uf2fs_attr attr;
	int ret;

	if (!fuse_ino_from_f2fs(u, ino))
		return -EIO;
	ret = uf2fs_getattr(u->fs, ino, &attr);
	if (ret < 0)
		return ret;
	fuse_entry_fill(u, &attr, e);
	return 0;
}

/*
 * LOOKUP of "." comes only from the export code (fuse_get_dentry): a file
 * handle names node id "parent", which the kernel has forgotten. Any number
 * may come in, the inode may be gone since, and the number reused: the
 * library answers ESTALE for what is no inode in use (the kernel's answer to
 * the caller too), and the kernel compares our generation with the handle's.
 */
static void fuse_lookup_self(fuse_req_t req, struct fuse_uf2fs *u, fuse_ino_t nodeid)
{
	uint32_t ino = fuse_ino_to_f2fs(u, nodeid);
	struct fuse_entry_param e;
	struct uf2fs_attr attr;
	/* f2fs ino 1 (no node id) is the node inode: uf2fs_getattr_by_handle refuses it */
	int ret = uf2fs_getattr_by_handle(u->fs, ino, &attr);

	if (ret < 0) {
		fuse_op_error(req, ret);
		return;
	}
	fuse_entry_fill(u, &attr, &e);
	fuse_reply_entry(req, &e);
}

bool fuse_uf2fs_casefolded(struct fuse_uf2fs *u, uint32_t dir)
{
	uint32_t flags;

	return u->casefold && uf2fs_get_flags(u->fs, dir, &flags) == 0 &&
	       (flags & FS_CASEFOLD_FL);
}

/*
 * FUSE_NOTIFY_INC_EPOCH (protocol 7.44, Linux 6.16): the kernel counts an
 * epoch, and a dentry made before the count went up is looked up again at
 * its next use. It takes no lock, so it can be sent while the kernel holds
 * the directory's lock for the unlink or rename being answered, before the
 * reply: when the caller's syscall returns, no stale dentry can be used.
 * libfuse 3.14 has no call for it; the message is the bare out header.
 */
#define FUSE_UF2FS_NOTIFY_INC_EPOCH	8

static bool fuse_uf2fs_inc_epoch(struct fuse_uf2fs *u)
{
	struct {
		uint32_t len;
		int32_t error;		/* the notify code */
		uint64_t unique;	/* 0: a notification */
	} oh = { sizeof(oh), FUSE_UF2FS_NOTIFY_INC_EPOCH, 0 };

	return write(fuse_session_fd(u->se), &oh, sizeof(oh)) == (ssize_t)sizeof(oh);
}

/* The first question sends one epoch notification to learn if the kernel has it. */
static bool fuse_uf2fs_cf_epoch(struct fuse_uf2fs *u)
{
	int s = atomic_load(&u->cf_epoch);

	if (s == 0) {
		s = fuse_uf2fs_inc_epoch(u) ? 1 : -1;
		atomic_store(&u->cf_epoch, s);
	}
	return s > 0;
}

bool fuse_uf2fs_cf_uncached(struct fuse_uf2fs *u, uint32_t dir)
{
	return fuse_uf2fs_casefolded(u, dir) && !fuse_uf2fs_cf_epoch(u);
}

/*
 * The kernel names a dentry by the bytes it was asked for. One made from a
 * readdirplus entry, a creation or a rename carries the stored name, and
 * the unlink, rmdir or rename that goes through it drops or moves it: only
 * a dentry from a lookup of another spelling (an alias) can outlive its
 * entry. So the epoch goes up only if such a lookup was answered since it
 * last went up; a casefolded rm -rf of listed names then costs no LOOKUP
 * per entry. The kernel stamps a lookup's dentry with the epoch it read
 * before sending the request, and the flag is set before the reply: an
 * alias noted before the exchange below is ended by the bump after it, one
 * noted after it leaves the flag set for the next change.
 */
void fuse_uf2fs_cf_looked_up(struct fuse_uf2fs *u, bool alias)
{
	if (!alias)
		return;
	atomic_fetch_add_explicit(&u->cf_alias_lookups, 1, memory_order_relaxed);
	if (!atomic_load_explicit(&u->cf_alias, memory_order_relaxed))
		atomic_store(&u->cf_alias, true);
}

void fuse_uf2fs_cf_changed(struct fuse_uf2fs *u, uint32_t dir, uint32_t dir2)
{
	if (!fuse_uf2fs_casefolded(u, dir) && (dir2 == dir || !fuse_uf2fs_casefolded(u, dir2)))
		return;
	if (!fuse_uf2fs_cf_epoch(u) || !atomic_exchange(&u->cf_alias, false))
		return;
	atomic_fetch_add_explicit(&u->cf_bumps, 1, memory_order_relaxed);
	if (fuse_uf2fs_inc_epoch(u))
		return;
	/* It worked before: from now on entries there are not cached. */
	atomic_store(&u->cf_epoch, -1);
	fprintf(stderr, "uf2fs: %s: FUSE_NOTIFY_INC_EPOCH failed; casefolded directories' "
		"entries are no longer cached, some may be stale until their timeout\n",
		u->image);
}

void fuse_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	struct fuse_entry_param e;
	size_t len = strlen(name);
	bool alias = false;
	uint32_t ino;
	int ret;

	if (len > FUSE_UF2FS_NAME_MAX) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	if (!strcmp(name, ".")) {
		fuse_lookup_self(req, u, parent);
		return;
	}
	/*
	 * ".." (fuse_get_parent, for a directory's handle) is the directory's
	 * own ".." entry, as f2fs_get_parent reads it; not i_pino, which a
	 * hard-linked file cannot keep right. The root's is the root.
	 */
	ret = uf2fs_lookup_alias(u->fs, fuse_ino_to_f2fs(u, parent), name, len, &ino, &alias);
	if (ret == -ENOENT) {
		/*
		 * A negative entry: the kernel caches the miss for the timeout.
		 * Not on a casefold image: a create under another case, or in
		 * a directory that chattr +F turned casefolded, would not
		 * clear it.
		 */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = u->casefold ? 0 : u->timeout;
		fuse_reply_entry(req, &e);
		return;
	}
	if (ret == 0)
		ret = fuse_uf2fs_entry(u, ino, &e);
	if (ret == 0 && fuse_uf2fs_cf_uncached(u, fuse_ino_to_f2fs(u, parent)))
		e.entry_timeout = 0;
	if (ret < 0) {
		fuse_op_error(req, ret);
		return;
	}
	fuse_uf2fs_cf_looked_up(u, alias);
	fuse_reply_entry(req, &e);
}

/*
 * The kernel forgets exactly what it was given: one per successful lookup
 * reply and one per readdirplus entry other than "." and "..".
 */
void fuse_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);

	uf2fs_forget(u->fs, fuse_ino_to_f2fs(u, ino), nlookup);
	fuse_reply_none(req);
}

void fuse_op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	size_t i;

	for (i = 0; i < count; i++)
		uf2fs_forget(u->fs, fuse_ino_to_f2fs(u, forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

void fuse_op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	struct uf2fs_attr attr;
	struct stat st;
	int ret;

	ret = uf2fs_getattr(u->fs, fuse_ino_to_f2fs(u, ino), &attr);
	if (ret < 0) {
		fuse_op_error(req, ret);
		return;
	}
	fuse_uf2fs_stat(&attr, &st);
	fuse_reply_attr(req, &st, u->timeout);
}

void fuse_op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	char target[FUSE_UF2FS_SYMLINK_MAX + 1];
	ssize_t len;

	len = uf2fs_readlink(u->fs, fuse_ino_to_f2fs(u, ino), target, FUSE_UF2FS_SYMLINK_MAX);
	if (len < 0) {
		fuse_op_error(req, len);
		return;
	}
	target[len] = '\0';
	fuse_reply_readlink(req, target);
}

void fuse_op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	struct statvfs st;
	int ret;

	ret = uf2fs_statfs(u->fs, &st);
	if (ret < 0)
		fuse_op_error(req, ret);
	else
		fuse_reply_statfs(req, &st);
}
