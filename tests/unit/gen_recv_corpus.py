#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Write the seed corpora of the libFuzzer targets in tests/unit.

corpus/recv/: inputs of fuzz_recv.c, one QP's life each: the 8-byte
header (flags, the responder's first PSN, the requester's first PSN, log2
of the window), then records, each a length byte and that many bytes: a
packet (BTH through ICRC) when four bytes or more, else an event (see
fuzz_event() in fuzz_recv.c).  Each seed is a small valid scenario: in-order
messages of every kind, selective repeat filling holes, the PSN wrap,
RNR, sequence errors, UC losses, and on the requester's side ACKs, NAKs
and read responses in and out of order.

corpus/hdr/: inputs of fuzz_hdr.c: one UDP payload (BTH through ICRC) per
kind of header layout, and two whole IPv4/IPv6 packets.

The ICRC of every packet is left zero: neither target checks it against
the packet (fuzz_hdr computes it).  Run from anywhere:

    /usr/bin/python3 tests/unit/gen_recv_corpus.py

It replaces the files it writes and nothing else.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# BTH opcodes (eroce_opcode.h)
RC_SEND_FIRST, RC_SEND_MIDDLE, RC_SEND_LAST = 0x00, 0x01, 0x02
RC_SEND_LAST_IMM, RC_SEND_ONLY, RC_SEND_ONLY_IMM = 0x03, 0x04, 0x05
RC_WRITE_FIRST, RC_WRITE_MIDDLE, RC_WRITE_LAST = 0x06, 0x07, 0x08
RC_WRITE_LAST_IMM, RC_WRITE_ONLY, RC_WRITE_ONLY_IMM = 0x09, 0x0a, 0x0b
RC_READ_REQUEST = 0x0c
RC_READ_RESPONSE_FIRST, RC_READ_RESPONSE_MIDDLE = 0x0d, 0x0e
RC_READ_RESPONSE_LAST, RC_READ_RESPONSE_ONLY = 0x0f, 0x10
RC_ACK, RC_ATOMIC_ACK, RC_CMP_SWAP, RC_FETCH_ADD = 0x11, 0x12, 0x13, 0x14
RC_SEND_LAST_INV, RC_SEND_ONLY_INV, RC_ATOMIC_WRITE = 0x16, 0x17, 0x1d
UC = 0x20
UD_SEND_ONLY, UD_SEND_ONLY_IMM, CNP = 0x64, 0x65, 0x81

# the extension headers after the BTH of each opcode, in wire order
EXT = {
    RC_SEND_LAST_IMM: "I", RC_SEND_ONLY_IMM: "I",
    RC_WRITE_FIRST: "R", RC_WRITE_LAST_IMM: "I", RC_WRITE_ONLY: "R",
    RC_WRITE_ONLY_IMM: "RI", RC_READ_REQUEST: "R",
    RC_READ_RESPONSE_FIRST: "A", RC_READ_RESPONSE_LAST: "A",
    RC_READ_RESPONSE_ONLY: "A", RC_ACK: "A", RC_ATOMIC_ACK: "AK",
    RC_CMP_SWAP: "T", RC_FETCH_ADD: "T", RC_SEND_LAST_INV: "V",
    RC_SEND_ONLY_INV: "V", RC_ATOMIC_WRITE: "R",
    UC | RC_SEND_LAST_IMM: "I", UC | RC_SEND_ONLY_IMM: "I",
    UC | RC_WRITE_FIRST: "R", UC | RC_WRITE_LAST_IMM: "I",
    UC | RC_WRITE_ONLY: "R", UC | RC_WRITE_ONLY_IMM: "RI",
    UD_SEND_ONLY: "D", UD_SEND_ONLY_IMM: "DI", CNP: "C",
}

# AETH syndromes (eroce_wire.h)
SYN_ACK = 0x1f                  # credit count invalid
SYN_RNR = 0x20                  # RNR NAK, timer code 0
SYN_NAK_SEQ = 0x60
SYN_NAK_INVALID = 0x61

QPN = 0x11
PKEY = 0xffff


def pkt(op, psn, payload=b"", ackreq=False, sr=False, syn=SYN_ACK, msn=0,
        va=0x1000, rkey=0x100, dlen=None, pad=0):
    """A UDP payload: BTH, extension headers, payload, pad, ICRC (zero)."""
    apsn = psn & 0xffffff
    if ackreq:
        apsn |= 0x80000000
    if sr:
        apsn |= 0x40000000
    b = struct.pack(">BBHII", op, pad << 4, PKEY, QPN, apsn)
    for h in EXT.get(op, ""):
        if h == "R":
            b += struct.pack(">QII", va, rkey,
                             len(payload) if dlen is None else dlen)
        elif h == "A":
            b += struct.pack(">I", syn << 24 | msn)
        elif h == "T":
            b += struct.pack(">QIQQ", va, rkey, 1, 0)
        elif h == "K":
            b += struct.pack(">Q", 0x1234)
        elif h == "D":
            b += struct.pack(">II", 0x11111111, 0x22)
        elif h == "C":
            b += bytes(16)
        else:                   # ImmDt, IETH
            b += struct.pack(">I", 0xabcd)
    return b + payload + bytes(pad) + bytes(4)


def ack(psn, syn=SYN_ACK, sr=False):
    return pkt(RC_ACK, psn, syn=syn, sr=sr)


def rsp(op, psn):
    """A read response packet (payload lengths are not modelled)."""
    return pkt(op, psn, payload=bytes(16))


# fuzz_recv.c's header flags and events
F_UC, F_SR, F_RQ_EMPTY = 1, 2, 4
K_SEND, K_WRITE, K_READ, K_ATOMIC = 0, 1, 2, 3


def post(kind, size):
    """The requester posts a message; see fuzz_post() for size."""
    return bytes([kind | size << 2])


def run(n=63):
    return bytes([0, n])


TIMER = bytes([1, 0])
PROBE = bytes([3, 0])


def rq_empty(empty):
    return bytes([2, 1 if empty else 0])


def reset(psn):
    return psn.to_bytes(3, "big")


def seed(flags, epsn, sq_psn, winlog, records):
    out = bytes([flags]) + epsn.to_bytes(3, "big") + \
        sq_psn.to_bytes(3, "big") + bytes([winlog])
    for r in records:
        assert len(r) < 256
        out += bytes([len(r)]) + r
    return out


MTU_DATA = bytes(64)            # stands for a full packet's payload


def rc_inorder():
    e = 0x100
    return seed(0, e, 0x200, 5, [
        pkt(RC_SEND_ONLY, e, MTU_DATA, ackreq=True),
        pkt(RC_SEND_FIRST, e + 1, MTU_DATA),
        pkt(RC_SEND_MIDDLE, e + 2, MTU_DATA),
        pkt(RC_SEND_LAST_IMM, e + 3, bytes(12), ackreq=True),
        pkt(RC_WRITE_FIRST, e + 4, MTU_DATA, dlen=140),
        pkt(RC_WRITE_MIDDLE, e + 5, MTU_DATA),
        pkt(RC_WRITE_LAST_IMM, e + 6, bytes(12), ackreq=True),
        pkt(RC_READ_REQUEST, e + 7, dlen=1024),         # 4 PSNs
        pkt(RC_CMP_SWAP, e + 11, va=0x2000),
        pkt(RC_FETCH_ADD, e + 12, va=0x2008),
        pkt(RC_SEND_ONLY_INV, e + 13, bytes(8), ackreq=True),
        pkt(RC_ATOMIC_WRITE, e + 14, bytes(8), va=0x2010),
        pkt(RC_WRITE_ONLY_IMM, e + 15, bytes(4), ackreq=True),
        # duplicates: acknowledged again, read again, replayed
        pkt(RC_SEND_ONLY, e, MTU_DATA, ackreq=True),
        pkt(RC_READ_REQUEST, e + 7, dlen=1024),
        pkt(RC_FETCH_ADD, e + 12, va=0x2008),
        pkt(RC_SEND_ONLY, e + 16, MTU_DATA, ackreq=True),
    ])


def rc_sr_hole(e, winlog=6):
    """Selective repeat: a hole at e, the packets after it kept."""
    recs = [pkt(RC_SEND_ONLY, e + i, MTU_DATA, sr=True) for i in range(1, 9)]
    recs += [pkt(RC_SEND_ONLY, e + 3, MTU_DATA, sr=True)]      # kept twice
    recs += [pkt(RC_SEND_ONLY, e, MTU_DATA, sr=True, ackreq=True)]
    # a second hole: e + 9 lost, e + 10.. kept, then e + 9
    recs += [pkt(RC_WRITE_ONLY, e + i, bytes(8), sr=True)
             for i in range(10, 14)]
    recs += [pkt(RC_WRITE_ONLY, e + 9, bytes(8), sr=True, ackreq=True)]
    # expecting e + 14: the last PSN the window keeps, the first it
    # does not, then e + 14 itself
    recs += [pkt(RC_SEND_ONLY, e + 14 + 255, MTU_DATA, sr=True),
             pkt(RC_SEND_ONLY, e + 14 + 256, MTU_DATA, sr=True),
             pkt(RC_SEND_ONLY, e + 14, MTU_DATA, sr=True)]
    return seed(F_SR, e, 0x40, winlog, recs)


def rc_sr_probe():
    """Selective repeat: the NAK for a hole is lost, the requester's
    tail-loss probe (a kept packet again, AckReq) makes the responder
    name the hole once more; a kept packet again without AckReq does
    not."""
    e = 0x20
    recs = [pkt(RC_SEND_ONLY, e + i, MTU_DATA, sr=True) for i in range(1, 6)]
    recs += [pkt(RC_SEND_ONLY, e + 4, MTU_DATA, sr=True)]
    recs += [pkt(RC_SEND_ONLY, e + 5, MTU_DATA, sr=True, ackreq=True)]
    recs += [pkt(RC_SEND_ONLY, e, MTU_DATA, sr=True, ackreq=True)]
    return seed(F_SR, e, 0x40, 6, recs)


def rc_rnr():
    """RNR NAK at the hole; the kept packets wait for the retry."""
    e = 0x7ffff0
    return seed(F_SR | F_RQ_EMPTY, e, 0x10, 4, [
        pkt(RC_SEND_ONLY, e + 1, MTU_DATA, sr=True),
        pkt(RC_SEND_ONLY, e + 2, MTU_DATA, sr=True),
        pkt(RC_SEND_ONLY, e, MTU_DATA, sr=True),        # RNR NAK
        rq_empty(False),
        pkt(RC_SEND_ONLY, e, MTU_DATA, sr=True, ackreq=True),
        pkt(RC_SEND_ONLY, e + 3, MTU_DATA, sr=True, ackreq=True),
        rq_empty(True),
        pkt(RC_SEND_ONLY, e + 5, MTU_DATA, sr=True),
        pkt(RC_SEND_ONLY, e + 6, MTU_DATA, sr=True),
        pkt(RC_WRITE_ONLY, e + 4, bytes(8), sr=True),   # RNR in the drain
    ])


def rc_seq_errors():
    """Opcodes out of sequence fail the QP; each reset starts over."""
    e = 0x20
    return seed(0, e, 0x20, 5, [
        pkt(RC_SEND_MIDDLE, e, MTU_DATA),
        reset(0x30),
        pkt(RC_WRITE_FIRST, 0x30, MTU_DATA, dlen=128),
        pkt(RC_SEND_LAST, 0x31, bytes(8)),
        reset(0x40),
        pkt(RC_SEND_FIRST, 0x40, MTU_DATA),
        pkt(RC_READ_REQUEST, 0x41, dlen=64),
        reset(0x50),
        pkt(RC_FETCH_ADD, 0x50, va=0x2004),             # misaligned
        reset(0x60),
        pkt(RC_READ_REQUEST, 0x60, dlen=0x80000001),    # too long
        reset(0x70),
        pkt(RC_WRITE_ONLY, 0x70, bytes(8)),
    ])


def rc_read_big():
    """A 2 GiB READ at MTU 256 takes 2^23 PSNs."""
    e = 0x10
    return seed(0, e, 0x10, 5, [
        pkt(RC_READ_REQUEST, e, dlen=0x80000000),
        pkt(RC_SEND_ONLY, e + 0x800000, MTU_DATA, ackreq=True),
        pkt(RC_READ_REQUEST, e, dlen=0x80000000),       # a duplicate
        pkt(RC_SEND_ONLY, e + 0x800000, MTU_DATA, ackreq=True),
    ])


def uc_gap():
    e = 0xfffffe
    return seed(F_UC, e, 0x10, 5, [
        pkt(UC | RC_SEND_FIRST, e, MTU_DATA),
        pkt(UC | RC_SEND_MIDDLE, e + 1, MTU_DATA),
        pkt(UC | RC_SEND_LAST, e + 3, bytes(8)),        # e + 2 lost
        pkt(UC | RC_SEND_ONLY, e + 4, bytes(8)),
        pkt(UC | RC_WRITE_FIRST, e + 5, MTU_DATA, dlen=72),
        pkt(UC | RC_WRITE_LAST_IMM, e + 6, bytes(8)),
        pkt(UC | RC_WRITE_ONLY_IMM, e + 7, bytes(4)),
        pkt(RC_ACK, e + 7),                             # not for UC
    ])


def comp_acks():
    s = 0x500
    return seed(0, 0x10, s, 5, [
        post(K_SEND, 0), post(K_SEND, 0), post(K_SEND, 0),
        post(K_WRITE, 3),                               # 4 packets
        run(),
        ack(s), ack(s + 2),
        ack(s),                                         # stale
        ack(s + 2),                                     # duplicate
        ack(s + 7),                                     # never sent
        ack(s + 6),
        post(K_SEND, 1), run(), ack(s + 8),
    ])


def comp_nak(sr):
    s = 0xfffff8
    return seed(F_SR if sr else 0, 0x10, s, 4, [
        post(K_SEND, 7), post(K_WRITE, 7),              # 8 + 8 packets
        run(),
        ack(s + 1),
        ack(s + 2, SYN_NAK_SEQ, sr=sr),                 # s + 2 lost
        run(),
        ack(s + 9),
        ack(s + 12, SYN_NAK_SEQ, sr=sr),
        run(),
        ack(s + 15),
        post(K_SEND, 0), run(),
        ack(s + 16, SYN_NAK_INVALID),                   # fatal
    ])


def comp_rnr_timer():
    s = 0x123456
    return seed(0, 0x10, s, 2, [
        post(K_SEND, 0), post(K_SEND, 2), post(K_ATOMIC, 0),
        run(),
        ack(s, SYN_RNR),
        run(),                                          # waits
        TIMER, run(),
        ack(s + 1),
        TIMER, run(),                                   # go back N
        PROBE, run(),
        ack(s + 3),
        pkt(RC_ATOMIC_ACK, s + 4),
    ])


def comp_reads():
    s = 0x1000
    r = s + 1                                           # the read's first
    recs = [post(K_SEND, 0), post(K_READ, 15),          # 61 responses
            post(K_READ, 1), post(K_SEND, 0), run()]
    recs += [rsp(RC_READ_RESPONSE_FIRST, r)]
    # early ones, within the bitmap, then the hole, then in order
    recs += [rsp(RC_READ_RESPONSE_MIDDLE, r + d) for d in (3, 2, 60, 5)]
    recs += [rsp(RC_READ_RESPONSE_MIDDLE, r + 2)]       # duplicate
    recs += [rsp(RC_READ_RESPONSE_MIDDLE, r + 1)]
    recs += [rsp(RC_READ_RESPONSE_MIDDLE, r + d) for d in range(4, 60)
             if d != 5]
    recs += [rsp(RC_READ_RESPONSE_LAST, r + 60)]
    # the second read: its last response before its first
    recs += [rsp(RC_READ_RESPONSE_LAST, r + 65), TIMER,
             rsp(RC_READ_RESPONSE_FIRST, r + 61)]
    recs += [rsp(RC_READ_RESPONSE_MIDDLE, r + d) for d in (62, 63, 64)]
    recs += [ack(r + 66)]
    return seed(0, 0x10, s, 7, recs)


def comp_atomic():
    s = 0x800000
    return seed(0, 0x10, s, 5, [
        post(K_ATOMIC, 0), post(K_SEND, 0), post(K_ATOMIC, 0),
        run(),
        ack(s + 1),                                     # lost response
        run(),
        pkt(RC_ATOMIC_ACK, s),
        pkt(RC_ATOMIC_ACK, s),                          # duplicate
        ack(s + 1),
        pkt(RC_ATOMIC_ACK, s + 2),
    ])


def comp_read_far():
    """A read's response more than the bitmap's 64 PSNs early."""
    s = 0x20
    return seed(0, 0x10, s, 7, [
        post(K_READ, 30), run(),                        # 121 responses
        rsp(RC_READ_RESPONSE_MIDDLE, s + 64),           # the bitmap's last
        rsp(RC_READ_RESPONSE_MIDDLE, s + 65),           # past it
        rsp(RC_READ_RESPONSE_LAST, s + 120),
        rsp(RC_READ_RESPONSE_FIRST, s),
        TIMER,
    ])


def comp_dup_nak():
    """A SEND lost, the READ after it answered early, its NAK twice."""
    s = 0x100
    return seed(0, 0x10, s, 5, [
        post(K_SEND, 0), post(K_READ, 2), run(),        # s, s + 1 .. s + 9
        ack(s, SYN_NAK_SEQ),
        run(),
        rsp(RC_READ_RESPONSE_MIDDLE, s + 3),            # s + 1, 2 lost
        ack(s, SYN_NAK_SEQ),                            # duplicated
        run(),
        rsp(RC_READ_RESPONSE_FIRST, s + 1),
        rsp(RC_READ_RESPONSE_MIDDLE, s + 2),
    ] + [rsp(RC_READ_RESPONSE_MIDDLE, s + d) for d in range(4, 9)] + [
        rsp(RC_READ_RESPONSE_LAST, s + 9),
    ])


def comp_ghost_read_resp():
    """A read response for a PSN never sent, no read out: it acks nothing."""
    s = 0x0
    return seed(F_SR, 0x10, s, 0, [
        post(K_SEND, 0), run(),
        rsp(RC_READ_RESPONSE_MIDDLE, 0x1f0000),
        ack(s),
    ])


def comp_atomic_ack_mismatch():
    """An atomic ACK at the PSN of a SEND after the atomic: it acks nothing."""
    s = 0x123456
    return seed(0, 0x10, s, 2, [
        post(K_SEND, 2), post(K_ATOMIC, 0), post(K_SEND, 0),
        run(),
        ack(s + 1),
        run(),
        pkt(RC_ATOMIC_ACK, s + 4),
        TIMER, run(),
    ])


def req_read_2g():
    """Finding 4: a 2 GiB READ at MTU 256, 2^23 PSNs, after a SEND."""
    s = 0x10
    return seed(0, 0x10, s, 5, [
        post(K_WRITE, 0), post(K_READ, 63), run(),
        post(K_SEND, 0), run(),
        ack(s),
    ])


def req_read_span():
    """A READ of 2^23 - 1 PSNs waits until the WRITE before it is acked."""
    s = 0xfffff0
    return seed(0, 0x10, s, 5, [
        post(K_WRITE, 0), post(K_READ, 62), run(),
        ack(s), run(),
        rsp(RC_READ_RESPONSE_FIRST, s + 1), run(),
    ])


def recv_seeds():
    return {
        "rc_inorder": rc_inorder(),
        "rc_sr_hole": rc_sr_hole(0x10),
        "rc_sr_wrap": rc_sr_hole(0xfffff8),
        "rc_sr_probe": rc_sr_probe(),
        "rc_rnr": rc_rnr(),
        "rc_seq_errors": rc_seq_errors(),
        "rc_read_big": rc_read_big(),
        "uc_gap": uc_gap(),
        "comp_acks": comp_acks(),
        "comp_nak_gbn": comp_nak(False),
        "comp_nak_sr": comp_nak(True),
        "comp_rnr_timer": comp_rnr_timer(),
        "comp_reads": comp_reads(),
        "comp_atomic": comp_atomic(),
        "comp_read_far": comp_read_far(),
        "comp_dup_nak": comp_dup_nak(),
        "comp_ghost_read_resp": comp_ghost_read_resp(),
        "comp_atomic_ack_mismatch": comp_atomic_ack_mismatch(),
        "req_read_2g": req_read_2g(),
        "req_read_span": req_read_span(),
    }


def ipv4(udp_payload):
    """A whole IPv4/UDP RoCEv2 packet around @udp_payload."""
    udp = struct.pack(">HHHH", 0xc000, 4791, 8 + len(udp_payload), 0)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0x02, 28 + len(udp_payload),
                     1, 0x4000, 64, 17, 0, bytes([198, 18, 0, 1]),
                     bytes([198, 18, 0, 2]))
    return ip + udp + udp_payload


def ipv6(udp_payload):
    udp = struct.pack(">HHHH", 0xc000, 4791, 8 + len(udp_payload), 0)
    ip = struct.pack(">IHBB16s16s", 0x60000000, 8 + len(udp_payload), 17,
                     64, bytes.fromhex("20010db8" + "00" * 11 + "01"),
                     bytes.fromhex("20010db8" + "00" * 11 + "02"))
    return ip + udp + udp_payload


def hdr_seeds():
    return {
        "send_only": pkt(RC_SEND_ONLY, 1, bytes(32)),
        "send_last_pad": pkt(RC_SEND_LAST, 2, bytes(29), pad=3),
        "write_only_imm": pkt(RC_WRITE_ONLY_IMM, 3, bytes(8)),
        "read_request": pkt(RC_READ_REQUEST, 4, dlen=4096),
        "read_response_first": rsp(RC_READ_RESPONSE_FIRST, 5),
        "ack": ack(6),
        "atomic_ack": pkt(RC_ATOMIC_ACK, 7),
        "cmp_swap": pkt(RC_CMP_SWAP, 8),
        "send_only_inv": pkt(RC_SEND_ONLY_INV, 9, bytes(4)),
        "ud_send_only_imm": pkt(UD_SEND_ONLY_IMM, 10, bytes(16)),
        "cnp": pkt(CNP, 0),
        "ipv4_send_only": ipv4(pkt(RC_SEND_ONLY, 11, bytes(8))),
        "ipv6_ack": ipv6(ack(12)),
    }


def write_corpus(name, seeds):
    d = os.path.join(HERE, "corpus", name)
    os.makedirs(d, exist_ok=True)
    for base, data in seeds.items():
        with open(os.path.join(d, base), "wb") as f:
            f.write(data)


def main():
    write_corpus("recv", recv_seeds())
    write_corpus("hdr", hdr_seeds())


if __name__ == "__main__":
    main()
