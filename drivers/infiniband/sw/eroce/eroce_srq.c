// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce: shared receive queues.
 *
 * create/modify/query/destroy run in process context; post_srq_recv and
 * eroce_srq_check_limit run in any context.  Locks: the ring's
 * producer_lock serialises kernel posting; its consumer_lock serialises the
 * engines' consuming and guards the armed limit.
 */
#include <linux/log2.h>

#include "eroce.h"

/*
 * Fill an RQ/SRQ slot with room for @max_sge SGEs from @wr.  The slot is
 * kernel memory (kernel rings only).
 */
static int eroce_recv_wqe_build(void *slot, u32 max_sge,
				const struct ib_recv_wr *wr)
{
	struct eroce_recv_wqe *wqe = slot;
	struct eroce_sge *sge = slot + sizeof(*wqe);
	u64 total = 0;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > max_sge)
		return -EINVAL;

	for (i = 0; i < wr->num_sge; i++) {
		total += wr->sg_list[i].length;
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	if (!eroce_msg_len_ok(total))
		return -EINVAL;

	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	wqe->reserved = 0;
	return 0;
}

/**
 * eroce_ring_post_recv() - post kernel receive work requests to a ring
 * @ring: a kernel RQ or SRQ
 * @max_sge: SGEs a slot holds
 * @wr: the chain of work requests
 * @bad_wr: set to the first one not posted, on error
 *
 * Context: any; takes the ring's producer_lock.
 * Return: 0, -ENOMEM when the ring is full, -EINVAL for a bad request.
 */
int eroce_ring_post_recv(struct eroce_ring *ring, u32 max_sge,
			 const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr)
{
	unsigned long flags;
	void *slot;
	int err = 0;

	spin_lock_irqsave(&ring->producer_lock, flags);
	for (; wr; wr = wr->next) {
		slot = eroce_ring_produce_slot(ring);
		if (!slot) {
			err = -ENOMEM;
			break;
		}
		err = eroce_recv_wqe_build(slot, max_sge, wr);
		if (err)
			break;
		eroce_ring_produce_commit(ring);
	}
	spin_unlock_irqrestore(&ring->producer_lock, flags);

	if (err)
		*bad_wr = wr;
	return err;
}

int eroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct eroce_res *res = &to_eroce_dev(ibsrq->device)->res;
	struct eroce_srq *srq = to_eroce_srq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	struct eroce_create_srq_resp resp = {};
	u32 num_slots, slot_size;
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!attr->max_wr || attr->max_wr > EROCE_MAX_SRQ_WR ||
	    attr->max_sge > EROCE_MAX_SRQ_SGE || attr->srq_limit > attr->max_wr)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	err = eroce_res_count_get(&res->num_srq, EROCE_MAX_SRQ);
	if (err)
		return err;

	srq->user = !!udata;
	num_slots = roundup_pow_of_two(attr->max_wr);
	slot_size = roundup_pow_of_two(sizeof(struct eroce_recv_wqe) +
				       attr->max_sge * sizeof(struct eroce_sge));
	err = eroce_ring_init(&srq->ring, num_slots, slot_size, srq->user);
	if (err)
		goto err_uncount;

	srq->max_sge = min_t(u32, (slot_size - sizeof(struct eroce_recv_wqe)) /
				  sizeof(struct eroce_sge), EROCE_MAX_SRQ_SGE);
	srq->limit = attr->srq_limit;

	if (udata) {
		err = eroce_ring_publish_resp(&srq->ring, udata, &resp.srq,
					      &resp, sizeof(resp));
		if (err)
			goto err_free_ring;
	}

	attr->max_wr = num_slots;
	attr->max_sge = srq->max_sge;
	return 0;

err_free_ring:
	eroce_ring_free(&srq->ring);
err_uncount:
	atomic_dec(&res->num_srq);
	return err;
}

int eroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct eroce_srq *srq = to_eroce_srq(ibsrq);
	unsigned long flags;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;

	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->ring.num_slots)
			return -EINVAL;

		spin_lock_irqsave(&srq->ring.consumer_lock, flags);
		WRITE_ONCE(srq->limit, attr->srq_limit);
		spin_unlock_irqrestore(&srq->ring.consumer_lock, flags);
	}
	return 0;
}

int eroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct eroce_srq *srq = to_eroce_srq(ibsrq);

	attr->max_wr = srq->ring.num_slots;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

/* ib_core destroys an SRQ only when no QP uses it */
int eroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct eroce_res *res = &to_eroce_dev(ibsrq->device)->res;
	struct eroce_srq *srq = to_eroce_srq(ibsrq);

	eroce_ring_free(&srq->ring);
	atomic_dec(&res->num_srq);
	return 0;
}

int eroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct eroce_srq *srq = to_eroce_srq(ibsrq);

	/* a user SRQ's producer index belongs to userspace */
	if (srq->user) {
		*bad_wr = wr;
		return -EINVAL;
	}
	return eroce_ring_post_recv(&srq->ring, srq->max_sge, wr, bad_wr);
}

/*
 * After consuming a WQE: if fewer WQEs than the armed limit remain, disarm
 * and raise IB_EVENT_SRQ_LIMIT_REACHED.  Caller holds ring.consumer_lock.
 */
void eroce_srq_check_limit(struct eroce_srq *srq)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	lockdep_assert_held(&srq->ring.consumer_lock);

	if (!srq->limit || eroce_ring_pending(&srq->ring) >= srq->limit)
		return;

	WRITE_ONCE(srq->limit, 0);
	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}
