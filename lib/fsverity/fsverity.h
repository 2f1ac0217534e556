/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsverity.h — the fs-verity module (the kernel's fs/verity), as a file
 * system sees it: the Merkle tree and file digest as fs/verity computes
 * them, the per-inode verity info, verified reads, enabling and measuring.
 * It knows nothing of f2fs: where the tree and descriptor live is the file
 * system's business, behind struct fsverity_operations (lib/verity.c for
 * f2fs: the tree from the first 64 KiB boundary at or past EOF, the
 * descriptor right after it, its location in the "v" xattr). Private to
 * lib/ and the unit tests.
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
#define VERITY_MAX_LOG_BS	14	/* the largest block size a file system here has */

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

static inline void verity_put_le16(uint8_t *d, uint16_t v)
{
	d[0] = (uint8_t)v;
	d[1] = (uint8_t)(v >> 8);
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

/// The module's interface to a file system ///

struct fsverity_info;
struct iovec;

/* The part of a file system's inode fs-verity owns (the kernel's i_verity_info). */
struct fsverity_inode {
	struct fsverity_info *vi;	/* loaded on first use, then kept */
};

/*
 * What fs-verity asks of the file system (the kernel's struct
 * fsverity_operations, and the i_ino/i_size it reads). fs is the pointer
 * in struct fsverity_sb. Enabling runs under the file system's exclusive
 * lock of the inode.
 */
struct fsverity_operations {
	uint32_t (*ino)(const struct fsverity_inode *inode);
	uint64_t (*size)(const struct fsverity_inode *inode);
	/* The descriptor and signature: their size for buf NULL, else size bytes. */
	int (*get_verity_descriptor)(void *fs, struct fsverity_inode *inode, void *buf,
				     size_t size);
	/* len bytes of the tree from byte pos (a Merkle block, or a read_metadata range). */
	int (*read_merkle_tree)(void *fs, struct fsverity_inode *inode, void *buf, size_t len,
				uint64_t pos);
	/* Exactly len bytes of file data at off (building the tree). */
	ssize_t (*read_data)(void *fs, struct fsverity_inode *inode, void *buf, size_t len,
			     uint64_t off);
	/* Make room for a tree of tree_size bytes and a descriptor of desc_size. */
	int (*begin_enable_verity)(void *fs, struct fsverity_inode *inode, unsigned int log_bs,
				   uint64_t tree_size, size_t desc_size);
	/* One Merkle block of 1 << log_bs bytes at byte pos of the tree. */
	int (*write_merkle_tree_block)(void *fs, struct fsverity_inode *inode, const void *buf,
				       uint64_t pos, unsigned int log_bs);
	/* Store the descriptor and mark the inode verity; desc NULL: undo a failed enable. */
	int (*end_enable_verity)(void *fs, struct fsverity_inode *inode, const void *desc,
				 size_t desc_size, uint64_t tree_size);
	/* Record a corruption and return -err. */
	int (*error)(void *fs, int err, const char *msg);
};

/* Per mount: the kernel's sb->s_vop. */
struct fsverity_sb {
	const struct fsverity_operations *ops;
	void *fs;
	/* STACK_OF(X509) *: the ".fs-verity" keyring; NULL: signatures unchecked */
	void *certs;
	bool require_signatures;	/* unsigned files refused (EPERM) */
	/*
	 * log2 of the largest Merkle block: Linux allows up to min(PAGE_SIZE,
	 * fs block), and a host mounts f2fs only with blocks of its page size,
	 * so the fs block. 0 means 12.
	 */
	unsigned int max_log_bs;
};

/*
 * Builtin signatures (signature.c): add the certificates of a PEM file to
 * the keyring (-EINVAL for a file with none); free them at unmount.
 */
int fsverity_add_certs(struct fsverity_sb *vsb, const char *pem_path);
void fsverity_free_certs(struct fsverity_sb *vsb);

static inline unsigned int fsverity_max_log_bs(const struct fsverity_sb *vsb)
{
	return vsb->max_log_bs ? vsb->max_log_bs : 12;
}

/* The info of a verity inode, loaded once (as fsverity_file_open; a bad descriptor fails). */
int fsverity_get_info(const struct fsverity_sb *vsb, struct fsverity_inode *inode,
		      struct fsverity_info **out);
void fsverity_free_info(struct fsverity_inode *inode);
/* The Merkle block size of a loaded info. */
unsigned int fsverity_block_size(const struct fsverity_info *vi);
/*
 * Check file data against the tree: iov holds the file from byte start (a
 * Merkle block boundary) on, whole blocks but the last at EOF. -EIO for a
 * block that fails.
 */
int fsverity_verify_iov(const struct fsverity_sb *vsb, struct fsverity_inode *inode,
			struct fsverity_info *vi, uint64_t start, const struct iovec *iov,
			int cnt);
/* FS_IOC_ENABLE_VERITY after the caller's checks (fs/verity/enable.c). */
int fsverity_enable(const struct fsverity_sb *vsb, struct fsverity_inode *inode,
		    const struct uf2fs_verity_arg *arg);
/* FS_IOC_MEASURE_VERITY: the file digest. */
int fsverity_measure(const struct fsverity_sb *vsb, struct fsverity_inode *inode,
		     uint16_t *alg, uint8_t *digest, uint16_t *size);
/* FS_IOC_READ_VERITY_METADATA: bytes copied, 0 past the end. */
ssize_t fsverity_read_metadata(const struct fsverity_sb *vsb, struct fsverity_inode *inode,
			       uint64_t type, uint64_t off, void *buf, size_t len);

#endif /* UF2FS_VERITY_H */
