// SPDX-License-Identifier: GPL-2.0
/*
 * Directories: dentry blocks and inline dentries seen through one "dentry
 * pointer" view, lookup through the multi-level hash (the bucket a name's
 * hash selects at each level, as the kernel places it), and readdir with
 * positions that stay stable across calls. Every entry is bounds-checked
 * before use: a corrupt dentry gives EIO and names its block.
 */
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "f2fs.h"

/// Dentry pointers ///

static void dentry_ptr_block(struct f2fs_dentry_ptr *d, const struct f2fs_dentry_block *blk)
{
	d->max = NR_DENTRY_IN_BLOCK;
	d->bitmap = blk->dentry_bitmap;
	d->dentry = blk->dentry;
	d->filename = blk->filename;
}

static void dentry_ptr_inline(struct f2fs_dentry_ptr *d, const struct f2fs_inode_info *fi,
			      struct f2fs_node *node)
{
	unsigned int max_inline = f2fs_max_inline_data(fi);
	unsigned int nr = f2fs_nr_inline_dentry(max_inline);
	unsigned int bm = f2fs_inline_dentry_bitmap_size(max_inline);
	unsigned int reserved = max_inline - ((SIZE_OF_DIR_ENTRY + F2FS_SLOT_LEN) * nr + bm);
	const uint8_t *base = f2fs_inline_data_addr(fi, node);

	d->max = nr;
	d->bitmap = base;
	d->dentry = (const struct f2fs_dir_entry *)(base + bm + reserved);
	d->filename = (const uint8_t (*)[F2FS_SLOT_LEN])(base + bm + reserved +
							 SIZE_OF_DIR_ENTRY * nr);
}

unsigned int f2fs_ftype_to_dtype(unsigned int ft)
{
	static const unsigned char map[F2FS_FT_MAX] = {
		[F2FS_FT_UNKNOWN] = DT_UNKNOWN, [F2FS_FT_REG_FILE] = DT_REG,
		[F2FS_FT_DIR] = DT_DIR,         [F2FS_FT_CHRDEV] = DT_CHR,
		[F2FS_FT_BLKDEV] = DT_BLK,      [F2FS_FT_FIFO] = DT_FIFO,
		[F2FS_FT_SOCK] = DT_SOCK,       [F2FS_FT_SYMLINK] = DT_LNK,
	};

	return ft < F2FS_FT_MAX ? map[ft] : DT_UNKNOWN;
}

/*
 * Check the entry at bit: its name must fit in the slots that remain, and
 * the name bytes live in consecutive filename slots.
 */
static int check_dentry(struct f2fs_sb_info *sbi, const struct f2fs_dentry_ptr *d,
			unsigned int bit, const char *where, uint32_t where_blk, nid_t dir)
{
	const struct f2fs_dir_entry *de = &d->dentry[bit];
	unsigned int len = le16(de->name_len);

	if (len > F2FS_NAME_LEN || bit + GET_DENTRY_SLOTS(len) > d->max || !le32(de->ino))
		return f2fs_error(sbi, EFSCORRUPTED,
				  "%s %u (directory %u): corrupt dentry at slot %u (name length "
				  "%u, ino %u)", where, where_blk, dir, bit, len, le32(de->ino));
	return 0;
}

/// Lookup ///

static int find_in_dentries(struct f2fs_sb_info *sbi, const struct f2fs_dentry_ptr *d,
			    const char *name, size_t len, uint32_t hash, bool match_hash,
			    const char *where, uint32_t where_blk, nid_t dir, nid_t *ino,
			    unsigned int *ftype)
{
	unsigned int bit = 0;

	while (bit < d->max) {
		if (!test_bit_le(bit, d->bitmap)) {
			bit++;
			continue;
		}
		const struct f2fs_dir_entry *de = &d->dentry[bit];
		unsigned int nlen = le16(de->name_len);

		if (!nlen) {
			bit++;
			continue;
		}
		int ret = check_dentry(sbi, d, bit, where, where_blk, dir);

		if (ret)
			return ret;
		if (nlen == len && (!match_hash || le32(de->hash_code) == hash) &&
		    !memcmp(d->filename[bit], name, len)) {
			*ino = le32(de->ino);
			*ftype = de->file_type;
			return 0;
		}
		bit += GET_DENTRY_SLOTS(nlen);
	}
	return -ENOENT;
}

static int find_in_inline(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			  const char *name, size_t len, uint32_t hash, nid_t *ino,
			  unsigned int *ftype)
{
	struct folio *f = f2fs_get_inode_folio(sbi, dir->ino);
	struct f2fs_dentry_ptr d;
	int ret;

	if (IS_ERR(f))
		return PTR_ERR(f);
	dentry_ptr_inline(&d, dir, folio_node(f));
	ret = find_in_dentries(sbi, &d, name, len, hash, true, "inline dentry of inode",
			       dir->ino, dir->ino, ino, ftype);
	folio_put(sbi, f);
	return ret;
}

static uint64_t dir_buckets(unsigned int level, unsigned int dir_level)
{
	if (level + dir_level < MAX_DIR_HASH_DEPTH / 2)
		return 1ull << (level + dir_level);
	return MAX_DIR_BUCKETS;
}

static unsigned int bucket_blocks(unsigned int level)
{
	return level < MAX_DIR_HASH_DEPTH / 2 ? 2 : 4;
}

static uint64_t dir_block_index(unsigned int level, unsigned int dir_level, uint64_t idx)
{
	uint64_t bidx = 0;

	for (unsigned int i = 0; i < level; i++)
		bidx += dir_buckets(i, dir_level) * bucket_blocks(i);
	return bidx + idx * bucket_blocks(level);
}

static uint64_t dir_blocks(const struct f2fs_inode_info *dir)
{
	return DIV_ROUND_UP(dir->size, F2FS_BLKSIZE);
}

/* Search one dentry block; a hole is an empty block. */
static int find_in_block(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, uint64_t bidx,
			 const char *name, size_t len, uint32_t hash, bool match_hash,
			 nid_t *ino, unsigned int *ftype)
{
	struct f2fs_dentry_ptr d;
	struct folio *f;
	block_t blk;
	int ret;

	ret = f2fs_get_block_addr(sbi, dir, bidx, &blk);
	if (ret)
		return ret;
	if (blk == NULL_ADDR || blk == NEW_ADDR)
		return -ENOENT;
	f = f2fs_get_data_folio(sbi, dir, bidx);
	if (IS_ERR(f))
		return PTR_ERR(f);
	dentry_ptr_block(&d, (const struct f2fs_dentry_block *)folio_block_ptr(f, bidx));
	ret = find_in_dentries(sbi, &d, name, len, hash, match_hash, "dentry block", blk,
			       dir->ino, ino, ftype);
	folio_put(sbi, f);
	return ret;
}

/*
 * Casefolded directories hash the folded name, which needs the Unicode
 * tables; we match names exactly by scanning every block instead.
 */
static int find_linear(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, const char *name,
		       size_t len, nid_t *ino, unsigned int *ftype)
{
	for (uint64_t b = 0; b < dir_blocks(dir); b++) {
		int ret = find_in_block(sbi, dir, b, name, len, 0, false, ino, ftype);

		if (ret != -ENOENT)
			return ret;
	}
	return -ENOENT;
}

int f2fs_find_entry(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, const char *name,
		    size_t len, nid_t *ino, unsigned int *ftype)
{
	uint32_t hash = f2fs_dentry_hash((const uint8_t *)name, len);
	unsigned int depth = MIN(dir->current_depth, (uint32_t)MAX_DIR_HASH_DEPTH);

	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	if (len > F2FS_NAME_LEN)
		return -ENAMETOOLONG;
	if (f2fs_is_encrypted(dir))
		return -ENOKEY;
	if (f2fs_is_inline_dentry(dir))
		return find_in_inline(sbi, dir, name, len, hash, ino, ftype);
	if (dir->flags & F2FS_CASEFOLD_FL)
		return find_linear(sbi, dir, name, len, ino, ftype);
	for (unsigned int level = 0; level < depth; level++) {
		uint64_t nbucket = dir_buckets(level, dir->i_dir_level);
		uint64_t bidx = dir_block_index(level, dir->i_dir_level, hash % nbucket);

		for (unsigned int i = 0; i < bucket_blocks(level); i++) {
			if (bidx + i >= dir_blocks(dir))
				break;
			int ret = find_in_block(sbi, dir, bidx + i, name, len, hash, true, ino,
						ftype);

			if (ret != -ENOENT)
				return ret;
		}
	}
	return -ENOENT;
}

/// Readdir ///

/*
 * A position is (block << 16) | (slot + 1) for the next entry to return,
 * so a later call resumes at that slot even if the caller's buffer filled
 * mid-block. Position 0 is the start.
 */
#define POS_BLOCK(pos)	((pos) >> 16)
#define POS_SLOT(pos)	((unsigned int)((pos) & 0xffff))
#define MAKE_POS(b, s)	(((uint64_t)(b) << 16) | (s))

static int emit_dentries(struct f2fs_sb_info *sbi, const struct f2fs_dentry_ptr *d,
			 uint64_t blk_index, unsigned int start, const char *where,
			 uint32_t where_blk, nid_t dir, uf2fs_filldir_t fill, void *arg, bool *stop)
{
	unsigned int bit = start;

	while (bit < d->max) {
		if (!test_bit_le(bit, d->bitmap)) {
			bit++;
			continue;
		}
		const struct f2fs_dir_entry *de = &d->dentry[bit];
		unsigned int nlen = le16(de->name_len);

		if (!nlen) {
			bit++;
			continue;
		}
		int ret = check_dentry(sbi, d, bit, where, where_blk, dir);

		if (ret)
			return ret;
		unsigned int next = bit + GET_DENTRY_SLOTS(nlen);

		if (fill(arg, (const char *)d->filename[bit], nlen, le32(de->ino),
			 f2fs_ftype_to_dtype(de->file_type), MAKE_POS(blk_index, next + 1))) {
			*stop = true;
			return 0;
		}
		bit = next;
	}
	return 0;
}

int f2fs_readdir(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, uint64_t pos,
		 uf2fs_filldir_t fill, void *arg)
{
	unsigned int slot = POS_SLOT(pos) ? POS_SLOT(pos) - 1 : 0;
	bool stop = false;
	int ret = 0;

	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	if (f2fs_is_encrypted(dir))
		return -ENOKEY;
	if (f2fs_is_inline_dentry(dir)) {
		struct folio *f = f2fs_get_inode_folio(sbi, dir->ino);
		struct f2fs_dentry_ptr d;

		if (IS_ERR(f))
			return PTR_ERR(f);
		dentry_ptr_inline(&d, dir, folio_node(f));
		if (POS_BLOCK(pos) == 0)
			ret = emit_dentries(sbi, &d, 0, slot, "inline dentry of inode", dir->ino,
					    dir->ino, fill, arg, &stop);
		folio_put(sbi, f);
		return ret;
	}
	for (uint64_t b = POS_BLOCK(pos); b < dir_blocks(dir) && !stop; b++, slot = 0) {
		struct f2fs_map_blocks map = { .lblk = b, .len = dir_blocks(dir) - b };
		struct f2fs_dentry_ptr d;
		struct folio *f;

		ret = f2fs_map_blocks(sbi, dir, &map);
		if (ret)
			return ret;
		if (map.pblk == NULL_ADDR || map.pblk == NEW_ADDR) {
			b += map.len - 1;	/* skip the whole hole */
			continue;
		}
		f = f2fs_get_data_folio(sbi, dir, b);
		if (IS_ERR(f))
			return PTR_ERR(f);
		dentry_ptr_block(&d, (const struct f2fs_dentry_block *)folio_block_ptr(f, b));
		ret = emit_dentries(sbi, &d, b, slot, "dentry block", map.pblk, dir->ino, fill,
				    arg, &stop);
		folio_put(sbi, f);
		if (ret)
			return ret;
	}
	return 0;
}
