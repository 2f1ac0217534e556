#!/bin/bash
# fs-verity on encrypted files (Android /data: APKs are FBE-encrypted and
# fs-verity'd). On a -O encrypt,verity image mounted with a keyfile, files
# written into a v2-policy directory get `fsverity enable`; `fsverity
# measure` must equal `fsverity digest` of the plaintext, and the Merkle
# tree must not be on disk in plaintext (f2fs encrypts it as file data at
# its block index). After a remount the files read back and measure the
# same, fsck is clean; offline, `uf2fs verity measure` with the keyfile
# agrees and without it fails with ENOKEY, and `uf2fs verity enable`
# offline on an encrypted file measures right through the mount.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_root
need_fuse
need_cmd fsverity
tmpdir_init verity-fscrypt
IMG=$TMP/vc.img MNT=$TMP/mnt SRC=$TMP/src KF=$TMP/keys
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f
ID=8699c2c53707405da5aba5ae4d8583c0
echo $KEY >"$KF"
chmod 600 "$KF"
mkdir -p "$SRC"
head -c 3000000 /dev/urandom >"$SRC/big"
head -c 4097 /dev/urandom >"$SRC/odd"
echo small >"$SRC/small"
head -c 200000 /dev/urandom >"$SRC/off"
FILES="big odd small"

mk_image "$IMG" 64M extra_attr,encrypt,verity "" || fail "mkfs"
mount_uf2fs "$IMG" "$MNT" rw,keyfile="$KF" || fail "mount with keyfile"

step "enable verity on encrypted files through the mount"
mkdir "$MNT/enc" && "$UF2FS" fscrypt set_policy $ID "$MNT/enc" || fail "set_policy"
for f in $FILES; do
	cp "$SRC/$f" "$MNT/enc/$f" || fail "cp $f"
	fsverity enable "$MNT/enc/$f" || fail "fsverity enable on encrypted $f"
done
check_all() { # where
	for f in $FILES; do
		want=$(fsverity digest "$SRC/$f" | cut -d' ' -f1)
		got=$(fsverity measure "$MNT/enc/$f" | cut -d' ' -f1)
		[ "$got" = "$want" ] || fail "$1: $f measures $got, fsverity digest $want"
		cmp "$SRC/$f" "$MNT/enc/$f" || fail "$1: $f reads back different"
	done
}
check_all "live"
umount_uf2fs "$MNT" || fail "unmount"
fsck_clean "$IMG" || fail "fsck after enabling verity on encrypted files"

step "the Merkle tree is encrypted on disk"
fsverity digest --out-merkle-tree="$TMP/tree" "$SRC/big" >/dev/null || fail "digest tree"
"$PY" - "$IMG" "$TMP/tree" <<'PY' || fail "a plaintext Merkle tree block is on disk"
import sys
img, tree = open(sys.argv[1], 'rb').read(), open(sys.argv[2], 'rb').read()
sys.exit(1 if tree[:4096] in img else 0)
PY

step "remount, read and measure; offline with and without the key"
mount_uf2fs "$IMG" "$MNT" ro,keyfile="$KF" || fail "mount ro"
check_all "remount"
umount_uf2fs "$MNT" || fail "unmount"
want=$(fsverity digest "$SRC/big" | cut -d' ' -f1)
got=$("$UF2FS" verity measure -o keyfile="$KF" "$IMG" /enc/big | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "offline measure $got, fsverity digest $want"
nokey=$("$UF2FS" ls -l "$IMG" /enc | awk '$5 == 3000000 { print $NF }')
[ -n "$nokey" ] || fail "no-key name of big not found"
out=$("$UF2FS" verity measure "$IMG" "/enc/$nokey" 2>&1) && fail "measure without the key worked"
mentions "$out" "key not available" || fail "measure without the key: $out"

step "offline enable on an encrypted file"
mount_uf2fs "$IMG" "$MNT" rw,keyfile="$KF" || fail "mount"
cp "$SRC/off" "$MNT/enc/off" || fail "cp off"
umount_uf2fs "$MNT" || fail "unmount"
nokey=$("$UF2FS" ls -l "$IMG" /enc | awk '$5 == 200000 { print $NF }')
[ -n "$nokey" ] || fail "no-key name of off not found"
out=$("$UF2FS" verity enable "$IMG" "/enc/$nokey" 2>&1) && fail "enable without the key worked"
mentions "$out" "key not available" || fail "enable without the key: $out"
"$UF2FS" verity enable -o keyfile="$KF" --salt=beef "$IMG" /enc/off || fail "offline enable"
fsck_clean "$IMG" || fail "fsck after offline enable"
mount_uf2fs "$IMG" "$MNT" ro,keyfile="$KF" || fail "mount ro"
want=$(fsverity digest --salt=beef "$SRC/off" | cut -d' ' -f1)
got=$(fsverity measure "$MNT/enc/off" | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "offline enable: measure $got, fsverity digest $want"
cmp "$SRC/off" "$MNT/enc/off" || fail "offline-enabled file reads back different"
umount_uf2fs "$MNT" || fail "unmount"
pass
