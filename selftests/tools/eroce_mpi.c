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
 * usage: mpirun -np 2 ... eroce_mpi [ITERS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define MAX_LEN		(1u << 20)

static void pattern(uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1, i;

	for (i = 0; i < len; i++) {
		x = x * 1103515245u + 12345;
		p[i] = (uint8_t)(x >> 16);
	}
}

int main(int argc, char **argv)
{
	int rank, size, iters = argc > 1 ? atoi(argv[1]) : 20;
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
	free(buf);
	free(want);
	MPI_Finalize();
	/* 11 sizes, both directions */
	return total_bad || total_ok != 2L * 11 * iters;
}
