#!/bin/bash
# SPDX-License-Identifier: MIT
# Benchmarks a user can steer: --only GROUP and sizes from the command line
# (checked, with clear errors), -v for the notes on internals, JSON with its
# schema, version and commit, and `sdswarm-bench compare A.json B.json`: two
# real small runs side by side (exit 0), a crafted regressed copy (exit 3,
# the row named), malformed and foreign files (exit 1, a clear message),
# usage errors (exit 2). open-all --reps under ASan (the build tests run)
# leaks nothing, and a run on under 1000 nodes is marked noisy.
. "$(dirname "$0")/../lib/common.sh"
B=$SDSWARM_BIN/sdswarm-bench
[ -x "$B" ] || skip "no $B (make SANITIZE=address $B)"
requires python3
T=$(tmpdir)
# lacks PATTERN FILE: no line of FILE matches
lacks() { ! grep -q -- "$1" "$2"; }

# rc WANT NAME CMD...: CMD's exit status is WANT; its stderr in $T/err
rc() {
	local want=$1 name=$2
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	expect_eq "$name: exit $want" "$want" "$?"
}

# --- two real small runs -----------------------------------------------------
run() { # FILE: names and idx at two sizes, quick
	"$B" numbering --quick --only names,idx --sizes 4096,256 --sweep 4096 \
		--json >"$1"
}
run "$T/a.json"
expect_eq "run A exits 0" 0 "$?"
run "$T/b.json"
expect_eq "run B exits 0" 0 "$?"
version=$("$B" --version | cut -d' ' -f2)
check "the JSON: schema 1, tool, this build's version, a commit, only the groups and sizes asked" \
	python3 - "$T/a.json" "$version" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == 1, d["schema"]
assert d["tool"] == "sdswarm-bench", d["tool"]
assert d["version"] == sys.argv[2], (d["version"], sys.argv[2])
assert d["commit"] is None or re.fullmatch(r"[0-9a-f]{40}", d["commit"]), d["commit"]
assert d["noisy"] is False
groups = {r["group"] for r in d["results"]}
assert groups == {"names", "idx"}, groups
assert {r["n"] for r in d["results"] if r["group"] == "idx"} == {256, 4096}
assert [r["n"] for r in d["results"] if r["group"] == "idx"][0] == 256, "sizes run ascending"
assert {r["n"] for r in d["results"] if r["group"] == "names"} == {4096}
names = [t["name"] for t in d["targets"]]
assert not any("radix" in n for n in names), "a target of a group not run"
assert all("noisy" in t for t in d["targets"])
PY
# Two real runs differ by noise, which on a loaded machine can pass any
# threshold in 2 ms batches: their verdict is not judged, their table is.
"$B" compare "$T/a.json" "$T/b.json" --threshold 1000 >"$T/out" 2>"$T/err"
rc=$?
check "compare A B (two real runs): exit 0 or 3, not an error (got $rc)" test "$rc" = 0 -o "$rc" = 3
nrows=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["results"]))' "$T/a.json")
expect_eq "... a row per figure" "$nrows" \
	"$(grep -cE '^(names|idx) +[a-z ]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +[-+][0-9.]+% +' "$T/out")"
check "... both runs' ratios beside the change" \
	grep -qE '^idx +fill tree +256 +[0-9.]+ +[0-9.]+ +[-+][0-9.]+% +[0-9.]+x +[0-9.]+x +(same|faster|REGRESSED)$' "$T/out"
check "... both runs named with their version" grep -q "^A: $T/a.json: numbering, version $version" "$T/out"
check "... the summary" grep -qE "^[0-9]+ of $nrows figures regressed by more than 1000%" "$T/out"
check "... nothing on stderr" test ! -s "$T/err"
rc 0 "a run against itself" "$B" compare "$T/a.json" "$T/a.json"
expect_eq "... every row the same, +0.0%" "$nrows" "$(grep -cE ' \+0\.0% .* same$' "$T/out")"
rc 0 "options before the command" "$B" --threshold 5 compare "$T/a.json" "$T/a.json"

# --- a crafted regression ----------------------------------------------------
python3 - "$T/a.json" "$T/c.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    if (r["group"], r["case"], r["n"]) == ("idx", "fill tree", 256):
        r["ns_per_op"] *= 1.5
json.dump(d, open(sys.argv[2], "w"))
PY
rc 3 "compare A C, C's fill tree 256 50% slower" "$B" compare "$T/a.json" "$T/c.json"
check "... that row is REGRESSED" grep -qE '^idx +fill tree +256 .*\+50\.0% .*REGRESSED$' "$T/out"
expect_eq "... and only that one" 1 "$(grep -c 'REGRESSED$' "$T/out")"
check "... the summary counts it" grep -qE '^1 of [0-9]+ figures regressed by more than 10%' "$T/out"
rc 0 "--threshold 60: within it" "$B" compare "$T/a.json" "$T/c.json" --threshold 60
rc 0 "--threshold 50.5 (decimals)" "$B" compare "$T/a.json" "$T/c.json" --threshold 50.5
rc 3 "--threshold 49: past it" "$B" compare "$T/a.json" "$T/c.json" --threshold 49
rc 0 "C as A: the row got faster" "$B" compare "$T/c.json" "$T/a.json"
check "... flagged faster" grep -qE '^idx +fill tree +256 .*-33\.3% .*faster$' "$T/out"
rc 3 "--json" "$B" compare --json "$T/a.json" "$T/c.json"
check "... one object with the regression" python3 - "$T/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == 1 and d["bench"] == "numbering" and d["threshold_pct"] == 10
assert d["regressions"] == 1, d["regressions"]
bad = [r for r in d["rows"] if r["verdict"] == "REGRESSED"]
assert [(r["group"], r["case"], r["n"]) for r in bad] == [("idx", "fill tree", 256)], bad
assert abs(bad[0]["change_pct"] - 50) < 1e-6, bad[0]
assert d["a"]["file"].endswith("a.json") and d["b"]["file"].endswith("c.json")
PY
# a row only one run has is listed, not judged
python3 - "$T/a.json" "$T/d.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["results"] = [r for r in d["results"] if r["group"] != "names"]
json.dump(d, open(sys.argv[2], "w"))
PY
rc 0 "a run without the names rows" "$B" compare "$T/a.json" "$T/d.json"
check "... they are listed as only in A" grep -qE '^  names +parse +4096$' "$T/out"

# --- files that are no report ------------------------------------------------
head -c 200 "$T/a.json" >"$T/trunc.json"
rc 1 "a truncated JSON file" "$B" compare "$T/a.json" "$T/trunc.json"
check "... FILE:LINE:COL: not valid JSON" grep -qE "^sdswarm-bench compare: $T/trunc.json:[0-9]+:[0-9]+: not valid JSON" "$T/err"
echo '[1, 2]' >"$T/array.json"
rc 1 "a JSON array" "$B" compare "$T/array.json" "$T/a.json"
check "... not a report" grep -q "array.json: not a sdswarm-bench --json report" "$T/err"
echo '{"bench": "numbering"}' >"$T/norows.json"
rc 1 "no results" "$B" compare "$T/a.json" "$T/norows.json"
check "... says what is missing" grep -q 'no "results" array' "$T/err"
echo '{"bench": "numbering", "results": [{"group": "idx"}]}' >"$T/badrow.json"
rc 1 "a row without case and n" "$B" compare "$T/a.json" "$T/badrow.json"
check "... names the row" grep -q 'results\[0\] is not a row' "$T/err"
python3 - "$T/a.json" "$T/other.json" "$T/new.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["bench"] = "target"
json.dump(d, open(sys.argv[2], "w"))
d["bench"] = "numbering"
d["schema"] = 99
json.dump(d, open(sys.argv[3], "w"))
PY
rc 1 "reports of two commands" "$B" compare "$T/a.json" "$T/other.json"
check "... says so" grep -q "only reports of the same command compare" "$T/err"
rc 1 "a newer schema" "$B" compare "$T/a.json" "$T/new.json"
check "... says so" grep -q "schema 99" "$T/err"
rc 1 "a missing file" "$B" compare "$T/a.json" "$T/none.json"
check "... names it" grep -q "none.json" "$T/err"
"$B" numbering --quick --only names --sweep 1024 --json >"$T/small.json"
rc 1 "nothing in common (other sizes)" "$B" compare "$T/small.json" "$T/d.json"
check "... says why" grep -q "nothing to compare" "$T/err"

# --- usage errors: 2 ---------------------------------------------------------
rc 2 "compare with one file" "$B" compare "$T/a.json"
rc 2 "compare with three files" "$B" compare "$T/a.json" "$T/b.json" "$T/c.json"
rc 2 "--threshold x" "$B" compare "$T/a.json" "$T/b.json" --threshold x
check "... says what it wants" grep -q -- "--threshold 'x': need a percentage, 0 to 1000" "$T/err"
rc 2 "--threshold -5" "$B" compare "$T/a.json" "$T/b.json" --threshold -5
rc 2 "--threshold 2000" "$B" compare "$T/a.json" "$T/b.json" --threshold 2000
rc 2 "--only nams" "$B" numbering --only nams
check "... did you mean, and the groups" grep -q "no group 'nams' (did you mean names?); groups: names, scheme, idx, registry, slab" "$T/err"
rc 2 "--only names," "$B" numbering --only names,
check "... an empty name" grep -q "an empty group name" "$T/err"
rc 2 "--only on a command without groups" "$B" mktree "$T/x" --disks 2 --only a
check "... says it has none" grep -q "mktree: --only: this command has no groups" "$T/err"
rc 2 "--sizes 0" "$B" numbering --sizes 0
check "... the range" grep -q -- "--sizes '0': need N\[,N...\], each 1..1048576" "$T/err"
rc 2 "--sizes 1048577" "$B" numbering --sizes 256,1048577
rc 2 "--sizes 1,,2" "$B" numbering --sizes 1,,2
rc 2 "--sweep 1000 (not a power of two)" "$B" numbering --sweep 1000
check "... says so" grep -q "need a power of two" "$T/err"
rc 2 "--objects 10" "$B" numbering --objects 10
rc 2 "target --only lun" "$B" target --only lun
check "... did you mean luns" grep -q "did you mean luns" "$T/err"
rc 2 "target --luns 0" "$B" target --luns 0

# --- sizes kept under --quick; -v ----------------------------------------------
rc 0 "target --quick --only luns --luns 20000" "$B" target --quick --only luns --luns 20000 --json
check "... created 20000 LUNs, no io rows" python3 - "$T/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert [(r["group"], r["n"]) for r in d["results"]] == [("luns", 20000)], d["results"]
assert all("LUN" in t["name"] for t in d["targets"]), d["targets"]
PY
rc 0 "--only io before the command (io is also a command's name)" \
	"$B" --only io --quick --working-set 1048576 target --json
check "... is target's option: its io rows over 256 blocks" python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["bench"] == "target" and {(r["group"], r["n"]) for r in d["results"]} == {("io", 256)}, d' "$T/out"
rc 0 "numbering without -v" "$B" numbering --quick --only names --sweep 1024
check "... the internals are left out, and it says so" grep -qE '^  \(2 notes on how it was measured: -v\)$' "$T/out"
check "... no batch note" lacks 'best of' "$T/out"
rc 0 "numbering -v" "$B" numbering --quick --only names --sweep 1024 -v
check "... the batch note" grep -q '^  best of 2 batches' "$T/out"
check "... no hint" lacks 'notes on how it was measured' "$T/out"

# --- open-all --reps under ASan; a small tree is noisy -------------------------
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	S=$(mktemp -d /dev/shm/sdswarm-test.XXXXXX) || fail "mktemp in /dev/shm"
	on_exit "rm -rf '$S'"
else
	S=$(tmpdir)
fi
"$B" mktree "$S/t" --disks 60 --parts 4 >/dev/null || fail "mktree"
rc 0 "open-all --reps 3 over 300 files (ASan: no leak)" "$B" open-all "$S/t" --reps 3
check "... no LeakSanitizer report" lacks LeakSanitizer "$T/err"
check "... the targets are marked noisy" grep -qE '^io_uring / sync open rate .* (met|MISSED) \(noisy\)$' "$T/out"
check "... and a note says why" grep -q '(noisy) only 300 nodes, under 1000' "$T/out"
check "... the io_uring internals are left out" lacks 'OPENAT(direct)' "$T/out"
rc 0 "open-all -v --json" "$B" open-all "$S/t" --reps 2 -v --json
check "... noisy in the JSON, the internals in its notes" python3 - "$T/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["noisy"] is True and all(t["noisy"] for t in d["targets"]), d
assert any("OPENAT(direct)" in n or "plain descriptors" in n for n in d["notes"]), d["notes"]
PY
finish
