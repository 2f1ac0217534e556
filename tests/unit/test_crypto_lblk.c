// SPDX-License-Identifier: GPL-2.0
/*
 * The IV_INO_LBLK_64 and IV_INO_LBLK_32 policies end to end through
 * lib/fscrypt (keyring, key setup from a context, the inode hash, file
 * data), against known answers computed apart from lib's code: Python's
 * "cryptography" (HKDF-SHA512 with fscrypt's "fscrypt\0" + context prefix,
 * AES-256-XTS) and a SipHash-2-4 written from its paper and checked there
 * against the paper's test vector, with these inputs:
 *
 *   master key 00 01 .. 3f, file system UUID 10 11 .. 1f, inode 1234
 *   LBLK_64 key = HKDF(mk, ctx 4, info = mode 1 || uuid), 64 bytes
 *   LBLK_32 key = HKDF(mk, ctx 6, info = mode 1 || uuid), 64 bytes
 *   inode hash key = HKDF(mk, ctx 7, no info), 16 bytes
 *   hashed inode = (u32)SipHash-2-4(inode hash key, le64 1234) = 0x09ff2b69
 *   IV of block b: le64(b | ino << 32) (LBLK_64), le64((u32)(hashed + b)) (LBLK_32)
 *   plaintext byte i = (31 i + 7) & 255, file blocks 5, 6, 7
 *
 * (tests/unit/fixtures/gen_lblk_kat.py prints them). Then the
 * gathered transform that folio writeback uses (fscrypt_crypt_gather, one
 * call for blocks of many folios) must give, block for block, what one
 * fscrypt_crypt_blocks call per block gives, for these policies, for plain
 * XTS and for Adiantum, over runs long enough for the crypto pool.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <linux/fscrypt.h>
#include <openssl/sha.h>

#include "fscrypt/fscrypt.h"
#include "fscrypt/alg.h"

#define BS	4096
#define INO	1234

/// A one-inode file system for the module's ops ///

struct fake_inode {
	struct fscrypt_inode fc;
	uint8_t ctx[64];
	size_t ctx_len;
};

static struct fake_inode *FI(const struct fscrypt_inode *i)
{
	return (struct fake_inode *)((char *)i - offsetof(struct fake_inode, fc));
}

static uint32_t f_ino(const struct fscrypt_inode *i) { (void)i; return INO; }
static uint32_t f_mode(const struct fscrypt_inode *i) { (void)i; return S_IFREG | 0644; }
static bool f_is_encrypted(const struct fscrypt_inode *i) { (void)i; return true; }
static bool f_casefolded(void *fs, const struct fscrypt_inode *d)
{
	(void)fs;
	(void)d;
	return false;
}

static ssize_t f_get_context(void *fs, struct fscrypt_inode *i, void *ctx, size_t len)
{
	(void)fs;
	if (len < FI(i)->ctx_len)
		return -ERANGE;
	memcpy(ctx, FI(i)->ctx, FI(i)->ctx_len);
	return (ssize_t)FI(i)->ctx_len;
}

static int f_set_context(void *fs, struct fscrypt_inode *i, const void *ctx, size_t len,
			 bool new_inode)
{
	(void)fs; (void)i; (void)ctx; (void)len; (void)new_inode;
	return -EOPNOTSUPP;
}

static int f_empty_dir(void *fs, struct fscrypt_inode *d) { (void)fs; (void)d; return 1; }
static int f_error(void *fs, int err, const char *msg) { (void)fs; (void)msg; return -err; }
static void f_msg(void *fs, const char *msg) { (void)fs; (void)msg; }

static const struct fscrypt_operations OPS = {
	.ino = f_ino, .mode = f_mode, .is_encrypted = f_is_encrypted, .casefolded = f_casefolded,
	.get_context = f_get_context, .set_context = f_set_context, .empty_dir = f_empty_dir,
	.error = f_error, .msg = f_msg,
};

static uint8_t UUID[16];

/* A keyring with the master key 00..3f and an inode under (contents, flags). */
static struct fscrypt_keyring *setup(struct fake_inode *fi, int contents, int names, int flags)
{
	struct fscrypt_pol pol = { .version = 2, .contents_mode = (uint8_t)contents,
				   .filenames_mode = (uint8_t)names, .flags = (uint8_t)flags };
	struct fscrypt_keyring *kr;
	uint8_t mk[64], nonce[16];

	for (int i = 0; i < 64; i++)
		mk[i] = (uint8_t)i;
	for (int i = 0; i < 16; i++) {
		UUID[i] = (uint8_t)(0x10 + i);
		nonce[i] = (uint8_t)(0xa0 + i);
	}
	assert_int_equal(fscrypt_keyring_init(&kr, &OPS, NULL, UUID, 12), 0);
	assert_int_equal(fscrypt_add_key(kr, mk, sizeof(mk), NULL, pol.key_spec), 0);
	memset(fi, 0, sizeof(*fi));
	fi->ctx_len = fscrypt_build_context(&pol, nonce, fi->ctx);
	assert_int_equal(fscrypt_prepare(kr, &fi->fc), 0);
	return kr;
}

static void teardown(struct fscrypt_keyring *kr, struct fake_inode *fi)
{
	fscrypt_put_info(&fi->fc);
	fscrypt_keyring_destroy(kr);
}

static void plaintext(uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)((i * 31 + 7) & 255);
}

static void check_hex(const uint8_t *got, size_t len, const char *want)
{
	char buf[2 * SHA256_DIGEST_LENGTH + 1];

	for (size_t i = 0; i < len; i++)
		sprintf(buf + 2 * i, "%02x", got[i]);
	assert_string_equal(buf, want);
}

/// Known answers ///

static void check_kat(int flags, const char *head, const char *digest)
{
	struct fake_inode fi;
	struct fscrypt_keyring *kr = setup(&fi, FSCRYPT_MODE_AES_256_XTS, FSCRYPT_MODE_AES_256_CTS,
					   flags);
	uint8_t plain[3 * BS], ct[3 * BS], back[3 * BS], md[SHA256_DIGEST_LENGTH];

	plaintext(plain, sizeof(plain));
	assert_int_equal(fscrypt_crypt_blocks(kr, &fi.fc, 5, plain, ct, 3, true), 0);
	check_hex(ct, 32, head);
	SHA256(ct, sizeof(ct), md);
	check_hex(md, sizeof(md), digest);
	assert_int_equal(fscrypt_crypt_blocks(kr, &fi.fc, 5, ct, back, 3, false), 0);
	assert_memory_equal(back, plain, sizeof(plain));
	teardown(kr, &fi);
}

static void t_lblk64(void **state)
{
	(void)state;
	check_kat(FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64,
		  "7b579477a10eca00ea42638bbe6f4264b63e3eaa75dc9080a4aadac4278795db",
		  "df0d7e431bc22a3e98a4b12476490496ffe56a88f4a2ef81586d9eb189206f5a");
}

static void t_lblk32(void **state)
{
	(void)state;
	check_kat(FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32,
		  "0f0c907957303d2632628d87cee455ec59fbd149a97d55530dd716c5085d4fd1",
		  "686fb01aa1fac3a952596301af0b5b23fa47146e6dfdb9b566c101ccf8ba7eae");
}

/* The pieces of LBLK_32 on their own: the inode hash key and the hashed inode. */
static void t_ino_hash(void **state)
{
	uint8_t mk[64], key[16], le_ino[8] = { INO & 255, INO >> 8 };

	(void)state;
	for (int i = 0; i < 64; i++)
		mk[i] = (uint8_t)i;
	assert_int_equal(fscrypt_hkdf(mk, 64, HKDF_CONTEXT_INODE_HASH_KEY, NULL, 0, key, 16), 0);
	check_hex(key, 16, "670f76f85d2f3cb8a67e0bba366c1014");
	assert_int_equal((uint32_t)fscrypt_siphash(key, le_ino, 8), 0x09ff2b69);
}

/// Gathered blocks against one call per block ///

#define NGATHER	200

static void check_gather(int contents, int names, int flags)
{
	struct fake_inode fi;
	struct fscrypt_keyring *kr = setup(&fi, contents, names, flags);
	uint8_t *src = malloc((size_t)NGATHER * 2 * BS), *one = malloc((size_t)NGATHER * BS);
	uint8_t *all = malloc((size_t)NGATHER * BS), *back = malloc((size_t)NGATHER * BS);
	const uint8_t *ins[NGATHER], *bins[NGATHER];
	uint64_t lblks[NGATHER], l = 3;

	assert_non_null(src);
	assert_non_null(one);
	assert_non_null(all);
	assert_non_null(back);
	plaintext(src, (size_t)NGATHER * 2 * BS);
	/*
	 * Sources: runs of consecutive blocks of one buffer (a large folio),
	 * single blocks elsewhere (small folios), file blocks with gaps (a
	 * partly dirty folio) and out of order.
	 */
	for (unsigned int i = 0; i < NGATHER; i++) {
		unsigned int slot = (i % 7 < 4) ? i : (i * 37) % (2 * NGATHER);

		ins[i] = src + (size_t)slot * BS;
		l += (i % 11 == 5) ? 2 : 1;
		lblks[i] = (i % 50 == 49) ? l + 1000 : l;
	}
	for (unsigned int i = 0; i < NGATHER; i++)
		assert_int_equal(fscrypt_crypt_blocks(kr, &fi.fc, lblks[i], ins[i],
						      one + (size_t)i * BS, 1, true), 0);
	assert_int_equal(fscrypt_crypt_gather(kr, &fi.fc, lblks, ins, all, NGATHER, true), 0);
	assert_memory_equal(one, all, (size_t)NGATHER * BS);
	/* and back, in place */
	for (unsigned int i = 0; i < NGATHER; i++)
		bins[i] = all + (size_t)i * BS;
	assert_int_equal(fscrypt_crypt_gather(kr, &fi.fc, lblks, bins, all, NGATHER, false), 0);
	for (unsigned int i = 0; i < NGATHER; i++)
		assert_memory_equal(all + (size_t)i * BS, ins[i], BS);
	teardown(kr, &fi);
	free(src);
	free(one);
	free(all);
	free(back);
}

static void t_gather(void **state)
{
	(void)state;
	check_gather(FSCRYPT_MODE_AES_256_XTS, FSCRYPT_MODE_AES_256_CTS, 0);
	check_gather(FSCRYPT_MODE_AES_256_XTS, FSCRYPT_MODE_AES_256_CTS,
		     FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64);
	check_gather(FSCRYPT_MODE_AES_256_XTS, FSCRYPT_MODE_AES_256_CTS,
		     FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32);
	check_gather(FSCRYPT_MODE_ADIANTUM, FSCRYPT_MODE_ADIANTUM, FSCRYPT_POLICY_FLAG_DIRECT_KEY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_lblk64),
		cmocka_unit_test(t_lblk32),
		cmocka_unit_test(t_ino_hash),
		cmocka_unit_test(t_gather),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
