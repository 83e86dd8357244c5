#!/bin/bash
# SPDX-License-Identifier: MIT
# One short `sdswarm-testhost exec --release trixie` boot: Debian 13's kernel
# (6.12, its own package through the test host's private apt sources)
# with 8 scsi_debug disks on the initramfs host, and a script that
# asserts what it was promised: a 6.12 kernel, and exactly the disks
# sda..sdh, in index order, each with a block node. Its exit status must
# come back as the run's, its output on standard output, its file in
# --out. The first run downloads the kernel package (~110 MB) and
# unpacks its modules (build/vm-trixie/). Skips when QEMU or the trixie
# kernel package cannot be had.
# test-timeout: 600
. "$(dirname "$0")/../lib/vm-smoke.sh"
vm_smoke_requires sdnum
t=$(tmpdir)

cat >"$t/assert-trixie.sh" <<'GUEST'
#!/bin/sh
# In the guest: the release's kernel and the disks promised, by name.
bad=0
kver=$(uname -r)
case $kver in 6.12.*) ;; *) echo "kernel $kver, want 6.12.*"; bad=1 ;; esac
want="sda sdb sdc sdd sde sdf sdg sdh"
[ "$SDSWARM_DISKS" -eq 8 ] || { echo "SDSWARM_DISKS=$SDSWARM_DISKS, want 8"; bad=1; }
have=$(ls /sys/block | grep '^sd' | sort | tr '\n' ' ')
[ "$have" = "$want " ] || { echo "/sys/block has: $have"; bad=1; }
list=$(cut -d' ' -f1 "$SDSWARM_DISK_LIST" | tr '\n' ' ')
[ "$list" = "$want " ] || { echo "disk list: $list"; bad=1; }
for d in $want; do
	[ -b "/dev/$d" ] || { echo "no /dev/$d"; bad=1; }
done
echo "kernel $kver disks $(echo $have | wc -w): $have"
echo "kernel=$kver bad=$bad" >report.txt
exit $bad
GUEST
chmod +x "$t/assert-trixie.sh"

vm_smoke_exec --release trixie --frontend scsi_debug --disks 8 \
	--script "$t/assert-trixie.sh" --out "$t/out" --timeout 300
rc=$VM_EXEC_RC
out=$VM_EXEC_OUT
expect_eq "the script's exit status is the run's" 0 "$rc"
check "it saw a 6.12 kernel and sda..sdh" \
	grep -q '^kernel 6\.12\.[^ ]* disks 8: sda sdb sdc sdd sde sdf sdg sdh $' <<<"$out"
check "its file came back" grep -q '^kernel=6\.12\..* bad=0$' "$t/out/report.txt"
finish
