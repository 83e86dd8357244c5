# SPDX-License-Identifier: MIT
# vm-mem: 3G
# vm-timeout: 1500
# tcmu-703: tcmu-257 with 703 LUNs (sda..sdaaa: sdzz, the last
# two-letter name, is index 701, sdaaa 702), every check and figure the
# same; see tcmu-257.sh. Parameters as there (sdswarm.disks overrides the 703).
TCMU_DISKS=703
. /scenarios/tcmu-257.sh
