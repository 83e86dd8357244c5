#!/bin/bash
# SPDX-License-Identifier: MIT
# The reproduction pack's smoke: one cheap reproducer (mdadm-md-number: 4
# iSCSI disks and mdadm) run by `sdswarm-testhost repro --release both`, one
# boot on each release, with opposite verdicts: bookworm's mdadm 4.2
# creates /dev/md1100, trixie's 4.4 refuses it. The runner's exit status
# is 0 only when each verdict is the one the header expects; the records
# (--save) and the table made of them say the same. Skips when QEMU or a
# release's kernel package cannot be had.
# test-timeout: 900
. "$(dirname "$0")/../lib/vm-smoke.sh"
vm_smoke_requires sdnum
t=$(tmpdir)
run=$SDSWARM_TOP/testhost/repro/run

out=$("$run" --release both --save "$t/res" mdadm-md-number 2>"$t/err")
rc=$?
cat "$t/err"
echo "$out"
grep -q '^SKIP:' <<<"$out" && skip "$(grep -m1 '^SKIP:' <<<"$out")"
expect_eq "repro --release both mdadm-md-number: every verdict as expected" 0 "$rc"
check "bookworm: NOT REPRODUCED (mdadm 4.2 creates md1100)" \
	grep -qP '^verdict\tNOT REPRODUCED$' "$t/res/bookworm/mdadm-md-number.tsv"
check "  ... its software line names mdadm 4.2" grep -qP '^software\tmdadm - v4\.2' "$t/res/bookworm/mdadm-md-number.tsv"
check "trixie: REPRODUCED (mdadm 4.4 refuses md1100)" \
	grep -qP '^verdict\tREPRODUCED$' "$t/res/trixie/mdadm-md-number.tsv"
check "  ... its software line names mdadm 4.4" grep -qP '^software\tmdadm - v4\.4' "$t/res/trixie/mdadm-md-number.tsv"
tab=$("$run" --table --results "$t/res" mdadm-md-number)
echo "$tab"
check "the table's row has both verdicts, neither marked unexpected" \
	eval 'grep "^| \`mdadm-md-number\` | \*\*NOT REPRODUCED\*\* in [^;]*; mdadm .* | \*\*REPRODUCED\*\* in [^;]*; mdadm " <<<"$tab" | grep -qv expected'
finish
