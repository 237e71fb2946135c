// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_wirereq.c: one RC QP on an eroce device whose peer is a script
 * (selftests/tools/eroce_wire_peer.py forges the responder's packets), so
 * that a test decides exactly which responses, ACKs and NAKs the
 * requester sees, and in which order.
 *
 *   eroce_wirereq -d DEV -g GID_INDEX
 *
 * prints "ready QPN GID" (the GID as 32 hex digits), then reads one
 * command per line from stdin and answers each with one line:
 *
 *   connect DQPN DGID PSN MTU TIMEOUT
 *                                RTR and RTS towards DQPN at DGID (32 hex
 *                                digits), both directions starting at PSN,
 *                                path MTU in bytes, the local ACK timeout
 *                                (4.096 us << TIMEOUT)            -> ok
 *   send WRID LEN SEED           a SEND of LEN bytes of pattern SEED from
 *                                the buffer's start               -> ok
 *   read WRID OFF LEN VA RKEY    an RDMA READ of LEN bytes at VA into the
 *                                buffer at OFF                    -> ok
 *   fadd WRID OFF VA RKEY ADD    a FETCH_AND_ADD; the original value lands
 *                                at OFF                           -> ok
 *   post                         the entries given since the last post, in
 *                                one ibv_post_send() (one doorbell: the
 *                                requester sees them all at once) -> ok,
 *                                or "error ERRNO" if it failed
 *   poll SECS                    the next completion: "wc WRID STATUS
 *                                OPCODE BYTE_LEN" (ibv_wc_status_str
 *                                with '_' for ' '), "none" after SECS,
 *                                or "error N" when ibv_poll_cq returned
 *                                -N
 *   check OFF LEN SEED           the buffer at OFF holds LEN bytes of
 *                                pattern SEED: "ok", or "bad AT" (the
 *                                first offset that differs)
 *   u64 OFF                      the 8 bytes at OFF, host order   -> value
 *   state                        the QP's state (ibv_qp_state number)
 *
 * A failed verb or a malformed command exits 2 with a message on stderr.
 * Single-threaded.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool_pair.h"
#include "tool_util.h"

#define WIREREQ_BUF	(1U << 20)

static struct eroce_side side;

static void reply(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void reply(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static bool parse_gid(const char *hex, union ibv_gid *gid)
{
	unsigned int i, b;

	if (strlen(hex) != 2 * sizeof(gid->raw))
		return false;
	for (i = 0; i < sizeof(gid->raw); i++) {
		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return false;
		gid->raw[i] = b;
	}
	return true;
}

static enum ibv_mtu mtu_enum(unsigned int bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	}
	eroce_die("no path MTU of %u bytes", bytes);
}

static void connect_qp(uint32_t dqpn, const union ibv_gid *dgid,
		       uint32_t psn, unsigned int mtu, unsigned int timeout)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = mtu_enum(mtu),
		.dest_qp_num = dqpn,
		.rq_psn = psn,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 1,
		.ah_attr = {
			.is_global = 1,
			.port_num = 1,
			.grh = {
				.dgid = *dgid,
				.sgid_index = side.gid_index,
				.hop_limit = 64,
			},
		},
	};

	eroce_qp_to_init(&side, side.qp, 0);
	if (ibv_modify_qp(side.qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		eroce_die("to RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = psn;
	a.max_rd_atomic = 4;
	if (ibv_modify_qp(side.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		eroce_die("to RTS: %s", strerror(errno));
}

/* the entries given since the last post, chained */
#define WIREREQ_CHAIN	8
static struct ibv_send_wr chain[WIREREQ_CHAIN];
static struct ibv_sge chain_sge[WIREREQ_CHAIN];
static unsigned int chained;

/* the next entry of the chain: @opcode with one SGE at the buffer's @off */
static struct ibv_send_wr *chain_add(enum ibv_wr_opcode opcode,
				     uint64_t wrid, uint32_t off, uint32_t len)
{
	struct ibv_send_wr *wr = &chain[chained];
	struct ibv_sge *sge = &chain_sge[chained];

	if (chained == WIREREQ_CHAIN || off > WIREREQ_BUF)
		eroce_die("no room for entry %" PRIu64, wrid);
	*sge = (struct ibv_sge){
		.addr = (uintptr_t)side.buf + off,
		.length = len,
		.lkey = side.mr->lkey,
	};
	*wr = (struct ibv_send_wr){
		.wr_id = wrid,
		.sg_list = sge,
		.num_sge = 1,
		.opcode = opcode,
		.send_flags = IBV_SEND_SIGNALED,
	};
	if (chained)
		chain[chained - 1].next = wr;
	chained++;
	return wr;
}

static void cmd_post(void)
{
	struct ibv_send_wr *bad;
	int err = 0;

	if (chained)
		err = ibv_post_send(side.qp, chain, &bad);
	chained = 0;
	if (err)
		reply("error %d", err);
	else
		reply("ok");
}

static void cmd_poll(double secs)
{
	double end = eroce_now() + secs;
	struct ibv_wc wc;
	char status[64], *p;
	int n;

	while ((n = ibv_poll_cq(side.cq, 1, &wc)) == 0 && eroce_now() < end)
		usleep(200);
	if (n < 0) {
		reply("error %d", -n);
		return;
	}
	if (!n) {
		reply("none");
		return;
	}
	snprintf(status, sizeof(status), "%s", ibv_wc_status_str(wc.status));
	for (p = status; *p; p++)
		if (*p == ' ')
			*p = '_';
	reply("wc %" PRIu64 " %s %d %u", wc.wr_id, status, wc.opcode,
	      wc.byte_len);
}

static void cmd_check(uint32_t off, uint32_t len, uint32_t seed)
{
	uint8_t *want;
	uint32_t i;

	if ((uint64_t)off + len > WIREREQ_BUF) {
		reply("bad %u", off);
		return;
	}
	want = malloc(len ? len : 1);
	if (!want)
		eroce_die("out of memory");
	eroce_pattern(want, len, seed);
	for (i = 0; i < len && side.buf[off + i] == want[i]; i++)
		;
	if (i == len)
		reply("ok");
	else
		reply("bad %u", i);
	free(want);
}

/* one command line; false at end of input */
static bool command(const char *line)
{
	struct ibv_send_wr *wr;
	char gidhex[64];
	uint64_t wrid, va, add;
	uint32_t a, b, c, d, rkey;
	union ibv_gid gid;
	double secs;

	if (sscanf(line, "connect %u %63s %u %u %u", &a, gidhex, &b, &c,
		   &d) == 5) {
		if (!parse_gid(gidhex, &gid))
			eroce_die("bad GID %s", gidhex);
		connect_qp(a, &gid, b, c, d);
		reply("ok");
	} else if (sscanf(line, "send %" SCNu64 " %u %u", &wrid, &a, &b) == 3) {
		if (a > WIREREQ_BUF)
			eroce_die("send of %u bytes", a);
		eroce_pattern(side.buf, a, b);
		chain_add(IBV_WR_SEND, wrid, 0, a);
		reply("ok");
	} else if (sscanf(line, "read %" SCNu64 " %u %u %" SCNx64 " %x", &wrid,
			  &a, &b, &va, &rkey) == 5) {
		wr = chain_add(IBV_WR_RDMA_READ, wrid, a, b);
		wr->wr.rdma.remote_addr = va;
		wr->wr.rdma.rkey = rkey;
		reply("ok");
	} else if (sscanf(line, "fadd %" SCNu64 " %u %" SCNx64 " %x %" SCNu64,
			  &wrid, &a, &va, &rkey, &add) == 5) {
		wr = chain_add(IBV_WR_ATOMIC_FETCH_AND_ADD, wrid, a, 8);
		wr->wr.atomic.remote_addr = va;
		wr->wr.atomic.rkey = rkey;
		wr->wr.atomic.compare_add = add;
		reply("ok");
	} else if (!strncmp(line, "post", 4)) {
		cmd_post();
	} else if (sscanf(line, "poll %lf", &secs) == 1) {
		cmd_poll(secs);
	} else if (sscanf(line, "check %u %u %u", &a, &b, &c) == 3) {
		cmd_check(a, b, c);
	} else if (sscanf(line, "u64 %u", &a) == 1 && a <= WIREREQ_BUF - 8) {
		memcpy(&wrid, side.buf + a, sizeof(wrid));
		reply("%" PRIu64, wrid);
	} else if (!strncmp(line, "state", 5)) {
		reply("%d", eroce_qp_state(side.qp));
	} else {
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	char line[512];
	unsigned int i;
	int opt;

	while ((opt = getopt(argc, argv, "d:g:")) != -1) {
		switch (opt) {
		case 'd': side.name = optarg; break;
		case 'g': side.gid_index = atoi(optarg); break;
		default: side.name = NULL; optind = argc; break;
		}
	}
	if (!side.name) {
		fprintf(stderr, "usage: %s -d DEV -g GID_INDEX\n", argv[0]);
		return 2;
	}
	eroce_side_open(&side, false, WIREREQ_BUF, 64);
	side.qp = eroce_side_qp(&side, IBV_QPT_RC, NULL, 16);
	printf("ready %u ", side.qp->qp_num);
	for (i = 0; i < sizeof(side.gid.raw); i++)
		printf("%02x", side.gid.raw[i]);
	reply("%s", "");
	while (fgets(line, sizeof(line), stdin))
		if (!command(line))
			eroce_die("unknown command: %s", line);
	return 0;
}
