#!/bin/bash
# The exhaustive power-loss run (make powerloss): every cut point of every
# scenario, both variants (clean: unflushed writes lost; tear: they land, the
# last one torn in half), then every fault point of the EIO runner. Prints the
# runners' summaries and the totals; exits non-zero when anything failed.
#
#   tests/powerloss/run-exhaustive.sh            BUILD=build by default
#   UF2FS_POWERLOSS_SCENARIO=gc tests/powerloss/run-exhaustive.sh
#   UF2FS_POWERLOSS_JOBS=8 ...                   more worker processes
#   POWERLOSS_SKIP_EIO=1 ...                     the power-loss runner only
#
# tests/run.sh runs every executable of tests/powerloss/ as the "powerloss"
# layer of `make check`; the exhaustive run takes long (see the report), so
# there it skips unless UF2FS_POWERLOSS_IN_CHECK=1: `make check` already runs
# the sampled cut points (unit/test_powerloss) and EIO points (unit/test_eio).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
if [ -n "${TOP:-}" ] && [ -z "${UF2FS_POWERLOSS_IN_CHECK:-}${UF2FS_POWERLOSS_MAKE:-}" ]; then
	echo "SKIP: the exhaustive run is make powerloss (or UF2FS_POWERLOSS_IN_CHECK=1)"
	exit 77
fi
bin=$BUILD/tests/test_powerloss
eio=$BUILD/tests/test_eio
if [ ! -x "$bin" ]; then
	echo "SKIP: $bin is not built (make tests)"
	exit 77
fi
if ! command -v mkfs.f2fs >/dev/null || ! command -v fsck.f2fs >/dev/null; then
	echo "SKIP: f2fs-tools (mkfs.f2fs, fsck.f2fs) not installed"
	exit 77
fi
log=$(mktemp "${TMPDIR:-/tmp}/uf2fs-powerloss.XXXXXX.log")
start=$SECONDS
rc=0
UF2FS_POWERLOSS_ALL=1 "$bin" 2>&1 | tee "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
pl_time=$((SECONDS - start))
if [ -z "${POWERLOSS_SKIP_EIO:-}" ] && [ -x "$eio" ]; then
	start=$SECONDS
	UF2FS_EIO_ALL=1 "$eio" 2>&1 | tee -a "$log"
	[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
	eio_time=$((SECONDS - start))
fi
echo
echo "=== power loss: every cut point (${pl_time}s)"
grep -E '^[a-z-]+ +\[[a-z]+ *\] (W=|preparation)' "$log"
grep -E '^TOTAL:' "$log"
if [ -n "${eio_time:-}" ]; then
	echo "=== EIO injection: every fault point (${eio_time}s)"
	grep -E '^eio-(workload|read)' "$log"
	grep -E '^  outcomes:' "$log"
fi
fails=$(grep -c '^FAIL ' "$log")
echo "failure lines: $fails (full log: $log)"
[ "$rc" -eq 0 ] && [ "$fails" -eq 0 ] && rm -f "$log"
exit $rc
