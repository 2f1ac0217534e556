// SPDX-License-Identifier: GPL-2.0
/*
 * Per-inode key setup (the kernel's fs/crypto/keysetup.c): the inode's
 * policy and nonce read from its context, the key derived from the master
 * key (its own, or the master key's per-mode key), the LBLK_32 inode hash
 * and the dirhash key of a casefolded directory.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fscrypt_private.h"

static int mode_of(const struct fscrypt_info *ci, uint32_t imode)
{
	return S_ISREG(imode) ? ci->pol.contents_mode : ci->pol.filenames_mode;
}

/* fscrypt's HKDF from the master key's prepared extract when there is one, else from the secret */
static int kdf(const struct fscrypt_hkdf *h, const uint8_t *master, size_t mlen, uint8_t context,
	       const uint8_t *info, size_t info_len, uint8_t *out, size_t out_len)
{
	if (h)
		return fscrypt_hkdf_prepared(h, context, info, info_len, out, out_len);
	return fscrypt_hkdf(master, mlen, context, info, info_len, out, out_len);
}

static int derive_key(const struct fscrypt_pol *pol, const struct fscrypt_hkdf *h,
		      const uint8_t *master, size_t mlen,
		      const uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE], int mode, const uint8_t uuid[16],
		      uint8_t *out)
{
	size_t ksize = fscrypt_mode_key_size(mode);
	uint8_t info[17];

	if (!ksize)
		return -EOPNOTSUPP;
	if (pol->version == FSCRYPT_CONTEXT_V1) {
		if (mlen < ksize)
			return -ENOKEY;	/* as the kernel: a v1 key too short for the mode */
		if (pol->flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY) {
			memcpy(out, master, ksize);
			return 0;
		}
		return fscrypt_aes128_ecb_encrypt(nonce, master, out, ksize);
	}
	info[0] = (uint8_t)mode;
	if (pol->flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY)
		return kdf(h, master, mlen, HKDF_CONTEXT_DIRECT_KEY, info, 1, out, ksize);
	if (pol->flags & (FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 | FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32)) {
		memcpy(info + 1, uuid, 16);
		return kdf(h, master, mlen, (pol->flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64) ?
			   HKDF_CONTEXT_IV_INO_LBLK_64_KEY : HKDF_CONTEXT_IV_INO_LBLK_32_KEY,
			   info, 17, out, ksize);
	}
	return kdf(h, master, mlen, HKDF_CONTEXT_PER_FILE_ENC_KEY, nonce, FSCRYPT_FILE_NONCE_SIZE,
		   out, ksize);
}

int fscrypt_derive_enc_key(const struct fscrypt_pol *pol, const uint8_t *master, size_t mlen,
			   const uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE], int mode,
			   const uint8_t uuid[16], uint8_t *out)
{
	return derive_key(pol, NULL, master, mlen, nonce, mode, uuid, out);
}

static bool per_mode(const struct fscrypt_pol *pol)
{
	return pol->version == FSCRYPT_CONTEXT_V2 &&
	       (pol->flags & (FSCRYPT_POLICY_FLAG_DIRECT_KEY | FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 |
			      FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32));
}

/* The cipher of an inode: its own, or (v2 per-mode policies) the master key's, made once. */
static int setup_cipher(struct fscrypt_keyring *kr, struct fscrypt_info *ci,
			struct fscrypt_master_key *mk, int mode)
{
	struct fscrypt_cipher **slot = &ci->cipher;
	uint8_t *key;
	int ret;

	if (mode <= 0 || mode >= MAX_MODE)
		return -EOPNOTSUPP;
	if (per_mode(&ci->pol)) {
		int kind = (ci->pol.flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY) ? PM_DIRECT :
			   (ci->pol.flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64) ? PM_LBLK64 :
			   PM_LBLK32;

		slot = &mk->mode_keys[kind][mode];
		ci->shared = true;
		if (*slot) {
			ci->cipher = *slot;
			return 0;
		}
	}
	key = fscrypt_secret_alloc(FSCRYPT_MAX_KEY_SIZE);
	if (!key)
		return -ENOMEM;
	ret = derive_key(&ci->pol, mk->hkdf, mk->secret, mk->len, ci->nonce, mode, kr->uuid,
			 key);
	if (!ret)
		ret = fscrypt_cipher_new(slot, mode, key, fscrypt_mode_key_size(mode));
	fscrypt_secret_free(key, FSCRYPT_MAX_KEY_SIZE);
	if (!ret)
		ci->cipher = *slot;
	else
		ci->shared = false;
	return ret;
}

/* LBLK_32: the inode number hashed with the master key's inode hash key. */
static int hash_ino(struct fscrypt_info *ci, struct fscrypt_master_key *mk)
{
	uint8_t le_ino[8] = { 0 };

	if (!mk->ino_hash_key) {
		uint8_t *k = fscrypt_secret_alloc(16);
		int ret;

		if (!k)
			return -ENOMEM;
		ret = kdf(mk->hkdf, mk->secret, mk->len, HKDF_CONTEXT_INODE_HASH_KEY, NULL, 0, k,
			  16);
		if (ret) {
			fscrypt_secret_free(k, 16);
			return ret;
		}
		mk->ino_hash_key = k;
	}
	for (int i = 0; i < 4; i++)
		le_ino[i] = ci->ino >> (8 * i);
	ci->hashed_ino = (uint32_t)fscrypt_siphash(mk->ino_hash_key, le_ino, 8);
	return 0;
}

static int setup_keys(struct fscrypt_keyring *kr, struct fscrypt_info *ci,
		      struct fscrypt_master_key *mk, int mode, bool casefolded_dir)
{
	int ret = setup_cipher(kr, ci, mk, mode);

	if (!ret && ci->pol.version == FSCRYPT_CONTEXT_V2 &&
	    (ci->pol.flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32))
		ret = hash_ino(ci, mk);
	if (!ret && casefolded_dir && ci->pol.version == FSCRYPT_CONTEXT_V2) {
		ci->dirhash_key = fscrypt_secret_alloc(16);
		ret = !ci->dirhash_key ? -ENOMEM :
		      kdf(mk->hkdf, mk->secret, mk->len, HKDF_CONTEXT_DIRHASH_KEY, ci->nonce,
			  FSCRYPT_FILE_NONCE_SIZE, ci->dirhash_key, 16);
		ci->has_dirhash = !ret;
	}
	return ret;
}

bool fscrypt_info_live(const struct fscrypt_inode *fi)
{
	return fi->ci && !fi->ci->dead;
}

int fscrypt_prepare(struct fscrypt_keyring *kr, struct fscrypt_inode *fi)
{
	struct fscrypt_master_key *mk;
	struct fscrypt_info *ci;
	bool live;
	int ret;

	if (!fscrypt_is_encrypted(kr, fi))
		return 0;
	pthread_rwlock_rdlock(&kr->lock);
	live = fscrypt_info_live(fi);
	pthread_rwlock_unlock(&kr->lock);
	if (live)
		return 0;
	ci = calloc(1, sizeof(*ci));
	if (!ci)
		return -ENOMEM;
	ci->ino = fscrypt_ino(kr, fi);
	ci->kr = kr;
	ret = fscrypt_get_policy(kr, fi, &ci->pol, ci->nonce);
	if (ret) {
		free(ci);
		if (ret == -ENODATA || ret == -EINVAL)
			return fscrypt_err(kr, EFSCORRUPTED, "encrypted inode %u: %s encryption "
					  "context", fscrypt_ino(kr, fi), ret == -ENODATA ? "no" :
					  "invalid");
		return ret;
	}
	ci->du_bits = ci->pol.log2_data_unit_size ? ci->pol.log2_data_unit_size :
		      kr->blkbits;
	pthread_rwlock_wrlock(&kr->lock);
	if (fscrypt_info_live(fi)) {
		ret = 0;	/* another thread was first */
		goto free;
	}
	mk = fscrypt_find_key(kr, ci->pol.version, ci->pol.key_spec);
	if (!mk) {
		ret = -ENOKEY;
		goto free;
	}
	ret = setup_keys(kr, ci, mk, mode_of(ci, fscrypt_mode(kr, fi)),
			 S_ISDIR(fscrypt_mode(kr, fi)) && kr->ops->casefolded(kr->fs, fi));
	if (ret)
		goto free;
	ci->mk = mk;
	fscrypt_link_user(&mk->users, ci);
	/* a dead info stays where it is (the graveyard); fi just points elsewhere now */
	fi->ci = ci;
	pthread_rwlock_unlock(&kr->lock);
	return 0;
free:
	pthread_rwlock_unlock(&kr->lock);
	fscrypt_free_info(ci);
	return ret;
}

/* Inode leaves the cache: its info goes from its key's list (or the graveyard) and is freed. */
void fscrypt_put_info(struct fscrypt_inode *fi)
{
	struct fscrypt_info *ci = fi->ci;
	struct fscrypt_keyring *kr;

	if (!ci)
		return;
	fi->ci = NULL;
	kr = ci->kr;
	pthread_rwlock_wrlock(&kr->lock);
	fscrypt_unlink_user(ci);
	pthread_rwlock_unlock(&kr->lock);
	fscrypt_free_info(ci);
}
