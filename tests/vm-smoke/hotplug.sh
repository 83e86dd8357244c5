#!/bin/bash
# SPDX-License-Identifier: MIT
# Boots Debian's kernel under QEMU (testhost) logged in over iSCSI to
# sdswarmd in the guest; LUNs are removed and added at run time through
# the control socket (4 rounds: 2 out, 3 in). The Async Message makes
# iscsid rescan, and every new disk must get the lowest free sd index,
# name and dev_t that `sdnum alloc` predicts from the adds and removes so far.
# Skips when QEMU or the kernel package cannot be had, or sdswarmd is not
# built.
. "$(dirname "$0")/../lib/vm-smoke.sh"
vm_smoke_requires sdnum sdswarmd sdswarm

vm_smoke_run hotplug --timeout 200
guest_check "8 removed, 12 added" 'j["removed"] == 8 and j["added"] == 12'
guest_check "freed names were reused" 'j["reused"] >= 1'
guest_check "12 disks at the end" 'j["seen"] == 12'
guest_check "and no mismatch" 'j["mismatches"] == 0'
finish
