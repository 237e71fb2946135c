/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Minimal harness for eroce's userspace unit tests.  A test case is a
 * function run by RUN(); it passes when none of its CHECKs failed.  Each
 * binary ends with "RESULT <name> <passed> <failed>"; tests/unit/Makefile
 * sums those into the final "N passed, N failed" line.
 */
#ifndef EROCE_UNIT_H
#define EROCE_UNIT_H

/*
 * Where a failed check and a finished case are reported: stderr and
 * stdout here; tests/kunit/kunit_unit.h defines both for KUnit before it
 * includes this file.
 */
#ifndef UNIT_REPORT_FAIL
#include <stdio.h>
#include <stdlib.h>

#define UNIT_REPORT_FAIL(fmt, ...)	fprintf(stderr, fmt "\n", __VA_ARGS__)
#define UNIT_REPORT(fmt, ...)		printf(fmt "\n", __VA_ARGS__)
#endif

static int unit_case_failed, unit_passed, unit_failed;

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			unit_case_failed = 1;				\
			UNIT_REPORT_FAIL("%s:%d: %s: CHECK(%s) failed",	\
					 __FILE__, __LINE__, __func__,	\
					 #cond);			\
		}							\
	} while (0)

#define CHECK_EQ(a, b)							\
	do {								\
		unsigned long long _a = (unsigned long long)(a);	\
		unsigned long long _b = (unsigned long long)(b);	\
		if (_a != _b) {						\
			unit_case_failed = 1;				\
			UNIT_REPORT_FAIL("%s:%d: %s: %s == %s: 0x%llx != 0x%llx", \
					 __FILE__, __LINE__, __func__,	\
					 #a, #b, _a, _b);		\
		}							\
	} while (0)

#define RUN(fn)								\
	do {								\
		unit_case_failed = 0;					\
		fn();							\
		if (unit_case_failed)					\
			unit_failed++;					\
		else							\
			unit_passed++;					\
		UNIT_REPORT("%s %s", unit_case_failed ? "FAIL" : "ok  ", #fn); \
	} while (0)

static inline int unit_result(const char *name)
{
	UNIT_REPORT("RESULT %s %d %d", name, unit_passed, unit_failed);
	return unit_failed ? 1 : 0;
}

/* deterministic xorshift32: the same "random" cases on every run */
static unsigned int unit_rand_state = 0x2545f491;

static inline unsigned int unit_rand(void)
{
	unsigned int x = unit_rand_state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	unit_rand_state = x;
	return x;
}

#endif /* EROCE_UNIT_H */
