// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_lifetime: object lifetimes and QP transitions that must not depend
 * on the peer or on timing.
 *
 * One process opens two RDMA devices (the rdma subsystem's shared netns
 * mode shows every device in every namespace) and connects QP A on DEV_A
 * with QP B on DEV_B through their GIDs.  Modes:
 *
 *   dereg-write    A WRITEs 4 MiB into B's MR paced at --rate kb/s (far
 *                  longer than the test runs); once the first bytes are
 *                  in, B deregisters the MR: ibv_dereg_mr must return
 *                  within --limit seconds, A's WRITE must end with
 *                  IBV_WC_REM_ACCESS_ERR and B must hear
 *                  IBV_EVENT_QP_ACCESS_ERR
 *   dereg-read     the same with A READing B's MR, B's read responses
 *                  paced at --rate kb/s
 *   reset-ud       a UD QP goes to RESET while its requester is still
 *                  sending (1000 sends of 1 KiB posted in one call), and
 *                  back to RTS, twenty times: a full SQ can then be posted
 *                  and every entry completes successfully
 *   reset-rc       both RC QPs go to RESET under a stream of WRITEs and
 *                  are connected again: a full SQ of SENDs then arrives,
 *                  each checked byte for byte
 *   events         IBV_EVENT_COMM_EST (first packet on a QP in RTR),
 *                  IBV_EVENT_SQ_DRAINED (RTS -> SQD under a paced WRITE,
 *                  after it completed), IBV_EVENT_QP_LAST_WQE_REACHED (a
 *                  QP of an SRQ moved to ERR)
 *   solicited-err  a CQ armed for solicited completions only fires its
 *                  completion channel for an error completion (a flushed
 *                  receive)
 *   timer-race     A (retry_cnt 0) WRITEs 3-packet messages to B, one at
 *                  a time, --count of them: each must succeed.  Run with
 *                  max_inflight_pkts 2 and eroce_ktimer.ko loaded, which
 *                  holds the ACK of a message's first packet on the engine
 *                  lock until the retransmit timer has expired: the expiry
 *                  must then be stale, not a timeout that fails the QP
 *   corrupt-sq     A's SQ producer index, written into the shared ring
 *                  behind the provider's back, claims more entries than
 *                  the ring has; after a doorbell A must hear
 *                  IBV_EVENT_QP_FATAL and be in ERR, a later post must
 *                  complete with a flush error, and the QP must be
 *                  destroyed cleanly.  White-box: it reaches the ring
 *                  through the provider's own structures (userspace/eroce.h)
 *   rewind-sq      A posts 8 SENDs B has no receive for (RNR-NAKed
 *                  for ever, so all stay in flight), then its SQ producer
 *                  index, written behind the provider's back, goes back
 *                  to 4, behind what the kernel fetched: after a doorbell
 *                  A must hear IBV_EVENT_QP_FATAL and be in ERR, and be
 *                  destroyed cleanly (the kernel once refetched the slots
 *                  of in-flight entries and later sent one as opcode
 *                  0xff, dereferencing NULL).  White-box, as corrupt-sq
 *   kernel-op      a WQE with a kernel-only opcode (REG_MR), then on a
 *                  new pair one eroce does not implement (TSO), written
 *                  into A's SQ behind the provider's back (which refuses
 *                  to post them), must complete with IBV_WC_LOC_QP_OP_ERR
 *                  and fail the QP
 *
 * Prints "result:" lines; exits 0 when every expectation held, 1
 * otherwise, 2 on a usage or setup error.
 *
 * usage: eroce_lifetime [--rate KBPS] [--limit SECS] [--count N]
 *                       MODE DEV_A GID_A DEV_B GID_B
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "eroce.h"
#include "tool_pair.h"
#include "tool_util.h"

#define BIG_LEN		(4u << 20)
#define SQ_DEPTH	1024
#define MSG_LEN		256
#define QKEY		0x11111111u

static struct {
	unsigned int rate_kbps;
	double limit;
	unsigned int count;
	uint8_t retry_cnt;		/* of the QPs brought to RTS */
} opt = {
	.rate_kbps = 400,
	.limit = 5.0,
	.count = 40,
	.retry_cnt = 7,
};

/* the shared helpers (tool_pair.h) with this program's sizes */
static void side_open(struct eroce_side *s, bool events)
{
	eroce_side_open(s, events, BIG_LEN, 4 * SQ_DEPTH);
}

static struct ibv_qp *qp_create(struct eroce_side *s, enum ibv_qp_type type,
				struct ibv_srq *srq)
{
	return eroce_side_qp(s, type, srq, SQ_DEPTH);
}

static void to_init(struct eroce_side *s, struct ibv_qp *qp)
{
	eroce_qp_to_init(s, qp, QKEY);
}

static void to_rtr(struct eroce_side *s, struct ibv_qp *qp,
		   struct eroce_side *peer, uint32_t psn)
{
	eroce_qp_to_rtr(s, qp, peer, psn);
}

static void to_rts(struct eroce_side *s, struct ibv_qp *qp, uint32_t psn)
{
	eroce_qp_to_rts(s, qp, psn, opt.retry_cnt);
}

static int poll_one(struct eroce_side *s, double secs, struct ibv_wc *wc)
{
	return eroce_side_poll(s, secs, wc);
}

static void to_state(struct eroce_side *s, struct ibv_qp *qp, enum ibv_qp_state st)
{
	struct ibv_qp_attr a = { .qp_state = st };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		eroce_die("%s: to state %d: %s", s->name, st, strerror(errno));
}

/* RC A <-> B, both in RTS, starting at @psn */
static void rc_connect(struct eroce_side *a, struct eroce_side *b, uint32_t psn)
{
	to_init(a, a->qp);
	to_init(b, b->qp);
	to_rtr(a, a->qp, b, psn);
	to_rtr(b, b->qp, a, psn);
	to_rts(a, a->qp, psn);
	to_rts(b, b->qp, psn);
}

static void set_rate(struct eroce_side *s, unsigned int kbps)
{
	struct ibv_qp_rate_limit_attr r = { .rate_limit = kbps };

	if (ibv_modify_qp_rate_limit(s->qp, &r))
		eroce_die("%s: ibv_modify_qp_rate_limit: %s", s->name,
		    strerror(errno));
}

static int post_rdma(struct eroce_side *s, struct eroce_side *peer, enum ibv_wr_opcode op,
		     uint32_t len, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf, .length = len, .lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)peer->buf;
	wr.wr.rdma.rkey = peer->mr->rkey;
	return ibv_post_send(s->qp, &wr, &bad);
}

/*
 * @n requests of @len bytes from s->buf, ids from @id, in one
 * ibv_post_send() call: one doorbell, and the kernel's work item sends
 * what the doorbell's budget leaves while this thread goes on.  UD: SENDs
 * to @ah, @qpn; RC: WRITEs into @peer's buffer.
 */
static int post_send_list(struct eroce_side *s, struct ibv_qp *qp, unsigned int n,
			  uint32_t len, uint64_t id, struct ibv_ah *ah,
			  uint32_t qpn, struct eroce_side *peer)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf, .length = len, .lkey = s->mr->lkey,
	};
	struct ibv_send_wr *wrs = calloc(n, sizeof(*wrs)), *bad;
	unsigned int i;
	int err;

	if (!wrs)
		eroce_die("out of memory");
	for (i = 0; i < n; i++) {
		wrs[i].wr_id = id + i;
		wrs[i].sg_list = &sge;
		wrs[i].num_sge = 1;
		wrs[i].opcode = ah ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
		wrs[i].send_flags = IBV_SEND_SIGNALED;
		wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
		if (ah) {
			wrs[i].wr.ud.ah = ah;
			wrs[i].wr.ud.remote_qpn = qpn;
			wrs[i].wr.ud.remote_qkey = QKEY;
		} else {
			wrs[i].wr.rdma.remote_addr = (uintptr_t)peer->buf;
			wrs[i].wr.rdma.rkey = peer->mr->rkey;
		}
	}
	err = ibv_post_send(qp, wrs, &bad);
	free(wrs);
	return err;
}

/* SEND @len bytes from @off of s->buf (UD: to @ah, @qpn) */
static int post_send(struct eroce_side *s, struct ibv_qp *qp, uint32_t off,
		     uint32_t len, uint64_t id, struct ibv_ah *ah,
		     uint32_t qpn)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf + off, .length = len,
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = QKEY;
	return ibv_post_send(qp, &wr, &bad);
}

static int post_recv(struct eroce_side *s, struct ibv_qp *qp, uint32_t off,
		     uint32_t len, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf + off, .length = len,
		.lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* completions until @secs pass with none */
static unsigned int drain_cq(struct eroce_side *s, double secs)
{
	struct ibv_wc wc;
	unsigned int n = 0;

	while (!poll_one(s, secs, &wc))
		n++;
	return n;
}

/* an async event of @type on s->ctx within @secs; others are acked */
static bool wait_event(struct eroce_side *s, enum ibv_event_type type, double secs)
{
	double end = eroce_now() + secs;
	struct ibv_async_event ev;
	struct pollfd pfd = { .fd = s->ctx->async_fd, .events = POLLIN };

	while (eroce_now() < end) {
		int ms = (int)((end - eroce_now()) * 1000) + 1;

		if (poll(&pfd, 1, ms) <= 0)
			continue;
		if (ibv_get_async_event(s->ctx, &ev))
			eroce_die("%s: ibv_get_async_event: %s", s->name,
			    strerror(errno));
		printf("# %s: event %s\n", s->name,
		       ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
		if (ev.event_type == type)
			return true;
	}
	return false;
}

/* wait until @p[0] is no longer 0 (the first bytes arrived) */
static bool wait_first_bytes(volatile uint8_t *p, double secs)
{
	double end = eroce_now() + secs;

	while (eroce_now() < end) {
		if (*p)
			return true;
		usleep(1000);
	}
	return false;
}

static void run_dereg(struct eroce_side *a, struct eroce_side *b, bool read)
{
	struct eroce_side *src = read ? b : a, *dst = read ? a : b;
	struct ibv_wc wc;
	double t0, ms;
	int err;

	a->qp = qp_create(a, IBV_QPT_RC, NULL);
	b->qp = qp_create(b, IBV_QPT_RC, NULL);
	rc_connect(a, b, 0x100);
	memset(src->buf, 0xa5, BIG_LEN);
	/* the side whose packets carry the data is paced */
	set_rate(src, opt.rate_kbps);
	if (post_rdma(a, b, read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
		      BIG_LEN, 1))
		eroce_die("post %s: %s", read ? "READ" : "WRITE", strerror(errno));
	if (!wait_first_bytes(dst->buf, 30))
		eroce_die("no byte of the %s arrived in 30 s", read ? "READ" : "WRITE");

	t0 = eroce_now();
	err = ibv_dereg_mr(b->mr);
	ms = (eroce_now() - t0) * 1000;
	b->mr = NULL;
	eroce_result("dereg_returns", !err && ms < opt.limit * 1000,
		     "ibv_dereg_mr during a paced %s: %s after %.1f ms (limit %.0f ms; the %s needs %.0f s)",
		     read ? "READ" : "WRITE", err ? strerror(err) : "ok", ms,
		     opt.limit * 1000, read ? "READ" : "WRITE",
		     BIG_LEN * 8.0 / 1000 / opt.rate_kbps);

	if (poll_one(a, 60, &wc))
		eroce_result("requester_access_error", false, "no completion in 60 s");
	else
		eroce_result("requester_access_error",
			     wc.status == IBV_WC_REM_ACCESS_ERR,
			     "the %s completed with %s", read ? "READ" : "WRITE",
			     ibv_wc_status_str(wc.status));
	eroce_result("responder_access_event",
		     wait_event(b, IBV_EVENT_QP_ACCESS_ERR, 30),
		     "IBV_EVENT_QP_ACCESS_ERR on B");
	eroce_result("responder_in_err", eroce_qp_state(b->qp) == IBV_QPS_ERR,
		     "B's QP in state %d", eroce_qp_state(b->qp));
}

/* run on a CPU other than the one @qp's work item runs on, if any */
static void pin_away_from(struct ibv_qp *qp)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (n < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET((qp->qp_num + 1) % n, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		printf("# sched_setaffinity: %s\n", strerror(errno));
}

static void run_reset_ud(struct eroce_side *a, struct eroce_side *b)
{
	struct ibv_ah_attr ah_attr = {
		.is_global = 1,
		.port_num = 1,
		.grh = { .dgid = b->gid, .sgid_index = a->gid_index,
			 .hop_limit = 64 },
	};
	struct ibv_ah *ah;
	struct ibv_wc wc;
	unsigned int i, posted = 0, ok = 0, bad = 0, before, round;
	int err = 0;

	a->qp = qp_create(a, IBV_QPT_UD, NULL);
	b->qp = qp_create(b, IBV_QPT_UD, NULL);
	ah = ibv_create_ah(a->pd, &ah_attr);
	if (!ah)
		eroce_die("ibv_create_ah: %s", strerror(errno));
	for (i = 0; i < 2; i++) {
		struct eroce_side *s = i ? b : a;

		to_init(s, s->qp);
		to_rtr(s, s->qp, NULL, 0);
		to_rts(s, s->qp, 0);
	}
	/*
	 * The requester is still sending when the QP goes to RESET: 1000
	 * sends of 1 KiB in one call, then RESET at once, twenty times.
	 * The QP's work item runs on CPU qp_num % CPUs (eroce_task.c):
	 * this thread runs on another one, so that the two overlap.
	 */
	pin_away_from(a->qp);
	before = 0;
	for (round = 0; round < 20; round++) {
		err = post_send_list(a, a->qp, 1000, 1024, 100000 * round, ah,
				     b->qp->qp_num, NULL);
		if (err) {
			eroce_result("full_sq_after_reset", false,
				     "round %u: 1000 sends on an empty SQ of %u refused: %s",
				     round, SQ_DEPTH, strerror(err));
			eroce_result("sends_complete_after_reset", false,
				     "not run");
			ibv_destroy_ah(ah);
			return;
		}
		to_state(a, a->qp, IBV_QPS_RESET);
		to_init(a, a->qp);
		to_rtr(a, a->qp, NULL, 0);
		to_rts(a, a->qp, 0);
		before += drain_cq(a, 0.2);
	}

	for (i = 0; i < SQ_DEPTH; i++) {
		err = post_send(a, a->qp, 0, MSG_LEN, 10000 + i, ah,
				b->qp->qp_num);
		if (err)
			break;
		posted++;
	}
	eroce_result("full_sq_after_reset", posted == SQ_DEPTH,
		     "%u of %u sends posted after 20 RESETs of a busy QP (%s); %u of the 20000 sent before them completed",
		     posted, SQ_DEPTH, err ? strerror(err) : "ok", before);
	while (ok + bad < posted && !poll_one(a, 30, &wc)) {
		if (wc.wr_id < 10000 || wc.wr_id >= 10000 + SQ_DEPTH)
			continue;	/* left over from before a reset */
		if (wc.status == IBV_WC_SUCCESS)
			ok++;
		else
			bad++;
	}
	eroce_result("sends_complete_after_reset", ok == posted && !bad,
		     "%u ok, %u failed of %u", ok, bad, posted);
	ibv_destroy_ah(ah);
}

static void run_reset_rc(struct eroce_side *a, struct eroce_side *b)
{
	unsigned int i, posted = 0, got = 0, bad = 0, round;
	struct ibv_wc wc;

	a->qp = qp_create(a, IBV_QPT_RC, NULL);
	b->qp = qp_create(b, IBV_QPT_RC, NULL);
	pin_away_from(a->qp);
	for (round = 0; round < 3; round++) {
		rc_connect(a, b, 0x1000 * (round + 1));
		memset(a->buf, 0x5a, 65536);
		post_send_list(a, a->qp, 64, 65536, 0, NULL, 0, b);
		usleep(20000 * round);
		to_state(a, a->qp, IBV_QPS_RESET);
		to_state(b, b->qp, IBV_QPS_RESET);
		drain_cq(a, 0.5);
		drain_cq(b, 0.5);
	}
	rc_connect(a, b, 0x7000);
	for (i = 0; i < SQ_DEPTH / 4; i++) {
		uint32_t off = i * MSG_LEN;

		memset(a->buf + off, (int)(i * 7 + 1), MSG_LEN);
		if (post_recv(b, b->qp, off, MSG_LEN, i))
			eroce_die("post_recv: %s", strerror(errno));
	}
	for (i = 0; i < SQ_DEPTH / 4; i++) {
		if (post_send(a, a->qp, i * MSG_LEN, MSG_LEN, i, NULL, 0))
			break;
		posted++;
	}
	eroce_result("full_sq_after_reset", posted == SQ_DEPTH / 4,
		     "%u of %u sends posted after three RESETs under WRITEs",
		     posted, SQ_DEPTH / 4);
	while (got + bad < 2 * posted && !poll_one(b, 30, &wc)) {
		if (wc.status != IBV_WC_SUCCESS)
			bad++;
		else if (wc.opcode == IBV_WC_RECV)
			got++;
	}
	for (i = 0; i < got; i++)
		if (memcmp(a->buf + i * MSG_LEN, b->buf + i * MSG_LEN,
			   MSG_LEN))
			break;
	eroce_result("sends_arrive_after_reset", got == posted && !bad && i == got,
		     "%u of %u received, %u errors, first mismatch at %u", got,
		     posted, bad, i);
}

static void run_events(struct eroce_side *a, struct eroce_side *b)
{
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq;
	struct ibv_qp *c;
	struct ibv_wc wc;
	bool ok;

	/* COMM_EST: B in RTR receives A's first SEND */
	a->qp = qp_create(a, IBV_QPT_RC, NULL);
	b->qp = qp_create(b, IBV_QPT_RC, NULL);
	to_init(a, a->qp);
	to_init(b, b->qp);
	to_rtr(a, a->qp, b, 0x10);
	to_rtr(b, b->qp, a, 0x10);
	to_rts(a, a->qp, 0x10);
	if (post_recv(b, b->qp, 0, MSG_LEN, 1) ||
	    post_send(a, a->qp, 0, MSG_LEN, 1, NULL, 0))
		eroce_die("post: %s", strerror(errno));
	eroce_result("comm_est", wait_event(b, IBV_EVENT_COMM_EST, 30),
		     "IBV_EVENT_COMM_EST on B, in RTR");
	to_rts(b, b->qp, 0x10);
	drain_cq(a, 0.5);
	drain_cq(b, 0.5);

	/* SQ_DRAINED: RTS -> SQD under a paced 256 KiB WRITE */
	set_rate(a, 2000);
	if (post_rdma(a, b, IBV_WR_RDMA_WRITE, 256 << 10, 2))
		eroce_die("post WRITE: %s", strerror(errno));
	{
		struct ibv_qp_attr at = { .qp_state = IBV_QPS_SQD,
					  .en_sqd_async_notify = 1 };

		if (ibv_modify_qp(a->qp, &at, IBV_QP_STATE |
				  IBV_QP_EN_SQD_ASYNC_NOTIFY))
			eroce_die("to SQD: %s", strerror(errno));
	}
	ok = wait_event(a, IBV_EVENT_SQ_DRAINED, 60);
	eroce_result("sq_drained", ok, "IBV_EVENT_SQ_DRAINED on A");
	eroce_result("sq_drained_after_completion",
		     ok && !poll_one(a, 1, &wc) && wc.status == IBV_WC_SUCCESS,
		     "the WRITE completed successfully before the event");
	to_state(a, a->qp, IBV_QPS_RTS);

	/* LAST_WQE_REACHED: a QP of an SRQ goes to ERR */
	srq = ibv_create_srq(b->pd, &sattr);
	if (!srq)
		eroce_die("ibv_create_srq: %s", strerror(errno));
	c = qp_create(b, IBV_QPT_RC, srq);
	to_init(b, c);
	to_state(b, c, IBV_QPS_ERR);
	eroce_result("last_wqe_reached", wait_event(b, IBV_EVENT_QP_LAST_WQE_REACHED, 30),
		     "IBV_EVENT_QP_LAST_WQE_REACHED for a QP of an SRQ moved to ERR");
	ibv_destroy_qp(c);
	ibv_destroy_srq(srq);
}

static void run_solicited_err(struct eroce_side *a, struct eroce_side *b)
{
	struct pollfd pfd = { .fd = a->chan->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_wc wc;
	bool fired;

	a->qp = qp_create(a, IBV_QPT_RC, NULL);
	b->qp = qp_create(b, IBV_QPT_RC, NULL);
	rc_connect(a, b, 0x20);
	if (post_recv(a, a->qp, 0, MSG_LEN, 7))
		eroce_die("post_recv: %s", strerror(errno));
	if (ibv_req_notify_cq(a->cq, 1))
		eroce_die("ibv_req_notify_cq: %s", strerror(errno));
	to_state(a, a->qp, IBV_QPS_ERR);
	fired = poll(&pfd, 1, 10000) == 1;
	if (fired) {
		if (ibv_get_cq_event(a->chan, &ev_cq, &ev_ctx))
			eroce_die("ibv_get_cq_event: %s", strerror(errno));
		ibv_ack_cq_events(ev_cq, 1);
	}
	eroce_result("solicited_only_cq_fires_on_error", fired,
		     "completion event for a flushed receive on a CQ armed solicited-only");
	eroce_result("flushed_receive",
		     !poll_one(a, 5, &wc) && wc.wr_id == 7 &&
		     wc.status == IBV_WC_WR_FLUSH_ERR,
		     "the receive completed with a flush error");
}

static void run_timer_race(struct eroce_side *a, struct eroce_side *b)
{
	uint32_t len = 3 * (128u << (a->mtu < b->mtu ? a->mtu : b->mtu));
	struct ibv_wc wc = {};
	unsigned int i;

	opt.retry_cnt = 0;
	a->qp = qp_create(a, IBV_QPT_RC, NULL);
	b->qp = qp_create(b, IBV_QPT_RC, NULL);
	rc_connect(a, b, 0x40);
	for (i = 0; i < opt.count; i++) {
		if (post_rdma(a, b, IBV_WR_RDMA_WRITE, len, 100 + i))
			eroce_die("post WRITE: %s", strerror(errno));
		if (poll_one(a, 30, &wc) || wc.status != IBV_WC_SUCCESS)
			break;
	}
	eroce_result("writes_succeed", i == opt.count,
		     "%u of %u WRITEs of %u bytes succeeded with retry_cnt 0%s%s", i,
		     opt.count, len, i == opt.count ? "" : "; then ",
		     i == opt.count ? "" : wc.status ?
		     ibv_wc_status_str(wc.status) : "no completion in 30 s");
}

static void run_corrupt_sq(struct eroce_side *a, struct eroce_side *b)
{
	struct eroce_ring *sq;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct ibv_wc wc;
	uint32_t cons;
	int err;

	a->qp = qp_create(a, IBV_QPT_RC, NULL);
	b->qp = qp_create(b, IBV_QPT_RC, NULL);
	rc_connect(a, b, 0x30);
	sq = &to_eqp(a->qp)->sq;
	cons = atomic_load_explicit((_Atomic uint32_t *)&sq->ctrl->consumer,
				    memory_order_acquire);
	atomic_store_explicit((_Atomic uint32_t *)&sq->ctrl->producer,
			      cons + sq->num_slots + 7, memory_order_release);
	err = eroce_ring_sq_doorbell(a->qp);
	if (err)
		eroce_die("doorbell: %s", strerror(err));
	eroce_result("qp_fatal_event", wait_event(a, IBV_EVENT_QP_FATAL, 30),
		     "IBV_EVENT_QP_FATAL on A for a producer index %u past the consumer",
		     sq->num_slots + 7);
	if (ibv_query_qp(a->qp, &attr, IBV_QP_STATE, &init))
		eroce_die("ibv_query_qp: %s", strerror(errno));
	eroce_result("qp_in_err", attr.qp_state == IBV_QPS_ERR,
		     "A is in ERR (state %d)", attr.qp_state);
	/* the provider's own index is intact: a post still reaches the flush */
	atomic_store_explicit((_Atomic uint32_t *)&sq->ctrl->producer,
			      sq->head, memory_order_release);
	if (post_send(a, a->qp, 0, MSG_LEN, 9, NULL, 0))
		eroce_die("post_send: %s", strerror(errno));
	eroce_result("post_after_fatal_flushed",
		     !poll_one(a, 10, &wc) && wc.wr_id == 9 &&
		     wc.status == IBV_WC_WR_FLUSH_ERR,
		     "a SEND posted afterwards completes with IBV_WC_WR_FLUSH_ERR");
	err = ibv_destroy_qp(a->qp);
	a->qp = NULL;
	eroce_result("destroy_after_fatal", !err, "ibv_destroy_qp: %s",
		     err ? strerror(err) : "ok");
}

static void run_rewind_sq(struct eroce_side *a, struct eroce_side *b)
{
	struct eroce_ring *sq;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	unsigned int i;
	int err;

	a->qp = qp_create(a, IBV_QPT_RC, NULL);
	b->qp = qp_create(b, IBV_QPT_RC, NULL);
	rc_connect(a, b, 0x50);
	for (i = 0; i < 8; i++)
		if (post_send(a, a->qp, 0, MSG_LEN, 20 + i, NULL, 0))
			eroce_die("post_send: %s", strerror(errno));
	/* B posts no receive: the SENDs stay in flight, all fetched */
	usleep(500 * 1000);
	sq = &to_eqp(a->qp)->sq;
	atomic_store_explicit((_Atomic uint32_t *)&sq->ctrl->producer,
			      sq->head - 4, memory_order_release);
	err = eroce_ring_sq_doorbell(a->qp);
	if (err)
		eroce_die("doorbell: %s", strerror(err));
	eroce_result("qp_fatal_event", wait_event(a, IBV_EVENT_QP_FATAL, 30),
		     "IBV_EVENT_QP_FATAL on A for a producer index moved back from %u to %u",
		     sq->head, sq->head - 4);
	if (ibv_query_qp(a->qp, &attr, IBV_QP_STATE, &init))
		eroce_die("ibv_query_qp: %s", strerror(errno));
	eroce_result("qp_in_err", attr.qp_state == IBV_QPS_ERR,
		     "A is in ERR (state %d)", attr.qp_state);
	err = ibv_destroy_qp(a->qp);
	a->qp = NULL;
	eroce_result("destroy_after_fatal", !err, "ibv_destroy_qp: %s",
		     err ? strerror(err) : "ok");
}

/* write one WQE with @opcode into A's SQ directly, and ring */
static void post_raw_opcode(struct eroce_side *a, uint8_t opcode, uint64_t wr_id)
{
	struct eroce_ring *sq = &to_eqp(a->qp)->sq;
	struct eroce_send_wqe *wqe;
	int err;

	wqe = (void *)((char *)sq->ctrl + EROCE_RING_DATA_OFFSET +
		       (size_t)(sq->head & (sq->num_slots - 1)) * sq->slot_size);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr_id;
	wqe->opcode = opcode;
	wqe->send_flags = EROCE_SEND_SIGNALED;
	wqe->ex = 0x1234;
	sq->head++;
	atomic_store_explicit((_Atomic uint32_t *)&sq->ctrl->producer,
			      sq->head, memory_order_release);
	err = eroce_ring_sq_doorbell(a->qp);
	if (err)
		eroce_die("doorbell: %s", strerror(err));
}

static void run_kernel_op(struct eroce_side *a, struct eroce_side *b)
{
	static const struct { const char *name; uint8_t opcode; } ops[] = {
		{ "reg_mr", 0x20 },		/* IB_WR_REG_MR */
		{ "tso", IBV_WR_TSO },
	};
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct ibv_wc wc;
	unsigned int i;
	char name[64];

	for (i = 0; i < 2; i++) {
		if (a->qp)
			ibv_destroy_qp(a->qp);
		if (b->qp)
			ibv_destroy_qp(b->qp);
		a->qp = qp_create(a, IBV_QPT_RC, NULL);
		b->qp = qp_create(b, IBV_QPT_RC, NULL);
		rc_connect(a, b, 0x50 + i);
		post_raw_opcode(a, ops[i].opcode, 0x70 + i);
		snprintf(name, sizeof(name), "%s_loc_qp_op_err", ops[i].name);
		eroce_result(name, !poll_one(a, 10, &wc) && wc.wr_id == 0x70 + i &&
			     wc.status == IBV_WC_LOC_QP_OP_ERR,
			     "a user WQE with opcode 0x%x completes with "
			     "IBV_WC_LOC_QP_OP_ERR", ops[i].opcode);
		if (ibv_query_qp(a->qp, &attr, IBV_QP_STATE, &init))
			eroce_die("ibv_query_qp: %s", strerror(errno));
		snprintf(name, sizeof(name), "%s_qp_in_err", ops[i].name);
		eroce_result(name, attr.qp_state == IBV_QPS_ERR,
			     "A is in ERR (state %d)", attr.qp_state);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: eroce_lifetime [--rate KBPS] [--limit SECS] "
		"[--count N] dereg-write|dereg-read|reset-ud|reset-rc|events|"
		"solicited-err|timer-race|corrupt-sq|rewind-sq|kernel-op "
		"DEV_A GID_A DEV_B GID_B\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "rate", required_argument, NULL, 'r' },
		{ "limit", required_argument, NULL, 'l' },
		{ "count", required_argument, NULL, 'n' },
		{ }
	};
	struct eroce_side a = {}, b = {};
	const char *mode;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'r': opt.rate_kbps = strtoul(optarg, NULL, 0); break;
		case 'l': opt.limit = strtod(optarg, NULL); break;
		case 'n': opt.count = strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (argc - optind != 5 || !opt.rate_kbps || opt.limit <= 0 ||
	    !opt.count)
		usage();
	mode = argv[optind];
	a.name = argv[optind + 1];
	a.gid_index = atoi(argv[optind + 2]);
	b.name = argv[optind + 3];
	b.gid_index = atoi(argv[optind + 4]);
	side_open(&a, !strcmp(mode, "solicited-err"));
	side_open(&b, false);

	if (!strcmp(mode, "dereg-write"))
		run_dereg(&a, &b, false);
	else if (!strcmp(mode, "dereg-read"))
		run_dereg(&a, &b, true);
	else if (!strcmp(mode, "reset-ud"))
		run_reset_ud(&a, &b);
	else if (!strcmp(mode, "reset-rc"))
		run_reset_rc(&a, &b);
	else if (!strcmp(mode, "events"))
		run_events(&a, &b);
	else if (!strcmp(mode, "solicited-err"))
		run_solicited_err(&a, &b);
	else if (!strcmp(mode, "timer-race"))
		run_timer_race(&a, &b);
	else if (!strcmp(mode, "corrupt-sq"))
		run_corrupt_sq(&a, &b);
	else if (!strcmp(mode, "rewind-sq"))
		run_rewind_sq(&a, &b);
	else if (!strcmp(mode, "kernel-op"))
		run_kernel_op(&a, &b);
	else
		usage();
	return eroce_results_status();
}
