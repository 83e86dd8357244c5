#!/bin/bash
# SPDX-License-Identifier: MIT
# sdswarm-bench smoke: the numbering benchmark's quick mode runs in seconds,
# exits 0, and its JSON has every key, row and target a reader relies on;
# usage errors exit 1. A benchmark, not a test of speed: no figure is judged.
. "$(dirname "$0")/../lib/common.sh"
B=$SDSWARM_PLAIN_BIN/sdswarm-bench
[ -x "$B" ] || skip "no $B (make build/bin/sdswarm-bench)"
if command -v python3 >/dev/null 2>&1; then
	validator=python3
elif command -v jq >/dev/null 2>&1; then
	validator=jq
else
	skip "needs python3 or jq to read the JSON"
fi
T=$(tmpdir)

check "--help lists numbering" grep -q '^  numbering ' <("$B" --help)
check "numbering --help" grep -q -- '--quick' <("$B" numbering --help)
check "help numbering" grep -q 'usage: sdswarm-bench numbering' <("$B" help numbering)
"$B" bogus >/dev/null 2>"$T/err"
expect_eq "unknown command exits 2 (usage)" 2 $?
check "unknown command is named" grep -q "unknown command 'bogus'" "$T/err"
"$B" numbering --reps 0 >/dev/null 2>"$T/err"
expect_eq "--reps 0 exits 2 (usage)" 2 $?
check "--reps 0 says why" grep -q -- "--reps '0'" "$T/err"
"$B" numbering extra >/dev/null 2>&1
expect_eq "stray argument exits 2 (usage)" 2 $?

# --quick is meant for exactly this: seconds, not a minute.
t0=$(date +%s.%N)
"$B" numbering --quick --json >"$T/out.json" 2>"$T/err"
rc=$?
t1=$(date +%s.%N)
expect_eq "quick --json exits 0" 0 $rc
[ -s "$T/err" ] && fail "quick --json wrote to stderr: $(head -3 "$T/err")"
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
echo "quick run took ${secs}s"
check "quick run under 20 s" awk -v s="$secs" 'BEGIN { exit !(s < 20) }'

if [ "$validator" = python3 ]; then
	check "JSON has the expected keys and rows" python3 - "$T/out.json" <<'EOF'
import json, math, sys

doc = json.load(open(sys.argv[1]))
errors = []
def need(cond, what):
    if not cond:
        errors.append(what)

need(set(doc) >= {"bench", "machine", "results", "targets"}, "top-level keys")
need(doc.get("bench") == "numbering", "bench is numbering")
m = doc.get("machine", {})
need(isinstance(m.get("nproc"), int) and m["nproc"] >= 1, "machine.nproc")
need(isinstance(m.get("cpu_model"), str) and m["cpu_model"], "machine.cpu_model")

keys = {"group", "case", "n", "ns_per_op", "ops_per_s",
        "baseline_ns_per_op", "ratio"}
rows = doc.get("results", [])
need(len(rows) > 0, "results not empty")
seen = set()
for r in rows:
    name = "%s/%s/%s" % (r.get("group"), r.get("case"), r.get("n"))
    need(keys <= set(r), name + ": keys")
    seen.add((r.get("group"), r.get("case"), r.get("n")))
    ns, ops = r.get("ns_per_op"), r.get("ops_per_s")
    need(isinstance(ns, (int, float)) and ns > 0, name + ": ns_per_op > 0")
    need(isinstance(ops, (int, float)) and ops > 0, name + ": ops_per_s > 0")
    if isinstance(ns, (int, float)) and isinstance(ops, (int, float)) and ns > 0:
        need(math.isclose(ops, 1e9 / ns, rel_tol=1e-3), name + ": ops_per_s = 1e9/ns")
    base, ratio = r.get("baseline_ns_per_op"), r.get("ratio")
    need((base is None) == (ratio is None), name + ": baseline and ratio together")
    if base is not None and ratio is not None and ns:
        need(math.isclose(ratio, base / ns, rel_tol=1e-3), name + ": ratio = baseline/ns")

for s in ("legacy", "naive", "wilcox", "linux", "dynamic"):
    for op in ("encode", "decode"):
        need(any(g == "scheme" and c == s + " " + op for g, c, n in seen),
             "scheme row " + s + " " + op)
for c in ("name", "parse"):
    need(any(g == "names" and cc == c for g, cc, n in seen), "names row " + c)
for n in (256, 4096, 262144, 1048576):
    for c in ("fill tree", "churn tree"):
        need(("idx", c, n) in seen, "idx %s %d" % (c, n))
    need(("registry", "lookup radix", n) in seen, "registry lookup radix %d" % n)
for n in (256, 4096):
    for c in ("fill bitmap", "churn bitmap"):
        need(("idx", c, n) in seen, "idx %s %d" % (c, n))
    need(("registry", "lookup chain", n) in seen, "registry lookup chain %d" % n)
# --quick skips the baselines that cost seconds.
need(not any(g == "idx" and c.endswith("bitmap") and n >= 262144
             for g, c, n in seen), "quick skips bitmap at >= 262144")
for c in ("alloc+free all malloc", "alloc+free all slab", "churn malloc",
          "churn slab"):
    need(any(g == "slab" and cc == c for g, cc, n in seen), "slab row " + c)
fast = [r for r in rows if r.get("group") == "idx" and r.get("n") == 4096
        and r.get("case") in ("fill tree", "churn tree")]
need(all(r.get("ratio") is not None for r in fast), "tree rows at 4096 have a ratio")

targets = doc.get("targets", [])
need(len(targets) == 5, "five targets")
for t in targets:
    tn = t.get("name")
    need({"name", "value", "limit", "met"} <= set(t), "%s: keys" % tn)
    need(t.get("met") in (True, False, None), "%s: met is a boolean or null" % tn)
    need((t.get("value") is None) == (t.get("met") is None),
         "%s: met is null exactly when value is" % tn)
    v, lim = t.get("value"), t.get("limit")
    if v is not None and isinstance(lim, (int, float)):
        want = v < lim if t.get("cmp") == "<" else v >= lim
        need(t.get("met") == want, "%s: met agrees with value and limit" % tn)

for e in errors:
    print("bad JSON:", e)
sys.exit(1 if errors else 0)
EOF
else
	check "JSON has the expected keys" jq -e '
		.bench == "numbering" and (.machine.nproc >= 1) and
		(.machine.cpu_model | type == "string") and
		(.results | length > 0) and
		all(.results[]; has("group") and has("case") and has("n") and
		    has("ns_per_op") and has("ops_per_s") and
		    has("baseline_ns_per_op") and has("ratio") and
		    .ns_per_op > 0) and
		(.targets | length == 5) and
		all(.targets[]; has("name") and has("value") and has("limit") and
		    has("met"))' "$T/out.json"
fi

"$B" numbering --quick --reps 1 >"$T/out.txt" 2>/dev/null
expect_eq "quick table exits 0" 0 $?
check "table has its header" grep -qE '^group +case +N +ns/op +ops/s +baseline ns/op +ratio$' "$T/out.txt"
check "table has the targets" grep -q '^targets' "$T/out.txt"
check "table judges each target" test "$(grep -cE '(met|MISSED|not measured)$' "$T/out.txt")" -eq 5

# --kernel-idx: sd_idabench's lines (testhost/sd) as rows beside libsdnum's,
# the kernel ida the tree's baseline; a bad file is an error, not rows.
printf '[    9.1] sd_idabench: n=256 ida_fill_ns=100.5 ida_churn_ns=200.0 bitmap_fill_ns=50.0 bitmap_churn_ns=60.0\nnoise\nsd_idabench: n=1048576 ida_fill_ns=120.0 ida_churn_ns=220.0 bitmap_fill_ns=- bitmap_churn_ns=6000.0\n' >"$T/kidx"
"$B" numbering --quick --reps 1 --kernel-idx "$T/kidx" >"$T/k.txt" 2>"$T/err"
expect_eq "--kernel-idx exits 0" 0 $?
check "the kernel ida's fill at 256, against the kernel bitmap" grep -qE '^idx +fill kernel ida +256 +100\.5 .* 50\.00 +0\.50x$' "$T/k.txt"
check "the tree against the kernel ida at 2^20" grep -qE '^idx +churn tree vs kernel ida +1048576 .* 220\.0 ' "$T/k.txt"
check "no kernel bitmap fill row where sd_idabench left it out" test "$(grep -c 'fill kernel bitmap *1048576' "$T/k.txt")" -eq 0
printf 'sd_idabench: n=256 ida_fill_ns=abc ida_churn_ns=1 bitmap_fill_ns=1 bitmap_churn_ns=1\n' >"$T/kbad"
"$B" numbering --quick --kernel-idx "$T/kbad" >/dev/null 2>"$T/err"
expect_eq "a bad --kernel-idx line exits 1" 1 $?
check "and names its line" grep -q 'kbad:1: not an sd_idabench line' "$T/err"
"$B" numbering --quick --kernel-idx "$T/nothing-here" >/dev/null 2>"$T/err"
expect_eq "a missing --kernel-idx file exits 1" 1 $?
: >"$T/kempty"
"$B" numbering --quick --kernel-idx "$T/kempty" >/dev/null 2>"$T/err"
expect_eq "a file with no sd_idabench line exits 1" 1 $?
finish
