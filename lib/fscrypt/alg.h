/* SPDX-License-Identifier: GPL-2.0 */
/*
 * alg.h — the cipher, hash and key-derivation primitives that fscrypt
 * needs, behind one small interface. lib/fscrypt/alg.c implements them on
 * OpenSSL's libcrypto; what OpenSSL lacks (XChaCha12 and NH for Adiantum, the
 * HCTR2 construction around AES) is written there, small, and checked against
 * the published test vectors. Nothing here knows about f2fs or about fscrypt
 * policies: the rest of lib/fscrypt chooses keys and IVs and calls these.
 */
#ifndef UF2FS_CRYPTO_ALG_H
#define UF2FS_CRYPTO_ALG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* fscrypt's mode numbers (include/uapi/linux/fscrypt.h). */
#define FSCRYPT_MODE_AES_256_XTS	1
#define FSCRYPT_MODE_AES_256_CTS	4
#define FSCRYPT_MODE_AES_128_CBC	5
#define FSCRYPT_MODE_AES_128_CTS	6
#define FSCRYPT_MODE_ADIANTUM		9
#define FSCRYPT_MODE_AES_256_HCTR2	10

#define FSCRYPT_MAX_KEY_SIZE		64
#define FSCRYPT_MAX_IV_SIZE		32

/* Key size in bytes of a mode (64 for AES-256-XTS), 0 for an unknown mode. */
size_t fscrypt_mode_key_size(int mode);
/* IV size in bytes of a mode: 16, or 32 for Adiantum and HCTR2; 0 if unknown. */
size_t fscrypt_mode_iv_size(int mode);
/* The mode's name as fscryptctl spells it ("AES-256-XTS"), or NULL. */
const char *fscrypt_mode_name(int mode);
/* The mode number for a fscryptctl name (case-insensitive), or -EINVAL. */
int fscrypt_mode_from_name(const char *name);

/*
 * A prepared key for one mode. Thread-safe: several threads may encrypt and
 * decrypt with one cipher at once. The raw key is kept only in memory that
 * alg.c locked with mlock() and wipes in fscrypt_cipher_free().
 */
struct fscrypt_cipher;

/*
 * -EINVAL for an unknown mode, a key_len other than the mode's, or (as
 * Linux, which fscrypt asks to refuse weak keys) an AES-256-XTS key whose
 * two halves are equal; -ENOMEM when no locked memory is left.
 */
int fscrypt_cipher_new(struct fscrypt_cipher **out, int mode, const uint8_t *key,
		       size_t key_len);
void fscrypt_cipher_free(struct fscrypt_cipher *c);

/*
 * Contents encryption of one data unit (len a multiple of 16, normally the
 * 4096-byte block) with the mode's IV (fscrypt_mode_iv_size() bytes). For
 * AES-128-CBC the ESSIV step (the IV encrypted with SHA-256 of the key) is
 * done here, as Linux's essiv(cbc(aes),sha256) does. in may equal out.
 */
int fscrypt_encrypt_block(struct fscrypt_cipher *c, const uint8_t *iv, const uint8_t *in,
			  uint8_t *out, size_t len);
int fscrypt_decrypt_block(struct fscrypt_cipher *c, const uint8_t *iv, const uint8_t *in,
			  uint8_t *out, size_t len);

/*
 * n consecutive data units of du bytes each, unit i (at in + i * du) under
 * the IV at ivs + i * FSCRYPT_MAX_IV_SIZE: the same as n block calls, with
 * the per-call setup done once. in may equal out.
 */
int fscrypt_crypt_units(struct fscrypt_cipher *c, const uint8_t *ivs, const uint8_t *in,
			uint8_t *out, size_t du, size_t n, bool enc);

/*
 * Filenames encryption: CBC with ciphertext stealing (CS3, as Linux's
 * cts(cbc(aes))) for the CTS modes, or the wide-block Adiantum and HCTR2.
 * len >= 16 (callers pad names to at least 16 bytes). in may equal out.
 */
int fscrypt_encrypt_name(struct fscrypt_cipher *c, const uint8_t *iv, const uint8_t *in,
			 uint8_t *out, size_t len);
int fscrypt_decrypt_name(struct fscrypt_cipher *c, const uint8_t *iv, const uint8_t *in,
			 uint8_t *out, size_t len);

/* Key derivation and hashes. Each returns 0 or a negative errno. */

/* HKDF-SHA512 (RFC 5869) with an empty salt: extract from ikm, expand info. */
int fscrypt_hkdf_sha512(const uint8_t *ikm, size_t ikm_len, const uint8_t *info,
			size_t info_len, uint8_t *out, size_t out_len);
/*
 * The same with the extract done once (a master key's, kept while it is
 * present): each expand is then two SHA-512 blocks per 64 output bytes.
 */
struct fscrypt_hkdf;
int fscrypt_hkdf_new(struct fscrypt_hkdf **out, const uint8_t *ikm, size_t ikm_len);
int fscrypt_hkdf_expand(const struct fscrypt_hkdf *h, const uint8_t *info, size_t info_len,
			uint8_t *out, size_t out_len);
void fscrypt_hkdf_free(struct fscrypt_hkdf *h);
/* AES-128-ECB encryption of len bytes (a multiple of 16): the v1 KDF. */
int fscrypt_aes128_ecb_encrypt(const uint8_t key[16], const uint8_t *in, uint8_t *out,
			       size_t len);
int fscrypt_sha256(const void *data, size_t len, uint8_t out[32]);
int fscrypt_sha512(const void *data, size_t len, uint8_t out[64]);
/*
 * SipHash-2-4 with a 128-bit key, as the kernel's siphash(): key is the 16
 * bytes of a siphash_key_t as they lie in a little-endian machine's memory
 * (k0 = the first 8, little-endian), and the result is the kernel's u64.
 */
uint64_t fscrypt_siphash(const uint8_t key[16], const void *data, size_t len);

/* Secret memory: mlock()ed, wiped on free. NULL on failure. */
void *fscrypt_secret_alloc(size_t len);
void fscrypt_secret_free(void *p, size_t len);

#endif /* UF2FS_CRYPTO_ALG_H */
