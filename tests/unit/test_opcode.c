// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for eroce_opcode.c: the table (all 256 opcodes), header
 * offsets, each row's role kind against its flags, the work request table
 * against it, and eroce_hdr_check() on good, bad and truncated packets
 * (exact-size heap buffers, so ASan catches any read past the end).
 */
#include "eroce_opcode.h"
#include "unit.h"
#include "icrc_vectors.h"

static const u8 valid_ops[] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
	0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16,
	0x17, 0x1d,
	0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a,
	0x2b,
	0x64, 0x65, 0x81,
};

static bool expect_valid(unsigned int op)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(valid_ops); i++)
		if (valid_ops[i] == op)
			return true;
	return false;
}

/* header sizes, in wire order, from the structs themselves */
static const size_t hdr_size[EROCE_HDR_NUM] = {
	[EROCE_HDR_RETH] = sizeof(struct eroce_reth),
	[EROCE_HDR_AETH] = sizeof(struct eroce_aeth),
	[EROCE_HDR_ATMETH] = sizeof(struct eroce_atmeth),
	[EROCE_HDR_DETH] = sizeof(struct eroce_deth),
	[EROCE_HDR_IMMDT] = sizeof(struct eroce_immdt),
	[EROCE_HDR_IETH] = sizeof(struct eroce_ieth),
	[EROCE_HDR_ATMACK] = sizeof(struct eroce_atmack),
	[EROCE_HDR_CNPRSVD] = 16,
};

static void test_all_256(void)
{
	unsigned int op;
	int nvalid = 0;

	for (op = 0; op < 256; op++) {
		const struct eroce_opcode_info *info = eroce_opcode_info(op);

		if (!expect_valid(op)) {
			CHECK(!info);
			if (info)
				fprintf(stderr, "  opcode 0x%02x\n", op);
			CHECK(!strcmp(eroce_opcode_name(op), "UNKNOWN"));
			continue;
		}
		nvalid++;
		CHECK(info && info->valid);
		if (!info)
			continue;
		CHECK(info->name && strcmp(info->name, "UNKNOWN"));
		CHECK(eroce_opcode_name(op) == info->name);
	}
	CHECK_EQ(nvalid, ARRAY_SIZE(valid_ops));
}

static void test_lengths_and_offsets(void)
{
	static const u32 transports = EROCE_OPF_RC | EROCE_OPF_UC |
				      EROCE_OPF_UD | EROCE_OPF_CNP;
	size_t i;
	int h;

	for (i = 0; i < ARRAY_SIZE(valid_ops); i++) {
		u8 op = valid_ops[i];
		const struct eroce_opcode_info *info = eroce_opcode_info(op);
		size_t off = sizeof(struct eroce_bth);
		int first = 0, second = 0;

		if (!info) {
			CHECK(info);
			continue;
		}
		for (h = 0; h < EROCE_HDR_NUM; h++) {
			if (!(info->flags & BIT(h)))
				continue;
			CHECK_EQ(info->offset[h], off);
			CHECK_EQ(off % 4, 0);
			off += hdr_size[h];
			if (h <= EROCE_HDR_DETH)
				first++;
			else if (h <= EROCE_HDR_ATMACK)
				second++;
		}
		CHECK_EQ(info->hdr_len, off);
		CHECK(first <= 1 && second <= 1);

		/* the transport in the top three bits matches the flags */
		switch (op & EROCE_OP_TRANSPORT_MASK) {
		case EROCE_OP_RC:
			CHECK((info->flags & transports) == EROCE_OPF_RC);
			CHECK(!strncmp(info->name, "RC_", 3));
			break;
		case EROCE_OP_UC: {
			/* the twin of the RC SEND or WRITE opcode */
			const struct eroce_opcode_info *rc =
				eroce_opcode_info(op & ~EROCE_OP_TRANSPORT_MASK);

			CHECK((info->flags & transports) == EROCE_OPF_UC);
			CHECK(!strncmp(info->name, "UC_", 3));
			CHECK(rc && !strcmp(rc->name + 3, info->name + 3) &&
			      (rc->flags & ~EROCE_OPF_RC) ==
			      (info->flags & ~EROCE_OPF_UC) &&
			      rc->hdr_len == info->hdr_len &&
			      rc->resp == info->resp);
			CHECK(info->flags & (EROCE_OPF_SEND | EROCE_OPF_WRITE));
			break;
		}
		case EROCE_OP_UD:
			CHECK((info->flags & transports) == EROCE_OPF_UD);
			CHECK(info->flags & EROCE_OPF_DETH);
			CHECK(!strncmp(info->name, "UD_", 3));
			break;
		default:
			CHECK_EQ(op, EROCE_OP_CNP);
			CHECK(info->flags & EROCE_OPF_CNP);
			CHECK(!(info->flags & (EROCE_OPF_RC | EROCE_OPF_UC |
					       EROCE_OPF_UD)));
			break;
		}

		/* one position; requests and responses apart */
		if (info->flags & EROCE_OPF_MIDDLE)
			CHECK(!(info->flags & EROCE_OPF_ONLY));
		else
			CHECK(info->flags & EROCE_OPF_ONLY);
		if (!(info->flags & EROCE_OPF_CNP))
			CHECK(!!(info->flags & EROCE_OPF_REQ) !=
			      !!(info->flags & EROCE_OPF_RESP));
		if (info->flags & EROCE_OPF_COMP)
			CHECK((info->flags & EROCE_OPF_END) &&
			      (info->flags & EROCE_OPF_RWQE));
	}
}

/*
 * The responder's kind of a row, from its flags alone: a request is a
 * SEND, a WRITE, a READ or an atomic; EROCE_RESP_KINDS for a request that
 * is none of them (no handler would take it).
 */
static unsigned int resp_kind_of(u32 flags)
{
	if (!(flags & EROCE_OPF_REQ))
		return EROCE_RESP_NONE;
	if (flags & EROCE_OPF_SEND)
		return EROCE_RESP_SEND;
	if (flags & EROCE_OPF_WRITE)
		return EROCE_RESP_WRITE;
	if (flags & EROCE_OPF_READ)
		return EROCE_RESP_READ;
	if (flags & EROCE_OPF_ATOMIC)
		return EROCE_RESP_ATOMIC;
	if (flags & EROCE_OPF_ATOMIC_WRITE)
		return EROCE_RESP_ATOMIC_WRITE;
	return EROCE_RESP_KINDS;
}

/* the sender's matching kind likewise: read response, atomic ACK, ACK */
static unsigned int match_kind_of(u32 flags)
{
	if (!(flags & EROCE_OPF_RESP))
		return EROCE_MATCH_NONE;
	if (flags & EROCE_OPF_READ)
		return EROCE_MATCH_READ_RESP;
	if ((flags & EROCE_OPF_ACK) && (flags & EROCE_OPF_ATOMIC))
		return EROCE_MATCH_ATOMIC_ACK;
	if (flags & EROCE_OPF_ACK)
		return EROCE_MATCH_ACK;
	return EROCE_MATCH_KINDS;
}

/*
 * Every valid row names the kind its flags make it, so the role files'
 * tables of handlers (indexed by the kind, eroce_resp_exec.c and eroce_comp.c)
 * run the right handler, and carries the headers that handler reads.
 */
static void test_role_kinds(void)
{
	static const u32 roles = EROCE_OPF_SEND | EROCE_OPF_WRITE |
				 EROCE_OPF_READ | EROCE_OPF_ATOMIC |
				 EROCE_OPF_ATOMIC_WRITE;
	unsigned int resp_used = 0, match_used = 0;
	unsigned int op;

	for (op = 0; op < 256; op++) {
		const struct eroce_opcode_info *info = eroce_opcode_info(op);
		u32 f;

		if (!info)
			continue;
		f = info->flags;
		CHECK_EQ(info->resp, resp_kind_of(f));
		CHECK_EQ(info->match, match_kind_of(f));
		CHECK(info->resp < EROCE_RESP_KINDS);
		CHECK(info->match < EROCE_MATCH_KINDS);
		if (info->resp != resp_kind_of(f) ||
		    info->match != match_kind_of(f))
			fprintf(stderr, "  opcode 0x%02x %s\n", op, info->name);
		if (info->resp < EROCE_RESP_KINDS)
			resp_used |= BIT(info->resp);
		if (info->match < EROCE_MATCH_KINDS)
			match_used |= BIT(info->match);

		/* one role: the responder's, the sender's, or neither */
		if (f & EROCE_OPF_REQ) {
			CHECK(info->resp != EROCE_RESP_NONE);
			CHECK_EQ(info->match, EROCE_MATCH_NONE);
			/* one of them: resp_kind_of() cannot pick wrong */
			CHECK((f & roles) && !(f & roles & ((f & roles) - 1)));
		} else if (f & EROCE_OPF_RESP) {
			CHECK(info->match != EROCE_MATCH_NONE);
			CHECK_EQ(info->resp, EROCE_RESP_NONE);
		} else {
			CHECK(f & EROCE_OPF_CNP);
			CHECK_EQ(info->resp, EROCE_RESP_NONE);
			CHECK_EQ(info->match, EROCE_MATCH_NONE);
		}

		/* the headers each kind's handlers read */
		switch (info->resp) {
		case EROCE_RESP_SEND:
			CHECK(f & EROCE_OPF_RWQE && f & EROCE_OPF_PAYLOAD);
			break;
		case EROCE_RESP_WRITE:
			CHECK(!(f & EROCE_OPF_START) || f & EROCE_OPF_RETH);
			CHECK(f & EROCE_OPF_PAYLOAD);
			break;
		case EROCE_RESP_READ:
			CHECK(f & EROCE_OPF_RETH);
			CHECK((f & EROCE_OPF_ONLY) == EROCE_OPF_ONLY);
			break;
		case EROCE_RESP_ATOMIC:
			CHECK(f & EROCE_OPF_ATMETH);
			CHECK((f & EROCE_OPF_ONLY) == EROCE_OPF_ONLY);
			break;
		case EROCE_RESP_ATOMIC_WRITE:
			CHECK(f & EROCE_OPF_RETH && f & EROCE_OPF_PAYLOAD);
			CHECK((f & EROCE_OPF_ONLY) == EROCE_OPF_ONLY);
			break;
		}
		switch (info->match) {
		case EROCE_MATCH_ACK:
			CHECK(f & EROCE_OPF_AETH);
			CHECK(!(f & EROCE_OPF_PAYLOAD));
			break;
		case EROCE_MATCH_READ_RESP:
			CHECK(f & EROCE_OPF_PAYLOAD);
			break;
		case EROCE_MATCH_ATOMIC_ACK:
			CHECK(f & EROCE_OPF_AETH && f & EROCE_OPF_ATMACK);
			break;
		}
	}
	/* every kind has rows: no handler is dead code */
	CHECK_EQ(resp_used, BIT(EROCE_RESP_KINDS) - 1);
	CHECK_EQ(match_used, BIT(EROCE_MATCH_KINDS) - 1);

	CHECK_EQ(eroce_opcode_info(EROCE_OP_RC_SEND_MIDDLE)->resp,
		 EROCE_RESP_SEND);
	CHECK_EQ(eroce_opcode_info(EROCE_OP_UD_SEND_ONLY)->resp,
		 EROCE_RESP_SEND);
	CHECK_EQ(eroce_opcode_info(EROCE_OP_RC_WRITE_LAST_IMM)->resp,
		 EROCE_RESP_WRITE);
	CHECK_EQ(eroce_opcode_info(EROCE_OP_RC_READ_REQUEST)->resp,
		 EROCE_RESP_READ);
	CHECK_EQ(eroce_opcode_info(EROCE_OP_RC_FETCH_ADD)->resp,
		 EROCE_RESP_ATOMIC);
	CHECK_EQ(eroce_opcode_info(EROCE_OP_RC_ACK)->match, EROCE_MATCH_ACK);
	CHECK_EQ(eroce_opcode_info(EROCE_OP_RC_READ_RESPONSE_MIDDLE)->match,
		 EROCE_MATCH_READ_RESP);
	CHECK_EQ(eroce_opcode_info(EROCE_OP_RC_ATOMIC_ACK)->match,
		 EROCE_MATCH_ATOMIC_ACK);
	CHECK_EQ(eroce_opcode_info(EROCE_OP_CNP)->resp, EROCE_RESP_NONE);
	CHECK_EQ(eroce_opcode_info(EROCE_OP_CNP)->match, EROCE_MATCH_NONE);
}

/*
 * The responder's message sequence rule, eroce_opcode_seq_ok(), against
 * the opcodes' names: between messages only a FIRST or an ONLY packet
 * (READ_REQUEST and the atomics are ONLY packets) may come; within a SEND
 * or WRITE message only a MIDDLE or a LAST of the same kind.
 */
static void test_seq_rules(void)
{
	static const u32 in_msgs[] = {
		0, EROCE_OPF_SEND, EROCE_OPF_WRITE,
	};
	unsigned int op, nreq = 0;
	size_t m;

	for (op = 0; op < 256; op++) {
		const struct eroce_opcode_info *info = eroce_opcode_info(op);
		bool starts, cont;
		u32 kind;

		if (!info || !(info->flags & EROCE_OPF_REQ))
			continue;
		nreq++;
		starts = strstr(info->name, "_FIRST") ||
			 strstr(info->name, "_ONLY") ||
			 !strcmp(info->name, "RC_READ_REQUEST") ||
			 !strcmp(info->name, "RC_CMP_SWAP") ||
			 !strcmp(info->name, "RC_FETCH_ADD") ||
			 !strcmp(info->name, "RC_ATOMIC_WRITE");
		cont = strstr(info->name, "_MIDDLE") ||
		       strstr(info->name, "_LAST");
		CHECK(starts != cont);
		if (!strncmp(info->name + 3, "SEND_", 5))
			kind = EROCE_OPF_SEND;
		else if (!strncmp(info->name + 3, "WRITE_", 6))
			kind = EROCE_OPF_WRITE;
		else
			kind = 0;
		for (m = 0; m < ARRAY_SIZE(in_msgs); m++) {
			bool want = in_msgs[m] ? cont && kind == in_msgs[m] :
						 starts;
			bool got = eroce_opcode_seq_ok(in_msgs[m], info->flags);

			CHECK_EQ(got, want);
			if (got != want)
				fprintf(stderr, "  %s after %#x\n", info->name,
					in_msgs[m]);
		}
	}
	CHECK_EQ(nreq, 32);

	/* a few by hand */
	CHECK(eroce_opcode_seq_ok(0, eroce_opcode_info(0x00)->flags));
	CHECK(!eroce_opcode_seq_ok(0, eroce_opcode_info(0x01)->flags));
	CHECK(eroce_opcode_seq_ok(EROCE_OPF_SEND,
				  eroce_opcode_info(0x01)->flags));
	CHECK(!eroce_opcode_seq_ok(EROCE_OPF_SEND,
				   eroce_opcode_info(0x07)->flags));
	CHECK(!eroce_opcode_seq_ok(EROCE_OPF_WRITE,
				   eroce_opcode_info(0x0c)->flags));
	CHECK(eroce_opcode_seq_ok(0, eroce_opcode_info(0x14)->flags));
	CHECK(eroce_opcode_seq_ok(EROCE_OPF_WRITE,
				  eroce_opcode_info(0x29)->flags));
}

static void test_spot_checks(void)
{
	const struct eroce_opcode_info *i;

	i = eroce_opcode_info(EROCE_OP_RC_SEND_MIDDLE);
	CHECK(i && i->hdr_len == 12 && (i->flags & EROCE_OPF_PAYLOAD));
	CHECK(i && !strcmp(i->name, "RC_SEND_MIDDLE"));
	i = eroce_opcode_info(EROCE_OP_RC_SEND_ONLY_IMM);
	CHECK(i && i->hdr_len == 16 && i->offset[EROCE_HDR_IMMDT] == 12);
	i = eroce_opcode_info(EROCE_OP_RC_SEND_ONLY_INV);
	CHECK(i && i->hdr_len == 16 && (i->flags & EROCE_OPF_IETH));
	i = eroce_opcode_info(EROCE_OP_RC_WRITE_ONLY_IMM);
	CHECK(i && i->hdr_len == 32 && i->offset[EROCE_HDR_RETH] == 12 &&
	      i->offset[EROCE_HDR_IMMDT] == 28);
	i = eroce_opcode_info(EROCE_OP_RC_WRITE_MIDDLE);
	CHECK(i && i->hdr_len == 12 && !(i->flags & EROCE_OPF_RETH));
	i = eroce_opcode_info(EROCE_OP_RC_READ_REQUEST);
	CHECK(i && i->hdr_len == 28 && !(i->flags & EROCE_OPF_PAYLOAD));
	i = eroce_opcode_info(EROCE_OP_RC_READ_RESPONSE_MIDDLE);
	CHECK(i && i->hdr_len == 12 && !(i->flags & EROCE_OPF_AETH) &&
	      (i->flags & EROCE_OPF_RESP));
	i = eroce_opcode_info(EROCE_OP_RC_READ_RESPONSE_ONLY);
	CHECK(i && i->hdr_len == 16 && (i->flags & EROCE_OPF_PAYLOAD));
	i = eroce_opcode_info(EROCE_OP_RC_ACK);
	CHECK(i && i->hdr_len == 16 && !(i->flags & EROCE_OPF_PAYLOAD));
	i = eroce_opcode_info(EROCE_OP_RC_ATOMIC_ACK);
	CHECK(i && i->hdr_len == 24 && i->offset[EROCE_HDR_AETH] == 12 &&
	      i->offset[EROCE_HDR_ATMACK] == 16);
	i = eroce_opcode_info(EROCE_OP_RC_CMP_SWAP);
	CHECK(i && i->hdr_len == 40 && (i->flags & EROCE_OPF_ATOMIC));
	i = eroce_opcode_info(EROCE_OP_UD_SEND_ONLY_IMM);
	CHECK(i && i->hdr_len == 24 && i->offset[EROCE_HDR_DETH] == 12 &&
	      i->offset[EROCE_HDR_IMMDT] == 20);
	i = eroce_opcode_info(EROCE_OP_CNP);
	CHECK(i && i->hdr_len == 28 && !(i->flags & EROCE_OPF_PAYLOAD));
	CHECK(!eroce_opcode_info(0x15));	/* reserved in RC */
	i = eroce_opcode_info(EROCE_OP_UC_WRITE_ONLY_IMM);
	CHECK(i && i->hdr_len == 32 && i->offset[EROCE_HDR_RETH] == 12 &&
	      i->offset[EROCE_HDR_IMMDT] == 28 && (i->flags & EROCE_OPF_UC));
	CHECK(!eroce_opcode_info(0x2c));	/* no UC READ */
	CHECK(!eroce_opcode_info(0x31));	/* no UC ACK */
	CHECK(!eroce_opcode_info(0x63));
	CHECK(!eroce_opcode_info(0x80));
	CHECK(!eroce_opcode_info(0xff));
}

/* the packets a work request becomes agree with the packet table */
static void test_wr_table(void)
{
	static const u32 kinds = EROCE_OPF_SEND | EROCE_OPF_WRITE |
				 EROCE_OPF_READ | EROCE_OPF_ATOMIC;
	static const u32 qp_types = EROCE_WRF_RC | EROCE_WRF_UC |
				    EROCE_WRF_UD;
	unsigned int op, accepted = 0, locals = 0, uc = 0;

	for (op = 0; op < 64; op++) {
		const struct eroce_wr_info *wi = eroce_wr_info(op);
		const struct eroce_opcode_info *o, *f, *m, *l;

		if (!wi)
			continue;
		accepted++;
		if (eroce_wr_local(wi)) {
			/* executed by the requester: no packet, no payload */
			CHECK(wi->flags & EROCE_WRF_RC);
			CHECK(!(wi->flags & EROCE_WRF_KERNEL) ||
			      !(wi->flags & EROCE_WRF_USER));
			CHECK(!(wi->flags & (EROCE_WRF_READ | EROCE_WRF_ATOMIC |
					     EROCE_WRF_RDMA | EROCE_WRF_IMM)));
			CHECK(!eroce_wr_rd_atomic(wi));
			locals++;
			continue;
		}
		o = eroce_opcode_info(wi->rc_only);
		f = eroce_opcode_info(wi->rc_first);
		m = eroce_opcode_info(wi->rc_middle);
		l = eroce_opcode_info(wi->rc_last);
		CHECK(wi->flags & EROCE_WRF_RC);
		/* what posting copies: one of immediate or rkey, one address */
		CHECK(!(wi->flags & EROCE_WRF_IMM) ||
		      !(wi->flags & EROCE_WRF_INV));
		CHECK(!(wi->flags & EROCE_WRF_ATOMIC) ||
		      wi->flags & EROCE_WRF_RDMA);
		CHECK(o && f && m && l);
		if (!o || !f || !m || !l)
			continue;
		CHECK((o->flags & EROCE_OPF_ONLY) == EROCE_OPF_ONLY);
		CHECK(o->flags & EROCE_OPF_REQ && o->flags & EROCE_OPF_RC);
		/* one kind of message from the first packet to the last */
		CHECK((o->flags & kinds) == (f->flags & kinds) &&
		      (f->flags & kinds) == (m->flags & kinds) &&
		      (m->flags & kinds) == (l->flags & kinds));
		CHECK(!!(wi->flags & EROCE_WRF_READ) ==
		      !!(o->flags & EROCE_OPF_READ));
		CHECK(!!(wi->flags & EROCE_WRF_ATOMIC) ==
		      !!(o->flags & EROCE_OPF_ATOMIC));
		CHECK(!!(wi->flags & EROCE_WRF_RDMA) ==
		      !!(o->flags & (EROCE_OPF_RETH | EROCE_OPF_ATMETH)));
		CHECK(eroce_wr_rd_atomic(wi) || (f->flags & EROCE_OPF_START &&
			!(f->flags & EROCE_OPF_END) &&
			m->flags & EROCE_OPF_MIDDLE &&
			l->flags & EROCE_OPF_END && !(l->flags & EROCE_OPF_START)));
		/* immediate data and invalidation ride on the last packet */
		CHECK(!!(wi->flags & EROCE_WRF_IMM) ==
		      !!(l->flags & EROCE_OPF_IMMDT));
		CHECK(!!(wi->flags & EROCE_WRF_IMM) ==
		      !!(o->flags & EROCE_OPF_IMMDT));
		CHECK(!!(wi->flags & EROCE_WRF_INV) ==
		      !!(l->flags & EROCE_OPF_IETH));
		CHECK(eroce_wr_opcode(wi, false, true, true) == wi->rc_only &&
		      eroce_wr_opcode(wi, false, true, false) == wi->rc_first &&
		      eroce_wr_opcode(wi, false, false, false) ==
		      wi->rc_middle &&
		      eroce_wr_opcode(wi, false, false, true) == wi->rc_last);
		if (wi->flags & EROCE_WRF_UC) {
			/* UC: SEND and WRITE only, each packet the RC twin */
			unsigned int b;

			uc++;
			CHECK(!(wi->flags & (EROCE_WRF_READ |
					     EROCE_WRF_ATOMIC |
					     EROCE_WRF_INV)));
			for (b = 0; b < 4; b++) {
				u8 rc_op = eroce_wr_opcode(wi, false, b & 1,
							   b & 2);
				u8 uc_op = eroce_wr_opcode(wi, true, b & 1,
							   b & 2);
				const struct eroce_opcode_info *u =
					eroce_opcode_info(uc_op);

				CHECK(u && u->flags & EROCE_OPF_UC &&
				      uc_op == (rc_op | EROCE_OP_UC));
			}
		}
		if (wi->flags & EROCE_WRF_UD) {
			const struct eroce_opcode_info *u =
				eroce_opcode_info(wi->ud_only);

			CHECK(u && u->flags & EROCE_OPF_UD &&
			      u->flags & EROCE_OPF_SEND);
			CHECK(u && !!(wi->flags & EROCE_WRF_IMM) ==
			      !!(u->flags & EROCE_OPF_IMMDT));
		}
	}
	CHECK(accepted == 12 && locals == 3 && uc == 4);
	/* ATOMIC WRITE: one packet, for user RC QPs (Linux 6.1 lacks it) */
	CHECK(eroce_wr_info(EROCE_WR_ATOMIC_WRITE)->flags & EROCE_WRF_USER);
	CHECK((eroce_wr_info(EROCE_WR_ATOMIC_WRITE)->flags & qp_types) ==
	      EROCE_WRF_RC);
	CHECK(eroce_wr_rd_atomic(eroce_wr_info(EROCE_WR_ATOMIC_WRITE)));
	CHECK(eroce_wr_info(EROCE_WR_ATOMIC_WRITE)->wc_opcode ==
	      EROCE_WC_ATOMIC_WRITE);
	CHECK(eroce_qp_type_wrf(IB_UVERBS_QPT_UC) == EROCE_WRF_UC &&
	      eroce_qp_type_opf(IB_UVERBS_QPT_UC) == EROCE_OPF_UC &&
	      eroce_qp_type_wrf(IB_UVERBS_QPT_UD) == EROCE_WRF_UD &&
	      eroce_qp_type_opf(IB_UVERBS_QPT_RC) == EROCE_OPF_RC);
	CHECK(!(eroce_wr_info(IB_UVERBS_WR_RDMA_READ)->flags & EROCE_WRF_UC));
	CHECK(!(eroce_wr_info(IB_UVERBS_WR_SEND_WITH_INV)->flags &
		EROCE_WRF_UC));
	CHECK(eroce_wr_info(IB_UVERBS_WR_SEND)->flags & EROCE_WRF_UD);
	CHECK(!(eroce_wr_info(IB_UVERBS_WR_RDMA_WRITE)->flags & EROCE_WRF_UD));
	CHECK(eroce_wr_info(IB_UVERBS_WR_RDMA_READ)->wc_opcode ==
	      IB_UVERBS_WC_RDMA_READ);
	CHECK(eroce_wr_info(IB_UVERBS_WR_LOCAL_INV)->wc_opcode ==
	      IB_UVERBS_WC_LOCAL_INV);
	CHECK(eroce_wr_info(IB_UVERBS_WR_LOCAL_INV)->flags & EROCE_WRF_INV);
	CHECK(eroce_wr_info(EROCE_WR_REG_MR)->wc_opcode == EROCE_WC_REG_MR);
	/* fast registration for kernel QPs, windows for user QPs */
	CHECK((eroce_wr_info(EROCE_WR_REG_MR)->flags & qp_types) == qp_types);
	CHECK(eroce_wr_info(EROCE_WR_REG_MR)->flags & EROCE_WRF_KERNEL);
	CHECK((eroce_wr_info(IB_UVERBS_WR_LOCAL_INV)->flags & qp_types) ==
	      qp_types);
	CHECK(!(eroce_wr_info(IB_UVERBS_WR_LOCAL_INV)->flags &
		(EROCE_WRF_KERNEL | EROCE_WRF_USER)));
	CHECK(eroce_wr_info(IB_UVERBS_WR_BIND_MW)->wc_opcode ==
	      IB_UVERBS_WC_BIND_MW);
	CHECK((eroce_wr_info(IB_UVERBS_WR_BIND_MW)->flags & qp_types) ==
	      (EROCE_WRF_RC | EROCE_WRF_UC));
	CHECK(eroce_wr_info(IB_UVERBS_WR_BIND_MW)->flags & EROCE_WRF_USER);
	CHECK(!eroce_wr_info(IB_UVERBS_WR_TSO));
	CHECK(!eroce_wr_info(EROCE_WR_OPCODES));
	CHECK(!eroce_wr_info(0xffffffff));
}

static void test_hdr_ptr(void)
{
	static union { u64 a; u8 b[64]; } buf;
	struct eroce_bth *bth = (struct eroce_bth *)buf.b;
	const struct eroce_opcode_info *i;

	i = eroce_opcode_info(EROCE_OP_RC_WRITE_ONLY_IMM);
	CHECK(eroce_hdr(i, bth, EROCE_HDR_RETH) == buf.b + 12);
	CHECK(eroce_hdr(i, bth, EROCE_HDR_IMMDT) == buf.b + 28);
	CHECK(!eroce_hdr(i, bth, EROCE_HDR_AETH));
	CHECK(!eroce_hdr(i, bth, EROCE_HDR_DETH));
	i = eroce_opcode_info(EROCE_OP_RC_ATOMIC_ACK);
	CHECK(eroce_hdr(i, bth, EROCE_HDR_ATMACK) == buf.b + 16);
	CHECK(!eroce_hdr(i, bth, EROCE_HDR_RETH));
}

/* eroce_hdr_check() over an exact-size heap copy of @len bytes */
static int check_exact(const u8 *data, size_t len, struct eroce_hdr_info *hi)
{
	u8 *p = malloc(len ? len : 1);
	int ret;

	memcpy(p, data, len);
	ret = eroce_hdr_check(p, len, hi);
	free(p);
	return ret;
}

static void test_check_vectors(void)
{
	static const struct { const char *name; u32 paylen; u8 pad; } exp[] = {
		{ "v4_send_only", 13, 3 },
		{ "v4_send_only_tos_ttl", 13, 3 },
		{ "v4_write_only", 37, 3 },
		{ "v4_ack", 0, 0 },
		{ "v4_cnp", 0, 0 },
		{ "v4_opt_fetch_add", 0, 0 },
		{ "v6_send_only_imm", 13, 3 },
		{ "v6_send_only_imm_tc_fl", 13, 3 },
		{ "v6_ud_send_only", 64, 0 },
	};
	size_t i, j;

	CHECK_EQ(ARRAY_SIZE(exp), ARRAY_SIZE(icrc_vectors));
	for (i = 0; i < ARRAY_SIZE(icrc_vectors); i++) {
		const struct icrc_vector *v = &icrc_vectors[i];
		size_t udp = (v->pkt[0] >> 4) == 6 ? 40 : (v->pkt[0] & 15) * 4;
		struct eroce_hdr_info hi = { 0 };

		for (j = 0; j < ARRAY_SIZE(exp); j++)
			if (!strcmp(exp[j].name, v->name))
				break;
		CHECK(j < ARRAY_SIZE(exp));
		if (j == ARRAY_SIZE(exp))
			continue;
		CHECK_EQ(check_exact(v->pkt + udp + 8, v->len - udp - 8, &hi),
			 0);
		CHECK(hi.op == eroce_opcode_info(v->pkt[udp + 8]));
		CHECK_EQ(hi.paylen, exp[j].paylen);
		CHECK_EQ(hi.pad, exp[j].pad);
	}
}

static void test_check_rejects(void)
{
	u8 pkt[128];
	struct eroce_hdr_info hi;
	unsigned int op;
	size_t len;

	/* every invalid opcode, any length */
	for (op = 0; op < 256; op++) {
		memset(pkt, 0, sizeof(pkt));
		pkt[0] = op;
		if (!expect_valid(op))
			CHECK_EQ(check_exact(pkt, 64, &hi), -EOPNOTSUPP);
	}
	/* every opcode at every length 0..127: never reads past @len */
	for (op = 0; op < 256; op++) {
		for (len = 0; len < sizeof(pkt); len++) {
			const struct eroce_opcode_info *i;
			int ret;

			memset(pkt, 0, sizeof(pkt));
			pkt[0] = op;
			ret = check_exact(pkt, len, &hi);
			i = eroce_opcode_info(op);
			if (len < 16) {
				CHECK_EQ(ret, -EINVAL);
			} else if (!i) {
				CHECK_EQ(ret, -EOPNOTSUPP);
			} else if (len < i->hdr_len + 4u) {
				CHECK_EQ(ret, -EINVAL);
			} else if (!(i->flags & EROCE_OPF_PAYLOAD)) {
				CHECK_EQ(ret, len == i->hdr_len + 4u ?
					 0 : -EINVAL);
			} else {
				CHECK_EQ(ret, (len - i->hdr_len) % 4 ?
					 -EINVAL : 0);
				if (!ret)
					CHECK_EQ(hi.paylen,
						 len - i->hdr_len - 4);
			}
		}
	}

	/* TVer other than 0 */
	memset(pkt, 0, sizeof(pkt));
	pkt[0] = EROCE_OP_RC_SEND_ONLY;
	pkt[1] = 0x01;
	CHECK_EQ(check_exact(pkt, 20, &hi), -EPROTONOSUPPORT);
	/* pad on a packet that does not end a message */
	pkt[0] = EROCE_OP_RC_SEND_FIRST;
	pkt[1] = 0x10;
	CHECK_EQ(check_exact(pkt, 20, &hi), -EINVAL);
	pkt[0] = EROCE_OP_RC_SEND_LAST;
	CHECK_EQ(check_exact(pkt, 20, &hi), 0);
	CHECK_EQ(hi.paylen, 3);
	CHECK_EQ(hi.pad, 1);
	/* pad larger than the payload */
	pkt[0] = EROCE_OP_RC_SEND_ONLY;
	pkt[1] = 0x20;
	CHECK_EQ(check_exact(pkt, 16, &hi), -EINVAL);
	/* pad on an opcode without payload */
	pkt[0] = EROCE_OP_RC_ACK;
	pkt[1] = 0x10;
	CHECK_EQ(check_exact(pkt, 20, &hi), -EINVAL);
	/* zero-length RDMA WRITE ONLY is legal */
	pkt[0] = EROCE_OP_RC_WRITE_ONLY;
	pkt[1] = 0;
	CHECK_EQ(check_exact(pkt, 32, &hi), 0);
	CHECK_EQ(hi.paylen, 0);
	/* an ACK followed by stray bytes */
	pkt[0] = EROCE_OP_RC_ACK;
	CHECK_EQ(check_exact(pkt, 24, &hi), -EINVAL);
}

int main(void)
{
	RUN(test_all_256);
	RUN(test_lengths_and_offsets);
	RUN(test_role_kinds);
	RUN(test_seq_rules);
	RUN(test_spot_checks);
	RUN(test_wr_table);
	RUN(test_hdr_ptr);
	RUN(test_check_vectors);
	RUN(test_check_rejects);
	return unit_result("opcode");
}
