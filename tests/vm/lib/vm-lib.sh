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
#   vm_wait TIMEOUT CMD...  poll CMD every 0.1 s until it succeeds;
#                           return 1 after TIMEOUT seconds
#   vm_mem_used_kib         MemTotal - MemAvailable
#   vm_report               print the JSON and verdict lines (init does)
VM_RUN=/run/sdswarm-vm
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

vm_wait() {
	local t=$1 end
	shift
	end=$(awk -v u="$(vm_uptime)" -v t="$t" 'BEGIN { printf "%.2f", u + t }')
	until "$@"; do
		awk -v u="$(vm_uptime)" -v e="$end" 'BEGIN { exit !(u >= e) }' &&
			return 1
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
