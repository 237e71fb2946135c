// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_srq: a shared receive queue between two devices in one process
 * (tool_pair.h).  A's two RC QPs send to B's two RC QPs, which take their
 * receive WQEs from one SRQ of SRQ_DEPTH entries, each a slot of B's
 * buffer poisoned before it is posted.
 *
 *   data           rounds of SRQ_DEPTH SENDs of MSG_LEN bytes (3 packets
 *                  at MTU 1024), alternating between A's QPs; B checks
 *                  every receive completion (status, length, QP) and the
 *                  slot it names: message k of B's QP q holds pattern
 *                  q * 1000 + k, the slot's bytes after it the poison;
 *                  then B posts the slot again.  Counted over every
 *                  message of the run, the limit phase's included.
 *   limit_armed    with SRQ_DEPTH receives posted, ibv_modify_srq(
 *                  IBV_SRQ_LIMIT, LIMIT) succeeds and ibv_query_srq says
 *                  LIMIT
 *   limit_not_early  SRQ_DEPTH - LIMIT messages taken (LIMIT WQEs left,
 *                  not fewer than the limit): no IBV_EVENT_SRQ_LIMIT_REACHED
 *                  within 0.5 s, the limit still armed
 *   limit_event    one more (LIMIT - 1 left): the event arrives within
 *                  WAIT_SECS, for this SRQ
 *   limit_disarmed ibv_query_srq says srq_limit 0 (the event disarmed it)
 *   limit_once     two more taken (LIMIT - 3 left): no second event
 *                  within 1 s
 *
 * Other async events (a QP's) are shown as "#" lines and acknowledged.
 * Prints "result:" lines; exits 0 when every expectation held, 1
 * otherwise, 2 on a usage or setup error.
 *
 * usage: eroce_srq DEV_A GID_A DEV_B GID_B
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "tool_pair.h"
#include "tool_util.h"

#define SRQ_DEPTH	16
#define LIMIT		4
#define MSG_LEN		3000u
#define SLOT		4096u		/* B's receive slots, A's sources */
#define BUF_LEN		(SRQ_DEPTH * SLOT)
#define ROUNDS		4		/* of the data phase */
#define NQP		2
#define POISON		0xa5
#define WAIT_SECS	20.0

static struct ibv_qp *qa[NQP], *qb[NQP];
static struct ibv_srq *srq;
static uint32_t sent[NQP];		/* messages A sent on each QP */
static uint32_t rcvd[NQP];		/* messages B received on each QP */
static uint32_t msgs_ok, msgs_bad;
static char first_bad[160];

static void post_slot(struct eroce_side *b, uint32_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(b->buf + slot * SLOT), .length = SLOT,
		.lkey = b->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	memset(b->buf + slot * SLOT, POISON, SLOT);
	if (ibv_post_srq_recv(srq, &wr, &bad))
		eroce_die("ibv_post_srq_recv: %s", strerror(errno));
}

/* A sends @n messages, alternating between its QPs; all complete */
static void send_msgs(struct eroce_side *a, uint32_t n)
{
	struct ibv_wc wc;
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint32_t q = (sent[0] + sent[1]) % NQP;
		uint8_t *src = a->buf + i * SLOT;
		struct ibv_sge sge = {
			.addr = (uintptr_t)src, .length = MSG_LEN,
			.lkey = a->mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *bad;

		eroce_pattern(src, MSG_LEN, q * 1000 + sent[q]);
		if (ibv_post_send(qa[q], &wr, &bad))
			eroce_die("ibv_post_send: %s", strerror(errno));
		sent[q]++;
	}
	for (i = 0; i < n; i++) {
		if (eroce_side_poll(a, WAIT_SECS, &wc))
			eroce_die("A: send completion %u of %u missing", i, n);
		if (wc.status)
			eroce_die("A: SEND: %s", ibv_wc_status_str(wc.status));
	}
}

/* check one receive completion of B and the slot it names */
static void check_recv(struct eroce_side *b, const struct ibv_wc *wc)
{
	uint32_t q = wc->qp_num == qb[1]->qp_num, seed;
	const uint8_t *p = b->buf + wc->wr_id * SLOT;
	bool ok;

	seed = q * 1000 + rcvd[q];
	rcvd[q]++;
	ok = wc->status == IBV_WC_SUCCESS && wc->opcode == IBV_WC_RECV &&
	     wc->byte_len == MSG_LEN && wc->wr_id < SRQ_DEPTH &&
	     (q == 1 || wc->qp_num == qb[0]->qp_num);
	if (ok) {
		ok = eroce_pattern_ok(p, MSG_LEN, seed) &&
		     p[MSG_LEN] == POISON &&
		     !memcmp(p + MSG_LEN, p + MSG_LEN + 1, SLOT - MSG_LEN - 1);
	}
	if (ok) {
		msgs_ok++;
		return;
	}
	if (!msgs_bad++)
		snprintf(first_bad, sizeof(first_bad),
			 "first bad: status %s, opcode %d, %u bytes, qp %#x, slot %" PRIu64 ", want message %u",
			 ibv_wc_status_str(wc->status), wc->opcode,
			 wc->byte_len, wc->qp_num, wc->wr_id, seed);
}

/* B takes @n receive completions, checks them, posts them again if @repost */
static void recv_msgs(struct eroce_side *b, uint32_t n, bool repost)
{
	struct ibv_wc wc;
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (eroce_side_poll(b, WAIT_SECS, &wc))
			eroce_die("B: receive completion %u of %u missing", i, n);
		check_recv(b, &wc);
		if (repost && wc.wr_id < SRQ_DEPTH)
			post_slot(b, wc.wr_id);
	}
}

/*
 * The SRQ limit events of B within @secs; other events are shown and
 * acknowledged
 */
static int limit_events(struct eroce_side *b, double secs)
{
	double end = eroce_now() + secs;
	struct ibv_async_event ev;
	struct pollfd pfd = { .fd = b->ctx->async_fd, .events = POLLIN };
	int n = 0, left;

	while ((left = (int)((end - eroce_now()) * 1000)) > 0) {
		if (poll(&pfd, 1, left) <= 0)
			continue;
		if (ibv_get_async_event(b->ctx, &ev))
			continue;
		if (ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
		    ev.element.srq == srq)
			n++;
		else
			printf("# B: async event %s\n",
			       ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
		/* the event looked for: no need to wait for the deadline */
		if (n && secs >= WAIT_SECS)
			break;
	}
	return n;
}

static uint32_t srq_limit(void)
{
	struct ibv_srq_attr attr;

	if (ibv_query_srq(srq, &attr))
		eroce_die("ibv_query_srq: %s", strerror(errno));
	return attr.srq_limit;
}

static void limit_phase(struct eroce_side *a, struct eroce_side *b)
{
	struct ibv_srq_attr attr = { .srq_limit = LIMIT };
	uint32_t lim;
	int ret, n;

	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT);
	lim = srq_limit();
	eroce_result("limit_armed", !ret && lim == LIMIT,
		     "ibv_modify_srq %d, srq_limit %u", ret, lim);

	send_msgs(a, SRQ_DEPTH - LIMIT);
	recv_msgs(b, SRQ_DEPTH - LIMIT, false);
	n = limit_events(b, 0.5);
	lim = srq_limit();
	eroce_result("limit_not_early", !n && lim == LIMIT,
		     "%d WQEs left: %d events, srq_limit %u", LIMIT, n, lim);

	send_msgs(a, 1);
	recv_msgs(b, 1, false);
	n = limit_events(b, WAIT_SECS);
	eroce_result("limit_event", n == 1, "%d WQEs left: %d events",
		     LIMIT - 1, n);
	lim = srq_limit();
	eroce_result("limit_disarmed", lim == 0, "srq_limit %u", lim);

	send_msgs(a, 2);
	recv_msgs(b, 2, false);
	n = limit_events(b, 1.0);
	eroce_result("limit_once", !n, "%d WQEs left: %d more events",
		     LIMIT - 3, n);
}

static void run(struct eroce_side *a, struct eroce_side *b)
{
	struct ibv_srq_init_attr sattr = {
		.attr = { .max_wr = SRQ_DEPTH, .max_sge = 1 },
	};
	uint32_t i;

	srq = ibv_create_srq(b->pd, &sattr);
	if (!srq)
		eroce_die("ibv_create_srq: %s", strerror(errno));
	if (fcntl(b->ctx->async_fd, F_SETFL,
		  fcntl(b->ctx->async_fd, F_GETFL) | O_NONBLOCK))
		eroce_die("fcntl: %s", strerror(errno));
	for (i = 0; i < NQP; i++) {
		qa[i] = eroce_side_qp(a, IBV_QPT_RC, NULL, SRQ_DEPTH);
		qb[i] = eroce_side_qp(b, IBV_QPT_RC, srq, SRQ_DEPTH);
		a->qp = qa[i];
		b->qp = qb[i];
		eroce_pair_connect(a, b, 100 * i, 7);
	}
	for (i = 0; i < SRQ_DEPTH; i++)
		post_slot(b, i);

	for (i = 0; i < ROUNDS; i++) {
		send_msgs(a, SRQ_DEPTH);
		recv_msgs(b, SRQ_DEPTH, true);
	}
	limit_phase(a, b);
	eroce_result("data", !msgs_bad && msgs_ok == sent[0] + sent[1] &&
		     rcvd[0] == sent[0] && rcvd[1] == sent[1],
		     "%u of %u messages of %u bytes checked through the SRQ (QPs %u + %u)%s%s",
		     msgs_ok, sent[0] + sent[1], MSG_LEN, rcvd[0], rcvd[1],
		     msgs_bad ? "; " : "", first_bad);

	for (i = 0; i < NQP; i++)
		if (ibv_destroy_qp(qa[i]) || ibv_destroy_qp(qb[i]))
			eroce_die("ibv_destroy_qp: %s", strerror(errno));
	a->qp = NULL;
	b->qp = NULL;
	if (ibv_destroy_srq(srq))
		eroce_die("ibv_destroy_srq: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	struct eroce_side a = {}, b = {};

	if (argc != 5) {
		fprintf(stderr, "usage: eroce_srq DEV_A GID_A DEV_B GID_B\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	a.name = argv[1];
	a.gid_index = atoi(argv[2]);
	b.name = argv[3];
	b.gid_index = atoi(argv[4]);
	eroce_side_open(&a, false, BUF_LEN, 4 * SRQ_DEPTH);
	eroce_side_open(&b, false, BUF_LEN, 4 * SRQ_DEPTH);
	run(&a, &b);
	return eroce_results_status();
}
