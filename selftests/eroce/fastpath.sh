#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 500
#
# fastpath.sh: the provider's fast path enters the kernel as little as
# Documentation/design.rst "Shared rings" promises.  Each workload runs
# twice under `strace -f -c` (every system call of the client process
# tree counted), with N1 and N2 iterations; the marginal system calls per
# message, (calls(N2) - calls(N1)) / (N2 - N1), leave connection setup
# and teardown out.
#   - ib_send_bw 64 B, new post-send API (ibv_wr_*) and --use_old_post_send
#     (ibv_post_send), and ib_write_bw 64 B: at most one system call per
#     message, the doorbell of a post that found the kernel idle (over a
#     bare veth the doorbell's system call sends, and the receive softirq
#     it ends in carries the ACK back, so every post finds the kernel
#     idle: measured 1.000)
#   - ib_write_bw 64 B over a link with 1 ms of delay each way, as on a
#     real wire where ACKs come after the system call has returned: a
#     post made while packets are unacknowledged rings no doorbell (the
#     sender sends it when the ACK comes).  A doorbell needs every packet
#     acknowledged, so two of them are at least a round trip (2 ms)
#     apart: at most one per 2 ms of the longer run's wall time (plus 100
#     for setup), per message; a machine that sends faster gets a tighter
#     bound.  And at most half the rate of the same run without the delay
#     (measured 1.000): a slow machine's bound from time alone can reach
#     one per message (every post a system call under strace makes the
#     run slow enough), while 128 posts in flight leave the kernel idle
#     only when userspace stalls for a whole round trip.  Measured: 4
#     calls over 9000 messages, against a bound of 0.26 per message
#     (10000 messages in 4.5 s).
#   - ibv_rc_pingpong 64 B: post_recv and poll_cq never enter the kernel:
#     one system call per message (the SEND's doorbell)
#   - ibv_rc_pingpong -e (completion events): besides the doorbell, one
#     read() per completion event and nothing else (arming the CQ is a
#     flag in shared memory; every message still checked (-c)).  Each
#     message has a send and a receive completion, and one event may
#     cover both or one, as the two sides' timing decides: between one
#     and two read() calls per message, the rest at most one
# A post_recv, poll_cq or req_notify_cq that entered the kernel would add
# one per message and fail these bounds.
# Beside each bound but the events pingpong's, ..._doorbells_counted:
# eroce1's doorbells counter moved by as much per message as the client
# made write() calls (the doorbell is a write() to the uverbs device),
# within 0.05.
# The figures go to the KTAP log (Documentation/bench.rst quotes them).
# On the debug kernel every run has an eighth of the iterations (N1/N2
# 125/625, pingpong 25/125) and a bound missed is a skip (ktap_bound):
# how often a post finds the kernel idle depends on how fast the peer is.
# And only the delayed ib_write_bw (doorbells, and posts an ACK's
# handling sends) and the pingpong with events (receives and CQ arming in shared
# memory, event reads) run there (lib.sh debug_subset).
# Run: selftests/run_vm.sh selftests/eroce/fastpath.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

SRV=198.18.0.2
TRACE=$RDMA_TMP/strace.out
# iterations N1 and N2 of the perftest runs and of the pingpong runs; on
# the debug kernel an eighth, N2 still 5 N1
BW_N1=$(debug_scaled 1000)
BW_N2=$(debug_scaled 5000)
PP_N1=$(debug_scaled 200)
PP_N2=$(debug_scaled 1000)
# the workloads the debug kernel's subset keeps (lib.sh debug_subset)
DEBUG_KEEP="write_bw_delayed_syscalls_per_message pingpong_events_reads_per_message"

# calls KIND N: run workload KIND with N iterations, the client under
# strace; prints the total number of system calls (empty on failure); the
# run's wall time in ms (server start to end) goes to $TRACE.ms.N
calls() {
	local kind=$1 n=$2
	local -a s c
	case "$kind" in
	send_bw_new)
		s=(ib_send_bw -d eroce2 -x "$G2" -s 64 -n "$n")
		c=(ib_send_bw -d eroce1 -x "$G1" -s 64 -n "$n" "$SRV") ;;
	send_bw_old)
		s=(ib_send_bw -d eroce2 -x "$G2" -s 64 -n "$n" --use_old_post_send)
		c=(ib_send_bw -d eroce1 -x "$G1" -s 64 -n "$n" --use_old_post_send "$SRV") ;;
	write_bw | write_bw_delayed)
		s=(ib_write_bw -d eroce2 -x "$G2" -s 64 -n "$n")
		c=(ib_write_bw -d eroce1 -x "$G1" -s 64 -n "$n" "$SRV") ;;
	pingpong)
		s=(ibv_rc_pingpong -d eroce2 -g "$G2" -s 64 -n "$n" -c)
		c=(ibv_rc_pingpong -d eroce1 -g "$G1" -s 64 -n "$n" -c "$SRV") ;;
	pingpong_events)
		s=(ibv_rc_pingpong -d eroce2 -g "$G2" -s 64 -n "$n" -c -e)
		c=(ibv_rc_pingpong -d eroce1 -g "$G1" -s 64 -n "$n" -c -e "$SRV") ;;
	esac
	local t0 db0 db1
	t0=$(date +%s%N)
	db0=$(stat_get eroce1 doorbells)
	if ! srv_cli 180 "$NS2" "$NS1" "${s[@]}" -- \
		strace -f -c -o "$TRACE" "${c[@]}"; then
		srv_cli_diag >&2
		return 1
	fi
	echo $((($(date +%s%N) - t0) / 1000000)) >"$TRACE.ms.$n"
	db1=$(stat_get eroce1 doorbells)
	echo $((db1 - db0)) >"$TRACE.db.$n"
	cp "$TRACE" "$TRACE.$n"
	# the "total" line of strace -c: ... calls [errors] total
	awk '$NF == "total" { print ($5 ~ /^[0-9]+$/) ? $4 : $3 }' "$TRACE"
}

# syscall_count N NAME: calls of NAME in the run with N iterations
syscall_count() {
	awk -v s="$2" '$NF == s { print $4; f = 1 }
		END { if (!f) print 0 }' "$TRACE.$1"
}

# rate A B N1 N2: (B - A) / (N2 - N1), three decimals
rate() {
	awk -v a="$1" -v b="$2" -v n1="$3" -v n2="$4" \
		'BEGIN { printf "%.3f", (b - a) / (n2 - n1) }'
}

# doorbells_counted KIND N1 N2: the second subtest of per_msg
doorbells_counted() {
	local kind=$1 n1=$2 n2=$3 d w
	d=$(rate "$(cat "$TRACE.db.$n1")" "$(cat "$TRACE.db.$n2")" "$n1" "$n2")
	w=$(rate "$(syscall_count "$n1" write)" "$(syscall_count "$n2" write)" "$n1" "$n2")
	ktap_result "${kind}_doorbells_counted" \
		"$(awk -v d="$d" -v w="$w" 'BEGIN { print (d - w <= 0.05 && w - d <= 0.05) ? 0 : 1 }')" \
		"doorbells counted $d per message, write() calls $w"
	ktap_diag "$kind: doorbells counted $d per message, write() calls $w"
}

# per_msg KIND N1 N2 MAX: two subtests; marginal calls per message <= MAX
# (kept in RATE[KIND]); MAX "rtt" is the doorbell bound of a 2 ms round
# trip: one doorbell per 2 ms of the N2 run, plus 100, per message of
# N2 - N1, and at most half of RATE[write_bw]
declare -A RATE
per_msg() {
	local kind=$1 n1=$2 n2=$3 max=$4 c1 c2 r
	debug_subset "${kind}_syscalls_per_message" "${kind}_doorbells_counted" &&
		return
	c1=$(calls "$kind" "$n1") && c2=$(calls "$kind" "$n2")
	if [ -z "${c1:-}" ] || [ -z "${c2:-}" ]; then
		ktap_fail "${kind}_syscalls_per_message" "workload failed"
		ktap_fail "${kind}_doorbells_counted" "workload failed"
		return
	fi
	if [ "$max" = rtt ]; then
		max=$(awk -v t="$(cat "$TRACE.ms.$n2")" -v n1="$n1" -v n2="$n2" \
			-v w="${RATE[write_bw]:-1}" 'BEGIN { m = (t / 2 + 100) / (n2 - n1)
			if (m > w / 2) m = w / 2; printf "%.3f", m }')
		ktap_diag "$kind: $n2 messages in $(cat "$TRACE.ms.$n2") ms, one doorbell per 2 ms round trip, half of write_bw's ${RATE[write_bw]:-1}: at most $max per message"
	fi
	r=$(rate "$c1" "$c2" "$n1" "$n2")
	RATE[$kind]=$r
	ktap_diag "$kind: $c1 system calls for $n1 messages, $c2 for $n2: $r per message"
	ktap_diag "$(sort -k4 -n -r "$TRACE" | awk '$NF != "total" && $4 ~ /^[0-9]+$/' | head -n 3)"
	ktap_bound "${kind}_syscalls_per_message" \
		"$(awk -v r="$r" -v m="$max" 'BEGIN { print (r <= m) ? 0 : 1 }')" \
		"$r system calls per message, want <= $max"
	doorbells_counted "$kind" "$n1" "$n2"
}

ktap_plan 13
require eroce_pair_setup
require pair_gids
pair_gids
require command -v strace
kmsg_mark
per_msg send_bw_new "$BW_N1" "$BW_N2" 1.05
per_msg send_bw_old "$BW_N1" "$BW_N2" 1.05
per_msg write_bw "$BW_N1" "$BW_N2" 1.05
netem_set "$NS1" veth1 delay 1ms
netem_set "$NS2" veth2 delay 1ms
per_msg write_bw_delayed "$BW_N1" "$BW_N2" rtt
netem_clear "$NS1" veth1
netem_clear "$NS2" veth2
per_msg pingpong "$PP_N1" "$PP_N2" 1.05

# per_msg_events N1 N2: ibv_rc_pingpong -e; read() per message within
# 1..2 (one per completion event), everything else at most 1.05
per_msg_events() {
	local n1=$1 n2=$2 c1 c2 r1 r2 reads other
	debug_subset pingpong_events_reads_per_message \
		pingpong_events_other_syscalls_per_message && return
	c1=$(calls pingpong_events "$n1") && c2=$(calls pingpong_events "$n2")
	if [ -z "${c1:-}" ] || [ -z "${c2:-}" ]; then
		ktap_fail pingpong_events_reads_per_message "workload failed"
		ktap_fail pingpong_events_other_syscalls_per_message "workload failed"
		return
	fi
	r1=$(syscall_count "$n1" read)
	r2=$(syscall_count "$n2" read)
	reads=$(rate "$r1" "$r2" "$n1" "$n2")
	other=$(rate "$((c1 - r1))" "$((c2 - r2))" "$n1" "$n2")
	ktap_diag "pingpong_events: $c1 system calls ($r1 read) for $n1 messages, $c2 ($r2 read) for $n2: $reads read and $other others per message"
	ktap_bound pingpong_events_reads_per_message \
		"$(awk -v r="$reads" 'BEGIN { print (r >= 0.95 && r <= 2.05) ? 0 : 1 }')" \
		"$reads read() calls per message, want 1..2 (one per completion event)"
	ktap_bound pingpong_events_other_syscalls_per_message \
		"$(awk -v r="$other" 'BEGIN { print (r <= 1.05) ? 0 : 1 }')" \
		"$other system calls other than read() per message, want <= 1.05"
}

per_msg_events "$PP_N1" "$PP_N2"
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
