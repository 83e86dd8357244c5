#!/bin/bash
# SPDX-License-Identifier: MIT
# scripts/stress, the CI user's main path, as a gate that runs loaded: 30 s
# of FUSE+iSCSI stress with two busy loops beside it (--load 2, the 2-core
# CI runner at twice its cores) must end PASS with nothing lost, every
# fault and hang (ABORT TASK among them) seen right, no harness fault, no
# sanitizer report in the daemon's or the client's log, progress lines on
# the way, and the work folder and the busy loops gone. Then the wrapper's
# contract: a FAIL verdict exits 1, a client that dies exits 3 (BROKEN),
# and both keep the work folder and name it.
# test-timeout: 300
. "$(dirname "$0")/../lib/fuse.sh"
requires_fuse python3
BIN=${SDSWARM_BIN:?}
[ -x "$BIN/sdswarm-bench" ] || skip "no $BIN/sdswarm-bench (make SANITIZE=address test-build)"
STRESS=$SDSWARM_TOP/scripts/stress
private_dir T
export TMPDIR=$T
j() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# Under ASan the daemon's RSS keeps its quarantine of freed memory: a wide
# RSS slack here (scripts/stress holds plain builds to 8 MiB).
timeout 240 "$STRESS" --seconds 30 --disks 16 --load 2 --bin "$BIN" -- \
	--churn-ms 300 --fault-ms 250 --rss-slack 256 --json >"$T/load.json" 2>"$T/load.err"
rc=$?
cat "$T/load.json" "$T/load.err"
expect_eq "30 s under --load 2 ends PASS (exit 0)" 0 "$rc"
expect_eq "its verdict says so" PASS "$(j "$T/load.json" verdict)"
expect_eq "no block lost" 0 "$(j "$T/load.json" blocks_lost)"
expect_eq "no unexpected error" 0 "$(j "$T/load.json" unexpected_errors)"
expect_eq "no harness fault (no command left in the initiator's queue)" 0 "$(j "$T/load.json" harness_broken)"
check "blocks were verified" test "$(j "$T/load.json" blocks_verified)" -gt 1000
expect_eq "every fault was seen as the right error" \
	"$(j "$T/load.json" faults_injected)" "$(j "$T/load.json" faults_seen_right)"
check "iSCSI hangs were ended by ABORT TASK" test "$(j "$T/load.json" hangs_aborted)" -gt 0
expect_eq "every hang held and released right" \
	"$(j "$T/load.json" hangs_injected)" "$(j "$T/load.json" hangs_released)"
check "two busy loops ran beside it" grep -q '^stress: 2 busy loop(s) beside the run' "$T/load.err"
check "a progress line came every 10 s" grep -qE '^stress: (10|20)/30 s: [0-9]+ writes' "$T/load.err"
check "no sanitizer report from the daemon or the client" \
	bash -c '! grep -qE "$1" "$2"' _ "$SDSWARM_SANITIZER_RE" "$T/load.err"
pids=$(sed -n 's/^stress: 2 busy loop(s) beside the run (pids \(.*\))$/\1/p' "$T/load.err")
alive=
for p in $pids; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
expect_eq "the busy loops ended with the run" "" "$alive"
check "a PASS leaves no work folder" bash -c '! ls -d "$1"/sdswarm-stress.* 2>/dev/null' _ "$T"

# The wrapper's contract, over a stand-in client: the real daemon, and an
# sdswarm-bench that ends as told.
mkdir -p "$T/fake"
ln -s "$(cd "$BIN" && pwd)/sdswarmd" "$T/fake/sdswarmd"
fake() {
	printf '#!/bin/sh\necho "stand-in client: %s" >&2\n%s\n' "$1" "$1" >"$T/fake/sdswarm-bench"
	chmod +x "$T/fake/sdswarm-bench"
	rm -rf "$T"/sdswarm-stress.*
	timeout 120 "$STRESS" --seconds 1 --disks 2 --bin "$T/fake" >"$T/fake.out" 2>&1
}
fake 'exit 1'
expect_eq "a FAIL verdict exits 1" 1 $?
kept=$(sed -n 's/^stress: kept \([^ ]*\) .*/\1/p' "$T/fake.out")
check "and keeps the work folder, named on stderr" test -s "$kept/sdswarmd.log"
check "with the client's stderr in it" grep -q 'stand-in client: exit 1' "$kept/client.log"
fake 'kill -SEGV $$'
expect_eq "a client that crashed exits 3 (BROKEN), not 1" 3 $?
check "saying there is no verdict" grep -q 'no verdict: the stress client or sdswarmd ended with status 139' "$T/fake.out"
check "and keeps the work folder" grep -q '^stress: kept ' "$T/fake.out"
fake 'echo "==1==ERROR: LeakSanitizer: detected memory leaks" >&2; exit 0'
expect_eq "a sanitizer report in the client's stderr is BROKEN (exit 3), even after exit 0" 3 $?
check "named as the client's" grep -q "the client's log has a sanitizer report" "$T/fake.out"
rm -rf "$T"/sdswarm-stress.*
finish
