# SPDX-License-Identifier: GPL-2.0
# Pieces shared by the zoned oracle tests (zoned-linux.sh, zoned-cap-linux.sh):
# a conventional virtio disk and a ZNS namespace, named in the guest by
# relative symlinks so that the super block names them as the files are named
# on the host. Source after qemu.sh, with TMP, C (the conventional file) set
# and gh on PATH.
#
#   ZONED_GUEST_HEAD        the guest script's first lines: wait for the
#                           namespace, the symlinks in /tmp/zt (the cwd);
#                           prints the namespace's zoned model
#   zoned_linux_files BIG   $TMP/linux-files.sh (R N: the files Linux writes
#                           under R/lN, BIG bytes the largest) and the
#                           reference copies of rounds 1 and 2 in $TMP/ref
#   zoned_boot2 [LINES]     a boot where Linux reads uf2fs's /tree (its sha256
#                           manifest must equal $TMP/host.sums), checks that
#                           uf2fs's rm of /l1/mid is seen, writes round 2,
#                           unmounts and has no f2fs error in dmesg; LINES
#                           are more guest checks before it reports done

ZONED_GUEST_HEAD='set -e
i=0; while [ ! -b /dev/nvme0n1 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
mkdir -p /tmp/zt && cd /tmp/zt
ln -s /dev/vda zoned-conv.img
ln -s /dev/nvme0n1 zoned-zns.img
cat /sys/block/nvme0n1/queue/zoned'

zoned_linux_files() {
	cat >"$TMP/linux-files.sh" <<EOF
R=\$1; N=\$2
mkdir -p "\$R/l\$N/sub"
gh gen "\$R/l\$N/big" $1 \${N}1 rand
gh gen "\$R/l\$N/sub/small" 3000 \${N}2 text
gh gen "\$R/l\$N/mid" 700000 \${N}3 rand
gh gen "\$R/l\$N/gone" 2000000 \${N}4 rand
EOF
	sh "$TMP/linux-files.sh" "$TMP/ref" 1
	sh "$TMP/linux-files.sh" "$TMP/ref" 2
}

zoned_boot2() {
	local out
	cat >"$TMP/guest2.sh" <<EOF
$ZONED_GUEST_HEAD
mount -t f2fs zoned-conv.img /mnt
echo "=== SUMS"
(cd /mnt/tree && find . -type f | sort | xargs sha256sum)
echo "=== END"
[ "\$(readlink /mnt/tree/link)" = d1/f1 ] || { echo "bad symlink"; exit 1; }
[ -e /mnt/l1/mid ] && { echo "uf2fs's rm not seen"; exit 1; }
$(sed 's/^R=\$1; N=\$2$/R=\/mnt; N=2/' "$TMP/linux-files.sh")
rm /mnt/l2/gone
umount /mnt
dmesg | grep -i 'f2fs' | tail -12
dmesg | grep -i 'f2fs.*\(error\|corrupt\)' && exit 1
${1:-}
echo linux-done
EOF
	out=$(qemu_run "$C" "$TMP/guest2.sh" "" 300) || { printf '%s\n' "$out"; fail "guest 2"; }
	printf '%s\n' "$out" | grep -q linux-done || { printf '%s\n' "$out"; fail "guest 2 did not finish"; }
	printf '%s\n' "$out" | grep -i 'f2fs' | sed 's/^/  guest: /' >&2 || true
	printf '%s\n' "$out" | sed -n '/^=== SUMS/,/^=== END/p' | sed '1d;$d' >"$TMP/guest.sums"
	diff "$TMP/host.sums" "$TMP/guest.sums" || fail "Linux reads other bytes than uf2fs wrote"
	log "Linux read $(wc -l <"$TMP/guest.sums") files as uf2fs wrote them"
}
