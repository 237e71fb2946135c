// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_uc: what a UC QP promises, between two devices in one process
 * (tool_pair.h): UC QP A sends to UC QP B.  Modes:
 *
 *   data    SENDs of 1 byte to 16 packets, SEND with immediate, WRITE and
 *           WRITE with immediate: every completion as the verbs define
 *           it, every byte compared; READ, atomics and SEND with
 *           Invalidate are refused at posting with EINVAL
 *   loss    A's first PSN is 4096 and every message is 3 packets: run with
 *           PSNs 4100 and 4112 (the middle packets of messages 2 and 6)
 *           dropped once on their way to B.  Message 2 is lost, and the
 *           receive WQE it took holds message 3; message 4 finds no
 *           receive WQE and is dropped; message 5 arrives; message 6 is
 *           lost and its receive WQE, still held, completes with a flush
 *           error when B goes to ERR.  A's sends all succeed and nothing
 *           is sent twice.
 *   errors  a WRITE with a wrong R_Key and one past the end of B's MR:
 *           A's completions succeed (UC has no NAK), B's memory is
 *           untouched and B stays in RTS, and a good WRITE lands after
 *           them; a SEND longer than B's receive WQE completes there with
 *           IBV_WC_LOC_LEN_ERR and B goes to ERR
 *
 * Waits are bounded by the counters of B's device (sysfs hw_counters),
 * never by sleeping: a packet B dropped shows in its counter.
 *
 * Prints "result:" lines; exits 0 when every expectation held, 1
 * otherwise, 2 on a usage or setup error.
 *
 * usage: eroce_uc MODE DEV_A GID_A DEV_B GID_B
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "tool_pair.h"
#include "tool_util.h"

#define BUF_LEN		(1u << 20)
#define SLOT		(64u << 10)	/* B's receive buffers, A's sources */
#define DEPTH		64
#define FIRST_PSN	4096
#define WAIT_SECS	20.0

static uint32_t mtu_bytes(const struct eroce_side *a,
			  const struct eroce_side *b)
{
	enum ibv_mtu m = a->mtu < b->mtu ? a->mtu : b->mtu;

	return 128u << m;
}

/* @op of @len bytes from @off of s->buf; RDMA to @rkey, @raddr */
static int post(struct eroce_side *s, enum ibv_wr_opcode op, uint32_t off,
		uint32_t len, uint64_t id, uint32_t rkey, uint64_t raddr)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf + off, .length = len,
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(id),
	}, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(s->qp, &wr, &bad);
}

static int post_recv(struct eroce_side *s, uint32_t off, uint32_t len,
		     uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf + off, .length = len,
		.lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

/* SEND @len bytes of message @seed from A's slot @seed */
static int send_msg(struct eroce_side *a, uint32_t seed, uint32_t len,
		    enum ibv_wr_opcode op)
{
	uint32_t off = (seed % (BUF_LEN / SLOT)) * SLOT;

	eroce_pattern(a->buf + off, len, seed);
	return post(a, op, off, len, seed, 0, 0);
}

/* A's completion of @id: it must succeed */
static bool sent_ok(struct eroce_side *a, uint64_t id)
{
	struct ibv_wc wc;

	if (eroce_side_poll(a, WAIT_SECS, &wc))
		return false;
	if (wc.wr_id != id || wc.status != IBV_WC_SUCCESS) {
		printf("# A: wr_id %" PRIu64 " status %s\n", wc.wr_id,
		       ibv_wc_status_str(wc.status));
		return false;
	}
	return true;
}

static void uc_connect(struct eroce_side *a, struct eroce_side *b)
{
	a->qp = eroce_side_qp(a, IBV_QPT_UC, NULL, DEPTH);
	b->qp = eroce_side_qp(b, IBV_QPT_UC, NULL, DEPTH);
	eroce_pair_connect(a, b, FIRST_PSN, 0);
}

/* B's next completion: @id, @status, @opcode, @len bytes, imm if @imm */
static bool recv_is(struct eroce_side *b, uint64_t id,
		    enum ibv_wc_status status, enum ibv_wc_opcode opcode,
		    uint32_t len, bool imm)
{
	struct ibv_wc wc;
	bool ok;

	if (eroce_side_poll(b, WAIT_SECS, &wc)) {
		printf("# B: no completion for wr_id %" PRIu64 "\n", id);
		return false;
	}
	ok = wc.wr_id == id && wc.status == status;
	if (ok && status == IBV_WC_SUCCESS)
		ok = wc.opcode == opcode && wc.byte_len == len &&
		     !!(wc.wc_flags & IBV_WC_WITH_IMM) == imm &&
		     (!imm || be32toh(wc.imm_data) == id) &&
		     wc.qp_num == b->qp->qp_num;
	if (!ok)
		printf("# B: wr_id %" PRIu64 " status %s opcode %d len %u flags %#x (want %" PRIu64 " %s %d %u)\n",
		       wc.wr_id, ibv_wc_status_str(wc.status), wc.opcode,
		       wc.byte_len, wc.wc_flags, id, ibv_wc_status_str(status),
		       opcode, len);
	return ok;
}

/* B has no completion within @secs */
static bool recv_none(struct eroce_side *b, double secs)
{
	struct ibv_wc wc;

	if (eroce_side_poll(b, secs, &wc))
		return true;
	printf("# B: unexpected wr_id %" PRIu64 " status %s\n", wc.wr_id,
	       ibv_wc_status_str(wc.status));
	return false;
}

/* wait until B's memory at @off holds message @seed */
static bool landed(struct eroce_side *b, uint32_t off, uint32_t len,
		   uint32_t seed)
{
	double end = eroce_now() + WAIT_SECS;

	while (!eroce_pattern_ok(b->buf + off, len, seed)) {
		if (eroce_now() > end)
			return false;
		usleep(1000);
	}
	return true;
}

static void run_data(struct eroce_side *a, struct eroce_side *b)
{
	uint32_t mtu = mtu_bytes(a, b);
	const uint32_t lens[] = { 1, mtu, 3 * mtu + 17, 16 * mtu };
	uint64_t raddr = (uintptr_t)b->buf;
	unsigned int i;
	bool ok;
	int err;

	uc_connect(a, b);
	for (i = 0; i < 4; i++) {
		uint32_t id = i + 1;

		ok = !post_recv(b, id * SLOT, SLOT, id) &&
		     !send_msg(a, id, lens[i], IBV_WR_SEND) && sent_ok(a, id) &&
		     recv_is(b, id, IBV_WC_SUCCESS, IBV_WC_RECV, lens[i],
			     false) &&
		     eroce_pattern_ok(b->buf + id * SLOT, lens[i], id);
		eroce_result("send", ok, "%u bytes", lens[i]);
	}

	ok = !post_recv(b, 5 * SLOT, SLOT, 5) &&
	     !send_msg(a, 5, 2 * mtu, IBV_WR_SEND_WITH_IMM) && sent_ok(a, 5) &&
	     recv_is(b, 5, IBV_WC_SUCCESS, IBV_WC_RECV, 2 * mtu, true) &&
	     eroce_pattern_ok(b->buf + 5 * SLOT, 2 * mtu, 5);
	eroce_result("send_imm", ok, "%u bytes, immediate data", 2 * mtu);

	eroce_pattern(a->buf + 6 * SLOT, 5 * mtu + 3, 6);
	ok = !post(a, IBV_WR_RDMA_WRITE, 6 * SLOT, 5 * mtu + 3, 6,
		   b->mr->rkey, raddr + 6 * SLOT) &&
	     sent_ok(a, 6) && landed(b, 6 * SLOT, 5 * mtu + 3, 6) &&
	     recv_none(b, 0.2);
	eroce_result("write", ok, "%u bytes, no completion at B", 5 * mtu + 3);

	eroce_pattern(a->buf + 7 * SLOT, 4 * mtu, 7);
	ok = !post_recv(b, 0, 0, 7) &&
	     !post(a, IBV_WR_RDMA_WRITE_WITH_IMM, 7 * SLOT, 4 * mtu, 7,
		   b->mr->rkey, raddr + 7 * SLOT) &&
	     sent_ok(a, 7) &&
	     recv_is(b, 7, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, 4 * mtu,
		     true) &&
	     eroce_pattern_ok(b->buf + 7 * SLOT, 4 * mtu, 7);
	eroce_result("write_imm", ok, "%u bytes, immediate data", 4 * mtu);

	{
		static const enum ibv_wr_opcode refused[] = {
			IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
			IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_SEND_WITH_INV,
		};

		ok = true;
		for (i = 0; i < 4; i++) {
			err = post(a, refused[i], 8 * SLOT, 8, 8,
				   b->mr->rkey, raddr + 8 * SLOT);
			if (err != EINVAL) {
				printf("# opcode %d: %s\n", refused[i],
				       strerror(err));
				ok = false;
			}
		}
		ok = ok && recv_none(a, 0.2) &&
		     eroce_qp_state(a->qp) == IBV_QPS_RTS;
		eroce_result("refused_opcodes", ok,
			     "READ, atomics, SEND with Invalidate: EINVAL");
	}
}

static void run_loss(struct eroce_side *a, struct eroce_side *b)
{
	uint32_t len = 3 * mtu_bytes(a, b);
	uint64_t lost = eroce_counter(b, "uc_messages_lost");
	uint64_t no_wqe = eroce_counter(b, "rx_drop_no_recv_wqe");
	uint32_t id;
	bool ok;

	uc_connect(a, b);
	for (id = 1; id <= 2; id++)
		if (post_recv(b, id * SLOT, SLOT, id))
			eroce_die("post_recv: %s", strerror(errno));
	/* messages 1, 2 (its middle packet dropped) and 3 */
	ok = true;
	for (id = 1; id <= 3; id++)
		ok = ok && !send_msg(a, id, len, IBV_WR_SEND) && sent_ok(a, id);
	eroce_result("sends_complete", ok, "A: 3 sends of %u bytes", len);
	ok = recv_is(b, 1, IBV_WC_SUCCESS, IBV_WC_RECV, len, false) &&
	     eroce_pattern_ok(b->buf + SLOT, len, 1);
	eroce_result("first_message", ok, "before the loss, byte for byte");
	ok = recv_is(b, 2, IBV_WC_SUCCESS, IBV_WC_RECV, len, false) &&
	     eroce_pattern_ok(b->buf + 2 * SLOT, len, 3);
	eroce_result("wqe_reused", ok,
		     "message 3 in the receive WQE message 2 took");
	ok = eroce_counter_reaches(b, "uc_messages_lost", lost + 1);
	eroce_result("lost_counted", ok, "uc_messages_lost +%" PRIu64,
		     eroce_counter(b, "uc_messages_lost") - lost);

	/* message 4 finds no receive WQE; message 5 one posted after it */
	ok = !send_msg(a, 4, len, IBV_WR_SEND) && sent_ok(a, 4) &&
	     eroce_counter_reaches(b, "rx_drop_no_recv_wqe", no_wqe + 1) &&
	     !post_recv(b, 3 * SLOT, SLOT, 3) &&
	     !send_msg(a, 5, len, IBV_WR_SEND) && sent_ok(a, 5) &&
	     recv_is(b, 3, IBV_WC_SUCCESS, IBV_WC_RECV, len, false) &&
	     eroce_pattern_ok(b->buf + 3 * SLOT, len, 5);
	eroce_result("no_recv_wqe_dropped", ok,
		     "message 4 dropped, message 5 after it arrives");

	/* message 6 is lost; its receive WQE is flushed with the QP */
	ok = !post_recv(b, 4 * SLOT, SLOT, 4) &&
	     !send_msg(a, 6, len, IBV_WR_SEND) && sent_ok(a, 6) &&
	     eroce_counter_reaches(b, "uc_messages_lost", lost + 2) &&
	     recv_none(b, 0.2);
	if (ok) {
		struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

		ok = !ibv_modify_qp(b->qp, &attr, IBV_QP_STATE) &&
		     recv_is(b, 4, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, false);
	}
	eroce_result("held_wqe_flushed", ok,
		     "the receive WQE of a lost message completes on ERR");
	ok = eroce_qp_state(a->qp) == IBV_QPS_RTS && recv_none(a, 0.2);
	eroce_result("sender_unaffected", ok, "A in RTS, nothing more");
}

static void run_errors(struct eroce_side *a, struct eroce_side *b)
{
	uint32_t mtu = mtu_bytes(a, b);
	uint64_t raddr = (uintptr_t)b->buf;
	uint64_t acc = eroce_counter(b, "rx_drop_uc_access");
	bool ok;

	uc_connect(a, b);
	eroce_pattern(a->buf + SLOT, 2 * mtu, 1);
	ok = !post(a, IBV_WR_RDMA_WRITE, SLOT, 2 * mtu, 1,
		   b->mr->rkey ^ 0x80, raddr + SLOT) &&
	     sent_ok(a, 1) &&
	     eroce_counter_reaches(b, "rx_drop_uc_access", acc + 1);
	eroce_result("bad_rkey_dropped", ok, "rx_drop_uc_access +1");
	ok = !post(a, IBV_WR_RDMA_WRITE, SLOT, 2 * mtu, 2, b->mr->rkey,
		   raddr + BUF_LEN - mtu) &&
	     sent_ok(a, 2) &&
	     eroce_counter_reaches(b, "rx_drop_uc_access", acc + 2);
	eroce_result("past_mr_dropped", ok, "rx_drop_uc_access +2");
	ok = eroce_zeroed(b->buf + SLOT, 2 * mtu) &&
	     eroce_zeroed(b->buf + BUF_LEN - mtu, mtu) &&
	     eroce_qp_state(b->qp) == IBV_QPS_RTS &&
	     !post(a, IBV_WR_RDMA_WRITE, SLOT, 2 * mtu, 3, b->mr->rkey,
		   raddr + 2 * SLOT) &&
	     sent_ok(a, 3) && landed(b, 2 * SLOT, 2 * mtu, 1);
	eroce_result("good_write_after", ok,
		     "B untouched and in RTS, the next WRITE lands");

	ok = !post_recv(b, 3 * SLOT, mtu, 4) &&
	     !send_msg(a, 4, 2 * mtu, IBV_WR_SEND) && sent_ok(a, 4) &&
	     recv_is(b, 4, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, false) &&
	     eroce_qp_state(b->qp) == IBV_QPS_ERR;
	eroce_result("recv_too_small", ok, "IBV_WC_LOC_LEN_ERR, B in ERR");
}

static void usage(void)
{
	fprintf(stderr,
		"usage: eroce_uc data|loss|errors DEV_A GID_A DEV_B GID_B\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct eroce_side a = {}, b = {};
	const char *mode;

	if (argc != 6)
		usage();
	mode = argv[1];
	a.name = argv[2];
	a.gid_index = atoi(argv[3]);
	b.name = argv[4];
	b.gid_index = atoi(argv[5]);
	eroce_side_open(&a, false, BUF_LEN, 4 * DEPTH);
	eroce_side_open(&b, false, BUF_LEN, 4 * DEPTH);

	if (!strcmp(mode, "data"))
		run_data(&a, &b);
	else if (!strcmp(mode, "loss"))
		run_loss(&a, &b);
	else if (!strcmp(mode, "errors"))
		run_errors(&a, &b);
	else
		usage();
	return eroce_results_status();
}
