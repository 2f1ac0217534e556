#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Casefolded directories, read-write, both directions, against the real Linux
# f2fs in QEMU. One image made with mkfs.f2fs -O casefold -C utf8:
#
# (a) uf2fs (FUSE, rw): chattr +F on an empty directory, files and a
#     subdirectory with mixed case and non-ASCII names; through the mount they
#     answer to other spellings, a negative lookup does not hide a later
#     create in another case, mkdir of another case is EEXIST. fsck.f2fs clean.
# (b) Linux reads every name by other spellings (full case folding, É
#     decomposed), sees the inherited +F, leaves the name alone on a
#     case-only rename (so uf2fs must too), and writes names of its own.
#     Linux also refuses a casefold image whose encoding is 0, which uf2fs
#     mounts read-only only. fsck.f2fs clean.
# (c) uf2fs reads Linux's names by other spellings and changes them: unlink,
#     rename and create by other spellings, in a directory Linux made. fsck
#     clean.
# (d) Linux sees exactly uf2fs's view (the same tree, name for name) and
#     finds uf2fs's new names by other spellings. No f2fs complaint in dmesg.
#
# Env: BUILD, UF2FS, TOP (from make check); KEEP_TMP=1.
set -euo pipefail
. "$(dirname "$0")/compat-lib.sh"
need_cmd "$PY" gcc

TMO=${RW_CASEFOLD_TIMEOUT:-300}
tmpdir_init rw-casefold
GHDIR=$TMP/gh
mkdir -p "$GHDIR" "$TMP/in"
gcc -O2 -Wall -o "$GHDIR/gh" tests/compat/guest-helper.c || fail "cannot build guest-helper.c"
export PATH=$GHDIR:$PATH

IMG=$TMP/cf.img
NOENC=$TMP/noenc.img
M=$TMP/mnt
rm -f "$IMG" "$NOENC"
truncate -s 256M "$IMG" "$NOENC"
"$MKFS_F2FS" -f -q -O casefold -C utf8 "$IMG" >/dev/null || fail "mkfs.f2fs -O casefold -C utf8"
"$MKFS_F2FS" -f -q -O casefold "$NOENC" >/dev/null || fail "mkfs.f2fs -O casefold"

# want FILE CONTENT: the file (any spelling) reads CONTENT
want() {
	local got
	got=$(cat "$1" 2>&1) || fail "cannot read '$1': $got"
	[ "$got" = "$2" ] || fail "'$1' reads '$got', want '$2'"
}

# has_F PATH: FS_IOC_GETFLAGS shows the casefold flag (other bits vary: inline)
has_F() { [ $(( 0x$(gh flags "$1") & 0x40000000 )) -ne 0 ]; }

# tree DIR: every path below DIR, relative, sorted bytewise
tree() { (cd "$1" && find . | LC_ALL=C sort); }

# guest NAME BODY: boot with $IMG as vda and $NOENC as vdc; BODY runs with
# cf=/mnt/cf and $O for outputs; GUEST: lines fail the test.
guest() {
	local name=$1 body=$2
	cat > "$TMP/$name.sh" <<EOF
rc=0
O=/tmp/out
mkdir -p \$O /mnt /mnt2
bad() { echo "GUEST: \$*"; rc=1; }
has_F() { [ \$(( 0x\$(gh flags "\$1") & 0x40000000 )) -ne 0 ]; }
want() { g=\$(cat "\$1" 2>&1) || { bad "cannot read \$1: \$g"; return; }
	[ "\$g" = "\$2" ] || bad "\$1 reads '\$g', want '\$2'"; }
if mount -t f2fs /dev/vda /mnt; then
	cf=/mnt/cf
$body
	cd /; umount /mnt || bad "umount failed"
else bad "mount failed"; fi
dmesg > \$O/dmesg
tar cf - -C \$O . | dd of=/dev/vdb bs=65536 conv=fsync 2>/dev/null
exit \$rc
EOF
	rm -f "$TMP/$name.out"
	QEMU_IN=$TMP/in QEMU_EXTRA=$NOENC qemu_run "$IMG" "$TMP/$name.sh" "$TMP/$name.out" "$TMO" \
		> "$TMP/$name.console" || { tail -30 "$TMP/$name.console" >&2; fail "guest $name failed"; }
	if grep -q '^GUEST:' "$TMP/$name.console"; then
		grep '^GUEST:' "$TMP/$name.console" >&2
		fail "guest $name: checks failed"
	fi
	rm -rf "$TMP/$name.d"
	mkdir -p "$TMP/$name.d"
	tar xf "$TMP/$name.out" -C "$TMP/$name.d" || fail "no output from guest $name"
	# the refusal of vdc is expected; anything else from f2fs is not
	local badmsg
	badmsg=$(grep -iE 'f2fs.*(error|inconsist|corrupt|fsck|invalid|bad |mismatch|fail)' \
		"$TMP/$name.d/dmesg" | grep -v 'vdc' || true)
	[ -z "$badmsg" ] || { printf '%s\n' "$badmsg" >&2; fail "kernel f2fs messages ($name)"; }
}

# ------------------------------------------------------------------ (a)
step "(a) uf2fs makes a casefolded directory"
mount_uf2fs "$IMG" "$M" rw || fail "uf2fs mount -o rw"
mkdir "$M/cf"
gh flags "$M/cf" +F >/dev/null || fail "chattr +F through uf2fs"
mkdir "$M/plain"
echo x > "$M/plain/file"
gh flags "$M/plain" +F 2>/dev/null && fail "chattr +F of a non-empty directory succeeded"
echo one > "$M/cf/Straße"
echo two > "$M/cf/ÉCOLE"
echo three > "$M/cf/MixedCase.txt"
mkdir "$M/cf/SubDir"
echo four > "$M/cf/SubDir/Leaf"
want "$M/cf/STRASSE" one
want "$M/cf/strasse" one
want "$M/cf/"$'e\xcc\x81'"cole" two
want "$M/cf/mixedcase.TXT" three
want "$M/cf/subdir/LEAF" four
# a miss first, then a create under another case: the miss must not stick
[ -e "$M/cf/later" ] && fail "cf/later exists before it was made"
echo five > "$M/cf/LATER"
want "$M/cf/later" five
# unlink under one spelling: the kernel's dentry of another must not stay
echo gone > "$M/cf/Temp"
want "$M/cf/TEMP" gone
rm "$M/cf/temp"
[ -e "$M/cf/TEMP" ] && fail "cf/TEMP still there after rm cf/temp"
[ -e "$M/cf/Temp" ] && fail "cf/Temp still there after rm cf/temp"
# the same for a rename: MOVING must not keep naming what is now Moved
echo r > "$M/cf/Moving"
want "$M/cf/MOVING" r
gh rename "$M/cf/moving" "$M/cf/Moved" || fail "rename cf/moving cf/Moved"
[ -e "$M/cf/MOVING" ] && fail "cf/MOVING still there after its rename to cf/Moved"
want "$M/cf/MOVED" r
rm "$M/cf/Moved"
mkdir "$M/cf/subdir" 2>/dev/null && fail "mkdir cf/subdir succeeded next to cf/SubDir"
# a case-only rename changes nothing, as on Linux
gh rename "$M/cf/MixedCase.txt" "$M/cf/MIXEDCASE.TXT" || fail "case-only rename"
has_F "$M/cf/SubDir" || fail "cf/SubDir did not inherit +F: $(gh flags "$M/cf/SubDir")"
tree "$M" > "$TMP/uf2fs-a.tree"
umount_uf2fs "$M" || fail "unmount"
fsck_clean "$IMG" || fail "fsck.f2fs after uf2fs wrote"
cat > "$TMP/want-a.tree" <<'EOF'
.
./cf
./cf/LATER
./cf/MixedCase.txt
./cf/Straße
./cf/SubDir
./cf/SubDir/Leaf
./cf/ÉCOLE
./plain
./plain/file
EOF
diff "$TMP/want-a.tree" "$TMP/uf2fs-a.tree" >&2 || fail "uf2fs's tree after (a)"
# uf2fs mounts the encoding-0 image read-only only, as Linux does not at all
mount_uf2fs "$NOENC" "$TMP/mnt-noenc" rw 2>/dev/null && fail "uf2fs mounted encoding 0 read-write"
mount_uf2fs "$NOENC" "$TMP/mnt-noenc" ro || fail "uf2fs cannot read the encoding-0 image"
umount_uf2fs "$TMP/mnt-noenc" || fail "unmount"

# ------------------------------------------------------------------ (b)
step "(b) Linux reads uf2fs's names by other spellings and adds its own"
guest guest-b '	want $cf/strasse one
	want $cf/STRAẞE one
	want "$cf/école" two
	[ -e "$cf/Écolé" ] && bad "Écolé exists"
	want "$cf/E'$'\xcc\x81''COLE" two
	want $cf/MIXEDCASE.txt three
	want $cf/subdir/leaf four
	want $cf/later five
	has_F $cf/subdir || bad "cf/SubDir has no +F: $(gh flags $cf/subdir)"
	gh rename $cf/mixedcase.txt $cf/MIXEDCASE.TXT || bad "rename"
	ls $cf > $O/ls
	echo six > $cf/Linux-Made.TXT
	echo seven > $cf/ÅNGSTRÖM
	mkdir $cf/LinuxDir
	echo eight > $cf/linuxdir/Inner.Dat
	echo nine > $cf/subdir/FROM-LINUX
	echo x > $cf/straSSe 2>/dev/null
	mkdir $cf/SUBDIR 2>/dev/null && bad "mkdir SUBDIR succeeded"
	has_F $cf/LinuxDir || bad "Linux did not give LinuxDir +F"
	cd /; umount /mnt
	if mount -t f2fs /dev/vdc /mnt2 2>/dev/null; then
		bad "Linux mounted a casefold image with encoding 0"; umount /mnt2
	fi
	mount -t f2fs /dev/vda /mnt || bad "remount"'
grep -qx 'MixedCase.txt' "$TMP/guest-b.d/ls" ||
	fail "Linux's case-only rename changed the name: $(tr '\n' ' ' < "$TMP/guest-b.d/ls")"
grep -q "Encoding requested by superblock is unknown" "$TMP/guest-b.d/dmesg" ||
	log "note: Linux's refusal of encoding 0 was not worded as expected"
fsck_clean "$IMG" || fail "fsck.f2fs after Linux wrote"

# ------------------------------------------------------------------ (c)
step "(c) uf2fs reads Linux's names by other spellings and changes them"
mount_uf2fs "$IMG" "$M" rw || fail "uf2fs mount -o rw"
want "$M/cf/linux-made.txt" six
want "$M/cf/ångström" seven
want "$M/cf/A"$'\xcc\x8a'"NGSTRO"$'\xcc\x88'"M" seven
want "$M/cf/linuxdir/INNER.dat" eight
want "$M/cf/SUBDIR/from-linux" nine
want "$M/cf/STRASSE" x
has_F "$M/cf/LinuxDir" || fail "uf2fs sees no +F on LinuxDir"
rm "$M/cf/LINUX-MADE.txt"
[ -e "$M/cf/Linux-Made.TXT" ] && fail "Linux-Made.TXT survived rm LINUX-MADE.txt"
echo ten > "$M/cf/linuxdir/Uf2fs-Made"
gh rename "$M/cf/ångström" "$M/cf/Renamed" || fail "rename by another spelling"
mkdir "$M/cf/LINUXDIR/NewSub"
echo eleven > "$M/cf/linuxdir/newsub/Deep"
tree "$M" > "$TMP/uf2fs-c.tree"
umount_uf2fs "$M" || fail "unmount"
fsck_clean "$IMG" || fail "fsck.f2fs after uf2fs changed Linux's names"

# ------------------------------------------------------------------ (d)
step "(d) Linux sees uf2fs's changes"
guest guest-d '	want $cf/linuxdir/UF2FS-made ten
	want $cf/RENAMED seven
	want $cf/LinuxDir/newsub/deep eleven
	[ -e $cf/linux-made.txt ] && bad "linux-made.txt is back"
	[ -e $cf/ångström ] && bad "ångström is still there"
	has_F $cf/linuxdir/NEWSUB || bad "NewSub has no +F"
	(cd /mnt && find . | sort) > $O/tree'
diff "$TMP/uf2fs-c.tree" "$TMP/guest-d.d/tree" >&2 || fail "Linux's tree differs from uf2fs's"
fsck_clean "$IMG" || fail "fsck.f2fs after the last guest mount"
pass "casefolded directories: uf2fs <-> Linux f2fs, both directions"
