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
# iscsi-ls stops at the first command that fails, and every LUN of a fresh
# daemon answers its first command with POWER ON OCCURRED (a unit attention
# iscsi-ls does not retry). So: one iscsi-ls -s on the fresh daemon (its
# outcome is reported), then a pre-pass that sends each LUN one TEST UNIT
# READY from a session of its own (libiscsi through python3's ctypes;
# timed and reported too), then the timed iscsi-ls -s.
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

# 1. On the fresh daemon, as a user would first run it.
timeout "$LS_TIMEOUT" iscsi-ls -s "iscsi://127.0.0.1:$port" \
	>"$scratch/fresh.out" 2>"$scratch/fresh.err"
fresh_rc=$?
fresh_luns=$(grep -c '^Lun:' "$scratch/fresh.out")

# 2. One TEST UNIT READY per LUN, each target from its own session: the
# POWER ON OCCURRED of every LUN is taken here.
t_pre0=$(now)
timeout "$LS_TIMEOUT" python3 - "127.0.0.1:$port" "$IQN" "$TARGETS" \
	"$PER_TARGET" >"$scratch/prepass.out" 2>&1 <<'PY'
import ctypes, ctypes.util, sys

name = ctypes.util.find_library("iscsi") or "libiscsi.so.7"
lib = ctypes.CDLL(name)
P, S, I = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
for fn, res, args in (
        ("iscsi_create_context", P, [S]),
        ("iscsi_set_targetname", I, [P, S]),
        ("iscsi_set_session_type", I, [P, I]),
        ("iscsi_set_timeout", I, [P, I]),
        ("iscsi_connect_sync", I, [P, S]),
        ("iscsi_login_sync", I, [P]),
        ("iscsi_logout_sync", I, [P]),
        ("iscsi_destroy_context", I, [P]),
        ("iscsi_get_error", S, [P]),
        ("iscsi_testunitready_sync", P, [P, I]),
        ("scsi_free_scsi_task", None, [P])):
    f = getattr(lib, fn)
    f.restype, f.argtypes = res, args
portal, iqn = sys.argv[1].encode(), sys.argv[2]
targets, per = int(sys.argv[3]), int(sys.argv[4])
sent = 0
for t in range(targets):
    ctx = lib.iscsi_create_context(b"iqn.2026-12.org.sdswarm:bench-ls-prepass")
    if not ctx:
        sys.exit("iscsi_create_context failed")
    lib.iscsi_set_targetname(ctx, ("%s:t%d" % (iqn, t)).encode())
    lib.iscsi_set_session_type(ctx, 2)
    lib.iscsi_set_timeout(ctx, 10)
    if lib.iscsi_connect_sync(ctx, portal) or lib.iscsi_login_sync(ctx):
        sys.exit("t%d: %s" % (t, lib.iscsi_get_error(ctx).decode()))
    for lun in range(per):
        # libiscsi's LUN is the raw field: flat space above 255
        task = lib.iscsi_testunitready_sync(ctx, lun if lun < 256 else 0x4000 | lun)
        if not task:
            sys.exit("t%d LUN %d: %s" % (t, lun, lib.iscsi_get_error(ctx).decode()))
        lib.scsi_free_scsi_task(task)
        sent += 1
    lib.iscsi_logout_sync(ctx)
    lib.iscsi_destroy_context(ctx)
print(sent)
PY
pre_rc=$?
t_pre1=$(now)
if [ $pre_rc -ne 0 ]; then
	say "the TEST UNIT READY pre-pass failed (exit $pre_rc):"
	sed 's/^/  | /' "$scratch/prepass.out" >&2
	exit 1
fi
rss1=$(rss_kib)

# 3. The timed listing.
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

python3 - "$json" "$WANT" "$fresh_rc" "$fresh_luns" \
	"$(head -c 300 "$scratch/fresh.err" | tr '\n' ' ')" \
	"$t_start" "$t_ready" "$t_pre0" "$t_pre1" "$t_ls0" "$t_ls1" \
	"$rss0" "$rss1" "$rss2" "$ls_rc" "$luns" "$ntargets" "$alive" \
	"$(head -c 300 "$scratch/ls.err" | tr '\n' ' ')" "$(nproc)" \
	"$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import json, sys

a = sys.argv[1:]
want_json, want = a[0] == "1", int(a[1])
fresh_rc, fresh_luns, fresh_err = int(a[2]), int(a[3]), a[4].strip()
t_start, t_ready, t_pre0, t_pre1, t_ls0, t_ls1 = (float(x) for x in a[5:11])
rss0, rss1, rss2 = (int(x) * 1024 if x else None for x in a[11:14])
ls_rc, luns, ntargets, alive = int(a[14]), int(a[15]), int(a[16]), a[17] == "1"
ls_err, nproc, load = a[18].strip(), int(a[19]), a[20]

secs = t_ls1 - t_ls0
pre = t_pre1 - t_pre0
res = {
    "bench": "iscsi-ls",
    "machine": {"nproc": nproc},
    "notes": [
        "sdswarmd (build/bin) on configs/iscsi-quarter-million.conf: 16 "
        "targets x 16,384 thin 1 GiB LUNs, mem store, a free loopback port",
        "iscsi-ls -s on the fresh daemon: exit %d after %d LUNs%s" % (
            fresh_rc, fresh_luns, (" (" + fresh_err + ")") if fresh_err else ""),
        "then one TEST UNIT READY per LUN (a session per target, libiscsi "
        "sync, python3 ctypes) to take every LUN's POWER ON OCCURRED, "
        "then the timed iscsi-ls -s",
        "%d CPUs shared with the client; load average %s at the end" % (nproc, load),
    ],
    "daemon_start_s": t_ready - t_start,
    "fresh_exit": fresh_rc, "fresh_luns": fresh_luns,
    "prepass_s": pre, "prepass_luns_per_s": want / pre if pre > 0 else None,
    "iscsi_ls_exit": ls_rc, "iscsi_ls_s": secs, "luns": luns,
    "targets": ntargets,
    "luns_per_s": luns / secs if secs > 0 else None,
    "rss_bytes_before": rss0, "rss_bytes_after_prepass": rss1,
    "rss_bytes_after": rss2,
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
        ["TEST UNIT READY pre-pass, 262,144 LUNs", "%.2f" % pre,
         "%.0f" % (want / pre) if pre > 0 else "-", "%d" % want, mib(rss1), per(rss1)],
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
