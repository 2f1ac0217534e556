// SPDX-License-Identifier: GPL-2.0
/*
 * Adiantum (Crowley and Biggers, "Adiantum: length-preserving encryption for
 * entry-level processors", 2018), as Linux's adiantum(xchacha12,aes): the
 * wide-block mode fscrypt uses for both contents and names with
 * FSCRYPT_MODE_ADIANTUM. OpenSSL has neither ChaCha12 nor NH, so this file
 * holds them: the ChaCha permutation with 12 rounds, HChaCha12 and the
 * XChaCha12 stream, and NH. Poly1305 and the one AES-256 block per message
 * are OpenSSL's. The 32-byte tweak and the key derivation are Linux's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "crypto_alg.h"
#include "crypto_alg_int.h"

#define CHACHA_ROUNDS	12
#define NH_CHUNK	1024	/* NH hashes the message 1024 bytes at a time */
#define NH_UNIT		16
#define NH_KEY_BYTES	1072	/* 1024 + 3 passes' offset of 16 bytes */

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

/* /// ChaCha12 and XChaCha12 /// */

#define ROTL32(v, n)	((v) << (n) | (v) >> (32 - (n)))
#define QUARTER(a, b, c, d) do {				\
		a += b; d ^= a; d = ROTL32(d, 16);		\
		c += d; b ^= c; b = ROTL32(b, 12);		\
		a += b; d ^= a; d = ROTL32(d, 8);		\
		c += d; b ^= c; b = ROTL32(b, 7);		\
	} while (0)

static void chacha_permute(uint32_t x[16])
{
	for (int i = 0; i < CHACHA_ROUNDS; i += 2) {
		QUARTER(x[0], x[4], x[8], x[12]);
		QUARTER(x[1], x[5], x[9], x[13]);
		QUARTER(x[2], x[6], x[10], x[14]);
		QUARTER(x[3], x[7], x[11], x[15]);
		QUARTER(x[0], x[5], x[10], x[15]);
		QUARTER(x[1], x[6], x[11], x[12]);
		QUARTER(x[2], x[7], x[8], x[13]);
		QUARTER(x[3], x[4], x[9], x[14]);
	}
}

/* "expand 32-byte k", then the key. */
static void chacha_init(uint32_t st[16], const uint8_t key[32])
{
	st[0] = 0x61707865;
	st[1] = 0x3320646e;
	st[2] = 0x79622d32;
	st[3] = 0x6b206574;
	for (int i = 0; i < 8; i++)
		st[4 + i] = get_le32(key + 4 * i);
}

void crypt_xchacha12(const uint8_t key[32], const uint8_t nonce[24], uint64_t block,
		     const uint8_t *in, uint8_t *out, size_t len)
{
	uint32_t st[16], x[16];
	uint8_t ks[64];

	/* HChaCha12: the permuted state's first and last rows are the subkey. */
	chacha_init(st, key);
	for (int i = 0; i < 4; i++)
		st[12 + i] = get_le32(nonce + 4 * i);
	chacha_permute(st);
	memcpy(&st[4], &st[0], 4 * sizeof(st[0]));
	memcpy(&st[8], &st[12], 4 * sizeof(st[0]));
	st[0] = 0x61707865;
	st[1] = 0x3320646e;
	st[2] = 0x79622d32;
	st[3] = 0x6b206574;
	/* ChaCha12 with a 64-bit block counter and the nonce's last 8 bytes. */
	st[14] = get_le32(nonce + 16);
	st[15] = get_le32(nonce + 20);
	while (len) {
		size_t n = len < 64 ? len : 64;

		st[12] = (uint32_t)block;
		st[13] = (uint32_t)(block >> 32);
		memcpy(x, st, sizeof(x));
		chacha_permute(x);
		for (int i = 0; i < 16; i++)
			put_le32(ks + 4 * i, x[i] + st[i]);
		for (size_t i = 0; i < n; i++)
			out[i] = in[i] ^ ks[i];
		in += n;
		out += n;
		len -= n;
		block++;
	}
	OPENSSL_cleanse(st, sizeof(st));
	OPENSSL_cleanse(x, sizeof(x));
	OPENSSL_cleanse(ks, sizeof(ks));
}

/* /// NH and NHPoly1305 /// */

/*
 * NH over whole 16-byte units, 4 passes whose keys are 16 bytes apart:
 * sum over units of (m0 + k0)(m2 + k2) + (m1 + k1)(m3 + k3), in 32-bit
 * additions, 64-bit products and 64-bit sums.
 */
static void nh_units(const uint32_t *key, const uint8_t *msg, size_t len, uint64_t sums[4])
{
	for (; len; len -= NH_UNIT, msg += NH_UNIT, key += 4) {
		uint32_t m0 = get_le32(msg), m1 = get_le32(msg + 4);
		uint32_t m2 = get_le32(msg + 8), m3 = get_le32(msg + 12);

		for (int p = 0; p < 4; p++) {
			const uint32_t *k = key + 4 * p;

			sums[p] += (uint64_t)(uint32_t)(m0 + k[0]) * (uint32_t)(m2 + k[2]);
			sums[p] += (uint64_t)(uint32_t)(m1 + k[1]) * (uint32_t)(m3 + k[3]);
		}
	}
}

/* NH of one chunk (at most 1024 bytes), its last unit zero-padded: 32 bytes. */
static void nh_chunk(const uint32_t *key, const uint8_t *msg, size_t len, uint8_t out[32])
{
	uint64_t sums[4] = { 0, 0, 0, 0 };
	size_t whole = len & ~(size_t)(NH_UNIT - 1);

	nh_units(key, msg, whole, sums);
	if (len > whole) {
		uint8_t unit[NH_UNIT] = { 0 };

		memcpy(unit, msg + whole, len - whole);
		nh_units(key + whole / 4, unit, NH_UNIT, sums);
	}
	for (int p = 0; p < 4; p++)
		put_le64(out + 8 * p, sums[p]);
}

/*
 * Poly1305 with s = 0 over the NH hashes of each 1024-byte chunk (Linux's
 * nhpoly1305): an ε-∆U hash, not a MAC, so OpenSSL's Poly1305 is fed a key
 * whose second half is zero.
 */
int crypt_nhpoly1305(const uint8_t key[NHPOLY1305_KEY_SIZE], const uint8_t *msg, size_t len,
		     uint8_t out[16])
{
	uint32_t nh_key[NH_KEY_BYTES / 4];
	uint8_t poly_key[32] = { 0 }, stack_buf[8 * 32] = { 0 }, *hashes = stack_buf;
	size_t chunks = (len + NH_CHUNK - 1) / NH_CHUNK;
	int err;

	if (chunks > sizeof(stack_buf) / 32) {
		hashes = malloc(chunks * 32);
		if (!hashes)
			return -ENOMEM;
	}
	for (size_t i = 0; i < NH_KEY_BYTES / 4; i++)
		nh_key[i] = get_le32(key + 16 + 4 * i);
	for (size_t c = 0; c < chunks; c++) {
		size_t off = c * NH_CHUNK, n = len - off < NH_CHUNK ? len - off : NH_CHUNK;

		nh_chunk(nh_key, msg + off, n, hashes + 32 * c);
	}
	memcpy(poly_key, key, 16);
	err = crypt_poly1305(poly_key, hashes, chunks * 32, out);
	OPENSSL_cleanse(nh_key, sizeof(nh_key));
	OPENSSL_cleanse(poly_key, sizeof(poly_key));
	if (hashes != stack_buf)
		free(hashes);
	return err;
}

/* /// Adiantum /// */

/* Layout of the derived keys in secret memory. */
#define ADI_STREAM	0				/* K_S, the user's key */
#define ADI_BLOCK	32				/* K_E, AES-256 */
#define ADI_HEADER	64				/* Poly1305 r, then 16 zero bytes */
#define ADI_NHPOLY	96				/* NHPoly1305's key */
#define ADI_SIZE	(ADI_NHPOLY + NHPOLY1305_KEY_SIZE)
/* How much XChaCha12 keystream Linux turns into K_E || K_H. */
#define ADI_DERIVED	(32 + 16 + NHPOLY1305_KEY_SIZE)

int adiantum_setup(struct wide_state **out, const uint8_t key[32])
{
	static const uint8_t nonce[24] = { 1 };
	struct wide_state *w;
	uint8_t *derived;
	int err = wide_alloc(&w, FSCRYPT_MODE_ADIANTUM, ADI_SIZE + ADI_DERIVED, ADI_BLOCK);

	if (err)
		return err;
	/* K_E || K_H = XChaCha12(K_S, nonce 1 || 0^184) over zeros. */
	memcpy(w->sec + ADI_STREAM, key, 32);
	derived = w->sec + ADI_SIZE;
	crypt_xchacha12(key, nonce, 0, derived, derived, ADI_DERIVED);
	memcpy(w->sec + ADI_BLOCK, derived, 32);
	memcpy(w->sec + ADI_HEADER, derived + 32, 16);
	memcpy(w->sec + ADI_NHPOLY, derived + 48, NHPOLY1305_KEY_SIZE);
	OPENSSL_cleanse(derived, ADI_DERIVED);
	*out = w;
	return 0;
}

static void le128_add(uint8_t r[16], const uint8_t a[16], const uint8_t b[16])
{
	uint64_t lo = get_le64(a) + get_le64(b);
	uint64_t hi = get_le64(a + 8) + get_le64(b + 8) + (lo < get_le64(a));

	put_le64(r, lo);
	put_le64(r + 8, hi);
}

static void le128_sub(uint8_t r[16], const uint8_t a[16], const uint8_t b[16])
{
	uint64_t lo = get_le64(a) - get_le64(b);
	uint64_t hi = get_le64(a + 8) - get_le64(b + 8) - (lo > get_le64(a));

	put_le64(r, lo);
	put_le64(r + 8, hi);
}

/* H(T, L) = Poly1305_{K_T}(bin128(|L| in bits) || T) + NHPoly1305(L), mod 2^128. */
static int adiantum_hash(struct wide_state *w, const uint8_t header_hash[16],
			 const uint8_t *bulk, size_t bulk_len, uint8_t out[16])
{
	uint8_t h[16];
	int err = crypt_nhpoly1305(w->sec + ADI_NHPOLY, bulk, bulk_len, h);

	if (!err)
		le128_add(out, h, header_hash);
	return err;
}

int adiantum_crypt(struct wide_state *w, const uint8_t iv[32], const uint8_t *in,
		   uint8_t *out, size_t len, bool enc)
{
	uint8_t header[48] = { 0 }, hh[16], h[16], r[16], nonce[24] = { 0 };
	size_t bulk;
	int err;

	if (len < 16)
		return -EINVAL;
	bulk = len - 16;
	put_le64(header, (uint64_t)bulk * 8);
	memcpy(header + 16, iv, 32);
	err = crypt_poly1305(w->sec + ADI_HEADER, header, sizeof(header), hh);
	if (err)
		return err;
	/* enc: P_M = P_R + H(T, P_L); dec: C_M = C_R + H(T, C_L). */
	err = adiantum_hash(w, hh, in, bulk, h);
	if (err)
		return err;
	le128_add(r, in + bulk, h);
	if (enc) {
		err = crypt_aes_block(&w->aes_enc, r, r);
		if (err)
			return err;
	}
	/* The stream's nonce is C_M || 1 || 0^63 (Linux's XChaCha IV layout). */
	memcpy(nonce, r, 16);
	nonce[16] = 1;
	crypt_xchacha12(w->sec + ADI_STREAM, nonce, 0, in, out, bulk);
	if (!enc) {
		err = crypt_aes_block(&w->aes_dec, r, r);
		if (err)
			return err;
	}
	/* enc: C_R = C_M - H(T, C_L); dec: P_R = P_M - H(T, P_L). */
	err = adiantum_hash(w, hh, out, bulk, h);
	if (err)
		return err;
	le128_sub(out + bulk, r, h);
	OPENSSL_cleanse(r, sizeof(r));
	return 0;
}
