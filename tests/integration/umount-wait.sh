#!/bin/bash
# `uf2fs umount` returns only once the data is on the image: after an untar of
# a tree of a few thousand files, with default options and with
# writeback_cache, the daemon has exited (its image lock gone) when the
# command returns, fsck.f2fs -f is clean at once, and every file read back
# offline (`uf2fs get`) is identical to the source. umount(8)'s helper name,
# umount.fuse.uf2fs, runs the same command. And it fails, saying why, when the
# daemon is gone or cannot write its final checkpoint.
#
#   UMOUNT_WAIT_SRC=DIR   the tree to copy (default: /usr/include without its
#                         four largest subtrees, ~40 MB)
set -u
. "$(dirname "$0")/../lib/common.sh"
need_fuse
need_f2fs_tools
need_uf2fs
need_cmd tar diff
tmpdir_init umount-wait

SRC=${UMOUNT_WAIT_SRC:-}
if [ -z "$SRC" ]; then
	[ -d /usr/include ] || skip "no /usr/include to copy (set UMOUNT_WAIT_SRC)"
	SRC=$TMP/src
	mkdir -p "$SRC"
	tar cf - -C /usr --exclude=include/boost --exclude=include/node \
		--exclude=include/llvm-14 --exclude=include/c++ include | tar xf - -C "$SRC"
fi
tar cf "$TMP/src.tar" -C "$SRC" .
log "source: $(find "$SRC" | wc -l) entries, $(du -sm "$SRC" | cut -f1) MiB"

daemon_pid() { pgrep -n -f "uf2fs mount -o $1 $2 " || true; }
# gone, or a zombie its new parent has not reaped yet
daemon_alive() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat" 2>/dev/null; }

# round OPTS UMOUNT-COMMAND...: untar, unmount with the command, check at once.
round() {
	local opts=$1 img=$TMP/img-$1 mnt=$TMP/mnt pid t0 t1
	shift
	step "-o $opts, unmounted by $* (at ${SECONDS}s)"
	truncate -s 768M "$img"
	"$MKFS_F2FS" -q -f "$img" >/dev/null || fail "mkfs.f2fs"
	mkdir -p "$mnt"
	"$UF2FS" mount -o "$opts" "$img" "$mnt" || fail "mount -o $opts"
	pid=$(daemon_pid "$opts" "$img")
	[ -n "$pid" ] || fail "no daemon for $img"
	tar xf "$TMP/src.tar" -C "$mnt" || fail "untar into the mount"
	"$UF2FS" stats "$mnt" | grep -E '^  (dirty|flusher|checkpoints) '
	t0=$(date +%s.%N)
	"$@" "$mnt" || fail "$* $mnt failed"
	t1=$(date +%s.%N)
	log "returned after $(echo "$t1 - $t0" | bc) s"
	# no sleep: the image must be complete now
	! daemon_alive "$pid" || fail "the daemon (pid $pid) still runs after the unmount returned"
	! _is_mounted "$mnt" || fail "$mnt is still mounted"
	fsck_clean "$img" || fail "fsck after -o $opts"
	rm -rf "$TMP/out"
	"$UF2FS" get "$img" / "$TMP/out" || fail "uf2fs get"
	diff -r --no-dereference "$SRC" "$TMP/out" >"$TMP/diff.log" 2>&1 ||
		{ head -20 "$TMP/diff.log"; fail "files differ after -o $opts"; }
	log "every file present and identical"
	rm -f "$img"
}

round rw,no_writeback_cache "$UF2FS" umount -v
# umount(8) runs /sbin/umount.fuse.uf2fs MNT: the same binary under that name
ln -sf "$UF2FS" "$TMP/umount.fuse.uf2fs"
round rw,writeback_cache "$TMP/umount.fuse.uf2fs"

step "a daemon that died: the unmount says its changes are lost, and fails"
IMG=$TMP/dead.img MNT=$TMP/mnt
truncate -s 256M "$IMG"
"$MKFS_F2FS" -q -f "$IMG" >/dev/null
"$UF2FS" mount -o rw "$IMG" "$MNT" || fail "mount"
pid=$(daemon_pid rw "$IMG")
echo data >"$MNT/file"
kill -9 "$pid"
for _ in $(seq 50); do daemon_alive "$pid" || break; sleep 0.1; done
rc=0
"$UF2FS" umount "$MNT" 2>"$TMP/err" || rc=$?
cat "$TMP/err"
[ "$rc" = 1 ] || fail "uf2fs umount of a dead daemon's mount exited $rc, not 1"
grep -q "not running" "$TMP/err" || fail "no message about the dead daemon"
! _is_mounted "$MNT" || fail "the dead mount is still there"

step "a final checkpoint that cannot reach the image: the unmount fails"
if [ "$(id -u)" = 0 ]; then
	SMALL=$TMP/small
	mkdir -p "$SMALL"
	mount -t tmpfs -o size=40M tmpfs "$SMALL" || fail "mount tmpfs"
	IMG=$SMALL/full.img
	truncate -s 512M "$IMG"
	"$MKFS_F2FS" -q -f "$IMG" >/dev/null || { umount "$SMALL"; fail "mkfs"; }
	"$UF2FS" mount -o rw,flusher=off "$IMG" "$MNT" || { umount "$SMALL"; fail "mount"; }
	# small files stay in the cache (no write-through) until the checkpoint
	python3 -c "
import os, sys
for i in range(1600):
    open('%s/f%d' % (sys.argv[1], i), 'wb').write(os.urandom(24000))" "$MNT" ||
		{ umount "$SMALL"; fail "writing into the mount failed early"; }
	rc=0
	"$UF2FS" umount "$MNT" 2>"$TMP/err" || rc=$?
	cat "$TMP/err"
	umount "$SMALL"
	[ "$rc" = 1 ] || fail "uf2fs umount exited $rc after a failed final checkpoint"
	grep -q "did not write its final checkpoint" "$TMP/err" ||
		fail "no message about the missing checkpoint"
else
	echo "(not root: no small tmpfs to fill; skipped this part)"
fi
pass "uf2fs umount waits for the final checkpoint and reports its failure"
