/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: device counters shown by `rdma statistic`.
 *
 * EROCE_COUNTERS is the one list: it generates the enum and the names, so
 * the two cannot drift.  Documentation/admin-guide.rst explains each.
 * Counters are per-CPU and summed when read.
 */
#ifndef EROCE_STATS_H
#define EROCE_STATS_H

#include <linux/percpu.h>
#include <rdma/ib_verbs.h>

#define EROCE_COUNTERS(C)					\
	C(TX_PACKETS,		tx_packets)			\
	C(TX_BYTES,		tx_bytes)			\
	C(TX_ERRORS,		tx_errors)			\
	C(RX_PACKETS,		rx_packets)			\
	C(RX_BYTES,		rx_bytes)			\
	C(RETRANSMIT_TIMEOUTS,	retransmit_timeouts)		\
	C(RETRANSMIT_NAK,	retransmits_by_nak)		\
	C(RETRANSMIT_PACKETS,	retransmitted_packets)		\
	C(SEQ_NAK_SENT,		seq_err_naks_sent)		\
	C(SEQ_NAK_RCVD,		seq_err_naks_rcvd)		\
	C(RNR_NAK_SENT,		rnr_naks_sent)			\
	C(RNR_NAK_RCVD,		rnr_naks_rcvd)			\
	C(ACCESS_NAK_SENT,	remote_access_naks_sent)	\
	C(INVALID_NAK_SENT,	invalid_request_naks_sent)	\
	C(NAK_RCVD_FATAL,	fatal_naks_rcvd)		\
	C(DUP_REQUESTS,		duplicate_requests)		\
	C(CNP_RCVD,		cnp_rcvd)			\
	C(RETRY_EXCEEDED,	retry_exceeded)			\
	C(RNR_RETRY_EXCEEDED,	rnr_retry_exceeded)		\
	C(DROP_SHORT,		rx_drop_truncated)		\
	C(DROP_ICRC,		rx_drop_icrc)			\
	C(DROP_BAD_HEADER,	rx_drop_bad_header)		\
	C(DROP_BAD_OPCODE,	rx_drop_bad_opcode)		\
	C(DROP_BAD_DGID,	rx_drop_bad_dgid)		\
	C(DROP_NO_QP,		rx_drop_no_qp)			\
	C(DROP_QP_TYPE,		rx_drop_wrong_qp_type)		\
	C(DROP_QP_STATE,	rx_drop_qp_state)		\
	C(DROP_BAD_PKEY,	rx_drop_bad_pkey)		\
	C(DROP_BAD_QKEY,	rx_drop_bad_qkey)		\
	C(DROP_BAD_SRC,		rx_drop_wrong_source)		\
	C(DROP_PSN,		rx_drop_psn_out_of_window)	\
	C(DROP_NO_RECV_WQE,	rx_drop_no_recv_wqe)		\
	C(DROP_UNEXPECTED_RESP,	rx_drop_unexpected_response)	\
	C(DROP_NOMEM,		rx_drop_nomem)

#define EROCE_COUNTER_ENUM(id, str)	EROCE_CNT_##id,
enum eroce_counter {
	EROCE_COUNTERS(EROCE_COUNTER_ENUM)
	EROCE_NUM_COUNTERS
};
#undef EROCE_COUNTER_ENUM

struct eroce_stats {
	u64 count[EROCE_NUM_COUNTERS];
};

struct eroce_dev;

int eroce_stats_init(struct eroce_dev *edev);
void eroce_stats_fini(struct eroce_dev *edev);
struct rdma_hw_stats *eroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port_num);
int eroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);
u64 eroce_stats_read(struct eroce_dev *edev, enum eroce_counter cnt);

#endif /* EROCE_STATS_H */
