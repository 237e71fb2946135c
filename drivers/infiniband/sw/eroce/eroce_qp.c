// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce: queue pairs (RC, UC, UD, and the GSI QP ib_mad creates), their state
 * machine and attributes, kernel posting.  The engines' side of a
 * transition and the flush of a QP in ERR are eroce_task.c's.
 *
 * create/modify/query/destroy run in process context; post_send and
 * post_recv run in any context.
 * Locks: modify_qp changes the attributes with both qp->eng.lock (which
 * stops the engines, eroce_qp_engine_modify()) and qp->state_lock
 * (interrupts off) held, so the engines read them under the one and
 * query_qp under the other; the SQ/RQ producer_lock serialises kernel
 * posting, the consumer_lock the flush and the engines' consumption, both
 * inside qp->eng.lock where the engines take them.  QPNs come from
 * eroce_res.qp_xa (its xa_lock), which holds each published QP's handle;
 * lookups (eroce_lookup.c) run under RCU and take a reference in the
 * handle, which is freed a grace period after the QP (struct
 * eroce_qp_handle).
 */
#include <linux/log2.h>

#include "eroce.h"
#include "eroce_opcode.h"
#include "eroce_xmit.h"

#define EROCE_SEND_FLAGS_SUPPORTED					\
	(IB_SEND_FENCE | IB_SEND_SIGNALED | IB_SEND_SOLICITED | IB_SEND_INLINE)

#define EROCE_QP_ACCESS_SUPPORTED					\
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |		\
	 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

/* the opcode table spells the kernel-only fast registration itself */
static_assert(IB_WR_REG_MR == EROCE_WR_REG_MR);
static_assert(IB_WC_REG_MR == EROCE_WC_REG_MR);

/* IBA 5-bit fields: local ACK timeout, min RNR NAK timer */
#define EROCE_QP_TIMER_MAX	31
#define EROCE_QP_RETRY_MAX	7

static int eroce_qp_check_init(const struct ib_qp_init_attr *init,
			       struct ib_udata *udata)
{
	const struct ib_qp_cap *cap = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (udata || init->port_num != 1)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}

	if (init->create_flags)
		return -EOPNOTSUPP;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	if (init->srq && init->srq->srq_type != IB_SRQT_BASIC)
		return -EINVAL;

	if (cap->max_send_wr > EROCE_MAX_QP_WR ||
	    cap->max_send_sge > EROCE_MAX_SGE ||
	    cap->max_inline_data > EROCE_MAX_INLINE_DATA)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > EROCE_MAX_QP_WR ||
			   cap->max_recv_sge > EROCE_MAX_SGE))
		return -EINVAL;
	return 0;
}

static int eroce_qp_init_sq(struct eroce_qp *qp, struct ib_qp_cap *cap)
{
	u32 hdr = sizeof(struct eroce_send_wqe);
	u32 num_slots, slot_size;
	int err;

	num_slots = roundup_pow_of_two(max(cap->max_send_wr, 1U));
	slot_size = roundup_pow_of_two(hdr +
			max_t(u32, cap->max_send_sge * sizeof(struct eroce_sge),
			      cap->max_inline_data));
	err = eroce_ring_init(&qp->sq, num_slots, slot_size, qp->user);
	if (err)
		return err;

	/* nothing drains the SQ on its own yet: always ring */
	qp->sq.ctrl->flags = EROCE_RING_NEED_DOORBELL;

	qp->sq_max_sge = min_t(u32, (slot_size - hdr) / sizeof(struct eroce_sge),
			       EROCE_MAX_SGE);
	qp->sq_max_inline = min_t(u32, slot_size - hdr, EROCE_MAX_INLINE_DATA);
	cap->max_send_wr = num_slots;
	cap->max_send_sge = qp->sq_max_sge;
	cap->max_inline_data = qp->sq_max_inline;
	return 0;
}

static int eroce_qp_init_rq(struct eroce_qp *qp, struct ib_qp_cap *cap)
{
	u32 hdr = sizeof(struct eroce_recv_wqe);
	u32 num_slots, slot_size;
	int err;

	num_slots = roundup_pow_of_two(max(cap->max_recv_wr, 1U));
	slot_size = roundup_pow_of_two(hdr + cap->max_recv_sge *
					     sizeof(struct eroce_sge));
	err = eroce_ring_init(&qp->rq, num_slots, slot_size, qp->user);
	if (err)
		return err;

	qp->rq_max_sge = min_t(u32, (slot_size - hdr) / sizeof(struct eroce_sge),
			       EROCE_MAX_SGE);
	cap->max_recv_wr = num_slots;
	cap->max_recv_sge = qp->rq_max_sge;
	return 0;
}

/* reserve a QPN; lookups find the QP only once it leaves RESET */
static int eroce_qp_alloc_qpn(struct eroce_res *res, struct eroce_qp *qp,
			      enum ib_qp_type type)
{
	u32 qpn;
	int err;

	if (type == IB_QPT_GSI) {
		qpn = EROCE_GSI_QPN;
		err = xa_insert(&res->qp_xa, qpn, NULL, GFP_KERNEL);
	} else {
		err = xa_alloc_cyclic(&res->qp_xa, &qpn, NULL,
				      XA_LIMIT(EROCE_FIRST_QPN, EROCE_LAST_QPN),
				      &res->next_qpn, GFP_KERNEL);
	}
	if (err < 0)
		return err;

	qp->ibqp.qp_num = qpn;
	return 0;
}

int eroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct eroce_res *res = &to_eroce_dev(ibqp->device)->res;
	struct eroce_qp *qp = to_eroce_qp(ibqp);
	struct eroce_create_qp_resp resp = {};
	struct eroce_ucontext *uctx;
	int err;

	err = eroce_qp_check_init(init, udata);
	if (err)
		return err;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	err = eroce_res_count_get(&res->num_qp, EROCE_MAX_QP);
	if (err)
		return err;
	qp->handle = kzalloc(sizeof(*qp->handle), GFP_KERNEL);
	if (!qp->handle) {
		err = -ENOMEM;
		goto err_uncount;
	}

	qp->user = !!udata;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	eroce_obj_init(&qp->handle->obj);
	qp->handle->qp = qp;
	spin_lock_init(&qp->state_lock);
	qp->attrs.state = IB_QPS_RESET;
	qp->attrs.path_mtu = IB_MTU_1024;
	qp->attrs.port_num = 1;

	err = eroce_qp_init_sq(qp, &init->cap);
	if (err)
		goto err_free_handle;

	if (init->srq) {
		init->cap.max_recv_wr = 0;
		init->cap.max_recv_sge = 0;
	} else {
		err = eroce_qp_init_rq(qp, &init->cap);
		if (err)
			goto err_free_sq;
	}

	err = eroce_qp_engine_init(qp, init->srq ? to_eroce_srq(init->srq) :
					       NULL);
	if (err)
		goto err_free_rq;

	err = eroce_qp_alloc_qpn(res, qp, init->qp_type);
	if (err)
		goto err_free_engine;

	if (udata) {
		uctx = rdma_udata_to_drv_context(udata, struct eroce_ucontext,
						 ibuc);
		err = eroce_ring_publish(&qp->sq, &uctx->ibuc, &resp.sq);
		if (err)
			goto err_free_qpn;
		if (qp->rq.ctrl) {
			err = eroce_ring_publish(&qp->rq, &uctx->ibuc, &resp.rq);
			if (err)
				goto err_free_qpn;
		}
		err = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (err)
			goto err_free_qpn;
	}
	return 0;

err_free_qpn:
	xa_erase(&res->qp_xa, ibqp->qp_num);
err_free_engine:
	eroce_qp_engine_free(qp);
err_free_rq:
	eroce_ring_free(&qp->rq);
err_free_sq:
	eroce_ring_free(&qp->sq);
err_free_handle:
	kfree(qp->handle);
err_uncount:
	atomic_dec(&res->num_qp);
	return err;
}

/* the attribute values, each against its own rule; the mask is checked later */
static int eroce_qp_check_attr(const struct ib_qp_attr *attr, int mask)
{
	if (mask & ~(IB_QP_ATTR_STANDARD_BITS | IB_QP_RATE_LIMIT))
		return -EOPNOTSUPP;
	if (mask & (IB_QP_ALT_PATH | IB_QP_CAP))
		return -EOPNOTSUPP;
	if ((mask & IB_QP_RATE_LIMIT) && attr->rate_limit > EROCE_MAX_RATE_KBPS)
		return -EINVAL;

	if ((mask & IB_QP_STATE) && attr->qp_state > IB_QPS_ERR)
		return -EINVAL;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state > IB_QPS_ERR)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= EROCE_MAX_PKEYS)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > EROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > EROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > EROCE_QP_TIMER_MAX)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) &&
	    attr->min_rnr_timer > EROCE_QP_TIMER_MAX)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > EROCE_QP_RETRY_MAX)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > EROCE_QP_RETRY_MAX)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > EROCE_QPN_MASK)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~EROCE_QP_ACCESS_SUPPORTED))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MIG_STATE) &&
	    attr->path_mig_state > IB_MIG_ARMED)
		return -EINVAL;
	return 0;
}

/* store the checked attributes; swaps the AV into *av */
static void eroce_qp_apply_attr(struct eroce_qp *qp,
				const struct ib_qp_attr *attr, int mask,
				struct eroce_av *av)
{
	struct eroce_qp_attrs *a = &qp->attrs;

	lockdep_assert_held(&qp->state_lock);

	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_PATH_MIG_STATE)
		a->path_mig_state = attr->path_mig_state;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & EROCE_PSN_MASK;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & EROCE_PSN_MASK;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_ACCESS_FLAGS)
		a->access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_AV) {
		swap(a->av, *av);
		a->av_valid = true;
	}
	if (mask & IB_QP_STATE)
		WRITE_ONCE(a->state, attr->qp_state);
}

/*
 * A larger array of owed responses for a QP entering RTR (room for every
 * read the peer may have outstanding), allocated before the engines stop;
 * NULL when the present one is large enough or there is no memory (the
 * responder then answers what fits and the requester retries the rest).
 */
static struct eroce_rsp *eroce_qp_rsp_alloc(struct eroce_qp *qp,
					    const struct ib_qp_attr *attr,
					    int mask, u32 *size)
{
	u32 rd = (mask & IB_QP_MAX_DEST_RD_ATOMIC) ? attr->max_dest_rd_atomic :
		 READ_ONCE(qp->attrs.max_dest_rd_atomic);

	*size = roundup_pow_of_two(2 * (EROCE_RSP_EXTRA + rd));
	if (!(mask & IB_QP_STATE) || attr->qp_state != IB_QPS_RTR ||
	    *size <= qp->eng.resp.rsp_size)
		return NULL;
	return eroce_resp_room_alloc(*size);
}

int eroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct eroce_res *res = &to_eroce_dev(ibqp->device)->res;
	struct eroce_qp *qp = to_eroce_qp(ibqp);
	enum ib_qp_state cur, next;
	struct eroce_av av = {};
	struct eroce_rsp *rsp;
	bool publish = false;
	unsigned long flags;
	u32 rsp_size;
	int err;

	err = eroce_qp_check_attr(attr, mask);
	if (err)
		return err;

	if (mask & IB_QP_AV) {
		err = eroce_av_from_attr(&av, &attr->ah_attr);
		if (err)
			return err;
	}
	rsp = eroce_qp_rsp_alloc(qp, attr, mask, &rsp_size);

	/*
	 * The engines stop here: the attributes, the state and what the
	 * engines keep change together (eroce_qp_engine_modify()).
	 */
	spin_lock_bh(&qp->eng.lock);
	spin_lock_irqsave(&qp->state_lock, flags);
	cur = qp->attrs.state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	/*
	 * ib_core's table knows the rate limit for raw packet QPs only;
	 * eroce paces RC and UD QPs too, in any state.
	 */
	if (((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur) ||
	    !ib_modify_qp_is_ok(cur, next, ibqp->qp_type,
				mask & ~IB_QP_RATE_LIMIT)) {
		spin_unlock_irqrestore(&qp->state_lock, flags);
		spin_unlock_bh(&qp->eng.lock);
		eroce_av_release(&av);
		kfree(rsp);
		return -EINVAL;
	}

	eroce_qp_apply_attr(qp, attr, mask, &av);
	if (mask & IB_QP_RATE_LIMIT)
		WRITE_ONCE(qp->eng.rate.limit_kbps, attr->rate_limit);
	if (next != IB_QPS_RESET && !qp->published) {
		qp->published = true;
		publish = true;
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (mask & IB_QP_AV)
		eroce_qp_route_forget(qp);
	eroce_qp_engine_modify(qp, cur, next, &rsp, rsp_size);
	spin_unlock_bh(&qp->eng.lock);

	/* the AV this one replaced, if any, and the array it replaced */
	eroce_av_release(&av);
	kfree(rsp);

	/* overwrites the reserved (NULL) entry: needs no memory */
	if (publish)
		xa_store(&res->qp_xa, ibqp->qp_num, qp->handle, GFP_KERNEL);
	if (next == IB_QPS_RTS)
		eroce_qp_kick(qp);
	return 0;
}

int eroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct eroce_qp *qp = to_eroce_qp(ibqp);
	const struct eroce_qp_attrs *a = &qp->attrs;
	unsigned long flags;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));

	attr->cap.max_send_wr = qp->sq.num_slots;
	attr->cap.max_send_sge = qp->sq_max_sge;
	attr->cap.max_inline_data = qp->sq_max_inline;
	if (qp->rq.ctrl) {
		attr->cap.max_recv_wr = qp->rq.num_slots;
		attr->cap.max_recv_sge = qp->rq_max_sge;
	}

	spin_lock_irqsave(&qp->state_lock, flags);
	attr->qp_state = a->state;
	attr->cur_qp_state = a->state;
	attr->path_mtu = a->path_mtu;
	attr->path_mig_state = a->path_mig_state;
	attr->qkey = a->qkey;
	attr->rq_psn = a->rq_psn;
	attr->sq_psn = a->sq_psn;
	attr->dest_qp_num = a->dest_qp_num;
	attr->qp_access_flags = a->access_flags;
	attr->pkey_index = a->pkey_index;
	attr->port_num = a->port_num;
	attr->max_rd_atomic = a->max_rd_atomic;
	attr->max_dest_rd_atomic = a->max_dest_rd_atomic;
	attr->min_rnr_timer = a->min_rnr_timer;
	attr->timeout = a->timeout;
	attr->retry_cnt = a->retry_cnt;
	attr->rnr_retry = a->rnr_retry;
	attr->en_sqd_async_notify = a->en_sqd_async_notify;
	attr->rate_limit = READ_ONCE(qp->eng.rate.limit_kbps);
	if (a->av_valid)
		eroce_av_to_attr(&a->av, &attr->ah_attr);
	spin_unlock_irqrestore(&qp->state_lock, flags);

	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->port_num = 1;
	return 0;
}

int eroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct eroce_res *res = &to_eroce_dev(ibqp->device)->res;
	struct eroce_qp *qp = to_eroce_qp(ibqp);

	/* no new lookup finds it; those that did hold their reference */
	eroce_mcast_detach_qp(qp);
	xa_erase(&res->qp_xa, ibqp->qp_num);
	eroce_obj_drain(&qp->handle->obj, true);
	eroce_qp_engine_fini(qp);

	if (qp->attrs.av_valid)
		eroce_av_release(&qp->attrs.av);
	eroce_ring_free(&qp->rq);
	eroce_ring_free(&qp->sq);
	/* a lookup may still be reading the handle: it goes after them */
	kfree_rcu(qp->handle, rcu);
	atomic_dec(&res->num_qp);
	return 0;
}

/*
 * The row of @op if a kernel QP of @type takes it, else NULL (BIND_MW:
 * kernel consumers have no memory windows).
 */
static const struct eroce_wr_info *eroce_send_wr_info(enum ib_qp_type type,
						      enum ib_wr_opcode op)
{
	const struct eroce_wr_info *wi = eroce_wr_info(op);

	if (!wi || !(wi->flags & eroce_qp_type_wrf(type)) ||
	    (wi->flags & EROCE_WRF_USER))
		return NULL;
	return wi;
}

/*
 * REG_MR: the key, rights, iova and length it registers, as the MR has
 * them when it is posted (ib_map_mr_sg() set iova and length).
 */
static int eroce_send_wqe_build_reg(struct eroce_qp *qp,
				    struct eroce_send_wqe *wqe,
				    const struct ib_reg_wr *rwr)
{
	struct ib_mr *ibmr = rwr->mr;

	if (!ibmr || ibmr->device != qp->ibqp.device ||
	    rwr->key >> 8 != to_eroce_mr(ibmr)->index)
		return -EINVAL;
	wqe->wr.reg.iova = ibmr->iova;
	wqe->wr.reg.length = ibmr->length;
	wqe->wr.reg.key = rwr->key;
	wqe->wr.reg.access = rwr->access;
	return 0;
}

/*
 * The opcode-specific part of a send WQE: what @wi, the row of an opcode
 * accepted on this QP, says the work request carries.
 */
static int eroce_send_wqe_build_ex(struct eroce_qp *qp,
				   struct eroce_send_wqe *wqe,
				   const struct ib_send_wr *wr,
				   const struct eroce_wr_info *wi)
{
	const struct ib_atomic_wr *awr;
	const struct ib_ud_wr *uwr;

	if (wi->flags & EROCE_WRF_IMM)
		wqe->ex = (__force u32)wr->ex.imm_data;
	else if (wi->flags & EROCE_WRF_INV)
		wqe->ex = wr->ex.invalidate_rkey;

	if (wr->opcode == IB_WR_REG_MR)
		return eroce_send_wqe_build_reg(qp, wqe, reg_wr(wr));
	if (eroce_wr_local(wi))
		return 0;

	if (wi->flags & EROCE_WRF_ATOMIC) {
		awr = atomic_wr(wr);
		if (wr->num_sge != 1 || wr->sg_list[0].length != 8 ||
		    (awr->remote_addr & 7))
			return -EINVAL;
		wqe->wr.atomic.remote_addr = awr->remote_addr;
		wqe->wr.atomic.compare_add = awr->compare_add;
		wqe->wr.atomic.swap = awr->swap;
		wqe->wr.atomic.rkey = awr->rkey;
	} else if (wi->flags & EROCE_WRF_RDMA) {
		wqe->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		wqe->wr.rdma.rkey = rdma_wr(wr)->rkey;
	}

	if (eroce_qp_connected(qp))
		return 0;

	uwr = ud_wr(wr);
	if (!uwr->ah || uwr->ah->device != qp->ibqp.device ||
	    uwr->remote_qpn > EROCE_QPN_MASK)
		return -EINVAL;
	wqe->wr.ud.ah_num = to_eroce_ah(uwr->ah)->num;
	wqe->wr.ud.remote_qpn = uwr->remote_qpn;
	wqe->wr.ud.remote_qkey = uwr->remote_qkey;
	return 0;
}

/* the payload: SGEs, or the bytes themselves for an inline send/write */
static int eroce_send_wqe_build_data(struct eroce_qp *qp,
				     struct eroce_send_wqe *wqe,
				     const struct ib_send_wr *wr)
{
	void *payload = (void *)(wqe + 1);
	struct eroce_sge *sge = payload;
	u64 total = 0;
	int i;

	if (wr->send_flags & IB_SEND_INLINE) {
		for (i = 0; i < wr->num_sge; i++) {
			u32 len = wr->sg_list[i].length;

			if (len > qp->sq_max_inline - total)
				return -EINVAL;
			memcpy(payload + total,
			       (void *)(uintptr_t)wr->sg_list[i].addr, len);
			total += len;
		}
		wqe->inline_len = total;
		return 0;
	}

	if (wr->num_sge > qp->sq_max_sge)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		total += wr->sg_list[i].length;
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	if (!eroce_msg_len_ok(total))
		return -EINVAL;
	wqe->num_sge = wr->num_sge;
	return 0;
}

/* fill a kernel SQ slot from @wr */
static int eroce_send_wqe_build(struct eroce_qp *qp, void *slot,
				const struct ib_send_wr *wr)
{
	const struct eroce_wr_info *wi;
	struct eroce_send_wqe *wqe = slot;
	int err;

	wi = eroce_send_wr_info(qp->ibqp.qp_type, wr->opcode);
	if (wr->num_sge < 0 || (wr->send_flags & ~EROCE_SEND_FLAGS_SUPPORTED) ||
	    !wi)
		return -EINVAL;
	if ((wr->send_flags & IB_SEND_INLINE) && eroce_wr_rd_atomic(wi))
		return -EINVAL;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags;
	if (qp->sig_all)
		wqe->send_flags |= EROCE_SEND_SIGNALED;

	err = eroce_send_wqe_build_ex(qp, wqe, wr, wi);
	if (err || eroce_wr_local(wi))
		return err;	/* a local operation has no payload */
	return eroce_send_wqe_build_data(qp, wqe, wr);
}

int eroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct eroce_qp *qp = to_eroce_qp(ibqp);
	struct eroce_ring *ring = &qp->sq;
	enum ib_qp_state state;
	unsigned long flags;
	void *slot;
	int err = 0;

	state = eroce_qp_state(qp);

	if (qp->user) {
		/* the doorbell: no work requests, the SQ ring has them */
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		eroce_qp_doorbell(qp);
		return 0;
	}

	if (state < IB_QPS_RTS) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&ring->producer_lock, flags);
	for (; wr; wr = wr->next) {
		slot = eroce_ring_produce_slot(ring);
		if (!slot) {
			err = -ENOMEM;
			break;
		}
		err = eroce_send_wqe_build(qp, slot, wr);
		if (err)
			break;
		eroce_ring_produce_commit(ring);
	}
	spin_unlock_irqrestore(&ring->producer_lock, flags);

	if (err)
		*bad_wr = wr;
	/*
	 * The work item sends it, or flushes it on a QP in ERR: kernel
	 * consumers post from any context, ib_mad with interrupts off.
	 */
	eroce_qp_kick(qp);
	return err;
}

int eroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct eroce_qp *qp = to_eroce_qp(ibqp);
	struct eroce_ring *ring = &qp->rq;
	int err;

	/* user RQs belong to userspace; SRQ QPs have no RQ */
	if (qp->user || !ring->ctrl || eroce_qp_state(qp) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}

	err = eroce_ring_post_recv(ring, qp->rq_max_sge, wr, bad_wr);
	if (eroce_qp_state(qp) == IB_QPS_ERR)
		eroce_qp_flush_rq(qp);
	return err;
}
