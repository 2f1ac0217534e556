// SPDX-License-Identifier: GPL-2.0
/*
 * File data en/decryption (the kernel's fs/crypto/crypto.c): the IVs of
 * each policy, and the transform of a run of blocks cut into chunks for the
 * crypto worker pool (workers.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "workers.h"

#include "fscrypt_private.h"

/* The kernel's fscrypt_generate_iv for data unit (or name: 0) index. */
void fscrypt_generate_iv(const struct fscrypt_info *ci, uint64_t index, uint8_t iv[32])
{
	uint8_t flags = ci->pol.flags;

	memset(iv, 0, 32);
	if (flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64)
		index |= (uint64_t)ci->ino << 32;
	else if (flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32)
		index = (uint32_t)(ci->hashed_ino + index);
	else if (flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY)
		memcpy(iv + 8, ci->nonce, FSCRYPT_FILE_NONCE_SIZE);
	for (int i = 0; i < 8; i++)
		iv[i] = index >> (8 * i);
}

/*
 * One transform of consecutive data units, cut into chunks for
 * crypt_workers_run(). The caller holds the keyring lock shared throughout,
 * so the info and its cipher outlive every chunk, whichever thread runs it.
 */
struct crypt_job {
	const struct fscrypt_info *ci;
	const uint8_t *in;
	uint8_t *out;
	uint64_t first, nunits;		/* data units */
	uint64_t chunk_units;
	bool enc;
};

/* IVs made at once for one fscrypt_crypt_units() call. */
#define IV_BATCH	32

static int crypt_chunk(void *arg, unsigned int chunk)
{
	const struct crypt_job *j = arg;
	const struct fscrypt_info *ci = j->ci;
	size_t du = (size_t)1 << ci->du_bits;
	uint64_t u = chunk * j->chunk_units;
	uint64_t end = FSCRYPT_MIN(u + j->chunk_units, j->nunits);
	uint8_t ivs[IV_BATCH * FSCRYPT_MAX_IV_SIZE];
	int ret = 0;

	while (u < end && !ret) {
		unsigned int n = FSCRYPT_MIN(end - u, (uint64_t)IV_BATCH);

		for (unsigned int i = 0; i < n; i++)
			fscrypt_generate_iv(ci, j->first + u + i, ivs + i * FSCRYPT_MAX_IV_SIZE);
		ret = fscrypt_crypt_units(ci->cipher, ivs, j->in + u * du, j->out + u * du, du, n,
					  j->enc);
		u += n;
	}
	return ret;
}

/*
 * Bytes of one chunk: about 20-50 us of one core's work, large enough that
 * a helper's wakeup is small beside it (crypto_speed on an AVX-512 core:
 * Adiantum ~3.4 GB/s, AES-128-CBC encryption ~1.3 GB/s, AES-256-XTS ~6 GB/s).
 */
static size_t chunk_bytes(const struct fscrypt_info *ci)
{
	switch (ci->pol.contents_mode) {
	case FSCRYPT_MODE_ADIANTUM:
	case FSCRYPT_MODE_AES_128_CBC:
		return 64 << 10;
	}
	return 128 << 10;
}

unsigned int fscrypt_chunk_blocks(struct fscrypt_keyring *kr, struct fscrypt_inode *fi)
{
	unsigned int n = 0;

	pthread_rwlock_rdlock(&kr->lock);
	if (fi->ci && !fi->ci->dead)
		n = FSCRYPT_MAX(chunk_bytes(fi->ci) >> kr->blkbits, (size_t)1);
	pthread_rwlock_unlock(&kr->lock);
	return n;
}

int fscrypt_crypt_blocks(struct fscrypt_keyring *kr, struct fscrypt_inode *fi, uint64_t lblk,
			 const uint8_t *in, uint8_t *out, unsigned int nblocks, bool enc)
{
	struct fscrypt_info *ci;
	int ret = 0;

	pthread_rwlock_rdlock(&kr->lock);
	ci = fi->ci;
	if (!ci || ci->dead) {
		ret = -ENOKEY;
	} else {
		unsigned int per_blk_bits = kr->blkbits - ci->du_bits;
		struct crypt_job j = {
			.ci = ci, .in = in, .out = out, .enc = enc,
			.first = lblk << per_blk_bits,
			.nunits = (uint64_t)nblocks << per_blk_bits,
			.chunk_units = FSCRYPT_MAX(chunk_bytes(ci) >> ci->du_bits, (size_t)1),
		};

		ret = crypt_workers_run(crypt_chunk, &j,
					(j.nunits + j.chunk_units - 1) / j.chunk_units);
	}
	pthread_rwlock_unlock(&kr->lock);
	return ret;
}
