// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce provider: completion queues.  Owns CQ create/destroy/resize,
 * poll_cq, the ibv_cq_ex polling interface and CQ arming.
 *
 * The kernel produces CQEs into the shared ring, this process consumes
 * them.  cq->ring.lock serialises the consumer end: poll_cq holds it for
 * one call, the cq_ex interface from start_poll until end_poll (or until
 * start_poll/next_poll reports ENOENT for start_poll), resize for the
 * command and the swap of the mappings.  cq->arm_lock serialises
 * req_notify_cq's arm with resize.
 * Neither poll_cq nor req_notify_cq enters the kernel: arming is an
 * atomic OR into the CQ's ctrl.flags, which the kernel checks after it
 * publishes a CQE.
 *
 * A CQ destroyed under the process (its device went away) is marked
 * EROCE_RING_DEAD: once its last CQE is consumed, polls fail with EIO
 * instead of finding it empty forever.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "eroce.h"

enum {
	EROCE_CQ_WC_FLAGS = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
			    IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
			    IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
			    IBV_WC_EX_WITH_DLID_PATH_BITS,
};

/*
 * A UD receive's sl is the RoCE packet type, as ConnectX reports it
 * (EROCE_WC_IPV4); UCX's ud_verbs depends on it.  Otherwise the CQE's.
 */
static uint8_t eroce_cqe_sl(const struct eroce_cqe *cqe)
{
	if (!(cqe->wc_flags & EROCE_WC_GRH))
		return cqe->sl;
	return EROCE_WC_SL_ROCE_V2 | (cqe->wc_flags & EROCE_WC_IPV4 ?
				      EROCE_WC_SL_IPV4 : EROCE_WC_SL_IPV6);
}

static void eroce_cqe_to_wc(const struct eroce_cqe *cqe, struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = 0;
	wc->byte_len = cqe->byte_len;
	wc->imm_data = cqe->ex;		/* also invalidated_rkey */
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = cqe->wc_flags & ~(EROCE_WC_WITH_VLAN | EROCE_WC_IPV4);
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->wc_flags & EROCE_WC_WITH_VLAN ? 0 : cqe->slid;
	wc->sl = eroce_cqe_sl(cqe);
	wc->dlid_path_bits = 0;
}

int eroce_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct eroce_cq *cq = to_ecq(ibcq);
	struct eroce_ring *r = &cq->ring;
	uint32_t prod;
	int n = 0;

	pthread_spin_lock(&r->lock);
	prod = ring_load_producer(r);
	while (n < ne && r->head != prod) {
		eroce_cqe_to_wc(ring_slot(r, r->head), &wc[n]);
		r->head++;
		n++;
	}
	if (n)
		ring_publish_consumer(r);
	else if (ring_drained_dead(r))
		n = -EIO;
	pthread_spin_unlock(&r->lock);

	return n;
}

/*
 * Arm under arm_lock: a resize moves the flags to a new ring and unmaps
 * the old one while it holds that lock, so an arm made in between would
 * be lost with the old ring (and could touch it unmapped).  Not the
 * ring's lock: an application may arm between start_poll and end_poll.
 */
int eroce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct eroce_cq *cq = to_ecq(ibcq);
	struct eroce_ring *r = &cq->ring;
	int ret = 0;

	pthread_spin_lock(&cq->arm_lock);
	if (ring_dead(r)) {
		ret = EIO;
	} else {
		atomic_fetch_or_explicit(ring_word(&r->ctrl->flags),
					 solicited_only ?
					 EROCE_CQ_ARM_SOLICITED :
					 EROCE_CQ_ARM_NEXT,
					 memory_order_seq_cst);
		atomic_thread_fence(memory_order_seq_cst);
	}
	pthread_spin_unlock(&cq->arm_lock);
	return ret;
}

/* ---- ibv_cq_ex: reads come straight from the current ring slot */

static int cq_ex_load(struct eroce_cq *cq)
{
	struct eroce_ring *r = &cq->ring;

	if (r->head == ring_load_producer(r)) {
		cq->cur = NULL;
		return ring_drained_dead(r) ? EIO : ENOENT;
	}

	cq->cur = ring_slot(r, r->head);
	cq->vcq.cq_ex.wr_id = cq->cur->wr_id;
	cq->vcq.cq_ex.status = cq->cur->status;
	return 0;
}

static int cq_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct eroce_cq *cq = cq_ex_to_ecq(ibcq);
	int ret;

	if (attr->comp_mask)
		return EINVAL;

	pthread_spin_lock(&cq->ring.lock);
	ret = cq_ex_load(cq);
	if (ret)
		pthread_spin_unlock(&cq->ring.lock);
	return ret;
}

static int cq_next_poll(struct ibv_cq_ex *ibcq)
{
	struct eroce_cq *cq = cq_ex_to_ecq(ibcq);

	cq->ring.head++;
	return cq_ex_load(cq);
}

static void cq_end_poll(struct ibv_cq_ex *ibcq)
{
	struct eroce_cq *cq = cq_ex_to_ecq(ibcq);

	/* the entry last returned by start_poll/next_poll is consumed too */
	if (cq->cur)
		cq->ring.head++;
	ring_publish_consumer(&cq->ring);
	cq->cur = NULL;
	pthread_spin_unlock(&cq->ring.lock);
}

static enum ibv_wc_opcode cq_read_opcode(struct ibv_cq_ex *ibcq)
{
	return cq_ex_to_ecq(ibcq)->cur->opcode;
}

static uint32_t cq_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	(void)ibcq;
	return 0;
}

static uint32_t cq_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return cq_ex_to_ecq(ibcq)->cur->byte_len;
}

static __be32 cq_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return cq_ex_to_ecq(ibcq)->cur->ex;
}

static uint32_t cq_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return cq_ex_to_ecq(ibcq)->cur->qp_num;
}

static uint32_t cq_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return cq_ex_to_ecq(ibcq)->cur->src_qp;
}

static unsigned int cq_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return cq_ex_to_ecq(ibcq)->cur->wc_flags &
	       ~(EROCE_WC_WITH_VLAN | EROCE_WC_IPV4);
}

static uint32_t cq_read_slid(struct ibv_cq_ex *ibcq)
{
	const struct eroce_cqe *cqe = cq_ex_to_ecq(ibcq)->cur;

	return cqe->wc_flags & EROCE_WC_WITH_VLAN ? 0 : cqe->slid;
}

static uint8_t cq_read_sl(struct ibv_cq_ex *ibcq)
{
	return eroce_cqe_sl(cq_ex_to_ecq(ibcq)->cur);
}

static uint8_t cq_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	(void)ibcq;
	return 0;
}

static void eroce_cq_set_ex_ops(struct eroce_cq *cq, uint64_t wc_flags)
{
	struct ibv_cq_ex *ex = &cq->vcq.cq_ex;

	ex->start_poll = cq_start_poll;
	ex->next_poll = cq_next_poll;
	ex->end_poll = cq_end_poll;
	ex->read_opcode = cq_read_opcode;
	ex->read_vendor_err = cq_read_vendor_err;
	ex->read_wc_flags = cq_read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		ex->read_byte_len = cq_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		ex->read_imm_data = cq_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		ex->read_qp_num = cq_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		ex->read_src_qp = cq_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		ex->read_slid = cq_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		ex->read_sl = cq_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		ex->read_dlid_path_bits = cq_read_dlid_path_bits;
}

/* ---- create / destroy */

/*
 * The end both creates share, given @ret, what the create command returned:
 * map the ring the kernel made, or undo the create.  Returns @cq, or NULL
 * with errno set and @cq freed.
 */
static struct eroce_cq *eroce_cq_created(struct ibv_context *ibctx,
					 struct eroce_cq *cq, int ret,
					 const struct eroce_create_cq_resp *resp)
{
	if (ret)
		goto err_free;

	ret = eroce_map_ring(ibctx, &cq->ring, &resp->cq,
			     sizeof(struct eroce_cqe), true);
	if (ret)
		goto err_destroy;
	pthread_spin_init(&cq->arm_lock, PTHREAD_PROCESS_PRIVATE);
	return cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

struct ibv_cq *eroce_create_cq(struct ibv_context *ibctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct eroce_create_cq_resp_full resp = {};
	struct eroce_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
				NULL, 0, &resp.ibv_resp, sizeof(resp));
	cq = eroce_cq_created(ibctx, cq, ret, &resp.drv);
	return cq ? &cq->vcq.cq : NULL;
}

struct ibv_cq_ex *eroce_create_cq_ex(struct ibv_context *ibctx,
				     struct ibv_cq_init_attr_ex *attr)
{
	struct eroce_create_cq_ex_resp_full resp = {};
	struct eroce_cq *cq;
	int ret;

	if (attr->wc_flags & ~(uint64_t)EROCE_CQ_WC_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	ret = ibv_cmd_create_cq_ex(ibctx, attr, &cq->vcq, NULL, 0,
				   &resp.ibv_resp, sizeof(resp), 0);
	cq = eroce_cq_created(ibctx, cq, ret, &resp.drv);
	if (!cq)
		return NULL;

	eroce_cq_set_ex_ops(cq, attr->wc_flags);
	return &cq->vcq.cq_ex;
}

/* CQ moderation is the kernel's business (it raises the events) */
int eroce_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr)
{
	struct ibv_modify_cq cmd = {};

	return ibv_cmd_modify_cq(ibcq, attr, &cmd, sizeof(cmd));
}

/*
 * The kernel moves the completions not consumed yet to a new ring and
 * says where it is; with the lock held throughout, no poll sees either
 * ring half-way.
 */
int eroce_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct eroce_resize_cq_resp_full resp = {};
	struct eroce_cq *cq = to_ecq(ibcq);
	struct ibv_resize_cq cmd = {};
	int ret;

	pthread_spin_lock(&cq->ring.lock);
	pthread_spin_lock(&cq->arm_lock);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (!ret)
		ret = eroce_remap_ring(ibcq->context, &cq->ring, &resp.drv.cq,
				       sizeof(struct eroce_cqe), true);
	pthread_spin_unlock(&cq->arm_lock);
	pthread_spin_unlock(&cq->ring.lock);
	return ret;
}

int eroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct eroce_cq *cq = to_ecq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	eroce_unmap_ring(&cq->ring);
	pthread_spin_destroy(&cq->arm_lock);
	free(cq);
	return 0;
}
