#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build-preload.sh [BUILD]: build tests/stress/preload.c into
# BUILD/preload/libuf2fs-preload.so (the library again, position-independent,
# plus the shim) and print its absolute path. The shim must not see
# _FILE_OFFSET_BITS=64: it defines both open and open64.
set -eu
cd "$(dirname "$0")/../.."
BUILD=${1:-${BUILD:-build}}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD;; esac
obj=$BUILD/preload/obj
so=$BUILD/preload/libuf2fs-preload.so
rm -rf "$obj"
mkdir -p "$obj"
# the library's pkg-config packages, as the Makefile lists them (less cmocka)
pkgs=$(sed -n 's/^PKGS *:= *//p' Makefile | sed 's/\<cmocka\>//')
# libsparse: Debian installs it under android/, with no pkg-config file
sparse_dir=/usr/lib/$(cc -dumpmachine)/android
cflags="-std=gnu11 -O2 -g -fPIC -D_GNU_SOURCE -U_FORTIFY_SOURCE -pthread -Iinclude -Ilib \
	$(pkg-config --cflags $pkgs)"
# lib/dev/core.c becomes dev_core.o: module folders may reuse a file name
for f in lib/*.c lib/*/*.c; do echo "$f"; done |
	xargs -P "$(nproc)" -I{} sh -c \
		'o=$(echo {} | sed "s|^lib/||; s|/|_|g; s|\.c$|.o|"); \
		 cc '"$cflags"' -D_FILE_OFFSET_BITS=64 -c {} -o '"$obj"'/$o' >&2
cc $cflags -c tests/stress/preload.c -o "$obj/preload.o" >&2
cc -shared -o "$so" "$obj"/*.o $(pkg-config --libs $pkgs) -lunistring \
	-L"$sparse_dir" -Wl,-rpath,"$sparse_dir" -lsparse -pthread -lm -ldl >&2
echo "$so"
