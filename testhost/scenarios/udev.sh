# SPDX-License-Identifier: MIT
# vm-mem: 1536M
# vm-timeout: 1200
# udev: systemd-udevd (Debian's, with its own rules and the scsi_id helper
# they call) handles the add events of disks the kernel logs in to over
# iSCSI. For each count in sdswarm.counts (default 100,300,1000) a fresh
# sdswarmd serves that many LUNs; the guest logs in, and the time until
# `udevadm settle` returns is measured from the login and from the moment
# the last disk was in sysfs. Every disk must then have exactly one
# /dev/disk/by-id/wwn-0x... link (its WWN, as `sdswarm status --lun` has
# it, NAA 6 from the Device Identification VPD page) and one scsi-...
# link, all distinct and each pointing at its own disk; the sample's links
# must be the daemon's WWN. Then the session is logged out, and the time
# for the removes to settle is measured too.
# Figures: disks (the largest count), seen, mismatches, and per count C:
# settle_C_s (login to settle), settle_after_C_s (last disk in sysfs to
# settle), remove_C_s, links_C.
# Parameters: sdswarm.counts=C1,C2,... sdswarm.wait=SECONDS
. /usr/lib/sdswarm-vm/vm-lib.sh

counts=$(vm_param counts 100,300,1000)
wait_s=$(vm_param wait 600)
portal=127.0.0.1:3260
iqn=iqn.2026-12.org.sdswarm:t0
w=/tmp/udev
mkdir -p $w
: >$w/mismatches
bad() { echo "$*" >>$w/mismatches; echo "sdswarm-vm: bad: $*"; }
udevd=/usr/lib/systemd/systemd-udevd
[ -x $udevd ] || { vm_fail "no $udevd in the image (package udev on the build host)"; exit 0; }
[ -x /usr/lib/udev/scsi_id ] || { vm_fail "no /usr/lib/udev/scsi_id in the image"; exit 0; }

vm_modprobe sd_mod || exit 0
vm_modprobe sg || exit 0
mkdir -p /run/udev
$udevd --daemon --resolve-names=never >/tmp/udevd.log 2>&1 ||
	{ vm_fail "systemd-udevd would not start: $(tail -2 /tmp/udevd.log)"; exit 0; }
# What was there before udevd (the pseudo devices of the boot) gets its
# events replayed, so the first settle below measures only the disks.
udevadm trigger --action=add >/dev/null 2>&1
timeout 120 udevadm settle --timeout=110 || bad "the initial settle did not finish"
vm_iscsid || exit 0

largest=0
k=0
for c in $(echo "$counts" | tr ',' ' '); do
	case $c in '' | *[!0-9]* | 0) vm_fail "sdswarm.counts: '$c' is not a count"; exit 0 ;; esac
	[ "$c" -le 16384 ] || { vm_fail "sdswarm.counts: $c is more than one target holds"; exit 0; }
	k=$((k + 1))
	[ "$c" -gt "$largest" ] && largest=$c
	cat >$w/sdswarm-$c.conf <<EOF
# vm udev: $c LUNs
[target]
seed = $((9000 + k))
max_luns = 16384
[luns]
count = $c
size = 1G
[store]
type = mem
[iscsi]
enabled = yes
portal = $portal
targets = 1
threads = 2
EOF
	vm_iscsi_up $w/sdswarm-$c.conf $portal $iqn || exit 0
	t0=$VM_LOGIN_T0
	vm_wait_sd "$wait_s" "$c" || bad "$c: only $(vm_sd_count) disks in ${wait_s}s"
	t1=$(vm_uptime)
	timeout "$wait_s" udevadm settle --timeout="$wait_s" || bad "$c: udevadm settle timed out"
	vm_kv "settle_${c}_s" "$(vm_since "$t0")"
	vm_kv "settle_after_${c}_s" "$(vm_since "$t1")"
	vm_kv "probe_${c}_s" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
	echo "sdswarm-vm: $c disks: in sysfs $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s after login, settled $(vm_since "$t1") s later"

	# Links: one wwn- and one scsi- per disk, distinct, each its own.
	ls /sys/block | grep '^sd' | sort >$w/disks
	for l in /dev/disk/by-id/wwn-* /dev/disk/by-id/scsi-*; do
		[ -L "$l" ] || continue
		case $l in *-part[0-9]*) continue ;; esac
		echo "${l##*/} $(readlink "$l" | sed 's|.*/||')"
	done | sort >$w/links
	nw=$(grep -c '^wwn-' $w/links)
	ns=$(grep -c '^scsi-' $w/links)
	vm_kv "links_${c}" "$((nw + ns))"
	[ "$nw" -eq "$c" ] || bad "$c: $nw wwn- links for $c disks"
	[ "$ns" -ge "$c" ] || bad "$c: $ns scsi- links for $c disks"
	for kind in wwn scsi-3; do
		dup=$(grep "^$kind" $w/links | cut -d' ' -f2 | sort | uniq -d | head -1)
		[ -z "$dup" ] || bad "$c: two $kind links point at $dup"
	done
	grep '^wwn-' $w/links | cut -d' ' -f2 | sort >$w/linked
	nolink=$(vm_missing $w/disks $w/linked | head -1)
	[ -z "$nolink" ] || bad "$c: $nolink has no wwn- link"
	for lun in 0 $((c / 2)) $((c - 1)); do
		d=""
		for x in $(cat $w/disks); do
			[ "$(vm_sd_lun "$x")" = "$lun" ] && { d=$x; break; }
		done
		wwn=$(sdswarm status --lun "$lun" | sed -n 's/.* wwn \(0x[0-9a-f]*\).*/\1/p')
		[ -n "$d" ] && [ -n "$wwn" ] || { bad "$c: LUN $lun: disk '$d', wwn '$wwn'"; continue; }
		target=$(readlink "/dev/disk/by-id/wwn-$wwn" | sed 's|.*/||')
		[ "$target" = "$d" ] || bad "$c: /dev/disk/by-id/wwn-$wwn -> '$target', LUN $lun is $d"
	done
	echo "sdswarm-vm: $c disks: $nw wwn- and $ns scsi- links, e.g. $(grep '^wwn-' $w/links | head -1)"

	t0=$(vm_uptime)
	iscsiadm -m node -T $iqn -p $portal -u >/dev/null 2>&1 || bad "$c: logout failed"
	vm_wait "$wait_s" sh -c "[ \$(ls /sys/block | grep -c '^sd') -eq 0 ]" || bad "$c: disks left after the logout"
	timeout "$wait_s" udevadm settle --timeout="$wait_s" || bad "$c: settle after logout timed out"
	vm_kv "remove_${c}_s" "$(vm_since "$t0")"
	left=$(ls /dev/disk/by-id 2>/dev/null | grep -c '^wwn-\|^scsi-')
	[ "$left" -eq 0 ] || bad "$c: $left by-id links left after the disks went"
	iscsiadm -m node -o delete >/dev/null 2>&1
	kill "$VM_SDSWARMD_PID" 2>/dev/null
	vm_wait 20 sh -c "! kill -0 $VM_SDSWARMD_PID 2>/dev/null" || bad "$c: sdswarmd did not exit on TERM"
	echo "sdswarm-vm: $c disks: gone and settled in $(vm_since "$t0") s"
done
vm_stat disks "$largest"
vm_stat seen "$largest"
[ -s $w/mismatches ] && vm_stat seen 0
nbad=$(wc -l <$w/mismatches)
vm_stat mismatches "$nbad"
udevadm control --exit >/dev/null 2>&1
if [ "$nbad" -gt 0 ]; then
	vm_fail "$nbad check(s) failed, first: $(head -1 $w/mismatches)"
else
	vm_pass "udevd: one wwn- and one scsi- link per disk for $counts disks"
fi
