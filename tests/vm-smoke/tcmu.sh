#!/bin/bash
# SPDX-License-Identifier: MIT
# Boots Debian's kernel under QEMU (testhost) and runs sdswarmd's TCMU
# front end with 20 LUNs (the last 2 with 20 GPT partitions, so partitions
# 16+ land on major 259): the daemon makes the backstores and the tcm_loop
# target itself, the kernel's sd driver makes the disks, and every name,
# dev_t, identity and the clean removal at SIGTERM is checked (the
# tcmu-257 scenario, smaller). Skips when QEMU or the kernel package
# cannot be had, or sdswarmd is not built.
. "$(dirname "$0")/../lib/vm-smoke.sh"
vm_smoke_requires sdnum sdswarmd sdswarm

vm_smoke_run tcmu-257 --disks 20 --set many=2 \
	--mem 1G --timeout 150
guest_check "the guest reported 20 disks seen" 'j["seen"] == 20'
guest_check "and no mismatch" 'j["mismatches"] == 0'
# 20 disks + 18 x 2 + 2 x 20 partitions
guest_check "and checked 96 names (disks and partitions)" 'j["checked"] == 96'
guest_check "the disks are tcm_loop's" 'j["host_driver"] == "tcm_loopback"'
guest_check "the last disk is sdt at 65:48" 'j["last"] == "sdt 65:48"'
finish
