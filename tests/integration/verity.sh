#!/bin/bash
# fs-verity through the mount and the CLI, checked by Debian's fsverity tool.
#
# On a read-write mount, `fsverity enable` (SHA-256 and SHA-512, with and
# without a salt; Merkle blocks of 1, 2 and 4 KiB) on files of 0 B to 5 MB;
# `fsverity measure` must equal `fsverity digest` of the same content, and
# `fsverity dump_metadata` (which FUSE does not carry: the daemon writes the
# caller's buffer) must give the
# tree and descriptor `fsverity digest` writes. lsattr shows V, uf2fs ls -l
# too. Enable while the file is open for writing gets ETXTBSY (not while it
# is open for reading). Writes, O_TRUNC, truncate(2) and fallocate get EPERM;
# a second enable EEXIST; a file without verity measures ENODATA. A verity file is unlinked.
# The image must pass fsck.f2fs -f, measure the same after a remount and
# through `uf2fs verity measure`, and `uf2fs verity enable` offline must
# agree too. Then one byte is flipped in a data block of one file and in a
# level-0 tree block of another (found with tests/lib/f2fsimg.py): the blocks
# they cover give EIO through the mount and from `uf2fs cat` / `uf2fs get`,
# which never print the altered bytes; the blocks they do not cover still read.
# A corrupt verity xattr (version, position) or descriptor fails the open and
# the CLI with a clear error, and leaves the other files readable.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_root
need_fuse
need_uf2fs
need_f2fs_tools
need_cmd fsverity lsattr python3
tmpdir_init verity
IMG=$TMP/v.img MNT=$TMP/mnt SRC=$TMP/src
mkdir -p "$SRC"

# name size hash salt
FILES="f0 0 sha256 -
f1 1 sha512 a1b2c3
f4096 4096 sha256 00ff
f4097 4097 sha512 -
f3m 3145728 sha256 5a17
f5m 5000000 sha512 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

vopts() { # hash salt -> fsverity options
	printf -- '--hash-alg=%s' "$1"
	[ "$2" = - ] || printf -- ' --salt=%s' "$2"
}

expected() { # name hash salt
	# shellcheck disable=SC2046
	fsverity digest $(vopts "$2" "$3") "$SRC/$1" | cut -d' ' -f1
}

measure_all() { # how: mount | cli
	local name size hash salt got want
	while read -r name size hash salt; do
		want=$(expected "$name" "$hash" "$salt")
		if [ "$1" = mount ]; then
			got=$(fsverity measure "$MNT/$name" | cut -d' ' -f1)
			cmp -s "$MNT/$name" "$SRC/$name" ||
				fail "$name: content differs through the mount"
		else
			got=$("$UF2FS" verity measure "$IMG" "/$name" | cut -d' ' -f1)
			"$UF2FS" cat "$IMG" "/$name" | cmp -s - "$SRC/$name" ||
				fail "$name: uf2fs cat differs"
		fi
		[ "$got" = "$want" ] || fail "$name ($1): measure $got, fsverity digest $want"
	done <<<"$FILES"
	log "$1: every digest equals fsverity digest's"
}

expect_eperm() { # what cmd...
	local what=$1 out
	shift
	out=$("$@" 2>&1) && fail "$what succeeded on a verity file"
	grep -q "Operation not permitted" <<<"$out" || fail "$what: '$out', want EPERM"
}

step "enable through the mount"
mk_image "$IMG" 128M extra_attr,verity "" || fail "mkfs"
while read -r name size hash salt; do
	head -c "$size" /dev/urandom >"$SRC/$name"
done <<<"$FILES"
mount_uf2fs "$IMG" "$MNT" rw || fail "mount rw"
while read -r name size hash salt; do
	cp "$SRC/$name" "$MNT/$name"
	# shellcheck disable=SC2046
	fsverity enable $(vopts "$hash" "$salt") "$MNT/$name" || fail "fsverity enable $name"
done <<<"$FILES"
measure_all mount
lsattr "$MNT/f5m" | grep -q '^[^ ]*V' || fail "lsattr shows no V: $(lsattr "$MNT/f5m")"
# READ_VERITY_METADATA: the daemon copies into the caller's buffer itself
fsverity digest --hash-alg=sha512 --salt="$(awk '$1 == "f5m" { print $4 }' <<<"$FILES")" \
	--out-merkle-tree="$TMP/tree.ref" --out-descriptor="$TMP/desc.ref" "$SRC/f5m" >/dev/null
fsverity dump_metadata merkle_tree "$MNT/f5m" >"$TMP/tree.got" || fail "dump_metadata tree"
fsverity dump_metadata descriptor "$MNT/f5m" >"$TMP/desc.got" || fail "dump_metadata descriptor"
cmp "$TMP/tree.ref" "$TMP/tree.got" || fail "dump_metadata merkle_tree differs from fsverity's"
cmp "$TMP/desc.ref" "$TMP/desc.got" || fail "dump_metadata descriptor differs from fsverity's"

# Merkle blocks of 1 and 2 KiB (Linux 6.3 on): the tree shares its last block with the descriptor
for bs in 1024 2048; do
	cp "$SRC/f3m" "$MNT/b$bs"
	fsverity enable --block-size=$bs --salt=77 "$MNT/b$bs" || fail "enable --block-size=$bs"
	got=$(fsverity measure "$MNT/b$bs" | cut -d' ' -f1)
	want=$(fsverity digest --block-size=$bs --salt=77 "$SRC/f3m" | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "block size $bs: measure $got, fsverity digest $want"
	cmp -s "$MNT/b$bs" "$SRC/f3m" || fail "b$bs reads wrong"
done

step "enable while open for writing: ETXTBSY"
# as Linux's deny_write_access: a writer's fd blocks it, a reader's does not
cp "$SRC/f4096" "$MNT/busy"
exec 3>>"$MNT/busy"
out=$(fsverity enable "$MNT/busy" 2>&1) && fail "enable succeeded while busy is open for writing"
grep -q "Text file busy" <<<"$out" || fail "enable while open for writing: '$out', want ETXTBSY"
exec 3>&-
exec 3<"$MNT/busy"
fsverity enable "$MNT/busy" || fail "enable after the writer closed (a reader open)"
exec 3<&-
cmp -s "$MNT/busy" "$SRC/f4096" || fail "busy reads wrong"
[ "$(fsverity measure "$MNT/busy" | cut -d' ' -f1)" = "$(fsverity digest "$SRC/f4096" |
	cut -d' ' -f1)" ] || fail "busy: measure differs from fsverity digest"

step "verity files refuse changes"
expect_eperm "append" sh -c "echo x >>'$MNT/f4097'"
expect_eperm "O_TRUNC open" sh -c ": >'$MNT/f4097'"
expect_eperm "truncate(2)" python3 -c "import os; os.truncate('$MNT/f4097', 1)"
expect_eperm "fallocate" fallocate -l 1M "$MNT/f4097"
out=$(fsverity enable "$MNT/f4097" 2>&1) && fail "second enable succeeded"
grep -q "File exists" <<<"$out" || fail "second enable: '$out', want EEXIST"
echo plain >"$MNT/plain"
out=$(fsverity measure "$MNT/plain" 2>&1) && fail "measure of a plain file succeeded"
grep -qi "no data" <<<"$out" || fail "measure of a plain file: '$out', want ENODATA"
cmp -s "$MNT/f4097" "$SRC/f4097" || fail "f4097 changed"
cp "$SRC/f3m" "$MNT/gone"
fsverity enable "$MNT/gone" || fail "enable gone"
rm "$MNT/gone"
umount_uf2fs "$MNT" || fail "unmount"
fsck_clean "$IMG" || fail "fsck after enabling through the mount"

step "remount, CLI"
mount_uf2fs "$IMG" "$MNT" ro || fail "mount ro"
measure_all mount
umount_uf2fs "$MNT" || fail "unmount"
measure_all cli
"$UF2FS" ls -l "$IMG" / | grep -q -- '-rw-r--r--V .* f5m$' || fail "uf2fs ls -l marks no V"
"$UF2FS" ls -l "$IMG" / | grep -q -- '-rw-r--r--  .* plain$' || fail "uf2fs ls -l: plain file"
head -c 777777 /dev/urandom >"$SRC/off"
"$UF2FS" put "$IMG" "$SRC/off" /off || fail "put"
"$UF2FS" verity enable --hash-alg=sha512 --salt=beef "$IMG" /off || fail "uf2fs verity enable"
fsck_clean "$IMG" || fail "fsck after uf2fs verity enable"
want=$(fsverity digest --hash-alg=sha512 --salt=beef "$SRC/off" | cut -d' ' -f1)
mount_uf2fs "$IMG" "$MNT" ro || fail "mount ro"
got=$(fsverity measure "$MNT/off" | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "offline enable: mount measures $got, fsverity digest $want"
umount_uf2fs "$MNT" || fail "unmount"

step "corruption gives EIO"
# f5m: a data block. f3m (SHA-256, 768 blocks): level 0 has 6 tree blocks after the one
# level-1 block; tree block 3 covers data blocks 256..383. Its metadata starts at 3 MiB.
"$PY" - "$IMG" "$LIB" <<'EOF' || fail "flipping bytes"
import sys
sys.path.insert(0, sys.argv[2])
import f2fsimg
img = f2fsimg.Image(sys.argv[1], writable=True)
for path, lblk in (("/f5m", 10), ("/f3m", 3 * 1024 * 1024 // 4096 + 3)):
    ino = img.resolve(path)
    addr = img.bmap(ino, lblk)
    assert addr not in (0, 0xFFFFFFFF), (path, lblk, addr)
    b = bytearray(img.block(addr))
    b[1234] ^= 0x40
    img.write_block(addr, bytes(b))
    print("flipped", path, "block", lblk, "at", addr)
EOF
block_reads() { # file blk: 0 if dd reads that block
	dd if="$1" of=/dev/null bs=4096 skip="$2" count=1 status=none 2>/dev/null
}
mount_uf2fs "$IMG" "$MNT" ro || fail "mount ro"
block_reads "$MNT/f5m" 0 || fail "f5m block 0 must still read"
block_reads "$MNT/f5m" 10 && fail "f5m block 10 (altered) read without error"
out=$(cat "$MNT/f5m" 2>&1 >/dev/null) && fail "cat f5m succeeded"
grep -q "Input/output error" <<<"$out" || fail "cat f5m: '$out', want EIO"
block_reads "$MNT/f3m" 0 || fail "f3m block 0 must still read"
block_reads "$MNT/f3m" 384 || fail "f3m block 384 must still read"
block_reads "$MNT/f3m" 300 && fail "f3m block 300 (under the altered tree block) read"
grep -q "verity" "$(mount_log "$MNT")" || fail "the daemon logged no verity error"
cmp -s "$MNT/f1" "$SRC/f1" || fail "an intact file no longer reads"
umount_uf2fs "$MNT" || fail "unmount"
for f in f5m f3m; do
	"$UF2FS" cat "$IMG" "/$f" >"$TMP/$f.cat" 2>"$TMP/$f.err" && fail "uf2fs cat /$f succeeded"
	grep -q "Input/output error" "$TMP/$f.err" || fail "uf2fs cat /$f: $(cat "$TMP/$f.err")"
	# what came out is a prefix of the original: never the altered bytes
	[ "$(cmp "$TMP/$f.cat" "$SRC/$f" 2>&1 | grep -c differ)" = 0 ] ||
		fail "uf2fs cat /$f printed altered bytes"
	"$UF2FS" get "$IMG" "/$f" "$TMP/$f.get" 2>/dev/null && fail "uf2fs get /$f succeeded"
done

step "a corrupt verity xattr or descriptor is a clean error"
for what in version pos descriptor; do
	cp "$IMG" "$TMP/c.img"
	"$PY" - "$TMP/c.img" "$LIB" "$what" <<'EOF' || fail "corrupting the $what"
import struct, sys
sys.path.insert(0, sys.argv[2])
import f2fsimg
img = f2fsimg.Image(sys.argv[1], writable=True)
ino = img.resolve("/f4096")
raw = bytearray(ino.raw)
i = raw.find(bytes([11, 1, 16, 0]) + b"v")   # index VERITY, name "v", 16-byte value
assert i > 0, "no verity xattr in the inode"
ver, size, pos = struct.unpack_from("<IIQ", raw, i + 5)
if sys.argv[3] == "version":
    struct.pack_into("<I", raw, i + 5, 2)
elif sys.argv[3] == "pos":
    struct.pack_into("<Q", raw, i + 13, 1 << 62)
if sys.argv[3] == "descriptor":   # a reserved byte of the descriptor
    addr = img.bmap(ino, pos // 4096)
    b = bytearray(img.block(addr))
    b[pos % 4096 + 200] = 1
    img.write_block(addr, bytes(b))
else:
    img.write_block(ino.blkaddr, bytes(raw))
EOF
	run_limited 30 "$UF2FS" cat "$TMP/c.img" /f4096
	expect_clean_error "uf2fs cat with a corrupt verity $what" || fail "corrupt $what"
	grep -q "verity" <<<"$OUT" ||
		fail "corrupt $what: the error names no verity structure: $OUT"
	"$UF2FS" cat "$TMP/c.img" /f1 | cmp -s - "$SRC/f1" || fail "another file no longer reads"
	[ "$what" = version ] || continue
	mount_uf2fs "$TMP/c.img" "$MNT" ro || fail "mount with a corrupt $what"
	cat "$MNT/f4096" >/dev/null 2>&1 && fail "a file with a corrupt verity $what opened"
	cmp -s "$MNT/f1" "$SRC/f1" || fail "another file no longer reads through the mount"
	umount_uf2fs "$MNT" || fail "unmount"
done
pass
