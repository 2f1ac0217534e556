// SPDX-License-Identifier: GPL-2.0
/*
 * The hashes of fs-verity (the kernel's fs/verity/hash_algs.c): a Merkle
 * block hashed after the zero-padded salt, and plain digests. SHA-256 and
 * SHA-512 come from OpenSSL.
 */
#include <errno.h>
#include <linux/fsverity.h>
#include <openssl/evp.h>
#include <string.h>

#include "fsverity.h"

static int hash_parts(const struct verity_params *p, const void *a, size_t alen, const void *b,
		      size_t blen, uint8_t *out)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok;

	if (!ctx)
		return -ENOMEM;
	ok = EVP_DigestInit_ex(ctx, p->md, NULL) && (!alen || EVP_DigestUpdate(ctx, a, alen)) &&
	     EVP_DigestUpdate(ctx, b, blen) && EVP_DigestFinal_ex(ctx, out, NULL);
	EVP_MD_CTX_free(ctx);
	return ok ? 0 : -EIO;
}

int verity_hash_block(const struct verity_params *p, const void *block, uint8_t *out)
{
	return hash_parts(p, p->padded_salt, p->padded_salt_size, block, p->bs, out);
}

int verity_hash(const struct verity_params *p, const void *buf, size_t len, uint8_t *out)
{
	return hash_parts(p, NULL, 0, buf, len, out);
}
