// SPDX-License-Identifier: GPL-2.0
/*
 * The sparse chunk index (lib/sparse.c) against Debian's libsparse as the
 * oracle: random layouts of data, fill and don't-care runs (and a trailing
 * CRC32 chunk) are written by libsparse both as a sparse file and expanded;
 * every random read through the index, from the file and from memory, must
 * equal the expanded bytes at that offset, reads past the end must fail, and
 * a chunk table that libsparse wrote but a byte of which was then damaged
 * must either index to the same size or fail with a message (never crash).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>
#include <android/sparse/sparse.h>

#include "dev/sparse.h"

struct layout {
	uint8_t *sparse, *raw;
	size_t sparse_len, raw_len;
	uint8_t **data;			/* buffers libsparse points at */
	unsigned int nr_data;
};

static uint8_t *file_bytes(int fd, size_t *len)
{
	off_t n = lseek(fd, 0, SEEK_END);
	uint8_t *b = malloc(n ? n : 1);

	assert_non_null(b);
	assert_int_equal(pread(fd, b, n, 0), n);
	*len = n;
	return b;
}

/* A random image of nr_blocks blocks; libsparse writes it both ways. */
static void make_layout(struct layout *l, unsigned int seed, unsigned int blk_sz,
			unsigned int nr_blocks, bool crc)
{
	struct sparse_file *s = sparse_file_new(blk_sz, (int64_t)nr_blocks * blk_sz);
	int fd_sparse = memfd_create("sparse", 0), fd_raw = memfd_create("raw", 0);

	assert_non_null(s);
	assert_true(fd_sparse >= 0 && fd_raw >= 0);
	srandom(seed);
	memset(l, 0, sizeof(*l));
	l->data = calloc(nr_blocks, sizeof(*l->data));
	for (unsigned int blk = 0; blk < nr_blocks;) {
		unsigned int run = 1 + random() % 24, kind = random() % 3;

		if (run > nr_blocks - blk)
			run = nr_blocks - blk;
		if (kind == 0) {
			uint8_t *d = malloc((size_t)run * blk_sz);

			for (size_t i = 0; i < (size_t)run * blk_sz; i++)
				d[i] = random();
			l->data[l->nr_data++] = d;
			assert_int_equal(sparse_file_add_data(s, d, run * blk_sz, blk), 0);
		} else if (kind == 1) {
			assert_int_equal(sparse_file_add_fill(s, random(), run * blk_sz, blk), 0);
		}	/* else a gap: don't care */
		blk += run;
	}
	assert_int_equal(sparse_file_write(s, fd_sparse, false, true, crc), 0);
	assert_int_equal(sparse_file_write(s, fd_raw, false, false, false), 0);
	sparse_file_destroy(s);
	l->sparse = file_bytes(fd_sparse, &l->sparse_len);
	l->raw = file_bytes(fd_raw, &l->raw_len);
	close(fd_sparse);
	close(fd_raw);
}

static void free_layout(struct layout *l)
{
	for (unsigned int i = 0; i < l->nr_data; i++)
		free(l->data[i]);
	free(l->data);
	free(l->sparse);
	free(l->raw);
}

static void check_reads(struct f2fs_sparse *sp, const struct layout *l, unsigned int seed)
{
	uint8_t *buf = malloc(l->raw_len + 1);
	char msg[64];

	assert_int_equal(f2fs_sparse_size(sp), l->raw_len);
	/* the whole image in one read, then random pieces across chunk edges */
	assert_int_equal(f2fs_sparse_pread(sp, buf, l->raw_len, 0), 0);
	assert_memory_equal(buf, l->raw, l->raw_len);
	srandom(seed);
	for (int i = 0; i < 2000; i++) {
		uint64_t off = random() % l->raw_len;
		size_t len = random() % (l->raw_len - off + 1);

		if (i % 2)
			len = len % 9000;
		snprintf(msg, sizeof(msg), "read %zu at %llu", len, (unsigned long long)off);
		assert_int_equal(f2fs_sparse_pread(sp, buf, len, off), 0);
		if (memcmp(buf, l->raw + off, len))
			fail_msg("%s: bytes differ from libsparse's expansion", msg);
	}
	assert_int_equal(f2fs_sparse_pread(sp, buf, 1, l->raw_len), -EIO);
	assert_int_equal(f2fs_sparse_pread(sp, buf, 2, l->raw_len - 1), -EIO);
	assert_int_equal(f2fs_sparse_pread(sp, buf, 0, l->raw_len), 0);
	free(buf);
}

static void run_layout(unsigned int seed, unsigned int blk_sz, unsigned int blocks, bool crc)
{
	struct layout l;
	struct f2fs_sparse *sp;
	char err[256] = "";
	int fd = memfd_create("img", 0);

	make_layout(&l, seed, blk_sz, blocks, crc);
	assert_true(f2fs_sparse_magic(l.sparse, l.sparse_len));
	/* from memory (the RAM backend, the fuzzer) */
	assert_int_equal(f2fs_sparse_open(-1, l.sparse, l.sparse_len, &sp, err, sizeof(err)), 0);
	assert_true(f2fs_sparse_nr_chunks(sp) > 0);
	check_reads(sp, &l, seed + 1);
	f2fs_sparse_close(sp);
	/* from a file (psync) */
	assert_int_equal(pwrite(fd, l.sparse, l.sparse_len, 0), (ssize_t)l.sparse_len);
	assert_int_equal(f2fs_sparse_open(fd, NULL, l.sparse_len, &sp, err, sizeof(err)), 0);
	check_reads(sp, &l, seed + 2);
	f2fs_sparse_close(sp);
	close(fd);
	free_layout(&l);
}

static void test_random_layouts(void **state)
{
	for (unsigned int seed = 1; seed <= 12; seed++)
		run_layout(seed, 4096, 64 + seed * 37, seed % 2);
}

static void test_other_block_sizes(void **state)
{
	run_layout(100, 1024, 500, true);
	run_layout(101, 512, 333, false);
}

/* Every single-byte change to the headers: a clean open or a message, never a crash. */
static void test_damaged_tables(void **state)
{
	struct layout l;
	char err[256];

	make_layout(&l, 7, 4096, 80, true);
	for (size_t at = 0; at < l.sparse_len; at++) {
		uint8_t old = l.sparse[at];

		if (at >= 28 && at < l.sparse_len - 64 && at % 4096 > 40)
			continue;	/* inside raw data: only the bytes near headers */
		for (int delta = 1; delta < 256; delta += 37) {
			struct f2fs_sparse *sp = NULL;
			int ret;

			l.sparse[at] = old + delta;
			err[0] = 0;
			ret = f2fs_sparse_open(-1, l.sparse, l.sparse_len, &sp, err, sizeof(err));
			if (ret) {
				assert_int_equal(ret, -EUCLEAN);
				assert_true(strstr(err, "sparse") != NULL);
			} else {
				uint8_t b[8192];

				/* accepted: every read stays within the file */
				for (uint64_t o = 0; o < f2fs_sparse_size(sp); o += 40961)
					f2fs_sparse_pread(sp, b, sizeof(b), o);
				f2fs_sparse_close(sp);
			}
		}
		l.sparse[at] = old;
	}
	free_layout(&l);
}

static void test_truncations(void **state)
{
	struct layout l;
	struct f2fs_sparse *sp;
	char err[256];

	make_layout(&l, 9, 4096, 60, false);
	for (size_t len = 0; len < l.sparse_len; len += 1 + len / 7) {
		err[0] = 0;
		assert_int_equal(f2fs_sparse_open(-1, l.sparse, len, &sp, err, sizeof(err)),
				 -EUCLEAN);
		assert_true(strstr(err, len < 28 ? "shorter than" : "truncated") != NULL);
	}
	free_layout(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_layouts),
		cmocka_unit_test(test_other_block_sizes),
		cmocka_unit_test(test_damaged_tables),
		cmocka_unit_test(test_truncations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
