// SPDX-License-Identifier: GPL-2.0
/*
 * fsync without a checkpoint, and roll-forward recovery, as Linux f2fs does
 * them, in both directions of compatibility.
 *
 * fsync writes the file's data, then its direct nodes and inode out of
 * place into the warm node log, the last one carrying the fsync mark (and
 * the dentry mark when the file is new since the checkpoint), then flushes.
 * Each node footer holds the checkpoint version and the address of the next
 * free block of its log, so after a crash the chain can be followed from
 * where the checkpoint left the warm node log.
 *
 * Recovery walks that chain twice, as the kernel's recovery.c: once to find
 * the fsync'd inodes (creating inodes that only the chain knows), once to
 * replay inode fields, dentries and block addresses onto the checkpointed
 * tree. Then every current segment moves on (the blocks after the old
 * positions may now be in use) and a checkpoint makes the result durable.
 */
#include <stdlib.h>
#include <sys/stat.h>

#include "f2fs.h"

/// fsync ///

/*
 * When roll-forward cannot express the change, fsync checkpoints, as the
 * kernel's f2fs_do_sync_file does: not a regular file, hard links, a parent
 * or name that changed since the checkpoint, or a new parent. Compressed
 * files too: replaying their dnodes would not restore i_compr_blocks.
 */
static bool fsync_needs_checkpoint(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	struct folio *f;
	nid_t pino;

	if (!S_ISREG(fi->mode) || fi->nlink != 1 || fi->ns_changed_at == sbi->cp_ver + 1 ||
	    f2fs_is_compressed(fi))
		return true;
	f = f2fs_get_inode_folio(sbi, fi->ino);
	if (IS_ERR(f))
		return true;
	pino = le32(folio_node(f)->i.i_pino);
	folio_put(sbi, f);
	return !f2fs_nid_checkpointed(sbi, pino);
}

static int cmp_nid_folio(const void *a, const void *b)
{
	const struct folio *x = *(struct folio *const *)a, *y = *(struct folio *const *)b;
	bool xi = ofs_of_node((const struct f2fs_node *)x->data) == 0;
	bool yi = ofs_of_node((const struct f2fs_node *)y->data) == 0;

	/* the inode block last: it carries the fsync mark */
	if (xi != yi)
		return xi ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static void set_marks(struct f2fs_node *n, bool fsync, bool dent)
{
	n->footer.flag &= ~((1u << FSYNC_BIT_SHIFT) | (1u << DENT_BIT_SHIFT));
	if (fsync)
		n->footer.flag |= 1u << FSYNC_BIT_SHIFT;
	if (dent)
		n->footer.flag |= 1u << DENT_BIT_SHIFT;
}

/* Caller holds cp_rwsem shared and the inode exclusively. */
static int fsync_nodes(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	struct folio **all, **mine;
	size_t n, m = 0;
	bool dent = !f2fs_nid_checkpointed(sbi, fi->ino);
	int ret;

	ret = f2fs_update_inode(sbi, fi);	/* the inode block is dirty from here on */
	if (ret)
		return ret;
	ret = folio_collect_dirty(sbi, MAP_NODE, fi->ino, &all, &n);
	if (ret)
		return ret;
	mine = malloc((n ? n : 1) * sizeof(*mine));
	for (size_t i = 0; i < n; i++) {
		struct f2fs_node *node = folio_node(all[i]);

		if (mine && le32(node->footer.ino) == fi->ino &&
		    f2fs_is_dnode_ofs(ofs_of_node(node)) &&
		    ofs_of_node(node) != XATTR_NODE_OFFSET)
			mine[m++] = all[i];
		else
			folio_put(sbi, all[i]);
	}
	free(all);
	if (!mine)
		return -ENOMEM;
	qsort(mine, m, sizeof(*mine), cmp_nid_folio);
	for (size_t i = 0; i < m; i++) {
		struct f2fs_node *node = folio_node(mine[i]);
		bool last = i + 1 == m;

		set_marks(node, last, last && ofs_of_node(node) == 0 && dent);
	}
	/* one request for the run: the inode, last, carries the fsync mark */
	ret = f2fs_write_node_folios(sbi, mine, m);
	for (size_t i = 0; i < m; i++) {
		/* a later ordinary write of the same node must not carry the marks */
		set_marks(folio_node(mine[i]), false, false);
		folio_put(sbi, mine[i]);
	}
	free(mine);
	return ret;
}

/*
 * As f2fs_do_sync_file: a regular file's data is written first, in place
 * where the IPU policy allows (an in-place block needs no node to find
 * it), then either its nodes go out with the fsync mark or, when
 * roll-forward cannot express the change, the caller checkpoints.
 */
static int fsync_file_flags(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			    unsigned int flags)
{
	int ret;

	if (!S_ISREG(fi->mode))
		return 1;	/* the caller checkpoints */
	ret = f2fs_writeback_inode_flags(sbi, fi, flags);
	if (ret)
		return ret;
	if (fsync_needs_checkpoint(sbi, fi))
		return 1;
	/*
	 * Data durable before any node that points at it, and earlier nodes
	 * of the chain before the one with the fsync mark. Data written in
	 * place since the last flush needs no flush of its own: no node
	 * changes for it, and the final flush makes it durable.
	 */
	ret = f2fs_dev_unflushed(&sbi->dev) ? f2fs_dev_flush(&sbi->dev) : 0;
	if (!ret)
		ret = fsync_nodes(sbi, fi);
	if (!ret)
		ret = f2fs_dev_flush(&sbi->dev);
	return ret;
}

int f2fs_fsync_file(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, bool datasync)
{
	return fsync_file_flags(sbi, fi, WB_FSYNC | (datasync ? WB_DATASYNC : 0));
}

/// Atomic writes (as Android's SQLite uses them) ///

/*
 * Between start and commit, the file's new data lives only in the cache:
 * checkpoints and writeback skip the inode, and its size is staged. Commit
 * is an fsync: the fsync mark on the inode block, written last, makes the
 * whole set recoverable at once; before it lands, none of it is. A crash
 * before commit leaves the old content.
 */
int f2fs_atomic_start(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	int ret;

	if (!S_ISREG(fi->mode) || f2fs_is_compressed(fi))
		return -EINVAL;
	if (fi->atomic)
		return 0;
	ret = f2fs_convert_inline_inode(sbi, fi);
	if (!ret)
		ret = f2fs_writeback_inode(sbi, fi);
	if (ret)
		return ret;
	fi->atomic = true;
	fi->atomic_size = fi->size;
	return 0;
}

int f2fs_atomic_commit(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	if (!fi->atomic)
		return -EINVAL;
	fi->atomic = false;
	fi->size = fi->atomic_size;
	f2fs_inode_touch(fi, true, true);
	f2fs_mark_inode_dirty(sbi, fi);
	/* out of place: a crash must show all of it or none */
	return fsync_file_flags(sbi, fi, WB_FSYNC | WB_ATOMIC);
}

void f2fs_atomic_abort(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	if (!fi->atomic)
		return;
	fi->atomic = false;
	/* the staged blocks go; what is on disk is the old content */
	folio_truncate_owner(sbi, MAP_DATA, fi->ino, 0);
	f2fs_extent_tree_destroy(fi);
}

/// Roll-forward recovery ///

struct fsync_inode_entry {
	nid_t ino;
	block_t last_fsync;	/* last fsync dnode of this inode in the chain */
	block_t last_dentry;	/* inode block with the dentry mark, if any */
	struct f2fs_inode_info *fi;
};

struct fsync_list {
	struct fsync_inode_entry *v;
	unsigned int n, cap;
};

static struct fsync_inode_entry *find_entry(struct fsync_list *l, nid_t ino)
{
	for (unsigned int i = 0; i < l->n; i++)
		if (l->v[i].ino == ino)
			return &l->v[i];
	return NULL;
}

static struct fsync_inode_entry *add_entry(struct fsync_list *l, nid_t ino)
{
	if (l->n == l->cap) {
		unsigned int cap = l->cap ? l->cap * 2 : 16;
		struct fsync_inode_entry *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	memset(&l->v[l->n], 0, sizeof(l->v[0]));
	l->v[l->n].ino = ino;
	return &l->v[l->n++];
}

static bool node_recoverable(struct f2fs_sb_info *sbi, const struct f2fs_node *n)
{
	uint32_t flags = le32(sbi->ckpt->ckpt_flags);
	uint64_t cp_ver = sbi->cp_ver, node_ver = le64(n->footer.cp_ver);

	if (flags & CP_NOCRC_RECOVERY_FLAG)
		return (uint32_t)cp_ver == (uint32_t)node_ver;
	if (flags & CP_CRC_RECOVERY_FLAG)
		cp_ver |= (uint64_t)sbi->cp_crc << 32;
	return cp_ver == node_ver;
}

typedef int (*chain_fn)(struct f2fs_sb_info *sbi, block_t blk, struct f2fs_node *n, void *arg);

/* Follow the warm node log from where the checkpoint left it. */
static int walk_chain(struct f2fs_sb_info *sbi, chain_fn fn, void *arg)
{
	struct curseg_info *cs = &sbi->sm.curseg[CURSEG_WARM_NODE];
	block_t blk = sbi->main_blkaddr + cs->segno * sbi->blocks_per_seg + cs->next_blkoff;
	uint64_t limit = (uint64_t)sbi->main_segs * sbi->blocks_per_seg;
	struct f2fs_node *n = malloc(F2FS_BLKSIZE);
	int ret = 0;

	if (!n)
		return -ENOMEM;
	for (uint64_t i = 0; i < limit && f2fs_valid_main_blkaddr(sbi, blk); i++) {
		if (f2fs_dev_read_blocks(&sbi->dev, n, blk, 1) || !node_recoverable(sbi, n))
			break;
		ret = fn(sbi, blk, n, arg);
		if (ret)
			break;
		blk = le32(n->footer.next_blkaddr);
	}
	free(n);
	return ret;
}

static bool is_fsync_dnode(const struct f2fs_node *n)
{
	return (le32(n->footer.flag) & (1u << FSYNC_BIT_SHIFT)) &&
	       f2fs_is_dnode_ofs(ofs_of_node(n)) && ofs_of_node(n) != XATTR_NODE_OFFSET;
}

static bool is_dent_inode(const struct f2fs_node *n)
{
	return ofs_of_node(n) == 0 && (le32(n->footer.flag) & (1u << DENT_BIT_SHIFT));
}

/*
 * An inode that exists only in the chain (created after the checkpoint):
 * give its nid a cached inode block copied from the log, as the kernel's
 * f2fs_recover_inode_page does.
 */
static int recreate_inode(struct f2fs_sb_info *sbi, const struct f2fs_node *logged)
{
	nid_t ino = le32(logged->footer.ino);
	struct node_info ni;
	struct folio *f;

	if (!f2fs_get_node_info(sbi, ino, &ni) && f2fs_valid_main_blkaddr(sbi, ni.blk_addr))
		return 0;
	if (f2fs_claim_nid(sbi, ino))
		return f2fs_error(sbi, EFSCORRUPTED, "recovery: inode %u cannot be claimed", ino);
	f = f2fs_new_node_folio(sbi, ino, ino, 0, S_ISDIR(le16(logged->i.i_mode)));
	if (IS_ERR(f))
		return PTR_ERR(f);
	memcpy(&folio_node(f)->i, &logged->i, sizeof(logged->i));
	folio_node(f)->i.i_xattr_nid = 0;
	memset(folio_node(f)->i.i_nid, 0, sizeof(logged->i.i_nid));
	folio_node(f)->i.i_blocks = 1;
	if (!(logged->i.i_inline & (F2FS_INLINE_DATA | F2FS_INLINE_DENTRY))) {
		/* addresses come back through the replay of the dnodes */
		unsigned int extra = (logged->i.i_inline & F2FS_EXTRA_ATTR) ?
				     le16(logged->i.i_extra_isize) / 4 : 0;

		memset(&folio_node(f)->i.i_addr[extra], 0,
		       (DEF_ADDRS_PER_INODE - extra) * sizeof(uint32_t));
	}
	f2fs_set_inode_chksum(sbi, folio_node(f));
	folio_put(sbi, f);
	return 0;
}

static int find_fsync_dnodes(struct f2fs_sb_info *sbi, block_t blk, struct f2fs_node *n,
			     void *arg)
{
	struct fsync_list *l = arg;
	struct fsync_inode_entry *e;
	nid_t ino = le32(n->footer.ino);
	int ret;

	if (!is_fsync_dnode(n))
		return 0;
	e = find_entry(l, ino);
	if (!e) {
		if (is_dent_inode(n)) {
			ret = recreate_inode(sbi, n);
			if (ret)
				return ret;
		}
		e = add_entry(l, ino);
		if (!e)
			return -ENOMEM;
	}
	e->last_fsync = blk;
	if (is_dent_inode(n))
		e->last_dentry = blk;
	return 0;
}

/* Inode fields the fsync logged, as the kernel's recover_inode copies them. */
static void recover_inode_fields(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
				 const struct f2fs_node *n)
{
	const struct f2fs_inode *ri = &n->i;
	struct folio *f;

	fi->mode = le16(ri->i_mode);
	fi->uid = le32(ri->i_uid);
	fi->gid = le32(ri->i_gid);
	fi->size = le64(ri->i_size);
	fi->atime = (struct timespec){ le64(ri->i_atime), le32(ri->i_atime_nsec) };
	fi->ctime = (struct timespec){ le64(ri->i_ctime), le32(ri->i_ctime_nsec) };
	fi->mtime = (struct timespec){ le64(ri->i_mtime), le32(ri->i_mtime_nsec) };
	fi->i_advise = ri->i_advise;
	fi->flags = le32(ri->i_flags);
	/* inline xattrs, as recover_inline_xattr: the logged area wins */
	if (fi->inline_xattr_addrs && (ri->i_inline & F2FS_INLINE_XATTR)) {
		f = f2fs_get_inode_folio(sbi, fi->ino);
		if (!IS_ERR(f)) {
			memcpy(f2fs_inline_xattr_addr(fi, folio_node(f)),
			       f2fs_inline_xattr_addr(fi, (struct f2fs_node *)n),
			       fi->inline_xattr_addrs * sizeof(uint32_t));
			folio_mark_dirty(sbi, f);
			folio_put(sbi, f);
		}
	}
	/* inline data travels inside the logged inode */
	if (ri->i_inline & F2FS_INLINE_DATA) {
		f = f2fs_get_inode_folio(sbi, fi->ino);
		if (!IS_ERR(f)) {
			memcpy(f2fs_inline_data_addr(fi, folio_node(f)),
			       f2fs_inline_data_addr(fi, (struct f2fs_node *)n),
			       f2fs_max_inline_data(fi));
			folio_mark_dirty(sbi, f);
			folio_put(sbi, f);
		}
		fi->i_inline = ri->i_inline;
	} else if (f2fs_is_inline_data(fi)) {
		/* converted since the checkpoint: its block addresses come next */
		f = f2fs_get_inode_folio(sbi, fi->ino);
		if (!IS_ERR(f)) {
			memset(f2fs_inline_data_addr(fi, folio_node(f)), 0,
			       f2fs_max_inline_data(fi));
			folio_mark_dirty(sbi, f);
			folio_put(sbi, f);
		}
		fi->i_inline &= ~(F2FS_INLINE_DATA | F2FS_DATA_EXIST);
		fi->max_order = S_ISREG(fi->mode) ? sbi->opts.max_folio_order : 0;
	}
	f2fs_mark_inode_dirty(sbi, fi);
}

/*
 * The name is the ciphertext (Linux's init_dent_inode in an encrypted
 * directory): it goes back as stored, found and hashed without the key.
 */
static int recover_encrypted_dentry(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
				    struct f2fs_inode_info *fi, const struct f2fs_node *n,
				    unsigned int len)
{
	struct f2fs_filename fn;
	unsigned int ftype;
	nid_t cur;
	int ret = f2fs_crypt_setup_disk_name(sbi, dir, n->i.i_name, len, F2FS_NAME_LEN, &fn);

	if (ret)
		return f2fs_error(sbi, EFSCORRUPTED, "roll-forward: inode %u has a bad encrypted "
				  "name", fi->ino);
	ret = f2fs_find_entry_fn(sbi, dir, &fn, &cur, &ftype);
	if (!ret && cur == fi->ino)
		return 0;
	if (!ret) {
		struct f2fs_inode_info *old = f2fs_iget(sbi, cur);

		ret = f2fs_delete_entry_fn(sbi, dir, &fn);
		if (!IS_ERR(old)) {
			if (!ret && old->nlink && !--old->nlink)
				ret = f2fs_evict_inode(sbi, old);
			f2fs_mark_inode_dirty(sbi, old);
			f2fs_iput(sbi, old);
		}
	} else if (ret == -ENOENT) {
		ret = 0;
	}
	if (!ret)
		ret = f2fs_add_link_fn(sbi, dir, &fn, fi->ino, fi->mode);
	if (!ret && S_ISDIR(fi->mode))
		dir->nlink++;
	return ret;
}

/* Re-link a new file under the parent and name its inode recorded. */
static int recover_dentry(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			  const struct f2fs_node *n)
{
	nid_t pino = le32(n->i.i_pino), cur;
	unsigned int len = MIN(le32(n->i.i_namelen), (uint32_t)F2FS_NAME_LEN), ftype;
	const char *name = (const char *)n->i.i_name;
	struct f2fs_inode_info *dir = f2fs_iget(sbi, pino);
	int ret;

	if (IS_ERR(dir))
		return PTR_ERR(dir);
	if ((n->i.i_advise & FADVISE_ENC_NAME_BIT) && f2fs_is_encrypted(dir)) {
		ret = recover_encrypted_dentry(sbi, dir, fi, n, len);
		goto out;
	}
	ret = f2fs_find_entry(sbi, dir, name, len, &cur, &ftype);
	if (!ret && cur == fi->ino)
		goto out;
	if (!ret) {
		/* the name now means our inode: the old one loses this link */
		struct f2fs_inode_info *old = f2fs_iget(sbi, cur);

		ret = f2fs_delete_entry(sbi, dir, name, len);
		if (!IS_ERR(old)) {
			if (!ret && old->nlink && !--old->nlink)
				ret = f2fs_evict_inode(sbi, old);
			f2fs_mark_inode_dirty(sbi, old);
			f2fs_iput(sbi, old);
		}
	} else if (ret == -ENOENT) {
		ret = 0;
	}
	if (!ret)
		ret = f2fs_add_link(sbi, dir, name, len, fi->ino, fi->mode);
	if (!ret && S_ISDIR(fi->mode))
		dir->nlink++;
out:
	f2fs_mark_inode_dirty(sbi, dir);
	f2fs_iput(sbi, dir);
	return ret;
}

static void count_block(struct f2fs_sb_info *sbi, int delta)
{
	pthread_mutex_lock(&sbi->sm.lock);
	sbi->sm.valid_blocks += delta;
	pthread_mutex_unlock(&sbi->sm.lock);
}

/* Replay one logged dnode's addresses onto the inode's current tree. */
static int recover_data(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			const struct f2fs_node *n)
{
	unsigned int ofs = ofs_of_node(n);
	uint64_t start = f2fs_start_bidx_of_node(ofs, fi);
	unsigned int nr = ofs ? f2fs_addrs_per_block(fi) : fi->addrs_per_inode;
	const uint32_t *logged = ofs ? dnode_addrs(n) : inode_addrs(n) + fi->extra_isize;
	struct dnode_of_data dn;
	nid_t dnid;
	int ret;

	if (!ofs && (f2fs_is_inline_data(fi) || f2fs_is_inline_dentry(fi)))
		return 0;
	ret = f2fs_get_dnode_alloc(sbi, fi, start, &dn);
	if (ret)
		return ret;
	dnid = le32(folio_node(dn.folio)->footer.nid);
	for (unsigned int i = 0; i < nr && dn.ofs + i < dn.nr; i++) {
		uint32_t *addrs = (uint32_t *)dn.addrs;
		block_t src = addrs[dn.ofs + i], dest = le32(logged[i]);

		if (src == dest)
			continue;
		if (dest != NULL_ADDR && dest != NEW_ADDR && dest != COMPRESS_ADDR &&
		    !f2fs_valid_main_blkaddr(sbi, dest)) {
			ret = f2fs_error(sbi, EFSCORRUPTED, "recovery: inode %u block %llu: bad "
					 "address %u", fi->ino, (unsigned long long)(start + i), dest);
			break;
		}
		/* what the checkpoint had there goes away */
		if (src == NEW_ADDR) {
			count_block(sbi, -1);
			fi->blocks--;
		} else if (src != NULL_ADDR && src != COMPRESS_ADDR) {
			f2fs_invalidate_block(sbi, src);
			fi->blocks--;
		}
		if (dest == NEW_ADDR) {
			count_block(sbi, 1);
			fi->blocks++;
		} else if (dest != NULL_ADDR && dest != COMPRESS_ADDR) {
			struct node_info ni;
			struct f2fs_summary sum = { .nid = dnid, .ofs_in_node = dn.ofs + i };

			if (!f2fs_get_node_info(sbi, dnid, &ni))
				sum.version = ni.version;
			ret = f2fs_claim_block(sbi, dest, &sum);
			if (ret)
				break;
			fi->blocks++;
		}
		addrs[dn.ofs + i] = dest;
	}
	folio_mark_dirty(sbi, dn.folio);
	folio_put(sbi, dn.folio);
	f2fs_extent_invalidate(fi, start, nr);
	f2fs_mark_inode_dirty(sbi, fi);
	return ret;
}

/* An fsync'd xattr node replaces the inode's, under the logged nid. */
static int recover_xattr_node(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			      const struct f2fs_node *n)
{
	nid_t xnid = le32(n->footer.nid);
	struct folio *f;
	int ret;

	if (fi->xattr_nid && fi->xattr_nid != xnid) {
		ret = f2fs_truncate_node(sbi, fi->xattr_nid);
		if (ret)
			return ret;
		fi->xattr_nid = 0;
		fi->blocks--;
	}
	if (!fi->xattr_nid) {
		if (f2fs_claim_nid(sbi, xnid))
			return f2fs_error(sbi, EFSCORRUPTED, "recovery: xattr node %u in use", xnid);
		fi->xattr_nid = xnid;
		fi->blocks++;
	}
	f = f2fs_new_node_folio(sbi, xnid, fi->ino, XATTR_NODE_OFFSET, S_ISDIR(fi->mode));
	if (IS_ERR(f))
		return PTR_ERR(f);
	memcpy(f->data, n, VALID_XATTR_BLOCK_SIZE);
	folio_put(sbi, f);
	f2fs_mark_inode_dirty(sbi, fi);
	return 0;
}

static int replay_chain(struct f2fs_sb_info *sbi, block_t blk, struct f2fs_node *n, void *arg)
{
	struct fsync_list *l = arg;
	struct fsync_inode_entry *e = find_entry(l, le32(n->footer.ino));
	int ret = 0;

	/* nodes after an inode's last fsync were never promised */
	if (!e || !e->fi || e->fi == ERR_PTR(-1))
		return 0;
	if (ofs_of_node(n) == XATTR_NODE_OFFSET)
		return recover_xattr_node(sbi, e->fi, n);
	if (!f2fs_is_dnode_ofs(ofs_of_node(n)))
		return 0;
	if (ofs_of_node(n) == 0)
		recover_inode_fields(sbi, e->fi, n);
	if (e->last_dentry == blk)
		ret = recover_dentry(sbi, e->fi, n);
	if (!ret)
		ret = recover_data(sbi, e->fi, n);
	if (e->last_fsync == blk) {
		f2fs_iput(sbi, e->fi);
		e->fi = ERR_PTR(-1);	/* done: later nodes of it are not fsync'd */
	}
	return ret;
}

/*
 * Called at a read-write mount of an image whose checkpoint is followed by
 * fsync'd node blocks. On success the image has a new checkpoint that
 * includes them.
 */
int f2fs_recover_fsync_data(struct f2fs_sb_info *sbi)
{
	struct fsync_list l = { 0 };
	int ret;

	ret = walk_chain(sbi, find_fsync_dnodes, &l);
	for (unsigned int i = 0; !ret && i < l.n; i++) {
		l.v[i].fi = f2fs_iget(sbi, l.v[i].ino);
		if (IS_ERR(l.v[i].fi)) {
			ret = PTR_ERR(l.v[i].fi);
			l.v[i].fi = NULL;
		}
	}
	if (!ret)
		ret = walk_chain(sbi, replay_chain, &l);
	for (unsigned int i = 0; i < l.n; i++)
		if (l.v[i].fi && l.v[i].fi != ERR_PTR(-1))
			f2fs_iput(sbi, l.v[i].fi);
	free(l.v);
	if (ret)
		return f2fs_error(sbi, -ret, "roll-forward recovery failed: %s", strerror(-ret));
	/* blocks past the old log heads may be in use now: every log moves on */
	ret = f2fs_move_all_cursegs(sbi);
	if (!ret)
		ret = f2fs_write_checkpoint(sbi, false);
	if (!ret) {
		f2fs_info(sbi, "recovered fsync'd data of %u inode(s) by roll-forward", l.n);
		sbi->need_recovery = false;
	}
	return ret;
}
