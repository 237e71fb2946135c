/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: what the sender's two files share, private to them: the
 * requester (eroce_req.c: send queue entries into packets, the
 * retransmission policy) and the matching of responses to send entries
 * (eroce_req_match.c).  The rest of the module calls the sender through
 * eroce_engine.h: eroce_req_run() and eroce_req_flush() from the QP's
 * work and transitions, eroce_req_timer(), and eroce_req_rcv_response()
 * for every ACK, NAK, read response and atomic ACK.  All of it runs under
 * qp->eng.lock.
 */
#ifndef EROCE_REQ_H
#define EROCE_REQ_H

#include "eroce.h"

static inline struct eroce_swqe *eroce_req_swqe(struct eroce_qp *qp, u32 i)
{
	return &qp->eng.req.swqe[i & (qp->sq.num_slots - 1)];
}

/*
 * eroce_req.c, for eroce_req_match.c: what the matching of a response
 * tells the requester, and the entries it retires from the SQ's tail.
 */
void eroce_req_una(struct eroce_qp *qp, u32 una, bool ack);
void eroce_req_answered(struct eroce_qp *qp);
void eroce_req_ack_rcvd(struct eroce_qp *qp);
void eroce_req_seq_nak(struct eroce_qp *qp, u32 psn, u32 sr_hole);
bool eroce_req_rnr_nak(struct eroce_qp *qp, u32 psn, u32 usec);
void eroce_req_responded(struct eroce_qp *qp, u32 una, u32 tail);
void eroce_req_rewind(struct eroce_qp *qp, u32 psn);
void eroce_req_resend_read(struct eroce_qp *qp, struct eroce_swqe *w);
void eroce_req_complete_tail(struct eroce_qp *qp, enum ib_wc_status status);
void eroce_req_fail_tail(struct eroce_qp *qp, enum ib_wc_status status);

#endif /* EROCE_REQ_H */
