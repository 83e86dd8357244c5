#!/bin/bash
# SPDX-License-Identifier: MIT
# The test host's progress lines, both ends, with no VM. The guest's
# vm_wait (testhost/guest/vm-lib.sh, run here by the system's sh) writes
# one "SDSWARM-VM-PROGRESS:" line every VM_PROGRESS_S seconds of a wait
# that has not ended, none for a wait that ends first and none with 0;
# the host's th_progress (testhost/lib/host.sh) prints each new one once,
# as "NAME: guest: ...", and leaves a line the guest is still writing (no
# newline yet) for its next round.
. "$(dirname "$0")/../lib/common.sh"
top=$SDSWARM_TOP
T=$(tmpdir)

# --- the guest's end ------------------------------------------------------
guest() { # SECONDS-UNTIL-DONE PROGRESS-S: a vm_wait of 30 s on a file
	VM_RUN=$T/run VM_PROGRESS_S=$2 VM_PROGRESS_OUT=$T/console sh -c '
		. "$1/testhost/guest/vm-lib.sh"
		( sleep "$2"; touch "$3/done" ) &
		vm_wait 30 test -e "$3/done"' sh "$top" "$1" "$T"
}
: >"$T/console"
rm -f "$T/done"
t0=$(date +%s)
guest 2.5 1
expect_eq "vm_wait returned 0 when the file came" 0 "$?"
secs=$(($(date +%s) - t0 + 1))
n=$(grep -c '^SDSWARM-VM-PROGRESS: ' "$T/console")
# At least 2 s of waiting with a line a second, at most one a second of
# the wait as long as it really took (a loaded machine stretches it).
check "a 2.5 s wait with a line a second wrote 1 to $secs lines (got $n)" test "$n" -ge 1 -a "$n" -le "$secs"
check "... each says where the wait is and what is there" \
	grep -q '^SDSWARM-VM-PROGRESS: [0-9.]* s into a wait of 30 s: [0-9]* sd disks, [0-9]* SCSI devices, [0-9]* MiB used$' "$T/console"
: >"$T/console"
rm -f "$T/done"
guest 0.3 30
expect_eq "a wait shorter than the interval says nothing" 0 "$(wc -l <"$T/console")"
: >"$T/console"
rm -f "$T/done"
guest 1.5 0
expect_eq "sdswarm.progress=0 says nothing" 0 "$(wc -l <"$T/console")"

# A module that loads for a while (a fake modprobe: sleeps, then exits
# with the status asked for): vm_modprobe_wait's progress lines while it
# runs, its status after.
mkdir -p "$T/bin" "$T/run"
printf '#!/bin/sh\necho "modprobe: $*" >&2\nsleep 2.5\nexit "${FAKE_RC:-0}"\n' >"$T/bin/modprobe"
chmod +x "$T/bin/modprobe"
loadmod() { # RC: vm_modprobe_wait of the fake, its status and verdict
	FAKE_RC=$1 PATH=$T/bin:$PATH VM_RUN=$T/run VM_VERDICT=$T/run/verdict VM_PROGRESS_S=1 \
		VM_PROGRESS_OUT=$T/console sh -c '
		. "$1/testhost/guest/vm-lib.sh"
		vm_modprobe_wait 30 scsi_debug max_luns=2000
		echo "rc=$?"' sh "$top"
}
: >"$T/console"
out=$(loadmod 0)
expect_eq "vm_modprobe_wait of a module that loads: 0" "rc=0" "$(tail -1 <<<"$out")"
n=$(grep -c '^SDSWARM-VM-PROGRESS: ' "$T/console")
check "  ... progress lines while it loaded (got $n)" test "$n" -ge 1
: >"$T/console"
out=$(loadmod 1)
expect_eq "vm_modprobe_wait of a module that fails: 1" "rc=1" "$(tail -1 <<<"$out")"
check "  ... and the verdict names it and modprobe's message" \
	grep -q 'modprobe scsi_debug max_luns=2000: modprobe: scsi_debug max_luns=2000' "$T/run/verdict"

# --- the host's end -------------------------------------------------------
host() { # LOG SEEN: th_progress's output and the count it kept
	bash -c '
		th_name=vm-run
		. "$1/testhost/lib/host.sh"
		th_progress_seen=$3
		th_progress "$2" 2>&1
		echo "seen=$th_progress_seen"' sh "$top" "$1" "$2"
}
log=$T/serial.log
printf 'boot\r\nSDSWARM-VM-PROGRESS: 15.0 s into a wait: 10 sd disks\r\nother\nSDSWARM-VM-PROGRESS: 30.0 s in' >"$log"
out=$(host "$log" 0)
expect_eq "the first complete line, once; the one being written waits" \
	"vm-run: guest: 15.0 s into a wait: 10 sd disks
seen=1" "$out"
printf 'to a wait: 20 sd disks\r\n' >>"$log"
out=$(host "$log" 1)
expect_eq "the next round prints the line once it is whole" \
	"vm-run: guest: 30.0 s into a wait: 20 sd disks
seen=2" "$out"
out=$(host "$log" 2)
expect_eq "nothing new, nothing printed" "seen=2" "$out"
out=$(host "$T/none.log" 0)
expect_eq "no log yet, nothing printed" "seen=0" "$out"
finish
