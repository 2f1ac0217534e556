/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fscrypt.h — the fscrypt module (the kernel's fs/crypto), as a file system
 * sees it; it knows nothing of f2fs, which plugs in through struct
 * fscrypt_operations. It holds the keyring of master keys a mount holds, the per-inode encryption info (policy, derived key, IV
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

struct fscrypt_keyring;
struct fscrypt_info;

/*
 * The part of a file system's inode that fscrypt owns (the kernel's
 * inode->i_crypt_info): the file system embeds it in its inode and gives
 * fscrypt a pointer to it; fscrypt learns the rest through the ops.
 */
struct fscrypt_inode {
	struct fscrypt_info *ci;	/* key and policy once set up, or NULL */
};

/*
 * What fscrypt asks of the file system (the kernel's struct
 * fscrypt_operations plus the few inode fields fs/crypto reads directly).
 * fs is the pointer given to fscrypt_keyring_init.
 */
struct fscrypt_operations {
	uint32_t (*ino)(const struct fscrypt_inode *inode);
	uint32_t (*mode)(const struct fscrypt_inode *inode);
	/* The inode is marked encrypted (the kernel's IS_ENCRYPTED). */
	bool (*is_encrypted)(const struct fscrypt_inode *inode);
	/* A directory whose names are casefolded (IS_CASEFOLDED). */
	bool (*casefolded)(void *fs, const struct fscrypt_inode *dir);
	/* The context xattr into ctx: its length, -ENODATA, -ERANGE (too long) or -errno. */
	ssize_t (*get_context)(void *fs, struct fscrypt_inode *inode, void *ctx, size_t len);
	/*
	 * Store the context and mark the inode encrypted; new_inode is false
	 * for an existing (empty) directory, whose ctime changes with it.
	 */
	int (*set_context)(void *fs, struct fscrypt_inode *inode, const void *ctx, size_t len,
			   bool new_inode);
	/* 1 when the directory has no entries, 0 when it has, or -errno. */
	int (*empty_dir)(void *fs, struct fscrypt_inode *dir);
	/* Record a corruption (or a bad key file) and return -err. */
	int (*error)(void *fs, int err, const char *msg);
	void (*msg)(void *fs, const char *msg);
};

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
/* A data unit is at most a page (and f2fs blocks are 4 KiB). */
#define FSCRYPT_MAX_LOG2_DATA_UNIT	12

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
/*
 * blkbits: the file system's block size, the default data unit; uuid: its
 * 16-byte UUID, which must stay valid for the keyring's life (it may be
 * filled in after this call, but before any key is set up).
 */
int fscrypt_keyring_init(struct fscrypt_keyring **krp, const struct fscrypt_operations *ops,
			 void *fs, const uint8_t uuid[16], unsigned int blkbits);
void fscrypt_keyring_destroy(struct fscrypt_keyring *kr);
/* Load keys from a key file (see README): -EPERM for a world-readable file. */
int fscrypt_load_keyfile(struct fscrypt_keyring *kr, const char *path);
/* v2 when desc is NULL (id gets the identifier), else v1 under that descriptor. */
int fscrypt_add_key(struct fscrypt_keyring *kr, const uint8_t *key, size_t len,
		    const uint8_t *desc, uint8_t id[FSCRYPT_KEY_IDENTIFIER_SIZE]);
int fscrypt_remove_key(struct fscrypt_keyring *kr, const uint8_t *spec, size_t spec_len);
bool fscrypt_has_key(struct fscrypt_keyring *kr, const uint8_t *spec, size_t spec_len);
/* The inode numbers whose info uses the key now (malloc'd). */
int fscrypt_key_users(struct fscrypt_keyring *kr, const uint8_t *spec, size_t spec_len,
		      uint32_t **inos, size_t *n);

/* /// Per-inode /// */
/*
 * Set up the inode's key from its context and the keyring: 0 when the key
 * is there, -ENOKEY when not, -EFSCORRUPTED / -EOPNOTSUPP for a bad context.
 */
int fscrypt_prepare(struct fscrypt_keyring *kr, struct fscrypt_inode *fi);
void fscrypt_put_info(struct fscrypt_inode *fi);
/* Read the inode's policy (and nonce) from its context xattr. */
int fscrypt_get_policy(struct fscrypt_keyring *kr, struct fscrypt_inode *fi,
		       struct fscrypt_pol *pol, uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE]);
/*
 * FS_IOC_SET_ENCRYPTION_POLICY on a directory the caller holds exclusively:
 * -EEXIST for a different policy already there, -ENOTEMPTY, -ENOKEY.
 */
int fscrypt_set_policy(struct fscrypt_keyring *kr, struct fscrypt_inode *dir,
		       const struct fscrypt_pol *pol);
/*
 * En/decrypt nblocks file blocks from lblk (in may equal out), on the crypto
 * pool's threads when there are more than fscrypt_chunk_blocks(); at most
 * that many run on the caller alone, so a job of the pool may do them.
 */
int fscrypt_crypt_blocks(struct fscrypt_keyring *kr, struct fscrypt_inode *fi, uint64_t lblk,
			 const uint8_t *in, uint8_t *out, unsigned int nblocks, bool enc);
/*
 * The same for blocks gathered from anywhere: block i is file block
 * lblks[i], read from ins[i] (a whole block; may be where it goes), written
 * to out + i blocks. One call for a run of blocks from many folios.
 */
int fscrypt_crypt_gather(struct fscrypt_keyring *kr, struct fscrypt_inode *fi,
			 const uint64_t *lblks, const uint8_t *const *ins, uint8_t *out,
			 unsigned int nblocks, bool enc);
/* Blocks of one pool chunk for the inode's mode; 0 without the key. */
unsigned int fscrypt_chunk_blocks(struct fscrypt_keyring *kr, struct fscrypt_inode *fi);

/* /// Names (the kernel's fname.c) /// */
/*
 * A name encrypted under dir's key, padded as its policy says, at most
 * max_len bytes: out gets *olen bytes. -ENOKEY without the key.
 */
int fscrypt_fname_encrypt(struct fscrypt_keyring *kr, struct fscrypt_inode *dir,
			  const uint8_t *name, size_t len, size_t max_len, uint8_t *out,
			  size_t *olen);
/* A stored name decrypted with dir's key (out: NAME_MAX bytes). -ENOKEY without it. */
int fscrypt_fname_decrypt(struct fscrypt_keyring *kr, struct fscrypt_inode *dir,
			  const uint8_t *ct, size_t len, uint8_t *out, size_t *olen);
/* The dirhash of a casefolded encrypted directory (SipHash of the folded name). */
int fscrypt_fname_siphash(struct fscrypt_keyring *kr, struct fscrypt_inode *dir,
			  const uint8_t *name, size_t len, uint32_t *hash);
/*
 * A no-key name decoded into buf (FSCRYPT_NOKEY_NAME_MAX bytes): the hash it
 * carries, and the stored bytes it names (*digest: only their first
 * FSCRYPT_NOKEY_BYTES, then a SHA-256 of the rest). -ENOENT for a name that
 * cannot be one.
 */
int fscrypt_nokey_decode(const char *name, size_t len, uint8_t *buf, uint32_t *hash,
			 const uint8_t **bytes, size_t *blen, bool *digest);
/* Whether a stored name is the one a decoded no-key name (with a digest) stands for. */
bool fscrypt_nokey_match_digest(const uint8_t *buf, const uint8_t *de, size_t de_len);
/* The name readdir shows: plaintext with the key, else the no-key name. */
int fscrypt_fname_disk_to_usr(struct fscrypt_keyring *kr, struct fscrypt_inode *dir,
			      uint32_t hash, const uint8_t *de, size_t de_len, char *out,
			      size_t *out_len);
/* Symlink target from the stored struct fscrypt_symlink_data (raw, rlen bytes). */
ssize_t fscrypt_symlink_to_usr(struct fscrypt_keyring *kr, struct fscrypt_inode *fi,
			       const uint8_t *raw, size_t rlen, char *buf, size_t size);
/* Encrypt a symlink target for a new inode: out gets le16 len + ciphertext. */
ssize_t fscrypt_encrypt_symlink(struct fscrypt_keyring *kr, struct fscrypt_inode *fi,
				const char *target, size_t len, uint8_t *out, size_t max);

/* Give a new inode under dir the parent's policy (fresh nonce) in its context. */
int fscrypt_inherit_context(struct fscrypt_keyring *kr, struct fscrypt_inode *dir,
			    struct fscrypt_inode *fi);

/*
 * fscrypt_prepare_link's rule: into an encrypted directory only with its key
 * (-ENOKEY) and only an inode of the same policy (-EXDEV).
 */
int fscrypt_may_link(struct fscrypt_keyring *kr, struct fscrypt_inode *dir,
		     struct fscrypt_inode *fi);

#endif /* UF2FS_CRYPTO_H */
