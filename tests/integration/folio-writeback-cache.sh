#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Drop-behind under -o writeback_cache: the kernel collects a streaming
# write in its page cache and sends it back as 1 MiB WRITE requests that
# start anywhere (after any short one, none is on uf2fs's 1 MiB folio grid)
# and arrive out of order from several worker threads. Every folio those
# requests make must be written whole and dropped, so after the stream the
# folio cache is nearly empty and nothing was read back from the device.
# Before the fix, folios aligned down to before each request read their
# head from the device, stayed partly dirty, and filled cache_size.
#
# Runs twice: with write-through (the default: these whole-block requests
# skip folios altogether) and with write_through=off, which sends them all
# through the folio path this test was written for.
#
# Asserts counters of `uf2fs stats`, and the daemon's peak RSS (VmHWM) with
# a wide margin: 88-90 MB before the fix, 26 MB after, 48 MiB allowed; not
# for a sanitizer build (shadow memory), nor when the daemon's pid is unknown.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

need_fuse
need_f2fs_tools
need_uf2fs
need_cmd dd sha256sum

tmpdir_init folio-writeback-cache
IMG=$TMP/wbc.img
MNT=$TMP/mnt
MIB=256

head -c $((MIB << 20)) /dev/urandom > "$TMP/src"
summary=
for wt in write_through=on write_through=off; do
	step "[$wt] image, writeback_cache mount with cache_size=64M"
	mk_image "$IMG" 1G "" ""
	mount_uf2fs "$IMG" "$MNT" rw,writeback_cache,cache_size=64M,$wt || fail "[$wt] mount"

	step "[$wt] stream $MIB MiB with dd bs=1M conv=fsync"
	dd if="$TMP/src" of="$MNT/big" bs=1M conv=fsync status=none || fail "[$wt] dd"
	run_limited 20 "$UF2FS" stats "$MNT"
	[ "$RC" -eq 0 ] || fail "[$wt] uf2fs stats exit $RC"
	printf '%s\n' "$OUT" | sed -n '/^cache/,/^mapping/p;/requests/p'
	pid=${_MOUNT_PID[$MNT]:-}
	hwm=
	[ -n "$pid" ] && hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$pid/status" 2>/dev/null)
	log "daemon VmHWM: ${hwm:-n/a} kB"

	cached=$(printf '%s\n' "$OUT" | awk '$1 == "size" { print int($2) }')
	read_mib=$(printf '%s\n' "$OUT" | awk '$1 == "read" && $2 == "requests" { print int($4) }')
	lru=$(printf '%s\n' "$OUT" | awk '$1 == "evictions" { print $2 }')
	[ -n "$cached" ] && [ -n "$read_mib" ] && [ -n "$lru" ] || fail "[$wt] stats format: $OUT"
	# The margins are wide: before the fix, most of cache_size stayed cached,
	# tens of MiB were read back and the LRU evicted dozens of folios.
	[ "$cached" -le 4 ] || fail "[$wt] $cached MiB still cached after the fsync'd stream"
	[ "$read_mib" -le 4 ] || fail "[$wt] $read_mib MiB read from the device for a new file"
	[ "$lru" -le 16 ] || fail "[$wt] $lru LRU evictions: written folios were kept until evicted"
	if [ -n "$hwm" ] && ! grep -aqE '__(a|t|m)san_init' "$UF2FS"; then
		[ "$hwm" -le $((48 << 10)) ] || fail "[$wt] daemon peak RSS $hwm kB for a 64 MiB cache"
	fi

	want=$(sha256sum < "$TMP/src")
	umount_uf2fs "$MNT" || fail "[$wt] unmount"
	fsck_clean "$IMG" || fail "[$wt] fsck"
	mount_uf2fs "$IMG" "$MNT" ro || fail "[$wt] read-only remount"
	[ "$(sha256sum < "$MNT/big")" = "$want" ] || fail "[$wt] content differs after remount"
	umount_uf2fs "$MNT" || fail "[$wt] unmount (ro)"
	summary="$summary [$wt] $cached MiB cached, $read_mib MiB read, $lru LRU evictions;"
done
pass "writeback_cache stream:$summary"
