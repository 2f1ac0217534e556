#!/bin/bash
# setuid/setgid clearing and the per-write security.capability probe.
#
# With HANDLE_KILLPRIV_V2 (the default) uf2fs clears setuid, and setgid when
# group-executable or when the caller is outside the file's group, on a
# write, truncate or O_TRUNC open by a caller without CAP_FSETID, and on any
# chown of a non-directory; in exchange the kernel asks
# for security.capability once per inode instead of once per write(2). The
# same semantics must hold with -o nokillpriv_v2 (the kernel clears the bits
# with a SETATTR) and under direct_io. Each mode ends with fsck.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_root
need_fuse
need_cmd setpriv
tmpdir_init killpriv
IMG=$TMP/kp.img MNT=$TMP/mnt
chmod 755 "$TMP"

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
mode_of() { stat -c %a "$1"; }
xattr_lookups() { "$UF2FS" stats "$MNT" | awk '/xattr lookups/ { print $3 }'; }

expect_mode() {
	local got
	got=$(mode_of "$1")
	[ "$got" = "$2" ] || fail "[$opts] $3: mode $got, want $2"
}

check_semantics() {
	local f=$MNT/prog
	printf 'x' >"$f"
	chmod 6777 "$f"
	as_nobody sh -c "printf y >>'$f'" || fail "[$opts] write as nobody"
	expect_mode "$f" 777 "write by a user without CAP_FSETID keeps setuid or setgid"
	chmod 6767 "$f"
	as_nobody sh -c "printf y >>'$f'" || fail "[$opts] write as nobody"
	# without V2 the kernel's FUSE setattr keeps the pre-6.2 rule (group-exec only)
	case $opts in
	*nokillpriv_v2*) expect_mode "$f" 2767 "the kernel's own rule changed";;
	*) expect_mode "$f" 767 "setgid without group-exec stays for a writer outside the group";;
	esac
	chgrp 65534 "$f"
	chmod 6767 "$f"
	as_nobody sh -c "printf y >>'$f'" || fail "[$opts] write as nobody"
	expect_mode "$f" 2767 "setgid without group-exec must stay for a writer in the group"
	chgrp 0 "$f"
	chmod 6777 "$f"
	printf 'z' >>"$f"
	expect_mode "$f" 6777 "a write by root cleared setuid or setgid"
	as_nobody truncate -s 1 "$f" || fail "[$opts] truncate as nobody"
	expect_mode "$f" 777 "truncate by a user without CAP_FSETID keeps setuid or setgid"
	chmod 6777 "$f"
	as_nobody sh -c ": >'$f'" || fail "[$opts] O_TRUNC open as nobody"
	expect_mode "$f" 777 "O_TRUNC open by a user without CAP_FSETID keeps setuid or setgid"
	chmod 6755 "$f"
	chown 1:1 "$f"
	expect_mode "$f" 755 "chown keeps setuid or setgid"
	mkdir "$MNT/sgid-dir"
	chmod 2775 "$MNT/sgid-dir"
	chown 1:1 "$MNT/sgid-dir"
	expect_mode "$MNT/sgid-dir" 2775 "chown of a directory dropped its setgid"
	[ "$(cat "$f")" = "" ] || fail "[$opts] content after O_TRUNC"
}

for opts in rw,allow_other,no_writeback_cache rw,allow_other,nokillpriv_v2 rw,allow_other \
	rw,allow_other,direct_io; do
	step "-o $opts"
	truncate -s 128M "$IMG"
	mkfs.f2fs -q -f "$IMG" >/dev/null
	mount_uf2fs "$IMG" "$MNT" "$opts" || fail "mount -o $opts"
	check_semantics
	before=$(xattr_lookups)
	dd if=/dev/zero of="$MNT/plain" bs=4k count=200 status=none || fail "[$opts] dd"
	probes=$(( $(xattr_lookups) - before ))
	log "[$opts] 200 writes: $probes security.capability lookups"
	case $opts in
	*nokillpriv_v2*) [ "$probes" -ge 200 ] ||
		fail "[$opts] expected the kernel's probe on every write, saw $probes";;
	*direct_io*) ;;
	*) [ "$probes" -le 3 ] ||
		fail "[$opts] $probes security.capability lookups for 200 writes (want <= 3)";;
	esac
	umount_uf2fs "$MNT" || fail "unmount -o $opts"
	fsck_clean "$IMG" || fail "fsck after -o $opts"
done
pass "setuid/setgid cleared as the VFS does, in every mode; one probe per inode with killpriv_v2"
