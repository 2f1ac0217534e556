# SPDX-License-Identifier: GPL-2.0
# Checks shared by the tests of zoned volumes (tests/integration/zoned.sh,
# zoned-cap.sh, tests/compat/zoned-cap-linux.sh). Source after common.sh.
#
#   zoned_check_stats MNT MIN     uf2fs stats of the mount: at least MIN write
#                                 requests into sequential zones, none refused
#                                 (off a pointer or past a capacity), zones
#                                 reset, sections collected by GC, no SSR
#   zoned_crash_round IMG MNT OPTS GH
#                                 mount, write 3 MB with fsync, kill -9 the
#                                 daemon; the image must need roll-forward, a
#                                 remount must read the file back and take a
#                                 write without refusal
# Zones of 8 MiB with 5 MiB capacity (one section of 4 segments each, so one
# segment a zone has no usable block):
#   zcap_tails_zero FILE NZONES   the bytes past every zone's capacity in the
#                                 zoned device's file are all zero
#   zcap_fsck DIR OPTS NZONES     Debian's fsck.f2fs -f on DIR/zoned-conv.img
#                                 (run in DIR: the super block names the files
#                                 relative to it) is clean but for the free
#                                 segment count: it cannot know the capacity on
#                                 files and counts the unusable segments that
#                                 the checkpoint (as Linux's) leaves out, so it
#                                 must find exactly NZONES more

zoned_check_stats() {
	local mnt=$1 min=$2 st zl zw refused resets gc
	st=$("$UF2FS" stats "$mnt") || fail "stats"
	zl=$(grep '  zoned:' <<<"$st") || { printf '%s\n' "$st"; fail "stats: no zoned line"; }
	log "$zl"
	read -r zw refused resets < <(sed -E 's/.* ([0-9]+) writes .* ([0-9]+) refused.* ([0-9]+) zones reset/\1 \2 \3/' <<<"$zl")
	gc=$(awk '$1 == "gc" { print $2 }' <<<"$st")
	log "gc: ${gc:-0} segments collected"
	[ "$refused" -eq 0 ] || fail "$refused writes refused (off a pointer or past the capacity)"
	[ "$zw" -gt "$min" ] || fail "only $zw write requests went into sequential zones"
	[ "$resets" -gt 0 ] || fail "no zone was reset"
	[ "${gc:-0}" -gt 0 ] || { printf '%s\n' "$st"; fail "no section was collected"; }
	grep -q 'clean (LFS).* 0 used (SSR' <<<"$st" || fail "SSR used on a zoned volume"
}

zoned_crash_round() {
	local img=$1 mnt=$2 opts=$3 gh=$4 pid
	mount_uf2fs "$img" "$mnt" "rw,$opts,checkpoint_interval=3600" || fail "mount for the crash"
	"$gh" fsyncgen "$mnt/after" 3000000 9 rand || fail "fsync'd write"
	pid=${_MOUNT_PID[$mnt]}
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	unset "_MOUNT_PID[$mnt]"
	fusermount3 -uz "$mnt" 2>/dev/null || true
	"$gh" gen "$TMP/after.ref" 3000000 9 rand
	"$UF2FS" info -o "$opts" "$img" | grep -q 'needs recovery: yes' || fail "no roll-forward data"
	mount_uf2fs "$img" "$mnt" "rw,$opts" || fail "mount after the crash"
	cmp "$mnt/after" "$TMP/after.ref" || fail "fsync'd file lost or changed"
	echo more >"$mnt/more"
	"$UF2FS" stats "$mnt" | grep -q ' 0 refused' || fail "a write after recovery was refused"
	umount_uf2fs "$mnt" || fail "unmount after the crash"
}

zcap_tails_zero() {
	"$PY" - "$1" "$2" <<'PY'
import sys
MiB = 1 << 20
with open(sys.argv[1], 'rb') as f:
    for z in range(int(sys.argv[2])):
        f.seek(z * 8 * MiB + 5 * MiB)
        if f.read(3 * MiB).strip(b'\0'):
            sys.exit('zone %d: data past its capacity' % z)
PY
}

zcap_fsck() {
	local dir=$1 opts=$2 nz=$3 out cp found
	out=$(cd "$dir" && "$FSCK_F2FS" -f --dry-run zoned-conv.img 2>&1) || true
	printf '%s\n' "$out" >"$dir/fsck.log"
	cp=$("$UF2FS" info -o "$opts" "$dir/zoned-conv.img" |
	     sed -nE 's/.*checkpoint says ([0-9]+)\).*/\1/p')
	found=$(sed -nE 's/^\[FSCK\] free segment_count matched with CP +\[Fail\] \[0x([0-9a-f]+)\]/\1/p' \
		<<<"$out")
	if ! grep -qE '^\[FSCK\] other corrupted bugs +\[Ok\.\.\]' <<<"$out" ||
	   grep -E '\[Fail\]|^\[ASSERT\]' <<<"$out" | grep -qv 'free segment_count' ||
	   [ -z "$found" ] || [ -z "$cp" ] || [ $((16#$found - cp)) -ne "$nz" ]; then
		grep -E '\[Fail\]|ASSERT|\[FSCK\]' "$dir/fsck.log" | head -20 >&2
		echo "zcap_fsck: checkpoint free segments '$cp', fsck counts 0x$found" >&2
		return 1
	fi
	log "fsck.f2fs -f: clean but the free segment count ($((16#$found)) = $cp + $nz past the capacity)"
}
