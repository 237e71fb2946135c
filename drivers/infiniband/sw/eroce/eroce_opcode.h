/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: the BTH opcodes eroce speaks (RC, UC, UD and the RoCEv2 CNP), what
 * each one carries, which role handles it, and the first check of a
 * received transport header; the send work request opcodes it accepts and
 * the packets each one becomes.  Pure code: constant tables, no locks, any
 * context.
 *
 * Adding a packet opcode is one row in eroce_opcode.c: its headers, its
 * flags and the kind of the role that handles it (enum eroce_resp_kind for
 * a request, enum eroce_match_kind for a response).  Each role file owns a
 * constant table of handlers indexed by its kind (eroce_resp_ops[] in
 * eroce_resp_exec.c, eroce_match_ops[] in eroce_req_match.c) and
 * dispatches through it, so a row of an existing kind is received with no
 * other change; a new kind is one constant here plus its handlers in that
 * table.  The sender
 * reaches a row through the work request table below.  No function
 * pointers here: this file is also built into the userspace unit tests
 * and the fuzzer.
 */
#ifndef EROCE_OPCODE_H
#define EROCE_OPCODE_H

#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>

#include "eroce_shim.h"
#include "eroce_wire.h"

/* the transport is in bits 7:5 of the opcode */
#define EROCE_OP_TRANSPORT_MASK	0xe0
#define EROCE_OP_RC		0x00
#define EROCE_OP_UC		0x20
#define EROCE_OP_RD		0x40
#define EROCE_OP_UD		0x60
#define EROCE_OP_CNP_CLASS	0x80

enum eroce_opcode {
	EROCE_OP_RC_SEND_FIRST			= 0x00,
	EROCE_OP_RC_SEND_MIDDLE			= 0x01,
	EROCE_OP_RC_SEND_LAST			= 0x02,
	EROCE_OP_RC_SEND_LAST_IMM		= 0x03,
	EROCE_OP_RC_SEND_ONLY			= 0x04,
	EROCE_OP_RC_SEND_ONLY_IMM		= 0x05,
	EROCE_OP_RC_WRITE_FIRST			= 0x06,
	EROCE_OP_RC_WRITE_MIDDLE		= 0x07,
	EROCE_OP_RC_WRITE_LAST			= 0x08,
	EROCE_OP_RC_WRITE_LAST_IMM		= 0x09,
	EROCE_OP_RC_WRITE_ONLY			= 0x0a,
	EROCE_OP_RC_WRITE_ONLY_IMM		= 0x0b,
	EROCE_OP_RC_READ_REQUEST		= 0x0c,
	EROCE_OP_RC_READ_RESPONSE_FIRST		= 0x0d,
	EROCE_OP_RC_READ_RESPONSE_MIDDLE	= 0x0e,
	EROCE_OP_RC_READ_RESPONSE_LAST		= 0x0f,
	EROCE_OP_RC_READ_RESPONSE_ONLY		= 0x10,
	EROCE_OP_RC_ACK				= 0x11,
	EROCE_OP_RC_ATOMIC_ACK			= 0x12,
	EROCE_OP_RC_CMP_SWAP			= 0x13,
	EROCE_OP_RC_FETCH_ADD			= 0x14,
	EROCE_OP_RC_SEND_LAST_INV		= 0x16,
	EROCE_OP_RC_SEND_ONLY_INV		= 0x17,
	EROCE_OP_RC_ATOMIC_WRITE		= 0x1d,	/* IBA 1.5 */
	/* UC: the SEND and WRITE opcodes of RC, in the UC transport */
	EROCE_OP_UC_SEND_FIRST			= 0x20,
	EROCE_OP_UC_SEND_MIDDLE			= 0x21,
	EROCE_OP_UC_SEND_LAST			= 0x22,
	EROCE_OP_UC_SEND_LAST_IMM		= 0x23,
	EROCE_OP_UC_SEND_ONLY			= 0x24,
	EROCE_OP_UC_SEND_ONLY_IMM		= 0x25,
	EROCE_OP_UC_WRITE_FIRST			= 0x26,
	EROCE_OP_UC_WRITE_MIDDLE		= 0x27,
	EROCE_OP_UC_WRITE_LAST			= 0x28,
	EROCE_OP_UC_WRITE_LAST_IMM		= 0x29,
	EROCE_OP_UC_WRITE_ONLY			= 0x2a,
	EROCE_OP_UC_WRITE_ONLY_IMM		= 0x2b,
	EROCE_OP_UD_SEND_ONLY			= 0x64,
	EROCE_OP_UD_SEND_ONLY_IMM		= 0x65,
	EROCE_OP_CNP				= 0x81,
};

/*
 * Headers that may follow the BTH, in wire order: a packet carries at most
 * one of RETH/AETH/AtomicETH/DETH, then at most one of ImmDt/IETH/
 * AtomicAckETH.  CNPRSVD is the CNP's 16 reserved bytes.
 */
enum eroce_hdr_type {
	EROCE_HDR_RETH,
	EROCE_HDR_AETH,
	EROCE_HDR_ATMETH,
	EROCE_HDR_DETH,
	EROCE_HDR_IMMDT,
	EROCE_HDR_IETH,
	EROCE_HDR_ATMACK,
	EROCE_HDR_CNPRSVD,
	EROCE_HDR_NUM,
};

/* struct eroce_opcode_info.flags */
enum eroce_opf {
	EROCE_OPF_RETH		= BIT(EROCE_HDR_RETH),
	EROCE_OPF_AETH		= BIT(EROCE_HDR_AETH),
	EROCE_OPF_ATMETH	= BIT(EROCE_HDR_ATMETH),
	EROCE_OPF_DETH		= BIT(EROCE_HDR_DETH),
	EROCE_OPF_IMMDT		= BIT(EROCE_HDR_IMMDT),
	EROCE_OPF_IETH		= BIT(EROCE_HDR_IETH),
	EROCE_OPF_ATMACK	= BIT(EROCE_HDR_ATMACK),
	EROCE_OPF_CNPRSVD	= BIT(EROCE_HDR_CNPRSVD),
	EROCE_OPF_PAYLOAD	= BIT(8),	/* may carry data */
	EROCE_OPF_REQ		= BIT(9),	/* requester -> responder */
	EROCE_OPF_RESP		= BIT(10),	/* responder -> requester */
	EROCE_OPF_START		= BIT(11),	/* first packet of a message */
	EROCE_OPF_MIDDLE	= BIT(12),
	EROCE_OPF_END		= BIT(13),	/* last packet of a message */
	EROCE_OPF_SEND		= BIT(14),
	EROCE_OPF_WRITE		= BIT(15),
	EROCE_OPF_READ		= BIT(16),
	EROCE_OPF_ATOMIC	= BIT(17),
	EROCE_OPF_ACK		= BIT(18),	/* ACK, ATOMIC ACK */
	EROCE_OPF_RWQE		= BIT(19),	/* consumes a receive WQE */
	EROCE_OPF_COMP		= BIT(20),	/* completes the receive WQE */
	EROCE_OPF_RC		= BIT(21),
	EROCE_OPF_UD		= BIT(22),
	EROCE_OPF_CNP		= BIT(23),
	EROCE_OPF_UC		= BIT(24),
	EROCE_OPF_ATOMIC_WRITE	= BIT(25),
	EROCE_OPF_ONLY		= EROCE_OPF_START | EROCE_OPF_END,
};

/*
 * What the responder does with a request (struct eroce_opcode_info.resp):
 * the index of its handlers in eroce_resp_exec.c.  NONE: not a request.
 */
enum eroce_resp_kind {
	EROCE_RESP_NONE,
	EROCE_RESP_SEND,	/* into a receive WQE (RC, UC and UD) */
	EROCE_RESP_WRITE,	/* into the MR its first packet's RETH names */
	EROCE_RESP_READ,	/* answered by read response packets */
	EROCE_RESP_ATOMIC,	/* executed once, answered by an atomic ACK */
	/* ATOMIC WRITE: executed once, answered by an empty read response */
	EROCE_RESP_ATOMIC_WRITE,
	EROCE_RESP_KINDS,
};

/*
 * How the sender matches a response to its send entries (struct
 * eroce_opcode_info.match): the index of its handlers in
 * eroce_req_match.c.  NONE: not a response.
 */
enum eroce_match_kind {
	EROCE_MATCH_NONE,
	EROCE_MATCH_ACK,	/* an ACK, RNR NAK or NAK of request PSNs */
	EROCE_MATCH_READ_RESP,	/* data of an outstanding READ */
	EROCE_MATCH_ATOMIC_ACK,	/* the result of an outstanding atomic */
	EROCE_MATCH_KINDS,
};

struct eroce_opcode_info {
	const char *name;
	u32 flags;			/* enum eroce_opf */
	bool valid;			/* checked before anything else */
	u8 hdr_len;			/* BTH + extension headers */
	u8 resp;			/* enum eroce_resp_kind */
	u8 match;			/* enum eroce_match_kind */
	u8 offset[EROCE_HDR_NUM];	/* from the BTH; if flags has it */
};

/* NULL unless @opcode is one eroce accepts */
const struct eroce_opcode_info *eroce_opcode_info(u8 opcode);

/* "RC_SEND_FIRST" ...; "UNKNOWN" for an invalid opcode */
const char *eroce_opcode_name(u8 opcode);

/* extension header @type of the packet starting with @bth, or NULL */
static inline void *eroce_hdr(const struct eroce_opcode_info *info,
			      struct eroce_bth *bth, enum eroce_hdr_type type)
{
	if (!(info->flags & BIT(type)))
		return NULL;
	return (u8 *)bth + info->offset[type];
}

/* result of eroce_hdr_check() */
struct eroce_hdr_info {
	const struct eroce_opcode_info *op;
	u32 paylen;			/* data bytes, pad excluded */
	u8 pad;				/* BTH PadCnt */
};

int eroce_hdr_check(const void *buf, size_t len, struct eroce_hdr_info *hi);

/*
 * The responder's message sequence rule: may a request of @flags come
 * next?  @in_msg is the EROCE_OPF_SEND or EROCE_OPF_WRITE of the message
 * in progress, 0 between messages.  A message in progress takes only a
 * middle or last packet of its own kind; between messages a request
 * must start one (a first or only packet; READs and atomics are only
 * packets).
 */
static inline bool eroce_opcode_seq_ok(u32 in_msg, u32 flags)
{
	u32 kind = flags & (EROCE_OPF_SEND | EROCE_OPF_WRITE);

	if (in_msg)
		return !(flags & EROCE_OPF_START) && kind == in_msg;
	return !!(flags & EROCE_OPF_START) || !kind;
}

/* struct eroce_wr_info.flags */
enum eroce_wrf {
	EROCE_WRF_RC		= BIT(0),	/* posted on RC QPs */
	EROCE_WRF_UD		= BIT(1),	/* posted on UD (and GSI) QPs */
	EROCE_WRF_READ		= BIT(2),	/* RDMA READ */
	EROCE_WRF_ATOMIC	= BIT(3),	/* 64-bit atomic */
	EROCE_WRF_RDMA		= BIT(4),	/* names a remote address */
	EROCE_WRF_IMM		= BIT(5),	/* carries immediate data */
	EROCE_WRF_INV		= BIT(6),	/* carries an rkey to invalidate */
	EROCE_WRF_LOCAL		= BIT(7),	/* a local operation: no packet */
	EROCE_WRF_KERNEL	= BIT(8),	/* kernel QPs only */
	EROCE_WRF_UC		= BIT(9),	/* posted on UC QPs */
	EROCE_WRF_USER		= BIT(10),	/* userspace QPs only */
	EROCE_WRF_ATOMIC_WRITE	= BIT(11),	/* 8 bytes stored at once */
};

/*
 * The fast registration work request, IB_WR_REG_MR of the kernel (it has
 * no IB_UVERBS_WR_ value: only kernel consumers post it), and its
 * completion opcode IB_WC_REG_MR.
 */
#define EROCE_WR_REG_MR		0x20
#define EROCE_WC_REG_MR		8

/*
 * ATOMIC WRITE (IBA 1.5): IBV_WR_ATOMIC_WRITE and IBV_WC_ATOMIC_WRITE of
 * rdma-core.  Linux 6.1 names neither (only userspace QPs post it).
 */
#define EROCE_WR_ATOMIC_WRITE	15
#define EROCE_WC_ATOMIC_WRITE	9

/*
 * A send work request opcode (IB_UVERBS_WR_*; the kernel's IB_WR_* have
 * the same values) as the transport sees it: where it may be posted, the
 * completion it gets and the packets it becomes.  Adding an opcode is one
 * row here, plus the packet opcode rows its packets use (see the top of
 * this file).
 */
struct eroce_wr_info {
	const char *name;
	u32 flags;			/* enum eroce_wrf; 0: not accepted */
	u8 wc_opcode;			/* IB_UVERBS_WC_* of its completion */
	/*
	 * RC: a one-packet message, then the packets of a longer one; UC
	 * sends the same opcodes in its own transport (eroce_wr_opcode())
	 */
	u8 rc_only;
	u8 rc_first;
	u8 rc_middle;
	u8 rc_last;
	u8 ud_only;			/* UD: its one packet */
};

#define EROCE_WR_OPCODES	(EROCE_WR_REG_MR + 1)

/*
 * The transport of the packets a QP of @type (IB_QPT_*, whose RC, UC and
 * UD values are the IB_UVERBS_QPT_* ones) sends and receives, as an
 * EROCE_OPF_ flag, and the EROCE_WRF_ flag of the work requests it takes.
 * UD and the GSI QP share the UD transport.
 */
static inline u32 eroce_qp_type_opf(u32 type)
{
	switch (type) {
	case IB_UVERBS_QPT_RC:
		return EROCE_OPF_RC;
	case IB_UVERBS_QPT_UC:
		return EROCE_OPF_UC;
	default:
		return EROCE_OPF_UD;
	}
}

static inline u32 eroce_qp_type_wrf(u32 type)
{
	switch (type) {
	case IB_UVERBS_QPT_RC:
		return EROCE_WRF_RC;
	case IB_UVERBS_QPT_UC:
		return EROCE_WRF_UC;
	default:
		return EROCE_WRF_UD;
	}
}

/* NULL unless eroce accepts @opcode on some QP type */
const struct eroce_wr_info *eroce_wr_info(u32 opcode);
u8 eroce_wc_opcode_from_wr(u8 opcode);

/*
 * A READ, an atomic or an ATOMIC WRITE: it completes with its response,
 * not an ACK, and takes one of the peer's responder resources.
 */
static inline bool eroce_wr_rd_atomic(const struct eroce_wr_info *wi)
{
	return wi->flags & (EROCE_WRF_READ | EROCE_WRF_ATOMIC |
			    EROCE_WRF_ATOMIC_WRITE);
}

/* a local operation (REG_MR, LOCAL_INV, BIND_MW): executed, never sent */
static inline bool eroce_wr_local(const struct eroce_wr_info *wi)
{
	return wi->flags & EROCE_WRF_LOCAL;
}

/*
 * The opcode of a packet of a message of @wi, RC or (@uc) UC.  A UC
 * opcode is the RC one with the UC transport bits: only SEND and WRITE
 * rows, which carry EROCE_WRF_UC, have one, and their RC opcodes are
 * the 0x00-0x0b that UC mirrors.
 */
static inline u8 eroce_wr_opcode(const struct eroce_wr_info *wi, bool uc,
				 bool first, bool last)
{
	u8 rc;

	if (first)
		rc = last ? wi->rc_only : wi->rc_first;
	else
		rc = last ? wi->rc_last : wi->rc_middle;
	return uc ? rc | EROCE_OP_UC : rc;
}

#endif /* EROCE_OPCODE_H */
