/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tool_util.h: what the selftest programs share: messages that end the
 * program, a monotonic clock and opening a device by name.
 */
#ifndef EROCE_TOOL_UTIL_H
#define EROCE_TOOL_UTIL_H

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

#endif /* EROCE_TOOL_UTIL_H */
