// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_ringfuzz: hostile userspace against eroce's shared rings.
 *
 * Userspace owns the SQ, RQ, SRQ and CQ rings it shares with the kernel
 * (include/uapi/rdma/eroce-abi.h) and may write anything into them at any
 * time.  This program does so.  One process opens two devices (the rdma
 * subsystem's shared netns mode shows every device in every namespace), or
 * one device twice, which then talks to itself through its own GID, and
 * runs seeded iterations of random actions, each on objects of its own:
 *
 *   verbs     create/destroy CQs, QPs (RC, UC, UD, and types eroce does
 *             not have), SRQs, MRs (also over a ring's own mapping), MWs
 *             and AHs, with valid and invalid attributes; modify_qp through
 *             legal and illegal transitions with random attribute values,
 *             well-behaved connects, query_qp, rate limits; resize and arm
 *             CQs; post_send, post_recv and post_srq_recv with random
 *             opcodes, SGE counts, lengths, keys, inline sizes and remote
 *             targets; doorbells; polls of every CQ
 *   rings     rewrites behind the provider's back (the program reaches the
 *             rings through the provider's structures, userspace/eroce.h,
 *             as eroce_lifetime's corrupt-sq does): SQ/RQ/SRQ producer and
 *             consumer indices (random, huge, behind, ahead), the SQ's
 *             doorbell flag, WQE fields (opcode, flags, num_sge, SGE
 *             address/length/key, inline length, remote address and key,
 *             UD address, atomic and bind fields) of an entry just posted,
 *             one still pending or one written raw, then a doorbell (RQ and
 *             SRQ: a SEND from the peer); CQ indices, flags and CQEs
 *   races     the same rewrites in a loop for up to 3 ms while the kernel
 *             consumes the entries just posted (SQ), receives into them
 *             (RQ, SRQ) or produces CQEs (CQ)
 *   mappings  a ring mapped longer than it is, MAP_PRIVATE, or grown by
 *             mremap (each must fail), and a second mapping written to
 *
 * Rewrites hit "victims" only: half the QPs and SRQs and two CQs in five,
 * chosen when they are created.  The others' rings are never rewritten,
 * so that what they complete can be judged.  Every wait is bounded.  An iteration ends after at most a few hundred
 * actions or ITER_SECS, polls its CQs and destroys everything (or, one
 * time in eight, closes the contexts with everything alive, as a process
 * that dies does).  After -t seconds, a sanity check on fresh contexts and
 * objects: SENDs, a WRITE and a READ over a new RC pair, every byte checked.
 *
 * What no correct kernel produces is judged "impossible": on a CQ whose
 * ring was never rewritten, a completion for a QP that does not use it; on
 * a queue whose ring was never rewritten (nor the rings of its QP), a
 * wr_id never posted to it, a completion twice, a successful completion of
 * an unsignaled send or of another opcode than posted, a receive longer
 * than its buffers; a verb that must fail and did not (an illegal QP
 * transition, a size past the device's limits, an MR over unmapped memory,
 * a CQ or SRQ destroyed while a QP uses it, a ring mapped or grown past its
 * end); an object that cannot be destroyed once nothing uses it.  After a
 * rewrite anything is legitimate on that ring and is not judged.
 *
 * Output: "act:" lines with -v (every action); "impossible:" lines, with
 * the actions before the first few; "# progress:" every 10 s; "stat:" lines
 * (actions per kind, outcomes of each verb with the errnos seen,
 * completions per status, async events); "result: sanity_* ok|FAIL" and
 * "result: outcomes ok|FAIL".
 *
 * Exit status: 0 the sanity transfer passed and nothing impossible was
 * seen; 1 otherwise; 2 a usage or setup error (including objects for the
 * sanity transfer that cannot be made); 3 an action did not return within
 * the watchdog's limit (the process may then stay stuck in the kernel).
 *
 * usage: eroce_ringfuzz [-s SEED] [-t SECONDS] [-i FIRST] [-n ITERATIONS]
 *                       [-w SECONDS] [-v] -d DEV[:GID] [-d DEV[:GID]]
 *
 *   -s  the seed (1); -t  run iterations for this long (60 s); -i, -n  the
 *   first iteration's number (0) and at most how many; -w  the watchdog's
 *   limit for one action (60 s); -v  print every action; -d  the devices,
 *   each with its GID index (default: its first IPv4 RoCE v2 GID).
 *
 * DEV must be an eroce device.  Iteration K draws its actions from SEED
 * and K alone: -s SEED -i K -n 1 replays it (the same actions as long as
 * the kernel answers alike).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "eroce.h"
#include "tool_pair.h"
#include "tool_util.h"

#define NR_SIDES	2
#define NR_PD		2
#define MAX_CQ		4	/* alive at once, per side */
#define MAX_QP		6
#define MAX_SRQ		2
#define MAX_MR		6
#define MAX_AH		4
#define MAX_MW		2
#define CQ_RECS		16	/* records per side and iteration */
#define QP_RECS		24
#define SRQ_RECS	8
#define MAX_SEQ		2048	/* work requests judged per queue and iteration */
#define NR_DEAD		8	/* keys of objects gone, for reuse */
#define BUF_LEN		(4u << 20)
#define PAGE		4096u
#define QKEY		0x11111111u
#define GSI_QKEY	0x80010000u
#define MAX_RATE_KBPS	(400u * 1000 * 1000)	/* eroce's limit */
#define ITER_SECS	3.0
#define POLL_BATCH	16
#define POST_MAX	16	/* work requests per post */
#define SGE_MAX		36	/* SGEs per work request: past eroce's 32 */
#define SANITY_LEN	(2u << 20)
#define SANITY_SECS	30.0

/* wr_id: magic 12 | kind 4 | iteration 8 | side 4 | record 8 | seq 28 */
#define WR_MAGIC	0xf2aULL
#define WR_GARBAGE	0xbadULL
enum { K_SQ = 1, K_RQ, K_SRQ };

static struct {
	uint64_t seed;
	double secs;
	unsigned long first;
	unsigned long count;
	double watchdog;
	bool verbose;
} opt = {
	.seed = 1,
	.secs = 60,
	.count = ULONG_MAX,
	.watchdog = 60,
};

/* ---- random numbers (splitmix64), one stream per iteration */

static uint64_t rng;

static uint64_t rnd64(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t rnd32(void)
{
	return (uint32_t)rnd64();
}

/* uniform in [0, n); 0 when n is 0 */
static uint32_t below(uint32_t n)
{
	return (uint32_t)(((uint64_t)rnd32() * n) >> 32);
}

static bool pct(unsigned int p)
{
	return below(100) < p;
}

/* a 32-bit value from the edges, where off-by-ones live */
static uint32_t rnd_edge(void)
{
	static const uint32_t v[] = {
		0, 1, 2, 7, 8, 15, 16, 31, 32, 33, 63, 64, 255, 256, 511, 512,
		513, 1023, 1024, 4095, 4096, 4097, 65535, 65536, 0x7fffffff,
		0x80000000, 0x80000001, 0xfffffffe, 0xffffffff,
	};

	return pct(80) ? v[below(sizeof(v) / sizeof(v[0]))] : rnd32();
}

/* a length: mostly short, sometimes up to @max or an edge */
static uint32_t rnd_len(uint32_t max)
{
	switch (below(10)) {
	case 0:
		return rnd_edge();
	case 1:
	case 2:
	case 3:
		return below(64) + 1;
	case 4:
	case 5:
	case 6:
		return below(4096) + 1;
	default:
		return below(max) + 1;
	}
}

/* an address no MR of this process covers */
static uint64_t rnd_addr(void)
{
	static const uint64_t v[] = {
		0, 1, 4096, 0x7ffffffff000ULL, 0xffff800000000000ULL,
		0xffffffffffffff00ULL, 0x8000000000000000ULL,
	};

	return pct(60) ? v[below(sizeof(v) / sizeof(v[0]))] : rnd64();
}

/* ---- what happened: actions, verbs and their errnos, completions, events */

enum verb {
	V_ALLOC_PD, V_DEALLOC_PD, V_CREATE_CQ, V_DESTROY_CQ, V_RESIZE_CQ,
	V_ARM_CQ, V_CREATE_QP, V_DESTROY_QP, V_MODIFY_QP, V_QUERY_QP,
	V_RATE_LIMIT, V_CREATE_SRQ, V_DESTROY_SRQ, V_MODIFY_SRQ, V_REG_MR,
	V_DEREG_MR, V_ALLOC_MW, V_DEALLOC_MW, V_CREATE_AH, V_DESTROY_AH,
	V_POST_SEND, V_POST_RECV, V_POST_SRQ_RECV, V_DOORBELL, V_MMAP,
	V_MREMAP, NR_VERBS
};

static const char *const verb_name[NR_VERBS] = {
	"alloc_pd", "dealloc_pd", "create_cq", "destroy_cq", "resize_cq",
	"arm_cq", "create_qp", "destroy_qp", "modify_qp", "query_qp",
	"rate_limit", "create_srq", "destroy_srq", "modify_srq", "reg_mr",
	"dereg_mr", "alloc_mw", "dealloc_mw", "create_ah", "destroy_ah",
	"post_send", "post_recv", "post_srq_recv", "doorbell", "mmap",
	"mremap",
};

#define NR_ERRNO	134
#define NR_WC		(IBV_WC_TM_RNDV_INCOMPLETE + 1)
#define NR_EVENTS	(IBV_EVENT_WQ_FATAL + 1)

static const char *const wc_name[NR_WC + 1] = {
	"SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR",
	"LOC_PROT_ERR", "WR_FLUSH_ERR", "MW_BIND_ERR", "BAD_RESP_ERR",
	"LOC_ACCESS_ERR", "REM_INV_REQ_ERR", "REM_ACCESS_ERR", "REM_OP_ERR",
	"RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR", "LOC_RDD_VIOL_ERR",
	"REM_INV_RD_REQ_ERR", "REM_ABORT_ERR", "INV_EECN_ERR",
	"INV_EEC_STATE_ERR", "FATAL_ERR", "RESP_TIMEOUT_ERR", "GENERAL_ERR",
	"TM_ERR", "TM_RNDV_INCOMPLETE", "garbage",
};

static const char *const event_name[NR_EVENTS + 1] = {
	"CQ_ERR", "QP_FATAL", "QP_REQ_ERR", "QP_ACCESS_ERR", "COMM_EST",
	"SQ_DRAINED", "PATH_MIG", "PATH_MIG_ERR", "DEVICE_FATAL",
	"PORT_ACTIVE", "PORT_ERR", "LID_CHANGE", "PKEY_CHANGE", "SM_CHANGE",
	"SRQ_ERR", "SRQ_LIMIT_REACHED", "QP_LAST_WQE_REACHED",
	"CLIENT_REREGISTER", "GID_CHANGE", "WQ_FATAL", "other",
};

static struct {
	unsigned long iterations;
	unsigned long abandoned;
	unsigned long actions;
	unsigned long verb_ok[NR_VERBS];
	unsigned long verb_err[NR_VERBS][NR_ERRNO];	/* [0]: no errno */
	unsigned long wc[NR_WC + 1];
	unsigned long wc_judged;
	unsigned long wc_rewritten_cq;	/* from CQs whose ring was rewritten */
	unsigned long taint_sq, taint_rq, taint_srq, taint_cq;
	unsigned long impossible;
	_Atomic unsigned long event[NR_EVENTS + 1];
	_Atomic unsigned long comp_events;
} st;

/* count a verb's outcome, @err 0 or an errno (negative: none set); returns @err */
static int tally(enum verb v, int err)
{
	if (!err)
		st.verb_ok[v]++;
	else
		st.verb_err[v][err > 0 && err < NR_ERRNO ? err : 0]++;
	return err;
}

/* the errno of a verb that returned NULL */
static int null_errno(const void *p)
{
	return p ? 0 : errno ? errno : -1;
}

/* ---- the action log: one line per action, the last LOG_N kept */

#define LOG_N		48
#define LOG_LEN		240

static char log_line[LOG_N][LOG_LEN];
static unsigned long log_n;
static unsigned long iter;			/* the iteration running */

/* append to the current action's line */
static void note(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void note(const char *fmt, ...)
{
	char *l = log_line[log_n % LOG_N];
	size_t len = strlen(l);
	va_list ap;

	if (len + 1 >= LOG_LEN)
		return;
	va_start(ap, fmt);
	vsnprintf(l + len, LOG_LEN - len, fmt, ap);
	va_end(ap);
}

static void log_start(const char *name, int sidx)
{
	log_n++;
	snprintf(log_line[log_n % LOG_N], LOG_LEN, "%lu/%lu %s s%d:", iter,
		 log_n, name, sidx);
}

static void log_dump(void)
{
	unsigned long i = log_n >= LOG_N ? log_n - LOG_N + 1 : 1;

	for (; i <= log_n; i++)
		printf("#   %s\n", log_line[i % LOG_N]);
}

/* an outcome no correct kernel produces */
static void impossible(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void impossible(const char *fmt, ...)
{
	va_list ap;

	printf("impossible: iteration %lu: ", iter);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (st.impossible++ < 3) {
		printf("# the last actions (iteration/action name side: what):\n");
		log_dump();
	}
	fflush(stdout);
}

/* ---- the watchdog: an action that does not return ends the program */

static _Atomic double act_since;		/* 0: between actions */
static const char *_Atomic act_what;

static void act_begin(const char *what)
{
	atomic_store(&act_what, what);
	atomic_store(&act_since, eroce_now());
}

static void act_end(void)
{
	atomic_store(&act_since, 0.0);
}

static void *watchdog(void *arg)
{
	double t;

	(void)arg;
	for (;;) {
		sleep(1);
		t = atomic_load(&act_since);
		if (!t || eroce_now() - t < opt.watchdog)
			continue;
		/* the main thread is stuck: its log is not changing */
		printf("watchdog: iteration %lu: %s has not returned for %.0f s\n",
		       iter, atomic_load(&act_what), eroce_now() - t);
		log_dump();
		fflush(stdout);
		_exit(3);
	}
	return NULL;
}

/* ---- the objects of an iteration */

/* one work request as posted */
struct fz_wr {
	uint8_t op;		/* enum ibv_wr_opcode; receives: 0 */
	uint8_t signaled;
	uint8_t done;		/* its completion was seen */
	uint32_t len;		/* receives: what its SGEs hold */
};

/* what was posted to one SQ, RQ or SRQ in this iteration */
struct fz_queue {
	uint32_t posted;
	bool tainted;		/* its ring was rewritten: not judged */
	struct fz_wr wr[MAX_SEQ];
};

/*
 * A victim's rings are rewritten; the others' never are, so that what
 * they complete can be judged.
 */
struct fz_cq {
	struct ibv_cq *cq;	/* NULL: destroyed */
	bool victim;
	bool tainted;		/* its ring was rewritten: not judged */
};

struct fz_qp {
	struct ibv_qp *qp;	/* NULL: destroyed (the record stays) */
	uint32_t qpn;
	enum ibv_qp_type type;
	int pd;
	int send_cq, recv_cq;	/* records of the same side */
	int srq;		/* -1: its own RQ */
	bool victim;
	bool sig_all;
	struct ibv_qp_cap cap;
	int peer_side, peer;	/* the QP it was connected to; -1: none */
	struct fz_queue sq, rq;
};

struct fz_srq {
	struct ibv_srq *srq;
	bool victim;
	int pd;
	uint32_t max_sge;
	struct fz_queue q;
};

struct fz_mr {
	struct ibv_mr *mr;
	int pd;
	int access;
};

struct fz_ah {
	struct ibv_ah *ah;
	int pd;
	int target;		/* the side it leads to; -1: nowhere */
};

struct fz_side {
	int idx;
	const char *name;
	int gid_index;
	struct ibv_context *ctx;
	struct ibv_comp_channel *chan;
	struct ibv_device_attr dattr;
	enum ibv_mtu mtu;
	union ibv_gid gid;
	uint32_t max_inline;
	uint8_t *buf;		/* BUF_LEN between two PROT_NONE pages */

	/* this iteration's */
	struct ibv_pd *pd[NR_PD];
	struct fz_cq cq[CQ_RECS];
	int ncq;
	struct fz_qp qp[QP_RECS];
	int nqp;
	struct fz_srq srq[SRQ_RECS];
	int nsrq;
	struct fz_mr mr[MAX_MR];
	struct fz_ah ah[MAX_AH];
	struct ibv_mw *mw[MAX_MW];
	uint32_t dead_key[NR_DEAD];
	unsigned int ndead;
	bool big_qp;		/* one QP of the device's maximal size */
};

static struct fz_side side[NR_SIDES];

static struct fz_side *other(const struct fz_side *s)
{
	return &side[1 - s->idx];
}

static uint32_t mtu_bytes(enum ibv_mtu mtu)
{
	return 128u << mtu;
}

/* ---- picking objects */

typedef bool (*fz_ok)(struct fz_side *s, int i);

/* a random index in [0, n) for which @ok holds, or -1 */
static int pick(struct fz_side *s, int n, fz_ok ok)
{
	int i, found = 0, chosen = -1;

	for (i = 0; i < n; i++)
		if (ok(s, i) && !below(++found))
			chosen = i;
	return chosen;
}

static int count(struct fz_side *s, int n, fz_ok ok)
{
	int i, c = 0;

	for (i = 0; i < n; i++)
		c += ok(s, i);
	return c;
}

static bool cq_alive(struct fz_side *s, int i)
{
	return s->cq[i].cq;
}

static bool qp_alive(struct fz_side *s, int i)
{
	return s->qp[i].qp;
}

static bool qp_rts(struct fz_side *s, int i)
{
	return s->qp[i].qp && s->qp[i].qp->state == IBV_QPS_RTS;
}

/* the victim QPs whose send queue is mapped */
static bool qp_victim_sq(struct fz_side *s, int i)
{
	return s->qp[i].qp && s->qp[i].victim && to_eqp(s->qp[i].qp)->sq.map;
}

static bool qp_victim_rq(struct fz_side *s, int i)
{
	return s->qp[i].qp && s->qp[i].victim && s->qp[i].srq < 0 &&
	       to_eqp(s->qp[i].qp)->rq.map;
}

static bool qp_victim_rts(struct fz_side *s, int i)
{
	return qp_rts(s, i) && qp_victim_sq(s, i);
}

static bool srq_alive(struct fz_side *s, int i)
{
	return s->srq[i].srq;
}

static bool srq_victim(struct fz_side *s, int i)
{
	return s->srq[i].srq && s->srq[i].victim;
}

static bool cq_victim(struct fz_side *s, int i)
{
	return s->cq[i].cq && s->cq[i].victim;
}

static bool mr_alive(struct fz_side *s, int i)
{
	return s->mr[i].mr;
}

static bool mr_free(struct fz_side *s, int i)
{
	return !s->mr[i].mr;
}

static bool ah_alive(struct fz_side *s, int i)
{
	return s->ah[i].ah;
}

static bool ah_free(struct fz_side *s, int i)
{
	return !s->ah[i].ah;
}

static bool mw_alive(struct fz_side *s, int i)
{
	return s->mw[i];
}

static bool mw_free(struct fz_side *s, int i)
{
	return !s->mw[i];
}

/* an alive MR on @pd, any alive MR when there is none (or by chance); or NULL */
static struct fz_mr *pick_mr(struct fz_side *s, int pd)
{
	int i, found = 0, chosen = -1;

	for (i = 0; i < MAX_MR; i++)
		if (s->mr[i].mr && s->mr[i].pd == pd && !below(++found))
			chosen = i;
	if (chosen < 0 || pct(5))
		chosen = pick(s, MAX_MR, mr_alive);
	return chosen < 0 ? NULL : &s->mr[chosen];
}

/* an alive MR on @pd that allows @access, or NULL */
static struct fz_mr *pick_mr_for(struct fz_side *s, int pd, int access)
{
	int i, found = 0, chosen = -1;

	for (i = 0; i < MAX_MR; i++)
		if (s->mr[i].mr && s->mr[i].pd == pd && s->mr[i].mr->length &&
		    (s->mr[i].access & access) == access && !below(++found))
			chosen = i;
	return chosen < 0 ? NULL : &s->mr[chosen];
}

static struct fz_qp *pick_qp(struct fz_side *s, fz_ok ok)
{
	int i = pick(s, s->nqp, ok);

	return i < 0 ? NULL : &s->qp[i];
}

static void key_died(struct fz_side *s, uint32_t key)
{
	s->dead_key[s->ndead++ % NR_DEAD] = key;
}

/* an lkey or rkey: of an MR of @s, of one gone, or none at all */
static uint32_t rnd_key(struct fz_side *s)
{
	struct fz_mr *m = pick_mr(s, below(NR_PD));

	switch (below(4)) {
	case 0:
		if (m)
			return pct(50) ? m->mr->lkey : m->mr->rkey;
		return rnd32();
	case 1:
		if (s->ndead)
			return s->dead_key[below(s->ndead < NR_DEAD ? s->ndead : NR_DEAD)];
		return rnd32();
	case 2:
		return rnd_edge();
	default:
		return rnd32();
	}
}

/* ---- what was posted, and the completions judged against it */

static uint64_t wr_id_make(int kind, const struct fz_side *s, int rec,
			   uint32_t seq)
{
	return WR_MAGIC << 52 | (uint64_t)kind << 48 |
	       (uint64_t)(iter & 0xff) << 40 | (uint64_t)s->idx << 36 |
	       (uint64_t)rec << 28 | (seq & 0xfffffff);
}

/* a wr_id for a rewritten entry: never one of ours */
static uint64_t wr_id_garbage(void)
{
	return WR_GARBAGE << 52 | (rnd64() & ((1ULL << 52) - 1));
}

/* note a work request in @fq; false when the queue's log is full */
static bool queue_add(struct fz_queue *fq, uint8_t op, bool signaled,
		      uint64_t len, uint32_t *seq)
{
	struct fz_wr *w;

	if (fq->posted >= MAX_SEQ)
		return false;
	*seq = fq->posted++;
	w = &fq->wr[*seq];
	w->op = op;
	w->signaled = signaled;
	w->done = 0;
	w->len = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
	return true;
}

static void taint(struct fz_queue *fq, unsigned long *counter)
{
	if (!fq->tainted)
		(*counter)++;
	fq->tainted = true;
}

static void taint_cq(struct fz_cq *c)
{
	if (!c->tainted)
		st.taint_cq++;
	c->tainted = true;
}

/* the completion a successful request of @op makes, -1 if none may */
static int wc_opcode_of(uint8_t op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
		return IBV_WC_SEND;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IBV_WR_ATOMIC_WRITE:
		return IBV_WC_ATOMIC_WRITE;
	default:
		return -1;
	}
}

static bool qp_tainted(struct fz_side *s, const struct fz_qp *q)
{
	return q->sq.tainted || q->rq.tainted ||
	       (q->srq >= 0 && s->srq[q->srq].q.tainted);
}

struct wr_key {
	unsigned int kind, iter, side, rec;
	uint32_t seq;
};

static bool wr_id_decode(uint64_t id, struct wr_key *k)
{
	if (id >> 52 != WR_MAGIC)
		return false;
	k->kind = id >> 48 & 0xf;
	k->iter = id >> 40 & 0xff;
	k->side = id >> 36 & 0xf;
	k->rec = id >> 28 & 0xff;
	k->seq = id & 0xfffffff;
	return true;
}

/*
 * The queue @wc's wr_id names, on CQ record @ci of @s, for the QP record
 * @q the completion's QP number found; NULL (and *bad set when that cannot
 * be) when there is none.
 */
static struct fz_queue *wc_queue(struct fz_side *s, int ci,
				 const struct ibv_wc *wc, struct fz_qp *q,
				 const char **bad)
{
	struct wr_key k;
	struct fz_qp *r;

	if (!wr_id_decode(wc->wr_id, &k) || k.iter != (iter & 0xff) ||
	    k.side != (unsigned int)s->idx) {
		*bad = "a wr_id never posted";
		return NULL;
	}
	switch (k.kind) {
	case K_SQ:
	case K_RQ:
		r = k.rec < (unsigned int)s->nqp ? &s->qp[k.rec] : NULL;
		if (!r || r->qpn != wc->qp_num) {
			*bad = "a wr_id posted to another QP";
			return NULL;
		}
		if ((k.kind == K_SQ ? r->send_cq : r->recv_cq) != ci) {
			*bad = "a wr_id whose QP completes on another CQ";
			return NULL;
		}
		return k.kind == K_SQ ? &r->sq : &r->rq;
	case K_SRQ:
		if (k.rec >= (unsigned int)s->nsrq || q->srq != (int)k.rec ||
		    q->recv_cq != ci) {
			*bad = "a wr_id posted to an SRQ the QP does not use";
			return NULL;
		}
		return &s->srq[k.rec].q;
	default:
		*bad = "a wr_id never posted";
		return NULL;
	}
}

/* what the entry @w of @fq must look like when @wc completed it */
static void wc_check_entry(struct fz_queue *fq, bool send,
			   const struct ibv_wc *wc, uint32_t seq)
{
	struct fz_wr *w = &fq->wr[seq];

	if (w->done) {
		impossible("QP %u: wr_id %#" PRIx64 " completed twice (%s)",
			   wc->qp_num, wc->wr_id, wc_name[wc->status < NR_WC ?
							  wc->status : NR_WC]);
		return;
	}
	w->done = 1;
	if (wc->status != IBV_WC_SUCCESS)
		return;
	if (send && !w->signaled)
		impossible("QP %u: a successful completion of the unsignaled wr_id %#" PRIx64,
			   wc->qp_num, wc->wr_id);
	else if (send && (int)wc->opcode != wc_opcode_of(w->op))
		impossible("QP %u: wr_id %#" PRIx64 " of opcode %u completed as %u",
			   wc->qp_num, wc->wr_id, w->op, wc->opcode);
	else if (!send && wc->opcode != IBV_WC_RECV &&
		 wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM)
		impossible("QP %u: receive %#" PRIx64 " completed as opcode %u",
			   wc->qp_num, wc->wr_id, wc->opcode);
	else if (!send && wc->opcode == IBV_WC_RECV && wc->byte_len > w->len)
		impossible("QP %u: receive %#" PRIx64 " got %u bytes into %u",
			   wc->qp_num, wc->wr_id, wc->byte_len, w->len);
}

/* judge a completion from CQ record @ci, whose ring was never rewritten */
static void wc_judge(struct fz_side *s, int ci, const struct ibv_wc *wc)
{
	struct fz_queue *fq;
	struct fz_qp *q = NULL;
	const char *bad = NULL;
	bool tainted = false;
	int i;

	/* the QPs of this CQ with that number (one, unless reused) */
	for (i = s->nqp - 1; i >= 0; i--) {
		struct fz_qp *r = &s->qp[i];

		if (r->qpn != wc->qp_num ||
		    (r->send_cq != ci && r->recv_cq != ci))
			continue;
		tainted |= qp_tainted(s, r);
		if (!q)
			q = r;
	}
	if (!q) {
		impossible("%s CQ %d: a completion for QP %u, which does not use it (wr_id %#" PRIx64 ")",
			   s->name, ci, wc->qp_num, wc->wr_id);
		return;
	}
	fq = wc_queue(s, ci, wc, q, &bad);
	if (!fq) {
		if (!tainted)
			impossible("%s QP %u: %s: %#" PRIx64 " (%s)", s->name,
				   wc->qp_num, bad, wc->wr_id,
				   wc_name[wc->status < NR_WC ? wc->status : NR_WC]);
		return;
	}
	if (fq->tainted)
		return;
	st.wc_judged++;
	if ((wc->wr_id & 0xfffffff) >= fq->posted) {
		impossible("%s QP %u: wr_id %#" PRIx64 " beyond the %u posted",
			   s->name, wc->qp_num, wc->wr_id, fq->posted);
		return;
	}
	wc_check_entry(fq, (wc->wr_id >> 48 & 0xf) == K_SQ, wc,
		       wc->wr_id & 0xfffffff);
}

/* ---- polling */

static void wc_seen(struct fz_side *s, int ci, const struct ibv_wc *wc)
{
	if (s->cq[ci].tainted) {
		st.wc_rewritten_cq++;
		return;
	}
	st.wc[wc->status < NR_WC ? wc->status : NR_WC]++;
	wc_judge(s, ci, wc);
}

/* up to @budget completions of CQ record @ci; returns how many */
static int poll_cq_rec(struct fz_side *s, int ci, int budget)
{
	struct ibv_wc wc[POLL_BATCH];
	int n, i, got = 0;

	while (got < budget) {
		n = ibv_poll_cq(s->cq[ci].cq, POLL_BATCH, wc);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++)
			wc_seen(s, ci, &wc[i]);
		got += n;
	}
	return got;
}

/*
 * Poll every CQ until none had anything for @quiet s, at most @secs.  A
 * rewritten CQ may show garbage for ever: it does not keep this going.
 */
static void drain(double quiet, double secs)
{
	double end = eroce_now() + secs, last = eroce_now();
	int i, c, got, n;

	while (eroce_now() < end && eroce_now() - last < quiet) {
		got = 0;
		for (i = 0; i < NR_SIDES; i++)
			for (c = 0; c < side[i].ncq; c++) {
				if (!side[i].cq[c].cq)
					continue;
				n = poll_cq_rec(&side[i], c, 256);
				if (!side[i].cq[c].tainted)
					got += n;
			}
		if (got)
			last = eroce_now();
		else
			usleep(500);
	}
}

/* ---- asynchronous and completion events, read and acked by a thread */

static pthread_t ev_thread;
static atomic_bool ev_stop;

static void async_event(struct fz_side *s)
{
	struct ibv_async_event ev;

	if (ibv_get_async_event(s->ctx, &ev))
		return;
	st.event[ev.event_type < NR_EVENTS ? ev.event_type : NR_EVENTS]++;
	ibv_ack_async_event(&ev);
}

static void comp_event(struct fz_side *s)
{
	struct ibv_cq *cq;
	void *ctx;

	if (ibv_get_cq_event(s->chan, &cq, &ctx))
		return;
	st.comp_events++;
	ibv_ack_cq_events(cq, 1);
}

/*
 * Every destroy waits until the events it reported were acked, so they
 * are acked at once, by this thread, on non-blocking descriptors.
 */
static void *event_loop(void *arg)
{
	struct pollfd pfd[2 * NR_SIDES];
	int i;

	(void)arg;
	while (!atomic_load(&ev_stop)) {
		for (i = 0; i < NR_SIDES; i++) {
			pfd[2 * i] = (struct pollfd){ side[i].ctx->async_fd, POLLIN, 0 };
			pfd[2 * i + 1] = (struct pollfd){ side[i].chan->fd, POLLIN, 0 };
		}
		if (poll(pfd, 2 * NR_SIDES, 50) <= 0)
			continue;
		for (i = 0; i < 2 * NR_SIDES; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			if (i % 2)
				comp_event(&side[i / 2]);
			else
				async_event(&side[i / 2]);
		}
	}
	return NULL;
}

static void events_start(void)
{
	atomic_store(&ev_stop, false);
	if (pthread_create(&ev_thread, NULL, event_loop, NULL))
		eroce_die("pthread_create failed");
}

static void events_stop(void)
{
	atomic_store(&ev_stop, true);
	pthread_join(ev_thread, NULL);
}

/* ---- CQs */

static bool cq_in_use(struct fz_side *s, int ci)
{
	int i;

	for (i = 0; i < s->nqp; i++)
		if (s->qp[i].qp && (s->qp[i].send_cq == ci ||
				    s->qp[i].recv_cq == ci))
			return true;
	return false;
}

/* a CQ of @cqe entries; one out of the device's range must be refused */
static int cq_add(struct fz_side *s, int cqe, bool chan, int vector)
{
	bool bad = cqe < 1 || cqe > s->dattr.max_cqe || vector < 0 ||
		   vector >= s->ctx->num_comp_vectors;
	struct fz_cq *c;
	struct ibv_cq *cq;

	if (s->ncq >= CQ_RECS)
		return -1;
	c = &s->cq[s->ncq];
	memset(c, 0, sizeof(*c));
	cq = ibv_create_cq(s->ctx, cqe, NULL, chan ? s->chan : NULL, vector);
	note(" cq%d cqe %d chan %d vector %d: %s", s->ncq, cqe, chan, vector,
	     cq ? "ok" : strerror(errno));
	tally(V_CREATE_CQ, null_errno(cq));
	if (cq && bad)
		impossible("%s: ibv_create_cq(cqe %d, vector %d) succeeded",
			   s->name, cqe, vector);
	if (!cq)
		return -1;
	c->cq = cq;
	c->victim = pct(40);
	return s->ncq++;
}

static void act_create_cq(struct fz_side *s)
{
	static const int sizes[] = { 1, 2, 4, 16, 64, 64, 256, 1024 };
	int cqe = sizes[below(8)], vector = 0;

	if (count(s, s->ncq, cq_alive) >= MAX_CQ)
		return;
	if (pct(3))
		cqe = 65536;
	if (pct(12))
		cqe = pct(50) ? (pct(50) ? 0 : -1) : s->dattr.max_cqe + 1;
	if (pct(5))
		vector = pct(50) ? -1 : s->ctx->num_comp_vectors;
	cq_add(s, cqe, pct(50), vector);
}

/*
 * @what @i (a CQ, an SRQ) destroyed with @err its result: it must go
 * exactly when no QP uses it (@used)
 */
static void destroy_check(struct fz_side *s, const char *what, int i,
			  bool used, int err)
{
	note(" %s %d used %d: %s", what, i, used, strerror(err));
	if (!err && used)
		impossible("%s: %s %d destroyed while a QP uses it", s->name,
			   what, i);
	if (err && !used)
		impossible("%s: %s %d, used by nothing, not destroyed: %s",
			   s->name, what, i, strerror(err));
}

static void act_destroy_cq(struct fz_side *s)
{
	int ci = pick(s, s->ncq, cq_alive), err;
	bool used;

	if (ci < 0)
		return;
	used = cq_in_use(s, ci);
	err = tally(V_DESTROY_CQ, ibv_destroy_cq(s->cq[ci].cq));
	destroy_check(s, "CQ", ci, used, err);
	if (!err)
		s->cq[ci].cq = NULL;
}

static void act_resize_cq(struct fz_side *s)
{
	static const int sizes[] = { 1, 2, 8, 64, 128, 512, 4096 };
	int ci = pick(s, s->ncq, cq_alive), cqe = sizes[below(7)], err;

	if (ci < 0)
		return;
	if (pct(15))
		cqe = pct(50) ? -(int)below(3) : s->dattr.max_cqe + 1;
	err = tally(V_RESIZE_CQ, ibv_resize_cq(s->cq[ci].cq, cqe));
	note(" cq%d to %d: %s", ci, cqe, strerror(err));
	if (!err && (cqe < 1 || cqe > s->dattr.max_cqe))
		impossible("%s: CQ %d resized to %d", s->name, ci, cqe);
}

static void act_arm_cq(struct fz_side *s)
{
	int ci = pick(s, s->ncq, cq_alive), sol = pct(30);

	if (ci < 0)
		return;
	note(" cq%d solicited %d", ci, sol);
	tally(V_ARM_CQ, ibv_req_notify_cq(s->cq[ci].cq, sol));
}

static void act_poll_cq(struct fz_side *s)
{
	int ci = pick(s, s->ncq, cq_alive);

	if (ci >= 0)
		note(" cq%d: %d", ci, poll_cq_rec(s, ci, 64));
}

/* ---- QPs */

struct qp_plan {
	struct ibv_qp_init_attr a;
	int pd, send_cq, recv_cq, srq;
	bool bad;		/* past the device's limits or of no type it has */
};

static int qp_add(struct fz_side *s, struct qp_plan *p)
{
	struct fz_qp *q;
	struct ibv_qp *qp;

	if (s->nqp >= QP_RECS || p->send_cq < 0 || p->recv_cq < 0 ||
	    !s->pd[p->pd])
		return -1;
	q = &s->qp[s->nqp];
	memset(q, 0, offsetof(struct fz_qp, sq));
	q->sq.posted = q->rq.posted = 0;
	q->sq.tainted = q->rq.tainted = false;
	p->a.send_cq = s->cq[p->send_cq].cq;
	p->a.recv_cq = s->cq[p->recv_cq].cq;
	p->a.srq = p->srq >= 0 ? s->srq[p->srq].srq : NULL;
	qp = ibv_create_qp(s->pd[p->pd], &p->a);
	note(" qp%d type %d pd %d cq %d/%d srq %d wr %u/%u sge %u/%u inline %u: %s",
	     s->nqp, p->a.qp_type, p->pd, p->send_cq, p->recv_cq, p->srq,
	     p->a.cap.max_send_wr, p->a.cap.max_recv_wr, p->a.cap.max_send_sge,
	     p->a.cap.max_recv_sge, p->a.cap.max_inline_data,
	     qp ? "ok" : strerror(errno));
	tally(V_CREATE_QP, null_errno(qp));
	if (qp && p->bad)
		impossible("%s: ibv_create_qp succeeded past the limits (%s)",
			   s->name, log_line[log_n % LOG_N]);
	if (!qp)
		return -1;
	q->qp = qp;
	q->qpn = qp->qp_num;
	q->type = p->a.qp_type;
	q->pd = p->pd;
	q->send_cq = p->send_cq;
	q->recv_cq = p->recv_cq;
	q->srq = p->srq;
	q->victim = pct(50);
	q->sig_all = p->a.sq_sig_all;
	q->cap = p->a.cap;
	q->peer_side = q->peer = -1;
	return s->nqp++;
}

/* a plan within the limits: @type, on CQ @cq, its own RQ */
static void qp_plan_plain(struct qp_plan *p, enum ibv_qp_type type, int cq)
{
	memset(p, 0, sizeof(*p));
	p->a.qp_type = type;
	p->a.cap.max_send_wr = 64;
	p->a.cap.max_recv_wr = 64;
	p->a.cap.max_send_sge = 4;
	p->a.cap.max_recv_sge = 4;
	p->a.cap.max_inline_data = 64;
	p->send_cq = p->recv_cq = cq;
	p->srq = -1;
}

/* one limit of the plan's passed: the device must refuse it */
static void qp_plan_overdo(struct fz_side *s, struct qp_plan *p)
{
	struct ibv_qp_cap *c = &p->a.cap;

	switch (below(6)) {
	case 0:
		c->max_send_wr = pct(50) ? (uint32_t)s->dattr.max_qp_wr + 1 :
					   UINT32_MAX;
		break;
	case 1:
		c->max_send_sge = s->dattr.max_sge + 1 + below(200);
		break;
	case 2:
		c->max_inline_data = s->max_inline + 1 + below(8192);
		break;
	case 3:
		if (p->srq >= 0)
			return;
		c->max_recv_wr = s->dattr.max_qp_wr + 1;
		break;
	case 4:
		if (p->srq >= 0)
			return;
		c->max_recv_sge = s->dattr.max_sge + 1;
		break;
	default:
		p->a.qp_type = pct(50) ? IBV_QPT_RAW_PACKET : IBV_QPT_DRIVER;
		break;
	}
	p->bad = true;
}

static void qp_plan_random(struct fz_side *s, struct qp_plan *p)
{
	static const uint32_t wrs[] = { 0, 1, 2, 4, 16, 64, 128, 256 };
	static const uint32_t sges[] = { 0, 1, 1, 2, 4, 8 };
	static const uint32_t inl[] = { 0, 0, 16, 64, 220, 512 };
	struct ibv_qp_cap *c = &p->a.cap;

	qp_plan_plain(p, pct(55) ? IBV_QPT_RC : pct(75) ? IBV_QPT_UD :
			 IBV_QPT_UC, pick(s, s->ncq, cq_alive));
	p->recv_cq = pct(60) ? p->send_cq : pick(s, s->ncq, cq_alive);
	p->srq = pct(25) ? pick(s, s->nsrq, srq_alive) : -1;
	p->pd = pct(85) ? 0 : 1;
	p->a.sq_sig_all = pct(40);
	c->max_send_wr = wrs[below(8)];
	c->max_recv_wr = wrs[below(8)];
	c->max_send_sge = sges[below(6)];
	c->max_recv_sge = sges[below(6)];
	c->max_inline_data = inl[below(6)];
	if (!s->big_qp && pct(3)) {
		/* the largest rings the device makes (16 MiB), once */
		c->max_send_wr = s->dattr.max_qp_wr;
		c->max_send_sge = s->dattr.max_sge;
		s->big_qp = true;
	}
	if (pct(12))
		qp_plan_overdo(s, p);
}

static void act_create_qp(struct fz_side *s)
{
	struct qp_plan p;

	if (count(s, s->nqp, qp_alive) >= MAX_QP)
		return;
	qp_plan_random(s, &p);
	qp_add(s, &p);
}

static void act_destroy_qp(struct fz_side *s)
{
	struct fz_qp *q = pick_qp(s, qp_alive);
	int err;

	if (!q)
		return;
	err = tally(V_DESTROY_QP, ibv_destroy_qp(q->qp));
	note(" qp%d (%u): %s", (int)(q - s->qp), q->qpn, strerror(err));
	if (!err)
		q->qp = NULL;
}

static void act_query_qp(struct fz_side *s)
{
	struct fz_qp *q = pick_qp(s, qp_alive);
	enum ibv_qp_state was;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	int err;

	if (!q)
		return;
	was = q->qp->state;
	err = tally(V_QUERY_QP, ibv_query_qp(q->qp, &a, IBV_QP_STATE |
					      (int)(rnd32() & 0x1fffff), &init));
	note(" qp%d: %s state %d", (int)(q - s->qp), strerror(err),
	     err ? -1 : (int)a.qp_state);
	if (err)
		return;
	if (a.qp_state > IBV_QPS_ERR)
		impossible("%s QP %u: query_qp says state %d", s->name, q->qpn,
			   a.qp_state);
	else if ((was == IBV_QPS_RESET || was == IBV_QPS_ERR) &&
		 a.qp_state != was)
		impossible("%s QP %u: in state %d by itself, was %d", s->name,
			   q->qpn, a.qp_state, was);
}

/* a destination GID: mostly a device's, sometimes one nothing answers */
static void pick_dgid(struct fz_side *s, union ibv_gid *g, int *target)
{
	*target = -1;
	memset(g, 0, sizeof(*g));
	switch (below(20)) {
	case 0:
		/* 203.0.113.x: no route, refused at once */
		g->raw[10] = g->raw[11] = 0xff;
		g->raw[12] = 203;
		g->raw[14] = 113;
		g->raw[15] = below(256);
		break;
	case 1:
		g->raw[15] = 1;				/* ::1 */
		break;
	case 2:
		g->global.subnet_prefix = rnd64();	/* anything */
		g->global.interface_id = rnd64();
		break;
	case 3:
		*g = s->gid;				/* itself */
		*target = s->idx;
		break;
	default:
		*g = other(s)->gid;
		*target = other(s)->idx;
		break;
	}
}

static void ah_attr_random(struct fz_side *s, struct ibv_ah_attr *ah, int *target)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = !pct(3);
	ah->port_num = pct(97) ? 1 : below(3);
	ah->sl = pct(90) ? below(8) : below(256);
	pick_dgid(s, &ah->grh.dgid, target);
	ah->grh.sgid_index = pct(95) ? (uint32_t)s->gid_index : below(256);
	ah->grh.hop_limit = pct(90) ? 64 : below(256);
	ah->grh.traffic_class = pct(80) ? 0 : below(256);
	ah->grh.flow_label = pct(90) ? 0 : rnd32();
}

/*
 * Transitions ib_core's table (and so eroce) never allows from a state the
 * QP cannot have left by itself: RESET stays RESET, and ERR stays ERR
 * until the owner resets it; from INIT the engines could at most fail the
 * QP, from where these are not allowed either.
 */
static bool transition_illegal(enum ibv_qp_state cur, unsigned int next)
{
	if (next > IBV_QPS_ERR)
		return true;
	switch (cur) {
	case IBV_QPS_RESET:
		return next != IBV_QPS_RESET && next != IBV_QPS_INIT;
	case IBV_QPS_INIT:
		return next == IBV_QPS_RTS || next == IBV_QPS_SQD ||
		       next == IBV_QPS_SQE;
	case IBV_QPS_ERR:
		return next != IBV_QPS_RESET && next != IBV_QPS_ERR;
	default:
		return false;
	}
}

/* random attributes, each in or out of its range, under a random mask */
static int qp_attr_random(struct fz_side *s, struct fz_qp *q,
			  struct ibv_qp_attr *a)
{
	int mask = pct(92) ? IBV_QP_STATE : 0, target;

	memset(a, 0, sizeof(*a));
	a->qp_state = pct(95) ? below(7) : below(256);
	a->cur_qp_state = below(8);
	a->en_sqd_async_notify = below(2);
	a->qp_access_flags = pct(80) ? below(16) : rnd32();
	a->pkey_index = pct(80) ? 0 : below(4);
	a->port_num = pct(80) ? 1 : below(4);
	a->qkey = pct(80) ? QKEY : rnd32();
	ah_attr_random(s, &a->ah_attr, &target);
	a->path_mtu = pct(80) ? s->mtu : below(8);
	a->timeout = pct(80) ? 8 + below(7) : below(40);
	a->retry_cnt = below(9);
	a->rnr_retry = below(9);
	/* ib_core logs every PSN past 24 bits: a few only */
	a->rq_psn = pct(97) ? rnd32() & 0xffffff : rnd32();
	a->sq_psn = pct(97) ? rnd32() & 0xffffff : rnd32();
	a->max_rd_atomic = pct(80) ? below(17) : below(256);
	a->max_dest_rd_atomic = pct(80) ? below(17) : below(256);
	a->min_rnr_timer = below(40);
	a->path_mig_state = below(4);
	a->dest_qp_num = pct(70) && q->peer >= 0 ?
			 side[q->peer_side].qp[q->peer].qpn : rnd_edge();
	a->rate_limit = rnd_edge();
	mask |= (int)(rnd32() & rnd32() &
		      (IBV_QP_CUR_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY |
		       IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		       IBV_QP_QKEY | IBV_QP_AV | IBV_QP_PATH_MTU |
		       IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_RQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC |
		       IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN |
		       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_PATH_MIG_STATE |
		       IBV_QP_DEST_QPN));
	if (pct(4))
		mask |= pct(50) ? IBV_QP_ALT_PATH : IBV_QP_CAP;
	if (pct(4))
		mask |= IBV_QP_RATE_LIMIT;
	return mask;
}

static void act_modify_qp(struct fz_side *s)
{
	struct fz_qp *q = pick_qp(s, qp_alive);
	enum ibv_qp_state cur;
	struct ibv_qp_attr a;
	int mask, err;

	if (!q)
		return;
	cur = q->qp->state;
	mask = qp_attr_random(s, q, &a);
	err = tally(V_MODIFY_QP, ibv_modify_qp(q->qp, &a, mask));
	note(" qp%d %d -> %d mask %#x: %s", (int)(q - s->qp), cur,
	     a.qp_state, mask, strerror(err));
	if (!err && (mask & IBV_QP_STATE) &&
	    transition_illegal(cur, a.qp_state))
		impossible("%s QP %u: modify_qp from state %d to %d (mask %#x) succeeded",
			   s->name, q->qpn, cur, a.qp_state, mask);
}

/* one step of a well-behaved bring-up of @q towards @pq on @ps */
static int qp_step(struct fz_side *s, struct fz_qp *q, enum ibv_qp_state to,
		   struct fz_side *ps, struct fz_qp *pq, uint32_t psn)
{
	struct ibv_qp_attr a = { .qp_state = to };
	int mask = IBV_QP_STATE;

	if (to == IBV_QPS_INIT) {
		a.port_num = 1;
		a.qkey = QKEY;
		a.qp_access_flags = pct(90) ? IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC : below(16);
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			(q->type == IBV_QPT_UD ? IBV_QP_QKEY :
						 IBV_QP_ACCESS_FLAGS);
	} else if (to == IBV_QPS_RTR && q->type != IBV_QPT_UD) {
		a.path_mtu = s->mtu < ps->mtu ? s->mtu : ps->mtu;
		a.dest_qp_num = pq->qpn;
		a.rq_psn = psn;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = ps->gid;
		a.ah_attr.grh.sgid_index = s->gid_index;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.sl = below(8);
		a.ah_attr.port_num = 1;
		a.max_dest_rd_atomic = 1 + below(16);
		a.min_rnr_timer = 1 + below(12);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		if (q->type == IBV_QPT_RC)
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	} else if (to == IBV_QPS_RTS) {
		a.sq_psn = psn;
		a.timeout = 10 + below(5);
		a.retry_cnt = below(8);
		a.rnr_retry = below(8);
		a.max_rd_atomic = 1 + below(16);
		mask |= IBV_QP_SQ_PSN;
		if (q->type == IBV_QPT_RC)
			mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return tally(V_MODIFY_QP, ibv_modify_qp(q->qp, &a, mask));
}

/*
 * What a consumer whose rings were rewritten would do before it starts
 * over: put back the indices it owns (the provider's own copies).
 */
static void qp_repair(struct fz_qp *q)
{
	struct eroce_qp *eq = to_eqp(q->qp);

	if (eq->sq.map)
		ring_publish_producer(&eq->sq);
	if (eq->rq.map)
		ring_publish_producer(&eq->rq);
}

/* RESET, INIT, RTR, RTS: 0 or the first errno */
static int qp_bring_up(struct fz_side *s, struct fz_qp *q, struct fz_side *ps,
		       struct fz_qp *pq, uint32_t psn)
{
	static const enum ibv_qp_state steps[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
	};
	unsigned int i;
	int err = 0;

	if (pct(70))
		qp_repair(q);
	for (i = 0; i < 4 && !err; i++)
		err = qp_step(s, q, steps[i], ps, pq, psn);
	if (!err && pq) {
		q->peer_side = ps->idx;
		q->peer = (int)(pq - ps->qp);
	}
	return err;
}

static void act_connect_qp(struct fz_side *s)
{
	struct fz_qp *q = pick_qp(s, qp_alive), *pq = NULL;
	struct fz_side *ps = pct(85) ? other(s) : s;
	uint32_t psn = rnd32() & 0xffffff;
	int i, err;

	if (!q || q->type > IBV_QPT_UD)
		return;
	if (q->type != IBV_QPT_UD) {
		for (i = 0; i < 8 && (!pq || pq == q || pq->type != q->type); i++)
			pq = pick_qp(ps, qp_alive);
		if (!pq || pq == q || pq->type != q->type)
			return;
	}
	err = qp_bring_up(s, q, ps, pq, psn);
	if (!err && pq)
		err = qp_bring_up(ps, pq, s, q, psn);
	note(" qp%d (%u) <-> %s qp%d: %s", (int)(q - s->qp), q->qpn,
	     ps->name, pq ? (int)(pq - ps->qp) : -1, strerror(err));
}

static void act_rate_limit(struct fz_side *s)
{
	static const uint32_t rates[] = {
		0, 1, 64, 1000, 100000, MAX_RATE_KBPS, MAX_RATE_KBPS + 1,
	};
	struct fz_qp *q = pick_qp(s, qp_alive);
	struct ibv_qp_rate_limit_attr r = {};
	int err;

	if (!q)
		return;
	r.rate_limit = pct(85) ? rates[below(7)] : rnd32();
	r.max_burst_sz = pct(90) ? 0 : rnd32();
	err = tally(V_RATE_LIMIT, ibv_modify_qp_rate_limit(q->qp, &r));
	note(" qp%d %u kb/s burst %u: %s", (int)(q - s->qp), r.rate_limit,
	     r.max_burst_sz, strerror(err));
	if (!err && r.rate_limit > MAX_RATE_KBPS)
		impossible("%s QP %u: a rate limit of %u kb/s accepted",
			   s->name, q->qpn, r.rate_limit);
}

static void act_doorbell(struct fz_side *s)
{
	struct fz_qp *q = pick_qp(s, qp_alive);

	if (q)
		note(" qp%d: %s", (int)(q - s->qp),
		     strerror(tally(V_DOORBELL, eroce_ring_sq_doorbell(q->qp))));
}

/* ---- SRQs */

static bool srq_in_use(struct fz_side *s, int si)
{
	int i;

	for (i = 0; i < s->nqp; i++)
		if (s->qp[i].qp && s->qp[i].srq == si)
			return true;
	return false;
}

static void act_create_srq(struct fz_side *s)
{
	struct ibv_srq_init_attr a = {};
	struct fz_srq *r;
	int pd = pct(85) ? 0 : 1;
	bool bad = false;

	if (s->nsrq >= SRQ_RECS || !s->pd[pd] ||
	    count(s, s->nsrq, srq_alive) >= MAX_SRQ)
		return;
	r = &s->srq[s->nsrq];
	r->q.posted = 0;
	r->q.tainted = false;
	a.attr.max_wr = pct(90) ? 1 + below(256) : rnd_edge();
	a.attr.max_sge = pct(90) ? below(9) : rnd_edge();
	a.attr.srq_limit = pct(70) ? 0 : below(a.attr.max_wr + 2);
	bad = a.attr.max_wr > (uint32_t)s->dattr.max_srq_wr ||
	      a.attr.max_sge > (uint32_t)s->dattr.max_srq_sge;
	r->srq = ibv_create_srq(s->pd[pd], &a);
	note(" srq%d wr %u sge %u limit %u: %s", s->nsrq, a.attr.max_wr,
	     a.attr.max_sge, a.attr.srq_limit, r->srq ? "ok" : strerror(errno));
	tally(V_CREATE_SRQ, null_errno(r->srq));
	if (r->srq && bad)
		impossible("%s: an SRQ past the limits created (%s)", s->name,
			   log_line[log_n % LOG_N]);
	if (!r->srq)
		return;
	r->pd = pd;
	r->victim = pct(50);
	r->max_sge = a.attr.max_sge;
	s->nsrq++;
}

static void act_destroy_srq(struct fz_side *s)
{
	int si = pick(s, s->nsrq, srq_alive), err;
	bool used;

	if (si < 0)
		return;
	used = srq_in_use(s, si);
	err = tally(V_DESTROY_SRQ, ibv_destroy_srq(s->srq[si].srq));
	destroy_check(s, "SRQ", si, used, err);
	if (!err)
		s->srq[si].srq = NULL;
}

static void act_modify_srq(struct fz_side *s)
{
	int si = pick(s, s->nsrq, srq_alive);
	struct ibv_srq_attr a = {};
	int mask = pct(80) ? IBV_SRQ_LIMIT :
		   IBV_SRQ_MAX_WR | (pct(50) ? IBV_SRQ_LIMIT : 0);

	if (si < 0)
		return;
	a.max_wr = rnd_len(512);
	a.srq_limit = pct(80) ? below(64) : rnd_edge();
	note(" srq%d mask %#x wr %u limit %u: %s", si, mask, a.max_wr,
	     a.srq_limit, strerror(tally(V_MODIFY_SRQ,
					 ibv_modify_srq(s->srq[si].srq, &a, mask))));
}

/* ---- MRs, MWs */

static int mr_access_valid(void)
{
	static const int v[] = {
		IBV_ACCESS_LOCAL_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_REMOTE_READ,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_MW_BIND,
		0,
	};

	return v[below(6)];
}

/* register @len bytes at @addr; @bad: the kernel must refuse */
static struct fz_mr *mr_add(struct fz_side *s, int pd, void *addr,
			    size_t len, int access, bool bad)
{
	int i = pick(s, MAX_MR, mr_free);
	struct ibv_mr *mr;

	if (i < 0 || !s->pd[pd])
		return NULL;
	mr = ibv_reg_mr(s->pd[pd], addr, len, access);
	note(" mr%d pd %d %p+%zu access %#x: %s", i, pd, addr, len, access,
	     mr ? "ok" : strerror(errno));
	tally(V_REG_MR, null_errno(mr));
	if (mr && bad)
		impossible("%s: ibv_reg_mr(%p, %zu, %#x) succeeded", s->name,
			   addr, len, access);
	if (!mr)
		return NULL;
	s->mr[i] = (struct fz_mr){ .mr = mr, .pd = pd, .access = access };
	return &s->mr[i];
}

static void act_reg_mr(struct fz_side *s)
{
	uint32_t off = below(BUF_LEN / PAGE) * PAGE, len;
	int pd = pct(80) ? 0 : 1;

	len = pct(60) ? 1 + below(BUF_LEN - off) : rnd_len(BUF_LEN - off);
	if (len > BUF_LEN - off)
		len = BUF_LEN - off;
	switch (below(14)) {
	case 0:		/* nothing mapped there */
		mr_add(s, pd, NULL, 4096, IBV_ACCESS_LOCAL_WRITE, true);
		return;
	case 1:		/* kernel memory */
		mr_add(s, pd, (void *)0xffff888000000000ULL, 4096,
		       IBV_ACCESS_LOCAL_WRITE, true);
		return;
	case 2:		/* into the guard page after the buffer */
		mr_add(s, pd, s->buf + BUF_LEN - 100, 4096,
		       IBV_ACCESS_LOCAL_WRITE, true);
		return;
	case 3:		/* remote write without local write (IBA 10.6.3.3) */
		mr_add(s, pd, s->buf + off, len, IBV_ACCESS_REMOTE_WRITE,
		       true);
		return;
	case 4:		/* any access bits, unaligned, maybe empty */
		mr_add(s, pd, s->buf + off + below(PAGE),
		       below(len + 1), (int)rnd32(), false);
		return;
	default:
		mr_add(s, pd, s->buf + off, len, mr_access_valid(), false);
		return;
	}
}

static void act_dereg_mr(struct fz_side *s)
{
	int i = pick(s, MAX_MR, mr_alive), err;
	uint32_t lkey, rkey;

	if (i < 0)
		return;
	lkey = s->mr[i].mr->lkey;
	rkey = s->mr[i].mr->rkey;
	err = tally(V_DEREG_MR, ibv_dereg_mr(s->mr[i].mr));
	note(" mr%d: %s", i, strerror(err));
	if (err)
		return;
	s->mr[i].mr = NULL;
	key_died(s, lkey);
	key_died(s, rkey);
}

static void act_alloc_mw(struct fz_side *s)
{
	int i = pick(s, MAX_MW, mw_free), pd = pct(80) ? 0 : 1;
	enum ibv_mw_type type = pct(70) ? IBV_MW_TYPE_2 : IBV_MW_TYPE_1;

	if (i < 0 || !s->pd[pd])
		return;
	s->mw[i] = ibv_alloc_mw(s->pd[pd], type);
	note(" mw%d type %d: %s", i, type, s->mw[i] ? "ok" : strerror(errno));
	tally(V_ALLOC_MW, null_errno(s->mw[i]));
}

static void act_dealloc_mw(struct fz_side *s)
{
	int i = pick(s, MAX_MW, mw_alive), err;
	uint32_t rkey;

	if (i < 0)
		return;
	rkey = s->mw[i]->rkey;
	err = tally(V_DEALLOC_MW, ibv_dealloc_mw(s->mw[i]));
	note(" mw%d: %s", i, strerror(err));
	if (!err) {
		s->mw[i] = NULL;
		key_died(s, rkey);
	}
}

/* ---- AHs */

static void act_create_ah(struct fz_side *s)
{
	int i = pick(s, MAX_AH, ah_free), pd = pct(85) ? 0 : 1, target;
	struct ibv_ah_attr a;
	struct ibv_ah *ah;

	if (i < 0 || !s->pd[pd])
		return;
	ah_attr_random(s, &a, &target);
	ah = ibv_create_ah(s->pd[pd], &a);
	note(" ah%d pd %d to side %d sgid %u port %u: %s", i, pd, target,
	     a.grh.sgid_index, a.port_num, ah ? "ok" : strerror(errno));
	tally(V_CREATE_AH, null_errno(ah));
	if (ah)
		s->ah[i] = (struct fz_ah){ .ah = ah, .pd = pd, .target = target };
}

static void act_destroy_ah(struct fz_side *s)
{
	int i = pick(s, MAX_AH, ah_alive), err;

	if (i < 0)
		return;
	err = tally(V_DESTROY_AH, ibv_destroy_ah(s->ah[i].ah));
	note(" ah%d: %s", i, strerror(err));
	if (!err)
		s->ah[i].ah = NULL;
}

/* ---- work requests */

struct send_req {
	struct ibv_send_wr wr;
	struct ibv_sge sge[SGE_MAX];
};

struct recv_req {
	struct ibv_recv_wr wr;
	struct ibv_sge sge[SGE_MAX];
};

static struct send_req sreq[POST_MAX];
static struct recv_req rreq[POST_MAX];

/* @len bytes (fewer if the MR is shorter) somewhere inside @m */
static void sge_in_mr(const struct fz_mr *m, struct ibv_sge *g, uint32_t len)
{
	uint64_t size = m->mr->length;

	if (len > size)
		len = (uint32_t)size;
	g->addr = (uintptr_t)m->mr->addr + below((uint32_t)(size - len + 1));
	g->length = len;
	g->lkey = m->mr->lkey;
}

/* an SGE of up to @max bytes in an MR of @s on @pd, or not quite */
static void sge_random(struct fz_side *s, int pd, struct ibv_sge *g,
		       uint32_t max)
{
	struct fz_mr *m = pick_mr(s, pd);
	uint32_t len = rnd_len(max);

	if (!m || !m->mr->length) {
		g->addr = rnd_addr();
		g->length = len;
		g->lkey = rnd_key(s);
		return;
	}
	sge_in_mr(m, g, len);
	switch (below(16)) {
	case 0:
		g->addr = (uintptr_t)m->mr->addr + m->mr->length - below(len + 1);
		break;
	case 1:
		g->lkey = rnd_key(s);
		break;
	case 2:
		g->addr = rnd_addr();
		break;
	case 3:
		g->length = rnd_edge();
		break;
	default:
		break;
	}
}

/* a remote address and rkey in an MR of @ps on @pd, or not quite */
static void remote_random(struct fz_side *ps, int pd, uint64_t *addr,
			  uint32_t *rkey, uint32_t len, bool atomic)
{
	struct fz_mr *m = pick_mr(ps, pd);
	struct ibv_sge g;

	if (!m || !m->mr->length || pct(8)) {
		*addr = rnd_addr();
		*rkey = rnd_key(ps);
		return;
	}
	sge_in_mr(m, &g, len);
	*addr = atomic ? g.addr & ~7ULL : g.addr;
	*rkey = m->mr->rkey;
	switch (below(12)) {
	case 0:
		*addr += m->mr->length;
		break;
	case 1:
		*rkey = rnd_key(ps);
		break;
	case 2:
		*addr |= 1 + below(7);
		break;
	default:
		break;
	}
}

static enum ibv_wr_opcode send_opcode(enum ibv_qp_type type)
{
	static const enum ibv_wr_opcode rc[] = {
		IBV_WR_SEND, IBV_WR_SEND, IBV_WR_SEND_WITH_IMM,
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_LOCAL_INV, IBV_WR_SEND_WITH_INV, IBV_WR_BIND_MW,
		IBV_WR_ATOMIC_WRITE,
	};

	if (pct(6))	/* one no QP type has, or an unknown one */
		return pct(50) ? IBV_WR_TSO : (enum ibv_wr_opcode)below(32);
	if (type == IBV_QPT_UD && pct(95))
		return pct(70) ? IBV_WR_SEND : IBV_WR_SEND_WITH_IMM;
	return rc[below(sizeof(rc) / sizeof(rc[0]))];
}

/*
 * Inline data: the provider copies it from the SGEs' addresses at once,
 * so those stay inside this process's buffer whatever their lengths say.
 */
static void sges_inline(struct fz_side *s, struct ibv_sge *g, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		g[i].length = pct(80) ? below(s->max_inline / 2 + 2) :
					below(1025);
		g[i].addr = (uintptr_t)(s->buf + below(BUF_LEN - g[i].length));
		g[i].lkey = rnd32();
	}
}

static void bind_random(struct fz_side *s, struct fz_qp *q,
			struct ibv_send_wr *wr)
{
	int i = pick(s, MAX_MW, mw_alive);
	struct fz_mr *m = pick_mr(s, q->pd);
	struct ibv_mw_bind_info *b = &wr->bind_mw.bind_info;

	wr->bind_mw.mw = i >= 0 && pct(90) ? s->mw[i] : NULL;
	wr->bind_mw.rkey = wr->bind_mw.mw && pct(80) ?
			   ibv_inc_rkey(wr->bind_mw.mw->rkey) : rnd32();
	b->mr = m && pct(85) ? m->mr : NULL;
	if (b->mr && b->mr->length) {
		struct ibv_sge g;

		sge_in_mr(m, &g, rnd_len(65536));
		b->addr = g.addr;
		b->length = pct(85) ? g.length : rnd64();
	} else {
		b->addr = pct(50) ? 0 : rnd64();
		b->length = pct(50) ? 0 : rnd_edge();
	}
	b->mw_access_flags = pct(80) ? (int)(below(4) << 1) | (pct(10) ?
			     IBV_ACCESS_ZERO_BASED : 0) : (int)rnd32();
}

static bool qp_ud_rts(struct fz_side *s, int i)
{
	return qp_rts(s, i) && s->qp[i].type == IBV_QPT_UD;
}

/* the UD address: an AH (some lead to a QP, some nowhere), QPN, Q_Key */
static void ud_random(struct fz_side *s, struct ibv_send_wr *wr)
{
	int i = pick(s, MAX_AH, ah_alive), t;
	struct fz_qp *u = NULL;

	wr->wr.ud.ah = i >= 0 && pct(97) ? s->ah[i].ah : NULL;
	t = i >= 0 ? s->ah[i].target : -1;
	if (t >= 0)
		u = pick_qp(&side[t], qp_ud_rts);
	wr->wr.ud.remote_qpn = u && pct(90) ? u->qpn : pct(30) ? 1 :
			       rnd32() & 0xffffff;
	wr->wr.ud.remote_qkey = pct(85) ? QKEY : wr->wr.ud.remote_qpn == 1 ?
				GSI_QKEY : rnd32();
}

/* the fields of @wr's opcode, which may be any */
static void send_fields(struct fz_side *s, struct fz_qp *q, struct send_req *r)
{
	struct fz_side *ps = q->peer >= 0 ? &side[q->peer_side] : other(s);
	int ppd = q->peer >= 0 ? ps->qp[q->peer].pd : 0;
	struct ibv_send_wr *wr = &r->wr;

	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		remote_random(ps, ppd, &wr->wr.rdma.remote_addr,
			      &wr->wr.rdma.rkey, rnd_len(65536), false);
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (pct(85) && q->cap.max_send_sge) {
			wr->num_sge = 1;
			r->sge[0].length = 8;
		}
		remote_random(ps, ppd, &wr->wr.atomic.remote_addr,
			      &wr->wr.atomic.rkey, 8, true);
		wr->wr.atomic.compare_add = rnd64();
		wr->wr.atomic.swap = rnd64();
		break;
	case IBV_WR_ATOMIC_WRITE:
		/* the provider reads its 8 bytes at once: they are ours */
		wr->num_sge = 1;
		r->sge[0].addr = (uintptr_t)(s->buf + below(BUF_LEN - 8));
		r->sge[0].length = pct(90) ? 8 : rnd_len(64);
		wr->send_flags &= ~IBV_SEND_INLINE;
		remote_random(ps, ppd, &wr->wr.rdma.remote_addr,
			      &wr->wr.rdma.rkey, 8, true);
		break;
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
		wr->invalidate_rkey = rnd_key(pct(50) ? ps : s);
		break;
	case IBV_WR_BIND_MW:
		bind_random(s, q, wr);
		break;
	default:
		break;
	}
	/* last: wr.ud shares its memory with wr.rdma */
	if (q->type == IBV_QPT_UD)
		ud_random(s, wr);
}

static void send_random(struct fz_side *s, struct fz_qp *q, struct send_req *r)
{
	uint32_t max = q->type == IBV_QPT_UD ? mtu_bytes(s->mtu) + 64 : 65536;
	struct ibv_send_wr *wr = &r->wr;
	int i;

	memset(wr, 0, sizeof(*wr));
	wr->opcode = send_opcode(q->type);
	wr->sg_list = r->sge;
	wr->num_sge = pct(75) ? !!q->cap.max_send_sge :
				(int)below(q->cap.max_send_sge + 3);
	if (wr->num_sge > SGE_MAX)
		wr->num_sge = SGE_MAX;
	wr->imm_data = rnd32();
	wr->send_flags = (pct(70) ? IBV_SEND_SIGNALED : 0) |
			 (pct(10) ? IBV_SEND_FENCE : 0) |
			 (pct(20) ? IBV_SEND_SOLICITED : 0);
	if (pct(3))
		wr->send_flags = rnd32() & ~IBV_SEND_INLINE;
	if (pct(15)) {
		wr->send_flags |= IBV_SEND_INLINE;
		sges_inline(s, r->sge, wr->num_sge);
	} else {
		for (i = 0; i < wr->num_sge; i++)
			sge_random(s, q->pd, &r->sge[i], max);
	}
	send_fields(s, q, r);
}

/* link @n requests and number them in @q's send queue; returns how many */
static unsigned int send_list(struct fz_side *s, struct fz_qp *q,
			      unsigned int n)
{
	struct ibv_send_wr *wr;
	unsigned int i;
	uint32_t seq;

	for (i = 0; i < n && i < POST_MAX; i++) {
		wr = &sreq[i].wr;
		if (!queue_add(&q->sq, wr->opcode, q->sig_all ||
			       (wr->send_flags & IBV_SEND_SIGNALED), 0, &seq))
			break;
		wr->wr_id = wr_id_make(K_SQ, s, (int)(q - s->qp), seq);
		wr->next = NULL;
		if (i)
			sreq[i - 1].wr.next = wr;
	}
	return i;
}

static void act_post_send(struct fz_side *s)
{
	struct fz_qp *q = pct(80) ? pick_qp(s, qp_rts) : NULL;
	struct ibv_send_wr *bad;
	unsigned int n, i;

	if (!q)
		q = pick_qp(s, qp_alive);
	if (!q)
		return;
	n = pct(75) ? 1 : 2 + below(POST_MAX - 1);
	for (i = 0; i < n; i++)
		send_random(s, q, &sreq[i]);
	n = send_list(s, q, n);
	if (!n)
		return;
	note(" qp%d %u wrs, first op %d sge %d flags %#x: %s",
	     (int)(q - s->qp), n, sreq[0].wr.opcode, sreq[0].wr.num_sge,
	     sreq[0].wr.send_flags,
	     strerror(tally(V_POST_SEND, ibv_post_send(q->qp, &sreq[0].wr,
						       &bad))));
	if (pct(30))
		poll_cq_rec(s, q->send_cq, 32);
}

/* a receive on @pd of up to @max_sge (or a few more) SGEs; its length */
static uint64_t recv_random(struct fz_side *s, int pd, uint32_t max_sge,
			    struct recv_req *r)
{
	uint64_t total = 0;
	int i;

	memset(&r->wr, 0, sizeof(r->wr));
	r->wr.sg_list = r->sge;
	r->wr.num_sge = pct(75) ? !!max_sge : (int)below(max_sge + 3);
	if (r->wr.num_sge > SGE_MAX)
		r->wr.num_sge = SGE_MAX;
	for (i = 0; i < r->wr.num_sge; i++) {
		sge_random(s, pd, &r->sge[i], 8192);
		total += r->sge[i].length;
	}
	if (pct(2))
		r->wr.num_sge = -1;
	return total;
}

/* @n receives for queue @fq (@kind, record @rec), linked; how many */
static unsigned int recv_list(struct fz_side *s, int pd, uint32_t max_sge,
			      struct fz_queue *fq, int kind, int rec,
			      unsigned int n)
{
	unsigned int i;
	uint64_t len;
	uint32_t seq;

	for (i = 0; i < n && i < POST_MAX; i++) {
		len = recv_random(s, pd, max_sge, &rreq[i]);
		if (!queue_add(fq, 0, true, len, &seq))
			break;
		rreq[i].wr.wr_id = wr_id_make(kind, s, rec, seq);
		if (i)
			rreq[i - 1].wr.next = &rreq[i].wr;
	}
	return i;
}

static void act_post_recv(struct fz_side *s)
{
	struct fz_qp *q = pick_qp(s, qp_alive);
	struct ibv_recv_wr *bad;
	unsigned int n;

	if (!q || q->srq >= 0)
		return;
	n = recv_list(s, q->pd, q->cap.max_recv_sge, &q->rq, K_RQ,
		      (int)(q - s->qp), pct(70) ? 1 : 2 + below(POST_MAX - 1));
	if (n)
		note(" qp%d %u wrs sge %d: %s", (int)(q - s->qp), n,
		     rreq[0].wr.num_sge,
		     strerror(tally(V_POST_RECV, ibv_post_recv(q->qp,
							      &rreq[0].wr, &bad))));
}

static void act_post_srq_recv(struct fz_side *s)
{
	int si = pick(s, s->nsrq, srq_alive);
	struct ibv_recv_wr *bad;
	struct fz_srq *r;
	unsigned int n;

	if (si < 0)
		return;
	r = &s->srq[si];
	n = recv_list(s, r->pd, r->max_sge, &r->q, K_SRQ, si,
		      pct(70) ? 1 : 2 + below(POST_MAX - 1));
	if (n)
		note(" srq%d %u wrs sge %d: %s", si, n, rreq[0].wr.num_sge,
		     strerror(tally(V_POST_SRQ_RECV,
				    ibv_post_srq_recv(r->srq, &rreq[0].wr,
						      &bad))));
}

/*
 * @n well-formed SENDs from @q (UD: through @ah to @qpn), or with @write
 * RDMA WRITEs into its peer's memory: traffic that makes the kernel use
 * a queue.  Returns how many were posted.
 */
static unsigned int post_valid(struct fz_side *s, struct fz_qp *q,
			       unsigned int n, bool write, struct ibv_ah *ah,
			       uint32_t qpn)
{
	struct fz_side *ps = q->peer >= 0 ? &side[q->peer_side] : NULL;
	struct fz_mr *m = pick_mr_for(s, q->pd, 0), *pm = NULL;
	uint32_t max = q->type == IBV_QPT_UD ? mtu_bytes(s->mtu) : 4096;
	struct ibv_send_wr *wr, *bad;
	struct ibv_sge g;
	unsigned int i;

	if (!m || !q->cap.max_send_sge)
		return 0;
	if (write && ps)
		pm = pick_mr_for(ps, ps->qp[q->peer].pd,
				 IBV_ACCESS_REMOTE_WRITE);
	if (!pm)
		write = false;
	if (n > POST_MAX)
		n = POST_MAX;
	for (i = 0; i < n; i++) {
		wr = &sreq[i].wr;
		memset(wr, 0, sizeof(*wr));
		wr->sg_list = sreq[i].sge;
		wr->num_sge = 1;
		sge_in_mr(m, &sreq[i].sge[0], 1 + below(write ? 16384 : max));
		wr->opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_SEND;
		wr->send_flags = pct(60) ? IBV_SEND_SIGNALED : 0;
		if (write) {
			sge_in_mr(pm, &g, sreq[i].sge[0].length);
			wr->wr.rdma.remote_addr = g.addr;
			wr->wr.rdma.rkey = pm->mr->rkey;
		}
		if (q->type == IBV_QPT_UD) {
			wr->wr.ud.ah = ah;
			wr->wr.ud.remote_qpn = qpn;
			wr->wr.ud.remote_qkey = QKEY;
		}
	}
	n = send_list(s, q, n);
	if (n && tally(V_POST_SEND, ibv_post_send(q->qp, &sreq[0].wr, &bad)))
		return 0;
	return n;
}

/* a UD QP in RTS somewhere sends @n messages to @q through an AH leading here */
static unsigned int kick_ud(struct fz_side *s, struct fz_qp *q, unsigned int n)
{
	struct fz_side *t;
	struct fz_qp *u;
	int i, k;

	for (k = 0; k < NR_SIDES; k++) {
		t = &side[(s->idx + 1 + k) % NR_SIDES];
		for (i = 0; i < MAX_AH; i++) {
			if (!t->ah[i].ah || t->ah[i].target != s->idx)
				continue;
			u = pick_qp(t, qp_ud_rts);
			if (u && u->pd == t->ah[i].pd)
				return post_valid(t, u, n, false, t->ah[i].ah,
						  q->qpn);
		}
	}
	return 0;
}

/* something sends @n messages into @q's receive queue; how many */
static unsigned int kick_receives(struct fz_side *s, struct fz_qp *q,
				  unsigned int n)
{
	struct fz_side *ps;
	struct fz_qp *pq;

	if (q->type == IBV_QPT_UD)
		return kick_ud(s, q, n);
	if (q->peer < 0)
		return 0;
	ps = &side[q->peer_side];
	pq = &ps->qp[q->peer];
	if (!pq->qp || pq->qp->state != IBV_QPS_RTS)
		return 0;
	return post_valid(ps, pq, n, false, NULL, 0);
}

/* @n well-formed receives of 8 KiB on @q's RQ or SRQ; how many */
static unsigned int recv_valid(struct fz_side *s, struct fz_qp *q,
			       unsigned int n)
{
	struct fz_srq *r = q->srq >= 0 ? &s->srq[q->srq] : NULL;
	struct fz_queue *fq = r ? &r->q : &q->rq;
	struct fz_mr *m = pick_mr_for(s, r ? r->pd : q->pd,
				      IBV_ACCESS_LOCAL_WRITE);
	struct ibv_recv_wr *bad;
	unsigned int i;
	uint32_t seq;
	int err;

	if (!m || !(r ? r->max_sge : q->cap.max_recv_sge) || (r && !r->srq))
		return 0;
	for (i = 0; i < n && i < POST_MAX; i++) {
		memset(&rreq[i].wr, 0, sizeof(rreq[i].wr));
		rreq[i].wr.sg_list = rreq[i].sge;
		rreq[i].wr.num_sge = 1;
		sge_in_mr(m, &rreq[i].sge[0], 8192);
		if (!queue_add(fq, 0, true, rreq[i].sge[0].length, &seq))
			break;
		rreq[i].wr.wr_id = r ? wr_id_make(K_SRQ, s, q->srq, seq) :
				   wr_id_make(K_RQ, s, (int)(q - s->qp), seq);
		if (i)
			rreq[i - 1].wr.next = &rreq[i].wr;
	}
	if (!i)
		return 0;
	if (r)
		err = ibv_post_srq_recv(r->srq, &rreq[0].wr, &bad);
	else
		err = ibv_post_recv(q->qp, &rreq[0].wr, &bad);
	return tally(r ? V_POST_SRQ_RECV : V_POST_RECV, err) ? 0 : i;
}

/* an AH of @s on @pd leading to a UD QP in RTS on *@ts; that QP */
static struct fz_qp *ud_target(struct fz_side *s, int pd, struct ibv_ah **ah,
			       struct fz_side **ts)
{
	int i, k = below(MAX_AH);

	for (i = 0; i < MAX_AH; i++, k = (k + 1) % MAX_AH) {
		if (!s->ah[k].ah || s->ah[k].pd != pd || s->ah[k].target < 0)
			continue;
		*ah = s->ah[k].ah;
		*ts = &side[s->ah[k].target];
		return pick_qp(*ts, qp_ud_rts);
	}
	return NULL;
}

/*
 * Well-formed traffic, so that there are completions to judge: receives
 * on the other end first, then SENDs (RC, UC: or WRITEs) from a QP in RTS.
 */
static void act_traffic(struct fz_side *s)
{
	struct fz_qp *q = pick_qp(s, qp_rts), *pq;
	unsigned int n = 1 + below(8), posted;
	struct fz_side *ps = NULL;
	struct ibv_ah *ah = NULL;
	bool write = q && q->type != IBV_QPT_UD && pct(40);

	if (!q)
		return;
	if (q->type == IBV_QPT_UD) {
		pq = ud_target(s, q->pd, &ah, &ps);
	} else {
		ps = q->peer >= 0 ? &side[q->peer_side] : NULL;
		pq = ps ? &ps->qp[q->peer] : NULL;
	}
	if (!pq || !pq->qp)
		return;
	posted = write ? 0 : recv_valid(ps, pq, n);
	note(" qp%d -> %s qp%d: %u receives,", (int)(q - s->qp), ps->name,
	     (int)(pq - ps->qp), posted);
	note(" %u %s", post_valid(s, q, write ? n : posted, write, ah,
				  pq->qpn), write ? "WRITEs" : "SENDs");
	if (pct(50))
		poll_cq_rec(s, q->send_cq, 64);
}

/* ---- ring rewrites, behind the provider's back */

static uint32_t idx_load(uint32_t *p)
{
	return atomic_load_explicit(ring_word(p), memory_order_acquire);
}

static void idx_store(uint32_t *p, uint32_t v)
{
	atomic_store_explicit(ring_word(p), v, memory_order_release);
}

/* a value for a ring index near @own (its owner's) and @cons, or not */
static uint32_t index_value(uint32_t own, uint32_t cons, uint32_t slots)
{
	switch (below(8)) {
	case 0:
		return rnd32();
	case 1:		/* more entries than the ring holds */
		return cons + slots + 1 + below(2 * slots + 1);
	case 2:		/* exactly full */
		return cons + slots;
	case 3:		/* behind: entries handed back, or consumed twice */
		return own - 1 - below(slots);
	case 4:		/* ahead: slots never written */
		return own + 1 + below(slots);
	case 5:		/* just behind the consumer: 2^32 - 1 entries */
		return cons - 1;
	case 6:
		return own ^ 0x80000000;
	default:
		return rnd_edge();
	}
}

/* the SGEs a slot of @slot_size has room for after a @hdr-byte header */
static uint32_t slot_sges(uint32_t slot_size, size_t hdr)
{
	return (uint32_t)((slot_size - hdr) / sizeof(struct eroce_sge));
}

static uint8_t rnd_opcode(void)
{
	static const uint8_t v[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_SEND, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_LOCAL_INV, IBV_WR_BIND_MW,
		IBV_WR_SEND_WITH_INV, IBV_WR_TSO, IBV_WR_DRIVER1,
		IBV_WR_ATOMIC_WRITE, 0x20 /* IB_WR_REG_MR */, 0xff,
	};

	return pct(70) ? v[below(sizeof(v) / sizeof(v[0]))] : (uint8_t)rnd32();
}

/* change one field of the SQ entry @w; a short description into the log */
static void wqe_mutate(struct fz_side *s, struct eroce_send_wqe *w,
		       uint32_t slot_size)
{
	uint32_t room = slot_sges(slot_size, sizeof(*w));
	struct eroce_sge *sge = (struct eroce_sge *)(w + 1);
	uint32_t k = below(room);

	switch (below(12)) {
	case 0:
		w->opcode = rnd_opcode();
		note(" opcode %u", w->opcode);
		break;
	case 1:
		w->send_flags = pct(70) ? w->send_flags ^ (1u << below(4)) :
					  rnd32();
		note(" flags %#x", w->send_flags);
		break;
	case 2:
		w->num_sge = pct(50) ? room + below(4) : (uint8_t)rnd32();
		note(" num_sge %u (room %u)", w->num_sge, room);
		break;
	case 3:
		w->inline_len = (uint16_t)(pct(50) ? rnd_edge() : rnd32());
		if (pct(60))
			w->send_flags |= EROCE_SEND_INLINE;
		note(" inline_len %u flags %#x", w->inline_len, w->send_flags);
		break;
	case 4:
	case 5:
	case 6:
		if (!room)
			break;
		if (pct(34))
			sge[k].addr = rnd_addr();
		else if (pct(50))
			sge[k].length = rnd_edge();
		else
			sge[k].lkey = rnd_key(s);
		note(" sge[%u] %#" PRIx64 "+%u key %#x", k,
		     (uint64_t)sge[k].addr, sge[k].length, sge[k].lkey);
		break;
	case 7:
		w->wr.rdma.remote_addr = pct(50) ? rnd_addr() :
					 w->wr.rdma.remote_addr + rnd_edge();
		w->wr.rdma.rkey = pct(50) ? w->wr.rdma.rkey : rnd_key(other(s));
		note(" remote %#" PRIx64 " rkey %#x",
		     (uint64_t)w->wr.rdma.remote_addr, w->wr.rdma.rkey);
		break;
	case 8:
		w->wr.ud.ah_num = pct(50) ? rnd_edge() : w->wr.ud.ah_num + 1;
		w->wr.ud.remote_qpn = pct(50) ? rnd32() : w->wr.ud.remote_qpn;
		w->wr.ud.remote_qkey = pct(50) ? rnd32() : w->wr.ud.remote_qkey;
		note(" ah %u qpn %#x qkey %#x", w->wr.ud.ah_num,
		     w->wr.ud.remote_qpn, w->wr.ud.remote_qkey);
		break;
	case 9:
		w->wr.atomic.compare_add = rnd64();
		w->wr.atomic.swap = rnd64();
		w->wr.atomic.remote_addr |= below(8);
		note(" atomic at %#" PRIx64, (uint64_t)w->wr.atomic.remote_addr);
		break;
	case 10:
		w->wr.bind.addr = rnd64();
		w->wr.bind.length = pct(50) ? rnd64() : rnd_edge();
		w->wr.bind.mr_lkey = rnd_key(s);
		w->wr.bind.access = rnd32();
		w->wr.bind.mw_type = below(4);
		note(" bind type %u len %#" PRIx64, w->wr.bind.mw_type,
		     (uint64_t)w->wr.bind.length);
		break;
	default:
		w->ex = rnd32();
		w->reserved0 = rnd32();
		w->reserved1 = rnd64();
		note(" ex %#x reserved", w->ex);
		break;
	}
}

/* a well-formed entry, as the provider would write one, to mutate */
static void wqe_template(struct fz_side *s, struct fz_qp *q,
			 struct eroce_send_wqe *w, uint32_t slot_size)
{
	static const uint8_t ops[] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
	};
	struct eroce_sge *sge = (struct eroce_sge *)(w + 1);
	struct fz_mr *m = pick_mr(s, q->pd), *pm = pick_mr(other(s), 0);
	int a = pick(s, MAX_AH, ah_alive);
	struct ibv_sge g;

	memset(w, 0, slot_size);
	w->wr_id = wr_id_garbage();
	w->send_flags = EROCE_SEND_SIGNALED;
	w->opcode = q->type == IBV_QPT_UD ? IBV_WR_SEND : ops[below(3)];
	if (slot_sges(slot_size, sizeof(*w)) && m && m->mr->length) {
		sge_in_mr(m, &g, rnd_len(4096));
		sge->addr = g.addr;
		sge->length = g.length;
		sge->lkey = g.lkey;
		w->num_sge = 1;
	}
	if (q->type == IBV_QPT_UD) {
		w->wr.ud.ah_num = a >= 0 ? to_eah(s->ah[a].ah)->ah_num : rnd32();
		w->wr.ud.remote_qpn = rnd32() & 0xffffff;
		w->wr.ud.remote_qkey = QKEY;
	} else if (pm && pm->mr->length) {
		sge_in_mr(pm, &g, 4096);
		w->wr.rdma.remote_addr = g.addr;
		w->wr.rdma.rkey = pm->mr->rkey;
	}
}

static struct eroce_ring *qp_sq(struct fz_qp *q)
{
	return &to_eqp(q->qp)->sq;
}

static struct eroce_ring *qp_rq(struct fz_qp *q)
{
	return &to_eqp(q->qp)->rq;
}

static void doorbell(struct fz_qp *q)
{
	note(" doorbell: %s",
	     strerror(tally(V_DOORBELL, eroce_ring_sq_doorbell(q->qp))));
}

/* one index (or the flags) of an SQ, RQ or SRQ, as the producer must not */
static void ring_index_rewrite(struct eroce_ring *r)
{
	uint32_t cons = idx_load(&r->ctrl->consumer), v;

	switch (below(5)) {
	case 0:
	case 1:
	case 2:
		v = index_value(r->head, cons, r->num_slots);
		idx_store(&r->ctrl->producer, v);
		note(" producer %u (own %u consumer %u slots %u)", v, r->head,
		     cons, r->num_slots);
		break;
	case 3:
		v = index_value(cons, cons, r->num_slots);
		idx_store(&r->ctrl->consumer, v);
		note(" consumer %u (was %u, producer %u)", v, cons, r->head);
		break;
	default:
		v = pct(50) ? 0 : rnd32();
		idx_store(&r->ctrl->flags, v);
		note(" flags %#x", v);
		break;
	}
}

static void act_ring_sq_index(struct fz_side *s)
{
	struct fz_qp *q = pick_qp(s, qp_victim_sq);
	struct eroce_ring *r;

	if (!q)
		return;
	r = qp_sq(q);
	taint(&q->sq, &st.taint_sq);
	note(" qp%d", (int)(q - s->qp));
	ring_index_rewrite(r);
	if (pct(75))
		doorbell(q);
	if (pct(30)) {
		/* the owner puts its index back, the QP may be failed by now */
		poll_cq_rec(s, q->send_cq, 16);
		ring_publish_producer(r);
		note(" restored");
	}
}

/* an SQ entry at @head, written raw (not through the provider), published */
static void sq_write_raw(struct fz_side *s, struct fz_qp *q, bool garbage)
{
	struct eroce_ring *r = qp_sq(q);
	struct eroce_send_wqe *w = ring_slot(r, r->head);
	uint32_t i;

	if (garbage) {
		for (i = 0; i + 8 <= r->slot_size; i += 8)
			*(uint64_t *)((char *)w + i) = rnd64();
		w->wr_id = wr_id_garbage();
		note(" raw garbage");
	} else {
		wqe_template(s, q, w, r->slot_size);
		note(" raw op %u", w->opcode);
		wqe_mutate(s, w, r->slot_size);
	}
	r->head++;
	ring_publish_producer(r);
}

static void act_ring_sq_wqe(struct fz_side *s)
{
	struct fz_qp *q = pick_qp(s, qp_victim_sq);
	struct eroce_ring *r;
	uint32_t cons, i;

	if (!q)
		return;
	r = qp_sq(q);
	taint(&q->sq, &st.taint_sq);
	note(" qp%d", (int)(q - s->qp));
	switch (below(4)) {
	case 0:
		sq_write_raw(s, q, false);
		break;
	case 1:
		sq_write_raw(s, q, true);
		break;
	case 2:		/* a post, then its entry changed before a doorbell */
		if (post_valid(s, q, 1, pct(50), NULL, 0) && pct(90)) {
			note(" posted, then");
			wqe_mutate(s, ring_slot(r, r->head - 1), r->slot_size);
		}
		break;
	default:	/* an entry not consumed yet, maybe being consumed */
		cons = idx_load(&r->ctrl->consumer);
		i = r->head - cons;
		if (!i || i > r->num_slots)
			return;
		i = cons + below(i);
		note(" pending entry %u of %u..%u", i, cons, r->head);
		wqe_mutate(s, ring_slot(r, i), r->slot_size);
		break;
	}
	if (pct(85))
		doorbell(q);
}

/* change one field of an RQ/SRQ entry */
static void rwqe_mutate(struct fz_side *s, struct eroce_recv_wqe *w,
			uint32_t slot_size)
{
	uint32_t room = slot_sges(slot_size, sizeof(*w)), k = below(room);
	struct eroce_sge *sge = (struct eroce_sge *)(w + 1);

	switch (below(6)) {
	case 0:
		w->num_sge = pct(50) ? room + below(4) : rnd_edge();
		note(" num_sge %u (room %u)", w->num_sge, room);
		break;
	case 1:
		w->wr_id = wr_id_garbage();
		w->reserved = rnd32();
		note(" wr_id");
		break;
	default:
		if (!room)
			break;
		if (pct(34))
			sge[k].addr = rnd_addr();
		else if (pct(50))
			sge[k].length = rnd_edge();
		else
			sge[k].lkey = rnd_key(s);
		note(" sge[%u] %#" PRIx64 "+%u key %#x", k,
		     (uint64_t)sge[k].addr, sge[k].length, sge[k].lkey);
		break;
	}
}

/* a receive entry at @head, written raw, published */
static void rq_write_raw(struct fz_side *s, struct eroce_ring *r, int pd)
{
	struct eroce_recv_wqe *w = ring_slot(r, r->head);
	struct eroce_sge *sge = (struct eroce_sge *)(w + 1);
	struct fz_mr *m = pick_mr(s, pd);
	struct ibv_sge g;

	memset(w, 0, r->slot_size);
	w->wr_id = wr_id_garbage();
	if (slot_sges(r->slot_size, sizeof(*w)) && m && m->mr->length) {
		sge_in_mr(m, &g, 8192);
		sge->addr = g.addr;
		sge->length = g.length;
		sge->lkey = g.lkey;
		w->num_sge = 1;
	}
	rwqe_mutate(s, w, r->slot_size);
	r->head++;
	ring_publish_producer(r);
}

/* rewrite receive ring @r (of @pd); @fq is what it was posted */
static void recv_ring_rewrite(struct fz_side *s, struct eroce_ring *r, int pd)
{
	uint32_t cons, i;

	switch (below(4)) {
	case 0:
		ring_index_rewrite(r);
		break;
	case 1:
		rq_write_raw(s, r, pd);
		break;
	default:	/* an entry the kernel may be about to take */
		cons = idx_load(&r->ctrl->consumer);
		i = r->head - cons;
		if (!i || i > r->num_slots)
			break;
		i = cons + below(i);
		note(" pending entry %u of %u..%u", i, cons, r->head);
		rwqe_mutate(s, ring_slot(r, i), r->slot_size);
		break;
	}
}

static void act_ring_rq(struct fz_side *s)
{
	struct fz_qp *q = pick_qp(s, qp_victim_rq);

	if (!q)
		return;
	taint(&q->rq, &st.taint_rq);
	note(" qp%d", (int)(q - s->qp));
	recv_ring_rewrite(s, qp_rq(q), q->pd);
	note(" kicked %u", kick_receives(s, q, 1 + below(4)));
}

/* an alive QP of SRQ @si, to make traffic for it */
static struct fz_qp *srq_user(struct fz_side *s, int si)
{
	int i, found = 0;
	struct fz_qp *u = NULL;

	for (i = 0; i < s->nqp; i++)
		if (s->qp[i].qp && s->qp[i].srq == si && !below(++found))
			u = &s->qp[i];
	return u;
}

static void act_ring_srq(struct fz_side *s)
{
	int si = pick(s, s->nsrq, srq_victim);
	struct fz_srq *r;
	struct fz_qp *u;

	if (si < 0)
		return;
	r = &s->srq[si];
	taint(&r->q, &st.taint_srq);
	note(" srq%d", si);
	recv_ring_rewrite(s, &to_esrq(r->srq)->ring, r->pd);
	u = srq_user(s, si);
	if (u)
		note(" kicked qp%d: %u", (int)(u - s->qp),
		     kick_receives(s, u, 1 + below(4)));
}

/* a QP in RTS sending on CQ @ci, to make completions for it */
static struct fz_qp *cq_sender(struct fz_side *s, int ci)
{
	int i, found = 0;
	struct fz_qp *u = NULL;

	for (i = 0; i < s->nqp; i++)
		if (qp_rts(s, i) && s->qp[i].send_cq == ci && !below(++found))
			u = &s->qp[i];
	return u;
}

/* the CQ's ring: the kernel's producer index, ours, the flags, CQEs */
static void cq_ring_rewrite(struct fz_side *s, struct fz_cq *c)
{
	struct eroce_ring *r = &to_ecq(c->cq)->ring;
	uint32_t prod = idx_load(&r->ctrl->producer), v, i;
	struct eroce_cqe *e;

	(void)s;
	switch (below(6)) {
	case 0:
		v = index_value(prod, r->head, r->num_slots);
		idx_store(&r->ctrl->producer, v);
		note(" producer %u (was %u)", v, prod);
		break;
	case 1:
		v = index_value(r->head, r->head, r->num_slots);
		idx_store(&r->ctrl->consumer, v);
		note(" consumer %u (own %u producer %u)", v, r->head, prod);
		break;
	case 2:		/* the provider's own copy, published at its next poll */
		v = index_value(r->head, r->head, r->num_slots);
		note(" provider's consumer %u (was %u)", v, r->head);
		r->head = v;
		break;
	case 3:
		v = pct(50) ? rnd32() : EROCE_CQ_ARM_NEXT |
			EROCE_CQ_ARM_SOLICITED | EROCE_CQ_OVERFLOW;
		idx_store(&r->ctrl->flags, v);
		note(" flags %#x", v);
		break;
	default:
		i = r->head + below(r->num_slots);
		e = ring_slot(r, i);
		e->wr_id = pct(50) ? wr_id_garbage() : e->wr_id;
		e->qp_num = pct(50) ? rnd32() : e->qp_num;
		e->status = (uint8_t)rnd32();
		e->opcode = (uint8_t)rnd32();
		e->byte_len = rnd_edge();
		note(" CQE %u", i);
		break;
	}
}

static void act_ring_cq(struct fz_side *s)
{
	int ci = pick(s, s->ncq, cq_victim);
	struct fz_qp *u;

	if (ci < 0)
		return;
	taint_cq(&s->cq[ci]);
	note(" cq%d", ci);
	cq_ring_rewrite(s, &s->cq[ci]);
	u = cq_sender(s, ci);
	if (u && pct(60))
		note(" traffic %u", post_valid(s, u, 1 + below(8), pct(50),
					       NULL, 0));
	note(" polled %d", poll_cq_rec(s, ci, 64));
}

/* ---- races: rewrites while the kernel works on the same ring */

/* 0.2 to 3 ms from now */
static double race_end(void)
{
	return eroce_now() + (200 + below(2800)) / 1e6;
}

static void act_race_sq(struct fz_side *s)
{
	struct fz_qp *q = pick_qp(s, qp_victim_rts);
	unsigned int n, loops = 0;
	struct eroce_ring *r;
	double end;

	if (!q)
		return;
	r = qp_sq(q);
	n = post_valid(s, q, 4 + below(POST_MAX - 3), pct(70), NULL, 0);
	if (!n)
		return;
	taint(&q->sq, &st.taint_sq);
	for (end = race_end(); eroce_now() < end; loops++) {
		if (pct(80)) {
			wqe_mutate(s, ring_slot(r, r->head - 1 - below(n)),
				   r->slot_size);
		} else {
			idx_store(&r->ctrl->producer, r->head - below(n + 1));
			if (pct(50))
				ring_publish_producer(r);
		}
		if (pct(10))
			doorbell(q);
	}
	if (pct(70))
		ring_publish_producer(r);
	doorbell(q);
	note(" qp%d: %u posted, %u rewrites", (int)(q - s->qp), n, loops);
	poll_cq_rec(s, q->send_cq, 64);
}

/* receives on @q's RQ (or its SRQ), its peer sending into them, rewritten */
static void act_race_rq(struct fz_side *s)
{
	struct fz_qp *q = pick_qp(s, qp_alive);
	struct ibv_recv_wr *bad;
	struct eroce_ring *r;
	struct fz_queue *fq;
	unsigned int n, loops = 0, kicked;
	double end;
	int err;

	if (!q || q->qp->state < IBV_QPS_RTR || q->qp->state > IBV_QPS_RTS)
		return;
	if (q->srq >= 0 ? !s->srq[q->srq].victim : !q->victim)
		return;
	if (q->srq >= 0) {
		fq = &s->srq[q->srq].q;
		r = &to_esrq(s->srq[q->srq].srq)->ring;
		n = recv_list(s, s->srq[q->srq].pd, s->srq[q->srq].max_sge, fq,
			      K_SRQ, q->srq, 4 + below(12));
		err = n ? ibv_post_srq_recv(s->srq[q->srq].srq, &rreq[0].wr,
					    &bad) : EAGAIN;
		tally(V_POST_SRQ_RECV, err);
	} else {
		if (!qp_victim_rq(s, (int)(q - s->qp)))
			return;
		fq = &q->rq;
		r = qp_rq(q);
		n = recv_list(s, q->pd, q->cap.max_recv_sge, fq, K_RQ,
			      (int)(q - s->qp), 4 + below(12));
		err = n ? ibv_post_recv(q->qp, &rreq[0].wr, &bad) : EAGAIN;
		tally(V_POST_RECV, err);
	}
	if (err)
		return;
	kicked = kick_receives(s, q, n);
	taint(fq, q->srq >= 0 ? &st.taint_srq : &st.taint_rq);
	for (end = race_end(); eroce_now() < end; loops++) {
		if (pct(80))
			rwqe_mutate(s, ring_slot(r, r->head - 1 - below(n)),
				    r->slot_size);
		else
			idx_store(&r->ctrl->producer, r->head - below(n + 1));
	}
	if (pct(70))
		ring_publish_producer(r);
	note(" qp%d srq %d: %u posted, %u sent, %u rewrites",
	     (int)(q - s->qp), q->srq, n, kicked, loops);
	poll_cq_rec(s, q->recv_cq, 64);
}

static void act_race_cq(struct fz_side *s)
{
	int ci = pick(s, s->ncq, cq_victim);
	unsigned int n, loops = 0;
	struct eroce_ring *r;
	struct fz_qp *u;
	double end;

	if (ci < 0 || !(u = cq_sender(s, ci)))
		return;
	r = &to_ecq(s->cq[ci].cq)->ring;
	n = post_valid(s, u, 4 + below(POST_MAX - 3), pct(50), NULL, 0);
	taint_cq(&s->cq[ci]);
	for (end = race_end(); eroce_now() < end; loops++) {
		switch (below(4)) {
		case 0:
			idx_store(&r->ctrl->consumer, r->head + below(r->num_slots + 2));
			break;
		case 1:
			idx_store(&r->ctrl->consumer, r->head - below(4));
			break;
		case 2:
			idx_store(&r->ctrl->flags, below(8) | (pct(20) ?
				  EROCE_CQ_OVERFLOW : 0));
			break;
		default:
			ring_publish_consumer(r);
			break;
		}
	}
	if (pct(70))
		ring_publish_consumer(r);
	note(" cq%d: %u posted by qp%d, %u rewrites", ci, n, (int)(u - s->qp),
	     loops);
	poll_cq_rec(s, ci, 64);
}

/* ---- mappings */

/* the mmap offset of the mapping at @addr, from /proc/self/maps; -1: none */
static long long map_offset(const void *addr)
{
	unsigned long long start, end, off;
	long long found = -1;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %*s %llx", &start, &end, &off) != 3)
			continue;
		if (start == (uintptr_t)addr) {
			found = (long long)off;
			break;
		}
	}
	fclose(f);
	return found;
}

/* map @len bytes at @off of the command fd; @must_fail: a bug if it works */
static void *map_try(struct fz_side *s, long long off, size_t len, int flags,
		     bool must_fail, const char *what)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags,
		       s->ctx->cmd_fd, off);
	int err = p == MAP_FAILED ? errno : 0;

	tally(V_MMAP, err);
	note(" %s: %s", what, strerror(err));
	if (!err && must_fail) {
		impossible("%s: mmap of a ring %s succeeded", s->name, what);
		munmap(p, len);
		return NULL;
	}
	return err ? NULL : p;
}

/* a victim's ring of @s and whose it is: an SQ, an SRQ or a CQ */
struct ring_ref {
	struct eroce_ring *r;
	struct fz_queue *fq;	/* an SQ's or SRQ's log, or NULL */
	unsigned long *taints;	/* its taint counter */
	struct fz_cq *cq;	/* or a CQ */
};

static bool pick_ring(struct fz_side *s, struct ring_ref *ref)
{
	struct fz_qp *q = pick_qp(s, qp_victim_sq);
	int i;

	memset(ref, 0, sizeof(*ref));
	switch (below(3)) {
	case 0:
		i = pick(s, s->ncq, cq_victim);
		if (i < 0)
			return false;
		ref->cq = &s->cq[i];
		ref->r = &to_ecq(s->cq[i].cq)->ring;
		return true;
	case 1:
		i = pick(s, s->nsrq, srq_victim);
		if (i < 0)
			return false;
		ref->fq = &s->srq[i].q;
		ref->taints = &st.taint_srq;
		ref->r = &to_esrq(s->srq[i].srq)->ring;
		return true;
	default:
		if (!q)
			return false;
		ref->fq = &q->sq;
		ref->taints = &st.taint_sq;
		ref->r = qp_sq(q);
		return true;
	}
}

static void ring_ref_taint(const struct ring_ref *ref)
{
	if (ref->fq)
		taint(ref->fq, ref->taints);
	else
		taint_cq(ref->cq);
}

static void act_mmap_probe(struct fz_side *s)
{
	struct ring_ref ref;
	struct eroce_ring *r;
	long long off;
	void *p, *q;

	if (!pick_ring(s, &ref))
		return;
	r = ref.r;
	off = map_offset(r->map);
	if (off < 0)
		return;
	note(" ring at offset %#llx, %zu bytes:", off, r->map_size);
	map_try(s, off, r->map_size + PAGE, MAP_SHARED, true, "one page longer");
	map_try(s, off, r->map_size, MAP_PRIVATE, true, "private");
	/* whatever is mapped there (another ring, or nothing) is left alone */
	p = map_try(s, off + PAGE, r->map_size, MAP_SHARED, false, "a page on");
	if (p)
		munmap(p, r->map_size);
	p = map_try(s, off, r->map_size, MAP_SHARED, false, "again");
	if (!p)
		return;
	q = mremap(p, r->map_size, r->map_size + PAGE, MREMAP_MAYMOVE);
	tally(V_MREMAP, q == MAP_FAILED ? errno : 0);
	if (q != MAP_FAILED) {
		impossible("%s: a ring's mapping grew by mremap", s->name);
		p = q;
		munmap(p, r->map_size + PAGE);
		return;
	}
	/* the second mapping is the same memory: a producer index through it */
	ring_ref_taint(&ref);
	idx_store(&((struct eroce_ring_ctrl *)p)->producer, rnd_edge());
	munmap(p, r->map_size);
}

/* an MR over a ring's own mapping: what lands in it rewrites the ring */
static void act_reg_mr_ring(struct fz_side *s)
{
	struct ring_ref ref;

	if (!pick_ring(s, &ref))
		return;
	ring_ref_taint(&ref);
	mr_add(s, pct(80) ? 0 : 1, ref.r->map, ref.r->map_size,
	       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	       IBV_ACCESS_REMOTE_READ, false);
}

/* ---- the actions */

struct action {
	const char *name;
	unsigned int weight;
	void (*run)(struct fz_side *s);
	unsigned long runs;
};

#define ACT(name, weight)	{ #name, weight, act_##name, 0 }

static struct action actions[] = {
	ACT(poll_cq, 90),
	ACT(traffic, 80),
	ACT(post_send, 110),
	ACT(post_recv, 70),
	ACT(post_srq_recv, 30),
	ACT(connect_qp, 40),
	ACT(modify_qp, 35),
	ACT(query_qp, 10),
	ACT(rate_limit, 8),
	ACT(create_qp, 30),
	ACT(destroy_qp, 18),
	ACT(create_cq, 18),
	ACT(destroy_cq, 10),
	ACT(resize_cq, 15),
	ACT(arm_cq, 20),
	ACT(create_srq, 10),
	ACT(destroy_srq, 6),
	ACT(modify_srq, 8),
	ACT(reg_mr, 15),
	ACT(dereg_mr, 10),
	ACT(reg_mr_ring, 5),
	ACT(alloc_mw, 5),
	ACT(dealloc_mw, 4),
	ACT(create_ah, 12),
	ACT(destroy_ah, 6),
	ACT(doorbell, 15),
	ACT(ring_sq_index, 35),
	ACT(ring_sq_wqe, 60),
	ACT(ring_rq, 40),
	ACT(ring_srq, 25),
	ACT(ring_cq, 35),
	ACT(race_sq, 25),
	ACT(race_rq, 20),
	ACT(race_cq, 15),
	ACT(mmap_probe, 8),
};

#define NR_ACTIONS	(sizeof(actions) / sizeof(actions[0]))

static struct action *pick_action(void)
{
	static unsigned int total;
	unsigned int i, w;

	if (!total)
		for (i = 0; i < NR_ACTIONS; i++)
			total += actions[i].weight;
	w = below(total);
	for (i = 0; w >= actions[i].weight; i++)
		w -= actions[i].weight;
	return &actions[i];
}

static void run_action(struct action *a, struct fz_side *s)
{
	log_start(a->name, s->idx);
	act_begin(a->name);
	a->run(s);
	act_end();
	a->runs++;
	st.actions++;
	if (opt.verbose)
		printf("act: %s\n", log_line[log_n % LOG_N]);
}

/* ---- the devices, opened once and again after an abandoned iteration */

static void nonblock(int fd)
{
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK))
		eroce_die("fcntl: %s", strerror(errno));
}

/* the first IPv4-mapped RoCE v2 GID of port 1 */
static int find_gid_index(struct ibv_context *ctx, int len)
{
	struct ibv_gid_entry e;
	int i;

	for (i = 0; i < len; i++)
		if (!ibv_query_gid_ex(ctx, 1, i, &e, 0) &&
		    e.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    e.gid.raw[10] == 0xff && e.gid.raw[11] == 0xff)
			return i;
	eroce_die("%s: no IPv4 RoCE v2 GID", ibv_get_device_name(ctx->device));
}

static void side_open(struct fz_side *s)
{
	struct ibv_port_attr pa;

	s->ctx = eroce_open_device(s->name);
	if (!s->ctx)
		eroce_die("ibv_open_device %s: %s", s->name, strerror(errno));
	if (ibv_query_device(s->ctx, &s->dattr) ||
	    ibv_query_port(s->ctx, 1, &pa))
		eroce_die("%s: query device/port failed", s->name);
	s->mtu = pa.active_mtu;
	if (s->gid_index < 0)
		s->gid_index = find_gid_index(s->ctx, pa.gid_tbl_len);
	if (ibv_query_gid(s->ctx, 1, s->gid_index, &s->gid))
		eroce_die("%s: no GID %d", s->name, s->gid_index);
	s->max_inline = to_ectx(s->ctx)->max_inline_data;
	s->chan = ibv_create_comp_channel(s->ctx);
	if (!s->chan)
		eroce_die("%s: ibv_create_comp_channel: %s", s->name,
			  strerror(errno));
	nonblock(s->chan->fd);
	nonblock(s->ctx->async_fd);
}

static void side_close(struct fz_side *s)
{
	if (ibv_destroy_comp_channel(s->chan) || ibv_close_device(s->ctx))
		impossible("%s: the context does not close", s->name);
}

static uint8_t *buf_alloc(void)
{
	uint8_t *p = mmap(NULL, BUF_LEN + 2 * PAGE, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED ||
	    mprotect(p + PAGE, BUF_LEN, PROT_READ | PROT_WRITE))
		eroce_die("buffer: %s", strerror(errno));
	return p + PAGE;
}

/* ---- an iteration's objects: a working start, and the end */

static void side_reset(struct fz_side *s)
{
	memset(s->pd, 0, sizeof(s->pd));
	memset(s->mr, 0, sizeof(s->mr));
	memset(s->ah, 0, sizeof(s->ah));
	memset(s->mw, 0, sizeof(s->mw));
	s->ncq = s->nqp = s->nsrq = 0;
	s->ndead = 0;
	s->big_qp = false;
}

/* what a well-behaved application starts with on side @s */
static void side_populate(struct fz_side *s)
{
	struct qp_plan p;
	int i, cq, target;
	struct ibv_ah_attr a;

	for (i = 0; i < NR_PD; i++) {
		s->pd[i] = ibv_alloc_pd(s->ctx);
		tally(V_ALLOC_PD, null_errno(s->pd[i]));
	}
	mr_add(s, 0, s->buf, BUF_LEN / 2, IBV_ACCESS_LOCAL_WRITE |
	       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
	       IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND, false);
	mr_add(s, 0, s->buf + BUF_LEN / 2, BUF_LEN / 4, mr_access_valid(),
	       false);
	mr_add(s, 1, s->buf + 3 * (BUF_LEN / 4), BUF_LEN / 4,
	       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, false);
	cq = cq_add(s, 256, true, 0);
	if (cq >= 0)
		s->cq[cq].victim = false;
	cq_add(s, 64, false, 0);
	for (i = 0; i < 3; i++) {
		qp_plan_plain(&p, i < 2 ? IBV_QPT_RC : IBV_QPT_UD, cq);
		qp_add(s, &p);
	}
	ah_attr_random(s, &a, &target);
	a.grh.dgid = other(s)->gid;
	a.grh.sgid_index = s->gid_index;
	a.port_num = 1;
	a.is_global = 1;
	s->ah[0].ah = ibv_create_ah(s->pd[0], &a);
	tally(V_CREATE_AH, null_errno(s->ah[0].ah));
	s->ah[0].target = other(s)->idx;
}

/* RC QPs 0 and 1 of side 0 connected to those of side 1, UD QPs up */
static void world_connect(void)
{
	struct fz_side *a = &side[0], *b = &side[1];
	uint32_t psn;
	int i;

	for (i = 0; i < 2; i++) {
		if (a->nqp <= i || b->nqp <= i || a->qp[i].type != IBV_QPT_RC ||
		    b->qp[i].type != IBV_QPT_RC)
			continue;
		psn = rnd32() & 0xffffff;
		qp_bring_up(a, &a->qp[i], b, &b->qp[i], psn);
		qp_bring_up(b, &b->qp[i], a, &a->qp[i], psn);
	}
	for (i = 0; i < NR_SIDES; i++)
		if (side[i].nqp > 2 && side[i].qp[2].type == IBV_QPT_UD)
			qp_bring_up(&side[i], &side[i].qp[2], NULL, NULL, 0);
}

static void world_begin(void)
{
	int i;

	act_begin("populate");
	for (i = 0; i < NR_SIDES; i++) {
		side_reset(&side[i]);
		log_start("populate", i);
		side_populate(&side[i]);
	}
	log_start("connect", 0);
	world_connect();
	act_end();
}

/* destroy @what with @err its result: nothing uses it any more */
static void teardown_check(struct fz_side *s, const char *what, int i, int err)
{
	if (err)
		impossible("%s: %s %d, used by nothing, not destroyed: %s",
			   s->name, what, i, strerror(err));
}

static void side_destroy_all(struct fz_side *s)
{
	int i;

	for (i = 0; i < s->nqp; i++)
		if (s->qp[i].qp)
			teardown_check(s, "QP", i, tally(V_DESTROY_QP,
				       ibv_destroy_qp(s->qp[i].qp)));
	for (i = 0; i < MAX_MW; i++)
		if (s->mw[i])
			teardown_check(s, "MW", i, tally(V_DEALLOC_MW,
				       ibv_dealloc_mw(s->mw[i])));
	for (i = 0; i < MAX_AH; i++)
		if (s->ah[i].ah)
			teardown_check(s, "AH", i, tally(V_DESTROY_AH,
				       ibv_destroy_ah(s->ah[i].ah)));
	for (i = 0; i < MAX_MR; i++)
		if (s->mr[i].mr)
			teardown_check(s, "MR", i, tally(V_DEREG_MR,
				       ibv_dereg_mr(s->mr[i].mr)));
	for (i = 0; i < s->nsrq; i++)
		if (s->srq[i].srq)
			teardown_check(s, "SRQ", i, tally(V_DESTROY_SRQ,
				       ibv_destroy_srq(s->srq[i].srq)));
	for (i = 0; i < s->ncq; i++)
		if (s->cq[i].cq)
			teardown_check(s, "CQ", i, tally(V_DESTROY_CQ,
				       ibv_destroy_cq(s->cq[i].cq)));
	for (i = 0; i < NR_PD; i++)
		if (s->pd[i])
			teardown_check(s, "PD", i, tally(V_DEALLOC_PD,
				       ibv_dealloc_pd(s->pd[i])));
}

static void unmap_ring(struct eroce_ring *r)
{
	if (r->map)
		munmap(r->map, r->map_size);
}

/*
 * The contexts closed with everything alive, as when a process dies; the
 * kernel cleans up.  The provider's structures are left behind (their
 * memory is lost, never used again), their ring mappings unmapped.
 */
static void side_abandon(struct fz_side *s)
{
	int i;

	if (ibv_close_device(s->ctx))
		impossible("%s: ibv_close_device failed", s->name);
	/* a channel with CQs is not destroyed by libibverbs: its fd only */
	close(s->chan->fd);
	for (i = 0; i < s->nqp; i++) {
		if (!s->qp[i].qp)
			continue;
		unmap_ring(qp_sq(&s->qp[i]));
		unmap_ring(qp_rq(&s->qp[i]));
	}
	for (i = 0; i < s->nsrq; i++)
		if (s->srq[i].srq)
			unmap_ring(&to_esrq(s->srq[i].srq)->ring);
	for (i = 0; i < s->ncq; i++)
		if (s->cq[i].cq)
			unmap_ring(&to_ecq(s->cq[i].cq)->ring);
	side_reset(s);
}

static void world_end(bool abandon)
{
	int i;

	act_begin("teardown");
	drain(0.03, 0.5);
	if (!abandon) {
		for (i = 0; i < NR_SIDES; i++)
			side_destroy_all(&side[i]);
		act_end();
		return;
	}
	st.abandoned++;
	events_stop();
	for (i = 0; i < NR_SIDES; i++)
		side_abandon(&side[i]);
	for (i = 0; i < NR_SIDES; i++)
		side_open(&side[i]);
	events_start();
	act_end();
}

/* ---- an iteration: its own random stream, a few hundred actions */

static void iteration(unsigned long k)
{
	unsigned int n, i;
	double end;

	iter = k;
	rng = opt.seed * 0x9e3779b97f4a7c15ULL ^ (k + 1) * 0xd1b54a32d192ed03ULL;
	rnd64();
	world_begin();
	n = 50 + below(300);
	end = eroce_now() + ITER_SECS;
	for (i = 0; i < n && eroce_now() < end; i++)
		run_action(pick_action(), &side[below(NR_SIDES)]);
	world_end(pct(12));
	st.iterations++;
}

/* ---- the sanity transfer: a fresh RC pair on fresh contexts */

static bool sanity_wait(struct eroce_side *s, uint64_t id, const char *what)
{
	struct ibv_wc wc;

	if (eroce_side_poll(s, SANITY_SECS, &wc)) {
		eroce_result(what, false, "no completion within %.0f s",
			     SANITY_SECS);
		return false;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != id) {
		eroce_result(what, false, "completion %" PRIu64 ": %s (wanted %" PRIu64 ")",
			     wc.wr_id, ibv_wc_status_str(wc.status), id);
		return false;
	}
	return true;
}

static int sanity_post(struct eroce_side *a, struct eroce_side *b,
		       enum ibv_wr_opcode op, uint32_t off, uint32_t len,
		       uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)a->buf + off, .length = len,
		.lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)b->buf + off;
	wr.wr.rdma.rkey = b->mr->rkey;
	return ibv_post_send(a->qp, &wr, &bad);
}

/* SENDs of 1 byte to 64 KiB, each received and checked byte for byte */
static void sanity_sends(struct eroce_side *a, struct eroce_side *b)
{
	static const uint32_t len[] = { 1, 63, 1024, 4095, 4096, 4097, 20000, 65536 };
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_wc wc;
	unsigned int i, good = 0;

	for (i = 0; i < 8; i++) {
		sge = (struct ibv_sge){ (uintptr_t)b->buf + i * 65536, 65536,
					b->mr->lkey };
		rwr.wr_id = i;
		if (ibv_post_recv(b->qp, &rwr, &rbad))
			eroce_die("sanity: post_recv: %s", strerror(errno));
		eroce_pattern(a->buf + i * 65536, len[i], 1000 + i);
		if (sanity_post(a, b, IBV_WR_SEND, i * 65536, len[i], i))
			eroce_die("sanity: post_send: %s", strerror(errno));
	}
	for (i = 0; i < 8; i++) {
		if (!sanity_wait(a, i, "sanity_sends"))
			return;
		if (eroce_side_poll(b, SANITY_SECS, &wc) ||
		    wc.status != IBV_WC_SUCCESS || wc.wr_id >= 8)
			break;
		good += wc.byte_len == len[wc.wr_id] &&
			eroce_pattern_ok(b->buf + wc.wr_id * 65536,
					 len[wc.wr_id], 1000 + wc.wr_id);
	}
	eroce_result("sanity_sends", good == 8,
		     "%u of 8 SENDs of 1 B to 64 KiB received intact", good);
}

/* a WRITE and a READ of 256 KiB, checked byte for byte */
static void sanity_rdma(struct eroce_side *a, struct eroce_side *b)
{
	const uint32_t off = 1u << 20, len = 256u << 10;
	bool w, r;

	eroce_pattern(a->buf + off, len, 2000);
	w = !sanity_post(a, b, IBV_WR_RDMA_WRITE, off, len, 100) &&
	    sanity_wait(a, 100, "sanity_write") &&
	    eroce_pattern_ok(b->buf + off, len, 2000);
	eroce_result("sanity_write", w, "a WRITE of %u bytes landed intact", len);

	eroce_pattern(b->buf + off + len, len, 3000);
	r = !sanity_post(a, b, IBV_WR_RDMA_READ, off + len, len, 101) &&
	    sanity_wait(a, 101, "sanity_read") &&
	    eroce_pattern_ok(a->buf + off + len, len, 3000);
	eroce_result("sanity_read", r, "a READ of %u bytes arrived intact", len);
}

static void sanity(void)
{
	struct eroce_side a = { .name = side[0].name, .gid_index = side[0].gid_index };
	struct eroce_side b = { .name = side[1].name, .gid_index = side[1].gid_index };

	act_begin("sanity transfer");
	eroce_side_open(&a, false, SANITY_LEN, 64);
	eroce_side_open(&b, false, SANITY_LEN, 64);
	a.qp = eroce_side_qp(&a, IBV_QPT_RC, NULL, 16);
	b.qp = eroce_side_qp(&b, IBV_QPT_RC, NULL, 16);
	eroce_pair_connect(&a, &b, 0x1000, 7);
	sanity_sends(&a, &b);
	sanity_rdma(&a, &b);
	act_end();
}

/* ---- the report */

/* "stat: LABEL name=n ..." lines of at most 8 pairs; zeros left out */
static void report_counts(const char *label, const char *const *names,
			  const unsigned long *n, unsigned int len)
{
	unsigned int i, k = 0;

	for (i = 0; i < len; i++) {
		if (!n[i])
			continue;
		if (!(k++ % 8))
			printf("%sstat: %s", k > 1 ? "\n" : "", label);
		printf(" %s=%lu", names[i], n[i]);
	}
	if (k)
		printf("\n");
}

static const char *errno_name(int e)
{
	const char *n = e ? strerrorname_np(e) : "no_errno";

	return n ? n : "unknown";
}

static void report_verbs(void)
{
	int v, e;

	for (v = 0; v < NR_VERBS; v++) {
		printf("stat: verb %s ok=%lu", verb_name[v], st.verb_ok[v]);
		for (e = 0; e < NR_ERRNO; e++)
			if (st.verb_err[v][e])
				printf(" %s=%lu", errno_name(e), st.verb_err[v][e]);
		printf("\n");
	}
}

static void report(double secs)
{
	const char *names[NR_ACTIONS];
	unsigned long runs[NR_ACTIONS], ev[NR_EVENTS + 1], total = 0;
	unsigned int i;

	printf("stat: seed %" PRIu64 " iterations %lu (abandoned %lu) actions %lu in %.1f s, impossible %lu\n",
	       opt.seed, st.iterations, st.abandoned, st.actions, secs,
	       st.impossible);
	for (i = 0; i < NR_ACTIONS; i++) {
		names[i] = actions[i].name;
		runs[i] = actions[i].runs;
	}
	report_counts("actions", names, runs, NR_ACTIONS);
	report_verbs();
	for (i = 0; i <= NR_WC; i++)
		total += st.wc[i];
	printf("stat: completions %lu on CQs never rewritten, %lu of them judged; %lu from rewritten CQs\n",
	       total, st.wc_judged, st.wc_rewritten_cq);
	report_counts("completions", wc_name, st.wc, NR_WC + 1);
	for (i = 0; i <= NR_EVENTS; i++)
		ev[i] = st.event[i];
	report_counts("events", event_name, ev, NR_EVENTS + 1);
	printf("stat: completion events %lu\n", (unsigned long)st.comp_events);
	printf("stat: rings rewritten sq=%lu rq=%lu srq=%lu cq=%lu\n",
	       st.taint_sq, st.taint_rq, st.taint_srq, st.taint_cq);
}

/* ---- main */

static void usage(void)
{
	fprintf(stderr, "usage: eroce_ringfuzz [-s SEED] [-t SECONDS] [-i FIRST] [-n ITERATIONS]\n"
		"                      [-w SECONDS] [-v] -d DEV[:GID] [-d DEV[:GID]]\n");
	exit(2);
}

static void parse_dev(char *arg, struct fz_side *s)
{
	char *colon = strchr(arg, ':');

	s->gid_index = -1;
	if (colon) {
		*colon = '\0';
		s->gid_index = atoi(colon + 1);
	}
	s->name = arg;
}

static void parse_args(int argc, char **argv)
{
	int c, ndev = 0;

	while ((c = getopt(argc, argv, "s:t:i:n:w:d:v")) != -1) {
		switch (c) {
		case 's': opt.seed = strtoull(optarg, NULL, 0); break;
		case 't': opt.secs = strtod(optarg, NULL); break;
		case 'i': opt.first = strtoul(optarg, NULL, 0); break;
		case 'n': opt.count = strtoul(optarg, NULL, 0); break;
		case 'w': opt.watchdog = strtod(optarg, NULL); break;
		case 'v': opt.verbose = true; break;
		case 'd':
			if (ndev == NR_SIDES)
				usage();
			parse_dev(optarg, &side[ndev++]);
			break;
		default:
			usage();
		}
	}
	if (!ndev || optind != argc || opt.secs < 0 || opt.watchdog <= 0 ||
	    !opt.count)
		usage();
	if (ndev == 1)		/* the device talks to itself */
		side[1] = side[0];
}

int main(int argc, char **argv)
{
	double start, next_progress;
	pthread_t wd;
	unsigned long k;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	for (i = 0; i < NR_SIDES; i++) {
		side[i].idx = i;
		side[i].buf = buf_alloc();
		side_open(&side[i]);
	}
	printf("# eroce_ringfuzz: seed %" PRIu64 ", %.0f s, %s (GID %d) <-> %s (GID %d)\n",
	       opt.seed, opt.secs, side[0].name, side[0].gid_index,
	       side[1].name, side[1].gid_index);
	if (pthread_create(&wd, NULL, watchdog, NULL))
		eroce_die("pthread_create failed");
	events_start();

	start = eroce_now();
	next_progress = start + 10;
	for (k = opt.first; k - opt.first < opt.count; k++) {
		if (k != opt.first && eroce_now() - start >= opt.secs)
			break;
		iteration(k);
		if (eroce_now() >= next_progress) {
			printf("# progress: %.0f s, %lu iterations, %lu actions, %lu impossible\n",
			       eroce_now() - start, st.iterations, st.actions,
			       st.impossible);
			next_progress += 10;
		}
	}
	act_begin("closing the devices");
	events_stop();
	for (i = 0; i < NR_SIDES; i++)
		side_close(&side[i]);
	act_end();
	report(eroce_now() - start);

	sanity();
	eroce_result("outcomes", !st.impossible,
		     "%lu impossible outcomes in %lu judged completions and %lu actions",
		     st.impossible, st.wc_judged, st.actions);
	return eroce_results_status();
}
