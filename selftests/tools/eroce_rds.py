#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""eroce_rds.py: RDS messages between two local addresses, checked.

usage: eroce_rds.py SRC_ADDR DST_ADDR COUNT
       eroce_rds.py --bw SECS SRC_ADDR DST_ADDR

Binds one RDS socket to SRC_ADDR:4000 and one to DST_ADDR:4001, sends
COUNT messages of 100 B to 64 KiB of random bytes from the first to the
second and compares every one received.  RDS picks its transport by the
address: with rds_rdma loaded and an RDMA device on the address's
netdev, RDS/IB.  Prints "rds: N of COUNT verified"; exits 1 unless all
were.

With --bw, a throughput run instead: a sender thread sends 64 KiB
messages (a sequence number, then the same random bytes) for SECS
seconds, then a short end mark; the receiver checks that every message
arrives, in order and whole.  The sender keeps at most WINDOW (32)
messages ahead of the receiver, and both sockets get 8 MiB buffers:
when the receiving socket's queue filled up (RDS then marks its port
congested), the stream stopped for good, on eroce and rdma_rxe alike.  Prints "rds: bandwidth N messages of
65536 bytes in S s, B MB/s, all verified" (10^6 bytes per second, from
the first send to the end mark's arrival); exits 1 when one was lost,
reordered or changed.
"""
import os
import socket
import struct
import sys
import threading
import time

AF_RDS = getattr(socket, "AF_RDS", 21)
BW_SIZE = 65536
WINDOW = 32
SO_SNDBUFFORCE = getattr(socket, "SO_SNDBUFFORCE", 32)
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)


def sockets(src, dst):
    """The sending socket on src:4000 and the receiving one on dst:4001."""
    tx = socket.socket(AF_RDS, socket.SOCK_SEQPACKET, 0)
    rx = socket.socket(AF_RDS, socket.SOCK_SEQPACKET, 0)
    tx.bind((src, 4000))
    rx.bind((dst, 4001))
    rx.settimeout(30)
    return tx, rx


def checked(src, dst, count):
    """COUNT messages of 100 B to 64 KiB, one at a time, each compared."""
    tx, rx = sockets(src, dst)
    ok = 0
    for i in range(count):
        msg = os.urandom(100 + (i * 4099) % 65436)
        tx.sendto(msg, (dst, 4001))
        got, _ = rx.recvfrom(65536)
        ok += got == msg
    print("rds: %d of %d verified" % (ok, count))
    return 0 if ok == count else 1


def bandwidth(src, dst, secs):
    """SECS seconds of 64 KiB messages, streamed and checked."""
    tx, rx = sockets(src, dst)
    tx.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 8 << 20)
    rx.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
    body = os.urandom(BW_SIZE - 8)
    sent = [0]
    window = threading.Semaphore(WINDOW)

    def send():
        end = time.monotonic() + secs
        while time.monotonic() < end:
            window.acquire()
            tx.sendto(struct.pack("<Q", sent[0]) + body, (dst, 4001))
            sent[0] += 1
        tx.sendto(b"end", (dst, 4001))

    t0 = time.monotonic()
    sender = threading.Thread(target=send)
    sender.start()
    n = bad = 0
    while True:
        got, _ = rx.recvfrom(BW_SIZE)
        if got == b"end":
            break
        window.release()
        if (len(got) != BW_SIZE or struct.unpack_from("<Q", got)[0] != n or
                memoryview(got)[8:] != body):
            bad += 1
        n += 1
    t = time.monotonic() - t0
    sender.join()
    if bad or n != sent[0]:
        print("rds: bandwidth %d of %d messages received, %d bad" %
              (n, sent[0], bad))
        return 1
    print("rds: bandwidth %d messages of %d bytes in %.2f s, %.1f MB/s, "
          "all verified" % (n, BW_SIZE, t, n * BW_SIZE / t / 1e6))
    return 0


def main():
    if sys.argv[1] == "--bw":
        return bandwidth(sys.argv[3], sys.argv[4], float(sys.argv[2]))
    return checked(sys.argv[1], sys.argv[2], int(sys.argv[3]))


if __name__ == "__main__":
    sys.exit(main())
