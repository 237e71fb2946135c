#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
#
# transport.sh: eroce <-> eroce across two namespaces on a veth pair, driven
# by the standard tools: ibv_rc_pingpong (-c checks data, with and without
# -e completion events), ibv_ud_pingpong, ibv_srq_pingpong, rping -V
# (rdma_cm, data verified), and perftest (send/write/read/atomic, bw and
# lat, new and --use_old_post_send, rdma_cm mode, UD).  Servers run in ns2,
# clients in ns1; both must exit 0.  perftest rates are not checked (under
# TCG the clock calibration may print 0): a result row with the iteration
# count is.  Then:
#   - rping -V over IPv6 (rdma_cm resolving 2001:db8::2, the IPv6 GIDs):
#     every round's data verified and printed;
#   - ibv_rc_pingpong -c at path MTUs 256, 512, 2048 and 4096 (the veths'
#     MTU raised to 9000, active_mtu 4096 on both ports): every buffer
#     checked, and each device sent as many packets as 8 KiB messages
#     make at that MTU (a silently lower MTU sends twice as many);
#   - selftests/tools/eroce_srq: two RC QPs of eroce2 on one SRQ, every
#     byte received through it compared, and the SRQ limit event raised
#     once, when fewer WQEs than the limit are left, which disarms it.
# On the debug kernel every tool runs 1/8 of its iterations
# (perftest 25, pingpong 6), rping half of its 10, and only a subset runs
# (DEBUG_KEEP below): one run per operation, QP type and feature.
# Run: selftests/run_vm.sh selftests/eroce/transport.sh
#
#   ns1: veth1 198.18.0.1/24 2001:db8::1/64 (eroce1)  <--veth-->
#   ns2: veth2 198.18.0.2/24 2001:db8::2/64 (eroce2)
# shellcheck disable=SC2034  # SC_* settings are read by lib_rdma.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

SRV=198.18.0.2
# iterations (N, and the shorter runs' N50 and N20) are 1/8 on the debug
# kernel (lib.sh): 25, 6, 2 (perftest needs at least 5, ibv_srq_pingpong
# at least its 4 QPs); rping's 10 rounds, cheap already, only half
N=$(debug_scaled 200)
N50=$(debug_scaled 50)
N20=$(debug_scaled 20)
RPING_C=$(debug_scaled 10 2)
# shellcheck disable=SC2034  # read by ktap_srv_cli (lib_rdma.sh)
SC_T=30
# the debug kernel's subset (lib.sh debug_subset): RC SEND with completion
# events, SRQ, rdma_cm with rping's READ/WRITE/SEND, multi-packet WRITE
# and READ, an atomic, UD over rdma_cm; the other sizes, post flavours
# (--use_old_post_send only changes the provider) and the bw/lat twins
# are skips
DEBUG_KEEP="rc_pingpong_events srq_pingpong rping_verify ib_write_bw_64k
ib_read_bw_64k ib_atomic_bw_cmp_swap ib_send_bw_ud_rdma_cm rping_verify_ipv6
rc_pingpong_mtu_256 rc_pingpong_mtu_4096"
TOOLS=$EROCE_ROOT/selftests/tools
# the MTU runs: messages of MTU_SIZE bytes, at most 32 packets (the
# requester asks for an ACK every 32 packets and at a message's end)
MTU_SIZE=8192
MTU_N=$(debug_scaled 20 4)

# pp NAME TOOL ARGS...: an ibv_*_pingpong pair; pass on exit 0 and the
# closing "N iters in S seconds" line on both sides
pp() {
	local name=$1 tool=$2; shift 2
	debug_subset "$name" && return
	ktap_srv_cli "$name" 'out_has "[0-9]+ iters in [0-9.]+ seconds"' \
		"$tool" -d eroce2 -g "$G2" "$@" -- "$tool" -d eroce1 -g "$G1" "$@" "$SRV"
}

test_pingpong() {
	pp rc_pingpong ibv_rc_pingpong -n "$N50" -c
	pp rc_pingpong_events ibv_rc_pingpong -n "$N50" -c -e
	pp rc_pingpong_64k ibv_rc_pingpong -n "$N20" -s 65536 -c
	pp ud_pingpong ibv_ud_pingpong -n "$N50" -c
	pp ud_pingpong_events ibv_ud_pingpong -n "$N50" -c -e
	# ibv_srq_pingpong has no -c; it checks every receive completion
	pp srq_pingpong ibv_srq_pingpong -n "$N50" -q 4
	pp srq_pingpong_events ibv_srq_pingpong -n "$N50" -q 4 -e
}

test_rping() {
	# rping -V verifies every buffer; a mismatch prints and exits non-zero;
	# the client starts once the server's rdma_cm ID listens (port 7174)
	SC_OPTS=(-c 7174)
	debug_subset rping_verify ||
		ktap_srv_cli rping_verify '! grep -qiE "mismatch|error|fail" <<<"$CLI_OUT$SRV_OUT" && grep -q "ping data" <<<"$CLI_OUT"' \
			rping -s -a "$SRV" -C "$RPING_C" -V -v -- rping -c -a "$SRV" -C "$RPING_C" -V -v
	debug_subset rping_verify_32k ||
		ktap_srv_cli rping_verify_32k '! grep -qiE "mismatch|error|fail" <<<"$CLI_OUT$SRV_OUT"' \
			rping -s -a "$SRV" -C "$RPING_C" -S 32768 -V -- rping -c -a "$SRV" -C "$RPING_C" -S 32768 -V
	SC_OPTS=()
}

# rdma_cm over IPv6: the client resolves 2001:db8::2, rping -V checks
# every round's data, and the client printed every round
test_rping_ipv6() {
	debug_subset rping_verify_ipv6 rping_ipv6_gids && return
	ktap_check rping_ipv6_gids eval 'wait_for 30 has_gid eroce1 $(ipv6_gid 2001:db8::1) &&
		wait_for 30 has_gid eroce2 $(ipv6_gid 2001:db8::2)'
	SC_OPTS=(-c 7174)
	ktap_srv_cli rping_verify_ipv6 '! grep -qiE "mismatch|error|fail" <<<"$CLI_OUT$SRV_OUT" &&
		[ "$(grep -c "ping data" <<<"$CLI_OUT")" = "$RPING_C" ]' \
		rping -s -a 2001:db8::2 -C "$RPING_C" -S 4096 -V -v -- \
		rping -c -a 2001:db8::2 -C "$RPING_C" -S 4096 -V -v
	SC_OPTS=()
}

# mtu_packets_ok MTU: during the last ibv_rc_pingpong (MTU_N messages of
# MTU_SIZE bytes each way) each device sent MTU_N * ceil(MTU_SIZE / MTU)
# data packets plus at most two ACKs per message, besides what either
# side retransmitted; at half the MTU the data alone would be twice as
# many
# shellcheck disable=SC2317  # called through ktap_srv_cli's check
mtu_packets_ok() {
	local k=$(((MTU_SIZE + $1 - 1) / $1)) l p tx r1 r2 data ok=0
	data=$((MTU_N * k))
	for l in eroce1 eroce2; do
		[ "$l" = eroce1 ] && p=eroce2 || p=eroce1
		tx=$(stat_delta "$l" "$RDMA_TMP/mtu_$l" tx_packets) &&
			r1=$(stat_delta "$l" "$RDMA_TMP/mtu_$l" retransmitted_packets) &&
			r2=$(stat_delta "$p" "$RDMA_TMP/mtu_$p" retransmitted_packets) || return 1
		ktap_diag "MTU $1: $l sent $tx packets ($r1 again), $data of data expected"
		[ $((tx - r1)) -ge "$data" ] && [ $((tx - r1)) -le $((data + 2 * MTU_N + r2)) ] || ok=1
	done
	return "$ok"
}

# set_mtus MTU ACTIVE: both veths' MTU, then both ports' active MTU must
# be ACTIVE
# shellcheck disable=SC2317  # called through ktap_check
set_mtus() {
	ns1 ip link set dev veth1 mtu "$1" && ns2 ip link set dev veth2 mtu "$1" &&
		wait_for 10 eval "active_mtu_is eroce1 $2 && active_mtu_is eroce2 $2"
}

# ibv_rc_pingpong -c at each path MTU other than pingpong's default 1024
test_mtus() {
	local m
	ktap_check active_mtu_4096_at_9000 set_mtus 9000 4096
	for m in 256 512 2048 4096; do
		debug_subset "rc_pingpong_mtu_$m" && continue
		stat_snap eroce1 "$RDMA_TMP/mtu_eroce1"
		stat_snap eroce2 "$RDMA_TMP/mtu_eroce2"
		ktap_srv_cli "rc_pingpong_mtu_$m" \
			"out_has '[0-9]+ iters in [0-9.]+ seconds' && mtu_packets_ok $m" \
			ibv_rc_pingpong -d eroce2 -g "$G2" -m "$m" -s "$MTU_SIZE" -n "$MTU_N" -c -- \
			ibv_rc_pingpong -d eroce1 -g "$G1" -m "$m" -s "$MTU_SIZE" -n "$MTU_N" -c "$SRV"
	done
	ktap_check active_mtu_1024_at_1500 set_mtus 1500 1024
}

# eroce_srq: SRQ data and the SRQ limit event (one process, both devices)
test_srq() {
	ktap_results srq 6 timeout -k 5 "$(tmo 120)" "$TOOLS/eroce_srq" eroce1 "$G1" eroce2 "$G2"
}

# pt NAME TOOL ARGS...: a perftest pair, server eroce2, client eroce1
pt() {
	local name=$1 tool=$2; shift 2
	debug_subset "$name" && return
	ktap_srv_cli "$name" perftest_ok \
		"$tool" -d eroce2 -x "$G2" "$@" -- "$tool" -d eroce1 -x "$G1" "$@" "$SRV"
}

# ptcm NAME TOOL ARGS...: pt in rdma_cm mode (-R: no TCP listener to wait
# for; the server's rdma_cm ID listens on 18515)
ptcm() {
	SC_OPTS=(-c 18515)
	pt "$@" -R
	SC_OPTS=()
}

test_perftest() {
	local t

	# perftest's default bw message size is 64 KiB: the default-size run
	# doubles as the --use_old_post_send one
	for t in ib_send_bw ib_write_bw ib_read_bw; do
		pt "${t}_64k" "$t" -n "$N" -s 65536
		pt "${t}_default_size_old_post_send" "$t" -n "$N" --use_old_post_send
		pt "${t}_small" "$t" -n "$N" -s 8
	done
	pt ib_atomic_bw ib_atomic_bw -n "$N"
	pt ib_atomic_bw_old_post_send ib_atomic_bw -n "$N" --use_old_post_send
	pt ib_atomic_bw_cmp_swap ib_atomic_bw -n "$N" -A CMP_AND_SWAP
	for t in ib_send_lat ib_write_lat ib_read_lat ib_atomic_lat; do
		pt "$t" "$t" -n "$N"
		pt "${t}_old_post_send" "$t" -n "$N" --use_old_post_send
	done
	pt ib_read_lat_4k ib_read_lat -n "$N50" -s 4096

	ptcm ib_send_bw_rdma_cm ib_send_bw -n "$N" -s 65536
	ptcm ib_write_bw_rdma_cm ib_write_bw -n "$N" -s 65536
	ptcm ib_read_bw_rdma_cm ib_read_bw -n "$N" -s 65536
	ptcm ib_atomic_bw_rdma_cm ib_atomic_bw -n "$N"
	ptcm ib_send_lat_rdma_cm ib_send_lat -n "$N"

	pt ib_send_bw_ud ib_send_bw -c UD -n "$N"
	pt ib_send_bw_ud_old_post_send ib_send_bw -c UD -n "$N" --use_old_post_send
	pt ib_send_lat_ud ib_send_lat -c UD -n "$N"
	ptcm ib_send_bw_ud_rdma_cm ib_send_bw -c UD -n "$N"
}

# after the traffic on a clean link: both directions carried packets, no
# packet was dropped as malformed (ICRC, headers, opcode, GID, P_Key,
# source, truncation, memory), no transmit errors, no fatal NAKs and no
# retry exhaustion.  Retransmissions are reported, not judged: under TCG a
# 67 ms ack timeout can expire legitimately with many reads outstanding.
MALFORMED="tx_errors fatal_naks_rcvd rx_drop_truncated rx_drop_icrc rx_drop_bad_header
rx_drop_bad_opcode rx_drop_bad_dgid rx_drop_bad_pkey rx_drop_wrong_source rx_drop_nomem"

counters_zero() {
	local l c v bad=
	for l in eroce1/1 eroce2/1; do
		for c in "$@"; do
			v=$(stat_get "$l" "$c")
			[ -z "$v" ] && bad+="$l:$c=missing "
			[ "${v:-0}" = 0 ] || bad+="$l:$c=$v "
		done
	done
	[ -z "$bad" ] || echo "$bad"
	[ -z "$bad" ]
}

test_counters() {
	local l c v bad=
	for l in eroce1/1 eroce2/1; do
		ktap_diag "$l: $(stat_nonzero "$l")"
	done
	for l in eroce1/1 eroce2/1; do
		for c in tx_packets rx_packets; do
			v=$(stat_get "$l" "$c")
			[ "${v:-0}" -gt 0 ] || bad+="$l:$c=${v:-missing} "
		done
	done
	ktap_result counters_traffic_seen "$([ -z "$bad" ] && echo 0 || echo 1)" "$bad"
	# shellcheck disable=SC2086
	ktap_check counters_no_malformed_drops counters_zero $MALFORMED
	ktap_check counters_no_retry_exceeded counters_zero retry_exceeded rnr_retry_exceeded
}

ktap_plan 57
require eroce_pair_setup
require pair_gids
pair_gids
kmsg_mark
test_pingpong
test_rping
test_rping_ipv6
test_perftest
test_mtus
test_srq
test_counters
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -iE "eroce.*(error|fail|bug|warn)"'
[ "$KTAP_FAIL" = 0 ] || ktap_diag "$(dmesg_since_mark | tail -n 20)"
ktap_finish
