#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Device alias files (feature device_alias, Linux 6.13+): fixtures/device-alias.tar.zst
# holds a.img (40 MiB), b.img and c.img (16 MiB each) made by mkfs.f2fs of
# f2fs-tools' g-dev-test branch (8b0c58b, built from a fetched snapshot outside
# the repo: Debian's 1.15 cannot make them) as
#     mkfs.f2fs -f -c /tmp/da/b.img@alias_b -c /tmp/da/c.img /tmp/da/a.img
# after a tag "alias block NNNNNN" was written into every 7th 4 KiB block of
# b.img (mkfs does not discard an aliased device, so its bytes become the
# file /alias_b: pinned, flag F2FS_DEVICE_ALIAS_FL, i_ext mapping all of b's
# blocks, no block addresses).
#
# The files moved, so every command names the other devices with -o device=.
# `info` names the layout; /alias_b reads as b.img's bytes (uf2fs cat and a
# FUSE mount); writing it fails as on Linux: ENODATA past the device
# (prepare_write_begin), EOPNOTSUPP for truncate and fallocate (f2fs_setattr,
# f2fs_fallocate of 6.13). Inside the device a write goes in place, as on
# Linux (the file is pinned): the bytes land in b.img at the same offset, no
# block is allocated, and they read back after a remount. Removing it gives
# the device's 4096 blocks
# back (as f2fs_do_truncate_blocks); other files keep working; the volume
# reads back after a remount. FSCK_F2FS_DEV=path/to/g-dev-test/fsck.f2fs also
# runs that fsck on the result (Debian's 1.15 reports the alias as corrupt).
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

need_fuse
need_uf2fs
need_cmd zstd tar sha256sum

tmpdir_init device-alias
tar -C "$TMP" -xf <(zstd -q -d -c "$(dirname "$0")/fixtures/device-alias.tar.zst") ||
	fail "unpack"
A=$TMP/a.img
DEVS="device=$TMP/b.img,device=$TMP/c.img"
want=$(sha256sum <"$TMP/b.img")

"$UF2FS" info -o "$DEVS" "$A" >"$TMP/info" || fail "info"
grep -q 'device alias files' "$TMP/info" || fail "info: no device alias layout"
grep -q '^Features: .*device_alias' "$TMP/info" || fail "info: feature not named"
valid0=$(awk '/valid blocks/ { print $3 }' "$TMP/info")
[ "$("$UF2FS" cat -o "$DEVS" "$A" /alias_b | sha256sum)" = "$want" ] ||
	fail "uf2fs cat /alias_b is not b.img"

MNT=$TMP/mnt
mount_uf2fs "$A" "$MNT" "rw,no_writeback_cache,$DEVS" || fail "mount"
[ "$(stat -c %s "$MNT/alias_b")" = $((16 << 20)) ] || fail "alias size"
[ "$(sha256sum <"$MNT/alias_b")" = "$want" ] || fail "mount: /alias_b is not b.img"
grep -q '^alias block 000700$' <(dd if="$MNT/alias_b" bs=4096 skip=700 count=1 status=none |
	head -1) || fail "block 700 tag"
# expect_errno WHAT ERRTEXT CMD...: fails, with that strerror text
expect_errno() {
	local what=$1 err=$2
	shift 2
	run_limited 20 "$@"
	expect_clean_error "$what" || fail "$what"
	grep -q "$err" <<<"$OUT" || fail "$what: not '$err': $OUT"
}
expect_errno "append past the device" "No data available" \
	dd if=/dev/zero of="$MNT/alias_b" bs=4096 seek=4096 count=1 conv=notrunc status=none
expect_errno "truncate" "Operation not supported" truncate -s 0 "$MNT/alias_b"
expect_errno "fallocate" "Operation not supported" fallocate -l 1M "$MNT/alias_b"
[ "$(sha256sum <"$MNT/alias_b")" = "$want" ] || fail "refused writes changed /alias_b"

# In place: an unaligned write across blocks 900-902 and a whole block at
# 1500 go to b.img's own bytes there, fsync'd, no new block allocated.
head -c 9000 /dev/urandom >"$TMP/patch1"
head -c 4096 /dev/urandom >"$TMP/patch2"
dd if="$TMP/patch1" of="$MNT/alias_b" bs=1 seek=$((900 * 4096 + 100)) conv=notrunc,fsync \
	status=none || fail "write inside the device"
dd if="$TMP/patch2" of="$MNT/alias_b" bs=4096 seek=1500 conv=notrunc,fsync status=none ||
	fail "block write inside the device"
cp "$TMP/b.img" "$TMP/b.want"
dd if="$TMP/patch1" of="$TMP/b.want" bs=1 seek=$((900 * 4096 + 100)) conv=notrunc status=none
dd if="$TMP/patch2" of="$TMP/b.want" bs=4096 seek=1500 conv=notrunc status=none
cmp "$MNT/alias_b" "$TMP/b.want" || fail "mount: /alias_b after in-place writes"
cmp "$TMP/b.img" "$TMP/b.want" || fail "b.img: the writes did not land in place"
[ "$(stat -c %s "$MNT/alias_b")" = $((16 << 20)) ] || fail "alias size changed"
umount_uf2fs "$MNT" || fail "unmount after in-place writes"
[ "$("$UF2FS" info -o "$DEVS" "$A" | awk '/valid blocks/ { print $3 }')" = "$valid0" ] ||
	fail "in-place writes allocated blocks"
[ "$("$UF2FS" cat -o "$DEVS" "$A" /alias_b | sha256sum)" = "$(sha256sum <"$TMP/b.want")" ] ||
	fail "uf2fs cat after the in-place writes"
mount_uf2fs "$A" "$MNT" "rw,no_writeback_cache,$DEVS" || fail "mount again"
cmp "$MNT/alias_b" "$TMP/b.want" || fail "remount: /alias_b after in-place writes"
head -c 3000000 /dev/urandom >"$TMP/other"
cp "$TMP/other" "$MNT/other" || fail "a plain file"
rm "$MNT/alias_b" || fail "rm /alias_b"
umount_uf2fs "$MNT" || fail "unmount"

valid1=$("$UF2FS" info -o "$DEVS" "$A" | awk '/valid blocks/ { print $3 }')
[ "$valid1" -le $((valid0 - 4096 + 800)) ] || fail "valid blocks $valid0 -> $valid1: range kept"
mount_uf2fs "$A" "$MNT" "ro,$DEVS" || fail "remount"
cmp "$TMP/other" "$MNT/other" || fail "other file after remount"
[ -e "$MNT/alias_b" ] && fail "alias back after remount"
umount_uf2fs "$MNT" || fail "unmount ro"
if [ -n "${FSCK_F2FS_DEV:-}" ]; then
	# that fsck opens the devices by the recorded paths: put them there
	mkdir -p /tmp/da
	for f in a b c; do cp "$TMP/$f.img" "/tmp/da/$f.img"; done
	"$FSCK_F2FS_DEV" -f --dry-run /tmp/da/a.img >"$TMP/fsck.log" 2>&1 || fail "fsck (g-dev-test)"
	grep -q 'other corrupted bugs .*Ok' "$TMP/fsck.log" || { cat "$TMP/fsck.log"; fail "fsck"; }
	log "fsck.f2fs (g-dev-test): clean"
fi
pass "device alias file read as its device, overwritten in place, refused past it as Linux; rm frees it"
