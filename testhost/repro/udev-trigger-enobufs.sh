#!/bin/sh
# SPDX-License-Identifier: MIT
# repro-exec: --frontend scsi_debug --disks 250 --pkgs udev --mem 2G --timeout 3600
# software:  udevadm (systemd), `udevadm trigger --settle`
# threshold: none fixed: the answers udevd sends while udevadm is still
#            writing the uevent files must overflow the trigger's socket
#            receive buffer, which 252 leaves at the kernel's default
#            (net.core.rmem_default, 212,992 bytes: ~100 messages)
# upstream:  systemd issue 29863 ("Possible race condition(?) when calling
#            `udevadm trigger --settle`"), PR 29872 ("udevadm-trigger:
#            extend receive buffer size", in 255): the trigger's device
#            monitor now asks for 128 MiB (SO_RCVBUFFORCE); before, a full
#            buffer drops answers (ENOBUFS, "No buffer space available")
#            and --settle waits for them for ever
# assertion: with the guest's net.core.rmem_default at repro.rmem bytes
#            (default 8192: a few messages), and the disks of repro.counts
#            (default 250; scsi_debug hosts added at run time, udev
#            settled after each), `udevadm trigger --settle --action=change`
#            of every device does not return within repro.wait_s (default
#            300) s or logs "No buffer space available", while `udevadm
#            settle` after it finds udevd's queue empty: the events were
#            handled, the trigger lost their answers. 257's trigger sets
#            its own buffer and does not depend on the default
# expect:    bookworm REPRODUCED: udev 252.39-1~deb12u2, before PR 29872
# expect:    trixie NOT REPRODUCED: udev 257.13-1~deb13u1, with PR 29872
# Why the smaller default: under TCG udevd answers ~40-50 events a second
#      (7,266 devices' change events in 166 s at 1,000 disks), far slower
#      than udevadm reads, so at the kernel's own default 252 held at
#      2,001 and 7,266 devices (repro.rmem=212992 shows it). The bug is
#      that 252 depends on that default; lowering it is the fast host's
#      flood (the issue's 72-core CI) turned into a small buffer.
# Exit 0: REPRODUCED; 1: NOT REPRODUCED; 2: cannot tell.
set -u
param() { tr ' ' '\n' </proc/cmdline | sed -n "s/^repro\.$1=//p" | tail -1; }
counts=$(param counts); counts=${counts:-250}
wait_s=$(param wait_s); wait_s=${wait_s:-300}
rmem=$(param rmem); rmem=${rmem:-8192}
case $rmem in '' | *[!0-9]*) echo "cannot tell: repro.rmem=$rmem is not a number"; exit 2 ;; esac
up() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(up)" 'BEGIN { printf "%.1f", b - a }'; }
setup() { echo "cannot tell: $*"; exit 2; }
echo "software: udev (systemd) $(udevadm --version)"
echo "$rmem" >/proc/sys/net/core/rmem_default || { echo "cannot tell: net.core.rmem_default refused $rmem"; exit 2; }
echo "net.core.rmem_default: $(cat /proc/sys/net/core/rmem_default) bytes"
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
printf '{"counts":"%s","rmem_default":%s,"steps":"%s"}\n' "$counts" "$rmem" "$(tr '\n' ';' <steps.txt)" >result.json
if [ -n "$lost" ]; then
	echo "answers lost to a full receive buffer ($rmem bytes) at $lost"
	exit 0
fi
echo "with a $rmem-byte default buffer, trigger --settle returned at every count ($(awk '{ printf "%s%s disks %s s", (NR > 1 ? ", " : ""), $1, $4 }' steps.txt)), no ENOBUFS"
exit 1
