#!/bin/sh
# SPDX-License-Identifier: MIT
# repro-exec: --frontend scsi_debug --disks 28 --pkgs hdparm,perl-base
# software:  hdparm's Debian udev rule (85-hdparm.rules) and its helper
#            /lib/udev/hdparm, which applies /etc/hdparm.conf to a disk
#            when it appears
# threshold: 27 disks (sdaa is the 27th)
# upstream:  Debian's hdparm package, debian/udev-rules: `KERNEL=="[sh]d[a-z]"`
#            matches one-letter names only, so the helper never runs for
#            sdaa and later disks (Debian bug reports of hdparm.conf
#            "ignored" on large hosts); the same rule in 9.65+ds-1 and
#            9.65+ds-1.1
# assertion: with a block for /dev/sdb and one for /dev/sdab in
#            /etc/hdparm.conf (`read_ahead_sect = 1024`), an add event of
#            each (`udevadm trigger --action=add`) sets sdb's read-ahead to
#            512 KiB and leaves sdab's as it was
# expect:    bookworm REPRODUCED: hdparm 9.65+ds-1, rule KERNEL=="[sh]d[a-z]"
# expect:    trixie REPRODUCED: hdparm 9.65+ds-1.1, the same rule (only
#            its helper moved to /usr/lib/udev)
# Exit 0: REPRODUCED; 1: NOT REPRODUCED; 2: cannot tell.
set -u
echo "software: hdparm $(hdparm -V 2>&1 | sed 's/^hdparm //'), $(sed -n 's/.*\(KERNEL=="[^"]*"\).*/rule \1/p' /lib/udev/rules.d/85-hdparm.rules /usr/lib/udev/rules.d/85-hdparm.rules 2>/dev/null | head -1)"
grep -q '^sdab ' "$SDSWARM_DISK_LIST" || { echo "the guest has no sdab"; exit 2; }
ra() { cat "/sys/block/$1/queue/read_ahead_kb"; }
before_b=$(ra sdb) before_ab=$(ra sdab)
echo "read_ahead_kb before: sdb $before_b, sdab $before_ab"
[ "$before_b" != 512 ] && [ "$before_ab" != 512 ] || { echo "a read-ahead is 512 KiB already: the check cannot tell"; exit 2; }
cat >/etc/hdparm.conf <<'CONF'
/dev/sdb {
	read_ahead_sect = 1024
}
/dev/sdab {
	read_ahead_sect = 1024
}
CONF
udevadm trigger --action=add --sysname-match=sdb --sysname-match=sdab
udevadm settle --timeout=60
b=$(ra sdb) ab=$(ra sdab)
echo "read_ahead_kb after an add event of each: sdb $b, sdab $ab"
[ "$b" = 512 ] || { echo "sdb's read-ahead is $b KiB, not 512: the helper did not apply hdparm.conf at all"; exit 2; }
if [ "$ab" = 512 ]; then
	echo "sdab got hdparm.conf's read-ahead too: the rule matches sdaa and later"
	exit 1
fi
echo "hdparm.conf applied to sdb (512 KiB) but not to sdab ($ab KiB): the rule's [sh]d[a-z] stops at sdz"
exit 0
