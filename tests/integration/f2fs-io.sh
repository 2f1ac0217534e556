#!/bin/bash
# f2fs_io from f2fs-tools, unchanged, against a read-write uf2fs mount:
#  - atomic writes: commit shows and keeps the new content, abort keeps the
#    old, and a daemon killed between start and commit leaves the old content
#    after recovery;
#  - shutdown: after `f2fs_io shutdown 1` (checkpoint, then stop) writes fail
#    with EIO and a remount is consistent; after `f2fs_io shutdown 2` (no
#    sync) a remount still has every fsync'd byte.
# fsck.f2fs is clean after every step.
set -u
. "$(dirname "$0")/../lib/common.sh"
command -v f2fs_io >/dev/null || skip "f2fs_io not installed"
tmpdir_init f2fs-io
IMG=$TMP/io.img MNT=$TMP/mnt

new_image() {
	rm -f "$IMG"
	truncate -s 256M "$IMG"
	mkfs.f2fs -q -f -O extra_attr,inode_checksum,inode_crtime "$IMG" >/dev/null
}
sum() { md5sum < "$1" | cut -d' ' -f1; }
check_fsck() { fsck_clean "$IMG" || fail "fsck after $1"; }

# --- atomic commit and abort ---
# Under writeback_cache (the rw default) the kernel sends writes when it
# likes, after a commit or an abort: atomic writes are refused there.
new_image
mount_uf2fs "$IMG" "$MNT" rw || fail "mount"
printf 'original content\n' > "$MNT/db"
if f2fs_io write 1 0 1 zero atomic_commit "$MNT/db" >/dev/null 2>&1; then
	fail "atomic write accepted under writeback_cache"
fi
[ "$(cat "$MNT/db")" = "original content" ] || fail "refused atomic write changed the file"
umount_uf2fs "$MNT" || fail "unmount"
mount_uf2fs "$IMG" "$MNT" rw,no_writeback_cache || fail "mount"
sync -f "$MNT/db"
old=$(sum "$MNT/db")
f2fs_io write 1 0 4 inc_num atomic_commit "$MNT/db" >/dev/null || fail "atomic_commit"
committed=$(sum "$MNT/db")
[ "$committed" != "$old" ] || fail "atomic commit changed nothing"
[ "$(stat -c %s "$MNT/db")" = 16384 ] || fail "size after commit: $(stat -c %s "$MNT/db")"
f2fs_io write 1 0 2 rand atomic_abort "$MNT/db" >/dev/null || fail "atomic_abort"
[ "$(sum "$MNT/db")" = "$committed" ] || fail "atomic abort changed the file"
umount_uf2fs "$MNT" || fail "unmount"
check_fsck "atomic commit/abort"
mount_uf2fs "$IMG" "$MNT" || fail "remount"
[ "$(sum "$MNT/db")" = "$committed" ] || fail "committed content lost after remount"
umount_uf2fs "$MNT"
echo "atomic commit/abort: ok"

# --- a crash between start and commit leaves the old content ---
mount_uf2fs "$IMG" "$MNT" rw,no_writeback_cache || fail "mount"
python3 - "$MNT/db" <<'EOF' &
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.ioctl(fd, 0xf501)				# F2FS_IOC_START_ATOMIC_WRITE
os.pwrite(fd, b"X" * 40000, 0)
os.fsync(fd)					# staged data is not made durable
open(sys.argv[1] + ".ready", "w").close()
time.sleep(60)
EOF
writer=$!
for _ in $(seq 100); do [ -e "$MNT/db.ready" ] && break; sleep 0.1; done
[ -e "$MNT/db.ready" ] || fail "atomic writer did not start"
pkill -9 -f "uf2fs mount $IMG" || fail "no daemon to kill"
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
fusermount3 -uz "$MNT" 2>/dev/null
sleep 0.5
mount_uf2fs "$IMG" "$MNT" rw || fail "mount after the crash"
[ "$(sum "$MNT/db")" = "$committed" ] || fail "uncommitted atomic data survived a crash"
umount_uf2fs "$MNT"
check_fsck "a crash inside an atomic write"
echo "crash before commit: old content kept"

# --- shutdown 1: checkpoint, then stop ---
new_image
mount_uf2fs "$IMG" "$MNT" rw || fail "mount"
mkdir "$MNT/d"
head -c 1000000 /dev/urandom > "$MNT/d/f"
want=$(sum "$MNT/d/f")
f2fs_io shutdown 1 "$MNT" >/dev/null || fail "shutdown 1"
if touch "$MNT/d/after" 2>/dev/null; then fail "a write succeeded after shutdown"; fi
umount_uf2fs "$MNT"	# the daemon reports the refused final checkpoint
check_fsck "shutdown 1"
mount_uf2fs "$IMG" "$MNT" || fail "remount after shutdown 1"
[ "$(sum "$MNT/d/f")" = "$want" ] || fail "data checkpointed by shutdown 1 is lost"
umount_uf2fs "$MNT"
echo "shutdown 1: ok"

# --- shutdown 2: no sync; fsync'd data survives ---
new_image
mount_uf2fs "$IMG" "$MNT" rw || fail "mount"
python3 - "$MNT" <<'EOF'
import os, sys
d = sys.argv[1]
with open(d + "/synced", "wb") as f:
	f.write(b"S" * 100000)
	f.flush()
	os.fsync(f.fileno())
with open(d + "/unsynced", "wb") as f:
	f.write(b"U" * 100000)
EOF
f2fs_io shutdown 2 "$MNT" >/dev/null || fail "shutdown 2"
umount_uf2fs "$MNT"
mount_uf2fs "$IMG" "$MNT" rw || fail "remount after shutdown 2 (recovery)"
[ "$(head -c 100000 "$MNT/synced" | tr -d S | wc -c)" = 0 ] &&
	[ "$(stat -c %s "$MNT/synced")" = 100000 ] || fail "fsync'd data lost after shutdown 2"
umount_uf2fs "$MNT"
check_fsck "shutdown 2 and recovery"
echo "shutdown 2: fsync'd data recovered"
pass
