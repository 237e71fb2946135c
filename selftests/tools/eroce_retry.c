// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_retry: retry and RNR exhaustion of an RC QP.
 *
 * One process opens two RDMA devices (the rdma subsystem's shared netns
 * mode shows every device in every namespace), connects QP A on DEV_A to
 * QP B on DEV_B through their GIDs, checks that one SEND gets across, then:
 *
 *   --mode retry        runs --hook (e.g. "netem loss 100%" on the path),
 *                       posts --op (send|write|read) on A and expects
 *                       IBV_WC_RETRY_EXC_ERR within --limit seconds
 *   --mode rnr          B never posts a receive; a SEND from A must end in
 *                       IBV_WC_RNR_RETRY_EXC_ERR (rnr_retry --rnr-retry)
 *   --mode rnr-recover  rnr_retry 7 (infinite); B posts its receive
 *                       --delay-ms after the SEND: the SEND must then
 *                       succeed and carry its data
 *   --mode fatal-behind-read
 *                       A posts, in one list, a READ of --size bytes and
 *                       a WRITE with an R_Key B does not have: the READ
 *                       must complete with its data, then the WRITE with
 *                       IBV_WC_REM_ACCESS_ERR (B's NAK goes behind the
 *                       read responses it owes), within --limit seconds
 *   --mode destroy      runs --hook, posts --op on A and, --delay-ms
 *                       later, while A's retransmit timer is running,
 *                       destroys QP A: ibv_destroy_qp() must succeed
 *                       (the kernel log judges the rest)
 *
 * After an error completion A must be in the ERR state and a further WR
 * must complete with IBV_WC_WR_FLUSH_ERR.  Prints one "result:" line
 * (status, elapsed ms); exits 0 when every expectation held, 1 otherwise,
 * 2 on a usage or setup error.
 *
 * usage: eroce_retry [options] DEV_A GID_INDEX_A DEV_B GID_INDEX_B
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "tool_util.h"

#define BUF_SIZE 65536

struct side {
	const char *name;
	int gid_index;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
	union ibv_gid gid;
	enum ibv_mtu mtu;
};

static struct {
	const char *mode;
	const char *op;
	const char *hook;
	int timeout;
	int retry_cnt;
	int rnr_retry;
	int min_rnr_timer;
	int size;
	double limit;
	int delay_ms;
} opt = {
	.mode = "retry",
	.op = "send",
	.timeout = 14,
	.retry_cnt = 3,
	.rnr_retry = 2,
	.min_rnr_timer = 14,
	.size = 4096,
	.limit = 5.0,
	.delay_ms = 500,
};

static void side_open(struct side *s)
{
	struct ibv_port_attr pattr;
	struct ibv_qp_init_attr qattr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	s->ctx = eroce_open_device(s->name);
	if (!s->ctx)
		eroce_die("ibv_open_device %s: %s", s->name, strerror(errno));
	if (ibv_query_port(s->ctx, 1, &pattr))
		eroce_die("ibv_query_port %s", s->name);
	s->mtu = pattr.active_mtu;
	if (ibv_query_gid(s->ctx, 1, s->gid_index, &s->gid))
		eroce_die("ibv_query_gid %s %d", s->name, s->gid_index);
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = s->pd ? ibv_create_cq(s->ctx, 32, NULL, NULL, 0) : NULL;
	if (!s->cq)
		eroce_die("pd/cq on %s: %s", s->name, strerror(errno));
	qattr.send_cq = qattr.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &qattr);
	if (!s->qp)
		eroce_die("ibv_create_qp on %s: %s", s->name, strerror(errno));
	s->buf = aligned_alloc(4096, BUF_SIZE);
	if (!s->buf)
		eroce_die("out of memory");
	memset(s->buf, 0, BUF_SIZE);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!s->mr)
		eroce_die("ibv_reg_mr on %s: %s", s->name, strerror(errno));
}

static void side_connect(struct side *s, struct side *peer, enum ibv_mtu mtu,
			 int rnr_retry)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		eroce_die("%s: to INIT: %s", s->name, strerror(errno));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0x1234;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = opt.min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = s->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		eroce_die("%s: to RTR: %s", s->name, strerror(errno));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = opt.timeout;
	a.retry_cnt = opt.retry_cnt;
	a.rnr_retry = rnr_retry;
	a.sq_psn = 0x1234;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		eroce_die("%s: to RTS: %s", s->name, strerror(errno));
}

static void post_recv(struct side *s, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf, .length = BUF_SIZE, .lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(s->qp, &wr, &bad))
		eroce_die("%s: ibv_post_recv: %s", s->name, strerror(errno));
}

static int post_op(struct side *s, struct side *peer, const char *op,
		   uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf, .length = opt.size, .lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	if (!strcmp(op, "send")) {
		wr.opcode = IBV_WR_SEND;
	} else if (!strcmp(op, "write")) {
		wr.opcode = IBV_WR_RDMA_WRITE;
	} else if (!strcmp(op, "read")) {
		wr.opcode = IBV_WR_RDMA_READ;
	} else {
		eroce_die("unknown --op %s", op);
	}
	if (wr.opcode != IBV_WR_SEND) {
		wr.wr.rdma.remote_addr = (uintptr_t)peer->buf;
		wr.wr.rdma.rkey = peer->mr->rkey;
	}
	return ibv_post_send(s->qp, &wr, &bad);
}

/* poll_one: the next completion on S within SECS seconds; 0 if one came */
static int poll_one(struct side *s, double secs, struct ibv_wc *wc)
{
	double end = eroce_now() + secs;
	struct timespec ms = { 0, 1000000 };
	int n;

	do {
		n = ibv_poll_cq(s->cq, 1, wc);
		if (n < 0)
			eroce_die("%s: ibv_poll_cq failed", s->name);
		if (n == 1)
			return 0;
		nanosleep(&ms, NULL);
	} while (eroce_now() < end);
	return -1;
}

static int expect_wc(struct side *s, double secs, enum ibv_wc_status want,
		     const char *what)
{
	struct ibv_wc wc;

	if (poll_one(s, secs, &wc)) {
		printf("FAIL %s: no completion on %s within %.1f s\n", what,
		       s->name, secs);
		return 1;
	}
	if (wc.status != want) {
		printf("FAIL %s: %s completion status %s (%d), want %s\n", what,
		       s->name, ibv_wc_status_str(wc.status), wc.status,
		       ibv_wc_status_str(want));
		return 1;
	}
	return 0;
}

/* check_err_state: A is in ERR and flushes a new WR */
static int check_err_state(struct side *a, struct side *b)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	int fails = 0;

	if (ibv_query_qp(a->qp, &qa, IBV_QP_STATE, &qi)) {
		printf("FAIL ibv_query_qp: %s\n", strerror(errno));
		return 1;
	}
	if (qa.qp_state != IBV_QPS_ERR) {
		printf("FAIL qp state after error completion: %d, want ERR (%d)\n",
		       qa.qp_state, IBV_QPS_ERR);
		fails++;
	}
	if (post_op(a, b, "send", 99)) {
		printf("FAIL post_send in ERR state: %s\n", strerror(errno));
		return fails + 1;
	}
	fails += expect_wc(a, 5, IBV_WC_WR_FLUSH_ERR, "flush after error");
	return fails;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: eroce_retry [--mode retry|rnr|rnr-recover|destroy|fatal-behind-read] [--op send|write|read]\n"
		"       [--timeout N] [--retry-cnt N] [--rnr-retry N] [--min-rnr-timer N]\n"
		"       [--size BYTES] [--limit SECS] [--delay-ms MS] [--hook CMD]\n"
		"       DEV_A GID_INDEX_A DEV_B GID_INDEX_B\n");
	exit(2);
}

static void parse(int argc, char **argv, struct side *a, struct side *b)
{
	static const struct option lo[] = {
		{ "mode", 1, NULL, 'm' },	{ "op", 1, NULL, 'o' },
		{ "timeout", 1, NULL, 't' },	{ "retry-cnt", 1, NULL, 'r' },
		{ "rnr-retry", 1, NULL, 'n' },	{ "min-rnr-timer", 1, NULL, 'R' },
		{ "size", 1, NULL, 's' },	{ "limit", 1, NULL, 'l' },
		{ "delay-ms", 1, NULL, 'd' },	{ "hook", 1, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'm': opt.mode = optarg; break;
		case 'o': opt.op = optarg; break;
		case 't': opt.timeout = atoi(optarg); break;
		case 'r': opt.retry_cnt = atoi(optarg); break;
		case 'n': opt.rnr_retry = atoi(optarg); break;
		case 'R': opt.min_rnr_timer = atoi(optarg); break;
		case 's': opt.size = atoi(optarg); break;
		case 'l': opt.limit = atof(optarg); break;
		case 'd': opt.delay_ms = atoi(optarg); break;
		case 'H': opt.hook = optarg; break;
		default: usage();
		}
	}
	if (argc - optind != 4 || opt.size <= 0 || opt.size > BUF_SIZE)
		usage();
	a->name = argv[optind];
	a->gid_index = atoi(argv[optind + 1]);
	b->name = argv[optind + 2];
	b->gid_index = atoi(argv[optind + 3]);
}

/* fill: a recognisable pattern, different per round */
static void fill(char *p, int len, int round)
{
	int i;

	for (i = 0; i < len; i++)
		p[i] = (char)(i * 7 + round);
}

/* sanity: one SEND from A to B with its data checked */
static int sanity(struct side *a, struct side *b, int round)
{
	int fails = 0;

	fill(a->buf, opt.size, round);
	memset(b->buf, 0, opt.size);
	post_recv(b, 1);
	if (post_op(a, b, "send", 1))
		eroce_die("%s: ibv_post_send: %s", a->name, strerror(errno));
	fails += expect_wc(a, 10, IBV_WC_SUCCESS, "sanity send");
	fails += expect_wc(b, 10, IBV_WC_SUCCESS, "sanity recv");
	if (!fails && memcmp(a->buf, b->buf, opt.size)) {
		printf("FAIL sanity: received data differs\n");
		fails++;
	}
	return fails;
}

/* --mode fatal-behind-read: B's fatal NAK after the responses it owes */
static int fatal_behind_read(struct side *a, struct side *b)
{
	struct ibv_sge rsge = {
		.addr = (uintptr_t)a->buf, .length = opt.size, .lkey = a->mr->lkey,
	};
	struct ibv_sge wsge = {
		.addr = (uintptr_t)a->buf + opt.size, .length = 64,
		.lkey = a->mr->lkey,
	};
	struct ibv_send_wr write = {
		.wr_id = 4, .sg_list = &wsge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)b->buf,
			     .rkey = b->mr->rkey ^ 0x5a5a00 },
	};
	struct ibv_send_wr read = {
		.wr_id = 3, .sg_list = &rsge, .num_sge = 1, .next = &write,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)b->buf,
			     .rkey = b->mr->rkey },
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int fails = 0;

	if (opt.size + 64 > BUF_SIZE)
		eroce_die("--size must leave 64 bytes of the buffer");
	fill(b->buf, opt.size, 3);
	memset(a->buf, 0, opt.size);
	if (ibv_post_send(a->qp, &read, &bad))
		eroce_die("%s: ibv_post_send: %s", a->name, strerror(errno));
	if (poll_one(a, opt.limit, &wc) || wc.wr_id != 3 ||
	    wc.status != IBV_WC_SUCCESS) {
		printf("FAIL READ: %s\n", wc.wr_id == 3 ?
		       ibv_wc_status_str(wc.status) : "no completion");
		fails++;
	} else if (memcmp(a->buf, b->buf, opt.size)) {
		printf("FAIL READ: data differs\n");
		fails++;
	}
	if (poll_one(a, opt.limit, &wc) || wc.wr_id != 4 ||
	    wc.status != IBV_WC_REM_ACCESS_ERR) {
		printf("FAIL WRITE: %s (wr_id %llu), want %s\n",
		       ibv_wc_status_str(wc.status),
		       (unsigned long long)wc.wr_id,
		       ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR));
		fails++;
	}
	printf("result: fatal NAK behind %d bytes of READ: %s\n", opt.size,
	       fails ? "FAIL" : "ok");
	return fails ? 1 : 0;
}

/* --mode destroy: QP A destroyed while its retransmit timer runs */
static int destroy_under_timer(struct side *a, struct side *b)
{
	struct timespec ts = { .tv_sec = opt.delay_ms / 1000,
			       .tv_nsec = opt.delay_ms % 1000 * 1000000L };
	int rc;

	if (!strcmp(opt.op, "send"))
		post_recv(b, 2);
	if (opt.hook && system(opt.hook) != 0)
		eroce_die("hook failed: %s", opt.hook);
	fill(a->buf, opt.size, 2);
	if (post_op(a, b, opt.op, 2))
		eroce_die("%s: ibv_post_send: %s", a->name, strerror(errno));
	nanosleep(&ts, NULL);
	rc = ibv_destroy_qp(a->qp);
	printf("result: destroy %s after %d ms\n", rc ? strerror(rc) : "ok",
	       opt.delay_ms);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct side a = { 0 }, b = { 0 };
	enum ibv_wc_status want;
	enum ibv_mtu mtu;
	double t0, el;
	struct ibv_wc wc;
	int fails = 0, rnr_a;

	parse(argc, argv, &a, &b);
	setvbuf(stdout, NULL, _IOLBF, 0);
	side_open(&a);
	side_open(&b);
	mtu = a.mtu < b.mtu ? a.mtu : b.mtu;
	rnr_a = !strcmp(opt.mode, "rnr-recover") ? 7 : opt.rnr_retry;
	side_connect(&a, &b, mtu, rnr_a);
	side_connect(&b, &a, mtu, 7);
	printf("connected: %s qpn 0x%x <-> %s qpn 0x%x, mtu %d, timeout %d retry_cnt %d rnr_retry %d min_rnr_timer %d\n",
	       a.name, a.qp->qp_num, b.name, b.qp->qp_num, 128 << mtu,
	       opt.timeout, opt.retry_cnt, rnr_a, opt.min_rnr_timer);

	if (sanity(&a, &b, 1)) {
		printf("result: sanity send failed\n");
		return 1;
	}

	if (!strcmp(opt.mode, "retry")) {
		want = IBV_WC_RETRY_EXC_ERR;
		if (!strcmp(opt.op, "send"))
			post_recv(&b, 2);
		if (opt.hook) {
			int rc = system(opt.hook);

			if (rc != 0)
				eroce_die("hook failed (%d): %s", rc, opt.hook);
		}
	} else if (!strcmp(opt.mode, "rnr")) {
		want = IBV_WC_RNR_RETRY_EXC_ERR;
		opt.op = "send";
	} else if (!strcmp(opt.mode, "rnr-recover")) {
		want = IBV_WC_SUCCESS;
		opt.op = "send";
	} else if (!strcmp(opt.mode, "destroy")) {
		return destroy_under_timer(&a, &b);
	} else if (!strcmp(opt.mode, "fatal-behind-read")) {
		return fatal_behind_read(&a, &b);
	} else {
		usage();
	}

	fill(a.buf, opt.size, 2);
	t0 = eroce_now();
	if (post_op(&a, &b, opt.op, 2))
		eroce_die("%s: ibv_post_send: %s", a.name, strerror(errno));

	if (!strcmp(opt.mode, "rnr-recover")) {
		/* nothing may complete while B has no receive posted */
		if (!poll_one(&a, opt.delay_ms / 1000.0, &wc)) {
			printf("FAIL send completed (%s) before a receive was posted\n",
			       ibv_wc_status_str(wc.status));
			return 1;
		}
		memset(b.buf, 0, opt.size);
		post_recv(&b, 3);
	}

	if (poll_one(&a, opt.limit, &wc)) {
		printf("result: no completion within %.1f s (want %s)\n",
		       opt.limit, ibv_wc_status_str(want));
		return 1;
	}
	el = (eroce_now() - t0) * 1000;
	printf("result: %s status %s (%d) after %.0f ms\n", opt.op,
	       ibv_wc_status_str(wc.status), wc.status, el);
	if (wc.status != want) {
		printf("FAIL status %s, want %s\n", ibv_wc_status_str(wc.status),
		       ibv_wc_status_str(want));
		return 1;
	}
	if (want == IBV_WC_SUCCESS) {
		fails += expect_wc(&b, 5, IBV_WC_SUCCESS, "recovered recv");
		if (!fails && memcmp(a.buf, b.buf, opt.size)) {
			printf("FAIL data received after RNR recovery differs\n");
			fails++;
		}
	} else {
		fails += check_err_state(&a, &b);
	}
	printf("elapsed_ms %.0f\n", el);
	return fails ? 1 : 0;
}
