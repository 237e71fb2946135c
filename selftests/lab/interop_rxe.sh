#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
#
# interop_rxe.sh: eroce and the upstream soft-RoCE, rdma_rxe, on two hosts
# of the lab (selftests/run_lab.sh): guest0 (198.18.10.1) has rxe0
# (rdma_rxe, in the initial namespace, as a real host has it), guest1
# (198.18.10.2) eroce0 (the tree's eroce.ko and provider), across the
# bridge.  ibv_rc_pingpong -c (4 KiB messages, every received buffer
# checked) both ways: eroce server / rdma_rxe client, then rdma_rxe
# server / eroce client.  Then selftests/tools/eroce_integrity both ways
# (one RC QP, the client the active side: rdma_rxe requesting from eroce,
# then eroce from rdma_rxe): RDMA WRITE and READ of messages around the
# MTU boundaries, every byte compared, and FETCH_AND_ADD / CMP_AND_SWP,
# every returned value and the counters left behind checked; each guest
# requires the exact amount checked on its side.
# Afterwards eroce dropped no packet of rdma_rxe's
# as malformed (truncated, bad ICRC, header or opcode) and no QP ran out
# of retries; rxe0's counters that are not 0 as diagnostics.
# Each guest reports its own side; the runner passes the script when both
# passed.
# Run: selftests/run_lab.sh selftests/lab/interop_rxe.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"
# shellcheck source=../lib_lab.sh
. "$(dirname "$0")/../lib_lab.sh"

PP_ITERS=$(debug_scaled 200)
SNAP=$RDMA_TMP/interop.stats
INTEGRITY=$EROCE_ROOT/selftests/tools/eroce_integrity
# eroce_integrity's WRITE and READ bytes, and atomics
INT_BYTES=$(debug_scaled 1048576)
INT_ATOMICS=$(debug_scaled 4096)
DROPS="rx_drop_truncated rx_drop_icrc rx_drop_bad_header rx_drop_bad_opcode retry_exceeded"

# the guest's device: rxe0 on guest0, eroce0 on guest1
if [ "${EROCE_LAB_INDEX:-0}" = 0 ]; then DEV=rxe0; else DEV=eroce0; fi

setup() {
	if [ "$DEV" = rxe0 ]; then
		rxe_load && lab_rdma_link rxe0 rxe
	else
		eroce_load && provider_install && lab_rdma_link eroce0 eroce
	fi
}

# pingpong NAME SRV: ibv_rc_pingpong -c, the server on guest SRV
pingpong() {
	local gid
	gid=$(gid_index_of "$DEV" "$LAB_IP")
	if lab_srv_cli "$1" "$2" 18515 120 \
		ibv_rc_pingpong -d "$DEV" -g "$gid" -p 18515 -s 4096 -n "$PP_ITERS" -c &&
		grep -q "bytes in" <<<"$LAB_OUT"; then
		ktap_diag "$DEV: $(grep 'iters in' <<<"$LAB_OUT")"
		ktap_ok "$1"
	else
		lab_srv_cli_diag
		ktap_fail "$1" "ibv_rc_pingpong -c on $DEV rc=$LAB_RC"
	fi
}

# integrity NAME SRV: eroce_integrity -o write,read,atomic, the server on
# guest SRV, the client (the active side, whose device requests) on the
# other; one subtest NAME_OP per operation, from this guest's lines
integrity() {
	local gid op want rc=0
	gid=$(gid_index_of "$DEV" "$LAB_IP")
	lab_srv_cli "$1" "$2" 18540 120 \
		"$INTEGRITY" -d "$DEV" -g "$gid" -p 18540 -t "$(tmo 100)" -- \
		"$INTEGRITY" -d "$DEV" -g "$gid" -p 18540 -t "$(tmo 100)" -q 1 -w 16 \
		-b "$INT_BYTES" -o write,read,atomic -a "$INT_ATOMICS" || rc=$?
	ktap_diag "$DEV: $(grep -E '^(write|read|atomic):' <<<"$LAB_OUT" | tr '\n' ';')"
	[ "$rc" = 0 ] || lab_srv_cli_diag
	for op in write read atomic; do
		want=$INT_BYTES
		[ $op = atomic ] && want=$((8 * INT_ATOMICS))
		ktap_result "${1}_$op" \
			"$([ "$rc" = 0 ] && grep -q "^$op: ok $want bytes checked" <<<"$LAB_OUT"; echo $?)" \
			"eroce_integrity on $DEV rc=$rc, want \"$op: ok $want bytes checked\""
	done
}

# clean: eroce dropped nothing as malformed; rxe0's counters shown
clean() {
	local c d bad=
	if [ "$DEV" = rxe0 ]; then
		ktap_diag "rxe0: $(stat_nonzero rxe0/1)"
		ktap_ok no_drops
		return
	fi
	for c in $DROPS; do
		d=$(stat_delta "$DEV/1" "$SNAP" "$c") || d='?'
		[ "$d" = 0 ] || bad+="$c +$d; "
	done
	stat_moved "$DEV/1" "$SNAP" rx_packets || bad+="rx_packets did not move; "
	ktap_diag "eroce0: $(stat_changes "$DEV/1" "$SNAP")"
	ktap_result no_drops "$([ -z "$bad" ]; echo $?)" "$bad"
}

ktap_plan 12
[ "$LAB_N" = 2 ] || ktap_bail "interop_rxe.sh needs 2 guests, has $LAB_N"
lab_setup_ktap
require setup
ktap_ok "${DEV}_link"
# shellcheck disable=SC2086  # $PING may be "busybox ping"
if lab_barrier up >/dev/null && $PING -c 3 -W 5 "$(lab_ip "$(lab_peer)")" >/dev/null; then
	ktap_ok peer_reachable
else
	ktap_bail "peer $(lab_ip "$(lab_peer)") not reachable"
fi
stat_snap "$DEV/1" "$SNAP"
pingpong rc_pingpong_eroce_srv 1
pingpong rc_pingpong_rxe_srv 0
integrity integrity_eroce_srv 1
integrity integrity_rxe_srv 0
clean
ktap_finish
