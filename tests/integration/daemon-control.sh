#!/bin/bash
# SPDX-License-Identifier: MIT
# sdswarmd and its control socket end to end: status, LUN add / remove /
# resize / offline / online seen in status, fault rules set, listed and
# cleared, names that match `sdnum`, bad requests answered with ok:false
# while the daemon lives on, several clients at once, and a clean SIGTERM
# (exit 0, socket and pidfile gone).
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires python3
private_dir T

quiet() { "$@" >/dev/null 2>&1; }

# jq-less JSON: `js 'EXPR' <<<"$json"` prints the Python expression's value
# for the reply bound to r.
js() { python3 -c 'import json, sys; r = json.loads(sys.stdin.read()); print(eval(sys.argv[1]))' "$1"; }

cat >"$T/small.conf" <<'EOF'
# a small target for the control tests
[target]
seed = 7
max_luns = 4096

[luns]
count = 100
size = 1G
partitions = 2

[luns.spare]
first = 2000
count = 0
size = 256M

[store]
type = mem
mem_limit = 64M
EOF

start_daemon "$T/small.conf" || { fail "the daemon did not start"; finish; }
ok "started (pid $DAEMON_PID)"
expect_eq "socket mode" 600 "$(stat -c %a "$DAEMON_CONTROL")"

st=$(ctl status --json)
expect_eq "status luns" 100 "$(js 'r["luns"]' <<<"$st")"
check "status rss_bytes > 1 MiB" test "$(js 'r["rss_bytes"]' <<<"$st")" -gt 1048576
expect_eq "status max_luns" 4096 "$(js 'r["max_luns"]' <<<"$st")"
expect_eq "status groups" "default spare" "$(js '" ".join(g["name"] for g in r["groups"])' <<<"$st")"
expect_eq "status store kind" mem "$(js 'r["store"]["kind"]' <<<"$st")"
check "status pid" test "$(js 'r["pid"]' <<<"$st")" = "$DAEMON_PID"
check "human status shows luns" grep -q '^luns *100 of 4096' <(ctl status)
check "human status shows rss" grep -qE '^rss .*\([0-9]+ bytes\)' <(ctl status)

# --- LUNs ---------------------------------------------------------------
check "lun add without a group is refused (two groups)" \
	grep -q 'sdswarm: "group" is required (groups: default, spare)' <(ctl lun add 2>&1)
expect_eq "lun add --group spare" "added LUN 2000 (group spare)" "$(ctl lun add --group spare)"
expect_eq "lun add --group default 150" "added LUN 150 (group default)" "$(ctl lun add --group default 150)"
st=$(ctl status --json)
expect_eq "luns after two adds" 102 "$(js 'r["luns"]' <<<"$st")"
expect_eq "spare group present" 1 "$(js '[g for g in r["groups"] if g["name"] == "spare"][0]["present"]' <<<"$st")"
out=$(ctl lun add --group default 150 2>&1); rc=$?
expect_eq "adding an existing LUN fails" "1 sdswarm: LUN 150 exists" "$rc $out"
expect_eq "lun remove 150" "removed LUN 150" "$(ctl lun remove 150)"
out=$(ctl lun remove 150 2>&1); rc=$?
expect_eq "removing it again fails" "1 sdswarm: no LUN 150" "$rc $out"
expect_eq "luns after remove" 101 "$(js 'r["luns"]' <<<"$(ctl status --json)")"

expect_eq "lun resize 5 2G" "LUN 5 resized to 2147483648 bytes" "$(ctl lun resize 5 2G)"
expect_eq "resized size in status" 2147483648 "$(js 'r["lun"]["size"]' <<<"$(ctl status --json --lun 5)")"
ctl lun resize 5 12Q >/dev/null 2>&1; rc=$?
expect_eq "resize to a non-size fails" 1 "$rc"
ctl lun resize 5 1000 >/dev/null 2>&1; rc=$?
expect_eq "resize to a non-multiple of the block size fails" 1 "$rc"

expect_eq "lun offline 6" "LUN 6 offline" "$(ctl lun offline 6)"
st=$(ctl status --json --lun 6)
expect_eq "offline count" 1 "$(js 'r["states"]["offline"]' <<<"$st")"
expect_eq "LUN 6 state" offline "$(js 'r["lun"]["state"]' <<<"$st")"
expect_eq "lun online 6" "LUN 6 online" "$(ctl lun online 6)"
expect_eq "offline count after online" 0 "$(js 'r["states"]["offline"]' <<<"$(ctl status --json)")"
check "status --lun shows serial and wwn" grep -qE '^lun 6: online, group default, .* serial SDS[0-9A-F]{14}, wwn 0x6' <(ctl status --lun 6)

# --- faults -------------------------------------------------------------
expect_eq "fault set" "fault 1: medium-read luns=0-3 lba=100-199" "$(ctl fault set medium-read luns=0-3 lba=100-199)"
expect_eq "fault set --json id" 2 "$(js 'r["id"]' <<<"$(ctl --json fault set delay delay=5ms count=3)")"
fl=$(ctl fault list --json)
expect_eq "fault list" "1:medium-read luns=0-3 lba=100-199 ops=read 2:delay ops=any delay=5ms count=3" \
	"$(js '" ".join("%d:%s" % (f["id"], f["rule"]) for f in r["faults"])' <<<"$fl")"
expect_eq "status counts rules" 2 "$(js 'r["faults"]' <<<"$(ctl status --json)")"
check "human fault list" grep -qE '^2 +0 +3 +delay ops=any delay=5ms count=3$' <(ctl fault list)
out=$(ctl fault set explode luns=1 2>&1); rc=$?
expect_eq "bad rule refused" "1 sdswarm: rule: unknown kind 'explode' (medium-read, medium-write, delay, hang, ua, not-ready)" "$rc $out"
out=$(ctl fault set hang luns=4096 2>&1); rc=$?
expect_eq "rule past max_luns refused" "1 sdswarm: rule: luns=4096: past max_luns (4096)" "$rc $out"
expect_eq "fault clear 1" "cleared 1 fault rule" "$(ctl fault clear 1)"
expect_eq "rules after clear 1" 2 "$(js '",".join(str(f["id"]) for f in r["faults"])' <<<"$(ctl fault list --json)")"
out=$(ctl fault clear 1 2>&1); rc=$?
expect_eq "clearing it again fails" "1 sdswarm: no fault rule 1" "$rc $out"
ctl fault set ua luns=7 asc=0x3f ascq=0x03 count=1 >/dev/null
expect_eq "fault clear all" "cleared 2 fault rules" "$(ctl fault clear all)"
expect_eq "no rules left" 0 "$(js 'len(r["faults"])' <<<"$(ctl fault list --json)")"

# --- stats ----------------------------------------------------------------
s=$(ctl stats --json)
expect_eq "stats shape" "True True True" \
	"$(js 'str(r["ok"]) + " " + str(isinstance(r["ops"], list)) + " " + str(sorted(r["latency_ns"]) == ["p50", "p99", "p999"])' <<<"$s")"
check "human stats" grep -q '^ *latency p50 ' <(ctl stats)

# --- names ----------------------------------------------------------------
# remove LUN 10: probe order then gives index 10 to LUN 11
ctl lun remove 10 >/dev/null
names=$(ctl names --json)
expect_eq "names: one entry per LUN" 100 "$(js 'r["count"]' <<<"$names")"
expect_eq "names: total" 100 "$(js 'r["total"]' <<<"$names")"
expect_eq "names: index 10 is LUN 11" 11 "$(js 'r["names"][10]["lun"]' <<<"$names")"
expect_eq "names: the spare LUN is last" 2000 "$(js 'r["names"][-1]["lun"]' <<<"$names")"
SDNUM=
for b in "$SDSWARM_BIN/sdnum" "$SDSWARM_PLAIN_BIN/sdnum"; do
	[ -x "$b" ] && SDNUM=$b && break
done
if [ -n "$SDNUM" ]; then
	for i in 0 1 10 25 26 27 51 52 98 99; do
		expect_eq "names[$i] = sdnum name $i" "$("$SDNUM" name $i) $("$SDNUM" devt $i)" \
			"$(js "r['names'][$i]['name'] + ' ' + r['names'][$i]['devt']" <<<"$names")"
	done
	expect_eq "names --scheme legacy 27" "$("$SDNUM" --scheme legacy devt 27)" \
		"$(js 'r["names"][0]["devt"]' <<<"$(ctl names --json --scheme legacy --first 27 --count 1)")"
	expect_eq "names page: first line" "51 $("$SDNUM" name 50) $("$SDNUM" devt 50)" \
		"$(ctl names --first 50 --count 10 | head -1)"
else
	echo "note: no sdnum binary in $SDSWARM_BIN or $SDSWARM_PLAIN_BIN: names not compared with sdnum"
fi
page=$(ctl names --first 50 --count 10)
expect_eq "names page: 10 lines" 10 "$(wc -l <<<"$page")"
expect_eq "names text: all" 100 "$(ctl names | wc -l)"
expect_eq "names past the end" 0 "$(js 'r["count"]' <<<"$(ctl names --json --first 500)")"
out=$(ctl names --scheme bsd 2>&1); rc=$?
expect_eq "names: unknown scheme" "1 sdswarm: unknown scheme \"bsd\" (legacy, naive, wilcox, linux, dynamic)" "$rc $out"

# --- bad requests: ok:false, the connection and the daemon live on -------
raw_error() { # DESC TEXT WANT-ERROR
	local reply
	reply=$(ctl_raw "$2")
	expect_eq "$1" "False $3" "$(js 'str(r["ok"]) + " " + r["error"]' <<<"$reply")"
}
raw_error "garbage" $'garbage\n' "not JSON: '[' or '{' expected near 'garbage' (line 1, column 7)"
raw_error "an array" $'[1,2]\n' 'a request is a JSON object, like {"cmd":"status"}'
raw_error "no cmd" $'{"op":"add"}
' '"cmd" is required: a string (status, lun, fault, stats, names, metrics, alua, save-config, sessions)'
raw_error "unknown cmd" $'{"cmd":"explode"}
' 'unknown cmd "explode" (status, lun, fault, stats, names, metrics, alua, save-config, sessions)'
raw_error "unknown field" $'{"cmd":"status","colour":1}\n' 'unknown field "colour" for status'
raw_error "lun not a number" $'{"cmd":"lun","op":"remove","lun":"x"}\n' '"lun" must be an integer from 0 to 4095'
raw_error "lun past max" $'{"cmd":"lun","op":"online","lun":4096}\n' '"lun" must be an integer from 0 to 4095'
raw_error "resize without size" $'{"cmd":"lun","op":"resize","lun":1}\n' '"size" is required for op resize: bytes, or a string like "2G"'
raw_error "unknown op" $'{"cmd":"lun","op":"explode","lun":1}\n' 'unknown op "explode" (add, remove, resize, offline, online, list)'
raw_error "empty line" $'\n' 'empty request: send one JSON object per line, like {"cmd":"status"}'
# jansson words these two; what matters is that they are refused as JSON
raw_prefix() { # DESC TEXT WANT-PREFIX
	local got
	got=$(js 'str(r["ok"]) + " " + r["error"]' <<<"$(ctl_raw "$2")")
	if [[ $got == "False $3"* ]]; then ok "$1: $got"; else fail "$1: want 'False $3...', got '$got'"; fi
}
raw_prefix "binary" $'\x01\xff\xfe{\n' "not JSON: "
raw_prefix "duplicate keys" $'{"cmd":"status","cmd":"stats"}\n' "not JSON: duplicate object key"
raw_error "no newline, then EOF" '{"cmd":"lun","op":"offline"}' '"lun" is required for op offline'

# three requests in one write: three replies, in order; the bad one does
# not end the connection
replies=$(ctl_raw $'{"cmd":"status"}\nnot json\n{"cmd":"stats"}\n')
expect_eq "pipelined: three replies" 3 "$(wc -l <<<"$replies")"
expect_eq "pipelined: ok, error, ok" "True False True" \
	"$(python3 -c 'import json, sys; print(" ".join(str(json.loads(l)["ok"]) for l in sys.stdin))' <<<"$replies")"

# a line over 64 KiB: one error, then the daemon closes the connection
long=$(python3 -c 'print("x" * 70000, end="")')
replies=$(ctl_raw "$long")
expect_eq "oversize: one reply" 1 "$(wc -l <<<"$replies")"
expect_eq "oversize: the error" "False request longer than 65536 bytes; closing" \
	"$(js 'str(r["ok"]) + " " + r["error"]' <<<"$replies")"
# exactly 64 KiB of request is still one request
exact=$(python3 -c 'import json; s = json.dumps({"cmd": "status", "pad": ""}); print(s[:-2] + "x" * (65536 - len(s)) + "\"}")')
expect_eq "the line is 65536 bytes" 65536 "${#exact}"
expect_eq "a 65536-byte line is read whole" 'False unknown field "pad" for status' \
	"$(js 'str(r["ok"]) + " " + r["error"]' <<<"$(ctl_raw "$exact"$'\n')")"

# several clients at once: an idle one and one that has not read its reply
# hold their connections while eight others are served
python3 - "$DAEMON_CONTROL" <<'EOF' >"$T/multi" 2>&1
import json, socket, sys
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    s.settimeout(10)
    return s
idle = conn()
slow = conn()
slow.sendall(b'{"cmd":"names"}\n')
clients = [conn() for _ in range(8)]
for c in clients:
    c.sendall(b'{"cmd":"status"}\n')
n = 0
for c in clients:
    buf = b''
    while not buf.endswith(b'\n'):
        buf += c.recv(65536)
    n += json.loads(buf)["ok"] is True
buf = b''
while not buf.endswith(b'\n'):
    buf += slow.recv(65536)
print(n, json.loads(buf)["count"])
EOF
expect_eq "eight clients answered while two others wait" "8 100" "$(cat "$T/multi")"
# a client that connects and leaves at once
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.close()' "$DAEMON_CONTROL"
check "daemon alive after the bad requests" daemon_alive
expect_eq "and still answering" 100 "$(js 'r["luns"]' <<<"$(ctl status --json)")"

# --- a second daemon on the same socket is refused ------------------------
"$SDSWARMD" --config "$T/small.conf" --control "$DAEMON_CONTROL" >"$T/second" 2>&1; rc=$?
expect_eq "second daemon: exit" 1 "$rc"
check "second daemon: message" grep -qF "control socket $DAEMON_CONTROL: another sdswarmd answers there" "$T/second"
check "first daemon unharmed" quiet ctl status

# --- SIGTERM: exit 0, socket and pidfile gone -------------------------------
stop_daemon; rc=$?
expect_eq "SIGTERM: exit status" 0 "$rc"
check "socket removed" test ! -e "$DAEMON_CONTROL"
check "pidfile removed" test ! -e "$DAEMON_DIR/sdswarmd.pid"
check "log says it shut down" grep -q 'shutting down' "$DAEMON_LOG"
out=$(ctl status 2>&1); rc=$?
expect_eq "client without a daemon: exit" 1 "$rc"
expect_eq "client without a daemon: message" \
	"sdswarm: cannot reach sdswarmd at $DAEMON_CONTROL: no control socket there (is sdswarmd running? see --control)" "$out"

# --- flags over the file, SIGINT ---------------------------------------------
start_daemon "$T/small.conf" --luns 10 --mem-limit 8M -v || fail "restart with flags"
st=$(ctl status --json)
expect_eq "--luns 10" 10 "$(js 'r["luns"]' <<<"$st")"
check "creation time logged" grep -qE 'created 10 LUNs in 2 groups in [0-9.]+ ms: [0-9.]+ bytes/LUN' "$DAEMON_LOG"
ctl lun add --group default 11 >/dev/null
check "-v logs control changes" grep -q 'lun 11: added (group default)' "$DAEMON_LOG"
kill -INT "$DAEMON_PID"
stop_daemon; rc=$?
expect_eq "SIGINT: exit status" 0 "$rc"

# --- the file store: --store DIR, flushed and unlocked at exit ---------------
# (mem_limit would be refused: it applies only to the mem store)
grep -v '^mem_limit' "$T/small.conf" >"$T/nolimit.conf"
start_daemon "$T/nolimit.conf" --luns 3 --store "$T/data" || fail "start with --store"
expect_eq "--store: store kind" file "$(js 'r["store"]["kind"]' <<<"$(ctl status --json)")"
stop_daemon; rc=$?
expect_eq "--store: exit status" 0 "$rc"
check "--store: directory made" test -d "$T/data"

# --- no --control: the default path, which daemon and client agree on ------
# (a daemon, not a captive run: --run takes a private socket, control.PID)
mkdir -m 0700 "$T/xdg"
XDG_RUNTIME_DIR=$T/xdg timeout -k 5 60 "$SDSWARMD" --luns 2 >"$T/xdg.log" 2>&1 &
xpid=$!
for _ in $(seq 1 200); do [ -S "$T/xdg/sdswarm/control" ] && break; sleep 0.1; done
# the client is given no SDSWARM_CONTROL: it must find the socket by the
# default path alone
XDG_RUNTIME_DIR=$T/xdg env -u SDSWARM_CONTROL "$SDSWARM" status --json >"$T/xdg.status"
ls -d "$T/xdg/sdswarm/control" >"$T/xdg.sock"
stat -c %a "$T/xdg/sdswarm" >"$T/xdg.mode"
kill -TERM "$xpid"
wait "$xpid"
rc=$?
expect_eq "default path: client finds it" 2 "$(js 'r["luns"]' <"$T/xdg.status")"
expect_eq "default path: socket" "$T/xdg/sdswarm/control" "$(cat "$T/xdg.sock")"
expect_eq "default path: directory mode" 700 "$(cat "$T/xdg.mode")"
expect_eq "default path: exit status" 0 "$rc"
check "default path: socket removed" test ! -e "$T/xdg/sdswarm/control"
if sanitizer_report "$T/xdg.log"; then
	cat "$T/xdg.log"
fi

finish
