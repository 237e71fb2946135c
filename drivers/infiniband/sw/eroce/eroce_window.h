/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: the windows of the RC transport, as decisions on PSNs alone.
 *
 * The responder keeps the requests that arrive after a hole, in
 * EROCE_SR_WINDOW slots indexed by PSN (selective repeat, eroce_resp_sr.c);
 * the requester sends while its in-flight window allows (eroce_req.c);
 * the sender takes an ACK only for a PSN sent and not yet
 * acknowledged, and places a read's responses that arrive early in a
 * bitmap of the EROCE_RD_OOO_BITS PSNs after the one it waits for
 * (eroce_req_match.c).  The engines own the state and act on the answers; the
 * answers are here so that the unit tests and the fuzzer
 * (tests/unit/fuzz_recv.c) run the very code the module does.  Pure
 * code: no state, no locks, any context.
 */
#ifndef EROCE_WINDOW_H
#define EROCE_WINDOW_H

#include "eroce_psn.h"

/*
 * Selective repeat: the PSNs after a hole the responder keeps.  A power
 * of 2 that divides 2^24, so a PSN's slot is the same across the wrap.
 */
#define EROCE_SR_WINDOW		256

/* the responder's slot for @psn: distinct for the PSNs of one window */
static inline u32 eroce_sr_slot(u32 psn)
{
	return psn & (EROCE_SR_WINDOW - 1);
}

/*
 * May a request @diff PSNs after the expected one wait for the hole
 * before it to close?  The window is the EROCE_SR_WINDOW - 1 PSNs after
 * the expected one, whose slot stays free.
 */
static inline bool eroce_sr_keepable(s32 diff)
{
	return diff > 0 && diff < EROCE_SR_WINDOW;
}

/**
 * eroce_send_window_full() - must the packet at @psn wait for ACKs?
 * @psn: the next PSN to send
 * @una: the oldest PSN not acknowledged
 * @hole_open: selective repeat is repairing the hole that ends at @hole
 * @hole: the last PSN of the hole sent again
 * @window: packets that may be unacknowledged (at least 1)
 *
 * While selective repeat repairs a hole, the packets before it are
 * acknowledged and those after it kept by the responder: the window
 * starts after the hole, and stays within the responder's
 * EROCE_SR_WINDOW.
 *
 * Context: any.
 * Return: true when @window packets are unacknowledged already.
 */
static inline bool eroce_send_window_full(u32 psn, u32 una, bool hole_open,
					  u32 hole, u32 window)
{
	u32 base = una;

	if (hole_open) {
		if (eroce_psn_diff(psn, una) >= EROCE_SR_WINDOW - 1)
			return true;
		if (eroce_psn_after(eroce_psn_add(hole, 1), base))
			base = eroce_psn_add(hole, 1);
	}
	return eroce_psn_diff(psn, base) >= (s32)window;
}

/**
 * eroce_psn_span_ok() - may a request take @npkts PSNs from @psn on?
 * @psn: the request's first PSN
 * @una: the oldest PSN not answered
 * @npkts: the PSNs it takes (a READ: one per response packet)
 *
 * Every PSN sent and not answered must lie within half the PSN space of
 * @una, where the 24-bit comparisons hold: a READ that would take them
 * there waits for answers, and one that cannot fit even alone is refused
 * when it is fetched.
 *
 * Context: any.
 */
static inline bool eroce_psn_span_ok(u32 psn, u32 una, u32 npkts)
{
	s32 d = eroce_psn_diff(psn, una);

	return npkts < EROCE_PSN_HALF && (d <= 0 || npkts < EROCE_PSN_HALF - d);
}

/*
 * May an ACK or NAK name @psn?  Only a request PSN sent and not yet
 * acknowledged, in [@una, @max_psn): an older one is a stale duplicate,
 * a later one was never sent.
 */
static inline bool eroce_ack_psn_valid(u32 psn, u32 una, u32 max_psn)
{
	return eroce_psn_after_eq(psn, una) && eroce_psn_before(psn, max_psn);
}

/*
 * A read's responses that arrive early: bit i of the bitmap says that
 * the response resp_psn + 1 + i is placed already.
 */
#define EROCE_RD_OOO_BITS	64

/* what the sender does with a response of the read it matched */
enum eroce_rd_resp {
	EROCE_RD_RESP_DUP,	/* placed before: nothing to do */
	EROCE_RD_RESP_NEXT,	/* the one waited for: place it, move on */
	EROCE_RD_RESP_EARLY,	/* in the bitmap: place it, remember it */
	EROCE_RD_RESP_FAR,	/* past the bitmap: ask for the rest again */
};

/*
 * The response @psn of a read whose responses before @resp_psn are all
 * in, and those after it that @ooo says.  The bitmap is tested only for
 * a PSN it covers: EROCE_RD_OOO_BITS or fewer after @resp_psn.
 */
static inline enum eroce_rd_resp eroce_rd_resp_check(u32 resp_psn, u64 ooo,
						     u32 psn)
{
	s32 d = eroce_psn_diff(psn, resp_psn);

	if (d < 0)
		return EROCE_RD_RESP_DUP;
	if (d > EROCE_RD_OOO_BITS)
		return EROCE_RD_RESP_FAR;
	if (d > 0 && (ooo & BIT_ULL(d - 1)))
		return EROCE_RD_RESP_DUP;
	return d ? EROCE_RD_RESP_EARLY : EROCE_RD_RESP_NEXT;
}

/* @ooo with the response @psn, EROCE_RD_RESP_EARLY for @resp_psn, in it */
static inline u64 eroce_rd_resp_early(u64 ooo, u32 resp_psn, u32 psn)
{
	return ooo | BIT_ULL(eroce_psn_diff(psn, resp_psn) - 1);
}

/*
 * The response at *@resp_psn is placed: move past it and past those after
 * it that came early, and shift the bitmap along.
 */
static inline void eroce_rd_resp_next(u32 *resp_psn, u64 *ooo)
{
	*resp_psn = eroce_psn_add(*resp_psn, 1);
	while (*ooo & 1) {
		*ooo >>= 1;
		*resp_psn = eroce_psn_add(*resp_psn, 1);
	}
	*ooo >>= 1;
}

#endif /* EROCE_WINDOW_H */
