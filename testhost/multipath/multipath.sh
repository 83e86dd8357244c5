#!/bin/sh
# SPDX-License-Identifier: MIT
# repro-exec: --frontend scsi_debug --disks 1 --pkgs multipath-tools,coreutils --mem 2G
# multipath: several paths to one LUN, assembled by the guest's own
# multipathd, and a failover under I/O. Run through the exec mode's public
# interface (`sdswarm-testhost multipath`, or `sdswarm-testhost exec` with
# the flags above and --script this file). sdswarmd serves mp.luns LUNs (default 200)
# of one iSCSI target on mp.paths portals of the guest's loopback (2 or 4,
# default 2), each portal its own target port; implicit ALUA in two port
# groups, "a" (the first half of the ports) active/optimized and "b"
# active/non-optimized. The kernel's initiator logs in through every
# portal, scsi_dh_alua attaches, and multipathd (multipath-tools 0.9.4,
# Debian 12) must assemble exactly one map per LUN with MP_PATHS paths.
# Then, with O_DIRECT reads and writes running through mp.io maps, group
# "a" goes standby and "b" active/optimized over sdswarm's control socket;
# the maps must fail over with no I/O error seen through them, and the
# standby paths must show as ghost. Figures in $SDSWARM_OUT/multipath.json.
# Exit 0: PASS; 1: FAIL (the reason printed); 2: the setup failed.
set -u
# Parameters from the kernel command line (sdswarm-testhost exec --append
# "mp.luns=N mp.paths=P mp.io=M"), else defaults.
param() { tr ' ' '\n' </proc/cmdline | sed -n "s/^mp\.$1=//p" | tail -1; }
luns=$(param luns); luns=${luns:-200}
npaths=$(param paths); npaths=${npaths:-2}
nio=$(param io); nio=${nio:-8}
out=${SDSWARM_OUT:-/tmp}
case $npaths in 2 | 4) ;; *) echo "mp.paths=$npaths: 2 or 4"; exit 2 ;; esac
t0=$(cut -d' ' -f1 /proc/uptime)
since() { awk -v a="$1" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }'; }
fail() { echo "FAIL: $*"; echo "{\"verdict\":\"FAIL\",\"why\":\"$*\"}" >"$out/multipath.json"; exit 1; }
setup() { echo "setup failed: $*"; exit 2; }

for m in dm_multipath dm_round_robin dm_service_time scsi_dh_alua iscsi_tcp; do
	modprobe "$m" 2>/dev/null || grep -qw "${m}" /lib/modules/"$(uname -r)"/modules.builtin ||
		setup "modprobe $m"
done
command -v multipathd >/dev/null || setup "no multipathd (--pkgs multipath-tools)"

# --- sdswarmd: one target, N portals, two port groups ----------------------
portals="" aports="" bports=""
p=1
while [ $p -le "$npaths" ]; do
	portals="$portals${portals:+, }127.0.0.1:$((3269 + p))"
	if [ $p -le $((npaths / 2)) ]; then aports="$aports${aports:+, }$p"; else bports="$bports${bports:+, }$p"; fi
	p=$((p + 1))
done
cat >/tmp/mp.conf <<CONF
[target]
seed = 4242
max_luns = 1024
[luns]
count = $luns
size = 64M
partitions = 0
[store]
type = mem
[iscsi]
enabled = yes
portal = $portals
targets = 1
luns_per_target = 1024
threads = 2
[port_group.a]
id = 1
state = active/optimized
ports = $aports
[port_group.b]
id = 2
state = active/non-optimized
ports = $bports
CONF
ctl=/tmp/mp.ctl
sdswarmd --config /tmp/mp.conf --control $ctl >/tmp/mp-sdswarmd.log 2>&1 &
i=0
until sdswarm --control $ctl status >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 300 ] || setup "sdswarmd did not start: $(tail -2 /tmp/mp-sdswarmd.log)"
	sleep 0.1
done
sdswarm --control $ctl alua list

# --- the kernel's initiator, through every portal ---------------------------
iscsiadm -m session >/dev/null 2>&1
[ $? -eq 20 ] && { iscsid -f >/tmp/iscsid.log 2>&1 & sleep 1; }
before=$(ls /sys/block | grep -c '^sd')
p=1
while [ $p -le "$npaths" ]; do
	iscsiadm -m discovery -t sendtargets -p "127.0.0.1:$((3269 + p))" >/dev/null ||
		setup "discovery on port $((3269 + p))"
	p=$((p + 1))
done
iscsiadm -m node --login >/tmp/login.txt 2>&1 || setup "login: $(tail -1 /tmp/login.txt)"
want=$((before + luns * npaths))
i=0
while [ "$(ls /sys/block | grep -c '^sd')" -lt $want ]; do
	i=$((i + 1)); [ $i -lt 3000 ] || fail "$(($(ls /sys/block | grep -c '^sd') - before)) of $((luns * npaths)) path devices"
	sleep 0.2
done
probe_s=$(since "$t0")
udevadm settle --timeout=300 2>/dev/null
echo "$((luns * npaths)) path devices ($luns LUNs x $npaths paths) in $probe_s s"
h=$(ls /sys/block | grep '^sd' | sed -n 2p)
echo "$h: alua handler: $(cat /sys/block/$h/device/dh_state 2>/dev/null), access_state: $(cat /sys/block/$h/device/access_state 2>/dev/null)"

# --- multipathd --------------------------------------------------------------
mkdir -p /etc/multipath
cat >/etc/multipath.conf <<'CONF'
defaults {
	user_friendly_names no
	find_multipaths no
	path_grouping_policy group_by_prio
	prio alua
	failback immediate
	no_path_retry 30
	polling_interval 2
}
blacklist {
	device {
		vendor "Linux"
		product "scsi_debug"
	}
}
CONF
t1=$(cut -d' ' -f1 /proc/uptime)
# in the foreground of a background job: no systemd here to hand it to
multipathd -d -s >/tmp/multipathd.log 2>&1 &
mpd=$!
i=0
until timeout 10 multipathd show daemon >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 60 ] || setup "multipathd does not answer: $(tail -3 /tmp/multipathd.log)"
	kill -0 $mpd 2>/dev/null || setup "multipathd exited: $(tail -3 /tmp/multipathd.log)"
	sleep 1
done
echo "multipathd: $(timeout 10 multipathd show daemon 2>&1)"
maps() { timeout 20 multipathd show maps raw format "%n %N" 2>/dev/null; }
i=0
while [ "$(maps | awk -v p="$npaths" '$2 == p' | wc -l)" -lt "$luns" ]; do
	i=$((i + 1)); [ $i -lt 240 ] || break
	[ $((i % 20)) -eq 0 ] && { echo "  $(maps | wc -l) maps after $(since "$t1") s"; timeout 60 multipath -r >/dev/null 2>&1; }
	sleep 0.5
done
assemble_s=$(since "$t1")
nmaps=$(maps | wc -l)
full=$(maps | awk -v p="$npaths" '$2 == p' | wc -l)
echo "multipathd: $nmaps maps, $full with $npaths paths, in $assemble_s s"
timeout 30 multipath -ll 2>/dev/null | head -12
[ "$nmaps" -eq "$luns" ] || fail "$nmaps maps for $luns LUNs"
[ "$full" -eq "$luns" ] || fail "$full of $luns maps have $npaths paths"
# one map per LUN: every map's WWID distinct, and the serials of its paths equal
dup=$(maps | awk '{ print $1 }' | sort | uniq -d | wc -l)
[ "$dup" -eq 0 ] || fail "$dup WWIDs with more than one map"

# --- the maps under I/O, ready as a user would wait for them -----------------
# multipathd lists a map as soon as device-mapper has it; /dev/mapper/NAME is
# a symlink udev makes later, from the map's change event (55-dm.rules), and
# with hundreds of path and map events queued that can be minutes behind.
# Opening the name before then would make dd create a plain file on devtmpfs
# (O_DIRECT there: EINVAL) that udev then never replaces. So: the table live
# (dmsetup info), udev settled, the name a symlink to the map's own block
# node (same major:minor as dmsetup says); I/O goes to that node.
iomaps=$(maps | awk '{ print $1 }' | head -n "$nio")
t3=$(cut -d' ' -f1 /proc/uptime)
first=$(echo "$iomaps" | head -1)
links=0
for m in $iomaps; do [ -L "/dev/mapper/$m" ] && links=$((links + 1)); done
echo "right after assembly: $links of $(echo "$iomaps" | wc -l) /dev/mapper links made, udev queue $(udevadm settle --timeout=0 2>/dev/null && echo empty || echo busy)"
udevadm settle --timeout=600 2>/dev/null || echo "  udevadm settle: still busy after 600 s"
echo "udev settled after $(since "$t3") s"
for m in $iomaps; do
	i=0
	while :; do
		live=$(timeout 20 dmsetup info -c --noheadings -o attr,major,minor --separator ' ' "$m" 2>/dev/null)
		node=$(readlink -f "/dev/mapper/$m" 2>/dev/null)
		case $live in L*) ;; *) live="" ;; esac
		if [ -n "$live" ] && [ -L "/dev/mapper/$m" ] && [ -b "$node" ] &&
			[ "$(stat -L -c '%t:%T' "$node" 2>/dev/null)" = "$(printf '%x:%x' $(echo "$live" | cut -d' ' -f2-))" ]; then
			break
		fi
		[ -e "/dev/mapper/$m" ] && [ ! -L "/dev/mapper/$m" ] && setup "/dev/mapper/$m is not udev's symlink: $(ls -ld "/dev/mapper/$m")"
		i=$((i + 1)); [ $i -lt 300 ] || setup "/dev/mapper/$m not ready after $(since "$t3") s: dmsetup '$live', $(ls -ld "/dev/mapper/$m" 2>&1)"
		sleep 1
	done
	echo "$node" >/tmp/io-node.$m
done
ready_s=$(since "$t3")
echo "$(echo "$iomaps" | wc -l) maps under I/O: table live and /dev/mapper links made by udev after $ready_s s more ($first -> $(cat "/tmp/io-node.$first"))"

# --- failover under I/O --------------------------------------------------------
errs=/tmp/io-errors
: >$errs
io_loop() { # MAP: O_DIRECT writes and reads for a bounded time
	dev=$(cat /tmp/io-node.$1)
	n=0
	while [ ! -e /tmp/io-stop ] && [ $n -lt 2000 ]; do
		dd if=/dev/urandom of=/tmp/blk.$1 bs=4096 count=1 2>/dev/null
		# a map's node vanishing is an error, never a reason to create a file
		if [ ! -b "$dev" ]; then
			echo "gone $1 $n: $dev" >>$errs
		elif ! dd if=/tmp/blk.$1 of="$dev" bs=4096 seek=$((n % 64)) count=1 oflag=direct conv=notrunc 2>>$errs.$1; then
			echo "write $1 $n" >>$errs
		fi
		if ! dd if="$dev" of=/tmp/rd.$1 bs=4096 skip=$((n % 64)) count=1 iflag=direct 2>>$errs.$1 ||
			! cmp -s /tmp/blk.$1 /tmp/rd.$1; then
			echo "read $1 $n" >>$errs
		fi
		n=$((n + 1))
	done
	echo "$n" >/tmp/io-count.$1
}
rm -f /tmp/io-stop
pids=""
for m in $iomaps; do
	io_loop "$m" &
	pids="$pids $!"
done
sleep 5
sdswarm --control $ctl alua set a standby || fail "alua set a standby"
sdswarm --control $ctl alua set b active/optimized || fail "alua set b active/optimized"
t2=$(cut -d' ' -f1 /proc/uptime)
# the standby paths must turn ghost in multipathd's eyes (checker interval 2 s)
ghost=0
i=0
while [ $i -lt 120 ]; do
	ghost=$(timeout 20 multipathd show paths raw format "%t %T" 2>/dev/null | grep -c ghost)
	[ "$ghost" -ge $((luns * npaths / 2)) ] && break
	i=$((i + 1)); sleep 0.5
done
failover_s=$(since "$t2")
sleep 5
touch /tmp/io-stop
for p in $pids; do wait "$p"; done
ios=$(cat /tmp/io-count.* 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
nerr=$(wc -l <$errs)
echo "failover: $ghost ghost paths after $failover_s s; $ios write+read pairs through $nio maps, $nerr errors"
timeout 30 multipath -ll 2>/dev/null | head -8
cat >"$out/multipath.json" <<JSON
{"luns":$luns,"paths":$npaths,"path_devices":$((luns * npaths)),"probe_s":$probe_s,"maps":$nmaps,"maps_full":$full,"assemble_s":$assemble_s,"ghost_paths":$ghost,"ready_s":$ready_s,"failover_s":$failover_s,"io_pairs":$ios,"io_errors":$nerr,"verdict":"$([ "$nerr" -eq 0 ] && [ "$ghost" -ge $((luns * npaths / 2)) ] && echo PASS || echo FAIL)"}
JSON
cat "$out/multipath.json"
[ "$nerr" -eq 0 ] || { head -5 $errs; cat $errs.* 2>/dev/null | head -5; fail "$nerr I/O errors through the maps during the failover"; }
[ "$ios" -gt 0 ] || fail "no I/O went through the maps"
[ "$ghost" -ge $((luns * npaths / 2)) ] || fail "$ghost ghost paths after the standby, want $((luns * npaths / 2))"
echo PASS
exit 0
