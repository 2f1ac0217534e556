#!/bin/bash
# What xfstests found around mounting and flags: remount ro/rw through the
# mount helper form (no second daemon), a mount right after a background
# unmount (the old daemon is still writing its final checkpoint), write opens
# of immutable and append-only files failing at open, FS_XFLAG_DAX refused
# as Linux f2fs refuses it, fstat of an open directory after rmdir, and
# O_DIRECT during an atomic write refused (tests/f2fs/004), a fallocate past
# full keeping what it reserved with writes then failing cleanly
# (tests/f2fs/001). Ends fsck-clean.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_root
need_fuse
tmpdir_init mount-cycle
IMG=$TMP/mc.img MNT=$TMP/mnt
truncate -s 256M "$IMG"
mkfs.f2fs -q -f "$IMG" >/dev/null
mkdir -p "$MNT"
_MOUNTS+=("$MNT")	# mounted here without mount_uf2fs: unmounted at exit anyway
# after umount: the daemon is still writing its final checkpoint
wait_daemon() {
	for _ in $(seq 100); do pgrep -f "uf2fs $IMG" >/dev/null || return 0; sleep 0.1; done
	return 1
}

step "remount ro and rw keep the one daemon"
"$UF2FS" "$IMG" "$MNT" -o rw,no_writeback_cache || fail "mount"
echo a >"$MNT/a" || fail "write before remount"
"$UF2FS" "$IMG" "$MNT" -o remount,ro || fail "remount,ro"
grep -q " $(realpath "$MNT") fuse.uf2fs ro," /proc/mounts || fail "not read-only after remount,ro"
if echo b 2>/dev/null >"$MNT/b"; then fail "a write succeeded on a read-only remount"; fi
"$UF2FS" "$IMG" "$MNT" -o remount,rw || fail "remount,rw"
echo c >"$MNT/c" || fail "write after remount,rw"
[ "$(pgrep -fc "uf2fs $IMG")" = 1 ] || fail "remount started another daemon"

step "immutable and append-only refuse write opens"
echo x >"$MNT/imm"
echo x >"$MNT/app"
"$PY" - "$MNT" <<'EOF' || fail "open checks"
import fcntl, os, struct, sys, errno
d = sys.argv[1]
FS_IOC_GETFLAGS, FS_IOC_SETFLAGS = 0x80086601, 0x40086602
FS_IMMUTABLE_FL, FS_APPEND_FL = 0x10, 0x20
def setflag(p, fl):
    fd = os.open(p, os.O_RDONLY)
    fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("l", fl))
    os.close(fd)
def expect_eperm(p, flags, what):
    try:
        os.close(os.open(p, flags))
    except OSError as e:
        if e.errno == errno.EPERM:
            return
        raise
    sys.exit("%s: open succeeded" % what)
setflag(d + "/imm", FS_IMMUTABLE_FL)
setflag(d + "/app", FS_APPEND_FL)
expect_eperm(d + "/imm", os.O_WRONLY, "immutable O_WRONLY")
expect_eperm(d + "/imm", os.O_RDWR, "immutable O_RDWR")
expect_eperm(d + "/app", os.O_WRONLY, "append-only O_WRONLY without O_APPEND")
expect_eperm(d + "/app", os.O_WRONLY | os.O_APPEND | os.O_TRUNC, "append-only O_TRUNC")
os.close(os.open(d + "/imm", os.O_RDONLY))
fd = os.open(d + "/app", os.O_WRONLY | os.O_APPEND)
os.write(fd, b"y")
os.close(fd)
# FS_IOC_FSSETXATTR with FS_XFLAG_DAX: f2fs keeps no DAX flag
FS_IOC_FSGETXATTR, FS_IOC_FSSETXATTR, FS_XFLAG_DAX = 0x801c581f, 0x401c5820, 0x8000
fd = os.open(d + "/c", os.O_RDONLY)
fsx = bytearray(fcntl.ioctl(fd, FS_IOC_FSGETXATTR, bytes(28)))
struct.pack_into("I", fsx, 0, struct.unpack_from("I", fsx, 0)[0] | FS_XFLAG_DAX)
try:
    fcntl.ioctl(fd, FS_IOC_FSSETXATTR, bytes(fsx))
    sys.exit("FS_XFLAG_DAX accepted")
except OSError as e:
    if e.errno != errno.EOPNOTSUPP:
        raise
for p in ("imm", "app"):
    setflag(d + "/" + p, 0)
EOF

step "an open directory, removed, still answers fstat with nlink 0"
"$PY" - "$MNT" <<'EOF' || fail "removed open directory"
import os, sys
d = sys.argv[1]
os.mkdir(d + "/gone")
fd = os.open(d + "/gone", os.O_RDONLY | os.O_DIRECTORY)
os.rmdir(d + "/gone")
st = os.fstat(fd)
if st.st_nlink != 0:
    sys.exit("rmdir: nlink %d" % st.st_nlink)
os.close(fd)
os.mkdir(d + "/d1")
os.mkdir(d + "/d2")
fd = os.open(d + "/d2", os.O_RDONLY | os.O_DIRECTORY)
os.rename(d + "/d1", d + "/d2")
if os.fstat(fd).st_nlink != 0:
    sys.exit("rename over an open directory: nlink not 0")
os.close(fd)
EOF

step "direct I/O during an atomic write is refused, as f2fs does"
"$PY" - "$MNT" <<'EOF' || fail "O_DIRECT during an atomic write"
import errno, fcntl, mmap, os, sys
f = sys.argv[1] + "/atomic"
with open(f, "wb") as w:
    w.write(b"a" * 8192)
START, COMMIT = 0xf501, 0xf502	# _IO(0xf5, 1), _IO(0xf5, 2)
fd = os.open(f, os.O_RDWR)
fcntl.ioctl(fd, START)
os.pwrite(fd, b"b" * 4096, 0)
buf = mmap.mmap(-1, 4096)
dfd = os.open(f, os.O_RDWR | os.O_DIRECT)
for what, op in (("write", lambda: os.pwritev(dfd, [buf], 0)),
                 ("read", lambda: os.preadv(dfd, [buf], 0))):
    try:
        op()
        sys.exit("O_DIRECT %s during an atomic write succeeded" % what)
    except OSError as e:
        if e.errno != errno.EOPNOTSUPP:
            raise
fcntl.ioctl(fd, COMMIT)
os.preadv(dfd, [buf], 0)
if buf[:1] != b"b":
    sys.exit("the committed data is not what O_DIRECT reads")
os.close(dfd)
os.close(fd)
EOF

step "fallocate past full keeps what it got; the full fs refuses writes cleanly (tests/f2fs/001)"
x40() { head -c 40 /dev/zero | tr '\0' X; }
x40 >"$MNT/t001" || fail "write t001"
{ x40; head -c 56 /dev/zero; } >"$TMP/t001.want"
avail0=$(stat -f -c %a "$MNT")
if fallocate -l 1G "$MNT/dummy" 2>"$TMP/err"; then fail "fallocate past full succeeded"; fi
grep -q "No space left" "$TMP/err" || fail "fallocate: $(cat "$TMP/err")"
read -r size sectors < <(stat -c '%s %b' "$MNT/dummy")
log "fallocate 1G with $avail0 blocks free: size $size, $sectors sectors"
[ $((size / 4096)) -ge $((avail0 * 95 / 100)) ] && [ $((size % 4096)) = 0 ] &&
	[ $((sectors * 512)) -ge "$size" ] || fail "after ENOSPC: dummy size $size, $sectors sectors"
avail=$(stat -f -c %a "$MNT")
[ "$avail" -le 8 ] || fail "statfs shows $avail blocks free after the fallocate"
truncate -s 96 "$MNT/t001" || fail "truncate 96"
if dd if=/dev/zero of="$MNT/t001" bs=4096 seek=2 count=1 conv=notrunc 2>"$TMP/err"; then
	fail "a write needing blocks succeeded on the full filesystem"
fi
grep -q "No space left" "$TMP/err" || fail "pwrite: $(cat "$TMP/err")"
cmp "$MNT/t001" "$TMP/t001.want" || fail "t001 changed by the failed write"
umount "$MNT" && wait_daemon || fail "unmount when full"
fsck_clean "$IMG" || fail "fsck after the fallocate past full"
"$UF2FS" "$IMG" "$MNT" -o rw || fail "mount when full"
cmp "$MNT/t001" "$TMP/t001.want" || fail "t001 after the remount"
[ "$(stat -c '%s %b' "$MNT/dummy")" = "$size $sectors" ] || fail "dummy changed by the remount"
rm "$MNT/t001" "$MNT/dummy" || fail "rm when full"
sync -f "$MNT"
avail=$(stat -f -c %a "$MNT")
[ $((avail * 4096)) -ge "$size" ] || fail "only $avail blocks free after deleting the full file"
dd if=/dev/urandom of="$MNT/after" bs=1M count=64 status=none || fail "write after the delete"

step "strictatime: a cached file's atime still moves on every read"
umount "$MNT"
wait_daemon
"$UF2FS" "$IMG" "$MNT" -o rw,strictatime || fail "mount strictatime"
cat "$MNT/a" >/dev/null
t1=$(stat -c %X "$MNT/a")
sleep 1.1
cat "$MNT/a" >/dev/null
t2=$(stat -c %X "$MNT/a")
[ "$t2" -gt "$t1" ] || fail "strictatime: a second read left atime at $t1"

step "a mount right after a background unmount waits for the old daemon"
# the wait rests on the daemon's POSIX lock, held as long as the image is
# open: a probe of the image that opened and closed it again dropped it
ino=$(stat -c %i "$IMG")
grep -qE "POSIX +ADVISORY +WRITE +[0-9]+ [0-9a-f:]+:$ino " /proc/locks ||
	fail "no POSIX lock on the image while it is mounted: $(grep ":$ino " /proc/locks)"
for i in 1 2 3; do
	dd if=/dev/urandom of="$MNT/big$i" bs=1M count=16 status=none || fail "dd"
	umount "$MNT" &
	sleep 0.01
	wait
	"$UF2FS" "$IMG" "$MNT" -o rw || fail "mount $i right after umount"
done
[ "$(cat "$MNT/a" "$MNT/c")" = "$(printf 'a\nc')" ] || fail "content after the cycles"
umount "$MNT"
wait_daemon
fsck_clean "$IMG" || fail "fsck"
pass "remount, mount after umount, immutable/append opens, DAX refused, fallocate past full"
