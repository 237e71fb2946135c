// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tool_util.c: the helpers of tool_util.h, linked into every selftest
 * program.  No state of its own.
 */
#define _GNU_SOURCE		/* program_invocation_short_name */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tool_util.h"

void eroce_die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", program_invocation_short_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

double eroce_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct ibv_context *eroce_open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	const char *n;
	int i, num, err = ENODEV;

	list = ibv_get_device_list(&num);
	if (!list)
		return NULL;
	for (i = 0; i < num; i++) {
		n = ibv_get_device_name(list[i]);
		if (name ? strcmp(n, name) : strncmp(n, "eroce", 5))
			continue;
		ctx = ibv_open_device(list[i]);
		err = ctx ? 0 : errno;
		break;
	}
	ibv_free_device_list(list);
	if (!ctx)
		errno = err;
	return ctx;
}

static int eroce_failures;

void eroce_result(const char *name, bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("result: %s %s ", name, ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		eroce_failures++;
}

int eroce_results_status(void)
{
	return eroce_failures ? 1 : 0;
}
