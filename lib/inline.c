// SPDX-License-Identifier: GPL-2.0
/*
 * Inline data: small regular files and symlinks keep their bytes inside
 * the inode block, after the extra attributes and before the inline xattr
 * area. Writing past that room converts the inode to block-addressed data,
 * as the kernel's f2fs_convert_inline_inode does: the bytes move to file
 * block 0, the area is zeroed, and the inode may use large folios.
 */
#include <stdlib.h>
#include <sys/stat.h>

#include "f2fs.h"

int f2fs_write_inline_data(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, const void *buf,
			   size_t len, uint64_t off)
{
	struct folio *f = f2fs_get_inode_folio(sbi, fi->ino);

	if (IS_ERR(f))
		return PTR_ERR(f);
	memcpy((uint8_t *)f2fs_inline_data_addr(fi, folio_node(f)) + off, buf, len);
	fi->i_inline |= F2FS_DATA_EXIST;
	folio_mark_dirty(sbi, f);
	folio_put(sbi, f);
	return 0;
}

int f2fs_convert_inline_inode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	unsigned int max = f2fs_max_inline_data(fi);
	struct folio *inode_f, *data_f;
	bool created;
	void *area;

	if (!f2fs_is_inline_data(fi))
		return 0;
	/* the bytes need a block of their own; without one they stay where they are */
	if (fi->size && !f2fs_has_budget(sbi, 1))
		return -ENOSPC;
	inode_f = f2fs_get_inode_folio(sbi, fi->ino);
	if (IS_ERR(inode_f))
		return PTR_ERR(inode_f);
	area = f2fs_inline_data_addr(fi, folio_node(inode_f));
	/* only when there is something to keep: an empty file needs no block, nor a folio */
	if (fi->size) {
		data_f = folio_grab(sbi, MAP_DATA, fi->ino, 0, 0, &created);
		if (IS_ERR(data_f)) {
			folio_put(sbi, inode_f);
			return PTR_ERR(data_f);
		}
		if (!created)
			folio_wait_uptodate(data_f);
		memset(data_f->data, 0, F2FS_BLKSIZE);
		memcpy(data_f->data, area, MIN((uint64_t)max, fi->size));
		if (created)
			folio_end_fill(sbi, data_f, true);
		folio_mark_dirty(sbi, data_f);
		folio_put(sbi, data_f);
	}
	memset(area, 0, max);
	fi->i_inline &= ~(F2FS_INLINE_DATA | F2FS_DATA_EXIST);
	fi->max_order = S_ISREG(fi->mode) ? sbi->opts.max_folio_order : 0;
	folio_mark_dirty(sbi, inode_f);
	folio_put(sbi, inode_f);
	f2fs_mark_inode_dirty(sbi, fi);
	return 0;
}
