# SPDX-License-Identifier: MIT
# vm-mem: 768M
# vm-timeout: 400
# faults: fault rules set at run time (`sdswarm fault set`) on LUNs the
# kernel reaches over iSCSI must come out of the kernel as the errors they
# stand for:
#   medium-read  lba 1000-1007 of LUN 0: the read fails EIO, and dmesg
#                decodes "Medium Error", "Unrecovered read error" and the
#                first bad sector, 1000 (the sense's INFORMATION field)
#   medium-write lba 2000-2007 of LUN 1: the write fails EIO, dmesg says
#                "Medium Error" and "Write error"
#   delay 1500ms on LUN 2: a one-command read succeeds and takes at
#                least that long
#   hang once on LUN 3 (timeout 4 s in /sys/block/sdd/device/timeout): the
#                command times out, the SCSI error handler aborts it (an
#                iSCSI ABORT TASK, counted in the session's tmf PDUs and the
#                device's iotmo_cnt), the retry succeeds
#   hang forever on LUN 3's blocks 5000-5007: every retry times out and
#                is aborted, the read fails; the rule cleared, LUN 3 and the
#                others serve reads again
# and sdswarmd keeps running and answering its control socket throughout.
# Figures: disks, mismatches, delay_s, hang_once_s, hang_forever_s, tmf
# (task management PDUs the initiator sent), iotmo (timeouts counted).
. /usr/lib/sdswarm-vm/vm-lib.sh

portal=127.0.0.1:3260
iqn=iqn.2026-12.org.sdswarm:t0
n=4
vm_stat disks "$n"
w=/tmp/faults
mkdir -p $w
: >$w/mismatches
bad() { echo "$*" >>$w/mismatches; echo "sdswarm-vm: bad: $*"; }
cat >$w/sdswarm.conf <<EOF
# vm faults: 4 clean LUNs; the rules come at run time
[target]
seed = 4
[luns]
count = $n
size = 1G
[store]
type = mem
[iscsi]
enabled = yes
portal = $portal
targets = 1
threads = 2
EOF

vm_iscsi_target $w/sdswarm.conf || exit 0
# sd bound in LUN order (vm_sd_bind_luns), so that sda is LUN 0: the rules
# below name LUNs, the reads name disks.
vm_sd_hold || exit 0
vm_iscsi_login $portal $iqn || exit 0
vm_sd_bind_luns 60 "$n" || exit 0
vm_sd_release
vm_wait_sd 60 "$n" || { vm_fail "$(vm_sd_count) of $n disks"; exit 0; }
vm_stat seen "$(vm_sd_count)"
# The names are LUN order (checked; with sdswarm.bind=auto the kernel's
# asynchronous sd probes may swap two).
for i in 0 1 2 3; do
	d=$(sdnum name $i)
	[ "$(vm_sd_lun "$d")" = "$i" ] || bad "$d is LUN $(vm_sd_lun "$d"), not $i"
done
rd() { # DISK LBA COUNT: O_DIRECT read of COUNT 512-byte blocks
	dd if="/dev/$1" of=/dev/null bs=512 skip="$2" count="$3" iflag=direct 2>$w/dd.err
}
# conv=fsync: 6.12 gives an iSCSI disk's queue a DMA alignment of 511
# (6.1: 0), busybox dd's buffer is not 512-byte aligned, so the kernel
# refuses its O_DIRECT write (EINVAL) and dd writes through the page
# cache instead: the write "succeeds" and the error comes at writeback
# ("lost async page write"). fsync reports that error to dd; on 6.1 the
# direct write fails first, as before.
wr() {
	dd if=/dev/zero of="/dev/$1" bs=512 seek="$2" count="$3" oflag=direct conv=notrunc,fsync 2>$w/dd.err
}
dmesg -c >/dev/null
fset() {
	local out
	out=$(sdswarm fault set "$@" 2>&1) || { bad "sdswarm fault set $*: $out"; return 1; }
	echo "sdswarm-vm: $out"
}

# --- medium-read -------------------------------------------------------
fset medium-read luns=0 lba=1000-1007
if rd sda 996 8; then
	bad "read of sda 996-1003 succeeded over a medium-read rule"
fi
rd sda 0 8 || bad "read of sda 0-7 (outside the rule) failed: $(tail -1 $w/dd.err)"
dmesg -c >$w/dmesg.read
grep -q 'Medium Error' $w/dmesg.read || bad "read: no 'Medium Error' in dmesg"
grep -q 'Unrecovered read error' $w/dmesg.read || bad "read: no 'Unrecovered read error' in dmesg"
grep -q 'sector 1000 ' $w/dmesg.read || bad "read: dmesg does not name sector 1000"
grep -E 'Sense Key|Add. Sense|sector' $w/dmesg.read | head -4 | sed 's/^/sdswarm-vm: dmesg: /'

# --- medium-write ------------------------------------------------------
fset medium-write luns=1 lba=2000-2007
if wr sdb 2000 8; then
	bad "write of sdb 2000-2007 succeeded over a medium-write rule"
fi
dmesg -c >$w/dmesg.write
grep -q 'Medium Error' $w/dmesg.write || bad "write: no 'Medium Error' in dmesg"
grep -q 'Write error' $w/dmesg.write || bad "write: no 'Write error' in dmesg"
grep -E 'Sense Key|Add. Sense' $w/dmesg.write | head -2 | sed 's/^/sdswarm-vm: dmesg: /'

# --- delay -------------------------------------------------------------
fset delay luns=2 delay=1500ms
t0=$(vm_uptime)
# One command: a single 4 KiB read (bs=512 count=8 would be eight).
dd if=/dev/sdc of=/dev/null bs=4096 skip=8 count=1 iflag=direct 2>$w/dd.err ||
	bad "read of sdc under a delay rule failed: $(tail -1 $w/dd.err)"
ds=$(vm_since "$t0")
vm_stat delay_s "$ds"
awk -v d="$ds" 'BEGIN { exit !(d >= 1.5) }' || bad "delayed read took $ds s, less than 1.5"

# --- hang, once: the error handler's abort, then the retry ---------------
sdev=/sys/block/sdd/device
echo 4 >$sdev/timeout
sid=$(iscsiadm -m session 2>/dev/null | sed -n 's/^tcp: \[\([0-9]*\)\].*/\1/p' | head -1)
tmf_sent() {
	iscsiadm -m session -r "$sid" -s 2>/dev/null | awk '$1 == "tmfcmd_pdus:" { print $2 }'
}
tmf0=$(tmf_sent)
iotmo0=$(($(cat $sdev/iotmo_cnt)))
fset hang luns=3 lba=0-7 count=1
t0=$(vm_uptime)
timeout 120 dd if=/dev/sdd of=/dev/null bs=4096 count=1 iflag=direct 2>$w/dd.err ||
	bad "read of a once-hung block failed after the abort: $(tail -1 $w/dd.err)"
hs=$(vm_since "$t0")
vm_stat hang_once_s "$hs"
awk -v d="$hs" 'BEGIN { exit !(d >= 4) }' || bad "the hung read came back in $hs s, before its 4 s timeout"
tmf1=$(tmf_sent)
iotmo1=$(($(cat $sdev/iotmo_cnt)))
[ "${tmf1:-0}" -gt "${tmf0:-0}" ] || bad "no task management PDU after the timeout (tmfcmd_pdus $tmf0 -> $tmf1)"
[ "$iotmo1" -gt "$iotmo0" ] || bad "iotmo_cnt did not count the timeout ($iotmo0 -> $iotmo1)"
dmesg -c >$w/dmesg.hang1
grep -i 'abort\|timing out\|reset' $w/dmesg.hang1 | head -3 | sed 's/^/sdswarm-vm: dmesg: /'

# --- hang, forever: every retry aborted, the read fails; the daemon lives on
echo 3 >$sdev/timeout
fset hang luns=3 lba=5000-5007
t0=$(vm_uptime)
if timeout 300 dd if=/dev/sdd of=/dev/null bs=4096 skip=625 count=1 iflag=direct 2>$w/dd.err; then
	bad "a read of a block that never completes succeeded"
fi
vm_stat hang_forever_s "$(vm_since "$t0")"
tail -1 $w/dd.err | sed 's/^/sdswarm-vm: dd: /'
dmesg -c >$w/dmesg.hang2
grep -iE 'abort|reset|timing out|error' $w/dmesg.hang2 | head -6 | sed 's/^/sdswarm-vm: dmesg: /'
tmf2=$(tmf_sent)
vm_stat tmf "$((${tmf2:-0} - ${tmf0:-0}))"
vm_stat iotmo "$(($(cat $sdev/iotmo_cnt) - iotmo0))"
vm_kv_str sdd_state "$(cat $sdev/state)"
echo "sdswarm-vm: sdd is $(cat $sdev/state) after the forever hang; tmf PDUs $tmf0 -> $tmf2"

vm_sdswarmd_alive || { vm_fail "sdswarmd died: $(tail -3 /tmp/sdswarmd.log | tr '\n' ' ')"; exit 0; }
out=$(sdswarm fault clear all 2>&1) || bad "sdswarm fault clear all: $out"
sdswarm fault list 2>&1 | grep -q '^0 faults fired\|^ID' || bad "sdswarm fault list does not answer"
# sdd may be offline if the error handler escalated to a reset that failed;
# bring it back as an administrator would.
[ "$(cat $sdev/state)" = running ] || echo running >$sdev/state
for d in sda sdb sdc sdd; do
	timeout 60 dd if=/dev/$d of=/dev/null bs=512 skip=5000 count=8 iflag=direct 2>$w/dd.err ||
		bad "after clearing the rules, reading $d failed: $(tail -1 $w/dd.err)"
done
wr sdb 2000 8 || bad "after clearing the rules, writing sdb failed: $(tail -1 $w/dd.err)"
sdswarm stats >$w/stats 2>&1 || bad "sdswarm stats failed after the faults"
grep -i 'fault' $w/stats | head -3 | sed 's/^/sdswarm-vm: stats: /'
vm_sdswarmd_alive || bad "sdswarmd died: $(tail -3 /tmp/sdswarmd.log | tr '\n' ' ')"

nbad=$(wc -l <$w/mismatches)
vm_stat mismatches "$nbad"
if [ "$nbad" -gt 0 ]; then
	vm_fail "$nbad check(s) failed, first: $(head -1 $w/mismatches)"
else
	vm_pass "medium errors decoded, delay honoured, hung commands aborted by the error handler, daemon still serving"
fi
iscsiadm -m node -u >/dev/null 2>&1
