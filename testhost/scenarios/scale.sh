# SPDX-License-Identifier: MIT
# vm-mem: 14G
# vm-all: no
# vm-timeout: 7200
# scale: as many disks as fit, past 18,278 so that the kernel's names reach
# sdaaaa (sdswarm.disks, default 18279). In one boot, one after the other
# (sdswarm.sets, default iscsi,sdebug,tcmu,runner):
#   sdebug  scsi_debug makes N disks (the fewest equal targets of at most
#           16384 LUNs: 18279 is 3 x 6093)
#   iscsi   sdswarmd serves N LUNs over iSCSI on the guest's loopback, as
#           targets of at most 16384 (t0, t1, ...), logged in one after the
#           other so the sync scan keeps LUN order
#   tcmu    sdswarmd's TCMU front end (when this sdswarmd has one: the
#           first user backstore in configfs within 30 s says so), with
#           sdswarm.tcmu_disks LUNs: by default N, or as many as the
#           guest's free memory holds at 1,600 KiB a disk less 512 MiB
#           when that is fewer (6.1's smallest command ring is 1 MiB of
#           vmalloc'd kernel memory a device, so a 14 GiB guest holds
#           about 8,400 TCMU disks, not 18,279)
#   runner  tcmu-runner (no D-Bus daemon in the guest: it serves anyway,
#           only its D-Bus interface is missing) with its file_zbc
#           handler, sdswarm.runner_luns user
#           backstores (default 256): its threads and resident memory per
#           backstore, no disks (the backstores are not exported)
# For each disk set: the probe time (login or modprobe to the last disk in
# sysfs), the guest memory per disk (MemTotal - MemAvailable, after minus
# before, less the daemon's own resident memory), the names against
# sdnum's 0..N-1 (all of them), and names and dev_t of a sample against
# sdnum: both sides of every name-length boundary (sdz/sdaa, sdzz/sdaaa,
# sdzzz/sdaaaa), of 256, of each 16384-LUN target, and every 1000th disk.
# The sets stay in place one after the other when they fit together
# (removing 18,279 disks costs the kernel about as long as adding them):
# the first set's disks are sda.. (indices 0..N-1), the next set's N..2N-1,
# and so on; each set's memory is its own delta. But the 6.1 kernel has at
# most 32,768 bsg devices, one per SCSI device (BSG_MAX_DEVS: past it "bsg:
# too many bsg devices" and the scan stops): when the sets would pass that
# together, each is removed (rmmod, logout) before the next, and each then
# starts at sda. sdswarm.remove=1 or 0 forces either.
# This is for `make test-vm` (no tests/vm-smoke wrapper, so `make test`
# does not run it): under TCG on 2 cores the default run takes most of an
# hour and a 14G guest.
# Figures: disks, seen (the last set's), mismatches (all sets), probe_s and
# mem_used_kib (the iSCSI set's, else the last), and per set S: S_probe_s,
# S_kib_per_disk, S_seen; runner_threads, runner_kib_per_lun.
# Parameters: sdswarm.disks=N sdswarm.sets=LIST sdswarm.runner_luns=M
# sdswarm.tcmu_disks=T sdswarm.wait=SECONDS (per set, default 3000)
. /usr/lib/sdswarm-vm/vm-lib.sh

n=$(vm_param disks 18279)
sets=$(vm_param sets iscsi,sdebug,tcmu,runner)
runner_luns=$(vm_param runner_luns 256)
remove=$(vm_param remove auto)
base=0
wait_s=$(vm_param wait 3000)
portal=127.0.0.1:3260
vm_stat disks "$n"
case $n in '' | *[!0-9]* | 0) vm_fail "sdswarm.disks=$n is not a count"; exit 0 ;; esac
# TCMU disks the guest's free memory holds (see above), at most n
tcmu_fit() {
	awk -v n="$n" '$1 == "MemAvailable:" {
		f = int(($2 - 524288) / 1600); if (f > n) f = n; print (f > 0 ? f : 0) }' /proc/meminfo
}
tcmu_auto=$(vm_param tcmu_disks auto)
tcmu_n=$tcmu_auto
[ "$tcmu_n" = auto ] && tcmu_n=$(tcmu_fit)
case $tcmu_n in '' | *[!0-9]* | 0) vm_fail "sdswarm.tcmu_disks=$tcmu_n is not a count"; exit 0 ;; esac
vm_kv tcmu_disks "$tcmu_n"
if [ "$remove" = auto ]; then
	k=0
	for s in $(echo "$sets" | tr , ' '); do
		case $s in iscsi | sdebug) k=$((k + n)) ;; tcmu) k=$((k + tcmu_n)) ;; esac
	done
	remove=0
	[ "$k" -le 32768 ] || remove=1
fi
vm_kv remove "$remove"
w=/tmp/scale
mkdir -p $w
: >$w/all-mismatches
tgts=$(((n + 16383) / 16384))
cfs=/sys/kernel/config

# The sample: both sides of each name-length boundary, of 256 and of each
# 16384-LUN target (absolute indices, kept when inside a set), and every
# 1000th disk of a set and its last (relative to the set's first).
for i in 0 1 25 26 255 256 701 702 18277 18278 475253 475254; do echo $i; done >$w/sample.abs
t=1
while [ $t -lt "$tgts" ]; do echo $((t * 16384 - 1)); echo $((t * 16384)); t=$((t + 1)); done >$w/sample.rel
{ seq 0 1000 $((n - 1)); echo $((n - 1)); } >>$w/sample.rel

vm_modprobe sd_mod || exit 0
vm_modprobe sg || exit 0

# A progress line a minute on the console: the growth curve of a run that
# outlives its timeout is still in the log. Bounded like the run itself.
(
	i=0
	while [ $i -lt $((wait_s * 3 / 60 + 1)) ]; do
		sleep 60
		i=$((i + 1))
		echo "sdswarm-vm: progress: $(vm_uptime) s up, $(vm_sd_count) disks, $(vm_mem_used_kib) KiB used"
	done
) &
ticker=$!

all_disks() { [ "$(vm_sd_count)" -ge "$1" ]; }

# check SET: this set's names are indices base..base+n-1: all must be
# there; names and dev_t of the sample (shifted by base) against sdnum.
check() {
	local s=$1 d
	seq "$base" $((base + n - 1)) | sdnum name - | sort >$w/want
	ls /sys/block | grep '^sd' | sort >$w/have
	vm_missing $w/want $w/have | head -3 | sed "s/^/$s: missing /" >$w/$s.mm
	[ "$(wc -l <$w/have)" -eq $((base + n)) ] ||
		echo "$s: $(wc -l <$w/have) disks in all, want $((base + n))" >>$w/$s.mm
	mkdir -p $w/$s
	{
		awk -v b="$base" -v n="$n" '$1 >= b && $1 < b + n' $w/sample.abs
		awk -v b="$base" -v n="$n" '$1 < n { print $1 + b }' $w/sample.rel
		echo $((base + n - 1))
	} | sort -n | uniq | sdnum name - >$w/$s/names
	: >$w/$s/kernel
	for d in $(cat $w/$s/names); do
		if [ -f /sys/block/$d/dev ]; then
			echo "$d $(cat /sys/block/$d/dev)" >>$w/$s/kernel
		else
			echo "$s: sampled $d not in sysfs" >>$w/$s.mm
		fi
	done
	vm_names_check $w/$s $((base + n))
	sed "s/^/$s: /" $w/$s/mismatches >>$w/$s.mm
	cat $w/$s.mm >>$w/all-mismatches
	vm_kv "${s}_mismatches" "$(wc -l <$w/$s.mm)"
	vm_kv "${s}_sampled" "$(wc -l <$w/$s/kernel)"
	vm_kv_str "${s}_first" "$(head -1 $w/$s/kernel)"
	vm_kv_str "${s}_last" "$(tail -1 $w/$s/kernel)"
	echo "sdswarm-vm: $s: $(wc -l <$w/have) disks, $(wc -l <$w/$s/kernel) sampled, $(wc -l <$w/$s.mm) mismatches; $(head -1 $w/$s/kernel) .. $(tail -1 $w/$s/kernel)"
	head -5 $w/$s.mm | sed 's/^/sdswarm-vm: mismatch: /'
	[ "$remove" = 1 ] || base=$((base + n))
}
# record SET T0 MEM0 [DAEMON-KIB]
record() {
	local s=$1 dt kib
	dt=$(vm_since "$2")
	kib=$(($(vm_mem_used_kib) - $3 - ${4:-0}))
	vm_kv "${s}_probe_s" "$dt"
	vm_kv "${s}_mem_kib" "$kib"
	vm_kv "${s}_kib_per_disk" "$(awk -v k="$kib" -v n="$n" 'BEGIN { printf "%.1f", k / n }')"
	vm_kv "${s}_seen" "$(vm_sd_count)"
	vm_stat seen "$(vm_sd_count)"
	vm_stat probe_s "$dt"
	vm_stat mem_used_kib "$kib"
	echo "sdswarm-vm: $s: $(vm_sd_count) disks in $dt s, $kib KiB ($(awk -v k="$kib" -v n="$n" 'BEGIN { printf "%.1f", k / n }') KiB a disk)"
}
# cleared: no sd disk is left. Removal takes about as long as the probe
# (0.05 s a disk for iSCSI logout or rmmod, 0.13 s for TCMU under TCG), so
# its bound grows with the set: 900 s + n/4.
cleared() { [ "$(vm_sd_count)" -eq 0 ]; }
# removed SET WHAT: wait for that, a problem if disks are left
removed() {
	vm_wait $((900 + n / 4)) cleared ||
		echo "$1: $(vm_sd_count) disks left after $2" >>$w/all-mismatches
}

run_sdebug() {
	local st=$tgts luns t0 mem0
	# scsi_debug makes num_tgts x max_luns disks: the fewest targets of
	# at most 16384 LUNs that split n evenly (18279 = 3 x 6093).
	while [ $((n % st)) -ne 0 ] && [ "$st" -lt 64 ]; do st=$((st + 1)); done
	luns=$((n / st))
	if [ $((luns * st)) -ne "$n" ]; then
		echo "sdebug: $n disks do not split into at most 64 equal targets" >>$w/all-mismatches
		return
	fi
	vm_kv sdebug_targets "$st"
	mem0=$(vm_mem_used_kib)
	t0=$(vm_uptime)
	vm_modprobe scsi_debug add_host=1 num_tgts="$st" max_luns="$luns" delay=0 || return
	vm_wait "$wait_s" all_disks $((base + n)) ||
		echo "sdebug: $(vm_sd_count) of $n disks in ${wait_s}s" >>$w/all-mismatches
	record sdebug "$t0" "$mem0"
	check sdebug
	[ "$remove" = 1 ] || return 0
	t0=$(vm_uptime)
	rmmod scsi_debug 2>$w/rmmod.err || echo "sdebug: rmmod: $(cat $w/rmmod.err)" >>$w/all-mismatches
	removed sdebug rmmod
	vm_kv sdebug_remove_s "$(vm_since "$t0")"
}

run_iscsi() {
	local t0 mem0 t rss
	vm_iscsi_scale_conf $w/iscsi.conf "$n" "$tgts" 1G "$portal"
	vm_sdswarmd $w/iscsi.conf || return
	vm_iscsid || return
	mem0=$(vm_mem_used_kib)
	rss0=$(sdswarm --json status | sed -n 's/.*"rss_bytes":\([0-9]*\).*/\1/p')
	t0=$(vm_uptime)
	t=0
	while [ $t -lt "$tgts" ]; do
		vm_iscsi_login $portal iqn.2026-12.org.sdswarm:t$t || return
		have=$(((t + 1) * 16384))
		[ $have -gt "$n" ] && have=$n
		have=$((have + base))
		vm_wait "$wait_s" all_disks "$have" ||
			{ echo "iscsi: $(vm_sd_count) of $have disks after target t$t" >>$w/all-mismatches; break; }
		echo "sdswarm-vm: iscsi: t$t logged in, $(vm_sd_count) disks at $(vm_since "$t0") s"
		t=$((t + 1))
	done
	rss=$(sdswarm --json status | sed -n 's/.*"rss_bytes":\([0-9]*\).*/\1/p')
	vm_kv iscsi_daemon_rss_kib "$((rss / 1024))"
	vm_kv iscsi_daemon_grew_kib "$(((rss - rss0) / 1024))"
	record iscsi "$t0" "$mem0" "$(((rss - rss0) / 1024))"
	check iscsi
	vm_sdswarmd_alive || echo "iscsi: sdswarmd died" >>$w/all-mismatches
	[ "$remove" = 1 ] || return 0
	t0=$(vm_uptime)
	iscsiadm -m node -u >/dev/null 2>&1
	removed iscsi logout
	vm_kv iscsi_logout_s "$(vm_since "$t0")"
	kill "$VM_SDSWARMD_PID" 2>/dev/null
}

# run_tcmu: n is this set's own count in here (and in check and record)
run_tcmu() {
	local t0 mem0 n=$tcmu_n
	# what the sets before left free (removed sets may not give it all back)
	if [ "$tcmu_auto" = auto ] && [ "$(tcmu_fit)" -lt "$n" ]; then
		n=$(tcmu_fit)
		tcmu_n=$n
		vm_kv tcmu_disks "$n"
		[ "$n" -gt 0 ] || { echo "tcmu: no memory left for a TCMU disk" >>$w/all-mismatches; return; }
	fi
	cat >$w/tcmu.conf <<EOF
# vm scale: $n LUNs as TCMU user backstores
[target]
seed = $((n + 1))
control = /run/sdswarm/tcmu
[luns]
count = $n
size = 1G
[store]
type = mem
[tcmu]
enabled = yes
EOF
	if ! sdswarmd --config $w/tcmu.conf --check >/dev/null 2>&1; then
		vm_kv_str tcmu "not measured: this sdswarmd rejects [tcmu]"
		return
	fi
	vm_modprobe target_core_user || return
	vm_modprobe tcm_loop || return
	grep -q " $cfs configfs" /proc/mounts || mount -t configfs configfs $cfs
	mem0=$(vm_mem_used_kib)
	t0=$(vm_uptime)
	vm_sdswarmd $w/tcmu.conf || return
	bs() { ls -d $cfs/target/core/user_*/* 2>/dev/null | grep -q .; }
	if ! vm_wait 30 bs; then
		vm_kv_str tcmu "not measured: sdswarmd accepts [tcmu] but made no user backstore in 30 s"
		echo "sdswarm-vm: TCMU not measured: no user backstore from sdswarmd in 30 s"
		kill "$VM_SDSWARMD_PID" 2>/dev/null
		return
	fi
	tcmu_up() { all_disks $((base + n)) || ! vm_sdswarmd_alive; }
	vm_wait "$wait_s" tcmu_up
	if ! all_disks $((base + n)); then
		echo "tcmu: $(vm_sd_count) of $n disks in $(vm_since "$t0") s" >>$w/all-mismatches
		# What the daemon and the kernel said last: the console is all
		# that leaves the guest.
		tail -20 /tmp/sdswarmd.log | sed 's/^/sdswarm-vm: sdswarmd.log: /'
		dmesg | tail -20 | sed 's/^/sdswarm-vm: dmesg: /'
	fi
	record tcmu "$t0" "$mem0"
	check tcmu
	vm_kv_str tcmu "measured"
	vm_sdswarmd_alive || { echo "tcmu: sdswarmd died" >>$w/all-mismatches; return 0; }
	[ "$remove" = 1 ] || return 0
	# sdswarmd removes its backstores and the tcm_loop target on SIGTERM
	t0=$(vm_uptime)
	kill "$VM_SDSWARMD_PID" 2>/dev/null
	removed tcmu "sdswarmd stopped"
	vm_kv tcmu_remove_s "$(vm_since "$t0")"
	# the kernel frees each device's uio after its disk: a set that scans
	# /sys/class/uio next (tcmu-runner) must not find them half gone
	uio_gone() { ! ls /sys/class/uio 2>/dev/null | grep -q .; }
	vm_wait 600 uio_gone || echo "tcmu: $(ls /sys/class/uio | wc -l) uio devices left after sdswarmd stopped" >>$w/all-mismatches
	daemon_gone() { ! vm_sdswarmd_alive; }
	vm_wait 60 daemon_gone || echo "tcmu: sdswarmd still running after its disks went" >>$w/all-mismatches
}

# tcmu-runner: M user backstores served by its file_zbc handler (files on
# tmpfs); the threads and memory it spends on each.
run_runner() {
	local m=$runner_luns i dev pid th0 th1 rss0 rss1 t0
	command -v tcmu-runner >/dev/null || { vm_kv_str runner "not measured: no tcmu-runner in the image"; return; }
	[ -f /usr/lib/x86_64-linux-gnu/tcmu-runner/handler_file_zbc.so ] ||
		{ vm_kv_str runner "not measured: no handler_file_zbc.so"; return; }
	vm_modprobe target_core_user || return
	grep -q " $cfs configfs" /proc/mounts || mount -t configfs configfs $cfs
	mkdir -p /tmp/runner /var/log
	tcmu-runner --tcmu-log-dir /tmp/runner >/tmp/runner/out.log 2>&1 &
	pid=$!
	sleep 2
	kill -0 $pid 2>/dev/null || { vm_kv_str runner "not measured: tcmu-runner exited: $(tail -2 /tmp/runner/out.log | tr '\n' ' ')"; return; }
	th0=$(awk '$1 == "Threads:" { print $2 }' /proc/$pid/status)
	rss0=$(awk '$1 == "VmRSS:" { print $2 }' /proc/$pid/status)
	t0=$(vm_uptime)
	i=0
	while [ $i -lt "$m" ]; do
		dev=$cfs/target/core/user_9/r$i
		mkdir -p $dev || break
		printf 'dev_config=zbc/model-HA/zsize-16@/tmp/runner/r%d.raw' $i >$dev/control &&
			printf 'dev_size=%d' $((64 << 20)) >$dev/control &&
			printf 1 >$dev/enable || { echo "runner: cannot enable backstore $i" >>$w/all-mismatches; break; }
		i=$((i + 1))
	done
	opened() { [ "$(ls /proc/$pid/fd 2>/dev/null | wc -l)" -ge "$m" ]; }
	vm_wait 300 opened || true
	# Its threads appear as it opens each device: wait for the count to stop growing.
	sleep 3
	th1=$(awk '$1 == "Threads:" { print $2 }' /proc/$pid/status)
	rss1=$(awk '$1 == "VmRSS:" { print $2 }' /proc/$pid/status)
	vm_kv runner_luns "$i"
	vm_kv runner_setup_s "$(vm_since "$t0")"
	vm_kv runner_threads "$th1"
	vm_kv runner_threads_idle "$th0"
	vm_kv runner_rss_kib "$rss1"
	vm_kv runner_fds "$(ls /proc/$pid/fd | wc -l)"
	vm_kv runner_threads_per_lun "$(awk -v a="$th0" -v b="$th1" -v m="$i" 'BEGIN { if (m) printf "%.2f", (b - a) / m }')"
	vm_kv runner_kib_per_lun "$(awk -v a="$rss0" -v b="$rss1" -v m="$i" 'BEGIN { if (m) printf "%.1f", (b - a) / m }')"
	vm_kv_str runner "measured: $i backstores"
	echo "sdswarm-vm: tcmu-runner: $i backstores: threads $th0 -> $th1, VmRSS $rss0 -> $rss1 KiB"
	grep -ih 'bus\|error\|fail' /tmp/runner/out.log /tmp/runner/tcmu-runner.log 2>/dev/null | head -4 | sed 's/^/sdswarm-vm: runner: /'
	kill $pid 2>/dev/null
}

for s in $(echo "$sets" | tr ',' ' '); do
	case $s in
	sdebug) run_sdebug ;;
	iscsi) run_iscsi ;;
	tcmu) run_tcmu ;;
	runner) run_runner ;;
	*) vm_fail "sdswarm.sets: no set '$s' (sdebug, iscsi, tcmu, runner)"; exit 0 ;;
	esac
done

kill $ticker 2>/dev/null
bad=$(wc -l <$w/all-mismatches)
vm_stat mismatches "$bad"
if [ "$bad" -gt 0 ]; then
	head -10 $w/all-mismatches | sed 's/^/sdswarm-vm: problem: /'
	vm_fail "$bad problem(s), first: $(head -1 $w/all-mismatches)"
else
	vm_pass "$n disks per set, $tcmu_n for tcmu ($sets): every name and every sampled dev_t matches sdnum"
fi
