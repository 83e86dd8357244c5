#!/bin/bash
# SPDX-License-Identifier: MIT
# One short multipath boot (tests/vm/multipath/run): 8 LUNs through 2
# iSCSI portals of sdswarmd in the guest, two ALUA port groups, the
# kernel's initiator on both, multipathd (multipath-tools from Debian 12,
# fetched by --pkgs) assembling one map of 2 paths per LUN, then group a
# standby and b active/optimized under O_DIRECT I/O through 4 maps: no I/O
# error through a map, the standby paths ghost. The verdict is read from
# the guest's multipath.json with a JSON parser. Skips when QEMU or the
# packages cannot be had.
# test-timeout: 960
. "$(dirname "$0")/../lib/common.sh"
requires qemu-system-x86_64 python3
[ -x "$SDSWARM_PLAIN_BIN/sdswarmd" ] || skip "no $SDSWARM_PLAIN_BIN/sdswarmd: run make"
export SDSWARM_VM_BIN=$SDSWARM_PLAIN_BIN
t=$(tmpdir)

out=$("$SDSWARM_TOP/tests/vm/multipath/run" --luns 8 --paths 2 --io 4 \
	--timeout 900 --out "$t/out" 2>"$t/err")
rc=$?
cat "$t/err"
grep -q '^SKIP:' <<<"$out" && skip "$(grep -m1 '^SKIP:' <<<"$out")"
[ $rc -eq 77 ] && skip "tests/vm/multipath/run: $(tail -1 "$t/err")"
echo "$out"
expect_eq "the script's verdict (0 = PASS)" 0 "$rc"
check "multipath.json came back" test -s "$t/out/multipath.json"
check "one map of 2 paths per LUN, a failover with no I/O error" \
	python3 - "$t/out/multipath.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
want = {"verdict": "PASS", "luns": 8, "paths": 2, "path_devices": 16,
        "maps": 8, "maps_full": 8, "ghost_paths": 8, "io_errors": 0}
bad = {k: (j.get(k), v) for k, v in want.items() if j.get(k) != v}
if j.get("io_pairs", 0) < 1:
    bad["io_pairs"] = (j.get("io_pairs"), ">= 1")
print("multipath.json:", "as expected" if not bad else bad)
sys.exit(1 if bad else 0)
PY
finish
