// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_resp_sr.c - selective repeat on the responder.  With
 * loss_recovery sr here, and offered by the requester (EROCE_BTH_SR), a
 * SEND or WRITE packet after a hole is kept (eroce_resp_keep()) and
 * executed once the hole closes (eroce_resp_drain()); the sequence NAK for
 * a hole names its length (eroce_resp_nak_hole()).  A QP's window of
 * EROCE_SR_WINDOW slots exists while it keeps a packet; the window and the
 * kept skbs are charged to the device's EROCE_OOO_BUDGET.
 *
 * Context: receive softirq (eroce_resp_rcv()); eroce_resp_ooo_clear() also
 * from the QP's reset and teardown.  Locks: the caller holds
 * qp->eng.lock, but for the teardown's eroce_resp_free(); this file takes
 * no lock of its own (the budget is an atomic_t).
 */
#include "eroce_opcode.h"
#include "eroce_psn.h"
#include "eroce_resp.h"
#include "eroce_window.h"

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
void eroce_resp_ooo_clear(struct eroce_qp *qp)
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
bool eroce_resp_is_kept(const struct eroce_qp *qp, u32 psn)
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
void eroce_resp_nak_hole(struct eroce_qp *qp, struct eroce_dev *edev,
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
bool eroce_resp_keep(struct eroce_qp *qp, struct eroce_rx *pkt,
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
void eroce_resp_drain(struct eroce_qp *qp)
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
