/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Library options given as -o key=value, shared by the offline commands and the
 * FUSE front end so that `uf2fs ls -o cache_size=64M` and
 * `uf2fs mount -o cache_size=64M` mean the same thing.
 */
#ifndef UF2FS_CLI_OPTS_H
#define UF2FS_CLI_OPTS_H

#include <stdint.h>

#include "uf2fs/uf2fs.h"

/* The front ends' version, for `uf2fs --version` and `uf2fs mount -V`. */
#define UF2FS_VERSION	"0.1.0"

/* The -o keys the library understands, for help texts. */
#define CLI_LIB_OPTS_HELP \
	"    max_folio_order=N      largest data folio is 2^N blocks\n" \
	"    cache_size=SIZE        folio cache limit; K, M, G or T suffix (binary)\n" \
	"    backend=psync|uring    device I/O backend\n" \
	"    partition=NAME|N       the f2fs volume is this partition of the disk (GPT\n" \
	"                           name or number, MBR number); `uf2fs info` lists them\n" \
	"    device=PATH            multi-device volume: the next device after IMAGE\n" \
	"                           (repeat in order; default: the super block's paths)\n" \
	"    checkpoint_interval=S  seconds between background checkpoints (rw)\n" \
	"    background_gc=on|off   background garbage collection (rw)\n" \
	"    flusher=on|off         background writeback of dirty data (rw; mount\n" \
	"                           default on)\n" \
	"    dirty_expire=S         the flusher writes data dirty for S seconds (30)\n" \
	"    dirty_background=SIZE  and, past SIZE of dirty data, the oldest until half\n" \
	"                           of it is left (default cache_size/8, at most 32M)\n" \
	"    dontcache=on|off       drop data folios once read or written back\n" \
	"                           (mount default: on unless direct_io)\n" \
	"    write_through=on|off   with dontcache, whole-block writes of 32 KiB or more\n" \
	"                           skip the folio cache (rw; default on)\n" \
	"    mode=adaptive|lfs      lfs: clean segments only, never in place (rw)\n" \
	"    ipu_policy=BITS        the kernel's in-place update bits (rw; default as\n" \
	"                           Linux: 0x81 up to 16 GiB of main area, else 0x10)\n" \
	"    acl, noacl             POSIX ACLs: inherited and enforced (default acl)\n" \
	"    relatime, noatime, strictatime  when reads update atime (default relatime)\n" \
	"    nodiratime             readdir leaves directories' atime alone\n" \
	"    compress_algorithm=A   files made compressed use lzo, lz4[:3..12] (default),\n" \
	"                           zstd[:1..22] or lzo-rle (rw; as Linux f2fs)\n" \
	"    compress_log_size=N    2^N blocks per cluster, 2 (default) to 8\n" \
	"    compress_chksum        store a checksum with each compressed cluster\n" \
	"    compress_extension=E   create files named *.E compressed (\"*\": all)\n" \
	"    format=FMT             IMAGE's format: raw, or one qemu-nbd serves (qcow2,\n" \
	"                           vmdk, vdi, vhdx, qed, ...); default: probed\n" \
	"    nbd_timeout=S          an NBD request fails with EIO after S seconds (30)\n" \
	"    tls_certificates=DIR, tls_psk_file=FILE, tls_username=NAME  TLS for nbds://\n"

/* A byte count with an optional K/M/G/T (binary) suffix, e.g. "64M". */
int cli_parse_size(const char *str, uint64_t *out);

/*
 * Apply one option to opts. Returns 1 if it was a library option, 0 if the key
 * is not one (the caller may own it), or -EINVAL after printing why the value
 * is bad.
 */
int cli_apply_lib_option(struct uf2fs_options *opts, const char *opt);

/*
 * Free the strings every options struct of the run points at (keyfile=,
 * device=, partition=, format=, tls_*=): once nothing uses them any more.
 */
void cli_free_option_strings(void);

/*
 * Apply a comma-separated list. "ro" is accepted since offline commands are
 * read-only anyway; any other unknown key is an error. Returns 0 or -EINVAL
 * after printing the reason.
 */
int cli_apply_lib_options(struct uf2fs_options *opts, const char *list);

/*
 * Mount IMAGE with opts (already holding any -o options, and read_only as the
 * caller wants it: uf2fs_default_options makes it read-only), as every front
 * end does, locked against other uf2fs processes: one read-write user, or any
 * number of readers (-EBUSY otherwise). On failure the library has printed the
 * detail (structure and block) unless opts->quiet; this adds one line naming
 * the image, and returns the negative errno.
 */
int cli_mount_image(const char *image, struct uf2fs_options *opts, struct uf2fs **fs);
/* The same, or 1 with the table in *parts for a partitioned disk (uf2fs_mount_or_partitions). */
int cli_mount_or_partitions(const char *image, struct uf2fs_options *opts, struct uf2fs **fs,
			    struct uf2fs_partitions *parts);

#endif /* UF2FS_CLI_OPTS_H */
