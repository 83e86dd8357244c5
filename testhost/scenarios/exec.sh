# SPDX-License-Identifier: MIT
# vm-all: no
# vm-mem: 1G
# vm-timeout: 600
# exec: the guest half of `sdswarm-testhost exec` (testhost/exec is the
# host half). It mounts the run's share (9p, tag sdswarm) on /sdswarm and the
# kernel's whole module tree (tag sdswarm-modules) on /lib/modules/VERSION,
# loads the user's modules (/sdswarm/in/*.ko, their dependencies through
# modprobe first), starts systemd-udevd when nobody has (the initramfs
# host; the Debian host's systemd already runs it), brings up N disks
# through one front end, waits until the kernel has made all of them
# (and their partitions) and udev has settled, then runs the user's
# script /sdswarm/in/script with its output in /sdswarm/log and writes
# its exit status to /sdswarm/status. Files the script writes under
# $SDSWARM_OUT (/sdswarm/out) are on the host when the boot ends.
# The script's environment: SDSWARM_OUT, SDSWARM_FRONTEND, SDSWARM_DISKS,
# SDSWARM_PARTS, SDSWARM_HOST (initramfs or debian), SDSWARM_DISK_LIST (a
# file: "NAME MAJ:MIN" of every disk, in the kernel's index order),
# SDSWARM_LIB (the guest side's folder: fit.awk for the scripts' fits).
# sd is bound to the disks in LUN order (vm_sd_bind_luns), so that disk i
# is sdnum's name i; sdswarm.bind=auto leaves the binding to the kernel's
# asynchronous probes, which may swap names.
# Front ends: scsi_debug (the kernel's own, num_parts MBR partitions),
# iscsi (sdswarmd on 127.0.0.1:3260, the kernel's initiator logged in
# through iscsid; past 16,384 LUNs several targets), tcmu (sdswarmd's
# target_core_user backstores behind tcm_loop, at most 16,384). For these
# two, /sdswarm/in/sdswarm.conf, when exec was given --config or --set, is
# the LUN table (checked on the host); this script adds the front end's
# section. sdswarm.parts is then 0: the partitions are the config's, and
# the wait is for the disks, then udev.
# Figures: disks, seen, probe_s (front end start to the last disk and
# partition), settle_s (then to udevadm settle), script_start_s (guest
# uptime when the script started), script_rc.
# Parameters: sdswarm.frontend=F sdswarm.disks=N sdswarm.parts=P
# sdswarm.udev=0|1 sdswarm.wait=SECONDS sdswarm.host=initramfs|debian
# sdswarm.bind=lun|auto
. /usr/lib/sdswarm-vm/vm-lib.sh

fe=$(vm_param frontend scsi_debug)
n=$(vm_param disks 8)
parts=$(vm_param parts 0)
udev=$(vm_param udev 1)
wait_s=$(vm_param wait 3600)
host=$(vm_param host initramfs)
share=/sdswarm
vm_stat disks "$n"
vm_kv parts "$parts"
vm_kv_str frontend "$fe"
vm_kv_str host "$host"
case $n in '' | *[!0-9]* | 0) vm_fail "sdswarm.disks=$n is not a count"; exit 0 ;; esac
case $parts in '' | *[!0-9]*) vm_fail "sdswarm.parts=$parts is not a count"; exit 0 ;; esac

# --- the shares --------------------------------------------------------------
# Whether a folder is a mount point, through the path the kernel reports
# (the Debian host's /lib/modules is /usr/lib/modules); busybox here has
# no mountpoint applet.
mounted() {
	awk -v d="$(readlink -f "$1")" '$2 == d { f = 1 } END { exit !f }' /proc/mounts
}
# On the Debian host the initramfs mounted both before switch_root.
if ! mounted $share; then
	for m in virtio_pci 9pnet_virtio 9p; do
		modprobe "$m" 2>/dev/null
	done
	mkdir -p $share
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 sdswarm $share ||
		{ vm_fail "cannot mount the run's 9p share (tag sdswarm)"; exit 0; }
fi
mdir=/lib/modules/$(uname -r)
if ! mounted "$mdir"; then
	mkdir -p "$mdir"
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro sdswarm-modules "$mdir" ||
		echo "sdswarm-vm: no module share: only the image's own modules"
fi
mkdir -p $share/out
vm_kv shares_s "$(vm_uptime)"
export SDSWARM_OUT=$share/out SDSWARM_FRONTEND=$fe SDSWARM_DISKS=$n \
	SDSWARM_PARTS=$parts SDSWARM_HOST=$host SDSWARM_DISK_LIST=$share/disks \
	SDSWARM_LIB=/usr/lib/sdswarm-vm
# The same for the shell of sdswarm.shell=1 (init sources it).
cat >$VM_RUN/env <<EOF
export SDSWARM_OUT=$share/out SDSWARM_FRONTEND=$fe SDSWARM_DISKS=$n
export SDSWARM_PARTS=$parts SDSWARM_HOST=$host SDSWARM_DISK_LIST=$share/disks
export SDSWARM_LIB=/usr/lib/sdswarm-vm
cd $share/out
EOF

# --- the user's modules, before any disk ----------------------------------------
for ko in $share/in/*.ko; do
	[ -f "$ko" ] || continue
	for dep in $(modinfo -F depends "$ko" 2>/dev/null | tr ',' ' '); do
		vm_modprobe "$dep" || exit 0
	done
	if ! err=$(insmod "$ko" 2>&1); then
		vm_fail "insmod $(basename "$ko"): $err"
		exit 0
	fi
	echo "sdswarm-vm: loaded $(basename "$ko") ($(modinfo -F vermagic "$ko" | cut -d' ' -f1))"
done

# --- udev ----------------------------------------------------------------------
if [ "$udev" = 1 ] && ! pidof systemd-udevd >/dev/null 2>&1; then
	mkdir -p /run/udev
	/usr/lib/systemd/systemd-udevd --daemon --resolve-names=never >/tmp/udevd.log 2>&1 ||
		{ vm_fail "systemd-udevd would not start: $(tail -2 /tmp/udevd.log)"; exit 0; }
	# Only block devices are replayed: the disks come later, as events
	# udevd sees itself; the rest of the boot's devices matter to no one
	# here, and replaying all of them costs seconds under TCG.
	udevadm trigger --action=add --subsystem-match=block >/dev/null 2>&1
	udevadm settle --timeout=120 >/dev/null 2>&1
fi
vm_kv udev_up_s "$(vm_uptime)"

# --- the front end --------------------------------------------------------------
want_parts=$((n * parts))
vm_modprobe sd_mod || exit 0
vm_modprobe sg || exit 0
vm_sd_hold || exit 0
lpt=
w=/tmp/exec
mkdir -p $w /run/sdswarm
t0=$(vm_uptime)
mem0=$(vm_mem_used_kib)

# sdswarmd's LUN table: N LUNs of 1 GiB, thin, P GPT partitions each; or
# the user's (exec --config/--set), merged and checked on the host, without
# a front end section: that is added below.
sdswarm_conf() {
	if [ -f $share/in/sdswarm.conf ]; then
		cat $share/in/sdswarm.conf
		return
	fi
	echo "# sdswarm-testhost exec: $n LUNs ($fe)"
	echo "[target]"
	echo "seed = $n"
	echo "max_luns = 16384"
	echo "control = /run/sdswarm/control"
	echo "[luns]"
	echo "count = $n"
	echo "size = 1G"
	echo "thin = yes"
	if [ "$parts" -gt 0 ]; then
		echo "partitions = $parts"
		echo "ptable = gpt"
	fi
	echo "[store]"
	echo "type = mem"
}

case $fe in
scsi_debug)
	[ "$parts" -le 15 ] || { vm_fail "scsi_debug: at most 15 partitions a disk"; exit 0; }
	tgts=$(((n + 16383) / 16384))
	luns=$((n / tgts))
	[ $((tgts * luns)) -eq "$n" ] ||
		{ vm_fail "scsi_debug: past 16384 disks the count must be a multiple of $tgts"; exit 0; }
	set -- add_host=1 num_tgts="$tgts" max_luns="$luns" delay=0
	[ "$parts" -gt 0 ] && set -- "$@" num_parts="$parts"
	vm_modprobe_wait "$wait_s" scsi_debug "$@" || exit 0
	;;
iscsi)
	ntgt=$(((n + 16383) / 16384))
	lpt=$(((n + ntgt - 1) / ntgt))
	{
		sdswarm_conf
		echo "[iscsi]"
		echo "enabled = yes"
		echo "portal = 127.0.0.1:3260"
		echo "targets = $ntgt"
		echo "luns_per_target = $lpt"
		echo "threads = 2"
	} >$w/sdswarm.conf
	# The Debian host's open-iscsi names no initiator until its service
	# first runs; give it one either way.
	grep -q '^InitiatorName=' /etc/iscsi/initiatorname.iscsi 2>/dev/null ||
		echo "InitiatorName=iqn.2024-01.org.sdswarm:vm-guest" >/etc/iscsi/initiatorname.iscsi
	vm_sdswarmd $w/sdswarm.conf || exit 0
	t=0
	while [ $t -lt "$ntgt" ]; do
		vm_iscsi_login 127.0.0.1:3260 iqn.2026-12.org.sdswarm:t$t || exit 0
		t=$((t + 1))
	done
	;;
tcmu)
	[ "$n" -le 16384 ] || { vm_fail "tcmu: at most 16384 disks"; exit 0; }
	vm_modprobe target_core_user || exit 0
	vm_modprobe tcm_loop || exit 0
	cfs=/sys/kernel/config
	grep -q " $cfs configfs" /proc/mounts || mount -t configfs configfs $cfs ||
		{ vm_fail "cannot mount configfs on $cfs"; exit 0; }
	{
		sdswarm_conf
		echo "[tcmu]"
		echo "enabled = yes"
		echo "hba = user_0"
		echo "fabric = loopback"
	} >$w/sdswarm.conf
	vm_sdswarmd $w/sdswarm.conf || exit 0
	;;
*)
	vm_fail "sdswarm.frontend=$fe: scsi_debug, iscsi or tcmu"
	exit 0
	;;
esac

vm_sd_bind_luns "$wait_s" "$n" $lpt || exit 0
vm_sd_release
if ! vm_wait_sd "$wait_s" "$n" "$want_parts"; then
	vm_fail "$fe: $(vm_sd_count) of $n disks and $(vm_sd_parts) of $want_parts partitions within ${wait_s}s"
	exit 0
fi
vm_stat seen "$(vm_sd_count)"
vm_stat probe_s "$(vm_since "$t0")"
vm_kv mem_used_kib "$(($(vm_mem_used_kib) - mem0))"
t1=$(vm_uptime)
if [ "$udev" = 1 ]; then
	udevadm settle --timeout="$wait_s" ||
		{ vm_fail "udevadm settle did not finish within ${wait_s}s"; exit 0; }
fi
vm_stat settle_s "$(vm_since "$t1")"
echo "sdswarm-vm: $(vm_sd_count) disks, $(vm_sd_parts) partitions ($fe) in $(vm_since "$t0") s"

# The disks in index order: sdnum parses each name (sda < sdz < sdaa).
grep -H . /sys/block/sd*/dev | sed 's|^/sys/block/\([^/]*\)/dev:|\1 |' >$w/disks
cut -d' ' -f1 $w/disks | sdnum parse - | paste -d' ' - $w/disks |
	sort -n -k1,1 | cut -d' ' -f3,4 >$share/disks

# --- the user's script ------------------------------------------------------------
script=$share/in/script
if [ -f "$script" ]; then
	start=$(vm_uptime)
	vm_stat script_start_s "$start"
	echo "$start" >$share/started
	echo "sdswarm-vm: running the script (output in the run's log)"
	# In shell mode a person watches the console: show the log there.
	tailpid=""
	if [ "$(vm_param shell 0)" = 1 ]; then
		: >>$share/log
		tail -f $share/log &
		tailpid=$!
	fi
	(cd "$SDSWARM_OUT" && exec "$script") >>$share/log 2>&1 </dev/null
	rc=$?
	[ -n "$tailpid" ] && { sleep 0.3; kill "$tailpid" 2>/dev/null; }
	sync
	echo "$rc" >$share/status
	vm_stat script_rc "$rc"
	vm_kv script_s "$(vm_since "$start")"
	echo "sdswarm-vm: the script exited $rc after $(vm_since "$start") s"
	vm_pass "script exit status $rc"
else
	vm_pass "no script; $n disks up"
fi
