#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 400
#
# uc.sh: Unreliable Connected QPs (Documentation/design.rst "UC").
#   - ibv_uc_pingpong -c (4 KiB and 64 KiB messages, every buffer checked)
#     and perftest's ib_write_bw / ib_send_bw -c UC between eroce1 (ns1)
#     and eroce2 (ns2).
#   - selftests/tools/eroce_uc, one process, UC QP A on eroce1 -> B on
#     eroce2, each "result:" line one subtest:
#       data: SENDs of 1 byte to 16 packets, with immediate, WRITE, WRITE
#             with immediate, compared byte for byte; READ, atomics and
#             SEND with Invalidate refused with EINVAL.
#       loss: the middle packets of messages 2 and 6 dropped once on
#             veth2 (tc, PSNs 4100 and 4112): message 2 lost and its
#             receive WQE reused by message 3, a message with no receive
#             WQE dropped, message 6's receive WQE flushed when B goes to
#             ERR; A sends nothing twice.
#       errors: WRITEs with a bad R_Key and past the MR dropped and
#             counted, B untouched and in RTS; a SEND too long for the
#             receive WQE fails B with IBV_WC_LOC_LEN_ERR.
#   - ib_write_bw -c UC through 3% random loss: the transfer ends, the
#     receiver counts the lost messages, the sender resends nothing.
#   - ECN: every RoCE packet into veth2 marked CE (as congestion.sh), cc
#     dcqcn on both devices: eroce2 answers the UC stream with CNPs and
#     eroce1 slows down for them (cnp_handled, rate_decreases).
# Interoperation with rdma_rxe is in interop_rxe.sh.
# Run: selftests/run_vm.sh selftests/eroce/uc.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_uc"
N=$(perftest_iters 200)
N50=$(debug_scaled 50 6)
# shellcheck disable=SC2034  # read by ktap_srv_cli (lib_rdma.sh)
SC_T=90

uc() {
	ktap_results "$1" "$2" timeout -k 5 150 "$TOOL" "$1" eroce1 "$G1" eroce2 "$G2"
}

# the counters eroce_uc's loss mode must leave behind: the four packets
# after the two lost ones that belonged to no message in progress
# (message 2's last, message 4's middle and last, message 6's last), and
# no retransmission
loss_counters_ok() {
	local d
	d=$(drop_count "$NS2" veth2) && [ "$d" = 2 ] ||
		{ echo "tc dropped ${d:-?} packets, not 2"; return 1; }
	d=$(stat_delta eroce2 "$SNAP_DIR/eroce2" rx_drop_uc_sequence) &&
		[ "$d" = 4 ] || { echo "rx_drop_uc_sequence +${d:-?}, not 4"; return 1; }
	d=$(stat_delta eroce1 "$SNAP_DIR/eroce1" retransmitted_packets) &&
		[ "$d" = 0 ] || { echo "retransmitted_packets +${d:-?}"; return 1; }
}

# the marked UC stream drew CNPs, and the sender acted on them
ecn_counters_ok() {
	stat_moved eroce2 "$SNAP_DIR/eroce2" cnp_sent &&
		stat_moved eroce1 "$SNAP_DIR/eroce1" cnp_handled &&
		stat_moved eroce1 "$SNAP_DIR/eroce1" rate_decreases
}

# the UC WRITE stream through random loss lost messages, resent nothing
random_loss_counters_ok() {
	local d
	stat_moved eroce2 "$SNAP_DIR/eroce2" uc_messages_lost rx_drop_uc_sequence ||
		{ echo "eroce2 counted no lost UC message"; return 1; }
	for c in retransmitted_packets retransmit_timeouts; do
		d=$(stat_delta eroce1 "$SNAP_DIR/eroce1" "$c") && [ "$d" = 0 ] ||
			{ echo "eroce1 $c +${d:-?}"; return 1; }
	done
}

ktap_plan 29
require eroce_pair_setup
require pair_gids
pair_gids
require test -x "$TOOL"
SNAP_DIR=$(mktemp -d "$RDMA_TMP/uc.XXXXXX")
kmsg_mark

CHECK='out_has "[0-9]+ iters in [0-9.]+ seconds"'
ktap_srv_cli uc_pingpong "$CHECK" \
	ibv_uc_pingpong -d eroce2 -g "$G2" -n "$N50" -c -- \
	ibv_uc_pingpong -d eroce1 -g "$G1" -n "$N50" -c 198.18.0.2
ktap_srv_cli uc_pingpong_64k "$CHECK" \
	ibv_uc_pingpong -d eroce2 -g "$G2" -n "$N50" -s 65536 -c -- \
	ibv_uc_pingpong -d eroce1 -g "$G1" -n "$N50" -s 65536 -c 198.18.0.2
ktap_srv_cli uc_write_bw perftest_ok \
	ib_write_bw -d eroce2 -x "$G2" -c UC -n "$N" -s 65536 -- \
	ib_write_bw -d eroce1 -x "$G1" -c UC -n "$N" -s 65536 198.18.0.2
ktap_srv_cli uc_send_bw perftest_ok \
	ib_send_bw -d eroce2 -x "$G2" -c UC -n "$N" -s 16384 -- \
	ib_send_bw -d eroce1 -x "$G1" -c UC -n "$N" -s 16384 198.18.0.2

uc data 8

stat_snap eroce1 "$SNAP_DIR/eroce1"
stat_snap eroce2 "$SNAP_DIR/eroce2"
if drop_once "$NS2" veth2 ingress 0x21/0xff 0xffffff 4100 4112; then
	uc loss 7
	ktap_check loss_counters loss_counters_ok
else
	ktap_fail loss_setup "tc filters on veth2"
	for i in 1 2 3 4 5 6 7; do ktap_skip "loss_$i" "no tc filters"; done
fi
drop_clear "$NS2" veth2

uc errors 4

stat_snap eroce1 "$SNAP_DIR/eroce1"
stat_snap eroce2 "$SNAP_DIR/eroce2"
# netem loses an eroce batch whole: packets one by one here, so that 3%
# loss hits the debug kernel's few messages too
eroce_tx_batch_all 0
netem_set "$NS1" veth1 loss 3%
ktap_srv_cli uc_write_bw_loss perftest_ok \
	ib_write_bw -d eroce2 -x "$G2" -c UC -n "$N" -s 16384 -- \
	ib_write_bw -d eroce1 -x "$G1" -c UC -n "$N" -s 16384 198.18.0.2
netem_clear "$NS1" veth1
eroce_tx_batch_all 1
ktap_check uc_loss_counted random_loss_counters_ok
ktap_diag "eroce1: $(stat_changes eroce1 "$SNAP_DIR/eroce1")"
ktap_diag "eroce2: $(stat_changes eroce2 "$SNAP_DIR/eroce2")"

stat_snap eroce1 "$SNAP_DIR/eroce1"
stat_snap eroce2 "$SNAP_DIR/eroce2"
echo dcqcn >"$IBSYS/eroce1/tuning/cc"
echo dcqcn >"$IBSYS/eroce2/tuning/cc"
tc -n "$NS2" qdisc add dev veth2 clsact &&
	tc -n "$NS2" filter add dev veth2 ingress protocol ip flower ip_proto udp \
		dst_port 4791 action pedit ex munge ip tos set 3 retain 3 pipe \
		action csum ip4h
ktap_srv_cli uc_write_bw_ecn perftest_ok \
	ib_write_bw -d eroce2 -x "$G2" -c UC -n "$N" -s 16384 -- \
	ib_write_bw -d eroce1 -x "$G1" -c UC -n "$N" -s 16384 198.18.0.2
tc -n "$NS2" qdisc del dev veth2 clsact
ktap_check uc_ecn_cnps ecn_counters_ok
ktap_diag "eroce1: $(stat_changes eroce1 "$SNAP_DIR/eroce1")"
ktap_diag "eroce2: $(stat_changes eroce2 "$SNAP_DIR/eroce2")"

ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
rm -rf "$SNAP_DIR"
ktap_finish
