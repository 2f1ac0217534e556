#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Compat, read-write, both directions, against the real Linux f2fs in QEMU.
#
# One deterministic tree recipe (build.sh below, POSIX sh + the guest helper
# `gh`) and one recipe of changes (modify.sh: appends, overwrites, inline
# growth, truncates, renames of files and directories, rm of files and whole
# subtrees, new directories, links, symlinks, special files, xattrs, chmod,
# chown, fallocate, punch, a default ACL inherited by a file and directories,
# chmod of a file with an access ACL). Every tree is also built on the host,
# on the host's own filesystem (REF), with the same recipes; `gh settimes`
# then gives every entry a deterministic mtime, so that manifests compare
# exactly.
#
# (a) uf2fs -> Linux: on fresh images of several mkfs feature sets, build.sh
#     and modify.sh run through `uf2fs mount -o rw` (FUSE); unmount; fsck.f2fs
#     clean. The guest mounts each image, writes its manifest (sha256, type,
#     mode, uid, gid, size, mtime, link target, nlink, rdev, xattrs), which must
#     equal REF's (inode numbers and directory sizes aside, which differ
#     between filesystems) and equal uf2fs's own view (a manifest of the
#     read-only FUSE mount, every field including inode numbers and directory
#     sizes). Then Linux writes (new files, rm -rf of a uf2fs-made subtree, a
#     rename), unmounts; fsck.f2fs is clean and uf2fs reads Linux's changes.
# (b) Linux -> uf2fs -> Linux: the guest builds the tree with build.sh on fresh
#     images (manifest 1 must equal REF's, and uf2fs must read exactly it);
#     uf2fs applies modify.sh read-write; fsck.f2fs is clean; a second guest
#     boot's manifest must equal REF's (after the same changes) and uf2fs's
#     view. Kernel f2fs errors in dmesg fail the test in both directions.
#
# Env: BUILD, UF2FS, TOP (from make check); RW_LINUX_FEATURES="a;b" (feature
# sets, ';'-separated; "none" for mkfs defaults); KEEP_TMP=1.
set -euo pipefail
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$TOP"
. tests/lib/common.sh
. tests/compat/qemu.sh

if ! why=$(qemu_missing); then skip "$why"; fi
need_fuse
need_f2fs_tools
need_uf2fs
need_cmd "$PY" gcc setfattr

SETS=${RW_LINUX_FEATURES:-"extra_attr,inode_checksum,inode_crtime;none;extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime"}
IFS=';' read -r -a FEATS <<< "$SETS"
[ ${#FEATS[@]} -le 3 ] || fail "at most 3 feature sets (guest disks vda, vdc, vdd)"
DEVS=(vda vdc vdd)
TMO=${RW_LINUX_TIMEOUT:-600}
VERIFY=("$PY" "$TOP/tests/compat/verify-tree.py")
TIME_A=1500000000
TIME_B=1600000000

tmpdir_init rw-linux
GHDIR=$TMP/gh
mkdir -p "$GHDIR" "$TMP/in"
gcc -O2 -Wall -o "$GHDIR/gh" tests/compat/guest-helper.c || fail "cannot build guest-helper.c"
export PATH=$GHDIR:$PATH

# ------------------------------------------------------------------ recipes

cat > "$TMP/in/build.sh" <<'EOF'
# build.sh ROOT: the base tree. POSIX sh; runs in the guest (busybox) and on the host.
set -e
R=$1
long() { head -c "$1" /dev/zero | tr '\0' "$2"; }
mkdir -p "$R/files" "$R/dirs/big" "$R/dirs/inline" "$R/dirs/empty" "$R/links" "$R/special" \
	"$R/sparse" "$R/xattrs" "$R/modes" "$R/owners" "$R/names"
gh gen "$R/files/empty" 0 1 rand
for s in 1 100 3000 3451 3452 3453 3488 3489 4095 4096 4097 8191 65536 65537 1000001; do
	gh gen "$R/files/f$s" $s $s rand
done
gh gen "$R/files/text" 300000 5 text
gh gen "$R/files/big" 3000000 6 rand
gh gen "$R/files/runs" 200000 7 runs
gh mkfiles "$R/dirs/big" 700 8
gh mkfiles "$R/dirs/inline" 25 9
gh gen "$R/sparse/island" 4096 10 rand 4000000
gh gen "$R/sparse/head-hole" 5000 11 rand 1000000
gh gen "$R/sparse/two" 3000 12 rand
gh gen "$R/sparse/two" 3000 13 rand 3000000
gh fallocate "$R/sparse/prealloc" 0 1000000
gh gen "$R/sparse/keep" 10000 14 rand
gh fallocate "$R/sparse/keep" 0 500000 keep
gh gen "$R/sparse/punched" 300000 15 rand
gh punch "$R/sparse/punched" 10000 100000
ln -s ../files/f100 "$R/links/rel"
ln -s /etc/passwd "$R/links/abs"
ln -s "$(long 3000 a)" "$R/links/long3000"
ln -s "$(long 4000 b)" "$R/links/long4000"
ln -s nowhere "$R/links/dangling"
ln "$R/files/f100" "$R/links/hard-f100"
ln "$R/files/f100" "$R/dirs/hard-f100-2"
mkfifo "$R/special/fifo"
ln "$R/special/fifo" "$R/special/fifo-link"
mknod "$R/special/chr" c 1 3
mknod "$R/special/chr-big" c 300 70000
mknod "$R/special/blk" b 8 1
d="$R/deep"
for i in $(seq 1 40); do d="$d/d$i"; done
mkdir -p "$d"
gh gen "$d/leaf" 100 16 text
gh gen "$R/xattrs/f" 10 17 text
gh setxattr "$R/xattrs/f" user.a hello
gh setxattr "$R/xattrs/f" user.bin hex:00ff10
gh setxattr "$R/xattrs/f" user.big gen:1500:3
gh setxattr "$R/xattrs/f" trusted.t value
gh setxattr "$R/xattrs/f" user.empty ""
gh setxattr "$R/xattrs" user.dir "on a dir"
gh gen "$R/xattrs/acl" 10 18 text
gh acl "$R/xattrs/acl" access
gh gen "$R/modes/m0" 1 19 text
chmod 0 "$R/modes/m0"
gh gen "$R/modes/suid" 1 20 text
chmod 4755 "$R/modes/suid"
gh gen "$R/modes/sgid" 1 21 text
chmod 2711 "$R/modes/sgid"
mkdir "$R/modes/sticky"
chmod 1777 "$R/modes/sticky"
gh gen "$R/owners/o1" 1 22 text
chown 1000:2000 "$R/owners/o1"
gh gen "$R/owners/o2" 1 23 text
chown 4000000000:4000000001 "$R/owners/o2"
mkdir "$R/owners/d"
chown 65534:65534 "$R/owners/d"
gh gen "$R/names/$(long 255 n)" 7 24 text
gh gen "$R/names/héllo wörld ✓" 7 25 text
gh gen "$R/names/tab	here" 7 26 text
EOF

cat > "$TMP/in/modify.sh" <<'EOF'
# modify.sh ROOT: changes made through uf2fs (and on the host reference).
set -e
R=$1
size() { stat -c %s "$1"; }
gh gen "$R/files/f1000001" 777777 31 rand "$(size "$R/files/f1000001")"
gh gen "$R/files/big" 5000 32 rand 100000
gh gen "$R/files/f3000" 1000 33 rand 3000
gh gen "$R/files/f3451" 10 34 rand 1000
gh gen "$R/files/f100" 50 35 rand 100
truncate -s 12345 "$R/files/text"
truncate -s 1500000 "$R/files/runs"
truncate -s 0 "$R/files/f65537"
gh gen "$R/files/f65537" 100 36 rand 200000
mv "$R/files/f4096" "$R/dirs/moved-f4096"
mv "$R/dirs/inline" "$R/moved-inline-dir"
mv "$R/files/f65536" "$R/files/f65537"
mv "$R/links/long3000" "$R/dirs/long3000-moved"
rm "$R/files/f8191" "$R/links/hard-f100"
rm -rf "$R/dirs/big"
rm -rf "$R/deep/d1/d2/d3/d4"
rmdir "$R/dirs/empty"
mkdir -p "$R/new/a/b" "$R/new/c"
gh mkfiles "$R/new/a" 300 40
gh gen "$R/new/a/b/file" 100000 41 rand
gh gen "$R/new/c/inline" 2000 42 rand
ln -s ../files/big "$R/new/sym"
ln "$R/files/big" "$R/new/big-link"
mkfifo "$R/new/fifo2"
mknod "$R/new/blk2" b 259 1
gh setxattr "$R/xattrs/f" user.a changed
setfattr -x user.bin "$R/xattrs/f"
gh setxattr "$R/new/c/inline" user.new "$(head -c 600 /dev/zero | tr '\0' v)"
chmod 0700 "$R/modes/m0"
chown 5:6 "$R/owners/o1"
gh punch "$R/files/big" 1000000 1500000
gh fallocate "$R/files/f1" 0 100000 keep
gh fallocate "$R/files/f4097" 0 50000
mkdir "$R/acl-inherit"
gh acl "$R/acl-inherit" default
gh gen "$R/acl-inherit/file" 10 43 text
mkdir "$R/acl-inherit/sub"
mkdir "$R/acl-inherit/sub/deeper"
chmod 0640 "$R/xattrs/acl"
EOF

# Linux's own changes to an image uf2fs wrote (run in the guest, and on the host REF)
cat > "$TMP/in/linux.sh" <<'EOF'
set -e
R=$1
mkdir "$R/linux-was-here"
gh gen "$R/linux-was-here/f" 100000 99 rand
rm -rf "$R/new/a"
mv "$R/files/big" "$R/linux-was-here/big"
gh gen "$R/files/f3453" 5000 98 rand 3453
EOF

# ------------------------------------------------------------------ helpers

# settimes ROOT BASE: gh settimes, then fixed times for the hard-linked files
# (settimes gives each path its own time, so the last name visited would win,
# and readdir orders differ between filesystems)
settimes() {
	local p
	gh settimes "$1" "$2" || fail "gh settimes $1"
	for p in files/f100 special/fifo files/big; do
		[ -e "$1/$p" ] || [ -p "$1/$p" ] || continue
		gh utime "$1/$p" 1555555555 123456789 || fail "gh utime $1/$p"
	done
}

# manifest ROOT PREFIX: PREFIX.manifest, PREFIX.xattrs (host side)
manifest() {
	gh manifest "$1" "$2.manifest" "$2.xattrs" "$2.info" || fail "gh manifest $1"
}

# same_manifest WHAT EXPECTED_PREFIX GOT_PREFIX [verify-tree options]
same_manifest() {
	local what=$1 a=$2 b=$3 out
	shift 3
	if out=$("${VERIFY[@]}" "$@" "$a.manifest" "$a.xattrs" --manifest "$b.manifest" "$b.xattrs" 2>&1); then
		log "$what: $(printf '%s\n' "$out" | tail -1)"
	else
		printf '%s\n' "$out" | head -40 >&2
		fail "$what: manifests differ"
	fi
}

# The guest's kernel log must hold no f2fs complaint.
check_dmesg() {
	local f=$1 bad
	bad=$(grep -iE 'f2fs.*(error|inconsist|corrupt|fsck|invalid|bad |mismatch|fail)' "$f" || true)
	[ -z "$bad" ] || { printf '%s\n' "$bad" | head -20 >&2; fail "kernel f2fs messages in $f"; }
}

# run_guest NAME BODY: BODY runs per disk with $D (device) and $O (output dir).
run_guest() {
	local name=$1 body=$2 i extra=()
	{
		echo 'rc=0'
		echo 'mkdir -p /tmp/out'
		for i in "${!FEATS[@]}"; do
			echo "D=${DEVS[$i]}; O=/tmp/out/\$D; mkdir -p \$O /mnt/\$D"
			echo "if mount -t f2fs /dev/\$D /mnt/\$D; then"
			echo "$body"
			echo "  cd /; umount /mnt/\$D || { echo \"GUEST: umount \$D failed\"; rc=1; }"
			echo "else echo \"GUEST: mount \$D failed\"; rc=1; fi"
		done
		echo 'dmesg > /tmp/out/dmesg'
		echo 'tar cf - -C /tmp/out . | dd of=/dev/vdb bs=65536 conv=fsync 2>/dev/null'
		echo 'exit $rc'
	} > "$TMP/$name.sh"
	for i in "${!FEATS[@]}"; do
		[ "$i" = 0 ] || extra+=("${IMGS[$i]}")
	done
	rm -f "$TMP/$name.out"
	local t0=$SECONDS
	QEMU_IN=$TMP/in QEMU_EXTRA="${extra[*]}" qemu_run "${IMGS[0]}" "$TMP/$name.sh" "$TMP/$name.out" "$TMO" \
		> "$TMP/$name.console" || { tail -30 "$TMP/$name.console" >&2; fail "guest run $name failed"; }
	log "guest $name: $((SECONDS - t0))s"
	rm -rf "$TMP/$name.d"
	mkdir -p "$TMP/$name.d"
	tar xf "$TMP/$name.out" -C "$TMP/$name.d" || fail "no output from guest run $name"
	check_dmesg "$TMP/$name.d/dmesg"
	if grep -q '^GUEST:' "$TMP/$name.console"; then
		grep '^GUEST:' "$TMP/$name.console" >&2
		fail "guest run $name reported errors"
	fi
}

mkimg() {	# mkimg IMG FEATURES
	local f=$2
	[ "$f" = none ] && f=""
	mk_image "$1" 512M "$f" "" || fail "mkfs $1"
}

# ------------------------------------------------------------------ (a) uf2fs -> Linux

step "(a) uf2fs writes, Linux reads"
IMGS=()
for i in "${!FEATS[@]}"; do
	IMGS+=("$TMP/a$i.img")
	mkimg "${IMGS[$i]}" "${FEATS[$i]}"
done
REF=$TMP/ref-a
mkdir -p "$REF"
sh "$TMP/in/build.sh" "$REF" || fail "build.sh on the host reference"
sh "$TMP/in/modify.sh" "$REF" || fail "modify.sh on the host reference"
settimes "$REF" $TIME_A
manifest "$REF" "$TMP/ref-a"
for i in "${!FEATS[@]}"; do
	img=${IMGS[$i]} M=$TMP/mnt-a$i
	log "image a$i: mkfs -O ${FEATS[$i]}"
	mount_uf2fs "$img" "$M" rw || fail "uf2fs mount -o rw a$i"
	sh "$TMP/in/build.sh" "$M" || fail "build.sh through uf2fs (a$i)"
	sh "$TMP/in/modify.sh" "$M" || fail "modify.sh through uf2fs (a$i)"
	settimes "$M" $TIME_A
	umount_uf2fs "$M" || fail "unmount a$i"
	fsck_clean "$img" || fail "fsck.f2fs after uf2fs wrote a$i"
	mount_uf2fs "$img" "$M" ro || fail "uf2fs mount -o ro a$i"
	manifest "$M" "$TMP/uf2fs-a$i"
	umount_uf2fs "$M" || fail "unmount a$i"
	same_manifest "a$i: uf2fs view vs host reference" "$TMP/ref-a" "$TMP/uf2fs-a$i" --ignore ino,dirsize
done
run_guest guest-a '  gh manifest /mnt/$D $O/m $O/x $O/i || rc=1
  sh /in/linux.sh /mnt/$D || { echo "GUEST: linux.sh on $D failed"; rc=1; }'
sh "$TMP/in/linux.sh" "$REF" || fail "linux.sh on the host reference"
for i in "${!FEATS[@]}"; do
	g=$TMP/guest-a.d/${DEVS[$i]}
	mv "$g/m" "$g/m.manifest"; mv "$g/x" "$g/m.xattrs"
	same_manifest "a$i: Linux reads uf2fs's image = host reference" "$TMP/ref-a" "$g/m" \
		--ignore ino,dirsize
	same_manifest "a$i: Linux's view = uf2fs's view, every field" "$TMP/uf2fs-a$i" "$g/m" --ino
	fsck_clean "${IMGS[$i]}" || fail "fsck.f2fs after Linux wrote to a$i"
	M=$TMP/mnt-a$i
	mount_uf2fs "${IMGS[$i]}" "$M" ro || fail "uf2fs mount after Linux wrote (a$i)"
	compare_tree "$REF" "$M" --no-times ||
		fail "a$i: uf2fs does not read Linux's changes as the reference has them"
	umount_uf2fs "$M" || fail "unmount a$i"
done

# ------------------------------------------------------------------ (b) Linux -> uf2fs -> Linux

step "(b) Linux writes, uf2fs changes, Linux checks"
IMGS=()
for i in "${!FEATS[@]}"; do
	IMGS+=("$TMP/b$i.img")
	mkimg "${IMGS[$i]}" "${FEATS[$i]}"
done
REF=$TMP/ref-b
mkdir -p "$REF"
sh "$TMP/in/build.sh" "$REF" || fail "build.sh on the host reference"
settimes "$REF" $TIME_A
manifest "$REF" "$TMP/ref-b1"
run_guest guest-b1 '  sh /in/build.sh /mnt/$D || { echo "GUEST: build.sh on $D failed"; rc=1; }
  gh settimes /mnt/$D '$TIME_A'
  gh utime /mnt/$D/files/f100 1555555555 123456789
  gh utime /mnt/$D/special/fifo 1555555555 123456789
  gh utime /mnt/$D/files/big 1555555555 123456789
  gh manifest /mnt/$D $O/m $O/x $O/i || rc=1'
sh "$TMP/in/modify.sh" "$REF" || fail "modify.sh on the host reference"
settimes "$REF" $TIME_B
manifest "$REF" "$TMP/ref-b2"
for i in "${!FEATS[@]}"; do
	img=${IMGS[$i]} M=$TMP/mnt-b$i g=$TMP/guest-b1.d/${DEVS[$i]}
	mv "$g/m" "$g/m.manifest"; mv "$g/x" "$g/m.xattrs"
	same_manifest "b$i: Linux's tree = host reference (harness check)" "$TMP/ref-b1" "$g/m" \
		--ignore ino,dirsize
	fsck_clean "$img" || fail "fsck.f2fs of Linux's image b$i"
	mount_uf2fs "$img" "$M" ro || fail "uf2fs mount -o ro b$i"
	manifest "$M" "$TMP/uf2fs-b1-$i"
	umount_uf2fs "$M" || fail "unmount b$i"
	same_manifest "b$i: uf2fs reads Linux's tree, every field" "$g/m" "$TMP/uf2fs-b1-$i" --ino
	mount_uf2fs "$img" "$M" rw || fail "uf2fs mount -o rw b$i"
	sh "$TMP/in/modify.sh" "$M" || fail "modify.sh through uf2fs (b$i)"
	settimes "$M" $TIME_B
	umount_uf2fs "$M" || fail "unmount b$i"
	fsck_clean "$img" || fail "fsck.f2fs after uf2fs changed Linux's image b$i"
	mount_uf2fs "$img" "$M" ro || fail "uf2fs mount -o ro b$i"
	manifest "$M" "$TMP/uf2fs-b2-$i"
	umount_uf2fs "$M" || fail "unmount b$i"
	same_manifest "b$i: uf2fs's changes = host reference" "$TMP/ref-b2" "$TMP/uf2fs-b2-$i" \
		--ignore ino,dirsize
done
run_guest guest-b2 '  gh manifest /mnt/$D $O/m $O/x $O/i || rc=1'
for i in "${!FEATS[@]}"; do
	g=$TMP/guest-b2.d/${DEVS[$i]}
	mv "$g/m" "$g/m.manifest"; mv "$g/x" "$g/m.xattrs"
	same_manifest "b$i: Linux reads uf2fs's changes = host reference" "$TMP/ref-b2" "$g/m" \
		--ignore ino,dirsize
	same_manifest "b$i: Linux's view = uf2fs's view, every field" "$TMP/uf2fs-b2-$i" "$g/m" --ino
	fsck_clean "${IMGS[$i]}" || fail "fsck.f2fs after the second guest mount of b$i"
done
pass "uf2fs <-> Linux f2fs, read-write, both directions"
