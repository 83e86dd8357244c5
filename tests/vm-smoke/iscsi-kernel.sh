#!/bin/bash
# SPDX-License-Identifier: MIT
# Boots Debian's kernel under QEMU (testhost) with sdswarmd serving 300
# LUNs over iSCSI on the guest's loopback and the kernel's initiator
# (iscsi_tcp, iscsid, iscsiadm) logged in: the sd driver's names and dev_t
# of every disk and partition (sda..sdkn, LUNs 256+ in flat addressing,
# partitions 16-20 of the last 4 disks on major 259) must be sdnum's, and
# which LUN got which name must be what `sdswarm names` predicts. Skips
# when QEMU or the kernel package cannot be had, or sdswarmd is not built.
# test-timeout: 600
. "$(dirname "$0")/../lib/vm-smoke.sh"
vm_smoke_requires sdnum sdswarmd sdswarm

vm_smoke_run iscsi-kernel --disks 300 --timeout 540
guest_check "the guest saw 300 disks" 'j["seen"] == 300'
guest_check "and no mismatch" 'j["mismatches"] == 0'
guest_check "every LUN got the name sdswarm names predicts" 'j["lun_order_mismatches"] == 0'
guest_check "972 names checked (300 disks, 592 + 80 partitions)" 'j["checked"] == 972'
guest_check "20 partitions on major 259" 'j["parts_259"] == 20'
guest_check "the last disk is sdkn at 66:432" 'j["last"] == "sdkn 66:432"'
finish
