/* SPDX-License-Identifier: GPL-2.0 */
/*
 * alg_int.h — what alg.c shares with the two wide-block modes
 * (adiantum.c, hctr2.c): pools of keyed OpenSSL contexts, the
 * one-block AES and Poly1305 calls, and the state a wide-block cipher keeps.
 * Also the pieces written here (XChaCha12, NH, POLYVAL), exported so the
 * unit tests can check each against its own published vectors.
 */
#ifndef UF2FS_CRYPTO_ALG_INT_H
#define UF2FS_CRYPTO_ALG_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

/*
 * Keyed EVP contexts for one cipher, key and direction. A context is taken
 * out for one call and put back, so threads never share one; the key
 * schedule is computed once per context, not per call.
 */
struct crypt_pool {
	pthread_mutex_t lock;
	EVP_CIPHER *ciph;
	const uint8_t *key;	/* in the owner's secret memory */
	int enc;
	const char *cts_mode;
	int n;
	EVP_CIPHER_CTX *free[16];
};

void crypt_pool_init(struct crypt_pool *p, EVP_CIPHER *ciph, const uint8_t *key, int enc,
		     const char *cts_mode);
void crypt_pool_destroy(struct crypt_pool *p);
EVP_CIPHER_CTX *crypt_pool_get(struct crypt_pool *p);
void crypt_pool_put(struct crypt_pool *p, EVP_CIPHER_CTX *ctx);
int crypt_pool_run(struct crypt_pool *p, const uint8_t *iv, const uint8_t *in, uint8_t *out,
		   size_t len);
int crypt_aes_block(struct crypt_pool *p, const uint8_t in[16], uint8_t out[16]);
/* One block through an ECB context taken from a pool (crypt_pool_get) for a batch. */
int crypt_ecb_block(EVP_CIPHER_CTX *ctx, const uint8_t in[16], uint8_t out[16]);
/* Poly1305 (RFC 8439) of data under a 32-byte key r || s. */
int crypt_poly1305(const uint8_t key[32], const void *data, size_t len, uint8_t out[16]);
/* The same on a context taken from wide_mac_get(), rekeyed: no allocation per call. */
int crypt_poly1305_ctx(EVP_MAC_CTX *ctx, const uint8_t key[32], const void *data, size_t len,
		       uint8_t out[16]);

/* The state of an Adiantum or HCTR2 key; its keys live in secret memory. */
struct wide_state {
	int mode;
	struct crypt_pool aes_enc, aes_dec;	/* AES-256, one block at a time */
	/* Poly1305 contexts (Adiantum), taken out for one message as the pools' are. */
	pthread_mutex_t mac_lock;
	int mac_n;
	EVP_MAC_CTX *mac_free[16];
	uint8_t *sec;
	size_t sec_len;
};

int adiantum_setup(struct wide_state **out, const uint8_t key[32]);
int adiantum_crypt(struct wide_state *w, const uint8_t iv[32], const uint8_t *in,
		   uint8_t *out, size_t len, bool enc);
int adiantum_crypt_units(struct wide_state *w, const uint8_t *ivs, size_t iv_stride,
			 const uint8_t *in, uint8_t *out, size_t len, size_t n, bool enc);
int hctr2_setup(struct wide_state **out, const uint8_t key[32]);
int hctr2_crypt(struct wide_state *w, const uint8_t iv[32], const uint8_t *in, uint8_t *out,
		size_t len, bool enc);
/* HCTR2 with a tweak of any length (Linux and fscrypt use 32 bytes). */
int hctr2_crypt_tweak(struct wide_state *w, const uint8_t *tweak, size_t tweak_len,
		      const uint8_t *in, uint8_t *out, size_t len, bool enc);
/* A zeroed state with sec_len bytes of secret memory, AES-256 keyed at sec + aes_key_off. */
int wide_alloc(struct wide_state **out, int mode, size_t sec_len, size_t aes_key_off);
void wide_free(struct wide_state *w);
/* A Poly1305 context no other thread uses (NULL when out of memory); put it back after. */
EVP_MAC_CTX *wide_mac_get(struct wide_state *w);
void wide_mac_put(struct wide_state *w, EVP_MAC_CTX *ctx);

/* Written here; exported for the unit tests. */

/*
 * XChaCha12 keystream XORed into len bytes: 32-byte key, 24-byte nonce,
 * starting at 64-byte block number `block` (Linux's xchacha12 takes the
 * nonce and then that 64-bit block number as its 32-byte IV).
 */
void crypt_xchacha12(const uint8_t key[32], const uint8_t nonce[24], uint64_t block,
		     const uint8_t *in, uint8_t *out, size_t len);
/* NH-Poly1305 (Adiantum's ε-∆U hash): key is 16 bytes of Poly1305 r, then 1072 of NH. */
#define NHPOLY1305_KEY_SIZE	(16 + 1072)
int crypt_nhpoly1305(const uint8_t key[NHPOLY1305_KEY_SIZE], const uint8_t *msg, size_t len,
		     uint8_t out[16]);
/*
 * The widest SIMD instance of XChaCha12 and NH that may run (those the CPU
 * lacks never do): the tests check each against Linux's output. Default:
 * CRYPT_SIMD_AVX512. Not for use while other threads encrypt.
 */
enum { CRYPT_SIMD_GENERIC, CRYPT_SIMD_AVX2, CRYPT_SIMD_AVX512 };
void crypt_adiantum_simd(int max);
/* POLYVAL (RFC 8452) of len bytes (a multiple of 16) under h, chained from acc. */
void crypt_polyval(const uint8_t h[16], uint8_t acc[16], const uint8_t *data, size_t len);

#endif /* UF2FS_CRYPTO_ALG_INT_H */
