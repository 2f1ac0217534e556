#!/bin/bash
# A write(2) against a hard block limit, as Linux f2fs answers it (measured on
# the Debian kernel in QEMU with the same images and writes, see
# docs/decisions.md "Disk quota"): f2fs_preallocate_blocks first reserves the
# write's whole blocks one dnode at a time, all or nothing per dnode; if the
# first dnode's do not fit, the write fails whole with EDQUOT; otherwise it
# goes on page by page and stops at the first page that does not fit, a
# short write. Two users on one image, for the default mount with usrquota
# (quota limits turn writeback_cache off: uf2fs stats must say so, and under
# it the kernel's page cache would take any write whole) and for an explicit
# -o no_writeback_cache:
#
#   A  limit 2048 KiB: 1 MiB + 8 KiB, then a 1 MiB write from there
#      (within the inode's own addresses, past the limit): EDQUOT, nothing
#      written; a 4 KiB write into the last block under the limit works.
#   B  limit 4096 KiB: one 8 MiB write into a new file: the inode's addresses
#      fit, the next dnode's blocks do not; the write returns 4190208 bytes
#      (Linux's count: the new dnode is charged too), usage is the limit, the
#      next write is EDQUOT. (FUSE sends at most 1 MiB per request, so uf2fs
#      decides per request; Linux decides per write(2): they agree here, not
#      for a write of more than 1 MiB, or one starting inside a block (the
#      kernel sends the partial head block alone), whose first dnode does not
#      fit: there uf2fs gives a short write where Linux gives EDQUOT.)
#
# After unmount: usage per user (uf2fs quota and the independent recount,
# tests/lib/f2fsimg.py quota-usage) as Linux left it, fsck.f2fs -f clean.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_root
need_fuse
need_cmd setpriv
SYS_PY=/usr/bin/python3	# the caller is not root: not a per-user interpreter
[ -x "$SYS_PY" ] || skip "no /usr/bin/python3"
tmpdir_init quota-short
MNT=$TMP/mnt
chmod 755 "$TMP"

# as_user UID FILE OFF LEN: one pwrite; prints the count or the errno name
as_user() {
	setpriv --reuid="$1" --regid="$1" --clear-groups "$SYS_PY" -c 'import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
try:
    print(os.pwrite(fd, b"q" * int(sys.argv[3]), int(sys.argv[2])))
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))' "$2" "$3" "$4"
}

expect() {	# WHAT GOT WANT
	[ "$2" = "$3" ] || fail "$1: got $2, want $3"
	log "$1: $2"
}

run() {
	local opts=$1 img=$TMP/img
	step "mount -o $opts"
	rm -f "$img"
	truncate -s 64M "$img"
	"$MKFS_F2FS" -f -q -g android "$img" >/dev/null || fail "mkfs.f2fs -g android"
	"$UF2FS" setquota -u 1000 0 2048 0 0 "$img" || fail "setquota 1000"
	"$UF2FS" setquota -u 1001 0 4096 0 0 "$img" || fail "setquota 1001"
	mount_uf2fs "$img" "$MNT" "$opts" || fail "mount -o $opts"
	"$UF2FS" stats "$MNT" | grep -qx "mount: no_writeback_cache" ||
		fail "$opts: not write-through: $("$UF2FS" stats "$MNT" | grep '^mount:')"
	mkdir "$MNT/u" "$MNT/v"
	chown 1000 "$MNT/u"
	chown 1001 "$MNT/v"
	expect "A: first write" "$(as_user 1000 "$MNT/u/f" 0 1056768)" 1056768
	expect "A: 1 MiB past the limit" "$(as_user 1000 "$MNT/u/f" 1056768 1048576)" EDQUOT
	expect "A: size" "$(stat -c %s "$MNT/u/f")" 1056768
	expect "A: the last block under the limit" "$(as_user 1000 "$MNT/u/f" 2093056 4096)" 4096
	expect "B: 8 MiB across the limit" "$(as_user 1001 "$MNT/v/g" 0 8388608)" 4190208
	expect "B: size" "$(stat -c %s "$MNT/v/g")" 4190208
	expect "B: the next write" "$(as_user 1001 "$MNT/v/g" 4190208 4096)" EDQUOT
	expect "B: a rewrite inside the file" "$(as_user 1001 "$MNT/v/g" 8192 65536)" 65536
	umount_uf2fs "$MNT" || fail "unmount"
	fsck_clean "$img" || fail "$opts: fsck.f2fs after the short write"
	# A: 258 data blocks + 1; B: 1023 data blocks and a dnode
	"$UF2FS" quota -u "$img" | grep -qE "^#1000 +-- +1036 " ||
		fail "$opts: user 1000: $("$UF2FS" quota -u "$img" | grep '^#1000')"
	"$UF2FS" quota -u "$img" | grep -qE "^#1001 +-- +4096 " ||
		fail "$opts: user 1001 is not at its limit: $("$UF2FS" quota -u "$img" | grep '^#1001')"
	"$PY" "$LIB/f2fsimg.py" quota-usage "$img" | grep -q "^user 1001 $((4096 * 1024)) 2$" ||
		fail "$opts: the independent recount differs: $("$PY" "$LIB/f2fsimg.py" \
			quota-usage "$img" | grep '^user 100')"
	log "usage as Linux leaves it (1000: 1036 KiB, 1001: the limit), fsck.f2fs clean"
}

run rw,usrquota,allow_other
run rw,usrquota,allow_other,no_writeback_cache
pass "writes against a hard limit: EDQUOT or a short write where Linux gives them"
