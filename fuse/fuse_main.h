/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The FUSE daemon's entry point, for the `uf2fs` command: `uf2fs mount ...`,
 * the bare `uf2fs IMAGE MNT -o opts` form that mount.fuse3 runs, and
 * mount(8)'s `mount.fuse.uf2fs` helper form (recognised by argv[0]).
 */
#ifndef UF2FS_FUSE_MAIN_H
#define UF2FS_FUSE_MAIN_H

/* Returns the process exit status: 0, 1 on failure, 2 on a usage error. */
int uf2fs_fuse_main(int argc, char **argv);

#endif /* UF2FS_FUSE_MAIN_H */
