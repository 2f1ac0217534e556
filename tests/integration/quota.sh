#!/bin/bash
# Disk quota on quota_ino images (lib/quota.c): what uf2fs writes must be what
# fsck.f2fs recounts. On a `mkfs.f2fs -g android` image and on one with
# casefolding and compression too, a workload creates, grows, truncates,
# chowns, chgrps, changes project IDs (chattr -p, PROJINHERIT), hard-links,
# sets large xattrs, fallocates and punches, deletes, keeps an unlinked file
# open, writes compressed files and runs GC. After unmount: fsck.f2fs -f must
# find nothing to fix, quota included, and `uf2fs quota` (on the live mount
# and on the image) must equal the usage an independent parser
# (tests/lib/f2fsimg.py quota-usage) counts from the inodes; a rename into
# another project is EXDEV. Then, on the first image: a second mount changes
# more (the files uf2fs wrote are read back), and a crash after an fsync
# (roll-forward recovery, then a recount); last, limits with usrquota and
# prjquota (EDQUOT for a non-root writer, root exempt), and a chgrp past a
# group's limit.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_root
need_fuse
need_cmd chattr
need_cmd setpriv
need_cmd setfattr
tmpdir_init quota
MNT=$TMP/mnt
chmod 755 "$TMP"

# fsck.f2fs -f: clean, and not a word about quota beyond the feature list
fsck_quota_clean() {
	local img=$1 out
	fsck_clean "$img" || fail "fsck after $2"
	out=$(cat "$img.fsck.log")
	if grep -iE 'quota' <<<"$out" | grep -viE 'superblock features|^Info:' >&2; then
		fail "fsck.f2fs mentions quota after $2"
	fi
	log "fsck.f2fs -f: clean, quota included ($2)"
}

# uf2fs quota output -> "type id KiB inodes" lines
report_of() {
	"$UF2FS" quota "$1" | awk '
		/^\*\*\* Report for/ { t = $4 }
		/^#/ { id = substr($1, 2); n = ($6 ~ /^[0-9]+$/) ? $6 : $7; print t, id, $3, n }' |
		sort
}

# the independent count, in the same form (space in KiB)
usage_of() {
	"$PY" "$LIB/f2fsimg.py" quota-usage "$1" | awk '{ print $1, $2, $3 / 1024, $4 }' | sort
}

compare_usage() {
	local img=$1 what=$2 live=${3:-}
	report_of "$img" >"$TMP/report" || fail "uf2fs quota $img"
	usage_of "$img" >"$TMP/usage" || fail "f2fsimg quota-usage"
	diff -u "$TMP/usage" "$TMP/report" >&2 || fail "uf2fs quota differs from the inodes ($what)"
	if [ -n "$live" ]; then
		diff -u "$TMP/usage" "$live" >&2 ||
			fail "uf2fs quota on the live mount differed from the image ($what)"
	fi
	log "uf2fs quota = recount from the inodes ($what): $(wc -l <"$TMP/usage") ids"
}

# project IDs through FS_IOC_FSSETXATTR (chattr -p) and FSGETXATTR (lsattr -p)
projid_of() { lsattr -pd "$1" | awk '{ print $1 }'; }

workload() {
	local w=$MNT/w compress=$1
	mkdir "$w" "$w/users" "$w/many"
	dd if=/dev/urandom of="$w/users/a" bs=4k count=100 status=none
	chown 1000:1000 "$w/users/a"
	dd if=/dev/zero of="$w/users/b" bs=1M count=3 status=none
	chown 1001:1002 "$w/users/b"
	truncate -s 10k "$w/users/b"			# shrink: blocks freed
	truncate -s 8M "$w/users/sparse"		# holes only
	chown 1003 "$w/users/sparse"
	fallocate -l 1M "$w/users/falloc"		# reserved blocks count
	fallocate -n -o 2M -l 512k "$w/users/falloc"	# past EOF, kept size
	fallocate -p -o 0 -l 256k "$w/users/falloc"	# punched
	chown 1002:1004 "$w/users/falloc"
	chgrp 1005 "$w/users/a"
	ln "$w/users/a" "$w/users/a-link"		# counted once
	ln -s "$(head -c 3000 /dev/zero | tr '\0' x)" "$w/users/longlink"
	chown -h 1006 "$w/users/longlink"
	echo small >"$w/users/inline"			# inline data: no block
	setfattr -n user.big -v "$(head -c 3000 /dev/zero | tr '\0' y)" "$w/users/inline"
	chown 1007:1007 "$w/users/inline"		# its xattr node counts
	for i in $(seq 1 150); do echo "$i" >"$w/many/file-with-a-longer-name-$i"; done
	chown -R 1008:1008 "$w/many"			# a directory of dentry blocks
	rm -f "$w/many/file-with-a-longer-name-1"*	# some deleted
	# ids spread over the quota tree: several data blocks (14 entries each)
	# and branches at every level of the 4-level tree
	mkdir "$w/ids"
	for i in $(seq 0 44); do
		echo "$i" >"$w/ids/f$i"
		chown $(( (i * 2654435761) % 4000000000 )):$(( i * 977 )) "$w/ids/f$i"
	done
	# project quota: a PROJINHERIT tree, and a file moved to a project
	mkdir "$w/proj"
	chattr +P -p 77 "$w/proj" || fail "chattr -p on a directory"
	dd if=/dev/urandom of="$w/proj/p1" bs=4k count=20 status=none
	mkdir "$w/proj/sub"
	echo x >"$w/proj/sub/p2"
	[ "$(projid_of "$w/proj/sub/p2")" = 77 ] || fail "project ID not inherited"
	chattr -p 88 "$w/users/a" || fail "chattr -p on a file"
	[ "$(projid_of "$w/users/a")" = 88 ] || fail "lsattr -p does not read the project ID back"
	"$PY" -c 'import os, sys
try:
    os.rename(sys.argv[1], sys.argv[2])
except OSError as e:
    sys.exit(0 if e.errno == 18 else 1)
sys.exit(1)' "$w/users/b" "$w/proj/b" || fail "rename into another project: want EXDEV"
	if [ "$compress" = 1 ]; then
		mkdir "$w/cz"
		chattr +c "$w/cz" || fail "chattr +c"
		head -c 2M /dev/zero | tr '\0' z >"$w/cz/zeros"
		dd if=/dev/urandom of="$w/cz/rand" bs=64k count=4 status=none
		chown 1009:1009 "$w/cz/zeros" "$w/cz/rand"
	fi
	# churn, then GC moves blocks (usage must not change)
	for i in 1 2 3 4; do
		dd if=/dev/urandom of="$w/churn$i" bs=512k count=2 status=none
	done
	sync
	rm -f "$w/churn1" "$w/churn3"
	# F2FS_IOC_WRITE_CHECKPOINT, then F2FS_IOC_GARBAGE_COLLECT (sync) until no
	# victim (Debian's f2fs_io 1.15 has neither command)
	"$PY" -c 'import errno, fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.ioctl(fd, 0xf507)
for i in range(8):
    try:
        fcntl.ioctl(fd, 0x4004f506, struct.pack("I", 1))
    except OSError as e:
        if e.errno != errno.EAGAIN:
            raise
        break' "$MNT" || fail "checkpoint and GC ioctls"
	"$UF2FS" stats "$MNT" | grep -qE 'gc +[1-9][0-9]* segments, [1-9]' ||
		fail "GC moved nothing: $("$UF2FS" stats "$MNT" | grep -E '^ +gc ')"
	chown 1010 "$w/churn2"
}

run_image() {
	local name=$1 mkfs_opts=$2 compress=$3 full=$4 img=$TMP/$1.img
	step "$name: mkfs.f2fs $mkfs_opts"
	rm -f "$img"
	truncate -s 128M "$img"
	# shellcheck disable=SC2086
	"$MKFS_F2FS" -f -q $mkfs_opts "$img" >/dev/null || fail "mkfs.f2fs $mkfs_opts"
	mount_uf2fs "$img" "$MNT" rw || fail "mount $name"
	workload "$compress"
	# an unlinked file held open is an orphan: still charged until closed
	exec 7>"$MNT/w/orphan"
	dd if=/dev/urandom bs=4k count=30 status=none >&7
	rm "$MNT/w/orphan"
	"$UF2FS" quota "$MNT" >/dev/null || fail "uf2fs quota on the live mount"
	exec 7>&-
	sleep 0.5
	report_of "$MNT" >"$TMP/live" || fail "uf2fs quota MNT"
	umount_uf2fs "$MNT" || fail "unmount $name"
	fsck_quota_clean "$img" "$name workload"
	compare_usage "$img" "$name workload" "$TMP/live"
	[ "$full" = 1 ] || return 0

	step "$name: a second mount reads the files uf2fs wrote and changes more"
	mount_uf2fs "$img" "$MNT" rw || fail "remount $name"
	rm -rf "$MNT/w/many"
	chown -R 2000:2001 "$MNT/w/proj"
	chattr -p 99 "$MNT/w/proj/p1"
	dd if=/dev/urandom of="$MNT/w/users/a" bs=4k count=50 seek=100 conv=notrunc status=none
	umount_uf2fs "$MNT" || fail "unmount $name (2)"
	fsck_quota_clean "$img" "$name second mount"
	compare_usage "$img" "$name second mount"

	step "$name: fsync, crash, roll-forward recovery, recount"
	mount_uf2fs "$img" "$MNT" rw,checkpoint_interval=3600,background_gc=off ||
		fail "mount $name (3)"
	"$PY" -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, os.urandom(40960)); os.fchown(fd, 3000, 3001); os.fsync(fd)' \
		"$MNT/w/fsynced" || fail "fsync"
	kill -9 "${_MOUNT_PID[$MNT]}"
	wait "${_MOUNT_PID[$MNT]}" 2>/dev/null
	unset "_MOUNT_PID[$MNT]"
	fusermount3 -uz "$MNT" 2>/dev/null
	"$UF2FS" info "$img" | grep -q "needs recovery: yes" || fail "no roll-forward pending"
	mount_uf2fs "$img" "$MNT" rw || fail "mount after the crash"
	[ "$(stat -c %s "$MNT/w/fsynced")" = 40960 ] || fail "fsync'd file not recovered"
	umount_uf2fs "$MNT" || fail "unmount after recovery"
	fsck_quota_clean "$img" "$name roll-forward"
	compare_usage "$img" "$name roll-forward"
	grep -q "^user 3000 40 1$" "$TMP/usage" || fail "the recovered file is not counted"

	step "$name: a damaged quota file is recounted at the next read-write mount"
	# the user quota file is inode 4 on mkfs.f2fs images: check its magic, break it
	"$PY" - "$img" "$LIB" <<'PYEOF' || fail "could not damage the user quota file"
import struct, sys
sys.path.insert(0, sys.argv[2])
import f2fsimg
img = f2fsimg.Image(sys.argv[1], True)
addr = img.bmap(img.inode(4), 0)
blk = bytearray(img.block(addr))
assert struct.unpack_from("<I", blk, 0)[0] == 0xd9c01f11, "not the user quota file"
blk[0:4] = b"\0\0\0\0"
img.write_block(addr, bytes(blk))
PYEOF
	mount_uf2fs "$img" "$MNT" rw || fail "mount with a damaged quota file"
	echo more >"$MNT/w/after-damage"
	umount_uf2fs "$MNT" || fail "unmount after the damage"
	grep -q "usage will be recounted" "$(mount_log "$MNT")" ||
		fail "the damaged quota file went unnoticed"
	fsck_quota_clean "$img" "$name damaged quota file"
	compare_usage "$img" "$name damaged quota file"
}

run_image android "-g android" 0 1
run_image casefold "-g android -O casefold,compression -C utf8" 1 0

step "limits: usrquota and prjquota"
IMG=$TMP/limits.img
truncate -s 128M "$IMG"
"$MKFS_F2FS" -f -q -g android "$IMG" >/dev/null
"$UF2FS" setquota -u 1000 1024 2048 0 5 "$IMG" || fail "setquota on an image"
"$UF2FS" setquota -P 55 0 512 0 0 "$IMG" || fail "setquota -P on an image"
"$UF2FS" setquota -g 3000 0 64 0 0 "$IMG" || fail "setquota -g on an image"
"$UF2FS" quota -u "$IMG" | grep -qE '^#1000 .* 1024 +2048 ' || fail "limits not stored"
mount_uf2fs "$IMG" "$MNT" rw,usrquota,grpquota,prjquota,allow_other || fail "mount -o usrquota"
mkdir "$MNT/u" "$MNT/p" "$MNT/g"
chown 1000 "$MNT/u"
chmod 777 "$MNT/u" "$MNT/p" "$MNT/g"
chattr +P -p 55 "$MNT/p"
as_user() { setpriv --reuid=1000 --regid=1000 --clear-groups "$@"; }
out=$(as_user dd if=/dev/zero of="$MNT/u/big" bs=64k count=64 2>&1) && fail "wrote past the hard limit"
grep -q "Disk quota exceeded" <<<"$out" || fail "dd past the limit: $out"
size=$(stat -c %s "$MNT/u/big")
[ "$size" = 2097152 ] || fail "hard limit 2048 KiB: wrote $size bytes"
for i in 1 2 3; do as_user touch "$MNT/u/f$i" || fail "create under the inode limit"; done
as_user touch "$MNT/u/f4" 2>/dev/null && fail "created past the inode hard limit"
dd if=/dev/zero of="$MNT/u/root" bs=64k count=64 status=none || fail "root is not limited"
# another user: 1000 is at its own limits
out=$(setpriv --reuid=1001 --regid=1001 --clear-groups \
	dd if=/dev/zero of="$MNT/p/pbig" bs=64k count=16 2>&1) && fail "past the project limit"
[ "$(stat -c %s "$MNT/p/pbig")" = 524288 ] || fail "project hard limit 512 KiB"
# chgrp by the owner: the new group takes the file's blocks (dquot_transfer)
as_1001() { setpriv --reuid=1001 --regid=1001 --groups=3000 "$@"; }
as_1001 dd if=/dev/urandom of="$MNT/g/f" bs=4k count=32 status=none || fail "write as 1001"
as_1001 chgrp 3000 "$MNT/g/f" 2>/dev/null && fail "chgrp past the group's hard limit"
as_1001 truncate -s 32k "$MNT/g/f" || fail "truncate as 1001"
as_1001 chgrp 3000 "$MNT/g/f" || fail "chgrp under the group's limit"
umount_uf2fs "$MNT" || fail "unmount limits"
fsck_quota_clean "$IMG" "limits"
compare_usage "$IMG" "limits"
pass "quota files match fsck.f2fs's recount after every workload; limits enforced"
