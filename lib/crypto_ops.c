// SPDX-License-Identifier: GPL-2.0
/*
 * f2fs's side of fscrypt: the struct fscrypt_operations lib/fscrypt calls
 * back (the kernel keeps f2fs_cryptops in fs/f2fs/super.c): the context
 * xattr (index 9, name "c"), the encrypt flag in i_advise, the casefold and
 * empty-directory questions; and the encrypted-name parts of struct
 * f2fs_filename that fs/f2fs/dir.c builds around fscrypt's name transforms
 * (the on-disk hash, casefolded matching, no-key lookups, and the names
 * roll-forward recovery finds in i_name).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "f2fs.h"

#define F2FS_XATTR_NAME_ENCRYPTION_CONTEXT "c"	/* fs/f2fs/xattr.h */

static struct f2fs_inode_info *F2FS_CI(const struct fscrypt_inode *inode)
{
	return (struct f2fs_inode_info *)((char *)inode -
					  offsetof(struct f2fs_inode_info, fscrypt));
}

/// struct fscrypt_operations ///

static uint32_t f2fs_crypt_ino(const struct fscrypt_inode *inode)
{
	return F2FS_CI(inode)->ino;
}

static uint32_t f2fs_crypt_mode(const struct fscrypt_inode *inode)
{
	return F2FS_CI(inode)->mode;
}

static bool f2fs_crypt_is_encrypted(const struct fscrypt_inode *inode)
{
	return f2fs_is_encrypted(F2FS_CI(inode));
}

static bool f2fs_crypt_casefolded(void *fs, const struct fscrypt_inode *dir)
{
	return f2fs_dir_casefolded(fs, F2FS_CI(dir));
}

static ssize_t f2fs_get_context(void *fs, struct fscrypt_inode *inode, void *ctx, size_t len)
{
	uint8_t *area;
	size_t alen;
	ssize_t n;
	int ret = f2fs_read_xattr_area(fs, F2FS_CI(inode), &area, &alen);

	if (ret)
		return ret;
	n = f2fs_xattr_get_indexed(area, alen, F2FS_XATTR_INDEX_ENCRYPTION,
				   F2FS_XATTR_NAME_ENCRYPTION_CONTEXT, ctx, len);
	free(area);
	return n;
}

static int f2fs_set_context(void *fs, struct fscrypt_inode *inode, const void *ctx, size_t len,
			    bool new_inode)
{
	struct f2fs_inode_info *fi = F2FS_CI(inode);
	int ret = f2fs_set_crypt_context(fs, fi, ctx, len);

	if (ret)
		return ret;
	fi->i_advise |= FADVISE_ENCRYPT_BIT;
	if (!new_inode) {
		/* an existing directory: roll-forward cannot replay the policy */
		f2fs_mark_need_cp(fs, fi);
		f2fs_inode_touch(fi, false, true);
	}
	f2fs_mark_inode_dirty(fs, fi);
	return 0;
}

static int f2fs_crypt_empty_dir(void *fs, struct fscrypt_inode *dir)
{
	return f2fs_empty_dir(fs, F2FS_CI(dir));
}

static int f2fs_crypt_error(void *fs, int err, const char *msg)
{
	return f2fs_error(fs, err, "%s", msg);
}

static void f2fs_crypt_msg(void *fs, const char *msg)
{
	f2fs_msg(fs, "%s", msg);
}

static const struct fscrypt_operations f2fs_cryptops = {
	.ino = f2fs_crypt_ino,
	.mode = f2fs_crypt_mode,
	.is_encrypted = f2fs_crypt_is_encrypted,
	.casefolded = f2fs_crypt_casefolded,
	.get_context = f2fs_get_context,
	.set_context = f2fs_set_context,
	.empty_dir = f2fs_crypt_empty_dir,
	.error = f2fs_crypt_error,
	.msg = f2fs_crypt_msg,
};

int f2fs_fscrypt_init(struct f2fs_sb_info *sbi)
{
	return fscrypt_keyring_init(&sbi->keyring, &f2fs_cryptops, sbi, sbi->raw_super.uuid,
				    F2FS_BLKSIZE_BITS);
}

/// Encrypted names in struct f2fs_filename ///

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
