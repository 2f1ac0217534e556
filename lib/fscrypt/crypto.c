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
 * One transform, cut into chunks for crypt_workers_run(): consecutive data
 * units from one buffer, or (gathered) whole blocks each with its own file
 * block and source, into one output buffer. The caller holds the keyring
 * lock shared throughout, so the info and its cipher outlive every chunk,
 * whichever thread runs it.
 */
struct crypt_job {
	const struct fscrypt_info *ci;
	const uint8_t *in;
	uint8_t *out;
	uint64_t first, nunits;		/* data units */
	uint64_t chunk_units;
	bool enc;
	/* gathered: block i is lblks[i] from ins[i]; then units are blocks */
	const uint64_t *lblks;
	const uint8_t *const *ins;
	unsigned int per_blk_bits;	/* data units per block, log2 */
};

/* IVs made at once for one fscrypt_crypt_units() call. */
#define IV_BATCH	32

/* Units [first, first + n) of the file from in to out, IVs a batch at a time. */
static int crypt_unit_run(const struct crypt_job *j, uint64_t first, const uint8_t *in,
			  uint8_t *out, uint64_t n)
{
	const struct fscrypt_info *ci = j->ci;
	size_t du = (size_t)1 << ci->du_bits;
	uint8_t ivs[IV_BATCH * FSCRYPT_MAX_IV_SIZE];
	uint64_t u = 0;
	int ret = 0;

	while (u < n && !ret) {
		unsigned int m = FSCRYPT_MIN(n - u, (uint64_t)IV_BATCH);

		for (unsigned int i = 0; i < m; i++)
			fscrypt_generate_iv(ci, first + u + i, ivs + i * FSCRYPT_MAX_IV_SIZE);
		ret = fscrypt_crypt_units(ci->cipher, ivs, in + u * du, out + u * du, du, m, j->enc);
		u += m;
	}
	return ret;
}

static int crypt_chunk(void *arg, unsigned int chunk)
{
	const struct crypt_job *j = arg;
	uint64_t u = chunk * j->chunk_units;

	return crypt_unit_run(j, j->first + u, j->in + (u << j->ci->du_bits),
			      j->out + (u << j->ci->du_bits),
			      FSCRYPT_MIN(j->chunk_units, j->nunits - u));
}

/*
 * A chunk of gathered blocks: blocks whose file indexes and sources both
 * follow on go as one run, as fscrypt_crypt_blocks would take them.
 */
static int crypt_gather_chunk(void *arg, unsigned int chunk)
{
	const struct crypt_job *j = arg;
	unsigned int bbits = j->per_blk_bits + j->ci->du_bits;
	uint64_t b = chunk * j->chunk_units, end = FSCRYPT_MIN(b + j->chunk_units, j->nunits);
	int ret = 0;

	while (b < end && !ret) {
		uint64_t n = 1;

		while (b + n < end && j->lblks[b + n] == j->lblks[b] + n &&
		       j->ins[b + n] == j->ins[b] + (n << bbits))
			n++;
		ret = crypt_unit_run(j, j->lblks[b] << j->per_blk_bits, j->ins[b],
				     j->out + (b << bbits), n << j->per_blk_bits);
		b += n;
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

/*
 * Run a job under the keyring lock (shared): nblocks from lblk out of one
 * buffer, or, when j->lblks is set, nblocks gathered blocks.
 */
static int crypt_run(struct fscrypt_keyring *kr, struct fscrypt_inode *fi, struct crypt_job *j,
		     uint64_t lblk, unsigned int nblocks)
{
	struct fscrypt_info *ci;
	int ret = -ENOKEY;

	pthread_rwlock_rdlock(&kr->lock);
	ci = fi->ci;
	if (ci && !ci->dead) {
		unsigned int unit_bits = j->lblks ? kr->blkbits : ci->du_bits;

		j->ci = ci;
		j->per_blk_bits = kr->blkbits - ci->du_bits;
		j->first = lblk << j->per_blk_bits;
		j->nunits = j->lblks ? nblocks : (uint64_t)nblocks << j->per_blk_bits;
		j->chunk_units = FSCRYPT_MAX(chunk_bytes(ci) >> unit_bits, (size_t)1);
		ret = crypt_workers_run(j->lblks ? crypt_gather_chunk : crypt_chunk, j,
					(j->nunits + j->chunk_units - 1) / j->chunk_units);
	}
	pthread_rwlock_unlock(&kr->lock);
	return ret;
}

int fscrypt_crypt_blocks(struct fscrypt_keyring *kr, struct fscrypt_inode *fi, uint64_t lblk,
			 const uint8_t *in, uint8_t *out, unsigned int nblocks, bool enc)
{
	struct crypt_job j = { .in = in, .out = out, .enc = enc };

	return crypt_run(kr, fi, &j, lblk, nblocks);
}

int fscrypt_crypt_gather(struct fscrypt_keyring *kr, struct fscrypt_inode *fi,
			 const uint64_t *lblks, const uint8_t *const *ins, uint8_t *out,
			 unsigned int nblocks, bool enc)
{
	struct crypt_job j = { .out = out, .enc = enc, .lblks = lblks, .ins = ins };

	return crypt_run(kr, fi, &j, 0, nblocks);
}
