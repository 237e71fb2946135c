#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# netns.sh: eroce devices in network namespaces.  The UDP/4791 sockets
# live in the netdev's namespace, so two devices in two namespaces joined
# by a veth pair coexist, and coexist with rdma_rxe (whose 6.1 socket is in
# the initial namespace).  With rdma_rxe loaded, an eroce device in the
# initial namespace must be refused (port taken).  Deleting a namespace
# removes its device; rmmod with devices in namespaces is clean.  On the
# debug kernel (lib.sh debug_subset) the second namespace's socket check
# (the first's again) and the ping (no eroce in it) are left out.
#
#   ns1: veth1 198.18.0.1 <-> ns2: veth2 198.18.0.2   (eroce1, eroce2)
#   init: vetha 198.18.2.1 <-> vethb 198.18.2.2       (rxe0 on vetha)
#   ns3: veth5 <-> veth6                               (eroce3)
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

NS3=eroce-ns3

setup() {
	two_ns_setup &&
		veth_add "" vetha "" vethb &&
		addr_add "" vetha 198.18.2.1/24 && addr_add "" vethb 198.18.2.2/24 &&
		netns_add "$NS3" && veth_add "$NS3" veth5 "$NS3" veth6 &&
		addr_add "$NS3" veth5 198.18.3.1/24
}

# udp4791 [NS] [-4|-6]: a socket bound to UDP port 4791 exists in NS
# (default: the initial namespace)
udp4791() {
	local ns=${1:-} out
	if [ -n "$ns" ]; then
		out=$(ip netns exec "$ns" ss -Hunl ${2:-} 'sport = :4791')
	else
		out=$(ss -Hunl ${2:-} 'sport = :4791')
	fi
	[ -n "$out" ]
}

test_two_ns() {
	ktap_check add_in_ns1 ns1 rdma link add eroce1 type eroce netdev veth1
	ktap_check add_in_ns2 ns2 rdma link add eroce2 type eroce netdev veth2
	ktap_check both_active eval 'wait_for 10 port_state_is eroce1 "4: ACTIVE" &&
		wait_for 10 port_state_is eroce2 "4: ACTIVE"'
	ktap_check gids_per_ns eval 'wait_for 10 has_gid eroce1 $(ipv4_gid 198.18.0.1) &&
		wait_for 10 has_gid eroce2 $(ipv4_gid 198.18.0.2)'
	ktap_check udp4791_ipv4_ipv6_in_ns1 eval 'udp4791 $NS1 -4 && udp4791 $NS1 -6'
	debug_subset udp4791_ipv4_ipv6_in_ns2 ||
		ktap_check udp4791_ipv4_ipv6_in_ns2 eval 'udp4791 $NS2 -4 && udp4791 $NS2 -6'
	ktap_check_fails no_udp4791_in_init_net udp4791 ""
	debug_subset ping_ns1_ns2 || ktap_check ping_ns1_ns2 ns1 $PING -c 1 -W 5 198.18.0.2
}

test_with_rxe() {
	local msg

	ktap_check rxe_loads_after_eroce rxe_load
	ktap_check rxe_add_init_net eval 'rxe_add rxe0 vetha &&
		wait_for 10 port_state_is rxe0 "4: ACTIVE"'
	ktap_check rxe_udp4791_in_init_net udp4791 ""
	ktap_check eroce_still_active eval 'port_state_is eroce1 "4: ACTIVE" &&
		port_state_is eroce2 "4: ACTIVE"'
	ktap_check eroce_new_ns_with_rxe eval 'ip netns exec $NS3 rdma link add eroce3 type eroce netdev veth5 &&
		wait_for 10 port_state_is eroce3 "4: ACTIVE"'
	kmsg_mark
	ktap_check_fails eroce_init_net_refused rdma link add eroce9 type eroce netdev vethb
	msg="$LAST_OUT${LAST_OUT:+$'\n'}$(dmesg_since_mark)"
	ktap_diag "error: $msg"
	ktap_result eroce_refusal_reported "$([ -n "$msg" ]; echo $?)" \
		"no error message and nothing in dmesg"
	ktap_check refused_left_nothing eval '! rdma_dev_exists eroce9'
	ktap_check rxe_still_active port_state_is rxe0 "4: ACTIVE"
}

test_teardown() {
	ip netns del "$NS2"
	ktap_check netns_delete_removes_device wait_for 30 rdma_dev_gone eroce2
	# veth1 dies with its peer veth2, and eroce1 with it
	ktap_check peer_removal_removes_device wait_for 30 rdma_dev_gone eroce1
	ktap_check ns3_device_survives port_state_is eroce3 "4: ACTIVE"
	ktap_check rxe_unload eval 'rdma link del rxe0 && rmmod rdma_rxe'
	ktap_check eroce_init_net_after_rxe eval 'rdma link add eroce0 type eroce netdev vethb &&
		wait_for 10 port_state_is eroce0 "4: ACTIVE" && udp4791 ""'
	ktap_check rmmod_with_ns_devices eroce_unload
	ktap_check no_device_left eval '! ls $IBSYS | grep -q . && ! rdma link show | grep -q .'
	ktap_check no_udp4791_left eval '! udp4791 "" && ! udp4791 $NS1 && ! udp4791 $NS3'
}

ktap_plan 26
require setup
ktap_check load_module eroce_load
grep -q '^eroce ' /proc/modules || ktap_bail "module not loaded"
test_two_ns
test_with_rxe
test_teardown
ktap_finish
