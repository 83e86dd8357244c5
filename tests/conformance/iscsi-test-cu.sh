#!/bin/bash
# SPDX-License-Identifier: MIT
# libiscsi's conformance suite against sdswarmd's iSCSI front end:
# `iscsi-test-cu --dataloss -t ALL` once on the thin LUN and once on the
# thick LUN of configs/iscsi.conf, each against its own daemon on a free
# port (the two runs go in parallel to stay within the test timeout).
# Prints passed/failed/skipped per run: CUnit counts a skipped test as
# passed, so tests that printed "[SKIPPED]" are moved to skipped, and each
# skip is listed with libiscsi's reason (a test that skipped only part of
# itself counts as skipped). The suite gets a second URL to the same LUN
# through a second portal (each daemon listens on two, in two ALUA port
# groups: active/optimized and active/non-optimized), so its MultipathIO
# tests run over two paths, and --allow-sanitize;
# its Sanitize suite runs apart (SANITIZE_APART below), on the same daemon
# after the rest. Fails on any failed test, a crashed run, or more skips
# than the run's ceiling (ISCSI_CU_MAX_SKIPS_THIN, _THICK): the counts
# measured when this was written, so a command that stops working fails
# here; the README says how far they are from the issue's goal of 10 and
# why. ISCSI_CU_RUNS="thin" runs one only.
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires iscsi-test-cu python3
private_dir T

IQN=iqn.2026-12.org.sdswarm
INIT=$IQN:conformance
RUNS=${ISCSI_CU_RUNS:-thin thick}

# Counts one run's log: "passed failed skipped crashed".
count() {
	awk -v rc="$2" '
		/^Suite: / { suite = $2 }
		/^  Test: / {
			t = suite "." $2; ntest++
			if ($0 ~ /\[SKIPPED\]/) skip[t] = 1
			if ($0 ~ /\.\.\.FAILED/) fail[t] = 1
			next
		}
		/\[SKIPPED\]/ && t != "" { skip[t] = 1 }
		/^FAILED/ && t != "" { fail[t] = 1 }
		/^ +tests +[0-9]/ { tot += $2; pas += $4; fl += $5 }
		END {
			ns = 0; for (k in skip) if (!(k in fail)) ns++
			crashed = (rc != 0 && rc != 1) || tot == 0
			if (tot == 0) {
				# no summary: count from the per-test lines, the
				# test it stopped in as failed
				nf = 0; for (k in fail) nf++
				if (t != "" && !(t in fail)) nf++
				pas = ntest - nf; fl = nf
			}
			print pas - ns, fl, ns, crashed ? 1 : 0
		}' "$1"
}

run_one() {
	local name=$1 lun=$2 dir=$3 port port2
	port=$(free_port)
	port2=$(free_port)
	while [ "$port2" = "$port" ]; do port2=$(free_port); done
	# two paths: relative target ports 1 and 2, one port group each
	sed "s/^portal = .*/portal = 127.0.0.1:$port, 127.0.0.1:$port2/" \
		"$SDSWARM_TOP/configs/iscsi.conf" >"$dir/iscsi.conf"
	printf '%s\n' "" "[port_group.a]" "ports = 1" "" "[port_group.b]" \
		"state = active/non-optimized" "ports = 2" >>"$dir/iscsi.conf"
	"$SDSWARMD" --config "$dir/iscsi.conf" --control "$dir/control" \
		>"$dir/daemon.log" 2>&1 &
	echo $! >"$dir/pid"
	local waited=0
	until "$SDSWARM" --control "$dir/control" status >/dev/null 2>&1; do
		sleep 0.2
		waited=$((waited + 1))
		[ $waited -lt 300 ] || { echo "$name: no daemon" >"$dir/result"; return; }
	done
	local url="iscsi://127.0.0.1:$port/$IQN:t0/$lun" rc1 rc2
	local url2="iscsi://127.0.0.1:$port2/$IQN:t0/$lun"
	# every suite of ALL but Sanitize, with the multipath URL; then
	# Sanitize alone without it (see SANITIZE_APART)
	timeout 300 iscsi-test-cu --dataloss --allow-sanitize -t "$MAIN_TESTS" \
		-i "$INIT" -I "$INIT-2" "$url" "$url2" >"$dir/cu.log" 2>&1
	rc1=$?
	timeout 200 iscsi-test-cu --dataloss --allow-sanitize -t ALL.Sanitize \
		-i "$INIT" -I "$INIT-2" "$url" >>"$dir/cu.log" 2>&1
	rc2=$?
	echo $((rc1 > rc2 ? rc1 : rc2)) >"$dir/rc"
	kill -TERM "$(cat "$dir/pid")"
	wait "$(cat "$dir/pid")" 2>/dev/null
	echo $? >"$dir/daemon.rc"
}

# SANITIZE_APART: Sanitize.Reservations takes a RESERVE(6) on the suite's
# second session and never releases it. Given a multipath URL, that session
# is the multipath one and lives on, so the next test, Sanitize.Reset, meets
# the reservation (its SANITIZE and TEST UNIT READY get RESERVATION
# CONFLICT). Without one, the suite opens a fresh second session per test
# and logs it out, and the reservation goes with that I_T nexus, as SPC
# says. So Sanitize runs on its own, without the multipath URL, and the rest
# of ALL with it (its four MultipathIO tests need two URLs).
MAIN_TESTS=$(iscsi-test-cu -l 2>/dev/null |
	awk -F. '/^ALL\.[^.]+$/ && $2 != "Sanitize" { printf "%s%s", s, $0; s = "," }')
[ -n "$MAIN_TESTS" ] || fail "iscsi-test-cu -l lists no suites"

declare -A LUNOF=([thin]=0 [thick]=1)
declare -A MAXSKIP=([thin]=${ISCSI_CU_MAX_SKIPS_THIN:-6}
		   [thick]=${ISCSI_CU_MAX_SKIPS_THICK:-19})

# Lists a log's skipped tests: "SUITE.TEST: reason".
skips() {
	awk '/^Suite: / { s = $2 } /^  Test: / { t = $2 }
		/\[SKIPPED\]/ { r = $0; sub(/.*\[SKIPPED\] */, "", r)
			if (!((s "." t) in k)) k[s "." t] = r }
		END { for (x in k) print x ": " k[x] }' "$1" | sort
}
pids=()
for r in $RUNS; do
	mkdir -p "$T/$r"
	run_one "$r" "${LUNOF[$r]}" "$T/$r" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done

total_f=0
for r in $RUNS; do
	d=$T/$r
	if [ ! -f "$d/rc" ]; then
		fail "$r: did not run: $(cat "$d/result" 2>/dev/null)"
		continue
	fi
	read -r p f s crashed < <(count "$d/cu.log" "$(cat "$d/rc")")
	echo "conformance $r (LUN ${LUNOF[$r]}): $p passed, $f failed, $s skipped"
	# the failed tests, each with the messages it printed
	awk '/^Suite: / { s = $2 } /^  Test: / { t = s "." $2; m = $0 }
		/^  Test: / && /\.\.\.FAILED/ { print "  failed: " t; next }
		/^FAILED/ && t != "" { print "  failed: " t ": " m }
		/^    [0-9]+\. test_/ { print "  |" $0 }' "$d/cu.log" | head -50
	if [ "$crashed" = 1 ]; then
		fail "$r: iscsi-test-cu exited with status $(cat "$d/rc") (crash or timeout); its last lines:"
		tail -5 "$d/cu.log" | sed 's/^/  | /'
	fi
	[ "$f" -eq 0 ] || fail "$r: $f test(s) failed"
	# the two-path tests ran and passed, none skipped
	mp=$(awk '/^Suite: / { s = $2 }
		s == "MultipathIO" && /^  Test: .*\.\.\.passed/ &&
		!/SKIPPED/ { n++ } END { print n + 0 }' "$d/cu.log")
	echo "conformance $r: MultipathIO over 2 portals: $mp of 4 passed"
	expect_eq "$r: MultipathIO tests passed over two paths" 4 "$mp"
	skips "$d/cu.log" | sed 's/^/  skipped: /'
	[ "$s" -le "${MAXSKIP[$r]}" ] ||
		fail "$r: $s tests skipped, more than the ${MAXSKIP[$r]} this run had"
	total_f=$((total_f + f))
	if sanitizer_report "$d/daemon.log"; then
		fail "$r: sanitizer report in the daemon's log"
		cat "$d/daemon.log"
	fi
	expect_eq "$r: daemon exit status" 0 "$(cat "$d/daemon.rc")"
done
finish
