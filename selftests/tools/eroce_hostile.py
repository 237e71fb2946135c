#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""eroce_hostile.py: forged RoCEv2 packets against live eroce QPs.

Run in the namespace of the sending interface (ns1/veth1).  It starts
selftests/tools/eroce_victim (live RC QP pairs eroce1 <-> eroce2 and a UD
QP on eroce2), then sends malformed packets built with scapy from an
AF_PACKET socket on --iface at the victim device (--dev) and checks, per
packet kind, that the right `rdma statistic` counter of the victim device
moved, that the victim connection still works (or, for access violations
that legitimately kill the QP, that the victim QP is in error with an error
completion and a new connection works).  Prints KTAP.

  --flood SECS   instead: send only packets that must be dropped before
                 any QP processing, at random QPNs, for SECS seconds
                 (live traffic elsewhere must not notice)
  --selftest     check the ICRC code against scapy.contrib.roce and exit
"""
import argparse
import errno
import os
import random
import re
import struct
import subprocess
import sys
import time

from scapy.all import Ether, IP, UDP, Raw, raw, conf  # noqa: E402
from scapy.contrib.roce import BTH  # noqa: E402

# the ICRC of an IPv4 RoCEv2 packet, l3 = IP header .. payload (no ICRC)
from eroce_pcap_check import icrc4 as icrc  # noqa: E402

conf.verb = 0
ROCE_PORT = 4791

# opcodes (IBTA 9.2)
RC_SEND_LAST = 0x02
RC_SEND_ONLY = 0x04
RC_WRITE_FIRST = 0x06
RC_WRITE_MIDDLE = 0x07
RC_WRITE_ONLY = 0x0a
RC_READ_REQUEST = 0x0c
RC_ACK = 0x11
RC_FETCH_ADD = 0x14
RC_SEND_ONLY_INV = 0x17
UD_SEND_ONLY = 0x64


def bth(opcode, dqpn, psn, pkey=0xffff, pad=0, ackreq=1, se=0):
    return struct.pack('!BBHBBHBBH', opcode, (se << 7) | (pad << 4), pkey, 0,
                       (dqpn >> 16) & 0xff, dqpn & 0xffff, ackreq << 7,
                       (psn >> 16) & 0xff, psn & 0xffff)


def reth(va, rkey, length):
    return struct.pack('!QII', va & (2**64 - 1), rkey & 0xffffffff,
                       length & 0xffffffff)


def atmeth(va, rkey, add):
    return struct.pack('!QIQQ', va & (2**64 - 1), rkey & 0xffffffff,
                       add & (2**64 - 1), 0)


def ieth(rkey):
    return struct.pack('!I', rkey & 0xffffffff)


def deth(qkey, sqp):
    return struct.pack('!II', qkey & 0xffffffff, sqp & 0xffffff)


def aeth(syndrome, msn):
    return struct.pack('!I', (syndrome << 24) | (msn & 0xffffff))


class Wire:
    def __init__(self, iface, src_mac, dst_mac, dst_ip):
        import socket
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.s.bind((iface, 0))
        self.src_mac, self.dst_mac, self.dst_ip = src_mac, dst_mac, dst_ip

    def frame(self, l4, src_ip, good_icrc=True, cut=None, bad_udp_csum=False):
        """l4 = BTH onwards without ICRC; cut = keep only that many UDP
        payload bytes (ICRC computed over what is kept, then appended);
        bad_udp_csum = a UDP checksum, wrong (the ICRC does not cover it)."""
        sport = random.randint(0xc000, 0xffff)
        if cut is not None:
            l4 = l4[:cut]
        pkt = (Ether(src=self.src_mac, dst=self.dst_mac) /
               IP(src=src_ip, dst=self.dst_ip, ttl=64, flags='DF') /
               UDP(sport=sport, dport=ROCE_PORT, chksum=0) /
               Raw(l4 + b'\0\0\0\0'))
        b = bytearray(raw(pkt))
        crc = icrc(bytes(b[14:-4]))
        if not good_icrc:
            crc = bytes(x ^ 0x5a for x in crc)
        b[-4:] = crc
        if bad_udp_csum:    # the right one, changed; never 0 (none)
            ip = IP(bytes(b[14:]))
            del ip[UDP].chksum
            csum = IP(raw(ip))[UDP].chksum
            b[40:42] = struct.pack('!H', csum ^ 0x5a5a or 0x1234)
        return bytes(b)

    def send(self, frame, count=1):
        for _ in range(count):
            self.s.send(frame)


def segment_send(dst_ip, l4, n):
    """n copies of l4 with a bad ICRC in one UDP_SEGMENT send to dst_ip."""
    import socket
    udp_segment = 103   # linux/udp.h
    pkt = l4 + b'\xde\xad\xbe\xef'
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_UDP, udp_segment, len(pkt))
    s.sendto(pkt * n, (dst_ip, ROCE_PORT))
    s.close()


def selftest():
    p = (IP(src='198.18.0.1', dst='198.18.0.2', ttl=64) /
         UDP(sport=50000, dport=ROCE_PORT, chksum=0) /
         BTH(opcode=RC_SEND_ONLY, dqpn=0x123, psn=0x456, ackreq=1) /
         Raw(b'x' * 16))
    b = raw(p)
    mine = icrc(b[:-4])
    ok = mine == b[-4:]
    print('icrc selftest:', 'ok' if ok else
          'MISMATCH mine %s scapy %s' % (mine.hex(), b[-4:].hex()))
    return 0 if ok else 1


def counters(dev):
    out = subprocess.run(['rdma', 'statistic', 'show', 'link', dev + '/1'],
                         capture_output=True, text=True).stdout.split()
    c = {}
    for i in range(len(out) - 1):
        if out[i + 1].isdigit() and re.match(r'^[a-z_]+$', out[i]):
            c[out[i]] = int(out[i + 1])
    return c


def udp_csum_errors(ns):
    """The UDP InCsumErrors of network namespace ns (/proc/net/snmp)."""
    out = subprocess.run(['ip', 'netns', 'exec', ns, 'cat', '/proc/net/snmp'],
                         capture_output=True, text=True).stdout
    rows = [l.split() for l in out.splitlines() if l.startswith('Udp:')]
    if len(rows) < 2 or 'InCsumErrors' not in rows[0]:
        return None
    return int(rows[1][rows[0].index('InCsumErrors')])


def delta(before, after):
    return {k: after.get(k, 0) - before.get(k, 0)
            for k in after if after.get(k, 0) != before.get(k, 0)}


class Victim:
    def __init__(self, path, gidx):
        self.p = subprocess.Popen([path, '-a', 'eroce1', '-b', 'eroce2',
                                   '-g', str(gidx)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1)
        line = self.p.stdout.readline().strip()
        if line != 'ready':
            raise RuntimeError('eroce_victim: ' + line)

    def cmd(self, c):
        self.p.stdin.write(c + '\n')
        self.p.stdin.flush()
        line = self.p.stdout.readline().strip()
        if not line:
            raise RuntimeError('eroce_victim died on "%s"' % c)
        return line

    def quit(self):
        try:
            self.p.stdin.write('quit\n')
            self.p.stdin.close()
        except OSError:
            pass
        self.p.wait(timeout=10)

    @staticmethod
    def kv(line):
        return {k: int(v) if v.isdigit() else v
                for k, v in re.findall(r'(\w+)=(\S+)', line)}

    def pair(self, mtu=None):
        line = self.cmd('pair' if mtu is None else 'pair %d' % mtu)
        if not line.startswith('pair '):
            raise RuntimeError(line)
        d = self.kv(line)
        d['id'] = int(line.split()[1])
        return d

    def ping(self, p):
        line = self.cmd('ping %d' % p['id'])
        if line.startswith('ok '):
            p.update(self.kv(line))
            return True, line
        return False, line


class Ktap:
    def __init__(self, n):
        self.n = 0
        self.fail = 0
        print('KTAP version 1')
        print('1..%d' % n)
        sys.stdout.flush()

    def diag(self, s):
        for line in str(s).splitlines():
            print('# ' + line)

    def result(self, name, ok, why=''):
        self.n += 1
        if ok:
            print('ok %d %s' % (self.n, name))
        else:
            self.fail += 1
            print('not ok %d %s # %s' % (self.n, name, why))
        sys.stdout.flush()


def settle():
    time.sleep(0.3)


class Sniffer:
    """The RoCEv2 packets src_ip sends to QPN qpn, as iface sees them:
    (opcode, PSN, AETH syndrome or None), in order of arrival."""

    def __init__(self, iface, src_ip, qpn):
        import socket
        import threading
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                               socket.htons(0x0003))
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.s.bind((iface, 0))
        self.s.settimeout(0.2)
        self.src = socket.inet_aton(src_ip)
        self.qpn = qpn
        self.seen = []
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        import socket
        while not self.stop:
            try:
                f = self.s.recv(65536)
            except socket.timeout:
                continue
            # Ethernet, IPv4 without options, UDP to 4791, BTH
            if (len(f) < 14 + 20 + 8 + 12 or f[12:14] != b'\x08\x00' or
                    f[23] != 17 or f[26:30] != self.src or
                    struct.unpack('!H', f[36:38])[0] != ROCE_PORT):
                continue
            b = f[42:]
            if struct.unpack('!I', b[4:8])[0] & 0xffffff != self.qpn:
                continue
            opcode = b[0]
            psn = struct.unpack('!I', b[8:12])[0] & 0xffffff
            # AETH: ACK, READ RESPONSE FIRST, LAST and ONLY
            syn = b[12] if opcode in (0x0d, 0x0f, 0x10, RC_ACK) else None
            self.seen.append((opcode, psn, syn))

    def close(self):
        self.stop = True
        self.t.join()
        self.s.close()


def rnr_nak_behind_full_queue(k, v, w, peer, dev, iface, dst_ip):
    """An RNR NAK owed while the responder's queue of owed responses is
    full must still go out, behind the read responses before it.

    The victim QP (max_dest_rd_atomic 4: 2 * (16 + 4) rounded up, 64
    owed responses) is paced to 100 kb/s, so that the first READ, of
    64 KiB, holds the queue for seconds.  Its 16 receives are taken by
    SENDs first.  Then 32 times a READ and a WRITE with AckReq (a READ
    response and an ACK queued behind it: 64 entries, full), then a SEND,
    which finds no receive: its RNR NAK must leave after the last READ's
    response, acks_folded +1 (folded into the ACK queued last),
    rnr_naks_sent +1."""
    nrecv, entries, big = 16, 64, 65536
    q = v.pair()
    ok, line = v.ping(q)
    if not ok:
        for n in ('rnr_nak_queue_full_folded', 'rnr_nak_behind_reads'):
            k.result(n, False, 'fresh pair does not work: ' + line)
        return
    psn = q['b_epsn']

    def at(opcode, ackreq=1):
        return bth(opcode, q['b_qpn'], psn, ackreq=ackreq)

    pl = b'\x66' * 64
    for _ in range(nrecv):
        w.send(w.frame(at(RC_SEND_ONLY) + pl, peer))
        psn = (psn + 1) & 0xffffff
    settle()
    line = v.cmd('rate %d 100' % q['id'])
    frames, last_read = [], None
    for i in range(entries // 2):
        length = big if i == 0 else 1024
        last_read = psn
        frames.append(w.frame(at(RC_READ_REQUEST, ackreq=0) +
                              reth(q['b_va'], q['b_rkey'], length), peer))
        psn = (psn + length // 1024) & 0xffffff
        frames.append(w.frame(at(RC_WRITE_ONLY) + reth(q['b_va'], q['b_rkey'], 64) +
                              pl, peer))
        psn = (psn + 1) & 0xffffff
    send_psn = psn
    frames.append(w.frame(at(RC_SEND_ONLY) + pl, peer))
    sn = Sniffer(iface, dst_ip, q['a_qpn'])
    b = counters(dev)
    t0 = time.monotonic()
    for f in frames:
        w.send(f)
    sent_s = time.monotonic() - t0
    # the queue takes ~8 s at 100 kb/s: bounded by the last READ's
    # response, then 5 s for what follows it
    last_seen = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if any(x[1] == send_psn and x[2] is not None and x[2] & 0x60 == 0x20
               for x in sn.seen):
            break
        if last_seen is None and any(x[1] == last_read and x[0] == 0x10
                                     for x in sn.seen):
            last_seen = time.monotonic()
        if last_seen is not None and time.monotonic() > last_seen + 5:
            break
        time.sleep(0.1)
    sn.close()
    d = delta(b, counters(dev))
    seen = sn.seen
    idx_rnr = [i for i, x in enumerate(seen) if x[1] == send_psn and
               x[2] is not None and x[2] & 0x60 == 0x20]
    idx_last = [i for i, x in enumerate(seen) if x[1] == last_read and x[0] == 0x10]
    k.diag('rnr_nak_behind_full_queue: rate: %s; %d frames sent in %.2f s; '
           '%d responses seen, last READ response at %s, RNR NAK at %s; '
           'tail %s; %s' % (line, len(frames), sent_s, len(seen), idx_last,
                            idx_rnr, seen[-3:], d))
    k.result('rnr_nak_queue_full_folded',
             d.get('acks_folded', 0) == 1 and d.get('rnr_naks_sent', 0) == 1,
             'want acks_folded +1 and rnr_naks_sent +1 (delta %s)' % d)
    k.result('rnr_nak_behind_reads',
             len(idx_rnr) == 1 and len(idx_last) == 1 and idx_rnr[0] > idx_last[0],
             'want one RNR NAK at PSN %d after the READ response at PSN %d: '
             'RNR NAK at %s, READ response at %s of %d responses' %
             (send_psn, last_read, idx_rnr, idx_last, len(seen)))


def tuning(dev, name, value=None):
    """Read (and first set) a tunable of dev.  `ip netns exec` mounted
    a sysfs of this namespace, where ib_core's compat device of dev has
    no tuning/: the one pid 1's root sees has."""
    path = '/proc/1/root/sys/class/infiniband/%s/tuning/%s' % (dev, name)
    if value is not None:
        with open(path, 'w') as f:
            f.write(value)
    with open(path) as f:
        return f.read().strip()


def mem_free():
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('MemFree:'):
                return int(line.split()[1]) * 1024
    return 0


class GsoSender:
    """UDP_SEGMENT sends to dst_ip:4791 from a bound, unconnected socket
    with DF: segment i leaves with IP ID i (ip_select_ident_segs() gives
    the first 0) and the socket's port, which each segment's ICRC
    covers."""

    def __init__(self, src_ip, dst_ip, seg_len):
        import socket
        self.s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.s.setsockopt(socket.IPPROTO_IP, 10, 2)     # IP_MTU_DISCOVER, DO
        self.s.setsockopt(socket.SOL_UDP, 103, seg_len)  # UDP_SEGMENT
        self.s.bind((src_ip, 0))
        self.src_ip, self.dst_ip, self.seg_len = src_ip, dst_ip, seg_len
        self.sport = self.s.getsockname()[1]

    def segment(self, idx, l4, good_icrc=True):
        """l4 (BTH onwards, no ICRC) with the ICRC of segment idx."""
        pkt = (IP(src=self.src_ip, dst=self.dst_ip, id=idx, flags='DF', ttl=64) /
               UDP(sport=self.sport, dport=ROCE_PORT, chksum=0) /
               Raw(l4 + b'\0\0\0\0'))
        b = raw(pkt)
        crc = icrc(b[:-4])
        if not good_icrc:
            crc = bytes(x ^ 0x5a for x in crc)
        seg = l4 + crc
        assert len(seg) == self.seg_len
        return seg

    def send(self, segs):
        self.s.sendto(b''.join(segs), (self.dst_ip, ROCE_PORT))

    def close(self):
        self.s.close()


def sr_kept_from_gso(k, v, w, peer, dev, dst_ip):
    """Selective repeat keeps a packet of a local program's UDP_SEGMENT
    send (the UDP stack cuts it into its segments before eroce sees them,
    which may share the send's pages) as a linear copy charged to the
    device's budget for kept packets, with the QP's window.

    eroce2 on loss_recovery sr.  Each send holds NSEG segments: the first
    a WRITE ONLY after the hole at the victim's expected PSN, offering
    selective repeat, the rest the same with a bad ICRC.  One such send
    to a fresh pair: ooo_bytes_kept (the budget's level) must count the
    pair's window of 256 slots (at least 64 bytes each) besides the
    packet.  Then PER_QP sends in all to each of two pairs (a hole each,
    PER_QP - 1 PSNs kept after it): every drop and keep counted exactly
    (rx_drop_icrc, ooo_packets_not_kept +0), then the
    holes are closed: every kept WRITE placed (ooo_packets_placed), the
    level back where it was, and the memory that freed (MemFree) no
    more than the level said was kept, plus 8 MiB of slack.  Kept as
    the whole send, each would pin some 64 KiB charged a 48th of it."""
    nseg, per_qp, slack = 48, 250, 8 << 20
    seg_len = 12 + 16 + 1024 + 4
    names = ('sr_window_charged', 'sr_gso_kept_counted',
             'sr_gso_kept_placed', 'sr_kept_memory_charged')
    old_lr = tuning(dev, 'loss_recovery')
    g = GsoSender(peer, dst_ip, seg_len)
    try:
        tuning(dev, 'loss_recovery', 'sr')
        pairs = [v.pair(), v.pair()]
        for q in pairs:
            ok, line = v.ping(q)
            if not ok:
                for n in names:
                    k.result(n, False, 'fresh pair does not work: ' + line)
                return

        def write_l4(q, psn, sr=True):
            h = bytearray(bth(RC_WRITE_ONLY, q['b_qpn'], psn, ackreq=0))
            if sr:
                h[8] |= 0x40    # EROCE_BTH_SR: the requester offers it
            return bytes(h) + reth(q['b_va'], q['b_rkey'], 1024) + b'\x77' * 1024

        def gso(q, n):
            psn = (q['b_epsn'] + 1 + n) & 0xffffff
            l4 = write_l4(q, psn)
            junk = g.segment(1, l4, good_icrc=False)
            g.send([g.segment(0, l4)] + [junk] * (nseg - 1))

        level0 = counters(dev).get('ooo_bytes_kept', 0)
        gso(pairs[0], 0)
        settle()
        level1 = counters(dev).get('ooo_bytes_kept', 0)
        k.diag('sr_kept_from_gso: one kept packet: ooo_bytes_kept %d -> %d'
               % (level0, level1))
        k.result('sr_window_charged', level1 - level0 >= 256 * 64,
                 'ooo_bytes_kept +%d with one packet kept, want at least '
                 '%d for the window' % (level1 - level0, 256 * 64))

        b = counters(dev)
        for n in range(1, per_qp):
            gso(pairs[0], n)
        for n in range(per_qp):
            gso(pairs[1], n)
        settle()
        d = delta(b, counters(dev))
        level2 = counters(dev).get('ooo_bytes_kept', 0)
        sends = 2 * per_qp - 1
        k.diag('sr_kept_from_gso: %d sends of %d segments: %s; ooo_bytes_kept %d'
               % (sends, nseg, d, level2))
        k.result('sr_gso_kept_counted',
                 d.get('rx_drop_icrc', 0) == sends * (nseg - 1) and
                 not d.get('ooo_packets_not_kept', 0) and
                 not d.get('ooo_packets_not_kept_nomem', 0) and
                 level2 > level1,
                 'want rx_drop_icrc +%d, nothing not kept, '
                 'the level up (delta %s, level %d -> %d)' %
                 (sends * (nseg - 1), d, level1, level2))

        # close the holes: each pair's PER_QP kept WRITEs are placed
        b = counters(dev)
        free0 = mem_free()
        for q in pairs:
            w.send(w.frame(write_l4(q, q['b_epsn'], sr=False), peer))
        settle()
        d = delta(b, counters(dev))
        level3 = counters(dev).get('ooo_bytes_kept', 0)
        freed = mem_free() - free0
        k.diag('sr_kept_from_gso: holes closed: %s; ooo_bytes_kept %d; '
               'MemFree +%d' % (d, level3, freed))
        k.result('sr_gso_kept_placed',
                 d.get('ooo_packets_placed', 0) == 2 * per_qp and
                 level3 == level0,
                 'want ooo_packets_placed +%d and ooo_bytes_kept back at %d '
                 '(delta %s, level %d)' % (2 * per_qp, level0, d, level3))
        k.result('sr_kept_memory_charged', freed <= level2 - level0 + slack,
                 'placing the kept packets freed %d bytes, %d were charged '
                 '(slack %d)' % (freed, level2 - level0, slack))
    finally:
        tuning(dev, 'loss_recovery', old_lr)
        g.close()


def run_barrage(a):
    w = Wire(a.iface, a.src_mac, a.dst_mac, a.dst_ip)
    v = Victim(a.victim, a.gid)
    peer, other = a.src_ip, a.spoof_ip
    dev = a.dev

    p = v.pair()
    ud = v.kv(v.cmd('ud'))
    ok, line = v.ping(p)
    if not ok:
        print('Bail out! victim pair does not work: ' + line)
        return 1

    def rc(opcode, psn=None, **kw):
        return bth(opcode, p['b_qpn'], p['b_epsn'] if psn is None else psn, **kw)

    send_pl = b'\x11' * 64
    # name, frame, counters any of which must move (by >= 1), peer address
    cases = [
        ('bad_icrc', w.frame(rc(RC_SEND_ONLY) + send_pl, peer, good_icrc=False),
         ['rx_drop_icrc']),
        ('bad_opcode_0x1f', w.frame(rc(0x1f) + send_pl, peer),
         ['rx_drop_bad_opcode']),
        ('bad_opcode_0xff', w.frame(rc(0xff) + send_pl, peer),
         ['rx_drop_bad_opcode']),
        ('truncated_bth', w.frame(rc(RC_SEND_ONLY), peer, cut=7),
         ['rx_drop_truncated', 'rx_drop_bad_header']),
        ('truncated_reth', w.frame(rc(RC_WRITE_ONLY) + reth(p['b_va'], p['b_rkey'], 64),
                                   peer, cut=12 + 8),
         ['rx_drop_truncated', 'rx_drop_bad_header']),
        ('pad_beyond_payload', w.frame(rc(RC_SEND_ONLY, pad=3), peer),
         ['rx_drop_truncated', 'rx_drop_bad_header']),
        ('payload_not_4_aligned', w.frame(rc(RC_SEND_ONLY) + b'\x22' * 5, peer),
         ['rx_drop_truncated', 'rx_drop_bad_header']),
        ('no_such_qp', w.frame(bth(RC_SEND_ONLY, 0xfedcb, 0) + send_pl, peer),
         ['rx_drop_no_qp']),
        ('bad_pkey', w.frame(rc(RC_SEND_ONLY, pkey=0x1234) + send_pl, peer),
         ['rx_drop_bad_pkey']),
        ('wrong_source', w.frame(rc(RC_SEND_ONLY) + send_pl, other),
         ['rx_drop_wrong_source']),
        ('ud_opcode_to_rc_qp', w.frame(rc(UD_SEND_ONLY) + deth(0, 1) + send_pl, peer),
         ['rx_drop_wrong_qp_type']),
        ('psn_far_ahead', w.frame(rc(RC_SEND_ONLY, psn=(p['b_epsn'] + 0x400000) & 0xffffff)
                                  + send_pl, peer),
         ['seq_err_naks_sent']),
        ('psn_far_behind', w.frame(rc(RC_SEND_ONLY, psn=(p['b_epsn'] - 0x400000) & 0xffffff)
                                   + send_pl, peer),
         ['duplicate_requests']),
        ('ack_never_sent', w.frame(bth(RC_ACK, p['b_qpn'], (p['b_sq_psn'] + 0x1000) & 0xffffff,
                                       ackreq=0) + aeth(0x1f, 0), peer),
         ['rx_drop_unexpected_response']),
        ('ud_bad_qkey', w.frame(bth(UD_SEND_ONLY, ud['qpn'], 0) + deth(0x22222222, 7) +
                                send_pl, peer),
         ['rx_drop_bad_qkey']),
    ]
    # Requests the victim QP must fail (Documentation/design.rst, "How a
    # request fails"): the NAK counter that must move by exactly one (no
    # other fatal NAK counter may move), and for a request that fails
    # a receive WQE the status the victim's first error completion must
    # carry (None: any, the flush of the receive queue).  The victim's MR
    # has local write, remote write and read; its QP remote write and
    # read (no atomics); its receive buffers are 64 bytes.
    fatal_naks = ['remote_access_naks_sent', 'invalid_request_naks_sent']
    fatal_naks += ['remote_op_naks_sent', 'rnr_naks_sent']
    acc, inv = fatal_naks[:2]
    # a SEND with Invalidate that fails is counted twice
    inv_key = ['invalid_request_naks_sent', 'remote_invalidate_errors']
    # name, request, the pair's path MTU (None: 1024), counter (or list of
    # counters) that must move by one, status
    fatal_cases = [
        ('write_rkey_other_pd',
         lambda q: rcq(q, RC_WRITE_ONLY) + reth(q['b_va'], q['other_rkey'], 64) + send_pl,
         None, acc, None),
        ('write_random_rkey',
         lambda q: rcq(q, RC_WRITE_ONLY) + reth(q['b_va'], bad_rkey(q), 64) + send_pl,
         None, acc, None),
        ('write_va_past_mr',
         lambda q: rcq(q, RC_WRITE_ONLY) + reth(q['b_va'] + q['b_len'], q['b_rkey'], 64) + send_pl,
         None, acc, None),
        ('write_len_past_mr',
         lambda q: rcq(q, RC_WRITE_ONLY) + reth(q['b_va'] + q['b_len'] - 32, q['b_rkey'], 64) + send_pl,
         None, acc, None),
        # an RDMA length over 2^31 is an invalid request (IBA 11.6.2)
        ('write_len_overflow',
         lambda q: rcq(q, RC_WRITE_FIRST) + reth(2**64 - 16, q['b_rkey'], 0xffffffff) + b'\x33' * 1024,
         None, inv, None),
        ('write_len_over_2g',
         lambda q: rcq(q, RC_WRITE_FIRST) + reth(q['b_va'], q['b_rkey'], 2**31 + 1024) + b'\x33' * 1024,
         None, inv, None),
        ('read_len_overflow',
         lambda q: rcq(q, RC_READ_REQUEST) + reth(2**64 - 16, q['b_rkey'], 0xffffffff),
         None, inv, None),
        ('read_rkey_other_pd',
         lambda q: rcq(q, RC_READ_REQUEST) + reth(q['b_va'], q['other_rkey'], 64),
         None, acc, None),
        ('read_random_rkey',
         lambda q: rcq(q, RC_READ_REQUEST) + reth(q['b_va'], bad_rkey(q), 64),
         None, acc, None),
        ('read_va_past_mr',
         lambda q: rcq(q, RC_READ_REQUEST) + reth(q['b_va'] + q['b_len'] - 32, q['b_rkey'], 64),
         None, acc, None),
        # 2 GiB at MTU 256: 2^23 responses, half the PSN space, where the
        # 24-bit PSN comparisons fail; refused before any key is looked at
        ('read_half_psn_space',
         lambda q: rcq(q, RC_READ_REQUEST) + reth(q['b_va'], q['b_rkey'], 2**31),
         256, inv, None),
        # a packet that ends a message carries at most the path MTU, as
        # rdma_rxe checks too: 512 bytes at MTU 256
        ('send_only_over_mtu',
         lambda q: rcq(q, RC_SEND_ONLY) + b'\x44' * 512,
         256, inv, None),
        ('write_only_over_mtu',
         lambda q: rcq(q, RC_WRITE_ONLY) + reth(q['b_va'], q['b_rkey'], 512) + b'\x44' * 512,
         256, inv, None),
        # more (or less) data than the RETH announced
        ('write_only_len_mismatch',
         lambda q: rcq(q, RC_WRITE_ONLY) + reth(q['b_va'], q['b_rkey'], 64) + send_pl * 2,
         None, inv, None),
        # opcode sequence: a middle or last packet with no message begun
        ('write_middle_no_first',
         lambda q: rcq(q, RC_WRITE_MIDDLE) + b'\x55' * 1024,
         None, inv, None),
        ('send_last_no_first',
         lambda q: rcq(q, RC_SEND_LAST) + send_pl,
         None, inv, None),
        # the QP does not enable atomics: an invalid request (IBA 11.6.2,
        # "operation not supported by this receive queue"), as rdma_rxe
        ('atomic_qp_no_right',
         lambda q: rcq(q, RC_FETCH_ADD) + atmeth(q['b_va'], q['b_rkey'], 1),
         None, inv, None),
        ('atomic_misaligned',
         lambda q: rcq(q, RC_FETCH_ADD) + atmeth(q['b_va'] + 4, q['b_rkey'], 1),
         None, inv, None),
        # a SEND larger than the 64-byte receive buffer: an invalid
        # request for the requester, a local length error for the receive
        ('send_longer_than_recv',
         lambda q: rcq(q, RC_SEND_ONLY) + send_pl * 2,
         None, inv, 'local length error'),
        # SEND with Invalidate of a key nothing has, of a user MR (not a
        # fast-registration MR), of another PD's MR: invalid request, the
        # receive completes with a remote invalid request error
        ('send_inv_random_key',
         lambda q: rcq(q, RC_SEND_ONLY_INV) + ieth(bad_rkey(q)) + send_pl,
         None, inv_key, 'remote invalid request error'),
        ('send_inv_user_mr',
         lambda q: rcq(q, RC_SEND_ONLY_INV) + ieth(q['b_rkey']) + send_pl,
         None, inv_key, 'remote invalid request error'),
        ('send_inv_other_pd',
         lambda q: rcq(q, RC_SEND_ONLY_INV) + ieth(q['other_rkey']) + send_pl,
         None, inv_key, 'remote invalid request error'),
    ]
    def rcq(q, opcode):
        return bth(opcode, q['b_qpn'], q['b_epsn'])

    def bad_rkey(q):
        r = random.getrandbits(32)
        while r in (q['b_rkey'], q['other_rkey']):
            r = random.getrandbits(32)
        return r

    k = Ktap(len(cases) + 4 + len(fatal_cases) * 3 + 1 + 2 + 4)
    k.diag('victim: pair %s, ud %s' % (p, ud))
    for name, frame, want in cases:
        b = counters(dev)
        w.send(frame)
        settle()
        d = delta(b, counters(dev))
        moved = [c for c in want if d.get(c, 0) >= 1]
        k.diag('%s: %s' % (name, d))
        k.result(name, bool(moved), 'none of %s moved (delta %s)' % (want, d))

    # a bad UDP checksum: the UDP stack drops it before eroce's
    # encap_rcv and counts it in the victim's namespace
    b = udp_csum_errors(a.victim_ns)
    w.send(w.frame(rc(RC_SEND_ONLY) + send_pl, peer, bad_udp_csum=True))
    settle()
    n = udp_csum_errors(a.victim_ns)
    k.result('bad_udp_checksum', b is not None and n is not None and n > b,
             "%s's UDP InCsumErrors %s -> %s" % (a.victim_ns, b, n))

    # a local UDP_SEGMENT send: one GSO packet of 4 forged ones (bad
    # ICRCs), which the UDP stack cuts up before eroce: each of its
    # packets dropped on its own, nothing dropped as a bad GSO skb
    b = counters(dev)
    segment_send(a.dst_ip, rc(RC_SEND_ONLY) + send_pl, 4)
    settle()
    d = delta(b, counters(dev))
    k.diag('gso_segmented: %s' % d)
    k.result('gso_segmented', d.get('rx_drop_icrc', 0) == 4 and
             not d.get('rx_drop_bad_gso', 0),
             'want rx_drop_icrc +4, rx_drop_bad_gso +0 (delta %s)' % d)

    # nothing so far may have cost the victim its connection
    ok, line = v.ping(p)
    k.result('victim_alive_after_drops', ok, line)
    st = v.cmd('state %d' % p['id'])
    k.result('victim_qps_rts', st.endswith('a=RTS b=RTS'), st)

    for name, make, mtu, want, status in fatal_cases:
        q = v.pair(mtu)
        ok, line = v.ping(q)
        if not ok:
            k.result(name, False, 'fresh pair does not work: ' + line)
            k.result(name + '_victim_error_completion', False, 'not run')
            k.result(name + '_new_connection_works', False, 'not run')
            continue
        b = counters(dev)
        ba = counters('eroce1')
        w.send(w.frame(make(q), peer))
        settle()
        d = delta(b, counters(dev))
        k.diag('%s: %s: eroce2 %s eroce1 %s' % (name, q['id'], d,
                                                delta(ba, counters('eroce1'))))
        wants = [want] if isinstance(want, str) else want
        others = [c for c in fatal_naks if c not in wants and d.get(c, 0)]
        k.result(name, all(d.get(c, 0) == 1 for c in wants) and not others,
                 'want %s +1 and no other NAK (delta %s)' % (' '.join(wants), d))
        wc = v.cmd('wc %d' % q['id'])
        st = v.cmd('state %d' % q['id'])
        k.diag('%s: %s; %s' % (name, wc, st))
        errs = v.kv(wc).get('errors', 0)
        first = wc.split('first=', 1)[-1]
        k.result(name + '_victim_error_completion',
                 st.endswith('b=ERR') and isinstance(errs, int) and errs >= 1 and
                 (status is None or first == status),
                 'victim QP not in error with an error completion%s: %s; %s' %
                 ('' if status is None else ' (' + status + ')', wc, st))
        n = v.pair()
        ok, line = v.ping(n)
        k.result(name + '_new_connection_works', ok, line)

    rnr_nak_behind_full_queue(k, v, w, peer, dev, a.iface, a.dst_ip)
    sr_kept_from_gso(k, v, w, peer, dev, a.dst_ip)

    ok, line = v.ping(p)
    k.result('first_victim_still_alive', ok, line)
    v.quit()
    return 1 if k.fail else 0


def run_flood(a):
    """Packets that must die before any QP processing, at random QPNs."""
    w = Wire(a.iface, a.src_mac, a.dst_mac, a.dst_ip)
    peer, other = a.src_ip, a.spoof_ip
    pl = b'\x44' * 64
    # scapy is slow under TCG: build a pool first, then send from it
    pool = []
    for _ in range(a.flood_pool):
        qpn = random.randint(0, 64)
        psn = random.getrandbits(24)
        kind = random.randrange(9)
        pool.append([
            lambda: w.frame(bth(RC_SEND_ONLY, qpn, psn) + pl, peer, good_icrc=False),
            lambda: w.frame(bth(RC_WRITE_ONLY, qpn, psn) + reth(0, 0, 64) + pl, peer,
                            good_icrc=False),
            lambda: w.frame(bth(random.choice([0x1f, 0x7f, 0xff]), qpn, psn) + pl, peer),
            lambda: w.frame(bth(RC_SEND_ONLY, qpn, psn), peer, cut=random.randint(0, 11)),
            lambda: w.frame(bth(RC_WRITE_ONLY, qpn, psn) + b'\0' * 8, peer),
            lambda: w.frame(bth(RC_SEND_ONLY, qpn, psn, pad=3), peer),
            lambda: w.frame(bth(RC_SEND_ONLY, qpn, psn, pkey=0x7123) + pl, peer),
            lambda: w.frame(bth(RC_WRITE_ONLY, qpn, psn) + reth(0, 0, 64) + pl, other),
            lambda: w.frame(bth(RC_ACK, qpn, psn) + aeth(0, 0), other),
        ][kind]())
    end = time.time() + a.flood
    n = full = 0
    while time.time() < end:
        try:
            w.send(random.choice(pool))
        except OSError as e:
            # the veth's queue is full (a slow guest): a flooder waits
            if e.errno != errno.ENOBUFS:
                raise
            full += 1
            time.sleep(0.01)
            continue
        n += 1
        if n % 20 == 0:
            time.sleep(0.002)
    print('flood: sent %d packets (%d sends waited for a full queue)' % (n, full))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--iface', default='veth1')
    ap.add_argument('--src-mac')
    ap.add_argument('--dst-mac')
    ap.add_argument('--src-ip', default='198.18.0.1')
    ap.add_argument('--spoof-ip', default='198.18.0.9')
    ap.add_argument('--dst-ip', default='198.18.0.2')
    ap.add_argument('--dev', default='eroce2')
    ap.add_argument('--victim-ns', default='eroce-ns2',
                    help="the network namespace of --dev's netdev")
    ap.add_argument('--gid', type=int, default=1)
    ap.add_argument('--victim', default=os.path.join(os.path.dirname(
        os.path.abspath(__file__)), 'eroce_victim'))
    ap.add_argument('--flood', type=float, default=0)
    ap.add_argument('--flood-pool', type=int, default=150)
    ap.add_argument('--selftest', action='store_true')
    a = ap.parse_args()
    if a.selftest:
        return selftest()
    if not a.src_mac:
        with open('/sys/class/net/%s/address' % a.iface) as f:
            a.src_mac = f.read().strip()
    if not a.dst_mac:
        ap.error('--dst-mac is required')
    if a.flood:
        return run_flood(a)
    return run_barrage(a)


if __name__ == '__main__':
    sys.exit(main())
