#!/bin/bash
# SPDX-License-Identifier: MIT
# sdswarm sessions: the iSCSI sessions a daemon serves, each with its
# initiator, target, peer and portal addresses, ISID and TSIH, the digests
# negotiated and the commands in flight, as text and --json; a session that
# ends leaves the list. Sessions are held open by libiscsi's iscsi-perf
# (-m commands always in flight) and by a raw initiator that negotiates
# CRC32C digests and sends a command an injected delay holds, each bounded
# by timeout(1).
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires python3 iscsi-perf timeout
private_dir T
PORT=$(free_port) || skip "no free TCP port on 127.0.0.1"
IQN=iqn.2026-12.org.sdswarm
start_daemon "$SDSWARM_TOP/configs/iscsi-host.conf" --iscsi "127.0.0.1:$PORT" || finish
js() { python3 -c 'import json, sys; r = json.loads(sys.stdin.read()); print(eval(sys.argv[1]))' "$1"; }
# wait_sessions N: up to 20 s (by the clock, however loaded the machine)
# for exactly N sessions
wait_sessions() {
	local end=$((SECONDS + 20))
	while [ "$SECONDS" -lt "$end" ]; do
		[ "$(js 'len(r["sessions"])' <<<"$(ctl --json sessions)")" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

ctl sessions >"$T/out"
expect_eq "no initiator yet: exit 0" 0 "$?"
expect_eq "... and no session" "0 iSCSI sessions" "$(cat "$T/out")"

# iscsi-perf: 4 READs always in flight, each held 200 ms by a delay rule
ctl fault set delay luns=1 delay=200ms >/dev/null
timeout -k 5 60 iscsi-perf -i iqn.2026-12.org.test:perf -m 4 -t 30 \
	"iscsi://127.0.0.1:$PORT/$IQN:t0/1" >"$T/perf" 2>&1 &
perf=$!
check "iscsi-perf logs in" wait_sessions 1
# iscsi-perf reaches its 4 in flight after its login, INQUIRY and READ
# CAPACITY, and each READ's completion leaves 3 for a moment: wait (by the
# clock, up to 20 s) for a snapshot with all 4, a second after the login
# at least (age_s below).
sleep 1
four() {
	s=$(ctl --json sessions)
	[ "$(js 'r["sessions"][0]["inflight"]' <<<"$s")" = 4 ]
}
end=$((SECONDS + 20))
until four || [ "$SECONDS" -ge "$end" ]; do sleep 0.05; done
expect_eq "initiator, target, transport" "iqn.2026-12.org.test:perf $IQN:t0 iscsi" \
	"$(js 'r["sessions"][0]["initiator"] + " " + r["sessions"][0]["target"] + " " + r["sessions"][0]["transport"]' <<<"$s")"
expect_eq "4 commands in flight (iscsi-perf -m 4)" 4 "$(js 'r["sessions"][0]["inflight"]' <<<"$s")"
expect_eq "no digests asked: None, None; one connection" "None None 1" \
	"$(js 'r["sessions"][0]["header_digest"] + " " + r["sessions"][0]["data_digest"] + " " + str(r["sessions"][0]["connections"])' <<<"$s")"
check "peer, portal, ISID, TSIH" python3 -c '
import json, re, sys
s = json.loads(sys.argv[1])["sessions"][0]
assert re.fullmatch(r"127\.0\.0\.1:\d+", s["peer"]), s
assert s["portal"].startswith("127.0.0.1:%s" % sys.argv[2]), s
assert re.fullmatch(r"[0-9a-f]{12}", s["isid"]) and s["tsih"] >= 1, s
assert not s["discovery"] and s["age_s"] >= 1, s' "$s" "$PORT"
text4() {
	ctl sessions >"$T/out"
	grep -qE "^iscsi +[0-9]+ +127\.0\.0\.1:[0-9]+ +127\.0\.0\.1:$PORT.* None/None +4 .* iqn\.2026-12\.org\.test:perf -> $IQN:t0$" "$T/out"
}
end=$((SECONDS + 20))
until text4 || [ "$SECONDS" -ge "$end" ]; do sleep 0.05; done
check "text: one line naming initiator -> target" grep -qE "^iscsi +[0-9]+ +127\.0\.0\.1:[0-9]+ +127\.0\.0\.1:$PORT.* None/None +4 .* iqn\.2026-12\.org\.test:perf -> $IQN:t0$" "$T/out"
check "text: the count" grep -qx "1 iSCSI session" "$T/out"
kill "$perf" 2>/dev/null
wait "$perf" 2>/dev/null
check "iscsi-perf gone: its session leaves the list" wait_sessions 0

# CRC32C digests: libiscsi's tools offer None first (the target takes the
# initiator's first choice), so a raw login asks for CRC32C only, then
# sends a TEST UNIT READY with its header digest that a delay rule holds
# for 20 s (answering the target's pings meanwhile)
ctl fault clear all >/dev/null
ctl fault set delay luns=0 delay=20s ops=any >/dev/null
timeout 120 python3 - "$PORT" "$IQN:t0" "$SDSWARM_TOP/tests/integration" >"$T/raw" 2>&1 <<'PY' &
import struct, sys, time
sys.path.insert(0, sys.argv[3])
import iscsi_raw as R

def crc32c(data, crc=0xffffffff):
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 if crc & 1 else 0)
    return crc ^ 0xffffffff

c = R.Conn(int(sys.argv[1]), timeout=100)
st, _, kv = c.login("iqn.2026-12.org.test:crc", sys.argv[2],
                    [("HeaderDigest", "CRC32C"), ("DataDigest", "CRC32C")])
assert st == 0 and kv.get("HeaderDigest") == "CRC32C", (st, kv)
bhs = bytearray(48)
bhs[0], bhs[1], bhs[9] = 0x01, 0x80, 0
struct.pack_into(">III", bhs, 16, c.next_itt(), 0, c.cmdsn)
struct.pack_into(">I", bhs, 28, c.statsn)
c.s.sendall(bytes(bhs) + struct.pack("<I", crc32c(bhs)))
# the response, answering the target's pings (NOP-In) meanwhile
for _ in range(100):
    r = c.recv_exact(48 + 4)
    dlen = struct.unpack(">I", b"\0" + r[5:8])[0]
    if dlen:
        c.recv_exact(dlen + R.pad4(dlen) + 4)
    if r[0] & 0x3f == 0x21:
        break
    ttt = struct.unpack(">I", r[20:24])[0]
    if r[0] & 0x3f == 0x20 and ttt != R.RSVD:
        nop = bytearray(48)
        nop[0], nop[1] = 0x40, 0x80
        struct.pack_into(">II", nop, 16, R.RSVD, ttt)
        struct.pack_into(">II", nop, 24, c.cmdsn + 1, c.statsn)
        c.s.sendall(bytes(nop) + struct.pack("<I", crc32c(nop)))
print("response opcode 0x%02x" % (r[0] & 0x3f))
c.close()
PY
raw=$!
check "a raw initiator logs in with CRC32C digests" wait_sessions 1
s=$(ctl --json sessions)
expect_eq "CRC32C header and data digests" "CRC32C CRC32C iqn.2026-12.org.test:crc" \
	"$(js 'r["sessions"][0]["header_digest"] + " " + r["sessions"][0]["data_digest"] + " " + r["sessions"][0]["initiator"]' <<<"$s")"
# its one command: in flight once it has arrived (up to 10 s by the clock)
end=$((SECONDS + 10))
seen=
while [ "$SECONDS" -lt "$end" ]; do
	seen=$(js 'r["sessions"][0]["inflight"] if r["sessions"] else -1' <<<"$(ctl --json sessions)")
	[ "$seen" = 1 ] && break
	sleep 0.1
done
expect_eq "... its TEST UNIT READY in flight while the delay holds it" 1 "$seen"
wait "$raw"
expect_eq "the command completes once the delay has passed" 0 "$?"
sed 's/^/  raw| /' "$T/raw"
check "... a SCSI response" grep -qx "response opcode 0x21" "$T/raw"
check "... and the session leaves the list" wait_sessions 0

ctl sessions extra >"$T/out" 2>&1
expect_eq "sessions with an argument: usage error" 2 "$?"
ctl sesions >"$T/out" 2>&1
expect_eq "sesions: usage error" 2 "$?"
check "... did you mean sessions" grep -q "did you mean sessions?" "$T/out"
stop_daemon
expect_eq "sdswarmd exits 0" 0 "$?"
finish
