#!/bin/bash
# SPDX-License-Identifier: MIT
# sdswarm-bench target --quick: runs, exits 0, and its JSON reports the LUN
# creation and in-process I/O rows and targets. No figure is judged.
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
"$B" target --luns 0 >/dev/null 2>"$T/err"
expect_eq "--luns 0 exits 2 (usage)" 2 $?
check "--luns 0 says why" grep -q -- "--luns '0'" "$T/err"
finish
