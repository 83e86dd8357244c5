#!/bin/bash
# SPDX-License-Identifier: MIT
# One short multipath boot (`sdswarm-testhost multipath`): 8 LUNs through 2
# iSCSI portals of sdswarmd in the guest, two ALUA port groups, the
# kernel's initiator on both, multipathd (multipath-tools from Debian 12,
# fetched by --pkgs) assembling one map of 2 paths per LUN, then group a
# standby and b active/optimized under O_DIRECT I/O through 4 maps: no I/O
# error through a map, the standby paths ghost. The verdict is read from
# the guest's multipath.json with a JSON parser. Skips when QEMU or the
# packages cannot be had.
# test-timeout: 960
. "$(dirname "$0")/../lib/vm-smoke.sh"
vm_smoke_requires sdswarmd
t=$(tmpdir)

out=$("$VM_TESTHOST" multipath --luns 8 --paths 2 --io 4 \
	--timeout 900 --out "$t/out" 2>"$t/err")
rc=$?
cat "$t/err"
grep -q '^SKIP:' <<<"$out" && skip "$(grep -m1 '^SKIP:' <<<"$out")"
[ $rc -eq 77 ] && skip "sdswarm-testhost multipath: $(tail -1 "$t/err")"
echo "$out"
expect_eq "the script's verdict (0 = PASS)" 0 "$rc"
check "multipath.json came back" test -s "$t/out/multipath.json"
mp=$t/out/multipath.json
json_check "the guest's verdict is PASS" "$mp" 'j["verdict"] == "PASS"'
json_check "8 LUNs on 2 paths: 16 path devices" "$mp" \
	'j["luns"] == 8 and j["paths"] == 2 and j["path_devices"] == 16'
json_check "one map of 2 paths per LUN" "$mp" 'j["maps"] == 8 and j["maps_full"] == 8'
json_check "the standby paths ghost" "$mp" 'j["ghost_paths"] == 8'
json_check "a failover with no I/O error through a map" "$mp" \
	'j["io_errors"] == 0 and j.get("io_pairs", 0) >= 1'
finish
