/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fscrypt_private.h: what the files of lib/fscrypt share and nobody else
 * sees (the kernel's fs/crypto/fscrypt_private.h): the master key, the
 * per-inode info and the keyring. One rwlock (the keyring's) guards them:
 * transforms hold it shared, add/remove/setup exclusive.
 */
#ifndef UF2FS_FSCRYPT_PRIVATE_H
#define UF2FS_FSCRYPT_PRIVATE_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>

#include "alg.h"
#include "fscrypt.h"

#ifndef EFSCORRUPTED
#define EFSCORRUPTED	EUCLEAN
#endif
#define FSCRYPT_MIN(a, b)	((a) < (b) ? (a) : (b))
#define FSCRYPT_MAX(a, b)	((a) > (b) ? (a) : (b))
/* Symlink targets are at most a page (the kernel's PAGE_SIZE). */
#define FSCRYPT_SYMLINK_MAX	4096

#define MAX_MODE		16
enum { PM_DIRECT, PM_LBLK64, PM_LBLK32, PM_NR };

struct fscrypt_master_key {
	struct fscrypt_master_key *next;
	int version;
	uint8_t spec[FSCRYPT_KEY_IDENTIFIER_SIZE];
	uint8_t *secret;		/* secret memory */
	size_t len;
	struct fscrypt_cipher *mode_keys[PM_NR][MAX_MODE];
	uint8_t *ino_hash_key;		/* 16 bytes, secret memory; LBLK_32 */
	struct fscrypt_hkdf *hkdf;	/* v2: the secret's HKDF extract, for every derivation */
	struct fscrypt_info *users;	/* infos set up with this key */
};

struct fscrypt_info {
	struct fscrypt_info *next_user;	/* master key's list, or the graveyard */
	struct fscrypt_info **pprev_user; /* what points at this info: O(1) unlink */
	struct fscrypt_master_key *mk;
	struct fscrypt_keyring *kr;
	struct fscrypt_cipher *cipher;
	bool shared;			/* cipher is the master key's per-mode key */
	bool dead;			/* its key was removed */
	struct fscrypt_pol pol;
	uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE];
	uint8_t *dirhash_key;		/* 16 bytes of secret memory, casefolded dirs only */
	bool has_dirhash;
	uint32_t hashed_ino;
	uint32_t ino;
	unsigned int du_bits;		/* data unit size, log2 */
};

struct fscrypt_keyring {
	pthread_rwlock_t lock;
	const struct fscrypt_operations *ops;
	void *fs;			/* the file system's, for ops */
	const uint8_t *uuid;		/* 16 bytes, the file system's (read after init): IV_INO_LBLK_* keys */
	unsigned int blkbits;
	struct fscrypt_master_key *keys;
	struct fscrypt_info *graveyard;	/* dead infos an inode may still point at */
};

/* The same from a master key's prepared extract (alg.h) in place of fscrypt_hkdf(): the same bytes, less work. */
int fscrypt_hkdf_prepared(const struct fscrypt_hkdf *h, uint8_t context, const uint8_t *info,
			  size_t info_len, uint8_t *out, size_t out_len);
size_t fscrypt_spec_size(int version);
struct fscrypt_master_key *fscrypt_find_key(struct fscrypt_keyring *kr, int version,
					    const uint8_t *spec);
void fscrypt_free_info(struct fscrypt_info *ci);
void fscrypt_kill_info(struct fscrypt_info *ci);
bool fscrypt_info_live(const struct fscrypt_inode *fi);
void fscrypt_generate_iv(const struct fscrypt_info *ci, uint64_t index, uint8_t iv[32]);

/* Format the message for the file system's error op: returns -err. */
int fscrypt_err(struct fscrypt_keyring *kr, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void fscrypt_msg(struct fscrypt_keyring *kr, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * An info joins a master key's users or the graveyard at its head and leaves
 * from wherever it is: every evicted inode puts its info, so the unlink must
 * not walk a list that holds every cached encrypted inode. Under kr->lock.
 */
static inline void fscrypt_link_user(struct fscrypt_info **head, struct fscrypt_info *ci)
{
	ci->next_user = *head;
	if (*head)
		(*head)->pprev_user = &ci->next_user;
	*head = ci;
	ci->pprev_user = head;
}

static inline void fscrypt_unlink_user(struct fscrypt_info *ci)
{
	if (!ci->pprev_user)
		return;
	*ci->pprev_user = ci->next_user;
	if (ci->next_user)
		ci->next_user->pprev_user = ci->pprev_user;
	ci->next_user = NULL;
	ci->pprev_user = NULL;
}

static inline uint32_t fscrypt_ino(const struct fscrypt_keyring *kr,
				   const struct fscrypt_inode *inode)
{
	return kr->ops->ino(inode);
}

static inline uint32_t fscrypt_mode(const struct fscrypt_keyring *kr,
				    const struct fscrypt_inode *inode)
{
	return kr->ops->mode(inode);
}

static inline bool fscrypt_is_encrypted(const struct fscrypt_keyring *kr,
					const struct fscrypt_inode *inode)
{
	return kr->ops->is_encrypted(inode);
}

#endif /* UF2FS_FSCRYPT_PRIVATE_H */
