#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
#
# integrity.sh: every byte moved by SEND, RDMA WRITE (+ WRITE_WITH_IMM)
# and RDMA READ between two eroce devices arrives intact, and every atomic
# (FETCH_ADD, CMP_SWAP) returns the value it must.  Runs
# selftests/tools/eroce_integrity (server in ns2, client in ns1; 4 QPs x 32
# WRs, message sizes around MTU boundaries and random, multi-SGE WRs) once
# per operation, once over the IPv6 GID, once more with netem dropping
# 1% of the packets on both veth ends, where the retransmit counters of
# `rdma statistic` must move, and once under each other impairment:
# netem reordering, and duplication and corruption of one packet in 32
# by tc actions whose own counters must match eroce's (see impaired;
# loss.sh leaves these two to this script).  eroce1's WRITE batches cross
# the veth whole and the UDP stack cuts them into their packets before
# eroce2 (tx_batches moves, rx_drop_bad_gso stays 0), and a WRITE run again
# while a packet socket on veth2 holds clones of them must arrive intact
# too.  With GRO on both veths and eroce1
# sending packet by packet, eroce2's GRO must chain them into batches that
# eroce walks (rx_gro_batches moves) and every byte must arrive, and a
# packet corrupted inside a batch must be dropped on its own by its ICRC.
# The kernel log must stay free of splats.
#
#   ns1: veth1 198.18.0.1 2001:db8::1 (eroce1) <-> ns2: veth2 .2 ::2 (eroce2)
#
# INTEGRITY_BYTES (default 48M) is the amount per operation, INTEGRITY_LOSS_BYTES
# (default 4M) the amount under loss, INTEGRITY_IMPAIR_BYTES (default 1M)
# under each other impairment, INTEGRITY_TIMEOUT (default 150 s) the tool's
# deadline.  On the debug kernel the defaults move 1/8 of the data (1/4
# under loss and impairments), the deadline is TIMEOUT_MULT times longer,
# and only a subset of the runs is made (DEBUG_KEEP below).
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_integrity"
PY=/usr/bin/python3
# the debug kernel (lib.sh) moves 1/8: 48M -> 6M, 2M -> 256k, 4M -> 512k;
# under loss and
# the other impairments only 1/4 (4M -> 1M, 1M -> 256k), which still gives
# each run hundreds of packets for 1% loss to hit, and a few dozen to
# duplicate or corrupt (the counters below must move)
BYTES=${INTEGRITY_BYTES:-$(debug_scaled 48M)}
LOSS_BYTES=${INTEGRITY_LOSS_BYTES:-$(debug_scaled 4M 4)}
TMO=${INTEGRITY_TIMEOUT:-$(tmo 150)}
IMPAIR_BYTES=${INTEGRITY_IMPAIR_BYTES:-$(debug_scaled 1M 4)}
SMALL_BYTES=$(debug_scaled 2M)
ATOMICS=$(debug_scaled 32768)
LOSS_ATOMICS=$(debug_scaled 8192 4)
# the full queue's rate: below what eroce sends.  The debug kernel sends
# some 2 Mb/s, so 4 Mb/s refuses nothing there; at 1 Mb/s a READ's 64 KiB
# of responses takes half a second, longer than the default 67 ms ACK
# timeout allows over 7 retries: the requester's QPs wait 2 s (-T 19)
FULL_RATE=50mbit
FULL_ARGS=()
if [ "$DEBUG_KERNEL" = 1 ]; then
	FULL_RATE=1mbit
	FULL_ARGS=(-T 19)
fi
V6_BYTES=$(debug_scaled 4M)
PORT=18530
OUT=/tmp/integrity
mkdir -p "$OUT"
# the debug kernel's subset (lib.sh debug_subset): every operation (SEND,
# WRITE with WRITE_WITH_IMM, READ; multi-SGE, sizes around the MTU) once,
# over IPv6, WRITE under 1% loss (retransmissions from inside
# multi-SGE WRs), the IPv4 SEND run (4 QPs against a receiver slower
# than the QP timeout: where RC collapsed before the window after a
# timeout), the tapped WRITE (batches shared with a tap) and every
# operation under duplication (duplicates must not take a receive); the
# other IPv4 runs per operation, the other direction, the other
# operations under loss and the other impairments are skips
DEBUG_KEEP="send ipv6_all_ops loss_write loss_atomic full_queue_all_ops write_tapped write_tapped_kept duplicate_all_ops gro_all_ops"

# the pair of lib_rdma.sh, and its IPv6 GIDs
setup() {
	eroce_pair_setup &&
		wait_for 30 has_gid eroce1 "$(ipv6_gid 2001:db8::1)" &&
		wait_for 30 has_gid eroce2 "$(ipv6_gid 2001:db8::2)"
}

# counter DEV NAME: one `rdma statistic` counter of DEV's port 1
counter() {
	rdma statistic show link "$1/1" 2>/dev/null |
		awk -v n="$2" '{ for (i = 1; i < NF; i++) if ($i == n) { print $(i + 1); exit } }'
}

# counters DEV: all non-zero counters, for diagnostics
counters() {
	rdma statistic show link "$1/1" 2>/dev/null |
		awk '{ for (i = 3; i < NF; i += 2) if ($(i + 1) != 0) printf "%s %s ", $i, $(i + 1) } END { print "" }'
}

# counter_list DEV: "name value" lines of every counter
counter_list() {
	rdma statistic show link "$1/1" 2>/dev/null |
		awk '{ for (i = 3; i < NF; i += 2) print $i, $(i + 1) }'
}

# counter_delta BEFORE AFTER: the counters that changed, with the change
counter_delta() {
	awk 'NR == FNR { b[$1] = $2; next }
	     $2 != b[$1] { printf "%s +%d ", $1, $2 - b[$1] } END { print "" }' \
		<(echo "$1") <(echo "$2")
}

# retransmits DEV: the sum of the retransmit counters
retransmits() {
	counter_sum "$1" retransmit_timeouts retransmits_by_nak retransmitted_packets
}

# responder_loss DEV: sequence NAKs sent plus duplicate requests seen
responder_loss() {
	counter_sum "$1" seq_err_naks_sent duplicate_requests
}

# pair NAME SGID1 SGID2 ADDR ARGS...: server on eroce2 in ns2, client on
# eroce1 in ns1; one subtest, ok when both ends exit 0
pair() {
	local name=$1 g1=$2 g2=$3 addr=$4 spid rc_s rc_c b1 b2; shift 4

	debug_subset "$name" && return
	b1=$(counter_list eroce1)
	b2=$(counter_list eroce2)

	ns2 "$TOOL" -d eroce2 -g "$g2" -p "$PORT" -t "$TMO" >"$OUT/$name.server" 2>&1 &
	spid=$!
	# the client retries its connection for 10 s only
	wait_for 60 tcp_listening "$NS2" "$PORT"
	ns1 "$TOOL" -d eroce1 -g "$g1" -p "$PORT" -t "$TMO" "$@" "$addr" \
		>"$OUT/$name.client" 2>&1
	rc_c=$?
	wait "$spid"
	rc_s=$?
	PORT=$((PORT + 1))
	ktap_diag "$(sed 's/^/client: /' "$OUT/$name.client"; sed 's/^/server: /' "$OUT/$name.server")"
	if [ "$rc_c" = 0 ] && [ "$rc_s" = 0 ]; then
		ktap_ok "$name"
	else
		ktap_diag "counters moved during this run:"
		ktap_diag "eroce1: $(counter_delta "$b1" "$(counter_list eroce1)")"
		ktap_diag "eroce2: $(counter_delta "$b2" "$(counter_list eroce2)")"
		ktap_fail "$name" "client exit $rc_c, server exit $rc_s"
	fi
}

test_lossless() {
	local g1 g2 g61 g62 tb

	g1=$(first_gid eroce1 "$(ipv4_gid 198.18.0.1)")
	g2=$(first_gid eroce2 "$(ipv4_gid 198.18.0.2)")
	g61=$(first_gid eroce1 "$(ipv6_gid 2001:db8::1)")
	g62=$(first_gid eroce2 "$(ipv6_gid 2001:db8::2)")
	pair send "$g1" "$g2" 198.18.0.2 -o send -b "$BYTES" -s 11
	tb=$(counter eroce1 tx_batches)
	pair write "$g1" "$g2" 198.18.0.2 -o write -b "$BYTES" -s 12
	# eroce1's batches crossed the veth whole, and the UDP stack cut them
	# into their packets before eroce2 (none dropped as a bad GSO skb)
	tb=$(( $(counter eroce1 tx_batches) - tb ))
	debug_subset write_batches_cut_by_udp ||
		ktap_result write_batches_cut_by_udp \
			"$([ "$tb" -gt 0 ] && [ "$(counter eroce2 rx_drop_bad_gso)" = 0 ]; echo $?)" \
			"eroce1 tx_batches +$tb, eroce2 rx_drop_bad_gso $(counter eroce2 rx_drop_bad_gso)"
	# the same with a packet socket on veth2 that holds a clone of each
	# batch: the UDP stack cuts batches shared with it
	debug_subset write_tapped write_tapped_kept || test_tapped "$g1" "$g2"
	pair read "$g1" "$g2" 198.18.0.2 -o read -b "$BYTES" -s 13
	# the other direction, small messages only (many packets per byte)
	pair reverse_small_msgs "$g1" "$g2" 198.18.0.2 -R -S 1100 -b "$SMALL_BYTES" -s 14
	pair ipv6_all_ops "$g61" "$g62" 2001:db8::2 -b "$V6_BYTES" -s 15
	# FETCH_ADD and CMP_SWAP, every original value checked
	pair atomic "$g1" "$g2" 198.18.0.2 -o atomic -a "$ATOMICS" -s 16
}

# test_tapped GID1 GID2: a WRITE run while an AF_PACKET socket on veth2,
# never read, keeps (up to its 16 MiB) clones of what eroce2 receives;
# then it counts what it kept, which must be more than nothing.
# (SO_RCVBUFFORCE is 33: Python's socket module has no name for it, and
# this tap once died on that name, unseen, and the run went untapped.)
test_tapped() {
	local tap kept

	rm -f "$OUT/tap.stop"
	ns2 "$PY" -c 'import os, socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)
s.bind(("veth2", 0))
print("tapping", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.1)
s.setblocking(False)
n = 0
try:
    while True:
        s.recv(65536)
        n += 1
except BlockingIOError:
    pass
print("kept", n, flush=True)' "$OUT/tap.stop" >"$OUT/tap.out" 2>&1 &
	tap=$!
	if ! wait_for 60 grep -q tapping "$OUT/tap.out"; then
		ktap_diag "tap: $(cat "$OUT/tap.out")"
		kill "$tap" 2>/dev/null
		ktap_fail write_tapped "the tap on veth2 did not start"
		ktap_fail write_tapped_kept "no tap"
		return
	fi
	pair write_tapped "$1" "$2" 198.18.0.2 -o write -b "$SMALL_BYTES" -s 17
	touch "$OUT/tap.stop"
	wait_for 30 grep -q "^kept" "$OUT/tap.out"
	kill "$tap" 2>/dev/null
	wait "$tap" 2>/dev/null
	kept=$(awk '$1 == "kept" { print $2 }' "$OUT/tap.out")
	ktap_result write_tapped_kept "$([ "${kept:-0}" -gt 0 ]; echo $?)" \
		"the tap kept ${kept:-no} frames: $(tail -n 2 "$OUT/tap.out")"
	ktap_diag "the tap kept ${kept:-no} frames of the run"
}

test_loss() {
	local g1 g2 r1 a1 n2 b2

	g1=$(first_gid eroce1 "$(ipv4_gid 198.18.0.1)")
	g2=$(first_gid eroce2 "$(ipv4_gid 198.18.0.2)")
	ktap_check netem_loss eval 'ns1 tc qdisc add dev veth1 root netem loss 1% &&
		ns2 tc qdisc add dev veth2 root netem loss 1%'
	r1=$(retransmits eroce1)
	n2=$(responder_loss eroce2)
	pair loss_send "$g1" "$g2" 198.18.0.2 -o send -b "$LOSS_BYTES" -s 21
	pair loss_write "$g1" "$g2" 198.18.0.2 -o write -b "$LOSS_BYTES" -s 22
	pair loss_read "$g1" "$g2" 198.18.0.2 -o read -b "$LOSS_BYTES" -s 23
	# 64 atomics outstanding per QP: a lost response's atomic, sent
	# again after many newer ones executed, must still find its result
	# (the replay cache once held 16, and the QP stalled)
	pair loss_atomic "$g1" "$g2" 198.18.0.2 -o atomic -A 64 -w 64 -q 2 \
		-a "$LOSS_ATOMICS" -s 24
	a1=$(retransmits eroce1)
	b2=$(responder_loss eroce2)
	ktap_diag "eroce1: $(counters eroce1)"
	ktap_diag "eroce2: $(counters eroce2)"
	# eroce1 is the requester of all three: it retransmits; eroce2, the
	# responder, sees the gaps (sequence NAKs) and the duplicates
	ktap_result loss_requester_retransmitted "$([ "$a1" -gt "$r1" ]; echo $?)" \
		"eroce1 retransmit counters $r1 -> $a1"
	ktap_result loss_responder_saw_gaps "$([ "$b2" -gt "$n2" ]; echo $?)" \
		"eroce2 seq_err_naks_sent + duplicate_requests $n2 -> $b2"
	ns1 tc qdisc del dev veth1 root 2>/dev/null
	ns2 tc qdisc del dev veth2 root 2>/dev/null
}

# roce_filter NS DEV DIR MATCH... ACTION...: a tc u32 filter at DEV's DIR
# hook (its clsact qdisc added if missing) for eroce's RoCEv2 packets
# (IPv4 without options, UDP port 4791) that also match the u32 MATCH
# arguments (offsets from the IP header), with the ACTIONs
roce_filter() {
	local ns=$1 dev=$2 dir=$3; shift 3
	tc -n "$ns" qdisc show dev "$dev" | grep -q clsact ||
		tc -n "$ns" qdisc add dev "$dev" clsact || return
	tc -n "$ns" filter add dev "$dev" "$dir" protocol ip pref 30 u32 \
		match u8 17 0xff at 9 match u16 4791 0xffff at 22 "$@"
}

# action_pkts NS DEV KIND: the packets the KIND actions (pedit, mirred)
# of the filter at one of DEV's clsact hooks acted on (the larger of the
# two hooks' sums: tc may list a clsact qdisc's filters under either)
action_pkts() {
	local h
	for h in ingress egress; do
		tc -n "$1" -s filter show dev "$2" "$h" 2>/dev/null |
			awk -v k="$3" '/action order [0-9]+:/ { a = ($4 == k) }
				a && $1 == "Sent" { n += $4; a = 0 } END { print n + 0 }'
	done | sort -n | tail -n 1
}

# the impairments counted: eroce sends packet by packet (tx_batch 0, as
# a network impairs packets, not batches), and a tc action on every 32nd
# packet (gact's deterministic choice, whatever the machine's speed; a
# retransmission is a packet of its own: eroce's IP IDs are all 0, and
# a choice by PSN would hit a retransmission again) impairs
#   corrupt    both directions: the BTH's P_Key inverted (pedit), which
#              the ICRC covers: rx_drop_icrc of both devices moves by
#              exactly as many as pedit changed, at least 32 (8 on the
#              debug kernel, which moves a quarter)
#   duplicate  eroce1's requests, at veth2's ingress: a copy received
#              before the packet (mirred mirror; skbedit marks both so
#              the copy is not copied again): eroce2's duplicate_requests
#              moves by at least as many as mirred copied, at least 32
#              (8)
#              (a copy of a SEND that found no receive is RNR NAKed
#              with it: counted as well, by rnr_naks_sent)
CORRUPT_ARGS="action gact pass random determ pipe 32 action pedit munge offset 30 u16 invert"
DUP_ARGS="match u32 0xc6120001 0xffffffff at 12 match mark 0 0xffffffff action gact pass random determ pipe 32 action skbedit mark 1 pipe action mirred ingress mirror dev veth2"
IMPAIR_MIN=$(debug_scaled 32 4)

# impaired NAME: the run of every operation under the impairment NAME,
# and NAME_counted, its counters checked
impaired() {
	local name=$1 g1 g2 n1 n2 r2 hits moved why

	debug_subset "${name}_all_ops" "${name}_counted" && return
	g1=$(first_gid eroce1 "$(ipv4_gid 198.18.0.1)")
	g2=$(first_gid eroce2 "$(ipv4_gid 198.18.0.2)")
	eroce_tx_batch_all 0
	case "$name" in
	corrupt)
		n1=$(counter eroce1 rx_drop_icrc) n2=$(counter eroce2 rx_drop_icrc)
		# shellcheck disable=SC2086  # the filter's words
		roce_filter "$NS1" veth1 egress $CORRUPT_ARGS &&
			roce_filter "$NS2" veth2 egress $CORRUPT_ARGS ;;
	duplicate)
		n2=$(counter eroce2 duplicate_requests) r2=$(counter eroce2 rnr_naks_sent)
		# shellcheck disable=SC2086
		roce_filter "$NS2" veth2 ingress $DUP_ARGS ;;
	esac || ktap_diag "$name: the tc filters failed"
	pair "${name}_all_ops" "$g1" "$g2" 198.18.0.2 \
		-o send,write,read -b "$IMPAIR_BYTES" -s 31
	case "$name" in
	corrupt)
		hits=$(( $(action_pkts "$NS1" veth1 pedit) + $(action_pkts "$NS2" veth2 pedit) ))
		moved=$(( $(counter eroce1 rx_drop_icrc) - n1 + $(counter eroce2 rx_drop_icrc) - n2 ))
		why="pedit corrupted $hits packets (want at least $IMPAIR_MIN), rx_drop_icrc moved by $moved (want $hits)"
		ktap_result corrupt_counted "$([ "$hits" -ge "$IMPAIR_MIN" ] && [ "$moved" = "$hits" ]; echo $?)" "$why" ;;
	duplicate)
		hits=$(action_pkts "$NS2" veth2 mirred)
		moved=$(( $(counter eroce2 duplicate_requests) - n2 + $(counter eroce2 rnr_naks_sent) - r2 ))
		why="mirred copied $hits requests (want at least $IMPAIR_MIN), duplicate_requests + rnr_naks_sent moved by $moved (want at least $hits)"
		ktap_result duplicate_counted "$([ "$hits" -ge "$IMPAIR_MIN" ] && [ "$moved" -ge "$hits" ]; echo $?)" "$why" ;;
	esac
	ktap_diag "$why"
	ns1 tc qdisc del dev veth1 clsact 2>/dev/null
	ns2 tc qdisc del dev veth2 clsact 2>/dev/null
	eroce_tx_batch_all 1
}

# every operation, every byte checked, under each other impairment of
# issue 3 on its own: reordering (netem on both veths), duplication and
# corruption (impaired)
test_impairments() {
	local g1 g2

	g1=$(first_gid eroce1 "$(ipv4_gid 198.18.0.1)")
	g2=$(first_gid eroce2 "$(ipv4_gid 198.18.0.2)")
	if ! debug_subset reorder_all_ops; then
		ns1 tc qdisc add dev veth1 root netem delay 1ms reorder 95%
		ns2 tc qdisc add dev veth2 root netem delay 1ms reorder 95%
		pair reorder_all_ops "$g1" "$g2" 198.18.0.2 \
			-o send,write,read -b "$IMPAIR_BYTES" -s 31
		ns1 tc qdisc del dev veth1 root 2>/dev/null
		ns2 tc qdisc del dev veth2 root 2>/dev/null
	fi
	impaired duplicate
	impaired corrupt
}

# veth_gro on|off: GRO of both veths, holding a NAPI poll's packets for
# 500 us (gro_flush_timeout) so that more than one poll's worth is
# batched, or neither.  A veth hands what it sends to its peer's NAPI,
# and so to GRO, only with TSO off (6.1's veth_skb_is_eligible_for_gro():
# a sender that can do TSO needs no GRO, unless the skb is a socket's
# and the peer forwards UDP GRO), so TSO goes off while GRO is on
veth_gro() {
	local v t=0 tso=on
	[ "$1" = on ] && t=500000 tso=off
	for v in 1 2; do
		"ns$v" ethtool -K "veth$v" gro "$1" tso "$tso" &&
			"ns$v" sh -c "echo $t >/sys/class/net/veth$v/gro_flush_timeout" ||
			return
	done
}

# test_gro: batches received from a netdev's GRO (eroce_gro.c).  eroce1
# and eroce2 send packet by packet (tx_batch 0: eroce's own batches cross
# a veth whole, and GRO does not take those), both veths have GRO on:
#   gro_all_ops           every operation, every byte compared
#   gro_batches_received  eroce2's rx_gro_batches moved, with more packets
#                         than batches in them
#   gro_corrupt_all_ops   the same under pedit inverting the P_Key of
#                         every 32nd packet eroce1 sends (as impaired
#                         corrupt), which the ICRC covers
#   gro_corrupt_counted   eroce2's rx_drop_icrc moved by exactly as many
#                         as pedit corrupted, at least 32 (8), while GRO
#                         batched: each bad packet was dropped alone, not
#                         its batch and not passed
test_gro() {
	local g1 g2 b0 b1 p0 p1 n2 hits moved why

	if ! veth_gro on; then
		for n2 in gro_all_ops gro_batches_received gro_corrupt_all_ops \
			gro_corrupt_counted; do
			ktap_fail "$n2" "GRO could not be turned on for the veths"
		done
		veth_gro off
		return
	fi
	g1=$(first_gid eroce1 "$(ipv4_gid 198.18.0.1)")
	g2=$(first_gid eroce2 "$(ipv4_gid 198.18.0.2)")
	eroce_tx_batch_all 0
	b0=$(counter eroce2 rx_gro_batches) p0=$(counter eroce2 rx_gro_packets)
	pair gro_all_ops "$g1" "$g2" 198.18.0.2 -o send,write,read \
		-b "$SMALL_BYTES" -s 41
	b1=$(counter eroce2 rx_gro_batches) p1=$(counter eroce2 rx_gro_packets)
	why="eroce2 rx_gro_batches ${b0:-missing} -> ${b1:-missing}, rx_gro_packets ${p0:-missing} -> ${p1:-missing}"
	ktap_diag "$why"
	debug_subset gro_batches_received ||
		ktap_result gro_batches_received "$([ -n "$b0" ] && [ -n "$p0" ] &&
			[ "$b1" -gt "$b0" ] && [ $((p1 - p0)) -gt $((b1 - b0)) ]; echo $?)" "$why"

	if ! debug_subset gro_corrupt_all_ops gro_corrupt_counted; then
		n2=$(counter eroce2 rx_drop_icrc) b0=$(counter eroce2 rx_gro_batches)
		# shellcheck disable=SC2086  # the filter's words
		roce_filter "$NS1" veth1 egress $CORRUPT_ARGS ||
			ktap_diag "gro: the tc filter failed"
		pair gro_corrupt_all_ops "$g1" "$g2" 198.18.0.2 \
			-o send,write,read -b "$IMPAIR_BYTES" -s 42
		hits=$(action_pkts "$NS1" veth1 pedit)
		moved=$(( $(counter eroce2 rx_drop_icrc) - n2 ))
		b1=$(counter eroce2 rx_gro_batches)
		why="pedit corrupted $hits packets (want at least $IMPAIR_MIN), eroce2 rx_drop_icrc moved by $moved (want $hits), rx_gro_batches ${b0:-missing} -> ${b1:-missing}"
		ktap_result gro_corrupt_counted "$([ "$hits" -ge "$IMPAIR_MIN" ] &&
			[ "$moved" = "$hits" ] && [ -n "$b0" ] && [ "$b1" -gt "$b0" ]; echo $?)" "$why"
		ktap_diag "$why"
		ns1 tc qdisc del dev veth1 clsact 2>/dev/null
	fi
	eroce_tx_batch_all 1
	veth_gro off
}

# every operation through a sending queue too short for the traffic: tbf
# on both veths holds one batch, so the stack refuses packets on the way
# out (ENOBUFS): the requester rewinds to the first packet of the batch it
# lost, the responder takes back the READ responses it lost, and tx_errors
# counts them; every byte must still arrive (kept on the debug kernel:
# the rewinds are kernel logic)
test_full_queue() {
	local g1 g2 e1 e2

	debug_subset full_queue_all_ops full_queue_counted && return
	g1=$(first_gid eroce1 "$(ipv4_gid 198.18.0.1)")
	g2=$(first_gid eroce2 "$(ipv4_gid 198.18.0.2)")
	e1=$(counter eroce1 tx_errors)
	e2=$(counter eroce2 tx_errors)
	ns1 tc qdisc add dev veth1 root tbf rate "$FULL_RATE" burst 64kb limit 64kb
	ns2 tc qdisc add dev veth2 root tbf rate "$FULL_RATE" burst 64kb limit 64kb
	pair full_queue_all_ops "$g1" "$g2" 198.18.0.2 \
		-o send,write,read -b "$IMPAIR_BYTES" -s 32 "${FULL_ARGS[@]}"
	ktap_diag "$(ns1 tc -s qdisc show dev veth1)"
	ns1 tc qdisc del dev veth1 root 2>/dev/null
	ns2 tc qdisc del dev veth2 root 2>/dev/null
	e1=$(( $(counter eroce1 tx_errors) - e1 ))
	e2=$(( $(counter eroce2 tx_errors) - e2 ))
	ktap_result full_queue_counted "$([ "$e1" -gt 0 ]; echo $?)" \
		"tx_errors eroce1 +$e1, eroce2 +$e2: the qdisc refused nothing"
	ktap_diag "tx_errors: eroce1 +$e1, eroce2 +$e2"
}

ktap_plan 29
[ -x "$TOOL" ] || ktap_bail "$TOOL not built (make -C selftests/tools)"
require setup
kmsg_mark
test_lossless
test_loss
test_impairments
test_gro
test_full_queue
ktap_kernel_log_clean
ktap_check link_del eval 'rdma link del eroce1 && rdma link del eroce2'
ktap_finish
