#!/bin/bash
# SPDX-License-Identifier: MIT
# sdswarmd --syslog and [target] syslog = yes: every message goes to syslog
# too, through glibc's openlog(3)/syslog(3) to /dev/log, facility daemon,
# at its own priority, "sdswarmd[PID]:" as its tag, peer-chosen text
# escaped as on stderr (a forged InitiatorName with a newline and an ESC);
# without either, nothing is sent.
#
# How it is tested without root: the script runs itself again in a user
# and mount namespace of its own (unshare -rm), where a tmpfs over /dev
# (with /dev/null, zero, urandom bound back in) lets it bind /dev/log, a
# Unix datagram socket a small listener reads; the host's /dev/log and
# syslog daemon are never touched.
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires python3 unshare mount

if [ "${1-}" != --inside ]; then
	unshare -rm true 2>/dev/null ||
		skip "unshare -rm fails here (no unprivileged user namespaces): cannot give sdswarmd a private /dev/log"
	private_dir T
	# the namespace's own cleanup cannot see the host's, so it keeps none
	unshare -rm --propagation private bash "$0" --inside "$T"
	exit $?
fi

T=$2
# a private /dev: the few nodes a test needs, then /dev/log
for n in null zero urandom random; do
	: >"$T/dev-$n"
	mount --bind "/dev/$n" "$T/dev-$n" || skip "cannot bind /dev/$n in the namespace"
done
mount -t tmpfs -o mode=755 sdswarm-dev /dev || skip "cannot mount a tmpfs on /dev in the namespace"
for n in null zero urandom random; do
	: >"/dev/$n"
	mount --bind "$T/dev-$n" "/dev/$n"
done
ln -s /proc/self/fd /dev/fd

# the listener: one repr() line per datagram, for at most 120 s, until
# $T/stop appears
python3 - "$T/syslog.out" "$T/stop" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
s.settimeout(0.2)
out = open(sys.argv[1], "a")
open(sys.argv[1] + ".ready", "w").close()
end = time.monotonic() + 120
while time.monotonic() < end and not os.path.exists(sys.argv[2]):
    try:
        d = s.recv(65536)
    except socket.timeout:
        continue
    out.write(repr(d) + "\n")
    out.flush()
PY
listener=$!
stop_listener() { : >"$T/stop"; wait "$listener" 2>/dev/null; }
on_exit stop_listener
for _ in $(seq 100); do [ -e "$T/syslog.out.ready" ] && break; sleep 0.1; done
check "the listener bound /dev/log" test -S /dev/log

PORT=$(free_port) || skip "no free TCP port"
IQN=iqn.2026-12.org.sdswarm
cat >"$T/a.conf" <<CONF
[target]
max_luns = 64
[luns]
count = 4
size = 1M
partitions = 0
[iscsi]
enabled = yes
portal = 127.0.0.1:$PORT
CONF
count() { grep -c "$1" "$T/syslog.out" 2>/dev/null; }
wait_for() { # PATTERN: up to 10 s for a datagram matching it
	local i
	for i in $(seq 100); do
		grep -q "$1" "$T/syslog.out" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

start_daemon "$T/a.conf" --syslog -v || finish
pid=$DAEMON_PID
check "notice: the start, <29> (daemon.notice), tagged sdswarmd[$pid]" \
	wait_for "^b'<29>.*sdswarmd\[$pid\]: serving 4 LUNs"
ctl lun add 9 >/dev/null
check "info: a LUN added, <30> (daemon.info)" wait_for "^b'<30>.*sdswarmd\[$pid\]: lun 9: added (group default)"
timeout 60 python3 "$SDSWARM_TOP/tests/integration/iscsi_raw.py" "$PORT" "$IQN:t0" login-text >"$T/raw" 2>&1
check "a login with a forged InitiatorName is refused" test $? -eq 0
check "its name reaches syslog escaped, as on stderr" \
	wait_for 'iqn.2026-12.org.x\\\\x0asdswarmd: FORGED LINE\\\\x1b\[2J'
check "... and stderr has the same line" grep -qF 'iqn.2026-12.org.x\x0asdswarmd: FORGED LINE\x1b[2J' "$DAEMON_LOG"
check "no datagram holds a raw newline or ESC" \
	python3 -c '
import ast, sys
for line in open(sys.argv[1]):
    d = ast.literal_eval(line)
    assert b"\n" not in d.rstrip(b"\n") and b"\x1b" not in d, d' "$T/syslog.out"
stop_daemon
expect_eq "sdswarmd --syslog exits 0" 0 "$?"
check "the stop is logged too" wait_for "sdswarmd\[$pid\]: .*shutting down"

before=$(wc -l <"$T/syslog.out")
start_daemon "$T/a.conf" -v || finish
ctl lun add 9 >/dev/null
stop_daemon
sleep 0.5
expect_eq "without --syslog: nothing is sent to /dev/log" "$before" "$(wc -l <"$T/syslog.out")"
check "... the log is on stderr alone" grep -q "lun 9: added" "$DAEMON_LOG"

sed -i 's/^max_luns = 64$/max_luns = 64\nsyslog = yes/' "$T/a.conf"
start_daemon "$T/a.conf" || finish
pid=$DAEMON_PID
check "[target] syslog = yes: the same as --syslog" wait_for "^b'<29>.*sdswarmd\[$pid\]: serving 4 LUNs"
stop_daemon
expect_eq "sdswarmd exits 0" 0 "$?"
finish
