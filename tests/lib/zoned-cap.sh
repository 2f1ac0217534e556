# SPDX-License-Identifier: GPL-2.0
# Checks shared by the tests of zoned volumes whose zones hold less than their
# size (tests/integration/zoned-cap.sh, tests/compat/zoned-cap-linux.sh):
# 8 MiB zones of 5 MiB capacity, one section of 4 segments each, so one
# segment a zone has no usable block. Source after common.sh.
#
#   zcap_tails_zero FILE NZONES   the bytes past every zone's capacity in the
#                                 zoned device's file are all zero
#   zcap_fsck DIR OPTS NZONES     Debian's fsck.f2fs -f on DIR/zoned-conv.img
#                                 (run in DIR: the super block names the files
#                                 relative to it) is clean but for the free
#                                 segment count: it cannot know the capacity on
#                                 files and counts the unusable segments that
#                                 the checkpoint (as Linux's) leaves out, so it
#                                 must find exactly NZONES more

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
	     sed -nE 's/.*checkpoint says ([0-9]+)\)/\1/p')
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
