#!/bin/bash
# tests/compat/qemu.sh — run a shell script under the real Linux f2fs, in QEMU.
#
# Source it from a test, or run it directly:
#     . tests/compat/qemu.sh;  qemu_run IMAGE SCRIPT [OUT_FILE] [TIMEOUT_S]
#     bash tests/compat/qemu.sh IMAGE SCRIPT [OUT_FILE] [TIMEOUT_S]
#
# The guest is Debian's stock kernel (f2fs is a module there) booted with TCG
# (KVM hangs on these hosts; it is never used), -m 1024 -smp 2, and a busybox
# initramfs. IMAGE is /dev/vda, OUT_FILE (if given; created as a 64 MiB sparse
# file when missing) is /dev/vdb, e.g. for `tar cf /dev/vdb ...` in the guest.
# SCRIPT runs as `sh /test.sh` in /tmp with PATH=/in:/bin; the guest also has
#   /bin/gh        tests/compat/guest-helper.c, static (xattrs, flags, manifest...)
#   /bin/powercut  prints a marker and resets the machine at once (sysrq b): no
#                  sync, no unmount, no clean exit. Use it to end a power-cut run.
#   /in            a copy of $QEMU_IN, if set (qemu_host_tool puts host programs there)
# qemu_run returns the script's exit status, or 0 when the script ended with
# powercut, 124 on timeout, 99 when the guest died without either. The guest's
# part of the console is printed on stdout; on failure the last lines of the
# whole console (kernel messages included) go to stderr.
#
# Environment:
#   BUILD        build dir (default build), relative to the repo root; the
#                initramfs is cached in $BUILD/compat-cache/, keyed by kernel
#                version and by the contents of this file and the helper.
#   QEMU_IN      directory copied into the guest as /in
#   QEMU_EXTRA   more raw images, attached after OUT_FILE (/dev/vdc, ...)
#   QEMU_ZNS     FILE:ZONE_SIZE[:ZONE_CAPACITY] (QEMU sizes: 4M ...): FILE becomes
#                an NVMe ZNS namespace, the host-managed zoned /dev/nvme0n1
#                (QEMU keeps no write pointers across runs: every zone is empty
#                at the next boot)
#   QEMU_CACHE   QEMU cache mode for the disks (default writeback, see below)
#   QEMU_LOG     keep the full console log in this file
#   QEMU_APPEND  extra kernel command line
#
# Power-cut semantics. The disks are raw files; QEMU keeps no cache of its own
# for them, so a guest write that completed went to the host file with
# pwrite() before the guest saw the completion, whatever the cache mode, and it
# stays in the file when QEMU exits (the host does not crash). cache=writeback
# additionally turns a guest FLUSH into fdatasync(), which is the honest
# meaning of a flush; cache=unsafe drops it (it would only matter if the host
# crashed). Writes still in the guest's page cache at the cut are lost, as on
# real hardware. tests/compat/README.md records the experiment behind this.

_qemu_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_qemu_top=$(cd "$_qemu_dir/../.." && pwd)

# Modules to load in the guest, by name or as the path of a .ko built out of
# tree; their dependencies are added and ordered from `modinfo -F depends`
# and the softdep "pre:" lists.
QEMU_MODULES=${QEMU_MODULES:-"crc32_generic crc32c_generic libcrc32c lz4_compress lz4hc_compress
	zstd_compress quota_tree quota_v2 f2fs virtio_pci virtio_blk nvme"}

qemu_kernel() {
	local k
	k=$(ls /lib/modules 2>/dev/null | grep -- '-amd64$' | sort -V | tail -1)
	[ -n "$k" ] && [ -e "/boot/vmlinuz-$k" ] || return 1
	echo "$k"
}

# Prints why the harness cannot run and returns 1, or returns 0.
qemu_missing() {
	local t
	for t in qemu-system-x86_64 busybox cpio gzip modinfo gcc; do
		command -v "$t" >/dev/null || { echo "$t not installed"; return 1; }
	done
	qemu_kernel >/dev/null || { echo "no Debian -amd64 kernel in /boot + /lib/modules"; return 1; }
	[ -r "/boot/vmlinuz-$(qemu_kernel)" ] || { echo "/boot/vmlinuz-$(qemu_kernel) not readable"; return 1; }
	return 0
}

_qemu_build_dir() {
	local b=${BUILD:-build}
	case $b in /*) ;; *) b=$_qemu_top/$b;; esac
	mkdir -p "$b/compat-cache" && echo "$b"
}

# Emit "name" lines in load order (dependencies first) for the given modules.
_qemu_mod_order() {
	local k=$1; shift
	local -A seen=()
	local order=()
	_qemu_visit() {
		local name=$1 f dep
		f=$(modinfo -k "$k" -F filename "$name" 2>/dev/null | head -1)
		[ -n "$f" ] || { echo "qemu.sh: no module $name" >&2; return 0; }
		case $f in "(builtin)"|builtin*) return 0;; esac
		name=$(basename "$f"); name=${name%%.ko*}
		[ -n "${seen[$name]:-}" ] && return 0
		seen[$name]=1
		for dep in $(modinfo -k "$k" -F depends "$f" | tr , ' ') \
			   $(modinfo -k "$k" -F softdep "$f" | sed -n 's/.*pre: *\([^:]*\).*/\1/p' |
			     sed 's/post$//'); do
			_qemu_visit "$dep"
		done
		order+=("$name:$f")
	}
	local m
	for m in "$@"; do _qemu_visit "$m"; done
	printf '%s\n' "${order[@]}"
}

# Build (once) the base initramfs and print its path.
qemu_initramfs() {
	local k b key out r m name f
	k=$(qemu_kernel) || { echo "qemu.sh: no kernel" >&2; return 1; }
	b=$(_qemu_build_dir)
	key=$( { cat "$_qemu_dir/qemu.sh" "$_qemu_dir/guest-helper.c"; echo "$QEMU_MODULES";
		 md5sum "$(command -v busybox)"; } | sha256sum | cut -c1-16)
	out=$b/compat-cache/initramfs-$k-$key.cpio.gz
	[ -s "$out" ] && { echo "$out"; return 0; }
	r=$(mktemp -d "$b/compat-cache/initramfs.XXXXXX")
	mkdir -p "$r"/{bin,sbin,proc,sys,dev,mnt,tmp,in,lib/modules}
	cp "$(command -v busybox)" "$r/bin/busybox"
	for m in $(busybox --list); do [ -e "$r/bin/$m" ] || ln -s busybox "$r/bin/$m"; done
	if ! gcc -static -O2 -Wall -o "$r/bin/gh" "$_qemu_dir/guest-helper.c"; then
		echo "qemu.sh: cannot build the static guest helper" >&2; rm -rf "$r"; return 1
	fi
	: > "$r/lib/modules/order"
	while IFS=: read -r name f; do
		case $f in
		*.xz) xz -dc "$f";;
		*.zst) zstd -qdc "$f";;
		*.gz) gzip -dc "$f";;
		*) cat "$f";;
		esac > "$r/lib/modules/$name.ko" || { rm -rf "$r"; return 1; }
		echo "$name" >> "$r/lib/modules/order"
	done < <(_qemu_mod_order "$k" $QEMU_MODULES)
	cat > "$r/bin/powercut" <<'EOF'
#!/bin/sh
# End a power-cut run: no sync, no unmount, reset now. The marker goes
# through printk, which reaches the serial console synchronously; a plain
# echo could still sit in the UART buffer when the machine resets.
echo "<2>=== UF2FS-GUEST-POWERCUT" > /dev/kmsg
echo b > /proc/sysrq-trigger
sleep 30
EOF
	cat > "$r/init" <<'EOF'
#!/bin/sh
export PATH=/in:/bin:/sbin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in $(cat /lib/modules/order); do
	insmod /lib/modules/$m.ko || echo "init: insmod $m failed"
done
i=0; while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
[ -b /dev/vda ] || echo "init: no /dev/vda"
echo "=== UF2FS-GUEST-BEGIN"
cd /tmp; sh /test.sh; rc=$?
echo "=== UF2FS-GUEST-RC $rc"
echo "<2>=== UF2FS-GUEST-RC $rc" > /dev/kmsg
sync; poweroff -f
EOF
	chmod +x "$r/init" "$r/bin/powercut"
	(cd "$r" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) > "$r.cpio.gz" &&
		mv "$r.cpio.gz" "$out"
	rm -rf "$r"
	for m in "$b"/compat-cache/initramfs-*.cpio.gz; do [ "$m" = "$out" ] || rm -f "$m"; done
	[ -s "$out" ] && echo "$out"
}

# qemu_host_tool DIR TOOL...: copy host programs (e.g. mkfs.f2fs, blkzone, or
# a path such as build/uf2fs) and
# the shared libraries they need into DIR (use it as QEMU_IN), each run in the
# guest as /in/TOOL through the copied dynamic loader: the guest has no libc.
qemu_host_tool() {
	local dir=$1 t p l
	shift
	mkdir -p "$dir/lib" "$dir/bin"
	for t in "$@"; do
		p=$(command -v "$t") || { echo "qemu.sh: no $t on the host" >&2; return 1; }
		t=$(basename "$t")
		cp "$p" "$dir/bin/$t"
		for l in $(ldd "$p" | awk '/=>/ { print $3 } /ld-linux/ { print $1 }'); do
			[ -e "$dir/lib/$(basename "$l")" ] || cp -L "$l" "$dir/lib/"
		done
		printf '#!/bin/sh\nexec /in/lib/%s --library-path /in/lib /in/bin/%s "$@"\n' \
			"$(basename "$(ldd "$p" | awk '/ld-linux/ { print $1 }')")" "$t" >"$dir/$t"
		chmod +x "$dir/$t"
	done
}

qemu_run() {
	local img=${1:-} script=${2:-} outf=${3:-} tmo=${4:-300}
	local k base work log rc drives
	[ -f "$img" ] && [ -f "$script" ] || { echo "usage: qemu_run IMAGE SCRIPT [OUT_FILE] [TIMEOUT]" >&2; return 2; }
	k=$(qemu_kernel) || { echo "qemu.sh: no kernel" >&2; return 2; }
	base=$(qemu_initramfs) || return 2
	work=$(mktemp -d "${TMPDIR:-/tmp}/uf2fs-qemu.XXXXXX")
	mkdir -p "$work/x/in"
	cp "$script" "$work/x/test.sh"
	[ -n "${QEMU_IN:-}" ] && cp -a "$QEMU_IN/." "$work/x/in/"
	(cd "$work/x" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) > "$work/extra.cpio.gz"
	cat "$base" "$work/extra.cpio.gz" > "$work/initrd"
	local cache=${QEMU_CACHE:-writeback}
	drives=(-drive "file=$img,format=raw,if=virtio,cache=$cache")
	if [ -n "$outf" ]; then
		[ -e "$outf" ] || truncate -s 64M "$outf"
		drives+=(-drive "file=$outf,format=raw,if=virtio,cache=$cache")
	fi
	local e
	for e in ${QEMU_EXTRA:-}; do drives+=(-drive "file=$e,format=raw,if=virtio,cache=$cache"); done
	if [ -n "${QEMU_ZNS:-}" ]; then
		local zf zs zc
		IFS=: read -r zf zs zc <<<"$QEMU_ZNS"
		drives+=(-drive "file=$zf,id=zns0,format=raw,if=none,cache=$cache"
			 -device nvme,id=nvme0,serial=zns0
			 -device "nvme-ns,drive=zns0,bus=nvme0,nsid=1,zoned=true,zoned.zone_size=$zs,zoned.zone_capacity=${zc:-0}")
	fi
	log=${QEMU_LOG:-$work/console.log}
	timeout -k 5 "$tmo" qemu-system-x86_64 -nodefaults -no-user-config \
		-accel tcg,thread=multi -cpu max -m 1024 -smp 2 \
		-display none -monitor none -serial "file:$log" -no-reboot \
		-kernel "/boot/vmlinuz-$k" -initrd "$work/initrd" \
		-append "console=ttyS0 quiet panic=-1 ${QEMU_APPEND:-}" \
		"${drives[@]}" </dev/null >"$work/qemu.out" 2>&1
	rc=$?
	tr -d '\r' < "$log" > "$work/clean.log"
	sed -n '/^=== UF2FS-GUEST-BEGIN/,$p' "$work/clean.log" | grep -v '^\[ *[0-9.]*\] reboot: '
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		echo "qemu.sh: timeout after ${tmo}s" >&2
		rc=124
	elif grep -q '=== UF2FS-GUEST-POWERCUT' "$work/clean.log"; then
		rc=0
	else
		rc=$(sed -n 's/.*=== UF2FS-GUEST-RC \([0-9]*\).*/\1/p' "$work/clean.log" | tail -1)
		rc=${rc:-99}
	fi
	if [ "$rc" != 0 ]; then
		{ echo "qemu.sh: guest failed (rc $rc); console tail:"
		  tail -n 60 "$work/clean.log" | sed 's/^/  | /'
		  [ -s "$work/qemu.out" ] && sed 's/^/  qemu: /' "$work/qemu.out"; } >&2
	fi
	rm -rf "$work"
	return "$rc"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -u
	qemu_run "$@"
	exit $?
fi
