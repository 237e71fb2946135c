/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The harness of tests/unit/unit.h on KUnit, so that the userspace unit
 * tests (tests/unit/test_*.c) compile unchanged into the KUnit module and
 * assert the same facts in the debug kernel.  It is included before a
 * test file and includes unit.h with its reporting defined for KUnit
 * (the test file's own include then finds it included): CHECK() and
 * CHECK_EQ() fail the running KUnit case with the file and line, RUN()
 * logs one line per userspace test case, the test file's main()
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

extern struct kunit *eroce_kunit_test;

/* tests/unit/unit.h's checks, reported through KUnit */
#define UNIT_REPORT_FAIL(fmt, ...)	KUNIT_FAIL(eroce_kunit_test, fmt, __VA_ARGS__)
#define UNIT_REPORT(fmt, ...)		kunit_info(eroce_kunit_test, fmt "\n", __VA_ARGS__)
#include "unit.h"

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
