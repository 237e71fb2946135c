// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_objects: exercise every verbs object of an eroce device through
 * libibverbs and the eroce provider, and print the results as KTAP.
 *
 *   eroce_objects [-d DEVICE]
 *
 * Opens DEVICE, or the first device whose name starts with "eroce", and
 * runs the subtests below in order.  Each subtest checks real return
 * values and errnos and stops at its first failed check.  Exit status:
 * 0 all passed, 1 something failed, 4 no device (skipped).
 *
 * Single-threaded; the leak check forks a child that creates objects and
 * exits without destroying them, and counts the device's objects with
 * `rdma resource show` before, during and after.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define PORT		1
#define MAX_SGE		64	/* more than any device limit we test */
#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4

static struct {
	const char *devname;
	struct ibv_context *ctx;
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	struct ibv_pd *pd;
	int gid_index;
	union ibv_gid gid;
} t = { .gid_index = -1 };

/* ---- tiny KTAP harness */

static void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		diag("%s:%d: check failed: %s (errno %d: %s)",		\
		     __FILE__, __LINE__, #cond, errno, strerror(errno)); \
		return KSFT_FAIL;					\
	}								\
} while (0)

/* a verb returning 0 or an errno value */
#define CHECK_RET(expr, want) do {					\
	int __r = (expr);						\
	if (__r != (want)) {						\
		diag("%s:%d: %s returned %d (%s), expected %d",		\
		     __FILE__, __LINE__, #expr, __r,			\
		     __r > 0 ? strerror(__r) : "-", (want));		\
		return KSFT_FAIL;					\
	}								\
} while (0)

/* a constructor that must fail with the given errno (0: any errno) */
#define CHECK_NULL(expr, want_errno) do {				\
	void *__p;							\
	errno = 0;							\
	__p = (expr);							\
	if (__p) {							\
		diag("%s:%d: %s unexpectedly succeeded",		\
		     __FILE__, __LINE__, #expr);			\
		return KSFT_FAIL;					\
	}								\
	if ((want_errno) && errno != (want_errno)) {			\
		diag("%s:%d: %s failed with errno %d (%s), expected %d", \
		     __FILE__, __LINE__, #expr, errno, strerror(errno),	\
		     (want_errno));					\
		return KSFT_FAIL;					\
	}								\
} while (0)

/* ---- helpers */

static struct ibv_cq *make_cq(int cqe)
{
	return ibv_create_cq(t.ctx, cqe, NULL, NULL, 0);
}

static struct ibv_qp *make_qp(enum ibv_qp_type type, struct ibv_cq *cq,
			      struct ibv_srq *srq, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.qp_type = type,
		.cap = {
			.max_send_wr = 16,
			.max_recv_wr = srq ? 0 : 16,
			.max_send_sge = 2,
			.max_recv_sge = srq ? 0 : 2,
			.max_inline_data = 64,
		},
	};
	struct ibv_qp *qp;

	qp = ibv_create_qp(t.pd, &attr);
	if (qp && cap)
		*cap = attr.cap;
	return qp;
}

static int qp_state(struct ibv_qp *qp, enum ibv_qp_state *state)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	int ret;

	ret = ibv_query_qp(qp, &attr, IBV_QP_STATE, &init);
	if (!ret)
		*state = attr.qp_state;
	return ret;
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };

	return ibv_modify_qp(qp, &attr, IBV_QP_STATE);
}

static void fill_av(struct ibv_ah_attr *av)
{
	memset(av, 0, sizeof(*av));
	av->is_global = 1;
	av->grh.dgid = t.gid;
	av->grh.sgid_index = t.gid_index;
	av->grh.hop_limit = 64;
	av->sl = 0;
	av->port_num = PORT;
}

/* ---- subtests */

static int test_query_device(void)
{
	struct ibv_device_attr_ex ex = {};

	CHECK_RET(ibv_query_device(t.ctx, &t.dev), 0);
	CHECK(t.dev.phys_port_cnt == 1);
	CHECK(t.dev.max_qp > 0 && t.dev.max_cq > 0 && t.dev.max_pd > 0);
	CHECK(t.dev.max_qp_wr > 0 && t.dev.max_cqe > 0 && t.dev.max_mr > 0);
	CHECK(t.dev.max_sge > 0 && t.dev.max_srq_sge > 0);
	CHECK(t.dev.fw_ver[0] != '\0');
	diag("max_qp_wr %d max_sge %d max_cqe %d max_srq_wr %d fw %s",
	     t.dev.max_qp_wr, t.dev.max_sge, t.dev.max_cqe, t.dev.max_srq_wr,
	     t.dev.fw_ver);

	CHECK_RET(ibv_query_device_ex(t.ctx, NULL, &ex), 0);
	CHECK(ex.orig_attr.max_qp_wr == t.dev.max_qp_wr);
	CHECK(ex.orig_attr.max_cqe == t.dev.max_cqe);
	return KSFT_PASS;
}

static int test_query_port(void)
{
	struct ibv_port_attr bad;

	CHECK_RET(ibv_query_port(t.ctx, PORT, &t.port), 0);
	CHECK(t.port.link_layer == IBV_LINK_LAYER_ETHERNET);
	CHECK(t.port.gid_tbl_len > 0);
	CHECK(t.port.active_mtu >= IBV_MTU_256 &&
	      t.port.active_mtu <= IBV_MTU_4096);
	CHECK(t.port.max_mtu >= t.port.active_mtu);
	diag("port state %s active_mtu %d gid_tbl_len %d",
	     ibv_port_state_str(t.port.state), 128 << t.port.active_mtu,
	     t.port.gid_tbl_len);
	CHECK(ibv_query_port(t.ctx, PORT + 1, &bad) != 0);
	return KSFT_PASS;
}

static int test_query_gid(void)
{
	static const uint8_t v4_prefix[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
	};
	struct ibv_gid_entry e;
	char buf[INET6_ADDRSTRLEN];
	union ibv_gid gid0;
	int i, tries;

	/* the default (link-local) GID */
	CHECK_RET(ibv_query_gid(t.ctx, PORT, 0, &gid0), 0);
	CHECK(gid0.raw[0] == 0xfe && (gid0.raw[1] & 0xc0) == 0x80);

	/* ib_core adds address GIDs asynchronously: allow it 10 s */
	for (tries = 0; tries < 100 && t.gid_index < 0; tries++) {
		if (tries)
			usleep(100 * 1000);
		for (i = 0; i < t.port.gid_tbl_len; i++) {
			if (ibv_query_gid_ex(t.ctx, PORT, i, &e, 0))
				continue;
			if (e.gid_type != IBV_GID_TYPE_ROCE_V2 ||
			    memcmp(e.gid.raw, v4_prefix, sizeof(v4_prefix)))
				continue;
			t.gid_index = i;
			t.gid = e.gid;
			break;
		}
	}
	if (t.gid_index < 0) {
		diag("no IPv4-mapped RoCEv2 GID on port %d", PORT);
		return KSFT_FAIL;
	}
	inet_ntop(AF_INET6, t.gid.raw, buf, sizeof(buf));
	diag("IPv4 GID index %d: %s", t.gid_index, buf);
	return KSFT_PASS;
}

static int test_pd(void)
{
	struct ibv_pd *a, *b;

	a = ibv_alloc_pd(t.ctx);
	CHECK(a);
	b = ibv_alloc_pd(t.ctx);
	CHECK(b);
	CHECK(a->handle != b->handle);
	CHECK(a->context == t.ctx);
	CHECK_RET(ibv_dealloc_pd(b), 0);
	CHECK_RET(ibv_dealloc_pd(a), 0);
	return KSFT_PASS;
}

static int test_mr(void)
{
	enum { NUM_KEYS = 16 };
	const size_t len = 3 * 4096 + 100;
	struct ibv_mr *mr, *mrs[NUM_KEYS];
	int i, adjacent = 0;
	char *buf;

	buf = malloc(len);
	CHECK(buf);
	memset(buf, 0xa5, len);

	mr = ibv_reg_mr(t.pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(mr);
	CHECK(mr->addr == buf && mr->length == len && mr->pd == t.pd);
	CHECK(mr->lkey != 0 || mr->rkey != 0);
	CHECK_RET(ibv_dereg_mr(mr), 0);

	/* read-only local MR is fine */
	mr = ibv_reg_mr(t.pd, buf, len, 0);
	CHECK(mr);
	CHECK_RET(ibv_dereg_mr(mr), 0);

	/*
	 * Keys a peer cannot guess from those it has seen: MRs registered
	 * one after the other get unrelated indexes (key >> 8), where a
	 * counter would give consecutive ones.
	 */
	for (i = 0; i < NUM_KEYS; i++) {
		mrs[i] = ibv_reg_mr(t.pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
		CHECK(mrs[i]);
	}
	for (i = 1; i < NUM_KEYS; i++) {
		uint32_t prev = mrs[i - 1]->rkey >> 8, cur = mrs[i]->rkey >> 8;

		if (cur == prev + 1 || cur + 1 == prev)
			adjacent++;
	}
	diag("%d MRs: index %#x, %#x, %#x, ...; %d adjacent to the one before",
	     NUM_KEYS, mrs[0]->rkey >> 8, mrs[1]->rkey >> 8, mrs[2]->rkey >> 8,
	     adjacent);
	for (i = 0; i < NUM_KEYS; i++)
		CHECK_RET(ibv_dereg_mr(mrs[i]), 0);
	CHECK(adjacent <= 2);

	/* remote write needs local write */
	CHECK_NULL(ibv_reg_mr(t.pd, buf, len, IBV_ACCESS_REMOTE_WRITE), EINVAL);
	CHECK_NULL(ibv_reg_mr(t.pd, buf, len, IBV_ACCESS_REMOTE_ATOMIC),
		   EINVAL);
	/* zero length */
	CHECK_NULL(ibv_reg_mr(t.pd, buf, 0, IBV_ACCESS_LOCAL_WRITE), EINVAL);

	free(buf);
	return KSFT_PASS;
}

static int test_cq(void)
{
	struct ibv_cq_init_attr_ex cq_attr = {
		.cqe = 31,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM,
	};
	struct ibv_poll_cq_attr poll_attr = {};
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq, *ev_cq;
	struct ibv_cq_ex *cqx;
	struct ibv_wc wc[4];
	void *ev_ctx;
	int flags;

	ch = ibv_create_comp_channel(t.ctx);
	CHECK(ch);
	cq = ibv_create_cq(t.ctx, 100, (void *)0x1234, ch, 0);
	CHECK(cq);
	CHECK(cq->cqe >= 100);
	CHECK(cq->channel == ch && cq->cq_context == (void *)0x1234);
	diag("cqe 100 -> %d", cq->cqe);

	CHECK_RET(ibv_poll_cq(cq, 4, wc), 0);
	CHECK_RET(ibv_req_notify_cq(cq, 0), 0);
	CHECK_RET(ibv_req_notify_cq(cq, 1), 0);
	CHECK_RET(ibv_poll_cq(cq, 4, wc), 0);

	/* armed but nothing completed: no event */
	flags = fcntl(ch->fd, F_GETFL);
	CHECK(fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK) == 0);
	errno = 0;
	CHECK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == -1);
	CHECK(errno == EAGAIN);

	/* a channel with a CQ on it cannot go away */
	CHECK(ibv_destroy_comp_channel(ch) != 0);
	CHECK_RET(ibv_destroy_cq(cq), 0);
	CHECK_RET(ibv_destroy_comp_channel(ch), 0);

	/* the extended CQ and its polling interface */
	cqx = ibv_create_cq_ex(t.ctx, &cq_attr);
	CHECK(cqx);
	CHECK(ibv_cq_ex_to_cq(cqx)->cqe >= 31);
	CHECK_RET(ibv_start_poll(cqx, &poll_attr), ENOENT);
	CHECK_RET(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);

	/* completion timestamps are not supported */
	cq_attr.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	CHECK_NULL(ibv_create_cq_ex(t.ctx, &cq_attr), EOPNOTSUPP);
	return KSFT_PASS;
}

static int check_caps(const struct ibv_qp_cap *cap, bool srq)
{
	CHECK(cap->max_send_wr >= 16 && cap->max_send_sge >= 2);
	CHECK(cap->max_inline_data >= 64);
	if (!srq)
		CHECK(cap->max_recv_wr >= 16 && cap->max_recv_sge >= 2);
	return KSFT_PASS;
}

static int test_rc_qp(void)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a, q;
	enum ibv_qp_state st;
	struct ibv_qp_cap cap;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	cq = make_cq(64);
	CHECK(cq);
	qp = make_qp(IBV_QPT_RC, cq, NULL, &cap);
	CHECK(qp);
	CHECK(qp->qp_num > 1 && qp->qp_type == IBV_QPT_RC);
	if (check_caps(&cap, false))
		return KSFT_FAIL;
	CHECK_RET(qp_state(qp, &st), 0);
	CHECK(st == IBV_QPS_RESET);

	/* RESET -> RTR skips INIT */
	CHECK_RET(to_state(qp, IBV_QPS_RTR), EINVAL);
	CHECK_RET(to_state(qp, IBV_QPS_RTS), EINVAL);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = PORT;
	a.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	/* INIT needs the port and access flags */
	CHECK_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	CHECK_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qp->qp_num;
	a.rq_psn = 0x123;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	fill_av(&a.ah_attr);
	/* RTR without the destination QPN is refused */
	CHECK_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				IBV_QP_PATH_MTU | IBV_QP_RQ_PSN |
				IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER), EINVAL);
	CHECK_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER), 0);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0x456;
	a.max_rd_atomic = 1;
	CHECK_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC), 0);

	memset(&q, 0, sizeof(q));
	CHECK_RET(ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_PATH_MTU |
			       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			       IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			       IBV_QP_MAX_QP_RD_ATOMIC |
			       IBV_QP_MAX_DEST_RD_ATOMIC |
			       IBV_QP_MIN_RNR_TIMER | IBV_QP_ACCESS_FLAGS |
			       IBV_QP_PORT | IBV_QP_AV | IBV_QP_CAP, &init), 0);
	CHECK(q.qp_state == IBV_QPS_RTS);
	CHECK(q.path_mtu == IBV_MTU_1024);
	CHECK(q.dest_qp_num == qp->qp_num);
	CHECK(q.rq_psn == 0x123 && q.sq_psn == 0x456);
	CHECK(q.timeout == 14 && q.retry_cnt == 7 && q.rnr_retry == 7);
	CHECK(q.max_rd_atomic == 1 && q.max_dest_rd_atomic == 1);
	CHECK(q.min_rnr_timer == 12);
	CHECK(q.qp_access_flags ==
	      (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE));
	CHECK(q.port_num == PORT);
	CHECK(q.ah_attr.is_global &&
	      !memcmp(q.ah_attr.grh.dgid.raw, t.gid.raw, 16));
	CHECK(q.ah_attr.grh.sgid_index == t.gid_index);
	CHECK(init.qp_type == IBV_QPT_RC);
	CHECK(init.cap.max_send_wr == cap.max_send_wr);
	CHECK(init.cap.max_recv_wr == cap.max_recv_wr);

	/* RTS -> INIT is not a legal transition */
	CHECK_RET(to_state(qp, IBV_QPS_INIT), EINVAL);

	CHECK_RET(to_state(qp, IBV_QPS_ERR), 0);
	CHECK_RET(qp_state(qp, &st), 0);
	CHECK(st == IBV_QPS_ERR);
	CHECK_RET(to_state(qp, IBV_QPS_RESET), 0);
	CHECK_RET(qp_state(qp, &st), 0);
	CHECK(st == IBV_QPS_RESET);

	CHECK_RET(ibv_destroy_qp(qp), 0);
	CHECK_RET(ibv_destroy_cq(cq), 0);
	return KSFT_PASS;
}

static int test_ud_qp(void)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a, q;
	enum ibv_qp_state st;
	struct ibv_qp_cap cap;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	cq = make_cq(64);
	CHECK(cq);
	qp = make_qp(IBV_QPT_UD, cq, NULL, &cap);
	CHECK(qp);
	CHECK(qp->qp_type == IBV_QPT_UD);
	if (check_caps(&cap, false))
		return KSFT_FAIL;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = PORT;
	a.qkey = 0x11111111;
	/* a UD QP needs a Q_Key in INIT */
	CHECK_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT), EINVAL);
	CHECK_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_QKEY), 0);
	CHECK_RET(to_state(qp, IBV_QPS_RTR), 0);
	/* INIT -> RTS skips RTR; we are in RTR now, RTR -> INIT is illegal */
	CHECK_RET(to_state(qp, IBV_QPS_INIT), EINVAL);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x789;
	CHECK_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);

	memset(&q, 0, sizeof(q));
	CHECK_RET(ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_QKEY |
			       IBV_QP_SQ_PSN | IBV_QP_PORT |
			       IBV_QP_PKEY_INDEX, &init), 0);
	CHECK(q.qp_state == IBV_QPS_RTS);
	CHECK(q.qkey == 0x11111111);
	CHECK(q.sq_psn == 0x789);
	CHECK(q.pkey_index == 0);
	CHECK(init.qp_type == IBV_QPT_UD);

	CHECK_RET(to_state(qp, IBV_QPS_ERR), 0);
	CHECK_RET(qp_state(qp, &st), 0);
	CHECK(st == IBV_QPS_ERR);
	CHECK_RET(to_state(qp, IBV_QPS_RESET), 0);
	CHECK_RET(qp_state(qp, &st), 0);
	CHECK(st == IBV_QPS_RESET);

	CHECK_RET(ibv_destroy_qp(qp), 0);
	CHECK_RET(ibv_destroy_cq(cq), 0);
	return KSFT_PASS;
}

static int test_qp_ex(void)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = t.pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_READ,
		.cap = {
			.max_send_wr = 8, .max_recv_wr = 8,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
	};
	struct ibv_sge sgl[MAX_SGE] = {};
	struct ibv_qp_ex *qpx;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	cq = make_cq(16);
	CHECK(cq);
	attr.send_cq = attr.recv_cq = cq;
	qp = ibv_create_qp_ex(t.ctx, &attr);
	CHECK(qp);
	qpx = ibv_qp_to_qp_ex(qp);
	CHECK(qpx);
	CHECK(qpx->wr_send && qpx->wr_rdma_write && qpx->wr_rdma_read);
	CHECK(qpx->wr_start && qpx->wr_complete && qpx->wr_abort);

	/* a batch that is aborted never reaches the ring */
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 0, 0, 0);
	ibv_wr_abort(qpx);

	/* too many SGEs: wr_complete reports it and posts nothing */
	CHECK(attr.cap.max_send_sge < MAX_SGE);
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, attr.cap.max_send_sge + 1, sgl);
	CHECK_RET(ibv_wr_complete(qpx), EINVAL);

	CHECK_RET(ibv_destroy_qp(qp), 0);

	/* UD has no RDMA */
	attr.qp_type = IBV_QPT_UD;
	CHECK_NULL(ibv_create_qp_ex(t.ctx, &attr), EOPNOTSUPP);

	CHECK_RET(ibv_destroy_cq(cq), 0);
	return KSFT_PASS;
}

static int test_srq(void)
{
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = 64, .max_sge = 2 },
	};
	struct ibv_recv_wr rwr = {}, *bad;
	struct ibv_sge sge = {};
	struct ibv_srq_attr a;
	struct ibv_qp_cap cap;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	char buf[64];
	struct ibv_mr *mr;

	srq = ibv_create_srq(t.pd, &init);
	CHECK(srq);
	CHECK(init.attr.max_wr >= 64 && init.attr.max_sge >= 2);

	memset(&a, 0, sizeof(a));
	a.srq_limit = 10;
	CHECK_RET(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT), 0);
	memset(&a, 0, sizeof(a));
	CHECK_RET(ibv_query_srq(srq, &a), 0);
	CHECK(a.srq_limit == 10);
	CHECK(a.max_wr >= 64 && a.max_sge >= 2);

	/* the kernel cannot resize an SRQ */
	a.max_wr = 128;
	CHECK_RET(ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR), EOPNOTSUPP);

	mr = ibv_reg_mr(t.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr);
	sge.addr = (uintptr_t)buf;
	sge.length = sizeof(buf);
	sge.lkey = mr->lkey;
	rwr.wr_id = 7;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	CHECK_RET(ibv_post_srq_recv(srq, &rwr, &bad), 0);
	rwr.num_sge = init.attr.max_sge + 1;
	bad = NULL;
	CHECK_RET(ibv_post_srq_recv(srq, &rwr, &bad), EINVAL);
	CHECK(bad == &rwr);

	/* a QP on the SRQ has no receive queue of its own */
	cq = make_cq(16);
	CHECK(cq);
	qp = make_qp(IBV_QPT_RC, cq, srq, &cap);
	CHECK(qp);
	CHECK(qp->srq == srq);
	rwr.num_sge = 1;
	CHECK(ibv_post_recv(qp, &rwr, &bad) != 0);
	CHECK_RET(ibv_destroy_qp(qp), 0);
	CHECK_RET(ibv_destroy_cq(cq), 0);

	CHECK_RET(ibv_destroy_srq(srq), 0);
	CHECK_RET(ibv_dereg_mr(mr), 0);
	return KSFT_PASS;
}

static int test_ah(void)
{
	struct ibv_gid_entry e;
	struct ibv_ah_attr av;
	struct ibv_ah *ah;

	fill_av(&av);
	ah = ibv_create_ah(t.pd, &av);
	CHECK(ah);
	CHECK(ah->pd == t.pd);
	CHECK_RET(ibv_destroy_ah(ah), 0);

	/*
	 * The bits of the flow label above its 20 are ignored: UCX passes
	 * ~0 (with a DLID of 0xc000, meaningless on RoCE) for its UD AHs
	 */
	av.grh.flow_label = ~0u;
	av.dlid = 0xc000;
	av.grh.traffic_class = 106;
	ah = ibv_create_ah(t.pd, &av);
	CHECK(ah);
	CHECK_RET(ibv_destroy_ah(ah), 0);
	fill_av(&av);

	/* RoCE address handles need a GRH */
	av.is_global = 0;
	CHECK_NULL(ibv_create_ah(t.pd, &av), EINVAL);
	/* and a source GID that exists (sgid_index is 8 bits wide) */
	fill_av(&av);
	av.grh.sgid_index = 255;
	if (!ibv_query_gid_ex(t.ctx, PORT, 255, &e, 0)) {
		diag("GID 255 is in use; skipping the empty-GID check");
		return KSFT_PASS;
	}
	CHECK_NULL(ibv_create_ah(t.pd, &av), 0);
	return KSFT_PASS;
}

static int test_post_and_poll_empty(void)
{
	struct ibv_send_wr swr = {}, *sbad;
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_sge sge[MAX_SGE] = {};
	struct ibv_qp_cap cap;
	struct ibv_qp_attr a;
	struct ibv_wc wc[4];
	struct ibv_cq *cq;
	struct ibv_qp *qp, *ud;
	struct ibv_mr *mr;
	char buf[1024];
	unsigned int n;
	int ret;

	mr = ibv_reg_mr(t.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr);
	cq = make_cq(64);
	CHECK(cq);
	qp = make_qp(IBV_QPT_RC, cq, NULL, &cap);
	CHECK(qp);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = PORT;
	CHECK_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);

	sge[0].addr = (uintptr_t)buf;
	sge[0].length = 64;
	sge[0].lkey = mr->lkey;
	rwr.wr_id = 1;
	rwr.sg_list = sge;
	rwr.num_sge = 1;
	CHECK_RET(ibv_post_recv(qp, &rwr, &rbad), 0);
	CHECK_RET(ibv_poll_cq(cq, 4, wc), 0);

	/* too many SGEs: refused, nothing queued */
	CHECK(cap.max_recv_sge < MAX_SGE && cap.max_send_sge < MAX_SGE);
	rwr.num_sge = cap.max_recv_sge + 1;
	rbad = NULL;
	CHECK_RET(ibv_post_recv(qp, &rwr, &rbad), EINVAL);
	CHECK(rbad == &rwr);

	/* fill the RQ: nothing consumes it, so it must report ENOMEM */
	rwr.num_sge = 1;
	for (n = 1; n <= 65536; n++) {
		ret = ibv_post_recv(qp, &rwr, &rbad);
		if (ret)
			break;
	}
	CHECK(ret == ENOMEM);
	CHECK(n >= cap.max_recv_wr && (n & (n - 1)) == 0);
	diag("RQ max_recv_wr %u holds %u", cap.max_recv_wr, n);
	CHECK_RET(ibv_poll_cq(cq, 4, wc), 0);

	/* send-side checks that fail before anything is queued */
	swr.wr_id = 2;
	swr.opcode = IBV_WR_SEND;
	swr.sg_list = sge;
	swr.num_sge = cap.max_send_sge + 1;
	sbad = NULL;
	CHECK_RET(ibv_post_send(qp, &swr, &sbad), EINVAL);
	CHECK(sbad == &swr);

	swr.num_sge = 1;
	sge[0].length = cap.max_inline_data + 1;
	swr.send_flags = IBV_SEND_INLINE;
	sbad = NULL;
	CHECK_RET(ibv_post_send(qp, &swr, &sbad), EINVAL);
	CHECK(sbad == &swr);

	swr.send_flags = 0;
	sge[0].length = 64;
	swr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;	/* needs 8 bytes */
	sbad = NULL;
	CHECK_RET(ibv_post_send(qp, &swr, &sbad), EINVAL);
	CHECK(sbad == &swr);

	ud = make_qp(IBV_QPT_UD, cq, NULL, NULL);
	CHECK(ud);
	swr.opcode = IBV_WR_RDMA_WRITE;			/* not on UD */
	sbad = NULL;
	CHECK_RET(ibv_post_send(ud, &swr, &sbad), EINVAL);
	CHECK(sbad == &swr);
	CHECK_RET(ibv_destroy_qp(ud), 0);

	CHECK_RET(ibv_destroy_qp(qp), 0);
	CHECK_RET(ibv_poll_cq(cq, 4, wc), 0);
	CHECK_RET(ibv_destroy_cq(cq), 0);
	CHECK_RET(ibv_dereg_mr(mr), 0);
	return KSFT_PASS;
}

static int test_limits(void)
{
	struct ibv_qp_init_attr qa;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	CHECK_NULL(ibv_create_cq(t.ctx, t.dev.max_cqe + 1, NULL, NULL, 0),
		   EINVAL);

	cq = make_cq(16);
	CHECK(cq);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = t.dev.max_qp_wr + 1;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	CHECK_NULL(ibv_create_qp(t.pd, &qa), EINVAL);

	qa.cap.max_send_wr = 1;
	qa.cap.max_recv_wr = t.dev.max_qp_wr + 1;
	CHECK_NULL(ibv_create_qp(t.pd, &qa), EINVAL);

	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = t.dev.max_sge + 1;
	CHECK_NULL(ibv_create_qp(t.pd, &qa), EINVAL);

	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = t.dev.max_sge + 1;
	CHECK_NULL(ibv_create_qp(t.pd, &qa), EINVAL);

	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = 1 << 20;
	CHECK_NULL(ibv_create_qp(t.pd, &qa), EINVAL);

	/* and the limits themselves are accepted */
	qa.cap.max_inline_data = 0;
	qa.cap.max_send_sge = t.dev.max_sge;
	qa.cap.max_recv_sge = t.dev.max_sge;
	qp = ibv_create_qp(t.pd, &qa);
	CHECK(qp);
	CHECK(qa.cap.max_send_sge == (uint32_t)t.dev.max_sge);
	CHECK_RET(ibv_destroy_qp(qp), 0);

	CHECK_RET(ibv_destroy_cq(cq), 0);
	return KSFT_PASS;
}

/*
 * What eroce does not have answers EOPNOTSUPP, never EINVAL or ENOSYS, so
 * that tools and test suites can tell "not here" from "wrong".
 */
static int test_unsupported(void)
{
	struct ibv_qp_init_attr qa;
	struct ibv_wq_init_attr wa;
	struct ibv_alloc_dm_attr da;
	union ibv_gid mgid;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	static char buf[4096];
	enum ibv_qp_type types[] = { IBV_QPT_RAW_PACKET };
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};
	unsigned int i;

	/* memory windows are supported (mw.sh tests what they do) */
	mw = ibv_alloc_mw(t.pd, IBV_MW_TYPE_1);
	CHECK(mw && mw->type == IBV_MW_TYPE_1);
	CHECK_RET(ibv_dealloc_mw(mw), 0);
	mw = ibv_alloc_mw(t.pd, IBV_MW_TYPE_2);
	CHECK(mw && mw->type == IBV_MW_TYPE_2);
	CHECK_RET(ibv_dealloc_mw(mw), 0);

	cq = make_cq(16);
	CHECK(cq);

	/* re-registration is supported (lifetimes.sh tests what it does) */
	mr = ibv_reg_mr(t.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr);
	CHECK_RET(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			       IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_REMOTE_READ), 0);
	CHECK_RET(ibv_dereg_mr(mr), 0);

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = cq;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		qa.qp_type = types[i];
		CHECK_NULL(ibv_create_qp(t.pd, &qa), EOPNOTSUPP);
	}
	/* XRC QPs and SRQs need an XRC domain first */
	CHECK_NULL(ibv_open_xrcd(t.ctx, &xa), EOPNOTSUPP);

	qa.qp_type = IBV_QPT_UD;
	qp = ibv_create_qp(t.pd, &qa);
	CHECK(qp);
	/* multicast is supported: attach and detach, once */
	memset(&mgid, 0, sizeof(mgid));
	mgid.raw[0] = 0xff;
	mgid.raw[1] = 0x0e;
	mgid.raw[15] = 1;
	CHECK_RET(ibv_attach_mcast(qp, &mgid, 0), 0);
	CHECK_RET(ibv_detach_mcast(qp, &mgid, 0), 0);
	CHECK_RET(ibv_detach_mcast(qp, &mgid, 0), EINVAL);

	/* a work request eroce lacks, against one the QP type lacks */
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
					 .port_num = PORT, .qkey = 0x11 };
		struct ibv_send_wr wr = { .opcode = IBV_WR_TSO }, *bad;

		CHECK_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE |
					IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					IBV_QP_QKEY), 0);
		CHECK_RET(to_state(qp, IBV_QPS_RTR), 0);
		a.qp_state = IBV_QPS_RTS;
		CHECK_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN),
			  0);
		CHECK_RET(ibv_post_send(qp, &wr, &bad), EOPNOTSUPP);
		wr.opcode = IBV_WR_RDMA_WRITE;
		CHECK_RET(ibv_post_send(qp, &wr, &bad), EINVAL);
		wr.opcode = IBV_WR_ATOMIC_WRITE;	/* RC only */
		CHECK_RET(ibv_post_send(qp, &wr, &bad), EINVAL);
		/* windows are bound and invalidated on RC and UC QPs */
		wr.opcode = IBV_WR_BIND_MW;
		CHECK_RET(ibv_post_send(qp, &wr, &bad), EINVAL);
		wr.opcode = IBV_WR_LOCAL_INV;
		CHECK_RET(ibv_post_send(qp, &wr, &bad), EINVAL);
	}
	CHECK_RET(ibv_destroy_qp(qp), 0);

	memset(&wa, 0, sizeof(wa));
	wa.wq_type = IBV_WQT_RQ;
	wa.max_wr = wa.max_sge = 1;
	wa.pd = t.pd;
	wa.cq = cq;
	CHECK_NULL(ibv_create_wq(t.ctx, &wa), EOPNOTSUPP);

	memset(&da, 0, sizeof(da));
	da.length = 4096;
	CHECK_NULL(ibv_alloc_dm(t.ctx, &da), EOPNOTSUPP);

	CHECK_RET(ibv_destroy_cq(cq), 0);
	return KSFT_PASS;
}

/* ---- leak check */

struct res_counts {
	long pd, cq, qp, mr, srq, ctx;
};

static int read_counts(struct res_counts *c)
{
	char line[512], key[32];
	char *p;
	FILE *f;
	int found = 0, n;
	long v;

	f = popen("rdma resource show 2>/dev/null", "r");
	if (!f)
		return -1;
	memset(c, 0, sizeof(*c));
	while (fgets(line, sizeof(line), f)) {
		/* "0: eroce0: pd 1 cq 2 qp 1 cm_id 0 mr 0 ctx 0 srq 0" */
		p = strchr(line, ':');
		if (!p || strncmp(p + 2, t.devname, strlen(t.devname)) ||
		    p[2 + strlen(t.devname)] != ':')
			continue;
		p += 3 + strlen(t.devname);
		found = 1;
		while (sscanf(p, " %31s %ld%n", key, &v, &n) == 2) {
			p += n;
			if (!strcmp(key, "pd"))
				c->pd = v;
			else if (!strcmp(key, "cq"))
				c->cq = v;
			else if (!strcmp(key, "qp"))
				c->qp = v;
			else if (!strcmp(key, "mr"))
				c->mr = v;
			else if (!strcmp(key, "srq"))
				c->srq = v;
			else if (!strcmp(key, "ctx"))
				c->ctx = v;
		}
	}
	pclose(f);
	return found ? 0 : -1;
}

static void print_counts(const char *what, const struct res_counts *c)
{
	diag("%s: pd %ld cq %ld qp %ld mr %ld srq %ld ctx %ld", what,
	     c->pd, c->cq, c->qp, c->mr, c->srq, c->ctx);
}

static bool same_counts(const struct res_counts *a,
			const struct res_counts *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* child: open the device again, create one of everything, wait, exit */
static void leak_child(int ready_fd, int go_fd)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_qp_init_attr qa = {};
	struct ibv_ah_attr av;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	static char buf[4096];
	char c = 0;
	int i, n;

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), t.devname))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		_exit(2);
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	if (!cq || !ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) ||
	    !ibv_create_srq(pd, &sa))
		_exit(3);
	qa.send_cq = qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (!ibv_create_qp(pd, &qa))
		_exit(3);
	fill_av(&av);
	if (!ibv_create_ah(pd, &av))
		_exit(3);

	if (write(ready_fd, &c, 1) != 1 || read(go_fd, &c, 1) != 1)
		_exit(4);
	_exit(0);	/* no destroy, no close: the kernel must clean up */
}

static int test_leak(void)
{
	struct res_counts before, during, after;
	int ready[2], go[2], status, i;
	char c = 0;
	pid_t pid;

	if (read_counts(&before)) {
		diag("`rdma resource show` lists no %s", t.devname);
		return KSFT_FAIL;
	}
	print_counts("before", &before);

	CHECK(pipe(ready) == 0 && pipe(go) == 0);
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		leak_child(ready[1], go[0]);
	}
	close(ready[1]);
	close(go[0]);

	if (read(ready[0], &c, 1) != 1) {
		waitpid(pid, &status, 0);
		diag("child failed to create its objects (status %d)",
		     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return KSFT_FAIL;
	}
	CHECK(read_counts(&during) == 0);
	print_counts("child alive", &during);
	CHECK(during.pd == before.pd + 1 && during.cq == before.cq + 1);
	CHECK(during.qp == before.qp + 1 && during.mr == before.mr + 1);
	CHECK(during.srq == before.srq + 1);

	CHECK(write(go[1], &c, 1) == 1);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(ready[0]);
	close(go[1]);

	/* process teardown is synchronous, but give deferred work a moment */
	for (i = 0; i < 50; i++) {
		CHECK(read_counts(&after) == 0);
		if (same_counts(&before, &after))
			break;
		usleep(100 * 1000);
	}
	print_counts("after", &after);
	CHECK(same_counts(&before, &after));
	return KSFT_PASS;
}

/*
 * @n receives (wr_id @first..) on a new RC QP completing on @cq, flushed
 * into @cq: the QP goes to ERR, and a SEND posted then (on @scq) rings
 * the doorbell of a QP that never sent, which flushes everything queued
 * under the engine lock before it returns.  The QP is returned for the
 * caller to destroy.
 */
static struct ibv_qp *flush_recvs(struct ibv_cq *cq, struct ibv_cq *scq,
				  int n, uint64_t first)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = n, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = PORT };
	struct ibv_recv_wr rwr = {}, *bad_rwr;
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *bad_swr;
	struct ibv_qp *qp;
	int i;

	qp = ibv_create_qp(t.pd, &ia);
	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return NULL;
	for (i = 0; i < n; i++) {
		rwr.wr_id = first + i;
		if (ibv_post_recv(qp, &rwr, &bad_rwr))
			return NULL;
	}
	if (to_state(qp, IBV_QPS_ERR) || ibv_post_send(qp, &swr, &bad_swr))
		return NULL;
	return qp;
}

/* exactly @n flushed receives wr_id @first.. on @cq, then nothing */
static bool polled_in_order(struct ibv_cq *cq, int n, uint64_t first)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < n; i++) {
		if (ibv_poll_cq(cq, 1, &wc) != 1 || wc.wr_id != first + i ||
		    wc.status != IBV_WC_WR_FLUSH_ERR) {
			diag("completion %d of %d: not wr_id %llu flushed", i,
			     n, (unsigned long long)(first + i));
			return false;
		}
	}
	return ibv_poll_cq(cq, 1, &wc) == 0;
}

/*
 * ibv_resize_cq: the completions not polled yet survive, in order; a size
 * below them is EINVAL and changes nothing; the new ring takes more than
 * the old one held; an armed CQ stays armed.
 */
static int test_cq_resize(void)
{
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq, *scq, *ev_cq;
	struct ibv_qp *qp1, *qp2, *qp3;
	struct ibv_wc wc[3];
	struct pollfd pfd;
	void *ev_ctx;

	ch = ibv_create_comp_channel(t.ctx);
	CHECK(ch);
	cq = ibv_create_cq(t.ctx, 16, NULL, ch, 0);
	scq = make_cq(16);
	CHECK(cq && scq);
	CHECK(cq->cqe == 16);

	qp1 = flush_recvs(cq, scq, 10, 0);
	CHECK(qp1);
	CHECK_RET(ibv_resize_cq(cq, 0), EINVAL);
	CHECK_RET(ibv_resize_cq(cq, t.dev.max_cqe + 1), EINVAL);
	/* 10 outstanding: 4 and 8 slots are too few */
	CHECK_RET(ibv_resize_cq(cq, 4), EINVAL);
	CHECK_RET(ibv_resize_cq(cq, 8), EINVAL);
	CHECK(cq->cqe == 16);
	CHECK_RET(ibv_poll_cq(cq, 3, wc), 3);
	CHECK(wc[0].wr_id == 0 && wc[2].wr_id == 2);
	/* 7 outstanding: 8 slots hold them */
	CHECK_RET(ibv_resize_cq(cq, 7), 0);
	CHECK(cq->cqe == 8);
	CHECK_RET(ibv_resize_cq(cq, 100), 0);
	CHECK(cq->cqe == 128);
	diag("16 -> 8 with 7 completions pending -> 128");
	CHECK(polled_in_order(cq, 7, 3));

	/* more than the first ring held */
	qp2 = flush_recvs(cq, scq, 40, 100);
	CHECK(qp2);
	CHECK(polled_in_order(cq, 40, 100));

	/* armed, resized, then a completion: the event comes */
	CHECK_RET(ibv_req_notify_cq(cq, 0), 0);
	CHECK_RET(ibv_resize_cq(cq, 32), 0);
	qp3 = flush_recvs(cq, scq, 1, 200);
	CHECK(qp3);
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	CHECK(poll(&pfd, 1, 10000) == 1);
	CHECK_RET(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	CHECK(ev_cq == cq);
	ibv_ack_cq_events(cq, 1);
	CHECK(polled_in_order(cq, 1, 200));

	CHECK_RET(ibv_destroy_qp(qp1), 0);
	CHECK_RET(ibv_destroy_qp(qp2), 0);
	CHECK_RET(ibv_destroy_qp(qp3), 0);
	CHECK_RET(ibv_destroy_cq(cq), 0);
	CHECK_RET(ibv_destroy_cq(scq), 0);
	CHECK_RET(ibv_destroy_comp_channel(ch), 0);
	return KSFT_PASS;
}

/* ---- main */

struct subtest {
	const char *name;
	int (*fn)(void);
	bool needs_gid;
};

static const struct subtest tests[] = {
	{ "query_device", test_query_device, false },
	{ "query_port", test_query_port, false },
	{ "query_gid", test_query_gid, false },
	{ "pd", test_pd, false },
	{ "mr", test_mr, false },
	{ "cq", test_cq, false },
	{ "cq_resize", test_cq_resize, false },
	{ "rc_qp_states", test_rc_qp, true },
	{ "ud_qp_states", test_ud_qp, false },
	{ "qp_ex", test_qp_ex, false },
	{ "srq", test_srq, false },
	{ "ah", test_ah, true },
	{ "post_recv_poll_empty", test_post_and_poll_empty, false },
	{ "limits", test_limits, false },
	{ "unsupported_eopnotsupp", test_unsupported, false },
	{ "leak_on_exit", test_leak, true },
};

static struct ibv_context *open_dev(const char *want)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	const char *name;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n && !ctx; i++) {
		name = ibv_get_device_name(list[i]);
		if (want ? strcmp(name, want) : strncmp(name, "eroce", 5))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			diag("ibv_open_device(%s): %s", name, strerror(errno));
		else
			t.devname = strdup(name);
	}
	ibv_free_device_list(list);
	return ctx;
}

int main(int argc, char **argv)
{
	const size_t ntests = sizeof(tests) / sizeof(tests[0]);
	int opt, failed = 0, ret;
	const char *want = NULL;
	size_t i;

	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt != 'd') {
			fprintf(stderr, "usage: %s [-d DEVICE]\n", argv[0]);
			return 2;
		}
		want = optarg;
	}

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n");
	t.ctx = open_dev(want);
	if (!t.ctx) {
		printf("1..0 # SKIP no %s device\n", want ? want : "eroce*");
		return KSFT_SKIP;
	}
	printf("1..%zu\n", ntests + 1);
	diag("device %s", t.devname);

	t.pd = ibv_alloc_pd(t.ctx);
	for (i = 0; i < ntests; i++) {
		if (!t.pd) {
			printf("not ok %zu %s # no PD: %s\n", i + 1,
			       tests[i].name, strerror(errno));
			failed++;
			continue;
		}
		if (tests[i].needs_gid && t.gid_index < 0) {
			printf("not ok %zu %s # no IPv4 GID\n", i + 1,
			       tests[i].name);
			failed++;
			continue;
		}
		ret = tests[i].fn();
		printf("%s %zu %s\n", ret == KSFT_PASS ? "ok" : "not ok", i + 1,
		       tests[i].name);
		if (ret != KSFT_PASS)
			failed++;
	}

	/* the shared PD and the context close cleanly */
	ret = t.pd ? ibv_dealloc_pd(t.pd) : -1;
	if (ibv_close_device(t.ctx))
		ret = -1;
	printf("%s %zu close_device\n", ret ? "not ok" : "ok", ntests + 1);
	failed += !!ret;

	diag("%zu passed, %d failed", ntests + 1 - failed, failed);
	return failed ? KSFT_FAIL : KSFT_PASS;
}
