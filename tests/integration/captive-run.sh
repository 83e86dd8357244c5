#!/bin/bash
# SPDX-License-Identifier: MIT
# Captive runs and readiness: sdswarmd --run CMD runs CMD once every front
# end serves, with the socket, mount point and portal in its environment,
# then stops and exits with CMD's status; the pidfile and systemd's
# READY=1 come only once every front end serves; --exit-with-parent stops
# the daemon when the process that started it dies; the systemd unit.
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires python3
private_dir T

# captive ARGS...: sdswarmd, bounded, on a private socket; log in $T/log
captive() {
	timeout -k 5 120 "$SDSWARMD" --control "$T/ctl" "$@" >"$T/log" 2>&1
}

# --- exit status --------------------------------------------------------------
captive --luns 2 --run 'exit 0'
expect_eq "--run 'exit 0': exit 0" 0 "$?"
captive --luns 2 --run 'exit 7'
expect_eq "--run 'exit 7': exit 7" 7 "$?"
check "... logged" grep -q "the command exited with status 7: shutting down" "$T/log"
captive --luns 2 --run 'kill -TERM $$'
expect_eq "--run CMD killed by SIGTERM: 128 + 15" 143 "$?"
captive --luns 2 --run 'exit 0' --check
expect_eq "--run with --check: a usage error" 2 "$?"
captive --luns 2 --store /proc/no/such/dir --run "touch '$T/ran'"
expect_eq "a daemon that fails to start: exit 1" 1 "$?"
check "... and CMD never ran" test ! -e "$T/ran"
check "the socket is gone after a run" test ! -e "$T/ctl"

# --- the environment, and the state it sees -----------------------------------
port=$(free_port)
captive --luns 3 --iscsi "127.0.0.1:$port" --pidfile "$T/pid" --run "
	env | grep '^SDSWARM_' | sort >'$T/env'
	cat '$T/pid' >'$T/pid.seen'
	'$SDSWARM' status >'$T/status'
	python3 -c 'import socket, sys; socket.create_connection((\"127.0.0.1\", int(sys.argv[1])), 10)' $port &&
		echo listening >'$T/portal'
	echo \"\$NOTIFY_SOCKET\" >'$T/notify'"
expect_eq "--run with iSCSI: exit 0" 0 "$?"
pid=$(sed -n 's/^SDSWARM_PID=//p' "$T/env")
check "SDSWARM_PID is a number" grep -qxE '[0-9]+' <<<"$pid"
expect_eq "SDSWARM_CONTROL: the socket" "$T/ctl" "$(sed -n 's/^SDSWARM_CONTROL=//p' "$T/env")"
expect_eq "SDSWARM_PORTAL: the portal" "127.0.0.1:$port" "$(sed -n 's/^SDSWARM_PORTAL=//p' "$T/env")"
expect_eq "SDSWARM_IQN_PREFIX" "iqn.2026-12.org.sdswarm" "$(sed -n 's/^SDSWARM_IQN_PREFIX=//p' "$T/env")"
check "no SDSWARM_MOUNT without FUSE" test -z "$(grep '^SDSWARM_MOUNT=' "$T/env")"
expect_eq "the pidfile was there when CMD ran, with the daemon's pid" "$pid" "$(cat "$T/pid.seen")"
check "sdswarm found the daemon through SDSWARM_CONTROL alone" grep -q '^luns  *3 of' "$T/status"
check "the portal listened when CMD ran" test -s "$T/portal"
expect_eq "CMD has no NOTIFY_SOCKET" "" "$(cat "$T/notify")"
check "the pidfile is removed at exit" test ! -e "$T/pid"

if [ -e /dev/fuse ]; then
	mkdir -p "$T/mnt"
	captive --luns 3 --fuse "$T/mnt" --pidfile "$T/pid" --run "
		echo \"\$SDSWARM_MOUNT\" >'$T/mount'
		test -s '$T/pid' && ls \"\$SDSWARM_MOUNT\" >'$T/ls'"
	rc=$?
	if [ "$rc" != 0 ] && grep -qiE 'cannot mount|fusermount|/dev/fuse' "$T/log"; then
		echo "note: FUSE cannot mount here; its part is not checked"
	else
		expect_eq "--run with FUSE: exit 0" 0 "$rc"
		expect_eq "SDSWARM_MOUNT: the mount point" "$T/mnt" "$(cat "$T/mount")"
		expect_eq "the disks were there when CMD ran" "sda sda1 sda2 sda3 sda4 sdb sdb1 sdb2 sdb3 sdb4 sdc sdc1 sdc2 sdc3 sdc4" \
			"$(sort "$T/ls" | tr '\n' ' ' | sed 's/ $//')"
		check "unmounted after the run" test -z "$(grep " $T/mnt " /proc/mounts)"
	fi
fi

# --- sd_notify: READY=1 once the portal listens, STOPPING=1 at SIGTERM --------
port=$(free_port)
python3 - "$SDSWARMD" "$T" "$port" >"$T/notify.out" 2>&1 <<'EOF'
import os, signal, socket, subprocess, sys
daemon, tmp, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
path = os.path.join(tmp, 'notify.sock')
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(60)
env = dict(os.environ, NOTIFY_SOCKET=path)
p = subprocess.Popen([daemon, '--luns', '2', '--iscsi', '127.0.0.1:%d' % port,
                      '--control', os.path.join(tmp, 'nctl'),
                      '--pidfile', os.path.join(tmp, 'npid')],
                     env=env, stdout=subprocess.DEVNULL,
                     stderr=open(os.path.join(tmp, 'nlog'), 'w'))
try:
    msg = s.recv(4096).decode()
    print('first:', msg.replace('\n', '|'))
    # the portal and the pidfile, at the moment READY=1 arrived
    c = socket.create_connection(('127.0.0.1', port), 10)
    c.close()
    print('portal: listening')
    print('pidfile:', open(os.path.join(tmp, 'npid')).read().strip() == str(p.pid))
    p.send_signal(signal.SIGTERM)
    print('then:', s.recv(4096).decode().replace('\n', '|'))
    print('exit:', p.wait(60))
finally:
    if p.poll() is None:
        p.kill()
        p.wait()
EOF
check "READY=1 came first" grep -qx 'first: READY=1' "$T/notify.out"
check "... when the portal already listened" grep -qx 'portal: listening' "$T/notify.out"
check "... and the pidfile held the daemon's pid" grep -qx 'pidfile: True' "$T/notify.out"
check "STOPPING=1 at SIGTERM" grep -qx 'then: STOPPING=1' "$T/notify.out"
check "... then a clean exit" grep -qx 'exit: 0' "$T/notify.out"
grep -q . "$T/notify.out" && sed 's/^/  | /' "$T/notify.out"

# --- --exit-with-parent ----------------------------------------------------
# A parent starts the daemon, prints its pid once it is ready, and exits
# without stopping it: the daemon must shut down by itself.
python3 - "$SDSWARMD" "$T" >"$T/orphan" <<'EOF'
import os, subprocess, sys, time
daemon, tmp = sys.argv[1], sys.argv[2]
pidfile = os.path.join(tmp, 'opid')
p = subprocess.Popen([daemon, '--luns', '2', '--exit-with-parent',
                      '--control', os.path.join(tmp, 'octl'), '--pidfile', pidfile],
                     stdout=subprocess.DEVNULL,
                     stderr=open(os.path.join(tmp, 'olog'), 'w'))
for _ in range(600):  # up to 60 s for the pidfile
    if os.path.exists(pidfile) or p.poll() is not None:
        break
    time.sleep(0.1)
print(p.pid)
EOF
opid=$(cat "$T/orphan")
# bounded: up to 60 s for the orphan to go
for _ in $(seq 600); do
	kill -0 "$opid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$opid" 2>/dev/null; then
	fail "--exit-with-parent: the daemon (pid $opid) outlived its parent"
	kill -TERM "$opid"
else
	ok "--exit-with-parent: the daemon stopped when its parent exited"
fi
check "... by a clean shutdown" grep -q "shutting down" "$T/olog"
check "... removing its socket" test ! -e "$T/octl"

# --- side by side: private control sockets, iSCSI port 0 -----------------------
# Two captive runs at once with neither --control nor a port: each gets a
# control socket of its own (the default path's directory, control.PID)
# and a free port, both in its command's environment, and each command
# reaches its own daemon through them.
side() { # NAME LUNS: a captive run that reports what it was given
	XDG_RUNTIME_DIR=$T/xdg timeout -k 5 120 "$SDSWARMD" --luns "$2" --iscsi 127.0.0.1:0 --run "
		echo \"control=\$SDSWARM_CONTROL\"; echo \"portal=\$SDSWARM_PORTAL\"
		'$SDSWARM_BIN/sdswarm' --json lun list | sed -n 's/.*\"luns\":\\([0-9]*\\).*/\\1/p'
		python3 -c 'import socket, sys; h, p = sys.argv[1].rsplit(\":\", 1); socket.create_connection((h, int(p)), 5).close(); print(\"connected\")' \"\$SDSWARM_PORTAL\"
		sleep 2" >"$T/side-$1.out" 2>"$T/side-$1.log"
}
mkdir -p "$T/xdg"
chmod 0700 "$T/xdg"
side a 3 &
pa=$!
side b 5 &
pb=$!
wait "$pa"
ra=$?
wait "$pb"
rb=$?
expect_eq "two captive runs at once: the first exits 0" 0 "$ra"
expect_eq "  ... and the second" 0 "$rb"
ca=$(sed -n 's/^control=//p' "$T/side-a.out") cb=$(sed -n 's/^control=//p' "$T/side-b.out")
pa=$(sed -n 's/^portal=//p' "$T/side-a.out") pb=$(sed -n 's/^portal=//p' "$T/side-b.out")
check "  ... each a private control socket beside the default ($ca, $cb)" \
	eval '[[ $ca == "$T/xdg/sdswarm/control."[0-9]* && $cb == "$T/xdg/sdswarm/control."[0-9]* && $ca != "$cb" ]]'
check "  ... each a port of its own, not 0 ($pa, $pb)" \
	eval '[[ $pa == 127.0.0.1:[1-9]* && $pb == 127.0.0.1:[1-9]* && $pa != "$pb" ]]'
expect_eq "  ... the first's command reached its own daemon (3 LUNs)" 3 "$(sed -n 3p "$T/side-a.out")"
expect_eq "  ... the second's its own (5 LUNs)" 5 "$(sed -n 3p "$T/side-b.out")"
check "  ... and connected to its portal" grep -qx connected "$T/side-a.out"
check "  ... (the second too)" grep -qx connected "$T/side-b.out"
check "  ... the log names the picked port" grep -q "iscsi: portal $pa:" "$T/side-a.log"
check "  ... the private sockets are gone after" test ! -e "$ca" -a ! -e "$cb"
# A daemon without --run finds the default path taken: a private one too.
XDG_RUNTIME_DIR=$T/xdg timeout -k 5 60 "$SDSWARMD" --luns 1 --run "
	XDG_RUNTIME_DIR='$T/xdg' timeout -k 5 30 '$SDSWARMD' --luns 1 --control \"\$SDSWARM_CONTROL\" >'$T/dup.log' 2>&1 &
	sleep 1; kill \$! 2>/dev/null; wait" >/dev/null 2>&1
check "--control PATH taken by a live daemon: refused, not stolen" grep -q "another sdswarmd answers there" "$T/dup.log"
XDG_RUNTIME_DIR=$T/xdg timeout -k 5 60 "$SDSWARMD" --luns 1 --control "$T/xdg/sdswarm/control" --run "
	XDG_RUNTIME_DIR='$T/xdg' timeout -k 5 30 '$SDSWARMD' --luns 1 >'$T/second.log' 2>&1 &
	for i in 1 2 3 4 5 6 7 8 9 10; do grep -q 'serving' '$T/second.log' && break; sleep 0.5; done
	kill \$! 2>/dev/null; wait" >/dev/null 2>&1
check "the default path taken: the second daemon serves on a private one, and says so" \
	grep -q "control socket $T/xdg/sdswarm/control is another daemon's: this one's is $T/xdg/sdswarm/control\.[0-9]*" "$T/second.log"
sed 's/^/  | /' "$T/second.log" | head -5

# --- the systemd unit ----------------------------------------------------------
unit=$SDSWARM_TOP/scripts/sdswarmd.service
check "the unit is Type=notify (READY=1 is readiness)" grep -qx 'Type=notify' "$unit"
exec_line=$(sed -n 's/^ExecStart=//p' "$unit")
check "ExecStart runs @PREFIX@/bin/sdswarmd" grep -q '^@PREFIX@/bin/sdswarmd ' <<<"$exec_line"
# the options it gives, checked by the daemon itself (a config, no start)
mkdir -p "$T/etc"
cp "$SDSWARM_TOP/configs/default.conf" "$T/etc/sdswarm.conf"
# shellcheck disable=SC2086
args=$(sed -n 's/^Environment="SDSWARMD_ARGS=\(.*\)"$/\1/p' "$unit" | sed "s|/etc/sdswarm|$T/etc|g")
check "SDSWARMD_ARGS has a default" test -n "$args"
# shellcheck disable=SC2086
check "its default options are sdswarmd's (--check passes)" "$SDSWARMD" $args --check
if command -v systemd-analyze >/dev/null 2>&1; then
	sed "s|@PREFIX@|$SDSWARM_BIN/..|" "$unit" >"$T/sdswarmd.service"
	# --man=no: the man pages need not be installed here
	check "systemd-analyze verify" systemd-analyze verify --man=no "$T/sdswarmd.service"
fi
finish
