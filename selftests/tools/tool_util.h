/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tool_util.h: what the selftest programs share: messages that end the
 * program, a monotonic clock, opening a device by name and the result
 * lines of the programs that check expectations.
 */
#ifndef EROCE_TOOL_UTIL_H
#define EROCE_TOOL_UTIL_H

#include <stdbool.h>

#include <infiniband/verbs.h>

/* print "PROGRAM: MESSAGE" on stderr and exit with status 2 */
void eroce_die(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));

/* CLOCK_MONOTONIC in seconds */
double eroce_now(void);

/*
 * Open the RDMA device called @name, or the first whose name starts with
 * "eroce" when @name is NULL; NULL with errno set (ENODEV: no such device)
 * when that fails.
 */
struct ibv_context *eroce_open_device(const char *name);

/*
 * Print one expectation's result line, "result: NAME ok|FAIL DETAILS"
 * (lib.sh's ktap_results makes each a subtest); a FAIL is counted
 */
void eroce_result(const char *name, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* the exit status: 0 when every result so far was ok, else 1 */
int eroce_results_status(void);

#endif /* EROCE_TOOL_UTIL_H */
