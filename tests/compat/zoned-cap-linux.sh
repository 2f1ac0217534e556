#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Zoned volumes whose zones hold less than their size, both ways against the
# real Linux f2fs in QEMU: a conventional virtio disk (zoned-conv.img, 32 MiB)
# and an NVMe ZNS namespace of 8 MiB zones with a capacity of 5 MiB
# (zoned-zns.img, 256 MiB, QEMU_ZNS=FILE:8M:5M). A section is 4 segments:
# segment 2 of a zoned section has 256 usable blocks, segment 3 none.
#   boot 1   the guest's mkfs.f2fs -m -c makes the volume; Linux writes its
#            files, removes one, unmounts; then uf2fs's CLI on the namespace
#            itself takes the capacity from BLKREPORTZONE (info says 1280
#            blocks), puts and removes files round after round (zones reset,
#            the device refuses any write off a pointer or past the capacity);
#            Linux mounts and reads uf2fs's files
#   host     uf2fs (-o zone_capacity=5M) reads Linux's files exactly, then
#            (FUSE, rw) writes a tree and churns until zones are reset, none
#            of its writes refused; nothing past any zone's capacity in the
#            file; fsck.f2fs -f on the files clean but for the free segment
#            count (it counts the 32 unusable segments there:
#            tests/lib/zoned.sh)
#   boot 2   Linux's sha256 manifest of uf2fs's tree equals the host's (its
#            mount checks no segment holds more valid blocks than usable);
#            Linux writes more and unmounts
#   host     uf2fs reads Linux's new files exactly
# fsck.f2fs 1.15 on the namespace itself does not finish under TCG with a
# zone capacity (over 300 s, zoned-cap.guest.sh), so it is not run in the
# guest. Two boots, about 70 s.   KEEP_TMP=1 tests/compat/zoned-cap-linux.sh
set -euo pipefail
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$TOP"
. tests/lib/common.sh
. tests/compat/qemu.sh
. tests/compat/zoned-lib.sh
. tests/lib/zoned.sh

if ! why=$(qemu_missing); then skip "$why"; fi
need_fuse
need_f2fs_tools
need_uf2fs
need_cmd gcc sha256sum blkzone
qemu-system-x86_64 -device nvme-ns,help 2>/dev/null | grep -q zoned ||
	skip "this QEMU has no zoned NVMe namespaces"

tmpdir_init zoned-cap-linux
GHDIR=$TMP/gh
mkdir -p "$GHDIR"
gcc -O2 -Wall -o "$GHDIR/gh" tests/compat/guest-helper.c || fail "cannot build guest-helper.c"
export PATH=$GHDIR:$PATH
QEMU_IN=$TMP/in
qemu_host_tool "$QEMU_IN" mkfs.f2fs blkzone "$UF2FS" || fail "tools for the guest"
export QEMU_IN QEMU_ZNS=$TMP/zoned-zns.img:8M:5M
C=$TMP/zoned-conv.img
Z=$TMP/zoned-zns.img
truncate -s 32M "$C"
truncate -s 256M "$Z"
OPTS="device=$Z,zone_capacity=5M"
MNT=$TMP/mnt
ZONES=32

zoned_linux_files 5000000
step "boot 1: Linux makes the volume and writes; uf2fs on the namespace (BLKREPORTZONE)"
gh gen "$TMP/payload" 2500000 77 rand
cat >"$TMP/guest1.sh" <<EOF
$ZONED_GUEST_HEAD
blkzone report /dev/nvme0n1 | head -1
mkfs.f2fs -f -m -c zoned-zns.img zoned-conv.img >/tmp/mkfs.log 2>&1 || { cat /tmp/mkfs.log; exit 1; }
mount -t f2fs zoned-conv.img /mnt
$(sed 's/^R=\$1; N=\$2$/R=\/mnt; N=1/' "$TMP/linux-files.sh")
rm /mnt/l1/gone
umount /mnt
gh gen /tmp/payload 2500000 77 rand
u() { uf2fs "\$@" 2>/tmp/u.err || { cat /tmp/u.err; exit 1; }; }
uf2fs info zoned-conv.img | grep 'zone size'
for round in 1 2 3 4 5 6; do
	for k in 1 2 3 4; do u put zoned-conv.img /tmp/payload /r\$round-\$k; done
	[ \$round = 6 ] || for k in 1 2 3 4; do u rm zoned-conv.img /r\$round-\$k; done
done
uf2fs info zoned-conv.img | grep 'sequential zones'
mount -t f2fs zoned-conv.img /mnt
echo "=== SUMS"
(cd /mnt && sha256sum r6-* l1/big)
echo "=== END"
ls /mnt | grep -q '^r[1-5]-' && { echo "removed files listed"; exit 1; }
umount /mnt
dmesg | grep -i 'I/O error\|f2fs.*\(error\|corrupt\|inconsistent\)' && exit 1
echo linux-done
EOF
out=$(qemu_run "$C" "$TMP/guest1.sh" "" 400) || { printf '%s\n' "$out"; fail "guest 1"; }
printf '%s\n' "$out" | grep -q linux-done || { printf '%s\n' "$out"; fail "guest 1 did not finish"; }
printf '%s\n' "$out" | grep -q 'cap 0x002800' || fail "the namespace's capacity is not 5 MiB"
printf '%s\n' "$out" | grep -E 'zone size|sequential zones' | sed 's/^/  guest: /' >&2
printf '%s\n' "$out" | grep -q 'capacity 1280 blocks' ||
	{ printf '%s\n' "$out"; fail "uf2fs did not take the capacity from the zone report"; }
printf '%s\n' "$out" | sed -n '/^=== SUMS/,/^=== END/p' | sed '1d;$d' >"$TMP/guest1.sums"
want=$(sha256sum <"$TMP/payload" | cut -d' ' -f1)
[ "$(grep -c "^$want  r6-" "$TMP/guest1.sums")" = 4 ] || { cat "$TMP/guest1.sums"; fail "r6-*"; }
grep -q "^$(sha256sum <"$TMP/ref/l1/big" | cut -d' ' -f1)  l1/big" "$TMP/guest1.sums" ||
	fail "l1/big changed"
zcap_tails_zero "$Z" $ZONES || fail "data past a zone's capacity after boot 1"

step "uf2fs reads Linux's files, then writes"
"$UF2FS" info -o "$OPTS" "$C" | grep -q 'capacity 1280 blocks' || fail "info: capacity"
for p in l1/big l1/sub/small l1/mid; do
	"$UF2FS" get -o "$OPTS" "$C" "/$p" "$TMP/got" || fail "get /$p"
	cmp "$TMP/ref/$p" "$TMP/got" || fail "/$p differs from what Linux wrote"
done
SRC=$TMP/src
mkdir -p "$SRC/tree/d1/d2"
gh gen "$SRC/tree/big" 6000000 21 rand
gh gen "$SRC/tree/d1/f1" 5000 22 text
gh gen "$SRC/tree/d1/d2/f2" 1000001 23 rand
gh gen "$SRC/tree/inline" 100 24 text
ln -s d1/f1 "$SRC/tree/link"
mount_uf2fs "$C" "$MNT" "rw,$OPTS" || fail "mount rw"
for f in /r6-1 /r6-2 /r6-3; do rm "$MNT$f"; done
cp -a "$SRC/tree" "$MNT/tree" || fail "copy"
mkdir "$MNT/tree/churn"
for r in $(seq 0 99); do
	rm -f "$MNT/tree/churn/c$((r % 6))"
	gh fsyncgen "$MNT/tree/churn/c$((r % 6))" 2000000 $((100 + r)) rand || fail "churn $r"
done
rm "$MNT/l1/mid"
mkdir "$SRC/tree/churn"
for r in $(seq 94 99); do gh gen "$SRC/tree/churn/c$((r % 6))" 2000000 $((100 + r)) rand; done
"$UF2FS" stats "$MNT" >"$TMP/stats" || fail "stats"
zl=$(grep '  zoned:' "$TMP/stats") || fail "stats: no zoned line"
log "$zl"
grep -q ' 0 refused' <<<"$zl" || fail "writes refused (off a pointer or past the capacity)"
grep -qE ' [1-9][0-9]* zones reset' <<<"$zl" || fail "no zone was reset"
umount_uf2fs "$MNT" || fail "unmount"
zcap_tails_zero "$Z" $ZONES || fail "uf2fs wrote past a zone's capacity"
zcap_fsck "$TMP" "$OPTS" $ZONES || fail "fsck after uf2fs"
(cd "$SRC/tree" && find . -type f | sort | xargs sha256sum) >"$TMP/host.sums"

step "boot 2: Linux reads uf2fs's tree, then writes"
zoned_boot2

step "uf2fs reads what Linux wrote after it"
zcap_tails_zero "$Z" $ZONES || fail "data past a zone's capacity after boot 2"
for p in l2/big l2/sub/small l2/mid l1/big r6-4; do
	"$UF2FS" get -o "$OPTS" "$C" "/$p" "$TMP/got" || fail "get /$p"
	case $p in r6-4) ref=$TMP/payload;; *) ref=$TMP/ref/$p;; esac
	cmp "$ref" "$TMP/got" || fail "/$p differs"
done
mount_uf2fs "$C" "$MNT" "rw,$OPTS" || fail "mount rw again"
echo again >"$MNT/again"
umount_uf2fs "$MNT" || fail "unmount again"
pass "zone capacity < size (ZNS): both ways, uf2fs on the namespace through BLKREPORTZONE"
