// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_kunit.ko: the userspace unit tests of eroce's pure-logic files
 * (tests/unit/test_*.c: PSN arithmetic, wire codecs, opcode table, ICRC,
 * windows) as the KUnit suite "eroce_pure", run when the module is
 * loaded, against the module's own eroce_opcode.c, eroce_icrc.c and
 * eroce_crc32.c (the crypto API's crc32, as eroce.ko uses it).  Built
 * against the debug kernel by scripts/check-debug.sh; tests/kunit/kunit.sh
 * loads it in the guest and reads the KTAP from the kernel log.
 */
#include <kunit/test.h>
#include <linux/module.h>

#include "eroce_crc32.h"
#include "kunit_cases.h"

struct kunit *eroce_kunit_test;

static int eroce_kunit_suite_init(struct kunit_suite *suite)
{
	eroce_crc32_init();
	return 0;
}

static void eroce_kunit_suite_exit(struct kunit_suite *suite)
{
	eroce_crc32_exit();
}

static struct kunit_case eroce_kunit_cases[] = {
	KUNIT_CASE(eroce_kunit_psn),
	KUNIT_CASE(eroce_kunit_wire),
	KUNIT_CASE(eroce_kunit_opcode),
	KUNIT_CASE(eroce_kunit_icrc),
	KUNIT_CASE(eroce_kunit_window),
	{}
};

static struct kunit_suite eroce_kunit_suite = {
	.name = "eroce_pure",
	.suite_init = eroce_kunit_suite_init,
	.suite_exit = eroce_kunit_suite_exit,
	.test_cases = eroce_kunit_cases,
};

kunit_test_suite(eroce_kunit_suite);

MODULE_DESCRIPTION("KUnit tests of eroce's pure-logic files");
MODULE_LICENSE("Dual BSD/GPL");
