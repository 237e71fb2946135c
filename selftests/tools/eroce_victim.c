// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_victim: live RC (and UD) QPs for selftests/tools/eroce_hostile.py
 * to aim forged packets at.  One process opens both devices (ib_core's
 * shared netns mode shows every RDMA device in every namespace) and
 * connects QP pairs A (on -a, the "peer") <-> B (on -b, the "victim").
 * Commands on stdin, one reply line each on stdout:
 *
 *   pair [MTU]    new RC pair, path MTU 1024 or MTU (256..4096); "pair ID
 *                 a_qpn=.. b_qpn=.. b_epsn=.. b_sq_psn=.. b_rkey=.. b_va=..
 *                 b_len=.. other_rkey=.." (other_rkey: an MR of another PD
 *                 on B)
 *   ud            new UD QP on B; "ud qpn=.. qkey=.. psn=.."
 *   ping ID       one SEND A->B and one B->A, data checked; "ok ID b_epsn=..
 *                 b_sq_psn=.." or "fail ID reason"
 *   wc ID         B's completions so far: "wc ID n=.. errors=.. first=STATUS"
 *   state ID      "state ID a=STATE b=STATE"
 *   rate ID KBPS  B's rate limit (ibv_modify_qp_rate_limit), kb/s; "ok ID" or
 *                 "fail ID reason"
 *   quit
 *
 * b_epsn is the PSN B's responder expects next and b_sq_psn the next PSN
 * B sends, tracked here (one packet per ping each way).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "tool_util.h"

#define MAX_PAIRS	64
#define MR_LEN		65536
#define MSG_LEN		64
#define NRECV		16
#define QKEY		0x11111111u

struct end {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint32_t psn;
	uint32_t wcs, errors;
	int first_err;
};

struct pair {
	struct end a, b;
	uint32_t b_epsn, b_sq_psn;
	uint32_t pings;
};

static struct ibv_context *ctx_a, *ctx_b;
static int gidx = 1;
static struct pair pairs[MAX_PAIRS];
static int npairs;
static struct ibv_mr *other_mr;
static struct ibv_pd *other_pd;

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_context *c = eroce_open_device(name);

	if (!c)
		eroce_die("cannot open %s: %s", name, strerror(errno));
	return c;
}

static int end_init(struct end *e, struct ibv_context *c, enum ibv_qp_type t)
{
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 16, .max_recv_wr = NRECV + 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = t,
	};

	e->pd = ibv_alloc_pd(c);
	e->cq = e->pd ? ibv_create_cq(c, 64, NULL, NULL, 0) : NULL;
	e->buf = aligned_alloc(4096, MR_LEN);
	if (!e->cq || !e->buf)
		return -1;
	memset(e->buf, 0, MR_LEN);
	e->mr = ibv_reg_mr(e->pd, e->buf, MR_LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ia.send_cq = ia.recv_cq = e->cq;
	e->qp = e->mr ? ibv_create_qp(e->pd, &ia) : NULL;
	e->psn = (uint32_t)(random() & 0xffffff);
	e->first_err = -1;
	return e->qp ? 0 : -1;
}

/* receive buffers: the upper half of the MR, MSG_LEN bytes each */
static int post_recv(struct end *e, int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf + MR_LEN / 2 + (i % NRECV) * MSG_LEN,
		.length = MSG_LEN, .lkey = e->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(e->qp, &wr, &bad);
}

static int to_rts(struct end *e, const struct end *peer, struct ibv_context *c,
		  enum ibv_mtu mtu)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	union ibv_gid gid;

	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	if (ibv_query_gid(c == ctx_a ? ctx_b : ctx_a, 1, gidx, &gid))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = e->psn;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* an IB MTU in bytes as the verbs' enum, 0 for none */
static enum ibv_mtu mtu_enum(int bytes)
{
	enum ibv_mtu m;

	for (m = IBV_MTU_256; m <= IBV_MTU_4096; m++)
		if (bytes == 128 << m)
			return m;
	return 0;
}

static void cmd_pair(const char *arg)
{
	enum ibv_mtu mtu = IBV_MTU_1024;
	struct pair *p;
	int i;

	if (*arg) {
		mtu = mtu_enum(atoi(arg));
		if (!mtu) {
			printf("fail bad MTU '%s'\n", arg);
			return;
		}
	}
	if (npairs == MAX_PAIRS) {
		printf("fail too many pairs\n");
		return;
	}
	p = &pairs[npairs];
	if (end_init(&p->a, ctx_a, IBV_QPT_RC) || end_init(&p->b, ctx_b, IBV_QPT_RC)) {
		printf("fail create: %s\n", strerror(errno));
		return;
	}
	if (to_rts(&p->a, &p->b, ctx_a, mtu) || to_rts(&p->b, &p->a, ctx_b, mtu)) {
		printf("fail connect: %s\n", strerror(errno));
		return;
	}
	/* not in RESET: IBA 10.8.2 refuses receives there */
	for (i = 0; i < NRECV; i++)
		if (post_recv(&p->a, i) || post_recv(&p->b, i)) {
			printf("fail post_recv\n");
			return;
		}
	p->b_epsn = p->a.psn;
	p->b_sq_psn = p->b.psn;
	printf("pair %d a_qpn=%u b_qpn=%u b_epsn=%u b_sq_psn=%u b_rkey=%u b_va=%" PRIu64
	       " b_len=%u other_rkey=%u\n", npairs, p->a.qp->qp_num,
	       p->b.qp->qp_num, p->b_epsn, p->b_sq_psn, p->b.mr->rkey,
	       (uint64_t)(uintptr_t)p->b.buf, MR_LEN, other_mr->rkey);
	npairs++;
}

static void cmd_ud(void)
{
	struct end e = {};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = QKEY };
	int i;

	if (end_init(&e, ctx_b, IBV_QPT_UD) ||
	    ibv_modify_qp(e.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY)) {
		printf("fail ud: %s\n", strerror(errno));
		return;
	}
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(e.qp, &a, IBV_QP_STATE)) {
		printf("fail ud rtr\n");
		return;
	}
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = e.psn;
	if (ibv_modify_qp(e.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN)) {
		printf("fail ud rts\n");
		return;
	}
	for (i = 0; i < NRECV; i++)
		post_recv(&e, i);
	printf("ud qpn=%u qkey=%u psn=%u\n", e.qp->qp_num, QKEY, e.psn);
}

/* wait for one completion of the given opcode class on e's CQ */
static int wait_wc(struct end *e, bool recv, struct ibv_wc *wc)
{
	double end = eroce_now() + 5;

	while (eroce_now() < end) {
		int n = ibv_poll_cq(e->cq, 1, wc);

		if (n < 0)
			return -1;
		if (!n) {
			usleep(1000);
			continue;
		}
		e->wcs++;
		if (wc->status != IBV_WC_SUCCESS) {
			if (!e->errors++)
				e->first_err = wc->status;
			return -1;
		}
		if (!!(wc->opcode & IBV_WC_RECV) == recv)
			return 0;
	}
	errno = ETIMEDOUT;
	return -1;
}

static int send_one(struct end *from, struct end *to, uint32_t seq, char *why)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)from->buf, .length = MSG_LEN, .lkey = from->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = seq, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc = {};
	uint8_t *rbuf;
	int i;

	for (i = 0; i < MSG_LEN; i++)
		from->buf[i] = (uint8_t)(seq * 7 + i);
	if (ibv_post_send(from->qp, &wr, &bad)) {
		sprintf(why, "post_send: %s", strerror(errno));
		return -1;
	}
	if (wait_wc(from, false, &wc)) {
		sprintf(why, "send completion: %s", wc.status ?
			ibv_wc_status_str(wc.status) : "timeout");
		return -1;
	}
	if (wait_wc(to, true, &wc)) {
		sprintf(why, "receive completion: %s", wc.status ?
			ibv_wc_status_str(wc.status) : "timeout");
		return -1;
	}
	rbuf = to->buf + MR_LEN / 2 + (wc.wr_id % NRECV) * MSG_LEN;
	if (wc.byte_len != MSG_LEN || memcmp(rbuf, from->buf, MSG_LEN)) {
		sprintf(why, "data mismatch (byte_len %u)", wc.byte_len);
		return -1;
	}
	post_recv(to, wc.wr_id + NRECV);
	return 0;
}

static struct pair *get_pair(const char *arg)
{
	int id = atoi(arg);

	if (id < 0 || id >= npairs)
		return NULL;
	return &pairs[id];
}

static void cmd_ping(int id)
{
	struct pair *p = &pairs[id];
	char why[128] = "";

	if (send_one(&p->a, &p->b, p->pings * 2, why)) {
		printf("fail %d A->B %s\n", id, why);
		return;
	}
	p->b_epsn = (p->b_epsn + 1) & 0xffffff;
	if (send_one(&p->b, &p->a, p->pings * 2 + 1, why)) {
		printf("fail %d B->A %s\n", id, why);
		return;
	}
	p->b_sq_psn = (p->b_sq_psn + 1) & 0xffffff;
	p->pings++;
	printf("ok %d b_epsn=%u b_sq_psn=%u\n", id, p->b_epsn, p->b_sq_psn);
}

static void cmd_wc(int id)
{
	struct end *b = &pairs[id].b;
	struct ibv_wc wc;
	double end = eroce_now() + 2;

	/* collect what arrived, waiting up to 2 s for a first error */
	for (;;) {
		int n = ibv_poll_cq(b->cq, 1, &wc);

		if (n > 0) {
			b->wcs++;
			if (wc.status != IBV_WC_SUCCESS && !b->errors++)
				b->first_err = wc.status;
			continue;
		}
		if (b->errors || eroce_now() > end)
			break;
		usleep(10000);
	}
	printf("wc %d n=%u errors=%u first=%s\n", id, b->wcs, b->errors,
	       b->first_err < 0 ? "none" :
	       ibv_wc_status_str((enum ibv_wc_status)b->first_err));
}

static void cmd_rate(int id, const char *kbps)
{
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = (uint32_t)atoi(kbps) };
	int err = ibv_modify_qp_rate_limit(pairs[id].b.qp, &rl);

	if (err)
		printf("fail %d rate: %s\n", id, strerror(err));
	else
		printf("ok %d\n", id);
}

static const char *state_name(struct ibv_qp *qp)
{
	static const char *const names[] = {
		"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
	};
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return "?";
	return a.qp_state <= IBV_QPS_ERR ? names[a.qp_state] : "?";
}

int main(int argc, char **argv)
{
	const char *da = "eroce1", *db = "eroce2";
	char line[256];
	int c;

	while ((c = getopt(argc, argv, "a:b:g:")) != -1) {
		switch (c) {
		case 'a': da = optarg; break;
		case 'b': db = optarg; break;
		case 'g': gidx = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: eroce_victim [-a DEV] [-b DEV] [-g GIDIDX]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	srandom(getpid());
	ctx_a = open_dev(da);
	ctx_b = open_dev(db);
	other_pd = ibv_alloc_pd(ctx_b);
	other_mr = other_pd ? ibv_reg_mr(other_pd, aligned_alloc(4096, MR_LEN),
					 MR_LEN, IBV_ACCESS_LOCAL_WRITE |
					 IBV_ACCESS_REMOTE_WRITE |
					 IBV_ACCESS_REMOTE_READ) : NULL;
	if (!other_mr) {
		fprintf(stderr, "eroce_victim: setup failed\n");
		return 2;
	}
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		char cmd[32] = "", arg[32] = "", arg2[32] = "";
		struct pair *p;

		sscanf(line, "%31s %31s %31s", cmd, arg, arg2);
		if (!strcmp(cmd, "quit"))
			break;
		if (!strcmp(cmd, "pair")) {
			cmd_pair(arg);
			continue;
		}
		if (!strcmp(cmd, "ud")) {
			cmd_ud();
			continue;
		}
		p = get_pair(arg);
		if (!p) {
			printf("fail bad command '%s %s'\n", cmd, arg);
			continue;
		}
		if (!strcmp(cmd, "ping"))
			cmd_ping(p - pairs);
		else if (!strcmp(cmd, "wc"))
			cmd_wc(p - pairs);
		else if (!strcmp(cmd, "rate"))
			cmd_rate(p - pairs, arg2);
		else if (!strcmp(cmd, "state"))
			printf("state %d a=%s b=%s\n", (int)(p - pairs),
			       state_name(p->a.qp), state_name(p->b.qp));
		else
			printf("fail unknown command '%s'\n", cmd);
	}
	return 0;
}
