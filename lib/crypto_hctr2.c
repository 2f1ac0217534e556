// SPDX-License-Identifier: GPL-2.0
/* HCTR2: not written yet. */
#include <errno.h>

#include "crypto_alg_int.h"

int hctr2_setup(struct wide_state **out, const uint8_t key[32])
{
	*out = NULL;
	return -EOPNOTSUPP;
}

int hctr2_crypt(struct wide_state *w, const uint8_t iv[32], const uint8_t *in, uint8_t *out,
		size_t len, bool enc)
{
	return -EOPNOTSUPP;
}
