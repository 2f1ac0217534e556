#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# An image Linux left with checkpoint=disable (fixtures/cp-disabled.*: CP_DISABLED_FLAG
# in its checkpoint, and writes of the disabled session past it). Linux mounts
# it without that option at that checkpoint, skipping roll-forward, and writes
# a checkpoint that clears the flag (f2fs_enable_checkpoint). uf2fs must do the
# same: `info` names the state; a read-only mount and a read-write mount both
# show exactly what Linux showed (the sha256 sums below, from the guest run in
# fixtures/cp-disabled.guest.sh); the rw mount writes, its checkpoint has no
# disabled flag, fsck.f2fs -f is clean and a remount reads everything back.
# tests/compat/cp-disabled-linux.sh has Linux read uf2fs's result.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

need_fuse
need_f2fs_tools
need_uf2fs
need_cmd zstd sha256sum

tmpdir_init cp-disabled
IMG=$TMP/cpd.img
zstd -q -d -f "$(dirname "$0")/fixtures/cp-disabled.img.zst" -o "$IMG" || fail "unzstd"
cat >"$TMP/linux.sums" <<'SUMS'
bb62144ed2e73c21d3b0e73caac882cb6613abf3601032ce3b5cda626d15d628  ./base/a
6b6cd5027581256a443bacbc4c54f2b9d99c0ca7fb30adef939333fcc9d56245  ./base/b
7a7ccd4fa310c751c4b9a863d039f1f51b0f636c4bc272d50548e08f981be2b4  ./base/c
SUMS
sums() { (cd "$1" && find . -type f | sort | xargs sha256sum); }

"$UF2FS" info "$IMG" | grep -E '^  flags .* disabled' || fail "info: no disabled flag"
MNT=$TMP/mnt
mount_uf2fs "$IMG" "$MNT" ro || fail "ro mount"
sums "$MNT" | diff "$TMP/linux.sums" - || fail "ro mount differs from Linux's view"
[ -e "$MNT/newdir" ] && fail "the disabled session's directory shows"
umount_uf2fs "$MNT" || fail "unmount ro"

mount_uf2fs "$IMG" "$MNT" rw || fail "rw mount of a checkpoint=disable image"
grep -q 'checkpoint=disable' "$(mount_log "$MNT")" || fail "no note of the state"
sums "$MNT" | diff "$TMP/linux.sums" - || fail "rw mount differs from Linux's view"
head -c 300000 /dev/urandom >"$TMP/new"
cp "$TMP/new" "$MNT/base/new"
mkdir "$MNT/newdir2"
umount_uf2fs "$MNT" || fail "unmount rw"
"$UF2FS" info "$IMG" | grep -E '^  flags ' | grep -q disabled && fail "flag not cleared"
fsck_clean "$IMG" || fail "fsck after the rw mount"
mount_uf2fs "$IMG" "$MNT" ro || fail "remount"
cmp "$TMP/new" "$MNT/base/new" || fail "new file lost"
sums "$MNT" | grep -v ' ./base/new$' | diff "$TMP/linux.sums" - || fail "old files changed"
umount_uf2fs "$MNT" || fail "unmount"
pass "checkpoint=disable image mounted rw at its last checkpoint, flag cleared, fsck clean"
