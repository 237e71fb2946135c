#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
#
# loss.sh: RC traffic survives a lossy link and the loss-recovery counters
# show what happened.  One impairment at a time, applied with netem on BOTH
# ends' egress (veth1 in ns1 and veth2 in ns2), so data packets, ACKs/NAKs
# and read responses are all hit:
#   loss      loss 1%
#   reorder   delay 1ms reorder 95%  (5% of the packets are held back 1 ms)
# (duplication and corruption are integrity.sh's, where every byte is
# checked and the impairments' own counters are matched with eroce's).
# Under each: ib_write_bw, ib_read_bw and ib_send_bw (-s 65536 -n 200;
# -s 4096 -n 50 under reordering) must finish with exit 0 on both sides,
# ibv_rc_pingpong -c likewise
# (checks every received buffer; its ACKs are spared, see scenario()) must
# pass, and the counters must show the
# recovery: retransmit_timeouts / retransmits_by_nak / seq_err_naks_* for
# loss and reorder.  On the debug kernel each tool runs 1/8 of its
# iterations (200 -> 25; all 50 under reordering), and only one tool per
# impairment runs (DEBUG_KEEP below).
# Run: selftests/run_vm.sh selftests/eroce/loss.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

SRV=198.18.0.2
# shellcheck disable=SC2034  # read by ktap_srv_cli (lib_rdma.sh)
SC_T=90
B1=$RDMA_TMP/b1
B2=$RDMA_TMP/b2
# the debug kernel's subset (lib.sh debug_subset): READ under loss
# (timeouts, READs asked for again), WRITE under reordering (sequence
# NAKs, go-back-N)
DEBUG_KEEP="loss_ib_read_bw reorder_ib_write_bw"

impair() {
	netem_set "$NS1" veth1 "$@" && netem_set "$NS2" veth2 "$@"
}

# impair_data NETEM_ARGS...: the same for packets of 128 bytes or more
impair_data() {
	netem_data_set "$NS1" veth1 "$@" && netem_data_set "$NS2" veth2 "$@"
}

clear_impair() {
	netem_clear "$NS1" veth1
	netem_clear "$NS2" veth2
}

# moved_any COUNTER...: one of the counters grew on eroce1 or eroce2 since
# the snapshot taken at the start of the scenario
moved_any() {
	stat_moved eroce1/1 "$B1" "$@" || stat_moved eroce2/1 "$B2" "$@"
}

# scenario NAME COUNTERS NETEM_ARGS...: COUNTERS is a space-separated list,
# one of which must move ("" = report only)
scenario() {
	local name=$1 counters=$2 t n=${SCENARIO_N:-$(debug_scaled 200)} sz=${SCENARIO_S:-65536}
	shift 2

	stat_snap eroce1/1 "$B1"
	stat_snap eroce2/1 "$B2"
	[ -z "${SCENARIO_UNBATCHED:-}" ] || eroce_tx_batch_all 0
	if ! run impair "$@"; then
		ktap_diag "$LAST_OUT"
		ktap_bail "netem $* failed"
	fi
	ktap_diag "netem $* on veth1 and veth2"
	for t in ib_write_bw ib_read_bw ib_send_bw; do
		debug_subset "${name}_$t" && continue
		ktap_srv_cli "${name}_$t" perftest_ok \
			"$t" -d eroce2 -x "$G2" -s "$sz" -n "$n" -- \
			"$t" -d eroce1 -x "$G1" -s "$sz" -n "$n" "$SRV"
	done
	# ibv_rc_pingpong ends without a handshake: a side whose last
	# ACK is lost retransmits to a QP its peer has destroyed already,
	# until retry_cnt runs out (on any RC device).  So its ACKs pass;
	# its data packets, both ways, take the impairment.  (Not on the
	# debug kernel, which runs no pingpong and has no prio qdisc.)
	if ! debug_subset "${name}_rc_pingpong_data"; then
		if ! run impair_data "$@"; then
			ktap_diag "$LAST_OUT"
			ktap_bail "netem $* on data packets failed"
		fi
		ktap_srv_cli "${name}_rc_pingpong_data" "out_has \"$n iters in [0-9.]+ seconds\"" \
			ibv_rc_pingpong -d eroce2 -g "$G2" -s "$sz" -n "$n" -c -- \
			ibv_rc_pingpong -d eroce1 -g "$G1" -s "$sz" -n "$n" -c "$SRV"
		ktap_diag "data band on veth1: $(netem_band_stats "$NS1" veth1)"
		ktap_diag "data band on veth2: $(netem_band_stats "$NS2" veth2)"
	fi
	clear_impair
	[ -z "${SCENARIO_UNBATCHED:-}" ] || eroce_tx_batch_all 1
	ktap_diag "eroce1: $(stat_changes eroce1/1 "$B1")"
	ktap_diag "eroce2: $(stat_changes eroce2/1 "$B2")"
	if [ -n "$counters" ]; then
		# shellcheck disable=SC2086
		if moved_any $counters; then
			ktap_ok "${name}_counters"
		else
			ktap_fail "${name}_counters" "none of $counters moved"
		fi
	fi
}

ktap_plan 11
require eroce_pair_setup
require pair_gids
pair_gids
kmsg_mark
# on the debug kernel READ's 1,600 packets leave in some 150 batches,
# which netem sees as 150 packets: 1% of them is often none, so there
# they go one at a time
SCENARIO_UNBATCHED=$([ "$DEBUG_KERNEL" = 1 ] && echo 1) \
	scenario loss "retransmit_timeouts retransmits_by_nak seq_err_naks_sent seq_err_naks_rcvd" \
	loss 1%
# go-back-N resends a whole window per reordered packet (selective repeat
# is the cure): fewer, 4 KiB messages keep this scenario within its time;
# integrity.sh moves megabytes under the same reordering.  On the debug
# kernel the other scenarios run 1/8 (25 x 64 KiB, still some 1600 packets
# per tool for 1% loss or duplication to hit), this one all 50: a packet
# held back 1 ms is reordered only when another one overtakes it, rarer at
# the debug kernel's packet rate, and only one tool runs
SCENARIO_N=50 SCENARIO_S=4096 SC_T=120 scenario reorder "seq_err_naks_sent seq_err_naks_rcvd retransmits_by_nak duplicate_requests" \
	delay 1ms reorder 95%
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -iE "eroce.*(bug|warn)"'
[ "$KTAP_FAIL" = 0 ] || ktap_diag "$(dmesg_since_mark | grep -v ADDRCONF | tail -n 20)"
ktap_finish
