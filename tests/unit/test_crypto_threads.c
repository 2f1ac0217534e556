// SPDX-License-Identifier: GPL-2.0
/*
 * The parallel contents transforms (issue 10): lib/crypto_workers.c's pool
 * runs every chunk of a job exactly once, whichever threads post jobs at
 * the same time, really hands chunks to its helpers, stops at the first
 * error and reports it; fscrypt_crypt_units() gives what the one-unit calls
 * give, for every contents mode; and encrypted files (AES-256-XTS and
 * Adiantum) written and read in 1 MiB requests by several threads at once
 * read back as written, after a remount too, with fsck.f2fs clean. Named
 * *threads* so `make check-tsan` runs it under ThreadSanitizer.
 */
#include "test_rw_common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include <linux/fscrypt.h>

#include "fscrypt/alg.h"
#include "fscrypt/workers.h"

/* /// The pool /// */

#define JOBS		40
#define MAX_CHUNKS	48
#define CALLERS		4

struct count_job {
	atomic_int hits[MAX_CHUNKS];
	int fail_at;		/* chunk that returns -EIO, or -1 */
};

static int count_chunk(void *arg, unsigned int chunk)
{
	struct count_job *j = arg;

	atomic_fetch_add(&j->hits[chunk], 1);
	return (int)chunk == j->fail_at ? -EIO : 0;
}

static void *caller_main(void *arg)
{
	long seed = (long)arg;
	int bad = 0;

	for (int k = 0; k < JOBS; k++) {
		struct count_job j = { .fail_at = -1 };
		unsigned int n = 1 + (unsigned int)((seed * 7 + k * 13) % MAX_CHUNKS);

		for (unsigned int i = 0; i < MAX_CHUNKS; i++)
			atomic_init(&j.hits[i], 0);
		if (crypt_workers_run(count_chunk, &j, n))
			bad++;
		for (unsigned int i = 0; i < MAX_CHUNKS; i++)
			if (atomic_load(&j.hits[i]) != (i < n ? 1 : 0))
				bad++;
	}
	return (void *)(long)bad;
}

/* Every chunk of every job once, from CALLERS threads posting jobs together. */
static void t_pool_each_chunk_once(void **state)
{
	pthread_t t[CALLERS];

	(void)state;
	for (long i = 0; i < CALLERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, caller_main, (void *)i), 0);
	for (int i = 0; i < CALLERS; i++) {
		void *bad;

		assert_int_equal(pthread_join(t[i], &bad), 0);
		assert_int_equal((long)bad, 0);
	}
	assert_int_equal(crypt_workers_count(), 2);
	assert_int_equal(crypt_workers_configure(0), -EBUSY);
}

struct handoff_job {
	pthread_t caller;
	atomic_int by_helper;
	atomic_int timed_out;
};

/*
 * A chunk on the caller's thread waits until some chunk ran elsewhere: with
 * two chunks, the job ends only if a helper took the other one.
 */
static int handoff_chunk(void *arg, unsigned int chunk)
{
	struct handoff_job *j = arg;
	time_t until = time(NULL) + 30;

	(void)chunk;
	if (!pthread_equal(pthread_self(), j->caller)) {
		atomic_store(&j->by_helper, 1);
		return 0;
	}
	while (!atomic_load(&j->by_helper)) {
		if (time(NULL) > until) {
			atomic_store(&j->timed_out, 1);
			return 0;
		}
		usleep(1000);
	}
	return 0;
}

static void t_pool_helpers_work(void **state)
{
	(void)state;
	for (int k = 0; k < 20; k++) {
		struct handoff_job j = { .caller = pthread_self() };

		atomic_init(&j.by_helper, 0);
		atomic_init(&j.timed_out, 0);
		assert_int_equal(crypt_workers_run(handoff_chunk, &j, 2), 0);
		assert_int_equal(atomic_load(&j.timed_out), 0);
		assert_int_equal(atomic_load(&j.by_helper), 1);
	}
}

/* The first error comes back, and every chunk is still claimed (none runs twice). */
static void t_pool_error(void **state)
{
	(void)state;
	for (int k = 0; k < 50; k++) {
		struct count_job j = { .fail_at = k % 10 };

		for (unsigned int i = 0; i < MAX_CHUNKS; i++)
			atomic_init(&j.hits[i], 0);
		assert_int_equal(crypt_workers_run(count_chunk, &j, 10), -EIO);
		for (unsigned int i = 0; i < 10; i++)
			assert_true(atomic_load(&j.hits[i]) <= 1);
		assert_int_equal(atomic_load(&j.hits[k % 10]), 1);
	}
}

/* /// Batches of units /// */

static void check_units(int mode, size_t du, size_t n)
{
	uint8_t key[64], *plain = malloc(du * n), *one = malloc(du * n), *many = malloc(du * n);
	uint8_t ivs[16 * FSCRYPT_MAX_IV_SIZE];
	struct fscrypt_cipher *c;

	assert_true(n <= 16);
	assert_non_null(plain);
	assert_non_null(one);
	assert_non_null(many);
	rw_fill(key, sizeof(key), (uint64_t)mode);
	rw_fill(plain, du * n, 77 + du);
	rw_fill(ivs, sizeof(ivs), 99);
	assert_int_equal(fscrypt_cipher_new(&c, mode, key, fscrypt_mode_key_size(mode)), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(fscrypt_encrypt_block(c, ivs + i * FSCRYPT_MAX_IV_SIZE,
						       plain + i * du, one + i * du, du), 0);
	assert_int_equal(fscrypt_crypt_units(c, ivs, plain, many, du, n, true), 0);
	assert_memory_equal(one, many, du * n);
	assert_memory_not_equal(plain, many, du);
	/* in place, backwards */
	assert_int_equal(fscrypt_crypt_units(c, ivs, many, many, du, n, false), 0);
	assert_memory_equal(plain, many, du * n);
	assert_int_equal(fscrypt_crypt_units(c, ivs, plain, many, 15, 1, true), -EINVAL);
	fscrypt_cipher_free(c);
	free(plain);
	free(one);
	free(many);
}

static void t_units(void **state)
{
	(void)state;
	check_units(FSCRYPT_MODE_AES_256_XTS, 4096, 16);
	check_units(FSCRYPT_MODE_AES_256_XTS, 512, 9);
	check_units(FSCRYPT_MODE_AES_128_CBC, 4096, 5);
	check_units(FSCRYPT_MODE_ADIANTUM, 4096, 16);
	check_units(FSCRYPT_MODE_ADIANTUM, 1024, 3);
}

/* /// Files /// */

#define FILE_MB		3
#define WRITERS		4

static struct uf2fs *FS;
static char IMG[PATH_MAX];
static uint8_t KEY[64];

struct file_worker {
	uint32_t ino;
	uint64_t seed;
	int bad;
};

/* 1 MiB writes, then reads of 1 MiB and of odd sizes at odd offsets. */
static void *file_main(void *arg)
{
	struct file_worker *w = arg;
	size_t size = (size_t)FILE_MB << 20;
	uint8_t *want = malloc(size), *got = malloc(size);

	if (!want || !got) {
		w->bad = 1;
		goto out;
	}
	rw_fill(want, size, w->seed);
	for (size_t off = 0; off < size; off += 1 << 20)
		if (uf2fs_write(FS, w->ino, want + off, 1 << 20, off) != 1 << 20)
			w->bad++;
	for (int pass = 0; pass < 2; pass++) {
		memset(got, 0, size);
		for (size_t off = 0; off < size; off += 1 << 20)
			if (uf2fs_read(FS, w->ino, got + off, 1 << 20, off) != 1 << 20)
				w->bad++;
		if (memcmp(want, got, size))
			w->bad++;
		if (uf2fs_fsync(FS, w->ino, false))
			w->bad++;
	}
	if (uf2fs_read(FS, w->ino, got, 700001, 12345) != 700001 ||
	    memcmp(want + 12345, got, 700001))
		w->bad++;
out:
	free(want);
	free(got);
	return NULL;
}

static uint32_t make_dir(struct model *m, const char *name, int mode, const uint8_t id[16])
{
	struct uf2fs_fscrypt_policy pol = {
		.version = FSCRYPT_POLICY_V2,
		.contents_mode = mode,
		.filenames_mode = mode == FSCRYPT_MODE_ADIANTUM ? FSCRYPT_MODE_ADIANTUM :
				  FSCRYPT_MODE_AES_256_CTS,
		.flags = FSCRYPT_POLICY_FLAGS_PAD_32,
	};
	uint32_t dir = rw_create(FS, m, name, S_IFDIR | 0755, 0, NULL);

	memcpy(pol.key_spec, id, 16);
	RW_OK(uf2fs_set_policy(FS, dir, &pol));
	return dir;
}

static struct uf2fs *mount_with_key(uint8_t id[16])
{
	struct uf2fs *fs = rw_mount(IMG, false);

	RW_OK(uf2fs_add_key(fs, KEY, sizeof(KEY), NULL, id));
	return fs;
}

static void t_files(void **state)
{
	struct file_worker w[WRITERS];
	pthread_t t[WRITERS];
	struct model m;
	uint8_t id[16];
	char p[32];

	(void)state;
	model_init(&m);
	rw_fill(KEY, sizeof(KEY), 31337);
	rw_img_path(IMG, sizeof(IMG), "files");
	rw_mkfs(IMG, 128, RW_FEATURES_DEFAULT ",encrypt");
	FS = mount_with_key(id);
	make_dir(&m, "xts", FSCRYPT_MODE_AES_256_XTS, id);
	make_dir(&m, "adi", FSCRYPT_MODE_ADIANTUM, id);
	for (int i = 0; i < WRITERS; i++) {
		snprintf(p, sizeof(p), "%s/f%d", i % 2 ? "adi" : "xts", i);
		w[i] = (struct file_worker){ .ino = rw_create(FS, &m, p, S_IFREG | 0644, 0, NULL),
					     .seed = 500 + (uint64_t)i };
	}
	for (int i = 0; i < WRITERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, file_main, &w[i]), 0);
	for (int i = 0; i < WRITERS; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		if (w[i].bad)
			RW_FAIL("worker %d: %d bad reads, writes or compares", i, w[i].bad);
	}
	/* the model gets the same bytes, for the check after the remount */
	for (int i = 0; i < WRITERS; i++) {
		uint8_t *buf = malloc((size_t)FILE_MB << 20);

		assert_non_null(buf);
		rw_fill(buf, (size_t)FILE_MB << 20, w[i].seed);
		snprintf(p, sizeof(p), "%s/f%d", i % 2 ? "adi" : "xts", i);
		mnode_write(model_get(&m, p), 0, buf, (size_t)FILE_MB << 20);
		free(buf);
	}
	rw_unmount(FS);
	RW_FSCK(IMG);
	FS = mount_with_key(id);
	RW_VERIFY(FS, &m, "remount with the key");
	rw_unmount(FS);
	model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_pool_each_chunk_once),
		cmocka_unit_test(t_pool_helpers_work),
		cmocka_unit_test(t_pool_error),
		cmocka_unit_test(t_units),
		cmocka_unit_test(t_files),
	};
	int failures;

	if (system("command -v mkfs.f2fs >/dev/null && command -v fsck.f2fs >/dev/null") != 0) {
		printf("SKIP: f2fs-tools (mkfs.f2fs, fsck.f2fs) not installed\n");
		return 77;
	}
	/* two helpers even on one CPU, so the hand-offs happen everywhere */
	if (crypt_workers_configure(2)) {
		printf("the crypto pool started before the test configured it\n");
		return 1;
	}
	rw_tmp_init("crypto-threads");
	failures = cmocka_run_group_tests(tests, NULL, NULL);
	rw_tmp_done(failures);
	return failures ? 1 : 0;
}
