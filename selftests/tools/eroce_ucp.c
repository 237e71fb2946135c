// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_ucp: data moved through UCX's UCP layer between two processes,
 * every byte and value checked.  UCX picks its transports and devices
 * from the environment (UCX_TLS, UCX_NET_DEVICES), as for ucx_perftest.
 *
 *   server:  eroce_ucp [-p PORT] [-t SECS]
 *   client:  eroce_ucp [-p PORT] [-t SECS] [-o tag,rma,amo] SERVER_ADDR
 *
 * The two exchange their worker addresses, and the server the address and
 * packed rkey of a registered REGION-byte buffer, over a TCP connection
 * that also carries the handshakes below.
 *
 *   tag   the client sends one message of each size in tag_sizes (tag =
 *         the size's index), each a pattern of its own; the server
 *         receives it into a buffer of MAX_MSG bytes, checks its tag,
 *         length and bytes, and sends the pattern of the next seed back,
 *         which the client checks the same way
 *   rma   the client puts a pattern into the whole region (ucp_put_nbx,
 *         then ucp_ep_flush_nbx), the server checks it; the server fills
 *         the region with another, the client reads it back
 *         (ucp_get_nbx) in pieces of every size in tag_sizes and checks
 *         each
 *   amo   on a 64-bit word of the region, set by the server: NADD
 *         fetch-and-adds, then compare-and-swaps that must hit and one
 *         that must miss; every fetched value checked against the
 *         client's model, and the word's final value by the server
 *
 * The client prints "result: tag|rma|amo ok|FAIL DETAILS" (lib.sh's
 * ktap_results); both exit 0 when all held, 1 on a wrong byte or value,
 * 2 on an error, 3 on the timeout (-t, default 120 s).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include "tool_util.h"

#define REGION		(1u << 20)
#define MAX_MSG		REGION
#define NADD		64
#define NCAS		16
#define WORD_START	0x1234567800000000ull

static const uint32_t tag_sizes[] = {
	1, 255, 1023, 1024, 1025, 4096, 8193, 65536, 262144 + 7, REGION,
};

#define NSIZES	(sizeof(tag_sizes) / sizeof(tag_sizes[0]))

static ucp_context_h ctx;
static ucp_worker_h worker;
static ucp_ep_h ep;
static int sock = -1;

static void on_alarm(int sig)
{
	static const char m[] = "eroce_ucp: TIMEOUT\n";

	(void)sig;
	if (write(STDOUT_FILENO, m, sizeof(m) - 1) < 0)
		_exit(3);
	_exit(3);
}

static void pattern(uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1, i;

	for (i = 0; i < len; i++) {
		x = x * 1103515245u + 12345;
		p[i] = (uint8_t)(x >> 16);
	}
}

/* the first byte of @p's @len that is not pattern @seed's, or -1 */
static long pattern_bad(const uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1, i;

	for (i = 0; i < len; i++) {
		x = x * 1103515245u + 12345;
		if (p[i] != (uint8_t)(x >> 16))
			return i;
	}
	return -1;
}

/* ---- the TCP side channel, read while the worker progresses ---------------- */

static void sock_write(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(sock, p, len);

		if (n <= 0)
			eroce_die("TCP write: %s", strerror(errno));
		p += n;
		len -= n;
	}
}

static void sock_read(void *buf, size_t len)
{
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	uint8_t *p = buf;

	while (len) {
		ssize_t n;

		ucp_worker_progress(worker);
		if (poll(&pfd, 1, 0) <= 0)
			continue;
		n = read(sock, p, len);
		if (n <= 0)
			eroce_die("TCP read: %s", n ? strerror(errno) : "peer closed");
		p += n;
		len -= n;
	}
}

static void sock_u64(uint64_t *v, bool send)
{
	if (send)
		sock_write(v, sizeof(*v));
	else
		sock_read(v, sizeof(*v));
}

static void tcp_open(const char *server, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	int one = 1, lfd;

	if (getaddrinfo(server, port, &hints, &ai))
		eroce_die("getaddrinfo %s:%s", server ? server : "*", port);
	if (server) {
		for (int i = 0; i < 100; i++) {
			sock = socket(ai->ai_family, SOCK_STREAM, 0);
			if (sock >= 0 && !connect(sock, ai->ai_addr, ai->ai_addrlen))
				break;
			close(sock);
			sock = -1;
			usleep(100000);
		}
		if (sock < 0)
			eroce_die("connect %s:%s: %s", server, port, strerror(errno));
	} else {
		struct sockaddr_in sin = {
			.sin_family = AF_INET,
			.sin_port = htons(atoi(port)),
		};

		lfd = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) ||
		    listen(lfd, 1))
			eroce_die("listen on %s: %s", port, strerror(errno));
		printf("server: listening on %s\n", port);
		sock = accept(lfd, NULL, NULL);
		if (sock < 0)
			eroce_die("accept: %s", strerror(errno));
		close(lfd);
	}
	freeaddrinfo(ai);
}

/* ---- UCP ------------------------------------------------------------------ */

/* wait for @req; its status */
static ucs_status_t wait_req(ucs_status_ptr_t req)
{
	ucs_status_t st;

	if (!UCS_PTR_IS_PTR(req))
		return UCS_PTR_STATUS(req);
	while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS)
		ucp_worker_progress(worker);
	ucp_request_free(req);
	return st;
}

static void check_st(ucs_status_t st, const char *what)
{
	if (st != UCS_OK)
		eroce_die("%s: %s", what, ucs_status_string(st));
}

/* receive a tagged message of tag @tag into @buf; its length */
static size_t tag_recv(void *buf, size_t cap, ucp_tag_t tag)
{
	ucp_tag_recv_info_t info = {};
	ucp_request_param_t prm = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_RECV_INFO,
		.recv_info.tag_info = &info,
	};
	ucs_status_ptr_t req = ucp_tag_recv_nbx(worker, buf, cap, tag,
						(ucp_tag_t)-1, &prm);
	ucs_status_t st;

	if (UCS_PTR_IS_PTR(req)) {
		while ((st = ucp_tag_recv_request_test(req, &info)) ==
		       UCS_INPROGRESS)
			ucp_worker_progress(worker);
		ucp_request_free(req);
	} else {
		st = UCS_PTR_STATUS(req);
	}
	check_st(st, "ucp_tag_recv_nbx");
	if (info.sender_tag != tag)
		eroce_die("tag %" PRIx64 " received for %" PRIx64, info.sender_tag, tag);
	return info.length;
}

static void tag_send(const void *buf, size_t len, ucp_tag_t tag)
{
	ucp_request_param_t prm = {};

	check_st(wait_req(ucp_tag_send_nbx(ep, buf, len, tag, &prm)),
		 "ucp_tag_send_nbx");
}

static void flush_ep(void)
{
	ucp_request_param_t prm = {};

	check_st(wait_req(ucp_ep_flush_nbx(ep, &prm)), "ucp_ep_flush_nbx");
}

/* ---- the phases ------------------------------------------------------------- */

/*
 * tag: message i goes out with pattern 100 + 2i and comes back with
 * 101 + 2i; each end checks what it receives, the server tells the
 * client how many were bad
 */
static void tag_phase(bool client, uint8_t *buf)
{
	uint64_t srv_bad = 0;
	uint32_t i, bad = 0;
	char first[96] = "";

	for (i = 0; i < NSIZES; i++) {
		uint32_t len = tag_sizes[i];
		size_t got;
		long b = -1;

		if (client) {
			pattern(buf, len, 100 + 2 * i);
			tag_send(buf, len, i);
		}
		memset(buf, 0xa5, MAX_MSG);
		got = tag_recv(buf, MAX_MSG, i);
		if (got == len)
			b = pattern_bad(buf, len, 100 + 2 * i + client);
		if ((got != len || b >= 0) && !bad++)
			snprintf(first, sizeof(first),
				 "; first bad: size %u, got %zu bytes, byte %ld",
				 len, got, b);
		if (!client) {
			pattern(buf, len, 101 + 2 * i);
			tag_send(buf, len, i);
		}
	}
	if (!client) {
		srv_bad = bad;
		sock_u64(&srv_bad, true);
		if (bad)
			printf("server: tag: %u bad messages%s\n", bad, first);
		return;
	}
	sock_u64(&srv_bad, false);
	eroce_result("tag", !bad && !srv_bad,
	       "%zu messages of 1 to %u bytes each way: %" PRIu64 " bad at the server, %u bad replies%s",
	       NSIZES, MAX_MSG, srv_bad, bad, first);
}

/* rma: a put checked by the server, gets of the server's pattern */
static void rma_phase(bool client, uint8_t *buf, uint8_t *region,
		      uint64_t raddr, ucp_rkey_h rkey)
{
	ucp_request_param_t prm = {};
	uint64_t v = 0, off;
	uint32_t i, gets_bad = 0;
	long b;

	if (!client) {
		memset(region, 0xa5, REGION);
		sock_u64(&v, true);			/* ready */
		sock_u64(&v, false);			/* put done */
		b = pattern_bad(region, REGION, 7);
		v = b < 0 ? 0 : (uint64_t)b + 1;
		pattern(region, REGION, 8);
		sock_u64(&v, true);			/* verdict, get ready */
		sock_u64(&v, false);			/* gets done */
		return;
	}
	sock_u64(&v, false);
	pattern(buf, REGION, 7);
	check_st(wait_req(ucp_put_nbx(ep, buf, REGION, raddr, rkey, &prm)),
		 "ucp_put_nbx");
	flush_ep();
	sock_u64(&v, true);
	sock_u64(&v, false);
	eroce_result("rma_put", !v, "%u bytes put, %s", REGION,
	       v ? "the server found a bad byte" : "every byte checked by the server");
	if (v)
		printf("# put: first bad byte at %" PRIu64 "\n", v - 1);

	/* gets of every size, back to back, into a poisoned buffer */
	for (i = 0, off = 0; i < NSIZES; i++) {
		uint32_t len = tag_sizes[i];
		uint8_t *want = malloc(REGION);

		if (off + len > REGION)
			off = 0;
		memset(buf, 0xa5, len + 1);
		check_st(wait_req(ucp_get_nbx(ep, buf, len, raddr + off, rkey,
					      &prm)), "ucp_get_nbx");
		if (!want)
			eroce_die("out of memory");
		pattern(want, REGION, 8);
		if (memcmp(buf, want + off, len) || (len < REGION && buf[len] != 0xa5)) {
			if (!gets_bad++)
				printf("# get of %u bytes at %" PRIu64 " differs\n",
				       len, off);
		}
		free(want);
		off += len;
	}
	sock_u64(&v, true);
	eroce_result("rma_get", !gets_bad, "%zu gets of 1 to %u bytes checked, %u bad",
	       NSIZES, REGION, gets_bad);
}

static uint64_t amo(ucp_atomic_op_t op, uint64_t value, uint64_t *reply,
		    uint64_t raddr, ucp_rkey_h rkey)
{
	ucp_request_param_t prm = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE |
				UCP_OP_ATTR_FIELD_REPLY_BUFFER,
		.datatype = ucp_dt_make_contig(8),
		.reply_buffer = reply,
	};

	check_st(wait_req(ucp_atomic_op_nbx(ep, op, &value, 1, raddr, rkey,
					    &prm)), "ucp_atomic_op_nbx");
	return *reply;
}

/* amo: fetch-adds and compare-swaps on the word at the region's start */
static void amo_phase(bool client, uint8_t *region, uint64_t raddr,
		      ucp_rkey_h rkey)
{
	uint64_t v = 0, model = WORD_START, got, reply;
	uint32_t i, bad = 0;

	if (!client) {
		memcpy(region, &model, 8);
		sock_u64(&v, true);			/* ready */
		sock_u64(&v, false);			/* the client's model */
		memcpy(&got, region, 8);
		v = got == v;
		sock_u64(&v, true);
		if (!v)
			printf("server: amo: the word is %#" PRIx64 "\n", got);
		return;
	}
	sock_u64(&v, false);
	for (i = 0; i < NADD; i++) {
		uint64_t add = 0x10001ull * (i + 1);

		reply = 0;
		got = amo(UCP_ATOMIC_OP_ADD, add, &reply, raddr, rkey);
		bad += got != model;
		model += add;
	}
	for (i = 0; i < NCAS; i++) {
		uint64_t swap = model ^ (0x5aull << (i * 4));

		/* compare with the buffer, swap in the reply buffer's value */
		reply = swap;
		got = amo(UCP_ATOMIC_OP_CSWAP,
			  i == NCAS - 1 ? model + 1 : model,	/* the last misses */
			  &reply, raddr, rkey);
		bad += got != model;
		if (i != NCAS - 1)
			model = swap;
	}
	sock_u64(&model, true);
	sock_u64(&v, false);
	eroce_result("amo", !bad && v == 1,
	       "%d fetch-adds and %d compare-swaps (the last one missing): %u wrong fetched values, final word %s",
	       NADD, NCAS, bad, v == 1 ? "as modelled" : "wrong");
}

/* ---- main ---------------------------------------------------------------------- */

static void ucp_open(void)
{
	ucp_params_t p = {
		.field_mask = UCP_PARAM_FIELD_FEATURES,
		.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA |
			    UCP_FEATURE_AMO64,
	};
	ucp_worker_params_t wp = {
		.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
		.thread_mode = UCS_THREAD_MODE_SINGLE,
	};
	ucp_config_t *cfg;

	check_st(ucp_config_read(NULL, NULL, &cfg), "ucp_config_read");
	check_st(ucp_init(&p, cfg, &ctx), "ucp_init");
	ucp_config_release(cfg);
	check_st(ucp_worker_create(ctx, &wp, &worker), "ucp_worker_create");
}

/* exchange worker addresses, connect; the server sends its region's key */
static void connect_ep(void)
{
	ucp_address_t *addr;
	ucp_ep_params_t ep_p = {
		.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
	};
	uint64_t len, peer_len;
	void *peer;

	check_st(ucp_worker_get_address(worker, &addr, &len),
		 "ucp_worker_get_address");
	sock_write(&len, sizeof(len));
	sock_write(addr, len);
	sock_read(&peer_len, sizeof(peer_len));
	peer = malloc(peer_len);
	if (!peer)
		eroce_die("out of memory");
	sock_read(peer, peer_len);
	ep_p.address = peer;
	check_st(ucp_ep_create(worker, &ep_p, &ep), "ucp_ep_create");
	ucp_worker_release_address(worker, addr);
	free(peer);
}

int main(int argc, char **argv)
{
	const char *port = "13400", *server = NULL, *ops = "tag,rma,amo";
	uint8_t *buf, *region = NULL;
	ucp_mem_h memh = NULL;
	ucp_rkey_h rkey = NULL;
	uint64_t raddr = 0, n, v = 0;
	int c, secs = 120;
	void *kbuf;
	size_t klen;

	while ((c = getopt(argc, argv, "p:t:o:")) != -1) {
		switch (c) {
		case 'p':
			port = optarg;
			break;
		case 't':
			secs = atoi(optarg);
			break;
		case 'o':
			ops = optarg;
			break;
		default:
			fprintf(stderr, "usage: eroce_ucp [-p PORT] [-t SECS] [-o tag,rma,amo] [SERVER_ADDR]\n");
			return 2;
		}
	}
	if (optind < argc)
		server = argv[optind];
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	alarm(secs);

	ucp_open();
	tcp_open(server, port);
	connect_ep();
	buf = aligned_alloc(4096, MAX_MSG);
	if (!buf)
		eroce_die("out of memory");

	/* the client says which phases run; the server maps the region */
	n = (strstr(ops, "tag") ? 1 : 0) | (strstr(ops, "rma") ? 2 : 0) |
	    (strstr(ops, "amo") ? 4 : 0);
	sock_u64(&n, !!server);
	if (!server) {
		ucp_mem_map_params_t mp = {
			.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
				      UCP_MEM_MAP_PARAM_FIELD_LENGTH |
				      UCP_MEM_MAP_PARAM_FIELD_FLAGS,
			.length = REGION,
			.flags = UCP_MEM_MAP_ALLOCATE,
		};
		ucp_mem_attr_t ma = { .field_mask = UCP_MEM_ATTR_FIELD_ADDRESS };

		check_st(ucp_mem_map(ctx, &mp, &memh), "ucp_mem_map");
		check_st(ucp_mem_query(memh, &ma), "ucp_mem_query");
		region = ma.address;
		check_st(ucp_rkey_pack(ctx, memh, &kbuf, &klen), "ucp_rkey_pack");
		raddr = (uintptr_t)region;
		v = klen;
		sock_u64(&raddr, true);
		sock_u64(&v, true);
		sock_write(kbuf, klen);
		ucp_rkey_buffer_release(kbuf);
	} else {
		sock_u64(&raddr, false);
		sock_u64(&v, false);
		kbuf = malloc(v);
		if (!kbuf)
			eroce_die("out of memory");
		sock_read(kbuf, v);
		check_st(ucp_ep_rkey_unpack(ep, kbuf, &rkey), "ucp_ep_rkey_unpack");
		free(kbuf);
	}

	if (n & 1)
		tag_phase(!!server, buf);
	if (n & 2)
		rma_phase(!!server, buf, region, raddr, rkey);
	if (n & 4)
		amo_phase(!!server, region, raddr, rkey);

	/* both done before either closes */
	v = 0;
	sock_u64(&v, !!server);
	sock_u64(&v, !server);
	if (rkey)
		ucp_rkey_destroy(rkey);
	{
		ucp_request_param_t prm = {
			.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
			.flags = UCP_EP_CLOSE_FLAG_FORCE,
		};

		wait_req(ucp_ep_close_nbx(ep, &prm));
	}
	if (memh)
		ucp_mem_unmap(ctx, memh);
	ucp_worker_destroy(worker);
	ucp_cleanup(ctx);
	printf("eroce_ucp: %s\n", eroce_results_status() ? "FAIL" : "ok");
	return eroce_results_status();
}
