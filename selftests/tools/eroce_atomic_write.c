// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_atomic_write: ATOMIC WRITE (IBA 1.5) between two devices in one
 * process (tool_pair.h).  RC QP A, created with ibv_create_qp_ex() and
 * IBV_QP_EX_WITH_ATOMIC_WRITE, stores 8 bytes at a time into B's MR:
 *
 *   post_send        IBV_WR_ATOMIC_WRITE through ibv_post_send(), the
 *                    value in its one 8-byte SGE: IBV_WC_ATOMIC_WRITE,
 *                    the 8 bytes in B's memory, the bytes around them
 *                    untouched
 *   wr_atomic_write  the same through ibv_wr_atomic_write()
 *   burst            32 of them posted at once, more than max_rd_atomic
 *                    (4) lets out together: all complete, in order, and
 *                    all 32 values are in place
 *   misaligned       a remote address not 8-byte aligned: the post is
 *                    EINVAL
 *   wr_bind_mw       the other ibv_qp_ex work requests eroce adds: A
 *                    binds a type 2 window on its own memory with
 *                    ibv_wr_bind_mw() (IBV_WC_BIND_MW), B's RDMA WRITE
 *                    through it lands there, ibv_wr_local_inv() kills it
 *                    (IBV_WC_LOCAL_INV) and B's next WRITE draws
 *                    IBV_WC_REM_ACCESS_ERR
 *   no_write_right   into an MR without remote write:
 *                    IBV_WC_REM_ACCESS_ERR, B's memory unchanged
 *
 * Prints "result:" lines; exits 0 when every expectation held, 1
 * otherwise, 2 on a usage or setup error.
 *
 * usage: eroce_atomic_write DEV_A GID_A DEV_B GID_B
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "tool_pair.h"
#include "tool_util.h"

#define BUF_LEN		(64u << 10)
#define RO_OFF		(32u << 10)	/* B's read-only MR */
#define RO_LEN		4096u
#define BURST		32u
#define WIN_OFF		(48u << 10)	/* A's windowed range */
#define WIN_LEN		4096u
#define DEPTH		64
#define WAIT_SECS	20.0

/* A's QP, with the ibv_qp_ex interface */
static struct ibv_qp_ex *create_qp_ex(struct eroce_side *a)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_RC,
		.send_cq = a->cq,
		.recv_cq = a->cq,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = a->pd,
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE |
				  IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_BIND_MW |
				  IBV_QP_EX_WITH_LOCAL_INV,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(a->ctx, &attr);

	if (!qp)
		eroce_die("ibv_create_qp_ex with ATOMIC_WRITE: %s",
			  strerror(errno));
	a->qp = qp;
	return ibv_qp_to_qp_ex(qp);
}

/* A's extended QP and B's QP, connected; A's ibv_qp_ex */
static struct ibv_qp_ex *connect(struct eroce_side *a, struct eroce_side *b)
{
	struct ibv_qp_ex *qpx = create_qp_ex(a);

	b->qp = eroce_side_qp(b, IBV_QPT_RC, NULL, DEPTH);
	eroce_pair_connect(a, b, 0, 7);
	return qpx;
}

/* ATOMIC WRITE of @val to B's @remote through @rkey, by ibv_post_send() */
static int post_atomic_write(struct eroce_side *a, uint64_t id,
			     uint64_t remote, uint32_t rkey, uint64_t *val)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)val,
		.length = sizeof(*val),
		.lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_ATOMIC_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = remote, .rkey = rkey },
	}, *bad;

	return ibv_post_send(a->qp, &wr, &bad);
}

/*
 * @s's completion of request @id, which must be an @opcode if it
 * succeeded: its status, -1 for none or another
 */
static int completion_of(struct eroce_side *s, uint64_t id,
			 enum ibv_wc_opcode opcode)
{
	struct ibv_wc wc;

	if (eroce_side_poll(s, WAIT_SECS, &wc))
		return -1;
	if (wc.wr_id != id) {
		printf("# completion of request %" PRIu64 ", not %" PRIu64
		       "\n", wc.wr_id, id);
		return -1;
	}
	if (wc.status == IBV_WC_SUCCESS && wc.opcode != opcode) {
		printf("# opcode %d, not %d\n", wc.opcode, opcode);
		return -1;
	}
	return wc.status;
}

static int completion(struct eroce_side *a, uint64_t id)
{
	return completion_of(a, id, IBV_WC_ATOMIC_WRITE);
}

/* B's RDMA WRITE of @len bytes of its buffer to A's @remote via @rkey */
static int b_write(struct eroce_side *b, uint64_t id, uint64_t remote,
		   uint32_t rkey, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)b->buf, .length = len, .lkey = b->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = remote, .rkey = rkey },
	}, *bad;

	if (ibv_post_send(b->qp, &wr, &bad))
		return -1;
	return completion_of(b, id, IBV_WC_RDMA_WRITE);
}

/*
 * ibv_wr_bind_mw() and ibv_wr_local_inv(): a type 2 window over 4 KiB of
 * A's buffer at WIN_OFF, written by B through it, then invalidated
 */
static void check_wr_bind_mw(struct eroce_side *a, struct eroce_side *b,
			     struct ibv_qp_ex *qpx)
{
	uint8_t *win = a->buf + WIN_OFF;
	struct ibv_mw_bind_info bind;
	int st_bind, st_write, st_inv, st_after;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	uint32_t rkey;

	mr = ibv_reg_mr(a->pd, win, WIN_LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	mw = ibv_alloc_mw(a->pd, IBV_MW_TYPE_2);
	if (!mr || !mw)
		eroce_die("MR or window on A: %s", strerror(errno));
	bind = (struct ibv_mw_bind_info){
		.mr = mr, .addr = (uintptr_t)win, .length = WIN_LEN,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	rkey = ibv_inc_rkey(mw->rkey);
	ibv_wr_start(qpx);
	qpx->wr_id = 10;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(qpx, mw, rkey, &bind);
	st_bind = ibv_wr_complete(qpx) ? -1 : completion_of(a, 10,
							   IBV_WC_BIND_MW);

	eroce_pattern(b->buf, WIN_LEN, 7);
	st_write = b_write(b, 11, (uintptr_t)win, rkey, WIN_LEN);

	ibv_wr_start(qpx);
	qpx->wr_id = 12;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(qpx, rkey);
	st_inv = ibv_wr_complete(qpx) ? -1 : completion_of(a, 12,
							  IBV_WC_LOCAL_INV);
	st_after = b_write(b, 13, (uintptr_t)win, rkey, 8);

	eroce_result("wr_bind_mw",
		     !st_bind && !st_write && eroce_pattern_ok(win, WIN_LEN, 7) &&
		     !st_inv && st_after == IBV_WC_REM_ACCESS_ERR,
		     "bind %d, B's WRITE through it %d (data %s), local_inv %d, "
		     "B's WRITE after it %d", st_bind, st_write,
		     eroce_pattern_ok(win, WIN_LEN, 7) ? "landed" : "WRONG",
		     st_inv, st_after);
	if (ibv_dealloc_mw(mw) || ibv_dereg_mr(mr))
		eroce_die("dealloc/dereg on A: %s", strerror(errno));
}

/* B's 8 bytes at @off hold @val and the 8 on each side are still zero */
static bool landed(const struct eroce_side *b, uint32_t off, uint64_t val)
{
	return !memcmp(b->buf + off, &val, sizeof(val)) &&
	       eroce_zeroed(b->buf + off - 8, 8) &&
	       eroce_zeroed(b->buf + off + 8, 8);
}

static uint64_t remote(const struct eroce_side *b, uint32_t off)
{
	return (uintptr_t)b->buf + off;
}

static void run(struct eroce_side *a, struct eroce_side *b)
{
	struct ibv_qp_ex *qpx = connect(a, b);
	uint64_t *vals = (uint64_t *)a->buf, v;
	struct ibv_mr *ro;
	unsigned int i, done;
	int st, err;

	vals[0] = 0x0102030405060708ull;
	err = post_atomic_write(a, 1, remote(b, 64), b->mr->rkey, &vals[0]);
	st = err ? -1 : completion(a, 1);
	eroce_result("post_send", !st && landed(b, 64, vals[0]),
		     "post %d, status %d; B holds %#" PRIx64, err, st,
		     *(uint64_t *)(b->buf + 64));

	v = 0xa5a5a5a55a5a5a5aull;
	ibv_wr_start(qpx);
	qpx->wr_id = 2;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qpx, b->mr->rkey, remote(b, 128), &v);
	err = ibv_wr_complete(qpx);
	st = err ? -1 : completion(a, 2);
	eroce_result("wr_atomic_write", !st && landed(b, 128, v),
		     "wr_complete %d, status %d; B holds %#" PRIx64, err, st,
		     *(uint64_t *)(b->buf + 128));

	/* every other slot from 1 KiB on, so each has zeroes around it */
	for (i = 0, err = 0; i < BURST && !err; i++) {
		vals[i] = 0x1000 + i;
		err = post_atomic_write(a, 100 + i, remote(b, 1024 + 16 * i),
					b->mr->rkey, &vals[i]);
	}
	for (i = 0, done = 0; i < BURST && !err; i++)
		done += completion(a, 100 + i) == IBV_WC_SUCCESS &&
			landed(b, 1024 + 16 * i, 0x1000 + i);
	eroce_result("burst", !err && done == BURST,
		     "%u of %u posted at once completed in order and landed",
		     done, BURST);

	v = 1;
	err = post_atomic_write(a, 3, remote(b, 2052), b->mr->rkey, &v);
	eroce_result("misaligned", err == EINVAL,
		     "a remote address 4 bytes off: ibv_post_send %d (%s)",
		     err, strerror(err));

	/* B's WRITE after the invalidation fails both QPs: reconnect */
	check_wr_bind_mw(a, b, qpx);
	if (ibv_destroy_qp(a->qp) || ibv_destroy_qp(b->qp))
		eroce_die("ibv_destroy_qp: %s", strerror(errno));
	connect(a, b);

	ro = ibv_reg_mr(b->pd, b->buf + RO_OFF, RO_LEN,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!ro)
		eroce_die("ibv_reg_mr (read-only): %s", strerror(errno));
	v = 0xdeadbeefdeadbeefull;
	err = post_atomic_write(a, 4, remote(b, RO_OFF + 64), ro->rkey, &v);
	st = err ? -1 : completion(a, 4);
	eroce_result("no_write_right",
		     st == IBV_WC_REM_ACCESS_ERR &&
		     eroce_zeroed(b->buf + RO_OFF, RO_LEN),
		     "into an MR without remote write: %s, B's memory %s",
		     st < 0 ? "no completion" : ibv_wc_status_str(st),
		     eroce_zeroed(b->buf + RO_OFF, RO_LEN) ? "unchanged" :
							     "CHANGED");
	ibv_dereg_mr(ro);
}

int main(int argc, char **argv)
{
	struct eroce_side a = { 0 }, b = { 0 };

	if (argc != 5) {
		fprintf(stderr, "usage: eroce_atomic_write DEV_A GID_A DEV_B GID_B\n");
		return 2;
	}
	a.name = argv[1];
	a.gid_index = atoi(argv[2]);
	b.name = argv[3];
	b.gid_index = atoi(argv[4]);
	eroce_side_open(&a, false, BUF_LEN, 2 * DEPTH);
	eroce_side_open(&b, false, BUF_LEN, 2 * DEPTH);
	run(&a, &b);
	return eroce_results_status();
}
