#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bad and corrupt images. Every case must end in a clear error that names the
# structure (and, where there is one, its block address or number), a non-zero
# exit below 128 (no crash), within a timeout (no hang), and the image must be
# left untouched. Where the damage is confined to one file's metadata, the
# mount must work, other files must read correctly and reading that file must
# fail with EIO ("Input/output error") or, as Linux f2fs does for corrupt
# metadata, EUCLEAN ("Structure needs cleaning"); never return garbage.
#
# The block to corrupt is found with tests/lib/f2fsimg.py, which parses the
# super block, checkpoint and NAT independently of the library.
#
# Wording is not fixed: the checks look for the structure's name, case-
# insensitively, and the number in decimal or 0x-hex. <!-- verify: final
# messages, and the backup-super-block notice -->
#
#   CASES="sb-primary nat" tests/integration/bad-input.sh
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

need_fuse
need_f2fs_tools
need_uf2fs

ALL_CASES="missing empty directory random truncated sb-both sb-primary cp-current cp-both
nat nat-block inode inode-csum dentry cluster"
CASES=${CASES:-$ALL_CASES}
T=30   # seconds any single command may take
# What reading a file with corrupt metadata must fail with. EIO, or EUCLEAN
# ("Structure needs cleaning", EFSCORRUPTED), which is what Linux f2fs returns
# for corrupt metadata. STRICT_EIO=1 accepts EIO only.
if [ "${STRICT_EIO:-0}" = 1 ]; then
	ERRNO_RE='Input/output error'
else
	ERRNO_RE='Input/output error|Structure needs cleaning'
fi

tmpdir_init bad-input
SRC=$TMP/src
step "source tree and base images"
mkdir -p "$SRC/victim/bigdir"
"$PY" - "$SRC" <<'EOF'
import os, random, sys
d = sys.argv[1]
r = random.Random(11)
for name, n in (("victim/ok", 200000), ("victim/file-nat", 65536), ("victim/file-inode", 70000),
                ("victim/small", 100)):
    open(os.path.join(d, name), "wb").write(r.randbytes(n))
for i in range(400):   # several dentry blocks, not inline
    open(os.path.join(d, "victim/bigdir/entry-%03d-%s" % (i, "n" * (i % 30))), "w").close()
text = b"".join(b"compressible line %d\n" % i for i in range(100000))
open(os.path.join(d, "victim/text.txt"), "wb").write(text)
EOF
BASE=$TMP/base.f2fs
mk_image "$BASE" 128M none "$SRC" -P || fail "base image"
BASE_CSUM=$TMP/base-csum.f2fs
mk_image "$BASE_CSUM" 128M extra_attr,inode_checksum "$SRC" -P || fail "checksum image"
OK_SUM=$(sha256sum <"$SRC/victim/ok" | cut -d' ' -f1)

failures=()
bad() { failures+=("$case: $*"); echo "  -> FAIL: $*"; }
good() { echo "  -> ok: $*"; }

mnt=$TMP/mnt
mkdir -p "$mnt"

# A mount attempt in daemon mode must fail before it daemonizes.
try_mount_fails() {
	local img=$1 re=$2
	shift 2
	run_limited $T "$UF2FS" mount "$img" "$mnt" -o ro
	if _is_mounted "$mnt"; then
		_MOUNTS+=("$mnt")
		fusermount3 -u "$mnt" || fusermount3 -uz "$mnt" || true
		bad "uf2fs mount succeeded"
		return
	fi
	if expect_clean_error "uf2fs mount" && mentions "$OUT" "$re" "$@"; then
		good "mount: $(printf '%s' "$OUT" | head -2 | tr '\n' ' ')"
	else
		bad "uf2fs mount: exit $RC, message: $(printf '%s' "$OUT" | head -3 | tr '\n' ' ')"
	fi
}

# `uf2fs info` on a bad image must fail the same way.
try_info_fails() {
	local img=$1 re=$2
	shift 2
	run_limited $T "$UF2FS" info "$img"
	if expect_clean_error "uf2fs info" && mentions "$OUT" "$re" "$@"; then
		good "info: $(printf '%s' "$OUT" | head -2 | tr '\n' ' ')"
	else
		bad "uf2fs info: exit $RC, message: $(printf '%s' "$OUT" | head -3 | tr '\n' ' ')"
	fi
}

# Mount must work, the control file must read right, and reading FILE (or
# listing it, for a directory) must fail with EIO. Then the CLI on the image
# must fail naming the structure.
try_file_eio() {
	local img=$1 path=$2 re=$3
	shift 3
	if ! mount_uf2fs "$img" "$mnt" ro; then
		bad "mount failed, but only $path is damaged"
		return
	fi
	local got
	got=$(timeout $T cat "$mnt/victim/ok" | sha256sum | cut -d' ' -f1) || true
	if [ "$got" = "$OK_SUM" ]; then
		good "an undamaged file reads correctly"
	else
		bad "an undamaged file reads wrong"
	fi
	local err rc=0
	if [ -d "$SRC$path" ]; then
		err=$(timeout $T ls -la "$mnt$path" 2>&1 >/dev/null) || rc=$?
	else
		err=$(timeout $T cat "$mnt$path" 2>&1 >/dev/null) || rc=$?
	fi
	if [ "$rc" -eq 0 ]; then
		bad "reading $path through the mount succeeded"
	elif [ "$rc" -eq 124 ]; then
		bad "reading $path through the mount hung"
	elif printf '%s' "$err" | grep -qE "$ERRNO_RE"; then
		good "error through the mount: $err"
	else
		bad "reading $path through the mount: '$err' (want $ERRNO_RE)"
	fi
	# The daemon should have said why (informational).
	grep -iE "$re" "$(mount_log "$mnt")" | head -2 | sed 's/^/  daemon: /' || true
	umount_uf2fs "$mnt" || bad "unmount / daemon exit status"
	if [ -d "$SRC$path" ]; then
		run_limited $T "$UF2FS" ls "$img" "$path"
	else
		run_limited $T "$UF2FS" cat "$img" "$path"
	fi
	# The path itself ("file-nat", "file-inode") must not satisfy the check.
	if expect_clean_error "uf2fs cat/ls $path" && mentions "${OUT//$path/<path>}" "$re" "$@"; then
		good "cli: $(printf '%s' "$OUT" | grep -v '^$' | tail -1)"
	else
		bad "uf2fs cat/ls $path: exit $RC, message: $(printf '%s' "$OUT" | tail -3 | tr '\n' ' ')"
	fi
}

# Mount must work and the content must be right (recovery from a redundant
# copy); with a REGEX, the mount's messages must match it.
try_mount_ok() {
	local img=$1 re=${2:-}
	if ! mount_uf2fs "$img" "$mnt" ro; then
		bad "mount failed; a redundant copy is intact"
		return
	fi
	if [ -n "$re" ]; then
		if grep -qiE "$re" "$(mount_log "$mnt")"; then
			good "mount says: $(grep -iE "$re" "$(mount_log "$mnt")" | head -1)"
		else
			bad "the mount does not say /$re/: $(head -3 "$(mount_log "$mnt")")"
		fi
	fi
	if compare_tree "$SRC" "$mnt" --sload --no-root --quiet; then
		good "content intact"
	else
		bad "content differs"
	fi
	umount_uf2fs "$mnt" || bad "unmount / daemon exit status"
}

json() { "$PY" -c "import json,sys; d=json.load(sys.stdin); print(d.get('$1', ''))"; }

for case in $CASES; do
	step "$case"
	img=$TMP/$case.f2fs
	rm -f "$img"
	sum=
	case $case in
	missing)
		try_info_fails "$TMP/does-not-exist.img" 'no such file'
		try_mount_fails "$TMP/does-not-exist.img" 'no such file'
		continue;;
	directory)
		mkdir -p "$TMP/a-directory"
		try_info_fails "$TMP/a-directory" 'director|super ?block|read'
		try_mount_fails "$TMP/a-directory" 'director|super ?block|read'
		continue;;
	empty)
		: >"$img"
		sum=$(image_sum "$img")
		try_info_fails "$img" 'super ?block|empty|small|size|short'
		try_mount_fails "$img" 'super ?block|empty|small|size|short';;
	random)
		"$PY" -c "import random,sys; sys.stdout.buffer.write(random.Random(5).randbytes(4<<20))" >"$img"
		sum=$(image_sum "$img")
		try_info_fails "$img" 'super ?block|magic|not an? f2fs'
		try_mount_fails "$img" 'super ?block|magic|not an? f2fs';;
	truncated)
		head -c 65536 "$BASE" >"$img"
		sum=$(image_sum "$img")
		try_info_fails "$img" 'super ?block|checkpoint|size|small|truncat|short|beyond|end of|past'
		try_mount_fails "$img" 'super ?block|checkpoint|size|small|truncat|short|beyond|end of|past';;
	sb-both)
		cp --sparse=always "$BASE" "$img"
		f2fsimg corrupt "$img" sb-both >/dev/null
		sum=$(image_sum "$img")
		try_info_fails "$img" 'super ?block'
		try_mount_fails "$img" 'super ?block';;
	sb-primary)
		cp --sparse=always "$BASE" "$img"
		f2fsimg corrupt "$img" sb-primary >/dev/null
		sum=$(image_sum "$img")
		run_limited $T "$UF2FS" info "$img"
		if [ "$RC" -ne 0 ]; then
			bad "uf2fs info failed with a valid backup super block: $(printf '%s' "$OUT" | head -3)"
		elif printf '%s\n' "$OUT" | grep -qiE 'backup|second|super ?block ?#?1|block 1|copy 1'; then
			good "info says the backup was used: $(printf '%s\n' "$OUT" | grep -iE 'backup|second|super ?block ?#?1|block 1|copy 1' | head -1)"
		else
			bad "uf2fs info does not say which super block it used"
		fi
		try_mount_ok "$img" 'backup|second|super ?block ?#?1|block 1|copy 1'
		[ "$sum" = "$(image_sum "$img")" ] || bad "the image changed (read-only must not repair)"
		continue;;
	cp-current)
		cp --sparse=always "$BASE" "$img"
		f2fsimg corrupt "$img" cp-current
		sum=$(image_sum "$img")
		try_mount_ok "$img";;
	cp-both)
		cp --sparse=always "$BASE" "$img"
		r=$(f2fsimg corrupt "$img" cp-both)
		echo "$r"
		sum=$(image_sum "$img")
		p1=$(echo "$r" | "$PY" -c "import json,sys; print(*json.load(sys.stdin)['blocks'])")
		# shellcheck disable=SC2086
		try_info_fails "$img" 'checkpoint|\bcp\b' $p1
		# shellcheck disable=SC2086
		try_mount_fails "$img" 'checkpoint|\bcp\b' $p1;;
	nat)
		cp --sparse=always "$BASE" "$img"
		r=$(f2fsimg corrupt "$img" nat /victim/file-nat)
		echo "$r"
		sum=$(image_sum "$img")
		try_file_eio "$img" /victim/file-nat 'NAT|node|inode' \
			"$(echo "$r" | json block)" "$(echo "$r" | json nid)" "$(echo "$r" | json bad_addr)";;
	nat-block)
		# A whole NAT block of garbage: it holds the root's entry too, so the
		# mount may fail; if it works, the victim must give EIO.
		cp --sparse=always "$BASE" "$img"
		r=$(f2fsimg corrupt "$img" nat-block /victim/file-nat)
		echo "$r"
		sum=$(image_sum "$img")
		nb=$(echo "$r" | json block)
		run_limited $T "$UF2FS" mount "$img" "$mnt" -o ro
		if _is_mounted "$mnt"; then
			_MOUNTS+=("$mnt")
			rc=0
			err=$(timeout $T cat "$mnt/victim/file-nat" 2>&1 >/dev/null) || rc=$?
			fusermount3 -u "$mnt" || fusermount3 -uz "$mnt" || true
			if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && printf '%s' "$err" | grep -qE "$ERRNO_RE"; then
				good "mounted; the victim gives an error: $err"
			else
				bad "mounted with a garbage NAT block and read the victim: rc $rc '$err'"
			fi
		elif expect_clean_error "uf2fs mount" && mentions "$OUT" 'NAT|node|inode|root' "$nb" 3; then
			good "mount refused: $(printf '%s' "$OUT" | head -1)"
		else
			bad "uf2fs mount: exit $RC: $(printf '%s' "$OUT" | head -3 | tr '\n' ' ')"
		fi;;
	inode|inode-csum)
		src=$BASE
		[ "$case" = inode-csum ] && src=$BASE_CSUM
		cp --sparse=always "$src" "$img"
		r=$(f2fsimg corrupt "$img" inode /victim/file-inode)
		echo "$r"
		sum=$(image_sum "$img")
		try_file_eio "$img" /victim/file-inode 'inode|node' \
			"$(echo "$r" | json block)" "$(echo "$r" | json ino)";;
	dentry)
		cp --sparse=always "$BASE" "$img"
		r=$(f2fsimg corrupt "$img" dentry /victim/bigdir)
		echo "$r"
		sum=$(image_sum "$img")
		try_file_eio "$img" /victim/bigdir 'dentr|director' \
			"$(echo "$r" | json block)" "$(echo "$r" | json ino)";;
	cluster)
		sl=
		if sload_can_compress "$SLOAD_F2FS"; then sl=$SLOAD_F2FS
		elif tools=$(f2fs_tools_built) && sload_can_compress "$tools/sload.f2fs"; then
			sl=$tools/sload.f2fs
		fi
		if [ -z "$sl" ]; then
			echo "  (not tested: no sload.f2fs with lz4)"
			continue
		fi
		SLOAD_F2FS=$sl mk_image "$img" 128M extra_attr,compression "$SRC" -P -c -a lz4 -L 2 ||
			{ bad "compressed image build"; continue; }
		r=$(f2fsimg corrupt "$img" cluster /victim/text.txt)
		echo "$r"
		sum=$(image_sum "$img")
		try_file_eio "$img" /victim/text.txt 'compress|cluster' \
			"$(echo "$r" | json block)" "$(echo "$r" | json ino)";;
	*)
		fail "unknown case $case";;
	esac
	# Whatever happened, nothing may have been written to the image.
	if [ -n "$sum" ] && [ "$sum" != "$(image_sum "$img")" ]; then
		bad "the image changed"
	fi
done

step "summary"
if [ ${#failures[@]} -gt 0 ]; then
	printf 'FAILED: %s\n' "${failures[@]}"
	exit 1
fi
pass "all bad-input cases"
