// SPDX-License-Identifier: GPL-2.0
/*
 * FS_IOC_READ_VERITY_METADATA (the kernel's fs/verity/read_metadata.c): the
 * Merkle tree, the descriptor as it is hashed (sig_size 0), or the builtin
 * signature, from an offset.
 */
#include <linux/fsverity.h>
#include <stdlib.h>
#include <string.h>

#include "fsverity_private.h"

/* The descriptor (or signature) bytes: *total of them at *from in a malloc'd desc. */
static int read_desc_part(const struct fsverity_sb *vsb, struct fsverity_inode *inode,
			  uint64_t type, uint8_t **descp, size_t *from, uint64_t *total)
{
	uint8_t *desc;
	size_t size;
	int ret = fsverity_read_stored_descriptor(vsb, inode, &desc, &size);

	if (ret)
		return ret;
	if (type == FS_VERITY_METADATA_TYPE_DESCRIPTOR) {
		verity_put_le32(desc + DESC_SIG_SIZE, 0);	/* as it is hashed */
		*total = VERITY_DESC_SIZE;
		*from = 0;
	} else {
		*total = verity_get_le32(desc + DESC_SIG_SIZE);
		*from = VERITY_DESC_SIZE;
		ret = *total ? 0 : -ENODATA;
	}
	if (ret) {
		free(desc);
		return ret;
	}
	*descp = desc;
	return 0;
}

ssize_t fsverity_read_metadata(const struct fsverity_sb *vsb, struct fsverity_inode *inode,
			       uint64_t type, uint64_t off, void *buf, size_t len)
{
	struct fsverity_info *vi;
	uint8_t *desc = NULL;
	uint64_t total = 0;
	size_t from = 0;
	ssize_t ret = fsverity_get_info(vsb, inode, &vi);

	if (ret)
		return ret;
	switch (type) {
	case FS_VERITY_METADATA_TYPE_MERKLE_TREE:
		total = vi->p.tree_blocks << vi->p.log_bs;
		break;
	case FS_VERITY_METADATA_TYPE_DESCRIPTOR:
	case FS_VERITY_METADATA_TYPE_SIGNATURE:
		ret = read_desc_part(vsb, inode, type, &desc, &from, &total);
		break;
	default:
		ret = -EINVAL;
	}
	if (!ret) {
		len = off >= total ? 0 : VERITY_MIN((uint64_t)len, total - off);
		if (desc)
			memcpy(buf, desc + from + off, len);
		else if (len)
			ret = vsb->ops->read_merkle_tree(vsb->fs, inode, buf, len, off);
		if (!ret)
			ret = (ssize_t)len;
	}
	free(desc);
	return ret;
}
