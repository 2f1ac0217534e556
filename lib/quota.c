// SPDX-License-Identifier: GPL-2.0
/*
 * Disk quota on quota_ino images, kept as Linux f2fs keeps it: per user,
 * group and (with project_quota) project, the space of every inode's blocks
 * but the inode block itself ((i_blocks - 1) * 4 KiB) and one inode each,
 * stored in the hidden quota files the super block's qf_ino[] names, in the
 * "vfsv1" quota tree format (v2 header, 1 KiB tree blocks, depth 4, v2r1
 * entries). fsck.f2fs recounts exactly that and compares.
 *
 * Accounting is by reconciliation: each cached inode remembers what it is
 * charged with (ids and i_blocks); f2fs_quota_sync_inode moves the difference
 * into the table. It runs whenever an inode's fields go to its inode block,
 * at eviction, and for every cached inode at each checkpoint, after data
 * writeback (uf2fs allocates blocks there), before the quota files are
 * written. So a checkpoint's quota files match its inodes exactly. A quota
 * file is rebuilt whole from the table, in the id order the quota tools'
 * insertion gives, and only the 4 KiB blocks that differ are written; its
 * blocks go out in the same checkpoint, never in place.
 *
 * When the files cannot be trusted (the checkpoint says quota_need_fsck, a
 * file is unreadable, roll-forward recovery ran), the table is recounted
 * from every inode at mount, as fsck.f2fs would, and the flag is cleared by
 * the next checkpoint.
 */
#include <stdlib.h>
#include <time.h>

#include "f2fs.h"
#include "quota.h"

#define QT_BLKSIZE_BITS	10
#define QT_BLKSIZE	(1u << QT_BLKSIZE_BITS)
#define QT_TREEOFF	1		/* the root tree block */
#define QT_TREEDEPTH	4
#define V2_DQINFOOFF	8		/* struct v2_disk_dqheader */
#define V2_DQDBHDR	16		/* struct qt_disk_dqdbheader */
#define V2R1_ENTRY	72		/* struct v2r1_disk_dqblk */
#define V2_PER_BLK	((QT_BLKSIZE - V2_DQDBHDR) / V2R1_ENTRY)
#define V2_VERSION_R1	1
#define QF_DEF_GRACE	(7 * 24 * 3600)	/* MAX_DQ_TIME / MAX_IQ_TIME */
#define QF_MAX_BYTES	(64u << 20)	/* a larger quota file is taken as corrupt */

static const uint32_t qf_magic[F2FS_MAX_QUOTAS] = { 0xd9c01f11, 0xd9c01927, 0xd9c03f14 };
static const char *const qf_name[F2FS_MAX_QUOTAS] = { "user", "group", "project" };

struct qtype {
	struct uf2fs_dquot *v;		/* sorted by id */
	size_t n, cap;
	uint32_t bgrace, igrace, flags;
	nid_t ino;
	bool on;
};

struct f2fs_quota_info {
	pthread_mutex_t lock;
	struct qtype t[F2FS_MAX_QUOTAS];
	bool dirty;			/* the table changed since the files were written */
	bool need_repair;		/* the files are not to be trusted: recount */
	bool has_rsv;			/* reservations since the last checkpoint */
	bool write_failed;
};

static inline uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32(v);
}

static inline uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64(v);
}

static inline void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static inline void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

bool f2fs_is_quota_ino(const struct f2fs_sb_info *sbi, nid_t ino)
{
	if (!f2fs_has_feature(sbi, F2FS_FEATURE_QUOTA_INO))
		return false;
	for (int i = 0; i < F2FS_MAX_QUOTAS; i++)
		if (ino && le32(sbi->raw_super.qf_ino[i]) == ino)
			return true;
	return false;
}

uint32_t f2fs_raw_projid(const struct f2fs_sb_info *sbi, const struct f2fs_inode *ri)
{
	size_t need = offsetof(struct f2fs_inode, i_projid) + 4 - OFFSET_OF_END_OF_I_EXT;

	if (!f2fs_has_feature(sbi, F2FS_FEATURE_PRJQUOTA) || !(ri->i_inline & F2FS_EXTRA_ATTR) ||
	    le16(ri->i_extra_isize) < need)
		return F2FS_DEF_PROJID;
	return le32(ri->i_projid);
}

/// The table ///

static struct uf2fs_dquot *dq_find(struct qtype *t, uint32_t id, bool create)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->v[mid].id == id)
			return &t->v[mid];
		if (t->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!create)
		return NULL;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct uf2fs_dquot *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->v = v;
		t->cap = cap;
	}
	memmove(&t->v[lo + 1], &t->v[lo], (t->n - lo) * sizeof(*t->v));
	t->n++;
	memset(&t->v[lo], 0, sizeof(*t->v));
	t->v[lo].id = id;
	return &t->v[lo];
}

/* The kernel's grace rules: a timer starts when usage first passes a soft limit. */
static void dq_update_grace(struct qtype *t, struct uf2fs_dquot *d)
{
	int64_t now = time(NULL);

	if (d->bsoft && d->space > (int64_t)d->bsoft) {
		if (!d->btime)
			d->btime = now + t->bgrace;
	} else {
		d->btime = 0;
	}
	if (d->isoft && d->inodes > (int64_t)d->isoft) {
		if (!d->itime)
			d->itime = now + t->igrace;
	} else {
		d->itime = 0;
	}
}

/* Add (sign +1) or take away (-1) one inode and its space; q->lock held. */
static void charge(struct f2fs_quota_info *q, const uint32_t ids[3], uint64_t blocks, int sign)
{
	int64_t space = (int64_t)(blocks ? blocks - 1 : 0) * F2FS_BLKSIZE;

	for (int i = 0; i < F2FS_MAX_QUOTAS; i++) {
		struct uf2fs_dquot *d;

		if (!q->t[i].on)
			continue;
		d = dq_find(&q->t[i], ids[i], true);
		if (!d) {
			q->need_repair = true;	/* out of memory: the files are stale */
			continue;
		}
		d->space += sign * space;
		d->inodes += sign;
		dq_update_grace(&q->t[i], d);
	}
	q->dirty = true;
}

void f2fs_quota_sync_inode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	struct f2fs_quota_info *q = sbi->quota;
	bool gone = fi->freed;
	uint32_t ids[3];

	if (!q || f2fs_is_quota_ino(sbi, fi->ino))
		return;
	pthread_mutex_lock(&q->lock);
	if (fi->q_charged && !gone && fi->q_uid == fi->uid && fi->q_gid == fi->gid &&
	    fi->q_projid == fi->projid && fi->q_blocks == fi->blocks)
		goto out;
	if (!fi->q_charged && gone)
		goto out;
	if (fi->q_charged) {
		ids[0] = fi->q_uid, ids[1] = fi->q_gid, ids[2] = fi->q_projid;
		charge(q, ids, fi->q_blocks, -1);
	}
	fi->q_charged = !gone;
	if (!gone) {
		ids[0] = fi->uid, ids[1] = fi->gid, ids[2] = fi->projid;
		charge(q, ids, fi->blocks, +1);
		fi->q_uid = fi->uid, fi->q_gid = fi->gid, fi->q_projid = fi->projid;
		fi->q_blocks = fi->blocks;
	}
out:
	pthread_mutex_unlock(&q->lock);
}

void f2fs_quota_inode_loaded(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	/* what the inode block says is what the checkpoint's quota files count */
	fi->q_charged = true;
	fi->q_uid = fi->uid, fi->q_gid = fi->gid, fi->q_projid = fi->projid;
	fi->q_blocks = fi->blocks;
	(void)sbi;
}

/// Reading a quota file ///

struct qf_parse {
	const uint8_t *buf;
	uint32_t nblocks;
	uint8_t *seen;			/* data blocks already read */
	uint8_t *tree_seen;		/* tree blocks: each has one parent */
	struct qtype *t;
	int depth_err;
};

static int parse_entry(struct qtype *t, const uint8_t *e)
{
	static const uint8_t escaped[V2R1_ENTRY - 8];
	struct uf2fs_dquot *d;
	uint32_t id = get32(e);

	d = dq_find(t, id, true);
	if (!d)
		return -ENOMEM;
	d->ihard = get64(e + 8);
	d->isoft = get64(e + 16);
	d->inodes = get64(e + 24);
	d->bhard = get64(e + 32) << QT_BLKSIZE_BITS;
	d->bsoft = get64(e + 40) << QT_BLKSIZE_BITS;
	d->space = get64(e + 48);
	d->btime = get64(e + 56);
	d->itime = get64(e + 64);
	/* an all-zero entry is stored with itime 1, so that it is not a free slot */
	if (d->itime == 1 && !memcmp(e + 8, escaped, V2R1_ENTRY - 16) && !get32(e + 4))
		d->itime = 0;
	return 0;
}

static int parse_data_block(struct qf_parse *p, uint32_t blk)
{
	const uint8_t *b = p->buf + ((size_t)blk << QT_BLKSIZE_BITS);
	static const uint8_t zero[V2R1_ENTRY];

	if (p->seen[blk / 8] & (1u << (blk % 8)))
		return 0;
	p->seen[blk / 8] |= 1u << (blk % 8);
	for (unsigned int i = 0; i < V2_PER_BLK; i++) {
		const uint8_t *e = b + V2_DQDBHDR + i * V2R1_ENTRY;

		if (!memcmp(e, zero, V2R1_ENTRY))
			continue;
		int ret = parse_entry(p->t, e);

		if (ret)
			return ret;
	}
	return 0;
}

static int parse_tree(struct qf_parse *p, uint32_t blk, int depth)
{
	const uint8_t *b = p->buf + ((size_t)blk << QT_BLKSIZE_BITS);

	for (unsigned int i = 0; i < QT_BLKSIZE / 4; i++) {
		uint32_t ref = get32(b + 4 * i);
		int ret;

		if (!ref)
			continue;
		if (ref >= p->nblocks || ref <= QT_TREEOFF)
			return -EFSCORRUPTED;
		if (depth == QT_TREEDEPTH - 1) {
			ret = parse_data_block(p, ref);
		} else {
			/* a block met twice is a loop or a shared subtree: corrupt */
			if (p->tree_seen[ref / 8] & (1u << (ref % 8)))
				return -EFSCORRUPTED;
			p->tree_seen[ref / 8] |= 1u << (ref % 8);
			ret = parse_tree(p, ref, depth + 1);
		}
		if (ret)
			return ret;
	}
	return 0;
}

static int qf_read_all(struct f2fs_sb_info *sbi, nid_t ino, uint8_t **out, size_t *len)
{
	struct f2fs_inode_info *fi = f2fs_iget(sbi, ino);
	uint8_t *buf = NULL;
	ssize_t got;
	int ret = 0;

	if (IS_ERR(fi))
		return PTR_ERR(fi);
	if (!S_ISREG(fi->mode) || fi->size > QF_MAX_BYTES || fi->size < 2 * QT_BLKSIZE) {
		ret = -EFSCORRUPTED;
		goto out;
	}
	buf = calloc(1, fi->size);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	got = f2fs_file_read(sbi, fi, buf, fi->size, 0);
	if (got < 0)
		ret = (int)got;
	else if ((size_t)got != fi->size)
		ret = -EFSCORRUPTED;
	*len = fi->size;
out:
	f2fs_iput(sbi, fi);
	if (ret)
		free(buf);
	else
		*out = buf;
	return ret;
}

static int qf_load(struct f2fs_sb_info *sbi, int type, struct qtype *t)
{
	struct qf_parse p = { .t = t };
	uint8_t *buf = NULL;
	size_t len = 0;
	int ret = qf_read_all(sbi, t->ino, &buf, &len);

	if (ret)
		return ret;
	p.buf = buf;
	p.nblocks = get32(buf + V2_DQINFOOFF + 12);
	if (get32(buf) != qf_magic[type] || get32(buf + 4) != V2_VERSION_R1 ||
	    p.nblocks < QT_TREEOFF + 1 || (uint64_t)p.nblocks << QT_BLKSIZE_BITS > len) {
		ret = -EFSCORRUPTED;
		goto out;
	}
	t->bgrace = get32(buf + V2_DQINFOOFF);
	t->igrace = get32(buf + V2_DQINFOOFF + 4);
	t->flags = get32(buf + V2_DQINFOOFF + 8);
	p.seen = calloc(1, p.nblocks / 8 + 1);
	p.tree_seen = calloc(1, p.nblocks / 8 + 1);
	ret = p.seen && p.tree_seen ? parse_tree(&p, QT_TREEOFF, 0) : -ENOMEM;
	free(p.seen);
	free(p.tree_seen);
out:
	free(buf);
	return ret;
}

/// Writing a quota file ///

struct qf_image {
	uint8_t *buf;
	uint32_t nblocks, cap;
};

static int img_alloc(struct qf_image *im, uint32_t *out)
{
	if (im->nblocks == im->cap) {
		uint32_t cap = im->cap ? im->cap * 2 : 8;
		uint8_t *b = realloc(im->buf, (size_t)cap << QT_BLKSIZE_BITS);

		if (!b)
			return -ENOMEM;
		im->buf = b;
		im->cap = cap;
	}
	memset(im->buf + ((size_t)im->nblocks << QT_BLKSIZE_BITS), 0, QT_BLKSIZE);
	*out = im->nblocks++;
	return 0;
}

static uint8_t *img_blk(struct qf_image *im, uint32_t blk)
{
	return im->buf + ((size_t)blk << QT_BLKSIZE_BITS);
}

static void put_entry(uint8_t *e, const struct uf2fs_dquot *d)
{
	static const uint8_t zero[V2R1_ENTRY];

	put32(e, d->id);
	put32(e + 4, 0);
	put64(e + 8, d->ihard);
	put64(e + 16, d->isoft);
	put64(e + 24, d->inodes);
	put64(e + 32, d->bhard >> QT_BLKSIZE_BITS);
	put64(e + 40, d->bsoft >> QT_BLKSIZE_BITS);
	put64(e + 48, d->space);
	put64(e + 56, d->btime);
	put64(e + 64, d->itime);
	if (!memcmp(e, zero, V2R1_ENTRY))
		put64(e + 64, 1);
}

/* Nothing in use, no limit: the kernel drops such an entry at dquot release. */
static bool dq_empty(const struct uf2fs_dquot *d)
{
	return !d->space && !d->inodes && !d->bhard && !d->bsoft && !d->ihard && !d->isoft;
}

/*
 * The file the quota tools' qtree insertion makes from an empty one, ids in
 * ascending order: tree blocks in depth-first order of first use, entries
 * packed into data blocks, the last data block (when not full) on the
 * free-entry list.
 */
static int qf_build(const struct qtype *t, int type, struct qf_image *im)
{
	uint32_t blk, free_entry = 0;
	int ret;

	if ((ret = img_alloc(im, &blk)) || (ret = img_alloc(im, &blk)))
		return ret;
	for (size_t i = 0; i < t->n; i++) {
		const struct uf2fs_dquot *d = &t->v[i];
		uint32_t cur = QT_TREEOFF;

		if (dq_empty(d))
			continue;
		for (int depth = 0; depth < QT_TREEDEPTH; depth++) {
			unsigned int idx = (d->id >> ((QT_TREEDEPTH - depth - 1) * 8)) & 0xff;
			uint32_t ref = get32(img_blk(im, cur) + 4 * idx);

			if (depth == QT_TREEDEPTH - 1) {
				uint8_t *db;
				uint16_t n;

				if (!free_entry && (ret = img_alloc(im, &free_entry)))
					return ret;
				db = img_blk(im, free_entry);
				memcpy(&n, db + 8, 2);
				put_entry(db + V2_DQDBHDR + n * V2R1_ENTRY, d);
				n++;
				memcpy(db + 8, &n, 2);
				put32(img_blk(im, cur) + 4 * idx, free_entry);
				if (n >= V2_PER_BLK)
					free_entry = 0;
				break;
			}
			if (!ref) {
				if ((ret = img_alloc(im, &ref)))
					return ret;
				put32(img_blk(im, cur) + 4 * idx, ref);
			}
			cur = ref;
		}
	}
	blk = 0;
	put32(img_blk(im, blk), qf_magic[type]);
	put32(img_blk(im, blk) + 4, V2_VERSION_R1);
	put32(img_blk(im, blk) + V2_DQINFOOFF, t->bgrace);
	put32(img_blk(im, blk) + V2_DQINFOOFF + 4, t->igrace);
	put32(img_blk(im, blk) + V2_DQINFOOFF + 8, t->flags);
	put32(img_blk(im, blk) + V2_DQINFOOFF + 12, im->nblocks);
	put32(img_blk(im, blk) + V2_DQINFOOFF + 16, 0);
	put32(img_blk(im, blk) + V2_DQINFOOFF + 20, free_entry);
	return 0;
}

/* Dirty the 4 KiB blocks of the quota file that differ from the image. */
static int qf_store(struct f2fs_sb_info *sbi, nid_t ino, const struct qf_image *im)
{
	struct f2fs_inode_info *fi = f2fs_iget(sbi, ino);
	uint64_t size = (uint64_t)im->nblocks << QT_BLKSIZE_BITS;
	uint64_t nblk = DIV_ROUND_UP(size, F2FS_BLKSIZE);
	uint8_t *old = NULL;
	int ret = 0;

	if (IS_ERR(fi))
		return PTR_ERR(fi);
	if (f2fs_is_inline_data(fi) || f2fs_is_compressed(fi) || f2fs_is_encrypted(fi)) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	old = malloc(F2FS_BLKSIZE);
	if (!old) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint64_t b = 0; b < nblk && !ret; b++) {
		uint64_t off = b * F2FS_BLKSIZE;
		size_t n = MIN((uint64_t)F2FS_BLKSIZE, size - off);
		struct folio *f;
		bool created;

		memset(old, 0, F2FS_BLKSIZE);
		if (off < fi->size) {
			ssize_t got = f2fs_file_read(sbi, fi, old, F2FS_BLKSIZE, off);

			if (got < 0) {
				ret = (int)got;
				break;
			}
		}
		if (off < fi->size && !memcmp(old, im->buf + off, n))
			continue;
		memcpy(old, im->buf + off, n);
		memset(old + n, 0, F2FS_BLKSIZE - n);
		f = folio_grab(sbi, MAP_DATA, fi->ino, b, 0, &created);
		if (IS_ERR(f)) {
			ret = PTR_ERR(f);
			break;
		}
		if (created)
			folio_end_fill(sbi, f, true);
		else
			ret = folio_wait_uptodate(f);
		if (!ret) {
			memcpy(folio_block_ptr(f, b), old, F2FS_BLKSIZE);
			f2fs_mark_range_dirty(sbi, f, b, b + 1);
		}
		folio_put(sbi, f);
	}
	/* blocks past the new end keep old bytes that no tree block points to */
	if (!ret && size > fi->size) {
		fi->size = size;
		f2fs_mark_inode_dirty(sbi, fi);
	}
	if (!ret)
		ret = f2fs_writeback_inode(sbi, fi);
out:
	free(old);
	f2fs_iput(sbi, fi);
	return ret;
}

static void sync_cached(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, void *arg)
{
	(void)arg;
	f2fs_quota_sync_inode(sbi, fi);
}

int f2fs_quota_checkpoint(struct f2fs_sb_info *sbi)
{
	struct f2fs_quota_info *q = sbi->quota;
	int ret = 0;

	if (!q || sbi->opts.read_only)
		return 0;
	f2fs_icache_for_each(sbi, sync_cached, NULL);
	/* data is written back: what was reserved is in the usage now */
	pthread_mutex_lock(&q->lock);
	for (int i = 0; i < F2FS_MAX_QUOTAS && q->has_rsv; i++)
		for (size_t j = 0; j < q->t[i].n; j++)
			q->t[i].v[j].rsv_space = q->t[i].v[j].rsv_inodes = 0;
	q->has_rsv = false;
	pthread_mutex_unlock(&q->lock);
	if (!q->dirty || q->need_repair)
		return 0;
	for (int i = 0; i < F2FS_MAX_QUOTAS && !ret; i++) {
		struct qf_image im = { 0 };

		if (!q->t[i].on)
			continue;
		pthread_mutex_lock(&q->lock);
		ret = qf_build(&q->t[i], i, &im);
		pthread_mutex_unlock(&q->lock);
		if (!ret)
			ret = qf_store(sbi, q->t[i].ino, &im);
		free(im.buf);
	}
	if (ret) {
		/* as the kernel when a quota write fails: the files wait for a repair */
		f2fs_msg(sbi, "writing the quota files failed (%s); marked for repair",
			 strerror(-ret));
		q->write_failed = true;
		return 0;
	}
	q->dirty = false;
	return 0;
}

bool f2fs_quota_need_fsck(const struct f2fs_sb_info *sbi)
{
	const struct f2fs_quota_info *q = sbi->quota;

	if (!q)
		return le32(sbi->ckpt->ckpt_flags) & CP_QUOTA_NEED_FSCK_FLAG;
	return q->need_repair || q->write_failed;
}

/// Mount: load, and recount when the files cannot be trusted ///

int f2fs_quota_mount(struct f2fs_sb_info *sbi)
{
	struct f2fs_quota_info *q;

	if (!f2fs_has_feature(sbi, F2FS_FEATURE_QUOTA_INO))
		return 0;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	pthread_mutex_init(&q->lock, NULL);
	for (int i = 0; i < F2FS_MAX_QUOTAS; i++) {
		struct qtype *t = &q->t[i];
		int ret;

		t->ino = le32(sbi->raw_super.qf_ino[i]);
		t->bgrace = t->igrace = QF_DEF_GRACE;
		if (!t->ino || (i == 2 && !f2fs_has_feature(sbi, F2FS_FEATURE_PRJQUOTA)))
			continue;
		t->on = true;
		ret = qf_load(sbi, i, t);
		if (ret) {
			f2fs_msg(sbi, "%s quota file (inode %u) unreadable (%s); %s",
				 qf_name[i], t->ino, strerror(-ret), sbi->opts.read_only ?
				 "no usage to show" : "usage will be recounted");
			t->n = 0;
			t->bgrace = t->igrace = QF_DEF_GRACE;
			q->need_repair = true;
			if (ret == -ENOMEM) {
				f2fs_quota_destroy(sbi);
				free(q);
				return ret;
			}
		}
	}
	if (le32(sbi->ckpt->ckpt_flags) & CP_QUOTA_NEED_FSCK_FLAG)
		q->need_repair = true;
	sbi->quota = q;
	return 0;
}

static void reset_cached(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, void *arg)
{
	(void)arg;
	f2fs_quota_inode_loaded(sbi, fi);
}

static int recount_inode(struct f2fs_sb_info *sbi, nid_t ino, const struct f2fs_inode *ri,
			 void *arg)
{
	struct f2fs_quota_info *q = arg;
	uint32_t ids[3];

	if (f2fs_is_quota_ino(sbi, ino))
		return 0;
	ids[0] = le32(ri->i_uid);
	ids[1] = le32(ri->i_gid);
	ids[2] = f2fs_raw_projid(sbi, ri);
	pthread_mutex_lock(&q->lock);
	charge(q, ids, le64(ri->i_blocks), +1);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

/*
 * Recount usage from every inode the NAT maps, as fsck.f2fs does; limits are
 * kept. Only the NAT's inode entries are visited, their blocks read in
 * address order (f2fs_walk_inodes), not every nid through the cache.
 */
static int quota_recount(struct f2fs_sb_info *sbi)
{
	struct f2fs_quota_info *q = sbi->quota;
	int ret;

	pthread_mutex_lock(&q->lock);
	for (int i = 0; i < F2FS_MAX_QUOTAS; i++)
		for (size_t j = 0; j < q->t[i].n; j++)
			q->t[i].v[j].space = q->t[i].v[j].inodes = 0;
	pthread_mutex_unlock(&q->lock);
	ret = f2fs_walk_inodes(sbi, recount_inode, q);
	if (ret)
		return ret;
	f2fs_icache_for_each(sbi, reset_cached, NULL);
	q->need_repair = false;
	q->write_failed = false;
	q->dirty = true;
	return 0;
}

int f2fs_quota_repair(struct f2fs_sb_info *sbi, bool recovered)
{
	struct f2fs_quota_info *q = sbi->quota;
	int ret;

	if (!q || sbi->opts.read_only)
		return 0;
	if (!recovered && !q->need_repair)
		return 0;
	/* every inode on disk first, so that the count sees them all */
	q->need_repair = true;
	ret = f2fs_write_checkpoint(sbi, false);
	if (!ret)
		ret = quota_recount(sbi);
	if (!ret)
		ret = f2fs_write_checkpoint(sbi, false);
	if (!ret)
		f2fs_info(sbi, "quota usage recounted from every inode");
	return ret;
}

void f2fs_quota_destroy(struct f2fs_sb_info *sbi)
{
	struct f2fs_quota_info *q = sbi->quota;

	if (!q)
		return;
	for (int i = 0; i < F2FS_MAX_QUOTAS; i++)
		free(q->t[i].v);
	pthread_mutex_destroy(&q->lock);
	free(q);
	sbi->quota = NULL;
}

/// Public API ///

int uf2fs_quota_get(struct uf2fs *fs, int type, struct uf2fs_quota_list *out)
{
	struct f2fs_sb_info *sbi = (struct f2fs_sb_info *)fs;
	struct f2fs_quota_info *q = sbi->quota;
	struct qtype *t;

	memset(out, 0, sizeof(*out));
	if (type < 0 || type >= F2FS_MAX_QUOTAS)
		return -EINVAL;
	if (!q || !q->t[type].on)
		return -ENOENT;
	t = &q->t[type];
	pthread_mutex_lock(&q->lock);
	out->v = malloc((t->n ? t->n : 1) * sizeof(*out->v));
	if (out->v) {
		for (size_t i = 0; i < t->n; i++)
			if (!dq_empty(&t->v[i]))
				out->v[out->n++] = t->v[i];
		out->bgrace = t->bgrace;
		out->igrace = t->igrace;
		out->need_fsck = q->need_repair || q->write_failed;
	}
	pthread_mutex_unlock(&q->lock);
	return out->v ? 0 : -ENOMEM;
}

/// Project IDs (FS_IOC_FSGETXATTR / FS_IOC_FSSETXATTR) ///

int uf2fs_get_projid(struct uf2fs *fs, uint32_t ino, uint32_t *projid)
{
	struct f2fs_sb_info *sbi = (struct f2fs_sb_info *)fs;
	struct f2fs_inode_info *fi;

	if (ino < F2FS_RESERVED_NODE_NUM)
		return -ENOENT;
	fi = f2fs_iget(sbi, ino);
	if (IS_ERR(fi))
		return PTR_ERR(fi);
	*projid = fi->projid;
	f2fs_iput(sbi, fi);
	return 0;
}

/* As the kernel's f2fs_ioc_setproject; the caller (the VFS) checked ownership. */
static int set_projid(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint32_t projid)
{
	int ret;
	size_t need = offsetof(struct f2fs_inode, i_projid) + 4 - OFFSET_OF_END_OF_I_EXT;

	if (!f2fs_has_feature(sbi, F2FS_FEATURE_PRJQUOTA))
		return projid == F2FS_DEF_PROJID ? 0 : -EOPNOTSUPP;
	if (!(fi->i_inline & F2FS_EXTRA_ATTR))
		return -EOPNOTSUPP;
	if (projid == fi->projid)
		return 0;
	if (f2fs_is_quota_ino(sbi, fi->ino))
		return -EPERM;
	if (fi->extra_isize * 4 < need)
		return -EOVERFLOW;
	ret = f2fs_quota_transfer(sbi, fi, fi->uid, fi->gid, projid);
	if (ret)
		return ret;
	fi->projid = projid;
	f2fs_quota_sync_inode(sbi, fi);
	f2fs_inode_touch(fi, false, true);
	f2fs_mark_inode_dirty(sbi, fi);
	return 0;
}

static int do_set_projid(struct uf2fs *fs, uint32_t ino, uint32_t projid)
{
	struct f2fs_sb_info *sbi = (struct f2fs_sb_info *)fs;
	struct f2fs_inode_info *fi;
	int ret;

	if (ino < F2FS_RESERVED_NODE_NUM)
		return -ENOENT;
	ret = f2fs_begin_write(sbi);
	if (ret)
		return ret;
	fi = f2fs_iget(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
	} else {
		pthread_rwlock_wrlock(&fi->i_rwsem);
		ret = set_projid(sbi, fi, projid);
		pthread_rwlock_unlock(&fi->i_rwsem);
		f2fs_iput(sbi, fi);
	}
	f2fs_end_write(sbi);
	return ret;
}

int uf2fs_set_projid(struct uf2fs *fs, uint32_t ino, uint32_t projid)
{
	return F2FS_WITH_ROOM((struct f2fs_sb_info *)fs, do_set_projid(fs, ino, projid));
}

/// Limits and grace times (`uf2fs setquota`, UF2FS_IOC_SETQUOTA) ///

int uf2fs_quota_getnext(struct uf2fs *fs, int type, uint32_t id, struct uf2fs_dquot *out,
			uint32_t *bgrace, uint32_t *igrace)
{
	struct f2fs_sb_info *sbi = (struct f2fs_sb_info *)fs;
	struct f2fs_quota_info *q = sbi->quota;
	int ret = -ENOENT;

	if (type < 0 || type >= F2FS_MAX_QUOTAS)
		return -EINVAL;
	if (!q || !q->t[type].on)
		return -ENODATA;
	pthread_mutex_lock(&q->lock);
	for (size_t i = 0; i < q->t[type].n; i++) {
		const struct uf2fs_dquot *d = &q->t[type].v[i];

		if (d->id >= id && !dq_empty(d)) {
			*out = *d;
			ret = 0;
			break;
		}
	}
	*bgrace = q->t[type].bgrace;
	*igrace = q->t[type].igrace;
	pthread_mutex_unlock(&q->lock);
	return ret;
}

/* Set by uf2fs_quota_caller: this thread acts for someone other than root. */
static __thread bool caller_limited;

int uf2fs_quota_set(struct uf2fs *fs, int type, uint32_t id, const struct uf2fs_dquot *lim,
		    uint32_t bgrace, uint32_t igrace, unsigned int mask)
{
	struct f2fs_sb_info *sbi = (struct f2fs_sb_info *)fs;
	struct f2fs_quota_info *q = sbi->quota;
	struct qtype *t;
	int ret;

	/* quotactl's Q_SETQUOTA and Q_SETINFO need CAP_SYS_ADMIN */
	if (caller_limited)
		return -EPERM;
	if (sbi->opts.read_only)
		return -EROFS;
	if (type < 0 || type >= F2FS_MAX_QUOTAS)
		return -EINVAL;
	if (!q || !q->t[type].on)
		return -ENODATA;
	ret = f2fs_begin_write(sbi);
	if (ret)
		return ret;
	t = &q->t[type];
	pthread_mutex_lock(&q->lock);
	if (mask & (UF2FS_QSET_BLIMITS | UF2FS_QSET_ILIMITS)) {
		struct uf2fs_dquot *d = dq_find(t, id, true);

		if (!d) {
			ret = -ENOMEM;
		} else {
			if (mask & UF2FS_QSET_BLIMITS) {
				/* the files keep KiB */
				d->bsoft = lim->bsoft & ~(uint64_t)(QT_BLKSIZE - 1);
				d->bhard = lim->bhard & ~(uint64_t)(QT_BLKSIZE - 1);
				d->btime = 0;
			}
			if (mask & UF2FS_QSET_ILIMITS) {
				d->isoft = lim->isoft;
				d->ihard = lim->ihard;
				d->itime = 0;
			}
			dq_update_grace(t, d);
		}
	}
	if (mask & UF2FS_QSET_BGRACE)
		t->bgrace = bgrace;
	if (mask & UF2FS_QSET_IGRACE)
		t->igrace = igrace;
	q->dirty = true;
	pthread_mutex_unlock(&q->lock);
	f2fs_end_write(sbi);
	return ret;
}

/// Limits (usrquota, grpquota, prjquota) ///

void uf2fs_quota_caller(uint32_t uid)
{
	caller_limited = uid != 0;
}

static bool dq_over(const struct uf2fs_dquot *d, int64_t space, int64_t inodes, int64_t now)
{
	if (space && d->bhard && space > (int64_t)d->bhard)
		return true;
	if (space && d->bsoft && space > (int64_t)d->bsoft && d->btime && now >= d->btime)
		return true;
	if (inodes && d->ihard && inodes > (int64_t)d->ihard)
		return true;
	if (inodes && d->isoft && inodes > (int64_t)d->isoft && d->itime && now >= d->itime)
		return true;
	return false;
}

/*
 * Reserve nblocks and ninodes for ids, as dquot_reserve_block and
 * dquot_alloc_inode check them. Usage in the table is exact as of the last
 * checkpoint; what was reserved since is added, and may count a block twice
 * (written twice before its writeback): so an apparent excess with
 * reservations outstanding asks for a checkpoint and a retry (-EAGAIN, as
 * for space) before it is EDQUOT.
 */
static int quota_reserve(struct f2fs_sb_info *sbi, const uint32_t ids[3], uint64_t nblocks,
			 unsigned int ninodes, bool limited, unsigned int types)
{
	struct f2fs_quota_info *q = sbi->quota;
	int64_t now = time(NULL), add = (int64_t)nblocks * F2FS_BLKSIZE;
	int ret = 0;

	if (!q || !sbi->opts.quota_enforce || !limited || (!nblocks && !ninodes))
		return 0;
	pthread_mutex_lock(&q->lock);
	for (int i = 0; i < F2FS_MAX_QUOTAS && !ret; i++) {
		struct uf2fs_dquot *d;

		if (!q->t[i].on || !(sbi->opts.quota_enforce & types & (1u << i)))
			continue;
		d = dq_find(&q->t[i], ids[i], false);
		if (d && dq_over(d, nblocks ? d->space + d->rsv_space + add : 0,
				 ninodes ? d->inodes + d->rsv_inodes + ninodes : 0, now))
			ret = q->has_rsv ? -EAGAIN : -EDQUOT;
	}
	for (int i = 0; i < F2FS_MAX_QUOTAS && !ret; i++) {
		struct uf2fs_dquot *d;

		if (!q->t[i].on || !(sbi->opts.quota_enforce & types & (1u << i)))
			continue;
		d = dq_find(&q->t[i], ids[i], false);
		if (d) {
			d->rsv_space += add;
			d->rsv_inodes += ninodes;
			q->has_rsv = true;
		}
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
}

int f2fs_quota_reserve_inode(struct f2fs_sb_info *sbi, uint32_t uid, uint32_t gid,
			     const struct f2fs_inode_info *dir)
{
	/* the creator's uid is the caller's: root ignores limits */
	uint32_t ids[3] = { uid, gid, F2FS_DEF_PROJID };

	if (dir && (dir->flags & F2FS_PROJINHERIT_FL))
		ids[2] = dir->projid;
	return quota_reserve(sbi, ids, 0, 1, uid != 0, 7);
}

/*
 * Blocks the enforced limits of ids still let in before a write is refused,
 * as check_bdq would refuse the next block: up to the hard limit, and up to
 * the soft limit once its grace time ran out (UINT64_MAX: no limit applies).
 */
static uint64_t quota_block_room(struct f2fs_sb_info *sbi, const uint32_t ids[3])
{
	struct f2fs_quota_info *q = sbi->quota;
	int64_t now = time(NULL);
	uint64_t room = UINT64_MAX;

	pthread_mutex_lock(&q->lock);
	for (int i = 0; i < F2FS_MAX_QUOTAS; i++) {
		struct uf2fs_dquot *d;
		int64_t used, cap = -1;

		if (!q->t[i].on || !(sbi->opts.quota_enforce & (1u << i)))
			continue;
		d = dq_find(&q->t[i], ids[i], false);
		if (!d)
			continue;
		used = d->space + d->rsv_space;
		if (d->bhard)
			cap = (int64_t)d->bhard;
		if (d->bsoft && d->btime && now >= d->btime && (cap < 0 || (int64_t)d->bsoft < cap))
			cap = (int64_t)d->bsoft;
		if (cap >= 0)
			room = MIN(room, cap > used ? (uint64_t)(cap - used) / F2FS_BLKSIZE : 0);
	}
	pthread_mutex_unlock(&q->lock);
	return room;
}

/*
 * Holes (blocks with none yet) of blocks [blk, end), paid from *room while it
 * lasts: *stop is the first hole past it (UINT64_MAX when all fit).
 */
static int pay_holes(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t blk,
		     uint64_t end, uint64_t *room, uint64_t *stop)
{
	*stop = UINT64_MAX;
	if (f2fs_is_inline_data(fi) || f2fs_is_compressed(fi)) {
		if (end - blk > *room)
			*stop = blk + *room;
		*room -= MIN(end - blk, *room);
		return 0;
	}
	while (blk < end) {
		struct f2fs_map_blocks map = { .lblk = blk, .len = (uint32_t)MIN(end - blk, 1u << 20) };
		int ret = f2fs_map_blocks(sbi, fi, &map);

		if (ret)
			return ret;
		if (!map.len)
			map.len = 1;
		if (map.pblk == NULL_ADDR) {
			if (map.len > *room) {
				*stop = blk + *room;
				*room = 0;
				return 0;
			}
			*room -= map.len;
		}
		blk += map.len;
	}
	return 0;
}

/* The end of the dnode (the inode's own addresses, or a direct node) mapping blk. */
static uint64_t dnode_end(const struct f2fs_inode_info *fi, uint64_t blk)
{
	uint64_t in_inode = fi->addrs_per_inode, per = f2fs_addrs_per_block(fi);

	return blk < in_inode ? in_inode : in_inode + ((blk - in_inode) / per + 1) * per;
}

/*
 * A direct node a write into [blk, dnode_end) would have to allocate: none of
 * its addresses maps a block (a dnode emptied by a punch counts as missing;
 * indirect nodes are not counted). Linux charges a new node block to quota
 * (inc_valid_node_count) before the data under it.
 */
static int dnode_missing(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t blk,
			 bool *missing)
{
	uint64_t start, end = dnode_end(fi, blk), room = UINT64_MAX, stop;
	int ret;

	*missing = false;
	if (blk < fi->addrs_per_inode || f2fs_is_inline_data(fi) || f2fs_is_compressed(fi))
		return 0;
	start = end - f2fs_addrs_per_block(fi);
	ret = pay_holes(sbi, fi, start, end, &room, &stop);
	*missing = !ret && UINT64_MAX - room == end - start;
	return ret;
}

/*
 * Pay for the pages of [blk, end) in order, a new dnode before its first
 * page unless it was paid for already (dnodes ending in [paid_lo, paid_hi]).
 */
static int pay_pages(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t blk,
		     uint64_t end, const uint64_t paid[2], uint64_t *room, uint64_t *stop)
{
	int ret = 0;

	*stop = UINT64_MAX;
	while (blk < end && !ret && *stop == UINT64_MAX) {
		uint64_t dend = dnode_end(fi, blk), to = MIN(dend, end);
		bool missing = false;

		if (dend < paid[0] || dend > paid[1])
			ret = dnode_missing(sbi, fi, blk, &missing);
		if (ret)
			break;
		if (missing && !*room) {
			*stop = blk;
			break;
		}
		*room -= missing;
		ret = pay_holes(sbi, fi, blk, to, room, stop);
		blk = to;
	}
	return ret;
}

/*
 * How much of a write of [off, off + *len) the limits let through, as Linux
 * f2fs decides it (measured against the Debian kernel in QEMU): the write
 * first preallocates its whole blocks (f2fs_preallocate_blocks), one dnode at
 * a time, each dnode's holes reserved all or nothing (inc_valid_block_count
 * calls dquot_reserve_block once per dnode), a new dnode charged first; if
 * the first dnode's do not fit, the write fails whole with EDQUOT. Otherwise
 * it goes on page by page (f2fs_write_begin reserves one block per hole page
 * not preallocated: the partial first and last blocks, and the dnodes past
 * the failed one) and stops at the first page that does not fit: a short
 * write.
 */
static int write_fit(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t off,
		     uint64_t *len, uint64_t *room)
{
	uint64_t first = off / F2FS_BLKSIZE, end = DIV_ROUND_UP(off + *len, F2FS_BLKSIZE);
	uint64_t fb = DIV_ROUND_UP(off, F2FS_BLKSIZE), fe = (off + *len) / F2FS_BLKSIZE;
	uint64_t pre = fb, stop = UINT64_MAX, paid[2] = { 1, 0 };	/* none */
	int ret = 0;

	while (pre < fe && !ret) {
		uint64_t to = MIN(dnode_end(fi, pre), fe), left = *room, at;
		bool missing;

		ret = dnode_missing(sbi, fi, pre, &missing);
		if (ret || (missing && !left))
			break;
		left -= missing;
		ret = pay_holes(sbi, fi, pre, to, &left, &at);
		if (ret || at != UINT64_MAX)
			break;
		*room = left;
		pre = to;
	}
	if (ret)
		return ret;
	if (fb < fe && pre == fb)
		return -EDQUOT;	/* the first dnode's preallocation failed */
	if (pre > fb) {
		paid[0] = dnode_end(fi, fb);
		paid[1] = dnode_end(fi, pre - 1);
	}
	/* pages in order: the partial head, [fb, pre) is paid for, then the rest */
	ret = pay_pages(sbi, fi, first, MIN(fb, end), paid, room, &stop);
	if (!ret && stop == UINT64_MAX)
		ret = pay_pages(sbi, fi, MAX(pre, first), end, paid, room, &stop);
	if (ret || stop == UINT64_MAX)
		return ret;
	if (stop * F2FS_BLKSIZE <= off)
		return -EDQUOT;
	*len = stop * F2FS_BLKSIZE - off;
	return 0;
}

/*
 * A write (short_ok) or fallocate of [off, off + *len) against the limits:
 * a write is let through, cut short or refused as Linux f2fs does
 * (write_fit); fallocate is all or nothing. -EDQUOT when refused.
 */
int f2fs_quota_reserve_blocks(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			      uint64_t off, uint64_t *len, bool short_ok)
{
	uint32_t ids[3] = { fi->uid, fi->gid, fi->projid };
	uint64_t room, left, stop, want = *len;
	int ret;

	if (!sbi->quota || !sbi->opts.quota_enforce || !caller_limited || !*len)
		return 0;
	f2fs_quota_sync_inode(sbi, fi);
	room = left = quota_block_room(sbi, ids);
	if (short_ok) {
		ret = write_fit(sbi, fi, off, len, &left);
	} else {
		ret = pay_holes(sbi, fi, off / F2FS_BLKSIZE, DIV_ROUND_UP(off + *len, F2FS_BLKSIZE),
				&left, &stop);
		if (!ret && stop != UINT64_MAX)
			ret = -EDQUOT;
	}
	/* reservations may count a block twice: refuse or cut only on exact usage */
	if ((ret == -EDQUOT || *len != want) && sbi->quota->has_rsv) {
		*len = want;
		return -EAGAIN;
	}
	if (ret)
		return ret;
	return room == UINT64_MAX ? 0 : quota_reserve(sbi, ids, room - left, 0, true, 7);
}

/*
 * chown, chgrp or a new project ID: the new ids take the inode's space and
 * the inode itself, as dquot_transfer checks them (EDQUOT past their limits).
 */
int f2fs_quota_transfer(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint32_t uid,
			uint32_t gid, uint32_t projid)
{
	uint32_t ids[3] = { uid, gid, projid };
	unsigned int types = (uid != fi->uid) | (gid != fi->gid) << 1 | (projid != fi->projid) << 2;

	int ret;

	if (!sbi->quota || !sbi->opts.quota_enforce || !caller_limited || !types ||
	    f2fs_is_quota_ino(sbi, fi->ino))
		return 0;
	/* Linux moves reserved blocks too: give the dirty data its blocks first */
	if (S_ISREG(fi->mode) && !fi->atomic) {
		ret = f2fs_writeback_inode(sbi, fi);
		if (ret)
			return ret;
	}
	f2fs_quota_sync_inode(sbi, fi);
	return quota_reserve(sbi, ids, fi->blocks ? fi->blocks - 1 : 0, 1, true, types);
}
