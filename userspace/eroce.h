/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce userspace provider: object structures, shared-ring accessors and
 * the prototypes shared between eroce.c, eroce_cq.c, eroce_qp.c and
 * eroce_srq.c.
 *
 * The ring contract is in include/uapi/rdma/eroce-abi.h.  Here each ring
 * end this process owns is protected by the spinlock of its struct
 * eroce_ring (SQ, RQ, SRQ: the producer end; CQ: the consumer end).  The
 * owner keeps a private copy of its own index (`head`), so the shared copy
 * is only ever written, never read back, by this side.
 */
#ifndef EROCE_PROVIDER_H
#define EROCE_PROVIDER_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <rdma/eroce-abi.h>

#include "verbs_pabi.h"

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

struct eroce_device {
	struct verbs_device ibv_dev;	/* must be first */
	uint32_t abi_version;
};

struct eroce_context {
	struct verbs_context ibv_ctx;
	uint32_t max_inline_data;
};

struct eroce_pd {
	struct ibv_pd ibv_pd;
};

struct eroce_ah {
	struct ibv_ah ibv_ah;
	uint32_t ah_num;
};

/* one mapped ring and the state of the end this process owns */
struct eroce_ring {
	struct eroce_ring_ctrl *ctrl;	/* start of the mapping */
	void *map;
	size_t map_size;
	uint32_t num_slots;
	uint32_t slot_size;
	uint32_t head;			/* private copy of our own index */
	pthread_spinlock_t lock;
};

struct eroce_cq {
	struct verbs_cq vcq;
	struct eroce_ring ring;
	/* req_notify_cq against resize: the arm reaches the ring in use */
	pthread_spinlock_t arm_lock;
	/* cq_ex polling state; valid between start_poll and end_poll */
	struct eroce_cqe *cur;
};

struct eroce_srq {
	struct verbs_srq vsrq;
	struct eroce_ring ring;
	uint32_t max_sge;
};

struct eroce_qp {
	struct verbs_qp vqp;
	struct eroce_ring sq;
	struct eroce_ring rq;		/* unmapped when the QP uses an SRQ */
	uint32_t max_send_sge;
	uint32_t max_inline;
	uint32_t max_recv_sge;
	/* ibv_qp_ex wr_* state; valid between wr_start and wr_complete */
	struct eroce_send_wqe *cur_wqe;
	uint32_t wr_start_head;
	int wr_err;
};

static inline struct eroce_context *to_ectx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct eroce_context, ibv_ctx.context);
}

static inline struct eroce_cq *to_ecq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct eroce_cq, vcq.cq);
}

static inline struct eroce_cq *cq_ex_to_ecq(struct ibv_cq_ex *ibcq)
{
	return container_of(ibcq, struct eroce_cq, vcq.cq_ex);
}

static inline struct eroce_qp *to_eqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct eroce_qp, vqp.qp);
}

static inline struct eroce_qp *qp_ex_to_eqp(struct ibv_qp_ex *ibqp)
{
	return container_of(ibqp, struct eroce_qp, vqp.qp_ex);
}

static inline struct eroce_srq *to_esrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct eroce_srq, vsrq.srq);
}

static inline struct eroce_ah *to_eah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct eroce_ah, ibv_ah);
}

/* ---- shared ring accessors */

typedef _Atomic(uint32_t) eroce_atomic_u32;

static inline eroce_atomic_u32 *ring_word(uint32_t *p)
{
	return (eroce_atomic_u32 *)p;
}

static inline void *ring_slot(struct eroce_ring *r, uint32_t index)
{
	return (char *)r->map + EROCE_RING_DATA_OFFSET +
	       (size_t)(index & (r->num_slots - 1)) * r->slot_size;
}

/* producer side (SQ/RQ/SRQ): is there room for one more entry? */
static inline int ring_full(struct eroce_ring *r)
{
	uint32_t cons = atomic_load_explicit(ring_word(&r->ctrl->consumer),
					     memory_order_acquire);

	return r->head - cons >= r->num_slots;
}

static inline void ring_publish_producer(struct eroce_ring *r)
{
	atomic_store_explicit(ring_word(&r->ctrl->producer), r->head,
			      memory_order_release);
}

/*
 * The kernel has let the ring go (its object was destroyed under the
 * process, as when the device went away): nothing more is consumed or
 * produced.  Read before the producer index, so that a consumer that sees
 * the flag also sees every entry published before it.
 */
static inline bool ring_dead(struct eroce_ring *r)
{
	return atomic_load_explicit(ring_word(&r->ctrl->flags),
				    memory_order_acquire) & EROCE_RING_DEAD;
}

/* consumer side (CQ) */
static inline uint32_t ring_load_producer(struct eroce_ring *r)
{
	return atomic_load_explicit(ring_word(&r->ctrl->producer),
				    memory_order_acquire);
}

/*
 * A consumer that found the ring empty: is that for good?  Every entry
 * published before EROCE_RING_DEAD has been consumed.
 */
static inline bool ring_drained_dead(struct eroce_ring *r)
{
	return ring_dead(r) && r->head == ring_load_producer(r);
}

static inline void ring_publish_consumer(struct eroce_ring *r)
{
	atomic_store_explicit(ring_word(&r->ctrl->consumer), r->head,
			      memory_order_release);
}

/*
 * Kick the kernel's send engine: a POST_SEND command with no work
 * requests, whatever the ring's NEED_DOORBELL flag says (the caller
 * checks it).  0 or an errno.
 */
static inline int eroce_ring_sq_doorbell(struct ibv_qp *qp)
{
	struct ib_uverbs_post_send_resp resp;
	struct ibv_post_send cmd = {};

	cmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.core_payload.response = (uintptr_t)&resp;
	cmd.core_payload.qp_handle = qp->handle;
	cmd.core_payload.wqe_size = sizeof(struct ib_uverbs_send_wr);
	if (write(qp->context->cmd_fd, &cmd, sizeof(cmd)) != sizeof(cmd))
		return errno;
	return 0;
}

/* eroce.c */
int eroce_map_ring(struct ibv_context *ibctx, struct eroce_ring *r,
		   const struct eroce_ring_info *info, size_t min_slot_size,
		   bool consumer);
void eroce_unmap_ring(struct eroce_ring *r);
int eroce_remap_ring(struct ibv_context *ibctx, struct eroce_ring *r,
		     const struct eroce_ring_info *info, size_t min_slot_size,
		     bool consumer);

/* eroce_cq.c */
struct ibv_cq *eroce_create_cq(struct ibv_context *ibctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector);
struct ibv_cq_ex *eroce_create_cq_ex(struct ibv_context *ibctx,
				     struct ibv_cq_init_attr_ex *attr);
int eroce_destroy_cq(struct ibv_cq *ibcq);
int eroce_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr);
int eroce_resize_cq(struct ibv_cq *ibcq, int cqe);
int eroce_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc);
int eroce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);

/* eroce_qp.c */
struct ibv_qp *eroce_create_qp(struct ibv_pd *ibpd,
			       struct ibv_qp_init_attr *attr);
struct ibv_qp *eroce_create_qp_ex(struct ibv_context *ibctx,
				  struct ibv_qp_init_attr_ex *attr);
int eroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask);
int eroce_modify_qp_rate_limit(struct ibv_qp *ibqp,
			       struct ibv_qp_rate_limit_attr *attr);
int eroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr);
int eroce_destroy_qp(struct ibv_qp *ibqp);
int eroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);
int eroce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind);
int eroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);
int eroce_post_one_recv(struct eroce_ring *r, uint32_t max_sge,
			const struct ibv_recv_wr *wr);

/* eroce_srq.c */
struct ibv_srq *eroce_create_srq(struct ibv_pd *ibpd,
				 struct ibv_srq_init_attr *attr);
struct ibv_srq *eroce_create_srq_ex(struct ibv_context *ibctx,
				    struct ibv_srq_init_attr_ex *attr);
int eroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask);
int eroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int eroce_destroy_srq(struct ibv_srq *ibsrq);
int eroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);

/* driver (UHW) responses appended to the core responses */
EROCE_DECLARE_DRV_RESP(eroce_get_context_resp, ib_uverbs_get_context_resp,
		       eroce_alloc_ucontext_resp);
EROCE_DECLARE_DRV_RESP(eroce_create_cq_resp_full, ib_uverbs_create_cq_resp,
		       eroce_create_cq_resp);
EROCE_DECLARE_DRV_RESP(eroce_create_cq_ex_resp_full,
		       ib_uverbs_ex_create_cq_resp, eroce_create_cq_resp);
EROCE_DECLARE_DRV_RESP(eroce_resize_cq_resp_full, ib_uverbs_resize_cq_resp,
		       eroce_resize_cq_resp);
EROCE_DECLARE_DRV_RESP(eroce_create_qp_resp_full, ib_uverbs_create_qp_resp,
		       eroce_create_qp_resp);
EROCE_DECLARE_DRV_RESP(eroce_create_qp_ex_resp_full,
		       ib_uverbs_ex_create_qp_resp, eroce_create_qp_resp);
EROCE_DECLARE_DRV_RESP(eroce_create_srq_resp_full, ib_uverbs_create_srq_resp,
		       eroce_create_srq_resp);
EROCE_DECLARE_DRV_RESP(eroce_create_ah_resp_full, ib_uverbs_create_ah_resp,
		       eroce_create_ah_resp);

/* ex-command driver parts travel in 8-byte words on the write path */
static_assert(sizeof(struct eroce_create_cq_ex_resp_full) % 8 == 0,
	      "cq_ex resp");
static_assert(sizeof(struct eroce_create_qp_ex_resp_full) % 8 == 0,
	      "qp_ex resp");

/* ---- eroce-abi.h layout and value checks */

static_assert(sizeof(struct eroce_ring_ctrl) == EROCE_RING_DATA_OFFSET,
	      "ring ctrl block");
static_assert(offsetof(struct eroce_ring_ctrl, consumer) == 64, "consumer");
static_assert(offsetof(struct eroce_ring_ctrl, flags) == 128, "flags");
static_assert(sizeof(struct eroce_ring_info) == 24, "ring_info");
static_assert(sizeof(struct eroce_sge) == 16, "sge");
static_assert(sizeof(struct eroce_send_wqe) == 64, "send_wqe");
static_assert(sizeof(struct eroce_recv_wqe) == 16, "recv_wqe");
static_assert(sizeof(struct eroce_cqe) == 32, "cqe");
static_assert(sizeof(struct eroce_alloc_ucontext_resp) == 8, "ctx resp");
static_assert(sizeof(struct eroce_create_qp_resp) == 48, "qp resp");
static_assert(sizeof(struct eroce_create_ah_resp) == 8, "ah resp");

static_assert(EROCE_SEND_FENCE == IBV_SEND_FENCE, "send flags");
static_assert(EROCE_SEND_SIGNALED == IBV_SEND_SIGNALED, "send flags");
static_assert(EROCE_SEND_SOLICITED == IBV_SEND_SOLICITED, "send flags");
static_assert(EROCE_SEND_INLINE == IBV_SEND_INLINE, "send flags");
static_assert(EROCE_WC_GRH == IBV_WC_GRH, "wc flags");
static_assert(EROCE_WC_WITH_IMM == IBV_WC_WITH_IMM, "wc flags");
static_assert(EROCE_WC_WITH_INV == IBV_WC_WITH_INV, "wc flags");

/* SQ opcodes are enum ib_uverbs_wr_opcode; we pass enum ibv_wr_opcode */
#define EROCE_SAME_OPCODE(op) \
	static_assert((int)IB_UVERBS_##op == (int)IBV_##op, #op)
EROCE_SAME_OPCODE(WR_RDMA_WRITE);
EROCE_SAME_OPCODE(WR_RDMA_WRITE_WITH_IMM);
EROCE_SAME_OPCODE(WR_SEND);
EROCE_SAME_OPCODE(WR_SEND_WITH_IMM);
EROCE_SAME_OPCODE(WR_RDMA_READ);
EROCE_SAME_OPCODE(WR_ATOMIC_CMP_AND_SWP);
EROCE_SAME_OPCODE(WR_ATOMIC_FETCH_AND_ADD);
EROCE_SAME_OPCODE(WR_LOCAL_INV);
EROCE_SAME_OPCODE(WR_SEND_WITH_INV);

#endif /* EROCE_PROVIDER_H */
