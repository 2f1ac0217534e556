// SPDX-License-Identifier: GPL-2.0
/*
 * The format-level algorithms every f2fs reader and writer must agree on
 * bit for bit: the f2fs flavour of CRC32, the block, inode and checkpoint
 * checksums built on it, and the TEA-based dentry hash that places names in
 * directory buckets. Nothing here knows about mounts or caches; the
 * functions are pure and thread-safe.
 */
#include <zlib.h>

#include "f2fs.h"

/*
 * f2fs uses the kernel's crc32_le: the seed goes in as is and the result is
 * not inverted. zlib inverts on entry and exit, so invert around it.
 */
uint32_t f2fs_crc32(uint32_t seed, const void *buf, size_t len)
{
	return ~(uint32_t)crc32_z(~seed & 0xffffffffu, buf, len);
}

uint32_t f2fs_block_crc(const void *blk, size_t crc_off)
{
	return f2fs_crc32(F2FS_SUPER_MAGIC, blk, crc_off);
}

/*
 * The inode checksum is seeded per inode with its number and generation, so
 * that a stale copy of another inode (or an older incarnation of this one)
 * never verifies. The checksum field itself counts as zero.
 */
uint32_t f2fs_inode_chksum(uint32_t seed, const struct f2fs_node *node)
{
	const uint8_t *blk = (const uint8_t *)node;
	const size_t cs_off = offsetof(struct f2fs_inode, i_inode_checksum);
	const size_t cs_end = cs_off + sizeof(__le32);
	const uint8_t zero[sizeof(__le32)] = { 0 };
	__le32 ino = node->footer.ino;
	__le32 gen = node->i.i_generation;
	uint32_t crc;

	crc = f2fs_crc32(seed, &ino, sizeof(ino));
	crc = f2fs_crc32(crc, &gen, sizeof(gen));
	crc = f2fs_crc32(crc, blk, cs_off);
	crc = f2fs_crc32(crc, zero, sizeof(zero));
	return f2fs_crc32(crc, blk + cs_end, F2FS_BLKSIZE - cs_end);
}

/*
 * With a large NAT/SIT version bitmap the checksum moves out of the block
 * tail to checksum_offset, and the bytes after it are covered as well. The
 * caller rejects offsets outside [CP_MIN_CHKSUM_OFFSET, CP_CHKSUM_OFFSET] as
 * the kernel does; the clamp only keeps a bad value from reading past the
 * block.
 */
uint32_t f2fs_cp_chksum(const struct f2fs_checkpoint *cp)
{
	const uint8_t *blk = (const uint8_t *)cp;
	size_t ofs = le32(cp->checksum_offset);
	uint32_t crc;

	if (ofs > F2FS_BLKSIZE)
		ofs = F2FS_BLKSIZE;
	crc = f2fs_crc32(F2FS_SUPER_MAGIC, blk, ofs);
	if (ofs < CP_CHKSUM_OFFSET) {
		ofs += sizeof(__le32);
		crc = f2fs_crc32(crc, blk + ofs, F2FS_BLKSIZE - ofs);
	}
	return crc;
}

/* /// Dentry hash: ext3's TEA hash, as Linux fs/f2fs/hash.c uses it /// */

#define TEA_DELTA	0x9E3779B9u
#define TEA_ROUNDS	16
#define HASH_CHUNK	16	/* name bytes consumed per TEA step */

static void tea_transform(uint32_t buf[4], const uint32_t in[4])
{
	uint32_t sum = 0, b0 = buf[0], b1 = buf[1];
	int n;

	for (n = 0; n < TEA_ROUNDS; n++) {
		sum += TEA_DELTA;
		b0 += ((b1 << 4) + in[0]) ^ (b1 + sum) ^ ((b1 >> 5) + in[1]);
		b1 += ((b0 << 4) + in[2]) ^ (b0 + sum) ^ ((b0 >> 5) + in[3]);
	}
	buf[0] += b0;
	buf[1] += b1;
}

/*
 * Pack up to 16 name bytes into four words, earlier bytes in the higher
 * bits. A short last chunk is padded with a pattern made of its length, so
 * that "ab" and "ab\0\0" hash differently.
 */
static void str2hashbuf(const uint8_t *msg, size_t len, uint32_t out[4])
{
	uint32_t pad = (uint32_t)len | ((uint32_t)len << 8);
	uint32_t val = 0;
	size_t i, n = MIN(len, (size_t)HASH_CHUNK);
	unsigned int w = 0;

	pad |= pad << 16;
	for (i = 0; i < n; i++) {
		if (i % 4 == 0)
			val = pad;
		val = msg[i] + (val << 8);
		if (i % 4 == 3)
			out[w++] = val;
	}
	if (n % 4)
		out[w++] = val;
	while (w < 4)
		out[w++] = pad;
}

static bool is_dot_or_dotdot(const uint8_t *name, size_t len)
{
	return (len == 1 && name[0] == '.') ||
	       (len == 2 && name[0] == '.' && name[1] == '.');
}

uint32_t f2fs_dentry_hash(const uint8_t *name, size_t len)
{
	uint32_t buf[4] = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476 };
	uint32_t in[4];
	const uint8_t *p = name;

	if (is_dot_or_dotdot(name, len))
		return 0;

	for (;;) {
		str2hashbuf(p, len, in);
		tea_transform(buf, in);
		if (len <= HASH_CHUNK)
			break;
		p += HASH_CHUNK;
		len -= HASH_CHUNK;
	}
	/* F2FS_HASH_COL_BIT is bit 63: masking it off a 32-bit hash is a no-op. */
	return buf[0];
}
