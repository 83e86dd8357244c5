#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/run's `iscsi-ls` step: sdswarmd on configs/iscsi-quarter-million.conf
# (16 targets x 16,384 LUNs, mem store) on a free loopback port, then
# `iscsi-ls -s` (discovery, then every target's LUNs with their size) timed
# to completion, the LUNs it lists counted (262,144 wanted), and the
# daemon's RSS before and after. Prints a table, or with --json one object.
#
# usage: bench/iscsi-ls-scale.sh BIN_DIR [--json] [--luns N]
#
# --luns N serves N LUNs instead (a multiple of 16 from 16 to 262,144: 16
# targets of N/16), for a smoke test that takes seconds. --json is a report
# of sdswarm-bench's own layout, so that `sdswarm-bench compare` reads it:
# the stamp and machine of BIN_DIR's sdswarm-bench (`sdswarm-bench stamp
# --machine`), "results" rows (group iscsi-ls, n = the LUNs served,
# ns_per_op = nanoseconds per LUN), this script's own keys, and the
# targets; the count of iSCSI targets listed is "iscsi_targets". Under
# 65,536 LUNs the report is marked noisy (the daemon's fixed RSS and
# start-up cost dominate).
#
# iscsi-ls stops at the first command that fails, a unit attention
# included: the config has power_on_ua = no, so a fresh daemon's LUNs
# answer their first command without POWER ON OCCURRED.
#
# sdswarmd runs the listing captive (sdswarmd --run: ready means the
# portal listens), so nothing is signalled by hand; the temporary folder
# goes on every exit; every wait and run is bounded by `timeout`.
set -u
now() { date +%s.%N; }
# The captive half, run by sdswarmd --run once the portal listens, with
# SDSWARM_PID set: the timed listing and the daemon's RSS around it,
# written to $ILS_SCRATCH/vals for the outer half.
if [ "${1:-}" = --captive ]; then
	rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$SDSWARM_PID/status" 2>/dev/null; }
	t_ready=$(now)
	rss0=$(rss_kib)
	t_ls0=$(now)
	timeout "$ILS_LS_TIMEOUT" iscsi-ls -s "iscsi://127.0.0.1:$ILS_PORT" \
		>"$ILS_SCRATCH/ls.out" 2>"$ILS_SCRATCH/ls.err"
	ls_rc=$?
	t_ls1=$(now)
	rss2=$(rss_kib)
	alive=1
	kill -0 "$SDSWARM_PID" 2>/dev/null || alive=0
	printf 't_ready=%s\nt_ls0=%s\nt_ls1=%s\nrss0=%s\nrss2=%s\nls_rc=%s\nalive=%s\n' \
		"$t_ready" "$t_ls0" "$t_ls1" "$rss0" "$rss2" "$ls_rc" "$alive" \
		>"$ILS_SCRATCH/vals"
	exit 0
fi
# A usage error exits 2, as the C tools' do; a failure exits 1.
usage() {
	[ $# -eq 0 ] || echo "iscsi-ls-scale: $*" >&2
	echo "usage: bench/iscsi-ls-scale.sh BIN_DIR [--json] [--luns N]" >&2
	exit 2
}
[ $# -gt 0 ] || usage
bin=$1
shift
json=0
TARGETS=16
WANT=262144
while [ $# -gt 0 ]; do
	case $1 in
	--json) json=1 ;;
	--luns)
		[ $# -gt 1 ] || usage "--luns needs a value"
		WANT=$2
		shift
		;;
	*) usage "unknown argument '$1'" ;;
	esac
	shift
done
case $WANT in
'' | *[!0-9]* | 0*) WANT=x ;;
esac
if [ "$WANT" = x ] || [ "$WANT" -gt 262144 ] || [ $((WANT % TARGETS)) -ne 0 ]; then
	usage "--luns: need a multiple of $TARGETS from $TARGETS to 262144"
fi
top=$(cd "$(dirname "$0")/.." && pwd)
conf=$top/configs/iscsi-quarter-million.conf
PER_TARGET=$((WANT / TARGETS))
LS_TIMEOUT=600

say() { echo "iscsi-ls-scale: $*" >&2; }
# sdswarmd_run, free_port: the tree's one daemon helper
. "$top/scripts/lib/daemon.sh"
SDSWARMD=$bin/sdswarmd
SDSWARMD_WHO=iscsi-ls-scale

for c in iscsi-ls python3 timeout; do
	if ! command -v "$c" >/dev/null 2>&1; then
		say "needs '$c' (scripts/install-deps installs libiscsi-bin)"
		exit 1
	fi
done
for p in sdswarmd sdswarm sdswarm-bench; do
	if [ ! -x "$bin/$p" ]; then
		say "no $bin/$p (make $bin/$p)"
		exit 1
	fi
done
[ -r "$conf" ] || {
	say "no $conf"
	exit 1
}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/sdswarm-iscsi-ls.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
trap 'exit 130' INT TERM HUP

port=$(free_port) || exit 1
sed -e "s/^portal = .*/portal = 127.0.0.1:$port/" \
	-e "s/^type = .*/type = mem/" -e "s/^max_luns = .*/max_luns = $WANT/" \
	-e "s/^count = .*/count = $WANT/" \
	-e "s/^luns_per_target = .*/luns_per_target = $PER_TARGET/" \
	"$conf" >"$scratch/q.conf"
# The stamp and machine of the sdswarm-bench of this build, for --json.
stamp=$("$bin/sdswarm-bench" stamp --machine) || {
	say "$bin/sdswarm-bench stamp failed (an older build? make it again)"
	exit 1
}

# A captive run: sdswarmd starts, and once its portal listens (ready) runs
# the --captive half of this script, which times the listing; then it
# stops and exits with that half's status. Bounded by timeout.
t_start=$(now)
ILS_SCRATCH=$scratch ILS_PORT=$port ILS_LS_TIMEOUT=$LS_TIMEOUT \
	ILS_SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0") \
	SDSWARMD_RUN_TIMEOUT=$((LS_TIMEOUT + 120)) \
	sdswarmd_run "$scratch" "$scratch/vals" "$scratch/q.conf" \
	'exec "$ILS_SELF" --captive' >>"$scratch/sdswarmd.log"
[ -s "$scratch/vals" ] || exit 1
# shellcheck disable=SC1091
. "$scratch/vals"
luns=$(grep -c '^Lun:' "$scratch/ls.out")
ntargets=$(grep -c '^Target:' "$scratch/ls.out")

python3 - "$json" "$WANT" \
	"$t_start" "$t_ready" "$t_ls0" "$t_ls1" \
	"$rss0" "$rss2" "$ls_rc" "$luns" "$ntargets" "$alive" \
	"$(head -c 300 "$scratch/ls.err" | tr '\n' ' ')" "$(nproc)" \
	"$(cut -d' ' -f1-3 /proc/loadavg)" "$stamp" "$TARGETS" <<'PY'
import json, sys

a = sys.argv[1:]
want_json, want = a[0] == "1", int(a[1])
t_start, t_ready, t_ls0, t_ls1 = (float(x) for x in a[2:6])
rss0, rss2 = (int(x) * 1024 if x else None for x in a[6:8])
ls_rc, luns, ntargets, alive = int(a[8]), int(a[9]), int(a[10]), a[11] == "1"
ls_err, nproc, load = a[12].strip(), int(a[13]), a[14]
stamp, served_targets = json.loads(a[15]), int(a[16])
# Under 65,536 LUNs the daemon's fixed RSS and start-up cost dominate the
# per-LUN figures: a smoke test, not a measurement.
noisy = want < 65536

secs = t_ls1 - t_ls0
start = t_ready - t_start
notes = [
    "sdswarmd (build/bin) on configs/iscsi-quarter-million.conf%s: %d "
    "targets x %s thin 1 GiB LUNs, mem store, power_on_ua = no, a free "
    "loopback port"
    % ("" if want == 262144 else " with --luns %d" % want, served_targets,
       format(want // served_targets, ",")),
    "%d CPUs shared with the client; load average %s at the end" % (nproc, load),
    "rows: ns_per_op is nanoseconds per LUN (the step's time / LUNs), n the "
    "LUNs served",
]
if noisy:
    notes.append("(noisy) only %d LUNs, under 65536: the daemon's fixed RSS "
                 "and start-up cost dominate the per-LUN figures" % want)

def row(case, ns, ops_per_s):
    return {"group": "iscsi-ls", "case": case, "n": want, "ns_per_op": ns,
            "median_ns_per_op": None, "ops_per_s": ops_per_s, "reps": 1,
            "baseline_ns_per_op": None, "ratio": None}

targets = [
    {"name": "LUNs listed by iscsi-ls -s / LUNs served", "value": luns / want,
     "cmp": ">=", "limit": 1.0},
    {"name": "daemon RSS bytes per LUN after the listing",
     "value": rss2 / want if rss2 else None, "cmp": "<", "limit": 64.0},
]
for t in targets:
    v = t["value"]
    t["met"] = None if v is None else (v >= t["limit"] if t["cmp"] == ">="
                                       else v < t["limit"])
    t["noisy"] = noisy

res = {
    **stamp,
    "bench": "iscsi-ls",
    "noisy": noisy,
    "notes": notes,
    "results": [
        row("daemon start to ready, per LUN", start * 1e9 / want,
            want / start if start > 0 else None),
        row("iscsi-ls -s, per LUN listed",
            secs * 1e9 / luns if luns else None,
            luns / secs if secs > 0 else None),
    ],
    "daemon_start_s": start,
    "iscsi_ls_exit": ls_rc, "iscsi_ls_s": secs, "luns": luns,
    "luns_served": want, "iscsi_targets": ntargets,
    "luns_per_s": luns / secs if secs > 0 else None,
    "rss_bytes_before": rss0, "rss_bytes_after": rss2,
    "rss_bytes_per_lun_before": rss0 / want if rss0 else None,
    "rss_bytes_per_lun_after": rss2 / want if rss2 else None,
    "daemon_alive": alive,
    "complete": ls_rc == 0 and luns == want,
    "targets": targets,
}
if want_json:
    json.dump(res, sys.stdout, indent=2)
    print()
else:
    print("sdswarm-bench iscsi-ls: %d CPUs, %s"
          % (nproc, stamp["machine"]["cpu_model"]))
    for n in res["notes"]:
        print("  " + n)
    print()
    def mib(b):
        return "-" if b is None else "%.1f" % (b / 2**20)
    def per(b):
        return "-" if b is None else "%.1f" % (b / want)
    rows = [
        ["daemon start (%s LUNs) to ready" % format(want, ","), "%.2f" % start, "-", "-", mib(rss0), per(rss0)],
        ["iscsi-ls -s (discovery + every LUN)", "%.2f" % secs,
         "%.0f" % res["luns_per_s"] if res["luns_per_s"] else "-", "%d" % luns, mib(rss2), per(rss2)],
    ]
    head = ["step", "seconds", "LUNs/s", "LUNs", "RSS after, MiB", "RSS bytes/LUN"]
    w = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    line = lambda r: "  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i])
                               for i, c in enumerate(r))
    print(line(head))
    print(line(["-" * x for x in w]))
    for r in rows:
        print(line(r))
    print()
    print("iscsi-ls -s: exit %d, %d targets, %d LUNs listed (want %d): %s%s"
          % (ls_rc, ntargets, luns, want,
             "complete" if res["complete"] else "INCOMPLETE",
             (" (" + ls_err + ")") if ls_err else ""))
    print("RSS growth over the listing: %s bytes/LUN; daemon alive after: %s"
          % ("-" if rss0 is None or rss2 is None else "%.1f" % ((rss2 - rss0) / want),
             "yes" if alive else "NO"))
    print()
    print("targets (reported, not asserted)")
    head = ["target", "value", "limit", "result"]
    rows = [[t["name"], "-" if t["value"] is None else "%.2f" % t["value"],
             "%s %.2f" % (t["cmp"], t["limit"]),
             ("not measured" if t["met"] is None else
              "met" if t["met"] else "MISSED")
             + (" (noisy)" if t["noisy"] else "")] for t in targets]
    w = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    line = lambda r: "  ".join(c.ljust(w[i]) if i in (0, 3) else c.rjust(w[i])
                               for i, c in enumerate(r)).rstrip()
    print(line(head))
    print(line(["-" * x for x in w]))
    for r in rows:
        print(line(r))
sys.exit(0 if res["complete"] and alive else 1)
PY
