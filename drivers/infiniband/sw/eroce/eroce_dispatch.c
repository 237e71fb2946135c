// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_dispatch.c - where the network layer hands received packets up.
 *
 * eroce_recv.c calls one function for each packet that passed its checks,
 * eroce_dispatch(), registered at module init; it is the only way up out
 * of the network layer.  A packet for a multicast group goes to each QP
 * attached to it (eroce_mcast.c), a CNP to the rate control of the QP it
 * names, any other packet to the QP its BTH names, looked up here; each
 * then goes through eroce_recv_deliver() (eroce_deliver.c).  A packet for
 * no QP, or for a group with none attached, is a drop with its own
 * counter and a rate-limited debug line.
 *
 * Context: softirq, or the loopback work item of eroce_xmit.c with
 * bottom halves off.  No locks of its own: the QP lookup takes a
 * reference under RCU, the multicast walk reads under RCU.
 */
#include <linux/init.h>

#include "eroce.h"
#include "eroce_opcode.h"

static void eroce_recv_qp(struct eroce_dev *edev, struct eroce_rx *pkt,
			  const union ib_gid *sgid)
{
	u32 qpn = eroce_bth_qpn(pkt->bth);
	struct eroce_qp *qp;

	qp = eroce_qp_get(&edev->res, qpn);
	if (!qp) {
		eroce_rx_drop(edev, DROP_NO_QP, "no QP %u", qpn);
		return;
	}
	eroce_recv_deliver(edev, pkt, sgid, qp);
	eroce_qp_put(qp);
}

/* a packet for a multicast group: a copy for each QP attached to it */
static void eroce_recv_mcast(struct eroce_dev *edev, struct eroce_rx *pkt,
			     const union ib_gid *sgid,
			     const union ib_gid *mgid)
{
	u32 qpn = eroce_bth_qpn(pkt->bth);

	if (qpn != IB_MULTICAST_QPN) {
		eroce_rx_drop(edev, DROP_MCAST_QPN, "QP %u for group %pI6",
			      qpn, mgid);
		return;
	}
	if (!eroce_mcast_rcv(edev, pkt, sgid, mgid))
		eroce_rx_drop(edev, DROP_MCAST_NO_GROUP,
			      "no QP attached to group %pI6", mgid);
}

/*
 * A packet that passed eroce_recv.c's checks: for a multicast group
 * (@mcast: @dgid is one), a CNP, or one QP.
 */
static void eroce_dispatch(struct eroce_dev *edev, struct eroce_rx *pkt,
			   const union ib_gid *sgid, const union ib_gid *dgid,
			   bool mcast)
{
	if (mcast)
		eroce_recv_mcast(edev, pkt, sgid, dgid);
	else if (pkt->info->flags & EROCE_OPF_CNP)
		eroce_recv_cnp(edev, pkt, sgid);
	else
		eroce_recv_qp(edev, pkt, sgid);
}

void __init eroce_dispatch_init(void)
{
	eroce_recv_register(eroce_dispatch);
}
