/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: the RoCEv2 invariant CRC (IBTA vol. 1 Annex A17.3.3).
 *
 * CRC-32 (IEEE 802.3 polynomial, reflected, initial ~0) over: 8 bytes of
 * 0xff standing for the LRH, the IP header with its variant fields set to
 * ones (IPv4: TOS, TTL, header checksum; IPv6: traffic class, flow label,
 * hop limit), the UDP header with its checksum set to ones, the BTH with
 * its FECN/BECN/resv6a byte set to ones, then everything after the BTH up
 * to the ICRC (extension headers, payload, pad).  The packet ends with
 * the complement of that CRC, stored little-endian.
 *
 * Incremental use, e.g. over the pieces of an skb:
 *
 *	crc = eroce_icrc_begin(iph, iph_len, udph, bth);
 *	crc = eroce_icrc_update(crc, piece, piece_len);	(repeat)
 *	icrc = eroce_icrc_final(crc);
 *
 * Pure code: no state, any context.
 */
#ifndef EROCE_ICRC_H
#define EROCE_ICRC_H

#include "eroce_shim.h"
#include "eroce_wire.h"

#define EROCE_IPV4_HDR_MIN	20
#define EROCE_IPV4_HDR_MAX	60
#define EROCE_IPV6_HDR_BYTES	40
#define EROCE_UDP_HDR_BYTES	8

u32 eroce_icrc_begin(const void *iph, size_t iph_len, const void *udph,
		     const void *bth);

/* the bulk of the packet: through the fastest CRC-32 the CPU offers */
static inline u32 eroce_icrc_update(u32 crc, const void *data, size_t len)
{
	return eroce_crc32(crc, data, len);
}

/* the value that goes on the wire, as stored there (little-endian) */
static inline __le32 eroce_icrc_final(u32 crc)
{
	return cpu_to_le32(~crc);
}

int eroce_icrc_linear(const void *iph, size_t len, __le32 *icrc);

#endif /* EROCE_ICRC_H */
