# SPDX-License-Identifier: MIT
# vm-mem: 1G
# vm-timeout: 900
# stress: the CI stress mode on a real kernel. sdswarmd serves N LUNs
# (sdswarm.disks, default 64) over iSCSI on the guest's loopback, the
# kernel's initiator and sd make disks of them, and `sdswarm-bench stress
# /dev --direct` runs on those block devices for sdswarm.seconds (default
# 60): stamped O_DIRECT writes and reads on every disk at once, checked;
# LUNs taken offline and online (the kernel must fail I/O while offline and
# serve every block as before after); medium errors and delays injected and
# seen through the block layer as EIO and late answers (no hangs: sd ends
# one only at its 30 s command timeout). LUN removal and
# resize are not churned here: the kernel removes and resizes a disk on
# its own schedule (a rescan), which the exact per-block expectations of
# the run cannot follow. Then the kernel and udev are watched: no oops,
# BUG, WARNING, hung task or soft lockup in dmesg, `udevadm settle` within
# 300 s (TCG is slow), every /dev/disk/by-id link resolving to a disk that exists.
# Verdict: the run's PASS and all of the above.
# Figures: disks, seen, the run's counters (writes, blocks_verified,
# blocks_lost, faults_injected, faults_seen_right, lun_offline_online),
# kernel_warnings, stale_links, settle_s.
# Parameters: sdswarm.disks=N sdswarm.seconds=S
. /usr/lib/sdswarm-vm/vm-lib.sh

n=$(vm_param disks 64)
secs=$(vm_param seconds 60)
portal=127.0.0.1:3260
iqn=iqn.2026-12.org.sdswarm:t0
case $n in '' | *[!0-9]* | 0) vm_fail "sdswarm.disks=$n is not a count"; exit 0 ;; esac
case $secs in '' | *[!0-9]* | 0) vm_fail "sdswarm.seconds=$secs is not a count"; exit 0 ;; esac
vm_stat disks "$n"
w=/tmp/stress
mkdir -p $w
cat >$w/sdswarm.conf <<EOC
# vm stress: $n thin LUNs over iSCSI
[target]
seed = 11
[luns]
count = $n
size = 256M
partitions = 2
[store]
type = mem
[iscsi]
enabled = yes
portal = $portal
targets = 1
threads = 2
EOC

# udevd first, so the disks come up with their links as on a real host.
udevd=/usr/lib/systemd/systemd-udevd
[ -x $udevd ] || { vm_fail "no $udevd in the image (package udev on the build host)"; exit 0; }
vm_modprobe sd_mod || exit 0
mkdir -p /run/udev
$udevd --daemon --resolve-names=never >/tmp/udevd.log 2>&1 ||
	{ vm_fail "systemd-udevd would not start: $(tail -2 /tmp/udevd.log)"; exit 0; }
udevadm trigger --action=add >/dev/null 2>&1
timeout 120 udevadm settle --timeout=110 || vm_fail "the initial udev settle did not finish"
vm_iscsi_target $w/sdswarm.conf || exit 0
# The run addresses disk i as LUN i: sd is bound to the LUNs in LUN order
# (vm_sd_bind_luns; the kernel's own asynchronous probes may swap names),
# and the order is checked rather than trusted.
vm_sd_hold || exit 0
vm_iscsi_login $portal $iqn || exit 0
vm_sd_bind_luns 120 "$n" || exit 0
vm_sd_release
vm_wait_sd 120 "$n" || { vm_fail "$(vm_sd_count) of $n disks"; exit 0; }
vm_stat seen "$(vm_sd_count)"
for i in 0 $((n / 2)) $((n - 1)); do
	d=$(sdnum name $i)
	[ "$(vm_sd_lun "$d")" = "$i" ] || { vm_fail "$d is LUN $(vm_sd_lun "$d"), not $i"; exit 0; }
done
udevadm settle --timeout=60 2>/dev/null
dmesg -c >/dev/null

sock=/run/sdswarm/control
timeout $((secs + 300)) sdswarm-bench stress /dev --control $sock --direct \
	--churn offline --hang-ms 0 --seconds "$secs" --disks "$n" --blocks 32 --json \
	>$w/run.json 2>$w/run.err
rc=$?
sed 's/^/sdswarm-vm: stress: /' $w/run.err | head -20
cat $w/run.json
for k in writes blocks_verified blocks_lost unexpected_errors faults_injected \
	faults_seen_right faults_wrong lun_offline_online; do
	v=$(sed -n "s/.*\"$k\":\([0-9]*\).*/\1/p" $w/run.json)
	vm_stat "$k" "${v:-0}"
done
[ $rc -eq 0 ] || vm_fail "sdswarm-bench stress: verdict $(sed -n 's/.*"verdict":"\([A-Z]*\)".*/\1/p' $w/run.json) (exit $rc)"

# The kernel: nothing it should never say.
dmesg >$w/dmesg
warn=$(grep -cE 'BUG:|WARNING:|Oops|Call Trace|hung_task|blocked for more than|soft lockup|rcu_sched self-detected' $w/dmesg)
vm_stat kernel_warnings "$warn"
[ "$warn" -eq 0 ] || { grep -E 'BUG:|WARNING:|Oops|blocked for more|soft lockup' $w/dmesg | head -5 | sed 's/^/sdswarm-vm: dmesg: /'; vm_fail "$warn kernel warnings in dmesg"; }
grep -E 'Medium Error|I/O error' $w/dmesg | head -3 | sed 's/^/sdswarm-vm: dmesg (expected, injected): /'

# udev: it settles, and no link points at nothing.
t0=$(vm_uptime)
udevadm settle --timeout=300 2>/dev/null || vm_fail "udevadm settle did not finish in 300 s"
vm_stat settle_s "$(vm_since "$t0")"
stale=0
links=0
for l in /dev/disk/by-id/*; do
	[ -L "$l" ] || continue
	links=$((links + 1))
	[ -e "$l" ] || { stale=$((stale + 1)); echo "sdswarm-vm: stale link $l"; }
done
vm_stat by_id_links "$links"
vm_stat stale_links "$stale"
[ "$stale" -eq 0 ] || vm_fail "$stale /dev/disk/by-id links point at nothing"
[ "$links" -ge "$n" ] || vm_fail "$links /dev/disk/by-id links for $n disks"
vm_sdswarmd_alive || vm_fail "sdswarmd died: $(tail -3 /tmp/sdswarmd.log | tr '\n' ' ')"
vm_pass "verified I/O through the kernel with offline churn and faults, no block lost, kernel and udev clean"
