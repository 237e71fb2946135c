// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for eroce_window.h: the responder's selective-repeat slots
 * and window, the requester's send window, the sender's ACK window and
 * its bitmap of early read responses; at their edges and across the
 * 2^24 wrap.
 */
#include "eroce_window.h"
#include "unit.h"

static void test_sr_slot(void)
{
	u32 start, i, j;

	CHECK_EQ(eroce_sr_slot(0), 0);
	CHECK_EQ(eroce_sr_slot(EROCE_SR_WINDOW - 1), EROCE_SR_WINDOW - 1);
	CHECK_EQ(eroce_sr_slot(EROCE_SR_WINDOW), 0);
	CHECK_EQ(eroce_sr_slot(0xffffff), EROCE_SR_WINDOW - 1);
	/* the slot of a PSN is the same on both sides of the wrap */
	CHECK_EQ(eroce_sr_slot(eroce_psn_add(0xffffff, 1)),
		 eroce_sr_slot(0xffffff) + 1 - EROCE_SR_WINDOW);
	CHECK_EQ((1U << EROCE_PSN_BITS) % EROCE_SR_WINDOW, 0);

	/* one window, from any start (across the wrap): all slots distinct */
	for (i = 0; i < 64; i++) {
		u8 seen[EROCE_SR_WINDOW] = {};

		start = i < 8 ? eroce_psn_add(0xffffff, (u32)-i) :
			unit_rand() & EROCE_PSN_MASK;
		for (j = 0; j < EROCE_SR_WINDOW; j++) {
			u32 s = eroce_sr_slot(eroce_psn_add(start, j));

			CHECK(s < EROCE_SR_WINDOW);
			CHECK(!seen[s]);
			seen[s] = 1;
		}
	}
}

static void test_sr_keepable(void)
{
	s32 d;

	CHECK(!eroce_sr_keepable(0));		/* the expected PSN itself */
	CHECK(eroce_sr_keepable(1));
	CHECK(eroce_sr_keepable(EROCE_SR_WINDOW - 1));
	CHECK(!eroce_sr_keepable(EROCE_SR_WINDOW));
	CHECK(!eroce_sr_keepable(-1));		/* duplicates */
	CHECK(!eroce_sr_keepable(-(1 << 23)));
	CHECK(!eroce_sr_keepable((1 << 23) - 1));
	/* exactly the window: the PSNs after the expected one */
	for (d = -300; d < 600; d++)
		CHECK_EQ(eroce_sr_keepable(d), d >= 1 && d < EROCE_SR_WINDOW);
	/* what the responder passes in: the distance across the wrap */
	CHECK(eroce_sr_keepable(eroce_psn_diff(2, 0xfffffe)));
	CHECK(!eroce_sr_keepable(eroce_psn_diff(0xfe, 0xfffffe)));
	CHECK(eroce_sr_keepable(eroce_psn_diff(0xfd, 0xfffffe)));
}

static void test_send_window(void)
{
	/* plain window: full at una + window */
	CHECK(!eroce_send_window_full(100, 100, false, 0, 1));
	CHECK(eroce_send_window_full(101, 100, false, 0, 1));
	CHECK(!eroce_send_window_full(131, 100, false, 0, 32));
	CHECK(eroce_send_window_full(132, 100, false, 0, 32));
	/* across the wrap */
	CHECK(!eroce_send_window_full(0x1d, 0xfffffe, false, 0, 32));
	CHECK(eroce_send_window_full(0x1e, 0xfffffe, false, 0, 32));
	CHECK(eroce_send_window_full(0x1f, 0xfffffe, false, 0, 32));
	/* the largest window the tunable allows */
	CHECK(!eroce_send_window_full(0xffff, 0, false, 0, 65536));
	CHECK(eroce_send_window_full(0x10000, 0, false, 0, 65536));

	/* a hole in repair: the window starts after it ... */
	CHECK(!eroce_send_window_full(0x30, 0x10, true, 0x10, 32));
	CHECK(eroce_send_window_full(0x31, 0x10, true, 0x10, 32));
	CHECK(!eroce_send_window_full(0x18, 0xfffff0, true, 0xfffff8, 32));
	CHECK(eroce_send_window_full(0x19, 0xfffff0, true, 0xfffff8, 32));
	/* ... unless una passed it */
	CHECK(eroce_send_window_full(0x30, 0x10, true, 0x08, 32));
	/* ... and within the responder's window whatever the window */
	CHECK(!eroce_send_window_full(0x10 + EROCE_SR_WINDOW - 2, 0x10, true,
				      0x10, 4096));
	CHECK(eroce_send_window_full(0x10 + EROCE_SR_WINDOW - 1, 0x10, true,
				     0x10, 4096));
	CHECK(eroce_send_window_full(eroce_psn_add(0xffff00,
						   EROCE_SR_WINDOW - 1),
				     0xffff00, true, 0xffff00, 4096));
}

static void test_psn_span(void)
{
	/* alone: up to 2^23 - 1 PSNs, the most a READ may take */
	CHECK(eroce_psn_span_ok(5, 5, EROCE_PSN_HALF - 1));
	CHECK(!eroce_psn_span_ok(5, 5, EROCE_PSN_HALF));
	/* a 2 GiB READ at MTU 256 never fits */
	CHECK(!eroce_psn_span_ok(0, 0, (1U << 31) / 256));
	/* behind what is outstanding, across the wrap */
	CHECK(eroce_psn_span_ok(0x10, 0xfffff0, EROCE_PSN_HALF - 0x21));
	CHECK(!eroce_psn_span_ok(0x10, 0xfffff0, EROCE_PSN_HALF - 0x20));
	CHECK(!eroce_psn_span_ok(EROCE_PSN_HALF - 1, 0, 1));
	CHECK(eroce_psn_span_ok(EROCE_PSN_HALF - 2, 0, 1));
	/* nothing outstanding past a rewind: the span starts at @una */
	CHECK(eroce_psn_span_ok(0xfffff0, 0x10, EROCE_PSN_HALF - 1));
	CHECK(eroce_psn_span_ok(7, 7, 0));
}

static void test_ack_window(void)
{
	/* nothing sent: nothing to acknowledge */
	CHECK(!eroce_ack_psn_valid(5, 5, 5));
	CHECK(!eroce_ack_psn_valid(4, 5, 5));
	/* [una, max) */
	CHECK(eroce_ack_psn_valid(5, 5, 6));
	CHECK(!eroce_ack_psn_valid(6, 5, 6));
	CHECK(!eroce_ack_psn_valid(4, 5, 6));		/* stale */
	CHECK(eroce_ack_psn_valid(9, 5, 10));
	CHECK(!eroce_ack_psn_valid(10, 5, 10));	/* never sent */
	/* across the wrap */
	CHECK(eroce_ack_psn_valid(0xffffff, 0xfffffe, 2));
	CHECK(eroce_ack_psn_valid(0, 0xfffffe, 2));
	CHECK(eroce_ack_psn_valid(1, 0xfffffe, 2));
	CHECK(!eroce_ack_psn_valid(2, 0xfffffe, 2));
	CHECK(!eroce_ack_psn_valid(0xfffffd, 0xfffffe, 2));
	/* a duplicate of the last ACK is stale once it moved una */
	CHECK(!eroce_ack_psn_valid(0xffffff, 0, 3));
}

static void test_rd_resp(void)
{
	u32 r = 0xfffffe;	/* waiting for this one, near the wrap */
	u64 ooo = 0;
	u32 p;

	CHECK_EQ(eroce_rd_resp_check(r, 0, r), EROCE_RD_RESP_NEXT);
	CHECK_EQ(eroce_rd_resp_check(r, 0, eroce_psn_add(r, (u32)-1)),
		 EROCE_RD_RESP_DUP);
	CHECK_EQ(eroce_rd_resp_check(r, 0, eroce_psn_add(r, 1)),
		 EROCE_RD_RESP_EARLY);
	CHECK_EQ(eroce_rd_resp_check(r, 0, eroce_psn_add(r, 64)),
		 EROCE_RD_RESP_EARLY);
	CHECK_EQ(eroce_rd_resp_check(r, 0, eroce_psn_add(r, 65)),
		 EROCE_RD_RESP_FAR);
	/* past the bitmap, whatever it holds: never a shift by 64 or more */
	CHECK_EQ(eroce_rd_resp_check(r, ~0ULL, eroce_psn_add(r, 65)),
		 EROCE_RD_RESP_FAR);
	CHECK_EQ(eroce_rd_resp_check(r, ~0ULL, eroce_psn_add(r, 129)),
		 EROCE_RD_RESP_FAR);
	CHECK_EQ(eroce_rd_resp_check(r, ~0ULL, eroce_psn_add(r, 0x7fffff)),
		 EROCE_RD_RESP_FAR);

	/* r + 2 and r + 64 come early */
	ooo = eroce_rd_resp_early(ooo, r, eroce_psn_add(r, 2));
	ooo = eroce_rd_resp_early(ooo, r, eroce_psn_add(r, 64));
	CHECK_EQ(ooo, BIT_ULL(1) | BIT_ULL(63));
	CHECK_EQ(eroce_rd_resp_check(r, ooo, eroce_psn_add(r, 2)),
		 EROCE_RD_RESP_DUP);
	CHECK_EQ(eroce_rd_resp_check(r, ooo, eroce_psn_add(r, 64)),
		 EROCE_RD_RESP_DUP);
	CHECK_EQ(eroce_rd_resp_check(r, ooo, eroce_psn_add(r, 3)),
		 EROCE_RD_RESP_EARLY);
	/* r in: stops at the hole r + 1 */
	eroce_rd_resp_next(&r, &ooo);
	CHECK_EQ(r, 0xffffff);
	CHECK_EQ(ooo, BIT_ULL(0) | BIT_ULL(62));
	/* r + 1 in: r + 2 was already, on to r + 3 across the wrap */
	eroce_rd_resp_next(&r, &ooo);
	CHECK_EQ(r, 1);
	CHECK_EQ(ooo, BIT_ULL(60));
	CHECK_EQ(eroce_rd_resp_check(r, ooo, 0), EROCE_RD_RESP_DUP);
	CHECK_EQ(eroce_rd_resp_check(r, ooo, 62), EROCE_RD_RESP_DUP);

	/* all 64 early, then the one waited for: moves past all 65 */
	r = 0xffffc0;
	ooo = 0;
	for (p = 1; p <= EROCE_RD_OOO_BITS; p++)
		ooo = eroce_rd_resp_early(ooo, r, eroce_psn_add(r, p));
	CHECK_EQ(ooo, ~0ULL);
	eroce_rd_resp_next(&r, &ooo);
	CHECK_EQ(r, 1);
	CHECK_EQ(ooo, 0);

	/* random arrival orders agree with a plain set of PSNs */
	for (p = 0; p < 2000; p++) {
		u32 base = unit_rand() & EROCE_PSN_MASK, rp = base;
		u8 in[80] = {};
		int k;

		ooo = 0;
		for (k = 0; k < 400; k++) {
			u32 off = unit_rand() % 80;
			u32 psn = eroce_psn_add(base, off);
			u32 d = (psn - rp) & EROCE_PSN_MASK;
			enum eroce_rd_resp what;

			what = eroce_rd_resp_check(rp, ooo, psn);

			if (in[off]) {
				CHECK_EQ(what, EROCE_RD_RESP_DUP);
				continue;
			}
			if (d > EROCE_RD_OOO_BITS) {
				CHECK_EQ(what, EROCE_RD_RESP_FAR);
				continue;
			}
			in[off] = 1;
			if (d) {
				CHECK_EQ(what, EROCE_RD_RESP_EARLY);
				ooo = eroce_rd_resp_early(ooo, rp, psn);
				continue;
			}
			CHECK_EQ(what, EROCE_RD_RESP_NEXT);
			eroce_rd_resp_next(&rp, &ooo);
			/* everything before rp in, rp itself not */
			CHECK(rp == eroce_psn_add(base, 80) ||
			      !in[(rp - base) & EROCE_PSN_MASK]);
		}
	}
}

int main(void)
{
	RUN(test_sr_slot);
	RUN(test_sr_keepable);
	RUN(test_send_window);
	RUN(test_psn_span);
	RUN(test_ack_window);
	RUN(test_rd_resp);
	return unit_result("window");
}
