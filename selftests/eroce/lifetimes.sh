#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 500
# vm-cpus: 2
#
# lifetimes.sh: what a peer or a racing engine must not be able to do to
# local objects (Documentation/design.rst "QP state and the engines",
# "Memory keys").  Driver: selftests/tools/eroce_lifetime (one process, QP
# A on eroce1 <-> QP B on eroce2), each "result:" line one subtest.
#   - dereg-write / dereg-read: ibv_dereg_mr on B while a 4 MiB WRITE
#     into (READ out of) its MR is paced at 400 kb/s, which would take
#     84 s: dereg returns within 5 s (it waited for the whole message
#     before), A's request ends with IBV_WC_REM_ACCESS_ERR, B hears
#     IBV_EVENT_QP_ACCESS_ERR and is in ERR.
#   - reset-ud / reset-rc: a QP moved to RESET while the requester is
#     busy (1000 UD sends, 64 RC WRITEs of 64 KiB posted in one call,
#     then RESET at once) and back to RTS takes a full SQ again and
#     completes it (the
#     requester and the reset once raced over the SQ's consumer index and
#     left the ring looking full for good).
#   - events: COMM_EST, SQ_DRAINED (after the drained WRITE completed),
#     LAST_WQE_REACHED.
#   - solicited-err: a CQ armed for solicited completions only fires for
#     an error completion.
#   - timer-race: selftests/kmod/eroce_ktimer.ko holds the sender's
#     matching of responses on the engine lock, with the ACK of a
#     message's first packet in hand, until the retransmit timer's callback has started on the other CPU
#     (the tool runs on CPU 1, where its doorbell arms the timer; RPS
#     hands the ACKs to CPU 0).  The expiry must count as stale, not as
#     a timeout: 3-packet WRITEs with retry_cnt 0 and
#     max_inflight_pkts 2 all succeed, stale_timer_expiries moves,
#     retransmit_timeouts does not.  A skip on a guest with one CPU,
#     where the race cannot happen.
#   - corrupt-sq: a producer index past the SQ's end, written into the
#     shared ring behind the provider's back, raises QP_FATAL on the next
#     doorbell; the QP is in ERR, a later post completes with a flush
#     error, and the QP is destroyed cleanly.
#   - rewind-sq: with 8 SENDs in flight (RNR-NAKed for ever), the SQ
#     producer index moved back to 4, behind what the kernel fetched,
#     raises QP_FATAL on the next doorbell; the QP is in ERR and is
#     destroyed cleanly (this once refetched in-flight slots and crashed
#     the kernel, found by the ring fuzzer).
#   - kernel-op: a WQE with a kernel-only opcode (REG_MR) or one eroce
#     does not implement (TSO),
#     written into a user SQ behind the provider's back completes with
#     IBV_WC_LOC_QP_OP_ERR and fails the QP.
#   - selftests/kmod/eroce_kconsumer.ko, a kernel consumer, posts a send
#     and a receive on a QP in ERR with interrupts off (as ib_mad posts):
#     both complete with a flush error, and no warning (the debug kernel's
#     lockdep catches bottom halves enabled with interrupts off).
#   - the VLAN device a connection runs over is deleted while selective
#     repeat keeps packets that came in on it (3% loss on veth1, WRITEs
#     over VLAN 200), once eroce2 has placed packets it kept
#     (ooo_packets_placed moved: the deletion meets selective repeat at
#     work, else the case tests nothing; gbn on eroce2 fails it): both
#     ends give up within 90 s, the kept packets no longer reference the
#     netdev (a use-after-free before; KASAN shows it on the debug
#     kernel), and eroce2 still carries a pingpong over its base GID
#     afterwards.
#   - rereg (selftests/tools/eroce_rereg): ibv_rereg_mr on B's MR moves
#     it to other memory (A's WRITE through the new rkey lands there, the
#     old memory untouched), the old rkey dies (remote access error), a
#     move to memory that cannot be pinned fails and leaves the MR
#     working where it was, no flags is EINVAL, dropping REMOTE_WRITE
#     refuses A's WRITE and adding it back serves the rkey A had (rights
#     change in place; an MR pinned read-only is pinned anew), a move to another
#     PD refuses a QP of the first PD and serves one of the new; a SEND
#     into a receive posted before the MR moved (new translation, or
#     another PD) is IBV_WC_REM_OP_ERR at A (NAK code 3, as rdma_rxe)
#     and IBV_WC_LOC_PROT_ERR at B.
# On the debug kernel dereg-read and reset-ud are left out (lib.sh
# debug_subset): dereg-write and reset-rc take the same teardowns (an MR
# deregistered under a transfer, a busy QP reset), and the pingpong after
# the VLAN test moves 1/8 (12 iterations).
# Run: selftests/run_vm.sh selftests/eroce/lifetimes.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_lifetime"

# lt MODE N: run one mode; its N "result:" lines become subtests, a
# missing one fails
lt() {
	ktap_results "${1//-/_}" "$2" timeout -k 5 150 "$TOOL" "$1" eroce1 "$G1" eroce2 "$G2"
}

# kept_some: eroce2 placed packets it had kept since the snapshot
# shellcheck disable=SC2317  # called through wait_for
kept_some() {
	local placed

	placed=$(stat_delta eroce2/1 "$RDMA_TMP/b2" ooo_packets_placed) &&
		[ "$placed" -gt 0 ]
}

# vlan_gone_under_sr: the VLAN device under a selective-repeat transfer
# is deleted on the receiving side
vlan_gone_under_sr() {
	local spid cpid crc g1 g2 i placed running n
	local INTEGRITY="$EROCE_ROOT/selftests/tools/eroce_integrity"

	vlan_pair_add 200 10 ||
		{ ktap_fail vlan_gone_under_sr_setup "VLAN 200 GIDs did not appear"; ktap_skip vlan_gone_under_sr_packets_kept "no setup"; ktap_skip vlan_gone_under_sr_ends "no setup"; ktap_skip vlan_gone_under_sr_device_survives "no setup"; return; }
	ktap_ok vlan_gone_under_sr_setup
	g1=$(gid_index_of eroce1 198.18.200.1)
	g2=$(gid_index_of eroce2 198.18.200.2)
	echo sr >"$IBSYS/eroce1/tuning/loss_recovery"
	echo sr >"$IBSYS/eroce2/tuning/loss_recovery"
	stat_snap eroce2/1 "$RDMA_TMP/b2"
	netem_set "$NS1" veth1 loss 3%
	ns2 "$INTEGRITY" -d eroce2 -g "$g2" -p 18800 -t 120 >"$RDMA_TMP/vsrv.out" 2>&1 &
	spid=$!
	wait_for 15 tcp_listening "$NS2" 18800
	# RDMA on the VLAN's GIDs, the TCP control connection on the untagged
	# link, so that the server hears the client hang up.  Paced to 2 Mb/s
	# per QP, the 64 MiB take over a minute: the deletion comes in the
	# middle however fast the kernel is (unpaced, on PREEMPT_RT the
	# transfer had ended before the VLAN device was gone)
	ns1 "$INTEGRITY" -d eroce1 -g "$g1" -p 18800 -t 120 -q 4 -o write -b 64M \
		-L 2000 198.18.0.2 >"$RDMA_TMP/vcli.out" 2>&1 &
	cpid=$!
	# delete it once packets have been kept and placed
	wait_for 60 kept_some
	placed=$(stat_delta eroce2/1 "$RDMA_TMP/b2" ooo_packets_placed)
	ns2 ip link del veth2.200
	ktap_result vlan_gone_under_sr_packets_kept "$([ "${placed:-0}" -gt 0 ]; echo $?)" \
		"ooo_packets_placed did not move in 60 s: nothing was kept when the VLAN device went"
	ktap_diag "VLAN device deleted after ${placed:-0} kept packets placed"
	# the client runs out of retries; the server sees it hang up
	for i in $(seq 1 180); do
		kill -0 "$cpid" 2>/dev/null || kill -0 "$spid" 2>/dev/null || break
		sleep 0.5
	done
	running=
	kill -0 "$cpid" 2>/dev/null && running="client"
	kill -0 "$spid" 2>/dev/null && running="$running server"
	kill "$cpid" "$spid" 2>/dev/null
	wait "$cpid"
	crc=$?
	wait "$spid"
	ktap_diag "client: $(tail -n 2 "$RDMA_TMP/vcli.out" | tr '\n' ' ')(exit $crc)"
	ktap_diag "server: $(tail -n 2 "$RDMA_TMP/vsrv.out" | tr '\n' ' ')"
	ktap_result vlan_gone_under_sr_ends "$([ -z "$running" ] && [ "$crc" = 2 ]; echo $?)" \
		"still running 90 s after the VLAN device went:${running:- none}; client exit $crc, want 2"
	netem_clear "$NS1" veth1
	echo default >"$IBSYS/eroce1/tuning/profile"
	echo default >"$IBSYS/eroce2/tuning/profile"
	ns1 ip link del veth1.200 2>/dev/null
	n=$(debug_scaled 100)
	ktap_check vlan_gone_under_sr_device_survives \
		srv_cli 60 "$NS2" "$NS1" ibv_rc_pingpong -d eroce2 -g "$G2" -n "$n" -c -- \
		ibv_rc_pingpong -d eroce1 -g "$G1" -n "$n" -c 198.18.0.2
}

# the kernel consumer module, built against the running kernel
KCONSUMER="${EROCE_KMOD_DIR:-$EROCE_ROOT/selftests/kmod}/eroce_kconsumer.ko"
KTIMER="${EROCE_KMOD_DIR:-$EROCE_ROOT/selftests/kmod}/eroce_ktimer.ko"

# ktimer_param NAME: a counter of the loaded eroce_ktimer
ktimer_param() {
	read_file /sys/module/eroce_ktimer/parameters/"$1"
}

# rps_to MASK: RPS steers veth1's receive (the ACKs to eroce1) to MASK
rps_to() {
	ns1 sh -c "echo $1 >/sys/class/net/veth1/queues/rx-0/rps_cpus"
}

# timer_race: the retransmit timer expires while the ACK that re-arms it
# is handled (see the header).  The tool runs on CPU 1, so its doorbell
# sends each message's first packets and arms the timer there; RPS hands
# the ACKs to CPU 0.
timer_race() {
	local rc=0 fired same missed res stale tmos n t
	local snap="$RDMA_TMP/ktimer.stat"

	# the race is between two CPUs (the debug kernel's guest has one)
	n=$(nproc)
	if [ "$n" -lt 2 ]; then
		for t in provoked writes_succeed stale_counted no_timeout; do
			ktap_skip "timer_race_$t" "needs 2 CPUs, the guest has $n"
		done
		return
	fi
	echo 2 >"$IBSYS/eroce1/tuning/max_inflight_pkts"
	rps_to 1
	if run insmod "$KTIMER" shots=5 max_wait_ms="$(tmo 1000)"; then
		stat_snap eroce1/1 "$snap"
		run timeout -k 5 150 taskset -c 1 "$TOOL" --count 40 timer-race \
			eroce1 "$G1" eroce2 "$G2" || rc=$?
		fired=$(ktimer_param fired)
		same=$(ktimer_param same_cpu)
		missed=$(ktimer_param missed)
		rmmod eroce_ktimer
		stale=$(stat_delta eroce1/1 "$snap" stale_timer_expiries)
		tmos=$(stat_delta eroce1/1 "$snap" retransmit_timeouts)
	else
		ktap_diag "insmod eroce_ktimer.ko: $LAST_OUT"
		rc=1
	fi
	rps_to 0
	echo default >"$IBSYS/eroce1/tuning/profile"
	res=$(grep '^result: writes_succeed ' <<<"$LAST_OUT")
	ktap_diag "timer-race: exit $rc; races ${fired:-?}, same CPU ${same:-?}, missed ${missed:-?}"
	ktap_diag "${res:-no result: $(tail -n 3 <<<"$LAST_OUT" | tr '\n' ' ')}"
	ktap_result timer_race_provoked "$([ "${fired:-0}" -gt 0 ]; echo $?)" \
		"no expiry was held on the engine lock (same CPU ${same:-?}, missed ${missed:-?})"
	ktap_result timer_race_writes_succeed \
		"$([ "$rc" = 0 ] && [[ $res == *" ok "* ]]; echo $?)" "${res:-no result} (exit $rc)"
	ktap_result timer_race_stale_counted "$([ "${stale:-0}" -gt 0 ]; echo $?)" \
		"stale_timer_expiries +${stale:-?} for ${fired:-?} races"
	ktap_result timer_race_no_timeout "$([ "${tmos:-1}" = 0 ]; echo $?)" \
		"retransmit_timeouts +${tmos:-?}"
}

kernel_consumer() {
	if run insmod "$KCONSUMER" dev=eroce1; then
		rmmod eroce_kconsumer
		ktap_diag "$(dmesg | grep -o 'eroce_kconsumer: .*' | tail -n 5 | tr '\n' ';')"
		ktap_ok kernel_consumer_posts_irqs_off
	else
		ktap_diag "$LAST_OUT"
		ktap_diag "$(dmesg | grep -o 'eroce_kconsumer: .*' | tail -n 5 | tr '\n' ';')"
		ktap_fail kernel_consumer_posts_irqs_off "insmod eroce_kconsumer.ko failed"
	fi
}

ktap_plan 49
require eroce_pair_setup
require pair_gids
pair_gids
require test -x "$TOOL"
kmsg_mark
lt dereg-write 4
debug_subset dereg_read_dereg_returns dereg_read_requester_access_error \
	dereg_read_responder_access_event dereg_read_responder_in_err ||
	lt dereg-read 4
debug_subset reset_ud_full_sq_after_reset reset_ud_sends_complete_after_reset ||
	lt reset-ud 2
lt reset-rc 2
lt events 4
lt solicited-err 2
lt corrupt-sq 4
lt rewind-sq 3
lt kernel-op 4
ktap_results rereg 10 timeout -k 5 150 "$EROCE_ROOT/selftests/tools/eroce_rereg" \
	eroce1 "$G1" eroce2 "$G2"
timer_race
kernel_consumer
vlan_gone_under_sr
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
