#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 300
#
# teardown.sh: the network taken away under traffic.
#
# The addresses of both netdevs flushed while ib_write_bw (perftest's
# out-of-band TCP exchange included) and rping run, then both namespaces
# deleted.  The ib_write_bw client and one side of rping (the one with a
# request in flight) must end by themselves within a bound: packets that
# have no path any more count as lost (tx_errors), and retry_cnt fails
# their QPs instead of the engine retrying them forever.
# A namespace lives on after `ip netns del` while a socket still holds
# it: perftest's TCP connection, orphaned with its addresses gone, keeps
# retrying its FIN for up to ~100 s (net.ipv4.tcp_orphan_retries), and
# the namespace's veth, and the eroce device on it, with it.  Either the
# devices go within 10 s, or `rdma link delete` removes them at once from
# the initial namespace (shared RDMA namespace mode).  Then the same names
# must be free again (`rdma link add eroce1` in a new namespace), and the
# kernel log clean.
#
#   ns1: veth1 198.18.0.1 <-> ns2: veth2 198.18.0.2   (eroce1, eroce2)
#   then ns3: veth5 198.18.3.1 <-> ns4: veth6         (eroce1 again)
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

NS3=eroce-ns3
NS4=eroce-ns4
# seconds the tools get to end once the network is gone (7 retries of
# rping's rdma_cm timeout, about 1 s each, and its backoff)
END_SECS=$((90 * TIMEOUT_MULT))

# orphans NS: TCP sockets in NS that no process owns any more
orphans() {
	ip netns exec "$1" ss -Htan state fin-wait-1 state fin-wait-2 \
		state closing state last-ack 2>/dev/null | wc -l
}

# ended_by_itself PID: the tool ended within END_SECS (not killed by its
# timeout, 124, or by the kill after it, 137); its status goes to RCS
ended_by_itself() {
	local rc=0

	wait "$1" || rc=$?
	RCS+="$rc "
	[ "$rc" != 124 ] && [ "$rc" != 137 ]
}

# traffic_flows: eroce2 has received a good share of a second's traffic
traffic_flows() {
	[ "$(stat_get eroce2/1 rx_packets)" -gt 1000 ] 2>/dev/null
}

test_flush_under_traffic() {
	local t=$END_SECS bw_srv rp_srv bw_cli rp_cli tx0 ok
	# still running when the addresses go, on the debug kernel too
	local secs
	secs=$(tmo 20)

	ns2 timeout -k 5 "$t" ib_write_bw -d eroce2 -x "$G2" -D "$secs" -s 65536 \
		>"$RDMA_TMP/bw_srv" 2>&1 &
	bw_srv=$!
	ns2 timeout -k 5 "$t" rping -s -a 198.18.0.2 -C 1000000 \
		>"$RDMA_TMP/rping_srv" 2>&1 &
	rp_srv=$!
	wait_for 30 tcp_listening "$NS2" 18515
	ns1 timeout -k 5 "$t" ib_write_bw -d eroce1 -x "$G1" -D "$secs" -s 65536 \
		198.18.0.2 >"$RDMA_TMP/bw_cli" 2>&1 &
	bw_cli=$!
	ns1 timeout -k 5 "$t" rping -c -a 198.18.0.2 -C 1000000 \
		>"$RDMA_TMP/rping_cli" 2>&1 &
	rp_cli=$!
	# traffic on the wire before the addresses go
	if ! wait_for 30 traffic_flows; then
		ktap_diag "no traffic: $(tail -n 3 "$RDMA_TMP/bw_cli" "$RDMA_TMP/rping_cli")"
	fi
	sleep 2
	tx0=$(stat_get eroce1/1 tx_errors)
	ns1 ip addr flush dev veth1
	ns2 ip addr flush dev veth2
	# A QP with work in flight must fail: its packets have no path any
	# more, count as lost, and retry_cnt ends them.  The ib_write_bw
	# client always has WRITEs in flight; of rping's two sides one has a
	# request in flight, the other may wait for a receive, which on RC
	# never times out (nor on a RoCE NIC), and perftest's server waits in
	# its closing TCP exchange, which cannot end without addresses: those
	# are stopped once the others have ended.
	RCS='' ok=0
	ended_by_itself "$bw_cli" || ok=1
	wait_for "$END_SECS" eval '! kill -0 $rp_cli 2>/dev/null || ! kill -0 $rp_srv 2>/dev/null' || ok=1
	pkill -x rping
	pkill -x ib_write_bw
	ended_by_itself "$rp_cli"
	ended_by_itself "$rp_srv"
	ended_by_itself "$bw_srv"
	ktap_result flush_rdma_waits_end "$ok" \
		"still waiting (ib_write_bw client, rping client, server, ib_write_bw server: $RCS)"
	ktap_diag "exit statuses of the ib_write_bw client, rping client, server, ib_write_bw server: $RCS"
	ktap_diag "rping: $(tail -n 2 "$RDMA_TMP/rping_cli" "$RDMA_TMP/rping_srv" | tr '\n' ' ')"
	ktap_result flush_counted_tx_errors \
		"$([ "$(stat_get eroce1/1 tx_errors)" -gt "${tx0:-0}" ]; echo $?)" \
		"tx_errors did not move: ${tx0:-?} -> $(stat_get eroce1/1 tx_errors)"
	ktap_diag "orphaned TCP sockets: ns1 $(orphans "$NS1"), ns2 $(orphans "$NS2")"
}

test_delete_namespaces() {
	local left

	ip netns del "$NS1"
	ip netns del "$NS2"
	if wait_for 10 eval 'rdma_dev_gone eroce1 && rdma_dev_gone eroce2'; then
		ktap_diag "the devices went with their namespaces"
	else
		ktap_diag "the namespaces linger (a socket holds them): rdma link delete"
		rdma link delete eroce1
		rdma link delete eroce2
	fi
	ktap_check devices_gone wait_for 10 eval \
		'rdma_dev_gone eroce1 && rdma_dev_gone eroce2'
	left=$(rdma resource show 2>&1)
	ktap_result no_resources_left "$([ -z "$left" ]; echo $?)" \
		"rdma resource show: $left"
}

test_names_free() {
	netns_add "$NS3" && netns_add "$NS4" &&
		veth_add "$NS3" veth5 "$NS4" veth6 &&
		addr_add "$NS3" veth5 198.18.3.1/24
	ktap_check name_free_again eval 'ip netns exec $NS3 rdma link add eroce1 type eroce netdev veth5 &&
		wait_for 10 port_state_is eroce1 "4: ACTIVE"'
	ip netns exec "$NS3" rdma link delete eroce1
}

ktap_plan 6
require eroce_pair_setup
pair_gids
test_flush_under_traffic
test_delete_namespaces
test_names_free
ktap_check unload eroce_unload
ktap_finish
