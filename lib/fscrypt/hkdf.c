// SPDX-License-Identifier: GPL-2.0
/*
 * HKDF-SHA512 as fscrypt uses it (the kernel's fs/crypto/hkdf.c): the
 * "fscrypt\0" + context prefix on the info, and the key identifier of a v2
 * master key.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fscrypt_private.h"

/* "fscrypt\0", the context byte, then the info: returns the length, or -EINVAL. */
static int fscrypt_info(uint8_t full[9 + 32], uint8_t context, const uint8_t *info,
			size_t info_len)
{
	if (info_len > 32)
		return -EINVAL;
	memcpy(full, "fscrypt\0", 8);
	full[8] = context;
	if (info_len)
		memcpy(full + 9, info, info_len);
	return 9 + (int)info_len;
}

int fscrypt_hkdf(const uint8_t *master, size_t mlen, uint8_t context, const uint8_t *info,
		 size_t info_len, uint8_t *out, size_t out_len)
{
	uint8_t full[9 + 32];
	int n = fscrypt_info(full, context, info, info_len);

	return n < 0 ? n : fscrypt_hkdf_sha512(master, mlen, full, n, out, out_len);
}

int fscrypt_hkdf_prepared(const struct fscrypt_hkdf *h, uint8_t context, const uint8_t *info,
			  size_t info_len, uint8_t *out, size_t out_len)
{
	uint8_t full[9 + 32];
	int n = fscrypt_info(full, context, info, info_len);

	return n < 0 ? n : fscrypt_hkdf_expand(h, full, n, out, out_len);
}

int fscrypt_key_identifier(const uint8_t *master, size_t mlen,
			   uint8_t id[FSCRYPT_KEY_IDENTIFIER_SIZE])
{
	return fscrypt_hkdf(master, mlen, HKDF_CONTEXT_KEY_IDENTIFIER, NULL, 0, id,
			    FSCRYPT_KEY_IDENTIFIER_SIZE);
}
