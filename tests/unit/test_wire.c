// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for eroce_wire.h: every header encoded and decoded, compared
 * byte for byte with hand-assembled wire images and with the headers of
 * the packets in icrc_vectors.h (built by scapy).
 */
#include "eroce_wire.h"
#include "unit.h"
#include "icrc_vectors.h"

/* over-wide inputs, kept out of constant folding */
static u32 all_ones = 0xffffffff;
static u32 msn_wide = 0x7abcdef;
static u32 sqp_wide = 0xff123456;

/* 8-byte aligned scratch; headers sit at their usual 4-byte offsets */
static union {
	u64 align;
	u8 b[256];
} pkt;

static int bytes_eq(const void *a, const void *b, size_t n)
{
	if (!memcmp(a, b, n))
		return 1;
	fprintf(stderr, "  got:");
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, " %02x", ((const u8 *)a)[i]);
	fprintf(stderr, "\n  exp:");
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, " %02x", ((const u8 *)b)[i]);
	fprintf(stderr, "\n");
	return 0;
}

static void test_bth_encode(void)
{
	static const u8 exp[12] = {
		0x0a, 0xf0, 0x80, 0x01, 0x80, 0xab, 0xcd, 0xef,
		0x80, 0x12, 0x34, 0x56,
	};
	struct eroce_bth *bth = (struct eroce_bth *)pkt.b;

	memset(pkt.b, 0xa5, sizeof(pkt.b));
	eroce_bth_init(bth, 0x0a, 0x8001, 0xabcdef, 0x123456);
	eroce_bth_set_se(bth, true);
	eroce_bth_set_mig(bth, true);
	eroce_bth_set_pad(bth, 3);
	eroce_bth_set_fecn(bth, true);
	eroce_bth_set_ackreq(bth, true);
	CHECK(bytes_eq(bth, exp, sizeof(exp)));
	CHECK_EQ(pkt.b[12], 0xa5);	/* nothing written past the BTH */

	CHECK_EQ(bth->opcode, 0x0a);
	CHECK(eroce_bth_se(bth));
	CHECK(eroce_bth_mig(bth));
	CHECK_EQ(eroce_bth_pad(bth), 3);
	CHECK_EQ(eroce_bth_tver(bth), 0);
	CHECK_EQ(eroce_bth_pkey(bth), 0x8001);
	CHECK(eroce_bth_fecn(bth));
	CHECK(!eroce_bth_becn(bth));
	CHECK_EQ(eroce_bth_qpn(bth), 0xabcdef);
	CHECK(eroce_bth_ackreq(bth));
	CHECK_EQ(eroce_bth_psn(bth), 0x123456);
}

/* each setter changes its own field only */
static void test_bth_fields_independent(void)
{
	struct eroce_bth *bth = (struct eroce_bth *)pkt.b;
	struct eroce_bth ref;
	u32 wide = all_ones;
	int i;

	for (i = 0; i < 1000; i++) {
		u32 qpn = unit_rand() & 0xffffff, psn = unit_rand() & 0xffffff;
		u16 pkey = unit_rand();
		u8 op = unit_rand(), pad = unit_rand() & 3;
		bool se = unit_rand() & 1, mig = unit_rand() & 1;
		bool fecn = unit_rand() & 1, becn = unit_rand() & 1;
		bool ack = unit_rand() & 1;

		eroce_bth_init(bth, op, pkey, qpn, psn);
		eroce_bth_set_se(bth, se);
		eroce_bth_set_mig(bth, mig);
		eroce_bth_set_pad(bth, pad);
		eroce_bth_set_fecn(bth, fecn);
		eroce_bth_set_becn(bth, becn);
		eroce_bth_set_ackreq(bth, ack);
		CHECK_EQ(bth->opcode, op);
		CHECK_EQ(eroce_bth_se(bth), se);
		CHECK_EQ(eroce_bth_mig(bth), mig);
		CHECK_EQ(eroce_bth_pad(bth), pad);
		CHECK_EQ(eroce_bth_tver(bth), 0);
		CHECK_EQ(eroce_bth_pkey(bth), pkey);
		CHECK_EQ(eroce_bth_fecn(bth), fecn);
		CHECK_EQ(eroce_bth_becn(bth), becn);
		CHECK_EQ(eroce_bth_qpn(bth), qpn);
		CHECK_EQ(eroce_bth_ackreq(bth), ack);
		CHECK_EQ(eroce_bth_psn(bth), psn);

		/* rewrite QPN/PSN/pad with over-wide values */
		ref = *bth;
		eroce_bth_set_qpn(bth, wide);
		eroce_bth_set_psn(bth, wide);
		eroce_bth_set_pad(bth, (u8)wide);
		CHECK_EQ(eroce_bth_qpn(bth), 0xffffff);
		CHECK_EQ(eroce_bth_psn(bth), 0xffffff);
		CHECK_EQ(eroce_bth_pad(bth), 3);
		CHECK_EQ(eroce_bth_fecn(bth), fecn);
		CHECK_EQ(eroce_bth_becn(bth), becn);
		CHECK_EQ(eroce_bth_ackreq(bth), ack);
		CHECK_EQ(eroce_bth_se(bth), se);
		CHECK_EQ(eroce_bth_mig(bth), mig);
		CHECK_EQ(eroce_bth_tver(bth), 0);
		eroce_bth_set_qpn(bth, qpn);
		eroce_bth_set_psn(bth, psn);
		eroce_bth_set_pad(bth, pad);
		CHECK(!memcmp(bth, &ref, sizeof(ref)));
	}
	/* resv6a and resv7 stay zero */
	eroce_bth_init(bth, 0, 0, wide, wide);
	eroce_bth_set_fecn(bth, true);
	eroce_bth_set_becn(bth, true);
	eroce_bth_set_ackreq(bth, true);
	CHECK_EQ(pkt.b[4], 0xc0);
	CHECK_EQ(pkt.b[8], 0x80);
	CHECK_EQ(pkt.b[1], 0);
}

static void test_reth(void)
{
	static const u8 exp[16] = {
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
		0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0x00, 0x00,
	};
	struct eroce_reth *reth = (struct eroce_reth *)(pkt.b + 12);

	eroce_reth_init(reth, 0x0123456789abcdefULL, 0xdeadbeef, 0x10000);
	CHECK(bytes_eq(reth, exp, sizeof(exp)));
	CHECK_EQ(eroce_reth_va(reth), 0x0123456789abcdefULL);
	CHECK_EQ(eroce_reth_rkey(reth), 0xdeadbeef);
	CHECK_EQ(eroce_reth_len(reth), 0x10000);
}

static void test_aeth(void)
{
	static const u8 exp[4] = { 0x62, 0xab, 0xcd, 0xef };
	struct eroce_aeth *aeth = (struct eroce_aeth *)(pkt.b + 12);
	u32 wide = msn_wide;

	CHECK_EQ(eroce_syn_ack(EROCE_AETH_CREDIT_INVALID), 0x1f);
	CHECK_EQ(eroce_syn_ack(0), 0x00);
	CHECK_EQ(eroce_syn_rnr_nak(0x0e), 0x2e);
	CHECK_EQ(eroce_syn_nak(EROCE_NAK_PSN_SEQ_ERR), 0x60);
	CHECK_EQ(eroce_syn_nak(EROCE_NAK_INVALID_REQ), 0x61);
	CHECK_EQ(eroce_syn_nak(EROCE_NAK_REM_ACCESS_ERR), 0x62);
	CHECK_EQ(eroce_syn_nak(EROCE_NAK_REM_OP_ERR), 0x63);
	CHECK_EQ(eroce_syn_nak(EROCE_NAK_INVALID_RD_REQ), 0x64);
	CHECK_EQ(eroce_syn_type(0x2e), EROCE_SYN_RNR_NAK);
	CHECK_EQ(eroce_syn_value(0x2e), 0x0e);
	CHECK_EQ(eroce_syn_type(0x1f), EROCE_SYN_ACK);
	CHECK_EQ(eroce_syn_type(0x64), EROCE_SYN_NAK);
	CHECK_EQ(eroce_syn_value(0x64), EROCE_NAK_INVALID_RD_REQ);
	CHECK_EQ(eroce_syn_type(0x41), EROCE_SYN_RSVD);
	CHECK_EQ(eroce_syn_type(0xe1), EROCE_SYN_NAK);	/* bit 7 ignored */

	eroce_aeth_init(aeth, eroce_syn_nak(EROCE_NAK_REM_ACCESS_ERR), wide);
	CHECK(bytes_eq(aeth, exp, sizeof(exp)));
	CHECK_EQ(eroce_aeth_syn(aeth), 0x62);
	CHECK_EQ(eroce_aeth_msn(aeth), 0xabcdef);
	eroce_aeth_init(aeth, 0x1f, 0);
	CHECK_EQ(pkt.b[12], 0x1f);
	CHECK_EQ(eroce_aeth_msn(aeth), 0);
}

static void test_rnr_timer(void)
{
	u8 c;

	CHECK_EQ(eroce_rnr_timer_usec(0), 655360);
	CHECK_EQ(eroce_rnr_timer_usec(1), 10);
	CHECK_EQ(eroce_rnr_timer_usec(14), 1280);
	CHECK_EQ(eroce_rnr_timer_usec(25), 61440);
	CHECK_EQ(eroce_rnr_timer_usec(31), 491520);
	CHECK_EQ(eroce_rnr_timer_usec(0x20 | 1), 10);	/* 5 bits only */
	for (c = 2; c < 32; c++)
		CHECK(eroce_rnr_timer_usec(c) > eroce_rnr_timer_usec(c - 1));
}

static void test_atomic(void)
{
	static const u8 exp[28] = {
		0x00, 0x00, 0x7f, 0xff, 0x00, 0x00, 0x10, 0x08,
		0x11, 0x22, 0x33, 0x44,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
		0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	};
	static const u8 exp_ack[8] = {
		0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
	};
	struct eroce_atmeth *atm = (struct eroce_atmeth *)(pkt.b + 12);
	struct eroce_atmack *ack = (struct eroce_atmack *)(pkt.b + 16);

	eroce_atmeth_init(atm, 0x7fff00001008ULL, 0x11223344,
			  0xfffffffffffffffeULL, 0x8000000000000001ULL);
	CHECK(bytes_eq(atm, exp, sizeof(exp)));
	CHECK_EQ(eroce_atmeth_va(atm), 0x7fff00001008ULL);
	CHECK_EQ(eroce_atmeth_rkey(atm), 0x11223344);
	CHECK_EQ(eroce_atmeth_swap_add(atm), 0xfffffffffffffffeULL);
	CHECK_EQ(eroce_atmeth_compare(atm), 0x8000000000000001ULL);

	eroce_atmack_init(ack, 0xfedcba9876543210ULL);
	CHECK(bytes_eq(ack, exp_ack, sizeof(exp_ack)));
	CHECK_EQ(eroce_atmack_orig(ack), 0xfedcba9876543210ULL);
}

static void test_deth_immdt_ieth(void)
{
	static const u8 exp_deth[8] = {
		0x80, 0x01, 0x00, 0x00, 0x00, 0x12, 0x34, 0x56,
	};
	static const u8 exp_imm[4] = { 0x01, 0x02, 0x03, 0x04 };
	static const u8 exp_ieth[4] = { 0xca, 0xfe, 0xf0, 0x0d };
	struct eroce_deth *deth = (struct eroce_deth *)(pkt.b + 12);
	struct eroce_immdt *imm = (struct eroce_immdt *)(pkt.b + 20);
	struct eroce_ieth *ieth = (struct eroce_ieth *)(pkt.b + 12);
	u32 sqp = sqp_wide;

	eroce_deth_init(deth, EROCE_GSI_QKEY, sqp);
	CHECK(bytes_eq(deth, exp_deth, sizeof(exp_deth)));
	CHECK_EQ(eroce_deth_qkey(deth), 0x80010000);
	CHECK_EQ(eroce_deth_sqp(deth), 0x123456);

	imm->imm = cpu_to_be32(0x01020304);
	CHECK(bytes_eq(imm, exp_imm, sizeof(exp_imm)));

	eroce_ieth_init(ieth, 0xcafef00d);
	CHECK(bytes_eq(ieth, exp_ieth, sizeof(exp_ieth)));
	CHECK_EQ(eroce_ieth_rkey(ieth), 0xcafef00d);
}

static void test_mtu(void)
{
	CHECK_EQ(eroce_ib_mtu_to_bytes(EROCE_IB_MTU_256), 256);
	CHECK_EQ(eroce_ib_mtu_to_bytes(EROCE_IB_MTU_512), 512);
	CHECK_EQ(eroce_ib_mtu_to_bytes(EROCE_IB_MTU_1024), 1024);
	CHECK_EQ(eroce_ib_mtu_to_bytes(EROCE_IB_MTU_2048), 2048);
	CHECK_EQ(eroce_ib_mtu_to_bytes(EROCE_IB_MTU_4096), 4096);
	CHECK_EQ(eroce_ib_mtu_to_bytes(0), 0);
	CHECK_EQ(eroce_ib_mtu_to_bytes(6), 0);
	CHECK_EQ(eroce_ib_mtu_to_bytes(0xffffffff), 0);
	CHECK_EQ(eroce_bytes_to_ib_mtu(0), 0);
	CHECK_EQ(eroce_bytes_to_ib_mtu(255), 0);
	CHECK_EQ(eroce_bytes_to_ib_mtu(256), EROCE_IB_MTU_256);
	CHECK_EQ(eroce_bytes_to_ib_mtu(1500), EROCE_IB_MTU_1024);
	CHECK_EQ(eroce_bytes_to_ib_mtu(2047), EROCE_IB_MTU_1024);
	CHECK_EQ(eroce_bytes_to_ib_mtu(2048), EROCE_IB_MTU_2048);
	CHECK_EQ(eroce_bytes_to_ib_mtu(4095), EROCE_IB_MTU_2048);
	CHECK_EQ(eroce_bytes_to_ib_mtu(9000), EROCE_IB_MTU_4096);
	CHECK_EQ(eroce_bytes_to_ib_mtu(0xffffffff), EROCE_IB_MTU_4096);
}

/* copy a vector so that its BTH lands on a 4-byte boundary */
static struct eroce_bth *load(const struct icrc_vector *v)
{
	size_t iph = (v->pkt[0] >> 4) == 6 ? 40 : (v->pkt[0] & 15) * 4;

	memcpy(pkt.b, v->pkt, v->len);
	return (struct eroce_bth *)(pkt.b + iph + 8);
}

static const struct icrc_vector *vec(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(icrc_vectors); i++)
		if (!strcmp(icrc_vectors[i].name, name))
			return &icrc_vectors[i];
	abort();
}

/* decode the headers scapy built; the values are the generator's */
static void test_decode_scapy_packets(void)
{
	struct eroce_bth *bth;
	struct eroce_reth *reth;
	struct eroce_aeth *aeth;
	struct eroce_deth *deth;
	struct eroce_atmeth *atm;
	struct eroce_immdt *imm;

	bth = load(vec("v4_send_only_tos_ttl"));
	CHECK_EQ(bth->opcode, 0x04);
	CHECK_EQ(eroce_bth_pad(bth), 3);
	CHECK_EQ(eroce_bth_pkey(bth), 0xffff);
	CHECK(eroce_bth_fecn(bth) && eroce_bth_becn(bth));
	CHECK(!eroce_bth_se(bth) && !eroce_bth_mig(bth));
	CHECK_EQ(eroce_bth_qpn(bth), 0x11);
	CHECK(eroce_bth_ackreq(bth));
	CHECK_EQ(eroce_bth_psn(bth), 0x100);

	bth = load(vec("v4_write_only"));
	reth = (struct eroce_reth *)(bth + 1);
	CHECK_EQ(bth->opcode, 0x0a);
	CHECK_EQ(eroce_bth_pkey(bth), 0x8001);
	CHECK_EQ(eroce_bth_qpn(bth), 0xabcdef);
	CHECK_EQ(eroce_bth_psn(bth), 0xffffff);
	CHECK(!eroce_bth_ackreq(bth));
	CHECK_EQ(eroce_reth_va(reth), 0x00007f1234567000ULL);
	CHECK_EQ(eroce_reth_rkey(reth), 0xdeadbeef);
	CHECK_EQ(eroce_reth_len(reth), 37);

	bth = load(vec("v4_ack"));
	aeth = (struct eroce_aeth *)(bth + 1);
	CHECK_EQ(bth->opcode, 0x11);
	CHECK_EQ(eroce_bth_psn(bth), 0x123456);
	CHECK_EQ(eroce_aeth_syn(aeth), 0x1f);
	CHECK_EQ(eroce_syn_type(eroce_aeth_syn(aeth)), EROCE_SYN_ACK);
	CHECK_EQ(eroce_aeth_msn(aeth), 0x42);

	bth = load(vec("v4_cnp"));
	CHECK_EQ(bth->opcode, 0x81);
	CHECK(eroce_bth_becn(bth) && !eroce_bth_fecn(bth));
	CHECK_EQ(eroce_bth_qpn(bth), 0x777);

	bth = load(vec("v4_opt_fetch_add"));
	atm = (struct eroce_atmeth *)(bth + 1);
	CHECK_EQ(bth->opcode, 0x14);
	CHECK_EQ(eroce_bth_psn(bth), 0x7fffff);
	CHECK_EQ(eroce_atmeth_va(atm), 0x1000);
	CHECK_EQ(eroce_atmeth_rkey(atm), 0x42);
	CHECK_EQ(eroce_atmeth_swap_add(atm), 1);
	CHECK_EQ(eroce_atmeth_compare(atm), 0);

	bth = load(vec("v6_send_only_imm"));
	imm = (struct eroce_immdt *)(bth + 1);
	CHECK_EQ(bth->opcode, 0x05);
	CHECK_EQ(eroce_bth_qpn(bth), 0x101);
	CHECK_EQ(be32_to_cpu(imm->imm), 0x01020304);

	bth = load(vec("v6_ud_send_only"));
	deth = (struct eroce_deth *)(bth + 1);
	CHECK_EQ(bth->opcode, 0x64);
	CHECK_EQ(eroce_bth_psn(bth), 0xabcd);
	CHECK_EQ(eroce_deth_qkey(deth), EROCE_GSI_QKEY);
	CHECK_EQ(eroce_deth_sqp(deth), 0x123);
}

/* re-encode the scapy BTHs with eroce's encoder: same bytes */
static void test_encode_matches_scapy(void)
{
	struct eroce_bth *bth, mine;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(icrc_vectors); i++) {
		bth = load(&icrc_vectors[i]);
		eroce_bth_init(&mine, bth->opcode, eroce_bth_pkey(bth),
			       eroce_bth_qpn(bth), eroce_bth_psn(bth));
		eroce_bth_set_se(&mine, eroce_bth_se(bth));
		eroce_bth_set_mig(&mine, eroce_bth_mig(bth));
		eroce_bth_set_pad(&mine, eroce_bth_pad(bth));
		eroce_bth_set_fecn(&mine, eroce_bth_fecn(bth));
		eroce_bth_set_becn(&mine, eroce_bth_becn(bth));
		eroce_bth_set_ackreq(&mine, eroce_bth_ackreq(bth));
		CHECK(bytes_eq(&mine, bth, sizeof(mine)));
	}

	bth = load(vec("v4_write_only"));
	eroce_reth_init((struct eroce_reth *)&pkt.b[200], 0x00007f1234567000ULL,
			0xdeadbeef, 37);
	CHECK(bytes_eq(&pkt.b[200], bth + 1, EROCE_RETH_BYTES));

	bth = load(vec("v4_ack"));
	eroce_aeth_init((struct eroce_aeth *)&pkt.b[200], eroce_syn_ack(0x1f),
			0x42);
	CHECK(bytes_eq(&pkt.b[200], bth + 1, EROCE_AETH_BYTES));

	bth = load(vec("v6_ud_send_only"));
	eroce_deth_init((struct eroce_deth *)&pkt.b[200], 0x80010000, 0x123);
	CHECK(bytes_eq(&pkt.b[200], bth + 1, EROCE_DETH_BYTES));
}

int main(void)
{
	RUN(test_bth_encode);
	RUN(test_bth_fields_independent);
	RUN(test_reth);
	RUN(test_aeth);
	RUN(test_rnr_timer);
	RUN(test_atomic);
	RUN(test_deth_immdt_ieth);
	RUN(test_mtu);
	RUN(test_decode_scapy_packets);
	RUN(test_encode_matches_scapy);
	return unit_result("wire");
}
