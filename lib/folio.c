// SPDX-License-Identifier: GPL-2.0
/*
 * The folio cache, uf2fs's page cache. Three kinds of mapping share it: meta
 * (keyed by block address), node (keyed by nid) and data (keyed by inode and
 * file block index). A folio covers 2^order blocks at an index aligned to its
 * order; data folios can be large, node and meta folios are single blocks.
 *
 * Every block of a folio has a hash slot, so any block index finds its folio
 * in one probe and a new folio can check for overlap with existing ones. All
 * slots of a folio hash into the same shard (the shard is chosen by the
 * 512-block chunk, and folios never cross a chunk), so one lock covers a
 * whole insert or removal. Unreferenced folios sit on a global LRU and are
 * evicted when the cache exceeds cache_size. Lock order: shard, then LRU.
 */
#include <stdlib.h>
#include <unistd.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(p, n)		((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n)	((void)(p), (void)(n))
#endif

#include "f2fs.h"

#define NR_SHARDS	64
#define CHUNK_SHIFT	9	/* largest folio order: no folio crosses a chunk */
#define POOL_PER_ORDER	16

struct folio_slot {
	struct folio_slot *hnext;
	struct folio *folio;
	uint64_t index;
};

#define OWNER_BUCKETS	1024

struct owner_count {
	struct owner_count *next;
	uint64_t owner;
	unsigned long n;
};

/*
 * The dirty folios of one owner, so that writing back or truncating one file
 * walks that file's dirty folios, not every dirty folio in the cache (an
 * untar leaves tens of thousands of small dirty files; one scan of the whole
 * list per file made the checkpoint after it quadratic). Under dirty_lock.
 */
#define DIRTY_OWNER_BUCKETS	8192

struct dirty_owner {
	struct dirty_owner *next;
	uint64_t owner;
	struct folio *head;
};

struct cache_shard {
	pthread_mutex_t lock;
	struct folio_slot **buckets;
	unsigned int nbuckets;
};

struct folio_cache {
	struct cache_shard shards[NR_SHARDS];
	pthread_mutex_t lru_lock;
	struct folio lru;		/* list head; most recently used at lru.lru_next */
	uint64_t limit;			/* bytes */
	atomic_uint_fast64_t bytes;
	/* dirty folios per kind, each holding a reference */
	pthread_mutex_t dirty_lock;
	struct folio *dirty[3];
	struct dirty_owner *dirty_owners[DIRTY_OWNER_BUCKETS];
	bool dirty_owner_lost;		/* out of memory once: scan the kind's list */
	atomic_uint_fast64_t dirty_bytes;
	atomic_uint_fast64_t dirty_blocks[3];	/* by kind: what writeback will allocate */
	/*
	 * Recycled data buffers by order: large ones come from mmap, and a
	 * fresh mapping page-faults on every block, so reuse beats malloc.
	 */
	pthread_mutex_t pool_lock;
	void *pool[CHUNK_SHIFT + 1][POOL_PER_ORDER];
	unsigned int pool_nr[CHUNK_SHIFT + 1];
	/* single blocks: carved from slabs (buf_get_block), under pool_lock */
	struct buf_slab *slabs;		/* every slab, freed at destroy */
	char *slab_next, *slab_end;	/* the newest slab's blocks not yet handed out */
	void *free_blocks;		/* returned blocks, linked through their first bytes */
	/*
	 * Hashed folios per owner: truncation and unlink of a file with
	 * nothing cached (the rule under drop-behind) skip the scan of every
	 * shard. Taken inside a shard lock.
	 */
	pthread_mutex_t owner_lock;
	struct owner_count *owners[OWNER_BUCKETS];
	bool owner_count_lost;		/* out of memory once: counts unusable */
	struct uf2fs_counters *ctr;
};

/* The slot array lives right after the folio struct. */
static inline struct folio_slot *folio_slots(struct folio *f)
{
	return (struct folio_slot *)(f + 1);
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static uint64_t owner_id(unsigned int kind, uint64_t key)
{
	return (key << 2) | kind;
}

static struct cache_shard *shard_of(struct folio_cache *c, uint64_t owner, uint64_t index)
{
	return &c->shards[mix64(owner * 31 + (index >> CHUNK_SHIFT)) % NR_SHARDS];
}

static unsigned int bucket_of(struct cache_shard *s, uint64_t owner, uint64_t index)
{
	return mix64(owner ^ (index * 0x9e3779b97f4a7c15ull)) & (s->nbuckets - 1);
}

/// Init and teardown ///

static uint64_t default_cache_size(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	uint64_t ram = pages > 0 && psz > 0 ? (uint64_t)pages * psz : 1ull << 30;

	/* one sixteenth of RAM, at least 64 MiB: the kernel caches FUSE pages too */
	return MAX(ram / 16, 64ull << 20);
}

int folio_cache_init(struct f2fs_sb_info *sbi, uint64_t cache_size)
{
	struct folio_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->limit = cache_size ? cache_size : default_cache_size();
	c->ctr = sbi->ctr;
	pthread_mutex_init(&c->lru_lock, NULL);
	pthread_mutex_init(&c->dirty_lock, NULL);
	pthread_mutex_init(&c->pool_lock, NULL);
	pthread_mutex_init(&c->owner_lock, NULL);
	c->lru.lru_next = c->lru.lru_prev = &c->lru;
	for (int i = 0; i < NR_SHARDS; i++) {
		struct cache_shard *s = &c->shards[i];

		pthread_mutex_init(&s->lock, NULL);
		s->nbuckets = 4096;
		s->buckets = calloc(s->nbuckets, sizeof(*s->buckets));
		if (!s->buckets) {
			sbi->cache = c;
			folio_cache_destroy(sbi);
			return -ENOMEM;
		}
	}
	sbi->cache = c;
	return 0;
}

/*
 * Single-block buffers (every node and meta folio, small data folios) come
 * from slabs of SLAB_BYTES. posix_memalign of one page from the heap leaves
 * almost a page unused beside each buffer: a cold walk of 100k inodes made
 * the daemon 842 MiB resident for a 405 MiB cache, and the kernel zeroed all
 * of it (clear_page was 16 % of the samples of a cold git status). A block
 * goes back to a free list, never to the heap; cache_size bounds how many
 * are in use, so the free list only holds what eviction gave back. Under
 * ASan a block not handed out is poisoned, so a use after free is still
 * caught.
 */
#define SLAB_BYTES	(2u << 20)

struct buf_slab {
	struct buf_slab *next;
	void *mem;
};

/* With pool_lock held. */
static void *buf_get_block(struct folio_cache *c)
{
	struct buf_slab *slab;
	void *p = c->free_blocks;

	if (p) {
		ASAN_UNPOISON_MEMORY_REGION(p, F2FS_BLKSIZE);
		c->free_blocks = *(void **)p;
		return p;
	}
	if (c->slab_next == c->slab_end) {
		slab = malloc(sizeof(*slab));
		if (!slab)
			return NULL;
		if (posix_memalign(&slab->mem, SLAB_BYTES, SLAB_BYTES)) {
			free(slab);
			return NULL;
		}
		slab->next = c->slabs;
		c->slabs = slab;
		c->slab_next = slab->mem;
		c->slab_end = c->slab_next + SLAB_BYTES;
		ASAN_POISON_MEMORY_REGION(slab->mem, SLAB_BYTES);
	}
	p = c->slab_next;
	c->slab_next += F2FS_BLKSIZE;
	ASAN_UNPOISON_MEMORY_REGION(p, F2FS_BLKSIZE);
	return p;
}

static void *buf_get(struct folio_cache *c, unsigned int order)
{
	void *p = NULL;

	pthread_mutex_lock(&c->pool_lock);
	if (order == 0) {
		p = buf_get_block(c);
		pthread_mutex_unlock(&c->pool_lock);
		return p;
	}
	if (c->pool_nr[order])
		p = c->pool[order][--c->pool_nr[order]];
	pthread_mutex_unlock(&c->pool_lock);
	/* page-aligned buffers keep O_DIRECT and splice paths open */
	if (!p && posix_memalign(&p, 4096, (size_t)F2FS_BLKSIZE << order))
		p = NULL;
	return p;
}

static void buf_put(struct folio_cache *c, unsigned int order, void *p)
{
	pthread_mutex_lock(&c->pool_lock);
	if (order == 0) {
		*(void **)p = c->free_blocks;
		ASAN_POISON_MEMORY_REGION(p, F2FS_BLKSIZE);
		c->free_blocks = p;
		p = NULL;
	} else if (c->pool_nr[order] < POOL_PER_ORDER) {
		c->pool[order][c->pool_nr[order]++] = p;
		p = NULL;
	}
	pthread_mutex_unlock(&c->pool_lock);
	free(p);
}

static void folio_free(struct folio_cache *c, struct folio *f)
{
	atomic_fetch_sub(&c->bytes, (uint64_t)F2FS_BLKSIZE << f->order);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->cond);
	free(f->state);
	buf_put(c, f->order, f->data);
	free(f);
}

void folio_cache_destroy(struct f2fs_sb_info *sbi)
{
	struct folio_cache *c = sbi->cache;
	struct folio *doomed = NULL;

	if (!c)
		return;
	/* collect first, free after: a folio's slots sit in many buckets */
	for (int i = 0; i < NR_SHARDS; i++) {
		struct cache_shard *s = &c->shards[i];

		for (unsigned int b = 0; s->buckets && b < s->nbuckets; b++) {
			for (struct folio_slot *slot = s->buckets[b]; slot; slot = slot->hnext) {
				if (slot != folio_slots(slot->folio))
					continue;
				slot->folio->hnext = doomed;
				doomed = slot->folio;
			}
		}
	}
	while (doomed) {
		struct folio *next = doomed->hnext;

		folio_free(c, doomed);
		doomed = next;
	}
	for (int i = 0; i < NR_SHARDS; i++) {
		free(c->shards[i].buckets);
		pthread_mutex_destroy(&c->shards[i].lock);
	}
	for (unsigned int o = 0; o <= CHUNK_SHIFT; o++)
		while (c->pool_nr[o])
			free(c->pool[o][--c->pool_nr[o]]);
	while (c->slabs) {
		struct buf_slab *next = c->slabs->next;

		ASAN_UNPOISON_MEMORY_REGION(c->slabs->mem, SLAB_BYTES);
		free(c->slabs->mem);
		free(c->slabs);
		c->slabs = next;
	}
	pthread_mutex_destroy(&c->pool_lock);
	for (unsigned int b = 0; b < OWNER_BUCKETS; b++)
		while (c->owners[b]) {
			struct owner_count *next = c->owners[b]->next;

			free(c->owners[b]);
			c->owners[b] = next;
		}
	pthread_mutex_destroy(&c->owner_lock);
	for (unsigned int b = 0; b < DIRTY_OWNER_BUCKETS; b++)
		while (c->dirty_owners[b]) {
			struct dirty_owner *next = c->dirty_owners[b]->next;

			free(c->dirty_owners[b]);
			c->dirty_owners[b] = next;
		}
	pthread_mutex_destroy(&c->lru_lock);
	free(c);
	sbi->cache = NULL;
}

/// Hash and LRU ///

static struct owner_count **owner_slot(struct folio_cache *c, uint64_t owner)
{
	struct owner_count **pp = &c->owners[mix64(owner) % OWNER_BUCKETS];

	while (*pp && (*pp)->owner != owner)
		pp = &(*pp)->next;
	return pp;
}

/* An allocation failure only costs the shortcut: counts never go below truth. */
static void owner_count_add(struct folio_cache *c, uint64_t owner, long delta)
{
	struct owner_count **pp, *oc;

	pthread_mutex_lock(&c->owner_lock);
	pp = owner_slot(c, owner);
	oc = *pp;
	if (!oc && delta > 0) {
		oc = calloc(1, sizeof(*oc));
		if (oc) {
			oc->owner = owner;
			*pp = oc;
		} else {
			c->owner_count_lost = true;
		}
	}
	if (oc) {
		oc->n += delta;
		if (!oc->n) {
			*pp = oc->next;
			free(oc);
		}
	}
	pthread_mutex_unlock(&c->owner_lock);
}

static bool owner_has_folios(struct folio_cache *c, uint64_t owner)
{
	bool has;

	pthread_mutex_lock(&c->owner_lock);
	has = c->owner_count_lost || *owner_slot(c, owner);
	pthread_mutex_unlock(&c->owner_lock);
	return has;
}

static struct folio *shard_find(struct cache_shard *s, uint64_t owner, uint64_t index)
{
	for (struct folio_slot *slot = s->buckets[bucket_of(s, owner, index)]; slot;
	     slot = slot->hnext) {
		if (slot->index == index && slot->folio->key == owner)
			return slot->folio;
	}
	return NULL;
}

static void shard_insert(struct folio_cache *c, struct cache_shard *s, struct folio *f)
{
	struct folio_slot *slots = folio_slots(f);

	owner_count_add(c, f->key, 1);

	for (unsigned int i = 0; i < folio_nr_blocks(f); i++) {
		unsigned int b = bucket_of(s, f->key, f->index + i);

		slots[i].folio = f;
		slots[i].index = f->index + i;
		slots[i].hnext = s->buckets[b];
		s->buckets[b] = &slots[i];
	}
}

static void shard_remove(struct folio_cache *c, struct cache_shard *s, struct folio *f)
{
	struct folio_slot *slots = folio_slots(f);

	owner_count_add(c, f->key, -1);

	for (unsigned int i = 0; i < folio_nr_blocks(f); i++) {
		struct folio_slot **pp = &s->buckets[bucket_of(s, f->key, f->index + i)];

		while (*pp && *pp != &slots[i])
			pp = &(*pp)->hnext;
		if (*pp)
			*pp = slots[i].hnext;
	}
}

static void lru_del(struct folio *f)
{
	if (!f->lru_next)
		return;
	f->lru_prev->lru_next = f->lru_next;
	f->lru_next->lru_prev = f->lru_prev;
	f->lru_next = f->lru_prev = NULL;
}

static void lru_add(struct folio_cache *c, struct folio *f)
{
	f->lru_next = c->lru.lru_next;
	f->lru_prev = &c->lru;
	c->lru.lru_next->lru_prev = f;
	c->lru.lru_next = f;
}

/*
 * Evict unreferenced folios from the cold end until we are under the limit.
 * We hold the LRU lock and may only trylock shards (lock order), so a busy
 * shard's folio is skipped, not waited for.
 */
static void cache_shrink(struct folio_cache *c)
{
	int budget = 64;

	if (atomic_load(&c->bytes) <= c->limit)
		return;
	pthread_mutex_lock(&c->lru_lock);
	struct folio *f = c->lru.lru_prev;

	while (f != &c->lru && atomic_load(&c->bytes) > c->limit && budget-- > 0) {
		struct folio *prev = f->lru_prev;
		struct cache_shard *s = shard_of(c, f->key, f->index);

		if (pthread_mutex_trylock(&s->lock) == 0) {
			if (atomic_load(&f->refcnt) == 0) {
				lru_del(f);
				shard_remove(c, s, f);
				pthread_mutex_unlock(&s->lock);
				atomic_fetch_add(&c->ctr->cache_evictions, 1);
				folio_free(c, f);
			} else {
				pthread_mutex_unlock(&s->lock);
			}
		}
		f = prev;
	}
	pthread_mutex_unlock(&c->lru_lock);
}

static void folio_get_locked(struct folio_cache *c, struct folio *f)
{
	if (atomic_fetch_add(&f->refcnt, 1) == 0) {
		pthread_mutex_lock(&c->lru_lock);
		lru_del(f);
		pthread_mutex_unlock(&c->lru_lock);
	}
}

/// Grab, fill, put ///

static struct folio *folio_alloc(struct folio_cache *c, unsigned int kind, uint64_t owner,
				 uint64_t index, unsigned int order)
{
	size_t nr = 1u << order;
	struct folio *f = calloc(1, sizeof(*f) + nr * sizeof(struct folio_slot));

	if (!f)
		return NULL;
	f->data = buf_get(c, order);
	if (!f->data) {
		free(f);
		return NULL;
	}
	f->kind = kind;
	f->key = owner;
	f->index = index;
	f->order = order;
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	return f;
}

/* Largest order <= want whose aligned range around index holds no folio. */
static unsigned int fit_order(struct cache_shard *s, uint64_t owner, uint64_t index,
			      unsigned int want)
{
	for (unsigned int order = want; order > 0; order--) {
		uint64_t start = index & ~((1ull << order) - 1);
		bool clash = false;

		for (uint64_t i = start; i < start + (1ull << order) && !clash; i++)
			clash = shard_find(s, owner, i) != NULL;
		if (!clash)
			return order;
	}
	return 0;
}

struct folio *folio_lookup(struct f2fs_sb_info *sbi, unsigned int kind, uint64_t key,
			   uint64_t index)
{
	struct folio_cache *c = sbi->cache;
	uint64_t owner = owner_id(kind, key);
	struct cache_shard *s = shard_of(c, owner, index);
	struct folio *f;

	pthread_mutex_lock(&s->lock);
	f = shard_find(s, owner, index);
	if (f)
		folio_get_locked(c, f);
	pthread_mutex_unlock(&s->lock);
	return f;
}

struct folio *folio_grab(struct f2fs_sb_info *sbi, unsigned int kind, uint64_t key,
			 uint64_t index, unsigned int order, bool *created)
{
	struct folio_cache *c = sbi->cache;
	uint64_t owner = owner_id(kind, key);
	struct cache_shard *s = shard_of(c, owner, index);
	struct folio *f;

	if (order > CHUNK_SHIFT)
		order = CHUNK_SHIFT;
	*created = false;
	pthread_mutex_lock(&s->lock);
	f = shard_find(s, owner, index);
	if (f) {
		folio_get_locked(c, f);
		pthread_mutex_unlock(&s->lock);
		atomic_fetch_add(&c->ctr->cache_hits, 1);
		return f;
	}
	order = fit_order(s, owner, index, order);
	f = folio_alloc(c, kind, owner, index & ~((1ull << order) - 1), order);
	if (!f) {
		pthread_mutex_unlock(&s->lock);
		return ERR_PTR(-ENOMEM);
	}
	f->busy = true;
	atomic_store(&f->refcnt, 1);
	shard_insert(c, s, f);
	pthread_mutex_unlock(&s->lock);
	atomic_fetch_add(&c->bytes, (uint64_t)F2FS_BLKSIZE << order);
	atomic_fetch_add(&c->ctr->cache_misses, 1);
	atomic_fetch_add(&c->ctr->folios_alloc[order], 1);
	*created = true;
	cache_shrink(c);
	return f;
}

void folio_end_fill(struct f2fs_sb_info *sbi, struct folio *f, bool ok)
{
	pthread_mutex_lock(&f->lock);
	f->busy = false;
	f->uptodate = ok;
	f->error = !ok;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	if (!ok) {
		/* a failed fill must not be served to the next reader: unhash it */
		struct folio_cache *c = sbi->cache;
		struct cache_shard *s = shard_of(c, f->key, f->index);

		pthread_mutex_lock(&s->lock);
		if (shard_find(s, f->key, f->index) == f)
			shard_remove(c, s, f);
		pthread_mutex_unlock(&s->lock);
	}
}

int folio_wait_uptodate(struct folio *f)
{
	pthread_mutex_lock(&f->lock);
	while (f->busy)
		pthread_cond_wait(&f->cond, &f->lock);
	int ret = f->uptodate ? 0 : -EIO;

	pthread_mutex_unlock(&f->lock);
	return ret;
}

static void put_folio(struct f2fs_sb_info *sbi, struct folio *f, bool dropbehind)
{
	struct folio_cache *c = sbi->cache;
	struct cache_shard *s = shard_of(c, f->key, f->index);
	bool hashed;

	pthread_mutex_lock(&s->lock);
	if (dropbehind)
		f->dropbehind = true;
	if (atomic_fetch_sub(&f->refcnt, 1) != 1) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	hashed = shard_find(s, f->key, f->index) == f;
	/*
	 * A dirty folio is never dropped: drop-behind waits for its
	 * writeback, which puts it again with the flag still set.
	 */
	if (hashed && (!f->dropbehind || f->dirty || f->busy)) {
		pthread_mutex_lock(&c->lru_lock);
		lru_add(c, f);
		pthread_mutex_unlock(&c->lru_lock);
		pthread_mutex_unlock(&s->lock);
		cache_shrink(c);
		return;
	}
	if (hashed) {
		shard_remove(c, s, f);
		atomic_fetch_add(&c->ctr->dropbehind, 1);
	}
	pthread_mutex_unlock(&s->lock);
	folio_free(c, f);
}

void folio_put(struct f2fs_sb_info *sbi, struct folio *f)
{
	put_folio(sbi, f, false);
}

void folio_put_dropbehind(struct f2fs_sb_info *sbi, struct folio *f)
{
	put_folio(sbi, f, true);
}

bool folio_owner_cached(struct f2fs_sb_info *sbi, unsigned int kind, uint64_t key)
{
	return owner_has_folios(sbi->cache, owner_id(kind, key));
}

/* Drop every unreferenced folio of one owner (used on inode eviction). */
void folio_invalidate_owner(struct f2fs_sb_info *sbi, unsigned int kind, uint64_t key)
{
	struct folio_cache *c = sbi->cache;
	uint64_t owner = owner_id(kind, key);

	pthread_mutex_lock(&c->lru_lock);
	struct folio *f = c->lru.lru_prev;

	while (f != &c->lru) {
		struct folio *prev = f->lru_prev;

		if (f->key == owner) {
			struct cache_shard *s = shard_of(c, f->key, f->index);

			if (pthread_mutex_trylock(&s->lock) == 0) {
				if (atomic_load(&f->refcnt) == 0) {
					lru_del(f);
					shard_remove(c, s, f);
					pthread_mutex_unlock(&s->lock);
					folio_free(c, f);
				} else {
					pthread_mutex_unlock(&s->lock);
				}
			}
		}
		f = prev;
	}
	pthread_mutex_unlock(&c->lru_lock);
}

/*
 * Lazy per-block state: created only when a folio needs sub-folio tracking,
 * inheriting the folio's whole-folio flags.
 */
struct folio_state *folio_get_state(struct folio *f)
{
	unsigned int nr = folio_nr_blocks(f);
	size_t words = DIV_ROUND_UP(2 * nr, 64);

	if (f->state)
		return f->state;
	f->state = calloc(1, sizeof(struct folio_state) + words * sizeof(uint64_t));
	if (f->state && f->uptodate) {
		for (unsigned int i = 0; i < nr; i++)
			f->state->bits[i / 64] |= 1ull << (i % 64);
	}
	/* a folio dirty without state was dirty as a whole */
	if (f->state && f->dirty) {
		for (unsigned int i = nr; i < 2 * nr; i++)
			f->state->bits[i / 64] |= 1ull << (i % 64);
	}
	return f->state;
}

uint64_t folio_cache_bytes(struct f2fs_sb_info *sbi)
{
	return atomic_load(&sbi->cache->bytes);
}

uint64_t folio_cache_limit(struct f2fs_sb_info *sbi)
{
	return sbi->cache->limit;
}

/// Dirty tracking ///

static struct dirty_owner **dirty_owner_slot(struct folio_cache *c, uint64_t owner)
{
	struct dirty_owner **pp = &c->dirty_owners[mix64(owner) % DIRTY_OWNER_BUCKETS];

	while (*pp && (*pp)->owner != owner)
		pp = &(*pp)->next;
	return pp;
}

/*
 * The owner a dirty folio is listed under: its own, except for node folios
 * (all of one mapping, key 0), which go by the inode their footer names, so
 * that an fsync finds its inode's dnodes without a walk of every dirty node.
 * A node's footer is written before it is first dirtied (f2fs_new_node_folio)
 * and names the same inode for the life of the nid.
 */
static uint64_t dirty_group(const struct folio *f)
{
	if (f->kind == MAP_NODE)
		return owner_id(MAP_NODE, le32(((const struct f2fs_node *)f->data)->footer.ino));
	return f->key;
}

/* Under dirty_lock. Without memory, the owner lists are given up for good. */
static void dirty_owner_link(struct folio_cache *c, struct folio *f)
{
	struct dirty_owner **pp, *d;

	f->onext = f->oprev = NULL;
	f->dgroup = dirty_group(f);
	if (c->dirty_owner_lost)
		return;
	pp = dirty_owner_slot(c, f->dgroup);
	d = *pp;
	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d) {
			c->dirty_owner_lost = true;
			return;
		}
		d->owner = f->dgroup;
		*pp = d;
	}
	f->onext = d->head;
	if (f->onext)
		f->onext->oprev = f;
	d->head = f;
}

static void dirty_owner_unlink(struct folio_cache *c, struct folio *f)
{
	struct dirty_owner **pp, *d;

	if (c->dirty_owner_lost)
		return;
	if (f->oprev) {
		f->oprev->onext = f->onext;
	} else {
		pp = dirty_owner_slot(c, f->dgroup);
		d = *pp;
		if (d)
			d->head = f->onext;
		if (d && !d->head) {
			*pp = d->next;
			free(d);
		}
	}
	if (f->onext)
		f->onext->oprev = f->oprev;
	f->onext = f->oprev = NULL;
}

void folio_mark_dirty(struct f2fs_sb_info *sbi, struct folio *f)
{
	struct folio_cache *c = sbi->cache;

	pthread_mutex_lock(&c->dirty_lock);
	if (!f->dirty) {
		f->dirty = true;
		f->dirtied = f2fs_now_secs();
		atomic_fetch_add(&f->refcnt, 1);	/* the dirty list's reference */
		f->dprev = NULL;
		f->dnext = c->dirty[f->kind];
		if (f->dnext)
			f->dnext->dprev = f;
		c->dirty[f->kind] = f;
		dirty_owner_link(c, f);
		atomic_fetch_add(&c->dirty_bytes, (uint64_t)F2FS_BLKSIZE << f->order);
		atomic_fetch_add(&c->dirty_blocks[f->kind], 1ull << f->order);
	}
	pthread_mutex_unlock(&c->dirty_lock);
}

static void dirty_unlink(struct folio_cache *c, struct folio *f)
{
	if (f->dprev)
		f->dprev->dnext = f->dnext;
	else
		c->dirty[f->kind] = f->dnext;
	if (f->dnext)
		f->dnext->dprev = f->dprev;
	f->dnext = f->dprev = NULL;
	dirty_owner_unlink(c, f);
	f->dirty = false;
	atomic_fetch_sub(&c->dirty_bytes, (uint64_t)F2FS_BLKSIZE << f->order);
	atomic_fetch_sub(&c->dirty_blocks[f->kind], 1ull << f->order);
}

void folio_clear_dirty(struct f2fs_sb_info *sbi, struct folio *f)
{
	struct folio_cache *c = sbi->cache;
	bool was;

	pthread_mutex_lock(&c->dirty_lock);
	was = f->dirty;
	if (was)
		dirty_unlink(c, f);
	pthread_mutex_unlock(&c->dirty_lock);
	if (f->state) {
		unsigned int nr = folio_nr_blocks(f);

		for (unsigned int i = nr; i < 2 * nr; i++)
			f->state->bits[i / 64] &= ~(1ull << (i % 64));
	}
	if (was)
		folio_put(sbi, f);
}

int folio_collect_dirty(struct f2fs_sb_info *sbi, unsigned int kind, uint64_t key,
			struct folio ***out, size_t *n)
{
	struct folio_cache *c = sbi->cache;
	uint64_t owner = owner_id(kind, key);
	size_t cnt = 0, cap = 64;
	struct folio **v = malloc(cap * sizeof(*v));
	struct folio *f;
	uint64_t visits = 0;
	bool by_owner;

	if (!v)
		return -ENOMEM;
	pthread_mutex_lock(&c->dirty_lock);
	by_owner = key && !c->dirty_owner_lost;
	if (by_owner) {
		struct dirty_owner *d = *dirty_owner_slot(c, owner);

		f = d ? d->head : NULL;
	} else {
		f = c->dirty[kind];
	}
	for (; f; f = by_owner ? f->onext : f->dnext) {
		visits++;
		if (key && f->dgroup != owner)
			continue;
		if (cnt == cap) {
			struct folio **nv = realloc(v, 2 * cap * sizeof(*v));

			if (!nv) {
				pthread_mutex_unlock(&c->dirty_lock);
				for (size_t i = 0; i < cnt; i++)
					folio_put(sbi, v[i]);
				free(v);
				return -ENOMEM;
			}
			v = nv;
			cap *= 2;
		}
		atomic_fetch_add(&f->refcnt, 1);
		v[cnt++] = f;
	}
	pthread_mutex_unlock(&c->dirty_lock);
	if (c->ctr)
		atomic_fetch_add(&c->ctr->dirty_visits, visits);
	*out = v;
	*n = cnt;
	return 0;
}

uint64_t folio_owner_key(const struct folio *f)
{
	return f->key >> 2;
}

static int cmp_owner_key(const void *a, const void *b)
{
	const struct folio_dirty_owner *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->oldest > y->oldest) - (x->oldest < y->oldest);
}

static int cmp_owner_age(const void *a, const void *b)
{
	const struct folio_dirty_owner *x = a, *y = b;

	if (x->oldest != y->oldest)
		return x->oldest < y->oldest ? -1 : 1;
	return (x->key > y->key) - (x->key < y->key);
}

/*
 * The flusher's b_io: who owns dirty folios and since when. Keys only, no
 * references: the flusher looks each owner up again and writes what is
 * dirty then.
 */
int folio_dirty_owners(struct f2fs_sb_info *sbi, unsigned int kind,
		       struct folio_dirty_owner **out, size_t *n)
{
	struct folio_cache *c = sbi->cache;
	struct folio_dirty_owner *v;
	size_t cnt = 0, cap, uniq = 0;

	pthread_mutex_lock(&c->dirty_lock);
	cap = atomic_load(&c->dirty_blocks[kind]) + 1;
	v = malloc(cap * sizeof(*v));
	for (struct folio *f = c->dirty[kind]; v && f && cnt < cap; f = f->dnext)
		v[cnt++] = (struct folio_dirty_owner){ folio_owner_key(f), f->dirtied };
	pthread_mutex_unlock(&c->dirty_lock);
	if (!v)
		return -ENOMEM;
	qsort(v, cnt, sizeof(*v), cmp_owner_key);
	for (size_t i = 0; i < cnt; i++)
		if (!uniq || v[i].key != v[uniq - 1].key)
			v[uniq++] = v[i];
	qsort(v, uniq, sizeof(*v), cmp_owner_age);
	*out = v;
	*n = uniq;
	return 0;
}

/*
 * Truncation: folios of the owner at or after block "from" leave the cache,
 * dirty or not (their data is gone); a folio straddling "from" stays and the
 * caller zeroes its tail. Callers hold the inode lock, so no reader races.
 */
static void drop_matching(struct f2fs_sb_info *sbi, uint64_t owner, uint64_t from, uint64_t to,
			  bool keep_straddler)
{
	struct folio_cache *c = sbi->cache;

	if (!owner_has_folios(c, owner))
		return;
	for (int i = 0; i < NR_SHARDS; i++) {
		struct cache_shard *s = &c->shards[i];
		struct folio *doomed = NULL;

		pthread_mutex_lock(&s->lock);
		for (unsigned int b = 0; b < s->nbuckets; b++) {
			for (struct folio_slot *slot = s->buckets[b]; slot; slot = slot->hnext) {
				struct folio *f = slot->folio;
				uint64_t fend = f->index + folio_nr_blocks(f);

				if (f->key != owner || slot != folio_slots(f) || f->index >= to ||
				    fend <= from || (keep_straddler && f->index < from))
					continue;
				f->hnext = doomed;
				doomed = f;
			}
		}
		/*
		 * Unhash and take unused folios off the LRU under the shard lock:
		 * cache_shrink needs both to free a folio, so it cannot free one
		 * of ours behind our back. In-use folios are freed by their last
		 * folio_put, now that they are unhashed.
		 */
		struct folio *unused = NULL;

		pthread_mutex_lock(&c->lru_lock);
		while (doomed) {
			struct folio *next = doomed->hnext;

			shard_remove(c, s, doomed);
			if (atomic_load(&doomed->refcnt) == 0) {
				lru_del(doomed);
				doomed->hnext = unused;
				unused = doomed;
			}
			doomed = next;
		}
		pthread_mutex_unlock(&c->lru_lock);
		pthread_mutex_unlock(&s->lock);
		while (unused) {
			struct folio *next = unused->hnext;

			folio_free(c, unused);
			unused = next;
		}
	}
}

static void undirty_range(struct f2fs_sb_info *sbi, unsigned int kind, uint64_t key,
			  uint64_t from, uint64_t to, bool keep_straddler)
{
	struct folio **v;
	size_t n;

	if (folio_collect_dirty(sbi, kind, key, &v, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		struct folio *f = v[i];
		uint64_t fend = f->index + folio_nr_blocks(f);

		if (f->index < to && fend > from && !(keep_straddler && f->index < from))
			folio_clear_dirty(sbi, f);
		folio_put(sbi, f);
	}
	free(v);
}

/*
 * Truncation: folios of the owner at or after block "from" leave the cache,
 * dirty or not (their data is gone); a folio straddling "from" stays and the
 * caller zeroes its tail. Callers hold the inode lock, so no reader races.
 */
void folio_truncate_owner(struct f2fs_sb_info *sbi, unsigned int kind, uint64_t key,
			  uint64_t from)
{
	if (!owner_has_folios(sbi->cache, owner_id(kind, key)))
		return;
	undirty_range(sbi, kind, key, from, UINT64_MAX, true);
	drop_matching(sbi, owner_id(kind, key), from, UINT64_MAX, true);
}

void folio_drop_range(struct f2fs_sb_info *sbi, unsigned int kind, uint64_t key, uint64_t from,
		      uint64_t to)
{
	if (!owner_has_folios(sbi->cache, owner_id(kind, key)))
		return;
	undirty_range(sbi, kind, key, from, to, false);
	drop_matching(sbi, owner_id(kind, key), from, to, false);
}

bool folio_range_cached(struct f2fs_sb_info *sbi, unsigned int kind, uint64_t key, uint64_t from,
			uint64_t to)
{
	struct folio_cache *c = sbi->cache;
	uint64_t owner = owner_id(kind, key);
	bool found = false;

	if (!owner_has_folios(c, owner))
		return false;
	/* every block of a folio has its own hash slot, so each index is one probe */
	for (uint64_t i = from; i < to && !found; i++) {
		struct cache_shard *s = shard_of(c, owner, i);

		pthread_mutex_lock(&s->lock);
		found = shard_find(s, owner, i) != NULL;
		pthread_mutex_unlock(&s->lock);
	}
	return found;
}

uint64_t folio_dirty_bytes(struct f2fs_sb_info *sbi)
{
	return atomic_load(&sbi->cache->dirty_bytes);
}

uint64_t folio_dirty_blocks(struct f2fs_sb_info *sbi, unsigned int kind)
{
	return atomic_load(&sbi->cache->dirty_blocks[kind]);
}
