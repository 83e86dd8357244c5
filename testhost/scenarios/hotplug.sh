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
# freed name is reused first. The model of that allocator is `sdnum alloc`
# (numbering/'s idx, the ida's contract) replaying every add and remove so
# far, each disk tagged with its LUN: each new disk's name and MAJOR:MINOR
# must be what it answers for the next add, and each removed LUN's disk
# the name it frees.
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

vm_iscsi_up $w/sdswarm.conf $portal $iqn || exit 0
vm_wait_sd 60 "$n" || { vm_fail "$(vm_sd_count) of $n disks at start"; exit 0; }

# The model: $w/events, every add and remove so far as `sdnum alloc` reads
# them ("add lunL", "remove lunL"); replayed, they give $w/model, the
# "LUN INDEX" of every disk present, sorted by LUN.
: >$w/mismatches
model_events() { # "LUN INDEX" lines in: the events that allocate just those
	sort -k2n | awk 'BEGIN { m = -1 } { l[$2] = $1; if ($2 > m) m = $2 }
		END {
			for (i = 0; i <= m; i++)
				if (i in l) print "add lun" l[i]; else print "add"
			for (i = 0; i <= m; i++)
				if (!(i in l)) print "remove " i
		}'
}
# model_replay [EVENT]: replay $w/events through sdnum alloc; model_last is
# its answer to the last event ("add|remove INDEX NAME MAJ:MIN [lunL]").
# With no EVENT $w/model is rebuilt; with one, EVENT is only asked about
# (the answer to it ends the replay) and neither kept nor modelled.
model_replay() {
	{ cat $w/events; [ -z "${1:-}" ] || echo "$1"; } | sdnum alloc >$w/alloc 2>$w/alloc.err || {
		vm_fail "sdnum alloc over the model's events: $(tail -1 $w/alloc.err)"
		return 1
	}
	model_last=$(tail -1 $w/alloc)
	[ -z "${1:-}" ] || return 0
	awk '$5 ~ /^lun/ { l = substr($5, 4); if ($1 == "add") m[l] = $2; else delete m[l] }
		END { for (l in m) print l, m[l] }' $w/alloc | sort -n >$w/model
}
# At the start the model is what the kernel has.
for d in $(ls /sys/block | grep '^sd'); do
	echo "$(vm_sd_lun "$d") $(sdnum parse "$d" | cut -d' ' -f1)"
done | model_events >$w/events
model_replay || exit 0
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
		# The disk the model frees: "remove INDEX NAME MAJ:MIN lunL".
		model_replay "remove lun$lun" || break 2
		idx=$(echo "$model_last" | cut -d' ' -f2)
		d=$(echo "$model_last" | cut -d' ' -f3)
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
		echo "remove lun$lun" >>$w/events
		model_replay || break 2
		removed=$((removed + 1))
		echo "sdswarm-vm: round $r: LUN $lun removed, $d (index $idx) gone"
	done
	# Add three LUNs, one at a time: each must get the lowest free index.
	k=0
	while [ $k -lt 3 ]; do
		k=$((k + 1))
		# What the next add gets: "add INDEX NAME MAJ:MIN".
		model_replay add || break 2
		want_idx=$(echo "$model_last" | cut -d' ' -f2)
		want_name=$(echo "$model_last" | cut -d' ' -f3)
		want_devt=$(echo "$model_last" | cut -d' ' -f4)
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
			# The model follows the kernel from here on.
			{ cat $w/model; echo "$lun $(sdnum parse "$got" | cut -d' ' -f1)"; } |
				model_events >$w/events.new
			mv $w/events.new $w/events
		else
			echo "add lun$lun" >>$w/events
		fi
		model_replay || break 2
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
