#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 400
#
# faults.sh: failures injected at eroce's allocation, mapping and transmit
# points (fail_function, Documentation/testing.rst "Fault injection")
# while objects are created and data flows.  Runs on the debug kernel
# only (`make check-debug`: Debian's kernel has no fault injection); the
# lane's kmemleak scan and kernel log scan judge the run as well.
#
#   on the datapath, at a rate, while eroce_integrity moves SEND, WRITE
#   and READ data and checks every byte:
#     eroce_pkt_alloc_skb  a packet's buffer (NULL): every failure counted
#                          by tx_nomem, the data still intact
#     eroce_route4         a packet without a path (-ENETUNREACH): counted
#                          by tx_errors, recovered by retransmission
#   at creation, every call failing for a while (-ENOMEM):
#     eroce_ring_init      a CQ's or QP's queue memory
#     eroce_ring_publish   a queue's mmap entry
#     eroce_qp_engine_init a QP's transport state
#     eroce_mr_alloc       an MR
#   each must reach the application as that verb's error, promptly.
# Afterwards the devices move data as before and hold no object.
#
#   ns1: veth1 198.18.0.1 (eroce1) <-> ns2: veth2 198.18.0.2 (eroce2)
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_integrity"
FF=/sys/kernel/debug/fail_function
BYTES=${FAULTS_BYTES:-512k}
TMO=$(tmo 120)
PORT=18630
OUT=/tmp/faults
mkdir -p "$OUT"
LAST_OUT=

# ---- fail_function ------------------------------------------------------------

# inject FN RETVAL PERCENT TIMES: FN fails with RETVAL (an errno, or 0 for
# NULL), PERCENT of its calls, at most TIMES times; the only point armed
inject() {
	echo >"$FF/inject" &&
		echo "$1" >"$FF/inject" &&
		printf '%#x\n' "$2" >"$FF/$1/retval" &&
		echo "$3" >"$FF/probability" &&
		echo 1 >"$FF/interval" &&
		echo 0 >"$FF/space" &&
		echo 0 >"$FF/verbose" &&
		echo "$4" >"$FF/times"
}

# injected TIMES: the failures injected since inject ... TIMES; disarms
injected() {
	local left
	left=$(cat "$FF/times")
	echo >"$FF/inject"
	echo $(($1 - left))
}

# ---- traffic ------------------------------------------------------------------

# counter DEV NAME: one `rdma statistic` counter of DEV's port 1
counter() {
	rdma statistic show link "$1/1" 2>/dev/null |
		awk -v n="$2" '{ for (i = 1; i < NF; i++) if ($i == n) { print $(i + 1); exit } }'
}

# both NAME: the counter NAME summed over eroce1 and eroce2
both() {
	local a b
	a=$(counter eroce1 "$1") && b=$(counter eroce2 "$1") &&
		[ -n "$a" ] && [ -n "$b" ] && echo $((a + b))
}

# integrity ARGS...: eroce_integrity, server on eroce2 in ns2, client on
# eroce1 in ns1; RC_S and RC_C their exit statuses, LAST_OUT both outputs
integrity() {
	local spid

	ns2 timeout "$((TMO + 30))" "$TOOL" -d eroce2 -g "$G2" -p "$PORT" \
		-t "$TMO" >"$OUT/server" 2>&1 &
	spid=$!
	wait_for 60 tcp_listening "$NS2" "$PORT"
	ns1 timeout "$((TMO + 30))" "$TOOL" -d eroce1 -g "$G1" -p "$PORT" \
		-t "$TMO" "$@" 198.18.0.2 >"$OUT/client" 2>&1
	RC_C=$?
	wait "$spid"
	RC_S=$?
	PORT=$((PORT + 1))
	LAST_OUT="$(sed 's/^/client: /' "$OUT/client"; sed 's/^/server: /' "$OUT/server")"
}

# ---- the cases ----------------------------------------------------------------

# datapath NAME FN RETVAL PERCENT COUNTER: FN failing at PERCENT while all
# three operations move BYTES; every byte must arrive and COUNTER (both
# devices) must have moved at least once per injected failure
datapath() {
	local name=$1 fn=$2 before after n

	before=$(both "$5")
	if ! inject "$fn" "$3" "$4" 1000000; then
		ktap_fail "${name}_intact" "cannot arm $fn"
		ktap_fail "${name}_counted" "not run"
		return
	fi
	integrity -o send,write,read -b "$BYTES" -s 41
	n=$(injected 1000000)
	after=$(both "$5")
	ktap_diag "$fn: $n failures injected (returning $3), $5 +$((after - before))"
	ktap_diag "$LAST_OUT"
	ktap_result "${name}_intact" "$([ "$RC_C" = 0 ] && [ "$RC_S" = 0 ]; echo $?)" \
		"client exit $RC_C, server exit $RC_S"
	ktap_result "${name}_counted" \
		"$([ "$n" -gt 0 ] && [ $((after - before)) -ge "$n" ]; echo $?)" \
		"$n injected, $5 +$((after - before))"
}

# creation NAME FN ERROR: every call of FN fails with -ENOMEM (up to 100
# times) while the tool sets up: it must stop with ERROR "failed: Cannot
# allocate memory" within its deadline, and FN must have failed
creation() {
	local name=$1 fn=$2 n

	if ! inject "$fn" -12 100 100; then
		ktap_fail "$name" "cannot arm $fn"
		return
	fi
	integrity -o send -b 64k -s 42
	n=$(injected 100)
	ktap_diag "$fn: $n failures injected (-ENOMEM)"
	ktap_diag "$LAST_OUT"
	if [ "$n" -lt 1 ]; then
		ktap_fail "$name" "$fn was never called"
	elif [ "$RC_C" = 0 ] || [ "$RC_S" = 0 ] ||
	     [ "$RC_C" = 124 ] || [ "$RC_S" = 124 ]; then
		ktap_fail "$name" "client exit $RC_C, server exit $RC_S"
	elif ! grep -q "$3 failed: Cannot allocate memory" "$OUT/client" "$OUT/server"; then
		ktap_fail "$name" "no \"$3 failed: Cannot allocate memory\""
	else
		ktap_ok "$name"
	fi
}

# objects DEV: DEV's objects by kind, as `rdma resource` counts them
objects() {
	rdma resource show "$1" 2>/dev/null | sed 's/^[0-9]*: [^ ]*: //'
}

# objects_are DEV COUNTS: DEV holds COUNTS (as objects prints them)
# shellcheck disable=SC2317  # called through wait_for
objects_are() {
	[ "$(objects "$1")" = "$2" ]
}

ktap_plan 12
require eroce_pair_setup
ktap_check fail_function_present test -d "$FF"
G1=$(gid_index_of eroce1 198.18.0.1)
G2=$(gid_index_of eroce2 198.18.0.2)
BASE1=$(objects eroce1)
BASE2=$(objects eroce2)

datapath tx_alloc eroce_pkt_alloc_skb 0 5 tx_nomem
datapath no_route eroce_route4 -101 2 tx_errors
creation ring_init_fails eroce_ring_init ibv_create_cq
creation ring_publish_fails eroce_ring_publish ibv_create_cq
creation qp_engine_fails eroce_qp_engine_init ibv_create_qp
creation mr_alloc_fails eroce_mr_alloc ibv_reg_mr

integrity -o send,write,read -b "$BYTES" -s 43
ktap_diag "$LAST_OUT"
ktap_result recovered "$([ "$RC_C" = 0 ] && [ "$RC_S" = 0 ]; echo $?)" \
	"client exit $RC_C, server exit $RC_S"
ktap_check eroce1_objects_back wait_for 10 objects_are eroce1 "$BASE1"
ktap_check eroce2_objects_back wait_for 10 objects_are eroce2 "$BASE2"
ktap_finish
