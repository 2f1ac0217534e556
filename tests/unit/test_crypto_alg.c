// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the fscrypt primitives (lib/crypto_alg.c) against published
 * test vectors: IEEE 1619 (XTS-AES-256 vector 10), RFC 3962 (CBC-CTS, which
 * is CS3, on AES-128), RFC 5869's test case 3 run with SHA-512, the SipHash
 * paper's reference outputs, Linux's crypto/testmgr.h vectors for
 * adiantum(xchacha12,aes) and hctr2(aes), the HCTR2 reference's, and RFC
 * 8452's POLYVAL example. Where no published vector covers a case (ESSIV,
 * CTS on AES-256, the one-block CTS message, HKDF with an info string), the
 * test builds the answer from plain OpenSSL calls written out here,
 * independently of the library. Linux itself is the second referee:
 * fixtures/kernel_crypto.h holds what the kernel's xts(aes),
 * essiv(cbc(aes),sha256), cts(cbc(aes)) and adiantum(xchacha12,aes) made of
 * whole 4096-byte blocks and name-sized messages, and what its xchacha12 and
 * nhpoly1305 made on their own (regenerate with fixtures/gen_kernel_crypto.sh).
 * Also: in-place operation, decryption as the inverse, argument checks, one
 * cipher used by several threads at once, and the secret allocator's locking
 * and wiping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "fscrypt/alg.h"
#include "fscrypt/alg_int.h"

struct kfx_cipher {
	const char *alg;
	unsigned int key_len, iv_len, len, seed;
	const char *ct;
};

struct kfx_xchacha {
	unsigned int len, pos, seed;
	const char *stream;
};

struct kfx_nhpoly {
	unsigned int len, seed;
	const char *hash;
};

#include "fixtures/kernel_crypto.h"

/* /// Helpers /// */

static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	for (; s[0] && s[1]; s += 2) {
		unsigned int b;

		assert_true(n < cap);
		assert_int_equal(sscanf(s, "%2x", &b), 1);
		out[n++] = (uint8_t)b;
	}
	assert_int_equal(*s, 0);
	return n;
}

/* Fills the whole buffer from hex, which must be exactly that long. */
#define HEX(buf, s) assert_int_equal(unhex((s), (buf), sizeof(buf)), sizeof(buf))

static void seq_bytes(uint8_t *buf, size_t len, unsigned int start)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(start + i);
}

/* One-shot EVP cipher call, padding off: the tests' independent reference. */
static void evp_crypt(const EVP_CIPHER *ciph, const uint8_t *key, const uint8_t *iv, int enc,
		      const uint8_t *in, uint8_t *out, size_t len)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int n = 0, m = 0;

	assert_non_null(ctx);
	assert_int_equal(EVP_CipherInit_ex(ctx, ciph, NULL, key, iv, enc), 1);
	EVP_CIPHER_CTX_set_padding(ctx, 0);
	assert_int_equal(EVP_CipherUpdate(ctx, out, &n, in, (int)len), 1);
	assert_int_equal(EVP_CipherFinal_ex(ctx, out + n, &m), 1);
	assert_int_equal(n + m, (int)len);
	EVP_CIPHER_CTX_free(ctx);
}

/* Encrypt with the cipher, compare, decrypt back, and do both in place too. */
static void check_both_ways(struct fscrypt_cipher *c, bool names, const uint8_t *iv,
			    const uint8_t *pt, const uint8_t *ct, size_t len)
{
	uint8_t *buf = malloc(len), *buf2 = malloc(len);
	int (*enc)(struct fscrypt_cipher *, const uint8_t *, const uint8_t *, uint8_t *, size_t) =
		names ? fscrypt_encrypt_name : fscrypt_encrypt_block;
	int (*dec)(struct fscrypt_cipher *, const uint8_t *, const uint8_t *, uint8_t *, size_t) =
		names ? fscrypt_decrypt_name : fscrypt_decrypt_block;

	assert_non_null(buf);
	assert_non_null(buf2);
	assert_int_equal(enc(c, iv, pt, buf, len), 0);
	assert_memory_equal(buf, ct, len);
	assert_int_equal(dec(c, iv, ct, buf2, len), 0);
	assert_memory_equal(buf2, pt, len);
	memcpy(buf, pt, len);
	assert_int_equal(enc(c, iv, buf, buf, len), 0);
	assert_memory_equal(buf, ct, len);
	assert_int_equal(dec(c, iv, buf, buf, len), 0);
	assert_memory_equal(buf, pt, len);
	free(buf);
	free(buf2);
}

/* /// The mode table /// */

static void t_mode_table(void **state)
{
	static const struct {
		int mode;
		const char *name;
		size_t key, iv;
	} want[] = {
		{ 1, "AES-256-XTS", 64, 16 },	{ 4, "AES-256-CTS", 32, 16 },
		{ 5, "AES-128-CBC", 16, 16 },	{ 6, "AES-128-CTS", 16, 16 },
		{ 9, "Adiantum", 32, 32 },	{ 10, "AES-256-HCTR2", 32, 32 },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(fscrypt_mode_key_size(want[i].mode), want[i].key);
		assert_int_equal(fscrypt_mode_iv_size(want[i].mode), want[i].iv);
		assert_string_equal(fscrypt_mode_name(want[i].mode), want[i].name);
		assert_int_equal(fscrypt_mode_from_name(want[i].name), want[i].mode);
	}
	assert_int_equal(fscrypt_mode_from_name("adiantum"), FSCRYPT_MODE_ADIANTUM);
	assert_int_equal(fscrypt_mode_from_name("aes-256-xts"), FSCRYPT_MODE_AES_256_XTS);
	/* SM4 (7, 8) and unused numbers are not modes here. */
	for (int m = -1; m < 16; m++) {
		if (m == 1 || m == 4 || m == 5 || m == 6 || m == 9 || m == 10)
			continue;
		assert_int_equal(fscrypt_mode_key_size(m), 0);
		assert_int_equal(fscrypt_mode_iv_size(m), 0);
		assert_null(fscrypt_mode_name(m));
	}
	assert_int_equal(fscrypt_mode_from_name("SM4-XTS"), -EINVAL);
	assert_int_equal(fscrypt_mode_from_name("AES-256-XTSX"), -EINVAL);
	assert_int_equal(fscrypt_mode_from_name(""), -EINVAL);
	assert_int_equal(fscrypt_mode_from_name(NULL), -EINVAL);
}

/* /// AES-256-XTS: IEEE 1619-2007 annex B, vector 10 /// */

static const char xts_v10_ct[] =
	"1c3b3a102f770386e4836c99e370cf9bea00803f5e482357a4ae12d414a3e63b"
	"5d31e276f8fe4a8d66b317f9ac683f44680a86ac35adfc3345befecb4bb188fd"
	"5776926c49a3095eb108fd1098baec70aaa66999a72a82f27d848b21d4a741b0"
	"c5cd4d5fff9dac89aeba122961d03a757123e9870f8acf1000020887891429ca"
	"2a3e7a7d7df7b10355165c8b9a6d0a7de8b062c4500dc4cd120c0f7418dae3d0"
	"b5781c34803fa75421c790dfe1de1834f280d7667b327f6c8cd7557e12ac3a0f"
	"93ec05c52e0493ef31a12d3d9260f79a289d6a379bc70c50841473d1a8cc81ec"
	"583e9645e07b8d9670655ba5bbcfecc6dc3966380ad8fecb17b6ba02469a020a"
	"84e18e8f84252070c13e9f1f289be54fbc481457778f616015e1327a02b140f1"
	"505eb309326d68378f8374595c849d84f4c333ec4423885143cb47bd71c5edae"
	"9be69a2ffeceb1bec9de244fbe15992b11b77c040f12bd8f6a975a44a0f90c29"
	"a9abc3d4d893927284c58754cce294529f8614dcd2aba991925fedc4ae74ffac"
	"6e333b93eb4aff0479da9a410e4450e0dd7ae4c6e2910900575da401fc07059f"
	"645e8b7e9bfdef33943054ff84011493c27b3429eaedb4ed5376441a77ed4385"
	"1ad77f16f541dfd269d50d6a5f14fb0aab1cbb4c1550be97f7ab4066193c4caa"
	"773dad38014bd2092fa755c824bb5e54c4f36ffda9fcea70b9c6e693e148c151";

static void t_xts_ieee1619(void **state)
{
	uint8_t key[64], iv[16] = { 0xff }, pt[512], ct[512];
	struct fscrypt_cipher *c;

	HEX(key, "2718281828459045235360287471352662497757247093699959574966967627"
		 "3141592653589793238462643383279502884197169399375105820974944592");
	HEX(ct, xts_v10_ct);
	seq_bytes(pt, sizeof(pt), 0);
	assert_int_equal(fscrypt_cipher_new(&c, FSCRYPT_MODE_AES_256_XTS, key, 64), 0);
	check_both_ways(c, false, iv, pt, ct, sizeof(pt));
	/* The data unit number is little-endian: 0xff in the last byte differs. */
	uint8_t iv_be[16] = { [15] = 0xff }, out[512];

	assert_int_equal(fscrypt_encrypt_block(c, iv_be, pt, out, sizeof(pt)), 0);
	assert_memory_not_equal(out, ct, sizeof(ct));
	/* Contents modes refuse names and partial blocks. */
	assert_int_equal(fscrypt_encrypt_name(c, iv, pt, out, 32), -EINVAL);
	assert_int_equal(fscrypt_encrypt_block(c, iv, pt, out, 24), -EINVAL);
	assert_int_equal(fscrypt_encrypt_block(c, iv, pt, out, 0), -EINVAL);
	fscrypt_cipher_free(c);
	/* Key length must be the mode's. */
	assert_int_equal(fscrypt_cipher_new(&c, FSCRYPT_MODE_AES_256_XTS, key, 32), -EINVAL);
	assert_null(c);
	assert_int_equal(fscrypt_cipher_new(&c, 7, key, 64), -EINVAL);
	/* Equal halves are a weak XTS key, which Linux refuses for fscrypt. */
	memcpy(key + 32, key, 32);
	assert_int_equal(fscrypt_cipher_new(&c, FSCRYPT_MODE_AES_256_XTS, key, 64), -EINVAL);
	key[63] ^= 1;
	assert_int_equal(fscrypt_cipher_new(&c, FSCRYPT_MODE_AES_256_XTS, key, 64), 0);
	fscrypt_cipher_free(c);
}

/* /// AES-128-CBC with ESSIV: cross-checked against plain OpenSSL calls /// */

static void t_cbc_essiv(void **state)
{
	uint8_t key[16], iv[16], pt[4096], ct[4096], hash[32], essiv[16];
	struct fscrypt_cipher *c;
	unsigned int hlen = 0;

	seq_bytes(key, sizeof(key), 0x40);
	memset(iv, 0, sizeof(iv));
	iv[0] = 0x2a;	/* fscrypt's IV: the block number, little-endian */
	for (size_t i = 0; i < sizeof(pt); i++)
		pt[i] = (uint8_t)(i * 7 + 3);
	/* Linux's essiv(cbc(aes),sha256): IV' = AES-256_{SHA-256(key)}(IV). */
	assert_int_equal(EVP_Digest(key, sizeof(key), hash, &hlen, EVP_sha256(), NULL), 1);
	assert_int_equal(hlen, 32);
	evp_crypt(EVP_aes_256_ecb(), hash, NULL, 1, iv, essiv, 16);
	evp_crypt(EVP_aes_128_cbc(), key, essiv, 1, pt, ct, sizeof(pt));

	assert_int_equal(fscrypt_cipher_new(&c, FSCRYPT_MODE_AES_128_CBC, key, 16), 0);
	check_both_ways(c, false, iv, pt, ct, sizeof(pt));
	/* And plain CBC with the unencrypted IV is not what it does. */
	uint8_t plain_cbc[4096];

	evp_crypt(EVP_aes_128_cbc(), key, iv, 1, pt, plain_cbc, sizeof(pt));
	assert_memory_not_equal(plain_cbc, ct, sizeof(ct));
	assert_int_equal(fscrypt_encrypt_name(c, iv, pt, ct, 32), -EINVAL);
	fscrypt_cipher_free(c);
}

/* /// CBC-CTS (CS3): RFC 3962 appendix B, and AES-256 built by hand /// */

static const struct {
	const char *pt, *ct;
} rfc3962[] = {
	{ "4920776f756c64206c696b652074686520", "c6353568f2bf8cb4d8a580362da7ff7f97" },
	{ "4920776f756c64206c696b65207468652047656e6572616c20476175277320",
	  "fc00783e0efdb2c1d445d4c8eff7ed2297687268d6ecccc0c07b25e25ecfe5" },
	{ "4920776f756c64206c696b65207468652047656e6572616c2047617527732043",
	  "39312523a78662d5be7fcbcc98ebf5a897687268d6ecccc0c07b25e25ecfe584" },
	{ "4920776f756c64206c696b65207468652047656e6572616c20476175277320"
	  "436869636b656e2c20706c656173652c",
	  "97687268d6ecccc0c07b25e25ecfe584b3fffd940c16a18c1b5549d2f838029e"
	  "39312523a78662d5be7fcbcc98ebf5" },
	{ "4920776f756c64206c696b65207468652047656e6572616c20476175277320"
	  "436869636b656e2c20706c656173652c20",
	  "97687268d6ecccc0c07b25e25ecfe5849dad8bbb96c4cdc03bc103e1a194bbd8"
	  "39312523a78662d5be7fcbcc98ebf5a8" },
	{ "4920776f756c64206c696b65207468652047656e6572616c20476175277320"
	  "436869636b656e2c20706c656173652c20616e6420776f6e746f6e20736f75702e",
	  "97687268d6ecccc0c07b25e25ecfe58439312523a78662d5be7fcbcc98ebf5a8"
	  "4807efe836ee89a526730dbc2f7bc8409dad8bbb96c4cdc03bc103e1a194bbd8" },
};

static void t_cts_rfc3962(void **state)
{
	uint8_t key[16], iv[16] = { 0 }, pt[64], ct[64];
	struct fscrypt_cipher *c;

	HEX(key, "636869636b656e207465726979616b69");
	assert_int_equal(fscrypt_cipher_new(&c, FSCRYPT_MODE_AES_128_CTS, key, 16), 0);
	for (size_t i = 0; i < sizeof(rfc3962) / sizeof(rfc3962[0]); i++) {
		size_t n = unhex(rfc3962[i].pt, pt, sizeof(pt));

		assert_int_equal(unhex(rfc3962[i].ct, ct, sizeof(ct)), n);
		check_both_ways(c, true, iv, pt, ct, n);
	}
	/* Names are at least one block; contents are not this mode's job. */
	assert_int_equal(fscrypt_encrypt_name(c, iv, pt, ct, 15), -EINVAL);
	assert_int_equal(fscrypt_decrypt_name(c, iv, pt, ct, 0), -EINVAL);
	assert_int_equal(fscrypt_encrypt_block(c, iv, pt, ct, 32), -EINVAL);
	fscrypt_cipher_free(c);
}

/*
 * CS3 from its definition: CBC over the message zero-padded to whole
 * blocks, then the last two ciphertext blocks swapped and the (new) last
 * one cut to the message's length. One block is plain CBC, as in Linux.
 */
static void cs3_reference(const EVP_CIPHER *cbc, const uint8_t *key, const uint8_t *iv,
			  const uint8_t *pt, uint8_t *ct, size_t len)
{
	size_t padded = (len + 15) & ~(size_t)15;
	uint8_t buf[128] = { 0 }, out[128];

	assert_true(padded <= sizeof(buf));
	memcpy(buf, pt, len);
	evp_crypt(cbc, key, iv, 1, buf, out, padded);
	if (len <= 16) {
		memcpy(ct, out, len);
		return;
	}
	memcpy(ct, out, padded - 32);
	memcpy(ct + padded - 32, out + padded - 16, 16);
	memcpy(ct + padded - 16, out + padded - 32, len - (padded - 16));
}

static void t_cts_cross(void **state)
{
	uint8_t key[32], iv[16], pt[100], ct[100];
	struct fscrypt_cipher *c128, *c256;

	seq_bytes(key, sizeof(key), 0x90);
	seq_bytes(iv, sizeof(iv), 0x11);
	seq_bytes(pt, sizeof(pt), 0x33);
	assert_int_equal(fscrypt_cipher_new(&c128, FSCRYPT_MODE_AES_128_CTS, key, 16), 0);
	assert_int_equal(fscrypt_cipher_new(&c256, FSCRYPT_MODE_AES_256_CTS, key, 32), 0);
	for (size_t len = 16; len <= sizeof(pt); len++) {
		cs3_reference(EVP_aes_128_cbc(), key, iv, pt, ct, len);
		check_both_ways(c128, true, iv, pt, ct, len);
		cs3_reference(EVP_aes_256_cbc(), key, iv, pt, ct, len);
		check_both_ways(c256, true, iv, pt, ct, len);
	}
	fscrypt_cipher_free(c128);
	fscrypt_cipher_free(c256);
}

/* /// HKDF-SHA512 /// */

static void t_hkdf(void **state)
{
	uint8_t ikm[22], want[128], out[128];

	/* RFC 5869 test case 3 (no salt, no info) computed with SHA-512. */
	memset(ikm, 0x0b, sizeof(ikm));
	HEX(want, "f5fa02b18298a72a8c23898a8703472c6eb179dc204c03425c970e3b164bf90f"
		  "ff22d04836d0e2343bacc4e7cb6045faaa698e0e3b3eb91331306def1db8319e"
		  "8a699b5ee45ab993847dc4df75bde023692c8c0710a67a55123f10a8b2d8327f"
		  "9eb138da69d5bea1e09a39ea99a341c00b2c9ee0d4ba632115aec516bb71e922");
	assert_int_equal(fscrypt_hkdf_sha512(ikm, sizeof(ikm), NULL, 0, out, 42), 0);
	assert_memory_equal(out, want, 42);
	assert_int_equal(fscrypt_hkdf_sha512(ikm, sizeof(ikm), NULL, 0, out, 128), 0);
	assert_memory_equal(out, want, 128);

	/*
	 * With an info string (fscrypt always passes one), against HKDF spelled
	 * out with HMAC-SHA512: PRK = HMAC(0^64, ikm), T(i) = HMAC(PRK, T(i-1) |
	 * info | i).
	 */
	static const uint8_t info[] = "fscrypt\0\x01" "context";
	uint8_t zeros[64] = { 0 }, prk[64], t[64], msg[64 + sizeof(info) + 1], ref[128];
	unsigned int len = 0;
	size_t tlen = 0;

	seq_bytes(ikm, sizeof(ikm), 1);
	assert_non_null(HMAC(EVP_sha512(), zeros, 64, ikm, sizeof(ikm), prk, &len));
	for (int i = 1; i <= 2; i++) {
		memcpy(msg, t, tlen);
		memcpy(msg + tlen, info, sizeof(info));
		msg[tlen + sizeof(info)] = (uint8_t)i;
		assert_non_null(HMAC(EVP_sha512(), prk, 64, msg, tlen + sizeof(info) + 1, t, &len));
		memcpy(ref + (i - 1) * 64, t, 64);
		tlen = 64;
	}
	assert_int_equal(fscrypt_hkdf_sha512(ikm, sizeof(ikm), info, sizeof(info), out, 100), 0);
	assert_memory_equal(out, ref, 100);

	assert_int_equal(fscrypt_hkdf_sha512(NULL, 0, info, 1, out, 16), -EINVAL);
	assert_int_equal(fscrypt_hkdf_sha512(ikm, 22, info, 1, out, 0), -EINVAL);
	assert_int_equal(fscrypt_hkdf_sha512(ikm, 22, info, 1, out, 255 * 64 + 1), -EINVAL);
}

/*
 * The prepared HKDF (extract once, expand per key) against the one-shot
 * HKDF above, for the RFC 5869 case 3 vector, one- and multi-block outputs,
 * and repeated expands of one prepared extract.
 */
static void t_hkdf_prepared(void **state)
{
	static const uint8_t info[] = "fscrypt\0\x02" "0123456789abcdef";
	uint8_t ikm[64], rfc[128], want[200], out[200];
	struct fscrypt_hkdf *h = NULL;

	memset(ikm, 0x0b, 22);
	assert_int_equal(fscrypt_hkdf_new(&h, ikm, 22), 0);
	HEX(rfc, "f5fa02b18298a72a8c23898a8703472c6eb179dc204c03425c970e3b164bf90f"
		  "ff22d04836d0e2343bacc4e7cb6045faaa698e0e3b3eb91331306def1db8319e"
		  "8a699b5ee45ab993847dc4df75bde023692c8c0710a67a55123f10a8b2d8327f"
		  "9eb138da69d5bea1e09a39ea99a341c00b2c9ee0d4ba632115aec516bb71e922");
	assert_int_equal(fscrypt_hkdf_expand(h, NULL, 0, out, 128), 0);
	assert_memory_equal(out, rfc, 128);
	fscrypt_hkdf_free(h);

	seq_bytes(ikm, sizeof(ikm), 7);
	assert_int_equal(fscrypt_hkdf_new(&h, ikm, sizeof(ikm)), 0);
	for (size_t len = 1; len <= sizeof(out); len += 33) {
		memset(out, 0, sizeof(out));
		assert_int_equal(fscrypt_hkdf_sha512(ikm, sizeof(ikm), info, sizeof(info), want,
						     len), 0);
		assert_int_equal(fscrypt_hkdf_expand(h, info, sizeof(info), out, len), 0);
		assert_memory_equal(out, want, len);
		assert_int_equal(out[len], 0);	/* nothing written past the output */
	}
	/* the prepared extract is not consumed: the same expand again gives the same bytes */
	assert_int_equal(fscrypt_hkdf_expand(h, info, sizeof(info), out, 64), 0);
	assert_int_equal(fscrypt_hkdf_sha512(ikm, sizeof(ikm), info, sizeof(info), want, 64), 0);
	assert_memory_equal(out, want, 64);
	assert_int_equal(fscrypt_hkdf_expand(h, info, sizeof(info), out, 0), -EINVAL);
	assert_int_equal(fscrypt_hkdf_expand(h, info, 1, out, 255 * 64 + 1), -EINVAL);
	assert_int_equal(fscrypt_hkdf_expand(NULL, info, 1, out, 16), -EINVAL);
	fscrypt_hkdf_free(h);
	assert_int_equal(fscrypt_hkdf_new(&h, NULL, 0), -EINVAL);
}

/* /// AES-128-ECB (the v1 KDF), SHA-256, SHA-512 /// */

static void t_ecb_sha(void **state)
{
	uint8_t key[16], pt[32], ct[32], out[64], want[64];

	/* FIPS-197 appendix C.1, twice (ECB: equal blocks, equal output). */
	seq_bytes(key, sizeof(key), 0);
	HEX(pt, "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
	HEX(ct, "69c4e0d86a7b0430d8cdb78070b4c55a69c4e0d86a7b0430d8cdb78070b4c55a");
	assert_int_equal(fscrypt_aes128_ecb_encrypt(key, pt, out, 32), 0);
	assert_memory_equal(out, ct, 32);
	assert_int_equal(fscrypt_aes128_ecb_encrypt(key, pt, out, 20), -EINVAL);

	/* FIPS 180-2 "abc". */
	uint8_t w256[32];

	HEX(w256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(fscrypt_sha256("abc", 3, out), 0);
	assert_memory_equal(out, w256, 32);
	HEX(want, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
		  "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
	assert_int_equal(fscrypt_sha512("abc", 3, out), 0);
	assert_memory_equal(out, want, 64);
	HEX(w256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_int_equal(fscrypt_sha256(NULL, 0, out), 0);
	assert_memory_equal(out, w256, 32);
}

/* /// SipHash-2-4: the reference outputs for key 00..0f, message 00..len-1 /// */

static void t_siphash(void **state)
{
	static const uint64_t want[] = {
		0x726fdb47dd0e0e31, 0x74f839c593dc67fd, 0x0d6c8009d9a94f5a, 0x85676696d7fb7e2d,
		0xcf2794e0277187b7, 0x18765564cd99a68d, 0xcbc9466e58fee3ce, 0xab0200f58b01d137,
		0x93f5f5799a932462, 0x9e0082df0ba9e4b0, 0x7a5dbbc594ddb9f3, 0xf4b32f46226bada7,
		0x751e8fbc860ee5fb, 0x14ea5627c0843d90, 0xf723ca908e7af2ee, 0xa129ca6149be45e5,
		0x3f2acc7f57c29bdb, 0x699ae9f52cbe4794, 0x4bc1b3f0968dd39c, 0xbb6dc91da77961bd,
		0xbed65cf21aa2ee98, 0xd0f2cbb02e3b67c7, 0x93536795e3a33e88, 0xa80c038ccd5ccec8,
		0xb8ad50c6f649af94, 0xbce192de8a85b8ea, 0x17d835b85bbb15f3, 0x2f2e6163076bcfad,
		0xde4daaaca71dc9a5, 0xa6a2506687956571, 0xad87a3535c49ef28, 0x32d892fad841c342,
		0x7127512f72f27cce, 0xa7f32346f95978e3, 0x12e0b01abb051238, 0x15e034d40fa197ae,
		0x314dffbe0815a3b4, 0x027990f029623981, 0xcadcd4e59ef40c4d, 0x9abfd8766a33735c,
	};
	uint8_t key[16], msg[64];

	seq_bytes(key, sizeof(key), 0);
	seq_bytes(msg, sizeof(msg), 0);
	for (size_t len = 0; len < sizeof(want) / sizeof(want[0]); len++)
		assert_int_equal(fscrypt_siphash(key, msg, len), want[len]);
}

/* /// Secret memory /// */

/*
 * The sanitizer runtimes turn mlock() into a no-op (it would lock their
 * shadow memory too), so in those builds VmLck cannot show the locking.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LOCKING_VISIBLE	0
#else
#define LOCKING_VISIBLE	1
#endif

static long vm_locked_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void t_secret(void **state)
{
	long before = vm_locked_kb();
	uint8_t *keep = fscrypt_secret_alloc(64), *p = fscrypt_secret_alloc(64);
	uint8_t *big = fscrypt_secret_alloc(5000);

	assert_non_null(keep);
	assert_non_null(p);
	assert_non_null(big);
	assert_true(vm_locked_kb() > before || !LOCKING_VISIBLE);
	for (size_t i = 0; i < 64; i++)
		assert_int_equal(p[i], 0);
	for (size_t i = 0; i < 5000; i++)
		assert_int_equal(big[i], 0);
	memset(p, 0xa5, 64);
	memset(big, 0x5a, 5000);
	/* p's page stays mapped while keep lives: the freed slot must read zero. */
	fscrypt_secret_free(p, 64);
	for (size_t i = 0; i < 64; i++)
		assert_int_equal(p[i], 0);
	/* A fork()ed child (fuse_daemonize) still has the keys. */
	memset(keep, 0x3c, 64);
	pid_t pid = fork();
	int status = 0;

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(keep[0] == 0x3c && keep[63] == 0x3c && big[4999] == 0x5a ? 0 : 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	fscrypt_secret_free(big, 5000);
	fscrypt_secret_free(keep, 64);
	assert_int_equal(vm_locked_kb(), before);

	/* Many small secrets share pages. */
	enum { N = 200 };
	void *many[N];

	for (int i = 0; i < N; i++) {
		many[i] = fscrypt_secret_alloc(48);
		assert_non_null(many[i]);
		memset(many[i], i, 48);
	}
	for (int i = 0; i < N; i++)
		for (int j = 0; j < 48; j++)
			assert_int_equal(((uint8_t *)many[i])[j], (uint8_t)i);
	assert_true(vm_locked_kb() - before <= (N * 128 / 4096 + 2) * 4);
	assert_true(vm_locked_kb() > before || !LOCKING_VISIBLE);
	for (int i = 0; i < N; i++)
		fscrypt_secret_free(many[i], 48);
	assert_int_equal(vm_locked_kb(), before);
	assert_null(fscrypt_secret_alloc(0));
}

/* /// One cipher, several threads /// */

struct thread_arg {
	struct fscrypt_cipher *c;
	const uint8_t *pt;
	const uint8_t *ct;	/* expected, 64 blocks of 4096 */
	int first;
	int bad;
};

static void *thread_fn(void *v)
{
	struct thread_arg *a = v;
	uint8_t buf[4096], iv[32];

	for (int round = 0; round < 50; round++) {
		for (int b = 0; b < 64; b++) {
			int blk = (b + a->first) % 64;

			memset(iv, 0, sizeof(iv));
			iv[0] = (uint8_t)blk;
			if (fscrypt_encrypt_block(a->c, iv, a->pt + blk * 4096, buf, 4096) ||
			    memcmp(buf, a->ct + blk * 4096, 4096))
				a->bad++;
			if (fscrypt_decrypt_block(a->c, iv, buf, buf, 4096) ||
			    memcmp(buf, a->pt + blk * 4096, 4096))
				a->bad++;
		}
	}
	return NULL;
}

static void t_threads(void **state)
{
	/* Adiantum's threads share its pools of AES and Poly1305 contexts. */
	static const int modes_[] = { FSCRYPT_MODE_AES_256_XTS, FSCRYPT_MODE_AES_128_CBC,
				      FSCRYPT_MODE_ADIANTUM };
	uint8_t key[64], *pt = malloc(64 * 4096), *ct = malloc(64 * 4096), iv[32];

	assert_non_null(pt);
	assert_non_null(ct);
	seq_bytes(key, sizeof(key), 7);
	for (size_t i = 0; i < 64 * 4096; i++)
		pt[i] = (uint8_t)(i * 31 + (i >> 12));
	for (size_t m = 0; m < sizeof(modes_) / sizeof(modes_[0]); m++) {
		struct fscrypt_cipher *c;
		struct thread_arg args[4];
		pthread_t th[4];

		assert_int_equal(fscrypt_cipher_new(&c, modes_[m], key,
						    fscrypt_mode_key_size(modes_[m])), 0);
		for (int b = 0; b < 64; b++) {
			memset(iv, 0, sizeof(iv));
			iv[0] = (uint8_t)b;
			assert_int_equal(fscrypt_encrypt_block(c, iv, pt + b * 4096,
							       ct + b * 4096, 4096), 0);
		}
		for (int t = 0; t < 4; t++) {
			args[t] = (struct thread_arg){ c, pt, ct, t * 16, 0 };
			assert_int_equal(pthread_create(&th[t], NULL, thread_fn, &args[t]), 0);
		}
		for (int t = 0; t < 4; t++) {
			pthread_join(th[t], NULL);
			assert_int_equal(args[t].bad, 0);
		}
		fscrypt_cipher_free(c);
	}
	free(pt);
	free(ct);
}

/* /// Adiantum: Linux's crypto/testmgr.h vectors for adiantum(xchacha12,aes) /// */

struct wide_tv {
	const char *key, *iv, *pt, *ct;
};

/*
 * Published vectors of a wide-block mode through the public interface:
 * names of any length >= 16, contents when whole blocks and the mode has
 * contents, refusals of the rest.
 */
static void check_wide(int mode, const struct wide_tv *tv, size_t count)
{
	uint8_t key[32], iv[32], pt[255], ct[255];

	for (size_t i = 0; i < count; i++) {
		struct fscrypt_cipher *c;
		size_t n;

		HEX(key, tv[i].key);
		HEX(iv, tv[i].iv);
		n = unhex(tv[i].pt, pt, sizeof(pt));
		assert_int_equal(unhex(tv[i].ct, ct, sizeof(ct)), n);
		assert_int_equal(fscrypt_cipher_new(&c, mode, key, 32), 0);
		check_both_ways(c, true, iv, pt, ct, n);
		if (mode == FSCRYPT_MODE_ADIANTUM && n % 16 == 0)
			check_both_ways(c, false, iv, pt, ct, n);
		else
			assert_int_equal(fscrypt_encrypt_block(c, iv, pt, ct, n), -EINVAL);
		assert_int_equal(fscrypt_encrypt_name(c, iv, pt, ct, 15), -EINVAL);
		assert_int_equal(fscrypt_decrypt_name(c, iv, pt, ct, 15), -EINVAL);
		fscrypt_cipher_free(c);
	}
}

static const struct wide_tv adiantum_tv[] = {
	{ "9eebb2493c1cf5f46a99c2c4dfb1f4dd752057ea2c4fcdb2a53d7b491eabfd0f",
	  "df63d4abd249f3d8338137607dfa7308d8496d80e82f6254eb0ea9395b457f8a",
	  "67c9f23084418e43fbf3b33e79367fe8",
	  "6d32861867860f3f967c9d280d53ec9f" },
	{ "362b5797f85dcd995f1a5a441d920f27cc16d72b856399d3ba96a1dbd26068da",
	  "ef5869b12c5e9a4724c1b169e112938f433d6d00db5ed8d9129afed9ff2daac4",
	  "5ea8681985981223260accdb0a04b9df4db3487bb0e3c819435a4606942df2",
	  "c7c6f1738fc4ff4a39be78be8d28c8894663e70c7d87e84ec9187bbe186050" },
	{ "a52824341a3cd8f705918fee851f357f803dfc9b94f6fc9e190900a904314f11",
	  "a1ba4995ff346db8cd875d5efdea85db8a7b5eb25d57dd62aca98c41429475b7",
	  "69b4e88c37e86782f1ec5d04e5149113dff2871b69811d71709e9c3bde497011"
	  "a0a3db0d544f6669d7db80a7709268ce81042cc6abaee56015e96fefaa8fa7a7"
	  "638ff2f077f1a8eae1b71f9eab9e4b3f07875b6fcda8afb9fa700b52b8a8a79e"
	  "075fa60eb39b791379c33e8d1c2c68c8511d3c7b7d79772a5665c5542328b003",
	  "9e16abed4ba7425ac6fb4e76ffbe03a00fe3adbae4982b0e2148a0b865482748"
	  "845454b29a947be64b29e9cf0591801a3af34196851d9f74515663fa7c288549"
	  "f72ff9f21846f53380a33cceb25793f5aebda9f57b30c49366e0307716e4a031"
	  "ba70bc6813f5b09ac1fc7efe55805c4874a6aaa3acdcc2f58dde34867860758d" },
};

static void t_adiantum(void **state)
{
	check_wide(FSCRYPT_MODE_ADIANTUM, adiantum_tv, sizeof(adiantum_tv) / sizeof(adiantum_tv[0]));
}

/* /// HCTR2: Linux's testmgr.h vectors for hctr2(aes), AES-256, 32-byte tweak /// */

static const struct wide_tv hctr2_tv[] = {
	{ "9eebb2493c1cf5f46a99c2c4dfb1f4dd752057ea2c4fcdb2a53d7b491eabfd0f",
	  "df63d4abd249f3d8338137607dfa7308d8496d80e82f6254eb0ea9395b457f8a",
	  "67c9f23084418e43fbf3b33e79367fe8",
	  "2738784716d971352e7edd7e433cb840" },
	{ "93fa7ee20e67c439e7ca4795689d5e5a7c2619abc6ca6a4c45a69642ae6cffe7",
	  "ea8247953b22a13a6aca244c507e23cd0e50e541b66529d8302300d254a7d656",
	  "db1f1fecad836e5d19a5f63bb4935a576f",
	  "f1466e9db301f06bc2ac5788486d407268" },
	{ "362b5797f85dcd995f1a5a441d920f27cc16d72b856399d3ba96a1dbd26068da",
	  "ef5869b12c5e9a4724c1b169e112938f433d6d00db5ed8d9129afed9ff2daac4",
	  "5ea8681985981223260accdb0a04b9df4db3487bb0e3c819435a4606942df2",
	  "dbfdc803d0ecc1febd6437b88243624e7e54a3e224a727e8a4d5b36cb226b4" },
	{ "0365036e4de6e84e8bbe22194831eed9a09121be6289de78d9b036a33cce43d5",
	  "a9c34be70ffc6dbf5627211cfcd604105f43e23035296c1090f1bf61ed0f8a91",
	  "07aa0226b498115e3341215151632c7200ab32a71cc83c9c250e8b9adf85ed2d"
	  "f4f2bc55ca926d22fd223b424c0b74ec",
	  "7bb1436dd8726cf6676a00c4f1f0f5a4fc6091ab460b15fcd7c12815a1fcf768"
	  "8ecc276200645672a617d73f67801058" },
	{ "a52824341a3cd8f705918fee851f357f803dfc9b94f6fc9e190900a904314f11",
	  "a1ba4995ff346db8cd875d5efdea85db8a7b5eb25d57dd62aca98c41429475b7",
	  "69b4e88c37e86782f1ec5d04e5149113dff2871b69811d71709e9c3bde497011"
	  "a0a3db0d544f6669d7db80a7709268ce81042cc6abaee56015e96fefaa8fa7a7"
	  "638ff2f077f1a8eae1b71f9eab9e4b3f07875b6fcda8afb9fa700b52b8a8a79e"
	  "075fa60eb39b791379c33e8d1c2c68c8511d3c7b7d79772a5665c5542328b003",
	  "ebf998863c409f168401f9060feb3ca94ca48e5dc38de5d3aea6e6ccd62d374f"
	  "99c8a32146b869f2e31489d7b9f59e4e07936f788e6bea8ffb43b83e9b4c1d7e"
	  "209ac587eeaff6f946c5188ae869e79652555f001e1adccc13a5eeff4b27cadc"
	  "10a64876984394a3c7e2c9659b0814261d68fb150a33498484335a1b24463192" },
	{ "364511a2985f967cc6b494310a6709326c6f6f00f017cbaca5a9479e2e852ffa",
	  "2888aa9b593b1e9782e55c9e6d1411196e388fd5402bcaf97b4ce4a3d0d28a13",
	  "95d2f7711bcaa586d94801932f7955297113150ee612bc4d8a31e3402ac65e0d"
	  "68bb4a628dc74577d2b8c71df1d25d97cfac52e53277b6da3085cf2b98e9aa34"
	  "62b5239eb7a6d4e0b458188c4dde4d01838924cafb11d482307a8135a0b4d4b6"
	  "84ea47918c198625a6068d78e6ed87ebdaea737cbf66b872e30ab80ccb1a73f1"
	  "a7ca0ade572bbd2beb8b243822d30e1f17a084983177fd346a4e3d844c0efbed"
	  "c82a51fad873218adbb5fe1feec4e8655484dd966dfdd3317736526b804f9eb4"
	  "a255bf6641494e87a70ccae7a5c5f66f2756e24822dd5f593cf19f83e52dfb71"
	  "add1ae1b205c47b73bd314ce8142b10af049fac2e786bfcdb0959f8f794154",
	  "f65751c425612dfad6d93f9a8151dd8e3de7aa2db1dac8a69daa3cab62f280c3"
	  "2ce758721d44c5287fb4f9bc9cb2ab8efad14d72d979f5a0243e902531143845"
	  "59c8f6e2c6f6c1a7b2f8a7a92b6f123ab081a4085759b1564c8f1855335fd66a"
	  "c6a04bd66b643e9efd6616e2dbeb5fb350503ede8d727601beccc952092d8de7"
	  "d6c366db3608d177c87346262429bf682d2a99435655e493afae4de7554ac045"
	  "26eb3b12907cdcd1d56f0ad0a9d74b890b07d886ada1c4691f5e8bc49e914125"
	  "569869783a9eae91d8d9fafbff812509fced2d87bc04629735e126c2461ccfd7"
	  "14ed0209a5b2b6aa274e61b3716b4716b7e8d4af52eb6a6bdb4c65219e1c36" },
};

static void t_hctr2(void **state)
{
	check_wide(FSCRYPT_MODE_AES_256_HCTR2, hctr2_tv, sizeof(hctr2_tv) / sizeof(hctr2_tv[0]));
}

/* The HCTR2 reference's vectors with an empty tweak (github.com/google/hctr2). */
static void t_hctr2_tweak_len(void **state)
{
	static const struct {
		const char *key, *pt, *ct;
	} tv[] = {
		{ "7fc7152ae1f5fda4176769aec92bba82a314e7cfadfd8540da7b7d24bdf17d07",
		  "9be382c65ac19fad4659b80bacc857a0", "596a76ff906fbe9b792767778fed2361" },
		{ "93ea527d3af227fc39a45851f4e0fda3d790112f8bd7ecaf583d93980800decd",
		  "84ece276218ef95b3909227107a9d89192", "8e6816ce7b66973882fcb55200bb784fdb" },
	};
	uint8_t key[32], pt[17], ct[17], out[17];

	for (size_t i = 0; i < sizeof(tv) / sizeof(tv[0]); i++) {
		struct wide_state *w;
		size_t n;

		HEX(key, tv[i].key);
		n = unhex(tv[i].pt, pt, sizeof(pt));
		assert_int_equal(unhex(tv[i].ct, ct, sizeof(ct)), n);
		assert_int_equal(hctr2_setup(&w, key), 0);
		assert_int_equal(hctr2_crypt_tweak(w, NULL, 0, pt, out, n, true), 0);
		assert_memory_equal(out, ct, n);
		assert_int_equal(hctr2_crypt_tweak(w, NULL, 0, ct, out, n, false), 0);
		assert_memory_equal(out, pt, n);
		wide_free(w);
	}
}

/* POLYVAL: RFC 8452 appendix A. */
static void t_polyval(void **state)
{
	uint8_t h[16], x[32], want[16], acc[16] = { 0 };

	HEX(h, "25629347589242761d31f826ba4b757b");
	HEX(x, "4f4f95668c83dfb6401762bb2d01a262d1a24ddd2721d006bbe45f20d3c9f362");
	HEX(want, "f7a3b47b846119fae5b7866cf5e5b77e");
	crypt_polyval(h, acc, x, sizeof(x));
	assert_memory_equal(acc, want, 16);
	/* Chaining two calls is the same as one. */
	memset(acc, 0, sizeof(acc));
	crypt_polyval(h, acc, x, 16);
	crypt_polyval(h, acc, x + 16, 16);
	assert_memory_equal(acc, want, 16);
}

/* /// Linux's own ciphers (fixtures/kernel_crypto.h, made in QEMU via AF_ALG) /// */

/* The generator of fixtures/gen_kernel_crypto.c: an LCG's high bytes. */
static void fx_fill(uint8_t *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
}

static void t_kernel_fixture(void **state)
{
	static uint8_t key[64], iv[32], pt[4096];
	int seen_modes = 0;

	for (size_t i = 0; i < sizeof(kfx_ciphers) / sizeof(kfx_ciphers[0]); i++) {
		const struct kfx_cipher *k = &kfx_ciphers[i];
		struct fscrypt_cipher *c;
		bool names = true;
		int mode;

		if (!strcmp(k->alg, "xts(aes)")) {
			mode = FSCRYPT_MODE_AES_256_XTS;
			names = false;
		} else if (!strcmp(k->alg, "essiv(cbc(aes),sha256)")) {
			mode = FSCRYPT_MODE_AES_128_CBC;
			names = false;
		} else if (!strcmp(k->alg, "adiantum(xchacha12,aes)")) {
			mode = FSCRYPT_MODE_ADIANTUM;
			names = k->len != 4096;
		} else {
			assert_string_equal(k->alg, "cts(cbc(aes))");
			mode = k->key_len == 16 ? FSCRYPT_MODE_AES_128_CTS : FSCRYPT_MODE_AES_256_CTS;
		}
		seen_modes |= 1 << mode;
		assert_int_equal(fscrypt_mode_key_size(mode), k->key_len);
		assert_int_equal(fscrypt_mode_iv_size(mode), k->iv_len);
		fx_fill(key, k->key_len, k->seed * 3);
		fx_fill(iv, k->iv_len, k->seed * 3 + 1);
		fx_fill(pt, k->len, k->seed * 3 + 2);
		assert_int_equal(fscrypt_cipher_new(&c, mode, key, k->key_len), 0);
		check_both_ways(c, names, iv, pt, (const uint8_t *)k->ct, k->len);
		fscrypt_cipher_free(c);
	}
	/* Every mode the guest kernel has (6.1: all but HCTR2) was compared. */
	assert_int_equal(seen_modes, 1 << FSCRYPT_MODE_AES_256_XTS | 1 << FSCRYPT_MODE_AES_128_CBC |
			 1 << FSCRYPT_MODE_ADIANTUM | 1 << FSCRYPT_MODE_AES_128_CTS |
			 1 << FSCRYPT_MODE_AES_256_CTS);
}

/* Linux's xchacha12 (from a nonzero block too) and nhpoly1305 (across chunks). */
static void t_kernel_components(void **state)
{
	static uint8_t key[NHPOLY1305_KEY_SIZE], nonce[24], buf[4096];
	uint8_t hash[16];

	for (size_t i = 0; i < sizeof(kfx_xchacha12) / sizeof(kfx_xchacha12[0]); i++) {
		const struct kfx_xchacha *k = &kfx_xchacha12[i];

		fx_fill(key, 32, k->seed * 3);
		fx_fill(nonce, 24, k->seed * 3 + 1);
		memset(buf, 0, k->len);
		crypt_xchacha12(key, nonce, k->pos, buf, buf, k->len);
		assert_memory_equal(buf, k->stream, k->len);
	}
	for (size_t i = 0; i < sizeof(kfx_nhpoly1305) / sizeof(kfx_nhpoly1305[0]); i++) {
		const struct kfx_nhpoly *k = &kfx_nhpoly1305[i];

		fx_fill(key, sizeof(key), k->seed * 3);
		fx_fill(buf, k->len, k->seed * 3 + 2);
		assert_int_equal(crypt_nhpoly1305(key, buf, k->len, hash), 0);
		assert_memory_equal(hash, k->hash, 16);
	}
}

/*
 * A stream that starts 5 blocks before the 32-bit counter word wraps: each
 * lane must carry into the high word on its own, as the generic code does.
 */
static void simd_counter_carry(int w)
{
	static uint8_t key[32], nonce[24], a[3000], b[3000];
	const uint64_t block = 0xfffffffbull;

	fx_fill(key, sizeof(key), 11);
	fx_fill(nonce, sizeof(nonce), 12);
	fx_fill(a, sizeof(a), 13);
	memcpy(b, a, sizeof(b));
	crypt_xchacha12(key, nonce, block, a, a, sizeof(a));
	crypt_adiantum_simd(CRYPT_SIMD_GENERIC);
	crypt_xchacha12(key, nonce, block, b, b, sizeof(b));
	crypt_adiantum_simd(w);
	assert_memory_equal(a, b, sizeof(a));
}

/* NHPoly1305 of every 16-byte-unit count parity and partial tail, against generic. */
static void simd_nh_lengths(int w)
{
	static uint8_t key[NHPOLY1305_KEY_SIZE], msg[4096];
	uint8_t h1[16], h2[16];

	fx_fill(key, sizeof(key), 14);
	fx_fill(msg, sizeof(msg), 15);
	for (size_t len = 0; len <= sizeof(msg); len += len < 80 ? 1 : 61) {
		assert_int_equal(crypt_nhpoly1305(key, msg, len, h1), 0);
		crypt_adiantum_simd(CRYPT_SIMD_GENERIC);
		assert_int_equal(crypt_nhpoly1305(key, msg, len, h2), 0);
		crypt_adiantum_simd(w);
		assert_memory_equal(h1, h2, 16);
	}
}

/* The same with each SIMD width of XChaCha12 and NH this CPU has, and without. */
static void t_kernel_simd_widths(void **state)
{
	for (int w = CRYPT_SIMD_GENERIC; w <= CRYPT_SIMD_AVX512; w++) {
		static uint8_t key[32], nonce[24], a[4096], b[4096];

		crypt_adiantum_simd(w);
		t_kernel_fixture(state);
		t_kernel_components(state);
		/* every length through the widest instance equals the generic one */
		fx_fill(key, sizeof(key), 5);
		fx_fill(nonce, sizeof(nonce), 6);
		for (size_t len = 1; len <= sizeof(a); len += 37) {
			memset(a, 0, len);
			crypt_xchacha12(key, nonce, 7, a, a, len);
			crypt_adiantum_simd(CRYPT_SIMD_GENERIC);
			memset(b, 0, len);
			crypt_xchacha12(key, nonce, 7, b, b, len);
			crypt_adiantum_simd(w);
			assert_memory_equal(a, b, len);
		}
		simd_counter_carry(w);
		simd_nh_lengths(w);
	}
	crypt_adiantum_simd(CRYPT_SIMD_AVX512);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_mode_table),
		cmocka_unit_test(t_xts_ieee1619),
		cmocka_unit_test(t_cbc_essiv),
		cmocka_unit_test(t_cts_rfc3962),
		cmocka_unit_test(t_cts_cross),
		cmocka_unit_test(t_hkdf),
		cmocka_unit_test(t_hkdf_prepared),
		cmocka_unit_test(t_ecb_sha),
		cmocka_unit_test(t_siphash),
		cmocka_unit_test(t_adiantum),
		cmocka_unit_test(t_hctr2),
		cmocka_unit_test(t_hctr2_tweak_len),
		cmocka_unit_test(t_polyval),
		cmocka_unit_test(t_kernel_fixture),
		cmocka_unit_test(t_kernel_components),
		cmocka_unit_test(t_kernel_simd_widths),
		cmocka_unit_test(t_secret),
		cmocka_unit_test(t_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
