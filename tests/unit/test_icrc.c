// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for eroce_icrc.c against the packets in icrc_vectors.h,
 * whose ICRCs come from scapy.contrib.roce (IPv4) and from zlib.crc32 over
 * scapy-masked fields (IPv6); see gen_icrc_vectors.py.  Also: every bit
 * of a packet either is masked (flipping it keeps the ICRC) or is covered
 * (flipping it changes the ICRC), as Annex A17 says.
 */
#include "eroce_icrc.h"
#include "unit.h"
#include "icrc_vectors.h"

static size_t iph_len(const u8 *p)
{
	return (p[0] >> 4) == 6 ? 40 : (p[0] & 15) * 4;
}

static u32 stored_icrc(const struct icrc_vector *v)
{
	const u8 *e = v->pkt + v->len - 4;

	return e[0] | e[1] << 8 | e[2] << 16 | (u32)e[3] << 24;
}

/* run eroce_icrc_linear() on an exact-size heap copy */
static int icrc_of(const u8 *pkt, size_t len, u32 *icrc)
{
	u8 *p = malloc(len ? len : 1);
	__le32 le = 0;
	int ret;

	memcpy(p, pkt, len);
	ret = eroce_icrc_linear(p, len, &le);
	free(p);
	*icrc = le32_to_cpu(le);
	return ret;
}

static void test_crc32_le(void)
{
	static const unsigned char check[] = "123456789";

	/* the CRC-32 check value, and the LRH seed rxe documents */
	CHECK_EQ(~crc32_le(~0U, check, 9), 0xcbf43926);
	CHECK_EQ(crc32_le(~0U, (const unsigned char *)"\xff\xff\xff\xff"
			  "\xff\xff\xff\xff", 8), 0xdebb20e3);
}

static void test_vectors(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(icrc_vectors); i++) {
		const struct icrc_vector *v = &icrc_vectors[i];
		u32 icrc = 0;

		CHECK_EQ(stored_icrc(v), v->icrc);
		CHECK_EQ(icrc_of(v->pkt, v->len - 4, &icrc), 0);
		if (icrc != v->icrc)
			fprintf(stderr, "  vector %s\n", v->name);
		CHECK_EQ(icrc, v->icrc);
	}
}

/* the same ICRC when the tail is fed in every split into three pieces */
static void test_incremental(void)
{
	size_t i, a, b;

	for (i = 0; i < ARRAY_SIZE(icrc_vectors); i++) {
		const struct icrc_vector *v = &icrc_vectors[i];
		const u8 *ip = v->pkt;
		size_t ihl = iph_len(ip);
		const u8 *udp = ip + ihl, *bth = udp + 8, *tail = bth + 12;
		size_t n = v->pkt + v->len - 4 - tail;
		u32 begin = eroce_icrc_begin(ip, ihl, udp, bth);

		for (a = 0; a <= n; a++) {
			for (b = a; b <= n; b++) {
				u32 crc = begin;

				crc = eroce_icrc_update(crc, tail, a);
				crc = eroce_icrc_update(crc, tail + a, b - a);
				crc = eroce_icrc_update(crc, tail + b, n - b);
				crc = le32_to_cpu(eroce_icrc_final(crc));
				if (crc != v->icrc) {
					CHECK_EQ(crc, v->icrc);
					return;
				}
			}
		}
	}
}

/* the masked-variant vectors agree with their plain twins */
static void test_masked_twins(void)
{
	u32 a = 1, b = 2;

	CHECK_EQ(icrc_of(v4_send_only, sizeof(v4_send_only) - 4, &a), 0);
	CHECK_EQ(icrc_of(v4_send_only_tos_ttl,
			 sizeof(v4_send_only_tos_ttl) - 4, &b), 0);
	CHECK(memcmp(v4_send_only, v4_send_only_tos_ttl,
		     sizeof(v4_send_only)));
	CHECK_EQ(a, b);
	CHECK_EQ(icrc_of(v6_send_only_imm, sizeof(v6_send_only_imm) - 4, &a),
		 0);
	CHECK_EQ(icrc_of(v6_send_only_imm_tc_fl,
			 sizeof(v6_send_only_imm_tc_fl) - 4, &b), 0);
	CHECK(memcmp(v6_send_only_imm, v6_send_only_imm_tc_fl,
		     sizeof(v6_send_only_imm)));
	CHECK_EQ(a, b);
}

/*
 * Is bit @bit of byte @off masked out of the ICRC (Annex A17), counting
 * from the IP header?  Written from the spec, independently of
 * eroce_icrc.c.
 */
static bool masked(const u8 *pkt, size_t off, int bit)
{
	size_t ihl = iph_len(pkt);

	if ((pkt[0] >> 4) == 4) {
		if (off == 1 || off == 8 || off == 10 || off == 11)
			return true;		/* TOS, TTL, checksum */
	} else {
		if (off == 0 && bit < 4)
			return true;		/* traffic class, high */
		if (off >= 1 && off <= 3)
			return true;		/* class low, flow label */
		if (off == 7)
			return true;		/* hop limit */
	}
	if (off == ihl + 6 || off == ihl + 7)
		return true;			/* UDP checksum */
	if (off == ihl + 8 + 4)
		return true;			/* FECN, BECN, resv6a */
	return false;
}

static void test_every_bit(void)
{
	size_t i, off;
	int bit;

	for (i = 0; i < ARRAY_SIZE(icrc_vectors); i++) {
		const struct icrc_vector *v = &icrc_vectors[i];
		size_t len = v->len - 4;
		u8 *p = malloc(len);
		int changed = 0, kept = 0;

		memcpy(p, v->pkt, len);
		for (off = 0; off < len; off++) {
			for (bit = 0; bit < 8; bit++) {
				__le32 le = 0;
				u32 icrc;
				bool m;

				/* the version nibble and IHL pick the layout */
				if (off == 0 && (bit >= 4 || (p[0] >> 4) == 4))
					continue;
				m = masked(p, off, bit);
				p[off] ^= 1 << bit;
				CHECK_EQ(eroce_icrc_linear(p, len, &le), 0);
				icrc = le32_to_cpu(le);
				p[off] ^= 1 << bit;
				if (m) {
					kept++;
					if (icrc != v->icrc)
						fprintf(stderr,
							"  %s byte %zu bit %d\n",
							v->name, off, bit);
					CHECK_EQ(icrc, v->icrc);
				} else {
					changed++;
					if (icrc == v->icrc)
						fprintf(stderr,
							"  %s byte %zu bit %d\n",
							v->name, off, bit);
					CHECK(icrc != v->icrc);
				}
			}
		}
		/*
		 * masked bits: IPv4 TOS 8 + TTL 8 + checksum 16, or IPv6
		 * class and flow 28 + hop limit 8; UDP checksum 16; BTH 8
		 */
		CHECK_EQ(kept, (p[0] >> 4) == 4 ? 56 : 60);
		CHECK(changed > 0);
		free(p);
	}
}

/* the acceptance claim, stated directly: any payload bit matters */
static void test_payload_bits(void)
{
	const u8 *src = v6_ud_send_only;
	size_t len = sizeof(v6_ud_send_only) - 4;
	size_t start = 40 + 8 + 12 + 8, off;
	u8 *p = malloc(len);
	int bit;

	memcpy(p, src, len);
	for (off = start; off < len; off++) {
		for (bit = 0; bit < 8; bit++) {
			__le32 le;

			p[off] ^= 1 << bit;
			CHECK_EQ(eroce_icrc_linear(p, len, &le), 0);
			CHECK(le32_to_cpu(le) != 0xd989aca3);
			p[off] ^= 1 << bit;
		}
	}
	free(p);
}

static void test_linear_errors(void)
{
	u8 p[64];
	u32 icrc;

	memset(p, 0, sizeof(p));
	p[0] = 0x45;
	CHECK_EQ(icrc_of(p, 19, &icrc), -EINVAL);	/* < IPv4 header */
	CHECK_EQ(icrc_of(p, 39, &icrc), -EINVAL);	/* no room for BTH */
	CHECK_EQ(icrc_of(p, 40, &icrc), 0);
	p[0] = 0x44;					/* IHL 4 */
	CHECK_EQ(icrc_of(p, 40, &icrc), -EINVAL);
	p[0] = 0x4f;					/* 60-byte header */
	CHECK_EQ(icrc_of(p, 64, &icrc), -EINVAL);
	p[0] = 0x60;
	CHECK_EQ(icrc_of(p, 59, &icrc), -EINVAL);
	CHECK_EQ(icrc_of(p, 60, &icrc), 0);
	p[0] = 0x50;
	CHECK_EQ(icrc_of(p, 64, &icrc), -EINVAL);
	CHECK_EQ(icrc_of(p, 0, &icrc), -EINVAL);
}

int main(void)
{
	RUN(test_crc32_le);
	RUN(test_vectors);
	RUN(test_incremental);
	RUN(test_masked_twins);
	RUN(test_every_bit);
	RUN(test_payload_bits);
	RUN(test_linear_errors);
	return unit_result("icrc");
}
