/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The f2fs on-disk format: packed little-endian structures, constants and the
 * two format-level algorithms (CRC32 and the dentry hash) that every reader and
 * writer must agree on. Facts only, no runtime state. The facts come from the
 * kernel's include/linux/f2fs_fs.h, f2fs-tools' include/f2fs_fs.h and
 * Documentation/filesystems/f2fs.rst; every size and key offset is pinned by a
 * _Static_assert so that a wrong field fails the build, not an image.
 *
 * Every block-sized count derives from F2FS_BLKSIZE_BITS (12 for 4 KiB blocks,
 * the default; 14 for 16 KiB blocks, as Linux f2fs uses where the page size is
 * 16 KiB). The library core is compiled once per block size (see
 * docs/decisions.md, "16 KiB blocks"), so these stay compile-time constants.
 * The _Static_asserts pin the 4 KiB values and the 16 KiB ones that f2fs-tools'
 * development branch derives from its runtime block size.
 */
#ifndef UF2FS_FORMAT_H
#define UF2FS_FORMAT_H

#include <linux/types.h>	/* __le16/__le32/__le64, shared with the kernel uapi headers */
#include <stddef.h>
#include <stdint.h>

#define F2FS_PACKED __attribute__((packed))

/* /// Geometry /// */

#define F2FS_SUPER_MAGIC	0xF2F52010u
#define F2FS_SUPER_OFFSET	1024
#ifndef F2FS_BLKSIZE_BITS
#define F2FS_BLKSIZE_BITS	12
#endif
#if F2FS_BLKSIZE_BITS != 12 && F2FS_BLKSIZE_BITS != 14
#error "F2FS_BLKSIZE_BITS must be 12 (4 KiB) or 14 (16 KiB)"
#endif
#define F2FS_BLKSIZE		(1u << F2FS_BLKSIZE_BITS)
/* Helper for the pins below: the 4 KiB value, else the 16 KiB one. */
#define F2FS_BS_PICK(v4k, v16k)	(F2FS_BLKSIZE_BITS == 12 ? (v4k) : (v16k))
#define F2FS_MAX_EXTENSION	64
#define F2FS_EXTENSION_LEN	8
#define F2FS_MAX_QUOTAS		3
#define F2FS_VERSION_LEN	256
#define F2FS_MAX_VOLUME_NAME	512
#define F2FS_MAX_DEVICES	8
#define F2FS_MAX_PATH_LEN	64
#define F2FS_MAX_STOP_REASON	32
#define F2FS_MAX_ERRORS		16

#define NULL_ADDR		0x0u
#define NEW_ADDR		0xFFFFFFFFu
#define COMPRESS_ADDR		0xFFFFFFFEu

/* Feature bits of f2fs_super_block.feature. */
#define F2FS_FEATURE_ENCRYPT			0x0001
#define F2FS_FEATURE_BLKZONED			0x0002
#define F2FS_FEATURE_ATOMIC_WRITE		0x0004
#define F2FS_FEATURE_EXTRA_ATTR			0x0008
#define F2FS_FEATURE_PRJQUOTA			0x0010
#define F2FS_FEATURE_INODE_CHKSUM		0x0020
#define F2FS_FEATURE_FLEXIBLE_INLINE_XATTR	0x0040
#define F2FS_FEATURE_QUOTA_INO			0x0080
#define F2FS_FEATURE_INODE_CRTIME		0x0100
#define F2FS_FEATURE_LOST_FOUND			0x0200
#define F2FS_FEATURE_VERITY			0x0400
#define F2FS_FEATURE_SB_CHKSUM			0x0800
#define F2FS_FEATURE_CASEFOLD			0x1000
#define F2FS_FEATURE_COMPRESSION		0x2000
#define F2FS_FEATURE_RO				0x4000
#define F2FS_FEATURE_DEVICE_ALIAS		0x8000
#define F2FS_FEATURE_PACKED_SSA			0x10000

/* /// Super block /// */

struct f2fs_device {
	uint8_t path[F2FS_MAX_PATH_LEN];
	__le32 total_segments;
} F2FS_PACKED;

struct f2fs_super_block {
	__le32 magic;
	__le16 major_ver;
	__le16 minor_ver;
	__le32 log_sectorsize;
	__le32 log_sectors_per_block;
	__le32 log_blocksize;
	__le32 log_blocks_per_seg;
	__le32 segs_per_sec;
	__le32 secs_per_zone;
	__le32 checksum_offset;
	__le64 block_count;
	__le32 section_count;
	__le32 segment_count;
	__le32 segment_count_ckpt;
	__le32 segment_count_sit;
	__le32 segment_count_nat;
	__le32 segment_count_ssa;
	__le32 segment_count_main;
	__le32 segment0_blkaddr;
	__le32 cp_blkaddr;
	__le32 sit_blkaddr;
	__le32 nat_blkaddr;
	__le32 ssa_blkaddr;
	__le32 main_blkaddr;
	__le32 root_ino;
	__le32 node_ino;
	__le32 meta_ino;
	uint8_t uuid[16];
	__le16 volume_name[F2FS_MAX_VOLUME_NAME];
	__le32 extension_count;
	uint8_t extension_list[F2FS_MAX_EXTENSION][F2FS_EXTENSION_LEN];
	__le32 cp_payload;
	uint8_t version[F2FS_VERSION_LEN];
	uint8_t init_version[F2FS_VERSION_LEN];
	__le32 feature;
	uint8_t encryption_level;
	uint8_t encrypt_pw_salt[16];
	struct f2fs_device devs[F2FS_MAX_DEVICES];
	__le32 qf_ino[F2FS_MAX_QUOTAS];
	uint8_t hot_ext_count;
	__le16 s_encoding;
	__le16 s_encoding_flags;
	uint8_t s_stop_reason[F2FS_MAX_STOP_REASON];
	uint8_t s_errors[F2FS_MAX_ERRORS];
	uint8_t reserved[258];
	__le32 crc;
} F2FS_PACKED;

/* s_encoding and s_encoding_flags (casefold feature) */
#define F2FS_ENC_UTF8_12_1		1
#define F2FS_ENC_STRICT_MODE_FL		(1 << 0)	/* refuse invalid UTF-8 names */
#define F2FS_ENC_NO_COMPAT_FALLBACK_FL	(1 << 1)	/* "hashonly": no linear lookup */

_Static_assert(sizeof(struct f2fs_device) == 68, "f2fs_device");
_Static_assert(sizeof(struct f2fs_super_block) == 3072, "super block size");
_Static_assert(offsetof(struct f2fs_super_block, block_count) == 36, "sb block_count");
_Static_assert(offsetof(struct f2fs_super_block, main_blkaddr) == 92, "sb main_blkaddr");
_Static_assert(offsetof(struct f2fs_super_block, uuid) == 108, "sb uuid");
_Static_assert(offsetof(struct f2fs_super_block, cp_payload) == 1664, "sb cp_payload");
_Static_assert(offsetof(struct f2fs_super_block, feature) == 2180, "sb feature");
_Static_assert(offsetof(struct f2fs_super_block, devs) == 2201, "sb devs");
_Static_assert(offsetof(struct f2fs_super_block, s_encoding) == 2758, "sb s_encoding");
_Static_assert(offsetof(struct f2fs_super_block, crc) == 3068, "sb crc");

/* /// Checkpoint /// */

#define CP_RESIZEFS_FLAG		0x00004000
#define CP_DISABLED_QUICK_FLAG		0x00002000
#define CP_DISABLED_FLAG		0x00001000
#define CP_QUOTA_NEED_FSCK_FLAG		0x00000800
#define CP_LARGE_NAT_BITMAP_FLAG	0x00000400
#define CP_NOCRC_RECOVERY_FLAG		0x00000200
#define CP_TRIMMED_FLAG			0x00000100
#define CP_NAT_BITS_FLAG		0x00000080
#define CP_CRC_RECOVERY_FLAG		0x00000040
#define CP_FASTBOOT_FLAG		0x00000020
#define CP_FSCK_FLAG			0x00000010
#define CP_ERROR_FLAG			0x00000008
#define CP_COMPACT_SUM_FLAG		0x00000004
#define CP_ORPHAN_PRESENT_FLAG		0x00000002
#define CP_UMOUNT_FLAG			0x00000001

#define F2FS_CP_PACKS			2
#define MAX_ACTIVE_LOGS			16
#define MAX_ACTIVE_NODE_LOGS		8
#define MAX_ACTIVE_DATA_LOGS		8

struct f2fs_checkpoint {
	__le64 checkpoint_ver;
	__le64 user_block_count;
	__le64 valid_block_count;
	__le32 rsvd_segment_count;
	__le32 overprov_segment_count;
	__le32 free_segment_count;
	__le32 cur_node_segno[MAX_ACTIVE_NODE_LOGS];
	__le16 cur_node_blkoff[MAX_ACTIVE_NODE_LOGS];
	__le32 cur_data_segno[MAX_ACTIVE_DATA_LOGS];
	__le16 cur_data_blkoff[MAX_ACTIVE_DATA_LOGS];
	__le32 ckpt_flags;
	__le32 cp_pack_total_block_count;
	__le32 cp_pack_start_sum;
	__le32 valid_node_count;
	__le32 valid_inode_count;
	__le32 next_free_nid;
	__le32 sit_ver_bitmap_bytesize;
	__le32 nat_ver_bitmap_bytesize;
	__le32 checksum_offset;
	__le64 elapsed_time;
	uint8_t alloc_type[MAX_ACTIVE_LOGS];
	uint8_t sit_nat_version_bitmap[];
};

_Static_assert(sizeof(struct f2fs_checkpoint) == 192, "checkpoint header");
_Static_assert(offsetof(struct f2fs_checkpoint, cur_node_segno) == 36, "cp cur_node_segno");
_Static_assert(offsetof(struct f2fs_checkpoint, ckpt_flags) == 132, "cp flags");
_Static_assert(offsetof(struct f2fs_checkpoint, checksum_offset) == 164, "cp checksum_offset");
_Static_assert(offsetof(struct f2fs_checkpoint, alloc_type) == 176, "cp alloc_type");

#define CP_BITMAP_OFFSET	offsetof(struct f2fs_checkpoint, sit_nat_version_bitmap)
#define CP_CHKSUM_OFFSET	(F2FS_BLKSIZE - sizeof(__le32))
#define CP_MIN_CHKSUM_OFFSET	CP_BITMAP_OFFSET

/* Orphan inode blocks follow the checkpoint block (and its payload). */
#define F2FS_ORPHANS_PER_BLOCK	((F2FS_BLKSIZE - 4 * sizeof(__le32)) / sizeof(__le32))

struct f2fs_orphan_block {
	__le32 ino[F2FS_ORPHANS_PER_BLOCK];
	__le32 reserved;
	__le16 blk_addr;
	__le16 blk_count;
	__le32 entry_count;
	__le32 check_sum;
} F2FS_PACKED;

_Static_assert(F2FS_ORPHANS_PER_BLOCK == F2FS_BS_PICK(1020, 4092), "orphans per block");
_Static_assert(sizeof(struct f2fs_orphan_block) == F2FS_BLKSIZE, "orphan block");

/* /// Node blocks /// */

#define F2FS_NAME_LEN			255
#define DEFAULT_INLINE_XATTR_ADDRS	50
#define DEF_NIDS_PER_INODE		5
#define DEF_INLINE_RESERVED_SIZE	1
#define OFFSET_OF_END_OF_I_EXT		360
#define F2FS_NODE_FOOTER_SIZE		24
/* Block pointers of an inode: what is left between i_ext and i_nid[] + footer. */
#define DEF_ADDRS_PER_INODE		((F2FS_BLKSIZE - OFFSET_OF_END_OF_I_EXT - \
					  4 * DEF_NIDS_PER_INODE - F2FS_NODE_FOOTER_SIZE) / 4)
#define DEF_ADDRS_PER_BLOCK		((F2FS_BLKSIZE - F2FS_NODE_FOOTER_SIZE) / 4)
#define NIDS_PER_BLOCK			DEF_ADDRS_PER_BLOCK
#define MIN_INLINE_DENTRY_SIZE		40	/* room for "." and ".." */
/* Largest flexible inline xattr area, in 4-byte words, as the kernel bounds it. */
/* One xattr header and one entry, in words (the kernel's MIN_INLINE_XATTR_SIZE). */
#define MIN_INLINE_XATTR_SIZE		3
#define MAX_INLINE_XATTR_SIZE		(DEF_ADDRS_PER_INODE - 36 / 4 - DEF_INLINE_RESERVED_SIZE - \
					 MIN_INLINE_DENTRY_SIZE / 4)

#define F2FS_INLINE_XATTR	0x01
#define F2FS_INLINE_DATA	0x02
#define F2FS_INLINE_DENTRY	0x04
#define F2FS_DATA_EXIST		0x08
#define F2FS_INLINE_DOTS	0x10
#define F2FS_EXTRA_ATTR		0x20
#define F2FS_PIN_FILE		0x40
#define F2FS_COMPRESS_RELEASED	0x80

/* i_advise bits */
#define FADVISE_COLD_BIT	0x01
#define FADVISE_LOST_PINO_BIT	0x02
#define FADVISE_ENCRYPT_BIT	0x04
#define FADVISE_ENC_NAME_BIT	0x08
#define FADVISE_KEEP_SIZE_BIT	0x10
#define FADVISE_HOT_BIT		0x20
#define FADVISE_VERITY_BIT	0x40
#define FADVISE_TRUNC_BIT	0x80

/* i_flags: the f2fs values coincide with the FS_*_FL of FS_IOC_GETFLAGS. */
#define F2FS_SYNC_FL		0x00000008
#define F2FS_COMPR_FL		0x00000004
#define F2FS_IMMUTABLE_FL	0x00000010
#define F2FS_APPEND_FL		0x00000020
#define F2FS_NODUMP_FL		0x00000040
#define F2FS_NOATIME_FL		0x00000080
#define F2FS_NOCOMP_FL		0x00000400
#define F2FS_INDEX_FL		0x00001000
#define F2FS_DIRSYNC_FL		0x00010000
#define F2FS_PROJINHERIT_FL	0x20000000
#define F2FS_CASEFOLD_FL	0x40000000
#define F2FS_DEVICE_ALIAS_FL	0x80000000

struct f2fs_extent {
	__le32 fofs;
	__le32 blk_addr;
	__le32 len;
} F2FS_PACKED;

struct f2fs_inode {
	__le16 i_mode;
	uint8_t i_advise;
	uint8_t i_inline;
	__le32 i_uid;
	__le32 i_gid;
	__le32 i_links;
	__le64 i_size;
	__le64 i_blocks;
	__le64 i_atime;
	__le64 i_ctime;
	__le64 i_mtime;
	__le32 i_atime_nsec;
	__le32 i_ctime_nsec;
	__le32 i_mtime_nsec;
	__le32 i_generation;
	union {
		__le32 i_current_depth;
		__le16 i_gc_failures;
	};
	__le32 i_xattr_nid;
	__le32 i_flags;
	__le32 i_pino;
	__le32 i_namelen;
	uint8_t i_name[F2FS_NAME_LEN];
	uint8_t i_dir_level;
	struct f2fs_extent i_ext;
	union {
		struct {
			__le16 i_extra_isize;
			__le16 i_inline_xattr_size;
			__le32 i_projid;
			__le32 i_inode_checksum;
			__le64 i_crtime;
			__le32 i_crtime_nsec;
			__le64 i_compr_blocks;
			uint8_t i_compress_algorithm;
			uint8_t i_log_cluster_size;
			__le16 i_compress_flag;
			__le32 i_extra_end[0];
		} F2FS_PACKED;
		__le32 i_addr[DEF_ADDRS_PER_INODE];
	};
	__le32 i_nid[DEF_NIDS_PER_INODE];
} F2FS_PACKED;

struct node_footer {
	__le32 nid;
	__le32 ino;
	__le32 flag;		/* cold, fsync and dentry marks; node offset above them */
	__le64 cp_ver;
	__le32 next_blkaddr;
} F2FS_PACKED;

#define F2FS_TOTAL_EXTRA_ATTR_SIZE \
	(offsetof(struct f2fs_inode, i_extra_end) - offsetof(struct f2fs_inode, i_extra_isize))

_Static_assert(sizeof(struct f2fs_extent) == 12, "extent");
_Static_assert(sizeof(struct node_footer) == F2FS_NODE_FOOTER_SIZE, "node footer");
_Static_assert(offsetof(struct f2fs_inode, i_generation) == 68, "i_generation");
_Static_assert(offsetof(struct f2fs_inode, i_xattr_nid) == 76, "i_xattr_nid");
_Static_assert(offsetof(struct f2fs_inode, i_name) == 92, "i_name");
_Static_assert(offsetof(struct f2fs_inode, i_dir_level) == 347, "i_dir_level");
_Static_assert(offsetof(struct f2fs_inode, i_ext) == 348, "i_ext");
_Static_assert(offsetof(struct f2fs_inode, i_addr) == OFFSET_OF_END_OF_I_EXT, "i_addr");
_Static_assert(offsetof(struct f2fs_inode, i_inode_checksum) == 368, "i_inode_checksum");
_Static_assert(offsetof(struct f2fs_inode, i_crtime) == 372, "i_crtime");
_Static_assert(offsetof(struct f2fs_inode, i_compress_algorithm) == 392, "i_compress_alg");
_Static_assert(F2FS_TOTAL_EXTRA_ATTR_SIZE == 36, "extra attr size");
_Static_assert(offsetof(struct f2fs_inode, i_nid) == F2FS_BLKSIZE - 44, "i_nid");
_Static_assert(DEF_ADDRS_PER_INODE == F2FS_BS_PICK(923, 3995), "addrs per inode");
_Static_assert(DEF_ADDRS_PER_BLOCK == F2FS_BS_PICK(1018, 4090), "addrs per block");
_Static_assert(sizeof(struct f2fs_inode) == F2FS_BLKSIZE - sizeof(struct node_footer), "inode");

struct direct_node {
	__le32 addr[DEF_ADDRS_PER_BLOCK];
} F2FS_PACKED;

struct indirect_node {
	__le32 nid[NIDS_PER_BLOCK];
} F2FS_PACKED;

struct f2fs_node {
	union {
		struct f2fs_inode i;
		struct direct_node dn;
		struct indirect_node in;
	};
	struct node_footer footer;
} F2FS_PACKED;

_Static_assert(sizeof(struct f2fs_node) == F2FS_BLKSIZE, "node block");
_Static_assert(offsetof(struct f2fs_node, footer) == F2FS_BLKSIZE - 24, "node footer offset");

/* Bits of node_footer.flag below the node offset. */
enum {
	COLD_BIT_SHIFT = 0,
	FSYNC_BIT_SHIFT,
	DENT_BIT_SHIFT,
	OFFSET_BIT_SHIFT
};
#define XATTR_NODE_OFFSET	((0xFFFFFFFFu << OFFSET_BIT_SHIFT) >> OFFSET_BIT_SHIFT)

/* Node offsets of the five node pointers of an inode. */
#define NODE_DIR1_BLOCK		(DEF_ADDRS_PER_INODE + 1)
#define NODE_DIR2_BLOCK		(DEF_ADDRS_PER_INODE + 2)
#define NODE_IND1_BLOCK		(DEF_ADDRS_PER_INODE + 3)
#define NODE_IND2_BLOCK		(DEF_ADDRS_PER_INODE + 4)
#define NODE_DIND_BLOCK		(DEF_ADDRS_PER_INODE + 5)

/* /// NAT /// */

#define NAT_ENTRY_PER_BLOCK	(F2FS_BLKSIZE / sizeof(struct f2fs_nat_entry))
#define F2FS_RESERVED_NODE_NUM	3

struct f2fs_nat_entry {
	uint8_t version;
	__le32 ino;
	__le32 block_addr;
} F2FS_PACKED;

struct f2fs_nat_block {
	struct f2fs_nat_entry entries[F2FS_BLKSIZE / 9];
} F2FS_PACKED;

_Static_assert(sizeof(struct f2fs_nat_entry) == 9, "nat entry");
_Static_assert(NAT_ENTRY_PER_BLOCK == F2FS_BS_PICK(455, 1820), "nat entries per block");

/* /// SIT /// */

#define SIT_VBLOCK_MAP_SIZE	64
#define SIT_ENTRY_PER_BLOCK	(F2FS_BLKSIZE / sizeof(struct f2fs_sit_entry))
#define SIT_VBLOCKS_SHIFT	10
#define SIT_VBLOCKS_MASK	((1u << SIT_VBLOCKS_SHIFT) - 1)

struct f2fs_sit_entry {
	__le16 vblocks;		/* valid blocks below bit 10, segment type above */
	uint8_t valid_map[SIT_VBLOCK_MAP_SIZE];
	__le64 mtime;
} F2FS_PACKED;

struct f2fs_sit_block {
	struct f2fs_sit_entry entries[F2FS_BLKSIZE / 74];
} F2FS_PACKED;

_Static_assert(sizeof(struct f2fs_sit_entry) == 74, "sit entry");
_Static_assert(SIT_ENTRY_PER_BLOCK == F2FS_BS_PICK(55, 221), "sit entries per block");

/* /// SSA: summaries and journals /// */

#define F2FS_SUM_BLKSIZE	F2FS_BLKSIZE
#define ENTRIES_IN_SUM		(F2FS_SUM_BLKSIZE / 8)
#define SUMMARY_SIZE		7
#define SUM_FOOTER_SIZE		5
#define SUM_ENTRIES_SIZE	(SUMMARY_SIZE * ENTRIES_IN_SUM)
#define SUM_JOURNAL_SIZE	(F2FS_SUM_BLKSIZE - SUM_FOOTER_SIZE - SUM_ENTRIES_SIZE)
#define NAT_JOURNAL_ENTRIES	((SUM_JOURNAL_SIZE - 2) / sizeof(struct nat_journal_entry))
#define NAT_JOURNAL_RESERVED	((SUM_JOURNAL_SIZE - 2) % sizeof(struct nat_journal_entry))
#define SIT_JOURNAL_ENTRIES	((SUM_JOURNAL_SIZE - 2) / sizeof(struct sit_journal_entry))
#define SIT_JOURNAL_RESERVED	((SUM_JOURNAL_SIZE - 2) % sizeof(struct sit_journal_entry))
#define EXTRA_INFO_RESERVED	(SUM_JOURNAL_SIZE - 2 - 8)

#define SUM_TYPE_NODE		1
#define SUM_TYPE_DATA		0

struct f2fs_summary {
	__le32 nid;
	union {
		uint8_t reserved[3];
		struct {
			uint8_t version;
			__le16 ofs_in_node;
		} F2FS_PACKED;
	};
} F2FS_PACKED;

struct summary_footer {
	uint8_t entry_type;
	__le32 check_sum;
} F2FS_PACKED;

struct nat_journal_entry {
	__le32 nid;
	struct f2fs_nat_entry ne;
} F2FS_PACKED;

struct sit_journal_entry {
	__le32 segno;
	struct f2fs_sit_entry se;
} F2FS_PACKED;

struct f2fs_journal {
	union {
		__le16 n_nats;
		__le16 n_sits;
	};
	union {
		struct {
			struct nat_journal_entry entries[NAT_JOURNAL_ENTRIES];
			uint8_t reserved[NAT_JOURNAL_RESERVED];
		} F2FS_PACKED nat_j;
		struct {
			struct sit_journal_entry entries[SIT_JOURNAL_ENTRIES];
			uint8_t reserved[SIT_JOURNAL_RESERVED];
		} F2FS_PACKED sit_j;
		struct {
			__le64 kbytes_written;
			uint8_t reserved[EXTRA_INFO_RESERVED];
		} F2FS_PACKED info;
	};
} F2FS_PACKED;

struct f2fs_summary_block {
	struct f2fs_summary entries[ENTRIES_IN_SUM];
	struct f2fs_journal journal;
	struct summary_footer footer;
} F2FS_PACKED;

_Static_assert(sizeof(struct f2fs_summary) == SUMMARY_SIZE, "summary entry");
_Static_assert(sizeof(struct summary_footer) == SUM_FOOTER_SIZE, "summary footer");
_Static_assert(sizeof(struct nat_journal_entry) == 13, "nat journal entry");
_Static_assert(sizeof(struct sit_journal_entry) == 78, "sit journal entry");
_Static_assert(SUM_JOURNAL_SIZE == F2FS_BS_PICK(507, 2043), "journal size");
_Static_assert(NAT_JOURNAL_ENTRIES == F2FS_BS_PICK(38, 157), "nat journal entries");
_Static_assert(SIT_JOURNAL_ENTRIES == F2FS_BS_PICK(6, 26), "sit journal entries");
_Static_assert(sizeof(struct f2fs_journal) == SUM_JOURNAL_SIZE, "journal");
_Static_assert(sizeof(struct f2fs_summary_block) == F2FS_BLKSIZE, "summary block");

/* Current segment types, as in the kernel. */
enum {
	CURSEG_HOT_DATA = 0,
	CURSEG_WARM_DATA,
	CURSEG_COLD_DATA,
	CURSEG_HOT_NODE,
	CURSEG_WARM_NODE,
	CURSEG_COLD_NODE,
	NR_CURSEG_TYPE,
};
#define NR_CURSEG_DATA_TYPE	3
#define NR_CURSEG_NODE_TYPE	3

/* /// Directories /// */

#define F2FS_SLOT_LEN		8
#define F2FS_SLOT_LEN_BITS	3
#define GET_DENTRY_SLOTS(x)	(((x) + F2FS_SLOT_LEN - 1) >> F2FS_SLOT_LEN_BITS)
#define SIZE_OF_DIR_ENTRY	11
#define NR_DENTRY_IN_BLOCK	((8 * F2FS_BLKSIZE) / ((SIZE_OF_DIR_ENTRY + F2FS_SLOT_LEN) * 8 + 1))
#define SIZE_OF_DENTRY_BITMAP	((NR_DENTRY_IN_BLOCK + 7) / 8)
#define SIZE_OF_RESERVED	(F2FS_BLKSIZE - ((SIZE_OF_DIR_ENTRY + F2FS_SLOT_LEN) * \
				 NR_DENTRY_IN_BLOCK + SIZE_OF_DENTRY_BITMAP))
#define MAX_DIR_HASH_DEPTH	63
#define MAX_DIR_BUCKETS		(1u << ((MAX_DIR_HASH_DEPTH / 2) - 1))
#define F2FS_HASH_COL_BIT	(1ull << 63)

struct f2fs_dir_entry {
	__le32 hash_code;
	__le32 ino;
	__le16 name_len;
	uint8_t file_type;
} F2FS_PACKED;

struct f2fs_dentry_block {
	uint8_t dentry_bitmap[SIZE_OF_DENTRY_BITMAP];
	uint8_t reserved[SIZE_OF_RESERVED];
	struct f2fs_dir_entry dentry[NR_DENTRY_IN_BLOCK];
	uint8_t filename[NR_DENTRY_IN_BLOCK][F2FS_SLOT_LEN];
} F2FS_PACKED;

_Static_assert(sizeof(struct f2fs_dir_entry) == SIZE_OF_DIR_ENTRY, "dir entry");
_Static_assert(NR_DENTRY_IN_BLOCK == F2FS_BS_PICK(214, 856), "dentries per block");
_Static_assert(SIZE_OF_DENTRY_BITMAP == F2FS_BS_PICK(27, 107), "dentry bitmap");
_Static_assert(SIZE_OF_RESERVED == F2FS_BS_PICK(3, 13), "dentry reserved");
_Static_assert(sizeof(struct f2fs_dentry_block) == F2FS_BLKSIZE, "dentry block");

enum f2fs_file_type {
	F2FS_FT_UNKNOWN,
	F2FS_FT_REG_FILE,
	F2FS_FT_DIR,
	F2FS_FT_CHRDEV,
	F2FS_FT_BLKDEV,
	F2FS_FT_FIFO,
	F2FS_FT_SOCK,
	F2FS_FT_SYMLINK,
	F2FS_FT_MAX,
};

/*
 * Inline dentries live in the inline data area of the inode: a bitmap, a
 * reserved tail, the dentries and then the name slots, each sized from the
 * number of entries that fit in max_inline bytes.
 */
static inline unsigned int f2fs_nr_inline_dentry(unsigned int max_inline)
{
	return max_inline * 8 / ((SIZE_OF_DIR_ENTRY + F2FS_SLOT_LEN) * 8 + 1);
}

static inline unsigned int f2fs_inline_dentry_bitmap_size(unsigned int max_inline)
{
	return (f2fs_nr_inline_dentry(max_inline) + 7) / 8;
}

/* /// Xattrs /// */

#define F2FS_XATTR_MAGIC			0xF2F52011u
#define F2FS_XATTR_REFCOUNT_MAX			1024
#define XATTR_ROUND				3
#define XATTR_ALIGN(size)			(((size) + XATTR_ROUND) & ~XATTR_ROUND)
#define F2FS_XATTR_INDEX_USER			1
#define F2FS_XATTR_INDEX_POSIX_ACL_ACCESS	2
#define F2FS_XATTR_INDEX_POSIX_ACL_DEFAULT	3
#define F2FS_XATTR_INDEX_TRUSTED		4
#define F2FS_XATTR_INDEX_LUSTRE			5
#define F2FS_XATTR_INDEX_SECURITY		6
#define F2FS_XATTR_INDEX_ADVISE			7
#define F2FS_XATTR_INDEX_ENCRYPTION		9
#define F2FS_XATTR_INDEX_VERITY			11
#define VALID_XATTR_BLOCK_SIZE			(F2FS_BLKSIZE - sizeof(struct node_footer))

struct f2fs_xattr_header {
	__le32 h_magic;
	__le32 h_refcount;
	__le32 h_reserved[4];
} F2FS_PACKED;

struct f2fs_xattr_entry {
	uint8_t e_name_index;
	uint8_t e_name_len;
	__le16 e_value_size;
	char e_name[];
} F2FS_PACKED;

_Static_assert(sizeof(struct f2fs_xattr_header) == 24, "xattr header");
_Static_assert(sizeof(struct f2fs_xattr_entry) == 4, "xattr entry");

/* f2fs stores POSIX ACLs compactly: a version header, then short/long entries. */
#define F2FS_ACL_VERSION	0x0001

struct f2fs_acl_header {
	__le32 a_version;
} F2FS_PACKED;

struct f2fs_acl_entry {
	__le16 e_tag;
	__le16 e_perm;
	__le32 e_id;
} F2FS_PACKED;

struct f2fs_acl_entry_short {
	__le16 e_tag;
	__le16 e_perm;
} F2FS_PACKED;

/* /// Compression /// */

enum f2fs_compress_algorithm {
	COMPRESS_LZO = 0,
	COMPRESS_LZ4,
	COMPRESS_ZSTD,
	COMPRESS_LZORLE,
	COMPRESS_MAX,
};

#define MIN_COMPRESS_LOG_SIZE		2
#define MAX_COMPRESS_LOG_SIZE		8
#define COMPRESS_DATA_RESERVED_SIZE	4
#define COMPRESS_CHKSUM_FLAG		0x1	/* bit 0 of i_compress_flag */

struct compress_data {
	__le32 clen;
	__le32 chksum;
	__le32 reserved[COMPRESS_DATA_RESERVED_SIZE];
	uint8_t cdata[];
} F2FS_PACKED;

#define COMPRESS_HEADER_SIZE	sizeof(struct compress_data)
_Static_assert(COMPRESS_HEADER_SIZE == 24, "compress header");

/* /// Format algorithms /// */

/* CRC32 (little-endian, poly 0xEDB88320) with f2fs's seeding: no final inversion. */
uint32_t f2fs_crc32(uint32_t seed, const void *buf, size_t len);
/* Checksum of a block-sized structure with its CRC field at crc_off skipped. */
uint32_t f2fs_block_crc(const void *blk, size_t crc_off);
/* The TEA-based dentry hash; "." and ".." hash to 0. */
uint32_t f2fs_dentry_hash(const uint8_t *name, size_t len);
/* Inode checksum as the kernel computes it; seed is f2fs_crc32(~0, uuid, 16). */
uint32_t f2fs_inode_chksum(uint32_t seed, const struct f2fs_node *node);
/* Checkpoint checksum honouring checksum_offset. */
uint32_t f2fs_cp_chksum(const struct f2fs_checkpoint *cp);

/* f2fs bitmaps (NAT/SIT version bitmaps, valid maps) number bits MSB first. */
static inline int f2fs_test_bit(unsigned int nr, const uint8_t *addr)
{
	return (addr[nr >> 3] >> (7 - (nr & 7))) & 1;
}

static inline void f2fs_set_bit_msb(unsigned int nr, uint8_t *addr)
{
	addr[nr >> 3] |= 1u << (7 - (nr & 7));
}

static inline void f2fs_clear_bit_msb(unsigned int nr, uint8_t *addr)
{
	addr[nr >> 3] &= ~(1u << (7 - (nr & 7)));
}

static inline void f2fs_change_bit_msb(unsigned int nr, uint8_t *addr)
{
	addr[nr >> 3] ^= 1u << (7 - (nr & 7));
}

/* Dentry bitmaps use the kernel's little-endian bit order. */
static inline int test_bit_le(unsigned int nr, const uint8_t *addr)
{
	return (addr[nr >> 3] >> (nr & 7)) & 1;
}

#endif /* UF2FS_FORMAT_H */
