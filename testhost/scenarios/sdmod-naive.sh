# SPDX-License-Identifier: MIT
# vm-mem: 1G
# vm-timeout: 900
# sdmod-naive: the patched sd_mod with layout=naive (64 contiguous minors a
# disk: minor bits 0-5 the partition, 6-19 the disk) on N scsi_debug disks
# (sdswarm.disks, default 300) with P GPT partitions each (sdswarm.parts,
# default 63). scsi_debug's disks share one store, so sfdisk writes the
# table once, on sda; sd_mod is then reloaded and every disk is probed with
# it. Every disk and partition is checked against `sdnum --scheme naive`
# (name, dev_t, /dev node), the disks are exactly sdnum's 0..N-1, and
# nothing is on 259: 63 partitions fit each disk's own minors. As a
# control, `sdnum --scheme linux` must disagree on the partitions past 15.
# Figures: disks, seen, parts_seen, mismatches, on_259, probe_s (the reload
# to the last partition), checked, control_mismatches.
# Parameters: sdswarm.disks=N sdswarm.parts=P (1..63)
. /usr/lib/sdswarm-vm/vm-lib.sh
. /usr/lib/sdswarm-vm/sd-lib.sh

n=$(vm_param disks 300)
parts=$(vm_param parts 63)
vm_stat disks "$n"
vm_kv parts "$parts"
case $n in '' | *[!0-9]* | 0) vm_fail "sdswarm.disks=$n is not a count"; exit 0 ;; esac
[ "$n" -le 16384 ] || { vm_fail "sdswarm.disks=$n: at most 16384 (one scsi_debug target)"; exit 0; }
case $parts in '' | *[!0-9]*) vm_fail "sdswarm.parts=$parts is not a count"; exit 0 ;; esac
[ "$parts" -ge 1 ] && [ "$parts" -le 63 ] || { vm_fail "sdswarm.parts=$parts: 1..63 fit a naive disk"; exit 0; }
w=/tmp/sdmod-naive
mkdir -p $w

vm_sd_load layout=naive || exit 0
# 1 MiB a partition and the GPT's own: 8 MiB more than the partitions.
vm_modprobe scsi_debug add_host=1 num_tgts=1 max_luns="$n" delay=0 \
	dev_size_mb=$((parts + 8)) || exit 0
vm_sd_wait 300 "$n" || exit 0
{
	echo "label: gpt"
	i=1
	while [ $i -le "$parts" ]; do
		echo "size=1MiB"
		i=$((i + 1))
	done
} >$w/table
sfdisk -q /dev/sda <$w/table >$w/sfdisk.log 2>&1 || { vm_fail "sfdisk: $(tail -2 $w/sfdisk.log | tr '\n' ' ')"; exit 0; }
# Every other disk reads the same store: reload, and each probe scans it.
vm_sd_unload || exit 0
t0=$(vm_uptime)
vm_sd_load layout=naive || exit 0
vm_sd_wait 600 "$n" $((n * parts)) || exit 0
vm_stat probe_s "$(vm_since "$t0")"
vm_stat seen "$(vm_sd_count)"
vm_stat parts_seen "$(vm_sd_parts)"

vm_sd_kernel $w
vm_sd_scheme_check $w naive 0 "$n"
on259=$(grep -c ' 259:' $w/kernel)
vm_stat on_259 "$on259"
vm_stat mismatches "$VM_SD_BAD"
vm_kv checked "$(wc -l <$w/kernel)"
vm_kv_str first "$(grep '^sda ' $w/kernel)"
vm_kv_str last_part "$(grep "^$(echo $((n - 1)) | sdnum name -)$parts " $w/kernel)"
# Control: mainline's numbers differ for every name but sda..sda15.
sed 's/^error.*/0 0/' $w/idx | awk '$2 >= 16 { print $1 " 15"; next } { print }' |
	sdnum --scheme linux devt - >$w/linux
control=$(paste -d' ' $w/kernel $w/linux | awk '$2 != $3 { c++ } END { print c + 0 }')
vm_kv control_mismatches "$control"
want_control=$(awk '!($1 == 0 && $2 < 16) { c++ } END { print c + 0 }' $w/idx)
[ "$control" -eq "$want_control" ] ||
	vm_fail "control: scheme linux disagreed on $control names, not $want_control; the check cannot tell the layouts apart"
[ "$on259" -eq 0 ] || vm_fail "$on259 partitions on major 259 under layout naive"
if [ "$VM_SD_BAD" -gt 0 ]; then
	vm_fail "$VM_SD_BAD mismatch(es) against sdnum --scheme naive, first: $(head -1 $w/mismatches)"
fi
vm_pass "layout naive: $(wc -l <$w/kernel) disks and partitions as sdnum --scheme naive, none on 259"
