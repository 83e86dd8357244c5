#!/bin/bash
# SPDX-License-Identifier: MIT
# sdswarm-bench mktree, open-all and io on a small tmpfs tree: the tree has
# exactly the kernel's names (checked against sdnum), open-all opens every
# node by readdir and by --disks/--parts with no error, a name list longer
# than the tree counts ENOENT and exits 1, io runs for a second, --plot
# draws a PNG. No figure is judged.
. "$(dirname "$0")/../lib/common.sh"
B=$SDSWARM_PLAIN_BIN/sdswarm-bench
SDNUM=$SDSWARM_BIN/sdnum
[ -x "$B" ] || skip "no $B (make build/bin/sdswarm-bench)"
[ -x "$SDNUM" ] || skip "no $SDNUM (make SANITIZE=address build/address/bin/sdnum)"
requires python3

# The tree lives on tmpfs (/dev/shm) when there is one: that is the case
# the benchmark is for. A private folder, removed on exit.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	S=$(mktemp -d /dev/shm/sdswarm-test.XXXXXX) || fail "mktemp in /dev/shm"
	on_exit "rm -rf '$S'"
else
	S=$(tmpdir)
fi
T=$(tmpdir)
DISKS=300 # sda .. sdkn: past sdz and sdzz's first letter change
PARTS=4
NODES=$((DISKS * (PARTS + 1)))

"$B" --help >"$T/help"
for c in open-all mktree io; do
	check "--help lists $c" grep -q "^  $c " "$T/help"
	check "$c --help" grep -q "usage: sdswarm-bench $c" <("$B" "$c" --help)
done

# ---- mktree ----------------------------------------------------------
"$B" mktree "$S/tree" --disks $DISKS --parts $PARTS --json >"$T/mk.json"
expect_eq "mktree exits 0" 0 $?
expect_eq "mktree made every file" $NODES "$(find "$S/tree" -type f | wc -l)"
expect_eq "the files are empty" 0 "$(find "$S/tree" -type f -size +0 | wc -l)"
# Every name the kernel would give, from sdnum, against what is there.
for ((i = 0; i < DISKS; i++)); do
	for ((p = 0; p <= PARTS; p++)); do echo "$i $p"; done
done | "$SDNUM" name - | sort >"$T/want"
ls "$S/tree" | sort >"$T/got"
check "the tree's names are exactly sdnum's" cmp -s "$T/want" "$T/got"
for n in sda sda4 sdz sdaa sdaa1 sdkn sdkn4; do
	check "$n exists" test -f "$S/tree/$n"
done
check "no sdko (disk 300)" test ! -e "$S/tree/sdko"
expect_eq "sdnum agrees: disk 299 is sdkn" sdkn "$("$SDNUM" name 299)"
check "mktree JSON" python3 - "$T/mk.json" $NODES <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["bench"] == "mktree", d
assert d["files"] == int(sys.argv[2]), d["files"]
assert d["files_per_s"] > 0 and d["tmpfs"] in (True, False), d
PY
"$B" mktree "$S/tree" --disks 2 >/dev/null 2>"$T/err"
expect_eq "mktree into a non-empty folder exits 1" 1 $?
check "and says why" grep -q 'not empty' "$T/err"
"$B" mktree "$S/tree" --disks 2 --parts $PARTS --force >/dev/null
expect_eq "mktree --force into it exits 0" 0 $?
expect_eq "--force left the tree as it was" $NODES "$(ls "$S/tree" | wc -l)"

# ---- open-all --------------------------------------------------------
# check_json FILE OPENS ERRORS: the keys a reader relies on, and the counts.
check_json() {
	python3 - "$@" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
want_opens, want_errors = int(sys.argv[2]), int(sys.argv[3])
for k in ("opens", "errors", "opens_per_s", "baseline_opens_per_s", "ratio",
          "latency_ns", "depth", "read_bytes", "errors_by_errno", "results",
          "targets", "nodes"):
    assert k in d, "missing " + k
assert d["bench"] == "open-all"
assert d["opens"] == want_opens, (d["opens"], want_opens)
assert d["errors"] == want_errors, (d["errors"], want_errors)
assert d["opens_per_s"] > 0 and d["baseline_opens_per_s"] > 0, d
assert math.isclose(d["ratio"], d["opens_per_s"] / d["baseline_opens_per_s"],
                    rel_tol=1e-3), d["ratio"]
lat = d["latency_ns"]
assert 0 < lat["p50"] <= lat["p99"] <= lat["p99.9"] <= lat["max"], lat
assert d["depth"] == 64 and d["read_bytes"] == 4096, d
assert d["baseline_opens"] == want_opens, d["baseline_opens"]
assert any(t["name"] == "io_uring / sync open rate" for t in d["targets"])
PY
}

"$B" open-all "$S/tree" --json >"$T/rd.json" 2>"$T/err"
expect_eq "open-all by readdir exits 0" 0 $?
check "readdir JSON: every node opened, no error" check_json "$T/rd.json" $NODES 0
check "readdir mode says so" grep -q '"names": "readdir"' "$T/rd.json"

"$B" open-all "$S/tree" --disks $DISKS --parts $PARTS --json >"$T/ls.json"
expect_eq "open-all --disks/--parts exits 0" 0 $?
check "list JSON: every node opened, no error" check_json "$T/ls.json" $NODES 0

"$B" open-all "$S/tree" --disks $DISKS --parts $PARTS --plain-fds --depth 7 \
	--json >"$T/pl.json"
expect_eq "open-all --plain-fds exits 0" 0 $?
check "plain descriptors open every node" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["descriptors"] == "plain" and d["opens"] == int(sys.argv[2]), d
assert d["errors"] == 0 and d["depth"] == 7, d' "$T/pl.json" $NODES

"$B" open-all "$S/tree" --disks $DISKS --parts $PARTS --read 0 --baseline-only \
	--json >"$T/bo.json"
expect_eq "--baseline-only --read 0 exits 0" 0 $?
check "--baseline-only has no io_uring rate" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["opens_per_s"] is None and d["baseline_opens_per_s"] > 0, d
assert d["opens"] == int(sys.argv[2]) and d["bytes_read"] == 0, d' \
	"$T/bo.json" $NODES

# Ten disks more than the tree has: 50 names missing, each an ENOENT.
"$B" open-all "$S/tree" --disks $((DISKS + 10)) --parts $PARTS --json \
	>"$T/miss.json" 2>"$T/err"
expect_eq "missing names exit 1" 1 $?
check "missing names are ENOENT errors" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["opens"] == int(sys.argv[2]) and d["errors"] == 50, d
assert d["errors_by_errno"]["open"] == {"ENOENT": 50}, d["errors_by_errno"]
assert d["baseline_errors"] == 50, d' "$T/miss.json" $NODES
check "stderr names the first missing node" grep -q 'sdko: open: No such file' "$T/err"

"$B" open-all "$S/tree" --disks 2 --parts 1 >"$T/out.txt"
expect_eq "text report exits 0" 0 $?
check "text has both rows" grep -q 'sync open+pread+close' "$T/out.txt"
check "text has the latency table" grep -q '^io_uring chain' "$T/out.txt"

# the io_uring variants side by side; --cold as root
"$B" open-all "$S/tree" --disks $DISKS --parts $PARTS --variants --reps 2 \
	>"$T/var.txt"
expect_eq "open-all --variants exits 0" 0 $?
expect_eq "three variant rows" 3 "$(grep -c '^variant ' "$T/var.txt")"
check "IOSQE_ASYNC the other way" grep -q 'IOSQE_ASYNC o[nf]' "$T/var.txt"
if [ -w /proc/sys/vm/drop_caches ]; then
	"$B" open-all "$S/tree" --cold --reps 2 >"$T/cold.txt"
	expect_eq "open-all --cold exits 0" 0 $?
	check "a readdir row" grep -q '^readdir ' "$T/cold.txt"
fi
"$B" open-all "$S/tree" --depth 0 >/dev/null 2>"$T/err"
expect_eq "--depth 0 exits 2 (usage)" 2 $?
check "--depth 0 says why" grep -q -- "--depth '0'" "$T/err"
"$B" open-all "$S/nonexistent" >/dev/null 2>&1
expect_eq "a missing DIR exits 1" 1 $?

# ---- --plot ----------------------------------------------------------
if command -v gnuplot >/dev/null 2>&1; then
	"$B" open-all "$S/tree" --plot "$T/p.png" >/dev/null
	expect_eq "--plot exits 0" 0 $?
	check "--plot wrote a PNG" test "$(head -c 8 "$T/p.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a
else
	echo "no gnuplot: the --plot PNG is not checked"
fi
PATH=/nonexistent "$B" open-all "$S/tree" --plot "$T/q.png" >/dev/null 2>"$T/err"
expect_eq "--plot without gnuplot exits 1" 1 $?
check "and says gnuplot is missing" grep -q 'gnuplot is not installed' "$T/err"
check "and drew nothing" test ! -e "$T/q.png"

# ---- io --------------------------------------------------------------
"$B" mktree "$S/disks" --disks 40 --parts 0 --size 1M >/dev/null
expect_eq "mktree --size exits 0" 0 $?
expect_eq "sparse files have the size" 1048576 "$(stat -c %s "$S/disks/sdan")"
"$B" io "$S/disks" --seconds 1 --rw mix --json >"$T/io.json"
expect_eq "io --seconds 1 exits 0" 0 $?
check "io JSON" python3 - "$T/io.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["bench"] == "io" and d["disks"] == 40 and d["disks_used"] == 40, d
assert d["ops"] > 0 and d["errors"] == 0 and d["iops"] > 0, d
assert d["reads"] > 0 and d["writes"] > 0 and d["reads"] + d["writes"] == d["ops"]
assert d["baseline_iops"] > 0 and d["ratio"] > 0, d
for rw in ("read", "write"):
    lat = d["latency_ns"][rw]
    assert 0 < lat["p50"] <= lat["p99"] <= lat["p99.9"] <= lat["max"], lat
assert 0.9 < d["seconds"] < 5, d["seconds"]
PY
"$B" io "$S/disks" --disks 3 --ops 500 --no-baseline --json >"$T/io2.json"
expect_eq "io --ops exits 0" 0 $?
check "io --ops stops at the count" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ops"] == 500 and d["disks_used"] == 3 and d["baseline_iops"] is None, d' "$T/io2.json"
"$B" io "$S/tree" --disks 2 --seconds 0.1 >/dev/null 2>"$T/err"
expect_eq "io on empty files exits 1" 1 $?
check "and says to use mktree --size" grep -q 'mktree --size' "$T/err"
finish
