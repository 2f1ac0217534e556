#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Under -o writeback_cache the kernel keeps a file's mtime and ctime and
# writes them back with a times-only SETATTR, also after the unlink that let
# f2fs free the inode (nothing had it open). That SETATTR must not fail: its
# error would stay in the superblock's writeback error and make the next
# syncfs(2) fail with ENOENT (it did, after every `rm` of a fresh file, and
# after untarring any tree that replaces files). Also without writeback_cache.
#
# writeback_cache is the rw default (not with direct_io or quota limits).
#
# And utime(NULL) (touch) of an append-only file: under writeback_cache the
# kernel sends "now" as an explicit mtime; it must still be allowed, while
# explicit times stay refused (xfstests generic/079).
set -u
. "$(dirname "$0")/../lib/common.sh"
need_fuse
need_f2fs_tools
need_uf2fs
need_cmd python3 chattr f2fs_io
tmpdir_init wbc-semantics
IMG=$TMP/w.img MNT=$TMP/mnt

# syncfs(2) of the mount's root, opened afresh (the system python: a pyenv
# shim first on PATH can take seconds to start on a loaded machine)
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
syncfs() {
	"$PY" - "$1" <<'EOF2'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
if libc.syncfs(fd) < 0:
    e = ctypes.get_errno()
    print("syncfs: %s" % os.strerror(e), file=sys.stderr)
    sys.exit(1)
EOF2
}

for opts in rw,writeback_cache rw,no_writeback_cache; do
	step "$opts"
	mk_image "$IMG" 256M "" "" || fail "mkfs"
	mount_uf2fs "$IMG" "$MNT" "$opts" || fail "mount -o $opts"
	syncfs "$MNT" || fail "[$opts] syncfs of a fresh mount"
	echo x >"$MNT/a"
	rm "$MNT/a"
	syncfs "$MNT" || fail "[$opts] syncfs after writing and removing a file"
	mkdir "$MNT/d"
	for i in $(seq 1 20); do
		head -c $((i * 3000)) /dev/urandom >"$MNT/d/f$i"
		echo y >"$MNT/d/g$i"
		mv -f "$MNT/d/g$i" "$MNT/d/f$i"
	done
	syncfs "$MNT" || fail "[$opts] syncfs after replacing files by rename"
	[ "$(cat "$MNT/d/f7")" = y ] || fail "[$opts] rename target content"
	# A file still open when unlinked keeps working until closed.
	exec 9>"$MNT/open"
	rm "$MNT/open"
	echo z >&9
	exec 9>&-
	syncfs "$MNT" || fail "[$opts] syncfs after an open-unlinked file"
	echo a >"$MNT/app"
	chattr +a "$MNT/app" || fail "[$opts] chattr +a"
	old=$(stat -c %Y "$MNT/app")
	sleep 1.1
	touch "$MNT/app" || fail "[$opts] touch (utime now) of an append-only file refused"
	[ "$(stat -c %Y "$MNT/app")" -gt "$old" ] || fail "[$opts] touch did not move mtime"
	if touch -d 2001-01-01 "$MNT/app" 2>/dev/null; then
		fail "[$opts] explicit times on an append-only file allowed"
	fi
	echo b >>"$MNT/app" || fail "[$opts] append to an append-only file"
	syncfs "$MNT" || fail "[$opts] syncfs after the append-only file"
	chattr -a "$MNT/app"
	# relatime: reading back what was just written moves atime, also when
	# the kernel serves it from the pages it wrote (xfstests generic/003)
	echo aaa >"$MNT/at"
	a0=$(stat -c %X "$MNT/at")
	sleep 1.1
	cat "$MNT/at" >/dev/null
	[ "$(stat -c %X "$MNT/at")" -gt "$a0" ] || fail "[$opts] atime not updated by a read"
	# chattr changes ctime, which under writeback_cache the kernel keeps for
	# itself (xfstests generic/277): seen at once, and not undone on disk by
	# the kernel's later write-back of its older copy (the file is dirty).
	touch "$MNT/ct"
	c1=$(stat -c %z "$MNT/ct")
	sleep 1.1
	chattr +A "$MNT/ct" && chattr -A "$MNT/ct" || fail "[$opts] chattr +A/-A"
	c2=$(stat -c %z "$MNT/ct")
	[ "$c2" != "$c1" ] || fail "[$opts] ctime not updated after chattr: $c1"
	# Open and dirty while chattr runs: the kernel's copy stays stale while
	# it holds the inode, but its write-back must not undo the change.
	exec 9>>"$MNT/ct"
	echo data >&9
	sleep 1.1
	before=$(date +%s)
	chattr +d "$MNT/ct" || fail "[$opts] chattr +d"
	exec 9>&-
	umount_uf2fs "$MNT" || fail "unmount"
	mount_uf2fs "$IMG" "$MNT" "$opts" || fail "remount -o $opts"
	c4=$(stat -c %Z "$MNT/ct")
	[ "$c4" -ge "$before" ] || fail "[$opts] on-disk ctime $c4 older than chattr +d ($before)"
	umount_uf2fs "$MNT" || fail "unmount"
	fsck_clean "$IMG" || fail "[$opts] fsck"
done
# Which mounts get writeback_cache by default: rw does; direct_io and quota
# limits do not (the live `uf2fs stats` names the mode). Atomic writes work
# in every mode (under writeback_cache the kernel's pages are written back at
# each boundary; f2fs-io.sh checks their content and crashes).
step "the default"
mk_image "$IMG" 128M "extra_attr,quota" "" || fail "mkfs"
for o in rw:writeback_cache rw,no_writeback_cache:no_writeback_cache \
	rw,direct_io:direct_io rw,usrquota:no_writeback_cache \
	rw,usrquota,writeback_cache:writeback_cache ro:read-only; do
	mount_uf2fs "$IMG" "$MNT" "${o%%:*}" || fail "mount -o ${o%%:*}"
	got=$("$UF2FS" stats "$MNT" | sed -n 's/^mount: //p')
	[ "$got" = "${o##*:}" ] || fail "-o ${o%%:*}: mode '$got', expected ${o##*:}"
	if [ "${o%%:*}" != ro ]; then
		echo x >"$MNT/db"
		f2fs_io write 1 0 1 zero atomic_commit "$MNT/db" >/dev/null ||
			fail "-o ${o%%:*}: atomic write refused"
	fi
	umount_uf2fs "$MNT" || fail "unmount"
done
fsck_clean "$IMG" || fail "fsck after the default checks"

# The kernel's page writeback must not restamp mtime/ctime: its SETATTR of
# the times can be handled before the WRITE (a slow compressed cluster), and
# the disk then kept our later clock instead of what stat showed (it did,
# 4-6 ms later, every time on one machine).
step "page writeback keeps the kernel's mtime and ctime (compressed file)"
mk_image "$IMG" 128M "extra_attr,compression" "" || fail "mkfs"
mount_uf2fs "$IMG" "$MNT" rw,compress_extension=txt || fail "mount"
head -c 300000 /dev/urandom | base64 >"$MNT/c.txt" || fail "write c.txt"
umount_uf2fs "$MNT" || fail "unmount"
for round in 1 2 3; do
	mount_uf2fs "$IMG" "$MNT" rw || fail "mount"
	shown=$("$PY" - "$MNT/c.txt" <<'EOF2'
import os, sys
for off, n in ((5000, 3000), (300000, 20000)):
    fd = os.open(sys.argv[1], os.O_WRONLY)
    os.pwrite(fd, b"x" * n, off)
    os.close(fd)
st = os.stat(sys.argv[1])
print(st.st_mtime_ns, st.st_ctime_ns)
EOF2
) || fail "partial writes"
	umount_uf2fs "$MNT" || fail "unmount"
	mount_uf2fs "$IMG" "$MNT" ro || fail "mount ro"
	stored=$("$PY" -c 'import os, sys; st = os.stat(sys.argv[1]); print(st.st_mtime_ns, st.st_ctime_ns)' \
		"$MNT/c.txt")
	umount_uf2fs "$MNT" || fail "unmount"
	[ "$shown" = "$stored" ] || fail "round $round: stat showed $shown, the disk kept $stored"
done
fsck_clean "$IMG" || fail "fsck after the compressed rounds"
pass "times-only SETATTR after unlink, syncfs clean; touch of an append-only file; chattr ctime; page writeback keeps the kernel's times"
