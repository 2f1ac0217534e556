#!/bin/bash
# Compat, kernel -> uf2fs: images that only Linux f2fs wrote, read by uf2fs.
#
# The images and their manifests come from make-kernel-images.sh (cached in
# $BUILD/compat-cache/images/; the first run boots QEMU and takes a few
# minutes). For each image, on a copy:
#   1. fsck.f2fs -f (f2fs-tools) must be clean: the image itself is sound;
#   2. `uf2fs mount IMG MNT -o ro -f`, then verify-tree.py through the mount
#      (content, modes, owners, times, links, devices, xattrs, ACLs, flags);
#   3. `uf2fs get IMG / DEST`, then verify-tree.py --extract on DEST.
# fsync-cut.img needs roll-forward recovery: `uf2fs info` must say so, and a
# read-only mount, if it is allowed, must show exactly the checkpointed state
# or exactly the recovered state, never a mixture.
#
# Env (from `make check`): BUILD, UF2FS, TOP. Exit 0 pass, 77 skip, else fail.
set -u
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$TOP" || exit 1
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$TOP/$BUILD;; esac
UF2FS=${UF2FS:-$BUILD/uf2fs}
export BUILD
C=tests/compat
. $C/qemu.sh

if ! why=$(qemu_missing); then echo "SKIP: $why"; exit 77; fi
for t in python3 mkfs.f2fs fsck.f2fs; do
	command -v $t >/dev/null || { echo "FAIL: $t not installed"; exit 1; }
done

mkdir -p "$BUILD" || exit 1
WORK=$(mktemp -d "$BUILD/compat-read.XXXXXX") && [ -d "$WORK" ] || { echo "FAIL: mktemp"; exit 1; }
MNT=$WORK/mnt
FUSE_PID=
cleanup() {
	if mountpoint -q "$MNT" 2>/dev/null; then fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"; fi
	[ -n "$FUSE_PID" ] && kill "$FUSE_PID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

t0=$SECONDS
IMAGES=$(bash $C/make-kernel-images.sh) || { echo "FAIL: cannot make the kernel images"; exit 1; }
IMAGES=$(echo "$IMAGES" | tail -1)
echo "kernel images: $IMAGES ($((SECONDS - t0))s)"
NAMES=$(cut -f1 "$IMAGES/images.tsv")

# The harness's own sanity: every kind of inode made it into the manifests.
for k in file dir symlink fifo chr blk sock; do
	cut -f2 "$IMAGES/inline.manifest" | grep -qx $k || fail "inline.manifest has no $k"
done
grep -q 'system.posix_acl_access' "$IMAGES/inline.xattrs" || fail "inline.xattrs has no ACL"
grep -q $'\tinline$' "$IMAGES/inline.info" || fail "inline.info: no inline file"

# 1. fsck.f2fs on a copy of each (it must not change our cached image).
for n in $NAMES; do
	cp --sparse=always "$IMAGES/$n.img" "$WORK/$n.img"
	if timeout 120 fsck.f2fs -f "$WORK/$n.img" > "$WORK/$n.fsck" 2>&1 &&
	   ! grep -qE '\[Fail\]|\[FAIL\]|Error|ERROR' "$WORK/$n.fsck"; then
		echo "fsck.f2fs $n: clean$(grep -q 'Corrupted valid nat_bits' "$WORK/$n.fsck" &&
			echo ' (stale nat_bits after the power cut, as expected)')"
	else
		fail "fsck.f2fs -f $n:"; sed 's/^/    /' "$WORK/$n.fsck" | tail -20
	fi
	cp --sparse=always "$IMAGES/$n.img" "$WORK/$n.img"   # fresh copy for uf2fs
done

if [ ! -x "$UF2FS" ]; then
	echo "FAIL: $UF2FS is not built"
	exit 1
fi

VERIFY="python3 $C/verify-tree.py"
V_OPTS=()
[ "$(id -u)" = 0 ] || V_OPTS=(--ignore uid,gid --skip-xattr trusted.)

# uf2fs_mount IMG: mount read-only in the foreground, backgrounded; waits
# until the mount is there. Returns 1 (and prints the log) if it never is.
uf2fs_mount() {
	mkdir -p "$MNT"
	"$UF2FS" mount "$1" "$MNT" -o ro -f > "$WORK/mount.log" 2>&1 &
	FUSE_PID=$!
	local i
	for i in $(seq 1 100); do
		mountpoint -q "$MNT" && return 0
		kill -0 "$FUSE_PID" 2>/dev/null || break
		sleep 0.1
	done
	sed 's/^/    mount: /' "$WORK/mount.log"
	kill "$FUSE_PID" 2>/dev/null; wait "$FUSE_PID" 2>/dev/null; FUSE_PID=
	return 1
}

uf2fs_umount() {
	fusermount3 -u "$MNT" || { fail "fusermount3 -u"; umount -l "$MNT"; }
	local i
	for i in $(seq 1 100); do kill -0 "$FUSE_PID" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$FUSE_PID" 2>/dev/null; then
		fail "uf2fs mount did not exit after unmount"; kill "$FUSE_PID"
	fi
	wait "$FUSE_PID" 2>/dev/null; FUSE_PID=
}

for n in $NAMES; do
	[ "$n" = fsync-cut ] && continue
	img=$WORK/$n.img
	t1=$SECONDS
	# 2. Through the FUSE mount.
	if uf2fs_mount "$img"; then
		if timeout 300 $VERIFY --flags "${V_OPTS[@]}" "$IMAGES/$n.manifest" "$IMAGES/$n.xattrs" "$MNT" \
			> "$WORK/v.out" 2>&1; then
			echo "mount $n: $(tail -1 "$WORK/v.out") ($((SECONDS - t1))s)"
		else
			fail "mount $n: verify-tree:"; head -40 "$WORK/v.out" | sed 's/^/    /'
		fi
		uf2fs_umount
	else
		fail "uf2fs mount $n"
	fi
	# 3. Extraction.
	t1=$SECONDS
	if timeout 300 "$UF2FS" get "$img" / "$WORK/get-$n" > "$WORK/get.log" 2>&1; then
		if timeout 300 $VERIFY --extract "${V_OPTS[@]}" "$IMAGES/$n.manifest" "$IMAGES/$n.xattrs" \
			"$WORK/get-$n" > "$WORK/v.out" 2>&1; then
			echo "get $n: $(tail -1 "$WORK/v.out") ($((SECONDS - t1))s)"
		else
			fail "get $n: verify-tree:"; head -40 "$WORK/v.out" | sed 's/^/    /'
		fi
	else
		fail "uf2fs get $n:"; tail -20 "$WORK/get.log" | sed 's/^/    /'
	fi
	rm -rf "$WORK/get-$n"
	# Both must have left the image alone.
	cmp -s "$img" "$IMAGES/$n.img" || fail "$n: uf2fs changed the image on a read-only run"
done

# fsync-cut: recovery needed.
img=$WORK/fsync-cut.img
if timeout 60 "$UF2FS" info "$img" > "$WORK/info-cut" 2>&1 &&
   timeout 60 "$UF2FS" info "$WORK/inline.img" > "$WORK/info-clean" 2>&1; then
	if ! grep -qi recover "$WORK/info-cut"; then
		fail "uf2fs info fsync-cut.img does not mention recovery:"; sed 's/^/    /' "$WORK/info-cut"
	elif [ "$(grep -i recover "$WORK/info-cut")" = "$(grep -i recover "$WORK/info-clean")" ]; then
		fail "uf2fs info says the same about recovery for a clean image and fsync-cut.img:"
		grep -i recover "$WORK/info-cut" | sed 's/^/    /'
	else
		echo "info fsync-cut: $(grep -i recover "$WORK/info-cut" | head -1)"
	fi
else
	fail "uf2fs info:"; cat "$WORK/info-cut" "$WORK/info-clean" | sed 's/^/    /'
fi
if uf2fs_mount "$img"; then
	state=
	for s in recovered norecovery; do
		if timeout 120 $VERIFY "${V_OPTS[@]}" "$IMAGES/fsync-cut.$s.manifest" "$IMAGES/fsync-cut.$s.xattrs" \
			"$MNT" > "$WORK/v-$s.out" 2>&1; then state=$s; break; fi
	done
	if [ -n "$state" ]; then
		echo "mount fsync-cut (ro): shows the $state state"
	else
		fail "mount fsync-cut: neither the checkpointed nor the recovered state:"
		head -20 "$WORK/v-norecovery.out" | sed 's/^/    /'
	fi
	uf2fs_umount
	cmp -s "$img" "$IMAGES/fsync-cut.img" || fail "fsync-cut: uf2fs changed the image on a read-only mount"
elif grep -qi recover "$WORK/mount.log"; then
	echo "mount fsync-cut (ro): refused, naming recovery: $(grep -i recover "$WORK/mount.log" | head -1)"
else
	fail "uf2fs mount fsync-cut.img failed without naming recovery"
fi

echo "kernel-images-read: $fails failure(s), $((SECONDS - t0))s"
[ $fails = 0 ]
