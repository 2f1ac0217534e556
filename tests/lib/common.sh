# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the shell tests, the demo and the benchmarks.
#
#   . "$(dirname "$0")/../lib/common.sh"
#
# Environment (tests/run.sh sets the first three):
#   UF2FS      absolute path of build/uf2fs
#   TOP        repository root
#   BUILD      build directory (relative to TOP or absolute)
#   MKFS_F2FS, SLOAD_F2FS, FSCK_F2FS   override the f2fs-tools binaries
#   KEEP_TMP=1         keep the temp dir (always kept, and printed, on failure)
#   UF2FS_MOUNT_DAEMON=1  let `uf2fs mount` daemonize instead of running it in
#                      the foreground in the background (the default, so that
#                      its messages land in the test log and its exit status
#                      is checked at unmount)
#   MOUNT_TIMEOUT      seconds to wait for a mount (default 30)
#
# Conventions: a test exits 0 (pass), 77 (skip; the reason is its last line) or
# anything else (fail). Functions print what they do on stderr with a "+ "
# prefix so that a failing log reads as a transcript.

TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${BUILD:-build}
case $BUILD in /*) BUILD_ABS=$BUILD;; *) BUILD_ABS=$TOP/$BUILD;; esac
UF2FS=${UF2FS:-$BUILD_ABS/uf2fs}
LIB=$TOP/tests/lib
MKFS_F2FS=${MKFS_F2FS:-mkfs.f2fs}
SLOAD_F2FS=${SLOAD_F2FS:-sload.f2fs}
FSCK_F2FS=${FSCK_F2FS:-fsck.f2fs}
MOUNT_TIMEOUT=${MOUNT_TIMEOUT:-30}
PY=${PYTHON:-python3}
export LC_ALL=C.UTF-8

_MOUNTS=()
declare -A _MOUNT_PID=() _MOUNT_LOG=()
TMP=

log() { echo "+ $*" >&2; }

# skip REASON: the runner shows the last output line as the reason.
skip() {
	echo "SKIP: $*"
	exit 77
}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# pass [MSG]: mark success and exit 0 (cleanup keeps nothing).
pass() {
	[ $# -gt 0 ] && echo "PASS: $*"
	exit 0
}

# step TITLE: a header in the log.
step() {
	echo
	echo "=== $* ==="
}

need_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "$c not installed"
	done
}

need_root() {
	[ "$(id -u)" = 0 ] || skip "needs root"
}

need_fuse() {
	[ -c /dev/fuse ] || skip "/dev/fuse is missing"
	command -v fusermount3 >/dev/null 2>&1 || skip "fusermount3 not installed (fuse3)"
}

need_uf2fs() {
	[ -x "$UF2FS" ] || fail "uf2fs binary not found at $UF2FS (run make)"
}

# need_f2fs_tools: mkfs/sload/fsck/dump of f2fs-tools.
need_f2fs_tools() {
	need_cmd "$MKFS_F2FS" "$SLOAD_F2FS" "$FSCK_F2FS"
}

_cleanup() {
	local rc=$? m
	set +e
	for m in "${_MOUNTS[@]}"; do
		_is_mounted "$m" && { fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null; }
		local pid=${_MOUNT_PID[$m]:-}
		if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
			sleep 0.5
			kill "$pid" 2>/dev/null
		fi
	done
	if [ -n "$TMP" ] && [ -d "$TMP" ]; then
		# a ThreadSanitizer report from any uf2fs process (a daemon's too)
		# fails the test; when the test failed already the report is
		# likely why (halt_on_error kills the daemon), so show it too
		if compgen -G "$TMP/tsan.*" >/dev/null; then
			echo "FAIL: ThreadSanitizer reported (the first report):" >&2
			head -40 "$(ls "$TMP"/tsan.* | head -1)" >&2
			rc=1 _SAN_FAIL=1
		fi
		if { [ "$rc" = 0 ] || [ "$rc" = 77 ]; } && [ "${KEEP_TMP:-0}" != 1 ]; then
			rm -rf "$TMP"
		else
			echo "(temp dir kept: $TMP)" >&2
		fi
	fi
	# a trap's return value is not the script's status: a report must exit
	[ "$rc" = 1 ] && [ -n "${_SAN_FAIL:-}" ] && exit 1
	return $rc
}

# tmpdir_init [NAME]: make $TMP, removed at exit unless the test failed.
# Under /tmp by default, $UF2FS_TMPDIR if set (e.g. a tmpfs).
tmpdir_init() {
	local base=${UF2FS_TMPDIR:-${TMPDIR:-/tmp}}
	TMP=$(mktemp -d "$base/uf2fs-${1:-test}.XXXXXX")
	# under make check-tsan: reports go to files the cleanup looks for, since
	# a daemon's stderr is gone once it has forked away
	[ -n "${TSAN_OPTIONS:-}" ] && export TSAN_OPTIONS="$TSAN_OPTIONS:log_path=$TMP/tsan"
	trap _cleanup EXIT
	trap 'exit 130' INT TERM
}

# _is_mounted DIR: from /proc/self/mountinfo, without touching the FUSE fs.
_is_mounted() {
	local d
	d=$(realpath -m "$1")
	awk -v d="$d" '{ gsub(/\\040/, " ", $5); if ($5 == d) f = 1 } END { exit !f }' \
		/proc/self/mountinfo
}

# mount_uf2fs IMG MNT [OPTS]: mount and wait until it is up. OPTS is the -o list.
# Returns non-zero (and prints the daemon's output) when the mount fails.
mount_uf2fs() {
	local img=$1 mnt=$2 opts=${3:-} i rc
	mkdir -p "$mnt"
	local log
	log=${TMP:-/tmp}/mount-$(basename "$mnt")-$RANDOM.log
	local args=(mount "$img" "$mnt")
	[ -n "$opts" ] && args+=(-o "$opts")
	_MOUNT_LOG[$mnt]=$log
	if [ "${UF2FS_MOUNT_DAEMON:-0}" = 1 ]; then
		log "uf2fs ${args[*]}"
		"$UF2FS" "${args[@]}" >"$log" 2>&1 || {
			rc=$?; cat "$log" >&2; return $rc; }
	else
		log "uf2fs ${args[*]} -f &"
		"$UF2FS" "${args[@]}" -f >"$log" 2>&1 &
		_MOUNT_PID[$mnt]=$!
	fi
	_MOUNTS+=("$mnt")
	for ((i = 0; i < MOUNT_TIMEOUT * 10; i++)); do
		if _is_mounted "$mnt"; then
			# The fs answers: stat the root (bounded, in case the daemon hangs).
			if timeout 20 stat "$mnt/." >/dev/null; then
				return 0
			fi
			echo "mount_uf2fs: $mnt is mounted but stat of its root fails" >&2
			cat "$log" >&2
			return 1
		fi
		local pid=${_MOUNT_PID[$mnt]:-}
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"; rc=$?
			echo "mount_uf2fs: uf2fs exited with status $rc before the mount was up:" >&2
			cat "$log" >&2
			return $(( rc ? rc : 1 ))
		fi
		sleep 0.1
	done
	echo "mount_uf2fs: $mnt not mounted after ${MOUNT_TIMEOUT}s" >&2
	cat "$log" >&2
	return 1
}

# mount_log MNT: the file holding the daemon's messages for that mount.
mount_log() { echo "${_MOUNT_LOG[$1]:-/dev/null}"; }

# umount_uf2fs MNT: fusermount3 -u with retries, lazy as a last resort. In
# foreground mode, waits for the daemon and fails if it did not exit with 0
# (a crash or a sanitizer report shows up here).
umount_uf2fs() {
	local mnt=$1 i rc=0 pid=${_MOUNT_PID[$1]:-}
	log "fusermount3 -u $mnt"
	for ((i = 0; i < 20; i++)); do
		_is_mounted "$mnt" || break
		fusermount3 -u "$mnt" 2>/dev/null && break
		sleep 0.5
	done
	if _is_mounted "$mnt"; then
		echo "umount_uf2fs: $mnt busy; lazy unmount" >&2
		fusermount3 -uz "$mnt" || true
		rc=1
	fi
	if [ -n "$pid" ]; then
		for ((i = 0; i < 200; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "umount_uf2fs: uf2fs (pid $pid) still running 20s after unmount; killing" >&2
			kill "$pid" 2>/dev/null
			rc=1
		fi
		local drc=0
		wait "$pid" 2>/dev/null || drc=$?
		unset "_MOUNT_PID[$mnt]"
		if [ "$drc" -ne 0 ]; then
			echo "umount_uf2fs: uf2fs exited with status $drc; its output:" >&2
			tail -40 "$(mount_log "$mnt")" >&2
			rc=1
		fi
	fi
	return $rc
}

# mk_image IMG SIZE FEATURES SRC [sload options...]
# FEATURES: comma list for mkfs.f2fs -O, or "" / "none". Logs go to IMG.*.log.
# sload.f2fs 1.15 exits 1 when the fsck it runs afterwards had to fix what it
# wrote (it does with flexible_inline_xattr); what counts is that the result
# passes fsck, which fsck_clean checks.
mk_image() {
	local img=$1 size=$2 feat=$3 src=$4 rc
	shift 4
	rm -f "$img"
	truncate -s "$size" "$img"
	local mk=(-f -q)
	[ -n "$feat" ] && [ "$feat" != none ] && mk+=(-O "$feat")
	log "mkfs.f2fs ${mk[*]} $(basename "$img") ($size)"
	"$MKFS_F2FS" "${mk[@]}" "$img" >"$img.mkfs.log" 2>&1 || {
		rc=$?; cat "$img.mkfs.log" >&2; echo "mk_image: mkfs.f2fs failed ($rc)" >&2; return 1; }
	if [ -n "$src" ]; then
		log "sload.f2fs -f $src $* $(basename "$img")"
		rc=0
		"$SLOAD_F2FS" -f "$src" "$@" "$img" >"$img.sload.log" 2>&1 || rc=$?
		if grep -qiE 'not supported|Error:' "$img.sload.log"; then
			grep -iE 'not supported|Error:' "$img.sload.log" >&2
			echo "mk_image: sload.f2fs reported an error (exit $rc)" >&2
			return 1
		fi
		if [ "$rc" -ne 0 ]; then
			echo "mk_image: note: sload.f2fs exited $rc (its fsck pass fixed:" \
				"$(grep -c '^\[FIX\]' "$img.sload.log") items); checking the result" >&2
		fi
		fsck_clean "$img" || { echo "mk_image: image not clean after sload" >&2; return 1; }
	fi
	return 0
}

# fsck_clean IMG: fsck.f2fs -f --dry-run (never writes) reports no error.
# In 1.15 a clean image exits 0 and ends its summary with
# "[FSCK] other corrupted bugs [Ok..]"; a corrupt one exits 255 (or 1) and
# prints [ASSERT] lines and [Fail] results. Check all of these.
fsck_clean() {
	local img=$1 out rc=0
	out=$("$FSCK_F2FS" -f --dry-run "$img" 2>&1) || rc=$?
	printf '%s\n' "$out" >"$img.fsck.log"
	# here-strings, not pipes: under pipefail, grep -q leaving early kills printf (141)
	if [ "$rc" -eq 0 ] &&
	   grep -qE '^\[FSCK\] other corrupted bugs +\[Ok\.\.\]' <<<"$out" &&
	   ! grep -qE '\[Fail\]|^\[ASSERT\]' <<<"$out"; then
		log "fsck.f2fs -f --dry-run $(basename "$img"): clean"
		return 0
	fi
	echo "fsck_clean: fsck.f2fs -f reports problems in $img (exit $rc):" >&2
	printf '%s\n' "$out" | grep -E '\[Fail\]|ASSERT|FIX|rror|\[FSCK\]' | head -30 >&2
	return 1
}

image_sum() { sha256sum "$1" | cut -d' ' -f1; }

# gen_tree SEED DIR [options]: tests/lib/gen-tree.py
gen_tree() { "$PY" "$LIB/gen-tree.py" "$@"; }

# compare_tree SRC DST [options]: tests/lib/compare-tree.py
compare_tree() { "$PY" "$LIB/compare-tree.py" "$@"; }

f2fsimg() { "$PY" "$LIB/f2fsimg.py" "$@"; }

# run_limited SECS CMD...: run with a timeout; sets RC and OUT (stdout+stderr).
run_limited() {
	local secs=$1
	shift
	RC=0
	OUT=$(timeout -k 5 "$secs" "$@" 2>&1) || RC=$?
}

# expect_clean_error WHAT: after run_limited, the command must have failed
# cleanly: non-zero, not killed by a signal (< 128), not timed out (124).
expect_clean_error() {
	local what=$1
	if [ "$RC" -eq 0 ]; then
		echo "$what: succeeded, expected an error. Output:" >&2
		printf '%s\n' "$OUT" | head -20 >&2
		return 1
	fi
	if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then
		echo "$what: timed out (hang?)" >&2
		return 1
	fi
	if [ "$RC" -ge 128 ]; then
		echo "$what: killed by signal $((RC - 128)) (crash). Output:" >&2
		printf '%s\n' "$OUT" | tail -20 >&2
		return 1
	fi
	if [ -z "$OUT" ]; then
		echo "$what: failed (exit $RC) without a message" >&2
		return 1
	fi
	return 0
}

# mentions TEXT REGEX [NUMBER...]: TEXT names the structure (REGEX, case-
# insensitive) and, when numbers are given, at least one of them in decimal
# or hex (0x..., any case, optional leading zeros).
mentions() {
	local text=$1 re=$2 n
	shift 2
	if ! printf '%s\n' "$text" | grep -qiE "$re"; then
		echo "message does not name /$re/: $(printf '%s' "$text" | head -5)" >&2
		return 1
	fi
	[ $# -eq 0 ] && return 0
	for n in "$@"; do
		[ -z "$n" ] && continue
		if printf '%s\n' "$text" | grep -qE "(^|[^0-9A-Za-z])$n([^0-9]|$)" ||
		   printf '%s\n' "$text" | grep -qiE "0x0*$(printf '%x' "$n")([^0-9a-f]|$)"; then
			return 0
		fi
	done
	echo "message names none of the numbers $* (dec or hex): $(printf '%s' "$text" | head -5)" >&2
	return 1
}

# f2fs_tools_built: the directory of a sload.f2fs/fsck.f2fs built from the
# Debian 1.15 source with lz4, lzo and selinux, and with the
# flexible_inline_xattr fix (tests/lib/build-f2fs-tools.sh), building it on
# first use (needs the Debian source archive). Prints the directory; returns 1
# when it cannot be had. UF2FS_NO_BUILD_TOOLS=1 never builds.
f2fs_tools_built() {
	# Shared by every build dir (plain and sanitizer): it is not our code.
	local out=${F2FS_TOOLS_DIR:-$TOP/build/f2fs-tools}
	if [ -f "$out/.ok" ] && [ -x "$out/sload.f2fs" ]; then
		echo "$out"; return 0
	fi
	[ "${UF2FS_NO_BUILD_TOOLS:-0}" = 1 ] && return 1
	mkdir -p "$out"
	log "building a compression-capable sload.f2fs (tests/lib/build-f2fs-tools.sh)"
	if timeout 600 "$LIB/build-f2fs-tools.sh" "$out" >"$out.log" 2>&1; then
		echo "$out"; return 0
	fi
	tail -5 "$out.log" >&2
	return 1
}

# sload_can_compress SLOAD: does this sload.f2fs really compress? (Debian's
# 1.15 is built without lz4/lzo: it prints "not supported" and exits 0.)
sload_can_compress() {
	local s=$1 d
	d=$(mktemp -d)
	mkdir "$d/src"
	head -c 200000 /dev/zero >"$d/src/z"
	truncate -s 64M "$d/img"
	"$MKFS_F2FS" -q -f -O extra_attr,compression "$d/img" >/dev/null 2>&1 &&
		"$s" -c -a lz4 -f "$d/src" "$d/img" >"$d/log" 2>&1
	local rc=$?
	if [ $rc -le 1 ] && ! grep -q 'not supported' "$d/log"; then rc=0; else rc=1; fi
	rm -rf "$d"
	return $rc
}
