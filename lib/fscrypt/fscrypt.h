/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fscrypt.h — fscrypt for f2fs, as lib/ sees it: the keyring of master keys a
 * mount holds, the per-inode encryption info (policy, derived key, IV
 * inputs) set up from the context xattr, and the name, symlink and data
 * transforms the directory and data paths call. The format facts come from
 * the kernel's fs/crypto and include/uapi/linux/fscrypt.h. The ciphers
 * themselves are alg.c's.
 */
#ifndef UF2FS_CRYPTO_H
#define UF2FS_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct f2fs_sb_info;
struct f2fs_inode_info;
struct f2fs_filename;

/* include/uapi/linux/fscrypt.h */
#define FSCRYPT_CONTEXT_V1		1
#define FSCRYPT_CONTEXT_V2		2
#define FSCRYPT_POLICY_FLAGS_PAD_MASK	0x03
#define FSCRYPT_POLICY_FLAG_DIRECT_KEY	0x04
#define FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 0x08
#define FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32 0x10
#define FSCRYPT_KEY_DESCRIPTOR_SIZE	8
#define FSCRYPT_KEY_IDENTIFIER_SIZE	16
#define FSCRYPT_FILE_NONCE_SIZE		16
#define FSCRYPT_MIN_KEY_SIZE		16
#define FSCRYPT_CONTEXT_V1_SIZE		28
#define FSCRYPT_CONTEXT_V2_SIZE		40
/* f2fs: xattr index 9 (F2FS_XATTR_INDEX_ENCRYPTION), name "c" */
#define F2FS_XATTR_NAME_ENCRYPTION_CONTEXT "c"

/* The kernel's HKDF contexts (fs/crypto/fscrypt_private.h). */
enum {
	HKDF_CONTEXT_KEY_IDENTIFIER = 1,
	HKDF_CONTEXT_PER_FILE_ENC_KEY = 2,
	HKDF_CONTEXT_DIRECT_KEY = 3,
	HKDF_CONTEXT_IV_INO_LBLK_64_KEY = 4,
	HKDF_CONTEXT_DIRHASH_KEY = 5,
	HKDF_CONTEXT_IV_INO_LBLK_32_KEY = 6,
	HKDF_CONTEXT_INODE_HASH_KEY = 7,
};

/* A policy as stored in the context (nonce apart). */
struct fscrypt_pol {
	uint8_t version;		/* 1 or 2 */
	uint8_t contents_mode, filenames_mode, flags;
	uint8_t log2_data_unit_size;	/* v2; 0: the block size */
	uint8_t key_spec[FSCRYPT_KEY_IDENTIFIER_SIZE];	/* v1: 8-byte descriptor */
};

/* Parse a context xattr value; -EINVAL when it is not a valid one. */
int fscrypt_parse_context(const uint8_t *ctx, size_t len, struct fscrypt_pol *pol,
			  uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE]);
/* Build one; returns its length. */
size_t fscrypt_build_context(const struct fscrypt_pol *pol,
			     const uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE], uint8_t *out);
bool fscrypt_policy_valid(const struct fscrypt_pol *pol);

/* HKDF-SHA512 with fscrypt's "fscrypt\0" + context prefix on the info. */
int fscrypt_hkdf(const uint8_t *master, size_t mlen, uint8_t context, const uint8_t *info,
		 size_t info_len, uint8_t *out, size_t out_len);
int fscrypt_key_identifier(const uint8_t *master, size_t mlen,
			   uint8_t id[FSCRYPT_KEY_IDENTIFIER_SIZE]);

/*
 * The raw contents/filenames key (fscrypt_mode_key_size(mode) bytes) of an
 * inode with this policy and nonce, as Linux derives it; for v2 DIRECT_KEY
 * and IV_INO_LBLK_* it is the per-mode key (the nonce is then unused, uuid
 * is the super block's).
 */
int fscrypt_derive_enc_key(const struct fscrypt_pol *pol, const uint8_t *master, size_t mlen,
			   const uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE], int mode,
			   const uint8_t uuid[16], uint8_t *out);

/*
 * No-key names (fname.c): base64url (no padding) of struct fscrypt_nokey_name
 * { le32 dirhash[2]; u8 bytes[149]; u8 sha256[32]; }, cut after bytes for
 * names of at most 149 bytes. out needs FSCRYPT_NOKEY_NAME_MAX_ENCODED + 1.
 */
#define FSCRYPT_NOKEY_BYTES		149
#define FSCRYPT_NOKEY_NAME_MAX		(8 + FSCRYPT_NOKEY_BYTES + 32)
#define FSCRYPT_NOKEY_NAME_MAX_ENCODED	252
size_t fscrypt_nokey_encode(uint32_t hash, uint32_t minor_hash, const uint8_t *ct, size_t len,
			    char *out);
int fscrypt_base64url_decode(const char *src, size_t len, uint8_t *dst, size_t dst_max);
/* Ciphertext length of a name of len bytes under padding pad (4 << (flags & 3)). */
size_t fscrypt_fname_encrypted_size(size_t len, unsigned int pad, size_t max_len);

/* /// Keyring (one per mount) /// */
int fscrypt_keyring_init(struct f2fs_sb_info *sbi);
void fscrypt_keyring_destroy(struct f2fs_sb_info *sbi);
/* Load keys from a key file (see README): -EPERM for a world-readable file. */
int fscrypt_load_keyfile(struct f2fs_sb_info *sbi, const char *path);
/* v2 when desc is NULL (id gets the identifier), else v1 under that descriptor. */
int fscrypt_add_key(struct f2fs_sb_info *sbi, const uint8_t *key, size_t len,
		    const uint8_t *desc, uint8_t id[FSCRYPT_KEY_IDENTIFIER_SIZE]);
int fscrypt_remove_key(struct f2fs_sb_info *sbi, const uint8_t *spec, size_t spec_len);
bool fscrypt_has_key(struct f2fs_sb_info *sbi, const uint8_t *spec, size_t spec_len);
/* The inode numbers whose info uses the key now (malloc'd). */
int fscrypt_key_users(struct f2fs_sb_info *sbi, const uint8_t *spec, size_t spec_len,
		      uint32_t **inos, size_t *n);

/* /// Per-inode /// */
/*
 * Set up fi's key from its context and the keyring: 0 when the key is
 * there, -ENOKEY when not, -EFSCORRUPTED / -EOPNOTSUPP for a bad context.
 */
int fscrypt_prepare(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);
void fscrypt_put_info(struct f2fs_inode_info *fi);
/* Read fi's policy (and nonce) from its context xattr. */
int fscrypt_get_policy(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
		       struct fscrypt_pol *pol, uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE]);
/* A regular file whose data is encrypted. */
bool fscrypt_file_data(const struct f2fs_inode_info *fi);
/*
 * En/decrypt nblocks file blocks from lblk (in may equal out), on the crypto
 * pool's threads when there are more than fscrypt_chunk_blocks(); at most
 * that many run on the caller alone, so a job of the pool may do them.
 */
int fscrypt_crypt_blocks(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t lblk,
			 const uint8_t *in, uint8_t *out, unsigned int nblocks, bool enc);
/* Blocks of one pool chunk for fi's mode; 0 without the key. */
unsigned int fscrypt_chunk_blocks(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);

/* Names: set up fn for an encrypted directory (casefold.c calls this). */
int fscrypt_setup_filename(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			   const char *name, size_t len, struct f2fs_filename *fn);
bool fscrypt_match_name(const struct f2fs_filename *fn, const uint8_t *de, size_t de_len);
/* The name readdir shows: plaintext with the key, else the no-key name. */
int fscrypt_fname_disk_to_usr(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			      uint32_t hash, const uint8_t *de, size_t de_len, char *out,
			      size_t *out_len);
/* Symlink target from the stored struct fscrypt_symlink_data (raw, rlen bytes). */
ssize_t fscrypt_symlink_to_usr(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			       const uint8_t *raw, size_t rlen, char *buf, size_t size);
/* Encrypt a symlink target for a new inode: out gets le16 len + ciphertext. */
ssize_t fscrypt_encrypt_symlink(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
				const char *target, size_t len, uint8_t *out, size_t max);

/*
 * An encrypted name as stored in an inode's i_name (FADVISE_ENC_NAME_BIT),
 * for roll-forward recovery, which has no key: exact bytes, the hash of the
 * ciphertext, or in a casefolded directory the hash Linux appended after
 * the name (raw holds room bytes).
 */
int fscrypt_setup_disk_name(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			    const uint8_t *raw, size_t len, size_t room,
			    struct f2fs_filename *fn);

/* Give a new inode under dir the parent's policy (fresh nonce) in its context. */
int fscrypt_inherit_context(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			    struct f2fs_inode_info *fi);

/*
 * fscrypt_prepare_link's rule: into an encrypted directory only with its key
 * (-ENOKEY) and only an inode of the same policy (-EXDEV).
 */
int fscrypt_may_link(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
		     struct f2fs_inode_info *fi);

#endif /* UF2FS_CRYPTO_H */
