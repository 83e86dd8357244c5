#!/bin/sh
# SPDX-License-Identifier: MIT
# repro-exec: --host debian --frontend scsi_debug --disks 8 --mem 4G --timeout 3000
# software:  systemd 252 (Debian 12: 252.x) as PID 1, its .device units
# threshold: 131,072 unit names (MANAGER_MAX_NAMES); a scsi_debug disk
#            brought 2.81 unit names here (measured: its .device unit
#            and the names of its links), so ~46,600 disks
# upstream:  systemd issue 43309 (open): past the limit the manager
#            refuses new units ("too many units"); devices added later
#            get no .device unit, so nothing can depend on them
# assertion: ramping scsi_debug disks on the full-userspace host (256 a
#            step, udevadm settle after each), the journal shows "too
#            many units" (or, 252 being silent about it, a unit
#            failing with E2BIG, "Argument list too long") once the
#            manager's unit names (`systemctl show -p NNames`) reach
#            131,072. Bounded: the ramp stops at the
#            memory wall (MemAvailable under 384 MiB) or at the time
#            budget (repro.budget_s, default 1800 s); then the verdict is
#            NOT REPRODUCED with the point reached and the units a disk,
#            and the disks, time and memory the limit would need.
# expect:    bookworm NOT REPRODUCED: systemd 252.39-1~deb12u2; the limit
#            needs ~46,600 disks, past the default time budget
# expect:    trixie NOT REPRODUCED: systemd 257.13-1~deb13u1 (the issue is
#            open), the same time bound
# Exit 0: REPRODUCED; 1: NOT REPRODUCED (limit not reached: why); 2:
# cannot tell.
set -u
param() { tr ' ' '\n' </proc/cmdline | sed -n "s/^repro\.$1=//p" | tail -1; }
budget=$(param budget_s); budget=${budget:-1800}
step=$(param step); step=${step:-256}
limit=131072
up() { cut -d' ' -f1 /proc/uptime; }
t0=$(up)
since() { awk -v a="$1" -v b="$(up)" 'BEGIN { printf "%.1f", b - a }'; }
avail() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }
setup() { echo "cannot tell: $*"; exit 2; }
[ "$SDSWARM_HOST" = debian ] || setup "needs --host debian (systemd as PID 1)"
echo "software: $(systemctl --version | head -1)"
drv=/sys/bus/pseudo/drivers/scsi_debug
[ -d $drv ] || setup "needs --frontend scsi_debug"
names() { systemctl show -p NNames --value; }
ndisk() { ls /sys/block | grep -c '^sd'; }
# 252 returns -E2BIG without a message of its own (newer ones log "manager
# has too many units"): the device unit's failure names E2BIG.
toomany() { journalctl -b --no-pager -q 2>/dev/null | grep -Eci 'too many units|Argument list too long'; }
u0=$(names) d0=$(ndisk) m0=$(avail)
echo "start: $d0 disks, $u0 unit names, MemAvailable $((m0 / 1024)) MiB"
[ "$step" -le 256 ] || setup "repro.step=$step: at most 256 (scsi_debug's max_luns at run time)"
echo 0 >$drv/ptype && echo 1 >$drv/num_tgts && echo "$step" >$drv/max_luns || setup "scsi_debug knobs"
: >ramp.txt
why=""
while :; do
	echo 1 >$drv/add_host || { why="add_host failed"; break; }
	udevadm settle --timeout=1800 || { why="udevadm settle did not finish"; break; }
	d=$(ndisk) u=$(names) a=$(avail) e=$(since "$t0") tm=$(toomany)
	echo "$e $d $u $a $tm" >>ramp.txt
	echo "  ${e} s: $d disks, $u unit names, MemAvailable $((a / 1024)) MiB"
	[ "$tm" -gt 0 ] && break
	[ "$a" -lt 393216 ] && { why="the memory wall: MemAvailable $((a / 1024)) MiB at $d disks"; break; }
	awk -v t="$e" -v b="$budget" 'BEGIN { exit !(t >= b) }' && { why="the time budget (${budget} s) ran out"; break; }
done
d=$(ndisk) u=$(names) a=$(avail) e=$(since "$t0") tm=$(toomany)
journalctl -b --no-pager -q | grep -Ei -m3 'too many units|Argument list too long' | sed 's/^/  journal: /'
per=$(awk -v u="$u" -v u0="$u0" -v d="$d" -v d0="$d0" 'BEGIN { if (d > d0) printf "%.2f", (u - u0) / (d - d0); else print 0 }')
kib=$(( (m0 - a) / (d > d0 ? d - d0 : 1) ))
need=$(awk -v p="$per" -v u="$u" -v d="$d" -v l="$limit" 'BEGIN { if (p > 0) printf "%d", d + (l - u) / p; else print 0 }')
rate=$(awk -v d="$d" -v d0="$d0" -v e="$e" 'BEGIN { printf "%.2f", (d - d0) / e }')
printf '{"disks":%s,"unit_names":%s,"units_per_disk":%s,"kib_per_disk":%s,"disks_per_s":%s,"seconds":%s,"too_many_units":%s,"disks_for_limit":%s}\n' \
	"$d" "$u" "$per" "$kib" "$rate" "$e" "$tm" "$need" >result.json
echo "end: $d disks, $u unit names ($per a disk), $kib KiB of guest memory a disk, $rate disks/s, ${e} s"
if [ "$tm" -gt 0 ]; then
	echo "REPRODUCED: \"too many units\" at $d disks, $u unit names"
	exit 0
fi
echo "not reached: $why. At $per units a disk the limit needs ~$need disks: ~$((need * kib / 1048576)) GiB of guest memory and, at this rate, ~$(awk -v n="$need" -v r="$rate" 'BEGIN { printf "%.0f", n / r / 60 }') min of ramp"
exit 1
