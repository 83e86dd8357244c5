#!/bin/bash
# SPDX-License-Identifier: MIT
# The shell benchmarks' --json reports are sdswarm-bench reports:
# `sdswarm-bench stamp` prints the stamp every report begins with;
# bench/iscsi-ls-scale.sh (at --luns 256) and bench/iscsi-vs-tgt.sh (at
# --seconds 0.3, where tgt is installed) carry that stamp, "results" rows
# keyed by group, case and an n that is the same in two runs, targets as
# an array of {name, value, met}, and every key they had before; and
# `sdswarm-bench compare` reads two of them (exit 0 or 3), judges a
# crafted regression (exit 3). No figure is judged.
. "$(dirname "$0")/../lib/common.sh"
B=$SDSWARM_BIN/sdswarm-bench
P=$SDSWARM_PLAIN_BIN
[ -x "$B" ] || skip "no $B (make SANITIZE=address $B)"
for p in sdswarmd sdswarm sdswarm-bench; do
	[ -x "$P/$p" ] || skip "no $P/$p (make $P/$p)"
done
requires python3 timeout
T=$(tmpdir)
version=$("$B" --version | cut -d' ' -f2)

# --- the stamp ---------------------------------------------------------------
"$B" stamp >"$T/stamp.json" 2>"$T/err"
expect_eq "sdswarm-bench stamp exits 0" 0 "$?"
"$B" stamp --machine >"$T/stamp-m.json" 2>>"$T/err"
expect_eq "sdswarm-bench stamp --machine exits 0" 0 "$?"
"$B" numbering --quick --only names --sweep 1024 --json >"$T/num.json" 2>>"$T/err"
expect_eq "numbering --quick --json exits 0" 0 "$?"
check "the stamp: the four keys of a report's stamp, the same values as numbering's report" \
	python3 - "$T/stamp.json" "$T/stamp-m.json" "$T/num.json" "$version" <<'PY'
import json, re, sys
s = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[2]))
n = json.load(open(sys.argv[3]))
assert list(s) == ["schema", "tool", "version", "commit"], list(s)
assert s == {k: n[k] for k in s}, (s, n)
assert s["version"] == sys.argv[4], s
assert s["commit"] is None or re.fullmatch(r"[0-9a-f]{40}", s["commit"]), s
assert {k: m[k] for k in s} == s and list(m) == list(s) + ["machine"], m
assert m["machine"] == n["machine"], (m["machine"], n["machine"])
PY
check "... nothing on stderr" test ! -s "$T/err"
"$B" stamp extra >/dev/null 2>"$T/err"
expect_eq "stamp with an operand: a usage error" 2 "$?"
"$B" stamp --machnie >/dev/null 2>"$T/err"
expect_eq "stamp --machnie: a usage error" 2 "$?"
check "... did you mean --machine" grep -q "did you mean --machine" "$T/err"
"$P/sdswarm-bench" stamp >"$T/plain-stamp.json" ||
	fail "$P/sdswarm-bench stamp"

# report_ok FILE BENCH KEYS...: FILE is a report of BENCH with the plain
# build's stamp, rows and targets compare reads, and every one of KEYS
report_ok() {
	python3 - "$T/plain-stamp.json" "$@" <<'PY'
import json, sys
stamp = json.load(open(sys.argv[1]))
d = json.load(open(sys.argv[2]))
bench, keys = sys.argv[3], sys.argv[4:]
for k, v in stamp.items():
    assert d[k] == v, (k, d[k], v)
assert d["bench"] == bench, d["bench"]
assert d["noisy"] is True, "a smoke-size run is marked noisy"
assert d["machine"]["nproc"] >= 1 and d["machine"]["cpu_model"], d["machine"]
assert d["results"], "no rows"
for r in d["results"]:
    assert isinstance(r["group"], str) and isinstance(r["case"], str), r
    assert isinstance(r["n"], int) and r["n"] > 0, r
    assert r["ns_per_op"] is None or r["ns_per_op"] > 0, r
keys_seen = [(r["group"], r["case"], r["n"]) for r in d["results"]]
assert len(set(keys_seen)) == len(keys_seen), "two rows with one key"
assert isinstance(d["targets"], list) and d["targets"], d["targets"]
for t in d["targets"]:
    assert {"name", "value", "cmp", "limit", "met", "noisy"} <= set(t), t
missing = [k for k in keys if k not in d]
assert not missing, "keys gone: %s" % missing
PY
}

# same_rows A B: the two reports have the same row keys, in order
same_rows() {
	python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ka = [(r["group"], r["case"], r["n"]) for r in a["results"]]
kb = [(r["group"], r["case"], r["n"]) for r in b["results"]]
assert ka == kb, (ka, kb)
PY
}

# compare_pair NAME A B ROW_GROUP: two real runs compared (their verdict
# is noise at this size, so exit 0 or 3), a run against itself (exit 0),
# and a copy of A with its first ROW_GROUP row twice as slow (exit 3, that
# row REGRESSED)
compare_pair() {
	local name=$1 a=$2 b=$3 group=$4 rc nrows
	"$B" compare "$a" "$b" --threshold 1000 >"$T/out" 2>"$T/err"
	rc=$?
	check "$name: compare A B: exit 0 or 3, not an error (got $rc)" \
		test "$rc" = 0 -o "$rc" = 3
	nrows=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["results"]))' "$a")
	check "... every row matched ($nrows), none only in one run" \
		grep -qE "^[0-9]+ of $nrows figures regressed" "$T/out"
	check "... none listed as only in A or B" sh -c "! grep -q '^only in' '$T/out'"
	check "... A named with its bench and version" \
		grep -q "^A: $a: $name, version $version" "$T/out"
	check "... the targets side by side" grep -q '^targets$' "$T/out"
	check "... nothing on stderr" test ! -s "$T/err"
	"$B" compare "$a" "$a" >"$T/out" 2>"$T/err"
	expect_eq "$name: compare A A exits 0" 0 "$?"
	expect_eq "... every row the same" "$nrows" "$(grep -cE ' \+0\.0% .* same$' "$T/out")"
	python3 - "$a" "$T/slow.json" "$group" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = [r for r in d["results"] if r["group"] == sys.argv[3] and r["ns_per_op"]][0]
r["ns_per_op"] *= 2
json.dump(d, open(sys.argv[2], "w"))
PY
	"$B" compare "$a" "$T/slow.json" >"$T/out" 2>"$T/err"
	expect_eq "$name: a row twice as slow: exit 3" 3 "$?"
	expect_eq "... that row alone REGRESSED, +100%" 1 \
		"$(grep -cE "^$group .*\+100\.0% .*REGRESSED$" "$T/out")"
}

ran=0
# --- iscsi-ls-scale.sh -------------------------------------------------------
if ! command -v iscsi-ls >/dev/null 2>&1; then
	echo "skipped: bench/iscsi-ls-scale.sh needs iscsi-ls (scripts/install-deps installs libiscsi-bin)"
else
	ran=$((ran + 1))
	for r in a b; do
		timeout 120 "$SDSWARM_TOP/bench/iscsi-ls-scale.sh" "$P" --luns 256 \
			--json >"$T/ls-$r.json" 2>"$T/ls-$r.err"
		expect_eq "iscsi-ls-scale.sh --luns 256 --json (run $r) exits 0" 0 "$?"
	done
	check "iscsi-ls report: stamped, rows, targets, every key it had (the count of targets as iscsi_targets)" \
		report_ok "$T/ls-a.json" iscsi-ls notes daemon_start_s iscsi_ls_exit \
		iscsi_ls_s luns luns_per_s rss_bytes_before rss_bytes_after \
		rss_bytes_per_lun_before rss_bytes_per_lun_after daemon_alive \
		complete luns_served iscsi_targets
	check "... its n is the LUNs served; 16 targets, all 256 LUNs listed" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert {r["n"] for r in d["results"]} == {256}, d["results"]
assert d["iscsi_targets"] == 16 and d["luns"] == 256 and d["complete"], d
' "$T/ls-a.json"
	check "... two runs have the same rows" same_rows "$T/ls-a.json" "$T/ls-b.json"
	compare_pair iscsi-ls "$T/ls-a.json" "$T/ls-b.json" iscsi-ls
	"$SDSWARM_TOP/bench/iscsi-ls-scale.sh" "$P" --luns 100 >/dev/null 2>"$T/err"
	expect_eq "iscsi-ls-scale.sh --luns 100 (not a multiple of 16) exits 2 (a usage error)" 2 "$?"
	check "... saying what it needs" grep -q "need a multiple of 16" "$T/err"
fi

# --- iscsi-vs-tgt.sh ---------------------------------------------------------
if ! command -v tgtd >/dev/null 2>&1 || ! command -v tgtadm >/dev/null 2>&1; then
	echo "skipped: bench/iscsi-vs-tgt.sh needs tgt (tgtd, tgtadm; scripts/install-deps installs it)"
elif [ "$(id -u)" != 0 ]; then
	echo "skipped: bench/iscsi-vs-tgt.sh runs tgtd, which needs root (/run/tgtd)"
elif ! "$P/sdswarm-bench" --help 2>&1 | grep -q '^  iscsi '; then
	echo "skipped: $P/sdswarm-bench has no iscsi command (built without libiscsi)"
else
	ran=$((ran + 1))
	for r in a b; do
		timeout 200 "$SDSWARM_TOP/bench/iscsi-vs-tgt.sh" "$P" --seconds 0.3 \
			--json >"$T/tgt-$r.json" 2>"$T/tgt-$r.err"
		expect_eq "iscsi-vs-tgt.sh --seconds 0.3 --json (run $r) exits 0" 0 "$?"
	done
	check "iscsi-vs-tgt report: stamped, rows, targets, every key it had" \
		report_ok "$T/tgt-a.json" iscsi-vs-tgt notes seconds side_by_side \
		scaling ratios
	check "... rows of sdswarmd, tgt and scaling, n the commands in flight, sdswarmd's ratio its IOPS over tgt's" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
rows = {(r["group"], r["case"]): r for r in d["results"]}
assert {g for g, _ in rows} == {"sdswarmd", "tgt", "scaling"}, rows.keys()
s, t = rows["sdswarmd", "4K randread QD32"], rows["tgt", "4K randread QD32"]
assert s["n"] == 32 and rows["sdswarmd", "4K randread QD32 x2 jobs"]["n"] == 64
side = d["side_by_side"][0]
assert abs(s["ratio"] - side["ratio"]) < 1e-9 * side["ratio"], (s, side)
assert abs(s["ns_per_op"] - 1e9 / side["sdswarmd"]["iops"]) < 1e-6 * s["ns_per_op"]
assert t["ratio"] is None and t["baseline_ns_per_op"] is None, t
' "$T/tgt-a.json"
	check "... two runs have the same rows" same_rows "$T/tgt-a.json" "$T/tgt-b.json"
	compare_pair iscsi-vs-tgt "$T/tgt-a.json" "$T/tgt-b.json" sdswarmd
fi
[ "$ran" -gt 0 ] || skip "neither iscsi-ls (libiscsi-bin) nor tgt is installed"
finish
