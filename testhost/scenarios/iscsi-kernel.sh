# SPDX-License-Identifier: MIT
# vm-mem: 1G
# vm-timeout: 600
# iscsi-kernel: the kernel's own iSCSI initiator (iscsi_tcp, driven by
# open-iscsi's iscsid and iscsiadm) logs in to sdswarmd on the guest's
# loopback, and the sd driver makes a disk of every LUN. N LUNs
# (sdswarm.disks, default 300: past sdz and past 256, LUNs 256 and up in
# flat space addressing) of one target; the last 4 carry 20 GPT partitions
# (16 and up go to the extended major 259), the others 2.
# Checks: every /sys/block name and partition and its MAJOR:MINOR against
# sdnum (scheme linux), /dev nodes and lsblk agree, the names are exactly
# sdnum's 0..N-1, partitions 16+ are on major 259; INQUIRY, the serial
# number VPD page and READ CAPACITY of a sample of disks (every name-length
# boundary crossed, LUN 255/256, the last) match the configuration and
# `sdswarm status --lun`; and which LUN got which name against `sdswarm
# names` (the prediction in LUN order). With scsi_mod.scan=sync (the
# test host's default) that order must hold; booted with --append
# scsi_mod.scan=async it is only reported (lun_order_mismatches): the names and dev_t still must match.
# Figures: disks, seen, mismatches, missing, probe_s (login to the last
# partition in sysfs), login_s, mem_used_kib, parts_259, lun_order_mismatches.
# sdswarm.targets=T splits the LUNs over T targets (T sessions, T SCSI
# hosts); sdswarm.login=seq (the default) logs in to one after the other,
# each scan finished before the next, login=parallel to all at once
# (iscsiadm's own parallel login): then the hosts' scans race, and the
# names no longer follow LUN order even under scan=sync, while every name's
# dev_t still is sdnum's.
# sdswarm.bind=lun (the default) makes the order exact in every mode: sd
# is kept off the new devices (vm_sd_hold) and bound to them one at a time
# in table-LUN order once all are there (vm_sd_bind_luns), so that LUN
# order must hold whatever scan= and login= say. bind=auto leaves the
# binding to the kernel, which probes sd asynchronously
# (PROBE_PREFER_ASYNCHRONOUS): each probe takes its name when it runs, so
# even with scan=sync and one target two LUNs can swap names under load
# (the flake this scenario had); the order is then only reported, with
# attach_order_breaks (how often dmesg's "Attached SCSI disk" lines go
# back in LUN order: probes finishing out of order; under bind=lun too,
# where each bind starts once the previous one has its index, so the
# probes' second halves overlap) next to scan_order_breaks (the same for
# the scan's "Direct-Access" lines). dmesg's ring may have lost the first
# lines of a big run (scan_lines, attach_lines: how many it still had;
# --append log_buf_len=4M keeps them).
# Parameters: sdswarm.disks=N sdswarm.many=M (disks with 20 partitions,
# default 4) sdswarm.parts=P (partitions of the others, default 2)
# sdswarm.targets=T sdswarm.login=seq|parallel sdswarm.wait=SECONDS
# sdswarm.bind=lun|auto
. /usr/lib/sdswarm-vm/vm-lib.sh

n=$(vm_param disks 300)
many=$(vm_param many 4)
parts=$(vm_param parts 2)
wait_s=$(vm_param wait 400)
portal=127.0.0.1:3260
iqn=iqn.2026-12.org.sdswarm:t0
ntgt=$(vm_param targets 1)
login=$(vm_param login seq)
vm_stat disks "$n"
case $n in '' | *[!0-9]* | 0) vm_fail "sdswarm.disks=$n is not a count"; exit 0 ;; esac
case $ntgt in [1-9] | 1[0-6]) ;; *) vm_fail "sdswarm.targets=$ntgt: 1 to 16"; exit 0 ;; esac
lpt=$(((n + ntgt - 1) / ntgt))
[ "$lpt" -le 16384 ] || { vm_fail "sdswarm.disks=$n: a target holds at most 16384"; exit 0; }
vm_kv targets "$ntgt"
vm_kv_str login "$login"
[ "$many" -le "$n" ] || many=$n
[ "$parts" -le 15 ] || { vm_fail "sdswarm.parts=$parts: at most 15 (sdswarm.many has 20)"; exit 0; }
few=$((n - many))
want_parts=$((few * parts + many * 20))
# scan=async on the command line (after run's scan=sync) wins: the last
# value of a parameter is the one the kernel keeps.
scan=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^scsi_mod.scan=//p' | tail -1)
vm_kv_str scan "${scan:-async}"
vm_kv parts_want "$want_parts"

w=/tmp/iscsi-kernel
mkdir -p $w
{
	echo "# vm iscsi-kernel: $n LUNs over iSCSI on the guest's loopback"
	echo "[target]"
	echo "seed = $n"
	echo "max_luns = 16384"
	if [ "$few" -gt 0 ]; then
		echo "[luns]"
		echo "count = $few"
		echo "size = 1G"
		echo "partitions = $parts"
		echo "ptable = gpt"
	fi
	if [ "$many" -gt 0 ]; then
		echo "[luns.many]"
		echo "first = $few"
		echo "count = $many"
		echo "size = 4G"
		echo "partitions = 20"
		echo "ptable = gpt"
	fi
	echo "[store]"
	echo "type = mem"
	echo "[iscsi]"
	echo "enabled = yes"
	echo "portal = $portal"
	echo "targets = $ntgt"
	echo "luns_per_target = $lpt"
	echo "threads = 2"
} >$w/sdswarm.conf

vm_modprobe sg || exit 0
vm_iscsi_target $w/sdswarm.conf || exit 0
vm_sd_hold || exit 0
bind=$VM_SD_BIND
# What a login's wait looks for: the SCSI devices while sd is held off
# them, the disks when the kernel binds on its own.
wait_disks() {
	if [ "$bind" = lun ]; then vm_wait_scsi "$@"; else vm_wait_sd "$@"; fi
}
mem0=$VM_LOGIN_MEM0
t0=$VM_LOGIN_T0
if [ "$ntgt" -eq 1 ]; then
	vm_iscsi_login $portal $iqn || exit 0
elif [ "$login" = parallel ]; then
	vm_iscsi_login $portal || exit 0
else
	t=0
	while [ $t -lt "$ntgt" ]; do
		vm_iscsi_login $portal iqn.2026-12.org.sdswarm:t$t || exit 0
		have=$(((t + 1) * lpt))
		[ $have -gt "$n" ] && have=$n
		wait_disks "$wait_s" $have ||
			{ vm_fail "t$t: $(vm_sd_count) disks, $(vm_scsi_disks) SCSI disk devices of $have"; exit 0; }
		t=$((t + 1))
	done
fi
vm_kv login_s "$(vm_since "$t0")"
vm_sd_bind_luns "$wait_s" "$n" "$lpt" || exit 0
vm_sd_release

vm_wait_sd "$wait_s" "$n" "$want_parts" ||
	vm_fail "$(vm_sd_count) of $n disks and $(vm_sd_parts) of $want_parts partitions within ${wait_s}s"
vm_stat probe_s "$(vm_since "$t0")"
vm_stat seen "$(vm_sd_count)"
vm_stat mem_used_kib "$(($(vm_mem_used_kib) - mem0))"
echo "sdswarm-vm: $(vm_sd_count) disks in $(vm_since "$t0") s"

vm_disks_check $w "$n" "$many"
missing=$VM_MISSING

# Which LUN each disk is (the table LUN: target tI's LUN L is I*lpt+L),
# against the daemon's prediction in LUN order.
vm_lun_order $w "$lpt"
order_bad=$VM_ORDER_BAD
# The kernel's own account of the order: the scan's "Direct-Access" lines
# and sd's "Attached SCSI disk" lines, in the order dmesg has them, in LUN
# order or not (a ring buffer too small for them all gives the rest).
breaks() { # PATTERN: how often the H:C:T:L of the lines matching it go back
	dmesg | sed -n "s/.* \([0-9]*:[0-9]*:[0-9]*:[0-9]*\): $1.*/\1/p" >$w/seq
	vm_lun_keys "$lpt" <$w/seq | awk 'NR > 1 && ($1 "") < prev { b++ } { prev = $1 "" } END { print b + 0 }'
}
vm_kv scan_lines "$(dmesg | grep -c ': Direct-Access ')"
vm_kv scan_order_breaks "$(breaks 'Direct-Access ')"
vm_kv attach_lines "$(dmesg | grep -c 'Attached SCSI disk')"
vm_kv attach_order_breaks "$(breaks '\[sd[a-z]*\] Attached SCSI disk')"
for d in $(cat $w/have); do
	hctl=$(readlink /sys/block/$d/device | sed 's|.*/||')
	# The kernel's number for a flat-addressed LUN L is 0x4000 + L.
	if [ "${hctl##*:}" -ge 16384 ]; then
		echo "sdswarm-vm: $d is $hctl: flat LUN $(vm_sd_lun $d) (0x4000 + LUN)"
		break
	fi
done

# SCSI identity of a sample: every name-length boundary the count crosses.
sample=$(vm_sample_luns "$n" "$few")
checked=0
for i in $sample; do
	lun=$i
	d=$(awk -v l="$lun" '$1 == l { print $2 }' $w/actual)
	[ -n "$d" ] || { echo "sample: no disk for LUN $lun" >>$w/mismatches; continue; }
	st=$(sdswarm status --lun "$lun")
	serial=$(echo "$st" | sed -n 's/.*serial \([^,]*\),.*/\1/p')
	blocks=$(echo "$st" | sed -n 's/.* bytes (\([0-9]*\) blocks.*/\1/p')
	inq=$(sg_inq "/dev/$d" 2>&1)
	echo "$inq" | grep -q 'Vendor identification: SDSWARM' ||
		echo "sg_inq $d: vendor not SDSWARM" >>$w/mismatches
	echo "$inq" | grep -q 'Product identification: VDISK' ||
		echo "sg_inq $d: product not VDISK" >>$w/mismatches
	sn=$(sg_inq -p 0x80 "/dev/$d" 2>&1 | sed -n 's/.*Unit serial number: *//p')
	[ "$sn" = "$serial" ] ||
		echo "sg_inq -p 0x80 $d: serial '$sn', daemon says '$serial'" >>$w/mismatches
	cap=$(sg_readcap -l "/dev/$d" 2>&1)
	last=$(echo "$cap" | sed -n 's/.*Last LBA=\([0-9]*\).*/\1/p')
	[ -n "$last" ] && [ $((last + 1)) = "$blocks" ] ||
		echo "sg_readcap $d: last LBA '$last', daemon has $blocks blocks" >>$w/mismatches
	checked=$((checked + 1))
done
vm_kv sampled "$checked"
echo "sdswarm-vm: SCSI identity of $checked disks (LUNs$sample) checked"

bad=$(wc -l <$w/mismatches)
vm_stat mismatches "$bad"
vm_kv checked "$(wc -l <$w/kernel)"
vm_kv_str last "$(sdnum name $((n - 1))) $(sdnum devt $((n - 1)))"
lsblk -rn -o NAME,MAJ:MIN,SIZE,TRAN 2>/dev/null | grep '^sd' | tail -3 | sed 's/^/sdswarm-vm: lsblk: /'
vm_sdswarmd_alive || vm_fail "sdswarmd died: $(tail -3 /tmp/sdswarmd.log | tr '\n' ' ')"
if [ "$bad" -gt 0 ]; then
	head -20 $w/mismatches | sed 's/^/sdswarm-vm: mismatch: /'
	vm_fail "$bad mismatch(es), first: $(head -1 $w/mismatches)"
elif [ "$missing" -gt 0 ]; then
	vm_fail "$missing of sdnum's names for 0..$((n - 1)) are missing"
elif [ "$order_bad" -gt 0 ] && [ "$bind" = lun ]; then
	vm_fail "sd bound in LUN order, yet $order_bad LUNs got another name than sdswarm names predicts"
else
	note=""
	[ "$order_bad" -gt 0 ] && note=" (bind=$bind, scan=${scan:-async}, login=$login, $ntgt targets: $order_bad LUNs named out of LUN order)"
	vm_pass "$(wc -l <$w/kernel) names and dev_t match sdnum, $checked disks' identity checked$note"
fi
# Log out, so the kernel's shutdown does not wait on the session.
iscsiadm -m node -u >/dev/null 2>&1
