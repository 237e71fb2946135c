// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce: the verbs ops table, the top of the module: it names the entry
 * point of every verb, so it uses every verbs object's file and no file
 * uses it but the device's registration.  The bookkeeping the objects
 * share is in eroce_obj.c.
 *
 * No code runs here, so no contexts and no locks.
 */
#include "eroce.h"

const struct ib_device_ops eroce_verbs_ops = {
	.alloc_ucontext = eroce_alloc_ucontext,
	.dealloc_ucontext = eroce_dealloc_ucontext,
	.mmap = eroce_mmap,
	.mmap_free = eroce_mmap_free,
	.disassociate_ucontext = eroce_disassociate_ucontext,

	.alloc_pd = eroce_alloc_pd,
	.dealloc_pd = eroce_dealloc_pd,

	.create_ah = eroce_create_ah,
	.create_user_ah = eroce_create_ah,
	.query_ah = eroce_query_ah,
	.destroy_ah = eroce_destroy_ah,

	.get_dma_mr = eroce_get_dma_mr,
	.alloc_mr = eroce_alloc_mr,
	.map_mr_sg = eroce_map_mr_sg,
	.reg_user_mr = eroce_reg_user_mr,
	.rereg_user_mr = eroce_rereg_user_mr,
	.dereg_mr = eroce_dereg_mr,
	.alloc_mw = eroce_alloc_mw,
	.dealloc_mw = eroce_dealloc_mw,

	.create_cq = eroce_create_cq,
	.destroy_cq = eroce_destroy_cq,
	.resize_cq = eroce_resize_cq,
	.poll_cq = eroce_poll_cq,
	.req_notify_cq = eroce_req_notify_cq,

	.create_srq = eroce_create_srq,
	.modify_srq = eroce_modify_srq,
	.query_srq = eroce_query_srq,
	.destroy_srq = eroce_destroy_srq,
	.post_srq_recv = eroce_post_srq_recv,

	.create_qp = eroce_create_qp,
	.modify_qp = eroce_modify_qp,
	.query_qp = eroce_query_qp,
	.destroy_qp = eroce_destroy_qp,
	.post_send = eroce_post_send,
	.post_recv = eroce_post_recv,
	.attach_mcast = eroce_attach_mcast,
	.detach_mcast = eroce_detach_mcast,
	.fill_res_qp_entry = eroce_fill_res_qp_entry,

	INIT_RDMA_OBJ_SIZE(ib_ah, eroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, eroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, eroce_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, eroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, eroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, eroce_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, eroce_ucontext, ibuc),
};
