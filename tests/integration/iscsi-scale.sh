#!/bin/bash
# SPDX-License-Identifier: MIT
# configs/iscsi-quarter-million.conf over iSCSI: 16 targets of 16,384 LUNs
# (262,144), LUNs above 255 reached by flat space addressing, the REPORT
# LUNS of a whole target, 256 concurrent sessions (each answers an
# INQUIRY), the 257th refused with out of resources (0x0302) at
# max_sessions = 256, and the logouts.
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires python3 iscsi-inq iscsi-readcapacity16 iscsi-ls
private_dir T

PORT=$(free_port)
IQN=iqn.2026-12.org.sdswarm
sed -e "s/^portal = .*/portal = 127.0.0.1:$PORT/" \
	-e "s/^max_sessions = .*/max_sessions = 256/" \
	"$SDSWARM_TOP/configs/iscsi-quarter-million.conf" >"$T/q.conf"
start_daemon "$T/q.conf" || exit 1

# libiscsi sends the URL's LUN as the first two bytes of the LUN field:
# flat space addressing is 0x4000 | LUN
out=$(timeout 30 iscsi-inq "iscsi://127.0.0.1:$PORT/$IQN:t15/$((0x4000 | 16383))" 2>&1)
check "t15 LUN 16383 (table LUN 262143, flat addressing)" \
	grep -q "DIRECT_ACCESS" <<<"$out"
out=$(timeout 30 iscsi-readcapacity16 "iscsi://127.0.0.1:$PORT/$IQN:t3/$((0x4000 | 300))" 2>&1)
check "t3 LUN 300: 1 GiB" grep -q "Total size:1073741824" <<<"$out"
for _ in 1 2 3; do
	out=$(timeout 60 iscsi-ls "iscsi://127.0.0.1:$PORT" 2>&1) && break
done
expect_eq "discovery lists 16 targets" 16 "$(grep -c '^Target:' <<<"$out")"
check "256 sessions, then 0x0302" timeout 120 \
	python3 "$(dirname "$0")/iscsi_raw.py" "$PORT" "$IQN:t7" sessions 256
check "daemon alive" daemon_alive
stop_daemon
expect_eq "sdswarmd exits 0" 0 $?
finish
