# SPDX-License-Identifier: MIT
# vm-mem: 1G
# vm-timeout: 600
# sdmod-hotplug: disks come and go under the patched sd_mod, and every new
# disk takes the lowest free index, as numbering/'s allocator predicts.
# scsi_debug makes 24 LUNs; the last 8 are deleted at once (a pool to add
# back). Each of `rounds` (4) rounds deletes 2 present disks (a fixed
# pseudo-random pick; /sys/.../device/delete) and adds 3 from the pool (a
# scan of that one LUN through the host's scan file, one at a time). The
# adds and removes are replayed through `sdnum --scheme S alloc`; each added
# disk must get the name and dev_t it predicts. Twice: layout=naive with the
# ida, then layout=linux with allocator=bitmap (2.6's) after a reload.
# Figures: passes, removed, added, reused (adds into a freed index),
# mismatches.
# Parameters: sdswarm.rounds=R (default 4, at most 8)
. /usr/lib/sdswarm-vm/vm-lib.sh
. /usr/lib/sdswarm-vm/sd-lib.sh

rounds=$(vm_param rounds 4)
case $rounds in [1-8]) ;; *) vm_fail "sdswarm.rounds=$rounds: 1..8"; exit 0 ;; esac
w=/tmp/sdmod-hotplug
mkdir -p $w
vm_sd_load layout=naive || exit 0
vm_modprobe scsi_debug add_host=1 num_tgts=1 max_luns=24 delay=0 || exit 0
vm_sd_wait 120 24 || exit 0
host=$(ls /sys/class/scsi_host | head -1)
hn=${host#host}
disk_of() { # LUN: the sd name of LUN, if present
	ls "/sys/bus/scsi/devices/$hn:0:0:$1/block" 2>/dev/null
}
has_disk() { # LUN
	[ -n "$(disk_of "$1")" ]
}
present() { # LUNs with a disk
	local l
	for l in $(seq 0 23); do
		[ -d "/sys/bus/scsi/devices/$hn:0:0:$l" ] && echo "$l"
	done
}
delete_lun() { # LUN
	echo 1 >"/sys/bus/scsi/devices/$hn:0:0:$1/delete"
	vm_wait 30 test ! -e "/sys/bus/scsi/devices/$hn:0:0:$1"
}
# sd probes run asynchronously: which indices LUNs 16-23 took is not known
# in advance, so the model starts from 24 adds and the removes of their names.
seq 24 | sed 's/.*/add/' >$w/init
for l in $(seq 16 23); do
	d=$(disk_of "$l")
	delete_lun "$l" || { vm_fail "LUN $l was not deleted"; exit 0; }
	echo "remove $d" >>$w/init
done
vm_sd_wait 30 16 || exit 0

seed=12345
rnd() { # N: a pseudo-random number below N (an LCG, fixed seed)
	seed=$(((seed * 1103515245 + 12345) % 2147483648))
	echo $(((seed / 65536) % $1))
}
removed=0 added=0 reused=0 bad=0 passes=0
# pass SCHEME INIT: the rounds under the module as loaded; INIT holds the
# events that made the disks present now (K of them are adds).
pass() {
	local scheme=$1 k l d i
	k=$(grep -c '^add' "$2")
	cp "$2" $w/events
	: >$w/got
	for r in $(seq 1 "$rounds"); do
		for i in 1 2; do
			set -- $(present)
			l=$(eval echo "\${$(($(rnd $#) + 1))}")
			d=$(disk_of "$l")
			delete_lun "$l" || { vm_fail "LUN $l ($d) was not deleted"; return; }
			echo "remove $d" >>$w/events
			removed=$((removed + 1))
		done
		for i in 1 2 3; do
			set -- $(for l in $(seq 0 23); do [ -d "/sys/bus/scsi/devices/$hn:0:0:$l" ] || echo "$l"; done)
			[ $# -gt 0 ] || break
			l=$(eval echo "\${$(($(rnd $#) + 1))}")
			echo "0 0 $l" >"/sys/class/scsi_host/$host/scan"
			vm_wait 30 has_disk "$l" ||
				{ vm_fail "LUN $l: no disk 30 s after its scan"; return; }
			d=$(disk_of "$l")
			vm_wait 10 test -f "/sys/block/$d/dev"
			echo add >>$w/events
			echo "$d $(cat /sys/block/$d/dev)" >>$w/got
			added=$((added + 1))
		done
	done
	if ! sdnum --scheme "$scheme" alloc - <$w/events >$w/model 2>$w/model.err; then
		vm_fail "sdnum alloc: $(cat $w/model.err)"
		return
	fi
	# The model's answers to the adds after the first K, in order.
	awk '$1 == "add"' $w/model | tail -n +$((k + 1)) | awk '{ print $3 " " $4 }' >$w/want
	paste -d' ' $w/got $w/want | awk '$1 != $3 || $2 != $4 { print "kernel " $1 " " $2 ", sdnum " $3 " " $4 }' >$w/mismatches
	bad=$((bad + $(wc -l <$w/mismatches)))
	head -3 $w/mismatches | sed "s/^/sdswarm-vm: $scheme: /"
	# An add into a freed index: one below the highest handed out before.
	reused=$((reused + $(awk '$1 == "add" { if (n++ >= '"$k"' && $2 <= m) r++; if ($2 > m) m = $2 } END { print r + 0 }' m=-1 $w/model)))
	echo "sdswarm-vm: pass $scheme: $(tr '\n' ' ' <$w/got)"
	passes=$((passes + 1))
}
pass naive $w/init
vm_sd_unload || exit 0
vm_sd_load layout=linux allocator=bitmap || exit 0
# A fresh module probes the disks present into indices 0..K-1.
present | sed 's/.*/add/' >$w/init2
vm_sd_wait 60 "$(wc -l <$w/init2)" || exit 0
pass linux $w/init2

vm_stat passes "$passes"
vm_stat removed "$removed"
vm_stat added "$added"
vm_stat reused "$reused"
vm_stat mismatches "$bad"
[ "$passes" -eq 2 ] || vm_fail "$passes of 2 passes ran"
[ "$reused" -gt 0 ] || vm_fail "no add reused a freed index: the check saw nothing"
[ "$bad" -eq 0 ] || vm_fail "$bad added disks not named or numbered as sdnum alloc predicts"
vm_pass "$added adds, $reused into freed indices, each the name and dev_t sdnum alloc predicts (naive/ida, linux/bitmap)"
