#!/bin/bash
# SPDX-License-Identifier: MIT
# Observability: `sdswarm metrics` is OpenMetrics text a scraper accepts
# (parsed here by the format's rules: families declared before their
# samples, counters ending _total, cumulative histogram buckets, # EOF
# last) and its numbers are the daemon's own (status, stats); `stats`
# names each opcode.
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires python3 iscsi-inq iscsi-readcapacity16
private_dir T

PORT=$(free_port)
IQN=iqn.2026-12.org.sdswarm
start_daemon "$SDSWARM_TOP/configs/iscsi-host.conf" --iscsi "127.0.0.1:$PORT" || finish
# a few commands: TEST UNIT READY and INQUIRYs, READ CAPACITY (16)
timeout 30 iscsi-inq "iscsi://127.0.0.1:$PORT/$IQN:t0/1" >/dev/null 2>&1
timeout 30 iscsi-readcapacity16 "iscsi://127.0.0.1:$PORT/$IQN:t1/2" >/dev/null 2>&1

ctl stats >"$T/stats"
check "stats names INQUIRY (no hex)" grep -qE '^INQUIRY +[1-9]' "$T/stats"
check "stats names READ CAPACITY (16)'s opcode (SERVICE_ACTION_IN_16)" grep -qE '^SERVICE_ACTION_IN_16 +[1-9]' "$T/stats"

ctl metrics >"$T/metrics"
expect_eq "sdswarm metrics: exit 0" 0 "$?"
ctl --json status >"$T/status.json"
ctl --json stats >"$T/stats.json"
python3 - "$T/metrics" "$T/status.json" "$T/stats.json" >"$T/parse" 2>&1 <<'EOF'
import json, math, re, sys

text = open(sys.argv[1]).read()
status = json.load(open(sys.argv[2]))
stats = json.load(open(sys.argv[3]))
errors = []
def err(msg):
    errors.append(msg)

NAME = r'[a-zA-Z_:][a-zA-Z0-9_:]*'
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
SAMPLE = re.compile(r'^(%s)(\{(%s(?:,%s)*)?\})? (\S+)$' % (NAME, LABEL, LABEL))
SUFFIXES = {'counter': ['_total', '_created'], 'gauge': [''],
            'info': ['_info'], 'histogram': ['_bucket', '_count', '_sum', '_created']}

if not text.endswith('# EOF\n'):
    err('the text does not end with "# EOF" and a newline')
lines = text.split('\n')[:-1]
if lines.count('# EOF') != 1:
    err('"# EOF" appears %d times' % lines.count('# EOF'))
families = {}   # name -> type
helped = set()
samples = []    # (family, name, labels, value)
current = None
for n, line in enumerate(lines[:-1], 1):
    if line.startswith('# TYPE '):
        parts = line.split(' ')
        if len(parts) != 4 or parts[3] not in SUFFIXES:
            err('line %d: bad TYPE: %s' % (n, line)); continue
        if parts[2] in families:
            err('line %d: family %s declared twice' % (n, parts[2]))
        families[parts[2]] = parts[3]
        current = parts[2]
    elif line.startswith('# HELP '):
        parts = line.split(' ', 3)
        if len(parts) < 4 or parts[2] != current:
            err('line %d: HELP not for the family just declared' % n)
        helped.add(parts[2])
    elif line.startswith('#'):
        err('line %d: unknown comment: %s' % (n, line))
    else:
        m = SAMPLE.match(line)
        if not m:
            err('line %d: not a sample: %s' % (n, line)); continue
        name, labels, value = m.group(1), m.group(3) or '', m.group(4)
        if current is None or not any(name == current + s for s in SUFFIXES[families[current]]):
            err('line %d: %s is not a sample of family %s' % (n, name, current)); continue
        try:
            v = float(value)
        except ValueError:
            err('line %d: value %r is not a number' % (n, value)); continue
        lab = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', labels))
        samples.append((current, name, lab, v))
for f in families:
    if f not in helped:
        err('family %s has no HELP' % f)
    if not any(s[0] == f for s in samples):
        err('family %s has no samples' % f)

def value(metric, **labels):
    for fam, n, lab, v in samples:
        if n == metric and all(lab.get(k) == x for k, x in labels.items()):
            return v
    err('no sample %s%r' % (metric, labels))
    return None

# counters never negative; the histogram cumulative, ending at +Inf = count
for fam, n, lab, v in samples:
    if families[fam] == 'counter' and (v < 0 or math.isnan(v)):
        err('%s%r: a counter of %r' % (n, lab, v))
buckets = [(lab['le'], v) for fam, n, lab, v in samples if n == 'sdswarm_scsi_latency_seconds_bucket']
if not buckets or buckets[-1][0] != '+Inf':
    err('the latency histogram has no +Inf bucket last')
else:
    les = [float(le) for le, _ in buckets]
    if les != sorted(les) or len(set(les)) != len(les):
        err('bucket bounds not increasing: %r' % les)
    counts = [v for _, v in buckets]
    if counts != sorted(counts):
        err('bucket counts not cumulative: %r' % counts)
    if counts[-1] != value('sdswarm_scsi_latency_seconds_count'):
        err('+Inf bucket %r != _count' % counts[-1])
    if counts[-1] != stats['commands']:
        err('histogram count %r != stats commands %r' % (counts[-1], stats['commands']))

# the numbers are the daemon's own
if value('sdswarm_luns') != status['luns']:
    err('sdswarm_luns != status luns %r' % status['luns'])
if value('sdswarm_luns_max') != status['max_luns']:
    err('sdswarm_luns_max != status max_luns')
if value('sdswarm_lun_state', state='online') != status['states']['online']:
    err('online LUNs differ from status')
for op in stats['ops']:
    got = value('sdswarm_scsi_commands_total', opcode=op['opcode'])
    if got is not None and got < op['count']:
        err('%s: metrics count %r < stats count %r' % (op['opcode'], got, op['count']))
    if value('sdswarm_scsi_commands_total', opcode=op['opcode'], name=op['name']) is None:
        err('%s: the name label is not %s' % (op['opcode'], op['name']))
if not value('sdswarm_scsi_commands_total', name='INQUIRY'):
    err('no INQUIRY counted')
info = [lab for fam, n, lab, v in samples if n == 'sdswarm_build_info']
if not info or not info[0].get('version'):
    err('no build version')
print('%d families, %d samples' % (len(families), len(samples)))
for e in errors:
    print('error:', e)
sys.exit(1 if errors else 0)
EOF
rc=$?
sed 's/^/  | /' "$T/parse"
expect_eq "the metrics parse as OpenMetrics and agree with status and stats" 0 "$rc"
expect_eq "sdswarm_build_info carries the version of sdswarm --version" \
	"$("$SDSWARM" --version | cut -d' ' -f2)" \
	"$(sed -n 's/^sdswarm_build_info{version="\(.*\)"} 1$/\1/p' "$T/metrics")"
ctl metrics extra >/dev/null 2>&1
expect_eq "sdswarm metrics with an argument: usage error" 2 "$?"
stop_daemon
expect_eq "sdswarmd exits 0" 0 "$?"
finish
