# SPDX-License-Identifier: MIT
# vm-mem: 768M
# vm-timeout: 400
# hotplug: LUNs come and go at run time through sdswarmd's control socket
# (`sdswarm lun add --group hot`, `sdswarm lun remove`) while the kernel is
# logged in over iSCSI. The daemon tells the initiator with an Async
# Message (SCSI event, UNIT ATTENTION 3Fh/0Eh REPORTED LUNS DATA HAS
# CHANGED), on which iscsid rescans the session; a LUN that went away is
# found missing from REPORT LUNS (sg_luns) and deleted through sysfs, as
# rescan-scsi-bus.sh -r does, since the kernel's scan only ever adds. The
# sd driver takes the lowest free index for every new disk (its ida), so a
# freed name is reused first. The scenario keeps its own model of that
# allocator (lowest free index, the same rule as numbering/'s idx), and
# each new disk's name and MAJOR:MINOR must be `sdnum name`/`sdnum devt` of
# the index the model predicts.
# Rounds (sdswarm.rounds, default 4): remove 2 LUNs (a deterministic
# pseudo-random pick), then add 3.
# Figures: disks (at start), seen (at the end), mismatches, removed, added,
# aen_rescans (adds the initiator saw without our rescan), add_s (the
# slowest add: `lun add` to the disk in sysfs), reused (new disks that got
# a freed index).
# Parameters: sdswarm.disks=N (LUNs at start, default 8) sdswarm.rounds=R
# sdswarm.wait=SECONDS (per add, default 20)
. /usr/lib/sdswarm-vm/vm-lib.sh

n=$(vm_param disks 8)
rounds=$(vm_param rounds 4)
wait_s=$(vm_param wait 20)
portal=127.0.0.1:3260
iqn=iqn.2026-12.org.sdswarm:t0
hot_first=1024
vm_stat disks "$n"
case $n in '' | *[!0-9]* | 0) vm_fail "sdswarm.disks=$n is not a count"; exit 0 ;; esac

w=/tmp/hotplug
mkdir -p $w
cat >$w/sdswarm.conf <<EOF
# vm hotplug: $n LUNs at start, a hot group for lun add
[target]
seed = 77
max_luns = 16384
[luns]
count = $n
size = 256M
[luns.hot]
first = $hot_first
count = 0
size = 64M
[store]
type = mem
[iscsi]
enabled = yes
portal = $portal
targets = 1
threads = 2
EOF

vm_modprobe sd_mod || exit 0
vm_sdswarmd $w/sdswarm.conf || exit 0
vm_iscsi_login $portal $iqn || exit 0
vm_wait 60 sh -c "[ \$(ls /sys/block | grep -c '^sd') -ge $n ]" ||
	{ vm_fail "$(vm_sd_count) of $n disks at start"; exit 0; }

# The model: "LUN INDEX" of every disk present, and the free indices.
: >$w/mismatches
: >$w/model
for d in $(ls /sys/block | grep '^sd'); do
	echo "$(vm_sd_lun "$d") $(sdnum parse "$d" | cut -d' ' -f1)" >>$w/model
done
sort -n -o $w/model $w/model
lowest_free() { # the lowest index the model does not hold
	awk '{ u[$2] = 1 } END { for (i = 0; ; i++) if (!(i in u)) { print i; exit } }' $w/model
}
disk_of_lun() { # LUN: the sd disk the kernel has for it, or nothing
	local d
	for d in $(ls /sys/block | grep '^sd'); do
		[ "$(vm_sd_lun "$d")" = "$1" ] && { echo "$d"; return 0; }
	done
	return 1
}
# LUNs the target reports now (flat addressing undone).
target_luns() {
	sg_luns -q "/dev/$(ls /sys/block | grep '^sd' | head -1)" 2>/dev/null |
		awk '{ print (("0x" substr($1, 1, 4)) + 0) % 16384 }'
}
session_rescan() {
	iscsiadm -m session -R >/dev/null 2>&1
}

dmesg_luns_changed() {
	dmesg | grep -ci 'lun assignments on this target have changed\|reported luns data has changed'
}

removed=0 added=0 aen=0 reused=0 worst_add=0 seedv=12345
r=0
while [ $r -lt "$rounds" ]; do
	r=$((r + 1))
	# Remove two LUNs, picked by a small LCG over those present.
	k=0
	while [ $k -lt 2 ] && [ "$(wc -l <$w/model)" -gt 1 ]; do
		k=$((k + 1))
		seedv=$(((seedv * 1103515245 + 12345) % 2147483648))
		cnt=$(wc -l <$w/model)
		line=$((seedv % cnt + 1))
		lun=$(sed -n "${line}p" $w/model | cut -d' ' -f1)
		idx=$(sed -n "${line}p" $w/model | cut -d' ' -f2)
		d=$(sdnum name "$idx")
		out=$(sdswarm lun remove "$lun" 2>&1) ||
			{ vm_fail "round $r: sdswarm lun remove $lun: $out"; break 2; }
		# The AEN makes iscsid rescan: that adds, never removes.
		# The LUN's absence from REPORT LUNS is the signal to
		# delete it on the host side.
		gone() { ! target_luns | grep -qx "$lun"; }
		vm_wait 10 gone || echo "round $r: LUN $lun still in REPORT LUNS after removal" >>$w/mismatches
		if [ -e "/sys/block/$d/device/delete" ]; then
			echo 1 >"/sys/block/$d/device/delete"
		else
			echo "round $r: LUN $lun's disk $d not in sysfs before its delete" >>$w/mismatches
		fi
		vm_wait 10 sh -c "[ ! -e /sys/block/$d ]" ||
			echo "round $r: $d still in /sys/block after its delete" >>$w/mismatches
		sed -i "${line}d" $w/model
		removed=$((removed + 1))
		echo "sdswarm-vm: round $r: LUN $lun removed, $d (index $idx) gone"
	done
	# Add three LUNs, one at a time: each must get the lowest free index.
	k=0
	while [ $k -lt 3 ]; do
		k=$((k + 1))
		want_idx=$(lowest_free)
		want_name=$(sdnum name "$want_idx")
		want_devt=$(sdnum devt "$want_idx")
		t0=$(vm_uptime)
		out=$(sdswarm lun add --group hot 2>&1) ||
			{ vm_fail "round $r: sdswarm lun add: $out"; break 2; }
		lun=$(echo "$out" | sed -n 's/^added LUN \([0-9]*\).*/\1/p')
		[ -n "$lun" ] || { vm_fail "round $r: lun add answered '$out'"; break 2; }
		got=""
		there() { got=$(disk_of_lun "$lun"); }
		if vm_wait "$wait_s" there; then
			aen=$((aen + 1))
		else
			# No AEN-driven scan in time: rescan ourselves.
			session_rescan
			vm_wait 10 there ||
				{ echo "round $r: LUN $lun never became a disk" >>$w/mismatches; continue; }
		fi
		vm_wait 10 test -e "/dev/$got" ||
			echo "round $r: no /dev/$got" >>$w/mismatches
		dt=$(vm_since "$t0")
		worst_add=$(awk -v a="$worst_add" -v b="$dt" 'BEGIN { print (b > a ? b : a) }')
		have_devt=$(cat "/sys/block/$got/dev")
		[ "$want_idx" -lt "$(awk 'BEGIN { m = -1 } $2 > m { m = $2 } END { print m }' $w/model)" ] &&
			reused=$((reused + 1))
		if [ "$got" != "$want_name" ] || [ "$have_devt" != "$want_devt" ]; then
			echo "round $r: LUN $lun is $got $have_devt, the lowest free index $want_idx is $want_name $want_devt" >>$w/mismatches
			want_idx=$(sdnum parse "$got" | cut -d' ' -f1)
		fi
		echo "$lun $want_idx" >>$w/model
		sort -n -o $w/model $w/model
		added=$((added + 1))
		echo "sdswarm-vm: round $r: LUN $lun added as $got $have_devt in $dt s (predicted $want_name $want_devt)"
	done
done

vm_stat seen "$(vm_sd_count)"
vm_stat removed "$removed"
vm_stat added "$added"
vm_stat aen_rescans "$aen"
vm_stat reused "$reused"
vm_stat add_s "$worst_add"
vm_kv luns_changed_msgs "$(dmesg_luns_changed)"
# At the end the kernel's disks are the model's, name for name.
for d in $(ls /sys/block | grep '^sd'); do
	echo "$(vm_sd_lun "$d") $(sdnum parse "$d" | cut -d' ' -f1)"
done | sort -n >$w/final
cmp -s $w/model $w/final ||
	echo "final: the kernel's LUN->index differs from the model: $(diff $w/model $w/final | grep '^[<>]' | head -2 | tr '\n' ' ')" >>$w/mismatches
[ "$(wc -l <$w/final)" -eq $((n + added - removed)) ] ||
	echo "final: $(wc -l <$w/final) disks, want $((n + added - removed))" >>$w/mismatches
vm_sysfs_names $w
vm_names_check $w 0
vm_sdswarmd_alive || vm_fail "sdswarmd died: $(tail -3 /tmp/sdswarmd.log | tr '\n' ' ')"
bad=$(wc -l <$w/mismatches)
vm_stat mismatches "$bad"
if [ "$bad" -gt 0 ]; then
	head -20 $w/mismatches | sed 's/^/sdswarm-vm: mismatch: /'
	vm_fail "$bad mismatch(es), first: $(head -1 $w/mismatches)"
else
	vm_pass "$removed LUNs removed, $added added ($reused into freed names), every name the lowest free index"
fi
iscsiadm -m node -u >/dev/null 2>&1
