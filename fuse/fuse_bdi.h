/* SPDX-License-Identifier: GPL-2.0 */
/* Raising the FUSE mount's bdi readahead to the negotiated window. */
#ifndef UF2FS_FUSE_BDI_H
#define UF2FS_FUSE_BDI_H

void fuse_tune_bdi(const char *mountpoint, unsigned int readahead_kb);

#endif
