# SPDX-License-Identifier: MIT
# vm-mem: 4G
# vm-all: no
# vm-timeout: 5400
# addcost: what adding one SCSI disk costs against the number of SCSI
# devices already present. scsi_debug hosts of S LUNs (sdswarm.step,
# default 1000) are added one after another up to N disks
# (sdswarm.disks, default 16000), each host's S disks timed from the
# add_host write to the last of them in /sys/block (sd_mod with
# elevator=none where the patched one is there, so no I/O scheduler's
# request pool is made; boot with debugfs=off for the same reason).
# On sdswarm's lean kernel sdswarm.glue=walk|name picks how a class
# device finds its parent's glue directory (glue-dirs-6.12.patch:
# sdswarm_glue_walk): walk is the stock kernel's list walk, name the
# patch's lookup; on Debian's kernels the walk is all there is (glue
# "stock").
# Figures: one line a host ("present N: S disks in T s, M ms a disk"),
# the cost a disk of the first and last host, their ratio, the slope of
# the cost a disk against N (us per device present: a straight line is a
# walk over every device) and the exponent k of the total time T(N) ~ N^k
# fitted over the hosts (1 when flat, towards 2 when each add walks all).
# The verdict is PASS when every disk came; the figures are the result.
. /usr/lib/sdswarm-vm/vm-lib.sh
. /usr/lib/sdswarm-vm/sd-lib.sh

n=$(vm_param disks 16000)
step=$(vm_param step 1000)
glue=$(vm_param glue name)
wait_s=$(vm_param wait 900)
for v in "$n" "$step" "$wait_s"; do
	case $v in '' | *[!0-9]* | 0) vm_fail "addcost: '$v' is not a count"; exit 0 ;; esac
done
[ "$step" -le 16384 ] || { vm_fail "sdswarm.step=$step: scsi_debug takes at most 16384 LUNs a target"; exit 0; }
[ $((n % step)) -eq 0 ] || { vm_fail "sdswarm.disks=$n is not a multiple of sdswarm.step=$step"; exit 0; }

knob=/sys/module/kernel/parameters/sdswarm_glue_walk
if [ -f $knob ]; then
	case $glue in
	walk) echo 1 >$knob ;;
	name) echo 0 >$knob ;;
	*) vm_fail "sdswarm.glue=$glue: walk or name"; exit 0 ;;
	esac
else
	glue=stock
fi
vm_kv_str glue "$glue"
vm_kv_str kernel "$(uname -r)"
if ! grep -qw debugfs /proc/filesystems; then
	vm_kv_str debugfs absent
elif grep -qw 'debugfs=off' /proc/cmdline; then
	vm_kv_str debugfs off
else
	vm_kv_str debugfs on
fi

if vm_sd_have && vm_sd_knows naive; then
	if modinfo -F parm sd_mod 2>/dev/null | grep -q '^elevator:' ||
		modinfo -F parm "$VM_SD_KO" 2>/dev/null | grep -q '^elevator:'; then
		vm_sd_load elevator=none || exit 0
	else
		vm_sd_load || exit 0
	fi
else
	vm_modprobe sd_mod || exit 0
fi
vm_kv_str sd_elevator "$(cat /sys/module/sd_mod/parameters/elevator 2>/dev/null || echo default)"

# scsi_debug with no host; each add_host write adds one of S LUNs.
vm_modprobe scsi_debug add_host=0 num_tgts=1 max_luns="$step" delay=0 dev_size_mb=1 || exit 0
add=/sys/bus/pseudo/drivers/scsi_debug/add_host
count() { ls /sys/block | grep -c '^sd'; }
w=/tmp/addcost
mkdir -p $w
: >$w/steps
mem0=$(vm_mem_used_kib)
t_all=$(vm_uptime)
have=0
while [ "$have" -lt "$n" ]; do
	want=$((have + step))
	last=$(sdnum name $((want - 1)))
	t0=$(vm_uptime)
	echo 1 >$add
	got_last() { [ -e "/sys/block/$last" ]; }
	got_all() { [ "$(count)" -ge "$want" ]; }
	if ! vm_wait "$wait_s" got_last || ! vm_wait 60 got_all; then
		vm_fail "addcost: $(count) of $want disks after ${wait_s} s"
		break
	fi
	t=$(vm_since "$t0")
	echo "$have $step $t" >>$w/steps
	echo "sdswarm-vm: addcost: present $have: $step disks in $t s, $(awk -v t="$t" -v s="$step" 'BEGIN { printf "%.2f", t * 1000 / s }') ms a disk"
	have=$want
done
vm_stat seen "$(count)"
vm_stat probe_s "$(vm_since "$t_all")"
vm_stat mem_used_kib "$(($(vm_mem_used_kib) - mem0))"
[ "$have" -gt 0 ] && vm_kv mem_kib_a_disk "$((($(vm_mem_used_kib) - mem0) / have))"

# The fits, over the hosts (fit.awk): ms a disk = a + b * present (least
# squares, at each host's midpoint), and T(N) ~ N^k over the running totals.
fits="- - - - -"
if [ "$(wc -l <$w/steps)" -ge 2 ]; then
	line=$(awk '{ print $1 + $2 / 2, $3 * 1000 / $2 }' $w/steps | awk -f /usr/lib/sdswarm-vm/fit.awk)
	expo=$(awk '{ tot += $3; print $1 + $2, tot }' $w/steps | awk -f /usr/lib/sdswarm-vm/fit.awk)
	fits=$(awk -v line="$line" -v expo="$expo" '
		NR == 1 { first = $3 * 1000 / $2 } { lastv = $3 * 1000 / $2 }
		END { split(line, l, " "); split(expo, e, " ")
			printf "%.2f %.2f %.2f %.3f %.2f\n", first, lastv, lastv / first, l[5] * 1000, e[2] }' $w/steps)
fi
set -- $fits
vm_kv_str ms_a_disk_first "$1"
vm_kv_str ms_a_disk_last "$2"
vm_kv_str growth_last_over_first "$3"
vm_kv_str slope_us_per_device "$4"
vm_kv_str exponent "$5"
echo "sdswarm-vm: addcost: glue $glue: $1 ms a disk at first, $2 at the last host (x$3), slope $4 us a device present, T(N) ~ N^$5"
vm_pass "glue $glue: $1 -> $2 ms a disk over $have disks (x$3), T(N) ~ N^$5"
