/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the backends of the device layer share, private to lib/dev/: the
 * file-descriptor helpers (psync.c) that io_uring, RAM and sparse reuse, and
 * each backend's way in, called by core.c's f2fs_dev_open.
 */
#ifndef UF2FS_DEV_BACKEND_H
#define UF2FS_DEV_BACKEND_H

#include "dev.h"

size_t dev_iov_bytes(const struct iovec *iov, int cnt);

/* psync.c: the image file or block device behind dev->fd */
int dev_fd_open(struct f2fs_dev *dev, const char *path);
int dev_rw_full(int fd, const struct iovec *iov, int cnt, uint64_t off, bool write);
int dev_fd_flush(struct f2fs_dev *dev);
int dev_fd_discard(struct f2fs_dev *dev, uint64_t off, uint64_t len);
void dev_fd_close(struct f2fs_dev *dev);
extern const struct f2fs_dev_ops dev_psync_ops;

/* uring.c */
extern const struct f2fs_dev_ops dev_uring_ops;

/* ram.c: the image in memory, with the power-cut model */
int dev_ram_open(struct f2fs_dev *dev, const struct uf2fs_options *opts);

/*
 * sparse.c: if the file (dev->fd) or the bytes (mem) are an Android sparse
 * image, index it and switch to the sparse layer: 1. Not sparse: 0. Refused
 * or corrupt: < 0, with the reason in dev->open_error.
 */
int dev_sparse_probe(struct f2fs_dev *dev, const uint8_t *mem, uint64_t size);

/* part.c: make dev a window over the partition named (-o partition=NAME|N) */
int dev_part_select(struct f2fs_dev *dev, const char *want);
/*
 * nbd.c: NBD URIs and VM disks (through qemu-nbd). dev_vm_format: the qemu
 * format of image (probed, or -o format=), NULL for a raw file.
 */
bool dev_is_nbd_uri(const char *image);
const char *dev_vm_format(const char *image, const struct uf2fs_options *opts);
/* The VM disk format whose magic the file open at fd starts with, or NULL. */
const char *dev_fd_vm_format(int fd);
int dev_nbd_open(struct f2fs_dev *dev, const struct uf2fs_options *opts, const char *format);

/* zoned.c: the write-pointer rule (core.c's writes and discards) */
int dev_zones_write(struct f2fs_dev *dev, uint64_t off, uint64_t len);
int dev_zones_written(struct f2fs_dev *dev, uint64_t off, uint64_t len);
int dev_zones_reset(struct f2fs_dev *dev, uint64_t off, uint64_t len);
int dev_zones_discard(struct f2fs_dev *dev, uint64_t off, uint64_t len);

#endif
