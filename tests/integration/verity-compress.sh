#!/bin/bash
# fs-verity on compressed files without QEMU (tests/compat/verity-compress.sh
# checks the same layout against Linux): in a +c directory (lz4, 4-block
# clusters) ten compressed files get verity through the mount, each after a
# 10 MB plain file whose verity tree (1 KiB Merkle blocks) fills the same
# log, one more offline with `uf2fs verity enable --hash-alg=sha512`;
# every digest equals `fsverity digest`. Then the plain files go and
# F2FS_IOC_GARBAGE_COLLECT empties their segments: the compressed files'
# tree and descriptor blocks move (their addresses change), and the files
# still read and measure the same; fsck.f2fs -f clean. Last, a byte flipped
# in a compressed block and one in the raw EOF cluster give EIO (the latter
# from the verity check), never the altered bytes.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_root
need_fuse
need_uf2fs
need_f2fs_tools
need_cmd fsverity chattr python3
tmpdir_init verity-compress
IMG=$TMP/c.img MNT=$TMP/mnt SRC=$TMP/src
mkdir -p "$SRC"

mk_image "$IMG" 256M extra_attr,verity,compression "" || fail "mkfs"
mount_uf2fs "$IMG" "$MNT" rw,compress_algorithm=lz4,compress_log_size=2,background_gc=off ||
	fail "mount"
mkdir "$MNT/c" && chattr +c "$MNT/c" || fail "mkdir +c"
for i in $(seq 1 11); do
	"$PY" -c 'import sys; sys.stdout.write("".join("line %d of file %s\n" % (j, sys.argv[1])
	for j in range(12000)))' "$i" >"$SRC/f$i"
	cp "$SRC/f$i" "$MNT/c/f$i" && sync "$MNT/c/f$i" || fail "cp f$i"
	[ "$i" = 11 ] && break
	fsverity enable "$MNT/c/f$i" || fail "enable f$i"
	head -c 10000000 /dev/urandom >"$MNT/p$i" && sync "$MNT/p$i" || fail "write p$i"
	fsverity enable --block-size=1024 "$MNT/p$i" || fail "enable p$i"
done
n=$("$UF2FS" stats "$MNT" | awk '/clusters compr/ {print $3}')
[ "${n:-0}" -gt 0 ] || fail "nothing was written compressed"
rm "$MNT"/p*
umount_uf2fs "$MNT" || fail "unmount"
"$UF2FS" verity enable --hash-alg=sha512 "$IMG" /c/f11 || fail "uf2fs verity enable f11"
for i in $(seq 1 11); do
	alg=sha256
	[ "$i" = 11 ] && alg=sha512
	fsverity digest --hash-alg=$alg "$SRC/f$i" | cut -d' ' -f1 >"$SRC/f$i.digest"
done

# the tree block (block 64: the first 64 KiB boundary past EOF) of each file
tree_addrs() {
	"$PY" - "$IMG" "$LIB" <<'EOF'
import sys
sys.path.insert(0, sys.argv[2])
import f2fsimg
img = f2fsimg.Image(sys.argv[1])
for i in range(1, 12):
    ino = img.resolve("/c/f%d" % i)
    assert img.bmap(ino, 0) == 0xFFFFFFFE, "f%d: cluster 0 not compressed" % i
    print(i, img.bmap(ino, 64), img.bmap(ino, 65))
EOF
}
tree_addrs >"$TMP/before" || fail "reading the block map"

step "GC moves the metadata past EOF"
mount_uf2fs "$IMG" "$MNT" rw,background_gc=off || fail "mount for GC"
"$PY" - "$MNT" <<'EOF' || fail "F2FS_IOC_GARBAGE_COLLECT"
import errno, fcntl, os, struct, sys
fd, n = os.open(sys.argv[1], os.O_RDONLY), 0
for _ in range(100):
    try:
        fcntl.ioctl(fd, 0x4004F506, struct.pack("I", 1))   # F2FS_IOC_GARBAGE_COLLECT, sync
    except OSError as e:
        if e.errno != errno.EAGAIN:      # EAGAIN: no victim left
            raise
        break
    n += 1
print("gc: %d victims" % n)
EOF
umount_uf2fs "$MNT" || fail "unmount after GC"
tree_addrs >"$TMP/after" || fail "reading the block map after GC"
moved=$(diff "$TMP/before" "$TMP/after" | grep -c '^>')
log "$moved of 11 files had their tree and descriptor moved by GC"
[ "$moved" -gt 0 ] || fail "GC moved no verity metadata: the test proves nothing"
fsck_clean "$IMG" || fail "fsck after GC"
mount_uf2fs "$IMG" "$MNT" ro || fail "mount ro"
for i in $(seq 1 11); do
	cmp "$MNT/c/f$i" "$SRC/f$i" || fail "f$i reads wrong after GC"
	[ "$(fsverity measure "$MNT/c/f$i" | cut -d' ' -f1)" = "$(cat "$SRC/f$i.digest")" ] ||
		fail "f$i measures otherwise than fsverity digest"
done
umount_uf2fs "$MNT" || fail "unmount"

step "flipped bytes: a compressed block, a raw block"
# f2: the first compressed block of cluster 0 (decompression or the verity
# check fails, by where the byte lands); f4: block 57, in the raw cluster
# that straddles EOF (59 blocks), which only the verity check can catch
"$PY" - "$IMG" "$LIB" <<'EOF' || fail "flipping bytes"
import sys
sys.path.insert(0, sys.argv[2])
import f2fsimg
img = f2fsimg.Image(sys.argv[1], writable=True)
for path, lblk in (("/c/f2", 1), ("/c/f4", 57)):
    ino = img.resolve(path)
    assert ino.size // 4096 == 58, (path, ino.size)
    addr = img.bmap(ino, lblk)
    assert addr not in (0, 0xFFFFFFFF, 0xFFFFFFFE), (path, lblk, addr)
    b = bytearray(img.block(addr))
    b[2000] ^= 0x20
    img.write_block(addr, bytes(b))
EOF
mount_uf2fs "$IMG" "$MNT" ro || fail "mount the altered image"
for f in f2 f4; do
	out=$(cat "$MNT/c/$f" 2>&1 >/dev/null) && fail "$f read without error"
	grep -q "Input/output error" <<<"$out" || fail "$f: '$out', want EIO"
done
grep -q "verity check failed for data block 57" "$(mount_log "$MNT")" ||
	fail "the daemon logged no verity failure for f4's block 57"
dd if="$MNT/c/f4" of=/dev/null bs=4096 count=56 status=none || fail "f4's other blocks"
cmp "$MNT/c/f3" "$SRC/f3" || fail "another file no longer reads"
umount_uf2fs "$MNT" || fail "unmount"
for f in f2 f4; do
	"$UF2FS" cat "$IMG" /c/$f >"$TMP/$f.cat" 2>/dev/null && fail "uf2fs cat $f worked"
	[ "$(cmp "$TMP/$f.cat" "$SRC/$f" 2>&1 | grep -c differ)" = 0 ] ||
		fail "uf2fs cat $f printed altered bytes"
done
pass
