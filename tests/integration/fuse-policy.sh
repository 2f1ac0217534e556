#!/bin/bash
# The decisions that moved from fuse/ into the library (issue 20), through
# the mount, as before the move:
# - FS_IOC_FSSETXATTR: an extent size hint or an xflag f2fs does not keep
#   (DAX) is EOPNOTSUPP; project ID and flags are set and read back
#   (FS_IOC_FSGETXATTR); SETFLAGS/GETFLAGS agree with it.
# - FS_IOC_ENABLE_VERITY by a user without write permission: EACCES; by
#   root on the same file it works.
# - UF2FS_IOC_SETQUOTA (uf2fs setquota on the mount) by a user: EPERM; by
#   root it works.
# - under writeback_cache, `touch` of an append-only file takes "now" and
#   an explicit mtime stays refused (EPERM); the time write-back after the
#   unlink of an open file is accepted (syncfs does not fail).
# fsck.f2fs -f clean at the end.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_root
need_fuse
need_uf2fs
need_f2fs_tools
need_cmd python3 setpriv fsverity chattr lsattr touch
tmpdir_init fuse-policy
IMG=$TMP/p.img MNT=$TMP/mnt
chmod 755 "$TMP"	# nobody must reach the mount
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }

mk_image "$IMG" 128M extra_attr,verity,quota,project_quota "" || fail "mkfs"
mount_uf2fs "$IMG" "$MNT" rw,allow_other || fail "mount"
chmod 755 "$MNT"
echo data >"$MNT/f"
chmod 644 "$MNT/f"

step "FS_IOC_FSSETXATTR and FSGETXATTR"
"$PY" - "$MNT/f" <<'EOF' || fail "fsxattr checks"
import errno, fcntl, os, struct, sys
FSGETXATTR, FSSETXATTR = 0x801C581F, 0x401C5820
XFLAG_NODUMP, XFLAG_NOATIME, XFLAG_DAX = 0x80, 0x40, 0x8000
fd = os.open(sys.argv[1], os.O_RDONLY)
def get():
    return struct.unpack("<IIIII8x", fcntl.ioctl(fd, FSGETXATTR, bytes(28)))
def put(xflags, extsize=0, projid=0, cow=0):
    fcntl.ioctl(fd, FSSETXATTR, struct.pack("<IIIII8x", xflags, extsize, 0, projid, cow))
for args, what in (((XFLAG_DAX,), "DAX"), ((0, 4096), "an extent size hint"),
                   ((0, 0, 0, 4096), "a CoW extent size hint")):
    try:
        put(*args)
    except OSError as e:
        assert e.errno == errno.EOPNOTSUPP, (what, e)
    else:
        sys.exit("FSSETXATTR with %s succeeded" % what)
put(XFLAG_NODUMP | XFLAG_NOATIME, projid=42)
x = get()
assert x[0] == XFLAG_NODUMP | XFLAG_NOATIME and x[3] == 42, x
put(0, projid=42)
assert get()[0] == 0, get()
print("fsxattr: refusals EOPNOTSUPP, flags and project ID set and read back")
EOF
chattr +d "$MNT/f" && lsattr "$MNT/f" | grep -q '^[^ ]*d' || fail "SETFLAGS/GETFLAGS +d"
chattr -d "$MNT/f" || fail "chattr -d"

step "enable verity without write permission"
as_nobody cat "$MNT/f" >/dev/null || fail "nobody cannot read the file"
out=$(as_nobody fsverity enable "$MNT/f" 2>&1) && fail "nobody enabled verity on root's 0644 file"
grep -q "Permission denied" <<<"$out" || fail "nobody's enable: '$out', want EACCES"
fsverity enable "$MNT/f" || fail "root cannot enable verity"

step "setquota through the mount"
as_nobody "$UF2FS" quota "$MNT" >/dev/null || fail "nobody cannot read the quota report"
out=$(as_nobody "$UF2FS" setquota -u 1000 0 2048 0 0 "$MNT" 2>&1) &&
	fail "nobody set a quota limit"
grep -q "Operation not permitted" <<<"$out" || fail "nobody's setquota: '$out', want EPERM"
"$UF2FS" setquota -u 1000 0 2048 0 0 "$MNT" || fail "root cannot set a quota limit"

step "append-only times, and times after an unlink"
echo a >"$MNT/app"
chattr +a "$MNT/app" || fail "chattr +a"
before=$(stat -c %Y "$MNT/app")
sleep 1.1
touch "$MNT/app" || fail "touch of an append-only file"
[ "$(stat -c %Y "$MNT/app")" -gt "$before" ] || fail "touch did not move mtime to now"
out=$(touch -m -d '2001-01-01' "$MNT/app" 2>&1) && fail "an explicit mtime on an append-only file"
grep -q "Operation not permitted" <<<"$out" || fail "explicit mtime: '$out', want EPERM"
chattr -a "$MNT/app" || fail "chattr -a"
"$PY" - "$MNT" <<'EOF' || fail "time write-back after unlink"
import os, sys
p = os.path.join(sys.argv[1], "gone")
fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, b"x" * 5000)        # kernel-cached mtime/ctime, written back later
os.unlink(p)
os.close(fd)
EOF
sync -f "$MNT" || fail "syncfs after the unlink of a written file failed"
umount_uf2fs "$MNT" || fail "unmount"
fsck_clean "$IMG" || fail "fsck.f2fs"
pass
