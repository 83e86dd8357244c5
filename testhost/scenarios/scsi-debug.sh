# SPDX-License-Identifier: MIT
# vm-mem: 1G
# vm-timeout: 600
# scsi-debug: the reference every other scenario is compared with. The
# kernel's scsi_debug driver makes N disks (sdswarm.disks, default 300,
# which crosses sdz and 256 disks) on one host and target; the kernel's sd
# driver names and numbers them. Every /sys/block/sd* name is parsed with
# `sdnum parse` and its MAJOR:MINOR (from /sys/block/X/dev, from the node
# devtmpfs made, and from lsblk) must equal `sdnum devt` for that index;
# the names must be exactly sdnum's names for 0..N-1. With sdswarm.parts=P
# (at most 15: the disk's own minors) each disk carries P partitions from
# scsi_debug's num_parts and every sdXP is checked the same way.
# Figures: disks, seen, mismatches, missing, probe_s (modprobe to the last
# disk and partition in sysfs), mem_used_kib.
# Parameters: sdswarm.disks=N sdswarm.parts=P sdswarm.wait=SECONDS
. /usr/lib/sdswarm-vm/vm-lib.sh

n=$(vm_param disks 300)
parts=$(vm_param parts 0)
wait_s=$(vm_param wait 300)
vm_stat disks "$n"
vm_kv parts "$parts"

case $n in '' | *[!0-9]* | 0) vm_fail "sdswarm.disks=$n is not a count"; exit 0 ;; esac
if [ "$parts" -gt 15 ]; then
	vm_fail "sdswarm.parts=$parts: more than 15 partitions go to the dynamic major 259, which this scenario does not predict"
	exit 0
fi

# scsi_debug takes at most 16384 LUNs per target (flat addressing past
# 256); past that the disks are spread over targets of equal size.
tgts=$(((n + 16383) / 16384))
luns=$((n / tgts))
if [ $((tgts * luns)) -ne "$n" ]; then
	vm_fail "sdswarm.disks=$n: past 16384 it must be a multiple of $tgts"
	exit 0
fi

vm_modprobe sd_mod || exit 0
mem0=$(vm_mem_used_kib)
t0=$(vm_uptime)
# delay=0: answer each command at once (the default waits a jiffy per
# command, ~15 s of sleeping for 300 disks). scsi_mod.scan=sync on the
# command line makes the scan finish inside modprobe; the sd probes that
# follow are asynchronous, hence the wait below.
set -- add_host=1 num_tgts="$tgts" max_luns="$luns" delay=0
[ "$parts" -gt 0 ] && set -- "$@" num_parts="$parts"
vm_modprobe scsi_debug "$@" || exit 0
t1=$(vm_uptime)

count_disks() {
	ls /sys/block | grep -c '^sd'
}
all_disks() {
	[ "$(count_disks)" -ge "$n" ]
}
all_parts() {
	[ "$parts" -eq 0 ] && return 0
	[ "$(ls -d /sys/block/sd*/sd* 2>/dev/null | wc -l)" -ge $((n * parts)) ]
}
vm_wait "$wait_s" all_disks ||
	vm_fail "only $(count_disks) of $n disks appeared within ${wait_s}s"
vm_wait 30 all_parts ||
	vm_fail "only $(ls -d /sys/block/sd*/sd* 2>/dev/null | wc -l) of $((n * parts)) partitions appeared"
t2=$(vm_uptime)
vm_stat seen "$(count_disks)"
vm_stat probe_s "$(awk -v a="$t0" -v b="$t2" 'BEGIN { printf "%.2f", b - a }')"
vm_kv scan_s "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
vm_stat mem_used_kib "$(($(vm_mem_used_kib) - mem0))"
echo "sdswarm-vm: $(count_disks) disks in $(awk -v a="$t0" -v b="$t2" 'BEGIN { printf "%.2f", b - a }') s"

# What the kernel says: "NAME MAJ:MIN", disks then partitions.
w=/tmp/scsi-debug
mkdir -p $w
grep -H . /sys/block/sd*/dev | sed 's|^/sys/block/\([^/]*\)/dev:|\1 |' >$w/disks
: >$w/parts
[ "$parts" -gt 0 ] &&
	grep -H . /sys/block/sd*/sd*/dev | sed 's|^/sys/block/[^/]*/\([^/]*\)/dev:|\1 |' >$w/parts
cat $w/disks $w/parts >$w/kernel

# What sdnum says for each of those names: parse, then name and devt of the
# index it parsed to. A name sdnum cannot parse answers "error: ...".
cut -d' ' -f1 $w/kernel | sdnum parse - >$w/idx 2>&1
sed 's/^error.*/0 0/' $w/idx | sdnum devt - >$w/devt 2>&1
sed 's/^error.*/0 0/' $w/idx | sdnum name - >$w/name 2>&1
paste -d' ' $w/kernel $w/idx $w/devt $w/name >$w/joined
# joined: NAME MAJ:MIN INDEX PART DEVT SDNUM-NAME (or "error: ..." fields)
awk -v n="$n" '
	$3 == "error:" { print "unparsable " $1; bad++; next }
	$5 != $2 { print "devt " $1 ": kernel " $2 ", sdnum " $5; bad++; next }
	$6 != $1 { print "name " $1 ": sdnum names index " $3 " " $6; bad++; next }
	$4 == 0 && $3 >= n { print "index " $1 " = " $3 " beyond " n; bad++ }
	END { exit bad > 0 }' $w/joined >$w/mismatches

# The names must be exactly 0..N-1, nothing missing.
seq 0 $((n - 1)) | sdnum name - | sort >$w/want
cut -d' ' -f1 $w/disks | sort >$w/have
missing=$(awk 'NR == FNR { have[$1] = 1; next } !($1 in have) { m++ } END { print m + 0 }' $w/have $w/want)
vm_stat missing "$missing"

# The nodes devtmpfs made carry the same numbers (stat prints hex).
stat -c '%n %t %T' $(cut -d' ' -f1 $w/kernel | sed 's|^|/dev/|') 2>&1 |
	awk 'NF == 3 { sub("/dev/", "", $1); printf "%s %d:%d\n", $1, ("0x" $2) + 0, ("0x" $3) + 0; next }
		{ print "stat-error " $0 }' >$w/nodes
awk 'NR == FNR { k[$1] = $2; next }
	!($1 in k) { print "node " $0 " not in sysfs"; next }
	k[$1] != $2 { print "node /dev/" $1 " is " $2 ", sysfs " k[$1] }' \
	$w/kernel $w/nodes >>$w/mismatches
[ "$(wc -l <$w/nodes)" -eq "$(wc -l <$w/kernel)" ] ||
	echo "nodes: $(wc -l <$w/nodes) in /dev for $(wc -l <$w/kernel) in sysfs" >>$w/mismatches

# lsblk, reading the same sysfs through libblkid/libsmartcols, agrees.
lsblk -rn -o NAME,MAJ:MIN 2>&1 | grep '^sd' | sort >$w/lsblk
sort $w/kernel | cmp -s - $w/lsblk ||
	echo "lsblk: $(wc -l <$w/lsblk) lines differ from sysfs's $(wc -l <$w/kernel)" >>$w/mismatches

# A control: the same comparison against the naive scheme (the article's
# remap) must disagree on every name but sda and its partitions, or the
# check above could not have seen a wrong dev_t either.
sed 's/^error.*/0 0/' $w/idx | sdnum --scheme naive devt - >$w/naive 2>&1
control=$(paste -d' ' $w/kernel $w/naive | awk '$2 != $3 { c++ } END { print c + 0 }')
want_control=$(awk '$1 != 0 { c++ } END { print c + 0 }' $w/idx)
vm_kv control_mismatches "$control"
if [ "$control" -lt "$want_control" ]; then
	vm_fail "control: the naive scheme disagreed on $control names, not $want_control; the comparison is not discriminating"
fi

bad=$(wc -l <$w/mismatches)
vm_stat mismatches "$bad"
vm_kv checked "$(wc -l <$w/kernel)"
first=$(sort -t' ' -k3n $w/joined | head -1 | cut -d' ' -f1,2)
last=$(awk '$4 == 0' $w/joined | sort -t' ' -k3n | tail -1 | cut -d' ' -f1,2)
vm_kv_str first "$first"
vm_kv_str last "$last"
echo "sdswarm-vm: checked $(wc -l <$w/kernel) names; first $first, last $last"
if [ "$bad" -gt 0 ]; then
	head -20 $w/mismatches | sed 's/^/sdswarm-vm: mismatch: /'
	vm_fail "$bad mismatch(es) between the kernel and sdnum, first: $(head -1 $w/mismatches)"
elif [ "$missing" -gt 0 ]; then
	vm_fail "$missing of sdnum's names for 0..$((n - 1)) are missing"
else
	vm_pass "every name and dev_t matches sdnum"
fi
