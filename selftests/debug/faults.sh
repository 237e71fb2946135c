#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 400
#
# faults.sh: failures injected at eroce's allocation, mapping and transmit
# points while objects are created and data flows: eroce's own fault
# attributes inside functions (/sys/kernel/debug/eroce/fail_*), and the
# kernel's fail_function on the functions eroce marks
# ALLOW_ERROR_INJECTION (Documentation/testing.rst "Fault injection").
# Runs on the debug kernel only (`make check-debug`: Debian's kernel has
# no fault injection); the lane's kmemleak scan and kernel log scan judge
# the run as well.
#
#   on the datapath, at a rate, while eroce_integrity moves SEND, WRITE
#   and READ data and checks every byte:
#     pkt_alloc             a packet's buffer: every failure counted by
#                           tx_nomem, the data intact
#     eroce_route4          a packet without a path (-ENETUNREACH):
#                           counted by tx_errors, recovered by
#                           retransmission
#     eroce_route6          the same over IPv6 GIDs
#   at creation, every call failing for a while (-ENOMEM):
#     eroce_ring_init       a CQ's or QP's queue memory
#     eroce_ring_publish    a queue's mmap entry; then every third call
#                           only, so that a QP's second ring fails after
#                           its first was published
#     eroce_qp_engine_init  a QP's transport state, as a whole
#     qp_state              the same, after its parts were allocated
#     mr_alloc              an MR, after it was counted
#   each must reach the application as that verb's error, promptly.
#   on the receive path and in teardown:
#     rx_netdev             the receiving netdev gone when a packet is
#                           taken off the socket (unregistering unlists
#                           it before its packets in flight are flushed):
#                           each one a UDP InErrors drop of the receiving
#                           namespace, the data intact through
#                           retransmission
#     kick_delay            every kick of a work item held 10 ms between
#                           its check of the engine's death and the
#                           queueing; QP A destroyed, eight times, while
#                           its retransmit timer fires into a path that
#                           drops everything: the destroy succeeds, and
#                           no work item is left queued (a WARN, fatal on
#                           the debug kernel) to run on the freed QP
# Afterwards the devices move data as before and hold no object.
#
#   ns1: veth1 198.18.0.1 2001:db8::1 (eroce1) <-> ns2: veth2 .2 ::2 (eroce2)
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_integrity"
RETRY="$EROCE_ROOT/selftests/tools/eroce_retry"
FD=/sys/kernel/debug/eroce
FF=/sys/kernel/debug/fail_function
BYTES=${FAULTS_BYTES:-512k}
TMO=$(tmo 120)
PORT=18630
OUT=/tmp/faults
mkdir -p "$OUT"
LAST_OUT=

# ---- the fault attributes -----------------------------------------------------

# attr POINT: the directory of POINT's fault attribute: fail_function's
# for a function eroce marks ALLOW_ERROR_INJECTION (eroce_*), else
# eroce's own fail_POINT
attr() {
	case $1 in
	eroce_*) echo "$FF" ;;
	*) echo "$FD/fail_$1" ;;
	esac
}

# inject POINT PERCENT TIMES [INTERVAL [RETVAL]]: POINT fails PERCENT of
# the times it is reached (of every INTERVAL-th time, default 1), at most
# TIMES times; a function returns RETVAL (default -ENOMEM)
inject() {
	local d
	d=$(attr "$1")
	if [ "$d" = "$FF" ]; then
		# retval is read as an unsigned 64-bit number
		echo "$1" >"$FF/inject" || return
		printf '%#x' "${5:--12}" >"$FF/$1/retval" ||
			{ echo "!$1" >"$FF/inject"; return 1; }
	fi
	echo "${4:-1}" >"$d/interval" &&
		echo 0 >"$d/space" &&
		echo 0 >"$d/verbose" &&
		echo "$3" >"$d/times" &&
		echo "$2" >"$d/probability"
}

# injected POINT TIMES: the failures injected since inject POINT ...
# TIMES; turns POINT off
injected() {
	local d left
	d=$(attr "$1")
	echo 0 >"$d/probability"
	left=$(cat "$d/times")
	[ "$d" != "$FF" ] || echo "!$1" >"$FF/inject"
	echo $(($2 - left))
}

# functions_injectable: fail_function takes every function eroce marks
# ALLOW_ERROR_INJECTION
# shellcheck disable=SC2317  # called through ktap_check
functions_injectable() {
	local f
	for f in eroce_ring_init eroce_ring_publish eroce_qp_engine_init \
		eroce_route4 eroce_route6; do
		echo "$f" >"$FF/inject" && echo "!$f" >"$FF/inject" || return
	done
}

# ---- traffic ------------------------------------------------------------------

# both NAME: the counter NAME summed over eroce1 and eroce2
both() {
	local a b
	a=$(stat_get eroce1/1 "$1") && b=$(stat_get eroce2/1 "$1") &&
		[ -n "$a" ] && [ -n "$b" ] && echo $((a + b))
}

# integrity ARGS...: eroce_integrity, server on eroce2 in ns2, client on
# eroce1 in ns1, over the IPv4 GIDs (the IPv6 ones while FAMILY is 6);
# RC_S and RC_C their exit statuses, LAST_OUT both outputs
integrity() {
	local spid g1=$G1 g2=$G2 addr=198.18.0.2

	if [ "$FAMILY" = 6 ]; then
		g1=$G61 g2=$G62 addr=2001:db8::2
	fi
	ns2 timeout "$((TMO + 30))" "$TOOL" -d eroce2 -g "$g2" -p "$PORT" \
		-t "$TMO" >"$OUT/server" 2>&1 &
	spid=$!
	wait_for 60 tcp_listening "$NS2" "$PORT"
	ns1 timeout "$((TMO + 30))" "$TOOL" -d eroce1 -g "$g1" -p "$PORT" \
		-t "$TMO" "$@" "$addr" >"$OUT/client" 2>&1
	RC_C=$?
	wait "$spid"
	RC_S=$?
	PORT=$((PORT + 1))
	LAST_OUT="$(sed 's/^/client: /' "$OUT/client"; sed 's/^/server: /' "$OUT/server")"
}

# ---- the cases ----------------------------------------------------------------

# datapath POINT PERCENT COUNTER [RETVAL]: POINT failing at PERCENT while
# all three operations move BYTES; every byte must arrive and COUNTER
# (both devices) must have moved at least once per injected failure
datapath() {
	local point=$1 before after n

	before=$(both "$3")
	if ! inject "$point" "$2" 1000000 1 "${4:-}"; then
		ktap_fail "${point}_intact" "cannot arm fail_$point"
		ktap_fail "${point}_counted" "not run"
		return
	fi
	integrity -o send,write,read -b "$BYTES" -s 41
	n=$(injected "$point" 1000000)
	after=$(both "$3")
	ktap_diag "$point: $n failures injected, $3 +$((after - before))"
	ktap_diag "$LAST_OUT"
	ktap_result "${point}_intact" "$([ "$RC_C" = 0 ] && [ "$RC_S" = 0 ]; echo $?)" \
		"client exit $RC_C, server exit $RC_S"
	ktap_result "${point}_counted" \
		"$([ "$n" -gt 0 ] && [ $((after - before)) -ge "$n" ]; echo $?)" \
		"$n injected, $3 +$((after - before))"
}

# creation POINT VERBS [INTERVAL]: every INTERVAL-th time POINT is
# reached (default every time) it fails, up to 100 times, while the tool
# sets up: the tool must stop with "VERB failed: Cannot allocate memory",
# VERB one of VERBS (an extended regular expression), within its deadline
creation() {
	local point=$1 name=${1}_fails n

	[ -z "${3:-}" ] || name=${1}_every_${3}_fails
	if ! inject "$point" 100 100 "${3:-1}"; then
		ktap_fail "$name" "cannot arm $point"
		return
	fi
	integrity -o send -b 64k -s 42
	n=$(injected "$point" 100)
	ktap_diag "$point: $n failures injected"
	ktap_diag "$LAST_OUT"
	if [ "$n" -lt 1 ]; then
		ktap_fail "$name" "$point was never reached"
	elif [ "$RC_C" = 0 ] || [ "$RC_S" = 0 ] ||
	     [ "$RC_C" = 124 ] || [ "$RC_S" = 124 ]; then
		ktap_fail "$name" "client exit $RC_C, server exit $RC_S"
	elif ! grep -qE "($2) failed: Cannot allocate memory" "$OUT/client" "$OUT/server"; then
		ktap_fail "$name" "no \"$2 failed: Cannot allocate memory\""
	else
		ktap_ok "$name"
	fi
}

# udp_inerrors: UDP InErrors of ns1 and ns2, summed
udp_inerrors() {
	local ns sum=0 n
	for ns in "$NS1" "$NS2"; do
		n=$(udp_stat "$ns" InErrors)
		sum=$((sum + ${n:-0}))
	done
	echo "$sum"
}

# rx_netdev_gone: packets from a netdev that is gone, 5% of them, while
# all three operations move BYTES
rx_netdev_gone() {
	local before after n

	before=$(udp_inerrors)
	if ! inject rx_netdev 5 1000000; then
		ktap_fail rx_netdev_intact "cannot arm fail_rx_netdev"
		ktap_fail rx_netdev_counted "not run"
		return
	fi
	integrity -o send,write,read -b "$BYTES" -s 44
	n=$(injected rx_netdev 1000000)
	after=$(udp_inerrors)
	ktap_diag "rx_netdev: $n injected, UDP InErrors +$((after - before))"
	ktap_diag "$LAST_OUT"
	ktap_result rx_netdev_intact "$([ "$RC_C" = 0 ] && [ "$RC_S" = 0 ]; echo $?)" \
		"client exit $RC_C, server exit $RC_S"
	ktap_result rx_netdev_counted \
		"$([ "$n" -gt 0 ] && [ $((after - before)) -ge "$n" ]; echo $?)" \
		"$n injected, UDP InErrors +$((after - before))"
}

# destroy_under_timer: QP A destroyed while its retransmit timer kicks
# the work item, each kick held in its window (kick_delay); the guest's
# kernel log (panic_on_warn) judges the teardown
destroy_under_timer() {
	local i n rc bad=0 loss="tc -n $NS1 qdisc replace dev veth1 root netem loss 100%"

	if ! inject kick_delay 100 1000000; then
		ktap_fail qp_destroy_under_timer "cannot arm fail_kick_delay"
		return
	fi
	for i in 1 2 3 4 5 6 7 8; do
		rc=0
		run timeout -k 5 "$(tmo 30)" "$RETRY" --mode destroy --op write \
			--timeout 8 --retry-cnt 7 --delay-ms $((15 + 5 * i)) \
			--hook "$loss" eroce1 "$G1" eroce2 "$G2" || rc=$?
		netem_clear "$NS1" veth1
		[ $rc = 0 ] || { bad=1; ktap_diag "$LAST_OUT"; }
	done
	n=$(injected kick_delay 1000000)
	ktap_diag "kick_delay: $n kicks held"
	ktap_result qp_destroy_under_timer "$([ $bad = 0 ] && [ "$n" -gt 0 ]; echo $?)" \
		"a destroy failed, or no kick was held ($n)"
}

# dev_objects DEV: DEV's objects by kind, as `rdma resource` counts them
dev_objects() {
	rdma resource show "$1" 2>/dev/null | sed 's/^[0-9]*: [^ ]*: //'
}

# dev_objects_are DEV COUNTS: DEV holds COUNTS (as dev_objects prints
# them)
# shellcheck disable=SC2317  # called through wait_for
dev_objects_are() {
	[ "$(dev_objects "$1")" = "$2" ]
}

ktap_plan 20
require eroce_pair_setup
ktap_check fault_points_present test -d "$FD/fail_pkt_alloc"
ktap_check functions_injectable functions_injectable
G1=$(gid_index_of eroce1 198.18.0.1)
G2=$(gid_index_of eroce2 198.18.0.2)
wait_for 30 has_gid eroce1 "$(ipv6_gid 2001:db8::1)" &&
	wait_for 30 has_gid eroce2 "$(ipv6_gid 2001:db8::2)"
G61=$(first_gid eroce1 "$(ipv6_gid 2001:db8::1)")
G62=$(first_gid eroce2 "$(ipv6_gid 2001:db8::2)")
FAMILY=4
BASE1=$(dev_objects eroce1)
BASE2=$(dev_objects eroce2)

datapath pkt_alloc 5 tx_nomem
datapath eroce_route4 10 tx_errors -101
FAMILY=6
datapath eroce_route6 10 tx_errors -101
FAMILY=4
creation eroce_ring_init ibv_create_cq
creation eroce_ring_publish ibv_create_cq
creation eroce_ring_publish "ibv_create_cq|ibv_create_qp|ibv_create_srq" 3
creation eroce_qp_engine_init ibv_create_qp
creation qp_state ibv_create_qp
creation mr_alloc ibv_reg_mr
rx_netdev_gone
destroy_under_timer

integrity -o send,write,read -b "$BYTES" -s 43
ktap_diag "$LAST_OUT"
ktap_result recovered "$([ "$RC_C" = 0 ] && [ "$RC_S" = 0 ]; echo $?)" \
	"client exit $RC_C, server exit $RC_S"
ktap_check eroce1_objects_back wait_for 10 dev_objects_are eroce1 "$BASE1"
ktap_check eroce2_objects_back wait_for 10 dev_objects_are eroce2 "$BASE2"
ktap_finish
