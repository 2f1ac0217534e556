// SPDX-License-Identifier: GPL-2.0
/*
 * Decompression of f2fs compressed clusters. A cluster's compressed blocks
 * begin with struct compress_data (compressed length, optional CRC) and hold
 * one stream of the inode's algorithm; it must expand to exactly one
 * cluster, as Linux fs/f2fs/compress.c requires. LZO, LZ4 and zstd go
 * through their reference libraries; lzo-rle, which liblzo2 cannot read,
 * through our own decoder (lzo_rle.c).
 *
 * Everything here is reentrant: no codec context outlives a call, so the
 * FUSE worker threads can decompress concurrently.
 */
#include <limits.h>
#include <pthread.h>

#include <lz4.h>
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
