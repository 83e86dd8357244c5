#!/bin/sh
# SPDX-License-Identifier: MIT
# repro-exec: --frontend scsi_debug --disks 12 --pkgs sg3-utils,multipath-tools,dmsetup,bash --timeout 3600
# software:  sg3-utils 1.46 (Debian 12: 1.46-3), rescan-scsi-bus.sh
#            (its VERSION 20180615), with multipath-tools 0.9.4
# threshold: none: the cost grows with disks x multipath maps; users
#            report it unusable at ~1,000 LUNs
# upstream:  doug-gilbert/sg3_utils issue 22 ("findremapped is too slow
#            when there is 1K luns"); fixed in 1.48 by collecting the
#            maps' state once (getallmultipathinfo)
# assertion: `rescan-scsi-bus.sh -u -m` (update remapped LUNs, and their
#            multipath maps) with one map per disk: for every disk,
#            findremapped's findmultipath runs `dmsetup status` on every
#            map (and `multipath -l`, which reads every path, on its
#            own), so what -m adds grows as disks^2. Timed at the counts
#            of repro.counts (default 12,24,48, not the issue's
#            250/500/1000: under TCG a process costs ~5-10 ms and 1,000
#            LUNs would be 2x10^6 of them, days), the least-squares
#            exponent of the time -m adds (`-u -m` minus `-u`, the
#            control run at the same count, whose own cost — udevadm
#            trigger of every device, a SCSI rescan of each disk — is
#            linear) against disks must be > 1.5. The exponent of the raw
#            `-u -m` time is printed too; at these small counts its
#            linear part still weighs.
# expect:    bookworm REPRODUCED: sg3-utils 1.46-3
# expect:    trixie NOT REPRODUCED: sg3-utils 1.48-3~deb13u1 has the fix (the
#            maps' state collected once)
# Exit 0: REPRODUCED; 1: NOT REPRODUCED; 2: cannot tell.
set -u
param() { tr ' ' '\n' </proc/cmdline | sed -n "s/^repro\.$1=//p" | tail -1; }
counts=$(param counts); counts=${counts:-12,24,48}
up() { cut -d' ' -f1 /proc/uptime; }
setup() { echo "setup failed: $*"; exit 2; }
rsb=$(command -v rescan-scsi-bus.sh) || setup "no rescan-scsi-bus.sh (--pkgs sg3-utils)"
echo "software: sg3-utils $(sed -n 's/^VERSION="\(.*\)"/rescan-scsi-bus.sh \1/p' "$rsb"), $(sg_inq -V 2>&1 | head -1)"
echo "multipath-tools: $(multipath -h 2>&1 | grep -m1 -o 'multipath-tools v[^ ]*')"
command -v bash >/dev/null || setup "no bash (--pkgs bash)"
command -v dmsetup >/dev/null || setup "no dmsetup (--pkgs dmsetup)"
modprobe dm_multipath || setup "modprobe dm_multipath"
first=${counts%%,*}
[ "$SDSWARM_DISKS" -eq "$first" ] || setup "the run has $SDSWARM_DISKS disks; the first count ($first) must equal --disks"
drv=/sys/bus/pseudo/drivers/scsi_debug
[ -d $drv ] || setup "needs --frontend scsi_debug (disks are added by raising its max_luns)"
host=$(ls -d $drv/adapter*/host* | head -1)
host=${host##*/host}
mkdir -p /etc/multipath
cat >/etc/multipath.conf <<'CONF'
defaults {
	user_friendly_names yes
	find_multipaths no
}
CONF
sdcount() { ls /sys/block | grep -c '^sd'; }
maps() { dmsetup ls --target=multipath 2>/dev/null | grep -vc '^No devices'; }
: >times.txt
for n in $(echo "$counts" | tr ',' ' '); do
	[ "$n" -le 256 ] || setup "count $n: scsi_debug's max_luns is at most 256 at run time"
	if [ "$(sdcount)" -lt "$n" ]; then
		echo "$n" >$drv/max_luns || setup "max_luns=$n"
		echo "- - -" >/sys/class/scsi_host/host$host/scan
		i=0
		while [ "$(sdcount)" -lt "$n" ]; do
			i=$((i + 1)); [ $i -lt 3000 ] || setup "$(sdcount) of $n disks"
			sleep 0.2
		done
		udevadm settle --timeout=600
	fi
	timeout 600 multipath >/dev/null 2>&1
	m=$(maps)
	[ "$m" -eq "$n" ] || setup "$m multipath maps for $n disks"
	t0=$(up)
	timeout 3000 bash "$rsb" -u >rsb-u-$n.txt 2>&1 || setup "rescan-scsi-bus.sh -u exited $? at $n disks"
	t1=$(up)
	timeout 3000 bash "$rsb" -u -m >rsb-um-$n.txt 2>&1 || setup "rescan-scsi-bus.sh -u -m exited $? at $n disks"
	t2=$(up)
	tu=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	tum=$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", b - a }')
	echo "$n $m $tu $tum" >>times.txt
	echo "disks $n, maps $m: rescan-scsi-bus.sh -u ${tu} s, -u -m ${tum} s ($(tail -n 3 rsb-um-$n.txt | tr '\n' ' '))"
done
# The least-squares exponent of a column (c; m: what -m adds, -u -m less
# -u) against the disks: fit.awk; nan when a time is not above 0.
fit() {
	awk -v c="$1" '{ v = (c == "m") ? $4 - $3 : $c; if (v <= 0) bad = 1; print $1, v }
		END { exit bad }' times.txt >fit.in || { echo nan; return; }
	awk -f "$SDSWARM_LIB/fit.awk" fit.in | awk '{ print ($2 == "nan") ? "nan" : sprintf("%.2f", $2) }'
}
eu=$(fit 3) eum=$(fit 4) em=$(fit m)
echo "fitted exponents: what -m adds $em; -u -m $eum; -u (control) $eu"
printf '{"counts":"%s","exponent_m":%s,"exponent_um":%s,"exponent_u":%s,"times":[%s]}\n' "$counts" "$em" "$eum" "$eu" \
	"$(awk '{ printf "%s{\"disks\":%s,\"u_s\":%s,\"um_s\":%s}", (NR > 1 ? "," : ""), $1, $3, $4 }' times.txt)" >result.json
case $em in nan) echo "no fit (fewer than two counts, or -m added no time)"; exit 2 ;; esac
if awk -v e="$em" 'BEGIN { exit !(e > 1.5) }'; then
	echo "what -m adds grows as disks^$em: findremapped x findmultipath is quadratic"
	exit 0
fi
echo "what -m adds grows as disks^$em (<= 1.5): not quadratic here"
exit 1
