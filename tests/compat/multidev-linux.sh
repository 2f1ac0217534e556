#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Multi-device volumes both ways against the real Linux f2fs in QEMU: one
# `mkfs.f2fs -c b.img a.img` pair, attached as /dev/vda (the first device)
# and /dev/vdb. The super block records the host paths of the files, and
# Linux 6.1 opens every device by its recorded path (the first one too: the
# mount fails with ENOENT, "Failed to find devices", otherwise), so the guest
# makes each path a symlink to its /dev/vdX. uf2fs on the host uses the paths
# as recorded; -o device= is for files that moved.
#
#   uf2fs -> Linux   uf2fs (FUSE, rw) writes a small tree and a file larger
#                    than the first device's main area; fsck clean; the guest
#                    mounts the pair and its sha256 manifest of the tree must
#                    equal the host's.
#   Linux -> uf2fs   in the same boot Linux writes its own files (one again
#                    larger than a device), removes one of uf2fs's, unmounts;
#                    fsck clean; uf2fs must read Linux's files byte for byte
#                    and not the removed one.
#
# About a minute (one boot).   KEEP_TMP=1 tests/compat/multidev-linux.sh
set -euo pipefail
. "$(dirname "$0")/compat-lib.sh"
need_cmd gcc sha256sum

tmpdir_init multidev-linux
GHDIR=$TMP/gh
mkdir -p "$GHDIR"
gcc -O2 -Wall -o "$GHDIR/gh" tests/compat/guest-helper.c || fail "cannot build guest-helper.c"
export PATH=$GHDIR:$PATH

# the same files on the host (reference) and, for Linux's part, in the guest
cat >"$TMP/linux-files.sh" <<'EOF'
R=$1
mkdir -p "$R/ldir/sub"
gh gen "$R/ldir/big" 41000000 31 rand
gh gen "$R/ldir/sub/small" 3000 32 text
gh gen "$R/ldir/mid" 700000 33 rand
EOF

SRC=$TMP/src
mkdir -p "$SRC/tree/d1/d2" "$SRC/tree/empty"
gh gen "$SRC/tree/big" 42000000 21 rand
gh gen "$SRC/tree/d1/f1" 5000 22 text
gh gen "$SRC/tree/d1/d2/f2" 1000001 23 rand
gh gen "$SRC/tree/inline" 100 24 text
gh gen "$SRC/tree/gone" 300000 25 rand
ln -s d1/f1 "$SRC/tree/link"
sh "$TMP/linux-files.sh" "$TMP/ref"

A=$TMP/a.img
B=$TMP/b.img
truncate -s 48M "$A"
truncate -s 128M "$B"
"$MKFS_F2FS" -f -q -c "$B" "$A" >"$TMP/mkfs.log" 2>&1 || { cat "$TMP/mkfs.log"; fail "mkfs"; }

step "uf2fs writes"
MNT=$TMP/mnt
mount_uf2fs "$A" "$MNT" rw || fail "mount rw"
cp -a "$SRC/tree" "$MNT/tree" || fail "copy"
umount_uf2fs "$MNT" || fail "unmount"
fsck_clean "$A" || fail "fsck after uf2fs"
(cd "$SRC/tree" && find . -type f | sort | xargs sha256sum) >"$TMP/host.sums"

step "Linux reads the pair, then writes"
{
guest_funcs
cat <<EOF
set -e
mkdir -p "$(dirname "$B")"
ln -s /dev/vda "$A"
ln -s /dev/vdb "$B"
ls -lL "$A" "$B"
mount -t f2fs /dev/vda /mnt
sums /mnt/tree
[ "\$(readlink /mnt/tree/link)" = d1/f1 ] || { echo "bad symlink"; exit 1; }
$(cat "$TMP/linux-files.sh" | sed 's/^R=\$1$/R=\/mnt/')
rm /mnt/tree/gone
umount /mnt
dmesg_clean
echo linux-done
EOF
} >"$TMP/guest.sh"
out=$(qemu_run "$A" "$TMP/guest.sh" "$B" 600) || { printf '%s\n' "$out"; fail "guest"; }
printf '%s\n' "$out" | grep -q linux-done || fail "guest did not finish"
printf '%s\n' "$out" | guest_sums >"$TMP/guest.sums"
diff "$TMP/host.sums" "$TMP/guest.sums" || fail "Linux reads other bytes than uf2fs wrote"
log "Linux read $(wc -l <"$TMP/guest.sums") files as uf2fs wrote them"

step "uf2fs reads what Linux wrote"
fsck_clean "$A" || fail "fsck after Linux"
for p in ldir/big ldir/sub/small ldir/mid; do
	"$UF2FS" get "$A" "/$p" "$TMP/got" || fail "get /$p"
	cmp "$TMP/ref/$p" "$TMP/got" || fail "/$p differs from what Linux wrote"
done
"$UF2FS" ls "$A" /tree | grep -qw gone && fail "Linux's rm not seen"
mount_uf2fs "$A" "$MNT" ro || fail "mount ro"
compare_tree "$TMP/ref/ldir" "$MNT/ldir" --no-times --no-owner --no-mode --no-root || fail "tree"
umount_uf2fs "$MNT" || fail "unmount ro"
pass "a 2-device volume: Linux reads uf2fs's writes, uf2fs reads Linux's"
