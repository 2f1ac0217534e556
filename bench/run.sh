#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: read and write throughput of uf2fs beside its peers, in one run.
#
#   targets   tmpfs (the physical limit), libfuse's passthrough_ll over tmpfs
#             with -o writeback,cache=always (the FUSE ceiling), fuse2fs on an
#             ext4 image, and uf2fs on an f2fs image in several configurations
#             (reads: ro, order 0, direct_io, uring; writes: rw, rw +
#             writeback_cache, rw + order 0; both: a 2-device volume from
#             mkfs.f2fs -c, half the space on each device); images on tmpfs
#   reads     sequential read (fio, psync, buffered, iodepth 1) of a 256 MiB
#             data file and of a 256 MiB hole-only file, bs 4k/64k/1M, cold
#             (drop caches + remount) and warm (second read)
#   writes    the seeds' O,S matrix: sequential writes of a new file and
#             overwrites of a written one, bs 4k/64k/1M, with end_fsync or
#             fsync after every write (bounded in time); dd bs=2M count=500
#             conv=fsync; seed 004's 8-thread O_SYNC fio job with the uf2fs
#             device request-size histogram after it
#   precache  seed 002: F2FS_IOC_PRECACHE_EXTENTS on a fragmented file, cold
#             (skipped, and said so, when the mount refuses the ioctl)
#   tree      untar of a ~50k-entry tree (tarred at bench time from /usr plus a
#             generated Android /data tree), cold find, du -s, stat of every path,
#             ls -lR (and again warm), grep -r, rm -rf; cold git status of a
#             generated 100k-file checkout; create/stat/unlink of 100k entries in
#             one directory (tmpfs, ceiling, ceiling +xattr, fuse2fs, uf2fs, uf2fs
#             writeback_cache, uf2fs on an encrypted and on a casefolded tree)
#   output    tables of MiB/s and ratios on stdout, $BUILD/bench/results.md,
#             charts beside it (bench-*.png, python3-matplotlib), raw samples in
#             $BUILD/bench/results-<date>.json
#
# It prints and never asserts: the seed targets (uf2fs >= 1.5x fuse2fs on every
# row, >= 3x on the 4k write rows, or >= 95 % of the FUSE ceiling when that is
# lower) are marked per row, not enforced. About 15-17 minutes on 2 CPUs.
#
#   BENCH_QUICK=1   smoke run: 64 MiB files (32 MiB writes), bs 4k and 1M, one
#                   repetition, short time-bounded rows, no order-0 write target
#   BENCH_REPS=N    repetitions per measurement (default 5; median reported)
#   BENCH_SIZE=256M file size; BENCH_BS="4k 64k 1M"; BENCH_TARGETS="tmpfs uf2fs ..."
#                   (read: tmpfs ceiling fuse2fs uf2fs uf2fs-o0 uf2fs-dio uf2fs-uring uf2fs-2dev
#                   uf2fs-16k; write: tmpfs ceiling fuse2fs uf2fs uf2fs-wbc uf2fs-o0 uf2fs-2dev
#                   uf2fs-16k uf2fs-nowbc, and
#                   ceiling-x, passthrough_ll -o xattr, only when named)
#   BENCH_PARTS="read write osync precache sparse nbd tree git dirops"   which parts run (sparse:
#                   `uf2fs get` of a BENCH_SPARSE_TREE=200M tree from a raw image and from its
#                   img2simg conversion; nbd: bench/nbd_bench.py, fio through mounts of a raw
#                   image, the same served by nbdkit over a Unix socket, its qcow2 through
#                   qemu-nbd, and the NBD wire alone (bench/nbd_wire.c), BENCH_NBD_SIZE=128M;
#                   tree, dirops: bench/tree.py; BENCH_TREE=1 runs only those)
#   BENCH_WSIZE=SIZE            write file size (default BENCH_SIZE; quick: half)
#   BENCH_MKFS_16K=PATH         a mkfs.f2fs that takes -b 16384 (f2fs-tools' development
#                   branch): adds the uf2fs-16k column (a 16 KiB-block image) to reads and
#                   writes; BENCH_FSCK_16K=PATH checks its written images (Debian's cannot)
#   BENCH_FSYNC_RUNTIME=S       bound of the fsync-per-write rows (2; quick 1)
#   BENCH_DD_COUNT=N            dd count of 2M blocks (500; quick: file size)
#   BENCH_OSYNC_RUNTIME=S, BENCH_OSYNC_SIZE=SIZE   seed 004 job (5 s, 64 MiB/thread)
#   BENCH_PRECACHE_SIZE=SIZE    seed 002 file (512M; quick: BENCH_SIZE)
#   BENCH_TREE=1    only the everyday-use rows (bench/tree.py): untar, find, ls -lR,
#                   grep -r, rm -rf of a real tree; create/stat/unlink in one directory
#   BENCH_TREE_SRC="DIR..."  the real part of the tree tarball (default /usr/share/doc
#                   /usr/lib/python3.* /usr/share/locale /usr/include, ~37k entries;
#                   quick: /usr/share/doc). passthrough_ll needs an fd per inode:
#                   past RLIMIT_NOFILE the ceilings run on shards (bench/tree.py)
#   BENCH_TREE_APPS=N  generated Android packages in the tree (300, ~11k entries;
#                   quick 20)
#   BENCH_GIT_N=N   files of the generated git checkout (100000; quick 5000)
#   BENCH_BEFORE=PATH  another uf2fs binary: adds the casefolded column with it
#                   (name uf2fs-cf-before in BENCH_TARGETS), a before/after in one run
#   BENCH_DIR_N=N   entries of the one-directory rows (100000; quick 10000)
#   BENCH_TREE_REPS=N  repetitions of those rows (default min(BENCH_REPS, 3))
#   BENCH_WBC_OPTS=OPTS  mount options of the "uf2fs writeback_cache" column instead of
#                   writeback_cache (now the default): e.g. max_threads=2 beside the default
#   BENCH_DIR=DIR   where images and data live (default: a dir on /dev/shm)
#   BENCH_OUT=DIR   where results go (default: $BUILD/bench)
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$TOP/$BUILD;; esac
export BUILD TOP
OUT=${BENCH_OUT:-$BUILD/bench}
mkdir -p "$OUT"

note() { echo "bench: $*" >&2; }

for c in fio python3 fusermount3 mkfs.f2fs sload.f2fs mkfs.ext4 fuse2fs cc pkg-config; do
	command -v "$c" >/dev/null || { note "$c is missing; install it (make does, as root)"; exit 1; }
done
[ -x "$BUILD/uf2fs" ] || { note "$BUILD/uf2fs is not built (run make)"; exit 1; }

# passthrough_ll keeps an O_PATH fd per inode it knows: an untarred tree of
# tens of thousands of entries needs that many descriptors.
ulimit -n "$(cat /proc/sys/fs/nr_open 2>/dev/null || echo 1048576)" 2>/dev/null ||
	ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# libfuse's passthrough_ll, the FUSE ceiling: the example source ships with
# libfuse3-dev (possibly gzipped) and needs passthrough_helpers.h beside it.
PT=$BUILD/bench/passthrough_ll
if [ ! -x "$PT" ]; then
	ex=/usr/share/doc/libfuse3-dev/examples
	mkdir -p "$BUILD/bench/src"
	for f in passthrough_ll.c passthrough_helpers.h; do
		if [ -f "$ex/$f" ]; then cp "$ex/$f" "$BUILD/bench/src/$f"
		elif [ -f "$ex/$f.gz" ]; then zcat "$ex/$f.gz" >"$BUILD/bench/src/$f"
		else note "$ex/$f not found (libfuse3-dev examples)"; exit 1
		fi
	done
	note "building passthrough_ll"
	# shellcheck disable=SC2046
	cc -O2 -w -o "$PT" "$BUILD/bench/src/passthrough_ll.c" $(pkg-config --cflags --libs fuse3) -pthread
fi

# libfuse's path-based passthrough (ceiling-hl, bench/tree.py): the same
# example directory. Its init sets every timeout to 0 (it lets the lower
# filesystem change under it); the copy built here gets passthrough_ll's
# cache=always timeout (86400 s) instead, so it is a ceiling for cached
# metadata like the other. A failed build only drops that column.
PTHL=$BUILD/bench/passthrough
if [ ! -x "$PTHL" ]; then
	ex=/usr/share/doc/libfuse3-dev/examples
	if [ -f "$ex/passthrough.c" ]; then cp "$ex/passthrough.c" "$BUILD/bench/src/passthrough.c"
	elif [ -f "$ex/passthrough.c.gz" ]; then zcat "$ex/passthrough.c.gz" >"$BUILD/bench/src/passthrough.c"
	fi
	sed -i -E 's/(cfg->(entry|attr|negative)_timeout) = 0;/\1 = 86400;/' "$BUILD/bench/src/passthrough.c"
	if [ "$(grep -cE 'cfg->(entry|attr|negative)_timeout = 86400;' "$BUILD/bench/src/passthrough.c")" = 3 ]; then
		note "building passthrough (path-based)"
		# shellcheck disable=SC2046
		# libfuse's config.h would set these; no HAVE_SETXATTR, as passthrough_ll
		# runs without -o xattr
		cc -O2 -w -DHAVE_UTIMENSAT -DHAVE_POSIX_FALLOCATE -DHAVE_COPY_FILE_RANGE \
			-o "$PTHL" "$BUILD/bench/src/passthrough.c" \
			$(pkg-config --cflags --libs fuse3) -pthread || rm -f "$PTHL"
	fi
	[ -x "$PTHL" ] || { note "passthrough.c did not build with cache timeouts; no ceiling-hl column"; PTHL=; }
fi

# bench/precache.c: uf2fs_precache_extents timed through the library (no FUSE),
# for seed 002 beside the ioctl on the mount. Rebuilt when the library changes;
# a failed build only drops that row.
# libuf2fs.a needs what the Makefile links: libcrypto, libnbd, and libsparse from Debian's android/ dir
SPARSE_LIBDIR=/usr/lib/$(cc -dumpmachine)/android
PC=$BUILD/bench/precache
if [ ! -x "$PC" ] || [ "$BUILD/libuf2fs.a" -nt "$PC" ] ||
	[ "$TOP/bench/precache.c" -nt "$PC" ]; then
	note "building precache"
	# shellcheck disable=SC2046
	cc -O2 -std=gnu11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I"$TOP/include" -o "$PC" \
		"$TOP/bench/precache.c" "$BUILD/libuf2fs.a" \
		$(pkg-config --libs liburing liblz4 libzstd lzo2 zlib libcrypto libnbd blkid) -lunistring \
		-L"$SPARSE_LIBDIR" -Wl,-rpath,"$SPARSE_LIBDIR" -lsparse -pthread -lm ||
		{ note "bench/precache.c did not build; the library precache row is skipped"; rm -f "$PC"; }
fi

# bench/nbd_wire.c: the NBD wire alone (libnbd against nbdkit, no FUSE, no
# uf2fs), the ceiling of the NBD rows as passthrough_ll is of the FUSE ones.
NW=$BUILD/bench/nbd_wire
if [ ! -x "$NW" ] || [ "$TOP/bench/nbd_wire.c" -nt "$NW" ]; then
	note "building nbd_wire"
	# shellcheck disable=SC2046
	cc -O2 -std=gnu11 -Wall -Wextra -o "$NW" "$TOP/bench/nbd_wire.c" \
		$(pkg-config --cflags --libs libnbd) -pthread ||
		{ note "bench/nbd_wire.c did not build; no NBD wire rows"; rm -f "$NW"; }
fi

# The encrypted rows (bench/crypto-bench.sh) run first; their table is added
# to results.md after bench.py's.
# BENCH_TREE=1 means the tree rows only, as bench.py reads it.
crypto_md=
if [ "${BENCH_TREE:-0}" != 1 ] && [[ ${BENCH_PARTS:-crypto} =~ crypto ]]; then
	if "$TOP/bench/crypto-bench.sh"; then crypto_md=$OUT/crypto-results.md; else note "crypto failed"; fi
fi
# The charts need matplotlib: Debian's python3-matplotlib lives in the system
# interpreter, which a python3 first on PATH (pyenv, a venv) may not see.
PY=python3
for py in python3 /usr/bin/python3; do
	if "$py" -c 'import matplotlib' 2>/dev/null; then PY=$py; break; fi
done
rc=0
"$PY" "$TOP/bench/bench.py" --passthrough "$PT" --passthrough-hl "$PTHL" --uf2fs "$BUILD/uf2fs" --precache "$PC" --nbd-wire "$NW" \
	--out "$OUT" "$@" || rc=$?
if [ -n "$crypto_md" ] && [ -s "$crypto_md" ] && [ -s "$OUT/results.md" ]; then
	{ echo; cat "$crypto_md"; } >>"$OUT/results.md"
fi
exit $rc
