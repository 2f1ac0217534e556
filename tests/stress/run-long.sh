#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Long runs of the read-write exercisers, for `make stress` (not make check):
#
#   - test_rw_random (fsx/fsstress-like, with a model): STRESS_SEEDS runs of
#     STRESS_OPS operations each, seeds from STRESS_SEED_BASE (default: the
#     clock), alternating image sizes so that some runs need garbage
#     collection. Every failing seed is printed with its reproduction line.
#   - test_rw_threads: STRESS_THREADS_SECONDS of 8 threads, STRESS_THREAD_RUNS
#     times.
#   - with STRESS_TSAN=1, the threads test once more from the ThreadSanitizer
#     build (make SAN=thread), if it is built.
#
# Env: BUILD (default build), STRESS_OPS (100000), STRESS_SEEDS (4),
#      STRESS_SEED_BASE, STRESS_THREADS_SECONDS (60), STRESS_THREAD_RUNS (2),
#      STRESS_TSAN (0), UF2FS_STRESS_AVOID (passed through: known bugs to skip).
# Exit 0 when everything passed, 1 otherwise.
set -u
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$TOP" || exit 1
BUILD=${BUILD:-build}
OPS=${STRESS_OPS:-100000}
SEEDS=${STRESS_SEEDS:-4}
BASE=${STRESS_SEED_BASE:-$(( $(date +%s) % 100000000 ))}
TSECS=${STRESS_THREADS_SECONDS:-60}
TRUNS=${STRESS_THREAD_RUNS:-2}
LOGDIR=$BUILD/stress-logs
mkdir -p "$LOGDIR"
RANDOM_BIN=$BUILD/tests/test_rw_random
THREADS_BIN=$BUILD/tests/test_rw_threads
for b in "$RANDOM_BIN" "$THREADS_BIN"; do
	[ -x "$b" ] || { echo "missing $b: run make tests first"; exit 1; }
done

failed=()
run() {	# run NAME CMD...: log to $LOGDIR/NAME.log
	local name=$1 t0=$SECONDS rc
	shift
	"$@" > "$LOGDIR/$name.log" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		printf 'PASS  %-40s %5ss\n' "$name" $((SECONDS - t0))
	else
		printf 'FAIL  %-40s %5ss (log %s)\n' "$name" $((SECONDS - t0)) "$LOGDIR/$name.log"
		grep -E 'FAILED with seed|reproduce|context:' "$LOGDIR/$name.log" | head -3 | sed 's/^/      /'
		failed+=("$name")
	fi
}

for i in $(seq 0 $((SEEDS - 1))); do
	seed=$((BASE + i))
	# odd runs on a small image: the log wraps and garbage collection must work
	mb=1024
	[ $((i % 2)) = 1 ] && mb=256
	run "random-seed$seed-${mb}M" env UF2FS_SEED=$seed UF2FS_STRESS_OPS=$OPS \
		UF2FS_STRESS_MB=$mb "$RANDOM_BIN"
done
for i in $(seq 1 "$TRUNS"); do
	run "threads-$i" env UF2FS_SEED=$((BASE + 100 + i)) UF2FS_THREADS_SECONDS=$TSECS "$THREADS_BIN"
done
if [ "${STRESS_TSAN:-0}" = 1 ]; then
	tsan=$(ls -d build-san-thread*/tests/test_rw_threads 2>/dev/null | head -1)
	if [ -n "$tsan" ]; then
		run threads-tsan env TSAN_OPTIONS=halt_on_error=1 UF2FS_THREADS_SECONDS=$TSECS "$tsan"
	else
		echo "SKIP  threads-tsan: no ThreadSanitizer build (make SAN=thread tests)"
	fi
fi
echo
if [ ${#failed[@]} -gt 0 ]; then
	echo "stress: ${#failed[@]} failed: ${failed[*]}"
	exit 1
fi
echo "stress: all passed (seed base $BASE)"
