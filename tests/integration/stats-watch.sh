#!/bin/bash
# SPDX-License-Identifier: MIT
# sdswarm stats --watch at an interval longer than the daemon's
# [target] control_idle_timeout (1 s here, checked once a second, so a
# 2.5 s silence is always caught): every line comes, the daemon closes no
# client for idleness, and a client that is truly silent is still told
# "idle for 1 s; closing". A daemon restarted between two samples ends the
# watch with status 1, naming both pids: its counters began again.
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires python3
private_dir T

cat >"$T/watch.conf" <<'EOF'
[target]
control_idle_timeout = 1
log_level = info
[luns]
count = 2
size = 1M
EOF
start_daemon "$T/watch.conf" || exit 1

start=$(date +%s%N)
ctl stats --watch 2.5 --count 2 >"$T/watch" 2>"$T/watch.err"
rc=$?
elapsed=$((($(date +%s%N) - start) / 1000000))
expect_eq "--watch 2.5 --count 2 with a 1 s idle timeout: exit 0 ($(cat "$T/watch.err"))" 0 "$rc"
expect_eq "... a header and 2 lines" 3 "$(wc -l <"$T/watch")"
check "... the lines are 2.5 s apart: $(tail -1 "$T/watch")" \
	awk 'NR > 1 && $1 >= 2.4 { n++ } END { exit n != 2 }' "$T/watch"
check "... 5 s in all ($elapsed ms)" test "$elapsed" -ge 5000
ctl --json stats --watch 2.5 --count 1 >"$T/watch.json" 2>"$T/watch.err"
rc=$?
expect_eq "--json --watch 2.5 --count 1: exit 0 ($(cat "$T/watch.err"))" 0 "$rc"
expect_eq "... one reply, ok" "1 True" \
	"$(python3 -c 'import json, sys; L = open(sys.argv[1]).read().splitlines(); print(len(L), all(json.loads(x)["ok"] for x in L))' "$T/watch.json")"
no_idle_close() { ! grep -q "control: closed [0-9]* clients\? idle" "$DAEMON_LOG"; }
check "the daemon closed no client for idleness" no_idle_close

# The limit still holds for a client that says nothing.
python3 - "$DAEMON_CONTROL" >"$T/silent" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(20)  # a 1 s limit and a 1 s tick: closed within 2 s
got = b""
while True:
    b = s.recv(4096)
    if not b:
        break
    got += b
sys.stdout.write(got.decode())
EOF
check "a silent client is still closed: $(cat "$T/silent")" \
	grep -qxF '{"ok":false,"error":"idle for 1 s; closing"}' "$T/silent"

# A restart between two samples: the watch stops rather than mix the old
# daemon's counters with the new one's. The baseline is taken when the
# daemon logs the per-LUN window it asks for.
old=$DAEMON_PID
ctl stats --count-luns 0-1 --watch 5 --count 1 >"$T/restart" 2>&1 &
watcher=$!
on_exit "kill $watcher 2>/dev/null"
for _ in $(seq 100); do
	grep -q "per-LUN counters on for LUNs 0-1" "$DAEMON_LOG" && break
	sleep 0.1
done
check "the watch took its baseline" grep -q "per-LUN counters on" "$DAEMON_LOG"
stop_daemon
start_daemon "$T/watch.conf" || exit 1
wait $watcher
expect_eq "a restart during --watch: exit 1" 1 "$?"
check "... saying so: $(cat "$T/restart")" grep -qF \
	"restarted during --watch (pid $old, now $DAEMON_PID): its counters began again" "$T/restart"

check "daemon alive" daemon_alive
stop_daemon
expect_eq "sdswarmd exits 0" 0 $?
finish
