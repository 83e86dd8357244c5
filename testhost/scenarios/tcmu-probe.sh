# SPDX-License-Identifier: MIT
# vm-mem: 512M
# vm-timeout: 180
# tcmu-probe: the kernel side of the TCMU path, before any user-space
# handler exists. Through configfs it creates one target_core_user
# backstore, enables it and checks that the kernel made /dev/uio0 with its
# command ring, then exports it as LUN 0 of a tcm_loop target with a nexus,
# which makes the kernel scan it: the scan's first command (INQUIRY) must
# land on the ring, seen as the uio device's event count going up. Nobody
# answers it (sdswarmd's TCMU front end will), so the LUN never becomes a
# disk; the scan gives up after cmd_time_out and the guest powers off.
# Figures: uio_s (enable to /dev/uio0), ring_kib, events, host.
. /usr/lib/sdswarm-vm/vm-lib.sh

cfs=/sys/kernel/config
wait_s=$(vm_param wait 20)
size=$((64 << 20))
# naa.5001405 is the prefix LIO itself uses for its generated WWNs.
wwn=naa.5001405000000001
init_wwn=naa.5001405000000002

vm_modprobe target_core_user || exit 0
vm_modprobe tcm_loop || exit 0
grep -q " $cfs configfs" /proc/mounts || mount -t configfs configfs $cfs ||
	{ vm_fail "cannot mount configfs on $cfs"; exit 0; }
vm_check "configfs shows the target core" test -d $cfs/target/core || exit 0

dev=$cfs/target/core/user_0/vm0
vm_check "create the user backstore" mkdir -p $dev || exit 0
# dev_config is what the handler matches on: "SUBTYPE/CONFIG".
printf 'dev_config=sdswarm/vm0' >$dev/control &&
	printf 'dev_size=%d' $size >$dev/control ||
	{ vm_fail "cannot configure $dev"; exit 0; }
# A short command timeout, so the unanswered scan below gives up soon.
printf 5 >$dev/attrib/cmd_time_out 2>/dev/null || true
t0=$(vm_uptime)
vm_check "enable the backstore" sh -c "printf 1 >$dev/enable" || exit 0
uio_there() { [ -c /dev/uio0 ] && [ -d /sys/class/uio/uio0 ]; }
if ! vm_wait "$wait_s" uio_there; then
	vm_fail "no /dev/uio0 within ${wait_s}s of enabling the user backstore"
	exit 0
fi
vm_stat uio_s "$(awk -v a="$t0" -v b="$(vm_uptime)" 'BEGIN { printf "%.2f", b - a }')"
name=$(cat /sys/class/uio/uio0/name)
vm_kv_str uio_name "$name"
echo "sdswarm-vm: /dev/uio0 is '$name'"
case $name in
tcm-user/*/vm0/sdswarm/vm0) ;;
*) vm_fail "uio0 is named '$name', not tcm-user/HBA/vm0/sdswarm/vm0" ;;
esac
ring=$(cat /sys/class/uio/uio0/maps/map0/size 2>/dev/null)
vm_stat ring_kib "$((ring / 1024))"
[ "$((ring))" -gt 0 ] || vm_fail "uio0 has no ring mapping (maps/map0/size '$ring')"
events0=$(cat /sys/class/uio/uio0/event)

tpg=$cfs/target/loopback/$wwn/tpgt_1
vm_check "create the tcm_loop LUN" mkdir -p $tpg/lun/lun_0 || exit 0
hosts0=$(ls /sys/class/scsi_host | wc -l)
vm_check "create the nexus" sh -c "printf $init_wwn >$tpg/nexus" || exit 0
host=""
for h in /sys/class/scsi_host/host*; do
	case $(cat $h/proc_name 2>/dev/null) in tcm_loop*) host=${h##*/host} ;; esac
done
[ -n "$host" ] || vm_fail "no tcm_loop SCSI host after the nexus ($hosts0 hosts before)"
vm_kv host "${host:--1}"
# The link makes tcm_loop add the device, which scans it synchronously; the
# scan waits on a ring nobody serves, so it runs in the background.
ln -s $dev $tpg/lun/lun_0/vm0 &
ring_used() { [ "$(cat /sys/class/uio/uio0/event)" -gt "$events0" ]; }
if vm_wait "$wait_s" ring_used; then
	vm_stat events "$(($(cat /sys/class/uio/uio0/event) - events0))"
	echo "sdswarm-vm: the scan of $wwn LUN 0 reached the TCMU ring"
else
	vm_stat events 0
	vm_fail "exporting the backstore through tcm_loop put no command on the ring within ${wait_s}s"
fi
vm_pass "/dev/uio0 made, its ring received the kernel's commands"
