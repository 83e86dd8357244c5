#!/bin/bash
# SPDX-License-Identifier: MIT
# Boots Debian's kernel under QEMU (tests/vm) and checks the kernel side of
# the TCMU path: a target_core_user backstore made through configfs yields
# /dev/uio0, and exporting it through tcm_loop puts the scan's commands on
# its ring. Skips when QEMU or the kernel package cannot be had.
. "$(dirname "$0")/../lib/common.sh"
requires qemu-system-x86_64
[ -x "$SDSWARM_PLAIN_BIN/sdnum" ] || skip "no $SDSWARM_PLAIN_BIN/sdnum: run make"
export SDSWARM_VM_BIN=$SDSWARM_PLAIN_BIN

out=$("$SDSWARM_TOP/tests/vm/run" tcmu-probe --timeout 120 --json)
rc=$?
[ $rc -eq 77 ] && skip "${out#SKIP: }"
echo "$out"
expect_eq "tests/vm/run exit status" 0 "$rc"
check "the uio device is the backstore's" grep -q '"uio_name":"tcm-user/0/vm0/sdswarm/vm0"' <<<"$out"
check "the ring received a command" grep -Eq '"events":[1-9]' <<<"$out"
finish
