#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Images that are not a local raw file (lib/dev/nbd.c):
#
#   unix     nbdkit's file plugin over a Unix socket (nbd+unix:///?socket=):
#            a read-write FUSE mount copies a tree in, offline put/get/ls/info
#            (info --verify too) work on the URI, and `uf2fs umount` of a
#            daemon mount of it; the file is fsck clean and holds the tree
#   trim     nbdkit's log filter sees TRIM after a file is removed, FLUSH
#            at the checkpoints, and FUA on their closing blocks only
#   tls      nbds+unix:// to nbdkit --tls=require with a PSK given by -o
#            tls_psk_file=,tls_username=: offline cat and info, and a rw FUSE
#            mount that writes a file; refused without the key
#   tcp      nbdkit's memory plugin on 127.0.0.1 (nbd://127.0.0.1:PORT), loaded
#            with qemu-img: put, get, info, and a rw FUSE mount that writes a
#            file; the export copied back out is clean
#   ro       a read-only export (nbdkit -r) is refused for writes with a
#            message that says so, and still reads
#   qcow2    an overlay on a qcow2 backing file, through qemu-nbd: writes go
#            into the overlay, the backing file is unchanged, and
#            qemu-img convert of the overlay to raw is clean and has the data;
#            `uf2fs info --verify` starts qemu-nbd once (a counting wrapper on
#            PATH); without qemu-nbd on PATH the error names qemu-utils
#   qcow2-in-nbd  a qcow2 file (preallocation=metadata: an export has a fixed
#            size, a qcow2 grows) served by nbdkit, opened as the URI with -o
#            format=qcow2 (qemu-nbd as the export's client): without format=
#            the error names it; a rw daemon mount writes a file and `uf2fs
#            umount` checks the final checkpoint; the qcow2 converted to raw
#            is clean and has the file
#   kill     nbdkit killed mid-write under a rw mount: the writer gets EIO, the
#            mount's log says the server is lost, unmount does not hang; the
#            image is fsck clean after the next mount (its recovery) and
#            reads back everything written before the last checkpoint and
#            every MiB whose fsync returned
#   stall    nbdkit stopped (SIGSTOP) under a rw mount with nbd_timeout=3:
#            the create or fsync fails with EIO after about 3 s, not a hang;
#            clean after a remount
#   mute     a socket that accepts and never answers: the open fails after
#            nbd_timeout (2 s) naming the handshake, not a hang
#
#   KEEP_TMP=1 tests/integration/nbd.sh
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

need_fuse
need_f2fs_tools
need_uf2fs
need_cmd nbdkit qemu-nbd qemu-img "$PY"

tmpdir_init nbd
step() { echo; echo "=== $* (${SECONDS}s) ==="; }
NBDKITS=()
_nbd_cleanup() {
	local p
	for p in "${NBDKITS[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap '_rc=$?; set +e; (exit $_rc); _cleanup; _nbd_cleanup' EXIT

# start_nbdkit PIDVAR ARGS...: nbdkit in the background, its pid in PIDVAR.
start_nbdkit() {
	local var=$1 pidf=$TMP/nbdkit.$RANDOM.pid
	shift
	log "nbdkit $*"
	nbdkit -P "$pidf" "$@"
	for ((i = 0; i < 50; i++)); do [ -s "$pidf" ] && break; sleep 0.1; done
	[ -s "$pidf" ] || fail "nbdkit did not start"
	printf -v "$var" '%s' "$(cat "$pidf")"
	NBDKITS+=("${!var}")
}

# stop_nbdkit PID [SIGNAL]: stop it and wait until it has gone (and its socket).
stop_nbdkit() {
	kill "-${2:-TERM}" "$1" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	rm -f "$SOCK"
}

free_port() {
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

step "source tree and image"
SRC=$TMP/src
gen_tree 19 "$SRC" --small --no-special --quiet
head -c $((3 << 20)) /dev/urandom >"$SRC/big.bin"
IMG=$TMP/disk.img
mk_image "$IMG" 192M extra_attr,inode_checksum "" || fail "mkfs"

step "unix: nbdkit file plugin over a Unix socket, FUSE rw mount"
SOCK=$TMP/nbd.sock
start_nbdkit KIT -U "$SOCK" file "$IMG"
URI="nbd+unix:///?socket=$SOCK"
MNT=$TMP/mnt
mount_uf2fs "$URI" "$MNT" rw || fail "rw mount of $URI"
cp -a "$SRC/." "$MNT/"
umount_uf2fs "$MNT" || fail "unmount"
out=$("$UF2FS" info --verify "$URI")
grep -q "^Source: *NBD nbd+unix:///?socket=$SOCK" <<<"$out" || fail "info names no NBD source: $out"
grep -q "^Source: .*, flush, fua, " <<<"$out" || fail "info does not show the export's FLUSH and FUA: $out"
grep -q "^verify: an NBD export" <<<"$out" || fail "info --verify on a URI: $out"
echo "offline put" >"$TMP/put.txt"
"$UF2FS" put "$URI" "$TMP/put.txt" /put.txt || fail "put through NBD"
"$UF2FS" ls -l "$URI" / | grep -q "put.txt" || fail "ls through NBD does not show put.txt"
"$UF2FS" get "$URI" / "$TMP/out-unix" || fail "get through NBD"
cmp "$TMP/put.txt" "$TMP/out-unix/put.txt" || fail "put.txt differs"
rm "$TMP/out-unix/put.txt"
compare_tree "$SRC" "$TMP/out-unix" --no-owner --no-root --quiet || fail "tree differs (unix)"
log "uf2fs mount (daemon) and uf2fs umount of the URI"
"$UF2FS" mount "$URI" "$MNT" -o rw || fail "daemon mount of $URI"
echo "daemon" >"$MNT/daemon.txt"
"$UF2FS" umount "$MNT" || fail "uf2fs umount of an NBD mount (checks its final checkpoint)"
"$UF2FS" cat "$URI" /daemon.txt | grep -q "daemon" || fail "daemon.txt lost"
stop_nbdkit "$KIT"
fsck_clean "$IMG" || fail "image not clean after writes through nbd+unix"
"$UF2FS" get "$IMG" /big.bin "$TMP/big.local"
cmp "$SRC/big.bin" "$TMP/big.local" || fail "big.bin differs read locally"

step "ro: a read-only export refused for writes"
start_nbdkit KIT -r -U "$SOCK" file "$IMG"
run_limited 30 "$UF2FS" put "$URI" "$TMP/put.txt" /put2.txt
expect_clean_error "put on a read-only export" || fail "put on a read-only export"
grep -qi "read-only" <<<"$OUT" || fail "message does not say read-only: $OUT"
"$UF2FS" cat "$URI" /put.txt | grep -q "offline put" || fail "read-only export does not read"
stop_nbdkit "$KIT"

step "trim and flush reach the server (nbdkit's log filter)"
start_nbdkit KIT --filter=log -U "$SOCK" file "$IMG" logfile="$TMP/nbdkit.log"
head -c $((8 << 20)) /dev/urandom >"$TMP/trim.bin"
"$UF2FS" put "$URI" "$TMP/trim.bin" /trim.bin || fail "put trim.bin"
"$UF2FS" rm "$URI" /trim.bin || fail "rm trim.bin"
stop_nbdkit "$KIT"
grep -q "Trim " "$TMP/nbdkit.log" || fail "no TRIM after freeing 8 MiB"
grep -q "Flush " "$TMP/nbdkit.log" || fail "no FLUSH at the checkpoints"
# FUA: the checkpoint's closing block, and nothing outside the two packs
cp=$("$UF2FS" info "$IMG" | sed -n 's/.*areas (block) *cp \([0-9]*\), sit \([0-9]*\).*/\1 \2/p')
[ -n "$cp" ] || fail "info shows no cp area"
read -r cp_start cp_end <<<"$cp"
fua=$(sed -n 's/.* Write id=[0-9]* offset=\(0x[0-9a-f]*\) count=0x1000 fua=1 .*/\1/p' "$TMP/nbdkit.log")
[ -n "$fua" ] || fail "no FUA write (nbdkit's file plugin offers FUA)"
for o in $fua; do
	b=$((o / 4096))
	[ "$b" -ge "$cp_start" ] && [ "$b" -lt "$cp_end" ] || fail "FUA write at block $b, not in the checkpoint area"
done
grep -q "fua=1" <(grep -v "count=0x1000 fua=1" "$TMP/nbdkit.log" | grep " Write ") &&
	fail "a FUA write that is not one checkpoint block"
log "$(grep -c 'Trim ' "$TMP/nbdkit.log") TRIM, $(grep -c 'Flush ' "$TMP/nbdkit.log") FLUSH," \
	"$(wc -w <<<"$fua") FUA writes"

step "tls: nbds+unix with a pre-shared key passed through -o"
printf 'alice:%s\n' "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$TMP/psk"
chmod 600 "$TMP/psk"
start_nbdkit KIT --tls=require --tls-psk="$TMP/psk" -U "$SOCK" file "$IMG"
SURI="nbds+unix:///?socket=$SOCK"
"$UF2FS" cat -o "tls_psk_file=$TMP/psk,tls_username=alice" "$SURI" /put.txt |
	grep -q "offline put" || fail "cat over TLS"
"$UF2FS" info -o "tls_psk_file=$TMP/psk,tls_username=alice" "$SURI" |
	grep -q "^Source: *NBD nbds+unix.*(TLS)" || fail "info does not say TLS"
run_limited 30 "$UF2FS" ls "$SURI" /
expect_clean_error "nbds without a key" || fail "nbds without a key"
# a daemon mount: `uf2fs umount` opens the export again, with the same key
"$UF2FS" mount "$SURI" "$MNT" -o "rw,tls_psk_file=$TMP/psk,tls_username=alice" ||
	fail "rw FUSE mount over TLS"
echo "through a TLS mount" >"$MNT/tls.txt"
"$UF2FS" umount "$MNT" || fail "uf2fs umount of the TLS mount (checks its final checkpoint)"
"$UF2FS" cat -o "tls_psk_file=$TMP/psk,tls_username=alice" "$SURI" /tls.txt |
	grep -q "through a TLS mount" || fail "tls.txt lost"
stop_nbdkit "$KIT"

step "tcp: nbdkit memory plugin on 127.0.0.1"
PORT=$(free_port)
start_nbdkit KIT -i 127.0.0.1 -p "$PORT" memory 192M
TURI="nbd://127.0.0.1:$PORT"
qemu-img convert -n -f raw -O raw "$IMG" "$TURI" || fail "loading the memory export"
echo "over tcp" >"$TMP/tcp.txt"
"$UF2FS" put "$TURI" "$TMP/tcp.txt" /tcp.txt || fail "put over TCP"
"$UF2FS" info "$TURI" | grep -q "^Source: *NBD nbd://127.0.0.1:$PORT" || fail "info (tcp)"
"$UF2FS" cat "$TURI" /tcp.txt | grep -q "over tcp" || fail "cat over TCP"
mount_uf2fs "$TURI" "$MNT" rw || fail "rw FUSE mount over TCP"
cp "$SRC/big.bin" "$MNT/tcp-big.bin"
umount_uf2fs "$MNT" || fail "unmount of the TCP mount"
qemu-img convert -f raw -O raw "$TURI" "$TMP/tcp.img" || fail "copying the export out"
stop_nbdkit "$KIT"
fsck_clean "$TMP/tcp.img" || fail "memory export not clean"
"$UF2FS" cat "$TMP/tcp.img" /tcp.txt | grep -q "over tcp" || fail "tcp.txt not in the copy"
"$UF2FS" get "$TMP/tcp.img" /tcp-big.bin "$TMP/tcp-big.back"
cmp "$SRC/big.bin" "$TMP/tcp-big.back" || fail "the file written through the TCP mount differs"

step "qcow2: an overlay with a backing file, through qemu-nbd"
qemu-img convert -f raw -O qcow2 "$IMG" "$TMP/base.qcow2"
qemu-img create -q -f qcow2 -b "$TMP/base.qcow2" -F qcow2 "$TMP/over.qcow2"
BASE_SUM=$(image_sum "$TMP/base.qcow2")
mkdir -p "$TMP/q"
head -c $((1 << 20)) /dev/urandom >"$TMP/q/one.bin"
"$UF2FS" put "$TMP/over.qcow2" "$TMP/q" /q || fail "put into the qcow2 overlay"
out=$("$UF2FS" info "$TMP/over.qcow2")
grep -q "^Source: *qcow2 through [^ ]*qemu-nbd" <<<"$out" || fail "info names no qcow2: $out"
[ "$(image_sum "$TMP/base.qcow2")" = "$BASE_SUM" ] || fail "the backing file changed"
log "uf2fs info --verify opens the VM disk once: one qemu-nbd, with the malloc thresholds"
mkdir -p "$TMP/wrap"
printf '#!/bin/sh\necho "$* mmap=$MALLOC_MMAP_THRESHOLD_ trim=$MALLOC_TRIM_THRESHOLD_" >>"$QEMU_NBD_LOG"\nexec %s "$@"\n' \
	"$(command -v qemu-nbd)" >"$TMP/wrap/qemu-nbd"
chmod +x "$TMP/wrap/qemu-nbd"
QEMU_NBD_LOG=$TMP/qemu-nbd.starts PATH="$TMP/wrap:$PATH" "$UF2FS" info --verify \
	"$TMP/over.qcow2" >"$TMP/info-q.out" || fail "info --verify of the overlay"
grep -q "^Source: *qcow2 through $TMP/wrap/qemu-nbd" "$TMP/info-q.out" || fail "not the wrapper"
n=$(wc -l <"$TMP/qemu-nbd.starts")
[ "$n" = 1 ] || fail "uf2fs info started qemu-nbd $n times: $(cat "$TMP/qemu-nbd.starts")"
# without them qemu-nbd's 1 MiB buffers are mmapped afresh per request (lib/dev/nbd.c)
grep -q "mmap=33554432 trim=67108864$" "$TMP/qemu-nbd.starts" ||
	fail "qemu-nbd started without the malloc thresholds: $(cat "$TMP/qemu-nbd.starts")"
QEMU_NBD_LOG=$TMP/qemu-nbd.user MALLOC_TRIM_THRESHOLD_=1048576 PATH="$TMP/wrap:$PATH" \
	"$UF2FS" info "$TMP/over.qcow2" >/dev/null || fail "info with the user's malloc setting"
grep -q "mmap=33554432 trim=1048576$" "$TMP/qemu-nbd.user" ||
	fail "the user's MALLOC_TRIM_THRESHOLD_ was not kept: $(cat "$TMP/qemu-nbd.user")"
pgrep -f "qemu-nbd.*over.qcow2" && fail "qemu-nbd still running after uf2fs exited"
run_limited 30 "$UF2FS" ls -o format=raw "$TMP/over.qcow2"
expect_clean_error "format=raw on a qcow2" || fail "format=raw override not honoured"
OUT=$(PATH=/nonexistent "$UF2FS" ls "$TMP/over.qcow2" 2>&1) && fail "opened without qemu-nbd"
grep -q "needs qemu-nbd (Debian: qemu-utils)" <<<"$OUT" || fail "no qemu-nbd: $OUT"
qemu-img convert -f qcow2 -O raw "$TMP/over.qcow2" "$TMP/over.raw"
fsck_clean "$TMP/over.raw" || fail "converted overlay not clean"
"$UF2FS" get "$TMP/over.raw" /q/one.bin "$TMP/one.back"
cmp "$TMP/q/one.bin" "$TMP/one.back" || fail "the overlay lost the data"

step "qcow2-in-nbd: a qcow2 stored in an NBD export, -o format=qcow2"
# an export cannot grow: the qcow2 gets its clusters up front
qemu-img convert -f raw -O qcow2 -o preallocation=metadata "$IMG" "$TMP/exp.qcow2"
start_nbdkit KIT -U "$SOCK" file "$TMP/exp.qcow2"
run_limited 30 "$UF2FS" ls "$URI" /
expect_clean_error "a qcow2 export without format=" || fail "qcow2 export without format="
grep -q "qcow2 disk image.*-o format=qcow2" <<<"$OUT" || fail "no format= hint: $OUT"
"$UF2FS" info -o format=qcow2 "$URI" |
	grep -q "^Source: *qcow2 through .*qemu-nbd.* from NBD $URI" || fail "info (qcow2 in NBD)"
"$UF2FS" mount "$URI" "$MNT" -o rw,format=qcow2 || fail "rw mount of the qcow2 in the export"
cp "$SRC/big.bin" "$MNT/in-export.bin"
"$UF2FS" umount "$MNT" || fail "uf2fs umount of the qcow2 in the export"
pgrep -f "qemu-nbd.*$SOCK" && fail "qemu-nbd still running after the unmount"
stop_nbdkit "$KIT"
qemu-img check -q "$TMP/exp.qcow2" || fail "the qcow2 in the export is damaged"
qemu-img convert -f qcow2 -O raw "$TMP/exp.qcow2" "$TMP/exp.raw"
fsck_clean "$TMP/exp.raw" || fail "the qcow2 written through NBD is not clean"
"$UF2FS" get "$TMP/exp.raw" /in-export.bin "$TMP/in-export.back"
cmp "$SRC/big.bin" "$TMP/in-export.back" || fail "in-export.bin differs"

step "kill: nbdkit killed mid-write"
cp "$IMG" "$TMP/kill.img"
start_nbdkit KIT -U "$SOCK" file "$TMP/kill.img"
mount_uf2fs "$URI" "$MNT" rw,nbd_timeout=5,checkpoint_interval=1 || fail "rw mount (kill)"
mkdir "$MNT/before"
cp "$SRC/big.bin" "$MNT/before/"
sync -f "$MNT/before/big.bin"
sleep 2	# a checkpoint (interval 1 s) covers before/
# 1 MiB writes, each fsync'd, over the first 48 MiB again and again for 30 s
# at most: a write or fsync after the kill must fail with EIO.
"$PY" - "$MNT/stream" "$TMP/buf.bin" "$TMP/synced" >"$TMP/writer.out" 2>&1 <<'PYEOF' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
buf = os.urandom(1 << 20)
with open(sys.argv[2], "wb") as f:
    f.write(buf)
end, i = time.time() + 30, 0
try:
    while time.time() < end:
        os.pwrite(fd, buf, (i % 48) << 20)
        os.fsync(fd)
        i += 1
except OSError as e:
    print("writer: %s after %d MiB" % (os.strerror(e.errno), i))
    with open(sys.argv[3], "w") as f:
        f.write("%d\n" % min(i, 48))
    sys.exit(0 if e.errno == 5 else 2)
print("writer: no error in 30 s")
sys.exit(1)
PYEOF
WR=$!
sleep 1
stop_nbdkit "$KIT" KILL
log "nbdkit killed"
T0=$SECONDS
rc=0; wait "$WR" || rc=$?
cat "$TMP/writer.out"
[ "$rc" = 0 ] || fail "the writer did not get EIO (exit $rc)"
umount_uf2fs "$MNT" || true	# the final checkpoint fails: the daemon exits non-zero
(( SECONDS - T0 < 40 )) || fail "EIO and unmount took $((SECONDS - T0)) s"
grep -q "NBD server lost" "$(mount_log "$MNT")" || fail "the mount's log does not say why"
"$FSCK_F2FS" -f --dry-run "$TMP/kill.img" >"$TMP/kill.fsck-before.log" 2>&1 || true
log "fsck before recovery: $(grep -cE '\[Fail\]|ASSERT' "$TMP/kill.fsck-before.log") problems"
start_nbdkit KIT -U "$SOCK" file "$TMP/kill.img"
mount_uf2fs "$URI" "$MNT" rw || fail "remount after the server came back"
cmp "$SRC/big.bin" "$MNT/before/big.bin" || fail "data of the last checkpoint lost"
# every MiB an fsync returned for is there (the checkpoint or roll-forward)
n=$(cat "$TMP/synced")
log "checking the $n MiB of stream that fsync covered"
for ((k = 0; k < n; k++)); do
	cmp -n $((1 << 20)) "$TMP/buf.bin" <(dd if="$MNT/stream" bs=1M skip=$k count=1 \
		status=none) || fail "stream MiB $k, fsync'd before the kill, lost"
done
umount_uf2fs "$MNT" || fail "unmount after recovery"
stop_nbdkit "$KIT"
fsck_clean "$TMP/kill.img" || fail "not clean after the recovery mount"

step "stall: a stopped server, nbd_timeout=3"
cp "$IMG" "$TMP/stall.img"
start_nbdkit KIT -U "$SOCK" file "$TMP/stall.img"
mount_uf2fs "$URI" "$MNT" rw,nbd_timeout=3 || fail "rw mount (stall)"
kill -STOP "$KIT"
T0=$SECONDS
rc=0
"$PY" -c 'import os, sys
try:
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"x" * 65536)
    os.fsync(fd)
except OSError as e:
    sys.exit(0 if e.errno == 5 else 2)
sys.exit(1)' "$MNT/stalled" || rc=$?
T1=$((SECONDS - T0))
kill -CONT "$KIT"
[ "$rc" = 0 ] || fail "create+fsync on a stopped server did not fail with EIO (exit $rc)"
(( T1 >= 2 && T1 < 15 )) || fail "EIO after ${T1} s with nbd_timeout=3"
log "EIO after ${T1} s"
umount_uf2fs "$MNT" || true
grep -q "no reply in 3 s" "$(mount_log "$MNT")" || fail "the mount's log does not name the timeout"
mount_uf2fs "$URI" "$MNT" rw || fail "remount after the stall"
umount_uf2fs "$MNT" || fail "unmount after the stall"
stop_nbdkit "$KIT"
fsck_clean "$TMP/stall.img" || fail "not clean after the stall and remount"

step "mute: a server that accepts and never answers, nbd_timeout=2"
MUTE=$TMP/mute.sock
"$PY" -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(4)
time.sleep(60)' "$MUTE" &
MUTE_PID=$!
NBDKITS+=("$MUTE_PID")
for ((i = 0; i < 100; i++)); do [ -S "$MUTE" ] && break; sleep 0.1; done
T0=$SECONDS
run_limited 30 "$UF2FS" ls -o nbd_timeout=2 "nbd+unix:///?socket=$MUTE" /
expect_clean_error "open of a mute server" || fail "open of a mute server"
grep -q "no answer to the handshake in 2 s" <<<"$OUT" || fail "message: $OUT"
(( SECONDS - T0 < 10 )) || fail "the open took $((SECONDS - T0)) s with nbd_timeout=2"
kill "$MUTE_PID"

pass "NBD over Unix, TLS and TCP, read-only exports, qcow2 overlay, qcow2 in an export, killed, stopped and mute servers"
