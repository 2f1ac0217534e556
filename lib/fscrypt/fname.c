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
	size_t n = MAX(len, (size_t)16);

	n = (n + pad - 1) / pad * pad;
	return MIN(n, max_len);
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

	if (len < 16 || len > F2FS_NAME_LEN)
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

int fscrypt_setup_filename(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			   const char *name, size_t len, struct f2fs_filename *fn)
{
	struct fscrypt_keyring *kr = sbi->keyring;
	int ret = fscrypt_prepare(sbi, dir);

	fn->encrypted = true;
	fn->usr = (const uint8_t *)name;
	fn->usr_len = len;
	fn->sbi = sbi;
	fn->dir = dir;
	if (ret && ret != -ENOKEY)
		return ret;
	if (!ret) {
		struct fscrypt_info *ci;
		size_t clen;

		pthread_rwlock_rdlock(&kr->lock);
		ci = dir->ci;
		if (!ci || ci->dead) {
			pthread_rwlock_unlock(&kr->lock);
			goto nokey;
		}
		clen = fscrypt_fname_encrypted_size(len, 4u << (ci->pol.flags &
						    FSCRYPT_POLICY_FLAGS_PAD_MASK), F2FS_NAME_LEN);
		ret = encrypt_name_locked(ci, (const uint8_t *)name, len, fn->crypt_buf, clen);
		if (!ret && fn->casefold) {
			const uint8_t *h = fn->cf ? fn->cf : fn->usr;
			size_t hl = fn->cf ? fn->cf_len : fn->usr_len;

			fn->hash = ci->has_dirhash ? (uint32_t)fscrypt_siphash(ci->dirhash_key,
									       h, hl) : 0;
			if (!ci->has_dirhash)
				ret = -EFSCORRUPTED;
		}
		pthread_rwlock_unlock(&kr->lock);
		if (ret)
			return ret;
		fn->name = fn->crypt_buf;
		fn->len = clen;
		if (!fn->casefold)
			fn->hash = f2fs_dentry_hash(fn->name, fn->len);
		return 0;
	}
nokey:
	/* no key: the name is a no-key name; lookups only */
	fn->nokey = true;
	fn->casefold = false;
	fn->cf = NULL;
	if (len > FSCRYPT_NOKEY_NAME_MAX_ENCODED)
		return -ENOENT;
	ret = fscrypt_base64url_decode(name, len, fn->crypt_buf, FSCRYPT_NOKEY_NAME_MAX);
	if (ret < 9 || (ret > 8 + FSCRYPT_NOKEY_BYTES && ret != FSCRYPT_NOKEY_NAME_MAX))
		return -ENOENT;
	fn->hash = fn->crypt_buf[0] | fn->crypt_buf[1] << 8 | fn->crypt_buf[2] << 16 |
		   (uint32_t)fn->crypt_buf[3] << 24;
	fn->nokey_digest = ret == FSCRYPT_NOKEY_NAME_MAX;
	fn->name = fn->crypt_buf + 8;
	fn->len = fn->nokey_digest ? FSCRYPT_NOKEY_BYTES : (size_t)ret - 8;
	return 0;
}

bool fscrypt_match_name(const struct f2fs_filename *fn, const uint8_t *de, size_t de_len)
{
	struct fscrypt_keyring *kr = fn->sbi->keyring;
	uint8_t plain[F2FS_NAME_LEN + 1], digest[32];
	struct f2fs_filename tmp;
	struct fscrypt_info *ci;
	size_t plen;
	int ret;

	if (fn->nokey) {
		if (!fn->nokey_digest)
			return de_len == fn->len && !memcmp(de, fn->name, de_len);
		if (de_len <= FSCRYPT_NOKEY_BYTES || memcmp(de, fn->name, FSCRYPT_NOKEY_BYTES))
			return false;
		fscrypt_sha256(de + FSCRYPT_NOKEY_BYTES, de_len - FSCRYPT_NOKEY_BYTES, digest);
		return !memcmp(digest, fn->crypt_buf + 8 + FSCRYPT_NOKEY_BYTES, 32);
	}
	if (de_len == fn->len && !memcmp(de, fn->name, de_len))
		return true;
	if (!fn->casefold)
		return false;
	/* casefolded: compare the plaintexts folded, as f2fs_match_ci_name */
	pthread_rwlock_rdlock(&kr->lock);
	ci = fn->dir->ci;
	ret = ci && !ci->dead ? decrypt_name_locked(ci, de, de_len, plain, &plen) : -ENOKEY;
	pthread_rwlock_unlock(&kr->lock);
	if (ret)
		return false;
	tmp = *fn;
	tmp.encrypted = false;
	tmp.name = fn->usr;
	tmp.len = fn->usr_len;
	return f2fs_match_name(&tmp, plain, plen);
}

int fscrypt_fname_disk_to_usr(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			      uint32_t hash, const uint8_t *de, size_t de_len, char *out,
			      size_t *out_len)
{
	struct fscrypt_keyring *kr = sbi->keyring;
	struct fscrypt_info *ci;
	int ret;

	if (is_dot_dotdot(de, de_len)) {
		memcpy(out, de, de_len);
		*out_len = de_len;
		return 0;
	}
	if (de_len < 16)
		return f2fs_error(sbi, EFSCORRUPTED, "encrypted directory %u: name of %zu "
				  "bytes, under the cipher's 16", dir->ino, de_len);
	ret = fscrypt_prepare(sbi, dir);
	if (ret && ret != -ENOKEY)
		return ret;
	pthread_rwlock_rdlock(&kr->lock);
	ci = dir->ci;
	if (ci && !ci->dead) {
		ret = decrypt_name_locked(ci, de, de_len, (uint8_t *)out, out_len);
		pthread_rwlock_unlock(&kr->lock);
		if (ret == -EFSCORRUPTED)
			return f2fs_error(sbi, EFSCORRUPTED, "encrypted directory %u: a name "
					  "decrypts to nothing", dir->ino);
		return ret;
	}
	pthread_rwlock_unlock(&kr->lock);
	*out_len = fscrypt_nokey_encode(hash, 0, de, de_len, out);
	return 0;
}

ssize_t fscrypt_symlink_to_usr(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			       const uint8_t *raw, size_t rlen, char *buf, size_t size)
{
	struct fscrypt_keyring *kr = sbi->keyring;
	char out[F2FS_BLKSIZE];
	struct fscrypt_info *ci;
	size_t clen, olen;
	int ret;

	if (rlen < 2 || !(clen = raw[0] | raw[1] << 8) || clen + 2 > rlen)
		return f2fs_error(sbi, EFSCORRUPTED, "encrypted symlink %u: bad length",
				  fi->ino);
	ret = fscrypt_prepare(sbi, fi);
	if (ret && ret != -ENOKEY)
		return ret;
	pthread_rwlock_rdlock(&kr->lock);
	ci = fi->ci;
	if (ci && !ci->dead) {
		uint8_t iv[32];

		if (clen < 16) {
			pthread_rwlock_unlock(&kr->lock);
			return f2fs_error(sbi, EFSCORRUPTED, "encrypted symlink %u: bad length",
					  fi->ino);
		}
		fscrypt_generate_iv(ci, 0, iv);
		ret = fscrypt_decrypt_name(ci->cipher, iv, raw + 2, (uint8_t *)out, clen);
		pthread_rwlock_unlock(&kr->lock);
		if (ret)
			return ret;
		olen = strnlen(out, clen);
		if (!olen)
			return f2fs_error(sbi, EFSCORRUPTED, "encrypted symlink %u: empty target",
					  fi->ino);
	} else {
		pthread_rwlock_unlock(&kr->lock);
		if (clen > F2FS_NAME_LEN * 16)
			return -EFSCORRUPTED;
		olen = fscrypt_nokey_encode(0, 0, raw + 2, clen, out);
	}
	olen = MIN(olen, size);
	memcpy(buf, out, olen);
	return (ssize_t)olen;
}

ssize_t fscrypt_encrypt_symlink(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
				const char *target, size_t len, uint8_t *out, size_t max)
{
	struct fscrypt_keyring *kr = sbi->keyring;
	struct fscrypt_info *ci;
	size_t clen;
	int ret = fscrypt_prepare(sbi, fi);

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

int fscrypt_setup_disk_name(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			    const uint8_t *raw, size_t len, size_t room,
			    struct f2fs_filename *fn)
{
	memset(fn, 0, offsetof(struct f2fs_filename, cf_buf));
	if (len < 16 || len > F2FS_NAME_LEN)
		return -EFSCORRUPTED;
	memcpy(fn->crypt_buf, raw, len);
	fn->name = fn->usr = fn->crypt_buf;
	fn->len = fn->usr_len = len;
	fn->encrypted = true;
	fn->sbi = sbi;
	fn->dir = dir;
	if (!f2fs_dir_casefolded(sbi, dir)) {
		fn->hash = f2fs_dentry_hash(raw, len);
		return 0;
	}
	/* the SipHash needs the key and the plaintext: Linux appends it to i_name */
	if (len + 4 > room)
		return -EFSCORRUPTED;
	fn->hash = raw[len] | raw[len + 1] << 8 | raw[len + 2] << 16 | (uint32_t)raw[len + 3] << 24;
	return 0;
}
