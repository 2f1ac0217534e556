// SPDX-License-Identifier: GPL-2.0
/*
 * Inodes: loading an inode block into f2fs_inode_info with the kernel's
 * sanity checks and checksum, the geometry that depends on extra attributes
 * and inline xattrs (where block addresses, inline data and inline xattrs
 * start), large-folio eligibility, and the inode cache that the API's
 * inode-number interface sits on.
 */
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "f2fs.h"
#include "quota.h"

#define ICACHE_BUCKETS	4096
#define ICACHE_UNUSED_MAX 8192	/* unreferenced inodes kept for re-lookup */

struct inode_cache {
	pthread_mutex_t lock;
	struct f2fs_inode_info *dirty;	/* pinned until the next checkpoint */
	atomic_uint nr_dirty;		/* on that list: read unlocked by space checks */
	struct f2fs_inode_info *buckets[ICACHE_BUCKETS];
	struct f2fs_inode_info lru;	/* unreferenced inodes, newest first */
	unsigned int nr_unused;
};

/// Geometry ///

static unsigned int inline_xattr_addrs(struct f2fs_sb_info *sbi, const struct f2fs_inode *ri)
{
	if (f2fs_has_feature(sbi, F2FS_FEATURE_FLEXIBLE_INLINE_XATTR))
		return (ri->i_inline & F2FS_EXTRA_ATTR) ? le16(ri->i_inline_xattr_size) : 0;
	if (ri->i_inline & (F2FS_INLINE_XATTR | F2FS_INLINE_DENTRY))
		return DEFAULT_INLINE_XATTR_ADDRS;
	return 0;
}

void *f2fs_inline_data_addr(const struct f2fs_inode_info *fi, struct f2fs_node *node)
{
	return &node->i.i_addr[fi->extra_isize + DEF_INLINE_RESERVED_SIZE];
}

unsigned int f2fs_max_inline_data(const struct f2fs_inode_info *fi)
{
	return sizeof(uint32_t) * (DEF_ADDRS_PER_INODE - fi->extra_isize -
				   fi->inline_xattr_addrs - DEF_INLINE_RESERVED_SIZE);
}

void *f2fs_inline_xattr_addr(const struct f2fs_inode_info *fi, struct f2fs_node *node)
{
	return &node->i.i_addr[DEF_ADDRS_PER_INODE - fi->inline_xattr_addrs];
}

/// Loading an inode ///

static bool inode_chksum_enabled(struct f2fs_sb_info *sbi, const struct f2fs_inode *ri)
{
	if (!f2fs_has_feature(sbi, F2FS_FEATURE_INODE_CHKSUM))
		return false;
	if (!(ri->i_inline & F2FS_EXTRA_ATTR))
		return false;
	return le16(ri->i_extra_isize) >=
	       offsetof(struct f2fs_inode, i_inode_checksum) + 4 - OFFSET_OF_END_OF_I_EXT;
}

/*
 * As the kernel's sanity_check_inode and sanity_check_extent_cache for a
 * device alias file: the feature is on, the file is pinned, and i_ext maps
 * exactly the blocks of one device other than the first (which holds the
 * metadata). Nothing else maps its data: it has no block addresses.
 */
static int check_device_alias(struct f2fs_sb_info *sbi, nid_t ino, block_t blk,
			      const struct f2fs_inode *ri)
{
	uint32_t fofs = le32(ri->i_ext.fofs), start = le32(ri->i_ext.blk_addr);
	uint32_t len = le32(ri->i_ext.len);

	if (!f2fs_has_feature(sbi, F2FS_FEATURE_DEVICE_ALIAS))
		return f2fs_error(sbi, EFSCORRUPTED, "inode %u (block %u): device alias flag, "
				  "but the feature is off", ino, blk);
	if (!(ri->i_inline & F2FS_PIN_FILE))
		return f2fs_error(sbi, EFSCORRUPTED, "inode %u (block %u): device alias flag, "
				  "but the file is not pinned", ino, blk);
	for (unsigned int i = 0; len && !fofs && i < sbi->ndevs; i++) {
		if (sbi->devs[i].start_blk != start || sbi->devs[i].end_blk != start + len - 1)
			continue;
		if (!i)
			break;
		return 0;
	}
	return f2fs_error(sbi, EFSCORRUPTED, "inode %u (block %u): device alias extent (%u, %u, "
			  "%u) is not the range of a device after the first", ino, blk, fofs,
			  start, len);
}

static int sanity_check_inode(struct f2fs_sb_info *sbi, nid_t ino, block_t blk,
			      const struct f2fs_node *node)
{
	const struct f2fs_inode *ri = &node->i;
	unsigned int extra = (ri->i_inline & F2FS_EXTRA_ATTR) ? le16(ri->i_extra_isize) : 0;

	if (le32(node->footer.nid) != le32(node->footer.ino) ||
	    le32(node->footer.flag) >> OFFSET_BIT_SHIFT)
		return f2fs_error(sbi, EFSCORRUPTED,
				  "inode %u (block %u): node block is not an inode", ino, blk);
	if ((ri->i_inline & F2FS_EXTRA_ATTR) && !f2fs_has_feature(sbi, F2FS_FEATURE_EXTRA_ATTR))
		return f2fs_error(sbi, EFSCORRUPTED,
				  "inode %u (block %u): extra attributes without the feature", ino,
				  blk);
	if (extra % 4 || extra > F2FS_TOTAL_EXTRA_ATTR_SIZE)
		return f2fs_error(sbi, EFSCORRUPTED,
				  "inode %u (block %u): bad extra attribute size %u", ino, blk,
				  extra);
	/*
	 * As sanity_check_inode: with flexible inline xattrs every inode has
	 * extra attributes (where the area's size lives), and the area holds
	 * at least one entry and leaves room for data (Linux 5c1768b67250).
	 */
	if (f2fs_has_feature(sbi, F2FS_FEATURE_FLEXIBLE_INLINE_XATTR) &&
	    !(ri->i_inline & F2FS_EXTRA_ATTR))
		return f2fs_error(sbi, EFSCORRUPTED,
				  "inode %u (block %u): no extra attributes on an image with "
				  "flexible inline xattrs", ino, blk);
	if (f2fs_has_feature(sbi, F2FS_FEATURE_FLEXIBLE_INLINE_XATTR) &&
	    (ri->i_inline & F2FS_INLINE_XATTR) &&
	    (le16(ri->i_inline_xattr_size) < MIN_INLINE_XATTR_SIZE ||
	     le16(ri->i_inline_xattr_size) > MAX_INLINE_XATTR_SIZE))
		return f2fs_error(sbi, EFSCORRUPTED,
				  "inode %u (block %u): corrupted i_inline_xattr_size %u", ino, blk,
				  le16(ri->i_inline_xattr_size));
	if (inline_xattr_addrs(sbi, ri) + extra / 4 + DEF_INLINE_RESERVED_SIZE >
	    DEF_ADDRS_PER_INODE)
		return f2fs_error(sbi, EFSCORRUPTED,
				  "inode %u (block %u): bad inline xattr size %u", ino, blk,
				  inline_xattr_addrs(sbi, ri));
	if (inode_chksum_enabled(sbi, ri) &&
	    f2fs_inode_chksum(sbi->chksum_seed, node) != le32(ri->i_inode_checksum))
		return f2fs_error(sbi, EFSCORRUPTED,
				  "inode %u (block %u): inode checksum mismatch", ino, blk);
	if ((le32(ri->i_flags) & F2FS_COMPR_FL) && S_ISREG(le16(ri->i_mode))) {
		if (!f2fs_has_feature(sbi, F2FS_FEATURE_COMPRESSION) ||
		    extra < offsetof(struct f2fs_inode, i_extra_end) - OFFSET_OF_END_OF_I_EXT ||
		    ri->i_log_cluster_size < MIN_COMPRESS_LOG_SIZE ||
		    ri->i_log_cluster_size > MAX_COMPRESS_LOG_SIZE)
			return f2fs_error(sbi, EFSCORRUPTED,
					  "inode %u (block %u): bad compression attributes", ino,
					  blk);
	}
	/* as the kernel's sanity_check_inode: no casefolding without the feature */
	if ((le32(ri->i_flags) & F2FS_CASEFOLD_FL) && !f2fs_has_feature(sbi, F2FS_FEATURE_CASEFOLD))
		return f2fs_error(sbi, EFSCORRUPTED,
				  "inode %u (block %u): casefold flag without the feature", ino,
				  blk);
	if (le32(ri->i_namelen) > F2FS_NAME_LEN)
		return f2fs_error(sbi, EFSCORRUPTED, "inode %u (block %u): name length %u", ino,
				  blk, le32(ri->i_namelen));
	if (le32(ri->i_flags) & F2FS_DEVICE_ALIAS_FL)
		return check_device_alias(sbi, ino, blk, ri);
	return 0;
}

static uint32_t decode_rdev(const struct f2fs_inode_info *fi, const struct f2fs_inode *ri)
{
	uint32_t old = le32(ri->i_addr[fi->extra_isize]);
	uint32_t dev = le32(ri->i_addr[fi->extra_isize + 1]);

	if (old)
		return makedev((old >> 8) & 255, old & 255);
	return makedev((dev & 0xfff00) >> 8, (dev & 0xff) | ((dev >> 12) & 0xfff00));
}

static void fill_inode_info(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			    const struct f2fs_inode *ri)
{
	fi->mode = le16(ri->i_mode);
	fi->uid = le32(ri->i_uid);
	fi->gid = le32(ri->i_gid);
	fi->nlink = le32(ri->i_links);
	fi->size = le64(ri->i_size);
	fi->blocks = le64(ri->i_blocks);
	fi->atime = (struct timespec){ le64(ri->i_atime), le32(ri->i_atime_nsec) };
	fi->mtime = (struct timespec){ le64(ri->i_mtime), le32(ri->i_mtime_nsec) };
	fi->ctime = (struct timespec){ le64(ri->i_ctime), le32(ri->i_ctime_nsec) };
	fi->generation = le32(ri->i_generation);
	fi->flags = le32(ri->i_flags);
	fi->projid = f2fs_raw_projid(sbi, ri);
	fi->i_advise = ri->i_advise;
	fi->i_inline = ri->i_inline;
	fi->i_dir_level = ri->i_dir_level;
	fi->current_depth = le32(ri->i_current_depth);
	fi->xattr_nid = le32(ri->i_xattr_nid);
	for (int i = 0; i < DEF_NIDS_PER_INODE; i++)
		fi->i_nid[i] = le32(ri->i_nid[i]);
	fi->extra_isize = (ri->i_inline & F2FS_EXTRA_ATTR) ? le16(ri->i_extra_isize) / 4 : 0;
	fi->inline_xattr_addrs = inline_xattr_addrs(sbi, ri);
	fi->addrs_per_inode = DEF_ADDRS_PER_INODE - fi->extra_isize - fi->inline_xattr_addrs;
	if (f2fs_has_feature(sbi, F2FS_FEATURE_INODE_CRTIME) &&
	    fi->extra_isize * 4 >= offsetof(struct f2fs_inode, i_compr_blocks) -
				   OFFSET_OF_END_OF_I_EXT)
		fi->crtime = (struct timespec){ le64(ri->i_crtime), le32(ri->i_crtime_nsec) };
	if (f2fs_is_compressed(fi) && S_ISREG(fi->mode)) {
		fi->compress_algorithm = ri->i_compress_algorithm;
		fi->log_cluster_size = ri->i_log_cluster_size;
		fi->compress_flag = le16(ri->i_compress_flag);
		fi->compr_blocks = le64(ri->i_compr_blocks);
		/* a cluster never straddles the inode and a direct node */
		fi->addrs_per_inode &= ~((1u << fi->log_cluster_size) - 1);
	}
	if (S_ISCHR(fi->mode) || S_ISBLK(fi->mode) || S_ISFIFO(fi->mode) || S_ISSOCK(fi->mode))
		fi->rdev = decode_rdev(fi, ri);
	fi->largest = (struct extent_info){ le32(ri->i_ext.fofs), le32(ri->i_ext.blk_addr),
					    le32(ri->i_ext.len) };
	/* as f2fs_inode_may_use_large_folio: not for inline or compressed data */
	fi->max_order = 0;
	if (S_ISREG(fi->mode) && !f2fs_is_inline_data(fi) && !f2fs_is_compressed(fi))
		fi->max_order = sbi->opts.max_folio_order;
}

static int check_largest_extent(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	struct extent_info *e = &fi->largest;

	if (!e->len)
		return 0;
	if (!f2fs_valid_main_blkaddr(sbi, e->blk) ||
	    (uint64_t)e->blk + e->len > sbi->block_count) {
		/* the kernel drops a bad i_ext rather than failing the inode */
		f2fs_msg(sbi, "inode %u: ignoring invalid largest extent (%u, %u, %u)", fi->ino,
			 e->fofs, e->blk, e->len);
		e->len = 0;
		return 0;
	}
	f2fs_extent_insert(fi, e->fofs, e->blk, e->len);
	return 0;
}

struct folio *f2fs_get_inode_folio(struct f2fs_sb_info *sbi, nid_t ino)
{
	return f2fs_get_node_folio(sbi, ino);
}

static struct f2fs_inode_info *load_inode(struct f2fs_sb_info *sbi, nid_t ino)
{
	struct f2fs_inode_info *fi;
	struct node_info ni;
	struct folio *f;
	int ret;

	if (ino == sbi->node_ino || ino == sbi->meta_ino)
		return ERR_PTR(-ENOENT);
	ret = f2fs_get_node_info(sbi, ino, &ni);
	if (ret)
		return ERR_PTR(ret);
	/* a freed inode (its nid waits for the next checkpoint) is simply gone */
	if (ni.blk_addr == NULL_ADDR)
		return ERR_PTR(-ENOENT);
	if (ni.ino != ino)
		return ERR_PTR(f2fs_error(sbi, EFSCORRUPTED,
					  "NAT: inode %u maps to a node of inode %u", ino, ni.ino));
	f = f2fs_get_inode_folio(sbi, ino);
	if (IS_ERR(f))
		return (void *)f;
	ret = sanity_check_inode(sbi, ino, ni.blk_addr, folio_node(f));
	if (ret) {
		folio_put(sbi, f);
		return ERR_PTR(ret);
	}
	fi = calloc(1, sizeof(*fi));
	if (!fi) {
		folio_put(sbi, f);
		return ERR_PTR(-ENOMEM);
	}
	fi->ino = ino;
	pthread_mutex_init(&fi->i_lock, NULL);
	pthread_rwlock_init(&fi->i_rwsem, NULL);
	fill_inode_info(sbi, fi, &folio_node(f)->i);
	folio_put(sbi, f);
	f2fs_quota_inode_loaded(sbi, fi);
	check_largest_extent(sbi, fi);
	return fi;
}

static void free_inode(struct f2fs_inode_info *fi)
{
	fscrypt_put_info(&fi->fscrypt);
	f2fs_extent_tree_destroy(fi);
	fsverity_free_info(&fi->fsverity);
	pthread_mutex_destroy(&fi->i_lock);
	pthread_rwlock_destroy(&fi->i_rwsem);
	free(fi);
}

/// Inode cache ///

int f2fs_icache_init(struct f2fs_sb_info *sbi)
{
	struct inode_cache *ic = calloc(1, sizeof(*ic));

	if (!ic)
		return -ENOMEM;
	pthread_mutex_init(&ic->lock, NULL);
	ic->lru.lru_next = ic->lru.lru_prev = &ic->lru;
	sbi->icache = ic;
	return 0;
}

void f2fs_icache_destroy(struct f2fs_sb_info *sbi)
{
	struct inode_cache *ic = sbi->icache;

	if (!ic)
		return;
	for (int b = 0; b < ICACHE_BUCKETS; b++) {
		struct f2fs_inode_info *fi = ic->buckets[b];

		while (fi) {
			struct f2fs_inode_info *next = fi->hnext;

			free_inode(fi);
			fi = next;
		}
	}
	pthread_mutex_destroy(&ic->lock);
	free(ic);
	sbi->icache = NULL;
}

static void ilru_del(struct f2fs_inode_info *fi)
{
	fi->lru_prev->lru_next = fi->lru_next;
	fi->lru_next->lru_prev = fi->lru_prev;
	fi->lru_next = fi->lru_prev = NULL;
}

static void ihash_del(struct inode_cache *ic, struct f2fs_inode_info *fi)
{
	struct f2fs_inode_info **pp = &ic->buckets[fi->ino % ICACHE_BUCKETS];

	while (*pp != fi)
		pp = &(*pp)->hnext;
	*pp = fi->hnext;
}

static struct f2fs_inode_info *icache_find(struct inode_cache *ic, nid_t ino)
{
	for (struct f2fs_inode_info *fi = ic->buckets[ino % ICACHE_BUCKETS]; fi; fi = fi->hnext)
		if (fi->ino == ino)
			return fi;
	return NULL;
}

static void icache_grab(struct f2fs_inode_info *fi)
{
	if (atomic_fetch_add(&fi->refcnt, 1) == 0 && fi->lru_next)
		ilru_del(fi);
}

struct f2fs_inode_info *f2fs_iget(struct f2fs_sb_info *sbi, nid_t ino)
{
	struct inode_cache *ic = sbi->icache;
	struct f2fs_inode_info *fi, *raced;

	pthread_mutex_lock(&ic->lock);
	fi = icache_find(ic, ino);
	if (fi && fi->freed) {
		pthread_mutex_unlock(&ic->lock);
		return ERR_PTR(-ENOENT);
	}
	if (fi) {
		if (!atomic_load(&fi->refcnt) && fi->lru_next)
			ic->nr_unused--;
		icache_grab(fi);
		pthread_mutex_unlock(&ic->lock);
		return fi;
	}
	pthread_mutex_unlock(&ic->lock);

	fi = load_inode(sbi, ino);
	if (IS_ERR(fi))
		return fi;
	pthread_mutex_lock(&ic->lock);
	raced = icache_find(ic, ino);
	if (raced) {
		if (!atomic_load(&raced->refcnt) && raced->lru_next)
			ic->nr_unused--;
		icache_grab(raced);
		pthread_mutex_unlock(&ic->lock);
		free_inode(fi);
		return raced;
	}
	atomic_store(&fi->refcnt, 1);
	fi->hnext = ic->buckets[ino % ICACHE_BUCKETS];
	ic->buckets[ino % ICACHE_BUCKETS] = fi;
	pthread_mutex_unlock(&ic->lock);
	return fi;
}

void f2fs_iput(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	struct inode_cache *ic = sbi->icache;
	struct f2fs_inode_info *victim = NULL;

	pthread_mutex_lock(&ic->lock);
	if (atomic_fetch_sub(&fi->refcnt, 1) == 1 && fi->freed) {
		ihash_del(ic, fi);
		pthread_mutex_unlock(&ic->lock);
		free_inode(fi);
		return;
	}
	if (atomic_load(&fi->refcnt) == 0) {
		fi->lru_next = ic->lru.lru_next;
		fi->lru_prev = &ic->lru;
		ic->lru.lru_next->lru_prev = fi;
		ic->lru.lru_next = fi;
		if (++ic->nr_unused > ICACHE_UNUSED_MAX) {
			victim = ic->lru.lru_prev;
			ilru_del(victim);
			ihash_del(ic, victim);
			ic->nr_unused--;
		}
	}
	pthread_mutex_unlock(&ic->lock);
	if (victim)
		free_inode(victim);
}

/* Inodes are re-readable from disk at any time, so forget needs no bookkeeping. */
void f2fs_icache_forget(struct f2fs_sb_info *sbi, nid_t ino, uint64_t n)
{
}

void f2fs_icache_for_each(struct f2fs_sb_info *sbi,
			  void (*fn)(struct f2fs_sb_info *, struct f2fs_inode_info *, void *),
			  void *arg)
{
	struct inode_cache *ic = sbi->icache;

	pthread_mutex_lock(&ic->lock);
	for (unsigned int i = 0; i < ICACHE_BUCKETS; i++)
		for (struct f2fs_inode_info *fi = ic->buckets[i]; fi; fi = fi->hnext)
			fn(sbi, fi, arg);
	pthread_mutex_unlock(&ic->lock);
}

/// Write side: dirty inodes, new inodes, eviction, orphans ///

void f2fs_inode_touch(struct f2fs_inode_info *fi, bool mtime, bool ctime)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	if (mtime)
		fi->mtime = now;
	if (ctime)
		fi->ctime = now;
}

/* A dirty inode is pinned in the cache (one reference) until written. */
void f2fs_mark_inode_dirty(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	struct inode_cache *ic = sbi->icache;

	pthread_mutex_lock(&ic->lock);
	if (!fi->dirty && !fi->freed) {
		fi->dirty = true;
		icache_grab(fi);
		fi->dirty_next = ic->dirty;
		ic->dirty = fi;
		atomic_fetch_add(&ic->nr_dirty, 1);
	}
	pthread_mutex_unlock(&ic->lock);
}

static void raw_from_inode_info(struct f2fs_inode *ri, const struct f2fs_inode_info *fi)
{
	ri->i_mode = fi->mode;
	ri->i_advise = fi->i_advise;
	ri->i_inline = fi->i_inline;
	ri->i_uid = fi->uid;
	ri->i_gid = fi->gid;
	ri->i_links = fi->nlink;
	ri->i_size = fi->size;
	ri->i_blocks = fi->blocks;
	ri->i_atime = fi->atime.tv_sec;
	ri->i_atime_nsec = fi->atime.tv_nsec;
	ri->i_mtime = fi->mtime.tv_sec;
	ri->i_mtime_nsec = fi->mtime.tv_nsec;
	ri->i_ctime = fi->ctime.tv_sec;
	ri->i_ctime_nsec = fi->ctime.tv_nsec;
	ri->i_generation = fi->generation;
	if (S_ISDIR(fi->mode))
		ri->i_current_depth = fi->current_depth;
	ri->i_xattr_nid = fi->xattr_nid;
	ri->i_flags = fi->flags;
	ri->i_dir_level = fi->i_dir_level;
	ri->i_ext.fofs = fi->largest.len ? fi->largest.fofs : 0;
	ri->i_ext.blk_addr = fi->largest.len ? fi->largest.blk : 0;
	ri->i_ext.len = fi->largest.len;
	for (int i = 0; i < DEF_NIDS_PER_INODE; i++)
		ri->i_nid[i] = fi->i_nid[i];
	/* load_inode checked that a compressed file's extra attributes hold these */
	if (f2fs_is_compressed(fi)) {
		ri->i_compr_blocks = fi->compr_blocks;
		ri->i_compress_algorithm = fi->compress_algorithm;
		ri->i_log_cluster_size = fi->log_cluster_size;
		ri->i_compress_flag = fi->compress_flag;
	}
}

int f2fs_update_inode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	struct folio *f = f2fs_get_inode_folio(sbi, fi->ino);

	if (IS_ERR(f))
		return PTR_ERR(f);
	raw_from_inode_info(&folio_node(f)->i, fi);
	if (f2fs_raw_projid(sbi, &folio_node(f)->i) != fi->projid)
		folio_node(f)->i.i_projid = fi->projid;
	f2fs_quota_sync_inode(sbi, fi);
	folio_mark_dirty(sbi, f);
	folio_put(sbi, f);
	return 0;
}

int f2fs_sync_dirty_inodes(struct f2fs_sb_info *sbi)
{
	struct inode_cache *ic = sbi->icache;
	struct f2fs_inode_info *list;
	int ret = 0;

	pthread_mutex_lock(&ic->lock);
	list = ic->dirty;
	ic->dirty = NULL;
	atomic_store(&ic->nr_dirty, 0);
	pthread_mutex_unlock(&ic->lock);
	while (list) {
		struct f2fs_inode_info *fi = list;

		list = fi->dirty_next;
		fi->dirty = false;
		if (!ret && !fi->freed)
			ret = f2fs_update_inode(sbi, fi);
		f2fs_iput(sbi, fi);
	}
	return ret;
}

static uint32_t inherited_flags(const struct f2fs_inode_info *dir, uint32_t mode)
{
	uint32_t fl = dir->flags & (F2FS_SYNC_FL | F2FS_NODUMP_FL | F2FS_NOATIME_FL |
				    F2FS_DIRSYNC_FL | F2FS_PROJINHERIT_FL | F2FS_CASEFOLD_FL);

	/* casefolding is the kernel's F2FS_FL_INHERITED too, and kept by directories only */
	if (!S_ISDIR(mode))
		fl &= ~(F2FS_DIRSYNC_FL | F2FS_CASEFOLD_FL);
	return fl;
}

static void init_raw_inode(struct f2fs_sb_info *sbi, struct f2fs_inode *ri,
			   struct f2fs_inode_info *dir, uint32_t mode, const char *name, size_t len)
{
	ri->i_mode = mode;
	ri->i_links = S_ISDIR(mode) ? 2 : 1;
	ri->i_blocks = 1;	/* the inode block itself */
	ri->i_pino = dir ? dir->ino : sbi->root_ino;
	ri->i_namelen = MIN(len, (size_t)F2FS_NAME_LEN);
	memcpy(ri->i_name, name, ri->i_namelen);
	ri->i_inline = F2FS_INLINE_XATTR;
	/* defaults of the kernel's mount options: inline_data, inline_dentry */
	if (S_ISREG(mode) || S_ISLNK(mode))
		ri->i_inline |= F2FS_INLINE_DATA;
	else if (S_ISDIR(mode))
		ri->i_inline |= F2FS_INLINE_DENTRY;
	if (S_ISDIR(mode))
		ri->i_current_depth = 1;
	if (f2fs_has_feature(sbi, F2FS_FEATURE_EXTRA_ATTR)) {
		ri->i_inline |= F2FS_EXTRA_ATTR;
		ri->i_extra_isize = F2FS_TOTAL_EXTRA_ATTR_SIZE;
		if (f2fs_has_feature(sbi, F2FS_FEATURE_FLEXIBLE_INLINE_XATTR))
			ri->i_inline_xattr_size = DEFAULT_INLINE_XATTR_ADDRS;
	}
}

/*
 * A random i_generation, as the kernel's get_random_u32(): file handles name
 * an inode by (ino, generation), and nids are reused, so a handle to a
 * deleted file must not match the next inode of that number, in this mount
 * or any later one. random() alone would replay the same sequence at every
 * mount.
 */
#define GENERATION_BATCH	64

/*
 * The words come from getrandom(2) GENERATION_BATCH at a time, per thread:
 * a system call per created file costs an untar of small files more than
 * the rest of the create (a hypervisor exit each on a virtual machine).
 */
static uint32_t new_generation(void)
{
	static _Thread_local uint32_t pool[GENERATION_BATCH];
	static _Thread_local unsigned int left;
	struct timespec now;

	if (!left && getrandom(pool, sizeof(pool), GRND_NONBLOCK) == sizeof(pool))
		left = GENERATION_BATCH;
	if (left)
		return pool[--left];
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint32_t)random() ^ (uint32_t)now.tv_nsec ^ (uint32_t)getpid();
}

struct f2fs_inode_info *f2fs_new_inode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
				       uint32_t mode, uint32_t uid, uint32_t gid,
				       const char *name, size_t len)
{
	struct inode_cache *ic = sbi->icache;
	struct f2fs_inode_info *fi;
	struct timespec now;
	struct f2fs_inode *ri;
	struct folio *f;
	nid_t ino;
	int ret;

	ret = f2fs_alloc_nid(sbi, 0, &ino);
	if (ret)
		return ERR_PTR(ret);
	f = f2fs_new_node_folio(sbi, ino, ino, 0, S_ISDIR(mode));
	if (IS_ERR(f)) {
		f2fs_alloc_nid_failed(sbi, ino);
		return (void *)f;
	}
	ri = &folio_node(f)->i;
	init_raw_inode(sbi, ri, dir, mode, name, len);
	clock_gettime(CLOCK_REALTIME, &now);
	ri->i_uid = uid;
	ri->i_gid = gid;
	ri->i_atime = ri->i_mtime = ri->i_ctime = now.tv_sec;
	ri->i_atime_nsec = ri->i_mtime_nsec = ri->i_ctime_nsec = now.tv_nsec;
	/* the extra attributes overlay i_addr: only an extra_attr inode has them */
	if ((ri->i_inline & F2FS_EXTRA_ATTR) &&
	    f2fs_has_feature(sbi, F2FS_FEATURE_INODE_CRTIME)) {
		ri->i_crtime = now.tv_sec;
		ri->i_crtime_nsec = now.tv_nsec;
	}
	ri->i_generation = new_generation();
	ri->i_flags = dir ? inherited_flags(dir, mode) : 0;
	/* as the kernel: a project ID comes from a PROJINHERIT parent, else 0 */
	if (dir && (dir->flags & F2FS_PROJINHERIT_FL) && (ri->i_inline & F2FS_EXTRA_ATTR) &&
	    f2fs_has_feature(sbi, F2FS_FEATURE_PRJQUOTA))
		ri->i_projid = dir->projid;
	if (dir && f2fs_is_encrypted(dir)) {
		/*
		 * The policy comes with the context (fscrypt_inherit_context);
		 * i_name holds the encrypted name; a file's data is never inline
		 * (f2fs_post_read_required). Compression needs the plaintext
		 * name: f2fs_compress_new_encrypted, once the context is set.
		 */
		ri->i_advise |= FADVISE_ENCRYPT_BIT | FADVISE_ENC_NAME_BIT;
		if (S_ISREG(mode))
			ri->i_inline &= ~F2FS_INLINE_DATA;
	} else {
		f2fs_compress_new_inode(sbi, dir, ri, name, len);
	}
	fi = calloc(1, sizeof(*fi));
	if (!fi) {
		folio_clear_dirty(sbi, f);
		folio_put(sbi, f);
		f2fs_alloc_nid_failed(sbi, ino);
		return ERR_PTR(-ENOMEM);
	}
	fi->ino = ino;
	pthread_mutex_init(&fi->i_lock, NULL);
	pthread_rwlock_init(&fi->i_rwsem, NULL);
	fill_inode_info(sbi, fi, ri);
	folio_put(sbi, f);
	pthread_mutex_lock(&ic->lock);
	atomic_store(&fi->refcnt, 1);
	fi->hnext = ic->buckets[ino % ICACHE_BUCKETS];
	ic->buckets[ino % ICACHE_BUCKETS] = fi;
	pthread_mutex_unlock(&ic->lock);
	return fi;
}

int f2fs_evict_inode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	int ret;

	/* as f2fs_do_truncate_blocks: a device alias gives its whole device back */
	if (f2fs_is_device_alias(fi)) {
		for (uint32_t i = 0; i < fi->largest.len; i++)
			f2fs_invalidate_block(sbi, fi->largest.blk + i);
		fi->blocks = 1;
	}
	ret = f2fs_truncate_blocks(sbi, fi, 0);
	if (!ret && fi->xattr_nid) {
		ret = f2fs_truncate_node(sbi, fi->xattr_nid);
		fi->xattr_nid = 0;
	}
	if (!ret)
		ret = f2fs_truncate_node(sbi, fi->ino);
	if (ret)
		return ret;
	fi->freed = true;
	f2fs_quota_sync_inode(sbi, fi);
	folio_truncate_owner(sbi, MAP_DATA, fi->ino, 0);
	f2fs_extent_tree_destroy(fi);
	return 0;
}

/// Orphans ///

/* Concurrent unlinks and releases share the list; checkpoints read it exclusively. */
int f2fs_add_orphan(struct f2fs_sb_info *sbi, nid_t ino)
{
	int ret = 0;

	pthread_mutex_lock(&sbi->orphan_lock);
	if (sbi->nr_orphans == sbi->orphan_cap) {
		unsigned int cap = sbi->orphan_cap ? sbi->orphan_cap * 2 : 16;
		nid_t *v = realloc(sbi->orphans, cap * sizeof(*v));

		if (!v) {
			ret = -ENOMEM;
			goto out;
		}
		sbi->orphans = v;
		sbi->orphan_cap = cap;
	}
	sbi->orphans[sbi->nr_orphans++] = ino;
out:
	pthread_mutex_unlock(&sbi->orphan_lock);
	return ret;
}

void f2fs_remove_orphan(struct f2fs_sb_info *sbi, nid_t ino)
{
	pthread_mutex_lock(&sbi->orphan_lock);
	for (unsigned int i = 0; i < sbi->nr_orphans; i++) {
		if (sbi->orphans[i] == ino) {
			sbi->orphans[i] = sbi->orphans[--sbi->nr_orphans];
			break;
		}
	}
	pthread_mutex_unlock(&sbi->orphan_lock);
}

/* At a read-write mount: inodes unlinked while open when we last stopped. */
int f2fs_cleanup_orphans(struct f2fs_sb_info *sbi)
{
	while (sbi->nr_orphans) {
		nid_t ino = sbi->orphans[sbi->nr_orphans - 1];
		struct f2fs_inode_info *fi = f2fs_iget(sbi, ino);
		int ret;

		sbi->nr_orphans--;
		if (IS_ERR(fi)) {
			f2fs_msg(sbi, "orphan inode %u is unreadable; skipped", ino);
			continue;
		}
		ret = fi->nlink ? 0 : f2fs_evict_inode(sbi, fi);
		f2fs_iput(sbi, fi);
		if (ret)
			return ret;
	}
	return 0;
}

unsigned int f2fs_nr_dirty_inodes(struct f2fs_sb_info *sbi)
{
	return atomic_load(&sbi->icache->nr_dirty);
}

bool f2fs_has_dirty_inodes(struct f2fs_sb_info *sbi)
{
	struct inode_cache *ic = sbi->icache;
	bool dirty;

	pthread_mutex_lock(&ic->lock);
	dirty = ic->dirty != NULL;
	pthread_mutex_unlock(&ic->lock);
	return dirty;
}
