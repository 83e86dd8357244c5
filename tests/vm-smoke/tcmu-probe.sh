#!/bin/bash
# SPDX-License-Identifier: MIT
# Boots Debian's kernel under QEMU (testhost) and checks the kernel side of
# the TCMU path: a target_core_user backstore made through configfs yields
# /dev/uio0, and exporting it through tcm_loop puts the scan's commands on
# its ring. Skips when QEMU or the kernel package cannot be had.
. "$(dirname "$0")/../lib/vm-smoke.sh"
vm_smoke_requires sdnum

vm_smoke_run tcmu-probe --timeout 120
guest_check "the uio device is the backstore's" 'j["uio_name"] == "tcm-user/0/vm0/sdswarm/vm0"'
guest_check "the ring received a command" 'j["events"] >= 1'
finish
