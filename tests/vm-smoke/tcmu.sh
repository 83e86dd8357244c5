#!/bin/bash
# SPDX-License-Identifier: MIT
# Boots Debian's kernel under QEMU (tests/vm) and runs sdswarmd's TCMU
# front end with 20 LUNs (the last 2 with 20 GPT partitions, so partitions
# 16+ land on major 259): the daemon makes the backstores and the tcm_loop
# target itself, the kernel's sd driver makes the disks, and every name,
# dev_t, identity and the clean removal at SIGTERM is checked (the
# tcmu-257 scenario, smaller). Skips when QEMU or the kernel package
# cannot be had, or sdswarmd is not built.
. "$(dirname "$0")/../lib/common.sh"
requires qemu-system-x86_64
for b in sdnum sdswarmd sdswarm; do
	[ -x "$SDSWARM_PLAIN_BIN/$b" ] || skip "no $SDSWARM_PLAIN_BIN/$b: run make"
done
export SDSWARM_VM_BIN=$SDSWARM_PLAIN_BIN

out=$("$SDSWARM_TOP/tests/vm/run" tcmu-257 --disks 20 --set many=2 \
	--mem 1G --timeout 150 --json)
rc=$?
[ $rc -eq 77 ] && skip "${out#SKIP: }"
echo "$out"
expect_eq "tests/vm/run exit status" 0 "$rc"
check "the guest reported 20 disks seen" grep -q '"seen":20,' <<<"$out"
check "and no mismatch" grep -q '"mismatches":0,' <<<"$out"
# 20 disks + 18 x 2 + 2 x 20 partitions
check "and checked 96 names (disks and partitions)" grep -q '"checked":96,' <<<"$out"
check "the disks are tcm_loop's" grep -q '"host_driver":"tcm_loopback"' <<<"$out"
check "the last disk is sdt at 65:48" grep -q '"last":"sdt 65:48"' <<<"$out"
finish
