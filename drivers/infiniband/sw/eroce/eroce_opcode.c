// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce: the opcode table and the receive-side transport header check.
 *
 * Owns a constant 256-entry table indexed by the BTH opcode; an entry is
 * used only when its valid bit is set, so an unknown opcode never reaches
 * a length, an offset or a role kind.  Each entry names the kind of the
 * responder's or the sender's handling, which indexes that role's own
 * table of handlers (eroce_resp_exec.c, eroce_req_match.c); none are
 * here.  And the table of send work request opcodes, indexed by
 * IB_UVERBS_WR_*, bounds-checked the same way.  Runs in any context (softirq receive,
 * workqueue engines, userspace tests); takes no locks and keeps no state.
 */

#include "eroce_opcode.h"

/*
 * Table entries with no, one or two extension headers (named by their
 * EROCE_HDR_ suffix); lengths and offsets follow from the header sizes.
 * @role is the role that handles the opcode and its kind: RESP(SEND) for
 * a request the responder executes as a SEND, MATCH(ACK) for a response
 * the sender matches as an ACK, NO_ROLE for the CNP (eroce_deliver.c).
 */
#define EROCE_CNPRSVD_BYTES	EROCE_CNP_RSVD_BYTES

#define RESP(kind)	.resp = EROCE_RESP_##kind
#define MATCH(kind)	.match = EROCE_MATCH_##kind
#define NO_ROLE		.resp = EROCE_RESP_NONE

#define OP0(op, role, f)						\
	[EROCE_OP_##op] = {						\
		.name = #op,						\
		.valid = true,						\
		role,							\
		.flags = (f),						\
		.hdr_len = EROCE_BTH_BYTES,				\
	}

#define OP1(op, role, f, h1)						\
	[EROCE_OP_##op] = {						\
		.name = #op,						\
		.valid = true,						\
		role,							\
		.flags = (f) | EROCE_OPF_##h1,				\
		.hdr_len = EROCE_BTH_BYTES + EROCE_##h1##_BYTES,	\
		.offset[EROCE_HDR_##h1] = EROCE_BTH_BYTES,		\
	}

#define OP2(op, role, f, h1, h2)					\
	[EROCE_OP_##op] = {						\
		.name = #op,						\
		.valid = true,						\
		role,							\
		.flags = (f) | EROCE_OPF_##h1 | EROCE_OPF_##h2,		\
		.hdr_len = EROCE_BTH_BYTES + EROCE_##h1##_BYTES +	\
			   EROCE_##h2##_BYTES,				\
		.offset[EROCE_HDR_##h1] = EROCE_BTH_BYTES,		\
		.offset[EROCE_HDR_##h2] = EROCE_BTH_BYTES +		\
					  EROCE_##h1##_BYTES,		\
	}

/* flags shared by families of opcodes */
#define F_RC_SEND	(EROCE_OPF_RC | EROCE_OPF_REQ | EROCE_OPF_SEND | \
			 EROCE_OPF_PAYLOAD | EROCE_OPF_RWQE)
#define F_RC_SEND_END	(F_RC_SEND | EROCE_OPF_END | EROCE_OPF_COMP)
#define F_RC_SEND_ONLY	(F_RC_SEND | EROCE_OPF_ONLY | EROCE_OPF_COMP)
#define F_RC_WRITE	(EROCE_OPF_RC | EROCE_OPF_REQ | EROCE_OPF_WRITE | \
			 EROCE_OPF_PAYLOAD)
#define F_RC_WRITE_IMM	(F_RC_WRITE | EROCE_OPF_RWQE | EROCE_OPF_COMP)
#define F_RC_READ_REQ	(EROCE_OPF_RC | EROCE_OPF_REQ | EROCE_OPF_READ | \
			 EROCE_OPF_ONLY)
#define F_RC_READ_RESP	(EROCE_OPF_RC | EROCE_OPF_RESP | EROCE_OPF_READ | \
			 EROCE_OPF_PAYLOAD)
#define F_RC_ACK	(EROCE_OPF_RC | EROCE_OPF_RESP | EROCE_OPF_ACK | \
			 EROCE_OPF_ONLY)
#define F_RC_ATOMIC	(EROCE_OPF_RC | EROCE_OPF_REQ | EROCE_OPF_ATOMIC | \
			 EROCE_OPF_ONLY)
#define F_RC_ATOMIC_WRITE (EROCE_OPF_RC | EROCE_OPF_REQ | \
			   EROCE_OPF_ATOMIC_WRITE | EROCE_OPF_PAYLOAD | \
			   EROCE_OPF_ONLY)
#define F_UC_SEND	(EROCE_OPF_UC | EROCE_OPF_REQ | EROCE_OPF_SEND | \
			 EROCE_OPF_PAYLOAD | EROCE_OPF_RWQE)
#define F_UC_SEND_END	(F_UC_SEND | EROCE_OPF_END | EROCE_OPF_COMP)
#define F_UC_SEND_ONLY	(F_UC_SEND | EROCE_OPF_ONLY | EROCE_OPF_COMP)
#define F_UC_WRITE	(EROCE_OPF_UC | EROCE_OPF_REQ | EROCE_OPF_WRITE | \
			 EROCE_OPF_PAYLOAD)
#define F_UC_WRITE_IMM	(F_UC_WRITE | EROCE_OPF_RWQE | EROCE_OPF_COMP)
#define F_UD_SEND	(EROCE_OPF_UD | EROCE_OPF_REQ | EROCE_OPF_SEND | \
			 EROCE_OPF_PAYLOAD | EROCE_OPF_RWQE | \
			 EROCE_OPF_COMP | EROCE_OPF_ONLY)
#define F_CNP		(EROCE_OPF_CNP | EROCE_OPF_ONLY)

static const struct eroce_opcode_info eroce_opcode_table[256] = {
	OP0(RC_SEND_FIRST,		RESP(SEND),
	    F_RC_SEND | EROCE_OPF_START),
	OP0(RC_SEND_MIDDLE,		RESP(SEND),
	    F_RC_SEND | EROCE_OPF_MIDDLE),
	OP0(RC_SEND_LAST,		RESP(SEND), F_RC_SEND_END),
	OP1(RC_SEND_LAST_IMM,		RESP(SEND), F_RC_SEND_END, IMMDT),
	OP1(RC_SEND_LAST_INV,		RESP(SEND), F_RC_SEND_END, IETH),
	OP0(RC_SEND_ONLY,		RESP(SEND), F_RC_SEND_ONLY),
	OP1(RC_SEND_ONLY_IMM,		RESP(SEND), F_RC_SEND_ONLY, IMMDT),
	OP1(RC_SEND_ONLY_INV,		RESP(SEND), F_RC_SEND_ONLY, IETH),
	OP1(RC_WRITE_FIRST,		RESP(WRITE),
	    F_RC_WRITE | EROCE_OPF_START, RETH),
	OP0(RC_WRITE_MIDDLE,		RESP(WRITE),
	    F_RC_WRITE | EROCE_OPF_MIDDLE),
	OP0(RC_WRITE_LAST,		RESP(WRITE),
	    F_RC_WRITE | EROCE_OPF_END),
	OP1(RC_WRITE_LAST_IMM,		RESP(WRITE),
	    F_RC_WRITE_IMM | EROCE_OPF_END, IMMDT),
	OP1(RC_WRITE_ONLY,		RESP(WRITE),
	    F_RC_WRITE | EROCE_OPF_ONLY, RETH),
	OP2(RC_WRITE_ONLY_IMM,		RESP(WRITE),
	    F_RC_WRITE_IMM | EROCE_OPF_ONLY, RETH, IMMDT),
	OP1(RC_READ_REQUEST,		RESP(READ), F_RC_READ_REQ, RETH),
	OP1(RC_READ_RESPONSE_FIRST,	MATCH(READ_RESP),
	    F_RC_READ_RESP | EROCE_OPF_START, AETH),
	OP0(RC_READ_RESPONSE_MIDDLE,	MATCH(READ_RESP),
	    F_RC_READ_RESP | EROCE_OPF_MIDDLE),
	OP1(RC_READ_RESPONSE_LAST,	MATCH(READ_RESP),
	    F_RC_READ_RESP | EROCE_OPF_END, AETH),
	OP1(RC_READ_RESPONSE_ONLY,	MATCH(READ_RESP),
	    F_RC_READ_RESP | EROCE_OPF_ONLY, AETH),
	OP1(RC_ACK,			MATCH(ACK), F_RC_ACK, AETH),
	OP2(RC_ATOMIC_ACK,		MATCH(ATOMIC_ACK),
	    F_RC_ACK | EROCE_OPF_ATOMIC, AETH, ATMACK),
	OP1(RC_CMP_SWAP,		RESP(ATOMIC), F_RC_ATOMIC, ATMETH),
	OP1(RC_FETCH_ADD,		RESP(ATOMIC), F_RC_ATOMIC, ATMETH),
	OP1(RC_ATOMIC_WRITE,		RESP(ATOMIC_WRITE), F_RC_ATOMIC_WRITE,
	    RETH),
	OP0(UC_SEND_FIRST,		RESP(SEND),
	    F_UC_SEND | EROCE_OPF_START),
	OP0(UC_SEND_MIDDLE,		RESP(SEND),
	    F_UC_SEND | EROCE_OPF_MIDDLE),
	OP0(UC_SEND_LAST,		RESP(SEND), F_UC_SEND_END),
	OP1(UC_SEND_LAST_IMM,		RESP(SEND), F_UC_SEND_END, IMMDT),
	OP0(UC_SEND_ONLY,		RESP(SEND), F_UC_SEND_ONLY),
	OP1(UC_SEND_ONLY_IMM,		RESP(SEND), F_UC_SEND_ONLY, IMMDT),
	OP1(UC_WRITE_FIRST,		RESP(WRITE),
	    F_UC_WRITE | EROCE_OPF_START, RETH),
	OP0(UC_WRITE_MIDDLE,		RESP(WRITE),
	    F_UC_WRITE | EROCE_OPF_MIDDLE),
	OP0(UC_WRITE_LAST,		RESP(WRITE),
	    F_UC_WRITE | EROCE_OPF_END),
	OP1(UC_WRITE_LAST_IMM,		RESP(WRITE),
	    F_UC_WRITE_IMM | EROCE_OPF_END, IMMDT),
	OP1(UC_WRITE_ONLY,		RESP(WRITE),
	    F_UC_WRITE | EROCE_OPF_ONLY, RETH),
	OP2(UC_WRITE_ONLY_IMM,		RESP(WRITE),
	    F_UC_WRITE_IMM | EROCE_OPF_ONLY, RETH, IMMDT),
	OP1(UD_SEND_ONLY,		RESP(SEND), F_UD_SEND, DETH),
	OP2(UD_SEND_ONLY_IMM,		RESP(SEND), F_UD_SEND, DETH, IMMDT),
	OP1(CNP,			NO_ROLE, F_CNP, CNPRSVD),
};

const struct eroce_opcode_info *eroce_opcode_info(u8 opcode)
{
	const struct eroce_opcode_info *info = &eroce_opcode_table[opcode];

	return likely(info->valid) ? info : NULL;
}

const char *eroce_opcode_name(u8 opcode)
{
	const struct eroce_opcode_info *info = eroce_opcode_info(opcode);

	return info ? info->name : "UNKNOWN";
}

/*
 * Send work requests: WR(opcode, flags, completion, RC packets) with the
 * RC packets named by their EROCE_OP_RC_ suffixes (only, first, middle,
 * last), UD_WR() for those UD QPs take as well.  EROCE_WRF_UC in the
 * flags: UC QPs take it too, with the UC twins of its RC packets.
 */
#define WR(op, f, wc, o, fi, mi, la)					\
	[IB_UVERBS_WR_##op] = {						\
		.name = #op,						\
		.flags = (f) | EROCE_WRF_RC,				\
		.wc_opcode = IB_UVERBS_WC_##wc,				\
		.rc_only = EROCE_OP_RC_##o,				\
		.rc_first = EROCE_OP_RC_##fi,				\
		.rc_middle = EROCE_OP_RC_##mi,				\
		.rc_last = EROCE_OP_RC_##la,				\
	}

#define UD_WR(op, f, wc, o, fi, mi, la, ud)				\
	[IB_UVERBS_WR_##op] = {						\
		.name = #op,						\
		.flags = (f) | EROCE_WRF_RC | EROCE_WRF_UD,		\
		.wc_opcode = IB_UVERBS_WC_##wc,				\
		.rc_only = EROCE_OP_RC_##o,				\
		.rc_first = EROCE_OP_RC_##fi,				\
		.rc_middle = EROCE_OP_RC_##mi,				\
		.rc_last = EROCE_OP_RC_##la,				\
		.ud_only = EROCE_OP_UD_##ud,				\
	}

/* a local operation, no packets; the QP types in its flags */
#define LOCAL_WR(name_, op, f, wc)					\
	[op] = {							\
		.name = #name_,						\
		.flags = (f) | EROCE_WRF_LOCAL,				\
		.wc_opcode = wc,					\
	}

#define ANY_QPT		(EROCE_WRF_RC | EROCE_WRF_UC | EROCE_WRF_UD)

static const struct eroce_wr_info eroce_wr_table[EROCE_WR_OPCODES] = {
	UD_WR(SEND, EROCE_WRF_UC, SEND,
	      SEND_ONLY, SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_ONLY),
	UD_WR(SEND_WITH_IMM, EROCE_WRF_IMM | EROCE_WRF_UC, SEND,
	      SEND_ONLY_IMM, SEND_FIRST, SEND_MIDDLE, SEND_LAST_IMM,
	      SEND_ONLY_IMM),
	WR(SEND_WITH_INV, EROCE_WRF_INV, SEND,
	   SEND_ONLY_INV, SEND_FIRST, SEND_MIDDLE, SEND_LAST_INV),
	WR(RDMA_WRITE, EROCE_WRF_RDMA | EROCE_WRF_UC, RDMA_WRITE,
	   WRITE_ONLY, WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST),
	WR(RDMA_WRITE_WITH_IMM,
	   EROCE_WRF_RDMA | EROCE_WRF_IMM | EROCE_WRF_UC, RDMA_WRITE,
	   WRITE_ONLY_IMM, WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST_IMM),
	WR(RDMA_READ, EROCE_WRF_RDMA | EROCE_WRF_READ, RDMA_READ,
	   READ_REQUEST, READ_REQUEST, READ_REQUEST, READ_REQUEST),
	WR(ATOMIC_CMP_AND_SWP, EROCE_WRF_RDMA | EROCE_WRF_ATOMIC, COMP_SWAP,
	   CMP_SWAP, CMP_SWAP, CMP_SWAP, CMP_SWAP),
	WR(ATOMIC_FETCH_AND_ADD, EROCE_WRF_RDMA | EROCE_WRF_ATOMIC, FETCH_ADD,
	   FETCH_ADD, FETCH_ADD, FETCH_ADD, FETCH_ADD),
	/* one packet of 8 bytes, userspace QPs only (Linux 6.1 lacks it) */
	[EROCE_WR_ATOMIC_WRITE] = {
		.name = "ATOMIC_WRITE",
		.flags = EROCE_WRF_RC | EROCE_WRF_RDMA |
			 EROCE_WRF_ATOMIC_WRITE | EROCE_WRF_USER,
		.wc_opcode = EROCE_WC_ATOMIC_WRITE,
		.rc_only = EROCE_OP_RC_ATOMIC_WRITE,
		.rc_first = EROCE_OP_RC_ATOMIC_WRITE,
		.rc_middle = EROCE_OP_RC_ATOMIC_WRITE,
		.rc_last = EROCE_OP_RC_ATOMIC_WRITE,
	},
	LOCAL_WR(LOCAL_INV, IB_UVERBS_WR_LOCAL_INV,
		 EROCE_WRF_INV | ANY_QPT, IB_UVERBS_WC_LOCAL_INV),
	LOCAL_WR(BIND_MW, IB_UVERBS_WR_BIND_MW,
		 EROCE_WRF_USER | EROCE_WRF_RC | EROCE_WRF_UC,
		 IB_UVERBS_WC_BIND_MW),
	LOCAL_WR(REG_MR, EROCE_WR_REG_MR, EROCE_WRF_KERNEL | ANY_QPT,
		 EROCE_WC_REG_MR),
};

const struct eroce_wr_info *eroce_wr_info(u32 opcode)
{
	const struct eroce_wr_info *wi;

	if (opcode >= EROCE_WR_OPCODES)
		return NULL;
	wi = &eroce_wr_table[opcode];
	return wi->flags ? wi : NULL;
}

/* the completion opcode of a send work request opcode */
u8 eroce_wc_opcode_from_wr(u8 opcode)
{
	const struct eroce_wr_info *wi = eroce_wr_info(opcode);

	/* a malformed entry fails as a send */
	return wi ? wi->wc_opcode : IB_UVERBS_WC_SEND;
}

/**
 * eroce_hdr_check() - validate the transport headers of a received packet
 * @buf: the BTH, i.e. the start of the UDP payload
 * @len: UDP payload bytes, BTH through ICRC
 * @hi: filled in on success
 *
 * Checks what needs no QP: the opcode is one eroce knows, TVer is 0, the
 * headers and the ICRC fit, and payload and PadCnt are consistent (no
 * payload where the opcode carries none, payload plus pad a multiple of
 * four, pad only on the last packet of a message).  Reads nothing past
 * @len.  The ICRC itself is checked separately (eroce_icrc.h).
 *
 * Return: 0; -EOPNOTSUPP for an unknown opcode; -EPROTONOSUPPORT for a
 * transport version other than 0; -EINVAL for a malformed packet.
 */
int eroce_hdr_check(const void *buf, size_t len, struct eroce_hdr_info *hi)
{
	const struct eroce_bth *bth = buf;
	const struct eroce_opcode_info *op;
	size_t body;
	u8 pad;

	if (unlikely(len < EROCE_BTH_BYTES + EROCE_ICRC_BYTES))
		return -EINVAL;
	op = eroce_opcode_info(bth->opcode);
	if (unlikely(!op))
		return -EOPNOTSUPP;
	if (unlikely(eroce_bth_tver(bth) != EROCE_BTH_TVER))
		return -EPROTONOSUPPORT;
	if (unlikely(len < (size_t)op->hdr_len + EROCE_ICRC_BYTES))
		return -EINVAL;

	body = len - op->hdr_len - EROCE_ICRC_BYTES;	/* payload + pad */
	pad = eroce_bth_pad(bth);
	if (!(op->flags & EROCE_OPF_PAYLOAD)) {
		if (unlikely(body || pad))
			return -EINVAL;
	} else {
		if (unlikely(body % 4 || pad > body))
			return -EINVAL;
		if (unlikely(pad && !(op->flags & EROCE_OPF_END)))
			return -EINVAL;
	}

	hi->op = op;
	hi->paylen = body - pad;
	hi->pad = pad;
	return 0;
}
