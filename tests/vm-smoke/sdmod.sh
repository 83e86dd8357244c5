#!/bin/bash
# SPDX-License-Identifier: MIT
# Boots Debian's kernel under QEMU (testhost) with sdswarm's patched sd_mod
# (testhost/sd, built from Debian's own source by `sdswarm-testhost
# sd-module`):
# 100 scsi_debug disks x 2 partitions under the stock sd_mod, then seven bad
# parameter sets the patched module must refuse, then the patched module
# with no parameters, which must name and number all 300 disks and
# partitions exactly as the stock one did and as sdnum says, and taint the
# kernel (unsigned, out of tree). Skips when QEMU, the kernel package or the
# packages the module is built from cannot be had.
. "$(dirname "$0")/../lib/vm-smoke.sh"
vm_smoke_requires sdnum

# The image's kernel first (sdswarm-testhost build), then the module for it.
out=$("$VM_TESTHOST" build -q 2>&1)
rc=$?
[ $rc -eq 77 ] && skip "$(grep -m1 '^SKIP:' <<<"$out" | sed 's/^SKIP: //')"
expect_eq "sdswarm-testhost build exit status" 0 "$rc"
out=$("$VM_TESTHOST" sd-module -q 2>&1)
rc=$?
[ $rc -eq 77 ] && skip "$(grep -m1 '^SKIP:' <<<"$out" | sed 's/^SKIP: //')"
expect_eq "sdswarm-testhost sd-module exit status" 0 "$rc"

vm_smoke_run sdmod-stock --disks 100 --parts 2 --timeout 240
guest_check "the guest saw 100 disks" 'j["seen"] == 100'
guest_check "stock and patched named them alike" 'j["stock_vs_patched"] == 0'
guest_check "and as sdnum does" 'j["mismatches"] == 0'
guest_check "300 names checked" 'j["checked"] == 300'
guest_check "7 bad parameter sets refused" 'j["bad_params_refused"] == 7'
guest_check "the kernel is tainted O and E" 'j["tainted"] == 12288'
finish
