#!/bin/sh
# SPDX-License-Identifier: MIT
# repro-exec: --frontend scsi_debug --disks 1 --no-udev --pkgs util-linux,dmsetup,strace --mem 2G --timeout 3600
# software:  util-linux's libblkid (blkid), probing every block device
# threshold: none: the cost grows as the square of the device-mapper maps
#            (hundreds of maps cost seconds, thousands minutes)
# upstream:  util-linux PR 1729 ("libblkid: Improve performance of
#            devname.c:is_dm_leaf()", in 2.39): for each dm device named in
#            /dev/mapper, probe_one() asks is_dm_leaf(), which opened
#            /sys/block/dm-*/slaves of every other dm device: M maps cost
#            M^2 directory reads. 2.39 reads the device's own holders/
# assertion: M dm-linear maps (8 sectors each, over one disk, named in
#            /dev/mapper) at the counts of repro.counts (default
#            100,200,400): the files and directories `blkid -c /dev/null`
#            (no cache: it probes every device) opens, counted with
#            strace, grow with M with a least-squares exponent above 1.5
#            (every map against every map: M^2 .../slaves directories; a
#            fixed number a device is M^1). The opens of .../slaves and the
#            wall time of a run without strace are printed too: under TCG
#            probing a device costs ~5 ms and a scan ~0.5 us a pair, so the
#            time alone stays nearly linear below ~10,000 maps
# expect:    bookworm NOT REPRODUCED: util-linux 2.38.1-5+deb12u3 opens no
#            .../slaves at all (it walks /sys/block and reads each device's
#            dm/name and dm/uuid: ~13 opens a map, whatever M): the scan is
#            not in Debian 12's build, though the issue dates the fix 2.39
# expect:    trixie NOT REPRODUCED: util-linux 2.41.5-0+deb13u1, after PR 1729
# How: the maps are made with `dmsetup create --concise` (a hundred a
#      call) and their /dev/mapper nodes with `dmsetup mknodes`, with no
#      udev (--no-udev): no event work between the measurements. blkid is
#      the release's own (--pkgs util-linux, found by its version, not
#      busybox's applet).
# Exit 0: REPRODUCED; 1: NOT REPRODUCED; 2: cannot tell.
set -u
param() { tr ' ' '\n' </proc/cmdline | sed -n "s/^repro\.$1=//p" | tail -1; }
counts=$(param counts); counts=${counts:-100,200,400}
up() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(up)" 'BEGIN { printf "%.2f", b - a }'; }
setup() { echo "cannot tell: $*"; exit 2; }
blkid=""
for b in /usr/sbin/blkid /sbin/blkid; do
	[ -x "$b" ] && "$b" -V 2>&1 | grep -q util-linux && { blkid=$b; break; }
done
[ -n "$blkid" ] || setup "no util-linux blkid"
echo "software: $("$blkid" -V 2>&1 | head -1 | sed 's/^blkid from //')"
modprobe dm_mod || setup "no dm_mod"
dmsetup version >/dev/null 2>&1 || setup "dmsetup cannot reach device-mapper"
sectors=$(cat /sys/block/sda/size)
made=0
: >times.txt
for m in $(echo "$counts" | tr ',' ' '); do
	case $m in '' | *[!0-9]*) setup "repro.counts=$counts: not numbers" ;; esac
	[ $((m * 8)) -le "$sectors" ] || setup "$m maps of 8 sectors do not fit sda's $sectors"
	t=$(up)
	while [ "$made" -lt "$m" ]; do
		batch="" k=0
		while [ "$made" -lt "$m" ] && [ $k -lt 100 ]; do
			batch="$batch${batch:+;}repro$made,,,,0 8 linear /dev/sda $((made * 8))"
			made=$((made + 1)) k=$((k + 1))
		done
		dmsetup create --noudevsync --concise "$batch" >/dev/null 2>dm.err ||
			setup "dmsetup create failed at $made maps: $(tail -1 dm.err)"
	done
	dmsetup mknodes >/dev/null 2>&1
	have=$(ls /dev/mapper | grep -c '^repro')
	[ "$have" -eq "$m" ] || setup "$have of $m maps in /dev/mapper"
	mk=$(since "$t")
	t=$(up)
	"$blkid" -c /dev/null >/dev/null 2>&1
	s=$(since "$t")
	# strace exits with blkid's status: 2 when no device has a tag (none
	# of these maps holds anything), so the trace itself is the check
	strace -f -qq -e trace=open,openat -o strace-$m.txt "$blkid" -c /dev/null >/dev/null 2>&1
	op=$(grep -c 'open' strace-$m.txt)
	[ "$op" -gt "$m" ] || setup "strace of blkid saw $op opens for $m maps: $(tail -1 strace-$m.txt)"
	sl=$(grep -c 'slaves"' strace-$m.txt)
	echo "$m $op $sl $s" >>times.txt
	echo "  $m maps (made in $mk s): blkid -c /dev/null $s s; under strace it made $op opens, $sl of them .../slaves"
done
[ "$(wc -l <times.txt)" -ge 2 ] || setup "needs two counts at least (repro.counts=$counts)"
# the exponents of the opens and of the time, against M (fit.awk)
fit() { awk -v c="$1" '{ print $1, $c }' times.txt | awk -f "$SDSWARM_LIB/fit.awk" | cut -d' ' -f2; }
ko=$(fit 2) kt=$(fit 4)
set -- $(tail -1 times.txt)
lm=$1 lop=$2 lsl=$3
printf '{"counts":"%s","rows":"%s","exponent_opens":"%s","exponent_time":"%s"}\n' "$counts" \
	"$(tr '\n' ';' <times.txt)" "$ko" "$kt" >result.json
echo "fitted exponents: opens $ko, time $kt"
if awk -v k="$ko" 'BEGIN { exit !(k != "nan" && k > 1.5) }'; then
	echo "blkid's opens grow as maps^$ko ($lop at $lm maps, $lsl of them .../slaves: every map against every map); its time as maps^$kt"
	exit 0
fi
echo "blkid's opens grow as maps^$ko ($lop at $lm maps, $lsl .../slaves): linear; its time as maps^$kt"
exit 1
