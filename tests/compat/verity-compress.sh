#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fs-verity on compressed files, both ways against Linux f2fs in QEMU, on one
# image made with mkfs.f2fs -O extra_attr,verity,compression. Linux 6.1
# allows verity on a compressed file: the data stays in its clusters (a
# cluster wholly within EOF compressed, the one that straddles EOF raw), the
# Merkle tree and descriptor go past EOF as plain blocks (a cluster with a
# block past EOF is never compressed), and each decompressed block is checked
# against the tree. The bytes come from the host, so `fsverity digest` gives
# every expected digest.
#
# (a) uf2fs makes compressed files in a +c directory (lz4, 4-block clusters;
#     one with 32-block clusters whose EOF cluster also holds the tree) and
#     enables verity through the mount and offline (`uf2fs verity enable`).
# (b) Linux counts their compressed blocks, reads them (checking every block
#     against uf2fs's tree) and measures them; then it copies two files of
#     its own into the +c directory (32-block clusters), checks they are
#     compressed and enables verity on them.
# (c) fsck.f2fs -f is clean; uf2fs reads and measures every file (mount, CLI).
# (d) Tampering with a copy of the image: a flipped byte in a compressed
#     block of Linux's file and in the tree of uf2fs's file give EIO for the
#     blocks they cover (mount and `uf2fs cat`), never altered bytes.
#
# Env: BUILD, UF2FS, TOP (from make check); KEEP_TMP=1.
set -euo pipefail
. "$(dirname "$0")/compat-lib.sh"
need_cmd fsverity python3 chattr
QEMU_MODULES="$QEMU_MODULES sha512_generic"

TMO=${VERITY_COMPAT_TIMEOUT:-300}
tmpdir_init verity-compress
IMG=$TMP/v.img M=$TMP/mnt SRC=$TMP/in
mkdir -p "$SRC"
COPT=compress_algorithm=lz4

# name size hash salt who log: u = uf2fs (mount), c = uf2fs (CLI), l = Linux;
# log = log2 of the cluster size in blocks
FILES="u300k 300000 sha256 - u 2
c200k 200000 sha512 beef c 2
u140k 140000 sha256 0a0b u 5
l300k 300000 sha256 - l 5
l150k 150000 sha512 feed l 5"

# compressible, different per file: numbered lines of text
while read -r name size hash salt who log; do
	python3 -c '
import random, sys
r = random.Random(sys.argv[1])
words = [b"alpha", b"beta", b"gamma", b"delta", b"verity", b"cluster", b"f2fs"]
out = bytearray()
while len(out) < int(sys.argv[2]):
    out += b" ".join(r.choice(words) for _ in range(8)) + b" %d\n" % len(out)
sys.stdout.buffer.write(out[:int(sys.argv[2])])' "$name" "$size" >"$SRC/$name" ||
		fail "making $name"
	o=(--hash-alg="$hash")
	[ "$salt" = - ] || o+=(--salt="$salt")
	fsverity digest "${o[@]}" "$SRC/$name" | cut -d' ' -f1 >"$TMP/$name.digest"
done <<<"$FILES"

rm -f "$IMG"
truncate -s 64M "$IMG"
"$MKFS_F2FS" -f -q -O extra_attr,verity,compression "$IMG" >/dev/null ||
	fail "mkfs.f2fs -O verity,compression"

step "(a) uf2fs writes compressed files and enables verity"
for log in 2 5; do
	mount_uf2fs "$IMG" "$M" "rw,$COPT,compress_log_size=$log" || fail "uf2fs mount rw"
	[ -d "$M/c" ] || { mkdir "$M/c" && chattr +c "$M/c"; } || fail "mkdir +c"
	while read -r name size hash salt who wlog; do
		[ "$who" != l ] && [ "$wlog" = "$log" ] || continue
		cp "$SRC/$name" "$M/c/$name" || fail "cp $name"
		[ "$who" = u ] || continue
		o=(--hash-alg="$hash")
		[ "$salt" = - ] || o+=(--salt="$salt")
		fsverity enable "${o[@]}" "$M/c/$name" || fail "fsverity enable $name through uf2fs"
	done <<<"$FILES"
	umount_uf2fs "$M" || fail "unmount"
done
while read -r name size hash salt who log; do
	[ "$who" = c ] || continue
	o=(--hash-alg="$hash")
	[ "$salt" = - ] || o+=(--salt="$salt")
	"$UF2FS" verity enable "${o[@]}" "$IMG" "/c/$name" || fail "uf2fs verity enable $name"
done <<<"$FILES"
fsck_clean "$IMG" || fail "fsck.f2fs after uf2fs enabled verity"

step "(b) Linux reads uf2fs's files, enables its own"
body=""
while read -r name size hash salt who log; do
	if [ "$who" = l ]; then
		s=$([ "$salt" = - ] || echo "$salt")
		body+="	cp /in/$name /mnt/c/$name && sync || bad 'copy $name'
	gh verity-enable /mnt/c/$name $hash $s || bad 'enable $name'
"
	fi
	body+="	n=\$(gh cblocks /mnt/c/$name) && [ \"\$n\" -gt 0 ] || bad '$name is not compressed'
	gh verity-measure /mnt/c/$name >> \$O/measure || bad 'measure $name'
	gh sha256 /mnt/c/$name >> \$O/sha256 || bad 'read $name'
"
done <<<"$FILES"
cat >"$TMP/guest.sh" <<EOF
rc=0
O=/tmp/out
mkdir -p \$O /mnt
bad() { echo "GUEST: \$*"; rc=1; }
if mount -t f2fs -o $COPT,compress_log_size=5 /dev/vda /mnt; then
$body
	(echo x >> /mnt/c/u300k) 2>/dev/null && bad "Linux wrote to uf2fs's verity file"
	cd /; umount /mnt || bad "umount failed"
else bad "mount failed"; fi
dmesg > \$O/dmesg
tar cf - -C \$O . | dd of=/dev/vdb bs=65536 conv=fsync 2>/dev/null
exit \$rc
EOF
t0=$SECONDS
QEMU_IN=$SRC qemu_run "$IMG" "$TMP/guest.sh" "$TMP/guest.out" "$TMO" >"$TMP/guest.console" ||
	{ tail -30 "$TMP/guest.console" >&2; fail "guest failed"; }
log "guest: $((SECONDS - t0)) s"
guest_console_ok "$TMP/guest.console" || fail "guest: checks failed"
mkdir -p "$TMP/g"
tar xf "$TMP/guest.out" -C "$TMP/g" || fail "no output from the guest"
guest_dmesg_ok "$TMP/g/dmesg" || fail "kernel f2fs/fs-verity messages"
i=0
while read -r name size hash salt who log; do
	i=$((i + 1))
	got=$(sed -n "${i}p" "$TMP/g/measure")
	[ "$got" = "$(cat "$TMP/$name.digest")" ] ||
		fail "Linux measures $name as $got, fsverity digest says $(cat "$TMP/$name.digest")"
	got=$(sed -n "${i}p" "$TMP/g/sha256")
	[ "$got" = "$(sha256sum <"$SRC/$name" | cut -d' ' -f1)" ] || fail "Linux reads $name wrong"
done <<<"$FILES"
log "Linux verified, read and measured uf2fs's compressed verity files; enabled its own"

step "(c) uf2fs reads and measures every file"
fsck_clean "$IMG" || fail "fsck.f2fs after Linux enabled verity"
mount_uf2fs "$IMG" "$M" ro || fail "uf2fs mount -o ro"
while read -r name size hash salt who log; do
	cmp "$M/c/$name" "$SRC/$name" || fail "$name reads wrong through uf2fs"
	got=$(fsverity measure "$M/c/$name" | cut -d' ' -f1)
	[ "$got" = "$(cat "$TMP/$name.digest")" ] || fail "uf2fs (mount) measures $name as $got"
done <<<"$FILES"
umount_uf2fs "$M" || fail "unmount"
while read -r name size hash salt who log; do
	got=$("$UF2FS" verity measure "$IMG" "/c/$name" | cut -d' ' -f1)
	[ "$got" = "$(cat "$TMP/$name.digest")" ] || fail "uf2fs (CLI) measures $name as $got"
	"$UF2FS" cat "$IMG" "/c/$name" | cmp - "$SRC/$name" || fail "uf2fs cat $name"
done <<<"$FILES"
log "uf2fs read and measured Linux's compressed verity files"

step "(d) tampering gives EIO"
cp "$IMG" "$TMP/t.img"
# l300k, 32-block clusters: cluster 0 is compressed (COMPRESS_ADDR, then its
# compressed blocks); u140k: its only tree block is block 48 (196608 / 4096).
"$PY" - "$TMP/t.img" "$LIB" <<'EOF' || fail "flipping bytes"
import sys
sys.path.insert(0, sys.argv[2])
import f2fsimg
img = f2fsimg.Image(sys.argv[1], writable=True)
ino = img.resolve("/c/l300k")
assert img.bmap(ino, 0) == 0xFFFFFFFE, "cluster 0 of l300k is not compressed"
for path, lblk in (("/c/l300k", 1), ("/c/u140k", 48)):
    ino = img.resolve(path)
    addr = img.bmap(ino, lblk)
    assert addr not in (0, 0xFFFFFFFF, 0xFFFFFFFE), (path, lblk, addr)
    b = bytearray(img.block(addr))
    b[2000] ^= 0x20
    img.write_block(addr, bytes(b))
    print("flipped", path, "block", lblk, "at", addr)
EOF
mount_uf2fs "$TMP/t.img" "$M" ro || fail "mount the tampered image"
# the altered byte decompresses into some block of cluster 0, which fails its check
cat "$M/c/l300k" >/dev/null 2>&1 && fail "l300k (a compressed block altered) read without error"
b=$(grep -o "verity check failed for data block [0-9]*" "$(mount_log "$M")" | head -1 |
	awk '{print $NF}')
[ -n "$b" ] && [ "$b" -lt 32 ] ||
	fail "no verity error for a block of l300k's cluster 0 in the daemon's log ('$b')"
log "l300k: the verity check of decompressed block $b failed"
dd if="$M/c/l300k" of=/dev/null bs=4096 skip=40 count=1 status=none ||
	fail "l300k block 40 (another cluster) must still read"
cat "$M/c/u140k" >/dev/null 2>&1 && fail "u140k (its tree altered) read without error"
cmp "$M/c/u300k" "$SRC/u300k" || fail "an intact file no longer reads"
umount_uf2fs "$M" || fail "unmount"
for f in l300k u140k; do
	"$UF2FS" cat "$TMP/t.img" "/c/$f" >"$TMP/$f.cat" 2>"$TMP/$f.err" && fail "uf2fs cat $f worked"
	grep -q "Input/output error" "$TMP/$f.err" || fail "uf2fs cat $f: $(cat "$TMP/$f.err")"
	[ "$(cmp "$TMP/$f.cat" "$SRC/$f" 2>&1 | grep -c differ)" = 0 ] ||
		fail "uf2fs cat $f printed altered bytes"
done
pass
