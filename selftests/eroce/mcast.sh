#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 300
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
#       for byte, with the GRH; B3 nothing), detach_one, bad_qkey and
#       bad_qpn (a packet for the group naming a unicast QPN: both
#       counted, delivered to no one), detach_all (veth2 leaves the
#       group; with a socket holding it, a packet for it counts in
#       rx_drop_mcast_no_group).
#   - rdma_cm multicast: mckey in ns2 joins 239.1.2.4 and receives the
#     20 messages mckey -s in ns1 sends; mcast_packets_rcvd moves.
# Run: selftests/run_vm.sh selftests/eroce/mcast.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_mcast"
# shellcheck disable=SC2034  # read by ktap_srv_cli (lib_rdma.sh)
SC_T=90

# mcast PREFIX GID_A GID_B GROUP: eroce_mcast's eight results
mcast() {
	ktap_results "$1" 8 timeout -k 5 150 "$TOOL" eroce1 "$2" eroce2 "$3" "$4" "$NS2"
}

ipv6_gids() {
	wait_for 30 has_gid eroce1 "$(ipv6_gid 2001:db8::1)" &&
		wait_for 30 has_gid eroce2 "$(ipv6_gid 2001:db8::2)" || return
	G61=$(first_gid eroce1 "$(ipv6_gid 2001:db8::1)") &&
		G62=$(first_gid eroce2 "$(ipv6_gid 2001:db8::2)") &&
		[ -n "$G61" ] && [ -n "$G62" ]
}

ktap_plan 19
require eroce_pair_setup
require pair_gids
pair_gids
kmsg_mark

mcast mcast4 "$G1" "$G2" 239.1.2.3

if ipv6_gids; then
	mcast mcast6 "$G61" "$G62" ff0e::1:3
else
	for t in attach attach_joins_netdev refused deliver detach_one bad_qkey bad_qpn detach_all; do
		ktap_fail "mcast6_$t" "no IPv6 GIDs on eroce1/eroce2"
	done
fi

stat_snap eroce2 "$RDMA_TMP/mc_eroce2"
SC_OPTS=(-r "receiving data transfers")
ktap_srv_cli mckey_ipv4 'grep -q "data transfers complete" <<<"$SRV_OUT"' \
	mckey -m 239.1.2.4 -b 198.18.0.2 -C 20 -S 512 -- \
	mckey -m 239.1.2.4 -b 198.18.0.1 -C 20 -S 512 -s
SC_OPTS=()
ktap_check mckey_counted stat_moved eroce2 "$RDMA_TMP/mc_eroce2" mcast_packets_rcvd

ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
