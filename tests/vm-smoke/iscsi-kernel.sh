#!/bin/bash
# SPDX-License-Identifier: MIT
# Boots Debian's kernel under QEMU (tests/vm) with sdswarmd serving 300
# LUNs over iSCSI on the guest's loopback and the kernel's initiator
# (iscsi_tcp, iscsid, iscsiadm) logged in: the sd driver's names and dev_t
# of every disk and partition (sda..sdkn, LUNs 256+ in flat addressing,
# partitions 16-20 of the last 4 disks on major 259) must be sdnum's, and
# which LUN got which name must be what `sdswarm names` predicts. Skips
# when QEMU or the kernel package cannot be had, or sdswarmd is not built.
# test-timeout: 600
. "$(dirname "$0")/../lib/common.sh"
requires qemu-system-x86_64
for p in sdnum sdswarmd sdswarm; do
	[ -x "$SDSWARM_PLAIN_BIN/$p" ] || skip "no $SDSWARM_PLAIN_BIN/$p: run make"
done
export SDSWARM_VM_BIN=$SDSWARM_PLAIN_BIN

out=$("$SDSWARM_TOP/tests/vm/run" iscsi-kernel --disks 300 --timeout 540 --json)
rc=$?
[ $rc -eq 77 ] && skip "${out#SKIP: }"
echo "$out"
expect_eq "tests/vm/run exit status" 0 "$rc"
check "the guest saw 300 disks" grep -q '"seen":300,' <<<"$out"
check "and no mismatch" grep -q '"mismatches":0,' <<<"$out"
check "every LUN got the name sdswarm names predicts" grep -q '"lun_order_mismatches":0,' <<<"$out"
check "972 names checked (300 disks, 592 + 80 partitions)" grep -q '"checked":972,' <<<"$out"
check "20 partitions on major 259" grep -q '"parts_259":20,' <<<"$out"
check "the last disk is sdkn at 66:432" grep -q '"last":"sdkn 66:432"' <<<"$out"
finish
