// SPDX-License-Identifier: GPL-2.0
/*
 * FS_IOC_MEASURE_VERITY (the kernel's fs/verity/measure.c): the file digest,
 * the hash of the descriptor without its signature.
 */
#include <string.h>

#include "fsverity_private.h"

int fsverity_measure(const struct fsverity_sb *vsb, struct fsverity_inode *inode,
		     uint16_t *alg, uint8_t *digest, uint16_t *size)
{
	struct fsverity_info *vi;
	int ret = fsverity_get_info(vsb, inode, &vi);

	if (ret)
		return ret;
	*alg = (uint16_t)vi->p.alg;
	*size = (uint16_t)vi->p.digest_size;
	memcpy(digest, vi->digest, vi->p.digest_size);
	return 0;
}
