// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_mpi: a two-rank MPI check with its data verified.  Rank 0 sends
 * ITERS messages of each size from 1 byte to 1 MiB (powers of 4) to rank
 * 1, each filled with a pattern of its own; rank 1 checks every byte and
 * sends back the pattern of the next seed, which rank 0 checks.  Then an
 * MPI_Allreduce of both ranks' counts of verified messages.  Prints one
 * line per size and "mpi: N messages verified, 0 bad" at the end (rank
 * 0); exits 1 when a byte or a count is wrong.
 *
 * With BW_SECS, then a bandwidth run: for BW_SECS seconds rank 0 sends
 * 1 MiB messages to rank 1, which sends each back, the buffers left
 * alone (a pattern in the loop would time the CPU, not the transport);
 * the last message back must still hold rank 0's pattern.  Rank 0 prints
 * "mpi: bandwidth N round trips of 1048576 bytes in S s, B MB/s" (B:
 * bytes moved both ways per second, in 10^6 bytes).
 *
 * usage: mpirun -np 2 ... eroce_mpi [ITERS [BW_SECS]]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define MAX_LEN		(1u << 20)
#define TAG_LAST	3	/* the bandwidth run's last message */

static void pattern(uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1, i;

	for (i = 0; i < len; i++) {
		x = x * 1103515245u + 12345;
		p[i] = (uint8_t)(x >> 16);
	}
}

/*
 * bandwidth: BW_SECS seconds of 1 MiB round trips (see the top); returns
 * 1 when the last message back is not the one sent
 */
static int bandwidth(int rank, double secs, uint8_t *buf, uint8_t *want)
{
	MPI_Status st;
	double t0, t;
	long n = 0;
	int tag;

	pattern(want, MAX_LEN, 0x5eed);
	memcpy(buf, want, MAX_LEN);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank) {
		do {
			MPI_Recv(buf, MAX_LEN, MPI_BYTE, 0, MPI_ANY_TAG,
				 MPI_COMM_WORLD, &st);
			MPI_Send(buf, MAX_LEN, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
		} while (st.MPI_TAG != TAG_LAST);
		return 0;
	}
	t0 = MPI_Wtime();
	do {
		t = MPI_Wtime() - t0;
		tag = t >= secs ? TAG_LAST : 1;
		MPI_Send(buf, MAX_LEN, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
		MPI_Recv(buf, MAX_LEN, MPI_BYTE, 1, 2, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		n++;
	} while (tag != TAG_LAST);
	t = MPI_Wtime() - t0;
	printf("mpi: bandwidth %ld round trips of %u bytes in %.2f s, %.1f MB/s\n",
	       n, MAX_LEN, t, 2.0 * n * MAX_LEN / t / 1e6);
	if (memcmp(buf, want, MAX_LEN)) {
		printf("mpi: bandwidth run: the last message came back changed\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int rank, size, iters = argc > 1 ? atoi(argv[1]) : 20;
	double bw_secs = argc > 2 ? atof(argv[2]) : 0;
	int bw_bad = 0;
	long verified = 0, bad = 0, total_ok = 0, total_bad = 0;
	uint8_t *buf, *want;
	uint32_t len, seed = 1;
	double t0;
	int i;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (!rank)
			fprintf(stderr, "eroce_mpi: needs 2 ranks, not %d\n",
				size);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	buf = malloc(MAX_LEN);
	want = malloc(MAX_LEN);
	if (!buf || !want)
		MPI_Abort(MPI_COMM_WORLD, 2);

	for (len = 1; len <= MAX_LEN; len *= 4) {
		t0 = MPI_Wtime();
		for (i = 0; i < iters; i++, seed += 2) {
			if (rank == 0) {
				pattern(buf, len, seed);
				MPI_Send(buf, len, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
				MPI_Recv(buf, len, MPI_BYTE, 1, 2, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				pattern(want, len, seed + 1);
			} else {
				MPI_Recv(buf, len, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				pattern(want, len, seed);
				if (memcmp(buf, want, len))
					bad++;
				else
					verified++;
				pattern(buf, len, seed + 1);
				MPI_Send(buf, len, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
				continue;
			}
			if (memcmp(buf, want, len))
				bad++;
			else
				verified++;
		}
		if (!rank)
			printf("mpi: %7u bytes x %d round trips, %.1f us each\n",
			       len, iters, (MPI_Wtime() - t0) * 1e6 / iters);
	}

	MPI_Allreduce(&verified, &total_ok, 1, MPI_LONG, MPI_SUM,
		      MPI_COMM_WORLD);
	MPI_Allreduce(&bad, &total_bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (!rank)
		printf("mpi: %ld messages verified, %ld bad\n", total_ok,
		       total_bad);
	if (bw_secs > 0)
		bw_bad = bandwidth(rank, bw_secs, buf, want);
	free(buf);
	free(want);
	MPI_Finalize();
	/* 11 sizes, both directions */
	return total_bad || total_ok != 2L * 11 * iters || bw_bad;
}
