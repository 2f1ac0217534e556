#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What an untar costs per file under -o writeback_cache, counted rather than
# timed: tar's open(O_CREAT|O_EXCL), 10 KiB writes, utimensat and close of
# many small files. Each FUSE round trip and each daemon system call beyond
# the request and its reply is a context switch or a hypervisor exit, which
# is what an untar of small files spends its time on.
#   - FLUSH: uf2fs answers ENOSYS once and the kernel stops sending it (it
#     writes the dirty pages back at close either way).
#   - daemon system calls (strace -c of every thread): getrandom(2) for new
#     inodes' i_generation is batched, not one per file; the heap grows
#     in large steps (one malloc arena, 16 MiB top pad), not by an
#     mprotect(2) per allocation as each thread's own arena does.
# Then the files read back identical after a remount, and fsck is clean.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_fuse
need_f2fs_tools
need_uf2fs
need_cmd strace
tmpdir_init untar-roundtrips
IMG=$TMP/u.img MNT=$TMP/mnt SRC=$TMP/src
N=60

# The workload: N files of 1..30 KiB (tar's record-sized writes), mtimes set
# after the data as tar does, in two directories.
"$PY" - "$SRC" "$N" <<'EOF2' || fail "source tree"
import os, random, sys
top, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(12)
for i in range(n):
    d = os.path.join(top, "d%d" % (i % 2))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%03d" % i), "wb") as f:
        f.write(bytes(rnd.getrandbits(8) for _ in range(1024 * (1 + i % 30))))
    os.utime(os.path.join(d, "f%03d" % i), (1000000 + i, 1000000 + i))
EOF2
tar -cf "$TMP/src.tar" -C "$SRC" . || fail "tar -c"

step "untar under writeback_cache, every request logged"
mk_image "$IMG" 128M "" "" || fail "mkfs"
mount_uf2fs "$IMG" "$MNT" rw,writeback_cache,debug || fail "mount"
mkdir "$MNT/t"
tar -xf "$TMP/src.tar" -C "$MNT/t" || fail "tar -x"
umount_uf2fs "$MNT" || fail "unmount"
LOG=$(mount_log "$MNT")
count() { grep -c "opcode: $1 " "$LOG"; }
creates=$(count CREATE)
[ "$creates" -eq "$N" ] || fail "expected $N CREATE requests, log has $creates"
flushes=$(count FLUSH)
log "per $N files: $flushes FLUSH, $(count SETATTR) SETATTR, $(count GETXATTR) GETXATTR," \
	"$(count WRITE) WRITE, $(count LOOKUP) LOOKUP, $(count GETATTR) GETATTR"
[ "$flushes" -le 1 ] || fail "$flushes FLUSH requests for $N files: the kernel kept sending them"

step "daemon system calls during the untar (strace -c -f)"
mount_uf2fs "$IMG" "$MNT" rw,writeback_cache || fail "mount"
pid=${_MOUNT_PID[$MNT]}
strace -f -c -o "$TMP/strace.txt" -p "$pid" 2>"$TMP/strace.err" &
spid=$!
for ((i = 0; i < 100; i++)); do
	awk '/^TracerPid:/ { exit $2 == 0 }' "/proc/$pid/status" && break
	sleep 0.1
done
mkdir "$MNT/t2"
tar -xf "$TMP/src.tar" -C "$MNT/t2" || fail "tar -x (traced)"
kill -INT "$spid"
wait "$spid"
umount_uf2fs "$MNT" || fail "unmount"
calls() { awk -v s="$1" '$NF == s { print $4; f = 1 } END { if (!f) print 0 }' "$TMP/strace.txt"; }
grep -q "total" "$TMP/strace.txt" || { cat "$TMP/strace.err" >&2; fail "no strace summary"; }
log "daemon calls for $N files: $(calls read) read, $(calls writev) writev," \
	"$(calls pwritev) pwritev, $(calls getrandom) getrandom, $(calls mprotect) mprotect," \
	"$(calls brk) brk"
# one batch per worker thread that created a file, at most max_threads (10)
[ "$(calls getrandom)" -le 10 ] || fail "$(calls getrandom) getrandom calls for $N new inodes"
heap=$(($(calls mprotect) + $(calls brk)))
[ "$heap" -le $((N / 4)) ] || fail "$heap mprotect and brk calls for $N new files"

step "content and fsck"
fsck_clean "$IMG" || fail "fsck after the untar"
mount_uf2fs "$IMG" "$MNT" ro || fail "mount ro"
diff -r "$SRC" "$MNT/t" || fail "the untarred tree differs from its source"
diff -r "$SRC" "$MNT/t2" || fail "the traced untar differs from its source"
for i in 0 17 59; do
	want=$(stat -c %Y "$SRC/d$((i % 2))/f$(printf %03d $i)")
	got=$(stat -c %Y "$MNT/t/d$((i % 2))/f$(printf %03d $i)")
	[ "$want" = "$got" ] || fail "f$i: mtime $got, want $want"
done
umount_uf2fs "$MNT" || fail "unmount ro"
pass "$N files untarred with $flushes FLUSH"
