// SPDX-License-Identifier: GPL-2.0
/*
 * Encrypted file names and symlink targets (the kernel's fs/crypto/fname.c
 * and hooks.c): padding, the no-key names a reader without the key sees
 * (base64url with the dirhash), and the transforms of names under a
 * directory's key.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fscrypt_private.h"

size_t fscrypt_fname_encrypted_size(size_t len, unsigned int pad, size_t max_len)
{
	size_t n = FSCRYPT_MAX(len, (size_t)16);

	n = (n + pad - 1) / pad * pad;
	return FSCRYPT_MIN(n, max_len);
}

static const char b64url[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static size_t base64url_encode(const uint8_t *src, size_t len, char *dst)
{
	uint32_t ac = 0;
	int bits = 0;
	char *cp = dst;

	for (size_t i = 0; i < len; i++) {
		ac = (ac << 8) | src[i];
		bits += 8;
		do {
			bits -= 6;
			*cp++ = b64url[(ac >> bits) & 0x3f];
		} while (bits >= 6);
	}
	if (bits)
		*cp++ = b64url[(ac << (6 - bits)) & 0x3f];
	*cp = 0;
	return cp - dst;
}

/* Strict, as the kernel's: no padding, unused trailing bits must be zero. */
int fscrypt_base64url_decode(const char *src, size_t len, uint8_t *dst, size_t dst_max)
{
	uint32_t ac = 0;
	int bits = 0;
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		const char *p = src[i] ? strchr(b64url, src[i]) : NULL;

		if (!p)
			return -EINVAL;
		ac = (ac << 6) | (uint32_t)(p - b64url);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == dst_max)
				return -EINVAL;
			dst[n++] = (uint8_t)(ac >> bits);
		}
	}
	if (ac & ((1u << bits) - 1))
		return -EINVAL;
	return (int)n;
}

size_t fscrypt_nokey_encode(uint32_t hash, uint32_t minor_hash, const uint8_t *ct, size_t len,
			    char *out)
{
	uint8_t nk[FSCRYPT_NOKEY_NAME_MAX];
	size_t size;

	/* dirhash is native u32 in the kernel's struct: little-endian here */
	for (int i = 0; i < 4; i++) {
		nk[i] = hash >> (8 * i);
		nk[4 + i] = minor_hash >> (8 * i);
	}
	if (len <= FSCRYPT_NOKEY_BYTES) {
		memcpy(nk + 8, ct, len);
		size = 8 + len;
	} else {
		memcpy(nk + 8, ct, FSCRYPT_NOKEY_BYTES);
		fscrypt_sha256(ct + FSCRYPT_NOKEY_BYTES, len - FSCRYPT_NOKEY_BYTES,
			       nk + 8 + FSCRYPT_NOKEY_BYTES);
		size = FSCRYPT_NOKEY_NAME_MAX;
	}
	return base64url_encode(nk, size, out);
}

static bool is_dot_dotdot(const uint8_t *n, size_t len)
{
	return (len == 1 && n[0] == '.') || (len == 2 && n[0] == '.' && n[1] == '.');
}

/* Decrypt a name with dir's key; plain gets strnlen of the result. Lock held. */
static int decrypt_name_locked(const struct fscrypt_info *ci, const uint8_t *ct, size_t len,
			       uint8_t *plain, size_t *plen)
{
	uint8_t iv[32];
	int ret;

	if (len < 16 || len > NAME_MAX)
		return -EFSCORRUPTED;
	fscrypt_generate_iv(ci, 0, iv);
	ret = fscrypt_decrypt_name(ci->cipher, iv, ct, plain, len);
	if (ret)
		return ret;
	*plen = strnlen((const char *)plain, len);
	return *plen ? 0 : -EFSCORRUPTED;
}

static int encrypt_name_locked(const struct fscrypt_info *ci, const uint8_t *name, size_t len,
			       uint8_t *out, size_t olen)
{
	uint8_t iv[32];

	memcpy(out, name, len);
	memset(out + len, 0, olen - len);
	fscrypt_generate_iv(ci, 0, iv);
	return fscrypt_encrypt_name(ci->cipher, iv, out, out, olen);
}

int fscrypt_fname_encrypt(struct fscrypt_keyring *kr, struct fscrypt_inode *dir,
			  const uint8_t *name, size_t len, size_t max_len, uint8_t *out,
			  size_t *olen)
{
	struct fscrypt_info *ci;
	int ret = -ENOKEY;

	pthread_rwlock_rdlock(&kr->lock);
	ci = dir->ci;
	if (ci && !ci->dead) {
		*olen = fscrypt_fname_encrypted_size(len, 4u << (ci->pol.flags &
						     FSCRYPT_POLICY_FLAGS_PAD_MASK), max_len);
		ret = encrypt_name_locked(ci, name, len, out, *olen);
	}
	pthread_rwlock_unlock(&kr->lock);
	return ret;
}

int fscrypt_fname_decrypt(struct fscrypt_keyring *kr, struct fscrypt_inode *dir,
			  const uint8_t *ct, size_t len, uint8_t *out, size_t *olen)
{
	struct fscrypt_info *ci;
	int ret;

	pthread_rwlock_rdlock(&kr->lock);
	ci = dir->ci;
	ret = ci && !ci->dead ? decrypt_name_locked(ci, ct, len, out, olen) : -ENOKEY;
	pthread_rwlock_unlock(&kr->lock);
	return ret;
}

int fscrypt_fname_siphash(struct fscrypt_keyring *kr, struct fscrypt_inode *dir,
			  const uint8_t *name, size_t len, uint32_t *hash)
{
	struct fscrypt_info *ci;
	int ret = 0;

	pthread_rwlock_rdlock(&kr->lock);
	ci = dir->ci;
	if (!ci || ci->dead)
		ret = -ENOKEY;
	else if (!ci->has_dirhash)
		ret = -EFSCORRUPTED;
	else
		*hash = (uint32_t)fscrypt_siphash(ci->dirhash_key, name, len);
	pthread_rwlock_unlock(&kr->lock);
	return ret;
}

int fscrypt_nokey_decode(const char *name, size_t len, uint8_t *buf, uint32_t *hash,
			 const uint8_t **bytes, size_t *blen, bool *digest)
{
	int n;

	if (len > FSCRYPT_NOKEY_NAME_MAX_ENCODED)
		return -ENOENT;
	n = fscrypt_base64url_decode(name, len, buf, FSCRYPT_NOKEY_NAME_MAX);
	if (n < 9 || (n > 8 + FSCRYPT_NOKEY_BYTES && n != FSCRYPT_NOKEY_NAME_MAX))
		return -ENOENT;
	*hash = buf[0] | buf[1] << 8 | buf[2] << 16 | (uint32_t)buf[3] << 24;
	*digest = n == FSCRYPT_NOKEY_NAME_MAX;
	*bytes = buf + 8;
	*blen = *digest ? FSCRYPT_NOKEY_BYTES : (size_t)n - 8;
	return 0;
}

bool fscrypt_nokey_match_digest(const uint8_t *buf, const uint8_t *de, size_t de_len)
{
	uint8_t digest[32];

	if (de_len <= FSCRYPT_NOKEY_BYTES || memcmp(de, buf + 8, FSCRYPT_NOKEY_BYTES))
		return false;
	fscrypt_sha256(de + FSCRYPT_NOKEY_BYTES, de_len - FSCRYPT_NOKEY_BYTES, digest);
	return !memcmp(digest, buf + 8 + FSCRYPT_NOKEY_BYTES, 32);
}

int fscrypt_fname_disk_to_usr(struct fscrypt_keyring *kr, struct fscrypt_inode *dir,
			      uint32_t hash, const uint8_t *de, size_t de_len, char *out,
			      size_t *out_len)
{
	struct fscrypt_info *ci;
	int ret;

	if (is_dot_dotdot(de, de_len)) {
		memcpy(out, de, de_len);
		*out_len = de_len;
		return 0;
	}
	if (de_len < 16)
		return fscrypt_err(kr, EFSCORRUPTED, "encrypted directory %u: name of %zu "
				  "bytes, under the cipher's 16", fscrypt_ino(kr, dir), de_len);
	ret = fscrypt_prepare(kr, dir);
	if (ret && ret != -ENOKEY)
		return ret;
	pthread_rwlock_rdlock(&kr->lock);
	ci = dir->ci;
	if (ci && !ci->dead) {
		ret = decrypt_name_locked(ci, de, de_len, (uint8_t *)out, out_len);
		pthread_rwlock_unlock(&kr->lock);
		if (ret == -EFSCORRUPTED)
			return fscrypt_err(kr, EFSCORRUPTED, "encrypted directory %u: a name "
					  "decrypts to nothing", fscrypt_ino(kr, dir));
		return ret;
	}
	pthread_rwlock_unlock(&kr->lock);
	*out_len = fscrypt_nokey_encode(hash, 0, de, de_len, out);
	return 0;
}

ssize_t fscrypt_symlink_to_usr(struct fscrypt_keyring *kr, struct fscrypt_inode *fi,
			       const uint8_t *raw, size_t rlen, char *buf, size_t size)
{
	char out[FSCRYPT_SYMLINK_MAX];
	struct fscrypt_info *ci;
	size_t clen, olen;
	int ret;

	if (rlen < 2 || !(clen = raw[0] | raw[1] << 8) || clen + 2 > rlen)
		return fscrypt_err(kr, EFSCORRUPTED, "encrypted symlink %u: bad length",
				  fscrypt_ino(kr, fi));
	ret = fscrypt_prepare(kr, fi);
	if (ret && ret != -ENOKEY)
		return ret;
	pthread_rwlock_rdlock(&kr->lock);
	ci = fi->ci;
	if (ci && !ci->dead) {
		uint8_t iv[32];

		if (clen < 16) {
			pthread_rwlock_unlock(&kr->lock);
			return fscrypt_err(kr, EFSCORRUPTED, "encrypted symlink %u: bad length",
					  fscrypt_ino(kr, fi));
		}
		fscrypt_generate_iv(ci, 0, iv);
		ret = fscrypt_decrypt_name(ci->cipher, iv, raw + 2, (uint8_t *)out, clen);
		pthread_rwlock_unlock(&kr->lock);
		if (ret)
			return ret;
		olen = strnlen(out, clen);
		if (!olen)
			return fscrypt_err(kr, EFSCORRUPTED, "encrypted symlink %u: empty target",
					  fscrypt_ino(kr, fi));
	} else {
		pthread_rwlock_unlock(&kr->lock);
		if (clen > NAME_MAX * 16)
			return -EFSCORRUPTED;
		olen = fscrypt_nokey_encode(0, 0, raw + 2, clen, out);
	}
	olen = FSCRYPT_MIN(olen, size);
	memcpy(buf, out, olen);
	return (ssize_t)olen;
}

ssize_t fscrypt_encrypt_symlink(struct fscrypt_keyring *kr, struct fscrypt_inode *fi,
				const char *target, size_t len, uint8_t *out, size_t max)
{
	struct fscrypt_info *ci;
	size_t clen;
	int ret = fscrypt_prepare(kr, fi);

	if (ret)
		return ret;
	pthread_rwlock_rdlock(&kr->lock);
	ci = fi->ci;
	if (!ci || ci->dead) {
		pthread_rwlock_unlock(&kr->lock);
		return -ENOKEY;
	}
	/* room for le16 length and the NUL the kernel counts (but does not store) */
	if (len + 3 > max) {
		pthread_rwlock_unlock(&kr->lock);
		return -ENAMETOOLONG;
	}
	clen = fscrypt_fname_encrypted_size(len, 4u << (ci->pol.flags &
					    FSCRYPT_POLICY_FLAGS_PAD_MASK), max - 3);
	ret = encrypt_name_locked(ci, (const uint8_t *)target, len, out + 2, clen);
	pthread_rwlock_unlock(&kr->lock);
	if (ret)
		return ret;
	out[0] = clen & 0xff;
	out[1] = clen >> 8;
	return (ssize_t)(clen + 2);
}
