#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Writing through a read-write FUSE mount (`uf2fs mount IMG MNT -o rw`) with
# ordinary tools, then unmount, fsck.f2fs -f, remount read-only and compare.
#
#  1. cp -a of a generated tree (tests/lib/gen-tree.py --full: boundary sizes,
#     sparse files, 3000-entry dirs, long symlinks, hard links, special files,
#     modes, owners, times, xattrs and ACLs) into the mount; compared with the
#     source by compare-tree.py with every attribute, mtimes included.
#  2. Every later change is made twice, to the mount and to a reference tree on
#     the host, by the same command: mkdir -p of a deep path, thousands of
#     small files, a large file by dd, sparse files by truncate + dd seek,
#     appends, overwrites in the middle, truncates, fallocate (keep size,
#     punch, zero range), hard links, symlinks, mkfifo/mknod, chmod, chown,
#     touch -d, setfattr, renames of files and directories, rm of files and
#     of whole subtrees. The mount must equal the reference (no times: the two
#     trees are changed at different moments; touch -d times are checked).
#  3. Unmount: the daemon must exit 0; fsck.f2fs -f must be clean; remount
#     read-only and compare both parts again; a read-write remount appends,
#     and that survives another unmount and fsck.
#
# Env: FEATURES (mkfs.f2fs -O list), RW_FUSE_SMALL=1 (gen-tree --small).
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

need_fuse
need_f2fs_tools
need_uf2fs
need_cmd "$PY" dd truncate sha256sum

FEATURES=${FEATURES:-extra_attr,inode_checksum,inode_crtime}
tmpdir_init rw-fuse
IMG=$TMP/rw.img
MNT=$TMP/mnt
SRC=$TMP/src
REF=$TMP/ref
ROOT=0; [ "$(id -u)" = 0 ] && ROOT=1
owner_opts=(); [ $ROOT = 1 ] || owner_opts=(--no-owner)

step "image and source tree"
mk_image "$IMG" 1G "$FEATURES" ""
gen_tree 11 "$SRC" $([ "${RW_FUSE_SMALL:-0}" = 1 ] && echo --small || echo --full) --quiet

step "mount read-write"
mount_uf2fs "$IMG" "$MNT" rw || fail "mount -o rw failed"
touch "$MNT/.probe" 2>/dev/null || skip "uf2fs mount -o rw is not writable yet"
rm -f "$MNT/.probe"

# 1. cp -a, compared with every attribute
step "cp -a of the generated tree"
t0=$SECONDS
cp -a "$SRC" "$MNT/tree" || fail "cp -a into the mount failed"
log "cp -a took $((SECONDS - t0))s"
xattr_opts=()
if ! command -v setfattr >/dev/null; then
	xattr_opts=(--no-xattr)
	log "note: setfattr not installed; xattrs are not compared"
fi
compare_tree "$SRC" "$MNT/tree" "${owner_opts[@]}" "${xattr_opts[@]}" ||
	fail "the copied tree differs from the source (live mount)"

# 2. The same changes to the mount and to the reference
mkdir -p "$REF"
# both 'CMD with {} for the root': run it on both trees; both must agree on success
both() {
	local cmd=$1 r1=0 r2=0
	(cd "$MNT/work" && eval "${cmd//\{\}/$MNT/work}") || r1=$?
	(cd "$REF" && eval "${cmd//\{\}/$REF}") || r2=$?
	if [ $r1 -ne $r2 ]; then
		fail "'$cmd': exit $r1 on the mount, $r2 on the reference"
	fi
	[ $r1 -eq 0 ] || fail "'$cmd' failed on both ($r1)"
}
mkdir "$MNT/work"
# step with the elapsed time
step() { echo; echo "=== $* (t=${SECONDS}s) ==="; }

step "deep paths"
deep=$(printf 'level%02d/' $(seq 1 60))
both 'mkdir -p {}/'"$deep"'end'
both 'echo bottom > {}/'"$deep"'end/file'

step "thousands of small files"
both 'for d in $(seq 0 29); do mkdir {}/small$d; for i in $(seq 0 99); do
	printf "file %d in %d, %0*d\n" $i $d $((i * 7 % 300)) 0 > {}/small$d/f$i; done; done'

step "large file with dd, appends, overwrites, truncates"
head -c $((24 << 20)) /dev/urandom > "$TMP/rand48"
both 'dd if='"$TMP"'/rand48 of={}/big bs=1M status=none'
both 'dd if='"$TMP"'/rand48 of={}/big bs=4096 skip=100 seek=3000 count=17 conv=notrunc status=none'
both 'dd if='"$TMP"'/rand48 of={}/big bs=1 skip=5 seek=1000001 count=9999 conv=notrunc status=none'
both 'head -c 123457 '"$TMP"'/rand48 >> {}/big'
both 'cp {}/big {}/big2 && truncate -s 12345678 {}/big2 && truncate -s 20000000 {}/big2'
both 'head -c 3000 '"$TMP"'/rand48 > {}/inline && head -c 2000 '"$TMP"'/rand48 >> {}/inline'
both 'head -c 100 '"$TMP"'/rand48 > {}/grow && truncate -s 1000000 {}/grow && echo tail >> {}/grow'

step "sparse files"
# (kept small: every comparison reads the holes through FUSE; test_rw_api
# covers offsets up to TiBs)
both 'truncate -s 40M {}/sparse1 && dd if='"$TMP"'/rand48 of={}/sparse1 bs=4096 count=3 seek=8000 conv=notrunc status=none'
both 'dd if='"$TMP"'/rand48 of={}/sparse2 bs=1M count=1 seek=20 status=none'
both 'truncate -s 64M {}/sparse3 && echo end >> {}/sparse3'

if command -v fallocate >/dev/null && fallocate -l 4096 "$MNT/work/.fa" 2>/dev/null; then
	rm -f "$MNT/work/.fa"
	step "fallocate"
	both 'cp {}/big {}/fa && fallocate -n -l 40M {}/fa'
	both 'fallocate -p -o 12345 -l 1000000 {}/fa'
	both 'fallocate -z -o 2000000 -l 77777 {}/fa'
	both 'fallocate -l 5M {}/fa-new'
else
	log "note: fallocate(1) missing or unsupported on the mount; skipped"
fi

step "hard links, symlinks, special files"
both 'ln {}/big {}/big-link && mkdir {}/links && ln {}/big {}/links/big-link2 && ln {}/small3/f7 {}/links/f7'
both 'ln -s big {}/sym-short && ln -s '"$(printf 'x%.0s' $(seq 1 3000))"' {}/sym-3000'
both 'ln -s ../small1/f1 {}/links/rel && ln -s /no/such/target {}/links/dangling'
both 'mkfifo {}/fifo'
if [ $ROOT = 1 ]; then
	both 'mknod {}/chr c 1 3 && mknod {}/blk b 259 70000'
fi

step "chmod, chown, touch -d"
both 'chmod 4751 {}/inline && chmod 0 {}/grow && chmod 1777 {}/links && chmod 2750 {}/small5'
if [ $ROOT = 1 ]; then
	both 'chown 1234:5678 {}/inline && chown 4000000000:7 {}/small4/f1 && chown -h 99:98 {}/sym-short'
fi
both 'touch -d "2001-02-03 04:05:06.789" {}/small2/f2 && touch -d "1969-12-31 23:59:58" {}/small2/f3'
both 'touch -m -d "2100-01-01 00:00:00" {}/big2'

xattrs_ok=0
if command -v setfattr >/dev/null && setfattr -n user.probe -v 1 "$MNT/work/inline" 2>/dev/null; then
	xattrs_ok=1
	step "xattrs"
	both 'setfattr -x user.probe {}/inline 2>/dev/null || true'
	both 'setfattr -n user.a -v hello {}/inline && setfattr -n user.b -v 0x00ff {}/small1/f1'
	both 'setfattr -n user.big -v '"$(printf 'v%.0s' $(seq 1 1500))"' {}/small1/f2'
	both 'setfattr -n user.dir -v ondir {}/small6 && setfattr -x user.a {}/inline'
else
	log "note: setfattr missing or xattrs not writable on the mount; xattr part skipped"
fi

step "renames and deletions"
both 'mv {}/small7 {}/small8/moved-dir && mv {}/small9/f1 {}/small10/f1-moved'
both 'mv {}/small11/f2 {}/small11/f3'	# over an existing file
both 'mv {}/big2 {}/links/big2-moved && mv {}/fifo {}/links/fifo-moved'
both 'rm -rf {}/small12 {}/small13 && rm {}/big-link'
both 'for i in $(seq 0 3 99); do rm {}/small14/f$i; done'
both 'mkdir {}/empty && mv {}/small15 {}/empty/full && rmdir {}/small16 2>/dev/null || true'
both 'mv {}/'"${deep%%/*}"' {}/small0/deep-moved'
both 'rm -rf {}/small17 && mkdir {}/small17 && echo again > {}/small17/f0'

cmp_opts=(--no-times "${owner_opts[@]}")
[ $xattrs_ok = 1 ] || cmp_opts+=(--no-xattr)
check_work() {
	compare_tree "$REF" "$MNT/work" "${cmp_opts[@]}" ||
		fail "the mount differs from the reference ($1)"
	local f want got
	for f in small2/f2 small2/f3 links/big2-moved; do
		want=$(stat -c %y "$REF/$f")
		got=$(stat -c %y "$MNT/work/$f")
		[ "$want" = "$got" ] || fail "$f: mtime $got, want $want ($1)"
	done
}
step "compare (live mount)"
check_work "live mount"

step "unmount, fsck, read-only remount"
umount_uf2fs "$MNT" || fail "unmount failed (daemon status)"
fsck_clean "$IMG" || fail "fsck.f2fs is not clean after the read-write session"
mount_uf2fs "$IMG" "$MNT" ro || fail "read-only remount failed"
compare_tree "$SRC" "$MNT/tree" "${owner_opts[@]}" "${xattr_opts[@]}" ||
	fail "the copied tree differs from the source after remount"
check_work "read-only remount"
umount_uf2fs "$MNT" || fail "unmount (ro) failed"

step "read-write remount: more changes, unmount, fsck"
mount_uf2fs "$IMG" "$MNT" rw || fail "read-write remount failed"
both 'head -c 777777 '"$TMP"'/rand48 >> {}/big && rm -rf {}/small18 && mkdir -p {}/after/remount'
both 'mv {}/small19 {}/after/remount/ && ln -s after {}/after-link'
check_work "second read-write session"
umount_uf2fs "$MNT" || fail "second unmount failed"
fsck_clean "$IMG" || fail "fsck.f2fs is not clean after the second session"
mount_uf2fs "$IMG" "$MNT" ro || fail "second read-only remount failed"
check_work "second read-only remount"
umount_uf2fs "$MNT" || fail "unmount failed"
pass "write through FUSE, fsck clean, read back"
