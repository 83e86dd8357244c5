#!/bin/bash
# SPDX-License-Identifier: MIT
# sdswarm-bench target --quick: runs, exits 0, and its JSON reports the LUN
# creation and in-process I/O rows and targets, with READ(16) per-LUN
# counters off and on and their ratio as a target, and the config group's
# range.N lines at two sizes 8x apart with their time ratio as a target;
# -v says how they are measured; the io and config groups under ASan leak
# nothing. No figure is judged.
. "$(dirname "$0")/../lib/common.sh"
B=$SDSWARM_PLAIN_BIN/sdswarm-bench
[ -x "$B" ] || skip "no $B (make build/bin/sdswarm-bench)"
requires python3
T=$(tmpdir)
"$B" target --quick --json >"$T/out.json" || fail "target --quick --json exited $?"
check "JSON has creation, I/O rows and targets" python3 - "$T/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["bench"] == "target", d
cases = {r["case"] for r in d["results"]}
for want in ("create (ns per LUN)", "READ(16) 4K random, mem store",
             "WRITE(16) 4K random, mem store", "memcpy 4K random read (limit)"):
    assert want in cases, (want, cases)
names = {t["name"] for t in d["targets"]}
assert "resident bytes per idle LUN" in names, names
for r in d["results"]:
    assert r["ns_per_op"] > 0, r
PY
check "... READ(16) with per-LUN counters off and on, their ratio a target" \
	python3 - "$T/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["case"]: r for r in d["results"] if r["group"] == "io"}
off = rows["READ(16) 4K random, per-LUN counters off"]
on = rows["READ(16) 4K random, per-LUN counters on"]
assert off["n"] == on["n"] == rows["READ(16) 4K random, mem store"]["n"], rows
assert on["baseline_ns_per_op"] == off["ns_per_op"], (on, off)
assert off["reps"] >= 16 and on["reps"] == off["reps"], (off, on)
t = [t for t in d["targets"] if "per-LUN counters on / off" in t["name"]]
assert len(t) == 1 and t[0]["cmp"] == "<" and t[0]["limit"] == 1.05, t
assert abs(t[0]["value"] / (on["ns_per_op"] / off["ns_per_op"]) - 1) < 1e-4, t
assert any("per-LUN counters (sdswarm stats --count-luns) on" in n
           for n in d["notes"]), d["notes"]
PY
check "... range.N lines at 1024 and 8192, 8x the lines a target" \
	python3 - "$T/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [r for r in d["results"] if r["group"] == "config"]
assert [r["n"] for r in rows] == [1024, 8192], rows
assert rows[0]["case"] == rows[1]["case"] == \
    "range.N lines, parse and check (ns/line)", rows
assert rows[0]["baseline_ns_per_op"] is None, rows
assert rows[1]["baseline_ns_per_op"] == rows[0]["ns_per_op"], rows
t = [t for t in d["targets"] if t["name"] == "range.N lines, time ratio at 8x the lines"]
assert len(t) == 1 and t[0]["cmp"] == "<" and t[0]["limit"] == 16, t
want = rows[1]["ns_per_op"] * 8192 / (rows[0]["ns_per_op"] * 1024)
assert abs(t[0]["value"] / want - 1) < 1e-4, (t, want)
assert any("8192 range.N lines parsed and checked in" in n
           for n in d["notes"]), d["notes"]
PY
"$B" target --quick --only config --ranges 64 --json >"$T/out.json" ||
	fail "target --quick --only config --ranges 64 exited $?"
check "... --ranges is kept with --quick: 8 and 64 lines, no other group" \
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert [(r["group"], r["n"]) for r in d["results"]] == [("config", 8), ("config", 64)], d["results"]' "$T/out.json"
"$B" target --ranges 7 >/dev/null 2>"$T/err"
expect_eq "--ranges 7 exits 2 (usage)" 2 $?
check "... says why" grep -q -- "--ranges '7': need 8..1048576" "$T/err"
"$B" target --quick --only io --working-set 1048576 >"$T/text" 2>&1 ||
	fail "target --quick --only io exited $?"
check "... the text names the ratio" \
	grep -q "per-LUN counters (sdswarm stats --count-luns) on: READ(16) takes [0-9.]*x the time" "$T/text"
check "... (hidden without -v)" sh -c "! grep -q 'pairs of ~1 ms batches' '$T/text'"
"$B" target --quick --only io --working-set 1048576 -v >"$T/text" 2>&1 ||
	fail "target --quick --only io -v exited $?"
check "... -v: how it is measured" grep -q "pairs of ~1 ms batches .* back to back" "$T/text"
A=$SDSWARM_BIN/sdswarm-bench
if [ -x "$A" ]; then
	"$A" target --quick --only io --working-set 1048576 >"$T/asan" 2>&1
	expect_eq "the io group under ASan exits 0" 0 "$?"
	check "... no sanitizer report" sh -c "! grep -q Sanitizer '$T/asan'"
	"$A" target --quick --only config --ranges 4096 >"$T/asan" 2>&1
	expect_eq "the config group under ASan exits 0" 0 "$?"
	check "... no sanitizer report" sh -c "! grep -q Sanitizer '$T/asan'"
fi
"$B" target --luns 0 >/dev/null 2>"$T/err"
expect_eq "--luns 0 exits 2 (usage)" 2 $?
check "--luns 0 says why" grep -q -- "--luns '0'" "$T/err"
finish
