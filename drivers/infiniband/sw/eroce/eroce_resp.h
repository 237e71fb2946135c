/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: what the responder's files (eroce_resp*.c) share, private to them;
 * the rest of the module calls the responder through eroce_engine.h.  All
 * of it runs under qp->eng.lock, but for eroce_resp_ooo_clear() at the
 * engine's teardown (eroce_resp_free()).
 */
#ifndef EROCE_RESP_H
#define EROCE_RESP_H

#include "eroce.h"
#include "eroce_mem.h"
#include "eroce_opcode.h"

/*
 * The handlers of each kind of request (struct eroce_opcode_info.resp).
 * execute runs a request at the expected PSN and returns the PSNs it takes
 * (a READ one per response packet), or 0 when it must not advance the
 * expected PSN (an RNR NAK, a fatal NAK, no room for the responses).
 * duplicate answers a request seen before.  Both run under qp->eng.lock.
 */
struct eroce_resp_ops {
	u32 (*execute)(struct eroce_qp *qp, struct eroce_rx *pkt);
	void (*duplicate)(struct eroce_qp *qp, struct eroce_rx *pkt);
	bool ack;	/* ACKed on AckReq; else its response answers it */
	bool keep;	/* may wait after a hole (selective repeat) */
};

extern const struct eroce_resp_ops eroce_resp_ops[EROCE_RESP_KINDS];

/* eroce_resp_queue.c */
void eroce_resp_send_atomic_ack_now(struct eroce_qp *qp, u32 psn,
				    u32 msn, u64 orig);
struct eroce_rsp *eroce_rsp_queue_add(struct eroce_qp *qp, bool ack);
void eroce_resp_ack_sr(struct eroce_qp *qp, u8 syn, u32 psn,
		       u32 sr_hole);
void eroce_resp_fatal_nak(struct eroce_qp *qp, struct eroce_rx *pkt,
			  enum eroce_nak_code code);
void eroce_resp_answer_reads(struct eroce_qp *qp);

/* eroce_resp_exec.c */
void eroce_resp_uc_drop(struct eroce_qp *qp, struct eroce_rx *pkt,
			enum eroce_counter cnt, const char *why);
int eroce_resp_fetch_rwqe(struct eroce_qp *qp);
int eroce_resp_fill_rwqe(struct eroce_qp *qp, void *buf, u32 len);
void eroce_resp_complete_rwqe(struct eroce_qp *qp,
			      struct eroce_rx *pkt, u8 opcode,
			      u32 byte_len, u32 src_qp, u8 wc_flags);
void eroce_resp_duplicate(struct eroce_qp *qp, struct eroce_rx *pkt);
void eroce_resp_execute(struct eroce_qp *qp, struct eroce_rx *pkt);

/* eroce_resp_sr.c */
void eroce_resp_ooo_clear(struct eroce_qp *qp);
bool eroce_resp_is_kept(const struct eroce_qp *qp, u32 psn);
void eroce_resp_nak_hole(struct eroce_qp *qp, struct eroce_dev *edev,
			 bool sr);
bool eroce_resp_keep(struct eroce_qp *qp, struct eroce_rx *pkt,
		     s32 diff);
void eroce_resp_drain(struct eroce_qp *qp);

/* eroce_resp_ud.c */
void eroce_resp_uc(struct eroce_qp *qp, struct eroce_rx *pkt);
void eroce_resp_ud(struct eroce_qp *qp, struct eroce_rx *pkt);

static inline u32 eroce_resp_mtu(struct eroce_qp *qp)
{
	return ib_mtu_enum_to_int(READ_ONCE(qp->attrs.path_mtu));
}

static inline bool eroce_rsp_queue_empty(const struct eroce_resp *resp)
{
	return resp->rsp_head == resp->rsp_tail;
}

/*
 * Room for one more owed response.  A READ, atomic or ATOMIC WRITE answer
 * (@ack false) leaves the last entry to an ACK or NAK: when the queue is
 * full, the entry queued last is an ACK or NAK, and a new one is folded
 * into it (eroce_resp_ack_fold()) rather than lost.
 */
static inline bool eroce_rsp_queue_room(const struct eroce_resp *resp, bool ack)
{
	return resp->rsp_head - resp->rsp_tail < resp->rsp_size - !ack;
}

static inline void eroce_resp_ack(struct eroce_qp *qp, u8 syn, u32 psn)
{
	eroce_resp_ack_sr(qp, syn, psn, 0);
}

/*
 * Does the QP take remote requests of this kind at all (its access flags)?
 * One it does not enable is an invalid request, not an access violation
 * (IBA 11.6.2, Remote Invalid Request Error: "the operation is not
 * supported by this receive queue"), as rdma_rxe has it.
 */
static inline int eroce_resp_qp_allows(struct eroce_qp *qp, int access)
{
	return (READ_ONCE(qp->attrs.access_flags) & access) ? 0 : -EPERM;
}

/*
 * Check (@buf NULL) or copy a range of the MR or memory window @rkey
 * names, looked up for this packet alone (eroce_rkey_access()).
 * Return: 0, -EPERM when the QP does not enable @access, or -EACCES when
 * the key's rights, the key, its PD or the range do not allow it.
 */
static inline int eroce_resp_mr_access(struct eroce_qp *qp, u32 rkey, u64 va,
				       void *buf, u64 len, int access)
{
	struct eroce_dev *edev = to_eroce_dev(qp->ibqp.device);
	int err = eroce_resp_qp_allows(qp, access);

	if (err)
		return err;
	if (eroce_rkey_access(&edev->res, qp, rkey, access, va, buf, len))
		return -EACCES;
	return 0;
}

#endif /* EROCE_RESP_H */
