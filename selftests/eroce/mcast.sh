#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 480
#
# mcast.sh: UD multicast (Documentation/design.rst "Multicast").
#   - selftests/tools/eroce_mcast, one process, UD QP A on
#     eroce1 sending to a group, UD QPs B1 and B2 on eroce2 attached to
#     it, B3 not; each "result:" line one subtest, for an IPv4 group
#     (239.1.2.3) and an IPv6 one (ff0e::1:3):
#       attach, attach_joins_netdev (veth2 lists the group in `ip maddr`:
#       the IGMP/MLD membership a snooping switch needs), refused
#       (unicast GID, RC QP, detach of a QP never attached: EINVAL),
#       deliver (B1 and B2 each get every message once, in order, byte
#       for byte, with the GRH; B3 nothing), hop_limit (the AH's went
#       out as TTL or hop limit), loopback (a QP of the sending device
#       attached to the group gets its packets), detach_one, bad_qkey and
#       bad_qpn (a packet for the group naming a unicast QPN: both
#       counted, delivered to no one), detach_all (veth2 leaves the
#       group; with a socket holding it, a packet for it counts in
#       rx_drop_mcast_no_group).
#     Once more for an IPv4 group (239.1.2.5) in VLAN 100 (veth1.100,
#     veth2.100, their GIDs; mcast4_vlan_*): the first attachment joins
#     the group on the VLAN device too, so its IP layer lets the group's
#     packets through to the QPs.
#   - rdma_cm multicast: mckey in ns2 joins 239.1.2.4 and receives the
#     20 messages mckey -s in ns1 sends; mcast_packets_rcvd moves.
#   - consumed_not_dropped: during an ibv_rc_pingpong between ns1 and ns2
#     (eroce2 receives >= 400 packets) skb:kfree_skb, what drop monitors
#     read, sees no packet freed by eroce.
# Run: selftests/run_vm.sh selftests/eroce/mcast.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_mcast"
# shellcheck disable=SC2034  # read by ktap_srv_cli (lib_rdma.sh)
SC_T=90

# mcast PREFIX GID_A GID_B GROUP [NETDEV_B]: eroce_mcast's ten results
mcast() {
	ktap_results "$1" 10 timeout -k 5 150 "$TOOL" eroce1 "$2" eroce2 "$3" "$4" "$NS2" "${@:5}"
}

MCAST_RESULTS="attach attach_joins_netdev refused deliver hop_limit loopback detach_one bad_qkey bad_qpn detach_all"

# vlan_gids: VLAN 100 on veth1 and veth2, GV1/GV2 their GIDs' indexes
vlan_gids() {
	vlan_pair_add 100 30 || return
	GV1=$(gid_index_of eroce1 198.18.100.1) &&
		GV2=$(gid_index_of eroce2 198.18.100.2)
}

ipv6_gids() {
	wait_for 30 has_gid eroce1 "$(ipv6_gid 2001:db8::1)" &&
		wait_for 30 has_gid eroce2 "$(ipv6_gid 2001:db8::2)" || return
	G61=$(first_gid eroce1 "$(ipv6_gid 2001:db8::1)") &&
		G62=$(first_gid eroce2 "$(ipv6_gid 2001:db8::2)") &&
		[ -n "$G61" ] && [ -n "$G62" ]
}

TRACE=/sys/kernel/tracing

# eroce_drops: the skb:kfree_skb events in the trace whose location (the
# caller of kfree_skb(), printed as an address with hash-ptr off) lies in
# eroce's module memory
eroce_drops() {
	local base size loc n=0
	read -r _ size _ _ _ base _ < <(grep '^eroce ' /proc/modules)
	[ -n "$base" ] && [ "$((base))" != 0 ] || return 1
	while read -r loc; do
		loc=$((0x$loc))
		[ "$loc" -ge "$((base))" ] && [ "$loc" -lt "$((base + size))" ] &&
			n=$((n + 1))
	done < <(sed -n 's/.* kfree_skb: .*location=\([0-9a-f]*\) .*/\1/p' "$TRACE/trace")
	echo "$n"
}

# consumed_not_dropped: a clean RC transfer frees no packet through
# kfree_skb() (the skb:kfree_skb tracepoint, what drop monitors read),
# and eroce did receive its packets
consumed_not_dropped() {
	local rc=0 drops all
	stat_snap eroce2 "$RDMA_TMP/pp_eroce2"
	echo 0 >"$TRACE/options/hash-ptr" &&
		echo 1 >"$TRACE/events/skb/kfree_skb/enable" &&
		echo >"$TRACE/trace" && echo 1 >"$TRACE/tracing_on" || return
	srv_cli 60 "$NS2" "$NS1" ibv_rc_pingpong -d eroce2 -g "$G2" -n 200 -- \
		ibv_rc_pingpong -d eroce1 -g "$G1" -n 200 198.18.0.2 || rc=1
	echo 0 >"$TRACE/tracing_on"
	echo 0 >"$TRACE/events/skb/kfree_skb/enable"
	drops=$(eroce_drops) || drops=unknown
	all=$(grep -c ' kfree_skb: ' "$TRACE/trace")
	echo 1 >"$TRACE/options/hash-ptr"
	ktap_diag "kfree_skb() called by eroce: $drops (of $all in all)"
	[ "$rc" = 0 ] || srv_cli_diag
	[ "$rc" = 0 ] && [ "$drops" = 0 ] &&
		[ "$(stat_delta eroce2 "$RDMA_TMP/pp_eroce2" rx_packets)" -ge 400 ]
}

ktap_plan 34
require eroce_pair_setup
require pair_gids
pair_gids
kmsg_mark

mcast mcast4 "$G1" "$G2" 239.1.2.3

if ipv6_gids; then
	mcast mcast6 "$G61" "$G62" ff0e::1:3
else
	for t in $MCAST_RESULTS; do
		ktap_fail "mcast6_$t" "no IPv6 GIDs on eroce1/eroce2"
	done
fi

if vlan_gids; then
	mcast mcast4_vlan "$GV1" "$GV2" 239.1.2.5 veth2.100
else
	for t in $MCAST_RESULTS; do
		ktap_fail "mcast4_vlan_$t" "no VLAN 100 GIDs on eroce1/eroce2"
	done
fi

stat_snap eroce2 "$RDMA_TMP/mc_eroce2"
SC_OPTS=(-r "receiving data transfers")
ktap_srv_cli mckey_ipv4 'grep -q "data transfers complete" <<<"$SRV_OUT"' \
	mckey -m 239.1.2.4 -b 198.18.0.2 -C 20 -S 512 -- \
	mckey -m 239.1.2.4 -b 198.18.0.1 -C 20 -S 512 -s
SC_OPTS=()
ktap_check mckey_counted stat_moved eroce2 "$RDMA_TMP/mc_eroce2" mcast_packets_rcvd

if consumed_not_dropped; then
	ktap_ok consumed_not_dropped
else
	ktap_fail consumed_not_dropped "eroce freed packets as drops, or too few went through"
fi

ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
