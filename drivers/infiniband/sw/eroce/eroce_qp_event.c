// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_qp_event.c - QP asynchronous events, and the move to ERR that a
 * QP's engines make.
 *
 * The one place QP events leave the driver (eroce_qp_event()), the events
 * the engines owe (COMM_EST on the first packet in RTR, SQ_DRAINED once
 * an SQD drain is over), and the engines' error primitives: the state
 * alone becomes ERR (eroce_qp_mark_err()), or the QP cannot go on
 * (eroce_qp_fatal()), which also stops the engines, through the function
 * eroce_task.c registers at module init, and kicks the work item, which
 * flushes the rings.  The engines call this file; it calls none of them.
 *
 * Context: the engine lock held (eroce_qp_event() in any context).
 * Locks: qp->state_lock (interrupts off), inside qp->eng.lock, around
 * the write of the state.
 */
#include <linux/init.h>

#include "eroce.h"

/*
 * What stops the engines as a QP enters ERR (eroce_task.c's
 * eroce_qp_enter_err(): the requester's fetched entries and the
 * responder's receive WQE are flushed, its owed responses dropped).
 * Registered at module init, before any QP exists, so that this file,
 * which the engines call, calls none of them.
 */
static void (*eroce_qp_enter_err_fn)(struct eroce_qp *qp) __ro_after_init;

void __init eroce_qp_err_register(void (*enter_err)(struct eroce_qp *qp))
{
	eroce_qp_enter_err_fn = enter_err;
}

/**
 * eroce_qp_event() - raise an asynchronous event of the QP
 * @qp: the QP
 * @type: IB_EVENT_QP_FATAL, IB_EVENT_COMM_EST, ...
 *
 * The one place QP events leave the driver.  Context: any, the engine
 * lock held where the event marks a transition of the engines; the
 * handlers (uverbs' queue, kernel consumers') do not sleep and do not
 * re-enter the QP.
 */
void eroce_qp_event(struct eroce_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/**
 * eroce_qp_mark_err() - the QP's state becomes ERR
 * @qp: the QP
 *
 * The state alone, as ibv_query_qp() reads it: an engine that fails an
 * entry marks the QP before the entry's error completion can be seen,
 * then calls eroce_qp_fatal() (eroce_req_fail_tail()).
 * Context: engine lock held.
 * Return: true when the QP was not in ERR before.
 */
bool eroce_qp_mark_err(struct eroce_qp *qp)
{
	unsigned long flags;
	bool changed;

	lockdep_assert_held(&qp->eng.lock);
	spin_lock_irqsave(&qp->state_lock, flags);
	changed = qp->attrs.state != IB_QPS_ERR;
	WRITE_ONCE(qp->attrs.state, IB_QPS_ERR);
	spin_unlock_irqrestore(&qp->state_lock, flags);
	return changed;
}

/**
 * eroce_qp_fatal() - an engine hit an error the QP cannot survive
 * @qp: the QP
 * @event: the asynchronous event that reports it, or 0 when the failed
 *	entry's completion does (a NAK or retry error of the requester)
 *
 * The QP moves to ERR (the event is raised only by the move); what the
 * requester fetched is flushed, and the work item flushes what is left
 * in the rings.  On a QP already in ERR that flush is a repeat, and
 * harmless.  Context: engine lock held.
 */
void eroce_qp_fatal(struct eroce_qp *qp, enum ib_event_type event)
{
	lockdep_assert_held(&qp->eng.lock);
	if (eroce_qp_mark_err(qp) && event)
		eroce_qp_event(qp, event);
	eroce_qp_enter_err_fn(qp);
	eroce_qp_kick(qp);
}

/**
 * eroce_req_check_drained() - raise SQ_DRAINED once the SQD drain is over
 * @qp: the QP
 *
 * In SQD the requester starts no new entry; once every entry it started
 * has completed, and the transition to SQD asked for it, the consumer
 * hears IB_EVENT_SQ_DRAINED (once per transition).  Context: engine lock
 * held.
 */
void eroce_req_check_drained(struct eroce_qp *qp)
{
	struct eroce_qp_engine *eng = &qp->eng;

	lockdep_assert_held(&eng->lock);
	if (!eng->sqd_notify || eroce_qp_state(qp) != IB_QPS_SQD ||
	    qp->sq.consumer != eng->req.head)
		return;
	eng->sqd_notify = false;
	eroce_qp_event(qp, IB_EVENT_SQ_DRAINED);
}

/*
 * A packet for the QP arrived: on a connected QP (RC, UC) the first one
 * in RTR establishes the connection (IB_EVENT_COMM_EST); a datagram QP
 * has none to establish.  Context: engine lock held.
 */
void eroce_qp_rcvd(struct eroce_qp *qp)
{
	struct eroce_qp_engine *eng = &qp->eng;

	lockdep_assert_held(&eng->lock);
	if (eng->comm_est || eroce_qp_state(qp) != IB_QPS_RTR ||
	    (qp->ibqp.qp_type != IB_QPT_RC && qp->ibqp.qp_type != IB_QPT_UC))
		return;
	eng->comm_est = true;
	eroce_qp_event(qp, IB_EVENT_COMM_EST);
}
