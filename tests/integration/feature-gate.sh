#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The feature gate: every super block feature bit Linux knows (0x1 to 0x10000)
# is handled; a bit no Linux knows is refused by number. On a copy of a fresh
# image (no sb_checksum, so both super blocks can be patched in place):
#   blkzoned                    on a single image file: refused, naming why (a
#                               file cannot say which zones are sequential; the
#                               zoned volumes uf2fs takes: zoned.sh), untouched
#                               (device_alias is read: device-alias.sh)
#   0x20000, 0x80000000         refused as unknown, by number, untouched
#   packed_ssa                  accepted with 4 KiB blocks (it changes nothing
#                               there); info lists it; a rw put reads back
#                               (Debian's fsck.f2fs 1.15 does not know the bit)
#   none                        info says "single device"
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

need_f2fs_tools
need_uf2fs
need_cmd "$PY" sha256sum

tmpdir_init feature-gate
BASE=$TMP/base.img
mk_image "$BASE" 64M "" "" || fail "mkfs"
"$UF2FS" info "$BASE" | grep -q '^Layout: .*single device' || fail "info: no layout line"

# with_bits BITS OUT: a copy with those bits added to the feature field of both super blocks
with_bits() {
	cp "$BASE" "$2"
	"$PY" - "$2" "$1" <<'PY'
import struct, sys
path, bits = sys.argv[1], int(sys.argv[2], 0)
FEATURE = 2180          # offsetof(struct f2fs_super_block, feature)
with open(path, 'r+b') as f:
    for blk in (0, 1):
        off = blk * 4096 + 1024 + FEATURE
        f.seek(off)
        v = struct.unpack('<I', f.read(4))[0] | bits
        f.seek(off)
        f.write(struct.pack('<I', v))
PY
}

refused() {
	local bits=$1 re=$2 img=$TMP/bits.img sum
	with_bits "$bits" "$img"
	sum=$(sha256sum <"$img")
	run_limited 20 "$UF2FS" put "$img" "$BASE.mkfs.log" /x
	expect_clean_error "feature bits $bits" || fail "bits $bits accepted"
	mentions "$OUT" "$re" || fail "bits $bits: message"
	[ "$(sha256sum <"$img")" = "$sum" ] || fail "bits $bits: image changed"
}
refused 0x2 'blkzoned.*single device that is not a zoned block device'
refused 0x20000 'unknown incompatible feature bit 0x20000'
refused 0x80000000 'unknown incompatible feature bit 0x80000000'

with_bits 0x10000 "$TMP/packed.img"
"$UF2FS" info "$TMP/packed.img" | grep -q '^Features: .*packed_ssa' || fail "packed_ssa not listed"
"$UF2FS" put "$TMP/packed.img" "$BASE.mkfs.log" /x || fail "packed_ssa: put"
"$UF2FS" cat "$TMP/packed.img" /x | cmp - "$BASE.mkfs.log" || fail "packed_ssa: read back"
pass "feature gate: unknown bits refused by number, blkzoned on a plain file named, packed_ssa read"
