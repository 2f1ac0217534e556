/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared pieces of the `uf2fs` command: the subcommand entry points, messages
 * in the coreutils style ("uf2fs: PATH: No such file or directory") and exit
 * codes, and the helpers every image command needs (mount an image read-only,
 * resolve a path, write a buffer completely).
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

/* write(2) until done, retrying on EINTR and short writes. */
int cli_write_all(int fd, const void *buf, size_t len);

/* Parse the -o and --help options every image command accepts. */
int cli_common_option(const char *cmd, int opt, const char *arg, struct uf2fs_options *opts);

#endif /* UF2FS_CLI_H */
