/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tool_pair.h: two RDMA devices opened by one process, and a connected QP
 * on each, for the programs that test what happens between the two.  The
 * rdma subsystem's shared netns mode shows every device in every
 * namespace, so one process reaches both ends of a veth pair.  Such a
 * program reports one "result: NAME ok|FAIL DETAILS" line per expectation
 * (lib.sh's ktap_results makes each a subtest).
 */
#ifndef EROCE_TOOL_PAIR_H
#define EROCE_TOOL_PAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/* one end: its device, one PD, one CQ, one QP and one registered buffer */
struct eroce_side {
	const char *name;		/* the RDMA device */
	int gid_index;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *chan;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;		/* local and remote read and write */
	uint8_t *buf;			/* zeroed, page aligned */
	union ibv_gid gid;
	enum ibv_mtu mtu;		/* the port's active MTU */
};

/*
 * Open s->name and query s->gid_index; a PD, a CQ of @cq_depth (with a
 * completion channel if @events) and @buf_len bytes registered.  Exits
 * with status 2 on failure, as every helper here.
 */
void eroce_side_open(struct eroce_side *s, bool events, size_t buf_len,
		     int cq_depth);

/* a QP of @type on s->cq (SRQ @srq or @depth receives), one SGE each */
struct ibv_qp *eroce_side_qp(struct eroce_side *s, enum ibv_qp_type type,
			     struct ibv_srq *srq, uint32_t depth);

/* INIT: remote read and write (RC, UC) or @qkey (UD) */
void eroce_qp_to_init(struct eroce_side *s, struct ibv_qp *qp, uint32_t qkey);

/* RTR towards peer->qp, its first PSN @psn (UD: the state alone) */
void eroce_qp_to_rtr(struct eroce_side *s, struct ibv_qp *qp,
		     const struct eroce_side *peer, uint32_t psn);

/* RTS from @psn; RC with the 67 ms timeout and @retry_cnt retries */
void eroce_qp_to_rts(struct eroce_side *s, struct ibv_qp *qp, uint32_t psn,
		     uint8_t retry_cnt);

/*
 * a->qp and b->qp (RC or UC) to each other: INIT, RTR and RTS from @psn,
 * RC with @retry_cnt retries
 */
void eroce_pair_connect(struct eroce_side *a, struct eroce_side *b,
			uint32_t psn, uint8_t retry_cnt);

/* @qp's state, from ibv_query_qp() */
enum ibv_qp_state eroce_qp_state(struct ibv_qp *qp);

/* the next completion on s->cq within @secs: 0, or -1 on timeout */
int eroce_side_poll(struct eroce_side *s, double secs, struct ibv_wc *wc);

/* counter @name of s->name's port 1 (sysfs hw_counters); exits if unreadable */
uint64_t eroce_counter(const struct eroce_side *s, const char *name);

/*
 * Wait until counter @name of @s reaches @want, at most
 * EROCE_COUNTER_WAIT_SECS: false if it did not.  A packet the device
 * dropped shows there, so a wait for a drop needs no sleep.
 */
#define EROCE_COUNTER_WAIT_SECS	20.0
bool eroce_counter_reaches(const struct eroce_side *s, const char *name,
			   uint64_t want);

/* @len bytes of message @seed: a different run of bytes for every seed */
void eroce_pattern(uint8_t *p, uint32_t len, uint32_t seed);

/* @p holds message @seed's @len bytes */
bool eroce_pattern_ok(const uint8_t *p, uint32_t len, uint32_t seed);

/* @p's @len bytes are all zero */
bool eroce_zeroed(const uint8_t *p, uint32_t len);

#endif /* EROCE_TOOL_PAIR_H */
