// SPDX-License-Identifier: GPL-2.0
/*
 * File ops: open (with O_TRUNC), read, release. open decides who caches file
 * data: by default the kernel page cache, with keep_cache since nothing but
 * this mount changes the image and, without writeback_cache, the kernel's
 * cache is write-through, so its pages stay valid across opens even on a
 * read-write mount; with -o direct_io every read and write reaches uf2fs,
 * whose folio cache is then the page cache, as in the seed benchmarks.
 *
 * Reads land in a per-thread buffer that grows to the largest request seen
 * (at most max_pages, 1 MiB) and lives as long as the worker thread, so the
 * steady state allocates nothing. Replying with fuse_reply_data from folio
 * memory would save the copy; that needs a library call that lends folios.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>

#include "fuse_priv.h"

struct fuse_read_buf {
	size_t cap;
	char data[];
};

static pthread_key_t fuse_read_buf_key;
static pthread_once_t fuse_read_buf_once = PTHREAD_ONCE_INIT;

static void fuse_read_buf_key_init(void)
{
	/* free() runs on the buffer when its worker thread exits. */
	if (pthread_key_create(&fuse_read_buf_key, free))
		abort();
}

char *fuse_uf2fs_buf(size_t size)
{
	struct fuse_read_buf *b;

	pthread_once(&fuse_read_buf_once, fuse_read_buf_key_init);
	b = pthread_getspecific(fuse_read_buf_key);
	if (b && b->cap >= size)
		return b->data;
	free(b);
	b = malloc(sizeof(*b) + size);
	pthread_setspecific(fuse_read_buf_key, b);
	if (!b)
		return NULL;
	b->cap = size;
	return b->data;
}

/*
 * FLUSH at close has nothing to do: writes reach the library synchronously
 * and report their errors there, and durability is fsync's. noflush saves
 * the round trip on every close(2) (the kernel still sends FLUSH under
 * writeback_cache, to write its dirty pages first, until fuse_op_flush
 * answers ENOSYS).
 */
void fuse_uf2fs_file_setup(const struct fuse_uf2fs *u, struct fuse_file_info *fi)
{
	fi->direct_io = u->direct_io;
	/*
	 * strictatime: each open drops the kernel's cached pages, so a read
	 * after an open reaches uf2fs, which stamps atime (the kernel keeps
	 * FUSE inodes S_NOATIME and would serve cached pages silently).
	 */
	fi->keep_cache = !u->direct_io && !u->strictatime;
	fi->noflush = 1;
	/* later reads and writes come without the open flags: remember O_DIRECT */
	fi->fh = (fi->flags & O_DIRECT) ? FUSE_FH_O_DIRECT : 0;
}

/*
 * As f2fs: direct I/O on a file with an atomic write open is refused
 * (EOPNOTSUPP), since it would bypass the staged data.
 */
bool fuse_direct_on_atomic(struct fuse_uf2fs *u, fuse_ino_t ino, const struct fuse_file_info *fi)
{
	return fi && (fi->fh & FUSE_FH_O_DIRECT) && !fi->writepage &&
	       uf2fs_is_atomic(u->fs, fuse_ino_to_f2fs(u, ino));
}

/*
 * The kernel (with FUSE_CAP_ATOMIC_O_TRUNC) leaves O_TRUNC to open, saving a
 * SETATTR. Truncation stamps mtime even when the file is already empty, as
 * open(2) does on Linux; the library stamps ctime.
 */
static int fuse_open_truncate(struct fuse_uf2fs *u, uint32_t ino)
{
	struct uf2fs_attr attr = { .size = 0 }, out;

	return uf2fs_setattr(u->fs, ino, &attr, UF2FS_SET_SIZE | UF2FS_SET_MTIME_NOW, &out);
}

void fuse_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	uint32_t f2fs_ino = fuse_ino_to_f2fs(u, ino);
	int ret;

	if (((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) &&
	    fuse_uf2fs_refuse_ro(req, u))
		return;
	ret = uf2fs_open(u->fs, f2fs_ino, fi->flags);
	if (ret == 0 && (fi->flags & O_TRUNC)) {
		/*
		 * Without V2 the kernel drops ATTR_KILL_SUID for an atomic
		 * O_TRUNC open (fuse_setattr with ATTR_OPEN); root stands in
		 * for CAP_FSETID then.
		 */
		bool kill = fuse_idmap_fakeroot() ? false :
			    u->killpriv_v2 ? fuse_killpriv_request_flag() : !fuse_caller_is_root(req);

		ret = fuse_open_truncate(u, f2fs_ino);
		if (ret == 0 && kill)
			ret = fuse_kill_suidgid(req, u, ino);
		if (ret < 0)
			uf2fs_release(u->fs, f2fs_ino, fi->flags);
	}
	if (ret < 0) {
		fuse_op_error(req, ret);
		return;
	}
	/*
	 * Under writeback_cache the kernel reads back what it wrote from its
	 * own pages and never asks us: the atime a read would stamp (relatime,
	 * xfstests generic/003) is stamped at a read-only open instead, and
	 * the kernel told to fetch it. Not at O_RDWR: the kernel sends O_WRONLY
	 * opens as O_RDWR in this mode, and an open to write and fsync must
	 * leave atime alone (generic/392, 468). Cached reads through an O_RDWR
	 * descriptor thus leave atime as it was.
	 */
	if (u->writeback_cache && (fi->flags & O_ACCMODE) == O_RDONLY &&
	    uf2fs_touch_atime(u->fs, f2fs_ino) > 0)
		fuse_uf2fs_inval_attr(u, ino);
	fuse_uf2fs_file_setup(u, fi);
	/*
	 * Under writeback_cache write(2) would succeed into the kernel's pages
	 * and the refusal come only at write-back, where nobody sees it: such a
	 * file's writable opens bypass the kernel's cache, so write(2) fails.
	 */
	if (u->writeback_cache && (fi->flags & O_ACCMODE) != O_RDONLY &&
	    uf2fs_writes_refused(u->fs, f2fs_ino))
		fi->direct_io = 1;
	/* The open was interrupted: no release will follow, so undo it now. */
	if (fuse_reply_open(req, fi) == -ENOENT)
		uf2fs_release(u->fs, f2fs_ino, fi->flags);
}

/* The reply goes straight from the library's folios to /dev/fuse (one copy). */
struct fuse_read_reply {
	fuse_req_t req;
	bool replied;		/* fuse_reply_iov consumed the request, whatever it returned */
};

static int fuse_read_emit(void *arg, const struct iovec *iov, int cnt)
{
	struct fuse_read_reply *r = arg;

	r->replied = true;
	return fuse_reply_iov(r->req, iov, cnt) ? -1 : 0;
}

static unsigned int fuse_page_read_bit(fuse_ino_t ino)
{
	return (unsigned int)((ino * 0x9e3779b97f4a7c15ull) >> 52);	/* 12 bits */
}

void fuse_page_read_note(struct fuse_uf2fs *u, fuse_ino_t ino)
{
	unsigned int b = fuse_page_read_bit(ino);
	uint64_t m = 1ull << (b % 64);

	/* a load first: the word is shared, and set bits stay set */
	if (!(atomic_load(&u->page_read[b / 64]) & m))
		atomic_fetch_or(&u->page_read[b / 64], m);
}

bool fuse_page_read_seen(struct fuse_uf2fs *u, fuse_ino_t ino)
{
	unsigned int b = fuse_page_read_bit(ino);

	return atomic_load(&u->page_read[b / 64]) & (1ull << (b % 64));
}

void fuse_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		  struct fuse_file_info *fi)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	struct fuse_read_reply r = { req, false };
	ssize_t n;

	if (fuse_direct_on_atomic(u, ino, fi)) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (!(fi->fh & FUSE_FH_O_DIRECT) && !u->direct_io)
		fuse_page_read_note(u, ino);
	n = uf2fs_read_iov(u->fs, fuse_ino_to_f2fs(u, ino), size, off, fuse_read_emit, &r);
	if (n < 0 && !r.replied)
		fuse_op_error(req, n);
}

void fuse_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);

	uf2fs_release(u->fs, fuse_ino_to_f2fs(u, ino), fi->flags);
	fuse_reply_err(req, 0);
}
