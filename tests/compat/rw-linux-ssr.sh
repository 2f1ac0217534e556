#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Compat: Linux f2fs takes an image that uf2fs left with SSR logs and
# in-place updates, and uf2fs reads what Linux then wrote into it.
#
# A 64 MiB image (reserved segments are most of its spare space, so the
# kernel's need_SSR holds from the start) is filled through a read-write FUSE
# mount, every other file is deleted, and new files go into the freed slots:
# the unmount checkpoint then records current segments with alloc_type SSR,
# their summaries holding older blocks' entries. A few fsync'd overwrites
# land in place. fsck.f2fs must be clean; the guest mounts the image (the
# kernel's sanity_check_curseg), checks every file's sha256, copies and
# deletes files (its own allocation continues in those SSR segments),
# unmounts; fsck.f2fs is clean again and uf2fs reads Linux's files. Kernel
# f2fs errors in dmesg fail the test.
#
# Env: BUILD, UF2FS, TOP (from make check); KEEP_TMP=1.
set -euo pipefail
. "$(dirname "$0")/compat-lib.sh"
need_cmd sha256sum

tmpdir_init rw-linux-ssr
IMG=$TMP/ssr.img
M=$TMP/mnt
SRC=$TMP/src
mkdir -p "$SRC" "$TMP/in"

# deterministic content: file i is 256 KiB of a seeded stream
gen() {	# gen FILE SEED KIB
	"$PY" -c 'import random,sys
r = random.Random(int(sys.argv[2]))
open(sys.argv[1], "wb").write(r.randbytes(int(sys.argv[3]) * 1024))' "$1" "$2" "$3"
}

mk_image "$IMG" 64M extra_attr,inode_checksum,inode_crtime "" || fail "mkfs"

step "uf2fs fills the image, deletes every other file, writes new files (SSR)"
mount_uf2fs "$IMG" "$M" rw || fail "uf2fs mount -o rw"
for i in $(seq 0 47); do
	gen "$SRC/f$i" "$i" 256
	cp "$SRC/f$i" "$M/f$i" || fail "cp f$i"
done
umount_uf2fs "$M" || fail "unmount after the fill"
mount_uf2fs "$IMG" "$M" rw || fail "uf2fs mount -o rw (2)"
for i in $(seq 0 2 47); do
	rm "$M/f$i" "$SRC/f$i" || fail "rm f$i"
done
umount_uf2fs "$M" || fail "unmount after the deletes"
mount_uf2fs "$IMG" "$M" rw || fail "uf2fs mount -o rw (3)"
for i in $(seq 0 19); do
	gen "$SRC/g$i" "$((1000 + i))" 200
	cp "$SRC/g$i" "$M/g$i" || fail "cp g$i"
done
# fsync'd small overwrites: in place (F2FS_IPU_FSYNC)
for i in 1 3 5; do
	gen "$TMP/patch" "$((5000 + i))" 8
	dd if="$TMP/patch" of="$M/f$i" bs=4096 seek=7 conv=notrunc,fsync status=none ||
		fail "dd into f$i"
	dd if="$TMP/patch" of="$SRC/f$i" bs=4096 seek=7 conv=notrunc status=none
done
"$UF2FS" stats "$M" > "$TMP/stats.txt" || fail "uf2fs stats"
umount_uf2fs "$M" || fail "unmount after the SSR writes"
grep -E 'in-place \(IPU\) +[1-9]' "$TMP/stats.txt" >&2 || fail "no in-place update"
# the new files' data went out at the unmount checkpoint: its logs tell
"$UF2FS" info "$IMG" > "$TMP/info.txt" || fail "uf2fs info"
grep curseg "$TMP/info.txt" >&2
grep -q '(SSR)' "$TMP/info.txt" || fail "no current segment is SSR at unmount"
fsck_clean "$IMG" || fail "fsck.f2fs after uf2fs wrote with SSR"
(cd "$SRC" && sha256sum -- *) > "$TMP/in/sums"

step "Linux mounts the SSR image, checks it, writes into it"
cat > "$TMP/guest.sh" <<'EOF'
rc=0
mkdir -p /tmp/out /mnt/a
if mount -t f2fs /dev/vda /mnt/a; then
	cd /mnt/a
	sha256sum -c /in/sums > /tmp/out/check 2>&1 || { echo "GUEST: sha256 mismatch"; rc=1; }
	for i in 1 3 5 7 9 11 13 15; do
		cp f$i linux$i || { echo "GUEST: cp f$i"; rc=1; }
	done
	sync
	rm -f g0 g1 g2 f9
	for i in 17 19 21; do
		cp f$i linuxb$i || { echo "GUEST: cp f$i (2)"; rc=1; }
	done
	sha256sum linux* > /tmp/out/linux.sums
	cd /
	umount /mnt/a || { echo "GUEST: umount failed"; rc=1; }
else
	echo "GUEST: mount failed"; rc=1
fi
dmesg > /tmp/out/dmesg
tar cf - -C /tmp/out . | dd of=/dev/vdb bs=65536 conv=fsync 2>/dev/null
exit $rc
EOF
QEMU_IN=$TMP/in qemu_run "$IMG" "$TMP/guest.sh" "$TMP/guest.out" "${RW_LINUX_TIMEOUT:-600}" \
	> "$TMP/guest.console" || { tail -30 "$TMP/guest.console" >&2; fail "guest run failed"; }
mkdir -p "$TMP/guest.d"
tar xf "$TMP/guest.out" -C "$TMP/guest.d" || fail "no output from the guest"
bad=$(grep -iE 'f2fs.*(error|inconsist|corrupt|fsck|invalid|bad |mismatch|fail)' \
	"$TMP/guest.d/dmesg" || true)
[ -z "$bad" ] || { printf '%s\n' "$bad" | head -20 >&2; fail "kernel f2fs messages"; }
if grep -q '^GUEST:' "$TMP/guest.console"; then
	grep '^GUEST:' "$TMP/guest.console" >&2
	cat "$TMP/guest.d/check" >&2 || true
	fail "the guest reported errors"
fi
log "Linux: $(grep -c ': OK$' "$TMP/guest.d/check") files verified"

step "fsck and uf2fs read what Linux wrote"
fsck_clean "$IMG" || fail "fsck.f2fs after Linux wrote into the SSR image"
mount_uf2fs "$IMG" "$M" ro || fail "uf2fs mount -o ro after Linux"
(cd "$M" && sha256sum linux*) > "$TMP/uf2fs.sums" || fail "sha256 through uf2fs"
for i in 1 3 5 7 9 11 13 15; do
	[ "$(sha256sum < "$SRC/f$i")" = "$(sha256sum < "$M/linux$i")" ] ||
		fail "linux$i differs from f$i"
done
umount_uf2fs "$M" || fail "unmount"
diff "$TMP/guest.d/linux.sums" "$TMP/uf2fs.sums" >&2 || fail "uf2fs reads Linux's files differently"
mount_uf2fs "$IMG" "$M" rw || fail "uf2fs mount -o rw after Linux"
for i in 0 1 2 3; do
	gen "$TMP/h$i" "$((7000 + i))" 300
	cp "$TMP/h$i" "$M/h$i" || fail "cp h$i after Linux"
done
umount_uf2fs "$M" || fail "unmount after writing on Linux's SSR logs"
fsck_clean "$IMG" || fail "fsck.f2fs after uf2fs continued Linux's logs"
pass "Linux takes uf2fs's SSR logs and in-place updates; uf2fs continues Linux's"
