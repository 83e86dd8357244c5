#!/bin/bash
# SPDX-License-Identifier: MIT
# One short `sdswarm-testhost exec --config` boot: the user's own target
# config shapes the tcmu LUNs the script meets. The config gives three
# LUNs of 64 MiB with 4,096-byte blocks and a group [luns.small] of one
# more, whose size a --set makes 16 MiB; the script asserts four disks,
# sda..sdc of 131,072 sectors (sysfs counts 512-byte ones) with a
# logical block of 4,096 and sdd of 32,768 with 512. Its exit status must
# come back as the run's, its file in --out. Skips when QEMU or the kernel
# package cannot be had.
# test-timeout: 400
. "$(dirname "$0")/../lib/vm-smoke.sh"
vm_smoke_requires sdnum sdswarmd
t=$(tmpdir)

cat >"$t/luns.conf" <<'CONF'
# three big-block LUNs, then a small group
[luns]
count = 3
size = 64M
block_size = 4096
[luns.small]
count = 1
size = 1G
CONF

cat >"$t/assert-luns.sh" <<'GUEST'
#!/bin/sh
# In the guest: the LUNs the config asked for, in LUN order.
bad=0
want() { # DISK SECTORS BLOCK
	s=$(cat /sys/block/$1/size) b=$(cat /sys/block/$1/queue/logical_block_size)
	echo "$1 $s $b"
	[ "$s" = "$2" ] && [ "$b" = "$3" ] || { echo "$1: want $2 sectors of $3"; bad=1; }
}
[ "$SDSWARM_DISKS" -eq 4 ] || { echo "SDSWARM_DISKS=$SDSWARM_DISKS, want 4"; bad=1; }
[ "$(ls /sys/block | grep -c '^sd')" -eq 4 ] || { echo "not 4 disks: $(ls /sys/block)"; bad=1; }
for d in sda sdb sdc; do want $d 131072 4096; done
want sdd 32768 512
echo "bad=$bad" >report.txt
[ "$bad" -eq 0 ] && exit 7
exit 1
GUEST
chmod +x "$t/assert-luns.sh"

vm_smoke_exec --frontend tcmu --config "$t/luns.conf" --set luns.small.size=16M \
	--script "$t/assert-luns.sh" --out "$t/out" --timeout 300
rc=$VM_EXEC_RC
out=$VM_EXEC_OUT
check "it says whose LUNs it boots" grep -q "4 tcmu disks (LUNs of $t/luns.conf with --set)" "$VM_EXEC_ERR"
# 7, not 0: the script's own status comes back, not a success of ours.
expect_eq "the script's exit status is the run's" 7 "$rc"
check "sda is 64 MiB of 4 KiB blocks" grep -qx 'sda 131072 4096' <<<"$out"
check "sdd, the small group, is 16 MiB of 512-byte blocks" grep -qx 'sdd 32768 512' <<<"$out"
check "its file came back" grep -qx 'bad=0' "$t/out/report.txt"
finish
