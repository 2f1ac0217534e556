/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A bounds-checked decoder for the LZO1X bitstream as Linux understands it,
 * including the LZO-RLE extension (version 1) that liblzo2 cannot read.
 * Used by compress.c for COMPRESS_LZORLE clusters; private to lib/.
 */
#ifndef UF2FS_LZO_RLE_H
#define UF2FS_LZO_RLE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decode in[0..in_len) into out. *out_len is the capacity on entry and the
 * number of bytes produced on success. Accepts plain LZO1X streams (version
 * 0) and versioned streams that start with the marker byte 17 and a version
 * byte. Returns 0, or -EIO on any malformed, truncated or overlong stream
 * (including input left over after the end marker); never touches memory
 * outside the two buffers.
 */
int uf2fs_lzo_rle_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t *out_len);

#endif /* UF2FS_LZO_RLE_H */
