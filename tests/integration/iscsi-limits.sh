#!/bin/bash
# SPDX-License-Identifier: MIT
# What one peer may claim of the iSCSI front end, from a raw initiator
# (iscsi_raw.py): command data buffers per connection and per daemon
# (TASK SET FULL, BUSY, INVALID FIELD IN CDB before any data is buffered,
# and the daemon's RSS after 16 x 32 MiB WRITEs) and per initiator over
# all its sessions (TASK SET FULL for it, another initiator served; BUSY
# for that one when the share is the daemon's whole pool); the Data-Out
# that piles up in the socket while a 32 MiB WRITE is stored, all of it
# handled even when the read that empties the socket ends a batch;
# discovery filtered by the initiator ACL; login keys declared twice and
# names that are not iSCSI names refused, and nothing a peer sent logged
# raw; a flood of idle connections capped in all and per address, with a
# shorter login timeout under pressure, while a real login still gets in;
# failed CHAP answers slowing their source address down; commands past a
# CmdSN gap held and delivered in CmdSN order; 128 commands in flight
# close the CmdSN window, 16 more immediate ones fill their slots and the
# next is rejected, ABORT TASK SET opens the window again; login text
# continued past 64 KiB ends the login with 0x0200.
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires python3
private_dir T

PORT=$(free_port)
IQN=iqn.2026-12.org.sdswarm
RAW="python3 $(dirname "$0")/iscsi_raw.py"

# LUN 0 takes 32 MiB transfers, LUN 1 the default 4 MiB
sed -e "s/^portal = .*/portal = 127.0.0.1:$PORT/" \
	-e 's/^sanitize_time = 6$/sanitize_time = 6\nmax_transfer = 32M/' \
	"$SDSWARM_TOP/configs/iscsi.conf" >"$T/buffers.conf"
sed -i '0,/^max_transfer = 32M$/!{/^max_transfer = 32M$/d}' "$T/buffers.conf"
printf 'max_buffer_per_connection = 64M\nmax_buffer = 80M\n' >>"$T/buffers.conf"
start_daemon "$T/buffers.conf" || exit 1
check "raw: buffer budgets" timeout 120 $RAW "$PORT" "$IQN:t0" buffers "$DAEMON_PID"
# one sweep of 32 rounds: before the fix every run hung within 10
check "raw: data that piles up while a WRITE is stored is all handled" \
	timeout 120 $RAW "$PORT" "$IQN:t0" tail 32
check "daemon alive" daemon_alive
stop_daemon
expect_eq "sdswarmd exits 0" 0 $?

# each initiator's share of the buffers: initiator A's sessions hold 64M of
# 96M, and B is served; with A's share the whole 96M, B gets BUSY
for held in 2 3; do
	sed '/^max_buffer/d' "$T/buffers.conf" >"$T/share.conf"
	printf '%s\n' 'max_buffer_per_connection = 32M' \
		"max_buffer_per_initiator = $((32 * held))M" 'max_buffer = 96M' \
		>>"$T/share.conf"
	start_daemon "$T/share.conf" || exit 1
	check "raw: max_buffer_per_initiator = $((32 * held))M of 96M" \
		timeout 120 $RAW "$PORT" "$IQN:t0" share "$held"
	check "daemon alive" daemon_alive
	stop_daemon
	expect_eq "sdswarmd exits 0" 0 $?
done

# the initiator ACL: login and discovery alike
sed "s/^portal = .*/portal = 127.0.0.1:$PORT/" "$SDSWARM_TOP/configs/iscsi.conf" \
	>"$T/acl.conf"
printf 'initiators = iqn.2026-12.org.sdswarm:raw, iqn.2026-12.org.sdswarm:b\n' \
	>>"$T/acl.conf"
start_daemon "$T/acl.conf" -v || exit 1
check "raw: CmdSN gaps held, delivered in order" timeout 60 $RAW "$PORT" "$IQN:t0" cmdsn
# commands in flight: every READ of LUN 0 hangs, so 128 fill the window and
# 16 the immediate slots; the 17th immediate one is rejected
ID=$(ctl fault set hang luns=0 ops=read | sed -n 's/^fault \([0-9]*\):.*/\1/p')
check "raw: 128 commands in the window, 16 immediate, then Reject" \
	timeout 60 $RAW "$PORT" "$IQN:t0" window
ctl fault clear "${ID:-all}" >/dev/null
check "raw: SendTargets follows the ACL" timeout 60 $RAW "$PORT" "$IQN:t0" \
	discovery iqn.2026-12.org.sdswarm:raw iqn.2026-12.org.sdswarm:stranger
check "raw: login text" timeout 60 $RAW "$PORT" "$IQN:t0" login-text
check "raw: login text over continuations capped at 64 KiB" \
	timeout 60 $RAW "$PORT" "$IQN:t0" login-long
check "the log names the bad InitiatorName, escaped" \
	grep -qF 'iqn.2026-12.org.x\x0asdswarmd: FORGED LINE\x1b[2J' "$DAEMON_LOG"
check "no forged line and no ESC in the log" \
	bash -c "! grep -q '^sdswarmd: FORGED' '$DAEMON_LOG' && ! grep -q \$'\\x1b' '$DAEMON_LOG'"
check "daemon alive" daemon_alive
stop_daemon
expect_eq "sdswarmd exits 0" 0 $?

# pre-login connections
sed "s/^portal = .*/portal = 127.0.0.1:$PORT/" "$SDSWARM_TOP/configs/iscsi.conf" \
	>"$T/flood.conf"
printf '%s\n' 'max_login_connections = 8' 'max_login_per_address = 4' \
	'login_timeout = 300' 'login_timeout_busy = 10' >>"$T/flood.conf"
start_daemon "$T/flood.conf" -v || exit 1
check "raw: a connection flood" timeout 120 $RAW "$PORT" "$IQN:t0" flood
# 16 or 17 refused in all (16 of the flood, the 9th pre-login one), summed into
# one line a tick: a tick may fall inside the flood and split the count
refusals() {
	sed -n 's/.*iscsi: closed [0-9]* connections\{0,1\} at accept: \([0-9]*\) over .*/\1/p' \
		"$DAEMON_LOG" | awk '{ n++; s += $1 } END { printf "%d in %d lines", s, n }'
}
r=$(refusals)
check "refusals are logged, once a second ($r)" \
	bash -c '[[ "$1" =~ ^1[67]\ in\ [1-4]\ lines$ ]]' _ "$r"
check "the idle ones: no login in 10 s" grep -q "no login in 10 s" "$DAEMON_LOG"
check "daemon alive" daemon_alive
stop_daemon
expect_eq "sdswarmd exits 0" 0 $?

# failed CHAP answers
sed "s/^portal = .*/portal = 127.0.0.1:$PORT/" "$SDSWARM_TOP/configs/iscsi.conf" \
	>"$T/chap.conf"
printf 'chap_user = alice\nchap_secret = alice-secret-0123\n' >>"$T/chap.conf"
start_daemon "$T/chap.conf" -v || exit 1
check "raw: failed CHAP answers are throttled" timeout 120 $RAW "$PORT" "$IQN:t0" chap
check "the log says how long the address waits" \
	grep -q "CHAP answer wrong; the next from this address waits 1 s" "$DAEMON_LOG"
check "daemon alive" daemon_alive
stop_daemon
expect_eq "sdswarmd exits 0" 0 $?

finish
