#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fs-verity both ways against the real Linux f2fs in QEMU, on one image made
# with mkfs.f2fs -O extra_attr,verity. The files' bytes come from the host
# (uf2fs put), so Debian's `fsverity digest` gives every expected digest.
#
# (a) uf2fs enables verity on three files (through the mount with
#     `fsverity enable`, and offline with `uf2fs verity enable`): SHA-256
#     and SHA-512, with and without salt, one and two tree levels.
# (b) Linux reads them (every block checked against uf2fs's tree by the
#     kernel), measures the digest `fsverity digest` gives, refuses a write,
#     and enables verity on three files of its own the same ways.
# (c) uf2fs reads Linux's files through the mount (every block checked
#     against Linux's tree) and measures them through the mount and the CLI.
# fsck.f2fs -f is clean after each side wrote; the guest's dmesg has no f2fs
# or fs-verity complaint.
# The image also has -O encrypt: files under enc/ (a v2 AES-256-XTS policy
# set by uf2fs) are encrypted, their Merkle tree and descriptor too (f2fs
# encrypts them as data at their block index): uf2fs enables verity on two
# (mount and CLI) that Linux, given the key, reads and measures; Linux
# enables verity on one that uf2fs reads and measures with the keyfile.
#
# Env: BUILD, UF2FS, TOP (from make check); KEEP_TMP=1.
set -euo pipefail
. "$(dirname "$0")/compat-lib.sh"
need_cmd fsverity
# fs-verity's SHA-512 is a module in Debian's kernel; SHA-256 is built in
QEMU_MODULES="$QEMU_MODULES sha512_generic"
# fscrypt's v2 default (AES-256-XTS contents, CTS names, HKDF-SHA512)
QEMU_MODULES="$QEMU_MODULES ecb xts cts hmac"
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f
KEYID=8699c2c53707405da5aba5ae4d8583c0

TMO=${VERITY_COMPAT_TIMEOUT:-300}
tmpdir_init verity-compat
IMG=$TMP/v.img M=$TMP/mnt SRC=$TMP/src
mkdir -p "$SRC/enc" "$TMP/in"
K=$TMP/keys
echo $KEY >"$K"
chmod 600 "$K"

# name size hash salt who: u = uf2fs (mount), c = uf2fs (CLI), l = Linux
FILES="u1 1 sha512 c0ffee u
u5k 5000 sha256 - c
u700k 700000 sha256 0a0b0c0d u
l4097 4097 sha256 - l
l300k 300000 sha512 feed l
l600k 614400 sha256 1234 l
enc/u9000 9000 sha256 - u
enc/c300k 300000 sha512 beef c
enc/l70k 70000 sha256 ab l"

digest_of() { # name hash salt
	local o=(--hash-alg="$2")
	[ "$3" = - ] || o+=(--salt="$3")
	fsverity digest "${o[@]}" "$SRC/$1" | cut -d' ' -f1
}

rm -f "$IMG"
truncate -s 128M "$IMG"
"$MKFS_F2FS" -f -q -O extra_attr,verity,encrypt "$IMG" >/dev/null ||
	fail "mkfs.f2fs -O verity,encrypt"
mount_uf2fs "$IMG" "$M" rw,keyfile="$K" || fail "uf2fs mount -o keyfile"
mkdir "$M/enc" && "$UF2FS" fscrypt set_policy $KEYID "$M/enc" || fail "set_policy enc"
umount_uf2fs "$M" || fail "unmount"
while read -r name size hash salt who; do
	head -c "$size" /dev/urandom >"$SRC/$name"
	"$UF2FS" put -o keyfile="$K" "$IMG" "$SRC/$name" "/$name" || fail "uf2fs put $name"
	digest_of "$name" "$hash" "$salt" >"$SRC/$name.digest"
done <<<"$FILES"

step "(a) uf2fs enables verity"
while read -r name size hash salt who; do
	[ "$who" = c ] || continue
	o=(--hash-alg="$hash")
	[ "$salt" = - ] || o+=(--salt="$salt")
	"$UF2FS" verity enable -o keyfile="$K" "${o[@]}" "$IMG" "/$name" ||
		fail "uf2fs verity enable $name"
done <<<"$FILES"
mount_uf2fs "$IMG" "$M" rw,keyfile="$K" || fail "uf2fs mount -o rw"
while read -r name size hash salt who; do
	[ "$who" = u ] || continue
	o=(--hash-alg="$hash")
	[ "$salt" = - ] || o+=(--salt="$salt")
	fsverity enable "${o[@]}" "$M/$name" || fail "fsverity enable $name through uf2fs"
done <<<"$FILES"
umount_uf2fs "$M" || fail "unmount"
fsck_clean "$IMG" || fail "fsck.f2fs after uf2fs enabled verity"

step "(b) Linux reads and measures uf2fs's files, enables its own"
body=""
while read -r name size hash salt who; do
	if [ "$who" = l ]; then
		s=$([ "$salt" = - ] || echo "$salt")
		body+="	gh verity-enable /mnt/$name $hash $s ||
		bad 'enable $name'
"
	fi
	body+="	gh verity-measure /mnt/$name >> \$O/measure || bad 'measure $name'
	gh sha256 /mnt/$name >> \$O/sha256 || bad 'read $name'
"
done <<<"$FILES"
cat > "$TMP/guest.sh" <<EOF
rc=0
O=/tmp/out
mkdir -p \$O /mnt
bad() { echo "GUEST: \$*"; rc=1; }
if mount -t f2fs /dev/vda /mnt; then
	[ "\$(gh fscrypt add_key /mnt $KEY)" = $KEYID ] || bad "add_key"
	gh fscrypt get_policy /mnt/enc/u9000 > \$O/policy || bad "get_policy enc/u9000"
$body
	echo x >> /mnt/u5k 2>/dev/null && bad "Linux wrote to uf2fs's verity file"
	gh flags /mnt/u700k > \$O/flags
	cd /; umount /mnt || bad "umount failed"
else bad "mount failed"; fi
dmesg > \$O/dmesg
tar cf - -C \$O . | dd of=/dev/vdb bs=65536 conv=fsync 2>/dev/null
exit \$rc
EOF
rm -f "$TMP/guest.out"
QEMU_IN=$TMP/in qemu_run "$IMG" "$TMP/guest.sh" "$TMP/guest.out" "$TMO" > "$TMP/guest.console" ||
	{ tail -30 "$TMP/guest.console" >&2; fail "guest failed"; }
guest_console_ok "$TMP/guest.console" || fail "guest: checks failed"
mkdir -p "$TMP/g"
tar xf "$TMP/guest.out" -C "$TMP/g" || fail "no output from the guest"
guest_dmesg_ok "$TMP/g/dmesg" || fail "kernel f2fs/fs-verity messages"
i=0
while read -r name size hash salt who; do
	i=$((i + 1))
	got=$(sed -n "${i}p" "$TMP/g/measure")
	[ "$got" = "$(cat "$SRC/$name.digest")" ] ||
		fail "Linux measures $name as $got, fsverity digest says $(cat "$SRC/$name.digest")"
	got=$(sed -n "${i}p" "$TMP/g/sha256")
	[ "$got" = "$(sha256sum <"$SRC/$name" | cut -d' ' -f1)" ] || fail "Linux reads $name wrong"
done <<<"$FILES"
[ $(( 0x$(cut -d' ' -f1 "$TMP/g/flags") & 0x00100000 )) -ne 0 ] ||
	fail "Linux shows no FS_VERITY_FL on u700k: $(cat "$TMP/g/flags")"
grep -q "^v2 AES-256-XTS .* $KEYID\$" "$TMP/g/policy" ||
	fail "Linux sees enc/u9000 unencrypted or under another policy: $(cat "$TMP/g/policy")"
log "Linux verified, read and measured every file as fsverity digest does"
fsck_clean "$IMG" || fail "fsck.f2fs after Linux enabled verity"

step "(c) uf2fs reads and measures Linux's files"
mount_uf2fs "$IMG" "$M" ro,keyfile="$K" || fail "uf2fs mount -o ro"
while read -r name size hash salt who; do
	cmp "$M/$name" "$SRC/$name" || fail "$name reads wrong through uf2fs"
	got=$(fsverity measure "$M/$name" | cut -d' ' -f1)
	[ "$got" = "$(cat "$SRC/$name.digest")" ] || fail "uf2fs (mount) measures $name as $got"
done <<<"$FILES"
lsattr "$M/l600k" | grep -q '^[^ ]*V' || fail "lsattr shows no V on Linux's verity file"
umount_uf2fs "$M" || fail "unmount"
while read -r name size hash salt who; do
	got=$("$UF2FS" verity measure -o keyfile="$K" "$IMG" "/$name" | cut -d' ' -f1)
	[ "$got" = "$(cat "$SRC/$name.digest")" ] || fail "uf2fs (CLI) measures $name as $got"
	"$UF2FS" cat -o keyfile="$K" "$IMG" "/$name" | cmp - "$SRC/$name" || fail "uf2fs cat $name"
done <<<"$FILES"
pass
