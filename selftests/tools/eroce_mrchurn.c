// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_mrchurn: memory registration churn on one device.
 *
 *   eroce_mrchurn -d DEV [-n REGISTRATIONS] [-k LIVE] [-s SEED]
 *
 * Registers REGISTRATIONS (default 100000) MRs of 4 KiB to 1 MiB from a
 * pool of buffers, with random access flags, keeping up to LIVE (default
 * 256) registered at once and deregistering a random one of them when
 * the pool is full; every tenth registration goes through
 * ibv_rereg_mr() (new buffer and flags) instead.  Checks that every
 * registration succeeds, that no two live MRs share an lkey or an rkey,
 * and that every MR reports the address and length it was given.  Prints
 * "registrations N", "reregistrations N", "deregistrations N" and
 * "per_registration_us X" and exits 0 when every check held, 1
 * otherwise, 2 on a usage or setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "tool_util.h"

#define MAX_LIVE	4096
#define MIN_LEN		4096u
#define MAX_LEN		(1u << 20)
#define BUFFERS		8		/* each MAX_LEN + MIN_LEN */

static const int access_choices[] = {
	IBV_ACCESS_LOCAL_WRITE,
	IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
	IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	0,
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* a random piece of a random buffer: page aligned or not, 4 KiB..1 MiB */
static void pick(uint8_t **bufs, void **addr, size_t *len, int *access)
{
	size_t off = rnd() % MIN_LEN;

	*len = MIN_LEN + rnd() % (MAX_LEN - MIN_LEN + 1);
	*addr = bufs[rnd() % BUFFERS] + off;
	*access = access_choices[rnd() % (sizeof(access_choices) /
					  sizeof(access_choices[0]))];
}

/* the MR reports what it was given, and no other live MR has its keys */
static bool check_mr(struct ibv_mr **live, int n, int self, void *addr,
		     size_t len)
{
	struct ibv_mr *mr = live[self];
	int i;

	if (mr->addr != addr || mr->length != len) {
		fprintf(stderr, "mr %d: addr %p length %zu, registered %p %zu\n",
			self, mr->addr, mr->length, addr, len);
		return false;
	}
	for (i = 0; i < n; i++) {
		if (i == self || !live[i])
			continue;
		if (live[i]->lkey == mr->lkey || live[i]->rkey == mr->rkey) {
			fprintf(stderr, "mr %d and %d share a key: lkey 0x%x/0x%x rkey 0x%x/0x%x\n",
				self, i, mr->lkey, live[i]->lkey, mr->rkey,
				live[i]->rkey);
			return false;
		}
	}
	return true;
}

static void usage(void)
{
	fprintf(stderr, "usage: eroce_mrchurn -d DEV [-n REGISTRATIONS] [-k LIVE] [-s SEED]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long regs = 100000, rereg = 0, dereg = 0, i;
	struct ibv_mr *live[MAX_LIVE] = {};
	struct ibv_context *ctx;
	struct timespec t0, t1;
	const char *dev = NULL;
	uint8_t *bufs[BUFFERS];
	struct ibv_pd *pd;
	int nlive = 256, c, rc = 0;
	double us;

	rng_state = 1;
	while ((c = getopt(argc, argv, "d:n:k:s:")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'n': regs = strtoul(optarg, NULL, 0); break;
		case 'k': nlive = atoi(optarg); break;
		case 's': rng_state = strtoull(optarg, NULL, 0) | 1; break;
		default: usage();
		}
	}
	if (!dev || nlive < 1 || nlive > MAX_LIVE)
		usage();
	ctx = eroce_open_device(dev);
	if (!ctx)
		return 2;
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		perror("ibv_alloc_pd");
		return 2;
	}
	for (i = 0; i < BUFFERS; i++) {
		bufs[i] = aligned_alloc(4096, MAX_LEN + MIN_LEN);
		if (!bufs[i])
			return 2;
		memset(bufs[i], (int)i, MAX_LEN + MIN_LEN);
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < regs && !rc; i++) {
		int slot = rnd() % nlive, access;
		size_t len;
		void *addr;

		pick(bufs, &addr, &len, &access);
		if (live[slot] && i % 10 == 9) {
			if (ibv_rereg_mr(live[slot], IBV_REREG_MR_CHANGE_TRANSLATION |
					 IBV_REREG_MR_CHANGE_ACCESS, NULL, addr, len,
					 access)) {
				fprintf(stderr, "ibv_rereg_mr %zu bytes access 0x%x: %s\n",
					len, access, strerror(errno));
				rc = 1;
				break;
			}
			rereg++;
		} else {
			if (live[slot]) {
				if (ibv_dereg_mr(live[slot])) {
					perror("ibv_dereg_mr");
					rc = 1;
					break;
				}
				live[slot] = NULL;
				dereg++;
			}
			live[slot] = ibv_reg_mr(pd, addr, len, access);
			if (!live[slot]) {
				fprintf(stderr, "ibv_reg_mr %zu bytes access 0x%x: %s\n",
					len, access, strerror(errno));
				rc = 1;
				break;
			}
		}
		if (!check_mr(live, nlive, slot, addr, len))
			rc = 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (c = 0; c < nlive; c++) {
		if (live[c] && ibv_dereg_mr(live[c])) {
			perror("ibv_dereg_mr");
			rc = 1;
		} else if (live[c]) {
			dereg++;
		}
	}
	us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3;
	printf("registrations %lu\nreregistrations %lu\nderegistrations %lu\n",
	       i - rereg, rereg, dereg);
	printf("per_registration_us %.1f\n", i ? us / i : 0.0);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	for (i = 0; i < BUFFERS; i++)
		free(bufs[i]);
	return rc;
}
