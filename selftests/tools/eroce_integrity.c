// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_integrity: move patterned data between two RC endpoints with SEND,
 * RDMA WRITE (ending each round with WRITE_WITH_IMM) and RDMA READ, and
 * check every byte where it lands; and run FETCH_AND_ADD and CMP_AND_SWP
 * on counters of the peer, checking every value they return and the
 * counters they leave behind.
 *
 *   server:  eroce_integrity -d DEV -g GIDIDX [options]
 *   client:  eroce_integrity -d DEV -g GIDIDX [options] SERVER_ADDR
 *
 * The client chooses the parameters and sends them to the server over the
 * TCP connection that also carries QPN/PSN/GID/rkey/address and the
 * per-round handshakes.  Byte i of stream S is a function of (seed, QP
 * index, operation, i), so both ends know what every byte must be.  Per QP
 * the data is a stream of messages whose sizes come from a PRNG both ends
 * seed identically: half from a list of sizes around MTU boundaries, half
 * uniform in [1, max].  Some WRs gather from / scatter to several SGEs
 * placed apart with poisoned guard bytes between them; the guards are
 * checked too.
 *
 *   SEND   active posts sends, passive checks each receive (length, order,
 *          bytes, guards).
 *   WRITE  per round the passive end poisons a region per QP, the active
 *          end fills it with RDMA WRITEs, the last one WRITE_WITH_IMM
 *          (imm = bytes in the round); on the immediate the passive end
 *          checks the region and reports over TCP.
 *   READ   per round the passive end fills its region, the active end
 *          reads it back in random-sized pieces and checks what it read.
 *   ATOMIC per QP the passive end exposes NCTR 8-byte-aligned 64-bit
 *          counters (after the region, poisoned guards either side), each
 *          round set to values both ends derive from the seed.  The
 *          active end posts a PRNG-driven sequence of FETCH_AND_ADD and
 *          CMP_AND_SWP (half of these compare equal, half miss by one
 *          bit) on them, up to min(depth, max_rd_atomic) outstanding,
 *          and checks each returned original value against its model
 *          of the counters: it is their only writer, and one QP's
 *          atomics execute in posting order, so the model is updated
 *          when an atomic is posted.  At the end of the round (CTL_DONE)
 *          the passive end runs the same sequence on its own model,
 *          compares its counters and guards with it and reports over
 *          TCP.  Each atomic counts as one message of 8 bytes; -a sets
 *          how many there are (-b does not apply).
 *
 * -o picks the operations; without it SEND, WRITE and READ run (-o all
 * adds ATOMIC).  The active end is the client unless -R.  Exit status:
 * 0 all bytes good, 1 data mismatch, 2 error (completion error, setup,
 * peer went away), 3 timeout (-t).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "tool_util.h"

#define MAX_QPS		64
#define MAX_DEPTH	1024
#define MAX_SGES	4
#define GUARD		64		/* poisoned bytes after every piece */
#define POISON		0xa5
#define OP_SEND		0
#define OP_WRITE	1
#define OP_READ		2
#define OP_ATOMIC	3
#define NUM_OPS		4
#define OPS_DEFAULT	((1u << OP_SEND) | (1u << OP_WRITE) | (1u << OP_READ))
#define OPS_ALL		((1u << NUM_OPS) - 1)
#define RD_ATOMIC	16		/* default max_rd_atomic, max_dest_rd_atomic */
#define MAX_RD_ATOMIC	128
#define NCTR		16		/* ATOMIC: counters per QP */
#define ATOMIC_ROUND	4096		/* ATOMIC: atomics per QP and round */

static const char *const op_names[NUM_OPS] = {
	"send", "write", "read", "atomic",
};

static const uint32_t mtu_sizes[] = {
	1, 255, 256, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097,
	8192, 65535, 65536, 65537,
};

/* parameters the client sends to the server (network byte order on wire) */
struct params {
	uint32_t nqp;
	uint32_t depth;
	uint32_t max_msg;
	uint32_t ops;		/* bit per OP_* */
	uint32_t mtu;		/* enum ibv_mtu, 0 = port's active MTU */
	uint32_t reverse;
	uint64_t seed;
	uint64_t bytes;		/* per operation, over all QPs */
	uint64_t region;	/* WRITE/READ target region per QP */
	uint64_t atomics;	/* ATOMIC: atomics over all QPs */
	uint32_t rd_atomic;	/* max_rd_atomic, max_dest_rd_atomic */
	uint32_t reserved;
};

struct qp_info {
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint32_t pad;
	uint64_t addr;
	uint8_t gid[16];
	uint64_t ctr_addr;	/* ATOMIC: the counters */
};

/* control messages over TCP */
enum { CTL_READY = 1, CTL_RESULT, CTL_DONE };

struct ctl {
	uint32_t type;
	uint32_t op;
	uint32_t round;
	uint32_t bad;		/* RESULT: number of bad things seen */
	uint64_t first_bad;	/* stream offset of the first bad byte */
	uint64_t bytes;
};

struct rng {
	uint64_t s;
};

/* one WR's local buffer: pieces inside a slot, guards after each piece */
struct slot {
	uint32_t nsge;
	uint32_t len;		/* message length (receive: capacity) */
	uint64_t off;		/* stream offset of the first byte */
	uint32_t seq;		/* message number */
	struct ibv_sge sge[MAX_SGES];
	uint64_t want;		/* ATOMIC: the original value it must return */
	uint32_t ctr;		/* ATOMIC: counter index */
	bool cas;		/* ATOMIC: CMP_AND_SWP, else FETCH_AND_ADD */
};

/* one atomic of a QP's sequence */
struct aop {
	uint32_t ctr;
	bool cas;
	uint64_t compare;	/* CMP_AND_SWP */
	uint64_t operand;	/* CMP_AND_SWP: swap value, FETCH_AND_ADD: addend */
};

struct qpctx {
	int idx;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *arena;
	size_t slot_bytes;
	uint8_t *sslots;	/* depth send/read slots */
	uint8_t *rslots;	/* 2 * depth receive slots */
	uint8_t *region;	/* WRITE/READ target */
	uint64_t *ctr;		/* ATOMIC: NCTR counters, GUARD bytes either side */
	uint64_t *ares;		/* ATOMIC: depth 8-byte results */
	struct slot *ss;
	struct slot *rs;
	struct qp_info local, remote;
	/* per-phase progress */
	struct rng sizes;	/* message sizes, same on both ends */
	struct rng layout;	/* SGE layout, local only */
	uint64_t stream;	/* next stream offset to post */
	uint64_t stream_end;
	uint32_t posted, completed;
	uint32_t rposted, rcompleted;
	uint32_t nmsgs;		/* SEND: messages expected */
	uint32_t outstanding;
	bool imm_seen;
	/* ATOMIC: the counters with every atomic posted so far applied */
	uint64_t model[NCTR];
	uint64_t last[NCTR];	/* stream offset of the last atomic on each */
};

static struct {
	const char *dev;
	int gidx;
	int port;
	int ib_port;
	const char *server;
	struct params p;
	int timeout;
	bool busy_poll;
	bool verbose;
	uint32_t rate_kbps;	/* -L: this side's QPs, ibv_modify_qp_rate_limit */
	uint8_t ack_timeout;	/* -T: this side's QPs' local ACK timeout */
	const char *gate;	/* -G: start the operations once this file exists */
	int vector;		/* -V: the CQs' completion vector */
} opt = {
	.gidx = 1,
	.port = 18530,
	.ib_port = 1,
	.p = {
		.nqp = 4, .depth = 32, .max_msg = 65537,
		.ops = OPS_DEFAULT, .seed = 1, .bytes = 256ull << 20,
		.region = 4u << 20, .atomics = 64u << 10,
		.rd_atomic = RD_ATOMIC,
	},
	.timeout = 600,
	.ack_timeout = 14,
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_comp_channel *chan;
static struct ibv_cq *scq, *rcq;
static struct qpctx qps[MAX_QPS];
static int sock = -1;
static uint32_t max_inline;
static uint32_t max_sge = MAX_SGES;
static unsigned long lost_events;

/* results */
static uint64_t bad_count[NUM_OPS];
static uint64_t first_bad[NUM_OPS];
static int first_bad_qp[NUM_OPS];
static uint64_t ok_bytes[NUM_OPS], ok_msgs[NUM_OPS];
static uint64_t n_fadd, n_cas_hit, n_cas_miss;	/* ATOMIC: what was run */

#define vlog(...) do { if (opt.verbose) { printf(__VA_ARGS__); \
		       putchar('\n'); fflush(stdout); } } while (0)

/* ---- PRNG and pattern ----------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rng_next(struct rng *r)
{
	r->s += 0x9e3779b97f4a7c15ull;
	return mix64(r->s);
}

static uint32_t rng_below(struct rng *r, uint32_t n)
{
	return n ? rng_next(r) % n : 0;
}

static uint64_t stream_key(int qp, int op)
{
	return mix64(opt.p.seed ^ ((uint64_t)qp << 40) ^ ((uint64_t)op << 56));
}

/* pattern word w of a stream: every 8 bytes come from one hash */
static inline uint64_t pat_word(uint64_t key, uint64_t w)
{
	return mix64(key ^ (w * 0xd6e8feb86659fd93ull));
}

static void pat_fill(uint8_t *buf, size_t len, uint64_t key, uint64_t off)
{
	while (len) {
		uint64_t w = pat_word(key, off >> 3);
		unsigned int b = off & 7;

		if (!b && len >= 8) {
			memcpy(buf, &w, 8);
			buf += 8; off += 8; len -= 8;
			continue;
		}
		for (; b < 8 && len; b++, len--, off++)
			*buf++ = ((uint8_t *)&w)[b];
	}
}

/* returns the index of the first bad byte or -1 */
static int64_t pat_check(const uint8_t *buf, size_t len, uint64_t key,
			 uint64_t off, uint8_t *got, uint8_t *want)
{
	size_t i = 0;

	while (i < len) {
		uint64_t w = pat_word(key, off >> 3);
		unsigned int b = off & 7;

		if (!b && len - i >= 8) {
			if (memcmp(buf + i, &w, 8))
				goto bytewise;
			i += 8; off += 8;
			continue;
		}
bytewise:
		for (; b < 8 && i < len; b++, i++, off++) {
			if (buf[i] != ((uint8_t *)&w)[b]) {
				*got = buf[i];
				*want = ((uint8_t *)&w)[b];
				return i;
			}
		}
	}
	return -1;
}

static int64_t guard_check(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != POISON)
			return i;
	return -1;
}

static uint32_t next_size(struct qpctx *q, uint64_t limit)
{
	uint32_t n;

	if (rng_next(&q->sizes) & 1) {
		do
			n = mtu_sizes[rng_below(&q->sizes, sizeof(mtu_sizes) /
						sizeof(mtu_sizes[0]))];
		while (n > opt.p.max_msg);
	} else {
		n = 1 + rng_below(&q->sizes, opt.p.max_msg);
	}
	return n > limit ? limit : n;
}

/* ---- atomics ------------------------------------------------------------- */

/* q's model of its counters at the start of round r, on both ends */
static void ctr_init(struct qpctx *q, uint32_t r)
{
	uint64_t key = stream_key(q->idx, OP_ATOMIC);
	uint32_t j;

	for (j = 0; j < NCTR; j++) {
		q->model[j] = pat_word(key, (uint64_t)r * NCTR + j);
		q->last[j] = UINT64_MAX;
	}
}

/*
 * The next atomic of q's sequence (q->sizes, seeded alike on both ends),
 * applied to q's model; returns the original value it must return.  Half
 * are FETCH_AND_ADD, mostly of small addends, sometimes of 64-bit ones
 * (carries across the halves, wraps); half CMP_AND_SWP, of which half
 * compare equal and half differ from the counter in one bit of the 64.
 */
static uint64_t atomic_next(struct qpctx *q, struct aop *a)
{
	uint64_t orig;
	bool hit;

	a->ctr = rng_below(&q->sizes, NCTR);
	a->cas = rng_next(&q->sizes) & 1;
	orig = q->model[a->ctr];
	if (a->cas) {
		hit = rng_next(&q->sizes) & 1;
		a->compare = orig;
		if (!hit)
			a->compare ^= 1ull << rng_below(&q->sizes, 64);
		a->operand = rng_next(&q->sizes);
		if (hit) {
			q->model[a->ctr] = a->operand;
			n_cas_hit++;
		} else {
			n_cas_miss++;
		}
	} else {
		a->compare = 0;
		if (rng_below(&q->sizes, 4))
			a->operand = 1 + rng_below(&q->sizes, 256);
		else
			a->operand = rng_next(&q->sizes);
		q->model[a->ctr] += a->operand;
		n_fadd++;
	}
	q->last[a->ctr] = q->stream;
	return orig;
}

/* atomics outstanding per QP at most */
static uint32_t atomic_window(void)
{
	return opt.p.depth < opt.p.rd_atomic ? opt.p.depth : opt.p.rd_atomic;
}

static uint64_t atomics_per_qp(void)
{
	uint64_t n = opt.p.atomics / opt.p.nqp;

	return n ? n : 1;
}

/* ---- results ---------------------------------------------------------------- */

static void note_bad(int op, int qp, uint64_t off, const char *what)
{
	if (!bad_count[op]++) {
		first_bad[op] = off;
		first_bad_qp[op] = qp;
	}
	if (bad_count[op] <= 10)
		printf("%s: MISMATCH qp %d stream offset %" PRIu64 ": %s\n",
		       op_names[op], qp, off, what);
	fflush(stdout);
}

/* check a WR's pieces against the stream; len bytes from q's stream at off */
static void check_pieces(int op, struct qpctx *q, struct slot *s,
			 uint32_t len, uint64_t off)
{
	uint64_t key = stream_key(q->idx, op);
	uint32_t left = len, i;
	uint8_t got, want;
	char msg[160];

	for (i = 0; i < s->nsge; i++) {
		uint8_t *p = (uint8_t *)(uintptr_t)s->sge[i].addr;
		uint32_t n = s->sge[i].length < left ? s->sge[i].length : left;
		int64_t bad = pat_check(p, n, key, off, &got, &want);

		if (bad >= 0) {
			snprintf(msg, sizeof(msg),
				 "message %u byte %" PRIu64 " (sge %u): got 0x%02x want 0x%02x",
				 s->seq, off - s->off + bad, i, got, want);
			note_bad(op, q->idx, off + bad, msg);
			return;
		}
		/* what follows the data in this piece must still be poison */
		bad = guard_check(p + n, s->sge[i].length - n + GUARD > 256 ?
				  256 : s->sge[i].length - n + GUARD);
		if (bad >= 0) {
			snprintf(msg, sizeof(msg),
				 "message %u: byte written %" PRId64 " past the data of sge %u",
				 s->seq, bad, i);
			note_bad(op, q->idx, off + n, msg);
			return;
		}
		left -= n;
		off += n;
	}
}

/* an atomic completed: did it return what the counter held? */
static void check_atomic(struct qpctx *q, struct slot *s)
{
	uint64_t got = q->ares[s - q->ss];
	char m[160];

	if (got == s->want)
		return;
	snprintf(m, sizeof(m),
		 "atomic %u (%s on counter %u) returned %#" PRIx64 ", want %#" PRIx64,
		 s->seq, s->cas ? "cmp_and_swp" : "fetch_and_add", s->ctr, got,
		 s->want);
	note_bad(OP_ATOMIC, q->idx, s->off, m);
}

/*
 * Passive end, round done: run the round's n atomics on q's model and
 * compare the counters, and their guards, with it.
 */
static void check_counters(struct qpctx *q, uint32_t r, uint64_t n)
{
	uint64_t before = bad_count[OP_ATOMIC], start = q->stream, k;
	uint8_t *g = (uint8_t *)q->ctr;
	struct aop a;
	int64_t bad;
	uint32_t j;
	char m[200];

	for (k = 0; k < n; k++) {
		atomic_next(q, &a);
		q->stream += 8;
	}
	for (j = 0; j < NCTR; j++) {
		uint64_t got = q->ctr[j];

		if (got == q->model[j])
			continue;
		if (q->last[j] == UINT64_MAX)
			snprintf(m, sizeof(m),
				 "round %u counter %u holds %#" PRIx64 ", want %#" PRIx64 " (no atomic on it)",
				 r, j, got, q->model[j]);
		else
			snprintf(m, sizeof(m),
				 "round %u counter %u holds %#" PRIx64 ", want %#" PRIx64 " (last changed by atomic %" PRIu64 ")",
				 r, j, got, q->model[j], q->last[j] / 8);
		note_bad(OP_ATOMIC, q->idx,
			 q->last[j] == UINT64_MAX ? start : q->last[j], m);
	}
	bad = guard_check(g - GUARD, GUARD);
	if (bad >= 0) {
		snprintf(m, sizeof(m), "round %u: byte written %" PRId64
			 " bytes before the counters", r, GUARD - bad);
		note_bad(OP_ATOMIC, q->idx, start, m);
	}
	bad = guard_check(g + NCTR * 8, GUARD);
	if (bad >= 0) {
		snprintf(m, sizeof(m), "round %u: byte written %" PRId64
			 " past the counters", r, bad);
		note_bad(OP_ATOMIC, q->idx, start, m);
	}
	if (bad_count[OP_ATOMIC] == before) {
		ok_bytes[OP_ATOMIC] += 8 * n;
		ok_msgs[OP_ATOMIC] += n;
	}
}

/* ---- slots -------------------------------------------------------------------- */

/*
 * Lay out len bytes in slot memory at base: usually one piece, sometimes
 * 2..max_sge pieces with a GUARD gap after each.  Fills the gaps with
 * poison; with fill, the pieces get the pattern, else poison.
 */
static void slot_layout(struct qpctx *q, struct slot *s, uint8_t *base,
			uint32_t len, int op, uint64_t off, bool fill)
{
	uint32_t n = 1, cut[MAX_SGES + 1], i, j;
	uint8_t *p = base;

	if (len >= 2 && max_sge > 1 && !rng_below(&q->layout, 4))
		n = 2 + rng_below(&q->layout, (max_sge < MAX_SGES ? max_sge :
					       MAX_SGES) - 1);
	if (n > len)
		n = len;
	cut[0] = 0;
	cut[n] = len;
	for (i = 1; i < n; i++)
		cut[i] = 1 + rng_below(&q->layout, len - 1);
	/* sort the cuts; equal cuts make empty pieces, merge them away */
	for (i = 1; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (cut[j] < cut[i]) {
				uint32_t t = cut[i];

				cut[i] = cut[j];
				cut[j] = t;
			}
	s->nsge = 0;
	s->len = len;
	s->off = off;
	for (i = 0; i < n; i++) {
		uint32_t plen = cut[i + 1] - cut[i];

		if (!plen && len)
			continue;
		s->sge[s->nsge].addr = (uintptr_t)p;
		s->sge[s->nsge].length = plen;
		s->sge[s->nsge].lkey = q->mr->lkey;
		s->nsge++;
		if (fill)
			pat_fill(p, plen, stream_key(q->idx, op), off + cut[i]);
		else
			memset(p, POISON, plen);
		memset(p + plen, POISON, GUARD);
		p += plen + GUARD;
	}
}

/* ---- verbs setup ---------------------------------------------------------------- */

static void setup_verbs(void)
{
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	uint32_t i, d = opt.p.depth, n = opt.p.nqp;

	ctx = eroce_open_device(opt.dev);
	if (!ctx)
		eroce_die("device %s: %s", opt.dev ? opt.dev : "eroce*", strerror(errno));
	if (ibv_query_device(ctx, &dattr))
		eroce_die("ibv_query_device failed");
	if (ibv_query_port(ctx, opt.ib_port, &pattr))
		eroce_die("ibv_query_port failed");
	if (!opt.p.mtu || opt.p.mtu > pattr.active_mtu)
		opt.p.mtu = pattr.active_mtu;
	if ((uint32_t)dattr.max_sge < max_sge)
		max_sge = dattr.max_sge;
	if ((opt.p.ops & (1u << OP_ATOMIC)) && dattr.atomic_cap == IBV_ATOMIC_NONE)
		eroce_die("device %s has no atomics", ibv_get_device_name(ctx->device));

	pd = ibv_alloc_pd(ctx);
	if (!pd)
		eroce_die("ibv_alloc_pd failed");
	if (!opt.busy_poll) {
		chan = ibv_create_comp_channel(ctx);
		if (!chan)
			eroce_die("ibv_create_comp_channel failed");
	}
	scq = ibv_create_cq(ctx, n * d + 1, NULL, chan, opt.vector);
	rcq = ibv_create_cq(ctx, n * (2 * d + 1) + 1, NULL, chan, opt.vector);
	if (!scq || !rcq)
		eroce_die("ibv_create_cq failed: %s (vector %d of %d)",
			  strerror(errno), opt.vector, ctx->num_comp_vectors);

	for (i = 0; i < n; i++) {
		struct qpctx *q = &qps[i];
		struct ibv_qp_init_attr ia = {
			.send_cq = scq, .recv_cq = rcq,
			.cap = {
				.max_send_wr = d, .max_recv_wr = 2 * d + 1,
				.max_send_sge = max_sge, .max_recv_sge = max_sge,
				.max_inline_data = 64,
			},
			.qp_type = IBV_QPT_RC,
		};
		size_t total, ctr_off, res_off;

		q->idx = i;
		q->qp = ibv_create_qp(pd, &ia);
		if (!q->qp) {
			ia.cap.max_inline_data = 0;
			q->qp = ibv_create_qp(pd, &ia);
		}
		if (!q->qp)
			eroce_die("ibv_create_qp failed: %s", strerror(errno));
		max_inline = ia.cap.max_inline_data;
		q->slot_bytes = opt.p.max_msg + MAX_SGES * GUARD;
		/*
		 * depth send/read slots, 2 * depth receive slots, the region
		 * and its guard, then (8-byte aligned) a guard, the counters,
		 * a guard and the atomics' results
		 */
		ctr_off = (q->slot_bytes * 3 * d + opt.p.region + 2 * GUARD + 7) &
			  ~7ul;
		res_off = ctr_off + NCTR * 8 + GUARD;
		total = res_off + (size_t)d * 8;
		q->arena = aligned_alloc(4096, (total + 4095) & ~4095ul);
		if (!q->arena)
			eroce_die("out of memory");
		memset(q->arena, POISON, total);
		q->sslots = q->arena;
		q->rslots = q->arena + q->slot_bytes * d;
		q->region = q->arena + q->slot_bytes * 3 * d;
		q->ctr = (uint64_t *)(q->arena + ctr_off);
		q->ares = (uint64_t *)(q->arena + res_off);
		q->ss = calloc(d, sizeof(*q->ss));
		q->rs = calloc(2 * d, sizeof(*q->rs));
		if (!q->ss || !q->rs)
			eroce_die("out of memory");
		q->mr = ibv_reg_mr(pd, q->arena, total, IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC);
		if (!q->mr)
			eroce_die("ibv_reg_mr failed: %s", strerror(errno));

		q->local.qpn = q->qp->qp_num;
		/* odd QPs start just before the PSN wrap */
		q->local.psn = (i & 1) ? 0xfffff0 + i :
			(uint32_t)(mix64(opt.p.seed + i + getpid()) & 0xffffff);
		q->local.rkey = q->mr->rkey;
		q->local.addr = (uintptr_t)q->region;
		q->local.ctr_addr = (uintptr_t)q->ctr;
		if (ibv_query_gid(ctx, opt.ib_port, opt.gidx,
				  (union ibv_gid *)q->local.gid))
			eroce_die("ibv_query_gid %d failed", opt.gidx);
	}
}

static void connect_qps(void)
{
	uint32_t i;

	for (i = 0; i < opt.p.nqp; i++) {
		struct qpctx *q = &qps[i];
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT,
			.pkey_index = 0,
			.port_num = opt.ib_port,
			.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
					   IBV_ACCESS_REMOTE_READ |
					   IBV_ACCESS_REMOTE_ATOMIC,
		};

		if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
			eroce_die("modify to INIT failed");

		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = opt.p.mtu;
		a.dest_qp_num = q->remote.qpn;
		a.rq_psn = q->remote.psn;
		a.max_dest_rd_atomic = opt.p.rd_atomic;
		a.min_rnr_timer = 12;
		a.ah_attr.is_global = 1;
		memcpy(&a.ah_attr.grh.dgid, q->remote.gid, 16);
		a.ah_attr.grh.sgid_index = opt.gidx;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = opt.ib_port;
		if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
			eroce_die("modify to RTR failed: %s", strerror(errno));

		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.timeout = opt.ack_timeout;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.sq_psn = q->local.psn;
		a.max_rd_atomic = opt.p.rd_atomic;
		if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
			eroce_die("modify to RTS failed: %s", strerror(errno));
		if (opt.rate_kbps) {
			/* (uverbs' QUERY_QP has no field to read it back) */
			struct ibv_qp_rate_limit_attr rl = {
				.rate_limit = opt.rate_kbps,
			};

			errno = ibv_modify_qp_rate_limit(q->qp, &rl);
			if (errno)
				eroce_die("ibv_modify_qp_rate_limit failed: %s",
				    strerror(errno));
		}
	}
}

/* ---- TCP ---------------------------------------------------------------------------- */

static void xwrite(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(sock, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			eroce_die("TCP write: %s", n ? strerror(errno) : "closed");
		p += n;
		len -= n;
	}
}

static void xread(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = read(sock, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			eroce_die("peer went away (TCP %s)", n ? strerror(errno) : "EOF");
		p += n;
		len -= n;
	}
}

static void ctl_send(uint32_t type, int op, uint32_t round, uint32_t bad,
		     uint64_t fbad, uint64_t bytes)
{
	struct ctl c = {
		.type = type, .op = op, .round = round, .bad = bad,
		.first_bad = fbad, .bytes = bytes,
	};

	xwrite(&c, sizeof(c));
}

static void ctl_expect(struct ctl *c, uint32_t type, int op, uint32_t round)
{
	xread(c, sizeof(*c));
	if (c->type != type || c->op != (uint32_t)op || c->round != round)
		eroce_die("protocol: got ctl %u/%u/%u, want %u/%d/%u", c->type,
		    c->op, c->round, type, op, round);
}

static void tcp_connect(void)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *r;
	char port[16];
	int one = 1;

	snprintf(port, sizeof(port), "%d", opt.port);
	if (opt.server) {
		int tries;

		if (getaddrinfo(opt.server, port, &hints, &res))
			eroce_die("cannot resolve %s", opt.server);
		/* the server may still be starting */
		for (tries = 0; tries < 100 && sock < 0; tries++) {
			for (r = res; r; r = r->ai_next) {
				sock = socket(r->ai_family, SOCK_STREAM, 0);
				if (sock < 0)
					continue;
				if (!connect(sock, r->ai_addr, r->ai_addrlen))
					break;
				close(sock);
				sock = -1;
			}
			if (sock < 0)
				usleep(100000);
		}
		freeaddrinfo(res);
		if (sock < 0)
			eroce_die("cannot connect to %s:%d", opt.server, opt.port);
	} else {
		struct sockaddr_in6 sa = {
			.sin6_family = AF_INET6,
			.sin6_port = htons(opt.port),
			.sin6_addr = IN6ADDR_ANY_INIT,
		};
		int ls = socket(AF_INET6, SOCK_STREAM, 0), zero = 0;

		if (ls < 0)
			eroce_die("socket: %s", strerror(errno));
		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		setsockopt(ls, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1))
			eroce_die("bind/listen on port %d: %s", opt.port, strerror(errno));
		printf("listening on port %d\n", opt.port);
		fflush(stdout);
		sock = accept(ls, NULL, NULL);
		if (sock < 0)
			eroce_die("accept: %s", strerror(errno));
		close(ls);
	}
	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void exchange(void)
{
	uint32_t i;

	if (opt.server)
		xwrite(&opt.p, sizeof(opt.p));
	else
		xread(&opt.p, sizeof(opt.p));
	if (!opt.p.nqp || opt.p.nqp > MAX_QPS || !opt.p.depth ||
	    opt.p.depth > MAX_DEPTH || !opt.p.max_msg ||
	    opt.p.region < opt.p.max_msg || !opt.p.ops ||
	    !opt.p.rd_atomic || opt.p.rd_atomic > MAX_RD_ATOMIC ||
	    (opt.p.ops & ~OPS_ALL))
		eroce_die("bad parameters");
	setup_verbs();
	for (i = 0; i < opt.p.nqp; i++) {
		xwrite(&qps[i].local, sizeof(qps[i].local));
		xread(&qps[i].remote, sizeof(qps[i].remote));
	}
	connect_qps();
	/* both sides in RTS before anyone sends */
	ctl_send(CTL_READY, 0, 0, 0, 0, 0);
	{
		struct ctl c;

		ctl_expect(&c, CTL_READY, 0, 0);
	}
}

/* ---- completions ---------------------------------------------------------------------- */

/* poll both CQs into wc; sleep on the channel when both are empty */
static int get_wcs(struct ibv_wc *wc, int max, bool *is_send)
{
	int n;

	for (;;) {
		n = ibv_poll_cq(scq, max, wc);
		if (n) {
			*is_send = true;
			break;
		}
		n = ibv_poll_cq(rcq, max, wc);
		if (n) {
			*is_send = false;
			break;
		}
		if (opt.busy_poll)
			continue;

		if (ibv_req_notify_cq(scq, 0) || ibv_req_notify_cq(rcq, 0))
			eroce_die("ibv_req_notify_cq failed");
		/* completions that raced with arming */
		n = ibv_poll_cq(scq, max, wc);
		if (n) {
			*is_send = true;
			break;
		}
		n = ibv_poll_cq(rcq, max, wc);
		if (n) {
			*is_send = false;
			break;
		}

		/*
		 * The peer closing its end while we wait for completions means
		 * it gave up (a completion error, a timeout): no completion we
		 * wait for will come.  Only a hang-up counts; control messages
		 * the peer sends meanwhile are read later.
		 */
		struct pollfd pfd[2] = {
			{ .fd = chan->fd, .events = POLLIN },
			{ .fd = sock, .events = POLLRDHUP },
		};
		int r = poll(pfd, 2, 200);

		if (r > 0 && (pfd[1].revents & (POLLRDHUP | POLLHUP | POLLERR)))
			eroce_die("peer went away while completions were awaited");
		if (r > 0 && (pfd[0].revents & POLLIN)) {
			struct ibv_cq *cq;
			void *cctx;

			if (!ibv_get_cq_event(chan, &cq, &cctx))
				ibv_ack_cq_events(cq, 1);
		} else if (r == 0) {
			/* nothing for 200 ms: a completion here had no event */
			n = ibv_poll_cq(scq, max, wc);
			if (n > 0) {
				lost_events++;
				*is_send = true;
				break;
			}
			n = ibv_poll_cq(rcq, max, wc);
			if (n > 0) {
				lost_events++;
				*is_send = false;
				break;
			}
		}
	}
	if (n < 0)
		eroce_die("ibv_poll_cq failed");
	return n;
}

static struct qpctx *wc_qp(const struct ibv_wc *wc)
{
	uint32_t i = wc->wr_id >> 32;

	if (i >= opt.p.nqp || qps[i].qp->qp_num != wc->qp_num)
		eroce_die("completion for unknown QP (wr_id %#" PRIx64 ", qpn %#x)",
		    wc->wr_id, wc->qp_num);
	return &qps[i];
}

static void print_wc_error(const struct ibv_wc *wc, int op, const char *side)
{
	printf("%s: %s completion error on qp %" PRIu64 " (qpn %#x): %s (status %d, vendor_err %#x, wr_id %#" PRIx64 ")\n",
	       op_names[op], side, wc->wr_id >> 32, wc->qp_num,
	       ibv_wc_status_str(wc->status), wc->status, wc->vendor_err,
	       wc->wr_id);
}

/*
 * An error completion ends the run; first show what else completes in
 * the next second (the first error is not always the cause).
 */
static void wc_error(const struct ibv_wc *wc, int op, const char *side)
{
	struct timespec t0, t;
	struct ibv_wc w[16];
	int shown = 0, n, k;

	print_wc_error(wc, op, side);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (n = 0; n < 2; n++) {
			int m = ibv_poll_cq(n ? rcq : scq, 16, w);

			for (k = 0; k < m; k++) {
				if (w[k].status == IBV_WC_SUCCESS)
					continue;
				if (shown++ < 20)
					print_wc_error(&w[k], op, n ? "receive" : "send");
			}
		}
		usleep(10000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 1);
	if (shown > 20)
		printf("... %d more error completions\n", shown - 20);
	printf("eroce_integrity: FAIL (error completion)\n");
	exit(2);
}

/* ---- posting ---------------------------------------------------------------------------- */

static void post_recv_slot(struct qpctx *q, uint32_t seq, int op)
{
	uint32_t idx = seq % (2 * opt.p.depth);
	struct slot *s = &q->rs[idx];
	struct ibv_recv_wr wr = {}, *bad;

	if (op == OP_SEND) {
		slot_layout(q, s, q->rslots + (size_t)idx * q->slot_bytes,
			    opt.p.max_msg, op, 0, false);
		wr.num_sge = s->nsge;
		wr.sg_list = s->sge;
	} else {
		s->nsge = 0;	/* WRITE_WITH_IMM: no buffer needed */
	}
	s->seq = seq;
	wr.wr_id = ((uint64_t)q->idx << 32) | idx;
	if (ibv_post_recv(q->qp, &wr, &bad))
		eroce_die("ibv_post_recv failed: %s", strerror(errno));
	q->rposted++;
}

/* post the next atomic of q's sequence; its result lands in q->ares */
static void post_atomic(struct qpctx *q)
{
	uint32_t idx = q->posted % opt.p.depth;
	struct slot *s = &q->ss[idx];
	struct ibv_send_wr wr = {}, *bad;
	struct aop a;

	s->want = atomic_next(q, &a);
	s->ctr = a.ctr;
	s->cas = a.cas;
	s->seq = q->posted;
	s->off = q->stream;
	s->len = 8;
	s->nsge = 1;
	memset(&q->ares[idx], POISON, 8);
	s->sge[0].addr = (uintptr_t)&q->ares[idx];
	s->sge[0].length = 8;
	s->sge[0].lkey = q->mr->lkey;
	wr.wr_id = ((uint64_t)q->idx << 32) | idx;
	wr.sg_list = s->sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.opcode = a.cas ? IBV_WR_ATOMIC_CMP_AND_SWP :
		    IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = q->remote.ctr_addr + 8 * a.ctr;
	wr.wr.atomic.rkey = q->remote.rkey;
	wr.wr.atomic.compare_add = a.cas ? a.compare : a.operand;
	wr.wr.atomic.swap = a.cas ? a.operand : 0;
	if (ibv_post_send(q->qp, &wr, &bad))
		eroce_die("ibv_post_send (atomic %u) failed: %s", s->seq,
		    strerror(errno));
	q->stream += 8;
	q->posted++;
	q->outstanding++;
}

/* post one SEND/WRITE/READ of the next piece of q's stream */
static void post_one(struct qpctx *q, int op, uint64_t region_base, bool imm_last)
{
	uint32_t idx = q->posted % opt.p.depth;
	struct slot *s = &q->ss[idx];
	uint64_t left = q->stream_end - q->stream;
	uint32_t len = next_size(q, left);
	struct ibv_send_wr wr = {}, *bad;

	slot_layout(q, s, q->sslots + (size_t)idx * q->slot_bytes, len, op,
		    q->stream, op != OP_READ);
	s->seq = q->posted;
	wr.wr_id = ((uint64_t)q->idx << 32) | idx;
	wr.sg_list = s->sge;
	wr.num_sge = s->nsge;
	wr.send_flags = IBV_SEND_SIGNALED;
	switch (op) {
	case OP_SEND:
		wr.opcode = IBV_WR_SEND;
		if (len <= max_inline && !rng_below(&q->layout, 4))
			wr.send_flags |= IBV_SEND_INLINE;
		break;
	case OP_WRITE:
		wr.opcode = IBV_WR_RDMA_WRITE;
		if (imm_last && len == left) {
			wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
			wr.imm_data = htonl((uint32_t)(q->stream_end - region_base));
		}
		/* fall through */
	case OP_READ:
		if (op == OP_READ)
			wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = q->remote.addr + (q->stream - region_base);
		wr.wr.rdma.rkey = q->remote.rkey;
		break;
	}
	if (ibv_post_send(q->qp, &wr, &bad))
		eroce_die("ibv_post_send (%s, %u bytes, %u sge) failed: %s",
		    op_names[op], len, s->nsge, strerror(errno));
	q->stream += len;
	q->posted++;
	q->outstanding++;
}

/*
 * Active side of one batch: every QP sends its stream from q->stream to
 * q->stream_end with up to depth WRs in flight (atomics: atomic_window(),
 * 8 stream bytes each); returns when all WRs completed.  READ and atomic
 * completions are checked here.
 */
static void active_run(int op, uint64_t region_base)
{
	uint32_t win = op == OP_ATOMIC ? atomic_window() : opt.p.depth;
	struct ibv_wc wc[32];
	uint32_t i, busy;
	bool snd;
	int n, k;

	for (;;) {
		busy = 0;
		for (i = 0; i < opt.p.nqp; i++) {
			struct qpctx *q = &qps[i];

			while (q->outstanding < win &&
			       q->stream < q->stream_end) {
				if (op == OP_ATOMIC)
					post_atomic(q);
				else
					post_one(q, op, region_base, op == OP_WRITE);
			}
			if (q->outstanding || q->stream < q->stream_end)
				busy++;
		}
		if (!busy)
			return;
		n = get_wcs(wc, 32, &snd);
		for (k = 0; k < n; k++) {
			struct qpctx *q = wc_qp(&wc[k]);
			struct slot *s;
			uint32_t want;

			if (wc[k].status != IBV_WC_SUCCESS)
				wc_error(&wc[k], op, snd ? "requester" : "responder");
			if (!snd)
				eroce_die("%s: unexpected receive completion on qp %d",
				    op_names[op], q->idx);
			s = &q->ss[wc[k].wr_id & 0xffffffff];
			if (s->seq != q->completed)
				eroce_die("%s: qp %d completion out of order: WR %u, want %u",
				    op_names[op], q->idx, s->seq, q->completed);
			want = op == OP_SEND ? IBV_WC_SEND :
			       op == OP_WRITE ? IBV_WC_RDMA_WRITE :
			       op == OP_READ ? IBV_WC_RDMA_READ :
			       s->cas ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD;
			if (wc[k].opcode != want)
				eroce_die("%s: qp %d completion opcode %d, want %u",
				    op_names[op], q->idx, wc[k].opcode, want);
			if (op == OP_READ) {
				if (wc[k].byte_len != s->len)
					vlog("read: qp %d WR %u byte_len %u, want %u",
					     q->idx, s->seq, wc[k].byte_len, s->len);
				check_pieces(op, q, s, s->len, s->off);
			}
			if (op == OP_ATOMIC)
				check_atomic(q, s);
			if (op != OP_WRITE) {
				ok_bytes[op] += s->len;
				ok_msgs[op]++;
			}
			q->completed++;
			q->outstanding--;
		}
	}
}

/* ---- phases ------------------------------------------------------------------------------------ */

static uint64_t per_qp_bytes(void)
{
	uint64_t b = opt.p.bytes / opt.p.nqp;

	return b ? b : 1;
}

static void phase_reset(int op)
{
	uint32_t i;

	for (i = 0; i < opt.p.nqp; i++) {
		struct qpctx *q = &qps[i];

		q->sizes.s = stream_key(i, op) ^ 0x5157;
		q->layout.s = stream_key(i, op) ^ (opt.server ? 0xc1 : 0x5e) ^
			      ((uint64_t)getpid() << 20);
		q->stream = 0;
		q->stream_end = 0;
		q->posted = q->completed = q->outstanding = 0;
		q->rposted = q->rcompleted = 0;
		q->nmsgs = 0;
	}
}

static void send_phase(bool active)
{
	struct ctl c;
	uint64_t quota = per_qp_bytes();
	uint32_t i;

	phase_reset(OP_SEND);
	if (active) {
		for (i = 0; i < opt.p.nqp; i++)
			qps[i].stream_end = quota;
		ctl_expect(&c, CTL_READY, OP_SEND, 0);
		active_run(OP_SEND, 0);
		ctl_expect(&c, CTL_RESULT, OP_SEND, 0);
		if (c.bad) {
			bad_count[OP_SEND] += c.bad;
			first_bad[OP_SEND] = c.first_bad;
			printf("send: peer saw %u bad messages, first at stream offset %" PRIu64 "\n",
			       c.bad, c.first_bad);
		}
		return;
	}

	/* passive: count the messages the sender will send */
	for (i = 0; i < opt.p.nqp; i++) {
		struct qpctx *q = &qps[i];
		struct rng save = q->sizes;
		uint64_t s = 0;

		while (s < quota) {
			s += next_size(q, quota - s);
			q->nmsgs++;
		}
		q->sizes = save;
		while (q->rposted < q->nmsgs && q->rposted < 2 * opt.p.depth)
			post_recv_slot(q, q->rposted, OP_SEND);
	}
	ctl_send(CTL_READY, OP_SEND, 0, 0, 0, 0);

	uint32_t done = 0;
	struct ibv_wc wc[32];
	bool snd;

	while (done < opt.p.nqp) {
		int n = get_wcs(wc, 32, &snd), k;

		for (k = 0; k < n; k++) {
			struct qpctx *q = wc_qp(&wc[k]);
			struct slot *s = &q->rs[wc[k].wr_id & 0xffffffff];
			uint32_t len;

			if (wc[k].status != IBV_WC_SUCCESS)
				wc_error(&wc[k], OP_SEND, "receive");
			if (snd || wc[k].opcode != IBV_WC_RECV)
				eroce_die("send: unexpected completion opcode %d on qp %d",
				    wc[k].opcode, q->idx);
			if (s->seq != q->rcompleted)
				eroce_die("send: qp %d receive completed out of order: WR %u, want %u",
				    q->idx, s->seq, q->rcompleted);
			len = next_size(q, quota - q->stream);
			s->seq = q->rcompleted;
			s->off = q->stream;
			if (wc[k].byte_len != len) {
				char m[96];

				snprintf(m, sizeof(m), "message %u: byte_len %u, want %u",
					 s->seq, wc[k].byte_len, len);
				note_bad(OP_SEND, q->idx, q->stream, m);
			} else {
				check_pieces(OP_SEND, q, s, len, q->stream);
				ok_bytes[OP_SEND] += len;
				ok_msgs[OP_SEND]++;
			}
			q->stream += len;
			q->rcompleted++;
			if (q->rposted < q->nmsgs)
				post_recv_slot(q, q->rposted, OP_SEND);
			if (q->rcompleted == q->nmsgs)
				done++;
		}
	}
	ctl_send(CTL_RESULT, OP_SEND, 0, bad_count[OP_SEND], first_bad[OP_SEND], 0);
}

static uint32_t num_rounds(void)
{
	uint64_t q = per_qp_bytes();

	return (q + opt.p.region - 1) / opt.p.region;
}

static void check_region(int op, struct qpctx *q, uint64_t base, uint64_t n)
{
	uint8_t got, want;
	int64_t bad = pat_check(q->region, n, stream_key(q->idx, op), base,
				&got, &want);
	char m[128];

	if (bad >= 0) {
		snprintf(m, sizeof(m), "region byte %" PRId64 " of %" PRIu64
			 ": got 0x%02x want 0x%02x", bad, n, got, want);
		note_bad(op, q->idx, base + bad, m);
		return;
	}
	bad = guard_check(q->region + n, GUARD);
	if (bad >= 0) {
		snprintf(m, sizeof(m), "byte written %" PRId64 " past the %" PRIu64
			 " bytes of the round", bad, n);
		note_bad(op, q->idx, base + n, m);
		return;
	}
	ok_bytes[op] += n;
}

static void write_phase(bool active)
{
	uint64_t quota = per_qp_bytes(), R = opt.p.region;
	uint32_t r, i, rounds = num_rounds();
	struct ctl c;

	phase_reset(OP_WRITE);
	for (r = 0; r < rounds; r++) {
		uint64_t base = r * R, n = quota - base < R ? quota - base : R;

		if (active) {
			for (i = 0; i < opt.p.nqp; i++) {
				qps[i].stream = base;
				qps[i].stream_end = base + n;
			}
			ctl_expect(&c, CTL_READY, OP_WRITE, r);
			active_run(OP_WRITE, base);
			ctl_expect(&c, CTL_RESULT, OP_WRITE, r);
			if (c.bad) {
				if (!bad_count[OP_WRITE])
					first_bad[OP_WRITE] = c.first_bad;
				bad_count[OP_WRITE] += c.bad;
				printf("write: round %u: peer saw %u bad QP regions, first at stream offset %" PRIu64 "\n",
				       r, c.bad, c.first_bad);
			} else {
				ok_bytes[OP_WRITE] += n * opt.p.nqp;
			}
			ok_msgs[OP_WRITE] = 0;
			for (i = 0; i < opt.p.nqp; i++)
				ok_msgs[OP_WRITE] += qps[i].completed;
			continue;
		}

		uint64_t before = bad_count[OP_WRITE];

		for (i = 0; i < opt.p.nqp; i++) {
			memset(qps[i].region, POISON, n + GUARD);
			qps[i].imm_seen = false;
			post_recv_slot(&qps[i], r, OP_WRITE);
		}
		ctl_send(CTL_READY, OP_WRITE, r, 0, 0, 0);

		uint32_t got = 0;
		struct ibv_wc wc[32];
		bool snd;

		while (got < opt.p.nqp) {
			int nw = get_wcs(wc, 32, &snd), k;

			for (k = 0; k < nw; k++) {
				struct qpctx *q = wc_qp(&wc[k]);

				if (wc[k].status != IBV_WC_SUCCESS)
					wc_error(&wc[k], OP_WRITE, "receive");
				if (snd || wc[k].opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
				    !(wc[k].wc_flags & IBV_WC_WITH_IMM))
					eroce_die("write: qp %d: completion opcode %d flags %#x, want RECV_RDMA_WITH_IMM",
					    q->idx, wc[k].opcode, wc[k].wc_flags);
				if (ntohl(wc[k].imm_data) != n) {
					char m[80];

					snprintf(m, sizeof(m), "round %u: immediate %u, want %" PRIu64,
						 r, ntohl(wc[k].imm_data), n);
					note_bad(OP_WRITE, q->idx, base, m);
				}
				if (q->imm_seen)
					eroce_die("write: qp %d: two immediates in round %u", q->idx, r);
				q->imm_seen = true;
				check_region(OP_WRITE, q, base, n);
				got++;
			}
		}
		ctl_send(CTL_RESULT, OP_WRITE, r, bad_count[OP_WRITE] - before,
			 first_bad[OP_WRITE], 0);
	}
}

static void read_phase(bool active)
{
	uint64_t quota = per_qp_bytes(), R = opt.p.region;
	uint32_t r, i, rounds = num_rounds();
	struct ctl c;

	phase_reset(OP_READ);
	for (r = 0; r < rounds; r++) {
		uint64_t base = r * R, n = quota - base < R ? quota - base : R;

		if (active) {
			for (i = 0; i < opt.p.nqp; i++) {
				qps[i].stream = base;
				qps[i].stream_end = base + n;
			}
			ctl_expect(&c, CTL_READY, OP_READ, r);
			active_run(OP_READ, base);
			ctl_send(CTL_DONE, OP_READ, r, 0, 0, 0);
			continue;
		}
		for (i = 0; i < opt.p.nqp; i++) {
			pat_fill(qps[i].region, n, stream_key(i, OP_READ), base);
			memset(qps[i].region + n, POISON, GUARD);
		}
		ctl_send(CTL_READY, OP_READ, r, 0, 0, 0);
		ctl_expect(&c, CTL_DONE, OP_READ, r);
		ok_bytes[OP_READ] += n * opt.p.nqp;
	}
}

/*
 * Per round every QP runs up to ATOMIC_ROUND atomics on its counters,
 * which the passive end sets to the round's start values before
 * CTL_READY; after the active end's CTL_DONE (all its atomics completed)
 * it checks them and reports in CTL_RESULT (bytes: the first bad QP).
 */
static void atomic_phase(bool active)
{
	uint64_t per_qp = atomics_per_qp();
	uint32_t r, i, rounds = (per_qp + ATOMIC_ROUND - 1) / ATOMIC_ROUND;
	struct ctl c;

	phase_reset(OP_ATOMIC);
	for (r = 0; r < rounds; r++) {
		uint64_t base = (uint64_t)r * ATOMIC_ROUND;
		uint64_t n = per_qp - base < ATOMIC_ROUND ? per_qp - base :
			     ATOMIC_ROUND;

		for (i = 0; i < opt.p.nqp; i++) {
			ctr_init(&qps[i], r);
			qps[i].stream = 8 * base;
			qps[i].stream_end = 8 * (base + n);
		}
		if (active) {
			ctl_expect(&c, CTL_READY, OP_ATOMIC, r);
			active_run(OP_ATOMIC, 8 * base);
			ctl_send(CTL_DONE, OP_ATOMIC, r, 0, 0, 0);
			ctl_expect(&c, CTL_RESULT, OP_ATOMIC, r);
			if (c.bad) {
				if (!bad_count[OP_ATOMIC]) {
					first_bad[OP_ATOMIC] = c.first_bad;
					first_bad_qp[OP_ATOMIC] = c.bytes;
				}
				bad_count[OP_ATOMIC] += c.bad;
				printf("atomic: round %u: peer saw %u bad counters or guards, first at qp %" PRIu64 " stream offset %" PRIu64 "\n",
				       r, c.bad, c.bytes, c.first_bad);
			}
			continue;
		}

		uint64_t before = bad_count[OP_ATOMIC];

		for (i = 0; i < opt.p.nqp; i++) {
			struct qpctx *q = &qps[i];

			memset((uint8_t *)q->ctr - GUARD, POISON, GUARD);
			memcpy(q->ctr, q->model, NCTR * 8);
			memset((uint8_t *)q->ctr + NCTR * 8, POISON, GUARD);
		}
		ctl_send(CTL_READY, OP_ATOMIC, r, 0, 0, 0);
		ctl_expect(&c, CTL_DONE, OP_ATOMIC, r);
		for (i = 0; i < opt.p.nqp; i++)
			check_counters(&qps[i], r, n);
		ctl_send(CTL_RESULT, OP_ATOMIC, r, bad_count[OP_ATOMIC] - before,
			 first_bad[OP_ATOMIC], first_bad_qp[OP_ATOMIC]);
	}
}

/* ---- main ---------------------------------------------------------------------------------------- */

static void on_alarm(int sig)
{
	static const char m[] = "eroce_integrity: TIMEOUT\n";

	(void)sig;
	if (write(STDOUT_FILENO, m, sizeof(m) - 1) < 0)
		_exit(3);
	_exit(3);
}

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end)
		eroce_die("bad size '%s'", s);
	return v;
}

static void usage(void)
{
	printf("usage: eroce_integrity -d DEV [-g GIDIDX] [options] [SERVER_ADDR]\n"
	       "  -d DEV        RDMA device (default: the first eroce device)\n"
	       "  -g IDX        GID index (default 1)\n"
	       "  -p PORT       TCP port (default 18530)\n"
	       "  -i IBPORT     RDMA port (default 1)\n"
	       "client-chosen (the server takes them from the client):\n"
	       "  -q N          QPs (default 4)\n"
	       "  -w N          outstanding WRs per QP (default 32)\n"
	       "  -b BYTES      bytes per operation over all QPs, k/M/G suffix (default 256M)\n"
	       "  -S BYTES      largest message (default 65537)\n"
	       "  -r BYTES      WRITE/READ region per QP and round (default 4M)\n"
	       "  -o OPS        operations: send,write,read,atomic or all\n"
	       "                (default send,write,read)\n"
	       "  -a N          atomics over all QPs, k/M suffix (default 64k)\n"
	       "  -A N          reads and atomics outstanding per QP, 1..128 (default 16)\n"
	       "  -m MTU        path MTU 256..4096 (default: port's active MTU)\n"
	       "  -s SEED       pattern seed (default 1)\n"
	       "  -R            reverse: the server is the active side\n"
	       "either side:\n"
	       "  -t SECS       global timeout, exit 3 (default 600)\n"
	       "  -T EXP        local ACK timeout of this side's QPs, 4.096 us * 2^EXP,\n"
	       "                1..31 (default 14: 67 ms)\n"
	       "  -P            busy-poll the CQs instead of completion events\n"
	       "  -L KBPS       rate limit of this side's QPs (ibv_modify_qp_rate_limit)\n"
	       "  -V VECTOR     completion vector of this side's CQs (default 0)\n"
	       "  -G FILE       connected, wait for FILE to exist before the operations\n"
	       "                (several clients start their transfers together)\n"
	       "  -v            verbose\n");
	exit(2);
}

int main(int argc, char **argv)
{
	bool active;
	int c, op, rc = 0;

	while ((c = getopt(argc, argv, "d:g:p:i:q:w:b:S:r:o:a:A:m:s:Rt:T:PL:G:V:vh")) != -1) {
		switch (c) {
		case 'd': opt.dev = optarg; break;
		case 'g': opt.gidx = atoi(optarg); break;
		case 'p': opt.port = atoi(optarg); break;
		case 'i': opt.ib_port = atoi(optarg); break;
		case 'q': opt.p.nqp = atoi(optarg); break;
		case 'w': opt.p.depth = atoi(optarg); break;
		case 'b': opt.p.bytes = parse_size(optarg); break;
		case 'S': opt.p.max_msg = parse_size(optarg); break;
		case 'r': opt.p.region = parse_size(optarg); break;
		case 'o':
			opt.p.ops = 0;
			for (char *t = strtok(optarg, ","); t; t = strtok(NULL, ",")) {
				for (op = 0; op < NUM_OPS; op++)
					if (!strcmp(t, op_names[op]))
						opt.p.ops |= 1u << op;
				if (!strcmp(t, "all"))
					opt.p.ops = OPS_ALL;
			}
			if (!opt.p.ops)
				usage();
			break;
		case 'a': opt.p.atomics = parse_size(optarg); break;
		case 'A': opt.p.rd_atomic = atoi(optarg); break;
		case 'm': {
			int m = atoi(optarg);

			opt.p.mtu = m == 256 ? IBV_MTU_256 : m == 512 ? IBV_MTU_512 :
				    m == 1024 ? IBV_MTU_1024 : m == 2048 ? IBV_MTU_2048 :
				    m == 4096 ? IBV_MTU_4096 : 0;
			if (!opt.p.mtu)
				usage();
			break;
		}
		case 's': opt.p.seed = strtoull(optarg, NULL, 0); break;
		case 'R': opt.p.reverse = 1; break;
		case 't': opt.timeout = atoi(optarg); break;
		case 'T': {
			int exp = atoi(optarg);

			if (exp < 1 || exp > 31)
				eroce_die("-T %s: the ACK timeout exponent is 1..31", optarg);
			opt.ack_timeout = exp;
			break;
		}
		case 'P': opt.busy_poll = true; break;
		case 'L': opt.rate_kbps = strtoul(optarg, NULL, 0); break;
		case 'G': opt.gate = optarg; break;
		case 'V': opt.vector = atoi(optarg); break;
		case 'v': opt.verbose = true; break;
		default: usage();
		}
	}
	if (optind < argc)
		opt.server = argv[optind];
	if (opt.p.region > opt.p.bytes / (opt.p.nqp ? opt.p.nqp : 1) &&
	    opt.p.bytes / (opt.p.nqp ? opt.p.nqp : 1) >= opt.p.max_msg)
		opt.p.region = opt.p.bytes / opt.p.nqp;
	if (opt.p.region < opt.p.max_msg)
		opt.p.region = opt.p.max_msg;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	if (opt.timeout > 0)
		alarm(opt.timeout);

	tcp_connect();
	exchange();
	active = !!opt.server ^ !!opt.p.reverse;
	printf("%s: %s, %u QPs x %u WRs, %" PRIu64 " bytes per op, messages up to %u, MTU %d, %s\n",
	       opt.server ? "client" : "server", active ? "active" : "passive",
	       opt.p.nqp, opt.p.depth, opt.p.bytes, opt.p.max_msg,
	       128 << opt.p.mtu, opt.busy_poll ? "busy poll" : "CQ events");
	if (opt.p.ops & (1u << OP_ATOMIC))
		printf("atomic: %" PRIu64 " per QP on %d counters, rounds of %d, up to %u outstanding\n",
		       atomics_per_qp(), NCTR, ATOMIC_ROUND, atomic_window());
	/* the line above says this side is connected; -t still bounds the wait */
	while (opt.gate && access(opt.gate, F_OK))
		usleep(10000);

	for (op = 0; op < NUM_OPS; op++) {
		struct timespec t0, t1;
		double s;

		if (!(opt.p.ops & (1u << op)))
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (op == OP_SEND)
			send_phase(active);
		else if (op == OP_WRITE)
			write_phase(active);
		else if (op == OP_READ)
			read_phase(active);
		else
			atomic_phase(active);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (bad_count[op]) {
			printf("%s: FAIL %" PRIu64 " bad, first at qp %d stream offset %" PRIu64 "\n",
			       op_names[op], bad_count[op], first_bad_qp[op],
			       first_bad[op]);
			rc = 1;
		} else {
			printf("%s: ok %" PRIu64 " bytes checked, %" PRIu64 " messages, %.1f s, %.3f MiB/s\n",
			       op_names[op], ok_bytes[op], ok_msgs[op], s,
			       ok_bytes[op] / (s > 0 ? s : 1) / (1 << 20));
		}
		if (op == OP_ATOMIC)
			printf("atomic: %" PRIu64 " fetch_and_add, %" PRIu64 " cmp_and_swp (%" PRIu64 " compared equal, %" PRIu64 " did not)\n",
			       n_fadd, n_cas_hit + n_cas_miss, n_cas_hit, n_cas_miss);
	}
	/* final handshake: nobody tears down QPs while the peer still needs them */
	ctl_send(CTL_DONE, NUM_OPS, 0, rc, 0, 0);
	{
		struct ctl cc;

		ctl_expect(&cc, CTL_DONE, NUM_OPS, 0);
		if (cc.bad)
			rc = 1;
	}
	if (lost_events)
		printf("note: %lu completions found without a CQ event\n", lost_events);
	printf("eroce_integrity: %s\n", rc ? "FAIL" : "ok");
	return rc;
}
