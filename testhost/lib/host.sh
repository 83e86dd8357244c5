# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2034 # its th_* results are its callers'
# The host side the test host's scripts share: where everything is (a
# checkout's or an installed test host's), and what run and exec share:
# QEMU's command line, the accelerator (a bounded KVM probe boot and its
# cached verdict), one bounded boot (the console streamed to a log, qemu
# killed by the PID we started), and the guest's verdict lines. Sourced,
# never run: it only defines functions and th_* variables (th_paths runs
# as it is sourced). A script sets th_name (its prefix in messages: vm-run,
# vm-exec) before it calls any of them.
#
#   th_home                       the test host's folder (the one holding lib/)
#   th_top th_cache th_vm th_bin  see th_paths
#   th_vm_dir [VARIANT]           the image's folder of a kernel VARIANT
#   th_rel PATH                   PATH as a message shows it
#   th_cmdline                    the kernel command line every boot starts with
#   th_use_release RELEASE        exit 2 unless RELEASE is one
#                                 (lib/release.sh); sets th_release and
#                                 th_vm, the folder of this run's image:
#                                 SDSWARM_VM_DIR, else the release's
#                                 (th_cache/vm, th_cache/vm-trixie)
#   th_need_qemu                  exit 77 ("SKIP: ...") when there is no QEMU
#   th_build_image VMDIR STATUS   the image of th_release in VMDIR, current;
#                                 exit STATUS on failure
#   th_kernel_image VMDIR         the kernel to boot from VMDIR
#   th_qemu_args VMDIR INITRD MEM SMP CMDLINE
#                                 th_args: the machine every boot gets
#   th_accel MODE VMDIR SMP REPROBE
#                                 th_accel_args, th_accel_name, th_accel_note
#   th_start LOG QEMU-ARGS...     qemu in the background, its console in LOG
#   th_wait LOG TIMEOUT LINGER    the bounded wait for it: th_rc, th_wall
#   th_kill                       TERM, then KILL, the qemu th_start started
#   th_verdict LOG                th_result, th_verdict, th_reason, th_json,
#                                 th_panic, th_last from a console log
#   th_jget JSON KEY              a scalar of the guest's flat JSON object
#   th_count NAME VALUE MIN MAX   exit 2 unless VALUE is a number in MIN..MAX
#   th_size NAME VALUE            exit 2 unless VALUE is a memory size (2G, 1536M)
#   th_now, th_since T0           the time, the seconds since T0 (0.1 s)

th_name=${th_name:-testhost}
th_home=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=testhost/lib/release.sh
. "$th_home/lib/release.sh"
th_release=bookworm

# --- where things are -------------------------------------------------------
# th_paths sets
#   th_top    the checkout the test host is in (th_home/.. holds the
#             Makefile and numbering/), empty when it is installed
#   th_cache  what it downloads and builds: the checkout's build/, else
#             $XDG_CACHE_HOME/sdswarm (default ~/.cache/sdswarm)
#   th_vm     Debian's kernel, the initramfs, their inputs and the logs:
#             SDSWARM_VM_DIR, else th_cache/vm (bookworm's; th_use_release
#             makes it another release's)
#   th_bin    sdswarm's programs the guest gets: SDSWARM_VM_BIN, else the
#             checkout's build/bin, or the bin/ folder of the installation
#             (th_home is PREFIX/share/sdswarm/testhost)
# Everything the test host writes goes under th_cache (or SDSWARM_VM_DIR),
# never into th_home: installed, that is a system folder.
th_paths() {
	local xdg=${XDG_CACHE_HOME:-}
	if [ -f "$th_home/../Makefile" ] && [ -d "$th_home/../numbering" ]; then
		th_top=$(cd "$th_home/.." && pwd)
		th_cache=$th_top/build
		th_bin=${SDSWARM_VM_BIN:-$th_top/build/bin}
	else
		th_top=""
		# The XDG base directory rules: a relative XDG_CACHE_HOME is
		# ignored.
		case $xdg in /*) ;; *) xdg=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}/.cache ;; esac
		th_cache=$xdg/sdswarm
		th_bin=${SDSWARM_VM_BIN:-$(cd "$th_home/../../.." && pwd)/bin}
	fi
	th_vm=$(th_vm_dir)
}

# The image's folder: th_cache/vm for Debian's kernel; a kernel of the
# test host's own (VARIANT: wilcox) gets a folder of its own beside it
# (vm-wilcox), as would anything else that needs an image apart.
# shellcheck disable=SC2120 # run passes its --kernel
th_vm_dir() { # [VARIANT]
	echo "${SDSWARM_VM_DIR:-$th_cache/vm}${1:+-$1}"
}

# In a checkout, messages name paths relative to it (build/vm/logs/...).
th_rel() { # PATH
	if [ -n "$th_top" ]; then
		echo "${1#"$th_top"/}"
	else
		echo "$1"
	fi
}

th_paths
th_qemu=${SDSWARM_VM_QEMU:-qemu-system-x86_64}
th_kvm_cpu=${SDSWARM_VM_KVM_CPU:-host}
th_probe_timeout=${SDSWARM_VM_KVM_PROBE_TIMEOUT:-20}
# th_start's modes: th_tty=1 puts the console on this terminal (a person
# at the guest's shell), th_console=1 copies it to standard error.
# th_tick names a function th_wait calls every round (exec's "the script
# started" note), none by default.
th_tty=0 th_console=0 th_tick="" th_qpid=""

# no_timer_check: on a starved host TCG's timer looks broken to the
# kernel's early IO-APIC check, which then panics ("IO-APIC + timer
# doesn't work!"); seen at a load of 20 on 2 cores, in any boot.
# scsi_mod.scan=sync: one host's scan is done before the next one's starts.
th_cmdline="console=ttyS0 quiet panic=-1 no_timer_check scsi_mod.scan=sync"

th_now() { date +%s.%N; }
th_since() { awk -v a="$1" -v b="$(th_now)" 'BEGIN { printf "%.1f", b - a }'; }

th_usage_error() {
	echo "$th_name: $*" >&2
	exit 2
}

th_count() {
	case $2 in '' | *[!0-9]*) th_usage_error "$1 $2: not a number" ;; esac
	[ "$2" -ge "$3" ] && [ "$2" -le "$4" ] || th_usage_error "$1 $2: from $3 to $4"
}

th_size() {
	case $2 in *[0-9][MG] | *[0-9]) return 0 ;; esac
	th_usage_error "$1 $2: a size such as 2G or 1536M"
}

th_use_release() {
	rel_check "$1" || th_usage_error "--release '$1': $(rel_names | sed 's/ / or /')"
	th_release=$1
	th_vm=${SDSWARM_VM_DIR:-$(rel_vm_dir "$th_cache" "$1")}
}

th_need_qemu() {
	command -v "$th_qemu" >/dev/null 2>&1 && return 0
	echo "SKIP: needs $th_qemu (install qemu-system-x86 with scripts/install-deps)"
	exit 77
}

# The image: sdswarm-testhost build's input check (~0.5 s when current). Its
# "SKIP:" line passes on with exit 77; any other failure prints what it
# said and exits STATUS (run: 1, exec: 125). The build's steps (download,
# unpack, sd module, initramfs: one line each with size and time) and its
# errors reach standard error as they happen. ARGS go to the build.
th_build_image() { # VMDIR STATUS [ARGS...]
	local bout rc dir=$1 st=$2
	shift 2
	bout=$(SDSWARM_VM_DIR=$dir "$th_home/build" -q --release "$th_release" "$@")
	rc=$?
	if [ $rc -eq 77 ]; then
		echo "$bout" | grep -m1 '^SKIP:' || echo "SKIP: sdswarm-testhost build cannot get a kernel"
		exit 77
	elif [ $rc -ne 0 ]; then
		echo "$bout" >&2
		echo "$th_name: sdswarm-testhost build failed" >&2
		# Its bad usage (a folder holding the other release) is ours.
		[ $rc -eq 2 ] && exit 2
		exit "$st"
	fi
	[ -z "$bout" ] || echo "$bout" >&2
}

# The PVH ELF the build extracted skips the bzImage's decompression.
th_kernel_image() {
	if [ -f "$1/vmlinux" ]; then
		echo "$1/vmlinux"
	else
		echo "$1/vmlinuz"
	fi
}

# Every boot: MEM and SMP CPUs, no NIC (nothing reaches outside), no
# reboot (the guest's poweroff, or a panic with panic=-1, ends qemu), no
# user configuration. The accelerator and the console come on top.
th_qemu_args() {
	th_args=(-m "$3" -smp "$4" -no-reboot -no-user-config -nic none
		-kernel "$(th_kernel_image "$1")" -initrd "$2" -append "$5")
}

th_alive() { # PID: running (not gone, not a zombie waiting for us)
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

th_kill() {
	[ -n "$th_qpid" ] || return 0
	kill -TERM "$th_qpid" 2>/dev/null
	for _ in $(seq 50); do
		th_alive "$th_qpid" || break
		sleep 0.1
	done
	th_alive "$th_qpid" && kill -KILL "$th_qpid" 2>/dev/null
	for _ in $(seq 50); do
		th_alive "$th_qpid" || break
		sleep 0.1
	done
	# A qemu stuck in the hypervisor can outlive SIGKILL for a while; do
	# not wait for it forever (wait would), report and move on.
	if th_alive "$th_qpid"; then
		echo "$th_name: qemu $th_qpid does not die; left behind" >&2
	else
		wait "$th_qpid" 2>/dev/null
	fi
	th_qpid=""
}

# th_start LOG QEMU-ARGS...: LOG is emptied, then appended to, so that our
# own notes go in the same file without qemu writing over them from its
# own offset. Sets th_qpid and th_t0.
th_start() {
	local log=$1
	shift
	th_t0=$(th_now)
	: >"$log"
	if [ "$th_tty" = 1 ]; then
		# The console is this terminal: qemu's stdin really wired
		# (Ctrl-A x leaves qemu, Ctrl-A c its monitor), a copy in the
		# log. Standard input is passed explicitly: a background job
		# would get /dev/null. th_wait closes fd 3 again.
		exec 3<&0
		"$th_qemu" "$@" -display none \
			-chardev "stdio,id=con,mux=on,signal=off,logfile=$log" \
			-serial chardev:con -mon chardev=con,mode=readline <&3 &
		th_qpid=$!
	else
		"$th_qemu" "$@" -nographic </dev/null >>"$log" 2>&1 &
		th_qpid=$!
		if [ "$th_console" = 1 ]; then
			tail -n +1 -f --pid="$th_qpid" "$log" >&2 &
		fi
	fi
}

# th_wait LOG TIMEOUT LINGER: qemu is killed when it outlives TIMEOUT
# seconds, or LINGER seconds after the guest printed its verdict without
# powering off (LINGER 0: never, for a person at the shell). Sets th_rc
# (qemu's status; 124 on the timeout; 0 when killed after the verdict)
# and th_wall (the boot's seconds, from th_start).
# The guest's "SDSWARM-VM-PROGRESS: ..." console lines (vm_wait's, every
# 15 s of a long wait: disks so far), printed on standard error as they
# come, unless the whole console is there already (--console, a tty).
th_progress_seen=0
th_progress() { # LOG
	local n lines
	[ "$th_console" = 0 ] && [ "$th_tty" = 0 ] || return 0
	lines=$(grep -a 'SDSWARM-VM-PROGRESS: ' "$1" 2>/dev/null) || return 0
	lines=${lines//$'\r'/}
	n=$(printf '%s\n' "$lines" | wc -l)
	# A line the guest is still writing waits for the next round.
	if [ -n "$(tail -c 1 "$1")" ] && tail -n 1 "$1" | grep -aq 'SDSWARM-VM-PROGRESS: '; then
		n=$((n - 1))
	fi
	[ "$n" -gt "$th_progress_seen" ] || return 0
	printf '%s\n' "$lines" | sed -n "$((th_progress_seen + 1)),${n}p" |
		sed "s/.*SDSWARM-VM-PROGRESS: /$th_name: guest: /" >&2
	th_progress_seen=$n
}

th_wait() {
	local log=$1 t=$2 linger=$3 deadline verdict_at="" round=0
	deadline=$(awk -v a="$th_t0" -v t="$t" 'BEGIN { printf "%d", a + t + 0.999 }')
	th_rc=""
	th_progress_seen=0
	while th_alive "$th_qpid"; do
		[ -z "$th_tick" ] || "$th_tick"
		round=$((round + 1))
		[ $((round % 10)) -ne 0 ] || th_progress "$log"
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "$th_name: timeout after ${t}s, killing qemu $th_qpid" >>"$log"
			th_kill
			th_rc=124
			break
		fi
		if [ "$linger" -gt 0 ]; then
			if [ -z "$verdict_at" ] && grep -aq 'SDSWARM-VM-RESULT: ' "$log"; then
				verdict_at=$(date +%s)
			elif [ -n "$verdict_at" ] && [ $(($(date +%s) - verdict_at)) -ge "$linger" ]; then
				echo "$th_name: guest did not power off after its verdict; killing qemu $th_qpid" >>"$log"
				th_kill
				th_rc=0
				break
			fi
		fi
		sleep 0.2
	done
	if [ -z "$th_rc" ]; then
		wait "$th_qpid" 2>/dev/null
		th_rc=$?
		th_qpid=""
	fi
	[ "$th_tty" = 1 ] && exec 3<&-
	th_wall=$(th_since "$th_t0")
}

# --- the accelerator ---------------------------------------------------------
# The KVM verdict is cached in VMDIR/kvm-probe, one line a probe: "kvm|tcg
# REASON KEY", keyed on QEMU's version, the host kernel, the guest kernel
# and the -cpu asked for under KVM.
th_kvm_key() { # VMDIR
	local q
	q=$("$th_qemu" --version 2>/dev/null | head -1)
	echo "qemu=${q// /_} host=$(uname -r) guest=$(cat "$1/kernel.version" 2>/dev/null) cpu=$th_kvm_cpu"
}

th_probe_kvm() { # VMDIR SMP REPROBE: 0 when KVM boots a guest here; sets th_accel_note
	local vm=$1 cache=$1/kvm-probe key line verdict reason why log
	# The probe boot is no person's shell and has no script.
	local th_tty=0 th_tick=""
	if [ ! -c /dev/kvm ] || [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
		th_accel_note="no usable /dev/kvm"
		return 1
	fi
	[ "$3" = 1 ] && rm -f "$cache"
	key=$(th_kvm_key "$vm")
	line=$(grep -F -- "$key" "$cache" 2>/dev/null | tail -1)
	if [ -n "$line" ]; then
		th_accel_note="cached probe: ${line#* }"
		th_accel_note=${th_accel_note% qemu=*}
		[ "${line%% *}" = kvm ]
		return
	fi
	echo "$th_name: probing KVM with one boot (at most ${th_probe_timeout}s)" >&2
	mkdir -p "$vm/logs"
	log=$vm/logs/kvm-probe.log
	th_qemu_args "$vm" "$vm/initramfs.img" 256M "$2" "$th_cmdline sdswarm.scenario=probe"
	th_start "$log" -accel kvm -cpu "$th_kvm_cpu" "${th_args[@]}"
	# QEMU may die of SIGABRT when KVM is unusable (seen here): bash then
	# reports the job ("line N: PID Aborted ...") on its standard error
	# as it reaps it, in th_wait; the probe's verdict and log say it all.
	th_wait "$log" "$th_probe_timeout" 15 2>/dev/null
	if grep -aq 'SDSWARM-VM-RESULT: PASS' "$log"; then
		verdict=kvm reason="booted in ${th_wall}s"
	elif [ "$th_rc" = 124 ]; then
		verdict=tcg reason="KVM boot hung (killed after ${th_probe_timeout}s)"
	else
		why=$(tr -d '\r' <"$log" | grep -a -m1 -i 'error')
		[ -n "$why" ] || why=$(tr -d '\r' <"$log" | grep -av '^$' | tail -1)
		verdict=tcg reason="KVM boot failed (qemu exit $th_rc): $(echo "${why#*: }" | cut -c1-80)"
	fi
	echo "$verdict $reason $key" >>"$cache"
	th_accel_note="probe: $reason"
	[ "$verdict" = kvm ]
}

th_accel() { # MODE VMDIR SMP REPROBE
	case $1 in
	kvm) th_accel_name=kvm th_accel_note="asked for" ;;
	tcg) th_accel_name=tcg th_accel_note="asked for" ;;
	*)
		if th_probe_kvm "$2" "$3" "$4"; then
			th_accel_name=kvm
		else
			th_accel_name=tcg
		fi
		;;
	esac
	if [ "$th_accel_name" = kvm ]; then
		th_accel_args=(-accel kvm -cpu "$th_kvm_cpu")
	else
		th_accel_args=(-accel tcg -cpu max)
	fi
}

# --- the verdict -----------------------------------------------------------------
# The guest's /init ends with two lines on the console:
#   SDSWARM-VM-JSON: {"scenario":...,"result":"PASS",...}
#   SDSWARM-VM-RESULT: PASS NAME key=value... -- reason
# The last of each counts. When there is none, the first kernel panic or
# the last line the console shows says why.
th_verdict() { # LOG
	local clean
	clean=$(tr -d '\r' <"$1")
	th_result=$(printf '%s\n' "$clean" | grep -ao 'SDSWARM-VM-RESULT: .*' | tail -1)
	th_json=$(printf '%s\n' "$clean" | grep -ao 'SDSWARM-VM-JSON: {.*}' | tail -1)
	th_json=${th_json#SDSWARM-VM-JSON: }
	th_verdict=$(echo "$th_result" | awk '{ print $2 }')
	th_reason=$(echo "$th_result" | sed -n 's/.* -- //p')
	th_panic=$(printf '%s\n' "$clean" | grep -a -m1 'Kernel panic')
	th_last=$(printf '%s\n' "$clean" | grep -av '^$' | tail -1)
}

# A value is a JSON string (its quotes taken off) or anything up to the
# next comma or brace; nothing when the key is absent.
th_jget() { # JSON KEY
	printf '%s' "$1" | sed -n "s/.*\"$2\":\(\"[^\"]*\"\|[^,}]*\).*/\1/p" | tr -d '"'
}
