# SPDX-License-Identifier: MIT
# vm-mem: 1G
# vm-timeout: 1800
# sdmod-alloc: the kernel's index allocators, measured in the kernel.
# 1. Through the patched sd_mod: K scsi_debug disks (sdswarm.disks, default
#    32) are probed once a case, with allocator=ida or bitmap (2.6's, from
#    bit 0) and preoccupy=N for each occupancy N of sdswarm.occupancies
#    (default 256,1024,4096,16384,65536,262144; layout linux): the module's
#    stats give the mean ns of an index allocation and of a whole sd_probe
#    at that occupancy, and every disk must be index N..N+K-1 by sdnum.
# 2. sd_idabench (testhost/sd) fills an ida and a 2.6 bitmap to each of
#    256, 4096, 65536, 262144 and 2^20 ids and churns them at full occupancy
#    (free a random id, allocate it back), in the kernel.
# 3. `sdswarm-bench numbering --quick --kernel-idx FILE` in the same guest:
#    libsdnum's bitmap and tree allocators measured beside the kernel's
#    figures of step 2, one table with ratios (TCG distorts absolute times,
#    not the guest's ratios between them).
# Figures: cases, mismatches; alloc_ns_A_N and probe_us_A_N per allocator A
# and occupancy N (medians of the K probes' cost_log lines;
# alloc_mean_ns_A_N is the stats' mean); kida_fill_ns_N, kida_churn_ns_N,
# kbitmap_fill_ns_N, kbitmap_churn_ns_N; ratio_bitmap_ida_N (sd_probe's
# allocation, 2.6 bitmap / ida, medians). The bench table goes to the
# console and build/vm/logs/sdmod-alloc.log.
# Parameters: sdswarm.disks=K sdswarm.occupancies=N,N,...
#             sdswarm.bench=0 (skip step 3)
. /usr/lib/sdswarm-vm/vm-lib.sh
. /usr/lib/sdswarm-vm/sd-lib.sh

k=$(vm_param disks 32)
occs=$(vm_param occupancies 256,1024,4096,16384,65536,262144 | tr ',' ' ')
bench=$(vm_param bench 1)
vm_stat disks "$k"
case $k in '' | *[!0-9]* | 0) vm_fail "sdswarm.disks=$k is not a count"; exit 0 ;; esac
w=/tmp/sdmod-alloc
mkdir -p $w
vm_sd_load || exit 0
vm_modprobe scsi_debug add_host=1 num_tgts=1 max_luns="$k" delay=0 || exit 0
vm_sd_wait 120 "$k" || exit 0

mean() { # TOTAL COUNT DIVISOR: TOTAL / COUNT / DIVISOR, one decimal
	awk -v t="$1" -v c="$2" -v d="$3" 'BEGIN { if (c > 0) printf "%.1f", t / c / d }'
}
median() { # FILE COLUMN DIVISOR: the median of a column, one decimal
	cut -d' ' -f"$2" "$1" | sort -n |
		awk -v d="$3" '{ v[NR] = $1 } END { if (NR) printf "%.1f", v[int((NR + 1) / 2)] / d }'
}
all_probed() {
	[ "$(vm_sd_stat probes)" -ge "$k" ]
}
cases=0 bad=0
# The median of the K probes' own cost_log lines: under TCG on a shared
# host one probe in a few dozen is preempted for milliseconds, which the
# stats' mean (also shown) carries.
printf '%-8s %9s %13s %13s %13s %12s\n' allocator occupancy "alloc ns med" "alloc ns mean" "alloc max ns" "probe us med" >$w/table
for occ in $occs; do
	for a in ida bitmap; do
		cases=$((cases + 1))
		vm_sd_unload || exit 0
		vm_sd_mark
		vm_sd_load allocator=$a preoccupy="$occ" cost_log=1 || exit 0
		vm_sd_wait 120 "$k" || exit 0
		# The last probe's stats land after its disk appears in sysfs.
		vm_wait 30 all_probed || vm_fail "$a at $occ: stats count $(vm_sd_stat probes) probes"
		p=$(vm_sd_stat probes)
		vm_sd_since_mark | sed -n 's/.*sdswarm: index [0-9]* dev [0-9:]* alloc \([0-9]*\) ns name \([0-9]*\) ns probe \([0-9]*\) ns.*/\1 \2 \3/p' >$w/cost-$a-$occ
		[ "$(wc -l <$w/cost-$a-$occ)" -eq "$k" ] ||
			vm_fail "$a at $occ: $(wc -l <$w/cost-$a-$occ) cost_log lines for $k probes"
		an=$(median $w/cost-$a-$occ 1 1)
		pu=$(median $w/cost-$a-$occ 3 1000)
		vm_kv "alloc_ns_${a}_$occ" "$an"
		vm_kv "alloc_mean_ns_${a}_$occ" "$(mean "$(vm_sd_stat alloc_ns)" "$p" 1)"
		vm_kv "probe_us_${a}_$occ" "$pu"
		printf '%-8s %9s %13s %13s %13s %12s\n' $a "$occ" "$an" "$(mean "$(vm_sd_stat alloc_ns)" "$p" 1)" "$(vm_sd_stat alloc_max_ns)" "$pu" >>$w/table
		mkdir -p $w/$a-$occ
		vm_sd_kernel $w/$a-$occ
		vm_sd_scheme_check $w/$a-$occ linux "$occ" "$k"
		bad=$((bad + VM_SD_BAD))
		eval "an_$a=\$an"
	done
	# shellcheck disable=SC2154 # set by the eval above
	vm_kv "ratio_bitmap_ida_$occ" "$(awk -v b="$an_bitmap" -v i="$an_ida" 'BEGIN { if (i > 0) printf "%.2f", b / i }')"
done
echo "sdswarm-vm: sd_probe's index allocation and the whole probe, $k probes a case:"
sed 's/^/sdswarm-vm:   /' $w/table
vm_stat cases "$cases"
vm_stat mismatches "$bad"

# sd_idabench: the allocators alone, in this kernel.
vm_sd_mark
t0=$(vm_uptime)
if ! err=$(insmod "$VM_SD_BENCH_KO" 2>&1); then
	vm_fail "insmod sd_idabench: $err; $(dmesg | tail -1)"
	exit 0
fi
vm_kv idabench_s "$(vm_since "$t0")"
rmmod sd_idabench
vm_sd_since_mark | grep -o 'sd_idabench: n=.*' >$w/kernel-idx
[ -s $w/kernel-idx ] || { vm_fail "sd_idabench printed nothing"; exit 0; }
echo "sdswarm-vm: in-kernel allocators (ns per fill alloc, ns per churn free+alloc):"
sed 's/^/sdswarm-vm:   /' $w/kernel-idx
while read -r _ n f_ida c_ida f_bm c_bm; do
	n=${n#n=}
	vm_kv "kida_fill_ns_$n" "${f_ida#*=}"
	vm_kv "kida_churn_ns_$n" "${c_ida#*=}"
	vm_kv "kbitmap_fill_ns_$n" "${f_bm#*=}"
	vm_kv "kbitmap_churn_ns_$n" "${c_bm#*=}"
done <$w/kernel-idx

if [ "$bench" = 1 ]; then
	if ! command -v sdswarm-bench >/dev/null; then
		vm_fail "no sdswarm-bench in the image: make, then sdswarm-testhost build"
	elif ! sdswarm-bench numbering --quick --kernel-idx $w/kernel-idx >$w/bench.txt 2>$w/bench.err; then
		vm_fail "sdswarm-bench numbering --kernel-idx: $(tail -2 $w/bench.err | tr '\n' ' ')"
	else
		echo "sdswarm-vm: sdswarm-bench numbering --quick --kernel-idx (idx rows):"
		grep -i -e '^ *idx\|kernel\|ratio' $w/bench.txt | sed 's/^/sdswarm-vm:   /'
	fi
fi
if [ "$bad" -gt 0 ]; then
	vm_fail "$bad disks not at the index sdnum predicts after preoccupy, first: $(cat $w/*/mismatches | head -1)"
fi
vm_pass "$cases allocator cases, every disk at index N.. as predicted; in-kernel ida and bitmap measured"
