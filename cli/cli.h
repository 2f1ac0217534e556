/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared pieces of the `uf2fs` command: the subcommand entry points, messages
 * in the coreutils style ("uf2fs: PATH: No such file or directory") and exit
 * codes, and the helpers every image command needs (mount an image read-only
 * or read-write and unmount it, resolve a path or its parent, write a buffer
 * completely).
 */
#ifndef UF2FS_CLI_H
#define UF2FS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "uf2fs/uf2fs.h"
#include "opts.h"

/* Exit codes, as coreutils uses them. */
#define CLI_EXIT_OK	0
#define CLI_EXIT_FAIL	1
#define CLI_EXIT_USAGE	2

/* Each subcommand gets argv starting at its own name, like a program. */
int cmd_info(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_cat(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_put(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_mkdir(int argc, char **argv);
int cmd_fscrypt(int argc, char **argv);

void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "uf2fs: PATH: strerror"; err is a negative or positive errno. */
void cli_path_error(const char *path, int err);
/* Prints "uf2fs CMD: why" and the --help hint; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Resolve a path inside the image (absolute or root-relative). Symlinks on the
 * way are followed; a final one only with follow, as cat does for its
 * arguments and get does not.
 */
int cli_resolve(struct uf2fs *fs, const char *path, bool follow, uint32_t *ino);

/*
 * A path's parent directory, resolved (symlinks followed), and its last
 * component, not looked up. Trailing slashes do not count; the root has no
 * last component (name is ""). cli_parent_free releases the name.
 */
struct cli_parent {
	uint32_t dir;
	char *name;
};

int cli_resolve_parent(struct uf2fs *fs, const char *path, struct cli_parent *parent);
void cli_parent_free(struct cli_parent *parent);

/* "dir/name" (one slash), or NULL without memory. */
char *cli_join(const char *dir, const char *name);

/* Mount IMAGE read-write (put, rm, mkdir): cli_mount_image with read_only off. */
int cli_mount_rw(const char *image, struct uf2fs_options *opts, struct uf2fs **fs);
/*
 * Unmount a read-write image: the final checkpoint. Prints why it failed and
 * returns CLI_EXIT_FAIL, else status unchanged.
 */
int cli_unmount_rw(struct uf2fs *fs, const char *image, int status);

/* write(2) until done, retrying on EINTR and short writes. */
int cli_write_all(int fd, const void *buf, size_t len);

/* Parse the -o and --help options every image command accepts. */
int cli_common_option(const char *cmd, int opt, const char *arg, struct uf2fs_options *opts);

#endif /* UF2FS_CLI_H */
