#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs every test: the unit binaries (built under ASan+UBSan), then the
# integration, conformance and VM-smoke scripts. Each gets a timeout and a log
# in build/tests/NAME.log; a log with a sanitizer report fails its test.
# Prints PASS/FAIL/SKIP per test, the five slowest, then exactly
# "N passed, N failed" (skips on the line before). Exit 1 on any failure.
#
# Environment: SDSWARM_UNIT (unit binaries), SDSWARM_BIN (programs under
# test), TEST_TIMEOUT (seconds, default 300, or a script's own
# "# test-timeout: S" line), TESTS (a pattern to select).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. "$top/scripts/lib/sanitizer.sh"
unit=${SDSWARM_UNIT:-$top/build/address/tests/unit}
export SDSWARM_BIN=${SDSWARM_BIN:-$top/build/address/bin}
export SDSWARM_PLAIN_BIN=${SDSWARM_PLAIN_BIN:-$top/build/bin}
export SDSWARM_TOP=$top
logdir=$top/build/tests
mkdir -p "$logdir"
timeout_s=${TEST_TIMEOUT:-300}
pattern=${TESTS:-}

# Leak checking works only where ptrace-like sanitizer threads are allowed;
# detect_leaks stays on, and abort_on_error makes a report fail the test.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

pass=0 fail=0 skip=0
times=()
failed=()

run_one() { # name cmd...
	local name=$1; shift
	[ -n "$pattern" ] && [[ $name != *$pattern* ]] && return
	local log=$logdir/$name.log
	local t0 t1 rc
	mkdir -p "$(dirname "$log")"
	# a script may ask for more with a "# test-timeout: S" line (a VM
	# smoke under TCG); TEST_TIMEOUT, when set, applies to all
	local limit=$timeout_s own
	if [ -z "${TEST_TIMEOUT:-}" ] && [ -f "$1" ]; then
		own=$(sed -n 's/^# test-timeout: \([0-9][0-9]*\)$/\1/p' "$1" | head -1)
		[ -n "$own" ] && limit=$own
	fi
	t0=$(date +%s.%N)
	timeout -k 10 "$limit" "$@" >"$log" 2>&1 </dev/null
	rc=$?
	t1=$(date +%s.%N)
	local dt
	dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	if [ $rc -ne 77 ] && sanitizer_report "$log"; then
		rc=99
	fi
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS %-40s %7ss\n' "$name" "$dt" ;;
	77) skip=$((skip + 1))
	    why=$(grep -m1 -i 'skip' "$log" | cut -c1-100)
	    printf 'SKIP %-40s %7ss  %s\n' "$name" "$dt" "$why" ;;
	*) fail=$((fail + 1)); failed+=("$name")
	   what=timeout; [ $rc -ne 124 ] && [ $rc -ne 137 ] && what="exit $rc"
	   [ $rc -eq 99 ] && what="sanitizer report"
	   printf 'FAIL %-40s %7ss  (%s; log: %s)\n' "$name" "$dt" "$what" "${log#"$top"/}" ;;
	esac
	times+=("$dt $name")
}

for t in "$unit"/test-*; do
	[ -x "$t" ] || continue
	run_one "unit/$(basename "$t")" "$t"
done
for dir in integration conformance vm-smoke; do
	[ -d "tests/$dir" ] || continue
	for t in tests/$dir/*.sh; do
		[ -x "$t" ] || continue
		run_one "$dir/$(basename "$t" .sh)" "$t"
	done
done

echo
echo "slowest:"
printf '%s\n' "${times[@]}" | sort -rn | head -5 | awk '{ printf "  %7ss  %s\n", $1, $2 }'
if [ ${#failed[@]} -gt 0 ]; then
	echo "failed: ${failed[*]}"
fi
echo "$skip skipped"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && [ $((pass + fail)) -gt 0 ]
