// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_resp_queue.c - the responder's owed responses and its READ
 * response sender.
 *
 * Read responses can be many packets; they wait in a queue of owed
 * responses, the first EROCE_RESP_INLINE_PKTS of them sent at once from
 * the receive softirq when it runs on the QP's CPU (a short read is
 * answered without a wake-up), the rest by the QP's work item.  While
 * that queue is not empty every other response (ACK, NAK, atomic ACK)
 * joins it, so responses are made in PSN order; they all leave from the
 * QP's one transmit context (eroce_qp_send_batch()), so they stay in it.
 * Its last entry is kept for an ACK or NAK, and one that finds it full
 * is folded into the ACK or NAK queued last (eroce_resp_ack_fold()): an
 * RNR NAK is never lost behind read responses.
 *
 * ACKs and NAKs leave from here too: at once when nothing is owed, else
 * queued, a plain ACK coalesced with the one queued last
 * (eroce_resp_ack_sr()); a fatal NAK first sends what is owed
 * (eroce_resp_fatal_nak()).  The room for the queue and for the atomic
 * results is allocated and set here (eroce_resp_room_alloc/set()).
 *
 * Context: receive softirq (through eroce_resp_rcv()) and the QP's work
 * item (eroce_resp_run_reads()); eroce_resp_room_alloc() in process
 * context, GFP_KERNEL.  Locks: the caller holds qp->eng.lock, but for
 * eroce_resp_room_alloc(); this file takes no lock of its own.
 */
#include "eroce_opcode.h"
#include "eroce_psn.h"
#include "eroce_resp.h"
#include "eroce_xmit.h"

static struct sk_buff *eroce_resp_pkt(struct eroce_qp *qp, u8 opcode,
				      u32 psn, u32 paylen)
{
	struct sk_buff *skb = eroce_pkt_alloc(to_eroce_dev(qp->ibqp.device),
					      opcode, paylen);

	if (skb) {
		eroce_bth_set_qpn(eroce_pkt_bth(skb),
				  READ_ONCE(qp->attrs.dest_qp_num));
		eroce_bth_set_psn(eroce_pkt_bth(skb), psn);
	}
	return skb;
}

static void eroce_resp_send_ack_now(struct eroce_qp *qp, u8 syn, u32 psn,
				    u32 msn, u32 sr_hole)
{
	const struct eroce_opcode_info *info =
		eroce_opcode_info(EROCE_OP_RC_ACK);
	struct sk_buff *skb = eroce_resp_pkt(qp, EROCE_OP_RC_ACK, psn, 0);

	if (!skb)
		return;
	eroce_aeth_init(eroce_hdr(info, eroce_pkt_bth(skb), EROCE_HDR_AETH),
			syn, msn);
	if (sr_hole) {
		eroce_bth_set_sr(eroce_pkt_bth(skb), true);
		eroce_bth_set_sr_hole(eroce_pkt_bth(skb), sr_hole);
	}
	eroce_qp_send(qp, skb);
}

void eroce_resp_send_atomic_ack_now(struct eroce_qp *qp, u32 psn,
				    u32 msn, u64 orig)
{
	const struct eroce_opcode_info *info =
		eroce_opcode_info(EROCE_OP_RC_ATOMIC_ACK);
	struct sk_buff *skb = eroce_resp_pkt(qp, EROCE_OP_RC_ATOMIC_ACK, psn, 0);
	struct eroce_bth *bth;

	if (!skb)
		return;
	bth = eroce_pkt_bth(skb);
	eroce_aeth_init(eroce_hdr(info, bth, EROCE_HDR_AETH),
			eroce_syn_ack(EROCE_AETH_CREDIT_INVALID), msn);
	eroce_atmack_init(eroce_hdr(info, bth, EROCE_HDR_ATMACK), orig);
	eroce_qp_send(qp, skb);
}

struct eroce_rsp *eroce_rsp_queue_add(struct eroce_qp *qp, bool ack)
{
	struct eroce_resp *resp = &qp->eng.resp;
	struct eroce_rsp *rsp;

	if (!eroce_rsp_queue_room(resp, ack))
		return NULL;
	rsp = &resp->rsp[resp->rsp_head & (resp->rsp_size - 1)];
	memset(rsp, 0, sizeof(*rsp));
	resp->rsp_head++;
	return rsp;
}

/*
 * What an ACK or NAK tells the requester, to compare two of them: the PSN
 * it resumes from (an ACK's next, a NAK's own), then what it does there
 * (resends at once after a sequence NAK, waits after an RNR NAK, fails
 * after another NAK).
 */
static u32 eroce_syn_resume_psn(u8 syn, u32 psn)
{
	return eroce_syn_type(syn) == EROCE_SYN_ACK ? eroce_psn_add(psn, 1) : psn;
}

static int eroce_syn_rank(u8 syn)
{
	switch (eroce_syn_type(syn)) {
	case EROCE_SYN_ACK:
		return 0;
	case EROCE_SYN_RNR_NAK:
		return 2;
	default:
		return eroce_syn_value(syn) == EROCE_NAK_PSN_SEQ_ERR ? 1 : 3;
	}
}

/*
 * The owed responses are full: the ACK or NAK @syn at @psn is folded into
 * the one queued last, @rsp.  The later of the two in PSN, or at the same
 * PSN the one that says more, stands for both: a NAK acknowledges what
 * came before its PSN, and an RNR NAK asks for the resend a sequence NAK
 * at its PSN would, and a wait.  An RNR NAK is thus never lost.
 */
static void eroce_resp_ack_fold(struct eroce_qp *qp, struct eroce_rsp *rsp,
				u8 syn, u32 psn, u32 sr_hole)
{
	u32 next = eroce_syn_resume_psn(syn, psn);
	u32 queued = eroce_syn_resume_psn(rsp->syn, rsp->first_psn);

	eroce_stat_inc(to_eroce_dev(qp->ibqp.device), EROCE_CNT_ACKS_FOLDED);
	if (eroce_psn_before(next, queued) ||
	    (next == queued && eroce_syn_rank(syn) < eroce_syn_rank(rsp->syn)))
		return;
	rsp->syn = syn;
	rsp->sr_hole = sr_hole;
	rsp->first_psn = psn;
	rsp->msn = qp->eng.resp.msn;
}

/*
 * ACK or NAK now, or behind the read responses still owed; @sr_hole, when
 * not 0, marks a sequence NAK after which this responder keeps packets
 * (selective repeat) and says how many PSNs from @psn on are missing.
 */
void eroce_resp_ack_sr(struct eroce_qp *qp, u8 syn, u32 psn,
		       u32 sr_hole)
{
	struct eroce_resp *resp = &qp->eng.resp;
	struct eroce_rsp *rsp;

	if (eroce_rsp_queue_empty(resp)) {
		eroce_resp_send_ack_now(qp, syn, psn, resp->msn, sr_hole);
		return;
	}
	/* coalesce with a queued plain ACK */
	rsp = &resp->rsp[(resp->rsp_head - 1) & (resp->rsp_size - 1)];
	if (rsp->type != EROCE_RSP_ACK ||
	    eroce_syn_type(rsp->syn) != EROCE_SYN_ACK ||
	    eroce_syn_type(syn) != EROCE_SYN_ACK) {
		struct eroce_rsp *last = rsp;

		rsp = eroce_rsp_queue_add(qp, true);
		if (!rsp) {
			/* full: the last entry is an ACK or NAK */
			eroce_resp_ack_fold(qp, last, syn, psn, sr_hole);
			return;
		}
	}
	rsp->type = EROCE_RSP_ACK;
	rsp->syn = syn;
	rsp->sr_hole = sr_hole;
	rsp->first_psn = psn;
	rsp->msn = resp->msn;
}

static void eroce_resp_nak(struct eroce_qp *qp, struct eroce_rx *pkt,
			   enum eroce_nak_code code)
{
	enum eroce_counter cnt;

	switch (code) {
	case EROCE_NAK_REM_ACCESS_ERR:
		cnt = EROCE_CNT_ACCESS_NAK_SENT;
		break;
	case EROCE_NAK_REM_OP_ERR:
		cnt = EROCE_CNT_REM_OP_NAK_SENT;
		break;
	default:
		cnt = EROCE_CNT_INVALID_NAK_SENT;
		break;
	}
	eroce_stat_inc(pkt->edev, cnt);
	net_dbg_ratelimited("eroce: QP %u: NAK %d for %s PSN %u\n",
			    qp->ibqp.qp_num, code,
			    eroce_opcode_name(pkt->opcode), pkt->psn);
	eroce_resp_ack(qp, eroce_syn_nak(code), pkt->psn);
}

/*
 * The MR of a READ went away (deregistered) or stopped allowing it while
 * its responses were going out: a remote access NAK in place of the
 * packet that could not be read, and the QP fails.
 */
static void eroce_resp_read_failed(struct eroce_qp *qp, struct eroce_rsp *rsp)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	u32 psn = eroce_psn_add(rsp->first_psn, rsp->sent);

	eroce_stat_inc(edev, EROCE_CNT_ACCESS_NAK_SENT);
	net_dbg_ratelimited("eroce: QP %u: NAK %d for READ response PSN %u: rkey %#x gone\n",
			    qp->ibqp.qp_num, EROCE_NAK_REM_ACCESS_ERR, psn,
			    rsp->rkey);
	eroce_resp_send_ack_now(qp, eroce_syn_nak(EROCE_NAK_REM_ACCESS_ERR),
				psn, rsp->msn, false);
	eroce_qp_fatal(qp, IB_EVENT_QP_ACCESS_ERR);
}

/*
 * Send the batch of @rsp's packets.  A full queue on the way out dropped
 * all of it: they are sent again (-EAGAIN).  A batch without a path
 * counts as sent, as if lost on the wire: the requester asks again or
 * gives up, and nothing here retries it forever.
 */
static int eroce_resp_xmit_batch(struct eroce_qp *qp, struct eroce_rsp *rsp,
				 struct eroce_tx_batch *b)
{
	u32 npkts = eroce_tx_batch_count(b);

	if (eroce_qp_send_batch(qp, b) != -ENOBUFS)
		return 0;
	rsp->sent -= npkts;
	return -EAGAIN;
}

/*
 * Put the next packet of a READ in the batch @b, which goes out first
 * when the packet does not fit it.  Return: 0; -EAGAIN when it could not
 * leave now (no memory, a full queue on the way out): try again later;
 * -EACCES when its MR no longer allows it.
 */
static int eroce_resp_send_read_pkt(struct eroce_qp *qp,
				    struct eroce_rsp *rsp,
				    struct eroce_tx_batch *b)
{
	u32 mtu = eroce_resp_mtu(qp);
	u32 off = rsp->sent * mtu;
	u32 paylen = min(mtu, rsp->length - off);
	const struct eroce_opcode_info *info;
	struct sk_buff *skb;
	u8 opcode;

	if (rsp->npkts == 1)
		opcode = EROCE_OP_RC_READ_RESPONSE_ONLY;
	else if (!rsp->sent)
		opcode = EROCE_OP_RC_READ_RESPONSE_FIRST;
	else if (rsp->sent == rsp->npkts - 1)
		opcode = EROCE_OP_RC_READ_RESPONSE_LAST;
	else
		opcode = EROCE_OP_RC_READ_RESPONSE_MIDDLE;

	skb = eroce_resp_pkt(qp, opcode, eroce_psn_add(rsp->first_psn,
						       rsp->sent), paylen);
	if (!skb)
		return -EAGAIN;
	info = eroce_opcode_info(opcode);
	if (info->flags & EROCE_OPF_AETH)
		eroce_aeth_init(eroce_hdr(info, eroce_pkt_bth(skb),
					  EROCE_HDR_AETH),
				eroce_syn_ack(EROCE_AETH_CREDIT_INVALID),
				rsp->msn);
	if (paylen && eroce_resp_mr_access(qp, rsp->rkey, rsp->va + off,
					   eroce_pkt_payload(skb), paylen,
					   IB_ACCESS_REMOTE_READ)) {
		kfree_skb(skb);
		return -EACCES;
	}
	eroce_rate_sent(qp, skb->len);
	if (!eroce_tx_batch_fits(qp, b, skb->len) &&
	    eroce_resp_xmit_batch(qp, rsp, b)) {
		kfree_skb(skb);
		return -EAGAIN;
	}
	eroce_tx_batch_add(b, skb);
	rsp->sent++;
	return 0;
}

/*
 * Send what is left of a READ's response, batched, at most *@budget
 * packets.  Return: 0 when all of it left; -EBUSY when the budget ran
 * out; -EINPROGRESS when the pacer holds it; -EAGAIN or -EACCES as
 * eroce_resp_send_read_pkt().
 */
static int eroce_resp_send_read(struct eroce_qp *qp, struct eroce_rsp *rsp,
				int *budget)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	struct eroce_tx_batch b;
	int err = 0;

	/* sized to the requester's window, as far as this side knows it */
	eroce_tx_batch_init(&b, READ_ONCE(edev->tuning.max_inflight_pkts));
	while (rsp->sent < rsp->npkts) {
		if ((*budget)-- <= 0) {
			err = -EBUSY;
			break;
		}
		if (eroce_rate_wait(qp)) {
			err = -EINPROGRESS;
			break;
		}
		err = eroce_resp_send_read_pkt(qp, rsp, &b);
		if (err)
			break;
	}
	if (eroce_resp_xmit_batch(qp, rsp, &b) && err != -EACCES)
		err = -EAGAIN;
	return err;
}

/*
 * Send owed responses in order, at most @budget read response packets.
 * Returns true when some are left.  Context: receive softirq or the QP's
 * work item.
 */
static bool eroce_resp_send_owed(struct eroce_qp *qp, int budget)
{
	struct eroce_resp *resp = &qp->eng.resp;

	lockdep_assert_held(&qp->eng.lock);
	while (!eroce_rsp_queue_empty(resp)) {
		struct eroce_rsp *rsp =
			&resp->rsp[resp->rsp_tail & (resp->rsp_size - 1)];

		switch (rsp->type) {
		case EROCE_RSP_READ:
			switch (eroce_resp_send_read(qp, rsp, &budget)) {
			case 0:
				break;
			case -EBUSY:
				return true;
			case -EINPROGRESS:
				return false;	/* paced */
			case -EACCES:
				eroce_resp_read_failed(qp, rsp);
				return false;
			default:
				/* dropped on the way out: back off */
				qp->eng.tx_stalled = true;
				eroce_rate_stalled(qp);
				return false;
			}
			break;
		case EROCE_RSP_ATOMIC:
			eroce_resp_send_atomic_ack_now(qp, rsp->first_psn,
						       rsp->msn, rsp->orig);
			break;
		default:
			eroce_resp_send_ack_now(qp, rsp->syn, rsp->first_psn,
						rsp->msn, rsp->sr_hole);
			break;
		}
		resp->rsp_tail++;
	}
	return false;
}

/*
 * A fatal NAK belongs behind the responses still owed (responses go in
 * PSN order: the read responses before it answer requests the peer sent
 * first), but the QP's flush is about to forget what is owed.  So what is
 * owed goes now, up to EROCE_RESP_FATAL_BUDGET read response packets, and
 * the NAK after it.  What a budget, pacing or a full transmit queue left
 * is given up, and the NAK goes anyway: the peer retries those reads and
 * fails them, but still learns why its request failed.
 */
void eroce_resp_fatal_nak(struct eroce_qp *qp, struct eroce_rx *pkt,
			  enum eroce_nak_code code)
{
	struct eroce_resp *resp = &qp->eng.resp;

	if (!eroce_rsp_queue_empty(resp)) {
		eroce_resp_send_owed(qp, EROCE_RESP_FATAL_BUDGET);
		resp->rsp_tail = resp->rsp_head;
	}
	eroce_resp_nak(qp, pkt, code);
}

/*
 * A READ was queued: send the first packets owed from here (receive
 * softirq) when it runs on the QP's CPU, leave the rest, or all of them
 * elsewhere, to the work item, which sends from that same CPU.
 */
void eroce_resp_answer_reads(struct eroce_qp *qp)
{
	struct eroce_qp_engine *eng = &qp->eng;
	bool more = true;

	if (eroce_qp_tx_here(qp))
		more = eroce_resp_send_owed(qp, EROCE_RESP_INLINE_PKTS);
	if (eng->tx_stalled) {
		eng->tx_stalled = false;
		eroce_qp_kick_later(qp);
	} else if (more) {
		eroce_qp_kick(qp);
	}
}

/* the work item's share of the owed responses: a budget at a time */
bool eroce_resp_run_reads(struct eroce_qp *qp)
{
	return eroce_resp_send_owed(qp, EROCE_REQ_BUDGET);
}

/*
 * eroce_resp_room_alloc - room for @size owed responses (a power of two)
 * and, after them, @size / 2 atomic results; kfree() frees both
 */
struct eroce_rsp *eroce_resp_room_alloc(u32 size)
{
	return kzalloc(size_add(array_size(size, sizeof(struct eroce_rsp)),
				array_size(size / 2,
					   sizeof(struct eroce_atomic_res))),
		       GFP_KERNEL);
}

/*
 * eroce_resp_room_set - make @rsp, from eroce_resp_room_alloc(@size), the
 * responder's owed responses and atomic results, both empty
 */
void eroce_resp_room_set(struct eroce_qp *qp, struct eroce_rsp *rsp, u32 size)
{
	struct eroce_resp *resp = &qp->eng.resp;

	lockdep_assert_held(&qp->eng.lock);
	resp->rsp = rsp;
	resp->rsp_size = size;
	resp->rsp_head = 0;
	resp->rsp_tail = 0;
	resp->atomic = (struct eroce_atomic_res *)(rsp + size);
	resp->atomic_next = 0;
}
