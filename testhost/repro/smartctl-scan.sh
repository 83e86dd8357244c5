#!/bin/sh
# SPDX-License-Identifier: MIT
# repro-exec: --frontend scsi_debug --disks 705 --pkgs smartmontools
# software:  smartmontools 7.3 (Debian 12: 7.3-pre1+... as apt resolves it)
# threshold: 703 disks (sdaaa is the 703rd)
# upstream:  smartmontools/smartmontools issue 95: `smartctl --scan` and
#            smartd's DEVICESCAN glob /dev/sd[a-z] and /dev/sd[a-z][a-z]
#            only; still so upstream
# assertion: with 705 disks, `smartctl --scan` lists sdzz (disk 702) but
#            not sdaaa, sdaab, sdaac (disks 703-705)
# expect:    bookworm REPRODUCED: smartmontools 7.3-1+b1; scan globs
#            /dev/sd[a-z] and /dev/sd[a-z][a-z]
# expect:    trixie REPRODUCED: smartmontools 7.4-3; the issue is open
#            upstream, the globs unchanged
# Exit 0: REPRODUCED; 1: NOT REPRODUCED (the reason printed); 2: cannot
# tell (the setup is not what the assertion needs).
echo "software: $(smartctl --version | head -1 | cut -d" " -f1-2)"
[ "$SDSWARM_DISKS" -ge 705 ] || { echo "needs 705 disks, has $SDSWARM_DISKS"; exit 2; }
grep -q '^sdaac ' "$SDSWARM_DISK_LIST" || { echo "the guest has no sdaac"; exit 2; }
smartctl --scan >scan.txt 2>&1
listed=$(grep -c '^/dev/sd' scan.txt)
echo "smartctl --scan lists $listed of $SDSWARM_DISKS sd disks"
grep -q '^/dev/sdzz ' scan.txt || { echo "sdzz is not listed either: another failure"; exit 2; }
missing=""
for d in sdaaa sdaab sdaac; do
	grep -q "^/dev/$d " scan.txt || missing="$missing $d"
done
if [ "$missing" = " sdaaa sdaab sdaac" ]; then
	echo "not listed:$missing (the three-letter names past sdzz)"
	exit 0
fi
echo "listed some of sdaaa..sdaac (missing:${missing:- none}): fixed in this version"
exit 1
