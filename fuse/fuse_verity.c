// SPDX-License-Identifier: GPL-2.0
/*
 * fs-verity ioctls through FUSE_IOCTL, so `fsverity enable|measure` work on a
 * mount unchanged.
 *
 * What the kernel carries (fs/fuse/ioctl.c, fuse_do_ioctl): FUSE ioctls are
 * "restricted", sized from _IOC_SIZE(cmd), except for two special cases.
 * FS_IOC_ENABLE_VERITY: fuse_setup_enable_verity() adds the caller's salt
 * and signature buffers as further input iovecs, so in_buf is the 128-byte
 * struct fsverity_enable_arg, then salt_size bytes of salt, then sig_size
 * bytes of signature. FS_IOC_MEASURE_VERITY: fuse_setup_measure_verity()
 * sizes the one in/out iovec as struct fsverity_digest plus the caller's
 * digest_size, so the reply can carry the digest.
 *
 * FS_IOC_READ_VERITY_METADATA has no such case: only its 40-byte argument
 * travels, never the buffer at buf_ptr. The daemon writes that buffer into
 * the caller's memory itself (process_vm_writev, as root or as the caller's
 * owner), as fuse_ioctl.c reads F2FS_IOC_SHUTDOWN's mode; where it may not,
 * the caller gets EFAULT. The byte count is the ioctl's return value, which
 * FUSE does carry.
 *
 * Linux checks file_permission(MAY_WRITE) before enabling, in the
 * filesystem's ioctl, which FUSE does not run: the check is made here.
 */
#include <linux/fsverity.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "fuse_priv.h"

#define VERITY_ARG_SIZE		sizeof(struct fsverity_enable_arg)
#define VERITY_MD_CHUNK		(1u << 20)

static int verity_enable(fuse_req_t req, fuse_ino_t ino, uint32_t f2fs_ino, const void *in_buf,
			 size_t in_bufsz)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	struct fsverity_enable_arg a;
	struct uf2fs_verity_arg va = { 0 };
	int ret;

	if (in_bufsz < VERITY_ARG_SIZE)
		return -EINVAL;
	memcpy(&a, in_buf, sizeof(a));
	/* fsverity_ioctl_enable's argument checks, in its order */
	if (a.version != 1)
		return -EINVAL;
	if (a.__reserved1)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(a.__reserved2) / sizeof(a.__reserved2[0]); i++)
		if (a.__reserved2[i])
			return -EINVAL;
	if (!a.block_size || (a.block_size & (a.block_size - 1)))
		return -EINVAL;
	if (a.salt_size > sizeof(((struct fsverity_descriptor *)0)->salt) || a.sig_size > 16128)
		return -EMSGSIZE;
	if (in_bufsz < VERITY_ARG_SIZE + a.salt_size + a.sig_size)
		return -EFAULT;	/* a kernel without fuse_setup_enable_verity() */
	/*
	 * The write-permission check sees the caller as the image's owners do
	 * (-o uid=, gid=); root and fakeroot callers pass it, as with
	 * CAP_DAC_OVERRIDE.
	 */
	va.check_caller = !fuse_caller_is_root(req);
	va.caller_uid = fuse_idmap_uid_in(fuse_req_ctx(req)->uid);
	va.caller_gid = fuse_idmap_gid_in(fuse_req_ctx(req)->gid);
	va.hash_algorithm = a.hash_algorithm;
	va.block_size = a.block_size;
	va.salt = (const uint8_t *)in_buf + VERITY_ARG_SIZE;
	va.salt_size = a.salt_size;
	va.sig = (const uint8_t *)in_buf + VERITY_ARG_SIZE + a.salt_size;
	va.sig_size = a.sig_size;
	ret = uf2fs_enable_verity(u->fs, f2fs_ino, &va);
	if (!ret)
		fuse_uf2fs_inval_attr(u, ino);	/* ctime and the flag changed */
	return ret;
}

static void verity_measure(fuse_req_t req, uint32_t f2fs_ino, const void *in_buf,
			   size_t in_bufsz, size_t out_bufsz)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	struct {
		struct fsverity_digest d;
		uint8_t digest[64];
	} out;
	struct fsverity_digest in;
	uint16_t alg, size;
	int ret;

	if (in_bufsz < sizeof(in) || out_bufsz < sizeof(in)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	memcpy(&in, in_buf, sizeof(in));
	ret = uf2fs_measure_verity(u->fs, f2fs_ino, &alg, out.digest, &size);
	/* fsverity_ioctl_measure: the caller says how much room it has */
	if (!ret && (in.digest_size < size || out_bufsz < sizeof(in) + size))
		ret = -EOVERFLOW;
	if (ret) {
		fuse_op_error(req, ret);
		return;
	}
	out.d.digest_algorithm = alg;
	out.d.digest_size = size;
	fuse_reply_ioctl(req, 0, &out, sizeof(out.d) + size);
}

static ssize_t verity_copy_out(fuse_req_t req, uint64_t dst, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)dst, len };

	if (!len)
		return 0;
	return process_vm_writev(fuse_req_ctx(req)->pid, &local, 1, &remote, 1, 0) ==
	       (ssize_t)len ? (ssize_t)len : -EFAULT;
}

static void verity_read_metadata(fuse_req_t req, uint32_t f2fs_ino, const void *in_buf,
				 size_t in_bufsz)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	struct fsverity_read_metadata_arg a;
	ssize_t n;
	void *buf;

	if (in_bufsz < sizeof(a)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	memcpy(&a, in_buf, sizeof(a));
	if (a.__reserved || a.offset + a.length < a.offset) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* a shorter count is fine: callers loop until 0, as fsverity dump_metadata does */
	a.length = a.length < VERITY_MD_CHUNK ? a.length : VERITY_MD_CHUNK;
	buf = malloc(a.length ? a.length : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = uf2fs_read_verity_metadata(u->fs, f2fs_ino, a.metadata_type, a.offset, buf,
				       a.length);
	if (n > 0)
		n = verity_copy_out(req, a.buf_ptr, buf, (size_t)n);
	free(buf);
	if (n < 0)
		fuse_op_error(req, (int)n);
	else
		fuse_reply_ioctl(req, (int)n, NULL, 0);
}

bool fuse_ioctl_verity(fuse_req_t req, fuse_ino_t ino, uint32_t f2fs_ino, unsigned int cmd,
		       const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	int ret;

	switch (cmd) {
	case (unsigned int)FS_IOC_ENABLE_VERITY:
		ret = verity_enable(req, ino, f2fs_ino, in_buf, in_bufsz);
		if (ret)
			fuse_op_error(req, ret);
		else
			fuse_reply_ioctl(req, 0, NULL, 0);
		return true;
	case (unsigned int)FS_IOC_MEASURE_VERITY:
		verity_measure(req, f2fs_ino, in_buf, in_bufsz, out_bufsz);
		return true;
	case (unsigned int)FS_IOC_READ_VERITY_METADATA:
		verity_read_metadata(req, f2fs_ino, in_buf, in_bufsz);
		return true;
	}
	return false;
}
