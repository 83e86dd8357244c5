#!/bin/bash
# SPDX-License-Identifier: MIT
# Boots Debian's kernel under QEMU (testhost) with 300 scsi_debug disks and
# two partitions each (sda..sdkn: past sdz and past 256 disks) and checks
# that the kernel's sd driver named and numbered every disk and partition
# as sdnum says. Skips when QEMU or the kernel package cannot be had.
. "$(dirname "$0")/../lib/vm-smoke.sh"
vm_smoke_requires sdnum

vm_smoke_run scsi-debug --disks 300 --parts 2 \
	--timeout 150
guest_check "the guest reported 300 disks seen" 'j["seen"] == 300'
guest_check "and no mismatch" 'j["mismatches"] == 0'
guest_check "and checked 900 names (disks and partitions)" 'j["checked"] == 900'
guest_check "the last disk is sdkn at 66:432" 'j["last"] == "sdkn 66:432"'
finish
