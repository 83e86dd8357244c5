#!/bin/bash
# SPDX-License-Identifier: MIT
# The control socket's client limit: 64 clients that connect and say nothing
# take every ordinary slot. The next one is told "too many control clients";
# a root client still gets in (one slot is kept for uid 0); and the silent
# ones are told "idle for N s; closing" and closed after
# [target] control_idle_timeout (3 s here), after which anyone gets in.
# As root the daemon and the 64 clients run as nobody (setpriv), the real
# case of an unprivileged user locking the socket; otherwise everything
# runs as the caller and the root slot is not tried (said in the log).
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires python3
private_dir T

as_user=()
PY=python3
if [ "$(id -u)" -eq 0 ]; then
	requires setpriv
	# nobody cannot run a python3 from root's home (pyenv): take the system's
	PY=/usr/bin/python3
	[ -x "$PY" ] || skip "no /usr/bin/python3 to run as nobody"
	as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	REAL=$SDSWARMD
	SDSWARMD=$T/sdswarmd-nobody
	printf '#!/bin/bash\nexec %s %q "$@"\n' "${as_user[*]}" "$REAL" >"$SDSWARMD"
	chmod 755 "$SDSWARMD"
	# the daemon's own directory: socket, pidfile, config
	DAEMON_DIR=$(mktemp -d "${TMPDIR:-/tmp}/sdswarm-test.XXXXXX")
	on_exit "rm -rf '$DAEMON_DIR'"
	chown 65534:65534 "$DAEMON_DIR"
fi
cfg=${DAEMON_DIR:-$T}/ctl.conf
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

# 64 silent clients; the first one then waits for what the daemon says
cat >"$T/hold.py" <<'EOF'
import socket, sys
socks = []
for _ in range(64):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    socks.append(s)
open(sys.argv[2], "w").close()
said = b""
told = 0
for s in socks:  # a 3 s idle timeout and a 1 s tick: 20 s is ample
    s.settimeout(20)
    got = b""
    try:
        while True:
            b = s.recv(4096)
            if not b:
                break
            got += b
    except OSError as e:
        got += ("<%s>" % e).encode()
    told += b'"idle for 3 s; closing"' in got
    said = said or got
said += b"\ntold %d\n" % told
open(sys.argv[3], "wb").write(said)
EOF
[ ${#as_user[@]} -gt 0 ] && chmod 777 "$T"
"${as_user[@]}" "$PY" "$T/hold.py" "$DAEMON_CONTROL" "$T/ready" "$T/said" &
holder=$!
on_exit "kill $holder 2>/dev/null"
for _ in $(seq 100); do [ -e "$T/ready" ] && break; sleep 0.1; done
check "64 clients connected" test -e "$T/ready"
sleep 0.5 # the daemon accepts them

out=$("${as_user[@]}" "$SDSWARM" --control "$DAEMON_CONTROL" status 2>&1)
rc=$?
check "the 65th client is refused (exit $rc)" test "$rc" -ne 0
check "and told why: $out" grep -q "too many control clients" <<<"$out"
if [ ${#as_user[@]} -gt 0 ]; then
	check "root gets the reserved slot while 64 clients idle" ctl status
else
	echo "note: not root: the reserved root slot is not tried"
fi

wait $holder
check "the idle client is told why it is closed: $(head -1 "$T/said")" \
	grep -qF '{"ok":false,"error":"idle for 3 s; closing"}' "$T/said"
check "a client gets in once the idle ones are gone" \
	"${as_user[@]}" "$SDSWARM" --control "$DAEMON_CONTROL" status
check "all 64 idle clients were told so and closed" grep -qx "told 64" "$T/said"
n=$(sed -n 's/.*control: closed \([0-9]*\) clients\? idle for 3 s.*/\1/p' "$DAEMON_LOG" |
	awk '{ n += $1 } END { print n + 0 }')
expect_eq "the daemon logged the 64 idle closes" 64 "$n"
check "daemon alive" daemon_alive
stop_daemon
expect_eq "sdswarmd exits 0" 0 $?
finish
