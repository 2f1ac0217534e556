#!/bin/bash
# An unprivileged user (nobody, through setpriv) works in their own image that
# root made, with files owned by root and by another user:
#  - a plain read-write mount lets them read but not write (the baseline);
#  - -o fakeroot: create, write, read, chmod, chown and mkdir in the root
#    directory; setuid survives a write; new files are stored as 0:0;
#  - -o uid=0,gid=0: root's files show as theirs and are writable, what they
#    create is stored as 0:0, another user's private file stays closed;
#    fs-verity's write-permission check sees them as the owner too;
#  - uf2fs umount as that user (the fusermount3 path) waits and checks;
#  - uf2fs get as that user: no chown failures, modes kept, contents equal;
#  - fsck.f2fs -f clean after all of it.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_fuse
need_f2fs_tools
need_uf2fs
need_cmd setpriv stat fsverity
[ "$(id -u)" = 0 ] || skip "needs root to build the image and become nobody (setpriv)"
tmpdir_init nonroot
chmod 755 "$TMP"
U=65534 G=65534
as_user() { setpriv --reuid=$U --regid=$G --clear-groups -- "$@"; }
as_user test -x "$UF2FS" || skip "$UF2FS is not executable by uid $U"

IMG=$TMP/user.img MNT=$TMP/mnt STAGE=$TMP/stage
mkdir -p "$STAGE/rodir" "$STAGE/sub" "$MNT"
echo "root's file" >"$STAGE/a"
echo "another user's secret" >"$STAGE/secret"
echo "another user's, readable" >"$STAGE/other"
printf '#!/bin/sh\necho prog\n' >"$STAGE/prog"
echo "read-only" >"$STAGE/ro"
echo "inside" >"$STAGE/rodir/in"
head -c 300000 /dev/urandom >"$STAGE/sub/big"
ln -s a "$STAGE/link"
chown 1234:1234 "$STAGE/secret" "$STAGE/other"
chmod 600 "$STAGE/secret"
chmod 4755 "$STAGE/prog"
chmod 444 "$STAGE/ro"
chmod 555 "$STAGE/rodir"
truncate -s 256M "$IMG"
"$MKFS_F2FS" -q -f -O extra_attr,verity "$IMG" >/dev/null || fail "mkfs.f2fs"
"$UF2FS" put "$IMG" "$STAGE"/* / || fail "uf2fs put as root"
chown $U:$G "$IMG" "$MNT"

# owner IMG PATH: uid:gid in the image, read offline
owner() { "$UF2FS" ls -l -d "$IMG" "$1" | awk 'NR == 1 { print $3 ":" $4 }'; }

step "plain read-write mount: root's directory is closed to the user"
as_user "$UF2FS" mount -o rw "$IMG" "$MNT" || fail "mount as uid $U"
[ "$(as_user stat -c %u "$MNT")" = 0 ] || fail "root directory not shown as root's"
as_user cat "$MNT/a" >/dev/null || fail "reading a world-readable file"
if as_user sh -c "echo x >'$MNT/new'" 2>/dev/null; then
	fail "uid $U could write into root's directory without fakeroot or uid="
fi
as_user "$UF2FS" umount "$MNT" || fail "uf2fs umount as uid $U"

step "-o fakeroot"
as_user "$UF2FS" mount -o rw,fakeroot "$IMG" "$MNT" || fail "mount -o fakeroot"
as_user sh -ec "
	cd '$MNT'
	echo hello >f1
	[ \"\$(cat f1)\" = hello ]
	chmod 640 f1
	chown 1234:1234 f1
	mkdir d1
	echo inner >d1/g
	cat secret >/dev/null
	echo more >>a
	echo '# appended' >>prog
	echo in-ro >rodir/new
	chmod 750 d1
" || fail "create/write/read/chmod/chown/mkdir under fakeroot"
[ "$(as_user stat -c %a "$MNT/f1")" = 640 ] || fail "chmod under fakeroot"
[ "$(as_user stat -c %a "$MNT/prog")" = 4755 ] || fail "setuid dropped by a fakeroot write"
as_user "$UF2FS" umount "$MNT" || fail "uf2fs umount after fakeroot"
[ "$(owner /f1)" = 1234:1234 ] || fail "chown under fakeroot: $(owner /f1)"
[ "$(owner /d1)" = 0:0 ] || fail "a directory made under fakeroot is $(owner /d1), not 0:0"
[ "$(owner /d1/g)" = 0:0 ] || fail "a file made under fakeroot is $(owner /d1/g), not 0:0"
[ "$("$UF2FS" cat "$IMG" /a)" = "root's file
more" ] || fail "append under fakeroot"

step "-o uid=0,gid=0"
as_user "$UF2FS" mount -o rw,uid=0,gid=0 "$IMG" "$MNT" || fail "mount -o uid=0,gid=0"
[ "$(as_user stat -c %u:%g "$MNT")" = $U:$G ] || fail "root directory shows as $(as_user stat -c %u:%g "$MNT")"
[ "$(as_user stat -c %u:%g "$MNT/secret")" = 1234:1234 ] || fail "another owner changed in the view"
as_user sh -ec "
	cd '$MNT'
	echo second >f2
	[ \"\$(cat f2)\" = second ]
	chmod 600 f2
	echo again >>a
	mkdir d2
" || fail "create/write/read/chmod under uid=0,gid=0"
[ "$(as_user stat -c %u:%g:%a "$MNT/f2")" = $U:$G:600 ] || fail "new file shows as $(as_user stat -c %u:%g:%a "$MNT/f2")"
if as_user cat "$MNT/secret" >/dev/null 2>&1; then
	fail "uid=0 mapping opened another user's 0600 file"
fi
# FS_IOC_ENABLE_VERITY wants write permission: the mapped owner has it on
# f2 (0600, 0:0 in the image), nobody has it on another user's file
as_user fsverity enable "$MNT/f2" || fail "fsverity enable of the mapped owner's file"
as_user fsverity measure "$MNT/f2" >/dev/null || fail "fsverity measure after enable"
out=$(as_user fsverity enable "$MNT/other" 2>&1) && fail "fsverity enable of another user's file"
grep -q "Permission denied" <<<"$out" || fail "fsverity enable of another user's file: $out"
as_user "$UF2FS" umount "$MNT" || fail "uf2fs umount after uid="
[ "$(owner /f2)" = 0:0 ] || fail "a file made under uid=0,gid=0 is $(owner /f2), not 0:0"
[ "$(owner /d2)" = 0:0 ] || fail "a directory made under uid=0,gid=0 is $(owner /d2)"

step "uf2fs get as uid $U"
OUT=$TMP/out
mkdir -p "$OUT" && chown $U:$G "$OUT"
as_user "$UF2FS" get "$IMG" / "$OUT/tree" 2>"$TMP/get.err" || { cat "$TMP/get.err"; fail "uf2fs get as uid $U"; }
[ ! -s "$TMP/get.err" ] || { cat "$TMP/get.err"; fail "uf2fs get printed errors"; }
for p in a secret prog ro rodir rodir/in rodir/new sub sub/big f1 f2 d1 d1/g d2; do
	want=$("$UF2FS" ls -l -d "$IMG" "/$p" | awk '{ print $1 }' 2>/dev/null)
	want=${want%V}	# uf2fs ls marks verity files
	got=$(stat -c %A "$OUT/tree/$p")
	[ "$want" = "$got" ] || fail "mode of $p: $got, image has $want"
	[ "$(stat -c %u "$OUT/tree/$p")" = $U ] || fail "$p not owned by the extracting user"
done
cmp "$STAGE/sub/big" "$OUT/tree/sub/big" || fail "contents of sub/big"
[ "$(readlink "$OUT/tree/link")" = a ] || fail "symlink"
chmod -R u+w "$OUT"

fsck_clean "$IMG" || fail "fsck after the unprivileged mounts"
pass "unprivileged mounts with fakeroot and uid=/gid=, umount and get as that user"
