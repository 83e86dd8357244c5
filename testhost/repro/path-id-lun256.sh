#!/bin/sh
# SPDX-License-Identifier: MIT
# repro-exec: --frontend iscsi --disks 300 --pkgs udev
# software:  systemd 252 (Debian 12: 252.x), udev's path_id builtin and
#            60-persistent-storage.rules' /dev/disk/by-path links
# threshold: LUN 256 (the 257th LUN of one target)
# upstream:  systemd src/udev/udev-builtin-path_id.c, format_lun_number():
#            a LUN below 256 is printed as "lun-%lu", any other as
#            "lun-0x%04lx%04lx00000000" (the kernel's 64-bit LUN, its
#            address method included); consumers that parse the LUN as a
#            decimal number break past 255 (e.g. blivet's int(lun),
#            Kubernetes FC volumes accepting only 0-255)
# assertion: over iSCSI (the initiator the kernel has, path_id's
#            ip-...-iscsi-...-lun-N form), the by-path link of the disk at
#            LUN 255 ends "-lun-255" and the one at LUN 256 ends
#            "-lun-0x" followed by hex digits
# expect:    bookworm REPRODUCED: udev 252.39-1~deb12u2
# expect:    trixie REPRODUCED: udev 257.13-1~deb13u1; format_lun_number() is
#            unchanged
# Exit 0: REPRODUCED; 1: NOT REPRODUCED; 2: cannot tell.
echo "software: udev (systemd) $(udevadm --version)"
[ "$SDSWARM_FRONTEND" = iscsi ] || { echo "needs --frontend iscsi (path_id formats the LUN for iSCSI, FC and SAS paths only)"; exit 2; }
[ "$SDSWARM_DISKS" -ge 257 ] || { echo "needs 257 LUNs, has $SDSWARM_DISKS"; exit 2; }
[ -d /dev/disk/by-path ] || { echo "no /dev/disk/by-path: udev made no by-path links"; exit 2; }

# The LUN as the target numbers it, from the kernel's H:C:T:L: past 255
# the target reports flat-space addresses (0x40 in the first byte), which
# the kernel keeps in its number (LUN 256 is 0x4100 = 16640).
table_lun() {
	l=${1##*:}
	if [ "$l" -ge 16384 ] && [ "$l" -lt 32768 ]; then l=$((l - 16384)); fi
	echo "$l"
}
: >luns.txt
for d in /sys/block/sd*; do
	n=${d##*/}
	hctl=$(basename "$(readlink -f "$d/device")")
	echo "$n $hctl $(table_lun "$hctl")" >>luns.txt
done
# by-path link -> disk, disks only (no -partN)
ls -l /dev/disk/by-path/ | awk '$NF ~ /^\.\.\/\.\.\/sd[a-z]+$/ { sub(/.*\//, "", $NF); print $NF, $(NF-2) }' >by-path.txt
echo "$(wc -l <by-path.txt) by-path links to disks; $(grep -c -- '-lun-0x' by-path.txt) of them in the lun-0x form"
link_of() { # TABLE-LUN: the by-path link of that LUN's disk
	d=$(awk -v l="$1" '$3 == l { print $1; exit }' luns.txt)
	[ -n "$d" ] || return 1
	awk -v d="$d" '$1 == d { print $2; exit }' by-path.txt
}
l255=$(link_of 255) l256=$(link_of 256)
echo "LUN 255: $(awk '$3 == 255' luns.txt) -> ${l255:-no link}"
echo "LUN 256: $(awk '$3 == 256' luns.txt) -> ${l256:-no link}"
[ -n "$l255" ] && [ -n "$l256" ] || { echo "no by-path link for LUN 255 or 256"; exit 2; }
case $l255 in *-lun-255) ;; *) echo "LUN 255's link does not end -lun-255: another naming"; exit 2 ;; esac
first_hex=$(grep -- '-lun-0x' by-path.txt | head -1)
echo "first lun-0x link: ${first_hex:-none}"
if printf '%s\n' "$l256" | grep -Eq -- '-lun-0x[0-9a-f]+$'; then
	hex=${l256##*-lun-0x}
	echo "LUN 256 is named lun-0x$hex: a decimal parse fails, a hex parse gives $(printf '%d' "0x${hex%????????????}") in its top 16 bits, not 256"
	exit 0
fi
echo "LUN 256's link is decimal ($l256): fixed or different in this version"
exit 1
