// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_smc: SMC-R (AF_SMC sockets) for the selftests.
 *
 *   ueid EID                  add EID to the kernel's table of user
 *                             defined EIDs (SMC generic netlink); SMC-R
 *                             v2, the version that runs over RoCE v2,
 *                             is proposed only with one in place
 *   server ADDR PORT BYTES    accept one AF_SMC connection on ADDR:PORT,
 *                             read BYTES and compare them with the
 *                             pattern, then send them back
 *   client ADDR PORT BYTES    connect to ADDR:PORT, send BYTES of the
 *                             pattern, read them back and compare
 *
 * The pattern is a xorshift stream, so a lost, repeated or reordered
 * chunk shows.  An AF_SMC socket that falls back to TCP passes these
 * checks too: the caller proves SMC-R by the RDMA device's counters.
 * Exits 0 when the data matched, 1 when it did not, 2 on a usage or
 * setup error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/smc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tool_util.h"

#define SMCPROTO_SMC	0	/* AF_SMC over IPv4 (net/smc/smc.h) */
#define NL_BUF_LEN	8192
#define IO_CHUNK	(64u << 10)

/* ---- generic netlink -------------------------------------------------- */

struct nl_req {
	struct nlmsghdr nlh;
	struct genlmsghdr genl;
	char attrs[256];
};

/* append attribute @type of @len bytes to @req */
static void nl_put(struct nl_req *req, unsigned short type, const void *data,
		   unsigned short len)
{
	struct nlattr *nla = (struct nlattr *)((char *)req +
					       NLMSG_ALIGN(req->nlh.nlmsg_len));

	if (NLMSG_ALIGN(req->nlh.nlmsg_len) + NLA_HDRLEN + NLA_ALIGN(len) >
	    sizeof(*req))
		eroce_die("netlink request too long");
	nla->nla_type = type;
	nla->nla_len = NLA_HDRLEN + len;
	memcpy((char *)nla + NLA_HDRLEN, data, len);
	req->nlh.nlmsg_len = NLMSG_ALIGN(req->nlh.nlmsg_len) +
			     NLA_ALIGN(nla->nla_len);
}

static void nl_init(struct nl_req *req, unsigned short family, uint8_t cmd,
		    uint8_t version)
{
	memset(req, 0, sizeof(*req));
	req->nlh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	req->nlh.nlmsg_type = family;
	req->nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req->genl.cmd = cmd;
	req->genl.version = version;
}

/*
 * Send @req and read the answer into @buf; returns the first message,
 * which is the kernel's reply or its error (the ACK of a success
 * follows a reply and is not read).
 */
static struct nlmsghdr *nl_talk(int fd, struct nl_req *req, char *buf)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	ssize_t len;

	if (sendto(fd, req, req->nlh.nlmsg_len, 0,
		   (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		eroce_die("netlink send: %s", strerror(errno));
	len = recv(fd, buf, NL_BUF_LEN, 0);
	if (len < 0)
		eroce_die("netlink receive: %s", strerror(errno));
	if (!NLMSG_OK(nlh, (size_t)len))
		eroce_die("netlink: short answer (%zd bytes)", len);
	return nlh;
}

/* 0 for an ACK, the negative errno of an error, 1 for any other reply */
static int nl_status(const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *err = NLMSG_DATA(nlh);

	if (nlh->nlmsg_type != NLMSG_ERROR)
		return 1;
	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*err)))
		eroce_die("netlink: short error message");
	return err->error;
}

/* the id of generic netlink family @name */
static unsigned short genl_family_id(int fd, const char *name)
{
	char buf[NL_BUF_LEN] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *nlh;
	struct nlattr *nla;
	struct nl_req req;
	int left, status;

	nl_init(&req, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	nl_put(&req, CTRL_ATTR_FAMILY_NAME, name, strlen(name) + 1);
	nlh = nl_talk(fd, &req, buf);
	status = nl_status(nlh);
	if (status <= 0)
		eroce_die("no generic netlink family %s: %s", name,
			  strerror(-status));
	nla = (struct nlattr *)((char *)NLMSG_DATA(nlh) + GENL_HDRLEN);
	left = nlh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	while (left >= NLA_HDRLEN && nla->nla_len >= NLA_HDRLEN &&
	       nla->nla_len <= left) {
		if (nla->nla_type == CTRL_ATTR_FAMILY_ID &&
		    nla->nla_len >= NLA_HDRLEN + sizeof(uint16_t))
			return *(uint16_t *)((char *)nla + NLA_HDRLEN);
		left -= NLA_ALIGN(nla->nla_len);
		nla = (struct nlattr *)((char *)nla + NLA_ALIGN(nla->nla_len));
	}
	eroce_die("generic netlink family %s: no id in the answer", name);
}

/* SMC_NETLINK_ADD_UEID: the EID padded with blanks to its full length */
static int add_ueid(const char *eid)
{
	char buf[NL_BUF_LEN] __attribute__((aligned(NLMSG_ALIGNTO)));
	char entry[SMC_MAX_EID_LEN + 1];
	unsigned short family;
	struct nl_req req;
	int fd, status;

	if (strlen(eid) > SMC_MAX_EID_LEN)
		eroce_die("EID %s is longer than %d characters", eid,
			  SMC_MAX_EID_LEN);
	memset(entry, ' ', SMC_MAX_EID_LEN);
	memcpy(entry, eid, strlen(eid));
	entry[SMC_MAX_EID_LEN] = '\0';

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		eroce_die("netlink socket: %s", strerror(errno));
	family = genl_family_id(fd, SMC_GENL_FAMILY_NAME);
	nl_init(&req, family, SMC_NETLINK_ADD_UEID, SMC_GENL_FAMILY_VERSION);
	nl_put(&req, SMC_NLA_EID_TABLE_ENTRY, entry, sizeof(entry));
	status = nl_status(nl_talk(fd, &req, buf));
	close(fd);
	if (status < 0 && status != -EEXIST)
		eroce_die("adding UEID %s: %s", eid, strerror(-status));
	printf("ueid: %s%s\n", eid, status ? " (already there)" : " added");
	return 0;
}

/* ---- data ------------------------------------------------------------- */

static unsigned char *pattern(size_t len)
{
	unsigned char *p = malloc(len);
	uint32_t x = 0x2545f491;
	size_t i;

	if (!p)
		eroce_die("out of memory for %zu bytes", len);
	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = x;
	}
	return p;
}

static void send_all(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len < IO_CHUNK ? len : IO_CHUNK, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			eroce_die("send: %s", n ? strerror(errno) : "closed");
		p += n;
		len -= n;
	}
}

/* receive @len bytes into @p; 0 when the peer closed before that */
static int recv_all(int fd, unsigned char *p, size_t len)
{
	while (len) {
		ssize_t n = recv(fd, p, len < IO_CHUNK ? len : IO_CHUNK, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			eroce_die("recv: %s", strerror(errno));
		if (!n)
			return 0;
		p += n;
		len -= n;
	}
	return 1;
}

/* compare what arrived with the pattern; 0 when equal */
static int verify(const char *who, const unsigned char *got,
		  const unsigned char *want, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (got[i] != want[i]) {
			printf("%s: byte %zu of %zu differs (0x%02x, not 0x%02x)\n",
			       who, i, len, got[i], want[i]);
			return 1;
		}
	}
	printf("%s: %zu bytes verified\n", who, len);
	return 0;
}

static struct sockaddr_in parse_addr(const char *addr, const char *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		eroce_die("not an IPv4 address: %s", addr);
	sin.sin_port = htons(atoi(port));
	return sin;
}

static int smc_socket(void)
{
	int fd = socket(AF_SMC, SOCK_STREAM | SOCK_CLOEXEC, SMCPROTO_SMC);

	if (fd < 0)
		eroce_die("AF_SMC socket: %s", strerror(errno));
	return fd;
}

static int run_server(struct sockaddr_in sin, size_t len)
{
	unsigned char *want = pattern(len), *got = malloc(len);
	int one = 1, lfd, fd, rc;

	if (!got)
		eroce_die("out of memory for %zu bytes", len);
	lfd = smc_socket();
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(lfd, 1))
		eroce_die("listen: %s", strerror(errno));
	printf("server: listening\n");
	fflush(stdout);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		eroce_die("accept: %s", strerror(errno));
	if (!recv_all(fd, got, len))
		eroce_die("the client closed early");
	rc = verify("server", got, want, len);
	send_all(fd, got, len);
	close(fd);
	close(lfd);
	free(got);
	free(want);
	return rc;
}

static int run_client(struct sockaddr_in sin, size_t len)
{
	unsigned char *want = pattern(len), *got = malloc(len);
	int fd, rc;

	if (!got)
		eroce_die("out of memory for %zu bytes", len);
	fd = smc_socket();
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)))
		eroce_die("connect: %s", strerror(errno));
	send_all(fd, want, len);
	if (!recv_all(fd, got, len))
		eroce_die("the server closed early");
	rc = verify("client", got, want, len);
	close(fd);
	free(got);
	free(want);
	return rc;
}

int main(int argc, char **argv)
{
	size_t len;

	if (argc == 3 && !strcmp(argv[1], "ueid"))
		return add_ueid(argv[2]);
	if (argc != 5)
		eroce_die("usage: eroce_smc ueid EID | server|client ADDR PORT BYTES");
	len = strtoull(argv[4], NULL, 0);
	if (!len)
		eroce_die("BYTES must be a positive number: %s", argv[4]);
	if (!strcmp(argv[1], "server"))
		return run_server(parse_addr(argv[2], argv[3]), len);
	if (!strcmp(argv[1], "client"))
		return run_client(parse_addr(argv[2], argv[3]), len);
	eroce_die("unknown mode %s", argv[1]);
}
