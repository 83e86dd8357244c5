#!/bin/bash
# SPDX-License-Identifier: MIT
# The VM smokes' JSON checks, proven without a VM: tests/lib/vm-smoke.sh's
# vm_smoke_run over a stand-in for `sdswarm-testhost run` that prints a
# saved report (the document `sdswarm-testhost run scsi-debug --json`
# prints), then guest_check
# and json_check. A check passes on the good document whatever its key
# order and spacing, and FAILS, saying why, on a wrong value, a missing
# key, a document that is not JSON, a missing file and a guest that sent
# nothing; a runner that skips (77) skips the smoke.
. "$(dirname "$0")/../lib/vm-smoke.sh"
requires python3
T=$(tmpdir)

# the report of a passing 300-disk scsi-debug boot, as the runner printed
# it on this machine (its guest object saved from build/vm/logs)
cat >"$T/good.json" <<'JSON'
{"accel":"tcg","accel_note":"no usable /dev/kvm","results":[{"scenario":"scsi-debug","result":"PASS","reason":"every name and dev_t matches sdnum","wall_s":44.1,"timeout_s":150,"mem":"1G","log":"build/vm/logs/scsi-debug.log","guest":{"scenario":"scsi-debug","kernel":"6.1.0-57-amd64","boot_s":3.88,"cpus":2,"mem_total_kib":983496,"disks":300,"parts":2,"seen":300,"probe_s":1.99,"scan_s":1.73,"mem_used_kib":98788,"missing":0,"control_mismatches":897,"mismatches":0,"checked":900,"first":"sda 8:0","last":"sdkn 66:432","end_s":9.50,"result":"PASS","reason":"every name and dev_t matches sdnum"}}]}
JSON
# the same guest, keys in another order, spaced, "seen" last (no comma after)
cat >"$T/reordered.json" <<'JSON'
{ "results": [ { "guest": { "last": "sdkn 66:432", "checked": 900,
  "mismatches": 0, "disks": 300, "seen": 300 }, "result": "PASS" } ],
  "accel": "tcg" }
JSON
cat >"$T/runner" <<'EOF2'
#!/bin/bash
# a stand-in for sdswarm-testhost run: prints $FAKE_REPORT, exits $FAKE_RC
[ "${*: -1}" = --json ] || { echo "runner: no --json" >&2; exit 2; }
cat "$FAKE_REPORT"
exit "${FAKE_RC:-0}"
EOF2
chmod +x "$T/runner"
VM_RUN=("$T/runner")

# smoke REPORT [RC] -- CHECKS...: one smoke in a subshell (its own count),
# the scsi-debug smoke's four checks; prints its output to $T/out and
# returns its exit status (0 all passed, 1 some failed, 77 skipped)
smoke() {
	(
		FAKE_REPORT=$1 FAKE_RC=${2:-0}
		export FAKE_REPORT FAKE_RC
		vm_smoke_run scsi-debug --disks 300 --parts 2 --timeout 150
		guest_check "the guest reported 300 disks seen" 'j["seen"] == 300'
		guest_check "and no mismatch" 'j["mismatches"] == 0'
		guest_check "and checked 900 names" 'j["checked"] == 900'
		guest_check "the last disk is sdkn at 66:432" 'j["last"] == "sdkn 66:432"'
		[ "$_failures" -eq 0 ]
	) >"$T/out" 2>&1
}
# said DESC PATTERN: the last smoke's output matches PATTERN (grep -E)
said() {
	if grep -qE -- "$2" "$T/out"; then ok "$1"; else fail "$1: no /$2/ in: $(cat "$T/out")"; fi
}

smoke "$T/good.json"
expect_eq "the saved report passes all four checks" 0 "$?"
said "... each one counted" '^ok: the last disk is sdkn at 66:432$'
smoke "$T/reordered.json"
expect_eq "key order and spacing decide nothing" 0 "$?"

sed 's/"seen":300/"seen":299/' "$T/good.json" >"$T/wrong.json"
smoke "$T/wrong.json"
expect_eq "a wrong value fails" 1 "$?"
said "... the check that failed says so" "^FAIL: the guest reported 300 disks seen: .*: false$"
said "... and the others still pass" '^ok: and no mismatch$'

sed 's/"mismatches":0,//' "$T/good.json" >"$T/missing.json"
smoke "$T/missing.json"
expect_eq "a missing key fails" 1 "$?"
said "... naming the key" "^FAIL: and no mismatch: .*no 'mismatches' in the document$"

head -c 200 "$T/good.json" >"$T/cut.json"
smoke "$T/cut.json"
expect_eq "a report cut short (not JSON) fails" 1 "$?"
said "... saying it is not JSON" "is not a JSON document"

sed 's/"guest":{.*}}]}$/"guest":null}]}/' "$T/good.json" >"$T/noguest.json"
smoke "$T/noguest.json"
expect_eq "a guest that sent no JSON fails" 1 "$?"
said "... its checks fail on the document's shape" "another shape"

smoke "$T/good.json" 1
expect_eq "a failed run fails, its guest's figures fine" 1 "$?"
said "... on the run's exit status" "^FAIL: sdswarm-testhost run exit status: want '0', got '1'$"

echo "SKIP: no QEMU here" >"$T/skip.txt"
smoke "$T/skip.txt" 77
expect_eq "a runner that skips skips the smoke" 77 "$?"
said "... with its reason" "^SKIP: no QEMU here$"

# json_check on its own: a file that is not there, and an expression that
# is not a yes or no
( json_check "a missing file" "$T/none.json" 'j == 1'; [ "$_failures" -eq 0 ] ) >"$T/out" 2>&1
expect_eq "a missing file fails" 1 "$?"
said "... saying it cannot be read" "cannot read $T/none.json"
( json_check "a count, not a verdict" "$T/good.json" 'len(j["results"])'; [ "$_failures" -eq 0 ] ) >"$T/out" 2>&1
expect_eq "an expression that is not True fails" 1 "$?"
said "... saying what it was" "not True but 1"
json_check "the document's own accelerator" "$T/good.json" 'j["accel"] == "tcg"'
finish
