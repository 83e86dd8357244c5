# SPDX-License-Identifier: MIT
# vm-mem: 2G
# vm-timeout: 900
# tcmu-257: sdswarmd's TCMU front end under the kernel's target core. With
# a [tcmu] section the daemon itself makes a target_core_user backstore
# per LUN through configfs (user_0/sdswarmL, dev_config=sdswarm/sdswarmL),
# serves every device's ring from its one loop thread, and exports them
# through tcm_loop as LUNs 0..N-1 of one target with a nexus; sd is bound
# to them in LUN order (vm_sd_bind_luns; sdswarm.bind=auto leaves it to the
# kernel's asynchronous probes, which may swap names). N is sdswarm.disks
# (default 257: one past 2.6's 256 disks; tcmu-703.sh runs 703, to sdaaa).
# The last `many` (4) disks carry 20 GPT partitions (16 and up on the
# extended major 259), the others `parts` (2).
# Checks: every /sys/block name and partition and its MAJOR:MINOR against
# sdnum (scheme linux), /dev nodes and lsblk agree, the names are exactly
# sdnum's 0..N-1, each LUN got the name `sdswarm names` predicts; a sample
# (every name-length boundary, the last) answers sg_inq with SDSWARM/VDISK,
# the serial VPD page and the NAA WWN in the device identification page
# as `sdswarm status --lun` has them, sg_readcap its block count; 4 MiB
# written and read back with O_DIRECT in 1 MiB commands are the same
# bytes; a delay fault delays one read by 1.5 s, a hang fault's read is
# aborted by sd's 4 s timeout (a TMR entry on the ring) and retried; a
# dev_size write to one backstore shows up as the daemon's netlink
# warning; a LUN added through the control socket becomes disk N (sdnum's
# name and dev_t) and goes again when removed; then a SIGTERM removes
# every disk, backstore, uio device and the tcm_loop target, and the
# daemon exits 0.
# Figures: disks, seen, mismatches, missing, probe_s (daemon start to the
# last partition in sysfs), mem_used_kib, mem_per_disk_kib, ring_kib (one
# device's mapping: mailbox, command ring, data area), parts_259,
# lun_order_mismatches, stop_s, hotplug_add_s, hotplug_remove_s,
# delay_s, hang_once_s.
# Parameters: sdswarm.disks=N sdswarm.many=M sdswarm.parts=P
# sdswarm.wait=SECONDS sdswarm.ring=SIZE (data area, e.g. 8M)
# sdswarm.cmdring=SIZE (command ring, e.g. 1M)
. /usr/lib/sdswarm-vm/vm-lib.sh

n=$(vm_param disks "${TCMU_DISKS:-257}")
many=$(vm_param many 4)
parts=$(vm_param parts 2)
wait_s=$(vm_param wait 600)
ring=$(vm_param ring 8M)
cmdring=$(vm_param cmdring 1M)
cfs=/sys/kernel/config
vm_stat disks "$n"
case $n in '' | *[!0-9]* | 0) vm_fail "sdswarm.disks=$n is not a count"; exit 0 ;; esac
[ "$n" -le 16384 ] || { vm_fail "sdswarm.disks=$n: at most 16384 here"; exit 0; }
[ "$many" -le "$n" ] || many=$n
[ "$parts" -le 15 ] || { vm_fail "sdswarm.parts=$parts: at most 15 (sdswarm.many has 20)"; exit 0; }
few=$((n - many))
want_parts=$((few * parts + many * 20))
vm_kv parts_want "$want_parts"

w=/tmp/tcmu
mkdir -p $w
{
	echo "# vm tcmu: $n LUNs as TCMU backstores behind tcm_loop"
	echo "[target]"
	echo "seed = $n"
	echo "max_luns = 16384"
	echo "control = /run/sdswarm/control"
	if [ "$few" -gt 0 ]; then
		echo "[luns]"
		echo "count = $few"
		echo "size = 1G"
		echo "thin = yes"
		echo "partitions = $parts"
		echo "ptable = gpt"
	fi
	if [ "$many" -gt 0 ]; then
		echo "[luns.many]"
		echo "first = $few"
		echo "count = $many"
		echo "size = 4G"
		echo "thin = yes"
		echo "partitions = 20"
		echo "ptable = gpt"
	fi
	echo "[store]"
	echo "type = mem"
	echo "[tcmu]"
	echo "enabled = yes"
	echo "hba = user_0"
	echo "ring_size = $ring"
	echo "cmd_ring_size = $cmdring"
	echo "fabric = loopback"
} >$w/sdswarm.conf

vm_modprobe sd_mod || exit 0
vm_modprobe sg || exit 0
vm_modprobe target_core_user || exit 0
vm_modprobe tcm_loop || exit 0
grep -q " $cfs configfs" /proc/mounts || mount -t configfs configfs $cfs ||
	{ vm_fail "cannot mount configfs on $cfs"; exit 0; }
mkdir -p /run/sdswarm
vm_sd_hold || exit 0
mem0=$(vm_mem_used_kib)
t0=$(vm_uptime)
# The control socket opens before the front ends start: the backstores
# and links are made (and scanned) while the wait below runs.
vm_sdswarmd $w/sdswarm.conf || exit 0
vm_kv start_s "$(vm_since "$t0")"

vm_sd_bind_luns "$wait_s" "$n" || exit 0
vm_sd_release
vm_wait_sd "$wait_s" "$n" "$want_parts" ||
	vm_fail "$(vm_sd_count) of $n disks and $(vm_sd_parts) of $want_parts partitions within ${wait_s}s"
vm_stat probe_s "$(vm_since "$t0")"
vm_stat seen "$(vm_sd_count)"
used=$(($(vm_mem_used_kib) - mem0))
vm_stat mem_used_kib "$used"
vm_stat mem_per_disk_kib "$((used / n))"
ring_b=$(cat /sys/class/uio/uio0/maps/map0/size 2>/dev/null)
vm_stat ring_kib "$((${ring_b:-0} / 1024))"
vm_kv uio_devices "$(ls /sys/class/uio | wc -l)"
vm_kv vmalloc_used_kib "$(awk '$1 == "VmallocUsed:" { print $2 }' /proc/meminfo)"
vm_kv sdswarmd_rss_kib "$(awk '$1 == "VmRSS:" { print $2 }' /proc/$VM_SDSWARMD_PID/status 2>/dev/null)"
echo "sdswarm-vm: $(vm_sd_count) disks in $(vm_since "$t0") s, $used KiB"
grep 'tcmu:' /tmp/sdswarmd.log | tail -2 | sed 's/^/sdswarm-vm: sdswarmd: /'

vm_disks_check $w "$n" "$many"
missing=$VM_MISSING

# Which LUN each disk is (tcm_loop's LUN = the table LUN), against the
# daemon's prediction in LUN order.
vm_lun_order $w
order_bad=$VM_ORDER_BAD
[ "$order_bad" -eq 0 ] || [ "$VM_SD_BIND" = auto ] ||
	echo "$order_bad LUNs named out of LUN order, sd bound in LUN order" >>$w/mismatches

# The disks are TCMU's: the host is tcm_loop's, the backstores are ours.
host=$(readlink -f /sys/block/sda/device 2>/dev/null | sed -n 's|.*/\(host[0-9]*\)/.*|\1|p')
pn=$(cat /sys/class/scsi_host/$host/proc_name 2>/dev/null)
vm_kv_str host_driver "$pn"
case $pn in tcm_loop*) ;; *) echo "sda's host $host is '$pn', not tcm_loop" >>$w/mismatches ;; esac
nback=$(ls -d $cfs/target/core/user_0/sdswarm* 2>/dev/null | wc -l)
[ "$nback" -eq "$n" ] || echo "configfs has $nback sdswarm backstores, want $n" >>$w/mismatches

# SCSI identity of a sample: every name-length boundary the count crosses.
sample=$(vm_sample_luns "$n" "$few")
checked=0
for lun in $sample; do
	d=$(awk -v l="$lun" '$1 == l { print $2 }' $w/actual)
	[ -n "$d" ] || { echo "sample: no disk for LUN $lun" >>$w/mismatches; continue; }
	st=$(sdswarm status --lun "$lun")
	serial=$(echo "$st" | sed -n 's/.*serial \([^,]*\),.*/\1/p')
	wwn=$(echo "$st" | sed -n 's/.*wwn 0x\([0-9a-fA-F]*\).*/\1/p' | tr 'A-F' 'a-f')
	blocks=$(echo "$st" | sed -n 's/.* bytes (\([0-9]*\) blocks.*/\1/p')
	inq=$(sg_inq "/dev/$d" 2>&1)
	echo "$inq" | grep -q 'Vendor identification: SDSWARM' ||
		echo "sg_inq $d: vendor not SDSWARM" >>$w/mismatches
	echo "$inq" | grep -q 'Product identification: VDISK' ||
		echo "sg_inq $d: product not VDISK" >>$w/mismatches
	sn=$(sg_vpd -p sn "/dev/$d" 2>&1 | sed -n 's/.*Unit serial number: *//p')
	[ -n "$serial" ] && [ "$sn" = "$serial" ] ||
		echo "sg_vpd -p sn $d: serial '$sn', daemon says '$serial'" >>$w/mismatches
	di=$(sg_vpd -p di "/dev/$d" 2>&1 | tr 'A-F' 'a-f' | tr -d ' ')
	[ -n "$wwn" ] && echo "$di" | grep -q "0x$wwn" ||
		echo "sg_vpd -p di $d: no NAA 0x$wwn in: $(echo "$di" | grep -m1 0x)" >>$w/mismatches
	# LIO's target core raises REPORTED LUNS DATA HAS CHANGED on every
	# LUN of the nexus as each later LUN is linked (the sd probe took
	# only the first): TEST UNIT READY takes what is pending, as an
	# initiator's retry would.
	sg_turs -n 4 "/dev/$d" >/dev/null 2>&1
	cap=$(sg_readcap -l "/dev/$d" 2>&1)
	last=$(echo "$cap" | sed -n 's/.*Last LBA=\([0-9]*\).*/\1/p')
	[ -n "$last" ] && [ $((last + 1)) = "$blocks" ] ||
		echo "sg_readcap $d: last LBA '$last', daemon has $blocks blocks: $(echo "$cap" | tr '\n' ' ' | cut -c1-160)" >>$w/mismatches
	checked=$((checked + 1))
done
vm_kv sampled "$checked"
echo "sdswarm-vm: SCSI identity of $checked disks (LUNs$sample) checked"
lsblk -rn -o NAME,MAJ:MIN,SIZE 2>/dev/null | grep '^sd' | tail -3 | sed 's/^/sdswarm-vm: lsblk: /'
vm_kv_str last "$(sdnum name $((n - 1))) $(sdnum devt $((n - 1)))"
vm_sdswarmd_alive || echo "sdswarmd died: $(tail -3 /tmp/sdswarmd.log | tr '\n' ' ')" >>$w/mismatches

# Data through the ring both ways, in commands of 1 MiB (several data-area
# pages, many iovecs): written with O_DIRECT past the partition table,
# read back, the same bytes. The last disk, so the highest uio device.
d=$(sdnum name $((n - 1)))
dd if=/dev/urandom of=$w/pattern bs=1M count=4 2>/dev/null
if dd if=$w/pattern of=/dev/$d bs=1M seek=64 count=4 oflag=direct 2>$w/dd.err &&
	dd if=/dev/$d of=$w/back bs=1M skip=64 count=4 iflag=direct 2>>$w/dd.err; then
	cmp -s $w/pattern $w/back || echo "$d: 4 MiB read back differ from what was written" >>$w/mismatches
else
	echo "$d: O_DIRECT dd failed: $(tail -1 $w/dd.err)" >>$w/mismatches
fi
vm_kv_str io_disk "$d"

# Held commands: a delayed read completes after its delay (the loop's
# timer), and a read hung once is aborted by the kernel's error handler
# when sd's timeout fires (task management reaches the ring as a TMR
# entry naming the command: sdswarm completes it TASK ABORTED) and the
# retry succeeds. LUN 1 (sdb).
if [ "$n" -ge 2 ]; then
	out=$(sdswarm fault set delay luns=1 delay=1500ms 2>&1) || echo "fault set delay: $out" >>$w/mismatches
	t2=$(vm_uptime)
	dd if=/dev/sdb of=/dev/null bs=4096 skip=100 count=1 iflag=direct 2>$w/dd.err ||
		echo "delayed read of sdb failed: $(tail -1 $w/dd.err)" >>$w/mismatches
	ds=$(vm_since "$t2")
	vm_kv delay_s "$ds"
	awk -v d="$ds" 'BEGIN { exit !(d >= 1.5) }' || echo "delayed read took $ds s, less than 1.5" >>$w/mismatches
	sdswarm fault clear all >/dev/null 2>&1
	echo 4 >/sys/block/sdb/device/timeout
	out=$(sdswarm fault set hang luns=1 lba=200-207 count=1 2>&1) || echo "fault set hang: $out" >>$w/mismatches
	t2=$(vm_uptime)
	timeout 120 dd if=/dev/sdb of=/dev/null bs=4096 skip=25 count=1 iflag=direct 2>$w/dd.err ||
		echo "read of a once-hung block failed after the abort: $(tail -1 $w/dd.err)" >>$w/mismatches
	hs=$(vm_since "$t2")
	vm_kv hang_once_s "$hs"
	awk -v d="$hs" 'BEGIN { exit !(d >= 4) }' || echo "the hung read came back in $hs s, before its 4 s timeout" >>$w/mismatches
	# well before the kernel's own 30 s cmd_time_out would end it
	awk -v d="$hs" 'BEGIN { exit !(d < 25) }' || echo "the hung read took $hs s: the abort did not end it (TMR not seen?)" >>$w/mismatches
	sdswarm fault clear all >/dev/null 2>&1
	dmesg | grep -i 'abort\|timing out\|reset' | tail -3 | sed 's/^/sdswarm-vm: dmesg: /'
fi

# At run time: a LUN added through the control socket becomes a backstore
# and a disk (index N, the lowest free: sdnum's name and dev_t); removed,
# the disk and the backstore go again.
t2=$(vm_uptime)
grp=default
[ "$few" -gt 0 ] || grp=many
out=$(sdswarm lun add --group $grp 2>&1)
lun=$(echo "$out" | sed -n 's/^added LUN \([0-9]*\).*/\1/p')
if [ -z "$lun" ]; then
	echo "sdswarm lun add answered '$out'" >>$w/mismatches
else
	want=$(sdnum name "$n")
	disk_there() { [ "$(vm_sd_lun "$want" 2>/dev/null)" = "$lun" ]; }
	if vm_wait 60 disk_there; then
		vm_kv hotplug_add_s "$(vm_since "$t2")"
		[ "$(cat /sys/block/$want/dev)" = "$(sdnum devt "$n")" ] ||
			echo "added LUN $lun: $want is $(cat /sys/block/$want/dev), sdnum $(sdnum devt "$n")" >>$w/mismatches
	else
		echo "added LUN $lun: no disk $want within 60 s" >>$w/mismatches
	fi
	t2=$(vm_uptime)
	out=$(sdswarm lun remove "$lun" 2>&1) || echo "sdswarm lun remove $lun: $out" >>$w/mismatches
	disk_gone() { [ ! -e "/sys/block/$want" ] && [ ! -e "$cfs/target/core/user_0/sdswarm$lun" ]; }
	if vm_wait 60 disk_gone; then
		vm_kv hotplug_remove_s "$(vm_since "$t2")"
	else
		echo "removed LUN $lun: $want or its backstore still there after 60 s" >>$w/mismatches
	fi
fi

# Someone else resizing one of sdswarm's backstores through configfs: the
# kernel's TCM-USER netlink event reaches the daemon, which warns.
if grep -q 'netlink events joined' /tmp/sdswarmd.log; then
	vm_kv_str netlink joined
	b=$cfs/target/core/user_0/sdswarm0
	if [ -f $b/attrib/dev_size ]; then
		printf '%s' "$(cat $b/attrib/dev_size)" >$b/attrib/dev_size 2>/dev/null
		warned() { grep -q 'sdswarm0/sdswarm/sdswarm0 resized' /tmp/sdswarmd.log; }
		if vm_wait 10 warned; then
			vm_kv netlink_warned 1
		else
			echo "a dev_size write to $b: no netlink warning in the daemon's log" >>$w/mismatches
		fi
	else
		echo "no $b/attrib/dev_size to write" >>$w/mismatches
	fi
else
	vm_kv_str netlink "$(grep -o 'netlink events unavailable.*' /tmp/sdswarmd.log | head -1)"
	echo "the daemon did not join TCM-USER's netlink group" >>$w/mismatches
fi

# A clean shutdown removes everything it made, in reverse.
t1=$(vm_uptime)
kill -TERM "$VM_SDSWARMD_PID" 2>/dev/null
gone() { ! kill -0 "$VM_SDSWARMD_PID" 2>/dev/null; }
if vm_wait 300 gone; then
	wait "$VM_SDSWARMD_PID"
	rc=$?
	[ "$rc" -eq 0 ] || echo "sdswarmd exited with status $rc on SIGTERM" >>$w/mismatches
else
	echo "sdswarmd still running 300 s after SIGTERM" >>$w/mismatches
fi
vm_stat stop_s "$(vm_since "$t1")"
left=$(vm_sd_count)
[ "$left" -eq 0 ] || echo "after shutdown $left sd disks are left" >>$w/mismatches
left=$(ls -d $cfs/target/core/user_0/sdswarm* 2>/dev/null | wc -l)
[ "$left" -eq 0 ] || echo "after shutdown $left backstores are left in configfs" >>$w/mismatches
left=$(ls $cfs/target/loopback 2>/dev/null | grep -c '^naa\.')
[ "$left" -eq 0 ] || echo "after shutdown $left tcm_loop targets are left" >>$w/mismatches
left=$(ls /sys/class/uio 2>/dev/null | wc -l)
[ "$left" -eq 0 ] || echo "after shutdown $left uio devices are left" >>$w/mismatches
grep -E 'ERR|error|WARN' /tmp/sdswarmd.log | head -5 | sed 's/^/sdswarm-vm: sdswarmd: /'

bad=$(wc -l <$w/mismatches)
vm_stat mismatches "$bad"
vm_kv checked "$(wc -l <$w/kernel)"
if [ "$bad" -gt 0 ]; then
	head -20 $w/mismatches | sed 's/^/sdswarm-vm: mismatch: /'
	vm_fail "$bad mismatch(es), first: $(head -1 $w/mismatches)"
elif [ "$missing" -gt 0 ]; then
	vm_fail "$missing of sdnum's names for 0..$((n - 1)) are missing"
else
	vm_pass "$(wc -l <$w/kernel) names and dev_t match sdnum, $checked disks' identity checked, all removed at shutdown"
fi
