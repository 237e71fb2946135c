#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
#
# recovery.sh: the timer and loss-recovery tunables beyond the spec's
# fixed timer (Documentation/admin-guide.rst "The knobs", design.rst
# "Timers and loss recovery").
#   - adaptive_rto: after one SEND gives an RTT sample, a peer that
#     vanishes is given up on after retry_cnt + 1 RTOs of about the RTT
#     (floored by min_rto_us), not of the QP's timeout 18 (1.07 s each):
#     retry exceeded in 8 ms .. 1.5 s instead of >= 4.3 s.  The QP's
#     measured srtt_us shows in `rdma -dd resource show qp`.
#   - loss_recovery tlp: eroce_integrity SENDs one at a time on one QP
#     (every message a tail) under netem loss 5% on both veths, once with
#     gbn and once with tlp on both devices: with tlp, probes go out
#     (tlp_probes) and fewer losses wait for a retransmit timeout than
#     with gbn; every byte is checked.
#   - loss_recovery sr: SEND and WRITE over 4 QPs under 2% loss: with sr
#     on both devices the responder keeps packets after a hole
#     (ooo_packets_placed) and the requester resends only what is missing
#     (selective_retransmits), fewer packets than with gbn on both; with
#     sr only on the requester, the responder ignores the offer and both
#     fall back to go-back-N.
# Run: selftests/run_vm.sh selftests/eroce/recovery.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_retry"
INTEGRITY="$EROCE_ROOT/selftests/tools/eroce_integrity"
PORT=18600
T1=$IBSYS/eroce1/tuning
T2=$IBSYS/eroce2/tuning
SRV=198.18.0.2
B1=$RDMA_TMP/b1
B2=$RDMA_TMP/b2
LOSS_REQ="tc -n $NS1 qdisc replace dev veth1 root netem loss 100%"

build_tool() {
	[ -x "$TOOL" ] && [ "$TOOL" -nt "$TOOL.c" ] && return 0
	make -s -C "$EROCE_ROOT/selftests/tools" eroce_retry eroce_integrity
}

both() {
	echo "$2" >"$T1/$1" && echo "$2" >"$T2/$1"
}

test_adaptive_rto() {
	local rc=0 ms dump=$RDMA_TMP/qp_details srtt

	both profile default
	echo 1 >"$T1/adaptive_rto"
	echo 2000 >"$T1/min_rto_us"
	rm -f "$dump"
	run timeout -k 5 60 "$TOOL" --mode retry --op write --timeout 18 \
		--retry-cnt 3 --limit 30 \
		--hook "rdma -dd resource show qp link eroce1/1 >$dump; $LOSS_REQ" \
		eroce1 "$G1" eroce2 "$G2" || rc=$?
	netem_clear "$NS1" veth1
	ms=$(awk '$1 == "elapsed_ms" { print $2 }' <<<"$LAST_OUT")
	ktap_diag "adaptive_rto: rc=$rc elapsed_ms=${ms:-none}"
	ktap_result adaptive_rto_gives_up_after_rtt_based_timeouts \
		"$([ $rc = 0 ] && [ -n "$ms" ] && [ "$ms" -ge 8 ] && [ "$ms" -le 1500 ]; echo $?)" \
		"elapsed ${ms:-none} ms, want 8..1500 (timeout 18 alone: >= 4300)"
	srtt=$(awk '/drv_sq_tail/ { for (i = 1; i < NF; i++) if ($i == "drv_srtt_us") print $(i + 1) }' \
		"$dump" 2>/dev/null | sort -n | tail -n 1)
	ktap_diag "srtt_us ${srtt:-none}"
	ktap_result srtt_shown "$([ "${srtt:-0}" -gt 0 ]; echo $?)" \
		"no drv_srtt_us > 0 in rdma -dd resource show qp"
	both profile default
}

# lossy_transfer TAG LOSS MODE1 MODE2 SECS ARGS...: eroce_integrity from
# eroce1 to eroce2 (client arguments ARGS, SECS at most), every byte
# checked, under netem loss LOSS on both veths, with loss_recovery MODE1
# on eroce1 (the requester) and MODE2 on eroce2; counters snapshot in
# B1/B2 before, the run's seconds in ELAPSED; returns the tool's status.
# eroce_integrity ends over TCP, so no side tears its QP down while the
# other still waits for an ACK.
lossy_transfer() {
	local tag=$1 loss=$2 secs=$5 rc=0 spid
	both profile default
	echo "$3" >"$T1/loss_recovery"
	echo "$4" >"$T2/loss_recovery"
	shift 5
	stat_snap eroce1/1 "$B1"
	stat_snap eroce2/1 "$B2"
	netem_set "$NS1" veth1 loss "$loss"
	netem_set "$NS2" veth2 loss "$loss"
	SECONDS=0
	ns2 "$INTEGRITY" -d eroce2 -g "$G2" -p "$PORT" -t "$secs" >"$RDMA_TMP/srv.out" 2>&1 &
	spid=$!
	wait_for 15 tcp_listening "$NS2" "$PORT"
	ns1 "$INTEGRITY" -d eroce1 -g "$G1" -p "$PORT" -t "$secs" "$@" \
		"$SRV" >"$RDMA_TMP/cli.out" 2>&1 || rc=1
	wait "$spid" || rc=1
	ELAPSED=$SECONDS
	PORT=$((PORT + 1))
	netem_clear "$NS1" veth1
	netem_clear "$NS2" veth2
	ktap_diag "$tag: eroce1 $(stat_changes eroce1/1 "$B1")"
	ktap_diag "$tag: eroce2 $(stat_changes eroce2/1 "$B2")"
	[ $rc = 0 ] || ktap_diag "$(tail -n 3 "$RDMA_TMP/cli.out" "$RDMA_TMP/srv.out")"
	both profile default
	return $rc
}

# lossy MODE: one QP, one message at a time (every message a tail: nothing
# follows it until it is acknowledged), 16 KiB in SENDs of 1..64 bytes,
# under 5% loss, loss_recovery MODE on both devices; sets TIMEOUTS and
# PROBES (both devices) and returns the tool's status.
lossy() {
	local rc=0
	lossy_transfer "$1" 5% "$1" "$1" 120 -q 1 -w 1 -o send -S 64 -b 16k -s 7 || rc=1
	TIMEOUTS=$(( $(stat_delta eroce1/1 "$B1" retransmit_timeouts) +
		     $(stat_delta eroce2/1 "$B2" retransmit_timeouts) ))
	PROBES=$(( $(stat_delta eroce1/1 "$B1" tlp_probes) +
		   $(stat_delta eroce2/1 "$B2" tlp_probes) ))
	ktap_diag "$1: ${ELAPSED}s, retransmit_timeouts $TIMEOUTS, tlp_probes $PROBES"
	return $rc
}

test_tlp() {
	local gbn_to tlp_to rc

	lossy gbn
	rc=$?
	gbn_to=$TIMEOUTS
	ktap_result gbn_sends_under_loss "$rc" "eroce_integrity failed"
	ktap_result gbn_sends_no_probes "$([ "$PROBES" = 0 ]; echo $?)" \
		"tlp_probes moved by $PROBES with loss_recovery gbn"

	lossy tlp
	rc=$?
	tlp_to=$TIMEOUTS
	ktap_result tlp_sends_under_loss "$rc" "eroce_integrity failed"
	ktap_result tlp_probes_sent "$([ "$PROBES" -gt 0 ]; echo $?)" \
		"tlp_probes did not move"
	ktap_result tlp_fewer_timeouts_than_gbn "$([ "$tlp_to" -lt "$gbn_to" ]; echo $?)" \
		"retransmit_timeouts: tlp $tlp_to, gbn $gbn_to"
}

# sr_run NAME MODE1 MODE2: eroce_integrity SEND and WRITE, 4 QPs x 32 WRs
# of up to 64 KiB, 2 MiB each, every byte checked, under 2% loss on both
# veths, loss_recovery MODE1 on eroce1 (the requester) and MODE2 on eroce2
sr_run() {
	local rc=0
	lossy_transfer "$1" 2% "$2" "$3" 150 -o send,write -b 2M -s 9 || rc=1
	RETX=$(stat_delta eroce1/1 "$B1" retransmitted_packets)
	SELECTIVE=$(stat_delta eroce1/1 "$B1" selective_retransmits)
	PLACED=$(stat_delta eroce2/1 "$B2" ooo_packets_placed)
	ktap_diag "$1: ${ELAPSED}s, retransmitted_packets $RETX, selective_retransmits $SELECTIVE, ooo_packets_placed $PLACED"
	ktap_result "${1}_every_byte" "$rc" "eroce_integrity failed"
}

test_sr() {
	local gbn_retx

	sr_run gbn_both gbn gbn
	gbn_retx=$RETX
	sr_run sr_both sr sr
	ktap_result sr_selective_retransmits "$([ "$SELECTIVE" -gt 0 ] && [ "$PLACED" -gt 0 ]; echo $?)" \
		"selective_retransmits $SELECTIVE, ooo_packets_placed $PLACED"
	ktap_result sr_sends_less_again_than_gbn "$([ "$RETX" -lt "$gbn_retx" ]; echo $?)" \
		"retransmitted_packets: sr $RETX, gbn $gbn_retx"
	# a responder without sr ignores the offer: plain go-back-N
	sr_run sr_requester_gbn_responder sr gbn
	ktap_result sr_falls_back_to_gbn "$([ "$SELECTIVE" = 0 ] && [ "$PLACED" = 0 ]; echo $?)" \
		"selective_retransmits $SELECTIVE, ooo_packets_placed $PLACED with eroce2 at gbn"
}

ktap_plan 14
require eroce_pair_setup
require pair_gids
pair_gids
require build_tool
kmsg_mark
test_adaptive_rto
test_tlp
test_sr
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
