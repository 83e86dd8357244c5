# SPDX-License-Identifier: MIT
# Shared helpers for the integration scripts: sourced, never run.
#   requires CMD...      skip (exit 77) naming what is missing
#   check DESC CMD...    run CMD; count a failure with DESC if it fails
#   expect_eq DESC WANT GOT
#   finish               exit 0 if nothing failed, else 1
#   tmpdir               a private temporary folder, removed on exit
#                        (safe to call as $(tmpdir))
set -u
SDSWARM_TOP=${SDSWARM_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
SDSWARM_BIN=${SDSWARM_BIN:-$SDSWARM_TOP/build/address/bin}
SDSWARM_PLAIN_BIN=${SDSWARM_PLAIN_BIN:-$SDSWARM_TOP/build/bin}
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
_failures=0
_cleanups=()

_run_cleanups() {
	local i
	for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${_cleanups[i]}" || true
	done
}
trap _run_cleanups EXIT

on_exit() { _cleanups+=("$*"); }

skip() {
	echo "SKIP: $*"
	exit 77
}

requires() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "needs '$c' (install it with scripts/install-deps)"
	done
}

fail() {
	echo "FAIL: $*"
	_failures=$((_failures + 1))
}

ok() { echo "ok: $*"; }

check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else fail "$desc (command: $*)"; fi
}

expect_eq() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		fail "$1: want '$2', got '$3'"
	fi
}

# One private root per script, made here in the script's own shell so its
# removal is registered there (tmpdir runs in $(...), a subshell).
_sdswarm_tmp=$(mktemp -d "${TMPDIR:-/tmp}/sdswarm-test.XXXXXX")
on_exit "rm -rf '$_sdswarm_tmp'"
tmpdir() {
	mktemp -d "$_sdswarm_tmp/t.XXXXXX"
}

finish() {
	if [ "$_failures" -ne 0 ]; then
		echo "$_failures check(s) failed"
		exit 1
	fi
	echo "all checks passed"
	exit 0
}
