#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# retry.sh: an RC requester whose peer disappears must give up with
# IBV_WC_RETRY_EXC_ERR in the time its QP timeout / retry_cnt promise, and
# one whose peer never posts receives with IBV_WC_RNR_RETRY_EXC_ERR after
# rnr_retry RNR NAKs; afterwards the QP is in ERR and flushes new work.
# Driver: selftests/tools/eroce_retry (one process, QP A on eroce1 <-> QP B
# on eroce2; it checks one SEND gets across, runs --hook, then posts).
# "The peer disappears" is netem loss 100% on the path:
#   - on veth1's egress (requests lost; nothing reaches eroce2)
#   - on veth2's egress (requests arrive, every ACK / read response is lost:
#     the responder must treat the retries as duplicates)
# Timing: timeout 14 is 4.096 us * 2^14 = 67 ms; retry_cnt 3 means four
# transmissions, each waiting a full timeout (a timer never fires early),
# so the error comes no sooner than 4 * 67 = 268 ms: we require at least
# 95% of that (one RTO fewer would be 75%) and at most 5 s (a loaded
# machine runs the timers late, never early).  timeout 16 (268 ms) with
# retry_cnt 1: two timeouts, at least 95% of 537 ms; timeout 18 (1.07 s),
# retry_cnt 3: at least 95% of 4.3 s.
# On the debug kernel the tool's deadlines (--limit, timeout) are
# TIMEOUT_MULT times longer and an error that comes outside its window is
# a skip (ktap_bound); the completion status, the ERR state and the
# counters are checked as everywhere.  And only a subset runs (lib.sh
# debug_subset): WRITE under request loss, READ under ACK loss (the
# responder's repeated READs, the requester's READ asked for again),
# SEND with the driver details, RNR retry exceeded and RNR recovery; the
# other operations, timeouts, sizes and RNR counts are skips.
# Last, a fatal NAK the responder gives while it owes read responses must
# reach the requester after them (--mode fatal-behind-read).
# Run: selftests/run_vm.sh selftests/eroce/retry.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_retry"
LOSS_REQ="tc -n $NS1 qdisc replace dev veth1 root netem loss 100%"
LOSS_ACK="tc -n $NS2 qdisc replace dev veth2 root netem loss 100%"
B1=$RDMA_TMP/b1
B2=$RDMA_TMP/b2
# the variants the debug kernel's subset keeps (lib.sh debug_subset)
DEBUG_KEEP="retry_exceeded_write_request_loss retry_exceeded_read_ack_loss"

build_tool() {
	[ -x "$TOOL" ] && [ "$TOOL" -nt "$TOOL.c" ] && return 0
	make -s -C "$EROCE_ROOT/selftests/tools" eroce_retry
}

# rto_floor TIMEOUT RETRY_CNT: 95% of the retry_cnt + 1 timeouts of
# 4.096 us * 2^TIMEOUT, in ms: the earliest a retry-exceeded error may come
rto_floor() {
	awk -v t="$1" -v n="$2" 'BEGIN { printf "%d", 0.95 * (n + 1) * 0.004096 * 2 ^ t }'
}

# rt NAME MIN_MS MAX_MS ARGS...: run eroce_retry; pass when it exits 0 and
# the error completion came between MIN_MS and MAX_MS after the post.  The
# tool's status (the completion it wanted, then ERR and a flushed WR) is
# checked strictly; the window is a bound (ktap_bound).  --limit is the
# tool's own default, 5 s, stretched on the debug kernel (ARGS may give
# another)
rt() {
	local name=$1 min=$2 max=$3 rc=0 ms why; shift 3
	stat_snap eroce1/1 "$B1"
	stat_snap eroce2/1 "$B2"
	run timeout -k 5 "$(tmo 30)" "$TOOL" --limit "$(tmo 5)" "$@" \
		eroce1 "$G1" eroce2 "$G2" || rc=$?
	netem_clear "$NS1" veth1
	netem_clear "$NS2" veth2
	ms=$(awk '$1 == "elapsed_ms" { print $2 }' <<<"$LAST_OUT")
	if [ $rc = 0 ] && [ -n "$ms" ] && [ "$ms" -ge "$min" ] && [ "$ms" -le "$max" ]; then
		ktap_diag "$(grep '^result:' <<<"$LAST_OUT")"
		ktap_ok "$name"
		return
	fi
	ktap_diag "$LAST_OUT"
	ktap_diag "eroce1: $(stat_changes eroce1/1 "$B1")"
	ktap_diag "eroce2: $(stat_changes eroce2/1 "$B2")"
	why="rc=$rc elapsed_ms=${ms:-none}, want ${min}..${max}"
	if [ $rc = 0 ] && [ -n "$ms" ]; then
		ktap_bound "$name" 1 "$why"
	else
		ktap_fail "$name" "$why"
	fi
}

# moved NAME LINK FILE COUNTER...: one of the counters grew during the last rt
moved() {
	local name=$1 l=$2 f=$3; shift 3
	if stat_moved "$l" "$f" "$@"; then
		ktap_ok "$name"
	else
		ktap_diag "$l: $(stat_changes "$l" "$f")"
		ktap_fail "$name" "none of $* moved on $l"
	fi
}

test_retry() {
	local op
	local floor
	floor=$(rto_floor 14 3)
	for op in send write read; do
		debug_subset "retry_exceeded_${op}_request_loss" "retransmit_timeouts_${op}" &&
			continue
		rt "retry_exceeded_${op}_request_loss" "$floor" 5000 \
			--mode retry --op "$op" --timeout 14 --retry-cnt 3 --hook "$LOSS_REQ"
		moved "retransmit_timeouts_${op}" eroce1/1 "$B1" retransmit_timeouts
	done
	moved retry_exceeded_counter eroce1/1 "$B1" retry_exceeded
	for op in send write read; do
		debug_subset "retry_exceeded_${op}_ack_loss" && continue
		rt "retry_exceeded_${op}_ack_loss" "$floor" 5000 \
			--mode retry --op "$op" --timeout 14 --retry-cnt 3 --hook "$LOSS_ACK"
	done
	moved duplicate_requests_seen eroce2/1 "$B2" duplicate_requests
	debug_subset retry_exceeded_timeout16_retry1 ||
		rt retry_exceeded_timeout16_retry1 "$(rto_floor 16 1)" 5000 \
			--mode retry --op write --timeout 16 --retry-cnt 1 --hook "$LOSS_REQ"
	debug_subset retry_exceeded_64k_write ||
		rt retry_exceeded_64k_write "$floor" 5000 \
			--mode retry --op write --size 65536 --timeout 14 --retry-cnt 3 --hook "$LOSS_REQ"
}

# While a requester retries, `rdma -dd resource show qp` shows it: a QP with
# an unacknowledged PSN (una_psn behind next_psn), its retransmit timer
# armed and retries left.  The hook samples it ten times, 0.2 s apart,
# within the 4.3 s of retries (a sample may come before the post or, on a
# slow machine, after the error; one that shows the retrying QP is enough).
test_driver_details() {
	local dump=$RDMA_TMP/qp_details

	rm -f "$dump" "$dump.done"
	rt retry_exceeded_timeout18_details "$(rto_floor 18 3)" 15000 \
		--mode retry --op send --timeout 18 --retry-cnt 3 --limit "$(tmo 20)" \
		--hook "$LOSS_REQ; (for i in \$(seq 10); do sleep 0.2; rdma -dd resource show qp link eroce1/1; done >$dump; touch $dump.done) &"
	wait_for 60 test -e "$dump.done"
	ktap_diag "$(grep -v 'lqpn 1 ' "$dump" 2>/dev/null | sort -u | head -n 4)"
	if awk '{ for (i = 1; i < NF; i++) v[$i] = $(i + 1) }
		v["drv_timer_armed"] == 1 && v["drv_una_psn"] != v["drv_next_psn"] &&
		v["drv_retry_left"] > 0 && v["drv_sq_tail"] != v["drv_sq_head"] { ok = 1 }
		{ delete v } END { exit !ok }' "$dump" 2>/dev/null; then
		ktap_ok qp_driver_details_show_retrying_qp
	else
		ktap_fail qp_driver_details_show_retrying_qp "no retrying QP in rdma -dd resource show qp"
	fi
}

test_rnr() {
	# min_rnr_timer 14 = 0.96 ms between RNR retries
	rt rnr_retry_exceeded 0 5000 --mode rnr --rnr-retry 2 --min-rnr-timer 14
	moved rnr_naks_sent eroce2/1 "$B2" rnr_naks_sent
	moved rnr_naks_rcvd eroce1/1 "$B1" rnr_naks_rcvd
	debug_subset rnr_retry_zero ||
		rt rnr_retry_zero 0 5000 --mode rnr --rnr-retry 0 --min-rnr-timer 14
	# rnr_retry 3 with min_rnr_timer 20 (7.68 ms): at least ~23 ms of waits
	debug_subset rnr_retry_timer_honoured ||
		rt rnr_retry_timer_honoured 20 5000 --mode rnr --rnr-retry 3 --min-rnr-timer 20
	# rnr_retry 7 (infinite): the SEND waits until a receive appears
	rt rnr_recover 400 10000 --mode rnr-recover --delay-ms 500 --min-rnr-timer 14
}

# A READ of 32 KiB and, in the same post, a WRITE with a wrong R_Key:
# eroce2 owes 32 read responses when the WRITE fails it; its NAK must come
# after them, so that the READ completes with its data and the WRITE with
# REM_ACCESS_ERR (not RETRY_EXC_ERR after retries, the NAK lost with the
# flush of B); remote_access_naks_sent counts that one NAK
test_fatal_behind_read() {
	local rc=0 n0 n1

	n0=$(stat_get eroce2/1 remote_access_naks_sent)
	run timeout -k 5 "$(tmo 30)" "$TOOL" --mode fatal-behind-read \
		--size 32768 --limit "$(tmo 5)" eroce1 "$G1" eroce2 "$G2" || rc=$?
	n1=$(stat_get eroce2/1 remote_access_naks_sent)
	ktap_diag "$(grep -E '^(result|FAIL)' <<<"$LAST_OUT")"
	ktap_result fatal_nak_behind_read_responses \
		"$([ $rc = 0 ] && [ $((n1 - n0)) = 1 ]; echo $?)" \
		"exit $rc, remote_access_naks_sent +$((n1 - n0)): $(tail -n 3 <<<"$LAST_OUT")"
}

ktap_plan 23
require eroce_pair_setup
require pair_gids
pair_gids
require build_tool
kmsg_mark
test_retry
test_driver_details
test_rnr
test_fatal_behind_read
ktap_diag "eroce1: $(stat_nonzero eroce1/1)"
ktap_diag "eroce2: $(stat_nonzero eroce2/1)"
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -iE "eroce.*(bug|warn)"'
ktap_finish
