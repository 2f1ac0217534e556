#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# f2fs volumes inside partitioned disks, opened in place with -o partition=:
#
#   gpt512    a GPT disk (sgdisk, 512-byte sectors): boot_a, userdata (f2fs),
#             misc; picked by name and by number
#   gpt4k     a GPT disk with 4096-byte sectors (sgdisk on a loop device with
#             4096-byte sectors), as a UFS dump has them
#   mbr       an MBR disk (sfdisk) whose second primary partition is f2fs
#   sparse    the gpt512 disk as an Android sparse image (img2simg): the table
#             is read through the sparse layer, read-only
#   qcow2     the gpt512 disk converted to qcow2 (served by qemu-nbd): listed,
#             written offline, converted back: the partition is fsck clean
#   nbd       the gpt512 disk served by nbdkit over a Unix socket: listed and
#             mounted read-write by URI with -o partition=
#
# For each: `uf2fs info DISK` lists the partitions and marks the f2fs one;
# put/ls/get and a read-write mount write into the partition; the bytes of the
# disk outside the partition are unchanged; the partition, cut out with dd,
# passes fsck.f2fs -f and holds the tree. A missing partition, a disk with no
# table and a partition past the end of a truncated disk fail cleanly, naming
# what is wrong.
#
#   KEEP_TMP=1 tests/integration/partition.sh
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

need_fuse
need_f2fs_tools
need_uf2fs
need_root
need_cmd sgdisk sfdisk losetup img2simg qemu-img nbdkit sha256sum "$PY"

tmpdir_init partition

SRC=$TMP/src
gen_tree 11 "$SRC" --small --no-special --quiet
head -c $((3 << 20)) /dev/urandom >"$SRC/random.bin"

# outside_sum DISK START SIZE: the disk's bytes before and after the partition.
outside_sum() {
	local disk=$1 start=$2 size=$3 total
	total=$(stat -c %s "$disk")
	{ head -c "$start" "$disk"; tail -c $((total - start - size)) "$disk"; } | sha256sum |
		cut -d' ' -f1
}

# fill_partition DISK START SIZE: mkfs.f2fs a file of the partition's size, copy it in.
fill_partition() {
	local disk=$1 start=$2 size=$3 vol=$TMP/vol.img
	rm -f "$vol"
	truncate -s "$size" "$vol"
	"$MKFS_F2FS" -f -q -l userdata "$vol" >"$vol.log" 2>&1 || { cat "$vol.log"; fail "mkfs"; }
	dd if="$vol" of="$disk" bs=1M seek="$start" oflag=seek_bytes conv=notrunc status=none
	rm -f "$vol"
}

# check_disk NAME DISK PART START SIZE: the whole round on one disk.
check_disk() {
	local name=$1 disk=$2 part=$3 start=$4 size=$5 before after out
	fill_partition "$disk" "$start" "$size"
	step "$name: info lists the partitions"
	out=$("$UF2FS" info "$disk") || fail "$name: info failed"
	printf '%s\n' "$out"
	grep -q 'a partitioned disk' <<<"$out" || fail "$name: info did not list partitions"
	grep -qE "^ +[0-9]+ +$start .* yes " <<<"$out" || fail "$name: f2fs partition not marked"
	out=$("$UF2FS" info -o partition="$part" "$disk") || fail "$name: info -o partition"
	grep -q "^Partition: .*bytes $start to $((start + size))" <<<"$out" ||
		fail "$name: info does not show the partition's range"
	grep -q '^Volume name: *userdata' <<<"$out" || fail "$name: wrong volume"

	before=$(outside_sum "$disk" "$start" "$size")
	step "$name: put, ls, mkdir, rm offline"
	"$UF2FS" put -o partition="$part" "$disk" "$SRC" /tree || fail "$name: put"
	"$UF2FS" mkdir -o partition="$part" "$disk" /extra || fail "$name: mkdir"
	"$UF2FS" ls -o partition="$part" "$disk" /tree >/dev/null || fail "$name: ls"

	step "$name: read-write mount"
	mount_uf2fs "$disk" "$TMP/mnt" "rw,partition=$part" || fail "$name: mount"
	compare_tree "$SRC" "$TMP/mnt/tree" || fail "$name: tree differs through the mount"
	head -c $((5 << 20)) /dev/urandom >"$TMP/mnt/extra/new.bin"
	cp "$TMP/mnt/extra/new.bin" "$TMP/new-$name.bin"
	rm -rf "$TMP/mnt/tree/"*/ 2>/dev/null || true
	umount_uf2fs "$TMP/mnt" || fail "$name: unmount"
	after=$(outside_sum "$disk" "$start" "$size")
	[ "$before" = "$after" ] || fail "$name: bytes outside the partition changed"

	step "$name: the partition cut out is clean and holds the data"
	dd if="$disk" of="$TMP/cut.img" bs=1M skip="$start" count="$size" \
		iflag=skip_bytes,count_bytes status=none
	fsck_clean "$TMP/cut.img" || fail "$name: fsck of the partition"
	"$UF2FS" cat "$TMP/cut.img" /extra/new.bin | cmp - "$TMP/new-$name.bin" ||
		fail "$name: new file differs in the cut-out partition"
	rm -rf "$TMP/get"
	"$UF2FS" get -o partition="$part" "$disk" /extra "$TMP/get" || fail "$name: get"
	cmp "$TMP/get/new.bin" "$TMP/new-$name.bin" || fail "$name: get differs"
	rm -f "$TMP/cut.img"
}

MiB=$((1 << 20))

step "gpt512: sgdisk"
GPT=$TMP/gpt.img
truncate -s 96M "$GPT"
sgdisk -n 1:2048:+8M -c 1:boot_a -n 2:0:+64M -c 2:userdata -t 2:8300 \
	-n 3:0:0 -c 3:misc "$GPT" >/dev/null
start=$(sgdisk -i 2 "$GPT" | awk '/First sector/ { print $3 * 512 }')
size=$((64 * MiB))
check_disk gpt512-name "$GPT" userdata "$start" "$size"
check_disk gpt512-number "$GPT" 2 "$start" "$size"

step "gpt4k: sgdisk on a loop device with 4096-byte sectors"
GPT4=$TMP/gpt4k.img
truncate -s 96M "$GPT4"
LOOP=$(losetup --sector-size 4096 -f --show "$GPT4") || fail "losetup --sector-size 4096"
sgdisk -n 1:256:+8M -c 1:boot_a -n 2:0:+64M -c 2:userdata "$LOOP" >/dev/null 2>&1 ||
	{ losetup -d "$LOOP"; fail "sgdisk on $LOOP"; }
losetup -d "$LOOP"
start=$((2304 * 4096))
out=$("$UF2FS" info "$GPT4")
grep -q '4096-byte sectors' <<<"$out" || fail "gpt4k: not read with 4096-byte sectors: $out"
check_disk gpt4k "$GPT4" userdata "$start" $((16384 * 4096))

step "mbr: sfdisk"
MBR=$TMP/mbr.img
truncate -s 96M "$MBR"
printf 'label: dos\nstart=2048, size=16384, type=c\nsize=131072, type=83\n' |
	sfdisk -q "$MBR" >/dev/null
start=$((18432 * 512))
check_disk mbr "$MBR" 2 "$start" $((131072 * 512))

step "sparse: the gpt512 disk through img2simg"
img2simg "$GPT" "$TMP/gpt.simg"
out=$("$UF2FS" info "$TMP/gpt.simg") || fail "sparse: info"
grep -qE 'userdata$' <<<"$out" || fail "sparse: no userdata listed: $out"
"$UF2FS" cat -o partition=userdata "$TMP/gpt.simg" /extra/new.bin | cmp - "$TMP/new-gpt512-number.bin" ||
	fail "sparse: content differs"

step "qcow2: the gpt512 disk as a qcow2 (through qemu-nbd), written"
qemu-img convert -O qcow2 "$GPT" "$TMP/gpt.qcow2"
out=$("$UF2FS" info "$TMP/gpt.qcow2") || fail "qcow2: info"
grep -qE '^ +2 .* yes .*userdata$' <<<"$out" || fail "qcow2: no f2fs userdata listed: $out"
"$UF2FS" put -o partition=userdata "$TMP/gpt.qcow2" "$TMP/new-mbr.bin" /qcow2.bin ||
	fail "qcow2: put"
"$UF2FS" cat -o partition=2 "$TMP/gpt.qcow2" /qcow2.bin | cmp - "$TMP/new-mbr.bin" ||
	fail "qcow2: content differs"
qemu-img convert -O raw "$TMP/gpt.qcow2" "$TMP/from-qcow2.img"
dd if="$TMP/from-qcow2.img" of="$TMP/cut.img" bs=1M skip=9437184 count=$((64 * MiB)) \
	iflag=skip_bytes,count_bytes status=none
fsck_clean "$TMP/cut.img" || fail "qcow2: fsck of the partition"
rm -f "$TMP/from-qcow2.img" "$TMP/cut.img"

step "nbd: the gpt512 disk served by nbdkit over a Unix socket, mounted rw"
SOCK=$TMP/nbd.sock
nbdkit -U "$SOCK" -P "$TMP/nbdkit.pid" file "$GPT"
for ((i = 0; i < 50; i++)); do [ -s "$TMP/nbdkit.pid" ] && break; sleep 0.1; done
NBDPID=$(cat "$TMP/nbdkit.pid")
trap '_rc=$?; set +e; kill "$NBDPID" 2>/dev/null; (exit $_rc); _cleanup' EXIT
URI="nbd+unix:///?socket=$SOCK"
"$UF2FS" info "$URI" | grep -qE 'userdata$' || fail "nbd: no partitions listed"
mount_uf2fs "$URI" "$TMP/mnt" "rw,partition=userdata" || fail "nbd: mount"
cp "$TMP/new-gpt4k.bin" "$TMP/mnt/over-nbd.bin"
umount_uf2fs "$TMP/mnt" || fail "nbd: unmount"
kill "$NBDPID"
"$UF2FS" cat -o partition=userdata "$GPT" /over-nbd.bin | cmp - "$TMP/new-gpt4k.bin" ||
	fail "nbd: the file written over NBD differs in the disk"

step "bad input"
run_limited 30 "$UF2FS" ls -o partition=system "$GPT" /
expect_clean_error "no such partition" || fail "no such partition"
mentions "$OUT" 'no such partition.*userdata' || fail "message does not list the table"
run_limited 30 "$UF2FS" ls "$GPT" /
expect_clean_error "whole partitioned disk" || fail "whole partitioned disk"
mentions "$OUT" 'partitioned disk \(gpt: 1 boot_a, 2 userdata, 3 misc\).*-o partition=' ||
	fail "no hint to pick a partition"
mk_image "$TMP/plain.img" 64M "" "" || fail mkfs
run_limited 30 "$UF2FS" ls -o partition=1 "$TMP/plain.img" /
expect_clean_error "no table" || fail "no table"
mentions "$OUT" 'no partition table' || fail "message does not say there is no table"
"$UF2FS" info "$TMP/plain.img" | grep -q '^Volume name' || fail "plain image info changed"
head -c $((40 * MiB)) "$MBR" >"$TMP/truncated.img"
sum=$(image_sum "$TMP/truncated.img")
run_limited 30 "$UF2FS" ls -o partition=2 "$TMP/truncated.img" /
expect_clean_error "truncated disk" || fail "truncated disk"
mentions "$OUT" 'past the end of the disk' || fail "message does not say truncated"
# libblkid does not accept a GPT whose table lies past the end of the file
head -c $((40 * MiB)) "$GPT" >"$TMP/truncated-gpt.img"
run_limited 30 "$UF2FS" ls -o partition=userdata "$TMP/truncated-gpt.img" /
expect_clean_error "truncated GPT disk" || fail "truncated GPT disk"
[ "$(image_sum "$TMP/truncated.img")" = "$sum" ] || fail "truncated disk was written"

pass
