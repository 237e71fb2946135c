#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 500
# vm-cpus: 2
#
# ordered_rx.sh: a QP's packets are received in the order they arrived,
# whatever CPU the others arrive on (Documentation/design.rst "Receive on
# many CPUs").  On a guest with two CPUs, RPS on both veths spreads the
# flows over both: every QP is a flow of its own (its UDP source port),
# and each CPU receives some of them.  eroce_integrity then moves data
# over 8 QPs on a path that drops and reorders nothing:
#   - ordered_send, ordered_write, ordered_read: every byte arrives
#   - ..._in_sequence: neither device saw a packet out of its QP's
#     sequence: seq_err_naks_sent, ooo_packets_placed, ooo_packets_not_kept
#     and retransmits_by_nak (a READ's responses out of order ask for the
#     rest again) stay 0.  With one socket queue shared by all CPUs, two
#     CPUs took packets of one QP off it and reached the QP in either
#     order, and these moved on a lossless path.
#   - ordered_uc_write: ib_write_bw -c UC over 8 QPs, 4 KiB WRITEs (4
#     packets each); ..._in_sequence: eroce2 lost no message to a packet
#     out of sequence (uc_messages_lost, rx_drop_uc_sequence +0)
#   - rps_spread: both CPUs received packets (the per-CPU "processed"
#     count of /proc/net/softnet_stat moved by ORDERED_MIN_PKTS on each),
#     else the run tested nothing
# ORDERED_BYTES (default 32M, a quarter on the debug kernel) is the amount
# per operation.
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_integrity"
BYTES=${ORDERED_BYTES:-$(debug_scaled 32M 4)}
MIN_PKTS=${ORDERED_MIN_PKTS:-200}
TMO=$(tmo 150)
PORT=18630
OUT=/tmp/ordered_rx
OOO="seq_err_naks_sent ooo_packets_placed ooo_packets_not_kept retransmits_by_nak"
mkdir -p "$OUT"

# rps_on: RPS over CPUs 0 and 1 on both veths' receive queues
rps_on() {
	ns1 sh -c 'echo 3 >/sys/class/net/veth1/queues/rx-0/rps_cpus' &&
		ns2 sh -c 'echo 3 >/sys/class/net/veth2/queues/rx-0/rps_cpus'
}

setup() {
	[ "$(nproc)" -ge 2 ] || return
	eroce_pair_setup && rps_on && eroce_tx_batch_all "${ORDERED_TX_BATCH:-0}"
}

# ooo_sum DEV: the sum of the out-of-sequence counters
ooo_sum() {
	# shellcheck disable=SC2086  # a list of names
	counter_sum "$1" $OOO
}

# run_op OP SEED: one eroce_integrity run of OP over 8 QPs, then its
# counters
run_op() {
	local op=$1 seed=$2 spid rc_s rc_c o1 o2 d1 d2

	o1=$(ooo_sum eroce1)
	o2=$(ooo_sum eroce2)
	ns2 "$TOOL" -d eroce2 -g "$G2" -p "$PORT" -t "$TMO" \
		>"$OUT/$op.server" 2>&1 &
	spid=$!
	wait_for 60 tcp_listening "$NS2" "$PORT"
	ns1 "$TOOL" -d eroce1 -g "$G1" -p "$PORT" -t "$TMO" -q 8 -o "$op" \
		-b "$BYTES" -s "$seed" 198.18.0.2 >"$OUT/$op.client" 2>&1
	rc_c=$?
	wait "$spid"
	rc_s=$?
	PORT=$((PORT + 1))
	if [ "$rc_c" = 0 ] && [ "$rc_s" = 0 ]; then
		ktap_ok "ordered_$op"
	else
		ktap_diag "$(tail -n 5 "$OUT/$op.client" "$OUT/$op.server")"
		ktap_fail "ordered_$op" "client exit $rc_c, server exit $rc_s"
	fi
	d1=$(( $(ooo_sum eroce1) - o1 ))
	d2=$(( $(ooo_sum eroce2) - o2 ))
	ktap_result "ordered_${op}_in_sequence" \
		"$([ "$d1" = 0 ] && [ "$d2" = 0 ]; echo $?)" \
		"out of sequence: eroce1 +$d1, eroce2 +$d2 ($OOO)"
}

# run_uc: UC WRITEs over 8 QPs, eroce1 -> eroce2
run_uc() {
	local n lost0 lost

	n=$(perftest_iters 500)
	lost0=$(counter_sum eroce2 uc_messages_lost rx_drop_uc_sequence)
	# perftest's row counts the iterations of all 8 QPs
	ktap_srv_cli ordered_uc_write "cli_has '^ *4096 +$((n * 8)) '" \
		ib_write_bw -d eroce2 -x "$G2" -c UC -q 8 -n "$n" -s 4096 -- \
		ib_write_bw -d eroce1 -x "$G1" -c UC -q 8 -n "$n" -s 4096 198.18.0.2
	lost=$(counter_sum eroce2 uc_messages_lost rx_drop_uc_sequence)
	ktap_result ordered_uc_write_in_sequence \
		"$([ -n "$lost0" ] && [ -n "$lost" ] && [ "$lost" = "$lost0" ]; echo $?)" \
		"eroce2 uc_messages_lost + rx_drop_uc_sequence: ${lost0:-?} -> ${lost:-?}"
}

ktap_plan 10
[ -x "$TOOL" ] || ktap_bail "$TOOL not built (make -C selftests/tools)"
require setup
G1=$(first_gid eroce1 "$(ipv4_gid 198.18.0.1)")
G2=$(first_gid eroce2 "$(ipv4_gid 198.18.0.2)")
kmsg_mark
softnet_processed >"$RDMA_TMP/softnet"
run_op send 31
run_op write 32
run_op read 33
run_uc
softnet_spread "$RDMA_TMP/softnet" "$MIN_PKTS"
ktap_result rps_spread $? "a CPU processed fewer than $MIN_PKTS packets"
ktap_diag "eroce1: $(stat_nonzero eroce1)"
ktap_diag "eroce2: $(stat_nonzero eroce2)"
ktap_kernel_log_clean
ktap_finish
