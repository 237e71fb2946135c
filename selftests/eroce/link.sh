#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# link.sh: the life of an eroce link in the initial namespace.
# `rdma link add/del` (and the netdev the device names: `rdma link`, sysfs
# `parent`), port state following the netdev (admin and carrier),
# the GID table (IPv4-mapped, IPv6, address add/remove, VLAN upper devices),
# the device seen through the provider (ibv_devices, ibv_devinfo), active
# MTU following the netdev MTU, removal when the netdev goes away, and
# `rmmod eroce` with devices still present.  On the debug kernel (lib.sh
# debug_subset) ibv_devices (ibv_devinfo opens the device) and the MTU
# sweep (one change, to 9000, stays) are left out.
#
#   veth0 198.18.0.1/24 2001:db8::1/64  <->  veth1 198.18.0.2/24 (peer)
#   veth0.100 198.19.100.1/24 (VLAN 100 on veth0)
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

GID4=$(ipv4_gid 198.18.0.1)
GID6=$(ipv6_gid 2001:db8::1)

setup() {
	modprobe -a veth 8021q &&
		veth_add "" veth0 "" veth1 &&
		addr_add "" veth0 198.18.0.1/24 2001:db8::1/64 &&
		addr_add "" veth1 198.18.0.2/24 2001:db8::2/64
}

test_add() {
	ktap_check load_module eroce_load
	grep -q '^eroce ' /proc/modules || ktap_bail "module not loaded"
	ktap_check provider_installed provider_install
	ktap_check link_add rdma link add eroce0 type eroce netdev veth0
	rdma_dev_exists eroce0 || ktap_bail "no eroce0 device"
	ktap_check rdma_link_show \
		eval 'rdma link show | grep -E "^link eroce0/1 .*netdev veth0"'
	ktap_check parent_attr grep -qx veth0 "$IBSYS/eroce0/parent"
	ktap_check link_layer_ethernet \
		grep -qx Ethernet "$IBSYS/eroce0/ports/1/link_layer"
	ktap_check port_active wait_for 10 port_state_is eroce0 "4: ACTIVE"
}

test_gids() {
	local v4=198.18.1.1 vlan=198.19.100.1

	ktap_check gid_ipv4 wait_for 10 has_gid eroce0 "$GID4" veth0
	ktap_check gid_ipv6 wait_for 10 has_gid eroce0 "$GID6" veth0
	ip addr add "$v4/24" dev veth0
	ktap_check gid_address_added wait_for 10 has_gid eroce0 "$(ipv4_gid $v4)" veth0
	ip addr del "$v4/24" dev veth0
	ktap_check gid_address_removed wait_for 10 no_gid eroce0 "$(ipv4_gid $v4)"
	ip link add link veth0 name veth0.100 type vlan id 100 &&
		ip addr add "$vlan/24" dev veth0.100 && ip link set veth0.100 up
	ktap_check gid_vlan wait_for 10 has_gid eroce0 "$(ipv4_gid $vlan)" veth0.100
	ip link del veth0.100
	ktap_check gid_vlan_removed wait_for 10 no_gid eroce0 "$(ipv4_gid $vlan)"
	[ "$KTAP_FAIL" = 0 ] || ktap_diag "$(gid_table eroce0)"
}

test_port_state() {
	ip link set veth0 down
	ktap_check port_down_admin wait_for 10 port_state_is eroce0 "1: DOWN"
	ip link set veth0 up
	ktap_check port_up_admin wait_for 10 port_state_is eroce0 "4: ACTIVE"
	ip link set veth1 down
	ktap_check port_down_carrier wait_for 10 port_state_is eroce0 "1: DOWN"
	ip link set veth1 up
	ktap_check port_up_carrier wait_for 10 port_state_is eroce0 "4: ACTIVE"
	# admin down flushed the IPv6 address (keep_addr_on_down=0)
	ip addr replace 2001:db8::1/64 dev veth0 nodad
	ktap_check gid_ipv6_readded wait_for 10 has_gid eroce0 "$GID6" veth0
}

devinfo_ok() {
	local out
	out=$(ibv_devinfo -v -d eroce0) || return
	grep -Eq 'state:[[:space:]]+PORT_ACTIVE' <<<"$out" &&
		grep -Eq 'link_layer:[[:space:]]+Ethernet' <<<"$out" &&
		grep -Eq 'GID\[ *[0-9]+\]:.*::ffff:198\.18\.0\.1, RoCE v2' <<<"$out" &&
		grep -Eq 'GID\[ *[0-9]+\]:.*2001:db8::1, RoCE v2' <<<"$out"
}

test_provider() {
	debug_subset ibv_devices ||
		ktap_check ibv_devices eval 'ibv_devices | grep -Eq "^[[:space:]]+eroce0[[:space:]]"'
	if ! devinfo_ok; then
		ktap_diag "$(ibv_devinfo -v -d eroce0 2>&1 | grep -E 'state|link_layer|GID|error|fail' | head -n 12)"
		ktap_fail ibv_devinfo "ibv_devinfo -v -d eroce0: not ACTIVE/Ethernet/GIDs"
	else
		ktap_ok ibv_devinfo
	fi
}

# check_mtu NAME NETDEV_MTU IB_MTU
check_mtu() {
	ip link set veth0 mtu "$2"
	if wait_for 10 active_mtu_is eroce0 "$3"; then
		ktap_ok "$1"
	else
		ktap_fail "$1" "netdev mtu $2: active_mtu '$(active_mtu eroce0)', want $3"
	fi
}

test_mtu() {
	debug_subset mtu_1500 || check_mtu mtu_1500 1500 1024
	ip link set veth1 mtu 9000
	check_mtu mtu_9000 9000 4096
	# 600 - 84 bytes of worst-case RoCEv2 headers (IPv6, UDP, BTH, RETH,
	# ImmDt, ICRC) still carries 512-byte payloads, as in rdma_rxe; 576
	# does not
	debug_subset mtu_600 || check_mtu mtu_600 600 512
	debug_subset mtu_576 || check_mtu mtu_576 576 256
	ip link set veth0 mtu 1500
}

test_remove() {
	ktap_check link_del rdma link del eroce0
	ktap_check link_del_gone rdma_dev_gone eroce0
	rdma link add eroce0 type eroce netdev veth0
	ip link del veth0
	ktap_check netdev_delete_removes wait_for 10 rdma_dev_gone eroce0
}

no_eroce_left() {
	local d
	for d in "$IBSYS"/*; do
		[ -e "$d" ] && return 1
	done
	[ -z "$(rdma link show 2>/dev/null)" ]
}

test_rmmod() {
	ktap_check lo_allowed rdma link add eroce_lo type eroce netdev lo
	veth_add "" veth2 "" veth3
	ktap_check second_link_add rdma link add eroce2 type eroce netdev veth2
	ktap_check rmmod_with_devices eroce_unload
	ktap_check rmmod_removed_all no_eroce_left
	ktap_check reload_and_add eval 'eroce_load &&
		rdma link add eroce2 type eroce netdev veth2 &&
		wait_for 10 port_state_is eroce2 "4: ACTIVE" &&
		rdma link del eroce2 && eroce_unload'
}

ktap_plan 32
require setup
test_add
test_gids
test_port_state
test_provider
test_mtu
test_remove
test_rmmod
ktap_finish
