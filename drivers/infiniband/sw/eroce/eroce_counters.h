/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: the device counters, one EROCE_COUNTER(ID, name) per line.
 *
 * Included by eroce_stats.h (the enum) and eroce_stats.c (the names that
 * `rdma statistic` shows), each with its own definition of EROCE_COUNTER;
 * no include guard on purpose.  Documentation/admin-guide.rst describes
 * every counter.
 */
EROCE_COUNTER(TX_PACKETS, tx_packets)
EROCE_COUNTER(TX_BYTES, tx_bytes)
EROCE_COUNTER(TX_ERRORS, tx_errors)
EROCE_COUNTER(RX_PACKETS, rx_packets)
EROCE_COUNTER(RX_BYTES, rx_bytes)
EROCE_COUNTER(RETRANSMIT_TIMEOUTS, retransmit_timeouts)
EROCE_COUNTER(RETRANSMIT_NAK, retransmits_by_nak)
EROCE_COUNTER(RETRANSMIT_PACKETS, retransmitted_packets)
EROCE_COUNTER(TLP_PROBES, tlp_probes)
EROCE_COUNTER(SEQ_NAK_SENT, seq_err_naks_sent)
EROCE_COUNTER(SEQ_NAK_RCVD, seq_err_naks_rcvd)
EROCE_COUNTER(RNR_NAK_SENT, rnr_naks_sent)
EROCE_COUNTER(RNR_NAK_RCVD, rnr_naks_rcvd)
EROCE_COUNTER(ACCESS_NAK_SENT, remote_access_naks_sent)
EROCE_COUNTER(INVALID_NAK_SENT, invalid_request_naks_sent)
EROCE_COUNTER(REM_OP_NAK_SENT, remote_op_naks_sent)
EROCE_COUNTER(NAK_RCVD_FATAL, fatal_naks_rcvd)
EROCE_COUNTER(DUP_REQUESTS, duplicate_requests)
EROCE_COUNTER(ECN_CE_RCVD, ecn_marked_packets_rcvd)
EROCE_COUNTER(CNP_SENT, cnp_sent)
EROCE_COUNTER(CNP_RCVD, cnp_rcvd)
EROCE_COUNTER(CNP_HANDLED, cnp_handled)
EROCE_COUNTER(RATE_DECREASES, rate_decreases)
EROCE_COUNTER(RETRY_EXCEEDED, retry_exceeded)
EROCE_COUNTER(RNR_RETRY_EXCEEDED, rnr_retry_exceeded)
EROCE_COUNTER(DROP_SHORT, rx_drop_truncated)
EROCE_COUNTER(DROP_ICRC, rx_drop_icrc)
EROCE_COUNTER(DROP_BAD_HEADER, rx_drop_bad_header)
EROCE_COUNTER(DROP_BAD_OPCODE, rx_drop_bad_opcode)
EROCE_COUNTER(DROP_BAD_DGID, rx_drop_bad_dgid)
EROCE_COUNTER(DROP_NO_QP, rx_drop_no_qp)
EROCE_COUNTER(DROP_QP_TYPE, rx_drop_wrong_qp_type)
EROCE_COUNTER(DROP_QP_STATE, rx_drop_qp_state)
EROCE_COUNTER(DROP_BAD_PKEY, rx_drop_bad_pkey)
EROCE_COUNTER(DROP_BAD_QKEY, rx_drop_bad_qkey)
EROCE_COUNTER(DROP_BAD_SRC, rx_drop_wrong_source)
EROCE_COUNTER(DROP_NO_RECV_WQE, rx_drop_no_recv_wqe)
EROCE_COUNTER(DROP_UNEXPECTED_RESP, rx_drop_unexpected_response)
EROCE_COUNTER(DROP_NOMEM, rx_drop_nomem)
