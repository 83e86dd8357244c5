#!/bin/bash
# SPDX-License-Identifier: MIT
# Nobody else may stand between sdswarm and sdswarmd:
#   - the daemon refuses a control socket directory that group or others
#     may write (0777, 0770, 0720; 1777 when not root: only a root-owned
#     sticky directory such as /tmp may be shared), since they could swap
#     the socket;
#   - as root (a second uid through setpriv): it refuses a directory that
#     belongs to another user, including the case found by hostile
#     testing, a non-root daemon without XDG_RUNTIME_DIR whose
#     /tmp/sdswarm-UID another user made first with mode 1777 (run in a
#     private mount namespace whose /tmp is a scratch directory);
#   - the client refuses a socket served by a process that is neither root
#     nor its own uid, instead of printing that process's forged reply.
# Without root only the mode checks run (said in the log).
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires python3
private_dir T

cat >"$T/ctl.conf" <<EOF
[luns]
count = 1
size = 1M
EOF
chmod 644 "$T/ctl.conf"

# refused: sdswarmd must exit 1 at once (it is killed by PID if it serves)
refused() { # dir what [command prefix...]
	local dir=$1 what=$2 pid rc i
	shift 2
	"$@" "$SDSWARMD" --config "$T/ctl.conf" --control "$dir/control" >"$T/out" 2>&1 &
	pid=$!
	for i in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $pid 2>/dev/null; then
		kill $pid
		wait $pid
		fail "$what: sdswarmd serves on $dir"
		return
	fi
	wait $pid
	rc=$?
	expect_eq "$what: exit" 1 "$rc"
	check "$what: the error says why" grep -q "control socket $dir/control: its directory is not safe" "$T/out"
}

# 1777 is refused for a directory of ours; a root-owned sticky one (/tmp
# itself) is allowed, so as root the test's own 1777 directory would pass
modes="0777 0770 0720"
[ "$(id -u)" -ne 0 ] && modes="$modes 1777"
for mode in $modes; do
	mkdir -m $mode "$T/m$mode"
	chmod $mode "$T/m$mode" # past the umask
	refused "$T/m$mode" "directory mode $mode"
	check "mode $mode is named" grep -q "has mode $mode: writable by group or others" "$T/out"
done

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	echo "note: not root (or no setpriv): no second uid, so the owner checks are not run"
	finish
fi
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no /usr/bin/python3 to run as another user"
chmod 755 "$T"
other=(setpriv --reuid=65533 --regid=65533 --clear-groups)
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)

# another user's directory, even mode 0700
mkdir -m 0700 "$T/theirs"
chown 65533:65533 "$T/theirs"
refused "$T/theirs" "a directory of uid 65533"
check "the owner is named" grep -q "belongs to uid 65533, not to uid 0 (this daemon) or root" "$T/out"

# a sticky directory of the daemon's own (non-root) user is still shared
mkdir -m 1777 "$T/n1777"
chmod 1777 "$T/n1777"
chown 65534:65534 "$T/n1777"
refused "$T/n1777" "nobody's own directory, mode 1777" "${nobody[@]}"
check "mode 1777 is named" grep -q "has mode 1777: writable by group or others" "$T/out"

# the hijack: /tmp/sdswarm-65534 made by uid 65533 with mode 1777 first
mkdir -m 1777 "$T/tmp"
chmod 1777 "$T/tmp"
cp "$T/ctl.conf" "$T/tmp/ctl.conf"
# the daemon from inside the new /tmp: where it was built (a clone under
# /tmp, say) is hidden by the bind mount
cp "$SDSWARMD" "$T/tmp/sdswarmd"
chmod 0755 "$T/tmp/sdswarmd"
mkdir -m 1777 "$T/tmp/sdswarm-65534"
chmod 1777 "$T/tmp/sdswarm-65534"
chown 65533:65533 "$T/tmp/sdswarm-65534"
if unshare -m --propagation private true 2>/dev/null; then
	unshare -m --propagation private bash -c '
		mount --bind "$1" /tmp || exit 99
		shift
		exec env -u XDG_RUNTIME_DIR timeout 10 "$@" --config /tmp/ctl.conf
	' - "$T/tmp" "${nobody[@]}" /tmp/sdswarmd >"$T/out" 2>&1
	rc=$?
	expect_eq "a non-root daemon in another user's /tmp/sdswarm-UID: exit" 1 "$rc"
	check "it names the directory and its owner" \
		grep -q "control socket directory /tmp/sdswarm-65534 belongs to uid 65533, not to uid 65534" "$T/out"
else
	echo "note: no private mount namespace here: the /tmp/sdswarm-UID case is not run"
fi

# the client: a socket answered by uid 65533
mkdir -m 0755 "$T/fake"
chown 65533:65533 "$T/fake"
cat >"$T/fake.py" <<'EOF'
import os, socket, sys
l = socket.socket(socket.AF_UNIX)
l.bind(sys.argv[1])
l.listen(4)
open(sys.argv[2], "w").close()
l.settimeout(20)
try:
    c, _ = l.accept()
    c.settimeout(5)
    c.recv(4096)
    c.sendall(b'{"ok":true,"luns":424242,"max_luns":424242,"forged":true}\n')
    c.close()
except OSError:
    pass
EOF
chmod 644 "$T/fake.py"
"${other[@]}" "$PY" "$T/fake.py" "$T/fake/control" "$T/fake/ready" &
fake=$!
on_exit "kill $fake 2>/dev/null"
for _ in $(seq 100); do [ -e "$T/fake/ready" ] && break; sleep 0.1; done
out=$("$SDSWARM" --control "$T/fake/control" --json status 2>&1)
rc=$?
check "the client refuses a socket served by uid 65533 (exit $rc)" test "$rc" -ne 0
check "and says why: $out" grep -q "neither root nor this user" <<<"$out"
not_forged() { ! grep -q 424242 <<<"$out"; }
check "the forged reply is not printed" not_forged
kill $fake 2>/dev/null
wait $fake 2>/dev/null
finish
