#!/bin/bash
# SPDX-License-Identifier: MIT
# ThreadSanitizer over the multi-threaded code: the unit tests that run
# threads (the mem and file stores under concurrent I/O, the SCSI core with
# concurrent commands and reservations, the iSCSI workers under libiscsi,
# four FUSE threads over a real mount) and the daemon (iSCSI workers, the
# control thread) under the iSCSI integration script, the FUSE workers
# holding and releasing hung requests (fuse-requests.sh), the control
# thread reading sessions and FUSE counters (sessions.sh, stats-fuse.sh),
# the control thread summing the iSCSI workers' counters (stats, stats
# --luns, metrics, sessions, status) while iscsi-perf and raw WRITEs run,
# all built by make SANITIZE=thread tsan-build into build/thread. Any report
# fails; where TSan cannot run at all (its memory layout refused by the
# kernel), the test is skipped and says why.
. "$(dirname "$0")/../lib/daemon.sh"

tdir=${SDSWARM_TSAN:-$SDSWARM_TOP/build/thread}
units="test-store-mem test-store-file test-scsi-pr test-scsi-sbc
	test-iscsi-libiscsi test-fusefe"
# fuse-requests: the FUSE worker threads and their idle pool;
# sessions: the control thread reads each connection's commands in flight;
# stats-fuse: the FUSE threads' shared counters and the per-LUN ones
scripts="iscsi-basic fuse-requests sessions stats-fuse"
[ -x "$tdir/bin/sdswarmd" ] ||
	skip "no ThreadSanitizer build in $tdir (make SANITIZE=thread tsan-build)"
tmp=$(tmpdir)
# every process writes its reports to $tmp/tsan.PID; a report fails the
# test even where the process then exits 0
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1:log_path=$tmp/tsan"
unset ASAN_OPTIONS

probe=$("$tdir/bin/sdswarmd" --help 2>&1)
if grep -q 'FATAL: ThreadSanitizer' <<<"$probe" ||
	grep -qs 'FATAL: ThreadSanitizer' "$tmp"/tsan.*; then
	skip "ThreadSanitizer cannot run here: $({ echo "$probe"; cat "$tmp"/tsan.* 2>/dev/null; } | grep -m1 FATAL)"
fi
rm -f "$tmp"/tsan.*

reports() { # what: fail with the reports written so far
	local f
	for f in "$tmp"/tsan.*; do
		[ -f "$f" ] || continue
		cat "$f"
		fail "$1: ThreadSanitizer report ($(grep -m1 -E 'WARNING|ERROR' "$f"))"
		rm -f "$f"
	done
}

for u in $units; do
	bin=$tdir/tests/unit/$u
	[ -x "$bin" ] || { fail "$u: not built in $tdir"; continue; }
	opts=$TSAN_OPTIONS
	# ORWRITE and WRITE ATOMIC hold up to 256 COMPARE AND WRITE stripe
	# locks at once (in index order, so they cannot deadlock); TSan's
	# deadlock detector tracks 64 held locks and dies with a CHECK
	# failure past that. Races are still checked there.
	[ "$u" = test-scsi-sbc ] && opts=$opts:detect_deadlocks=0
	TSAN_OPTIONS=$opts timeout -k 5 300 "$bin" >"$tmp/$u.log" 2>&1
	rc=$?
	reports "$u"
	case $rc in
	0) ok "$u clean" ;;
	77) ok "$u skipped: $(grep -m1 SKIP "$tmp/$u.log")" ;;
	*) tail -30 "$tmp/$u.log"; fail "$u exits $rc" ;;
	esac
done
for s in $scripts; do
	SDSWARM_BIN=$tdir/bin timeout -k 5 300 \
		"$SDSWARM_TOP/tests/integration/$s.sh" >"$tmp/$s.log" 2>&1
	rc=$?
	reports "$s"
	case $rc in
	0) ok "$s clean" ;;
	77) ok "$s skipped: $(grep -m1 SKIP "$tmp/$s.log")" ;;
	*) grep -E '^FAIL' "$tmp/$s.log"; fail "$s exits $rc" ;;
	esac
done

# The control thread reads what the iSCSI workers count while they count:
# two iscsi-perf sessions (round robin: one on each of the two workers)
# read, one of them through a 1 ms delay rule (the faults counter), raw
# WRITEs go to a third LUN, and every round of a bounded loop asks for
# stats with per-LUN counters, stats as text, metrics, sessions and status.
js() { python3 -c 'import json, sys; r = json.loads(sys.stdin.read()); print(eval(sys.argv[1]))' "$1"; }
commands() { js 'r["commands"]' <<<"$(ctl --json stats)" 2>/dev/null; }
stats_poll() {
	local port iqn=iqn.2026-12.org.sdswarm perf=() writer pid i n=0 c0 c1 end rc
	local raw="python3 $SDSWARM_TOP/tests/integration/iscsi_raw.py"

	for i in python3 iscsi-perf; do
		command -v "$i" >/dev/null ||
			{ ok "stats-poll skipped: needs '$i' (scripts/install-deps)"; return; }
	done
	port=$(free_port) || { ok "stats-poll skipped: no free TCP port on 127.0.0.1"; return; }
	SDSWARMD=$tdir/bin/sdswarmd SDSWARM=$tdir/bin/sdswarm
	start_daemon "$SDSWARM_TOP/configs/iscsi-host.conf" \
		--iscsi "127.0.0.1:$port" || { fail "stats-poll: the daemon did not start"; return; }
	ctl stats --count-luns 0-3 >/dev/null || fail "stats-poll: stats --count-luns 0-3"
	ctl fault set delay luns=1 delay=1ms >/dev/null || fail "stats-poll: a delay rule"
	# -k 5: after SIGTERM, iscsi-perf waits for its commands in flight,
	# for ever if the daemon is gone
	for i in 0 1; do
		timeout -k 5 120 iscsi-perf -i "iqn.2026-12.org.test:poll$i" -m 8 -t 60 \
			"iscsi://127.0.0.1:$port/$iqn:t$i/1" >"$tmp/perf$i" 2>&1 &
		perf+=($!)
	done
	# WRITEs one after another until told to stop (a file, so that none
	# is cut off mid-session), at most 20
	(for ((i = 0; i < 20; i++)); do
		[ -e "$tmp/stop" ] && break
		timeout 30 $raw "$port" "$iqn:t0" write 2 $((i * 8)) 8 0x5a || exit 1
	done) >"$tmp/writes" 2>&1 &
	writer=$!
	# up to 30 s by the clock, however loaded, for the first commands
	end=$((SECONDS + 30))
	while [ "$SECONDS" -lt "$end" ] && daemon_alive; do
		c0=$(commands) && [ "${c0:-0}" -gt 0 ] && break
		sleep 0.1
	done
	for ((i = 0; i < 25 && SECONDS < end + 120; i++)); do
		daemon_alive || break
		ctl --json stats --luns 0-3 >"$tmp/stats.json" &&
			ctl stats >/dev/null && ctl metrics >"$tmp/metrics" &&
			ctl sessions >/dev/null && ctl status >/dev/null &&
			n=$((n + 1))
	done
	c1=$(commands)
	for pid in "${perf[@]}"; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	touch "$tmp/stop"
	wait "$writer"
	rc=$?
	# a report stops the daemon (halt_on_error): it comes first, then
	# what failed for want of a daemon
	reports stats-poll
	expect_eq "stats-poll: raw WRITEs GOOD" 0 "$rc"
	expect_eq "stats-poll: 25 rounds of stats, metrics, sessions, status answered" 25 "$n"
	check "stats-poll: the workers counted while polled ($c0 then $c1 commands)" \
		test "${c0:-0}" -gt 0 -a "${c1:-0}" -gt "${c0:-0}"
	ctl --json stats --luns 0-3 >"$tmp/stats.json"
	check "stats-poll: LUN 1 read, LUN 2 written, the delay rule counted" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
l = {x["lun"]: x for x in r["luns"]}
assert l[1]["reads"] > 0 and l[2]["writes"] > 0, r["luns"]
assert r["faults_counted"] > 0, r["faults_counted"]' "$tmp/stats.json"
	check "stats-poll: metrics counts READ(16)" \
		grep -qE '^sdswarm_scsi_commands_total\{opcode="0x88",name="READ_16"\} [1-9]' "$tmp/metrics"
	stop_daemon
	expect_eq "stats-poll: sdswarmd exits 0" 0 "$?"
	reports stats-poll
}
[ -x "$tdir/bin/sdswarm" ] || fail "sdswarm: not built in $tdir"
stats_poll
finish
