#!/bin/bash
# The test runner behind `make check`. Each layer is a directory of tests;
# a test is an executable that exits 0 (pass), 77 (skip) or anything else
# (fail). Unit tests are the cmocka binaries the Makefile built. The runner
# prints one line per test and ends with "N passed, N failed".
#
#   tests/run.sh [layer ...]       layers: unit integration compat fuzz powerloss
#   TEST_FILTER=regex tests/run.sh run only tests whose name matches
set -u
cd "$(dirname "$0")/.."
export BUILD=${BUILD:-build}
case $BUILD in /*) export UF2FS=$BUILD/uf2fs;; *) export UF2FS=$PWD/$BUILD/uf2fs;; esac
export TOP=$PWD
layers=${*:-unit integration compat fuzz powerloss}
logdir=$BUILD/test-logs
mkdir -p "$logdir"
pass=0 fail=0 skip=0 failed=()

run_one() {
	local name=$1; shift
	if [ -n "${TEST_FILTER:-}" ] && ! [[ $name =~ $TEST_FILTER ]]; then return; fi
	local log=$logdir/${name//\//_}.log start=$SECONDS rc
	timeout "${TEST_TIMEOUT:-1200}" "$@" >"$log" 2>&1
	rc=$?
	local t=$((SECONDS - start))
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS  %-50s %4ss\n' "$name" "$t";;
	77) skip=$((skip + 1)); printf 'SKIP  %-50s %s\n' "$name" "$(tail -1 "$log")";;
	*) fail=$((fail + 1)); failed+=("$name")
	   printf 'FAIL  %-50s %4ss (rc %s, log %s)\n' "$name" "$t" "$rc" "$log"
	   # a sanitizer report is the cause: show it even when the tail is
	   # all the clients' errors that followed the daemon's death
	   grep -q '^FAIL: .*Sanitizer reported' "$log" &&
		sed -n '/^FAIL: .*Sanitizer reported/,+40p' "$log" | sed 's/^/      | /'
	   tail -15 "$log" | sed 's/^/      | /';;
	esac
}

for layer in $layers; do
	case $layer in
	unit)
		for t in "$BUILD"/tests/test_*; do
			[ -x "$t" ] && run_one "unit/$(basename "$t")" "$t"
		done;;
	fuzz)
		if [ -x "$BUILD/tests/fuzz_replay" ]; then
			run_one fuzz/replay "$BUILD/tests/fuzz_replay" tests/fuzz/corpus
		fi;;
	*)
		for t in tests/$layer/*; do
			[ -f "$t" ] && [ -x "$t" ] || continue
			run_one "$layer/$(basename "$t")" "$t"
		done;;
	esac
done

echo
[ ${#failed[@]} -gt 0 ] && printf 'failed: %s\n' "${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
