// SPDX-License-Identifier: GPL-2.0
/*
 * Android sparse images read in place. A sparse image (img2simg's output,
 * what fastboot flashes) is a 28-byte file header and a list of chunks, each
 * a 12-byte chunk header and a payload: RAW (the blocks' bytes), FILL (one
 * 4-byte pattern repeated over the blocks), DONT_CARE (no payload; read as
 * zeros) or CRC32 (a checksum of what came before; no blocks). This file owns
 * the chunk index: open walks the chunk headers once (seeking over raw data,
 * never reading it), checks that they are consistent with each other and
 * with the file, and keeps one entry per chunk sorted by its place in the
 * expanded image, so that a read at any offset is a binary search and one
 * pread per raw chunk it touches. Debian's libsparse parses the same format
 * but only to stream or rewrite a whole image, with no read at an offset
 * (docs/decisions.md); the facts here follow its sparse_format.h. The
 * checksums (CRC32 chunks, the header's image_checksum) are verified on
 * request only (`uf2fs info --verify`), since that reads the whole image.
 * The device backend over the index (read-only) is at the end of the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "backend.h"
#include "sparse.h"

#define SPARSE_FILE_HDR_SZ	28
#define SPARSE_CHUNK_HDR_SZ	12
#define SPARSE_MAJOR_VER	1

#define CHUNK_RAW		0xCAC1
#define CHUNK_FILL		0xCAC2
#define CHUNK_DONT_CARE		0xCAC3
#define CHUNK_CRC32		0xCAC4

struct sparse_chunk {
	uint64_t start;		/* first byte in the expanded image */
	uint64_t len;		/* bytes in the expanded image, > 0 */
	uint64_t src;		/* RAW: file offset of the data */
	uint8_t fill[4];	/* FILL: the pattern as stored */
	uint16_t type;
	uint32_t num;		/* its chunk number in the file */
};

/* A CRC32 chunk: the CRC32 of the expanded image before it (pos bytes). */
struct sparse_crc {
	uint32_t num;		/* its chunk number */
	uint32_t value;
	uint64_t at;		/* its byte in the sparse file */
	uint64_t pos;
};

struct f2fs_sparse {
	int fd;			/* the file, or -1 for mem */
	const uint8_t *mem;
	uint64_t file_size;
	uint64_t size;		/* expanded */
	struct sparse_chunk *chunks;
	unsigned int nr, cap;
	struct sparse_crc *crcs;
	unsigned int nr_crcs;
	uint32_t image_checksum;	/* the header's; 0: none */
	uint32_t blk_sz;
};

static uint16_t get_le16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

static uint32_t get_le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

bool f2fs_sparse_magic(const void *head, size_t len)
{
	return len >= 4 && get_le32(head) == F2FS_SPARSE_MAGIC;
}

/* Bytes of the sparse file itself; a short read is -EIO (the file ends). */
static int src_read(struct f2fs_sparse *sp, void *buf, size_t len, uint64_t off)
{
	if (off > sp->file_size || len > sp->file_size - off)
		return -EIO;
	if (!sp->mem) {
		while (len) {
			ssize_t n = pread(sp->fd, buf, len, off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -errno;
			if (n == 0)
				return -EIO;	/* the file shrank under us */
			buf = (uint8_t *)buf + n;
			len -= n;
			off += n;
		}
		return 0;
	}
	memcpy(buf, sp->mem + off, len);
	return 0;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EUCLEAN;
}

static int add_chunk(struct f2fs_sparse *sp, const struct sparse_chunk *c)
{
	if (sp->nr == sp->cap) {
		unsigned int cap = sp->cap ? sp->cap * 2 : 64;
		struct sparse_chunk *v = realloc(sp->chunks, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		sp->chunks = v;
		sp->cap = cap;
	}
	sp->chunks[sp->nr++] = *c;
	return 0;
}

static int add_crc(struct f2fs_sparse *sp, uint32_t num, uint64_t at, uint64_t pos,
		   uint64_t payload_at)
{
	struct sparse_crc *v = realloc(sp->crcs, (sp->nr_crcs + 1) * sizeof(*v));
	uint8_t b[4];

	if (!v)
		return -ENOMEM;
	sp->crcs = v;
	if (src_read(sp, b, sizeof(b), payload_at))
		return -EIO;
	v[sp->nr_crcs++] = (struct sparse_crc){ .num = num, .value = get_le32(b), .at = at,
						  .pos = pos };
	return 0;
}

struct sparse_hdr {
	uint32_t blk_sz, total_blks, total_chunks, image_checksum;
	uint16_t file_hdr_sz, chunk_hdr_sz;
};

static int parse_file_header(struct f2fs_sparse *sp, struct sparse_hdr *h, char *err,
			     size_t errlen)
{
	uint8_t b[SPARSE_FILE_HDR_SZ];

	if (src_read(sp, b, sizeof(b), 0))
		return fail(err, errlen, "sparse header: the file (%llu bytes) is shorter than "
			    "the %d-byte header", (unsigned long long)sp->file_size,
			    SPARSE_FILE_HDR_SZ);
	if (get_le32(b) != F2FS_SPARSE_MAGIC)
		return fail(err, errlen, "sparse header: bad magic 0x%08x", get_le32(b));
	if (get_le16(b + 4) != SPARSE_MAJOR_VER)
		return fail(err, errlen, "sparse header: major version %u (only %d is known)",
			    get_le16(b + 4), SPARSE_MAJOR_VER);
	h->file_hdr_sz = get_le16(b + 8);
	h->chunk_hdr_sz = get_le16(b + 10);
	h->blk_sz = get_le32(b + 12);
	h->total_blks = get_le32(b + 16);
	h->total_chunks = get_le32(b + 20);
	h->image_checksum = get_le32(b + 24);
	/* larger headers are allowed, as libsparse allows them: the rest is skipped */
	if (h->file_hdr_sz < SPARSE_FILE_HDR_SZ)
		return fail(err, errlen, "sparse header: file_hdr_sz %u is below %d",
			    h->file_hdr_sz, SPARSE_FILE_HDR_SZ);
	if (h->chunk_hdr_sz < SPARSE_CHUNK_HDR_SZ)
		return fail(err, errlen, "sparse header: chunk_hdr_sz %u is below %d",
			    h->chunk_hdr_sz, SPARSE_CHUNK_HDR_SZ);
	if (!h->blk_sz || h->blk_sz % 4)
		return fail(err, errlen, "sparse header: blk_sz %u is not a positive multiple "
			    "of 4", h->blk_sz);
	return 0;
}

/* The payload size a chunk type implies; false for an unknown type. */
static bool payload_size(uint16_t type, uint32_t blocks, uint32_t blk_sz, uint64_t *bytes)
{
	switch (type) {
	case CHUNK_RAW:
		*bytes = (uint64_t)blocks * blk_sz;
		return true;
	case CHUNK_FILL:
	case CHUNK_CRC32:
		*bytes = 4;
		return true;
	case CHUNK_DONT_CARE:
		*bytes = 0;
		return true;
	}
	return false;
}

static const char *type_name(uint16_t type)
{
	switch (type) {
	case CHUNK_RAW:
		return "raw";
	case CHUNK_FILL:
		return "fill";
	case CHUNK_CRC32:
		return "crc32";
	}
	return "dont-care";
}

/* One chunk at file offset *pos; on success *pos moves past it and *blk advances. */
static int parse_chunk(struct f2fs_sparse *sp, const struct sparse_hdr *h, unsigned int i,
		       uint64_t *pos, uint64_t *blk, char *err, size_t errlen)
{
	struct sparse_chunk c = { 0 };
	uint8_t b[SPARSE_CHUNK_HDR_SZ];
	uint64_t at = *pos, payload_at = at + h->chunk_hdr_sz;
	uint32_t blocks, total_sz;
	uint64_t want;

	if (src_read(sp, b, sizeof(b), at) || payload_at > sp->file_size)
		return fail(err, errlen, "sparse chunk %u of %u (byte %llu): truncated: the file "
			    "(%llu bytes) ends inside its header", i, h->total_chunks,
			    (unsigned long long)at, (unsigned long long)sp->file_size);
	c.type = get_le16(b);
	blocks = get_le32(b + 4);
	total_sz = get_le32(b + 8);
	if (!payload_size(c.type, blocks, h->blk_sz, &want))
		return fail(err, errlen, "sparse chunk %u (byte %llu): unknown chunk type 0x%04x",
			    i, (unsigned long long)at, c.type);
	if (total_sz != h->chunk_hdr_sz + want)
		return fail(err, errlen, "sparse chunk %u (byte %llu): %s chunk of %u blocks has "
			    "total_sz %u, expected %llu", i, (unsigned long long)at,
			    type_name(c.type), blocks, total_sz,
			    (unsigned long long)(h->chunk_hdr_sz + want));
	if (c.type == CHUNK_CRC32 && blocks)
		return fail(err, errlen, "sparse chunk %u (byte %llu): crc32 chunk covers %u "
			    "blocks (it covers none)", i, (unsigned long long)at, blocks);
	if (want > sp->file_size - payload_at)
		return fail(err, errlen, "sparse chunk %u (byte %llu): truncated: its %llu bytes "
			    "of data run past the end of the file (%llu bytes)", i,
			    (unsigned long long)at, (unsigned long long)want,
			    (unsigned long long)sp->file_size);
	if (*blk + blocks > h->total_blks)
		return fail(err, errlen, "sparse chunk %u (byte %llu): covers blocks %llu-%llu, "
			    "beyond the image's total_blks %u", i, (unsigned long long)at,
			    (unsigned long long)*blk, (unsigned long long)(*blk + blocks - 1),
			    h->total_blks);
	if (c.type == CHUNK_FILL && src_read(sp, c.fill, 4, payload_at))
		return fail(err, errlen, "sparse chunk %u (byte %llu): cannot read its fill "
			    "pattern", i, (unsigned long long)at);
	if (c.type == CHUNK_CRC32) {
		int ret = add_crc(sp, i, at, *blk * h->blk_sz, payload_at);

		if (ret == -EIO)
			return fail(err, errlen, "sparse chunk %u (byte %llu): cannot read its "
				    "crc32", i, (unsigned long long)at);
		if (ret)
			return ret;
	}
	c.num = i;
	c.start = *blk * h->blk_sz;
	c.len = (uint64_t)blocks * h->blk_sz;
	c.src = payload_at;
	*pos = payload_at + want;
	*blk += blocks;
	/* crc32 and empty chunks hold no blocks: nothing for a read to find */
	return c.len ? add_chunk(sp, &c) : 0;
}

static int build_index(struct f2fs_sparse *sp, char *err, size_t errlen)
{
	struct sparse_hdr h = { 0 };
	uint64_t pos, blk = 0;
	int ret = parse_file_header(sp, &h, err, errlen);

	if (ret)
		return ret;
	pos = h.file_hdr_sz;
	for (unsigned int i = 0; i < h.total_chunks; i++) {
		ret = parse_chunk(sp, &h, i, &pos, &blk, err, errlen);
		if (ret)
			return ret;
	}
	if (blk != h.total_blks)
		return fail(err, errlen, "sparse chunk table: its %u chunks cover %llu blocks, "
			    "the header's total_blks is %u", h.total_chunks,
			    (unsigned long long)blk, h.total_blks);
	sp->size = (uint64_t)h.total_blks * h.blk_sz;
	sp->image_checksum = h.image_checksum;
	sp->blk_sz = h.blk_sz;
	return 0;
}

int f2fs_sparse_open(int fd, const uint8_t *mem, uint64_t size, struct f2fs_sparse **out,
		     char *err, size_t errlen)
{
	struct f2fs_sparse *sp = calloc(1, sizeof(*sp));
	int ret;

	if (!sp)
		return -ENOMEM;
	sp->fd = fd;
	sp->mem = mem;
	sp->file_size = size;
	ret = build_index(sp, err, errlen);
	if (ret) {
		f2fs_sparse_close(sp);
		return ret;
	}
	*out = sp;
	return 0;
}

void f2fs_sparse_close(struct f2fs_sparse *sp)
{
	if (!sp)
		return;
	free(sp->chunks);
	free(sp->crcs);
	free(sp);
}

uint64_t f2fs_sparse_size(const struct f2fs_sparse *sp)
{
	return sp->size;
}

unsigned int f2fs_sparse_nr_chunks(const struct f2fs_sparse *sp)
{
	return sp->nr;
}

/* The chunk holding byte off (chunks tile [0, size) in order). */
static unsigned int find_chunk(const struct f2fs_sparse *sp, uint64_t off)
{
	unsigned int lo = 0, hi = sp->nr;

	while (hi - lo > 1) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (sp->chunks[mid].start <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static void fill_pattern(uint8_t *buf, size_t len, const uint8_t pat[4], uint64_t phase)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pat[(phase + i) & 3];
}

int f2fs_sparse_pread(struct f2fs_sparse *sp, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	if (off > sp->size || len > sp->size - off)
		return -EIO;
	if (!len)
		return 0;
	for (unsigned int i = find_chunk(sp, off); len; i++) {
		const struct sparse_chunk *c = &sp->chunks[i];
		uint64_t in = off - c->start;
		size_t n = c->len - in < len ? c->len - in : len;
		int ret = 0;

		if (c->type == CHUNK_RAW)
			ret = src_read(sp, p, n, c->src + in);
		else if (c->type == CHUNK_FILL)
			fill_pattern(p, n, c->fill, in);
		else
			memset(p, 0, n);
		if (ret)
			return ret;
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

/// Checksums: CRC32 chunks and the header's image_checksum ///

#define VERIFY_BUF	(1u << 20)

/*
 * Two running CRC32s (zlib's, which is libsparse's sparse_crc32): "crc" over
 * the expanded image as sparse_format.h defines it (don't-care blocks as
 * zeros, fill blocks as their pattern), and "writer" as Debian's libsparse
 * writer computes it with its crc flag on: a fill chunk counts one block of
 * its pattern whatever its length, a don't-care chunk nothing. Its own reader
 * rejects those (measured on its sparse_file_write output); they cover the
 * same data, so either is accepted and the summary says which.
 */
struct crc_walk {
	uint8_t *buf;
	uint32_t crc, writer;
	uint32_t blk_sz;
};

static int crc_chunk(struct f2fs_sparse *sp, struct crc_walk *w, const struct sparse_chunk *c)
{
	for (uint64_t done = 0; done < c->len;) {
		size_t n = c->len - done < VERIFY_BUF ? c->len - done : VERIFY_BUF;
		int ret = 0;

		if (c->type == CHUNK_RAW)
			ret = src_read(sp, w->buf, n, c->src + done);
		else if (c->type == CHUNK_FILL)
			fill_pattern(w->buf, n, c->fill, 0);
		else
			memset(w->buf, 0, n);
		if (ret)
			return ret;
		w->crc = (uint32_t)crc32_z(w->crc, w->buf, n);
		if (c->type == CHUNK_RAW)
			w->writer = (uint32_t)crc32_z(w->writer, w->buf, n);
		else if (c->type == CHUNK_FILL && !done)	/* n < blk_sz: huge blocks */
			w->writer = (uint32_t)crc32_z(w->writer, w->buf,
						      w->blk_sz < n ? w->blk_sz : n);
		done += n;
	}
	return 0;
}

static int verify_summary(const struct f2fs_sparse *sp, unsigned int writer_only, char *msg,
			  size_t msglen)
{
	snprintf(msg, msglen, "%u crc32 chunk%s and %s: %s%s", sp->nr_crcs,
		 sp->nr_crcs == 1 ? "" : "s", sp->image_checksum ? "the header's image_checksum" :
		 "no header checksum (image_checksum 0)",
		 sp->nr_crcs || sp->image_checksum ? "match" : "nothing to check",
		 writer_only ? " (the crc32 chunks as libsparse's writer computes them: one block "
		 "per fill chunk, nothing for don't-care)" : "");
	return 0;
}

/*
 * Check every CRC32 chunk against the expanded image before it, and a
 * non-zero image_checksum against the whole: 0 when all match (a summary in
 * msg), -EBADMSG at the first mismatch, with its chunk number and byte
 * offsets in msg.
 */
int f2fs_sparse_verify(struct f2fs_sparse *sp, char *msg, size_t msglen)
{
	struct crc_walk w = { .buf = malloc(VERIFY_BUF), .blk_sz = sp->blk_sz };
	unsigned int next = 0, writer_only = 0;
	int ret = 0;

	if (!w.buf)
		return -ENOMEM;
	for (unsigned int i = 0; i <= sp->nr_crcs && !ret; i++) {
		const struct sparse_crc *c = i < sp->nr_crcs ? &sp->crcs[i] : NULL;

		/* the data chunks before this crc32 chunk (all of them, after the last) */
		for (; next < sp->nr && (!c || sp->chunks[next].num < c->num) && !ret; next++)
			ret = crc_chunk(sp, &w, &sp->chunks[next]);
		if (ret || !c || w.crc == c->value)
			continue;
		if (w.writer == c->value) {
			writer_only++;
			continue;
		}
		snprintf(msg, msglen, "sparse chunk %u (byte %llu): crc32 0x%08x, but the first "
			 "%llu bytes of the expanded image give 0x%08x", c->num,
			 (unsigned long long)c->at, c->value, (unsigned long long)c->pos, w.crc);
		ret = -EBADMSG;
	}
	free(w.buf);
	if (!ret && sp->image_checksum && w.crc != sp->image_checksum) {
		snprintf(msg, msglen, "sparse header (byte 24): image_checksum 0x%08x, but the "
			 "expanded image (%llu bytes) gives 0x%08x", sp->image_checksum,
			 (unsigned long long)sp->size, w.crc);
		ret = -EBADMSG;
	}
	return ret ? ret : verify_summary(sp, writer_only, msg, msglen);
}

/*
 * A header that is a sparse one with its magic damaged: the magic a few bits
 * off, or the layout fields of a sparse header (major 1, 28- and 12-byte
 * headers, a block size that is a multiple of 4) after a wrong one. A raw
 * f2fs image has zeros there (the super block is at 1 KiB), so it never
 * looks like one. Returns what it looks like, or NULL.
 */
static const char *sparse_damaged_magic(const uint8_t *b, size_t len)
{
	uint32_t blk_sz;

	if (len < 4 || f2fs_sparse_magic(b, len))
		return NULL;
	if (__builtin_popcount(get_le32(b) ^ F2FS_SPARSE_MAGIC) <= 4)
		return "a few bits off the sparse magic";
	if (len < SPARSE_FILE_HDR_SZ)
		return NULL;
	blk_sz = get_le32(b + 12);
	if (get_le16(b + 4) == SPARSE_MAJOR_VER && get_le16(b + 8) == SPARSE_FILE_HDR_SZ &&
	    get_le16(b + 10) == SPARSE_CHUNK_HDR_SZ && blk_sz && !(blk_sz % 4))
		return "the fields after it are a sparse header's";
	return NULL;
}

/// Android sparse images (read-only) ///

/*
 * Detected by magic whatever backend was asked for: the image is served from
 * the sparse file's chunk index (pread on the file, or the RAM copy), never
 * expanded. Writes cannot work in place (a block may live in a fill or
 * don't-care chunk), so a read-write open is refused before anything else.
 */
static int sparse_readv(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off)
{
	for (int i = 0; i < cnt; i++) {
		int ret = f2fs_sparse_pread(dev->priv, iov[i].iov_base, iov[i].iov_len, off);

		if (ret)
			return ret;
		off += iov[i].iov_len;
	}
	return 0;
}

static int sparse_writev(struct f2fs_dev *dev, const struct iovec *iov, int cnt, uint64_t off)
{
	return -EROFS;
}

static int sparse_flush(struct f2fs_dev *dev)
{
	return 0;
}

static void sparse_close(struct f2fs_dev *dev)
{
	f2fs_sparse_close(dev->priv);
	dev->priv = NULL;
	dev_fd_close(dev);
	if (dev->ram_owned)
		free(dev->ram);
	dev->ram = NULL;
}

static const struct f2fs_dev_ops sparse_ops = {
	.readv = sparse_readv,
	.writev = sparse_writev,
	.flush = sparse_flush,
	.close = sparse_close,
};

/*
 * If the file (dev->fd) or the bytes (mem) are a sparse image, index it and
 * switch to the sparse layer: 1. Not sparse: 0. Refused or corrupt: < 0,
 * with the reason in dev->open_error.
 */
int dev_sparse_probe(struct f2fs_dev *dev, const uint8_t *mem, uint64_t size)
{
	uint8_t head[SPARSE_FILE_HDR_SZ];
	size_t n = size < sizeof(head) ? size : sizeof(head);
	struct f2fs_sparse *sp;
	const char *like;
	int ret, pre;

	if (n < 4)
		return 0;
	if (mem)
		memcpy(head, mem, n);
	else if (pread(dev->fd, head, n, 0) != (ssize_t)n)
		return 0;	/* the mount's own reads will report it */
	like = sparse_damaged_magic(head, n);
	if (like) {
		snprintf(dev->open_error, sizeof(dev->open_error), "damaged Android sparse "
			 "image: sparse header: bad magic 0x%08x (want 0x%08x; %s)",
			 get_le32(head), F2FS_SPARSE_MAGIC, like);
		return -EUCLEAN;
	}
	if (!f2fs_sparse_magic(head, n))
		return 0;
	if (!dev->read_only) {
		snprintf(dev->open_error, sizeof(dev->open_error), "an Android sparse image "
			 "cannot be written: mount it read-only, or expand it first with "
			 "simg2img IMAGE RAW.img and write to that");
		return -EROFS;
	}
	pre = snprintf(dev->open_error, sizeof(dev->open_error), "damaged Android sparse image: ");
	ret = f2fs_sparse_open(mem ? -1 : dev->fd, mem, size, &sp, dev->open_error + pre,
			       sizeof(dev->open_error) - pre);
	if (ret)
		return ret;
	dev->open_error[0] = '\0';
	dev->priv = sp;
	dev->size = f2fs_sparse_size(sp);
	dev->ops = &sparse_ops;
	return 1;
}

/* `uf2fs info --verify`: the file's checksums, before (and without) any mount. */
int uf2fs_verify_sparse(const char *path, char *msg, size_t msglen)
{
	struct f2fs_dev dev = { .fd = open(path, O_RDONLY | O_CLOEXEC), .read_only = true };
	struct stat st;
	int ret;

	if (dev_is_nbd_uri(path)) {
		snprintf(msg, msglen, "an NBD export, not an Android sparse image: no checksums "
			 "to verify");
		if (dev.fd >= 0)
			close(dev.fd);
		return -ENOTTY;
	}
	if (dev.fd < 0)
		return -errno;
	if (fstat(dev.fd, &st)) {
		ret = -errno;
	} else {
		ret = dev_sparse_probe(&dev, NULL, (uint64_t)st.st_size);
		if (ret == 0) {
			snprintf(msg, msglen, "not an Android sparse image: no checksums to "
				 "verify");
			ret = -ENOTTY;
		} else if (ret < 0) {
			snprintf(msg, msglen, "%s", dev.open_error);
		} else {
			ret = f2fs_sparse_verify(dev.priv, msg, msglen);
			f2fs_sparse_close(dev.priv);
		}
	}
	close(dev.fd);
	return ret;
}
