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
# (c) Compressed files, both directions, on "-O extra_attr,compression" images
#     with lz4, zstd (a level, a checksum), lzo and lzo-rle: a recipe (cbuild.sh:
#     a +c directory, compress_extension files, chattr +c on an empty file;
#     text, random, zeros, runs, mixed, sparse; every cluster boundary) and its
#     changes (cmodify.sh: overwrites inside and across clusters, appends,
#     truncation inside a cluster, growth past a cut, new files, a removal).
#     uf2fs -> Linux: uf2fs writes both, in two mounts so that the changes
#     rewrite clusters from disk; Linux must read exactly the host reference,
#     report compressed blocks (F2FS_IOC_GET_COMPRESS_BLOCKS) where the data
#     compresses, show the flags uf2fs shows, and then change uf2fs's clusters
#     itself (clinux.sh), after which fsck and uf2fs agree. Linux -> uf2fs ->
#     Linux: the guest builds, uf2fs changes Linux's clusters, and a second
#     boot must read the reference and uf2fs's view.
#
# Env: BUILD, UF2FS, TOP (from make check); RW_LINUX_FEATURES="a;b" (feature
# sets, ';'-separated; "none" for mkfs defaults); RW_LINUX_PARTS (default
# "ab c": the plain sections (a) and (b), and the compression section (c));
# KEEP_TMP=1.
set -euo pipefail
. "$(dirname "$0")/compat-lib.sh"
need_cmd "$PY" gcc setfattr

SETS=${RW_LINUX_FEATURES:-"extra_attr,inode_checksum,inode_crtime;none;extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime"}
IFS=';' read -r -a FEATS <<< "$SETS"
[ ${#FEATS[@]} -le 3 ] || fail "at most 3 feature sets (guest disks vda, vdc, vdd)"
DEVS=(vda vdc vdd vde)
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

# The compressed tree. ".dat" names match compress_extension=dat; cdir is +c.
# With a second argument (the host reference) the inode flags are left alone.
cat > "$TMP/in/cbuild.sh" <<'EOF'
set -e
R=$1
HOST=${2:-}
flags() { [ -n "$HOST" ] || gh flags "$@" >/dev/null; }
mkdir -p "$R/c" "$R/cdir" "$R/plain"
flags "$R/cdir" +c
for s in 1 4095 4096 4097 16384 16385 65536 65537 1000000; do
	gh gen "$R/c/text-$s.dat" $s $s text
	gh gen "$R/c/rand-$s.dat" $s $((s + 1)) rand
done
gh gen "$R/c/zero.dat" 1048576 0 zero
gh gen "$R/c/runs.dat" 2097152 3 runs
gh gen "$R/c/mixed.dat" 524288 4 text
gh gen "$R/c/mixed.dat" 131072 5 rand 524288
gh gen "$R/c/mixed.dat" 393216 6 text 655360
gh gen "$R/c/sparse.dat" 65536 7 text
gh gen "$R/c/sparse.dat" 65536 8 text 3000000
gh gen "$R/cdir/inherit.bin" 300000 9 text
mkdir "$R/cdir/sub"
gh gen "$R/cdir/sub/deep.bin" 200000 10 text
: > "$R/plain/chattr.bin"
flags "$R/plain/chattr.bin" +c
gh gen "$R/plain/chattr.bin" 400000 11 text
gh gen "$R/plain/plain.txt" 200000 12 text
gh gen "$R/c/released.dat" 300000 13 text
EOF

cat > "$TMP/in/cmodify.sh" <<'EOF'
set -e
R=$1
gh gen "$R/c/text-1000000.dat" 3000 20 rand 5000
gh gen "$R/c/text-1000000.dat" 100000 21 text 400001
gh gen "$R/c/rand-1000000.dat" 50000 22 text 100000
gh gen "$R/c/mixed.dat" 70000 23 text 1048576
gh gen "$R/c/text-16385.dat" 1 24 rand 16384
gh gen "$R/c/text-4095.dat" 20000 25 text 4095
truncate -s 300001 "$R/c/runs.dat"
truncate -s 500000 "$R/c/zero.dat"
gh gen "$R/c/zero.dat" 10 26 text 700000
truncate -s 65536 "$R/cdir/inherit.bin"
gh gen "$R/cdir/inherit.bin" 5000 27 text 65536
truncate -s 123457 "$R/cdir/sub/deep.bin"
gh gen "$R/plain/chattr.bin" 16384 28 rand 16384
rm "$R/c/text-4096.dat"
gh gen "$R/c/new.dat" 250000 29 text
gh gen "$R/cdir/new.bin" 250000 30 text
mkdir "$R/cdir/newdir"
gh gen "$R/cdir/newdir/f" 100000 31 text
EOF

# Linux's own changes to compressed files uf2fs wrote.
cat > "$TMP/in/clinux.sh" <<'EOF'
set -e
R=$1
gh gen "$R/c/text-1000000.dat" 10000 40 text 200000
gh gen "$R/c/mixed.dat" 8192 41 rand 0
gh gen "$R/cdir/new.bin" 30000 42 text 250000
truncate -s 100000 "$R/plain/chattr.bin"
gh gen "$R/cdir/linux.bin" 150000 43 text
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

# run_guest NAME BODY: BODY runs per image of IMGS (as DEVS), mounted with its
# MOUNT_OPTS (if any), with $D (device), $O (output dir) and $M (mount point).
# A manifest the body leaves as $O/m and $O/x becomes .../m.manifest, m.xattrs.
run_guest() {
	local name=$1 body=$2 i g o extra=()
	{
		echo 'rc=0'
		echo 'mkdir -p /tmp/out'
		for i in "${!IMGS[@]}"; do
			o=${MOUNT_OPTS[$i]:-}
			echo "D=${DEVS[$i]}; O=/tmp/out/\$D; M=/mnt/\$D; mkdir -p \$O \$M"
			echo "if mount -t f2fs ${o:+-o $o }/dev/\$D \$M; then"
			echo "$body"
			echo "  cd /; umount \$M || { echo \"GUEST: umount \$D failed\"; rc=1; }"
			echo "else echo \"GUEST: mount \$D failed\"; rc=1; fi"
		done
		echo 'dmesg > /tmp/out/dmesg'
		echo 'tar cf - -C /tmp/out . | dd of=/dev/vdb bs=65536 conv=fsync 2>/dev/null'
		echo 'exit $rc'
	} > "$TMP/$name.sh"
	for i in "${!IMGS[@]}"; do
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
	grep ' compressed blocks ' "$TMP/$name.console" >&2 || true
	if grep -q '^GUEST:' "$TMP/$name.console"; then
		grep '^GUEST:' "$TMP/$name.console" >&2
		fail "guest run $name reported errors"
	fi
	for i in "${!IMGS[@]}"; do
		g=$TMP/$name.d/${DEVS[$i]}
		[ -f "$g/m" ] || continue
		mv "$g/m" "$g/m.manifest"; mv "$g/x" "$g/m.xattrs"
	done
}

mkimg() {	# mkimg IMG FEATURES
	local f=$2
	[ "$f" = none ] && f=""
	mk_image "$1" 512M "$f" "" || fail "mkfs $1"
}

PARTS=${RW_LINUX_PARTS:-"ab c"}
want() { [[ " $PARTS " == *" $1 "* ]]; }

if want ab; then
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
	same_manifest "b$i: Linux reads uf2fs's changes = host reference" "$TMP/ref-b2" "$g/m" \
		--ignore ino,dirsize
	same_manifest "b$i: Linux's view = uf2fs's view, every field" "$TMP/uf2fs-b2-$i" "$g/m" --ino
	fsck_clean "${IMGS[$i]}" || fail "fsck.f2fs after the second guest mount of b$i"
done
fi

if want c; then
# ------------------------------------------------------------------ (c) compressed files

# Per image: its name and the compress_* mount options Linux and uf2fs both get.
CNAMES=(lz4 zstd lzo lzo-rle)
COPTS=("compress_algorithm=lz4,compress_log_size=2"
	"compress_algorithm=zstd:5,compress_log_size=3,compress_chksum"
	"compress_algorithm=lzo,compress_log_size=4"
	"compress_algorithm=lzo-rle,compress_log_size=2")
MOUNT_OPTS=()
for i in "${!CNAMES[@]}"; do
	MOUNT_OPTS+=("${COPTS[$i]},compress_extension=dat")
done

# What the guest checks of a compressed tree: the kernel counts compressed
# blocks where the data compresses, and the flags are where they belong.
CCHECK='  for f in c/text-1000000.dat c/zero.dat c/runs.dat c/mixed.dat cdir/inherit.bin plain/chattr.bin cdir/new.bin c/new.dat; do
    [ -e $M/$f ] || continue
    n=$(gh cblocks $M/$f) || { echo "GUEST: $D: no compressed block count for $f"; rc=1; continue; }
    echo "$D compressed blocks $f: $n"
    [ "$n" -gt 0 ] || { echo "GUEST: $D: $f is not stored compressed"; rc=1; }
  done
  echo "$D compressed blocks c/rand-1000000.dat: $(gh cblocks $M/c/rand-1000000.dat)"
  fl=$(gh flags $M/plain/plain.txt); [ $((0x$fl & 4)) = 0 ] || { echo "GUEST: $D: plain.txt is +c"; rc=1; }
  fl=$(gh flags $M/cdir/sub); [ $((0x$fl & 4)) = 4 ] || { echo "GUEST: $D: cdir/sub is not +c"; rc=1; }'

cmkimgs() {	# cmkimgs PREFIX: fresh images into IMGS
	local i
	IMGS=()
	for i in "${!CNAMES[@]}"; do
		IMGS+=("$TMP/$1-${CNAMES[$i]}.img")
		mk_image "${IMGS[$i]}" 512M extra_attr,compression "" || fail "mkfs ${IMGS[$i]}"
	done
}

step "(c1) compressed files: uf2fs writes, Linux reads and changes them"
cmkimgs c1
REF=$TMP/ref-c1
mkdir -p "$REF"
sh "$TMP/in/cbuild.sh" "$REF" host || fail "cbuild.sh on the host reference"
sh "$TMP/in/cmodify.sh" "$REF" || fail "cmodify.sh on the host reference"
settimes "$REF" $TIME_A
manifest "$REF" "$TMP/ref-c1"
for i in "${!CNAMES[@]}"; do
	img=${IMGS[$i]} M=$TMP/mnt-c1-$i n=${CNAMES[$i]}
	o="rw,${MOUNT_OPTS[$i]}"
	mount_uf2fs "$img" "$M" "$o" || fail "uf2fs mount -o $o ($n)"
	sh "$TMP/in/cbuild.sh" "$M" || fail "cbuild.sh through uf2fs ($n)"
	umount_uf2fs "$M" || fail "unmount c1 $n"
	fsck_clean "$img" || fail "fsck.f2fs after uf2fs wrote compressed files ($n)"
	# the changes in a second mount: they rewrite clusters that are on disk
	mount_uf2fs "$img" "$M" "$o" || fail "uf2fs remount -o $o ($n)"
	sh "$TMP/in/cmodify.sh" "$M" || fail "cmodify.sh through uf2fs ($n)"
	settimes "$M" $TIME_A
	umount_uf2fs "$M" || fail "unmount c1 $n"
	fsck_clean "$img" || fail "fsck.f2fs after uf2fs changed compressed files ($n)"
	mount_uf2fs "$img" "$M" ro || fail "uf2fs mount -o ro c1 $n"
	manifest "$M" "$TMP/uf2fs-c1-$i"
	umount_uf2fs "$M" || fail "unmount c1 $n"
	same_manifest "c1 $n: uf2fs view vs host reference" "$TMP/ref-c1" "$TMP/uf2fs-c1-$i" \
		--ignore ino,dirsize
done
run_guest guest-c1 '  gh manifest $M $O/m $O/x $O/i || rc=1
'"$CCHECK"'
  sh /in/clinux.sh $M || { echo "GUEST: clinux.sh on $D failed"; rc=1; }'
sh "$TMP/in/clinux.sh" "$REF" || fail "clinux.sh on the host reference"
for i in "${!CNAMES[@]}"; do
	n=${CNAMES[$i]} g=$TMP/guest-c1.d/${DEVS[$i]} M=$TMP/mnt-c1-$i
	same_manifest "c1 $n: Linux reads uf2fs's compressed files = host reference" "$TMP/ref-c1" \
		"$g/m" --ignore ino,dirsize
	same_manifest "c1 $n: Linux's view = uf2fs's view, every field and flag" "$TMP/uf2fs-c1-$i" \
		"$g/m" --ino --flags
	fsck_clean "${IMGS[$i]}" || fail "fsck.f2fs after Linux changed uf2fs's compressed files ($n)"
	mount_uf2fs "${IMGS[$i]}" "$M" ro || fail "uf2fs mount after Linux wrote (c1 $n)"
	compare_tree "$REF" "$M" --no-times ||
		fail "c1 $n: uf2fs does not read Linux's changes as the reference has them"
	umount_uf2fs "$M" || fail "unmount c1 $n"
done

step "(c2) compressed files: Linux writes, uf2fs changes them, Linux checks"
cmkimgs c2
REF=$TMP/ref-c2
mkdir -p "$REF"
sh "$TMP/in/cbuild.sh" "$REF" host || fail "cbuild.sh on the host reference"
settimes "$REF" $TIME_A
manifest "$REF" "$TMP/ref-c2-1"
run_guest guest-c2a '  sh /in/cbuild.sh $M || { echo "GUEST: cbuild.sh on $D failed"; rc=1; }
  echo "$D released blocks: $(gh release $M/c/released.dat)" || rc=1
  gh settimes $M '$TIME_A'
  gh manifest $M $O/m $O/x $O/i || rc=1'
sh "$TMP/in/cmodify.sh" "$REF" || fail "cmodify.sh on the host reference"
rm "$REF/c/released.dat"
settimes "$REF" $TIME_B
manifest "$REF" "$TMP/ref-c2-2"
for i in "${!CNAMES[@]}"; do
	img=${IMGS[$i]} M=$TMP/mnt-c2-$i n=${CNAMES[$i]} g=$TMP/guest-c2a.d/${DEVS[$i]}
	o="rw,${MOUNT_OPTS[$i]}"
	same_manifest "c2 $n: Linux's tree = host reference (harness check)" "$TMP/ref-c2-1" "$g/m" \
		--ignore ino,dirsize
	fsck_clean "$img" || fail "fsck.f2fs of Linux's compressed image ($n)"
	mount_uf2fs "$img" "$M" ro || fail "uf2fs mount -o ro c2 $n"
	manifest "$M" "$TMP/uf2fs-c2-1-$i"
	umount_uf2fs "$M" || fail "unmount c2 $n"
	same_manifest "c2 $n: uf2fs reads Linux's compressed tree, every field and flag" "$g/m" \
		"$TMP/uf2fs-c2-1-$i" --ino --flags
	mount_uf2fs "$img" "$M" "$o" || fail "uf2fs mount -o $o (c2 $n)"
	# Linux released its saved blocks (and made it immutable): no writes, no
	# cut inside a cluster, and deleting it must leave the counts right
	gh flags "$M/c/released.dat" -i >/dev/null || fail "chattr -i through uf2fs ($n)"
	if gh gen "$M/c/released.dat" 10 1 text 0 2>/dev/null; then
		fail "uf2fs wrote into a released file ($n)"
	fi
	if truncate -s 5000 "$M/c/released.dat" 2>/dev/null; then
		fail "uf2fs cut a released file inside a cluster ($n)"
	fi
	rm "$M/c/released.dat"
	sh "$TMP/in/cmodify.sh" "$M" || fail "cmodify.sh through uf2fs on Linux's files ($n)"
	settimes "$M" $TIME_B
	umount_uf2fs "$M" || fail "unmount c2 $n"
	fsck_clean "$img" || fail "fsck.f2fs after uf2fs changed Linux's compressed files ($n)"
	mount_uf2fs "$img" "$M" ro || fail "uf2fs mount -o ro c2 $n"
	manifest "$M" "$TMP/uf2fs-c2-2-$i"
	umount_uf2fs "$M" || fail "unmount c2 $n"
	same_manifest "c2 $n: uf2fs's changes = host reference" "$TMP/ref-c2-2" "$TMP/uf2fs-c2-2-$i" \
		--ignore ino,dirsize
done
run_guest guest-c2b '  gh manifest $M $O/m $O/x $O/i || rc=1
'"$CCHECK"
for i in "${!CNAMES[@]}"; do
	n=${CNAMES[$i]} g=$TMP/guest-c2b.d/${DEVS[$i]}
	same_manifest "c2 $n: Linux reads uf2fs's changes = host reference" "$TMP/ref-c2-2" "$g/m" \
		--ignore ino,dirsize
	same_manifest "c2 $n: Linux's view = uf2fs's view, every field and flag" \
		"$TMP/uf2fs-c2-2-$i" "$g/m" --ino --flags
	fsck_clean "${IMGS[$i]}" || fail "fsck.f2fs after the second guest mount of c2 $n"
done
fi
pass "uf2fs <-> Linux f2fs, read-write, both directions ($PARTS)"
