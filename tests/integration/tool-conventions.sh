#!/bin/bash
# SPDX-License-Identifier: MIT
# The conventions the four tools share: --version (one string, the same in
# all four); exit status 0 success, 1 runtime failure, 2 usage error (the
# shell benchmarks, bench/*.sh and bench/run, too); options
# before or after the subcommand; the command line checked before sdswarm
# connects; "did you mean" for mistyped commands and options; SDSWARM_CONTROL
# for the socket; an EXIT STATUS section in every man page saying so.
. "$(dirname "$0")/../lib/common.sh"
B=$SDSWARM_BIN
for t in sdswarmd sdswarm sdnum sdswarm-bench; do
	[ -x "$B/$t" ] || skip "no $B/$t (build first)"
done
T=$(tmpdir)

# rc WANT DESC CMD...: run CMD (stdout and stderr to $T/out), check its status
rc() {
	local want=$1 desc=$2 got
	shift 2
	"$@" >"$T/out" 2>&1
	got=$?
	if [ "$got" = "$want" ]; then
		ok "$desc: exit $want"
	else
		fail "$desc: want exit $want, got $got: $(head -3 "$T/out")"
	fi
}
said() { # DESC PATTERN: the last command's output matches PATTERN
	if grep -qE -- "$2" "$T/out"; then ok "$1"; else fail "$1: no /$2/ in: $(head -3 "$T/out")"; fi
}

# --- --version -------------------------------------------------------------
v=
for t in sdswarmd sdswarm sdnum sdswarm-bench; do
	rc 0 "$t --version" "$B/$t" --version
	line=$(cat "$T/out")
	check "$t --version is one line 'NAME VERSION'" \
		grep -qxE "$t [0-9A-Za-z][0-9A-Za-z._+-]*" <<<"$line"
	[ -z "$v" ] && v=${line#* }
	expect_eq "$t --version is the build's one version" "$v" "${line#* }"
done
if git -C "$SDSWARM_TOP" rev-parse --git-dir >/dev/null 2>&1; then
	# git describe --always: the short commit the build ran on, maybe -dirty
	check "the version names a commit of this repository" \
		git -C "$SDSWARM_TOP" cat-file -e "${v%-dirty}^{commit}"
fi

# --- exit 0: help ------------------------------------------------------------
for t in sdswarmd sdswarm sdnum sdswarm-bench; do
	rc 0 "$t --help" "$B/$t" --help
done

# --- exit 2: usage errors, with "did you mean" ---------------------------------
rc 2 "sdswarmd --lunz 3" "$B/sdswarmd" --lunz 3
said "sdswarmd: did you mean --luns" "did you mean --luns\?"
rc 2 "sdswarmd --luns many" "$B/sdswarmd" --luns many
rc 2 "sdswarmd with an operand" "$B/sdswarmd" status
rc 2 "sdswarm with no command" "$B/sdswarm"
rc 2 "sdswarm luns" "$B/sdswarm" --control "$T/none" luns
said "sdswarm luns: did you mean lun" "did you mean lun\?"
rc 2 "sdswarm stauts" "$B/sdswarm" --control "$T/none" stauts
said "sdswarm stauts: did you mean stats or status" "did you mean stat(u)?s\?"
rc 2 "sdswarm fault sett" "$B/sdswarm" --control "$T/none" fault sett
said "sdswarm fault sett: did you mean set" "did you mean set\?"
rc 2 "sdswarm status --lnu 3" "$B/sdswarm" --control "$T/none" status --lnu 3
said "sdswarm status --lnu: did you mean --lun" "did you mean --lun\?"
rc 2 "sdswarm --jsno status" "$B/sdswarm" --jsno status
said "sdswarm --jsno: did you mean --json" "did you mean --json\?"
rc 2 "sdswarm lun remove (which LUN?)" "$B/sdswarm" --control "$T/none" lun remove
rc 2 "sdswarm lun add x" "$B/sdswarm" --control "$T/none" lun add x
rc 2 "sdnum dvet 1" "$B/sdnum" dvet 1
said "sdnum dvet: did you mean devt" "did you mean devt\?"
rc 2 "sdnum --schme legacy devt 1" "$B/sdnum" --schme legacy devt 1
said "sdnum --schme: did you mean --scheme" "did you mean --scheme\?"
rc 2 "sdnum --scheme legasy devt 1" "$B/sdnum" --scheme legasy devt 1
said "sdnum legasy: did you mean legacy" "did you mean legacy\?"
rc 2 "sdnum name (no index)" "$B/sdnum" name
rc 2 "sdnum alloc --jsno" "$B/sdnum" alloc --jsno
rc 2 "sdswarm-bench numbrering" "$B/sdswarm-bench" numbrering
said "sdswarm-bench numbrering: did you mean numbering" "did you mean numbering\?"
rc 2 "sdswarm-bench numbering --jsno" "$B/sdswarm-bench" numbering --jsno
said "sdswarm-bench --jsno: did you mean --json" "did you mean --json\?"
rc 2 "sdswarm-bench target --luns 0" "$B/sdswarm-bench" target --luns 0
rc 2 "sdswarm-bench mktree (no DIR)" "$B/sdswarm-bench" mktree --disks 2

# --- the shell benchmarks keep the same statuses ---------------------------------
# (checked before they look for their tools, so no tgt or iscsi-ls is needed)
for s in bench/iscsi-ls-scale.sh bench/iscsi-vs-tgt.sh bench/run; do
	rc 2 "$s (no BIN_DIR)" "$SDSWARM_TOP/$s"
	said "$s: prints its usage" "^usage: $s BIN_DIR"
done
for s in bench/iscsi-ls-scale.sh bench/iscsi-vs-tgt.sh; do
	rc 2 "$s --jsno" "$SDSWARM_TOP/$s" "$B" --jsno
	said "$s --jsno: names the argument" "unknown argument '--jsno'"
done
rc 2 "bench/iscsi-ls-scale.sh --luns 100" "$SDSWARM_TOP/bench/iscsi-ls-scale.sh" "$B" --luns 100
rc 2 "bench/iscsi-ls-scale.sh --luns (no value)" "$SDSWARM_TOP/bench/iscsi-ls-scale.sh" "$B" --luns
rc 2 "bench/iscsi-vs-tgt.sh --seconds soon" "$SDSWARM_TOP/bench/iscsi-vs-tgt.sh" "$B" --seconds soon
rc 2 "bench/run BIN_DIR numbrering (no such step)" "$SDSWARM_TOP/bench/run" "$B" numbrering
said "bench/run: names the step" "no step named: numbrering"
rc 1 "bench/run on a folder with no sdswarm-bench" "$SDSWARM_TOP/bench/run" "$T/missing"

# --- exit 1: understood, but it failed -----------------------------------------
rc 1 "sdswarmd --config (missing file)" "$B/sdswarmd" --config "$T/missing.conf" --check
rc 1 "sdswarm status (no daemon)" "$B/sdswarm" --control "$T/none" status
rc 1 "sdnum parse sda0" "$B/sdnum" parse sda0
rc 1 "sdnum alloc remove sdb (never allocated)" "$B/sdnum" alloc remove sdb
rc 1 "sdswarm-bench open-all (missing DIR)" "$B/sdswarm-bench" open-all "$T/missing" --quick

# --- options before or after the subcommand -------------------------------------
expect_eq "sdnum devt --scheme legacy 0 1" "8:1" "$("$B/sdnum" devt --scheme legacy 0 1)"
expect_eq "sdnum --scheme legacy devt 0 1" "8:1" "$("$B/sdnum" --scheme legacy devt 0 1)"
expect_eq "sdnum devt 0 1 --scheme=legacy" "8:1" "$("$B/sdnum" devt 0 1 --scheme=legacy)"
rc 1 "sdswarm status --control PATH" "$B/sdswarm" status --control "$T/after"
said "... is honoured (the error names PATH)" "$T/after"
rc 1 "sdswarm status --control=PATH" "$B/sdswarm" status --control="$T/after2"
said "... is honoured (the error names PATH)" "$T/after2"
rc 0 "sdswarm-bench --quick mktree DIR --disks 3" \
	"$B/sdswarm-bench" --quick mktree "$T/tree" --disks 3 --parts 1
check "... made the tree (sdc1)" test -e "$T/tree/sdc1"

# --- SDSWARM_CONTROL -----------------------------------------------------------
SDSWARM_CONTROL=$T/env.sock rc 1 "sdswarm status (SDSWARM_CONTROL, no daemon)" "$B/sdswarm" status
said "... the error names \$SDSWARM_CONTROL" "$T/env.sock"
SDSWARM_CONTROL=$T/env.sock rc 1 "--control beats SDSWARM_CONTROL" "$B/sdswarm" --control "$T/flag.sock" status
said "... the error names the flag's path" "$T/flag.sock"
# the daemon listens on $SDSWARM_CONTROL too: a captive sdswarm finds it
# with no --control on either side
SDSWARM_CONTROL=$T/env.sock rc 0 "sdswarmd and sdswarm on \$SDSWARM_CONTROL" \
	timeout -k 5 60 "$B/sdswarmd" --luns 3 --run "'$B/sdswarm' status"
said "... status came from that daemon" "^luns +3 of"
said "... which listened there" "control socket $T/env.sock"

# --- the man pages -----------------------------------------------------------
for m in sdswarmd.8 sdswarm.8 sdnum.1 sdswarm-bench.1; do
	f=$SDSWARM_TOP/man/$m
	check "$m has an EXIT STATUS section" grep -q '^\.SH "\?EXIT STATUS' "$f"
	check "$m documents exit status 2 (usage)" \
		awk '/^\.SH "?EXIT STATUS/ { s = 1; next } /^\.SH/ { s = 0 } s && /usage/ { found = 1 } END { exit !found }' "$f"
	check "$m documents --version" grep -q 'version' "$f"
done
finish
