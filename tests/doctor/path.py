#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""path.py: eroce-path (config/eroce-path), the path checks of eroce
doctor, without a VM.

- the wire: probes against the ICRC of selftests/tools/eroce_pcap_check.py
  (which checks eroce's own packets), their IP and UDP checksums, frames
  parsed untagged, tagged in the frame or by the NIC, a batch of eroce's
  GRO, truncated and random bytes;
- the verdicts: a listener's report of a clean path, and of each fault,
  names that fault in its check and none other;
- the listener's control connection: what it refuses;
- as root, two network namespaces joined by a veth (created and deleted
  here): a clean path, a smaller MTU on the far end, no listener, a
  listener that refuses another address.

Prints "ok N name" / "not ok N name # why" / "ok N name # SKIP why" per
test and "N passed, N failed, N skipped" last; exits 1 on a failure.
"""

import importlib.machinery
import importlib.util
import os
import random
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib

sys.dont_write_bytecode = True
ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..'))
TOOL = os.path.join(ROOT, 'config', 'eroce-path')


def load(name, path):
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


P = load('eroce_path', TOOL)
PCAP = load('eroce_pcap_check',
            os.path.join(ROOT, 'selftests', 'tools', 'eroce_pcap_check.py'))

N = PASS = FAIL = SKIP = 0


def result(name, ok, why=''):
    global N, PASS, FAIL
    N += 1
    if ok:
        PASS += 1
        print('ok %d %s' % (N, name))
    else:
        FAIL += 1
        print('not ok %d %s # %s' % (N, name, why))


def skip(name, why):
    global N, SKIP
    N += 1
    SKIP += 1
    print('ok %d %s # SKIP %s' % (N, name, why))


def check(name, fn):
    try:
        why = fn()
    except Exception as e:  # a test that raises fails, and says why
        why = '%s: %s' % (type(e).__name__, e)
    result(name, not why, why or '')


A4, B4 = bytes([198, 18, 50, 1]), bytes([198, 18, 50, 2])
A6 = bytes.fromhex('20010db8005000000000000000000001')
B6 = bytes.fromhex('20010db8005000000000000000000002')
MAC_A, MAC_B = bytes.fromhex('020000000001'), bytes.fromhex('020000000002')


def pkt(seq=0, src=A4, dst=B4, tclass=0x6a, phase='load', payload=64,
        sport=0xc000, flags=0):
    return P.probe_packet(src, dst, tclass, sport, 7, phase, seq, 0, payload,
                          flags, 12345)


def eth(ip, tag=None):
    etype = P.ETH_P_IPV6 if ip[0] >> 4 == 6 else P.ETH_P_IP
    if tag is None:
        return MAC_B + MAC_A + struct.pack('!H', etype) + ip
    return MAC_B + MAC_A + struct.pack('!HHH', P.ETH_P_8021Q, tag, etype) + ip


# ---- the wire ---------------------------------------------------------------------

def t_icrc_v4():
    p = pkt()
    if PCAP.icrc4(p[:-4]) != p[-4:]:
        return 'ICRC differs from eroce_pcap_check.icrc4'


def t_icrc_v6():
    p = pkt(src=A6, dst=B6, payload=1024)
    if PCAP.icrc6(p[:-4]) != p[-4:]:
        return 'ICRC differs from eroce_pcap_check.icrc6'


def t_icrc_covers_payload():
    p = bytearray(pkt())
    p[60] ^= 1
    if PCAP.icrc4(bytes(p[:-4])) == bytes(p[-4:]):
        return 'a changed payload byte kept the ICRC'


def t_checksums_v4():
    p = pkt(payload=256)
    if P.inet_csum(p[:20]) != 0:
        return 'IPv4 header checksum wrong'
    if struct.unpack_from('!H', p, 2)[0] != len(p):
        return 'IPv4 total length wrong'
    udp = p[20:]
    if struct.unpack_from('!H', udp, 4)[0] != len(udp):
        return 'UDP length wrong'
    pseudo = p[12:20] + struct.pack('!BBH', 0, 17, len(udp))
    if P.inet_csum(pseudo + udp) != 0:
        return 'UDP checksum wrong'
    if p[20 + 8] != P.OP_RC_SEND_ONLY or \
       struct.unpack_from('!I', p, 20 + 8 + 4)[0] & 0xffffff != P.PROBE_QPN:
        return 'BTH opcode or QPN wrong'


def t_checksums_v6():
    p = pkt(src=A6, dst=B6)
    udp = p[40:]
    pseudo = p[8:40] + struct.pack('!IxxxB', len(udp), 17)
    if P.inet_csum(pseudo + udp) != 0:
        return 'UDP checksum wrong'
    if (struct.unpack_from('!I', p)[0] >> 20) & 0xff != 0x6a:
        return 'traffic class wrong'


def t_payload_rules():
    for bad in (P.PROBE_HDR.size - 4, 66):
        try:
            pkt(payload=bad)
        except ValueError:
            continue
        return 'payload %d accepted' % bad


def t_parse_untagged():
    r = P.parse_frame(eth(pkt(5, tclass=0x6b)), None, A4)
    if len(r) != 1:
        return '%d records' % len(r)
    r = r[0]
    want = {'seq': 5, 'dscp': 0x6b >> 2, 'ecn': 3, 'pcp': None, 'vid': None,
            'phase': 'load', 'sport': 0xc000, 'run': 7}
    got = {k: r[k] for k in want}
    if got != want:
        return 'got %s' % got


def t_parse_tag_in_frame():
    r = P.parse_frame(eth(pkt(), tag=(5 << 13) | 100), None, A4)
    if len(r) != 1 or r[0]['pcp'] != 5 or r[0]['vid'] != 100:
        return 'got %s' % r


def t_parse_tag_from_nic():
    r = P.parse_frame(eth(pkt()), (3 << 13) | 0, A4)
    if len(r) != 1 or r[0]['pcp'] != 3 or r[0]['vid'] != 0:
        return 'got %s' % r


def t_parse_gro_batch():
    # eroce's GRO: each packet whole, IP header first, after the head;
    # the head's IP and UDP lengths cover the batch
    parts = [pkt(s, payload=256) for s in (1, 2, 3)]
    head = bytearray(parts[0])
    total = sum(len(x) for x in parts)
    head[2:4] = struct.pack('!H', total)
    r = P.parse_frame(eth(bytes(head) + parts[1] + parts[2]), None, A4)
    if [x['seq'] for x in r] != [1, 2, 3]:
        return 'seqs %s' % [x['seq'] for x in r]


def t_parse_gro_batch_vlan():
    # the NIC left the tag in the frame: each chained packet keeps its
    # VLAN header, the kernel took the head's out (it is in auxdata)
    tag = struct.pack('!HH', (3 << 13) | 100, P.ETH_P_IP)
    parts = [pkt(s, payload=512) for s in (4, 5, 6)]
    f = eth(parts[0]) + tag + parts[1] + tag + parts[2]
    r = P.parse_frame(f, (3 << 13) | 100, A4)
    if [(x['seq'], x['pcp'], x['vid']) for x in r] != [(4, 3, 100), (5, 3, 100),
                                                       (6, 3, 100)]:
        return 'got %s' % [(x['seq'], x['pcp'], x['vid']) for x in r]


def t_parse_gro_batch_v6():
    parts = [pkt(s, src=A6, dst=B6) for s in (8, 9)]
    r = P.parse_frame(eth(parts[0] + parts[1]), None, A6)
    if [x['seq'] for x in r] != [8, 9]:
        return 'seqs %s' % [x['seq'] for x in r]


def t_parse_truncated():
    whole = eth(pkt(1) + pkt(2))
    for cut in range(0, len(whole)):
        r = P.parse_frame(whole[:cut], None, A4)
        if len(r) > 2:
            return 'cut %d: %d records' % (cut, len(r))
    if len(P.parse_frame(whole, None, A4)) != 2:
        return 'whole: not 2 records'


def t_parse_filters():
    if P.parse_frame(eth(pkt(src=bytes([198, 18, 50, 9]))), None, A4):
        return 'a probe from another address taken'
    other = bytearray(pkt())
    other[20 + 8 + 5:20 + 8 + 8] = b'\x00\x00\x11'   # QP 17
    if P.parse_frame(eth(bytes(other)), None, A4):
        return 'a packet for another QP taken'
    p = bytearray(pkt())
    p[20 + 8 + 12] ^= 0xff                           # magic
    if P.parse_frame(eth(bytes(p)), None, A4):
        return 'a packet without the magic taken'


def t_parse_random():
    rng = random.Random(4791)
    base = eth(pkt(1) + pkt(2))
    for _ in range(3000):
        f = bytearray(base[:rng.randrange(len(base) + 1)])
        for _ in range(rng.randrange(1, 6)):
            if f:
                f[rng.randrange(len(f))] = rng.randrange(256)
        P.parse_frame(bytes(f), None, None)
    for _ in range(500):
        P.parse_frame(os.urandom(rng.randrange(200)), None, None)


def t_reply_frame():
    rec = P.parse_frame(eth(pkt(4, phase='rtt'), tag=(2 << 13) | 10), None, A4)[0]
    f = P.reply_frame(eth(pkt(4, phase='rtt'), tag=(2 << 13) | 10), rec,
                      MAC_B)
    back = P.parse_frame(f, None, B4)
    if len(back) != 1 or not back[0]['flags'] & P.FLAG_REPLY or \
       back[0]['seq'] != 4 or back[0]['pcp'] != 2 or back[0]['vid'] != 10:
        return 'got %s' % back
    if f[0:6] != MAC_A or f[6:12] != MAC_B:
        return 'MAC addresses not swapped'
    if PCAP.icrc4(f[18:-4]) != f[-4:]:
        return 'reply ICRC wrong'


def t_summarize():
    recs = [{'seq': s, 'sport': s % 2, 'pcp': 3, 'vid': 0, 'dscp': 26,
             'ecn': 2, 'size': 100} for s in (0, 1, 3, 2, 5, 4, 5)]
    s = P.summarize(recs, 8)
    want = {'received': 7, 'unique': 6, 'lost': 2, 'duplicates': 1,
            'reordered': 0}
    got = {k: s[k] for k in want}
    if got != want:
        return 'got %s' % got
    # reordering counts within one source port (one flow) only: above,
    # 2 after 3 and 4 after 5 crossed ports
    recs = [{'seq': s, 'sport': 0, 'pcp': None, 'vid': None, 'dscp': 0,
             'ecn': 0, 'size': 100} for s in (0, 2, 1, 3, 5, 4)]
    if P.summarize(recs, 6)['reordered'] != 2:
        return 'reordering within a port not counted'


# ---- the verdicts ------------------------------------------------------------------

def plan(**kw):
    p = {'peer': '198.18.10.2', 'src': '198.18.10.1', 'netdev': 'eth0',
         'device': 'eroce0', 'ctrl_port': 4792, 'tclass': 106, 'dscp': 26,
         'ecn': 2, 'sl': 3, 'pcp': 3, 'pcp_how': 'priority tag',
         'netdev_mtu': 1500, 'active_mtu': 1024,
         'mtu_sizes': {256: 272, 512: 528, 1024: 1040}, 'rate': 500,
         'burst_rate': 2000,
         'sports': [0xc000 + i for i in range(8)], 'load_size': 1068,
         'rtts': [0.2] * 20, 'rtt_sent': 20, 'sent_total': 2329,
         'pause': None}
    p.update(kw)
    return p


def phase(sent, got=None, pcp='3', dscp='26', ecn='2', ce=0, sizes=(1040,),
          dups=0, reordered=0, ports=8):
    got = sent if got is None else got
    h = {}
    if got - ce:
        h[ecn] = got - ce
    if ce:
        h['3'] = ce
    return {'sent': sent, 'received': got + dups, 'unique': got,
            'lost': sent - got, 'duplicates': dups, 'reordered': reordered,
            'pcp': {pcp: got} if got else {}, 'vid': {'0': got} if got else {},
            'dscp': {dscp: got} if got else {}, 'ecn': h if got else {},
            'sizes': list(sizes) if got else [],
            'sports': {str(0xc000 + i): got // ports for i in range(ports)}
            if got else {}}


def report(**kw):
    r = {'ok': True, 'capture_drops': 0, 'device': 'eroce0',
         'capture_netdev': 'eth0', 'eroce_counted': 2329, 'pause': None,
         'phases': {'mtu': phase(9, sizes=(272, 528, 1040)),
                    'load': phase(2000), 'burst': phase(300),
                    'rtt': phase(20)}}
    ph = kw.pop('phases', {})
    r['phases'].update(ph)
    r.update(kw)
    return r


def verdicts(pl, rep):
    res = P.Results()
    P.judge(pl, rep, res)
    return {i[0]: i[1] for i in res.items}


def only(pl, rep, cid, verdict):
    """REP gives CID the VERDICT and every other check ok"""
    v = verdicts(pl, rep)
    bad = {k: x for k, x in v.items() if x != 'ok' and k != cid}
    if v.get(cid) != verdict:
        return '%s is %s, not %s (%s)' % (cid, v.get(cid), verdict, v)
    if bad:
        return 'also %s' % bad


def t_judge_clean():
    v = verdicts(plan(), report())
    bad = {k: x for k, x in v.items() if x != 'ok'}
    want = {'path.udp4791', 'path.pcp', 'path.dscp', 'path.ecn', 'path.mtu',
            'path.loss', 'path.reorder', 'path.duplicates', 'path.sports',
            'path.rtt', 'path.pause'}
    if set(v) != want:
        return 'checks %s' % sorted(v)
    if bad:
        return 'not ok: %s' % bad


def t_judge_pcp_stripped():
    return only(plan(), report(phases={'load': phase(2000, pcp='none')}),
                'path.pcp', 'fail')


def t_judge_pcp_rewritten():
    return only(plan(), report(phases={'load': phase(2000, pcp='0')}),
                'path.pcp', 'fail')


def t_judge_dscp_rewritten():
    return only(plan(), report(phases={'load': phase(2000, dscp='0')}),
                'path.dscp', 'fail')


def t_judge_ect_cleared():
    return only(plan(), report(phases={'load': phase(2000, ecn='0'),
                                       'burst': phase(300, ecn='0')}),
                'path.ecn', 'fail')


def t_judge_marks():
    v = verdicts(plan(), report(phases={'burst': phase(300, got=280, ce=40)}))
    if v['path.ecn'] != 'ok':
        return 'path.ecn %s with CE marks' % v['path.ecn']


def t_judge_drops_without_marks():
    return only(plan(), report(phases={'burst': phase(300, got=200)}),
                'path.ecn', 'warn')


def t_judge_mtu():
    return only(plan(), report(phases={'mtu': phase(9, got=6,
                                                    sizes=(272, 528))}),
                'path.mtu', 'fail')


def t_judge_udp_dropped():
    z = {p: phase(n, got=0) for p, n in (('mtu', 9), ('load', 2000),
                                         ('burst', 300), ('rtt', 20))}
    v = verdicts(plan(rtts=[]), report(phases=z, eroce_counted=0))
    if v != {'path.udp4791': 'fail'}:
        return 'got %s' % v


def t_judge_host_drops():
    return only(plan(), report(eroce_counted=0), 'path.udp4791', 'fail')


def t_judge_loss():
    # 1% random loss: the load and the burst lose alike
    return only(plan(), report(phases={'load': phase(2000, got=1980),
                                       'burst': phase(300, got=297)}),
                'path.loss', 'warn')


def t_judge_loss_few():
    v = verdicts(plan(), report(phases={'load': phase(2000, got=1998)}))
    if v['path.loss'] != 'ok':
        return 'path.loss %s for 2 of 2000' % v['path.loss']


def t_judge_reorder():
    return only(plan(), report(phases={'load': phase(2000, reordered=40)}),
                'path.reorder', 'warn')


def t_judge_duplicates():
    return only(plan(), report(phases={'load': phase(2000, dups=3)}),
                'path.duplicates', 'warn')


def t_judge_capture_drops():
    v = verdicts(plan(), report(capture_drops=50,
                                phases={'load': phase(2000, got=1950)}))
    if v['path.loss'] != 'skip':
        return 'path.loss %s when the capture dropped' % v['path.loss']


def t_judge_untagged():
    v = verdicts(plan(pcp=None), report(phases={'load': phase(2000, pcp='none')}))
    if v['path.pcp'] != 'ok':
        return 'path.pcp %s' % v['path.pcp']


def t_judge_no_rtt():
    return only(plan(rtts=[]), report(), 'path.rtt', 'warn')


def t_emit_one_line():
    res = P.Results()
    res.add('x', 'ok', 'a\tb\nc', ['e\t1', 'e\n2'], ['f\tx'])
    lines = []

    class W:
        def write(self, s):
            lines.append(s)
    res.emit(W())
    out = ''.join(lines).splitlines()
    if out != ['R\tx\tok\ta b c', 'E\te 1', 'E\te 2', 'F\tf x']:
        return 'got %s' % out


# ---- the control connection -----------------------------------------------------------

def session_says(*lines):
    """what a Session answers LINES (bytes), and the exception it ends
    with, if any"""
    a, b = socket.socketpair()
    s = P.Session(a, '198.18.50.1')
    err = []

    def serve():
        try:
            s.serve(time.monotonic() + 5)
        except Exception as e:  # what it ended with
            err.append(e)
        a.close()
    t = threading.Thread(target=serve)
    t.start()
    for line in lines:
        try:
            b.sendall(line)
        except OSError:
            break
    b.shutdown(socket.SHUT_WR)
    out = b''
    b.settimeout(5)
    while True:
        try:
            c = b.recv(65536)
        except OSError:
            break
        if not c:
            break
        out += c
    t.join(6)
    b.close()
    return out, (err[0] if err else None), t.is_alive()


def t_ctrl_unknown_op():
    out, _, alive = session_says(b'{"op": "exec", "cmd": "id"}\n')
    if alive or b'unknown request' not in out:
        return 'answer %r, alive %s' % (out, alive)


def t_ctrl_long_line():
    _, err, alive = session_says(b'{' + b' ' * (P.LINE_MAX + 10))
    if alive or not isinstance(err, P.PathError) or 'longer than' not in str(err):
        return 'ended with %r, alive %s' % (err, alive)


def t_ctrl_not_json():
    _, err, alive = session_says(b'hello\n')
    if alive or not isinstance(err, P.PathError):
        return 'ended with %r' % err


def t_ctrl_not_object():
    _, err, alive = session_says(b'[1, 2]\n')
    if alive or not isinstance(err, P.PathError):
        return 'ended with %r' % err


def t_ctrl_stop_first():
    out, _, alive = session_says(b'{"op": "stop", "sent": {}}\n',
                                   b'{"op": "bye"}\n')
    if alive or b'not started' not in out:
        return 'answer %r' % out


def t_ctrl_bad_run():
    out, _, alive = session_says(b'{"op": "start", "run": -1}\n',
                                   b'{"op": "start", "run": "x"}\n',
                                   b'{"op": "bye"}\n')
    if alive or out.count(b'bad run') != 2:
        return 'answer %r' % out


# ---- two namespaces ------------------------------------------------------------------

NS_A, NS_B = 'eroce-path-a%d' % os.getpid(), 'eroce-path-b%d' % os.getpid()
IP_A, IP_B = '198.18.50.1', '198.18.50.2'


def sh(*cmd, ns=None, check_rc=True, timeout=60):
    if ns:
        cmd = ('ip', 'netns', 'exec', ns) + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       check=False)
    if check_rc and p.returncode:
        raise RuntimeError('%s: %s' % (' '.join(cmd), p.stderr.strip()))
    return p


def ns_up():
    sh('ip', 'netns', 'add', NS_A)
    sh('ip', 'netns', 'add', NS_B)
    sh('ip', 'link', 'add', 'pa0', 'netns', NS_A, 'type', 'veth', 'peer',
       'name', 'pb0', 'netns', NS_B)
    for ns, dev, ip in ((NS_A, 'pa0', IP_A), (NS_B, 'pb0', IP_B)):
        sh('ip', 'addr', 'add', ip + '/24', 'dev', dev, ns=ns)
        sh('ip', 'link', 'set', dev, 'up', ns=ns)
        sh('ip', 'link', 'set', 'lo', 'up', ns=ns)


def ns_down():
    for ns in (NS_A, NS_B):
        sh('ip', 'netns', 'del', ns, check_rc=False)


def path_run(*probe_args, listen=True, listen_peer=IP_A, port=4792):
    """eroce-path probe IP_B from NS_A, with a listener in NS_B: the
    verdicts, the probe's output and exit status, the listener's output"""
    lis = None
    if listen:
        lis = subprocess.Popen(['ip', 'netns', 'exec', NS_B, sys.executable,
                                TOOL, 'listen', '--peer', listen_peer,
                                '--port', str(port), '--once', '--timeout',
                                '30'], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        end = time.monotonic() + 10
        while time.monotonic() < end and \
                ':%04X ' % port not in open('/proc/%d/net/tcp' % lis.pid).read():
            time.sleep(0.1)
    p = sh(sys.executable, TOOL, 'probe', IP_B, '--port', str(port),
           '--seconds', '1', *probe_args, ns=NS_A, check_rc=False, timeout=90)
    lout = ''
    if lis:
        try:
            lout = lis.communicate(timeout=40)[0]
        except subprocess.TimeoutExpired:
            lis.kill()
            lout = lis.communicate()[0]
    v = {}
    for line in p.stdout.splitlines():
        f = line.split('\t')
        if f[0] == 'R':
            v[f[1]] = f[2]
    return v, p, lout


def t_ns_clean():
    v, p, lout = path_run()
    bad = {k: x for k, x in v.items() if x != 'ok'}
    if p.returncode or len(v) != 11 or bad:
        return 'rc %d, %d checks, not ok: %s; %s %s' % (
            p.returncode, len(v), bad, p.stderr.strip(), lout.strip())


def t_ns_mtu():
    sh('ip', 'link', 'set', 'pb0', 'mtu', '1000', ns=NS_B)
    try:
        v, p, lout = path_run()
    finally:
        sh('ip', 'link', 'set', 'pb0', 'mtu', '1500', ns=NS_B)
    bad = {k: x for k, x in v.items() if x != 'ok'}
    if bad.get('path.mtu') != 'fail':
        return 'path.mtu %s (%s; %s)' % (v.get('path.mtu'), p.stderr.strip(),
                                         lout.strip())
    # a path whose MTU drops long frames drops the load too: nothing else
    # may be blamed but what follows from that
    other = set(bad) - {'path.mtu', 'path.udp4791', 'path.pcp', 'path.dscp',
                        'path.ecn', 'path.sports', 'path.loss'}
    if other:
        return 'also %s' % {k: bad[k] for k in other}


def t_ns_one_sided():
    v, p, _ = path_run(listen=False)
    want = {'path.udp4791', 'path.pcp', 'path.dscp', 'path.ecn', 'path.loss'}
    skipped = {k for k, x in v.items() if x == 'skip'}
    if p.returncode or skipped != want or v.get('path.rtt') != 'ok' or \
       v.get('path.mtu') != 'ok':
        return 'rc %d, verdicts %s' % (p.returncode, v)


def t_ns_one_sided_mtu():
    sh('ip', 'link', 'set', 'pb0', 'mtu', '1000', ns=NS_B)
    try:
        v, p, _ = path_run(listen=False)
    finally:
        sh('ip', 'link', 'set', 'pb0', 'mtu', '1500', ns=NS_B)
    if p.returncode or v.get('path.mtu') != 'fail' or \
       v.get('path.rtt') != 'ok':
        return 'rc %d, verdicts %s' % (p.returncode, v)


def t_ns_refuses_other_peer():
    _, p, lout = path_run(listen_peer='198.18.50.77')
    if 'refused 198.18.50.1' not in lout or p.returncode != 2:
        return 'rc %d, listener said %r' % (p.returncode, lout.strip())


def t_ns_bad_args():
    for args in (('--rate', '0'), ('--seconds', '100'), ('--sl', '9'),
                 ('--rate', '20000', '--seconds', '30'), ('--burst-rate', '-1'),
                 ('--tclass', '256')):
        p = sh(sys.executable, TOOL, 'probe', IP_B, *args, ns=NS_A,
               check_rc=False)
        if p.returncode != 2 or not p.stderr:
            return '%s: rc %d' % (' '.join(args), p.returncode)


def main():
    tests = [(n[2:], f) for n, f in globals().items()
             if n.startswith('t_') and not n.startswith('t_ns_')]
    for name, fn in tests:
        check(name, fn)
    ns_tests = [(n[2:], f) for n, f in globals().items()
                if n.startswith('t_ns_')]
    why = ''
    if os.geteuid() != 0:
        why = 'not root: no network namespaces'
    else:
        try:
            ns_up()
        except (RuntimeError, OSError) as e:
            why = 'no namespaces here: %s' % e
            ns_down()
    if why:
        for name, _ in ns_tests:
            skip(name, why)
    else:
        try:
            for name, fn in ns_tests:
                check(name, fn)
        finally:
            ns_down()
    print('%d passed, %d failed, %d skipped' % (PASS, FAIL, SKIP))
    return 1 if FAIL else 0


if __name__ == '__main__':
    sys.exit(main())
