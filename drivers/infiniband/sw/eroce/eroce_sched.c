// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_sched.c - where and when a QP's work item runs.
 *
 * Owns the eroce workqueue and the kicks that queue a QP's work item on
 * it, on the CPU its QP number picked (qp->eng.cpu, which eroce_task.c
 * sets when the QP leaves RESET).  The work function, which runs the
 * engines, is eroce_task.c's: the engines kick the work item through
 * here and never call the file that runs them.
 *
 * Context: eroce_wq_init/exit at module init and exit; the kicks from any
 * context.  No locks: a kick reads qp->eng.dead and qp->eng.cpu without
 * the engine lock (eroce_qp_engine_fini() orders the last kicks against
 * the cancel of the work item).
 */
#include <linux/workqueue.h>

#include "eroce.h"
#include "eroce_fault.h"

static struct workqueue_struct *eroce_wq;

int eroce_wq_init(void)
{
	/*
	 * Per CPU, not WQ_UNBOUND: a QP's work item is queued on the CPU
	 * its QP number picked (qp->eng.cpu) and runs there while that CPU
	 * is online, so what the work item sends leaves from one CPU, and a
	 * veth, which queues what it is handed per CPU, keeps it in order.
	 * The QP sends from other CPUs too: the doorbell from the poster's,
	 * the receive softirq (ACKs, NAKs, atomic and the first read
	 * responses, CNPs, a read's re-request) and the retransmit timer
	 * (a read's re-request) from theirs.  The engine lock hands the
	 * packets to the stack in the order the engines make them; past
	 * that, packets handed over on two CPUs may overtake each other,
	 * and the transport recovers as from reordering on the wire.
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
