// SPDX-License-Identifier: GPL-2.0
/*
 * The public fscrypt calls of libuf2fs: adding and removing master keys on
 * a mount, their status, and the encryption policy of an inode, as Linux's
 * FS_IOC_ADD_ENCRYPTION_KEY, FS_IOC_REMOVE_ENCRYPTION_KEY,
 * FS_IOC_GET_ENCRYPTION_KEY_STATUS, FS_IOC_GET_ENCRYPTION_POLICY_EX and
 * FS_IOC_SET_ENCRYPTION_POLICY do. The keyring, derivations and transforms
 * are lib/fscrypt's; this file takes the filesystem's locks around them.
 */
#include <stdlib.h>
#include <sys/random.h>

#include "f2fs.h"

#define SBI(fs) ((struct f2fs_sb_info *)(fs))

int uf2fs_add_key(struct uf2fs *fs, const uint8_t *key, size_t len, const uint8_t *desc,
		  uint8_t id[16])
{
	return fscrypt_add_key(SBI(fs)->keyring, key, len, desc, id);
}

static int spec_len_ok(size_t spec_len)
{
	return spec_len == FSCRYPT_KEY_DESCRIPTOR_SIZE || spec_len == FSCRYPT_KEY_IDENTIFIER_SIZE;
}

/*
 * Linux syncs the filesystem before it wipes a key, so no dirty data of a
 * file is left that could not be encrypted any more; here a checkpoint under
 * the exclusive checkpoint lock does that, and no operation can dirty a file
 * again before the key is gone. The decrypted folios of the key's files
 * leave the cache with it.
 */
int uf2fs_remove_key(struct uf2fs *fs, const uint8_t *spec, size_t spec_len)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	uint32_t *inos = NULL;
	size_t n = 0;
	int ret;

	if (!spec_len_ok(spec_len))
		return -EINVAL;
	pthread_rwlock_wrlock(&sbi->cp_rwsem);
	ret = sbi->opts.read_only ? 0 : f2fs_write_checkpoint(sbi, false);
	if (!ret)
		ret = fscrypt_key_users(sbi->keyring, spec, spec_len, &inos, &n);
	if (!ret)
		ret = fscrypt_remove_key(sbi->keyring, spec, spec_len);
	for (size_t i = 0; !ret && i < n; i++)
		folio_invalidate_owner(sbi, MAP_DATA, inos[i]);
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	free(inos);
	return ret;
}

int uf2fs_key_status(struct uf2fs *fs, const uint8_t *spec, size_t spec_len)
{
	if (!spec_len_ok(spec_len))
		return -EINVAL;
	return fscrypt_has_key(SBI(fs)->keyring, spec, spec_len) ? 1 : 0;
}

int uf2fs_key_users(struct uf2fs *fs, const uint8_t *spec, size_t spec_len, uint32_t **inos,
		    size_t *n)
{
	if (!spec_len_ok(spec_len))
		return -EINVAL;
	return fscrypt_key_users(SBI(fs)->keyring, spec, spec_len, inos, n);
}

static void pol_to_user(const struct fscrypt_pol *k, struct uf2fs_fscrypt_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->version = k->version;
	p->contents_mode = k->contents_mode;
	p->filenames_mode = k->filenames_mode;
	p->flags = k->flags;
	p->log2_data_unit_size = k->log2_data_unit_size;
	memcpy(p->key_spec, k->key_spec, k->version == FSCRYPT_CONTEXT_V1 ?
	       FSCRYPT_KEY_DESCRIPTOR_SIZE : FSCRYPT_KEY_IDENTIFIER_SIZE);
}

int uf2fs_get_policy(struct uf2fs *fs, uint32_t ino, struct uf2fs_fscrypt_policy *p)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE];
	struct f2fs_inode_info *fi;
	struct fscrypt_pol k;
	int ret;

	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	fi = f2fs_iget(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
	} else {
		ret = f2fs_is_encrypted(fi) ? fscrypt_get_policy(sbi->keyring, &fi->fscrypt, &k, nonce) : -ENODATA;
		if (ret == -EINVAL)
			ret = f2fs_error(sbi, EFSCORRUPTED, "inode %u: invalid encryption context",
					 fi->ino);
		f2fs_iput(sbi, fi);
	}
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	if (!ret)
		pol_to_user(&k, p);
	return ret;
}

int uf2fs_set_policy(struct uf2fs *fs, uint32_t ino, const struct uf2fs_fscrypt_policy *p)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct f2fs_inode_info *fi;
	struct fscrypt_pol k = {
		.version = p->version, .contents_mode = p->contents_mode,
		.filenames_mode = p->filenames_mode, .flags = p->flags,
		.log2_data_unit_size = p->log2_data_unit_size,
	};
	int ret;

	memcpy(k.key_spec, p->key_spec, sizeof(k.key_spec));
	if (k.version == FSCRYPT_CONTEXT_V1)
		memset(k.key_spec + FSCRYPT_KEY_DESCRIPTOR_SIZE, 0,
		       sizeof(k.key_spec) - FSCRYPT_KEY_DESCRIPTOR_SIZE);
	if (!fscrypt_policy_valid(&k))
		return -EINVAL;
	if (!f2fs_has_feature(sbi, F2FS_FEATURE_ENCRYPT))
		return -EOPNOTSUPP;
	ret = f2fs_begin_write(sbi);
	if (ret)
		return ret;
	fi = f2fs_iget(sbi, ino);
	if (IS_ERR(fi)) {
		ret = PTR_ERR(fi);
	} else {
		pthread_rwlock_wrlock(&fi->i_rwsem);
		ret = fscrypt_set_policy(sbi->keyring, &fi->fscrypt, &k);
		pthread_rwlock_unlock(&fi->i_rwsem);
		f2fs_iput(sbi, fi);
	}
	f2fs_end_write(sbi);
	return ret;
}
