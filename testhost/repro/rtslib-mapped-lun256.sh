#!/bin/sh
# SPDX-License-Identifier: MIT
# repro-exec: --frontend scsi_debug --disks 1 --pkgs python3-rtslib-fb
# software:  rtslib-fb (python3-rtslib-fb), the library targetcli-fb and
#            the LIO tools configure the kernel's SCSI target with
# threshold: mapped LUN 256 (an initiator's ACL seeing a 257th LUN)
# upstream:  open-iscsi/rtslib-fb PR 191 ("rtslib: remove the limit of 255
#            max mapped LUNs", in 2.1.76): MappedLUN refused any number past
#            MAX_LUN (255) before asking the kernel, which takes 64-bit
#            LUNs since Linux 4.2; a TPG's own LUNs went to 65,535 in PR 121
# assertion: in the guest's LIO (target_core_mod, iscsi_target_mod, two
#            rd_mcp backstores as TPG LUNs 0 and 300 of one iSCSI target),
#            an ACL's MappedLUN 255 is created (the control) and MappedLUN
#            256 is refused by rtslib, with no lun_256 in configfs
# expect:    bookworm REPRODUCED: python3-rtslib-fb 2.1.75-2.1, before PR 191
# expect:    trixie NOT REPRODUCED: python3-rtslib-fb 2.1.76-3, with PR 191
# Exit 0: REPRODUCED; 1: NOT REPRODUCED; 2: cannot tell.
set -u
ver=$(python3 -c 'import importlib.metadata as m; print(m.version("rtslib-fb"))' 2>/dev/null ||
	sed -n 's/^Version: //p' /usr/lib/python3/dist-packages/rtslib_fb-*/METADATA /usr/lib/python3/dist-packages/rtslib_fb-*/PKG-INFO 2>/dev/null | head -1)
echo "software: rtslib-fb ${ver:-unknown}, $(python3 --version 2>&1)"
modprobe target_core_mod && modprobe iscsi_target_mod || { echo "no LIO modules"; exit 2; }
grep -q configfs /proc/mounts || mount -t configfs configfs /sys/kernel/config || { echo "no configfs"; exit 2; }
[ -d /sys/kernel/config/target ] || { echo "no /sys/kernel/config/target"; exit 2; }
# rtslib points the target core's dbroot at /etc/rtslib-fb-target, which
# the kernel refuses (EINVAL) unless the folder exists; the Debian
# package's postinst would make it.
mkdir -p /etc/rtslib-fb-target
# Python's exit: 10 mapped LUN 256 refused, 11 created, anything else the
# setup failed (its traceback in rtslib.txt).
python3 - >rtslib.txt 2>&1 <<'PY'
import os, sys
from rtslib_fb import FabricModule, Target, TPG, RDMCPStorageObject, LUN, NodeACL, MappedLUN
so0 = RDMCPStorageObject("repro0", size=1 << 20)
so1 = RDMCPStorageObject("repro1", size=1 << 20)
tpg = TPG(Target(FabricModule("iscsi"), "iqn.2003-01.org.sdswarm:repro"), 1)
l0 = LUN(tpg, 0, so0)
l1 = LUN(tpg, 300, so1)
acl = NodeACL(tpg, "iqn.2003-01.org.sdswarm:initiator")
base = acl.path
MappedLUN(acl, 255, l0)
print("mapped 255: created,", os.path.isdir(base + "/lun_255"))
try:
    MappedLUN(acl, 256, l1)
except Exception as e:
    print("mapped 256: refused:", type(e).__name__, e, "| lun_256 in configfs:", os.path.isdir(base + "/lun_256"))
    sys.exit(10)
print("mapped 256: created,", os.path.isdir(base + "/lun_256"))
sys.exit(11)
PY
rc=$?
cat rtslib.txt
grep -q 'mapped 255: created, True' rtslib.txt || { echo "the control failed: mapped LUN 255 not in configfs (python exit $rc)"; exit 2; }
case $rc in
10)
	grep -q 'lun_256 in configfs: False' rtslib.txt || { echo "refused, yet lun_256 is in configfs"; exit 2; }
	echo "rtslib refused mapped LUN 256 ($(sed -n 's/^mapped 256: refused: //p' rtslib.txt | cut -d'|' -f1 | cut -c1-80)) and took 255"
	exit 0 ;;
11)
	grep -q 'mapped 256: created, True' rtslib.txt || { echo "rtslib said created, but configfs has no lun_256"; exit 2; }
	echo "mapped LUN 256 created (configfs lun_256), as 255: no limit in rtslib"
	exit 1 ;;
esac
echo "the setup failed (python exit $rc): see rtslib.txt"
exit 2
