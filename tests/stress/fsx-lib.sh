#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fsx (xfstests' ltp/fsx) against the library, with no FUSE in between:
# tests/stress/preload.c serves /uf2fs/... from a fresh image through
# libuf2fs, so fsx also exercises what the kernel's FUSE does not pass on
# (fallocate COLLAPSE_RANGE and INSERT_RANGE). mmap is not offered: -R -W.
# After each run the image must be fsck.f2fs-clean.
#
#   FSX        the fsx binary (default: fsx in PATH, else /tmp/suites/xfstests/ltp/fsx)
#   FSX_OPS    operations per run (default 100000)
#   FSX_SEED   seed of the first run (default 1)
#   FSX_RUNS   "label:fsx options" lines (default: two runs, see below)
#   UF2FS_PRELOAD_CACHE_MB, UF2FS_PRELOAD_FOLIO_ORDER   passed to the shim
# Without fsx or f2fs-tools it says SKIP and exits 0 (make stress runs every
# executable here and stops at the first non-zero exit).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
FSX=${FSX:-$(command -v fsx || echo /tmp/suites/xfstests/ltp/fsx)}
OPS=${FSX_OPS:-100000}
SEED=${FSX_SEED:-1}
RUNS=${FSX_RUNS:-"default:
big:-l 8388608 -o 262144"}

[ -x "$FSX" ] || { echo "SKIP: no fsx (set FSX=/path/to/fsx)"; exit 0; }
command -v mkfs.f2fs >/dev/null && command -v fsck.f2fs >/dev/null ||
	{ echo "SKIP: f2fs-tools not installed"; exit 0; }

so=$(bash tests/lib/build-preload.sh "$BUILD") || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/uf2fs-fsx.XXXXXX")
fail=0
seed=$SEED
while IFS=: read -r label opts; do
	[ -n "$label" ] || continue
	img=$tmp/$label.img
	truncate -s 1G "$img"
	mkfs.f2fs -q -f -O extra_attr,inode_checksum,flexible_inline_xattr "$img" >/dev/null
	echo "== $label: fsx -N $OPS -S $seed -R -W $opts"
	# shellcheck disable=SC2086
	LD_PRELOAD=$so UF2FS_PRELOAD_IMAGE=$img "$FSX" -q -R -W -N "$OPS" -S "$seed" \
		-P "$tmp" --record-ops="$tmp/$label.ops" $opts /uf2fs/f >"$tmp/$label.out" 2>&1
	rc=$?
	grep -v "^ *[0-9]" "$tmp/$label.out" | grep -E "operations completed|BAD|[Ff]ail|[Ee]rror" |
		head -5
	# the last operations (fsx keeps 10000), by kind: collapse and insert must be among them
	printf "last ops: "
	awk '{ n[$1]++ } END { for (o in n) printf "%s %d, ", o, n[o]; print "" }' \
		"$tmp/$label.ops"
	for op in collapse_range insert_range; do
		grep -q "^$op " "$tmp/$label.ops" ||
			{ echo "FAIL ($label): fsx did no $op"; fail=1; }
	done
	[ $rc -eq 0 ] || { echo "FAIL ($label): fsx exited $rc (logs in $tmp)"; fail=1; }
	fsck.f2fs -f --dry-run "$img" >"$tmp/$label.fsck" 2>&1
	if [ $? -ne 0 ] || grep -q '\[Fail\]\|\[ASSERT\]\|^\[FIX\]' "$tmp/$label.fsck"; then
		echo "FAIL ($label): fsck.f2fs is not clean:"
		grep '\[Fail\]\|\[ASSERT\]\|^\[FIX\]' "$tmp/$label.fsck" | head
		fail=1
	fi
	seed=$((seed + 1))
done <<<"$RUNS"
[ $fail -eq 0 ] && rm -rf "$tmp"
exit $fail
