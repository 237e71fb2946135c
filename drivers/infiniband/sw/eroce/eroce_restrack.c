// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_restrack.c - transport state of a QP for `rdma resource show qp
 * -dd`: where the requester stands (PSNs, SQ positions, retries, timer)
 * and where the responder stands (expected PSN, owed responses), so a
 * stuck QP can be read from the outside.
 *
 * Context: process context (the RDMA netlink handler), no locks held.
 * Locks: qp->eng.lock (bottom halves off) around the snapshot; the
 * netlink attributes are written after it is dropped.
 */
#include <rdma/rdma_netlink.h>

#include "eroce.h"

struct eroce_qp_snapshot {
	u32 sq_head, sq_cur, sq_tail;
	u32 psn, una_psn, max_psn;
	u32 retry_left, rnr_retry_left, backoff, cwnd;
	u32 rnr_wait, timer_armed, timer_queued, work_pending;
	u32 tx_stalled;
	u32 srtt_us, rttvar_us, tlp_armed, tlp_sent;
	u32 rate_kbps, rate_limit_kbps, cc_active, dcqcn_alpha;
	u32 epsn, msn, nak_sent, rsp_queued;
	u32 cpu, txq_len;
};

static void eroce_qp_snapshot(struct eroce_qp *qp, struct eroce_qp_snapshot *s)
{
	struct eroce_qp_engine *eng = &qp->eng;
	struct eroce_req *req = &eng->req;
	struct eroce_resp *resp = &eng->resp;

	spin_lock_bh(&eng->lock);
	s->sq_head = req->head;
	s->sq_cur = req->cur;
	s->sq_tail = qp->sq.consumer;
	s->psn = req->psn;
	s->una_psn = req->una_psn;
	s->max_psn = req->max_psn;
	s->retry_left = req->retry_left;
	s->rnr_retry_left = req->rnr_retry_left;
	s->backoff = req->backoff;
	s->cwnd = req->cwnd;
	s->rnr_wait = req->rnr_wait;
	s->timer_armed = req->timer_armed;
	s->timer_queued = hrtimer_active(&req->timer);
	s->work_pending = delayed_work_pending(&eng->work);
	s->srtt_us = div_u64(req->srtt_ns, NSEC_PER_USEC);
	s->rttvar_us = div_u64(req->rttvar_ns, NSEC_PER_USEC);
	s->tlp_armed = req->tlp_armed;
	s->tlp_sent = req->tlp_sent;
	s->rate_kbps = eroce_rate_kbps(qp);
	s->rate_limit_kbps = eng->rate.limit_kbps;
	s->cc_active = eng->rate.cc_active;
	s->dcqcn_alpha = eng->rate.alpha;
	s->tx_stalled = eng->tx_stalled;
	s->epsn = resp->epsn;
	s->msn = resp->msn;
	s->nak_sent = resp->nak_sent;
	s->rsp_queued = resp->rsp_head - resp->rsp_tail;
	s->cpu = eng->cpu;
	s->txq_len = skb_queue_len(&eng->txq);
	spin_unlock_bh(&eng->lock);
}

static int eroce_qp_snapshot_put(struct sk_buff *msg,
				 const struct eroce_qp_snapshot *s)
{
	const struct {
		const char *name;
		u32 value;
	} f[] = {
		{ "sq_head", s->sq_head },
		{ "sq_cur", s->sq_cur },
		{ "sq_tail", s->sq_tail },
		{ "next_psn", s->psn },
		{ "una_psn", s->una_psn },
		{ "max_psn", s->max_psn },
		{ "retry_left", s->retry_left },
		{ "rnr_retry_left", s->rnr_retry_left },
		{ "backoff", s->backoff },
		{ "cwnd", s->cwnd },
		{ "rnr_wait", s->rnr_wait },
		{ "timer_armed", s->timer_armed },
		{ "timer_queued", s->timer_queued },
		{ "tlp_armed", s->tlp_armed },
		{ "tlp_sent", s->tlp_sent },
		{ "srtt_us", s->srtt_us },
		{ "rttvar_us", s->rttvar_us },
		{ "rate_kbps", s->rate_kbps },
		{ "rate_limit_kbps", s->rate_limit_kbps },
		{ "cc_active", s->cc_active },
		{ "dcqcn_alpha", s->dcqcn_alpha },
		{ "work_pending", s->work_pending },
		{ "tx_stalled", s->tx_stalled },
		{ "expected_psn", s->epsn },
		{ "msn", s->msn },
		{ "nak_sent", s->nak_sent },
		{ "responses_queued", s->rsp_queued },
		{ "cpu", s->cpu },
		{ "txq_len", s->txq_len },
	};
	struct nlattr *table;
	size_t i;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(f); i++) {
		if (rdma_nl_put_driver_u32(msg, f[i].name, f[i].value)) {
			nla_nest_cancel(msg, table);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(msg, table);
	return 0;
}

/**
 * eroce_fill_res_qp_entry() - driver details of one QP for rdma netlink
 * @msg: the netlink message being built
 * @ibqp: the QP
 *
 * Return: 0, or -EMSGSIZE when @msg is full.
 */
int eroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct eroce_qp_snapshot s;

	if (ibqp->qp_type == IB_QPT_GSI)
		return 0;
	eroce_qp_snapshot(to_eroce_qp(ibqp), &s);
	return eroce_qp_snapshot_put(msg, &s);
}
