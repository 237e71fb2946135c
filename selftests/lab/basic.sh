#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
#
# basic.sh: eroce between two hosts of the lab (selftests/run_lab.sh),
# guest0 (198.18.10.1) the server, guest1 (198.18.10.2) the client, each
# with eroce0 (the tree's eroce.ko and provider) on its NIC:
#   - ibv_rc_pingpong -c, 4 KiB messages: every received buffer checked
#   - ib_write_bw, 64 KiB, a short run: the client's average Gb/s as a
#     diagnostic (TCG: compare, do not read it as a speed)
#   - eroce0's counters moved (tx_packets, rx_packets), nothing dropped as
#     malformed; retransmit_timeouts as a diagnostic (the
#     path drops nothing: every retransmit timeout is a spurious one)
#   - the NIC's GRO chained the peer's packets into batches that eroce
#     walked (rx_gro_batches moved, with more packets than batches in
#     them): both guests receive multi-packet messages (the pingpong's
#     4 KiB both ways, the WRITEs on the server)
#   - TCP over the same path (iperf3, 3 s), the Gb/s as a diagnostic, for
#     comparison
# Each guest reports its own side; the runner passes the script when both
# passed.
# Run: selftests/run_lab.sh selftests/lab/basic.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"
# shellcheck source=../lib_lab.sh
. "$(dirname "$0")/../lib_lab.sh"

DEV=eroce0
SNAP=$RDMA_TMP/basic.stats
PP_ITERS=$(debug_scaled 200)
BW_ITERS=$(perftest_iters 1000)
# the QPs' ACK timeout, 4.096 us * 2^18 = 1.07 s: a guest under TCG on a
# loaded host may not run for longer than perftest's default (2^14,
# 67 ms) times its 7 retries, and the QP then fails on a path that drops
# nothing (seen at a load of 10 on 2 cores)
QP_TIMEOUT=18
DROPS="rx_drop_truncated rx_drop_icrc rx_drop_bad_header rx_drop_bad_opcode"

setup() {
	eroce_load && provider_install && lab_rdma_link "$DEV" eroce
}

# path_facts: the NIC's driver and offloads, one diagnostic line
path_facts() {
	local drv
	drv=$(basename "$(readlink "/sys/class/net/$LAB_IF/device/driver")")
	ktap_diag "guest$LAB_I: $(nproc) vCPU, $LAB_IF ($drv, $(ls -d "/sys/class/net/$LAB_IF/queues/rx-"* | wc -l) rx queues) $LAB_IP mtu $(read_file "/sys/class/net/$LAB_IF/mtu"); $(ethtool -k "$LAB_IF" 2>/dev/null |
		awk -F': ' '/^(tx-checksumming|tcp-segmentation-offload|generic-receive-offload|tx-udp-segmentation|rx-udp-gro-forwarding):/ { printf "%s %s, ", $1, $2 }')"
}

pingpong() {
	local gid
	gid=$(gid_index_of "$DEV" "$LAB_IP")
	if lab_srv_cli pingpong 0 18515 120 \
		ibv_rc_pingpong -d "$DEV" -g "$gid" -p 18515 -s 4096 -n "$PP_ITERS" -c &&
		grep -q "bytes in" <<<"$LAB_OUT"; then
		ktap_diag "$(grep 'iters in' <<<"$LAB_OUT")"
		ktap_ok rc_pingpong_checked
	else
		lab_srv_cli_diag
		ktap_fail rc_pingpong_checked "ibv_rc_pingpong -c rc=$LAB_RC"
	fi
}

write_bw() {
	local gid gbps
	gid=$(gid_index_of "$DEV" "$LAB_IP")
	lab_srv_cli write_bw 0 18516 180 \
		ib_write_bw -d "$DEV" -x "$gid" -p 18516 -s 65536 -n "$BW_ITERS" -F --report_gbits \
		-u "$QP_TIMEOUT"
	if [ "$LAB_RC" = 0 ] || perftest_no_report "$LAB_OUT"; then
		if [ "$LAB_I" != 0 ]; then
			gbps=$(awk '/#bytes/ { h = 1; next } h && $1 == 65536 { print $4; exit }' <<<"$LAB_OUT")
			ktap_diag "ib_write_bw 64 KiB x $BW_ITERS: ${gbps:-no report (clock calibration)} Gb/s"
		fi
		ktap_ok write_bw_64k
	else
		lab_srv_cli_diag
		ktap_fail write_bw_64k "ib_write_bw rc=$LAB_RC"
	fi
}

# tcp_bw: TCP over the same path for comparison (iperf3, 3 s), the
# client's Gb/s as a diagnostic
tcp_bw() {
	local gbps
	if lab_srv_cli tcp 0 5201 60 iperf3 -s -1 -- iperf3 -t 3 -f g -c; then
		if [ "$LAB_I" != 0 ]; then
			gbps=$(awk '/sender$/ { for (i = 2; i <= NF; i++) if ($i == "Gbits/sec") { print $(i - 1); exit } }' <<<"$LAB_OUT")
			ktap_diag "TCP (iperf3, 3 s): ${gbps:-?} Gb/s"
		fi
		ktap_ok tcp_bw
	else
		lab_srv_cli_diag
		ktap_fail tcp_bw "iperf3 rc=$LAB_RC"
	fi
}

counters() {
	local c d bad=
	for c in rx_gro_batches rx_gro_packets tx_batches \
		retransmit_timeouts retransmitted_packets; do
		d=$(stat_delta "$DEV/1" "$SNAP" "$c") || d='?'
		ktap_diag "guest$LAB_I $c +$d (now $(stat_get "$DEV/1" "$c"))"
	done
	stat_moved "$DEV/1" "$SNAP" tx_packets || bad+="tx_packets did not move; "
	stat_moved "$DEV/1" "$SNAP" rx_packets || bad+="rx_packets did not move; "
	for c in $DROPS; do
		d=$(stat_delta "$DEV/1" "$SNAP" "$c") || d='?'
		[ "$d" = 0 ] || bad+="$c +$d; "
	done
	[ -z "$bad" ] || ktap_diag "$(stat_changes "$DEV/1" "$SNAP")"
	ktap_result counters "$([ -z "$bad" ]; echo $?)" "$bad"
}

# gro_batches: the virtio-net NIC's GRO (on by default) batched the
# peer's packets of a QP for eroce (eroce_gro.c)
gro_batches() {
	local b p
	b=$(stat_delta "$DEV/1" "$SNAP" rx_gro_batches)
	p=$(stat_delta "$DEV/1" "$SNAP" rx_gro_packets)
	ktap_result gro_batches_received \
		"$([ -n "$b" ] && [ -n "$p" ] && [ "$b" -gt 0 ] && [ "$p" -gt "$b" ]; echo $?)" \
		"guest$LAB_I rx_gro_batches +${b:-?}, rx_gro_packets +${p:-?}"
}

ktap_plan 8
[ "$LAB_N" = 2 ] || ktap_bail "basic.sh needs 2 guests, has $LAB_N"
lab_setup_ktap
path_facts
require setup
ktap_ok eroce_link
# shellcheck disable=SC2086  # $PING may be "busybox ping"
if lab_barrier up >/dev/null && $PING -c 3 -W 5 "$(lab_ip "$(lab_peer)")" >/dev/null; then
	ktap_ok peer_reachable
else
	ktap_bail "peer $(lab_ip "$(lab_peer)") not reachable"
fi
stat_snap "$DEV/1" "$SNAP"
pingpong
write_bw
counters
gro_batches
tcp_bw
ktap_finish
