#!/bin/bash
# Self-test of the compat harness's checking half, without QEMU or uf2fs: the
# guest helper (built for the host) writes the manifest of a host tree, then
# verify-tree.py must accept that tree and must report each of a list of
# deliberate changes to it. If this fails, kernel-images-read.sh proves nothing.
#
# Env (from `make check`): BUILD, TOP. Exit 0 pass, 77 skip, else fail.
set -u
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$TOP" || exit 1
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$TOP/$BUILD;; esac
C=$TOP/tests/compat
for t in gcc python3; do command -v $t >/dev/null || { echo "FAIL: $t not installed"; exit 1; }; done
mkdir -p "$BUILD" || exit 1
WORK=$(mktemp -d "$BUILD/compat-selftest.XXXXXX") && [ -d "$WORK" ] || { echo "FAIL: mktemp"; exit 1; }
trap 'rm -rf "$WORK"' EXIT
GH=$WORK/gh
gcc -O2 -Wall -o "$GH" "$C/guest-helper.c" || { echo "FAIL: cannot build guest-helper.c"; exit 1; }
VERIFY="python3 $C/verify-tree.py"
ROOT=0; [ "$(id -u)" = 0 ] && ROOT=1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

T=$WORK/tree
mkdir -p "$T/d/sub" "$T/names" "$T/empty"
$GH gen "$T/small" 100 1 text
$GH gen "$T/d/big" 3000000 2 rand
$GH gen "$T/sparse" 4096 3 rand 50000000        # a hole, then data
$GH gen "$T/hl-a" 5000 4 rand
ln "$T/hl-a" "$T/d/hl-b"
$GH gen "$T/hl-c" 5000 4 rand                   # same content, another inode
ln -s small "$T/link"
ln -s "$(printf 'x%.0s' $(seq 1 300))" "$T/d/longlink"
mkfifo "$T/fifo"
$GH mksock "$T/sock"
$GH gen "$T/names/$(printf 'tab\there')" 1 5 text
$GH gen "$T/names/back\\slash" 1 6 text
$GH gen "$T/names/héllo wörld ✓" 1 7 text
$GH setxattr "$T/small" user.a hello
$GH setxattr "$T/small" user.bin hex:00ff10
$GH setxattr "$T/d" user.dir "on a dir"
if [ $ROOT = 1 ]; then
	mknod "$T/chr" c 1 3
	mknod "$T/blk" b 259 70000
	chown 1000:2000 "$T/d/big"
	$GH setxattr "$T/small" trusted.t value
fi
chmod 4755 "$T/small"
$GH settimes "$T" 1600000000
$GH utime "$T/d/big" -1 500
$GH manifest "$T" "$WORK/m" "$WORK/x" "$WORK/i" || { echo "FAIL: gh manifest"; exit 1; }

# The helper's sha256 against coreutils.
want=$(sha256sum < "$T/d/big" | cut -d' ' -f1)
grep -q "$want" "$WORK/m" || fail "gh manifest: sha256 of d/big differs from sha256sum ($want)"
[ "$($GH sha256 "$T/sparse")" = "$(sha256sum < "$T/sparse" | cut -d' ' -f1)" ] ||
	fail "gh sha256 of a sparse file differs from sha256sum"

$VERIFY "$WORK/m" "$WORK/x" "$T" > "$WORK/out" || { fail "the unchanged tree:"; cat "$WORK/out"; }
$VERIFY "$WORK/m" "$WORK/x" --manifest "$WORK/m" "$WORK/x" > "$WORK/out" ||
	{ fail "a manifest against itself:"; cat "$WORK/out"; }
cp -a "$T" "$WORK/copy"
$VERIFY --extract "$WORK/m" "$WORK/x" "$WORK/copy" > "$WORK/out" ||
	{ fail "a cp -a copy (--extract):"; cat "$WORK/out"; }

# Each change, and a line verify-tree must print for it (a grep -E pattern).
changes=(
	"chmod 0700 \$T/small|^small: mode: expected 4755, got 0700"
	"echo x >> \$T/d/big|^d/big: size: .*|^d/big: data:"
	"$GH utime \$T/hl-c 123 0|^hl-c: mtime: expected"
	"$GH utime \$T/link 1600000000 7|^link: nsec: expected"
	"python3 -c 'import os,sys; os.setxattr(sys.argv[1], \"user.new\", b\"1\")' \$T/small|^small: xattr user.new unexpected"
	"python3 -c 'import os,sys; os.setxattr(sys.argv[1], \"user.a\", b\"bye\")' \$T/small|^small: xattr user.a: expected 68656c6c6f, got 627965"
	"rm \$T/d/hl-b && cp -p \$T/hl-a \$T/d/hl-b|^hard links: .*hl-a.*share one inode|nlink"
	"rm \$T/hl-c && ln \$T/hl-a \$T/hl-c|share an inode but should not|nlink"
	"rm \$T/fifo|^fifo: missing \\(fifo\\)"
	"ln -sfn other \$T/link|^link: data: expected small, got other"
	"mkdir \$T/new-dir|^new-dir: unexpected \\(dir\\)"
	"rm \$T/names/tab*|^names/tab\\\\there: missing"
	"$GH gen \$T/sparse 1 9 rand 0|^sparse: data:"
	"rm -rf \$T/empty && $GH gen \$T/empty 0 1 text|^empty: type: expected dir, got file"
)
[ $ROOT = 1 ] && changes+=(
	"chown 1001 \$T/d/big|^d/big: uid: expected 1000, got 1001"
	"rm \$T/blk && mknod \$T/blk b 259 70001|^blk: rdev: expected 259:70000, got 259:70001"
)
for c in "${changes[@]}"; do
	cmd=${c%%|*} pat=${c#*|}
	rm -rf "$WORK/t2"; cp -a "$T" "$WORK/t2"
	(T=$WORK/t2; eval "$cmd") || { fail "could not apply: $cmd"; continue; }
	if $VERIFY "$WORK/m" "$WORK/x" "$WORK/t2" > "$WORK/out" 2>&1; then
		fail "not detected: $cmd"
	elif ! grep -qE "$pat" "$WORK/out"; then
		fail "detected, but not as /$pat/: $cmd"; sed 's/^/    /' "$WORK/out"
	fi
done
echo "verify-tree selftest: ${#changes[@]} changes, $fails failure(s)"
[ $fails = 0 ]
