// SPDX-License-Identifier: GPL-2.0
/*
 * Writing a NEW Android sparse image from a raw f2fs image, with Debian's
 * libsparse doing the format. What f2fs knows and img2simg cannot: which
 * blocks of the main area hold nothing (clear in the SIT valid bitmaps).
 * Those become DONT_CARE, however stale their bytes; the metadata area and
 * every valid block are kept, a block of one repeated 32-bit value as a FILL
 * chunk, anything else as RAW data that libsparse copies from the image when
 * it writes. Writing into a sparse image in place stays refused (lib/dev.c):
 * this is the way to get an edited image back into sparse form.
 */
#include <android/sparse/sparse.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "f2fs.h"

/* The block's pattern if it is one 32-bit value repeated. */
static bool block_is_fill(const uint8_t *b, uint32_t *val)
{
	memcpy(val, b, 4);
	for (unsigned int i = 4; i < F2FS_BLKSIZE; i += 4)
		if (memcmp(b + i, b, 4))
			return false;
	return true;
}

enum run_kind { RUN_NONE, RUN_DATA, RUN_FILL };

struct sparse_run {
	enum run_kind kind;
	uint32_t fill;
	block_t start, len;
};

static int run_flush(struct sparse_file *s, int fd, struct sparse_run *r,
		     struct uf2fs_sparse_report *rep)
{
	unsigned int bytes = r->len * F2FS_BLKSIZE;
	int ret = 0;

	if (r->kind == RUN_DATA) {
		ret = sparse_file_add_fd(s, fd, (int64_t)r->start * F2FS_BLKSIZE, bytes, r->start);
		rep->data_blocks += r->len;
	} else if (r->kind == RUN_FILL) {
		ret = sparse_file_add_fill(s, r->fill, bytes, r->start);
		rep->fill_blocks += r->len;
	}
	r->kind = RUN_NONE;
	r->len = 0;
	return ret ? -ENOMEM : 0;
}

/* Add one kept block, extending the current run where it can. */
static int keep_block(struct sparse_file *s, int fd, struct sparse_run *r, block_t blk,
		      const uint8_t *b, struct uf2fs_sparse_report *rep)
{
	uint32_t val;
	bool fill = block_is_fill(b, &val);
	enum run_kind kind = fill ? RUN_FILL : RUN_DATA;
	int ret;

	/* a run stays under 64 MiB: libsparse takes lengths as unsigned int */
	if (r->kind == kind && r->start + r->len == blk && (!fill || val == r->fill) &&
	    r->len < 16384) {
		r->len++;
		return 0;
	}
	ret = run_flush(s, fd, r, rep);
	r->kind = kind;
	r->fill = val;
	r->start = blk;
	r->len = 1;
	return ret;
}

static int add_blocks(struct f2fs_sb_info *sbi, struct sparse_file *s, int fd,
		      struct uf2fs_sparse_report *rep)
{
	struct sparse_run r = { RUN_NONE, 0, 0, 0 };
	const unsigned int batch = 256;
	uint8_t *b = malloc((size_t)batch * F2FS_BLKSIZE);
	int ret = 0;

	if (!b)
		return -ENOMEM;
	for (block_t at = 0; at < sbi->block_count && !ret; at += batch) {
		unsigned int n = sbi->block_count - at < batch ? sbi->block_count - at : batch;

		ret = f2fs_dev_read_blocks(&sbi->dev, b, at, n);
		for (unsigned int i = 0; i < n && !ret; i++) {
			block_t blk = at + i;

			/* meta area (super blocks, CP, SIT, NAT, SSA) whole; main: valid blocks */
			if (blk >= sbi->main_blkaddr && !f2fs_block_is_valid(sbi, blk)) {
				rep->dont_care_blocks++;
				ret = run_flush(s, fd, &r, rep);
			} else {
				ret = keep_block(s, fd, &r, blk, b + (size_t)i * F2FS_BLKSIZE, rep);
			}
		}
	}
	if (!ret)
		ret = run_flush(s, fd, &r, rep);
	free(b);
	return ret;
}

int uf2fs_write_sparse(struct uf2fs *fs, int out_fd, struct uf2fs_sparse_report *rep)
{
	struct f2fs_sb_info *sbi = (struct f2fs_sb_info *)fs;
	struct sparse_file *s;
	int ret;

	memset(rep, 0, sizeof(*rep));
	if (sbi->dev.fd < 0 || sbi->dev.priv)
		return f2fs_error(sbi, EINVAL, "a sparse image is written from a raw image file, "
				  "not from a sparse image or from memory");
	/* blocks past the checkpoint would be lost: they are not valid in the SIT yet */
	if (sbi->need_recovery)
		return f2fs_error(sbi, EAGAIN, "the image holds fsync'd data past its last "
				  "checkpoint: mount it read-write once to roll it forward");
	s = sparse_file_new(F2FS_BLKSIZE, (int64_t)sbi->block_count * F2FS_BLKSIZE);
	if (!s)
		return -ENOMEM;
	ret = add_blocks(sbi, s, sbi->dev.fd, rep);
	if (!ret && sparse_file_write(s, out_fd, false, true, false) < 0)
		ret = f2fs_error(sbi, EIO, "libsparse could not write the sparse image");
	sparse_file_destroy(s);
	return ret;
}
