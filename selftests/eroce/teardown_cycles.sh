#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317  # event_* and restore: called by cycles (lib_teardown.sh)
# vm-timeout: 600
#
# teardown_cycles.sh: the network or the device taken away under traffic,
# again and again.  Each event runs TEARDOWN_CYCLES times (default 2, 1
# on the debug kernel; set it in the guest to run more) while
# eroce_integrity (SEND, WRITE and READ, every byte checked, 4 QPs) and
# ib_write_bw over rdma_cm run between eroce1 and eroce2:
#   mtu        both veths' MTU below the path's packets for 2 s
#   flap       veth1 down for 2 s
#   addr       veth1's addresses flushed, back after 2 s
#   kill       the integrity client killed (SIGKILL) with work posted
#   link_del   `rdma link delete eroce1`, then added again
#   rmmod      `rmmod eroce`, then loaded and both links added again
# Per event: every tool ended by itself within a bound (an error, a flush
# or its own deadline; never stopped by the test, but for ib_write_bw's
# passive server: see tools_end), the integrity tool never found a wrong
# byte (exit status 1), the devices hold the objects they held before the
# traffic once the tools are gone, and a fresh integrity run afterwards
# moves every byte.  (teardown.sh takes the addresses and then the
# namespaces away once, with rping.)
#
#   ns1: veth1 198.18.0.1 (eroce1) <-> ns2: veth2 198.18.0.2 (eroce2)
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"
# shellcheck source=../lib_teardown.sh
. "$(dirname "$0")/../lib_teardown.sh"

# restore: both links back after an event took one or both away
restore() {
	eroce_load || return 1
	rdma_dev_exists eroce1 || ns1 rdma link add eroce1 type eroce netdev veth1 ||
		return 1
	rdma_dev_exists eroce2 || ns2 rdma link add eroce2 type eroce netdev veth2 ||
		return 1
	eroce_links_ready
}

# ---- the events -----------------------------------------------------------------

event_mtu() {
	ns1 ip link set veth1 mtu 1000
	ns2 ip link set veth2 mtu 1000
	sleep 2
	ns1 ip link set veth1 mtu 1500
	ns2 ip link set veth2 mtu 1500
}

event_flap() {
	ns1 ip link set veth1 down
	sleep 2
	ns1 ip link set veth1 up
}

event_addr() {
	ns1 ip addr flush dev veth1
	sleep 2
	addr_add "$NS1" veth1 198.18.0.1/24 2001:db8::1/64
}

event_kill() {
	pkill -KILL -f "eroce_integrity -d eroce1 "
}

event_link_del() {
	rdma link delete eroce1
}

event_rmmod() {
	eroce_unload
}

ktap_plan 24
[ -x "$TOOL" ] || ktap_bail "$TOOL not built (make -C selftests/tools)"
require eroce_pair_setup
BASE=$(objects)
for ev in mtu flap addr link_del rmmod; do
	cycles "$ev"
done
# the kill ends the server at once; the client must still be running
KILLED=integrity_client ITMO=$((RUN + END / 2)) cycles kill
ktap_finish
