#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh: two network namespaces joined by a veth pair, one eroce device
# in each, shown through the standard tools (rdma link, ibv_devices,
# ibv_devinfo); then traffic between them (demo_perftest, off until the
# data path is ready).  Run it with `make demo`, i.e.
#   selftests/run_vm.sh --show selftests/demo.sh
#
#   ns1: veth1 198.18.0.1/24 (eroce1)  <--veth-->  ns2: veth2 198.18.0.2/24 (eroce2)
set -u -o pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

# set to 1 once the data path moves bytes: runs demo_perftest
RUN_PERFTEST=0

# show CMD...: print a command and its output as KTAP diagnostics
show() {
	local rc=0 out
	echo "# \$ $*"
	out=$("$@" 2>&1) || rc=$?
	[ -n "$out" ] && sed 's/^/#   /' <<<"$out"
	return $rc
}

setup() {
	eroce_load && provider_install && two_ns_setup &&
		ns1 rdma link add eroce1 type eroce netdev veth1 &&
		ns2 rdma link add eroce2 type eroce netdev veth2 &&
		wait_for 10 port_state_is eroce1 "4: ACTIVE" &&
		wait_for 10 port_state_is eroce2 "4: ACTIVE" &&
		wait_for 10 has_gid eroce1 "$(ipv4_gid 198.18.0.1)" &&
		wait_for 10 has_gid eroce2 "$(ipv4_gid 198.18.0.2)"
}

demo_devices() {
	show ip -n "$NS1" -br addr show dev veth1
	show ip -n "$NS2" -br addr show dev veth2
	show rdma link show
	ktap_result rdma_link $?
	show ibv_devices
	ktap_result ibv_devices $?
	show ibv_devinfo -d eroce1
	ktap_result ibv_devinfo_eroce1 $?
	show ibv_devinfo -d eroce2
	ktap_result ibv_devinfo_eroce2 $?
}

# ---- perftest between the namespaces ----------------------------------------
# TODO(data path): enable with RUN_PERFTEST=1 once RC send/write/read work.
# ib_write_bw server on eroce2 in ns2, client on eroce1 in ns1, RoCEv2 GID
# of each side's IPv4 address; perftest's out-of-band exchange is TCP over
# the same veth.  Under TCG absolute rates mean little: compare with rdma_rxe
# and TCP in the same guest (see DESIGN.md, Machine facts).
demo_perftest() {
	local g1 g2 t

	g1=$(gid_indexes eroce1 "$(ipv4_gid 198.18.0.1)" | head -n 1)
	g2=$(gid_indexes eroce2 "$(ipv4_gid 198.18.0.2)" | head -n 1)
	for t in ib_write_bw ib_send_lat; do
		ns2 timeout 120 "$t" -d eroce2 -x "$g2" -s 65536 -n 200 >/tmp/"$t".srv 2>&1 &
		sleep 1
		show ns1 timeout 120 "$t" -d eroce1 -x "$g1" -s 65536 -n 200 198.18.0.2
		ktap_result "$t" $?
		wait
		show cat /tmp/"$t".srv
	done
}

ktap_plan 6
require setup
demo_devices
if [ "$RUN_PERFTEST" = 1 ]; then
	demo_perftest
else
	ktap_skip ib_write_bw "perftest not enabled yet (RUN_PERFTEST=0)"
	ktap_skip ib_send_lat "perftest not enabled yet (RUN_PERFTEST=0)"
fi
ktap_finish
