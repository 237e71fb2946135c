// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the receive decision path of eroce's RC and UC
 * transport, as far as it is pure code.  An input is one QP's life: a
 * header, then records, each a length byte and that many bytes.  A record
 * of four bytes or more is a received packet, the UDP payload from the
 * BTH through the ICRC: eroce_hdr_check(), the opcode table, the QP's
 * transport and the P_Key (eroce_recv.c), then the responder for a
 * request, the sender's matching for a response.  A shorter record is an
 * event on the QP's own side (fuzz_event()): the requester posts a
 * message, sends, its timer fires, the receive queue empties or fills,
 * the QP is reset.
 *
 * The decisions are the module's own: eroce_hdr_check(), the opcode table
 * and eroce_opcode_seq_ok() (eroce_opcode.[ch]), the PSN arithmetic
 * (eroce_psn.h), the selective-repeat slots and window, the send window,
 * the ACK window and the read-response bitmap (eroce_window.h), the AETH
 * syndrome (eroce_wire.h).  Around them runs a model of the engines'
 * control flow, step for step as eroce_resp*.c, eroce_req_match.c and
 * eroce_req.c take it, holding PSNs and flags only: no memory, MRs,
 * receive WQE contents, payload lengths against the MTU, timers, rates or
 * counters.  Unwrapped 64-bit shadows of the PSNs check what the 24-bit
 * arithmetic decided; a broken invariant is an abort() (broken()):
 *
 * - responder: a request executes only at the expected PSN, which moves
 *   by the PSNs it takes and by nothing else; no PSN executes twice;
 *   every kept PSN sits in its slot within the EROCE_SR_WINDOW - 1 PSNs
 *   after the expected one, as many as the slots in use say; the slot of
 *   the expected PSN is never left holding it (kept packets drain); an
 *   ACK names only PSNs before the expected one; a sequence NAK names the
 *   expected PSN, once per hole (again only for a kept packet that
 *   arrives again with AckReq, and then offering selective repeat), and
 *   says "kept after it" only when something is; UC expects the PSN
 *   after the last one it saw.
 * - requester and matching of responses: una_psn only moves forward and
 *   never past max_psn, less than 2^23 PSNs behind it, and never lags
 *   behind an entry completed; max_psn follows every PSN sent; the send window
 *   lets no packet out once window PSNs are unacknowledged; every packet
 *   carries a PSN of its own entry, a new entry the PSN after all those
 *   sent; going back N never goes before the oldest entry; an
 *   acknowledgment covers only PSNs sent; a response that fits nothing
 *   changes nothing; an entry completes successfully only once sent in
 *   full and, for a read or an atomic, answered; a read's resp_psn stays
 *   in [first_psn, last_psn + 1], done exactly past last_psn, and its
 *   bitmap holds no PSN after last_psn.  UBSan checks every shift and
 *   overflow.
 *
 * Header, FUZZ_HDR bytes: flags (bit 0: a UC QP, else RC; bit 1:
 * loss_recovery sr on both sides; bit 2: the receive queue starts empty),
 * the responder's first expected PSN (3 bytes, big-endian), the
 * requester's first PSN (3 bytes), log2 of max_inflight_pkts (mod 17).
 *
 * Build and run: make -C tests/unit fuzz-recv [FUZZ_TIME=seconds]; the
 * seeds are tests/unit/corpus/recv/, written by gen_recv_corpus.py.
 * -DFUZZ_TRACE prints what each record does.
 */
#include <stdio.h>
#include <stdlib.h>

#include "eroce_opcode.h"
#include "eroce_psn.h"
#include "eroce_window.h"

#define FUZZ_HDR	8
#define FUZZ_MTU	256		/* IB_MTU_256: a READ's most PSNs */
#define FUZZ_MAX_MSG	(1ULL << 31)	/* EROCE_MAX_MSG_SIZE */
#define FUZZ_PKEY	0xffff		/* EROCE_DEFAULT_PKEY */
#define SQ_SLOTS	64		/* a power of 2 */
#define MAX_RD_ATOMIC	16
#define REQ_BUDGET	64		/* EROCE_REQ_BUDGET */

/* an invariant does not hold: where (the comment above says which) */
#define broken()							\
	do {								\
		fprintf(stderr, "fuzz_recv: invariant broken at %s:%d\n", \
			__FILE__, __LINE__);				\
		abort();						\
	} while (0)

/* -DFUZZ_TRACE: what each record does, on stderr (to read a seed) */
#ifdef FUZZ_TRACE
#define trace(...)	fprintf(stderr, __VA_ARGS__)
#else
#define trace(...)	do { } while (0)
#endif

/* the fields of a received packet the engines look at (struct eroce_rx) */
struct rx {
	const struct eroce_opcode_info *info;
	u32 psn;
	bool ackreq;
	bool sr;
	u32 sr_hole;		/* a NAK with sr: the PSNs it says are missing */
	u32 len;		/* RETH DMA length */
	u64 va;			/* RETH or AtomicETH virtual address */
	u32 paylen;
	u8 syn;			/* AETH syndrome */
};

/* struct eroce_resp, the responder, without its memory */
struct resp {
	u32 epsn;
	u32 in_msg;
	bool nak_sent;
	bool have_rwqe;
	bool ooo_used[EROCE_SR_WINDOW];
	struct rx ooo[EROCE_SR_WINDOW];
	u32 ooo_count;
	bool sr_hole_told;
	u32 sr_hole_end;
	/* for the invariants */
	u64 executed;		/* PSNs executed since the last reset */
	u32 epsn0;		/* epsn before this record (or the reset) */
	u32 advanced;		/* by this record: how far epsn must move */
	bool nak_named;		/* a sequence NAK named epsn already */
	bool probed;		/* this packet is a kept one again, AckReq */
};

enum { K_SEND, K_WRITE, K_READ, K_ATOMIC };

/* struct eroce_swqe: one SQ entry of the requester */
struct swqe {
	int kind;
	u32 npkts;		/* PSNs it takes */
	bool psn_valid;
	bool done;
	bool rerequested;
	u32 first_psn;
	u32 last_psn;
	u32 resp_psn;
	u64 ooo;
	u64 first64;		/* first_psn unwrapped */
};

/* struct eroce_req, the requester, as the matching of responses moves it */
struct req {
	struct swqe sq[SQ_SLOTS];
	u32 tail;		/* the SQ's consumer index */
	u32 head;
	u32 cur;
	u32 cur_off;		/* packets of cur sent (bytes in eroce_req.c) */
	u32 psn;
	u32 una_psn;
	u32 max_psn;
	bool sr_hole_open;
	u32 sr_hole;
	bool rnr_wait;
	u32 window;
	/* for the invariants: una_psn and max_psn unwrapped */
	u64 una64;
	u64 max64;
};

static struct {
	bool uc;
	bool sr;		/* loss_recovery sr, here and at the peer */
	bool rq_empty;
	bool err;		/* the QP is in the error state */
	struct resp resp;
	struct req req;
} qp;

static u32 get24(const u8 *p)
{
	return (u32)p[0] << 16 | (u32)p[1] << 8 | p[2];
}

/* PSNs from @from forward to @to, as the 24-bit space counts them */
static u32 fwd(u32 from, u32 to)
{
	return (to - from) & EROCE_PSN_MASK;
}

/* ------------------------------------------------------------------ */
/* the QP */

static void resp_ooo_clear(void)
{
	memset(qp.resp.ooo_used, 0, sizeof(qp.resp.ooo_used));
	qp.resp.ooo_count = 0;
	qp.resp.sr_hole_told = false;
}

/* eroce_resp_reset() */
static void resp_reset(void)
{
	qp.resp.in_msg = 0;
	qp.resp.have_rwqe = false;
	qp.resp.nak_sent = false;
	qp.resp.nak_named = false;
	resp_ooo_clear();
}

/* eroce_qp_fatal(): the QP enters the error state */
static void qp_fatal(void)
{
	qp.err = true;
	resp_reset();
	/* eroce_req_flush(): every entry completes with a flush error */
	qp.req.tail = qp.req.head;
	qp.req.cur = qp.req.head;
	qp.req.cur_off = 0;
}

/* through RESET to RTS: the responder expects @epsn, sends from @psn */
static void qp_reset(u32 epsn, u32 psn)
{
	struct req *req = &qp.req;

	qp.err = false;
	resp_reset();
	qp.resp.epsn = epsn;
	qp.resp.epsn0 = epsn;
	qp.resp.advanced = 0;
	qp.resp.executed = 0;
	memset(req->sq, 0, sizeof(req->sq));
	req->tail = 0;
	req->head = 0;
	req->cur = 0;
	req->cur_off = 0;
	req->psn = psn;
	req->una_psn = psn;
	req->max_psn = psn;
	req->sr_hole_open = false;
	req->rnr_wait = false;
	req->una64 = 1ULL << 40;	/* room to go back from */
	req->max64 = req->una64;
}

/* ------------------------------------------------------------------ */
/* the responder: eroce_resp*.c */

/* @psn is new to the responder: it must be none it executed */
static void resp_check_new(u32 psn)
{
	struct resp *r = &qp.resp;
	u32 n = r->executed < EROCE_PSN_HALF ? r->executed : EROCE_PSN_HALF;

	if (eroce_psn_in_window(psn, eroce_psn_add(r->epsn, -n), n))
		broken();
}

/* the responder sends an ACK, RNR NAK or NAK with @syn naming @psn */
/* is @psn kept? */
static bool resp_kept(u32 psn)
{
	u32 i = eroce_sr_slot(psn);

	return qp.resp.ooo_used[i] && qp.resp.ooo[i].psn == psn;
}

static void resp_ack_sr(u8 syn, u32 psn, u32 hole)
{
	struct resp *r = &qp.resp;
	bool sr = hole;
	u32 n;

	trace("  resp: syn %#x psn %#x hole %u\n", syn, psn, hole);
	if (qp.uc)
		broken();		/* UC acknowledges nothing */
	switch (eroce_syn_type(syn)) {
	case EROCE_SYN_ACK:
		/* it acknowledges only PSNs before the expected one */
		if (!fwd(psn, r->epsn) || fwd(psn, r->epsn) > EROCE_PSN_HALF)
			broken();
		break;
	case EROCE_SYN_NAK:
		if (eroce_syn_value(syn) != EROCE_NAK_PSN_SEQ_ERR)
			break;
		/*
		 * a sequence NAK names the hole once; again only for a
		 * probe, and then saying what was kept
		 */
		if (psn != r->epsn || (r->nak_named && !(r->probed && sr)))
			broken();
		r->nak_named = true;
		/* and says "kept after it" only when something is */
		if (sr && !r->ooo_count)
			broken();
		if (!sr)
			break;
		/* the hole it names is missing, and ends at a kept packet */
		if (hole > EROCE_SR_HOLE_MAX)
			broken();
		for (n = 0; n < hole; n++)
			if (resp_kept(eroce_psn_add(psn, n)))
				broken();
		if (hole < EROCE_SR_HOLE_MAX &&
		    !resp_kept(eroce_psn_add(psn, hole)))
			broken();
		break;
	default:
		if (psn != r->epsn)
			broken();	/* an RNR NAK for the expected PSN */
		break;
	}
}

static void resp_ack(u8 syn, u32 psn)
{
	resp_ack_sr(syn, psn, 0);
}

/* eroce_resp_uc_drop(): UC loses the message in progress */
static void resp_uc_drop(void)
{
	qp.resp.in_msg = 0;
}

/* eroce_resp_fatal(): a remote error; UC drops the message instead */
static void resp_fatal(const struct rx *pkt, enum eroce_nak_code code)
{
	if (qp.uc) {
		resp_uc_drop();
		return;
	}
	resp_ack(eroce_syn_nak(code), pkt->psn);
	qp_fatal();
}

/* eroce_resp_take_rwqe() */
static bool resp_take_rwqe(const struct rx *pkt)
{
	if (!qp.rq_empty) {
		qp.resp.have_rwqe = true;
		return true;
	}
	if (qp.uc)
		resp_uc_drop();
	else
		resp_ack(eroce_syn_rnr_nak(0), pkt->psn);
	return false;
}

static void resp_message_done(void)
{
	qp.resp.in_msg = 0;
}

/* eroce_resp_send(): one PSN, or 0 */
static u32 resp_send(const struct rx *pkt)
{
	struct resp *r = &qp.resp;
	u32 flags = pkt->info->flags;

	if (flags & EROCE_OPF_START) {
		if (!r->have_rwqe && !resp_take_rwqe(pkt))
			return 0;
		r->in_msg = EROCE_OPF_SEND;
	}
	if (flags & EROCE_OPF_END) {
		r->have_rwqe = false;
		resp_message_done();
	}
	return 1;
}

/* eroce_resp_write() */
static u32 resp_write(const struct rx *pkt)
{
	struct resp *r = &qp.resp;
	u32 flags = pkt->info->flags;

	if ((flags & EROCE_OPF_END) && (flags & EROCE_OPF_RWQE) &&
	    !r->have_rwqe && !resp_take_rwqe(pkt))
		return 0;
	if (flags & EROCE_OPF_START)
		r->in_msg = EROCE_OPF_WRITE;
	if (flags & EROCE_OPF_END) {
		if (flags & EROCE_OPF_RWQE)
			r->have_rwqe = false;
		resp_message_done();
	}
	return 1;
}

/* eroce_resp_read_execute(): one PSN per response packet */
static u32 resp_read(const struct rx *pkt)
{
	u64 n;

	if (pkt->len > FUZZ_MAX_MSG) {
		resp_fatal(pkt, EROCE_NAK_INVALID_REQ);
		return 0;
	}
	n = ((u64)pkt->len + FUZZ_MTU - 1) / FUZZ_MTU;
	resp_message_done();
	return n ? n : 1;
}

/* eroce_resp_atomic_execute() */
static u32 resp_atomic(const struct rx *pkt)
{
	if (pkt->va & 7) {
		resp_fatal(pkt, EROCE_NAK_INVALID_REQ);
		return 0;
	}
	resp_message_done();
	return 1;
}

/* eroce_resp_atomic_write_execute() */
static u32 resp_atomic_write(const struct rx *pkt)
{
	if (pkt->len != 8 || pkt->paylen != 8 || (pkt->va & 7)) {
		resp_fatal(pkt, EROCE_NAK_INVALID_REQ);
		return 0;
	}
	resp_message_done();
	return 1;
}

static u32 resp_kind_execute(const struct rx *pkt)
{
	switch (pkt->info->resp) {
	case EROCE_RESP_SEND:
		return resp_send(pkt);
	case EROCE_RESP_WRITE:
		return resp_write(pkt);
	case EROCE_RESP_READ:
		return resp_read(pkt);
	case EROCE_RESP_ATOMIC:
		return resp_atomic(pkt);
	case EROCE_RESP_ATOMIC_WRITE:
		return resp_atomic_write(pkt);
	}
	broken();		/* a request row without a kind */
}

/* eroce_resp_ops[].ack, .keep */
static bool resp_kind_acked(const struct rx *pkt)
{
	return pkt->info->resp == EROCE_RESP_SEND ||
	       pkt->info->resp == EROCE_RESP_WRITE;
}

/* eroce_resp_execute(): the request at the expected PSN */
static void resp_execute(const struct rx *pkt)
{
	struct resp *r = &qp.resp;
	u32 npsn;

	if (pkt->psn != r->epsn)
		broken();
	if (!eroce_opcode_seq_ok(r->in_msg, pkt->info->flags)) {
		resp_fatal(pkt, EROCE_NAK_INVALID_REQ);
		return;
	}
	resp_check_new(pkt->psn);
	npsn = resp_kind_execute(pkt);
	trace("  resp: %s %#x executed: %u PSNs\n", pkt->info->name,
	      pkt->psn, npsn);
	if (!npsn)
		return;
	if (npsn > EROCE_PSN_HALF)
		broken();
	r->epsn = eroce_psn_add(r->epsn, npsn);
	r->nak_sent = false;
	r->nak_named = false;
	r->executed += npsn;
	r->advanced += npsn;
	if (resp_kind_acked(pkt) && pkt->ackreq)
		resp_ack(eroce_syn_ack(EROCE_AETH_CREDIT_INVALID), pkt->psn);
}

/* eroce_resp_duplicate(): nothing changes; SEND and WRITE are acked */
static void resp_duplicate(const struct rx *pkt)
{
	if (resp_kind_acked(pkt))
		resp_ack(eroce_syn_ack(EROCE_AETH_CREDIT_INVALID),
			 eroce_psn_add(qp.resp.epsn, EROCE_PSN_MASK));
}

static void resp_ooo_release(u32 i)
{
	if (!qp.resp.ooo_used[i] || !qp.resp.ooo_count)
		broken();
	qp.resp.ooo_used[i] = false;
	qp.resp.ooo_count--;
}

/* eroce_resp_keep() */
static bool resp_keep(const struct rx *pkt, s32 diff)
{
	struct resp *r = &qp.resp;
	u32 i;

	if (!qp.sr || !pkt->sr || !eroce_sr_keepable(diff) ||
	    !resp_kind_acked(pkt))
		return false;
	i = eroce_sr_slot(pkt->psn);
	if (r->ooo_used[i])
		return r->ooo[i].psn == pkt->psn;
	resp_check_new(pkt->psn);
	trace("  resp: %#x kept\n", pkt->psn);
	r->ooo_used[i] = true;
	r->ooo[i] = *pkt;
	r->ooo_count++;
	return true;
}

/* eroce_resp_hole_len() */
static u32 resp_hole_len(void)
{
	u32 n;

	for (n = 1; n < EROCE_SR_HOLE_MAX; n++)
		if (resp_kept(eroce_psn_add(qp.resp.epsn, n)))
			break;
	return n;
}

/* eroce_resp_nak_hole() */
static void resp_nak_hole(bool sr)
{
	struct resp *r = &qp.resp;
	u32 hole = 0;

	r->nak_sent = true;
	r->sr_hole_told = sr;
	if (sr) {
		hole = resp_hole_len();
		r->sr_hole_end = eroce_psn_add(r->epsn, hole);
	}
	resp_ack_sr(eroce_syn_nak(EROCE_NAK_PSN_SEQ_ERR), r->epsn, hole);
}

/* eroce_resp_drain() */
static void resp_drain(void)
{
	struct resp *r = &qp.resp;
	bool placed = false;
	u32 i;

	while (r->ooo_count) {
		u32 before = r->epsn;
		struct rx pkt;

		i = eroce_sr_slot(r->epsn);
		if (!r->ooo_used[i] || r->ooo[i].psn != r->epsn)
			break;
		pkt = r->ooo[i];
		resp_ooo_release(i);
		resp_execute(&pkt);
		if (r->epsn == before) {
			resp_ooo_clear();
			break;
		}
		placed = true;
	}
	for (i = 0; r->ooo_count && i < EROCE_SR_WINDOW; i++)
		if (r->ooo_used[i] && eroce_psn_before(r->ooo[i].psn, r->epsn))
			resp_ooo_release(i);
	if (!placed)
		return;
	resp_ack(eroce_syn_ack(EROCE_AETH_CREDIT_INVALID),
		 eroce_psn_add(r->epsn, EROCE_PSN_MASK));
	if (!r->ooo_count || r->nak_sent)
		return;
	if (r->sr_hole_told) {
		if (eroce_psn_before(r->epsn, r->sr_hole_end))
			return;
		r->sr_hole_told = false;
	}
	resp_nak_hole(true);
}

/* eroce_resp_rc() */
static void resp_rc(const struct rx *pkt)
{
	struct resp *r = &qp.resp;
	s32 diff = eroce_psn_diff(pkt->psn, r->epsn);
	bool kept;

	trace("  resp: %s %#x, expecting %#x: %d\n", pkt->info->name,
	      pkt->psn, r->epsn, diff);

	if (diff > 0) {
		bool probe = pkt->ackreq && resp_kept(pkt->psn);

		kept = resp_keep(pkt, diff);
		r->probed = probe && kept;
		if (!r->nak_sent || r->probed)
			resp_nak_hole(kept);
		r->probed = false;
		return;
	}
	if (diff < 0) {
		resp_duplicate(pkt);
		return;
	}
	resp_execute(pkt);
	if (r->ooo_count)
		resp_drain();
}

/* eroce_resp_uc() */
static void resp_uc(const struct rx *pkt)
{
	struct resp *r = &qp.resp;

	if (pkt->psn != r->epsn && r->in_msg)
		r->in_msg = 0;
	r->epsn = eroce_psn_add(pkt->psn, 1);
	if (!eroce_opcode_seq_ok(r->in_msg, pkt->info->flags))
		resp_uc_drop();
	else
		resp_kind_execute(pkt);
	/* UC expects the PSN after the last one, whatever it was */
	if (r->epsn != eroce_psn_add(pkt->psn, 1))
		broken();
}

/* ------------------------------------------------------------------ */
/* the requester: eroce_req.c, what the matching of responses drives */

static struct swqe *req_swqe(u32 i)
{
	return &qp.req.sq[i & (SQ_SLOTS - 1)];
}

static bool swqe_rd_atomic(const struct swqe *w)
{
	return w->kind == K_READ || w->kind == K_ATOMIC;
}

/* @psn unwrapped: one already sent, up to max_psn, not 2^24 before it */
static u64 req_psn64(u32 psn)
{
	return qp.req.max64 - fwd(psn, qp.req.max_psn);
}

/*
 * eroce_req_complete_tail().  An entry that completes successfully was
 * sent in full, and a read or atomic got its response.
 */
static void req_complete_tail(bool success, bool answered)
{
	struct req *req = &qp.req;
	struct swqe *w = req_swqe(req->tail);

	trace("  req: entry %u completes%s\n", req->tail,
	      success ? "" : " in error");
	if (req->tail == req->head)
		broken();
	if (success) {
		if (!w->psn_valid ||
		    w->first64 + w->npkts > req->max64)
			broken();
		if (swqe_rd_atomic(w) && !w->done && !answered)
			broken();
	}
	if (req->cur == req->tail) {
		req->cur++;
		req->cur_off = 0;
		if (w->psn_valid && eroce_psn_before_eq(req->psn, w->last_psn))
			req->psn = eroce_psn_add(w->last_psn, 1);
	}
	req->tail++;
}

/* eroce_req_rewind() */
static void req_rewind(u32 psn)
{
	struct req *req = &qp.req;
	struct swqe *tail = req_swqe(req->tail);
	u32 i;

	trace("  req: back to %#x\n", psn);
	/*
	 * Never before the oldest entry: its PSNs before that belong to
	 * entries completed, and a READ sent again from one of them would
	 * be answered one packet off (corpus/recv/comp_dup_nak).
	 */
	if (req->tail != req->head && tail->psn_valid &&
	    eroce_psn_before(psn, tail->first_psn))
		broken();
	/* back over the hole: go back N; after it, or a probe: repair on */
	if (req->sr_hole_open && eroce_psn_before_eq(psn, req->sr_hole) &&
	    eroce_psn_diff(req->max_psn, psn) > 1)
		req->sr_hole_open = false;
	for (i = req->tail; i != req->head; i++) {
		struct swqe *w = req_swqe(i);

		if (!w->psn_valid || eroce_psn_before(psn, w->first_psn))
			break;
		if (eroce_psn_after(psn, w->last_psn))
			continue;
		req->cur = i;
		req->cur_off = w->kind == K_ATOMIC ? 0 :
			       eroce_psn_diff(psn, w->first_psn);
		req->psn = psn;
		return;
	}
	req->cur = i;
	req->cur_off = 0;
	req->psn = psn;
}

/* eroce_req_plan() and eroce_req_advance(): the next packet of @w */
static bool req_send_seg(struct swqe *w)
{
	struct req *req = &qp.req;
	u32 npkts = 1;

	if (!w->psn_valid) {
		/* a new entry takes the PSNs after every one sent */
		if (req->psn != req->max_psn)
			broken();
		w->first_psn = req->psn;
		w->last_psn = eroce_psn_add(req->psn, w->npkts - 1);
		w->resp_psn = req->psn;
		w->psn_valid = true;
		w->first64 = req->max64;
	} else if (w->kind == K_READ) {
		u32 got = eroce_psn_diff(w->resp_psn, w->first_psn);

		if (w->done) {
			req->cur++;
			req->cur_off = 0;
			req->psn = eroce_psn_add(w->last_psn, 1);
			return false;
		}
		if (got > req->cur_off) {
			req->cur_off = got;
			req->psn = w->resp_psn;
		}
	}
	trace("  req: sends %#x\n", req->psn);
	/* the packet goes out at req->psn: one of its entry's PSNs */
	if (fwd(w->first_psn, req->psn) >= w->npkts)
		broken();
	if (w->kind == K_READ)
		npkts = w->npkts - req->cur_off;

	/* eroce_req_advance() */
	if (swqe_rd_atomic(w)) {
		req->cur_off = w->npkts;
		req->psn = eroce_psn_add(req->psn, npkts);
	} else {
		req->cur_off++;
		req->psn = eroce_psn_add(req->psn, 1);
	}
	if (req->cur_off >= w->npkts) {
		req->cur++;
		req->cur_off = 0;
	}
	if (eroce_psn_after(req->psn, req->max_psn)) {
		req->max64 += fwd(req->max_psn, req->psn);
		req->max_psn = req->psn;
	}
	/* max_psn follows every PSN sent */
	if (fwd(req->psn, req->max_psn) >= EROCE_PSN_HALF)
		broken();
	/* and what is unanswered stays within half the PSN space */
	if (req->max64 - req->una64 >= EROCE_PSN_HALF)
		broken();
	return true;
}

/* eroce_req_rd_atomic_blocked() */
static bool req_rd_atomic_blocked(const struct swqe *w)
{
	struct req *req = &qp.req;
	u32 i, open = 0;

	if (!swqe_rd_atomic(w))
		return false;
	for (i = req->tail; i != req->cur; i++) {
		const struct swqe *v = req_swqe(i);

		if (v->psn_valid && !v->done && swqe_rd_atomic(v))
			open++;
	}
	return open >= MAX_RD_ATOMIC;
}

/* eroce_req_run_batch(), RC: at most @budget packets */
static void req_run(u32 budget)
{
	struct req *req = &qp.req;

	while (budget--) {
		struct swqe *w;
		u64 base64;

		if (req->rnr_wait || req->cur == req->head)
			return;
		w = req_swqe(req->cur);
		if (eroce_send_window_full(req->psn, req->una_psn,
					   req->sr_hole_open, req->sr_hole,
					   req->window))
			return;
		/* eroce_req_read_span_blocked() */
		if (w->kind == K_READ && !w->psn_valid &&
		    !eroce_psn_span_ok(req->psn, req->una_psn, w->npkts))
			return;
		if (!req->cur_off && req_rd_atomic_blocked(w))
			return;
		/*
		 * The window let it go: fewer than window packets after
		 * una_psn (or after the hole) are out, unwrapped.
		 */
		base64 = req->una64;
		if (req->sr_hole_open &&
		    eroce_psn_after(eroce_psn_add(req->sr_hole, 1),
				    req->una_psn))
			base64 = req_psn64(eroce_psn_add(req->sr_hole, 1));
		if (req_psn64(req->psn) >= base64 &&
		    req_psn64(req->psn) - base64 >= req->window)
			broken();
		req_send_seg(w);
	}
}

/* eroce_req_una() */
static void req_una(u32 una)
{
	struct req *req = &qp.req;

	if (!eroce_psn_after(una, req->una_psn))
		return;
	/* it moves forward, never past what was sent */
	req->una64 += fwd(req->una_psn, una);
	req->una_psn = una;
	if (req->una64 > req->max64)
		broken();
}

/* eroce_req_resendable() */
static bool req_resendable(void)
{
	struct req *req = &qp.req;
	struct swqe *w;

	if (req->cur == req->head)
		return false;
	w = req_swqe(req->cur);
	return w->psn_valid && !swqe_rd_atomic(w);
}

/* eroce_req_resend_hole(), without the packets */
static bool req_resend_hole(u32 psn, u32 hole)
{
	struct req *req = &qp.req;
	u32 cur = req->cur, off = req->cur_off, next = req->psn;
	u32 n;

	if (!eroce_psn_before(psn, next))
		return false;
	req_rewind(psn);
	if (!req_resendable()) {
		req->cur = cur;
		req->cur_off = off;
		req->psn = next;
		return false;
	}
	for (n = 0; n < hole; n++) {
		if (n && (!eroce_psn_before(req->psn, next) ||
			  !req_resendable()))
			break;
		req_send_seg(req_swqe(req->cur));
	}
	/* a resend never goes beyond what was sent */
	if (eroce_psn_after(req->psn, next))
		broken();
	if (eroce_psn_after(next, req->psn)) {
		req->cur = cur;
		req->cur_off = off;
		req->psn = next;
	}
	req->sr_hole = eroce_psn_add(psn, n - 1);
	req->sr_hole_open = true;
	return true;
}

/* eroce_req_seq_nak() */
static void req_seq_nak(u32 psn, u32 sr_hole)
{
	struct req *req = &qp.req;

	if (req->rnr_wait && psn == req->una_psn)
		return;
	if (sr_hole && qp.sr && req_resend_hole(psn, sr_hole))
		return;
	req_rewind(psn);
}

/* eroce_req_rnr_nak(), rnr_retry 7: forever */
static void req_rnr_nak(u32 psn)
{
	req_rewind(psn);
	qp.req.rnr_wait = true;
}

/* eroce_req_timer(), a retransmit timeout (retry_cnt never runs out) */
static void req_timer(void)
{
	struct req *req = &qp.req;
	struct swqe *w;

	if (req->rnr_wait) {
		req->rnr_wait = false;
		return;
	}
	if (req->tail == req->head || !req_swqe(req->tail)->psn_valid)
		return;
	w = req_swqe(req->tail);
	if (req->tail != req->cur && w->psn_valid && !w->done &&
	    w->kind == K_READ) {
		w->rerequested = true;
		return;		/* eroce_req_resend_read(): no move */
	}
	req_rewind(req->una_psn);
}

/* eroce_req_timer(), a tail-loss probe: the highest PSN sent again */
static void req_probe(void)
{
	struct req *req = &qp.req;

	if (req->rnr_wait || req->tail == req->head ||
	    !req_swqe(req->tail)->psn_valid)
		return;
	req_rewind(eroce_psn_add(req->max_psn, EROCE_PSN_MASK));
}

/* ------------------------------------------------------------------ */
/* the sender's matching of responses: eroce_req_match.c */

/* eroce_match_oldest_sent() */
static struct swqe *comp_oldest_sent(void)
{
	struct swqe *w;

	if (qp.req.tail == qp.req.head)
		return NULL;
	w = req_swqe(qp.req.tail);
	return w->psn_valid ? w : NULL;
}

/* eroce_match_ack_until(): every request PSN before @psn is acked */
static void comp_ack_until(u32 psn)
{
	struct req *req = &qp.req;
	struct swqe *w;
	u32 una = psn;

	/* an acknowledgment covers only PSNs sent */
	if (req->una64 + fwd(req->una_psn, psn) > req->max64)
		broken();
	while ((w = comp_oldest_sent())) {
		if (swqe_rd_atomic(w) ? !w->done :
		    !eroce_psn_before(w->last_psn, psn))
			break;
		req_complete_tail(true, false);
	}
	w = comp_oldest_sent();
	if (w && swqe_rd_atomic(w) && eroce_psn_before(w->resp_psn, una))
		una = w->resp_psn;
	req_una(una);
	if (eroce_psn_after(psn, req->psn))
		req_rewind(psn);
}

/* eroce_match_check_lost_response() */
static void comp_check_lost_response(u32 psn)
{
	struct swqe *w = comp_oldest_sent();

	if (!w || !swqe_rd_atomic(w) || w->done ||
	    eroce_psn_before(psn, w->first_psn) || w->rerequested)
		return;
	w->rerequested = true;
	if (w->kind != K_READ)
		req_rewind(w->resp_psn);
}

/* eroce_match_nak() and eroce_match_rnr() */
static void comp_nak(u32 psn, u8 syn, u32 sr_hole)
{
	if (eroce_syn_value(syn) == EROCE_NAK_PSN_SEQ_ERR) {
		comp_ack_until(psn);
		req_seq_nak(psn, sr_hole);
		return;
	}
	comp_ack_until(psn);
	if (comp_oldest_sent())
		req_complete_tail(false, false);
	qp_fatal();
}

/* eroce_match_ack() */
static int comp_ack(const struct rx *pkt)
{
	switch (eroce_syn_type(pkt->syn)) {
	case EROCE_SYN_ACK:
		comp_ack_until(eroce_psn_add(pkt->psn, 1));
		comp_check_lost_response(pkt->psn);
		break;
	case EROCE_SYN_RNR_NAK:
		comp_ack_until(pkt->psn);
		req_rnr_nak(pkt->psn);
		break;
	case EROCE_SYN_NAK:
		comp_nak(pkt->psn, pkt->syn, pkt->sr_hole);
		break;
	default:
		break;
	}
	return 0;
}

/* eroce_match_find(): the index of the entry holding @psn, or head */
static u32 comp_find(u32 psn)
{
	struct req *req = &qp.req;
	u32 i;

	for (i = req->tail; i != req->head; i++) {
		const struct swqe *w = req_swqe(i);

		if (!w->psn_valid || eroce_psn_before(psn, w->first_psn))
			break;
		if (!eroce_psn_after(psn, w->last_psn))
			return i;
	}
	return req->head;
}

/* eroce_match_update_una() */
static void comp_update_una(void)
{
	struct swqe *w = comp_oldest_sent();
	u32 una = qp.req.psn;

	if (w)
		una = swqe_rd_atomic(w) ? w->resp_psn : w->first_psn;
	req_una(una);
}

/* eroce_match_retire() */
static void comp_retire(void)
{
	struct swqe *w;

	while ((w = comp_oldest_sent()) && w->done)
		req_complete_tail(true, false);
	comp_update_una();
}

/*
 * eroce_match_implicit_ack(): a response to the entry at @idx acknowledges
 * the ones before it, only when it is for a PSN sent and not yet
 * acknowledged
 */
static void comp_implicit_ack(u32 idx, u32 psn)
{
	struct req *req = &qp.req;
	u32 i;

	while (req->tail != idx && !swqe_rd_atomic(req_swqe(req->tail))) {
		if (fwd(req->una_psn, psn) >= req->max64 - req->una64)
			broken();
		req_complete_tail(true, false);
	}
	for (i = req->tail; i != idx; i++) {
		struct swqe *w = req_swqe(i);

		if (w->kind == K_READ && !w->done && !w->rerequested)
			w->rerequested = true;
	}
	comp_update_una();
}

/* eroce_match_read_entry() */
static struct swqe *comp_read_entry(u32 psn)
{
	u32 idx = comp_find(psn);

	if (idx == qp.req.head || req_swqe(idx)->kind != K_READ)
		return NULL;
	comp_implicit_ack(idx, psn);
	return req_swqe(idx);
}

/* eroce_match_read_resp() */
static int comp_read_resp(const struct rx *pkt)
{
	enum eroce_rd_resp what;
	struct swqe *w;

	w = comp_read_entry(pkt->psn);
	if (!w)
		return -EINVAL;
	if (w->done)
		return -EALREADY;
	what = eroce_rd_resp_check(w->resp_psn, w->ooo, pkt->psn);
	trace("  comp: read response %#x for %#x: %d\n", pkt->psn,
	      w->resp_psn, what);
	if (what == EROCE_RD_RESP_DUP)
		return -EALREADY;
	if (what == EROCE_RD_RESP_FAR) {
		/* past the bitmap, and only then */
		if (fwd(w->resp_psn, pkt->psn) <= EROCE_RD_OOO_BITS)
			broken();
		w->rerequested = true;
		return -EALREADY;
	}
	if (what == EROCE_RD_RESP_EARLY) {
		w->ooo = eroce_rd_resp_early(w->ooo, w->resp_psn, pkt->psn);
		return 0;
	}
	if (pkt->psn != w->resp_psn)
		broken();
	eroce_rd_resp_next(&w->resp_psn, &w->ooo);
	w->rerequested = false;
	if (eroce_psn_after(w->resp_psn, w->last_psn))
		w->done = true;
	comp_retire();
	return 0;
}

/* eroce_match_atomic_ack() */
static int comp_atomic_ack(const struct rx *pkt)
{
	u32 idx = comp_find(pkt->psn), i;

	if (idx == qp.req.head || req_swqe(idx)->kind != K_ATOMIC)
		return -EINVAL;
	for (i = qp.req.tail; i != idx; i++)
		if (swqe_rd_atomic(req_swqe(i)))
			return -EINVAL;
	comp_implicit_ack(idx, pkt->psn);
	req_complete_tail(true, true);
	comp_retire();
	return 0;
}

/* eroce_req_rcv_response() and eroce_req_responded() */
static void comp_rcv(const struct rx *pkt)
{
	struct req *req = &qp.req;
	u32 una = req->una_psn, tail = req->tail;
	struct swqe *w;
	int err;

	trace("  comp: %s %#x syn %#x, [%#x, %#x)\n", pkt->info->name,
	      pkt->psn, pkt->syn, req->una_psn, req->max_psn);
	switch (pkt->info->match) {
	case EROCE_MATCH_ACK:
		if (!eroce_ack_psn_valid(pkt->psn, req->una_psn,
					 req->max_psn))
			return;
		/* PSNs sent and not yet acknowledged, unwrapped */
		if (req->una64 + fwd(req->una_psn, pkt->psn) >= req->max64)
			broken();
		err = comp_ack(pkt);
		break;
	case EROCE_MATCH_READ_RESP:
		err = comp_read_resp(pkt);
		break;
	case EROCE_MATCH_ATOMIC_ACK:
		err = comp_atomic_ack(pkt);
		break;
	default:
		broken();	/* a response row without a kind */
	}
	/* a response that fits nothing outstanding changes nothing */
	if (err == -EINVAL && (req->tail != tail || req->una_psn != una))
		broken();
	/* una_psn never lags behind an entry completed */
	w = comp_oldest_sent();
	if (w && eroce_psn_before(req->una_psn, w->first_psn))
		broken();
	if (err || qp.err)
		return;
	/* eroce_req_acked(): a repaired hole closes */
	if (req->una_psn != una && req->sr_hole_open &&
	    eroce_psn_after(req->una_psn, req->sr_hole))
		req->sr_hole_open = false;
}

/* ------------------------------------------------------------------ */
/* the invariants, after every record */

static void check_resp(void)
{
	struct resp *r = &qp.resp;
	u32 i, used = 0;

	if (r->in_msg != 0 && r->in_msg != EROCE_OPF_SEND &&
	    r->in_msg != EROCE_OPF_WRITE)
		broken();
	if (qp.uc)
		return;
	/* the expected PSN moved by what was executed, no more */
	if (r->epsn != eroce_psn_add(r->epsn0, r->advanced))
		broken();
	/* each kept PSN in its slot, in the window after the hole */
	for (i = 0; i < EROCE_SR_WINDOW; i++) {
		u32 d;

		if (!r->ooo_used[i])
			continue;
		used++;
		d = fwd(r->epsn, r->ooo[i].psn);
		if (eroce_sr_slot(r->ooo[i].psn) != i || d == 0 ||
		    d >= EROCE_SR_WINDOW)
			broken();
	}
	if (used != r->ooo_count || used > EROCE_SR_WINDOW - 1)
		broken();
	if (used && !qp.sr)
		broken();
}

static void check_req(void)
{
	struct req *req = &qp.req;
	u32 i;

	/* una_psn..max_psn within half the space, unwrapped and not */
	if (req->una64 > req->max64 ||
	    req->max64 - req->una64 != fwd(req->una_psn, req->max_psn) ||
	    req->max64 - req->una64 >= EROCE_PSN_HALF)
		broken();
	if (fwd(req->psn, req->max_psn) >= EROCE_PSN_HALF)
		broken();
	if (req->head - req->tail > SQ_SLOTS ||
	    req->cur - req->tail > req->head - req->tail)
		broken();
	for (i = req->tail; i != req->head; i++) {
		struct swqe *w = req_swqe(i);
		u64 resp64, left;

		if (!w->psn_valid)
			continue;
		if (fwd(w->first_psn, w->last_psn) != w->npkts - 1)
			broken();
		if (w->kind != K_READ)
			continue;
		/* a read's responses: resp_psn in [first, last + 1] */
		resp64 = w->first64 + fwd(w->first_psn, w->resp_psn);
		if (resp64 > w->first64 + w->npkts)
			broken();
		if (w->done != (resp64 == w->first64 + w->npkts))
			broken();
		/* the bitmap holds none after last_psn */
		left = w->first64 + w->npkts - resp64;
		if (!left ? w->ooo : (left - 1 < 64 && w->ooo >> (left - 1)))
			broken();
	}
}

/* ------------------------------------------------------------------ */
/* the input */

/* eroce_recv() and eroce_recv_deliver(), for one QP */
static void fuzz_packet(const u8 *data, size_t len)
{
	u8 *buf = malloc(len);
	const struct eroce_opcode_info *info;
	struct eroce_hdr_info hi;
	struct eroce_bth *bth;
	struct rx pkt = {};

	memcpy(buf, data, len);
	bth = (struct eroce_bth *)buf;
	if (eroce_hdr_check(buf, len, &hi)) {
		trace("packet: %zu bytes, bad headers\n", len);
		goto out_free;
	}
	trace("packet: %s\n", hi.op->name);
	info = hi.op;
	if (info != eroce_opcode_info(bth->opcode) || !info->valid)
		broken();
	if (!(info->flags & (qp.uc ? EROCE_OPF_UC : EROCE_OPF_RC)))
		goto out_free;
	if ((eroce_bth_pkey(bth) & 0x7fff) != (FUZZ_PKEY & 0x7fff))
		goto out_free;
	if (qp.err)
		goto out_free;

	pkt.info = info;
	pkt.psn = eroce_bth_psn(bth);
	pkt.ackreq = eroce_bth_ackreq(bth);
	pkt.sr = eroce_bth_sr(bth);
	pkt.sr_hole = pkt.sr ? eroce_bth_sr_hole(bth) : 0;
	pkt.paylen = hi.paylen;
	if (info->flags & EROCE_OPF_RETH) {
		struct eroce_reth *reth = eroce_hdr(info, bth, EROCE_HDR_RETH);

		pkt.len = eroce_reth_len(reth);
		pkt.va = eroce_reth_va(reth);
	}
	if (info->flags & EROCE_OPF_ATMETH)
		pkt.va = eroce_atmeth_va(eroce_hdr(info, bth,
						   EROCE_HDR_ATMETH));
	if (info->flags & EROCE_OPF_AETH)
		pkt.syn = eroce_aeth_syn(eroce_hdr(info, bth, EROCE_HDR_AETH));

	if (info->flags & EROCE_OPF_RESP)
		comp_rcv(&pkt);
	else if (qp.uc)
		resp_uc(&pkt);
	else
		resp_rc(&pkt);
out_free:
	free(buf);
}

/*
 * A record of fewer than four bytes: an event on the QP's own side.
 *   [b]     the requester posts a message: b & 3 is SEND, WRITE, READ or
 *           an atomic; b >> 2 its size (fuzz_post())
 *   [0, n]  the requester runs, at most n % REQ_BUDGET + 1 packets
 *   [1, x]  the retransmit timer fires (go back N)
 *   [2, e]  the receive queue is empty (e & 1) or not
 *   [3, x]  a tail-loss probe: the last PSN sent, sent again
 *   [p0, p1, p2]  the QP is reset and both sides start at PSN p0p1p2
 */
static void fuzz_post(u8 b)
{
	struct req *req = &qp.req;
	struct swqe *w;
	u32 e = b >> 2;

	if (req->head - req->tail == SQ_SLOTS)
		return;
	w = req_swqe(req->head++);
	memset(w, 0, sizeof(*w));
	w->kind = b & 3;
	switch (w->kind) {
	case K_SEND:
	case K_WRITE:
		w->npkts = e + 1;
		break;
	case K_READ:
		/*
		 * A few responses, or up to 2^21 of them; or as many as fit
		 * half the PSN space, or one more: a 2 GiB read at MTU 256.
		 */
		if (e < 40)
			w->npkts = e * 4 + 1;
		else if (e < 62)
			w->npkts = 1U << (e - 40);
		else
			w->npkts = EROCE_PSN_HALF - 63 + e;
		/* eroce_req_fetch() fails one that cannot fit alone */
		if (!eroce_psn_span_ok(0, 0, w->npkts)) {
			req->head--;
			return;
		}
		break;
	default:
		w->npkts = 1;
		break;
	}
}

static void fuzz_event(const u8 *p, size_t len)
{
	trace("event: %zu bytes %02x%s\n", len, p[0], len > 1 ? "..." : "");
	if (len == 3) {
		qp_reset(get24(p), get24(p));
		return;
	}
	if (qp.err || qp.uc)
		return;
	if (len == 1) {
		fuzz_post(p[0]);
		return;
	}
	switch (p[0] & 3) {
	case 0:
		req_run(p[1] % REQ_BUDGET + 1);
		break;
	case 1:
		req_timer();
		break;
	case 2:
		qp.rq_empty = p[1] & 1;
		break;
	default:
		req_probe();
		break;
	}
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	if (size < FUZZ_HDR)
		return 0;
	memset(&qp, 0, sizeof(qp));
	qp.uc = data[0] & 1;
	qp.sr = data[0] & 2;
	qp.rq_empty = data[0] & 4;
	qp.req.window = 1U << (data[7] % 17);
	qp_reset(get24(data + 1), get24(data + 4));
	data += FUZZ_HDR;
	size -= FUZZ_HDR;

	while (size) {
		size_t len = data[0];

		if (len > size - 1)
			len = size - 1;
		qp.resp.epsn0 = qp.resp.epsn;
		qp.resp.advanced = 0;
		if (len >= 4)
			fuzz_packet(data + 1, len);
		else if (len)
			fuzz_event(data + 1, len);
		if (!qp.err && len >= 3)
			check_resp();
		if (!qp.err && !qp.uc && len)
			check_req();
		data += 1 + len;
		size -= 1 + len;
	}
	return 0;
}
