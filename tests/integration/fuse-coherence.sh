#!/bin/bash
# SPDX-License-Identifier: MIT
# [fuse] cache = page against every other path to the same blocks: a
# file's bytes are read (now cached), then changed by iSCSI's WRITE, a
# fault rule, lun offline, lun resize and lun remove through the control
# socket; the next read through FUSE sees the change at once, with no
# waiting (each path is done only once the cached copies are dropped).
. "$(dirname "$0")/../lib/fuse.sh"
requires_fuse python3 awk timeout
private_dir T
fuse_mountpoint "$T/mnt"
PORT=$(free_port)
IQN=iqn.2026-12.org.sdswarm
RAW="python3 $(dirname "$0")/iscsi_raw.py"

# py NAME OFF LEN: the bytes' distinct values ("119") or the errno's name
rd() { python3 -c 'import errno, os, sys
f = os.open(sys.argv[1], os.O_RDONLY)
try:
    b = os.pread(f, int(sys.argv[3]), int(sys.argv[2]))
    print(",".join(str(x) for x in sorted(set(b))))
except OSError as e:
    print(errno.errorcode[e.errno])' "$MNT/$1" "$2" "$3"; }

cat >"$T/c.conf" <<EOF2
[target]
seed = 16
max_luns = 64
[luns]
count = 2
size = 64M
partitions = 2
ptable = gpt
[store]
type = mem
[iscsi]
enabled = yes
portal = 127.0.0.1:$PORT
targets = 1
luns_per_target = 4
threads = 1
[fuse]
cache = page
EOF2
fuse_daemon "$T/c.conf" || finish
check "cache = page in the log" grep -q "cache = page" "$DAEMON_LOG"
# sda1's first LBA, from the GPT's first entry (LBA 2, byte 32)
start=$(python3 -c 'import os, struct, sys
f = os.open(sys.argv[1], os.O_RDONLY)
print(struct.unpack("<Q", os.pread(f, 8, 2 * 512 + 32))[0])' "$MNT/sda")
check "sda1 starts past the GPT ($start)" test "$start" -ge 34
off=$((start * 512))

# --- iSCSI WRITE: both files had the old bytes cached ---------------------
expect_eq "sda1 reads zeros" 0 "$(rd sda1 0 4096)"
expect_eq "sda at sda1's start reads zeros" 0 "$(rd sda "$off" 4096)"
$RAW "$PORT" "$IQN:t0" write 0 "$start" 8 0x77 >"$T/raw.out" 2>&1
check "iSCSI WRITE(10)" grep -q "^ok: WRITE(10)" "$T/raw.out"
expect_eq "sda1 sees the iSCSI write" 119 "$(rd sda1 0 4096)"
expect_eq "sda sees it too" 119 "$(rd sda "$off" 4096)"

# --- a fault rule over cached blocks --------------------------------------
ctl fault set medium-read luns=0 lba="$start-$start" >/dev/null
expect_eq "sda1 under a medium-read rule" EIO "$(rd sda1 0 512)"
ctl fault clear all >/dev/null
expect_eq "sda1 after the rule" 119 "$(rd sda1 0 512)"

# --- offline and online -----------------------------------------------------
ctl lun offline 0 >/dev/null
expect_eq "sda1 offline" ENOMEDIUM "$(rd sda1 0 512)"
ctl lun online 0 >/dev/null
expect_eq "sda1 online again" 119 "$(rd sda1 0 512)"

# --- resize: the size is kept for an hour, and changes at once --------------
expect_eq "sdb is 64 MiB" $((64 << 20)) "$(stat -c %s "$MNT/sdb")"
ctl lun resize 1 96M >/dev/null
expect_eq "sdb is 96 MiB at once" $((96 << 20)) "$(stat -c %s "$MNT/sdb")"

# --- remove: the names go at once, an open file's cache with them ----------
exec 7<"$MNT/sdb1"
expect_eq "sdb1 reads" 0 "$(rd sdb1 0 512)"
ctl lun remove 1 >/dev/null
check "sdb is gone at once" test ! -e "$MNT/sdb"
check "sdb1 too" test ! -e "$MNT/sdb1"
out=$(python3 -c 'import errno, os
try:
    os.pread(7, 512, 0); print("read")
except OSError as e:
    print(errno.errorcode[e.errno])')
expect_eq "the open sdb1 of the removed LUN" ENXIO "$out"
exec 7<&-
stop_daemon
finish
