/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fs-verity (lib/verity.c): the Merkle tree and file digest as fs/verity
 * computes them, and where Linux f2fs keeps them (fs/f2fs/verity.c): the
 * tree from the first 64 KiB boundary at or past EOF, the descriptor right
 * after it, its location in the xattr (F2FS_XATTR_INDEX_VERITY, "v"), and
 * FADVISE_VERITY_BIT in i_advise. Private to lib/ and the unit tests.
 */
#ifndef UF2FS_VERITY_H
#define UF2FS_VERITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "uf2fs/uf2fs.h"

#define VERITY_MAX_DIGEST	64	/* SHA-512 */
#define VERITY_MAX_SALT		32	/* sizeof(fsverity_descriptor.salt) */
#define VERITY_MAX_LEVELS	8	/* FS_VERITY_MAX_LEVELS */
#define VERITY_MAX_SIG		16128	/* FS_VERITY_MAX_SIGNATURE_SIZE */
#define VERITY_DESC_SIZE	256	/* struct fsverity_descriptor without signature */
#define VERITY_MAX_LOG_BS	12	/* PAGE_SHIFT, and not above the 4 KiB f2fs block */
#define VERITY_METADATA_ALIGN	65536	/* f2fs_verity_metadata_pos() */
#define F2FS_VERITY_XATTR_NAME	"v"	/* F2FS_XATTR_NAME_VERITY */
#define F2FS_VERITY_XATTR_VER	1	/* F2FS_VERIFY_VER */

/* fs/f2fs/verity.c's struct fsverity_descriptor_location, little-endian. */
struct f2fs_verity_dloc {
	uint32_t version;
	uint32_t size;
	uint64_t pos;
} __attribute__((packed));

/* The shape of one file's tree: fs/verity's merkle_tree_params. */
struct verity_params {
	unsigned int alg;		/* FS_VERITY_HASH_ALG_* */
	const void *md;			/* const EVP_MD * */
	unsigned int digest_size;
	unsigned int log_bs, bs;	/* Merkle block size */
	unsigned int log_arity;		/* log2(hashes per tree block) */
	uint8_t salt[VERITY_MAX_SALT];
	unsigned int salt_size;
	uint8_t padded_salt[128];	/* salt zero-padded to the hash's block size */
	unsigned int padded_salt_size;
	uint64_t data_size;
	unsigned int num_levels;
	uint64_t level_start[VERITY_MAX_LEVELS];	/* first tree block of each level */
	uint64_t tree_blocks;
};

/*
 * Set up params for a file of data_size bytes. -EINVAL for an unknown
 * algorithm or a block size fs-verity refuses, -EMSGSIZE for a long salt,
 * -EFBIG for a tree of more than VERITY_MAX_LEVELS levels.
 */
int verity_params_init(struct verity_params *p, unsigned int alg, unsigned int log_bs,
		       const void *salt, unsigned int salt_size, uint64_t data_size);
/* Hash one Merkle block (bs bytes) with the salt: out gets digest_size bytes. */
int verity_hash_block(const struct verity_params *p, const void *block, uint8_t *out);
/* Hash arbitrary bytes with the algorithm (no salt): the file digest of a descriptor. */
int verity_hash(const struct verity_params *p, const void *buf, size_t len, uint8_t *out);

/*
 * Build the tree over the data read(arg, buf, len, off) returns (exactly
 * len bytes, len <= bs, or -errno), handing each finished tree block to
 * emit(arg, block, index) where index counts Merkle blocks from the tree's
 * start (emit may be NULL). root gets the root hash (zeros for no data).
 */
typedef ssize_t (*verity_read_t)(void *arg, void *buf, size_t len, uint64_t off);
typedef int (*verity_emit_t)(void *arg, const void *block, uint64_t index);
int verity_build_tree(const struct verity_params *p, verity_read_t read, verity_emit_t emit,
		      void *arg, uint8_t *root);
/* The 256-byte descriptor (sig_size 0) and the file digest, its hash. */
void verity_make_descriptor(const struct verity_params *p, const uint8_t *root, uint8_t *desc);
/* Check a descriptor as fs/verity/open.c does; fill params and root. */
int verity_parse_descriptor(struct verity_params *p, const void *desc, size_t desc_size,
			    uint64_t i_size, uint8_t *root);

/* Offsets in struct fsverity_descriptor, and the little-endian fields' access. */
#define DESC_SIG_SIZE	4
#define DESC_DATA_SIZE	8
#define DESC_ROOT	16
#define DESC_SALT	80
#define DESC_RESERVED	112

static inline int verity_ilog2_u32(uint32_t v)
{
	return 31 - __builtin_clz(v);
}

static inline void verity_put_le32(uint8_t *d, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		d[i] = (uint8_t)(v >> (8 * i));
}

static inline void verity_put_le64(uint8_t *d, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		d[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t verity_get_le32(const uint8_t *d)
{
	return d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
}

static inline uint64_t verity_get_le64(const uint8_t *d)
{
	return verity_get_le32(d) | (uint64_t)verity_get_le32(d + 4) << 32;
}

/* Byte offset of the metadata: the first 64 KiB boundary at or past i_size. */
static inline uint64_t verity_metadata_pos(uint64_t i_size)
{
	return (i_size + VERITY_METADATA_ALIGN - 1) & ~(uint64_t)(VERITY_METADATA_ALIGN - 1);
}

struct f2fs_sb_info;
struct f2fs_inode_info;
/* The inode's verity state, loaded once; caller holds i_rwsem (any mode). */
void f2fs_verity_free(struct f2fs_inode_info *fi);
/* As fsverity_file_open: load the descriptor, so a bad one fails the open. */
int f2fs_verity_open(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);
/* Verified read of a verity file: -EIO for any block that fails its tree. */
ssize_t f2fs_verity_read(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, void *buf,
			 size_t len, uint64_t off);
/* The same for the zero-copy path: emit sees only checked bytes. */
ssize_t f2fs_verity_read_iov(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, size_t len,
			     uint64_t off, uf2fs_emit_t emit, void *arg);

#endif /* UF2FS_VERITY_H */
