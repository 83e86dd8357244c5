# SPDX-License-Identifier: MIT
# vm-mem: 1536M
# vm-timeout: 600
# openall-dev: `sdswarm-bench open-all` over the block device nodes of the
# guest's kernel: open, read the first 4 KiB, close, for every disk and
# partition, through io_uring and through a plain open/pread/close loop.
# Measured in one boot for N disks with P MBR partitions each
# (sdswarm.disks, default 300; sdswarm.parts, default 2) of
#   scsi_debug   the in-kernel reference (delay=0: no wire, no daemon)
#   sdswarm      sdswarmd's LUNs over iSCSI on the guest's loopback
#   tcmu         sdswarmd's LUNs as TCMU user backstores through tcm_loop,
#                when the sdswarmd in the image accepts a [tcmu] section
#                (else the scenario says why it was not measured)
# Each set's nodes are made (mknod, same dev_t) in a tmpfs folder of its
# own, so open-all's readdir sees one set; the last close of a block device
# drops its page cache, so every pass reads from the device.
# Figures: disks (per set), seen, mismatches (names/dev_t of every disk and
# partition against sdnum), open_rate (io_uring, sdswarm over iSCSI, nodes
# a second), sdebug_rate, rate_ratio (sdswarm / scsi_debug), sync rates,
# tcmu_rate when measured.
# Parameters: sdswarm.disks=N sdswarm.parts=P sdswarm.reps=R (default 3)
. /usr/lib/sdswarm-vm/vm-lib.sh

n=$(vm_param disks 300)
parts=$(vm_param parts 2)
reps=$(vm_param reps 3)
wait_s=$(vm_param wait 400)
portal=127.0.0.1:3260
iqn=iqn.2026-12.org.sdswarm:t0
vm_stat disks "$n"
case $n in '' | *[!0-9]* | 0) vm_fail "sdswarm.disks=$n is not a count"; exit 0 ;; esac
[ "$parts" -le 15 ] || { vm_fail "sdswarm.parts=$parts: at most 15"; exit 0; }
[ "$n" -le 16384 ] || { vm_fail "sdswarm.disks=$n: at most 16384 here"; exit 0; }
w=/tmp/openall
mkdir -p $w
command -v sdswarm-bench >/dev/null || { vm_fail "no sdswarm-bench in the image: make, then sdswarm-testhost build"; exit 0; }

# set_nodes VENDOR DIR: mknod every disk and partition whose disk's vendor
# is VENDOR into DIR, under the kernel's own names.
set_nodes() {
	local d p mm
	mkdir -p "$2"
	for d in $(ls /sys/block | grep '^sd'); do
		[ "$(cat /sys/block/$d/device/vendor 2>/dev/null | tr -d ' ')" = "$1" ] || continue
		for p in /sys/block/$d /sys/block/$d/$d*; do
			[ -f "$p/dev" ] || continue
			mm=$(cat "$p/dev")
			mknod "$2/${p##*/}" b "${mm%:*}" "${mm#*:}"
		done
	done
	ls "$2" | wc -l
}
# rate DIR CASE-PREFIX: ops_per_s of that case in open-all's JSON in DIR.json
rate() {
	awk -v c="$2" '/"case":/ { hit = index($0, "\"" c) > 0 }
		hit && /"ops_per_s":/ { gsub(/[^0-9.]/, "", $2); print $2; exit }' "$1"
}
openall() { # NAME DIR: run open-all, record NAME_rate and NAME_sync_rate
	local out=$w/$1.json
	if ! sdswarm-bench open-all "$2" --reps "$reps" --json >"$out" 2>$w/$1.err; then
		vm_fail "open-all over $1's nodes failed: $(tail -2 $w/$1.err | tr '\n' ' ')"
	fi
	r=$(rate "$out" io_uring)
	s=$(rate "$out" sync)
	echo "sdswarm-vm: open-all $1: $(ls "$2" | wc -l) nodes, io_uring $r/s, sync $s/s, median ns a node: $(awk '/"median_ns_per_op":/ { gsub(/[^0-9.]/, "", $2); printf "%s ", $2 }' "$out")"
	eval "${1}_rate=\$r ${1}_sync=\$s"
}

vm_modprobe sd_mod || exit 0
mem0=$(vm_mem_used_kib)
t0=$(vm_uptime)
vm_modprobe scsi_debug add_host=1 num_tgts=1 max_luns="$n" delay=0 num_parts="$parts" || exit 0
vm_wait_sd "$wait_s" "$n" $((n * parts)) ||
	vm_fail "scsi_debug: $(vm_sd_count) of $n disks, $(vm_sd_parts) partitions"
vm_kv sdebug_probe_s "$(vm_since "$t0")"
vm_kv sdebug_mem_kib "$(($(vm_mem_used_kib) - mem0))"

cat >$w/sdswarm.conf <<EOF
# vm openall-dev: $n LUNs with $parts MBR partitions, over iSCSI
[target]
seed = 5
max_luns = 16384
[luns]
count = $n
size = 1G
partitions = $parts
ptable = mbr
[store]
type = mem
[iscsi]
enabled = yes
portal = $portal
targets = 1
threads = 2
EOF
vm_iscsi_up $w/sdswarm.conf $portal $iqn || exit 0
mem0=$VM_LOGIN_MEM0
t0=$VM_LOGIN_T0
vm_wait_sd "$wait_s" $((2 * n)) $((2 * n * parts)) ||
	vm_fail "with iSCSI: $(vm_sd_count) of $((2 * n)) disks, $(vm_sd_parts) partitions"
vm_stat probe_s "$(vm_since "$t0")"
vm_stat mem_used_kib "$(($(vm_mem_used_kib) - mem0))"
vm_stat seen "$(vm_sd_count)"

# Every name and dev_t of both sets, against sdnum.
vm_sysfs_names $w
vm_names_check $w $((2 * n))
vm_stat mismatches "$(wc -l <$w/mismatches)"

sd_nodes=$(set_nodes Linux $w/sdebug)
sw_nodes=$(set_nodes SDSWARM $w/sdswarm)
vm_kv nodes "$sw_nodes"
[ "$sd_nodes" -eq $((n * (parts + 1))) ] || vm_fail "scsi_debug set: $sd_nodes nodes, want $((n * (parts + 1)))"
[ "$sw_nodes" -eq $((n * (parts + 1))) ] || vm_fail "sdswarm set: $sw_nodes nodes, want $((n * (parts + 1)))"

# scsi_debug before and after sdswarm, the better kept: whatever the first
# run over fresh nodes pays (dentries, the first io_uring set-up) must not
# count against the reference.
openall sdebug $w/sdebug
openall sdswarm $w/sdswarm
first_sdebug=$sdebug_rate first_sdebug_sync=$sdebug_sync
openall sdebug $w/sdebug
vm_kv sdebug_rate_first "$first_sdebug"
sdebug_rate=$(awk -v a="$first_sdebug" -v b="$sdebug_rate" 'BEGIN { print (a > b ? a : b) }')
sdebug_sync=$(awk -v a="$first_sdebug_sync" -v b="$sdebug_sync" 'BEGIN { print (a > b ? a : b) }')
vm_stat open_rate "$sdswarm_rate"
vm_stat sdebug_rate "$sdebug_rate"
vm_kv sync_rate "$sdswarm_sync"
vm_kv sdebug_sync_rate "$sdebug_sync"
ratio=$(awk -v a="$sdswarm_rate" -v b="$sdebug_rate" 'BEGIN { if (b > 0) printf "%.3f", a / b }')
vm_stat rate_ratio "$ratio"
vm_kv sync_ratio "$(awk -v a="$sdswarm_sync" -v b="$sdebug_sync" 'BEGIN { if (b > 0) printf "%.3f", a / b }')"

# TCMU, when this sdswarmd has the front end.
cat >$w/tcmu.conf <<EOF
# vm openall-dev: the same LUNs as TCMU user backstores
[target]
seed = 6
control = /run/sdswarm/tcmu
[luns]
count = $n
size = 1G
partitions = $parts
ptable = mbr
[store]
type = mem
[tcmu]
enabled = yes
EOF
VM_SDSWARMD_PID_ISCSI=$VM_SDSWARMD_PID
if ! why=$(sdswarmd --config $w/tcmu.conf --check 2>&1); then
	vm_kv_str tcmu "not measured: sdswarmd --check rejects [tcmu]: $(echo "$why" | tail -1)"
	echo "sdswarm-vm: TCMU not measured: this sdswarmd does not accept [tcmu] ($(echo "$why" | tail -1))"
elif ! modprobe target_core_user 2>/dev/null || ! modprobe tcm_loop 2>/dev/null; then
	vm_kv_str tcmu "not measured: target_core_user or tcm_loop will not load"
else
	grep -q ' /sys/kernel/config configfs' /proc/mounts ||
		mount -t configfs configfs /sys/kernel/config
	before=$(vm_sd_count)
	t0=$(vm_uptime)
	# A config parser that knows [tcmu] is not yet a front end: the
	# first user backstore in configfs within 30 s says there is one.
	backstore() { ls -d /sys/kernel/config/target/core/user_*/* 2>/dev/null | grep -q .; }
	if ! vm_sdswarmd $w/tcmu.conf; then
		vm_kv_str tcmu "not measured: sdswarmd with [tcmu] did not start"
	elif ! vm_wait 30 backstore; then
		vm_kv_str tcmu "not measured: sdswarmd accepts [tcmu] but made no user backstore in 30 s (no TCMU front end in this build)"
		echo "sdswarm-vm: TCMU not measured: sdswarmd accepts [tcmu] but made no user backstore in 30 s"
		kill "$VM_SDSWARMD_PID" 2>/dev/null
	elif vm_wait_sd "$wait_s" $((before + n)) $((3 * n * parts)); then
		vm_kv tcmu_probe_s "$(vm_since "$t0")"
		set_nodes SDSWARM $w/tcmu-all >/dev/null
		# The iSCSI set's nodes are in $w/sdswarm: what is left is TCMU's.
		mkdir -p $w/tcmu
		for f in $(ls $w/tcmu-all); do
			[ -e "$w/sdswarm/$f" ] || mv "$w/tcmu-all/$f" $w/tcmu/
		done
		openall tcmu $w/tcmu
		vm_stat tcmu_rate "$tcmu_rate"
		vm_kv tcmu_ratio "$(awk -v a="$tcmu_rate" -v b="$sdebug_rate" 'BEGIN { if (b > 0) printf "%.3f", a / b }')"
		vm_kv_str tcmu "measured: $(ls $w/tcmu | wc -l) nodes"
		kill "$VM_SDSWARMD_PID" 2>/dev/null
	else
		vm_fail "TCMU: $n disks did not appear within ${wait_s}s"
		vm_kv_str tcmu "not measured: TCMU disks did not appear ($(vm_sd_count) disks; $(tail -2 /tmp/sdswarmd.log | tr '\n' ' '))"
	fi
fi

# A starved guest can miss iscsid's NOP-Out deadline (5 s): the session
# then recovers, and every command waits for it. Counted, so a slow run
# says why.
vm_kv iscsi_conn_errors "$(dmesg | grep -c 'detected conn error')"
VM_SDSWARMD_PID=$VM_SDSWARMD_PID_ISCSI
vm_sdswarmd_alive || vm_fail "sdswarmd (iSCSI) died: $(tail -3 /tmp/sdswarmd.log | tr '\n' ' ')"
bad=$(wc -l <$w/mismatches)
if [ "$bad" -gt 0 ]; then
	head -10 $w/mismatches | sed 's/^/sdswarm-vm: mismatch: /'
	vm_fail "$bad name/dev_t mismatch(es), first: $(head -1 $w/mismatches)"
else
	vm_pass "open-all: sdswarm/iSCSI $sdswarm_rate/s, scsi_debug $sdebug_rate/s (ratio $ratio)"
fi
iscsiadm -m node -u >/dev/null 2>&1
