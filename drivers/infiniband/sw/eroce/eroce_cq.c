// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce: completion queues.
 *
 * create/destroy/resize run in process context; eroce_cq_post, poll_cq
 * and req_notify_cq run in any context.  Locks: the ring's producer_lock
 * serialises eroce_cq_post (and guards cq->overflowed and, against it,
 * the ring's buffer, which resize replaces), its consumer_lock serialises
 * poll_cq of kernel CQs; resize takes both, consumer_lock first.  The arm
 * bits in ctrl.flags are changed with atomic read-modify-writes only (a
 * kernel consumer does not arm a CQ it is resizing, as the verbs require);
 * comp_handler and the event
 * handler are called without the CQ's locks (the engines may hold their
 * QP's engine lock: a comp_handler must not re-enter that QP's engine
 * synchronously, and ib_core's handlers only schedule work).
 */
#include <linux/log2.h>

#include "eroce.h"

#define EROCE_CQ_ARM_BITS	(EROCE_CQ_ARM_NEXT | EROCE_CQ_ARM_SOLICITED)

int eroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata)
{
	struct eroce_res *res = &to_eroce_dev(ibcq->device)->res;
	struct eroce_cq *cq = to_eroce_cq(ibcq);
	struct eroce_create_cq_resp resp = {};
	u32 num_slots;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > EROCE_MAX_CQE ||
	    attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	err = eroce_res_count_get(&res->num_cq, EROCE_MAX_CQ);
	if (err)
		return err;

	cq->user = !!udata;
	cq->comp_vector = attr->comp_vector;
	num_slots = roundup_pow_of_two(attr->cqe);
	err = eroce_ring_init(&cq->ring, num_slots, sizeof(struct eroce_cqe),
			      cq->user);
	if (err)
		goto err_uncount;

	if (udata) {
		err = eroce_ring_publish_resp(&cq->ring, udata, &resp.cq,
					      &resp, sizeof(resp));
		if (err)
			goto err_free_ring;
	}

	ibcq->cqe = num_slots;
	return 0;

err_free_ring:
	eroce_ring_free(&cq->ring);
err_uncount:
	atomic_dec(&res->num_cq);
	return err;
}

/**
 * eroce_resize_cq() - give a CQ a ring of another size
 * @ibcq: the CQ
 * @cqe: the completions it must hold, rounded up to a power of two
 * @udata: for a user CQ, where the new ring's description goes
 *
 * The completions not yet consumed move to the new ring, in order; the
 * engines produce into the new ring from then on, and none is lost.  A
 * user CQ's provider holds its CQ lock through the call and maps the new
 * ring afterwards.
 * Context: process context.
 * Return: 0; -EINVAL for a size out of range or below the completions
 * outstanding (the CQ is unchanged); -ENOMEM.
 */
int eroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct eroce_cq *cq = to_eroce_cq(ibcq);
	struct eroce_resize_cq_resp resp = {};
	struct eroce_ring *ring = &cq->ring;
	struct eroce_ring new_ring;
	unsigned long flags;
	u32 num_slots;
	int err;

	if (cqe < 1 || cqe > EROCE_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	num_slots = roundup_pow_of_two(cqe);
	err = eroce_ring_init(&new_ring, num_slots, sizeof(struct eroce_cqe),
			      cq->user);
	if (err)
		return err;
	if (udata) {
		struct eroce_ucontext *uctx =
			rdma_udata_to_drv_context(udata, struct eroce_ucontext,
						  ibuc);

		err = eroce_ring_publish(&new_ring, &uctx->ibuc, &resp.cq);
		if (err)
			goto out_free_ring;
	}

	spin_lock_irqsave(&ring->consumer_lock, flags);
	spin_lock(&ring->producer_lock);
	err = eroce_ring_replace(ring, &new_ring);
	spin_unlock(&ring->producer_lock);
	spin_unlock_irqrestore(&ring->consumer_lock, flags);
	if (err)
		goto out_free_ring;
	ibcq->cqe = num_slots;

	/*
	 * The new ring is in use: an error copying its description leaves
	 * the CQ resized, and the provider, which gets the error, unable to
	 * see it (as after any failed create).
	 */
	if (udata)
		err = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
out_free_ring:
	/* the ring not in use: the new one on error, else the old one */
	eroce_ring_free(&new_ring);
	return err;
}

/* ib_core destroys a CQ only when no QP or SRQ refers to it */
int eroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct eroce_res *res = &to_eroce_dev(ibcq->device)->res;
	struct eroce_cq *cq = to_eroce_cq(ibcq);

	eroce_ring_free(&cq->ring);
	atomic_dec(&res->num_cq);
	return 0;
}

/*
 * A full CQ loses the CQE: the CQ is marked EROCE_CQ_OVERFLOW and its owner
 * gets IB_EVENT_CQ_ERR, once.
 */
static void eroce_cq_overflow(struct eroce_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/* does this CQE satisfy an arm of @flags? */
static bool eroce_cq_arm_due(u32 flags, bool solicited)
{
	return (flags & EROCE_CQ_ARM_NEXT) ||
	       (solicited && (flags & EROCE_CQ_ARM_SOLICITED));
}

/*
 * Consume the arm bits this CQE satisfies; true if an event is due.  The
 * word is userspace's too: eroce_ring_flags_update() bounds the exchange.
 */
static bool eroce_cq_disarm(struct eroce_cq *cq, bool solicited)
{
	u32 *flags = &cq->ring.ctrl->flags;

	lockdep_assert_held(&cq->ring.producer_lock);
	if (!eroce_cq_arm_due(READ_ONCE(*flags), solicited))
		return false;
	return eroce_cq_arm_due(eroce_ring_flags_update(flags, 0,
							EROCE_CQ_ARM_BITS),
				solicited);
}

/*
 * Produce @cqe on @cq and raise a completion event if the CQ is armed for
 * it.  Returns 0, or -EOVERFLOW when the CQ was full and the CQE is lost.
 * Any context; takes the CQ's producer_lock.
 */
int eroce_cq_post(struct eroce_cq *cq, const struct eroce_cqe *cqe,
		  bool solicited)
{
	struct eroce_ring *ring = &cq->ring;
	bool first = false, notify = false;
	unsigned long flags;
	void *slot;

	/* the ring's buffer, flags included, is stable under the lock */
	spin_lock_irqsave(&ring->producer_lock, flags);
	slot = eroce_ring_produce_slot(ring);
	if (slot) {
		memcpy(slot, cqe, sizeof(*cqe));
		eroce_ring_produce_commit(ring);
		/*
		 * The CQE is visible before the arm bits are read (ABI).
		 * A CQ armed for solicited completions also hears of every
		 * unsuccessful one (IBA 11.4.2.2).
		 */
		smp_mb();
		notify = eroce_cq_disarm(cq, solicited ||
					 cqe->status != IB_WC_SUCCESS);
	} else {
		first = !cq->overflowed;
		cq->overflowed = true;
		eroce_ring_flags_set(ring, EROCE_CQ_OVERFLOW);
	}
	spin_unlock_irqrestore(&ring->producer_lock, flags);

	if (!slot) {
		if (first)
			eroce_cq_overflow(cq);
		return -EOVERFLOW;
	}
	if (notify && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return 0;
}

static u8 eroce_wc_flags_from_cqe(u8 cqe_flags)
{
	u8 flags = 0;

	if (cqe_flags & EROCE_WC_GRH)
		flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
	if (cqe_flags & EROCE_WC_WITH_IMM)
		flags |= IB_WC_WITH_IMM;
	if (cqe_flags & EROCE_WC_WITH_INV)
		flags |= IB_WC_WITH_INVALIDATE;
	return flags;
}

static void eroce_cqe_to_wc(struct eroce_res *res,
			    const struct eroce_cqe *cqe, struct ib_wc *wc)
{
	struct eroce_qp_handle *h;

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->byte_len = cqe->byte_len;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = eroce_wc_flags_from_cqe(cqe->wc_flags);
	/* which IP header stands in for the GRH (ib_init_ah_attr_from_wc) */
	if (cqe->wc_flags & EROCE_WC_GRH)
		wc->network_hdr_type = cqe->wc_flags & EROCE_WC_IPV4 ?
				       RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
	if (cqe->wc_flags & EROCE_WC_WITH_IMM)
		wc->ex.imm_data = (__force __be32)cqe->ex;
	else if (cqe->wc_flags & EROCE_WC_WITH_INV)
		wc->ex.invalidate_rkey = cqe->ex;
	wc->pkey_index = cqe->pkey_index;
	if (cqe->wc_flags & EROCE_WC_WITH_VLAN) {
		/* ib_init_ah_attr_from_wc() picks the reply's VLAN GID */
		wc->wc_flags |= IB_WC_WITH_VLAN;
		wc->vlan_id = cqe->slid;
	} else {
		wc->slid = cqe->slid;
	}
	wc->sl = cqe->sl;
	wc->port_num = 1;

	/* a QP that produced completions left RESET and is published */
	rcu_read_lock();
	h = xa_load(&res->qp_xa, cqe->qp_num);
	wc->qp = h ? &h->qp->ibqp : NULL;
	rcu_read_unlock();
}

/* kernel CQs only: userspace polls its ring itself */
int eroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct eroce_res *res = &to_eroce_dev(ibcq->device)->res;
	struct eroce_cq *cq = to_eroce_cq(ibcq);
	struct eroce_ring *ring = &cq->ring;
	struct eroce_cqe cqe;
	unsigned long flags;
	int n;

	if (cq->user)
		return -EINVAL;

	spin_lock_irqsave(&ring->consumer_lock, flags);
	for (n = 0; n < num_entries; n++) {
		if (eroce_ring_consume_copy(ring, &cqe, sizeof(cqe)))
			break;
		eroce_ring_consume_commit(ring);
		eroce_cqe_to_wc(res, &cqe, &wc[n]);
	}
	spin_unlock_irqrestore(&ring->consumer_lock, flags);
	return n;
}

int eroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct eroce_cq *cq = to_eroce_cq(ibcq);
	u32 bits;

	if ((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED)
		bits = EROCE_CQ_ARM_SOLICITED;
	else
		bits = EROCE_CQ_ARM_NEXT;

	eroce_ring_flags_set(&cq->ring, bits);
	/* armed before the ring is looked at (ABI) */
	smp_mb();

	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    eroce_ring_pending(&cq->ring))
		return 1;
	return 0;
}
