# SPDX-License-Identifier: MIT
# vm-all: no
# vm-mem: 256M
# vm-timeout: 60
# probe: the shortest boot there is; the test host boots it under KVM to
# see whether KVM works on this host before trusting it with a real
# scenario.
. /usr/lib/sdswarm-vm/vm-lib.sh
vm_pass "booted"
