// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tool_pair.c: two RDMA devices in one process and a QP connected between
 * them, and the result lines (tool_pair.h).  Single-threaded helpers;
 * each exits through eroce_die() when a verb fails.  State: the count of
 * failed results.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool_pair.h"
#include "tool_util.h"

void eroce_side_open(struct eroce_side *s, bool events, size_t buf_len,
		     int cq_depth)
{
	struct ibv_port_attr pattr;

	s->ctx = eroce_open_device(s->name);
	if (!s->ctx)
		eroce_die("ibv_open_device %s: %s", s->name, strerror(errno));
	if (ibv_query_port(s->ctx, 1, &pattr))
		eroce_die("ibv_query_port %s", s->name);
	s->mtu = pattr.active_mtu;
	if (ibv_query_gid(s->ctx, 1, s->gid_index, &s->gid))
		eroce_die("ibv_query_gid %s %d", s->name, s->gid_index);
	s->pd = ibv_alloc_pd(s->ctx);
	if (events)
		s->chan = ibv_create_comp_channel(s->ctx);
	s->cq = s->pd ? ibv_create_cq(s->ctx, cq_depth, NULL, s->chan, 0) :
			NULL;
	if (!s->cq || (events && !s->chan))
		eroce_die("pd/cq on %s: %s", s->name, strerror(errno));
	s->buf = aligned_alloc(4096, buf_len);
	if (!s->buf)
		eroce_die("out of memory");
	memset(s->buf, 0, buf_len);
	s->mr = ibv_reg_mr(s->pd, s->buf, buf_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	if (!s->mr)
		eroce_die("ibv_reg_mr on %s: %s", s->name, strerror(errno));
}

struct ibv_qp *eroce_side_qp(struct eroce_side *s, enum ibv_qp_type type,
			     struct ibv_srq *srq, uint32_t depth)
{
	struct ibv_qp_init_attr qattr = {
		.qp_type = type,
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.srq = srq,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = depth, .max_recv_wr = srq ? 0 : depth,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(s->pd, &qattr);

	if (!qp)
		eroce_die("ibv_create_qp on %s: %s", s->name, strerror(errno));
	return qp;
}

void eroce_qp_to_init(struct eroce_side *s, struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
		.qkey = qkey,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	if (ibv_modify_qp(qp, &a, mask))
		eroce_die("%s: to INIT: %s", s->name, strerror(errno));
}

void eroce_qp_to_rtr(struct eroce_side *s, struct ibv_qp *qp,
		     const struct eroce_side *peer, uint32_t psn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

	if (qp->qp_type == IBV_QPT_UD) {
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
			eroce_die("%s: to RTR: %s", s->name, strerror(errno));
		return;
	}
	a.path_mtu = s->mtu < peer->mtu ? s->mtu : peer->mtu;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = psn;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = s->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (qp->qp_type == IBV_QPT_RC) {
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	if (ibv_modify_qp(qp, &a, mask))
		eroce_die("%s: to RTR: %s", s->name, strerror(errno));
}

void eroce_qp_to_rts(struct eroce_side *s, struct ibv_qp *qp, uint32_t psn,
		     uint8_t retry_cnt)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = retry_cnt,
		.rnr_retry = 7,
		.sq_psn = psn,
		.max_rd_atomic = 4,
	};
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (qp->qp_type == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	if (ibv_modify_qp(qp, &a, mask))
		eroce_die("%s: to RTS: %s", s->name, strerror(errno));
}

void eroce_pair_connect(struct eroce_side *a, struct eroce_side *b,
			uint32_t psn, uint8_t retry_cnt)
{
	eroce_qp_to_init(a, a->qp, 0);
	eroce_qp_to_init(b, b->qp, 0);
	eroce_qp_to_rtr(a, a->qp, b, psn);
	eroce_qp_to_rtr(b, b->qp, a, psn);
	eroce_qp_to_rts(a, a->qp, psn, retry_cnt);
	eroce_qp_to_rts(b, b->qp, psn, retry_cnt);
}

enum ibv_qp_state eroce_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr init;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		eroce_die("ibv_query_qp: %s", strerror(errno));
	return a.qp_state;
}

int eroce_side_poll(struct eroce_side *s, double secs, struct ibv_wc *wc)
{
	double end = eroce_now() + secs;
	int n;

	do {
		n = ibv_poll_cq(s->cq, 1, wc);
		if (n < 0)
			eroce_die("%s: ibv_poll_cq failed", s->name);
		if (n)
			return 0;
		usleep(200);
	} while (eroce_now() < end);
	return -1;
}

uint64_t eroce_counter(const struct eroce_side *s, const char *name)
{
	char path[256];
	uint64_t v;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s", s->name,
		 name);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%" SCNu64, &v) != 1)
		eroce_die("%s: %s", path, strerror(errno));
	fclose(f);
	return v;
}

bool eroce_counter_reaches(const struct eroce_side *s, const char *name,
			   uint64_t want)
{
	double end = eroce_now() + EROCE_COUNTER_WAIT_SECS;

	while (eroce_counter(s, name) < want) {
		if (eroce_now() > end)
			return false;
		usleep(1000);
	}
	return true;
}

void eroce_pattern(uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1, i;

	for (i = 0; i < len; i++) {
		x = x * 1103515245u + 12345;
		p[i] = (uint8_t)(x >> 16);
	}
}

bool eroce_pattern_ok(const uint8_t *p, uint32_t len, uint32_t seed)
{
	uint8_t *want = malloc(len ? len : 1);
	bool ok;

	if (!want)
		eroce_die("out of memory");
	eroce_pattern(want, len, seed);
	ok = !memcmp(p, want, len);
	free(want);
	return ok;
}

bool eroce_zeroed(const uint8_t *p, uint32_t len)
{
	return !len || (!p[0] && !memcmp(p, p + 1, len - 1));
}
