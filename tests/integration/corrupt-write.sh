#!/bin/bash
# Writes on a corrupt image must fail, never damage what is intact. Here a
# file's first direct-node pointer names its own inode (a valid checksum, so
# only the tree walk can tell): a punch in the direct-node range must give an
# error, and the blocks held by the inode itself must read back unchanged,
# also after a remount (Linux f2fs fixed the same hole in c18ecd99e0c7).
# And an inode whose inline xattr geometry is impossible is an error, not an
# inode without xattrs (Linux 5c1768b67250). Found by running xfstests'
# tests/f2fs/022 and 023 by hand.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_fuse
need_f2fs_tools
tmpdir_init corrupt-write
IMG=$TMP/cw.img MNT=$TMP/mnt
truncate -s 128M "$IMG"
mkfs.f2fs -q -f -O extra_attr,inode_checksum,sb_checksum "$IMG" >/dev/null
mount_uf2fs "$IMG" "$MNT" rw || fail "mount"
head -c 8M /dev/urandom >"$TMP/orig"
cp "$TMP/orig" "$MNT/f" || fail "write"
umount_uf2fs "$MNT" || fail "unmount"
"$PY" "$LIB/f2fsimg.py" corrupt "$IMG" dnode-self /f || fail "corrupt"

mount_uf2fs "$IMG" "$MNT" rw || fail "mount of the corrupt image"
if fallocate -p -o $((1100 * 4096)) -l 4096 "$MNT/f" 2>"$TMP/err"; then
	fail "a punch through a direct node that is the inode succeeded"
fi
log "punch: $(cat "$TMP/err")"
cmp -n $((137 * 4096 + 4096)) "$TMP/orig" "$MNT/f" || fail "blocks held by the inode changed"
umount_uf2fs "$MNT" || fail "unmount"
mount_uf2fs "$IMG" "$MNT" ro || fail "ro remount"
# (only the first MiB: a large folio reaching past block 922 maps through the bad node)
cmp -n $((256 * 4096)) "$TMP/orig" "$MNT/f" || fail "blocks held by the inode changed on disk"
umount_uf2fs "$MNT" || true

step "an inode claiming inline xattrs without extra attributes"
need_cmd setfattr getfattr
IMG2=$TMP/cx.img
truncate -s 128M "$IMG2"
mkfs.f2fs -q -f -O extra_attr,flexible_inline_xattr "$IMG2" >/dev/null
mount_uf2fs "$IMG2" "$MNT" rw || fail "mount"
echo data >"$MNT/x"
setfattr -n user.x -v 1 "$MNT/x" || fail "setfattr"
umount_uf2fs "$MNT" || fail "unmount"
"$PY" "$LIB/f2fsimg.py" corrupt "$IMG2" inline-xattr /x || fail "corrupt"
mount_uf2fs "$IMG2" "$MNT" ro || fail "mount of the corrupt image"
if out=$(getfattr -n user.x "$MNT/x" 2>&1); then
	fail "the corrupt inode was read: $out"
fi
case $out in
*"No such attribute"*) fail "the corrupt inode's xattrs silently vanished: $out";;
esac
log "getfattr: $out"
umount_uf2fs "$MNT" || true
pass "a direct node that is the inode is refused; the file's own blocks intact; a bad inline xattr geometry is an error"
