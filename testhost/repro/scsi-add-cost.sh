#!/bin/sh
# SPDX-License-Identifier: MIT
# repro-exec: --frontend scsi_debug --disks 8 --no-udev --mem 4G --timeout 3600 --append debugfs=off
# software:  Linux 6.1 and 6.12 (Debian 12 and 13), drivers/base/core.c
# threshold: none: the cost grows from the first device; it matters past
#            ~10,000 SCSI devices (on 6.12 under TCG: ~8 ms a device up
#            to 3,000 present, 21-25 ms at 24,000-29,000)
# upstream:  drivers/base/core.c get_device_parent(): a class device
#            whose parent has no class lives in a "glue" directory named
#            after its class under the parent; it is found by walking the
#            class's list of every glue directory (one a parent device).
#            A SCSI device joins ~5 classes (scsi_device, scsi_generic,
#            bsg, and as a disk scsi_disk and block), each list as long as
#            the devices present: adding the Nth device costs O(N), adding
#            N devices O(N^2). Not fixed upstream as of 6.12 (searched:
#            no patch found); sdswarm's lean kernel (testhost/kernel/
#            glue-dirs-6.12.patch) finds it by name in kernfs instead
# assertion: scsi_debug hosts of 1,000 SCSI processor devices (ptype 3:
#            no sd, so the disk driver is out of it; 4 targets of 250)
#            added one after
#            another up to 16,000: the time to add a host's 1,000 grows
#            with the devices already there: the last host costs at least
#            1.5 times the first, and the time of N devices fitted as
#            T(N) ~ N^k has k above 1.15 (k = 1 when the cost is flat)
# expect:    bookworm REPRODUCED: Linux 6.1.0-57 (6.1.192-3);
#            get_device_parent() walks the class's glue directories
# expect:    trixie REPRODUCED: Linux 6.12.117+deb13, the same walk (not fixed
#            upstream)
# How: the exec mode's 8 scsi_debug disks, then hosts added through
#      scsi_debug's sysfs knobs (add_host returns once the host's scan is
#      done: scsi_mod.scan=sync). Debugfs off (a debugfs directory a
#      queue would cost time and memory of its own).
# Exit 0: REPRODUCED; 1: NOT REPRODUCED; 2: cannot tell (memory or time
# ran out first; the point reached is printed).
set -u
param() { tr ' ' '\n' </proc/cmdline | sed -n "s/^repro\.$1=//p" | tail -1; }
total=$(param devices); total=${total:-16000}
step=$(param step); step=${step:-1000}
budget=$(param budget_s); budget=${budget:-3000}
up() { cut -d' ' -f1 /proc/uptime; }
t0=$(up)
since() { awk -v a="$1" -v b="$(up)" 'BEGIN { printf "%.2f", b - a }'; }
avail() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }
setup() { echo "cannot tell: $*"; exit 2; }
echo "software: Linux $(uname -r) (Debian $(uname -v | sed -n "s/.*Debian \([^ ]*\).*/\1/p"))"
drv=/sys/bus/pseudo/drivers/scsi_debug
[ -d $drv ] || setup "needs --frontend scsi_debug"
ndev() { ls /sys/bus/scsi/devices | grep -c '^[0-9]*:[0-9]*:[0-9]*:[0-9]*$'; }
[ -f /sys/module/kernel/parameters/sdswarm_glue_walk ] &&
	echo "glue walk: $(cat /sys/module/kernel/parameters/sdswarm_glue_walk) (sdswarm's lean kernel: N finds glue directories by name)"
# max_luns takes at most 256 through sysfs: a host of STEP devices is
# the fewest targets of at most 250 LUNs that split it evenly.
tg=$(((step + 249) / 250))
while [ $((step % tg)) -ne 0 ] && [ "$tg" -lt "$step" ]; do tg=$((tg + 1)); done
luns=$((step / tg))
echo 3 >$drv/ptype && echo "$tg" >$drv/num_tgts && echo "$luns" >$drv/max_luns ||
	setup "scsi_debug's sysfs knobs refused ptype=3 num_tgts=$tg max_luns=$luns"
have=$(ndev)
mem0=$(avail)
: >steps.txt
echo "start: $have SCSI devices; adding hosts of $step processor devices up to $total"
while [ $((have + step)) -le "$total" ]; do
	a=$(avail)
	[ "$a" -gt 262144 ] || setup "the memory wall at $have devices ($((a / 1024)) MiB left; give --mem more)"
	awk -v t="$(since "$t0")" -v b="$budget" 'BEGIN { exit !(t < b) }' ||
		setup "the time budget (${budget} s) ran out at $have devices"
	s0=$(up)
	echo 1 >$drv/add_host || setup "add_host failed at $have devices"
	dt=$(since "$s0")
	n=$(ndev)
	[ "$n" -eq $((have + step)) ] || setup "$n SCSI devices after a host of $step, want $((have + step))"
	echo "$have $step $dt" >>steps.txt
	echo "  $have present: $step more in $dt s ($(awk -v t="$dt" -v s="$step" 'BEGIN { printf "%.2f", t * 1000 / s }') ms a device)"
	have=$n
done
[ "$(wc -l <steps.txt)" -ge 4 ] || setup "only $(wc -l <steps.txt) hosts added: too few to fit"
# first and last host, the line ms(N) = a + b N (at each host's
# midpoint), the exponent of T(N) over the running totals: fit.awk.
line=$(awk '{ print $1 + $2 / 2, $3 * 1000 / $2 }' steps.txt | awk -f "$SDSWARM_LIB/fit.awk")
expo=$(awk '{ tot += $3; print $1 + $2, tot }' steps.txt | awk -f "$SDSWARM_LIB/fit.awk")
set -- $(awk -v line="$line" -v expo="$expo" '
	NR == 1 { first = $3 * 1000 / $2 } { last = $3 * 1000 / $2 }
	END { split(line, l, " "); split(expo, e, " ")
		printf "%.3f %.3f %.2f %.4f %.3f %.3f\n", first, last, last / first, l[5] * 1000, l[4], e[2] }' steps.txt)
first=$1 last=$2 ratio=$3 slope=$4 icpt=$5 k=$6
kib=$(((mem0 - $(avail)) / (have > 0 ? have : 1)))
echo "end ($(since "$t0") s): $have SCSI devices; ${first} ms a device in the first host, ${last} in the last (x${ratio}); ms a device = ${icpt} + ${slope} us x devices present; T(N) ~ N^${k}; ~$kib KiB a device"
printf '{"devices":%s,"step":%s,"ms_first":%s,"ms_last":%s,"growth":%s,"slope_us_per_device":%s,"intercept_ms":%s,"exponent":%s,"kib_per_device":%s,"seconds":%s}\n' \
	"$have" "$step" "$first" "$last" "$ratio" "$slope" "$icpt" "$k" "$kib" "$(since "$t0")" >result.json
if awk -v r="$ratio" -v k="$k" 'BEGIN { exit !(r >= 1.5 && k > 1.15) }'; then
	echo "REPRODUCED: adding a SCSI device costs more the more there are: x$ratio from the first $step to the last, T(N) ~ N^$k"
	exit 0
fi
echo "flat: x$ratio from the first $step to the last, T(N) ~ N^$k (want x1.5 and k > 1.15 for the bug)"
exit 1
