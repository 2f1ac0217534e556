#!/bin/bash
# What the kernel keeps for the mount (issue 21): directory listings across
# opens (FOPEN_CACHE_DIR + keep_cache on opendir), dentries and attributes for
# the timeout. Each listing below is read twice, the second from that cache:
# both must follow creates, writes, unlinks, renames (in a directory, across
# directories, over an entry), mkdir/rmdir, link and symlink made through the
# mount; a change made to the image offline between mounts (uf2fs put, rm)
# must show at the next mount; and in a casefolded directory, where a dentry
# may name an entry under another spelling, a name removed or renamed in one
# case is gone in every other, while removing names the kernel listed ends no
# dentry (no epoch bump).
# Ends fsck-clean.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_root
need_fuse
tmpdir_init dir-cache
IMG=$TMP/dc.img MNT=$TMP/mnt

# lists DIR twice (the second answer comes from the kernel's cache) and
# compares both with the expected names
expect_ls() {
	local d=$1 want got i
	shift
	want="$*"
	for i in 1 2; do
		got=$(ls -1 "$d" | tr '\n' ' ' | sed 's/ $//')
		[ "$got" = "$want" ] || fail "$d, listing $i: '$got', expected '$want'"
	done
}

gone() { [ ! -e "$1" ] && ! stat "$1" >/dev/null 2>&1 || fail "$1 still there"; }

truncate -s 256M "$IMG"
mkfs.f2fs -q -f -O casefold -C utf8 "$IMG" >/dev/null || fail "mkfs.f2fs -O casefold"
mount_uf2fs "$IMG" "$MNT" rw || fail "mount"

step "listings and attributes follow changes made through the mount"
mkdir "$MNT/d" "$MNT/e" || fail "mkdir"
touch "$MNT/d/a" "$MNT/d/b" "$MNT/d/c"
expect_ls "$MNT/d" a b c
[ "$(stat -c %s "$MNT/d/a")" = 0 ] || fail "size of a new file"
echo hello >"$MNT/d/a"
[ "$(stat -c %s "$MNT/d/a")" = 6 ] || fail "size after a write: cached attributes"
touch "$MNT/d/n"
expect_ls "$MNT/d" a b c n
rm "$MNT/d/b"
expect_ls "$MNT/d" a c n
gone "$MNT/d/b"
mv "$MNT/d/c" "$MNT/d/c2"
expect_ls "$MNT/d" a c2 n
gone "$MNT/d/c"
echo moved >"$MNT/d/n"
mv "$MNT/d/n" "$MNT/e/n"
expect_ls "$MNT/d" a c2
expect_ls "$MNT/e" n
mkdir "$MNT/d/sub"
expect_ls "$MNT/d" a c2 sub
rmdir "$MNT/d/sub"
expect_ls "$MNT/d" a c2
ln "$MNT/d/a" "$MNT/d/hard"
ln -s a "$MNT/d/sym"
expect_ls "$MNT/d" a c2 hard sym
[ "$(stat -c %h "$MNT/d/hard")" = 2 ] || fail "nlink after link"
mv -T "$MNT/e/n" "$MNT/d/a"
expect_ls "$MNT/d" a c2 hard sym
expect_ls "$MNT/e"
[ "$(cat "$MNT/d/a")" = moved ] || fail "rename over an entry: old contents"
[ "$(cat "$MNT/d/hard")" = hello ] || fail "the replaced file's other link"
[ "$(stat -c %h "$MNT/d/hard")" = 1 ] || fail "nlink of the replaced file"

step "casefolded directory: a change in one case is seen in every case"
mkdir "$MNT/cf" && chattr +F "$MNT/cf" || fail "chattr +F"
touch "$MNT/cf/ABC" "$MNT/cf/Foo"
expect_ls "$MNT/cf" ABC Foo
stat "$MNT/cf/abc" "$MNT/cf/ABC" >/dev/null || fail "lookup in another case"
rm "$MNT/cf/abc"
gone "$MNT/cf/ABC"
gone "$MNT/cf/Abc"
mv "$MNT/cf/foo" "$MNT/cf/bar"
gone "$MNT/cf/Foo"
expect_ls "$MNT/cf" bar
# renamed over an entry spelled in another case: the entry keeps its
# spelling ("y1") and now names x1's inode; every cached spelling follows
touch "$MNT/cf/X1" "$MNT/cf/y1"
expect_ls "$MNT/cf" X1 bar y1
ino=$(stat -c %i "$MNT/cf/x1")
stat "$MNT/cf/Y1" "$MNT/cf/y1" >/dev/null || fail "lookups before the rename"
mv "$MNT/cf/x1" "$MNT/cf/Y1"
expect_ls "$MNT/cf" bar y1
[ "$(stat -c %i "$MNT/cf/y1")" = "$ino" ] || fail "y1 after the rename over it"
[ "$(stat -c %i "$MNT/cf/Y1")" = "$ino" ] || fail "Y1 after the rename over it"
gone "$MNT/cf/X1"
# a directory listed (its entries cached), then removed under another case
mkdir -p "$MNT/cf/Sub/Deep"
ls -lR "$MNT/cf" >/dev/null
rmdir "$MNT/cf/sub/deep" "$MNT/cf/SUB"
gone "$MNT/cf/Sub"
expect_ls "$MNT/cf" bar y1

step "casefolded: listed names cost no epoch bump, an alias still ends the dentries"
cf_stat() { "$UF2FS" stats "$MNT" | sed -n "s/^casefold: .*$1 \([0-9]*\).*/\1/p"; }
b0=$(cf_stat bumps)
[ -n "$b0" ] || fail "uf2fs stats has no casefold line"
mkdir "$MNT/cf/many" && touch "$MNT/cf/many/F"{1..40} || fail "files in a casefolded dir"
ls -l "$MNT/cf/many" >/dev/null
rm -r "$MNT/cf/many" || fail "rm -r"
gone "$MNT/cf/many"
b1=$(cf_stat bumps)
[ "$b1" = "$b0" ] || fail "rm -r of listed names bumped the epoch $((b1 - b0)) times"
a0=$(cf_stat lookups)
touch "$MNT/cf/Foo2"
stat "$MNT/cf/foo2" >/dev/null || fail "lookup of another spelling"
[ "$(cf_stat lookups)" -gt "$a0" ] || fail "the alias lookup was not counted"
rm "$MNT/cf/FOO2" || fail "rm under a third spelling"
[ "$(cf_stat bumps)" -gt "$b1" ] || fail "no epoch bump after an alias was answered"
gone "$MNT/cf/foo2"
gone "$MNT/cf/Foo2"
touch "$MNT/cf/Bar3"
stat "$MNT/cf/bar3" >/dev/null || fail "lookup of another spelling"
rm "$MNT/cf/Bar3"
gone "$MNT/cf/bar3"
expect_ls "$MNT/cf" bar y1
umount_uf2fs "$MNT" || fail "umount"
fsck_clean "$IMG" || fail "fsck after the mount"

step "offline changes between mounts show at the next mount"
echo offline >"$TMP/offline"
"$UF2FS" put "$IMG" "$TMP/offline" /d/ || fail "uf2fs put"
"$UF2FS" rm "$IMG" /d/c2 || fail "uf2fs rm"
echo longer-than-before >"$TMP/hard"
"$UF2FS" put "$IMG" "$TMP/hard" /d/ || fail "uf2fs put over a file"
mount_uf2fs "$IMG" "$MNT" rw || fail "mount again"
expect_ls "$MNT/d" a hard offline sym
gone "$MNT/d/c2"
[ "$(cat "$MNT/d/offline")" = offline ] || fail "a file put offline"
[ "$(stat -c %s "$MNT/d/hard")" = 19 ] || fail "size of a file replaced offline"
umount_uf2fs "$MNT" || fail "umount"
fsck_clean "$IMG" || fail "fsck at the end"
pass
