// SPDX-License-Identifier: GPL-2.0
/*
 * Speed of the fscrypt primitives (lib/crypto_alg.c), one thread, per second
 * of its CPU time: contents encryption and decryption of 4 KiB blocks per
 * mode (the best of 80 runs of 500 blocks) and decryption of 64-block batches
 * as the read path makes them, one 32-byte name per names mode,
 * SipHash and HKDF. Not part of `make bench` (it times no file system);
 * docs/crypto.md quotes it. Build and run after `make`:
 *
 *   gcc -O2 -Ilib -o build/crypto_speed bench/crypto_speed.c build/libuf2fs.a \
 *       $(pkg-config --libs libcrypto) -pthread && build/crypto_speed
 */
#include <stdio.h>
#include <time.h>

#include "crypto_alg.h"

static double now(void)
{
	struct timespec t;

	/* CPU time of this thread: on a shared, loaded machine wall time measures the queue. */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static struct fscrypt_cipher *cipher(int mode)
{
	static const uint8_t key[64] = { 1, 2, 3 };
	struct fscrypt_cipher *c;

	if (fscrypt_cipher_new(&c, mode, key, fscrypt_mode_key_size(mode))) {
		fprintf(stderr, "no cipher for mode %d\n", mode);
		return NULL;
	}
	return c;
}

int main(void)
{
	static const int contents[] = { FSCRYPT_MODE_AES_256_XTS, FSCRYPT_MODE_AES_128_CBC,
					FSCRYPT_MODE_ADIANTUM };
	static const int names[] = { FSCRYPT_MODE_AES_128_CTS, FSCRYPT_MODE_AES_256_CTS,
				     FSCRYPT_MODE_ADIANTUM, FSCRYPT_MODE_AES_256_HCTR2 };
	static uint8_t iv[32], buf[4096], key[64];
	double t;

	for (size_t m = 0; m < sizeof(contents) / sizeof(contents[0]); m++) {
		struct fscrypt_cipher *c = cipher(contents[m]);
		int n = 40000;

		if (!c)
			return 1;
		for (int dec = 0; dec < 2; dec++) {
			double best = 1e9;

			/* The fastest of many short runs: the others were interrupted. */
			for (int r = 0; r < n / 500; r++) {
				t = now();
				for (int i = 0; i < 500; i++) {
					iv[0] = (uint8_t)i;
					if (dec)
						fscrypt_decrypt_block(c, iv, buf, buf, sizeof(buf));
					else
						fscrypt_encrypt_block(c, iv, buf, buf, sizeof(buf));
				}
				t = now() - t;
				best = t < best ? t : best;
			}
			printf("%-14s 4 KiB blocks  %6.0f MB/s %s\n", fscrypt_mode_name(contents[m]),
			       500 * 4096.0 / best / 1e6, dec ? "decrypt" : "encrypt");
		}
		fscrypt_cipher_free(c);
	}
	/* The read path's call: fscrypt_crypt_units() over 64 blocks, one context. */
	for (size_t m = 0; m < sizeof(contents) / sizeof(contents[0]); m++) {
		static uint8_t big[64 * 4096], ivs[64 * FSCRYPT_MAX_IV_SIZE];
		struct fscrypt_cipher *c = cipher(contents[m]);
		double best = 1e9;

		if (!c)
			return 1;
		for (int r = 0; r < 60; r++) {
			t = now();
			for (int i = 0; i < 8; i++)
				fscrypt_crypt_units(c, ivs, big, big, 4096, 64, false);
			t = now() - t;
			best = t < best ? t : best;
		}
		printf("%-14s 64-block batch %6.0f MB/s decrypt\n", fscrypt_mode_name(contents[m]),
		       8 * 64 * 4096.0 / best / 1e6);
		fscrypt_cipher_free(c);
	}
	for (size_t m = 0; m < sizeof(names) / sizeof(names[0]); m++) {
		struct fscrypt_cipher *c = cipher(names[m]);
		int n = 100000;

		if (!c)
			return 1;
		t = now();
		for (int i = 0; i < n; i++) {
			iv[0] = (uint8_t)i;
			fscrypt_encrypt_name(c, iv, buf, buf, 32);
		}
		t = now() - t;
		printf("%-14s 32-byte name  %6.2f us\n", fscrypt_mode_name(names[m]), t / n * 1e6);
		fscrypt_cipher_free(c);
	}
	t = now();
	for (int i = 0; i < 200000; i++)
		buf[0] ^= (uint8_t)fscrypt_siphash(key, buf, 32);
	printf("SipHash-2-4    32 bytes      %6.2f us\n", (now() - t) / 200000 * 1e6);
	t = now();
	for (int i = 0; i < 20000; i++)
		fscrypt_hkdf_sha512(key, 64, buf, 20, buf + 100, 64);
	printf("HKDF-SHA512    64 bytes out  %6.2f us\n", (now() - t) / 20000 * 1e6);
	return 0;
}
