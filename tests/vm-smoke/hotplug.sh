#!/bin/bash
# SPDX-License-Identifier: MIT
# Boots Debian's kernel under QEMU (tests/vm) logged in over iSCSI to
# sdswarmd in the guest; LUNs are removed and added at run time through
# the control socket (4 rounds: 2 out, 3 in). The Async Message makes
# iscsid rescan, and every new disk must get the lowest free sd index,
# name and dev_t that `sdnum alloc` predicts from the adds and removes so far.
# Skips when QEMU or the kernel package cannot be had, or sdswarmd is not
# built.
. "$(dirname "$0")/../lib/common.sh"
requires qemu-system-x86_64
for p in sdnum sdswarmd sdswarm; do
	[ -x "$SDSWARM_PLAIN_BIN/$p" ] || skip "no $SDSWARM_PLAIN_BIN/$p: run make"
done
export SDSWARM_VM_BIN=$SDSWARM_PLAIN_BIN

out=$("$SDSWARM_TOP/tests/vm/run" hotplug --timeout 200 --json)
rc=$?
[ $rc -eq 77 ] && skip "${out#SKIP: }"
echo "$out"
expect_eq "tests/vm/run exit status" 0 "$rc"
check "8 removed, 12 added" grep -q '"removed":8,"added":12,' <<<"$out"
check "freed names were reused" grep -Eq '"reused":[1-9]' <<<"$out"
check "12 disks at the end" grep -q '"seen":12,' <<<"$out"
check "and no mismatch" grep -q '"mismatches":0,' <<<"$out"
finish
