# SPDX-License-Identifier: MIT
# Guest-side helpers, sourced by /init and by every scenario (busybox sh).
#   vm_param NAME DEFAULT   sdswarm.NAME=VALUE from the kernel command line
#   vm_uptime               seconds since boot (10 ms resolution)
#   vm_kv KEY NUMBER        a figure for the JSON line
#   vm_kv_str KEY STRING    a string for the JSON line
#   vm_stat KEY NUMBER      a figure that also goes on the verdict line
#   vm_pass [NOTE]          the scenario passed (unless it failed before)
#   vm_fail REASON          the scenario failed; the first reason is kept
#   vm_check DESC CMD...    run CMD; vm_fail with DESC if it fails
#   vm_modprobe MOD [ARG..] load a module; vm_fail naming it if it cannot
#   vm_modprobe_wait T MOD [ARG..]
#                           the same, with vm_wait's progress lines while
#                           it loads (scsi_debug's thousands of disks)
#   vm_wait TIMEOUT CMD...  poll CMD every 0.1 s until it succeeds;
#                           return 1 after TIMEOUT seconds. Every 15 s
#                           of waiting (sdswarm.progress=S; 0: never)
#                           one "SDSWARM-VM-PROGRESS:" console line with
#                           the sd disks and SCSI devices so far, which
#                           the host prints as it comes
#   vm_mem_used_kib         MemTotal - MemAvailable
#   vm_report               print the JSON and verdict lines (init does)
#   vm_run_scenario         run sdswarm.scenario= from /scenarios in a
#                           subshell and settle its verdict (init does)
#   vm_since T0             seconds since uptime T0, two decimals
#   vm_missing WANT HAVE    lines of file WANT that file HAVE lacks
#   vm_sdswarmd CONF [ARG..]  start sdswarmd in the background (log in
#                           /tmp/sdswarmd.log), wait for its control socket
#   vm_sdswarmd_alive       whether that daemon still runs
#   vm_iscsid               start iscsid (log /tmp/iscsid.log) and wait for it
#   vm_iscsi_login PORTAL [TARGET]  discover PORTAL and log in to TARGET
#                           (default: every target it offers)
#   vm_iscsi_scale_conf FILE N TARGETS SIZE PORTAL  sdswarmd's config for
#                           N LUNs of SIZE in memory, over iSCSI on PORTAL
#                           as TARGETS targets of at most 16,384 (scale,
#                           quarter-million)
#   vm_iscsi_target CONF    sd_mod, sdswarmd with CONF and iscsid: all an
#                           iSCSI scenario needs before its login
#   vm_iscsi_up CONF PORTAL [TARGET]  vm_iscsi_target, then vm_iscsi_login
#   vm_sd_count             how many sd disks /sys/block holds
#   vm_sd_parts             how many partitions of sd disks it holds
#   vm_wait_sd TIMEOUT N [P]  wait for N sd disks (and P partitions)
#   vm_sd_lun NAME          LUN of disk NAME as the target numbers it (flat
#                           space addressing undone: 0x4000+L is L)
#   vm_sd_table_lun NAME LPT  the daemon's table LUN of disk NAME: target
#                           tI's LUN L is I*LPT+L (the session's target name)
#   vm_names_check W N      check the "NAME MAJ:MIN" lines of W/kernel
#                           against sdnum (scheme linux); problems go to
#                           W/mismatches, one a line
#   vm_sysfs_names W        W/kernel from every sd disk and partition
#   vm_disks_check W N MANY  names and dev_t of N disks in LUN order, the
#                           last MANY with 20 partitions (16-20 on 259)
#   vm_lun_order W [LPT]    which LUN got which name, against sdswarm names
#   vm_sample_luns N FEW    LUNs at every name-length boundary N crosses
#   vm_sd_hold              new SCSI devices stay without a driver (the
#                           SCSI bus's drivers_autoprobe off) until bound
#   vm_scsi_disks           how many disk-type SCSI devices the bus holds
#   vm_wait_scsi TIMEOUT N  wait for N of them (bound or not)
#   vm_lun_keys [LPT]       H:C:T:L lines in, "KEY H:C:T:L" out: KEY sorts
#                           in LUN order (table LUN with LPT)
#   vm_sd_bind_luns TIMEOUT N [LPT]  wait for N disk-type SCSI devices,
#                           then bind sd to each unbound one in LUN order,
#                           one at a time: names exactly in LUN order
#   vm_sd_release           autoprobe on again; probes what is left over
#   (sdswarm.bind=lun|auto: auto makes those three do nothing)
VM_RUN=${VM_RUN:-/run/sdswarm-vm}
VM_KV=$VM_RUN/kv
VM_STATS=$VM_RUN/stats
VM_VERDICT=$VM_RUN/verdict
mkdir -p "$VM_RUN"

vm_param() {
	local w
	for w in $(cat /proc/cmdline); do
		case $w in
		sdswarm."$1"=*) echo "${w#*=}"; return 0 ;;
		esac
	done
	echo "$2"
}

vm_uptime() {
	cut -d' ' -f1 /proc/uptime
}

_vm_put() { # KEY JSONVALUE: a later value replaces an earlier one
	if [ -f "$VM_KV" ]; then
		grep -v "^$1	" "$VM_KV" >"$VM_KV.new"
		mv "$VM_KV.new" "$VM_KV"
	fi
	printf '%s\t%s\n' "$1" "$2" >>"$VM_KV"
}

vm_kv() {
	case $2 in
	'' | *[!0-9.-]*) _vm_put "$1" null ;;
	*) _vm_put "$1" "$2" ;;
	esac
}

vm_kv_str() {
	local v
	v=$(printf '%s' "$2" | sed 's/\\/\\\\/g; s/"/\\"/g' | tr '\t\r\n' '   ')
	_vm_put "$1" "\"$v\""
}

vm_stat() {
	vm_kv "$1" "$2"
	grep -qx "$1" "$VM_STATS" 2>/dev/null || echo "$1" >>"$VM_STATS"
}

vm_fail() {
	echo "sdswarm-vm: FAIL: $*"
	if [ "$(cut -d' ' -f1 "$VM_VERDICT" 2>/dev/null)" != FAIL ]; then
		echo "FAIL $*" >"$VM_VERDICT"
	fi
	return 0
}

vm_pass() {
	[ "$(cut -d' ' -f1 "$VM_VERDICT" 2>/dev/null)" = FAIL ] && return 0
	echo "PASS $*" >"$VM_VERDICT"
}

vm_check() {
	local desc=$1
	shift
	if "$@"; then
		echo "sdswarm-vm: ok: $desc"
	else
		vm_fail "$desc"
		return 1
	fi
}

vm_modprobe() {
	local err
	if ! err=$(modprobe "$@" 2>&1); then
		vm_fail "modprobe $*: $(echo "$err" | tail -1)"
		return 1
	fi
}

# vm_modprobe_wait TIMEOUT MODULE [ARGS...]: modprobe in the background,
# vm_wait's progress lines while it runs (a scsi_debug load of thousands
# of disks returns only when the last is probed, scsi_mod.scan=sync), its
# failure through vm_fail as vm_modprobe's; 1 also when it outlives TIMEOUT.
vm_modprobe_wait() {
	local t=$1 rc pid f=$VM_RUN/modprobe
	shift
	rm -f "$f.rc"
	# The exit status in a file: a finished child stays a zombie, which
	# kill -0 still finds, until it is waited for.
	( modprobe "$@" 2>"$f.err"; echo $? >"$f.rc.tmp"; mv "$f.rc.tmp" "$f.rc" ) &
	pid=$!
	if ! vm_wait "$t" test -s "$f.rc"; then
		vm_fail "modprobe $*: still loading after ${t} s"
		return 1
	fi
	wait "$pid"
	rc=$(cat "$f.rc")
	[ "$rc" = 0 ] && return 0
	vm_fail "modprobe $*: $(tail -1 "$f.err")"
	return 1
}

VM_PROGRESS_S=${VM_PROGRESS_S:-$(sed -n 's/.*sdswarm\.progress=\([0-9]*\).*/\1/p' /proc/cmdline 2>/dev/null)}
VM_PROGRESS_S=${VM_PROGRESS_S:-15}
VM_PROGRESS_OUT=${VM_PROGRESS_OUT:-/dev/console}

vm_wait() {
	local t=$1 end t0 next now
	shift
	t0=$(vm_uptime)
	end=$(awk -v u="$t0" -v t="$t" 'BEGIN { printf "%.2f", u + t }')
	next=$(awk -v u="$t0" -v p="$VM_PROGRESS_S" 'BEGIN { printf "%d", (p > 0 ? u + p : -1) }')
	until "$@"; do
		now=$(vm_uptime)
		awk -v u="$now" -v e="$end" 'BEGIN { exit !(u >= e) }' &&
			return 1
		if [ "$next" -ge 0 ] && [ "${now%.*}" -ge "$next" ]; then
			echo "SDSWARM-VM-PROGRESS: $(vm_since "$t0") s into a wait of ${t} s: $(vm_sd_count) sd disks, $(ls /sys/bus/scsi/devices 2>/dev/null | grep -c ':') SCSI devices, $(($(vm_mem_used_kib) / 1024)) MiB used" >>"$VM_PROGRESS_OUT"
			next=$((next + VM_PROGRESS_S))
		fi
		sleep 0.1
	done
}

vm_mem_used_kib() {
	awk '$1 == "MemTotal:" { t = $2 } $1 == "MemAvailable:" { a = $2 }
		END { print t - a }' /proc/meminfo
}

vm_report() {
	local verdict reason k line=""
	verdict=$(cut -d' ' -f1 "$VM_VERDICT" 2>/dev/null)
	reason=$(cut -d' ' -f2- "$VM_VERDICT" 2>/dev/null)
	[ "$verdict" = PASS ] || verdict=FAIL
	vm_kv_str result "$verdict"
	vm_kv_str reason "$reason"
	printf 'SDSWARM-VM-JSON: {%s}\n' "$(awk -F'\t' '{ printf "%s\"%s\":%s", (NR > 1 ? "," : ""), $1, $2 }' "$VM_KV")"
	if [ -f "$VM_STATS" ]; then
		for k in $(cat "$VM_STATS"); do
			line="$line $k=$(awk -F'\t' -v k="$k" '$1 == k { print $2 }' "$VM_KV")"
		done
	fi
	echo "SDSWARM-VM-RESULT: $verdict $(vm_param scenario none)$line${reason:+ -- $reason}"
}

# vm_run_scenario: what init (and the Debian host's sdswarm-exec.service)
# does: the boot's figures, then /scenarios/NAME.sh in a subshell (so that
# its exit or set -e cannot end the caller), then the verdict: a scenario
# that ends without one, or exits non-zero after a PASS, fails.
vm_run_scenario() {
	local script rc
	vm_kv_str scenario "${VM_SCENARIO:=$(vm_param scenario none)}"
	vm_kv_str kernel "$(uname -r)"
	vm_kv boot_s "$(vm_uptime)"
	vm_kv cpus "$(grep -c '^processor' /proc/cpuinfo)"
	vm_kv mem_total_kib "$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)"
	echo "sdswarm-vm: kernel $(uname -r) up in $(vm_uptime) s; scenario $VM_SCENARIO"
	script=/scenarios/$VM_SCENARIO.sh
	if [ "$VM_SCENARIO" = none ]; then
		vm_fail "no sdswarm.scenario= on the kernel command line"
	elif [ ! -f "$script" ]; then
		vm_fail "no scenario '$VM_SCENARIO' in the image (have: $(cd /scenarios && ls | sed 's/\.sh$//' | tr '\n' ' '))"
	else
		(. "$script")
		rc=$?
		if [ ! -s "$VM_VERDICT" ]; then
			if [ $rc -eq 0 ]; then
				vm_fail "scenario ended without a verdict"
			else
				vm_fail "scenario exited with status $rc before a verdict"
			fi
		elif [ $rc -ne 0 ] && [ "$(cut -d' ' -f1 "$VM_VERDICT")" = PASS ]; then
			vm_fail "scenario passed but exited with status $rc"
		fi
	fi
}

# vm_missing WANT HAVE: the lines of WANT not in HAVE (busybox has no comm).
vm_missing() {
	awk 'NR == FNR { h[$0] = 1; next } !($0 in h)' "$2" "$1"
}

vm_since() {
	awk -v a="$1" -v b="$(vm_uptime)" 'BEGIN { printf "%.2f", b - a }'
}

VM_SDSWARMD_PID=""
vm_sdswarmd() {
	local conf=$1 sock
	shift
	sock=$(sed -n 's/^control *= *//p' "$conf" | head -1)
	sock=${sock:-/run/sdswarm/control}
	sdswarmd --config "$conf" "$@" >>/tmp/sdswarmd.log 2>&1 &
	VM_SDSWARMD_PID=$!
	if ! vm_wait 60 test -S "$sock"; then
		vm_fail "sdswarmd made no control socket $sock in 60 s: $(tail -3 /tmp/sdswarmd.log | tr '\n' ' ')"
		return 1
	fi
	echo "sdswarm-vm: sdswarmd $VM_SDSWARMD_PID up ($(grep -c . /tmp/sdswarmd.log) log lines)"
}

vm_sdswarmd_alive() {
	[ -n "$VM_SDSWARMD_PID" ] && kill -0 "$VM_SDSWARMD_PID" 2>/dev/null
}

_vm_iscsid_up() {
	# Status 21 is "no sessions": iscsid answered. 20 is "cannot connect".
	iscsiadm -m session >/dev/null 2>&1
	[ $? -ne 20 ]
}

vm_iscsid() {
	_vm_iscsid_up && return 0
	modprobe iscsi_tcp 2>/dev/null || { vm_fail "modprobe iscsi_tcp failed"; return 1; }
	iscsid -f >>/tmp/iscsid.log 2>&1 &
	if ! vm_wait 30 _vm_iscsid_up; then
		vm_fail "iscsid did not answer in 30 s: $(tail -3 /tmp/iscsid.log | tr '\n' ' ')"
		return 1
	fi
}

vm_iscsi_login() {
	local portal=$1 target=${2:-} out
	vm_iscsid || return 1
	if ! out=$(iscsiadm -m discovery -t sendtargets -p "$portal" 2>&1); then
		vm_fail "iSCSI discovery of $portal failed: $(echo "$out" | tail -1)"
		return 1
	fi
	echo "$out" | sed 's/^/sdswarm-vm: discovered: /'
	if [ -n "$target" ]; then
		out=$(iscsiadm -m node -T "$target" -p "$portal" --login 2>&1)
	else
		out=$(iscsiadm -m node -p "$portal" --login 2>&1)
	fi || {
		vm_fail "iSCSI login to $portal${target:+ $target} failed: $(echo "$out" | tail -1)"
		return 1
	}
	echo "$out" | tail -2 | sed 's/^/sdswarm-vm: /'
}

vm_iscsi_scale_conf() { # FILE N TARGETS SIZE PORTAL
	cat >"$1" <<EOF
# $2 LUNs of $4 over iSCSI, $3 target(s) of at most 16384
[target]
seed = $2
max_luns = $(($3 * 16384))
[luns]
count = $2
size = $4
[store]
type = mem
[iscsi]
enabled = yes
portal = $5
targets = $3
threads = 2
max_sessions = 64
EOF
}

# vm_iscsi_target CONF: what every scenario that logs in to sdswarmd over
# iSCSI starts with: sd_mod (so that the login's scan makes disks), the
# daemon with CONF, and iscsid. VM_LOGIN_T0 and VM_LOGIN_MEM0 are the
# uptime and vm_mem_used_kib once all three are up, just before a login:
# the start of the probe figures. Returns 1 (after vm_fail) if a step fails.
VM_LOGIN_T0="" VM_LOGIN_MEM0=""
vm_iscsi_target() {
	vm_modprobe sd_mod || return 1
	vm_sdswarmd "$1" || return 1
	vm_iscsid || return 1
	VM_LOGIN_MEM0=$(vm_mem_used_kib)
	VM_LOGIN_T0=$(vm_uptime)
}

# vm_iscsi_up CONF PORTAL [TARGET]: vm_iscsi_target, then discovery of
# PORTAL and a login to TARGET (every target it offers when none is named).
vm_iscsi_up() {
	vm_iscsi_target "$1" || return 1
	vm_iscsi_login "$2" ${3:+"$3"}
}

vm_sd_count() {
	ls /sys/block | grep -c '^sd'
}

# Every sd block device less the disks: no glob (see vm_sysfs_names).
vm_sd_parts() {
	echo $(($(ls /sys/class/block | grep -c '^sd') - $(vm_sd_count)))
}

_vm_sd_enough() {
	[ "$(vm_sd_count)" -ge "$1" ] && { [ "$2" -eq 0 ] || [ "$(vm_sd_parts)" -ge "$2" ]; }
}

# vm_wait_sd TIMEOUT N [P]: until /sys/block holds at least N sd disks
# and P partitions of them (none asked for by default); returns 1 after
# TIMEOUT seconds, leaving the verdict to the caller.
vm_wait_sd() {
	vm_wait "$1" _vm_sd_enough "$2" "${3:-0}"
}

vm_sd_lun() {
	local hctl l
	hctl=$(readlink "/sys/block/$1/device") || return 1
	l=${hctl##*:}
	[ "$l" -ge 16384 ] && [ "$l" -lt 32768 ] && l=$((l - 16384))
	echo "$l"
}

vm_sd_table_lun() {
	local path sess tn l
	l=$(vm_sd_lun "$1") || return 1
	path=$(readlink -f "/sys/block/$1/device")
	sess=$(echo "$path" | sed -n 's|.*/\(session[0-9]*\)/.*|\1|p')
	tn=$(cat "/sys/class/iscsi_session/$sess/targetname" 2>/dev/null)
	case $tn in
	*:t[0-9]*) echo $((${tn##*:t} * $2 + l)) ;;
	*) echo "$l" ;;
	esac
}

vm_names_check() {
	local w=$1 n=$2
	: >"$w/mismatches"
	# parse each name, then the name and dev_t of what it parsed to.
	# Partitions 16 and up are on the dynamic major 259, numbered in the
	# order the kernel scanned them: only their major is predictable.
	cut -d' ' -f1 "$w/kernel" | sdnum parse - >"$w/idx" 2>&1
	awk '$1 == "error:" { print "0 0"; next } $2 >= 16 { print $1 " 0"; next } { print }' \
		"$w/idx" | sdnum devt - >"$w/devt" 2>&1
	sed 's/^error.*/0 0/' "$w/idx" | sdnum name - >"$w/name" 2>&1
	paste -d' ' "$w/kernel" "$w/idx" "$w/devt" "$w/name" >"$w/joined"
	# joined: NAME MAJ:MIN INDEX PART DEVT SDNUM-NAME
	awk -v n="$n" '
		$3 == "error:" { print "unparsable " $1; next }
		$4 >= 16 {
			split($2, d, ":")
			if (d[1] != 259) print "devt " $1 ": kernel " $2 ", want major 259 (partition " $4 ")"
			else if (seen[$2]++) print "devt " $1 ": " $2 " given twice"
			next
		}
		$5 != $2 { print "devt " $1 ": kernel " $2 ", sdnum " $5; next }
		$6 != $1 { print "name " $1 ": sdnum names index " $3 " part " $4 " " $6; next }
		$4 == 0 && n > 0 && $3 >= n { print "index " $1 " = " $3 " beyond " n }' \
		"$w/joined" >>"$w/mismatches"
	# The nodes devtmpfs made carry the same numbers (stat prints hex).
	# shellcheck disable=SC2046 # names without spaces
	stat -c '%n %t %T' $(cut -d' ' -f1 "$w/kernel" | sed 's|^|/dev/|') 2>&1 |
		awk 'NF == 3 { sub("/dev/", "", $1); printf "%s %d:%d\n", $1, ("0x" $2) + 0, ("0x" $3) + 0; next }
			{ print "stat-error " $0 }' >"$w/nodes"
	awk 'NR == FNR { k[$1] = $2; next }
		!($1 in k) { print "node " $0 " not in sysfs"; next }
		k[$1] != $2 { print "node /dev/" $1 " is " $2 ", sysfs " k[$1] }' \
		"$w/kernel" "$w/nodes" >>"$w/mismatches"
	# lsblk, through libblkid/libsmartcols, lists every one of them with
	# the same numbers (W/kernel may be a sample of what lsblk lists).
	lsblk -rn -o NAME,MAJ:MIN 2>&1 | grep '^sd' | sort >"$w/lsblk"
	vm_missing "$w/kernel" "$w/lsblk" | head -3 |
		sed "s/^/lsblk ($(wc -l <"$w/lsblk") lines) lacks: /" >>"$w/mismatches"
}

# vm_sysfs_names W: W/kernel as "NAME MAJ:MIN" for every sd disk and
# partition in sysfs.
# Disks then partitions. Lists and xargs, never a glob: 262,144 disks'
# paths are more than one command line holds (E2BIG), and one directory
# listing (/sys/class/block) finds every partition without opening each
# disk's folder.
vm_sysfs_names() {
	ls /sys/block | grep '^sd' >"$1/.disks"
	ls /sys/class/block | grep '^sd' |
		awk -v f="$1/.disks" 'BEGIN { while ((getline l < f) > 0) d[l] = 1 } !($1 in d)' >"$1/.parts"
	cat "$1/.disks" "$1/.parts" | sed 's|.*|/sys/class/block/&/dev|' |
		xargs -r grep -H . 2>/dev/null |
		sed 's|^/sys/class/block/\([^/]*\)/dev:|\1 |' >"$1/kernel"
	rm -f "$1/.disks" "$1/.parts"
}

# vm_disks_check W N MANY: the checks of N disks made in LUN order whose
# last MANY carry 20 partitions: every sd disk and partition in sysfs
# (W/kernel) against sdnum with vm_names_check; the disk names exactly
# sdnum's for 0..N-1 (W/want against W/have; VM_MISSING counts the absent
# ones, the "missing" figure); 5 partitions (16-20) of each of the MANY on
# major 259, the "parts_259" figure. Problems go to W/mismatches.
VM_MISSING=0
vm_disks_check() {
	local w=$1 n=$2 many=$3 p259
	vm_sysfs_names "$w"
	vm_names_check "$w" "$n"
	seq 0 $((n - 1)) | sdnum name - | sort >"$w/want"
	ls /sys/block | grep '^sd' | sort >"$w/have"
	VM_MISSING=$(vm_missing "$w/want" "$w/have" | wc -l)
	vm_stat missing "$VM_MISSING"
	p259=$(awk '$2 ~ /^259:/' "$w/kernel" | wc -l)
	vm_stat parts_259 "$p259"
	[ "$p259" -eq $((many * 5)) ] ||
		echo "partitions on 259: $p259, want $((many * 5)) (16-20 of $many disks)" >>"$w/mismatches"
}

# vm_lun_order W [LPT]: which LUN each disk of W/have is, against the
# daemon's prediction in LUN order (`sdswarm names`, W/predicted). W/actual
# gets "LUN NAME", the LUN being the table LUN through the session's target
# name when LPT (LUNs per target) is given, else the disk's own LUN (the
# same for tcm_loop, which has no session). VM_ORDER_BAD counts the LUNs
# named otherwise, the "lun_order_mismatches" figure; the first five are
# printed. Whether that is a failure is the caller's call: it depends on
# how the scan ran.
VM_ORDER_BAD=0
vm_lun_order() {
	local w=$1 lpt=${2:-} d
	sdswarm names >"$w/predicted" 2>"$w/names.err" ||
		vm_fail "sdswarm names: $(cat "$w/names.err")"
	for d in $(cat "$w/have"); do
		if [ -n "$lpt" ]; then
			echo "$(vm_sd_table_lun "$d" "$lpt") $d"
		else
			echo "$(vm_sd_lun "$d") $d"
		fi
	done | sort -n >"$w/actual"
	VM_ORDER_BAD=$(awk 'NR == FNR { p[$1] = $2; next } p[$1] != $2 { c++ } END { print c + 0 }' \
		"$w/predicted" "$w/actual")
	vm_stat lun_order_mismatches "$VM_ORDER_BAD"
	awk 'NR == FNR { p[$1] = $2; next } p[$1] != $2 { print "LUN " $1 ": kernel " $2 ", predicted " p[$1] }' \
		"$w/predicted" "$w/actual" | head -5 | sed 's/^/sdswarm-vm: order: /'
}

# vm_sample_luns N FEW: the LUNs of N whose identity a scenario samples:
# every name-length boundary the count crosses (sdz/sdaa, 256, sdzz/sdaaa),
# the last disk of FEW (the partition layout changes there) and the last,
# each once, on one line.
vm_sample_luns() {
	local sample="" i
	for i in 0 25 26 255 256 701 702 $(($2 - 1)) $2 $(($1 - 1)); do
		[ "$i" -ge 0 ] && [ "$i" -lt "$1" ] || continue
		case " $sample " in *" $i "*) ;; *) sample="$sample $i" ;; esac
	done
	echo "$sample"
}

# ---- binding sd in LUN order ---------------------------------------------
# sd_mod's driver asks for asynchronous probing (PROBE_PREFER_ASYNCHRONOUS):
# every SCSI device the scan adds, in LUN order whatever scsi_mod.scan says,
# gets its sd_probe() scheduled on the async workqueue, and sd_probe() takes
# the disk's index (its name) from sd_index_ida when it runs. Several probes
# run at once and under load finish in any order, so two LUNs can swap
# names: the flake iscsi-kernel showed under load with scan=sync. A real
# host has the same race; udev's by-id links are the stable names. To make
# the prediction exact, a scenario holds the bus (vm_sd_hold: the SCSI
# bus's drivers_autoprobe off, before the disks appear), waits for the
# devices, and binds sd to them itself, one after the other in LUN order
# (vm_sd_bind_luns: a write to /sys/bus/scsi/drivers/sd/bind probes
# synchronously). sg attaches through its class interface, not the bus,
# so /dev/sg* come as before. sdswarm.bind=auto (the parameter every
# scenario that uses these honours) leaves it to the kernel: vm_sd_hold,
# vm_sd_bind_luns and vm_sd_release then do nothing, and the names follow
# the probes' race.
VM_SD_BIND=$(vm_param bind lun)
VM_SD_HELD=0

vm_sd_hold() {
	case $VM_SD_BIND in
	auto) vm_kv_str bind auto; return 0 ;;
	lun) ;;
	*) vm_fail "sdswarm.bind=$VM_SD_BIND: lun or auto"; return 1 ;;
	esac
	[ -w /sys/bus/scsi/drivers_autoprobe ] ||
		{ vm_fail "no /sys/bus/scsi/drivers_autoprobe (scsi_mod not loaded?)"; return 1; }
	echo 0 >/sys/bus/scsi/drivers_autoprobe || { vm_fail "cannot turn SCSI autoprobe off"; return 1; }
	VM_SD_HELD=1
	vm_kv_str bind lun
}

# The SCSI devices of type disk (0) or host-managed zoned (0x14), the ones
# sd takes, one H:C:T:L a line.
_vm_scsi_disk_list() {
	local d t
	for d in /sys/bus/scsi/devices/*:*:*:*; do
		[ -e "$d/type" ] || continue
		t=$(cat "$d/type" 2>/dev/null)
		[ "$t" = 0 ] || [ "$t" = 20 ] || continue
		echo "${d##*/}"
	done
}

vm_scsi_disks() {
	_vm_scsi_disk_list | wc -l
}

_vm_scsi_enough() {
	[ "$(vm_scsi_disks)" -ge "$1" ]
}

vm_wait_scsi() {
	vm_wait "$1" _vm_scsi_enough "$2"
}

# _vm_host_targets: "HOST I" for every SCSI host that is an iSCSI session
# with a target named ...:tI (sdswarm's target names).
_vm_host_targets() {
	local s h tn
	for s in /sys/class/iscsi_session/session*; do
		[ -e "$s/targetname" ] || continue
		tn=$(cat "$s/targetname")
		h=$(readlink -f "$s/device" | sed -n 's|.*/host\([0-9]*\)/.*|\1|p')
		case $tn in
		*:t[0-9]*) [ -n "$h" ] && echo "$h ${tn##*:t}" ;;
		esac
	done
}

# vm_lun_keys [LPT]: reads H:C:T:L lines, writes "KEY H:C:T:L", KEY the
# device's place in LUN order: the table LUN (target tI's LUN L is
# I*LPT+L, I from the iSCSI session's target name) when LPT is given and
# the host is such a session, else host, channel, target and LUN; flat
# space addressing undone (0x4000+L is L). Zero-padded: `sort` orders them.
vm_lun_keys() {
	_vm_host_targets >"$VM_RUN/host-targets"
	awk -F: -v lpt="${1:-}" '
		FILENAME != "-" { split($0, a, " "); tg[a[1]] = a[2]; next }
		{
			l = $4 + 0
			if (l >= 16384 && l < 32768) l -= 16384
			if (lpt != "" && ($1 in tg))
				printf "%024d %s\n", tg[$1] * lpt + l, $0
			else
				printf "%06d%06d%06d%06d %s\n", $1, $2, $3, l, $0
		}' "$VM_RUN/host-targets" -
}

# vm_sd_bind_luns TIMEOUT N [LPT]: wait up to TIMEOUT s for N disk-type
# SCSI devices on the bus, then bind sd to every one without a driver, in
# LUN order (with LPT, the table LUN as vm_sd_table_lun numbers it).
# sd_probe() takes the index before it adds /sys/class/scsi_disk/H:C:T:L
# and only then reads the capacity and the partition table; so each bind
# is started in the background, and the next one only once that class
# device is there (30 s at most): the indices go out in LUN order, while
# the slow half of each probe overlaps the next. Then every bind must have
# ended with sd on the device. Figures: bind_s (the binds' time), bound.
# Returns 1 after vm_fail when the devices do not come or a bind fails;
# does nothing under bind=auto.
vm_sd_bind_luns() {
	local timeout=$1 n=$2 lpt=${3:-} t0 hctl key bound=0 tries pids=""
	[ "$VM_SD_BIND" = auto ] && return 0
	[ "$VM_SD_HELD" = 1 ] || { vm_fail "vm_sd_bind_luns without vm_sd_hold"; return 1; }
	if ! vm_wait_scsi "$timeout" "$n"; then
		vm_fail "$(vm_scsi_disks) of $n SCSI disk devices within ${timeout}s"
		return 1
	fi
	t0=$(vm_uptime)
	for hctl in $(_vm_scsi_disk_list); do
		[ -e "/sys/bus/scsi/devices/$hctl/driver" ] || echo "$hctl"
	done | vm_lun_keys "$lpt" | sort >"$VM_RUN/bind-order"
	: >"$VM_RUN/bind-errors"
	while read -r key hctl; do
		( echo "$hctl" >/sys/bus/scsi/drivers/sd/bind ) 2>>"$VM_RUN/bind-errors" &
		pids="$pids $!"
		# 3000 x 10 ms: the index is taken when the class device is there
		tries=0
		while [ ! -e "/sys/class/scsi_disk/$hctl" ] && [ $tries -lt 3000 ]; do
			usleep 10000
			tries=$((tries + 1))
		done
		if [ ! -e "/sys/class/scsi_disk/$hctl" ]; then
			# only the binds: the scenario's daemons run in the background too
			wait $pids
			vm_fail "sd bound to $hctl (key $key), but no /sys/class/scsi_disk/$hctl in 30 s: $(head -1 "$VM_RUN/bind-errors")"
			return 1
		fi
		bound=$((bound + 1))
	done <"$VM_RUN/bind-order"
	[ -z "$pids" ] || wait $pids
	if [ -s "$VM_RUN/bind-errors" ]; then
		vm_fail "binding sd: $(head -1 "$VM_RUN/bind-errors")"
		return 1
	fi
	while read -r key hctl; do
		[ -e "/sys/bus/scsi/devices/$hctl/driver" ] ||
			{ vm_fail "$hctl (key $key) has no driver after its bind"; return 1; }
	done <"$VM_RUN/bind-order"
	vm_kv bind_s "$(vm_since "$t0")"
	vm_kv bound "$bound"
	echo "sdswarm-vm: sd bound to $bound devices in LUN order in $(vm_since "$t0") s"
}

# vm_sd_release: the bus binds drivers on its own again (for disks added
# later), and any disk-type device still without a driver is probed now.
vm_sd_release() {
	local hctl
	[ "$VM_SD_HELD" = 1 ] || return 0
	echo 1 >/sys/bus/scsi/drivers_autoprobe
	VM_SD_HELD=0
	for hctl in $(_vm_scsi_disk_list); do
		[ -e "/sys/bus/scsi/devices/$hctl/driver" ] ||
			echo "$hctl" >/sys/bus/scsi/drivers_probe 2>/dev/null
	done
	return 0
}
