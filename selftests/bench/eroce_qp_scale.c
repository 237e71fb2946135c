// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_qp_scale: create N RC QPs on one RDMA device, connect them in pairs
 * (QP 2k <-> QP 2k+1, through the device's own GID, i.e. its loopback
 * path), pass one 64-byte SEND each way on every pair, and report the
 * kernel memory those QPs hold while idle, from /proc/meminfo deltas
 * (Slab + VmallocUsed; eroce's rings are vmalloc_user memory).
 *
 *   eroce_qp_scale -d DEV -g GID_INDEX [-D PEER_DEV -G PEER_GID] [-n QPS] [-w WR] [-x]
 *
 * With -D, QPS QPs on DEV are each connected to one of QPS QPs on PEER_DEV
 * (2*QPS QPs in all; per-QP figures divide by 2*QPS).
 *
 * Output, one "key value" per line (parsed by selftests/bench/bench.sh):
 *   qps, create_s, connect_s, traffic_s, completions,
 *   kmem_per_qp_bytes (Slab+VmallocUsed after traffic, per QP),
 *   slab_per_qp_bytes, vmalloc_per_qp_bytes, memfree_per_qp_bytes,
 *   leak_after_destroy_kib (Slab+VmallocUsed after destroying everything),
 *   with -x over_limit_errno (the errno of creating one QP more on DEV
 *   once all are there, 0 when that succeeded: for a DEV that is full)
 * Exit status 0 when every QP was created, connected and completed its
 * traffic.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MSG 64

struct meminfo {
	long slab, vmalloc, memfree;	/* KiB */
};

static void read_meminfo(struct meminfo *m)
{
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	memset(m, 0, sizeof(*m));
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "Slab: %ld", &m->slab);
		sscanf(line, "VmallocUsed: %ld", &m->vmalloc);
		sscanf(line, "MemFree: %ld", &m->memfree);
	}
	fclose(f);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void settle(void)
{
	/* let deferred frees (RCU, workqueues) run before a snapshot */
	sleep(2);
}

static int poll_all(struct ibv_cq *cq, int want, double limit)
{
	struct ibv_wc wc[64];
	double end = now() + limit;
	int got = 0, n, i;

	while (got < want) {
		n = ibv_poll_cq(cq, 64, wc);
		if (n < 0) {
			fprintf(stderr, "poll_cq failed\n");
			return got;
		}
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "wr_id %llu: %s\n",
					(unsigned long long)wc[i].wr_id,
					ibv_wc_status_str(wc[i].status));
				return got;
			}
		}
		got += n;
		if (!n) {
			if (now() > end) {
				fprintf(stderr, "timeout: %d of %d completions\n", got, want);
				return got;
			}
			usleep(1000);
		}
	}
	return got;
}

static int connect_qp(struct ibv_qp *qp, uint32_t dqpn, union ibv_gid *gid,
		      int gidx, enum ibv_mtu mtu)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	/*
	 * 1.07 s (4.096 us << 18): every QP sends at once, and a guest of
	 * one CPU beside another answers some only after the seven retries
	 * of 67 ms (timeout 14) are spent; what is measured is memory
	 */
	a.timeout = 18;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static long kmem(const struct meminfo *m)
{
	return m->slab + m->vmalloc;
}

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *scq, *rcq;
	union ibv_gid gid;
	int gidx;
	enum ibv_mtu mtu;
};

static int side_open(struct side *s, const char *name, int gidx, int nqp,
		     char *buf, size_t len)
{
	struct ibv_device **list;
	struct ibv_port_attr port;
	struct ibv_device_attr dattr;
	int i, ndev, cqe;

	list = ibv_get_device_list(&ndev);
	for (i = 0; list && i < ndev; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			s->ctx = ibv_open_device(list[i]);
	if (!s->ctx) {
		fprintf(stderr, "cannot open %s\n", name);
		return -1;
	}
	if (ibv_query_port(s->ctx, 1, &port) ||
	    ibv_query_gid(s->ctx, 1, gidx, &s->gid) ||
	    ibv_query_device(s->ctx, &dattr)) {
		fprintf(stderr, "%s: query failed\n", name);
		return -1;
	}
	s->gidx = gidx;
	s->mtu = port.active_mtu;
	cqe = nqp + 16;
	if (cqe > dattr.max_cqe)
		cqe = dattr.max_cqe;
	s->pd = ibv_alloc_pd(s->ctx);
	s->mr = s->pd ? ibv_reg_mr(s->pd, buf, len, IBV_ACCESS_LOCAL_WRITE) : NULL;
	s->scq = ibv_create_cq(s->ctx, cqe, NULL, NULL, 0);
	s->rcq = ibv_create_cq(s->ctx, cqe, NULL, NULL, 0);
	if (!s->pd || !s->mr || !s->scq || !s->rcq) {
		fprintf(stderr, "%s: pd/mr/cq setup failed: %s\n", name, strerror(errno));
		return -1;
	}
	return 0;
}

static void side_close(struct side *s)
{
	ibv_destroy_cq(s->scq);
	ibv_destroy_cq(s->rcq);
	ibv_dereg_mr(s->mr);
	ibv_dealloc_pd(s->pd);
	ibv_close_device(s->ctx);
}

int main(int argc, char **argv)
{
	const char *dev1 = NULL, *dev2 = NULL;
	int nqp = 4096, g1 = 1, g2 = 1, wr = 4, c, i, ok = 1, total, nsides;
	int got_s, got_r, over_errno = 0;
	bool over = false;
	struct side sd[2];
	struct ibv_qp **qps;
	struct meminfo m0, m1, m2, m3;
	double t0, t1, t2, t3;
	size_t len;
	char *buf;

	while ((c = getopt(argc, argv, "d:g:D:G:n:w:x")) != -1) {
		switch (c) {
		case 'd': dev1 = optarg; break;
		case 'g': g1 = atoi(optarg); break;
		case 'D': dev2 = optarg; break;
		case 'G': g2 = atoi(optarg); break;
		case 'n': nqp = atoi(optarg); break;
		case 'w': wr = atoi(optarg); break;
		case 'x': over = true; break;
		default:
			fprintf(stderr, "usage: %s -d DEV -g GID_INDEX [-D PEER_DEV -G PEER_GID_INDEX] [-n QPS] [-w WR] [-x]\n"
				"  without -D: QPS QPs on DEV connected to each other (loopback);\n"
				"  with -D: QPS QPs on DEV, each connected to one of QPS QPs on PEER_DEV\n"
				"  -x: then try one QP more on DEV, report its errno\n",
				argv[0]);
			return 2;
		}
	}
	if (!dev1 || nqp < 2) {
		fprintf(stderr, "need -d DEV and -n >= 2\n");
		return 2;
	}
	nsides = dev2 ? 2 : 1;
	if (!dev2)
		nqp &= ~1;
	total = dev2 ? 2 * nqp : nqp;
	len = (size_t)total * 2 * MSG;
	buf = calloc(total, 2 * MSG);
	qps = calloc(total, sizeof(*qps));
	if (!buf || !qps)
		return 1;
	memset(sd, 0, sizeof(sd));
	settle();
	read_meminfo(&m0);

	/* QP i lives on side (i & 1) with two devices; its peer is QP i ^ 1 */
	t0 = now();
	if (side_open(&sd[0], dev1, g1, total, buf, len) ||
	    (dev2 && side_open(&sd[1], dev2, g2, total, buf, len)))
		return 1;
	for (i = 0; i < total; i++) {
		struct side *s = &sd[dev2 ? i & 1 : 0];
		struct ibv_qp_init_attr ia = {
			.send_cq = s->scq, .recv_cq = s->rcq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = wr, .max_recv_wr = wr,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		qps[i] = ibv_create_qp(s->pd, &ia);
		if (!qps[i]) {
			fprintf(stderr, "create_qp %d failed: %s\n", i, strerror(errno));
			total = i & ~1;
			ok = 0;
			break;
		}
	}
	t1 = now();
	/* a device that holds max_qp QPs refuses one more */
	if (ok && over) {
		struct ibv_qp_init_attr ia = {
			.send_cq = sd[0].scq, .recv_cq = sd[0].rcq,
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = wr, .max_recv_wr = wr,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct ibv_qp *extra = ibv_create_qp(sd[0].pd, &ia);

		over_errno = extra ? 0 : errno;
		if (extra)
			ibv_destroy_qp(extra);
	}
	for (i = 0; i < total; i++) {
		struct side *s = &sd[dev2 ? i & 1 : 0];
		struct side *peer = &sd[dev2 ? (i & 1) ^ 1 : 0];

		if (connect_qp(qps[i], qps[i ^ 1]->qp_num, &peer->gid, s->gidx,
			       s->mtu < peer->mtu ? s->mtu : peer->mtu)) {
			fprintf(stderr, "connect qp %d failed: %s\n", i, strerror(errno));
			return 1;
		}
	}
	t2 = now();

	/* one receive and one 64-byte SEND per QP */
	for (i = 0; i < total; i++) {
		struct side *s = &sd[dev2 ? i & 1 : 0];
		struct ibv_sge sge = {
			.addr = (uintptr_t)buf + (size_t)i * 2 * MSG + MSG,
			.length = MSG, .lkey = s->mr->lkey,
		};
		struct ibv_recv_wr rw = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *brw;

		if (ibv_post_recv(qps[i], &rw, &brw)) {
			fprintf(stderr, "post_recv %d failed\n", i);
			return 1;
		}
	}
	for (i = 0; i < total; i++) {
		struct side *s = &sd[dev2 ? i & 1 : 0];
		struct ibv_sge sge = {
			.addr = (uintptr_t)buf + (size_t)i * 2 * MSG,
			.length = MSG, .lkey = s->mr->lkey,
		};
		struct ibv_send_wr sw = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *bsw;

		memset(buf + (size_t)i * 2 * MSG, (i * 7 + 1) & 0xff, MSG);
		if (ibv_post_send(qps[i], &sw, &bsw)) {
			fprintf(stderr, "post_send %d failed\n", i);
			return 1;
		}
	}
	got_s = got_r = 0;
	for (i = 0; i < nsides; i++) {
		int per = dev2 ? total / 2 : total;

		got_s += poll_all(sd[i].scq, per, 300);
		got_r += poll_all(sd[i].rcq, per, 60);
	}
	t3 = now();
	if (got_s != total || got_r != total)
		ok = 0;
	for (i = 0; ok && i < total; i++)
		if (memcmp(buf + (size_t)i * 2 * MSG + MSG,
			   buf + (size_t)(i ^ 1) * 2 * MSG, MSG)) {
			fprintf(stderr, "payload mismatch on qp %d\n", i);
			ok = 0;
		}
	read_meminfo(&m1);
	settle();
	read_meminfo(&m2);

	for (i = 0; i < total; i++)
		ibv_destroy_qp(qps[i]);
	for (i = 0; i < nsides; i++)
		side_close(&sd[i]);
	settle();
	read_meminfo(&m3);

	printf("qps %d\n", total);
	printf("devices %s%s%s\n", dev1, dev2 ? "+" : "", dev2 ? dev2 : "");
	printf("create_s %.3f\n", t1 - t0);
	printf("connect_s %.3f\n", t2 - t1);
	printf("traffic_s %.3f\n", t3 - t2);
	printf("completions %d/%d send %d/%d recv\n", got_s, total, got_r, total);
	if (total) {
		printf("kmem_per_qp_bytes %.0f\n", (kmem(&m2) - kmem(&m0)) * 1024.0 / total);
		printf("slab_per_qp_bytes %.0f\n", (m2.slab - m0.slab) * 1024.0 / total);
		printf("vmalloc_per_qp_bytes %.0f\n", (m2.vmalloc - m0.vmalloc) * 1024.0 / total);
		printf("memfree_per_qp_bytes %.0f\n", (m0.memfree - m2.memfree) * 1024.0 / total);
	}
	if (over)
		printf("over_limit_errno %d\n", over_errno);
	printf("kmem_busy_minus_idle_kib %ld\n", kmem(&m1) - kmem(&m2));
	printf("leak_after_destroy_kib %ld\n", kmem(&m3) - kmem(&m0));
	printf("result %s\n", ok ? "ok" : "FAIL");
	return ok ? 0 : 1;
}
