#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/run's `iscsi` step: sdswarmd and tgt (Debian's user-space target)
# side by side in one run, driven by the same client (sdswarm-bench iscsi):
# 4K random read and write at QD32, 128K sequential read and write, one
# session each; then sdswarmd with [iscsi] threads = 1 and 2 against 1 and
# 2 client sessions, for the scaling figure. Prints a table (or, --json,
# one JSON object) with the ratios sdswarmd/tgt and threads2/threads1.
#
# usage: bench/iscsi-vs-tgt.sh BIN_DIR [--json] [--seconds S]
#
# --json is a report of sdswarm-bench's own layout, so that `sdswarm-bench
# compare` reads it: the stamp of BIN_DIR's sdswarm-bench (`sdswarm-bench
# stamp`: schema, tool, version, commit), then "results" rows (group
# sdswarmd, tgt or scaling; the case; n = commands in flight, QD x jobs;
# ns_per_op = 1e9 / IOPS), then this script's own keys and the targets.
# Under 1 s a measurement (--seconds 0.3 in the tests) the report is
# marked noisy.
#
# Both targets are private to this run: sdswarmd on a config of its own in a
# temporary folder (mem store, thin 1 GiB LUNs), tgtd on its own control
# port with a 1 GiB backing file on /dev/shm, each on a free loopback port.
# Only the PIDs started here are ever signalled; the folder, the /dev/shm
# file and tgtd's control socket are removed on every exit. Bounded: each
# measurement lasts S seconds (default 4) plus its setup, each wait is
# bounded, the whole step takes about a minute.
set -u
# A usage error exits 2, as the C tools' do; a failure exits 1.
usage() {
	[ $# -eq 0 ] || echo "iscsi-vs-tgt: $*" >&2
	echo "usage: bench/iscsi-vs-tgt.sh BIN_DIR [--json] [--seconds S]" >&2
	exit 2
}
[ $# -gt 0 ] || usage
bin=$1
shift
json=0
secs=4
while [ $# -gt 0 ]; do
	case $1 in
	--json) json=1 ;;
	--seconds)
		[ $# -gt 1 ] || usage "--seconds needs a value"
		secs=$2
		shift
		;;
	*) usage "unknown argument '$1'" ;;
	esac
	shift
done
case $secs in
'' | *[!0-9.]* | *.*.*) usage "--seconds '$secs': need a number" ;;
esac

say() { echo "iscsi-vs-tgt: $*" >&2; }
# sdswarmd_start, stop_pid, free_port: the tree's one daemon helper
. "$(dirname "$0")/../scripts/lib/daemon.sh"
SDSWARMD=$bin/sdswarmd
SDSWARMD_WHO=iscsi-vs-tgt

for c in tgtd tgtadm python3 timeout; do
	if ! command -v "$c" >/dev/null 2>&1; then
		say "needs '$c' (scripts/install-deps installs tgt)"
		exit 1
	fi
done
for p in sdswarmd sdswarm sdswarm-bench; do
	if [ ! -x "$bin/$p" ]; then
		say "no $bin/$p (make $bin/$p)"
		exit 1
	fi
done

IQN=iqn.2026-12.org.sdswarm
TGT_IQN=iqn.2026-12.org.sdswarm.bench:tgt
LUN_SIZE=1G
LUN_BYTES=$((1 << 30))
# A measurement's own bound: its seconds, the logins, the drain.
RUN_TIMEOUT=$(python3 -c "import math; print(int(math.ceil($secs)) + 40)")

scratch=
shm=
sd_pids=()
tgt_pid=
tgt_cp=
tgt_sock_made=0

stop_sdswarmds() {
	local p
	for p in "${sd_pids[@]}"; do
		stop_pid "$p" sdswarmd 10
	done
	sd_pids=()
}

# tgtd ignores SIGTERM while it has targets: delete ours, then the system,
# and it exits by itself; SIGTERM/SIGKILL only if it does not.
stop_tgtd() {
	local i
	[ -n "$tgt_pid" ] || return 0
	if kill -0 "$tgt_pid" 2>/dev/null; then
		timeout 10 tgtadm -C "$tgt_cp" --lld iscsi --op delete \
			--mode target --tid 1 --force >/dev/null 2>&1
		timeout 10 tgtadm -C "$tgt_cp" --op delete --mode system \
			>/dev/null 2>&1
		for ((i = 0; i < 50; i++)); do
			kill -0 "$tgt_pid" 2>/dev/null || break
			sleep 0.1
		done
	fi
	stop_pid "$tgt_pid" tgtd 10
	tgt_pid=
	if [ "$tgt_sock_made" = 1 ]; then
		rm -f "/run/tgtd/socket.$tgt_cp" "/run/tgtd/socket.$tgt_cp.lock"
		tgt_sock_made=0
	fi
}

cleanup() {
	stop_sdswarmds
	stop_tgtd
	[ -z "$shm" ] || rm -f "$shm"
	[ -z "$scratch" ] || rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

scratch=$(mktemp -d "${TMPDIR:-/tmp}/sdswarm-iscsi-bench.XXXXXX") || exit 1
shm=$(mktemp /dev/shm/sdswarm-iscsi-tgt.XXXXXX) || exit 1

# The daemon's CPU time so far (all threads, user + system), in clock
# ticks: /proc/PID/stat fields 14 and 15, after the "(comm)" field.
cpu_ticks() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || {
		echo 0
		return
	}
	s=${s##*) }
	# shellcheck disable=SC2086
	set -- $s
	echo $((${12} + ${13}))
}
HZ=$(getconf CLK_TCK)

# start_sdswarmd NAME THREADS: a fresh daemon with two thin 1 GiB LUNs on
# one target, [iscsi] threads = THREADS, in $scratch/NAME; sets sd_pid and
# sd_port.
start_sdswarmd() {
	local dir=$scratch/$1 rc
	mkdir -p "$dir" || return 1
	sd_port=$(free_port) || return 1
	cat >"$dir/sdswarmd.conf" <<EOF
# written by bench/iscsi-vs-tgt.sh for one run
[target]
seed = 4
max_luns = 16

[luns]
count = 2
size = $LUN_SIZE
thin = yes
partitions = 0

[store]
type = mem

[iscsi]
enabled = yes
portal = 127.0.0.1:$sd_port
targets = 1
luns_per_target = 2
threads = $2
EOF
	# Two daemons run side by side with tgtd and their CPU time is read
	# from /proc, so they are not captive (sdswarmd --run); ready is the
	# pidfile, written once the portal listens (the control socket
	# answers earlier). --exit-with-parent: none outlives this script.
	SDSWARMD_START_TIMEOUT=10 sdswarmd_start "$dir" "$dir/sdswarmd.conf"
	rc=$?
	sd_pid=$SDSWARMD_PID
	[ -z "$sd_pid" ] || sd_pids+=("$sd_pid")
	return $rc
}

# tgtd on a free portal and a control port nobody uses, one target with
# LUN 1 on the /dev/shm file (tgt's LUN 0 is its controller), open to all.
start_tgtd() {
	local i
	tgt_port=$(free_port) || return 1
	for ((i = 0; i < 50; i++)); do
		tgt_cp=$((1000 + RANDOM % 29000))
		[ -e "/run/tgtd/socket.$tgt_cp" ] || break
	done
	if [ -e "/run/tgtd/socket.$tgt_cp" ]; then
		say "no free tgtd control port found in 50 tries"
		return 1
	fi
	truncate -s "$LUN_SIZE" "$shm" || return 1
	tgtd -f --iscsi "portal=127.0.0.1:$tgt_port" -C "$tgt_cp" \
		>"$scratch/tgtd.log" 2>&1 &
	tgt_pid=$!
	tgt_sock_made=1
	for ((i = 0; i < 100; i++)); do
		timeout 5 tgtadm -C "$tgt_cp" --op show --mode sys \
			>/dev/null 2>&1 && break
		if ! kill -0 "$tgt_pid" 2>/dev/null; then
			say "tgtd exited; its log:"
			sed 's/^/  | /' "$scratch/tgtd.log" >&2
			tgt_pid=
			return 1
		fi
		sleep 0.1
	done
	timeout 10 tgtadm -C "$tgt_cp" --lld iscsi --op new --mode target \
		--tid 1 -T "$TGT_IQN" &&
		timeout 10 tgtadm -C "$tgt_cp" --lld iscsi --op new \
			--mode logicalunit --tid 1 --lun 1 -b "$shm" &&
		timeout 10 tgtadm -C "$tgt_cp" --lld iscsi --op bind \
			--mode target --tid 1 -I ALL
}

# measure NAME PID URL ARGS...: one sdswarm-bench iscsi run, its JSON in
# $scratch/NAME.json and the target's CPU ticks over it in NAME.cpu.
measure() {
	local name=$1 pid=$2 url=$3 c0 c1 rc
	shift 3
	[ -t 2 ] && printf '\r\033[Kiscsi-vs-tgt: %s' "$name" >&2
	c0=$(cpu_ticks "$pid")
	timeout "$RUN_TIMEOUT" "$bin/sdswarm-bench" iscsi "$url" \
		--seconds "$secs" --json "$@" >"$scratch/$name.json" \
		2>"$scratch/$name.err"
	rc=$?
	c1=$(cpu_ticks "$pid")
	[ -t 2 ] && printf '\r\033[K' >&2
	if [ $rc -ne 0 ]; then
		say "$name: sdswarm-bench iscsi $url $* exited $rc:"
		sed 's/^/  | /' "$scratch/$name.err" >&2
		return 1
	fi
	echo "$((c1 - c0)) $HZ" >"$scratch/$name.cpu"
}

sd_url() { echo "iscsi://127.0.0.1:$1/$IQN:t0/$2"; }

# Every daemon runs the whole time (idle between its measurements), and the
# runs to be compared alternate, so that other load on the machine falls on
# both sides of a ratio alike.
start_sdswarmd sd1 1 || exit 1
sd1_pid=$sd_pid sd1_port=$sd_port
start_sdswarmd sd2 2 || exit 1
sd2_pid=$sd_pid sd2_port=$sd_port
start_tgtd || exit 1
tgt_url="iscsi://127.0.0.1:$tgt_port/$TGT_IQN/1"
# The stamp of the sdswarm-bench that measures, for the --json report.
stamp=$("$bin/sdswarm-bench" stamp) || {
	say "$bin/sdswarm-bench stamp failed (an older build? make it again)"
	exit 1
}
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# Scaling first, while the LUNs of both fresh daemons are never written.
for j in 1 2; do
	luns=0
	[ "$j" = 2 ] && luns=0,1
	measure "t1-j$j" "$sd1_pid" "$(sd_url "$sd1_port" "$luns")" \
		--rw randread --bs 4k --qd 32 --jobs "$j" || exit 1
	measure "t2-j$j" "$sd2_pid" "$(sd_url "$sd2_port" "$luns")" \
		--rw randread --bs 4k --qd 32 --jobs "$j" || exit 1
done

# Side by side: sdswarmd with threads = 2 (the shipped configs' value) and
# tgt, writes first so that the reads read data the writes stored (as far
# as they reached, which the notes say).
for c in seqwrite:128k:1 randwrite:4k:1 seqread:128k:1 randread:4k:1 \
	randread:4k:2; do
	rw=${c%%:*}
	bs=${c#*:}
	bs=${bs%:*}
	j=${c##*:}
	name=$rw
	luns=0
	[ "$j" = 2 ] && name=$rw-j2 luns=0,1
	measure "sd-$name" "$sd2_pid" "$(sd_url "$sd2_port" "$luns")" \
		--rw "$rw" --bs "$bs" --qd 32 --jobs "$j" || exit 1
	measure "tgt-$name" "$tgt_pid" "$tgt_url" \
		--rw "$rw" --bs "$bs" --qd 32 --jobs "$j" || exit 1
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
stop_sdswarmds
stop_tgtd

python3 - "$scratch" "$json" "$secs" "$LUN_BYTES" "$(nproc)" \
	"$load_start" "$load_end" "$stamp" <<'PY'
import json, math, os, sys

d, want_json, secs, lun_bytes, nproc = sys.argv[1], sys.argv[2] == "1", \
    float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
load_start, load_end = sys.argv[6], sys.argv[7]
stamp = json.loads(sys.argv[8])
# Measurements this short are for smoke tests: their figures are noise.
noisy = secs < 1

def load(name):
    with open(os.path.join(d, name + ".json")) as f:
        j = json.load(f)
    with open(os.path.join(d, name + ".cpu")) as f:
        ticks, hz = (int(x) for x in f.read().split())
    t = j["total"]
    return {
        "run": name,
        "rw": j["params"]["rw"], "bs": j["params"]["bs"],
        "qd": j["params"]["qd"], "jobs": j["params"]["jobs"],
        "ops": t["ops"], "bytes": t["bytes"], "iops": t["iops"],
        "mib_per_s": t["mib_per_s"], "lat_mean_us": t["lat_mean_us"],
        "lat_p99_us": t["lat_p99_us"],
        "client_cpu_us_per_op": t["client_cpu_us_per_op"],
        "target_cpu_s": ticks / hz,
        "target_cpu_us_per_op": ticks / hz * 1e6 / t["ops"] if t["ops"] else None,
        "cpu_model": j["machine"]["cpu_model"],
    }

def ratio(a, b):
    return a / b if a and b else None

cases = [("4K randread QD32", "randread"), ("4K randwrite QD32", "randwrite"),
         ("128K seqread QD32", "seqread"), ("128K seqwrite QD32", "seqwrite"),
         ("4K randread QD32 x2 jobs", "randread-j2")]
runs = {}
for _, c in cases:
    runs["sd-" + c] = load("sd-" + c)
    runs["tgt-" + c] = load("tgt-" + c)
for n in ("t1-j1", "t1-j2", "t2-j1", "t2-j2"):
    runs[n] = load(n)
cpu_model = runs["t1-j1"]["cpu_model"]

side = []
for label, c in cases:
    s, t = runs["sd-" + c], runs["tgt-" + c]
    side.append({"case": label, "sdswarmd": s, "tgt": t,
                 "ratio": ratio(s["iops"], t["iops"])})
scale = [{"threads": int(n[1]), "jobs": int(n[4]), **runs[n]}
         for n in ("t1-j1", "t1-j2", "t2-j1", "t2-j2")]
r_t2_t1_j2 = ratio(runs["t2-j2"]["iops"], runs["t1-j2"]["iops"])
r_t2_t1_j1 = ratio(runs["t2-j1"]["iops"], runs["t1-j1"]["iops"])
r_j2_j1_t2 = ratio(runs["t2-j2"]["iops"], runs["t2-j1"]["iops"])
cover = min(runs["sd-seqwrite"]["bytes"], lun_bytes) / lun_bytes
tcover = min(runs["tgt-seqwrite"]["bytes"], lun_bytes) / lun_bytes

notes = [
    "%d CPUs (%s) shared by the targets AND the client: every figure is "
    "bounded by the two cores; the ratios are the figures, not the "
    "absolute IOPS" % (nproc, cpu_model),
    "client: sdswarm-bench iscsi (libiscsi async, one thread and session "
    "per job), the same for both targets; %.1f s per measurement" % secs,
    "sdswarmd: build/bin (-O2), mem store, 2 thin 1 GiB LUNs on one target, "
    "[iscsi] threads = 2; tgt: tgtd -f, rdwr backing store, a 1 GiB "
    "file on /dev/shm (LUN 1)",
    "side by side: writes first, so the reads read stored data (the 128K "
    "seqwrite covered %.0f%% of sdswarmd's LUN 0 and %.0f%% of tgt's LUN)"
    % (cover * 100, tcover * 100),
    "scaling: 4K randread QD32 on fresh daemons (never-written blocks), "
    "one session per LUN; a worker thread serves whole connections",
    "CPU us/IO: the target process's user+system time over the run "
    "(/proc/PID/stat) per completed command; client: the job threads' own",
    "load average %s at the start, %s at the end (other work on the "
    "machine lowers the figures; compared runs alternate)"
    % (load_start, load_end),
]
targets = [
    {"name": "4K randread IOPS, sdswarmd / tgt", "value": side[0]["ratio"],
     "cmp": ">=", "limit": 3.0},
    {"name": "4K randread IOPS, threads 2 / threads 1 (2 sessions)",
     "value": r_t2_t1_j2, "cmp": ">=", "limit": 1.8},
]
for t in targets:
    t["met"] = None if t["value"] is None else t["value"] >= t["limit"]
    t["noisy"] = noisy
if noisy:
    notes.append("(noisy) %.2g s a measurement, under 1 s: the figures are "
                 "for a smoke test, not for judging" % secs)

# The rows sdswarm-bench compare matches by (group, case, n): n is the
# commands in flight (QD x jobs), the same in every run of this script;
# ns_per_op is wall nanoseconds per completed command (1e9 / IOPS), so a
# drop in IOPS is a rise compare flags; the baseline (tgt for sdswarmd,
# threads 1 for threads 2) makes "ratio" the IOPS ratio of the run.
def row(group, case, r, base=None):
    ns = 1e9 / r["iops"] if r["iops"] else None
    bns = 1e9 / base["iops"] if base and base["iops"] else None
    return {"group": group, "case": case, "n": r["qd"] * r["jobs"],
            "ns_per_op": ns, "median_ns_per_op": None,
            "ops_per_s": r["iops"], "reps": 1, "baseline_ns_per_op": bns,
            "ratio": bns / ns if ns and bns else None,
            "mib_per_s": r["mib_per_s"], "lat_p99_us": r["lat_p99_us"],
            "target_cpu_us_per_op": r["target_cpu_us_per_op"]}

results = [row("tgt", c["case"], c["tgt"]) for c in side]
results += [row("sdswarmd", c["case"], c["sdswarmd"], c["tgt"]) for c in side]
for j in (1, 2):
    t1, t2 = runs["t1-j%d" % j], runs["t2-j%d" % j]
    case = "4K randread QD32, %d session%s" % (j, "" if j == 1 else "s")
    results.append(row("scaling", case + ", threads 1", t1))
    results.append(row("scaling", case + ", threads 2", t2, t1))

if want_json:
    out = {**stamp, "bench": "iscsi-vs-tgt", "noisy": noisy,
           "machine": {"nproc": nproc, "cpu_model": cpu_model},
           "notes": notes, "seconds": secs, "results": results,
           "side_by_side": side, "scaling": scale,
           "ratios": {"sdswarmd_over_tgt": {c["case"]: c["ratio"] for c in side},
                      "threads2_over_threads1_2jobs": r_t2_t1_j2,
                      "threads2_over_threads1_1job": r_t2_t1_j1,
                      "jobs2_over_jobs1_threads2": r_j2_j1_t2},
           "targets": targets}
    json.dump(out, sys.stdout, indent=2)
    print()
    sys.exit(0)

def table(head, rows, align):
    w = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    def line(r):
        return "  ".join(str(c).ljust(w[i]) if align[i] == "l"
                         else str(c).rjust(w[i]) for i, c in enumerate(r)).rstrip()
    print(line(head))
    print(line(["-" * x for x in w]))
    for r in rows:
        print(line(r))

def f(v, p=0):
    return "-" if v is None else "%.*f" % (p, v)

print("sdswarm-bench iscsi, sdswarmd vs tgt: %d CPUs, %s" % (nproc, cpu_model))
for n in notes:
    print("  " + n)
print()
table(["case", "sdswarmd IOPS", "tgt IOPS", "sdswarmd/tgt", "sdswarmd MiB/s",
       "tgt MiB/s", "sdswarmd p99 us", "tgt p99 us", "sdswarmd CPU us/IO",
       "tgt CPU us/IO", "client CPU us/IO (sd, tgt)"],
      [[c["case"], f(c["sdswarmd"]["iops"]), f(c["tgt"]["iops"]),
        f(c["ratio"], 2) + "x", f(c["sdswarmd"]["mib_per_s"], 1),
        f(c["tgt"]["mib_per_s"], 1), f(c["sdswarmd"]["lat_p99_us"], 1),
        f(c["tgt"]["lat_p99_us"], 1), f(c["sdswarmd"]["target_cpu_us_per_op"], 2),
        f(c["tgt"]["target_cpu_us_per_op"], 2),
        "%s, %s" % (f(c["sdswarmd"]["client_cpu_us_per_op"], 2),
                    f(c["tgt"]["client_cpu_us_per_op"], 2))] for c in side],
      "lrrrrrrrrrr")
print()
table(["sdswarmd threads", "client jobs", "4K randread IOPS", "p99 us",
       "sdswarmd CPU us/IO", "client CPU us/IO"],
      [[s["threads"], s["jobs"], f(s["iops"]), f(s["lat_p99_us"], 1),
        f(s["target_cpu_us_per_op"], 2), f(s["client_cpu_us_per_op"], 2)]
       for s in scale], "rrrrrr")
print("threads2/threads1: %sx with 2 sessions, %sx with 1; 2 sessions/1 "
      "session at threads 2: %sx" % (f(r_t2_t1_j2, 2), f(r_t2_t1_j1, 2),
                                      f(r_j2_j1_t2, 2)))
print()
print("targets (reported, not asserted)")
table(["target", "value", "limit", "result"],
      [[t["name"], f(t["value"], 2), ">= %.2f" % t["limit"],
        ("not measured" if t["met"] is None else ("met" if t["met"] else "MISSED"))
        + (" (noisy)" if t["noisy"] else "")]
       for t in targets], "lrrl")
PY
