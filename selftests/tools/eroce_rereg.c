// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_rereg: ibv_rereg_mr between two devices in one process
 * (tool_pair.h).  RC QP A writes into MR M of B; B re-registers M:
 *
 *   trans       M moves from region X (4 KiB) to region Y (8 KiB): A's
 *               WRITE through the new rkey lands in Y byte for byte, X
 *               stays untouched; ibv_mr's addr and length follow
 *   old_rkey    a WRITE through M's rkey from before: remote access
 *               error at A, X untouched (the old key died)
 *   bad_trans   moving M to memory that cannot be pinned fails, and M
 *               still works where it was
 *   refused     no flags: EINVAL
 *   access      M loses IBV_ACCESS_REMOTE_WRITE: A's WRITE fails with a
 *               remote access error, Y untouched
 *   access_add  M gets IBV_ACCESS_REMOTE_WRITE back: its keys stay,
 *               and A's WRITE through the rkey A had lands in Y
 *   access_repin an MR over Z registered with remote read alone gets
 *               local and remote write: it is pinned anew (new keys),
 *               and A's WRITE through the new rkey lands in Z
 *   recv_trans  B posts a receive into M, then moves M (to the same
 *               memory: a new translation, new keys): A's SEND into that
 *               receive is a Remote Operational Error at A
 *               (IBV_WC_REM_OP_ERR: NAK code 3 for the responder's local
 *               protection error), B's receive IBV_WC_LOC_PROT_ERR
 *   pd          M moves to another PD of B: a WRITE through a QP of the
 *               first PD fails, through a QP of the new PD it lands
 *   recv_pd     B posts a receive into M on the QP of M's PD, then moves
 *               M back to the first PD: as recv_trans
 *
 * Each failed WRITE leaves A's QP in ERR: the next check connects anew.
 * Prints "result:" lines; exits 0 when every expectation held, 1
 * otherwise, 2 on a usage or setup error.
 *
 * usage: eroce_rereg DEV_A GID_A DEV_B GID_B
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <infiniband/verbs.h>

#include "tool_pair.h"
#include "tool_util.h"

#define BUF_LEN		(1u << 20)
#define X_OFF		(256u << 10)	/* M's first region in B's buffer */
#define X_LEN		4096u
#define Y_OFF		(512u << 10)	/* and its second */
#define Y_LEN		8192u
#define Z_OFF		(768u << 10)	/* access_repin's MR */
#define Z_LEN		4096u
#define DEPTH		16
#define WAIT_SECS	20.0
#define M_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

/* fresh RC QPs A <-> B (B's on @pd_b), the old ones destroyed */
static void connect_pair(struct eroce_side *a, struct eroce_side *b,
			 struct ibv_pd *pd_b)
{
	struct ibv_pd *pd = b->pd;

	if (a->qp)
		ibv_destroy_qp(a->qp);
	if (b->qp)
		ibv_destroy_qp(b->qp);
	a->qp = eroce_side_qp(a, IBV_QPT_RC, NULL, DEPTH);
	b->pd = pd_b;
	b->qp = eroce_side_qp(b, IBV_QPT_RC, NULL, DEPTH);
	b->pd = pd;
	eroce_pair_connect(a, b, 0, 7);
}

/*
 * WRITE @len bytes of pattern @seed from A's buffer to @raddr through
 * @rkey; the status of A's completion (-1: none)
 */
static int write_to(struct eroce_side *a, uint32_t len, uint32_t seed,
		    uint32_t rkey, void *raddr)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)a->buf, .length = len, .lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = seed, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	eroce_pattern(a->buf, len, seed);
	wr.wr.rdma.remote_addr = (uintptr_t)raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(a->qp, &wr, &bad) ||
	    eroce_side_poll(a, WAIT_SECS, &wc))
		return -1;
	if (wc.status)
		printf("# A: WRITE %u: %s\n", seed, ibv_wc_status_str(wc.status));
	return wc.status;
}

/*
 * A's SEND of @len bytes of pattern @seed into B's receive posted before:
 * A's completion status in *@st_a, B's in *@st_b (-1: none)
 */
static void send_to(struct eroce_side *a, struct eroce_side *b,
		    uint32_t len, uint32_t seed, int *st_a, int *st_b)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)a->buf, .length = len, .lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = seed, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	*st_a = *st_b = -1;
	eroce_pattern(a->buf, len, seed);
	if (ibv_post_send(a->qp, &wr, &bad))
		return;
	if (!eroce_side_poll(a, WAIT_SECS, &wc))
		*st_a = wc.status;
	if (!eroce_side_poll(b, WAIT_SECS, &wc))
		*st_b = wc.status;
	printf("# SEND %u: A %s, B %s\n", seed,
	       *st_a < 0 ? "none" : ibv_wc_status_str(*st_a),
	       *st_b < 0 ? "none" : ibv_wc_status_str(*st_b));
}

/* post a receive into @m, re-register @m as @flags and @pd say, SEND */
static void recv_rereg(const char *name, struct eroce_side *a,
		       struct eroce_side *b, struct ibv_mr *m, int flags,
		       struct ibv_pd *pd, uint32_t seed)
{
	struct ibv_sge rsge = {
		.addr = (uintptr_t)m->addr, .length = 64, .lkey = m->lkey,
	};
	struct ibv_recv_wr rwr = {
		.wr_id = seed, .sg_list = &rsge, .num_sge = 1,
	}, *rbad;
	uint32_t lkey = m->lkey;
	int ret, st_a, st_b;

	memset(m->addr, 0, m->length);
	if (ibv_post_recv(b->qp, &rwr, &rbad))
		eroce_die("ibv_post_recv: %s", strerror(errno));
	ret = ibv_rereg_mr(m, flags, pd, m->addr, m->length, 0);
	send_to(a, b, 64, seed, &st_a, &st_b);
	eroce_result(name, !ret && st_a == IBV_WC_REM_OP_ERR &&
		     st_b == IBV_WC_LOC_PROT_ERR &&
		     eroce_zeroed(m->addr, m->length),
		     "rereg %d, lkey %#x -> %#x; SEND into the receive posted before: A %d, B %d",
		     ret, lkey, m->lkey, st_a, st_b);
}

/* access_repin: an MR pinned read-only gets write rights */
static void access_repin(struct eroce_side *a, struct eroce_side *b)
{
	uint8_t *z = b->buf + Z_OFF;
	struct ibv_mr *mr;
	uint32_t rkey;
	int ret, st;

	memset(z, 0, Z_LEN);
	mr = ibv_reg_mr(b->pd, z, Z_LEN, IBV_ACCESS_REMOTE_READ);
	if (!mr)
		eroce_die("ibv_reg_mr: %s", strerror(errno));
	rkey = mr->rkey;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   M_ACCESS);
	st = !ret ? write_to(a, Z_LEN, 11, mr->rkey, z) : -1;
	eroce_result("access_repin", !ret && st == IBV_WC_SUCCESS &&
		     eroce_pattern_ok(z, Z_LEN, 11),
		     "rereg %d, rkey %#x -> %#x, WRITE %d", ret, rkey,
		     mr->rkey, st);
	if (st)
		connect_pair(a, b, b->pd);
	if (ibv_dereg_mr(mr))
		eroce_die("ibv_dereg_mr: %s", strerror(errno));
}

static void run(struct eroce_side *a, struct eroce_side *b)
{
	uint8_t *x = b->buf + X_OFF, *y = b->buf + Y_OFF;
	struct ibv_pd *pd2;
	struct ibv_mr *m;
	uint32_t rkey1;
	void *unpinnable;
	int ret, st;
	bool ok;

	m = ibv_reg_mr(b->pd, x, X_LEN, M_ACCESS);
	if (!m)
		eroce_die("ibv_reg_mr: %s", strerror(errno));
	rkey1 = m->rkey;
	connect_pair(a, b, b->pd);

	st = write_to(a, X_LEN, 1, m->rkey, x);
	ok = st == IBV_WC_SUCCESS && eroce_pattern_ok(x, X_LEN, 1);
	memset(x, 0, X_LEN);
	ret = ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, y, Y_LEN,
			   0);
	ok = ok && !ret && m->addr == y && m->length == Y_LEN;
	st = ok ? write_to(a, Y_LEN, 2, m->rkey, y) : -1;
	ok = ok && st == IBV_WC_SUCCESS && eroce_pattern_ok(y, Y_LEN, 2) &&
	     eroce_zeroed(x, X_LEN);
	eroce_result("trans", ok, "rereg %d, rkey %#x -> %#x, WRITE %d", ret,
		     rkey1, m->rkey, st);

	st = write_to(a, X_LEN, 3, rkey1, x);
	eroce_result("old_rkey", st == IBV_WC_REM_ACCESS_ERR && eroce_zeroed(x, X_LEN),
		     "WRITE through rkey %#x: %d", rkey1, st);
	connect_pair(a, b, b->pd);

	unpinnable = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	if (unpinnable == MAP_FAILED)
		eroce_die("mmap: %s", strerror(errno));
	errno = 0;
	ret = ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			   unpinnable, 4096, 0);
	ok = ret && m->addr == y && m->length == Y_LEN;
	st = write_to(a, Y_LEN, 4, m->rkey, y);
	ok = ok && st == IBV_WC_SUCCESS && eroce_pattern_ok(y, Y_LEN, 4);
	eroce_result("bad_trans", ok, "rereg %d (%s), then WRITE %d", ret,
		     strerror(errno), st);
	munmap(unpinnable, 4096);

	errno = 0;
	ret = ibv_rereg_mr(m, 0, NULL, NULL, 0, 0);
	eroce_result("refused", ret && errno == EINVAL, "no flags: %d (%s)",
		     ret, strerror(errno));

	memset(y, 0, Y_LEN);
	ret = ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE);
	st = !ret ? write_to(a, Y_LEN, 5, m->rkey, y) : -1;
	eroce_result("access", !ret && st == IBV_WC_REM_ACCESS_ERR &&
		     eroce_zeroed(y, Y_LEN), "rereg %d, WRITE %d", ret, st);
	connect_pair(a, b, b->pd);

	rkey1 = m->rkey;
	ret = ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   M_ACCESS);
	st = !ret ? write_to(a, Y_LEN, 8, rkey1, y) : -1;
	eroce_result("access_add", !ret && m->rkey == rkey1 &&
		     st == IBV_WC_SUCCESS && eroce_pattern_ok(y, Y_LEN, 8),
		     "rereg %d, rkey %#x -> %#x, WRITE through %#x %d", ret,
		     rkey1, m->rkey, rkey1, st);
	if (st)
		connect_pair(a, b, b->pd);
	access_repin(a, b);

	recv_rereg("recv_trans", a, b, m, IBV_REREG_MR_CHANGE_TRANSLATION,
		   NULL, 9);
	connect_pair(a, b, b->pd);

	pd2 = ibv_alloc_pd(b->ctx);
	if (!pd2)
		eroce_die("ibv_alloc_pd: %s", strerror(errno));
	ret = ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_PD |
			   IBV_REREG_MR_CHANGE_ACCESS, pd2, NULL, 0, M_ACCESS);
	ok = !ret && m->pd == pd2;
	st = ok ? write_to(a, Y_LEN, 6, m->rkey, y) : -1;
	ok = ok && st == IBV_WC_REM_ACCESS_ERR && eroce_zeroed(y, Y_LEN);
	connect_pair(a, b, pd2);
	st = ok ? write_to(a, Y_LEN, 7, m->rkey, y) : -1;
	ok = ok && st == IBV_WC_SUCCESS && eroce_pattern_ok(y, Y_LEN, 7);
	eroce_result("pd", ok, "rereg %d; WRITE through the first PD's QP refused, through the new PD's QP %d",
		     ret, st);

	recv_rereg("recv_pd", a, b, m, IBV_REREG_MR_CHANGE_PD, b->pd, 10);

	ibv_destroy_qp(a->qp);
	ibv_destroy_qp(b->qp);
	a->qp = b->qp = NULL;
	if (ibv_dereg_mr(m) || ibv_dealloc_pd(pd2))
		eroce_die("cleanup: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	struct eroce_side a = {}, b = {};

	if (argc != 5) {
		fprintf(stderr, "usage: eroce_rereg DEV_A GID_A DEV_B GID_B\n");
		return 2;
	}
	a.name = argv[1];
	a.gid_index = atoi(argv[2]);
	b.name = argv[3];
	b.gid_index = atoi(argv[4]);
	eroce_side_open(&a, false, BUF_LEN, 4 * DEPTH);
	eroce_side_open(&b, false, BUF_LEN, 4 * DEPTH);
	run(&a, &b);
	return eroce_results_status();
}
