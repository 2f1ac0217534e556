/* SPDX-License-Identifier: GPL-2.0 */
/*
 * In-memory structures of libuf2fs, private to lib/: the superblock info
 * (geometry, checkpoint, node and segment managers), inode info, the folio
 * cache and the device. The split of functions across lib/ follows Linux
 * fs/f2fs so that an f2fs engineer finds things where they expect them.
 *
 * Lock order (outermost first), asserted in debug builds:
 *   1. sbi->cp_rwsem      operations shared, a checkpoint exclusive
 *   2. fi->i_lock         per inode; two directories in inode-number order
 *   3. nm->lock, sm->lock node manager (NAT cache) and segment manager
 *   4. cache shard lock, then a folio's lock
 *   5. the device queue
 */
#ifndef UF2FS_F2FS_H
#define UF2FS_F2FS_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "uf2fs/format.h"
#include "uf2fs/uf2fs.h"
#include "fscrypt/fscrypt.h"
#include "fsverity/fsverity.h"

#define le16(x) ((uint16_t)(x))
#define le32(x) ((uint32_t)(x))
#define le64(x) ((uint64_t)(x))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))

#ifndef EFSCORRUPTED
#define EFSCORRUPTED EUCLEAN
#endif

/* Kernel-style error pointers: functions returning objects encode -errno. */
static inline void *ERR_PTR(long err)
{
	return (void *)err;
}
static inline long PTR_ERR(const void *p)
{
	return (long)p;
}
static inline bool IS_ERR(const void *p)
{
	return (unsigned long)p >= (unsigned long)-4095;
}

static inline bool IS_ERR_OR_NULL(const void *p)
{
	return !p || IS_ERR(p);
}

typedef uint32_t block_t;
typedef uint32_t nid_t;

struct f2fs_sb_info;

/* /// Device (lib/dev/) /// */

#include "dev/dev.h"
#include "variant.h"

/* /// Folio cache (folio.c) /// */

enum folio_mapping_kind { MAP_META, MAP_NODE, MAP_DATA };

/*
 * Per-block state of a large folio. It exists only when the folio is partly
 * uptodate or spans more than one device request (the "skip" optimization).
 */
struct folio_state {
	unsigned int read_pending;
	unsigned int write_pending;
	uint64_t bits[];		/* nr uptodate bits, then nr dirty bits */
};

struct folio {
	struct folio *hnext;		/* hash chain */
	struct folio *lru_prev, *lru_next;
	uint64_t key;			/* owner (ino or mapping id) */
	uint64_t index;			/* first block index, aligned to 1 << order */
	uint8_t *data;
	struct folio_state *state;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int order;
	unsigned int kind;
	atomic_int refcnt;
	bool uptodate;
	bool busy;			/* being filled by a reader */
	bool error;
	bool dropbehind;
	bool dirty;			/* whole folio, or the dirty bits of its state */
	uint32_t dirtied;		/* f2fs_now_secs() when it became dirty (flusher.c) */
	struct folio *dnext, *dprev;	/* dirty list of its kind */
	struct folio *onext, *oprev;	/* dirty list of its owner (folio.c) */
	uint64_t dgroup;		/* that owner: the key, or a node's inode */
};

struct folio_cache;

int folio_cache_init(struct f2fs_sb_info *sbi, uint64_t cache_size);
void folio_cache_destroy(struct f2fs_sb_info *sbi);
/*
 * Find or create the folio that holds block index of (kind, key). order is
 * the preferred order for a new folio; an existing folio of any order wins.
 * The returned folio holds a reference. *created tells the caller it must fill
 * it (it is then marked busy; others wait in folio_wait_uptodate).
 */
struct folio *folio_grab(struct f2fs_sb_info *sbi, unsigned int kind, uint64_t key,
			 uint64_t index, unsigned int order, bool *created);
struct folio *folio_lookup(struct f2fs_sb_info *sbi, unsigned int kind, uint64_t key,
			   uint64_t index);
void folio_put(struct f2fs_sb_info *sbi, struct folio *folio);
/* Any folio of (kind, key) in the cache (a cheap count, no scan). */
bool folio_owner_cached(struct f2fs_sb_info *sbi, unsigned int kind, uint64_t key);
/* Put, and free the folio at its last put if it is clean (drop-behind). */
void folio_put_dropbehind(struct f2fs_sb_info *sbi, struct folio *folio);
/* Filler finished: publish uptodate (or error) and wake waiters. */
void folio_end_fill(struct f2fs_sb_info *sbi, struct folio *folio, bool ok);
int folio_wait_uptodate(struct folio *folio);
/* Drop cached folios of an owner (inode eviction). */
void folio_invalidate_owner(struct f2fs_sb_info *sbi, unsigned int kind, uint64_t key);
struct folio_state *folio_get_state(struct folio *folio);
/* Dirty folios hold a reference until cleaned, so eviction never sees them. */
void folio_mark_dirty(struct f2fs_sb_info *sbi, struct folio *f);
void folio_clear_dirty(struct f2fs_sb_info *sbi, struct folio *f);
/*
 * Referenced snapshot of the dirty folios of a kind (owner 0 = all owners).
 * Node folios all have key 0: for MAP_NODE, key is an inode number and the
 * snapshot holds the nodes whose footer named that inode when dirtied.
 */
int folio_collect_dirty(struct f2fs_sb_info *sbi, unsigned int kind, uint64_t key,
			struct folio ***out, size_t *n);
/* Drop folios of an owner from block index from on (truncate); dirty ones too. */
void folio_truncate_owner(struct f2fs_sb_info *sbi, unsigned int kind, uint64_t key,
			  uint64_t from);
uint64_t folio_dirty_bytes(struct f2fs_sb_info *sbi);
/* Blocks of dirty folios of a kind (whole folios, even when partly dirty). */
uint64_t folio_dirty_blocks(struct f2fs_sb_info *sbi, unsigned int kind);
uint64_t folio_owner_key(const struct folio *f);
/* An owner with dirty folios, and when the oldest of them became dirty. */
struct folio_dirty_owner {
	uint64_t key;
	uint32_t oldest;
};
/* The owners of dirty folios of a kind, each once, oldest first (malloc'd). */
int folio_dirty_owners(struct f2fs_sb_info *sbi, unsigned int kind,
		       struct folio_dirty_owner **out, size_t *n);
/* Drop an owner's folios in [from, to); the caller has written the dirty ones. */
void folio_drop_range(struct f2fs_sb_info *sbi, unsigned int kind, uint64_t key, uint64_t from,
		      uint64_t to);
/* Does any folio of the owner hold a block in [from, to)? */
bool folio_range_cached(struct f2fs_sb_info *sbi, unsigned int kind, uint64_t key, uint64_t from,
			uint64_t to);
uint64_t folio_cache_bytes(struct f2fs_sb_info *sbi);
uint64_t folio_cache_limit(struct f2fs_sb_info *sbi);
/* Address of file block blk inside a data folio that holds it. */
static inline uint8_t *folio_block_ptr(struct folio *f, uint64_t blk)
{
	return f->data + ((blk - f->index) << F2FS_BLKSIZE_BITS);
}
static inline unsigned int folio_nr_blocks(const struct folio *f)
{
	return 1u << f->order;
}

/* /// Node manager (node.c) /// */

struct node_info {
	nid_t nid;
	nid_t ino;
	block_t blk_addr;
	uint8_t version;
};

struct nat_entry {
	struct nat_entry *hnext;
	struct nat_entry *dnext;	/* dirty list */
	nid_t nid;
	nid_t ino;
	block_t blk;			/* NEW_ADDR: allocated, not yet written */
	uint8_t version;
	bool dirty;
};

struct f2fs_nm_info {
	block_t nat_blkaddr;
	unsigned int nat_blocks;	/* per copy */
	nid_t max_nid;
	uint8_t *nat_bitmap;		/* which NAT copy is valid */
	unsigned int nat_bitmap_size;
	/* NAT journal in the hot data summary: newer than the NAT blocks */
	struct f2fs_journal *journal;
	pthread_mutex_t lock;
	/* write side: cached entries, newest of all; dirty ones reach disk at checkpoint */
	struct nat_entry **nat_hash;
	unsigned int nat_hash_size;
	struct nat_entry *dirty;
	atomic_uint nr_dirty;		/* read unlocked by heuristics */
	nid_t *free_nids;		/* allocatable now */
	unsigned int nr_free, free_cap;
	nid_t *freed_nids;		/* freed since the last checkpoint: allocatable after it */
	unsigned int nr_freed, freed_cap;
	nid_t scan_nid;			/* where the next free-nid scan starts */
	uint32_t valid_nodes, valid_inodes;
};

int f2fs_build_node_manager(struct f2fs_sb_info *sbi);
void f2fs_destroy_node_manager(struct f2fs_sb_info *sbi);
int f2fs_get_node_info(struct f2fs_sb_info *sbi, nid_t nid, struct node_info *ni);
/* Read node block nid through the node cache, validating the footer. */
struct folio *f2fs_get_node_folio(struct f2fs_sb_info *sbi, nid_t nid);
/* Write side (node.c) */
int f2fs_alloc_nid(struct f2fs_sb_info *sbi, nid_t ino, nid_t *out);
void f2fs_alloc_nid_failed(struct f2fs_sb_info *sbi, nid_t nid);
/* Recovery: take a specific nid (an inode born after the checkpoint). */
int f2fs_claim_nid(struct f2fs_sb_info *sbi, nid_t nid);
/* A new node block in the cache, zeroed, footer set, dirty. ofs: node offset. */
struct folio *f2fs_new_node_folio(struct f2fs_sb_info *sbi, nid_t nid, nid_t ino,
				  unsigned int ofs, bool is_dir);
/* Drop a node: its block is invalidated and the nid freed after the next checkpoint. */
int f2fs_truncate_node(struct f2fs_sb_info *sbi, nid_t nid);
int f2fs_write_node_folio(struct f2fs_sb_info *sbi, struct folio *f);
/* The dirty ones of v[0..n), in order; consecutive blocks go as one request. */
int f2fs_write_node_folios(struct f2fs_sb_info *sbi, struct folio **v, size_t n);
int f2fs_flush_nat(struct f2fs_sb_info *sbi);
/* The node had a block at the last checkpoint (its NAT entry on disk). */
bool f2fs_nid_checkpointed(struct f2fs_sb_info *sbi, nid_t nid);
void f2fs_nat_after_checkpoint(struct f2fs_sb_info *sbi);
bool f2fs_is_dnode_ofs(unsigned int ofs);
void f2fs_set_inode_chksum(struct f2fs_sb_info *sbi, struct f2fs_node *n);
static inline unsigned int ofs_of_node(const struct f2fs_node *n)
{
	return n->footer.flag >> OFFSET_BIT_SHIFT;
}
/* Batched readahead of sibling dnodes after a miss under an indirect node. */
#define MAX_RA_NODE 128
/* The first device error of its requests (the nodes are left to a later read). */
int f2fs_ra_node_siblings(struct f2fs_sb_info *sbi, const nid_t *nids, unsigned int count);
/* Every inode block the NAT maps, read in block order (checkpointed, no writer). */
typedef int (*f2fs_inode_walk_fn)(struct f2fs_sb_info *sbi, nid_t ino,
				  const struct f2fs_inode *ri, void *arg);
int f2fs_walk_inodes(struct f2fs_sb_info *sbi, f2fs_inode_walk_fn fn, void *arg);
static inline struct f2fs_node *folio_node(struct folio *f)
{
	return (struct f2fs_node *)f->data;
}
/*
 * Address and nid arrays of node blocks, as plain word pointers: node blocks
 * sit in 4 KiB-aligned buffers, so the packed structs' arrays are aligned.
 */
static inline const uint32_t *node_words(const struct f2fs_node *n, size_t byte_off)
{
	return (const uint32_t *)(const void *)((const uint8_t *)n + byte_off);
}
static inline const uint32_t *inode_addrs(const struct f2fs_node *n)
{
	return node_words(n, offsetof(struct f2fs_inode, i_addr));
}
static inline const uint32_t *dnode_addrs(const struct f2fs_node *n)
{
	return node_words(n, 0);
}
static inline const uint32_t *inode_nids(const struct f2fs_node *n)
{
	return node_words(n, offsetof(struct f2fs_inode, i_nid));
}
static inline const uint32_t *indirect_nids(const struct f2fs_node *n)
{
	return node_words(n, 0);
}

/* /// Segment manager (segment.c) /// */

/*
 * ckpt_valid_map is the kernel's: blocks valid at the last checkpoint plus
 * every block allocated since, so it always covers valid_map. A slot is free
 * for SSR only when its bit is clear there: a block freed since the last
 * checkpoint still backs that checkpoint (and a block written since may be in
 * the roll-forward chain), so neither is reused before the next one.
 */
struct seg_entry {
	uint16_t valid_blocks;
	uint16_t ckpt_valid_blocks;
	uint8_t type;
	uint64_t mtime;
	uint8_t valid_map[SIT_VBLOCK_MAP_SIZE];
	uint8_t ckpt_valid_map[SIT_VBLOCK_MAP_SIZE];
};

/* curseg_info.alloc_type, as the checkpoint stores it */
enum { ALLOC_LFS = 0, ALLOC_SSR = 1 };

struct curseg_info {
	unsigned int segno;
	unsigned short next_blkoff;
	uint8_t alloc_type;
};

#define NULL_SEGNO	(~0u)

/* The kernel's ipu_policy bits (fs/f2fs/segment.h) and defaults. */
enum {
	F2FS_IPU_FORCE,
	F2FS_IPU_SSR,
	F2FS_IPU_UTIL,
	F2FS_IPU_SSR_UTIL,
	F2FS_IPU_FSYNC,
	F2FS_IPU_ASYNC,
	F2FS_IPU_NOCACHE,
	F2FS_IPU_HONOR_OPU_WRITE,
	F2FS_IPU_MAX,
};
#define DEF_MIN_IPU_UTIL	70	/* percent of user blocks, for IPU_UTIL */
#define DEF_MIN_FSYNC_BLOCKS	8	/* fsync of at most this many dirty blocks may IPU */

struct f2fs_sm_info {
	block_t sit_blkaddr;
	unsigned int sit_blocks;	/* per copy */
	uint8_t *sit_bitmap;
	unsigned int sit_bitmap_size;
	struct seg_entry *sentries;
	struct curseg_info curseg[NR_CURSEG_TYPE];
	struct f2fs_summary_block *sum_blk[NR_CURSEG_TYPE];
	unsigned int free_segments;
	pthread_mutex_t lock;
	/* write side: bitmaps by segment number */
	uint8_t *dirty_sit;		/* SIT entry changed since the last checkpoint */
	uint8_t *prefree;		/* emptied since the last checkpoint: not reusable yet */
	uint8_t *discard_pending;	/* free, not yet discarded (discards are deferred) */
	uint8_t *discard_inflight;	/* chosen for a discard being sent: not allocatable */
	unsigned int nr_discarding;	/* bits set in discard_inflight */
	pthread_cond_t discard_done;	/* an in-flight batch ended (with lock) */
	unsigned int alloc_hint;	/* where the next free-segment search starts */
	unsigned int nr_free;		/* empty, not prefree, not current: writable now */
	uint64_t valid_blocks;		/* main-area blocks in use (CP valid_block_count) */
	uint64_t user_blocks;		/* CP user_block_count */
	uint64_t mount_time;		/* seconds since the epoch, for segment mtimes */
	uint64_t elapsed_base;		/* CP elapsed_time at mount */
	/*
	 * Free SSR slots (clear in ckpt_valid_map) of segments SSR may pick:
	 * in use, not current. [0] data segments, [1] node segments.
	 */
	uint64_t ssr_slots[2];
	unsigned int gc_victim;		/* being collected: never an SSR target */
	atomic_uint_fast64_t room_wanted;	/* nblocks of the last check_space found short */
	unsigned int ipu_policy;	/* F2FS_IPU_* bits */
	unsigned int min_ipu_util, min_fsync_blocks;
};

int f2fs_allocate_block(struct f2fs_sb_info *sbi, int type, const struct f2fs_summary *sum,
			block_t *out);
int f2fs_allocate_block_next(struct f2fs_sb_info *sbi, int type, const struct f2fs_summary *sum,
			     block_t *out, block_t *next);
void f2fs_invalidate_block(struct f2fs_sb_info *sbi, block_t blk);
bool f2fs_block_is_valid(struct f2fs_sb_info *sbi, block_t blk);
/* Recovery: a block written after the checkpoint becomes valid, with its summary. */
int f2fs_claim_block(struct f2fs_sb_info *sbi, block_t blk, const struct f2fs_summary *sum);
/* Recovery: every current segment moves to a fresh one. */
int f2fs_move_all_cursegs(struct f2fs_sb_info *sbi);
/* Move one log to a fresh section (zoned volumes: its write pointer disagreed). */
int f2fs_move_curseg(struct f2fs_sb_info *sbi, int type);
/* Free segments the logs can take (zoned volumes: not the holes of sections in use). */
unsigned int f2fs_usable_free_segments(struct f2fs_sb_info *sbi);

/* zoned.c: zoned volumes (blkzoned) */
int f2fs_init_zones(struct f2fs_sb_info *sbi);
int f2fs_fix_zoned_cursegs(struct f2fs_sb_info *sbi);
int f2fs_zone_prepare_section(struct f2fs_sb_info *sbi, unsigned int secno);
bool f2fs_zone_on_blkdev(struct f2fs_sb_info *sbi, block_t blk);
/* Blocks a log may fill: fewer than the segment's past a zone's capacity (zoned.c). */
unsigned int f2fs_usable_blks_in_seg(struct f2fs_sb_info *sbi, unsigned int segno);
uint64_t f2fs_usable_blks_in_sec(struct f2fs_sb_info *sbi, unsigned int secno);
/* The checkpoint's free_segment_count: as Linux, without segments past a zone's capacity. */
unsigned int f2fs_cp_free_segments(struct f2fs_sb_info *sbi);
int f2fs_flush_sit(struct f2fs_sb_info *sbi);
int f2fs_write_curseg_ssa(struct f2fs_sb_info *sbi);
void f2fs_clear_prefree(struct f2fs_sb_info *sbi);
/* Discard free segments still pending, at most max_segs of them (0: all); returns how many. */
unsigned int f2fs_issue_discards(struct f2fs_sb_info *sbi, unsigned int max_segs);
unsigned int f2fs_count_free_segments(struct f2fs_sb_info *sbi);
/* Kernel's f2fs_need_SSR: free segments are low, new segments come from holes. */
bool f2fs_need_ssr(struct f2fs_sb_info *sbi);
/* Before a checkpoint: no current segment may be left full. */
int f2fs_fix_full_cursegs(struct f2fs_sb_info *sbi);
/*
 * Room the logs have now, in blocks: free segments, and (SSR) the free slots
 * of used data and node segments.
 */
struct f2fs_log_room {
	uint64_t free_blocks;
	uint64_t data_slots, node_slots;
};
void f2fs_log_room(struct f2fs_sb_info *sbi, struct f2fs_log_room *room);
/* A valid block of a data segment: a legal in-place update target. */
bool f2fs_ipu_target_ok(struct f2fs_sb_info *sbi, block_t blk);
/* Main-area utilization in percent of user blocks (the kernel's utilization()). */
unsigned int f2fs_utilization(struct f2fs_sb_info *sbi);
#define f2fs_segno(sbi, blk) (((blk) - (sbi)->main_blkaddr) >> (sbi)->log_blocks_per_seg)

int f2fs_build_segment_manager(struct f2fs_sb_info *sbi);
void f2fs_destroy_segment_manager(struct f2fs_sb_info *sbi);

/* /// Superblock info (super.c, checkpoint.c) /// */

struct f2fs_sb_info {
	struct uf2fs_variant_head head;		/* first: the dispatch layer reads it */
	struct uf2fs_options opts;
	struct f2fs_dev dev;
	struct f2fs_super_block raw_super;
	int valid_super_index;
	struct f2fs_checkpoint *ckpt;		/* 1 + cp_payload blocks */
	unsigned int cur_cp_pack;		/* 1 or 2 */
	block_t cur_cp_addr;
	uint64_t cp_ver;
	uint32_t cp_crc;

	unsigned int log_blocks_per_seg;
	unsigned int blocks_per_seg;
	unsigned int segs_per_sec;
	block_t seg0_blkaddr, main_blkaddr, ssa_blkaddr;
	unsigned int total_segs, main_segs;
	uint64_t block_count;
	uint32_t features;
	uint32_t chksum_seed;
	nid_t root_ino, node_ino, meta_ino;
	/* A multi-device volume's devices (devices.c); ndevs 0: a single device. */
	unsigned int ndevs;
	struct f2fs_devinfo {
		char path[4096];
		block_t start_blk, end_blk;	/* the volume's blocks on it, inclusive */
		uint64_t size;			/* bytes of the device or file */
		dev_t st_dev;			/* which file: the same one twice is refused */
		ino_t st_ino;
	} devs[F2FS_MAX_DEVICES];
	/* A zoned volume (zoned.c): sections are zones; which devices are zoned, a bit each. */
	bool zoned;
	unsigned int zoned_devs;
	uint64_t zone_cap_blocks;		/* the capacity of a sequential zone */
	bool zone_cap_known;			/* a device reported one */
	bool zone_cap_short;			/* smaller than the zone: segments lose blocks */

	struct f2fs_nm_info nm;
	struct f2fs_sm_info sm;
	struct folio_cache *cache;
	struct inode_cache *icache;

	nid_t *orphans;
	unsigned int nr_orphans;
	bool need_recovery;
	unsigned int nr_fsync_dnodes;
	bool cp_stopped;			/* a checkpoint failed: no more metadata writes */
	pthread_mutex_t orphan_lock;		/* orphans, nr_orphans, orphan_cap */
	pthread_t cp_thread;
	pthread_mutex_t cp_thread_lock;
	pthread_cond_t cp_thread_cond;
	bool cp_thread_stop, cp_thread_running;
	atomic_uint_fast64_t last_op_time;	/* seconds: for idle-time background GC */
	struct f2fs_flusher *flusher;		/* background writeback (flusher.c) */
	unsigned int orphan_cap;

	pthread_rwlock_t cp_rwsem;
	pthread_mutex_t writepages;		/* serializes allocation+submission (seed 004) */
	/* tunables and counters (stats.c) */
	struct uf2fs_counters *ctr;
	char last_error[256];
	pthread_mutex_t err_lock;
	struct f2fs_quota_info *quota;		/* quota_ino images (quota.c); NULL without */
	struct fscrypt_keyring *keyring;	/* fscrypt master keys (lib/fscrypt) */
	struct fsverity_sb verity;		/* fs-verity ops (lib/fsverity, verity.c) */
};

static inline bool f2fs_has_feature(const struct f2fs_sb_info *sbi, uint32_t f)
{
	return sbi->features & f;
}

/* mode=lfs: only clean segments are written, never in place (the kernel's f2fs_lfs_mode). */
static inline bool f2fs_lfs_mode(const struct f2fs_sb_info *sbi)
{
	return sbi->opts.mode_lfs;
}

/* Record a structured error (structure + block) and return -err. */
int f2fs_error(struct f2fs_sb_info *sbi, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void f2fs_msg(struct f2fs_sb_info *sbi, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void f2fs_info(struct f2fs_sb_info *sbi, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

int f2fs_read_super(struct f2fs_sb_info *sbi);
/* Open the other devices of a multi-device volume and check each (devices.c). */
int f2fs_open_devices(struct f2fs_sb_info *sbi);
/* Write a metadata block, keeping a cached copy of that address coherent. */
int f2fs_write_meta_block(struct f2fs_sb_info *sbi, block_t addr, const void *buf);
/* The cp_ver stamped into node footers: version, and the CP CRC above it. */
uint64_t f2fs_node_cp_ver(const struct f2fs_sb_info *sbi);
int f2fs_write_checkpoint(struct f2fs_sb_info *sbi, bool umount);
/* Write-side bracket of every modifying operation (namei.c) */
int f2fs_begin_write(struct f2fs_sb_info *sbi);
void f2fs_end_write(struct f2fs_sb_info *sbi);
/* Keep dirty memory and free space in bounds: writeback or checkpoint (file.c). */
void f2fs_balance(struct f2fs_sb_info *sbi);
int f2fs_checkpoint_now(struct f2fs_sb_info *sbi, bool umount);
int f2fs_start_checkpoint_thread(struct f2fs_sb_info *sbi);
/* Background writeback by age and dirty threshold (flusher.c). */
int f2fs_start_flusher(struct f2fs_sb_info *sbi);
void f2fs_stop_flusher(struct f2fs_sb_info *sbi);
void f2fs_kick_flusher(struct f2fs_sb_info *sbi);
/* Monotonic seconds, for dirty ages. */
uint32_t f2fs_now_secs(void);
void f2fs_stop_checkpoint_thread(struct f2fs_sb_info *sbi);
bool f2fs_has_dirty_inodes(struct f2fs_sb_info *sbi);
unsigned int f2fs_nr_dirty_inodes(struct f2fs_sb_info *sbi);
/* Make room for nblocks in free segments while holding cp_rwsem shared (gc.c). */
int f2fs_gc_for_space(struct f2fs_sb_info *sbi, uint64_t need);
int f2fs_make_room(struct f2fs_sb_info *sbi);
/*
 * Run a modifying operation; when it asks for room (-EAGAIN, with its locks
 * dropped), make some and retry, three times at most, then ENOSPC.
 */
#define F2FS_WITH_ROOM(sbi, call) ({						\
	__typeof__(call) __ret;							\
	for (int __tries = 0; (__ret = (call)) == -EAGAIN && __tries < 3; __tries++) \
		f2fs_make_room(sbi);						\
	__ret == -EAGAIN ? -ENOSPC : __ret;					\
})
int f2fs_background_gc(struct f2fs_sb_info *sbi);
/* Checkpoint steps living elsewhere */
int f2fs_writeback_all_data(struct f2fs_sb_info *sbi);	/* data.c */
int f2fs_sync_dirty_inodes(struct f2fs_sb_info *sbi);	/* inode.c */
int f2fs_write_dirty_nodes(struct f2fs_sb_info *sbi);	/* node.c */
int f2fs_get_valid_checkpoint(struct f2fs_sb_info *sbi);
int f2fs_read_orphans(struct f2fs_sb_info *sbi);
int f2fs_check_recovery(struct f2fs_sb_info *sbi);
/* Version bitmaps inside the checkpoint. */
uint8_t *f2fs_cp_nat_bitmap(struct f2fs_sb_info *sbi);
uint8_t *f2fs_cp_sit_bitmap(struct f2fs_sb_info *sbi);
const char *f2fs_feature_name(uint32_t bit);

static inline bool f2fs_valid_main_blkaddr(const struct f2fs_sb_info *sbi, block_t blk)
{
	return blk >= sbi->main_blkaddr && blk < sbi->block_count;
}

static inline bool f2fs_valid_meta_blkaddr(const struct f2fs_sb_info *sbi, block_t blk)
{
	return blk >= sbi->seg0_blkaddr && blk < sbi->main_blkaddr;
}

/* /// Inodes (inode.c) /// */

struct extent_info {
	uint32_t fofs;
	block_t blk;
	uint32_t len;
};

struct f2fs_inode_info {
	struct f2fs_inode_info *hnext;
	struct f2fs_inode_info *lru_prev, *lru_next;
	nid_t ino;
	atomic_int refcnt;
	uint64_t nlookup;
	pthread_mutex_t i_lock;		/* small fields (extent tree creation) */
	pthread_rwlock_t i_rwsem;	/* data and namespace: readers shared, writers exclusive */

	uint32_t mode, uid, gid, nlink, generation, flags;
	uint64_t size, blocks;
	struct timespec atime, mtime, ctime, crtime;
	/* an explicit ctime is raised to it: a change its sender's cache missed (file.c) */
	struct timespec ctime_floor;
	uint8_t i_advise, i_inline, i_dir_level;
	uint32_t current_depth;
	nid_t xattr_nid;
	nid_t i_nid[DEF_NIDS_PER_INODE];
	unsigned int extra_isize;	/* in 4-byte words */
	unsigned int inline_xattr_addrs;/* in 4-byte words */
	unsigned int addrs_per_inode;
	uint32_t rdev;
	/* compression */
	uint8_t compress_algorithm;
	uint8_t log_cluster_size;
	uint16_t compress_flag;
	uint64_t compr_blocks;
	/* large folio eligibility and the preferred data folio order */
	unsigned int max_order;
	struct extent_info largest;	/* i_ext */
	struct extent_tree *et;		/* read extent cache */
	/* write side */
	bool dirty;			/* fields newer than the inode block */
	struct f2fs_inode_info *dirty_next;
	uint64_t fresh_blocks;		/* of folios writes made since its last writeback */
	unsigned int open_count;
	unsigned int write_opens;	/* of open_count, for writing (i_lock): verity's ETXTBSY */
	bool orphan;			/* unlinked while open: freed at last release */
	bool freed;			/* its blocks and nid are gone */
	uint64_t ns_changed_at;		/* cp_ver + 1 when a name or xattr changed since it */
	/* casefolded directory: every entry's hash is the one uf2fs computes (dir.c) */
	atomic_bool cf_hashes_ok;
	/*
	 * getxattr without the area (xattr_io.c): xattr_gen counts the stores of
	 * the xattr area; xattr_empty_at is gen + 1 of a read that found no entry.
	 */
	atomic_uint xattr_gen;
	atomic_uint xattr_empty_at;
	struct fscrypt_inode fscrypt;	/* key and policy (lib/fscrypt, crypto_ops.c) */
	/* atomic write (F2FS_IOC_START_ATOMIC_WRITE): data stays in memory until commit */
	bool atomic;
	uint64_t atomic_size;
	/* disk quota (quota.c): i_projid, and the ids and i_blocks the quota table holds */
	uint32_t projid;
	uint32_t q_uid, q_gid, q_projid;
	uint64_t q_blocks;
	bool q_charged;
	/* fs-verity: loaded on first read (lib/fsverity, verity.c) */
	struct fsverity_inode fsverity;
	struct f2fs_verity_enable *verity_enabling;	/* while FS_IOC_ENABLE_VERITY runs */
};

/* Write side (inode.c) */
void f2fs_mark_inode_dirty(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);
/* Copy the in-memory fields into the inode block (dirtying it). */
int f2fs_update_inode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);
struct f2fs_inode_info *f2fs_new_inode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
				       uint32_t mode, uint32_t uid, uint32_t gid,
				       const char *name, size_t len);
/* Free an unlinked inode's blocks, xattr node and nid. */
int f2fs_evict_inode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);
int f2fs_add_orphan(struct f2fs_sb_info *sbi, nid_t ino);
void f2fs_remove_orphan(struct f2fs_sb_info *sbi, nid_t ino);
int f2fs_cleanup_orphans(struct f2fs_sb_info *sbi);
void f2fs_inode_touch(struct f2fs_inode_info *fi, bool mtime, bool ctime);
/* A change roll-forward cannot replay: the next fsync of the inode checkpoints. */
static inline void f2fs_mark_need_cp(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	fi->ns_changed_at = sbi->cp_ver + 1;
}
/* recovery.c: 1 when the caller must checkpoint instead, else 0 or -errno */
int f2fs_fsync_file(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, bool datasync);
int f2fs_recover_fsync_data(struct f2fs_sb_info *sbi);
int f2fs_atomic_start(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);
/* 1 when the caller must checkpoint to finish the commit */
int f2fs_atomic_commit(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);
void f2fs_atomic_abort(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);

struct f2fs_inode_info *f2fs_iget(struct f2fs_sb_info *sbi, nid_t ino);
void f2fs_iput(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);
int f2fs_icache_init(struct f2fs_sb_info *sbi);
void f2fs_icache_destroy(struct f2fs_sb_info *sbi);
void f2fs_icache_forget(struct f2fs_sb_info *sbi, nid_t ino, uint64_t n);
/* Call fn on every cached inode (icache lock held: fn must not iget or iput). */
void f2fs_icache_for_each(struct f2fs_sb_info *sbi,
			  void (*fn)(struct f2fs_sb_info *, struct f2fs_inode_info *, void *),
			  void *arg);

static inline bool f2fs_is_inline_data(const struct f2fs_inode_info *fi)
{
	return fi->i_inline & F2FS_INLINE_DATA;
}
static inline bool f2fs_is_inline_dentry(const struct f2fs_inode_info *fi)
{
	return fi->i_inline & F2FS_INLINE_DENTRY;
}
/* As the kernel's f2fs_compressed_file: a directory's flag is only inherited. */
static inline bool f2fs_is_compressed(const struct f2fs_inode_info *fi)
{
	return (fi->flags & F2FS_COMPR_FL) && S_ISREG(fi->mode);
}
static inline bool f2fs_is_verity(const struct f2fs_inode_info *fi)
{
	return fi->i_advise & FADVISE_VERITY_BIT;
}
/* A file mkfs.f2fs -c dev@name made to expose a whole device: i_ext maps it (device_alias). */
static inline bool f2fs_is_device_alias(const struct f2fs_inode_info *fi)
{
	return fi->flags & F2FS_DEVICE_ALIAS_FL;
}
static inline bool f2fs_is_encrypted(const struct f2fs_inode_info *fi)
{
	return fi->i_advise & FADVISE_ENCRYPT_BIT;
}
/* A regular file whose data is encrypted (fscrypt_needs_contents_encryption). */
static inline bool f2fs_encrypted_file(const struct f2fs_inode_info *fi)
{
	return f2fs_is_encrypted(fi) && S_ISREG(fi->mode);
}
/* Where inline data / inline dentries start inside an inode block, and their size. */
void *f2fs_inline_data_addr(const struct f2fs_inode_info *fi, struct f2fs_node *node);
unsigned int f2fs_max_inline_data(const struct f2fs_inode_info *fi);
void *f2fs_inline_xattr_addr(const struct f2fs_inode_info *fi, struct f2fs_node *node);
/* Load and pin the inode's node folio (validated against the NAT). */
struct folio *f2fs_get_inode_folio(struct f2fs_sb_info *sbi, nid_t ino);

/* /// Block mapping (data.c) /// */

/*
 * Where a block's address lives: in the inode (folio is the inode folio) or
 * in a direct node. With no folio, the path had a missing node: a hole of
 * hole_blocks blocks from the asked block on.
 */
struct dnode_of_data {
	struct folio *folio;
	const uint32_t *addrs;
	unsigned int ofs;
	unsigned int nr;
	uint64_t hole_blocks;
};

int f2fs_get_dnode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t block,
		   struct dnode_of_data *dn);
unsigned int f2fs_addrs_per_block(const struct f2fs_inode_info *fi);
uint64_t f2fs_start_bidx_of_node(unsigned int node_ofs, const struct f2fs_inode_info *fi);
int f2fs_get_dnode_alloc(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t block,
			 struct dnode_of_data *dn);

struct f2fs_map_blocks {
	uint64_t lblk;		/* in: first file block */
	uint32_t len;		/* in: wanted; out: run length */
	block_t pblk;		/* out: first disk block, NULL_ADDR, NEW_ADDR or COMPRESS_ADDR */
};

/* Map a run of file blocks starting at lblk to contiguous disk blocks. */
int f2fs_map_blocks(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
		    struct f2fs_map_blocks *map);
/* Disk address of one file block (for directories and compressed clusters). */
int f2fs_get_block_addr(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t lblk,
			block_t *blk);
/* Read file data through the data mapping of the folio cache. */
ssize_t f2fs_file_read(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, void *buf,
		       size_t len, uint64_t off);
/* Fill blocks [from, to) of a folio being created (write path). */
int f2fs_fill_folio_range(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, struct folio *f,
			  uint64_t from, uint64_t to);
int f2fs_writeback_inode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);
/* Only the folios written whole, for a streaming writer (drop-behind). */
int f2fs_writebehind_inode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);
/* Why data is written back: decides in-place against out-of-place updates. */
#define WB_FSYNC	(1u << 0)	/* an fsync: the kernel's FI_NEED_IPU window */
#define WB_DATASYNC	(1u << 1)	/* fdatasync: in place whatever the dirty count */
#define WB_ATOMIC	(1u << 2)	/* an atomic commit: never in place */
#define WB_WHOLE	(1u << 3)	/* write-behind: only folios written whole */
int f2fs_writeback_inode_flags(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			       unsigned int flags);
/* Mark file blocks [from, to) of a data folio dirty. */
void f2fs_mark_range_dirty(struct f2fs_sb_info *sbi, struct folio *f, uint64_t from, uint64_t to);
/* Decompress (or read, if stored raw) the cluster a cluster-sized folio covers. */
int f2fs_read_cluster(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, struct folio *f);
ssize_t f2fs_file_write(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, const void *buf,
			size_t len, uint64_t off);
/* Whole blocks from the caller's buffer to the device, no folio (drop-behind only). */
#define WRITE_THROUGH_MIN	(32u << 10)
bool f2fs_write_through_ok(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, size_t len,
			   uint64_t off);
ssize_t f2fs_write_through(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, const void *buf,
			   size_t len, uint64_t off);
/* Inline data (inline.c) */
int f2fs_convert_inline_inode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);
int f2fs_write_inline_data(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, const void *buf,
			   size_t len, uint64_t off);
/* Room for nblocks more blocks, making it by checkpoint if needed; -ENOSPC if none. */
int f2fs_check_space(struct f2fs_sb_info *sbi, uint64_t nblocks);
/* Only the user budget side of f2fs_check_space (valid blocks, nodes included). */
bool f2fs_has_budget(struct f2fs_sb_info *sbi, uint64_t nblocks);
/* Count as valid up to want reserved (NEW_ADDR) blocks, as many as fit; returns how many. */
uint64_t f2fs_reserve_blocks(struct f2fs_sb_info *sbi, uint64_t want);
/* The logs can take what is dirty plus nblocks now, without a checkpoint. */
bool f2fs_room_ok(struct f2fs_sb_info *sbi, uint64_t nblocks);
/* Free blocks and nodes from file block "from" on (truncate). */
int f2fs_truncate_blocks(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t from);
/* Release what one dnode slot holds (block, reservation) from the counts; caller clears it. */
void f2fs_free_data_addr(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, block_t addr);
/* Room in free segments for nblocks rewritten blocks, past the dirty data (file.c). */
int f2fs_check_log_space(struct f2fs_sb_info *sbi, uint64_t nblocks);
/* fallocate COLLAPSE_RANGE and INSERT_RANGE (file_range.c); inode held exclusively. */
int f2fs_collapse_range(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t off,
			uint64_t len);
int f2fs_insert_range(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t off,
		      uint64_t len);
ssize_t f2fs_file_read_iov(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, size_t len,
			   uint64_t off, int (*cb)(void *, const struct iovec *, int), void *arg);
/* Read one whole file block (directory blocks): a cached data folio, referenced. */
struct folio *f2fs_get_data_folio(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
				  uint64_t lblk);

/* /// Extent cache (extent_cache.c) /// */

int f2fs_extent_lookup(struct f2fs_inode_info *fi, uint64_t lblk, struct extent_info *ei);
void f2fs_extent_insert(struct f2fs_inode_info *fi, uint32_t fofs, block_t blk, uint32_t len);
void f2fs_extent_tree_destroy(struct f2fs_inode_info *fi);
/* Forget mappings of [fofs, fofs+len): their blocks moved or went away. */
/* Returns true when the largest extent (i_ext) was dropped: the inode is then dirty. */
bool f2fs_extent_invalidate(struct f2fs_inode_info *fi, uint64_t fofs, uint64_t len);
unsigned int f2fs_extent_count(struct f2fs_inode_info *fi);

/* /// Directories (dir.c, inline.c, hash.c) /// */

struct f2fs_dentry_ptr {
	unsigned int max;		/* number of slots */
	const uint8_t *bitmap;
	const struct f2fs_dir_entry *dentry;
	const uint8_t (*filename)[F2FS_SLOT_LEN];
};

/*
 * A name as a directory sees it (casefold.c): its hash, and in a casefolded
 * directory its folded form (cf, NULL when the name is not valid Unicode).
 */
struct f2fs_filename {
	const uint8_t *name;		/* as given: stored on disk */
	size_t len;
	const uint8_t *cf;
	size_t cf_len;
	uint32_t hash;
	bool casefold;			/* the directory folds names */
	bool linear;			/* casefolded, encoding unknown: exact, every block */
	/* encrypted directory (lib/fscrypt): name/len are then the on-disk ciphertext */
	bool encrypted, nokey, nokey_digest;
	const uint8_t *usr;		/* the name as given */
	size_t usr_len;
	struct f2fs_sb_info *sbi;
	struct f2fs_inode_info *dir;
	/* out: the last match was a stored name of another spelling (folded) */
	bool alias;
	uint8_t cf_buf[F2FS_NAME_LEN];
	uint8_t crypt_buf[F2FS_NAME_LEN + 1];	/* ciphertext, or the decoded no-key name */
};

/* -EINVAL for a name that is not valid UTF-8 in a strict-mode casefolded directory */
int f2fs_setup_filename(struct f2fs_sb_info *sbi, const struct f2fs_inode_info *dir,
			const char *name, size_t len, struct f2fs_filename *fn);
bool f2fs_match_name(const struct f2fs_filename *fn, const uint8_t *de_name, size_t de_len);
/* The same, and *hashes_ok = false when de_hash is not the hash de_name gets here. */
bool f2fs_match_name_check(const struct f2fs_filename *fn, const uint8_t *de_name, size_t de_len,
			   uint32_t de_hash, bool *hashes_ok);
bool f2fs_dir_casefolded(const struct f2fs_sb_info *sbi, const struct f2fs_inode_info *dir);
bool f2fs_casefold_supported(const struct f2fs_sb_info *sbi);
bool f2fs_casefold_linear_fallback(const struct f2fs_sb_info *sbi);
int f2fs_set_casefold_flag(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, bool on);
int f2fs_casefold_check_sb(struct f2fs_sb_info *sbi, bool writable);

int f2fs_find_entry(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, const char *name,
		    size_t len, nid_t *ino, unsigned int *ftype);
/* The same; *alias: the name found is stored under another spelling (casefolded dirs). */
int f2fs_find_entry_alias(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			  const char *name, size_t len, nid_t *ino, unsigned int *ftype,
			  bool *alias);
int f2fs_readdir(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, uint64_t pos,
		 uf2fs_filldir_t fill, void *arg);
unsigned int f2fs_ftype_to_dtype(unsigned int ft);
/* Write side (dir.c) */
unsigned int f2fs_mode_to_ftype(uint32_t mode);
int f2fs_add_link(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, const char *name,
		  size_t len, nid_t ino, uint32_t mode);
int f2fs_delete_entry(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, const char *name,
		      size_t len);
/* The same with a name set up already (recovery: encrypted names as stored). */
int f2fs_find_entry_fn(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
		       struct f2fs_filename *fn, nid_t *ino, unsigned int *ftype);
int f2fs_add_link_fn(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
		     const struct f2fs_filename *fn, nid_t ino, uint32_t mode);
int f2fs_delete_entry_fn(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			 const struct f2fs_filename *fn);
int f2fs_set_link(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, const char *name,
		  size_t len, nid_t ino, uint32_t mode);
int f2fs_make_empty_dir(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, nid_t parent);
/* 1 when only "." and ".." remain */
int f2fs_empty_dir(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir);

/* /// Compression (compress.c) /// */

/*
 * Decompress one cluster. cbuf holds the cluster's compressed blocks
 * (nr_cblocks * F2FS_BLKSIZE bytes, starting with struct compress_data).
 * out receives exactly out_len bytes (the cluster size). Returns 0, -EIO on a
 * corrupt header, a failed decompression or a checksum mismatch (when
 * verify_chksum), or -EOPNOTSUPP for an algorithm not built in.
 */
int f2fs_decompress_cluster(unsigned int algo, const void *cbuf, size_t cbuf_len, void *out,
			    size_t out_len, bool verify_chksum);
const char *f2fs_compress_name(unsigned int algo);

/* A writer's compression state for one inode's clusters (compress.c). */
struct f2fs_cctx {
	unsigned int algo, level;
	bool chksum;
	size_t rlen;		/* cluster bytes */
	void *zstd;		/* ZSTD_CCtx */
	void *work;		/* LZO work memory */
	uint8_t *tmp, *check;	/* LZO output before its checks, and its round trip */
};
int f2fs_cctx_init(struct f2fs_cctx *cc, unsigned int algo, unsigned int level, bool chksum,
		   unsigned int log_cluster_size);
void f2fs_cctx_destroy(struct f2fs_cctx *cc);
/*
 * Compress one cluster (cc->rlen bytes at src) into dst, which has room for
 * all but one block of the cluster: struct compress_data, the stream, zero
 * padding. Returns the number of blocks used, -EAGAIN when that would not
 * save a block (the cluster is then written raw), or -errno.
 */
int f2fs_compress_cluster(struct f2fs_cctx *cc, const void *src, void *dst);

/* Writing compressed files (compress_write.c) */
#define COMPRESS_LEVEL_OFFSET	8	/* i_compress_flag: bit 0 checksum, level above */
static inline unsigned int f2fs_cluster_size(const struct f2fs_inode_info *fi)
{
	return 1u << fi->log_cluster_size;
}
static inline bool f2fs_compress_released(const struct f2fs_inode_info *fi)
{
	return fi->i_inline & F2FS_COMPRESS_RELEASED;
}
/* Fill a cluster folio being created for a write of bytes [pos, wend). */
int f2fs_prepare_cluster_write(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			       struct folio *f, uint64_t pos, uint64_t wend);
int f2fs_writeback_compressed(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);
/* Shrink a compressed file to size (bytes), rewriting a partial last cluster. */
int f2fs_truncate_compressed(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			     uint64_t size);
/* i_compr_blocks less what freeing addrs[from, nr) of a node releases. */
void f2fs_compr_blocks_on_free(struct f2fs_inode_info *fi, const uint32_t *addrs,
			       unsigned int from, unsigned int nr);
/* chattr +c / -c (FS_IOC_SETFLAGS); caller holds the inode exclusively. */
int f2fs_set_compression(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, bool on);
/* A new inode's compression, from its parent and name, into its raw inode. */
void f2fs_compress_new_inode(struct f2fs_sb_info *sbi, const struct f2fs_inode_info *dir,
			     struct f2fs_inode *ri, const char *name, size_t len);
/* The same for a new inode in an encrypted directory, by its plaintext name. */
int f2fs_compress_new_encrypted(struct f2fs_sb_info *sbi, const struct f2fs_inode_info *dir,
				struct f2fs_inode_info *fi, const char *name, size_t len);

/* /// Xattrs (xattr.c) /// */

/*
 * Xattr lookups over the concatenation of an inode's inline xattr area and
 * its xattr node block (VALID_XATTR_BLOCK_SIZE bytes), exactly as the kernel
 * assembles them. An all-zero buffer means "no xattrs".
 * f2fs_xattr_get: value length, or -ENODATA, -ERANGE (size too small, size
 * != 0), -EIO (corrupt). POSIX ACLs are converted to the VFS xattr format.
 * f2fs_xattr_list: NUL-separated names, same size rules.
 */
ssize_t f2fs_xattr_get(const void *buf, size_t len, const char *name, void *value, size_t size);
ssize_t f2fs_xattr_list(const void *buf, size_t len, char *list, size_t size);
bool f2fs_xattr_area_empty(const void *buf, size_t len);
int f2fs_xattr_validate(const void *buf, size_t len);
/*
 * setxattr/removexattr on the same assembled area, as the kernel's
 * __f2fs_setxattr and __f2fs_set_acl do them (xattr.c). buf: inline_size
 * bytes of inline xattrs, then VALID_XATTR_BLOCK_SIZE bytes of the xattr
 * node (zeroed if the inode has none) when the inode has or may get one:
 * total_size is inline_size or inline_size + VALID_XATTR_BLOCK_SIZE.
 * i_mode: the inode's full mode (file type matters for ACLs). name: full
 * name; value/size: the VFS value (ACLs in VFS format; value may be NULL
 * if size is 0); flags: XATTR_CREATE/XATTR_REPLACE; remove: removexattr.
 * 0 or -errno, buf untouched on error: -EEXIST, -ENODATA, -EOPNOTSUPP,
 * -EINVAL, -ERANGE (suffix > 255), -E2BIG, -ENOSPC (needs the node and
 * total_size has none), -EACCES (default ACL on a non-dir), -EIO
 * (corrupt area), -ENOMEM.
 */
struct f2fs_xattr_update {
	bool dirty;	/* buf changed: write it back */
	bool need_node;	/* list runs past inline_size: the inode needs an xattr node */
	bool touched;	/* the kernel would update ctime and dirty the inode */
	bool set_mode;	/* access ACL: store mode in i_mode */
	uint16_t mode;	/* new i_mode: type and setuid/setgid/sticky bits kept */
	size_t used;	/* header + entries, without the end word */
};
#define F2FS_XATTR_SET_API 1
/* Name -> F2FS_XATTR_INDEX_*, *suffix = stored name; or -EOPNOTSUPP/-EINVAL/-ERANGE. */
int f2fs_xattr_prefix_index(const char *name, const char **suffix);
int f2fs_xattr_set(uint8_t *buf, size_t inline_size, size_t total_size, uint16_t i_mode,
		   const char *name, const void *value, size_t size, int flags, bool remove,
		   struct f2fs_xattr_update *up);
/*
 * POSIX ACL arithmetic of fs/posix_acl.c (xattr.c). f2fs_acl_create_masq
 * narrows a VFS-format ACL and *mode to each other (1: the ACL says more
 * than the mode). f2fs_xattr_acl_chmod rewrites the stored access ACL's
 * owner, mask (or group) and other entries to mode; up as for f2fs_xattr_set.
 */
int f2fs_acl_create_masq(uint8_t *acl, size_t size, uint32_t *mode);
int f2fs_xattr_acl_chmod(uint8_t *buf, size_t inline_size, size_t total_size, uint32_t mode,
			 struct f2fs_xattr_update *up);
/*
 * ACLs of a new inode (xattr_io.c), as f2fs_acl_create and f2fs_init_acl:
 * f2fs_acl_create, under dir's lock before the inode exists, masks *mode by
 * dir's default ACL (or umask without one) and says what the inode inherits;
 * f2fs_init_acl stores that on it. f2fs_acl_chmod follows a mode change.
 */
struct f2fs_new_acl {
	uint8_t *access, *dflt;		/* VFS format, malloc'd; NULL: none */
	size_t access_len, dflt_len;
};
int f2fs_acl_create(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir, uint32_t *mode,
		    uint32_t umask, struct f2fs_new_acl *na);
int f2fs_init_acl(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
		  const struct f2fs_new_acl *na);
void f2fs_new_acl_free(struct f2fs_new_acl *na);
int f2fs_acl_chmod(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);
/* Internal indexes (verity, encryption) by index and stored name (xattr.c, xattr_io.c). */
ssize_t f2fs_xattr_get_indexed(const void *buf, size_t len, unsigned int index, const char *name,
			       void *value, size_t size);
int f2fs_xattr_set_indexed(uint8_t *buf, size_t inline_size, size_t total_size,
			   unsigned int index, const char *name, const void *value, size_t size,
			   int flags, struct f2fs_xattr_update *up);
int f2fs_setxattr_indexed(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			  unsigned int index, const char *name, const void *value, size_t size,
			  int flags);
int f2fs_set_crypt_context(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			   const void *ctx, size_t len);
/* Read the xattr area of an inode into a malloc'd buffer (xattr.c). */
int f2fs_read_xattr_area(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint8_t **buf,
			 size_t *len);
/*
 * An inode known to have no xattrs answers a getxattr without its area:
 * take f2fs_xattr_gen before reading the area, f2fs_xattrs_note_read after,
 * and f2fs_xattrs_known_empty holds until the next store (xattr_io.c).
 */
unsigned int f2fs_xattr_gen(struct f2fs_inode_info *fi);
void f2fs_xattrs_note_read(struct f2fs_inode_info *fi, unsigned int gen, const uint8_t *buf,
			   size_t len);
bool f2fs_xattrs_known_empty(struct f2fs_inode_info *fi);

/* /// f2fs's side of fs-verity (verity.c) /// */
#define VERITY_METADATA_ALIGN	65536	/* f2fs_verity_metadata_pos() */
#define F2FS_VERITY_XATTR_NAME	"v"	/* F2FS_XATTR_NAME_VERITY */
#define F2FS_VERITY_XATTR_VER	1	/* F2FS_VERIFY_VER */

/* fs/f2fs/verity.c's struct fsverity_descriptor_location, little-endian. */
struct f2fs_verity_dloc {
	uint32_t version;
	uint32_t size;
	uint64_t pos;
} __attribute__((packed));

/* Byte offset of the metadata: the first 64 KiB boundary at or past i_size. */
static inline uint64_t f2fs_verity_metadata_pos(uint64_t i_size)
{
	return (i_size + VERITY_METADATA_ALIGN - 1) & ~(uint64_t)(VERITY_METADATA_ALIGN - 1);
}

void f2fs_fsverity_init(struct f2fs_sb_info *sbi);
/* Verified read of a verity file: -EIO for any block that fails its tree. */
ssize_t f2fs_verity_read(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, void *buf,
			 size_t len, uint64_t off);
/* The same for the zero-copy path: emit sees only checked bytes. */
ssize_t f2fs_verity_read_iov(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, size_t len,
			     uint64_t off, uf2fs_emit_t emit, void *arg);
/* As fsverity_file_open: load the descriptor, so a bad one fails the open. */
int f2fs_verity_open(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);

/* /// f2fs's side of fscrypt (crypto_ops.c) /// */
/* The mount's keyring, with f2fs's struct fscrypt_operations. */
int f2fs_fscrypt_init(struct f2fs_sb_info *sbi);
/* Set up fn for a name in an encrypted directory (casefold.c calls this). */
int f2fs_crypt_setup_filename(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			      const char *name, size_t len, struct f2fs_filename *fn);
bool f2fs_crypt_match_name(const struct f2fs_filename *fn, const uint8_t *de, size_t de_len);
/*
 * An encrypted name as stored in an inode's i_name (FADVISE_ENC_NAME_BIT),
 * for roll-forward recovery, which has no key: exact bytes, the hash of the
 * ciphertext, or in a casefolded directory the hash Linux appended after
 * the name (raw holds room bytes).
 */
int f2fs_crypt_setup_disk_name(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			       const uint8_t *raw, size_t len, size_t room,
			       struct f2fs_filename *fn);

/* /// Stats (stats.c) /// */

struct uf2fs_counters {
	atomic_uint_fast64_t cache_hits, cache_misses, cache_evictions, dropbehind;
	atomic_uint_fast64_t folios_alloc[10];	/* by order */
	atomic_uint_fast64_t state_alloc, state_skipped;
	atomic_uint_fast64_t map_calls, extent_hits, node_reads;
	atomic_uint_fast64_t hole_blocks, read_bytes, read_calls, xattr_gets;
	atomic_uint_fast64_t decompressed_clusters, compressed_clusters;
	atomic_uint_fast64_t crypt_wb_calls, crypt_wb_blocks;	/* folio writeback encryption */
	atomic_uint_fast64_t checkpoints, written_blocks, gc_segments, gc_blocks;
	atomic_uint_fast64_t ipu_blocks;		/* data written in place */
	atomic_uint_fast64_t through_blocks;	/* data written through, no folio */
	atomic_uint_fast64_t ssr_segments, ssr_blocks;	/* SSR segment changes, blocks */
	atomic_uint_fast64_t lfs_segments;		/* clean segments opened */
	atomic_uint_fast64_t discard_waits;	/* allocations that waited out a discard */
	atomic_uint_fast64_t flusher_runs, flusher_inodes, flusher_checkpoints;
	atomic_uint_fast64_t dirty_visits;	/* folios folio_collect_dirty walked */
};

#endif /* UF2FS_F2FS_H */
