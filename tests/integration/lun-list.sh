#!/bin/bash
# SPDX-License-Identifier: MIT
# sdswarm lun list: the present LUNs as ranges of one group, state and size,
# with the bytes each range stores and the fault rules reaching it; a
# change to one LUN (offline, removed, resized, written) splits its range.
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires python3
private_dir T
cat >"$T/list.conf" <<'CONF'
[target]
max_luns = 64
[luns]
count = 2
size = 1M
partitions = 0
[luns.big]
first = 2
count = 18
size = 64M
partitions = 0
[store]
type = mem
CONF
start_daemon "$T/list.conf" || finish

ctl lun list >"$T/out"
expect_eq "two groups: two ranges" \
	"0-1 2 default online 1M 0 B 0|2-19 18 big online 64M 0 B 0|20 LUNs in 2 ranges" \
	"$(tail -n +2 "$T/out" | tr -s ' ' | tr '\n' '|' | sed 's/|$//')"

ctl lun offline 5 >/dev/null
ctl lun remove 9 >/dev/null
ctl lun resize 12 128M >/dev/null
ctl fault set medium-read luns=3-4 >/dev/null
ctl fault set hang luns=0-30 >/dev/null
ctl lun list >"$T/out"
expect_eq "offline, removed, resized LUNs split the ranges; the fault rules reaching each are counted" \
	"0-1 2 default online 1M 0 B 1|2-4 3 big online 64M 0 B 2|5 1 big offline 64M 0 B 1|6-8 3 big online 64M 0 B 1|10-11 2 big online 64M 0 B 1|12 1 big online 128M 0 B 1|13-19 7 big online 64M 0 B 1|19 LUNs in 7 ranges" \
	"$(tail -n +2 "$T/out" | tr -s ' ' | tr '\n' '|' | sed 's/|$//')"

# the JSON reply (nothing was written: no front end here, so every range
# stores 0 bytes)
ctl --json lun list >"$T/json"
check "--json: ranges with first, last, count, data_bytes, faults" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] and r["luns"] == 19, r
assert sum(g["count"] for g in r["ranges"]) == 19
for g in r["ranges"]:
    assert g["last"] - g["first"] + 1 == g["count"], g
    assert g["data_bytes"] == 0 and g["block_size"] == 512, g
' "$T/json"

ctl lun list 3 >/dev/null 2>&1
expect_eq "lun list with an argument: usage error" 2 "$?"
ctl lun lsit >"$T/out" 2>&1
expect_eq "lun lsit: usage error" 2 "$?"
check "... did you mean list" grep -q "did you mean list?" "$T/out"
stop_daemon
expect_eq "sdswarmd exits 0" 0 "$?"
finish
