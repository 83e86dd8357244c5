# SPDX-License-Identifier: MIT
# vm-kernel: lean
# vm-mem: 20G
# vm-all: no
# vm-timeout: 7200
# vm-kib-a-disk: 72
# vm-disks: 262144
# vm-max-disks: layout naive=262144 linux=1048576
# quarter-million: 262,144 sdswarmd LUNs as sd disks on one kernel.
# sdswarmd in the guest serves N LUNs (sdswarm.disks, default 262144) over
# iSCSI on the loopback as targets of 16,384 LUNs (t0..t15); the kernel's
# initiator (open-iscsi's iscsid) logs in to one target after the other;
# sdswarm's lean kernel (no debugfs, bsg, sg or mq-deadline; glue
# directories found by name) with its patched sd_mod, layout=L
# (sdswarm.layout: naive, the default, 16,384 disks a major over the 16
# sd majors; or linux, the stock numbering), elevator=none; no udev
# (devtmpfs makes the nodes).
# Checks: every disk's and partition's name and dev_t (sysfs and the
# /dev node) as `sdnum --scheme L` says, the disks exactly sdnum's
# 0..N-1; the disks at the boundaries (sdzz/sdaaa, sdzzz/sdaaaa, each
# 16,384 under naive, the last) get a GPT of 63 partitions each
# (sfdisk), every partition checked the same way.
# Figures: per target the disks so far, the time since the first login
# and guest memory (MemTotal - MemAvailable, Slab, kernfs_node_cache when
# /proc/slabinfo has it) less what was used before it; the probe rate
# over the ramp (a console line every 30 s: uptime, disks, memory);
# sdswarmd's RSS and CPU seconds; the patched driver's index-allocation
# and naming cost at real occupancy (its stats); boot to the last disk.
# Parameters: sdswarm.disks=N sdswarm.layout=naive|linux
# sdswarm.wait=SECONDS (a target's bound, default 1800) sdswarm.parts=P
# (partitions on each boundary disk, default 63; 0: none)
. /usr/lib/sdswarm-vm/vm-lib.sh
. /usr/lib/sdswarm-vm/sd-lib.sh

n=$(vm_param disks 262144)
layout=$(vm_param layout naive)
wait_s=$(vm_param wait 1800)
parts=$(vm_param parts 63)
lpt=16384
portal=127.0.0.1:3260
w=/tmp/qm
mkdir -p $w
for v in "$n" "$wait_s"; do
	case $v in '' | *[!0-9]* | 0) vm_fail "quarter-million: '$v' is not a count"; exit 0 ;; esac
done
case $parts in '' | *[!0-9]*) vm_fail "sdswarm.parts=$parts is not a count"; exit 0 ;; esac
# What the layout can number: naive 16 majors x 16,384 disks of 64
# minors; linux 2^20 disks (16 minors) with partitions 16+ on 259.
case $layout in
naive) cap=262144 maxp=63 ;;
linux) cap=1048576 maxp=255 ;;
*) vm_fail "sdswarm.layout=$layout: naive or linux"; exit 0 ;;
esac
[ "$n" -le $cap ] || { vm_fail "sdswarm.disks=$n: layout $layout numbers at most $cap disks"; exit 0; }
[ "$parts" -le $maxp ] || { vm_fail "sdswarm.parts=$parts: a $layout disk has at most $maxp"; exit 0; }
tgts=$(((n + lpt - 1) / lpt))
vm_stat disks "$n"
vm_kv_str layout "$layout"
vm_kv_str kernel "$(uname -r)"
vm_kv targets "$tgts"

vm_sd_have || { vm_fail "no patched sd_mod (the lean kernel has it in its tree)"; exit 0; }
vm_sd_load layout="$layout" elevator=none || exit 0
vm_iscsi_scale_conf $w/iscsi.conf "$n" "$tgts" 128M "$portal"
vm_sdswarmd $w/iscsi.conf || exit 0
vm_iscsid || exit 0

slab_kib() { awk '$1 == "Slab:" { print $2 }' /proc/meminfo; }
kernfs_kib() { # kernfs_node_cache's objects x size, when slabinfo says
	awk '$1 == "kernfs_node_cache" { printf "%d", $2 * $4 / 1024; f = 1 } END { if (!f) print "-" }' /proc/slabinfo 2>/dev/null || echo -
}
mem0=$(vm_mem_used_kib) slab0=$(slab_kib) kf0=$(kernfs_kib)
t0=$(vm_uptime)
vm_kv boot_to_login_s "$t0"

# The disks so far from the patched driver's count of finished probes
# (each one's disk is in /sys/block by then): one read, where listing
# /sys/block (busybox ls sorts) costs the guest's CPUs more the more
# disks there are, taken from the probes being measured.
disks() { vm_sd_stat probes; }
# The ramp, a line every 30 s (bounded like the run): uptime, disks,
# memory.
(
	i=0
	while [ $i -lt $((tgts * wait_s / 30 + 2)) ]; do
		sleep 30
		i=$((i + 1))
		echo "$(vm_uptime) $(disks) $(vm_mem_used_kib) $(slab_kib)" >>$w/ramp
		echo "sdswarm-vm: ramp: $(tail -1 $w/ramp)"
	done
) &
ramp=$!

# A target's disks are all in when the driver has probed as many.
got() { # COUNT
	[ "$(disks)" -ge "$1" ]
}
printf '%s\n' "target disks seconds mem_kib slab_kib kernfs_kib" >$w/targets
t=0 have=0
while [ $t -lt "$tgts" ]; do
	vm_iscsi_login $portal "iqn.2026-12.org.sdswarm:t$t" || break
	have=$(((t + 1) * lpt))
	[ $have -gt "$n" ] && have=$n
	if ! vm_wait "$wait_s" got "$have"; then
		vm_fail "target t$t: $(vm_sd_count) of $have disks after ${wait_s} s"
		break
	fi
	kf=$(kernfs_kib)
	[ "$kf" = - ] || [ "$kf0" = - ] || kf=$((kf - kf0))
	line="t$t $have $(vm_since "$t0") $(($(vm_mem_used_kib) - mem0)) $(($(slab_kib) - slab0)) $kf"
	echo "$line" >>$w/targets
	echo "sdswarm-vm: quarter-million: $line"
	t=$((t + 1))
done
kill $ramp 2>/dev/null
seen=$(vm_sd_count)
vm_stat seen "$seen"
vm_stat probe_s "$(vm_since "$t0")"
vm_kv boot_to_last_disk_s "$(vm_uptime)"
mem=$(($(vm_mem_used_kib) - mem0))
vm_stat mem_used_kib "$mem"
[ "$seen" -gt 0 ] && vm_kv_str kib_a_disk "$(awk -v m="$mem" -v n="$seen" 'BEGIN { printf "%.1f", m / n }')"
vm_kv_str slab_kib_a_disk "$(awk -v m="$(($(slab_kib) - slab0))" -v n="$seen" 'BEGIN { printf "%.1f", n ? m / n : 0 }')"
sed 's/^/sdswarm-vm: targets: /' $w/targets
rss=$(sdswarm --json status | sed -n 's/.*"rss_bytes":\([0-9]*\).*/\1/p')
vm_kv daemon_rss_kib "$((${rss:-0} / 1024))"
vm_kv_str daemon_cpu_s "$(awk '{ printf "%.1f", ($14 + $15) / 100 }' /proc/"$VM_SDSWARMD_PID"/stat 2>/dev/null)"
for k in probes alloc_ns alloc_max_ns name_ns probe_ns in_use; do
	vm_kv "sd_$k" "$(vm_sd_stat $k)"
done
p=$(vm_sd_stat probes)
[ "${p:-0}" -gt 0 ] &&
	vm_kv_str sd_alloc_ns_a_probe "$(awk -v a="$(vm_sd_stat alloc_ns)" -v p="$p" 'BEGIN { printf "%.0f", a / p }')" &&
	vm_kv_str sd_name_ns_a_probe "$(awk -v a="$(vm_sd_stat name_ns)" -v p="$p" 'BEGIN { printf "%.0f", a / p }')"

# The boundary disks: GPTs of P partitions, then every partition's name
# and dev_t with the disks'.
if [ "$parts" -gt 0 ]; then
	{
		for i in 701 702 18277 18278; do echo $i; done
		[ "$layout" = naive ] && k=1 && while [ $((k * lpt)) -lt "$n" ]; do
			echo $((k * lpt - 1))
			echo $((k * lpt))
			k=$((k + 1))
		done
		echo $((n - 1))
	} | awk -v n="$n" '$1 < n' | sort -n | uniq | sdnum --scheme "$layout" name - >$w/boundary
	{
		echo "label: gpt"
		i=0
		while [ $i -lt "$parts" ]; do echo ",1M"; i=$((i + 1)); done
	} >$w/gpt
	for d in $(cat $w/boundary); do
		[ -e /dev/$d ] || { echo "boundary disk $d not in /dev" >>$w/part-errors; continue; }
		sfdisk -q /dev/$d <$w/gpt >$w/sfdisk.out 2>&1 ||
			echo "sfdisk $d: $(tail -1 $w/sfdisk.out)" >>$w/part-errors
	done
	want=$(($(wc -l <$w/boundary) * parts))
	vm_wait 300 _vm_sd_enough "$seen" "$want" ||
		echo "$(vm_sd_parts) of $want partitions after 300 s" >>$w/part-errors
	vm_kv boundary_disks "$(wc -l <$w/boundary)"
	vm_kv partitions "$(vm_sd_parts)"
fi

# Every disk and partition against sdnum (sysfs and the /dev nodes).
vm_sysfs_names $w
t1=$(vm_uptime)
vm_sd_scheme_check $w "$layout" 0 "$n"
vm_kv check_s "$(vm_since "$t1")"
[ -f $w/part-errors ] && cat $w/part-errors >>$w/mismatches
bad=$(wc -l <$w/mismatches)
vm_stat mismatches "$bad"
vm_kv checked "$(wc -l <$w/kernel)"
vm_kv_str first "$(head -1 $w/kernel)"
vm_kv_str last_disk "$(sdnum --scheme "$layout" name $((n - 1))) $(cat /sys/block/"$(sdnum --scheme "$layout" name $((n - 1)))"/dev 2>/dev/null)"
vm_sdswarmd_alive || vm_fail "sdswarmd died"
if [ "$seen" -ne "$n" ]; then
	vm_fail "$seen of $n disks"
elif [ "$bad" -gt 0 ]; then
	vm_fail "$bad mismatches against sdnum --scheme $layout, first: $(head -1 $w/mismatches)"
fi
vm_pass "$n disks, layout $layout: $(wc -l <$w/kernel) names and dev_t as sdnum says, $(vm_sd_parts) partitions, $(awk -v m="$mem" -v n="$seen" 'BEGIN { printf "%.1f", n ? m / n : 0 }') KiB a disk"
