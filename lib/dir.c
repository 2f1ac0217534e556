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

static int cmp_nid(const void *a, const void *b)
{
	nid_t x = *(const nid_t *)a, y = *(const nid_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A lookup answers with the inode's attributes, so its node is read next.
 * When that node is not cached (a cold `ls -l`, `stat` of every name, a
 * READDIRPLUS), read the inode nodes of the whole dentry block with it: the
 * names of one block are looked up together by whoever walks a directory,
 * and the inodes of files created together have neighbouring nids and node
 * blocks, so they go out in few requests. A device error is the lookup's
 * (EIO): a failed read never goes unreported, even when a retry would pass.
 */
static bool node_cached(struct f2fs_sb_info *sbi, nid_t nid)
{
	struct folio *f = folio_lookup(sbi, MAP_NODE, 0, nid);

	if (f)
		folio_put(sbi, f);
	return f != NULL;
}

static int ra_dentry_inodes(struct f2fs_sb_info *sbi, const struct f2fs_dentry_ptr *d,
			    unsigned int found_bit, nid_t found)
{
	nid_t nids[MAX_RA_NODE];
	unsigned int n = 0, bit = found_bit, wrapped = 0;

	if (node_cached(sbi, found))
		return 0;
	/* from the entry found on, then the block's head: the uncached inodes */
	while (n < MAX_RA_NODE && !(wrapped && bit >= found_bit)) {
		const struct f2fs_dir_entry *de;
		unsigned int nlen;

		if (bit >= d->max) {
			if (wrapped++)
				break;
			bit = 0;
			continue;
		}
		de = &d->dentry[bit];
		nlen = le16(de->name_len);
		if (!test_bit_le(bit, d->bitmap) || !nlen) {
			bit++;
			continue;
		}
		if (bit + GET_DENTRY_SLOTS(nlen) > d->max)
			break;
		if (le32(de->ino) >= F2FS_RESERVED_NODE_NUM && !node_cached(sbi, le32(de->ino)))
			nids[n++] = le32(de->ino);
		bit += GET_DENTRY_SLOTS(nlen);
	}
	qsort(nids, n, sizeof(*nids), cmp_nid);
	return f2fs_ra_node_siblings(sbi, nids, n);
}

/*
 * hashes_ok (linear searches of casefolded directories): cleared when an
 * entry's stored hash is not the one its name gets here.
 */
static int find_in_dentries(struct f2fs_sb_info *sbi, const struct f2fs_dentry_ptr *d,
			    struct f2fs_filename *fn, bool match_hash, bool *hashes_ok,
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
		if (hashes_ok ? f2fs_match_name_check(fn, d->filename[bit], nlen,
						       le32(de->hash_code), hashes_ok) :
		    (!match_hash || le32(de->hash_code) == fn->hash) &&
		    f2fs_match_name(fn, d->filename[bit], nlen)) {
			*ino = le32(de->ino);
			*ftype = de->file_type;
			/* elsewhere a match is exact by definition */
			fn->alias = fn->casefold && !fn->nokey &&
				    (nlen != fn->len || memcmp(d->filename[bit], fn->name, nlen));
			return ra_dentry_inodes(sbi, d, bit, *ino);
		}
		bit += GET_DENTRY_SLOTS(nlen);
	}
	return -ENOENT;
}

static int find_in_inline(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			  struct f2fs_filename *fn, bool match_hash, bool *hashes_ok,
			  nid_t *ino, unsigned int *ftype)
{
	struct folio *f = f2fs_get_inode_folio(sbi, dir->ino);
	struct f2fs_dentry_ptr d;
	int ret;

	if (IS_ERR(f))
		return PTR_ERR(f);
	dentry_ptr_inline(&d, dir, folio_node(f));
	ret = find_in_dentries(sbi, &d, fn, match_hash, hashes_ok, "inline dentry of inode",
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
			 struct f2fs_filename *fn, bool match_hash, bool *hashes_ok,
			 nid_t *ino, unsigned int *ftype)
{
	struct f2fs_dentry_ptr d;
	struct folio *f;
	block_t blk;
	int ret;

	ret = f2fs_get_block_addr(sbi, dir, bidx, &blk);
	if (ret)
		return ret;
	if (blk == NULL_ADDR || blk == NEW_ADDR) {
		/* a block added since the last writeback lives only in the cache */
		f = folio_lookup(sbi, MAP_DATA, dir->ino, bidx);
		if (!f)
			return -ENOENT;
		folio_put(sbi, f);
	}
	f = f2fs_get_data_folio(sbi, dir, bidx);
	if (IS_ERR(f))
		return PTR_ERR(f);
	dentry_ptr_block(&d, (const struct f2fs_dentry_block *)folio_block_ptr(f, bidx));
	ret = find_in_dentries(sbi, &d, fn, match_hash, hashes_ok, "dentry block", blk,
			       dir->ino, ino, ftype);
	folio_put(sbi, f);
	return ret;
}

/* Every block, names compared without their hash. */
static int find_linear(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
		       struct f2fs_filename *fn, bool *hashes_ok, nid_t *ino,
		       unsigned int *ftype)
{
	if (f2fs_is_inline_dentry(dir))
		return find_in_inline(sbi, dir, fn, false, hashes_ok, ino, ftype);
	for (uint64_t b = 0; b < dir_blocks(dir); b++) {
		int ret = find_in_block(sbi, dir, b, fn, false, hashes_ok, ino, ftype);

		if (ret != -ENOENT)
			return ret;
	}
	return -ENOENT;
}

/* The name's bucket at each level, as the kernel's __f2fs_find_entry. */
static int find_hashed(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
		       struct f2fs_filename *fn, nid_t *ino, unsigned int *ftype)
{
	unsigned int depth = MIN(dir->current_depth, (uint32_t)MAX_DIR_HASH_DEPTH);

	if (f2fs_is_inline_dentry(dir))
		return find_in_inline(sbi, dir, fn, true, NULL, ino, ftype);
	for (unsigned int level = 0; level < depth; level++) {
		uint64_t nbucket = dir_buckets(level, dir->i_dir_level);
		uint64_t bidx = dir_block_index(level, dir->i_dir_level, fn->hash % nbucket);

		for (unsigned int i = 0; i < bucket_blocks(level); i++) {
			if (bidx + i >= dir_blocks(dir))
				break;
			int ret = find_in_block(sbi, dir, bidx + i, fn, true, NULL, ino, ftype);

			if (ret != -ENOENT)
				return ret;
		}
	}
	return -ENOENT;
}

int f2fs_find_entry(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, const char *name,
		    size_t len, nid_t *ino, unsigned int *ftype)
{
	return f2fs_find_entry_alias(sbi, dir, name, len, ino, ftype, NULL);
}

int f2fs_find_entry_alias(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			  const char *name, size_t len, nid_t *ino, unsigned int *ftype,
			  bool *alias)
{
	struct f2fs_filename fn;
	int ret;

	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	if (len > F2FS_NAME_LEN)
		return -ENAMETOOLONG;
	ret = f2fs_setup_filename(sbi, dir, name, len, &fn);
	if (ret)
		return ret;
	if (fn.linear)
		ret = find_linear(sbi, dir, &fn, NULL, ino, ftype);
	else
		ret = find_hashed(sbi, dir, &fn, ino, ftype);
	/*
	 * A casefolded name hashed under other Unicode rules: newer kernels
	 * look on through every block. That costs a fold per entry, so a
	 * directory found to hold only names hashed as we hash them is
	 * remembered (names added later are ours) and not searched again.
	 */
	if (ret == -ENOENT && fn.casefold && !fn.encrypted && f2fs_casefold_linear_fallback(sbi) &&
	    !atomic_load(&dir->cf_hashes_ok)) {
		bool ok = true;

		ret = find_linear(sbi, dir, &fn, &ok, ino, ftype);
		if (ret == -ENOENT && ok)
			atomic_store(&dir->cf_hashes_ok, true);
	}
	if (ret == 0 && alias)
		*alias = fn.alias;
	return ret;
}

/* A name set up already: an encrypted name as stored (roll-forward recovery). */
int f2fs_find_entry_fn(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
		       struct f2fs_filename *fn, nid_t *ino, unsigned int *ftype)
{
	return find_hashed(sbi, dir, fn, ino, ftype);
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

/* An encrypted directory's entry as readdir shows it: plaintext, or the no-key name. */
static int emit_encrypted(struct f2fs_sb_info *sbi, struct f2fs_inode_info *edir,
			  const struct f2fs_dir_entry *de, const uint8_t *name, size_t nlen,
			  uf2fs_filldir_t fill, void *arg, uint64_t pos, bool *stop)
{
	char out[FSCRYPT_NOKEY_NAME_MAX_ENCODED + 4];
	size_t olen;
	int ret = fscrypt_fname_disk_to_usr(sbi->keyring, &edir->fscrypt, le32(de->hash_code), name, nlen, out,
					    &olen);

	if (ret)
		return ret;
	*stop = fill(arg, out, olen, le32(de->ino), f2fs_ftype_to_dtype(de->file_type), pos);
	return 0;
}

static int emit_dentries(struct f2fs_sb_info *sbi, const struct f2fs_dentry_ptr *d,
			 uint64_t blk_index, unsigned int start, const char *where,
			 uint32_t where_blk, struct f2fs_inode_info *dfi, uf2fs_filldir_t fill,
			 void *arg, bool *stop)
{
	struct f2fs_inode_info *edir = f2fs_is_encrypted(dfi) ? dfi : NULL;
	nid_t dir = dfi->ino;
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

		if (edir) {
			ret = emit_encrypted(sbi, edir, de, d->filename[bit], nlen, fill, arg,
					     MAKE_POS(blk_index, next + 1), stop);
			if (ret || *stop)
				return ret;
			bit = next;
			continue;
		}
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
	if (f2fs_is_inline_dentry(dir)) {
		struct folio *f = f2fs_get_inode_folio(sbi, dir->ino);
		struct f2fs_dentry_ptr d;

		if (IS_ERR(f))
			return PTR_ERR(f);
		dentry_ptr_inline(&d, dir, folio_node(f));
		if (POS_BLOCK(pos) == 0)
			ret = emit_dentries(sbi, &d, 0, slot, "inline dentry of inode", dir->ino,
					    dir, fill, arg, &stop);
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
			struct folio *cached = folio_lookup(sbi, MAP_DATA, dir->ino, b);

			if (!cached) {
				/* skip the hole up to the next block the cache holds */
				uint64_t e = b + map.len;

				while (b + 1 < e && !(cached = folio_lookup(sbi, MAP_DATA,
									      dir->ino, b + 1)))
					b++;
				if (!cached)
					continue;
				folio_put(sbi, cached);
				continue;	/* the loop's b++ lands on the cached block */
			}
			folio_put(sbi, cached);
		}
		f = f2fs_get_data_folio(sbi, dir, b);
		if (IS_ERR(f))
			return PTR_ERR(f);
		dentry_ptr_block(&d, (const struct f2fs_dentry_block *)folio_block_ptr(f, b));
		ret = emit_dentries(sbi, &d, b, slot, "dentry block", map.pblk, dir, fill,
				    arg, &stop);
		folio_put(sbi, f);
		if (ret)
			return ret;
	}
	return 0;
}

/// Adding and removing entries (write side) ///

unsigned int f2fs_mode_to_ftype(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return F2FS_FT_REG_FILE;
	case S_IFDIR: return F2FS_FT_DIR;
	case S_IFCHR: return F2FS_FT_CHRDEV;
	case S_IFBLK: return F2FS_FT_BLKDEV;
	case S_IFIFO: return F2FS_FT_FIFO;
	case S_IFSOCK: return F2FS_FT_SOCK;
	case S_IFLNK: return F2FS_FT_SYMLINK;
	}
	return F2FS_FT_UNKNOWN;
}

/* First run of "slots" free slots, or d->max. */
static unsigned int room_for_filename(const struct f2fs_dentry_ptr *d, unsigned int slots)
{
	for (unsigned int bit = 0; bit + slots <= d->max;) {
		unsigned int run = 0;

		while (run < slots && !test_bit_le(bit + run, d->bitmap))
			run++;
		if (run == slots)
			return bit;
		bit += run + 1;
	}
	return d->max;
}

static void put_dentry(const struct f2fs_dentry_ptr *d, unsigned int bit, const char *name,
		       size_t len, uint32_t hash, nid_t ino, unsigned int ftype)
{
	struct f2fs_dir_entry *de = (struct f2fs_dir_entry *)&d->dentry[bit];
	uint8_t *bitmap = (uint8_t *)d->bitmap;
	unsigned int slots = GET_DENTRY_SLOTS(len);

	de->hash_code = hash;
	de->ino = ino;
	de->name_len = len;
	de->file_type = ftype;
	memset((uint8_t *)d->filename[bit], 0, (size_t)slots * F2FS_SLOT_LEN);
	memcpy((uint8_t *)d->filename[bit], name, len);
	for (unsigned int i = 0; i < slots; i++)
		bitmap[(bit + i) >> 3] |= 1u << ((bit + i) & 7);
}

static void clear_dentry(const struct f2fs_dentry_ptr *d, unsigned int bit)
{
	uint8_t *bitmap = (uint8_t *)d->bitmap;
	unsigned int slots = GET_DENTRY_SLOTS(le16(d->dentry[bit].name_len));

	for (unsigned int i = 0; i < slots && bit + i < d->max; i++)
		bitmap[(bit + i) >> 3] &= ~(1u << ((bit + i) & 7));
}

/* A dentry block for modification; a hole becomes a fresh zeroed block. */
static struct folio *get_dentry_block_w(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
					uint64_t bidx)
{
	bool created;
	struct folio *f = folio_grab(sbi, MAP_DATA, dir->ino, bidx, 0, &created);
	block_t blk = NULL_ADDR;
	int ret = 0;

	if (IS_ERR(f) || !created) {
		if (!IS_ERR(f) && folio_wait_uptodate(f)) {
			folio_put(sbi, f);
			return ERR_PTR(-EIO);
		}
		return f;
	}
	if (bidx < dir_blocks(dir))
		ret = f2fs_get_block_addr(sbi, dir, bidx, &blk);
	if (!ret && blk != NULL_ADDR && blk != NEW_ADDR)
		ret = f2fs_fill_folio_range(sbi, dir, f, bidx, bidx + 1);
	else if (!ret)
		memset(f->data, 0, F2FS_BLKSIZE);
	folio_end_fill(sbi, f, !ret);
	if (ret) {
		folio_put(sbi, f);
		return ERR_PTR(ret);
	}
	return f;
}

/* Inline dentries outgrew the inode: move them to block 0, slot for slot. */
static int convert_inline_dir(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir)
{
	struct folio *inode_f = f2fs_get_inode_folio(sbi, dir->ino), *blk_f;
	struct f2fs_dentry_ptr src, dst;
	struct f2fs_dentry_block *blk;
	bool created;

	if (IS_ERR(inode_f))
		return PTR_ERR(inode_f);
	blk_f = folio_grab(sbi, MAP_DATA, dir->ino, 0, 0, &created);
	if (IS_ERR(blk_f)) {
		folio_put(sbi, inode_f);
		return PTR_ERR(blk_f);
	}
	if (!created)
		folio_wait_uptodate(blk_f);
	blk = (struct f2fs_dentry_block *)blk_f->data;
	memset(blk, 0, F2FS_BLKSIZE);
	dentry_ptr_inline(&src, dir, folio_node(inode_f));
	dentry_ptr_block(&dst, blk);
	memcpy((uint8_t *)dst.bitmap, src.bitmap, f2fs_inline_dentry_bitmap_size(
		f2fs_max_inline_data(dir)));
	memcpy((uint8_t *)dst.dentry, src.dentry, (size_t)SIZE_OF_DIR_ENTRY * src.max);
	memcpy((uint8_t *)dst.filename, src.filename, (size_t)F2FS_SLOT_LEN * src.max);
	if (created)
		folio_end_fill(sbi, blk_f, true);
	folio_mark_dirty(sbi, blk_f);
	folio_put(sbi, blk_f);
	memset(f2fs_inline_data_addr(dir, folio_node(inode_f)), 0, f2fs_max_inline_data(dir));
	folio_mark_dirty(sbi, inode_f);
	folio_put(sbi, inode_f);
	dir->i_inline &= ~F2FS_INLINE_DENTRY;
	dir->current_depth = 1;
	if (dir->size < F2FS_BLKSIZE)
		dir->size = F2FS_BLKSIZE;
	f2fs_mark_inode_dirty(sbi, dir);
	return 0;
}

static int add_inline(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, const char *name,
		      size_t len, uint32_t hash, nid_t ino, unsigned int ftype)
{
	struct folio *f = f2fs_get_inode_folio(sbi, dir->ino);
	struct f2fs_dentry_ptr d;
	unsigned int bit;

	if (IS_ERR(f))
		return PTR_ERR(f);
	dentry_ptr_inline(&d, dir, folio_node(f));
	bit = room_for_filename(&d, GET_DENTRY_SLOTS(len));
	if (bit < d.max) {
		put_dentry(&d, bit, name, len, hash, ino, ftype);
		folio_mark_dirty(sbi, f);
	}
	folio_put(sbi, f);
	return bit < d.max ? 0 : -ENOSPC;
}

/* The kernel's f2fs_add_regular_entry: the name's bucket at each level in turn. */
static int add_regular(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, const char *name,
		       size_t len, uint32_t hash, nid_t ino, unsigned int ftype)
{
	unsigned int slots = GET_DENTRY_SLOTS(len);
	unsigned int depth = dir->current_depth;

	for (unsigned int level = 0; level < MAX_DIR_HASH_DEPTH; level++) {
		uint64_t nbucket = dir_buckets(level, dir->i_dir_level);
		uint64_t bidx = dir_block_index(level, dir->i_dir_level, hash % nbucket);

		if (level == depth)
			depth++;
		for (unsigned int i = 0; i < bucket_blocks(level); i++) {
			struct folio *f = get_dentry_block_w(sbi, dir, bidx + i);
			struct f2fs_dentry_ptr d;
			unsigned int bit;

			if (IS_ERR(f))
				return PTR_ERR(f);
			dentry_ptr_block(&d, (const struct f2fs_dentry_block *)f->data);
			bit = room_for_filename(&d, slots);
			if (bit < d.max) {
				put_dentry(&d, bit, name, len, hash, ino, ftype);
				folio_mark_dirty(sbi, f);
				folio_put(sbi, f);
				if ((bidx + i + 1) * F2FS_BLKSIZE > dir->size)
					dir->size = (bidx + i + 1) * F2FS_BLKSIZE;
				dir->current_depth = depth;
				f2fs_mark_inode_dirty(sbi, dir);
				return 0;
			}
			folio_put(sbi, f);
		}
	}
	return -ENOSPC;
}

int f2fs_add_link(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, const char *name,
		  size_t len, nid_t ino, uint32_t mode)
{
	struct f2fs_filename fn;
	int ret = f2fs_setup_filename(sbi, dir, name, len, &fn);

	if (ret)
		return ret;
	if (fn.nokey)
		return -ENOKEY;
	return f2fs_add_link_fn(sbi, dir, &fn, ino, mode);
}

int f2fs_add_link_fn(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
		     const struct f2fs_filename *fn, nid_t ino, uint32_t mode)
{
	unsigned int ftype = f2fs_mode_to_ftype(mode);
	/* an encrypted directory stores the ciphertext */
	const char *name = (const char *)fn->name;
	size_t len = fn->len;
	uint32_t hash = fn->hash;
	int ret;

	if (f2fs_is_inline_dentry(dir)) {
		ret = add_inline(sbi, dir, name, len, hash, ino, ftype);
		if (ret != -ENOSPC)
			goto out;
		ret = convert_inline_dir(sbi, dir);
		if (ret)
			return ret;
	}
	ret = add_regular(sbi, dir, name, len, hash, ino, ftype);
out:
	if (!ret) {
		f2fs_inode_touch(dir, true, true);
		f2fs_mark_inode_dirty(sbi, dir);
	}
	return ret;
}

/*
 * Locate an entry for modification: the folio holding it (inode folio for
 * inline dentries) with a reference, and its slot.
 */
struct dentry_loc {
	struct folio *folio;
	struct f2fs_dentry_ptr d;
	unsigned int bit;
};

static int locate_in(struct f2fs_sb_info *sbi, struct dentry_loc *loc,
		     const struct f2fs_filename *fn, bool match_hash)
{
	for (unsigned int bit = 0; bit < loc->d.max;) {
		const struct f2fs_dir_entry *de = &loc->d.dentry[bit];
		unsigned int nlen;

		if (!test_bit_le(bit, loc->d.bitmap) || !(nlen = le16(de->name_len))) {
			bit++;
			continue;
		}
		if (nlen > F2FS_NAME_LEN || bit + GET_DENTRY_SLOTS(nlen) > loc->d.max)
			return -EFSCORRUPTED;
		if ((!match_hash || le32(de->hash_code) == fn->hash) &&
		    f2fs_match_name(fn, loc->d.filename[bit], nlen)) {
			loc->bit = bit;
			return 0;
		}
		bit += GET_DENTRY_SLOTS(nlen);
	}
	return -ENOENT;
}

static int locate_pass(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
		       const struct f2fs_filename *fn, bool match_hash, struct dentry_loc *loc)
{
	int ret;

	if (f2fs_is_inline_dentry(dir)) {
		loc->folio = f2fs_get_inode_folio(sbi, dir->ino);
		if (IS_ERR(loc->folio))
			return PTR_ERR(loc->folio);
		dentry_ptr_inline(&loc->d, dir, folio_node(loc->folio));
		ret = locate_in(sbi, loc, fn, match_hash);
		if (ret)
			folio_put(sbi, loc->folio);
		return ret;
	}
	/* dot entries and names alike: scan every block (names are rare to miss) */
	for (uint64_t b = 0; b < dir_blocks(dir); b++) {
		block_t blk;

		ret = f2fs_get_block_addr(sbi, dir, b, &blk);
		if (ret)
			return ret;
		if (blk == NULL_ADDR || blk == NEW_ADDR) {
			struct folio *cached = folio_lookup(sbi, MAP_DATA, dir->ino, b);

			if (!cached)
				continue;	/* a hole with no new block in the cache either */
			folio_put(sbi, cached);
		}
		loc->folio = get_dentry_block_w(sbi, dir, b);
		if (IS_ERR(loc->folio))
			return PTR_ERR(loc->folio);
		dentry_ptr_block(&loc->d, (const struct f2fs_dentry_block *)loc->folio->data);
		ret = locate_in(sbi, loc, fn, match_hash);
		if (!ret)
			return 0;
		folio_put(sbi, loc->folio);
		if (ret != -ENOENT)
			return ret;
	}
	return -ENOENT;
}

/*
 * Casefolded names compare by folding, which costs: look at the entries
 * with the name's hash first, then (names hashed under other Unicode rules,
 * as f2fs_find_entry found them) at all.
 */
static int locate_entry(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, const char *name,
			size_t len, struct dentry_loc *loc)
{
	struct f2fs_filename fn;
	int ret = f2fs_setup_filename(sbi, dir, name, len, &fn);

	if (ret)
		return ret;
	ret = locate_pass(sbi, dir, &fn, fn.casefold, loc);
	if (ret == -ENOENT && fn.casefold)
		ret = locate_pass(sbi, dir, &fn, false, loc);
	return ret;
}

static int delete_at(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
		     struct dentry_loc *loc)
{
	clear_dentry(&loc->d, loc->bit);
	folio_mark_dirty(sbi, loc->folio);
	folio_put(sbi, loc->folio);
	f2fs_inode_touch(dir, true, true);
	f2fs_mark_inode_dirty(sbi, dir);
	return 0;
}

int f2fs_delete_entry_fn(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			 const struct f2fs_filename *fn)
{
	struct dentry_loc loc;
	int ret = locate_pass(sbi, dir, fn, true, &loc);

	return ret ? ret : delete_at(sbi, dir, &loc);
}

int f2fs_delete_entry(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, const char *name,
		      size_t len)
{
	struct dentry_loc loc;
	int ret = locate_entry(sbi, dir, name, len, &loc);

	return ret ? ret : delete_at(sbi, dir, &loc);
}


/* Point an existing entry at another inode (rename over, exchange, ".."). */
int f2fs_set_link(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, const char *name,
		  size_t len, nid_t ino, uint32_t mode)
{
	struct dentry_loc loc;
	int ret = locate_entry(sbi, dir, name, len, &loc);
	struct f2fs_dir_entry *de;

	if (ret)
		return ret;
	de = (struct f2fs_dir_entry *)&loc.d.dentry[loc.bit];
	de->ino = ino;
	de->file_type = f2fs_mode_to_ftype(mode);
	folio_mark_dirty(sbi, loc.folio);
	folio_put(sbi, loc.folio);
	f2fs_inode_touch(dir, true, true);
	f2fs_mark_inode_dirty(sbi, dir);
	return 0;
}

/* A new directory's "." and "..", inline as the kernel makes them. */
int f2fs_make_empty_dir(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, nid_t parent)
{
	struct folio *f = f2fs_get_inode_folio(sbi, fi->ino);
	struct f2fs_dentry_ptr d;

	if (IS_ERR(f))
		return PTR_ERR(f);
	dentry_ptr_inline(&d, fi, folio_node(f));
	put_dentry(&d, 0, ".", 1, 0, fi->ino, F2FS_FT_DIR);
	put_dentry(&d, 1, "..", 2, 0, parent, F2FS_FT_DIR);
	folio_mark_dirty(sbi, f);
	folio_put(sbi, f);
	fi->size = f2fs_max_inline_data(fi);
	f2fs_mark_inode_dirty(sbi, fi);
	return 0;
}

static int count_entry(void *arg, const char *name, size_t len, uint32_t ino, unsigned int dt,
		       uint64_t pos)
{
	bool *nonempty = arg;

	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	*nonempty = true;
	return 1;
}

int f2fs_empty_dir(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir)
{
	bool nonempty = false;
	int ret = f2fs_readdir(sbi, dir, 0, count_entry, &nonempty);

	if (ret)
		return ret;
	return nonempty ? 0 : 1;
}
