# SPDX-License-Identifier: MIT
# vm-mem: 1G
# vm-timeout: 900
# vm-kernel: wilcox
# sdmod-wilcox-bounds: the boundaries of the wilcox layout on sdswarm's
# wilcox kernel (see sdmod-wilcox), crossed with 8 scsi_debug disks of P
# GPT partitions each (sdswarm.parts, default 63) through sd_mod's
# first_index: the module is reloaded once a case, the disks and their
# partition table stay. Cases ("PARAMS -> the disks that must appear"):
#   first_index=252     252..259: sdiv (255) is the last disk on 135 with
#                       2.6's minors (135:240), sdiw (256) is 8:256, and
#                       sdiw16 8:262400 (minor bit 18)
#   first_index=18274   sdzzw..sdaaad: sdzzz (18,277) -> sdaaaa
#   first_index=262137  262,137..262,143, the 8th refused ("no free index"):
#                       the last disk 262,143 is 135:262128 and its
#                       partition 63 135:1048575, the very last minor
#   first_index=262144  refused at load with one "sd_mod:" dmesg line a
#                       try (it does not fit the layout), nothing
#                       registered
# Each case: every disk and partition as `sdnum --scheme wilcox` (names,
# dev_t, /dev nodes), exactly the indices listed, nothing on 259.
# Figures: cases, cases_passed, mismatches, refused, checked (names).
# Parameters: sdswarm.parts=P (1..63)
. /usr/lib/sdswarm-vm/vm-lib.sh
. /usr/lib/sdswarm-vm/sd-lib.sh

parts=$(vm_param parts 63)
vm_kv parts "$parts"
case $parts in '' | *[!0-9]*) vm_fail "sdswarm.parts=$parts is not a count"; exit 0 ;; esac
[ "$parts" -ge 1 ] && [ "$parts" -le 63 ] || { vm_fail "sdswarm.parts=$parts: 1..63 fit a wilcox disk"; exit 0; }
w=/tmp/sdmod-wilcox-bounds
mkdir -p $w
vm_kv_str kernel "$(uname -r)"
vm_sd_need_layout wilcox || exit 0
vm_sd_load layout=wilcox || exit 0
vm_modprobe scsi_debug add_host=1 num_tgts=1 max_luns=8 delay=0 \
	dev_size_mb=$((parts + 8)) || exit 0
vm_sd_wait 120 8 || exit 0
vm_sd_gpt $w "$parts" || exit 0

cases=0 passed=0 bad=0 refused=0 checked=0
# case_ FIRST COUNT PARAM...: reload with layout=wilcox PARAMs; COUNT disks
# from index FIRST with their partitions must appear, 8 - COUNT be refused.
case_() {
	local first=$1 count=$2 nref c on259
	shift 2
	cases=$((cases + 1))
	c=$w/case$cases
	mkdir -p "$c"
	vm_sd_unload || return
	vm_sd_mark
	vm_sd_load layout=wilcox "$@" || return
	vm_wait 300 _vm_sd_enough "$count" $((count * parts)) ||
		{ vm_fail "$*: $(vm_sd_count) of $count disks, $(vm_sd_parts) of $((count * parts)) partitions"; return; }
	nref=0
	if [ "$count" -lt 8 ]; then
		vm_wait 60 _refusals $((8 - count)) ||
			vm_fail "$*: $(_refused) of $((8 - count)) probes refused with 'no free index'"
		nref=$(_refused)
		refused=$((refused + nref))
	fi
	sleep 0.5
	[ "$(vm_sd_count)" -eq "$count" ] || { vm_fail "$*: $(vm_sd_count) disks, want $count"; return; }
	vm_sd_kernel "$c"
	vm_sd_scheme_check "$c" wilcox "$first" "$count"
	on259=$(grep -c ' 259:' "$c/kernel")
	[ "$on259" -eq 0 ] || vm_fail "$*: $on259 partitions on 259"
	[ "$(wc -l <"$c/kernel")" -eq $((count * (parts + 1))) ] ||
		vm_fail "$*: $(wc -l <"$c/kernel") names, want $((count * (parts + 1)))"
	bad=$((bad + VM_SD_BAD))
	checked=$((checked + $(wc -l <"$c/kernel")))
	echo "sdswarm-vm: case $cases ($*): $(grep -E '^sd[a-z]+ ' "$c/kernel" | cut -d' ' -f1,2 | tr '\n' ' ')refused $nref, $VM_SD_BAD mismatches"
	[ "$VM_SD_BAD" -eq 0 ] && [ "$on259" -eq 0 ] && passed=$((passed + 1))
}
_refused() {
	vm_sd_since_mark | grep -c 'sd_probe: no free index'
}
_refusals() {
	[ "$(_refused)" -ge "$1" ]
}
has() { # CASE "NAME MAJ:MIN": the case's kernel list holds that line
	grep -qx "$2" "$w/case$1/kernel" || vm_fail "case $1: no '$2' (have: $(grep "^${2%% *} " "$w/case$1/kernel"))"
}

case_ 252 8 first_index=252
has 1 "sdiv 135:240"
has 1 "sdiw 8:256"
[ "$parts" -lt 15 ] || has 1 "sdiv15 135:255"
[ "$parts" -lt 16 ] || has 1 "sdiw16 8:262400"
case_ 18274 8 first_index=18274
has 2 "sdzzz 70:18256"
has 2 "sdaaaa 70:18272"
case_ 262137 7 first_index=262137
last=$(echo 262143 | sdnum name -)
has 3 "$last 135:262128"
[ "$parts" -lt 63 ] || has 3 "${last}63 135:1048575"

# A first index past the layout: the load is refused with one line and
# nothing is left registered.
vm_sd_unload || exit 0
vm_sd_mark
if err=$(modprobe sd_mod layout=wilcox first_index=262144 2>&1); then
	vm_fail "sd_mod loaded with first_index=262144 under layout wilcox"
else
	lines=$(vm_sd_since_mark | grep -c 'sd_mod: first_index=262144 does not fit layout wilcox')
	vm_kv_str refused_load "$(vm_sd_since_mark | grep -m1 'sd_mod: ' | sed 's/^\[[^]]*\] //')"
	# kmod may try the load twice (finit_module, then init_module), and
	# the kernel runs the failing init each time: one line a try.
	[ "$lines" -ge 1 ] && [ "$lines" -le 2 ] ||
		vm_fail "first_index=262144: $lines 'does not fit layout wilcox' lines in dmesg, want 1 a try ($err)"
	[ ! -d /sys/module/sd_mod ] || vm_fail "first_index=262144: sd_mod left in /sys/module"
	[ "$(vm_sd_count)" -eq 0 ] || vm_fail "first_index=262144: $(vm_sd_count) sd disks after a refused load"
	cases=$((cases + 1))
	passed=$((passed + 1))
fi

vm_stat cases "$cases"
vm_stat cases_passed "$passed"
vm_stat mismatches "$bad"
vm_stat refused "$refused"
vm_kv checked "$checked"
[ "$refused" -eq 1 ] || vm_fail "$refused probes refused, want 1 (the 8th past 262,143)"
[ "$passed" -eq "$cases" ] || vm_fail "$((cases - passed)) of $cases cases failed"
vm_pass "$cases wilcox boundary cases as sdnum predicts ($checked names), the last minor 135:1048575 reached, a first index past 2^18 refused"
