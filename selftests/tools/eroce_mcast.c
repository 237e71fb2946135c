// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_mcast: UD multicast between two devices in one process
 * (tool_pair.h).  UD QP A on the first device sends to multicast GROUP;
 * on the second device UD QPs B1 and B2 are attached to GROUP and B3 is
 * not.  In order:
 *
 *   attach        B1 and B2 attach; B1 attaches a second time (no error,
 *                 still one copy); B's netdev lists the group in
 *                 `ip maddr` (it joined: the IGMP/MLD membership)
 *   refused       attaching a unicast GID, attaching an RC QP and
 *                 detaching B3, never attached: EINVAL
 *   deliver       8 SENDs of 1 byte to the MTU: B1 and B2 each receive
 *                 every one once, in order, byte for byte, with the GRH
 *                 (its destination the group), A's QPN and the RoCE
 *                 packet type in sl; B3 receives nothing
 *   hop_limit     each of those packets carried the AH's hop limit
 *                 (HOP_LIMIT) as its IPv4 TTL or IPv6 hop limit, read
 *                 from the GRH of the receive
 *   loopback      QP L on A's device, in a context of its own, attaches
 *                 to GROUP: it receives each of 4 SENDs of A once, byte
 *                 for byte (IP multicast loopback, as on RoCE NICs),
 *                 and B1 and B2 still do; L detaches
 *   detach_one    B2 detaches; 4 SENDs reach B1 only
 *   bad_qkey      a SEND with another Q_Key: counted in rx_drop_bad_qkey,
 *                 delivered to no one
 *   bad_qpn       a SEND to the group naming B1's QPN instead of the
 *                 multicast QPN: counted in rx_drop_mcast_bad_qpn,
 *                 delivered to no one
 *   detach_all    B1 detaches: the netdev left the group; with the
 *                 group joined by a UDP socket of this process in NETNS_B
 *                 (so that IP lets it in), a SEND is counted in
 *                 rx_drop_mcast_no_group and delivered to no one
 *
 * Waits are bounded by B's device counters (mcast_packets_rcvd and the
 * drop counters), never by sleeping.  Prints "result:" lines; exits 0
 * when every expectation held, 1 otherwise, 2 on a usage or setup error.
 *
 * usage: eroce_mcast DEV_A GID_A DEV_B GID_B GROUP NETNS_B [NETDEV_B]
 *   GROUP: an IPv4 or IPv6 multicast address (IPv4 for IPv4 GIDs)
 *   NETNS_B: the named network namespace of B's netdev.  Run the program
 *   in the initial namespace, where sysfs shows both devices.
 *   NETDEV_B: the netdev the group's packets arrive on, a VLAN device on
 *   B's netdev when GID_A and GID_B are the VLAN's (default: B's netdev);
 *   attach_joins_netdev and detach_all look at its memberships.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
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
#define SLOT		4096u		/* one message or receive buffer */
#define DEPTH		32
#define QKEY		0x11110000u
#define GRH_BYTES	40u
#define MCAST_QPN	0xffffffu
#define NB		3		/* B1, B2 (attached), B3 (not) */
#define WAIT_SECS	20.0
#define HOP_LIMIT	5		/* the AH's: neither 1, nor 64 */

struct mcast_test {
	struct eroce_side a, b;
	struct eroce_side l;		/* A's device again, for QP L */
	struct ibv_qp *bq[NB];
	struct ibv_ah *ah;
	union ibv_gid group;
	bool ipv4;
	const char *group_str;		/* as given */
	const char *netns_b;
	char ifname_b[IF_NAMESIZE + 1];	/* B's netdev, in netns_b */
	uint32_t mtu;
	uint32_t seq;			/* messages sent so far */
	uint32_t posted[NB];		/* receives posted on each B QP */
	uint32_t hops_wrong;		/* receives with another hop limit */
};

static uint8_t *b_slot(struct mcast_test *t, int q, uint32_t n)
{
	return t->b.buf + ((q * DEPTH + n % DEPTH) * SLOT);
}

/* a receive on B QP @q into its slot; wr_id = q << 16 | n */
static void post_recv(struct mcast_test *t, int q)
{
	uint32_t n = t->posted[q]++;
	struct ibv_sge sge = {
		.addr = (uintptr_t)b_slot(t, q, n), .length = SLOT,
		.lkey = t->b.mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = (uint64_t)q << 16 | n, .sg_list = &sge, .num_sge = 1,
	}, *bad;

	memset(b_slot(t, q, n), 0, SLOT);
	if (ibv_post_recv(t->bq[q], &wr, &bad))
		eroce_die("ibv_post_recv: %s", strerror(errno));
}

/* SEND @len bytes of message t->seq to the group, QP @qpn, with @qkey */
static bool send_group(struct mcast_test *t, uint32_t len, uint32_t qpn,
		       uint32_t qkey)
{
	uint32_t seed = t->seq++;
	uint8_t *src = t->a.buf + (seed % DEPTH) * SLOT;
	struct ibv_sge sge = {
		.addr = (uintptr_t)src, .length = len, .lkey = t->a.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = seed, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	wr.wr.ud.ah = t->ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	eroce_pattern(src, len, seed);
	if (ibv_post_send(t->a.qp, &wr, &bad)) {
		printf("# A: ibv_post_send: %s\n", strerror(errno));
		return false;
	}
	if (eroce_side_poll(&t->a, WAIT_SECS, &wc) || wc.status) {
		printf("# A: no good completion for message %u\n", seed);
		return false;
	}
	return true;
}

/* the receive completion on B's CQ of message @seed, @len bytes, on @q */
static bool received(struct mcast_test *t, const struct ibv_wc *wc, int q,
		     uint32_t seed, uint32_t len)
{
	uint32_t n = wc->wr_id & 0xffff;
	const uint8_t *p = b_slot(t, q, n);
	uint8_t want[SLOT], hops;
	bool ok;

	ok = wc->status == IBV_WC_SUCCESS && wc->opcode == IBV_WC_RECV &&
	     wc->qp_num == t->bq[q]->qp_num &&
	     wc->src_qp == t->a.qp->qp_num && (wc->wc_flags & IBV_WC_GRH) &&
	     wc->byte_len == GRH_BYTES + len &&
	     /* the RoCE packet type, as ConnectX puts it in a UD sl */
	     wc->sl == (0x8 | (t->ipv4 ? 2 : 1));
	/* the GRH's destination: IPv4's daddr right-aligned, or the GID */
	if (t->ipv4)
		ok = ok && !memcmp(p + GRH_BYTES - 4, &t->group.raw[12], 4);
	else
		ok = ok && !memcmp(p + 24, t->group.raw, 16);
	eroce_pattern(want, len, seed);
	ok = ok && !memcmp(p + GRH_BYTES, want, len);
	/* IPv4: its header in the GRH's last 20 bytes; IPv6: the GRH's */
	hops = t->ipv4 ? p[GRH_BYTES - 20 + 8] : p[7];
	if (hops != HOP_LIMIT) {
		if (!t->hops_wrong++)
			printf("# B%d: message %u: hop limit %u, not %u\n",
			       q + 1, seed, hops, HOP_LIMIT);
	}
	if (!ok)
		printf("# B%d: message %u: status %s qp %u src_qp %u flags %#x sl %#x len %u (want %u)\n",
		       q + 1, seed, ibv_wc_status_str(wc->status), wc->qp_num,
		       wc->src_qp, wc->wc_flags, wc->sl, wc->byte_len,
		       GRH_BYTES + len);
	return ok;
}

/*
 * Send @count messages (1 byte up to the MTU) and check that each B QP
 * in @mask received every one, once and in order, and the others none.
 */
static bool deliver(struct mcast_test *t, int count, unsigned int mask)
{
	uint32_t first = t->seq, got[NB] = {}, i, len[64];
	uint64_t rcvd = eroce_counter(&t->b, "mcast_packets_rcvd");
	int q, want = 0, seen = 0;
	struct ibv_wc wc;
	bool ok = true;

	for (q = 0; q < NB; q++)
		want += mask & (1u << q) ? count : 0;
	for (i = 0; i < (uint32_t)count; i++) {
		len[i] = i + 1 == (uint32_t)count ? t->mtu :
			 1 + i * (t->mtu / count);
		if (!send_group(t, len[i], MCAST_QPN, QKEY))
			return false;
	}
	if (!eroce_counter_reaches(&t->b, "mcast_packets_rcvd", rcvd + count))
		printf("# B's mcast_packets_rcvd moved %" PRIu64 ", not %d\n",
		       eroce_counter(&t->b, "mcast_packets_rcvd") - rcvd,
		       count);
	while (seen < want && !eroce_side_poll(&t->b, WAIT_SECS, &wc)) {
		q = wc.wr_id >> 16;
		seen++;
		if (q >= NB || !(mask & (1u << q)) || got[q] >= (uint32_t)count) {
			printf("# a completion on B%d, which was not to get one\n",
			       q + 1);
			ok = false;
			continue;
		}
		ok = received(t, &wc, q, first + got[q], len[got[q]]) && ok;
		got[q]++;
		post_recv(t, q);
	}
	/* all copies are made in one pass: any extra one is queued now */
	if (!ibv_poll_cq(t->b.cq, 1, &wc)) {
		ok = ok && seen == want;
	} else {
		printf("# an extra completion on B%d\n",
		       (int)(wc.wr_id >> 16) + 1);
		ok = false;
	}
	for (q = 0; q < NB; q++)
		printf("# B%d received %u of %d\n", q + 1, got[q], count);
	return ok;
}

/* a SEND to @qpn with @qkey moved counter @name by one, and B got nothing */
static bool dropped(struct mcast_test *t, const char *name, uint32_t qpn,
		    uint32_t qkey)
{
	uint64_t before = eroce_counter(&t->b, name);
	struct ibv_wc wc;

	return send_group(t, 64, qpn, qkey) &&
	       eroce_counter_reaches(&t->b, name, before + 1) &&
	       !ibv_poll_cq(t->b.cq, 1, &wc);
}

/* does B's netdev list the group (`ip maddr`)? */
static bool member(struct mcast_test *t)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "ip -n '%s' maddr show dev '%s' | grep -qw '%s'", t->netns_b,
		 t->ifname_b, t->group_str);
	return system(cmd) == 0;
}

/* B's netdev: the device's "parent" in sysfs */
static void read_parent(struct mcast_test *t)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/parent",
		 t->b.name);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%16s", t->ifname_b) != 1)
		eroce_die("%s: cannot read", path);
	fclose(f);
}

/* a UDP socket of namespace @netns: entered for the socket() call only */
static int socket_in(const char *netns, int family)
{
	char path[256];
	int self, ns, fd = -1;

	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	self = open("/proc/self/ns/net", O_RDONLY);
	ns = open(path, O_RDONLY);
	if (self >= 0 && ns >= 0 && !setns(ns, CLONE_NEWNET)) {
		fd = socket(family, SOCK_DGRAM, 0);
		if (setns(self, CLONE_NEWNET))
			eroce_die("back to the initial namespace: %s",
				  strerror(errno));
	}
	if (ns >= 0)
		close(ns);
	if (self >= 0)
		close(self);
	return fd;
}

/*
 * A UDP socket in NETNS_B that joined the group on B's netdev, so that
 * the IP layer takes the group's packets with no QP attached; -1 on
 * failure.
 */
static int ip_join(struct mcast_test *t)
{
	char path[64];
	unsigned int ifindex;
	FILE *f;
	int fd, err;

	/* B's netdev lives in NETNS_B: its index as that namespace's sysfs
	 * would give it is the one `ip -n` prints
	 */
	snprintf(path, sizeof(path), "ip -n '%s' -o link show dev '%s'",
		 t->netns_b, t->ifname_b);
	f = popen(path, "r");
	if (!f || fscanf(f, "%u:", &ifindex) != 1) {
		printf("# %s: no index\n", path);
		if (f)
			pclose(f);
		return -1;
	}
	pclose(f);
	fd = socket_in(t->netns_b, t->ipv4 ? AF_INET : AF_INET6);
	if (fd < 0) {
		printf("# a socket in %s: %s\n", t->netns_b, strerror(errno));
		return -1;
	}
	if (t->ipv4) {
		struct ip_mreqn m = { .imr_ifindex = ifindex };

		memcpy(&m.imr_multiaddr, &t->group.raw[12], 4);
		err = setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m,
				 sizeof(m));
	} else {
		struct ipv6_mreq m = { .ipv6mr_interface = ifindex };

		memcpy(&m.ipv6mr_multiaddr, t->group.raw, 16);
		err = setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &m,
				 sizeof(m));
	}
	if (err) {
		printf("# joining the group on %s: %s\n", t->ifname_b,
		       strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void setup(struct mcast_test *t)
{
	struct ibv_ah_attr ah = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = t->group, .sgid_index = t->a.gid_index,
			 .hop_limit = HOP_LIMIT },
	};
	int q;

	t->a.qp = eroce_side_qp(&t->a, IBV_QPT_UD, NULL, DEPTH);
	eroce_qp_to_init(&t->a, t->a.qp, QKEY);
	eroce_qp_to_rtr(&t->a, t->a.qp, NULL, 0);
	eroce_qp_to_rts(&t->a, t->a.qp, 0, 0);
	for (q = 0; q < NB; q++) {
		t->bq[q] = eroce_side_qp(&t->b, IBV_QPT_UD, NULL, DEPTH);
		eroce_qp_to_init(&t->b, t->bq[q], QKEY);
		eroce_qp_to_rtr(&t->b, t->bq[q], NULL, 0);
		eroce_qp_to_rts(&t->b, t->bq[q], 0, 0);
		while (t->posted[q] < DEPTH)
			post_recv(t, q);
	}
	t->ah = ibv_create_ah(t->a.pd, &ah);
	if (!t->ah)
		eroce_die("ibv_create_ah to the group: %s", strerror(errno));
	t->mtu = 128u << (t->a.mtu < t->b.mtu ? t->a.mtu : t->b.mtu);
}

/*
 * QP L on A's own device attached to the group gets A's SENDs to it (B1
 * and B2, attached, still get each): @count of them, byte for byte
 */
static bool loopback(struct mcast_test *t, int count)
{
	uint32_t first = t->seq, i, len, got = 0;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	bool ok = true;
	int err;

	qp = eroce_side_qp(&t->l, IBV_QPT_UD, NULL, DEPTH);
	eroce_qp_to_init(&t->l, qp, QKEY);
	eroce_qp_to_rtr(&t->l, qp, NULL, 0);
	eroce_qp_to_rts(&t->l, qp, 0, 0);
	for (i = 0; i < (uint32_t)count; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)(t->l.buf + i * SLOT),
			.length = SLOT, .lkey = t->l.mr->lkey,
		};
		struct ibv_recv_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
		}, *bad;

		if (ibv_post_recv(qp, &wr, &bad))
			eroce_die("ibv_post_recv on L: %s", strerror(errno));
	}
	err = ibv_attach_mcast(qp, &t->group, 0);
	if (err) {
		printf("# L: ibv_attach_mcast: %s\n", strerror(err));
		ok = false;
	}
	ok = ok && deliver(t, count, 0x3);
	while (ok && got < (uint32_t)count &&
	       !eroce_side_poll(&t->l, WAIT_SECS, &wc)) {
		uint8_t want[SLOT];

		len = 1 + got * (t->mtu / count);
		if (got + 1 == (uint32_t)count)
			len = t->mtu;
		eroce_pattern(want, len, first + got);
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != got ||
		    wc.src_qp != t->a.qp->qp_num ||
		    wc.byte_len != GRH_BYTES + len ||
		    memcmp(t->l.buf + got * SLOT + GRH_BYTES, want, len)) {
			printf("# L: message %u: status %s wr_id %" PRIu64 " src_qp %u len %u (want %u)\n",
			       first + got, ibv_wc_status_str(wc.status),
			       wc.wr_id, wc.src_qp, wc.byte_len,
			       GRH_BYTES + len);
			ok = false;
		}
		got++;
	}
	if (ibv_poll_cq(t->l.cq, 1, &wc)) {
		printf("# L: an extra completion\n");
		ok = false;
	}
	printf("# L received %u of %d\n", got, count);
	err = ibv_detach_mcast(qp, &t->group, 0);
	if (err) {
		printf("# L: ibv_detach_mcast: %s\n", strerror(err));
		ok = false;
	}
	ibv_destroy_qp(qp);
	return ok && got == (uint32_t)count;
}

static void run(struct mcast_test *t)
{
	struct ibv_qp *rc;
	int e1, e2, e3, fd;
	bool ok;

	e1 = ibv_attach_mcast(t->bq[0], &t->group, 0);
	e2 = ibv_attach_mcast(t->bq[1], &t->group, 0);
	e3 = ibv_attach_mcast(t->bq[0], &t->group, 0);
	eroce_result("attach", !e1 && !e2 && !e3, "B1 %d, B2 %d, B1 again %d",
		     e1, e2, e3);
	eroce_result("attach_joins_netdev", member(t), "%s lists %s",
		     t->ifname_b, t->group_str);

	e1 = ibv_attach_mcast(t->bq[2], &t->b.gid, 0);
	rc = eroce_side_qp(&t->b, IBV_QPT_RC, NULL, 1);
	e2 = ibv_attach_mcast(rc, &t->group, 0);
	e3 = ibv_detach_mcast(t->bq[2], &t->group, 0);
	eroce_result("refused", e1 == EINVAL && e2 == EINVAL && e3 == EINVAL,
		     "unicast GID %d, RC QP %d, detach unattached %d (EINVAL %d)",
		     e1, e2, e3, EINVAL);
	ibv_destroy_qp(rc);

	eroce_result("deliver", deliver(t, 8, 0x3),
		     "B1 and B2 each receive all 8, B3 none");
	eroce_result("hop_limit", !t->hops_wrong,
		     "%u of 16 receives with another hop limit than %u",
		     t->hops_wrong, HOP_LIMIT);
	eroce_result("loopback", loopback(t, 4),
		     "L on A's device receives A's 4 SENDs");

	e1 = ibv_detach_mcast(t->bq[1], &t->group, 0);
	ok = !e1 && deliver(t, 4, 0x1);
	eroce_result("detach_one", ok, "detach %d; B1 alone receives", e1);

	eroce_result("bad_qkey",
		     dropped(t, "rx_drop_bad_qkey", MCAST_QPN, QKEY + 1),
		     "dropped, counted");
	eroce_result("bad_qpn",
		     dropped(t, "rx_drop_mcast_bad_qpn", t->bq[0]->qp_num, QKEY),
		     "dropped, counted");

	e1 = ibv_detach_mcast(t->bq[0], &t->group, 0);
	ok = !e1 && !member(t);
	fd = ip_join(t);
	ok = ok && fd >= 0 && dropped(t, "rx_drop_mcast_no_group", MCAST_QPN,
				      QKEY);
	if (fd >= 0)
		close(fd);
	eroce_result("detach_all", ok,
		     "detach %d; the netdev left; a SEND finds no group", e1);
}

int main(int argc, char **argv)
{
	struct mcast_test t = {};
	struct in6_addr a6;
	struct in_addr a4;

	if (argc != 7 && argc != 8) {
		fprintf(stderr, "usage: eroce_mcast DEV_A GID_A DEV_B GID_B GROUP NETNS_B [NETDEV_B]\n");
		return 2;
	}
	t.a.name = argv[1];
	t.a.gid_index = atoi(argv[2]);
	t.b.name = argv[3];
	t.b.gid_index = atoi(argv[4]);
	if (inet_pton(AF_INET, argv[5], &a4) == 1) {
		t.ipv4 = true;
		t.group.raw[10] = 0xff;
		t.group.raw[11] = 0xff;
		memcpy(&t.group.raw[12], &a4, 4);
	} else if (inet_pton(AF_INET6, argv[5], &a6) == 1) {
		memcpy(t.group.raw, &a6, 16);
	} else {
		eroce_die("%s: not an IP address", argv[5]);
	}
	t.group_str = argv[5];
	t.netns_b = argv[6];

	eroce_side_open(&t.a, false, BUF_LEN, 4 * DEPTH);
	eroce_side_open(&t.b, false, BUF_LEN, 4 * NB * DEPTH);
	t.l.name = t.a.name;
	t.l.gid_index = t.a.gid_index;
	eroce_side_open(&t.l, false, BUF_LEN, DEPTH);
	if (argc == 8)
		snprintf(t.ifname_b, sizeof(t.ifname_b), "%s", argv[7]);
	else
		read_parent(&t);
	setup(&t);
	run(&t);
	return eroce_results_status();
}
