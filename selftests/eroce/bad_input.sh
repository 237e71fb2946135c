#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bad_input.sh: `rdma link add ... type eroce` must reject what it cannot
# serve, with a non-zero exit and nothing left behind: a netdev that does
# not exist (or lives in another namespace), netdevs without an Ethernet
# link layer (tun, ipip, wireguard), a netdev that already has an eroce
# device, a device name already taken (EEXIST, said in dmesg).  The
# loopback device is accepted.  Afterwards a valid add still works and the module unloads cleanly.
# On the debug kernel (lib.sh debug_subset) the netdev in another
# namespace (ib_core's lookup fails as for a missing one) and the ipip
# and WireGuard netdevs (refused by the same link-layer check as tun)
# are left out.
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

setup() {
	modprobe -a veth tun ipip &&
		veth_add "" veth0 "" veth1 &&
		addr_add "" veth0 198.18.0.1/24 &&
		addr_add "" veth1 198.18.0.2/24 &&
		netns_add "$NS1" && veth_add "$NS1" veth8 "" veth9
}

# only_devs NAME...: exactly these RDMA devices exist (sysfs and netlink)
only_devs() {
	local want have links
	want=$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ' ')
	have=$(ls "$IBSYS" 2>/dev/null | sort | tr '\n' ' ')
	links=$(rdma link show 2>/dev/null | awk '{ sub("/.*", "", $2); print $2 }' |
		sort | tr '\n' ' ')
	[ "$have" = "$want" ] && [ "$links" = "$want" ] && return 0
	echo "want '$want', sysfs '$have', rdma link '$links'"
	return 1
}

# reject NAME NETDEV [DEVNAME]: the add must fail and create nothing
reject() {
	local name=$1 ndev=$2 dev=${3:-eroce9} before
	before=$(ls "$IBSYS" 2>/dev/null)
	ktap_check_fails "$name" rdma link add "$dev" type eroce netdev "$ndev"
	# shellcheck disable=SC2086
	ktap_check "${name}_nothing_left" only_devs $before
}

test_netdevs() {
	reject missing_netdev nosuchdev0
	debug_subset netdev_in_other_netns netdev_in_other_netns_nothing_left ||
		reject netdev_in_other_netns veth8
	ip tuntap add mode tun name tun0 && ip link set tun0 up
	reject tun_rejected tun0
	if ! debug_subset ipip_rejected ipip_rejected_nothing_left; then
		ip link add name ipip0 type ipip local 198.18.0.1 remote 198.18.0.2 &&
			ip link set ipip0 up
		reject ipip_rejected ipip0
	fi
	if debug_subset wireguard_rejected wireguard_rejected_nothing_left; then
		:
	elif modprobe wireguard 2>/dev/null && ip link add wg0 type wireguard 2>/dev/null; then
		ip link set wg0 up
		reject wireguard_rejected wg0
	else
		ktap_missing wireguard_rejected "the wireguard module"
		ktap_missing wireguard_rejected_nothing_left "the wireguard module"
	fi
}

test_duplicates() {
	local out

	ktap_check first_add rdma link add eroce0 type eroce netdev veth0
	reject same_netdev_twice veth0 eroce1
	kmsg_mark
	reject name_taken veth1 eroce0
	# EEXIST, not ib_core's ENFILE ("Too many open files in system")
	out=$(rdma link add eroce0 type eroce netdev veth1 2>&1)
	ktap_result name_taken_eexist \
		"$(grep -q 'File exists' <<<"$out" &&
			dmesg_since_mark | grep -q 'name eroce0 is taken'; echo $?)" \
		"rdma: $out; dmesg: $(dmesg_since_mark)"
	ktap_check name_taken_first_intact eval \
		'rdma link show eroce0/1 | grep -q "netdev veth0"'
	ktap_check lo_allowed rdma link add eroce_lo type eroce netdev lo
	ktap_check valid_add_after_errors eval 'rdma link add eroce1 type eroce netdev veth1 &&
		wait_for 10 port_state_is eroce1 "4: ACTIVE"'
	ktap_check all_present only_devs eroce0 eroce1 eroce_lo
}

test_cleanup() {
	ktap_check delete_all eval 'rdma link del eroce0 && rdma link del eroce1 &&
		rdma link del eroce_lo && only_devs'
	ktap_check rmmod_clean eroce_unload
}

ktap_plan 23
require setup
ktap_check load_module eroce_load
grep -q '^eroce ' /proc/modules || ktap_bail "module not loaded"
test_netdevs
test_duplicates
test_cleanup
ktap_finish
