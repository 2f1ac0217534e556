#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fs-verity builtin signatures against Linux 6.1 in QEMU (Debian's kernel
# has CONFIG_FS_VERITY_BUILTIN_SIGNATURES), one -O extra_attr,verity image.
# Certificates A and B (openssl), signatures by Debian's `fsverity sign`.
#
# (a) uf2fs, with no certificate (signatures stored unchecked), enables
#     verity on us1 (signed by A), us2 (by B), ubad (A's signature with a
#     byte of its value flipped) and uuns (unsigned).
# (b) Linux, with A in its .fs-verity keyring: reads us1 and uuns, refuses
#     us2 (ENOKEY) and ubad (EKEYREJECTED): it checks what uf2fs stored.
#     Then it enables ls1 with A's signature (works), lB with B's (ENOKEY)
#     and lbad with the bad one (EKEYREJECTED).
# (c) uf2fs with -o verity_cert=A gives, file by file, the same result for
#     every read as Linux, measures ls1 as `fsverity digest`, and refuses
#     the same enables with the same errors.
# (d) fs.verity.require_signatures=1 in Linux and verity_require_signatures
#     in uf2fs: the unsigned file fails to open (EPERM) in both, the signed
#     one opens, an unsigned enable fails (EPERM) in both.
# fsck.f2fs -f clean after each side.
#
# Env: BUILD, UF2FS, TOP (from make check); KEEP_TMP=1.
set -euo pipefail
. "$(dirname "$0")/compat-lib.sh"
need_cmd fsverity openssl gcc "$PY"

tmpdir_init verity-sign
IMG=$TMP/v.img M=$TMP/mnt IN=$TMP/in
mkdir -p "$IN"
ENOKEY=126 EKEYREJECTED=129

for k in A B; do
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=uf2fs compat $k" \
		-keyout "$TMP/$k.key" -out "$TMP/$k.pem" 2>/dev/null || fail "openssl req $k"
done
openssl x509 -in "$TMP/A.pem" -outform DER -out "$IN/A.der" || fail "DER"
# name signer: - unsigned, bad = A's with a flipped byte
FILES="us1 A
us2 B
ubad bad
uuns -
ls1 A
lB B
lbad bad
uB B
ubad2 bad
lreq -
ureq -"
while read -r f k; do
	head -c $((50000 + RANDOM)) /dev/urandom >"$IN/$f"
	[ "$k" = - ] && continue
	s=$k
	[ "$k" = bad ] && s=A
	fsverity sign "$IN/$f" "$IN/$f.sig" --key="$TMP/$s.key" --cert="$TMP/$s.pem" \
		>/dev/null || fail "fsverity sign $f"
	[ "$k" = bad ] && "$PY" -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read())
b[-7] ^= 1; open(p, "wb").write(b)' "$IN/$f.sig"
done <<<"$FILES"

: >"$IN/empty.sig"	# sig_size 0: an unsigned enable that reports its errno
rm -f "$IMG"
truncate -s 64M "$IMG"
"$MKFS_F2FS" -f -q -O extra_attr,verity "$IMG" >/dev/null || fail "mkfs.f2fs -O verity"

step "(a) uf2fs stores signatures (no certificate given)"
mount_uf2fs "$IMG" "$M" rw || fail "mount"
while read -r f k; do cp "$IN/$f" "$M/$f" || fail "cp $f"; done <<<"$FILES"
for f in us1 us2 ubad; do
	fsverity enable --signature="$IN/$f.sig" "$M/$f" || fail "enable $f"
done
fsverity enable "$M/uuns" || fail "enable uuns"
umount_uf2fs "$M" || fail "unmount"
fsck_clean "$IMG" || fail "fsck after uf2fs"

step "(b) Linux checks them, and enables its own"
{
	guest_funcs
	cat <<'EOF'
rc=0
mount -t f2fs /dev/vda /mnt || { echo "GUEST: mount failed"; exit 1; }
gh verity-keyring-add /in/A.der || echo "GUEST: add_key failed"
for f in us1 us2 ubad uuns; do echo "read $f $(gh read-errno /mnt/$f)"; done
for f in ls1 lB lbad; do echo "enable $f $(gh verity-sign-enable /mnt/$f /in/$f.sig)"; done
echo "read ls1 $(gh read-errno /mnt/ls1)"
echo "measure ls1 $(gh verity-measure /mnt/ls1)"
umount /mnt
echo 1 > /proc/sys/fs/verity/require_signatures || echo "GUEST: no require_signatures"
mount -t f2fs /dev/vda /mnt || { echo "GUEST: remount failed"; exit 1; }
for f in uuns us1; do echo "reqread $f $(gh read-errno /mnt/$f)"; done
echo "reqenable lreq $(gh verity-sign-enable /mnt/lreq /in/empty.sig)"
umount /mnt
dmesg | grep -i verity
dmesg_clean || rc=1
exit $rc
EOF
} >"$TMP/guest.sh"
QEMU_IN=$IN qemu_run "$IMG" "$TMP/guest.sh" "" 300 >"$TMP/guest.console" ||
	{ tail -30 "$TMP/guest.console" >&2; fail "guest failed"; }
guest_console_ok "$TMP/guest.console" || fail "guest: checks failed"
grep -E '^(read|enable|measure|reqread|reqenable) ' "$TMP/guest.console" >"$TMP/linux" || true
cat "$TMP/linux"
want="read us1 0
read us2 $ENOKEY
read ubad $EKEYREJECTED
read uuns 0
enable ls1 0
enable lB $ENOKEY
enable lbad $EKEYREJECTED
read ls1 0
reqread uuns 1
reqread us1 0
reqenable lreq 1"
[ "$(grep -v '^measure' "$TMP/linux")" = "$want" ] ||
	fail "Linux's results differ from the expected ones (ENOKEY $ENOKEY, EKEYREJECTED $EKEYREJECTED)"
digest=$(fsverity digest "$IN/ls1" | cut -d' ' -f1)
grep -qx "measure ls1 $digest" "$TMP/linux" || fail "Linux measures ls1 otherwise"
fsck_clean "$IMG" || fail "fsck after Linux"

step "(c) uf2fs with verity_cert=A agrees"
read_errno() { "$PY" -c 'import sys
try:
    open(sys.argv[1], "rb").read(); print(0)
except OSError as e:
    print(e.errno)' "$1"; }
mount_uf2fs "$IMG" "$M" "rw,verity_cert=$TMP/A.pem" || fail "mount with A"
for f in us1 us2 ubad uuns ls1; do
	l=$(grep "^read $f " "$TMP/linux" | cut -d' ' -f3)
	u=$(read_errno "$M/$f")
	[ "$u" = "$l" ] || fail "$f: uf2fs reads with errno $u, Linux $l"
done
[ "$(fsverity measure "$M/ls1" | cut -d' ' -f1)" = "$digest" ] || fail "uf2fs measures ls1 otherwise"
for f in lB lbad; do
	fsverity measure "$M/$f" >/dev/null 2>&1 && fail "Linux's refused enable of $f left verity on"
done
# the same refusals at enable, on files of uf2fs's
"$PY" - "$M" "$IN" <<'EOF' >"$TMP/uf2fs-enable" || fail "enable through uf2fs"
import ctypes, fcntl, os, struct, sys
FS_IOC_ENABLE_VERITY = 0x40806685    # struct fsverity_enable_arg, 128 bytes
for f in ("uB", "ubad2"):
    sig = open(os.path.join(sys.argv[2], f + ".sig"), "rb").read()
    sb = ctypes.create_string_buffer(sig)
    arg = struct.pack("<IIIIQIIQ", 1, 1, 4096, 0, 0, len(sig), 0, ctypes.addressof(sb)) + bytes(88)
    fd = os.open(os.path.join(sys.argv[1], f), os.O_RDONLY)
    try:
        fcntl.ioctl(fd, FS_IOC_ENABLE_VERITY, arg)
        print(f, 0)
    except OSError as e:
        print(f, e.errno)
    os.close(fd)
EOF
[ "$(cat "$TMP/uf2fs-enable")" = "uB $ENOKEY
ubad2 $EKEYREJECTED" ] || fail "uf2fs's enables: $(cat "$TMP/uf2fs-enable")"
umount_uf2fs "$M" || fail "unmount"
step "(d) require_signatures"
mount_uf2fs "$IMG" "$M" "rw,verity_require_signatures,verity_cert=$TMP/A.pem" ||
	fail "mount with require_signatures"
for f in uuns us1; do
	l=$(grep "^reqread $f " "$TMP/linux" | cut -d' ' -f3)
	u=$(read_errno "$M/$f")
	[ "$u" = "$l" ] || fail "$f under require_signatures: uf2fs errno $u, Linux $l"
done
u=$(fsverity enable "$M/ureq" 2>&1) && fail "uf2fs enabled an unsigned file under require"
grep -q "Operation not permitted" <<<"$u" || fail "unsigned enable under require: '$u'"
umount_uf2fs "$M" || fail "unmount"
fsck_clean "$IMG" || fail "fsck at the end"
log "Linux and uf2fs agree on every signed file: reads, digest, refused enables"
pass
