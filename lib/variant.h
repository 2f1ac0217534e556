/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the block-size dispatch layer (the generated build/.../dispatch.c, see
 * docs/decisions.md "16 KiB blocks") and the library core agree on. The core
 * is compiled once per supported block size; every struct uf2fs handle starts
 * with a struct uf2fs_variant_head naming the block size of the core that
 * made it, and a core that reads a super block of the other supported size
 * answers uf2fs_mount() with uf2fs_variant_redirect(), never with an error
 * the user sees.
 */
#ifndef UF2FS_VARIANT_H
#define UF2FS_VARIANT_H

struct uf2fs_variant_head {
	unsigned int blkbits;		/* F2FS_BLKSIZE_BITS of the core owning the handle */
};

/* Block sizes that have a core: 4 KiB and 16 KiB. */
#define UF2FS_VARIANT_4K	12
#define UF2FS_VARIANT_16K	14

/* Far above any errno: "mount this with the core for 1 << blkbits". */
#define UF2FS_VARIANT_REDIRECT_BASE	40000

static inline int uf2fs_variant_redirect(unsigned int blkbits)
{
	return -(int)(UF2FS_VARIANT_REDIRECT_BASE + blkbits);
}

static inline unsigned int uf2fs_variant_redirected(int ret)
{
	int v = -ret - UF2FS_VARIANT_REDIRECT_BASE;

	return v == UF2FS_VARIANT_4K || v == UF2FS_VARIANT_16K ? (unsigned int)v : 0;
}

#endif /* UF2FS_VARIANT_H */
