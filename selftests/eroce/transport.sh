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
# count is.  On the debug kernel every tool runs 1/8 of its iterations
# (perftest 25, pingpong 6), rping half of its 10, and only a subset runs
# (DEBUG_KEEP below): one run per operation, QP type and feature.
# Run: selftests/run_vm.sh selftests/eroce/transport.sh
#
#   ns1: veth1 198.18.0.1/24 (eroce1)  <--veth-->  ns2: veth2 198.18.0.2/24 (eroce2)
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
ib_read_bw_64k ib_atomic_bw_cmp_swap ib_send_bw_ud_rdma_cm"

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

ktap_plan 43
require eroce_pair_setup
require pair_gids
pair_gids
kmsg_mark
test_pingpong
test_rping
test_perftest
test_counters
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -iE "eroce.*(error|fail|bug|warn)"'
[ "$KTAP_FAIL" = 0 ] || ktap_diag "$(dmesg_since_mark | tail -n 20)"
ktap_finish
