// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Userspace unit test of the provider's ring fast paths, without a kernel:
 * QPs, CQs and SRQs are assembled by hand around malloc()ed rings, and the
 * test plays the kernel's side of the ABI (consuming WQEs, producing CQEs,
 * moving a CQ's ring on resize).  Single-threaded but for the resize race.
 * Prints "N passed, N failed" last; exit 1 on failure.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the fast paths under test, statics included */
#include "eroce_cq.c"
#include "eroce_qp.c"
#include "eroce_srq.c"

/* ring mapping (eroce.c) needs a kernel; the test builds rings itself */
int eroce_map_ring(struct ibv_context *ibctx, struct eroce_ring *r,
		   const struct eroce_ring_info *info, size_t min_slot_size,
		   bool consumer)
{
	return ENOSYS;
}

void eroce_unmap_ring(struct eroce_ring *r)
{
}

/* the ring a resize moves the CQ to (test_resize_keeps_arm), if any */
static struct eroce_ring *resize_to;
static sem_t resize_copied;

int eroce_remap_ring(struct ibv_context *ibctx, struct eroce_ring *r,
		     const struct eroce_ring_info *info, size_t min_slot_size,
		     bool consumer)
{
	if (!resize_to)
		return ENOSYS;
	r->map = resize_to->map;
	r->ctrl = resize_to->ctrl;
	return 0;
}

/*
 * The kernel's resize: the flags carry over to the new ring, then the
 * command takes a while longer to return (in which an arm of the old
 * ring would be lost)
 */
int ibv_cmd_resize_cq(struct ibv_cq *ibcq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size)
{
	struct eroce_cq *cq = to_ecq(ibcq);

	resize_to->ctrl->flags = cq->ring.ctrl->flags;
	sem_post(&resize_copied);
	usleep(100000);
	return 0;
}

static int passed, failed;

#define EXPECT(cond) do {						\
	if (cond) {							\
		passed++;						\
	} else {							\
		failed++;						\
		printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);	\
	}								\
} while (0)

static void fake_ring(struct eroce_ring *r, uint32_t slots, uint32_t size)
{
	memset(r, 0, sizeof(*r));
	r->map_size = EROCE_RING_DATA_OFFSET + (size_t)slots * size;
	r->map = aligned_alloc(4096, (r->map_size + 4095) & ~4095UL);
	memset(r->map, 0, r->map_size);
	r->ctrl = r->map;
	r->num_slots = slots;
	r->slot_size = size;
	pthread_spin_init(&r->lock, PTHREAD_PROCESS_PRIVATE);
}

static void free_ring(struct eroce_ring *r)
{
	free(r->map);
	pthread_spin_destroy(&r->lock);
}

static struct eroce_qp *fake_qp(enum ibv_qp_type type)
{
	struct eroce_qp *qp = calloc(1, sizeof(*qp));

	qp->vqp.qp.qp_type = type;
	qp->vqp.qp.state = IBV_QPS_RTS;
	qp->max_send_sge = 4;
	qp->max_inline = 128;
	qp->max_recv_sge = 2;
	fake_ring(&qp->sq, 8, 256);	/* 64 + 128 rounded up */
	fake_ring(&qp->rq, 4, 64);	/* 16 + 2 * 16 rounded up */
	return qp;
}

static void test_post_send(void)
{
	struct eroce_qp *qp = fake_qp(IBV_QPT_RC);
	char payload[100], big[200];
	struct ibv_sge sg[5] = {
		{ .addr = 0x1000, .length = 10, .lkey = 1 },
		{ .addr = 0x2000, .length = 20, .lkey = 2 },
	};
	struct ibv_send_wr wr = {}, wr2 = {}, *bad = NULL;
	struct ibv_mw mw = {};
	struct eroce_send_wqe *wqe;
	struct eroce_sge *esge;
	int i, ret;

	wr.wr_id = 42;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_IP_CSUM;
	wr.imm_data = htobe32(0x1234);
	wr.wr.rdma.remote_addr = 0xabc000;
	wr.wr.rdma.rkey = 77;
	wr.sg_list = sg;
	wr.num_sge = 2;
	wr.next = &wr2;
	wr2 = wr;
	wr2.next = NULL;
	wr2.wr_id = 43;
	wr2.opcode = IBV_WR_SEND;
	wr2.send_flags = IBV_SEND_INLINE;
	memset(payload, 0x5a, sizeof(payload));
	sg[2].addr = (uintptr_t)payload;
	sg[2].length = 60;
	sg[3].addr = (uintptr_t)payload + 60;
	sg[3].length = 40;
	wr2.sg_list = &sg[2];
	wr2.num_sge = 2;

	ret = eroce_post_send(&qp->vqp.qp, &wr, &bad);
	EXPECT(ret == 0);
	EXPECT(qp->sq.ctrl->producer == 2);

	wqe = ring_slot(&qp->sq, 0);
	EXPECT(wqe->wr_id == 42);
	EXPECT(wqe->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM);
	EXPECT(wqe->send_flags == EROCE_SEND_SIGNALED);
	EXPECT(wqe->ex == htobe32(0x1234));
	EXPECT(wqe->wr.rdma.remote_addr == 0xabc000 && wqe->wr.rdma.rkey == 77);
	EXPECT(wqe->num_sge == 2 && wqe->inline_len == 0);
	esge = (struct eroce_sge *)(wqe + 1);
	EXPECT(esge[1].addr == 0x2000 && esge[1].length == 20 &&
	       esge[1].lkey == 2);

	wqe = ring_slot(&qp->sq, 1);
	EXPECT(wqe->wr_id == 43 && wqe->opcode == IB_UVERBS_WR_SEND);
	EXPECT(wqe->send_flags == EROCE_SEND_INLINE);
	EXPECT(wqe->inline_len == 100 && wqe->num_sge == 0);
	EXPECT(!memcmp(wqe + 1, payload, 100));

	/* inline too long, too many SGEs, bad opcode: nothing written */
	wr2.next = NULL;
	sg[4].addr = (uintptr_t)big;
	sg[4].length = 129;
	wr2.sg_list = &sg[4];
	wr2.num_sge = 1;
	ret = eroce_post_send(&qp->vqp.qp, &wr2, &bad);
	EXPECT(ret == EINVAL && bad == &wr2);
	wr2.send_flags = 0;
	wr2.sg_list = sg;
	wr2.num_sge = 5;
	ret = eroce_post_send(&qp->vqp.qp, &wr2, &bad);
	EXPECT(ret == EINVAL && bad == &wr2);
	wr2.num_sge = 1;
	wr2.opcode = IBV_WR_TSO;		/* not on RoCE */
	ret = eroce_post_send(&qp->vqp.qp, &wr2, &bad);
	EXPECT(ret == EOPNOTSUPP && bad == &wr2);
	wr2.opcode = IBV_WR_BIND_MW;		/* no window */
	ret = eroce_post_send(&qp->vqp.qp, &wr2, &bad);
	EXPECT(ret == EINVAL && bad == &wr2);
	mw.type = IBV_MW_TYPE_1;		/* ibv_bind_mw() binds those */
	wr2.bind_mw.mw = &mw;
	ret = eroce_post_send(&qp->vqp.qp, &wr2, &bad);
	EXPECT(ret == EINVAL && bad == &wr2);
	wr2.opcode = (enum ibv_wr_opcode)200;	/* no such opcode */
	ret = eroce_post_send(&qp->vqp.qp, &wr2, &bad);
	EXPECT(ret == EINVAL && bad == &wr2);
	wr2.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;	/* length 10, not 8 */
	ret = eroce_post_send(&qp->vqp.qp, &wr2, &bad);
	EXPECT(ret == EINVAL && bad == &wr2);
	EXPECT(qp->sq.ctrl->producer == 2);

	/* fill: 6 more fit, the 7th of a chain fails and the 6 are posted */
	wr2.opcode = IBV_WR_SEND;
	{
		struct ibv_send_wr chain[7];

		for (i = 0; i < 7; i++) {
			chain[i] = wr2;
			chain[i].wr_id = 100 + i;
			chain[i].next = i < 6 ? &chain[i + 1] : NULL;
		}
		ret = eroce_post_send(&qp->vqp.qp, chain, &bad);
		EXPECT(ret == ENOMEM && bad == &chain[6]);
		EXPECT(qp->sq.ctrl->producer == 8);
	}

	/* the kernel consumes 3: they are reusable, with the index wrapped */
	qp->sq.ctrl->consumer = 3;
	wr2.next = NULL;
	wr2.wr_id = 200;
	EXPECT(eroce_post_send(&qp->vqp.qp, &wr2, &bad) == 0);
	EXPECT(qp->sq.ctrl->producer == 9);
	wqe = ring_slot(&qp->sq, 8);
	EXPECT(wqe == ring_slot(&qp->sq, 0) && wqe->wr_id == 200);

	free_ring(&qp->sq);
	free_ring(&qp->rq);
	free(qp);
}

static void test_free_running_indices(void)
{
	struct eroce_qp *qp = fake_qp(IBV_QPT_RC);
	struct ibv_recv_wr wr = {}, *bad;
	struct ibv_sge sg = { .addr = 1, .length = 2, .lkey = 3 };
	int i, ok = 0;

	/* start just below the 32-bit wrap */
	qp->rq.head = 0xfffffffe;
	qp->rq.ctrl->producer = 0xfffffffe;
	qp->rq.ctrl->consumer = 0xfffffffe;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	for (i = 0; i < 6; i++)
		ok += eroce_post_recv(&qp->vqp.qp, &wr, &bad) == 0;
	EXPECT(ok == 4);
	EXPECT(qp->rq.ctrl->producer == 2);

	free_ring(&qp->sq);
	free_ring(&qp->rq);
	free(qp);
}

/* the states IBA 10.8.2 allows posting in, as libibverbs recorded them */
static void test_post_state(void)
{
	struct eroce_qp *qp = fake_qp(IBV_QPT_RC);
	struct ibv_qp_ex *qx = &qp->vqp.qp_ex;
	struct ibv_qp *ibqp = &qp->vqp.qp;
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *sbad = NULL;
	struct ibv_recv_wr rwr = { .wr_id = 1 }, *rbad = NULL;

	eroce_qp_set_ex_ops(qp, IBV_QP_EX_WITH_SEND);

	ibqp->state = IBV_QPS_RESET;
	EXPECT(eroce_post_recv(ibqp, &rwr, &rbad) == EINVAL && rbad == &rwr);
	EXPECT(eroce_post_send(ibqp, &swr, &sbad) == EINVAL && sbad == &swr);
	EXPECT(qp->rq.ctrl->producer == 0 && qp->sq.ctrl->producer == 0);

	ibqp->state = IBV_QPS_INIT;
	EXPECT(eroce_post_recv(ibqp, &rwr, &rbad) == 0);
	EXPECT(qp->rq.ctrl->producer == 1);
	sbad = NULL;
	EXPECT(eroce_post_send(ibqp, &swr, &sbad) == EINVAL && sbad == &swr);
	qx->wr_start(qx);
	qx->wr_send(qx);
	EXPECT(qx->wr_complete(qx) == EINVAL);

	ibqp->state = IBV_QPS_RTR;
	sbad = NULL;
	EXPECT(eroce_post_send(ibqp, &swr, &sbad) == EINVAL && sbad == &swr);
	EXPECT(qp->sq.ctrl->producer == 0);

	/* in ERR the kernel flushes what is posted */
	ibqp->state = IBV_QPS_ERR;
	EXPECT(eroce_post_send(ibqp, &swr, &sbad) == 0);
	EXPECT(qp->sq.ctrl->producer == 1);
	free_ring(&qp->sq);
	free_ring(&qp->rq);
	free(qp);
}

static void test_post_recv(void)
{
	struct eroce_qp *qp = fake_qp(IBV_QPT_UD);
	struct ibv_sge sg[3] = {
		{ .addr = 0x10, .length = 100, .lkey = 9 },
		{ .addr = 0x20, .length = 200, .lkey = 8 },
	};
	struct ibv_recv_wr wr = { .wr_id = 5, .sg_list = sg, .num_sge = 2 };
	struct ibv_recv_wr *bad = NULL;
	struct eroce_recv_wqe *wqe;
	struct eroce_sge *esge;
	int i;

	EXPECT(eroce_post_recv(&qp->vqp.qp, &wr, &bad) == 0);
	EXPECT(qp->rq.ctrl->producer == 1);
	wqe = ring_slot(&qp->rq, 0);
	esge = (struct eroce_sge *)(wqe + 1);
	EXPECT(wqe->wr_id == 5 && wqe->num_sge == 2);
	EXPECT(esge[1].addr == 0x20 && esge[1].length == 200 &&
	       esge[1].lkey == 8);

	wr.num_sge = 3;
	EXPECT(eroce_post_recv(&qp->vqp.qp, &wr, &bad) == EINVAL && bad == &wr);
	wr.num_sge = 1;
	for (i = 0; i < 3; i++)
		EXPECT(eroce_post_recv(&qp->vqp.qp, &wr, &bad) == 0);
	EXPECT(eroce_post_recv(&qp->vqp.qp, &wr, &bad) == ENOMEM);
	EXPECT(qp->rq.ctrl->producer == 4);

	free_ring(&qp->sq);
	free_ring(&qp->rq);
	free(qp);
}

static void test_wr_api(void)
{
	struct eroce_qp *qp = fake_qp(IBV_QPT_UD);
	struct ibv_qp_ex *qx = &qp->vqp.qp_ex;
	struct eroce_ah ah = { .ah_num = 17 };
	struct ibv_data_buf bufs[2];
	char a[30], b[50];
	struct eroce_send_wqe *wqe;
	struct ibv_sge sgl[5] = {};
	int i;

	eroce_qp_set_ex_ops(qp, IBV_QP_EX_WITH_SEND |
			    IBV_QP_EX_WITH_SEND_WITH_IMM);
	EXPECT(qx->wr_send && qx->wr_send_imm && !qx->wr_rdma_write);

	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	bufs[0].addr = a;
	bufs[0].length = sizeof(a);
	bufs[1].addr = b;
	bufs[1].length = sizeof(b);

	qx->wr_start(qx);
	qx->wr_id = 9;
	qx->wr_flags = IBV_SEND_SIGNALED;
	qx->wr_send_imm(qx, htobe32(7));
	qx->wr_set_ud_addr(qx, &ah.ibv_ah, 0x33, 0x44);
	qx->wr_set_inline_data_list(qx, 2, bufs);
	qx->wr_id = 10;
	qx->wr_flags = 0;
	qx->wr_send(qx);
	qx->wr_set_ud_addr(qx, &ah.ibv_ah, 0x35, 0x46);
	qx->wr_set_sge(qx, 1, 0x1000, 8);
	EXPECT(qx->wr_complete(qx) == 0);
	EXPECT(qp->sq.ctrl->producer == 2);

	wqe = ring_slot(&qp->sq, 0);
	EXPECT(wqe->wr_id == 9 && wqe->opcode == IB_UVERBS_WR_SEND_WITH_IMM);
	EXPECT(wqe->send_flags == (EROCE_SEND_SIGNALED | EROCE_SEND_INLINE));
	EXPECT(wqe->ex == htobe32(7));
	EXPECT(wqe->wr.ud.ah_num == 17 && wqe->wr.ud.remote_qpn == 0x33 &&
	       wqe->wr.ud.remote_qkey == 0x44);
	EXPECT(wqe->inline_len == 80);
	EXPECT(!memcmp(wqe + 1, a, 30));
	EXPECT(!memcmp((char *)(wqe + 1) + 30, b, 50));
	wqe = ring_slot(&qp->sq, 1);
	EXPECT(wqe->wr_id == 10 && wqe->num_sge == 1 && wqe->send_flags == 0);
	EXPECT(wqe->wr.ud.remote_qpn == 0x35);

	/* an error anywhere drops the whole batch */
	qx->wr_start(qx);
	qx->wr_send(qx);
	qx->wr_set_ud_addr(qx, &ah.ibv_ah, 1, 1);
	qx->wr_set_sge(qx, 1, 0x1000, 8);
	qx->wr_send(qx);
	qx->wr_set_ud_addr(qx, &ah.ibv_ah, 1, 1);
	qx->wr_set_sge_list(qx, 5, sgl);		/* max is 4 */
	EXPECT(qx->wr_complete(qx) == EINVAL);
	EXPECT(qp->sq.ctrl->producer == 2 && qp->sq.head == 2);

	/* abort drops it too */
	qx->wr_start(qx);
	qx->wr_send(qx);
	qx->wr_abort(qx);
	EXPECT(qp->sq.ctrl->producer == 2 && qp->sq.head == 2);

	/* queue full is reported by wr_complete */
	qx->wr_start(qx);
	for (i = 0; i < 7; i++) {
		qx->wr_send(qx);
		qx->wr_set_ud_addr(qx, &ah.ibv_ah, 1, 1);
		qx->wr_set_sge(qx, 1, 0x1000, 8);
	}
	EXPECT(qx->wr_complete(qx) == ENOMEM);
	EXPECT(qp->sq.ctrl->producer == 2);

	free_ring(&qp->sq);
	free_ring(&qp->rq);
	free(qp);
}

static void put_cqe(struct eroce_ring *r, uint64_t wr_id, uint8_t status)
{
	struct eroce_cqe *cqe = ring_slot(r, r->ctrl->producer);

	memset(cqe, 0, sizeof(*cqe));
	cqe->wr_id = wr_id;
	cqe->status = status;
	cqe->opcode = IBV_WC_RECV;
	cqe->byte_len = 1000 + wr_id;
	cqe->qp_num = 0x11;
	cqe->src_qp = 0x22;
	/* 1: UD over IPv4, 2: UD over IPv6, others: no GRH */
	cqe->wc_flags = EROCE_WC_WITH_IMM |
			(wr_id <= 2 ? EROCE_WC_GRH : 0) |
			(wr_id == 1 ? EROCE_WC_IPV4 : 0);
	cqe->ex = htobe32(0xfeed);
	cqe->slid = 0;
	cqe->sl = 3;
	cqe->pkey_index = 0;
	r->ctrl->producer++;
}

static void test_cq(void)
{
	struct eroce_cq *cq = calloc(1, sizeof(*cq));
	struct ibv_cq *ibcq = &cq->vcq.cq;
	struct ibv_cq_ex *cqx = &cq->vcq.cq_ex;
	struct ibv_poll_cq_attr pa = {};
	struct ibv_wc wc[8];
	int n;

	fake_ring(&cq->ring, 4, 32);
	pthread_spin_init(&cq->arm_lock, PTHREAD_PROCESS_PRIVATE);
	EXPECT(eroce_poll_cq(ibcq, 8, wc) == 0);
	put_cqe(&cq->ring, 1, IBV_WC_SUCCESS);
	put_cqe(&cq->ring, 2, IBV_WC_WR_FLUSH_ERR);
	put_cqe(&cq->ring, 3, IBV_WC_SUCCESS);
	EXPECT(eroce_poll_cq(ibcq, 2, wc) == 2);
	EXPECT(cq->ring.ctrl->consumer == 2);
	EXPECT(wc[0].wr_id == 1 && wc[0].status == IBV_WC_SUCCESS &&
	       wc[0].opcode == IBV_WC_RECV && wc[0].byte_len == 1001 &&
	       wc[0].qp_num == 0x11 && wc[0].src_qp == 0x22 &&
	       wc[0].wc_flags == (IBV_WC_WITH_IMM | IBV_WC_GRH) &&
	       wc[0].imm_data == htobe32(0xfeed));
	/* a UD receive's sl is the RoCE packet type, as on ConnectX */
	EXPECT(wc[0].sl == (EROCE_WC_SL_ROCE_V2 | EROCE_WC_SL_IPV4));
	EXPECT(wc[1].wr_id == 2 && wc[1].status == IBV_WC_WR_FLUSH_ERR &&
	       wc[1].sl == (EROCE_WC_SL_ROCE_V2 | EROCE_WC_SL_IPV6));
	n = eroce_poll_cq(ibcq, 8, wc);
	EXPECT(n == 1 && wc[0].wr_id == 3 && wc[0].sl == 3 &&
	       wc[0].wc_flags == IBV_WC_WITH_IMM);
	EXPECT(eroce_poll_cq(ibcq, 8, wc) == 0);

	/* arming sets the bits and nothing else */
	EXPECT(eroce_req_notify_cq(ibcq, 1) == 0);
	EXPECT(cq->ring.ctrl->flags == EROCE_CQ_ARM_SOLICITED);
	EXPECT(eroce_req_notify_cq(ibcq, 0) == 0);
	EXPECT(cq->ring.ctrl->flags ==
	       (EROCE_CQ_ARM_SOLICITED | EROCE_CQ_ARM_NEXT));

	/* cq_ex: ENOENT on empty, then two entries across the index wrap */
	eroce_cq_set_ex_ops(cq, IBV_WC_EX_WITH_BYTE_LEN |
			    IBV_WC_EX_WITH_QP_NUM);
	EXPECT(cqx->start_poll(cqx, &pa) == ENOENT);
	put_cqe(&cq->ring, 4, IBV_WC_SUCCESS);
	put_cqe(&cq->ring, 5, IBV_WC_SUCCESS);
	EXPECT(cqx->start_poll(cqx, &pa) == 0);
	EXPECT(cqx->wr_id == 4 && cqx->status == IBV_WC_SUCCESS);
	EXPECT(cqx->read_byte_len(cqx) == 1004);
	EXPECT(cqx->read_qp_num(cqx) == 0x11);
	EXPECT(cqx->read_opcode(cqx) == IBV_WC_RECV);
	EXPECT(cqx->next_poll(cqx) == 0 && cqx->wr_id == 5);
	EXPECT(cqx->next_poll(cqx) == ENOENT);
	cqx->end_poll(cqx);
	EXPECT(cq->ring.ctrl->consumer == 5);

	/* end_poll right after start_poll consumes exactly one */
	put_cqe(&cq->ring, 6, IBV_WC_SUCCESS);
	put_cqe(&cq->ring, 7, IBV_WC_SUCCESS);
	EXPECT(cqx->start_poll(cqx, &pa) == 0 && cqx->wr_id == 6);
	cqx->end_poll(cqx);
	EXPECT(cq->ring.ctrl->consumer == 6);
	EXPECT(eroce_poll_cq(ibcq, 8, wc) == 1 && wc[0].wr_id == 7);

	free_ring(&cq->ring);
	free(cq);
}

static void test_srq(void)
{
	struct eroce_srq *srq = calloc(1, sizeof(*srq));
	struct ibv_sge sg = { .addr = 1, .length = 2, .lkey = 3 };
	struct ibv_recv_wr w[3] = {
		{ .wr_id = 1, .sg_list = &sg, .num_sge = 1, .next = &w[1] },
		{ .wr_id = 2, .sg_list = &sg, .num_sge = 2, .next = &w[2] },
		{ .wr_id = 3, .sg_list = &sg, .num_sge = 1 },
	};
	struct ibv_recv_wr *bad = NULL;

	srq->max_sge = 1;
	fake_ring(&srq->ring, 2, 32);
	EXPECT(eroce_post_srq_recv(&srq->vsrq.srq, w, &bad) == EINVAL);
	EXPECT(bad == &w[1] && srq->ring.ctrl->producer == 1);
	free_ring(&srq->ring);
	free(srq);
}

/*
 * Objects destroyed under the process (its device went away): what was
 * published before EROCE_RING_DEAD is still returned, then polls, arming
 * and posts fail with EIO and leave the rings alone.
 */
static void test_dead_rings(void)
{
	struct eroce_cq *cq = calloc(1, sizeof(*cq));
	struct eroce_qp *qp = fake_qp(IBV_QPT_RC);
	struct eroce_srq *srq = calloc(1, sizeof(*srq));
	struct ibv_cq_ex *cqx = &cq->vcq.cq_ex;
	struct ibv_qp_ex *qx = &qp->vqp.qp_ex;
	struct ibv_cq *ibcq = &cq->vcq.cq;
	struct ibv_poll_cq_attr pa = {};
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *sbad = NULL;
	struct ibv_recv_wr rwr = { .wr_id = 1 }, *rbad = NULL;
	struct ibv_wc wc[4];

	fake_ring(&cq->ring, 4, 32);
	pthread_spin_init(&cq->arm_lock, PTHREAD_PROCESS_PRIVATE);
	eroce_cq_set_ex_ops(cq, 0);
	put_cqe(&cq->ring, 1, IBV_WC_WR_FLUSH_ERR);
	put_cqe(&cq->ring, 2, IBV_WC_WR_FLUSH_ERR);
	cq->ring.ctrl->flags |= EROCE_RING_DEAD;
	EXPECT(eroce_poll_cq(ibcq, 1, wc) == 1 && wc[0].wr_id == 1);
	EXPECT(cqx->start_poll(cqx, &pa) == 0 && cqx->wr_id == 2);
	EXPECT(cqx->next_poll(cqx) == EIO);
	cqx->end_poll(cqx);
	EXPECT(cq->ring.ctrl->consumer == 2);
	EXPECT(eroce_poll_cq(ibcq, 4, wc) == -EIO);
	EXPECT(cqx->start_poll(cqx, &pa) == EIO);
	EXPECT(eroce_req_notify_cq(ibcq, 0) == EIO);
	EXPECT(cq->ring.ctrl->flags == EROCE_RING_DEAD);

	eroce_qp_set_ex_ops(qp, IBV_QP_EX_WITH_SEND);
	qp->sq.ctrl->flags |= EROCE_RING_DEAD;
	qp->rq.ctrl->flags |= EROCE_RING_DEAD;
	EXPECT(eroce_post_send(&qp->vqp.qp, &swr, &sbad) == EIO &&
	       sbad == &swr);
	qx->wr_start(qx);
	qx->wr_send(qx);
	EXPECT(qx->wr_complete(qx) == EIO);
	EXPECT(eroce_post_recv(&qp->vqp.qp, &rwr, &rbad) == EIO &&
	       rbad == &rwr);
	EXPECT(qp->sq.ctrl->producer == 0 && qp->rq.ctrl->producer == 0);

	srq->max_sge = 1;
	fake_ring(&srq->ring, 2, 32);
	srq->ring.ctrl->flags |= EROCE_RING_DEAD;
	rbad = NULL;
	EXPECT(eroce_post_srq_recv(&srq->vsrq.srq, &rwr, &rbad) == EIO &&
	       rbad == &rwr && srq->ring.ctrl->producer == 0);

	free_ring(&srq->ring);
	free(srq);
	free_ring(&qp->sq);
	free_ring(&qp->rq);
	free(qp);
	free_ring(&cq->ring);
	free(cq);
}

static void *resize_thread(void *ibcq)
{
	return (void *)(long)eroce_resize_cq(ibcq, 8);
}

/* an arm made while a resize is under way reaches the new ring */
static void test_resize_keeps_arm(void)
{
	struct eroce_cq *cq = calloc(1, sizeof(*cq));
	struct eroce_ring old, new;
	pthread_t t;
	void *ret;

	fake_ring(&cq->ring, 4, 32);
	pthread_spin_init(&cq->arm_lock, PTHREAD_PROCESS_PRIVATE);
	old = cq->ring;
	fake_ring(&new, 8, 32);
	resize_to = &new;
	sem_init(&resize_copied, 0, 0);
	EXPECT(pthread_create(&t, NULL, resize_thread, &cq->vcq.cq) == 0);
	sem_wait(&resize_copied);
	EXPECT(eroce_req_notify_cq(&cq->vcq.cq, 0) == 0);
	EXPECT(pthread_join(t, &ret) == 0 && ret == NULL);
	EXPECT(cq->ring.ctrl == new.ctrl);
	EXPECT(new.ctrl->flags & EROCE_CQ_ARM_NEXT);
	resize_to = NULL;
	sem_destroy(&resize_copied);
	pthread_spin_destroy(&cq->arm_lock);
	free_ring(&new);
	free_ring(&old);
	free(cq);
}

int main(void)
{
	test_post_send();
	test_free_running_indices();
	test_post_recv();
	test_wr_api();
	test_post_state();
	test_cq();
	test_srq();
	test_dead_rings();
	test_resize_keeps_arm();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
