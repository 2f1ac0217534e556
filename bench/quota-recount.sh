#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The quota recount at mount (lib/quota.c, f2fs_walk_inodes) on a large
# image: mkfs.f2fs -g android on a sparse file, DIRS x FILES empty files made
# through the library (bench/mkinodes.c), then RUNS times: the user quota
# file's magic broken, and `uf2fs mkdir` timed (a read-write mount that
# recounts, one mkdir, unmount), beside the same command with intact quota
# files. fsck.f2fs -f must be clean at the end (it recounts quota itself).
# Figures only; nothing is asserted about time.
#
#   make bench-quota-recount          (1000 x 1000 inodes, a 16 GiB image)
#   QR_DIRS=100 QR_FILES=1000 QR_SIZE=2G QR_DIR=/dev/shm bench/quota-recount.sh
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
DIRS=${QR_DIRS:-1000} FILES=${QR_FILES:-1000} SIZE=${QR_SIZE:-16G} RUNS=${QR_RUNS:-2}
WORK=$(mktemp -d "${QR_DIR:-/tmp}/uf2fs-qr.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
IMG=$WORK/big.img
SPARSE_LIBDIR=/usr/lib/$(cc -dumpmachine)/android
# shellcheck disable=SC2046
cc -O2 -std=gnu11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I"$TOP/include" -o "$WORK/mkinodes" \
	"$TOP/bench/mkinodes.c" "$BUILD/libuf2fs.a" \
	$(pkg-config --libs liburing liblz4 libzstd lzo2 zlib libcrypto) -lunistring \
	-L"$SPARSE_LIBDIR" -Wl,-rpath,"$SPARSE_LIBDIR" -lsparse -pthread -lm
truncate -s "$SIZE" "$IMG"
mkfs.f2fs -f -q -g android "$IMG" >/dev/null
start=$(date +%s.%N)
"$WORK/mkinodes" "$IMG" "$DIRS" "$FILES"
echo "made $((DIRS * FILES)) files in $(echo "$(date +%s.%N) - $start" | bc) s"
"$BUILD/uf2fs" info "$IMG" | grep -E 'inodes|valid nodes'
break_quota() {
	python3 - "$IMG" "$TOP/tests/lib" <<'PYEOF'
import struct, sys
sys.path.insert(0, sys.argv[2])
import f2fsimg
img = f2fsimg.Image(sys.argv[1], True)
addr = img.bmap(img.inode(4), 0)
blk = bytearray(img.block(addr))
assert struct.unpack_from("<I", blk, 0)[0] == 0xd9c01f11, "not the user quota file"
blk[0:4] = b"\0\0\0\0"
img.write_block(addr, bytes(blk))
PYEOF
}
for r in $(seq 1 "$RUNS"); do
	/usr/bin/time -f "intact quota files: uf2fs mkdir %e s (user %U, sys %S), peak RSS %M KB" \
		"$BUILD/uf2fs" mkdir "$IMG" "/intact$r"
	break_quota
	/usr/bin/time -f "recount:            uf2fs mkdir %e s (user %U, sys %S), peak RSS %M KB" \
		"$BUILD/uf2fs" mkdir "$IMG" "/recount$r" 2>&1 | grep -v 'usage will be recounted'
done
fsck.f2fs -f --dry-run "$IMG" >"$WORK/fsck.log" 2>&1 || { cat "$WORK/fsck.log"; exit 1; }
if grep -iE 'quota' "$WORK/fsck.log" | grep -viE 'superblock features|^Info:'; then
	echo "fsck.f2fs disagrees with the recount"; exit 1
fi
echo "fsck.f2fs -f: clean, quota included; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
