#!/bin/bash
# SPDX-License-Identifier: MIT
# doc/ci/github-actions.yml, the example CI workflow, stays valid: it parses
# as YAML with the jobs and steps GitHub Actions needs, every shell step is
# valid bash, every install-deps profile, program and VM scenario it names
# exists, and the FUSE job's disk step really runs here (in a private
# folder instead of /tmp) and passes.
. "$(dirname "$0")/../lib/common.sh"
requires python3 fusermount3
python3 -c 'import yaml' 2>/dev/null || skip "needs python3-yaml (scripts/install-deps test)"
[ -e /dev/fuse ] || skip "no /dev/fuse on this machine"
top=$SDSWARM_TOP
wf=$top/doc/ci/github-actions.yml
T=$(tmpdir)

# One file per `run:` step, named JOB-N.sh, plus a list of the actions used.
check "the workflow parses and has the fuse and vm jobs" python3 - "$wf" "$T" <<'PY'
import sys, yaml
wf, out = sys.argv[1], sys.argv[2]
doc = yaml.safe_load(open(wf))
# YAML 1.1 reads the key `on` as True
assert "on" in doc or True in doc, "no trigger"
jobs = doc["jobs"]
assert set(jobs) == {"fuse", "vm"}, sorted(jobs)
for name, job in jobs.items():
    assert job["runs-on"], name
    assert job["container"]["image"] == "debian:12", name
    steps = job["steps"]
    assert steps, name
    for i, st in enumerate(steps):
        assert "name" in st, (name, i)
        assert ("run" in st) != ("uses" in st), (name, i)
        if "run" in st:
            open(f"{out}/{name}-{i}.sh", "w").write(st["run"])
        else:
            open(f"{out}/uses", "a").write(st["uses"] + "\n")
PY

for f in "$T"/*.sh; do
	check "$(basename "$f") is valid bash" bash -n "$f"
done
check "actions/cache is the only action used" test "$(sort -u "$T/uses")" = "actions/cache@v4"

# Every profile, program and scenario the steps name exists.
for prof in $(grep -ho 'install-deps [a-z]*' "$T"/*.sh | awk '{ print $2 }' | sort -u); do
	SDSWARM_NO_INSTALL=1 "$top/scripts/install-deps" "$prof" >/dev/null 2>&1
	rc=$?
	check "install-deps knows the profile '$prof'" test "$rc" -ne 2
done
for prog in $(grep -ho 'build/bin/[a-z-]*' "$T"/*.sh | sort -u); do
	check "$prog is a program make builds" test -x "$SDSWARM_PLAIN_BIN/$(basename "$prog")"
done
scs=$(grep -ho 'testhost/sdswarm-testhost run [a-z0-9-]*' "$T"/*.sh | awk '{ print $3 }' | sort -u)
check "the vm job runs a scenario through sdswarm-testhost" test -n "$scs"
for sc in $scs; do
	check "the VM scenario '$sc' exists" test -f "$top/testhost/scenarios/$sc.sh"
done

# The FUSE job's disk step, run for real with its paths made private.
step=$(grep -l 'sdswarmd --fuse' "$T"/fuse-*.sh)
expect_eq "one FUSE step" 1 "$(echo "$step" | wc -l)"
mkdir -p "$T/run/build"
ln -s "$SDSWARM_PLAIN_BIN" "$T/run/build/bin"
sed "s|/tmp/|$T/run/|g" "$step" >"$T/fuse-step.sh"
on_exit "[ -f '$T/run/sdswarmd.pid' ] && kill \$(cat '$T/run/sdswarmd.pid') 2>/dev/null; fusermount3 -u '$T/run/disks' 2>/dev/null"
(cd "$T/run" && timeout 240 bash -e "$T/fuse-step.sh") >"$T/fuse-step.log" 2>&1
rc=$?
expect_eq "the FUSE job's step passes" 0 "$rc"
[ "$rc" = 0 ] || tail -20 "$T/fuse-step.log"
check "it ran open-all over the disks" grep -q 'open-all' "$T/fuse-step.log"
finish
