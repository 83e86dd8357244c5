#!/bin/bash
# SPDX-License-Identifier: MIT
# The FUSE mount's life: SIGTERM unmounts and exits 0, also with a file
# held open and with a read held by a hang fault (which ends in an error,
# not a hang); a daemon killed with SIGKILL leaves a stale mount, and the
# next daemon on that directory exits non-zero at once naming
# `fusermount3 -u DIR`; a live mount is not mounted over; a missing mount
# point is an error; [fuse] options reach the mount (ro).
. "$(dirname "$0")/../lib/fuse.sh"
requires_fuse python3 awk timeout
private_dir T
fuse_mountpoint "$T/mnt"

unmounted() { ! is_mounted "$1"; }
py() { local code=$1; shift; python3 -c "import errno, os, sys, time
$code" "$@"; }
# a second daemon in the foreground, bounded: exit status and log
other_daemon() { # CONF LOG ARGS...
	local conf=$1 log=$2
	shift 2
	timeout -k 5 20 "$SDSWARMD" --config "$conf" --control "$T/other.sock" "$@" >"$log" 2>&1
}

cat >"$T/small.conf" <<'EOF'
# fuse-lifecycle.sh: a few small disks
[target]
seed = 9
max_luns = 64

[luns]
count = 4
size = 256M
partitions = 2

[store]
type = mem
EOF

# --- SIGTERM with a file open and a read held by a hang fault ------------
fuse_daemon "$T/small.conf" || finish
exec 7<"$MNT/sdb1"
id=$(ctl --json fault set hang luns=3 | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
py '
f = os.open(sys.argv[1], os.O_RDONLY)
open(sys.argv[2] + ".open", "w").close()
try:
    os.pread(f, 4096, 0); r = "read"
except OSError as e:
    r = errno.errorcode[e.errno]
open(sys.argv[2], "w").write(r + "\n")' "$MNT/sdd" "$T/held" &
hpid=$!
# python takes seconds to start on a loaded machine: wait (bounded) for
# the open, then give the read a moment to reach the fault
i=0
while [ ! -e "$T/held.open" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
check "the read is held" test ! -s "$T/held"
t0=$(date +%s)
stop_daemon
rc=$?
t1=$(date +%s)
expect_eq "SIGTERM: exit status" 0 "$rc"
check "it took less than 10 s ($((t1 - t0)) s)" test $((t1 - t0)) -lt 10
check "SIGTERM unmounted $MNT" unmounted "$MNT"
wait "$hpid"
held=$(cat "$T/held")
check "the held read ended with an error ($held)" test "$held" = EIO -o "$held" = ENOTCONN -o "$held" = ECONNABORTED
exec 7<&-

# --- a stale mount after SIGKILL ----------------------------------------
fuse_daemon "$T/small.conf" || finish
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
out=$(py '
try:
    os.stat(sys.argv[1]); print("fine")
except OSError as e:
    print(errno.errorcode[e.errno])' "$MNT")
expect_eq "after SIGKILL the mount point is stale" ENOTCONN "$out"
t0=$(date +%s)
other_daemon "$T/small.conf" "$T/stale.log" --fuse "$MNT"
rc=$?
t1=$(date +%s)
check "a daemon on the stale mount exits non-zero ($rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "at once ($((t1 - t0)) s)" test $((t1 - t0)) -lt 10
check "naming the command that clears it" grep -qF "fusermount3 -u $MNT" "$T/stale.log" || cat "$T/stale.log"
check "saying what is wrong" grep -q 'stale FUSE mount' "$T/stale.log"
check "fusermount3 -u clears it" fusermount3 -u "$MNT"
check "the directory is usable again" test -d "$MNT"

# --- a live mount is not mounted over -----------------------------------
fuse_daemon "$T/small.conf" || finish
other_daemon "$T/small.conf" "$T/live.log" --fuse "$MNT"
rc=$?
check "a second daemon on a live mount exits non-zero ($rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "saying it is mounted already" grep -q 'already has a FUSE file system' "$T/live.log" || cat "$T/live.log"
check "the first one still serves" test -f "$MNT/sda2"
stop_daemon
expect_eq "stopped: exit status" 0 "$?"
check "unmounted" unmounted "$MNT"

# --- a missing mount point ----------------------------------------------
other_daemon "$T/small.conf" "$T/missing.log" --fuse "$T/nowhere"
rc=$?
check "a missing mount point: exit non-zero ($rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "naming it" grep -q "mount point $T/nowhere: No such file or directory" "$T/missing.log" || cat "$T/missing.log"

# --- [fuse] options reach the mount ---------------------------------------
{ cat "$T/small.conf"; printf '[fuse]\noptions = ro\nthreads = 2\n'; } >"$T/ro.conf"
fuse_daemon "$T/ro.conf" || finish
check "mounted read-only" awk -v m="$MNT" '$2 == m && $4 ~ /(^|,)ro(,|$)/ { f = 1 } END { exit !f }' /proc/self/mounts
out=$(py '
try:
    os.open(sys.argv[1], os.O_WRONLY); print("opened")
except OSError as e:
    print(errno.errorcode[e.errno])' "$MNT/sda")
expect_eq "no writes on a ro mount" EROFS "$out"
check "reads work" test "$(head -c 512 "$MNT/sda" | wc -c)" = 512
stop_daemon
expect_eq "stopped: exit status" 0 "$?"
check "unmounted" unmounted "$MNT"
finish
