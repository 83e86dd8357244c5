#!/bin/bash
# SPDX-License-Identifier: MIT
# Boots Debian's kernel under QEMU (tests/vm) with 300 scsi_debug disks and
# two partitions each (sda..sdkn: past sdz and past 256 disks) and checks
# that the kernel's sd driver named and numbered every disk and partition
# as sdnum says. Skips when QEMU or the kernel package cannot be had.
. "$(dirname "$0")/../lib/common.sh"
requires qemu-system-x86_64
[ -x "$SDSWARM_PLAIN_BIN/sdnum" ] || skip "no $SDSWARM_PLAIN_BIN/sdnum: run make"
export SDSWARM_VM_BIN=$SDSWARM_PLAIN_BIN

out=$("$SDSWARM_TOP/tests/vm/run" scsi-debug --disks 300 --parts 2 \
	--timeout 150 --json)
rc=$?
[ $rc -eq 77 ] && skip "${out#SKIP: }"
echo "$out"
expect_eq "tests/vm/run exit status" 0 "$rc"
check "the guest reported 300 disks seen" grep -q '"seen":300,' <<<"$out"
check "and no mismatch" grep -q '"mismatches":0,' <<<"$out"
check "and checked 900 names (disks and partitions)" grep -q '"checked":900,' <<<"$out"
check "the last disk is sdkn at 66:432" grep -q '"last":"sdkn 66:432"' <<<"$out"
finish
