/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The public API of libuf2fs: what the FUSE front end, the `uf2fs` command and
 * the tests call. Everything is addressed by inode number; the library keeps
 * its own inode cache, so callers never hold f2fs objects. All functions return
 * 0 or a non-negative count on success and a negative errno on failure.
 */
#ifndef UF2FS_H
#define UF2FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <time.h>

struct uf2fs;

enum uf2fs_backend {
	UF2FS_BACKEND_PSYNC = 0,
	UF2FS_BACKEND_URING,
	UF2FS_BACKEND_RAM,	/* the image is loaded into memory; for tests and fuzzing */
};

enum uf2fs_compress_algorithm {
	UF2FS_COMPRESS_DEFAULT = 0,	/* lz4, as the kernel */
	UF2FS_COMPRESS_LZO,
	UF2FS_COMPRESS_LZ4,
	UF2FS_COMPRESS_ZSTD,
	UF2FS_COMPRESS_LZORLE,
};

/* As the kernel's COMPRESS_EXT_NUM and F2FS_EXTENSION_LEN (with the NUL). */
#define UF2FS_COMPRESS_EXT_MAX	16
#define UF2FS_COMPRESS_EXT_LEN	8

/* Devices of a multi-device volume besides the first (f2fs has at most 8). */
#define UF2FS_MAX_EXTRA_DEVICES	7

struct uf2fs_options {
	const char *device;		/* image file or block device */
	bool read_only;			/* default; a read-write mount needs rw */
	unsigned int max_folio_order;	/* largest data folio: 2^order 4 KiB units */
	uint64_t cache_size;		/* bytes; 0 means the default fraction of RAM */
	enum uf2fs_backend backend;
	bool quiet;			/* no messages on stderr */
	bool verbose;			/* also routine notes (roll-forward done, ...) */
	/*
	 * atime on reads and readdirs (FUSE inodes are S_NOATIME: the kernel
	 * leaves it to us): 0 relatime (the default), 1 noatime, 2 strictatime.
	 */
	int atime_mode;
	bool nodiratime;		/* readdir leaves directories' atime alone */
	unsigned int checkpoint_interval;	/* seconds; 0 means the kernel's 60 */
	/*
	 * Background writeback (the flusher thread): -1 the default, off for
	 * library users, on under FUSE; 0 off, 1 on. dirty_expire: seconds
	 * data may stay dirty (0: 30, as the kernel's dirty_expire_centisecs);
	 * dirty_background: bytes of dirty data that start writeback (0: an
	 * eighth of cache_size, at most 32 MiB).
	 */
	int flusher;
	unsigned int dirty_expire;
	uint64_t dirty_background;
	int background_gc;		/* -1 default (on), 0 off, 1 on */
	bool fsync_mode_checkpoint;	/* every fsync checkpoints (no roll-forward) */
	/*
	 * Drop-behind ("dontcache", seed 003): data folios leave the cache once
	 * a read has consumed them or their writeback is done. -1: the default,
	 * off for library users; the FUSE front end turns it on when the
	 * kernel's page cache keeps the data anyway. 0 off, 1 on.
	 */
	int dontcache;
	/*
	 * Under drop-behind, whole-block writes of 32 KiB or more that no
	 * cached folio overlaps go from the caller's buffer to the device,
	 * without a folio. -1/1: on (the default), 0: off (every write is
	 * cached and written back, for comparison).
	 */
	int write_through;
	/*
	 * mode=lfs: write only clean segments and never in place (the kernel's
	 * mode=lfs); the default is the kernel's adaptive mode.
	 */
	bool mode_lfs;
	/* The kernel's ipu_policy bits; -1: its default (0x81 up to 16 GiB, else 0x10) */
	int ipu_policy;
	/*
	 * f2fs's noacl: new inodes inherit no default ACL and chmod leaves a
	 * stored access ACL alone. The ACL xattrs stay readable and writable.
	 */
	bool noacl;
	/*
	 * Quota limits enforced (EDQUOT) on quota_ino images, as the kernel's
	 * usrquota (1), grpquota (2), prjquota (4); 0: accounting only.
	 */
	unsigned int quota_enforce;
	/*
	 * fscrypt master keys, one a line: HEX (a v2 key) or DESCRIPTOR:HEX
	 * (v1, 16 hex digits of descriptor); '#' comments. Refused when
	 * readable by others. Without a key, encrypted trees show no-key names.
	 */
	const char *keyfile;
	/*
	 * PEM files of X.509 certificates for fs-verity's builtin signatures
	 * (Linux's ".fs-verity" keyring): with any, a verity file whose
	 * descriptor holds a signature opens, and enable with a signature
	 * succeeds, only if it verifies (EBADMSG, ENOKEY, EKEYREJECTED); a file
	 * without one is accepted (require_signatures=0). None: not checked.
	 */
	const char *const *verity_certs;
	unsigned int nr_verity_certs;
	/*
	 * fs.verity.require_signatures=1: a verity file without a signature
	 * does not open, and enable without one fails (EPERM).
	 */
	bool verity_require_signatures;
	/*
	 * The f2fs volume is one partition of the disk (image, block device,
	 * ...): a GPT partition by name or number, or an MBR one by number,
	 * found with libblkid. NULL: the whole disk.
	 */
	const char *partition;
	/*
	 * Images that are not a raw local file (lib/dev/nbd.c): device may be
	 * an NBD URI (nbd://, nbds://, nbd+unix://, ...), or a VM disk (qcow2,
	 * VMDK, VDI, VHDX, QED, ...) served by a qemu-nbd that uf2fs starts.
	 * image_format: the qemu format to use ("raw" disables the probe);
	 * NULL probes the header. nbd_timeout: seconds a request may wait for
	 * the server before it fails with EIO and the device is dead (0: 30).
	 * tls_*: libnbd's TLS settings for nbds:// (NULL: libnbd's default).
	 */
	const char *image_format;
	unsigned int nbd_timeout;
	const char *tls_certificates;
	const char *tls_psk_file;
	const char *tls_username;
	/*
	 * Multi-device volumes: the paths of devices 1, 2, ... in order, for
	 * image files moved since mkfs recorded their paths in the super block
	 * (device 0 is always "device"). nr_devices 0: the recorded paths.
	 */
	const char *devices[UF2FS_MAX_EXTRA_DEVICES];
	unsigned int nr_devices;
	/*
	 * Zoned volumes on image files: the capacity of each sequential zone
	 * in bytes, when smaller than the zone (nothing on disk records it;
	 * zoned block devices report theirs). 0: the zone size.
	 */
	uint64_t zone_capacity;
	/* RAM backend only: the image bytes (copied) */
	const void *ram_image;
	size_t ram_size;
	/* Testing: fail the Nth device request with EIO (0: off). */
	uint64_t fault_eio_at;
	/*
	 * Testing, RAM backend: model power loss. Writes count as durable only
	 * after a flush; after write number fault_cut_at (0: never) the power
	 * is off and nothing more is written. fault_tear: at power loss the
	 * unflushed writes land too, the last one torn in half.
	 */
	bool power_cut_model;
	uint64_t fault_cut_at;
	bool fault_tear;
	/*
	 * How files this mount makes compressed are compressed, as the
	 * kernel's mount options: compress_algorithm (default lz4),
	 * compress_level (lz4: 0, or 3..12 for LZ4HC; zstd: 1..22, 0 means 1),
	 * compress_log_size (2^N blocks per cluster, 2..8; 0 means 2),
	 * compress_chksum, and compress_extension (names ending in ".EXT", or
	 * every name for "*", are created compressed).
	 */
	struct uf2fs_compress_options {
		enum uf2fs_compress_algorithm algorithm;
		unsigned int level;
		unsigned int log_size;
		bool chksum;
		unsigned int nr_ext;
		char ext[UF2FS_COMPRESS_EXT_MAX][UF2FS_COMPRESS_EXT_LEN];
	} compress;
};

struct uf2fs_attr {
	uint32_t ino;
	uint32_t mode;
	uint32_t nlink;
	uint32_t uid;
	uint32_t gid;
	uint64_t size;
	uint64_t blocks;		/* 512-byte units, as st_blocks */
	uint64_t rdev;
	struct timespec atime, mtime, ctime, crtime;
	uint32_t generation;
	uint32_t flags;			/* FS_IOC_GETFLAGS bits */
	uint32_t blksize;		/* preferred I/O size, as st_blksize: the block size */
};

/* Called per directory entry; return non-zero to stop the walk. */
typedef int (*uf2fs_filldir_t)(void *arg, const char *name, size_t len, uint32_t ino,
			       unsigned int dtype, uint64_t next_pos);
/* The same with the entry's attributes (readdirplus); attr is NULL where the inode is unreadable. */
typedef int (*uf2fs_filldir_plus_t)(void *arg, const char *name, size_t len, uint32_t ino,
				    unsigned int dtype, uint64_t next_pos,
				    const struct uf2fs_attr *attr);

/* /// Partitions /// */

struct uf2fs_partition {
	unsigned int number;		/* as the kernel numbers them: sdX<number> */
	uint64_t start, size;		/* bytes */
	char name[128];			/* GPT partition name (UTF-8), "" on MBR */
	char type[40];			/* GPT type GUID, or the MBR type as 0xNN */
	char uuid[40];			/* GPT partition GUID ("" on MBR) */
	bool f2fs;			/* an f2fs super block at start + 1024 */
};

struct uf2fs_partitions {
	char table[8];			/* "gpt" or "dos"; "" when none was found */
	unsigned int sector_size;	/* the logical sector size the table uses */
	bool whole_f2fs;		/* the disk itself starts with an f2fs super block */
	unsigned int nr;
	struct uf2fs_partition *part;
};

void uf2fs_free_partitions(struct uf2fs_partitions *parts);

/* /// Mounting /// */
void uf2fs_default_options(struct uf2fs_options *opts);
int uf2fs_mount(const struct uf2fs_options *opts, struct uf2fs **out);
/*
 * uf2fs_mount, except that a disk with a partition table (read with libblkid,
 * 512- then 4096-byte sectors: UFS dumps use 4096) that is not f2fs itself,
 * opened without opts->partition, is not mounted: its table goes to *parts
 * (free with uf2fs_free_partitions) and the result is 1. One open of the
 * source serves both, which for a VM disk is one qemu-nbd.
 */
int uf2fs_mount_or_partitions(const struct uf2fs_options *opts, struct uf2fs **out,
			      struct uf2fs_partitions *parts);
/* Read-write: the final checkpoint (clean flag); its failure is returned. */
int uf2fs_unmount(struct uf2fs *fs);
uint32_t uf2fs_root_ino(const struct uf2fs *fs);
/*
 * Last detailed error message (structure and block address), or "".
 * With fs == NULL: the calling thread's last uf2fs_mount failure.
 */
const char *uf2fs_last_error(const struct uf2fs *fs);

/* /// Namespace /// */
int uf2fs_lookup(struct uf2fs *fs, uint32_t dir, const char *name, size_t len, uint32_t *ino);
/*
 * The same; *alias (set on success) says the entry found is stored under
 * another spelling of the name (a casefolded directory), so a cache keyed
 * by the bytes of names may now hold two names for one entry.
 */
int uf2fs_lookup_alias(struct uf2fs *fs, uint32_t dir, const char *name, size_t len,
		       uint32_t *ino, bool *alias);
/* Walk a path from the root; follows no symlinks at all (callers that need to, walk
 * with uf2fs_lookup). uf2fs_lookup takes no reference: forget is advisory. */
int uf2fs_resolve(struct uf2fs *fs, const char *path, uint32_t *ino);
int uf2fs_getattr(struct uf2fs *fs, uint32_t ino, struct uf2fs_attr *attr);
/*
 * The directory and name that still lead to ino, from the inode's own record
 * (i_pino, i_name), checked by a lookup; -ENOENT when that record is stale
 * (hard links), encrypted, or absent. name needs F2FS_NAME_LEN (255) bytes.
 */
int uf2fs_inode_name(struct uf2fs *fs, uint32_t ino, uint32_t *parent, char *name,
		     size_t *len);
/*
 * getattr of an inode known only by number, from a file handle: -ESTALE
 * unless ino is an inode in use (linked, not freed), without the corruption
 * messages a bad number would give elsewhere. The caller compares the
 * generation.
 */
int uf2fs_getattr_by_handle(struct uf2fs *fs, uint32_t ino, struct uf2fs_attr *attr);
/* Entries from pos onwards, including "." and ".."; pos 0 starts the walk. */
int uf2fs_readdir(struct uf2fs *fs, uint32_t dir, uint64_t pos, uf2fs_filldir_t fill, void *arg);
/*
 * uf2fs_readdir with each entry's attributes, read under the walk's own
 * locks: a uf2fs_getattr from the callback would take the checkpoint lock
 * a second time, under the directory's (an inverted lock order).
 */
int uf2fs_readdir_plus(struct uf2fs *fs, uint32_t dir, uint64_t pos, uf2fs_filldir_plus_t fill,
		       void *arg);

/* /// Data /// */
ssize_t uf2fs_read(struct uf2fs *fs, uint32_t ino, void *buf, size_t len, uint64_t off);
/* Stamp atime as a read would (relatime etc.): 1 if it moved, 0 if not due. */
int uf2fs_touch_atime(struct uf2fs *fs, uint32_t ino);
/*
 * Zero-copy read: emit receives iovecs pointing into the cache, valid only
 * during the call; a non-zero return from emit makes the read fail (-EIO).
 * Returns the bytes described, or -errno.
 */
struct iovec;
typedef int (*uf2fs_emit_t)(void *arg, const struct iovec *iov, int cnt);
ssize_t uf2fs_read_iov(struct uf2fs *fs, uint32_t ino, size_t len, uint64_t off,
		       uf2fs_emit_t emit, void *arg);
ssize_t uf2fs_readlink(struct uf2fs *fs, uint32_t ino, char *buf, size_t size);
/*
 * The front end tells the library a file is opened or closed; release gets
 * the flags the open was given (a write open keeps verity from being
 * enabled: ETXTBSY, as Linux's deny_write_access).
 */
int uf2fs_open(struct uf2fs *fs, uint32_t ino, int flags);
void uf2fs_release(struct uf2fs *fs, uint32_t ino, int flags);
/* FUSE forget: the kernel dropped nlookup references; lets the cache evict. */
void uf2fs_forget(struct uf2fs *fs, uint32_t ino, uint64_t nlookup);

/* /// Writing (read-write mounts; -EROFS otherwise) ///
 * Creation calls take the caller's uid/gid (FUSE request context); the
 * library applies setgid-directory inheritance. nlink, ctime and mtime are
 * maintained by the library. Permission checks are the caller's (FUSE
 * default_permissions), except sticky-directory and immutable/append rules.
 */
struct uf2fs_create_args {
	uint32_t mode;		/* file type and permission bits */
	uint32_t uid, gid;	/* the creator's */
	/*
	 * Applied to mode when the parent has no default ACL (or under
	 * noacl); with one, the default ACL masks mode instead and the new
	 * inode inherits it, as Linux's posix_acl_create. Symlinks take neither.
	 */
	uint32_t umask;
	uint64_t rdev;		/* device nodes */
	const char *target;	/* symlinks */
};
/* Any kind of inode; the calls below are this with umask 0. */
int uf2fs_create(struct uf2fs *fs, uint32_t dir, const char *name, size_t len,
		 const struct uf2fs_create_args *args, uint32_t *ino);
int uf2fs_mknod(struct uf2fs *fs, uint32_t dir, const char *name, size_t len, uint32_t mode,
		uint32_t uid, uint32_t gid, uint64_t rdev, uint32_t *ino);
int uf2fs_mkdir(struct uf2fs *fs, uint32_t dir, const char *name, size_t len, uint32_t mode,
		uint32_t uid, uint32_t gid, uint32_t *ino);
int uf2fs_symlink(struct uf2fs *fs, uint32_t dir, const char *name, size_t len,
		  const char *target, uint32_t uid, uint32_t gid, uint32_t *ino);
int uf2fs_link(struct uf2fs *fs, uint32_t ino, uint32_t newdir, const char *name, size_t len);
int uf2fs_unlink(struct uf2fs *fs, uint32_t dir, const char *name, size_t len);
int uf2fs_rmdir(struct uf2fs *fs, uint32_t dir, const char *name, size_t len);
/* flags: RENAME_NOREPLACE, RENAME_EXCHANGE (linux/fs.h values) */
int uf2fs_rename(struct uf2fs *fs, uint32_t olddir, const char *oldname, size_t oldlen,
		 uint32_t newdir, const char *newname, size_t newlen, unsigned int flags);

#define UF2FS_SET_MODE		(1u << 0)
#define UF2FS_SET_UID		(1u << 1)
#define UF2FS_SET_GID		(1u << 2)
#define UF2FS_SET_SIZE		(1u << 3)
#define UF2FS_SET_ATIME		(1u << 4)
#define UF2FS_SET_MTIME		(1u << 5)
#define UF2FS_SET_ATIME_NOW	(1u << 7)
#define UF2FS_SET_MTIME_NOW	(1u << 8)
/*
 * An explicit ctime, from a cached copy of the attributes: it is raised to
 * the ctime of the last uf2fs_set_flags, which that copy did not see, so
 * ctime never goes back.
 */
#define UF2FS_SET_CTIME		(1u << 10)
/*
 * Drop setuid, and setgid when group-executable, as the VFS does for a write,
 * truncate or chown by a caller without CAP_FSETID (should_remove_suid). It
 * applies before a MODE in the same call, and changes ctime only when a bit
 * goes.
 */
#define UF2FS_SET_KILL_SUIDGID	(1u << 11)
/* With KILL_SUIDGID: setgid goes even without group-exec (caller outside the group). */
#define UF2FS_SET_KILL_SGID	(1u << 12)
/*
 * From a cache that keeps mtime itself (FUSE writeback_cache), "now" comes
 * as an explicit MTIME beside ATIME_NOW (utime(NULL), touch). On an
 * append-only file, where an explicit mtime is refused, that pair is taken
 * as the "now" it is (xfstests generic/079); elsewhere the value is stored
 * as sent.
 */
#define UF2FS_SET_MTIME_CACHED	(1u << 13)
/*
 * A change of times only (ATIME, MTIME, their _NOW, CTIME) to an inode that
 * its last unlink freed succeeds and stores nothing: *out gets the times
 * asked, nlink 0. The kernel writes cached times back after the unlink
 * (fuse_flush_times) while it still holds the node id; an error would fail
 * the next syncfs(2).
 */
#define UF2FS_SET_FREED_OK	(1u << 14)
/* Apply the fields of attr selected by valid; the result is stored in *out. */
int uf2fs_setattr(struct uf2fs *fs, uint32_t ino, const struct uf2fs_attr *attr,
		  unsigned int valid, struct uf2fs_attr *out);
ssize_t uf2fs_write(struct uf2fs *fs, uint32_t ino, const void *buf, size_t len, uint64_t off);
/*
 * uf2fs_write with flags. UF2FS_WRITE_KEEP_TIMES leaves mtime and ctime as
 * they are: for the kernel's page writeback under FUSE writeback_cache,
 * where the kernel keeps both itself and sends them with a SETATTR that
 * may reach us before the WRITE it describes.
 */
#define UF2FS_WRITE_KEEP_TIMES	(1u << 0)
ssize_t uf2fs_write_flags(struct uf2fs *fs, uint32_t ino, const void *buf, size_t len,
			  uint64_t off, unsigned int flags);
/*
 * mode: 0, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE|KEEP_SIZE, FALLOC_FL_ZERO_RANGE
 * (|KEEP_SIZE), FALLOC_FL_COLLAPSE_RANGE or FALLOC_FL_INSERT_RANGE (alone; offset and
 * length in whole blocks, the range inside the file).
 */
int uf2fs_fallocate(struct uf2fs *fs, uint32_t ino, int mode, uint64_t off, uint64_t len);
int uf2fs_fsync(struct uf2fs *fs, uint32_t ino, bool datasync);
/* Make everything durable: a checkpoint. */
int uf2fs_sync(struct uf2fs *fs);
/*
 * flags: XATTR_CREATE, XATTR_REPLACE, and UF2FS_XATTR_KILL_SGID: an access
 * ACL set by a caller outside the file's group and without CAP_FSETID
 * clears setgid, as posix_acl_update_mode (the library knows no credentials).
 */
#define UF2FS_XATTR_KILL_SGID	(1 << 16)
int uf2fs_setxattr(struct uf2fs *fs, uint32_t ino, const char *name, const void *value,
		   size_t size, int flags);
int uf2fs_removexattr(struct uf2fs *fs, uint32_t ino, const char *name);
int uf2fs_set_flags(struct uf2fs *fs, uint32_t ino, uint32_t flags);
/*
 * FS_IOC_FSGETXATTR / FS_IOC_FSSETXATTR (struct fsxattr's fields): the
 * FS_XFLAG_* bits f2fs keeps (sync, immutable, append, nodump, noatime,
 * projinherit, as fileattr_fill_flags pairs them with FS_*_FL) and the
 * project ID. Set refuses, as Linux for f2fs, an extent size hint or an
 * xflag f2fs does not keep (DAX included) with EOPNOTSUPP; it sets the
 * project ID first, then the flags (f2fs_fileattr_set's order); the other
 * FS_*_FL bits stay as they are.
 */
struct uf2fs_fsxattr {
	uint32_t xflags, extsize, projid, cowextsize;
};
int uf2fs_fsgetxattr(struct uf2fs *fs, uint32_t ino, struct uf2fs_fsxattr *fsx);
int uf2fs_fssetxattr(struct uf2fs *fs, uint32_t ino, const struct uf2fs_fsxattr *fsx);
bool uf2fs_is_read_only(const struct uf2fs *fs);
/*
 * How far ahead (bytes) a front end should have the kernel read a sequential
 * stream: more for a device whose requests wait on a server (NBD), so that
 * several are in flight, than for a local file (1 MiB, one FUSE request).
 */
unsigned int uf2fs_readahead_bytes(const struct uf2fs *fs);

/*
 * Called (from any thread) just before the library waits for a device:
 * a front end that keeps its idle threads parked wakes one here, so that
 * a slow read or flush does not hold other requests up (fuse/fuse_rx.c).
 * Process-wide; NULL removes it.
 */
void uf2fs_set_io_wait_hook(void (*hook)(void));

enum uf2fs_image_kind {
	UF2FS_IMAGE_FILE = 0,	/* a raw file or block device, opened directly */
	UF2FS_IMAGE_NBD,	/* an NBD URI */
	UF2FS_IMAGE_VMDISK,	/* a VM disk file, served through qemu-nbd */
};
/*
 * What kind of image a device string names, with the options' format=
 * override: front ends skip their file checks and lock for NBD and VM disks
 * (the lock is qemu-nbd's there, and a URI has no file). < 0: unreadable.
 */
int uf2fs_image_kind(const char *image, const struct uf2fs_options *opts);
/* The image has the casefold feature: some directories may match names by case. */
bool uf2fs_casefold_enabled(const struct uf2fs *fs);
/*
 * F2FS_IOC_GET_COMPRESS_BLOCKS: i_compr_blocks, the cluster slots that hold
 * no block (-EINVAL for a file that is not compressed, -EOPNOTSUPP without
 * the compression feature).
 */
int uf2fs_get_compress_blocks(struct uf2fs *fs, uint32_t ino, uint64_t *blocks);
/* F2FS_IOC_PRECACHE_EXTENTS: load the whole block map into the extent cache. */
int uf2fs_precache_extents(struct uf2fs *fs, uint32_t ino);
/* F2FS_IOC_{START,COMMIT,ABORT}_ATOMIC_WRITE: all-or-nothing file updates. */
enum uf2fs_atomic_op { UF2FS_ATOMIC_START, UF2FS_ATOMIC_COMMIT, UF2FS_ATOMIC_ABORT };
int uf2fs_atomic_write(struct uf2fs *fs, uint32_t ino, enum uf2fs_atomic_op op);
/* An atomic write is open on ino (started, not yet committed or aborted). */
bool uf2fs_is_atomic(struct uf2fs *fs, uint32_t ino);
/*
 * Every write to ino fails (EPERM: a compressed file whose saved blocks were
 * released), so a cache that would take the write first must not take it.
 */
bool uf2fs_writes_refused(struct uf2fs *fs, uint32_t ino);
/* F2FS_IOC_SHUTDOWN modes (the kernel's F2FS_GOING_DOWN_*) */
#define UF2FS_GOING_DOWN_FULLSYNC	0x0
#define UF2FS_GOING_DOWN_METASYNC	0x1
#define UF2FS_GOING_DOWN_NOSYNC		0x2
#define UF2FS_GOING_DOWN_METAFLUSH	0x3
#define UF2FS_GOING_DOWN_NEED_FSCK	0x4
/* After it, writes fail with EIO until a remount. */
int uf2fs_shutdown(struct uf2fs *fs, unsigned int mode);
/* One round of garbage collection (F2FS_IOC_GARBAGE_COLLECT); -EAGAIN: no victim. */
int uf2fs_gc(struct uf2fs *fs, bool sync);

/*
 * fs-verity (lib/verity.c), as Linux f2fs keeps it. Enable: FS_IOC_ENABLE_VERITY
 * (hash FS_VERITY_HASH_ALG_SHA256/_SHA512, block_size 1024 to the fs block size, salt up to
 * 32 bytes, an optional signature, checked against the verity_cert= certificates if any).
 * Measure: the file digest (up to 64 bytes), -ENODATA for a file without verity. Read metadata:
 * FS_IOC_READ_VERITY_METADATA's types, bytes copied from off. Every read of
 * a verity file is checked against its tree (-EIO on a mismatch).
 */
struct uf2fs_verity_arg {
	uint32_t hash_algorithm;
	uint32_t block_size;
	const void *salt;
	uint32_t salt_size;
	const void *sig;
	uint32_t sig_size;
	/*
	 * fsverity_ioctl_enable's inode_permission(MAY_WRITE), where no VFS
	 * ran it (FUSE runs no file_permission for an ioctl): with
	 * check_caller, the caller needs write permission by the file's mode
	 * bits for its uid, else its gid, else others (EACCES). The ids are
	 * the image's; a privileged caller (root, or uid 0 in the image under
	 * an id map, is not the same thing) goes without check_caller.
	 */
	bool check_caller;
	uint32_t caller_uid, caller_gid;
};
int uf2fs_enable_verity(struct uf2fs *fs, uint32_t ino, const struct uf2fs_verity_arg *arg);
int uf2fs_measure_verity(struct uf2fs *fs, uint32_t ino, uint16_t *alg, uint8_t *digest,
			 uint16_t *size);
ssize_t uf2fs_read_verity_metadata(struct uf2fs *fs, uint32_t ino, uint64_t type,
				   uint64_t off, void *buf, size_t len);

/* /// Xattrs (full names, e.g. "user.foo"; size 0 asks for the length) /// */
ssize_t uf2fs_getxattr(struct uf2fs *fs, uint32_t ino, const char *name, void *value,
		       size_t size);
ssize_t uf2fs_listxattr(struct uf2fs *fs, uint32_t ino, char *list, size_t size);

/* /// Filesystem /// */
int uf2fs_statfs(struct uf2fs *fs, struct statvfs *st);
int uf2fs_get_flags(struct uf2fs *fs, uint32_t ino, uint32_t *flags);
/* Geometry, features, checkpoint state and usage, for `uf2fs info`. */
void uf2fs_print_info(struct uf2fs *fs, FILE *out);
/* Cache, device and request-size counters, for `uf2fs stats` and the demo. */
void uf2fs_print_stats(struct uf2fs *fs, FILE *out);
/* Same as text into buf; returns the length (truncated to size - 1). */
size_t uf2fs_format_stats(struct uf2fs *fs, char *buf, size_t size);
/* True when the image holds fsync'd data past its last checkpoint. */
bool uf2fs_needs_recovery(const struct uf2fs *fs);
/* The current checkpoint's version; *umount: it is an unmount's (clean) one. */
uint64_t uf2fs_checkpoint_version(const struct uf2fs *fs, bool *umount);

/*
 * Android sparse images. Any mount reads one in place (read-only: a read-write
 * mount is refused, naming simg2img). uf2fs_write_sparse writes a NEW sparse
 * image of a mounted raw image to out_fd: metadata and SIT-valid blocks kept
 * (as FILL where a block is one repeated 32-bit value), free blocks DONT_CARE.
 */
struct uf2fs_sparse_report {
	uint64_t data_blocks, fill_blocks, dont_care_blocks;
};
int uf2fs_write_sparse(struct uf2fs *fs, int out_fd, struct uf2fs_sparse_report *rep);
/*
 * Check the sparse file at path against its checksums (CRC32 chunks, a
 * non-zero header image_checksum), without mounting: 0 when they match,
 * -EBADMSG at the first mismatch, -EUCLEAN for a damaged sparse image,
 * -ENOTTY when it is not a sparse image; msg says which and where.
 */
int uf2fs_verify_sparse(const char *path, char *msg, size_t msglen);
/* /// Disk quota (quota_ino images; lib/quota.c) /// */
enum { UF2FS_USRQUOTA, UF2FS_GRPQUOTA, UF2FS_PRJQUOTA };
struct uf2fs_dquot {
	uint32_t id;
	int64_t space, inodes;		/* bytes; inodes */
	uint64_t bsoft, bhard;		/* bytes (the files keep KiB); 0: none */
	uint64_t isoft, ihard;
	int64_t btime, itime;		/* grace ends (seconds since the epoch); 0: none */
	int64_t rsv_space, rsv_inodes;	/* the library's: reserved, not yet written back */
};
struct uf2fs_quota_list {
	struct uf2fs_dquot *v;		/* malloc'd, ids ascending; ids using nothing are left out */
	size_t n;
	uint32_t bgrace, igrace;	/* seconds */
	bool need_fsck;			/* the files wait for a recount */
};
/* Usage and limits of one quota type; -ENOENT when the image keeps none. */
int uf2fs_quota_get(struct uf2fs *fs, int type, struct uf2fs_quota_list *out);
/* The first id >= id using something or limited: -ENOENT past the last. */
int uf2fs_quota_getnext(struct uf2fs *fs, int type, uint32_t id, struct uf2fs_dquot *out,
			uint32_t *bgrace, uint32_t *igrace);
/* Set limits of an id (bsoft..ihard of lim) and/or the type's grace times. */
#define UF2FS_QSET_BLIMITS	0x1
#define UF2FS_QSET_ILIMITS	0x2
#define UF2FS_QSET_BGRACE	0x4
#define UF2FS_QSET_IGRACE	0x8
/* -EPERM when uf2fs_quota_caller named someone other than root (CAP_SYS_ADMIN). */
int uf2fs_quota_set(struct uf2fs *fs, int type, uint32_t id, const struct uf2fs_dquot *lim,
		    uint32_t bgrace, uint32_t igrace, unsigned int mask);
/* Project ID (FS_IOC_FSGETXATTR/FSSETXATTR's fsx_projid); 0 without project_quota. */
int uf2fs_get_projid(struct uf2fs *fs, uint32_t ino, uint32_t *projid);
int uf2fs_set_projid(struct uf2fs *fs, uint32_t ino, uint32_t projid);
/*
 * Who the next writes and creates of this thread act for: uid 0 ignores
 * limits, as CAP_SYS_RESOURCE does on Linux, and alone may set them
 * (uf2fs_quota_set). The FUSE front end sets it per
 * request; library callers are privileged unless they say otherwise.
 */
void uf2fs_quota_caller(uint32_t uid);

/* /// Testing /// */
/* Power-cut model: device writes so far, whether the cut happened, and the
 * image as power loss would leave it (malloc'd; the caller frees it). */
uint64_t uf2fs_test_writes(const struct uf2fs *fs);
bool uf2fs_test_power_is_cut(const struct uf2fs *fs);
int uf2fs_test_persisted_image(struct uf2fs *fs, void **image, size_t *len);
/* Drop the in-memory filesystem without writing anything (a crash). */
void uf2fs_test_crash(struct uf2fs *fs);
/* Disk address file block lblk maps to now (0 for a hole, NEW_ADDR if reserved). */
int uf2fs_test_block_addr(struct uf2fs *fs, uint32_t ino, uint64_t lblk, uint32_t *addr);
/* Discard pending freed segments now, at most max_segs (0: all); returns how many. */
unsigned int uf2fs_test_issue_discards(struct uf2fs *fs, unsigned int max_segs);
/*
 * Called before each device discard (blocks blk .. blk + nr - 1), on the
 * thread that issues it; NULL removes it. Set it while nothing runs on fs.
 */
typedef void (*uf2fs_discard_hook_t)(void *arg, uint32_t blk, uint64_t nr);
void uf2fs_test_discard_hook(struct uf2fs *fs, uf2fs_discard_hook_t fn, void *arg);

/* /// fscrypt (lib/crypto_api.c; docs/crypto.md) ///
 * Keys are held by the mount, in mlock()ed memory wiped on removal. A key
 * spec is a v2 identifier (16 bytes) or a v1 descriptor (8 bytes).
 */
struct uf2fs_fscrypt_policy {
	uint8_t version;		/* 1 or 2 */
	uint8_t contents_mode;		/* FSCRYPT_MODE_* numbers */
	uint8_t filenames_mode;
	uint8_t flags;			/* FSCRYPT_POLICY_FLAG(S)_* */
	uint8_t log2_data_unit_size;	/* v2; 0: the block size */
	uint8_t reserved[3];
	uint8_t key_spec[16];		/* v1: descriptor in the first 8 bytes */
};
/* desc NULL: a v2 key, id gets its identifier; else a v1 key under desc (8 bytes). */
int uf2fs_add_key(struct uf2fs *fs, const uint8_t *key, size_t len, const uint8_t *desc,
		  uint8_t id[16]);
/* -ENOKEY when absent. Writes dirty data first, as Linux syncs before removal. */
int uf2fs_remove_key(struct uf2fs *fs, const uint8_t *spec, size_t spec_len);
/* 1 present, 0 absent. */
int uf2fs_key_status(struct uf2fs *fs, const uint8_t *spec, size_t spec_len);
/* Inodes whose cached key info uses the key (malloc'd; for front-end caches). */
int uf2fs_key_users(struct uf2fs *fs, const uint8_t *spec, size_t spec_len, uint32_t **inos,
		    size_t *n);
/* -ENODATA for an inode that is not encrypted. */
int uf2fs_get_policy(struct uf2fs *fs, uint32_t ino, struct uf2fs_fscrypt_policy *p);
/*
 * An empty directory becomes encrypted (FS_IOC_SET_ENCRYPTION_POLICY): its
 * key must be in the mount (-ENOKEY); -EEXIST with another policy already,
 * -ENOTEMPTY, -ENOTDIR, -EINVAL for a policy Linux refuses, -EOPNOTSUPP
 * without the encrypt feature.
 */
int uf2fs_set_policy(struct uf2fs *fs, uint32_t ino, const struct uf2fs_fscrypt_policy *p);

/* The daemon's fscrypt ioctl (`uf2fs fscrypt`): one fixed-size payload, in and out. */
enum {
	UF2FS_FSCRYPT_ADD_KEY = 1,
	UF2FS_FSCRYPT_REMOVE_KEY,
	UF2FS_FSCRYPT_KEY_STATUS,
	UF2FS_FSCRYPT_GET_POLICY,
	UF2FS_FSCRYPT_SET_POLICY,
};
struct uf2fs_fscrypt_arg {
	uint32_t op;			/* UF2FS_FSCRYPT_* */
	int32_t result;			/* out: 0 / -errno; KEY_STATUS 1 present, 0 absent */
	uint32_t key_size;		/* ADD_KEY: raw key bytes (16..64) */
	uint32_t spec_size;		/* 8 (v1 descriptor) or 16 (v2 identifier) */
	uint8_t key_spec[16];		/* in: ADD_KEY v1 descriptor, REMOVE/STATUS; out: id */
	uint8_t key[64];		/* ADD_KEY: the raw key; wiped by both sides */
	struct uf2fs_fscrypt_policy policy;
};
#define UF2FS_IOC_FSCRYPT	_IOWR('U', 0x10, struct uf2fs_fscrypt_arg)

/* Private ioctl on the mount's root: the stats text. */
#define UF2FS_IOC_STATS_SIZE	16000
#define UF2FS_IOC_GET_STATS	_IOR('U', 1, char[UF2FS_IOC_STATS_SIZE])

/*
 * Private ioctls for disk quota on a live mount (FUSE has no quotactl), with
 * a fixed-size payload: GETNEXTQUOTA answers the first id >= id of a type
 * (flags UF2FS_IOC_QUOTA_FOUND, else past the last); SETQUOTA takes the
 * UF2FS_QSET_* mask in flags.
 */
struct uf2fs_ioc_quota {
	uint32_t type, id, flags, bgrace, igrace, pad;
	int64_t space, inodes;
	uint64_t bsoft, bhard, isoft, ihard;
	int64_t btime, itime;
};
#define UF2FS_IOC_QUOTA_FOUND	0x1
#define UF2FS_IOC_GETNEXTQUOTA	_IOWR('U', 2, struct uf2fs_ioc_quota)
#define UF2FS_IOC_SETQUOTA	_IOW('U', 3, struct uf2fs_ioc_quota)

/*
 * Private ioctl on any inode of a mount: who serves it, for `uf2fs umount`,
 * which waits for that daemon to exit and then checks that the image's
 * checkpoint is a newer, unmount one.
 */
#define UF2FS_IMAGE_PATH_MAX	4096
#define UF2FS_OPT_PATH_MAX	1024
struct uf2fs_mount_info {
	uint32_t version;		/* of this layout: 2 */
	int32_t pid;			/* the daemon */
	uint32_t rw;			/* read-write: the daemon writes a final checkpoint */
	uint32_t pad;
	uint64_t cp_ver;		/* checkpoint version on the image now */
	uint64_t image_dev, image_ino;	/* stat of the image: st_dev and st_ino */
	char image[UF2FS_IMAGE_PATH_MAX];	/* absolute path of the image */
	/* the -o options that say how to open it again ("": not given) */
	char format[32];
	char partition[128];
	char tls_certificates[UF2FS_OPT_PATH_MAX];
	char tls_psk_file[UF2FS_OPT_PATH_MAX];
	char tls_username[128];
};
#define UF2FS_IOC_MOUNT_INFO	_IOR('U', 4, struct uf2fs_mount_info)

#endif /* UF2FS_H */
