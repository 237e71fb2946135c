/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: RoCEv2 wire formats - the InfiniBand base and extended transport
 * headers as they appear after the UDP header, their field masks, typed
 * accessors and the protocol constants.  Pure code: no state, no locks,
 * callable from any context.
 *
 * Layout of a RoCEv2 packet (IBTA vol. 1 ch. 9, Annex A17):
 *
 *   IPv4/IPv6 | UDP (dport 4791) | BTH | [RETH|AETH|DETH|AtomicETH]
 *     | [ImmDt|IETH|AtomicAckETH] | payload | pad (0-3) | ICRC (LE32)
 *
 * Every multi-byte field is big-endian.  Headers are read in place and
 * each starts at a 4-byte multiple from the BTH, so the structs are made
 * of 32-bit words only: a 64-bit field is two words (eroce_be64_get/put),
 * which keeps the layouts natural and 4-byte alignment sufficient.
 */
#ifndef EROCE_WIRE_H
#define EROCE_WIRE_H

#include "eroce_shim.h"

#define EROCE_ROCEV2_UDP_PORT	4791
#define EROCE_BTH_TVER		0	/* the only transport version */
#define EROCE_ICRC_BYTES	4
#define EROCE_CNP_RSVD_BYTES	16	/* zero bytes after a CNP's BTH */

/* a 64-bit big-endian field kept as two 32-bit words */
static inline u64 eroce_be64_get(const __be32 *w)
{
	return (u64)be32_to_cpu(w[0]) << 32 | be32_to_cpu(w[1]);
}

static inline void eroce_be64_put(__be32 *w, u64 v)
{
	w[0] = cpu_to_be32(v >> 32);
	w[1] = cpu_to_be32((u32)v);
}

/* Base Transport Header */
struct eroce_bth {
	u8 opcode;
	u8 flags;		/* SE | M | PadCnt | TVer */
	__be16 pkey;
	__be32 qpn;		/* FECN | BECN | resv6a | DestQP */
	__be32 apsn;		/* AckReq | resv7 | PSN */
};

#define EROCE_BTH_SE		0x80U	/* in flags */
#define EROCE_BTH_MIG		0x40U
#define EROCE_BTH_PAD		0x30U
#define EROCE_BTH_TVER_MASK	0x0fU
#define EROCE_BTH_FECN		0x80000000U	/* in qpn */
#define EROCE_BTH_BECN		0x40000000U
#define EROCE_BTH_RESV6A	0x3f000000U
#define EROCE_BTH_QPN		0x00ffffffU
#define EROCE_BTH_ACKREQ	0x80000000U	/* in apsn */
#define EROCE_BTH_RESV7		0x7f000000U
/*
 * eroce extension, in resv7 (covered by the ICRC, ignored by IBTA
 * receivers): on a request, "the requester can do selective repeat";
 * on an ACK or NAK, "this responder keeps packets after a hole".
 */
#define EROCE_BTH_SR		0x40000000U	/* in apsn */
/*
 * On a NAK with EROCE_BTH_SR, the rest of resv7: how many PSNs the hole
 * spans, less one (1-64; senders of 0 meant "one").
 */
#define EROCE_BTH_SR_HOLE	0x3f000000U	/* in apsn */
#define EROCE_SR_HOLE_MAX	64
#define EROCE_BTH_PSN		0x00ffffffU

/* RDMA Extended Transport Header: WRITE first/only, READ request */
struct eroce_reth {
	__be32 va[2];
	__be32 rkey;
	__be32 len;
};

/* ACK Extended Transport Header */
struct eroce_aeth {
	__be32 smsn;		/* syndrome | MSN */
};

#define EROCE_AETH_SYN		0xff000000U
#define EROCE_AETH_MSN		0x00ffffffU

/*
 * AETH syndrome: bit 7 reserved, bits 6:5 the type, bits 4:0 the credit
 * count (ACK), the RNR timer code (RNR NAK) or the NAK code (NAK).
 */
#define EROCE_SYN_TYPE_MASK	0x60U
#define EROCE_SYN_VALUE_MASK	0x1fU

enum eroce_syn_type {
	EROCE_SYN_ACK		= 0x00,
	EROCE_SYN_RNR_NAK	= 0x20,
	EROCE_SYN_RSVD		= 0x40,
	EROCE_SYN_NAK		= 0x60,
};

enum eroce_nak_code {
	EROCE_NAK_PSN_SEQ_ERR		= 0,
	EROCE_NAK_INVALID_REQ		= 1,
	EROCE_NAK_REM_ACCESS_ERR	= 2,
	EROCE_NAK_REM_OP_ERR		= 3,
	EROCE_NAK_INVALID_RD_REQ	= 4,
};

#define EROCE_AETH_CREDIT_INVALID	0x1f	/* ACK: no credit count */

/* Atomic Extended Transport Header: CMP_SWAP, FETCH_ADD */
struct eroce_atmeth {
	__be32 va[2];
	__be32 rkey;
	__be32 swap_add[2];
	__be32 compare[2];
};

/* Atomic ACK Extended Transport Header */
struct eroce_atmack {
	__be32 orig[2];
};

/* Datagram Extended Transport Header: UD */
struct eroce_deth {
	__be32 qkey;
	__be32 sqp;		/* resv8 | SrcQP */
};

#define EROCE_DETH_SQP		0x00ffffffU
#define EROCE_GSI_QKEY		0x80010000U

/* Immediate Data: opaque, kept in wire order end to end */
struct eroce_immdt {
	__be32 imm;
};

/* Invalidate Extended Transport Header */
struct eroce_ieth {
	__be32 rkey;
};

enum eroce_hdr_bytes {
	EROCE_BTH_BYTES		= sizeof(struct eroce_bth),
	EROCE_RETH_BYTES	= sizeof(struct eroce_reth),
	EROCE_AETH_BYTES	= sizeof(struct eroce_aeth),
	EROCE_ATMETH_BYTES	= sizeof(struct eroce_atmeth),
	EROCE_ATMACK_BYTES	= sizeof(struct eroce_atmack),
	EROCE_DETH_BYTES	= sizeof(struct eroce_deth),
	EROCE_IMMDT_BYTES	= sizeof(struct eroce_immdt),
	EROCE_IETH_BYTES	= sizeof(struct eroce_ieth),
};

static_assert(EROCE_BTH_BYTES == 12, "BTH layout");
static_assert(EROCE_RETH_BYTES == 16, "RETH layout");
static_assert(EROCE_AETH_BYTES == 4, "AETH layout");
static_assert(EROCE_ATMETH_BYTES == 28, "AtomicETH layout");
static_assert(EROCE_ATMACK_BYTES == 8, "AtomicAckETH layout");
static_assert(EROCE_DETH_BYTES == 8, "DETH layout");
static_assert(EROCE_IMMDT_BYTES == 4, "ImmDt layout");
static_assert(EROCE_IETH_BYTES == 4, "IETH layout");

/* BTH */
static inline void eroce_bth_init(struct eroce_bth *bth, u8 opcode, u16 pkey,
				  u32 qpn, u32 psn)
{
	bth->opcode = opcode;
	bth->flags = 0;		/* TVer 0 */
	bth->pkey = cpu_to_be16(pkey);
	bth->qpn = be32_encode_bits(qpn, EROCE_BTH_QPN);
	bth->apsn = be32_encode_bits(psn, EROCE_BTH_PSN);
}

static inline bool eroce_bth_se(const struct eroce_bth *bth)
{
	return u8_get_bits(bth->flags, EROCE_BTH_SE);
}

static inline void eroce_bth_set_se(struct eroce_bth *bth, bool se)
{
	bth->flags = u8_replace_bits(bth->flags, se, EROCE_BTH_SE);
}

static inline bool eroce_bth_mig(const struct eroce_bth *bth)
{
	return u8_get_bits(bth->flags, EROCE_BTH_MIG);
}

static inline void eroce_bth_set_mig(struct eroce_bth *bth, bool mig)
{
	bth->flags = u8_replace_bits(bth->flags, mig, EROCE_BTH_MIG);
}

static inline u8 eroce_bth_pad(const struct eroce_bth *bth)
{
	return u8_get_bits(bth->flags, EROCE_BTH_PAD);
}

static inline void eroce_bth_set_pad(struct eroce_bth *bth, u8 pad)
{
	bth->flags = u8_replace_bits(bth->flags, pad, EROCE_BTH_PAD);
}

static inline u8 eroce_bth_tver(const struct eroce_bth *bth)
{
	return u8_get_bits(bth->flags, EROCE_BTH_TVER_MASK);
}

static inline u16 eroce_bth_pkey(const struct eroce_bth *bth)
{
	return be16_to_cpu(bth->pkey);
}

static inline u32 eroce_bth_qpn(const struct eroce_bth *bth)
{
	return be32_get_bits(bth->qpn, EROCE_BTH_QPN);
}

static inline void eroce_bth_set_qpn(struct eroce_bth *bth, u32 qpn)
{
	bth->qpn = be32_replace_bits(bth->qpn, qpn, EROCE_BTH_QPN);
}

static inline bool eroce_bth_fecn(const struct eroce_bth *bth)
{
	return be32_get_bits(bth->qpn, EROCE_BTH_FECN);
}

static inline void eroce_bth_set_fecn(struct eroce_bth *bth, bool fecn)
{
	bth->qpn = be32_replace_bits(bth->qpn, fecn, EROCE_BTH_FECN);
}

static inline bool eroce_bth_becn(const struct eroce_bth *bth)
{
	return be32_get_bits(bth->qpn, EROCE_BTH_BECN);
}

static inline void eroce_bth_set_becn(struct eroce_bth *bth, bool becn)
{
	bth->qpn = be32_replace_bits(bth->qpn, becn, EROCE_BTH_BECN);
}

static inline bool eroce_bth_sr(const struct eroce_bth *bth)
{
	return be32_get_bits(bth->apsn, EROCE_BTH_SR);
}

static inline void eroce_bth_set_sr(struct eroce_bth *bth, bool sr)
{
	bth->apsn = be32_replace_bits(bth->apsn, sr, EROCE_BTH_SR);
}

/* the PSNs a selective-repeat NAK's hole spans, 1 to EROCE_SR_HOLE_MAX */
static inline u32 eroce_bth_sr_hole(const struct eroce_bth *bth)
{
	return be32_get_bits(bth->apsn, EROCE_BTH_SR_HOLE) + 1;
}

/* @hole: 1 to EROCE_SR_HOLE_MAX PSNs */
static inline void eroce_bth_set_sr_hole(struct eroce_bth *bth, u32 hole)
{
	bth->apsn = be32_replace_bits(bth->apsn, hole - 1, EROCE_BTH_SR_HOLE);
}

static inline bool eroce_bth_ackreq(const struct eroce_bth *bth)
{
	return be32_get_bits(bth->apsn, EROCE_BTH_ACKREQ);
}

static inline void eroce_bth_set_ackreq(struct eroce_bth *bth, bool ackreq)
{
	bth->apsn = be32_replace_bits(bth->apsn, ackreq, EROCE_BTH_ACKREQ);
}

static inline u32 eroce_bth_psn(const struct eroce_bth *bth)
{
	return be32_get_bits(bth->apsn, EROCE_BTH_PSN);
}

static inline void eroce_bth_set_psn(struct eroce_bth *bth, u32 psn)
{
	bth->apsn = be32_replace_bits(bth->apsn, psn, EROCE_BTH_PSN);
}

/* RETH */
static inline void eroce_reth_init(struct eroce_reth *reth, u64 va, u32 rkey,
				   u32 len)
{
	eroce_be64_put(reth->va, va);
	reth->rkey = cpu_to_be32(rkey);
	reth->len = cpu_to_be32(len);
}

static inline u64 eroce_reth_va(const struct eroce_reth *reth)
{
	return eroce_be64_get(reth->va);
}

static inline u32 eroce_reth_rkey(const struct eroce_reth *reth)
{
	return be32_to_cpu(reth->rkey);
}

static inline u32 eroce_reth_len(const struct eroce_reth *reth)
{
	return be32_to_cpu(reth->len);
}

/* AETH */
static inline u8 eroce_syn_ack(u8 credit)
{
	return EROCE_SYN_ACK | (credit & EROCE_SYN_VALUE_MASK);
}

static inline u8 eroce_syn_rnr_nak(u8 timer)
{
	return EROCE_SYN_RNR_NAK | (timer & EROCE_SYN_VALUE_MASK);
}

static inline u8 eroce_syn_nak(enum eroce_nak_code code)
{
	return EROCE_SYN_NAK | (code & EROCE_SYN_VALUE_MASK);
}

static inline enum eroce_syn_type eroce_syn_type(u8 syn)
{
	return (enum eroce_syn_type)(syn & EROCE_SYN_TYPE_MASK);
}

static inline u8 eroce_syn_value(u8 syn)
{
	return syn & EROCE_SYN_VALUE_MASK;
}

static inline void eroce_aeth_init(struct eroce_aeth *aeth, u8 syn, u32 msn)
{
	aeth->smsn = be32_encode_bits(syn, EROCE_AETH_SYN) |
		     be32_encode_bits(msn, EROCE_AETH_MSN);
}

static inline u8 eroce_aeth_syn(const struct eroce_aeth *aeth)
{
	return be32_get_bits(aeth->smsn, EROCE_AETH_SYN);
}

static inline u32 eroce_aeth_msn(const struct eroce_aeth *aeth)
{
	return be32_get_bits(aeth->smsn, EROCE_AETH_MSN);
}

/*
 * RNR NAK timer code (5 bits) to the minimum wait in microseconds, per
 * IBTA table 45; code 0 is the longest, 655.36 ms.
 */
static inline u32 eroce_rnr_timer_usec(u8 code)
{
	static const u32 usec[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120,
		160, 240, 320, 480, 640, 960, 1280, 1920,
		2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
		40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
	};

	return usec[code & EROCE_SYN_VALUE_MASK];
}

/* AtomicETH */
static inline void eroce_atmeth_init(struct eroce_atmeth *atm, u64 va,
				     u32 rkey, u64 swap_add, u64 compare)
{
	eroce_be64_put(atm->va, va);
	atm->rkey = cpu_to_be32(rkey);
	eroce_be64_put(atm->swap_add, swap_add);
	eroce_be64_put(atm->compare, compare);
}

static inline u64 eroce_atmeth_va(const struct eroce_atmeth *atm)
{
	return eroce_be64_get(atm->va);
}

static inline u32 eroce_atmeth_rkey(const struct eroce_atmeth *atm)
{
	return be32_to_cpu(atm->rkey);
}

static inline u64 eroce_atmeth_swap_add(const struct eroce_atmeth *atm)
{
	return eroce_be64_get(atm->swap_add);
}

static inline u64 eroce_atmeth_compare(const struct eroce_atmeth *atm)
{
	return eroce_be64_get(atm->compare);
}

/* AtomicAckETH */
static inline void eroce_atmack_init(struct eroce_atmack *ack, u64 orig)
{
	eroce_be64_put(ack->orig, orig);
}

static inline u64 eroce_atmack_orig(const struct eroce_atmack *ack)
{
	return eroce_be64_get(ack->orig);
}

/* DETH */
static inline void eroce_deth_init(struct eroce_deth *deth, u32 qkey, u32 sqp)
{
	deth->qkey = cpu_to_be32(qkey);
	deth->sqp = be32_encode_bits(sqp, EROCE_DETH_SQP);
}

static inline u32 eroce_deth_qkey(const struct eroce_deth *deth)
{
	return be32_to_cpu(deth->qkey);
}

static inline u32 eroce_deth_sqp(const struct eroce_deth *deth)
{
	return be32_get_bits(deth->sqp, EROCE_DETH_SQP);
}

/* IETH */
static inline void eroce_ieth_init(struct eroce_ieth *ieth, u32 rkey)
{
	ieth->rkey = cpu_to_be32(rkey);
}

static inline u32 eroce_ieth_rkey(const struct eroce_ieth *ieth)
{
	return be32_to_cpu(ieth->rkey);
}

/*
 * IB path MTU enum (enum ib_mtu: 1 = 256 ... 5 = 4096) to bytes; 0 for a
 * value outside the enum.
 */
enum eroce_ib_mtu {
	EROCE_IB_MTU_256	= 1,
	EROCE_IB_MTU_512	= 2,
	EROCE_IB_MTU_1024	= 3,
	EROCE_IB_MTU_2048	= 4,
	EROCE_IB_MTU_4096	= 5,
};

static inline u32 eroce_ib_mtu_to_bytes(u32 mtu)
{
	if (mtu < EROCE_IB_MTU_256 || mtu > EROCE_IB_MTU_4096)
		return 0;
	return 128U << mtu;
}

/* the largest IB MTU not above @bytes; 0 when @bytes < 256 */
static inline u32 eroce_bytes_to_ib_mtu(u32 bytes)
{
	u32 mtu;

	for (mtu = EROCE_IB_MTU_4096; mtu >= EROCE_IB_MTU_256; mtu--)
		if (eroce_ib_mtu_to_bytes(mtu) <= bytes)
			return mtu;
	return 0;
}

#endif /* EROCE_WIRE_H */
