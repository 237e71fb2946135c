// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_deliver.c - a received packet into the transport of one QP.
 *
 * eroce_recv.c has checked the packet itself (headers, ICRC, destination
 * address); what depends on the QP it names is checked here, in this
 * order, each failure a drop with its own counter and a rate-limited
 * debug line: the QP's transport, the P_Key, the QP state and, for a
 * connected QP, the source address of its peer.  Only then do the
 * responder (requests) or the sender (responses) see it; a packet
 * marked ECN CE makes its QP send a CNP, and a CNP (checked the same way)
 * goes to the named QP's rate control (eroce_rate.c).  The multicast
 * fan-out (eroce_mcast.c) and the lookup by QPN (eroce_dispatch.c) call
 * eroce_recv_deliver() for each QP.
 *
 * Context: softirq, or the loopback work item of eroce_xmit.c with
 * bottom halves off.  Locks: the QP's engine lock around the QP state and
 * source checks, the responder and the sender.
 */
#include <linux/ip.h>
#include <net/inet_ecn.h>

#include "eroce.h"
#include "eroce_opcode.h"

static bool eroce_recv_qp_state_ok(struct eroce_qp *qp, u32 flags)
{
	enum ib_qp_state state = eroce_qp_state(qp);

	if (flags & EROCE_OPF_RESP)
		return state == IB_QPS_RTS || state == IB_QPS_SQD;
	return state == IB_QPS_RTR || state == IB_QPS_RTS ||
	       state == IB_QPS_SQD;
}

/* did a switch on the way mark the packet Congestion Experienced? */
static bool eroce_recv_ecn_ce(const void *iph)
{
	const struct iphdr *ip4 = iph;
	u8 tos = ip4->version == 4 ? ip4->tos : ipv6_get_dsfield(iph);

	return INET_ECN_is_ce(tos);
}

/* a CNP: the peer saw congestion on the packets of the QP it names */
void eroce_recv_cnp(struct eroce_dev *edev, struct eroce_rx *pkt,
		    const union ib_gid *sgid)
{
	u32 qpn = eroce_bth_qpn(pkt->bth);
	struct eroce_qp *qp;

	eroce_stat_inc(edev, EROCE_CNT_CNP_RCVD);
	qp = eroce_qp_get(&edev->res, qpn);
	if (!qp) {
		eroce_rx_drop(edev, DROP_NO_QP, "CNP for no QP %u", qpn);
		return;
	}
	/* the state and the AV change only under the engine lock */
	spin_lock_bh(&qp->eng.lock);
	if (!eroce_qp_connected(qp) ||
	    !eroce_recv_qp_state_ok(qp, EROCE_OPF_RESP)) {
		eroce_rx_drop(edev, DROP_QP_STATE, "CNP for QP %u, not an RC or UC QP sending",
			      qpn);
	} else if (memcmp(sgid, &qp->attrs.av.dgid, sizeof(*sgid))) {
		eroce_rx_drop(edev, DROP_BAD_SRC, "CNP for QP %u: not from its peer",
			      qpn);
	} else {
		eroce_rate_cnp_rcvd(qp);
	}
	spin_unlock_bh(&qp->eng.lock);
	eroce_qp_put(qp);
}

/**
 * eroce_recv_deliver() - hand a validated packet to one QP
 * @edev: the receiving device
 * @pkt: the packet
 * @sgid: its source address
 * @qp: the QP it names, or one attached to its multicast group; the
 *	caller holds a reference
 *
 * Checks what depends on the QP (its type, the P_Key, its state and, for a
 * connected QP, the peer), then gives the packet to the responder or the
 * sender.  Context: softirq; takes the QP's engine lock.
 */
void eroce_recv_deliver(struct eroce_dev *edev, struct eroce_rx *pkt,
			const union ib_gid *sgid, struct eroce_qp *qp)
{
	u32 qpn = qp->ibqp.qp_num;
	u32 flags = pkt->info->flags;

	if (!(flags & eroce_qp_type_opf(qp->ibqp.qp_type))) {
		eroce_rx_drop(edev, DROP_QP_TYPE, "%s for QP %u",
			      eroce_opcode_name(pkt->opcode), qpn);
		return;
	}
	/* one P_Key (0xffff): compare the 15 key bits */
	if ((eroce_bth_pkey(pkt->bth) & 0x7fff) !=
	    (EROCE_DEFAULT_PKEY & 0x7fff)) {
		eroce_rx_drop(edev, DROP_BAD_PKEY, "P_Key %#x for QP %u",
			      eroce_bth_pkey(pkt->bth), qpn);
		return;
	}

	/*
	 * The state and the AV change only under the engine lock
	 * (eroce_qp_engine_modify()): checked under it, they hold for the
	 * whole packet.
	 */
	spin_lock_bh(&qp->eng.lock);
	if (!eroce_recv_qp_state_ok(qp, flags)) {
		eroce_rx_drop(edev, DROP_QP_STATE, "QP %u in state %d", qpn,
			      eroce_qp_state(qp));
		goto out_unlock;
	}
	if (eroce_qp_connected(qp) &&
	    memcmp(sgid, &qp->attrs.av.dgid, sizeof(*sgid))) {
		eroce_rx_drop(edev, DROP_BAD_SRC, "QP %u: not from its peer",
			      qpn);
		goto out_unlock;
	}
	if (eroce_recv_ecn_ce(pkt->iph)) {
		eroce_stat_inc(edev, EROCE_CNT_ECN_CE_RCVD);
		eroce_rate_ecn_ce(qp);
	}
	eroce_qp_rcvd(qp);
	if (flags & EROCE_OPF_RESP)
		eroce_req_rcv_response(qp, pkt);
	else
		eroce_resp_rcv(qp, pkt);
out_unlock:
	spin_unlock_bh(&qp->eng.lock);
}
