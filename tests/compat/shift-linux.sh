#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Compat: fallocate COLLAPSE_RANGE and INSERT_RANGE against the real Linux f2fs.
#
# The kernel's FUSE does not pass these modes on, so uf2fs applies them
# through the library: tests/stress/preload.c under the guest helper `gh`
# (one mount and unmount per command). The same recipe runs on the host's
# own filesystem (REF), which must support both modes (ext4 and XFS do).
#   1. shift.sh through uf2fs; fsck.f2fs clean; `uf2fs get` and the guest
#      kernel both read every file as REF has it (size and sha256).
#   2. the guest kernel shifts the files once more (linux.sh: its own
#      f2fs_collapse_range/f2fs_insert_range on the layout uf2fs left), as
#      does REF; fsck.f2fs clean; uf2fs reads REF's content. No kernel f2fs
#      complaint in dmesg.
# Env: BUILD, UF2FS, TOP (from make check); KEEP_TMP=1.
set -euo pipefail
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$TOP"
. tests/lib/common.sh
. tests/compat/qemu.sh

if ! why=$(qemu_missing); then skip "$why"; fi
need_f2fs_tools
need_uf2fs
need_cmd gcc cc pkg-config

tmpdir_init shift-linux
mkdir -p "$TMP/gh" "$TMP/in" "$TMP/ghlib"
gcc -O2 -Wall -o "$TMP/gh/gh" tests/compat/guest-helper.c || fail "cannot build guest-helper.c"
SO=$(bash tests/lib/build-preload.sh "$BUILD") || fail "cannot build the preload shim"
IMG=$TMP/shift.img
# gh with the shim: /uf2fs/... is the image
cat > "$TMP/ghlib/gh" <<EOF
#!/bin/sh
LD_PRELOAD=$SO UF2FS_PRELOAD_IMAGE=$IMG exec "$TMP/gh/gh" "\$@"
EOF
chmod +x "$TMP/ghlib/gh"

cat > "$TMP/in/shift.sh" <<'EOF'
# shift.sh ROOT: files, then collapses and inserts. POSIX sh, gh on the PATH.
set -e
R=$1
gh gen "$R/inline" 3000 1 rand
gh insert "$R/inline" 0 8192
gh gen "$R/small" 100000 2 rand
gh collapse "$R/small" 0 8192
gh collapse "$R/small" 20480 12288
gh insert "$R/small" 4096 40960
gh gen "$R/big" 9000000 3 rand
gh collapse "$R/big" 4096 3002368
gh insert "$R/big" 3604480 16777216
gh collapse "$R/big" 40960 409600
gh gen "$R/sparse" 5000 4 rand
gh gen "$R/sparse" 12288 5 rand 5000000
gh fallocate "$R/sparse" 2000000 100000
gh fallocate "$R/sparse" 8000000 400000 keep
gh collapse "$R/sparse" 1048576 1048576
gh insert "$R/sparse" 8192 2097152
gh gen "$R/tail" 50001 6 rand
gh insert "$R/tail" 49152 4096
gh collapse "$R/tail" 0 4096
EOF

cat > "$TMP/in/linux.sh" <<'EOF'
set -e
R=$1
gh collapse "$R/big" 8192 1048576
gh insert "$R/small" 0 4096
gh insert "$R/sparse" 4096 4096
gh collapse "$R/tail" 4096 4096
gh insert "$R/inline" 4096 4096
EOF

# sums DIR: "name size sha256" of the regular files, sorted
sums() {
	local f
	for f in "$1"/*; do
		printf '%s %s %s\n' "${f##*/}" "$(stat -c %s "$f")" "$("$TMP/gh/gh" sha256 "$f")"
	done | sort
}

# same WHAT EXPECTED GOT
same() {
	if diff -u "$2" "$3" >&2; then
		log "$1: same"
	else
		fail "$1: differs"
	fi
}

step "the host reference"
REF=$TMP/ref
mkdir -p "$REF"
if ! PATH=$TMP/gh:$PATH sh "$TMP/in/shift.sh" "$REF" 2>"$TMP/ref.err"; then
	cat "$TMP/ref.err" >&2
	skip "the host filesystem under $TMP cannot collapse or insert ranges"
fi
sums "$REF" > "$TMP/ref1.sums"

step "uf2fs shifts"
mk_image "$IMG" 512M extra_attr,inode_checksum,flexible_inline_xattr "" || fail "mkfs"
PATH=$TMP/ghlib:$PATH sh "$TMP/in/shift.sh" /uf2fs || fail "shift.sh through the library"
fsck_clean "$IMG" || fail "fsck.f2fs after uf2fs shifted"
"$UF2FS" get "$IMG" / "$TMP/get1" >"$TMP/get1.log" 2>&1 || fail "uf2fs get"
sums "$TMP/get1" > "$TMP/uf2fs1.sums"
same "uf2fs reads its shifts as the reference has them" "$TMP/ref1.sums" "$TMP/uf2fs1.sums"

step "Linux reads, then shifts again"
cat > "$TMP/guest.sh" <<'EOF'
rc=0
mkdir -p /mnt/a /tmp/out/m1 /tmp/out/m2
mount -t f2fs /dev/vda /mnt/a || { echo "GUEST: mount failed"; exit 1; }
cd /mnt/a
for f in *; do echo "$f $(wc -c < "$f") $(gh sha256 "$f")"; done > /tmp/out/linux1.sums
sh /in/linux.sh /mnt/a || { echo "GUEST: linux.sh failed"; rc=1; }
for f in *; do echo "$f $(wc -c < "$f") $(gh sha256 "$f")"; done > /tmp/out/linux2.sums
cd /
umount /mnt/a || { echo "GUEST: umount failed"; rc=1; }
dmesg > /tmp/out/dmesg
tar cf - -C /tmp/out . | dd of=/dev/vdb bs=65536 conv=fsync 2>/dev/null
exit $rc
EOF
QEMU_IN=$TMP/in qemu_run "$IMG" "$TMP/guest.sh" "$TMP/guest.out" 300 > "$TMP/guest.console" ||
	{ tail -30 "$TMP/guest.console" >&2; fail "guest run failed"; }
mkdir -p "$TMP/guest.d"
tar xf "$TMP/guest.out" -C "$TMP/guest.d" || fail "no output from the guest"
bad=$(grep -iE 'f2fs.*(error|inconsist|corrupt|fsck|invalid|bad |mismatch|fail)' \
	"$TMP/guest.d/dmesg" || true)
[ -z "$bad" ] || { printf '%s\n' "$bad" | head -20 >&2; fail "kernel f2fs messages"; }
sort "$TMP/guest.d/linux1.sums" > "$TMP/linux1.sums"
same "Linux reads uf2fs's shifts as the reference has them" "$TMP/ref1.sums" "$TMP/linux1.sums"
PATH=$TMP/gh:$PATH sh "$TMP/in/linux.sh" "$REF" || fail "linux.sh on the host reference"
sums "$REF" > "$TMP/ref2.sums"
sort "$TMP/guest.d/linux2.sums" > "$TMP/linux2.sums"
same "Linux's shifts on uf2fs's layout = the reference" "$TMP/ref2.sums" "$TMP/linux2.sums"
fsck_clean "$IMG" || fail "fsck.f2fs after Linux shifted"
"$UF2FS" get "$IMG" / "$TMP/get2" >"$TMP/get2.log" 2>&1 || fail "uf2fs get after Linux"
sums "$TMP/get2" > "$TMP/uf2fs2.sums"
same "uf2fs reads Linux's shifts as the reference has them" "$TMP/ref2.sums" "$TMP/uf2fs2.sums"
pass "collapse and insert: uf2fs <-> Linux f2fs"
