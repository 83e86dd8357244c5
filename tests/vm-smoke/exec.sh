#!/bin/bash
# SPDX-License-Identifier: MIT
# One short `sdswarm-testhost exec` boot: 40 scsi_debug disks with 2
# partitions each on the initramfs host, and a script of the kind a user
# writes, which asserts the disks it was promised ($SDSWARM_DISKS of them,
# sda..sdan in $SDSWARM_DISK_LIST, each with its partitions and a block
# node, udev's by-id links) and leaves a report in its output folder. The
# script's exit status must come back as the run's, its output on
# standard output, its file in --out. Skips when QEMU or the kernel
# package cannot be had.
# test-timeout: 460
. "$(dirname "$0")/../lib/vm-smoke.sh"
vm_smoke_requires sdnum
t=$(tmpdir)

cat >"$t/assert-disks.sh" <<'GUEST'
#!/bin/sh
# In the guest: every disk promised, in index order, with its partitions.
bad=0
n=$(wc -l <"$SDSWARM_DISK_LIST")
[ "$n" -eq "$SDSWARM_DISKS" ] || { echo "disk list has $n, want $SDSWARM_DISKS"; bad=1; }
[ "$(ls /sys/block | grep -c '^sd')" -eq "$SDSWARM_DISKS" ] || { echo "sysfs disagrees"; bad=1; }
i=0
while read -r name devt; do
	want=$(sdnum name $i)
	[ "$name" = "$want" ] || { echo "disk $i is $name, want $want"; bad=1; }
	[ -b "/dev/$name" ] || { echo "no /dev/$name"; bad=1; }
	p=$(ls -d /sys/block/$name/${name}[0-9]* 2>/dev/null | wc -l)
	[ "$p" -eq "$SDSWARM_PARTS" ] || { echo "$name has $p partitions"; bad=1; }
	i=$((i + 1))
done <"$SDSWARM_DISK_LIST"
links=$(ls /dev/disk/by-id 2>/dev/null | grep -c '^scsi-.*-part' || true)
[ "$links" -eq $((SDSWARM_DISKS * SDSWARM_PARTS)) ] || { echo "$links by-id partition links"; bad=1; }
echo "checked $i disks, last $(tail -1 "$SDSWARM_DISK_LIST")"
echo "disks=$i links=$links bad=$bad" >report.txt
[ "$bad" -eq 0 ] && exit 7
exit 1
GUEST
chmod +x "$t/assert-disks.sh"

vm_smoke_exec --frontend scsi_debug --disks 40 --parts 2 \
	--script "$t/assert-disks.sh" --out "$t/out" --timeout 400
rc=$VM_EXEC_RC
out=$VM_EXEC_OUT
# 7, not 0: the script's own status comes back, not a success of ours.
expect_eq "the script's exit status is the run's" 7 "$rc"
check "its output is on standard output" grep -q '^checked 40 disks, last sdan 66:112$' <<<"$out"
check "its file came back" grep -qx 'disks=40 links=80 bad=0' "$t/out/report.txt"
finish
