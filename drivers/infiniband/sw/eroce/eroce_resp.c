// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_resp.c - the responder: request packets into memory, receive
 * completions and ACK/NAK/read/atomic responses.
 *
 * Requests are processed in PSN order.  A request ahead of the expected
 * PSN draws one sequence NAK (until the expected PSN arrives); with
 * selective repeat (loss_recovery sr, offered by the requester) a SEND or
 * WRITE packet after the hole is kept and executed once the hole closes
 * (eroce_resp_keep(), eroce_resp_drain()).  One behind it is a
 * duplicate: SEND and WRITE are acknowledged again, READ is executed
 * again from the MR, an atomic is answered from the replay cache and
 * never executed twice.  A SEND (or WRITE with immediate) that
 * finds no receive WQE draws an RNR NAK.  Remote access violations and
 * malformed requests draw the matching NAK and move the QP to the error
 * state.  Every address and length from the network is checked against
 * the MR before any byte moves.
 *
 * What a request does is up to the handlers of its kind, the opcode
 * table's struct eroce_opcode_info.resp: eroce_resp_ops[] holds, per
 * kind (SEND, WRITE, READ, atomic), how it executes at the expected PSN,
 * how a duplicate is answered, whether AckReq draws an ACK and whether
 * selective repeat may keep it.  The PSN check, the message sequence
 * check and the PSN accounting are common (eroce_resp_rc(),
 * eroce_resp_execute()); UD's one kind of request, a SEND, goes to
 * eroce_resp_ud() instead.
 *
 * UC runs the SEND and WRITE handlers of RC without acknowledgments
 * (eroce_resp_uc()): a PSN gap loses the message in progress, and a
 * remote error drops the message instead of failing the QP.
 *
 * Read responses can be many packets; they wait in a queue of owed
 * responses, the first EROCE_RESP_INLINE_PKTS of them sent at once from
 * the receive softirq (a short read is answered without a wake-up), the
 * rest by the QP's work item.  While that queue is not empty every other
 * response (ACK, NAK, atomic ACK) joins it, so responses always leave in
 * PSN order.  Its last entry is kept for an ACK or NAK, and one that finds
 * it full is folded into the ACK or NAK queued last (eroce_resp_ack_fold()):
 * an RNR NAK is never lost behind read responses.
 *
 * The responder is five files, each calling only the ones after it:
 * eroce_resp.c, its entry points (eroce_resp_rcv() by the QP's type, RC's
 * PSN check, the QP's flush, reset and teardown); eroce_resp_ud.c, UC and
 * UD receive; eroce_resp_sr.c, selective repeat; eroce_resp_exec.c, the
 * execution of requests; eroce_resp_queue.c, the owed responses and the
 * READ sender.  eroce_resp.h declares what they share.
 *
 * Context: receive softirq (eroce_resp_rcv()) and the QP's state changes
 * in eroce_task.c (eroce_resp_flush(), eroce_resp_reset(),
 * eroce_resp_free()).  Locks: the caller holds qp->eng.lock, but for
 * eroce_resp_free() (the engine's teardown); the RQ or SRQ consumer_lock
 * and the CQ producer lock nest inside it.
 */
#include "eroce_psn.h"
#include "eroce_resp.h"

static void eroce_resp_rc(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	struct eroce_resp *resp = &qp->eng.resp;
	s32 diff = eroce_psn_diff(pkt->psn, resp->epsn);
	bool kept;

	if (diff > 0) {
		/*
		 * One NAK per hole, but a packet kept already that asks for
		 * an ACK is the requester's tail-loss probe: it heard
		 * nothing, so the NAK or the hole's resend was lost.  Name
		 * the hole again, still offering selective repeat, rather
		 * than leave it to the retransmit timeout.
		 */
		bool probe = eroce_bth_ackreq(pkt->bth) &&
			     eroce_resp_is_kept(qp, pkt->psn);

		kept = eroce_resp_keep(qp, pkt, diff);
		probe = probe && kept;
		if (!resp->nak_sent || probe) {
			if (probe)
				eroce_stat_inc(pkt->edev, EROCE_CNT_SR_HOLE_RENAMED);
			eroce_resp_nak_hole(qp, pkt->edev, kept);
		}
		return;
	}
	if (diff < 0) {
		eroce_resp_duplicate(qp, pkt);
		return;
	}
	eroce_resp_execute(qp, pkt);
	if (resp->ooo_count)
		eroce_resp_drain(qp);
}

/**
 * eroce_resp_rcv() - handle a request packet
 * @qp: the QP, in a state that receives (checked by the caller)
 * @pkt: the validated packet
 */
void eroce_resp_rcv(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	lockdep_assert_held(&qp->eng.lock);
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		eroce_qp_tx_follow(qp);
		eroce_resp_rc(qp, pkt);
		break;
	case IB_QPT_UC:
		eroce_resp_uc(qp, pkt);
		break;
	default:
		eroce_resp_ud(qp, pkt);
		break;
	}
}

/*
 * The QP enters the error state: the receive WQE a message in progress
 * took (or a dropped UC message left) completes with a flush error, as
 * the RQ's entries after it will.
 */
void eroce_resp_flush(struct eroce_qp *qp)
{
	struct eroce_resp *resp = &qp->eng.resp;
	const struct eroce_recv_wqe *rwqe = resp->rwqe;
	struct eroce_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
	};

	lockdep_assert_held(&qp->eng.lock);
	if (!resp->have_rwqe)
		return;
	cqe.wr_id = rwqe->wr_id;
	resp->have_rwqe = false;
	eroce_cq_post(to_eroce_cq(qp->ibqp.recv_cq), &cqe, false);
}

/* forget every message in progress and every owed response */
void eroce_resp_reset(struct eroce_qp *qp)
{
	struct eroce_resp *resp = &qp->eng.resp;

	lockdep_assert_held(&qp->eng.lock);
	resp->rsp_tail = resp->rsp_head;
	resp->in_msg = 0;
	resp->have_rwqe = false;
	resp->nak_sent = false;
	memset(resp->atomic, 0, resp->rsp_size / 2 * sizeof(*resp->atomic));
	eroce_resp_ooo_clear(qp);
}

/* free what the responder allocated on its own (engine teardown) */
void eroce_resp_free(struct eroce_qp *qp)
{
	eroce_resp_ooo_clear(qp);
}
