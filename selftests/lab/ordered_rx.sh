#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 900
# lab-nic: virtio-mq
#
# ordered_rx.sh: a QP's packets are received in the order they arrived,
# whatever CPU the others arrive on (Documentation/design.rst "Receive on
# many CPUs"), between two hosts whose NICs have two receive queues:
# virtio-net with 2 queue pairs on 2-vCPU guests ("# lab-nic: virtio-mq"),
# the host's tap spreading flows over the queues by hash as RSS does, and
# RPS over both CPUs on each queue.  guest0 serves, guest1 moves 4 MiB
# each of SEND, WRITE and READ with selftests/tools/eroce_integrity over 8
# QPs, packet by packet (tx_batch 0), on a path that drops nothing:
#   - ordered_send, ordered_write, ordered_read: every byte arrives
#     (guest1; guest0 passes when its server ended well)
#   - in_sequence: this guest's eroce0 saw at most one packet out of its
#     QP's sequence (seq_err_naks_sent, ooo_packets_placed,
#     ooo_packets_not_kept, retransmits_by_nak) per QP that moved its CPU
#     (qp_cpu_moves of both guests): a move changes the QP's netdev queue,
#     and the host's tap steers the flow's packets to the queue the guest
#     last sent it on, so packets still in the old queue can be overtaken
#     once (design.rst "Scheduling").  Anything beyond that is a reorder
#     eroce made: the shared socket queue, or a QP sending through two
#     queues, as before the queue pin (+1 with 8 moves: this bound would
#     not have caught that run; the same-host ordered_rx.sh, which has no
#     tap steering, checks for none)
#   - both_cpus_received: each CPU of this guest processed at least
#     ORDERED_MIN_PKTS packets (/proc/net/softnet_stat), else the run
#     tested nothing
# Run: selftests/run_lab.sh selftests/lab/ordered_rx.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"
# shellcheck source=../lib_lab.sh
. "$(dirname "$0")/../lib_lab.sh"

DEV=eroce0
TOOL="$EROCE_ROOT/selftests/tools/eroce_integrity"
BYTES=${ORDERED_BYTES:-$(debug_scaled 4M 4)}
MIN_PKTS=${ORDERED_MIN_PKTS:-50}
OOO="seq_err_naks_sent ooo_packets_placed ooo_packets_not_kept retransmits_by_nak"
SNAP=$RDMA_TMP/ordered_rx.stats

setup() {
	eroce_load && provider_install && lab_rdma_link "$DEV" eroce &&
		echo 0 >"/sys/class/infiniband/$DEV/tuning/tx_batch" || return
	local q
	for q in "/sys/class/net/$LAB_IF/queues/rx-"*; do
		echo 3 >"$q/rps_cpus" || return
	done
}

# run_op OP SEED PORT: one eroce_integrity run of OP over 8 QPs
run_op() {
	local gid
	gid=$(gid_index_of "$DEV" "$LAB_IP")
	if lab_srv_cli "$1" 0 "$3" 300 \
		"$TOOL" -d "$DEV" -g "$gid" -p "$3" -t 240 -- \
		"$TOOL" -d "$DEV" -g "$gid" -p "$3" -t 240 -q 8 -o "$1" \
		-b "$BYTES" -s "$2"; then
		ktap_ok "ordered_$1"
	else
		lab_srv_cli_diag
		ktap_fail "ordered_$1" "eroce_integrity rc=$LAB_RC"
	fi
}

ktap_plan 8
[ "$LAB_N" = 2 ] || ktap_bail "ordered_rx.sh needs 2 guests, has $LAB_N"
lab_setup_ktap
nq=$(find "/sys/class/net/$LAB_IF/queues/" -maxdepth 1 -name 'rx-*' | wc -l)
ktap_diag "guest$LAB_I: $(nproc) vCPUs, $LAB_IF with $nq rx queues"
if [ "$(nproc)" -lt 2 ] || [ "$nq" -lt 2 ]; then
	for t in eroce_link ordered_send ordered_write ordered_read \
		in_sequence both_cpus_received no_kernel_splat; do
		ktap_skip "$t" "needs 2 vCPUs and 2 rx queues (run without --nic)"
	done
	ktap_finish
	exit
fi
[ -x "$TOOL" ] || ktap_bail "$TOOL not built (make -C selftests/tools)"
require setup
ktap_ok eroce_link
lab_barrier up >/dev/null
kmsg_mark
stat_snap "$DEV/1" "$SNAP"
softnet_processed >"$RDMA_TMP/softnet"
run_op send 41 18640
run_op write 42 18641
run_op read 43 18642
softnet_spread "$RDMA_TMP/softnet" "$MIN_PKTS" "guest$LAB_I"
spread=$?
ooo=0
for c in $OOO; do
	d=$(stat_delta "$DEV/1" "$SNAP" "$c") || { ooo='?'; break; }
	ooo=$((ooo + d))
done
moves=$(stat_delta "$DEV/1" "$SNAP" qp_cpu_moves) || moves='?'
lab_signal moves "$moves"
peer_moves=$(lab_get moves "$(lab_peer)" 60 2>/dev/null) || peer_moves='?'
ktap_result in_sequence \
	"$([ "$ooo" != '?' ] && [ "$moves" != '?' ] && [ "$peer_moves" != '?' ] &&
		[ "$ooo" -le $((moves + peer_moves)) ]; echo $?)" \
	"guest$LAB_I: $ooo out of sequence, more than the QP CPU moves ($moves here, $peer_moves on the peer)"
ktap_diag "guest$LAB_I: $(stat_changes "$DEV/1" "$SNAP")"
ktap_result both_cpus_received "$spread" \
	"guest$LAB_I: a CPU processed fewer than $MIN_PKTS packets"
ktap_kernel_log_clean
ktap_finish
