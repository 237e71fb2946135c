// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tcp_pingpong: 2-byte TCP ping-pong (TCP_NODELAY), the TCP reference for
 * the RDMA latency tests of `make bench`.  Both sides busy-poll (non-blocking
 * recv), as perftest does, so the figure holds no scheduler wakeups.
 *   tcp_pingpong -s ADDR PORT                 server, one connection
 *   tcp_pingpong -c ADDR PORT ITERS [SRCADDR] client; prints
 *       "median_half_rtt_us X" (half the median round trip, like perftest)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static int xfer(int fd, char *b, int send_first)
{
	int got = 0, n;

	if (send_first && write(fd, b, 2) != 2)
		return -1;
	/* busy-poll like perftest does: no sleep/wakeup in the measurement */
	while (got < 2) {
		n = recv(fd, b + got, 2 - got, MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN)
			continue;
		if (n <= 0)
			return -1;
		got += n;
	}
	if (!send_first && write(fd, b, 2) != 2)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int one = 1, fd, c, i, n;
	long long *t;
	char b[2] = "xy";

	if (argc < 4)
		return 2;
	a.sin_port = htons(atoi(argv[3]));
	inet_pton(AF_INET, argv[2], &a.sin_addr);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (!strcmp(argv[1], "-s")) {
		if (bind(fd, (void *)&a, sizeof(a)) || listen(fd, 1))
			return perror("bind/listen"), 1;
		c = accept(fd, NULL, NULL);
		if (c < 0)
			return 1;
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		while (!xfer(c, b, 0))
			;
		return 0;
	}
	n = argc > 4 ? atoi(argv[4]) : 1000;
	if (argc > 5) {
		struct sockaddr_in s = { .sin_family = AF_INET };

		inet_pton(AF_INET, argv[5], &s.sin_addr);
		if (bind(fd, (void *)&s, sizeof(s)))
			return perror("bind"), 1;
	}
	if (connect(fd, (void *)&a, sizeof(a)))
		return perror("connect"), 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	t = calloc(n, sizeof(*t));
	for (i = 0; i < n; i++) {
		long long t0 = ns();

		if (xfer(fd, b, 1))
			return fprintf(stderr, "transfer failed\n"), 1;
		t[i] = ns() - t0;
	}
	close(fd);
	qsort(t, n, sizeof(*t), cmp);
	printf("median_half_rtt_us %.2f\n", t[n / 2] / 2000.0);
	return 0;
}
