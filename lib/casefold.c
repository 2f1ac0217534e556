// SPDX-License-Identifier: GPL-2.0
/*
 * Case-insensitive names: what a casefolded directory (F2FS_CASEFOLD_FL on an
 * image with the casefold feature and the utf8 encoding) does to a name.
 * Linux folds a name to "nfdicf" (fs/unicode: NFD, Default_Ignorable code
 * points dropped, full case folding), hashes the folded bytes for the dentry
 * bucket, stores the name as given, and matches entries by comparing folded
 * forms. An invalid UTF-8 name (or one whose fold does not fit in 254 bytes)
 * is hashed and matched as raw bytes, or refused with EINVAL on a strict-mode
 * image. The Unicode work is GNU libunistring's (u8_casefold with NFD);
 * docs/decisions.md says where that can differ from the kernel's tables.
 * This file also owns the casefold rules of chattr +F and of the super block,
 * and what f2fs_filename holds for a name in an encrypted directory (the
 * kernel's fs/f2fs/dir.c around fscrypt's name transforms: the on-disk
 * hash, casefolded matching, no-key lookups, recovery's i_name).
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unicase.h>
#include <unictype.h>
#include <uninorm.h>
#include <unistr.h>

#include "f2fs.h"

/* The kernel's utf8_casefold writes into F2FS_NAME_LEN bytes, NUL included. */
#define CF_MAX_LEN	(F2FS_NAME_LEN - 1)

bool f2fs_casefold_supported(const struct f2fs_sb_info *sbi)
{
	return f2fs_has_feature(sbi, F2FS_FEATURE_CASEFOLD) &&
	       le16(sbi->raw_super.s_encoding) == F2FS_ENC_UTF8_12_1;
}

static bool strict_encoding(const struct f2fs_sb_info *sbi)
{
	return le16(sbi->raw_super.s_encoding_flags) & F2FS_ENC_STRICT_MODE_FL;
}

/*
 * Newer kernels search a casefolded directory linearly when the hash finds
 * nothing (names hashed under other Unicode rules), unless mkfs set
 * "hashonly". So do we.
 */
bool f2fs_casefold_linear_fallback(const struct f2fs_sb_info *sbi)
{
	return !(le16(sbi->raw_super.s_encoding_flags) & F2FS_ENC_NO_COMPAT_FALLBACK_FL);
}

static bool is_dot_or_dotdot(const char *name, size_t len)
{
	return (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.');
}

/*
 * Append the fold of s[0..n) (no ignorables in it) to out at *olen. The
 * kernel maps each code point on its own (full case folding, then canonical
 * decomposition) and only then puts the combining marks in canonical order.
 * Folding the whole run at once, NFD(toCasefold(NFD(s))), orders the marks
 * before folding, which differs where a mark folds to a base character
 * (U+0345 YPOGEGRAMMENI folds to iota): so fold code point by code point,
 * then normalize, which here only reorders.
 */
static int fold_segment(const uint8_t *s, size_t n, uint8_t *out, size_t *olen)
{
	uint8_t acc[CF_MAX_LEN + 64], buf[64], *r;
	size_t alen = 0, len;

	for (size_t i = 0; i < n;) {
		ucs4_t uc;
		int k = u8_mbtouc(&uc, s + i, n - i);

		if (uc < 0x80) {
			buf[0] = uc >= 'A' && uc <= 'Z' ? uc + 32 : uc;
			r = buf;
			len = 1;
		} else {
			len = sizeof(buf);
			r = u8_casefold(s + i, k, NULL, UNINORM_NFD, buf, &len);
			if (!r)
				return errno == ENOMEM ? -ENOMEM : -EINVAL;
		}
		if (*olen + alen + len <= CF_MAX_LEN)
			memcpy(acc + alen, r, len);
		alen += len;
		if (r != buf)
			free(r);
		if (*olen + alen > CF_MAX_LEN)
			return -ENAMETOOLONG;
		i += k;
	}
	if (!alen)
		return 0;
	len = CF_MAX_LEN - *olen;
	r = u8_normalize(UNINORM_NFD, acc, alen, out + *olen, &len);
	if (!r)
		return errno == ENOMEM ? -ENOMEM : -EINVAL;
	if (r != out + *olen) {
		/* cannot grow (it is decomposed already); be safe anyway */
		if (*olen + len <= CF_MAX_LEN)
			memcpy(out + *olen, r, len);
		free(r);
		if (*olen + len > CF_MAX_LEN)
			return -ENAMETOOLONG;
	}
	*olen += len;
	return 0;
}

/*
 * Fold name into out (CF_MAX_LEN bytes at most). Returns the folded length,
 * -EINVAL for invalid UTF-8 or an empty fold (ignorables only), -ENAMETOOLONG
 * when the fold does not fit (the kernel's utf8_casefold: all "not valid
 * Unicode"), or -ENOMEM.
 */
static int casefold(const uint8_t *name, size_t len, uint8_t *out)
{
	size_t olen = 0, seg = 0, i;
	bool ascii = true;
	int ret;

	for (i = 0; i < len; i++)
		if (name[i] & 0x80)
			ascii = false;
	if (ascii) {
		/* ASCII folds to lower case, decomposes to itself, ignores nothing */
		if (len > CF_MAX_LEN)
			return -ENAMETOOLONG;
		for (i = 0; i < len; i++)
			out[i] = name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i];
		return len;
	}
	if (u8_check(name, len))
		return -EINVAL;
	/*
	 * A Default_Ignorable code point folds to nothing but still ends a run
	 * of combining marks for canonical ordering (it has class 0): fold the
	 * runs between ignorables separately.
	 */
	for (i = 0; i < len;) {
		ucs4_t uc;
		int n = u8_mbtouc(&uc, name + i, len - i);

		if (uc_is_property_default_ignorable_code_point(uc)) {
			ret = fold_segment(name + seg, i - seg, out, &olen);
			if (ret)
				return ret;
			seg = i + n;
		}
		i += n;
	}
	ret = fold_segment(name + seg, len - seg, out, &olen);
	if (!ret && !olen)
		ret = -EINVAL;
	return ret ? ret : (int)olen;
}

bool f2fs_dir_casefolded(const struct f2fs_sb_info *sbi, const struct f2fs_inode_info *dir)
{
	return (dir->flags & F2FS_CASEFOLD_FL) && f2fs_has_feature(sbi, F2FS_FEATURE_CASEFOLD);
}

int f2fs_setup_filename(struct f2fs_sb_info *sbi, const struct f2fs_inode_info *dir,
			const char *name, size_t len, struct f2fs_filename *fn)
{
	const uint8_t *hname = (const uint8_t *)name;
	size_t hlen = len;

	memset(fn, 0, offsetof(struct f2fs_filename, cf_buf));
	fn->name = (const uint8_t *)name;
	fn->len = len;
	if (f2fs_dir_casefolded(sbi, dir) && !is_dot_or_dotdot(name, len)) {
		if (!f2fs_casefold_supported(sbi)) {
			/* unknown encoding (read-only mounts only): exact names, every block */
			fn->linear = true;
		} else {
			int r = casefold(fn->name, len, fn->cf_buf);

			fn->casefold = true;
			if (r == -ENOMEM)
				return r;
			if (r >= 0) {
				fn->cf = fn->cf_buf;
				fn->cf_len = r;
				hname = fn->cf;
				hlen = fn->cf_len;
			} else if (strict_encoding(sbi)) {
				return -EINVAL;
			}
		}
	}
	fn->hash = f2fs_dentry_hash(hname, hlen);
	/* an encrypted directory stores (and hashes) the ciphertext: lib/fscrypt */
	if (f2fs_is_encrypted(dir) && !is_dot_or_dotdot(name, len))
		return f2fs_crypt_setup_filename(sbi, (struct f2fs_inode_info *)dir, name, len, fn);
	return 0;
}

/*
 * As the kernel's generic_ci_match: the exact name first, then the folded
 * forms. An entry that is not valid Unicode matches only exactly.
 */
bool f2fs_match_name(const struct f2fs_filename *fn, const uint8_t *de_name, size_t de_len)
{
	uint8_t buf[F2FS_NAME_LEN];
	int r;

	if (fn->encrypted)
		return f2fs_crypt_match_name(fn, de_name, de_len);
	if (de_len == fn->len && !memcmp(de_name, fn->name, de_len))
		return true;
	if (!fn->cf)
		return false;
	r = casefold(de_name, de_len, buf);
	return r == (int)fn->cf_len && !memcmp(buf, fn->cf, r);
}

bool f2fs_match_name_check(const struct f2fs_filename *fn, const uint8_t *de_name, size_t de_len,
			   uint32_t de_hash, bool *hashes_ok)
{
	uint8_t buf[F2FS_NAME_LEN];
	int r = -EINVAL;
	uint32_t hash;

	if (fn->encrypted)
		return f2fs_crypt_match_name(fn, de_name, de_len);
	if (!is_dot_or_dotdot((const char *)de_name, de_len))
		r = casefold(de_name, de_len, buf);
	hash = r >= 0 ? f2fs_dentry_hash(buf, r) : f2fs_dentry_hash(de_name, de_len);
	if (hash != de_hash || r == -ENOMEM)
		*hashes_ok = false;
	if (de_len == fn->len && !memcmp(de_name, fn->name, de_len))
		return true;
	return fn->cf && r == (int)fn->cf_len && !memcmp(buf, fn->cf, r);
}

/// chattr +F ///

/*
 * The kernel's f2fs_setflags_common: the casefold flag may change only on
 * an image with the feature, only on a directory (f2fs_mask_flags), and only
 * while the directory is empty. Called with the checkpoint lock shared and
 * the inode exclusively (uf2fs_set_flags).
 */
int f2fs_set_casefold_flag(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, bool on)
{
	int ret;

	if (!f2fs_has_feature(sbi, F2FS_FEATURE_CASEFOLD) || !S_ISDIR(fi->mode))
		return -EOPNOTSUPP;
	if (!f2fs_casefold_supported(sbi))
		return -EOPNOTSUPP;
	ret = f2fs_empty_dir(sbi, fi);
	if (ret == 1) {
		if (on)
			fi->flags |= F2FS_CASEFOLD_FL;
		else
			fi->flags &= ~F2FS_CASEFOLD_FL;
		ret = 0;
	} else if (ret == 0) {
		ret = -ENOTEMPTY;
	}
	return ret;
}

/// Super block ///

/*
 * The kernel refuses to mount a casefold image whose encoding it does not
 * know (f2fs_setup_casefold). We read such an image (its casefolded
 * directories by exact name) but do not write it.
 */
int f2fs_casefold_check_sb(struct f2fs_sb_info *sbi, bool writable)
{
	unsigned int enc = le16(sbi->raw_super.s_encoding);

	if (!f2fs_has_feature(sbi, F2FS_FEATURE_CASEFOLD) || f2fs_casefold_supported(sbi))
		return 0;
	if (writable)
		return f2fs_error(sbi, EROFS, "feature \"casefold\" with unknown encoding %u "
				  "(Linux knows only 1, utf8-12.1.0): mount read-only", enc);
	f2fs_msg(sbi, "casefold encoding %u is unknown (Linux refuses this image); casefolded "
		 "directories are searched by exact name", enc);
	return 0;
}

bool uf2fs_casefold_enabled(const struct uf2fs *fs)
{
	return f2fs_has_feature((const struct f2fs_sb_info *)fs, F2FS_FEATURE_CASEFOLD);
}

/// Names in an encrypted directory (fs/f2fs/dir.c around fscrypt) ///

/* No key: the name given is a no-key name, good for lookups only. */
static int setup_nokey_name(const char *name, size_t len, struct f2fs_filename *fn)
{
	fn->nokey = true;
	fn->casefold = false;
	fn->cf = NULL;
	return fscrypt_nokey_decode(name, len, fn->crypt_buf, &fn->hash, &fn->name, &fn->len,
				    &fn->nokey_digest);
}

int f2fs_crypt_setup_filename(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			      const char *name, size_t len, struct f2fs_filename *fn)
{
	struct fscrypt_inode *cdir = &dir->fscrypt;
	size_t clen;
	int ret = fscrypt_prepare(sbi->keyring, cdir);

	fn->encrypted = true;
	fn->usr = (const uint8_t *)name;
	fn->usr_len = len;
	fn->sbi = sbi;
	fn->dir = dir;
	if (ret == -ENOKEY)
		return setup_nokey_name(name, len, fn);
	if (ret)
		return ret;
	ret = fscrypt_fname_encrypt(sbi->keyring, cdir, (const uint8_t *)name, len,
				    F2FS_NAME_LEN, fn->crypt_buf, &clen);
	if (!ret && fn->casefold) {
		/* a casefolded encrypted directory hashes the folded plaintext */
		const uint8_t *h = fn->cf ? fn->cf : fn->usr;
		size_t hl = fn->cf ? fn->cf_len : fn->usr_len;

		ret = fscrypt_fname_siphash(sbi->keyring, cdir, h, hl, &fn->hash);
	}
	if (ret == -ENOKEY)	/* the key went away meanwhile */
		return setup_nokey_name(name, len, fn);
	if (ret)
		return ret;
	fn->name = fn->crypt_buf;
	fn->len = clen;
	if (!fn->casefold)
		fn->hash = f2fs_dentry_hash(fn->name, fn->len);
	return 0;
}

bool f2fs_crypt_match_name(const struct f2fs_filename *fn, const uint8_t *de, size_t de_len)
{
	uint8_t plain[F2FS_NAME_LEN + 1];
	struct f2fs_filename tmp;
	size_t plen;

	if (fn->nokey) {
		if (!fn->nokey_digest)
			return de_len == fn->len && !memcmp(de, fn->name, de_len);
		return fscrypt_nokey_match_digest(fn->crypt_buf, de, de_len);
	}
	if (de_len == fn->len && !memcmp(de, fn->name, de_len))
		return true;
	if (!fn->casefold)
		return false;
	/* casefolded: compare the plaintexts folded, as f2fs_match_ci_name */
	if (fscrypt_fname_decrypt(fn->sbi->keyring, &fn->dir->fscrypt, de, de_len, plain, &plen))
		return false;
	tmp = *fn;
	tmp.encrypted = false;
	tmp.name = fn->usr;
	tmp.len = fn->usr_len;
	return f2fs_match_name(&tmp, plain, plen);
}

int f2fs_crypt_setup_disk_name(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
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
