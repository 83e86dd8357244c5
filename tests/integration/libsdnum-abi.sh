#!/bin/bash
# SPDX-License-Identifier: MIT
# libsdnum.so's ABI: it exports exactly the sdnum_* symbols of sdnum.h, each
# under the version node SDNUM_0.1 (numbering/libsdnum.map), and a program
# built against sdnum.h and linked with the shared library runs and names
# disks as the static library does.
. "$(dirname "$0")/../lib/common.sh"
requires nm cc
SO=$SDSWARM_PLAIN_BIN/../lib/libsdnum.so.0
[ -f "$SO" ] || skip "no $SO (make builds it)"
T=$(tmpdir)

# nm -D prints a versioned symbol as NAME@@VERSION
nm -D --defined-only "$SO" | awk '$2 != "A" { print $3 }' | sort >"$T/versioned"
sed 's/@.*//' "$T/versioned" >"$T/exported"
check "exports something" test -s "$T/exported"
expect_eq "every export is sdnum_*" "" "$(grep -v '^sdnum_' "$T/exported")"
expect_eq "every export is versioned SDNUM_0.1" "" "$(grep -v '@@SDNUM_0\.1$' "$T/versioned")"
# every exported function is declared in the public header
for f in $(cat "$T/exported"); do
	grep -qw "$f" "$SDSWARM_TOP/numbering/sdnum.h" || echo "$f" >>"$T/undeclared"
done
expect_eq "every export is in sdnum.h" "" "$(cat "$T/undeclared" 2>/dev/null)"

cat >"$T/use.c" <<'C'
#include <stdio.h>
#include "sdnum.h"
int main(void)
{
	char buf[32];
	if (sdnum_name("sd", 18278, buf, sizeof(buf)) < 0)
		return 1;
	puts(buf);
	return 0;
}
C
check "a program links against the shared library" \
	cc -I"$SDSWARM_TOP/numbering" -o "$T/use" "$T/use.c" -L"$(dirname "$SO")" -l:libsdnum.so.0
expect_eq "and names disk 18278" sdaaaa "$(LD_LIBRARY_PATH=$(dirname "$SO") "$T/use")"
finish
