#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""eroce_pcap_check.py: every RoCEv2 frame of a capture is a standard one.

  eroce_pcap_check.py PCAP MTU

Reads an Ethernet capture (untagged or 802.1Q) and checks every IPv4 or
IPv6 frame to UDP port 4791: the IP and UDP lengths agree with the bytes
on the wire, the IP packet fits MTU, and the ICRC at its end is the one
IBTA Annex A17 defines (computed here, independently of the kernel).  A
batch that was not cut into packets shows up as an oversized frame with
lengths that do not match.  Prints one line of counts and the first few
faults; exits 0 when there was at least one RoCEv2 frame and no fault.
"""
import os
import struct
import sys
import zlib

from scapy.utils import RawPcapReader

ROCE_PORT = 4791
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86dd
ETH_P_8021Q = 0x8100


def icrc4(l3):
    """ICRC over an IPv4 RoCEv2 packet, l3 = IP header .. payload."""
    ihl = (l3[0] & 0x0f) * 4
    ip = bytearray(l3[:ihl])
    ip[1] = 0xff                         # TOS
    ip[8] = 0xff                         # TTL
    ip[10:12] = b'\xff\xff'              # header checksum
    return masked_crc(bytes(ip), l3[ihl:])


def icrc6(l3):
    """ICRC over an IPv6 RoCEv2 packet, l3 = IP header .. payload."""
    ip = bytearray(l3[:40])
    ip[0] |= 0x0f                        # traffic class (version kept),
    ip[1:4] = b'\xff\xff\xff'            # flow label
    ip[7] = 0xff                         # hop limit
    return masked_crc(bytes(ip), l3[40:])


def masked_crc(ip, l4):
    udp = bytearray(l4[:8])
    udp[6:8] = b'\xff\xff'               # UDP checksum
    rest = bytearray(l4[8:])
    if len(rest) > 4:
        rest[4] = 0xff                   # BTH FECN, BECN, resv6
    crc = zlib.crc32(b'\xff' * 8 + ip + bytes(udp) + bytes(rest))
    return struct.pack('<I', crc & 0xffffffff)


def check(frame, mtu):
    """None for a good RoCEv2 frame, '' for another frame, else a fault."""
    if len(frame) < 14:
        return ''
    off, etype = 12, struct.unpack_from('!H', frame, 12)[0]
    if etype == ETH_P_8021Q and len(frame) >= 18:
        off, etype = 16, struct.unpack_from('!H', frame, 16)[0]
    l3 = frame[off + 2:]
    if etype == ETH_P_IP and len(l3) >= 20:
        ihl = (l3[0] & 0x0f) * 4
        if l3[9] != 17 or len(l3) < ihl + 8:
            return ''
        ip_len = struct.unpack_from('!H', l3, 2)[0]
        l4 = ihl
        crc = icrc4
    elif etype == ETH_P_IPV6 and len(l3) >= 48:
        if l3[6] != 17:
            return ''
        ip_len = 40 + struct.unpack_from('!H', l3, 4)[0]
        l4 = 40
        crc = icrc6
    else:
        return ''
    sport, dport, udp_len = struct.unpack_from('!HHH', l3, l4)
    if dport != ROCE_PORT:
        return ''
    # a short frame is padded to 60 bytes on the wire: lengths may be less
    if ip_len > len(l3) or (ip_len < len(l3) and len(frame) > 60):
        return 'IP length %d, %d bytes captured' % (ip_len, len(l3))
    l3 = l3[:ip_len]
    if ip_len > mtu:
        return 'IP packet of %d bytes over MTU %d' % (ip_len, mtu)
    if udp_len != ip_len - l4:
        return 'UDP length %d in a %d-byte IP packet' % (udp_len, ip_len)
    if udp_len < 8 + 12 + 4:
        return 'UDP length %d: no room for BTH and ICRC' % udp_len
    if crc(l3[:-4]) != l3[-4:]:
        return 'bad ICRC %s (PSN %d)' % (
            l3[-4:].hex(),
            struct.unpack_from('!I', l3, l4 + 8 + 8)[0] & 0xffffff)
    return None


def main():
    if len(sys.argv) != 3:
        sys.stderr.write('usage: %s PCAP MTU\n' % os.path.basename(sys.argv[0]))
        return 2
    mtu = int(sys.argv[2])
    good = bad = other = 0
    faults = []
    for frame, _meta in RawPcapReader(sys.argv[1]):
        fault = check(bytes(frame), mtu)
        if fault is None:
            good += 1
        elif fault == '':
            other += 1
        else:
            bad += 1
            if len(faults) < 5:
                faults.append('frame %d: %s' % (good + bad + other, fault))
    print('roce frames %d, faulty %d, other frames %d' % (good + bad, bad,
                                                          other))
    for f in faults:
        print(f)
    return 0 if good and not bad else 1


if __name__ == '__main__':
    sys.exit(main())
