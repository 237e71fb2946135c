/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: per-QP transport state of the sender and the responder.
 *
 * One lock, struct eroce_qp_engine.lock, serialises what runs for a QP:
 * the sender's requester (QP work item, user doorbell) and its matching
 * of responses (receive softirq), the responder (receive softirq), the
 * retransmit timer (softirq hrtimer).  It is taken with bottom halves
 * off.  The QP's state_lock may nest inside it, never the other way
 * round.
 */
#ifndef EROCE_ENGINE_H
#define EROCE_ENGINE_H

#include <linux/hrtimer.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/dst_cache.h>
#include <rdma/eroce-abi.h>

#include "eroce_window.h"

struct eroce_mr;

/* kernel-side state of one SQ entry; index i shadows SQ slot i */
struct eroce_swqe {
	struct eroce_send_wqe *wqe;	/* the kernel's copy of the slot */
	u32 length;			/* total payload bytes */
	u32 first_psn;			/* of the request (or read response) */
	u32 last_psn;
	u32 resp_psn;			/* next read response PSN expected */
	/* bit i: response resp_psn + 1 + i came early */
	u64 ooo;
	bool psn_valid;			/* sent at least once */
	bool rerequested;		/* read re-requested from resp_psn */
	bool done;			/* every response is in */
	bool signaled;
};

enum eroce_rsp_type {
	EROCE_RSP_ACK,			/* ACK or NAK */
	EROCE_RSP_READ,			/* read response packets */
	EROCE_RSP_ATOMIC,		/* atomic acknowledge */
};

/*
 * A response the responder still owes, queued while read responses are
 * going out so that every response leaves in PSN order.
 */
struct eroce_rsp {
	enum eroce_rsp_type type;
	u32 first_psn;
	u32 npkts;			/* READ */
	u32 sent;			/* READ: packets sent */
	u64 va;				/* READ */
	u32 length;			/* READ */
	u32 rkey;			/* READ: looked up again per packet */
	u32 msn;
	u8 syn;				/* ACK */
	/* ACK: a NAK with packets kept after it: the hole's PSNs, else 0 */
	u8 sr_hole;
	u64 orig;			/* ATOMIC */
};

/*
 * Owed responses: room for twice (max_dest_rd_atomic + this many), so
 * that repeated reads, which may use only half, never crowd out new ones;
 * the last entry is kept for an ACK or NAK (eroce_resp_ack_fold()).
 */
#define EROCE_RSP_EXTRA		16

/*
 * Result of an executed atomic, replayed for a duplicate request.  The
 * replay cache shares one allocation with the owed responses
 * (eroce_resp_room_alloc()): rsp_size / 2 results, at least
 * max_dest_rd_atomic + EROCE_RSP_EXTRA, more than the atomics the peer
 * may have outstanding, each of which it may send again.
 */
struct eroce_atomic_res {
	u32 psn;
	bool valid;
	u64 orig;
};

#define EROCE_REQ_BUDGET	64	/* packets per requester run */
/* read response packets sent from the receive softirq per READ */
#define EROCE_RESP_INLINE_PKTS	4
/* read response packets a fatal NAK sends ahead of itself, at most */
#define EROCE_RESP_FATAL_BUDGET	1024
/*
 * packets waiting for their QP's CPU (eroce_qp_send_batch()), at most:
 * room for what a fatal NAK sends ahead of itself; a packet sent on its
 * own (an ACK, a NAK) finds twice as much, so a NAK still fits behind
 */
#define EROCE_TXQ_MAX		(EROCE_RESP_FATAL_BUDGET + EROCE_REQ_BUDGET)
/* the QP's CPU follows its peer's requests after this many in a row */
#define EROCE_FOLLOW_PKTS	16
#define EROCE_ACKREQ_EVERY	32	/* AckReq at least this often */
/* adaptive RTO: 4 * rttvar is worth at least this much */
#define EROCE_RTO_GRANULARITY_NS	(100 * NSEC_PER_USEC)
/* shortest tail-loss probe timeout */
#define EROCE_TLP_MIN_NS	(200 * NSEC_PER_USEC)

struct eroce_req {
	struct eroce_swqe *swqe;	/* sq.num_slots entries */
	u8 *copies;			/* sq.num_slots * sq.slot_size */
	u32 head;			/* SQ entries fetched */
	u32 cur;			/* next SQ entry to transmit */
	u32 cur_offset;			/* bytes of cur sent */
	u32 psn;			/* next PSN to send */
	u32 max_psn;			/* beyond the highest PSN ever sent */
	/* the oldest entry not completed is the SQ's consumer index */
	u32 una_psn;			/* oldest unacknowledged PSN */
	u32 since_ackreq;
	u8 retry_left;
	u8 rnr_retry_left;
	u8 backoff;			/* consecutive timeouts */
	bool rnr_wait;			/* timer runs an RNR delay */
	bool timer_armed;
	bool tlp_armed;			/* the timer runs the probe timeout */
	/* selective repeat: a hole up to sr_hole was resent, the rest kept */
	bool sr_hole_open;
	u32 sr_hole;
	bool tlp_sent;			/* probed since the last progress */
	/*
	 * Packets the window allows after a retransmit timeout: 1, plus
	 * each packet acknowledged since (slow start); 0 once it is back at
	 * max_inflight_pkts, which alone limits it then
	 */
	u32 cwnd;
	struct hrtimer timer;		/* retransmit, probe and RNR timer */
	/* round-trip time, RFC 6298 style, from one timed PSN at a time */
	bool rtt_timing;		/* rtt_psn is being timed */
	u32 rtt_psn;
	u64 rtt_start_ns;
	u64 srtt_ns;			/* 0: no sample yet */
	u64 rttvar_ns;
};

/*
 * Rate control of one QP (eroce_rate.c): pacing to the lowest of the QP's
 * rate limit, the DCQCN rate and the device's max_rate_mbps, and the
 * DCQCN reaction point.  Rates in kb/s; 0 means no limit.
 */
struct eroce_rate {
	struct hrtimer timer;		/* pacing: wakes the work item */
	u64 next_ns;			/* earliest start of the next packet */
	bool backlogged;		/* held back since it last ran dry */
	bool stalled;			/* stopped by other than the pacer */
	u64 stall_debt_ns;		/* how far behind its rate it stopped */
	u32 limit_kbps;			/* IB_QP_RATE_LIMIT */
	/* DCQCN reaction point: active from a CNP until back at line rate */
	bool cc_active;
	u32 rc_kbps;			/* current rate */
	u32 rt_kbps;			/* target rate */
	u32 alpha;			/* 0 .. EROCE_DCQCN_ALPHA_ONE */
	u32 stage;			/* increase events since the last cut */
	u64 alpha_ns;			/* last alpha update */
	u64 inc_ns;			/* last rate increase event */
	u64 inc_bytes;			/* sent since the last increase event */
	/* DCQCN notification point: the last CNP this QP sent */
	u64 cnp_sent_ns;
};

#define EROCE_DCQCN_ALPHA_ONE	1024

struct eroce_dev;
struct sk_buff;
struct eroce_bth;
struct eroce_opcode_info;

/* a received packet on its way through the engines */
struct eroce_rx {
	struct eroce_dev *edev;
	struct sk_buff *skb;		/* holds the BTH and what follows */
	/* skb holds other packets too: kept as a copy (eroce_resp_sr.c) */
	bool skb_shared;
	/* the IP header it was sent with; valid while it is received */
	const void *iph;
	const struct eroce_opcode_info *info;
	struct eroce_bth *bth;
	u8 opcode;
	u32 psn;
	void *payload;
	u32 paylen;
	/* the receiving VLAN device's id, or -1: skb->dev is not kept */
	int vlan_id;
};

/* selective repeat: a request kept until the PSNs before it arrive */
struct eroce_ooo {
	/* reference held, no dst, no dev; NULL: slot empty */
	struct sk_buff *skb;
	struct eroce_rx pkt;		/* points into skb */
	u32 truesize;			/* charged to eroce_dev.ooo_bytes */
};

/*
 * bytes of kept packets a device may hold, over all its QPs, with the
 * windows of slots that hold them (eroce_dev.ooo_bytes)
 */
#define EROCE_OOO_BUDGET	(16 << 20)

struct eroce_resp {
	u32 epsn;			/* next PSN expected */
	/*
	 * selective repeat: EROCE_SR_WINDOW slots by PSN while a packet is
	 * kept, else NULL
	 */
	struct eroce_ooo *ooo;
	u32 ooo_count;
	u32 msn;
	bool nak_sent;			/* sequence NAK for epsn is out */
	/*
	 * Selective repeat: a NAK told the requester that the PSNs before
	 * sr_hole_end are missing, and it sends them again together; a
	 * hole that the drain finds before sr_hole_end is not named again.
	 */
	bool sr_hole_told;
	u32 sr_hole_end;
	/* EROCE_OPF_SEND/WRITE of the message in progress, 0 between */
	u32 in_msg;
	/* receive WQE being filled (SEND, WRITE with immediate) */
	bool have_rwqe;
	void *rwqe;			/* kernel copy, rwqe_size bytes */
	u32 rwqe_size;
	u32 rcv_len;
	/*
	 * RDMA WRITE in progress.  The MR is looked up by wr_rkey for each
	 * packet, never held from one to the next: a deregistered or
	 * invalidated key fails the next packet at once.
	 */
	u32 wr_rkey;
	u64 wr_va;
	u32 wr_left;
	u32 wr_len;
	/* responses owed, in PSN order */
	struct eroce_rsp *rsp;		/* rsp_size entries */
	u32 rsp_size;			/* power of two */
	u32 rsp_head;
	u32 rsp_tail;
	/* rsp_size / 2 entries, in rsp's allocation, after it */
	struct eroce_atomic_res *atomic;
	u32 atomic_next;
};

/* who runs a QP's engines from process context (eroce_qp_run()) */
enum eroce_qp_runner {
	EROCE_RUN_NONE,			/* nobody, or the receive softirq */
	EROCE_RUN_WORK,			/* the QP's work item */
	EROCE_RUN_DOORBELL,		/* the poster of a user doorbell */
};

struct eroce_qp_engine {
	/* guards req, resp and the QP's SQ/RQ consumer side in the engines */
	spinlock_t lock;
	struct delayed_work work;	/* requester and read responder */
	int cpu;			/* the QP's CPU: work item, responses */
	int follow_cpu;			/* where the peer's requests arrive */
	u32 follow_pkts;		/* how many in a row arrived there */
	bool dead;			/* QP being destroyed: no new work */
	enum eroce_qp_runner runner;	/* who runs the engines now */
	bool tx_stalled;		/* a packet was dropped on the way out */
	bool comm_est;			/* IB_EVENT_COMM_EST raised (RTR) */
	bool sqd_notify;		/* IB_EVENT_SQ_DRAINED still owed */
	struct dst_cache route;		/* route of attrs.av, per CPU */
	/* packets made away from the QP's CPU, waiting to be sent there */
	struct sk_buff_head txq;
	struct eroce_req req;
	struct eroce_resp resp;
	struct eroce_rate rate;
};

struct eroce_qp;

/* eroce_sched.c: the workqueue and the kicks */
int eroce_wq_init(void);
void eroce_wq_exit(void);
void eroce_qp_kick(struct eroce_qp *qp);
void eroce_qp_kick_later(struct eroce_qp *qp);
struct eroce_tx_batch;
bool eroce_qp_tx_here(struct eroce_qp *qp);
int eroce_qp_tx_drain(struct eroce_qp *qp);
void eroce_qp_tx_purge(struct eroce_qp *qp);
int eroce_qp_send(struct eroce_qp *qp, struct sk_buff *skb);
int eroce_qp_send_batch(struct eroce_qp *qp, struct eroce_tx_batch *b);
void eroce_qp_tx_follow(struct eroce_qp *qp);
bool eroce_qp_work_misplaced(struct eroce_qp *qp);

/* eroce_qp_event.c: QP events and the engines' error primitives */
void eroce_qp_err_register(void (*enter_err)(struct eroce_qp *qp));
bool eroce_qp_mark_err(struct eroce_qp *qp);
void eroce_qp_fatal(struct eroce_qp *qp, enum ib_event_type event);
void eroce_qp_event(struct eroce_qp *qp, enum ib_event_type type);
void eroce_qp_rcvd(struct eroce_qp *qp);
void eroce_req_check_drained(struct eroce_qp *qp);

/* eroce_task.c: engine life cycle, transitions, the work function */
struct eroce_srq;
void eroce_task_init(void);
int eroce_qp_engine_init(struct eroce_qp *qp, struct eroce_srq *srq);
void eroce_qp_engine_free(struct eroce_qp *qp);
void eroce_qp_engine_fini(struct eroce_qp *qp);
void eroce_qp_engine_modify(struct eroce_qp *qp, enum ib_qp_state cur,
			    enum ib_qp_state next, struct eroce_rsp **rsp,
			    u32 rsp_size);
void eroce_qp_doorbell(struct eroce_qp *qp);
void eroce_qp_flush_locked(struct eroce_qp *qp);
void eroce_qp_flush_rq(struct eroce_qp *qp);

/*
 * the sender (eroce_req.c, eroce_req_match.c; what its files share is in
 * eroce_req.h)
 */
bool eroce_req_run(struct eroce_qp *qp);
void eroce_req_flush(struct eroce_qp *qp);
enum hrtimer_restart eroce_req_timer(struct hrtimer *timer);
void eroce_req_rcv_response(struct eroce_qp *qp, struct eroce_rx *pkt);

/* eroce_resp.c */
void eroce_resp_rcv(struct eroce_qp *qp, struct eroce_rx *pkt);
void eroce_resp_flush(struct eroce_qp *qp);
void eroce_resp_reset(struct eroce_qp *qp);
void eroce_resp_free(struct eroce_qp *qp);

/* eroce_resp_queue.c */
bool eroce_resp_run_reads(struct eroce_qp *qp);
struct eroce_rsp *eroce_resp_room_alloc(u32 size);
void eroce_resp_room_set(struct eroce_qp *qp, struct eroce_rsp *rsp, u32 size);

/* eroce_rate.c */
void eroce_rate_init(struct eroce_qp *qp);
void eroce_rate_fini(struct eroce_qp *qp);
void eroce_rate_reset(struct eroce_qp *qp);
bool eroce_rate_wait(struct eroce_qp *qp);
void eroce_rate_sent(struct eroce_qp *qp, u32 bytes);
void eroce_rate_idle(struct eroce_qp *qp);
void eroce_rate_stalled(struct eroce_qp *qp);
void eroce_rate_cnp_rcvd(struct eroce_qp *qp);
void eroce_rate_ecn_ce(struct eroce_qp *qp);
u32 eroce_rate_kbps(struct eroce_qp *qp);

/* eroce_recv.c: the network layer's receive, and its one way up */
void eroce_recv_register(void (*up)(struct eroce_dev *edev,
				    struct eroce_rx *pkt,
				    const union ib_gid *sgid,
				    const union ib_gid *dgid,
				    bool mcast));
int eroce_recv_encap(struct sock *sk, struct sk_buff *skb);
void eroce_recv_looped(struct sk_buff *skb);

/* eroce_deliver.c: a received packet into one QP's transport */
void eroce_recv_cnp(struct eroce_dev *edev, struct eroce_rx *pkt,
		    const union ib_gid *sgid);
void eroce_recv_deliver(struct eroce_dev *edev, struct eroce_rx *pkt,
			const union ib_gid *sgid, struct eroce_qp *qp);

/* eroce_dispatch.c: where eroce_recv.c hands packets up */
void eroce_dispatch_init(void);

#endif /* EROCE_ENGINE_H */
