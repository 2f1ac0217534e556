#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# 16 KiB blocks (mkfs.f2fs -b 16384 of f2fs-tools' development branch, which
# Debian's 1.15 cannot make): fixtures/blocksize-16k.img.zst, made as
# fixtures/README.md says, with the tree's checksums in blocksize-16k.sha256.
#
#   read     `info` names the block size; `uf2fs get` of the whole tree and a
#            FUSE mount (rw) read every file as recorded (inline files, a
#            multi-block file, a 200 MiB file mapped through indirect nodes,
#            600 long names over several dentry hash levels, an lz4-compressed
#            file), symlinks; st_blksize is 16384.
#   write    new small and multi-block files, overwrite, append, truncate,
#            rewrite inside the compressed file, mkdir, rm, rename, xattrs
#            (inline and a 6000-byte one in an xattr node), a 50 MiB file
#            (several 8 MiB segments), an encrypted directory (fscrypt v2),
#            fs-verity files with 4 KiB and 16 KiB Merkle blocks; unmount,
#            remount read-only: the same tree, contents, xattrs, plaintext
#            and verity digests.
#   sparse   `uf2fs simg` (16 KiB sparse blocks) and img2simg's 4 KiB sparse
#            blocks both read back.
#   backup   the primary super block damaged: the backup (block 1, byte
#            16384 + 1024) is found and used.
#   offline  put, ls, cat, get, mkdir, rm on the written image.
#   bad      log_blocksize 13, 15 and 20, log_blocks_per_seg 7, sector fields
#            that do not add up to 14, packed_ssa (4 KiB summaries packed in a
#            16 KiB block, not supported yet): a clear error, the image unchanged.
#
# fsck: Debian's fsck.f2fs 1.15 refuses 16 KiB blocks ("supports only 4KB"),
# so that check is skipped with a message when it does; FSCK_F2FS_DEV=path to
# a g-dev-test fsck.f2fs runs that one on every written state.
#
#   KEEP_TMP=1 FSCK_F2FS_DEV=/path/fsck.f2fs tests/integration/blocksize-16k.sh
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

need_fuse
need_uf2fs
need_cmd zstd sha256sum getfattr "$PY"

FIX=$(cd "$(dirname "$0")/fixtures" && pwd)
tmpdir_init blocksize-16k
IMG=$TMP/b16k.img
MNT=$TMP/mnt
zstd -q -d --long=27 -c "$FIX/blocksize-16k.img.zst" >"$IMG" || fail "unpack"

# check_fsck WHEN: the dev fsck when given; Debian's when it reads 16 KiB blocks
check_fsck() {
	if [ -n "${FSCK_F2FS_DEV:-}" ]; then
		FSCK_F2FS=$FSCK_F2FS_DEV fsck_clean "$IMG" || fail "$1: dev fsck.f2fs"
	fi
	local out
	out=$("$FSCK_F2FS" -f --dry-run "$IMG" 2>&1 || true)
	if grep -q 'supports only 4KB' <<<"$out"; then
		log "$1: $FSCK_F2FS refuses 16 KiB blocks: its check skipped"
	else
		fsck_clean "$IMG" || fail "$1: fsck.f2fs"
	fi
}

# tree_state DIR: every path with its type, size and link target, then the
# checksum of every regular file (the encrypted directory is checked apart)
tree_state() {
	(cd "$1" && find . -path ./enc -prune -o -printf '%p %y %s %l\n' | LC_ALL=C sort &&
		find . -path ./enc -prune -o -type f -print0 | LC_ALL=C sort -z |
		xargs -0 sha256sum)
}

step "read: info, get, FUSE"
"$UF2FS" info "$IMG" >"$TMP/info" || fail "info"
grep -q '16384-byte blocks' "$TMP/info" || fail "info: no 16384-byte blocks layout"
grep -qE '^ +block size +16384$' "$TMP/info" || fail "info: block size"
"$UF2FS" get "$IMG" / "$TMP/got" || fail "uf2fs get /"
(cd "$TMP/got" && sha256sum -c --quiet "$FIX/blocksize-16k.sha256") || fail "get: contents"
[ "$(readlink "$TMP/got/link-short")" = multi.txt ] || fail "get: link-short"
[ "$("$UF2FS" cat "$IMG" /inline.txt)" = "small inline file" ] || fail "cat inline.txt"

mount_uf2fs "$IMG" "$MNT" rw || fail "mount"
(cd "$MNT" && sha256sum -c --quiet "$FIX/blocksize-16k.sha256") || fail "mount: contents"
[ "$(readlink "$MNT/link-short")" = multi.txt ] || fail "link-short"
[ "$(readlink "$MNT/link-long")" = "sub/deep/$(printf 'y%.0s' {1..100})/../file" ] ||
	fail "link-long"
[ "$(ls "$MNT/many" | wc -l)" = 600 ] || fail "many: not 600 entries"
[ -f "$MNT/many/entry-0599-$(printf 'x%.0s' {1..50})" ] || fail "many: lookup"
[ "$(stat -c %o "$MNT/multi.txt")" = 16384 ] || fail "st_blksize is not 16384"
[ "$(stat -c %s "$MNT/sparse.bin")" = $((200 << 20)) ] || fail "sparse.bin size"

step "write"
head -c 50M /dev/urandom >"$TMP/fifty"
echo "new inline" >"$MNT/new-small"
head -c 300000 /dev/urandom >"$MNT/new-multi"
cp "$TMP/fifty" "$MNT/fifty"
printf 'OVERWRITTEN' | dd of="$MNT/multi.txt" bs=1 seek=70000 conv=notrunc status=none
echo "appended line" >>"$MNT/inline-max.txt"
truncate -s 100M "$MNT/sparse.bin"
truncate -s 300M "$MNT/sparse.bin"
printf 'REWRITTEN-IN-A-CLUSTER' | dd of="$MNT/comp/text.lz4me" bs=1 seek=40000 conv=notrunc \
	status=none
mkdir -p "$MNT/newdir/a/b"
echo deep >"$MNT/newdir/a/b/f"
rm "$MNT/random.bin" "$MNT"/many/entry-01*
mv "$MNT/sub" "$MNT/newdir/sub-moved"
mv "$MNT/new-small" "$MNT/newdir/small-renamed"
# sload.f2fs copies no user xattrs: these are uf2fs's, inline and in an xattr node
setfattr -n user.new -v value "$MNT/new-multi"
setfattr -n user.big -v "$(printf 'v%.0s' {1..6000})" "$MNT/multi.txt"
[ "$(sha256sum <"$MNT/fifty")" = "$(sha256sum <"$TMP/fifty")" ] || fail "fifty reads back"

# fscrypt: the data unit is the 16 KiB block (IVs per block, as Linux)
head -c 64 /dev/urandom >"$TMP/key"
id=$("$UF2FS" fscrypt add_key "$MNT" <"$TMP/key") || fail "add_key"
mkdir "$MNT/enc"
"$UF2FS" fscrypt set_policy "$id" "$MNT/enc" || fail "set_policy"
head -c 100000 /dev/urandom >"$TMP/plain"
cp "$TMP/plain" "$MNT/enc/file"
echo "encrypted inline" >"$MNT/enc/small"
cmp "$TMP/plain" "$MNT/enc/file" || fail "encrypted file reads back"
# fs-verity: Merkle blocks of 4 KiB (fsverity's default here) and of the fs block
if command -v fsverity >/dev/null; then
	head -c 300000 /dev/urandom >"$MNT/v4k"
	head -c 5000000 /dev/urandom >"$MNT/v16k"
	fsverity enable --block-size=4096 "$MNT/v4k" || fail "verity 4096"
	fsverity enable --block-size=16384 --hash-alg=sha512 "$MNT/v16k" || fail "verity 16384"
	[ "$(fsverity measure "$MNT/v4k" | cut -d' ' -f1)" = \
	  "$(fsverity digest --block-size=4096 "$MNT/v4k" | cut -d' ' -f1)" ] || fail "measure v4k"
	[ "$(fsverity measure "$MNT/v16k" | cut -d' ' -f1)" = \
	  "$(fsverity digest --block-size=16384 --hash-alg=sha512 "$MNT/v16k" | cut -d' ' -f1)" ] ||
		fail "measure v16k"
	fsverity measure "$MNT/v4k" "$MNT/v16k" >"$TMP/verity.before"
else
	log "no fsverity command: verity not checked"
fi
tree_state "$MNT" >"$TMP/state.before"
umount_uf2fs "$MNT" || fail "umount"
check_fsck "after the writes"

mount_uf2fs "$IMG" "$MNT" ro || fail "remount"
tree_state "$MNT" >"$TMP/state.after"
"$UF2FS" fscrypt add_key "$MNT" <"$TMP/key" >/dev/null || fail "add_key after remount"
cmp "$TMP/plain" "$MNT/enc/file" || fail "encrypted file after remount"
[ "$(cat "$MNT/enc/small")" = "encrypted inline" ] || fail "encrypted inline after remount"
if [ -f "$TMP/verity.before" ]; then
	fsverity measure "$MNT/v4k" "$MNT/v16k" | cmp - "$TMP/verity.before" ||
		fail "verity after remount"
fi
[ "$(getfattr --only-values -n user.new "$MNT/new-multi")" = value ] || fail "new xattr"
[ "$(getfattr --only-values -n user.big "$MNT/multi.txt")" = "$(printf 'v%.0s' {1..6000})" ] ||
	fail "big xattr"
umount_uf2fs "$MNT"
diff -u "$TMP/state.before" "$TMP/state.after" >&2 || fail "remount: tree differs"
[ "$("$UF2FS" cat "$IMG" /fifty | sha256sum)" = "$(sha256sum <"$TMP/fifty")" ] ||
	fail "cat fifty"
[ "$("$UF2FS" cat "$IMG" /multi.txt | dd bs=1 skip=70000 count=11 status=none)" = \
	OVERWRITTEN ] || fail "overwrite"

step "sparse: uf2fs simg (16 KiB chunks) and img2simg (4 KiB chunks)"
"$UF2FS" simg "$IMG" "$TMP/s16.simg" >/dev/null || fail "simg"
[ "$("$UF2FS" cat "$TMP/s16.simg" /fifty | sha256sum)" = "$(sha256sum <"$TMP/fifty")" ] ||
	fail "simg: fifty"
if command -v img2simg >/dev/null; then
	img2simg "$IMG" "$TMP/s4.simg" 4096 || fail "img2simg"
	[ "$("$UF2FS" cat "$TMP/s4.simg" /multi.txt | sha256sum)" = \
	  "$("$UF2FS" cat "$IMG" /multi.txt | sha256sum)" ] || fail "4 KiB-chunk sparse: multi.txt"
fi
rm -f "$TMP/s16.simg" "$TMP/s4.simg"

step "offline: put, ls, cat, get, mkdir, rm"
head -c 70000 /dev/urandom >"$TMP/put.bin"
"$UF2FS" put "$IMG" "$TMP/put.bin" /newdir/put.bin || fail "put"
"$UF2FS" mkdir "$IMG" /offline-dir || fail "mkdir"
"$UF2FS" ls "$IMG" /newdir | grep -q 'put.bin' || fail "ls: no put.bin"
[ "$("$UF2FS" cat "$IMG" /newdir/put.bin | sha256sum)" = "$(sha256sum <"$TMP/put.bin")" ] ||
	fail "cat put.bin"
"$UF2FS" get "$IMG" /newdir/put.bin "$TMP/put.back" || fail "get"
cmp "$TMP/put.bin" "$TMP/put.back" || fail "get: differs"
"$UF2FS" rm "$IMG" /newdir/put.bin || fail "rm"
"$UF2FS" ls "$IMG" /newdir | grep -q 'put.bin' && fail "rm: put.bin still there"
"$UF2FS" info "$IMG" | grep -q 'clean (unmounted)' || fail "info: not clean"
check_fsck "after the offline commands"

step "backup super block: the primary damaged, the copy at byte 16384 + 1024 found"
cp --sparse=always "$IMG" "$TMP/backup.img"
printf '\xff\xff\xff\xff' | dd of="$TMP/backup.img" bs=1 seek=$((1024 + 36)) conv=notrunc \
	status=none
run_limited 30 "$UF2FS" ls "$TMP/backup.img" /newdir
[ "$RC" = 0 ] || fail "backup super block: $OUT"
grep -q 'using the backup super block' <<<"$OUT" || fail "backup: not said: $OUT"
grep -q 'small-renamed' <<<"$OUT" || fail "backup: listing: $OUT"
rm -f "$TMP/backup.img"

step "bad: block sizes and geometry that do not fit"
# set_sb IMG FIELD=VALUE|FIELD|=BITS...: u32 fields of both super blocks, checksum redone
set_sb() {
	local img=$1
	shift
	"$PY" - "$img" "$@" <<'EOF'
import struct, sys
OFF = {'log_sectorsize': 8, 'log_sectors_per_block': 12, 'log_blocksize': 16,
       'log_blocks_per_seg': 20, 'feature': 2180}
def crc(seed, data):
    for b in data:
        seed ^= b
        for _ in range(8):
            seed = (seed >> 1) ^ (0xEDB88320 if seed & 1 else 0)
    return seed
with open(sys.argv[1], 'r+b') as f:
    for base in (1024, 16384 + 1024):
        f.seek(base)
        sb = bytearray(f.read(3072))
        for kv in sys.argv[2:]:
            k, v = kv.split('=')
            old = struct.unpack_from('<I', sb, OFF[k.rstrip('|')])[0]
            new = old | int(v, 0) if k.endswith('|') else int(v, 0)
            struct.pack_into('<I', sb, OFF[k.rstrip('|')], new)
        struct.pack_into('<I', sb, 3068, crc(0xF2F52010, sb[:3068]))
        f.seek(base)
        f.write(sb)
EOF
}
for bad in log_blocksize=13 log_blocksize=15 log_blocksize=20 log_blocks_per_seg=7 \
	log_sectors_per_block=4 'feature|=0x10000'; do
	# the super block is checked first: its first MiB is enough of the image
	head -c 1M "$IMG" >"$TMP/bad.img"
	set_sb "$TMP/bad.img" "$bad"
	sum=$(image_sum "$TMP/bad.img")
	run_limited 20 "$UF2FS" info "$TMP/bad.img"
	expect_clean_error "info with $bad" || fail "info with $bad"
	case $bad in
	log_blocksize=*)
		grep -q "log_blocksize ${bad#*=} .*not supported" <<<"$OUT" ||
			fail "$bad: message does not name the block size: $OUT";;
	log_blocks_per_seg=*)
		grep -q 'blocks per segment' <<<"$OUT" || fail "$bad: $OUT";;
	feature*)
		grep -q 'packed_ssa.*not supported' <<<"$OUT" || fail "$bad: $OUT";;
	*)
		grep -q 'sector size' <<<"$OUT" || fail "$bad: $OUT";;
	esac
	run_limited 20 "$UF2FS" put "$TMP/bad.img" "$TMP/put.bin" /x
	expect_clean_error "put with $bad" || fail "put with $bad"
	[ "$(image_sum "$TMP/bad.img")" = "$sum" ] || fail "$bad: the image changed"
done
pass
