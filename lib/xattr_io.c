// SPDX-License-Identifier: GPL-2.0
/*
 * Gathering an inode's xattr area the way the kernel does: the inline xattr
 * space at the end of the inode's address array, followed by the xattr node
 * block, in one buffer. The parsing of that buffer is in xattr.c.
 */
#include <stdlib.h>

#include "f2fs.h"

static unsigned int inline_xattr_bytes(const struct f2fs_inode_info *fi)
{
	if (!(fi->i_inline & F2FS_INLINE_XATTR))
		return 0;
	return fi->inline_xattr_addrs * sizeof(uint32_t);
}

static int read_xattr_node(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint8_t *dst)
{
	struct folio *f = f2fs_get_node_folio(sbi, fi->xattr_nid);

	if (IS_ERR(f))
		return PTR_ERR(f);
	if (le32(folio_node(f)->footer.ino) != fi->ino ||
	    (le32(folio_node(f)->footer.flag) >> OFFSET_BIT_SHIFT) != XATTR_NODE_OFFSET) {
		folio_put(sbi, f);
		return f2fs_error(sbi, EFSCORRUPTED,
				  "xattr node %u of inode %u: footer does not match", fi->xattr_nid,
				  fi->ino);
	}
	memcpy(dst, f->data, VALID_XATTR_BLOCK_SIZE);
	folio_put(sbi, f);
	return 0;
}

int f2fs_read_xattr_area(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint8_t **buf,
			 size_t *len)
{
	unsigned int inline_size = inline_xattr_bytes(fi);
	size_t total = inline_size + (fi->xattr_nid ? VALID_XATTR_BLOCK_SIZE : 0);
	uint8_t *b;
	int ret;

	*buf = NULL;
	*len = 0;
	if (!total)
		return 0;
	b = calloc(1, total);
	if (!b)
		return -ENOMEM;
	if (inline_size) {
		struct folio *f = f2fs_get_inode_folio(sbi, fi->ino);

		if (IS_ERR(f)) {
			free(b);
			return PTR_ERR(f);
		}
		memcpy(b, f2fs_inline_xattr_addr(fi, folio_node(f)), inline_size);
		folio_put(sbi, f);
	}
	if (fi->xattr_nid) {
		ret = read_xattr_node(sbi, fi, b + inline_size);
		if (ret) {
			free(b);
			return ret;
		}
	}
	*buf = b;
	*len = total;
	return 0;
}
