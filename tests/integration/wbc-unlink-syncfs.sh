#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Under -o writeback_cache the kernel keeps a file's mtime and ctime and
# writes them back with a times-only SETATTR, also after the unlink that let
# f2fs free the inode (nothing had it open). That SETATTR must not fail: its
# error would stay in the superblock's writeback error and make the next
# syncfs(2) fail with ENOENT (it did, after every `rm` of a fresh file, and
# after untarring any tree that replaces files). Also without writeback_cache.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_fuse
need_f2fs_tools
need_uf2fs
need_cmd python3
tmpdir_init wbc-unlink-syncfs
IMG=$TMP/w.img MNT=$TMP/mnt

syncfs() {
	python3 - "$1" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
if libc.syncfs(fd) < 0:
    e = ctypes.get_errno()
    print("syncfs: %s" % os.strerror(e), file=sys.stderr)
    sys.exit(1)
PY
}

for opts in rw,writeback_cache rw; do
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
	umount_uf2fs "$MNT" || fail "unmount"
	fsck_clean "$IMG" || fail "[$opts] fsck"
done
pass "times-only SETATTR after unlink; syncfs clean"
