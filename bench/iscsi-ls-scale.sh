#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/run's `iscsi-ls` step: sdswarmd on configs/iscsi-quarter-million.conf
# (16 targets x 16,384 LUNs, mem store) on a free loopback port, then
# `iscsi-ls -s` (discovery, then every target's LUNs with their size) timed
# to completion, the LUNs it lists counted (262,144 wanted), and the
# daemon's RSS before and after. Prints a table, or with --json one object.
#
# usage: bench/iscsi-ls-scale.sh BIN_DIR [--json]
#
# iscsi-ls stops at the first command that fails, a unit attention
# included: the config has power_on_ua = no, so a fresh daemon's LUNs
# answer their first command without POWER ON OCCURRED.
#
# Only the daemon's PID is signalled; the temporary folder goes on every
# exit; every wait and run is bounded by `timeout`.
set -u
bin=${1:?usage: bench/iscsi-ls-scale.sh BIN_DIR [--json]}
shift
json=0
case ${1:-} in
--json) json=1 ;;
'') ;;
*)
	echo "iscsi-ls-scale: unknown argument '$1'" >&2
	exit 1
	;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
conf=$top/configs/iscsi-quarter-million.conf
IQN=iqn.2026-12.org.sdswarm
WANT=262144
TARGETS=16
PER_TARGET=16384
LS_TIMEOUT=600

say() { echo "iscsi-ls-scale: $*" >&2; }

for c in iscsi-ls python3 timeout; do
	if ! command -v "$c" >/dev/null 2>&1; then
		say "needs '$c' (scripts/install-deps installs libiscsi-bin)"
		exit 1
	fi
done
for p in sdswarmd sdswarm; do
	if [ ! -x "$bin/$p" ]; then
		say "no $bin/$p (make $bin/$p)"
		exit 1
	fi
done
[ -r "$conf" ] || {
	say "no $conf"
	exit 1
}

scratch=
pid=
cleanup() {
	local i
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null
		for ((i = 0; i < 300; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		pid=
	fi
	[ -z "$scratch" ] || rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
scratch=$(mktemp -d "${TMPDIR:-/tmp}/sdswarm-iscsi-ls.XXXXXX") || exit 1

port=$(python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])') || exit 1
sed -e "s/^portal = .*/portal = 127.0.0.1:$port/" \
	-e "s/^type = .*/type = mem/" "$conf" >"$scratch/q.conf"

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null; }
now() { date +%s.%N; }

t_start=$(now)
"$bin/sdswarmd" --config "$scratch/q.conf" --control "$scratch/control" \
	--pidfile "$scratch/sdswarmd.pid" >"$scratch/sdswarmd.log" 2>&1 &
pid=$!
ready=0
for ((i = 0; i < 600; i++)); do
	if "$bin/sdswarm" --control "$scratch/control" status >/dev/null 2>&1; then
		ready=1
		break
	fi
	if ! kill -0 "$pid" 2>/dev/null; then
		say "sdswarmd exited before answering; its log:"
		sed 's/^/  | /' "$scratch/sdswarmd.log" >&2
		pid=
		exit 1
	fi
	sleep 0.1
done
if [ "$ready" != 1 ]; then
	say "sdswarmd did not answer within 60 s"
	exit 1
fi
t_ready=$(now)
rss0=$(rss_kib)

# The timed listing, on the fresh daemon as a user would run it.
t_ls0=$(now)
timeout "$LS_TIMEOUT" iscsi-ls -s "iscsi://127.0.0.1:$port" \
	>"$scratch/ls.out" 2>"$scratch/ls.err"
ls_rc=$?
t_ls1=$(now)
rss2=$(rss_kib)
luns=$(grep -c '^Lun:' "$scratch/ls.out")
ntargets=$(grep -c '^Target:' "$scratch/ls.out")
alive=1
kill -0 "$pid" 2>/dev/null || alive=0

python3 - "$json" "$WANT" \
	"$t_start" "$t_ready" "$t_ls0" "$t_ls1" \
	"$rss0" "$rss2" "$ls_rc" "$luns" "$ntargets" "$alive" \
	"$(head -c 300 "$scratch/ls.err" | tr '\n' ' ')" "$(nproc)" \
	"$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import json, sys

a = sys.argv[1:]
want_json, want = a[0] == "1", int(a[1])
t_start, t_ready, t_ls0, t_ls1 = (float(x) for x in a[2:6])
rss0, rss2 = (int(x) * 1024 if x else None for x in a[6:8])
ls_rc, luns, ntargets, alive = int(a[8]), int(a[9]), int(a[10]), a[11] == "1"
ls_err, nproc, load = a[12].strip(), int(a[13]), a[14]

secs = t_ls1 - t_ls0
res = {
    "bench": "iscsi-ls",
    "machine": {"nproc": nproc},
    "notes": [
        "sdswarmd (build/bin) on configs/iscsi-quarter-million.conf: 16 "
        "targets x 16,384 thin 1 GiB LUNs, mem store, power_on_ua = no, "
        "a free loopback port",
        "%d CPUs shared with the client; load average %s at the end" % (nproc, load),
    ],
    "daemon_start_s": t_ready - t_start,
    "iscsi_ls_exit": ls_rc, "iscsi_ls_s": secs, "luns": luns,
    "targets": ntargets,
    "luns_per_s": luns / secs if secs > 0 else None,
    "rss_bytes_before": rss0, "rss_bytes_after": rss2,
    "rss_bytes_per_lun_before": rss0 / want if rss0 else None,
    "rss_bytes_per_lun_after": rss2 / want if rss2 else None,
    "daemon_alive": alive,
    "complete": ls_rc == 0 and luns == want,
}
if want_json:
    json.dump(res, sys.stdout, indent=2)
    print()
else:
    print("sdswarm-bench iscsi-ls: %d CPUs" % nproc)
    for n in res["notes"]:
        print("  " + n)
    print()
    def mib(b):
        return "-" if b is None else "%.1f" % (b / 2**20)
    def per(b):
        return "-" if b is None else "%.1f" % (b / want)
    rows = [
        ["daemon start (262,144 LUNs) to answering", "%.2f" % (t_ready - t_start), "-", "-", mib(rss0), per(rss0)],
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
sys.exit(0 if res["complete"] and alive else 1)
PY
