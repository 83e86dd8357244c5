#!/bin/bash
# SPDX-License-Identifier: MIT
# Several paths to one LUN: sdswarmd on two portals (127.0.0.1, two ports)
# in two ALUA port groups. Discovery lists both portals; libiscsi's
# iscsi-inq sees the same LUN (TPGS 01b, the same serial) through each;
# iscsi_alua.py checks the per-port designators, REPORT TARGET PORT GROUPS
# and what `sdswarm alua set` does (the unit attention on both paths, the
# standby and unavailable sense, a failover and back); the control
# socket's and the configuration's errors are clear.
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires python3 iscsi-ls iscsi-inq
private_dir T

P1=$(free_port)
P2=$(free_port)
while [ "$P2" = "$P1" ]; do P2=$(free_port); done
IQN=iqn.2026-12.org.sdswarm
cat >"$T/mp.conf" <<EOF
[luns]
count = 4
size = 64M
partitions = 0

[iscsi]
enabled = yes
portal = 127.0.0.1:$P1, 127.0.0.1:$P2
targets = 1
luns_per_target = 16
threads = 2

[port_group.a]
ports = 1

[port_group.b]
id = 2
state = active/non-optimized
ports = 2
EOF
start_daemon "$T/mp.conf" || exit 1

for _ in 1 2 3 4 5; do
	out=$(timeout 20 iscsi-ls -s "iscsi://127.0.0.1:$P1" 2>&1) && break
done
check "discovery lists portal 1 (TPGT 1)" \
	grep -q "Target:$IQN:t0 Portal:127.0.0.1:$P1,1" <<<"$out"
check "discovery lists portal 2 (TPGT 2)" \
	grep -q "Target:$IQN:t0 Portal:127.0.0.1:$P2,2" <<<"$out"

for p in "$P1" "$P2"; do
	for _ in 1 2 3; do
		timeout 20 iscsi-inq "iscsi://127.0.0.1:$p/$IQN:t0/2" \
			>"$T/inq.$p" 2>&1 && break
	done
	timeout 20 iscsi-inq -e 1 -c 128 "iscsi://127.0.0.1:$p/$IQN:t0/2" \
		>"$T/serial.$p" 2>&1
done
check "iscsi-inq: TPGS 1 via portal 1" grep -q "^TPGS:1" "$T/inq.$P1"
check "iscsi-inq: TPGS 1 via portal 2" grep -q "^TPGS:1" "$T/inq.$P2"
check "iscsi-inq: a serial" grep -q "Unit Serial Number:\[SDS" "$T/serial.$P1"
check "iscsi-inq: the same serial through both portals" \
	cmp -s "$T/serial.$P1" "$T/serial.$P2"

check "two paths: identity, RTPG, state changes" timeout 120 \
	python3 "$(dirname "$0")/iscsi_alua.py" "$P1" "$P2" "$IQN:t0" \
	"$SDSWARM" "$DAEMON_CONTROL"

out=$(ctl alua list)
check "alua list: a active/optimized on port 1" \
	grep -Eq '^a +1 +active/optimized +1$' <<<"$out"
check "alua list: b on port 2" grep -Eq '^b +2 +[a-z/-]+ +2$' <<<"$out"
out=$(ctl alua set nosuch standby 2>&1)
expect_eq "alua set: an unknown group fails" 1 $?
check "alua set: an unknown group is named" grep -q \
	'no port group "nosuch" (groups: a, b)' <<<"$out"
out=$(ctl alua set a offline 2>&1)
check "alua set: an unknown state is named" grep -q \
	'state "offline": not active/optimized' <<<"$out"
out=$(ctl alua set a ao)
check "alua set: the same state again changes nothing" \
	grep -q "unchanged" <<<"$out"
check "daemon alive" daemon_alive
stop_daemon
expect_eq "sdswarmd exits 0" 0 $?

# configs/multipath-4.conf on four free ports: four paths, two groups of
# two, and libiscsi's MultipathIO tests over the first and the last path
ports=()
while [ ${#ports[@]} -lt 4 ]; do
	p=$(free_port)
	[[ " ${ports[*]} " == *" $p "* ]] || ports+=("$p")
done
sed "s/^portal = .*/portal = 127.0.0.1:${ports[0]}, 127.0.0.1:${ports[1]}, 127.0.0.1:${ports[2]}, 127.0.0.1:${ports[3]}/" \
	"$SDSWARM_TOP/configs/multipath-4.conf" >"$T/mp4.conf"
start_daemon "$T/mp4.conf" || exit 1
for _ in 1 2 3 4 5; do
	out=$(timeout 20 iscsi-ls "iscsi://127.0.0.1:${ports[2]}" 2>&1) && break
done
expect_eq "multipath-4.conf: discovery lists 4 portals of t0" 4 \
	"$(grep -c "Target:$IQN:t0 Portal:127.0.0.1:" <<<"$out")"
out=$(ctl alua list)
check "multipath-4.conf: a holds ports 1,2" grep -Eq '^a +1 +active/optimized +1,2$' <<<"$out"
check "multipath-4.conf: b holds ports 3,4" grep -Eq '^b +2 +active/non-optimized +3,4$' <<<"$out"
if command -v iscsi-test-cu >/dev/null; then
	timeout 120 iscsi-test-cu --dataloss -t ALL.MultipathIO \
		-i "$IQN:mp-1" -I "$IQN:mp-2" \
		"iscsi://127.0.0.1:${ports[0]}/$IQN:t0/7" \
		"iscsi://127.0.0.1:${ports[3]}/$IQN:t0/7" >"$T/cu.log" 2>&1
	expect_eq "iscsi-test-cu MultipathIO over paths 1 and 4: exit status" 0 $?
	check "iscsi-test-cu MultipathIO: 4 tests, 4 passed" grep -Eq \
		'^ +tests +4 +4 +4 +0' "$T/cu.log"
fi
stop_daemon
expect_eq "multipath-4.conf: sdswarmd exits 0" 0 $?

# a daemon without port groups has no ALUA to set
cat >"$T/plain.conf" <<EOF
[luns]
count = 1
size = 1M
partitions = 0
EOF
start_daemon "$T/plain.conf" || exit 1
out=$(ctl alua list 2>&1)
check "alua list without port groups: a clear error" grep -q \
	"no ALUA: the configuration has no \[port_group.NAME\]" <<<"$out"
stop_daemon

# configuration errors, before anything starts
sed "s/^ports = 2$/ports = 2, 3/" "$T/mp.conf" >"$T/bad.conf"
out=$("$SDSWARMD" --config "$T/bad.conf" --check 2>&1)
expect_eq "more paths than portals: sdswarmd --check fails" 1 $?
check "more paths than portals: said so" grep -q \
	"port 3, but \[iscsi\] portal lists 2 portals (ports 1..2): more paths than portals" \
	<<<"$out"
sed "s/^ports = 2$/ports = 1/" "$T/mp.conf" >"$T/bad2.conf"
out=$("$SDSWARMD" --config "$T/bad2.conf" --check 2>&1)
check "a portal in no group: said so" grep -q \
	"portal 127.0.0.1:$P2 (port 2) is in no \[port_group.NAME\]" <<<"$out"
finish
