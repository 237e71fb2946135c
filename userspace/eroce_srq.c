// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce provider: shared receive queues.  Owns SRQ create/modify/query/
 * destroy and post_srq_recv.
 *
 * Locking: srq->ring.lock serialises the SRQ producer end (post_srq_recv).
 * Posting writes the ring slot and store-releases the producer index; it
 * never enters the kernel.  The kernel cannot resize an SRQ ring, so
 * modify_srq passes IBV_SRQ_MAX_WR through and the kernel refuses it.
 */
#include <errno.h>
#include <stdlib.h>

#include "eroce.h"

/*
 * The end both creates share, given @ret, what the create command returned:
 * map the ring the kernel made, or undo the create.  Returns the SRQ, or
 * NULL with errno set and @srq freed.
 */
static struct ibv_srq *eroce_srq_created(struct ibv_context *ibctx,
					 struct eroce_srq *srq, int ret,
					 uint32_t max_sge,
					 const struct eroce_create_srq_resp *resp)
{
	if (ret)
		goto err_free;

	srq->max_sge = max_sge;
	ret = eroce_map_ring(ibctx, &srq->ring, &resp->srq,
			     sizeof(struct eroce_recv_wqe) +
			     max_sge * sizeof(struct eroce_sge), false);
	if (ret)
		goto err_destroy;
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

struct ibv_srq *eroce_create_srq(struct ibv_pd *ibpd,
				 struct ibv_srq_init_attr *attr)
{
	struct eroce_create_srq_resp_full resp = {};
	struct ibv_create_srq cmd = {};
	struct eroce_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	ret = ibv_cmd_create_srq(ibpd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	return eroce_srq_created(ibpd->context, srq, ret, attr->attr.max_sge,
				 &resp.drv);
}

struct ibv_srq *eroce_create_srq_ex(struct ibv_context *ibctx,
				    struct ibv_srq_init_attr_ex *attr)
{
	struct eroce_create_srq_resp_full resp = {};
	struct ibv_create_xsrq cmd = {};
	struct eroce_srq *srq;
	int ret;

	if ((attr->comp_mask & ~(uint32_t)(IBV_SRQ_INIT_ATTR_TYPE |
					   IBV_SRQ_INIT_ATTR_PD)) ||
	    !(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) ||
	    ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	     attr->srq_type != IBV_SRQT_BASIC)) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	ret = ibv_cmd_create_srq_ex(ibctx, &srq->vsrq, attr, &cmd, sizeof(cmd),
				    &resp.ibv_resp, sizeof(resp));
	return eroce_srq_created(ibctx, srq, ret, attr->attr.max_sge, &resp.drv);
}

int eroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask)
{
	struct ibv_modify_srq cmd = {};

	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int eroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int eroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct eroce_srq *srq = to_esrq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	eroce_unmap_ring(&srq->ring);
	free(srq);
	return 0;
}

int eroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct eroce_srq *srq = to_esrq(ibsrq);
	struct eroce_ring *r = &srq->ring;
	uint32_t start;
	int ret = 0;

	pthread_spin_lock(&r->lock);
	start = r->head;
	for (; wr; wr = wr->next) {
		ret = eroce_post_one_recv(r, srq->max_sge, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	if (r->head != start)
		ring_publish_producer(r);
	pthread_spin_unlock(&r->lock);

	return ret;
}
