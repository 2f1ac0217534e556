// SPDX-License-Identifier: GPL-2.0
/*
 * HCTR2 (Crowley, Huckleberry and Biggers, "Length-preserving encryption
 * with HCTR2", 2021), as Linux's hctr2(aes) with its 32-byte tweak: the
 * wide-block mode of FSCRYPT_MODE_AES_256_HCTR2 filenames. AES-256 is
 * OpenSSL's; POLYVAL (RFC 8452) and XCTR, which OpenSSL lacks, are written
 * here. POLYVAL is computed bit by bit: names are short (at most 255 bytes),
 * so clarity wins over speed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "alg.h"
#include "alg_int.h"

#define HCTR2_KEY	0	/* the AES-256 key */
#define HCTR2_H		32	/* POLYVAL key: E_K(0^128) */
#define HCTR2_L		48	/* E_K(bin(1)) */
#define HCTR2_SIZE	64

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

static void xor16(uint8_t *r, const uint8_t *a, const uint8_t *b)
{
	for (int i = 0; i < 16; i++)
		r[i] = a[i] ^ b[i];
}

/* /// POLYVAL /// */

/*
 * a * b * x^-128 in GF(2^128) mod x^128 + x^127 + x^126 + x^121 + 1, with
 * bit i of the little-endian 128-bit value the coefficient of x^i. Each of
 * b's bits adds a, then the sum is divided by x; after 128 steps bit i has
 * been divided 128 - i times, which is the x^-128 of POLYVAL's dot().
 */
static void polyval_dot(uint64_t a[2], const uint64_t b[2])
{
	uint64_t lo = 0, hi = 0;

	for (int i = 0; i < 128; i++) {
		uint64_t mask = -((b[i / 64] >> (i % 64)) & 1), odd;

		lo ^= a[0] & mask;
		hi ^= a[1] & mask;
		/* Divide by x, adding the modulus first when the sum is odd. */
		odd = -(lo & 1);
		lo = lo >> 1 | hi << 63;
		hi = hi >> 1 ^ (odd & 0xe100000000000000ULL);
	}
	a[0] = lo;
	a[1] = hi;
}

void crypt_polyval(const uint8_t h[16], uint8_t acc[16], const uint8_t *data, size_t len)
{
	uint64_t hv[2] = { get_le64(h), get_le64(h + 8) };
	uint64_t s[2] = { get_le64(acc), get_le64(acc + 8) };

	for (; len >= 16; len -= 16, data += 16) {
		s[0] ^= get_le64(data);
		s[1] ^= get_le64(data + 8);
		polyval_dot(s, hv);
	}
	put_le64(acc, s[0]);
	put_le64(acc + 8, s[1]);
}

/* /// HCTR2 /// */

int hctr2_setup(struct wide_state **out, const uint8_t key[32])
{
	static const uint8_t zero[16], one[16] = { 1 };
	struct wide_state *w;
	int err = wide_alloc(&w, FSCRYPT_MODE_AES_256_HCTR2, HCTR2_SIZE, HCTR2_KEY);

	if (err)
		return err;
	memcpy(w->sec + HCTR2_KEY, key, 32);
	err = crypt_aes_block(&w->aes_enc, zero, w->sec + HCTR2_H);
	if (!err)
		err = crypt_aes_block(&w->aes_enc, one, w->sec + HCTR2_L);
	if (err) {
		wide_free(w);
		return err;
	}
	*out = w;
	return 0;
}

/*
 * POLYVAL's state after bin128(2|T|*8 + 2 + [|X| % 16 != 0]) || T padded:
 * the part of H(T, X) that both hash steps share.
 */
static void hash_tweak(const uint8_t *h, const uint8_t *tweak, size_t tweak_len,
		       bool remainder, uint8_t acc[16])
{
	uint8_t block[16] = { 0 };
	size_t whole = tweak_len & ~(size_t)15;

	memset(acc, 0, 16);
	put_le64(block, (uint64_t)tweak_len * 8 * 2 + 2 + remainder);
	crypt_polyval(h, acc, block, 16);
	crypt_polyval(h, acc, tweak, whole);
	if (tweak_len > whole) {
		memset(block, 0, sizeof(block));
		memcpy(block, tweak + whole, tweak_len - whole);
		crypt_polyval(h, acc, block, 16);
	}
}

/* H(T, X): the tweak's state, then X padded with 1 and zeros if not whole blocks. */
static void hash_message(const uint8_t *h, const uint8_t tweak_acc[16], const uint8_t *msg,
			 size_t len, uint8_t out[16])
{
	size_t whole = len & ~(size_t)15;

	memcpy(out, tweak_acc, 16);
	crypt_polyval(h, out, msg, whole);
	if (len > whole) {
		uint8_t block[16] = { 0 };

		memcpy(block, msg + whole, len - whole);
		block[len - whole] = 1;
		crypt_polyval(h, out, block, 16);
	}
}

/* XCTR: block i (from 1) of the keystream is E_K(S xor bin128(i)). */
static int xctr(struct wide_state *w, const uint8_t s[16], const uint8_t *in, uint8_t *out,
		size_t len)
{
	size_t blocks = (len + 15) / 16;
	uint8_t stack_buf[32 * 16], *ks = stack_buf;
	int err;

	if (!len)
		return 0;
	if (blocks > sizeof(stack_buf) / 16) {
		ks = malloc(blocks * 16);
		if (!ks)
			return -ENOMEM;
	}
	for (size_t i = 0; i < blocks; i++) {
		uint8_t ctr[16] = { 0 };

		put_le64(ctr, i + 1);
		xor16(ks + 16 * i, s, ctr);
	}
	err = crypt_pool_run(&w->aes_enc, NULL, ks, ks, blocks * 16);
	if (!err)
		for (size_t i = 0; i < len; i++)
			out[i] = in[i] ^ ks[i];
	OPENSSL_cleanse(ks, blocks * 16);
	if (ks != stack_buf)
		free(ks);
	return err;
}

/*
 * enc: MM = M ^ H(T, N), UU = E(MM), V = N ^ XCTR(MM ^ UU ^ L), U = UU ^ H(T, V).
 * dec is the same with D for E and the roles of (M, N) and (U, V) swapped.
 */
int hctr2_crypt_tweak(struct wide_state *w, const uint8_t *tweak, size_t tweak_len,
		      const uint8_t *in, uint8_t *out, size_t len, bool enc)
{
	const uint8_t *h = w->sec + HCTR2_H;
	uint8_t tacc[16], first[16], second[16], s[16], dig[16];
	int err;

	if (len < 16)
		return -EINVAL;
	hash_tweak(h, tweak, tweak_len, (len - 16) % 16 != 0, tacc);
	hash_message(h, tacc, in + 16, len - 16, dig);
	xor16(first, in, dig);
	err = crypt_aes_block(enc ? &w->aes_enc : &w->aes_dec, first, second);
	if (err)
		return err;
	xor16(s, first, second);
	xor16(s, s, w->sec + HCTR2_L);
	err = xctr(w, s, in + 16, out + 16, len - 16);
	if (err)
		return err;
	hash_message(h, tacc, out + 16, len - 16, dig);
	xor16(out, second, dig);
	OPENSSL_cleanse(first, sizeof(first));
	OPENSSL_cleanse(second, sizeof(second));
	OPENSSL_cleanse(s, sizeof(s));
	return 0;
}

int hctr2_crypt(struct wide_state *w, const uint8_t iv[32], const uint8_t *in, uint8_t *out,
		size_t len, bool enc)
{
	return hctr2_crypt_tweak(w, iv, 32, in, out, len, enc);
}
