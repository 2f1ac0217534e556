#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Zoned volumes whose zones hold less than their size (NVMe ZNS zone
# capacity): fixtures/zoned-cap.tar.zst is a volume Linux 6.1 made and wrote
# in QEMU on a conventional disk (zoned-conv.img, 32 MiB) and a ZNS namespace
# of 8 MiB zones with a capacity of 5 MiB (zoned-zns.img, 256 MiB);
# fixtures/zoned-cap.guest.sh says how. A section is 4 segments of 2 MiB:
# segment 2 of each zoned section has 256 usable blocks, segment 3 none.
# Image files do not record the capacity: -o zone_capacity=5M gives it.
#   info       the capacity, Linux's pointers (one zone filled to it)
#   read       Linux's files byte for byte
#   write      a FUSE mount fills and overwrites until GC collected sections
#              and zones were reset: no write refused by the zone rule (the
#              device layer refuses any off a pointer or past the capacity),
#              and the bytes past every zone's capacity still all zero in
#              the zoned file; remount compares the tree
#   fsck       Debian's fsck.f2fs -f on the files (it cannot know the
#              capacity there): clean but for the checkpoint's free segment
#              count, which uf2fs writes as Linux does, without the 32
#              segments past the capacity: fsck's count minus exactly 32
#   crash      fsync'd data, kill -9, remount: roll-forward, fsck as above
#   bad input  a capacity smaller than the blocks in use, larger than the
#              zone, not whole blocks, or given for a volume that is not
#              zoned: a clear error, nothing written
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/zoned.sh"

need_fuse
need_uf2fs
need_f2fs_tools
need_cmd zstd tar sha256sum gcc

tmpdir_init zoned-cap
tar -C "$TMP" -xSf <(zstd -q -d -c "$(dirname "$0")/fixtures/zoned-cap.tar.zst") || fail "unpack"
GH=$TMP/gh
gcc -O2 -Wall -o "$GH" "$(dirname "$0")/../compat/guest-helper.c" || fail "cannot build gh"
C=$TMP/zoned-conv.img
Z=$TMP/zoned-zns.img
OPTS="device=$Z,zone_capacity=5M"
MNT=$TMP/mnt
ZONES=32
sums() { sha256sum "$C" "$Z" | cut -d' ' -f1 | tr '\n' ' '; }

step "info: the capacity and Linux's pointers"
"$UF2FS" info -o "$OPTS" "$C" >"$TMP/info" || fail "info"
grep -q 'zone size         2048 blocks (8.0 MiB, one section), capacity 1280 blocks' \
	"$TMP/info" || { cat "$TMP/info"; fail "info: capacity"; }
# Linux's zone report (zoned-cap.guest.sh): the zone at 14336 full at its capacity
grep -qE "zone at block 14336 .*write pointer 1280" "$TMP/info" || fail "info: full zone"
grep -q "free segments .*, $ZONES of them past a zone's capacity" "$TMP/info" ||
	fail "info: the unusable segments"
zcap_tails_zero "$Z" $ZONES || fail "the fixture has data past a zone's capacity"

step "read what Linux wrote"
mkdir -p "$TMP/ref/d/sub"
"$GH" gen "$TMP/ref/d/big" 6000000 1 runs
"$GH" gen "$TMP/ref/d/sub/small" 3000 2 text
"$GH" gen "$TMP/ref/d/mid" 700000 3 text
"$GH" gen "$TMP/ref/inline" 100 5 text
for f in d/big d/sub/small d/mid inline; do
	cmp <("$UF2FS" cat -o "$OPTS" "$C" "/$f") "$TMP/ref/$f" || fail "uf2fs cat /$f differs"
done

step "write until sections are collected and zones reset"
mount_uf2fs "$C" "$MNT" "rw,$OPTS" || fail "mount rw"
mkdir "$MNT/w"
for i in $(seq 0 11); do
	head -c 2000000 /dev/urandom >"$MNT/w/g$i" || fail "fill $i"
done
for r in $(seq 0 99); do
	f=$MNT/w/g$((r * 7 % 12))
	head -c 2000000 /dev/urandom >"$f" || fail "overwrite $r"
	sync "$f" || fail "fsync $r"	# to the zones now, not only into the cache
done
sync
cp -a "$MNT/w" "$TMP/w.ref"
zoned_check_stats "$MNT" 1000
umount_uf2fs "$MNT" || fail "unmount"
zcap_tails_zero "$Z" $ZONES || fail "uf2fs wrote past a zone's capacity"
zcap_fsck "$TMP" "$OPTS" $ZONES || fail "fsck after the writes"
"$UF2FS" info -o "$OPTS" "$C" >"$TMP/info2" || fail "info after"
mount_uf2fs "$C" "$MNT" "ro,$OPTS" || fail "remount"
compare_tree "$TMP/w.ref" "$MNT/w" --no-root || fail "tree differs after remount"
cmp "$MNT/d/mid" "$TMP/ref/d/mid" || fail "Linux's d/mid changed"
umount_uf2fs "$MNT" || fail "unmount ro"

step "crash after fsync: roll-forward"
zoned_crash_round "$C" "$MNT" "$OPTS" "$GH"
zcap_tails_zero "$Z" $ZONES || fail "past a zone's capacity after recovery"
zcap_fsck "$TMP" "$OPTS" $ZONES || fail "fsck after recovery"

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
bad_case "capacity below the blocks in use" "past its capacity.*zone_capacity" \
	"$UF2FS" put -o "device=$Z,zone_capacity=1M" "$C" "$TMP/x" /x
bad_case "capacity above the zone size" "zone_capacity=.*at most the zone" \
	"$UF2FS" put -o "device=$Z,zone_capacity=9M" "$C" "$TMP/x" /x
bad_case "capacity not whole blocks" "zone_capacity=5000.*whole" \
	"$UF2FS" put -o "device=$Z,zone_capacity=5000" "$C" "$TMP/x" /x
mk_image "$TMP/plain.img" 64M none "" || fail "plain image"
psum=$(sha256sum <"$TMP/plain.img")
run_limited 20 "$UF2FS" put -o zone_capacity=5M "$TMP/plain.img" "$TMP/x" /x
expect_clean_error "zone_capacity on a volume that is not zoned" || fail "plain image accepted"
mentions "$OUT" "zone_capacity=.*not zoned" || fail "plain image: message"
[ "$(sha256sum <"$TMP/plain.img")" = "$psum" ] || fail "plain image changed"
pass "zoned volume, zone capacity < size: Linux's read, written within the capacity with GC, crash, bad input"
