/* SPDX-License-Identifier: GPL-2.0 */
/*
 * workers.h — split one large en/decryption (a 1 MiB read or write
 * of an encrypted file) into chunks that a few helper threads and the
 * caller work through together. lib/fscrypt/workers.c owns the threads.
 */
#ifndef UF2FS_CRYPTO_WORKERS_H
#define UF2FS_CRYPTO_WORKERS_H

/*
 * Run fn(arg, i) once for each i in [0, nchunks), in any order and on any
 * of the caller and the helpers, and return when all have run: 0, or the
 * first negative errno a chunk returned (chunks not yet started are then
 * skipped). The caller works too, so a job finishes even when no helper is
 * free. fn may call crypt_workers_run() itself only for a job of one chunk,
 * which runs on the calling thread without the pool.
 */
int crypt_workers_run(int (*fn)(void *arg, unsigned int chunk), void *arg,
		      unsigned int nchunks);

/*
 * Helper threads to start (at most CRYPT_WORKERS_MAX), before the first
 * job; -1 (the default) means one fewer than the CPUs this process may run
 * on. 0 runs every job on its caller. Returns -EBUSY once the pool started.
 */
#define CRYPT_WORKERS_MAX	8
int crypt_workers_configure(int helpers);

/* Helpers started so far (0 until the first job that has two chunks). */
int crypt_workers_count(void);

#endif /* UF2FS_CRYPTO_WORKERS_H */
