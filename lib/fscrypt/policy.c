// SPDX-License-Identifier: GPL-2.0
/*
 * fscrypt policies (the kernel's fs/crypto/policy.c): the encryption context
 * xattr's format, reading an inode's policy, a new inode inheriting its
 * parent's, setting a policy on an empty directory, and the rule for
 * links into an encrypted directory.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "fscrypt_private.h"

bool fscrypt_policy_valid(const struct fscrypt_pol *p)
{
	uint8_t c = p->contents_mode, f = p->filenames_mode;
	bool modes = (c == FSCRYPT_MODE_AES_256_XTS && f == FSCRYPT_MODE_AES_256_CTS) ||
		     (c == FSCRYPT_MODE_AES_128_CBC && f == FSCRYPT_MODE_AES_128_CTS) ||
		     (c == FSCRYPT_MODE_ADIANTUM && f == FSCRYPT_MODE_ADIANTUM) ||
		     (c == FSCRYPT_MODE_AES_256_XTS && f == FSCRYPT_MODE_AES_256_HCTR2);
	unsigned int iv_flags = p->flags & (FSCRYPT_POLICY_FLAG_DIRECT_KEY |
					    FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 |
					    FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32);

	if (!modes || (p->flags & ~0x1fu) || (iv_flags & (iv_flags - 1)))
		return false;
	if (p->version == FSCRYPT_CONTEXT_V1)
		return !(p->flags & (FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 |
				     FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32));
	if (p->version != FSCRYPT_CONTEXT_V2)
		return false;
	/* v2 DIRECT_KEY needs the nonce in a 32-byte IV: Adiantum and HCTR2 only */
	if ((p->flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY) && fscrypt_mode_iv_size(c) < 32)
		return false;
	return !p->log2_data_unit_size ||
	       (p->log2_data_unit_size >= 9 && p->log2_data_unit_size <= FSCRYPT_MAX_LOG2_DATA_UNIT);
}

int fscrypt_parse_context(const uint8_t *ctx, size_t len, struct fscrypt_pol *p,
			  uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE])
{
	memset(p, 0, sizeof(*p));
	if (len < 1)
		return -EINVAL;
	p->version = ctx[0];
	if (p->version == FSCRYPT_CONTEXT_V1 && len == FSCRYPT_CONTEXT_V1_SIZE) {
		p->contents_mode = ctx[1];
		p->filenames_mode = ctx[2];
		p->flags = ctx[3];
		memcpy(p->key_spec, ctx + 4, FSCRYPT_KEY_DESCRIPTOR_SIZE);
		memcpy(nonce, ctx + 12, FSCRYPT_FILE_NONCE_SIZE);
	} else if (p->version == FSCRYPT_CONTEXT_V2 && len == FSCRYPT_CONTEXT_V2_SIZE) {
		p->contents_mode = ctx[1];
		p->filenames_mode = ctx[2];
		p->flags = ctx[3];
		p->log2_data_unit_size = ctx[4];
		if (ctx[5] || ctx[6] || ctx[7])
			return -EINVAL;
		memcpy(p->key_spec, ctx + 8, FSCRYPT_KEY_IDENTIFIER_SIZE);
		memcpy(nonce, ctx + 24, FSCRYPT_FILE_NONCE_SIZE);
	} else {
		return -EINVAL;
	}
	return fscrypt_policy_valid(p) ? 0 : -EINVAL;
}

size_t fscrypt_build_context(const struct fscrypt_pol *p,
			     const uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE], uint8_t *out)
{
	out[0] = p->version;
	out[1] = p->contents_mode;
	out[2] = p->filenames_mode;
	out[3] = p->flags;
	if (p->version == FSCRYPT_CONTEXT_V1) {
		memcpy(out + 4, p->key_spec, FSCRYPT_KEY_DESCRIPTOR_SIZE);
		memcpy(out + 12, nonce, FSCRYPT_FILE_NONCE_SIZE);
		return FSCRYPT_CONTEXT_V1_SIZE;
	}
	out[4] = p->log2_data_unit_size;
	out[5] = out[6] = out[7] = 0;
	memcpy(out + 8, p->key_spec, FSCRYPT_KEY_IDENTIFIER_SIZE);
	memcpy(out + 24, nonce, FSCRYPT_FILE_NONCE_SIZE);
	return FSCRYPT_CONTEXT_V2_SIZE;
}

int fscrypt_get_policy(struct fscrypt_keyring *kr, struct fscrypt_inode *fi,
		       struct fscrypt_pol *pol, uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE])
{
	uint8_t ctx[FSCRYPT_CONTEXT_V2_SIZE + 1];
	ssize_t n = kr->ops->get_context(kr->fs, fi, ctx, sizeof(ctx));

	if (n == -ENODATA || n == -ERANGE)
		return -ENODATA;
	if (n < 0)
		return (int)n;
	return fscrypt_parse_context(ctx, n, pol, nonce);
}

int fscrypt_inherit_context(struct fscrypt_keyring *kr, struct fscrypt_inode *dir,
			    struct fscrypt_inode *fi)
{
	struct fscrypt_pol pol;
	uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE], ctx[FSCRYPT_CONTEXT_V2_SIZE];
	size_t n;
	int ret = fscrypt_get_policy(kr, dir, &pol, nonce);

	if (ret)
		return ret == -ENODATA || ret == -EINVAL ? -EFSCORRUPTED : ret;
	if (getrandom(nonce, sizeof(nonce), 0) != sizeof(nonce))
		return -EIO;
	n = fscrypt_build_context(&pol, nonce, ctx);
	return kr->ops->set_context(kr->fs, fi, ctx, n, true);
}

static bool same_policy(const struct fscrypt_pol *a, const struct fscrypt_pol *b)
{
	return a->version == b->version && a->contents_mode == b->contents_mode &&
	       a->filenames_mode == b->filenames_mode && a->flags == b->flags &&
	       a->log2_data_unit_size == b->log2_data_unit_size &&
	       !memcmp(a->key_spec, b->key_spec, fscrypt_spec_size(a->version));
}

int fscrypt_may_link(struct fscrypt_keyring *kr, struct fscrypt_inode *dir,
		     struct fscrypt_inode *fi)
{
	struct fscrypt_pol pd, pf;
	uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE];
	int ret;

	if (!fscrypt_is_encrypted(kr, dir))
		return 0;
	ret = fscrypt_prepare(kr, dir);
	if (ret)
		return ret;
	if (!fscrypt_is_encrypted(kr, fi))
		return -EXDEV;
	ret = fscrypt_get_policy(kr, dir, &pd, nonce);
	if (!ret)
		ret = fscrypt_get_policy(kr, fi, &pf, nonce);
	if (ret)
		return ret == -ENODATA || ret == -EINVAL ? -EFSCORRUPTED : ret;
	return same_policy(&pd, &pf) ? 0 : -EXDEV;
}

int fscrypt_set_policy(struct fscrypt_keyring *kr, struct fscrypt_inode *dir,
		       const struct fscrypt_pol *pol)
{
	uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE], ctx[FSCRYPT_CONTEXT_V2_SIZE];
	struct fscrypt_pol cur;
	int ret;

	if (!S_ISDIR(fscrypt_mode(kr, dir)))
		return -ENOTDIR;
	if (fscrypt_is_encrypted(kr, dir)) {
		ret = fscrypt_get_policy(kr, dir, &cur, nonce);
		if (ret)
			return ret == -EINVAL || ret == -ENODATA ? -EFSCORRUPTED : ret;
		return same_policy(&cur, pol) ? 0 : -EEXIST;
	}
	/* with v1 there is no key to derive a casefolded directory's hash key from */
	if (pol->version == FSCRYPT_CONTEXT_V1 && kr->ops->casefolded(kr->fs, dir))
		return -EINVAL;
	if (pol->version == FSCRYPT_CONTEXT_V2 &&
	    !fscrypt_has_key(kr, pol->key_spec, fscrypt_spec_size(pol->version)))
		return -ENOKEY;
	ret = kr->ops->empty_dir(kr->fs, dir);
	if (ret <= 0)
		return ret ? ret : -ENOTEMPTY;
	if (getrandom(nonce, sizeof(nonce), 0) != sizeof(nonce))
		return -EIO;
	return kr->ops->set_context(kr->fs, dir, ctx, fscrypt_build_context(pol, nonce, ctx),
				    false);
}
