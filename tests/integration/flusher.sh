#!/bin/bash
# The flusher writes dirty data in the background, with no checkpoint due:
#  - by age: with dirty_expire=1, small files written once are on their
#    blocks (no dirty data left) a few seconds later;
#  - by amount: past dirty_background=4M, the oldest inodes go out until
#    half of it is left, long before dirty_expire's 30 s;
#  - with flusher=off neither happens (the control);
# and fsck.f2fs -f is clean, every file intact, after uf2fs umount.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_fuse
need_f2fs_tools
need_uf2fs
tmpdir_init flusher
IMG=$TMP/f.img MNT=$TMP/mnt SRC=$TMP/src
mkdir -p "$SRC" "$MNT"
# 600 files of 4-28 KiB: below write-through's 32 KiB, so they stay in the cache
python3 - "$SRC" <<'EOF'
import os, random, sys
r = random.Random(7)
for i in range(600):
    d = os.path.join(sys.argv[1], "d%d" % (i % 10))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%d" % i), "wb") as f:
        f.write(r.randbytes(4096 * (1 + i % 7)))
EOF

# dirty_data MNT: the data part of the "dirty" stats line, in MiB
dirty_data() { "$UF2FS" stats "$1" | sed -n 's/^  dirty .*(data \([0-9.]*\),.*/\1/p'; }
flushed() { "$UF2FS" stats "$1" | sed -n 's/^  flusher *\([0-9]*\) rounds, \([0-9]*\) inodes.*/\2/p'; }

# run OPTS WAIT: copy the tree in, wait WAIT s, print "DIRTY FLUSHED"; unmount and check
run() {
	local opts=$1 wait=$2 d f
	truncate -s 256M "$IMG"
	"$MKFS_F2FS" -q -f "$IMG" >/dev/null || fail "mkfs.f2fs"
	"$UF2FS" mount -o "rw,checkpoint_interval=3600,$opts" "$IMG" "$MNT" || fail "mount"
	cp -r "$SRC/." "$MNT/" || fail "copy in"
	sleep "$wait"
	d=$(dirty_data "$MNT") f=$(flushed "$MNT")
	"$UF2FS" stats "$MNT" | grep -E '^  (dirty|flusher|checkpoints) ' >&2
	"$UF2FS" umount "$MNT" >&2 || fail "uf2fs umount"
	fsck_clean "$IMG" >&2 || fail "fsck after -o $opts"
	rm -rf "$TMP/out"
	"$UF2FS" get "$IMG" / "$TMP/out" && diff -r "$SRC" "$TMP/out" >&2 ||
		fail "files differ after -o $opts"
	echo "$d $f"
}

step "control: flusher=off"
read -r d f < <(run flusher=off,dirty_expire=1 4)
log "dirty data $d MiB, $f inodes written back"
[ "$f" = 0 ] && awk -v d="$d" 'BEGIN { exit !(d >= 2) }' ||
	fail "with flusher=off: $d MiB dirty, $f inodes flushed (expected >= 2 MiB, 0)"

step "by age: dirty_expire=1"
read -r d f < <(run dirty_expire=1 4)
log "dirty data $d MiB, $f inodes written back"
[ "$f" -gt 0 ] && [ "$d" = 0.0 ] || fail "dirty_expire=1 left $d MiB dirty ($f inodes flushed)"

step "by amount: dirty_background=4M (dirty_expire 30 s)"
read -r d f < <(run dirty_background=4M 2)
log "dirty data $d MiB, $f inodes written back"
[ "$f" -gt 0 ] && awk -v d="$d" 'BEGIN { exit !(d <= 4) }' ||
	fail "dirty_background=4M: $d MiB dirty, $f inodes flushed"
pass "background writeback by age and by amount"
