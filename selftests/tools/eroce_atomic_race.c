// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_atomic_race: remote atomics are atomic against the CPUs' own
 * atomics on the same word.  Two devices in one process (tool_pair.h):
 * RC QP A sends FETCH_ADDs and COMPARE_SWAPs into a word of B's MR
 * while a thread of B's side changes the same word with the CPU's
 * atomic instructions, as an application keeping a lock-free counter
 * that its peers add to would.  The remote side counts in the word's
 * high bits (1 << 40 per operation), the thread in its low bits, so a
 * lost update shows whose it was:
 *
 *   fetch_add    ADDS FETCH_ADDs of 1 << 40, 16 posted at a time,
 *                beside the thread's __atomic_fetch_add(1): the word
 *                ends as both counts, and the value each FETCH_ADD
 *                returned holds the remote ones before it
 *   cmp_swap     SWAPS increments by COMPARE_SWAP (compare with the
 *                last value seen, retry with the one returned), beside
 *                the thread's compare-and-swap loop, for at most
 *                CAS_SECS: both counts, and at least SWAPS / 10 of the
 *                remote increments took (a slow kernel loses more of
 *                them to the thread)
 *   raced        the thread's count changed between remote operations
 *                in both phases (the two really ran at the same time:
 *                with one CPU they would not, and then nothing was
 *                tested)
 *
 * Needs two CPUs.  Prints "result:" lines; exits 0 when every
 * expectation held, 1 otherwise, 2 on a usage or setup error.
 *
 * usage: eroce_atomic_race DEV_A GID_A DEV_B GID_B [ADDS [SWAPS]]
 * (defaults 20000 and 1000)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "tool_pair.h"
#include "tool_util.h"

#define BUF_LEN		4096u
#define DEPTH		16u
#define CAS_SECS	60.0
#define CAS_PAUSE	16384u
#define REMOTE_ONE	((uint64_t)1 << 40)
#define LOCAL_MASK	(REMOTE_ONE - 1)
#define WAIT_SECS	20.0

enum race_kind { RACE_ADD, RACE_CAS };

/* the thread of B's side and what it did */
struct race {
	uint64_t *word;
	enum race_kind kind;
	bool stop;			/* set by the main thread */
	bool started;			/* set by the thread */
	uint64_t done;			/* its increments that took effect */
};

static void *race_thread(void *arg)
{
	struct race *r = arg;
	uint64_t done = 0, old;

	__atomic_store_n(&r->started, true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (r->kind == RACE_ADD) {
			__atomic_fetch_add(r->word, 1, __ATOMIC_SEQ_CST);
			done++;
			continue;
		}
		old = __atomic_load_n(r->word, __ATOMIC_RELAXED);
		if (__atomic_compare_exchange_n(r->word, &old, old + 1, false,
						__ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			done++;
		/* room for the remote swaps, which take a round trip each */
		for (volatile unsigned int i = 0; i < CAS_PAUSE; i++)
			;
	}
	__atomic_store_n(&r->done, done, __ATOMIC_RELEASE);
	return NULL;
}

static void race_start(struct race *r, pthread_t *t)
{
	int err = pthread_create(t, NULL, race_thread, r);

	if (err)
		eroce_die("pthread_create: %s", strerror(err));
	while (!__atomic_load_n(&r->started, __ATOMIC_ACQUIRE))
		;
}

static uint64_t race_stop(struct race *r, pthread_t t)
{
	__atomic_store_n(&r->stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	return r->done;
}

/* an atomic of A's into B's word; its result lands in @result */
static int post_atomic(struct eroce_side *a, struct eroce_side *b,
		       uint64_t id, enum ibv_wr_opcode opcode,
		       uint64_t compare_add, uint64_t swap, uint64_t *result)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)result,
		.length = sizeof(*result),
		.lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = opcode,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = {
			.remote_addr = (uintptr_t)b->buf,
			.compare_add = compare_add,
			.swap = swap,
			.rkey = b->mr->rkey,
		},
	}, *bad;

	return ibv_post_send(a->qp, &wr, &bad);
}

/* busy-poll @n completions of A's: all successful, in order from @id */
static bool reap(struct eroce_side *a, uint64_t id, unsigned int n)
{
	double end = eroce_now() + WAIT_SECS;
	struct ibv_wc wc;
	int got;

	while (n) {
		got = ibv_poll_cq(a->cq, 1, &wc);
		if (got < 0)
			eroce_die("ibv_poll_cq failed");
		if (!got) {
			if (eroce_now() > end) {
				printf("# no completion for request %" PRIu64
				       "\n", id);
				return false;
			}
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != id) {
			printf("# request %" PRIu64 ": %s, expected %" PRIu64
			       "\n", wc.wr_id, ibv_wc_status_str(wc.status),
			       id);
			return false;
		}
		id++;
		n--;
	}
	return true;
}

/*
 * REMOTE_OPS FETCH_ADDs beside the thread's adds.  *@raced counts the
 * operations that saw the thread's count change since the previous one.
 */
static void check_fetch_add(struct eroce_side *a, struct eroce_side *b,
			    unsigned int ops, unsigned int *raced)
{
	volatile uint64_t *word = (uint64_t *)b->buf;
	uint64_t *orig = (uint64_t *)a->buf;
	struct race r = { .word = (uint64_t *)b->buf, .kind = RACE_ADD };
	unsigned int i, n, in_order = 0;
	uint64_t local, last_low = 0;
	bool ok = true;
	pthread_t t;

	*word = 0;
	race_start(&r, &t);
	for (i = 0; i < ops && ok; i += n) {
		n = ops - i < DEPTH ? ops - i : DEPTH;
		for (unsigned int j = 0; j < n && ok; j++)
			ok = !post_atomic(a, b, i + j, IBV_WR_ATOMIC_FETCH_AND_ADD,
					  REMOTE_ONE, 0, &orig[j]);
		ok = ok && reap(a, i, n);
		for (unsigned int j = 0; j < n && ok; j++) {
			in_order += orig[j] >> 40 == i + j;
			*raced += (orig[j] & LOCAL_MASK) != last_low;
			last_low = orig[j] & LOCAL_MASK;
		}
	}
	local = race_stop(&r, t);
	eroce_result("fetch_add",
		     ok && *word == (uint64_t)ops * REMOTE_ONE + local &&
		     in_order == ops,
		     "word %#" PRIx64 ": %" PRIu64 " remote adds of %u, %"
		     PRIu64 " of the thread's %" PRIu64 "; %u of %u returned "
		     "the remote adds before them", *word, *word >> 40, ops,
		     *word & LOCAL_MASK, local, in_order, ops);
}

/* @ops increments by COMPARE_SWAP beside the thread's CAS loop */
static void check_cmp_swap(struct eroce_side *a, struct eroce_side *b,
			   unsigned int ops, unsigned int *raced)
{
	double end = eroce_now() + CAS_SECS;
	volatile uint64_t *word = (uint64_t *)b->buf;
	uint64_t *orig = (uint64_t *)a->buf;
	struct race r = { .word = (uint64_t *)b->buf, .kind = RACE_CAS };
	uint64_t seen = 0, local, id = 0;
	unsigned int swapped = 0;
	bool ok = true;
	pthread_t t;

	*word = 0;
	race_start(&r, &t);
	while (swapped < ops && eroce_now() < end && ok) {
		ok = !post_atomic(a, b, id, IBV_WR_ATOMIC_CMP_AND_SWP, seen,
				  seen + REMOTE_ONE, orig) && reap(a, id, 1);
		id++;
		if (!ok)
			break;
		if (*orig == seen)
			swapped++;
		else
			*raced += 1;
		seen = *orig == seen ? seen + REMOTE_ONE : *orig;
	}
	local = race_stop(&r, t);
	eroce_result("cmp_swap",
		     ok && swapped >= ops / 10 &&
		     *word == (uint64_t)swapped * REMOTE_ONE + local,
		     "word %#" PRIx64 ": %" PRIu64 " remote swaps of %u that "
		     "took (%u wanted, %" PRIu64 " tried), %" PRIu64 " of the "
		     "thread's %" PRIu64, *word, *word >> 40, swapped, ops, id,
		     *word & LOCAL_MASK, local);
}

static void run(struct eroce_side *a, struct eroce_side *b,
		unsigned int adds, unsigned int swaps)
{
	struct ibv_qp_attr attr = {
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	unsigned int raced_add = 0, raced_cas = 0;

	a->qp = eroce_side_qp(a, IBV_QPT_RC, NULL, DEPTH);
	b->qp = eroce_side_qp(b, IBV_QPT_RC, NULL, DEPTH);
	eroce_pair_connect(a, b, 0, 7);
	if (ibv_modify_qp(b->qp, &attr, IBV_QP_ACCESS_FLAGS))
		eroce_die("remote atomic access on B's QP: %s",
			  strerror(errno));
	/* B's buffer with the atomic right: the word is its first 8 bytes */
	if (ibv_dereg_mr(b->mr))
		eroce_die("ibv_dereg_mr: %s", strerror(errno));
	b->mr = ibv_reg_mr(b->pd, b->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_ATOMIC);
	if (!b->mr)
		eroce_die("ibv_reg_mr with remote atomic: %s", strerror(errno));

	check_fetch_add(a, b, adds, &raced_add);
	check_cmp_swap(a, b, swaps, &raced_cas);
	eroce_result("raced", raced_add > adds / 10 && raced_cas > 0,
		     "the thread's count changed before %u of %u FETCH_ADDs "
		     "and failed %u COMPARE_SWAPs", raced_add, adds, raced_cas);
}

int main(int argc, char **argv)
{
	struct eroce_side a = { 0 }, b = { 0 };
	unsigned int adds = 20000, swaps = 1000;

	if (argc < 5 || argc > 7 ||
	    (argc > 5 && sscanf(argv[5], "%u", &adds) != 1) ||
	    (argc > 6 && sscanf(argv[6], "%u", &swaps) != 1) ||
	    !adds || !swaps) {
		fprintf(stderr, "usage: eroce_atomic_race DEV_A GID_A DEV_B GID_B [ADDS [SWAPS]]\n");
		return 2;
	}
	a.name = argv[1];
	a.gid_index = atoi(argv[2]);
	b.name = argv[3];
	b.gid_index = atoi(argv[4]);
	eroce_side_open(&a, false, BUF_LEN, 2 * DEPTH);
	eroce_side_open(&b, false, BUF_LEN, 2 * DEPTH);
	run(&a, &b, adds, swaps);
	return eroce_results_status();
}
