// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_req_match.c - the sender's matching of responses to its send
 * entries: ACKs, NAKs, read responses and atomic acknowledgements.
 *
 * RC completes in order.  An ACK for PSN p acknowledges every request
 * packet up to p; a read response or atomic ACK, once matched to its
 * request, also acknowledges all that came before that request, and
 * una_psn moves past them.  Each send entry's response state (struct
 * eroce_swqe: done, resp_psn, ooo, rerequested) is kept here, as part of
 * the sender; read or atomic responses found lost or too far ahead are
 * asked for again (eroce_req_resend_read(), eroce_req_rewind()), and
 * entries retire from the SQ's tail (eroce_req_complete_tail(),
 * eroce_req_fail_tail()), which posts their CQEs.  What the transport
 * then does (retries, RNR waits, selective repeat, the timer, RTT) is
 * the requester's policy (eroce_req.c), told through eroce_req_una(),
 * eroce_req_answered(), eroce_req_ack_rcvd(), eroce_req_seq_nak(),
 * eroce_req_rnr_nak() and eroce_req_responded() (eroce_req.h).  The
 * fatal NAKs complete the entry in error and move the QP to the error
 * state.  Responses that fit nothing outstanding are counted and
 * dropped, and change nothing.
 *
 * What a response does is up to the handler of its kind, the opcode
 * table's struct eroce_opcode_info.match: eroce_match_ops[] holds, per
 * kind (ACK, read response, atomic ACK), its handler and whether its PSN
 * must be one outstanding; eroce_req_rcv_response(), the sender's one
 * entry for responses (eroce_deliver.c), dispatches and reports progress.
 *
 * Context: receive softirq.  Locks: the caller holds qp->eng.lock.
 */
#include "eroce.h"
#include "eroce_mem.h"
#include "eroce_opcode.h"
#include "eroce_psn.h"
#include "eroce_req.h"
#include "eroce_window.h"

/*
 * The oldest entry that has been sent at least once, or NULL.  Entries
 * are sent in order, so the sent ones are a prefix of [tail, head); after
 * a go-back-N, some of them lie beyond req->cur, and an acknowledgment
 * can still cover them.
 */
static struct eroce_swqe *eroce_match_oldest_sent(struct eroce_qp *qp)
{
	struct eroce_req *req = &qp->eng.req;
	struct eroce_swqe *w;

	if (qp->sq.consumer == req->head)
		return NULL;
	w = eroce_req_swqe(qp, qp->sq.consumer);
	return w->psn_valid ? w : NULL;
}

/* @w was sent: the requester checked its opcode */
static bool eroce_match_is_rd_atomic(const struct eroce_swqe *w)
{
	return eroce_wr_rd_atomic(eroce_wr_info(w->wqe->opcode));
}

/*
 * Every request packet before @psn is acknowledged: complete the sends
 * and writes that ended before it.  Stops at the first read or atomic,
 * which completes only with its response.
 */
static void eroce_match_ack_until(struct eroce_qp *qp, u32 psn)
{
	struct eroce_req *req = &qp->eng.req;
	struct eroce_swqe *w;
	u32 una = psn;

	while ((w = eroce_match_oldest_sent(qp))) {
		if (eroce_match_is_rd_atomic(w) ? !w->done :
		    !eroce_psn_before(w->last_psn, psn))
			break;
		eroce_req_complete_tail(qp, IB_WC_SUCCESS);
	}

	/* an open read or atomic still waits for its responses */
	w = eroce_match_oldest_sent(qp);
	if (w && eroce_match_is_rd_atomic(w) &&
	    eroce_psn_before(w->resp_psn, una))
		una = w->resp_psn;
	eroce_req_una(qp, una, true);
	/* acknowledged past where a rewind left the requester: skip ahead */
	if (eroce_psn_after(psn, req->psn))
		eroce_req_rewind(qp, psn);
}

/*
 * An ACK acknowledged past a read or atomic whose response never arrived:
 * the response was lost, ask again.
 */
static void eroce_match_check_lost_response(struct eroce_qp *qp, u32 psn)
{
	struct eroce_swqe *w = eroce_match_oldest_sent(qp);

	if (!w || !eroce_match_is_rd_atomic(w) || w->done ||
	    eroce_psn_before(psn, w->first_psn) || w->rerequested)
		return;
	w->rerequested = true;
	if (w->wqe->opcode == IB_UVERBS_WR_RDMA_READ)
		eroce_req_resend_read(qp, w);
	else
		eroce_req_rewind(qp, w->resp_psn);
}

static void eroce_match_nak(struct eroce_qp *qp, u32 psn, u8 syn,
			    u32 sr_hole)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	enum ib_wc_status status;

	switch (eroce_syn_value(syn)) {
	case EROCE_NAK_PSN_SEQ_ERR:
		eroce_stat_inc(edev, EROCE_CNT_SEQ_NAK_RCVD);
		eroce_match_ack_until(qp, psn);
		eroce_req_seq_nak(qp, psn, sr_hole);
		return;
	case EROCE_NAK_INVALID_REQ:
		status = IB_WC_REM_INV_REQ_ERR;
		break;
	case EROCE_NAK_REM_ACCESS_ERR:
		status = IB_WC_REM_ACCESS_ERR;
		break;
	case EROCE_NAK_REM_OP_ERR:
		status = IB_WC_REM_OP_ERR;
		break;
	default:
		status = IB_WC_REM_INV_RD_REQ_ERR;
		break;
	}
	/* the entry holding @psn failed at the responder; the QP fails */
	eroce_stat_inc(edev, EROCE_CNT_NAK_RCVD_FATAL);
	eroce_match_ack_until(qp, psn);
	if (eroce_match_oldest_sent(qp))
		eroce_req_fail_tail(qp, status);
	else
		eroce_qp_fatal(qp, 0);
}

static void eroce_match_rnr(struct eroce_qp *qp, u32 psn, u8 syn)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);

	eroce_stat_inc(edev, EROCE_CNT_RNR_NAK_RCVD);
	eroce_match_ack_until(qp, psn);
	if (eroce_req_rnr_nak(qp, psn,
			      eroce_rnr_timer_usec(eroce_syn_value(syn))))
		return;
	eroce_stat_inc(edev, EROCE_CNT_RNR_RETRY_EXCEEDED);
	if (eroce_match_oldest_sent(qp))
		eroce_req_fail_tail(qp, IB_WC_RNR_RETRY_EXC_ERR);
	else
		eroce_qp_fatal(qp, 0);
}

/*
 * The handler of each kind of response (struct eroce_opcode_info.match),
 * under qp->eng.lock.  rcv returns 0 when it took the response (the sender
 * then hears of it, eroce_req_responded()), -EALREADY for a duplicate
 * (which may still have acknowledged the entries before its own),
 * -EINVAL when the response fits nothing outstanding (counted and
 * dropped, and nothing changed).
 */
struct eroce_match_ops {
	int (*rcv)(struct eroce_qp *qp, struct eroce_rx *pkt);
	bool in_window;	/* its PSN must be in [una_psn, max_psn) */
};

/* an ACK, RNR NAK or NAK: its AETH says which */
static int eroce_match_ack(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	const struct eroce_aeth *aeth = eroce_hdr(pkt->info, pkt->bth,
						  EROCE_HDR_AETH);
	u8 syn = eroce_aeth_syn(aeth);

	switch (eroce_syn_type(syn)) {
	case EROCE_SYN_ACK:
		eroce_match_ack_until(qp, eroce_psn_add(pkt->psn, 1));
		eroce_match_check_lost_response(qp, pkt->psn);
		eroce_req_ack_rcvd(qp);
		break;
	case EROCE_SYN_RNR_NAK:
		eroce_match_rnr(qp, pkt->psn, syn);
		break;
	case EROCE_SYN_NAK:
		eroce_match_nak(qp, pkt->psn, syn,
				eroce_bth_sr(pkt->bth) ?
				eroce_bth_sr_hole(pkt->bth) : 0);
		break;
	default:
		break;
	}
	return 0;
}

/*
 * The index of the sent entry holding @psn, searched from the oldest, or
 * req->head when none does.  Nothing changes here: a response is matched
 * to its request before anything it implies is believed.
 */
static u32 eroce_match_find(struct eroce_qp *qp, u32 psn)
{
	struct eroce_req *req = &qp->eng.req;
	u32 i;

	for (i = qp->sq.consumer; i != req->head; i++) {
		const struct eroce_swqe *w = eroce_req_swqe(qp, i);

		if (!w->psn_valid || eroce_psn_before(psn, w->first_psn))
			break;
		if (!eroce_psn_after(psn, w->last_psn))
			return i;
	}
	return req->head;
}

/*
 * The oldest PSN still unanswered moves on with the responses: past
 * entries completed, to the next open read's or atomic's response, or to
 * the first PSN of the next send or write.
 */
static void eroce_match_update_una(struct eroce_qp *qp)
{
	struct eroce_req *req = &qp->eng.req;
	struct eroce_swqe *w = eroce_match_oldest_sent(qp);
	u32 una = req->psn;

	if (w)
		una = eroce_match_is_rd_atomic(w) ? w->resp_psn : w->first_psn;
	eroce_req_una(qp, una, false);
}

/*
 * A response to the entry at @idx acknowledges every request before it
 * (the responder answers in order): the sends and writes ahead of the
 * oldest open read or atomic complete, and reads before @idx whose
 * responses are incomplete lost them and are asked for again, once.
 */
static void eroce_match_implicit_ack(struct eroce_qp *qp, u32 idx)
{
	struct eroce_swqe *w;
	u32 i;

	while (qp->sq.consumer != idx &&
	       !eroce_match_is_rd_atomic(eroce_req_swqe(qp, qp->sq.consumer)))
		eroce_req_complete_tail(qp, IB_WC_SUCCESS);
	for (i = qp->sq.consumer; i != idx; i++) {
		w = eroce_req_swqe(qp, i);
		if (w->wqe->opcode != IB_UVERBS_WR_RDMA_READ || w->done ||
		    w->rerequested)
			continue;
		w->rerequested = true;
		eroce_stat_inc(to_eroce_dev(qp->ibqp.device),
			       EROCE_CNT_RETRANSMIT_NAK);
		eroce_req_resend_read(qp, w);
	}
	eroce_match_update_una(qp);
}

/* an ATOMIC WRITE, which a read response without data answers */
static bool eroce_match_is_atomic_write(const struct eroce_swqe *w)
{
	return eroce_wr_info(w->wqe->opcode)->flags & EROCE_WRF_ATOMIC_WRITE;
}

/*
 * The outstanding read (or ATOMIC WRITE) holding @psn, or NULL; what it
 * implies for the entries before it is done (eroce_match_implicit_ack()).
 */
static struct eroce_swqe *eroce_match_read_entry(struct eroce_qp *qp, u32 psn)
{
	u32 idx = eroce_match_find(qp, psn);
	struct eroce_swqe *w;

	if (idx == qp->eng.req.head)
		return NULL;
	w = eroce_req_swqe(qp, idx);
	if (w->wqe->opcode != IB_UVERBS_WR_RDMA_READ &&
	    !eroce_match_is_atomic_write(w))
		return NULL;
	eroce_match_implicit_ack(qp, idx);
	return w;
}

/* complete, in order, the oldest entries whose responses are all in */
static void eroce_match_retire(struct eroce_qp *qp)
{
	struct eroce_swqe *w;

	while ((w = eroce_match_oldest_sent(qp)) && w->done)
		eroce_req_complete_tail(qp, IB_WC_SUCCESS);
	eroce_match_update_una(qp);
}

/* a response that does not fit the request: it fails, and the QP */
static void eroce_match_bad_resp(struct eroce_qp *qp, struct eroce_swqe *w)
{
	while (eroce_req_swqe(qp, qp->sq.consumer) != w)
		eroce_req_complete_tail(qp, IB_WC_WR_FLUSH_ERR);
	eroce_req_fail_tail(qp, IB_WC_BAD_RESP_ERR);
}

/*
 * The answer to the ATOMIC WRITE @w: a READ RESPONSE ONLY without data at
 * its PSN (IBA 1.5), as rdma_rxe sends it.
 */
static int eroce_match_atomic_write_resp(struct eroce_qp *qp,
					 struct eroce_rx *pkt,
					 struct eroce_swqe *w)
{
	if (w->done)
		return -EALREADY;		/* a duplicate response */
	if (pkt->opcode != EROCE_OP_RC_READ_RESPONSE_ONLY || pkt->paylen) {
		eroce_match_bad_resp(qp, w);
		return 0;
	}
	eroce_req_answered(qp);
	w->resp_psn = eroce_psn_add(w->last_psn, 1);
	w->rerequested = false;
	w->done = true;
	eroce_match_retire(qp);
	return 0;
}

/*
 * Read responses may arrive out of order (several CPUs feed the path):
 * every packet carries its own offset, so data is placed as it comes, and
 * w->ooo remembers which of the next EROCE_RD_OOO_BITS packets after
 * w->resp_psn are in (eroce_window.h).  Only a hole that stays open is
 * asked for again (eroce_match_read_entry() for a later read's responses,
 * or the retransmit timer).
 */
static int eroce_match_read_resp(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	u32 mtu = ib_mtu_enum_to_int(READ_ONCE(qp->attrs.path_mtu));
	struct eroce_sge_iter it;
	enum eroce_rd_resp what;
	struct eroce_swqe *w;
	u32 off;
	int err;

	w = eroce_match_read_entry(qp, pkt->psn);
	if (!w)
		return -EINVAL;
	if (eroce_match_is_atomic_write(w))
		return eroce_match_atomic_write_resp(qp, pkt, w);

	if (w->done)
		return -EALREADY;		/* a duplicate response */
	what = eroce_rd_resp_check(w->resp_psn, w->ooo, pkt->psn);
	if (what == EROCE_RD_RESP_DUP)
		return -EALREADY;
	if (what == EROCE_RD_RESP_FAR) {
		/* too far ahead to remember: ask for the rest once */
		if (!w->rerequested) {
			w->rerequested = true;
			eroce_stat_inc(edev, EROCE_CNT_RETRANSMIT_NAK);
			eroce_req_resend_read(qp, w);
		}
		return -EALREADY;
	}

	off = eroce_psn_diff(pkt->psn, w->first_psn) * mtu;
	if (off + pkt->paylen > w->length ||
	    (!(pkt->info->flags & EROCE_OPF_END) && pkt->paylen != mtu) ||
	    ((pkt->info->flags & EROCE_OPF_END) &&
	     off + pkt->paylen != w->length)) {
		eroce_match_bad_resp(qp, w);
		return 0;
	}

	eroce_sge_iter_init(&it, (const struct eroce_sge *)(w->wqe + 1),
			    w->wqe->num_sge);
	err = eroce_sge_skip(&it, off);
	if (!err)
		err = eroce_sge_copy(&edev->res, qp->ibqp.pd, &it, pkt->payload,
				     pkt->paylen, true);
	if (err) {
		while (eroce_req_swqe(qp, qp->sq.consumer) != w)
			eroce_req_complete_tail(qp, IB_WC_WR_FLUSH_ERR);
		eroce_req_fail_tail(qp, IB_WC_LOC_PROT_ERR);
		return 0;
	}
	eroce_req_answered(qp);

	if (what == EROCE_RD_RESP_EARLY) {
		w->ooo = eroce_rd_resp_early(w->ooo, w->resp_psn, pkt->psn);
		return 0;
	}
	/* in order: move past it and past what already came after it */
	eroce_rd_resp_next(&w->resp_psn, &w->ooo);
	w->rerequested = false;
	if (eroce_psn_after(w->resp_psn, w->last_psn))
		w->done = true;
	eroce_match_retire(qp);
	return 0;
}

static int eroce_match_atomic_ack(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	const struct eroce_atmack *ack = eroce_hdr(pkt->info, pkt->bth,
						   EROCE_HDR_ATMACK);
	struct eroce_sge_iter it;
	struct eroce_swqe *w;
	u32 idx, i;
	u64 orig;
	int err;

	idx = eroce_match_find(qp, pkt->psn);
	if (idx == qp->eng.req.head)
		return -EINVAL;
	w = eroce_req_swqe(qp, idx);
	if (!(eroce_wr_info(w->wqe->opcode)->flags & EROCE_WRF_ATOMIC))
		return -EINVAL;
	/* an earlier read or atomic still open: this one cannot be next */
	for (i = qp->sq.consumer; i != idx; i++)
		if (eroce_match_is_rd_atomic(eroce_req_swqe(qp, i)))
			return -EINVAL;
	eroce_match_implicit_ack(qp, idx);

	orig = eroce_atmack_orig(ack);
	eroce_sge_iter_init(&it, (const struct eroce_sge *)(w->wqe + 1),
			    w->wqe->num_sge);
	err = eroce_sge_copy(&edev->res, qp->ibqp.pd, &it, &orig,
			     sizeof(orig), true);
	eroce_req_answered(qp);
	if (err) {
		eroce_req_fail_tail(qp, IB_WC_LOC_PROT_ERR);
		return 0;
	}
	eroce_req_complete_tail(qp, IB_WC_SUCCESS);
	eroce_match_retire(qp);
	return 0;
}

/*
 * Indexed by struct eroce_opcode_info.match; EROCE_MATCH_NONE has no
 * handler: only responses come here (eroce_deliver.c), and every response
 * row names its kind (test_opcode).  An ACK names request PSNs, so it
 * must be for ones outstanding; read responses and atomic ACKs are
 * matched to their request instead, and their AETH is always an ACK.
 */
static const struct eroce_match_ops eroce_match_ops[EROCE_MATCH_KINDS] = {
	[EROCE_MATCH_ACK] = {
		.rcv = eroce_match_ack,
		.in_window = true,
	},
	[EROCE_MATCH_READ_RESP] = {
		.rcv = eroce_match_read_resp,
	},
	[EROCE_MATCH_ATOMIC_ACK] = {
		.rcv = eroce_match_atomic_ack,
	},
};

/**
 * eroce_req_rcv_response() - handle a response packet for an RC QP
 * @qp: the QP, in RTS or SQD (checked by the caller)
 * @pkt: the validated packet
 */
void eroce_req_rcv_response(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	const struct eroce_match_ops *ops = &eroce_match_ops[pkt->info->match];
	struct eroce_dev *edev = pkt->edev;
	struct eroce_req *req = &qp->eng.req;
	u32 una = req->una_psn, tail = qp->sq.consumer;
	int err;

	lockdep_assert_held(&qp->eng.lock);

	if (ops->in_window &&
	    !eroce_ack_psn_valid(pkt->psn, req->una_psn, req->max_psn)) {
		/* an old duplicate ACK is harmless; anything else is noise */
		eroce_stat_inc(edev, EROCE_CNT_DROP_UNEXPECTED_RESP);
		net_dbg_ratelimited("eroce: QP %u: response PSN %u outside [%u, %u)\n",
				    qp->ibqp.qp_num, pkt->psn, req->una_psn,
				    req->max_psn);
		return;
	}

	err = ops->rcv(qp, pkt);
	/* a duplicate can still acknowledge what came before it */
	if (err == -EALREADY && req->una_psn == una &&
	    qp->sq.consumer == tail)
		return;
	if (err == -EINVAL) {
		eroce_stat_inc(edev, EROCE_CNT_DROP_UNEXPECTED_RESP);
		net_dbg_ratelimited("eroce: QP %u: unexpected %s PSN %u\n",
				    qp->ibqp.qp_num,
				    eroce_opcode_name(pkt->opcode), pkt->psn);
		return;
	}

	eroce_req_responded(qp, una, tail);
}
