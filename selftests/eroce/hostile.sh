#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
#
# hostile.sh: malformed and hostile RoCEv2 packets from the network.
# selftests/tools/eroce_hostile.py (scapy, AF_PACKET on veth1 in ns1) aims
# forged packets at live QPs of eroce2 (held by selftests/tools/eroce_victim):
# bad ICRC, unknown opcodes, truncated headers, bad pad, unknown QPN, bad
# P_Key, spoofed source, wrong QP type, PSNs far outside the window, an ACK
# for a PSN never sent, a UD packet with a wrong Q_Key, and RDMA WRITE/READ
# access violations (rkey of another PD, random rkey, address/length past
# the MR, a length that overflows), and a READ whose responses would take
# half the PSN space (2 GiB at MTU 256: an invalid request).  Each must
# move its `rdma statistic` counter; the victim connection survives
# everything but the requests that fail the QP, which must put the victim
# QP in error with an error completion while new connections work.  Those
# are the rows of Documentation/design.rst "How a request fails" that a
# forged packet can reach: access violations, RDMA lengths over 2 GiB,
# opcodes out of sequence, lengths that disagree with the MTU or the
# RETH, an atomic to a QP without atomics or misaligned, a SEND longer
# than the receive buffer, a SEND with Invalidate of an unknown key, a
# user MR's or another PD's; each must move its one NAK counter by
# exactly one (and no other fatal NAK counter), and a failed receive must
# complete with the status the table names.  A SEND that finds no receive
# while the victim's queue of owed responses is full (32 READs, each with
# a WRITE's ACK behind it, paced to 100 kb/s) must still draw its RNR NAK,
# on the wire after the last READ's response (acks_folded and
# rnr_naks_sent +1 each).  With loss_recovery sr on eroce2, a packet kept
# from a local UDP_SEGMENT send (one good segment, 47 with bad ICRCs,
# cut by the UDP stack) must be charged what it pins: ooo_bytes_kept counts the QP's window with
# the first kept packet, 499 such sends to two QPs are counted exactly,
# and closing the holes places them all, brings ooo_bytes_kept back to
# where it was and frees no more memory than it said was kept (8 MiB of
# slack; kept whole, each would pin 64 KiB).  Every counter the barrage accepts must be one `rdma
# statistic show` lists (a name it does not list never moves: an
# alternative that can never be taken).  Then a flood of
# such packets at random QPNs while eroce_integrity runs must leave that
# traffic intact (the flood must be seen at eroce2 while the traffic
# runs).  The flood's packets sent over a second link into ns2, whose
# netdev has no eroce device, must reach ns2's UDP socket and leave
# eroce2's counters alone (a device hears its own netdev only).  A
# fresh ibv_rc_pingpong -c must pass and the kernel log must be clean.
# A UDP_SEGMENT send cut every byte is cut by the UDP stack, and each of
# its 120 segments dropped as too short (rx_drop_truncated +120).
# On the debug kernel the traffic under the flood and the pingpong
# move 1/8 (6M, 12 iterations) and the tool's deadline is stretched; the
# ICRC selftest (scapy against the tool's ICRC code, no kernel in it)
# and the flood (the barrage's drops again, at random QPNs, beside
# traffic) are left out (lib.sh debug_subset): the barrage and the
# pingpong after it run.
#
#   ns1: veth1 198.18.0.1 (eroce1) <-> ns2: veth2 198.18.0.2 (eroce2)
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOLS="$EROCE_ROOT/selftests/tools"
PY=/usr/bin/python3
OUT=/tmp/hostile
mkdir -p "$OUT"
# the traffic under the flood (per operation) and the pingpong's iterations:
# 1/8 on the debug kernel (lib.sh).  The flood keeps its 30 s: the client
# starts once eroce2 sees it, so the two overlap however short the traffic.
FLOOD_BYTES=$(debug_scaled 48M)
PP_ITERS=$(debug_scaled 100)
# the deadline of eroce_integrity's two ends
INTEGRITY_TMO=$(tmo 150)


counters() {
	rdma statistic show link "$1/1" 2>/dev/null |
		awk '{ for (i = 3; i < NF; i += 2) if ($(i + 1) != 0) printf "%s %s ", $i, $(i + 1) } END { print "" }'
}

GID1=1
GID2=1
DST_MAC=

# barrage_counters: every counter name eroce_hostile.py's barrage accepts
# (its lists of counters any of which must move, and the counters it
# reads by name), one per line
barrage_counters() {
	{
		grep -oE "(^|[ (])\['[a-z_]+'(, '[a-z_]+')*\](\)|$)" "$TOOLS/eroce_hostile.py" |
			grep -oE "'[a-z_]+'"
		grep -oE "d\.get\('[a-z_]+'" "$TOOLS/eroce_hostile.py" | grep -oE "'[a-z_]+'"
	} | tr -d "'" | sort -u
}

# the counters the barrage accepts exist: a check that accepts a counter
# the device does not have can pass only through the others
test_barrage_counters() {
	local c names missing=''
	names=$(barrage_counters)
	for c in $names; do
		[ -n "$(stat_get eroce2/1 "$c")" ] || missing+=" $c"
	done
	ktap_diag "the barrage accepts: $(tr '\n' ' ' <<<"$names")"
	ktap_result barrage_counters_exist \
		"$([ "$(grep -c . <<<"$names")" -ge 10 ] && [ -z "$missing" ]; echo $?)" \
		"not counters of eroce2:${missing:- (found only $(grep -c . <<<"$names") names)}"
}

test_barrage() {
	local rc

	echo "    # Subtest: eroce_hostile"
	ns1 "$PY" "$TOOLS/eroce_hostile.py" --iface veth1 --dst-mac "$DST_MAC" \
		--gid "$GID1" --victim "$TOOLS/eroce_victim" 2>&1 | sed -u 's/^/    /'
	rc=${PIPESTATUS[0]}
	ktap_diag "eroce1: $(counters eroce1)"
	ktap_diag "eroce2: $(counters eroce2)"
	ktap_result hostile_packets "$rc" "eroce_hostile.py exit status $rc"
}

# the drop counters the flood moves at eroce2 (every flood packet dies in
# one of them)
FLOOD_COUNTERS="rx_drop_icrc rx_drop_bad_opcode rx_drop_truncated rx_drop_bad_header
rx_drop_no_qp rx_drop_wrong_qp_type rx_drop_qp_state rx_drop_bad_pkey rx_drop_wrong_source
rx_drop_unexpected_response"

# flood_drops: the sum of FLOOD_COUNTERS at eroce2 now, from one `rdma
# statistic` call (nothing when one is missing)
flood_drops() {
	stat_all eroce2/1 | awk -v l="$FLOOD_COUNTERS" '
		BEGIN { n = split(l, c); for (i = 1; i <= n; i++) want[c[i]] = 1 }
		$1 in want { s += $2; found++ }
		END { if (found == n) print s }'
}

flood_started() {
	[ "$(flood_drops)" -gt "$FLOOD0" ]
}

# eroce_integrity between the namespaces while forged packets fly
test_flood_under_traffic() {
	local spid fpid rc_s rc_c rc_f d0 d1

	ns2 "$TOOLS/eroce_integrity" -d eroce2 -g "$GID2" -p 18600 -t "$INTEGRITY_TMO" \
		>"$OUT/flood.server" 2>&1 &
	spid=$!
	wait_for 60 tcp_listening "$NS2" 18600
	# the flood tool builds its packet pool first (seconds, more on a
	# slow machine), then floods for 30 s: start the client once eroce2
	# sees the flood
	FLOOD0=$(flood_drops)
	ns1 "$PY" "$TOOLS/eroce_hostile.py" --iface veth1 --dst-mac "$DST_MAC" \
		--flood 30 >"$OUT/flood.py" 2>&1 &
	fpid=$!
	wait_for 120 flood_started
	d0=$(flood_drops)
	ns1 "$TOOLS/eroce_integrity" -d eroce1 -g "$GID1" -p 18600 -t "$INTEGRITY_TMO" \
		-o send,write -b "$FLOOD_BYTES" -s 77 198.18.0.2 >"$OUT/flood.client" 2>&1
	rc_c=$?
	wait "$spid"; rc_s=$?
	d1=$(flood_drops)
	wait "$fpid"; rc_f=$?
	ktap_diag "$(cat "$OUT/flood.py")"
	ktap_diag "eroce2 dropped $((d0 - FLOOD0)) flood packets before the traffic, $((d1 - d0)) while it ran"
	ktap_result flood_sent "$([ "$rc_f" = 0 ] && [ "$d1" -gt "$d0" ]; echo $?)" \
		"flood exit $rc_f, $((d1 - d0)) flood packets dropped while the traffic ran: $(tail -n 3 "$OUT/flood.py")"
	ktap_diag "$(sed 's/^/client: /' "$OUT/flood.client"; sed 's/^/server: /' "$OUT/flood.server")"
	ktap_diag "eroce2: $(counters eroce2)"
	ktap_result traffic_intact_during_flood \
		"$([ "$rc_c" = 0 ] && [ "$rc_s" = 0 ]; echo $?)" \
		"eroce_integrity client exit $rc_c, server exit $rc_s"
}

# A device hears its own netdev only: forged packets at eroce2's address
# that eroce2 would drop and count (the flood's kinds), sent over a
# second link into ns2 (vz1 -> vz2, no eroce device on it), reach ns2's
# UDP port 4791 socket and leave every rx counter of eroce2 as it was
test_foreign_netdev() {
	local u0 u1 before after rc

	if ! veth_add "$NS1" vz1 "$NS2" vz2 ||
		! ns2 sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.vz2.rp_filter=0; then
		ktap_fail foreign_netdev_ignored "no second link"
		return
	fi
	before=$(stat_all eroce2/1 | grep '^rx_')
	u0=$(udp_stat "$NS2" InDatagrams)
	ns1 "$PY" "$TOOLS/eroce_hostile.py" --iface vz1 --dst-ip 198.18.0.2 \
		--dst-mac "$(ns2 cat /sys/class/net/vz2/address)" --flood 5 \
		--flood-pool 40 >"$OUT/foreign.py" 2>&1
	rc=$?
	u1=$(udp_stat "$NS2" InDatagrams)
	after=$(stat_all eroce2/1 | grep '^rx_')
	ktap_diag "$(cat "$OUT/foreign.py"); ns2 delivered $((u1 - u0)) UDP datagrams"
	ktap_result foreign_netdev_ignored \
		"$([ "$rc" = 0 ] && [ $((u1 - u0)) -gt 0 ] && [ "$before" = "$after" ]; echo $?)" \
		"flood exit $rc; eroce2 rx counters before: ${before//$'\n'/ }; after: ${after//$'\n'/ }"
	ip -n "$NS1" link del vz1
}

# A UDP GSO send cut every byte (UDP_SEGMENT 1, 120 bytes: 120
# segments, none of them a RoCE packet) crosses the veth whole; the UDP
# stack cuts it before eroce2's encap_rcv, which must drop each segment
# on its own as too short (rx_drop_truncated +120), none as a bad GSO skb
test_tiny_gso() {
	local b0 b1 t0 t1 rc=0

	b0=$(stat_get eroce2/1 rx_drop_bad_gso)
	t0=$(stat_get eroce2/1 rx_drop_truncated)
	ns1 "$PY" -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_UDP, 103, 1)    # UDP_SEGMENT
s.sendto(bytes(120), ("198.18.0.2", 4791))' >"$OUT/tiny_gso" 2>&1 || rc=$?
	wait_for 5 eval '[ $(($(stat_get eroce2/1 rx_drop_truncated) - t0)) -ge 120 ]'
	b1=$(stat_get eroce2/1 rx_drop_bad_gso)
	t1=$(stat_get eroce2/1 rx_drop_truncated)
	ktap_result tiny_gso_segments_dropped \
		"$([ $rc = 0 ] && [ "$b1" = "$b0" ] && [ $((t1 - t0)) = 120 ]; echo $?)" \
		"send exit $rc $(cat "$OUT/tiny_gso"); rx_drop_bad_gso +$((b1 - b0)), rx_drop_truncated +$((t1 - t0))"
}

test_pingpong_after() {
	srv_cli 60 "$NS2" "$NS1" ibv_rc_pingpong -d eroce2 -g "$GID2" -c -n "$PP_ITERS" -- \
		ibv_rc_pingpong -d eroce1 -g "$GID1" -c -n "$PP_ITERS" 198.18.0.2
	local rc=$?
	ktap_diag "$(tail -n 3 <<<"$CLI_OUT")"
	[ $rc = 0 ] || srv_cli_diag
	ktap_result rc_pingpong_after_barrage "$rc" \
		"ibv_rc_pingpong client exit $CLI_RC, server exit $SRV_RC"
}

ktap_plan 9
for t in eroce_victim eroce_integrity; do
	[ -x "$TOOLS/$t" ] || ktap_bail "$TOOLS/$t not built (make -C selftests/tools)"
done
require eroce_pair_setup
GID1=$(first_gid eroce1 "$(ipv4_gid 198.18.0.1)")
GID2=$(first_gid eroce2 "$(ipv4_gid 198.18.0.2)")
DST_MAC=$(ns2 cat /sys/class/net/veth2/address)
kmsg_mark
debug_subset icrc_matches_scapy ||
	ktap_check icrc_matches_scapy "$PY" "$TOOLS/eroce_hostile.py" --selftest
test_barrage_counters
test_barrage
debug_subset flood_sent traffic_intact_during_flood || test_flood_under_traffic
test_foreign_netdev
test_tiny_gso
test_pingpong_after
ktap_kernel_log_clean
ktap_finish
