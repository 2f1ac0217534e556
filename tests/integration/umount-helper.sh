#!/bin/bash
# Plain umount(8) waits through /sbin/umount.fuse.uf2fs, as `make install`
# puts it, following util-linux's helper lookup:
#  - for the user who mounted (libmount reads the mount table for non-root
#    callers, sees type fuse.uf2fs and runs the helper as that user);
#  - for root when the mount has a utab entry naming the helper, as
#    `mount -t fuse.uf2fs -o uhelper=fuse.uf2fs` leaves (without one, root's
#    umount takes the type from statfs, plain "fuse", and looks only for
#    umount.fuse);
# and the entry is gone afterwards. Runs in a private mount namespace whose
# /usr/sbin is a copy (symlinks) with the two helpers added and whose
# /run/mount is empty, so nothing is installed on the host.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_fuse
need_f2fs_tools
need_uf2fs
need_cmd unshare setpriv umount mount
[ "$(id -u)" = 0 ] || skip "needs root (a private mount namespace)"
[ -d /usr/sbin ] || skip "no /usr/sbin"
tmpdir_init umount-helper
chmod 755 "$TMP"
SBIN=$TMP/sbin IMG=$TMP/h.img MNT=$TMP/mnt
mkdir -p "$SBIN" "$MNT"
for f in /usr/sbin/*; do ln -s "$f" "$SBIN/"; done
ln -sf "$UF2FS" "$SBIN/mount.fuse.uf2fs"
ln -sf "$UF2FS" "$SBIN/umount.fuse.uf2fs"
truncate -s 128M "$IMG"
"$MKFS_F2FS" -q -f "$IMG" >/dev/null || fail "mkfs.f2fs"
chown 65534:65534 "$IMG" "$MNT"

cat >"$TMP/inner.sh" <<EOF
set -eu
mount --bind "$SBIN" /usr/sbin
mount -t tmpfs tmpfs /run/mount
U="setpriv --reuid=65534 --regid=65534 --clear-groups --"
gone() { ! [ -e /proc/\$1 ] || grep -q ') Z' /proc/\$1/stat; }

echo "== the user who mounted: umount MNT"
\$U "$UF2FS" mount -o rw,fakeroot "$IMG" "$MNT"
pid=\$(pgrep -n -f "uf2fs mount -o rw,fakeroot $IMG")
\$U sh -c 'echo user >"$MNT/u"'
\$U umount -v "$MNT"
gone \$pid || { echo "FAIL: daemon \$pid still runs after the user's umount"; exit 1; }

echo "== root, mounted with uhelper=fuse.uf2fs: umount MNT"
mount -t fuse.uf2fs -o uhelper=fuse.uf2fs "$IMG" "$MNT"
grep -q "uhelper=fuse.uf2fs" /run/mount/utab
pid=\$(pgrep -n -f "mount.fuse.uf2fs $IMG")
echo root >"$MNT/r"
umount -v "$MNT"
gone \$pid || { echo "FAIL: daemon \$pid still runs after root's umount"; exit 1; }
! grep -q "$MNT" /run/mount/utab
echo "== done"
EOF
unshare -m --propagation private bash "$TMP/inner.sh" >"$TMP/inner.log" 2>&1
rc=$?
cat "$TMP/inner.log"
[ "$rc" = 0 ] || fail "umount(8) through umount.fuse.uf2fs (exit $rc)"
# the helper said what it did: the daemon and its final checkpoint, twice
[ "$(grep -c 'final checkpoint .* is on' "$TMP/inner.log")" = 2 ] ||
	fail "umount(8) did not run umount.fuse.uf2fs both times"
fsck_clean "$IMG" || fail "fsck"
[ "$("$UF2FS" cat "$IMG" /u)" = user ] && [ "$("$UF2FS" cat "$IMG" /r)" = root ] ||
	fail "files written before umount(8) are missing"
pass "umount(8) runs umount.fuse.uf2fs and waits"
