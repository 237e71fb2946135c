#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""eroce_rds.py: RDS messages between two local addresses, checked.

usage: eroce_rds.py SRC_ADDR DST_ADDR COUNT

Binds one RDS socket to SRC_ADDR:4000 and one to DST_ADDR:4001, sends
COUNT messages of 100 B to 64 KiB of random bytes from the first to the
second and compares every one received.  RDS picks its transport by the
address: with rds_rdma loaded and an RDMA device on the address's
netdev, RDS/IB.  Prints "rds: N of COUNT verified"; exits 1 unless all
were.
"""
import os
import socket
import sys

AF_RDS = getattr(socket, "AF_RDS", 21)


def main():
    src, dst, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    tx = socket.socket(AF_RDS, socket.SOCK_SEQPACKET, 0)
    rx = socket.socket(AF_RDS, socket.SOCK_SEQPACKET, 0)
    tx.bind((src, 4000))
    rx.bind((dst, 4001))
    rx.settimeout(30)
    ok = 0
    for i in range(count):
        msg = os.urandom(100 + (i * 4099) % 65436)
        tx.sendto(msg, (dst, 4001))
        got, _ = rx.recvfrom(65536)
        ok += got == msg
    print("rds: %d of %d verified" % (ok, count))
    return 0 if ok == count else 1


if __name__ == "__main__":
    sys.exit(main())
