#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317  # event_* and restore: called by cycles (lib_teardown.sh)
# vm-timeout: 600
#
# teardown_netdev.sh: the netdev under a device taken away under traffic,
# again and again (the cycles and their four verdicts per event are
# lib_teardown.sh's; teardown_cycles.sh takes the path, the process and
# the device away):
#   netdev_del  veth1 deleted (and its peer veth2 with it): both devices
#               go, the veth pair and the links are made again
#   netns_move  veth1 moved into another namespace for 2 s, then back:
#               eroce1 goes (a device follows its netdev's namespace only
#               by being added there again), then is added again
#   ns_del      every process in ns1 killed and ns1 deleted: veth1, the
#               pair and both devices go with the namespace
#   vlan_del    the traffic on the GIDs of VLAN 10 (veth1.10 198.18.10.1
#               <-> veth2.10 198.18.10.2), then the VLAN device deleted
#               under it, ns1's in odd cycles, ns2's in even ones (the
#               integrity tool's TCP connection stays on the untagged
#               link, so that its server hears the client hang up);
#               eroce2 must have received 100 packets in the moment
#               before (the deletion meets packets on their way in)
# Besides the verdicts: a device whose netdev went must not report its
# port ACTIVE for more than 5 s (it goes, or its port is DOWN while
# rdma_cm's users hold it), else the event counts as failed.
#
#   ns1: veth1 198.18.0.1 (eroce1) <-> ns2: veth2 198.18.0.2 (eroce2)
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"
# shellcheck source=../lib_teardown.sh
. "$(dirname "$0")/../lib_teardown.sh"

NS3=eroce-ns3

# vlan_add NS DEV ADDR: VLAN 10 on DEV in NS with ADDR/24
vlan_add() {
	ip -n "$1" link add link "$2" name "$2.10" type vlan id 10 &&
		ip -n "$1" link set "$2.10" up &&
		addr_add "$1" "$2.10" "$3/24"
}

# vlans_ready: both VLAN devices present with their GIDs
vlans_ready() {
	ip -n "$NS1" link show veth1.10 >/dev/null 2>&1 ||
		vlan_add "$NS1" veth1 198.18.10.1 || return
	ip -n "$NS2" link show veth2.10 >/dev/null 2>&1 ||
		vlan_add "$NS2" veth2 198.18.10.2 || return
	wait_for 30 has_gid eroce1 "$(ipv4_gid 198.18.10.1)" &&
		wait_for 30 has_gid eroce2 "$(ipv4_gid 198.18.10.2)"
}

# pair_present: veth1 in ns1 and veth2 in ns2
# shellcheck disable=SC2317  # called through wait_for
pair_present() {
	ip -n "$NS1" link show veth1 >/dev/null 2>&1 &&
		ip -n "$NS2" link show veth2 >/dev/null 2>&1
}

# pair_gone: neither end of the veth pair is left
# shellcheck disable=SC2317  # called through wait_for
pair_gone() {
	! ip -n "$NS1" link show veth1 >/dev/null 2>&1 &&
		! ip -n "$NS2" link show veth2 >/dev/null 2>&1
}

# not_active DEV: DEV is gone or its port is not ACTIVE
# shellcheck disable=SC2317  # called through wait_for
not_active() {
	! rdma_dev_exists "$1" || ! port_state_is "$1" "4: ACTIVE"
}

# devices_let_go DEV...: each DEV gone or inactive within 5 s
devices_let_go() {
	local dev

	for dev in "$@"; do
		wait_for 5 not_active "$dev" && continue
		ktap_diag "$dev: port $(port_state "$dev") 5 s after its netdev went"
		return 1
	done
}

# restore: the pair, both links and the VLANs back
restore() {
	eroce_load || return 1
	if ! pair_present; then
		# the pair went with a netdev or a namespace: once its devices
		# have gone (after rdma_cm's users), build it all again
		wait_for 60 pair_gone && wait_for 60 rdma_dev_gone eroce1 &&
			wait_for 60 rdma_dev_gone eroce2 || return 1
		ip netns del "$NS1" 2>/dev/null
		ip netns del "$NS2" 2>/dev/null
		eroce_links_setup && vlans_ready
		return
	fi
	# a device that went is gone for good before its name is free
	wait_for 60 rdma_dev_gone_or_ready eroce1 &&
		wait_for 60 rdma_dev_gone_or_ready eroce2 || return 1
	rdma_dev_exists eroce1 || ns1 rdma link add eroce1 type eroce netdev veth1 ||
		return 1
	rdma_dev_exists eroce2 || ns2 rdma link add eroce2 type eroce netdev veth2 ||
		return 1
	eroce_links_ready && vlans_ready
}

# rdma_dev_gone_or_ready DEV: DEV gone, or there with its port ACTIVE
# shellcheck disable=SC2317  # called through wait_for
rdma_dev_gone_or_ready() {
	rdma_dev_gone "$1" || port_state_is "$1" "4: ACTIVE"
}

# flowing_by N: eroce2 received N packets more than FLOW_MARK
# shellcheck disable=SC2317  # called through wait_for
flowing_by() {
	local n
	n=$(stat_get eroce2/1 rx_packets) || return 1
	[ "$n" -ge $((FLOW_MARK + $1)) ]
}

# ---- the events -----------------------------------------------------------------

event_netdev_del() {
	ns1 ip link delete veth1 || return
	devices_let_go eroce1 eroce2
}

event_netns_move() {
	ns1 ip link set veth1 netns "$NS3" || return
	devices_let_go eroce1 || return
	sleep 2
	ip -n "$NS3" link set veth1 netns "$NS1" &&
		ns1 ip link set veth1 up &&
		addr_add "$NS1" veth1 198.18.0.1/24 2001:db8::1/64
}

event_ns_del() {
	ip netns pids "$NS1" | xargs -r kill -KILL
	ip netns del "$NS1" || return
	# the namespace dies once its last process has gone
	wait_for 60 pair_gone || return
	devices_let_go eroce1 eroce2
}

# c is the cycle (cycles' local).  The deletion must meet packets on
# their way in: eroce2 received 100 more (all on the VLAN's GIDs) just
# before, else the event fails (and with it NAME_tools_ended)
event_vlan_del() {
	FLOW_MARK=$(stat_get eroce2/1 rx_packets) || return
	if ! wait_for 10 flowing_by 100; then
		ktap_diag "vlan_del: no traffic when the VLAN device was to go"
		return 1
	fi
	if [ $((c % 2)) = 1 ]; then
		ns1 ip link delete veth1.10
	else
		ns2 ip link delete veth2.10
	fi
}

ktap_plan 16
[ -x "$TOOL" ] || ktap_bail "$TOOL not built (make -C selftests/tools)"
require eroce_pair_setup
require netns_add "$NS3"
require vlans_ready
BASE=$(objects)
cycles netdev_del
cycles netns_move
# the clients must still be running when the namespace's processes die
KILLED="integrity_client bw_client" ITMO=$((RUN + END / 2)) cycles ns_del
RDMA_A1=198.18.10.1 RDMA_A2=198.18.10.2 cycles vlan_del
ktap_finish
