#!/bin/bash
# Roll-forward recovery, both ways, with the real Linux f2fs as the oracle.
#
#  1. Linux fsyncs files and loses power (fsync-cut.img from the kernel image
#     set): a read-write uf2fs mount replays the fsync'd data; the tree then
#     matches what the kernel's own recovery produced (directory times aside:
#     recovery stamps them with its own clock), and fsck.f2fs is clean.
#  2. uf2fs fsyncs files and is killed with SIGKILL: Linux recovers the image
#     (every fsync'd byte there, the unsynced file absent), and so does uf2fs
#     on a copy; fsck.f2fs is clean after both.
set -u
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$TOP"
BUILD=${BUILD:-build}
UF2FS=${UF2FS:-$TOP/$BUILD/uf2fs}
. tests/lib/common.sh
. tests/compat/qemu.sh
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed"
ls /boot/vmlinuz-*-amd64 >/dev/null 2>&1 || skip "no Debian kernel in /boot"

WORK=$(mktemp -d "$TOP/$BUILD/fsync-rec.XXXXXX")
MNT=$WORK/mnt
mkdir -p "$MNT"
cleanup() {
	fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

fsck_ok() {
	local out
	out=$(fsck.f2fs -f --dry-run "$1" 2>&1)
	if grep -qE '\[ASSERT\]|\[FIX\]|\[Fail\]' <<<"$out"; then
		fail "fsck.f2fs on $2:"; grep -E 'ASSERT|FIX|Fail' <<<"$out" | head -10
		return 1
	fi
	echo "fsck.f2fs $2: clean"
}

# --- 1. Linux's fsync, uf2fs's recovery ---
IMAGES=$(bash tests/compat/make-kernel-images.sh) || fail "kernel images could not be made"
if [ -f "$IMAGES/fsync-cut.img" ]; then
	cp --sparse=always "$IMAGES/fsync-cut.img" "$WORK/cut.img"
	if "$UF2FS" mount "$WORK/cut.img" "$MNT" -o rw 2>"$WORK/mount.log"; then
		grep -i recover "$WORK/mount.log" || true
		if python3 tests/compat/verify-tree.py --ignore-root --ignore dirtime \
			"$IMAGES/fsync-cut.recovered.manifest" "$IMAGES/fsync-cut.recovered.xattrs" \
			"$MNT" >"$WORK/v1.out" 2>&1; then
			echo "uf2fs recovered Linux's fsync'd data: $(tail -1 "$WORK/v1.out")"
		else
			fail "uf2fs recovery of fsync-cut.img differs from the kernel's:"
			tail -15 "$WORK/v1.out"
		fi
		fusermount3 -u "$MNT"
		sleep 0.5
		fsck_ok "$WORK/cut.img" "fsync-cut.img after uf2fs recovery"
	else
		fail "uf2fs rw mount of fsync-cut.img:"; cat "$WORK/mount.log"
	fi
fi

# --- 2. uf2fs's fsync, killed; Linux's and uf2fs's recovery ---
truncate -s 256M "$WORK/kill.img"
mkfs.f2fs -q -f -O extra_attr,inode_checksum,inode_crtime "$WORK/kill.img" >/dev/null
"$UF2FS" mount "$WORK/kill.img" "$MNT" -o rw || { fail "mount"; exit 1; }
python3 - "$MNT" "$WORK/expect" <<'EOF'
import hashlib, os, sys
mnt, expect = sys.argv[1], sys.argv[2]
os.mkdir(f"{mnt}/dir")
with open(f"{mnt}/dir/base", "w") as f:
	f.write("base\n")
fd = os.open(f"{mnt}/dir", os.O_RDONLY)	# a directory fsync checkpoints
os.fsync(fd)
os.close(fd)
rows = []
for name, size in (("big", 3 << 20), ("mid", 70000), ("small", 11)):
	data = bytes((i * 31 + len(name)) & 0xff for i in range(size))
	with open(f"{mnt}/dir/{name}", "wb") as f:
		f.write(data)
		f.flush()
		os.fsync(f.fileno())
	rows.append((name, hashlib.sha256(data).hexdigest()))
with open(f"{mnt}/dir/base", "a") as f:
	f.write("appended")
	f.flush()
	os.fsync(f.fileno())
rows.append(("base", hashlib.sha256(b"base\nappended").hexdigest()))
with open(f"{mnt}/dir/lost", "w") as f:
	f.write("never fsync'd")
with open(expect, "w") as f:
	for n, h in rows:
		f.write(f"{h}  /mnt/dir/{n}\n")
EOF
pkill -9 -f "uf2fs mount $WORK/kill.img"
sleep 0.5
fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
"$UF2FS" info "$WORK/kill.img" 2>/dev/null | grep -qi "recovery.*needed" ||
	fail "uf2fs info does not report the needed recovery"
cp --sparse=always "$WORK/kill.img" "$WORK/kill-uf2fs.img"

cat > "$WORK/guest.sh" <<'EOF'
mount -t f2fs /dev/vda /mnt || exit 1
sha256sum -c /in/expect || exit 1
[ ! -e /mnt/dir/lost ] || [ ! -s /mnt/dir/lost ] || { echo "unsynced data survived"; exit 1; }
umount /mnt
EOF
mkdir -p "$WORK/in"
cp "$WORK/expect" "$WORK/in/expect"
if QEMU_IN=$WORK/in qemu_run "$WORK/kill.img" "$WORK/guest.sh" "" 180 >"$WORK/guest.out" 2>&1; then
	echo "Linux recovered uf2fs's fsync'd data"
else
	fail "Linux recovery of a killed uf2fs:"; tail -15 "$WORK/guest.out"
fi
fsck_ok "$WORK/kill.img" "killed image after Linux recovery"

if "$UF2FS" mount "$WORK/kill-uf2fs.img" "$MNT" -o rw 2>/dev/null; then
	sed "s#/mnt/#$MNT/#" "$WORK/expect" | sha256sum -c --quiet || fail "uf2fs self-recovery lost data"
	[ ! -s "$MNT/dir/lost" ] || fail "unsynced data survived uf2fs recovery"
	fusermount3 -u "$MNT"
	sleep 0.5
	fsck_ok "$WORK/kill-uf2fs.img" "killed image after uf2fs recovery"
else
	fail "uf2fs could not mount its own killed image"
fi

[ "$failures" = 0 ] || { echo "fsync-recovery: $failures failure(s)"; exit 1; }
echo "fsync-recovery: ok"
