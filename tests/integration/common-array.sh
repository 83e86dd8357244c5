#!/bin/bash
# SPDX-License-Identifier: MIT
# common/array.h: ARRAY_SIZE of an array compiles (gcc and clang), of a
# pointer does not (the answer would silently be sizeof(ptr) / sizeof(elem)).
. "$(dirname "$0")/../lib/common.sh"
requires cc
T=$(tmpdir)
cat >"$T/ok.c" <<'C'
#include "array.h"
int x[7];
_Static_assert(ARRAY_SIZE(x) == 7, "seven");
int main(void) { return (int)ARRAY_SIZE(x) - 7; }
C
cat >"$T/bad.c" <<'C'
#include "array.h"
int x[7];
int main(void) { int *p = x; return (int)ARRAY_SIZE(p); }
C
for c in cc clang; do
	command -v $c >/dev/null || { echo "no $c: its half skipped"; continue; }
	check "$c: an array compiles" $c -Werror -Wall -Wextra -I"$SDSWARM_TOP/common" -o "$T/ok" "$T/ok.c"
	check "$c: and counts 7" "$T/ok"
	if $c -I"$SDSWARM_TOP/common" -o "$T/bad" "$T/bad.c" 2>"$T/err.$c"; then
		check "$c: a pointer is refused" false
	else
		check "$c: a pointer is refused, naming why" grep -q 'not_an_array_\|bit-field' "$T/err.$c"
	fi
done
finish
