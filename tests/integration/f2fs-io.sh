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

# --- atomic commit and abort, in both write modes ---
# Under writeback_cache (the rw default) the kernel holds the writes in its
# pages; the daemon has it write them back at each boundary (fuse_ioctl.c).
atomic_commit_abort() {
	local opts=$1 old committed
	mount_uf2fs "$IMG" "$MNT" "$opts" || fail "mount $opts"
	printf 'original content\n' > "$MNT/db"
	sync -f "$MNT/db"
	old=$(sum "$MNT/db")
	f2fs_io write 1 0 4 inc_num atomic_commit "$MNT/db" >/dev/null || fail "atomic_commit ($opts)"
	committed=$(sum "$MNT/db")
	[ "$committed" != "$old" ] || fail "atomic commit changed nothing ($opts)"
	[ "$(stat -c %s "$MNT/db")" = 16384 ] || fail "size after commit: $(stat -c %s "$MNT/db")"
	f2fs_io write 1 0 2 rand atomic_abort "$MNT/db" >/dev/null || fail "atomic_abort ($opts)"
	[ "$(sum "$MNT/db")" = "$committed" ] || fail "atomic abort changed the file ($opts)"
	umount_uf2fs "$MNT" || fail "unmount"
	check_fsck "atomic commit/abort ($opts)"
	mount_uf2fs "$IMG" "$MNT" || fail "remount"
	[ "$(sum "$MNT/db")" = "$committed" ] || fail "committed content lost after remount ($opts)"
	umount_uf2fs "$MNT"
	echo "atomic commit/abort ($opts): ok"
}

# A program does START and pwrite, then fsync (staged data is not made
# durable) or COMMIT (durable at once), and the daemon is killed: the image
# must hold the old content after fsync and the new one after COMMIT.
atomic_crash() {
	local opts=$1 step=$2 want=$3 writer
	mount_uf2fs "$IMG" "$MNT" "$opts" || fail "mount"
	rm -f "$MNT/db.ready"
	python3 - "$MNT/db" "$step" <<'EOF' &
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.ioctl(fd, 0xf501)				# F2FS_IOC_START_ATOMIC_WRITE
os.pwrite(fd, b"X" * 40000, 0)
if sys.argv[2] == "commit":
	fcntl.ioctl(fd, 0xf502)			# F2FS_IOC_COMMIT_ATOMIC_WRITE
else:
	os.fsync(fd)
open(sys.argv[1] + ".ready", "w").close()
time.sleep(60)
EOF
	writer=$!
	for _ in $(seq 100); do [ -e "$MNT/db.ready" ] && break; sleep 0.1; done
	[ -e "$MNT/db.ready" ] || fail "atomic writer did not start ($opts, $step)"
	pkill -9 -f "uf2fs mount $IMG" || fail "no daemon to kill"
	kill "$writer" 2>/dev/null
	wait "$writer" 2>/dev/null
	fusermount3 -uz "$MNT" 2>/dev/null
	sleep 0.5
	mount_uf2fs "$IMG" "$MNT" rw || fail "mount after the crash"
	[ "$(head -c 40000 "$MNT/db" | md5sum | cut -d' ' -f1)" = "$want" ] ||
		fail "after a crash at atomic $step ($opts): not the expected content"
	umount_uf2fs "$MNT"
	check_fsck "a crash at atomic $step ($opts)"
	echo "crash after atomic $step ($opts): ok"
}

new_image
atomic_commit_abort rw
atomic_commit_abort rw,no_writeback_cache
xs=$(head -c 40000 /dev/zero | tr '\0' X | md5sum | cut -d' ' -f1)
for opts in rw rw,no_writeback_cache; do
	mount_uf2fs "$IMG" "$MNT" || fail "mount"
	before=$(head -c 40000 "$MNT/db" | md5sum | cut -d' ' -f1)
	umount_uf2fs "$MNT"
	atomic_crash "$opts" fsync "$before"
	atomic_crash "$opts" commit "$xs"
	new_image
	atomic_commit_abort "$opts"
done

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
