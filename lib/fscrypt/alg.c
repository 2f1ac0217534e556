// SPDX-License-Identifier: GPL-2.0
/*
 * The fscrypt primitives (alg.h) on OpenSSL's libcrypto: AES in
 * the XTS, CBC (with ESSIV), CBC-CTS (CS3) and ECB modes, HKDF-SHA512,
 * SHA-256/512, SipHash-2-4 and Poly1305 all come from EVP. What OpenSSL lacks
 * is written here, small: the ChaCha12 permutation and XChaCha12 stream, NH,
 * and the Adiantum and HCTR2 wide-block constructions around OpenSSL's AES
 * (adiantum.c, hctr2.c hold those). This file owns the mode
 * table, the prepared ciphers, their pools of keyed OpenSSL contexts (one
 * context is never shared by two threads at once), and the mlock()ed
 * allocator that holds every raw key.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include "alg.h"
#include "alg_int.h"

/* /// The mode table /// */

struct mode_info {
	int mode;
	const char *name;
	size_t key_size;
	size_t iv_size;
	bool contents;	/* usable for file contents */
	bool names;	/* usable for filenames */
};

static const struct mode_info modes[] = {
	{ FSCRYPT_MODE_AES_256_XTS, "AES-256-XTS", 64, 16, true, false },
	{ FSCRYPT_MODE_AES_256_CTS, "AES-256-CTS", 32, 16, false, true },
	{ FSCRYPT_MODE_AES_128_CBC, "AES-128-CBC", 16, 16, true, false },
	{ FSCRYPT_MODE_AES_128_CTS, "AES-128-CTS", 16, 16, false, true },
	{ FSCRYPT_MODE_ADIANTUM, "Adiantum", 32, 32, true, true },
	{ FSCRYPT_MODE_AES_256_HCTR2, "AES-256-HCTR2", 32, 32, false, true },
};

static const struct mode_info *mode_lookup(int mode)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (modes[i].mode == mode)
			return &modes[i];
	return NULL;
}

size_t fscrypt_mode_key_size(int mode)
{
	const struct mode_info *mi = mode_lookup(mode);

	return mi ? mi->key_size : 0;
}

size_t fscrypt_mode_iv_size(int mode)
{
	const struct mode_info *mi = mode_lookup(mode);

	return mi ? mi->iv_size : 0;
}

const char *fscrypt_mode_name(int mode)
{
	const struct mode_info *mi = mode_lookup(mode);

	return mi ? mi->name : NULL;
}

int fscrypt_mode_from_name(const char *name)
{
	if (!name)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcasecmp(modes[i].name, name))
			return modes[i].mode;
	return -EINVAL;
}

/* /// Secret memory /// */

/*
 * Small secrets (keys, at most SECRET_SLOT bytes) share mlock()ed pages cut
 * into slots, so thousands of per-file keys cost a few pages of the
 * RLIMIT_MEMLOCK budget; slot 0 of each page holds its free-slot bitmap.
 * Larger secrets (Adiantum's hash keys) get pages of their own.
 */
#define SECRET_SLOT	128

struct secret_page {
	struct secret_page *next;
	uint64_t used;		/* bit i: slot i taken; bit 0 is this header */
};

static pthread_mutex_t secret_lock = PTHREAD_MUTEX_INITIALIZER;
static struct secret_page *secret_pages;

static size_t page_size(void)
{
	static size_t ps;

	if (!ps)
		ps = (size_t)sysconf(_SC_PAGESIZE);
	return ps;
}

static size_t slots_per_page(void)
{
	size_t n = page_size() / SECRET_SLOT;

	return n > 64 ? 64 : n;
}

static void *locked_pages(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (mlock(p, len)) {
		munmap(p, len);
		return NULL;
	}
	/*
	 * Keep keys out of core dumps. Not MADV_DONTFORK: a daemon that forks
	 * after adding a key (fuse_daemonize) must keep it in the child.
	 */
	madvise(p, len, MADV_DONTDUMP);
	return p;
}

static void unlock_pages(void *p, size_t len)
{
	OPENSSL_cleanse(p, len);
	munlock(p, len);
	munmap(p, len);
}

static void *secret_slot_alloc(void)
{
	struct secret_page *pg;
	size_t n = slots_per_page();
	uint64_t full = n == 64 ? ~0ULL : (1ULL << n) - 1;
	void *ret = NULL;

	pthread_mutex_lock(&secret_lock);
	for (pg = secret_pages; pg; pg = pg->next)
		if (pg->used != full)
			break;
	if (!pg) {
		pg = locked_pages(page_size());
		if (pg) {
			pg->used = 1;
			pg->next = secret_pages;
			secret_pages = pg;
		}
	}
	if (pg) {
		int slot = __builtin_ctzll(~pg->used);

		pg->used |= 1ULL << slot;
		ret = (uint8_t *)pg + (size_t)slot * SECRET_SLOT;
	}
	pthread_mutex_unlock(&secret_lock);
	return ret;
}

static void secret_slot_free(void *p)
{
	struct secret_page *pg = (void *)((uintptr_t)p & ~(uintptr_t)(page_size() - 1));
	size_t slot = ((uintptr_t)p - (uintptr_t)pg) / SECRET_SLOT;
	struct secret_page **pp;

	OPENSSL_cleanse(p, SECRET_SLOT);
	pthread_mutex_lock(&secret_lock);
	pg->used &= ~(1ULL << slot);
	if (pg->used == 1) {
		for (pp = &secret_pages; *pp; pp = &(*pp)->next) {
			if (*pp == pg) {
				*pp = pg->next;
				break;
			}
		}
		unlock_pages(pg, page_size());
	}
	pthread_mutex_unlock(&secret_lock);
}

void *fscrypt_secret_alloc(size_t len)
{
	void *p;

	if (!len)
		return NULL;
	if (len <= SECRET_SLOT) {
		p = secret_slot_alloc();
		if (p)
			memset(p, 0, SECRET_SLOT);
		return p;
	}
	/* Fresh anonymous pages are already zero. */
	return locked_pages((len + page_size() - 1) & ~(page_size() - 1));
}

void fscrypt_secret_free(void *p, size_t len)
{
	if (!p)
		return;
	if (len <= SECRET_SLOT)
		secret_slot_free(p);
	else
		unlock_pages(p, (len + page_size() - 1) & ~(page_size() - 1));
}

/* /// OpenSSL algorithms, fetched once /// */

static struct {
	EVP_CIPHER *xts, *cbc128, *ecb128, *ecb256, *cts128, *cts256;
	EVP_MD *sha256, *sha512;
	EVP_KDF *hkdf;
	EVP_MAC *siphash, *poly1305, *hmac;
	bool ok;
} algs;

static pthread_once_t algs_once = PTHREAD_ONCE_INIT;

static void algs_fetch(void)
{
	algs.xts = EVP_CIPHER_fetch(NULL, "AES-256-XTS", NULL);
	algs.cbc128 = EVP_CIPHER_fetch(NULL, "AES-128-CBC", NULL);
	algs.ecb128 = EVP_CIPHER_fetch(NULL, "AES-128-ECB", NULL);
	algs.ecb256 = EVP_CIPHER_fetch(NULL, "AES-256-ECB", NULL);
	algs.cts128 = EVP_CIPHER_fetch(NULL, "AES-128-CBC-CTS", NULL);
	algs.cts256 = EVP_CIPHER_fetch(NULL, "AES-256-CBC-CTS", NULL);
	algs.sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	algs.sha512 = EVP_MD_fetch(NULL, "SHA512", NULL);
	algs.hkdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	algs.siphash = EVP_MAC_fetch(NULL, "SIPHASH", NULL);
	algs.poly1305 = EVP_MAC_fetch(NULL, "POLY1305", NULL);
	algs.hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	algs.ok = algs.xts && algs.cbc128 && algs.ecb128 && algs.ecb256 && algs.cts128 &&
		  algs.cts256 && algs.sha256 && algs.sha512 && algs.hkdf && algs.siphash &&
		  algs.poly1305 && algs.hmac;
	if (!algs.ok)
		fprintf(stderr, "uf2fs: OpenSSL lacks an algorithm fscrypt needs "
			"(AES XTS/CBC/CTS/ECB, SHA-256/512, HKDF, HMAC, SipHash, Poly1305)\n");
}

static int algs_ready(void)
{
	pthread_once(&algs_once, algs_fetch);
	return algs.ok ? 0 : -EOPNOTSUPP;
}

/* /// Pools of keyed contexts /// */

void crypt_pool_init(struct crypt_pool *p, EVP_CIPHER *ciph, const uint8_t *key, int enc,
		     const char *cts_mode)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	p->ciph = ciph;
	p->key = key;
	p->enc = enc;
	p->cts_mode = cts_mode;
}

void crypt_pool_destroy(struct crypt_pool *p)
{
	if (!p->ciph)
		return;
	for (int i = 0; i < p->n; i++)
		EVP_CIPHER_CTX_free(p->free[i]);
	pthread_mutex_destroy(&p->lock);
	p->ciph = NULL;
}

/* A context keyed for the pool's cipher and direction, not used by anyone else. */
EVP_CIPHER_CTX *crypt_pool_get(struct crypt_pool *p)
{
	EVP_CIPHER_CTX *ctx = NULL;
	OSSL_PARAM params[2] = { OSSL_PARAM_END, OSSL_PARAM_END };

	pthread_mutex_lock(&p->lock);
	if (p->n)
		ctx = p->free[--p->n];
	pthread_mutex_unlock(&p->lock);
	if (ctx)
		return ctx;
	ctx = EVP_CIPHER_CTX_new();
	if (!ctx)
		return NULL;
	if (p->cts_mode)
		params[0] = OSSL_PARAM_construct_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE,
							     (char *)p->cts_mode, 0);
	if (!EVP_CipherInit_ex2(ctx, p->ciph, p->key, NULL, p->enc, params) ||
	    !EVP_CIPHER_CTX_set_padding(ctx, 0)) {
		EVP_CIPHER_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

void crypt_pool_put(struct crypt_pool *p, EVP_CIPHER_CTX *ctx)
{
	pthread_mutex_lock(&p->lock);
	if (p->n < (int)(sizeof(p->free) / sizeof(p->free[0]))) {
		p->free[p->n++] = ctx;
		ctx = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	EVP_CIPHER_CTX_free(ctx);
}

/* One whole message through a context of p's, with a fresh IV (or none). */
static int crypt_ctx_run(struct crypt_pool *p, EVP_CIPHER_CTX *ctx, const uint8_t *iv,
			 const uint8_t *in, uint8_t *out, size_t len)
{
	int n = 0, m = 0;

	if (len > INT32_MAX)
		return -EIO;
	if (EVP_CipherInit_ex2(ctx, NULL, NULL, iv, p->enc, NULL) &&
	    EVP_CipherUpdate(ctx, out, &n, in, (int)len) &&
	    EVP_CipherFinal_ex(ctx, out + n, &m) && (size_t)(n + m) == len)
		return 0;
	return -EIO;
}

int crypt_pool_run(struct crypt_pool *p, const uint8_t *iv, const uint8_t *in, uint8_t *out,
		   size_t len)
{
	EVP_CIPHER_CTX *ctx = crypt_pool_get(p);
	int ret;

	if (!ctx)
		return -ENOMEM;
	ret = crypt_ctx_run(p, ctx, iv, in, out, len);
	crypt_pool_put(p, ctx);
	return ret;
}

/* AES-256 of one 16-byte block, for the wide-block modes. */
int crypt_aes_block(struct crypt_pool *p, const uint8_t in[16], uint8_t out[16])
{
	return crypt_pool_run(p, NULL, in, out, 16);
}

/*
 * The same on a context already taken from an ECB pool: ECB without padding
 * keeps no state between blocks, so no re-initialisation per block.
 */
int crypt_ecb_block(EVP_CIPHER_CTX *ctx, const uint8_t in[16], uint8_t out[16])
{
	int n = 0;

	return EVP_CipherUpdate(ctx, out, &n, in, 16) && n == 16 ? 0 : -EIO;
}

/* /// Ciphers /// */

struct fscrypt_cipher {
	const struct mode_info *mi;
	uint8_t *key;		/* secret memory: the raw key, then mode-specific keys */
	size_t key_alloc;
	/* AES-128-CBC: key[16..48] is SHA-256 of the key, the ESSIV key. */
	struct crypt_pool enc, dec, essiv;
	struct wide_state *wide;	/* Adiantum or HCTR2 */
};

static int cipher_setup_aes(struct fscrypt_cipher *c)
{
	switch (c->mi->mode) {
	case FSCRYPT_MODE_AES_256_XTS:
		crypt_pool_init(&c->enc, algs.xts, c->key, 1, NULL);
		crypt_pool_init(&c->dec, algs.xts, c->key, 0, NULL);
		return 0;
	case FSCRYPT_MODE_AES_128_CBC: {
		uint8_t *essiv_key = c->key + 16;
		int err = fscrypt_sha256(c->key, 16, essiv_key);

		if (err)
			return err;
		crypt_pool_init(&c->enc, algs.cbc128, c->key, 1, NULL);
		crypt_pool_init(&c->dec, algs.cbc128, c->key, 0, NULL);
		crypt_pool_init(&c->essiv, algs.ecb256, essiv_key, 1, NULL);
		return 0;
	}
	case FSCRYPT_MODE_AES_128_CTS:
		crypt_pool_init(&c->enc, algs.cts128, c->key, 1, "CS3");
		crypt_pool_init(&c->dec, algs.cts128, c->key, 0, "CS3");
		return 0;
	case FSCRYPT_MODE_AES_256_CTS:
		crypt_pool_init(&c->enc, algs.cts256, c->key, 1, "CS3");
		crypt_pool_init(&c->dec, algs.cts256, c->key, 0, "CS3");
		return 0;
	}
	return -EINVAL;
}

int fscrypt_cipher_new(struct fscrypt_cipher **out, int mode, const uint8_t *key,
		       size_t key_len)
{
	const struct mode_info *mi = mode_lookup(mode);
	struct fscrypt_cipher *c;
	int err;

	*out = NULL;
	if (!mi || !key || key_len != mi->key_size)
		return -EINVAL;
	/*
	 * fscrypt asks for CRYPTO_TFM_REQ_FORBID_WEAK_KEYS, so Linux's xts
	 * refuses a key whose halves are equal; so does this (OpenSSL would
	 * only refuse to encrypt with it).
	 */
	if (mode == FSCRYPT_MODE_AES_256_XTS && !CRYPTO_memcmp(key, key + 32, 32))
		return -EINVAL;
	err = algs_ready();
	if (err)
		return err;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->mi = mi;
	c->key_alloc = mi->mode == FSCRYPT_MODE_AES_128_CBC ? 16 + 32 : key_len;
	c->key = fscrypt_secret_alloc(c->key_alloc);
	if (!c->key) {
		free(c);
		return -ENOMEM;
	}
	memcpy(c->key, key, key_len);
	if (mode == FSCRYPT_MODE_ADIANTUM)
		err = adiantum_setup(&c->wide, c->key);
	else if (mode == FSCRYPT_MODE_AES_256_HCTR2)
		err = hctr2_setup(&c->wide, c->key);
	else
		err = cipher_setup_aes(c);
	if (err) {
		fscrypt_cipher_free(c);
		return err;
	}
	*out = c;
	return 0;
}

void fscrypt_cipher_free(struct fscrypt_cipher *c)
{
	if (!c)
		return;
	crypt_pool_destroy(&c->enc);
	crypt_pool_destroy(&c->dec);
	crypt_pool_destroy(&c->essiv);
	if (c->wide)
		wide_free(c->wide);
	fscrypt_secret_free(c->key, c->key_alloc);
	free(c);
}

static int essiv_crypt(struct fscrypt_cipher *c, struct crypt_pool *p, const uint8_t *iv,
		       const uint8_t *in, uint8_t *out, size_t len)
{
	uint8_t essiv[16];
	int err = crypt_pool_run(&c->essiv, NULL, iv, essiv, 16);

	if (!err)
		err = crypt_pool_run(p, essiv, in, out, len);
	OPENSSL_cleanse(essiv, sizeof(essiv));
	return err;
}

static int contents_crypt(struct fscrypt_cipher *c, const uint8_t *iv, const uint8_t *in,
			  uint8_t *out, size_t len, bool enc)
{
	if (!c || !iv || !in || !out || !c->mi->contents || !len || len % 16)
		return -EINVAL;
	switch (c->mi->mode) {
	case FSCRYPT_MODE_AES_256_XTS:
		return crypt_pool_run(enc ? &c->enc : &c->dec, iv, in, out, len);
	case FSCRYPT_MODE_AES_128_CBC:
		return essiv_crypt(c, enc ? &c->enc : &c->dec, iv, in, out, len);
	case FSCRYPT_MODE_ADIANTUM:
		return adiantum_crypt(c->wide, iv, in, out, len, enc);
	}
	return -EINVAL;
}

/*
 * Many units through one context (or one Poly1305 context for Adiantum): the
 * pool's lock and the context lookup once a batch, not once a 4 KiB block,
 * which for AES-XTS cost about a third of the time of the cipher itself.
 */
int fscrypt_crypt_units(struct fscrypt_cipher *c, const uint8_t *ivs, const uint8_t *in,
			uint8_t *out, size_t du, size_t n, bool enc)
{
	struct crypt_pool *p;
	EVP_CIPHER_CTX *ctx;
	int ret = 0;

	if (!c || !ivs || !in || !out || !c->mi->contents || !du || du % 16)
		return -EINVAL;
	switch (c->mi->mode) {
	case FSCRYPT_MODE_AES_256_XTS:
		p = enc ? &c->enc : &c->dec;
		ctx = crypt_pool_get(p);
		if (!ctx)
			return -ENOMEM;
		for (size_t i = 0; i < n && !ret; i++)
			ret = crypt_ctx_run(p, ctx, ivs + i * FSCRYPT_MAX_IV_SIZE, in + i * du,
					    out + i * du, du);
		crypt_pool_put(p, ctx);
		return ret;
	case FSCRYPT_MODE_ADIANTUM:
		return adiantum_crypt_units(c->wide, ivs, FSCRYPT_MAX_IV_SIZE, in, out, du, n,
					    enc);
	}
	for (size_t i = 0; i < n && !ret; i++)
		ret = contents_crypt(c, ivs + i * FSCRYPT_MAX_IV_SIZE, in + i * du, out + i * du,
				     du, enc);
	return ret;
}

int fscrypt_encrypt_block(struct fscrypt_cipher *c, const uint8_t *iv, const uint8_t *in,
			  uint8_t *out, size_t len)
{
	return contents_crypt(c, iv, in, out, len, true);
}

int fscrypt_decrypt_block(struct fscrypt_cipher *c, const uint8_t *iv, const uint8_t *in,
			  uint8_t *out, size_t len)
{
	return contents_crypt(c, iv, in, out, len, false);
}

static int names_crypt(struct fscrypt_cipher *c, const uint8_t *iv, const uint8_t *in,
		       uint8_t *out, size_t len, bool enc)
{
	if (!c || !iv || !in || !out || !c->mi->names || len < 16 || len > INT32_MAX)
		return -EINVAL;
	switch (c->mi->mode) {
	case FSCRYPT_MODE_AES_128_CTS:
	case FSCRYPT_MODE_AES_256_CTS:
		return crypt_pool_run(enc ? &c->enc : &c->dec, iv, in, out, len);
	case FSCRYPT_MODE_ADIANTUM:
		return adiantum_crypt(c->wide, iv, in, out, len, enc);
	case FSCRYPT_MODE_AES_256_HCTR2:
		return hctr2_crypt(c->wide, iv, in, out, len, enc);
	}
	return -EINVAL;
}

int fscrypt_encrypt_name(struct fscrypt_cipher *c, const uint8_t *iv, const uint8_t *in,
			 uint8_t *out, size_t len)
{
	return names_crypt(c, iv, in, out, len, true);
}

int fscrypt_decrypt_name(struct fscrypt_cipher *c, const uint8_t *iv, const uint8_t *in,
			 uint8_t *out, size_t len)
{
	return names_crypt(c, iv, in, out, len, false);
}

/* /// Key derivation and hashes /// */

int fscrypt_hkdf_sha512(const uint8_t *ikm, size_t ikm_len, const uint8_t *info,
			size_t info_len, uint8_t *out, size_t out_len)
{
	EVP_KDF_CTX *kctx;
	OSSL_PARAM params[4], *p = params;
	int err = algs_ready();

	if (err)
		return err;
	if (!ikm || !ikm_len || (!info && info_len) || !out || !out_len || out_len > 255 * 64)
		return -EINVAL;
	kctx = EVP_KDF_CTX_new(algs.hkdf);
	if (!kctx)
		return -ENOMEM;
	/* No salt parameter: RFC 5869 then uses HashLen zero bytes, as fscrypt does. */
	*p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, "SHA512", 0);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, ikm_len);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, info_len);
	*p = OSSL_PARAM_construct_end();
	if (EVP_KDF_derive(kctx, out, out_len, params) <= 0)
		err = -EIO;
	EVP_KDF_CTX_free(kctx);
	return err;
}

/*
 * HKDF with its extract step done once: an HMAC-SHA512 context keyed with
 * the PRK, as the kernel keeps one per master key. Every per-inode key is an
 * expand of that PRK; redoing the extract, the KDF context and its
 * parameters for each inode cost more than the decryption of a small file.
 */
#define HKDF_SHA512_LEN	64

struct fscrypt_hkdf {
	EVP_MAC_CTX *prk;		/* keyed, never used itself: expands work on copies */
};

static EVP_MAC_CTX *hmac_sha512_new(const uint8_t *key, size_t key_len)
{
	OSSL_PARAM params[2] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA512", 0),
		OSSL_PARAM_construct_end(),
	};
	EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(algs.hmac);

	if (ctx && EVP_MAC_init(ctx, key, key_len, params) <= 0) {
		EVP_MAC_CTX_free(ctx);
		ctx = NULL;
	}
	return ctx;
}

int fscrypt_hkdf_new(struct fscrypt_hkdf **out, const uint8_t *ikm, size_t ikm_len)
{
	static const uint8_t zero_salt[HKDF_SHA512_LEN];
	uint8_t prk[HKDF_SHA512_LEN];
	struct fscrypt_hkdf *h;
	EVP_MAC_CTX *ext;
	size_t n = 0;
	int err = algs_ready();

	if (err)
		return err;
	if (!ikm || !ikm_len)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	/* RFC 5869 extract without a salt: HMAC keyed with HashLen zero bytes */
	ext = hmac_sha512_new(zero_salt, sizeof(zero_salt));
	if (ext && EVP_MAC_update(ext, ikm, ikm_len) > 0 &&
	    EVP_MAC_final(ext, prk, &n, sizeof(prk)) > 0 && n == sizeof(prk))
		h->prk = hmac_sha512_new(prk, sizeof(prk));
	EVP_MAC_CTX_free(ext);
	OPENSSL_cleanse(prk, sizeof(prk));
	if (!h->prk) {
		free(h);
		return -EIO;
	}
	*out = h;
	return 0;
}

void fscrypt_hkdf_free(struct fscrypt_hkdf *h)
{
	if (!h)
		return;
	EVP_MAC_CTX_free(h->prk);
	free(h);
}

/* RFC 5869 expand: T(i) = HMAC(PRK, T(i-1) | info | i), on copies of the keyed context. */
int fscrypt_hkdf_expand(const struct fscrypt_hkdf *h, const uint8_t *info, size_t info_len,
			uint8_t *out, size_t out_len)
{
	uint8_t t[HKDF_SHA512_LEN];
	size_t tlen = 0, done = 0;
	int err = 0;

	if (!h || (!info && info_len) || !out || !out_len || out_len > 255 * HKDF_SHA512_LEN)
		return -EINVAL;
	for (uint8_t i = 1; done < out_len && !err; i++) {
		EVP_MAC_CTX *c = EVP_MAC_CTX_dup(h->prk);
		size_t n = 0;

		if (!c)
			return -ENOMEM;
		if (EVP_MAC_update(c, t, tlen) <= 0 ||
		    (info_len && EVP_MAC_update(c, info, info_len) <= 0) ||
		    EVP_MAC_update(c, &i, 1) <= 0 || EVP_MAC_final(c, t, &n, sizeof(t)) <= 0 ||
		    n != sizeof(t))
			err = -EIO;
		EVP_MAC_CTX_free(c);
		tlen = out_len - done < sizeof(t) ? out_len - done : sizeof(t);
		if (!err)
			memcpy(out + done, t, tlen);
		done += tlen;
		tlen = sizeof(t);
	}
	OPENSSL_cleanse(t, sizeof(t));
	return err;
}

int fscrypt_aes128_ecb_encrypt(const uint8_t key[16], const uint8_t *in, uint8_t *out,
			       size_t len)
{
	struct crypt_pool p;
	int err = algs_ready();

	if (err)
		return err;
	if (!key || !in || !out || !len || len % 16 || len > INT32_MAX)
		return -EINVAL;
	crypt_pool_init(&p, algs.ecb128, key, 1, NULL);
	err = crypt_pool_run(&p, NULL, in, out, len);
	crypt_pool_destroy(&p);
	return err;
}

static int digest(const EVP_MD *md, const void *data, size_t len, uint8_t *out)
{
	if (!data && len)
		return -EINVAL;
	return EVP_Digest(data ? data : "", len, out, NULL, md, NULL) ? 0 : -EIO;
}

int fscrypt_sha256(const void *data, size_t len, uint8_t out[32])
{
	int err = algs_ready();

	return err ? err : digest(algs.sha256, data, len, out);
}

int fscrypt_sha512(const void *data, size_t len, uint8_t out[64])
{
	int err = algs_ready();

	return err ? err : digest(algs.sha512, data, len, out);
}

static int mac_oneshot(EVP_MAC *mac, const uint8_t *key, size_t key_len, size_t out_len,
		       const void *data, size_t len, uint8_t *out)
{
	EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(mac);
	OSSL_PARAM params[2];
	size_t got = 0;
	int ret = -EIO;

	if (!ctx)
		return -ENOMEM;
	params[0] = OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &out_len);
	params[1] = OSSL_PARAM_construct_end();
	/* Poly1305 has no size parameter; SipHash needs it before the key. */
	if (EVP_MAC_init(ctx, key, key_len, mac == algs.siphash ? params : NULL) &&
	    EVP_MAC_update(ctx, data, len) && EVP_MAC_final(ctx, out, &got, out_len) &&
	    got == out_len)
		ret = 0;
	EVP_MAC_CTX_free(ctx);
	return ret;
}

uint64_t fscrypt_siphash(const uint8_t key[16], const void *data, size_t len)
{
	uint8_t h[8];
	uint64_t v = 0;

	/*
	 * The kernel's siphash() cannot fail and neither can this interface:
	 * OpenSSL fails here only when out of memory, and a wrong hash would
	 * put a name in the wrong bucket, so stop instead.
	 */
	if (!data && len) {
		fprintf(stderr, "uf2fs: SipHash of %zu bytes at NULL\n", len);
		abort();
	}
	if (algs_ready() || mac_oneshot(algs.siphash, key, 16, 8, data ? data : "", len, h)) {
		fprintf(stderr, "uf2fs: SipHash failed in OpenSSL\n");
		abort();
	}
	/* The 8 output bytes are the little-endian form of the kernel's u64. */
	for (int i = 7; i >= 0; i--)
		v = v << 8 | h[i];
	return v;
}

int crypt_poly1305_ctx(EVP_MAC_CTX *ctx, const uint8_t key[32], const void *data, size_t len,
		       uint8_t out[16])
{
	size_t got = 0;

	/* A key given to EVP_MAC_init() restarts the context, whatever it hashed before. */
	if (EVP_MAC_init(ctx, key, 32, NULL) && EVP_MAC_update(ctx, data, len) &&
	    EVP_MAC_final(ctx, out, &got, 16) && got == 16)
		return 0;
	return -EIO;
}

int crypt_poly1305(const uint8_t key[32], const void *data, size_t len, uint8_t out[16])
{
	int err = algs_ready();

	return err ? err : mac_oneshot(algs.poly1305, key, 32, 16, data, len, out);
}

int wide_alloc(struct wide_state **out, int mode, size_t sec_len, size_t aes_key_off)
{
	struct wide_state *w;
	int err = algs_ready();

	*out = NULL;
	if (err)
		return err;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->mode = mode;
	w->sec_len = sec_len;
	w->sec = fscrypt_secret_alloc(sec_len);
	if (!w->sec) {
		free(w);
		return -ENOMEM;
	}
	/* The pools read the key when they first key a context, not now. */
	crypt_pool_init(&w->aes_enc, algs.ecb256, w->sec + aes_key_off, 1, NULL);
	crypt_pool_init(&w->aes_dec, algs.ecb256, w->sec + aes_key_off, 0, NULL);
	pthread_mutex_init(&w->mac_lock, NULL);
	*out = w;
	return 0;
}

void wide_free(struct wide_state *w)
{
	if (!w)
		return;
	crypt_pool_destroy(&w->aes_enc);
	crypt_pool_destroy(&w->aes_dec);
	/* OpenSSL wipes a Poly1305 context's key and state when it frees it. */
	for (int i = 0; i < w->mac_n; i++)
		EVP_MAC_CTX_free(w->mac_free[i]);
	pthread_mutex_destroy(&w->mac_lock);
	fscrypt_secret_free(w->sec, w->sec_len);
	free(w);
}

EVP_MAC_CTX *wide_mac_get(struct wide_state *w)
{
	EVP_MAC_CTX *ctx = NULL;

	pthread_mutex_lock(&w->mac_lock);
	if (w->mac_n)
		ctx = w->mac_free[--w->mac_n];
	pthread_mutex_unlock(&w->mac_lock);
	return ctx ? ctx : EVP_MAC_CTX_new(algs.poly1305);
}

void wide_mac_put(struct wide_state *w, EVP_MAC_CTX *ctx)
{
	pthread_mutex_lock(&w->mac_lock);
	if (w->mac_n < (int)(sizeof(w->mac_free) / sizeof(w->mac_free[0]))) {
		w->mac_free[w->mac_n++] = ctx;
		ctx = NULL;
	}
	pthread_mutex_unlock(&w->mac_lock);
	EVP_MAC_CTX_free(ctx);
}
