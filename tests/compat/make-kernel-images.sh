#!/bin/bash
# tests/compat/make-kernel-images.sh — f2fs images written only by Linux f2fs.
#
#   bash tests/compat/make-kernel-images.sh OUTDIR     build into OUTDIR
#   bash tests/compat/make-kernel-images.sh            build into (or reuse) the
#        cache $BUILD/compat-cache/images/KEY and print that directory last
#
# KEY hashes this script, qemu.sh, guest-helper.c, the kernel version and the
# mkfs.f2fs version, so a change to any of them makes a new set.
#
# For every image the host runs mkfs.f2fs (f2fs-tools) with a feature set, then
# the guest kernel mounts it, writes a generated tree (deterministic: contents
# come from seeded generators, times are set explicitly), unmounts, mounts it
# again read-only and writes the manifest of what it reads back:
#   NAME.img        the image (512 MiB, sparse)
#   NAME.manifest   one line per path; format in guest-helper.c and verify-tree.py
#   NAME.xattrs     path, xattr name, hex value
#   NAME.info       regular files: ino, st_blocks, compressed blocks, fiemap
#                   ("inline" or the extent count) as the kernel reports them
#   NAME.guest.log  what the guest printed, with the kernel log
# fsync-cut.img is different: the guest checkpoints a base tree, then creates,
# appends, overwrites and truncates files with fsync and no checkpoint, and cuts
# the power. Its manifest is the state that roll-forward recovery must bring
# back ("*" where recovery is free to differ, e.g. directory mtimes). A second
# boot checks on two copies that (a) mounting with norecovery does not show
# that state and (b) a normal mount, which recovers, shows it exactly:
#   fsync-cut.norecovery.manifest, fsync-cut.recovered.manifest (+ .xattrs).
# images.tsv lists every image with its mkfs features and mount options.

set -euo pipefail
_mk_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$_mk_dir/qemu.sh"

MK_SIZE=512M
MK_UUID=5eed0f2f-0000-4000-8000-000000000001
MK_TIME=1600000000
TMO=${MK_TIMEOUT:-400}

mk_key() {
	{ cat "$_mk_dir/make-kernel-images.sh" "$_mk_dir/qemu.sh" "$_mk_dir/guest-helper.c"
	  qemu_kernel; mkfs.f2fs -V 2>&1; } | sha256sum | cut -c1-16
}

log() { echo "make-kernel-images: $*" >&2; }

# ---------------------------------------------------------------- guest code
# Shared by every guest script: helpers, and the trees.
GUEST_LIB=$(cat <<'GUESTEOF'
set -e
fail() { echo "GUEST-FAIL: $*"; exit 1; }
phase() { echo "[$(cut -d' ' -f1 /proc/uptime)s] $*"; }
rep() { # rep STRING N: STRING repeated N times
	awk -v s="$1" -v n="$2" 'BEGIN { r = ""; for (i = 0; i < n; i++) r = r s; printf "%s", r }'
}
cpcalls() { sed -n 's/.*CP calls: *\([0-9]*\).*/\1/p' /sys/kernel/debug/f2fs/status | head -1; }
mkdir -p /sys/kernel/debug; mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
mkdir -p /tmp/out

# The general tree: every kind of inode and the on-disk layouts around them.
tree_common() {
	T=$1 VARIANT=$2
	phase "tree_common $VARIANT"
	cd "$T"
	mkdir small dirs links special xattr names deep sparse big prealloc perms times flags

	# Regular files around the inline-data limit (3488 bytes with the default
	# 200-byte inline xattr area; less with extra_attr or a bigger xattr area).
	for s in 0 1 100 1000 3000 3400 3436 3437 3452 3453 3488 3489 4095 4096 4097 8192 10000; do
		gh gen small/s$s $s $s text
	done
	gh gen small/shrunk 100000 5 rand; truncate -s 10 small/shrunk
	gh gen small/grown 100 6 text; gh gen small/grown 5000 7 text 100

	phase dirs
	# Directories: empty, inline dentries, just past inline, multi-level hash.
	mkdir dirs/empty dirs/three dirs/d150 dirs/d300 dirs/d5000 dirs/shrunk
	for i in 1 2 3; do gh gen dirs/three/f$i $i $i text; done
	gh mkfiles dirs/d150 150 1000
	gh mkfiles dirs/d300 300 2000
	gh mkfiles dirs/d5000 5000 3000
	gh mkfiles dirs/shrunk 400 4000
	rm dirs/shrunk/e000* dirs/shrunk/e001* dirs/shrunk/e002*
	mkdir -p dirs/nest/a/x dirs/nest/b dirs/nest/c

	phase links
	# Symbolic links: inline and not, dangling, to a directory, at the limits.
	ln -s s100 small/link-rel
	ln -s ../small/s100 links/short
	ln -s /nonexistent/dangling links/dangling
	ln -s ../dirs links/to-dir
	ln -s "$(rep 'long/' 680)" links/long3400
	ln -s "$(rep 'long/' 800)" links/long4000
	ln -s "$(rep 'x' 4095)" links/long4095
	ln -s "ziel-→-目標" links/utf8
	# Hard links: a file in three directories, a hard-linked symlink and fifo.
	gh gen links/hl-a 5000 21 rand
	ln links/hl-a links/hl-b
	ln links/hl-a dirs/three/hl-c
	ln links/short links/short-hardlink

	# Special files.
	mkfifo special/fifo
	ln special/fifo special/fifo-link
	mknod special/null c 1 3
	mknod special/sda1 b 8 1
	mknod special/bigchr c 511 1048575
	mknod special/bigblk b 259 70000
	gh mksock special/sock

	# Extended attributes: inline, spilling into the xattr node, all the
	# namespaces, empty and long names, on directories and symlinks; ACLs.
	gh gen xattr/small-inline 10 31 text
	gh setxattr xattr/small-inline user.a 1
	gh setxattr xattr/small-inline user.b hello
	gh setxattr xattr/small-inline user.empty ""
	gh setxattr xattr/small-inline trusted.t trusted-value
	gh setxattr xattr/small-inline security.s sec
	gh gen xattr/spill 100 32 text
	for i in 1 2 3; do gh setxattr xattr/spill user.big$i gen:1000:$i; done
	gh setxattr xattr/spill trusted.big gen:300:8
	gh setxattr xattr/spill security.big gen:600:9
	gh gen xattr/longname 1 33 text
	gh setxattr xattr/longname "user.$(rep n 250)" "long name"
	gh setxattr xattr/longname user.binary hex:00ff7f8000010203
	mkdir xattr/dir
	gh setxattr xattr/dir user.dirattr "on a directory"
	gh setxattr links/short trusted.onlink "on a symlink"
	gh setxattr special/fifo trusted.onfifo "on a fifo"
	gh gen xattr/acl-file 10 34 text
	gh acl xattr/acl-file access
	mkdir xattr/acl-dir
	gh acl xattr/acl-dir default
	gh acl xattr/acl-dir access
	gh gen xattr/acl-dir/inherited 5 35 text
	mkdir xattr/acl-dir/subdir

	# Names: the 255-byte limit in ASCII and UTF-8, odd bytes.
	gh gen "names/$(rep n 255)" 10 41 text
	gh gen "names/$(rep é 127)x" 10 42 text
	gh gen "names/héllo wörld ✓ 日本語" 10 43 text
	gh gen "names/$(printf 'tab\there')" 10 44 text
	gh gen 'names/back\slash' 10 45 text
	gh gen names/.hidden 10 46 text
	gh gen names/-dash 10 47 text
	mkdir "names/$(rep d 255)"

	# A deep path (40 levels, ~1.5 KiB).
	p=deep
	for i in $(seq 1 40); do p=$p/level-$i-abcdefghijklmnopqrstuvwxyz; done
	mkdir -p "$p"; gh gen "$p/leaf" 100 51 text

	phase sparse
	# Sparse files: holes in direct, indirect and double indirect ranges.
	gh gen sparse/6g 65536 61 rand 0
	gh gen sparse/6g 4096 62 rand 1073741824
	gh gen sparse/6g 102400 63 rand 4294979641
	gh gen sparse/6g 1 64 rand 6442450943
	gh gen sparse/dind 8192 65 rand 9663676416
	for i in $(seq 0 15); do gh gen sparse/comb 4096 $((66 + i)) rand $((i * 65536)); done
	truncate -s 100M sparse/empty-100m

	# Bigger files.
	gh gen big/rand-5m 5242995 71 rand
	gh gen big/text-3m 3145728 72 text

	# Preallocation (NEW_ADDR blocks), beyond EOF, punched holes.
	gh fallocate prealloc/falloc-1m 0 1048576
	gh gen prealloc/keep 10000 81 rand; gh fallocate prealloc/keep 0 1048576 keep
	gh gen prealloc/punched 262144 82 rand; gh punch prealloc/punched 65536 65536
	gh fallocate prealloc/partial 0 1048576; gh gen prealloc/partial 5000 83 rand 300000

	# Owners and modes (chown first: it clears set-id bits).
	for m in 0000 0444 0600 0777 4755 2755 6755 1755; do gh gen perms/m$m 10 9$m text; done
	gh gen perms/u1000 10 91 text; chown 1000:1000 perms/u1000
	gh gen perms/nobody 10 92 text; chown 65534:65534 perms/nobody
	gh gen perms/bigid 10 93 text; chown 4000000000:123456 perms/bigid
	mkdir perms/owned; chown 1234:5678 perms/owned; chmod 0750 perms/owned
	mkdir perms/sticky; chmod 1777 perms/sticky
	chown 4242:4343 links/short
	for m in 0000 0444 0600 0777 4755 2755 6755 1755; do chmod $m perms/m$m; done

	for t in epoch0 neg y2038 far; do gh gen times/$t 10 95 text; done
	for f in immutable append nodump noatime; do gh gen flags/$f 1000 96 text; done
	mkdir flags/nodump-dir

	if [ "$VARIANT" = extra ]; then
		mkdir verity
		gh gen verity/file 100000 97 rand
		gh gen verity/small 100 98 text
	fi

	phase times
	# Times: everything deterministic, then the edge cases, then flags.
	cd /
	gh settimes "$T" $MK_TIME
	gh utime "$T/times/epoch0" 0 0
	gh utime "$T/times/neg" -1 500
	gh utime "$T/times/y2038" 2147483648 0
	gh utime "$T/times/far" 10000000000 999999999
	gh flags "$T/flags/immutable" +i >/dev/null
	gh flags "$T/flags/append" +a >/dev/null
	gh flags "$T/flags/nodump" +d >/dev/null
	gh flags "$T/flags/noatime" +A >/dev/null
	gh flags "$T/flags/nodump-dir" +d >/dev/null
	if [ "$VARIANT" = extra ]; then
		gh verity "$T/verity/file"
		gh verity "$T/verity/small"
	fi
}

# Compressed files: every size class, compressible or not, and the operations
# that change clusters after the first write.
tree_compress() {
	T=$1
	phase tree_compress
	cd "$T"
	mkdir c cdir
	for s in 0 1 4095 4096 4097 12288 16384 16385 65636 1048576 4195304; do
		gh gen c/text-$s.dat $s $s text
		gh gen c/rand-$s.dat $s $((s + 1)) rand
	done
	gh gen c/zero-1m.dat 1048576 0 zero
	gh gen c/runs-2m.dat 2097152 3 runs
	gh gen c/mixed.dat 524288 4 text
	gh gen c/mixed.dat 131072 5 rand 524288
	gh gen c/mixed.dat 393216 6 text 655360
	gh gen c/plain.txt 200000 7 text
	: > c/nocomp.dat; gh flags c/nocomp.dat -c >/dev/null; gh gen c/nocomp.dat 200000 8 text
	gh flags cdir +c >/dev/null
	gh gen cdir/inherit.bin 300000 9 text
	gh gen c/overwrite.dat 524288 10 text; sync; gh gen c/overwrite.dat 8192 11 rand 200000
	gh gen c/sparse.dat 65536 12 text; gh gen c/sparse.dat 65536 13 text 10485760
	gh gen c/truncated.dat 1048576 14 text; sync; truncate -s 300001 c/truncated.dat
	gh gen c/append.dat 10000 15 text; sync; gh gen c/append.dat 50000 16 text 10000
	gh gen c/released.dat 1048576 17 text
	cd /
	gh settimes "$T" $MK_TIME
	echo "released blocks: $(gh release "$T/c/released.dat")"
}

# Write the manifest of the tree at $1 into /tmp/out/$2.*
manifest() {
	phase "manifest $2"
	gh manifest "$1" /tmp/out/$2.manifest /tmp/out/$2.xattrs /tmp/out/$2.info /tmp/out/$2.sparse
	echo "manifest $2: $(wc -l < /tmp/out/$2.manifest) paths, $(wc -l < /tmp/out/$2.xattrs) xattrs"
}

# Put /tmp/out on /dev/vdb (flushed; never a global sync in a power-cut run).
export_out() {
	phase export
	tar cf - -C /tmp/out . | dd of=/dev/vdb bs=65536 conv=fsync 2>/dev/null
}
GUESTEOF
)

# ---------------------------------------------------------------- host side

# The guest leaves "sparse:N" for big sparse files (hashing GiBs of holes under
# TCG is too slow); put in the sha256 from NAME.sparse/N.{map,data}.
mk_resolve_sparse() {
	local out=$1 d
	for d in "$out"/*.sparse; do
		[ -d "$d" ] || continue
		python3 - "${d%.sparse}.manifest" "$d" <<'PYEOF' || return 1
import hashlib, os, sys
man, sdir = sys.argv[1], sys.argv[2]
zero = bytes(1 << 20)
def digest(n):
    h = hashlib.sha256()
    pos = 0
    with open(os.path.join(sdir, n + ".map")) as m, open(os.path.join(sdir, n + ".data"), "rb") as d:
        size = int(m.readline().split()[1])
        for line in m:
            off, ln = map(int, line.split())
            while pos < off:
                k = min(len(zero), off - pos); h.update(zero[:k]); pos += k
            b = d.read(ln)
            assert len(b) == ln, "short data for %s" % n
            h.update(b); pos += ln
    while pos < size:
        k = min(len(zero), size - pos); h.update(zero[:k]); pos += k
    return h.hexdigest()
lines = []
for line in open(man, "rb"):
    c = line.rstrip(b"\n").split(b"\t")
    if c[7].startswith(b"sparse:"):
        c[7] = digest(c[7][7:].decode()).encode()
    lines.append(b"\t".join(c) + b"\n")
open(man, "wb").writelines(lines)
PYEOF
		rm -rf "$d"
	done
}

# mk_image OUTDIR NAME FEATURES MOUNTOPTS BODY
# FEATURES: mkfs -O list ("" = defaults); BODY: guest shell code run after
# the mount at /mnt.
mk_image() {
	local out=$1 name=$2 feat=$3 opts=$4 body=$5
	local img=$out/$name.img work t0=$SECONDS
	work=$(mktemp -d "${TMPDIR:-/tmp}/uf2fs-mk.XXXXXX")
	rm -f "$img"; truncate -s $MK_SIZE "$img"
	mkfs.f2fs -q -f -t 0 -r -T $MK_TIME -U $MK_UUID -l "$name" ${feat:+-O "$feat"} "$img" \
		> "$work/mkfs.log" 2>&1 || { cat "$work/mkfs.log" >&2; return 1; }
	{ echo "$GUEST_LIB"
	  echo "MK_TIME=$MK_TIME NAME=$name"
	  echo "mount -t f2fs ${opts:+-o $opts} /dev/vda /mnt || fail mount"
	  echo "cp0=\$(cpcalls)"
	  echo "$body"
	  cat <<'EOF'
cd /
umount /mnt || fail umount
mount -t f2fs -o ro /dev/vda /mnt || fail "mount ro"
manifest /mnt $NAME
umount /mnt
dmesg > /tmp/out/$NAME.dmesg
export_out
EOF
	} > "$work/guest.sh"
	if ! qemu_run "$img" "$work/guest.sh" "$work/out.disk" "$TMO" > "$work/guest.log"; then
		cat "$work/guest.log" >&2; rm -rf "$work"; return 1
	fi
	tar xf "$work/out.disk" -C "$out"
	mk_resolve_sparse "$out"
	cat "$work/guest.log" "$out/$name.dmesg" > "$out/$name.guest.log"; rm -f "$out/$name.dmesg"
	printf '%s\t%s\t%s\n' "$name" "${feat:-default}" "${opts:-default}" >> "$out/images.tsv"
	log "$name: $((SECONDS - t0))s, $(du -k "$img" | cut -f1) KiB used"
	rm -rf "$work"
}

mk_compress() {
	local out=$1 name=$2 alg=$3 log2=$4 extra=${5:-}
	mk_image "$out" "$name" extra_attr,compression \
		"compress_algorithm=$alg,compress_log_size=$log2,compress_extension=dat$extra" "$(cat <<'EOF'
tree_compress /mnt
# Check that the kernel really compressed what it should have.
for f in text-1048576.dat zero-1m.dat runs-2m.dat mixed.dat; do
	n=$(gh cblocks /mnt/c/$f); echo "compressed blocks $f: $n"
	[ "$n" -gt 0 ] || fail "$f not compressed"
done
n=$(gh cblocks /mnt/c/rand-1048576.dat); echo "compressed blocks rand-1048576.dat: $n"
for f in c/plain.txt c/nocomp.dat; do
	fl=$(gh flags /mnt/$f); [ $((0x$fl & 4)) = 0 ] || fail "$f has the compression flag ($fl)"
	gh cblocks /mnt/$f 2>/dev/null && fail "$f: F2FS_IOC_GET_COMPRESS_BLOCKS works on it"
done
fl=$(gh flags /mnt/cdir/inherit.bin); [ $((0x$fl & 4)) = 4 ] || fail "cdir/inherit.bin: no compression flag"
echo "compressed blocks cdir/inherit.bin: $(gh cblocks /mnt/cdir/inherit.bin)"
EOF
)"
}

mk_fsync_cut() {
	local out=$1 name=fsync-cut img=$1/fsync-cut.img work t0=$SECONDS
	work=$(mktemp -d "${TMPDIR:-/tmp}/uf2fs-mk.XXXXXX")
	rm -f "$img"; truncate -s $MK_SIZE "$img"
	mkfs.f2fs -q -f -t 0 -r -T $MK_TIME -U $MK_UUID -l $name "$img" > "$work/mkfs.log" 2>&1 ||
		{ cat "$work/mkfs.log" >&2; return 1; }
	{ echo "$GUEST_LIB"; echo "MK_TIME=$MK_TIME"; cat <<'EOF'
mount -t f2fs /dev/vda /mnt || fail mount
cd /mnt
mkdir d d2 keep
gh gen base-append 102400 1 text
gh gen base-overwrite 262144 2 rand
gh gen base-trunc 300000 3 rand
gh gen base-chmod 1000 4 text
gh gen d/old 50000 5 text
gh gen keep/untouched 70000 6 rand
gh gen base-inline 200 7 text
cd /
gh settimes /mnt $MK_TIME
sync                                # the last checkpoint
cp0=$(cpcalls)
# After the checkpoint: only fsync'd changes, with times set before the fsync.
cd /mnt
gh gen d/new1 200000 11 rand; gh setxattr d/new1 user.new "set before fsync"
gh utime d/new1 1700000001 1; gh fsync d/new1
gh gen d/new-inline 300 12 text;        gh utime d/new-inline 1700000002 2; gh fsync d/new-inline
gh gen d2/new-big 3000000 13 rand;      gh utime d2/new-big 1700000003 3;  gh fsync d2/new-big
gh gen base-append 20000 14 text 102400; gh utime base-append 1700000004 4; gh fsync base-append
gh gen base-overwrite 8192 15 rand 40960; gh utime base-overwrite 1700000005 5; gh fsync base-overwrite
truncate -s 100000 base-trunc;          gh utime base-trunc 1700000006 6;  gh fsync base-trunc
chmod 0600 base-chmod; chown 1000:1000 base-chmod; gh setxattr base-chmod user.added after-checkpoint
gh utime base-chmod 1700000007 7; gh fsync base-chmod
gh gen base-inline 100 16 text 50;      gh utime base-inline 1700000008 8; gh fsync base-inline
gh gen d/new-sparse 4096 17 rand 8388608; gh utime d/new-sparse 1700000009 9; gh fsync d/new-sparse
cd /
cp1=$(cpcalls)
echo "checkpoints during the fsync phase: $cp0 -> $cp1"
[ "$cp0" = "$cp1" ] || fail "the kernel checkpointed during the fsync phase"
manifest /mnt fsync-cut
dmesg > /tmp/out/fsync-cut.dmesg
export_out
powercut
EOF
	} > "$work/guest.sh"
	if ! qemu_run "$img" "$work/guest.sh" "$work/out.disk" "$TMO" > "$work/guest.log"; then
		cat "$work/guest.log" >&2; rm -rf "$work"; return 1
	fi
	tar xf "$work/out.disk" -C "$out"
	mk_resolve_sparse "$out"
	cat "$work/guest.log" "$out/fsync-cut.dmesg" > "$out/fsync-cut.guest.log"
	rm -f "$out/fsync-cut.dmesg" "$work/out.disk"
	# Directory mtimes and sizes after recovery are the recovery's business.
	awk -F'\t' -v OFS='\t' '$2 == "dir" { $6 = "*"; $7 = "*"; $12 = "*"; $13 = "*" } { print }' \
		"$out/fsync-cut.manifest" > "$work/m" && mv "$work/m" "$out/fsync-cut.manifest"
	rm -f "$out/fsync-cut.info"
	printf '%s\t%s\t%s\n' fsync-cut default "default; power cut after fsync" >> "$out/images.tsv"
	log "fsync-cut: cut after $((SECONDS - t0))s"

	# Second boot, on copies: norecovery must miss the fsync'd state, a normal
	# (recovering) mount must show it.
	cp --sparse=always "$img" "$work/norec.img"
	cp --sparse=always "$img" "$work/rec.img"
	{ echo "$GUEST_LIB"; cat <<'EOF'
mount -t f2fs -o ro,norecovery /dev/vda /mnt || fail "mount norecovery"
manifest /mnt fsync-cut.norecovery
umount /mnt
dmesg -c > /tmp/out/norecovery.dmesg
mount -t f2fs /dev/vdc /mnt || fail "mount with recovery"
dmesg > /tmp/out/recovery.dmesg
manifest /mnt fsync-cut.recovered
umount /mnt
cat /tmp/out/recovery.dmesg
export_out
EOF
	} > "$work/check.sh"
	QEMU_EXTRA="$work/rec.img" qemu_run "$work/norec.img" "$work/check.sh" "$work/out.disk" "$TMO" \
		> "$work/check.log" || { cat "$work/check.log" >&2; rm -rf "$work"; return 1; }
	tar xf "$work/out.disk" -C "$out"
	mk_resolve_sparse "$out"
	cat "$work/check.log" >> "$out/fsync-cut.guest.log"
	rm -f "$out"/fsync-cut.*.info "$out/norecovery.dmesg" "$out/recovery.dmesg"
	if python3 "$_mk_dir/verify-tree.py" "$out/fsync-cut.manifest" "$out/fsync-cut.xattrs" \
		--manifest "$out/fsync-cut.norecovery.manifest" "$out/fsync-cut.norecovery.xattrs" \
		> "$work/v1" 2>&1; then
		log "fsync-cut: mounting with norecovery already shows the fsync'd state; no recovery needed?"
		rm -rf "$work"; return 1
	fi
	if ! python3 "$_mk_dir/verify-tree.py" "$out/fsync-cut.manifest" "$out/fsync-cut.xattrs" \
		--manifest "$out/fsync-cut.recovered.manifest" "$out/fsync-cut.recovered.xattrs" \
		> "$work/v2" 2>&1; then
		log "fsync-cut: the kernel's roll-forward recovery does not give the fsync'd state:"
		cat "$work/v2" >&2; rm -rf "$work"; return 1
	fi
	log "fsync-cut: recovery needed ($(($(grep -c . "$work/v1") - 1)) differences without it), and the kernel recovers it; $((SECONDS - t0))s"
	rm -rf "$work"
}

# MK_ONLY="inline fsync-cut" builds only those (for debugging; never cached).
mk_want() { [ -z "${MK_ONLY:-}" ] || [[ " $MK_ONLY " == *" $1 "* ]]; }

mk_all() {
	local out=$1 t0=$SECONDS
	mkdir -p "$out"
	: > "$out/images.tsv"
	if mk_want inline; then
		mk_image "$out" inline "" "" 'tree_common /mnt inline'
	fi
	if mk_want extra; then
		mk_image "$out" extra extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,lost_found,sb_checksum,quota,project_quota,verity \
			inline_xattr_size=100 'tree_common /mnt extra'
	fi
	if mk_want compress-lz4; then mk_compress "$out" compress-lz4 lz4 2; fi
	if mk_want compress-zstd; then mk_compress "$out" compress-zstd zstd 3 ,compress_chksum; fi
	if mk_want compress-lzo; then mk_compress "$out" compress-lzo lzo 4; fi
	if mk_want compress-lzorle; then mk_compress "$out" compress-lzorle lzo-rle 2; fi
	if mk_want fsync-cut; then mk_fsync_cut "$out"; fi
	log "all images: $((SECONDS - t0))s"
}

# Print the cache directory, building it first unless it is complete.
mk_cached() {
	local b dir
	b=$(_qemu_build_dir)
	dir=$b/compat-cache/images/$(mk_key)
	[ -z "${MK_ONLY:-}" ] || { echo "make-kernel-images: MK_ONLY needs an OUTDIR" >&2; return 2; }
	if [ ! -e "$dir/.complete" ]; then
		rm -rf "$dir.tmp"
		mk_all "$dir.tmp" || { rm -rf "$dir.tmp"; return 1; }
		touch "$dir.tmp/.complete"
		rm -rf "$dir"; mv "$dir.tmp" "$dir"
		# Older sets (another generator version) are only disk space now.
		local d
		for d in "$b"/compat-cache/images/*; do
			[ "$d" = "$dir" ] || rm -rf "$d"
		done
	fi
	echo "$dir"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	if m=$(qemu_missing); then :; else echo "make-kernel-images: $m" >&2; exit 77; fi
	if [ $# -ge 1 ]; then
		mk_all "$1"
	else
		mk_cached
	fi
fi
