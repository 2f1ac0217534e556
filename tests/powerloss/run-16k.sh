#!/bin/bash
# The power-loss runner (unit/test_powerloss, sampled cut points) on 16 KiB-block
# images: every image the runner makes goes through F2FS_DEV_MKFS with
# -b 16384 (grown to 320 MiB, about the smallest such image with every
# feature set the scenarios use) and every check through F2FS_DEV_FSCK. Both
# must come from f2fs-tools' development branch (Debian's 1.15 neither makes
# nor checks 16 KiB blocks), built outside the repository; without them this
# skips. Not in `make check` (it takes minutes): run it by hand.
#
#   F2FS_DEV_MKFS=/path/mkfs.f2fs F2FS_DEV_FSCK=/path/fsck.f2fs tests/powerloss/run-16k.sh
#   UF2FS_POWERLOSS_SCENARIO=gc UF2FS_POWERLOSS_POINTS=6 ... (passed to the runner)
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
bin=$BUILD/tests/test_powerloss
if [ -z "${F2FS_DEV_MKFS:-}" ] || [ -z "${F2FS_DEV_FSCK:-}" ]; then
	echo "SKIP: F2FS_DEV_MKFS and F2FS_DEV_FSCK (f2fs-tools' development branch) not given"
	exit 77
fi
[ -x "$bin" ] || { echo "SKIP: $bin is not built (make tests)"; exit 77; }
wrap=$(mktemp -d "${TMPDIR:-/tmp}/uf2fs-pl16k.XXXXXX")
trap 'rm -rf "$wrap"' EXIT
cat >"$wrap/mkfs.f2fs" <<EOF
#!/bin/bash
img=\${@: -1}
[ "\$(stat -c %s "\$img" 2>/dev/null || echo 0)" -lt \$((320 << 20)) ] && truncate -s 320M "\$img"
exec "$F2FS_DEV_MKFS" -b 16384 "\$@"
EOF
cat >"$wrap/fsck.f2fs" <<EOF
#!/bin/bash
exec "$F2FS_DEV_FSCK" "\$@"
EOF
chmod +x "$wrap/mkfs.f2fs" "$wrap/fsck.f2fs"
PATH=$wrap:$PATH UF2FS_POWERLOSS_POINTS=${UF2FS_POWERLOSS_POINTS:-6} "$bin"
