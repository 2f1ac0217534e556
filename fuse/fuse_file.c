// SPDX-License-Identifier: GPL-2.0
/*
 * File ops: open, read, release. open decides who caches file data: by
 * default the kernel page cache (keep_cache: nothing changes the image, so
 * pages stay valid across opens); with -o direct_io every read reaches uf2fs,
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

static char *fuse_read_buf_get(size_t size)
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

void fuse_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	uint32_t f2fs_ino = fuse_ino_to_f2fs(u, ino);
	int ret;

	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
		fuse_reply_err(req, EROFS);
		return;
	}
	ret = uf2fs_open(u->fs, f2fs_ino, fi->flags);
	if (ret < 0) {
		fuse_op_error(req, ret);
		return;
	}
	fi->direct_io = u->direct_io;
	fi->keep_cache = !u->direct_io;
	/* The open was interrupted: no release will follow, so undo it now. */
	if (fuse_reply_open(req, fi) == -ENOENT)
		uf2fs_release(u->fs, f2fs_ino);
}

void fuse_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		  struct fuse_file_info *fi)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	ssize_t n;
	char *buf;

	buf = fuse_read_buf_get(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = uf2fs_read(u->fs, fuse_ino_to_f2fs(u, ino), buf, size, off);
	if (n < 0)
		fuse_op_error(req, n);
	else
		fuse_reply_buf(req, buf, n);
}

void fuse_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);

	uf2fs_release(u->fs, fuse_ino_to_f2fs(u, ino));
	fuse_reply_err(req, 0);
}
