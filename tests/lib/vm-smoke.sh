# SPDX-License-Identifier: MIT
# The shared helper of the VM smokes (tests/vm-smoke/*.sh), each a short
# boot of the test host (testhost/sdswarm-testhost) with the plain build:
# sourced, never run. Sources common.sh and json.sh.
#   VM_TESTHOST          the test host's command, the smokes' one way in
#   vm_smoke_requires [PROG...]
#                        skip (77) unless QEMU and python3 are installed
#                        and every PROG is built in $SDSWARM_PLAIN_BIN;
#                        exports SDSWARM_VM_BIN (the guest runs that build)
#   vm_smoke_run SCENARIO [ARGS...]
#                        sdswarm-testhost run SCENARIO ARGS --json (the
#                        array VM_RUN, the command and its first words, may
#                        name another runner); skips when it does; prints its
#                        report and checks its exit status is 0; stores
#                        the report in $VM_SMOKE_JSON and the scenario's
#                        guest object (its results[0].guest) in
#                        $VM_SMOKE_GUEST
#   vm_smoke_exec ARGS...
#                        sdswarm-testhost exec ARGS: its stderr printed
#                        and kept in the file $VM_EXEC_ERR, skips when it
#                        does, its stdout printed and kept in
#                        $VM_EXEC_OUT, its exit status in $VM_EXEC_RC
#   guest_check DESC EXPR
#                        json_check DESC $VM_SMOKE_GUEST EXPR: EXPR is a
#                        Python expression over j, the guest's object, e.g.
#                        guest_check "300 disks seen" 'j["seen"] == 300'
. "$(dirname "${BASH_SOURCE[0]}")/json.sh"

VM_TESTHOST=$SDSWARM_TOP/testhost/sdswarm-testhost
VM_RUN=("$VM_TESTHOST" run)
_vm_smoke_dir=$(tmpdir)
VM_SMOKE_JSON=$_vm_smoke_dir/run.json
VM_SMOKE_GUEST=$_vm_smoke_dir/guest.json

vm_smoke_requires() {
	local p
	requires qemu-system-x86_64 python3
	for p in "$@"; do
		[ -x "$SDSWARM_PLAIN_BIN/$p" ] || skip "no $SDSWARM_PLAIN_BIN/$p: run make"
	done
	export SDSWARM_VM_BIN=$SDSWARM_PLAIN_BIN
}

vm_smoke_exec() {
	VM_EXEC_ERR=$(tmpdir)/exec.err
	VM_EXEC_OUT=$("$VM_TESTHOST" exec "$@" 2>"$VM_EXEC_ERR")
	VM_EXEC_RC=$?
	cat "$VM_EXEC_ERR"
	grep -q '^SKIP:' <<<"$VM_EXEC_OUT" && skip "$(grep -m1 '^SKIP:' <<<"$VM_EXEC_OUT")"
	echo "$VM_EXEC_OUT"
}

vm_smoke_run() {
	local out rc
	out=$("${VM_RUN[@]}" "$@" --json)
	rc=$?
	[ $rc -eq 77 ] && skip "${out#SKIP: }"
	echo "$out"
	expect_eq "sdswarm-testhost run exit status" 0 "$rc"
	printf '%s\n' "$out" >"$VM_SMOKE_JSON"
	# the guest's object on its own; when the report is not the one
	# document expected, its text, so that guest_check says why
	python3 - "$VM_SMOKE_JSON" >"$VM_SMOKE_GUEST" 2>/dev/null <<'PY' ||
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))["results"]
json.dump(r[0]["guest"], sys.stdout)
PY
		cp "$VM_SMOKE_JSON" "$VM_SMOKE_GUEST"
}

guest_check() {
	json_check "$1" "$VM_SMOKE_GUEST" "$2"
}
