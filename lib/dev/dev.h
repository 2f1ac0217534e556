/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device layer: the block device under the file system, one struct
 * f2fs_dev with an I/O vtable and a backend per file beside this one (psync,
 * io_uring, RAM, Android sparse). The file system above sees only block runs
 * (f2fs_dev_readv_blocks and friends, core.c); the backends see byte ranges.
 * Nothing here knows f2fs structures: this header must not include f2fs.h.
 */
#ifndef UF2FS_DEV_H
#define UF2FS_DEV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "uf2fs/uf2fs.h"

typedef uint32_t block_t;

/* One FUSE request (1 MiB): what a local file needs to stream. */
#define DEV_DEFAULT_READAHEAD	(1u << 20)

enum { DEV_READ, DEV_WRITE, DEV_NR_DIR };
#define DEV_HIST_BUCKETS 11	/* 4K, 8K, ... 1M, 2M+ */

struct f2fs_dev_stats {
	atomic_uint_fast64_t reqs[DEV_NR_DIR];
	atomic_uint_fast64_t bytes[DEV_NR_DIR];
	atomic_uint_fast64_t hist[DEV_NR_DIR][DEV_HIST_BUCKETS];
	atomic_uint_fast64_t flushes;
	atomic_uint_fast64_t fua_writes;	/* writes durable on completion (NBD FUA) */
	atomic_uint_fast64_t discards;
	/* sequential zones (zoned.c): writes into them, writes refused, zones reset */
	atomic_uint_fast64_t zone_writes, zone_refused, zone_resets;
};

struct f2fs_dev;
struct f2fs_dev_zones;

struct f2fs_dev_ops {
	int (*readv)(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off);
	int (*writev)(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off);
	int (*flush)(struct f2fs_dev *dev);
	/* a write durable once it completes (NBD's FUA); NULL: write, then flush */
	int (*writev_fua)(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off);
	int (*discard)(struct f2fs_dev *dev, uint64_t off, uint64_t len);
	void (*close)(struct f2fs_dev *dev);
};

struct f2fs_dev {
	const struct f2fs_dev_ops *ops;
	int fd;
	uint64_t size;			/* bytes (of the partition, when one is chosen) */
	uint64_t base;			/* where the chosen partition starts on the disk */
	bool read_only;
	void *priv;			/* backend state */
	char open_error[224];		/* why open failed, where errno says too little */
	char source[256];		/* where the image lives, if not a local file (info) */
	uint8_t *ram;			/* RAM backend */
	bool ram_owned;			/* ram is our copy, freed on close */
	bool is_blkdev;
	unsigned int blkbits;		/* log2 of the file system block size */
	unsigned int readahead;		/* bytes a sequential reader should ask ahead; 0: default */
	struct f2fs_dev_stats st;
	/* fault injection for tests: fail the Nth request (1-based), 0 = off */
	atomic_uint_fast64_t fail_at;
	atomic_uint_fast64_t nr_submitted;
	/*
	 * Ordering for fsync: order_gen counts completed writes that a later
	 * node may depend on (everything but in-place data); flushed_gen is the
	 * order_gen a completed flush covered. Equal means no such write waits
	 * for a flush, so fsync may write its nodes without flushing first.
	 */
	atomic_uint_fast64_t order_gen, flushed_gen;
	/*
	 * Power-cut model (RAM backend): "ram" is what reads see; "durable"
	 * only what flushes made safe. Writes since the last flush are pending;
	 * after write number cut_at nothing more reaches either.
	 */
	uint8_t *durable;
	struct pending_write *pending;
	unsigned int nr_pending, pending_cap;
	uint64_t nr_writes, cut_at;
	bool cut, tear;
	pthread_mutex_t pc_lock;
	struct f2fs_dev_zones *zones;		/* sequential zones of the volume (zoned.c) */
	uf2fs_discard_hook_t discard_hook;	/* tests: see uf2fs_test_discard_hook */
	void *discard_hook_arg;
};

struct pending_write {
	uint64_t off;
	size_t len;
	uint8_t *data;
};

/* The image as it would be after power loss now (tear: keep unflushed writes, last torn). */
int f2fs_dev_persisted(struct f2fs_dev *dev, uint8_t **out, size_t *len);

int f2fs_dev_open(struct f2fs_dev *dev, const struct uf2fs_options *opts);
void f2fs_dev_close(struct f2fs_dev *dev);
/* Read nr blocks at blkaddr into buf; one device request. */
int f2fs_dev_read_blocks(struct f2fs_dev *dev, void *buf, block_t blkaddr, unsigned int nr);
/* Vectored read of physically contiguous blocks: one device request. */
int f2fs_dev_readv_blocks(struct f2fs_dev *dev, const struct iovec *iov, int cnt, block_t blk);
int f2fs_dev_writev_blocks(struct f2fs_dev *dev, const struct iovec *iov, int cnt, block_t blk);
/* The same for data overwritten in place: no node needs it to be durable first. */
int f2fs_dev_writev_inplace(struct f2fs_dev *dev, const struct iovec *iov, int cnt, block_t blk);
int f2fs_dev_flush(struct f2fs_dev *dev);
/*
 * A write that is durable when this returns: with FUA where the device has
 * it (one command instead of a write and a flush of everything), else as a
 * write and a flush. Earlier writes it depends on need their own flush.
 */
int f2fs_dev_write_durable(struct f2fs_dev *dev, const struct iovec *iov, int cnt, block_t blk);
/* Whether a write that a node may depend on has not been flushed yet. */
bool f2fs_dev_unflushed(struct f2fs_dev *dev);
/* Tell the device a block range is unused: punched hole or BLKDISCARD. */
int f2fs_dev_discard(struct f2fs_dev *dev, block_t blk, uint64_t nr);

/* A disk with a partition table was opened whole: a message saying how to pick one. */
int f2fs_dev_partition_hint(struct f2fs_dev *dev, char *buf, size_t len);
/* A VM disk inside the device (a qcow2 in an NBD export): a message naming format=. */
int f2fs_dev_vm_hint(struct f2fs_dev *dev, char *buf, size_t len);
/* The partition table of the whole disk dev has open (not after a partition= choice). */
int f2fs_dev_partitions(struct f2fs_dev *dev, struct uf2fs_partitions *out);
/*
 * Multi-device volumes (multi.c): begin turns the open device into the first
 * member of a composite holding the volume's bytes [0, first_end); each add
 * opens the next member (path) for the following bytes. The volume's
 * struct f2fs_dev stays the one the file system uses.
 */
#define F2FS_DEV_MAX_MEMBERS 8
int f2fs_dev_multi_begin(struct f2fs_dev *dev, uint64_t first_end);
int f2fs_dev_multi_add(struct f2fs_dev *dev, const char *path, uint64_t bytes,
		       const struct uf2fs_options *opts, struct f2fs_dev **member);
/* Member i of a multi-device volume, NULL past the last or on a single device. */
struct f2fs_dev *f2fs_dev_multi_member(struct f2fs_dev *dev, unsigned int i);

/*
 * Zoned devices (zoned.c). The kernel's zone ioctls on a block device:
 * its zone size (0: not zoned), and a report of up to nr zones from byte
 * off (the number reported, or -errno).
 */
struct f2fs_dev_zone_info {
	uint64_t start, len, cap, wp;	/* bytes; wp relative to start */
	bool seq;			/* sequential write required */
};
int f2fs_dev_zone_bytes(struct f2fs_dev *dev, uint64_t *bytes);
int f2fs_dev_report_zones(struct f2fs_dev *dev, uint64_t off, struct f2fs_dev_zone_info *out,
			  unsigned int nr);
/*
 * The volume's sequential zones: [start, start + len) of the volume's bytes
 * is whole zones of zone_bytes (capacity cap_bytes) on member, at
 * member_off there. Writes into them must then start at the zone's write
 * pointer (else EIO, as the device would); a discard of a whole zone or
 * f2fs_dev_zone_reset sets it back to the start.
 */
int f2fs_dev_zones_add(struct f2fs_dev *dev, uint64_t start, uint64_t len, uint64_t zone_bytes,
		       uint64_t cap_bytes, struct f2fs_dev *member, uint64_t member_off);
void f2fs_dev_zones_free(struct f2fs_dev *dev);
bool f2fs_dev_zone_seq(struct f2fs_dev *dev, block_t blk);
/* The write pointer of the zone holding blk, in blocks from its start; setting it. */
uint64_t f2fs_dev_zone_wp(struct f2fs_dev *dev, block_t blk);
void f2fs_dev_zone_set_wp(struct f2fs_dev *dev, block_t blk, uint64_t nr_written);
/* Reset the whole zones of nr blocks from blk. */
int f2fs_dev_zone_reset(struct f2fs_dev *dev, block_t blk, uint64_t nr);

#endif
