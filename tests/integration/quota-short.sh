#!/bin/bash
# A write(2) that crosses a hard block limit is cut short at the limit, as
# Linux f2fs does (it reserves quota a page at a time in f2fs_write_begin, so
# generic_perform_write returns the bytes before the first page that does not
# fit); the next write is EDQUOT. For the default mount with usrquota (quota
# limits turn writeback_cache off: under it the kernel's page cache would take
# the whole write and the short count could not show; uf2fs stats must say
# no_writeback_cache) and for an explicit
# -o no_writeback_cache: a first write ending inside a block, then one of
# 3 MiB from there must return exactly the bytes up to the limit's last block,
# the file size must end there, the next write must fail with EDQUOT, a write
# inside the blocks the file has must still succeed, and after unmount the
# user's usage must equal the limit (uf2fs quota and the independent recount,
# tests/lib/f2fsimg.py quota-usage) with fsck.f2fs -f clean.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_root
need_fuse
need_cmd setpriv
SYS_PY=/usr/bin/python3	# the caller is not root: not a per-user interpreter
[ -x "$SYS_PY" ] || skip "no /usr/bin/python3"
tmpdir_init quota-short
MNT=$TMP/mnt
chmod 755 "$TMP"

LIMIT_KIB=2048
FIRST=$((100 * 1024 + 1000))	# ends inside block 25: blocks 0..25 used
# what fits after it: up to the end of the limit's last block
WANT=$((LIMIT_KIB * 1024 - FIRST))

run() {
	local opts=$1 img=$TMP/img out
	step "mount -o $opts: a write across the hard limit"
	rm -f "$img"
	truncate -s 64M "$img"
	"$MKFS_F2FS" -f -q -g android "$img" >/dev/null || fail "mkfs.f2fs -g android"
	"$UF2FS" setquota -u 1000 0 "$LIMIT_KIB" 0 0 "$img" || fail "setquota"
	mount_uf2fs "$img" "$MNT" "$opts" || fail "mount -o $opts"
	# quota limits turn writeback_cache off (uf2fs stats names the mode)
	"$UF2FS" stats "$MNT" | grep -qx "mount: no_writeback_cache" ||
		fail "$opts: not write-through: $("$UF2FS" stats "$MNT" | grep '^mount:')"
	mkdir "$MNT/u"
	chown 1000 "$MNT/u"
	out=$(setpriv --reuid=1000 --regid=1000 --clear-groups "$SYS_PY" - "$MNT/u/f" "$FIRST" <<'PYEOF'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
first = int(sys.argv[2])
assert os.write(fd, b"a" * first) == first
n = os.write(fd, b"b" * (3 << 20))
try:
    os.write(fd, b"c" * 4096)
    nxt = "written"
except OSError as e:
    nxt = errno.errorcode.get(e.errno, str(e.errno))
# rewriting blocks the file has needs no new quota
os.lseek(fd, 8192, os.SEEK_SET)
again = os.write(fd, b"d" * 65536)
print(n, nxt, again)
PYEOF
) || fail "writer failed under $opts"
	log "short write: $out"
	[ "$out" = "$WANT EDQUOT 65536" ] ||
		fail "$opts: want '$WANT EDQUOT 65536' (short count, EDQUOT, rewrite), got '$out'"
	[ "$(stat -c %s "$MNT/u/f")" = $((LIMIT_KIB * 1024)) ] ||
		fail "$opts: size $(stat -c %s "$MNT/u/f"), want the limit"
	umount_uf2fs "$MNT" || fail "unmount"
	fsck_clean "$img" || fail "$opts: fsck.f2fs after the short write"
	"$UF2FS" quota -u "$img" | grep -qE "^#1000 +-- +$LIMIT_KIB " ||
		fail "$opts: usage is not the limit: $("$UF2FS" quota -u "$img" | grep '^#1000')"
	"$PY" "$LIB/f2fsimg.py" quota-usage "$img" |
		grep -qx "user 1000 $((LIMIT_KIB * 1024)) 2" ||
		fail "$opts: the independent recount differs: $("$PY" "$LIB/f2fsimg.py" \
			quota-usage "$img" | grep '^user 1000')"
	log "usage = limit ($LIMIT_KIB KiB), fsck.f2fs clean"
}

run rw,usrquota,allow_other
run rw,usrquota,allow_other,no_writeback_cache
pass "a write across the hard limit is cut short at the limit, then EDQUOT"
