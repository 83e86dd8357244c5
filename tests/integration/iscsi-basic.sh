#!/bin/bash
# SPDX-License-Identifier: MIT
# The iSCSI front end with libiscsi's tools: discovery (SendTargets) and
# the LUN list (iscsi-ls -s), INQUIRY, READ CAPACITY (16); R2T bursts,
# Data-In sizes, phase-collapsed status and residuals from a raw initiator
# (iscsi_raw.py); hostile PDUs (drop or Reject, the target serves on);
# target NOP-In pings and the ping timeout; the Async Message when a LUN
# is added; and a clean shutdown.
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires python3 iscsi-ls iscsi-inq iscsi-readcapacity16
private_dir T

PORT=$(free_port)
IQN=iqn.2026-12.org.sdswarm
RAW="python3 $(dirname "$0")/iscsi_raw.py"
sed "s/^portal = .*/portal = 127.0.0.1:$PORT/" "$SDSWARM_TOP/configs/iscsi.conf" \
	>"$T/iscsi.conf"
printf 'nop_interval = 1\nnop_timeout = 3\n' >>"$T/iscsi.conf"
start_daemon "$T/iscsi.conf" || exit 1

# the first command of each LUN reports POWER ON OCCURRED; iscsi-ls -s
# does not retry it, so a listing may fail once per LUN
for _ in 1 2 3; do
	out=$(timeout 20 iscsi-ls -s "iscsi://127.0.0.1:$PORT" 2>&1) && break
done
check "iscsi-ls lists t0" grep -q "Target:$IQN:t0 Portal:127.0.0.1:$PORT,1" <<<"$out"
check "iscsi-ls lists t1" grep -q "Target:$IQN:t1 Portal:127.0.0.1:$PORT,1" <<<"$out"
expect_eq "iscsi-ls: two LUNs on t0" 2 "$(grep -c '^Lun:' <<<"$out")"

out=$(timeout 20 iscsi-inq "iscsi://127.0.0.1:$PORT/$IQN:t0/0" 2>&1)
check "iscsi-inq: a disk" grep -q "Peripheral Device Type:DIRECT_ACCESS" <<<"$out"
check "iscsi-inq: vendor" grep -q "Vendor:SDSWARM" <<<"$out"
out=$(timeout 20 iscsi-readcapacity16 "iscsi://127.0.0.1:$PORT/$IQN:t0/1" 2>&1)
check "readcapacity16: 64 MiB" grep -q "Total size:67108864" <<<"$out"
check "readcapacity16: thick LUN, no LBPME" grep -q "LBPME:0" <<<"$out"
out=$(timeout 20 iscsi-inq "iscsi://127.0.0.1:$PORT/$IQN:t0/5" 2>&1)
check "iscsi-inq of an absent LUN: LOGICAL UNIT NOT SUPPORTED" \
	grep -q "LOGICAL_UNIT_NOT_SUPPORTED" <<<"$out"
check "iscsi-inq of an unknown target fails" \
	bash -c "! timeout 20 iscsi-inq iscsi://127.0.0.1:$PORT/$IQN:t9/0 >/dev/null 2>&1"

check "raw: R2T, Data-In and residuals" timeout 60 $RAW "$PORT" "$IQN:t0" r2t
check "raw: hostile PDUs" timeout 120 $RAW "$PORT" "$IQN:t0" hostile
check "raw: NOP-In pings and their timeout" timeout 60 $RAW "$PORT" "$IQN:t0" nop
check "raw: Async Message on lun add" timeout 60 $RAW "$PORT" "$IQN:t0" async \
	"$SDSWARM" --control "$DAEMON_CONTROL" lun add --group thick
check "daemon alive" daemon_alive
stop_daemon
expect_eq "sdswarmd exits 0" 0 $?
finish
