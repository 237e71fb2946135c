// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce: RoCEv2 ICRC computation (the pseudo-header with its variant
 * fields masked, then the rest of the packet); see eroce_icrc.h.
 *
 * Called from the transmit and receive paths in softirq or process
 * context, and from userspace tests.  Takes no locks, keeps no state;
 * uses a small on-stack copy of the headers it masks.
 */

#include "eroce_icrc.h"

/* IPv4 header bytes that are replaced by ones */
#define IPV4_TOS	1
#define IPV4_TTL	8
#define IPV4_CSUM	10	/* two bytes */
/* IPv6: the low nibble of byte 0 and bytes 1-3 (class, flow), hop limit */
#define IPV6_HOPLIMIT	7
#define UDP_CSUM	6	/* two bytes */
#define BTH_RESV8A	4	/* FECN, BECN, resv6a */
#define LRH_BYTES	8

/**
 * eroce_icrc_begin() - start an ICRC over the pseudo-header
 * @iph: IPv4 or IPv6 header (the version nibble says which)
 * @iph_len: its length: 20-60 (IHL * 4) for IPv4, 40 for IPv6
 * @udph: UDP header
 * @bth: BTH (any alignment, like the other headers)
 *
 * Return: the running CRC covering the masked LRH, IP, UDP and BTH; feed
 * it the bytes after the BTH with eroce_icrc_update().
 */
u32 eroce_icrc_begin(const void *iph, size_t iph_len, const void *udph,
		     const void *bth)
{
	u8 buf[LRH_BYTES + EROCE_IPV6_HDR_BYTES];
	u8 *ip = buf + LRH_BYTES;
	size_t fixed;
	u32 crc;

	BUILD_BUG_ON(EROCE_IPV6_HDR_BYTES <
		     EROCE_UDP_HDR_BYTES + EROCE_BTH_BYTES);

	memset(buf, 0xff, LRH_BYTES);
	if ((*(const u8 *)iph >> 4) == 6) {
		fixed = EROCE_IPV6_HDR_BYTES;
		memcpy(ip, iph, fixed);
		ip[0] |= 0x0f;
		memset(ip + 1, 0xff, 3);
		ip[IPV6_HOPLIMIT] = 0xff;
	} else {
		fixed = EROCE_IPV4_HDR_MIN;
		memcpy(ip, iph, fixed);
		ip[IPV4_TOS] = 0xff;
		ip[IPV4_TTL] = 0xff;
		ip[IPV4_CSUM] = 0xff;
		ip[IPV4_CSUM + 1] = 0xff;
	}
	crc = crc32_le(~0U, buf, LRH_BYTES + fixed);
	if (iph_len > fixed)	/* IPv4 options */
		crc = crc32_le(crc, (const u8 *)iph + fixed, iph_len - fixed);

	memcpy(buf, udph, EROCE_UDP_HDR_BYTES);
	buf[UDP_CSUM] = 0xff;
	buf[UDP_CSUM + 1] = 0xff;
	memcpy(buf + EROCE_UDP_HDR_BYTES, bth, EROCE_BTH_BYTES);
	buf[EROCE_UDP_HDR_BYTES + BTH_RESV8A] = 0xff;

	return crc32_le(crc, buf, EROCE_UDP_HDR_BYTES + EROCE_BTH_BYTES);
}

/**
 * eroce_icrc_linear() - ICRC of a packet held in one buffer
 * @iph: the IP header; UDP, BTH and the rest follow it contiguously
 * @len: bytes from @iph up to, not including, the ICRC
 * @icrc: the ICRC as it goes on the wire
 *
 * Return: 0, or -EINVAL when @len cannot hold the headers or the IP
 * version is neither 4 nor 6.
 */
int eroce_icrc_linear(const void *iph, size_t len, __le32 *icrc)
{
	const u8 *p = iph;
	size_t iph_len;
	u32 crc;

	if (len < EROCE_IPV4_HDR_MIN)
		return -EINVAL;
	switch (p[0] >> 4) {
	case 4:
		iph_len = (p[0] & 0x0f) * 4;
		if (iph_len < EROCE_IPV4_HDR_MIN)
			return -EINVAL;
		break;
	case 6:
		iph_len = EROCE_IPV6_HDR_BYTES;
		break;
	default:
		return -EINVAL;
	}
	if (len < iph_len + EROCE_UDP_HDR_BYTES + EROCE_BTH_BYTES)
		return -EINVAL;

	p += iph_len;
	crc = eroce_icrc_begin(iph, iph_len, p, p + EROCE_UDP_HDR_BYTES);
	p += EROCE_UDP_HDR_BYTES + EROCE_BTH_BYTES;
	crc = eroce_icrc_update(crc, p, len - (p - (const u8 *)iph));
	*icrc = eroce_icrc_final(crc);
	return 0;
}
