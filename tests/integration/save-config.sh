#!/bin/bash
# SPDX-License-Identifier: MIT
# sdswarm save-config: the LUN table changed at run time (a LUN removed,
# one added, one resized, two offline), fault rules set and cleared and an
# ALUA state changed are saved as a configuration; a second daemon started
# from it lists the same LUNs, faults and port groups, and saves the same
# file again. A FILE that cannot be written is a clear error (exit 1).
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires python3
private_dir T
PORT=$(free_port) || skip "no free TCP port on 127.0.0.1"
cat >"$T/a.conf" <<CONF
[target]
max_luns = 64
[luns]
count = 4
size = 1M
partitions = 0
[luns.big]
first = 10
count = 8
size = 64M
partitions = 0
vendor = ACME
[store]
type = mem
[faults]
fault.1 = medium-read luns=3
fault.2 = delay luns=10-12 delay=1ms
[iscsi]
enabled = yes
portal = 127.0.0.1:$PORT
[port_group.a]
ports = 1
CONF
start_daemon "$T/a.conf" || finish

ctl lun remove 11 >/dev/null &&
	ctl lun add --group big 30 >/dev/null &&
	ctl lun resize 13 128M >/dev/null &&
	ctl lun offline 14 >/dev/null &&
	ctl lun offline 15 >/dev/null &&
	ctl fault set hang luns=16 count=3 >/dev/null &&
	ctl fault clear 1 >/dev/null &&
	ctl alua set a standby >/dev/null
expect_eq "the table changed at run time" 0 "$?"

# what a daemon runs, without the figures that depend on its history
state() {
	ctl --json lun list >"$1.luns" && ctl --json fault list >"$1.faults" &&
		ctl --json alua list >"$1.alua" && ctl --json status >"$1.status" &&
		python3 - "$1" <<'PY'
import json, sys
p = sys.argv[1]
luns = json.load(open(p + ".luns"))
for r in luns["ranges"]:
    r.pop("data_bytes")
faults = [f["rule"] for f in json.load(open(p + ".faults"))["faults"]]
alua = [(g["name"], g["id"], g["state"], g["ports"])
        for g in json.load(open(p + ".alua"))["groups"]]
groups = [{k: g[k] for k in ("name", "size", "block_size", "partitions",
                             "ptable", "thin")}
          for g in json.load(open(p + ".status"))["groups"]]
print(json.dumps({"luns": luns, "faults": faults, "alua": alua,
                  "groups": groups}, sort_keys=True))
PY
}
state "$T/a" >"$T/a.state"
check "the first daemon's state was read" test -s "$T/a.state"

ctl save-config "$T/saved.conf" 2>"$T/err"
expect_eq "save-config FILE: exit 0" 0 "$?"
check "... it says what it saved" grep -q "saved 12 LUNs and 2 fault rules to $T/saved.conf" "$T/err"
expect_eq "... the file is mode 0600 (it may hold CHAP secrets)" 600 "$(stat -c %a "$T/saved.conf")"
check "... holes, sizes and offline LUNs as range.N keys" grep -qx "range.4 = 14-15 offline" "$T/saved.conf"
check "... the resized LUN" grep -qx "range.3 = 13 size=128M" "$T/saved.conf"
check "... the ALUA state" grep -qx "state = standby" "$T/saved.conf"
ctl save-config - >"$T/stdout.conf"
expect_eq "save-config -: the same text on standard output" \
	"$(grep -v '^#' "$T/saved.conf")" "$(grep -v '^#' "$T/stdout.conf")"
"$SDSWARMD" --check --config "$T/saved.conf" >"$T/check" 2>&1
expect_eq "sdswarmd --check accepts the saved file" 0 "$?"

ctl save-config "$T/no/such/dir/x.conf" >"$T/out" 2>&1
expect_eq "a FILE in a missing directory: exit 1" 1 "$?"
check "... saying which file and why" grep -q "cannot write $T/no/such/dir/x.conf: No such file or directory" "$T/out"
ctl save-config >"$T/out" 2>&1
expect_eq "save-config without FILE: usage error" 2 "$?"
ctl save-config "$T/x" "$T/y" >"$T/out" 2>&1
expect_eq "save-config with two FILEs: usage error" 2 "$?"
ctl save-config --force "$T/x" >"$T/out" 2>&1
expect_eq "save-config --force: usage error" 2 "$?"
check "... no file written" test ! -e "$T/x"

stop_daemon
expect_eq "the first daemon exits 0" 0 "$?"

start_daemon "$T/saved.conf" || finish
state "$T/b" >"$T/b.state"
expect_eq "the second daemon, started from the saved file, runs the same LUNs, faults, groups and ALUA states" \
	"$(cat "$T/a.state")" "$(cat "$T/b.state")"
ctl save-config "$T/again.conf" 2>/dev/null
expect_eq "... and saves the same configuration again" \
	"$(grep -v '^#' "$T/saved.conf")" "$(grep -v '^#' "$T/again.conf")"
stop_daemon
expect_eq "the second daemon exits 0" 0 "$?"

# the range.N key by hand: checked like every key
cat >"$T/bad.conf" <<'CONF'
[target]
max_luns = 64
[luns]
count = 4
size = 1M
partitions = 0
range.1 = 2-5
range.2 = 70
range.3 = 8 size=1000
range.4 = 9 sideways
CONF
"$SDSWARMD" --check --config "$T/bad.conf" >"$T/out" 2>&1
expect_eq "bad range.N keys: refused" 1 "$?"
check "... a range over the group's count" grep -q "range.1: LUNs 2-5 overlap \[luns\] (LUNs 0-3" "$T/out"
check "... a LUN past max_luns" grep -q "range.2 = 70: LUN 70 is past max_luns (64)" "$T/out"
check "... a size that is not whole blocks" grep -q "range.3 = 8 size=1000: size is not a multiple of block_size 512" "$T/out"
check "... a word that is neither size= nor offline" grep -q "range.4 = 9 sideways: 'sideways': not size=S or offline" "$T/out"
finish
