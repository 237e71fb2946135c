#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""eroce_wire_peer.py: a scripted RC responder on the wire.

Run in the namespace of a netdev that has no eroce device (ns2/veth2).
For each scenario it starts selftests/tools/eroce_wirereq, one RC QP on
--dev (eroce1, across the veth), connects it to a QPN no device holds,
takes the requests eroce1 sends from a UDP socket bound to --ip:4791, and
answers with packets forged from an AF_PACKET socket on --iface: exactly
the ACKs, NAKs, read responses and atomic ACKs the scenario needs, in its
order.  Every READ request on the wire must agree with itself: its PSN
and its address name the same part of the read.  Prints KTAP, one result
per expectation.

  read_after_stale_nak    a SEND and a READ; the READ answered out of
                          order, then a sequence NAK for the SEND
                          arrives again, late: the READ must not be sent
                          at the SEND's PSN, and its data must be right
  ghost_read_response     a read response for a PSN never sent must not
                          complete the SEND before it
  ghost_atomic_ack        an atomic ACK for a PSN never sent must not
                          complete the SEND before the atomic
  read_too_long           a 2 GiB READ at MTU 256 (2^23 response PSNs,
                          half the PSN space) completes with a local
                          length error and never reaches the wire
"""
import argparse
import os
import socket
import subprocess
import sys
import time

from eroce_hostile import Ktap, Wire, aeth, bth, counters

ROCE_PORT = 4791
PEER_QPN = 0x00c0de         # held by no device: the script answers for it
RKEY = 0x2a2a2a2a
VA = 0x7f0000001000
QP_TIMEOUT = 19             # 4.096 us << 19: 2.1 s

# opcodes (IBTA 9.2)
RC_SEND_ONLY = 0x04
RC_READ_REQUEST = 0x0c
RC_READ_RESPONSE_FIRST = 0x0d
RC_READ_RESPONSE_MIDDLE = 0x0e
RC_READ_RESPONSE_LAST = 0x0f
RC_READ_RESPONSE_ONLY = 0x10
RC_ACK = 0x11
RC_ATOMIC_ACK = 0x12
RC_FETCH_ADD = 0x14

SYN_ACK = 0x1f              # ACK, credits invalid
SYN_NAK_SEQ = 0x60          # NAK: PSN sequence error

PSN_MASK = 0xffffff


def pattern(n, seed):
    """eroce_pattern() of tool_pair.c: message @seed's @n bytes."""
    m = 0xffffffff
    x = (seed * 2654435761 + 1) & m
    out = bytearray(n)
    for i in range(n):
        x = (x * 1103515245 + 12345) & m
        out[i] = (x >> 16) & 0xff
    return bytes(out)


class Request:
    """One request packet eroce1 sent: BTH, RETH or AtomicETH, payload."""

    def __init__(self, p):
        self.opcode = p[0]
        self.psn = int.from_bytes(p[9:12], 'big')
        self.va = self.rkey = self.length = None
        if self.opcode == RC_READ_REQUEST and len(p) >= 28:
            self.va = int.from_bytes(p[12:20], 'big')
            self.rkey = int.from_bytes(p[20:24], 'big')
            self.length = int.from_bytes(p[24:28], 'big')

    def __repr__(self):
        s = 'op %#x psn %#x' % (self.opcode, self.psn)
        if self.va is not None:
            s += ' va %#x len %d' % (self.va, self.length)
        return s


class Requester:
    """eroce_wirereq: its QP, driven line by line."""

    def __init__(self, path, dev, gid):
        self.p = subprocess.Popen([path, '-d', dev, '-g', str(gid)],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True,
                                  bufsize=1)
        words = self.p.stdout.readline().split()
        if len(words) != 3 or words[0] != 'ready':
            raise RuntimeError('eroce_wirereq did not start')
        self.qpn, self.gid = int(words[1]), words[2]

    def cmd(self, line):
        self.p.stdin.write(line + '\n')
        self.p.stdin.flush()
        out = self.p.stdout.readline().strip()
        if not out:
            raise RuntimeError('eroce_wirereq died on "%s"' % line)
        return out

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


class Peer:
    """The responder's side of one QP: requests in, forged packets out."""

    def __init__(self, a, req):
        self.a, self.req, self.msn = a, req, 0
        self.wire = Wire(a.iface, a.src_mac, a.dst_mac, a.dst_ip)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((a.ip, ROCE_PORT))
        self.seen = []

    def close(self):
        self.sock.close()

    def requests(self, secs):
        """Every request that arrives within @secs."""
        got = []
        end = time.monotonic() + secs
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            self.sock.settimeout(left)
            try:
                p = self.sock.recv(65536)
            except socket.timeout:
                break
            if len(p) >= 16:
                got.append(Request(p))
        self.seen += got
        return got

    def expect(self, opcodes, secs=10):
        """The next requests, until one of each of @opcodes came."""
        got = []
        end = time.monotonic() + secs
        want = list(opcodes)
        while want and time.monotonic() < end:
            for r in self.requests(0.2):
                got.append(r)
                if r.opcode in want:
                    want.remove(r.opcode)
        return got if not want else None

    def send(self, opcode, psn, ext=b'', payload=b''):
        pad = -len(payload) % 4
        l4 = (bth(opcode, self.req.qpn, psn & PSN_MASK, pad=pad, ackreq=0) +
              ext + payload + b'\0' * pad)
        self.wire.send(self.wire.frame(l4, self.a.ip))

    def aeth(self, syndrome):
        self.msn = (self.msn + 1) & PSN_MASK
        return aeth(syndrome, self.msn)

    def ack(self, psn, syndrome=SYN_ACK):
        self.send(RC_ACK, psn, self.aeth(syndrome))

    def read_responses(self, first_psn, data, mtu, only=None):
        """The responses to a READ of @data from @first_psn; @only: the
        indexes of the packets to send (default all)."""
        n = max(1, (len(data) + mtu - 1) // mtu)
        for i in range(n):
            if only is not None and i not in only:
                continue
            chunk = data[i * mtu:(i + 1) * mtu]
            if n == 1:
                op, ext = RC_READ_RESPONSE_ONLY, self.aeth(SYN_ACK)
            elif i == 0:
                op, ext = RC_READ_RESPONSE_FIRST, self.aeth(SYN_ACK)
            elif i == n - 1:
                op, ext = RC_READ_RESPONSE_LAST, self.aeth(SYN_ACK)
            else:
                op, ext = RC_READ_RESPONSE_MIDDLE, b''
            self.send(op, first_psn + i, ext, chunk)

    def atomic_ack(self, psn, orig):
        self.send(RC_ATOMIC_ACK, psn, self.aeth(SYN_ACK) +
                  orig.to_bytes(8, 'big'))


def unexpected(dev):
    return counters(dev).get('rx_drop_unexpected_response', 0)


def wait_counter(dev, above, secs=10):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if unexpected(dev) > above:
            return True
        time.sleep(0.05)
    return False


def connect(req, psn, mtu):
    """RTS towards PEER_QPN; the QP timeout (2.1 s) leaves the script
    time to finish a step before the retransmit timer steps in."""
    gid = '00000000000000000000ffff' + socket.inet_aton(ARGS.ip).hex()
    return req.cmd('connect %d %s %d %d %d' %
                   (PEER_QPN, gid, psn, mtu, QP_TIMEOUT)) == 'ok'


def post(req, *entries):
    """@entries in one post (one doorbell)."""
    return all(req.cmd(e) == 'ok' for e in entries + ('post',))


def completions(req, n, secs):
    """The next @n completions (fewer if @secs pass first)."""
    got = []
    end = time.monotonic() + secs
    while len(got) < n and time.monotonic() < end:
        line = req.cmd('poll 0.2')
        if line != 'none':
            got.append(line.split()[1:3])
    return got


def read_after_stale_nak(k, req, peer):
    mtu, psn, length, seed = 1024, 0x100, 4096, 11
    data = pattern(length, seed)
    ok = (connect(req, psn, mtu) and
          post(req, 'send 1 64 7',
               'read 2 8192 %d %x %x' % (length, VA, RKEY)))
    first = peer.expect([RC_SEND_ONLY, RC_READ_REQUEST])
    k.result('stale_nak_requests_sent', ok and first is not None,
             'sent %s' % first)
    if not ok or first is None:
        return
    # the SEND "lost": a sequence NAK names it, both come again
    peer.ack(psn, SYN_NAK_SEQ)
    again = peer.expect([RC_SEND_ONLY, RC_READ_REQUEST])
    k.result('stale_nak_go_back', again is not None, 'sent %s' % again)
    # the READ's third response alone (the first two lost), which
    # acknowledges the SEND; then the first NAK again, late
    before = unexpected(ARGS.dev)
    peer.read_responses(psn + 1, data, mtu, only=[2])
    peer.ack(psn, SYN_NAK_SEQ)
    k.result('stale_nak_dropped', wait_counter(ARGS.dev, before),
             'rx_drop_unexpected_response did not move')
    # answer every READ request as a responder would, from its PSN and
    # address, until both complete
    bad = []
    wcs = []
    end = time.monotonic() + 30
    while len(wcs) < 2 and time.monotonic() < end:
        for r in peer.requests(0.2):
            if r.opcode != RC_READ_REQUEST:
                continue
            off = r.va - VA
            if (r.psn - (psn + 1)) & PSN_MASK != off // mtu or \
               off % mtu or off + r.length != length:
                bad.append(r)
                continue
            peer.read_responses(r.psn, data[off:], mtu)
        wcs += completions(req, 2 - len(wcs), 0.2)
    k.result('read_requests_consistent', not bad,
             'READ requests whose PSN and address disagree: %s' % bad)
    k.result('send_and_read_complete',
             wcs == [['1', 'success'], ['2', 'success']],
             'completions %s' % wcs)
    k.result('read_data_intact',
             req.cmd('check 8192 %d %d' % (length, seed)) == 'ok',
             'the READ landed wrong bytes')


def ghost_read_response(k, req, peer):
    psn = 0xfffff0
    ok = connect(req, psn, 1024) and post(req, 'send 1 64 3')
    ok = ok and peer.expect([RC_SEND_ONLY]) is not None
    k.result('ghost_read_send_sent', ok, 'no SEND on the wire')
    if not ok:
        return
    before = unexpected(ARGS.dev)
    peer.read_responses(psn + 0x1000, b'\x55' * 8, 1024)
    dropped = wait_counter(ARGS.dev, before)
    early = completions(req, 1, 1.0)
    k.result('ghost_read_response_acks_nothing', dropped and not early,
             'dropped %s, completions before the ACK %s' % (dropped, early))
    peer.ack(psn)
    wcs = completions(req, 1, 10)
    k.result('ghost_read_send_completes', wcs == [['1', 'success']],
             'completions after the ACK %s' % wcs)


def ghost_atomic_ack(k, req, peer):
    psn = 0x7ffff0
    ok = (connect(req, psn, 1024) and
          post(req, 'send 1 64 4', 'fadd 2 8192 %x %x 5' % (VA, RKEY)))
    ok = ok and peer.expect([RC_SEND_ONLY, RC_FETCH_ADD]) is not None
    k.result('ghost_atomic_requests_sent', ok, 'no SEND and atomic')
    if not ok:
        return
    before = unexpected(ARGS.dev)
    peer.atomic_ack(psn + 0x1000, 0x1111)
    dropped = wait_counter(ARGS.dev, before)
    early = completions(req, 1, 1.0)
    k.result('ghost_atomic_ack_acks_nothing', dropped and not early,
             'dropped %s, completions before the atomic ACK %s' %
             (dropped, early))
    peer.atomic_ack(psn + 1, 0x1111)
    wcs = completions(req, 2, 10)
    k.result('ghost_atomic_both_complete',
             wcs == [['1', 'success'], ['2', 'success']] and
             req.cmd('u64 8192') == str(0x1111),
             'completions after the atomic ACK %s' % wcs)


def read_too_long(k, req, peer):
    ok = (connect(req, 0x10, 256) and
          post(req, 'read 1 0 %d %x %x' % (1 << 31, VA, RKEY)))
    wcs = completions(req, 1, 10)
    reads = [r for r in peer.requests(0.5) if r.opcode == RC_READ_REQUEST]
    k.result('read_too_long_refused',
             ok and wcs == [['1', 'local_length_error']] and not reads,
             'completions %s, READ requests on the wire %s' % (wcs, reads))


SCENARIOS = [read_after_stale_nak, ghost_read_response, ghost_atomic_ack,
             read_too_long]
RESULTS = 13


def main():
    global ARGS, SEEN
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--iface', default='veth2')
    ap.add_argument('--ip', default='198.18.0.2')
    ap.add_argument('--dst-ip', default='198.18.0.1')
    ap.add_argument('--dst-mac', required=True)
    ap.add_argument('--dev', default='eroce1')
    ap.add_argument('--gid', type=int, default=1)
    ap.add_argument('--tool', default=os.path.join(os.path.dirname(
        os.path.abspath(__file__)), 'eroce_wirereq'))
    ARGS = ap.parse_args()
    with open('/sys/class/net/%s/address' % ARGS.iface) as f:
        ARGS.src_mac = f.read().strip()
    k = Ktap(RESULTS)
    for scenario in SCENARIOS:
        req = Requester(ARGS.tool, ARGS.dev, ARGS.gid)
        peer = Peer(ARGS, req)
        try:
            scenario(k, req, peer)
        finally:
            SEEN += len(peer.seen)
            peer.close()
            req.close()
    k.diag('%d request packets seen' % SEEN)
    return 1 if k.fail or k.n != RESULTS else 0


ARGS = None
SEEN = 0

if __name__ == '__main__':
    sys.exit(main())
