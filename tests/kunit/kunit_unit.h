/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The harness of tests/unit/unit.h on KUnit, so that the userspace unit
 * tests (tests/unit/test_*.c) compile unchanged into the KUnit module and
 * assert the same facts in the debug kernel.  It is included before a
 * test file and takes the place of unit.h (same include guard): CHECK()
 * and CHECK_EQ() fail the running KUnit case with the file and line,
 * RUN() logs one line per userspace test case, the test file's main()
 * becomes the KUnit case's body (see EROCE_KUNIT_CASE), malloc()/free()
 * are kmalloc()/kfree() (exact sizes: KASAN catches an over-read as
 * ASan does in userspace), fprintf() goes to the kernel log and abort()
 * ends the case.
 */
#ifndef EROCE_KUNIT_UNIT_H
#define EROCE_KUNIT_UNIT_H

#include <kunit/test.h>
#include <linux/compiler.h>
#include <linux/printk.h>
#include <linux/slab.h>

#include "eroce_shim.h"

/* tests/unit/unit.h is not to be used after this */
#define EROCE_UNIT_H

extern struct kunit *eroce_kunit_test;

static int unit_case_failed, unit_passed, unit_failed;

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			unit_case_failed = 1;				\
			KUNIT_FAIL(eroce_kunit_test,			\
				   "%s:%d: %s: CHECK(%s) failed",	\
				   __FILE__, __LINE__, __func__, #cond); \
		}							\
	} while (0)

#define CHECK_EQ(a, b)							\
	do {								\
		unsigned long long _a = (unsigned long long)(a);	\
		unsigned long long _b = (unsigned long long)(b);	\
		if (_a != _b) {						\
			unit_case_failed = 1;				\
			KUNIT_FAIL(eroce_kunit_test,			\
				   "%s:%d: %s: %s == %s: 0x%llx != 0x%llx", \
				   __FILE__, __LINE__, __func__, #a, #b, \
				   _a, _b);				\
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
		kunit_info(eroce_kunit_test, "%s %s\n",			\
			   unit_case_failed ? "FAIL" : "ok  ", #fn);	\
	} while (0)

static inline int unit_result(const char *name)
{
	kunit_info(eroce_kunit_test, "RESULT %s %d %d\n", name,
		   unit_passed, unit_failed);
	return unit_failed ? 1 : 0;
}

/* the same xorshift32 sequence as in userspace */
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

#define malloc(n)		kmalloc(n, GFP_KERNEL)
#define free(p)			kfree(p)
/* a test's abort() ends its KUnit case, not the kernel */
#define abort()								\
	do {								\
		KUNIT_ASSERT_FAILURE(eroce_kunit_test, "abort()");	\
		unreachable();						\
	} while (0)
/* the tests print their diagnostics piecemeal (byte dumps): continue lines */
#define fprintf(f, ...)		pr_cont(__VA_ARGS__)

/*
 * EROCE_KUNIT_CASE(name): after including tests/unit/test_<name>.c with
 * main renamed to eroce_unit_<name>_main, the KUnit case that runs it
 */
#define EROCE_KUNIT_CASE(name)						\
void eroce_kunit_##name(struct kunit *test)				\
{									\
	eroce_kunit_test = test;					\
	unit_passed = 0;						\
	unit_failed = 0;						\
	KUNIT_EXPECT_EQ(test, eroce_unit_##name##_main(), 0);		\
	KUNIT_EXPECT_GT(test, unit_passed, 0);				\
	eroce_kunit_test = NULL;					\
}

#endif /* EROCE_KUNIT_UNIT_H */
