#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 2700
#
# soak.sh: what `make soak` runs (Documentation/testing.rst "Soak"):
# EROCE_SOAK_MINUTES (default 30) of mixed traffic between eroce1 (ns1)
# and eroce2 (ns2), in rounds of about a minute.  In every round, side by
# side, each in a loop of runs until the round ends:
#   rc_fwd   eroce_integrity eroce1 -> eroce2: SEND, WRITE (and
#            WRITE_WITH_IMM), READ and the atomics, 4 QPs, every byte and
#            every atomic's result checked; new QPs each run
#   rc_rev   the same the other way (-R), 2 QPs, path MTU 1024, messages
#            up to 256 KiB
#   ud       ibv_ud_pingpong -c (UD, data checked), in the rounds whose
#            impairment loses nothing (a lost datagram stalls it for good)
#   objects  eroce_objects once, on eroce3 (its own veth in ns1: the tool
#            counts the device's objects): every verbs object created and
#            destroyed, and a process that exits holding them
# Between rounds the impairment on both veths changes (none, loss,
# reordering, duplication, corruption, a rate limit) and so does the
# devices' loss_recovery (sr and gbn in turn).  After each round, with no
# tool running, the devices' objects (`rdma resource`), the kernel's
# kernel memory (unreclaimable slab plus vmalloc) and the counters are
# sampled.  The results:
#   soak_ran             every run of every tool ended with success
#   soak_no_corruption   no tool found a wrong byte or atomic result
#   soak_objects_flat    after every round the devices hold what they held
#                        before the first
#   soak_memory_flat     that kernel memory after the last round within
#                        MEM_SLACK of its level after the first
#   soak_errors_flat     the counters of what the traffic must never
#                        cause (fatal NAKs, access and invalid-request
#                        NAKs, local operation errors, tx_nomem) never
#                        moved
#   soak_impairments_seen  rounds with loss moved retransmitted_packets
# and a report: the rounds (impairment, runs, bytes verified, counters,
# memory), then the totals.
#
#   ns1: veth1 198.18.0.1 (eroce1) <-> ns2: veth2 198.18.0.2 (eroce2)
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

MINUTES=${EROCE_SOAK_MINUTES:-30}
ROUND=60
TOOL="$EROCE_ROOT/selftests/tools/eroce_integrity"
OBJECTS="$EROCE_ROOT/selftests/tools/eroce_objects"
OUT=/tmp/soak
# growth of that kernel memory (kB) the soak may leave: a leak of one
# object per packet or per QP is far above it after 30 minutes
MEM_SLACK=8192
# the impairments, in turn (netem arguments; "none" is no qdisc)
IMPAIRMENTS=(
	"none"
	"loss 1%"
	"delay 2ms reorder 80% 50%"
	"duplicate 2%"
	"corrupt 0.5%"
	"loss 0.3% rate 200mbit"
)
# counters that must never move
NEVER=(fatal_naks_rcvd remote_access_naks_sent invalid_request_naks_sent
	remote_op_naks_sent local_op_errors tx_nomem)
# counters the report shows per round
SHOWN=(rx_packets retransmitted_packets tlp_probes selective_retransmits
	ooo_packets_placed duplicate_requests rx_drop_icrc tx_errors)

mkdir -p "$OUT"
RUNS=0
BYTES=0
ERRORS_SEEN=
LOSS_UNSEEN=
OBJECTS_DIFFER=

# counters_sum NAME: NAME summed over both devices
counters_sum() {
	local a b
	a=$(stat_get eroce1/1 "$1") || a=0
	b=$(stat_get eroce2/1 "$1") || b=0
	echo $((a + b))
}

# snapshot FILE: every SHOWN and NEVER counter, "name value" per line
snapshot() {
	local n
	for n in "${SHOWN[@]}" "${NEVER[@]}"; do
		echo "$n $(counters_sum "$n")"
	done >"$1"
}

# moved FROM TO NAME: how far NAME moved between two snapshots
moved() {
	local a b
	a=$(awk -v n="$3" '$1 == n { print $2 }' "$1")
	b=$(awk -v n="$3" '$1 == n { print $2 }' "$2")
	echo $((${b:-0} - ${a:-0}))
}

# impair ARGS: netem ARGS on both veths ("none" clears them)
impair() {
	netem_clear "$NS1" veth1
	netem_clear "$NS2" veth2
	[ "$1" = none ] && return 0
	# shellcheck disable=SC2086  # the netem arguments
	netem_set "$NS1" veth1 $1 && netem_set "$NS2" veth2 $1
}

# integrity_loop NAME PORT END CLIENT_ARGS...: integrity runs, server in
# ns2 and client in ns1, until SECONDS reaches END; one line per run in
# $OUT/NAME.runs: "exit-status bytes-verified"
integrity_loop() {
	local name=$1 port=$2 end=$3 seed=1 rc bytes; shift 3

	while [ "$SECONDS" -lt "$end" ]; do
		ns2 timeout -k 5 "$(tmo 240)" "$TOOL" -d eroce2 -g "$G2" -p "$port" \
			-t "$(tmo 200)" >"$OUT/$name.server" 2>&1 &
		wait_for 30 tcp_listening "$NS2" "$port"
		rc=0
		ns1 timeout -k 5 "$(tmo 240)" "$TOOL" -d eroce1 -g "$G1" -p "$port" \
			-t "$(tmo 200)" -s "$seed" "$@" 198.18.0.2 \
			>"$OUT/$name.client" 2>&1 || rc=$?
		wait $! || [ "$rc" != 0 ] || rc=$?
		bytes=$(awk '$2 == "ok" { n += $3 } END { print n + 0 }' \
			"$OUT/$name.client" "$OUT/$name.server")
		echo "$rc $bytes" >>"$OUT/$name.runs"
		if [ "$rc" != 0 ]; then
			sed "s/^/$name client: /" "$OUT/$name.client" >>"$OUT/failures"
			sed "s/^/$name server: /" "$OUT/$name.server" >>"$OUT/failures"
		fi
		seed=$((seed + 1))
	done
}

# ud_loop END: ibv_ud_pingpong runs (data checked) until SECONDS reaches
# END; one line per run in $OUT/ud.runs: "exit-status bytes"
ud_loop() {
	local end=$1 rc port=18990 n=200 size=1024

	while [ "$SECONDS" -lt "$end" ]; do
		ns2 timeout -k 5 "$(tmo 60)" ibv_ud_pingpong -d eroce2 -g "$G2" \
			-p "$port" -c -n "$n" -s "$size" >"$OUT/ud.server" 2>&1 &
		wait_for 30 tcp_listening "$NS2" "$port"
		rc=0
		ns1 timeout -k 5 "$(tmo 60)" ibv_ud_pingpong -d eroce1 -g "$G1" \
			-p "$port" -c -n "$n" -s "$size" 198.18.0.2 \
			>"$OUT/ud.client" 2>&1 || rc=$?
		wait $! || [ "$rc" != 0 ] || rc=$?
		echo "$rc $((2 * n * size))" >>"$OUT/ud.runs"
		[ "$rc" = 0 ] || sed "s/^/ud: /" "$OUT/ud.client" "$OUT/ud.server" \
			>>"$OUT/failures"
	done
}

# tally NAME: add NAME's runs of this round to the totals; prints
# "runs bytes"
tally() {
	local f="$OUT/$1.runs" rc bytes runs=0 sum=0

	[ -f "$f" ] || { echo "0 0"; return; }
	while read -r rc bytes; do
		runs=$((runs + 1))
		sum=$((sum + bytes))
		case "$rc" in
		0) ;;
		1) echo "$1" >>"$OUT/corrupt" ;&
		*) echo "$1 exit $rc" >>"$OUT/failed" ;;
		esac
	done <"$f"
	rm -f "$f"
	echo "$runs $sum"
}

# round N: one round of traffic under impairment N % ${#IMPAIRMENTS[@]}
round() {
	local n=$1 imp mode end pids=() name t r b line="" rb=0 rr=0 c m
	imp=${IMPAIRMENTS[$((n % ${#IMPAIRMENTS[@]}))]}
	mode=sr
	[ $(((n / ${#IMPAIRMENTS[@]}) % 2)) = 1 ] && mode=gbn

	echo "$mode" >"$IBSYS/eroce1/tuning/loss_recovery"
	echo "$mode" >"$IBSYS/eroce2/tuning/loss_recovery"
	snapshot "$OUT/before"
	impair "$imp" || ktap_diag "round $n: netem $imp refused"
	end=$((SECONDS + ROUND))
	integrity_loop rc_fwd 18930 "$end" -q 4 -o "$OPS" -b 8M &
	pids+=($!)
	integrity_loop rc_rev 18940 "$end" -R -q 2 -m 1024 -S 256k -o "$OPS" -b 4M &
	pids+=($!)
	case "$imp" in
	none|delay*)
		ud_loop "$end" &
		pids+=($!)
		;;
	esac
	if ! ns1 timeout "$(tmo 120)" "$OBJECTS" -d eroce3 >"$OUT/objects.out" 2>&1; then
		echo "objects exit" >>"$OUT/failed"
		sed 's/^/objects: /' "$OUT/objects.out" >>"$OUT/failures"
	fi
	RUNS=$((RUNS + 1))
	wait "${pids[@]}"
	impair none
	snapshot "$OUT/after"

	for name in rc_fwd rc_rev ud; do
		read -r r b < <(tally "$name")
		RUNS=$((RUNS + r))
		rr=$((rr + r))
		rb=$((rb + b))
	done
	BYTES=$((BYTES + rb))
	for c in "${SHOWN[@]}"; do
		line+=" $c +$(moved "$OUT/before" "$OUT/after" "$c")"
	done
	for c in "${NEVER[@]}"; do
		m=$(moved "$OUT/before" "$OUT/after" "$c")
		[ "$m" = 0 ] || ERRORS_SEEN+="round $n: $c +$m; "
	done
	case "$imp" in
	loss*)
		[ "$(moved "$OUT/before" "$OUT/after" retransmitted_packets)" -gt 0 ] ||
			LOSS_UNSEEN+="$n "
		;;
	esac
	wait_for 10 objects_are "$BASE" ||
		OBJECTS_DIFFER+="round $n: $(objects | tr '\n' ' '); "
	t=$(kernel_kb)
	MEM+=("$t")
	ktap_diag "round $n ($imp, $mode): $rr runs, $((rb >> 20)) MiB verified, kernel memory $t kB;$line"
}

# shellcheck disable=SC2317  # called through require
# objects_setup: eroce3 on veth3 (198.18.5.1), a veth pair of its own in ns1
objects_setup() {
	veth_add "$NS1" veth3 "$NS1" veth4 &&
		addr_add "$NS1" veth3 198.18.5.1/24 &&
		ns1 rdma link add eroce3 type eroce netdev veth3 &&
		wait_for 30 port_state_is eroce3 "4: ACTIVE" &&
		wait_for 30 has_gid eroce3 "$(ipv4_gid 198.18.5.1)"
}

ktap_plan 6
[ -x "$TOOL" ] || ktap_bail "$TOOL not built (make -C selftests/tools)"
[ -x "$OBJECTS" ] || ktap_bail "$OBJECTS not built (make -C selftests/tools)"
require eroce_pair_setup
require objects_setup
G1=$(gid_index_of eroce1 198.18.0.1)
G2=$(gid_index_of eroce2 198.18.0.2)
OPS=send,write,read
[[ "$("$TOOL" -h 2>&1)" == *atomic* ]] && OPS+=,atomic
BASE=$(objects)
MEM=()
rm -f "$OUT"/*
ktap_diag "soak: $MINUTES min in rounds of ${ROUND} s; operations $OPS"
start=$SECONDS
n=0
while [ $((SECONDS - start)) -lt $((MINUTES * 60)) ]; do
	round "$n"
	n=$((n + 1))
done
elapsed=$((SECONDS - start))

failed=$(sort "$OUT/failed" 2>/dev/null | uniq -c | tr -s ' \n' ' ')
[ -s "$OUT/failures" ] && ktap_diag "$(head -n 40 "$OUT/failures")"
ktap_diag "soak: $n rounds in $((elapsed / 60)) min $((elapsed % 60)) s, $RUNS tool runs, $((BYTES >> 20)) MiB verified"
ktap_diag "soak: kernel memory (kB, unreclaimable slab + vmalloc) after each round: ${MEM[*]}"
ktap_result soak_ran "$([ -z "$failed" ] && [ "$n" -gt 0 ]; echo $?)" \
	"runs that failed: $failed"
ktap_result soak_no_corruption "$([ ! -s "$OUT/corrupt" ]; echo $?)" \
	"wrong data found by: $(sort "$OUT/corrupt" 2>/dev/null | uniq -c | tr -s ' \n' ' ')"
ktap_result soak_objects_flat "$([ -z "$OBJECTS_DIFFER" ]; echo $?)" \
	"before: $(tr '\n' ' ' <<<"$BASE"); $OBJECTS_DIFFER"
grown=$((${MEM[-1]:-0} - ${MEM[0]:-0}))
ktap_result soak_memory_flat "$([ "${#MEM[@]}" -gt 0 ] && [ "$grown" -le "$MEM_SLACK" ]; echo $?)" \
	"kernel memory grew by $grown kB from the first round to the last (at most $MEM_SLACK)"
ktap_result soak_errors_flat "$([ -z "$ERRORS_SEEN" ]; echo $?)" "$ERRORS_SEEN"
ktap_result soak_impairments_seen "$([ -z "$LOSS_UNSEEN" ]; echo $?)" \
	"rounds with loss but no retransmission: $LOSS_UNSEEN"
ktap_finish
