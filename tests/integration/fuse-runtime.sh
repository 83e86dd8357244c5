#!/bin/bash
# SPDX-License-Identifier: MIT
# The FUSE directory follows the target while it runs, although the kernel
# may cache entries and attributes for 60 s here: LUNs removed with
# `sdswarm lun remove` vanish (names, partitions, readdir) and ones added
# with `sdswarm lun add` appear within a few seconds; an open file of a
# removed LUN fails with ENXIO; a partition table the host writes with
# sfdisk replaces the synthetic one (partitions come, go and change size,
# and a partition file is the new window); then sdswarm-bench open-all
# opens, reads and closes every node (when that tool is built).
. "$(dirname "$0")/../lib/fuse.sh"
requires_fuse python3 sfdisk awk
SDNUM=$SDSWARM_BIN/sdnum
private_dir T
fuse_mountpoint "$T/mnt"

py() { local code=$1; shift; python3 -c "import errno, os, sys, time
$code" "$@"; }
# wait_for SECONDS CMD...: true once CMD succeeds
wait_for() {
	local n=$(($1 * 10))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}
gone() { [ ! -e "$MNT/$1" ] && ! ls "$MNT" | grep -qx "$1"; }
there() { [ -f "$MNT/$1" ] && ls "$MNT" | grep -qx "$1"; }

cat >"$T/rt.conf" <<'EOF'
# fuse-runtime.sh: 20 disks of 1 GiB with 4 GPT partitions, a spare group
[target]
seed = 5
max_luns = 1024

[luns]
count = 20
size = 1G
partitions = 4
ptable = gpt

[luns.spare]
first = 700
count = 0
size = 2G
partitions = 5
ptable = mbr

[store]
type = mem

[fuse]
attr_timeout = 60
EOF
fuse_daemon "$T/rt.conf" || finish
expect_eq "names at start" 100 "$(ls "$MNT" | wc -l)"

# --- removal -------------------------------------------------------------
for n in sdk sdk1 sdk4; do stat "$MNT/$n" >/dev/null; done # now cached
exec 7<"$MNT/sdk2"
mtime0=$(stat -c %Y "$MNT")
expect_eq "lun remove 10" "removed LUN 10" "$(ctl lun remove 10)"
check "sdk vanished within 3 s" wait_for 3 gone sdk
check "so did sdk1" gone sdk1
check "and sdk4" gone sdk4
expect_eq "names after the removal" 95 "$(ls "$MNT" | wc -l)"
out=$(py '
try:
    os.pread(7, 512, 0); print("read")
except OSError as e:
    print(errno.errorcode[e.errno])')
expect_eq "an open file of the removed LUN" ENXIO "$out"
exec 7<&-

# --- adding --------------------------------------------------------------
expect_eq "lun add 10 again" "added LUN 10 (group default)" "$(ctl lun add --group default 10)"
check "sdk is back within 3 s" wait_for 3 there sdk
check "with its partitions" there sdk4
expect_eq "lun add --group spare" "added LUN 700 (group spare)" "$(ctl lun add --group spare)"
n700=$("$SDNUM" name 700)
check "$n700 appeared within 3 s" wait_for 3 there "$n700"
check "${n700}5 (an MBR logical)" there "${n700}5"
expect_eq "$n700 size" $((2 << 30)) "$(stat -c %s "$MNT/$n700")"
expect_eq "names now" $((100 + 1 + 6)) "$(ls "$MNT" | wc -l)"
check "the directory's mtime moved" test "$(stat -c %Y "$MNT")" -ge "$mtime0"
# added and removed between two scans: still invalidated
expect_eq "lun add 701" "added LUN 701 (group spare)" "$(ctl lun add --group spare 701)"
n701=$("$SDNUM" name 701)
check "$n701 can be looked up at once" test -f "$MNT/${n701}2"
ctl lun remove 701 >/dev/null
check "and is gone again within 3 s" wait_for 3 gone "${n701}2"

# --- the host writes its own table --------------------------------------
stat "$MNT/sdc3" "$MNT/sdc1" >/dev/null # cached
printf 'label: dos\nstart=2048, size=100000, type=83\nstart=104448, size=200000, type=83\n' |
	sfdisk --no-reread --no-tell-kernel -q "$MNT/sdc" >"$T/sfdisk.out" 2>&1
check "sfdisk wrote an MBR to sdc" test $? -eq 0 || cat "$T/sfdisk.out"
check "sdc3 (of the old GPT) vanished within 3 s" wait_for 3 gone sdc3
check "sdc4 too" gone sdc4
check "sdc1 has its new size" wait_for 3 test "$(stat -c %s "$MNT/sdc1")" = $((100000 * 512))
expect_eq "sdc2's new size" $((200000 * 512)) "$(stat -c %s "$MNT/sdc2")"
expect_eq "sfdisk reads back the dos label" "label: dos" "$(sfdisk --dump "$MNT/sdc" | grep '^label:')"
out=$(py '
p = os.open(sys.argv[1], os.O_RDWR); d = os.open(sys.argv[2], os.O_RDONLY)
os.pwrite(p, b"new window", 513)
print(os.pread(d, 10, 104448 * 512 + 513))' "$MNT/sdc2" "$MNT/sdc")
expect_eq "sdc2 is the disk from sector 104448" "b'new window'" "$out"
# and back to a GPT with three partitions
printf 'label: gpt\n,50MiB\n,50MiB\n,50MiB\n' |
	sfdisk --no-reread --no-tell-kernel -q "$MNT/sdc" >"$T/sfdisk.out" 2>&1
check "sfdisk wrote a GPT to sdc" test $? -eq 0 || cat "$T/sfdisk.out"
check "sdc3 came back within 3 s" wait_for 3 there sdc3
check "as 50 MiB" wait_for 3 test "$(stat -c %s "$MNT/sdc1")" = $((50 << 20))
check "no sdc4" gone sdc4
expect_eq "sdd, untouched, still has 4" 4 "$(ls "$MNT" | grep -c '^sdd[0-9]')"

# --- open-all ------------------------------------------------------------
BENCH=$SDSWARM_PLAIN_BIN/sdswarm-bench
if "$BENCH" open-all --help >/dev/null 2>&1; then
	total=$(ls "$MNT" | wc -l)
	"$BENCH" open-all "$MNT" --json >"$T/openall.json" 2>"$T/openall.err"
	expect_eq "open-all over every node: exit status" 0 "$?"
	out=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(" ".join(str(x["n"]) for x in r["results"]))' "$T/openall.json")
	expect_eq "open-all opened all $total nodes, both ways" "$total $total" "$out"
else
	echo "note: skip the open-all check: '$BENCH open-all --help' fails (not built yet)"
fi
check "the daemon is alive" daemon_alive
stop_daemon
expect_eq "SIGTERM: exit status" 0 "$?"
check "unmounted" test "$(is_mounted "$MNT" && echo yes)" = ""
finish
