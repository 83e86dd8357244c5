#!/bin/bash
# SPDX-License-Identifier: MIT
# sdswarm-bench iscsi --quick against sdswarmd (configs/iscsi.conf on a free
# port): a 4K random read run on LUN 0 and a random write run of two
# sessions over "all" the target's disks report nonzero IOPS and latency in
# their JSON; a bad URL, an unknown target and an absent LUN exit 1 saying
# why. No figure is judged.
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires python3
B=$SDSWARM_PLAIN_BIN/sdswarm-bench
[ -x "$B" ] || skip "no $B (make build/bin/sdswarm-bench)"
"$B" --help 2>&1 | grep -q '^  iscsi ' || skip "$B has no iscsi command (make it again)"
private_dir T

PORT=$(free_port)
IQN=iqn.2026-12.org.sdswarm
URL=iscsi://127.0.0.1:$PORT/$IQN:t0
sed "s/^portal = .*/portal = 127.0.0.1:$PORT/" "$SDSWARM_TOP/configs/iscsi.conf" \
	>"$T/iscsi.conf"
start_daemon "$T/iscsi.conf" || exit 1

# judge FILE RW JOBS LUNS: the JSON of one run
judge() {
	python3 - "$@" <<'PY'
import json, sys
path, rw, jobs, luns = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
d = json.load(open(path))
assert d["bench"] == "iscsi", d["bench"]
assert d["params"]["rw"] == rw, d["params"]
assert d["params"]["jobs"] == jobs, d["params"]
assert d["params"]["lun_bytes"] == 64 << 20, d["params"]
t = d["total"]
assert t["ops"] > 0 and t["iops"] > 0 and t["mib_per_s"] > 0, t
assert t["bytes"] == t["ops"] * 4096, t
assert 0 < t["lat_mean_us"] and 0 < t["lat_p99_us"] <= t["lat_max_us"], t
assert len(d["per_job"]) == jobs, d["per_job"]
got = ",".join(str(j["lun"]) for j in d["per_job"])
assert got == luns, (got, luns)
for j in d["per_job"]:
    assert j["ops"] > 0 and j["iops"] > 0, j
assert sum(j["ops"] for j in d["per_job"]) == t["ops"]
assert d["results"] and d["results"][-1]["ops_per_s"] > 0, d["results"]
PY
}

timeout 60 "$B" iscsi "$URL/0" --quick --json --rw randread --bs 4k --qd 8 \
	>"$T/read.json" 2>"$T/read.err"
expect_eq "randread on LUN 0 exits 0" 0 $?
check "randread JSON: nonzero IOPS, latency, one job on LUN 0" \
	judge "$T/read.json" randread 1 0

timeout 60 "$B" iscsi "$URL/all" --quick --json --rw randwrite --jobs 2 \
	>"$T/write.json" 2>"$T/write.err"
expect_eq "randwrite over all LUNs exits 0" 0 $?
check "randwrite JSON: nonzero IOPS, two jobs on LUNs 0 and 1" \
	judge "$T/write.json" randwrite 2 0,1

timeout 60 "$B" iscsi "http://127.0.0.1:$PORT/$IQN:t0/0" --quick \
	>/dev/null 2>"$T/bad.err"
expect_eq "a bad URL exits 1" 1 $?
check "a bad URL says so" grep -q "URL 'http://" "$T/bad.err"

timeout 60 "$B" iscsi "iscsi://127.0.0.1:$PORT/$IQN:t9/0" --quick \
	>"$T/t9.out" 2>"$T/t9.err"
expect_eq "an unknown target exits 1" 1 $?
check "an unknown target: the login failure is named" \
	grep -q "login to $IQN:t9 .*Target not found" "$T/t9.err"
check "an unknown target prints no report" test ! -s "$T/t9.out"

timeout 60 "$B" iscsi "$URL/5" --quick >/dev/null 2>"$T/lun5.err"
expect_eq "an absent LUN exits 1" 1 $?
check "an absent LUN: the CHECK CONDITION is named" \
	grep -q "LUN 5: CHECK CONDITION, ILLEGAL_REQUEST.*LOGICAL_UNIT_NOT_SUPPORTED" \
	"$T/lun5.err"

check "daemon alive" daemon_alive
stop_daemon
expect_eq "sdswarmd exits 0" 0 $?
finish
