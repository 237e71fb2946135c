// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_req.c - the requester: send queue entries become packets.
 *
 * The requester copies each SQ entry out of the (possibly user-mapped)
 * ring into kernel memory before it validates it, assigns PSNs, segments
 * SEND and WRITE messages into path-MTU packets, sends READ and atomic
 * requests, and keeps what it needs to retransmit: go-back-N from any PSN
 * (eroce_req_rewind()), driven by sequence NAKs, RNR NAKs and the
 * retransmit timer.  The retransmission policy (retries, RNR waits,
 * selective repeat, timers, RTT) lives here, behind the events the
 * sender's matching of responses (eroce_req_match.c) reports
 * (eroce_req_una() and the calls after it, eroce_req.h); that matching
 * asks again for a read or atomic response it finds lost
 * (eroce_req_resend_read(), eroce_req_rewind()).  Entries leave the SQ in
 * order when a response retires them (eroce_req_complete_tail()), which
 * is also when userspace sees their slots free again.
 *
 * UC sends its entries as RC does, in path-MTU packets with PSNs, but
 * nothing is acknowledged or sent again: an entry completes once its last
 * packet is handed to the IP stack.  UD (and the GSI QP) send each entry
 * as one packet and complete it the same way.
 *
 * Local operations (REG_MR, LOCAL_INV; kernel QPs only) send nothing: the
 * requester executes one when it reaches it, so every entry posted after
 * it sees its effect, and it completes in order, with the entries before
 * it (eroce_req_local()).
 *
 * Context: the QP's work item and the user doorbell (process context),
 * softirq for the timer and responses.  Locks: qp->eng.lock (bottom halves
 * off) for everything here; the SQ consumer_lock and the CQ producer lock
 * nest inside it.
 */
#include <linux/log2.h>

#include "eroce.h"
#include "eroce_mem.h"
#include "eroce_opcode.h"
#include "eroce_psn.h"
#include "eroce_req.h"
#include "eroce_window.h"
#include "eroce_xmit.h"

/* entries reach these only after eroce_req_fetch() checked the opcode */
static bool eroce_wqe_is_rd_atomic(const struct eroce_send_wqe *wqe)
{
	return eroce_wr_rd_atomic(eroce_wr_info(wqe->opcode));
}

static bool eroce_wqe_is_atomic(const struct eroce_send_wqe *wqe)
{
	return eroce_wr_info(wqe->opcode)->flags & EROCE_WRF_ATOMIC;
}

static bool eroce_wqe_is_atomic_write(const struct eroce_send_wqe *wqe)
{
	return eroce_wr_info(wqe->opcode)->flags & EROCE_WRF_ATOMIC_WRITE;
}

static bool eroce_wqe_is_local(const struct eroce_send_wqe *wqe)
{
	return eroce_wr_local(eroce_wr_info(wqe->opcode));
}

static const struct eroce_sge *eroce_wqe_sges(const struct eroce_send_wqe *wqe)
{
	return (const struct eroce_sge *)(wqe + 1);
}

static u32 eroce_qp_mtu(struct eroce_qp *qp)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	enum ib_mtu mtu;

	if (eroce_qp_connected(qp))
		mtu = READ_ONCE(qp->attrs.path_mtu);
	else
		mtu = READ_ONCE(edev->active_mtu);
	return ib_mtu_enum_to_int(mtu ? mtu : IB_MTU_256);
}

/* the entry at the tail leaves the SQ, with a CQE if asked or failed */
void eroce_req_complete_tail(struct eroce_qp *qp, enum ib_wc_status status)
{
	struct eroce_req *req = &qp->eng.req;
	struct eroce_swqe *w = eroce_req_swqe(qp, qp->sq.consumer);
	struct eroce_cqe cqe = {
		.wr_id = w->wqe->wr_id,
		.status = status,
		.opcode = eroce_wc_opcode_from_wr(w->wqe->opcode),
		.byte_len = w->length,
		.qp_num = qp->ibqp.qp_num,
	};
	bool post = status != IB_WC_SUCCESS || w->signaled;
	unsigned long flags;

	lockdep_assert_held(&qp->eng.lock);

	/*
	 * An acknowledgment can cover the entry the requester went back to:
	 * it moves on to the next one, at that one's first PSN.
	 */
	if (req->cur == qp->sq.consumer) {
		req->cur++;
		req->cur_offset = 0;
		if (w->psn_valid &&
		    eroce_psn_before_eq(req->psn, w->last_psn))
			req->psn = eroce_psn_add(w->last_psn, 1);
	}
	/*
	 * The slot is free before the CQE says so: a consumer that posts
	 * again as soon as it sees the completion must find room.  The
	 * ring's consumer index is the requester's tail.
	 */
	spin_lock_irqsave(&qp->sq.consumer_lock, flags);
	eroce_ring_consume_commit(&qp->sq);
	spin_unlock_irqrestore(&qp->sq.consumer_lock, flags);

	if (post)
		eroce_cq_post(to_eroce_cq(qp->ibqp.send_cq), &cqe, false);
	eroce_req_check_drained(qp);
}

/**
 * eroce_req_fail_tail() - the entry at the tail fails, and the QP with it
 * @qp: the QP
 * @status: the entry's completion status
 *
 * The QP is in ERR before the completion is posted: a consumer that
 * reacts to the error completion by querying the QP must find ERR.
 * Context: engine lock held.
 */
void eroce_req_fail_tail(struct eroce_qp *qp, enum ib_wc_status status)
{
	lockdep_assert_held(&qp->eng.lock);
	eroce_qp_mark_err(qp);
	eroce_req_complete_tail(qp, status);
	eroce_qp_fatal(qp, 0);
}

/* complete every fetched entry with a flush error (QP in ERR) */
void eroce_req_flush(struct eroce_qp *qp)
{
	struct eroce_req *req = &qp->eng.req;

	lockdep_assert_held(&qp->eng.lock);
	while (qp->sq.consumer != req->head)
		eroce_req_complete_tail(qp, IB_WC_WR_FLUSH_ERR);
	req->cur = qp->sq.consumer;
	req->cur_offset = 0;
	req->una_psn = req->psn;
	hrtimer_try_to_cancel(&req->timer);
	req->timer_armed = false;
}

/* the retransmit timer fires in @ns */
static void eroce_req_arm_timer(struct eroce_qp *qp, u64 ns)
{
	struct eroce_req *req = &qp->eng.req;

	lockdep_assert_held(&qp->eng.lock);
	hrtimer_start(&req->timer, ns_to_ktime(ns), HRTIMER_MODE_REL_SOFT);
	req->timer_armed = true;
}

/*
 * Is a sent packet still unacknowledged?  Entries are sent and completed
 * in order, so: has the oldest entry been sent?  Never on UC and UD,
 * which expect no acknowledgment.
 */
static bool eroce_req_outstanding(struct eroce_qp *qp)
{
	struct eroce_req *req = &qp->eng.req;

	return qp->ibqp.qp_type == IB_QPT_RC &&
	       qp->sq.consumer != req->head &&
	       eroce_req_swqe(qp, qp->sq.consumer)->psn_valid;
}

/*
 * How many packets may be unacknowledged: max_inflight_pkts, or fewer
 * while the window grows back after a retransmit timeout (req->cwnd).
 */
static u32 eroce_req_window(struct eroce_qp *qp)
{
	u32 max = READ_ONCE(to_eroce_dev(qp->ibqp.device)->tuning.max_inflight_pkts);
	u32 cwnd = qp->eng.req.cwnd;

	return cwnd ? min(cwnd, max) : max;
}

/*
 * Ask for an ACK at least every EROCE_ACKREQ_EVERY packets, and twice per
 * in-flight window, so a small window never waits for the timer.
 */
static u32 eroce_req_ackreq_every(struct eroce_qp *qp)
{
	return clamp_t(u32, eroce_req_window(qp) / 2, 1, EROCE_ACKREQ_EVERY);
}

/* is there something for the requester to send (or to fetch and send)? */
static bool eroce_req_has_work(struct eroce_qp *qp)
{
	struct eroce_req *req = &qp->eng.req;

	lockdep_assert_held(&qp->eng.lock);
	if (req->rnr_wait)
		return false;
	return req->cur != req->head ||
	       READ_ONCE(qp->sq.ctrl->producer) != req->head;
}

/*
 * The retransmit timeout: the QP's local ACK timeout (4.096 us *
 * 2^timeout; 0 waits forever), or with adaptive_rto and an RTT measured,
 * srtt + 4 * rttvar (never longer than the QP's timeout); kept within the
 * device's min_rto_us and max_rto_us, doubled per consecutive timeout
 * when rto_backoff is 2.
 */
static u64 eroce_req_rto_ns(struct eroce_qp *qp)
{
	struct eroce_tuning *t = &to_eroce_dev(qp->ibqp.device)->tuning;
	u64 min_ns = (u64)READ_ONCE(t->min_rto_us) * NSEC_PER_USEC;
	u64 max_ns = (u64)READ_ONCE(t->max_rto_us) * NSEC_PER_USEC;
	u8 timeout = READ_ONCE(qp->attrs.timeout);
	struct eroce_req *req = &qp->eng.req;
	u64 rto;

	if (!timeout)
		return 0;
	rto = 4096ULL << min_t(u8, timeout, 31);
	if (READ_ONCE(t->adaptive_rto) && req->srtt_ns)
		rto = min(rto, req->srtt_ns +
			  max(4 * req->rttvar_ns, EROCE_RTO_GRANULARITY_NS));
	rto = max(rto, min_ns);
	if (READ_ONCE(t->rto_backoff) == 2)
		rto <<= min_t(u8, qp->eng.req.backoff, 16);
	if (max_ns)
		rto = min(rto, max(max_ns, min_ns));
	return rto;
}

/*
 * The tail-loss probe timeout: two smoothed round trips (a quarter of the
 * retransmit timeout before the first RTT sample, so that a loss in the
 * first window is probed too), when loss_recovery is tlp (or sr), no
 * probe went out since the last progress and it comes before the
 * retransmit timeout; 0 otherwise.
 */
static u64 eroce_req_pto_ns(struct eroce_qp *qp, u64 rto)
{
	struct eroce_tuning *t = &to_eroce_dev(qp->ibqp.device)->tuning;
	struct eroce_req *req = &qp->eng.req;
	u64 pto;

	if (READ_ONCE(t->loss_recovery) == EROCE_LOSS_GBN || req->tlp_sent)
		return 0;
	pto = req->srtt_ns ? 2 * req->srtt_ns : rto / 4;
	pto = max(pto, EROCE_TLP_MIN_NS);
	return pto < rto ? pto : 0;
}

/*
 * Something was acknowledged or a packet went out: (re)start the
 * retransmit timer while packets are unacknowledged, stop it otherwise.
 * With loss_recovery tlp or sr the timer first runs the shorter probe
 * timeout.
 */
static void eroce_req_progress(struct eroce_qp *qp)
{
	struct eroce_req *req = &qp->eng.req;
	u64 rto, pto;

	lockdep_assert_held(&qp->eng.lock);
	if (req->rnr_wait)
		return;
	if (!eroce_req_outstanding(qp)) {
		if (req->timer_armed) {
			hrtimer_try_to_cancel(&req->timer);
			req->timer_armed = false;
		}
		req->tlp_armed = false;
		return;
	}
	rto = eroce_req_rto_ns(qp);
	if (!rto)
		return;
	pto = eroce_req_pto_ns(qp, rto);
	req->tlp_armed = pto != 0;
	eroce_req_arm_timer(qp, pto ?: rto);
}

/*
 * The peer acknowledged something new (una_psn moved on from @una): a
 * window cut by a timeout grows by the packets acknowledged, the timed
 * PSN, if covered, gives an RTT sample (Karn: a rewind over it cancelled
 * the timing), and the next tail may be probed again.
 */
static void eroce_req_acked(struct eroce_qp *qp, u32 una)
{
	struct eroce_req *req = &qp->eng.req;
	s64 r, err;

	lockdep_assert_held(&qp->eng.lock);
	if (req->cwnd) {
		u32 max = READ_ONCE(to_eroce_dev(qp->ibqp.device)->tuning.max_inflight_pkts);

		req->cwnd += eroce_psn_diff(req->una_psn, una);
		if (req->cwnd >= max)
			req->cwnd = 0;
	}
	req->tlp_sent = false;
	if (req->sr_hole_open && eroce_psn_after(req->una_psn, req->sr_hole))
		req->sr_hole_open = false;
	if (!req->rtt_timing || !eroce_psn_after(req->una_psn, req->rtt_psn))
		return;
	req->rtt_timing = false;
	r = ktime_get_ns() - req->rtt_start_ns;
	if (r <= 0)
		r = 1;
	if (!req->srtt_ns) {
		req->srtt_ns = r;
		req->rttvar_ns = r / 2;
		return;
	}
	err = r - (s64)req->srtt_ns;
	req->rttvar_ns = (3 * req->rttvar_ns + abs(err)) / 4;
	req->srtt_ns = (7 * req->srtt_ns + r) / 8;
}

/**
 * eroce_req_rewind() - continue sending from @psn
 * @qp: an RC or UC QP
 * @psn: a PSN already sent: go back N to it after a loss, or forward to it
 *	 when an acknowledgment covers packets the requester had rewound
 *	 over
 */
void eroce_req_rewind(struct eroce_qp *qp, u32 psn)
{
	struct eroce_req *req = &qp->eng.req;
	u32 mtu = eroce_qp_mtu(qp);
	u32 i;

	lockdep_assert_held(&qp->eng.lock);
	/*
	 * Going back over the hole selective repeat is repairing sends it
	 * and all after it again: the window counts from una_psn once more.
	 * A packet after the hole sent again (a skip forward), or the last
	 * one sent (a tail-loss probe, which may end the hole), is no going
	 * back N: the repair goes on, or the window, counted from una_psn,
	 * would hold the probe back.
	 */
	if (req->sr_hole_open && eroce_psn_before_eq(psn, req->sr_hole) &&
	    eroce_psn_diff(req->max_psn, psn) > 1)
		req->sr_hole_open = false;
	/* Karn: a PSN sent twice gives no RTT sample */
	if (req->rtt_timing && eroce_psn_before_eq(psn, req->rtt_psn))
		req->rtt_timing = false;
	for (i = qp->sq.consumer; i != req->head; i++) {
		struct eroce_swqe *w = eroce_req_swqe(qp, i);

		if (!w->psn_valid || eroce_psn_before(psn, w->first_psn))
			break;
		if (eroce_psn_after(psn, w->last_psn))
			continue;
		req->cur = i;
		req->cur_offset = eroce_wqe_is_atomic(w->wqe) ? 0 :
				  eroce_psn_diff(psn, w->first_psn) * mtu;
		req->psn = psn;
		return;
	}
	/* @psn is the first one never sent: resume with entry @i */
	req->cur = i;
	req->cur_offset = 0;
	req->psn = psn;
}

/*
 * Copy the next SQ entry into kernel memory and check it.  Returns 0,
 * -ENOENT when the SQ is empty, -EPROTO for a corrupt ring, or -EINVAL
 * (-EMSGSIZE: too long) for an entry that must fail (it is fetched and
 * completed in error).
 */
static int eroce_req_fetch(struct eroce_qp *qp)
{
	struct eroce_req *req = &qp->eng.req;
	const struct eroce_wr_info *wi;
	struct eroce_ring *sq = &qp->sq;
	struct eroce_send_wqe *wqe;
	struct eroce_swqe *w;
	u32 prod, i;
	u64 len = 0;

	/* pairs with the producer's store-release: the slot is written */
	prod = smp_load_acquire(&sq->ctrl->producer);
	if (prod == req->head)
		return -ENOENT;
	/*
	 * Userspace owns the producer: one past a full ring, or one moved
	 * back behind entries fetched already, would make the fetch copy a
	 * slot over an entry still in flight.
	 */
	if (prod - qp->sq.consumer > sq->num_slots ||
	    prod - qp->sq.consumer < req->head - qp->sq.consumer)
		return -EPROTO;

	w = eroce_req_swqe(qp, req->head);
	wqe = (struct eroce_send_wqe *)(req->copies +
		(size_t)(req->head & (sq->num_slots - 1)) * sq->slot_size);
	memcpy(wqe, eroce_ring_slot(sq, req->head), sq->slot_size);
	memset(w, 0, sizeof(*w));
	w->wqe = wqe;
	w->signaled = qp->sig_all || (wqe->send_flags & EROCE_SEND_SIGNALED);
	req->head++;

	wi = eroce_wr_info(wqe->opcode);
	if (!wi || !(wi->flags & eroce_qp_type_wrf(qp->ibqp.qp_type)))
		return -EINVAL;
	if (qp->user ? (wi->flags & EROCE_WRF_KERNEL) :
		       (wi->flags & EROCE_WRF_USER))
		return -EINVAL;
	if (eroce_wr_local(wi))
		return wqe->num_sge || (wqe->send_flags & EROCE_SEND_INLINE) ?
		       -EINVAL : 0;
	if (wi->flags & EROCE_WRF_ATOMIC_WRITE) {
		/* its 8 bytes ride in the WQE */
		if (wqe->num_sge || (wqe->send_flags & EROCE_SEND_INLINE) ||
		    (wqe->wr.atomic_write.remote_addr & 7))
			return -EINVAL;
		w->length = sizeof(wqe->wr.atomic_write.value);
		return 0;
	}

	if (wqe->send_flags & EROCE_SEND_INLINE) {
		if (eroce_wqe_is_rd_atomic(wqe) ||
		    wqe->inline_len > qp->sq_max_inline ||
		    wqe->inline_len > sq->slot_size - sizeof(*wqe))
			return -EINVAL;
		len = wqe->inline_len;
	} else {
		const struct eroce_sge *sge = eroce_wqe_sges(wqe);

		if (wqe->num_sge > qp->sq_max_sge ||
		    sizeof(*wqe) + wqe->num_sge * sizeof(*sge) > sq->slot_size)
			return -EINVAL;
		for (i = 0; i < wqe->num_sge; i++)
			len += sge[i].length;
	}
	if (len > EROCE_MAX_MSG_SIZE)
		return -EMSGSIZE;
	/* a READ's responses must fit half the PSN space (eroce_window.h) */
	if (wqe->opcode == IB_UVERBS_WR_RDMA_READ && eroce_qp_connected(qp) &&
	    !eroce_psn_span_ok(0, 0, DIV_ROUND_UP_ULL(len, eroce_qp_mtu(qp))))
		return -EMSGSIZE;
	if (eroce_wqe_is_atomic(wqe) &&
	    (len != sizeof(u64) || (wqe->wr.atomic.remote_addr & 7)))
		return -EINVAL;
	if (!eroce_qp_connected(qp) && len > eroce_qp_mtu(qp))
		return -EINVAL;
	w->length = len;
	return 0;
}

/* payload bytes [off, off + len) of @w into @buf */
static int eroce_req_copy_payload(struct eroce_qp *qp, struct eroce_swqe *w,
				  u32 off, void *buf, u32 len)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	const struct eroce_send_wqe *wqe = w->wqe;
	struct eroce_sge_iter it;
	int err;

	if (wqe->send_flags & EROCE_SEND_INLINE) {
		memcpy(buf, (const u8 *)(wqe + 1) + off, len);
		return 0;
	}
	if (eroce_wqe_is_atomic_write(wqe)) {
		memcpy(buf, wqe->wr.atomic_write.value + off, len);
		return 0;
	}
	eroce_sge_iter_init(&it, eroce_wqe_sges(wqe), wqe->num_sge);
	err = eroce_sge_skip(&it, off);
	if (err)
		return err;
	return eroce_sge_copy(&edev->res, qp->ibqp.pd, &it, buf, len, false);
}

/*
 * Is the entry after req->cur a local operation?  It sends nothing, so
 * the packet before it must ask for the ACK that completes both.  Reads
 * the ring slot itself when the entry is not fetched yet: a hint only (a
 * user ring may change under it, which delays only that user's own
 * completions).
 */
static bool eroce_req_local_next(struct eroce_qp *qp)
{
	struct eroce_req *req = &qp->eng.req;
	const struct eroce_send_wqe *slot;
	const struct eroce_wr_info *wi;
	u32 i = req->cur + 1;
	u8 opcode;

	if ((s32)(req->head - i) > 0) {
		opcode = eroce_req_swqe(qp, i)->wqe->opcode;
	} else {
		/* pairs with the producer's store-release */
		if (smp_load_acquire(&qp->sq.ctrl->producer) == i)
			return false;
		slot = eroce_ring_slot(&qp->sq, i);
		opcode = READ_ONCE(slot->opcode);
	}
	wi = eroce_wr_info(opcode);
	return wi && eroce_wr_local(wi);
}

/*
 * Does the packet at req->psn ask for an ACK?  Every
 * eroce_req_ackreq_every()-th packet does, and the last packet of a
 * message unless it is a first transmission with another entry posted
 * behind it: the requester sends that one next, so a run of small
 * messages gets one ACK per window share instead of one each (the ACK is
 * cumulative).  A retransmitted last packet always asks, so an entry
 * behind it that never goes out (the QP drained to SQD, a malformed
 * entry) costs one retransmit timeout, not a stall.
 */
static bool eroce_req_ackreq(struct eroce_qp *qp, bool last,
			     bool retransmit)
{
	struct eroce_req *req = &qp->eng.req;

	if (++req->since_ackreq >= eroce_req_ackreq_every(qp))
		return true;
	if (!last)
		return false;
	return retransmit ||
	       READ_ONCE(qp->sq.ctrl->producer) == req->cur + 1 ||
	       eroce_req_local_next(qp);
}

/* the next packet of an RC entry, as eroce_req_plan() lays it out */
struct eroce_req_seg {
	u32 off;		/* of its payload (READ: of the rest) */
	u32 paylen;		/* payload bytes it carries */
	u32 npkts;		/* PSNs it takes: a READ request all its responses */
	bool first;
	bool last;
};

/*
 * Lay out the next packet of @w: its place in the message, and on the
 * first transmission the entry's PSN range.  Going back over a READ asks
 * only for the responses that have not come.  Returns false when there is
 * nothing to send: the READ is complete, the requester moved past it.
 */
static bool eroce_req_plan(struct eroce_qp *qp, struct eroce_swqe *w,
			   struct eroce_req_seg *seg)
{
	const struct eroce_send_wqe *wqe = w->wqe;
	struct eroce_req *req = &qp->eng.req;
	u32 mtu = eroce_qp_mtu(qp);

	seg->off = req->cur_offset;
	seg->first = !seg->off;
	seg->last = true;
	seg->paylen = 0;
	seg->npkts = 1;
	if (!eroce_wqe_is_rd_atomic(wqe)) {
		seg->paylen = min(mtu, w->length - seg->off);
		seg->last = seg->off + seg->paylen == w->length;
	} else if (wqe->opcode == IB_UVERBS_WR_RDMA_READ) {
		seg->npkts = max_t(u32, 1, DIV_ROUND_UP(w->length - seg->off,
							mtu));
	} else if (eroce_wqe_is_atomic_write(wqe)) {
		seg->paylen = w->length;	/* its 8 bytes, one packet */
	}

	if (!w->psn_valid) {
		/* first transmission: this entry's PSN range */
		u32 total = eroce_wqe_is_atomic(wqe) ? 1 :
			    max_t(u32, 1, DIV_ROUND_UP(w->length, mtu));

		w->first_psn = req->psn;
		w->last_psn = eroce_psn_add(req->psn, total - 1);
		w->resp_psn = req->psn;
		w->psn_valid = true;
	} else if (wqe->opcode == IB_UVERBS_WR_RDMA_READ) {
		u32 got = eroce_psn_diff(w->resp_psn, w->first_psn);

		if (w->done) {
			req->cur++;
			req->cur_offset = 0;
			req->psn = eroce_psn_add(w->last_psn, 1);
			return false;
		}
		if (got * mtu > seg->off) {
			seg->off = got * mtu;
			req->psn = w->resp_psn;
			seg->npkts = max_t(u32, 1,
					   DIV_ROUND_UP(w->length - seg->off,
							mtu));
		}
	}
	return true;
}

/* the BTH of a request packet at req->psn; UC asks for nothing back */
static void eroce_req_fill_bth(struct eroce_qp *qp, struct eroce_bth *bth,
			       const struct eroce_send_wqe *wqe, bool last,
			       bool retransmit)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	struct eroce_req *req = &qp->eng.req;

	eroce_bth_set_qpn(bth, READ_ONCE(qp->attrs.dest_qp_num));
	eroce_bth_set_psn(bth, req->psn);
	if (last && (wqe->send_flags & EROCE_SEND_SOLICITED))
		eroce_bth_set_se(bth, true);
	if (qp->ibqp.qp_type != IB_QPT_RC)
		return;
	/* offer selective repeat; IBTA responders ignore the bit */
	if (READ_ONCE(edev->tuning.loss_recovery) == EROCE_LOSS_SR)
		eroce_bth_set_sr(bth, true);
	if (eroce_req_ackreq(qp, last, retransmit)) {
		eroce_bth_set_ackreq(bth, true);
		req->since_ackreq = 0;
	}
}

/* the extension headers @info's opcode carries, from the entry */
static void eroce_req_fill_ext(const struct eroce_opcode_info *info,
			       struct eroce_bth *bth,
			       const struct eroce_swqe *w, u32 off)
{
	const struct eroce_send_wqe *wqe = w->wqe;

	if (info->flags & EROCE_OPF_RETH) {
		struct eroce_reth *reth = eroce_hdr(info, bth, EROCE_HDR_RETH);

		if (wqe->opcode == IB_UVERBS_WR_RDMA_READ)
			eroce_reth_init(reth, wqe->wr.rdma.remote_addr + off,
					wqe->wr.rdma.rkey, w->length - off);
		else
			eroce_reth_init(reth, wqe->wr.rdma.remote_addr,
					wqe->wr.rdma.rkey, w->length);
	}
	if (info->flags & EROCE_OPF_IMMDT) {
		struct eroce_immdt *imm = eroce_hdr(info, bth, EROCE_HDR_IMMDT);

		imm->imm = (__force __be32)wqe->ex;
	}
	if (info->flags & EROCE_OPF_IETH)
		eroce_ieth_init(eroce_hdr(info, bth, EROCE_HDR_IETH), wqe->ex);
	if (info->flags & EROCE_OPF_ATMETH)
		eroce_atmeth_init(eroce_hdr(info, bth, EROCE_HDR_ATMETH),
				  wqe->wr.atomic.remote_addr,
				  wqe->wr.atomic.rkey,
				  wqe->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ?
				  wqe->wr.atomic.swap :
				  wqe->wr.atomic.compare_add,
				  wqe->wr.atomic.compare_add);
}

/* a packet of @seg is built: move the requester past it */
static void eroce_req_advance(struct eroce_qp *qp, struct eroce_swqe *w,
			      const struct eroce_req_seg *seg)
{
	struct eroce_req *req = &qp->eng.req;

	if (eroce_wqe_is_rd_atomic(w->wqe)) {
		req->cur_offset = w->length;
		req->psn = eroce_psn_add(req->psn, seg->npkts);
	} else {
		req->cur_offset += seg->paylen;
		req->psn = eroce_psn_add(req->psn, 1);
	}
	if (req->cur_offset >= w->length) {
		req->cur++;
		req->cur_offset = 0;
	}
	if (eroce_psn_after(req->psn, req->max_psn))
		req->max_psn = req->psn;
}

/* count a retransmission, or time a first transmission (RTT sample) */
static bool eroce_req_note_tx(struct eroce_qp *qp)
{
	struct eroce_req *req = &qp->eng.req;

	if (eroce_psn_before(req->psn, req->max_psn)) {
		eroce_stat_inc(to_eroce_dev(qp->ibqp.device),
			       EROCE_CNT_RETRANSMIT_PACKETS);
		return true;
	}
	if (!req->rtt_timing) {
		req->rtt_timing = true;
		req->rtt_psn = req->psn;
		req->rtt_start_ns = ktime_get_ns();
	}
	return false;
}

/*
 * Send the batch.  A full queue on the way out dropped all of it: the
 * requester goes back to its first packet, to send them again on the
 * next run (-EAGAIN).  A batch without a path counts as sent, as if lost
 * on the wire: the retransmit timer sends it again, and retry_cnt ends it.
 */
static int eroce_req_xmit_batch(struct eroce_qp *qp, struct eroce_tx_batch *b)
{
	struct sk_buff *first = skb_peek(&b->pkts);
	u32 psn;

	if (!first)
		return 0;
	psn = eroce_bth_psn(eroce_pkt_bth(first));
	if (eroce_qp_send_batch(qp, b) != -ENOBUFS)
		return 0;
	eroce_req_rewind(qp, psn);
	return -EAGAIN;
}

/*
 * Send the next packet of the RC or UC entry at req->cur: it joins the
 * batch @b, which goes out first when the packet does not fit it.
 * Return: 0 or an errno.
 */
static int eroce_req_send_seg(struct eroce_qp *qp, struct eroce_swqe *w,
			      struct eroce_tx_batch *b)
{
	bool uc = qp->ibqp.qp_type == IB_QPT_UC;
	const struct eroce_opcode_info *info;
	struct eroce_req_seg seg;
	struct sk_buff *skb;
	struct eroce_bth *bth;
	bool retransmit;
	u8 opcode;
	int err;

	if (!eroce_req_plan(qp, w, &seg))
		return 0;
	opcode = eroce_wr_opcode(eroce_wr_info(w->wqe->opcode), uc, seg.first,
				 seg.last);
	info = eroce_opcode_info(opcode);
	retransmit = !uc && eroce_req_note_tx(qp);
	skb = eroce_pkt_alloc(to_eroce_dev(qp->ibqp.device), opcode,
			      seg.paylen);
	if (!skb)
		return -ENOMEM;
	bth = eroce_pkt_bth(skb);
	eroce_req_fill_bth(qp, bth, w->wqe, seg.last, retransmit);
	eroce_req_fill_ext(info, bth, w, seg.off);
	if (seg.paylen) {
		err = eroce_req_copy_payload(qp, w, seg.off,
					     eroce_pkt_payload(skb),
					     seg.paylen);
		if (err) {
			kfree_skb(skb);
			return err;
		}
	}
	eroce_req_advance(qp, w, &seg);
	eroce_rate_sent(qp, skb->len);

	if (!eroce_tx_batch_fits(qp, b, skb->len)) {
		/* on -EAGAIN this packet is sent again after the batch */
		err = eroce_req_xmit_batch(qp, b);
		if (err) {
			kfree_skb(skb);
			return err;
		}
	}
	eroce_tx_batch_add(b, skb);
	return 0;
}

/* may selective repeat send the packet at req->cur again? */
static bool eroce_req_resendable(struct eroce_qp *qp)
{
	struct eroce_req *req = &qp->eng.req;
	struct eroce_swqe *w;

	if (req->cur == req->head)
		return false;
	w = eroce_req_swqe(qp, req->cur);
	return w->psn_valid && !eroce_wqe_is_rd_atomic(w->wqe) &&
	       !eroce_wqe_is_local(w->wqe);
}

/**
 * eroce_req_resend_hole() - selective repeat: send lost packets again
 * @qp: an RC QP
 * @psn: the PSN a selective-repeat NAK names
 * @hole: how many PSNs from @psn on the NAK says are missing
 *
 * The responder kept what came after the hole: send its packets again,
 * one batch, asking for an ACK, and carry on from where the requester
 * was.  The hole ends early at a READ or atomic, or where the requester
 * had got to.
 *
 * Return: true when the hole's first packet went out again; false when
 * @psn is not part of a sent SEND or WRITE (the caller goes back N
 * instead).
 */
static bool eroce_req_resend_hole(struct eroce_qp *qp, u32 psn, u32 hole)
{
	struct eroce_req *req = &qp->eng.req;
	u32 cur = req->cur, offset = req->cur_offset, next = req->psn;
	struct eroce_tx_batch b;
	int err = 0;
	u32 n;

	lockdep_assert_held(&qp->eng.lock);
	if (!eroce_psn_before(psn, next))
		return false;
	eroce_req_rewind(qp, psn);
	if (!eroce_req_resendable(qp)) {
		req->cur = cur;
		req->cur_offset = offset;
		req->psn = next;
		return false;
	}
	eroce_tx_batch_init(&b, 4 * hole);
	for (n = 0; n < hole; n++) {
		if (n && (!eroce_psn_before(req->psn, next) ||
			  !eroce_req_resendable(qp)))
			break;
		if (!n || n == hole - 1)
			req->since_ackreq = EROCE_ACKREQ_EVERY;
		err = eroce_req_send_seg(qp, eroce_req_swqe(qp, req->cur), &b);
		if (err)
			break;
	}
	/* on an error, it goes on from the packet that failed (back N) */
	if (eroce_req_xmit_batch(qp, &b) || err)
		return true;
	if (eroce_psn_after(next, req->psn)) {
		req->cur = cur;
		req->cur_offset = offset;
		req->psn = next;
	}
	req->sr_hole = eroce_psn_add(psn, n - 1);
	req->sr_hole_open = true;
	return true;
}

/**
 * eroce_req_resend_read() - ask again for the missing part of a read
 * @qp: an RC QP
 * @w: a sent RDMA READ whose responses from w->resp_psn on were lost
 *
 * One READ request with the PSN, address and length of the missing part;
 * the requester's position is not touched (no go-back-N for the requests
 * after it).  The responder treats it as a duplicate and reads again.
 */
void eroce_req_resend_read(struct eroce_qp *qp, struct eroce_swqe *w)
{
	const struct eroce_opcode_info *info =
		eroce_opcode_info(EROCE_OP_RC_READ_REQUEST);
	u32 off = eroce_psn_diff(w->resp_psn, w->first_psn) * eroce_qp_mtu(qp);
	struct eroce_req *req = &qp->eng.req;
	struct eroce_bth *bth;
	struct sk_buff *skb;

	lockdep_assert_held(&qp->eng.lock);
	if (off >= w->length && w->length)
		return;
	if (req->rtt_timing && eroce_psn_before_eq(w->resp_psn, req->rtt_psn))
		req->rtt_timing = false;
	skb = eroce_pkt_alloc(to_eroce_dev(qp->ibqp.device),
			      EROCE_OP_RC_READ_REQUEST, 0);
	if (!skb)
		return;
	bth = eroce_pkt_bth(skb);
	eroce_bth_set_qpn(bth, READ_ONCE(qp->attrs.dest_qp_num));
	eroce_bth_set_psn(bth, w->resp_psn);
	eroce_bth_set_ackreq(bth, true);
	eroce_reth_init(eroce_hdr(info, bth, EROCE_HDR_RETH),
			w->wqe->wr.rdma.remote_addr + off, w->wqe->wr.rdma.rkey,
			w->length - off);
	eroce_stat_inc(to_eroce_dev(qp->ibqp.device),
		       EROCE_CNT_RETRANSMIT_PACKETS);
	eroce_qp_send(qp, skb);
}

/* a UD or GSI entry is one packet, complete once it is sent */
static int eroce_req_send_ud(struct eroce_qp *qp, struct eroce_swqe *w)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	const struct eroce_send_wqe *wqe = w->wqe;
	struct eroce_req *req = &qp->eng.req;
	const struct eroce_opcode_info *info;
	struct eroce_bth *bth;
	struct sk_buff *skb;
	struct eroce_ah *ah;
	u32 qkey;
	u8 opcode;
	int err;

	ah = eroce_ah_get(&edev->res, wqe->wr.ud.ah_num);
	if (!ah || ah->ibah.pd != qp->ibqp.pd) {
		err = -EINVAL;
		goto out_put_ah;
	}

	opcode = eroce_wr_info(wqe->opcode)->ud_only;
	info = eroce_opcode_info(opcode);
	skb = eroce_pkt_alloc(edev, opcode, w->length);
	if (!skb) {
		err = -ENOMEM;
		goto out_put_ah;
	}
	bth = eroce_pkt_bth(skb);
	eroce_bth_set_qpn(bth, wqe->wr.ud.remote_qpn);
	eroce_bth_set_psn(bth, req->psn);
	req->psn = eroce_psn_add(req->psn, 1);
	if (wqe->send_flags & EROCE_SEND_SOLICITED)
		eroce_bth_set_se(bth, true);
	/* IBA 10.2.5: a Q_Key with the high bit set means the QP's own */
	qkey = wqe->wr.ud.remote_qkey;
	if (qkey & 0x80000000)
		qkey = READ_ONCE(qp->attrs.qkey);
	eroce_deth_init(eroce_hdr(info, bth, EROCE_HDR_DETH), qkey,
			qp->ibqp.qp_num);
	if (info->flags & EROCE_OPF_IMMDT) {
		struct eroce_immdt *imm = eroce_hdr(info, bth, EROCE_HDR_IMMDT);

		imm->imm = (__force __be32)wqe->ex;
	}
	if (w->length) {
		err = eroce_req_copy_payload(qp, w, 0, eroce_pkt_payload(skb),
					     w->length);
		if (err) {
			kfree_skb(skb);
			goto out_put_ah;
		}
	}
	eroce_rate_sent(qp, skb->len);
	eroce_pkt_xmit(edev, &ah->av, NULL,
		       rdma_get_udp_sport(ah->av.flow_label, qp->ibqp.qp_num,
					  wqe->wr.ud.remote_qpn), skb);
	err = 0;
out_put_ah:
	if (ah)
		eroce_ah_put(ah);
	return err;
}

static enum ib_wc_status eroce_req_errno_status(int err)
{
	switch (err) {
	case -EACCES:
	case -EFAULT:
		return IB_WC_LOC_PROT_ERR;
	case -ENOSPC:
		return IB_WC_LOC_LEN_ERR;
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
}

/*
 * The sender's events.  eroce_req_match.c matches responses to SQ entries
 * and retires them; what the transport does about acknowledgments, NAKs and
 * timeouts (which PSN is outstanding, how many retries are left, what is
 * sent again and when) is decided here, behind these calls and the
 * retransmit timer.  Context: engine lock held.
 */

/**
 * eroce_req_una() - every request PSN before @una is answered
 * @qp: an RC QP
 * @una: the oldest PSN still unanswered
 * @ack: an acknowledgment moved it (the retries start over), not a read
 *	response or atomic ACK (eroce_req_answered() covers those)
 */
void eroce_req_una(struct eroce_qp *qp, u32 una, bool ack)
{
	struct eroce_req *req = &qp->eng.req;

	lockdep_assert_held(&qp->eng.lock);
	if (!eroce_psn_after(una, req->una_psn))
		return;
	req->una_psn = una;
	if (ack)
		eroce_req_answered(qp);
}

/**
 * eroce_req_answered() - the peer answered a request: the retries and the
 * backoff start over
 * @qp: an RC QP
 */
void eroce_req_answered(struct eroce_qp *qp)
{
	struct eroce_req *req = &qp->eng.req;

	lockdep_assert_held(&qp->eng.lock);
	req->retry_left = READ_ONCE(qp->attrs.retry_cnt);
	req->backoff = 0;
}

/* an ACK (not an RNR NAK) came: the RNR retries start over */
void eroce_req_ack_rcvd(struct eroce_qp *qp)
{
	lockdep_assert_held(&qp->eng.lock);
	qp->eng.req.rnr_retry_left = READ_ONCE(qp->attrs.rnr_retry);
}

/**
 * eroce_req_seq_nak() - the responder expects @psn
 * @qp: an RC QP; what came before @psn is acknowledged already
 * @psn: the PSN the sequence NAK names
 * @sr_hole: 0, or the PSNs from @psn on that the responder says are
 *	     missing, having kept what followed them (selective repeat)
 *
 * Sequence NAKs cost no retry: each one follows a loss the responder
 * saw, and it sends one per hole; the retransmit timer bounds a peer that
 * makes no progress at all.  One that trails an RNR NAK changes nothing:
 * the RNR wait resends from the same PSN.
 */
void eroce_req_seq_nak(struct eroce_qp *qp, u32 psn, u32 sr_hole)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	struct eroce_req *req = &qp->eng.req;

	lockdep_assert_held(&qp->eng.lock);
	if (req->rnr_wait && psn == req->una_psn)
		return;
	eroce_stat_inc(edev, EROCE_CNT_RETRANSMIT_NAK);
	/*
	 * Selective repeat: the responder kept what followed the hole and
	 * we offered it: send the hole alone.  Otherwise, and for reads and
	 * atomics, go back N.
	 */
	if (sr_hole && READ_ONCE(edev->tuning.loss_recovery) == EROCE_LOSS_SR &&
	    eroce_req_resend_hole(qp, psn, sr_hole)) {
		eroce_stat_inc(edev, EROCE_CNT_SR_RETRANSMITS);
		return;
	}
	eroce_req_rewind(qp, psn);
}

/**
 * eroce_req_rnr_nak() - the responder had no receive WQE for @psn
 * @qp: an RC QP; what came before @psn is acknowledged already
 * @psn: the PSN the RNR NAK names
 * @usec: the responder's minimum RNR time
 *
 * Return: false when rnr_retry is used up: the caller fails the entry
 * and the QP.
 */
bool eroce_req_rnr_nak(struct eroce_qp *qp, u32 psn, u32 usec)
{
	struct eroce_req *req = &qp->eng.req;

	lockdep_assert_held(&qp->eng.lock);
	if (READ_ONCE(qp->attrs.rnr_retry) != 7) {
		if (!req->rnr_retry_left)
			return false;
		req->rnr_retry_left--;
	}
	eroce_req_rewind(qp, psn);
	req->rnr_wait = true;
	eroce_req_arm_timer(qp, (u64)usec * NSEC_PER_USEC);
	return true;
}

/**
 * eroce_req_sq_idle() - the SQ ran dry: does the provider need to ring?
 * @qp: the QP
 *
 * While RC packets are unacknowledged, the matching of responses looks
 * at the producer index again when their acknowledgment (or the retransmit
 * timer) comes, so the doorbell flag stays clear and a post goes out
 * with that ACK, without a system call.  Otherwise ask userspace for a
 * doorbell, then look once more.
 * Context: engine lock held (requester or matching of responses).
 * Return: true when entries arrived while the doorbell was being armed.
 */
static bool eroce_req_sq_idle(struct eroce_qp *qp)
{
	struct eroce_req *req = &qp->eng.req;

	lockdep_assert_held(&qp->eng.lock);
	if (qp->ibqp.qp_type == IB_QPT_RC && eroce_req_outstanding(qp))
		return false;
	eroce_ring_flags_set(&qp->sq, EROCE_RING_NEED_DOORBELL);
	/*
	 * The flag is visible before the producer is read again; pairs with
	 * the provider's full barrier between its producer store and its
	 * flag load (eroce-abi.h), so a post is either seen here or rings
	 * the doorbell.
	 */
	smp_mb__after_atomic();
	if (READ_ONCE(qp->sq.ctrl->producer) == req->head)
		return false;
	eroce_ring_flags_clear(&qp->sq, EROCE_RING_NEED_DOORBELL);
	return true;
}

/**
 * eroce_req_responded() - a response was processed
 * @qp: an RC QP
 * @una: una_psn before it
 * @tail: the SQ's consumer index before it
 *
 * Times the round trip when the timed PSN is acknowledged, restarts the
 * retransmit timer on progress only (a peer repeating the same ACK must
 * not keep a stuck QP from timing out), and lets new entries go out now;
 * with nothing left unacknowledged, the provider must ring for the next
 * ones (eroce_req_sq_idle()).
 */
void eroce_req_responded(struct eroce_qp *qp, u32 una, u32 tail)
{
	struct eroce_req *req = &qp->eng.req;

	lockdep_assert_held(&qp->eng.lock);
	if (req->una_psn != una)
		eroce_req_acked(qp, una);
	if (req->una_psn != una || qp->sq.consumer != tail ||
	    !req->timer_armed || req->rnr_wait)
		eroce_req_progress(qp);
	if (eroce_req_has_work(qp) || eroce_req_sq_idle(qp))
		eroce_qp_kick(qp);
}

/*
 * Fetch the next SQ entry for req->cur.  Returns 0; -ENOENT to look
 * again (entries arrived while the doorbell was being armed); -EAGAIN
 * when the requester must stop: the SQ is empty, or the entry failed and
 * the QP with it, or an earlier entry must complete first.
 */
static int eroce_req_fetch_next(struct eroce_qp *qp)
{
	struct eroce_req *req = &qp->eng.req;
	int err;

	err = eroce_req_fetch(qp);
	if (err == -ENOENT)
		return eroce_req_sq_idle(qp) ? -ENOENT : -EAGAIN;
	if (err == -EPROTO) {
		/* userspace corrupted its own SQ */
		eroce_qp_fatal(qp, IB_EVENT_QP_FATAL);
		return -EAGAIN;
	}
	if (err) {
		/*
		 * A malformed entry fails on its own once everything before
		 * it has completed, and the QP with it.
		 */
		if (qp->sq.consumer != req->cur) {
			req->head--;
			return -EAGAIN;
		}
		eroce_req_fail_tail(qp, err == -EMSGSIZE ?
				    IB_WC_LOC_LEN_ERR : IB_WC_LOC_QP_OP_ERR);
		return -EAGAIN;
	}
	return 0;
}

/*
 * Must the local operation @w, at req->cur, wait?  LOCAL_INV, and any
 * local operation posted with IB_SEND_FENCE, runs once every entry
 * before it has completed: a send still unacknowledged may have to read
 * its payload again from the memory being invalidated.
 */
static bool eroce_req_local_blocked(struct eroce_qp *qp, struct eroce_swqe *w)
{
	if (w->psn_valid)
		return false;
	if (w->wqe->opcode != IB_UVERBS_WR_LOCAL_INV &&
	    !(w->wqe->send_flags & EROCE_SEND_FENCE))
		return false;
	return qp->sq.consumer != qp->eng.req.cur;
}

/**
 * eroce_req_local() - execute the local operation at req->cur
 * @qp: the QP
 * @w: its entry
 *
 * It completes in order with the entries before it: at once when there
 * are none, else with the ACK or response that completes the last of
 * them (its PSN range is empty, just before req->psn).  A failure is
 * reported once every entry before it has completed.
 *
 * Return: 0 to go on; -EAGAIN to wait for the entries before it; -EIO when
 * it failed, and the QP with it.
 */
static int eroce_req_local(struct eroce_qp *qp, struct eroce_swqe *w)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	const struct eroce_send_wqe *wqe = w->wqe;
	struct eroce_req *req = &qp->eng.req;
	enum ib_wc_status status;
	enum eroce_counter done;
	int err;

	lockdep_assert_held(&qp->eng.lock);
	if (w->psn_valid) {
		/* executed already: the requester went back over it */
		req->cur++;
		return 0;
	}
	if (eroce_req_local_blocked(qp, w))
		return -EAGAIN;

	switch (wqe->opcode) {
	case EROCE_WR_REG_MR:
		err = eroce_mr_fast_reg(&edev->res, qp->ibqp.pd, wqe);
		status = eroce_req_errno_status(err);
		done = EROCE_CNT_FAST_REGS;
		break;
	case IB_UVERBS_WR_BIND_MW:
		err = eroce_mw_bind(&edev->res, qp, wqe);
		status = IB_WC_MW_BIND_ERR;
		done = EROCE_CNT_MW_BINDS;
		break;
	default:	/* LOCAL_INV */
		err = eroce_key_invalidate(&edev->res, qp, wqe->ex, false);
		status = eroce_req_errno_status(err);
		done = EROCE_CNT_LOCAL_INVALIDATIONS;
		break;
	}
	if (err) {
		if (qp->sq.consumer != req->cur)
			return -EAGAIN;	/* no effect: again when it is due */
		eroce_stat_inc(edev, EROCE_CNT_LOCAL_OP_ERRORS);
		eroce_req_fail_tail(qp, status);
		return -EIO;
	}
	eroce_stat_inc(edev, done);

	w->first_psn = req->psn;
	w->last_psn = eroce_psn_add(req->psn, EROCE_PSN_MASK);	/* psn - 1 */
	w->resp_psn = req->psn;
	w->psn_valid = true;
	w->done = true;
	if (qp->sq.consumer == req->cur)
		eroce_req_complete_tail(qp, IB_WC_SUCCESS);
	else
		req->cur++;
	return 0;
}

/*
 * May @w, at req->cur and not started, go out now?  Not while
 * max_rd_atomic reads and atomics wait for their responses (for a read or
 * atomic), nor while any does (for a fenced entry).
 */
static bool eroce_req_rd_atomic_blocked(struct eroce_qp *qp,
					struct eroce_swqe *w)
{
	struct eroce_req *req = &qp->eng.req;
	u32 max = max_t(u32, 1, READ_ONCE(qp->attrs.max_rd_atomic));
	u32 i, open = 0;

	if (!eroce_wqe_is_rd_atomic(w->wqe) &&
	    !(w->wqe->send_flags & EROCE_SEND_FENCE))
		return false;
	for (i = qp->sq.consumer; i != req->cur; i++) {
		const struct eroce_swqe *v = eroce_req_swqe(qp, i);

		if (v->psn_valid && !v->done && eroce_wqe_is_rd_atomic(v->wqe))
			open++;
	}
	if (w->wqe->send_flags & EROCE_SEND_FENCE)
		return open > 0;
	return open >= max;
}

/* are as many packets unacknowledged as the window allows? */
static bool eroce_req_window_full(struct eroce_qp *qp)
{
	struct eroce_req *req = &qp->eng.req;

	return eroce_send_window_full(req->psn, req->una_psn, req->sr_hole_open,
				      req->sr_hole, eroce_req_window(qp));
}

/*
 * Must the READ @w, not sent yet, wait until enough of what is
 * outstanding is answered for all its responses' PSNs to fit?
 */
static bool eroce_req_read_span_blocked(struct eroce_qp *qp,
					struct eroce_swqe *w)
{
	struct eroce_req *req = &qp->eng.req;

	if (w->psn_valid || w->wqe->opcode != IB_UVERBS_WR_RDMA_READ)
		return false;
	return !eroce_psn_span_ok(req->psn, req->una_psn,
				  max_t(u32, 1, DIV_ROUND_UP(w->length,
							     eroce_qp_mtu(qp))));
}

/* flow control: outstanding packets, reads, fences hold @w back */
static bool eroce_req_flow_blocked(struct eroce_qp *qp, struct eroce_swqe *w)
{
	if (eroce_req_window_full(qp) || eroce_req_read_span_blocked(qp, w))
		return true;
	return !qp->eng.req.cur_offset && eroce_req_rd_atomic_blocked(qp, w);
}

/*
 * The requester's loop: at most EROCE_REQ_BUDGET packets, batched in @b.
 * Returns true when it stopped with work left.
 */
static bool eroce_req_run_batch(struct eroce_qp *qp, struct eroce_tx_batch *b)
{
	struct eroce_req *req = &qp->eng.req;
	enum ib_qp_state state = eroce_qp_state(qp);
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	bool ud = !eroce_qp_connected(qp);
	int budget = EROCE_REQ_BUDGET;
	int err;

	lockdep_assert_held(&qp->eng.lock);
	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		return false;

	eroce_ring_flags_clear(&qp->sq, EROCE_RING_NEED_DOORBELL);
	while (budget--) {
		struct eroce_swqe *w;

		if (req->rnr_wait) {
			eroce_rate_stalled(qp);
			return false;
		}
		if (req->cur == req->head) {
			if (state == IB_QPS_SQD)
				return false;
			err = eroce_req_fetch_next(qp);
			if (err == -ENOENT)
				continue;
			if (err) {
				eroce_rate_idle(qp);
				return false;
			}
		}

		w = eroce_req_swqe(qp, req->cur);
		if (eroce_wqe_is_local(w->wqe)) {
			err = eroce_req_local(qp, w);
			if (!err)
				continue;
			if (err == -EAGAIN)
				eroce_rate_stalled(qp);
			return false;
		}
		if (rc && eroce_req_flow_blocked(qp, w)) {
			eroce_rate_stalled(qp);
			return false;
		}
		if (eroce_rate_wait(qp))
			return false;	/* the pacing timer resumes it */
		if (ud) {
			err = eroce_req_send_ud(qp, w);
			if (err == -ENOMEM)
				return true;	/* sent on the next run */
			req->cur++;
			/* UD completes in order once sent */
			while (qp->sq.consumer != req->cur)
				eroce_req_complete_tail(qp, err ?
					eroce_req_errno_status(err) :
					IB_WC_SUCCESS);
			continue;
		}

		err = eroce_req_send_seg(qp, w, b);
		if (err == -ENOMEM)
			return true;
		/* the stack dropped a packet: let the queues drain first */
		if (err == -EAGAIN) {
			qp->eng.tx_stalled = true;
			eroce_rate_stalled(qp);
			eroce_req_progress(qp);
			return false;
		}
		if (err) {
			/* a local protection or length error: the QP fails */
			while (qp->sq.consumer != req->cur)
				eroce_req_complete_tail(qp, IB_WC_WR_FLUSH_ERR);
			eroce_req_fail_tail(qp, eroce_req_errno_status(err));
			return false;
		}
		if (!rc) {
			/* UC: complete once the last packet is sent */
			if (qp->sq.consumer != req->cur &&
			    eroce_req_xmit_batch(qp, b)) {
				qp->eng.tx_stalled = true;
				eroce_rate_stalled(qp);
				return false;
			}
			while (qp->sq.consumer != req->cur)
				eroce_req_complete_tail(qp, IB_WC_SUCCESS);
			continue;
		}
		if (!req->timer_armed)
			eroce_req_progress(qp);
	}
	return true;
}

/*
 * Run the requester for one batch.  Returns true when it stopped with
 * work left (the caller requeues it).
 */
bool eroce_req_run(struct eroce_qp *qp)
{
	struct eroce_tx_batch b;
	bool more;

	eroce_tx_batch_init(&b, eroce_req_window(qp));
	more = eroce_req_run_batch(qp, &b);
	if (eroce_req_xmit_batch(qp, &b)) {
		/* the stack dropped the batch: let the queues drain first */
		qp->eng.tx_stalled = true;
		eroce_rate_stalled(qp);
		eroce_req_progress(qp);
		return false;
	}
	return more;
}

/*
 * Retransmit timer (softirq).  An RNR delay ends by resending; a timeout
 * resends everything unacknowledged until retry_cnt runs out.
 */
enum hrtimer_restart eroce_req_timer(struct hrtimer *timer)
{
	struct eroce_req *req = container_of(timer, struct eroce_req, timer);
	struct eroce_qp_engine *eng = container_of(req, struct eroce_qp_engine,
						   req);
	struct eroce_qp *qp = container_of(eng, struct eroce_qp, eng);
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	struct eroce_swqe *w;
	bool kick = false;

	spin_lock_bh(&eng->lock);
	/*
	 * An expiry that waited for the lock while progress stopped or
	 * re-armed the timer is stale: it is no timeout, and a re-armed
	 * timer runs again when it is due.
	 */
	if (!req->timer_armed || hrtimer_is_queued(timer)) {
		eroce_stat_inc(edev, EROCE_CNT_STALE_TIMER_EXPIRIES);
		goto out_unlock;
	}
	req->timer_armed = false;
	if (eroce_qp_state(qp) != IB_QPS_RTS && eroce_qp_state(qp) != IB_QPS_SQD)
		goto out_unlock;
	if (req->rnr_wait) {
		req->rnr_wait = false;
		kick = true;
		goto out_unlock;
	}
	if (!eroce_req_outstanding(qp))
		goto out_unlock;

	if (req->tlp_armed) {
		u64 rto = eroce_req_rto_ns(qp), pto = eroce_req_pto_ns(qp, rto);

		/*
		 * Tail-loss probe: send the highest PSN sent again, asking
		 * for an ACK, so that the responder's answer (an ACK, or a
		 * sequence NAK naming the hole) replaces a full timeout;
		 * then wait the rest of the retransmit timeout.
		 */
		req->tlp_armed = false;
		req->tlp_sent = true;
		eroce_stat_inc(edev, EROCE_CNT_TLP_PROBES);
		eroce_req_rewind(qp, eroce_psn_add(req->max_psn, EROCE_PSN_MASK));
		req->since_ackreq = EROCE_ACKREQ_EVERY;
		if (rto > pto)
			eroce_req_arm_timer(qp, rto - pto);
		kick = true;
		goto out_unlock;
	}

	eroce_stat_inc(edev, EROCE_CNT_RETRANSMIT_TIMEOUTS);
	if (!req->retry_left) {
		eroce_stat_inc(edev, EROCE_CNT_RETRY_EXCEEDED);
		eroce_req_fail_tail(qp, IB_WC_RETRY_EXC_ERR);
		goto out_unlock;
	}
	req->retry_left--;
	req->backoff++;
	/*
	 * No answer for a whole timeout: the receiver may be too slow for
	 * the timer rather than the packets lost.  Going back N with the
	 * whole window would bury it (and its ACKs) under copies of what it
	 * still has queued, so start again from one packet.
	 */
	req->cwnd = 1;

	/* an open read at the head of the line: ask for its rest only */
	w = eroce_req_swqe(qp, qp->sq.consumer);
	if (qp->sq.consumer != req->cur && w->psn_valid && !w->done &&
	    w->wqe->opcode == IB_UVERBS_WR_RDMA_READ) {
		w->rerequested = true;
		eroce_req_resend_read(qp, w);
		eroce_req_arm_timer(qp, eroce_req_rto_ns(qp));
		goto out_unlock;
	}
	eroce_req_rewind(qp, req->una_psn);
	kick = true;
out_unlock:
	spin_unlock_bh(&eng->lock);
	if (kick)
		eroce_qp_kick(qp);
	return HRTIMER_NORESTART;
}
