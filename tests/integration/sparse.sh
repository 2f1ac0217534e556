#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Android sparse images (img2simg's format, what fastboot flashes) opened
# directly. Two images, each converted with img2simg:
#
#   android   mkfs.f2fs -g android (extra_attr, project_quota, quota_ino,
#             encrypt, verity) filled by sload.f2fs, as an Android build does
#   put       -O extra_attr,inode_checksum,sb_checksum filled by `uf2fs put`,
#             which keeps holes (sload.f2fs 1.15 writes every block)
#
# Each tree has small files, sparse files, symlinks, hard links, a large
# random file and a file of one repeated 4-byte pattern (img2simg turns its
# blocks into a FILL chunk, so the pattern expansion is read back). For both,
# `uf2fs info`, `ls -R -l -i`, `cat` and `get` must give the same output from
# the sparse file as from the raw image, a read-only FUSE mount of the sparse
# file must read back the same tree as one of the raw image, and every write
# (put, rm, mkdir, mount -o rw) must be refused with a message naming
# simg2img, leaving the file untouched. `uf2fs simg` must write a new sparse
# image that leaves stale free blocks out (smaller than img2simg's), reads the
# same directly and after simg2img, and passes fsck.f2fs. Then corrupt
# variants of a sparse file (tests/lib/simg.py) must each fail cleanly,
# naming what is wrong, a damaged header never taken for a raw image (magic a
# bit off, or gone with the rest of the header intact). Last, `info --verify`:
# nothing to check without checksums; CRC32 chunks and image_checksum made by
# simg.py (zlib; libsparse's reader agrees) and by libsparse's writer match;
# a damaged data byte, crc32 value or header checksum is exit 1 naming the
# chunk and its byte.
#
#   KEEP_TMP=1 tests/integration/sparse.sh
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

need_fuse
need_f2fs_tools
need_uf2fs
need_cmd img2simg simg2img "$PY" sha256sum

tmpdir_init sparse
T=60
step() { echo; echo "=== $* (${SECONDS}s) ==="; }

step "source tree"
SRC=$TMP/src
gen_tree 7 "$SRC" --small --no-special --quiet
head -c $((12 << 20)) /dev/urandom >"$SRC/large.bin"
"$PY" -c 'import sys; sys.stdout.buffer.write(b"ABCD" * (1 << 18))' >"$SRC/pattern.bin"
truncate -s 20M "$SRC/holes.bin"
printf 'island' | dd of="$SRC/holes.bin" bs=1 seek=$((13 << 20)) conv=notrunc status=none
ln -s large.bin "$SRC/large.link"
ln "$SRC/pattern.bin" "$SRC/pattern.hardlink"

step "images"
ANDROID=$TMP/android.img
truncate -s 160M "$ANDROID"
log "mkfs.f2fs -g android; sload.f2fs"
"$MKFS_F2FS" -f -q -g android "$ANDROID" >"$TMP/mkfs-android.log" 2>&1 ||
	{ cat "$TMP/mkfs-android.log"; fail "mkfs.f2fs -g android"; }
"$SLOAD_F2FS" -f "$SRC" -P "$ANDROID" >"$TMP/sload.log" 2>&1 || true
fsck_clean "$ANDROID" || fail "android image not clean after sload"
"$UF2FS" info "$ANDROID" | grep -q 'project_quota' || fail "no project_quota on -g android"

PUT=$TMP/put.img
mk_image "$PUT" 160M extra_attr,inode_checksum,sb_checksum "" || fail "mkfs"
log "uf2fs put"
"$UF2FS" put "$PUT" "$SRC"/* / || fail "uf2fs put"
fsck_clean "$PUT" || fail "put image not clean"

for img in "$ANDROID" "$PUT"; do
	log "img2simg $(basename "$img")"
	img2simg "$img" "${img%.img}.simg" || fail "img2simg"
done
CHUNKS=$("$PY" "$LIB/simg.py" chunks "${PUT%.img}.simg")
log "chunk types of put.simg: $(cut -d' ' -f1 <<<"$CHUNKS" | sort | uniq -c | tr '\n' ' ')"
grep -q '^cac2' <<<"$CHUNKS" ||
	fail "img2simg made no fill chunk: the pattern file should have given one"

# same_output WHAT ARGS...: `uf2fs ARGS` with IMAGE standing for the raw
# image, then for the sparse file; outputs and exit codes must match.
same_output() {
	local what=$1 out_raw out_sparse
	shift
	local raw_args=("${@//@IMG@/$RAW}") sparse_args=("${@//@IMG@/$SPARSE}")
	out_raw=$("$UF2FS" "${raw_args[@]}" 2>&1 | sha256sum) || fail "$what on the raw image"
	out_sparse=$("$UF2FS" "${sparse_args[@]}" 2>&1 | sha256sum) || fail "$what on the sparse file"
	[ "$out_raw" = "$out_sparse" ] || {
		diff <("$UF2FS" "${raw_args[@]}" 2>&1) <("$UF2FS" "${sparse_args[@]}" 2>&1) | head -20
		fail "$what differs between raw and sparse"; }
	log "$what: same ($(basename "$SPARSE"))"
}

for RAW in "$ANDROID" "$PUT"; do
	SPARSE=${RAW%.img}.simg
	name=$(basename "${RAW%.img}")
	step "$name: info, ls, cat, get"
	SUM_BEFORE=$(image_sum "$SPARSE")
	same_output info info @IMG@
	same_output "ls -R -l -i" ls -R -l -i -a @IMG@
	for f in /large.bin /pattern.bin /holes.bin /large.link /sparse/hole-only; do
		same_output "cat $f" cat @IMG@ "$f"
	done
	cmp <("$UF2FS" cat "$SPARSE" /large.bin) "$SRC/large.bin" || fail "large.bin content"
	cmp <("$UF2FS" cat "$SPARSE" /pattern.bin) "$SRC/pattern.bin" || fail "pattern.bin content"
	log "uf2fs get / from both"
	"$UF2FS" get "$RAW" / "$TMP/get-$name-raw" || fail "get raw"
	"$UF2FS" get "$SPARSE" / "$TMP/get-$name-sparse" || fail "get sparse"
	compare_tree "$TMP/get-$name-raw" "$TMP/get-$name-sparse" || fail "get trees differ"
	# sload.f2fs keeps what --sload says; uf2fs put keeps all but the root's mtime
	cmp_opts=(--no-root)
	[ "$name" = android ] && cmp_opts=(--no-root --sload --no-owner --no-xattr --ignore lost+found)
	compare_tree "$SRC" "$TMP/get-$name-sparse" "${cmp_opts[@]}" ||
		fail "get of the sparse file differs from the source"

	step "$name: read-only mounts"
	mount_uf2fs "$RAW" "$TMP/mnt-raw" ro || fail "mount raw"
	mount_uf2fs "$SPARSE" "$TMP/mnt-sparse" ro || fail "mount -o ro of the sparse file"
	compare_tree "$TMP/mnt-raw" "$TMP/mnt-sparse" || fail "mounted trees differ"
	cmp "$TMP/mnt-sparse/large.bin" "$SRC/large.bin" || fail "mounted large.bin"
	umount_uf2fs "$TMP/mnt-sparse" || fail "unmount sparse"
	umount_uf2fs "$TMP/mnt-raw" || fail "unmount raw"

	step "$name: writes refused"
	for cmd in "put $SPARSE $SRC/pattern.bin /new" "rm $SPARSE /large.bin" \
		   "mkdir $SPARSE /newdir"; do
		# shellcheck disable=SC2086
		run_limited $T "$UF2FS" $cmd
		expect_clean_error "uf2fs $cmd" || fail "uf2fs $cmd"
		mentions "$OUT" 'sparse image.*simg2img' || fail "uf2fs $cmd: message"
	done
	run_limited $T "$UF2FS" mount -f -o rw "$SPARSE" "$TMP/mnt-sparse"
	_is_mounted "$TMP/mnt-sparse" && { fusermount3 -u "$TMP/mnt-sparse"; fail "mounted rw"; }
	expect_clean_error "mount -o rw" || fail "mount -o rw"
	mentions "$OUT" 'sparse image.*simg2img' || fail "mount -o rw: message"
	[ "$(image_sum "$SPARSE")" = "$SUM_BEFORE" ] || fail "the sparse file changed"
	simg2img "$SPARSE" "$TMP/expanded.img" || fail "simg2img"
	cmp "$RAW" "$TMP/expanded.img" || fail "simg2img no longer gives the raw image"
	rm -f "$TMP/expanded.img"
done

step "uf2fs simg: a new sparse image, free blocks left out"
# stale bytes in free space (the image's last 8 MiB: free, as fsck and the
# listing confirm), which img2simg must keep and uf2fs simg need not
STALE=$TMP/stale.img
cp "$PUT" "$STALE"
head -c $((8 << 20)) /dev/urandom |
	dd of="$STALE" bs=1M seek=$(($(stat -c %s "$STALE") / 1048576 - 8)) conv=notrunc status=none
fsck_clean "$STALE" || fail "the last 8 MiB were not free space"
RAW=$PUT SPARSE=$STALE same_output "ls -R -l -i (stale)" ls -R -l -i -a @IMG@
img2simg "$STALE" "$TMP/stale-img2simg.simg" || fail "img2simg stale"
log "uf2fs simg stale.img stale.simg"
"$UF2FS" simg "$STALE" "$TMP/stale.simg" || fail "uf2fs simg"
a=$(stat -c %s "$TMP/stale.simg") b=$(stat -c %s "$TMP/stale-img2simg.simg")
log "sizes: uf2fs simg $a, img2simg $b"
[ $((a + (6 << 20))) -lt "$b" ] || fail "uf2fs simg kept the stale free blocks ($a vs $b)"
grep -q '^cac3' <("$PY" "$LIB/simg.py" chunks "$TMP/stale.simg") || fail "no don't-care chunk"
simg2img "$TMP/stale.simg" "$TMP/round.img" || fail "simg2img of uf2fs simg's output"
fsck_clean "$TMP/round.img" || fail "the round trip is not clean"
RAW=$PUT
for SPARSE in "$TMP/round.img" "$TMP/stale.simg"; do
	same_output info info @IMG@
	same_output "ls -R -l -i" ls -R -l -i -a @IMG@
	rm -rf "$TMP/get-round"
	"$UF2FS" get "$SPARSE" / "$TMP/get-round" || fail "get $SPARSE"
	compare_tree "$TMP/get-put-raw" "$TMP/get-round" || fail "get of $SPARSE differs"
done
run_limited $T "$UF2FS" simg "$TMP/stale.simg" "$TMP/again.simg"
expect_clean_error "uf2fs simg of a sparse image" || fail "simg of a sparse image"
[ ! -e "$TMP/again.simg" ] || fail "uf2fs simg left a partial output"
rm -f "$TMP/round.img" "$TMP/stale-img2simg.simg"

step "corrupt sparse files"
# of a small image: copying tens of MiB per defect would only cost time
SMALL=$TMP/small.img
mk_image "$SMALL" 64M none "" || fail "mkfs small"
"$UF2FS" put "$SMALL" "$SRC/pattern.bin" "$SRC/links" / || fail "put small"
img2simg "$SMALL" "$TMP/small.simg" || fail "img2simg small"
SPARSE=$TMP/small.simg
BLKS=$(($(stat -c %s "$SMALL") / 4096))
# Every command opens the image the same way: each defect is tried with info
# and with one of the others in turn, mount -o ro included.
"$PY" "$LIB/simg.py" corrupt-all "$SPARSE" "$TMP/bad"
mkdir -p "$TMP/mnt-sparse"
i=0
while read -r kind re; do
	bad=$TMP/bad-$kind.simg
	others=("ls -R -l $bad" "cat $bad /pattern.bin" "get $bad / $TMP/get-bad"
		"mount -f -o ro $bad $TMP/mnt-sparse")
	for cmd in "info $bad" "${others[i++ % 4]}"; do
		# shellcheck disable=SC2086
		run_limited $T "$UF2FS" $cmd
		_is_mounted "$TMP/mnt-sparse" && { fusermount3 -u "$TMP/mnt-sparse"; fail "$kind: mounted"; }
		expect_clean_error "$kind: uf2fs $cmd" || fail "$kind"
		mentions "$OUT" "$re" || fail "$kind: uf2fs $cmd: message"
	done
	log "$kind: $(printf '%s\n' "$OUT" | head -1)"
done <<EOF
version          sparse header: major version 2
file-hdr-sz      sparse header: file_hdr_sz 20
chunk-hdr-sz     sparse header: chunk_hdr_sz 8
blk-sz           sparse header: blk_sz 4094
total-blks       sparse chunk table: .* cover $BLKS blocks, .*total_blks is $((BLKS + 1))
beyond-end       sparse chunk [0-9]+ .*beyond the image's total_blks $((BLKS - 1))
total-chunks     sparse chunk [0-9]+ of [0-9]+ .*truncated
chunk-size       sparse chunk 0 .*raw chunk of [0-9]+ blocks has total_sz
chunk-type       sparse chunk 0 .*unknown chunk type 0xcafe
huge-chunk       sparse chunk 0 .*raw chunk of 4294967295 blocks
truncated-data   sparse chunk [0-9]+ .*truncated: its [0-9]+ bytes of data run past the end
truncated-header sparse chunk [0-9]+ of [0-9]+ .*truncated: the file .* ends inside its header
short            sparse header: the file \(20 bytes\) is shorter
magic-bit        damaged Android sparse image: sparse header: bad magic 0xed26fe3a .*bits off
magic-zero       damaged Android sparse image: sparse header: bad magic 0x00000000 .*fields after
magic-bit-version damaged Android sparse image: sparse header: bad magic 0xed27ff3a .*bits off
file-hdr-sz-big  damaged Android sparse image: sparse chunk 0 \(byte 65535\)
fill-size        sparse chunk [0-9]+ .*fill chunk of [0-9]+ blocks has total_sz 20
EOF

step "info --verify: CRC32 chunks and the header checksum"
verify_ok() {
	run_limited $T "$UF2FS" info --verify "$1"
	[ "$RC" = 0 ] || fail "info --verify $1: exit $RC: $(head -3 <<<"$OUT")"
	mentions "$OUT" "$2" || fail "info --verify $1: message"
	log "$(basename "$1"): $(grep -m1 '^verify:' <<<"$OUT")"
}
# A raw image and img2simg's output (no checksums) have nothing to check.
verify_ok "$SMALL" "^verify: not an Android sparse image"
verify_ok "$SPARSE" "^verify: 0 crc32 chunks .*nothing to check"
# A CRC32 chunk after every raw chunk and the header's image_checksum, made by
# simg.py with Python's zlib; libsparse's reader (crc on) must accept it too.
"$PY" "$LIB/simg.py" add-crc "$SPARSE" "$TMP/crc.simg" header
"$PY" "$LIB/simg.py" libsparse-check "$TMP/crc.simg" || fail "libsparse rejects simg.py's crc32"
NCRC=$("$PY" "$LIB/simg.py" chunks "$TMP/crc.simg" | grep -c '^cac4')
[ "$NCRC" -ge 2 ] || fail "add-crc made $NCRC crc32 chunks"
verify_ok "$TMP/crc.simg" "^verify: $NCRC crc32 chunks and the header's image_checksum: match$"
[ "$("$UF2FS" cat "$TMP/crc.simg" /pattern.bin | sha256sum)" = \
  "$(sha256sum <"$SRC/pattern.bin")" ] || fail "a crc image reads back differently"
# libsparse's own writer with its crc flag counts one block per fill chunk
# and nothing for don't-care chunks (its own reader rejects that): accepted,
# and named.
"$PY" "$LIB/simg.py" libsparse-crc "$SPARSE" "$TMP/libsparse-crc.simg"
"$PY" "$LIB/simg.py" chunks "$TMP/libsparse-crc.simg" | grep -q '^cac4' ||
	fail "libsparse wrote no crc32 chunk"
verify_ok "$TMP/libsparse-crc.simg" "^verify: 1 crc32 chunk .*match .*libsparse's writer"
# Damage: a data byte (the next crc32 chunk mismatches), the last crc32 value,
# the header checksum. Each: exit 1, the chunk number and its byte named.
n=0
while read -r kind chunk byte; do
	run_limited $T "$UF2FS" info --verify "$TMP/badcrc-$kind.simg"
	[ "$RC" = 1 ] || fail "$kind: --verify exit status $RC, want 1: $(head -3 <<<"$OUT")"
	if [ "$chunk" = header ]; then
		want="checksum mismatch: sparse header \(byte 24\): image_checksum"
	else
		want="checksum mismatch: sparse chunk $chunk \(byte $byte\): crc32 "
	fi
	mentions "$OUT" "$want" || fail "$kind: --verify message"
	log "$kind: $(grep -m1 mismatch <<<"$OUT")"
	n=$((n + 1))
done < <("$PY" "$LIB/simg.py" corrupt-crc "$TMP/crc.simg" "$TMP/badcrc")
[ "$n" = 3 ] || fail "simg.py corrupt-crc made $n defects, want 3"

pass "sparse images read like raw ones; writes refused; corrupt ones fail cleanly; --verify checks the checksums"
