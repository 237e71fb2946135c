/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: 24-bit packet sequence number arithmetic.  PSNs (and MSNs) live
 * in a circular space of 2^24 values; "before" and "after" are decided by
 * the signed distance, which is meaningful while the two values are less
 * than 2^23 apart (IBTA 9.7.1).  Pure code: no state, any context.
 */
#ifndef EROCE_PSN_H
#define EROCE_PSN_H

#include "eroce_shim.h"

#define EROCE_PSN_BITS		24
#define EROCE_PSN_MASK		((1U << EROCE_PSN_BITS) - 1)
#define EROCE_PSN_HALF		(1U << (EROCE_PSN_BITS - 1))

static inline u32 eroce_psn_mask(u32 psn)
{
	return psn & EROCE_PSN_MASK;
}

/* @psn + @n modulo 2^24; @n may be "negative" (u32 wrap-around) */
static inline u32 eroce_psn_add(u32 psn, u32 n)
{
	return (psn + n) & EROCE_PSN_MASK;
}

/*
 * Signed distance from @b to @a, in [-2^23, 2^23): positive when @a is
 * after @b.  Exactly 2^23 apart is reported as -2^23 (a is "before" b).
 */
static inline s32 eroce_psn_diff(u32 a, u32 b)
{
	u32 d = (a - b) & EROCE_PSN_MASK;

	return d >= EROCE_PSN_HALF ? (s32)d - (s32)(1U << EROCE_PSN_BITS) :
				     (s32)d;
}

static inline bool eroce_psn_before(u32 a, u32 b)
{
	return eroce_psn_diff(a, b) < 0;
}

static inline bool eroce_psn_before_eq(u32 a, u32 b)
{
	return eroce_psn_diff(a, b) <= 0;
}

static inline bool eroce_psn_after(u32 a, u32 b)
{
	return eroce_psn_diff(a, b) > 0;
}

static inline bool eroce_psn_after_eq(u32 a, u32 b)
{
	return eroce_psn_diff(a, b) >= 0;
}

/*
 * Is @psn one of the @len PSNs starting at @start, i.e. in
 * [@start, @start + @len) modulo 2^24?  @len is at most 2^24.
 */
static inline bool eroce_psn_in_window(u32 psn, u32 start, u32 len)
{
	return ((psn - start) & EROCE_PSN_MASK) < len;
}

#endif /* EROCE_PSN_H */
