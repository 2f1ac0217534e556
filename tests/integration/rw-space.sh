#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Space: a 128 MiB image through a read-write FUSE mount, filled to ENOSPC
# again and again with fragmentation in between.
#
# Each of CYCLES (default 5) cycles: fill with files of 17 KiB to 8 MiB until a
# write fails; it must fail with ENOSPC (never another error, a crash or a
# short file), while statfs shows at most 5% available, and the files must
# have stored at least 90% of what statfs showed available before the fill
# (else: space that is free but cannot be used, i.e. no working garbage
# collection; the numbers are printed). Then verify every file, delete every
# other one (all cycles' files: fragmentation across segments), unmount,
# fsck.f2fs -f must be clean, remount read-write and go on. At the end: a
# read-only mount verifies everything, and Linux f2fs in QEMU (when
# available) reads the image: its manifest must equal uf2fs's, every field.
#
# Mounted -o no_writeback_cache: under writeback_cache (the rw default) the
# kernel takes writes into its page cache without asking, and ENOSPC comes
# only at fsync or close, for data that is then not in the file.
#
# Env: CYCLES, SPACE_MB (image size, default 128), FEATURES.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

need_fuse
need_f2fs_tools
need_uf2fs
need_cmd "$PY"

CYCLES=${CYCLES:-5}
SPACE_MB=${SPACE_MB:-128}
FEATURES=${FEATURES:-extra_attr,inode_checksum,inode_crtime}
FILL=("$PY" "$(dirname "$0")/rw-space-fill.py")
tmpdir_init rw-space
IMG=$TMP/space.img
MNT=$TMP/mnt
STATE=$TMP/state.json

mk_image "$IMG" "${SPACE_MB}M" "$FEATURES" "" || fail "mkfs"
mount_uf2fs "$IMG" "$MNT" rw,no_writeback_cache || fail "mount -o rw"
touch "$MNT/.probe" 2>/dev/null || skip "uf2fs mount -o rw is not writable yet"
rm -f "$MNT/.probe"

for c in $(seq 1 "$CYCLES"); do
	step "cycle $c (t=${SECONDS}s)"
	"${FILL[@]}" "$STATE" "$MNT" fill "$c" || fail "cycle $c: fill"
	"${FILL[@]}" "$STATE" "$MNT" verify || fail "cycle $c: verify after fill"
	"${FILL[@]}" "$STATE" "$MNT" delete-alternate || fail "cycle $c: delete"
	"${FILL[@]}" "$STATE" "$MNT" verify || fail "cycle $c: verify after delete"
	umount_uf2fs "$MNT" || fail "cycle $c: unmount"
	fsck_clean "$IMG" || fail "cycle $c: fsck.f2fs not clean"
	mount_uf2fs "$IMG" "$MNT" rw,no_writeback_cache || fail "cycle $c: remount"
	"${FILL[@]}" "$STATE" "$MNT" verify || fail "cycle $c: verify after remount"
done

step "final fill, read-only verify (t=${SECONDS}s)"
"${FILL[@]}" "$STATE" "$MNT" fill $((CYCLES + 1)) || fail "final fill"
umount_uf2fs "$MNT" || fail "unmount"
fsck_clean "$IMG" || fail "fsck.f2fs not clean after the final fill"
mount_uf2fs "$IMG" "$MNT" ro || fail "read-only mount"
"${FILL[@]}" "$STATE" "$MNT" verify || fail "read-only verify"

# Linux reads the full, fragmented image
. "$TOP/tests/compat/qemu.sh"
if why=$(qemu_missing) && command -v gcc >/dev/null; then
	step "Linux f2fs reads the image (t=${SECONDS}s)"
	gcc -O2 -o "$TMP/gh" "$TOP/tests/compat/guest-helper.c" || fail "cannot build guest-helper.c"
	"$TMP/gh" manifest "$MNT" "$TMP/uf2fs.manifest" "$TMP/uf2fs.xattrs" "$TMP/uf2fs.info" ||
		fail "manifest of the uf2fs mount"
	umount_uf2fs "$MNT" || fail "unmount"
	cat > "$TMP/guest.sh" <<'EOF'
mkdir -p /mnt/f /tmp/out
mount -t f2fs -o ro /dev/vda /mnt/f || exit 1
gh manifest /mnt/f /tmp/out/m.manifest /tmp/out/m.xattrs /tmp/out/m.info || exit 1
umount /mnt/f
dmesg > /tmp/out/dmesg
tar cf - -C /tmp/out . | dd of=/dev/vdb bs=65536 conv=fsync 2>/dev/null
EOF
	qemu_run "$IMG" "$TMP/guest.sh" "$TMP/out.disk" 300 > "$TMP/guest.log" ||
		{ tail -20 "$TMP/guest.log" >&2; fail "guest run failed"; }
	mkdir -p "$TMP/out"
	tar xf "$TMP/out.disk" -C "$TMP/out"
	if grep -iE 'f2fs.*(error|inconsist|corrupt|fsck|invalid)' "$TMP/out/dmesg"; then
		fail "kernel f2fs complaints reading the image"
	fi
	"$PY" "$TOP/tests/compat/verify-tree.py" --ino "$TMP/uf2fs.manifest" "$TMP/uf2fs.xattrs" \
		--manifest "$TMP/out/m.manifest" "$TMP/out/m.xattrs" ||
		fail "Linux's view of the image differs from uf2fs's"
else
	log "note: Linux oracle part skipped: ${why:-gcc missing}"
	umount_uf2fs "$MNT" || fail "unmount"
fi
pass "$CYCLES fill/delete cycles, fsck clean, verified"
