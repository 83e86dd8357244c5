#!/bin/bash
# SPDX-License-Identifier: MIT
# `make fuzz FUZZ_S=N`: runs every harness for N seconds (FUZZ_ONLY=NAME
# for one), starting from the committed seeds plus what earlier runs found
# (build/fuzz/corpus/HARNESS/), and prints per harness: executions, their
# rate, libFuzzer's coverage (cov: edges, ft: features) and corpus size.
# A crash, leak, sanitizer report or hang (-timeout=10) is copied into
# tests/fuzz/crashes/HARNESS/ (which `make test` replays from then on) and
# fails the run.
#
# Usage: run-fuzz.sh BINDIR SECONDS
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
bindir=${1:-$top/build/fuzz/fuzz}
secs=${2:-60}
only=${FUZZ_ONLY:-}
work=$top/build/fuzz/corpus
logs=$top/build/fuzz/logs
art=$top/build/fuzz/artifacts
mkdir -p "$work" "$logs" "$art"
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=0
printf '%-8s %10s %8s %6s %7s %7s  %s\n' harness execs exec/s cov ft corpus result
for bin in "$bindir"/fuzz-*; do
	[ -x "$bin" ] || continue
	name=${bin##*/fuzz-}
	[ -n "$only" ] && [ "$name" != "$only" ] && continue
	mkdir -p "$work/$name" "$art/$name"
	log=$logs/$name.log
	"$bin" -max_total_time="$secs" -print_final_stats=1 -timeout=10 \
		-rss_limit_mb=3072 -artifact_prefix="$art/$name/" \
		"$work/$name" "$top/tests/fuzz/corpus/$name" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	last=$(grep -E '^#[0-9]+' "$log" | tail -1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
	result=ok
	if [ $rc -ne 0 ]; then
		failed=$((failed + 1))
		result="FAILED (log: ${log#"$top"/})"
		for a in "$art/$name"/*; do
			[ -f "$a" ] || continue
			mkdir -p "$top/tests/fuzz/crashes/$name"
			cp "$a" "$top/tests/fuzz/crashes/$name/"
			result="$result; input: tests/fuzz/crashes/$name/${a##*/}"
			rm -f "$a"
		done
	fi
	printf '%-8s %10s %8s %6s %7s %7s  %s\n' "$name" "${execs:-?}" \
		"${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result"
done
[ $failed -eq 0 ]
