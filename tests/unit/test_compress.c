// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of cluster decompression (lib/compress.c) and of our LZO-RLE
 * decoder (lib/lzo_rle.c); and of cluster compression (f2fs_compress_cluster),
 * whose clusters must decompress to what went in. Clusters are compressed with the real libraries
 * (liblzo2, liblz4, libzstd), wrapped in struct compress_data as Linux
 * writes it, and must come back byte for byte. Corrupt headers, flipped
 * bits and random streams must give -EIO; buffers are malloc'd to their
 * exact size so that AddressSanitizer catches any stray access.
 *
 * The LZO-RLE decoder is checked four ways: on clusters the Linux kernel
 * compressed (fixtures/kernel_clusters.h, one per algorithm), against
 * liblzo2 on plain LZO1X streams (including lzo1x_999, which uses every
 * instruction form), on hand-assembled version-1 streams whose bytes are
 * spelled out below, and on random version-1 streams built from lzo.rst.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <lz4.h>
#include <lzo/lzo1x.h>
#include <zstd.h>

#include "f2fs.h"
#include "lzo_rle.h"

struct fx_run {
	uint16_t off;
	uint8_t len;
	const char *bytes;
};

#include "fixtures/kernel_clusters.h"
#include "fixtures/kernel_data.h"

#define CLUSTER_LOG	2
#define CLUSTER_BYTES	(F2FS_BLKSIZE << CLUSTER_LOG)

/* /// Test data /// */

enum pattern { PAT_TEXT, PAT_ZEROS, PAT_RANDOM, PAT_MIXED, PAT_RUNS, PAT_NR };

static uint32_t rng_state = 1;

static uint32_t rng(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return rng_state >> 8;
}

static uint8_t *make_data(enum pattern pat, size_t len, uint32_t seed)
{
	static const char *const words[] = {
		"flash ", "friendly ", "file ", "system ", "node ", "segment ", "checkpoint ",
	};
	uint8_t *p = malloc(len ? len : 1);
	size_t i = 0;

	assert_non_null(p);
	rng_state = seed;
	while (i < len) {
		switch (pat) {
		case PAT_TEXT: {
			const char *w = words[rng() % ARRAY_SIZE(words)];
			size_t n = MIN(strlen(w), len - i);

			memcpy(p + i, w, n);
			i += n;
			break;
		}
		case PAT_ZEROS:
			p[i++] = 0;
			break;
		case PAT_RANDOM:
			p[i++] = (uint8_t)rng();
			break;
		case PAT_MIXED:
			/* zero stretches between random ones: what RLE is for */
			p[i] = (i / 700) % 2 ? (uint8_t)rng() : 0;
			i++;
			break;
		case PAT_RUNS: {
			size_t want = rng() % 3000, n = MIN(want, len - i);
			uint8_t v = rng() % 4 ? 0 : (uint8_t)rng();

			memset(p + i, v, n);
			i += n;
			if (i < len)
				p[i++] = (uint8_t)rng();
			break;
		}
		default:
			fail();
		}
	}
	return p;
}

/* /// Compressing with the reference libraries /// */

/* Compress src with the library for algo; returns a malloc'd stream. */
static uint8_t *lib_compress(unsigned int algo, const uint8_t *src, size_t len, size_t *clen,
			     bool best)
{
	size_t cap = len + len / 16 + 64 + 3 + ZSTD_compressBound(len) + LZ4_compressBound(len);
	uint8_t *dst = malloc(cap);

	assert_non_null(dst);
	switch (algo) {
	case COMPRESS_LZO:
	case COMPRESS_LZORLE: {
		void *wrk = malloc(LZO1X_999_MEM_COMPRESS);
		lzo_uint out = cap;

		assert_non_null(wrk);
		assert_int_equal(lzo_init(), LZO_E_OK);
		if (best)
			assert_int_equal(lzo1x_999_compress(src, len, dst, &out, wrk), LZO_E_OK);
		else
			assert_int_equal(lzo1x_1_compress(src, len, dst, &out, wrk), LZO_E_OK);
		free(wrk);
		*clen = out;
		break;
	}
	case COMPRESS_LZ4:
		*clen = (size_t)LZ4_compress_default((const char *)src, (char *)dst, (int)len,
						     (int)cap);
		assert_true(*clen > 0);
		break;
	case COMPRESS_ZSTD:
		*clen = ZSTD_compress(dst, cap, src, len, best ? 19 : 1);
		assert_false(ZSTD_isError(*clen));
		break;
	default:
		fail();
	}
	return dst;
}

/*
 * Lay out compressed blocks as f2fs does: header, stream, zero padding to
 * whole blocks. The buffer is exactly nr_cblocks blocks long.
 */
static uint8_t *make_cluster(const uint8_t *cdata, size_t clen, size_t *cbuf_len)
{
	size_t n = DIV_ROUND_UP(COMPRESS_HEADER_SIZE + clen, F2FS_BLKSIZE) * F2FS_BLKSIZE;
	uint8_t *cbuf = calloc(1, n);
	struct compress_data *cd = (void *)cbuf;

	assert_non_null(cbuf);
	cd->clen = (uint32_t)clen;
	cd->chksum = f2fs_crc32(F2FS_SUPER_MAGIC, cdata, clen);
	memcpy(cd->cdata, cdata, clen);
	*cbuf_len = n;
	return cbuf;
}

static uint8_t *compressed_cluster(unsigned int algo, const uint8_t *src, size_t len,
				   size_t *cbuf_len, bool best)
{
	size_t clen;
	uint8_t *c = lib_compress(algo, src, len, &clen, best);
	uint8_t *cbuf = make_cluster(c, clen, cbuf_len);

	free(c);
	return cbuf;
}

static void expect_roundtrip(unsigned int algo, enum pattern pat, size_t len, bool best)
{
	uint8_t *src = make_data(pat, len, 1000 + pat);
	uint8_t *out = malloc(len);
	size_t cbuf_len;
	uint8_t *cbuf = compressed_cluster(algo, src, len, &cbuf_len, best);

	assert_non_null(out);
	memset(out, 0xee, len);
	assert_int_equal(f2fs_decompress_cluster(algo, cbuf, cbuf_len, out, len, true), 0);
	assert_memory_equal(out, src, len);
	memset(out, 0xee, len);
	assert_int_equal(f2fs_decompress_cluster(algo, cbuf, cbuf_len, out, len, false), 0);
	assert_memory_equal(out, src, len);
	free(cbuf);
	free(out);
	free(src);
}

/* /// Round trips /// */

static void roundtrip_all(unsigned int algo, bool best)
{
	for (int pat = 0; pat < PAT_NR; pat++) {
		expect_roundtrip(algo, pat, CLUSTER_BYTES, best);
		expect_roundtrip(algo, pat, F2FS_BLKSIZE << 4, best);
	}
	expect_roundtrip(algo, PAT_TEXT, F2FS_BLKSIZE << MAX_COMPRESS_LOG_SIZE, best);
}

static void test_roundtrip_lzo(void **state)
{
	roundtrip_all(COMPRESS_LZO, false);
	roundtrip_all(COMPRESS_LZO, true);
}

static void test_roundtrip_lz4(void **state)
{
	roundtrip_all(COMPRESS_LZ4, false);
}

static void test_roundtrip_zstd(void **state)
{
	roundtrip_all(COMPRESS_ZSTD, false);
	expect_roundtrip(COMPRESS_ZSTD, PAT_MIXED, CLUSTER_BYTES, true);
}

/* A version-0 stream is valid lzo-rle input: the kernel decoder reads both. */
static void test_roundtrip_lzorle_plain_stream(void **state)
{
	roundtrip_all(COMPRESS_LZORLE, false);
	roundtrip_all(COMPRESS_LZORLE, true);
}

static int rle_decode_raw(const uint8_t *in, size_t in_len, uint8_t *out, size_t cap)
{
	return uf2fs_lzo_rle_decompress(in, in_len, out, &cap);
}

/* /// Clusters written by Linux /// */

static uint8_t *kfx_expand(const struct kfx_cluster *k)
{
	uint8_t *buf = calloc(1, k->len);

	assert_non_null(buf);
	for (size_t i = 0; i < k->nr_runs; i++) {
		assert_true((size_t)k->runs[i].off + k->runs[i].len <= k->len);
		memcpy(buf + k->runs[i].off, k->runs[i].bytes, k->runs[i].len);
	}
	return buf;
}

static void test_kernel_clusters(void **state)
{
	uint8_t *want = malloc(KFX_FILE_BYTES), *out = malloc(KFX_FILE_BYTES);
	bool seen[COMPRESS_MAX] = { false };

	kfx_file_data(want, KFX_FILE_BYTES);
	for (size_t i = 0; i < ARRAY_SIZE(kfx_clusters); i++) {
		const struct kfx_cluster *k = &kfx_clusters[i];
		uint8_t *cbuf = kfx_expand(k);
		const struct compress_data *cd = (const void *)cbuf;

		assert_int_equal((size_t)F2FS_BLKSIZE << k->log_cluster_size, KFX_FILE_BYTES);
		/* mounted with compress_chksum: the kernel filled in the CRC */
		assert_true(k->compress_flag & COMPRESS_CHKSUM_FLAG);
		assert_int_not_equal(cd->chksum, 0);
		memset(out, 0xee, KFX_FILE_BYTES);
		assert_int_equal(f2fs_decompress_cluster(k->algo, cbuf, k->len, out,
							 KFX_FILE_BYTES, true), 0);
		assert_memory_equal(out, want, KFX_FILE_BYTES);
		seen[k->algo] = true;
		free(cbuf);
	}
	for (unsigned int a = 0; a < COMPRESS_MAX; a++)
		assert_true(seen[a]);
	free(out);
	free(want);
}

/* The kernel's lzo-rle cluster really is version 1 and really uses runs. */
static void test_kernel_lzorle_is_rle(void **state)
{
	const struct kfx_cluster *k = NULL;
	uint8_t *cbuf, *out = malloc(KFX_FILE_BYTES);
	struct compress_data *cd;
	lzo_uint tn = KFX_FILE_BYTES;

	for (size_t i = 0; i < ARRAY_SIZE(kfx_clusters); i++)
		if (kfx_clusters[i].algo == COMPRESS_LZORLE)
			k = &kfx_clusters[i];
	assert_non_null(k);
	cbuf = kfx_expand(k);
	cd = (void *)cbuf;
	assert_int_equal(cd->cdata[0], 17);
	assert_int_equal(cd->cdata[1], 1);
	assert_int_not_equal(lzo1x_decompress_safe(cd->cdata, cd->clen, out, &tn, NULL),
			     LZO_E_OK);
	/* read as version 0, the run instructions become impossible copies */
	cd->cdata[1] = 0;
	assert_int_equal(rle_decode_raw(cd->cdata, cd->clen, out, KFX_FILE_BYTES), -EIO);
	free(cbuf);
	free(out);
}

static void test_kernel_cluster_flips(void **state)
{
	uint8_t *out = malloc(KFX_FILE_BYTES);

	for (size_t i = 0; i < ARRAY_SIZE(kfx_clusters); i++) {
		const struct kfx_cluster *k = &kfx_clusters[i];
		uint8_t *cbuf = kfx_expand(k);
		struct compress_data *cd = (void *)cbuf;

		for (size_t b = 0; b < (size_t)cd->clen * 8; b += 7) {
			int ret;

			cd->cdata[b / 8] ^= (uint8_t)(1u << (b % 8));
			assert_int_equal(f2fs_decompress_cluster(k->algo, cbuf, k->len, out,
								 KFX_FILE_BYTES, true), -EIO);
			ret = f2fs_decompress_cluster(k->algo, cbuf, k->len, out, KFX_FILE_BYTES,
						      false);
			assert_true(ret == 0 || ret == -EIO);
			cd->cdata[b / 8] ^= (uint8_t)(1u << (b % 8));
		}
		free(cbuf);
	}
	free(out);
}

/* /// Header and checksum /// */

static const unsigned int all_algos[] = { COMPRESS_LZO, COMPRESS_LZ4, COMPRESS_ZSTD,
					  COMPRESS_LZORLE };

static void test_checksum_mismatch(void **state)
{
	uint8_t *src = make_data(PAT_TEXT, CLUSTER_BYTES, 5);
	uint8_t *out = malloc(CLUSTER_BYTES);

	for (size_t a = 0; a < ARRAY_SIZE(all_algos); a++) {
		size_t n;
		uint8_t *cbuf = compressed_cluster(all_algos[a], src, CLUSTER_BYTES, &n, false);
		struct compress_data *cd = (void *)cbuf;

		cd->chksum ^= 0x100;
		assert_int_equal(f2fs_decompress_cluster(all_algos[a], cbuf, n, out,
							 CLUSTER_BYTES, true), -EIO);
		/* Without the inode's CHKSUM flag the field is not looked at. */
		assert_int_equal(f2fs_decompress_cluster(all_algos[a], cbuf, n, out,
							 CLUSTER_BYTES, false), 0);
		assert_memory_equal(out, src, CLUSTER_BYTES);
		free(cbuf);
	}
	free(out);
	free(src);
}

/* The CRC is crc32_le seeded with F2FS_SUPER_MAGIC, not a plain CRC-32. */
static void test_checksum_seed(void **state)
{
	uint8_t *src = make_data(PAT_TEXT, CLUSTER_BYTES, 6);
	uint8_t *out = malloc(CLUSTER_BYTES);
	size_t n;
	uint8_t *cbuf = compressed_cluster(COMPRESS_LZ4, src, CLUSTER_BYTES, &n, false);
	struct compress_data *cd = (void *)cbuf;

	cd->chksum = ~f2fs_crc32(0xFFFFFFFFu, cd->cdata, cd->clen);
	assert_int_equal(f2fs_decompress_cluster(COMPRESS_LZ4, cbuf, n, out, CLUSTER_BYTES, true),
			 -EIO);
	cd->chksum = f2fs_crc32(F2FS_SUPER_MAGIC, cd->cdata, cd->clen);
	assert_int_equal(f2fs_decompress_cluster(COMPRESS_LZ4, cbuf, n, out, CLUSTER_BYTES, true),
			 0);
	free(cbuf);
	free(out);
	free(src);
}

static void test_bad_headers(void **state)
{
	uint8_t *src = make_data(PAT_TEXT, CLUSTER_BYTES, 7);
	uint8_t *out = malloc(CLUSTER_BYTES);

	for (size_t a = 0; a < ARRAY_SIZE(all_algos); a++) {
		unsigned int algo = all_algos[a];
		size_t n;
		uint8_t *cbuf = compressed_cluster(algo, src, CLUSTER_BYTES, &n, false);
		struct compress_data *cd = (void *)cbuf;
		uint32_t clen = cd->clen;

		/* clen past the compressed blocks */
		cd->clen = (uint32_t)(n - COMPRESS_HEADER_SIZE + 1);
		assert_int_equal(f2fs_decompress_cluster(algo, cbuf, n, out, CLUSTER_BYTES, false),
				 -EIO);
		cd->clen = 0xFFFFFFFFu;
		assert_int_equal(f2fs_decompress_cluster(algo, cbuf, n, out, CLUSTER_BYTES, false),
				 -EIO);
		/* truncated stream */
		cd->clen = clen - 1;
		assert_int_equal(f2fs_decompress_cluster(algo, cbuf, n, out, CLUSTER_BYTES, false),
				 -EIO);
		cd->clen = 0;
		assert_int_equal(f2fs_decompress_cluster(algo, cbuf, n, out, CLUSTER_BYTES, false),
				 -EIO);
		cd->clen = clen;
		/* clen one byte past a shortened view of the same blocks */
		assert_int_equal(f2fs_decompress_cluster(algo, cbuf, COMPRESS_HEADER_SIZE + clen - 1,
							 out, CLUSTER_BYTES, false), -EIO);
		assert_int_equal(f2fs_decompress_cluster(algo, cbuf, COMPRESS_HEADER_SIZE + clen,
							 out, CLUSTER_BYTES, true), 0);
		/* shorter than a header */
		assert_int_equal(f2fs_decompress_cluster(algo, cbuf, COMPRESS_HEADER_SIZE - 1, out,
							 CLUSTER_BYTES, false), -EIO);
		/* the cluster must come out at exactly its size */
		assert_int_equal(f2fs_decompress_cluster(algo, cbuf, n, out, CLUSTER_BYTES - 1,
							 false), -EIO);
		assert_int_equal(f2fs_decompress_cluster(algo, cbuf, n, out, 0, false), -EIO);
		free(cbuf);
	}
	free(out);
	free(src);
}

static void test_output_larger_than_stream(void **state)
{
	uint8_t *src = make_data(PAT_TEXT, CLUSTER_BYTES, 8);
	uint8_t *out = malloc(2 * CLUSTER_BYTES);

	for (size_t a = 0; a < ARRAY_SIZE(all_algos); a++) {
		size_t n;
		uint8_t *cbuf = compressed_cluster(all_algos[a], src, CLUSTER_BYTES, &n, false);

		assert_int_equal(f2fs_decompress_cluster(all_algos[a], cbuf, n, out,
							 2 * CLUSTER_BYTES, false), -EIO);
		free(cbuf);
	}
	free(out);
	free(src);
}

static void test_unknown_algorithm(void **state)
{
	uint8_t cbuf[F2FS_BLKSIZE] = { 0 };
	uint8_t out[16];

	assert_int_equal(f2fs_decompress_cluster(COMPRESS_MAX, cbuf, sizeof(cbuf), out,
						 sizeof(out), false), -EOPNOTSUPP);
	assert_int_equal(f2fs_decompress_cluster(200, cbuf, sizeof(cbuf), out, sizeof(out),
						 false), -EOPNOTSUPP);
}

static void test_names(void **state)
{
	assert_string_equal(f2fs_compress_name(COMPRESS_LZO), "lzo");
	assert_string_equal(f2fs_compress_name(COMPRESS_LZ4), "lz4");
	assert_string_equal(f2fs_compress_name(COMPRESS_ZSTD), "zstd");
	assert_string_equal(f2fs_compress_name(COMPRESS_LZORLE), "lzo-rle");
	assert_string_equal(f2fs_compress_name(COMPRESS_MAX), "unknown");
}

/*
 * Flip every bit of the stream in turn (a sample for long streams). With
 * the checksum on, every flip must be caught; with it off the codec may
 * produce wrong bytes but must not crash or overrun (ASan watches).
 */
static void test_bit_flips(void **state)
{
	uint8_t *src = make_data(PAT_MIXED, CLUSTER_BYTES, 9);
	uint8_t *out = malloc(CLUSTER_BYTES);

	for (size_t a = 0; a < ARRAY_SIZE(all_algos); a++) {
		unsigned int algo = all_algos[a];
		size_t n;
		uint8_t *cbuf = compressed_cluster(algo, src, CLUSTER_BYTES, &n, false);
		struct compress_data *cd = (void *)cbuf;
		size_t bits = (size_t)cd->clen * 8, step = bits / 3000 + 1;

		for (size_t b = 0; b < bits; b += step) {
			int ret;

			cd->cdata[b / 8] ^= (uint8_t)(1u << (b % 8));
			assert_int_equal(f2fs_decompress_cluster(algo, cbuf, n, out,
								 CLUSTER_BYTES, true), -EIO);
			ret = f2fs_decompress_cluster(algo, cbuf, n, out, CLUSTER_BYTES, false);
			assert_true(ret == 0 || ret == -EIO);
			cd->cdata[b / 8] ^= (uint8_t)(1u << (b % 8));
		}
		assert_int_equal(f2fs_decompress_cluster(algo, cbuf, n, out, CLUSTER_BYTES, true),
				 0);
		free(cbuf);
	}
	free(out);
	free(src);
}

/* Garbage in every algorithm's clothing: only 0 or -EIO, never a crash. */
static void test_random_streams(void **state)
{
	uint8_t *out = malloc(CLUSTER_BYTES);

	for (uint32_t seed = 1; seed <= 400; seed++) {
		size_t len = 1 + seed * 37 % 3000;
		uint8_t *junk = make_data(seed % 2 ? PAT_RANDOM : PAT_RUNS, len, seed);
		uint8_t *cbuf;
		size_t n;

		if (seed % 5 == 0)
			junk[0] = 17;	/* LZO version marker */
		if (seed % 10 == 0 && len > 1)
			junk[1] = 1;
		cbuf = make_cluster(junk, len, &n);
		for (size_t a = 0; a < ARRAY_SIZE(all_algos); a++) {
			int ret = f2fs_decompress_cluster(all_algos[a], cbuf, n, out,
							  CLUSTER_BYTES, false);

			assert_true(ret == 0 || ret == -EIO);
		}
		free(cbuf);
		free(junk);
	}
	free(out);
}

/* /// LZO-RLE decoder /// */

static int rle_decode(const uint8_t *in, size_t in_len, uint8_t *out, size_t cap, size_t *got)
{
	/* Copy the input so ASan bounds it exactly. */
	uint8_t *copy = malloc(in_len ? in_len : 1);
	size_t n = cap;
	int ret;

	assert_non_null(copy);
	memcpy(copy, in, in_len);
	ret = uf2fs_lzo_rle_decompress(copy, in_len, out, &n);
	free(copy);
	if (got)
		*got = n;
	return ret;
}

/* Our decoder agrees with liblzo2 on its own streams of many sizes. */
static void test_rle_decoder_matches_liblzo2(void **state)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 4, 5, 17, 100, 238, 239, 4096, 70000 };

	for (size_t s = 0; s < ARRAY_SIZE(sizes); s++) {
		for (int pat = 0; pat < PAT_NR; pat++) {
			for (int best = 0; best < 2; best++) {
				size_t len = sizes[s], clen, got;
				uint8_t *src = make_data(pat, len, (uint32_t)(s * 10 + pat));
				uint8_t *c = lib_compress(COMPRESS_LZO, src, len, &clen, best);
				uint8_t *out = malloc(len ? len : 1);

				assert_int_equal(rle_decode(c, clen, out, len, &got), 0);
				assert_int_equal(got, len);
				assert_memory_equal(out, src, len);
				/* one byte short of room must fail, not overrun */
				if (len)
					assert_int_equal(rle_decode(c, clen, out, len - 1, NULL),
							 -EIO);
				free(out);
				free(c);
				free(src);
			}
		}
	}
}

/*
 * Mutate liblzo2 streams and compare. Where liblzo2 accepts a mutant and
 * consumes it entirely, so must we, with the same output.
 */
static void test_rle_decoder_differential(void **state)
{
	const size_t len = 20000;
	uint8_t *src = make_data(PAT_TEXT, len, 77);
	uint8_t *ours = malloc(len), *theirs = malloc(len);
	size_t clen;
	uint8_t *c = lib_compress(COMPRESS_LZO, src, len, &clen, true);
	unsigned int both_ok = 0, lenient_end = 0;

	rng_state = 4242;
	for (int iter = 0; iter < 20000; iter++) {
		size_t pos = rng() % clen, got;
		uint8_t saved = c[pos];
		lzo_uint tn = len;
		int lr, r;

		c[pos] ^= (uint8_t)(1u << (rng() % 8));
		if (c[0] == 17) {
			c[pos] = saved;
			continue;	/* a version marker: liblzo2 would read it differently */
		}
		lr = lzo1x_decompress_safe(c, clen, theirs, &tn, NULL);
		r = rle_decode(c, clen, ours, len, &got);
		if (lr == LZO_E_OK && pos == clen - 3 && c[pos] != 0x11) {
			/*
			 * liblzo2 takes an end marker with any length bits;
			 * Linux, and so we, only the three-byte 0x11 form.
			 */
			assert_int_equal(r, -EIO);
			lenient_end++;
		} else if (lr == LZO_E_OK) {
			assert_int_equal(r, 0);
			assert_int_equal(got, tn);
			assert_memory_equal(ours, theirs, got);
			both_ok++;
		}
		c[pos] = saved;
	}
	assert_true(both_ok > 0);
	assert_true(lenient_end > 0);
	free(c);
	free(ours);
	free(theirs);
	free(src);
}

/*
 * Version 1 stream, assembled by hand:
 *   11 01             version marker, version 1
 *   15 'ABCD'         first-byte literal run: 0x15 - 17 = 4 literals
 *   18 fe ff 0c       zero run: opcode 0001 1LLL with L = 0, distance bits
 *                     0xfffc | 2 (two trailing literals), X = 0x0c:
 *                     length = (X << 3 | L) + 4 = 100
 *   'EF'              the two trailing literals
 *   11 00 00          end of stream
 */
static const uint8_t rle_abcd[] = {
	0x11, 0x01, 0x15, 'A', 'B', 'C', 'D', 0x18, 0xfe, 0xff, 0x0c, 'E', 'F',
	0x11, 0x00, 0x00,
};

static void test_rle_hand_built(void **state)
{
	uint8_t want[106], out[106];
	uint8_t more[200];
	size_t got;
	lzo_uint tn = sizeof(more);

	memset(want, 0, sizeof(want));
	memcpy(want, "ABCD", 4);
	memcpy(want + 104, "EF", 2);
	assert_int_equal(rle_decode(rle_abcd, sizeof(rle_abcd), out, sizeof(out), &got), 0);
	assert_int_equal(got, sizeof(want));
	assert_memory_equal(out, want, sizeof(want));

	/* liblzo2 reads 11 01 as a far match into nothing: this really is v1-only. */
	assert_int_not_equal(lzo1x_decompress_safe(rle_abcd, sizeof(rle_abcd), more, &tn, NULL),
			     LZO_E_OK);

	/* With version 0 the same opcode is a far match into an empty window. */
	{
		uint8_t v0[sizeof(rle_abcd)];

		memcpy(v0, rle_abcd, sizeof(v0));
		v0[1] = 0;
		assert_int_equal(rle_decode(v0, sizeof(v0), more, sizeof(more), NULL), -EIO);
	}
}

/*
 * 4096 zeros. A stream cannot open with a run: a first byte above 17 is a
 * literal run, so, as the kernel's compressor does, it opens with four
 * literals in the long form (opcode 0x01: 1 + 3), here four zeros. Then the
 * longest run there is (X = 0xff, L = 7: 2047 + 4 = 2051), the remaining
 * 2041 (2037 + 4: X = 0xfe, L = 5), and the end marker.
 */
static void test_rle_max_runs(void **state)
{
	static const uint8_t s[] = {
		0x11, 0x01,
		0x01, 0x00, 0x00, 0x00, 0x00,
		0x1f, 0xfc, 0xff, 0xff,
		0x1d, 0xfc, 0xff, 0xfe,
		0x11, 0x00, 0x00,
	};
	uint8_t *out = malloc(4096);
	uint8_t zeros[4096] = { 0 };
	size_t got;

	memset(out, 0xaa, 4096);
	assert_int_equal(rle_decode(s, sizeof(s), out, 4096, &got), 0);
	assert_int_equal(got, 4096);
	assert_memory_equal(out, zeros, 4096);
	/* no room for the second run */
	assert_int_equal(rle_decode(s, sizeof(s), out, 4095, NULL), -EIO);
	free(out);
}

/*
 * A first byte of 18..20 copies 1..3 literals and leaves that count as the
 * state, so a following opcode below 16 is a two-byte copy from close by:
 *   13 'a' 'b'   two literals
 *   00 00        opcode 0000 DDSS with D = 0, S = 0, then H = 0:
 *                copy 2 bytes from distance (H << 2) + D + 1 = 1
 *   11 00 00     end
 * After a run of four or more literals the same opcode would instead copy
 * three bytes from 2049 back, which does not exist here.
 */
static void test_rle_short_first_run_then_near_copy(void **state)
{
	static const uint8_t s[] = { 0x13, 'a', 'b', 0x00, 0x00, 0x11, 0x00, 0x00 };
	static const uint8_t far[] = { 0x15, 'a', 'b', 'c', 'd', 0x00, 0x00, 0x11, 0x00, 0x00 };
	uint8_t out[16];
	size_t got;

	assert_int_equal(rle_decode(s, sizeof(s), out, sizeof(out), &got), 0);
	assert_int_equal(got, 4);
	assert_memory_equal(out, "abbb", 4);
	assert_int_equal(rle_decode(far, sizeof(far), out, sizeof(out), NULL), -EIO);
}

/* A run opcode as the very first byte is a literal run of byte - 17. */
static void test_rle_first_byte_is_literal(void **state)
{
	static const uint8_t s[] = {
		0x11, 0x01, 0x19, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 0x11, 0x00, 0x00,
	};
	uint8_t out[16];
	size_t got;

	assert_int_equal(rle_decode(s, sizeof(s), out, sizeof(out), &got), 0);
	assert_int_equal(got, 8);
	assert_memory_equal(out, "abcdefgh", 8);
}

static void test_rle_malformed(void **state)
{
	uint8_t out[256];
	uint8_t s[sizeof(rle_abcd)];

	/* every truncation fails */
	for (size_t n = 0; n < sizeof(rle_abcd); n++)
		assert_int_equal(rle_decode(rle_abcd, n, out, sizeof(out), NULL), -EIO);
	/* trailing garbage after the end marker */
	{
		uint8_t t[sizeof(rle_abcd) + 1];

		memcpy(t, rle_abcd, sizeof(rle_abcd));
		t[sizeof(rle_abcd)] = 0;
		assert_int_equal(rle_decode(t, sizeof(t), out, sizeof(out), NULL), -EIO);
	}
	/* an end marker with a longer length is not an end marker */
	memcpy(s, rle_abcd, sizeof(s));
	s[sizeof(s) - 3] = 0x12;
	assert_int_equal(rle_decode(s, sizeof(s), out, sizeof(out), NULL), -EIO);
	/* a match reaching before the start of the output */
	{
		static const uint8_t back[] = { 0x15, 'A', 'B', 'C', 'D', 0x20 | 3, 0x10, 0x00,
						0x11, 0x00, 0x00 };

		assert_int_equal(rle_decode(back, sizeof(back), out, sizeof(out), NULL), -EIO);
	}
	/* a literal-length extension of only zero bytes */
	{
		static const uint8_t ext[] = { 0x00, 0x00, 0x00, 0x00, 0x00 };

		assert_int_equal(rle_decode(ext, sizeof(ext), out, sizeof(out), NULL), -EIO);
	}
	/* NULL buffers */
	{
		size_t n = sizeof(out);

		assert_int_equal(uf2fs_lzo_rle_decompress(NULL, 5, out, &n), -EIO);
		assert_int_equal(uf2fs_lzo_rle_decompress(rle_abcd, sizeof(rle_abcd), NULL, &n),
				 -EIO);
	}
}

/*
 * Random version-1 streams built together with the output they stand for,
 * from lzo.rst: an opening literal run (first-byte form or long form), then
 * zero runs of every length with 0..3 trailing literals, and after a run
 * with none, sometimes a literal run (short or with the length extension).
 */
struct rle_gen {
	uint8_t *s, *o;
	size_t sn, on, scap, ocap;
};

static void gen_byte(struct rle_gen *g, uint8_t b)
{
	assert_true(g->sn < g->scap);
	g->s[g->sn++] = b;
}

static void gen_literals(struct rle_gen *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t b = (uint8_t)rng();

		assert_true(g->on < g->ocap);
		g->o[g->on++] = b;
		gen_byte(g, b);
	}
}

/* A literal run of n >= 4 where the state is 0: opcode 0000LLLL. */
static void gen_literal_run(struct rle_gen *g, size_t n)
{
	if (n <= 18) {
		gen_byte(g, (uint8_t)(n - 3));
	} else {
		size_t rest = n - 18;

		gen_byte(g, 0);
		for (; rest > 255; rest -= 255)
			gen_byte(g, 0);
		gen_byte(g, (uint8_t)rest);
	}
	gen_literals(g, n);
}

static void gen_zero_run(struct rle_gen *g, size_t run, unsigned int trail)
{
	size_t v = run - 4;

	gen_byte(g, (uint8_t)(0x18 | (v & 7)));
	gen_byte(g, (uint8_t)(0xfc | trail));
	gen_byte(g, 0xff);
	gen_byte(g, (uint8_t)(v >> 3));
	assert_true(g->on + run <= g->ocap);
	memset(g->o + g->on, 0, run);
	g->on += run;
	gen_literals(g, trail);
}

static void rle_generate(struct rle_gen *g, uint32_t seed, size_t target)
{
	size_t n;

	rng_state = seed;
	gen_byte(g, 17);
	gen_byte(g, 1);
	n = 4 + rng() % 600;
	if (n <= 238 && rng() % 2) {
		gen_byte(g, (uint8_t)(n + 17));
		gen_literals(g, n);
	} else {
		gen_literal_run(g, n);
	}
	while (g->on < target) {
		unsigned int trail = rng() % 4;

		gen_zero_run(g, rng() % 3 ? 4 + rng() % 2048 : 2051, trail);
		if (trail == 0 && rng() % 2)
			gen_literal_run(g, 4 + (rng() % 4 ? rng() % 15 : rng() % 1200));
	}
	gen_byte(g, 0x11);
	gen_byte(g, 0);
	gen_byte(g, 0);
}

static void test_rle_generated_streams(void **state)
{
	for (uint32_t seed = 1; seed <= 200; seed++) {
		struct rle_gen g = { .scap = 1 << 20, .ocap = 1 << 20 };
		uint8_t *out;
		size_t got;

		g.s = malloc(g.scap);
		g.o = malloc(g.ocap);
		rle_generate(&g, seed, F2FS_BLKSIZE << (seed % 6));
		out = malloc(g.on);
		assert_int_equal(rle_decode(g.s, g.sn, out, g.on, &got), 0);
		assert_int_equal(got, g.on);
		assert_memory_equal(out, g.o, g.on);
		assert_int_equal(rle_decode(g.s, g.sn, out, g.on - 1, NULL), -EIO);
		/* the same bytes read as version 0 must not decode to the same data */
		g.s[1] = 0;
		assert_int_equal(rle_decode(g.s, g.sn, out, g.on, NULL), -EIO);
		free(out);
		free(g.s);
		free(g.o);
	}
}

/* Version-1 streams through the cluster path: only COMPRESS_LZORLE reads them. */
static void test_lzorle_cluster_v1(void **state)
{
	uint8_t want[106] = { 'A', 'B', 'C', 'D' }, out[106];
	size_t n;
	uint8_t *cbuf = make_cluster(rle_abcd, sizeof(rle_abcd), &n);

	memcpy(want + 104, "EF", 2);
	assert_int_equal(f2fs_decompress_cluster(COMPRESS_LZORLE, cbuf, n, out, sizeof(out), true),
			 0);
	assert_memory_equal(out, want, sizeof(want));
	assert_int_equal(f2fs_decompress_cluster(COMPRESS_LZO, cbuf, n, out, sizeof(out), true),
			 -EIO);
	free(cbuf);

	for (uint32_t seed = 1; seed <= 20; seed++) {
		struct rle_gen g = { .scap = 1 << 20, .ocap = 1 << 20 };
		uint8_t *o;

		g.s = malloc(g.scap);
		g.o = malloc(g.ocap);
		rle_generate(&g, seed, F2FS_BLKSIZE << 2);
		cbuf = make_cluster(g.s, g.sn, &n);
		o = malloc(g.on);
		assert_int_equal(f2fs_decompress_cluster(COMPRESS_LZORLE, cbuf, n, o, g.on, true),
				 0);
		assert_memory_equal(o, g.o, g.on);
		free(o);
		free(cbuf);
		free(g.s);
		free(g.o);
	}
}

/* /// Concurrency /// */

struct worker {
	const uint8_t *cbuf;
	size_t cbuf_len;
	unsigned int algo;
	const uint8_t *want;
	int bad;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	uint8_t *out = malloc(CLUSTER_BYTES);

	for (int i = 0; i < 200 && out; i++) {
		if (f2fs_decompress_cluster(w->algo, w->cbuf, w->cbuf_len, out, CLUSTER_BYTES,
					    true) || memcmp(out, w->want, CLUSTER_BYTES))
			w->bad++;
	}
	free(out);
	return NULL;
}

static void test_threads(void **state)
{
	uint8_t *src = make_data(PAT_TEXT, CLUSTER_BYTES, 11);
	struct worker w[8];
	pthread_t t[8];

	for (int i = 0; i < 8; i++) {
		w[i] = (struct worker){ .algo = all_algos[i % 4], .want = src };
		w[i].cbuf = compressed_cluster(w[i].algo, src, CLUSTER_BYTES, &w[i].cbuf_len,
					       false);
	}
	for (int i = 0; i < 8; i++)
		assert_int_equal(pthread_create(&t[i], NULL, worker_fn, &w[i]), 0);
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].bad, 0);
		free((void *)w[i].cbuf);
	}
	free(src);
}

/* /// Compression (f2fs_compress_cluster) /// */

/*
 * Every algorithm, cluster size and pattern: a cluster either comes back
 * from the decompressor byte for byte, with the header and padding the
 * kernel writes, or (only when it saves no block) is refused with -EAGAIN.
 * The output buffer is exactly all-but-one block, so ASan sees any overrun.
 */
static void compress_one(unsigned int algo, unsigned int level, unsigned int log, int pat,
			 bool chksum)
{
	size_t rlen = (size_t)F2FS_BLKSIZE << log;
	uint8_t *src = make_data(pat, rlen, 40 + pat);
	uint8_t *dst = malloc(rlen - F2FS_BLKSIZE), *out = malloc(rlen);
	const struct compress_data *cd = (const void *)dst;
	struct f2fs_cctx cc;
	size_t clen, used;
	int n;

	assert_int_equal(f2fs_cctx_init(&cc, algo, level, chksum, log), 0);
	n = f2fs_compress_cluster(&cc, src, dst);
	f2fs_cctx_destroy(&cc);
	/* make_data's generator repeats itself after 64 KiB */
	if (pat == PAT_RANDOM && rlen <= 65536)
		assert_int_equal(n, -EAGAIN);
	if (pat == PAT_TEXT || pat == PAT_ZEROS)
		assert_true(n > 0);
	if (n <= 0) {
		assert_int_equal(n, -EAGAIN);
		goto out;
	}
	clen = cd->clen;
	used = clen + COMPRESS_HEADER_SIZE;
	assert_true((size_t)n < (1u << log));
	assert_int_equal(DIV_ROUND_UP(used, F2FS_BLKSIZE), n);
	assert_int_equal(cd->chksum, chksum ? f2fs_crc32(F2FS_SUPER_MAGIC, cd->cdata, clen) : 0);
	for (size_t i = used; i < (size_t)n * F2FS_BLKSIZE; i++)
		assert_int_equal(dst[i], 0);
	/* lzo-rle carries the version header; plain lzo never looks like it */
	if (algo == COMPRESS_LZORLE)
		assert_true(cd->cdata[0] == 17 && cd->cdata[1] == 1);
	if (algo == COMPRESS_LZO)
		assert_true(cd->cdata[0] != 17);
	assert_int_equal(f2fs_decompress_cluster(algo, dst, (size_t)n * F2FS_BLKSIZE, out, rlen,
						 chksum), 0);
	assert_memory_equal(out, src, rlen);
out:
	free(src);
	free(dst);
	free(out);
}

static void test_compress_clusters(void **state)
{
	static const unsigned int logs[] = { 2, 3, 5, 8 };
	static const struct { unsigned int algo, level; } codecs[] = {
		{ COMPRESS_LZO, 0 }, { COMPRESS_LZ4, 0 }, { COMPRESS_LZ4, 9 },
		{ COMPRESS_ZSTD, 1 }, { COMPRESS_ZSTD, 15 }, { COMPRESS_LZORLE, 0 },
	};

	for (size_t c = 0; c < ARRAY_SIZE(codecs); c++)
		for (size_t l = 0; l < ARRAY_SIZE(logs); l++)
			for (int pat = 0; pat < PAT_NR; pat++)
				compress_one(codecs[c].algo, codecs[c].level, logs[l], pat,
					     (pat + l) & 1);
}

/* An algorithm or cluster size the format does not have is refused up front. */
static void test_compress_bad_context(void **state)
{
	struct f2fs_cctx cc;

	assert_int_equal(f2fs_cctx_init(&cc, COMPRESS_MAX, 0, false, 2), -EOPNOTSUPP);
	assert_int_equal(f2fs_cctx_init(&cc, COMPRESS_LZ4, 0, false, 1), -EOPNOTSUPP);
	assert_int_equal(f2fs_cctx_init(&cc, COMPRESS_LZ4, 0, false, 9), -EOPNOTSUPP);
}

int main(void)
{
	const struct CMUnitTest kernel[] = {
		cmocka_unit_test(test_kernel_clusters),
		cmocka_unit_test(test_kernel_lzorle_is_rle),
		cmocka_unit_test(test_kernel_cluster_flips),
	};
	const struct CMUnitTest cluster[] = {
		cmocka_unit_test(test_roundtrip_lzo),
		cmocka_unit_test(test_roundtrip_lz4),
		cmocka_unit_test(test_roundtrip_zstd),
		cmocka_unit_test(test_roundtrip_lzorle_plain_stream),
		cmocka_unit_test(test_checksum_mismatch),
		cmocka_unit_test(test_checksum_seed),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_output_larger_than_stream),
		cmocka_unit_test(test_unknown_algorithm),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_bit_flips),
		cmocka_unit_test(test_random_streams),
		cmocka_unit_test(test_threads),
	};
	const struct CMUnitTest rle[] = {
		cmocka_unit_test(test_rle_decoder_matches_liblzo2),
		cmocka_unit_test(test_rle_decoder_differential),
		cmocka_unit_test(test_rle_hand_built),
		cmocka_unit_test(test_rle_max_runs),
		cmocka_unit_test(test_rle_first_byte_is_literal),
		cmocka_unit_test(test_rle_short_first_run_then_near_copy),
		cmocka_unit_test(test_lzorle_cluster_v1),
		cmocka_unit_test(test_rle_malformed),
		cmocka_unit_test(test_rle_generated_streams),
	};
	const struct CMUnitTest compress[] = {
		cmocka_unit_test(test_compress_clusters),
		cmocka_unit_test(test_compress_bad_context),
	};
	int fails = 0;

	fails += cmocka_run_group_tests_name("kernel", kernel, NULL, NULL);
	fails += cmocka_run_group_tests_name("cluster", cluster, NULL, NULL);
	fails += cmocka_run_group_tests_name("lzo_rle", rle, NULL, NULL);
	fails += cmocka_run_group_tests_name("compress", compress, NULL, NULL);
	return fails ? 1 : 0;
}
