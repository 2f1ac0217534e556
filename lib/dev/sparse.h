/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Android sparse images (the "simg" format of img2simg and fastboot) read in
 * place: a chunk index built once at open, then random-access reads served by
 * binary search on it; its checksums verified on request. See lib/dev/sparse.c.
 */
#ifndef UF2FS_SPARSE_H
#define UF2FS_SPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define F2FS_SPARSE_MAGIC	0xed26ff3aU

struct f2fs_sparse;

/* True if the first bytes of a file (at least 4 of them) carry the sparse magic. */
bool f2fs_sparse_magic(const void *head, size_t len);

/*
 * Index a sparse image held in a file (fd >= 0, size bytes) or in memory
 * (fd < 0, mem). On a malformed header or chunk table, returns -EINVAL with
 * what is wrong in err. The image is never modified.
 */
int f2fs_sparse_open(int fd, const uint8_t *mem, uint64_t size, struct f2fs_sparse **out,
		     char *err, size_t errlen);
void f2fs_sparse_close(struct f2fs_sparse *sp);

/* Bytes of the expanded (raw) image: total_blks * blk_sz. */
uint64_t f2fs_sparse_size(const struct f2fs_sparse *sp);
unsigned int f2fs_sparse_nr_chunks(const struct f2fs_sparse *sp);

/*
 * Check the CRC32 chunks and a non-zero header image_checksum against the
 * expanded data: 0 (a summary in msg) or -EBADMSG at the first mismatch.
 */
int f2fs_sparse_verify(struct f2fs_sparse *sp, char *msg, size_t msglen);

/* Read len bytes of the expanded image at off; -EIO past its end. */
int f2fs_sparse_pread(struct f2fs_sparse *sp, void *buf, size_t len, uint64_t off);

#endif
