#!/bin/bash
# Linux reads back an image that uf2fs changed through NBD: the image is
# served by nbdkit (file plugin, Unix socket); a small tree (40 files in
# nested directories, sizes from empty to 1 MiB, symlinks) goes in through
# `uf2fs mount -o rw nbd+unix:///?socket=...`, one more file through `uf2fs
# put` on the URI; with nbdkit stopped, fsck.f2fs is clean on the file and
# the real Linux f2fs, booted on it in QEMU, reads back every file (sha256)
# and symlink.
set -u
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$TOP"
. tests/lib/common.sh
. tests/compat/qemu.sh
if ! why=$(qemu_missing); then skip "$why"; fi
need_fuse
need_f2fs_tools
need_uf2fs
need_cmd nbdkit
tmpdir_init nbd-linux
IMG=$TMP/u.img MNT=$TMP/mnt SRC=$TMP/src SOCK=$TMP/nbd.sock
mkdir -p "$MNT" "$TMP/in"

"$PY" - "$SRC" <<'EOF'
import os, random, sys
root, r = sys.argv[1], random.Random(12)
sizes = [0, 1, 100, 4095, 4096, 4097, 20000, 65536, 300000, 1 << 20]
for i in range(40):
    d = os.path.join(root, "d%d" % (i % 4), "e%d" % (i % 3))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%d" % i), "wb") as f:
        f.write(r.randbytes(sizes[i % len(sizes)]))
os.symlink("d0/e0/f0", os.path.join(root, "link0"))
os.symlink("../../d1", os.path.join(root, "d0", "e1", "up"))
EOF

truncate -s 128M "$IMG"
"$MKFS_F2FS" -q -f "$IMG" >/dev/null || fail "mkfs.f2fs"
nbdkit -P "$TMP/nbdkit.pid" -U "$SOCK" file "$IMG" || fail "nbdkit"
KIT=$(cat "$TMP/nbdkit.pid")
trap '_rc=$?; (exit $_rc); _cleanup; kill "$KIT" 2>/dev/null' EXIT
URI="nbd+unix:///?socket=$SOCK"
mount_uf2fs "$URI" "$MNT" rw || fail "mount of $URI"
cp -a "$SRC/d0" "$SRC/d1" "$SRC/d2" "$SRC/d3" "$SRC/link0" "$MNT/" || fail "copy"
umount_uf2fs "$MNT" || fail "unmount"
mkdir -p "$SRC/put"
head -c 300000 /dev/urandom >"$SRC/put/offline.bin"
"$UF2FS" put "$URI" "$SRC/put" / || fail "uf2fs put on the URI"
kill "$KIT"
for ((i = 0; i < 50; i++)); do kill -0 "$KIT" 2>/dev/null || break; sleep 0.1; done
fsck_clean "$IMG" || fail "fsck of the image written through NBD"

(cd "$SRC" && find . -type f | LC_ALL=C sort | sed 's|^\./||' | xargs sha256sum |
	sed 's|  |  /mnt/|') >"$TMP/in/expect"
(cd "$SRC" && find . -type l | LC_ALL=C sort |
	while read -r l; do echo "${l#./} $(readlink "$l")"; done) >"$TMP/in/links"
cat >"$TMP/guest.sh" <<'EOF'
mount -t f2fs -o ro /dev/vda /mnt || exit 1
sha256sum -c -s /in/expect || { sha256sum -c /in/expect | grep -v ': OK'; exit 1; }
while read -r l t; do
	[ "$(readlink "/mnt/$l")" = "$t" ] || { echo "symlink $l: $(readlink "/mnt/$l")"; exit 1; }
done </in/links
n=$(find /mnt -type f | wc -l)
[ "$n" = "$(wc -l </in/expect)" ] || { echo "$n files, expected $(wc -l </in/expect)"; exit 1; }
dmesg | grep -i 'f2fs.*\(error\|corrupt\|inconsistent\)' && exit 1
echo "linux: every file and symlink as written"
umount /mnt
EOF
QEMU_IN=$TMP/in qemu_run "$IMG" "$TMP/guest.sh" "" 240 >"$TMP/guest.out" 2>&1
rc=$?
cat "$TMP/guest.out"
[ "$rc" = 0 ] || fail "Linux does not read back what uf2fs wrote through NBD (rc $rc)"
pass "Linux reads every file uf2fs wrote through NBD"
