#!/bin/bash
# SPDX-License-Identifier: MIT
# The fuzz harnesses in make test: every past crash input
# (tests/fuzz/crashes/HARNESS/) must now run clean, then each harness
# replays its committed seed corpus and runs a short, fixed-seed fuzzing
# pass (FUZZ_RUNS executions, default 2000) with ASan+UBSan. Needs the
# clang build: make SANITIZE=fuzz fuzz-build (make test does it).
. "$(dirname "$0")/../lib/common.sh"

bindir=${SDSWARM_FUZZ:-$SDSWARM_TOP/build/fuzz/fuzz}
runs=${FUZZ_RUNS:-2000}
src=$SDSWARM_TOP/tests/fuzz
ls "$bindir"/fuzz-* >/dev/null 2>&1 ||
	skip "no fuzz harnesses in $bindir (make SANITIZE=fuzz fuzz-build; needs clang)"
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
tmp=$(tmpdir)

for c in "$src"/corpus/*/; do
	name=$(basename "$c")
	[ -x "$bindir/fuzz-$name" ] || fail "corpus $name has no harness fuzz-$name"
done
for bin in "$bindir"/fuzz-*; do
	name=${bin##*/fuzz-}
	[ -d "$src/corpus/$name" ] || fail "fuzz-$name has no seed corpus"
	# past crashes, one by one: each is a regression case now
	n=0
	for f in "$src/crashes/$name"/*; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		if "$bin" -timeout=10 "$f" >"$tmp/$name.crash.log" 2>&1; then
			:
		else
			cat "$tmp/$name.crash.log"
			fail "fuzz-$name: crash input ${f#"$SDSWARM_TOP"/} fails again"
		fi
	done
	# the seeds, then a short run from them (fixed seed: reproducible)
	mkdir -p "$tmp/$name" "$tmp/art-$name"
	if "$bin" -runs="$runs" -seed=1 -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$tmp/art-$name/" -print_final_stats=1 \
		"$tmp/$name" "$src/corpus/$name" >"$tmp/$name.log" 2>&1; then
		ok "fuzz-$name: $n crash input(s) clean, seeds and $(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/$name.log") runs clean, $(grep -E '^#[0-9]+' "$tmp/$name.log" | tail -1 | sed -n 's/.*\(cov: [0-9]*\).*/\1/p')"
	else
		tail -60 "$tmp/$name.log"
		for a in "$tmp/art-$name"/*; do
			[ -f "$a" ] && echo "input (base64): $(base64 -w0 "$a")"
		done
		fail "fuzz-$name: the short run failed (add the input above to tests/fuzz/crashes/$name/ once fixed)"
	fi
done
finish
