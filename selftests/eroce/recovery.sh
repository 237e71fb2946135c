#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
#
# recovery.sh: the timer and loss-recovery tunables beyond the spec's
# fixed timer (Documentation/admin-guide.rst "The knobs", design.rst
# "Timers and loss recovery").  The comparisons between modes lose the
# same chosen packets in both runs (lib_rdma.sh drop_once: each dropped
# once, its retransmission passes), never random ones.
#   - adaptive_rto: after one SEND gives an RTT sample, a peer that
#     vanishes is given up on after retry_cnt + 1 RTOs of that sample
#     (srtt + 4 * rttvar as `rdma -dd resource show qp` shows them before
#     the loss, floored by min_rto_us), not of the QP's timeout 18
#     (1.07 s each): no sooner than 95% of the four RTOs (a timer never
#     fires early), and sooner than halfway from them to four QP
#     timeouts (measured 49-87 ms against a limit near 2.2 s: a late
#     wake-up does not reach it, RTOs of the QP's timeout do).
#   - loss_recovery tlp: eroce_integrity SENDs one at a time on one QP
#     (every message a tail); 4 requests and 4 ACKs chosen by PSN are
#     dropped, once with gbn and once with tlp on both devices.  With
#     gbn each of the 8 losses waits for a retransmit timeout; with tlp,
#     probes go out (tlp_probes) and fewer losses wait for one; every
#     byte is checked.
#   - loss_recovery sr: SEND and WRITE over 4 QPs, 8 requests chosen by
#     PSN dropped: with sr on both devices the responder keeps packets
#     after a hole (ooo_packets_placed) and the requester resends only
#     what is missing (selective_retransmits), fewer packets than with
#     gbn on both; 8 consecutive PSNs dropped (a burst, as when a batch
#     is lost whole): one NAK names the whole hole and the requester
#     resends it at once, fewer NAKs and selective retransmits than
#     packets lost (before, one round trip per lost packet); with sr only
#     on the requester, the responder ignores the offer and both fall
#     back to go-back-N; the 8 holes again, 4 of their NAKs dropped too:
#     the responder names each hole again when the requester's tail-loss
#     probe (a packet it keeps already) comes (sr_holes_named_again),
#     rather than the flow waiting for the retransmit timeout.  Then sr
#     on both under 2% random loss on both veths: every byte arrives.
# On the debug kernel the transfers move less (tlp 2 KiB: 112 messages,
# the drops need 57 consecutive PSNs; sr 512 KiB: 256 PSNs per QP, the
# holes need 225; random loss 256 KiB), the deadlines are TIMEOUT_MULT
# times longer, and the time to give up and which mode needed fewer
# timeouts or retransmissions are bounds (ktap_bound: a miss is a skip);
# data, drops and counters stay strict.  The debug kernel runs only
# adaptive_rto, tlp and sr on both devices (lib.sh debug_subset): the
# gbn runs (baselines of comparisons), the fallback to go-back-N and sr
# under random loss (lifetimes.sh runs sr under 3% loss) are skips.
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
# bytes of the TLP runs, of the SR runs with chosen holes and of the SR run
# under random loss: an eighth on the debug kernel, the holes' runs only a
# quarter
TLP_BYTES=$(debug_scaled 16k)
SR_BYTES=$(debug_scaled 2M 4)
SR_RANDOM_BYTES=$(debug_scaled 2M)
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

# rto_us_of DUMP: the RTO in us eroce_req_rto_ns() derives from the
# srtt_us and rttvar_us of the QP in DUMP that has an RTT sample (QP
# timeout 18, min_rto_us 2000, no maximum)
rto_us_of() {
	awk '/drv_sq_tail/ { s = v = ""
		for (i = 1; i < NF; i++) {
			if ($i == "drv_srtt_us") s = $(i + 1)
			if ($i == "drv_rttvar_us") v = $(i + 1)
		}
		if (s > 0) { r = s + (4 * v > 100 ? 4 * v : 100)
			if (r > 4.096 * 2 ^ 18) r = 4.096 * 2 ^ 18
			if (r < 2000) r = 2000
			printf "%d %d %d\n", r, s, v; exit } }' "$1" 2>/dev/null
}

test_adaptive_rto() {
	local rc=0 ms dump=$RDMA_TMP/qp_details rto srtt var verdict

	both profile default
	echo 1 >"$T1/adaptive_rto"
	echo 2000 >"$T1/min_rto_us"
	rm -f "$dump"
	run timeout -k 5 "$(tmo 60)" "$TOOL" --mode retry --op write --timeout 18 \
		--retry-cnt 3 --limit "$(tmo 30)" \
		--hook "rdma -dd resource show qp link eroce1/1 >$dump; $LOSS_REQ" \
		eroce1 "$G1" eroce2 "$G2" || rc=$?
	netem_clear "$NS1" veth1
	ms=$(awk '$1 == "elapsed_ms" { print $2 }' <<<"$LAST_OUT")
	read -r rto srtt var <<<"$(rto_us_of "$dump")"
	ktap_diag "adaptive_rto: rc=$rc elapsed_ms=${ms:-none}; before the loss srtt_us ${srtt:-none} rttvar_us ${var:-none}: RTO ${rto:-none} us"
	# the elapsed time out of its window is a bound; the tool's status
	# (retry exceeded, then ERR and a flushed WR) and the sample are strict
	verdict=$(awk -v m="${ms:-x}" -v r="${rto:-0}" 'BEGIN {
		if (m !~ /^[0-9]+$/ || r == 0) { print "no elapsed time or no RTT sample"; exit }
		lo = 0.95 * 4 * r / 1000 - 1; hi = (4 * r / 1000 + 4 * 4.096 * 2 ^ 18 / 1000) / 2
		if (m < lo || m > hi) { printf "elapsed %d ms, want %.0f..%.0f (4 RTOs of %.1f ms; timeout 18 alone: >= 4295)", m, lo, hi, r / 1000; exit }
		print "ok" }')
	case "$rc:$verdict" in
	"0:elapsed "*)
		ktap_bound adaptive_rto_gives_up_after_rtt_based_timeouts 1 "rc=$rc: $verdict" ;;
	*)
		ktap_result adaptive_rto_gives_up_after_rtt_based_timeouts \
			"$([ $rc = 0 ] && [ "$verdict" = ok ]; echo $?)" "rc=$rc: $verdict" ;;
	esac
	ktap_result srtt_shown "$([ "${srtt:-0}" -gt 0 ]; echo $?)" \
		"no drv_srtt_us > 0 in rdma -dd resource show qp"
	both profile default
}

# lossy_transfer TAG LOSS MODE1 MODE2 SECS ARGS...: eroce_integrity from
# eroce1 to eroce2 (client arguments ARGS, SECS at most), every byte
# checked, with loss_recovery MODE1 on eroce1 (the requester) and MODE2 on
# eroce2, under LOSS: a netem loss rate ("2%") on both veths, or a
# function that installs drop_once filters on veth2 (SECS times
# TIMEOUT_MULT: the tool's -t deadline); counters snapshot in
# B1/B2 before, the run's seconds in ELAPSED, the packets the filters
# dropped in DROPPED; returns the tool's status.  eroce_integrity ends
# over TCP, so no side tears its QP down while the other still waits for
# an ACK.
lossy_transfer() {
	local tag=$1 loss=$2 secs rc=0 spid
	secs=$(tmo "$5")
	both profile default
	echo "$3" >"$T1/loss_recovery"
	echo "$4" >"$T2/loss_recovery"
	shift 5
	stat_snap eroce1/1 "$B1"
	stat_snap eroce2/1 "$B2"
	case "$loss" in
	*%)
		netem_set "$NS1" veth1 loss "$loss"
		netem_set "$NS2" veth2 loss "$loss" ;;
	*) "$loss" || ktap_diag "$tag: $loss failed" ;;
	esac
	SECONDS=0
	ns2 "$INTEGRITY" -d eroce2 -g "$G2" -p "$PORT" -t "$secs" >"$RDMA_TMP/srv.out" 2>&1 &
	spid=$!
	wait_for 60 tcp_listening "$NS2" "$PORT"
	ns1 "$INTEGRITY" -d eroce1 -g "$G1" -p "$PORT" -t "$secs" "$@" \
		"$SRV" >"$RDMA_TMP/cli.out" 2>&1 || rc=1
	wait "$spid" || rc=1
	ELAPSED=$SECONDS
	PORT=$((PORT + 1))
	DROPPED=$(drop_count "$NS2" veth2)
	netem_clear "$NS1" veth1
	netem_clear "$NS2" veth2
	drop_clear "$NS2" veth2
	ktap_diag "$tag: eroce1 $(stat_changes eroce1/1 "$B1")"
	ktap_diag "$tag: eroce2 $(stat_changes eroce2/1 "$B2")"
	[ $rc = 0 ] || ktap_diag "$(tail -n 3 "$RDMA_TMP/cli.out" "$RDMA_TMP/srv.out")"
	both profile default
	return $rc
}

# tail_drops: the SENDs and the ACKs whose PSNs end in 0x03, 0x13, 0x23,
# 0x33 and 0x0b, 0x1b, 0x2b, 0x3b (6 bits), once each: eight messages of
# the first 64 lose their request or their acknowledgment
TAIL_DROPS=8
tail_drops() {
	drop_once "$NS2" veth2 ingress 0x00/0xf0 0x3f 0x03 0x13 0x23 0x33 &&
		drop_once "$NS2" veth2 egress 0x11/0xff 0x3f 0x0b 0x1b 0x2b 0x3b
}

# both_delta COUNTER: its change on eroce1 plus on eroce2 since the
# snapshots in B1/B2 (nothing when a link lacks it)
both_delta() {
	local a b
	a=$(stat_delta eroce1/1 "$B1" "$1") && b=$(stat_delta eroce2/1 "$B2" "$1") &&
		echo $((a + b))
}

# lossy MODE: one QP, one message at a time (every message a tail: nothing
# follows it until it is acknowledged), TLP_BYTES (16 KiB) in SENDs of 1..64 bytes,
# tail_drops, loss_recovery MODE on both devices; sets TIMEOUTS and
# PROBES (both devices) and returns the tool's status.
lossy() {
	local rc=0
	lossy_transfer "$1" tail_drops "$1" "$1" 120 -q 1 -w 1 -o send -S 64 -b "$TLP_BYTES" -s 7 || rc=1
	TIMEOUTS=$(both_delta retransmit_timeouts)
	PROBES=$(both_delta tlp_probes)
	ktap_diag "$1: ${ELAPSED}s, $DROPPED of $TAIL_DROPS chosen packets dropped, retransmit_timeouts $TIMEOUTS, tlp_probes $PROBES"
	return $rc
}

test_tlp() {
	local gbn_to gbn_drops tlp_to rc why

	if ! debug_subset gbn_sends_under_loss gbn_sends_no_probes; then
		lossy gbn
		rc=$?
		gbn_to=$TIMEOUTS gbn_drops=$DROPPED
		ktap_result gbn_sends_under_loss "$rc" "eroce_integrity failed"
		ktap_result gbn_sends_no_probes "$([ "$PROBES" = 0 ]; echo $?)" \
			"tlp_probes moved by $PROBES with loss_recovery gbn"
	fi

	lossy tlp
	rc=$?
	tlp_to=$TIMEOUTS
	ktap_result tlp_sends_under_loss "$rc" "eroce_integrity failed"
	ktap_result tlp_probes_sent "$([ "$PROBES" -gt 0 ]; echo $?)" \
		"tlp_probes did not move"
	debug_subset tlp_fewer_timeouts_than_gbn && return
	# both runs lost the 8 chosen packets; each was a tail, so with gbn
	# each waited for the timer.  That much is strict; whether the probes
	# beat the timer (tlp fewer timeouts) is a bound: a slow machine's
	# late ACKs add timeouts to either run
	why="dropped gbn $gbn_drops tlp $DROPPED of $TAIL_DROPS; retransmit_timeouts: tlp $tlp_to, gbn $gbn_to (want >= $TAIL_DROPS)"
	if [ "$gbn_drops" = $TAIL_DROPS ] && [ "$DROPPED" = $TAIL_DROPS ] &&
		[ "$gbn_to" -ge $TAIL_DROPS ] && [ -n "$tlp_to" ]; then
		ktap_bound tlp_fewer_timeouts_than_gbn \
			"$([ "$tlp_to" -lt "$gbn_to" ]; echo $?)" "$why"
	else
		ktap_fail tlp_fewer_timeouts_than_gbn "$why"
	fi
}

# hole_drops: the first request packet (of any QP) whose PSN ends in 0x10,
# 0x30, ... 0xf0 (8 bits), once each: 8 holes with traffic behind them
HOLE_DROPS=8
hole_drops() {
	drop_once "$NS2" veth2 ingress 0x00/0xf0 0xff 0x10 0x30 0x50 0x70 0x90 0xb0 0xd0 0xf0
}

# burst_drops: the first request packet whose PSN ends in 0x10, 0x11, ...
# 0x17 (8 bits), once each: a hole of 8 consecutive PSNs, on one QP as a
# rule (the one that gets there first)
BURST_DROPS=8
burst_drops() {
	drop_once "$NS2" veth2 ingress 0x00/0xf0 0xff 0x10 0x11 0x12 0x13 0x14 0x15 0x16 0x17
}

# nak_drops: hole_drops, and the first sequence NAK (ACKNOWLEDGE, AETH
# syndrome 0x60) from eroce2 naming a PSN that ends in 0x10, 0x50, 0x90
# or 0xd0 (8 bits), once each: four holes whose NAK is lost, so that the
# responder, which NAKs a hole once, hears of it again only from the
# requester's tail-loss probe
NAK_DROPS=4
nak_drops() {
	local psn

	hole_drops || return	# adds veth2's clsact qdisc
	for psn in 0x10 0x50 0x90 0xd0; do
		drop_first "$NS2" veth2 egress match u8 0x11 0xff at 28 \
			match u32 "$psn" 0xff at 36 match u8 0x60 0xff at 40 || return
	done
}

# sr_run NAME LOSS MODE1 MODE2 [BYTES]: eroce_integrity SEND and WRITE, 4
# QPs x 32 WRs of up to 64 KiB, BYTES (SR_BYTES, 2 MiB) each, every byte
# checked, under LOSS (see lossy_transfer), loss_recovery MODE1 on eroce1
# (the requester) and MODE2 on eroce2
sr_run() {
	local rc=0
	lossy_transfer "$1" "$2" "$3" "$4" 150 -o send,write -b "${5:-$SR_BYTES}" -s 9 || rc=1
	RETX=$(stat_delta eroce1/1 "$B1" retransmitted_packets)
	SELECTIVE=$(stat_delta eroce1/1 "$B1" selective_retransmits)
	PLACED=$(stat_delta eroce2/1 "$B2" ooo_packets_placed)
	ktap_diag "$1: ${ELAPSED}s, $DROPPED chosen packets dropped, retransmitted_packets $RETX, selective_retransmits $SELECTIVE, ooo_packets_placed $PLACED"
	ktap_result "${1}_every_byte" "$rc" "eroce_integrity failed"
}

test_sr() {
	local gbn_retx gbn_drops why naks renamed timeouts

	if ! debug_subset gbn_both_every_byte; then
		sr_run gbn_both hole_drops gbn gbn
		gbn_retx=$RETX gbn_drops=$DROPPED
	fi
	sr_run sr_both hole_drops sr sr
	ktap_result sr_selective_retransmits "$([ "$SELECTIVE" -gt 0 ] && [ "$PLACED" -gt 0 ]; echo $?)" \
		"selective_retransmits $SELECTIVE, ooo_packets_placed $PLACED"
	# a burst: one NAK for the hole, one resend of all of it (the old
	# way took a NAK and a round trip per packet: 8 of each)
	sr_run sr_burst burst_drops sr sr
	naks=$(stat_delta eroce2/1 "$B2" seq_err_naks_sent)
	ktap_result sr_burst_one_nak_per_hole "$([ "$DROPPED" = $BURST_DROPS ] &&
		[ -n "$naks" ] && [ "$naks" -lt $BURST_DROPS ] &&
		[ "$SELECTIVE" -gt 0 ] && [ "$SELECTIVE" -lt $BURST_DROPS ]; echo $?)" \
		"$DROPPED of $BURST_DROPS consecutive PSNs dropped; seq_err_naks_sent $naks, selective_retransmits $SELECTIVE"
	# both runs lost the 8 chosen packets (strict); which resent fewer is
	# a bound: what gbn resends is what was in flight when the NAK came,
	# and a slow machine's late ACKs add timeouts to either run
	if ! debug_subset sr_sends_less_again_than_gbn; then
		why="dropped gbn $gbn_drops sr $DROPPED of $HOLE_DROPS; retransmitted_packets: sr $RETX, gbn $gbn_retx"
		if [ "$gbn_drops" = $HOLE_DROPS ] && [ "$DROPPED" = $HOLE_DROPS ] &&
			[ -n "$RETX" ] && [ -n "$gbn_retx" ]; then
			ktap_bound sr_sends_less_again_than_gbn \
				"$([ "$RETX" -lt "$gbn_retx" ]; echo $?)" "$why"
		else
			ktap_fail sr_sends_less_again_than_gbn "$why"
		fi
	fi
	# a lost NAK: the responder names the hole again when the probe
	# comes, and the flow need not wait for the retransmit timeout.
	# Which of the chosen NAKs are sent at all depends on the timing (a
	# hole the timer repaired first gets none), so at least one must
	# have been lost (strict); what followed is a bound: the probe waits
	# two smoothed round trips, and a slow machine's late ACKs add
	# timeouts
	sr_run sr_nak_lost nak_drops sr sr
	renamed=$(stat_delta eroce2/1 "$B2" sr_holes_named_again)
	timeouts=$(stat_delta eroce1/1 "$B1" retransmit_timeouts)
	why="$DROPPED chosen packets dropped ($HOLE_DROPS requests, up to $NAK_DROPS NAKs); sr_holes_named_again $renamed, retransmit_timeouts $timeouts"
	if [ "$DROPPED" -gt $HOLE_DROPS ] && [ -n "$renamed" ] && [ -n "$timeouts" ]; then
		ktap_bound sr_lost_nak_named_again "$([ "$renamed" -gt 0 ]; echo $?)" "$why"
		ktap_bound sr_lost_nak_no_timeout \
			"$([ "$timeouts" -lt $((DROPPED - HOLE_DROPS)) ]; echo $?)" "$why"
	else
		ktap_fail sr_lost_nak_named_again "$why"
		ktap_fail sr_lost_nak_no_timeout "$why"
	fi
	# a responder without sr ignores the offer: plain go-back-N
	if ! debug_subset sr_requester_gbn_responder_every_byte sr_falls_back_to_gbn; then
		sr_run sr_requester_gbn_responder hole_drops sr gbn
		ktap_result sr_falls_back_to_gbn "$([ "$DROPPED" = $HOLE_DROPS ] &&
			[ "$SELECTIVE" = 0 ] && [ "$PLACED" = 0 ]; echo $?)" \
			"$DROPPED of $HOLE_DROPS dropped; selective_retransmits $SELECTIVE, ooo_packets_placed $PLACED with eroce2 at gbn"
	fi
	# random loss in both directions (lost retransmissions, ACKs, NAKs):
	# the transfer survives, every byte checked; nothing compared
	debug_subset sr_random_loss_every_byte ||
		sr_run sr_random_loss 2% sr sr "$SR_RANDOM_BYTES"
}

ktap_plan 20
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
