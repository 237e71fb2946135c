// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_rate.c - how fast a QP may send: pacing, rate limits and DCQCN.
 *
 * Pacing: every packet a QP sends moves its "next start" time on by the
 * packet's length at the QP's rate, the lowest of its rate limit
 * (IB_QP_RATE_LIMIT), its DCQCN rate while congestion control is active,
 * and the device's max_rate_mbps; a packet due later than a little
 * slack from now waits for the QP's pacing hrtimer, which kicks the work
 * item.  A QP held back this way to a rate limit is owed its rate however
 * late the timer and the work item run (up to a second); one that ran dry,
 * or that DCQCN holds back, earns at most 4 ms of credit.  A QP that
 * something else stops (its flow-control window, an RNR wait, a dropped
 * packet) keeps the debt it had then, but earns nothing for the time it
 * waits.  max_rate_mbps is also a device-wide pacer shared by all QPs.
 *
 * DCQCN (Zhu et al., SIGCOMM 2015): the notification point answers a
 * packet that arrived with ECN CE by a CNP to the sending QP, at most one
 * per cnp_interval_us per QP; the reaction point cuts its rate on a CNP,
 * rc = rc * (1 - alpha / 2), remembering the rate before as the target,
 * and raises alpha; without CNPs alpha decays every alpha_update_us, and
 * every rate_increase_us or byte_counter_kb sent is an increase event:
 * fast recovery (rc halfway to the target) for the first
 * fast_recovery_steps events, then additive increase (target + rate_ai),
 * then hyper increase (target + rate_hai).  The timers are evaluated
 * lazily, when the QP is about to send, which is the only time the rate
 * matters.
 *
 * Context: the QP's work item and the receive softirq.  Locks: the
 * caller holds qp->eng.lock for the QP's state; edev->pace_lock guards
 * the device pacer.
 */
#include <linux/math64.h>

#include "eroce.h"
#include "eroce_opcode.h"
#include "eroce_xmit.h"

/* a packet may start this much before its paced time */
#define EROCE_PACE_SLACK_NS	(50 * NSEC_PER_USEC)
/*
 * The pacer's memory.  A QP that had nothing to send earns at most
 * EROCE_PACE_IDLE_NS of credit: the largest burst it may start with.  A
 * QP the pacer held back to a rate limit is owed its rate: a late wake-up
 * (the pacing timer, then the work item, on a busy or descheduled CPU) is
 * made up for by sending faster afterwards, however late it was, up to
 * EROCE_PACE_BACKLOG_NS.  A QP held back by DCQCN is not: its rate is what
 * the network takes, and it earns EROCE_PACE_IDLE_NS at most.
 */
#define EROCE_PACE_IDLE_NS	(4 * NSEC_PER_MSEC)
#define EROCE_PACE_BACKLOG_NS	NSEC_PER_SEC
/* DCQCN's starting rate when max_rate_mbps sets none */
#define EROCE_LINE_RATE_KBPS	(10 * 1000 * 1000)
/* Ethernet header and FCS, IPv4 and UDP headers around a packet */
#define EROCE_FRAME_OVERHEAD	(ETH_HLEN + ETH_FCS_LEN + 20 + 8)
/* at most this many lazily applied timer steps at once */
#define EROCE_DCQCN_MAX_STEPS	64

static enum hrtimer_restart eroce_rate_timer(struct hrtimer *timer)
{
	struct eroce_rate *r = container_of(timer, struct eroce_rate, timer);
	struct eroce_qp_engine *eng = container_of(r, struct eroce_qp_engine,
						   rate);

	eroce_qp_kick(container_of(eng, struct eroce_qp, eng));
	return HRTIMER_NORESTART;
}

void eroce_rate_init(struct eroce_qp *qp)
{
	hrtimer_init(&qp->eng.rate.timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_ABS_SOFT);
	qp->eng.rate.timer.function = eroce_rate_timer;
}

/* the QP is unreachable: no kick may follow */
void eroce_rate_fini(struct eroce_qp *qp)
{
	hrtimer_cancel(&qp->eng.rate.timer);
}

/* back to full speed, keeping the rate limit (QP to RTS, or RESET) */
void eroce_rate_reset(struct eroce_qp *qp)
{
	struct eroce_rate *r = &qp->eng.rate;

	lockdep_assert_held(&qp->eng.lock);
	r->next_ns = 0;
	r->backlogged = false;
	r->stalled = false;
	r->cc_active = false;
	r->stage = 0;
	r->inc_bytes = 0;
	r->cnp_sent_ns = 0;
}

static u32 eroce_line_kbps(struct eroce_dev *edev)
{
	u32 max = READ_ONCE(edev->tuning.max_rate_mbps);

	return max ? max * 1000 : EROCE_LINE_RATE_KBPS;
}

/* apply the alpha decay and increase events due by @now */
static void eroce_dcqcn_update(struct eroce_qp *qp, u64 now)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	struct eroce_tuning *t = &edev->tuning;
	struct eroce_rate *r = &qp->eng.rate;
	u64 k_ns = (u64)READ_ONCE(t->dcqcn_alpha_update_us) * NSEC_PER_USEC;
	u64 t_ns = (u64)READ_ONCE(t->dcqcn_rate_increase_us) * NSEC_PER_USEC;
	u64 b = (u64)READ_ONCE(t->dcqcn_byte_counter_kb) * 1024;
	u32 g_shift = READ_ONCE(t->dcqcn_g_shift);
	u32 f = READ_ONCE(t->dcqcn_fast_recovery_steps);
	u32 ai = READ_ONCE(t->dcqcn_rate_ai_mbps) * 1000;
	u32 hai = READ_ONCE(t->dcqcn_rate_hai_mbps) * 1000;
	u32 line = eroce_line_kbps(edev);
	u64 n, rem;

	if (!r->cc_active)
		return;

	/* alpha = (1 - g) * alpha per period without a CNP */
	n = now > r->alpha_ns ? div64_u64(now - r->alpha_ns, k_ns) : 0;
	if (n) {
		r->alpha_ns += n * k_ns;
		for (n = min_t(u64, n, EROCE_DCQCN_MAX_STEPS); n; n--)
			r->alpha -= r->alpha >> g_shift;
	}

	/* increase events: the timer and the byte counter */
	n = now > r->inc_ns ? div64_u64(now - r->inc_ns, t_ns) : 0;
	r->inc_ns += n * t_ns;
	n += div64_u64_rem(r->inc_bytes, b, &rem);
	r->inc_bytes = rem;
	for (n = min_t(u64, n, EROCE_DCQCN_MAX_STEPS); n; n--) {
		r->stage++;
		if (r->stage > 2 * f)
			r->rt_kbps = min(line, r->rt_kbps + hai);
		else if (r->stage > f)
			r->rt_kbps = min(line, r->rt_kbps + ai);
		r->rc_kbps = (r->rt_kbps + r->rc_kbps) / 2;
		if (r->rc_kbps >= line - line / 1024) {
			r->cc_active = false;	/* back at line rate */
			break;
		}
	}
}

/**
 * eroce_rate_kbps() - the rate a QP may send at now
 * @qp: the QP
 *
 * Return: the lowest of its rate limit, its DCQCN rate and the device's
 * max_rate_mbps, in kb/s; 0 when none applies.
 */
u32 eroce_rate_kbps(struct eroce_qp *qp)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	struct eroce_rate *r = &qp->eng.rate;
	u32 kbps = READ_ONCE(r->limit_kbps);
	u32 dev = READ_ONCE(edev->tuning.max_rate_mbps) * 1000;

	if (r->cc_active && READ_ONCE(edev->tuning.cc) == EROCE_CC_DCQCN)
		kbps = kbps ? min(kbps, r->rc_kbps) : r->rc_kbps;
	if (dev)
		kbps = kbps ? min(kbps, dev) : dev;
	return kbps;
}

static u64 eroce_rate_cost_ns(u32 bytes, u32 kbps)
{
	return div_u64((u64)bytes * 8 * USEC_PER_SEC, kbps);
}

/**
 * eroce_rate_wait() - must the QP hold its next packet back?
 * @qp: the QP, about to send a packet
 *
 * Return: false to send now; true when the QP is ahead of its rate (or the
 * device of max_rate_mbps): the pacing timer will kick the work item.
 */
bool eroce_rate_wait(struct eroce_qp *qp)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	struct eroce_rate *r = &qp->eng.rate;
	u64 now, due = 0;

	lockdep_assert_held(&qp->eng.lock);
	if (!READ_ONCE(r->limit_kbps) && !r->cc_active &&
	    !READ_ONCE(edev->tuning.max_rate_mbps))
		return false;

	now = ktime_get_ns();
	if (r->stalled) {
		/* what it owed when it stopped, not the time it waited */
		r->next_ns = max(r->next_ns, now - r->stall_debt_ns);
		r->stalled = false;
	}
	eroce_dcqcn_update(qp, now);
	if (eroce_rate_kbps(qp) && r->next_ns > now + EROCE_PACE_SLACK_NS)
		due = r->next_ns;
	if (READ_ONCE(edev->tuning.max_rate_mbps)) {
		u64 dev_next = READ_ONCE(edev->pace_next_ns);

		if (dev_next > now + EROCE_PACE_SLACK_NS)
			due = max(due, dev_next);
	}
	if (!due)
		return false;
	r->backlogged = true;
	hrtimer_start(&r->timer, ns_to_ktime(due - EROCE_PACE_SLACK_NS / 2),
		      HRTIMER_MODE_ABS_SOFT);
	return true;
}

/**
 * eroce_rate_idle() - the QP has nothing more to send
 * @qp: the QP
 *
 * From now on the pacer forgives it only EROCE_PACE_IDLE_NS of the time
 * it does not use.
 */
void eroce_rate_idle(struct eroce_qp *qp)
{
	lockdep_assert_held(&qp->eng.lock);
	qp->eng.rate.backlogged = false;
	qp->eng.rate.stalled = false;
}

/**
 * eroce_rate_stalled() - the QP stopped with work left, not for its pacer
 * @qp: the QP
 *
 * Its flow-control window, an RNR wait or a dropped packet stopped it.  A
 * QP the pacer owed its rate keeps the debt it has now; the time until it
 * sends again is not owed (no burst of a second's worth after a stall).
 */
void eroce_rate_stalled(struct eroce_qp *qp)
{
	struct eroce_rate *r = &qp->eng.rate;
	u64 now;

	lockdep_assert_held(&qp->eng.lock);
	if (!r->backlogged || r->stalled)
		return;
	now = ktime_get_ns();
	r->stall_debt_ns = r->next_ns < now ? now - r->next_ns : 0;
	r->stalled = true;
}

/**
 * eroce_rate_sent() - account a packet the QP sent
 * @qp: the QP
 * @bytes: the packet's length from the BTH to the ICRC
 */
void eroce_rate_sent(struct eroce_qp *qp, u32 bytes)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	struct eroce_rate *r = &qp->eng.rate;
	u32 kbps, dev = READ_ONCE(edev->tuning.max_rate_mbps) * 1000;
	u64 now, floor;

	lockdep_assert_held(&qp->eng.lock);
	bytes += EROCE_FRAME_OVERHEAD;
	if (r->cc_active)
		r->inc_bytes += bytes;
	kbps = eroce_rate_kbps(qp);
	if (!kbps)
		return;
	now = ktime_get_ns();
	/*
	 * Under DCQCN the rate is what the network takes: a burst to make
	 * up for a late wake-up would overrun the queue that marked it.
	 */
	floor = now - (r->backlogged && !r->cc_active ? EROCE_PACE_BACKLOG_NS :
							EROCE_PACE_IDLE_NS);
	r->next_ns = max(r->next_ns, floor) + eroce_rate_cost_ns(bytes, kbps);
	if (dev) {
		spin_lock(&edev->pace_lock);
		WRITE_ONCE(edev->pace_next_ns,
			   max(edev->pace_next_ns, floor) +
			   eroce_rate_cost_ns(bytes, dev));
		spin_unlock(&edev->pace_lock);
	}
}

/**
 * eroce_rate_cnp_rcvd() - the peer saw congestion on this QP's packets
 * @qp: the QP the CNP names
 *
 * With cc dcqcn: cut the rate and raise alpha.  Context: receive softirq.
 */
void eroce_rate_cnp_rcvd(struct eroce_qp *qp)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	struct eroce_tuning *t = &edev->tuning;
	struct eroce_rate *r = &qp->eng.rate;
	u32 g_shift = READ_ONCE(t->dcqcn_g_shift);
	u32 floor = READ_ONCE(t->dcqcn_min_rate_mbps) * 1000;
	u64 now = ktime_get_ns();

	lockdep_assert_held(&qp->eng.lock);
	if (READ_ONCE(t->cc) != EROCE_CC_DCQCN)
		return;
	eroce_stat_inc(edev, EROCE_CNT_CNP_HANDLED);
	eroce_dcqcn_update(qp, now);
	if (!r->cc_active) {
		r->cc_active = true;
		r->rc_kbps = eroce_line_kbps(edev);
		r->alpha = EROCE_DCQCN_ALPHA_ONE;
	}
	r->rt_kbps = r->rc_kbps;
	r->rc_kbps -= (u32)div_u64((u64)r->rc_kbps * r->alpha,
				   2 * EROCE_DCQCN_ALPHA_ONE);
	r->rc_kbps = max(r->rc_kbps, floor);
	r->alpha += (EROCE_DCQCN_ALPHA_ONE - r->alpha) >> g_shift;
	r->stage = 0;
	r->alpha_ns = now;
	r->inc_ns = now;
	r->inc_bytes = 0;
	eroce_stat_inc(edev, EROCE_CNT_RATE_DECREASES);
}

/**
 * eroce_rate_ecn_ce() - a packet for this QP arrived marked CE
 * @qp: the QP the packet is for
 *
 * With cc dcqcn: send a CNP to the peer QP, at most one per
 * cnp_interval_us.  Context: receive softirq.
 */
void eroce_rate_ecn_ce(struct eroce_qp *qp)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	struct eroce_rate *r = &qp->eng.rate;
	u64 gap = (u64)READ_ONCE(edev->tuning.cnp_interval_us) * NSEC_PER_USEC;
	u64 now = ktime_get_ns();
	struct eroce_bth *bth;
	struct sk_buff *skb;

	lockdep_assert_held(&qp->eng.lock);
	if (READ_ONCE(edev->tuning.cc) != EROCE_CC_DCQCN ||
	    !eroce_qp_connected(qp))
		return;
	if (r->cnp_sent_ns && now - r->cnp_sent_ns < gap)
		return;
	skb = eroce_pkt_alloc(edev, EROCE_OP_CNP, 0);
	if (!skb)
		return;
	r->cnp_sent_ns = now;
	bth = eroce_pkt_bth(skb);
	eroce_bth_set_qpn(bth, READ_ONCE(qp->attrs.dest_qp_num));
	eroce_bth_set_becn(bth, true);
	if (!eroce_qp_send(qp, skb))
		eroce_stat_inc(edev, EROCE_CNT_CNP_SENT);
}
