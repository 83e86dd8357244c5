#!/bin/bash
# SPDX-License-Identifier: MIT
# ThreadSanitizer over the multi-threaded code: the unit tests that run
# threads (the mem and file stores under concurrent I/O, the SCSI core with
# concurrent commands and reservations, the iSCSI workers under libiscsi,
# four FUSE threads over a real mount) and the daemon (iSCSI workers, the
# control thread) under the iSCSI integration script, the FUSE workers
# holding and releasing hung requests (fuse-requests.sh), the control
# thread reading sessions and FUSE counters (sessions.sh, stats-fuse.sh),
# all built by make SANITIZE=thread tsan-build into build/thread. Any report
# fails; where TSan cannot run at all (its memory layout refused by the
# kernel), the test is skipped and says why.
. "$(dirname "$0")/../lib/common.sh"

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
finish
