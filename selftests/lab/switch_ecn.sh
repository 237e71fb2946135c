#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
# lab-switch-guest: yes
#
# switch_ecn.sh: an ECN-marking bottleneck on the switch, and DCQCN
# reacting to it (Documentation/admin-guide.rst "Congestion control").
# The switch is a guest of its own (selftests/run_lab.sh, "#
# lab-switch-guest: yes"); its port towards guest1 is the bottleneck:
# tbf 8 Mb/s (a fifth of what ib_write_bw moved unshaped in basic.sh, on
# a loaded machine: the sender must outrun it also on one twice as slow)
# with a RED child that marks ECN-capable packets CE above
# 15 KB of average queue (all of them above 45 KB), limit 200 KB.  One
# QP's packets in flight (max_inflight_pkts 64 of the default profile,
# about 70 KB of frames, twice that if a whole window is resent) fit in
# that queue whatever the machine's speed, so the queue never overflows
# (RED's pdrop stays 0) and eroce's packets, ECN capable, are marked,
# never dropped; RED drops early only what it cannot mark (perftest's
# TCP, not ECN capable: "early", a diagnostic).  guest0 (198.18.10.1) sends ib_write_bw 64 KiB messages
# to guest1 (198.18.10.2) through it, both eroce0s ECN capable (ecn 1)
# with lib_rdma.sh dcqcn_knobs (line rate 400 Mb/s, DCQCN's timers set
# for a round trip of milliseconds), twice:
#   cc dcqcn  the switch marked packets (RED's "marked" moved) and its
#             queue never overflowed (pdrop); guest1 counted CE-marked packets
#             (ecn_marked_packets_rcvd) and sent CNPs (cnp_sent); guest0
#             received CNPs (cnp_rcvd) and cut its rate (cnp_handled,
#             rate_decreases); the transfer finished, both devices moved
#             the bytes (tx_bytes on guest0, rx_bytes on guest1, at least
#             size x iterations), guest1 saw no RoCE packet go missing
#             (no seq_err_naks_sent), no retry ran out, nothing was
#             dropped as malformed
#   cc none   the same bottleneck marks again, guest1 counts the marks,
#             but no CNP is sent or received and no rate is cut: the CNP
#             checks above are not met by traffic alone
# The switch learns of each run's start and end through the shared
# folder (CC.set, CC.armed, CC.done) and tells the hosts its counters
# (CC.switch).
# Run: selftests/run_lab.sh selftests/lab/switch_ecn.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"
# shellcheck source=../lib_lab.sh
. "$(dirname "$0")/../lib_lab.sh"

DEV=eroce0
RUNS="dcqcn none"
SNAP=$RDMA_TMP/switch_ecn.stats
SIZE=65536
ITERS=$(perftest_iters 60)
# the QPs' ACK timeout, 1.07 s (basic.sh: perftest's 67 ms runs a QP out
# of retries on a loaded host)
QP_TIMEOUT=18
# ib_write_bw's limit, s: 60 x 64 KiB take 4 s at 8 Mb/s, and DCQCN
# may hold the sender near its floor (2 Mb/s: 16 s)
XFER=150
DROPS="rx_drop_truncated rx_drop_icrc rx_drop_bad_header rx_drop_bad_opcode"

# ---- the switch --------------------------------------------------------------

switch_main() {
	local cc m0 d0 e0 m d e
	ktap_plan $((2 + 2 * 2))
	lab_setup_ktap
	PORT1=$(lab_switch_port 1)
	modprobe -q -a sch_tbf sch_red
	if run tc qdisc add dev "$PORT1" root handle 1: tbf rate 8mbit burst 16kb latency 100ms &&
		run tc qdisc add dev "$PORT1" parent 1:1 handle 10: red limit 200000 \
			min 15000 max 45000 avpkt 1100 burst 20 bandwidth 8mbit probability 0.2 ecn; then
		ktap_diag "switch: $(tc qdisc show dev "$PORT1" | tr '\n' ';')"
		ktap_ok bottleneck_set
	else
		ktap_diag "$LAST_OUT"
		ktap_bail "the bottleneck on $PORT1 could not be set"
	fi
	lab_switch_ready
	for cc in $RUNS; do
		if ! lab_wait "$cc.set" 300 >/dev/null; then
			ktap_fail "${cc}_switch_marked" "the hosts did not start cc $cc"
			ktap_fail "${cc}_switch_queue_not_full" "the hosts did not start cc $cc"
			continue
		fi
		m0=$(lab_qdisc_stat "$PORT1" red marked) d0=$(lab_qdisc_stat "$PORT1" red pdrop)
		e0=$(lab_qdisc_stat "$PORT1" red early)
		lab_signal "$cc.armed"
		lab_wait "$cc.done" $((2 * XFER)) >/dev/null ||
			ktap_diag "cc $cc: the hosts did not say they were done"
		m=$(($(lab_qdisc_stat "$PORT1" red marked) - m0))
		d=$(($(lab_qdisc_stat "$PORT1" red pdrop) - d0))
		e=$(($(lab_qdisc_stat "$PORT1" red early) - e0))
		lab_signal "$cc.switch" "marked $m, queue full $d, early drops (not ECN capable) $e"
		ktap_diag "cc $cc: the bottleneck marked $m, dropped $d with its queue full, $e early; $(tc -s qdisc show dev "$PORT1" | grep -E 'Sent|marked' | tr -s ' \n' ' ')"
		ktap_result "${cc}_switch_marked" "$([ "$m" -gt 0 ]; echo $?)" "RED marked nothing"
		ktap_result "${cc}_switch_queue_not_full" "$([ "$d" = 0 ]; echo $?)" \
			"the bottleneck's queue overflowed: $d dropped (pdrop)"
	done
	ktap_finish
}

# ---- the hosts ---------------------------------------------------------------

# shellcheck disable=SC2317  # run by require
setup() {
	eroce_load && provider_install && lab_rdma_link "$DEV" eroce
}

# delta COUNTER: its change on eroce0 since SNAP ('?' when unknown)
delta() {
	stat_delta "$DEV/1" "$SNAP" "$1" 2>/dev/null || echo '?'
}

gt0() {
	local d
	d=$(delta "$1")
	[ "$d" != '?' ] && [ "$d" -gt 0 ]
}

eq0() {
	[ "$(delta "$1")" = 0 ]
}

# write_bw CC: ib_write_bw from guest0 to guest1 through the bottleneck
write_bw() {
	local cc=$1 gid
	gid=$(gid_index_of "$DEV" "$LAB_IP")
	lab_srv_cli "bw_$cc" 1 18600 "$XFER" \
		ib_write_bw -d "$DEV" -x "$gid" -p 18600 -s "$SIZE" -n "$ITERS" -F \
		--report_gbits -u "$QP_TIMEOUT"
	if [ "$LAB_RC" = 0 ] || perftest_no_report "$LAB_OUT"; then
		ktap_diag "cc $cc: ib_write_bw $LAB_SECS s"
		ktap_ok "${cc}_transfer"
	else
		lab_srv_cli_diag
		ktap_fail "${cc}_transfer" "ib_write_bw rc=$LAB_RC"
	fi
}

# moved CC: this side's eroce0 moved the transfer's bytes, dropped
# nothing as malformed, ran out of no retries; on guest1 no RoCE packet
# went missing ahead of another (the switch lost none)
moved() {
	local cc=$1 c d want=$((SIZE * ITERS)) dir=tx_bytes bad=
	[ "$LAB_I" = 0 ] || dir=rx_bytes
	d=$(delta "$dir")
	[ "$d" != '?' ] && [ "$d" -ge "$want" ] || bad+="$dir +$d, want $want or more; "
	[ "$LAB_I" = 0 ] || eq0 seq_err_naks_sent || bad+="seq_err_naks_sent +$(delta seq_err_naks_sent); "
	for c in $DROPS retry_exceeded; do
		eq0 "$c" || bad+="$c +$(delta "$c"); "
	done
	ktap_result "${cc}_bytes_moved" "$([ -z "$bad" ]; echo $?)" "$bad"
}

# reacted CC: the congestion counters of this side
reacted() {
	local cc=$1 c bad=
	if [ "$LAB_I" = 1 ]; then
		gt0 ecn_marked_packets_rcvd || bad+="no ecn_marked_packets_rcvd; "
		if [ "$cc" = dcqcn ]; then
			gt0 cnp_sent || bad+="no cnp_sent; "
		else
			eq0 cnp_sent || bad+="cnp_sent +$(delta cnp_sent) with cc none; "
		fi
	elif [ "$cc" = dcqcn ]; then
		for c in cnp_rcvd cnp_handled rate_decreases; do
			gt0 "$c" || bad+="no $c; "
		done
	else
		for c in cnp_rcvd cnp_handled rate_decreases; do
			eq0 "$c" || bad+="$c +$(delta "$c") with cc none; "
		done
	fi
	ktap_result "${cc}_$([ "$LAB_I" = 1 ] && echo receiver || echo sender)_counters" \
		"$([ -z "$bad" ]; echo $?)" "$bad"
}

# one_run CC: cc CC on this guest's eroce0, the transfer, its counters
one_run() {
	local cc=$1
	if ! run dcqcn_knobs "$cc" "$DEV"; then
		ktap_diag "$LAST_OUT"
		ktap_fail "${cc}_transfer" "cc $cc not set"
		ktap_fail "${cc}_bytes_moved" "cc $cc not set"
		ktap_fail "${cc}_$([ "$LAB_I" = 1 ] && echo receiver || echo sender)_counters" "cc $cc not set"
		return
	fi
	stat_snap "$DEV/1" "$SNAP"
	lab_signal "$cc.set"
	lab_wait "$cc.armed" "" "$LAB_SWITCH" >/dev/null ||
		ktap_diag "cc $cc: no word from the switch"
	write_bw "$cc"
	lab_signal "$cc.done"
	ktap_diag "cc $cc: switch $(lab_get "$cc.switch" "$LAB_SWITCH" 60 2>/dev/null || echo '?')"
	ktap_diag "cc $cc: guest$LAB_I $(stat_changes "$DEV/1" "$SNAP")"
	moved "$cc"
	reacted "$cc"
}

host_main() {
	local cc
	ktap_plan $((4 + 3 * 2))
	[ "$LAB_N" = 2 ] || ktap_bail "switch_ecn.sh needs 2 hosts, has $LAB_N"
	[ -n "$LAB_SWITCH" ] || ktap_bail "switch_ecn.sh needs a switch guest"
	lab_setup_ktap
	require setup
	ktap_ok eroce_link
	lab_switch_wait_ktap
	# shellcheck disable=SC2086  # $PING may be "busybox ping"
	if lab_barrier up >/dev/null && $PING -c 3 -W 5 "$(lab_ip "$(lab_peer)")" >/dev/null; then
		ktap_ok peer_reachable
	else
		ktap_bail "peer $(lab_ip "$(lab_peer)") not reachable through the switch"
	fi
	for cc in $RUNS; do
		one_run "$cc"
	done
	ktap_finish
}

if lab_is_switch; then
	switch_main
else
	host_main
fi
