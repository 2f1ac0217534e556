#!/bin/bash
# Linux reads back an image that uf2fs changed through NBD: the image is
# served by nbdkit (file plugin, Unix socket); a small tree (40 files in
# nested directories, sizes from empty to 1 MiB, symlinks) goes in through
# `uf2fs mount -o rw nbd+unix:///?socket=...`, one more file through `uf2fs
# put` on the URI; with nbdkit stopped, fsck.f2fs is clean on the file and
# the real Linux f2fs, booted on it in QEMU, reads back every file (sha256)
# and symlink.
set -u
. "$(dirname "$0")/compat-lib.sh"
need_cmd nbdkit
tmpdir_init nbd-linux
IMG=$TMP/u.img MNT=$TMP/mnt SRC=$TMP/src SOCK=$TMP/nbd.sock
mkdir -p "$MNT" "$TMP/in"

compat_tree "$SRC"

truncate -s 128M "$IMG"
"$MKFS_F2FS" -q -f "$IMG" >/dev/null || fail "mkfs.f2fs"
nbdkit -P "$TMP/nbdkit.pid" -U "$SOCK" file "$IMG" || fail "nbdkit"
KIT=$(cat "$TMP/nbdkit.pid")
trap '_rc=$?; (exit $_rc); _cleanup; kill "$KIT" 2>/dev/null' EXIT
URI="nbd+unix:///?socket=$SOCK"
mount_uf2fs "$URI" "$MNT" rw || fail "mount of $URI"
cp -a "$SRC/d0" "$SRC/d1" "$SRC/d2" "$SRC/d3" "$SRC/link0" "$MNT/" || fail "copy"
umount_uf2fs "$MNT" || fail "unmount"
mkdir -p "$SRC/put"
head -c 300000 /dev/urandom >"$SRC/put/offline.bin"
"$UF2FS" put "$URI" "$SRC/put" / || fail "uf2fs put on the URI"
kill "$KIT"
for ((i = 0; i < 50; i++)); do kill -0 "$KIT" 2>/dev/null || break; sleep 0.1; done
fsck_clean "$IMG" || fail "fsck of the image written through NBD"

compat_readback "$TMP/in" "$SRC" >"$TMP/guest.sh"
QEMU_IN=$TMP/in qemu_run "$IMG" "$TMP/guest.sh" "" 240 >"$TMP/guest.out" 2>&1
rc=$?
cat "$TMP/guest.out"
[ "$rc" = 0 ] || fail "Linux does not read back what uf2fs wrote through NBD (rc $rc)"
pass "Linux reads every file uf2fs wrote through NBD"
