#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Disk quota, both directions, against the real Linux f2fs in QEMU, on
# `mkfs.f2fs -g android` images (quota_ino, project_quota), and one with
# `-O casefold -C utf8` besides (a casefolded directory in the workload):
#
# (a) uf2fs (FUSE, rw) writes, truncates, chowns, chgrps, sets project IDs
#     (chattr -p, a PROJINHERIT directory), links, deletes and fallocates;
#     unmount; fsck.f2fs clean (quota included); `uf2fs quota` is recorded.
# (b) Linux mounts it (quota on, from the quota files), and its usage for
#     every user, group and project (quotactl Q_GETNEXTQUOTA: gh quota-get)
#     equals what uf2fs reported. Linux then writes, chowns, sets a project
#     ID and deletes; after a sync it reports again, and unmounts.
# (c) uf2fs reads Linux's quota files: `uf2fs quota` equals Linux's second
#     report; fsck.f2fs clean.
#
# Env: BUILD, UF2FS, TOP (from make check); KEEP_TMP=1.
set -euo pipefail
. "$(dirname "$0")/compat-lib.sh"
need_cmd gcc chattr

TMO=${QUOTA_COMPAT_TIMEOUT:-300}
tmpdir_init quota-compat
# One image: LABEL, then mkfs.f2fs options after -g android.
one_image() {
LABEL=$1
shift
IMG=$TMP/$LABEL.img
M=$TMP/mnt-$LABEL
truncate -s 128M "$IMG"
"$MKFS_F2FS" -f -q -g android "$@" "$IMG" >/dev/null || fail "mkfs.f2fs -g android $*"
TMP_SAVE=$TMP
TMP=$TMP/$LABEL
mkdir -p "$TMP"

# `uf2fs quota` -> "type id KiB inodes", as gh quota-get prints them
report_of() {
	"$UF2FS" quota "$1" | awk '
		/^\*\*\* Report for/ { t = $4 }
		/^#/ { id = substr($1, 2); n = ($6 ~ /^[0-9]+$/) ? $6 : $7
		       if ($3 != 0 || n != 0) print t, id, $3, n }' | LC_ALL=C sort
}

fsck_quota_clean() {
	fsck_clean "$IMG" || fail "fsck after $1"
	if grep -i 'quota' "$IMG.fsck.log" | grep -viE 'superblock features|^Info:' >&2; then
		fail "fsck.f2fs mentions quota after $1"
	fi
}

# ------------------------------------------------------------------ (a)
step "(a) uf2fs changes usage"
mount_uf2fs "$IMG" "$M" rw || fail "uf2fs mount -o rw"
mkdir "$M/d" "$M/proj"
dd if=/dev/urandom of="$M/d/a" bs=4k count=50 status=none
chown 1000:1000 "$M/d/a"
dd if=/dev/urandom of="$M/d/b" bs=64k count=20 status=none
truncate -s 100k "$M/d/b"
chown 1001:1002 "$M/d/b"
fallocate -l 256k "$M/d/c"
chown 1002 "$M/d/c"
chgrp 1003 "$M/d/a"
ln "$M/d/a" "$M/d/a2"
for i in $(seq 1 40); do echo "$i" > "$M/d/small-$i"; done
chown 1004:1004 "$M"/d/small-*
rm -f "$M"/d/small-1*
chattr +P -p 42 "$M/proj" || fail "chattr -p"
dd if=/dev/urandom of="$M/proj/p" bs=4k count=10 status=none
chattr -p 43 "$M/d/b" || fail "chattr -p on a file"
if [ "$LABEL" = casefold ]; then
	mkdir "$M/cf"
	chattr +F "$M/cf" || fail "chattr +F"
	for n in Alpha BETA gamma; do dd if=/dev/urandom of="$M/cf/$n" bs=4k count=3 status=none; done
	chown -R 1005:1005 "$M/cf"
	[ -e "$M/cf/ALPHA" ] || fail "casefolded lookup"
fi
umount_uf2fs "$M" || fail "unmount"
fsck_quota_clean "uf2fs wrote"
report_of "$IMG" > "$TMP/uf2fs-a"
[ "$(grep -c . "$TMP/uf2fs-a")" -ge 10 ] || fail "uf2fs quota reports too little: $(cat "$TMP/uf2fs-a")"

# ------------------------------------------------------------------ (b)
step "(b) Linux's usage per id equals uf2fs's; Linux changes it"
cat > "$TMP/guest.sh" <<'EOF'
rc=0
O=/tmp/out
mkdir -p $O /mnt
bad() { echo "GUEST: $*"; rc=1; }
report() { for t in u g p; do gh quota-get /dev/vda $t; done | LC_ALL=C sort; }
if mount -t f2fs /dev/vda /mnt; then
	report > $O/linux-a
	gh gen /mnt/d/linux1 300000 7 rand || bad "gen"
	chown 2000:2001 /mnt/d/linux1
	chown 2002 /mnt/d/c
	gh gen /mnt/proj/linux2 50000 8 rand || bad "gen proj"
	gh setproj /mnt/d/a 44 || bad "setproj"
	rm /mnt/d/small-2 /mnt/d/b
	sync
	report > $O/linux-b
	cd /; umount /mnt || bad "umount failed"
else bad "mount failed"; fi
dmesg > $O/dmesg
tar cf - -C $O . | dd of=/dev/vdb bs=65536 conv=fsync 2>/dev/null
exit $rc
EOF
rm -f "$TMP/guest.out"
qemu_run "$IMG" "$TMP/guest.sh" "$TMP/guest.out" "$TMO" > "$TMP/guest.console" ||
	{ tail -30 "$TMP/guest.console" >&2; fail "guest failed"; }
if grep -q '^GUEST:' "$TMP/guest.console"; then
	grep '^GUEST:' "$TMP/guest.console" >&2
	fail "guest checks failed"
fi
mkdir -p "$TMP/g"
tar xf "$TMP/guest.out" -C "$TMP/g" || fail "no output from the guest"
badmsg=$(grep -iE 'f2fs.*(error|inconsist|corrupt|fsck|invalid|mismatch|fail)|quota.*(error|fail)' \
	"$TMP/g/dmesg" || true)
[ -z "$badmsg" ] || { printf '%s\n' "$badmsg" >&2; fail "kernel messages"; }
diff -u "$TMP/g/linux-a" "$TMP/uf2fs-a" >&2 || fail "Linux's usage differs from uf2fs's report"
log "Linux's quotactl agrees with uf2fs quota: $(grep -c . "$TMP/uf2fs-a") ids"

# ------------------------------------------------------------------ (c)
step "(c) uf2fs reads the quota files Linux wrote"
fsck_quota_clean "Linux wrote"
report_of "$IMG" > "$TMP/uf2fs-c"
diff -u "$TMP/g/linux-b" "$TMP/uf2fs-c" >&2 || fail "uf2fs reads Linux's usage differently"
grep -q "^user 2000 " "$TMP/uf2fs-c" || fail "Linux's new owner is missing"
TMP=$TMP_SAVE
log "$LABEL: quota usage identical both ways"
}

one_image android
one_image casefold -O casefold -C utf8
pass "quota usage identical both ways between uf2fs and Linux f2fs (-g android, and with casefold)"
