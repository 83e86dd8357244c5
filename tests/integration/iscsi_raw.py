# SPDX-License-Identifier: MIT
# A raw iSCSI initiator for the integration tests: builds and parses PDUs
# itself, so it can send what libiscsi never would (hostile PDUs, exact
# negotiation) and check the target's answers byte by byte. Loopback only;
# every wait has a timeout and every loop a bound.
#   python3 iscsi_raw.py PORT TARGET MODE [ARGS]
# MODE: r2t | hostile | nop | async CTL_CMD... | sessions N | login-status
#       | write LUN LBA BLOCKS BYTE (WRITE(10) of BLOCKS 512-byte blocks of BYTE)
# Prints "ok: ..." per check and "FAIL: ..." on a failure; exit 1 if any.
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
    def __init__(self, port, timeout=5.0):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.s.settimeout(timeout)
        self.cmdsn = 1
        self.statsn = 0
        self.itt = 0x100
        self.mrdsl = 8192

    def close(self):
        self.s.close()

    def send(self, bhs, data=b""):
        bhs = bytearray(bhs)
        bhs[5:8] = struct.pack(">I", len(data))[1:]
        self.s.sendall(bytes(bhs) + data + b"\0" * pad4(len(data)))

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
        return bhs, data

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
                return r, r[3], data
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


def session(port, target, extra=(), **kw):
    c = Conn(port, **kw)
    st, _, kv = c.login(INIT, target, extra)
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
                        bhs = bytearray(48)
                        bhs[0] = 0x05
                        bhs[1] = 0x80 if po + 4096 >= o + l else 0
                        struct.pack_into(">II", bhs, 16, itt, t)
                        struct.pack_into(">I", bhs, 28, c.statsn)
                        struct.pack_into(">II", bhs, 36, k, po)
                        c.send(bhs, payload[po:po + 4096])
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
    bhs = bytearray(48)
    bhs[0] = 0x05
    bhs[1] = 0x80
    struct.pack_into(">II", bhs, 16, 0xdead, RSVD)
    c.send(bhs, b"x" * 512)
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
    r, d = c.recv()
    check(r[0] & 0x3f == 0x32 and r[36] == 0, "Async Message, AsyncEvent 0")
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
        elif mode == "write":
            mode_write(port, target, *[int(a, 0) for a in sys.argv[4:8]])
    except Exception as e:  # a broken exchange is a failure, not a crash
        check(False, "%s: %r" % (mode, e))
    sys.exit(1 if fails else 0)


main()
