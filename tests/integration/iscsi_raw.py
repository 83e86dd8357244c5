# SPDX-License-Identifier: MIT
# A raw iSCSI initiator for the integration tests: builds and parses PDUs
# itself, so it can send what libiscsi never would (hostile PDUs, exact
# negotiation) and check the target's answers byte by byte. Loopback only;
# every wait has a timeout and every loop a bound.
#   python3 iscsi_raw.py PORT TARGET MODE [ARGS]
# MODE: r2t | hostile | nop | async CTL_CMD... | sessions N | login-status
#       | buffers PID | share HELD | discovery ALLOWED STRANGER | login-text
#       | flood | chap | cmdsn
#       | write LUN LBA BLOCKS BYTE (WRITE(10) of BLOCKS 512-byte blocks of BYTE)
# Prints "ok: ..." per check and "FAIL: ..." on a failure; exit 1 if any.
import hashlib
import select
import socket
import struct
import sys
import time

RSVD = 0xffffffff
fails = 0


def ok(msg):
    print("ok: " + msg)


def check(cond, msg):
    global fails
    if cond:
        ok(msg)
    else:
        fails += 1
        print("FAIL: " + msg)


def pad4(n):
    return (4 - n % 4) % 4


def text(keys):
    return b"".join(k.encode() + b"=" + v.encode() + b"\0" for k, v in keys)


def parse_text(data):
    out = {}
    for kv in data.split(b"\0"):
        if b"=" in kv:
            k, v = kv.split(b"=", 1)
            out[k.decode()] = v.decode()
    return out


class Conn:
    def __init__(self, port, timeout=5.0, src="127.0.0.1"):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                          source_address=(src, 0))
        self.s.settimeout(timeout)
        self.cmdsn = 1
        self.statsn = 0
        self.itt = 0x100
        self.mrdsl = 8192

    def close(self):
        self.s.close()

    def pdu(self, bhs, data=b""):
        """@bhs with @data's length, then @data padded: the wire bytes."""
        bhs = bytearray(bhs)
        bhs[5:8] = struct.pack(">I", len(data))[1:]
        return bytes(bhs) + data + b"\0" * pad4(len(data))

    def send(self, bhs, data=b""):
        self.s.sendall(self.pdu(bhs, data))

    def data_out(self, itt, ttt, off, data, datasn=0, final=True):
        """A Data-Out PDU's wire bytes: @data at buffer offset @off."""
        bhs = bytearray(48)
        bhs[0] = 0x05
        bhs[1] = 0x80 if final else 0
        struct.pack_into(">II", bhs, 16, itt, ttt)
        struct.pack_into(">I", bhs, 28, self.statsn)
        struct.pack_into(">II", bhs, 36, datasn, off)
        return self.pdu(bhs, data)

    def recv_exact(self, n):
        buf = b""
        while len(buf) < n:
            b = self.s.recv(n - len(buf))
            if not b:
                raise EOFError("connection closed")
            buf += b
        return buf

    def recv(self):
        bhs = self.recv_exact(48)
        ahs = bhs[4] * 4
        dlen = struct.unpack(">I", b"\0" + bhs[5:8])[0]
        if ahs:
            self.recv_exact(ahs)
        data = self.recv_exact(dlen + pad4(dlen))[:dlen]
        if bhs[0] & 0x3f in (0x20, 0x21, 0x22, 0x24, 0x25, 0x26, 0x31, 0x32):
            self.maxcmdsn = struct.unpack(">I", bhs[32:36])[0]
        return bhs, data

    def maxcmdsn_now(self):
        return self.maxcmdsn

    def closed(self, wait=3.0):
        """True when the target closes the connection within @wait s."""
        self.s.settimeout(wait)
        try:
            for _ in range(1000):
                if not self.s.recv(65536):
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False
        return False

    def next_itt(self):
        self.itt += 1
        return self.itt

    def login(self, initiator, target, extra=(), stype="Normal",
              isid=b"\x80\x00\x00\x00\x00\x01"):
        keys = [("InitiatorName", initiator), ("SessionType", stype)]
        if target:
            keys.append(("TargetName", target))
        keys += list(extra)
        bhs = bytearray(48)
        bhs[0] = 0x43
        bhs[1] = 0x80 | (1 << 2) | 3  # T, CSG operational, NSG FFP
        bhs[8:14] = isid
        struct.pack_into(">I", bhs, 16, self.next_itt())
        struct.pack_into(">I", bhs, 24, self.cmdsn)
        self.send(bhs, text(keys))
        r, data = self.recv()
        status = r[36] << 8 | r[37]
        self.statsn = struct.unpack(">I", r[24:28])[0] + 1
        self.maxcmdsn = struct.unpack(">I", r[32:36])[0]
        kv = parse_text(data)
        if "MaxRecvDataSegmentLength" in kv:
            self.mrdsl = int(kv["MaxRecvDataSegmentLength"])
        return status, r, kv

    def cmd(self, cdb, lun=0, edtl=0, read=False, write=False, data=b"",
            cmdsn=None, final=True, imm=False):
        bhs = bytearray(48)
        bhs[0] = 0x01 | (0x40 if imm else 0)
        bhs[1] = (0x80 if final else 0) | (0x40 if read else 0) | \
            (0x20 if write else 0) | 1
        bhs[9] = lun
        itt = self.next_itt()
        struct.pack_into(">III", bhs, 16, itt, edtl,
                         self.cmdsn if cmdsn is None else cmdsn)
        struct.pack_into(">I", bhs, 28, self.statsn)
        bhs[32:32 + len(cdb)] = cdb
        if cmdsn is None and not imm:
            self.cmdsn += 1
        self.send(bhs, data)
        return itt

    def tur(self, lun=0, **kw):
        return self.cmd(bytes(6), lun=lun, **kw)

    def response(self, itt, limit=64):
        """PDUs until the SCSI Response (or S-bit Data-In) for @itt."""
        data = b""
        for _ in range(limit):
            r, d = self.recv()
            op = r[0] & 0x3f
            if op == 0x25 and struct.unpack(">I", r[16:20])[0] == itt:
                data += d
                if r[1] & 1:
                    return r, r[3], data
            elif op == 0x21 and struct.unpack(">I", r[16:20])[0] == itt:
                # Data-In so far, or the response's sense data
                return r, r[3], data if data else d
            elif op == 0x20 and struct.unpack(">I", r[20:24])[0] != RSVD:
                self.nop_reply(r)
        raise RuntimeError("no response")

    def nop_reply(self, r):
        bhs = bytearray(48)
        bhs[0] = 0x40
        bhs[1] = 0x80
        struct.pack_into(">II", bhs, 16, RSVD, struct.unpack(">I", r[20:24])[0])
        struct.pack_into(">I", bhs, 24, self.cmdsn)
        self.send(bhs)

    def logout(self):
        bhs = bytearray(48)
        bhs[0] = 0x46
        bhs[1] = 0x80
        struct.pack_into(">I", bhs, 16, self.next_itt())
        struct.pack_into(">I", bhs, 24, self.cmdsn)
        self.send(bhs)
        r, _ = self.recv()
        return r[0] & 0x3f, r[2]


INIT = "iqn.2026-12.org.sdswarm:raw"
INIT_B = "iqn.2026-12.org.sdswarm:b"


def session(port, target, extra=(), isid=b"\x80\0\0\0\0\x01",
            initiator=INIT, **kw):
    c = Conn(port, **kw)
    st, _, kv = c.login(initiator, target, extra, isid=isid)
    if st:
        raise RuntimeError("login status 0x%04x" % st)
    return c, kv


def mode_r2t(port, target):
    c, kv = session(port, target, [
        ("ImmediateData", "No"), ("InitialR2T", "Yes"),
        ("MaxBurstLength", "8192"), ("FirstBurstLength", "4096"),
        ("MaxOutstandingR2T", "2"), ("MaxRecvDataSegmentLength", "8192")])
    check(kv.get("InitialR2T") == "Yes", "InitialR2T=Yes agreed")
    check(kv.get("MaxBurstLength") == "8192", "MaxBurstLength=8192 agreed")
    check(kv.get("MaxOutstandingR2T") == "2", "MaxOutstandingR2T=2 agreed")
    check(kv.get("TargetPortalGroupTag") == "1", "TargetPortalGroupTag=1")
    # clear the power-on unit attention
    for _ in range(3):
        itt = c.tur()
        _, st, _ = c.response(itt)
        if st == 0:
            break
    payload = bytes((i * 31 + 7) & 0xff for i in range(32768))
    cdb = bytes([0x2a, 0, 0, 0, 0, 8, 0, 0, 64, 0])
    itt = c.cmd(cdb, edtl=32768, write=True)
    r2ts = []
    outstanding = {}
    resp = None
    for _ in range(64):
        r, d = c.recv()
        op = r[0] & 0x3f
        if op == 0x31:
            ttt, = struct.unpack(">I", r[20:24])
            sn, off, ln = struct.unpack(">III", r[36:48])
            r2ts.append((sn, off, ln))
            outstanding[ttt] = (off, ln)
            check(len(outstanding) <= 2,
                  "R2T %u: at most MaxOutstandingR2T outstanding" % sn)
            if len(outstanding) == 2 or off + ln == 32768:
                # answer the oldest burst, in 4 KiB Data-Outs
                for t, (o, l) in sorted(outstanding.items(),
                                        key=lambda x: x[1][0]):
                    for k, po in enumerate(range(o, o + l, 4096)):
                        c.s.sendall(c.data_out(
                            itt, t, po, payload[po:po + 4096], k,
                            po + 4096 >= o + l))
                outstanding.clear()
        elif op == 0x21:
            resp = r
            break
    check(resp is not None and resp[3] == 0, "WRITE(10) of 32 KiB: GOOD")
    check([x[0] for x in r2ts] == [0, 1, 2, 3], "R2TSN 0..3")
    check([x[1] for x in r2ts] == [0, 8192, 16384, 24576],
          "R2T offsets in 8 KiB bursts")
    check(all(x[2] == 8192 for x in r2ts), "each R2T asks MaxBurstLength")
    # read it back: Data-In at most our 8 KiB, F on burst ends, S last
    itt = c.cmd(bytes([0x28, 0, 0, 0, 0, 8, 0, 0, 64, 0]), edtl=32768,
                read=True)
    got = b""
    pdus = []
    for _ in range(64):
        r, d = c.recv()
        if r[0] & 0x3f == 0x25:
            pdus.append((len(d), r[1]))
            got += d
            if r[1] & 1:
                break
    check(got == payload, "data reads back")
    check(all(n <= 8192 for n, _ in pdus), "Data-In within MRDSL 8192")
    check(pdus[-1][1] & 0x81 == 0x81, "last Data-In has F and S")
    check(all(f & 0x80 for _, f in pdus), "F at each burst's end")
    # residuals: READ(10) of 1 block with EDTL 1000 (underflow 488)
    itt = c.cmd(bytes([0x28, 0, 0, 0, 0, 8, 0, 0, 1, 0]), edtl=1000,
                read=True)
    r, st, d = c.response(itt)
    res, = struct.unpack(">I", r[44:48])
    check(r[1] & 0x02 and res == 488, "underflow residual 488")
    itt = c.cmd(bytes([0x28, 0, 0, 0, 0, 8, 0, 0, 2, 0]), edtl=512,
                read=True)
    r, st, d = c.response(itt)
    res, = struct.unpack(">I", r[44:48])
    check(r[1] & 0x04 and res == 512 and len(d) == 512,
          "overflow residual 512")
    check(c.logout() == (0x26, 0), "logout")
    c.close()


def alive(port, target):
    c, _ = session(port, target)
    itt = c.cmd(bytes([0x12, 0, 0, 0, 36, 0]), edtl=36, read=True)
    _, st, d = c.response(itt)
    c.close()
    return st == 0 and len(d) == 36


def mode_hostile(port, target):
    # 1: a non-login PDU before login
    c = Conn(port)
    c.send(bytes([0x01]) + bytes(47))
    check(c.closed(), "SCSI Command before login: connection dropped")
    c.close()
    # 2: garbage
    c = Conn(port)
    c.s.sendall(b"\xff" * 48 + b"GET / HTTP/1.0\r\n\r\n")
    check(c.closed(), "garbage: connection dropped")
    c.close()
    # 3: a data segment over MaxRecvDataSegmentLength (24-bit maximum)
    c = Conn(port)
    bhs = bytearray(48)
    bhs[0] = 0x43
    bhs[5:8] = b"\xff\xff\xff"
    c.s.sendall(bytes(bhs))
    try:
        r, _ = c.recv()
        check(r[0] & 0x3f == 0x3f, "oversized segment: Reject")
    except EOFError:
        ok("oversized segment: dropped")
    check(c.closed(), "oversized segment: connection dropped")
    c.close()
    # 4: half a PDU, then gone
    c = Conn(port)
    c.s.sendall(bytes(20))
    c.close()
    # 5: login errors carry the RFC's status codes
    c = Conn(port)
    st, _, _ = c.login(INIT, "iqn.2026-12.org.sdswarm:nonexistent")
    check(st == 0x0203, "unknown target: 0x0203 (got 0x%04x)" % st)
    c.close()
    c = Conn(port)
    st, _, _ = c.login(INIT, None)
    check(st == 0x0207, "no TargetName: 0x0207 (got 0x%04x)" % st)
    c.close()
    c = Conn(port)
    bhs = bytearray(48)
    bhs[0] = 0x43
    bhs[1] = 0x87
    bhs[3] = 1  # version-min 1
    c.send(bhs, text([("InitiatorName", INIT), ("TargetName", target)]))
    r, _ = c.recv()
    check(r[36:38] == b"\x02\x05", "version-min 1: 0x0205")
    c.close()
    c = Conn(port)
    st, _, kv = c.login(INIT, target, [("X-com.example.Thing", "1"),
                                       ("MaxBurstLength", "100"),
                                       ("HeaderDigest", "SHA1")])
    check(st == 0, "login with odd keys succeeds")
    check(kv.get("X-com.example.Thing") == "NotUnderstood",
          "unknown key: NotUnderstood")
    check(kv.get("MaxBurstLength") == "Reject", "bad value: Reject")
    check(kv.get("HeaderDigest") == "Reject", "unknown digest: Reject")
    # 6: in full feature phase: an unknown opcode, a SNACK
    bhs = bytearray(48)
    bhs[0] = 0x1f | 0x40
    bhs[1] = 0x80
    c.send(bhs)
    r, d = c.recv()
    check(r[0] & 0x3f == 0x3f and r[2] == 0x05 and d[:1] == b"\x1f"[:1] or
          (r[0] & 0x3f == 0x3f and r[2] == 0x05),
          "unknown opcode: Reject, command not supported")
    bhs = bytearray(48)
    bhs[0] = 0x10
    bhs[1] = 0x80
    c.send(bhs)
    r, d = c.recv()
    check(r[0] & 0x3f == 0x3f and r[2] == 0x03, "SNACK: Reject")
    # 7: a CmdSN past MaxCmdSN is ignored; the expected one still works
    itt = c.tur(cmdsn=c.maxcmdsn + 10)
    itt2 = c.tur()
    r, st, _ = c.response(itt2)
    check(struct.unpack(">I", r[16:20])[0] == itt2,
          "out-of-window CmdSN dropped silently, next one answered")
    # 8: Data-Out for a task that does not exist: dropped
    c.s.sendall(c.data_out(0xdead, RSVD, 0, b"x" * 512))
    # 9: TMF on a LUN that is not there
    bhs = bytearray(48)
    bhs[0] = 0x42
    bhs[1] = 0x85
    bhs[9] = 9
    struct.pack_into(">III", bhs, 16, c.next_itt(), RSVD, c.cmdsn)
    c.send(bhs)
    r, _ = c.recv()
    check(r[0] & 0x3f == 0x22 and r[2] == 2, "LUN RESET of no LUN: 2")
    # 10: immediate data without ImmediateData... too long for EDTL
    c.cmd(bytes([0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0]), edtl=16, write=True,
          data=b"y" * 512)
    check(c.closed(), "immediate data beyond EDTL: connection dropped")
    c.close()
    # 11: a header digest that does not match
    c = Conn(port)
    st, _, kv = c.login(INIT, target, [("HeaderDigest", "CRC32C")])
    check(kv.get("HeaderDigest") == "CRC32C", "HeaderDigest=CRC32C")
    c.s.sendall(bytes([0x40, 0x80]) + bytes(46) + b"\0\0\0\0")
    check(c.closed(), "bad header digest: connection dropped")
    c.close()
    check(alive(port, target), "the target still serves")


def mode_nop(port, target):
    c, _ = session(port, target)
    r, _ = c.recv()  # idle: the target pings
    ttt, = struct.unpack(">I", r[20:24])
    check(r[0] & 0x3f == 0x20 and ttt != RSVD and
          struct.unpack(">I", r[16:20])[0] == RSVD, "target NOP-In ping")
    c.nop_reply(r)
    # our own ping with data comes back
    bhs = bytearray(48)
    bhs[0] = 0x40
    bhs[1] = 0x80
    struct.pack_into(">III", bhs, 16, c.next_itt(), RSVD, c.cmdsn)
    c.send(bhs, b"ping-data")
    for _ in range(4):
        r, d = c.recv()
        if struct.unpack(">I", r[16:20])[0] != RSVD:
            break
        c.nop_reply(r)
    check(r[0] & 0x3f == 0x20 and d == b"ping-data", "NOP-Out echoed")
    # stop answering: dropped after nop_timeout
    t0 = time.time()
    c.s.settimeout(10)
    dropped = False
    try:
        for _ in range(50):
            r, _ = c.recv()
    except (EOFError, ConnectionResetError):
        dropped = True
    except socket.timeout:
        pass
    check(dropped and time.time() - t0 < 9,
          "unanswered pings: connection dropped")
    c.close()


def mode_async(port, target, ctl):
    import subprocess
    c, _ = session(port, target)
    subprocess.run(ctl, check=True, stdout=subprocess.DEVNULL)
    c.s.settimeout(5)
    # a slow client (a sanitizer build, a loaded machine) can take longer
    # than nop_interval: answer the pings that come first
    for _ in range(16):
        r, d = c.recv()
        if r[0] & 0x3f != 0x20:
            break
        if struct.unpack(">I", r[20:24])[0] != RSVD:
            c.nop_reply(r)
    check(r[0] & 0x3f == 0x32 and r[36] == 0,
          "Async Message, AsyncEvent 0 (got opcode 0x%02x)" % (r[0] & 0x3f))
    check(len(d) >= 16 and d[4] & 0xf == 6 and d[14] == 0x3f and
          d[15] == 0x0e, "sense REPORTED LUNS DATA HAS CHANGED")
    c.close()


def mode_sessions(port, target, n):
    conns = []
    isid = 0
    for i in range(n):
        isid += 1
        c = Conn(port)
        st, _, _ = c.login(INIT, target, (),
                           isid=b"\x80" + struct.pack(">IB", isid, 0))
        if st:
            check(False, "session %d: login status 0x%04x" % (i, st))
            return
        conns.append(c)
    ok("%d sessions logged in" % n)
    good = 0
    for c in conns:
        itt = c.cmd(bytes([0x12, 0, 0, 0, 36, 0]), edtl=36, read=True)
    for c in conns:
        _, st, d = c.response(c.itt)
        good += st == 0 and len(d) == 36
    check(good == n, "INQUIRY on each of %d sessions (%d good)" % (n, good))
    # one more than max_sessions (the test sets it to n)
    c = Conn(port)
    st, _, _ = c.login(INIT, target, (), isid=b"\x80\xff\xff\xff\xff\x00")
    check(st == 0x0302, "session %d: out of resources 0x0302 (0x%04x)" %
          (n + 1, st))
    c.close()
    out = sum(1 for c in conns if c.logout() == (0x26, 0))
    check(out == n, "%d logouts" % out)
    for c in conns:
        c.close()


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def write16(lba, blocks):
    return bytes([0x8a, 0]) + struct.pack(">QIBB", lba, blocks, 0, 0)


def clear_ua(c, lun=0):
    for _ in range(3):
        _, st, _ = c.response(c.tur(lun=lun))
        if st == 0:
            return


def mode_buffers(port, target, pid):
    """[iscsi] max_buffer_per_connection = 64M, max_buffer = 80M; LUN 0
    max_transfer = 32M, LUN 1 the default 4M (iscsi-limits.sh)."""
    big = 32 << 20
    neg = [("ImmediateData", "Yes"), ("InitialR2T", "Yes"),
           ("MaxOutstandingR2T", "8"), ("MaxRecvDataSegmentLength", "262144")]
    a, _ = session(port, target, neg)
    # another initiator: A's share of the buffers (max_buffer_per_initiator
    # unset: 64M, its connection's budget) is not B's
    b, _ = session(port, target, neg, initiator=INIT_B)
    clear_ua(a)
    clear_ua(b)
    clear_ua(b, lun=1)
    before = rss_kib(pid)
    # 16 WRITEs of 32 MiB with no data yet: two fit the connection's 64 MiB
    # all to LBA 0: what the store keeps is 32 MiB, whichever two run
    itts = [a.cmd(write16(0, 65536), edtl=big, write=True)
            for i in range(16)]
    r2ts, status = {}, {}
    for _ in range(4096):
        if len(status) == 14 and len(r2ts) == 2:
            break
        r, d = a.recv()
        op, itt = r[0] & 0x3f, struct.unpack(">I", r[16:20])[0]
        if op == 0x31:
            r2ts.setdefault(itt, []).append(
                (struct.unpack(">I", r[20:24])[0],) +
                struct.unpack(">II", r[40:48]))
        elif op == 0x21:
            status[itt] = r[3]
    check(len(r2ts) == 2, "two 32 MiB WRITEs solicited (%d)" % len(r2ts))
    check(sorted(status.values()) == [0x28] * 14,
          "the other 14 answered TASK SET FULL before any data (%s)" %
          sorted(set(status.values())))
    # another initiator: the daemon's 80 MiB are used up -> BUSY
    itt = b.cmd(write16(0, 65536), edtl=big, write=True)
    _, st, _ = b.response(itt)
    check(st == 0x08, "a 32 MiB WRITE over max_buffer: BUSY (0x%02x)" % st)
    # over LUN 1's max_transfer (4M): INVALID FIELD IN CDB, at once
    itt = b.cmd(write16(0, 16384), lun=1, edtl=8 << 20, write=True)
    r, st, d = b.response(itt)
    check(st == 0x02 and len(d) > 14 and d[4] & 0xf == 5 and d[14] == 0x24,
          "8 MiB WRITE over max_transfer 4M: ILLEGAL REQUEST, "
          "INVALID FIELD IN CDB (0x%02x %s)" % (st, d[:16].hex()))
    # now feed the two solicited WRITEs their 64 MiB
    chunk = bytes(range(256)) * 1024
    done = {}
    pending = [(itt, x) for itt, xs in r2ts.items() for x in xs]
    for _ in range(100000):
        while pending:
            itt, (ttt, off, ln) = pending.pop(0)
            for k, po in enumerate(range(off, off + ln, len(chunk))):
                n = min(len(chunk), off + ln - po)
                a.s.sendall(a.data_out(itt, ttt, po, chunk[:n], k,
                                       po + n >= off + ln))
        if len(done) == 2:
            break
        r, d = a.recv()
        op, itt = r[0] & 0x3f, struct.unpack(">I", r[16:20])[0]
        if op == 0x31:
            pending.append((itt, (struct.unpack(">I", r[20:24])[0],) +
                            struct.unpack(">II", r[40:48])))
        elif op == 0x21:
            done[itt] = r[3]
    check(sorted(done.values()) == [0, 0], "the two WRITEs: GOOD")
    after = rss_kib(pid)
    print("rss: before %d KiB after %d KiB: +%d KiB for 16 x 32 MiB WRITEs" %
          (before, after, after - before))
    # 80 MiB of buffers, 32 MiB the store keeps, 16 MiB for the rest
    check(after - before < 128 << 10,
          "RSS grew %d KiB, under 128 MiB (80 MiB budget + 32 MiB stored)"
          % (after - before))
    # the budget is back: the next 32 MiB WRITE is solicited
    itt = a.cmd(write16(0, 65536), edtl=big, write=True)
    r, _ = a.recv()
    check(r[0] & 0x3f == 0x31, "after they completed, a new WRITE is solicited")
    a.close()
    b.close()


def recv_itt(c, itt):
    """The next PDU answering ITT @itt: (opcode, PDU); NOP-Ins that want a
    reply get one, answers to other tasks are passed over."""
    for _ in range(100000):
        r, _ = c.recv()
        op = r[0] & 0x3f
        if op == 0x20 and struct.unpack(">I", r[20:24])[0] != RSVD:
            c.nop_reply(r)
        elif struct.unpack(">I", r[16:20])[0] == itt:
            return op, r
    raise RuntimeError("no answer to ITT 0x%x" % itt)


def r2t_of(r):
    """An R2T's (TTT, offset, length)."""
    return (struct.unpack(">I", r[20:24])[0],) + struct.unpack(">II", r[40:48])


def write_first(c, itt):
    """The first answer to WRITE @itt: (0x31, [(TTT, offset, length)]) for
    an R2T, (0x21, status) for a SCSI Response."""
    for _ in range(64):
        op, r = recv_itt(c, itt)
        if op == 0x31:
            return op, [r2t_of(r)]
        if op == 0x21:
            return op, r[3]
    raise RuntimeError("no answer to ITT 0x%x" % itt)


def write_feed(c, itt, r2ts):
    """Answers WRITE @itt's R2Ts (@r2ts already received) with Data-Out of
    64 KiB until its SCSI Response. Return: its status."""
    chunk = bytes(range(256)) * 256
    pending = list(r2ts)
    for _ in range(100000):
        while pending:
            ttt, off, ln = pending.pop(0)
            for k, po in enumerate(range(off, off + ln, len(chunk))):
                n = min(len(chunk), off + ln - po)
                c.s.sendall(c.data_out(itt, ttt, po, chunk[:n], k,
                                       po + n >= off + ln))
        op, r = recv_itt(c, itt)
        if op == 0x31:
            pending.append(r2t_of(r))
        elif op == 0x21:
            return r[3]
    raise RuntimeError("WRITE ITT 0x%x never ended" % itt)


def answer(first):
    """write_first()'s answer in words."""
    if first[0] == 0x31:
        return "R2T"
    return "status 0x%02x" % first[1]


def mode_share(port, target, held):
    """[iscsi] max_buffer_per_connection = 32M, max_buffer = 96M and
    max_buffer_per_initiator = 32M x @held: 64M (@held 2), or 96M (@held 3,
    as if there were no share); LUN 0 takes 32 MiB transfers
    (iscsi-limits.sh). Initiator A opens 4 sessions and sends a 32 MiB
    WRITE without its data on the first 3 (one fills a connection): the
    first @held are solicited and hold their buffers, and A is at its
    share: its next commands get TASK SET FULL, on any of its sessions.
    With a share below the daemon's buffers, initiator B's WRITE is served
    meanwhile; with A's share all of them (as without a share), B gets
    BUSY: the starvation the share prevents."""
    big = 32 << 20
    neg = [("ImmediateData", "No"), ("InitialR2T", "Yes"),
           ("MaxOutstandingR2T", "8"), ("MaxRecvDataSegmentLength", "65536")]
    share = held < 3
    a = [session(port, target, neg, isid=b"\x80\0\0\0\0" + bytes([i + 1]))[0]
         for i in range(4)]
    b, _ = session(port, target, neg, initiator=INIT_B)
    for c in a + [b]:
        clear_ua(c)
    # one at a time: A's sessions are on different workers, so which of
    # two sent at once is taken first is theirs to decide
    itts, first = [], []
    for i in range(3):
        itts.append(a[i].cmd(write16(0, big // 512), edtl=big, write=True))
        first.append(write_first(a[i], itts[i]))
        if i < held:
            check(first[i][0] == 0x31, "A, session %d: a 32 MiB WRITE is "
                  "solicited (%s)" % (i + 1, answer(first[i])))
        else:
            check(first[i] == (0x21, 0x28), "A, session %d: a 32 MiB "
                  "WRITE past its share: TASK SET FULL (%s)" %
                  (i + 1, answer(first[i])))
    # A's fourth session, nothing held on it: 4 KiB is past A's share
    itt = a[3].cmd(write16(65536, 8), edtl=4096, write=True)
    got = write_first(a[3], itt)
    check(got == (0x21, 0x28),
          "A, session 4: a 4 KiB WRITE past its share of %d MiB: "
          "TASK SET FULL (%s)" % (32 * held, answer(got)))
    # B: 1 MiB, solicited and stored, or BUSY without the share
    itt = b.cmd(write16(65536, 2048), edtl=1 << 20, write=True)
    got = write_first(b, itt)
    if share:
        st = write_feed(b, itt, got[1]) if got[0] == 0x31 else got[1]
        check(got[0] == 0x31 and st == 0, "B, while A holds its share: "
              "a 1 MiB WRITE is GOOD (%s, then 0x%02x)" % (answer(got), st))
        # A's own commands done, A's retry fits again
        st = write_feed(a[0], itts[0], first[0][1])
        check(st == 0, "A, session 1: its 32 MiB WRITE, fed, is GOOD "
              "(0x%02x)" % st)
        itt = a[2].cmd(write16(0, big // 512), edtl=big, write=True)
        got = write_first(a[2], itt)
        check(got[0] == 0x31, "A, session 3: once its first WRITE is done, "
              "the retry is solicited (%s)" % answer(got))
    else:
        check(got == (0x21, 0x08), "B, while A holds the daemon's buffers: "
              "a 1 MiB WRITE gets BUSY (%s)" % answer(got))
    for c in a + [b]:
        c.close()


def mode_tail(port, target, rounds):
    """@rounds times: a WRITE of 32 MiB (A) and one of about 2 MiB (B), A's
    last 2 MiB and all of B's data in one send, then nothing until the
    responses. While the target stores A, B's data piles up in its socket,
    a little more each round: the target must handle every byte it has
    read even when the read that emptied the socket ended a batch of
    reads (iscsi-limits.sh; LUN 0 takes 32 MiB transfers)."""
    big, seg = 32 << 20, 262144
    a, kv = session(port, target, [
        ("ImmediateData", "No"), ("InitialR2T", "Yes"),
        ("MaxOutstandingR2T", "8"), ("MaxBurstLength", str(seg)),
        ("MaxRecvDataSegmentLength", str(seg))])
    check(kv.get("MaxOutstandingR2T") == "8" and
          kv.get("MaxBurstLength") == str(seg),
          "8 R2Ts of 256 KiB agreed (%s %s)" %
          (kv.get("MaxOutstandingR2T"), kv.get("MaxBurstLength")))
    clear_ua(a)
    data = bytes(range(256)) * (seg // 256)

    def dataout(itt, ttt, off, ln):
        return a.data_out(itt, ttt, off, data[:ln])

    good = 0
    for rnd in range(rounds):
        # B: 2 MiB less 4 KiB steps, so the pile crosses 64 KiB boundaries
        small = (2 << 20) - (rnd % 32) * 4096
        ia = a.cmd(write16(0, big // 512), edtl=big, write=True)
        ib = a.cmd(write16(65536, small // 512), edtl=small, write=True)
        ra, rb, done = [], [], {}
        blob = b""
        for _ in range(4096):
            r, _ = a.recv()
            op, itt = r[0] & 0x3f, struct.unpack(">I", r[16:20])[0]
            if op != 0x31:
                done[itt] = r[3]
                break
            x = (struct.unpack(">I", r[20:24])[0],) + \
                struct.unpack(">II", r[40:48])
            if itt == ib:
                rb.append(x)
            elif x[1] < big - (2 << 20):
                a.s.sendall(dataout(ia, *x))  # A, all but its last 2 MiB
            else:
                ra.append(x)
            if len(ra) == 8 and len(rb) == -(-small // seg):
                break
        if done or len(ra) != 8:
            check(False, "round %d: R2Ts A %d B %d, answered %s" %
                  (rnd, len(ra), len(rb), done))
            break
        a.s.sendall(b"".join(dataout(ia, *x) for x in ra) +
                    b"".join(dataout(ib, *x) for x in rb))
        st = []
        try:
            for itt in (ia, ib):
                st.append(a.response(itt)[1])
        except socket.timeout:
            check(False, "round %d: %d of 2 responses within %.0f s of the "
                  "last Data-Out" % (rnd, len(st), a.s.gettimeout()))
            break
        if st != [0, 0]:
            check(False, "round %d: status %s" % (rnd, st))
            break
        good += 1
    check(good == rounds, "%d of %d rounds answered" % (good, rounds))
    a.close()

def sendtargets(port, initiator):
    """TargetName values SendTargets=All gives @initiator (None: login
    refused)."""
    c = Conn(port)
    st, _, _ = c.login(initiator, None, stype="Discovery")
    if st:
        c.close()
        return None
    bhs = bytearray(48)
    bhs[0] = 0x04
    bhs[1] = 0x80
    struct.pack_into(">II", bhs, 16, c.next_itt(), RSVD)
    struct.pack_into(">II", bhs, 24, c.cmdsn, c.statsn)
    c.cmdsn += 1
    c.send(bhs, text([("SendTargets", "All")]))
    r, d = c.recv()
    c.close()
    names = [kv.split(b"=", 1)[1].decode() for kv in d.split(b"\0")
             if kv.startswith(b"TargetName=")]
    return names


def mode_discovery(port, target, allowed, stranger):
    names = sendtargets(port, allowed)
    check(names is not None and target in names,
          "SendTargets for a listed initiator names %s (%s)" %
          (target, names))
    names = sendtargets(port, stranger)
    check(names == [] or names is None,
          "SendTargets for an unlisted initiator names nothing (%s)" % names)


def login_keys(port, keys):
    """The status of a one-PDU login with exactly @keys."""
    c = Conn(port)
    bhs = bytearray(48)
    bhs[0] = 0x43
    bhs[1] = 0x80 | (1 << 2) | 3
    bhs[8:14] = b"\x80\0\0\0\0\x09"
    struct.pack_into(">II", bhs, 16, c.next_itt(), 0)
    struct.pack_into(">I", bhs, 24, c.cmdsn)
    data = b"".join(k + b"=" + v + b"\0" for k, v in keys)
    c.send(bhs, data)
    r, _ = c.recv()
    c.close()
    return r[36] << 8 | r[37]


def mode_login_text(port, target):
    me, t = INIT.encode(), target.encode()
    base = [(b"InitiatorName", me), (b"SessionType", b"Normal"),
            (b"TargetName", t)]
    st = login_keys(port, base)
    check(st == 0, "a plain login: 0x%04x" % st)
    for dup, what in ((b"InitiatorName", "InitiatorName"),
                      (b"TargetName", "TargetName"),
                      (b"SessionType", "SessionType"),
                      (b"MaxBurstLength", "MaxBurstLength")):
        keys = base + [(b"MaxBurstLength", b"65536")]
        val = dict(keys)[dup]
        st = login_keys(port, keys + [(dup, val)])
        check(st == 0x0200, "%s twice: initiator error 0x0200 (0x%04x)" %
              (what, st))
    st = login_keys(port, [(b"InitiatorName", b"iqn.2026-12.org.x"),
                           (b"InitiatorName", me), (b"SessionType", b"Normal"),
                           (b"TargetName", t)])
    check(st == 0x0200, "a second InitiatorName does not win (0x%04x)" % st)
    forged = b"iqn.2026-12.org.x\nsdswarmd: FORGED LINE\x1b[2J"
    st = login_keys(port, [(b"InitiatorName", forged),
                           (b"SessionType", b"Normal"), (b"TargetName", t)])
    check(st == 0x0200, "InitiatorName with newline and ESC: 0x0200 (0x%04x)"
          % st)
    for bad in (b"iqn.2026-12.org.X", b"host.example.com", b"eui.12"):
        st = login_keys(port, [(b"InitiatorName", bad),
                               (b"SessionType", b"Normal"), (b"TargetName", t)])
        check(st == 0x0200, "InitiatorName %s: 0x0200 (0x%04x)" %
              (bad.decode(), st))
    st = login_keys(port, [(b"InitiatorName", me), (b"SessionType", b"Normal"),
                           (b"TargetName", t + b"\x1b")])
    check(st == 0x0200, "TargetName with ESC: 0x0200 (0x%04x)" % st)


def mode_flood(port, target):
    """[iscsi] max_login_connections = 8, max_login_per_address = 4,
    login_timeout = 300, login_timeout_busy = 10 (iscsi-limits.sh)."""
    flood = [Conn(port, src="127.0.0.1") for _ in range(20)]
    # those refused are closed at accept: wait for them together
    closed, deadline = set(), time.monotonic() + 5.0
    while len(closed) < 16 and time.monotonic() < deadline:
        rd, _, _ = select.select([c.s for c in flood if c not in closed],
                                 [], [], 0.5)
        for c in flood:
            if c.s in rd and c not in closed and c.closed(wait=0.1):
                closed.add(c)
    check(len(closed) == 16,
          "20 idle connections from one address: 16 closed at once (%d)" %
          len(closed))
    held = [c for c in flood if c not in closed]
    c, _ = session(port, target, src="127.0.0.2")
    _, st, d = c.response(c.cmd(bytes([0x12, 0, 0, 0, 36, 0]), edtl=36,
                                read=True))
    check(st == 0 and len(d) == 36,
          "a login from another address during the flood works")
    more = [Conn(port, src="127.0.0.3") for _ in range(4)]
    extra = Conn(port, src="127.0.0.4")
    check(extra.closed(wait=5.0), "a 9th pre-login connection: closed")
    extra.close()
    # one of the held connections logs in: its place is free again
    st, _, _ = held[0].login(INIT, target)
    check(st == 0, "a held connection logs in (0x%04x)" % st)
    c2, _ = session(port, target, src="127.0.0.4",
                    isid=b"\x80\0\0\0\0\x07")
    ok("then a login from a fourth address works")
    # 7 pre-login of 8, over half: they have 10 s, not 300, until no
    # more than half (4) are left
    idle, gone = held[1:] + more, set()
    deadline = time.monotonic() + 60.0
    while len(gone) < 3 and time.monotonic() < deadline:
        rd, _, _ = select.select([x.s for x in idle if x not in gone],
                                 [], [], 1.0)
        for x in idle:
            if x.s in rd and x not in gone and x.closed(wait=0.1):
                gone.add(x)
    check(len(gone) >= 3,
          "under pressure idle connections time out early (%d of 7)" %
          len(gone))
    for x in flood + more + [c, c2]:
        x.close()

def chap_login(port, target, user, secret, src="127.0.0.1"):
    """A CHAP login (security stage, then straight to full feature phase);
    its final status."""
    c = Conn(port, src=src)

    def step(flags, keys):
        bhs = bytearray(48)
        bhs[0] = 0x43
        bhs[1] = flags
        bhs[8:14] = b"\x80\0\0\0\0\x0c"
        struct.pack_into(">II", bhs, 16, c.next_itt(), 0)
        struct.pack_into(">II", bhs, 24, c.cmdsn, c.statsn)
        c.send(bhs, text(keys))
        r, d = c.recv()
        c.statsn = struct.unpack(">I", r[24:28])[0] + 1
        return r[36] << 8 | r[37], parse_text(d)

    try:
        st, _ = step(0x01, [("InitiatorName", INIT), ("SessionType", "Normal"),
                            ("TargetName", target), ("AuthMethod", "CHAP")])
        if st:
            return st
        st, kv = step(0x01, [("CHAP_A", "5")])
        if st:
            return st
        cid = int(kv["CHAP_I"])
        chal = bytes.fromhex(kv["CHAP_C"][2:])
        resp = hashlib.md5(bytes([cid]) + secret.encode() + chal).hexdigest()
        st, _ = step(0x80 | 0x01, [("CHAP_N", user), ("CHAP_R", "0x" + resp)])
        return st
    finally:
        c.close()


def mode_chap(port, target):
    """[iscsi] chap_user = alice, chap_secret = alice-secret-0123."""
    counts, t0 = {}, time.monotonic()
    for _ in range(100000):
        if time.monotonic() - t0 > 3.5:
            break
        st = chap_login(port, target, "alice", "wrong-secret-000")
        counts[st] = counts.get(st, 0) + 1
    checked, waited = counts.get(0x0201, 0), counts.get(0x0301, 0)
    print("CHAP: %d wrong answers checked and %d told to retry later in 3.5 s"
          % (checked, waited))
    check(set(counts) <= {0x0201, 0x0301},
          "wrong answers: 0x0201 or 0x0301 only (%s)" %
          {"0x%04x" % k: v for k, v in counts.items()})
    # 3 free, then waits of 1 and 2 s: at most 6 checked in 3.5 s
    check(1 <= checked <= 7, "at most 7 wrong answers checked in 3.5 s (%d)"
          % checked)
    check(waited >= 1, "the rest: Service Unavailable, retry later")
    st = chap_login(port, target, "alice", "alice-secret-0123",
                    src="127.0.0.2")
    check(st == 0, "another address is not slowed down (0x%04x)" % st)
    st, t0 = 0x0301, time.monotonic()
    while st == 0x0301 and time.monotonic() - t0 < 60:
        st = chap_login(port, target, "alice", "alice-secret-0123")
        if st == 0x0301:
            time.sleep(0.5)
    check(st == 0, "the right secret gets in once the wait is over (0x%04x)"
          % st)
    st = chap_login(port, target, "alice", "wrong-secret-000")
    check(st == 0x0201, "a success forgets the failures (0x%04x)" % st)


def mode_cmdsn(port, target):
    c, _ = session(port, target, [("ImmediateData", "Yes"),
                                  ("FirstBurstLength", "65536")])
    clear_ua(c)
    n = c.cmdsn
    a, b = b"A" * 512, b"B" * 512
    w10 = bytes([0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0])
    # CmdSN n+1 first (held), then n: both answered, executed n, n+1
    ib = c.cmd(w10, edtl=512, write=True, data=b, cmdsn=n + 1)
    ia = c.cmd(w10, edtl=512, write=True, data=a, cmdsn=n)
    c.cmdsn = n + 2
    got = {}
    for _ in range(16):
        r, _ = c.recv()
        if r[0] & 0x3f == 0x21:
            got[struct.unpack(">I", r[16:20])[0]] = (
                r[3], struct.unpack(">I", r[28:32])[0])
        if len(got) == 2:
            break
    check(got.get(ia, (None,))[0] == 0 and got.get(ib, (None,))[0] == 0,
          "WRITE with CmdSN n+1 before n: both GOOD (%s)" % got)
    check(max(e for _, e in got.values()) == n + 2,
          "ExpCmdSN %d after both" % (n + 2))
    itt = c.cmd(bytes([0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0]), edtl=512,
                read=True)
    _, st, d = c.response(itt)
    check(st == 0 and d == b, "LBA 0 holds n+1's data: CmdSN order kept")
    # a SCSI command past a NOP-Out's CmdSN; the NOP-Out fills the gap
    n = c.cmdsn
    it = c.tur(cmdsn=n + 1)
    bhs = bytearray(48)
    bhs[0] = 0x00
    bhs[1] = 0x80
    inop = c.next_itt()
    struct.pack_into(">IIII", bhs, 16, inop, RSVD, n, c.statsn)
    c.send(bhs)
    c.cmdsn = n + 2
    seen = set()
    for _ in range(16):
        r, _ = c.recv()
        seen.add((r[0] & 0x3f, struct.unpack(">I", r[16:20])[0]))
        if (0x21, it) in seen and (0x20, inop) in seen:
            break
    check((0x21, it) in seen and (0x20, inop) in seen,
          "TUR at n+1, then NOP-Out at n: both answered")
    # past MaxCmdSN: still dropped
    r0 = c.tur(cmdsn=c.maxcmdsn_now() + 1)
    _, st, _ = c.response(c.tur())
    check(st == 0, "the next in-order command is answered")
    bhs = bytearray(48)
    bhs[0] = 0x40
    bhs[1] = 0x80
    inop = c.next_itt()
    struct.pack_into(">IIII", bhs, 16, inop, RSVD, c.cmdsn, c.statsn)
    c.send(bhs)
    stray = False
    for _ in range(16):
        r, _ = c.recv()
        if r[0] & 0x3f == 0x21 and struct.unpack(">I", r[16:20])[0] == r0:
            stray = True
        if r[0] & 0x3f == 0x20:
            break
    check(not stray, "a CmdSN past MaxCmdSN: dropped")
    c.close()


def read10(lba, blocks):
    return struct.pack(">BBIBHB", 0x28, 0, lba, 0, blocks, 0)


def nop_ping(c):
    """An immediate NOP-Out that asks for an answer: (ExpCmdSN, MaxCmdSN)."""
    bhs = bytearray(48)
    bhs[0] = 0x40
    bhs[1] = 0x80
    itt = c.next_itt()
    struct.pack_into(">IIII", bhs, 16, itt, RSVD, c.cmdsn, c.statsn)
    c.send(bhs)
    for _ in range(256):
        r, _ = c.recv()
        if r[0] & 0x3f == 0x20:
            if struct.unpack(">I", r[16:20])[0] == itt:
                return struct.unpack(">II", r[28:36])
            if struct.unpack(">I", r[20:24])[0] != RSVD:
                c.nop_reply(r)
    raise RuntimeError("no NOP-In for the ping")


def mode_window(port, target):
    """Commands in flight on one connection: the shell has set "hang luns=0
    ops=read", so every READ of LUN 0 is held until aborted."""
    c, _ = session(port, target)
    clear_ua(c, 0)
    clear_ua(c, 1)
    exp0, max0 = nop_ping(c)
    check(max0 - exp0 + 1 == 128,
          "a window of 128 CmdSNs (ExpCmdSN %d, MaxCmdSN %d)" % (exp0, max0))
    for i in range(128):
        c.cmd(read10(i, 1), edtl=512, read=True)
    exp1, max1 = nop_ping(c)
    check(exp1 == exp0 + 128 and max1 == exp1 - 1,
          "128 held READs close the window (ExpCmdSN %d, MaxCmdSN %d)"
          % (exp1, max1))
    # past MaxCmdSN: ignored (LUN 1 is not hung: it would answer if taken)
    extra = c.cmd(read10(0, 1), lun=1, edtl=512, read=True)
    c.cmdsn = exp1
    # 16 immediate slots besides the window: the 17th is rejected
    for i in range(16):
        c.cmd(read10(200 + i, 1), edtl=512, read=True, imm=True)
    c.cmd(read10(300, 1), edtl=512, read=True, imm=True)
    rejects, answered = [], []
    c.s.settimeout(2.0)
    try:
        for _ in range(64):
            r, d = c.recv()
            op = r[0] & 0x3f
            if op == 0x3f:
                rejects.append(r[2])
            elif op in (0x21, 0x25):
                answered.append(struct.unpack(">I", r[16:20])[0])
            elif op == 0x20 and struct.unpack(">I", r[20:24])[0] != RSVD:
                c.nop_reply(r)
    except socket.timeout:
        pass
    c.s.settimeout(None)
    check(rejects == [0x06],
          "the 17th immediate command: Reject, too many immediate commands "
          "(0x06) (%s)" % rejects)
    check(not answered, "no held command answered, the one past MaxCmdSN "
          "ignored (%s)" % answered)
    check(extra not in answered, "the command past MaxCmdSN not executed")
    # ABORT TASK SET on LUN 0 ends all 144; the window opens again
    bhs = bytearray(48)
    bhs[0] = 0x02 | 0x40
    bhs[1] = 0x80 | 2
    itt = c.next_itt()
    struct.pack_into(">IIII", bhs, 16, itt, RSVD, c.cmdsn, c.statsn)
    c.send(bhs)
    resp = None
    for _ in range(256):
        r, _ = c.recv()
        if r[0] & 0x3f == 0x22 and struct.unpack(">I", r[16:20])[0] == itt:
            resp = r[2]
            break
        if r[0] & 0x3f == 0x20 and struct.unpack(">I", r[20:24])[0] != RSVD:
            c.nop_reply(r)
    check(resp == 0, "ABORT TASK SET: function complete (%s)" % resp)
    exp2, max2 = nop_ping(c)
    check(exp2 == exp1 and max2 - exp2 + 1 == 128,
          "the window open again (ExpCmdSN %d, MaxCmdSN %d)" % (exp2, max2))
    _, st, _ = c.response(c.cmd(read10(0, 1), lun=1, edtl=512, read=True))
    check(st == 0, "the next READ (LUN 1) is answered GOOD")
    c.close()


def mode_login_long(port, target):
    """Login text over continuations: at most 64 KiB in all, then 0x0200."""
    c = Conn(port)
    keys = text([("InitiatorName", INIT), ("SessionType", "Normal"),
                 ("TargetName", target)])
    filler = b"X-sdswarm-pad=" + b"p" * 8000 + b"\0"
    statuses = []
    for i in range(12):
        bhs = bytearray(48)
        bhs[0] = 0x43
        bhs[1] = 0x40 | (1 << 2)  # C, CSG operational, T clear
        bhs[8:14] = b"\x80\0\0\0\0\x07"
        struct.pack_into(">I", bhs, 16, 0x77)
        struct.pack_into(">I", bhs, 24, c.cmdsn)
        c.send(bhs, keys if i == 0 else filler)
        try:
            r, _ = c.recv()
        except (EOFError, ConnectionResetError):
            break
        st = r[36] << 8 | r[37]
        statuses.append(st)
        if st:
            break
    total = len(keys) + (len(statuses) - 1) * len(filler)
    check(statuses and statuses[-1] == 0x0200 and
          all(s == 0 for s in statuses[:-1]),
          "login text past 64 KiB over %d continued PDUs: 0x0200 (%s)"
          % (len(statuses), ["0x%04x" % s for s in statuses]))
    check(total > 65536 and total - len(filler) <= 65536,
          "refused at the PDU that crosses 64 KiB (%d bytes)" % total)
    c.close()


def mode_write(port, target, lun, lba, blocks, byte):
    c, _ = session(port, target)
    data = bytes([byte]) * (blocks * 512)
    cdb = struct.pack(">BBIBHB", 0x2a, 0, lba, 0, blocks, 0)
    for _ in range(3):  # past the power-on unit attention
        itt = c.cmd(cdb, lun=lun, edtl=len(data), write=True, data=data)
        _, st, _ = c.response(itt)
        if st == 0:
            break
    check(st == 0, "WRITE(10) of %d blocks at LBA %d of LUN %d: GOOD"
          % (blocks, lba, lun))
    c.logout()


def main():
    port, target, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    try:
        if mode == "r2t":
            mode_r2t(port, target)
        elif mode == "hostile":
            mode_hostile(port, target)
        elif mode == "nop":
            mode_nop(port, target)
        elif mode == "async":
            mode_async(port, target, sys.argv[4:])
        elif mode == "sessions":
            mode_sessions(port, target, int(sys.argv[4]))
        elif mode == "discovery":
            mode_discovery(port, target, sys.argv[4], sys.argv[5])
        elif mode == "login-text":
            mode_login_text(port, target)
        elif mode == "flood":
            mode_flood(port, target)
        elif mode == "cmdsn":
            mode_cmdsn(port, target)
        elif mode == "window":
            mode_window(port, target)
        elif mode == "login-long":
            mode_login_long(port, target)
        elif mode == "chap":
            mode_chap(port, target)
        elif mode == "tail":
            mode_tail(port, target, int(sys.argv[4]))
        elif mode == "buffers":
            mode_buffers(port, target, int(sys.argv[4]))
        elif mode == "share":
            mode_share(port, target, int(sys.argv[4]))
        elif mode == "write":
            mode_write(port, target, *[int(a, 0) for a in sys.argv[4:8]])
    except Exception as e:  # a broken exchange is a failure, not a crash
        check(False, "%s: %r" % (mode, e))
    sys.exit(1 if fails else 0)


if __name__ == "__main__":  # iscsi_alua.py imports the classes
    main()
