#!/bin/bash
# fscrypt on a live mount and offline. On a fresh mkfs -O encrypt image:
# `uf2fs fscrypt add_key` (the identifier must be the one Linux derives for
# that key), set_policy on empty directories (v2 default, v2 IV_INO_LBLK_32
# with padding 16, v1), a tree written through the mount (small, large,
# sparse, long names, symlinks, subdirectories), read back through the
# mount; remove_key on the live mount: the directory then lists no-key
# names, contents and new names give ENOKEY, stat and unlink by no-key name
# work; the key comes back. After unmount: fsck.f2fs clean, `uf2fs get -o
# keyfile=` extracts the same tree, `uf2fs ls` without the key lists no-key
# names, and a keyfile others can read is refused. Then a keyfile= mount
# with folio writeback, and roll-forward recovery of new encrypted names in
# an image Linux fsync'd and lost power on (fixtures/fscrypt-fsync-cut.*),
# and compressed encrypted files Linux wrote (fixtures/fscrypt-compressed.*), then
# changed by uf2fs (overwrite, truncate inside a cluster, append).
set -u
. "$(dirname "$0")/../lib/common.sh"
need_root
need_fuse
tmpdir_init fscrypt
IMG=$TMP/enc.img MNT=$TMP/mnt SRC=$TMP/src OUT=$TMP/out
KEY2=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f
KEY1=f0e1d2c3b4a5968778695a4b3c2d1e0f0123456789abcdef0123456789abcdeffedcba9876543210fedcba98765432100f1e2d3c4b5a69788796a5b4c3d2e1f0
DESC1=1122334455667788
# what Linux's FS_IOC_ADD_ENCRYPTION_KEY returns for KEY2 (kernel 6.1)
ID2=8699c2c53707405da5aba5ae4d8583c0
DIRS="v2 v2l32 v1 adiantum hctr2"

unhex() { "$PY" -c "import sys; sys.stdout.buffer.write(bytes.fromhex('$1'))"; }

# the source tree every encrypted directory gets
mkdir -p "$SRC/sub/deeper"
echo hello >"$SRC/small.txt"
head -c 3000000 /dev/urandom >"$SRC/big.bin"
head -c 5000 /dev/urandom >"$SRC/sub/odd.bin"
truncate -s 1M "$SRC/sparse.bin"
printf 'middle' | dd of="$SRC/sparse.bin" bs=1 seek=300000 conv=notrunc status=none
echo inner >"$SRC/sub/deeper/f"
ln -s small.txt "$SRC/link"
ln -s "$(printf 'T%.0s' {1..300})" "$SRC/longlink"
echo long >"$SRC/$(printf 'L%.0s' {1..200})"
for i in $(seq 1 40); do echo "$i" >"$SRC/file_$i"; done

mk_image "$IMG" 256M extra_attr,encrypt "" || fail "mkfs"
mount_uf2fs "$IMG" "$MNT" rw || fail "mount"

step "add_key, set_policy, get_policy"
id=$(unhex $KEY2 | "$UF2FS" fscrypt add_key "$MNT") || fail "add_key"
[ "$id" = "$ID2" ] || fail "add_key printed identifier $id, Linux derives $ID2"
got=$(unhex $KEY1 | "$UF2FS" fscrypt add_key --descriptor=$DESC1 "$MNT") || fail "add_key v1"
[ "$got" = "$DESC1" ] || fail "add_key v1 printed $got"
[ "$("$UF2FS" fscrypt key_status $ID2 "$MNT")" = Present ] || fail "key_status after add"
mkdir "$MNT/v2" "$MNT/v2l32" "$MNT/v1" "$MNT/adiantum" "$MNT/hctr2" "$MNT/full" "$MNT/nokeydir"
echo x >"$MNT/full/f"
"$UF2FS" fscrypt set_policy $ID2 "$MNT/v2" || fail "set_policy v2"
"$UF2FS" fscrypt set_policy --iv-ino-lblk-32 --padding=16 $ID2 "$MNT/v2l32" ||
	fail "set_policy lblk32"
"$UF2FS" fscrypt set_policy $DESC1 "$MNT/v1" || fail "set_policy v1"
"$UF2FS" fscrypt set_policy --contents=Adiantum --filenames=Adiantum --direct-key $ID2 \
	"$MNT/adiantum" || fail "set_policy adiantum"
"$UF2FS" fscrypt set_policy --filenames=AES-256-HCTR2 --padding=8 $ID2 "$MNT/hctr2" ||
	fail "set_policy hctr2"
"$UF2FS" fscrypt set_policy --contents=AES-256-CTS $ID2 "$MNT/nokeydir" 2>/dev/null &&
	fail "set_policy with a names-only mode for contents"
"$UF2FS" fscrypt set_policy $ID2 "$MNT/full" 2>/dev/null && fail "set_policy on a non-empty dir"
"$UF2FS" fscrypt set_policy ffffffffffffffffffffffffffffffff "$MNT/nokeydir" 2>/dev/null &&
	fail "set_policy with a key the mount does not have"
"$UF2FS" fscrypt get_policy "$MNT/v2l32" | grep -q "IV_INO_LBLK_32" || fail "get_policy flags"
"$UF2FS" fscrypt get_policy "$MNT/v2" | grep -q "identifier: $ID2" || fail "get_policy key"
"$UF2FS" fscrypt get_policy "$MNT/full" 2>/dev/null && fail "get_policy on a plain dir"

step "write the tree, read it back through the mount"
for d in $DIRS; do
	cp -a "$SRC/." "$MNT/$d/" || fail "cp into $d"
	"$UF2FS" fscrypt get_policy "$MNT/$d/sub/deeper/f" >/dev/null || fail "$d: not inherited"
done
sync
for d in $DIRS; do
	diff -r --no-dereference "$SRC" "$MNT/$d" || fail "$d differs through the mount"
	[ "$(stat -c %s "$MNT/$d/link")" = 9 ] || fail "$d: symlink st_size is not its target's"
done

step "remove_key on the live mount"
# the file unlinked by its no-key name below (found by inode number): not one checked later
victim_ino=$(stat -c %i "$MNT/v2/file_40") || fail "stat file_40"
"$UF2FS" fscrypt remove_key $ID2 "$MNT" || fail "remove_key"
[ "$("$UF2FS" fscrypt key_status $ID2 "$MNT")" = Absent ] || fail "key_status after remove"
ls "$MNT/v2" >"$TMP/nokey.list" || fail "listing without the key"
grep -qx small.txt "$TMP/nokey.list" && fail "plaintext name listed after remove_key"
[ "$(wc -l <"$TMP/nokey.list")" = "$(ls "$SRC" | wc -l)" ] || fail "no-key listing count"
grep -qvE '^[A-Za-z0-9_-]+$' "$TMP/nokey.list" && fail "a no-key name is not base64url"
for n in $(cat "$TMP/nokey.list"); do
	[ -L "$MNT/v2/$n" ] || continue
	t=$(readlink "$MNT/v2/$n") || fail "readlink without the key"
	[ "${#t}" = "$(stat -c %s "$MNT/v2/$n")" ] || fail "no-key symlink st_size"
	case $t in small.txt|TTT*) fail "plaintext symlink target without the key";; esac
done
cat "$MNT/v2/small.txt" 2>/dev/null && fail "plaintext path still opens"
first=$(head -1 "$TMP/nokey.list")
stat "$MNT/v2/$first" >/dev/null || fail "stat by no-key name"
for n in $(cat "$TMP/nokey.list"); do
	[ "$(stat -c %i "$MNT/v2/$n")" = "$victim_ino" ] || continue
	cat "$MNT/v2/$n" >/dev/null 2>"$TMP/cat.err" && fail "read contents without the key"
	grep -q "key not available" "$TMP/cat.err" || fail "read without key: $(cat "$TMP/cat.err")"
	rm "$MNT/v2/$n" || fail "unlink by no-key name"
	victim_ino=gone
	break
done
[ "$victim_ino" = gone ] || fail "file_40 not found by inode number among the no-key names"
touch "$MNT/v2/new" 2>/dev/null && fail "create without the key"
big=$(grep -n . "$TMP/nokey.list" | while IFS=: read -r _ n; do
	[ "$(stat -c %s "$MNT/v2/$n" 2>/dev/null)" = 3000000 ] && echo "$n"; done)
[ -n "$big" ] || fail "no-key name of big.bin not found by size"
truncate -s 4096 "$MNT/v2/$big" 2>/dev/null && fail "truncate without the key"
diff -r --no-dereference "$SRC" "$MNT/v1" || fail "v1 tree changed by removing the v2 key"
unhex $KEY2 | "$UF2FS" fscrypt add_key "$MNT" >/dev/null || fail "add_key again"
[ "$(ls "$MNT/v2" | wc -l)" = "$(( $(ls "$SRC" | wc -l) - 1 ))" ] || fail "names after re-add"
ls "$MNT/v2" | grep -qx small.txt || fail "plaintext names are back"
ls "$MNT/v2" | grep -qx file_40 && fail "file_40, unlinked by its no-key name, is back"
# a no-key listing the kernel could have cached, with no change to the
# directory before the key comes back: the next listing must be plaintext
"$UF2FS" fscrypt remove_key $ID2 "$MNT" || fail "remove_key (2)"
ls "$MNT/v2" | grep -qx small.txt && fail "plaintext name listed after the second remove_key"
unhex $KEY2 | "$UF2FS" fscrypt add_key "$MNT" >/dev/null || fail "add_key (2)"
ls "$MNT/v2" | grep -qx small.txt || fail "a cached no-key listing after add_key"
rm -f "$MNT"/v2/file_* && echo again >"$MNT/v2/file_1" || fail "writes after re-add"
umount_uf2fs "$MNT" || fail "unmount"
fsck_clean "$IMG" || fail "fsck after the encrypted tree"

step "offline: get with the keyfile, ls without"
KF=$TMP/keys
{ echo "# uf2fs test keys"; echo $KEY2; echo; echo "$DESC1:$KEY1"; } >"$KF"
chmod 644 "$KF"
"$UF2FS" ls -o keyfile="$KF" "$IMG" / >/dev/null 2>"$TMP/kf.err" &&
	fail "a world-readable keyfile was accepted"
grep -q "readable by others" "$TMP/kf.err" || fail "keyfile message: $(cat "$TMP/kf.err")"
chmod 600 "$KF"
"$UF2FS" get -o keyfile="$KF" "$IMG" / "$OUT" || fail "get with the keyfile"
diff -r --no-dereference "$SRC" "$OUT/v1" || fail "v1 differs offline"
diff -r --no-dereference "$SRC" "$OUT/v2l32" || fail "v2l32 differs offline"
[ "$(cat "$OUT/v2/file_1")" = again ] || fail "v2 rewrite"
"$UF2FS" ls "$IMG" /v2l32 >"$TMP/off.list" || fail "ls without the key"
grep -qx small.txt "$TMP/off.list" && fail "plaintext name without the key"
[ "$(wc -l <"$TMP/off.list")" = "$(ls "$SRC" | wc -l)" ] || fail "offline no-key count"
"$UF2FS" cat "$IMG" "/v2l32/$(head -1 "$TMP/off.list")" >/dev/null 2>&1 &&
	fail "offline read without the key"

step "mount -o keyfile=, folio writeback (write_through=off)"
mount_uf2fs "$IMG" "$MNT" rw,write_through=off,keyfile="$KF" || fail "mount with keyfile"
# a fresh mount reads cold: files past a crypto chunk go in pieces, holes between
for d in v1 v2l32 adiantum hctr2; do
	diff -r --no-dereference "$SRC" "$MNT/$d" || fail "$d through a keyfile mount"
done
dd if="$SRC/big.bin" of="$MNT/v2l32/again.bin" bs=64k conv=fsync status=none || fail "dd"
printf 'patch' | dd of="$MNT/v2l32/again.bin" bs=1 seek=70000 conv=notrunc,fsync status=none
printf 'patch' | dd of="$SRC/big.bin" bs=1 seek=70000 conv=notrunc status=none
umount_uf2fs "$MNT" || fail "unmount"
fsck_clean "$IMG" || fail "fsck after folio writeback"
"$UF2FS" cat -o keyfile="$KF" "$IMG" /v2l32/again.bin | cmp - "$SRC/big.bin" ||
	fail "folio-written encrypted file differs"

step "roll-forward of new encrypted names Linux fsync'd before a power cut"
# fixtures/fscrypt-fsync-cut.guest.sh says how the image was made
REC=$TMP/rec.img
zstd -q -d -f "$(dirname "$0")/fixtures/fscrypt-fsync-cut.img.zst" -o "$REC" || fail "unzstd"
"$UF2FS" mkdir "$REC" /after-recovery || fail "read-write open (recovery) of the cut image"
fsck_clean "$REC" || fail "fsck after recovering encrypted names"
"$UF2FS" ls -o keyfile="$KF" "$REC" /e | grep -qx new_after_cp || fail "recovered name in /e"
[ "$("$UF2FS" cat -o keyfile="$KF" "$REC" /e/new_after_cp | md5sum | cut -c1-32)" = \
  0af181fb57f1eefb62b74081bbddb155 ] || fail "recovered data in /e"
# casefolded: found by another case, so the recovered dirhash is Linux's
[ "$("$UF2FS" cat -o keyfile="$KF" "$REC" /cf/NEW_CF_FILE | md5sum | cut -c1-32)" = \
  411b0392ea45fcab9c94dba3de65e825 ] || fail "recovered casefolded encrypted name"

step "compressed files in an encrypted directory (Linux: compress, then encrypt)"
CMP=$TMP/cmp.img
zstd -q -d -f "$(dirname "$0")/fixtures/fscrypt-compressed.img.zst" -o "$CMP" || fail "unzstd"
while read -r sum f; do
	[ "$("$UF2FS" cat -o keyfile="$KF" "$CMP" "/e/$f" | md5sum | cut -c1-32)" = "$sum" ] ||
		fail "compressed encrypted $f differs from what Linux wrote"
done <<'SUMS'
e081e39d13ca8bca81545400a4fd7fca mixed.bin
f74fc795993b3f76cb98204faa6a10b9 rand.bin
30ef7f11d29b8ad47542e97ed9d2a398 text1.bin
ee9762749fc5338b6c9b0948d14219c7 text2.bin
0f573c29b2a027a72287ea56129885ca text3.bin
SUMS
# writing into them: compress, then encrypt, as Linux; the same edits on plain copies
for f in text1 text2 text3; do
	"$UF2FS" cat -o keyfile="$KF" "$CMP" "/e/$f.bin" > "$TMP/$f.want" || fail "cat $f"
done
mount_uf2fs "$CMP" "$MNT" rw,keyfile="$KF" || fail "mount the compressed image"
for d in "$MNT/e" "$TMP"; do
	ext=bin; [ "$d" = "$TMP" ] && ext=want
	printf x | dd of="$d/text1.$ext" bs=1 seek=10 conv=notrunc status=none ||
		fail "a write into a compressed encrypted file ($d)"
	truncate -s 5000 "$d/text2.$ext" || fail "truncate of a compressed encrypted file ($d)"
	head -c 20000 "$d/text1.$ext" >> "$d/text3.$ext" || fail "append ($d)"
done
echo new >"$MNT/e/new.bin" || fail "a new file in the directory"
umount_uf2fs "$MNT" || fail "unmount"
fsck_clean "$CMP" || fail "fsck after the writes"
[ "$("$UF2FS" cat -o keyfile="$KF" "$CMP" /e/new.bin)" = new ] || fail "new file there"
for f in text1 text2 text3; do
	"$UF2FS" cat -o keyfile="$KF" "$CMP" "/e/$f.bin" | cmp - "$TMP/$f.want" ||
		fail "$f.bin after uf2fs changed it"
done
pass
