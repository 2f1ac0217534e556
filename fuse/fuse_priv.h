/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the FUSE front end's files share: the per-mount state handed to every
 * request, the mapping between FUSE node ids and f2fs inode numbers, the
 * conversion of library attributes to struct stat, the replies every op
 * family needs (errors, new entries, the read-only refusal), and the op
 * handlers that fuse_ops.c gathers into the lowlevel ops table.
 *
 * Handlers are named fuse_op_<op>; nothing here may start with a prefix that
 * libfuse exports or may export (fuse_fs_, fuse_reply_, fuse_session_, ...):
 * a clash would silently interpose on libfuse's own calls.
 */
#ifndef UF2FS_FUSE_PRIV_H
#define UF2FS_FUSE_PRIV_H

/* 3.12: the loop config is opaque and has max_threads (fuse_loop_cfg_*). */
#define FUSE_USE_VERSION 312

#include <errno.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "uf2fs/uf2fs.h"

/* f2fs's F2FS_NAME_LEN; the kernel passes FUSE names of up to 1024 bytes. */
#define FUSE_UF2FS_NAME_MAX	255
/* One block holds a symlink target. */
#define FUSE_UF2FS_SYMLINK_MAX	4096

#define FUSE_PAGE_READ_WORDS	64	/* 4096 bits */

struct fuse_uf2fs {
	struct uf2fs *fs;		/* NULL once shut down */
	struct fuse_session *se;	/* for notifications to the kernel */
	const char *image;		/* for messages */
	const char *image_abs;		/* absolute, for `uf2fs umount` (fuse_umount.c) */
	const struct uf2fs_options *lib_opts;	/* as parsed: how to open the image again */
	uint32_t root_ino;		/* the f2fs ino behind FUSE_ROOT_ID */
	bool mounted_rw;		/* the library opened the image read-write */
	bool direct_io;			/* bypass the kernel page cache */
	bool writeback_cache;		/* -o writeback_cache: the kernel batches writes */
	bool single_thread;		/* one worker: no notification that can block */
	bool strictatime;		/* every read reaches uf2fs: no kept page cache */
	bool want_killpriv_v2;		/* offer HANDLE_KILLPRIV_V2 (fuse_killpriv.c) */
	/* atomic: the worker that replies to INIT sets them while others read */
	atomic_bool killpriv_v2;	/* negotiated: the daemon clears setuid/setgid */
	_Atomic uint64_t killpriv_init_unique;	/* the INIT request whose reply gets the flag */
	bool want_acl;			/* ask the kernel to enforce POSIX ACLs (fuse_op_init) */
	double timeout;			/* entry and attr validity, seconds */
	bool casefold;			/* the image may have case-insensitive directories */
	atomic_int cf_epoch;		/* fuse_uf2fs_cf_uncached: 0 unknown, 1 works, -1 not */
	atomic_bool cf_alias;		/* a lookup answered another spelling: see cf_changed */
	/* inodes (hashed) whose pages the kernel filled by READ: fuse_page_read */
	_Atomic uint64_t page_read[FUSE_PAGE_READ_WORDS];
	atomic_ulong cf_bumps, cf_alias_lookups;	/* for uf2fs stats */
	struct fuse_conn_info_opts *conn_opts;	/* -o async_read etc., applied in init */
	pthread_mutex_t shutdown_lock;	/* destroy and the main thread may race */
	int shutdown_err;		/* the final checkpoint's result */
};

/* fuse_file_info.fh of regular files: the open had O_DIRECT. */
#define FUSE_FH_O_DIRECT	1u
/*
 * A READ through a handle without O_DIRECT fills the kernel's page cache.
 * Noted per inode (hashed, never cleared: a collision only costs an
 * invalidation) before the data is read, so an O_DIRECT write that follows
 * knows whether kept pages may be stale (fuse_write_direct_done).
 */
void fuse_page_read_note(struct fuse_uf2fs *u, fuse_ino_t ino);
bool fuse_page_read_seen(struct fuse_uf2fs *u, fuse_ino_t ino);
bool fuse_direct_on_atomic(struct fuse_uf2fs *u, fuse_ino_t ino, const struct fuse_file_info *fi);

/* fuse_idmap.c: -o fakeroot, uid=, gid= (the image's owners and the mounting user). */
void fuse_idmap_init(bool fakeroot, long img_uid, long img_gid);
bool fuse_idmap_fakeroot(void);
uint32_t fuse_idmap_uid_out(uint32_t uid);
uint32_t fuse_idmap_gid_out(uint32_t gid);
uint32_t fuse_idmap_uid_in(uint32_t uid);
uint32_t fuse_idmap_gid_in(uint32_t gid);
uint32_t fuse_idmap_new_uid(uint32_t caller);
uint32_t fuse_idmap_new_gid(uint32_t caller);
bool fuse_caller_is_root(fuse_req_t req);

/* fuse_umount.c: UF2FS_IOC_MOUNT_INFO. */
void fuse_ioctl_mount_info(fuse_req_t req, size_t out_bufsz);

/* fuse_killpriv.c: raw request flags libfuse 3.14 does not pass on. */
int fuse_killpriv_install(struct fuse_session *se, struct fuse_uf2fs *u);
/* The request this thread serves carries FUSE_WRITE/OPEN_KILL_SUIDGID. */
bool fuse_killpriv_request_flag(void);
/* fuse_rx.c: one worker reads /dev/fuse at a time, polling before it sleeps */
ssize_t fuse_rx_read(int fd, void *buf, size_t len);
void fuse_rx_may_block(void);
size_t fuse_rx_format_stats(char *buf, size_t size);
void fuse_rx_setup(unsigned int spin_us, bool single_thread, bool spin_pin);
/* One thread serves the device (-s, or the flush loop after a signal). */
void fuse_rx_set_lone(void);
bool fuse_rx_lone(void);
int fuse_uf2fs_inval_inode(struct fuse_session *se, fuse_ino_t ino, off_t off, off_t len);
int fuse_uf2fs_inval_entry(struct fuse_session *se, fuse_ino_t parent, const char *name,
			   size_t len);
/* Drop setuid and setgid of ino as the VFS would for this caller; tells the kernel. */
int fuse_kill_suidgid(fuse_req_t req, struct fuse_uf2fs *u, fuse_ino_t ino);

/* fuse_verity.c: FS_IOC_{ENABLE,MEASURE}_VERITY, FS_IOC_READ_VERITY_METADATA */
bool fuse_ioctl_verity(fuse_req_t req, fuse_ino_t ino, uint32_t f2fs_ino, unsigned int cmd,
		       const void *in_buf, size_t in_bufsz, size_t out_bufsz);

static inline struct fuse_uf2fs *fuse_uf2fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/*
 * FUSE reserves node id 1 for the root; f2fs's root is usually ino 3 and ino 1
 * is the node inode, which no directory entry may name. So: the root maps both
 * ways, every other ino is its own node id, and an entry naming f2fs ino 1
 * would alias the root, so it maps to 0 (invalid; callers answer EIO).
 * st_ino and d_ino keep the real f2fs ino, so stat(1) shows what the kernel's
 * f2fs would show.
 */
static inline uint32_t fuse_ino_to_f2fs(const struct fuse_uf2fs *u, fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return u->root_ino;
	return ino > UINT32_MAX ? 0 : (uint32_t)ino;
}

static inline fuse_ino_t fuse_ino_from_f2fs(const struct fuse_uf2fs *u, uint32_t ino)
{
	if (ino == u->root_ino)
		return FUSE_ROOT_ID;
	return ino == FUSE_ROOT_ID ? 0 : ino;
}

/*
 * Library errors are negative errnos. The kernel refuses a reply error it does
 * not know (>= 512), which would turn into EINVAL far from the cause; map any
 * such value to EIO here. ENOSYS is never passed on either: for most ops the
 * kernel takes it as "not implemented" and stops sending that op for the life
 * of the mount (no_fsync, no_setxattr, no_fallocate, ...).
 */
static inline void fuse_op_error(fuse_req_t req, long err)
{
	int e = err < 0 ? (int)-err : (int)err;

	if (e == ENOSYS)
		e = EOPNOTSUPP;
	/*
	 * Corrupt metadata is EUCLEAN inside the library, as in Linux f2fs;
	 * applications on the mount see the plain I/O error they expect. The
	 * daemon's log names the structure and block.
	 */
	if (e == EUCLEAN)
		e = EIO;
	fuse_reply_err(req, e > 0 && e < 512 ? e : EIO);
}

/* The reply of ops that answer only a status: 0 or a negative errno. */
static inline void fuse_op_status(fuse_req_t req, long ret)
{
	if (ret < 0)
		fuse_op_error(req, ret);
	else
		fuse_reply_err(req, 0);
}

/*
 * Every op that modifies the image starts here. The library answers EROFS
 * itself, but may also turn read-only at run time (after an I/O error), so
 * ask it each time rather than trust the mount option; it is a flag read.
 */
static inline bool fuse_uf2fs_refuse_ro(fuse_req_t req, struct fuse_uf2fs *u)
{
	if (!uf2fs_is_read_only(u->fs))
		return false;
	fuse_reply_err(req, EROFS);
	return true;
}

void fuse_uf2fs_stat(const struct uf2fs_attr *attr, struct stat *st);
/* getattr and fill a reply entry: node id, generation, stat and timeouts. */
int fuse_uf2fs_entry(struct fuse_uf2fs *u, uint32_t ino, struct fuse_entry_param *e);
int fuse_uf2fs_entry_attr(struct fuse_uf2fs *u, const struct uf2fs_attr *attr,
			  struct fuse_entry_param *e);
/*
 * The kernel's dentry cache compares names byte for byte. In a casefolded
 * directory one entry answers to many names, and a change made under one
 * name leaves the kernel's dentries for the others stale. Where the kernel
 * has FUSE_NOTIFY_INC_EPOCH, an unlink, rmdir or rename in a casefolded
 * directory ends every dentry the kernel holds (fuse_uf2fs_cf_changed) if a
 * lookup answered a spelling other than the stored one since the last such
 * end, so entries there are cached as elsewhere; without it they are not
 * (timeout 0: every use asks us again). Misses are never cached on a
 * casefold image: a create under another case would not clear them. dir is
 * an f2fs ino.
 */
bool fuse_uf2fs_casefolded(struct fuse_uf2fs *u, uint32_t dir);
/* An entry of dir gets entry timeout 0. */
bool fuse_uf2fs_cf_uncached(struct fuse_uf2fs *u, uint32_t dir);
/* Before the reply to an unlink, rmdir or rename that touched casefolded dirs. */
void fuse_uf2fs_cf_changed(struct fuse_uf2fs *u, uint32_t dir, uint32_t dir2);
/* A lookup answered: before the reply, note if the name was another spelling. */
void fuse_uf2fs_cf_looked_up(struct fuse_uf2fs *u, bool alias);
/*
 * Tell the kernel that an inode's attributes changed behind its back (the
 * daemon's own kill-priv, flags): its next stat asks again. Data stays cached.
 */
static inline void fuse_uf2fs_inval_attr(struct fuse_uf2fs *u, fuse_ino_t ino)
{
	if (u->se)
		fuse_lowlevel_notify_inval_inode(u->se, ino, -1, 0);
}

/* UF2FS_IOC_FSCRYPT (fuse_fscrypt.c): keys and policies for `uf2fs fscrypt`. */
void fuse_ioctl_fscrypt(fuse_req_t req, fuse_ino_t ino, const void *in_buf, size_t in_bufsz,
			size_t out_bufsz);
/* The length of a name from the kernel, or -ENAMETOOLONG past f2fs's limit. */
int fuse_uf2fs_name_len(const char *name, size_t *len);
/* How open and create set up a file: who caches, whether close sends FLUSH. */
void fuse_uf2fs_file_setup(const struct fuse_uf2fs *u, struct fuse_file_info *fi);
/* A per-worker-thread buffer of at least size bytes (reads, copies), or NULL. */
char *fuse_uf2fs_buf(size_t size);
/*
 * The final checkpoint and library unmount, once, from whichever comes first:
 * the destroy op or the main thread after the loop. Returns its result.
 */
int fuse_uf2fs_shutdown(struct fuse_uf2fs *u);

/* fuse_ops.c: connection and namespace */
void fuse_op_init(void *userdata, struct fuse_conn_info *conn);
void fuse_op_destroy(void *userdata);
void fuse_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void fuse_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void fuse_op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets);
void fuse_op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fuse_op_readlink(fuse_req_t req, fuse_ino_t ino);
void fuse_op_statfs(fuse_req_t req, fuse_ino_t ino);

/* fuse_dir.c */
void fuse_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fuse_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi);
void fuse_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			 struct fuse_file_info *fi);
void fuse_op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

/* fuse_file.c */
void fuse_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fuse_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		  struct fuse_file_info *fi);
void fuse_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

/* fuse_xattr.c */
void fuse_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void fuse_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void fuse_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		      size_t size, int flags);
void fuse_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

/* fuse_ioctl.c */
void fuse_op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		   struct fuse_file_info *fi, unsigned int flags, const void *in_buf,
		   size_t in_bufsz, size_t out_bufsz);

/* fuse_namei.c: ops that create, link, remove and rename names */
void fuse_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		   dev_t rdev);
void fuse_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void fuse_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void fuse_op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void fuse_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void fuse_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		    fuse_ino_t newparent, const char *newname, unsigned int flags);
void fuse_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);
void fuse_op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		    struct fuse_file_info *fi);

/* fuse_write.c: ops that change a file's data or attributes, or make it durable */
void fuse_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		     struct fuse_file_info *fi);
void fuse_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi);
void fuse_op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
		       struct fuse_file_info *fi);
void fuse_op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			     struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			     struct fuse_file_info *fi_out, size_t len, int flags);
void fuse_op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fuse_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void fuse_op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
		      struct fuse_file_info *fi);

extern const struct fuse_lowlevel_ops fuse_uf2fs_ops;

#endif /* UF2FS_FUSE_PRIV_H */
