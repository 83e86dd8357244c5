# SPDX-License-Identifier: MIT
# vm-mem: 1G
# vm-timeout: 600
# sdmod-stock: sdswarm's patched sd_mod with no parameters is the stock
# driver. scsi_debug makes N disks (sdswarm.disks, default 300) with P
# partitions (sdswarm.parts, default 2); Debian's sd_mod names them, the
# list "NAME MAJ:MIN" of every disk and partition is kept; then sd_mod is
# removed, bad parameters are tried (each must refuse the load with one
# "sd_mod: ..." dmesg line and leave no sd_mod, no sd major in
# /proc/devices), and the patched module is loaded with none: the list must
# be the same, name for name and dev_t for dev_t, and equal `sdnum` (scheme
# linux) for 0..N-1. The patched module must taint the kernel as an
# unsigned out-of-tree module (O and E: 4096 + 8192) and count N probes in
# its stats.
# Figures: disks, seen, mismatches (stock vs patched, and vs sdnum),
# bad_params_refused, tainted, probe_s (stock, patched), alloc_ns and
# name_ns (mean per probe), probe_ns (mean).
# Parameters: sdswarm.disks=N sdswarm.parts=P
. /usr/lib/sdswarm-vm/vm-lib.sh
. /usr/lib/sdswarm-vm/sd-lib.sh

n=$(vm_param disks 300)
parts=$(vm_param parts 2)
vm_stat disks "$n"
vm_kv parts "$parts"
case $n in '' | *[!0-9]* | 0) vm_fail "sdswarm.disks=$n is not a count"; exit 0 ;; esac
[ "$n" -le 16384 ] || { vm_fail "sdswarm.disks=$n: at most 16384 (one scsi_debug target)"; exit 0; }
[ "$parts" -le 4 ] || { vm_fail "sdswarm.parts=$parts: scsi_debug makes at most 4"; exit 0; }
vm_sd_have || { vm_fail "no patched sd_mod in the image (see build/vm/logs/sd-module.log)"; exit 0; }
w=/tmp/sdmod-stock
mkdir -p $w/stock $w/patched

# Stock first.
vm_modprobe sd_mod || exit 0
t0=$(vm_uptime)
set -- add_host=1 num_tgts=1 max_luns="$n" delay=0
[ "$parts" -gt 0 ] && set -- "$@" num_parts="$parts"
vm_modprobe scsi_debug "$@" || exit 0
vm_sd_wait 300 "$n" $((n * parts)) || exit 0
vm_kv probe_stock_s "$(vm_since "$t0")"
vm_sd_kernel $w/stock
tainted0=$(cat /proc/sys/kernel/tainted)
vm_sd_unload || exit 0

# Bad parameters: refused with one clear line, nothing left behind.
refused=0
bad() { # WANT-IN-DMESG PARAM...
	local want=$1 after
	shift
	vm_sd_mark
	if insmod "$VM_SD_KO" "$@" 2>/dev/null; then
		vm_fail "insmod sd_mod $* loaded"
		rmmod sd_mod
		return
	fi
	# The new sd_mod lines but the taint notices of the first unsigned
	# load, timestamps cut. (kmod's insmod here makes the kernel run a
	# failing init twice, 0.1 s apart: the same line may come twice.)
	after=$(vm_sd_since_mark | grep 'sd_mod' | grep -v 'taint' |
		sed 's/^\[[^]]*\] //' | uniq)
	if [ -d /sys/module/sd_mod ]; then
		vm_fail "insmod sd_mod $* failed but left /sys/module/sd_mod"
	elif grep -q ' sd$' /proc/devices; then
		vm_fail "insmod sd_mod $* failed but left an sd major in /proc/devices"
	elif [ "$(echo "$after" | grep -c .)" -ne 1 ] || ! echo "$after" | grep -q "$want"; then
		vm_fail "insmod sd_mod $*: want one dmesg line with '$want', got: $after"
	else
		echo "sdswarm-vm: refused: $* -> $after"
		refused=$((refused + 1))
	fi
}
vm_sd_deps || { vm_fail "cannot load sd_mod's dependencies"; exit 0; }
bad "layout=wilcox: unknown" layout=wilcox
bad "allocator=tree: unknown" allocator=tree
bad "first_index=1048576 does not fit layout linux" first_index=1048576
bad "first_index=262144 does not fit layout naive" layout=naive first_index=262144
bad "first_index=256 does not fit layout legacy" layout=legacy first_index=256
bad "preoccupy=262145 is more than layout naive" layout=naive preoccupy=262145
bad "invalid for parameter .first_index" first_index=-1
vm_stat bad_params_refused "$refused"
[ "$refused" -eq 7 ] || vm_fail "$refused of 7 bad parameter sets refused"

# The patched module, no parameters.
t0=$(vm_uptime)
vm_sd_load || exit 0
vm_sd_wait 300 "$n" $((n * parts)) || exit 0
vm_kv probe_patched_s "$(vm_since "$t0")"
vm_stat seen "$(vm_sd_count)"
vm_sd_kernel $w/patched
tainted=$(cat /proc/sys/kernel/tainted)
vm_stat tainted "$tainted"
echo "sdswarm-vm: tainted $tainted0 before, $tainted with the patched sd_mod; $(dmesg | grep -m1 -e 'verification failed' -e 'out-of-tree' | sed 's/^\[[^]]*\] //')"
[ $((tainted & 12288)) -eq 12288 ] ||
	vm_fail "tainted=$tainted: want the O (4096) and E (8192) bits of an unsigned out-of-tree module"
[ "$(cat /sys/module/sd_mod/parameters/layout)" = linux ] ||
	vm_fail "default layout is $(cat /sys/module/sd_mod/parameters/layout), not linux"

diff $w/stock/kernel $w/patched/kernel >$w/diff
differ=$(grep -c '^[-+][^-+]' $w/diff)
vm_kv stock_vs_patched "$differ"
[ "$differ" -eq 0 ] || { head -5 $w/diff | sed 's/^/sdswarm-vm: stock vs patched: /'; vm_fail "$differ lines differ between the stock and the patched sd_mod"; }
vm_sd_scheme_check $w/patched linux 0 "$n"
vm_stat mismatches $((VM_SD_BAD + differ))
vm_kv checked "$(wc -l <$w/patched/kernel)"

probes=$(vm_sd_stat probes)
vm_kv probes "$probes"
[ "$probes" -eq "$n" ] || vm_fail "stats count $probes probes for $n disks"
vm_stat alloc_ns "$(awk -v a="$(vm_sd_stat alloc_ns)" -v p="$probes" 'BEGIN { if (p) printf "%.0f", a / p }')"
vm_stat name_ns "$(awk -v a="$(vm_sd_stat name_ns)" -v p="$probes" 'BEGIN { if (p) printf "%.0f", a / p }')"
vm_kv probe_ns "$(awk -v a="$(vm_sd_stat probe_ns)" -v p="$probes" 'BEGIN { if (p) printf "%.0f", a / p }')"
echo "sdswarm-vm: stats: $(cat /sys/module/sd_mod/parameters/stats)"

if [ "$VM_SD_BAD" -gt 0 ]; then
	vm_fail "$VM_SD_BAD mismatch(es) against sdnum, first: $(head -1 $w/mismatches)"
fi
vm_pass "the patched sd_mod with no parameters named $(wc -l <$w/patched/kernel) disks and partitions as the stock one and sdnum"
