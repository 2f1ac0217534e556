// SPDX-License-Identifier: GPL-2.0
/*
 * Compression and decompression of f2fs clusters. A cluster's compressed
 * blocks begin with struct compress_data (compressed length, optional CRC)
 * and hold one stream of the inode's algorithm; it must expand to exactly
 * one cluster, as Linux fs/f2fs/compress.c requires. LZO, LZ4 and zstd go
 * through their reference libraries; lzo-rle, which liblzo2 cannot read,
 * through our own decoder (lzo_rle.c).
 *
 * Decompression is reentrant: no codec context outlives a call, so the
 * FUSE worker threads can decompress concurrently. Compression keeps its
 * codec state in a struct f2fs_cctx that one writer owns.
 */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

#include <lz4.h>
#include <lz4hc.h>
#include <lzo/lzo1x.h>
#include <zstd.h>

#include "f2fs.h"
#include "lzo_rle.h"

static const char *const compress_names[COMPRESS_MAX] = {
	[COMPRESS_LZO] = "lzo",
	[COMPRESS_LZ4] = "lz4",
	[COMPRESS_ZSTD] = "zstd",
	[COMPRESS_LZORLE] = "lzo-rle",
};

/* The names are those of the kernel's compress_algorithm= mount option. */
const char *f2fs_compress_name(unsigned int algo)
{
	return algo < COMPRESS_MAX ? compress_names[algo] : "unknown";
}

/*
 * liblzo2 wants lzo_init() once per process; it only checks the build
 * configuration, so a failure means the library is unusable.
 */
static pthread_once_t lzo_once = PTHREAD_ONCE_INIT;
static bool lzo_ok;

static void lzo_setup(void)
{
	lzo_ok = lzo_init() == LZO_E_OK;
}

static int lzo_decompress(const uint8_t *src, size_t slen, uint8_t *dst, size_t dlen)
{
	lzo_uint out = dlen;

	pthread_once(&lzo_once, lzo_setup);
	if (!lzo_ok)
		return -EOPNOTSUPP;
	if (lzo1x_decompress_safe(src, slen, dst, &out, NULL) != LZO_E_OK || out != dlen)
		return -EIO;
	return 0;
}

static int lz4_decompress(const uint8_t *src, size_t slen, uint8_t *dst, size_t dlen)
{
	if (slen > INT_MAX || dlen > INT_MAX)
		return -EIO;
	if (LZ4_decompress_safe((const char *)src, (char *)dst, (int)slen, (int)dlen) != (int)dlen)
		return -EIO;
	return 0;
}

/* The kernel writes one standard zstd frame; ZSTD_decompress takes it as is. */
static int zstd_decompress(const uint8_t *src, size_t slen, uint8_t *dst, size_t dlen)
{
	size_t ret = ZSTD_decompress(dst, dlen, src, slen);

	if (ZSTD_isError(ret) || ret != dlen)
		return -EIO;
	return 0;
}

static int lzorle_decompress(const uint8_t *src, size_t slen, uint8_t *dst, size_t dlen)
{
	size_t out = dlen;

	if (uf2fs_lzo_rle_decompress(src, slen, dst, &out) || out != dlen)
		return -EIO;
	return 0;
}

typedef int (*decompress_fn)(const uint8_t *src, size_t slen, uint8_t *dst, size_t dlen);

static const decompress_fn decompressors[COMPRESS_MAX] = {
	[COMPRESS_LZO] = lzo_decompress,
	[COMPRESS_LZ4] = lz4_decompress,
	[COMPRESS_ZSTD] = zstd_decompress,
	[COMPRESS_LZORLE] = lzorle_decompress,
};

int f2fs_decompress_cluster(unsigned int algo, const void *cbuf, size_t cbuf_len, void *out,
			    size_t out_len, bool verify_chksum)
{
	const struct compress_data *cd = cbuf;
	size_t clen;

	if (algo >= COMPRESS_MAX || !decompressors[algo])
		return -EOPNOTSUPP;
	if (!cbuf || !out || out_len == 0 || cbuf_len < COMPRESS_HEADER_SIZE)
		return -EIO;

	/* A length past the cluster's blocks is corruption, not a short read. */
	clen = le32(cd->clen);
	if (clen > cbuf_len - COMPRESS_HEADER_SIZE)
		return -EIO;

	/*
	 * The kernel checks the CRC after decompressing; checking first gives
	 * the same verdict and keeps known-bad bytes away from the codecs.
	 */
	if (verify_chksum && le32(cd->chksum) != f2fs_crc32(F2FS_SUPER_MAGIC, cd->cdata, clen))
		return -EIO;

	return decompressors[algo](cd->cdata, clen, out, out_len);
}

/// Compression ///

/*
 * The kernel's default zstd level (F2FS_ZSTD_DEFAULT_CLEVEL), used when an
 * inode carries none.
 */
#define ZSTD_DEFAULT_LEVEL	1

int f2fs_cctx_init(struct f2fs_cctx *cc, unsigned int algo, unsigned int level, bool chksum,
		   unsigned int log_cluster_size)
{
	size_t rlen = (size_t)F2FS_BLKSIZE << log_cluster_size;

	memset(cc, 0, sizeof(*cc));
	if (algo >= COMPRESS_MAX || log_cluster_size < MIN_COMPRESS_LOG_SIZE ||
	    log_cluster_size > MAX_COMPRESS_LOG_SIZE)
		return -EOPNOTSUPP;
	cc->algo = algo;
	cc->level = level;
	cc->chksum = chksum;
	cc->rlen = rlen;
	switch (algo) {
	case COMPRESS_ZSTD:
		cc->zstd = ZSTD_createCCtx();
		if (!cc->zstd)
			return -ENOMEM;
		break;
	case COMPRESS_LZO:
	case COMPRESS_LZORLE:
		pthread_once(&lzo_once, lzo_setup);
		if (!lzo_ok)
			return -EOPNOTSUPP;
		/* liblzo2 needs room for its worst case before we can judge the length */
		cc->work = malloc(LZO1X_1_MEM_COMPRESS);
		cc->tmp = malloc(2 + rlen + rlen / 16 + 64 + 3);
		cc->check = malloc(rlen);
		if (!cc->work || !cc->tmp || !cc->check) {
			f2fs_cctx_destroy(cc);
			return -ENOMEM;
		}
		break;
	}
	return 0;
}

void f2fs_cctx_destroy(struct f2fs_cctx *cc)
{
	ZSTD_freeCCtx(cc->zstd);
	free(cc->work);
	free(cc->tmp);
	free(cc->check);
	memset(cc, 0, sizeof(*cc));
}

/* Each returns the stream length, -EAGAIN if it does not fit in cap, or -errno. */
static long lz4_compress(struct f2fs_cctx *cc, const uint8_t *src, uint8_t *dst, size_t cap)
{
	int n;

	/* a level means LZ4HC, as the kernel's lz4_compress_pages; the format is the same */
	if (cc->level)
		n = LZ4_compress_HC((const char *)src, (char *)dst, (int)cc->rlen, (int)cap,
				    (int)cc->level);
	else
		n = LZ4_compress_default((const char *)src, (char *)dst, (int)cc->rlen, (int)cap);
	return n > 0 ? n : -EAGAIN;
}

/*
 * One frame with the content size in its header: the decoder's window is
 * then the cluster, within the kernel's limit of one cluster.
 */
static long zstd_compress(struct f2fs_cctx *cc, const uint8_t *src, uint8_t *dst, size_t cap)
{
	int level = cc->level ? (int)cc->level : ZSTD_DEFAULT_LEVEL;
	size_t n = ZSTD_compressCCtx(cc->zstd, dst, cap, src, cc->rlen, level);

	/* mostly "destination too small"; any failure leaves the cluster raw */
	return ZSTD_isError(n) ? -EAGAIN : (long)n;
}

/*
 * LZO1X-1 from liblzo2. lzo-rle is the same bitstream behind the version
 * header 17, 1, in which Linux reads some long-distance copies as zero runs;
 * liblzo2 may emit such a copy, so every stream is decoded again the way
 * Linux will (lzo_rle.c) and compared. A stream that does not round-trip,
 * or that would be taken for a versioned one, is not used: the cluster is
 * written raw, which is always legal.
 */
static long lzo_compress(struct f2fs_cctx *cc, const uint8_t *src, uint8_t *dst, size_t cap)
{
	bool rle = cc->algo == COMPRESS_LZORLE;
	size_t hdr = rle ? 2 : 0, check_len = cc->rlen;
	lzo_uint n = 0;

	if (lzo1x_1_compress(src, cc->rlen, cc->tmp + hdr, &n, cc->work) != LZO_E_OK)
		return -EIO;
	if (rle) {
		cc->tmp[0] = 17;
		cc->tmp[1] = 1;
	} else if (cc->tmp[0] == 17) {
		return -EAGAIN;
	}
	n += hdr;
	if (n > cap)
		return -EAGAIN;
	if (uf2fs_lzo_rle_decompress(cc->tmp, n, cc->check, &check_len) ||
	    check_len != cc->rlen || memcmp(cc->check, src, cc->rlen))
		return -EAGAIN;
	memcpy(dst, cc->tmp, n);
	return (long)n;
}

int f2fs_compress_cluster(struct f2fs_cctx *cc, const void *src, void *dst)
{
	/* as f2fs_compress_pages: the stream must leave at least one block unused */
	size_t cap = cc->rlen - F2FS_BLKSIZE - COMPRESS_HEADER_SIZE;
	struct compress_data *cd = dst;
	size_t nr_blocks;
	long n;

	switch (cc->algo) {
	case COMPRESS_LZ4:
		n = lz4_compress(cc, src, cd->cdata, cap);
		break;
	case COMPRESS_ZSTD:
		n = zstd_compress(cc, src, cd->cdata, cap);
		break;
	case COMPRESS_LZO:
	case COMPRESS_LZORLE:
		n = lzo_compress(cc, src, cd->cdata, cap);
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (n < 0)
		return (int)n;
	cd->clen = (uint32_t)n;
	cd->chksum = cc->chksum ? f2fs_crc32(F2FS_SUPER_MAGIC, cd->cdata, n) : 0;
	memset(cd->reserved, 0, sizeof(cd->reserved));
	nr_blocks = DIV_ROUND_UP(n + COMPRESS_HEADER_SIZE, F2FS_BLKSIZE);
	/* the tail of the last block is zero, as the kernel leaves it */
	memset(cd->cdata + n, 0, nr_blocks * F2FS_BLKSIZE - COMPRESS_HEADER_SIZE - n);
	return (int)nr_blocks;
}
