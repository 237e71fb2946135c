// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests for eroce_psn.h: 24-bit wrap, signed distance, windows. */
#include "eroce_psn.h"
#include "unit.h"

static void test_mask_add(void)
{
	CHECK_EQ(EROCE_PSN_MASK, 0xffffff);
	CHECK_EQ(eroce_psn_mask(0x1000000), 0);
	CHECK_EQ(eroce_psn_mask(0xffffffff), 0xffffff);
	CHECK_EQ(eroce_psn_add(0xffffff, 1), 0);
	CHECK_EQ(eroce_psn_add(0xfffffe, 5), 3);
	CHECK_EQ(eroce_psn_add(0, (u32)-1), 0xffffff);
	CHECK_EQ(eroce_psn_add(5, 1U << 24), 5);
	CHECK_EQ(eroce_psn_add(0x123456, 0), 0x123456);
	CHECK_EQ(eroce_psn_add(0x800000, 0x800000), 0);
}

static void test_diff_edges(void)
{
	CHECK_EQ(eroce_psn_diff(1, 0), 1);
	CHECK(eroce_psn_diff(0, 1) == -1);
	CHECK(eroce_psn_diff(0, 0xffffff) == 1);	/* across the wrap */
	CHECK(eroce_psn_diff(0xffffff, 0) == -1);
	CHECK(eroce_psn_diff(5, 0xfffffb) == 10);
	CHECK(eroce_psn_diff(0x7fffff, 0) == 0x7fffff);	/* largest ahead */
	CHECK(eroce_psn_diff(0x800000, 0) == -0x800000);	/* half: behind */
	CHECK(eroce_psn_diff(0, 0x800000) == -0x800000);
	CHECK(eroce_psn_diff(0x800001, 0) == -0x7fffff);
	CHECK(eroce_psn_diff(0x123456, 0x123456) == 0);
	/* bits above 24 are not part of a PSN */
	CHECK(eroce_psn_diff(0x1000001, 0) == 1);
	CHECK(eroce_psn_diff(0xff000000, 0xffffff) == 1);
}

static void test_diff_random(void)
{
	int i;

	for (i = 0; i < 200000; i++) {
		u32 b = unit_rand() & EROCE_PSN_MASK;
		s32 d = (s32)(unit_rand() % (1U << 24)) - (1 << 23);
		u32 a = eroce_psn_add(b, (u32)d);
		s32 got = eroce_psn_diff(a, b);

		if (got != d) {
			CHECK(got == d);
			fprintf(stderr, "a=%06x b=%06x d=%d got=%d\n",
				a, b, d, got);
			break;
		}
		CHECK(got >= -(1 << 23) && got < (1 << 23));
		CHECK(eroce_psn_add(b, (u32)got) == a);
		/* antisymmetric except at exactly half the space */
		if (d != -(1 << 23))
			CHECK(eroce_psn_diff(b, a) == -d);
	}
}

static void test_compare(void)
{
	CHECK(eroce_psn_before(0xfffff0, 0x10));
	CHECK(!eroce_psn_after(0xfffff0, 0x10));
	CHECK(eroce_psn_after(0x10, 0xfffff0));
	CHECK(!eroce_psn_before(0x10, 0xfffff0));
	CHECK(eroce_psn_before(1, 2));
	CHECK(eroce_psn_after(2, 1));
	CHECK(!eroce_psn_before(7, 7));
	CHECK(!eroce_psn_after(7, 7));
	CHECK(eroce_psn_before_eq(7, 7));
	CHECK(eroce_psn_after_eq(7, 7));
	CHECK(eroce_psn_before_eq(0xffffff, 0));
	CHECK(!eroce_psn_after_eq(0xffffff, 0));
	CHECK(eroce_psn_after_eq(0, 0xffffff));
	CHECK(!eroce_psn_before_eq(0, 0xffffff));
	/* 2^23 apart: a is "before" b in both directions (diff is -2^23) */
	CHECK(eroce_psn_before(0x800000, 0));
	CHECK(eroce_psn_before(0, 0x800000));
}

static void test_window(void)
{
	u32 p;

	/* [0xfffffe, 0xfffffe + 5) = fffffe ffffff 0 1 2 */
	CHECK(eroce_psn_in_window(0xfffffe, 0xfffffe, 5));
	CHECK(eroce_psn_in_window(0xffffff, 0xfffffe, 5));
	CHECK(eroce_psn_in_window(0, 0xfffffe, 5));
	CHECK(eroce_psn_in_window(2, 0xfffffe, 5));
	CHECK(!eroce_psn_in_window(3, 0xfffffe, 5));
	CHECK(!eroce_psn_in_window(0xfffffd, 0xfffffe, 5));
	CHECK(!eroce_psn_in_window(0x800000, 0xfffffe, 5));
	CHECK(!eroce_psn_in_window(0x10, 0x10, 0));	/* empty */
	CHECK(eroce_psn_in_window(0x10, 0x10, 1));
	CHECK(!eroce_psn_in_window(0x11, 0x10, 1));
	/* the whole space */
	for (p = 0; p < (1U << 24); p += 0x10001)
		CHECK(eroce_psn_in_window(p, 0x123456, 1U << 24));
	/* window membership agrees with the signed distance */
	for (p = 0; p < 4096; p++) {
		u32 start = unit_rand() & EROCE_PSN_MASK;
		u32 len = unit_rand() % (1U << 23);
		u32 psn = unit_rand() & EROCE_PSN_MASK;
		s32 d = eroce_psn_diff(psn, start);

		CHECK(eroce_psn_in_window(psn, start, len) ==
		      (d >= 0 && (u32)d < len));
	}
}

int main(void)
{
	RUN(test_mask_add);
	RUN(test_diff_edges);
	RUN(test_diff_random);
	RUN(test_compare);
	RUN(test_window);
	return unit_result("psn");
}
