/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsverity_private.h: what the files of lib/fsverity share (the kernel's
 * fs/verity/fsverity_private.h): the per-inode info a verity file keeps
 * once its descriptor is loaded, with the small cache of tree blocks that
 * have been checked, so a sequential reader hashes each tree block once.
 */
#ifndef UF2FS_FSVERITY_PRIVATE_H
#define UF2FS_FSVERITY_PRIVATE_H

#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>

#include "fsverity.h"

#define VERITY_CACHE_SLOTS	64	/* verified tree blocks kept per inode */
#define VERITY_MIN(a, b)	((a) < (b) ? (a) : (b))

struct fsverity_info {
	struct verity_params p;
	uint8_t root[VERITY_MAX_DIGEST];
	uint8_t digest[VERITY_MAX_DIGEST];
	pthread_mutex_t lock;		/* the cache and the scratch blocks */
	uint64_t slot_index[VERITY_CACHE_SLOTS];
	bool slot_valid[VERITY_CACHE_SLOTS];
	uint8_t *slots;			/* VERITY_CACHE_SLOTS blocks */
	uint8_t *scratch;		/* VERITY_MAX_LEVELS blocks */
	EVP_MD_CTX *ctx;		/* under lock: one hash state, reused */
	EVP_MD_CTX *salted;		/* the state after the padded salt */
};

/* The descriptor and signature as the file system stores them (malloc'd). */
int fsverity_read_stored_descriptor(const struct fsverity_sb *vsb, struct fsverity_inode *inode,
				    uint8_t **descp, size_t *sizep);
/* Format the message for the file system's error op: returns -err. */
/*
 * Check a descriptor's signature against the keyring (0 without a keyring
 * or without a signature): -EBADMSG, -ENOKEY, -EKEYREJECTED as Linux.
 */
int fsverity_verify_signature(const struct fsverity_sb *vsb, const struct verity_params *p,
			      const uint8_t *digest, const uint8_t *sig, size_t sig_size,
			      uint32_t ino);
int fsverity_err(const struct fsverity_sb *vsb, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* UF2FS_FSVERITY_PRIVATE_H */
