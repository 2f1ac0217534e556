#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The checkpoint=disable fixture (tests/integration/fixtures/cp-disabled.*),
# mounted read-write by uf2fs (which enables checkpoints as Linux does, then
# writes a file and a directory), then by Linux 6.1 in QEMU: the kernel must
# mount it without complaint, see no disabled state, and read Linux's own
# files and uf2fs's new one byte for byte. One boot, about 20 s.
set -euo pipefail
. "$(dirname "$0")/compat-lib.sh"
need_cmd zstd sha256sum

tmpdir_init cp-disabled-linux
IMG=$TMP/cpd.img
zstd -q -d -f tests/integration/fixtures/cp-disabled.img.zst -o "$IMG" || fail "unzstd"
MNT=$TMP/mnt
mount_uf2fs "$IMG" "$MNT" rw || fail "rw mount"
head -c 200000 /dev/urandom >"$MNT/base/uf2fs-new"
mkdir "$MNT/uf2fs-dir"
(cd "$MNT" && find . -type f | sort | xargs sha256sum) >"$TMP/host.sums"
umount_uf2fs "$MNT" || fail "unmount"
fsck_clean "$IMG" || fail "fsck"

{
	guest_funcs
	cat <<'G'
set -e
mount -t f2fs /dev/vda /mnt
[ -d /mnt/uf2fs-dir ]
sums /mnt
grep f2fs /proc/mounts
umount /mnt
dmesg_clean disabled
echo linux-done
G
} >"$TMP/guest.sh"
out=$(qemu_run "$IMG" "$TMP/guest.sh" "" 300) || { printf '%s\n' "$out"; fail "guest"; }
printf '%s\n' "$out" | grep -q linux-done || fail "guest did not finish"
printf '%s\n' "$out" | guest_sums | diff "$TMP/host.sums" - ||
	fail "Linux reads other bytes"
pass "Linux reads the checkpoint=disable image uf2fs mounted and wrote"
