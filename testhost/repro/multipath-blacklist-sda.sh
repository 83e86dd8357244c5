#!/bin/sh
# SPDX-License-Identifier: MIT
# repro-exec: --frontend scsi_debug --disks 30 --pkgs multipath-tools
# software:  multipath-tools 0.9.4 (Debian 12)
# threshold: 27 disks (sdaa is the 27th)
# upstream:  a configuration pitfall, not a code bug: multipath.conf(5)
#            says devnode entries are regular expressions matched against
#            the device name, unanchored at the end; `^sda[0-9]*` meant
#            "sda and its partitions" and matches sdaa..sdaz too
# assertion: with `blacklist { devnode "^sda[0-9]*" }`, `multipath -v3 -d`
#            reports sdab blacklisted by devnode, and not sdb (control)
# expect:    bookworm REPRODUCED: multipath-tools 0.9.4-3+deb12u2
# expect:    trixie REPRODUCED: multipath-tools 0.11.1-2; devnode is still an
#            unanchored regex (a pitfall, not a bug to fix)
# Exit 0: REPRODUCED; 1: NOT REPRODUCED; 2: cannot tell.
echo "software: $(multipath -h 2>&1 | grep -m1 -o 'multipath-tools v[^ ]*')"
grep -q '^sdab ' "$SDSWARM_DISK_LIST" || { echo "the guest has no sdab"; exit 2; }
modprobe dm_multipath || { echo "no dm_multipath"; exit 2; }
mkdir -p /etc/multipath
cat >/etc/multipath.conf <<'CONF'
defaults {
	user_friendly_names no
	find_multipaths no
}
blacklist {
	devnode "^sda[0-9]*"
}
CONF
multipath -v3 -d >multipath-v3.txt 2>&1
echo "multipath -v3 -d exited $?; $(wc -l <multipath-v3.txt) lines"
grep -E '^.*(sda|sdab|sdb)[: ].*blacklist' multipath-v3.txt | head -5
bl() { grep -Eq "(^| )$1: .*device node name blacklisted" multipath-v3.txt; }
bl sda || { echo "sda itself is not blacklisted: the configuration did not load"; exit 2; }
bl sdb && { echo "sdb is blacklisted too: the match is not what this case is about"; exit 2; }
if bl sdab; then
	echo "sdab is blacklisted by devnode \"^sda[0-9]*\" (as are $(grep -Ec ' sda[a-z]: .*device node name blacklisted' multipath-v3.txt) of sdaa..sdad)"
	exit 0
fi
echo "sdab is not blacklisted"
exit 1
