// SPDX-License-Identifier: GPL-2.0
/*
 * An LD_PRELOAD shim that serves the regular files under a directory prefix
 * from an f2fs image through libuf2fs, with no FUSE in between. It exists
 * to run POSIX test programs (xfstests' fsx) against the library directly,
 * and so to reach what the kernel's FUSE does not pass on: fallocate
 * COLLAPSE_RANGE and INSERT_RANGE.
 *
 *   UF2FS_PRELOAD_IMAGE  the image (required); mounted read-write at the
 *                        first open under the prefix, unmounted at exit
 *   UF2FS_PRELOAD_DIR    the prefix (default /uf2fs); /uf2fs/a/b is a/b
 *   UF2FS_PRELOAD_CACHE_MB, UF2FS_PRELOAD_FOLIO_ORDER   library options
 *                        (a small cache evicts, order 0 splits every write)
 *
 * Covered for those files: open/open64 (O_CREAT, O_EXCL, O_TRUNC), close,
 * read, write, pread, pwrite, preadv2/pwritev2 without flags, lseek
 * (SET/CUR/END), ftruncate, fallocate, fstat, fsync, fdatasync, unlink, and
 * copy_file_range through syscall(). mmap answers ENODEV and ioctl ENOTTY,
 * so fsx runs with -R -W. Single-threaded callers only. The shim removes
 * itself from LD_PRELOAD, so that children (fsx runs "echo 3 >
 * drop_caches" through system()) do not mount the image a second time.
 *
 * Not part of the library or the daemon; tests/lib/build-preload.sh builds it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "uf2fs/uf2fs.h"

#define MAX_FDS 1024
#define MIN(a, b) ((a) < (b) ? (a) : (b))

struct shim_file {
	bool used;
	uint32_t ino;
	uint64_t pos;
	bool append;
	int flags;		/* of the open, for uf2fs_release */
};

static struct uf2fs *fs;
static struct shim_file files[MAX_FDS];
static const char *prefix = "/uf2fs";

#define REAL(name) ((__typeof__(&name))real_sym(#name))

static void *real_sym(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);

	if (!p) {
		fprintf(stderr, "uf2fs preload: no %s\n", name);
		abort();
	}
	return p;
}

__attribute__((constructor)) static void shim_init(void)
{
	const char *d = getenv("UF2FS_PRELOAD_DIR");

	if (d && *d)
		prefix = d;
	unsetenv("LD_PRELOAD");
}

__attribute__((destructor)) static void shim_fini(void)
{
	int ret;

	if (!fs)
		return;
	for (int i = 0; i < MAX_FDS; i++)
		if (files[i].used)
			uf2fs_release(fs, files[i].ino, files[i].flags);
	ret = uf2fs_unmount(fs);
	if (ret)
		fprintf(stderr, "uf2fs preload: unmount: %s\n", strerror(-ret));
}

static int fail(int err)
{
	errno = err;
	return -1;
}

static struct shim_file *ours(int fd)
{
	return fd >= 0 && fd < MAX_FDS && files[fd].used ? &files[fd] : NULL;
}

/* The path inside the image, or NULL when the path is not under the prefix. */
static const char *inner_path(const char *path)
{
	size_t l = strlen(prefix);

	if (!path || strncmp(path, prefix, l) || (path[l] != '/' && path[l]))
		return NULL;
	return path + l;
}

static int mount_once(void)
{
	struct uf2fs_options o;
	int ret;

	if (fs)
		return 0;
	uf2fs_default_options(&o);
	o.device = getenv("UF2FS_PRELOAD_IMAGE");
	if (!o.device)
		return -EINVAL;
	o.read_only = false;
	if (getenv("UF2FS_PRELOAD_CACHE_MB"))
		o.cache_size = strtoull(getenv("UF2FS_PRELOAD_CACHE_MB"), NULL, 0) << 20;
	if (getenv("UF2FS_PRELOAD_FOLIO_ORDER"))
		o.max_folio_order = atoi(getenv("UF2FS_PRELOAD_FOLIO_ORDER"));
	ret = uf2fs_mount(&o, &fs);
	if (ret)
		fprintf(stderr, "uf2fs preload: mount %s: %s\n", o.device, uf2fs_last_error(NULL));
	return ret;
}

/* Directory inode and last component of an inner path. */
static int parent_of(const char *inner, uint32_t *dir, const char **name)
{
	const char *slash = strrchr(inner, '/');
	char parent[4096];

	*name = slash ? slash + 1 : inner;
	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - inner) : 0, inner);
	return uf2fs_resolve(fs, parent, dir);
}

static int shim_open(const char *inner, int flags, mode_t mode)
{
	struct uf2fs_attr a = { 0 };
	const char *name;
	uint32_t dir, ino;
	int ret = mount_once(), fd;

	if (!ret)
		ret = parent_of(inner, &dir, &name);
	if (!ret) {
		ret = uf2fs_lookup(fs, dir, name, strlen(name), &ino);
		if (!ret && (flags & O_CREAT) && (flags & O_EXCL))
			ret = -EEXIST;
		else if (ret == -ENOENT && (flags & O_CREAT))
			ret = uf2fs_mknod(fs, dir, name, strlen(name), S_IFREG | (mode & 07777),
					  getuid(), getgid(), 0, &ino);
	}
	if (!ret)
		ret = uf2fs_getattr(fs, ino, &a);
	if (!ret && !S_ISREG(a.mode))
		ret = S_ISDIR(a.mode) ? -EISDIR : -EOPNOTSUPP;
	if (!ret && (flags & O_TRUNC) && a.size) {
		a.size = 0;
		ret = uf2fs_setattr(fs, ino, &a, UF2FS_SET_SIZE, NULL);
	}
	if (ret)
		return fail(-ret);
	/* a real descriptor keeps the number ours until close */
	fd = REAL(open)("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fd >= MAX_FDS) {
		REAL(close)(fd);
		return fail(EMFILE);
	}
	ret = uf2fs_open(fs, ino, flags);
	if (ret) {
		REAL(close)(fd);
		return fail(-ret);
	}
	files[fd] = (struct shim_file){ .used = true, .ino = ino, .append = flags & O_APPEND,
				       .flags = flags };
	return fd;
}

/* The mode argument of open, present only when the flags create a file. */
#define OPEN_MODE(flags) ({						\
	mode_t __mode = 0;						\
	va_list __ap;							\
	if ((flags) & (O_CREAT | O_TMPFILE)) {				\
		va_start(__ap, flags);					\
		__mode = va_arg(__ap, mode_t);				\
		va_end(__ap);						\
	}								\
	__mode;								\
})

int open(const char *path, int flags, ...)
{
	const char *inner = inner_path(path);

	return inner ? shim_open(inner, flags, OPEN_MODE(flags))
		     : REAL(open)(path, flags, OPEN_MODE(flags));
}

int open64(const char *path, int flags, ...)
{
	const char *inner = inner_path(path);

	return inner ? shim_open(inner, flags, OPEN_MODE(flags))
		     : REAL(open64)(path, flags, OPEN_MODE(flags));
}

int close(int fd)
{
	struct shim_file *f = ours(fd);

	if (f) {
		uf2fs_release(fs, f->ino, f->flags);
		f->used = false;
	}
	return REAL(close)(fd);
}

int unlink(const char *path)
{
	const char *inner = inner_path(path), *name;
	uint32_t dir;
	int ret;

	if (!inner)
		return REAL(unlink)(path);
	ret = mount_once();
	if (!ret)
		ret = parent_of(inner, &dir, &name);
	if (!ret)
		ret = uf2fs_unlink(fs, dir, name, strlen(name));
	return ret ? fail(-ret) : 0;
}

static ssize_t rw_at(struct shim_file *f, void *buf, size_t len, uint64_t off, bool wr)
{
	ssize_t n;

	if (wr && f->append) {
		struct uf2fs_attr a;

		if (uf2fs_getattr(fs, f->ino, &a) == 0)
			off = a.size;
	}
	n = wr ? uf2fs_write(fs, f->ino, buf, len, off) : uf2fs_read(fs, f->ino, buf, len, off);
	return n < 0 ? fail(-n) : n;
}

ssize_t read(int fd, void *buf, size_t len)
{
	struct shim_file *f = ours(fd);
	ssize_t n;

	if (!f)
		return REAL(read)(fd, buf, len);
	n = rw_at(f, buf, len, f->pos, false);
	if (n > 0)
		f->pos += n;
	return n;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	struct shim_file *f = ours(fd);
	ssize_t n;

	if (!f)
		return REAL(write)(fd, buf, len);
	n = rw_at(f, (void *)buf, len, f->pos, true);
	if (n > 0)
		f->pos += n;
	return n;
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	struct shim_file *f = ours(fd);

	if (!f)
		return REAL(pread)(fd, buf, len, off);
	return off < 0 ? fail(EINVAL) : rw_at(f, buf, len, off, false);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	struct shim_file *f = ours(fd);

	if (!f)
		return REAL(pwrite)(fd, buf, len, off);
	return off < 0 ? fail(EINVAL) : rw_at(f, (void *)buf, len, off, true);
}

ssize_t pread64(int fd, void *buf, size_t len, off64_t off)
{
	return ours(fd) ? pread(fd, buf, len, off) : REAL(pread64)(fd, buf, len, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off64_t off)
{
	return ours(fd) ? pwrite(fd, buf, len, off) : REAL(pwrite64)(fd, buf, len, off);
}

/* One iovec at a time; RWF_* flags (DONTCACHE, ATOMIC) are not offered. */
static ssize_t rw_vec(struct shim_file *f, const struct iovec *iov, int cnt, off_t off,
		      int flags, bool wr)
{
	ssize_t done = 0;

	if (flags)
		return fail(EOPNOTSUPP);
	for (int i = 0; i < cnt; i++) {
		uint64_t at = off == -1 ? f->pos : (uint64_t)off + done;
		ssize_t n = rw_at(f, iov[i].iov_base, iov[i].iov_len, at, wr);

		if (n < 0)
			return done ? done : n;
		done += n;
		if (off == -1)
			f->pos += n;
		if ((size_t)n < iov[i].iov_len)
			break;
	}
	return done;
}

ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	struct shim_file *f = ours(fd);

	if (!f)
		return REAL(preadv2)(fd, iov, cnt, off, flags);
	return rw_vec(f, iov, cnt, off, flags, false);
}

ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	struct shim_file *f = ours(fd);

	if (!f)
		return REAL(pwritev2)(fd, iov, cnt, off, flags);
	return rw_vec(f, iov, cnt, off, flags, true);
}

ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
	return ours(fd) ? preadv2(fd, iov, cnt, off, flags)
			: REAL(preadv64v2)(fd, iov, cnt, off, flags);
}

ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
	return ours(fd) ? pwritev2(fd, iov, cnt, off, flags)
			: REAL(pwritev64v2)(fd, iov, cnt, off, flags);
}

off_t lseek(int fd, off_t off, int whence)
{
	struct shim_file *f = ours(fd);
	struct uf2fs_attr a;
	int64_t base;
	int ret;

	if (!f)
		return REAL(lseek)(fd, off, whence);
	if (whence == SEEK_SET) {
		base = 0;
	} else if (whence == SEEK_CUR) {
		base = f->pos;
	} else if (whence == SEEK_END) {
		ret = uf2fs_getattr(fs, f->ino, &a);
		if (ret)
			return fail(-ret);
		base = a.size;
	} else {
		return fail(EINVAL);
	}
	if (base + off < 0)
		return fail(EINVAL);
	f->pos = base + off;
	return f->pos;
}

off64_t lseek64(int fd, off64_t off, int whence)
{
	return ours(fd) ? lseek(fd, off, whence) : REAL(lseek64)(fd, off, whence);
}

int ftruncate(int fd, off_t size)
{
	struct shim_file *f = ours(fd);
	struct uf2fs_attr a = { .size = size };
	int ret;

	if (!f)
		return REAL(ftruncate)(fd, size);
	if (size < 0)
		return fail(EINVAL);
	ret = uf2fs_setattr(fs, f->ino, &a, UF2FS_SET_SIZE, NULL);
	return ret ? fail(-ret) : 0;
}

int ftruncate64(int fd, off64_t size)
{
	return ours(fd) ? ftruncate(fd, size) : REAL(ftruncate64)(fd, size);
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
	struct shim_file *f = ours(fd);
	int ret;

	if (!f)
		return REAL(fallocate)(fd, mode, off, len);
	if (off < 0 || len <= 0)
		return fail(EINVAL);
	ret = uf2fs_fallocate(fs, f->ino, mode, off, len);
	return ret ? fail(-ret) : 0;
}

int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
	return ours(fd) ? fallocate(fd, mode, off, len) : REAL(fallocate64)(fd, mode, off, len);
}

static int shim_fstat(struct shim_file *f, struct stat *st)
{
	struct uf2fs_attr a;
	int ret = uf2fs_getattr(fs, f->ino, &a);

	if (ret)
		return fail(-ret);
	memset(st, 0, sizeof(*st));
	st->st_ino = a.ino;
	st->st_mode = a.mode;
	st->st_nlink = a.nlink;
	st->st_uid = a.uid;
	st->st_gid = a.gid;
	st->st_size = a.size;
	st->st_blocks = a.blocks;
	st->st_blksize = 4096;
	st->st_atim = a.atime;
	st->st_mtim = a.mtime;
	st->st_ctim = a.ctime;
	return 0;
}

int fstat(int fd, struct stat *st)
{
	struct shim_file *f = ours(fd);

	return f ? shim_fstat(f, st) : REAL(fstat)(fd, st);
}

int fstat64(int fd, struct stat64 *st)
{
	struct shim_file *f = ours(fd);

	/* struct stat64 is struct stat on 64-bit Linux */
	return f ? shim_fstat(f, (struct stat *)st) : REAL(fstat64)(fd, st);
}

int fsync(int fd)
{
	struct shim_file *f = ours(fd);
	int ret;

	if (!f)
		return REAL(fsync)(fd);
	ret = uf2fs_fsync(fs, f->ino, false);
	return ret ? fail(-ret) : 0;
}

int fdatasync(int fd)
{
	struct shim_file *f = ours(fd);
	int ret;

	if (!f)
		return REAL(fdatasync)(fd);
	ret = uf2fs_fsync(fs, f->ino, true);
	return ret ? fail(-ret) : 0;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (ours(fd)) {
		errno = ENODEV;
		return MAP_FAILED;
	}
	return REAL(mmap)(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (ours(fd))
		return fail(ENOTTY);
	return REAL(ioctl)(fd, req, arg);
}

/* copy_file_range through the library: read, then write, in 1 MiB steps. */
static long shim_copy_range(int in, loff_t *off_in, int out, loff_t *off_out, size_t len)
{
	struct shim_file *fi = ours(in), *fo = ours(out);
	static char buf[1 << 20];
	uint64_t ri, wo;
	long done = 0;

	if (!fi || !fo)
		return fail(EXDEV);
	ri = off_in ? (uint64_t)*off_in : fi->pos;
	wo = off_out ? (uint64_t)*off_out : fo->pos;
	while ((size_t)done < len) {
		ssize_t r = rw_at(fi, buf, MIN(len - done, sizeof(buf)), ri + done, false), w;

		if (r <= 0) {
			if (r < 0 && !done)
				return -1;
			break;
		}
		w = rw_at(fo, buf, r, wo + done, true);
		if (w < 0)
			return done ? done : -1;
		done += w;
		if (w < r)
			break;
	}
	if (off_in)
		*off_in += done;
	else
		fi->pos += done;
	if (off_out)
		*off_out += done;
	else
		fo->pos += done;
	return done;
}

long syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == __NR_copy_file_range && (ours(a[0]) || ours(a[2])))
		return shim_copy_range(a[0], (loff_t *)a[1], a[2], (loff_t *)a[3], a[4]);
	return REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
