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

# 0 skips the perftest transfer (devices only)
RUN_PERFTEST=${RUN_PERFTEST:-1}

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
# ib_write_bw (64 KiB messages) and ib_send_lat (2 bytes): servers on
# eroce2 in ns2, clients on eroce1 in ns1, each side's IPv4-mapped RoCEv2
# GID; perftest's out-of-band exchange is TCP over the same veth.  Under
# TCG absolute rates mean little: `make bench` compares with rdma_rxe and
# TCP in the same guest.
demo_perftest() {
	local g1 g2 t args

	g1=$(first_gid eroce1 "$(ipv4_gid 198.18.0.1)")
	g2=$(first_gid eroce2 "$(ipv4_gid 198.18.0.2)")
	for t in ib_write_bw ib_send_lat; do
		args="-s 65536 -n 500"
		[ "$t" = ib_send_lat ] && args="-s 2 -n 500"
		# shellcheck disable=SC2086
		ns2 timeout 120 "$t" -d eroce2 -x "$g2" $args >/tmp/"$t".srv 2>&1 &
		sleep 2
		# shellcheck disable=SC2086
		show ns1 timeout 120 "$t" -d eroce1 -x "$g1" $args 198.18.0.2
		ktap_result "$t" $?
		wait
	done
	show rdma statistic show link eroce1/1
}

ktap_plan 6
require setup
demo_devices
if [ "$RUN_PERFTEST" = 1 ]; then
	demo_perftest
else
	ktap_skip ib_write_bw "RUN_PERFTEST=0"
	ktap_skip ib_send_lat "RUN_PERFTEST=0"
fi
ktap_finish
