#!/bin/sh
# SPDX-License-Identifier: MIT
# repro-exec: --frontend scsi_debug --disks 8 --no-udev --mem 8G --timeout 3600 --append log_buf_len=16M
# software:  Linux 6.1 (Debian 12: linux-image-6.1.0-*-amd64), block/bsg.c
#            and drivers/scsi/sg.c
# threshold: 32,768 SCSI devices (BSG_MAX_DEVS and SG_MAX_DEVS, the
#            minors both drivers ask for; any device type counts)
# upstream:  block/bsg.c bsg_register_queue(): ida_alloc_max(...,
#            BSG_MAX_DEVS - 1) fails -> "bsg: too many bsg devices";
#            drivers/scsi/sg.c sg_alloc(): idr_alloc(..., SG_MAX_DEVS)
#            fails -> "Unable to attach sg device type=%d, minor number
#            exceeds 32767"; both raised in Linux 6.5
# assertion: asked for 32,800 SCSI devices, /dev/bsg and the sg class
#            stop at 32,768, and dmesg has "bsg: too many bsg devices" and
#            "Unable to attach sg device". What becomes of the devices
#            past the cap is reported, and whether sd attaches to the
#            disks among them: in 6.1 scsi_sysfs_add_sdev() logs "Failed
#            to register bsg queue" and still returns bsg's -ENOSPC, so
#            the scan drops the device (and the rest of that target's
#            LUNs): no SCSI device, so no sd either.
# expect:    bookworm REPRODUCED: Linux 6.1.0-57 (6.1.192-3); BSG_MAX_DEVS and
#            SG_MAX_DEVS 32,768
# expect:    trixie NOT REPRODUCED: Linux 6.12.117+deb13; both caps are 1 <<
#            MINORBITS since 6.5, so the 32,769th device and the disks past it
#            attach
# How: the exec mode's 8 scsi_debug disks, then hosts added at run time
#      through scsi_debug's sysfs knobs (add_host, num_tgts, max_luns):
#      the bulk as processor devices (ptype 3: sg and bsg attach to any
#      SCSI device; sd does not, which halves the guest's memory and
#      time), then 24 disks (ptype 0) past the cap. The guest's log
#      buffer is 16 MiB (the scan prints a line a device).
# Exit 0: REPRODUCED; 1: NOT REPRODUCED; 2: cannot tell (the memory or
# the time ran out before the cap; the point reached is printed).
set -u
param() { tr ' ' '\n' </proc/cmdline | sed -n "s/^repro\.$1=//p" | tail -1; }
total=$(param devices); total=${total:-32800}
tail_disks=$(param disks_past); tail_disks=${tail_disks:-24}
budget=$(param budget_s); budget=${budget:-3000}
cap=32768
up() { cut -d' ' -f1 /proc/uptime; }
t0=$(up)
since() { awk -v a="$1" -v b="$(up)" 'BEGIN { printf "%.1f", b - a }'; }
avail() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }
setup() { echo "cannot tell: $*"; exit 2; }
echo "software: Linux $(uname -r) (Debian $(uname -v | sed -n "s/.*Debian \([^ ]*\).*/\1/p"))"
drv=/sys/bus/pseudo/drivers/scsi_debug
[ -d $drv ] || setup "needs --frontend scsi_debug"
ndev() { ls /sys/bus/scsi/devices | grep -c '^[0-9]*:[0-9]*:[0-9]*:[0-9]*$'; }
nbsg() { ls /dev/bsg 2>/dev/null | wc -l; }
nsg() { ls /sys/class/scsi_generic | wc -l; }
nsd() { ls /sys/block | grep -c '^sd'; }
have=$(ndev)
bulk=$((total - tail_disks - have))
[ "$bulk" -gt 0 ] || setup "repro.devices=$total is too few"
echo "start: $have SCSI devices, $(nbsg) bsg, $(nsg) sg, $(nsd) sd; MemAvailable $(($(avail) / 1024)) MiB"
mem0=$(avail)
: >progress.txt
# add HOSTS TARGETS LUNS PTYPE: one scsi_debug host at a time (the write
# returns once its scan is done: scsi_mod.scan=sync)
add() {
	echo "$4" >$drv/ptype && echo "$2" >$drv/num_tgts && echo "$3" >$drv/max_luns ||
		setup "scsi_debug's sysfs knobs refused ptype=$4 num_tgts=$2 max_luns=$3"
	h=0
	while [ $h -lt "$1" ]; do
		echo 1 >$drv/add_host || setup "add_host failed at $(ndev) devices"
		h=$((h + 1))
		n=$(ndev) a=$(avail)
		echo "$(since "$t0") $n $(nbsg) $(nsg) $(nsd) $a" >>progress.txt
		echo "  $(since "$t0") s: $n SCSI devices, $(nbsg) bsg, $(nsg) sg, $(nsd) sd; MemAvailable $((a / 1024)) MiB"
	done
}
# The bulk: hosts of 16 targets x 256 LUNs (4,096 devices), the last one
# smaller, stopping when the guest is short of memory or time.
per=4096
left=$bulk
while [ "$left" -gt 0 ]; do
	a=$(avail) used=$((mem0 - $(avail)))
	n=$(ndev)
	if [ "$n" -gt "$have" ]; then
		kib=$((used / (n - have)))
		[ "$a" -gt $(((per + tail_disks) * kib * 12 / 10 + 262144)) ] ||
			setup "the memory wall: $n devices, $((a / 1024)) MiB left at $kib KiB a device (give --mem more)"
	fi
	awk -v t="$(since "$t0")" -v b="$budget" 'BEGIN { exit !(t < b) }' ||
		setup "the time budget (${budget} s) ran out at $n devices"
	k=$per
	[ "$left" -lt $k ] && k=$left
	if [ $k -ge 256 ]; then
		add 1 $((k / 256)) 256 3
		left=$((left - k / 256 * 256))
	else
		add 1 1 "$k" 3
		left=0
	fi
done
# Disks past the cap
add 1 1 "$tail_disks" 0
n=$(ndev) b=$(nbsg) g=$(nsg) s=$(nsd)
kib=$(((mem0 - $(avail)) / (n - have)))
bsg_err=$(dmesg | grep -c 'bsg: too many bsg devices')
sg_err=$(dmesg | grep -c 'Unable to attach sg device')
reg_err=$(dmesg | grep -c 'Failed to register bsg queue')
dmesg | grep -m3 'too many bsg\|Unable to attach sg\|Failed to register bsg' | sed 's/^/  dmesg: /'
aborted=$(dmesg | grep -c 'scan aborted')
dmesg | grep -m2 'scan aborted' | sed 's/^/  dmesg: /'
# The last host's disks (asked for past the cap): sd, sg and bsg of each
last=$(ls -d $drv/adapter*/host* | sed 's/.*host//' | sort -n | tail -1)
: >tail.txt
for d in /sys/class/scsi_device/"$last":*; do
	[ -e "$d" ] || continue
	hctl=${d##*/}
	blk=$(ls "$d/device/block" 2>/dev/null)
	sgn=$(ls "$d/device/scsi_generic" 2>/dev/null)
	echo "$hctl ${blk:--} ${sgn:--} $([ -e /dev/bsg/$hctl ] && echo bsg || echo -)" >>tail.txt
done
tail_n=$(wc -l <tail.txt)
tail_sd=$(awk '$2 != "-"' tail.txt | wc -l)
tail_sg=$(awk '$3 != "-"' tail.txt | wc -l)
tail_bsg=$(awk '$4 != "-"' tail.txt | wc -l)
asked=$((have + bulk + tail_disks))
echo "end ($(since "$t0") s): $n of $asked SCSI devices asked for, $b in /dev/bsg, $g sg, $s sd disks; ~$kib KiB of guest memory a device"
echo "dmesg: $bsg_err \"bsg: too many bsg devices\", $sg_err \"Unable to attach sg device\", $reg_err \"Failed to register bsg queue\", $aborted \"scan aborted\""
echo "past the cap: the last host's $tail_disks disks: $tail_n SCSI devices, $tail_sd with sd, $tail_sg with sg, $tail_bsg with bsg"
printf '{"asked":%s,"devices":%s,"bsg":%s,"sg":%s,"sd":%s,"bsg_errors":%s,"sg_errors":%s,"bsg_register_failed":%s,"scan_aborted":%s,"tail_disks":%s,"tail_devices":%s,"tail_sd":%s,"tail_sg":%s,"tail_bsg":%s,"kib_per_device":%s,"seconds":%s}\n' \
	"$asked" "$n" "$b" "$g" "$s" "$bsg_err" "$sg_err" "$reg_err" "$aborted" "$tail_disks" "$tail_n" "$tail_sd" "$tail_sg" "$tail_bsg" "$kib" "$(since "$t0")" >result.json
[ "$asked" -gt $cap ] || setup "asked for $asked SCSI devices: not past $cap"
if [ "$b" -eq $cap ] && [ "$g" -eq $cap ] && [ "$bsg_err" -ge 1 ] && [ "$sg_err" -ge 1 ]; then
	if [ "$n" -gt $cap ]; then
		fate="$((n - cap)) devices past it exist without sg/bsg; sd attached to $tail_sd of the $tail_n disks among them"
	else
		fate="the devices past it were refused (bsg's -ENOSPC fails the add: $n SCSI devices, none of the $tail_disks disks past the cap, so no sd)"
	fi
	echo "REPRODUCED: bsg and sg stop at $cap of $asked devices; $fate"
	exit 0
fi
echo "no cap at $cap: $n SCSI devices, $b bsg, $g sg; the $tail_disks disks past it: $tail_sd with sd ($bsg_err/$sg_err error lines)"
exit 1
