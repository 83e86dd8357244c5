# SPDX-License-Identifier: MIT
# vm-mem: 1G
# vm-timeout: 600
# sdmod-bounds: the boundaries of each layout, crossed with 8 scsi_debug
# disks instead of thousands through the patched sd_mod's first_index (and
# preoccupy): the module is reloaded once a case, the disks stay. Cases
# ("LAYOUT PARAMS -> disks that must appear"):
#   linux  first_index=18274    sdzzw..sdaaad: sdzzz (18,277) -> sdaaaa
#   naive  first_index=16380    16,380..16,387: the major changes 8 -> 65
#                               at 16,384 (minor 0 again)
#   naive  first_index=262137   262,137..262,143 (the last disk), the 8th
#                               refused: "no free index" in dmesg
#   linux  first_index=1048572  the last 4 of 2^20, 4 refused
#   legacy preoccupy=250        250..255, 2 refused: 2.6.0's 256 disks
#   naive  allocator=bitmap first_index=16380  the 2.6 bitmap, same names
# Each case's disks are checked against `sdnum --scheme LAYOUT` (legacy:
# the linux scheme, its numbers are the same below 256) for exactly the
# indices listed, names, dev_t and /dev nodes.
# Figures: cases, cases_passed, mismatches, refused (disks turned away).
# Parameters: none.
. /usr/lib/sdswarm-vm/vm-lib.sh
. /usr/lib/sdswarm-vm/sd-lib.sh

w=/tmp/sdmod-bounds
mkdir -p $w
vm_sd_load || exit 0
vm_modprobe scsi_debug add_host=1 num_tgts=1 max_luns=8 delay=0 || exit 0
vm_sd_wait 120 8 || exit 0

cases=0 passed=0 bad=0 refused=0
# case SCHEME FIRST COUNT PARAM...: reload with PARAMs; COUNT disks from
# index FIRST must appear, 8 - COUNT be refused.
case_() {
	local scheme=$1 first=$2 count=$3 nref c
	shift 3
	cases=$((cases + 1))
	c=$w/case$cases
	mkdir -p "$c"
	vm_sd_unload || return
	vm_sd_mark
	vm_sd_load "$@" || return
	vm_wait 120 _vm_sd_enough "$count" 0 || { vm_fail "$*: $(vm_sd_count) of $count disks"; return; }
	nref=0
	if [ "$count" -lt 8 ]; then
		# The turned-away probes say so, once each.
		vm_wait 60 _refusals $((8 - count)) ||
			vm_fail "$*: $(_refused) of $((8 - count)) probes refused with 'no free index'"
		nref=$(_refused)
		refused=$((refused + nref))
	fi
	sleep 0.5
	[ "$(vm_sd_count)" -eq "$count" ] || { vm_fail "$*: $(vm_sd_count) disks, want $count"; return; }
	vm_sd_kernel "$c"
	vm_sd_scheme_check "$c" "$scheme" "$first" "$count"
	bad=$((bad + VM_SD_BAD))
	echo "sdswarm-vm: case $cases ($*): $(cut -d' ' -f1,2 "$c/kernel" | tr '\n' ' ')refused $nref, $VM_SD_BAD mismatches"
	[ "$VM_SD_BAD" -eq 0 ] && passed=$((passed + 1))
}
_refused() {
	vm_sd_since_mark | grep -c 'sd_probe: no free index'
}
_refusals() {
	[ "$(_refused)" -ge "$1" ]
}

case_ linux 18274 8 first_index=18274
grep -q '^sdzzz ' $w/case1/kernel && grep -q '^sdaaaa ' $w/case1/kernel ||
	vm_fail "case 1 lacks sdzzz or sdaaaa"
case_ naive 16380 8 layout=naive first_index=16380
grep -q '^sdxfd 8:1048512$' $w/case2/kernel && grep -q '^sdxfe 65:0$' $w/case2/kernel ||
	vm_fail "case 2: index 16,383 is not sdxfd 8:1048512 or 16,384 not sdxfe 65:0"
case_ naive 262137 7 layout=naive first_index=262137
grep -q "^$(echo 262143 | sdnum name -) 135:1048512$" $w/case3/kernel ||
	vm_fail "case 3: the last disk 262,143 is not on 135:1048512"
case_ linux 1048572 4 first_index=1048572
case_ linux 250 6 layout=legacy preoccupy=250
case_ naive 16380 8 layout=naive allocator=bitmap first_index=16380

vm_stat cases "$cases"
vm_stat cases_passed "$passed"
vm_stat mismatches "$bad"
vm_stat refused "$refused"
[ "$refused" -eq 7 ] || vm_fail "$refused probes refused, want 1 + 4 + 2"
[ "$passed" -eq "$cases" ] || vm_fail "$((cases - passed)) of $cases cases had mismatches"
vm_pass "$cases boundary cases as sdnum predicts, $refused disks refused past the end of the index space"
