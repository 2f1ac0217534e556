#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One image, mounted with every read-path configuration: max_folio_order 0, 2,
# 4 and 8, direct_io, backend=uring, dontcache on and off, and combinations.
# Every configuration must read identical bytes: sequential reads with an odd block size (7777),
# positioned reads at odd offsets and lengths from 4 threads, hole-only files
# far into the indirect and double-indirect ranges, and the same sha256 of
# every file as the others and as the source.
#
#   CONFIGS="max_folio_order=0;direct_io" tests/integration/folio-orders.sh
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

need_fuse
need_f2fs_tools
need_uf2fs

DEFAULT_CONFIGS="ro
ro,max_folio_order=0
ro,max_folio_order=2,dontcache=off
ro,direct_io,dontcache=on,cache_size=4M
ro,max_folio_order=4
ro,max_folio_order=8
ro,direct_io
ro,backend=uring
ro,backend=uring,direct_io,max_folio_order=8
ro,max_folio_order=0,direct_io,cache_size=4M
ro,backend=psync,max_folio_order=4,cache_size=16M"
if [ -n "${CONFIGS:-}" ]; then
	CONFS=$(printf '%s\n' "$CONFIGS" | tr ';' '\n')
else
	CONFS=$DEFAULT_CONFIGS
fi

tmpdir_init folio-orders
SRC=$TMP/src
step "source tree"
gen_tree 3 "$SRC" --small --no-special
# Files around folio and node boundaries, larger than any cache_size above.
"$PY" - "$SRC/big" <<'EOF'
import os, random, sys
d = sys.argv[1]
os.makedirs(d)
r = random.Random(3)
K = 4096
sizes = {
    "40m": 40 << 20,                       # direct, two direct nodes, indirect
    "1024-blocks-plus-1": 1024 * K + 1,    # one byte past an order-10 boundary
    "order8-minus-1": 256 * K - 1,
    "odd-7777777": 7777777,
    "inode-boundary": (873 + 1) * K + 3,   # just past the inode's own addresses
}
for name, n in sizes.items():
    with open(os.path.join(d, name), "wb") as f:
        f.write(r.randbytes(n))
# Zero runs inside data (sload writes them as real blocks).
with open(os.path.join(d, "zero-runs"), "wb") as f:
    for i in range(40):
        f.write(r.randbytes(r.randint(1, 90000)) if i % 2 else bytes(r.randint(1, 300000)))
# Placeholders that become hole-only files in the image (f2fsimg make-hole).
open(os.path.join(d, "hole-256m"), "wb").close()
open(os.path.join(d, "hole-9g"), "wb").close()
EOF
# The hole-only files exist in the image only; compare them separately.
img=$TMP/img.f2fs
# extra_attr shifts i_addr, so the inode/direct-node boundary is not the default one.
mk_image "$img" 768M extra_attr,inode_checksum,inode_crtime "$SRC" -P || fail "image build"
f2fsimg make-hole "$img" /big/hole-256m $((256 << 20)) >/dev/null
f2fsimg make-hole "$img" /big/hole-9g $((9 << 30)) >/dev/null
fsck_clean "$img" || fail "fsck after make-hole"
mv "$SRC/big/hole-256m" "$SRC/big/hole-9g" "$TMP/"
before=$(image_sum "$img")

failures=()
ref_sums=
n=0
while IFS= read -r opts; do
	[ -n "$opts" ] || continue
	n=$((n + 1))
	step "[$n] -o $opts"
	mnt=$TMP/mnt-$n
	if ! mount_uf2fs "$img" "$mnt" "$opts"; then
		failures+=("$opts: mount")
		continue
	fi
	sums=$TMP/sums-$n
	if ! "$PY" "$LIB/readcheck.py" "$SRC" "$mnt" --ops 48 --threads 4 --seed "$n" \
		--sums "$sums" --zero big/hole-256m:$((256 << 20)) --zero big/hole-9g:$((9 << 30)); then
		failures+=("$opts: reads differ from the source")
	fi
	# dd with an odd block size at odd skips, through the kernel's page cache
	# (or not, with direct_io).
	for skip in 0 1 517 5151; do
		want=$(dd if="$SRC/big/40m" bs=7777 skip=$skip count=300 2>/dev/null | sha256sum)
		got=$(timeout 60 dd if="$mnt/big/40m" bs=7777 skip=$skip count=300 2>/dev/null | sha256sum)
		[ "$want" = "$got" ] || failures+=("$opts: dd bs=7777 skip=$skip")
	done
	if [ -z "$ref_sums" ]; then
		ref_sums=$sums
	elif ! cmp -s "$ref_sums" "$sums"; then
		diff "$ref_sums" "$sums" | head -10
		failures+=("$opts: sha256 differs from the first configuration")
	fi
	# A live mount's stats (informational; the command must work).
	if run_limited 20 "$UF2FS" stats "$mnt"; [ "$RC" -ne 0 ]; then
		failures+=("$opts: uf2fs stats exit $RC")
	else
		printf '%s\n' "$OUT" | head -30
	fi
	umount_uf2fs "$mnt" || failures+=("$opts: unmount / daemon exit status")
done <<<"$CONFS"

[ "$before" = "$(image_sum "$img")" ] || failures+=("the image changed")
fsck_clean "$img" || failures+=("fsck")

step "summary"
if [ ${#failures[@]} -gt 0 ]; then
	printf 'FAILED: %s\n' "${failures[@]}"
	exit 1
fi
pass "$n configurations read identical content"
