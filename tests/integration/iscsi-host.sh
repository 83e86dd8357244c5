#!/bin/bash
# SPDX-License-Identifier: MIT
# The iSCSI door a new user walks through: configs/iscsi-host.conf serves
# every LUN it creates and a one-shot initiator (iscsi-ls -s) succeeds on
# its first login; --iscsi [ADDR:PORT] and --tcmu switch front ends on from
# the command line; LUNs that do not fit the targets are refused with the
# numbers; a daemon with no front end says so.
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
private_dir T
CONF=$SDSWARM_TOP/configs/iscsi-host.conf

# --- the LUNs must fit the targets ------------------------------------------
"$SDSWARMD" --config "$SDSWARM_TOP/configs/iscsi.conf" --luns 300 --check >"$T/out" 2>"$T/err"
expect_eq "--luns 300 on 2 targets x 16 LUNs: refused (exit 1)" 1 "$?"
check "... naming the LUNs, the targets and what is left out" grep -qF \
	"300 LUNs, but 2 targets x 16 LUNs (luns_per_target) export only LUNs 0-31; 268 LUNs (32-299) would be reachable by no target" "$T/err"
check "... and no 'ok' line" test ! -s "$T/out"
"$SDSWARMD" --config "$SDSWARM_TOP/configs/iscsi.conf" --luns 32 --check >"$T/out" 2>&1
expect_eq "--luns 32 (exactly the targets' reach): accepted" 0 "$?"
# the same check guards a real start, before the portal opens
port=$(free_port)
timeout -k 5 60 "$SDSWARMD" --config "$SDSWARM_TOP/configs/iscsi.conf" --iscsi "127.0.0.1:$port" \
	--luns 33 --control "$T/c0" --run true >"$T/out" 2>&1
expect_eq "a start with LUN 32 past the reach: exit 1" 1 "$?"
check "... saying why" grep -qF "1 LUN (32-32) would be reachable by no target" "$T/out"
# without iSCSI, the targets' shape does not matter
"$SDSWARMD" --luns 300 --check >"$T/out" 2>&1
expect_eq "--luns 300 with no iSCSI: accepted" 0 "$?"

# --- the front ends, from the command line -------------------------------------
"$SDSWARMD" --luns 4 --check >"$T/out" 2>&1
check "--check names the front ends (none)" grep -q "front ends: none$" "$T/out"
"$SDSWARMD" --luns 4 --iscsi --check >"$T/out" 2>&1
check "--iscsi: the default portal" grep -q "front ends: iscsi on 127.0.0.1:3260$" "$T/out"
"$SDSWARMD" --luns 4 --iscsi 127.0.0.2:3999 --check >"$T/out" 2>&1
check "--iscsi ADDR:PORT" grep -q "front ends: iscsi on 127.0.0.2:3999$" "$T/out"
"$SDSWARMD" --luns 4 --iscsi=[::1]:3998 --tcmu --check >"$T/out" 2>&1
check "--iscsi=[IPv6]:PORT --tcmu" grep -q "front ends: iscsi on \[::1\]:3998, tcmu$" "$T/out"
"$SDSWARMD" --luns 4 --iscsi nowhere --check >"$T/out" 2>&1
expect_eq "--iscsi nowhere: exit 1" 1 "$?"
check "... saying what a portal is" grep -q "not ADDRESS:PORT" "$T/out"

# a daemon with no front end starts (the control socket serves) but warns
timeout -k 5 60 "$SDSWARMD" --luns 2 --control "$T/c1" --run true >"$T/out" 2>&1
expect_eq "no front end: it starts (exit 0)" 0 "$?"
check "... with a warning saying so" grep -q "warning: no front end: the 2 LUNs are reachable only through the control socket" "$T/out"
check "... and 'front ends: none' in its serving line" grep -q "serving 2 LUNs; front ends: none;" "$T/out"

# --- the host config: iscsi-ls succeeds the first time ---------------------------
requires iscsi-ls
"$SDSWARMD" --config "$CONF" --check >"$T/out" 2>&1
check "iscsi-host.conf checks" grep -q "ok: 256 LUNs.*front ends: iscsi on 127.0.0.1:3260$" "$T/out"
port=$(free_port)
# the first thing the daemon serves is this one login: no retry
timeout -k 5 120 "$SDSWARMD" --config "$CONF" --iscsi "127.0.0.1:$port" --control "$T/c2" \
	--run "timeout 60 iscsi-ls -s \"iscsi://\$SDSWARM_PORTAL/\" >'$T/ls' 2>'$T/ls.err'" >"$T/log" 2>&1
rc=$?
expect_eq "iscsi-ls -s on a fresh iscsi-host.conf: exit 0 the first time" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/  | /' "$T/ls.err" "$T/log"
expect_eq "... lists 4 targets" 4 "$(grep -c '^Target:' "$T/ls")"
expect_eq "... and 256 LUNs" 256 "$(grep -c '^Lun:' "$T/ls")"
check "... target t3 on the portal given" grep -q "^Target:iqn.2026-12.org.sdswarm:t3 Portal:127.0.0.1:$port," "$T/ls"
expect_eq "... every LUN a 1 GiB disk" 256 "$(grep -c '^Lun:[0-9]* *Type:DIRECT_ACCESS (Size:1023M)' "$T/ls")"
finish
