#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerates the committed seed corpora, tests/fuzz/corpus/HARNESS/, from
# gen-seeds (built by `make SANITIZE=fuzz fuzz-build`) and configs/*.conf.
# `make fuzz-corpus` runs it. Crash inputs (tests/fuzz/crashes/) are kept.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
gen=${1:-$top/build/fuzz/fuzz/gen-seeds}
corpus=$top/tests/fuzz/corpus

[ -x "$gen" ] || { echo "gen-corpus: no $gen (make SANITIZE=fuzz fuzz-build)" >&2; exit 1; }
rm -rf "$corpus"
mkdir -p "$corpus/config"
"$gen" "$corpus"
for f in "$top"/configs/*.conf; do
	cp "$f" "$corpus/config/$(basename "$f" .conf)"
done
for d in "$corpus"/*/; do
	printf '%-8s %3d files %6d bytes\n' "$(basename "$d")" \
		"$(find "$d" -type f | wc -l)" "$(cat "$d"/* | wc -c)"
done
