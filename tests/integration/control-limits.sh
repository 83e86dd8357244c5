#!/bin/bash
# SPDX-License-Identifier: MIT
# The control socket's client limit: 64 clients that connect and say nothing
# take every ordinary slot. The next one is told "too many control clients";
# a root client still gets in (one slot is kept for uid 0); and the silent
# ones are told "idle for N s; closing" and closed after
# [target] control_idle_timeout (3 s here), after which anyone gets in.
# (The daemon, the 64 clients and the next ones all run as the caller: the
# client trusts only a daemon of its own uid or root. When that is root,
# the 65th client takes the root slot and the 66th is refused.)
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires python3
private_dir T

PY=python3
root=0
[ "$(id -u)" -eq 0 ] && root=1
cfg=$T/ctl.conf
cat >"$cfg" <<EOF
[target]
control_idle_timeout = 3
log_level = info
[luns]
count = 4
size = 1M
EOF
chmod 644 "$cfg"
start_daemon "$cfg" || exit 1

# 64 clients hold every ordinary slot, then fall silent and wait for what the
# daemon says
cat >"$T/hold.py" <<'EOF'
import os, socket, sys, time
socks = []
for _ in range(64):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.settimeout(20)
    socks.append(s)
files = [s.makefile("rwb") for s in socks]
# busy (a request each every half second) until told to fall silent, so
# that the slot checks do not race the idle timeout
for f in files:
    f.write(b'{"cmd":"status"}\n')
    f.flush()
    f.readline()
open(sys.argv[2], "w").close()
for _ in range(120):
    if os.path.exists(sys.argv[4]):
        break
    for f in files:
        f.write(b'{"cmd":"status"}\n')
        f.flush()
        f.readline()
    time.sleep(0.5)
said = b""
told = 0
for f in files:  # a 3 s idle timeout and a 1 s tick: 20 s is ample
    try:
        got = f.read()
    except OSError as e:
        got = ("<%s>" % e).encode()
    told += b'"idle for 3 s; closing"' in got
    said = said or got
said += b"\ntold %d\n" % told
open(sys.argv[3], "wb").write(said)
EOF
"$PY" "$T/hold.py" "$DAEMON_CONTROL" "$T/ready" "$T/said" "$T/quiet" &
holder=$!
on_exit "kill $holder 2>/dev/null"
for _ in $(seq 100); do [ -e "$T/ready" ] && break; sleep 0.1; done
check "64 clients connected" test -e "$T/ready"

if [ $root -eq 1 ]; then
	# the slot kept for root: this client gets it, and holds it
	check "root gets the reserved slot while 64 clients hold every other" ctl status
	"$PY" -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
open(sys.argv[2], "w").close(); time.sleep(10)' \
		"$DAEMON_CONTROL" "$T/extra" &
	extra=$!
	on_exit "kill $extra 2>/dev/null"
	for _ in $(seq 100); do [ -e "$T/extra" ] && break; sleep 0.1; done
	sleep 0.5 # the daemon accepts it
fi
out=$(ctl status 2>&1)
rc=$?
check "the next client is refused (exit $rc)" test "$rc" -ne 0
check "and told why: $out" grep -q "too many control clients; try again" <<<"$out"
if [ $root -eq 1 ]; then
	kill $extra
	wait $extra 2>/dev/null
fi
touch "$T/quiet" # the 64 fall silent
wait $holder
check "the idle client is told why it is closed: $(head -1 "$T/said")" \
	grep -qF '{"ok":false,"error":"idle for 3 s; closing"}' "$T/said"
check "a client gets in once the idle ones are gone" ctl status
check "all 64 idle clients were told so and closed" grep -qx "told 64" "$T/said"
n=$(sed -n 's/.*control: closed \([0-9]*\) clients\? idle for 3 s.*/\1/p' "$DAEMON_LOG" |
	awk '{ n += $1 } END { print n + 0 }')
expect_eq "the daemon logged the 64 idle closes" 64 "$n"

# fault rules: 4096 at most; the next is refused with the limit in words
"$PY" - "$DAEMON_CONTROL" >"$T/faults" <<'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
req = json.dumps({"cmd": "fault", "op": "set",
                  "rule": "medium-read luns=0 lba=1"}) + "\n"
f = s.makefile("rwb")
lines = []
for _ in range(4097):  # one at a time: the daemon reads a client only
    f.write(req.encode())  # once it has taken its replies
    f.flush()
    lines.append(json.loads(f.readline()))
print("ok", sum(1 for l in lines if l.get("ok")))
print("last", lines[-1].get("error"))
EOF
check "4096 fault rules are taken" grep -qx "ok 4096" "$T/faults"
check "the 4097th is refused: $(tail -1 "$T/faults")" \
	grep -qx "last too many fault rules (at most 4096; clear some first)" "$T/faults"
check "clearing them makes room" ctl fault clear all
check "and a rule is taken again" ctl fault set medium-read luns=0 lba=1
check "daemon alive" daemon_alive
stop_daemon
expect_eq "sdswarmd exits 0" 0 $?
finish
