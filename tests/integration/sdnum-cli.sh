#!/bin/bash
# SPDX-License-Identifier: MIT
# sdnum on the command line: answers, batch mode over a million inputs, and
# the error behaviour (message naming the input, exit 1, aligned batch lines).
. "$(dirname "$0")/../lib/common.sh"
S=$SDSWARM_BIN/sdnum
[ -x "$S" ] || skip "no $S (build first)"
T=$(tmpdir)

expect_eq "name 0" sda "$($S name 0)"
expect_eq "name 701" sdzz "$($S name 701)"
expect_eq "name 702" sdaaa "$($S name 702)"
expect_eq "name 18278" sdaaaa "$($S name 18278)"
expect_eq "name 262143 63" sdnwtl63 "$($S name 262143 63)"
expect_eq "name 1048575" sdbgqcv "$($S name 1048575)"
expect_eq "name --prefix vd 27" vdab "$($S --prefix vd name 27)"
expect_eq "parse sdaa12" "26 12" "$($S parse sdaa12)"
expect_eq "devt linux 1" "8:16" "$($S devt 1)"
expect_eq "devt linux 16" "65:0" "$($S devt 16)"
expect_eq "devt linux 256 1" "8:257" "$($S devt 256 1)"
expect_eq "devt linux 262143 15" "135:262143" "$($S devt 262143 15)"
expect_eq "devt legacy 255 15" "135:255" "$($S --scheme legacy devt 255 15)"
expect_eq "devt wilcox 0 16" "8:262144" "$($S --scheme wilcox devt 0 16)"
expect_eq "devt naive 1" "8:64" "$($S --scheme naive devt 1)"
expect_eq "devt dynamic 16384 2" "385:2" "$($S --scheme dynamic devt 16384 2)"
expect_eq "devt linux ext predicted" "259:48" "$($S --parts 63 devt 1 16)"
expect_eq "decode 8:16" "1 0 sdb" "$($S decode 8:16)"
expect_eq "decode 135:1048575" "1048575 15 sdbgqcv15" "$($S decode 135:1048575)"
expect_eq "decode naive 8:16" "0 16 sda16" "$($S --scheme naive decode 8:16)"
expect_eq "decode wilcox 8:262145" "0 17 sda17" "$($S --scheme wilcox decode 8:262145)"
expect_eq "encode 8:16" "kernel=0x00800010 new=0x00000810 old=0x0810 makedev=0x0000000000000810" "$($S encode 8:16)"
check "table names sdaaaa at 18278" grep -q '18278 sdaaaa' <($S table)
check "table linux major 135 holds disk 240" grep -qE '^  135 +240 sdig' <($S table)
check "schemes lists five" test "$($S schemes | tail -n +2 | wc -l)" -eq 5
check "--help" grep -q "usage: sdnum" <($S --help)

# errors: stderr names the input and why, exit 1, nothing on stdout
for bad in "parse sda0" "parse sdA" "parse sda256" "name -1" "name 2147483648" \
	"name 0 256" "devt 1048576" "decode 8" "decode 3:0" "devt 0 16" "bogus" \
	"--scheme nope devt 0" "name" "name 1 2 3"; do
	# shellcheck disable=SC2086
	out=$($S $bad 2>"$T/err"); rc=$?
	if [ $rc -ne 1 ] || [ -n "$out" ] || [ ! -s "$T/err" ]; then
		fail "sdnum $bad: want exit 1, empty stdout, a message (rc=$rc out='$out')"
	else
		ok "sdnum $bad -> $(head -1 "$T/err")"
	fi
done
grep -q "'sda0'" <($S parse sda0 2>&1) && ok "message names the input" || fail "message does not name the input"

# batch: a bad line answers "error: ..." in place, the rest are answered, exit 1
printf '702\n702 5\nbad\n18278 256\n1\n' | $S name - >"$T/out"; rc=$?
expect_eq "batch exit status" 1 "$rc"
expect_eq "batch answers aligned" "sdaaa|sdaaa5|error|error|sdb" \
	"$(cut -d: -f1 "$T/out" | tr '\n' '|' | sed 's/|$//')"
printf '8:16\n3:0\n' | $S decode - >"$T/out"; rc=$?
expect_eq "batch decode" "1 0 sdb|error: not a number of this scheme" "$(tr '\n' '|' <"$T/out" | sed 's/|$//')"
expect_eq "batch decode exit" 1 "$rc"

# a million answers in one process: every index through name then parse
seq 0 1048575 >"$T/idx"
$S name - <"$T/idx" >"$T/names" || fail "batch name over 2^20 failed"
expect_eq "million names" 1048576 "$(wc -l <"$T/names")"
expect_eq "unique names" 1048576 "$(sort -u "$T/names" | wc -l)"
$S parse - <"$T/names" | cut -d' ' -f1 >"$T/back" || fail "batch parse failed"
check "parse(name(i)) == i for 2^20 indices" cmp -s "$T/idx" "$T/back"
finish
