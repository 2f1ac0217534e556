#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Images made by mkfs.f2fs + sload.f2fs (f2fs-tools 1.15) with many -O feature
# sets, read back through a uf2fs mount and through `uf2fs get`, compared with
# the source tree. Also `uf2fs info`, `uf2fs ls -l` and `uf2fs cat` spot checks.
# The image must be bit-for-bit unchanged afterwards and pass fsck.f2fs -f.
#
# What is compared is what sload.f2fs 1.15 promises (see compare-tree --sload):
# content, sizes, types, permission bits, symlink targets, hard links, mtime in
# whole seconds (a u32), uid/gid (16 bits, with -P), security.selinux from -s.
# It copies no other xattr, no fifo/socket/device node, and no atime/ctime.
#
#   FEATURE_SETS="none;extra_attr" tests/integration/sload-features.sh
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

need_fuse
need_f2fs_tools
need_uf2fs
need_cmd "$PY" sha256sum

# Every -O that mkfs.f2fs 1.15 accepts, alone where it can be, and together.
# extra_attr is required by project_quota, inode_checksum, flexible_inline_xattr,
# inode_crtime and compression.
DEFAULT_SETS="none
extra_attr
extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime
extra_attr,project_quota,inode_checksum
extra_attr,compression
sb_checksum
lost_found
quota
encrypt
verity
casefold
ro
extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,project_quota,quota,sb_checksum,lost_found,compression,verity"
if [ -n "${FEATURE_SETS:-}" ]; then
	SETS=$(printf '%s\n' "$FEATURE_SETS" | tr ';' '\n')
else
	SETS=$DEFAULT_SETS
fi

tmpdir_init sload-features
SRC=$TMP/src
step "generating the source tree"
gen_tree 1 "$SRC" --full --selinux "$TMP/file_contexts"

owner_opts=()
[ "$(id -u)" = 0 ] || owner_opts=(--no-owner)

# sload 1.15 corrupts images with flexible_inline_xattr (see
# tests/lib/build-f2fs-tools.sh); those sets use the fixed build.
FIXED_SLOAD=
if tools=$(f2fs_tools_built); then
	FIXED_SLOAD=$tools/sload.f2fs
fi

failures=()
skipped=()
n=0
while IFS= read -r feat; do
	[ -n "$feat" ] || continue
	n=$((n + 1))
	step "[$n] mkfs.f2fs -O $feat"
	img=$TMP/img-$n.f2fs
	sload=$SLOAD_F2FS
	case ,$feat, in *,flexible_inline_xattr,*)
		if [ -z "$FIXED_SLOAD" ]; then
			echo "skipping: Debian's sload.f2fs 1.15 breaks flexible_inline_xattr images" \
				"and the fixed build is not available"
			skipped+=("$feat")
			continue
		fi
		sload=$FIXED_SLOAD;;
	esac
	if ! SLOAD_F2FS=$sload mk_image "$img" 512M "$feat" "$SRC" -P -s "$TMP/file_contexts"; then
		failures+=("$feat: image build")
		continue
	fi
	before=$(image_sum "$img")

	cmp_opts=(--sload --no-root "${owner_opts[@]}")
	case ,$feat, in *,lost_found,*) cmp_opts+=(--ignore lost+found);; esac

	# uf2fs info
	run_limited 60 "$UF2FS" info "$img"
	if [ "$RC" -ne 0 ]; then
		printf '%s\n' "$OUT" | tail -20
		failures+=("$feat: uf2fs info exit $RC")
	else
		head -40 <<<"$OUT"
		for f in ${feat//,/ }; do
			[ "$f" = none ] && continue
			# <!-- verify: exact feature wording in `uf2fs info` -->
			grep -qiE "${f//_/[_ ]}" <<<"$OUT" ||
				echo "note: uf2fs info does not mention feature '$f'"
		done
	fi

	# Through the mount.
	mnt=$TMP/mnt-$n
	if mount_uf2fs "$img" "$mnt" ro; then
		if ! compare_tree "$SRC" "$mnt" "${cmp_opts[@]}"; then
			failures+=("$feat: mount differs from source")
			# A second opinion: the independent Python reader.
			rm -rf "$TMP/ref-$n"
			if f2fsimg extract "$img" "$TMP/ref-$n" 2>/dev/null &&
			   compare_tree "$SRC" "$TMP/ref-$n" "${cmp_opts[@]}" --quiet; then
				echo "(tests/lib/f2fsimg.py reads this image as the source: the difference is uf2fs's)"
			fi
		fi
		# Odd-offset reads of the larger files.
		"$PY" "$LIB/readcheck.py" "$SRC" "$mnt" --min-size 60000 --ops 24 ||
			failures+=("$feat: readcheck through the mount")
		umount_uf2fs "$mnt" || failures+=("$feat: unmount / daemon exit status")
	else
		failures+=("$feat: mount")
	fi

	# uf2fs get: extract everything. <!-- verify: `get IMG / DEST` extracts the
	# root's contents into DEST, creating DEST -->
	dest=$TMP/get-$n
	run_limited 300 "$UF2FS" get "$img" / "$dest"
	if [ "$RC" -ne 0 ]; then
		printf '%s\n' "$OUT" | tail -20
		failures+=("$feat: uf2fs get exit $RC")
	elif ! compare_tree "$SRC" "$dest" "${cmp_opts[@]}"; then
		failures+=("$feat: uf2fs get differs from source")
	fi
	rm -rf "$dest"

	# Spot checks of ls -l and cat on the unmounted image.
	run_limited 60 "$UF2FS" ls -l "$img" /files
	# Here-strings, not printf pipes: under pipefail, grep -q leaving early
	# kills printf with SIGPIPE once $OUT outgrows one pipe write.
	if [ "$RC" -ne 0 ] || ! grep -F 'size-65537' <<<"$OUT" | sed 's/size-65537//g' |
	   grep -qE '(^|[^0-9])65537([^0-9]|$)'; then
		head -20 <<<"$OUT"
		failures+=("$feat: uf2fs ls -l /files (exit $RC) lacks 'size-65537' with its size")
	fi
	run_limited 60 "$UF2FS" ls "$img" /dirs/names
	long=$(printf 'L%.0s' $(seq 255))
	if [ "$RC" -ne 0 ] || ! grep -qF "$long" <<<"$OUT" ||
	   ! grep -qF "日本語のファイル" <<<"$OUT"; then
		failures+=("$feat: uf2fs ls /dirs/names (exit $RC) lacks the 255-byte or UTF-8 name")
	fi
	run_limited 60 "$UF2FS" ls "$img" /dirs/big
	cnt=$(printf '%s\n' "$OUT" | grep -c '^\(.* \)\?e[0-9]\{4\}-' || true)
	if [ "$RC" -ne 0 ] || [ "$cnt" -ne 3000 ]; then
		failures+=("$feat: uf2fs ls /dirs/big (exit $RC) shows $cnt of 3000 entries")
	fi
	for f in files/size-1048577 files/size-3452 files/size-0 "dirs/names/café" links/d2/hard-b; do
		want=$(sha256sum <"$SRC/$f" | cut -d' ' -f1)
		got=$(timeout 60 "$UF2FS" cat "$img" "/$f" | sha256sum | cut -d' ' -f1) || true
		[ "$want" = "$got" ] || failures+=("$feat: uf2fs cat /$f differs")
	done
	if timeout 60 "$UF2FS" cat "$img" /no/such/file >/dev/null 2>"$TMP/err"; then
		failures+=("$feat: uf2fs cat of a missing path succeeded")
	elif ! grep -qi 'no such file' "$TMP/err"; then
		failures+=("$feat: uf2fs cat of a missing path: '$(head -1 "$TMP/err")'")
	fi

	# Read-only means read-only.
	after=$(image_sum "$img")
	[ "$before" = "$after" ] || failures+=("$feat: the image changed")
	fsck_clean "$img" || failures+=("$feat: fsck")
	rm -f "$img"
done <<<"$SETS"

step "summary"
if [ ${#failures[@]} -gt 0 ]; then
	printf 'FAILED: %s\n' "${failures[@]}"
	exit 1
fi
[ ${#skipped[@]} -gt 0 ] && printf 'not tested: %s\n' "${skipped[@]}"
pass "$n feature sets: mount, get, ls, cat, fsck"
