#!/bin/sh
# SPDX-License-Identifier: MIT
# repro-exec: --frontend scsi_debug --disks 1 --pkgs udev --mem 2G --timeout 3600
# software:  systemd-udevd 252 (Debian 12: 252.x), the /dev/disk/by-id
#            links of 60-persistent-storage.rules
# threshold: none: the cost grows with the number of devices that claim
#            one symlink (the paths of one multipathed LUN all claim its
#            by-id/scsi-... and by-id/wwn-... links)
# upstream:  systemd PR 26048 (in 254): before it, every add or change
#            of a device claiming a link walks /run/udev/links/LINK/ and
#            opens each other claimant (its sysfs device and udev
#            database) to find the highest priority, so N claimants cost
#            N events x N claimants
# assertion: N devices with one identity (scsi_debug hosts with
#            vpd_use_hostno=0: the same LUN seen through N hosts, as
#            multipath paths are), `udevadm trigger --action=change` of
#            them then `udevadm settle`: at the counts of repro.counts
#            (default 50,100,200; the issue's 1k/2k/5k paths are hours of
#            udev events under TCG) the least-squares exponent of that time
#            against N must be > 1.5. The control: N devices of distinct
#            identities (LUNs of one host) in the same boot, triggered the
#            same way; its exponent is expected near 1.
# expect:    bookworm NOT REPRODUCED: udev 252.39-1~deb12u2 has the bug, but
#            no N^2 shows at 50-200 claimants under TCG (the issue's 1k-5k
#            paths take hours)
# expect:    trixie NOT REPRODUCED: udev 257.13-1~deb13u1 has PR 26048 (in
#            254)
# Exit 0: REPRODUCED; 1: NOT REPRODUCED; 2: cannot tell.
set -u
param() { tr ' ' '\n' </proc/cmdline | sed -n "s/^repro\.$1=//p" | tail -1; }
counts=$(param counts); counts=${counts:-50,100,200}
up() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(up)" 'BEGIN { printf "%.2f", b - a }'; }
setup() { echo "cannot tell: $*"; exit 2; }
echo "software: udev (systemd) $(udevadm --version)"
pidof systemd-udevd >/dev/null || setup "no systemd-udevd running (not --no-udev)"
drv=/sys/bus/pseudo/drivers/scsi_debug
[ -d $drv ] || setup "needs --frontend scsi_debug"
max=0
for n in $(echo "$counts" | tr ',' ' '); do [ "$n" -gt $max ] && max=$n; done
# Every identity from here on ignores the host number: LUN T:L of any
# host is the same LU (dev id 2000 + 1000 T + L).
echo 0 >$drv/vpd_use_hostno || setup "vpd_use_hostno"
hosts() { ls -d $drv/adapter*/host* | sed 's/.*host//' | sort -n; }
# The control: one host with distinct LUNs (T targets x 256).
tg=$(((max + 1 + 255) / 256))
echo 0 >$drv/ptype && echo $tg >$drv/num_tgts && echo 256 >$drv/max_luns || setup "scsi_debug knobs"
echo 1 >$drv/add_host || setup "add_host"
dh=$(hosts | tail -1)
echo 1 >$drv/num_tgts && echo 1 >$drv/max_luns || setup "scsi_debug knobs"
udevadm settle --timeout=1800
# The disk of a device H:C:T:L
disk_of() { ls "/sys/class/scsi_device/$1/device/block" 2>/dev/null; }
# the distinct set: host dh's LUNs but 0:0 (whose id is the shared one)
ls /sys/class/scsi_device | grep "^$dh:" | grep -v ":0:0$" | sort -t: -k3,3n -k4,4n >distinct.hctl
[ "$(wc -l <distinct.hctl)" -ge $max ] || setup "$(wc -l <distinct.hctl) distinct LUNs for $max"
# the shared set: 0:0 of every host (the exec's own disk's host, dh, and
# one host a path added below)
shared() { ls /sys/class/scsi_device | grep ':0:0:0$' | sort -n; }
trig() { # COUNT FILE-OF-HCTL: times trigger --action=change + settle of the first COUNT
	: >trig.paths
	for h in $(head -n "$1" "$2"); do
		d=$(disk_of "$h") && echo "/sys/block/$d" >>trig.paths
	done
	[ "$(wc -l <trig.paths)" -eq "$1" ] || setup "$(wc -l <trig.paths) disks of $1 in $2"
	t=$(up)
	# shellcheck disable=SC2046 # one argument a device
	udevadm trigger --action=change $(cat trig.paths) || setup "udevadm trigger"
	udevadm settle --timeout=1800 || setup "udevadm settle did not finish in 1800 s"
	since "$t"
}
: >times.txt
for n in $(echo "$counts" | tr ',' ' '); do
	t=$(up)
	while [ "$(shared | wc -l)" -lt "$n" ]; do
		echo 1 >$drv/add_host || setup "add_host at $(shared | wc -l) paths"
	done
	udevadm settle --timeout=1800 || setup "settle after the adds"
	add_s=$(since "$t")
	shared >shared.hctl
	ts=$(trig "$n" shared.hctl)
	tc=$(trig "$n" distinct.hctl)
	# the shared set really shares one identity
	ids=$(for h in $(head -n 20 shared.hctl); do udevadm info -q property -n "$(disk_of "$h")" | sed -n 's/^ID_SERIAL=//p'; done | sort -u | wc -l)
	link=$(udevadm info -q property -n "$(disk_of "$(head -1 shared.hctl)")" | sed -n 's/^ID_SERIAL=//p')
	[ "$ids" -eq 1 ] || setup "the shared set has $ids identities, not 1"
	echo "$n $ts $tc $add_s" >>times.txt
	echo "N $n: one identity ($link, by-id/scsi-$link -> $(readlink /dev/disk/by-id/scsi-"$link")): trigger+settle ${ts} s; distinct identities: ${tc} s; adding the paths took ${add_s} s"
done
# The least-squares exponent of column c against N: fit.awk; nan when a
# time is not above 0.
fit() {
	awk -v c="$1" '{ if ($c <= 0) bad = 1; print $1, $c } END { exit bad }' times.txt >fit.in ||
		{ echo nan; return; }
	awk -f "$SDSWARM_LIB/fit.awk" fit.in | awk '{ print ($2 == "nan") ? "nan" : sprintf("%.2f", $2) }'
}
es=$(fit 2) ec=$(fit 3)
echo "fitted exponents: one identity $es, distinct identities (control) $ec"
printf '{"counts":"%s","exponent_shared":%s,"exponent_distinct":%s,"times":[%s]}\n' "$counts" "$es" "$ec" \
	"$(awk '{ printf "%s{\"n\":%s,\"shared_s\":%s,\"distinct_s\":%s,\"add_s\":%s}", (NR > 1 ? "," : ""), $1, $2, $3, $4 }' times.txt)" >result.json
case $es in nan) echo "no fit"; exit 2 ;; esac
if awk -v e="$es" 'BEGIN { exit !(e > 1.5) }'; then
	echo "one identity: trigger+settle grows as N^$es (distinct: N^$ec)"
	exit 0
fi
echo "one identity: trigger+settle grows as N^$es (<= 1.5; distinct: N^$ec): not quadratic at these counts"
exit 1
