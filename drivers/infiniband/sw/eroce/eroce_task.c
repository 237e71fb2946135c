// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_task.c - per-QP engine life cycle, transitions and the work item.
 *
 * Each QP has one work item on the eroce workqueue (eroce_sched.c, which
 * queues it).  Its work function, here, runs the requester (SQ entries
 * into packets) and the responder's owed responses (read responses), a
 * budget at a time, and requeues itself while work is left, so one busy
 * QP cannot starve the others or the CPU.  Packets are received in
 * softirq and handled there directly (eroce_recv.c); the retransmit timer
 * is a softirq hrtimer.  No tasklets.  After a run the work item moves
 * the QP's CPU to the one its peer's requests arrive on, when nothing is
 * on its way from the old one (eroce_qp_move()).
 *
 * Every QP transition (modify_qp, the flush of a QP in ERR, and the stop
 * of the engines when one of them hits a fatal error: eroce_qp_fatal() in
 * eroce_qp_event.c calls eroce_qp_enter_err(), registered from here)
 * happens here, under the engine lock, which is what stops the engines:
 * each of them takes it before it looks at the QP's state, indices or
 * rings.  QP asynchronous events leave through eroce_qp_event().
 *
 * Context: process context for init/fini/modify and the work item; the
 * doorbell in the poster's system call; eroce_qp_enter_err() wherever the
 * engine lock is held.  Locks: qp->eng.lock (bottom halves off) around every engine
 * run and every transition; qp->state_lock and the rings' consumer_locks
 * nest inside it.  The flush of a QP in ERR takes each SQ or RQ entry
 * under its ring's consumer_lock and posts its CQE with no ring lock
 * held.
 */
#include <linux/error-injection.h>
#include <linux/log2.h>

#include "eroce.h"
#include "eroce_fault.h"
#include "eroce_opcode.h"
#include "eroce_resp.h"

/*
 * One run of the engines from process context: the packets that wait for
 * the QP's transmit context first when this is it, then, on a QP in ERR,
 * the flush, otherwise the owed read responses (from the work item,
 * @work) and the requester, a budget each.  The work item takes over
 * what is left, a jiffy later when the stack dropped a packet.
 */
static void eroce_qp_run(struct eroce_qp *qp, bool work)
{
	struct eroce_qp_engine *eng = &qp->eng;
	bool more = false, stalled;

	spin_lock_bh(&eng->lock);
	if (eng->dead) {
		spin_unlock_bh(&eng->lock);
		return;
	}
	eng->runner = work ? EROCE_RUN_WORK : EROCE_RUN_DOORBELL;
	if (work && eroce_qp_work_misplaced(qp))
		goto out_unlock;
	/* a failed drain kicked the work item for later */
	if (eroce_qp_tx_here(qp) && eroce_qp_tx_drain(qp))
		goto out_unlock;
	if (eroce_qp_state(qp) == IB_QPS_ERR) {
		eroce_qp_flush_locked(qp);
	} else {
		if (work)
			more = eroce_resp_run_reads(qp);
		more |= eroce_req_run(qp);
	}
out_unlock:
	eng->runner = EROCE_RUN_NONE;
	stalled = eng->tx_stalled;
	eng->tx_stalled = false;
	spin_unlock_bh(&eng->lock);

	if (stalled)
		eroce_qp_kick_later(qp);
	else if (more)
		eroce_qp_kick(qp);
}

/**
 * eroce_qp_doorbell() - userspace posted send work
 * @qp: a user QP
 *
 * Runs the requester right here, in the poster's system call: no wake-up
 * of the work item stands between a post and its first packet, and none
 * competes for the CPU with a consumer that busy-polls its CQ.  When the
 * engine is busy (most often the receive softirq on another CPU, which
 * has just posted the CQE the poster reacted to and is sending its ACK)
 * this waits for it rather than handing the post to the work item: the
 * lock is held for one packet's worth of work, a wake-up costs far more.
 * The requests leave from the poster's CPU (eroce_qp_send_batch()); the
 * work item takes over what a budget leaves.  On a QP in ERR the post is
 * flushed at once.
 * Context: process context (the POST_SEND doorbell).
 */
void eroce_qp_doorbell(struct eroce_qp *qp)
{
	eroce_stat_inc(to_eroce_dev(qp->ibqp.device), EROCE_CNT_DOORBELLS);
	/* the requester only: read responses are the work item's */
	eroce_qp_run(qp, false);
}

/* realign the requester with the SQ after a flush or discard */
static void eroce_req_resync(struct eroce_qp *qp)
{
	struct eroce_req *req = &qp->eng.req;

	lockdep_assert_held(&qp->eng.lock);
	req->head = qp->sq.consumer;
	req->cur = req->head;
	req->cur_offset = 0;
	req->rnr_wait = false;
}

/*
 * Complete every WQE queued on @ring with IB_WC_WR_FLUSH_ERR on @cq.  At
 * most num_slots: a user ring that keeps refilling is flushed again on its
 * next doorbell.  Each WQE is taken under the consumer_lock and completed
 * after it is dropped, so a comp_handler may post again.
 */
static void eroce_qp_flush_ring(struct eroce_qp *qp, struct eroce_ring *ring,
				struct ib_cq *ibcq, bool send)
{
	union {
		struct eroce_send_wqe send;
		struct eroce_recv_wqe recv;
	} wqe;
	struct eroce_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.qp_num = qp->ibqp.qp_num,
	};
	unsigned long flags;
	u32 n;
	int err;

	for (n = 0; n < ring->num_slots; n++) {
		spin_lock_irqsave(&ring->consumer_lock, flags);
		err = eroce_ring_consume_copy(ring, &wqe, send ?
					      sizeof(wqe.send) :
					      sizeof(wqe.recv));
		if (!err)
			eroce_ring_consume_commit(ring);
		spin_unlock_irqrestore(&ring->consumer_lock, flags);
		if (err)
			break;

		if (send) {
			cqe.wr_id = wqe.send.wr_id;
			cqe.opcode = eroce_wc_opcode_from_wr(wqe.send.opcode);
		} else {
			cqe.wr_id = wqe.recv.wr_id;
			cqe.opcode = IB_WC_RECV;
		}
		eroce_cq_post(to_eroce_cq(ibcq), &cqe, false);
	}
}

static void eroce_qp_flush_sq(struct eroce_qp *qp)
{
	eroce_qp_flush_ring(qp, &qp->sq, qp->ibqp.send_cq, true);
}

/* flush the RQ of a QP in ERR: also post_recv's, without the engine lock */
void eroce_qp_flush_rq(struct eroce_qp *qp)
{
	if (qp->rq.ctrl)
		eroce_qp_flush_ring(qp, &qp->rq, qp->ibqp.recv_cq, false);
}

/* flush both queues of a QP in the error state */
static void eroce_qp_flush(struct eroce_qp *qp)
{
	eroce_qp_flush_sq(qp);
	eroce_qp_flush_rq(qp);
}

/**
 * eroce_qp_flush_locked() - complete everything queued on a QP in ERR
 * @qp: a QP whose state is ERR
 *
 * The requester's fetched entries first (from the kernel's copies), then
 * the rest of the SQ and the RQ, each with IB_WC_WR_FLUSH_ERR.  The
 * engine lock keeps every engine out meanwhile, so no entry completes
 * twice and the SQ's one consumer index moves here alone.
 * Context: engine lock held.
 */
void eroce_qp_flush_locked(struct eroce_qp *qp)
{
	lockdep_assert_held(&qp->eng.lock);
	/* what userspace posts from now on must reach a flush */
	eroce_ring_flags_set(&qp->sq, EROCE_RING_NEED_DOORBELL);
	/*
	 * The flag is visible before the SQ's producer is read below; pairs
	 * with the provider's full barrier between its producer store and
	 * its flag load (as in eroce_req_sq_idle()), so a post is either
	 * flushed here or rings the doorbell, which flushes it.
	 */
	smp_mb__after_atomic();
	eroce_req_flush(qp);
	eroce_qp_flush(qp);
	eroce_req_resync(qp);
	eroce_resp_reset(qp);
}

/* the QP enters ERR: nothing more is sent or consumed from now on */
static void eroce_qp_enter_err(struct eroce_qp *qp)
{
	lockdep_assert_held(&qp->eng.lock);
	eroce_req_flush(qp);
	eroce_resp_flush(qp);
	eroce_resp_reset(qp);
	/* it consumes no more receive WQEs from its SRQ */
	if (qp->ibqp.srq)
		eroce_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/* eroce_qp_fatal() stops the engines with eroce_qp_enter_err() */
void __init eroce_task_init(void)
{
	eroce_qp_err_register(eroce_qp_enter_err);
}

/*
 * The QP's CPU moves to where its peer's requests arrive
 * (eroce_qp_tx_follow() counts them), from the work item on the old CPU
 * (or wherever it runs when that one went offline), after its run, when
 * nothing waits for the transmit context and no response is owed.  The
 * run handed its packets to the stack before it dropped the engine lock,
 * and a veth's backlog on the old CPU is processed when bottom halves
 * come back on there, unless softirqs are pushed to ksoftirqd: only then,
 * or in two transmit queues of a NIC, can the first responses from the
 * new CPU overtake the old CPU's last ones, at a move, which
 * EROCE_FOLLOW_PKTS keeps rare.
 */
static void eroce_qp_move(struct eroce_qp *qp)
{
	struct eroce_qp_engine *eng = &qp->eng;

	spin_lock_bh(&eng->lock);
	if (!eng->dead && eng->follow_pkts >= EROCE_FOLLOW_PKTS &&
	    eng->follow_cpu != eng->cpu && cpu_online(eng->follow_cpu) &&
	    (smp_processor_id() == eng->cpu || !cpu_online(eng->cpu)) &&
	    skb_queue_empty(&eng->txq) && eroce_rsp_queue_empty(&eng->resp)) {
		WRITE_ONCE(eng->cpu, eng->follow_cpu);
		eng->follow_pkts = 0;
		eroce_stat_inc(to_eroce_dev(qp->ibqp.device),
			       EROCE_CNT_QP_CPU_MOVES);
	}
	spin_unlock_bh(&eng->lock);
}

static void eroce_qp_work(struct work_struct *work)
{
	struct eroce_qp_engine *eng = container_of(to_delayed_work(work),
						   struct eroce_qp_engine, work);
	struct eroce_qp *qp = container_of(eng, struct eroce_qp, eng);

	eroce_qp_run(qp, true);
	eroce_qp_move(qp);
}

/*
 * Where a QP leaving RESET starts: on the CPU its send CQ's completion
 * vector names, vector v the v-th online CPU, as a RoCE NIC raises the
 * CQ's interrupts on the vector's CPU.  Vector 0, which every API passes
 * unless the application chose, leaves the choice to eroce: QPs spread
 * over the CPUs by number.
 */
static int eroce_qp_first_cpu(struct eroce_qp *qp)
{
	u32 vector = to_eroce_cq(qp->ibqp.send_cq)->comp_vector;

	return cpumask_local_spread(vector ? vector : qp->ibqp.qp_num,
				    NUMA_NO_NODE);
}

/**
 * eroce_qp_engine_init() - set up the transport state of a new QP
 * @qp: the QP; its SQ and RQ rings exist, @srq is its SRQ or NULL
 * @srq: the shared receive queue
 *
 * Return: 0 or -ENOMEM.
 */
int eroce_qp_engine_init(struct eroce_qp *qp, struct eroce_srq *srq)
{
	struct eroce_qp_engine *eng = &qp->eng;
	u32 rsp_size = roundup_pow_of_two(2 * EROCE_RSP_EXTRA);
	u32 slots = qp->sq.num_slots;
	struct eroce_rsp *rsp;

	spin_lock_init(&eng->lock);
	INIT_DELAYED_WORK(&eng->work, eroce_qp_work);
	__skb_queue_head_init(&eng->txq);
	eng->cpu = cpumask_local_spread(0, NUMA_NO_NODE);
	eng->follow_cpu = eng->cpu;
	hrtimer_init(&eng->req.timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	eng->req.timer.function = eroce_req_timer;
	eroce_rate_init(qp);

	if (dst_cache_init(&eng->route, GFP_KERNEL))
		return -ENOMEM;
	eng->req.swqe = kvcalloc(slots, sizeof(*eng->req.swqe), GFP_KERNEL);
	eng->req.copies = kvmalloc_array(slots, qp->sq.slot_size, GFP_KERNEL);
	eng->resp.rwqe_size = srq ? srq->ring.slot_size : qp->rq.slot_size;
	eng->resp.rwqe = kmalloc(eng->resp.rwqe_size, GFP_KERNEL);
	rsp = eroce_resp_room_alloc(rsp_size);
	if (rsp) {
		/* nothing runs on the QP yet: the lock is for the rule */
		spin_lock_bh(&eng->lock);
		eroce_resp_room_set(qp, rsp, rsp_size);
		spin_unlock_bh(&eng->lock);
	}
	if (!eng->req.swqe || !eng->req.copies || !eng->resp.rwqe ||
	    !eng->resp.rsp || eroce_should_fail(EROCE_FAULT_QP_STATE)) {
		eroce_qp_engine_free(qp);
		return -ENOMEM;
	}
	return 0;
}

ALLOW_ERROR_INJECTION(eroce_qp_engine_init, ERRNO);

void eroce_qp_engine_free(struct eroce_qp *qp)
{
	struct eroce_qp_engine *eng = &qp->eng;

	eroce_resp_free(qp);
	dst_cache_destroy(&eng->route);
	eng->route.cache = NULL;
	kvfree(eng->req.swqe);
	kvfree(eng->req.copies);
	kfree(eng->resp.rwqe);
	kfree(eng->resp.rsp);
	eng->req.swqe = NULL;
	eng->req.copies = NULL;
	eng->resp.rwqe = NULL;
	eng->resp.rsp = NULL;
	eng->resp.atomic = NULL;
}

/* the QP is unreachable (no lookups, no references): stop and free */
void eroce_qp_engine_fini(struct eroce_qp *qp)
{
	struct eroce_qp_engine *eng = &qp->eng;

	spin_lock_bh(&eng->lock);
	WRITE_ONCE(eng->dead, true);
	spin_unlock_bh(&eng->lock);

	/*
	 * The timers kick the work item after they dropped the lock, and
	 * a kick that read dead before it was set queues the work however
	 * late: stop the timers first, the work item last.  Nothing else
	 * kicks now: the receive path's lookups are drained, the poster's
	 * system call is over, and the work item's own requeue is refused
	 * while it is being cancelled.
	 */
	eroce_rate_fini(qp);
	hrtimer_cancel(&eng->req.timer);
	cancel_delayed_work_sync(&eng->work);
	WARN_ON_ONCE(delayed_work_pending(&eng->work));

	spin_lock_bh(&eng->lock);
	eroce_qp_tx_purge(qp);
	eroce_resp_reset(qp);
	spin_unlock_bh(&eng->lock);
	eroce_qp_engine_free(qp);
}

/* QP back to RESET: whatever is still queued is dropped without CQEs */
static void eroce_qp_discard(struct eroce_qp *qp)
{
	struct eroce_ring *rings[] = { &qp->sq, &qp->rq };
	unsigned long flags;
	int i;

	lockdep_assert_held(&qp->eng.lock);
	for (i = 0; i < ARRAY_SIZE(rings); i++) {
		if (!rings[i]->ctrl)
			continue;
		spin_lock_irqsave(&rings[i]->consumer_lock, flags);
		eroce_ring_consume_discard(rings[i]);
		spin_unlock_irqrestore(&rings[i]->consumer_lock, flags);
	}
}

/**
 * eroce_qp_engine_modify() - the engines follow a QP state change
 * @qp: the QP
 * @cur: the state before
 * @next: the state after, stored with the other attributes under this
 *	same hold of the engine lock
 * @rsp: a larger array of owed responses for a QP entering RTR, or NULL;
 *	on return *@rsp is what the caller frees
 * @rsp_size: its number of entries
 *
 * Every QP transition happens here, with the engines stopped: the caller
 * holds the engine lock, which every engine (requester, matching of
 * responses, responder, retransmit timer, work item, doorbell) takes
 * before it looks at the QP's state, its indices or its rings, so none
 * runs across a transition or sees half of one.
 * Context: process context (modify_qp), engine lock held.
 */
void eroce_qp_engine_modify(struct eroce_qp *qp, enum ib_qp_state cur,
			    enum ib_qp_state next, struct eroce_rsp **rsp,
			    u32 rsp_size)
{
	struct eroce_qp_engine *eng = &qp->eng;
	struct eroce_req *req = &eng->req;
	struct eroce_resp *resp = &eng->resp;

	lockdep_assert_held(&eng->lock);
	if (next == IB_QPS_ERR) {
		if (cur != IB_QPS_ERR) {
			eroce_qp_enter_err(qp);
			eroce_qp_flush_locked(qp);
		}
		return;
	}

	if (next == IB_QPS_RESET) {
		hrtimer_try_to_cancel(&req->timer);
		req->timer_armed = false;
		req->tlp_armed = false;
		eroce_qp_tx_purge(qp);
		eroce_resp_reset(qp);
		eroce_qp_discard(qp);
		eroce_req_resync(qp);
		eng->comm_est = false;
		eng->sqd_notify = false;
		return;
	}

	/* the CPU its send CQ's vector names; requests may move it */
	if (cur == IB_QPS_RESET) {
		WRITE_ONCE(eng->cpu, eroce_qp_first_cpu(qp));
		eng->follow_cpu = eng->cpu;
		eng->follow_pkts = 0;
	}

	if (next == IB_QPS_RTR && cur != IB_QPS_RTR) {
		/* room for every read the peer may have outstanding */
		eroce_resp_reset(qp);
		if (*rsp && rsp_size > resp->rsp_size) {
			struct eroce_rsp *old = resp->rsp;

			eroce_resp_room_set(qp, *rsp, rsp_size);
			*rsp = old;
		}
		resp->epsn = READ_ONCE(qp->attrs.rq_psn);
		resp->msn = 0;
		resp->nak_sent = false;
		eng->comm_est = false;
	}
	if (next == IB_QPS_RTS && cur != IB_QPS_RTS && cur != IB_QPS_SQD) {
		req->psn = READ_ONCE(qp->attrs.sq_psn);
		req->una_psn = req->psn;
		req->max_psn = req->psn;
		req->retry_left = READ_ONCE(qp->attrs.retry_cnt);
		req->rnr_retry_left = READ_ONCE(qp->attrs.rnr_retry);
		req->since_ackreq = 0;
		req->rtt_timing = false;
		req->srtt_ns = 0;
		req->rttvar_ns = 0;
		req->tlp_armed = false;
		req->tlp_sent = false;
		req->sr_hole_open = false;
		req->cwnd = 0;
		eroce_rate_reset(qp);
	}
	if (next == IB_QPS_SQD && cur != IB_QPS_SQD) {
		eng->sqd_notify = READ_ONCE(qp->attrs.en_sqd_async_notify);
		eroce_req_check_drained(qp);
	}
	if (next != IB_QPS_SQD)
		eng->sqd_notify = false;
}
