# SPDX-License-Identifier: MIT
# Two paths to the same LUNs, checked byte by byte with iscsi_raw's
# initiator: one session on each portal (the same initiator and ISID:
# different portal groups make them different I_T nexuses), the same LUN
# identity with per-port designators, REPORT TARGET PORT GROUPS, and what a
# state change through the control socket does to both paths.
#   python3 iscsi_alua.py PORT1 PORT2 TARGET SDSWARM CONTROL
# Prints "ok: ..." per check and "FAIL: ..." on a failure; exit 1 if any.
import struct
import subprocess
import sys

import iscsi_raw
from iscsi_raw import INIT, Conn, check

ISID = b"\x80\x00\x00\x00\x0a\x01"


def response(c, itt, limit=64):
    """Data-In and the SCSI Response for @itt, with its sense segment."""
    data = b""
    for _ in range(limit):
        r, d = c.recv()
        op = r[0] & 0x3f
        mine = struct.unpack(">I", r[16:20])[0] == itt
        if op == 0x25 and mine:
            data += d
            if r[1] & 1:
                return r[3], data, b""
        elif op == 0x21 and mine:
            return r[3], data, d
        elif op == 0x20 and struct.unpack(">I", r[20:24])[0] != \
                iscsi_raw.RSVD:
            c.nop_reply(r)
    raise RuntimeError("no response")


def scsi(c, cdb, lun=0, edtl=0):
    itt = c.cmd(bytes(cdb), lun=lun, edtl=edtl, read=edtl > 0)
    st, data, seg = response(c, itt)
    sense = None
    if st == 2 and len(seg) >= 2:
        n = seg[0] << 8 | seg[1]
        s = seg[2:2 + n]
        if s and s[0] & 0x7f in (0x70, 0x71):
            sense = (s[2] & 0xf, s[12], s[13])
        elif s and s[0] & 0x7f in (0x72, 0x73):
            sense = (s[1] & 0xf, s[2], s[3])
    return st, data, sense


def clear_ua(c, lun=0):
    for _ in range(16):
        st, _, sense = scsi(c, [0, 0, 0, 0, 0, 0], lun)
        if not sense or sense[0] != 6:
            return
    raise RuntimeError("a unit attention that never clears")


def inquiry(c, page=None, lun=0):
    if page is None:
        return scsi(c, [0x12, 0, 0, 0, 96, 0], lun, 96)[1]
    return scsi(c, [0x12, 1, page, 1, 0, 0], lun, 256)[1]


def designators(page83):
    out = {}
    off = 4
    while off + 4 <= len(page83):
        d = page83[off:off + 4 + page83[off + 3]]
        out[(d[1] & 0x30, d[1] & 0x0f)] = d[4:]
        off += 4 + page83[off + 3]
    return out


def rtpg(c, fmt=0):
    return scsi(c, [0xa3, fmt << 5 | 0x0a, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0],
                0, 256)


def groups(data):
    off = 8 if len(data) > 4 and data[4] & 0x70 == 0x10 else 4
    end = 4 + struct.unpack(">I", data[:4])[0]
    out = {}
    while off + 8 <= end:
        d = data[off:]
        ports = [struct.unpack(">H", d[8 + 4 * i + 2:8 + 4 * i + 4])[0]
                 for i in range(d[7])]
        out[struct.unpack(">H", d[2:4])[0]] = (d[0] & 0xf, d[1], d[5], ports)
        off += 8 + 4 * d[7]
    return out


def ctl(tool, control, *args):
    subprocess.run([tool, "--control", control] + list(args), check=True,
                   stdout=subprocess.DEVNULL)


def main():
    p1, p2, target, tool, control = sys.argv[1:6]
    a = Conn(int(p1))
    b = Conn(int(p2))
    sa, _, kva = a.login(INIT, target, (), isid=ISID)
    sb, _, kvb = b.login(INIT, target, (), isid=ISID)
    check(sa == 0 and sb == 0, "login on both portals, one ISID")
    check(kva.get("TargetPortalGroupTag") == "1" and
          kvb.get("TargetPortalGroupTag") == "2",
          "TargetPortalGroupTag 1 and 2 (%s, %s)" %
          (kva.get("TargetPortalGroupTag"), kvb.get("TargetPortalGroupTag")))
    for c in (a, b):
        clear_ua(c)
        clear_ua(c, 1)
    check(scsi(a, [0, 0, 0, 0, 0, 0])[0] == 0,
          "the first session lives on beside the second (no reinstatement)")

    # one identity, two ports
    ia, ib = inquiry(a), inquiry(b)
    check(ia[5] & 0x30 == 0x10 and ib[5] & 0x30 == 0x10, "TPGS 01b on both")
    check(inquiry(a, 0x80, 1) == inquiry(b, 0x80, 1), "same serial (VPD 80h)")
    da = designators(inquiry(a, 0x83, 1))
    db = designators(inquiry(b, 0x83, 1))
    naa = (0x00, 0x3)
    check(naa in da and da[naa] == db.get(naa), "same NAA designator")
    check(designators(inquiry(a, 0x83, 0))[naa] != da[naa],
          "LUN 0 and LUN 1 differ")
    rel, tpg = (0x10, 0x4), (0x10, 0x5)
    check(da[rel][2:] == b"\x00\x01" and db[rel][2:] == b"\x00\x02",
          "relative target ports 1 and 2")
    check(da[tpg][2:] == b"\x00\x01" and db[tpg][2:] == b"\x00\x02",
          "target port groups 1 and 2")
    dev = (0x20, 0x8)
    check(da[dev] == db[dev], "same target device name")

    # REPORT TARGET PORT GROUPS, both formats, from both paths
    for c, name in ((a, "port 1"), (b, "port 2")):
        for fmt in (0, 1):
            st, data, _ = rtpg(c, fmt)
            g = groups(data)
            check(st == 0 and g.get(1, (None,))[0] == 0 and
                  g[1][3] == [1] and g.get(2, (None,))[0] == 1 and
                  g[2][3] == [2] and g[1][1] == 0x0f,
                  "RTPG format %d via %s: 1 AO [1], 2 AN [2] (%r)" %
                  (fmt, name, g))

    # standby: the UA on both paths, then 04h/0Bh on port 2 only
    ctl(tool, control, "alua", "set", "b", "standby")
    for c, name in ((a, "port 1"), (b, "port 2")):
        st, _, sense = scsi(c, [0, 0, 0, 0, 0, 0])
        check(sense == (6, 0x2a, 0x06),
              "ASYMMETRIC ACCESS STATE CHANGED via %s (%r)" % (name, sense))
    _, _, sense = scsi(b, [0, 0, 0, 0, 0, 0])
    check(sense == (2, 0x04, 0x0b), "TUR on port 2: 04h/0Bh (%r)" % (sense,))
    _, _, sense = scsi(b, [0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0], 0, 512)
    check(sense == (2, 0x04, 0x0b), "READ on port 2: 04h/0Bh (%r)" % (sense,))
    st, data, _ = scsi(b, [0x12, 0, 0, 0, 96, 0], 0, 96)
    check(st == 0 and len(data) == 96, "INQUIRY on port 2 still runs")
    st, data, _ = rtpg(b)
    check(st == 0 and groups(data)[2][0] == 2 and groups(data)[2][2] == 2,
          "RTPG on port 2: group 2 standby, status 02h")
    st, _, _ = scsi(a, [0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0], 0, 512)
    check(st == 0, "READ on port 1 still runs")

    ctl(tool, control, "alua", "set", "b", "unavailable")
    clear_ua(b)
    _, _, sense = scsi(b, [0x1a, 0, 0x3f, 0, 252, 0], 0, 252)
    check(sense == (2, 0x04, 0x0c),
          "MODE SENSE on port 2 unavailable: 04h/0Ch (%r)" % (sense,))

    # failover: a goes standby, b optimized; then back
    ctl(tool, control, "alua", "set", "a", "standby")
    ctl(tool, control, "alua", "set", "2", "ao")
    clear_ua(a)
    clear_ua(b)
    _, _, sense = scsi(a, [0, 0, 0, 0, 0, 0])
    st, _, _ = scsi(b, [0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0], 0, 512)
    check(sense == (2, 0x04, 0x0b) and st == 0,
          "failed over: port 1 standby, port 2 reads")
    ctl(tool, control, "alua", "set", "a", "active/optimized")
    clear_ua(a)
    check(scsi(a, [0, 0, 0, 0, 0, 0])[0] == 0, "port 1 active again")
    for c in (a, b):
        c.logout()
        c.close()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a broken exchange is a failure, not a crash
        check(False, "alua: %r" % (e,))
    sys.exit(1 if iscsi_raw.fails else 0)
