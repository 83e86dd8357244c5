#!/bin/bash
# SPDX-License-Identifier: MIT
# sdswarm stats counts what is done through FUSE as it counts the SCSI
# front ends' commands: reads, writes, fallocates and fsyncs with their
# bytes, errors (an injected medium error) and latency; the OpenMetrics
# text carries the same counters; per-LUN counters count only while on and
# only their window; stats --watch prints one line of rates per interval,
# --count of them; bad options are usage errors.
. "$(dirname "$0")/../lib/fuse.sh"
requires_fuse python3 dd fallocate awk
private_dir T
fuse_mountpoint "$T/mnt"
js() { python3 -c 'import json, sys; r = json.loads(sys.stdin.read()); print(eval(sys.argv[1]))' "$1"; }

cat >"$T/fuse.conf" <<'CONF'
[target]
max_luns = 64
[luns]
count = 8
size = 16M
partitions = 0
[fuse]
cache = direct
CONF
fuse_daemon "$T/fuse.conf" || finish

s=$(ctl --json stats)
expect_eq "nothing counted yet: fuse running 1, 0 requests" "1 0" \
	"$(js 'str(r["fuse"]["running"]) + " " + str(r["fuse"]["requests"])' <<<"$s")"
expect_eq "per-LUN counters are off until asked for" "None" "$(js 'r["lun_counters"]' <<<"$s")"
ctl stats --count-luns 1-2 >/dev/null
expect_eq "--count-luns 1-2 turns them on" "1 2" \
	"$(js 'str(r["lun_counters"]["first"]) + " " + str(r["lun_counters"]["last"])' <<<"$(ctl --json stats)")"

# 8 writes of 4 KiB and 2 reads of 64 KiB on sdb (LUN 1), cache = direct:
# each one is one FUSE request of that size
dd if=/dev/zero of="$MNT/sdb" bs=4k count=8 conv=notrunc 2>/dev/null &&
	dd if="$MNT/sdb" of=/dev/null bs=64k count=2 2>/dev/null
expect_eq "dd through the mount" 0 "$?"
fallocate -p -o 0 -l 1M "$MNT/sdb"
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY); os.fsync(fd); os.close(fd)' "$MNT/sdb"
# a read of sda (LUN 0, not counted per LUN) and a read that fails
dd if="$MNT/sda" of=/dev/null bs=4k count=1 2>/dev/null
ctl fault set medium-read luns=3 >/dev/null
dd if="$MNT/sdd" of=/dev/null bs=4k count=1 2>/dev/null
expect_eq "a read of a LUN with a medium-read fault fails" 1 "$?"

s=$(ctl --json stats --luns 0-3)
expect_eq "FUSE: 4 reads (the failed one moved nothing), 128 KiB + 4 KiB read, 8 writes, 32 KiB written" "4 135168 8 32768" \
	"$(js '" ".join(str(r["fuse"][k]) for k in ("reads", "read_bytes", "writes", "write_bytes"))' <<<"$s")"
expect_eq "... one fallocate of 1 MiB, an fsync at least, one error (the read)" "1 1048576 True 1 1" \
	"$(js '" ".join(str(x) for x in (r["fuse"]["ops"][2]["count"], r["fuse"]["ops"][2]["bytes"], r["fuse"]["ops"][3]["count"] >= 1, r["fuse"]["ops"][0]["errors"], r["fuse"]["errors"]))' <<<"$s")"
requests=$(js 'r["fuse"]["requests"]' <<<"$s")
expect_eq "... requests in all: the sum of the kinds" "$requests" "$(js 'sum(o["count"] for o in r["fuse"]["ops"])' <<<"$s")"
check "... latency percentiles measured (p50 > 0, p50 <= p99 <= p99.9)" python3 -c '
import json, sys
l = json.loads(sys.argv[1])["fuse"]["latency_ns"]
assert 0 < l["p50"] <= l["p99"] <= l["p999"], l' "$s"
expect_eq "per LUN: only 1-2 of 0-3 are counted; LUN 1 wrote 32 KiB in 8 writes" "[1, 2] 8 32768" \
	"$(js 'str([x["lun"] for x in r["luns"]]) + " " + str(r["luns"][0]["writes"]) + " " + str(r["luns"][0]["write_bytes"])' <<<"$s")"
expect_eq "... and read 128 KiB" 131072 "$(js 'r["luns"][0]["read_bytes"]' <<<"$s")"

ctl stats >"$T/text"
check "text: the FUSE line" grep -qE "^fuse +4 reads \(132.0 KiB\), 8 writes \(32.0 KiB\), $requests requests in all, 1 errors$" "$T/text"
check "text: what the FUSE latency times" grep -q 'latency p50 .* (a read, write, fallocate or fsync from its handler to its reply, fault delays included)' "$T/text"
check "text: what the SCSI latency times" grep -q 'latency p50 .* (the SCSI emulation of a command, without transport time or injected delays)' "$T/text"
check "text: a row per kind of FUSE request" grep -qE '^fallocate +1 +1048576 +0$' "$T/text"
ctl stats --luns 1 >"$T/text"
check "text: a per-LUN row" grep -qE '^1 +2 +8 +131072 +32768 +0$' "$T/text"

ctl metrics >"$T/metrics"
check "metrics: FUSE reads" grep -qx 'sdswarm_fuse_requests_total{op="read"} 4' "$T/metrics"
check "metrics: FUSE bytes written" grep -qx 'sdswarm_fuse_data_bytes_total{op="write"} 32768' "$T/metrics"
check "metrics: FUSE errors" grep -qx 'sdswarm_fuse_request_errors_total{op="read"} 1' "$T/metrics"
check "metrics: the FUSE latency histogram counts every request" grep -qx "sdswarm_fuse_latency_seconds_count $requests" "$T/metrics"

ctl sessions >"$T/out"
check "sessions: the FUSE mount, nothing in flight" grep -qx "fuse: $MNT, 0 requests in flight" "$T/out"
ctl fault set hang luns=5 >/dev/null
timeout 60 dd if="$MNT/sdf" of=/dev/null bs=4k count=1 2>/dev/null &
hung=$!
end=$((SECONDS + 20))
while [ "$SECONDS" -lt "$end" ] && [ "$(js 'r["fuse"]["inflight"]' <<<"$(ctl --json sessions)")" != 1 ]; do
	sleep 0.1
done
expect_eq "sessions: a read a hang rule holds is in flight" 1 "$(js 'r["fuse"]["inflight"]' <<<"$(ctl --json sessions)")"
ctl fault clear all >/dev/null
wait "$hung"
expect_eq "... and goes ahead once the rule is cleared" 0 "$?"
expect_eq "... then nothing is in flight" 0 "$(js 'r["fuse"]["inflight"]' <<<"$(ctl --json sessions)")"

ctl stats --count-luns off >/dev/null
dd if=/dev/zero of="$MNT/sdb" bs=4k count=1 conv=notrunc 2>/dev/null
ctl stats --luns 1 >"$T/out" 2>&1
expect_eq "counters off: --luns is refused" 1 "$?"
check "... saying how to turn them on" grep -q "per-LUN counters are off (turn them on with sdswarm stats --count-luns A-B)" "$T/out"
ctl stats --count-luns 0-7 >/dev/null
expect_eq "turned on again: from zero" 0 "$(js 'r["luns"][0]["writes"]' <<<"$(ctl --json stats --luns 1)")"

# --watch: --count lines of rates after the header, within the time asked
(
	for i in $(seq 6); do
		dd if=/dev/zero of="$MNT/sdc" bs=4k count=25 conv=notrunc 2>/dev/null
		sleep 0.1
	done
) &
writer=$!
start=$(date +%s%N)
ctl stats --watch 0.2 --count 3 >"$T/watch"
expect_eq "--watch 0.2 --count 3: exit 0" 0 "$?"
elapsed=$((($(date +%s%N) - start) / 1000000))
wait "$writer"
expect_eq "... a header and 3 lines" 4 "$(wc -l <"$T/watch")"
check "... about 0.6 s, not more than 10" test "$elapsed" -ge 550 -a "$elapsed" -lt 10000
check "... FUSE writes per second seen while dd writes" awk 'NR > 1 && $6 > 0 { f = 1 } END { exit !f }' "$T/watch"
ctl --json stats --watch 0.05 --count 2 >"$T/watch.json"
expect_eq "--json --watch: one reply a line" "2 True" \
	"$(python3 -c 'import json, sys; L = open(sys.argv[1]).read().splitlines(); print(len(L), all(json.loads(x)["ok"] for x in L))' "$T/watch.json")"

for bad in "--watch 0" "--watch x" "--count 2" "--watch 1 --count 0" "--luns 5-" "--luns 5 --watch 1" "--count-luns on" "--lnus 1"; do
	# shellcheck disable=SC2086
	ctl stats $bad >"$T/out" 2>&1
	expect_eq "stats $bad: usage error" 2 "$?"
done
check "... did you mean --luns" grep -q "did you mean --luns?" "$T/out"
ctl stats --count-luns 0-70000 >"$T/out" 2>&1
expect_eq "a window past max_luns: refused by the daemon" 1 "$?"
check "... naming it" grep -q '"count_luns": LUN 70000 is past max_luns (64)' "$T/out"

stop_daemon
expect_eq "sdswarmd exits 0" 0 "$?"
finish
