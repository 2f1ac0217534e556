# SPDX-License-Identifier: GPL-2.0
# tests/compat/compat-lib.sh — what the QEMU compat tests share, sourced
# first thing (after their `set` line):
#     . "$(dirname "$0")/compat-lib.sh"
# It moves to the repository's top, sources tests/lib/common.sh and
# tests/compat/qemu.sh, skips when QEMU or the guest kernel is missing, and
# needs FUSE, f2fs-tools and the uf2fs binary. Then, for the guest scripts
# and their output:
#   guest_funcs            shell text defining, in the guest,
#                            sums DIR       a "=== SUMS" block: sha256sum of
#                                           every file under DIR, sorted
#                            dmesg_clean [RE]  fails when the kernel logged an
#                                           f2fs error, corruption or
#                                           inconsistency (or RE)
#   guest_sums             the SUMS block of a console text on stdin
#   guest_console_ok FILE  no "GUEST:" complaint in a console log
#   guest_dmesg_ok FILE    no f2fs / fs-verity / fscrypt complaint in a dmesg
#   compat_tree DIR        the 40-file tree (nested directories, sizes from
#                          empty to 1 MiB, two symlinks) two tests write
#   compat_readback IN SRC the expected sha256 list and symlinks of SRC into
#                          IN, and prints a guest script that mounts /dev/vda
#                          read-only and checks them all
# Not executable: tests/run.sh runs only the tests.

TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
cd "$TOP"
. tests/lib/common.sh
. tests/compat/qemu.sh

if ! why=$(qemu_missing); then skip "$why"; fi
need_fuse
need_f2fs_tools
need_uf2fs

guest_funcs() {
	cat <<'EOF'
sums() {
	echo "=== SUMS"
	(cd "$1" && find . -type f | sort | xargs sha256sum)
	echo "=== END"
}
dmesg_clean() {
	! dmesg | grep -i "f2fs.*\(error\|corrupt\|inconsistent${1:+\|$1}\)"
}
EOF
}

guest_sums() { sed -n '/^=== SUMS/,/^=== END/p' | sed '1d;$d'; }

guest_console_ok() {
	grep -q '^GUEST:' "$1" || return 0
	grep '^GUEST:' "$1" >&2
	return 1
}

guest_dmesg_ok() {
	local bad
	bad=$(grep -iE '(f2fs|verity).*(error|inconsist|corrupt|fsck|invalid|bad |mismatch|fail)|fscrypt.*(error|fail)' \
		"$1" || true)
	[ -z "$bad" ] && return 0
	printf '%s\n' "$bad" >&2
	return 1
}

compat_tree() {
	"$PY" - "$1" <<'EOF'
import os, random, sys
root, r = sys.argv[1], random.Random(12)
sizes = [0, 1, 100, 4095, 4096, 4097, 20000, 65536, 300000, 1 << 20]
for i in range(40):
    d = os.path.join(root, "d%d" % (i % 4), "e%d" % (i % 3))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%d" % i), "wb") as f:
        f.write(r.randbytes(sizes[i % len(sizes)]))
os.symlink("d0/e0/f0", os.path.join(root, "link0"))
os.symlink("../../d1", os.path.join(root, "d0", "e1", "up"))
EOF
}

compat_readback() {
	local in=$1 src=$2
	mkdir -p "$in"
	(cd "$src" && find . -type f | LC_ALL=C sort | sed 's|^\./||' | xargs sha256sum |
		sed 's|  |  /mnt/|') >"$in/expect"
	(cd "$src" && find . -type l | LC_ALL=C sort |
		while read -r l; do echo "${l#./} $(readlink "$l")"; done) >"$in/links"
	guest_funcs
	cat <<'EOF'
mount -t f2fs -o ro /dev/vda /mnt || exit 1
sha256sum -c -s /in/expect || { sha256sum -c /in/expect | grep -v ': OK'; exit 1; }
while read -r l t; do
	[ "$(readlink "/mnt/$l")" = "$t" ] || { echo "symlink $l: $(readlink "/mnt/$l")"; exit 1; }
done </in/links
n=$(find /mnt -type f | wc -l)
[ "$n" = "$(wc -l </in/expect)" ] || { echo "$n files, expected $(wc -l </in/expect)"; exit 1; }
dmesg_clean || exit 1
echo "linux: every file and symlink as written"
umount /mnt
EOF
}
