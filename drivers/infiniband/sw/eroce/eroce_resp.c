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
 * This file holds the responder's entry points (eroce_resp_rcv() by the
 * QP's type, RC's PSN check, the QP's flush, reset and teardown), selective
 * repeat and UC and UD receive; it calls eroce_resp_exec.c, the execution
 * of requests, and both call eroce_resp_queue.c, the owed responses and the
 * READ sender.  eroce_resp.h declares what they share.
 *
 * Context: receive softirq (eroce_resp_rcv()) and the QP's state changes
 * in eroce_task.c (eroce_resp_flush(), eroce_resp_reset(),
 * eroce_resp_free()).  Locks: the caller holds qp->eng.lock, but for
 * eroce_resp_free() (the engine's teardown); the RQ or SRQ consumer_lock
 * and the CQ producer lock nest inside it.
 */
#include <linux/if_vlan.h>
#include <linux/log2.h>

#include "eroce_opcode.h"
#include "eroce_psn.h"
#include "eroce_resp.h"
#include "eroce_window.h"

#define EROCE_GRH_BYTES	40

/* empty a slot of kept packets; @done: it was executed */
static void eroce_resp_ooo_release(struct eroce_qp *qp, struct eroce_ooo *slot,
				   bool done)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);

	atomic_sub(slot->truesize, &edev->ooo_bytes);
	if (done)
		consume_skb(slot->skb);
	else
		kfree_skb(slot->skb);
	slot->skb = NULL;
	qp->eng.resp.ooo_count--;
}

/* the window of slots as the budget counts it: what the slab gives */
static u32 eroce_resp_ooo_window_bytes(void)
{
	return kmalloc_size_roundup(EROCE_SR_WINDOW * sizeof(struct eroce_ooo));
}

/* charge @bytes to the device's budget for kept packets, if it allows */
static bool eroce_resp_ooo_charge(struct eroce_dev *edev, u32 bytes)
{
	if (atomic_add_return(bytes, &edev->ooo_bytes) <= EROCE_OOO_BUDGET)
		return true;
	atomic_sub(bytes, &edev->ooo_bytes);
	return false;
}

/* the window goes, and its charge with it, once it keeps nothing */
static void eroce_resp_ooo_window_put(struct eroce_qp *qp)
{
	struct eroce_resp *resp = &qp->eng.resp;

	if (!resp->ooo || resp->ooo_count)
		return;
	kfree(resp->ooo);
	resp->ooo = NULL;
	atomic_sub(eroce_resp_ooo_window_bytes(),
		   &to_eroce_dev(qp->ibqp.device)->ooo_bytes);
}

/* drop every kept packet (the QP fails, resets, or goes back N) */
static void eroce_resp_ooo_clear(struct eroce_qp *qp)
{
	struct eroce_resp *resp = &qp->eng.resp;
	u32 i;

	for (i = 0; resp->ooo && resp->ooo_count && i < EROCE_SR_WINDOW; i++)
		if (resp->ooo[i].skb)
			eroce_resp_ooo_release(qp, &resp->ooo[i], false);
	resp->ooo_count = 0;
	resp->sr_hole_told = false;
	eroce_resp_ooo_window_put(qp);
}

/* selective repeat: the packet at @psn is kept already */
static bool eroce_resp_is_kept(const struct eroce_qp *qp, u32 psn)
{
	const struct eroce_resp *resp = &qp->eng.resp;
	const struct eroce_ooo *slot;

	if (!resp->ooo)
		return false;
	slot = &resp->ooo[eroce_sr_slot(psn)];
	return slot->skb && slot->pkt.psn == psn;
}

/*
 * Selective repeat: the PSNs from resp.epsn up to the first kept packet,
 * at most EROCE_SR_HOLE_MAX.
 */
static u32 eroce_resp_hole_len(const struct eroce_qp *qp)
{
	u32 epsn = qp->eng.resp.epsn;
	u32 n;

	for (n = 1; n < EROCE_SR_HOLE_MAX; n++)
		if (eroce_resp_is_kept(qp, eroce_psn_add(epsn, n)))
			break;
	return n;
}

/*
 * The sequence NAK for the hole at resp.epsn, once per hole; with packets
 * kept after it (@sr), it names the hole's length, and the requester sends
 * all of it again at once.
 */
static void eroce_resp_nak_hole(struct eroce_qp *qp, struct eroce_dev *edev,
				bool sr)
{
	struct eroce_resp *resp = &qp->eng.resp;
	u32 hole = 0;

	resp->nak_sent = true;
	eroce_stat_inc(edev, EROCE_CNT_SEQ_NAK_SENT);
	resp->sr_hole_told = sr;
	if (sr) {
		hole = eroce_resp_hole_len(qp);
		resp->sr_hole_end = eroce_psn_add(resp->epsn, hole);
	}
	eroce_resp_ack_sr(qp, eroce_syn_nak(EROCE_NAK_PSN_SEQ_ERR), resp->epsn,
			  hole);
}

/*
 * The skb a packet is kept in.  One that holds other packets too (a batch
 * a packet tap shares, a local program's GSO send cut up) would pin them
 * all, charged for this one alone: the packet is copied into an skb of its
 * own instead, from its BTH to the end of its payload (the ICRC was
 * checked), and @kept points into the copy.  Packets are kept on the loss
 * path only; the copy costs nothing on the fast one.  NULL: no memory.
 */
static struct sk_buff *eroce_resp_keep_skb(const struct eroce_rx *pkt,
					   struct eroce_rx *kept)
{
	u32 hdr_len = (u8 *)pkt->payload - (u8 *)pkt->bth;
	struct sk_buff *skb;

	*kept = *pkt;
	kept->iph = NULL;
	if (!pkt->skb_shared)
		return skb_get(pkt->skb);
	skb = alloc_skb(hdr_len + pkt->paylen, GFP_ATOMIC | __GFP_NOWARN);
	if (!skb)
		return NULL;
	skb_put_data(skb, pkt->bth, hdr_len + pkt->paylen);
	kept->skb = skb;
	kept->skb_shared = false;
	kept->bth = (struct eroce_bth *)skb->data;
	kept->payload = skb->data + hdr_len;
	return skb;
}

/*
 * Selective repeat: keep a SEND or WRITE packet that arrived after a hole,
 * when the requester asked for it (EROCE_BTH_SR) and loss_recovery is sr
 * here.  The QP's window of slots exists while it keeps a packet; both
 * the window and the skbs kept (their truesize) are charged to the
 * device's EROCE_OOO_BUDGET.  Returns true when the packet is (already)
 * kept.
 */
static bool eroce_resp_keep(struct eroce_qp *qp, struct eroce_rx *pkt,
			    s32 diff)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	struct eroce_resp *resp = &qp->eng.resp;
	struct eroce_ooo *slot;
	struct sk_buff *skb;

	if (READ_ONCE(edev->tuning.loss_recovery) != EROCE_LOSS_SR ||
	    !eroce_bth_sr(pkt->bth) || !eroce_sr_keepable(diff) ||
	    !eroce_resp_ops[pkt->info->resp].keep)
		return false;
	if (!resp->ooo) {
		if (!eroce_resp_ooo_charge(edev, eroce_resp_ooo_window_bytes()))
			goto over_budget;
		resp->ooo = kcalloc(EROCE_SR_WINDOW, sizeof(*resp->ooo),
				    GFP_ATOMIC | __GFP_NOWARN);
		if (!resp->ooo) {
			atomic_sub(eroce_resp_ooo_window_bytes(),
				   &edev->ooo_bytes);
			goto nomem;
		}
	}
	slot = &resp->ooo[eroce_sr_slot(pkt->psn)];
	if (slot->skb)
		return slot->pkt.psn == pkt->psn;
	skb = eroce_resp_keep_skb(pkt, &slot->pkt);
	if (!skb)
		goto nomem;
	if (!eroce_resp_ooo_charge(edev, skb->truesize)) {
		kfree_skb(skb);
		goto over_budget;
	}
	/*
	 * What executing it later needs is in slot->pkt; the route and the
	 * receiving netdev may be gone by then.
	 */
	slot->skb = skb;
	slot->truesize = skb->truesize;
	skb_dst_drop(skb);
	skb->dev = NULL;
	resp->ooo_count++;
	return true;

over_budget:
	eroce_stat_inc(edev, EROCE_CNT_SR_OOO_NOT_KEPT);
	net_dbg_ratelimited("eroce: QP %u: PSN %u not kept: %u bytes of kept packets\n",
			    qp->ibqp.qp_num, pkt->psn, EROCE_OOO_BUDGET);
	eroce_resp_ooo_window_put(qp);
	return false;
nomem:
	eroce_stat_inc(edev, EROCE_CNT_SR_OOO_NOMEM);
	net_dbg_ratelimited("eroce: QP %u: PSN %u not kept: no memory\n",
			    qp->ibqp.qp_num, pkt->psn);
	eroce_resp_ooo_window_put(qp);
	return false;
}

/*
 * The hole before the kept packets closed: execute them in PSN order up
 * to the next hole, acknowledge, and name that hole at once.
 */
static void eroce_resp_drain(struct eroce_qp *qp)
{
	struct eroce_resp *resp = &qp->eng.resp;
	bool placed = false;
	u32 i;

	while (resp->ooo_count) {
		struct eroce_ooo *slot = &resp->ooo[eroce_sr_slot(resp->epsn)];
		u32 before = resp->epsn;
		struct sk_buff *skb;
		struct eroce_rx pkt;

		if (!slot->skb || slot->pkt.psn != resp->epsn)
			break;
		/* out of the slot first: a failing QP clears every slot */
		skb = skb_get(slot->skb);
		pkt = slot->pkt;
		eroce_resp_ooo_release(qp, slot, true);
		eroce_resp_execute(qp, &pkt);
		consume_skb(skb);
		if (resp->epsn == before) {
			/* RNR, or the QP failed: go back N from here */
			eroce_resp_ooo_clear(qp);
			break;
		}
		eroce_stat_inc(pkt.edev, EROCE_CNT_SR_OOO_PLACED);
		placed = true;
	}
	/* packets the PSN passed by other means can never be executed */
	for (i = 0; resp->ooo_count && i < EROCE_SR_WINDOW; i++) {
		struct eroce_ooo *slot = &resp->ooo[i];

		if (slot->skb && eroce_psn_before(slot->pkt.psn, resp->epsn))
			eroce_resp_ooo_release(qp, slot, false);
	}
	eroce_resp_ooo_window_put(qp);
	if (!placed)
		return;
	eroce_resp_ack(qp, eroce_syn_ack(EROCE_AETH_CREDIT_INVALID),
		       eroce_psn_add(resp->epsn, EROCE_PSN_MASK));
	if (!resp->ooo_count || resp->nak_sent)
		return;
	/*
	 * A hole within the one the last NAK named is being sent again
	 * now; should that copy be lost too, the next packet that arrives
	 * after the hole names it.
	 */
	if (resp->sr_hole_told) {
		if (eroce_psn_before(resp->epsn, resp->sr_hole_end))
			return;
		resp->sr_hole_told = false;
	}
	eroce_resp_nak_hole(qp, to_eroce_dev(qp->ibqp.device), true);
}

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

/*
 * UC: no acknowledgments and no duplicates.  A packet other than the
 * expected one means packets were lost: the message in progress is lost
 * with them, the packet's PSN becomes the expected one, and packets are
 * dropped until one starts a message.
 */
static void eroce_resp_uc(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	struct eroce_resp *resp = &qp->eng.resp;

	if (pkt->psn != resp->epsn && resp->in_msg) {
		resp->in_msg = 0;
		eroce_stat_inc(pkt->edev, EROCE_CNT_UC_MSGS_LOST);
		net_dbg_ratelimited("eroce: QP %u: UC PSN %u where %u was due: message in progress lost\n",
				    qp->ibqp.qp_num, pkt->psn, resp->epsn);
	}
	resp->epsn = eroce_psn_add(pkt->psn, 1);
	if (!eroce_opcode_seq_ok(resp->in_msg, pkt->info->flags)) {
		eroce_resp_uc_drop(qp, pkt, EROCE_CNT_DROP_UC_SEQUENCE,
				   "no message in progress");
		return;
	}
	eroce_resp_ops[pkt->info->resp].execute(qp, pkt);
}

/* UD and GSI: one packet, one receive WQE, the GRH in front */
static void eroce_resp_ud(struct eroce_qp *qp, struct eroce_rx *pkt)
{
	const struct eroce_deth *deth = eroce_hdr(pkt->info, pkt->bth,
						  EROCE_HDR_DETH);
	struct eroce_resp *resp = &qp->eng.resp;
	u8 grh[EROCE_GRH_BYTES] = {};
	const struct iphdr *iph = pkt->iph;
	int err;

	if (eroce_deth_qkey(deth) != READ_ONCE(qp->attrs.qkey)) {
		eroce_stat_inc(pkt->edev, EROCE_CNT_DROP_BAD_QKEY);
		net_dbg_ratelimited("eroce: QP %u: bad Q_Key %#x\n",
				    qp->ibqp.qp_num, eroce_deth_qkey(deth));
		return;
	}

	err = eroce_resp_fetch_rwqe(qp);
	if (err == -ENOENT || err == -EPROTO) {
		resp->have_rwqe = false;
		eroce_stat_inc(pkt->edev, EROCE_CNT_DROP_NO_RECV_WQE);
		net_dbg_ratelimited("eroce: QP %u: no receive WQE\n",
				    qp->ibqp.qp_num);
		return;
	}

	/* RoCEv2: the IP header stands in for the GRH (IPv4 right-aligned) */
	if (iph->version == 4)
		memcpy(grh + EROCE_GRH_BYTES - sizeof(struct iphdr), iph,
		       sizeof(struct iphdr));
	else
		memcpy(grh, iph, EROCE_GRH_BYTES);

	/* a malformed receive WQE (err) completes in error like a short one */
	if (!err)
		err = eroce_resp_fill_rwqe(qp, grh, sizeof(grh));
	if (!err)
		err = eroce_resp_fill_rwqe(qp, pkt->payload, pkt->paylen);
	if (err) {
		const struct eroce_recv_wqe *rwqe = resp->rwqe;
		struct eroce_cqe cqe = {
			.wr_id = rwqe->wr_id,
			.status = err == -ENOSPC ? IB_WC_LOC_LEN_ERR :
				  err == -EINVAL ? IB_WC_LOC_QP_OP_ERR :
						   IB_WC_LOC_PROT_ERR,
			.opcode = IB_WC_RECV,
			.qp_num = qp->ibqp.qp_num,
		};

		resp->have_rwqe = false;
		eroce_cq_post(to_eroce_cq(qp->ibqp.recv_cq), &cqe, false);
		return;
	}
	eroce_resp_complete_rwqe(qp, pkt, IB_WC_RECV, resp->rcv_len,
				 eroce_deth_sqp(deth),
				 EROCE_WC_GRH | (iph->version == 4 ?
						 EROCE_WC_IPV4 : 0));
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
