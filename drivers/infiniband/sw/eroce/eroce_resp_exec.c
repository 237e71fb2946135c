// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_resp_exec.c - the responder's execution of requests: SEND, WRITE,
 * READ, atomic and ATOMIC WRITE at the expected PSN and their duplicates,
 * the receive WQE (fetch, fill, complete), the MR checks, SEND with
 * Invalidate, and a request's errors (eroce_resp_fatal()).
 *
 * What a request does is up to the handlers of its kind, the opcode
 * table's struct eroce_opcode_info.resp: eroce_resp_ops[] holds, per
 * kind (SEND, WRITE, READ, atomic, ATOMIC WRITE), how it executes at the expected PSN,
 * how a duplicate is answered, whether AckReq draws an ACK and whether
 * selective repeat may keep it.  The PSN check, the message sequence
 * check and the PSN accounting are common (eroce_resp_rc(),
 * eroce_resp_execute()); UD's one kind of request, a SEND, goes to
 * eroce_resp_ud() instead.
 *
 * Context: receive softirq (eroce_resp_rcv(), and eroce_resp_drain() under
 * it).  Locks: the caller holds qp->eng.lock; the RQ or SRQ consumer_lock
 * (eroce_resp_fetch_rwqe()) and the CQ producer lock (eroce_cq_post())
 * nest inside it.
 */
#include "eroce_opcode.h"
#include "eroce_psn.h"
#include "eroce_resp.h"

/*
 * UC: the message @pkt belongs to is lost.  Its packets still to come are
 * dropped as out of sequence, and a receive WQE it took serves the next
 * message.
 */
void eroce_resp_uc_drop(struct eroce_qp *qp, struct eroce_rx *pkt,
			enum eroce_counter cnt, const char *why)
{
	qp->eng.resp.in_msg = 0;
	eroce_stat_inc(pkt->edev, cnt);
	net_dbg_ratelimited("eroce: QP %u: UC %s PSN %u dropped: %s\n",
			    qp->ibqp.qp_num, eroce_opcode_name(pkt->opcode),
			    pkt->psn, why);
}

/*
 * A request error.  RC NAKs it and the QP goes to the error state, the
 * receive WQE in use completing with @status.  UC sends nothing back: a
 * remote error (@status REM_*: a bad R_Key, a wrong length) drops the
 * message, and only a local one (a receive WQE too small or not valid)
 * fails the QP.
 */
static void eroce_resp_fatal(struct eroce_qp *qp, struct eroce_rx *pkt,
			     enum eroce_nak_code code, enum ib_wc_status status)
{
	struct eroce_resp *resp = &qp->eng.resp;
	bool first;

	if (qp->ibqp.qp_type == IB_QPT_UC) {
		switch (status) {
		case IB_WC_REM_ACCESS_ERR:
			eroce_resp_uc_drop(qp, pkt, EROCE_CNT_DROP_UC_ACCESS,
					   "remote access error");
			return;
		case IB_WC_REM_INV_REQ_ERR:
			eroce_resp_uc_drop(qp, pkt, EROCE_CNT_DROP_UC_INVALID,
					   "invalid request");
			return;
		default:
			break;
		}
	} else {
		eroce_resp_fatal_nak(qp, pkt, code);
	}
	/* in ERR before the completion that reports it can be seen */
	first = eroce_qp_mark_err(qp);
	if (resp->have_rwqe) {
		const struct eroce_recv_wqe *rwqe = resp->rwqe;
		struct eroce_cqe cqe = {
			.wr_id = rwqe->wr_id,
			.status = status,
			.opcode = IB_WC_RECV,
			.qp_num = qp->ibqp.qp_num,
		};

		resp->have_rwqe = false;
		eroce_cq_post(to_eroce_cq(qp->ibqp.recv_cq), &cqe, false);
	}
	if (first)
		eroce_qp_event(qp, code == EROCE_NAK_REM_ACCESS_ERR ?
				   IB_EVENT_QP_ACCESS_ERR :
				   code == EROCE_NAK_INVALID_REQ ?
				   IB_EVENT_QP_REQ_ERR : IB_EVENT_QP_FATAL);
	eroce_qp_fatal(qp, 0);
}

/* copy the next receive WQE out of the RQ or SRQ */
int eroce_resp_fetch_rwqe(struct eroce_qp *qp)
{
	struct eroce_resp *resp = &qp->eng.resp;
	struct eroce_srq *srq = qp->ibqp.srq ? to_eroce_srq(qp->ibqp.srq) :
					       NULL;
	struct eroce_ring *ring = srq ? &srq->ring : &qp->rq;
	u32 max_sge = srq ? srq->max_sge : qp->rq_max_sge;
	const struct eroce_recv_wqe *rwqe = resp->rwqe;
	unsigned long flags;
	int err;

	spin_lock_irqsave(&ring->consumer_lock, flags);
	err = eroce_ring_consume_copy(ring, resp->rwqe, resp->rwqe_size);
	if (!err) {
		eroce_ring_consume_commit(ring);
		if (srq)
			eroce_srq_check_limit(srq);
	}
	spin_unlock_irqrestore(&ring->consumer_lock, flags);
	if (err)
		return err;

	resp->have_rwqe = true;
	resp->rcv_len = 0;
	if (rwqe->num_sge > max_sge ||
	    sizeof(*rwqe) + rwqe->num_sge * sizeof(struct eroce_sge) >
	    resp->rwqe_size)
		return -EINVAL;
	return 0;
}

/* payload into the receive WQE's buffers, after what it already holds */
int eroce_resp_fill_rwqe(struct eroce_qp *qp, void *buf, u32 len)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	struct eroce_resp *resp = &qp->eng.resp;
	const struct eroce_recv_wqe *rwqe = resp->rwqe;
	struct eroce_sge_iter it;
	int err;

	eroce_sge_iter_init(&it, (const struct eroce_sge *)(rwqe + 1),
			    rwqe->num_sge);
	err = eroce_sge_skip(&it, resp->rcv_len);
	if (!err)
		err = eroce_sge_copy(&edev->res, qp->ibqp.pd, &it, buf, len,
				     true);
	if (!err)
		resp->rcv_len += len;
	return err;
}

void eroce_resp_complete_rwqe(struct eroce_qp *qp,
			      struct eroce_rx *pkt, u8 opcode,
			      u32 byte_len, u32 src_qp, u8 wc_flags)
{
	const struct eroce_opcode_info *info = pkt->info;
	struct eroce_resp *resp = &qp->eng.resp;
	const struct eroce_recv_wqe *rwqe = resp->rwqe;
	struct eroce_cqe cqe = {
		.wr_id = rwqe->wr_id,
		.status = IB_WC_SUCCESS,
		.opcode = opcode,
		.byte_len = byte_len,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = src_qp,
		.wc_flags = wc_flags,
	};

	if (pkt->vlan_id >= 0) {
		cqe.wc_flags |= EROCE_WC_WITH_VLAN;
		cqe.slid = pkt->vlan_id;
	}
	if (info->flags & EROCE_OPF_IMMDT) {
		const struct eroce_immdt *imm = eroce_hdr(info, pkt->bth,
							  EROCE_HDR_IMMDT);

		cqe.ex = (__force u32)imm->imm;
		cqe.wc_flags |= EROCE_WC_WITH_IMM;
	} else if (info->flags & EROCE_OPF_IETH) {
		cqe.ex = eroce_ieth_rkey(eroce_hdr(info, pkt->bth,
						   EROCE_HDR_IETH));
		cqe.wc_flags |= EROCE_WC_WITH_INV;
	}
	resp->have_rwqe = false;
	eroce_cq_post(to_eroce_cq(qp->ibqp.recv_cq), &cqe,
		      eroce_bth_se(pkt->bth));
}

/* may the MR or window @rkey names take the whole message?  At its start */
static int eroce_resp_mr_check(struct eroce_qp *qp, u32 rkey, u64 va, u64 len,
			       int access)
{
	return eroce_resp_mr_access(qp, rkey, va, NULL, len, access);
}

/*
 * A WRITE's access failed: -EPERM (the QP does not enable WRITEs) is an
 * invalid request, anything else a remote access error
 */
static void eroce_resp_write_fatal(struct eroce_qp *qp, struct eroce_rx *pkt,
				   int err)
{
	if (err == -EPERM)
		eroce_resp_fatal(qp, pkt, EROCE_NAK_INVALID_REQ,
				 IB_WC_REM_INV_REQ_ERR);
	else
		eroce_resp_fatal(qp, pkt, EROCE_NAK_REM_ACCESS_ERR,
				 IB_WC_REM_ACCESS_ERR);
}

static void eroce_resp_message_done(struct eroce_qp *qp)
{
	struct eroce_resp *resp = &qp->eng.resp;

	resp->in_msg = 0;
	resp->msn = (resp->msn + 1) & EROCE_AETH_MSN;
}

/* no receive WQE: the requester retries after our minimum RNR time */
static void eroce_resp_rnr_nak(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	u8 timer = READ_ONCE(qp->attrs.min_rnr_timer);

	eroce_stat_inc(pkt->edev, EROCE_CNT_RNR_NAK_SENT);
	eroce_resp_ack(qp, eroce_syn_rnr_nak(timer), pkt->psn);
}

/*
 * Take the receive WQE a SEND (or a WRITE with immediate) consumes.  False
 * when there is none (the packet draws an RNR NAK; UC drops the message)
 * or the WQE or its ring is malformed (a fatal NAK): the packet must then
 * not advance the PSN.
 */
static bool eroce_resp_take_rwqe(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	int err = eroce_resp_fetch_rwqe(qp);

	if (err == -ENOENT && qp->ibqp.qp_type == IB_QPT_UC)
		eroce_resp_uc_drop(qp, pkt, EROCE_CNT_DROP_NO_RECV_WQE,
				   "no receive WQE");
	else if (err == -ENOENT)
		eroce_resp_rnr_nak(qp, pkt);
	else if (err)
		eroce_resp_fatal(qp, pkt, EROCE_NAK_REM_OP_ERR,
				 IB_WC_LOC_QP_OP_ERR);
	return !err;
}

/*
 * SEND with Invalidate: the fast-registration MR of this QP's PD, or the
 * type 2 window bound to this QP, that the IETH names is invalidated
 * before the receive completes.  A key that names neither fails the
 * request (IBA 9.9.3, class J): NAK, QP to error.
 */
static int eroce_resp_invalidate(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	u32 rkey = eroce_ieth_rkey(eroce_hdr(pkt->info, pkt->bth,
					     EROCE_HDR_IETH));
	int err;

	err = eroce_key_invalidate(&pkt->edev->res, qp, rkey, true);
	if (err) {
		eroce_stat_inc(pkt->edev, EROCE_CNT_REMOTE_INV_ERRORS);
		eroce_resp_fatal(qp, pkt, EROCE_NAK_INVALID_REQ,
				 IB_WC_REM_INV_REQ_ERR);
		return err;
	}
	eroce_stat_inc(pkt->edev, EROCE_CNT_REMOTE_INVALIDATIONS);
	return 0;
}

/*
 * SEND packets, RC and UC: one PSN each.  A receive WQE still held is one
 * a dropped UC message took: it is filled again from the start.
 */
static u32 eroce_resp_send(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	struct eroce_resp *resp = &qp->eng.resp;
	u32 flags = pkt->info->flags;
	int err;

	if (flags & EROCE_OPF_START) {
		if (!resp->have_rwqe && !eroce_resp_take_rwqe(qp, pkt))
			return 0;
		resp->rcv_len = 0;
		resp->in_msg = EROCE_OPF_SEND;
	}
	/* FIRST and MIDDLE carry a path MTU, LAST and ONLY at most one */
	if (pkt->paylen > eroce_resp_mtu(qp) ||
	    (!(flags & EROCE_OPF_END) && pkt->paylen != eroce_resp_mtu(qp))) {
		eroce_resp_fatal(qp, pkt, EROCE_NAK_INVALID_REQ,
				 IB_WC_REM_INV_REQ_ERR);
		return 0;
	}
	err = eroce_resp_fill_rwqe(qp, pkt->payload, pkt->paylen);
	if (err == -ENOSPC) {
		eroce_resp_fatal(qp, pkt, EROCE_NAK_INVALID_REQ,
				 IB_WC_LOC_LEN_ERR);
		return 0;
	}
	if (err) {
		/*
		 * The receive WQE's own memory failed (its lkey, PD or
		 * rights): the responder's local protection error, a Remote
		 * Operational Error for the requester, as rdma_rxe has it
		 */
		eroce_resp_fatal(qp, pkt, EROCE_NAK_REM_OP_ERR,
				 IB_WC_LOC_PROT_ERR);
		return 0;
	}
	if (flags & EROCE_OPF_END) {
		if ((flags & EROCE_OPF_IETH) && eroce_resp_invalidate(qp, pkt))
			return 0;
		eroce_resp_complete_rwqe(qp, pkt, IB_WC_RECV, resp->rcv_len,
					 READ_ONCE(qp->attrs.dest_qp_num), 0);
		eroce_resp_message_done(qp);
	}
	return 1;
}

/* WRITE packets, RC and UC: one PSN each */
static u32 eroce_resp_write(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	struct eroce_resp *resp = &qp->eng.resp;
	u32 flags = pkt->info->flags;
	int err;

	/* a WRITE with immediate needs its receive WQE before any data */
	if ((flags & EROCE_OPF_END) && (flags & EROCE_OPF_RWQE) &&
	    !resp->have_rwqe && !eroce_resp_take_rwqe(qp, pkt))
		return 0;

	if (flags & EROCE_OPF_START) {
		const struct eroce_reth *reth = eroce_hdr(pkt->info, pkt->bth,
							  EROCE_HDR_RETH);
		u32 len = eroce_reth_len(reth);

		resp->wr_va = eroce_reth_va(reth);
		resp->wr_len = len;
		resp->wr_left = len;
		resp->wr_rkey = eroce_reth_rkey(reth);
		/* longer than 2^31: an invalid request (IBA 11.6.2) */
		if (len > EROCE_MAX_MSG_SIZE) {
			eroce_resp_fatal(qp, pkt, EROCE_NAK_INVALID_REQ,
					 IB_WC_REM_INV_REQ_ERR);
			return 0;
		}
		err = len ? eroce_resp_mr_check(qp, resp->wr_rkey, resp->wr_va,
						len, IB_ACCESS_REMOTE_WRITE) : 0;
		if (err) {
			eroce_resp_write_fatal(qp, pkt, err);
			return 0;
		}
		resp->in_msg = EROCE_OPF_WRITE;
	}

	if (pkt->paylen > resp->wr_left || pkt->paylen > eroce_resp_mtu(qp) ||
	    (!(flags & EROCE_OPF_END) && pkt->paylen != eroce_resp_mtu(qp)) ||
	    ((flags & EROCE_OPF_END) && pkt->paylen != resp->wr_left)) {
		eroce_resp_fatal(qp, pkt, EROCE_NAK_INVALID_REQ,
				 IB_WC_REM_INV_REQ_ERR);
		return 0;
	}
	if (pkt->paylen) {
		err = eroce_resp_mr_access(qp, resp->wr_rkey, resp->wr_va,
					   pkt->payload, pkt->paylen,
					   IB_ACCESS_REMOTE_WRITE);
		if (err) {
			eroce_resp_write_fatal(qp, pkt, err);
			return 0;
		}
		resp->wr_va += pkt->paylen;
		resp->wr_left -= pkt->paylen;
	}

	if (flags & EROCE_OPF_END) {
		if (flags & EROCE_OPF_RWQE)
			eroce_resp_complete_rwqe(qp, pkt,
						 IB_WC_RECV_RDMA_WITH_IMM,
						 resp->wr_len,
						 READ_ONCE(qp->attrs.dest_qp_num),
						 0);
		eroce_resp_message_done(qp);
	}
	return 1;
}

/* a SEND or WRITE packet seen before: acknowledge all we have */
static void eroce_resp_dup_ack(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	struct eroce_resp *resp = &qp->eng.resp;

	eroce_resp_ack(qp, eroce_syn_ack(EROCE_AETH_CREDIT_INVALID),
		       eroce_psn_add(resp->epsn, EROCE_PSN_MASK));
}

/* queue the responses to a (possibly repeated) READ request */
static int eroce_resp_read(struct eroce_qp *qp, struct eroce_rx *pkt,
			   bool duplicate)
{
	const struct eroce_reth *reth = eroce_hdr(pkt->info, pkt->bth,
						  EROCE_HDR_RETH);
	u32 len = eroce_reth_len(reth);
	u32 rkey = eroce_reth_rkey(reth);
	u64 va = eroce_reth_va(reth);
	struct eroce_rsp *rsp;
	u32 npkts;

	if (len > EROCE_MAX_MSG_SIZE)
		return -EINVAL;
	/*
	 * Responses taking half the PSN space or more would break the 24-bit
	 * comparisons that tell a repeated request from a new one: invalid,
	 * as the requester's own rule has it (eroce_psn_span_ok()).
	 */
	npkts = max_t(u32, 1, DIV_ROUND_UP(len, eroce_resp_mtu(qp)));
	if (!eroce_psn_span_ok(0, 0, npkts))
		return -EINVAL;
	if (len) {
		int err = eroce_resp_mr_check(qp, rkey, va, len,
					      IB_ACCESS_REMOTE_READ);

		if (err)
			return err;
	}
	rsp = eroce_rsp_queue_add(qp, false);
	if (!rsp)
		return -EBUSY;
	rsp->type = EROCE_RSP_READ;
	rsp->first_psn = pkt->psn;
	rsp->npkts = npkts;
	rsp->va = va;
	rsp->length = len;
	rsp->rkey = rkey;
	if (!duplicate)
		eroce_resp_message_done(qp);
	rsp->msn = qp->eng.resp.msn;
	eroce_resp_answer_reads(qp);
	return 0;
}

/*
 * A READ or atomic failed: -EACCES from its MR or window, a remote access
 * error; else (-EPERM: the QP does not enable it, -EINVAL: malformed) an
 * invalid request
 */
static void eroce_resp_rd_atomic_fatal(struct eroce_qp *qp,
				       struct eroce_rx *pkt, int err)
{
	eroce_resp_fatal(qp, pkt, err == -EACCES ? EROCE_NAK_REM_ACCESS_ERR :
						   EROCE_NAK_INVALID_REQ,
			 IB_WC_REM_ACCESS_ERR);
}

/* a READ request: one PSN per response packet it queued */
static u32 eroce_resp_read_execute(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	struct eroce_resp *resp = &qp->eng.resp;
	int err = eroce_resp_read(qp, pkt, false);

	if (err == -EBUSY)
		return 0;		/* out of responder resources */
	if (err) {
		eroce_resp_rd_atomic_fatal(qp, pkt, err);
		return 0;
	}
	return resp->rsp[(resp->rsp_head - 1) & (resp->rsp_size - 1)].npkts;
}

/*
 * A repeated READ whose responses are still queued: send them again from
 * the PSN asked for, rather than queueing the read twice (a requester that
 * timed out while we were busy answering must not double our work).
 */
static bool eroce_resp_read_queued(struct eroce_qp *qp, u32 psn)
{
	struct eroce_resp *resp = &qp->eng.resp;
	u32 i;

	for (i = resp->rsp_tail; i != resp->rsp_head; i++) {
		struct eroce_rsp *rsp = &resp->rsp[i & (resp->rsp_size - 1)];
		s32 off = eroce_psn_diff(psn, rsp->first_psn);

		if (rsp->type != EROCE_RSP_READ || off < 0 || off >= rsp->npkts)
			continue;
		rsp->sent = min_t(u32, rsp->sent, off);
		return true;
	}
	return false;
}

/* a READ seen before: executed again from the MR, from its PSN and RETH */
static void eroce_resp_read_duplicate(struct eroce_qp *qp,
				      struct eroce_rx *pkt)
{
	struct eroce_resp *resp = &qp->eng.resp;

	/*
	 * Repeated reads may take only the spare half of the queue: the
	 * other half stays free for the new reads the peer may have
	 * outstanding (max_dest_rd_atomic).
	 */
	if (!eroce_resp_read_queued(qp, pkt->psn) &&
	    resp->rsp_head - resp->rsp_tail < resp->rsp_size / 2)
		eroce_resp_read(qp, pkt, true);
}

/*
 * The answer to an ATOMIC WRITE, new or repeated: a READ RESPONSE ONLY
 * without data at its PSN (IBA 1.5), behind the responses still owed.
 * Return: 0, or -EBUSY when the responder resources are all taken.
 */
static int eroce_resp_atomic_write_answer(struct eroce_qp *qp,
					  struct eroce_rx *pkt)
{
	struct eroce_rsp *rsp = eroce_rsp_queue_add(qp, false);

	if (!rsp)
		return -EBUSY;
	rsp->type = EROCE_RSP_READ;
	rsp->first_psn = pkt->psn;
	rsp->npkts = 1;
	rsp->msn = qp->eng.resp.msn;
	eroce_resp_answer_reads(qp);
	return 0;
}

/*
 * ATOMIC WRITE: its 8 bytes stored at once at the aligned address its RETH
 * names, which takes the WRITE right; then answered.  One PSN, or 0 when
 * the responder resources are all taken (the requester sends it again).
 */
static u32 eroce_resp_atomic_write_execute(struct eroce_qp *qp,
					   struct eroce_rx *pkt)
{
	const struct eroce_reth *reth = eroce_hdr(pkt->info, pkt->bth,
						  EROCE_HDR_RETH);
	struct eroce_resp *resp = &qp->eng.resp;
	u64 va = eroce_reth_va(reth);
	struct eroce_atomic op;
	int err;

	if (!eroce_rsp_queue_room(resp, false))
		return 0;
	if (eroce_reth_len(reth) != sizeof(op.operand) ||
	    pkt->paylen != sizeof(op.operand) || (va & 7)) {
		eroce_resp_rd_atomic_fatal(qp, pkt, -EINVAL);
		return 0;
	}
	err = eroce_resp_qp_allows(qp, IB_ACCESS_REMOTE_WRITE);
	if (err) {
		eroce_resp_rd_atomic_fatal(qp, pkt, err);
		return 0;
	}
	op.kind = EROCE_ATOMIC_WRITE;
	memcpy(&op.operand, pkt->payload, sizeof(op.operand));
	err = eroce_rkey_atomic(&pkt->edev->res, qp, eroce_reth_rkey(reth),
				va, &op);
	if (err) {
		eroce_resp_rd_atomic_fatal(qp, pkt, -EACCES);
		return 0;
	}
	eroce_resp_message_done(qp);
	eroce_resp_atomic_write_answer(qp, pkt);	/* room checked */
	return 1;
}

/*
 * An ATOMIC WRITE seen before was executed: answered again, never
 * executed twice (a later write may have changed the bytes since).
 */
static void eroce_resp_atomic_write_duplicate(struct eroce_qp *qp,
					      struct eroce_rx *pkt)
{
	if (!eroce_resp_read_queued(qp, pkt->psn))
		eroce_resp_atomic_write_answer(qp, pkt);
}

static int eroce_resp_atomic(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	const struct eroce_atmeth *atm = eroce_hdr(pkt->info, pkt->bth,
						   EROCE_HDR_ATMETH);
	struct eroce_resp *resp = &qp->eng.resp;
	struct eroce_atomic_res *res;
	u32 rkey = eroce_atmeth_rkey(atm);
	u64 va = eroce_atmeth_va(atm);
	struct eroce_atomic op;
	u64 orig;
	int err;

	if (va & 7)
		return -EINVAL;
	err = eroce_resp_qp_allows(qp, IB_ACCESS_REMOTE_ATOMIC);
	if (err)
		return err;
	op.kind = pkt->opcode == EROCE_OP_RC_CMP_SWAP ? EROCE_ATOMIC_CMP_SWAP :
							EROCE_ATOMIC_FETCH_ADD;
	op.compare = eroce_atmeth_compare(atm);
	op.operand = eroce_atmeth_swap_add(atm);
	err = eroce_rkey_atomic(&pkt->edev->res, qp, rkey, va, &op);
	if (err)
		return -EACCES;
	orig = op.orig;

	res = &resp->atomic[resp->atomic_next++ & (resp->rsp_size / 2 - 1)];
	res->psn = pkt->psn;
	res->orig = orig;
	res->valid = true;
	eroce_resp_message_done(qp);

	if (eroce_rsp_queue_empty(resp)) {
		eroce_resp_send_atomic_ack_now(qp, pkt->psn, resp->msn, orig);
	} else {
		struct eroce_rsp *rsp = eroce_rsp_queue_add(qp, false);

		if (rsp) {
			rsp->type = EROCE_RSP_ATOMIC;
			rsp->first_psn = pkt->psn;
			rsp->msn = resp->msn;
			rsp->orig = orig;
		}
	}
	return 0;
}

/* an atomic: one PSN, executed here and never again */
static u32 eroce_resp_atomic_execute(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	int err = eroce_resp_atomic(qp, pkt);

	if (err) {
		eroce_resp_rd_atomic_fatal(qp, pkt, err);
		return 0;
	}
	return 1;
}

/* an atomic seen before: its result from the replay cache, if still there */
static void eroce_resp_atomic_duplicate(struct eroce_qp *qp,
					struct eroce_rx *pkt)
{
	struct eroce_resp *resp = &qp->eng.resp;
	u32 i;

	for (i = 0; i < resp->rsp_size / 2; i++) {
		struct eroce_atomic_res *res = &resp->atomic[i];

		if (res->valid && res->psn == pkt->psn) {
			eroce_resp_send_atomic_ack_now(qp, pkt->psn, resp->msn,
						       res->orig);
			return;
		}
	}
}

/*
 * Indexed by struct eroce_opcode_info.resp.  EROCE_RESP_NONE has no
 * handlers: only requests come here (eroce_deliver.c), and every request row
 * names its kind (test_opcode).  UD requests go to eroce_resp_ud().
 */
const struct eroce_resp_ops eroce_resp_ops[EROCE_RESP_KINDS] = {
	[EROCE_RESP_SEND] = {
		.execute = eroce_resp_send,
		.duplicate = eroce_resp_dup_ack,
		.ack = true,
		.keep = true,
	},
	[EROCE_RESP_WRITE] = {
		.execute = eroce_resp_write,
		.duplicate = eroce_resp_dup_ack,
		.ack = true,
		.keep = true,
	},
	[EROCE_RESP_READ] = {
		.execute = eroce_resp_read_execute,
		.duplicate = eroce_resp_read_duplicate,
	},
	[EROCE_RESP_ATOMIC] = {
		.execute = eroce_resp_atomic_execute,
		.duplicate = eroce_resp_atomic_duplicate,
	},
	[EROCE_RESP_ATOMIC_WRITE] = {
		.execute = eroce_resp_atomic_write_execute,
		.duplicate = eroce_resp_atomic_write_duplicate,
	},
};

void eroce_resp_duplicate(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	eroce_stat_inc(pkt->edev, EROCE_CNT_DUP_REQUESTS);
	eroce_resp_ops[pkt->info->resp].duplicate(qp, pkt);
}

/* execute the request at the expected PSN */
void eroce_resp_execute(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	const struct eroce_resp_ops *ops = &eroce_resp_ops[pkt->info->resp];
	struct eroce_resp *resp = &qp->eng.resp;
	u32 npsn;

	if (!eroce_opcode_seq_ok(resp->in_msg, pkt->info->flags)) {
		eroce_resp_fatal(qp, pkt, EROCE_NAK_INVALID_REQ,
				 IB_WC_REM_INV_REQ_ERR);
		return;
	}

	npsn = ops->execute(qp, pkt);
	if (!npsn)
		return;
	resp->epsn = eroce_psn_add(resp->epsn, npsn);
	resp->nak_sent = false;
	if (ops->ack && eroce_bth_ackreq(pkt->bth))
		eroce_resp_ack(qp, eroce_syn_ack(EROCE_AETH_CREDIT_INVALID),
			       pkt->psn);
}
