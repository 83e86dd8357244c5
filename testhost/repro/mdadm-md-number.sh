#!/bin/sh
# SPDX-License-Identifier: MIT
# repro-exec: --frontend iscsi --disks 4 --pkgs mdadm
# software:  mdadm, its check of the md device name given to --create
# threshold: array number 1,025 (/dev/md1025); 127 in mdadm 4.3. A host
#            of a few thousand disks that numbers its mirrors after their
#            disks (md1100 for the pair at sdaop/sdaoq) meets it
# upstream:  mdadm commit 25aa7329 ("mdadm: numbered names verification",
#            in 4.3) refuses /dev/mdN for N of 127 and more as "Not POSIX
#            compatible"; f786072a raised the bound to 1,024; PR 172
#            ("mdadm: allow any valid minor number in md device name", in
#            4.5) takes any minor up to 2^20. A regression: 4.2 had no
#            such check
# assertion: `mdadm --create /dev/md1100 --level=1 --raid-devices=2` over
#            sdc and sdd is refused ("cannot be set as devname") and no
#            md1100 appears, while /dev/md1024 over sda and sdb (the
#            control, inside the bound) is created
# expect:    bookworm NOT REPRODUCED: mdadm 4.2-5, before the check:
#            md1100 is created
# expect:    trixie REPRODUCED: mdadm 4.4-11+deb13u1 (the 1,024 bound;
#            PR 172 not in Debian's patches)
# How: four sdswarmd LUNs over iSCSI, each with a store of its own.
#      scsi_debug's disks share one store (per_host_store=0): the md
#      superblock written to sda is on sdb too, and the kernel refuses the
#      second member (ADD_NEW_DISK: Device or resource busy).
# Exit 0: REPRODUCED; 1: NOT REPRODUCED; 2: cannot tell.
set -u
echo "software: $(mdadm --version 2>&1 | head -1)"
grep -q '^sdd ' "$SDSWARM_DISK_LIST" || { echo "the guest has no sdd"; exit 2; }
modprobe raid1 || { echo "no raid1 module"; exit 2; }
create() { # MD DISK DISK: mdadm's exit status, its output in create-MD.txt
	mdadm --create "/dev/$1" --run --level=1 --raid-devices=2 --metadata=1.2 \
		--bitmap=none --assume-clean "/dev/$2" "/dev/$3" </dev/null >"create-$1.txt" 2>&1
	rc=$?
	sed "s/^/  $1: /" "create-$1.txt"
	return $rc
}
create md1024 sda sdb
rc=$?
[ $rc -eq 0 ] && [ -e /sys/block/md1024 ] ||
	{ echo "md1024 was not created (exit $rc): the control failed, so the check cannot tell"; exit 2; }
echo "md1024: created, $(cat /sys/block/md1024/md/level) over $(ls /sys/block/md1024/slaves | tr '\n' ' ')"
create md1100 sdc sdd
rc=$?
if [ $rc -eq 0 ] && [ -e /sys/block/md1100 ]; then
	echo "md1100 created too ($(cat /sys/block/md1100/dev)): no bound on the array number"
	exit 1
fi
if [ $rc -ne 0 ] && [ ! -e /sys/block/md1100 ] && grep -q 'cannot be set as devname' create-md1100.txt; then
	echo "md1100 refused (exit $rc: $(grep -m1 -o 'Reason: .*' create-md1100.txt)), md1024 created: the bound is between"
	exit 0
fi
echo "md1100: exit $rc, $([ -e /sys/block/md1100 ] && echo present || echo absent), not the refusal the assertion names"
exit 2
