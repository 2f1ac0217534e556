// SPDX-License-Identifier: GPL-2.0
/*
 * f2fs's side of fscrypt: the struct fscrypt_operations lib/fscrypt calls
 * back (the kernel keeps f2fs_cryptops in fs/f2fs/super.c): the context
 * xattr (index 9, name "c"), the encrypt flag in i_advise, the casefold and
 * empty-directory questions. The encrypted-name parts of struct
 * f2fs_filename are casefold.c's, beside the rest of f2fs_setup_filename.
 */
#include <stddef.h>
#include <stdlib.h>

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
