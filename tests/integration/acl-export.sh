#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What xfstests with FSTYP=fuse expects beyond plain POSIX, through a
# read-write mount with allow_other (so default_permissions), run as root
# with a second user (nobody, uid/gid 65534, via setpriv):
#
#  1. POSIX ACLs enforced by the kernel (FUSE_POSIX_ACL): a user granted by
#     an ACL entry reads, one denied by a named entry does not although the
#     other bits allow it; the mask limits group entries and chmod rewrites
#     it; a mode-equivalent ACL only changes the mode; setting an ACL drops
#     setgid for a caller outside the group (posix_acl_update_mode).
#  2. Inheritance as posix_acl_create: under a default ACL the umask is
#     ignored and new files and directories get the ACL masked by their
#     mode (directories the default ACL too; symlinks nothing); without one
#     the umask applies (FUSE_DONT_MASK leaves it to the daemon).
#  3. setuid/setgid cleared when nobody writes, truncates, fallocates,
#     writes with O_DIRECT or copy_file_range()s into a root file, kept for a
#     non-group-executable setgid file and for root; chown clears them by
#     the same rules; under writeback_cache and direct_io (the daemon's own
#     path) too.
#  4. File handles (FUSE_CAP_EXPORT_SUPPORT): open_by_handle_at after the
#     kernel dropped its inodes (drop_caches), after a rename, through a hard
#     link, of a directory (reconnected through ".." lookups), ESTALE for an
#     unlinked file and a removed directory, also after a remount and after
#     new files reuse the freed inode numbers. xfstests' src/open_by_handle
#     runs too when OPEN_BY_HANDLE points to it (default: its usual build
#     place, skipped when absent).
#  5. Nanosecond timestamps set by touch -d survive a remount.
#  6. -o noacl: no inheritance, the kernel applies the umask.
# Every mount ends with an unmount, a clean daemon exit and fsck.f2fs -f.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

need_root
need_fuse
need_f2fs_tools
need_uf2fs
need_cmd setfacl getfacl setpriv cc "$PY" fallocate dd truncate
# a python the second user can run (a root-only pyenv shim cannot be)
PY_ALL=/usr/bin/python3
[ -x "$PY_ALL" ] || skip "$PY_ALL not installed"

tmpdir_init acl
chmod 755 "$TMP"	# nobody must reach the mount point
IMG=$TMP/acl.img
MNT=$TMP/mnt
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
OBH=${OPEN_BY_HANDLE:-/tmp/suites/xfstests/src/open_by_handle}

# as_nobody UMASK CMD...: run as uid/gid 65534 with that umask.
as_nobody() {
	local m=$1
	shift
	"${NOBODY[@]}" sh -c 'umask "$0"; exec "$@"' "$m" "$@"
}

# expect WHAT GOT WANT
expect() {
	[ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
	log "$1: $2"
}

mode_of() { stat -c %A "$1"; }
# lxattrs PATH: the xattr names of PATH itself (getfacl follows symlinks)
lxattrs() { "$PY" -c 'import os, sys; print(*os.listxattr(sys.argv[1], follow_symlinks=False))' "$1"; }
# acl_of PATH: getfacl's entries on one line, without the effective rights
acl_of() { getfacl -cp "$1" 2>/dev/null | sed 's/\t*#effective:.*//' | tr '\n' ' ' | sed 's/ *$//'; }

remount() {	# remount [OPTS]
	umount_uf2fs "$MNT" || fail "unmount"
	fsck_clean "$IMG" || fail "fsck.f2fs after unmount"
	mount_uf2fs "$IMG" "$MNT" "rw,allow_other${1:+,$1}" || fail "mount -o rw,allow_other${1:+,$1}"
}

drop_caches() { sync; echo 2 > /proc/sys/vm/drop_caches; }

step "image and mount"
mk_image "$IMG" 512M "extra_attr,inode_checksum,inode_crtime" ""
mount_uf2fs "$IMG" "$MNT" rw,allow_other || fail "mount -o rw,allow_other"
chmod 755 "$MNT"

# ------------------------------------------------------------------ 1. enforcement
step "ACLs are enforced"
A=$MNT/acl
mkdir -m 755 "$A"
echo secret > "$A/f"
chmod 600 "$A/f"
read_f() { as_nobody 022 cat "$A/f" 2>/dev/null || echo denied; }
expect "mode 600, no ACL" "$(read_f)" denied
setfacl -m u:65534:r "$A/f"
expect "u:nobody:r" "$(read_f)" secret
expect "the group bits show the mask" "$(mode_of "$A/f")" "-rw-r-----"
chmod 604 "$A/f"
# (with mask ---, Linux skips the ACL and goes by the group and other bits)
setfacl -m u:65534:-,g::r "$A/f"
expect "u:nobody:- with other r--: the named entry wins" "$(read_f)" denied
setfacl -m g::- "$A/f"
setfacl -x u:65534 "$A/f"
setfacl -m g:65534:r "$A/f"
chmod 600 "$A/f"
expect "chmod 600 rewrites the mask" "$(acl_of "$A/f")" \
	"user::rw- group::--- group:nogroup:r-- mask::--- other::---"
expect "g:nogroup:r under mask ---" "$(read_f)" denied
chmod 640 "$A/f"
expect "chmod 640 rewrites the mask" "$(acl_of "$A/f")" \
	"user::rw- group::--- group:nogroup:r-- mask::r-- other::---"
expect "g:nogroup:r under mask r--" "$(read_f)" secret
echo x > "$A/eq"
chmod 600 "$A/eq"
setfacl -m u::rwx,g::r-x,o::r-- "$A/eq"
expect "an equivalent ACL is only a mode" "$(mode_of "$A/eq")" "-rwxr-xr--"
expect "and no ACL" "$(getfacl -cps "$A/eq" | wc -l)" 0
chmod 1777 "$A"
touch "$A/sg"
chown 65534:0 "$A/sg"
chmod 2775 "$A/sg"
as_nobody 022 setfacl -m u:1:r "$A/sg"
expect "setfacl by the owner outside the group drops setgid" "$(mode_of "$A/sg")" "-rwxrwxr-x"
touch "$A/sg2"
chown 65534:65534 "$A/sg2"
chmod 2775 "$A/sg2"
as_nobody 022 setfacl -m u:1:r "$A/sg2"
expect "setfacl by the owner in the group keeps it" "$(mode_of "$A/sg2")" "-rwxrwsr-x"
as_nobody 022 setfacl -m u:1:r "$A/f" 2>/dev/null && fail "nobody changed root's ACL"

# ------------------------------------------------------------------ 2. inheritance
step "default ACLs are inherited, the umask applies without one"
D=$MNT/inherit
mkdir -m 755 "$D"
setfacl -m u:65534:rwx "$D"
setfacl -d -m u::rwx,u:65534:rwx,g::r-x,m::rwx,o::--- "$D"
as_nobody 077 touch "$D/nf"
as_nobody 077 mkdir "$D/nd"
as_nobody 077 mkfifo "$D/np"
as_nobody 077 ln -s nf "$D/nl"
umask 022
touch "$D/rf"
mkdir -m 700 "$D/r7"
expect "file, umask 077 ignored" "$(mode_of "$D/nf")" "-rw-rw----"
expect "file ACL" "$(acl_of "$D/nf")" \
	"user::rw- user:nobody:rwx group::r-x mask::rw- other::---"
expect "directory" "$(mode_of "$D/nd")" "drwxrwx---"
expect "directory ACL" "$(acl_of "$D/nd")" \
	"user::rwx user:nobody:rwx group::r-x mask::rwx other::--- default:user::rwx default:user:nobody:rwx default:group::r-x default:mask::rwx default:other::---"
expect "fifo" "$(mode_of "$D/np")" "prw-rw----"
expect "symlink: no ACL" "$(mode_of "$D/nl") $(lxattrs "$D/nl")" "lrwxrwxrwx "
expect "root's file" "$(mode_of "$D/rf")" "-rw-rw----"
expect "mkdir -m 700" "$(acl_of "$D/r7")" \
	"user::rwx user:nobody:rwx group::r-x mask::--- other::--- default:user::rwx default:user:nobody:rwx default:group::r-x default:mask::rwx default:other::---"
as_nobody 022 touch "$D/nd/deeper"
expect "two levels down" "$(acl_of "$D/nd/deeper")" \
	"user::rw- user:nobody:rwx group::r-x mask::rw- other::---"
P=$MNT/plain
mkdir -m 755 "$P"
setfacl -m u:65534:rwx "$P"
as_nobody 027 touch "$P/f027"
as_nobody 027 mkdir "$P/d027"
as_nobody 0 touch "$P/f0"
expect "umask 027, file" "$(mode_of "$P/f027")" "-rw-r-----"
expect "umask 027, directory" "$(mode_of "$P/d027")" "drwxr-x---"
expect "umask 0" "$(mode_of "$P/f0")" "-rw-rw-rw-"
expect "no ACL without a default ACL" "$(getfacl -cps "$P/f027" | wc -l)" 0

# ------------------------------------------------------------------ 3. setuid/setgid
step "setuid and setgid are cleared by writes of other users"
K=$MNT/kill
mkdir -m 777 "$K"
echo src > "$K/src"
# priv_after MODE CMD...: a root file of MODE, CMD run by nobody; its mode after
priv_after() {
	local m=$1 f=$K/f
	shift
	rm -f "$f"
	touch "$f"
	chmod "$m" "$f"
	as_nobody 022 "$@" >/dev/null 2>&1 || fail "as nobody: $*"
	mode_of "$f"
}
cfr='import os, sys; d = os.open(sys.argv[2], os.O_RDWR); os.copy_file_range(os.open(sys.argv[1], os.O_RDONLY), d, 4)'
check_kill() {	# check_kill LABEL
	local l=$1
	expect "$l: write" "$(priv_after 6777 sh -c "echo x >> $K/f")" "-rwxrwxrwx"
	expect "$l: truncate" "$(priv_after 6777 truncate -s 0 "$K/f")" "-rwxrwxrwx"
	expect "$l: fallocate" "$(priv_after 6777 fallocate -l 8192 "$K/f")" "-rwxrwxrwx"
	expect "$l: O_DIRECT" "$(priv_after 6777 dd if=/dev/zero of="$K/f" bs=4096 count=1 \
		oflag=direct conv=notrunc status=none)" "-rwxrwxrwx"
	expect "$l: copy_file_range" "$(priv_after 6777 "$PY_ALL" -c "$cfr" "$K/src" "$K/f")" \
		"-rwxrwxrwx"
	# as tmpfs on the same kernel (setattr_should_drop_sgid): the writer is
	# outside the file's group, so setgid goes even without group-exec
	expect "$l: setgid without group x, writer outside the group" \
		"$(priv_after 2666 sh -c "echo x >> $K/f")" "-rw-rw-rw-"
}
check_kill default
echo x >> "$K/f"
chmod 6777 "$K/f"
echo x >> "$K/f"
expect "root's write keeps them" "$(mode_of "$K/f")" "-rwsrwsrwx"
chown 65534 "$K/f"
expect "chown clears both (group x)" "$(mode_of "$K/f")" "-rwxrwxrwx"
chmod 2644 "$K/f"
chown 0 "$K/f"
expect "chown by root keeps setgid without group x" "$(mode_of "$K/f")" "-rw-r-Sr--"

# ------------------------------------------------------------------ 4. handles
step "file handles"
cat > "$TMP/h.c" <<'CEOF'
/* h save PATH FILE | h open MOUNT FILE: name_to_handle_at / open_by_handle_at */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct { struct file_handle fh; unsigned char b[MAX_HANDLE_SZ]; } h;
	char buf[4096], link[64];
	struct stat st;
	int id, fd, m;
	ssize_t n;
	FILE *f;

	if (argc != 4)
		return 2;
	if (!strcmp(argv[1], "save")) {
		h.fh.handle_bytes = MAX_HANDLE_SZ;
		if (name_to_handle_at(AT_FDCWD, argv[2], &h.fh, &id, 0)) {
			perror("name_to_handle_at");
			return 1;
		}
		f = fopen(argv[3], "wb");
		return !f || fwrite(&h, sizeof(h), 1, f) != 1 || fclose(f);
	}
	f = fopen(argv[3], "rb");
	m = open(argv[2], O_RDONLY | O_DIRECTORY);
	if (!f || m < 0 || fread(&h, sizeof(h), 1, f) != 1)
		return 1;
	fd = open_by_handle_at(m, &h.fh, O_RDONLY);
	if (fd < 0) {
		printf("%s\n", strerrorname_np(errno));
		return 0;
	}
	fstat(fd, &st);
	if (S_ISDIR(st.st_mode)) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, buf, sizeof(buf) - 1);
	} else {
		n = read(fd, buf, sizeof(buf) - 1);
	}
	buf[n > 0 ? n : 0] = 0;
	printf("%s %s", S_ISDIR(st.st_mode) ? "dir" : "file", buf);
	return 0;
}
CEOF
cc -O2 -Wall -o "$TMP/h" "$TMP/h.c" || fail "cannot build the handle helper"
H=$MNT/h
mkdir -p "$H/a/b/c"
echo one > "$H/a/b/f1"
echo two > "$H/f2"
echo three > "$H/f3"
echo four > "$H/a/f4"
for p in a/b/f1 f2 f3 a/f4 a/b/c a; do
	"$TMP/h" save "$H/$p" "$TMP/${p//\//_}.h" || fail "name_to_handle_at $p"
done
hopen() { "$TMP/h" open "$MNT" "$TMP/${1//\//_}.h" | tr -d '\n'; }
drop_caches
expect "file after drop_caches" "$(hopen a/b/f1)" "file one"
expect "directory, reconnected by '..'" "$(hopen a/b/c)" "dir $H/a/b/c"
mv "$H/a/b/f1" "$H/f1-renamed"
ln "$H/f2" "$H/f2-link"
rm "$H/f2" "$H/f3"
drop_caches
expect "renamed" "$(hopen a/b/f1)" "file one"
expect "through a hard link" "$(hopen f2)" "file two"
expect "unlinked" "$(hopen f3)" ESTALE
rm -rf "$H/a/b"
drop_caches
expect "removed directory" "$(hopen a/b/c)" ESTALE
remount
expect "after a remount" "$(hopen a/b/f1)" "file one"
expect "a directory after a remount" "$(hopen a)" "dir $H/a"
expect "unlinked, after a remount" "$(hopen f3)" ESTALE
# the freed numbers come back after a checkpoint: new generations must differ
rm "$H/a/f4"
sync
for i in $(seq 200); do echo "$i" > "$H/new$i"; done
sync
drop_caches
expect "unlinked, numbers reused" "$(hopen a/f4) $(hopen f3)" "ESTALE ESTALE"
if [ -x "$OBH" ]; then
	# generic/426, 467, 477 in short: -c creates, then each mode checks
	for t in -d -dp -l -u -m -rwa -dk -p -pm; do
		rm -rf "$MNT/obh"
		mkdir "$MNT/obh"
		"$OBH" -cp "$MNT/obh" 100 || fail "open_by_handle -cp"
		[ "$t" = -u ] && { "$OBH" -l "$MNT/obh" 100 || fail "open_by_handle -l"; }
		"$OBH" $t "$MNT/obh" 100 || fail "open_by_handle $t"
	done
	log "xfstests open_by_handle: all modes pass"
else
	log "note: $OBH not found; xfstests' open_by_handle not run"
fi

# ------------------------------------------------------------------ 5. timestamps
step "nanosecond timestamps"
touch -d "2021-03-04 05:06:07.123456789" "$MNT/ts"
touch -m -d "1999-12-31 23:59:59.000000001" "$MNT/ts"
mkdir "$MNT/tsd"
touch -d "1960-06-01 12:00:00.25" "$MNT/tsd"
ln -s x "$MNT/tsl"
touch -h -d "2300-01-01 00:00:00.999999999" "$MNT/tsl"
times() { stat -c '%x|%y' "$MNT/ts" "$MNT/tsd" "$MNT/tsl" | tr '\n' ' '; }
want="2021-03-04 05:06:07.123456789 +0000|1999-12-31 23:59:59.000000001 +0000 "
want+="1960-06-01 12:00:00.250000000 +0000|1960-06-01 12:00:00.250000000 +0000 "
want+="2300-01-01 00:00:00.999999999 +0000|2300-01-01 00:00:00.999999999 +0000 "
TZ=UTC expect "touch -d" "$(TZ=UTC times)" "$want"
remount noacl
TZ=UTC expect "after a remount" "$(TZ=UTC times)" "$want"

# ------------------------------------------------------------------ 6. noacl
step "-o noacl"
expect "ACLs survive remounts" "$(acl_of "$A/f")" \
	"user::rw- group::--- group:nogroup:r-- mask::r-- other::---"
umask 022
touch "$D/noacl"
expect "no inheritance, the umask" "$(mode_of "$D/noacl") $(getfacl -cps "$D/noacl" | wc -l)" \
	"-rw-r--r-- 0"
remount
expect "the noacl file, with acl again" "$(mode_of "$D/noacl")" "-rw-r--r--"
touch "$D/back"
expect "inheritance is back" "$(mode_of "$D/back")" "-rw-rw----"

# ------------------------------------------------------------------ cache modes
step "writeback_cache, and direct_io where the daemon clears setuid/setgid itself"
remount writeback_cache
check_kill writeback_cache
remount direct_io
check_kill direct_io
umount_uf2fs "$MNT" || fail "unmount"
fsck_clean "$IMG" || fail "fsck.f2fs at the end"
pass "ACLs, setuid/setgid, file handles and timestamps"
