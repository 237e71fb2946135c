#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 900
#
# topo_guest.sh: perftest between every pair of transports in one guest,
#   selftests/run_vm.sh --show selftests/bench/topo_guest.sh
# (`make bench-topo`).  Topologies:
#   eroce-eroce        eroce1 (ns1, veth1) <-> eroce2 (ns2, veth2)
#   eroce_srv-rxe_cli  eroce3 in ns3 serves, rxe0 in the initial ns is client
#   rxe_srv-eroce_cli  the other way round
#   rxe-rxe            rxe1 <-> rxe2 over a policy-routed veth pair in the
#                      initial namespace (the traffic crosses the veth)
# For each: ib_write_bw, ib_read_bw, ib_send_bw (64 KiB, -n 300: BW
# average) and ib_send_lat, ib_write_lat, ib_read_lat (2 B, -n 500:
# typical latency), one run each, printed as "TOPO-ROW: topo,test,value".
# Single runs under TCG vary by tens of percent; compare within one run.
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

setup() {
	two_ns_setup && eroce_load && provider_install && rxe_load || return
	ns1 rdma link add eroce1 type eroce netdev veth1 &&
		ns2 rdma link add eroce2 type eroce netdev veth2 || return
	netns_add ns3 && veth_add "" vethR ns3 vethE &&
		addr_add "" vethR 198.18.2.1/24 && addr_add ns3 vethE 198.18.2.2/24 &&
		ip netns exec ns3 rdma link add eroce3 type eroce netdev vethE &&
		rxe_add rxe0 vethR || return
	rxe_pair_setup || return
	wait_for 10 has_gid eroce1 "$(ipv4_gid 198.18.0.1)" &&
		wait_for 10 has_gid eroce2 "$(ipv4_gid 198.18.0.2)" &&
		wait_for 10 has_gid eroce3 "$(ipv4_gid 198.18.2.2)" &&
		wait_for 10 has_gid rxe0 "$(ipv4_gid 198.18.2.1)"
}

# one TOPO SRV_NS SRV_DEV SRV_IP CLI_NS CLI_DEV CLI_IP: the six tests
one() {
	local topo=$1 sns=$2 sdev=$3 sip=$4 cns=$5 cdev=$6 cip=$7 t a r s
	local -a sp=() cp=()
	[ -n "$sns" ] && sp=(ip netns exec "$sns")
	[ -n "$cns" ] && cp=(ip netns exec "$cns")
	for t in ib_write_bw ib_read_bw ib_send_bw ib_send_lat ib_write_lat ib_read_lat; do
		a="-s 65536 -n 300"
		case $t in *lat) a="-s 2 -n 500" ;; esac
		# shellcheck disable=SC2086
		"${sp[@]}" timeout 90 $t -d "$sdev" -x "$(gid_index_of "$sdev" "$sip")" $a >/dev/null 2>&1 &
		s=$!
		sleep 3
		# shellcheck disable=SC2086
		r=$("${cp[@]}" timeout 90 $t -d "$cdev" -x "$(gid_index_of "$cdev" "$cip")" $a "$sip" 2>&1 |
			awk '/^ *(65536|2) +[0-9]/ { print ($1 == 2 ? $5 " us" : $4 " MB/s"); exit }')
		wait "$s"
		echo "TOPO-ROW: $topo,$t,${r:-fail}"
	done
}

setup || { echo "setup failed"; exit 1; }
one eroce-eroce "$NS2" eroce2 198.18.0.2 "$NS1" eroce1 198.18.0.1
one eroce_srv-rxe_cli ns3 eroce3 198.18.2.2 "" rxe0 198.18.2.1
one rxe_srv-eroce_cli "" rxe0 198.18.2.1 ns3 eroce3 198.18.2.2
one rxe-rxe "" rxe2 198.18.1.2 "" rxe1 198.18.1.1
echo "topo_guest: done"
