// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_sched.c - where and when a QP's work item runs, and where its
 * packets leave from.
 *
 * Owns the eroce workqueue and the kicks that queue a QP's work item on
 * it, on the QP's CPU (qp->eng.cpu: its send CQ's completion vector's,
 * or by QP number for vector 0, when the QP leaves RESET; moved by
 * eroce_task.c after its peer's requests).  The work function, which
 * runs the engines, is eroce_task.c's: the engines kick the work item
 * through here and never call the file that runs them.
 *
 * Owns the QP's transmit context too: its responses (ACKs, NAKs, read
 * and atomic responses), its retransmissions and its CNPs are handed to
 * the stack on the QP's CPU (eroce_qp_send_batch()), by the work item or
 * by whatever else runs there (the receive softirq, a timer); one made
 * on another CPU waits in the QP's txq for the work item, and every
 * response after it waits behind it.  A veth queues what it is handed
 * per CPU and a NIC picks its transmit queue by CPU (XPS): responses
 * handed over on two CPUs could overtake each other, which IBA forbids.
 * The requests of a user doorbell leave from the poster's CPU: no
 * response has to stay behind them.  The QP's CPU follows the CPU its
 * peer's requests arrive on (eroce_qp_tx_follow()), so that the receive
 * softirq answers them without waking the work item.
 *
 * Context: eroce_wq_init/exit at module init and exit; the kicks from any
 * context; the transmit context's functions under the QP's engine lock,
 * which guards the txq.  A kick reads qp->eng.dead and qp->eng.cpu
 * without the engine lock (eroce_qp_engine_fini() orders the last kicks
 * against the cancel of the work item).
 */
#include <linux/workqueue.h>

#include "eroce.h"
#include "eroce_fault.h"
#include "eroce_xmit.h"

static struct workqueue_struct *eroce_wq;

int eroce_wq_init(void)
{
	/*
	 * Per CPU, not WQ_UNBOUND: a QP's work item is queued on the QP's
	 * CPU (qp->eng.cpu) and runs there while that CPU is online, and
	 * that CPU is the QP's transmit context.  When it goes offline the
	 * work item runs elsewhere and stays the transmit context
	 * (EROCE_RUN_WORK); nothing else runs on an offline CPU.
	 */
	eroce_wq = alloc_workqueue("eroce", WQ_MEM_RECLAIM, 0);
	return eroce_wq ? 0 : -ENOMEM;
}

void eroce_wq_exit(void)
{
	destroy_workqueue(eroce_wq);
}

/* let the QP's work item run (again) now; any context */
void eroce_qp_kick(struct eroce_qp *qp)
{
	if (READ_ONCE(qp->eng.dead))
		return;
	eroce_fault_delay(EROCE_FAULT_KICK_DELAY);
	mod_delayed_work_on(READ_ONCE(qp->eng.cpu), eroce_wq, &qp->eng.work, 0);
}

/*
 * Run the work item a jiffy from now, unless it is due earlier: the stack
 * dropped a packet (a full queue on the way out), let it drain first.
 */
void eroce_qp_kick_later(struct eroce_qp *qp)
{
	if (!READ_ONCE(qp->eng.dead))
		queue_delayed_work_on(READ_ONCE(qp->eng.cpu), eroce_wq,
				      &qp->eng.work, 1);
}

/* what a packet waiting in a QP's txq remembers: the end of its batch */
struct eroce_txq_cb {
	bool batch_end;
};

static struct eroce_txq_cb *eroce_txq_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct eroce_txq_cb) > sizeof(skb->cb));
	return (struct eroce_txq_cb *)skb->cb;
}

/**
 * eroce_qp_tx_here() - may the caller hand the QP's packets to the stack?
 * @qp: the QP
 *
 * Yes in the work item, wherever it runs, and anywhere else on the QP's
 * CPU (the engine lock, taken with bottom halves off, keeps the caller
 * there).  Context: the QP's engine lock held.
 */
bool eroce_qp_tx_here(struct eroce_qp *qp)
{
	struct eroce_qp_engine *eng = &qp->eng;

	lockdep_assert_held(&eng->lock);
	return smp_processor_id() == eng->cpu ||
	       (eng->runner == EROCE_RUN_WORK && !cpu_online(eng->cpu));
}

/**
 * eroce_qp_work_misplaced() - does the work item run away from its CPU?
 * @qp: the QP; called from its work item
 *
 * It does after the QP's CPU moved while it was queued or running: a
 * work item queued while it runs is queued where it runs.  It is then
 * queued again for a jiffy later, which lets it start on the QP's CPU.
 * Context: the work item, the QP's engine lock held.
 */
bool eroce_qp_work_misplaced(struct eroce_qp *qp)
{
	lockdep_assert_held(&qp->eng.lock);
	if (eroce_qp_tx_here(qp))
		return false;
	eroce_qp_kick_later(qp);
	return true;
}

/**
 * eroce_qp_tx_follow() - a request of the QP's peer arrived on this CPU
 * @qp: an RC QP
 *
 * The QP's CPU should be the one its peer's requests arrive on: its
 * responses leave from there without waking the work item.  After
 * EROCE_FOLLOW_PKTS requests in a row arrived on another CPU, the work
 * item is asked to move there (eroce_qp_move(), which checks that
 * nothing is on its way from the old CPU).
 * Context: receive softirq, the QP's engine lock held.
 */
void eroce_qp_tx_follow(struct eroce_qp *qp)
{
	struct eroce_qp_engine *eng = &qp->eng;
	int cpu = smp_processor_id();

	lockdep_assert_held(&eng->lock);
	if (cpu == eng->cpu) {
		eng->follow_pkts = 0;
		return;
	}
	if (cpu != eng->follow_cpu) {
		eng->follow_cpu = cpu;
		eng->follow_pkts = 0;
	}
	/* one kick: the work item tries the move after every run anyway */
	if (eng->follow_pkts < EROCE_FOLLOW_PKTS &&
	    ++eng->follow_pkts == EROCE_FOLLOW_PKTS)
		eroce_qp_kick(qp);
}

/**
 * eroce_qp_tx_drain() - send what waits for the QP's transmit context
 * @qp: the QP; the caller is in its transmit context
 *
 * The packets leave in the batches they were made in.
 * Context: the QP's engine lock held.
 * Return: 0 when nothing waits any longer; -ENOBUFS when a full queue on
 * the way out dropped a batch (lost, as on the wire: the transport sends
 * it again): the rest waits for the work item, a jiffy later.
 */
int eroce_qp_tx_drain(struct eroce_qp *qp)
{
	struct eroce_qp_engine *eng = &qp->eng;
	struct eroce_tx_batch b;
	struct sk_buff *skb;

	lockdep_assert_held(&eng->lock);
	/* cut into batches when they were made: no size limit applies */
	eroce_tx_batch_init(&b, 4 * EROCE_TX_BATCH_PKTS);
	while ((skb = __skb_dequeue(&eng->txq))) {
		bool end = eroce_txq_cb(skb)->batch_end;

		memset(skb->cb, 0, sizeof(skb->cb));
		eroce_tx_batch_add(&b, skb);
		if (end && eroce_qp_xmit_batch(qp, &b) == -ENOBUFS) {
			eroce_qp_kick_later(qp);
			return -ENOBUFS;
		}
	}
	return 0;
}

/**
 * eroce_qp_tx_purge() - drop what waits for the QP's transmit context
 * @qp: a QP going back to RESET or destroyed
 *
 * Context: the QP's engine lock held.
 */
void eroce_qp_tx_purge(struct eroce_qp *qp)
{
	lockdep_assert_held(&qp->eng.lock);
	__skb_queue_purge(&qp->eng.txq);
}

/* @b's packets are dropped on the way out: counted, consumed */
static int eroce_qp_tx_drop(struct eroce_qp *qp, struct eroce_tx_batch *b)
{
	eroce_stat_add(to_eroce_dev(qp->ibqp.device), EROCE_CNT_TX_ERRORS,
		       eroce_tx_batch_count(b));
	__skb_queue_purge(&b->pkts);
	return -ENOBUFS;
}

/**
 * eroce_qp_send_batch() - send a batch of a connected QP's packets
 * @qp: an RC or UC QP with its address vector set
 * @b: the batch, empty afterwards
 *
 * In the QP's transmit context the packets that wait go first, then @b.
 * The requests of a doorbell leave from the poster's CPU: the request
 * stream moves to another CPU only there, and no response has to stay
 * behind a request.  Elsewhere @b waits behind the packets that wait
 * for the work item, which is kicked.  At most EROCE_TXQ_MAX packets
 * wait (twice that for a single packet): past that @b is dropped as a
 * full queue on the way out would drop it.
 * Context: the QP's engine lock held.
 * Return: as eroce_qp_xmit_batch(); 0 when @b waits.
 */
int eroce_qp_send_batch(struct eroce_qp *qp, struct eroce_tx_batch *b)
{
	struct eroce_qp_engine *eng = &qp->eng;
	u32 n = eroce_tx_batch_count(b);
	u32 limit = n == 1 ? 2 * EROCE_TXQ_MAX : EROCE_TXQ_MAX;
	struct sk_buff *skb;

	lockdep_assert_held(&eng->lock);
	if (!n)
		return 0;
	if (eroce_qp_tx_here(qp)) {
		if (eroce_qp_tx_drain(qp))
			return eroce_qp_tx_drop(qp, b);
		return eroce_qp_xmit_batch(qp, b);
	}
	if (eng->runner == EROCE_RUN_DOORBELL)
		return eroce_qp_xmit_batch(qp, b);
	if (skb_queue_len(&eng->txq) + n > limit)
		return eroce_qp_tx_drop(qp, b);

	skb_queue_walk(&b->pkts, skb)
		eroce_txq_cb(skb)->batch_end = skb_queue_is_last(&b->pkts, skb);
	skb_queue_splice_tail_init(&b->pkts, &eng->txq);
	b->seg_len = 0;
	b->len = 0;
	eroce_stat_add(to_eroce_dev(qp->ibqp.device), EROCE_CNT_TX_DEFERRED, n);
	eroce_qp_kick(qp);
	return 0;
}

/**
 * eroce_qp_send() - send one of a connected QP's packets
 * @qp: an RC or UC QP with its address vector set
 * @skb: a packet from eroce_pkt_alloc(), consumed in every case
 *
 * As eroce_qp_send_batch() for a batch of one.
 * Context: the QP's engine lock held.
 */
int eroce_qp_send(struct eroce_qp *qp, struct sk_buff *skb)
{
	struct eroce_tx_batch b;

	eroce_tx_batch_init(&b, 1);
	eroce_tx_batch_add(&b, skb);
	return eroce_qp_send_batch(qp, &b);
}
