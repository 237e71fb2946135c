#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 1500
#
# loss_guest.sh: how much throughput survives loss and reordering, per
# loss-recovery mode, next to rdma_rxe; run in a guest with
#   selftests/run_vm.sh --show selftests/bench/loss_guest.sh
# (`make bench-loss` does that).  Prints one "LOSS-ROW: ..." line per run
# and a table: ib_write_bw 64 KiB (-n LOSS_ITERS, default 300), median of
# LOSS_REPEAT (default 3) runs, eroce<->eroce across two namespaces over a
# veth pair and rdma_rxe<->rdma_rxe over a policy-routed veth pair in the
# initial namespace, each lossless, under netem loss 1% and under netem
# "delay 1ms reorder 95%" (5% of the packets 1 ms late), on both veth
# ends; eroce with loss_recovery gbn, tlp and sr, and sr once more with
# tx_batch 0: netem drops a batch whole (a burst of packets), so only
# unbatched packets see 1% loss one by one.  Each figure also as a
# fraction of the same topology's (and tx_batch's) lossless one.
# Documentation/bench.rst.
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

ITERS=${LOSS_ITERS:-300}
REPEAT=${LOSS_REPEAT:-3}
declare -A BW

setup() {
	two_ns_setup && eroce_load && provider_install && rxe_load || return
	ns1 rdma link add eroce1 type eroce netdev veth1 &&
		ns2 rdma link add eroce2 type eroce netdev veth2 || return
	rxe_pair_setup || return
	wait_for 10 has_gid eroce1 "$(ipv4_gid 198.18.0.1)" &&
		wait_for 10 has_gid eroce2 "$(ipv4_gid 198.18.0.2)"
}

# impair TOPO ARGS...: netem ARGS on both veth ends of TOPO ("" clears)
impair() {
	local topo=$1; shift
	if [ "$topo" = eroce ]; then
		tc -n "$NS1" qdisc del dev veth1 root 2>/dev/null
		tc -n "$NS2" qdisc del dev veth2 root 2>/dev/null
		[ $# = 0 ] && return 0
		tc -n "$NS1" qdisc add dev veth1 root netem "$@" &&
			tc -n "$NS2" qdisc add dev veth2 root netem "$@"
	else
		tc qdisc del dev vr1 root 2>/dev/null
		tc qdisc del dev vr2 root 2>/dev/null
		[ $# = 0 ] && return 0
		tc qdisc add dev vr1 root netem "$@" && tc qdisc add dev vr2 root netem "$@"
	fi
}

# bw TOPO: one ib_write_bw run, "BW average" in MB/s, or "fail"
bw() {
	local s c r
	if [ "$1" = eroce ]; then
		ns2 timeout 60 ib_write_bw -d eroce2 -x "$(gid_index_of eroce2 198.18.0.2)" \
			-s 65536 -n "$ITERS" >/dev/null 2>&1 &
		s=$!
		sleep 3
		r=$(ns1 timeout 60 ib_write_bw -d eroce1 -x "$(gid_index_of eroce1 198.18.0.1)" \
			-s 65536 -n "$ITERS" 198.18.0.2 2>&1)
	else
		timeout 60 ib_write_bw -d rxe2 -x "$(gid_index_of rxe2 198.18.1.2)" \
			-s 65536 -n "$ITERS" >/dev/null 2>&1 &
		s=$!
		sleep 3
		r=$(timeout 60 ib_write_bw -d rxe1 -x "$(gid_index_of rxe1 198.18.1.1)" \
			-s 65536 -n "$ITERS" 198.18.1.2 2>&1)
	fi
	wait "$s"
	c=$(awk '/#bytes/ { h = 1; next } h && $1 == 65536 { print $4; exit }' <<<"$r")
	echo "${c:-fail}"
}

median() {
	tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "fail" }'
}

# measure TOPO MODE IMPAIRMENT NETEM...: REPEAT runs, the median in BW[];
# an eroce MODE ending in -nobatch runs with tx_batch 0
measure() {
	local topo=$1 mode=$2 imp=$3 i all='' v batch=1; shift 3
	if [ "$topo" = eroce ]; then
		[ "$mode" = "${mode%-nobatch}" ] || batch=0
		echo "${mode%-nobatch}" >"$IBSYS/eroce1/tuning/loss_recovery"
		echo "${mode%-nobatch}" >"$IBSYS/eroce2/tuning/loss_recovery"
		eroce_tx_batch_all "$batch" || return
	fi
	impair "$topo" "$@"
	for ((i = 0; i < REPEAT; i++)); do
		v=$(bw "$topo")
		all+=" $v"
	done
	impair "$topo"
	BW[$topo/$mode/$imp]=$(median <<<"$all")
	echo "LOSS-ROW: $topo,$mode,$imp,${BW[$topo/$mode/$imp]},$all"
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'
}

setup || { echo "setup failed"; exit 1; }
measure eroce gbn lossless
measure eroce gbn loss1 loss 1%
measure eroce tlp loss1 loss 1%
measure eroce sr loss1 loss 1%
measure eroce gbn reorder5 delay 1ms reorder 95%
measure eroce sr reorder5 delay 1ms reorder 95%
measure eroce sr-nobatch lossless
measure eroce sr-nobatch loss1 loss 1%
measure rxe - lossless
measure rxe - loss1 loss 1%
measure rxe - reorder5 delay 1ms reorder 95%

printf '%-22s %10s %10s %10s\n' "ib_write_bw 64 KiB" "lossless" "loss 1%" "reorder 5%"
for row in "eroce gbn" "eroce tlp" "eroce sr" "eroce sr-nobatch" "rxe -"; do
	read -r t m <<<"$row"
	base=${BW[$t/$m/lossless]:-${BW[$t/gbn/lossless]:-${BW[$t/-/lossless]}}}
	l=${BW[$t/$m/loss1]:-}
	r=${BW[$t/$m/reorder5]:-}
	printf '%-22s %10s %10s %10s\n' "$t $m MB/s" "$base" "${l:--}" "${r:--}"
	printf '%-22s %10s %10s %10s\n' "  of lossless" "1.00" "$(ratio "${l:-0}" "$base")" \
		"$(ratio "${r:-0}" "$base")"
done
echo "loss_guest: done"
