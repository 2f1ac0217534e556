#!/bin/bash
# A lazy unmount while a file is open for writing: the writer keeps working,
# the daemon serves it until the last close, then checkpoints and exits; the
# data is on the image and fsck.f2fs is clean.
set -u
. "$(dirname "$0")/../lib/common.sh"
tmpdir_init lazy
IMG=$TMP/lazy.img MNT=$TMP/mnt
truncate -s 256M "$IMG"
mkfs.f2fs -q -f "$IMG" >/dev/null
mkdir -p "$MNT"
"$UF2FS" mount "$IMG" "$MNT" -o rw || fail "mount"
python3 - "$MNT/held" "$TMP/go" <<'EOF2' &
import os, sys, time
f = open(sys.argv[1], "wb")
open(sys.argv[2], "w").close()
time.sleep(1.5)
f.write(b"L" * 500000)
f.close()
EOF2
writer=$!
for _ in $(seq 50); do [ -e "$TMP/go" ] && break; sleep 0.1; done
fusermount3 -uz "$MNT" || fail "lazy unmount"
wait "$writer" || fail "the writer failed after the lazy unmount"
for _ in $(seq 100); do pgrep -f "uf2fs mount $IMG" >/dev/null || break; sleep 0.1; done
pgrep -f "uf2fs mount $IMG" >/dev/null && fail "the daemon did not exit after the last close"
fsck_clean "$IMG" || fail "fsck after a lazy unmount"
[ "$("$UF2FS" cat "$IMG" /held | tr -d L | wc -c)" = 0 ] &&
	[ "$("$UF2FS" cat "$IMG" /held | wc -c)" = 500000 ] || fail "data written after the lazy unmount is lost"
pass "lazy unmount"
