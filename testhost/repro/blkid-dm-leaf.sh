#!/bin/sh
# SPDX-License-Identifier: MIT
# repro-exec: --frontend scsi_debug --disks 1 --no-udev --pkgs util-linux,dmsetup --mem 2G --timeout 3600
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
#            250,500,1000): the time of `blkid -c /dev/null` (no cache: it
#            probes every device) grows with M with a least-squares
#            exponent above 1.5 (near 1 when the cost is a device's own)
# expect:    bookworm REPRODUCED: util-linux 2.38.1-5+deb12u3, before PR 1729
# expect:    trixie NOT REPRODUCED: util-linux 2.41.5-0+deb13u1, with PR 1729
# How: the maps are made with `dmsetup create --concise` (a hundred a
#      call) and their /dev/mapper nodes with `dmsetup mknodes`, with no
#      udev (--no-udev): no event work between the timings. blkid is the
#      release's own (--pkgs util-linux, found by its version, not
#      busybox's applet); each count is timed twice and the shorter kept.
# Exit 0: REPRODUCED; 1: NOT REPRODUCED; 2: cannot tell.
set -u
param() { tr ' ' '\n' </proc/cmdline | sed -n "s/^repro\.$1=//p" | tail -1; }
counts=$(param counts); counts=${counts:-250,500,1000}
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
	best=""
	for try in 1 2; do
		t=$(up)
		"$blkid" -c /dev/null >/dev/null 2>&1
		s=$(since "$t")
		[ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }' && best=$s
	done
	echo "$m $best" >>times.txt
	echo "  $m maps (made in $mk s): blkid -c /dev/null $best s"
done
[ "$(wc -l <times.txt)" -ge 2 ] || setup "needs two counts at least (repro.counts=$counts)"
set -- $(awk -f "$SDSWARM_LIB/fit.awk" times.txt)
k=$2
printf '{"counts":"%s","times":"%s","exponent":%s}\n' "$counts" "$(tr '\n' ' ' <times.txt | sed 's/ $//')" "$k" >result.json
if awk -v k="$k" 'BEGIN { exit !(k > 1.5) }'; then
	echo "blkid's time grows as maps^$k ($(tr '\n' ' ' <times.txt | awk '{ for (i = 1; i < NF; i += 2) printf "%s%s maps %s s", (i > 1 ? ", " : ""), $i, $(i + 1) }')): quadratic in the dm maps"
	exit 0
fi
echo "blkid's time grows as maps^$k ($(tr '\n' ' ' <times.txt | awk '{ for (i = 1; i < NF; i += 2) printf "%s%s maps %s s", (i > 1 ? ", " : ""), $i, $(i + 1) }')): not quadratic"
exit 1
