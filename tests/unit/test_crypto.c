// SPDX-License-Identifier: GPL-2.0
/*
 * fscrypt key derivation and name encoding (lib/crypto.c) against values
 * computed by an independent implementation: Python's "cryptography"
 * package (HKDF-SHA512, AES-ECB) and hashlib/base64, with the inputs below:
 *
 *   HKDF(SHA512, L, salt=None, info=b"fscrypt\0" + bytes([ctx]) + info).derive(mk)
 *   AES-128-ECB(key=nonce).encrypt(v1 master key)
 *   base64.urlsafe_b64encode(le32 hash + le32 0 + name[:149] (+ sha256(name[149:])))
 *
 * The v2 identifier of mk = 00 01 .. 3f is also what Linux's
 * FS_IOC_ADD_ENCRYPTION_KEY returned for that key (kernel 6.1 in QEMU).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fscrypt/fscrypt.h"
#include "fscrypt/alg.h"

static void unhex(const char *s, uint8_t *out)
{
	for (size_t i = 0; s[2 * i]; i++)
		sscanf(s + 2 * i, "%2hhx", &out[i]);
}

static void check_hex(const uint8_t *got, const char *want)
{
	char buf[260];

	for (size_t i = 0; i < strlen(want) / 2; i++)
		sprintf(buf + 2 * i, "%02x", got[i]);
	assert_string_equal(buf, want);
}

static uint8_t mk[64], nonce[16], uuid[16];

static void init_inputs(void)
{
	for (int i = 0; i < 64; i++)
		mk[i] = i;
	for (int i = 0; i < 16; i++) {
		nonce[i] = 0xa0 + i;
		uuid[i] = 0x10 + i;
	}
}

static void t_identifier(void **state)
{
	uint8_t id[16], mk32[32];

	init_inputs();
	assert_int_equal(fscrypt_key_identifier(mk, 64, id), 0);
	check_hex(id, "8699c2c53707405da5aba5ae4d8583c0");
	for (int i = 0; i < 32; i++)
		mk32[i] = 0x40 + i;
	assert_int_equal(fscrypt_key_identifier(mk32, 32, id), 0);
	check_hex(id, "34cb2aa9d04a2ea789ce14645272304b");
}

static void t_v2_keys(void **state)
{
	struct fscrypt_pol pol = { .version = 2, .contents_mode = FSCRYPT_MODE_AES_256_XTS,
				   .filenames_mode = FSCRYPT_MODE_AES_256_CTS };
	uint8_t key[64];

	init_inputs();
	assert_int_equal(fscrypt_derive_enc_key(&pol, mk, 64, nonce, 1, uuid, key), 0);
	check_hex(key, "bd5252baa3698125929bab1ef11f6f7ec773084fd47cc5d7fd5a07d422da343c"
		  "73a5f95f05137c1585fe6bfd588dff7de3e1173fe2e4b1f987819eca1a9ec7a1");
	/* the filenames key is the first 32 bytes of the same HKDF output */
	assert_int_equal(fscrypt_derive_enc_key(&pol, mk, 64, nonce, 4, uuid, key), 0);
	check_hex(key, "bd5252baa3698125929bab1ef11f6f7ec773084fd47cc5d7fd5a07d422da343c");
	pol.flags = FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64;
	assert_int_equal(fscrypt_derive_enc_key(&pol, mk, 64, nonce, 1, uuid, key), 0);
	check_hex(key, "a0d8d56c0ac19ada08e01114d88107cdd418f5b23a206ba2688f9d392ed2e6a2"
		  "2ddae41f55b587ad60008a953de228efffa7f266c32b6c3dd718000b51385c3b");
	pol.flags = FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32;
	assert_int_equal(fscrypt_derive_enc_key(&pol, mk, 64, nonce, 1, uuid, key), 0);
	check_hex(key, "67855e8c17aa7d2c32536023ecd509e15c1f54d8c0a27b9b06fa11acd48238ca"
		  "88e5820707fe76877eb5d73578c165a8be7ebfec3bbf5b847e65c3a37257a4de");
	pol.flags = FSCRYPT_POLICY_FLAG_DIRECT_KEY;
	pol.contents_mode = pol.filenames_mode = FSCRYPT_MODE_ADIANTUM;
	assert_int_equal(fscrypt_derive_enc_key(&pol, mk, 64, nonce, 9, uuid, key), 0);
	check_hex(key, "9efb31534e244dd4c251dd5d540c714ab1cfcfaf0008a870cc298b52b32b7d39");
	/* the casefolded directory's SipHash key */
	assert_int_equal(fscrypt_hkdf(mk, 64, HKDF_CONTEXT_DIRHASH_KEY, nonce, 16, key, 16), 0);
	check_hex(key, "0e98290b5ae8a5330b118b3edd9c21d1");
}

static void t_v1_keys(void **state)
{
	struct fscrypt_pol pol = { .version = 1, .contents_mode = FSCRYPT_MODE_AES_256_XTS,
				   .filenames_mode = FSCRYPT_MODE_AES_256_CTS };
	uint8_t k1[64], key[64];

	init_inputs();
	unhex("f0e1d2c3b4a5968778695a4b3c2d1e0f0123456789abcdef0123456789abcdef"
	      "fedcba9876543210fedcba98765432100f1e2d3c4b5a69788796a5b4c3d2e1f0", k1);
	assert_int_equal(fscrypt_derive_enc_key(&pol, k1, 64, nonce, 1, uuid, key), 0);
	check_hex(key, "9b540727e4d00c3f45fab3dc27e0012f7d0401a61e11eeedb721937868d2b955"
		  "339990f7636edaaa2a060ed6f4f5486cbe67536621f10683f50d6383e675a89b");
	/* a v1 key shorter than the mode's key is no key, as in the kernel */
	assert_int_equal(fscrypt_derive_enc_key(&pol, k1, 32, nonce, 1, uuid, key), -ENOKEY);
	pol.flags = FSCRYPT_POLICY_FLAG_DIRECT_KEY;
	assert_int_equal(fscrypt_derive_enc_key(&pol, k1, 64, nonce, 1, uuid, key), 0);
	assert_memory_equal(key, k1, 64);
}

static void t_nokey_names(void **state)
{
	uint8_t ct[16], ct2[200], back[FSCRYPT_NOKEY_NAME_MAX];
	char out[FSCRYPT_NOKEY_NAME_MAX_ENCODED + 1];
	size_t n;

	for (int i = 0; i < 16; i++)
		ct[i] = 200 + i;
	n = fscrypt_nokey_encode(0x12345678, 0, ct, 16, out);
	assert_string_equal(out, "eFY0EgAAAADIycrLzM3Oz9DR0tPU1dbX");
	assert_int_equal(n, strlen(out));
	for (int i = 0; i < 200; i++)
		ct2[i] = (i * 7) & 255;
	n = fscrypt_nokey_encode(0xdeadbeef, 0, ct2, 200, out);
	assert_int_equal(n, FSCRYPT_NOKEY_NAME_MAX_ENCODED);
	assert_string_equal(out,
		"776t3gAAAAAABw4VHCMqMTg_Rk1UW2JpcHd-hYyTmqGor7a9xMvS2eDn7vX8AwoRGB8mLTQ7QklQV15l"
		"bHN6gYiPlp2kq7K5wMfO1dzj6vH4_wYNFBsiKTA3PkVMU1phaG92fYSLkpmgp661vMPK0djf5u30-wIJ"
		"EBceJSwzOkFIT1ZdZGtyeYCHjpWco6qxuL_GzdTb4unw9_4FDFxbGC1FYTZBCbmXwT-et0buhXEcLZ5t"
		"A6szokk8qWGt");
	assert_int_equal(fscrypt_base64url_decode(out, n, back, sizeof(back)),
			 FSCRYPT_NOKEY_NAME_MAX);
	assert_memory_equal(back + 8, ct2, FSCRYPT_NOKEY_BYTES);
	/* strict decoding: no padding, no foreign characters, no stray trailing bits */
	assert_true(fscrypt_base64url_decode("eFY0Eg==", 8, back, sizeof(back)) < 0);
	assert_true(fscrypt_base64url_decode("eF+0", 4, back, sizeof(back)) < 0);
	assert_true(fscrypt_base64url_decode("eB", 2, back, sizeof(back)) < 0);
	assert_int_equal(fscrypt_base64url_decode("eA", 2, back, sizeof(back)), 1);
}

static void t_sizes_and_context(void **state)
{
	struct fscrypt_pol p = { .version = 2, .contents_mode = 1, .filenames_mode = 4,
				 .flags = 0x02 }, q;
	uint8_t ctx[40], n2[16];

	/* padding 4 << (flags & 3), at least 16 bytes, at most the name limit */
	assert_int_equal(fscrypt_fname_encrypted_size(1, 4, 255), 16);
	assert_int_equal(fscrypt_fname_encrypted_size(17, 4, 255), 20);
	assert_int_equal(fscrypt_fname_encrypted_size(17, 32, 255), 32);
	assert_int_equal(fscrypt_fname_encrypted_size(250, 32, 255), 255);
	init_inputs();
	memcpy(p.key_spec, mk, 16);
	assert_int_equal(fscrypt_build_context(&p, nonce, ctx), 40);
	assert_int_equal(fscrypt_parse_context(ctx, 40, &q, n2), 0);
	assert_memory_equal(&p, &q, sizeof(p));
	assert_memory_equal(nonce, n2, 16);
	ctx[2] = FSCRYPT_MODE_AES_128_CTS;	/* XTS contents with AES-128 names: invalid */
	assert_int_equal(fscrypt_parse_context(ctx, 40, &q, n2), -EINVAL);
	ctx[2] = 4;
	assert_int_equal(fscrypt_parse_context(ctx, 28, &q, n2), -EINVAL);
	p.version = 1;
	assert_int_equal(fscrypt_build_context(&p, nonce, ctx), 28);
	assert_int_equal(fscrypt_parse_context(ctx, 28, &q, n2), 0);
	assert_memory_equal(q.key_spec, mk, 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_identifier),
		cmocka_unit_test(t_v2_keys),
		cmocka_unit_test(t_v1_keys),
		cmocka_unit_test(t_nokey_names),
		cmocka_unit_test(t_sizes_and_context),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
