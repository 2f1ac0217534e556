#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench` keeps working: a tiny BENCH_QUICK run (16 MiB files, bs 1M,
# every target, reads and writes, the tree of lib/ and 300 entries in one
# directory) must finish, mount every target and write its results and charts.
# Numbers are not checked: benchmarks never pass or fail on a time.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need_fuse
need_f2fs_tools
need_uf2fs
need_cmd fio mkfs.ext4 fuse2fs cc pkg-config
pkg-config --exists fuse3 || skip "fuse3 development files missing"
tmpdir_init bench-smoke
rc=0
BENCH_QUICK=1 BENCH_SIZE=16M BENCH_BS=1M BENCH_RUNTIME=5 BENCH_OUT=$TMP/out \
	BENCH_TREE_SRC="$TOP/lib $TOP/tests/unit" BENCH_TREE_APPS=5 BENCH_GIT_N=300 BENCH_DIR_N=300 \
	BENCH_DIR=$TMP/work BUILD=$BUILD_ABS "$TOP/bench/run.sh" || rc=$?
[ "$rc" -eq 0 ] || fail "bench/run.sh exited $rc"
md=$TMP/out/results.md
[ -s "$md" ] || fail "no results.md"
ls "$TMP"/out/results-*.json >/dev/null || fail "no results JSON"
if grep -q '^Errors:' "$md"; then
	sed -n '/^Errors:/,/^$/p' "$md"
	fail "a target failed"
fi
grep -q '^| DATA_READ | 1M | cold |' "$md" || fail "no DATA_READ row"
grep -q 'read  requests\|request' "$md" || fail "no uf2fs stats in the results"
for row in '^| WRITE_NEW | 1M | end_fsync |' '^| WRITE_NEW | 1M | fsync=1 |' \
	'^| WRITE_OVER | 1M | end_fsync |' '^| DD | 2M |' '^| WB_OSYNC | 1M |'; do
	grep -q "$row" "$md" || fail "no row $row"
done
grep -q '^## Seed 004' "$md" || fail "no seed 004 histogram"
grep -q '^## Seed 002' "$md" || fail "no seed 002 (precache) section"
grep -q '^| sparse image |' "$md" || fail "no uf2fs get row for the sparse image"
grep -q '^| workload | bs | local | nbd | qraw | qcow2 | nbd/local | qcow2/local | qcow2/qraw |' \
	"$md" || fail "no NBD/qcow2 table"
grep -q '^| read | 1M | [0-9]* | [0-9]* | [0-9]* | [0-9]* |' "$md" || fail "no NBD/qcow2 read row"
grep -q "^| 1x2x1M (uf2fs's read window) | [0-9]* | [0-9]* |" "$md" || fail "no NBD wire row"
grep -q "^nbd through uf2fs at 1M as a share of the wire" "$md" || fail "no NBD wire share"
for row in '^| untar |' '^| grep -r |' '^| rm -rf |' '^| create |' '^| stat |' '^| unlink |'; do
	grep -q "$row" "$md" || fail "no row $row"
done
if "${PYTHON:-python3}" -c 'import matplotlib' 2>/dev/null ||
	/usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	for png in reads writes tree; do
		[ -s "$TMP/out/bench-$png.png" ] || fail "no bench-$png.png"
	done
fi
pass "bench runs"
