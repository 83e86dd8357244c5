#!/bin/bash
# SPDX-License-Identifier: MIT
# [fuse] threads bounds the FUSE requests the daemon works on at once
# (sdswarm.conf(5), RESOURCE LIMITS). With threads = 2 and a hang rule on
# reads of sda: two reads reach the daemon and are held there (the rule's
# hits stop at 2), while two more reads and a lookup of a name never
# looked up wait in the kernel's queue, unserved and not refused; the
# daemon holds at most 2 workers' /dev/fuse descriptors (plus the
# session's). Clearing the rule releases everything: every read returns
# the bytes written before, the lookup answers. Then the same with
# threads = 4: all four reads reach the daemon (hits 4), so the bound is
# the key's. Every wait is bounded; a reader still blocked at the end is
# released by clearing the rule before the daemon is stopped.
. "$(dirname "$0")/../lib/fuse.sh"
requires_fuse python3 awk
private_dir T
fuse_mountpoint "$T/mnt"
# a held request would keep the unmount waiting: let it go first (at exit
# this runs before the fuse_unmount that fuse_mountpoint registered)
release_held() {
	[ -S "${DAEMON_CONTROL:-/nonexistent}" ] && ctl fault clear all >/dev/null 2>&1
	return 0
}
on_exit release_held

# wait_for SECONDS CMD...: true once CMD succeeds (tried every 0.1 s until
# SECONDS of wall time have passed: a loaded machine slows the tries)
wait_for() {
	local end=$((SECONDS + $1))
	shift
	while :; do
		"$@" && return 0
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# hits ID: how often rule ID fired
hits() {
	ctl fault list 2>/dev/null |
		awk -v id="$1" 'NF >= 4 && $1 == id && $2 ~ /^[0-9]+$/ { print $2; f = 1; exit } END { if (!f) print -1 }'
}
hits_at_least() { [ "$(hits "$1")" -ge "$2" ]; }

# fuse_fds: the daemon's descriptors on /dev/fuse (the session's, and one
# clone per worker thread libfuse started)
fuse_fds() {
	local n=0 f
	for f in /proc/"$DAEMON_PID"/fd/*; do
		[ "$(readlink "$f" 2>/dev/null)" = /dev/fuse ] && n=$((n + 1))
	done
	echo "$n"
}

# reader N OFFSET: read 4 KiB of sda at OFFSET in the background (at most
# 90 s); $T/rN gets "ok" and the seconds it took when the bytes are the
# ones written at that offset (0xNN where NN is OFFSET in MiB), else why.
reader() {
	timeout -k 5 90 python3 -c '
import os, sys, time
path, off, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
t0 = time.monotonic()
try:
    fd = os.open(path, os.O_RDONLY)
    data = os.pread(fd, 4096, off)
    os.close(fd)
    want = bytes([(off >> 20) & 0xff]) * 4096
    res = "ok" if data == want else "wrong bytes"
except OSError as e:
    res = "error " + e.strerror
open(out, "w").write("%s %.2f\n" % (res, time.monotonic() - t0))
' "$MNT/sda" "$2" "$T/r$1" &
	readers+=($!)
}
# looker N NAME: stat NAME in the background; $T/rN gets "ok"
looker() {
	timeout -k 5 90 python3 -c '
import os, sys
try:
    os.stat(sys.argv[1])
    res = "ok"
except OSError as e:
    res = "error " + e.strerror
open(sys.argv[2], "w").write(res + "\n")
' "$MNT/$2" "$T/r$1" &
	readers+=($!)
}
done_count() { local n=0 i; for i in "$@"; do [ -s "$T/r$i" ] && n=$((n + 1)); done; echo "$n"; }
all_done() { [ "$(done_count "$@")" -eq $# ]; }

run_case() { # THREADS
	local threads=$1 id i
	readers=()
	rm -f "$T"/r*
	cat >"$T/fr.conf" <<EOF
# fuse-requests.sh: 8 small disks, no partition table, no page cache (every
# read reaches the daemon)
[target]
seed = 3
power_on_ua = no
[luns]
count = 8
size = 64M
[store]
type = mem
[fuse]
threads = $threads
cache = direct
EOF
	fuse_daemon "$T/fr.conf" || return 1
	# a known byte at each offset the readers read: 0x01 at 1 MiB, ...
	for i in 1 2 3 4; do
		head -c 4096 /dev/zero | tr '\0' "\\$(printf '%03o' "$i")" |
			dd of="$MNT/sda" bs=4096 seek=$((i * 256)) conv=notrunc status=none ||
			fail "writing sda at $i MiB"
	done
	id=$(ctl fault set hang luns=0 ops=read | sed -n 's/^fault \([0-9]*\):.*/\1/p')
	[ -n "$id" ] || { fail "fault set hang did not print an id"; return 1; }
	reader 1 $((1 << 20))
	reader 2 $((2 << 20))
	if [ "$threads" -ge 4 ]; then
		reader 3 $((3 << 20))
		reader 4 $((4 << 20))
		check "threads=$threads: all four reads reach the daemon and are held (hits 4)" \
			wait_for 30 hits_at_least "$id" 4
		expect_eq "threads=$threads: none of them answered while the rule holds" 0 "$(done_count 1 2 3 4)"
	else
		check "threads=$threads: two reads reach the daemon and are held" \
			wait_for 30 hits_at_least "$id" 2
		reader 3 $((3 << 20))
		reader 4 $((4 << 20))
		looker 5 sdf
		sleep 3
		expect_eq "threads=$threads: no third read reaches the daemon (hits stay 2)" 2 "$(hits "$id")"
		expect_eq "threads=$threads: no read and not the lookup answered (they wait in the kernel's queue)" \
			0 "$(done_count 1 2 3 4 5)"
		check "threads=$threads: at most 2 worker descriptors on /dev/fuse (have $(fuse_fds), the session's one aside)" \
			test "$(fuse_fds)" -le 3
		daemon_alive || fail "the daemon died while requests were held"
	fi
	ctl fault clear "$id" >/dev/null || fail "fault clear $id"
	if [ "$threads" -ge 4 ]; then
		check "threads=$threads: clearing the rule releases all four reads within 30 s" \
			wait_for 30 all_done 1 2 3 4
	else
		check "threads=$threads: clearing the rule releases all five requests within 30 s" \
			wait_for 30 all_done 1 2 3 4 5
		expect_eq "threads=$threads: the lookup answered" ok "$(cat "$T/r5" 2>/dev/null)"
	fi
	for i in 1 2 3 4; do
		expect_eq "threads=$threads: read $i returned the bytes written" ok \
			"$(cut -d' ' -f1 "$T/r$i" 2>/dev/null)"
	done
	cat "$T"/r* 2>/dev/null | sed 's/^/  result: /'
	# whatever went wrong above, nothing is held past this point
	ctl fault clear all >/dev/null 2>&1
	for i in "${readers[@]}"; do wait "$i" 2>/dev/null; done
	stop_daemon
	expect_eq "threads=$threads: sdswarmd exits 0" 0 $?
	wait_for 5 eval '! is_mounted "$MNT"' || { release_held; fuse_unmount; }
}

run_case 2
run_case 4
finish
