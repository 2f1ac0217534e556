#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo`: the whole job on a built-in sample, step by step.
#
#   1. make a 256 MiB image with mkfs.f2fs
#   2. generate a sample tree (tests/lib/gen-tree.py --small) and load it
#      with sload.f2fs (owners, SELinux labels)
#   3. uf2fs info / ls / cat on the unmounted image
#   4. mount it with uf2fs, list it, read every file and compare with the source
#   5. uf2fs stats on the live mount
#   6. unmount, check the image is unchanged and passes fsck.f2fs -f
#   7. mount it read-write as an Android image: write, fs-verity, quota
#      report, stats; `uf2fs umount` (returns once the image is complete);
#      fsck.f2fs -f, quota included, is clean
#   8. write it out as an Android sparse image and read that directly
#
# Exits non-zero if any step fails. KEEP_TMP=1 keeps the work directory.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"

if [ -t 1 ]; then B=$'\033[1m' D=$'\033[2m' RED=$'\033[1;31m' GRN=$'\033[1;32m' N=$'\033[0m'
else B='' D='' RED='' GRN='' N=''; fi
n=0
section() {
	n=$((n + 1))
	printf '\n%s== %d. %s ==%s\n' "$B" "$n" "$*" "$N"
}
cmdline() { printf '%s$ %s%s\n' "$D" "$*" "$N"; }
show() {
	cmdline "$*"
	"$@"
}
die() { printf '\n%sdemo failed: %s%s\n' "$RED" "$*" "$N" >&2; exit 1; }

[ -x "$UF2FS" ] || die "$UF2FS is not built (run make)"
for c in "$MKFS_F2FS" "$SLOAD_F2FS" "$FSCK_F2FS" fusermount3 "$PY"; do
	command -v "$c" >/dev/null || die "$c is not installed"
done
[ -c /dev/fuse ] || die "/dev/fuse is missing: FUSE is needed to mount"

tmpdir_init demo
IMG=$TMP/demo.f2fs
SRC=$TMP/sample
MNT=$TMP/mnt
echo "uf2fs demo, working in $TMP"

section "Make a 256 MiB f2fs image"
show truncate -s 256M "$IMG"
# -g android: Android's defaults (quota files, project quota, verity, encrypt)
show "$MKFS_F2FS" -f -q -g android -l uf2fs-demo -O inode_checksum,inode_crtime,sb_checksum \
	"$IMG" >"$TMP/mkfs.log" || die "mkfs.f2fs (log: $TMP/mkfs.log)"

section "Generate a sample tree and load it into the image with sload.f2fs"
show "$PY" "$LIB/gen-tree.py" 2024 "$SRC" --small --selinux "$TMP/file_contexts"
cmdline "$SLOAD_F2FS -f $SRC -P -s $TMP/file_contexts $IMG"
rc=0
"$SLOAD_F2FS" -f "$SRC" -P -s "$TMP/file_contexts" "$IMG" >"$TMP/sload.log" 2>&1 || rc=$?
grep -iE 'not supported|^Error' "$TMP/sload.log" && die "sload.f2fs failed"
# sload 1.15 runs fsck afterwards and exits 1 when that pass adjusted something.
[ $rc -le 1 ] || die "sload.f2fs exited $rc (log: $TMP/sload.log)"
echo "loaded (sload.f2fs log: $TMP/sload.log)"
BEFORE=$(image_sum "$IMG")

section "Inspect the image without mounting: uf2fs info, ls, cat"
show "$UF2FS" info "$IMG" || die "uf2fs info"
echo
show "$UF2FS" ls -l "$IMG" / || die "uf2fs ls"
echo
show "$UF2FS" ls -l "$IMG" /files || die "uf2fs ls"
echo
cmdline "$UF2FS cat $IMG /dirs/big/e0000- | od -c | head -3"
"$UF2FS" cat "$IMG" /dirs/big/e0000- | od -c | head -3

section "Mount it with uf2fs (read-only)"
cmdline "$UF2FS mount $IMG $MNT -o ro"
mkdir -p "$MNT"
"$UF2FS" mount "$IMG" "$MNT" -o ro || die "mount"
_MOUNTS+=("$MNT")
for ((i = 0; i < 100; i++)); do _is_mounted "$MNT" && break; sleep 0.1; done
_is_mounted "$MNT" || die "$MNT did not appear as a mount"
show df -h "$MNT" || true
grep " $(realpath "$MNT") " /proc/self/mountinfo | cut -d' ' -f5- || true

section "List it"
show ls -la "$MNT"
echo
cmdline "(a tree, two levels)"
(cd "$MNT" && find . -mindepth 1 -maxdepth 2 | LC_ALL=C sort | head -60 |
	awk -F/ '{ printf "%*s%s\n", (NF - 2) * 4, "", $NF }')
echo "   ... $(cd "$MNT" && find . | wc -l) entries in all"
echo
cmdline "ls -l $MNT/links | cut -c -100"
ls -l "$MNT/links" | cut -c -100
show stat "$MNT/files/size-65537"
cmdline "python3 -c 'os.getxattr(\"$MNT/xattrs/selinux-300\", \"security.selinux\")'"
"$PY" -c "import os,sys; v=os.getxattr(sys.argv[1],'security.selinux'); print(len(v),'bytes:',v[:40].decode(),'...')" \
	"$MNT/xattrs/selinux-300" || die "getxattr"

section "Read everything back and compare with the source (sha256 of every file)"
owner=()
[ "$(id -u)" = 0 ] || owner=(--no-owner)
cmdline "compare-tree.py $SRC $MNT --sload --no-root"
"$PY" "$LIB/compare-tree.py" "$SRC" "$MNT" --sload --no-root "${owner[@]}" ||
	die "the mount differs from the source"
echo "(compared as sload.f2fs 1.15 stores it: mtime in seconds, 16-bit owners, only"
echo " security.selinux among xattrs, no fifos/sockets/devices)"

section "Cache and I/O statistics of the live mount"
show "$UF2FS" stats "$MNT" || die "uf2fs stats"

section "Unmount, then check the image"
show fusermount3 -u "$MNT"
for ((i = 0; i < 100; i++)); do _is_mounted "$MNT" || break; sleep 0.1; done
_is_mounted "$MNT" && die "still mounted"
AFTER=$(image_sum "$IMG")
if [ "$BEFORE" = "$AFTER" ]; then
	echo "image unchanged: sha256 $AFTER"
else
	die "the image changed during a read-only mount"
fi
cmdline "$FSCK_F2FS -f --dry-run $IMG"
"$FSCK_F2FS" -f --dry-run "$IMG" 2>&1 | grep -E '^\[FSCK\]' || true
fsck_clean "$IMG" 2>/dev/null || die "fsck.f2fs reports errors"

section "Use it read-write: write, fs-verity, quota, stats, uf2fs umount"
cmdline "$UF2FS mount -o rw $IMG $MNT"
"$UF2FS" mount -o rw "$IMG" "$MNT" || die "mount -o rw"
for ((i = 0; i < 100; i++)); do _is_mounted "$MNT" && break; sleep 0.1; done
show mkdir -p "$MNT/app"
show cp -a "$SRC/files" "$MNT/app/files"
show dd if=/dev/urandom of="$MNT/app/base.apk" bs=64k count=40 status=none
show chown -R 10057:10057 "$MNT/app"
if command -v fsverity >/dev/null; then
	show fsverity enable "$MNT/app/base.apk" || die "fsverity enable"
	show fsverity measure "$MNT/app/base.apk" || die "fsverity measure"
	cmdline "lsattr $MNT/app/base.apk"
	lsattr "$MNT/app/base.apk" 2>/dev/null || true
fi
show "$UF2FS" quota -u "$MNT" || die "uf2fs quota"
show "$UF2FS" stats "$MNT" >"$TMP/stats-rw.txt" || die "uf2fs stats"
grep -E '^(writes|  dirty|  blocks written|checkpoint)' "$TMP/stats-rw.txt" | head -8 || true
show "$UF2FS" umount "$MNT" || die "uf2fs umount"
cmdline "$FSCK_F2FS -f --dry-run $IMG"
"$FSCK_F2FS" -f --dry-run "$IMG" 2>&1 | grep -E '^\[FSCK\]|[Qq]uota' || true
fsck_clean "$IMG" 2>/dev/null || die "fsck.f2fs reports errors after the read-write mount"
grep -qiE 'fixing quota|quota.*(error|mismatch)' "$IMG.fsck.log" && die "fsck.f2fs fixed quota"
show "$UF2FS" ls -l "$IMG" /app || die "uf2fs ls"

section "Write it as an Android sparse image, and read that directly"
show "$UF2FS" simg "$IMG" "$TMP/demo.simg" || die "uf2fs simg"
show ls -ls "$IMG" "$TMP/demo.simg"
show "$UF2FS" info "$TMP/demo.simg" >/dev/null || die "uf2fs info on the sparse image"
cmdline "$UF2FS cat $TMP/demo.simg /app/base.apk | cmp - (the raw image's)"
cmp <("$UF2FS" cat "$TMP/demo.simg" /app/base.apk) <("$UF2FS" cat "$IMG" /app/base.apk) ||
	die "the sparse image reads differently"
echo "identical"

printf '\n%sdemo complete: every step passed%s\n' "$GRN" "$N"
