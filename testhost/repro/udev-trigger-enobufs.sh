#!/bin/sh
# SPDX-License-Identifier: MIT
# repro-exec: --frontend scsi_debug --disks 250 --pkgs udev --mem 3G --timeout 5400
# software:  udevadm (systemd), `udevadm trigger --settle`
# threshold: none fixed: the events udevd answers while udevadm is still
#            writing the uevent files must overflow its socket's receive
#            buffer (the kernel's default, net.core.rmem_default: ~208 KiB,
#            ~100 messages); on a host with thousands of devices they do
# upstream:  systemd issue 29863 ("Possible race condition(?) when calling
#            `udevadm trigger --settle`"), PR 29872 ("udevadm-trigger:
#            extend receive buffer size", in 255): the trigger's device
#            monitor now asks for 128 MiB; before, a full buffer drops
#            events (ENOBUFS, "No buffer space available") and --settle
#            waits for them for ever
# assertion: with the disks of repro.counts (default 250,1000,2000:
#            scsi_debug hosts added at run time, udev settled after each),
#            `udevadm trigger --settle --action=change` of every device
#            does not return within repro.wait_s (default 600) s, or logs
#            "No buffer space available", while `udevadm settle` after it
#            finds udevd's queue empty: the events were handled, the
#            trigger lost their answers
# expect:    bookworm REPRODUCED: udev 252.39-1~deb12u2, before PR 29872
# expect:    trixie NOT REPRODUCED: udev 257.13-1~deb13u1, with PR 29872
# Exit 0: REPRODUCED; 1: NOT REPRODUCED; 2: cannot tell.
set -u
param() { tr ' ' '\n' </proc/cmdline | sed -n "s/^repro\.$1=//p" | tail -1; }
counts=$(param counts); counts=${counts:-250,1000,2000}
wait_s=$(param wait_s); wait_s=${wait_s:-600}
up() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(up)" 'BEGIN { printf "%.1f", b - a }'; }
setup() { echo "cannot tell: $*"; exit 2; }
echo "software: udev (systemd) $(udevadm --version), rmem_default $(cat /proc/sys/net/core/rmem_default)"
drv=/sys/bus/pseudo/drivers/scsi_debug
[ -d $drv ] || setup "needs --frontend scsi_debug"
nsd() { ls /sys/block | grep -c '^sd'; }
step=250
echo 0 >$drv/ptype && echo 1 >$drv/num_tgts && echo $step >$drv/max_luns ||
	setup "scsi_debug's sysfs knobs refused num_tgts=1 max_luns=$step"
: >steps.txt
lost=""
for want in $(echo "$counts" | tr ',' ' '); do
	case $want in '' | *[!0-9]*) setup "repro.counts=$counts: not numbers" ;; esac
	while [ "$(nsd)" -lt "$want" ]; do
		echo 1 >$drv/add_host || setup "add_host failed at $(nsd) disks"
	done
	udevadm settle --timeout=1800 || setup "udev did not settle at $(nsd) disks"
	devs=$(udevadm trigger --dry-run --verbose --action=change 2>/dev/null | wc -l)
	t=$(up)
	SYSTEMD_LOG_LEVEL=debug timeout "$wait_s" udevadm trigger --settle --action=change >trigger-$want.log 2>&1
	rc=$?
	dt=$(since "$t")
	nobuf=$(grep -c 'No buffer space available' trigger-$want.log)
	t=$(up)
	udevadm settle --timeout=1800
	src=$?
	st=$(since "$t")
	echo "$(nsd) $devs $rc $dt $nobuf $src $st" >>steps.txt
	echo "  $(nsd) disks, $devs devices: trigger --settle exit $rc after $dt s, $nobuf \"No buffer space available\"; then udevadm settle exit $src after $st s"
	grep -m2 'No buffer space available' trigger-$want.log | sed 's/^/    /'
	if { [ "$rc" = 124 ] || [ "$nobuf" -gt 0 ]; } && [ "$src" = 0 ]; then
		lost="$(nsd) disks ($devs devices): trigger --settle $([ "$rc" = 124 ] && echo "still waiting after ${wait_s} s" || echo "exit $rc after $dt s"), $nobuf ENOBUFS lines, udevd's queue empty"
		break
	fi
done
printf '{"counts":"%s","steps":"%s"}\n' "$counts" "$(tr '\n' ';' <steps.txt)" >result.json
if [ -n "$lost" ]; then
	echo "events lost to a full receive buffer at $lost"
	exit 0
fi
echo "trigger --settle returned at every count ($(awk '{ printf "%s%s disks %s s", (NR > 1 ? ", " : ""), $1, $4 }' steps.txt)), no ENOBUFS"
exit 1
