#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Zoned volumes both ways against the real Linux f2fs in QEMU: a conventional
# virtio disk (zoned-conv.img, 32 MiB) and an NVMe ZNS namespace
# (zoned-zns.img, 128 MiB of 4 MiB host-managed zones, QEMU_ZNS). The devices
# are relative symlinks in the guest, so the super block names them as the
# files are named on the host.
#   boot 1   the guest's mkfs.f2fs -m -c (Debian's 1.15, copied in) makes the
#            volume; Linux writes its files, removes one, unmounts
#   host     uf2fs reads Linux's files exactly, then (FUSE, rw) writes a tree
#            and overwrites files until sections are collected and zones
#            reset, none of its writes off a zone's write pointer; removes one
#            of Linux's; fsck.f2fs -f clean
#   boot 2   (QEMU keeps no write pointers: every zone reports empty, and
#            Linux moves its logs to fresh zones at mount, as on a device
#            whose pointers disagree) Linux's sha256 manifest of uf2fs's tree
#            must equal the host's; the removed file is gone; Linux writes
#            more and unmounts, its fsck clean
#   host     uf2fs reads Linux's new files exactly; fsck clean
#   boot 3   uf2fs itself (the CLI, with its libraries) on /dev/nvme0n1: zone
#            size, pointers and resets through BLKGETZONESZ, BLKREPORTZONE,
#            BLKRESETZONE; rounds of put/rm wrap around the free zones; the
#            device takes every write; Linux reads the result, fsck clean;
#            then Linux fsyncs a file and loses power (no checkpoint): uf2fs
#            rolls it forward on the files, its logs move to fresh zones,
#            fsck clean
# Three boots, about two minutes.   KEEP_TMP=1 tests/compat/zoned-linux.sh
set -euo pipefail
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$TOP"
. tests/lib/common.sh
. tests/compat/qemu.sh
. tests/compat/zoned-lib.sh

if ! why=$(qemu_missing); then skip "$why"; fi
need_fuse
need_f2fs_tools
need_uf2fs
need_cmd gcc sha256sum blkzone
qemu-system-x86_64 -device nvme-ns,help 2>/dev/null | grep -q zoned ||
	skip "this QEMU has no zoned NVMe namespaces"

tmpdir_init zoned-linux
GHDIR=$TMP/gh
mkdir -p "$GHDIR"
gcc -O2 -Wall -o "$GHDIR/gh" tests/compat/guest-helper.c || fail "cannot build guest-helper.c"
export PATH=$GHDIR:$PATH
QEMU_IN=$TMP/in
qemu_host_tool "$QEMU_IN" mkfs.f2fs fsck.f2fs blkzone || fail "tools for the guest"
export QEMU_IN QEMU_ZNS=$TMP/zoned-zns.img:4M
C=$TMP/zoned-conv.img
Z=$TMP/zoned-zns.img
truncate -s 32M "$C"
truncate -s 128M "$Z"
DEV="device=$Z"
MNT=$TMP/mnt

# the files Linux writes, the same on the host (reference) and in the guest
zoned_linux_files 9000000

step "boot 1: Linux makes the zoned volume and writes"
cat >"$TMP/guest1.sh" <<EOF
$ZONED_GUEST_HEAD
mkfs.f2fs -f -m -c zoned-zns.img zoned-conv.img >/tmp/mkfs.log 2>&1 || { cat /tmp/mkfs.log; exit 1; }
grep -i 'zone' /tmp/mkfs.log
mount -t f2fs zoned-conv.img /mnt
$(sed 's/^R=\$1; N=\$2$/R=\/mnt; N=1/' "$TMP/linux-files.sh")
rm /mnt/l1/gone
umount /mnt
blkzone report /dev/nvme0n1 | grep -vc 'wptr 0x000000 '
dmesg | grep -i 'f2fs.*\(error\|corrupt\|inconsistent\)' && exit 1
echo linux-done
EOF
out=$(qemu_run "$C" "$TMP/guest1.sh" "" 300) || { printf '%s\n' "$out"; fail "guest 1"; }
printf '%s\n' "$out" | grep -q '^host-managed' || fail "the guest's namespace is not zoned"
printf '%s\n' "$out" | grep -q linux-done || fail "guest 1 did not finish"

step "uf2fs reads Linux's files, then writes"
"$UF2FS" info -o "$DEV" "$C" >"$TMP/info1" || fail "info"
grep -q 'zoned (blkzoned' "$TMP/info1" || fail "info: not zoned"
for p in l1/big l1/sub/small l1/mid; do
	"$UF2FS" get -o "$DEV" "$C" "/$p" "$TMP/got" || fail "get /$p"
	cmp "$TMP/ref/$p" "$TMP/got" || fail "/$p differs from what Linux wrote"
done
"$UF2FS" ls -o "$DEV" "$C" /l1 | grep -qw gone && fail "Linux's rm not seen"
SRC=$TMP/src
mkdir -p "$SRC/tree/d1/d2" "$SRC/tree/empty"
gh gen "$SRC/tree/big" 15000000 21 rand
gh gen "$SRC/tree/d1/f1" 5000 22 text
gh gen "$SRC/tree/d1/d2/f2" 1000001 23 rand
gh gen "$SRC/tree/inline" 100 24 text
gh gen "$SRC/tree/gone" 300000 25 rand
ln -s d1/f1 "$SRC/tree/link"
mount_uf2fs "$C" "$MNT" "rw,$DEV" || fail "mount rw"
cp -a "$SRC/tree" "$MNT/tree" || fail "copy"
mkdir "$MNT/tree/churn"
# each version fsync'd, so that it reaches the volume and the next one frees its blocks
for r in $(seq 0 63); do
	rm -f "$MNT/tree/churn/c$((r % 8))"
	gh fsyncgen "$MNT/tree/churn/c$((r % 8))" 2000000 $((100 + r)) rand || fail "churn $r"
done
rm "$MNT/l1/mid" "$MNT/tree/gone"
rm "$SRC/tree/gone"
mkdir "$SRC/tree/churn"
for r in 56 57 58 59 60 61 62 63; do gh gen "$SRC/tree/churn/c$((r % 8))" 2000000 $((100 + r)) rand; done
"$UF2FS" stats "$MNT" >"$TMP/stats" || fail "stats"
zl=$(grep '  zoned:' "$TMP/stats") || fail "stats: no zoned line"
log "$zl"
grep -q ' 0 refused' <<<"$zl" || fail "writes off a zone's write pointer"
grep -qE ' [1-9][0-9]* zones reset' <<<"$zl" || fail "no zone was reset"
umount_uf2fs "$MNT" || fail "unmount"
(cd "$TMP" && fsck_clean zoned-conv.img) || fail "fsck after uf2fs"
(cd "$SRC/tree" && find . -type f | sort | xargs sha256sum) >"$TMP/host.sums"

step "boot 2: Linux reads uf2fs's tree, then writes"
zoned_boot2 "fsck.f2fs zoned-conv.img | grep -q 'other corrupted bugs.*Ok' || { echo 'guest fsck'; exit 1; }"

step "uf2fs reads what Linux wrote after it"
(cd "$TMP" && fsck_clean zoned-conv.img) || fail "fsck after Linux"
for p in l2/big l2/sub/small l2/mid l1/big; do
	"$UF2FS" get -o "$DEV" "$C" "/$p" "$TMP/got" || fail "get /$p"
	cmp "$TMP/ref/$p" "$TMP/got" || fail "/$p differs from what Linux wrote"
done
mount_uf2fs "$C" "$MNT" "rw,$DEV" || fail "mount rw again"
echo again >"$MNT/again"
umount_uf2fs "$MNT" || fail "unmount again"
(cd "$TMP" && fsck_clean zoned-conv.img) || fail "fsck at the end"

step "boot 3: uf2fs (CLI) on the zoned block device itself: zone ioctls"
# The pointers come from BLKREPORTZONE (all zones empty again after the
# reboot: the logs move to fresh zones), reused zones are reset with
# BLKRESETZONE, and the device refuses any write off a pointer: rounds of
# put and rm on a nearly full volume wrap the allocation around the zones.
qemu_host_tool "$QEMU_IN" "$UF2FS" || fail "uf2fs for the guest"
gh gen "$TMP/payload" 3000000 77 rand
cat >"$TMP/guest3.sh" <<EOF
$ZONED_GUEST_HEAD
gh gen /tmp/payload 3000000 77 rand
# u CMD...: uf2fs, its notices about the pointers QEMU forgot kept out of the way
u() { uf2fs "\$@" 2>/tmp/u.err || { cat /tmp/u.err; exit 1; }; }
# room first: the volume is nearly full
for f in /l1/big /tree/churn/c0 /tree/churn/c1 /tree/churn/c2 /tree/churn/c3; do
	u rm zoned-conv.img \$f
done
for round in 1 2 3 4; do
	for k in 1 2 3 4; do u put zoned-conv.img /tmp/payload /r\$round-\$k; done
	[ \$round = 4 ] || for k in 1 2 3 4; do u rm zoned-conv.img /r\$round-\$k; done
done
grep -v 'past its write pointer' /tmp/u.err || true
uf2fs info zoned-conv.img | grep 'sequential zones'
blkzone report /dev/nvme0n1 | grep -vc 'wptr 0x000000 '
fsck.f2fs zoned-conv.img | grep -q 'other corrupted bugs.*Ok' || { echo "guest fsck"; exit 1; }
mount -t f2fs zoned-conv.img /mnt
echo "=== SUMS"
(cd /mnt && sha256sum r4-* tree/big l2/big)
echo "=== END"
ls /mnt | grep -q '^r[123]-' && { echo "removed files listed"; exit 1; }
umount /mnt
dmesg | grep -i 'I/O error\|f2fs.*\(error\|corrupt\)' && exit 1
echo linux-done
# then Linux fsyncs a file and loses power: no checkpoint after it
mount -t f2fs zoned-conv.img /mnt
sync
gh fsyncgen /mnt/cut 1500000 88 rand
powercut
EOF
out=$(qemu_run "$C" "$TMP/guest3.sh" "" 400) || { printf '%s\n' "$out"; fail "guest 3"; }
printf '%s\n' "$out" | grep -q linux-done || { printf '%s\n' "$out"; fail "guest 3 did not finish"; }
printf '%s\n' "$out" | sed -n '/^=== SUMS/,/^=== END/p' | sed '1d;$d' >"$TMP/guest3.sums"
want=$(sha256sum <"$TMP/payload" | cut -d' ' -f1)
[ "$(grep -c "^$want  r4-" "$TMP/guest3.sums")" = 4 ] || { cat "$TMP/guest3.sums"; fail "r4-*"; }
grep -q "^$(sha256sum <"$SRC/tree/big" | cut -d' ' -f1)  tree/big" "$TMP/guest3.sums" ||
	fail "tree/big changed"
grep -q "^$(sha256sum <"$TMP/ref/l2/big" | cut -d' ' -f1)  l2/big" "$TMP/guest3.sums" ||
	fail "l2/big changed"
step "Linux's power cut after an fsync: uf2fs rolls forward"
"$UF2FS" get -o "$DEV" "$C" /r4-4 "$TMP/got" && cmp "$TMP/got" "$TMP/payload" ||
	fail "the host reads other bytes than the guest's uf2fs wrote"
gh gen "$TMP/cut.ref" 1500000 88 rand
"$UF2FS" info -o "$DEV" "$C" | grep -q 'needs recovery: yes' || fail "no roll-forward data"
mount_uf2fs "$C" "$MNT" "rw,$DEV" || fail "mount after Linux's power cut"
cmp "$MNT/cut" "$TMP/cut.ref" || fail "Linux's fsync'd file not recovered"
echo after >"$MNT/after-cut"
"$UF2FS" stats "$MNT" | grep -q ' 0 refused' || fail "a write after recovery was refused"
umount_uf2fs "$MNT" || fail "unmount after recovery"
(cd "$TMP" && fsck_clean zoned-conv.img) || fail "fsck after recovery"
pass "a zoned volume (ZNS): both ways, uf2fs on the zoned device through the zone ioctls, Linux's power cut rolled forward"
