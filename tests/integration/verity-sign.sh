#!/bin/bash
# fs-verity builtin signatures with -o verity_cert=FILE.pem (repeatable), as
# Linux with CONFIG_FS_VERITY_BUILTIN_SIGNATURES and a ".fs-verity" keyring.
# Two self-signed certificates (openssl), signatures made by Debian's
# `fsverity sign`. Files enabled through a mount without certificates (the
# signatures are stored unchecked): s1 signed by A, s2 by B, bad (A's
# signature with a byte of the signature value flipped), junk (random bytes
# as the signature), u (unsigned). Then:
# - with verity_cert=A: s1 and u read; s2 fails to open with ENOKEY, bad
#   with EKEYREJECTED, junk with EBADMSG; `uf2fs cat -o verity_cert=A`
#   agrees offline; a digest measured without certificates is unchanged.
# - with verity_cert=A,verity_cert=B: s2 reads too.
# - enable with B's signature under verity_cert=A fails (ENOKEY) and leaves
#   the file writable, without verity; with A's signature it works.
# - verity_require_signatures: u fails to open (EPERM), an unsigned enable
#   fails and rolls back; without any certificate s1 fails too (ENOKEY).
# - a verity_cert file that holds no certificate fails the mount clearly.
# fsck.f2fs -f clean at the end.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_root
need_fuse
need_uf2fs
need_f2fs_tools
need_cmd fsverity openssl lsattr
tmpdir_init verity-sign
IMG=$TMP/v.img MNT=$TMP/mnt SRC=$TMP/src
mkdir -p "$SRC"

for k in A B; do
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=uf2fs test $k" \
		-keyout "$TMP/$k.key" -out "$TMP/$k.pem" 2>/dev/null || fail "openssl req $k"
done
for f in s1 s2 bad junk u late; do
	head -c $((100000 + RANDOM)) /dev/urandom >"$SRC/$f"
done
sign() { fsverity sign "$SRC/$1" "$TMP/$1.$2.sig" --key="$TMP/$2.key" --cert="$TMP/$2.pem" \
	>/dev/null || fail "fsverity sign $1 with $2"; }
sign s1 A
sign s2 B
sign bad A
sign late A
sign late B
cp "$TMP/bad.A.sig" "$TMP/bad.sig"
"$PY" -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[-7] ^= 1
open(p, "wb").write(b)' "$TMP/bad.sig"
head -c 300 /dev/urandom >"$TMP/junk.sig"

mk_image "$IMG" 64M extra_attr,verity "" || fail "mkfs"
mount_uf2fs "$IMG" "$MNT" rw || fail "mount"
for f in s1 s2 bad junk u late; do cp "$SRC/$f" "$MNT/$f" || fail "cp $f"; done
fsverity enable --signature="$TMP/s1.A.sig" "$MNT/s1" &&
	fsverity enable --signature="$TMP/s2.B.sig" "$MNT/s2" &&
	fsverity enable --signature="$TMP/bad.sig" "$MNT/bad" &&
	fsverity enable --signature="$TMP/junk.sig" "$MNT/junk" &&
	fsverity enable "$MNT/u" || fail "enable without certificates (signatures unchecked)"
want_s1=$(fsverity measure "$MNT/s1" | cut -d' ' -f1)
umount_uf2fs "$MNT" || fail "unmount"

expect_open() { # file errno-text
	local out
	out=$(cat "$MNT/$1" 2>&1 >/dev/null) && fail "$1 opened"
	grep -q "$2" <<<"$out" || fail "$1: '$out', want '$2'"
}

step "verity_cert=A"
mount_uf2fs "$IMG" "$MNT" "ro,verity_cert=$TMP/A.pem" || fail "mount with A"
cmp "$MNT/s1" "$SRC/s1" || fail "s1 (signed by A) does not read"
cmp "$MNT/u" "$SRC/u" || fail "u (unsigned) does not read"
[ "$(fsverity measure "$MNT/s1" | cut -d' ' -f1)" = "$want_s1" ] || fail "s1's digest changed"
expect_open s2 "Required key not available"
expect_open bad "Key was rejected by service"
expect_open junk "Bad message"
grep -q "signing certificate is not among verity_cert" "$(mount_log "$MNT")" ||
	fail "no message for s2 in the daemon's log"
umount_uf2fs "$MNT" || fail "unmount"
"$UF2FS" cat -o "verity_cert=$TMP/A.pem" "$IMG" /s1 | cmp -s - "$SRC/s1" || fail "uf2fs cat s1"
"$UF2FS" cat -o "verity_cert=$TMP/A.pem" "$IMG" /s2 >/dev/null 2>"$TMP/err" &&
	fail "uf2fs cat s2 under verity_cert=A"
grep -q "Required key not available" "$TMP/err" || fail "uf2fs cat s2: $(cat "$TMP/err")"

step "verity_cert=A,verity_cert=B"
mount_uf2fs "$IMG" "$MNT" "ro,verity_cert=$TMP/A.pem,verity_cert=$TMP/B.pem" ||
	fail "mount with A and B"
cmp "$MNT/s2" "$SRC/s2" || fail "s2 (signed by B) does not read with B's certificate"
cmp "$MNT/s1" "$SRC/s1" || fail "s1 does not read with both certificates"
umount_uf2fs "$MNT" || fail "unmount"

step "enable under verity_cert=A"
mount_uf2fs "$IMG" "$MNT" "rw,verity_cert=$TMP/A.pem" || fail "mount rw with A"
out=$(fsverity enable --signature="$TMP/late.B.sig" "$MNT/late" 2>&1) &&
	fail "enable with B's signature under verity_cert=A"
grep -q "Required key not available" <<<"$out" || fail "enable with B's signature: '$out'"
lsattr "$MNT/late" | grep -q '^[^ ]*V' && fail "a refused enable left the verity flag"
echo x >>"$MNT/late" || fail "the file is not writable after the refused enable"
truncate -s "$(stat -c %s "$SRC/late")" "$MNT/late"
fsverity enable --signature="$TMP/late.A.sig" "$MNT/late" || fail "enable with A's signature"
cmp "$MNT/late" "$SRC/late" || fail "late reads wrong"
umount_uf2fs "$MNT" || fail "unmount"

step "verity_require_signatures"
mount_uf2fs "$IMG" "$MNT" "rw,verity_require_signatures,verity_cert=$TMP/A.pem" ||
	fail "mount with require_signatures"
cmp "$MNT/s1" "$SRC/s1" || fail "s1 (signed by A) does not read under require_signatures"
expect_open u "Operation not permitted"
head -c 5000 /dev/urandom >"$MNT/u2"
out=$(fsverity enable "$MNT/u2" 2>&1) && fail "an unsigned enable under require_signatures"
grep -q "Operation not permitted" <<<"$out" || fail "unsigned enable: '$out', want EPERM"
lsattr "$MNT/u2" | grep -q '^[^ ]*V' && fail "the refused enable left the verity flag"
umount_uf2fs "$MNT" || fail "unmount"
# no certificate at all: an empty keyring, so a signed file has no signer (ENOKEY)
mount_uf2fs "$IMG" "$MNT" "ro,verity_require_signatures" || fail "mount, require without certs"
expect_open s1 "Required key not available"
expect_open u "Operation not permitted"
umount_uf2fs "$MNT" || fail "unmount"

step "a bad verity_cert file"
echo "not a certificate" >"$TMP/none.pem"
run_limited 30 "$UF2FS" cat -o "verity_cert=$TMP/none.pem" "$IMG" /u
expect_clean_error "verity_cert= without a certificate" || fail "bad verity_cert"
grep -q "no PEM certificate" <<<"$OUT" || fail "bad verity_cert: $OUT"
fsck_clean "$IMG" || fail "fsck.f2fs"
pass
