# SPDX-License-Identifier: MIT
# The shared helper of the integration scripts that run sdswarmd: sourced,
# never run. Sources common.sh (requires, check, expect_eq, finish, tmpdir)
# and scripts/lib/daemon.sh (sdswarmd_start, stop_pid, free_port,
# sanitizer_report), which bench/ and scripts/ start the daemon with too.
#   start_daemon CONFIG [ARGS...]  start sdswarmd in the background with a
#                        private control socket, pidfile and log under
#                        $DAEMON_DIR; waits until it is ready: its pidfile,
#                        written once every front end serves (the mount
#                        made, the portal listening). Sets DAEMON_PID,
#                        DAEMON_CONTROL,
#                        DAEMON_LOG. Call it from the script's own shell
#                        (not inside $(...)), so stop_daemon can wait for it.
#   stop_daemon          SIGTERM by PID, wait for the exit; returns the
#                        daemon's exit status (SIGKILL after
#                        $DAEMON_STOP_TIMEOUT seconds, then status 124)
#   daemon_alive         true while the daemon runs
#   ctl ARGS...          the sdswarm client on this daemon's socket
#   ctl_raw TEXT         send TEXT as it is (no newline added) to the
#                        socket, shut down the sending side, print what
#                        comes back until the daemon closes
#   free_port            print a TCP port on 127.0.0.1 nobody listens on
#   private_dir VAR      make a private temporary folder, removed on exit,
#                        and store its path in VAR (unlike $(tmpdir), the
#                        removal is registered in the calling shell)
# A daemon still running when the script exits is stopped the same way.
# Processes are only ever ended by their PID.
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/daemon.sh"

SDSWARMD=${SDSWARMD:-$SDSWARM_BIN/sdswarmd}
SDSWARM=${SDSWARM:-$SDSWARM_BIN/sdswarm}
DAEMON_START_TIMEOUT=${DAEMON_START_TIMEOUT:-60}
DAEMON_STOP_TIMEOUT=${DAEMON_STOP_TIMEOUT:-30}
DAEMON_DIR=
DAEMON_PID=
DAEMON_CONTROL=
DAEMON_LOG=
_daemon_cleanup_set=

# Skip (77) unless both programs are built.
requires_daemon() {
	[ -x "$SDSWARMD" ] || skip "no $SDSWARMD (build it: make SANITIZE=address $SDSWARMD)"
	[ -x "$SDSWARM" ] || skip "no $SDSWARM (build it: make SANITIZE=address $SDSWARM)"
}

private_dir() {
	local d
	d=$(mktemp -d "${TMPDIR:-/tmp}/sdswarm-test.XXXXXX") || return 1
	on_exit "rm -rf '$d'"
	printf -v "$1" '%s' "$d"
}

daemon_alive() {
	[ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null
}

ctl() {
	"$SDSWARM" --control "$DAEMON_CONTROL" "$@"
}

start_daemon() {
	local config=$1 rc
	shift
	requires_daemon
	if daemon_alive; then
		echo "start_daemon: a daemon (pid $DAEMON_PID) is already running" >&2
		return 1
	fi
	if [ -z "$DAEMON_DIR" ]; then
		private_dir DAEMON_DIR || return 1
	fi
	DAEMON_CONTROL=$DAEMON_DIR/control
	DAEMON_LOG=$DAEMON_DIR/sdswarmd.log
	if [ -z "$_daemon_cleanup_set" ]; then
		on_exit _daemon_cleanup
		_daemon_cleanup_set=1
	fi
	SDSWARMD_WHO=start_daemon SDSWARMD_START_TIMEOUT=$DAEMON_START_TIMEOUT \
		SDSWARMD_STOP_TIMEOUT=$DAEMON_STOP_TIMEOUT \
		sdswarmd_start "$DAEMON_DIR" "$config" "$@"
	rc=$?
	DAEMON_PID=$SDSWARMD_PID
	return $rc
}

stop_daemon() {
	local rc
	[ -n "$DAEMON_PID" ] || return 0
	SDSWARMD_WHO=stop_daemon stop_pid "$DAEMON_PID" sdswarmd "$DAEMON_STOP_TIMEOUT"
	rc=$?
	DAEMON_PID=
	# one that had to be killed fails by its status (124) alone
	[ $rc -eq 124 ] || _daemon_log_check
	return $rc
}

# A sanitizer report in the daemon's log goes into the test's own log,
# where tests/run.sh looks for it.
_daemon_log_check() {
	if sanitizer_report "$DAEMON_LOG"; then
		echo "FAIL: sdswarmd's log ($DAEMON_LOG) has a sanitizer report:"
		cat "$DAEMON_LOG"
		_failures=$((_failures + 1))
	fi
}

_daemon_cleanup() {
	if daemon_alive; then
		stop_daemon
	else
		_daemon_log_check
	fi
	return 0
}

ctl_raw() {
	requires python3
	python3 - "$DAEMON_CONTROL" "$1" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.settimeout(10.0)
try:
    s.sendall(sys.argv[2].encode('utf-8', 'surrogateescape'))
    s.shutdown(socket.SHUT_WR)
except (BrokenPipeError, ConnectionResetError):
    pass
out = b''
while True:
    try:
        b = s.recv(65536)
    except ConnectionResetError:
        # the daemon closed with our request unread (an oversize line):
        # what it sent before arrives first
        break
    except socket.timeout:
        break
    if not b:
        break
    out += b
sys.stdout.write(out.decode('utf-8', 'replace'))
EOF
}
