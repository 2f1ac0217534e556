#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Zoned volumes (blkzoned, mkfs.f2fs -m): fixtures/zoned.tar.zst holds the two
# files of a volume Linux 6.1 made and wrote in QEMU on a conventional disk
# (zoned-conv.img, 32 MiB) and an NVMe ZNS namespace (zoned-zns.img, 128 MiB
# of 4 MiB zones); fixtures/zoned.guest.sh says how. On the files:
#   info       names the zoned layout, device 1 zoned, 4 MiB zones = sections,
#              and the write pointers derived from the SIT equal the zone
#              report Linux's device gave where the SIT can know them
#   read       Linux's files byte for byte (regenerated with the guest helper)
#   write      a FUSE mount fills the volume and overwrites files until GC
#              has collected sections and zones were reset; every write into
#              a sequential zone must be at its write pointer (the device
#              layer refuses, EIO, any other: uf2fs stats counts them, 0
#              wanted); fsck.f2fs -f clean; a remount reads it all back
#   crash      fsync'd data, the daemon killed (kill -9), remount: roll-
#              forward recovery, the logs moved to fresh zones, fsck clean
#   bad input  the zoned device truncated, or given as the first, or a
#              section size that does not fit the zones: a clear error,
#              nothing written; IPU asked for on a zoned volume is refused
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/zoned.sh"

need_fuse
need_uf2fs
need_f2fs_tools
need_cmd zstd tar sha256sum gcc

tmpdir_init zoned
tar -C "$TMP" -xSf <(zstd -q -d -c "$(dirname "$0")/fixtures/zoned.tar.zst") || fail "unpack"
GH=$TMP/gh
gcc -O2 -Wall -o "$GH" "$(dirname "$0")/../compat/guest-helper.c" || fail "cannot build gh"
C=$TMP/zoned-conv.img
Z=$TMP/zoned-zns.img
DEV="device=$Z"
MNT=$TMP/mnt
# the super block names the devices relative to their directory, as Linux and fsck find them
zfsck() { (cd "$TMP" && fsck_clean zoned-conv.img); }
sums() { sha256sum "$C" "$Z" | cut -d' ' -f1 | tr '\n' ' '; }

step "info: the zoned layout and the write pointers"
"$UF2FS" info -o "$DEV" "$C" >"$TMP/info" || fail "info"
grep -q '^Layout: .*zoned (blkzoned' "$TMP/info" || fail "info: layout"
grep -qE 'device 1 .*zoned-zns.img: 128.0 MiB, blocks 8192-40959 .*, zoned$' "$TMP/info" ||
	{ cat "$TMP/info"; fail "info: device 1 not zoned"; }
grep -q 'zone size         1024 blocks (4.0 MiB, one section)' "$TMP/info" || fail "info: zone size"
grep -q 'sequential zones  32, 6 not empty' "$TMP/info" || { cat "$TMP/info"; fail "info: zones"; }
# Linux's zone report (zoned.guest.sh): zone 0 at 2 blocks, zone 1 full, zone 6 at 470
for want in "8192 .*write pointer 2$" "9216 .*write pointer 1024 \\(full\\)" \
	     "14336 .*write pointer 470$"; do
	grep -qE "zone at block $want" "$TMP/info" || { cat "$TMP/info"; fail "info: zone $want"; }
done
(cd "$TMP" && "$UF2FS" info zoned-conv.img | grep -q 'zoned devices     1 (zoned-zns.img)') ||
	fail "info by the recorded relative paths"

step "read what Linux wrote"
mkdir -p "$TMP/ref/d/sub"
"$GH" gen "$TMP/ref/d/big" 12000000 1 runs
"$GH" gen "$TMP/ref/d/sub/small" 3000 2 text
"$GH" gen "$TMP/ref/d/mid" 700000 3 text
"$GH" gen "$TMP/ref/inline" 100 5 text
for f in d/big d/sub/small d/mid inline; do
	cmp <("$UF2FS" cat -o "$DEV" "$C" "/$f") "$TMP/ref/$f" || fail "uf2fs cat /$f differs"
done
"$UF2FS" ls -o "$DEV" "$C" /d | grep -q gone && fail "the removed file is listed"

step "write until sections are collected and zones reset"
mount_uf2fs "$C" "$MNT" "rw,$DEV" || fail "mount rw"
cmp "$MNT/d/big" "$TMP/ref/d/big" || fail "mount: d/big differs"
mkdir "$MNT/w"
for i in $(seq 0 19); do
	head -c 2000000 /dev/urandom >"$MNT/w/g$i" || fail "fill $i"
done
for r in $(seq 0 59); do
	head -c 2000000 /dev/urandom >"$MNT/w/g$((r * 7 % 20))" || fail "overwrite $r"
	[ $((r % 10)) -eq 0 ] && sync
done
sync
cp -a "$MNT/w" "$TMP/w.ref"
zoned_check_stats "$MNT" 10000
umount_uf2fs "$MNT" || fail "unmount"
zfsck || fail "fsck after the writes"
"$UF2FS" info -o "$DEV" "$C" >"$TMP/info2" || fail "info after"
mount_uf2fs "$C" "$MNT" "ro,$DEV" || fail "remount"
compare_tree "$TMP/w.ref" "$MNT/w" --no-root || fail "tree differs after remount"
cmp "$MNT/d/mid" "$TMP/ref/d/mid" || fail "Linux's d/mid changed"
umount_uf2fs "$MNT" || fail "unmount ro"

step "crash after fsync: roll-forward, logs moved to fresh zones"
zoned_crash_round "$C" "$MNT" "$DEV" "$GH"
zfsck || fail "fsck after recovery"

step "bad input"
before=$(sums)
echo x >"$TMP/x"
bad_case() {
	local what=$1 re=$2
	shift 2
	run_limited 20 "$@"
	expect_clean_error "$what" || fail "$what"
	mentions "$OUT" "$re" || fail "$what: message"
	[ "$(sums)" = "$before" ] || fail "$what: an image changed"
}
cp "$Z" "$TMP/short.img"
truncate -s 100M "$TMP/short.img"
bad_case "truncated zoned device" "device 1 .*short\.img.*bytes" \
	"$UF2FS" put -o device="$TMP/short.img" "$C" "$TMP/x" /x
bad_case "zoned device given as the first" "bad magic" "$UF2FS" put "$Z" "$TMP/x" /x
bad_case "IPU on a zoned volume" "zoned volume.*ipu_policy" \
	"$UF2FS" put -o "$DEV,ipu_policy=0x1" "$C" "$TMP/x" /x
# sections of 4 segments (8 MiB): the zoned device no longer starts on one
cp "$C" "$TMP/bad-sec.img"
"$PY" - "$TMP/bad-sec.img" <<'PY'
import struct, sys
SEGS_PER_SEC = 1024 + 24        # offsetof(struct f2fs_super_block, segs_per_sec)
with open(sys.argv[1], 'r+b') as f:
    for blk in (0, 1):
        f.seek(blk * 4096 + SEGS_PER_SEC)
        f.write(struct.pack('<I', 4))
PY
bsum=$(sha256sum <"$TMP/bad-sec.img")
run_limited 20 "$UF2FS" put -o "$DEV" "$TMP/bad-sec.img" "$TMP/x" /x
expect_clean_error "sections that do not fit the zones" || fail "bad section size accepted"
mentions "$OUT" "not whole zones.*zone layout does not fit" || fail "bad section size: message"
[ "$(sha256sum <"$TMP/bad-sec.img")" = "$bsum" ] || fail "bad section size: image changed"
[ "$(sums)" = "$before" ] || fail "bad section size: the zoned device changed"
pass "zoned volume: Linux's read, written in zone order with GC and resets, crash, bad input"
