#!/bin/bash
# SPDX-License-Identifier: MIT
# sdnum on the command line: answers, batch mode over a million inputs, and
# the error behaviour (message naming the input, exit 1, aligned batch lines;
# a command line not understood exits 2); alloc, the sd driver's index
# allocator: lowest free index first, freed names reused, every bad event an
# error naming its line, exit 1.
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
for bad in "parse sda0" "parse sdA" "parse sda256" "name 2147483648" \
	"name 0 256" "devt 1048576" "decode 8" "decode 3:0" "devt 0 16"; do
	# shellcheck disable=SC2086
	out=$($S $bad 2>"$T/err"); rc=$?
	if [ $rc -ne 1 ] || [ -n "$out" ] || [ ! -s "$T/err" ]; then
		fail "sdnum $bad: want exit 1, empty stdout, a message (rc=$rc out='$out')"
	else
		ok "sdnum $bad -> $(head -1 "$T/err")"
	fi
done
# a command line not understood: exit 2, a message, nothing on stdout
for bad in "name -1" "bogus" "--scheme nope devt 0" "name" "name 1 2 3"; do
	# shellcheck disable=SC2086
	out=$($S $bad 2>"$T/err"); rc=$?
	if [ $rc -ne 2 ] || [ -n "$out" ] || [ ! -s "$T/err" ]; then
		fail "sdnum $bad: want exit 2, empty stdout, a message (rc=$rc out='$out')"
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
# a read that fails is an error, never the end of the input: a directory
# as standard input (EISDIR), and /dev/zero, a line that never ends, under
# a memory limit (ENOMEM; the plain build: ASan does not fit under ulimit -v)
$S name - <"$T" >"$T/out" 2>"$T/err"; rc=$?
expect_eq "batch from a directory: exit" 1 "$rc"
check "batch from a directory: message" grep -qxF "sdnum: standard input: read error: Is a directory" "$T/err"
$S alloc - <"$T" >"$T/out" 2>"$T/err"; rc=$?
expect_eq "alloc from a directory: exit" 1 "$rc"
P=$SDSWARM_PLAIN_BIN/sdnum
if [ -x "$P" ]; then
	(ulimit -v 200000 && exec "$P" name - </dev/zero) >"$T/out" 2>"$T/err"; rc=$?
	expect_eq "batch of /dev/zero under ulimit -v: exit" 1 "$rc"
	check "batch of /dev/zero: message" grep -qxF "sdnum: standard input: read error: Cannot allocate memory" "$T/err"
	(ulimit -v 200000 && exec "$P" alloc - </dev/zero) >"$T/out" 2>"$T/err"; rc=$?
	expect_eq "alloc of /dev/zero under ulimit -v: exit" 1 "$rc"
else
	echo "note: no $P: /dev/zero under a memory limit not read"
fi
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
# --- alloc: the sd driver's ida, replayed --------------------------------
expect_eq "alloc: adds take 0, 1, 2" "add 0 sda 8:0|add 1 sdb 8:16|add 2 sdc 8:32" \
	"$($S alloc add add add | tr '\n' '|' | sed 's/|$//')"
# Removes free sdd then sdb; the adds get them back lowest first, then 5.
$S alloc add add add add add remove sdd remove sdb add add add >"$T/out"; rc=$?
expect_eq "alloc: reuse exit status" 0 "$rc"
expect_eq "alloc: removes print the name freed" "remove 3 sdd 8:48|remove 1 sdb 8:16" \
	"$(grep '^remove' "$T/out" | tr '\n' '|' | sed 's/|$//')"
expect_eq "alloc: freed names reused lowest first" "sdb sdd sdf" \
	"$(tail -3 "$T/out" | cut -d' ' -f3 | tr '\n' ' ' | sed 's/ $//')"
# Past 16 disks the major changes: index 16 is 65:0 however it was reached.
expect_eq "alloc: the 17th disk is sdq 65:0" "add 16 sdq 65:0" \
	"$($S alloc $(yes add | head -17) | tail -1)"
# Tags: a LUN or WWN names the disk for its remove.
printf 'add lun0\nadd lun1\n\n# a comment\nadd lun2  # and another\nremove lun1\nremove 0\nadd lun9\nadd\n' |
	$S alloc >"$T/out"; rc=$?
expect_eq "alloc: tagged exit status" 0 "$rc"
expect_eq "alloc: remove by tag and by index, reuse" \
	"add 0 sda 8:0 lun0|add 1 sdb 8:16 lun1|add 2 sdc 8:32 lun2|remove 1 sdb 8:16 lun1|remove 0 sda 8:0 lun0|add 0 sda 8:0 lun9|add 1 sdb 8:16" \
	"$(tr '\n' '|' <"$T/out" | sed 's/|$//')"
expect_eq "alloc: a freed tag can be given again" "add 0 sda 8:0 x|remove 0 sda 8:0 x|add 0 sda 8:0 x" \
	"$($S alloc add x remove x add x | tr '\n' '|' | sed 's/|$//')"
expect_eq "alloc --prefix vd" "add 0 vda 8:0" "$($S --prefix vd alloc add)"
expect_eq "alloc --scheme legacy 255" "add 255 sdiv 135:240" \
	"$($S --scheme legacy alloc $(yes add | head -256) | tail -1)"
# JSON: one document, the same answers, and the next index.
printf 'add lun0\nadd lun1\nadd\nremove lun0\n' | $S alloc --json >"$T/json"; rc=$?
expect_eq "alloc --json exit status" 0 "$rc"
expect_eq "alloc --json" '{"scheme":"linux","prefix":"sd","events":[{"line":1,"event":"add","index":0,"name":"sda","devt":"8:0","tag":"lun0"},{"line":2,"event":"add","index":1,"name":"sdb","devt":"8:16","tag":"lun1"},{"line":3,"event":"add","index":2,"name":"sdc","devt":"8:32","tag":null},{"line":4,"event":"remove","index":0,"name":"sda","devt":"8:0","tag":"lun0"}],"in_use":2,"next":0}' \
	"$(cat "$T/json")"
if command -v python3 >/dev/null 2>&1; then
	check "alloc --json parses as JSON" python3 -c 'import json, sys; json.load(sys.stdin)' <"$T/json"
fi
expect_eq "sdnum --json alloc (the global option)" \
	'{"scheme":"linux","prefix":"sd","events":[{"arg":1,"event":"add","index":0,"name":"sda","devt":"8:0","tag":"a\"b"}],"in_use":1,"next":1}' \
	"$($S --json alloc add 'a"b')"

# Bad events: exit 1, stderr names the line (or argument) and why; the
# answers before it are printed (none with --json).
printf 'add\nadd\nremove sdq\nadd\n' | $S alloc >"$T/out" 2>"$T/err"; rc=$?
expect_eq "alloc: a name never allocated exits 1" 1 "$rc"
check "alloc: the message names line 3 and sdq" grep -q '^sdnum alloc: line 3 (remove sdq): sdq (index 16) was never allocated' "$T/err"
expect_eq "alloc: answers before the bad line, none after" "add 0 sda 8:0|add 1 sdb 8:16" \
	"$(tr '\n' '|' <"$T/out" | sed 's/|$//')"
printf 'add\nremove sdz\n' | $S alloc --json >"$T/out" 2>"$T/err"; rc=$?
expect_eq "alloc --json: a bad line exits 1" 1 "$rc"
check "alloc --json: nothing on stdout after a bad line" test ! -s "$T/out"
for bad in "remove sda" "add remove sdb" "add add remove sda remove sda" \
	"add remove 1" "add remove lun7" "add lun1 add lun1" "add 12" "add sdc" \
	"add remove sda1" "add remove sdzzzzzzzz" "add remove 99999999999" \
	"frob" "add remove" "add --json"; do
	# shellcheck disable=SC2086
	$S alloc -- $bad >/dev/null 2>"$T/err"; rc=$?
	if [ $rc -ne 1 ] || ! grep -q '^sdnum alloc: argument [0-9]* (' "$T/err"; then
		fail "sdnum alloc $bad: want exit 1 and a message naming the argument (rc=$rc: $(cat "$T/err"))"
	else
		ok "sdnum alloc $bad -> $(head -1 "$T/err")"
	fi
done
printf 'add\nadd lun1\nadd x y\n' | $S alloc >/dev/null 2>"$T/err"; rc=$?
expect_eq "alloc: too many fields exits 1" 1 "$rc"
check "alloc: ... naming line 3" grep -q '^sdnum alloc: line 3 ' "$T/err"
$S --scheme legacy alloc $(yes add | head -257) >/dev/null 2>"$T/err"; rc=$?
expect_eq "alloc: the 257th legacy disk has no index" 1 "$rc"
check "alloc: ... and says so" grep -q 'argument 257 (add): no free index' "$T/err"
$S alloc --bogus >/dev/null 2>&1; rc=$?
expect_eq "alloc: an unknown option exits 2" 2 "$rc"
$S --json name 1 >/dev/null 2>&1; rc=$?
expect_eq "--json with another command exits 2" 2 "$rc"

# Against a model: 20,000 random adds and removes (removes of a present
# disk by index, name or tag); every add must be the lowest free index.
awk 'function sdname(i,   s) { # bijective base 26
		for (s = ""; i >= 0; i = int(i / 26) - 1)
			s = substr("abcdefghijklmnopqrstuvwxyz", i % 26 + 1, 1) s
		return "sd" s
	}
	BEGIN {
	srand(6); n = 0
	for (e = 0; e < 20000; e++) {
		if (n > 0 && rand() < 0.45) {
			k = int(rand() * n); i = pres[k]; pres[k] = pres[--n]; delete used[i]
			r = rand()
			print (r < 0.3 ? "remove " i : r < 0.6 ? "remove " sdname(i) : "remove t" i) > "/dev/stderr"
			continue
		}
		for (i = 0; i in used; i++) ;
		used[i] = 1; pres[n++] = i
		print "add t" i > "/dev/stderr"
		print i, sdname(i)
	}
}' 2>"$T/events" >"$T/want"
$S alloc <"$T/events" >"$T/out"; rc=$?
expect_eq "alloc: the random run's exit status" 0 "$rc"
check "alloc: every add of the random run is the lowest free index" \
	cmp -s "$T/want" <(awk '$1 == "add" { print $2, $3 }' "$T/out")
check "alloc: the random run reused freed indices" \
	test "$(sort -u "$T/want" | wc -l)" -lt "$(wc -l <"$T/want")"
expect_eq "alloc: every event answered" "$(wc -l <"$T/events")" "$(wc -l <"$T/out")"
finish
