// SPDX-License-Identifier: GPL-2.0
/*
 * The read extent cache: per inode, a sorted array of (file offset, block,
 * length) runs learned from dnode walks and from i_ext. Runs that touch in
 * both file offset and disk address merge, so a sequential file collapses to
 * a handful of entries and a read maps with one binary search instead of a
 * dnode walk. The largest run is tracked as the kernel tracks i_ext.
 */
#include <stdlib.h>

#include "f2fs.h"

#define ET_MAX_ENTRIES	65536	/* bound memory on badly fragmented files */

struct extent_tree {
	pthread_mutex_t lock;
	struct extent_info *ext;
	unsigned int nr, cap;
};

static struct extent_tree *et_get(struct f2fs_inode_info *fi)
{
	struct extent_tree *et = fi->et;

	if (et)
		return et;
	et = calloc(1, sizeof(*et));
	if (!et)
		return NULL;
	pthread_mutex_init(&et->lock, NULL);
	/* publish once; the inode lock orders concurrent creators */
	pthread_mutex_lock(&fi->i_lock);
	if (fi->et) {
		pthread_mutex_unlock(&fi->i_lock);
		pthread_mutex_destroy(&et->lock);
		free(et);
		return fi->et;
	}
	fi->et = et;
	pthread_mutex_unlock(&fi->i_lock);
	return et;
}

/* Index of the last extent starting at or before fofs, or -1. */
static int et_search(const struct extent_tree *et, uint64_t fofs)
{
	int lo = 0, hi = (int)et->nr - 1, ans = -1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (et->ext[mid].fofs <= fofs) {
			ans = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return ans;
}

int f2fs_extent_lookup(struct f2fs_inode_info *fi, uint64_t lblk, struct extent_info *ei)
{
	struct extent_tree *et = fi->et;
	int i, found = 0;

	if (!et)
		return 0;
	pthread_mutex_lock(&et->lock);
	i = et_search(et, lblk);
	if (i >= 0 && lblk < (uint64_t)et->ext[i].fofs + et->ext[i].len) {
		*ei = et->ext[i];
		found = 1;
	}
	pthread_mutex_unlock(&et->lock);
	return found;
}

static bool mergeable(const struct extent_info *a, const struct extent_info *b)
{
	return (uint64_t)a->fofs + a->len == b->fofs && (uint64_t)a->blk + a->len == b->blk;
}

static void et_remove(struct extent_tree *et, int i)
{
	memmove(&et->ext[i], &et->ext[i + 1], (et->nr - i - 1) * sizeof(*et->ext));
	et->nr--;
}

static void track_largest(struct f2fs_inode_info *fi, const struct extent_info *e)
{
	if (e->len > fi->largest.len)
		fi->largest = *e;
}

void f2fs_extent_insert(struct f2fs_inode_info *fi, uint32_t fofs, block_t blk, uint32_t len)
{
	struct extent_tree *et = et_get(fi);
	struct extent_info e = { fofs, blk, len };
	int i;

	if (!et || !len)
		return;
	pthread_mutex_lock(&et->lock);
	i = et_search(et, fofs);
	/* already covered (read-only data never changes under us) */
	if (i >= 0 && (uint64_t)fofs + len <= (uint64_t)et->ext[i].fofs + et->ext[i].len)
		goto out;
	/* overlapping entries are stale views of the same mapping: drop them */
	while (i >= 0 && (uint64_t)et->ext[i].fofs + et->ext[i].len > fofs &&
	       et->ext[i].fofs >= fofs) {
		et_remove(et, i);
		i--;
	}
	while (i + 1 < (int)et->nr && et->ext[i + 1].fofs < (uint64_t)fofs + len)
		et_remove(et, i + 1);
	if (i >= 0 && (uint64_t)et->ext[i].fofs + et->ext[i].len > fofs)
		et->ext[i].len = fofs - et->ext[i].fofs;	/* trim a partial overlap */
	if (i >= 0 && mergeable(&et->ext[i], &e)) {
		et->ext[i].len += len;
		if (i + 1 < (int)et->nr && mergeable(&et->ext[i], &et->ext[i + 1])) {
			et->ext[i].len += et->ext[i + 1].len;
			et_remove(et, i + 1);
		}
		track_largest(fi, &et->ext[i]);
		goto out;
	}
	if (i + 1 < (int)et->nr && mergeable(&e, &et->ext[i + 1])) {
		et->ext[i + 1].fofs = fofs;
		et->ext[i + 1].blk = blk;
		et->ext[i + 1].len += len;
		track_largest(fi, &et->ext[i + 1]);
		goto out;
	}
	if (et->nr == et->cap) {
		unsigned int cap = et->cap ? et->cap * 2 : 8;
		struct extent_info *n;

		if (cap > ET_MAX_ENTRIES)
			goto out;
		n = realloc(et->ext, cap * sizeof(*n));
		if (!n)
			goto out;
		et->ext = n;
		et->cap = cap;
	}
	memmove(&et->ext[i + 2], &et->ext[i + 1], (et->nr - i - 1) * sizeof(*et->ext));
	et->ext[i + 1] = e;
	et->nr++;
	track_largest(fi, &e);
out:
	pthread_mutex_unlock(&et->lock);
}

unsigned int f2fs_extent_count(struct f2fs_inode_info *fi)
{
	return fi->et ? fi->et->nr : 0;
}

void f2fs_extent_tree_destroy(struct f2fs_inode_info *fi)
{
	if (!fi->et)
		return;
	pthread_mutex_destroy(&fi->et->lock);
	free(fi->et->ext);
	free(fi->et);
	fi->et = NULL;
}

bool f2fs_extent_invalidate(struct f2fs_inode_info *fi, uint64_t fofs, uint64_t len)
{
	struct extent_tree *et = fi->et;
	uint64_t end = fofs + len;
	struct extent_info *l = &fi->largest;
	bool dropped = false;

	/* the largest extent goes to disk as i_ext: it must never be stale */
	if (l->len && (uint64_t)l->fofs < end && fofs < (uint64_t)l->fofs + l->len) {
		l->len = 0;
		dropped = true;
	}
	if (!et)
		return dropped;
	pthread_mutex_lock(&et->lock);
	for (unsigned int i = 0; i < et->nr;) {
		struct extent_info *e = &et->ext[i];
		uint64_t eend = (uint64_t)e->fofs + e->len;

		if (eend <= fofs || e->fofs >= end) {
			i++;
			continue;
		}
		if (e->fofs < fofs && eend > end) {
			/* split: keep head here, tail as a new entry */
			struct extent_info tail = { end, e->blk + (end - e->fofs), eend - end };

			e->len = fofs - e->fofs;
			pthread_mutex_unlock(&et->lock);
			f2fs_extent_insert(fi, tail.fofs, tail.blk, tail.len);
			return dropped;
		}
		if (e->fofs < fofs) {
			e->len = fofs - e->fofs;
			i++;
		} else if (eend > end) {
			e->blk += end - e->fofs;
			e->len = eend - end;
			e->fofs = end;
			i++;
		} else {
			et_remove(et, i);
		}
	}
	pthread_mutex_unlock(&et->lock);
	return dropped;
}
