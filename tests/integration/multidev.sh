#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Multi-device volumes, as `mkfs.f2fs -c dev2 dev1` makes them: the super
# block of dev1 lists both devices by path and size in segments, the metadata
# and the first segments live on dev1, the following segments on dev2.
#
#   two     mkfs.f2fs -c b a: `uf2fs info` lists each device and its blocks;
#           a FUSE mount (rw) takes a tree and a file larger than the first
#           device's main area, so data lands on the second (checked in the
#           raw file); the tree reads back after a remount; fsck.f2fs -f (which
#           opens the other devices by the recorded paths) is clean; offline
#           put, get and rm work and stay clean.
#   moved   the files moved: the mount names the missing device and hints at
#           -o device=, which then opens the volume.
#   bad     devices swapped, the first device given again as the second, a
#           truncated second device, the second device given as IMAGE, the
#           wrong number of device= options, device= on a single-device image:
#           each a clear error naming the device, and no file changes.
#   three   mkfs.f2fs -c b -c c a: filled beyond the first two devices through
#           a mode=lfs mount, half deleted and refilled, which needs garbage
#           collection (checked in `uf2fs stats`), fsck clean, tree compared
#           after remount.
#
#   KEEP_TMP=1 tests/integration/multidev.sh
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

need_fuse
need_f2fs_tools
need_uf2fs
need_cmd "$PY" sha256sum

tmpdir_init multidev
step() { echo; echo "=== $* (${SECONDS}s) ==="; }

# nonzero_mib FILE: MiB of the file holding anything but zeros
nonzero_mib() {
	"$PY" - "$1" <<'EOF'
import sys
n = 0
with open(sys.argv[1], 'rb') as f:
    while True:
        b = f.read(1 << 20)
        if not b:
            break
        n += b.count(0) != len(b)
print(n)
EOF
}

sums() { sha256sum "$@" | cut -d' ' -f1 | tr '\n' ' '; }

step "source tree"
SRC=$TMP/src
gen_tree 18 "$SRC" --small --no-special --quiet
head -c $((40 << 20)) /dev/urandom >"$SRC/big.bin"

step "two devices: mkfs.f2fs -c b a"
A=$TMP/two/a.img
B=$TMP/two/b.img
mkdir -p "$TMP/two"
truncate -s 48M "$A"
truncate -s 96M "$B"
"$MKFS_F2FS" -f -q -c "$B" "$A" >"$TMP/mkfs2.log" 2>&1 || { cat "$TMP/mkfs2.log"; fail "mkfs"; }
"$UF2FS" info "$A" >"$TMP/info2" || fail "uf2fs info on a 2-device volume"
grep -q 'devices           2 (multi-device volume)' "$TMP/info2" || fail "info: no device count"
grep -qE "device 0 .*a.img: 48.0 MiB, blocks 0-12287 " "$TMP/info2" ||
	{ cat "$TMP/info2"; fail "info: device 0 range"; }
grep -qE "device 1 .*b.img: 96.0 MiB, blocks 12288-36863 " "$TMP/info2" ||
	{ cat "$TMP/info2"; fail "info: device 1 range"; }

MNT=$TMP/mnt
mount_uf2fs "$A" "$MNT" rw || fail "mount -o rw"
cp -a "$SRC" "$MNT/tree" || fail "copy into the mount"
umount_uf2fs "$MNT" || fail "unmount"
fsck_clean "$A" || fail "fsck after the mount wrote"
[ "$(nonzero_mib "$B")" -ge 8 ] || fail "nothing landed on the second device"
mount_uf2fs "$A" "$MNT" ro || fail "remount ro"
compare_tree "$SRC" "$MNT/tree" || fail "tree differs after remount"
umount_uf2fs "$MNT" || fail "unmount ro"

step "offline put, get, rm"
"$UF2FS" rm "$A" /tree/big.bin || fail "rm"
"$UF2FS" put "$A" "$SRC/big.bin" /again.bin || fail "put"
"$UF2FS" get "$A" /again.bin "$TMP/again.out" || fail "get"
cmp "$SRC/big.bin" "$TMP/again.out" || fail "get returned other bytes"
fsck_clean "$A" || fail "fsck after put/rm"
"$UF2FS" ls "$A" /tree | grep -q big.bin && fail "rm left the file"

step "moved files and -o device="
M=$TMP/moved
mkdir -p "$M"
mv "$A" "$B" "$M/"
run_limited 20 "$UF2FS" info "$M/a.img"
expect_clean_error "info with the second device missing" || fail "missing device"
mentions "$OUT" "device 1 .*b\.img.*(No such file|device=)" || fail "missing device message"
"$UF2FS" get -o device="$M/b.img" "$M/a.img" /again.bin "$TMP/again2.out" ||
	fail "get with -o device="
cmp "$SRC/big.bin" "$TMP/again2.out" || fail "get (moved) returned other bytes"
mount_uf2fs "$M/a.img" "$MNT" "rw,device=$M/b.img" || fail "mount rw with device="
echo moved >"$MNT/moved.txt"
umount_uf2fs "$MNT" || fail "unmount (moved)"
"$UF2FS" cat -o device="$M/b.img" "$M/a.img" /moved.txt | grep -qx moved ||
	fail "write through the moved volume lost"
mv "$M/a.img" "$M/b.img" "$TMP/two/"
fsck_clean "$A" || fail "fsck after the moved mount"

step "bad input"
before=$(sums "$A" "$B")
echo x >"$TMP/x"
# bad_case WHAT REGEX CMD...: a clean error naming REGEX, nothing written
bad_case() {
	local what=$1 re=$2
	shift 2
	run_limited 20 "$@"
	expect_clean_error "$what" || fail "$what"
	mentions "$OUT" "$re" || fail "$what: message"
	[ "$(sums "$A" "$B")" = "$before" ] || fail "$what: an image changed"
}
bad_case "second device given as IMAGE" "bad magic" \
	"$UF2FS" put "$B" "$TMP/x" /x
bad_case "first device given as the second" "device 1 .*a\.img.*same file.*super block" \
	"$UF2FS" put -o device="$A" "$A" "$TMP/x" /x
cp "$A" "$TMP/copy0.img"
truncate -s 96M "$TMP/copy0.img"
bad_case "a copy of the first device given as the second" "device 1 .*copy0\.img.*super block" \
	"$UF2FS" put -o device="$TMP/copy0.img" "$A" "$TMP/x" /x
rm -f "$TMP/copy0.img"
cp "$B" "$TMP/short.img"
truncate -s 20M "$TMP/short.img"
bad_case "truncated second device" "device 1 .*short\.img.*bytes" \
	"$UF2FS" put -o device="$TMP/short.img" "$A" "$TMP/x" /x
bad_case "too many device= options" "2 devices.*got 2" \
	"$UF2FS" put -o device="$B",device="$B" "$A" "$TMP/x" /x
S=$TMP/single.img
mk_image "$S" 64M "" "" || fail "mkfs single"
ssum=$(sums "$S")
bad_case "device= on a single device" "single-device" \
	"$UF2FS" put -o device="$B" "$S" "$TMP/x" /x
[ "$(sums "$S")" = "$ssum" ] || fail "single image changed"
cp "$A" "$TMP/short0.img"
truncate -s 30M "$TMP/short0.img"
bad_case "truncated first device" "device 0 .*short0\.img.*bytes" \
	"$UF2FS" info "$TMP/short0.img"
rm -f "$TMP/short.img" "$TMP/short0.img"

step "three devices: mkfs.f2fs -c b -c c a, fill, delete, refill (GC)"
rm -rf "$TMP/two"
mkdir -p "$TMP/three"
A=$TMP/three/a.img
B=$TMP/three/b.img
C=$TMP/three/c.img
truncate -s 48M "$A" "$B" "$C"
"$MKFS_F2FS" -f -q -c "$B" -c "$C" "$A" >"$TMP/mkfs3.log" 2>&1 ||
	{ cat "$TMP/mkfs3.log"; fail "mkfs 3"; }
"$UF2FS" info "$A" >"$TMP/info3" || fail "info 3"
grep -q 'devices           3' "$TMP/info3" || fail "info: 3 devices"
# fill to about 80 % of the user blocks in 1 MiB files
user=$(awk '/user blocks/ { print $3 }' "$TMP/info3")
nfill=$((user * 4 / 1024 * 8 / 10))
log "fill: $nfill MiB of $((user * 4 / 1024)) MiB"
# mode=lfs: no slot reuse (SSR), so the refill needs garbage collection
mount_uf2fs "$A" "$MNT" rw,mode=lfs || fail "mount 3"
mkdir "$MNT/fill"
for i in $(seq 1 "$nfill"); do
	head -c $((1 << 20)) /dev/urandom >"$MNT/fill/f$i" || fail "fill $i"
done
for i in $(seq 1 2 "$nfill"); do rm "$MNT/fill/f$i"; done
for i in $(seq 1000 $((1000 + nfill * 4 / 10))); do
	head -c $((1 << 20)) /dev/urandom >"$MNT/fill/f$i" || fail "refill $i"
done
cp -a "$MNT/fill" "$TMP/fill.ref"
"$UF2FS" stats "$MNT" >"$TMP/stats3" || fail "stats"
gc=$(awk '$1 == "gc" { print $2 }' "$TMP/stats3")
log "gc: $gc segments cleaned"
[ "${gc:-0}" -gt 0 ] || { cat "$TMP/stats3"; fail "the refill did not need GC"; }
umount_uf2fs "$MNT" || fail "unmount 3"
fsck_clean "$A" || fail "fsck 3 devices"
for d in "$B" "$C"; do
	[ "$(nonzero_mib "$d")" -ge 8 ] || fail "nothing landed on $(basename "$d")"
done
mount_uf2fs "$A" "$MNT" ro || fail "remount 3"
compare_tree "$TMP/fill.ref" "$MNT/fill" --no-root || fail "3-device tree differs"
umount_uf2fs "$MNT" || fail "unmount 3 ro"
pass "multi-device volumes: 2 and 3 devices read and written, moved, bad input refused"
