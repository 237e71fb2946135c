// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_resp_ud.c - UC and UD receive.
 *
 * UC runs the SEND and WRITE handlers of RC without acknowledgments
 * (eroce_resp_uc()): a PSN gap loses the message in progress, and a
 * remote error drops the message instead of failing the QP.
 *
 * UD and GSI: one packet, one receive WQE, the GRH in front
 * (eroce_resp_ud()); a wrong Q_Key or no receive WQE drops the packet.
 *
 * Context: receive softirq (eroce_resp_rcv()).  Locks: the caller holds
 * qp->eng.lock; the RQ or SRQ consumer_lock and the CQ producer lock nest
 * inside it.
 */
#include <linux/if_vlan.h>

#include "eroce_opcode.h"
#include "eroce_psn.h"
#include "eroce_resp.h"

#define EROCE_GRH_BYTES	40

/*
 * UC: no acknowledgments and no duplicates.  A packet other than the
 * expected one means packets were lost: the message in progress is lost
 * with them, the packet's PSN becomes the expected one, and packets are
 * dropped until one starts a message.
 */
void eroce_resp_uc(struct eroce_qp *qp, struct eroce_rx *pkt)
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
void eroce_resp_ud(struct eroce_qp *qp, struct eroce_rx *pkt)
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
