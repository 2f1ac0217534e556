#!/bin/bash
# What `uf2fs umount` returns on is complete for Linux: a small tree (40
# files in nested directories, sizes from empty to 1 MiB, symlinks) is
# copied in through a mount whose flusher writes by age (dirty_expire=1)
# with a pause in the middle, so both background and final writeback carry
# data; the image is copied the moment `uf2fs umount` returns, and the real
# Linux f2fs, booted on that copy in QEMU, reads back every file (sha256) and
# symlink; fsck.f2fs is clean on it.
set -u
. "$(dirname "$0")/compat-lib.sh"
tmpdir_init umount-linux
IMG=$TMP/u.img MNT=$TMP/mnt SRC=$TMP/src
mkdir -p "$MNT" "$TMP/in"

compat_tree "$SRC"

truncate -s 128M "$IMG"
"$MKFS_F2FS" -q -f "$IMG" >/dev/null || fail "mkfs.f2fs"
"$UF2FS" mount -o rw,dirty_expire=1 "$IMG" "$MNT" || fail "mount"
cp -a "$SRC/d0" "$SRC/d1" "$MNT/" || fail "copy, first half"
sleep 3
cp -a "$SRC/d2" "$SRC/d3" "$SRC/link0" "$MNT/" || fail "copy, second half"
"$UF2FS" stats "$MNT" | grep -E '^  (dirty|flusher) '
"$UF2FS" umount "$MNT" || fail "uf2fs umount"
cp --sparse=always "$IMG" "$TMP/snap.img"
fsck_clean "$TMP/snap.img" || fail "fsck of the image as umount left it"

compat_readback "$TMP/in" "$SRC" >"$TMP/guest.sh"
QEMU_IN=$TMP/in qemu_run "$TMP/snap.img" "$TMP/guest.sh" "" 240 >"$TMP/guest.out" 2>&1
rc=$?
cat "$TMP/guest.out"
[ "$rc" = 0 ] || fail "Linux does not read back what uf2fs umount left (rc $rc)"
pass "Linux reads every file of the image uf2fs umount returned on"
