// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce provider: queue pairs.  Owns QP create/modify/query/destroy, the
 * send and receive fast paths (post_send, post_recv and the ibv_qp_ex wr_*
 * interface) and the SQ doorbell.
 *
 * Locking: qp->sq.lock serialises the SQ producer end -- post_send holds
 * it for one call, the wr_* interface from wr_start until wr_complete or
 * wr_abort.  qp->rq.lock serialises the RQ producer end.  Both paths only
 * write ring slots and store-release the producer index; post_send then
 * enters the kernel (an empty POST_SEND write) only when the kernel set
 * EROCE_RING_NEED_DOORBELL in the SQ ctrl block, i.e. nothing in the
 * kernel will look at the SQ again by itself (no ACK is due).  Every work request is validated before its slot is
 * touched, so a failed request leaves the ring as it was.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eroce.h"

#define EROCE_SEND_FLAGS_MASK \
	(EROCE_SEND_FENCE | EROCE_SEND_SIGNALED | EROCE_SEND_SOLICITED)

enum {
	EROCE_RC_SEND_OPS = IBV_QP_EX_WITH_RDMA_WRITE |
			    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			    IBV_QP_EX_WITH_SEND |
			    IBV_QP_EX_WITH_SEND_WITH_IMM |
			    IBV_QP_EX_WITH_RDMA_READ |
			    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
			    IBV_QP_EX_WITH_LOCAL_INV |
			    IBV_QP_EX_WITH_BIND_MW |
			    IBV_QP_EX_WITH_SEND_WITH_INV |
			    IBV_QP_EX_WITH_ATOMIC_WRITE,
	EROCE_UC_SEND_OPS = IBV_QP_EX_WITH_RDMA_WRITE |
			    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			    IBV_QP_EX_WITH_SEND |
			    IBV_QP_EX_WITH_SEND_WITH_IMM |
			    IBV_QP_EX_WITH_LOCAL_INV |
			    IBV_QP_EX_WITH_BIND_MW,
	EROCE_UD_SEND_OPS = IBV_QP_EX_WITH_SEND |
			    IBV_QP_EX_WITH_SEND_WITH_IMM,
	EROCE_QP_COMP_MASK = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_CREATE_FLAGS |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
};

static uint64_t eroce_send_ops(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return EROCE_RC_SEND_OPS;
	case IBV_QPT_UC:
		return EROCE_UC_SEND_OPS;
	case IBV_QPT_UD:
		return EROCE_UD_SEND_OPS;
	default:
		return 0;
	}
}

/* the IBV_QP_EX_WITH_* bit of @op, 0 for TSO and the unknown ones */
static uint64_t eroce_opcode_bit(enum ibv_wr_opcode op)
{
	if (op == IBV_WR_ATOMIC_WRITE)
		return IBV_QP_EX_WITH_ATOMIC_WRITE;
	/* up to SEND_WITH_INV, IBV_WR_* and the bits follow one order */
	if ((unsigned int)op > IBV_WR_SEND_WITH_INV)
		return 0;
	return 1ULL << op;
}

static bool eroce_opcode_ok(struct eroce_qp *qp, enum ibv_wr_opcode op)
{
	return eroce_send_ops(qp->vqp.qp.qp_type) & eroce_opcode_bit(op);
}

/*
 * A work request opcode of the verbs that eroce does not have on any QP
 * type (TSO): EOPNOTSUPP, where one the QP type does not take is EINVAL.
 */
static bool eroce_opcode_unsupported(enum ibv_wr_opcode op)
{
	if ((unsigned int)op > IBV_WR_TSO)
		return false;
	return !(eroce_send_ops(IBV_QPT_RC) & eroce_opcode_bit(op));
}

static size_t sq_room(struct eroce_qp *qp)
{
	return qp->sq.slot_size - sizeof(struct eroce_send_wqe);
}

/* ---- doorbell */

static int eroce_sq_doorbell(struct eroce_qp *qp)
{
	uint32_t flags;

	/* pairs with the kernel's barrier between setting the flag and
	 * re-reading the producer index
	 */
	atomic_thread_fence(memory_order_seq_cst);
	flags = atomic_load_explicit(ring_word(&qp->sq.ctrl->flags),
				     memory_order_relaxed);
	if (!(flags & EROCE_RING_NEED_DOORBELL))
		return 0;
	return eroce_ring_sq_doorbell(&qp->vqp.qp);
}

/* ---- post_send */

/* a local operation: it carries no data, its SGEs are ignored */
static bool eroce_opcode_local(enum ibv_wr_opcode op)
{
	return op == IBV_WR_LOCAL_INV || op == IBV_WR_BIND_MW;
}

/*
 * The window of a BIND_MW, of @mw_type: ibv_bind_mw() binds type 1
 * windows, a BIND_MW work request type 2 ones.  No MR: a type 1 window
 * is unbound, which takes a zero range.
 */
static int eroce_check_bind(const struct ibv_mw *mw,
			    const struct ibv_mw_bind_info *bind,
			    enum ibv_mw_type mw_type)
{
	if (!mw || mw->type != mw_type)
		return EINVAL;
	if (!bind->mr && (bind->addr || bind->length))
		return EINVAL;
	return 0;
}

static void eroce_write_bind(struct eroce_send_wqe *wqe,
			     const struct ibv_mw *mw, uint32_t rkey,
			     const struct ibv_mw_bind_info *bind)
{
	wqe->ex = rkey;
	wqe->wr.bind.addr = bind->addr;
	wqe->wr.bind.length = bind->length;
	wqe->wr.bind.mr_lkey = bind->mr ? bind->mr->lkey : 0;
	wqe->wr.bind.access = bind->mw_access_flags;
	wqe->wr.bind.mw_type = mw->type;
}

static int eroce_check_send_wr(struct eroce_qp *qp,
			       const struct ibv_send_wr *wr,
			       enum ibv_mw_type mw_type, size_t *inline_len)
{
	int i;

	if (!eroce_opcode_ok(qp, wr->opcode))
		return eroce_opcode_unsupported(wr->opcode) ? EOPNOTSUPP :
							 EINVAL;
	*inline_len = 0;
	if (wr->opcode == IBV_WR_BIND_MW)
		return eroce_check_bind(wr->bind_mw.mw,
					&wr->bind_mw.bind_info, mw_type);
	if (eroce_opcode_local(wr->opcode))
		return 0;
	if (wr->opcode == IBV_WR_ATOMIC_WRITE)
		/* the 8 bytes to store: one SGE, read at once */
		return wr->num_sge == 1 && wr->sg_list[0].length == 8 &&
		       !(wr->send_flags & IBV_SEND_INLINE) &&
		       !(wr->wr.rdma.remote_addr & 7) ? 0 : EINVAL;
	if (wr->num_sge < 0)
		return EINVAL;
	if (qp->vqp.qp.qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;

	switch (wr->opcode) {
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (wr->num_sge != 1 || wr->sg_list[0].length != 8 ||
		    (wr->send_flags & IBV_SEND_INLINE))
			return EINVAL;
		break;
	case IBV_WR_RDMA_READ:
		if (wr->send_flags & IBV_SEND_INLINE)
			return EINVAL;
		break;
	default:
		break;
	}

	if (wr->send_flags & IBV_SEND_INLINE) {
		size_t len = 0;

		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > qp->max_inline || len > sq_room(qp))
			return EINVAL;
		*inline_len = len;
		return 0;
	}

	if ((uint32_t)wr->num_sge > qp->max_send_sge ||
	    wr->num_sge * sizeof(struct eroce_sge) > sq_room(qp))
		return EINVAL;
	return 0;
}

static void eroce_write_sges(struct eroce_send_wqe *wqe,
			     const struct ibv_sge *sg, size_t num)
{
	struct eroce_sge *dst = (struct eroce_sge *)(wqe + 1);
	size_t i;

	for (i = 0; i < num; i++) {
		dst[i].addr = sg[i].addr;
		dst[i].length = sg[i].length;
		dst[i].lkey = sg[i].lkey;
	}
	wqe->num_sge = num;
}

static void eroce_wqe_init(struct eroce_send_wqe *wqe, uint64_t wr_id,
			   unsigned int send_flags, enum ibv_wr_opcode op)
{
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr_id;
	wqe->send_flags = send_flags & EROCE_SEND_FLAGS_MASK;
	wqe->opcode = op;
}

static void eroce_write_send_wr(struct eroce_qp *qp,
				struct eroce_send_wqe *wqe,
				const struct ibv_send_wr *wr,
				size_t inline_len)
{
	eroce_wqe_init(wqe, wr->wr_id, wr->send_flags, wr->opcode);

	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		wqe->ex = wr->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		wqe->ex = wr->invalidate_rkey;
		break;
	case IBV_WR_BIND_MW:
		eroce_write_bind(wqe, wr->bind_mw.mw, wr->bind_mw.rkey,
				 &wr->bind_mw.bind_info);
		return;
	case IBV_WR_ATOMIC_WRITE:
		wqe->wr.atomic_write.remote_addr = wr->wr.rdma.remote_addr;
		wqe->wr.atomic_write.rkey = wr->wr.rdma.rkey;
		memcpy(wqe->wr.atomic_write.value,
		       (const void *)(uintptr_t)wr->sg_list[0].addr, 8);
		return;
	default:
		break;
	}
	if (eroce_opcode_local(wr->opcode))
		return;

	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		wqe->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe->wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		wqe->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		wqe->wr.atomic.swap = wr->wr.atomic.swap;
		wqe->wr.atomic.rkey = wr->wr.atomic.rkey;
		break;
	default:
		if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
			wqe->wr.ud.ah_num = to_eah(wr->wr.ud.ah)->ah_num;
			wqe->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
			wqe->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		}
		break;
	}

	if (wr->send_flags & IBV_SEND_INLINE) {
		char *p = (char *)(wqe + 1);
		int i;

		for (i = 0; i < wr->num_sge; i++) {
			memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			p += wr->sg_list[i].length;
		}
		wqe->send_flags |= EROCE_SEND_INLINE;
		wqe->inline_len = inline_len;
	} else {
		eroce_write_sges(wqe, wr->sg_list, wr->num_sge);
	}
}

/*
 * IBA 10.8.2: send work may be posted in RTS, SQD, SQE and ERR (where it
 * is flushed), receive work in any state but RESET; the kernel refuses
 * the same for kernel QPs.  ibqp->state is what libibverbs recorded from
 * the last successful ibv_modify_qp(); the engines may have moved the QP
 * to ERR since, where posting is allowed.
 */
static bool eroce_sq_state_ok(const struct ibv_qp *ibqp)
{
	switch (ibqp->state) {
	case IBV_QPS_RTS:
	case IBV_QPS_SQD:
	case IBV_QPS_SQE:
	case IBV_QPS_ERR:
		return true;
	default:
		return false;
	}
}

static bool eroce_rq_state_ok(const struct ibv_qp *ibqp)
{
	return ibqp->state != IBV_QPS_RESET;
}

/* post_send; a BIND_MW in @wr binds a window of @mw_type */
static int eroce_post_send_list(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
				struct ibv_send_wr **bad_wr,
				enum ibv_mw_type mw_type)
{
	struct eroce_qp *qp = to_eqp(ibqp);
	struct eroce_ring *sq = &qp->sq;
	struct ibv_send_wr *first = wr;
	uint32_t start;
	size_t inline_len;
	int ret = 0, db;

	if (!sq->map || !eroce_sq_state_ok(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}
	if (ring_dead(sq)) {
		*bad_wr = wr;
		return EIO;
	}

	pthread_spin_lock(&sq->lock);
	start = sq->head;
	for (; wr; wr = wr->next) {
		ret = eroce_check_send_wr(qp, wr, mw_type, &inline_len);
		if (!ret && ring_full(sq))
			ret = ENOMEM;
		if (ret) {
			*bad_wr = wr;
			break;
		}
		eroce_write_send_wr(qp, ring_slot(sq, sq->head), wr,
				    inline_len);
		sq->head++;
	}
	if (sq->head != start) {
		ring_publish_producer(sq);
		db = eroce_sq_doorbell(qp);
		/*
		 * Everything was queued but the kernel refused the kick;
		 * report the call's first request, as nothing will run
		 * before the next doorbell.
		 */
		if (!ret && db) {
			ret = db;
			*bad_wr = first;
		}
	}
	pthread_spin_unlock(&sq->lock);

	return ret;
}

int eroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr)
{
	return eroce_post_send_list(ibqp, wr, bad_wr, IBV_MW_TYPE_2);
}

/*
 * ibv_bind_mw(): a BIND_MW work request for a type 1 window, under the
 * window's next rkey, which @mw takes once the request is posted.
 */
int eroce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = mw_bind->bind_info,
		},
	};
	struct ibv_send_wr *bad_wr;
	int ret;

	ret = eroce_post_send_list(ibqp, &wr, &bad_wr, IBV_MW_TYPE_1);
	if (!ret)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}

/* ---- post_recv (the RQ and SRQ share the WQE format) */

int eroce_post_one_recv(struct eroce_ring *r, uint32_t max_sge,
			const struct ibv_recv_wr *wr)
{
	struct eroce_recv_wqe *wqe;
	struct eroce_sge *sge;
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge ||
	    sizeof(*wqe) + wr->num_sge * sizeof(*sge) > r->slot_size)
		return EINVAL;
	if (ring_dead(r))
		return EIO;
	if (ring_full(r))
		return ENOMEM;

	wqe = ring_slot(r, r->head);
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	wqe->reserved = 0;
	sge = (struct eroce_sge *)(wqe + 1);
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	r->head++;
	return 0;
}

int eroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	struct eroce_qp *qp = to_eqp(ibqp);
	struct eroce_ring *rq = &qp->rq;
	uint32_t start;
	int ret = 0;

	if (!rq->map || !eroce_rq_state_ok(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&rq->lock);
	start = rq->head;
	for (; wr; wr = wr->next) {
		ret = eroce_post_one_recv(rq, qp->max_recv_sge, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	if (rq->head != start)
		ring_publish_producer(rq);
	pthread_spin_unlock(&rq->lock);

	return ret;
}

/* ---- ibv_qp_ex wr_* interface */

static struct eroce_send_wqe *wr_begin(struct ibv_qp_ex *ibqp,
				       enum ibv_wr_opcode op)
{
	struct eroce_qp *qp = qp_ex_to_eqp(ibqp);
	struct eroce_send_wqe *wqe;

	qp->cur_wqe = NULL;
	if (qp->wr_err)
		return NULL;
	if (!eroce_opcode_ok(qp, op)) {
		qp->wr_err = EINVAL;
		return NULL;
	}
	if (ring_full(&qp->sq)) {
		qp->wr_err = ENOMEM;
		return NULL;
	}

	wqe = ring_slot(&qp->sq, qp->sq.head++);
	eroce_wqe_init(wqe, ibqp->wr_id, ibqp->wr_flags, op);
	qp->cur_wqe = wqe;
	return wqe;
}

static void wr_send(struct ibv_qp_ex *ibqp)
{
	wr_begin(ibqp, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *ibqp, __be32 imm_data)
{
	struct eroce_send_wqe *wqe = wr_begin(ibqp, IBV_WR_SEND_WITH_IMM);

	if (wqe)
		wqe->ex = imm_data;
}

static void wr_send_inv(struct ibv_qp_ex *ibqp, uint32_t invalidate_rkey)
{
	struct eroce_send_wqe *wqe = wr_begin(ibqp, IBV_WR_SEND_WITH_INV);

	if (wqe)
		wqe->ex = invalidate_rkey;
}

static void wr_local_inv(struct ibv_qp_ex *ibqp, uint32_t invalidate_rkey)
{
	struct eroce_send_wqe *wqe = wr_begin(ibqp, IBV_WR_LOCAL_INV);

	if (wqe)
		wqe->ex = invalidate_rkey;
}

static void wr_bind_mw(struct ibv_qp_ex *ibqp, struct ibv_mw *mw,
		       uint32_t rkey, const struct ibv_mw_bind_info *bind)
{
	struct eroce_qp *qp = qp_ex_to_eqp(ibqp);
	struct eroce_send_wqe *wqe = wr_begin(ibqp, IBV_WR_BIND_MW);

	if (!wqe)
		return;
	if (eroce_check_bind(mw, bind, IBV_MW_TYPE_2)) {
		qp->wr_err = EINVAL;
		return;
	}
	eroce_write_bind(wqe, mw, rkey, bind);
}

static void wr_atomic_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
			    uint64_t remote_addr, const void *atomic_wr)
{
	struct eroce_qp *qp = qp_ex_to_eqp(ibqp);
	struct eroce_send_wqe *wqe = wr_begin(ibqp, IBV_WR_ATOMIC_WRITE);

	if (!wqe)
		return;
	if (remote_addr & 7) {
		qp->wr_err = EINVAL;
		return;
	}
	wqe->wr.atomic_write.remote_addr = remote_addr;
	wqe->wr.atomic_write.rkey = rkey;
	memcpy(wqe->wr.atomic_write.value, atomic_wr, 8);
}

static void wr_rdma(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode op,
		    uint32_t rkey, uint64_t remote_addr, __be32 imm)
{
	struct eroce_send_wqe *wqe = wr_begin(ibqp, op);

	if (!wqe)
		return;
	wqe->ex = imm;
	wqe->wr.rdma.remote_addr = remote_addr;
	wqe->wr.rdma.rkey = rkey;
}

static void wr_rdma_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
			  uint64_t remote_addr)
{
	wr_rdma(ibqp, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *ibqp, uint32_t rkey,
			      uint64_t remote_addr, __be32 imm_data)
{
	wr_rdma(ibqp, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr, imm_data);
}

static void wr_rdma_read(struct ibv_qp_ex *ibqp, uint32_t rkey,
			 uint64_t remote_addr)
{
	wr_rdma(ibqp, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void wr_atomic(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode op,
		      uint32_t rkey, uint64_t remote_addr,
		      uint64_t compare_add, uint64_t swap)
{
	struct eroce_send_wqe *wqe = wr_begin(ibqp, op);

	if (!wqe)
		return;
	wqe->wr.atomic.remote_addr = remote_addr;
	wqe->wr.atomic.compare_add = compare_add;
	wqe->wr.atomic.swap = swap;
	wqe->wr.atomic.rkey = rkey;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *ibqp, uint32_t rkey,
			      uint64_t remote_addr, uint64_t compare,
			      uint64_t swap)
{
	wr_atomic(ibqp, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr, compare,
		  swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *ibqp, uint32_t rkey,
				uint64_t remote_addr, uint64_t add)
{
	wr_atomic(ibqp, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr, add, 0);
}

static void wr_set_ud_addr(struct ibv_qp_ex *ibqp, struct ibv_ah *ah,
			   uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct eroce_qp *qp = qp_ex_to_eqp(ibqp);
	struct eroce_send_wqe *wqe = qp->cur_wqe;

	if (!wqe)
		return;
	if (!ah) {
		qp->wr_err = EINVAL;
		return;
	}
	wqe->wr.ud.ah_num = to_eah(ah)->ah_num;
	wqe->wr.ud.remote_qpn = remote_qpn;
	wqe->wr.ud.remote_qkey = remote_qkey;
}

static bool wr_data_ok(struct eroce_qp *qp, bool inl)
{
	switch (qp->cur_wqe->opcode) {
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
	case IBV_WR_ATOMIC_WRITE:	/* its 8 bytes came with it */
		qp->wr_err = EINVAL;	/* no data */
		return false;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (inl) {
			qp->wr_err = EINVAL;
			return false;
		}
		return true;
	default:
		return true;
	}
}

static void wr_set_sge_list(struct ibv_qp_ex *ibqp, size_t num_sge,
			    const struct ibv_sge *sg_list)
{
	struct eroce_qp *qp = qp_ex_to_eqp(ibqp);

	if (!qp->cur_wqe || !wr_data_ok(qp, false))
		return;
	if (num_sge > qp->max_send_sge ||
	    num_sge * sizeof(struct eroce_sge) > sq_room(qp)) {
		qp->wr_err = EINVAL;
		return;
	}
	eroce_write_sges(qp->cur_wqe, sg_list, num_sge);
}

static void wr_set_sge(struct ibv_qp_ex *ibqp, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	wr_set_sge_list(ibqp, 1, &sge);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *ibqp, size_t num_buf,
				    const struct ibv_data_buf *buf_list)
{
	struct eroce_qp *qp = qp_ex_to_eqp(ibqp);
	struct eroce_send_wqe *wqe = qp->cur_wqe;
	size_t i, len = 0;
	char *p;

	if (!wqe || !wr_data_ok(qp, true))
		return;
	for (i = 0; i < num_buf; i++)
		len += buf_list[i].length;
	if (len > qp->max_inline || len > sq_room(qp)) {
		qp->wr_err = EINVAL;
		return;
	}

	p = (char *)(wqe + 1);
	for (i = 0; i < num_buf; i++) {
		memcpy(p, buf_list[i].addr, buf_list[i].length);
		p += buf_list[i].length;
	}
	wqe->num_sge = 0;
	wqe->send_flags |= EROCE_SEND_INLINE;
	wqe->inline_len = len;
}

static void wr_set_inline_data(struct ibv_qp_ex *ibqp, void *addr,
			       size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(ibqp, 1, &buf);
}

static void wr_start(struct ibv_qp_ex *ibqp)
{
	struct eroce_qp *qp = qp_ex_to_eqp(ibqp);

	pthread_spin_lock(&qp->sq.lock);
	if (!qp->sq.map || !eroce_sq_state_ok(&ibqp->qp_base))
		qp->wr_err = EINVAL;
	else if (ring_dead(&qp->sq))
		qp->wr_err = EIO;
	else
		qp->wr_err = 0;
	qp->wr_start_head = qp->sq.head;
	qp->cur_wqe = NULL;
}

static int wr_complete(struct ibv_qp_ex *ibqp)
{
	struct eroce_qp *qp = qp_ex_to_eqp(ibqp);
	int ret = qp->wr_err;

	/* on error nothing since wr_start is posted */
	if (ret)
		qp->sq.head = qp->wr_start_head;
	else if (qp->sq.head != qp->wr_start_head) {
		ring_publish_producer(&qp->sq);
		ret = eroce_sq_doorbell(qp);
	}
	qp->cur_wqe = NULL;
	pthread_spin_unlock(&qp->sq.lock);
	return ret;
}

static void wr_abort(struct ibv_qp_ex *ibqp)
{
	struct eroce_qp *qp = qp_ex_to_eqp(ibqp);

	qp->sq.head = qp->wr_start_head;
	qp->cur_wqe = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

static void eroce_qp_set_ex_ops(struct eroce_qp *qp, uint64_t ops)
{
	struct ibv_qp_ex *ex = &qp->vqp.qp_ex;

	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		ex->wr_rdma_write = wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		ex->wr_rdma_write_imm = wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_SEND)
		ex->wr_send = wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		ex->wr_send_imm = wr_send_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		ex->wr_rdma_read = wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		ex->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		ex->wr_atomic_fetch_add = wr_atomic_fetch_add;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		ex->wr_send_inv = wr_send_inv;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		ex->wr_local_inv = wr_local_inv;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		ex->wr_bind_mw = wr_bind_mw;
	if (ops & IBV_QP_EX_WITH_ATOMIC_WRITE)
		ex->wr_atomic_write = wr_atomic_write;

	if (qp->vqp.qp.qp_type == IBV_QPT_UD)
		ex->wr_set_ud_addr = wr_set_ud_addr;
	ex->wr_set_inline_data = wr_set_inline_data;
	ex->wr_set_inline_data_list = wr_set_inline_data_list;
	ex->wr_set_sge = wr_set_sge;
	ex->wr_set_sge_list = wr_set_sge_list;
	ex->wr_start = wr_start;
	ex->wr_complete = wr_complete;
	ex->wr_abort = wr_abort;
}

/* ---- create / destroy */

static int eroce_qp_map(struct ibv_context *ibctx, struct eroce_qp *qp,
			const struct ibv_qp_cap *cap, bool has_srq,
			const struct eroce_create_qp_resp *resp)
{
	size_t sq_need, rq_need;
	int ret;

	qp->max_send_sge = cap->max_send_sge;
	qp->max_inline = cap->max_inline_data;
	qp->max_recv_sge = cap->max_recv_sge;

	sq_need = sizeof(struct eroce_send_wqe) +
		  (qp->max_send_sge * sizeof(struct eroce_sge) >
		   qp->max_inline ?
		   qp->max_send_sge * sizeof(struct eroce_sge) :
		   qp->max_inline);
	rq_need = sizeof(struct eroce_recv_wqe) +
		  qp->max_recv_sge * sizeof(struct eroce_sge);

	/* a zero ring_info means "no such ring" (SRQ, or a zero-depth queue) */
	if (resp->sq.mmap_size) {
		ret = eroce_map_ring(ibctx, &qp->sq, &resp->sq, sq_need, false);
		if (ret)
			return ret;
	}
	if (!has_srq && resp->rq.mmap_size) {
		ret = eroce_map_ring(ibctx, &qp->rq, &resp->rq, rq_need, false);
		if (ret) {
			eroce_unmap_ring(&qp->sq);
			return ret;
		}
	}
	return 0;
}

/*
 * The end both creates share, given @ret, what the create command returned:
 * map the rings the kernel made, or undo the create.  Returns @qp, or NULL
 * with errno set and @qp freed.
 */
static struct eroce_qp *eroce_qp_created(struct ibv_context *ibctx,
					 struct eroce_qp *qp, int ret,
					 const struct ibv_qp_cap *cap,
					 bool has_srq,
					 const struct eroce_create_qp_resp *resp)
{
	if (ret)
		goto err_free;

	ret = eroce_qp_map(ibctx, qp, cap, has_srq, resp);
	if (ret)
		goto err_destroy;
	return qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *eroce_create_qp(struct ibv_pd *ibpd,
			       struct ibv_qp_init_attr *attr)
{
	struct eroce_create_qp_resp_full resp = {};
	struct ibv_create_qp cmd = {};
	struct eroce_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;

	ret = ibv_cmd_create_qp(ibpd, &qp->vqp.qp, attr, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	qp = eroce_qp_created(ibpd->context, qp, ret, &attr->cap, !!attr->srq,
			      &resp.drv);
	return qp ? &qp->vqp.qp : NULL;
}

struct ibv_qp *eroce_create_qp_ex(struct ibv_context *ibctx,
				  struct ibv_qp_init_attr_ex *attr)
{
	struct eroce_create_qp_ex_resp_full resp = {};
	struct ibv_create_qp_ex cmd = {};
	uint64_t ops = eroce_send_ops(attr->qp_type);
	struct eroce_qp *qp;
	int ret;

	if ((attr->comp_mask & ~(uint32_t)EROCE_QP_COMP_MASK) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags) || !ops) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		if (attr->send_ops_flags & ~ops) {
			errno = EOPNOTSUPP;
			return NULL;
		}
		ops = attr->send_ops_flags;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;

	ret = ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, &cmd, sizeof(cmd),
				    &resp.ibv_resp, sizeof(resp));
	qp = eroce_qp_created(ibctx, qp, ret, &attr->cap, !!attr->srq,
			      &resp.drv);
	if (!qp)
		return NULL;

	eroce_qp_set_ex_ops(qp, ops);
	qp->vqp.comp_mask |= VERBS_QP_EX;
	return &qp->vqp.qp;
}

int eroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask)
{
	struct ib_uverbs_ex_modify_qp_resp resp = {};
	struct ibv_modify_qp_ex cmd_ex = {};
	struct ibv_modify_qp cmd = {};

	/* the rate limit exists only in the extended command */
	if (attr_mask & IBV_QP_RATE_LIMIT)
		return ibv_cmd_modify_qp_ex(ibqp, attr, attr_mask, &cmd_ex,
					    sizeof(cmd_ex), &resp,
					    sizeof(resp));
	return ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
}

/* ibv_modify_qp_rate_limit(): pacing in kb/s (0: none); no burst control */
int eroce_modify_qp_rate_limit(struct ibv_qp *ibqp,
			       struct ibv_qp_rate_limit_attr *attr)
{
	struct ibv_qp_attr qattr = { .rate_limit = attr->rate_limit };

	if (attr->max_burst_sz || attr->typical_pkt_sz)
		return EINVAL;
	return eroce_modify_qp(ibqp, &qattr, IBV_QP_RATE_LIMIT);
}

int eroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

int eroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct eroce_qp *qp = to_eqp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	eroce_unmap_ring(&qp->sq);
	eroce_unmap_ring(&qp->rq);
	free(qp);
	return 0;
}
