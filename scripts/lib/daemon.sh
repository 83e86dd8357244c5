# SPDX-License-Identifier: MIT
# The one way the tree's shell scripts start, wait for and stop sdswarmd:
# sourced by bash, never run. Its home is scripts/lib, not tests/lib,
# because bench/ and scripts/ start the daemon too and must not depend on
# the test suite; tests/lib/daemon.sh builds its start_daemon on it.
#   SDSWARMD             the daemon to run (the caller sets it)
#   SDSWARMD_WHO         the name messages begin with (default: sdswarmd)
#   sdswarmd_start DIR CONFIG [ARGS...]
#                        sdswarmd in the background: --config CONFIG,
#                        control socket DIR/control, pidfile
#                        DIR/sdswarmd.pid, log DIR/sdswarmd.log,
#                        --exit-with-parent, then ARGS. Waits until it is
#                        ready (its pidfile, written once every front end
#                        serves), at most SDSWARMD_START_TIMEOUT seconds
#                        (default 60; stopped after SDSWARMD_STOP_TIMEOUT,
#                        default 30, when not). Sets SDSWARMD_PID. Returns 0 when
#                        ready; 1 when it exited first (its log on stderr),
#                        did not get ready in time (then it is stopped) or
#                        the pidfile names another PID. Call it from the
#                        script's own shell, not $(...), so the PID is
#                        this shell's child and can be waited for.
#   sdswarmd_run DIR READY CONFIG RUN [ARGS...]
#                        a captive run, in the foreground: sdswarmd
#                        --config CONFIG, control socket DIR/control,
#                        --exit-with-parent, ARGS, --run RUN; its stderr
#                        to DIR/sdswarmd.log, the caller's stderr on
#                        descriptor 3 for RUN, stdout the caller's (which
#                        may append to the same log).
#                        Bounded by SDSWARMD_RUN_TIMEOUT seconds when set
#                        (timeout -k 10). Returns the run's exit status;
#                        when RUN never made the file READY, says the
#                        daemon exited before it was ready, with its log.
#   stop_pid PID NAME SECONDS
#                        SIGTERM to PID, wait up to SECONDS for it to exit,
#                        then SIGKILL; reaps it when it is this shell's
#                        child. Returns its exit status, 124 when it had
#                        to be killed, 0 when PID is empty.
#   show_log FILE        FILE on stderr, each line indented "  | "
#   free_port            print a TCP port on 127.0.0.1 nobody listens on
# Processes are only ever ended by their PID.
. "$(dirname "${BASH_SOURCE[0]}")/sanitizer.sh"

SDSWARMD_START_TIMEOUT=${SDSWARMD_START_TIMEOUT:-60}
SDSWARMD_STOP_TIMEOUT=${SDSWARMD_STOP_TIMEOUT:-30}
SDSWARMD_PID=

show_log() {
	sed 's/^/  | /' "$1" >&2
}

stop_pid() {
	local pid=$1 name=$2 secs=$3 waited=0
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$waited" -ge $((secs * 10)) ]; then
			echo "${SDSWARMD_WHO:-sdswarmd}: $name (pid $pid) ignored SIGTERM for ${secs}s; killing it" >&2
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			return 124
		fi
		sleep 0.1
		waited=$((waited + 1))
	done
	wait "$pid" 2>/dev/null
}

sdswarmd_start() {
	local dir=$1 config=$2 who=${SDSWARMD_WHO:-sdswarmd} waited=0 rc
	shift 2
	SDSWARMD_PID=
	rm -f "$dir/sdswarmd.pid"
	# --exit-with-parent: a caller killed outright leaves no daemon behind
	"$SDSWARMD" --config "$config" --control "$dir/control" \
		--pidfile "$dir/sdswarmd.pid" --exit-with-parent "$@" \
		>"$dir/sdswarmd.log" 2>&1 &
	SDSWARMD_PID=$!
	# ready = the pidfile (sdswarmd(8), READINESS); a file test every
	# 0.1 s, for up to SDSWARMD_START_TIMEOUT seconds
	until [ -s "$dir/sdswarmd.pid" ]; do
		if ! kill -0 "$SDSWARMD_PID" 2>/dev/null; then
			wait "$SDSWARMD_PID" 2>/dev/null
			rc=$?
			echo "$who: sdswarmd exited with status $rc before it was ready; its log:" >&2
			show_log "$dir/sdswarmd.log"
			SDSWARMD_PID=
			return 1
		fi
		if [ "$waited" -ge $((SDSWARMD_START_TIMEOUT * 10)) ]; then
			echo "$who: sdswarmd not ready (no pidfile) after ${SDSWARMD_START_TIMEOUT}s" >&2
			stop_pid "$SDSWARMD_PID" sdswarmd "$SDSWARMD_STOP_TIMEOUT" >/dev/null 2>&1
			SDSWARMD_PID=
			return 1
		fi
		sleep 0.1
		waited=$((waited + 1))
	done
	if [ "$(cat "$dir/sdswarmd.pid" 2>/dev/null)" != "$SDSWARMD_PID" ]; then
		echo "$who: the pidfile does not hold pid $SDSWARMD_PID" >&2
		return 1
	fi
	return 0
}

sdswarmd_run() {
	local dir=$1 ready=$2 config=$3 run=$4 rc
	local bound=()
	shift 4
	[ -z "${SDSWARMD_RUN_TIMEOUT:-}" ] ||
		bound=(timeout -k 10 "$SDSWARMD_RUN_TIMEOUT")
	# appended to, so that a caller may send stdout to the same log
	: >"$dir/sdswarmd.log"
	"${bound[@]}" "$SDSWARMD" --config "$config" --control "$dir/control" \
		--exit-with-parent "$@" --run "$run" 3>&2 2>>"$dir/sdswarmd.log"
	rc=$?
	if [ ! -e "$ready" ]; then
		echo "${SDSWARMD_WHO:-sdswarmd}: sdswarmd exited with status $rc before it was ready; its log:" >&2
		show_log "$dir/sdswarmd.log"
	fi
	return $rc
}

free_port() {
	if command -v python3 >/dev/null 2>&1; then
		python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
		return
	fi
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	return 1
}
