# SPDX-License-Identifier: MIT
# Guest-side helpers for the scenarios of sdswarm's patched sd driver
# (testhost/sd, built by testhost/build-sd-module into /usr/lib/sdswarm-vm/sd
# of the image). Sourced after vm-lib.sh (busybox sh).
#   vm_sd_have                  whether the image holds the patched module
#                               (or the kernel's own sd_mod is the patched
#                               one: sdswarm's wilcox kernel)
#   vm_sd_load [PARAM=VALUE..]  its dependencies with modprobe, then insmod
#                               of the patched sd_mod with PARAMs (modprobe
#                               sd_mod PARAMs on the wilcox kernel)
#   vm_sd_knows LAYOUT          whether the patched sd_mod has LAYOUT
#   vm_sd_unload                rmmod sd_mod (retried for 30 s), until no
#                               sd disk is left
#   vm_sd_stat KEY              a field of /sys/module/sd_mod/parameters/stats
#   vm_sd_kernel W              W/kernel: "NAME MAJ:MIN" of every sd disk and
#                               partition, sorted
#   vm_sd_scheme_check W SCHEME FIRST N  W/kernel against `sdnum --scheme
#                               SCHEME`: each name parses to an index and
#                               partition whose dev_t and name are the
#                               kernel's; the disks are exactly FIRST..
#                               FIRST+N-1; linux's partitions 16+ must be on
#                               259, every other scheme's never. Problems
#                               go to W/mismatches (VM_SD_BAD counts them)
#   vm_sd_wait TIMEOUT N [P]    vm_wait_sd, failing with the counts
VM_SD_KO=/usr/lib/sdswarm-vm/sd/sd_mod.ko
VM_SD_BENCH_KO=/usr/lib/sdswarm-vm/sd/sd_idabench.ko

vm_sd_have() {
	[ -f "$VM_SD_KO" ] || _vm_sd_intree
}

# sdswarm's own kernel (testhost/build-kernel) has the patched sd_mod among
# its modules, where modprobe finds it, instead of beside the image's.
_vm_sd_intree() {
	modinfo -F parm sd_mod 2>/dev/null | grep -q '^layout:'
}

vm_sd_knows() { # LAYOUT: whether the patched sd_mod has it
	if [ -f "$VM_SD_KO" ]; then
		modinfo -F parm "$VM_SD_KO"
	else
		modinfo -F parm sd_mod 2>/dev/null
	fi | grep '^layout:' | grep -qw "$1"
}

# What sd_mod needs loaded first (scsi_mod, the CRC helpers of sd_dif), as
# modinfo names them in the patched module itself.
vm_sd_deps() {
	local d
	for d in $(modinfo -F depends "$VM_SD_KO" | tr ',' ' '); do
		modprobe "$d" || return 1
	done
}

vm_sd_load() {
	local err
	if ! vm_sd_have; then
		vm_fail "no patched sd_mod in the image (testhost/build-sd-module: see build/vm/logs/sd-module.log)"
		return 1
	fi
	if [ ! -f "$VM_SD_KO" ]; then
		if ! err=$(modprobe sd_mod "$@" 2>&1); then
			vm_fail "modprobe sd_mod $*: $err; dmesg: $(dmesg | tail -1)"
			return 1
		fi
		return 0
	fi
	vm_sd_deps || { vm_fail "cannot load sd_mod's dependencies"; return 1; }
	if ! err=$(insmod "$VM_SD_KO" "$@" 2>&1); then
		vm_fail "insmod sd_mod $*: $err; dmesg: $(dmesg | tail -1)"
		return 1
	fi
}

# A block device closed through io_uring is released a moment after its
# last close (the final fput is deferred), so rmmod may find sd_mod still
# in use right after an open-all: try again for up to 30 s.
vm_sd_unload() {
	vm_wait 30 rmmod sd_mod 2>/dev/null ||
		{ vm_fail "rmmod sd_mod failed for 30 s (refcnt $(cat /sys/module/sd_mod/refcnt 2>/dev/null))"; return 1; }
	vm_wait 60 _vm_sd_none || { vm_fail "sd disks left after rmmod sd_mod"; return 1; }
}

_vm_sd_none() {
	[ "$(vm_sd_count)" -eq 0 ]
}

vm_sd_stat() {
	tr ' ' '\n' </sys/module/sd_mod/parameters/stats | sed -n "s/^$1=//p"
}

vm_sd_kernel() {
	vm_sysfs_names "$1"
	sort "$1/kernel" -o "$1/kernel"
}

vm_sd_wait() {
	vm_wait "$1" _vm_sd_enough "$2" "${3:-0}" && return 0
	vm_fail "only $(vm_sd_count) of $2 sd disks and $(vm_sd_parts) of ${3:-0} partitions appeared within $1 s"
	return 1
}

VM_SD_BAD=0
vm_sd_scheme_check() {
	local w=$1 scheme=$2 first=$3 n=$4
	: >"$w/mismatches"
	cut -d' ' -f1 "$w/kernel" | sdnum --scheme "$scheme" parse - >"$w/idx" 2>&1
	# linux's partitions 16 and up are on 259 in scan order: only the
	# major is predictable (vm_names_check does the same).
	awk -v s="$scheme" '$1 == "error:" { print "0 0"; next }
		s == "linux" && $2 >= 16 { print $1 " 0"; next } { print }' "$w/idx" |
		sdnum --scheme "$scheme" devt - >"$w/devt" 2>&1
	sed 's/^error.*/0 0/' "$w/idx" | sdnum --scheme "$scheme" name - >"$w/name" 2>&1
	paste -d' ' "$w/kernel" "$w/idx" "$w/devt" "$w/name" >"$w/joined"
	# joined: NAME MAJ:MIN INDEX PART DEVT SDNUM-NAME
	awk -v s="$scheme" '
		$3 == "error:" { print "unparsable " $1; next }
		s == "linux" && $4 >= 16 {
			split($2, d, ":")
			if (d[1] != 259) print "devt " $1 ": kernel " $2 ", want major 259"
			else if (seen[$2]++) print "devt " $1 ": " $2 " given twice"
			next
		}
		$2 ~ /^259:/ { print "devt " $1 ": kernel " $2 " on 259 under " s; next }
		$5 != $2 { print "devt " $1 ": kernel " $2 ", sdnum " $5; next }
		$6 != $1 { print "name " $1 ": sdnum names index " $3 " part " $4 " " $6 }' \
		"$w/joined" >>"$w/mismatches"
	# The disks are exactly sdnum's names for FIRST..FIRST+N-1.
	seq "$first" $((first + n - 1)) | sdnum name - | sort >"$w/want"
	awk '$4 == 0 { print $1 }' "$w/joined" | sort >"$w/have"
	vm_missing "$w/want" "$w/have" | head -3 | sed 's/^/missing disk /' >>"$w/mismatches"
	vm_missing "$w/have" "$w/want" | head -3 | sed 's/^/unexpected disk /' >>"$w/mismatches"
	# The nodes devtmpfs made carry the same numbers (stat prints hex).
	cut -d' ' -f1 "$w/kernel" | sed 's|^|/dev/|' | xargs -r stat -c '%n %t %T' 2>&1 |
		awk 'NF == 3 { sub("/dev/", "", $1); printf "%s %d:%d\n", $1, ("0x" $2) + 0, ("0x" $3) + 0; next }
			{ print "stat-error " $0 }' >"$w/nodes"
	awk 'NR == FNR { k[$1] = $2; next }
		!($1 in k) { print "node " $0 " not in sysfs"; next }
		k[$1] != $2 { print "node /dev/" $1 " is " $2 ", sysfs " k[$1] }' \
		"$w/kernel" "$w/nodes" >>"$w/mismatches"
	VM_SD_BAD=$(wc -l <"$w/mismatches")
	[ "$VM_SD_BAD" -eq 0 ] || head -5 "$w/mismatches" | sed "s/^/sdswarm-vm: $scheme mismatch: /"
}

# vm_sd_mark, vm_sd_since_mark: what the kernel logged after a marker line.
# (Counting dmesg's lines does not do: once the ring buffer is full, old
# lines go as new ones come.)
VM_SD_MARK="" VM_SD_MARKS=0
vm_sd_mark() {
	VM_SD_MARKS=$((VM_SD_MARKS + 1))
	VM_SD_MARK="sdswarm-vm: mark $VM_SD_MARKS at $(vm_uptime)"
	echo "$VM_SD_MARK" >/dev/kmsg
}
vm_sd_since_mark() {
	dmesg | awk -v m="$VM_SD_MARK" 'f { print } index($0, m) { f = 1 }'
}

# vm_sd_gpt W PARTS: a GPT with PARTS partitions of 1 MiB on /dev/sda.
# scsi_debug's disks share one store, so every disk then holds it; a reload
# of sd_mod has each probe scan it.
vm_sd_gpt() {
	local w=$1 parts=$2 i=1
	{
		echo "label: gpt"
		while [ $i -le "$parts" ]; do
			echo "size=1MiB"
			i=$((i + 1))
		done
	} >"$w/table"
	sfdisk -q /dev/sda <"$w/table" >"$w/sfdisk.log" 2>&1 ||
		{ vm_fail "sfdisk: $(tail -2 "$w/sfdisk.log" | tr '\n' ' ')"; return 1; }
}

# vm_sd_need_layout LAYOUT: fails the scenario unless the patched sd_mod
# has LAYOUT (wilcox: only sdswarm's own kernel).
vm_sd_need_layout() {
	vm_sd_have || { vm_fail "no patched sd_mod in the image (testhost/build-sd-module: see build/vm/logs/sd-module.log)"; return 1; }
	vm_sd_knows "$1" && return 0
	if [ "$1" = wilcox ]; then
		vm_fail "layout wilcox needs sdswarm's wilcox kernel: sdswarm-testhost run --kernel wilcox $(vm_param scenario '')"
	else
		vm_fail "the patched sd_mod has no layout $1"
	fi
	return 1
}
