// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_mw: memory windows between two devices in one process
 * (tool_pair.h).  RC QP A (the requester) reaches region R of B through
 * windows that B binds to MR M over R (M has IBV_ACCESS_MW_BIND); a
 * window is 8 KiB, 4 KiB into R unless said otherwise:
 *
 *   caps               B shows IBV_DEVICE_MEM_WINDOW and
 *                      IBV_DEVICE_MEM_WINDOW_TYPE_2B, and max_mw > 0
 *   type1_bind         ibv_bind_mw() of a type 1 window: IBV_WC_BIND_MW
 *                      with its wr_id, and the window's rkey changed
 *   type1_data         A's WRITE through it lands in the window byte for
 *                      byte and nowhere else in R; A's READ brings it back
 *   type1_bounds       a WRITE that ends one byte past the window, one
 *                      that starts one byte before it: remote access
 *                      errors, R untouched
 *   type1_rights       a window bound for REMOTE_READ only: A's READ
 *                      works, its WRITE is a remote access error
 *   type1_rebind       the window bound again, 16 KiB into R: the new
 *                      rkey lands there, the old one is a remote access
 *                      error
 *   type1_unbind       a bind to no MR: IBV_WC_BIND_MW, and the rkey is a
 *                      remote access error from then on
 *   type2_bind         a type 2 window bound by an IBV_WR_BIND_MW that
 *                      gives it ibv_inc_rkey() of its rkey: A's WRITE
 *                      and READ through that rkey work
 *   type2_local_inv    B's IBV_WR_LOCAL_INV of the rkey: IBV_WC_LOCAL_INV,
 *                      then A's WRITE through it is a remote access error
 *   type2_remote_inv   bound anew, A's SEND with Invalidate of the rkey:
 *                      B's receive carries IBV_WC_WITH_INV and the rkey,
 *                      and A's WRITE through it is a remote access error
 *   type2_double_bind  a bind of a window still bound:
 *                      IBV_WC_MW_BIND_ERR
 *   type2_zero_based   a window with IBV_ACCESS_ZERO_BASED: A's WRITEs to
 *                      remote addresses 0 and 100 land at the window's
 *                      start and 100 bytes into it; a READ from 0 agrees
 *   no_bind_type1      binding to an MR without IBV_ACCESS_MW_BIND fails
 *                      (ibv_bind_mw() returns an error or the completion
 *                      is IBV_WC_MW_BIND_ERR) and the rkey gives no access
 *   no_bind_type2      the same for a type 2 window: IBV_WC_MW_BIND_ERR
 *   dereg_busy         ibv_dereg_mr() of an MR a window is bound to:
 *                      EBUSY, and the MR still takes A's WRITE; after
 *                      ibv_dealloc_mw() the dereg succeeds
 *   type2_zero_length  a type 2 bind of length 0: IBV_WC_MW_BIND_ERR
 *
 * A window's remote write or atomic right needs local write on its MR,
 * not that remote right (IBA C10-74); the lw_ checks use MRs over region
 * L of B registered with IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND
 * alone:
 *
 *   lw_type1           a type 1 window with remote read, write and
 *                      atomic rights: bound, A's WRITE lands, A's
 *                      FETCH_ADD returns what was there and adds
 *   lw_type1_unbind    a zero-length ibv_bind_mw() that still names the
 *                      MR: IBV_WC_BIND_MW, the rkey opens nothing, and
 *                      the MR can be deregistered (the window no longer
 *                      holds it)
 *   lw_type2_local_inv a type 2 window with remote write and atomic
 *                      rights: bound, A's WRITE lands; IBV_WR_LOCAL_INV,
 *                      then A's WRITE is a remote access error
 *   lw_type2_remote_inv bound anew, A's SEND with Invalidate kills it
 *   lw_wr_bind_mw      bound anew with ibv_wr_bind_mw() on B's extended
 *                      QP: A's WRITE lands; after ibv_dealloc_mw() the
 *                      rkey opens nothing, and the MR can be deregistered
 *   no_local_write     an MR with remote read and MW_BIND but no local
 *                      write: a window with remote write is not bound
 *                      (IBV_WC_MW_BIND_ERR), a read-only one is and
 *                      serves A's READ
 *
 * Fifteen binds succeed (mw.sh holds B's mw_binds counter to that).  A
 * remote access error or a failed bind leaves the QPs in ERR: a check
 * that goes on connects anew, and so does run() after a check that left
 * a QP out of RTS.  Prints "result:" lines; exits 0 when every
 * expectation held, 1 otherwise, 2 on a usage or setup error.
 *
 * usage: eroce_mw DEV_A GID_A DEV_B GID_B
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

#define BUF_LEN		(1u << 20)
#define R_OFF		(256u << 10)	/* R, in B's buffer */
#define R_LEN		(64u << 10)
#define W_OFF		4096u		/* a window, in R */
#define W_LEN		8192u
#define W2_OFF		(16u << 10)	/* where a rebind moves it */
#define N_OFF		(512u << 10)	/* B's MR without MW_BIND */
#define N_LEN		(64u << 10)
#define D_OFF		(768u << 10)	/* B's MR for dereg_busy */
#define D_LEN		(16u << 10)
#define RECV_OFF	(896u << 10)	/* B's receive buffer */
#define L_OFF		(640u << 10)	/* B's region for the lw_ checks */
#define L_LEN		(64u << 10)
#define READ_OFF	(512u << 10)	/* where A's READs land, in A's */
#define ATOM_OFF	(768u << 10)	/* where A's FETCH_ADDs land */
#define DEPTH		16
#define WAIT_SECS	20.0

#define MR_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)
#define MW_MR_ACCESS	(MR_ACCESS | IBV_ACCESS_MW_BIND)
#define WIN_RW		(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define WIN_WA		(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)
#define LW_MR_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND)
#define REM_ACCESS	IBV_WC_REM_ACCESS_ERR
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* what a helper returns instead of a completion status */
#define NO_WC		-1	/* none completed, or another request */
#define REFUSED		-2	/* the verb itself returned an error */

struct mw_test {
	struct eroce_side a, b;
	struct ibv_mr *mr;	/* M, over R; IBV_ACCESS_MW_BIND */
	uint8_t *r;		/* R */
	uint64_t id;		/* the last work request's id */
	struct ibv_mw *mw;	/* the type1_, type2_ or lw_ checks' window */
	uint32_t rkey;		/* its rkey, when of type 2 */
	struct ibv_mr *lmr;	/* the lw_ checks' MR over L */
	uint8_t *l;		/* L */
};

static const char *st_str(int st)
{
	if (st == NO_WC)
		return "no completion";
	if (st == REFUSED)
		return "refused";
	return ibv_wc_status_str(st);
}

/* B's RC QP, with the ibv_qp_ex interface for ibv_wr_bind_mw() */
static struct ibv_qp *b_qp_ex(struct eroce_side *b)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_RC,
		.send_cq = b->cq,
		.recv_cq = b->cq,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = b->pd,
		.send_ops_flags = IBV_QP_EX_WITH_BIND_MW |
				  IBV_QP_EX_WITH_LOCAL_INV,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(b->ctx, &attr);

	if (!qp)
		eroce_die("ibv_create_qp_ex on B: %s", strerror(errno));
	return qp;
}

/*
 * fresh RC QPs A <-> B, the old ones destroyed and their completions
 * gone; B's takes remote atomics too
 */
static void reconnect(struct mw_test *t)
{
	struct ibv_qp_attr attr = {
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	struct eroce_side *a = &t->a, *b = &t->b;
	struct ibv_wc wc;

	if (a->qp && (ibv_destroy_qp(a->qp) || ibv_destroy_qp(b->qp)))
		eroce_die("ibv_destroy_qp: %s", strerror(errno));
	while (ibv_poll_cq(a->cq, 1, &wc) > 0 || ibv_poll_cq(b->cq, 1, &wc) > 0)
		;
	a->qp = eroce_side_qp(a, IBV_QPT_RC, NULL, DEPTH);
	b->qp = b_qp_ex(b);
	eroce_pair_connect(a, b, 0, 7);
	if (ibv_modify_qp(b->qp, &attr, IBV_QP_ACCESS_FLAGS))
		eroce_die("B: remote atomics: %s", strerror(errno));
}

/*
 * @s's next completion, which must be of request @id and, when it
 * succeeded, an @opcode: its status, or NO_WC
 */
static int completion(struct eroce_side *s, uint64_t id,
		      enum ibv_wc_opcode opcode, struct ibv_wc *wc)
{
	if (eroce_side_poll(s, WAIT_SECS, wc)) {
		printf("# %s: request %" PRIu64 " did not complete\n",
		       s->name, id);
		return NO_WC;
	}
	if (wc->wr_id != id ||
	    (wc->status == IBV_WC_SUCCESS && wc->opcode != opcode)) {
		printf("# %s: request %" PRIu64 " opcode %d", s->name,
		       wc->wr_id, wc->opcode);
		printf(", not %" PRIu64 " %d\n", id, opcode);
		return NO_WC;
	}
	if (wc->status != IBV_WC_SUCCESS)
		printf("# %s: request %" PRIu64 ": %s\n", s->name, id,
		       ibv_wc_status_str(wc->status));
	return wc->status;
}

/* post @wr, signaled, on s->qp: its completion's status (an @opcode) */
static int run_wr(struct mw_test *t, struct eroce_side *s,
		  struct ibv_send_wr *wr, enum ibv_wc_opcode opcode)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int ret;

	wr->wr_id = ++t->id;
	wr->send_flags = IBV_SEND_SIGNALED;
	ret = ibv_post_send(s->qp, wr, &bad);
	if (ret) {
		printf("# %s: ibv_post_send: %s\n", s->name, strerror(ret));
		return REFUSED;
	}
	return completion(s, wr->wr_id, opcode, &wc);
}

/*
 * A's @op with @len bytes of A's buffer at @off, through @rkey at @raddr
 * (SEND with Invalidate: of @rkey): A's completion status
 */
static int from_a(struct mw_test *t, enum ibv_wr_opcode op, uint32_t off,
		  uint32_t len, uint32_t rkey, uint64_t raddr)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)t->a.buf + off, .length = len,
		.lkey = t->a.mr->lkey,
	};
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = op };
	enum ibv_wc_opcode wc_op = IBV_WC_SEND;

	if (op == IBV_WR_SEND_WITH_INV) {
		wr.invalidate_rkey = rkey;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
		wc_op = op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ :
						 IBV_WC_RDMA_WRITE;
	}
	return run_wr(t, &t->a, &wr, wc_op);
}

/*
 * A's FETCH_ADD of @add at @raddr through @rkey, the value before in
 * *@orig: A's completion status
 */
static int fetch_add(struct mw_test *t, uint32_t rkey, uint64_t raddr,
		     uint64_t add, uint64_t *orig)
{
	uint64_t *local = (uint64_t *)(t->a.buf + ATOM_OFF);
	struct ibv_sge sge = {
		.addr = (uintptr_t)local, .length = sizeof(*local),
		.lkey = t->a.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	int st;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = add;
	*local = 0;
	st = run_wr(t, &t->a, &wr, IBV_WC_FETCH_ADD);
	*orig = *local;
	return st;
}

/* A WRITEs message @seed's @len bytes to @raddr through @rkey */
static int write_to(struct mw_test *t, uint32_t seed, uint32_t len,
		    uint32_t rkey, uint64_t raddr)
{
	eroce_pattern(t->a.buf, len, seed);
	return from_a(t, IBV_WR_RDMA_WRITE, 0, len, rkey, raddr);
}

/* A READs @len bytes at @raddr through @rkey to READ_OFF of its buffer */
static int read_from(struct mw_test *t, uint32_t len, uint32_t rkey,
		     uint64_t raddr)
{
	memset(t->a.buf + READ_OFF, 0, len);
	return from_a(t, IBV_WR_RDMA_READ, READ_OFF, len, rkey, raddr);
}

/* A's last READ brought @want's @len bytes */
static bool read_got(const struct mw_test *t, const uint8_t *want,
		     uint32_t len)
{
	return !memcmp(t->a.buf + READ_OFF, want, len);
}

/* R holds message @seed's @len bytes at @off and zeroes elsewhere */
static bool r_holds(const struct mw_test *t, uint32_t off, uint32_t len,
		    uint32_t seed)
{
	return eroce_zeroed(t->r, off) &&
	       eroce_pattern_ok(t->r + off, len, seed) &&
	       eroce_zeroed(t->r + off + len, R_LEN - off - len);
}

/* the remote address of R's byte @off, for a window that is not zero based */
static uint64_t r_addr(const struct mw_test *t, uint32_t off)
{
	return (uintptr_t)t->r + off;
}

/*
 * Bind @mw as @info says: a type 1 window through ibv_bind_mw(), a type
 * 2 one through an IBV_WR_BIND_MW that gives it @rkey.  B's completion
 * status.
 */
static int bind_info(struct mw_test *t, struct ibv_mw *mw, uint32_t rkey,
		     const struct ibv_mw_bind_info *info)
{
	struct ibv_mw_bind mb = {
		.wr_id = ++t->id, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = *info,
	};
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW };
	struct ibv_wc wc;
	int ret;

	if (mw->type == IBV_MW_TYPE_2) {
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = rkey;
		wr.bind_mw.bind_info = *info;
		return run_wr(t, &t->b, &wr, IBV_WC_BIND_MW);
	}
	ret = ibv_bind_mw(t->b.qp, mw, &mb);
	if (ret) {
		printf("# B: ibv_bind_mw: %s\n", strerror(ret));
		return REFUSED;
	}
	return completion(&t->b, mb.wr_id, IBV_WC_BIND_MW, &wc);
}

/* @len bytes at @off of @mr (none: unbind) for @access */
static struct ibv_mw_bind_info range_of(struct ibv_mr *mr, uint32_t off,
					uint32_t len, unsigned int access)
{
	return (struct ibv_mw_bind_info){
		.mr = mr,
		.addr = mr ? (uintptr_t)mr->addr + off : 0,
		.length = len,
		.mw_access_flags = access,
	};
}

/* bind_info() of W_LEN bytes at @off of @mr (none: unbind) for @access */
static int bind_win(struct mw_test *t, struct ibv_mw *mw, uint32_t rkey,
		    struct ibv_mr *mr, uint32_t off, unsigned int access)
{
	struct ibv_mw_bind_info info = range_of(mr, off, mr ? W_LEN : 0,
						access);

	return bind_info(t, mw, rkey, &info);
}

/* the same as a type 2 bind_win(), through ibv_wr_bind_mw() */
static int wr_bind_win(struct mw_test *t, struct ibv_mw *mw, uint32_t rkey,
		       struct ibv_mr *mr, uint32_t off, unsigned int access)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(t->b.qp);
	struct ibv_mw_bind_info info = range_of(mr, off, W_LEN, access);
	struct ibv_wc wc;
	int ret;

	ibv_wr_start(qpx);
	qpx->wr_id = ++t->id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(qpx, mw, rkey, &info);
	ret = ibv_wr_complete(qpx);
	if (ret) {
		printf("# B: ibv_wr_bind_mw: %s\n", strerror(ret));
		return REFUSED;
	}
	return completion(&t->b, t->id, IBV_WC_BIND_MW, &wc);
}

/* B's IBV_WR_LOCAL_INV of @rkey */
static int local_inv(struct mw_test *t, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = rkey,
	};

	return run_wr(t, &t->b, &wr, IBV_WC_LOCAL_INV);
}

static struct ibv_mw *alloc_mw(struct mw_test *t, enum ibv_mw_type type)
{
	struct ibv_mw *mw = ibv_alloc_mw(t->b.pd, type);

	if (!mw)
		eroce_die("ibv_alloc_mw type %d: %s", type, strerror(errno));
	return mw;
}

static void dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_dealloc_mw(mw);

	if (ret)
		eroce_die("ibv_dealloc_mw: %s", strerror(ret));
}

static struct ibv_mr *reg_mr(struct mw_test *t, uint8_t *p, uint32_t len,
			     int access)
{
	struct ibv_mr *mr = ibv_reg_mr(t->b.pd, p, len, access);

	if (!mr)
		eroce_die("ibv_reg_mr: %s", strerror(errno));
	return mr;
}

static void caps(struct mw_test *t)
{
	struct ibv_device_attr_ex attr = {};
	unsigned int flags;
	int ret;
	bool ok;

	ret = ibv_query_device_ex(t->b.ctx, NULL, &attr);
	flags = attr.orig_attr.device_cap_flags;
	ok = !ret && (flags & IBV_DEVICE_MEM_WINDOW) &&
	     (flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) &&
	     attr.orig_attr.max_mw > 0;
	eroce_result("caps", ok, "query %d, device_cap_flags %#x, max_mw %d",
		     ret, flags, attr.orig_attr.max_mw);
}

/* t->mw: a type 1 window, bound over the window */
static void type1_bind(struct mw_test *t)
{
	struct ibv_mw *mw = alloc_mw(t, IBV_MW_TYPE_1);
	uint32_t rkey = mw->rkey;
	int st, wr, rd;
	bool ok;

	t->mw = mw;
	st = bind_win(t, mw, 0, t->mr, W_OFF, WIN_RW);
	eroce_result("type1_bind", st == IBV_WC_SUCCESS && mw->rkey != rkey,
		     "%s, rkey %#x -> %#x", st_str(st), rkey, mw->rkey);

	wr = write_to(t, 1, W_LEN, mw->rkey, r_addr(t, W_OFF));
	ok = wr == IBV_WC_SUCCESS && r_holds(t, W_OFF, W_LEN, 1);
	rd = read_from(t, W_LEN, mw->rkey, r_addr(t, W_OFF));
	ok = ok && rd == IBV_WC_SUCCESS && read_got(t, t->r + W_OFF, W_LEN);
	eroce_result("type1_data", ok, "WRITE %s, READ %s", st_str(wr),
		     st_str(rd));
}

static void type1_bounds(struct mw_test *t)
{
	uint32_t rkey = t->mw->rkey;
	int past, before;
	bool ok;

	memset(t->r, 0, R_LEN);
	past = write_to(t, 2, 16, rkey, r_addr(t, W_OFF + W_LEN - 15));
	ok = past == REM_ACCESS && eroce_zeroed(t->r, R_LEN);
	reconnect(t);
	before = write_to(t, 3, 16, rkey, r_addr(t, W_OFF - 1));
	ok = ok && before == REM_ACCESS && eroce_zeroed(t->r, R_LEN);
	eroce_result("type1_bounds", ok,
		     "WRITE one byte past the end: %s, from one before: %s",
		     st_str(past), st_str(before));
}

static void type1_rights(struct mw_test *t)
{
	struct ibv_mw *ro = alloc_mw(t, IBV_MW_TYPE_1);
	int st, rd, wr;
	bool ok;

	memset(t->r, 0, R_LEN);
	eroce_pattern(t->r + W_OFF, W_LEN, 4);
	st = bind_win(t, ro, 0, t->mr, W_OFF, IBV_ACCESS_REMOTE_READ);
	rd = read_from(t, W_LEN, ro->rkey, r_addr(t, W_OFF));
	ok = st == IBV_WC_SUCCESS && rd == IBV_WC_SUCCESS &&
	     read_got(t, t->r + W_OFF, W_LEN);
	wr = write_to(t, 5, W_LEN, ro->rkey, r_addr(t, W_OFF));
	ok = ok && wr == REM_ACCESS && r_holds(t, W_OFF, W_LEN, 4);
	dealloc_mw(ro);
	eroce_result("type1_rights", ok,
		     "read-only window: bind %s, READ %s, WRITE %s",
		     st_str(st), st_str(rd), st_str(wr));
}

/* t->mw bound anew, at W2_OFF */
static void type1_rebind(struct mw_test *t)
{
	struct ibv_mw *mw = t->mw;
	uint32_t old = mw->rkey;
	int st, wr_new, wr_old;
	bool ok;

	memset(t->r, 0, R_LEN);
	st = bind_win(t, mw, 0, t->mr, W2_OFF, WIN_RW);
	wr_new = write_to(t, 6, W_LEN, mw->rkey, r_addr(t, W2_OFF));
	ok = st == IBV_WC_SUCCESS && mw->rkey != old &&
	     wr_new == IBV_WC_SUCCESS && r_holds(t, W2_OFF, W_LEN, 6);
	wr_old = write_to(t, 7, W_LEN, old, r_addr(t, W_OFF));
	ok = ok && wr_old == REM_ACCESS && r_holds(t, W2_OFF, W_LEN, 6);
	eroce_result("type1_rebind", ok,
		     "bind %s, rkey %#x -> %#x: WRITE through the new %s, the old %s",
		     st_str(st), old, mw->rkey, st_str(wr_new), st_str(wr_old));
}

/* t->mw unbound, then deallocated */
static void type1_unbind(struct mw_test *t)
{
	struct ibv_mw *mw = t->mw;
	uint32_t rkey = mw->rkey;
	int st, wr, wr_now = REM_ACCESS;
	bool ok;

	st = bind_win(t, mw, 0, NULL, 0, 0);
	wr = write_to(t, 8, 16, rkey, r_addr(t, W2_OFF));
	if (mw->rkey != rkey) {
		/* the rkey the unbind gave the window opens nothing either */
		reconnect(t);
		wr_now = write_to(t, 9, 16, mw->rkey, r_addr(t, W2_OFF));
	}
	ok = st == IBV_WC_SUCCESS && wr == REM_ACCESS && wr_now == REM_ACCESS &&
	     r_holds(t, W2_OFF, W_LEN, 6);
	eroce_result("type1_unbind", ok,
		     "unbind %s; WRITE through rkey %#x %s, through %#x %s",
		     st_str(st), rkey, st_str(wr), mw->rkey, st_str(wr_now));
	dealloc_mw(mw);
	t->mw = NULL;
}

/* t->mw: a type 2 window, bound over the window with rkey t->rkey */
static void type2_bind(struct mw_test *t)
{
	struct ibv_mw *mw = alloc_mw(t, IBV_MW_TYPE_2);
	int st, wr, rd;
	bool ok;

	t->mw = mw;
	t->rkey = ibv_inc_rkey(mw->rkey);
	memset(t->r, 0, R_LEN);
	st = bind_win(t, mw, t->rkey, t->mr, W_OFF, WIN_RW);
	wr = write_to(t, 10, W_LEN, t->rkey, r_addr(t, W_OFF));
	rd = read_from(t, W_LEN, t->rkey, r_addr(t, W_OFF));
	ok = st == IBV_WC_SUCCESS && wr == IBV_WC_SUCCESS &&
	     r_holds(t, W_OFF, W_LEN, 10) && rd == IBV_WC_SUCCESS &&
	     read_got(t, t->r + W_OFF, W_LEN);
	eroce_result("type2_bind", ok,
		     "bind %s (rkey %#x -> %#x), WRITE %s, READ %s",
		     st_str(st), mw->rkey, t->rkey, st_str(wr), st_str(rd));
}

static void type2_local_inv(struct mw_test *t)
{
	int st, wr;
	bool ok;

	st = local_inv(t, t->rkey);
	wr = write_to(t, 11, W_LEN, t->rkey, r_addr(t, W_OFF));
	ok = st == IBV_WC_SUCCESS && wr == REM_ACCESS &&
	     r_holds(t, W_OFF, W_LEN, 10);
	eroce_result("type2_local_inv", ok, "LOCAL_INV %s, then WRITE %s",
		     st_str(st), st_str(wr));
}

/* t->mw bound anew with the next rkey, then A invalidates it */
static void type2_remote_inv(struct mw_test *t)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)t->b.buf + RECV_OFF, .length = 64,
		.lkey = t->b.mr->lkey,
	};
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc = {};
	int st, sent, got = NO_WC, wr;
	bool ok;

	t->rkey = ibv_inc_rkey(t->rkey);
	st = bind_win(t, t->mw, t->rkey, t->mr, W_OFF, WIN_RW);
	rwr.wr_id = ++t->id;
	if (ibv_post_recv(t->b.qp, &rwr, &bad))
		eroce_die("ibv_post_recv: %s", strerror(errno));
	eroce_pattern(t->a.buf, 64, 12);
	sent = from_a(t, IBV_WR_SEND_WITH_INV, 0, 64, t->rkey, 0);
	if (sent == IBV_WC_SUCCESS)
		got = completion(&t->b, rwr.wr_id, IBV_WC_RECV, &wc);
	ok = st == IBV_WC_SUCCESS && sent == IBV_WC_SUCCESS &&
	     got == IBV_WC_SUCCESS && (wc.wc_flags & IBV_WC_WITH_INV) &&
	     wc.invalidated_rkey == t->rkey && wc.byte_len == 64 &&
	     eroce_pattern_ok(t->b.buf + RECV_OFF, 64, 12);
	wr = write_to(t, 13, 16, t->rkey, r_addr(t, W_OFF));
	ok = ok && wr == REM_ACCESS && r_holds(t, W_OFF, W_LEN, 10);
	eroce_result("type2_remote_inv", ok,
		     "bind %s (rkey %#x), SEND_WITH_INV %s, receive %s flags %#x invalidated %#x, then WRITE %s",
		     st_str(st), t->rkey, st_str(sent), st_str(got),
		     wc.wc_flags, wc.invalidated_rkey, st_str(wr));
}

/* t->mw bound twice, no invalidation between; then deallocated */
static void type2_double_bind(struct mw_test *t)
{
	uint32_t rkey = ibv_inc_rkey(t->rkey);
	int first, second;

	first = bind_win(t, t->mw, rkey, t->mr, W_OFF, WIN_RW);
	second = bind_win(t, t->mw, ibv_inc_rkey(rkey), t->mr, W_OFF, WIN_RW);
	eroce_result("type2_double_bind",
		     first == IBV_WC_SUCCESS && second == IBV_WC_MW_BIND_ERR,
		     "first bind %s, second %s", st_str(first),
		     st_str(second));
	dealloc_mw(t->mw);
	t->mw = NULL;
}

static void type2_zero_based(struct mw_test *t)
{
	struct ibv_mw *mw = alloc_mw(t, IBV_MW_TYPE_2);
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	uint8_t *w = t->r + W_OFF;
	int st, wr0, wr100, rd, inv;
	bool ok;

	memset(t->r, 0, R_LEN);
	st = bind_win(t, mw, rkey, t->mr, W_OFF,
		      WIN_RW | IBV_ACCESS_ZERO_BASED);
	wr0 = write_to(t, 14, 100, rkey, 0);
	wr100 = write_to(t, 15, 200, rkey, 100);
	ok = st == IBV_WC_SUCCESS && wr0 == IBV_WC_SUCCESS &&
	     wr100 == IBV_WC_SUCCESS && eroce_zeroed(t->r, W_OFF) &&
	     eroce_pattern_ok(w, 100, 14) &&
	     eroce_pattern_ok(w + 100, 200, 15) &&
	     eroce_zeroed(w + 300, R_LEN - W_OFF - 300);
	rd = read_from(t, 300, rkey, 0);
	ok = ok && rd == IBV_WC_SUCCESS && read_got(t, w, 300);
	inv = local_inv(t, rkey);
	dealloc_mw(mw);
	eroce_result("type2_zero_based", ok && inv == IBV_WC_SUCCESS,
		     "bind %s, WRITE to 0 %s, to 100 %s, READ from 0 %s, LOCAL_INV %s",
		     st_str(st), st_str(wr0), st_str(wr100), st_str(rd),
		     st_str(inv));
}

/* windows of both types on an MR without IBV_ACCESS_MW_BIND */
static void no_bind(struct mw_test *t)
{
	uint8_t *n = t->b.buf + N_OFF;
	struct ibv_mr *nmr = reg_mr(t, n, N_LEN, MR_ACCESS);
	struct ibv_mw *mw1 = alloc_mw(t, IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = alloc_mw(t, IBV_MW_TYPE_2);
	uint32_t rkey2 = ibv_inc_rkey(mw2->rkey);
	int st, wr;

	st = bind_win(t, mw1, 0, nmr, W_OFF, WIN_RW);
	reconnect(t);
	wr = write_to(t, 16, 16, mw1->rkey, (uintptr_t)n + W_OFF);
	reconnect(t);
	eroce_result("no_bind_type1",
		     (st == REFUSED || st == IBV_WC_MW_BIND_ERR) &&
		     wr == REM_ACCESS && eroce_zeroed(n, N_LEN),
		     "bind %s, then WRITE through rkey %#x %s", st_str(st),
		     mw1->rkey, st_str(wr));

	st = bind_win(t, mw2, rkey2, nmr, W_OFF, WIN_RW);
	reconnect(t);
	wr = write_to(t, 17, 16, rkey2, (uintptr_t)n + W_OFF);
	eroce_result("no_bind_type2", st == IBV_WC_MW_BIND_ERR &&
		     wr == REM_ACCESS && eroce_zeroed(n, N_LEN),
		     "bind %s, then WRITE through rkey %#x %s", st_str(st),
		     rkey2, st_str(wr));

	dealloc_mw(mw1);
	dealloc_mw(mw2);
	if (ibv_dereg_mr(nmr))
		eroce_die("ibv_dereg_mr: %s", strerror(errno));
}

static void dereg_busy(struct mw_test *t)
{
	uint8_t *d = t->b.buf + D_OFF;
	struct ibv_mr *dmr = reg_mr(t, d, D_LEN, MW_MR_ACCESS);
	struct ibv_mw *mw = alloc_mw(t, IBV_MW_TYPE_1);
	int st, busy, wr, dealloc, dereg;
	bool ok;

	st = bind_win(t, mw, 0, dmr, 0, WIN_RW);
	busy = ibv_dereg_mr(dmr);
	if (!busy) {
		dealloc_mw(mw);
		eroce_result("dereg_busy", false,
			     "bind %s, ibv_dereg_mr under the window succeeded",
			     st_str(st));
		return;
	}
	wr = write_to(t, 18, D_LEN, dmr->rkey, (uintptr_t)d);
	ok = st == IBV_WC_SUCCESS && busy == EBUSY && wr == IBV_WC_SUCCESS &&
	     eroce_pattern_ok(d, D_LEN, 18);
	dealloc = ibv_dealloc_mw(mw);
	dereg = dealloc ? -1 : ibv_dereg_mr(dmr);
	eroce_result("dereg_busy", ok && !dealloc && !dereg,
		     "bind %s, ibv_dereg_mr %s, then WRITE through the MR %s; ibv_dealloc_mw %d, ibv_dereg_mr %d",
		     st_str(st), strerror(busy), st_str(wr), dealloc, dereg);
}

/* a type 2 bind of length 0, which would invalidate: o10-37.2.40 */
static void type2_zero_length(struct mw_test *t)
{
	struct ibv_mw *mw = alloc_mw(t, IBV_MW_TYPE_2);
	struct ibv_mw_bind_info info = range_of(t->mr, W_OFF, 0, WIN_RW);
	int st;

	st = bind_info(t, mw, ibv_inc_rkey(mw->rkey), &info);
	dealloc_mw(mw);
	eroce_result("type2_zero_length", st == IBV_WC_MW_BIND_ERR,
		     "bind of length 0: %s", st_str(st));
}

/* L holds message @seed's @len bytes at @off and zeroes elsewhere */
static bool l_holds(const struct mw_test *t, uint32_t off, uint32_t len,
		    uint32_t seed)
{
	return eroce_zeroed(t->l, off) &&
	       eroce_pattern_ok(t->l + off, len, seed) &&
	       eroce_zeroed(t->l + off + len, L_LEN - off - len);
}

/* the remote address of L's byte @off */
static uint64_t l_addr(const struct mw_test *t, uint32_t off)
{
	return (uintptr_t)t->l + off;
}

/*
 * t->mw: a type 1 window with every remote right on t->lmr, an MR over L
 * with local write and MW_BIND alone
 */
static void lw_type1(struct mw_test *t)
{
	struct ibv_mw *mw = alloc_mw(t, IBV_MW_TYPE_1);
	uint64_t *last = (uint64_t *)(t->l + W_OFF + W_LEN - 8);
	uint64_t orig = 0, want;
	int st, wr, at = NO_WC;
	bool ok;

	t->mw = mw;
	t->lmr = reg_mr(t, t->l, L_LEN, LW_MR_ACCESS);
	memset(t->l, 0, L_LEN);
	st = bind_win(t, mw, 0, t->lmr, W_OFF,
		      WIN_RW | IBV_ACCESS_REMOTE_ATOMIC);
	wr = write_to(t, 20, W_LEN, mw->rkey, l_addr(t, W_OFF));
	ok = st == IBV_WC_SUCCESS && wr == IBV_WC_SUCCESS &&
	     l_holds(t, W_OFF, W_LEN, 20);
	want = *last;
	if (ok)
		at = fetch_add(t, mw->rkey, l_addr(t, W_OFF + W_LEN - 8), 5,
			       &orig);
	ok = ok && at == IBV_WC_SUCCESS && orig == want && *last == want + 5;
	eroce_result("lw_type1", ok,
		     "bind with remote write and atomic on an MR with local write only %s, WRITE %s, FETCH_ADD %s (%#" PRIx64 ", expected %#" PRIx64 ")",
		     st_str(st), st_str(wr), st_str(at), orig, want);
}

/*
 * t->mw unbound by a zero-length bind that still names t->lmr, which is
 * deregistered then; t->mw deallocated
 */
static void lw_type1_unbind(struct mw_test *t)
{
	struct ibv_mw_bind_info info = range_of(t->lmr, W_OFF, 0,
						WIN_RW | IBV_ACCESS_REMOTE_ATOMIC);
	uint32_t rkey = t->mw->rkey, now;
	int st, wr, wr_now = REM_ACCESS, dereg;
	bool ok;

	memset(t->l, 0, L_LEN);
	st = bind_info(t, t->mw, 0, &info);
	now = t->mw->rkey;
	wr = write_to(t, 21, 16, rkey, l_addr(t, W_OFF));
	if (now != rkey) {
		reconnect(t);
		wr_now = write_to(t, 22, 16, now, l_addr(t, W_OFF));
	}
	ok = st == IBV_WC_SUCCESS && wr == REM_ACCESS &&
	     wr_now == REM_ACCESS && eroce_zeroed(t->l, L_LEN);
	dereg = ibv_dereg_mr(t->lmr);
	if (!dereg)
		t->lmr = NULL;
	dealloc_mw(t->mw);
	t->mw = NULL;
	if (t->lmr && ibv_dereg_mr(t->lmr))
		eroce_die("ibv_dereg_mr: %s", strerror(errno));
	t->lmr = NULL;
	eroce_result("lw_type1_unbind", ok && !dereg,
		     "zero-length bind naming the MR %s; WRITE through rkey %#x %s, through %#x %s; then ibv_dereg_mr of the MR %s",
		     st_str(st), rkey, st_str(wr), now, st_str(wr_now), dereg ? strerror(dereg) : "ok");
}

/*
 * t->mw: a type 2 window with remote write and atomic rights on t->lmr
 * (local write and MW_BIND alone), bound and LOCAL_INV'd
 */
static void lw_type2_local_inv(struct mw_test *t)
{
	struct ibv_mw *mw = alloc_mw(t, IBV_MW_TYPE_2);
	int st, wr, inv, after;
	bool ok;

	t->mw = mw;
	t->lmr = reg_mr(t, t->l, L_LEN, LW_MR_ACCESS);
	t->rkey = ibv_inc_rkey(mw->rkey);
	memset(t->l, 0, L_LEN);
	st = bind_win(t, mw, t->rkey, t->lmr, W_OFF, WIN_WA);
	wr = write_to(t, 23, W_LEN, t->rkey, l_addr(t, W_OFF));
	ok = st == IBV_WC_SUCCESS && wr == IBV_WC_SUCCESS &&
	     l_holds(t, W_OFF, W_LEN, 23);
	inv = local_inv(t, t->rkey);
	after = write_to(t, 24, 16, t->rkey, l_addr(t, W_OFF));
	ok = ok && inv == IBV_WC_SUCCESS && after == REM_ACCESS &&
	     l_holds(t, W_OFF, W_LEN, 23);
	eroce_result("lw_type2_local_inv", ok,
		     "bind with remote write and atomic on an MR with local write only %s, WRITE %s, LOCAL_INV %s, then WRITE %s",
		     st_str(st), st_str(wr), st_str(inv), st_str(after));
}

/* t->mw bound anew, then A's SEND with Invalidate kills it */
static void lw_type2_remote_inv(struct mw_test *t)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)t->b.buf + RECV_OFF, .length = 64,
		.lkey = t->b.mr->lkey,
	};
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc = {};
	int st, sent = NO_WC, got = NO_WC, wr;
	bool ok;

	t->rkey = ibv_inc_rkey(t->rkey);
	st = bind_win(t, t->mw, t->rkey, t->lmr, W_OFF, WIN_WA);
	rwr.wr_id = ++t->id;
	if (ibv_post_recv(t->b.qp, &rwr, &bad))
		eroce_die("ibv_post_recv: %s", strerror(errno));
	if (st == IBV_WC_SUCCESS)
		sent = from_a(t, IBV_WR_SEND_WITH_INV, 0, 64, t->rkey, 0);
	if (sent == IBV_WC_SUCCESS)
		got = completion(&t->b, rwr.wr_id, IBV_WC_RECV, &wc);
	ok = sent == IBV_WC_SUCCESS && got == IBV_WC_SUCCESS &&
	     (wc.wc_flags & IBV_WC_WITH_INV) &&
	     wc.invalidated_rkey == t->rkey;
	wr = write_to(t, 25, 16, t->rkey, l_addr(t, W_OFF));
	ok = ok && wr == REM_ACCESS && l_holds(t, W_OFF, W_LEN, 23);
	eroce_result("lw_type2_remote_inv", ok,
		     "bind %s, SEND_WITH_INV %s, receive %s flags %#x invalidated %#x, then WRITE %s",
		     st_str(st), st_str(sent), st_str(got), wc.wc_flags,
		     wc.invalidated_rkey, st_str(wr));
}

/*
 * t->mw bound anew by ibv_wr_bind_mw(), then deallocated; t->lmr
 * deregistered
 */
static void lw_wr_bind_mw(struct mw_test *t)
{
	int st, wr, after, dereg;
	bool ok;

	t->rkey = ibv_inc_rkey(t->rkey);
	memset(t->l, 0, L_LEN);
	st = wr_bind_win(t, t->mw, t->rkey, t->lmr, W_OFF, WIN_WA);
	wr = write_to(t, 26, W_LEN, t->rkey, l_addr(t, W_OFF));
	ok = st == IBV_WC_SUCCESS && wr == IBV_WC_SUCCESS &&
	     l_holds(t, W_OFF, W_LEN, 26);
	dealloc_mw(t->mw);
	t->mw = NULL;
	after = write_to(t, 27, 16, t->rkey, l_addr(t, W_OFF));
	ok = ok && after == REM_ACCESS && l_holds(t, W_OFF, W_LEN, 26);
	dereg = ibv_dereg_mr(t->lmr);
	if (dereg)
		eroce_die("ibv_dereg_mr: %s", strerror(dereg));
	t->lmr = NULL;
	eroce_result("lw_wr_bind_mw", ok,
		     "ibv_wr_bind_mw with remote write and atomic on an MR with local write only %s, WRITE %s; after ibv_dealloc_mw WRITE %s",
		     st_str(st), st_str(wr), st_str(after));
}

/* windows on an MR with remote read and MW_BIND, no local write */
static void no_local_write(struct mw_test *t)
{
	struct ibv_mr *mr = reg_mr(t, t->l, L_LEN,
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw2 = alloc_mw(t, IBV_MW_TYPE_2);
	struct ibv_mw *mw1 = alloc_mw(t, IBV_MW_TYPE_1);
	int wst, rst, rd;
	bool ok;

	memset(t->l, 0, L_LEN);
	eroce_pattern(t->l + W_OFF, W_LEN, 28);
	wst = bind_win(t, mw2, ibv_inc_rkey(mw2->rkey), mr, W_OFF,
		       IBV_ACCESS_REMOTE_WRITE);
	reconnect(t);
	rst = bind_win(t, mw1, 0, mr, W_OFF, IBV_ACCESS_REMOTE_READ);
	rd = read_from(t, W_LEN, mw1->rkey, l_addr(t, W_OFF));
	ok = wst == IBV_WC_MW_BIND_ERR && rst == IBV_WC_SUCCESS &&
	     rd == IBV_WC_SUCCESS && read_got(t, t->l + W_OFF, W_LEN);
	dealloc_mw(mw1);
	dealloc_mw(mw2);
	if (ibv_dereg_mr(mr))
		eroce_die("ibv_dereg_mr: %s", strerror(errno));
	eroce_result("no_local_write", ok,
		     "remote write window: %s; read-only window: %s, READ %s",
		     st_str(wst), st_str(rst), st_str(rd));
}

/* in this order: the type1_, type2_ and lw_ checks hand t->mw on */
static void (*const checks[])(struct mw_test *t) = {
	caps,
	type1_bind, type1_bounds, type1_rights, type1_rebind, type1_unbind,
	type2_bind, type2_local_inv, type2_remote_inv, type2_double_bind,
	type2_zero_based,
	no_bind,
	dereg_busy,
	type2_zero_length,
	lw_type1, lw_type1_unbind,
	lw_type2_local_inv, lw_type2_remote_inv, lw_wr_bind_mw,
	no_local_write,
};

static void run(struct mw_test *t)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(checks); i++) {
		checks[i](t);
		if (eroce_qp_state(t->a.qp) != IBV_QPS_RTS ||
		    eroce_qp_state(t->b.qp) != IBV_QPS_RTS)
			reconnect(t);
	}
}

int main(int argc, char **argv)
{
	struct mw_test t = {};

	if (argc != 5) {
		fprintf(stderr, "usage: eroce_mw DEV_A GID_A DEV_B GID_B\n");
		return 2;
	}
	t.a.name = argv[1];
	t.a.gid_index = atoi(argv[2]);
	t.b.name = argv[3];
	t.b.gid_index = atoi(argv[4]);
	eroce_side_open(&t.a, false, BUF_LEN, 4 * DEPTH);
	eroce_side_open(&t.b, false, BUF_LEN, 4 * DEPTH);
	t.r = t.b.buf + R_OFF;
	t.l = t.b.buf + L_OFF;
	t.mr = reg_mr(&t, t.r, R_LEN, MW_MR_ACCESS);
	reconnect(&t);
	run(&t);
	if (ibv_destroy_qp(t.a.qp) || ibv_destroy_qp(t.b.qp) ||
	    ibv_dereg_mr(t.mr))
		eroce_die("cleanup: %s", strerror(errno));
	return eroce_results_status();
}
