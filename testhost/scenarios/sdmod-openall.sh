# SPDX-License-Identifier: MIT
# vm-mem: 1G
# vm-timeout: 1200
# sdmod-openall: what a layout costs the kernel's dev_t lookup. N scsi_debug
# disks (sdswarm.disks, default 300) with P MBR partitions (sdswarm.parts,
# default 2, scsi_debug's num_parts) are probed by the patched sd_mod under
# layout=linux, then naive, then linux again (so drift shows); each time
# every disk and partition is checked against `sdnum --scheme` of that
# layout, its nodes are mknod'ed into a tmpfs folder and `sdswarm-bench
# open-all DIR --reps R --json` opens, reads 4 KiB and closes each one,
# through io_uring and a plain loop. The figure is nodes a second and the
# ratio naive / linux (the mean of the two linux runs): the same disks and
# the same partitions, only their dev_t differ.
# Figures: disks, nodes, mismatches, linux_rate, naive_rate, linux2_rate,
# open_rate (naive), rate_ratio (naive / linux), the sync (plain loop)
# rates and sync_ratio.
# Parameters: sdswarm.disks=N sdswarm.parts=P (at most 4) sdswarm.reps=R (3)
. /usr/lib/sdswarm-vm/vm-lib.sh
. /usr/lib/sdswarm-vm/sd-lib.sh

n=$(vm_param disks 300)
parts=$(vm_param parts 2)
reps=$(vm_param reps 3)
vm_stat disks "$n"
case $n in '' | *[!0-9]* | 0) vm_fail "sdswarm.disks=$n is not a count"; exit 0 ;; esac
[ "$n" -le 16384 ] || { vm_fail "sdswarm.disks=$n: at most 16384"; exit 0; }
[ "$parts" -le 4 ] || { vm_fail "sdswarm.parts=$parts: scsi_debug makes at most 4"; exit 0; }
command -v sdswarm-bench >/dev/null || { vm_fail "no sdswarm-bench in the image: make, then sdswarm-testhost build"; exit 0; }
w=/tmp/sdmod-openall
mkdir -p $w

vm_sd_load || exit 0
set -- add_host=1 num_tgts=1 max_luns="$n" delay=0
[ "$parts" -gt 0 ] && set -- "$@" num_parts="$parts"
vm_modprobe scsi_debug "$@" || exit 0
vm_sd_wait 300 "$n" $((n * parts)) || exit 0

rate() { # JSON CASE-PREFIX: ops_per_s of that case
	awk -v c="$2" '/"case":/ { hit = index($0, "\"" c) > 0 }
		hit && /"ops_per_s":/ { gsub(/[^0-9.]/, "", $2); print $2; exit }' "$1"
}
bad=0
run() { # NAME LAYOUT: reload under LAYOUT, check, open-all its nodes
	local name=$1 layout=$2 d=$w/$1 r s
	vm_sd_unload || return 1
	vm_sd_load layout="$layout" || return 1
	vm_sd_wait 300 "$n" $((n * parts)) || return 1
	mkdir -p "$d/nodes"
	vm_sd_kernel "$d"
	vm_sd_scheme_check "$d" "$layout" 0 "$n"
	bad=$((bad + VM_SD_BAD))
	while read -r nm mm; do
		mknod "$d/nodes/$nm" b "${mm%:*}" "${mm#*:}"
	done <"$d/kernel"
	if ! sdswarm-bench open-all "$d/nodes" --reps "$reps" --json >"$d/oa.json" 2>"$d/oa.err"; then
		vm_fail "open-all under $layout: $(tail -2 "$d/oa.err" | tr '\n' ' ')"
		return 1
	fi
	r=$(rate "$d/oa.json" io_uring)
	s=$(rate "$d/oa.json" sync)
	vm_kv "${name}_rate" "$r"
	vm_kv "${name}_sync_rate" "$s"
	echo "sdswarm-vm: open-all $name ($layout): $(ls "$d/nodes" | wc -l) nodes, io_uring $r/s, sync $s/s"
	eval "${name}_r=\$r ${name}_s=\$s"
}
run linux linux || exit 0
run naive naive || exit 0
run linux2 linux || exit 0
vm_kv nodes "$(wc -l <$w/naive/kernel)"
vm_stat mismatches "$bad"
# shellcheck disable=SC2154 # set by run's eval
vm_stat open_rate "$naive_r"
ratio=$(awk -v a="$naive_r" -v b="$linux_r" -v c="$linux2_r" 'BEGIN { if (b + c > 0) printf "%.3f", 2 * a / (b + c) }')
vm_stat rate_ratio "$ratio"
vm_kv sync_ratio "$(awk -v a="$naive_s" -v b="$linux_s" -v c="$linux2_s" 'BEGIN { if (b + c > 0) printf "%.3f", 2 * a / (b + c) }')"
vm_kv linux_drift "$(awk -v b="$linux_r" -v c="$linux2_r" 'BEGIN { if (b > 0) printf "%.3f", c / b }')"
if [ "$bad" -gt 0 ]; then
	vm_fail "$bad mismatch(es) against sdnum"
else
	vm_pass "open-all: naive $naive_r/s, linux $linux_r/s then $linux2_r/s (ratio naive/linux $ratio)"
fi
