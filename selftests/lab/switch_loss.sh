#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
# lab-switch-guest: yes
#
# switch_loss.sh: loss on the switch, with each of eroce's loss-recovery
# modes (Documentation/admin-guide.rst, loss_recovery).  The switch is a
# guest of its own (selftests/run_lab.sh, "# lab-switch-guest: yes"):
# its port towards guest1 drops 3% of what it sends (netem loss), nothing
# else on the path is impaired.  guest0 (198.18.10.1) is the requester,
# guest1 (198.18.10.2) the responder: guest0's requests cross the lossy
# port, guest1's ACKs and NAKs do not.  For gbn, tlp and sr in turn (the
# same mode on both eroce0s, rto_backoff 2: a loaded host that stalls a
# guest must not run a QP out of its 7 retries of 67 ms), guest0 runs
# selftests/tools/eroce_integrity against guest1, one QP:
#   - bulk: 1 MiB of SENDs and 1 MiB of RDMA WRITEs, 16 in flight
#   - tails: 8 KiB of SENDs of 1..64 bytes one at a time (each message a
#     tail: nothing follows it until it is acknowledged)
# Every byte is checked on both sides (each requires "ok N bytes checked"
# for its exact N), each transfer ends within its deadline (-t, 100 s)
# and no QP ran out of retries.  The counters show the recovery:
#   guest0  seq_err_naks_rcvd and retransmits_by_nak moved (a packet went
#           missing ahead of another: the path does not reorder, so it
#           was lost) and retransmitted_packets; gbn: no tlp_probes and
#           no selective_retransmits; tlp: tlp_probes moved, no
#           selective_retransmits; sr: selective_retransmits moved.
#           Timeouts and probes are not evidence of loss: under TCG a
#           QP's 67 ms timer and two round trips expire without it
#           (measured without loss: retransmit_timeouts +5..12,
#           tlp_probes +105, retransmitted_packets +21..113)
#   guest1  seq_err_naks_sent moved (a request after a hole); sr:
#           ooo_packets_placed moved (it kept packets after a hole)
#   switch  its netem's drop counter moved during each mode's transfers
#           (the loss was real), and its drops are at most a tenth of
#           what it sent
# No mode is compared with another.  The switch learns of each mode's
# start and end through the shared folder (MODE.set, MODE.armed,
# MODE.done) and reports its drops to the hosts (MODE.dropped).
# Run: selftests/run_lab.sh selftests/lab/switch_loss.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"
# shellcheck source=../lib_lab.sh
. "$(dirname "$0")/../lib_lab.sh"

DEV=eroce0
MODES="gbn tlp sr"
LOSS=3%
SNAP=$RDMA_TMP/switch_loss.stats
INTEGRITY=$EROCE_ROOT/selftests/tools/eroce_integrity
BULK=$(debug_scaled 1048576)
TAILS=$(debug_scaled 8192)
# eroce_integrity's deadline, s (times the debug multiplier)
XFER=100
PORT=18600
DROPS="rx_drop_truncated rx_drop_icrc rx_drop_bad_header rx_drop_bad_opcode"

# ---- the switch --------------------------------------------------------------

# netem_stat FIELD: the switch's netem counter FIELD (dropped, sent) on the
# port towards guest1
netem_stat() {
	lab_qdisc_stat "$PORT1" netem "$1"
}

switch_main() {
	local m d0 p0 d p
	ktap_plan $((2 + 2 * 3))
	lab_setup_ktap
	PORT1=$(lab_switch_port 1)
	modprobe -q sch_netem
	if run tc qdisc add dev "$PORT1" root netem loss "$LOSS"; then
		ktap_diag "switch: $(tc qdisc show dev "$PORT1")"
		ktap_ok loss_set
	else
		ktap_diag "$LAST_OUT"
		ktap_bail "netem loss $LOSS on $PORT1 failed"
	fi
	lab_switch_ready
	for m in $MODES; do
		# the first: the hosts load eroce after the switch came up
		if ! lab_wait "$m.set" 300 >/dev/null; then
			ktap_fail "${m}_switch_dropped" "the hosts did not start $m"
			ktap_fail "${m}_switch_dropped_bounded" "the hosts did not start $m"
			continue
		fi
		d0=$(netem_stat dropped) p0=$(netem_stat sent)
		lab_signal "$m.armed"
		lab_wait "$m.done" $((3 * XFER)) >/dev/null ||
			ktap_diag "$m: the hosts did not say they were done"
		d=$(($(netem_stat dropped) - d0)) p=$(($(netem_stat sent) - p0))
		lab_signal "$m.dropped" "$d of $((d + p))"
		ktap_diag "$m: the switch dropped $d of $((d + p)) packets towards guest1"
		ktap_result "${m}_switch_dropped" "$([ "$d" -gt 0 ]; echo $?)" \
			"netem dropped nothing during $m"
		ktap_result "${m}_switch_dropped_bounded" \
			"$([ $((10 * d)) -le $((d + p)) ]; echo $?)" \
			"dropped $d of $((d + p)), more than a tenth for loss $LOSS"
	done
	ktap_finish
}

# ---- the hosts ---------------------------------------------------------------

# shellcheck disable=SC2317  # run by require
setup() {
	eroce_load && provider_install && lab_rdma_link "$DEV" eroce
}

# mode_set MODE: loss_recovery MODE and rto_backoff 2 on this guest's eroce0
mode_set() {
	local t=$IBSYS/$DEV/tuning
	echo default >"$t/profile" && echo "$1" >"$t/loss_recovery" &&
		echo 2 >"$t/rto_backoff"
}

# integrity NAME WANT ARGS...: eroce_integrity from guest0 (the client,
# the requester) to guest1, ARGS the client's; passes when this side
# checked WANT ("send:B write:B", each op and its bytes)
integrity() {
	local name=$1 want=$2 gid w bad=
	shift 2
	gid=$(gid_index_of "$DEV" "$LAB_IP")
	PORT=$((PORT + 1))
	lab_srv_cli "$name" 1 "$PORT" $((XFER + 20)) \
		"$INTEGRITY" -d "$DEV" -g "$gid" -p "$PORT" -t "$(tmo "$XFER")" -- \
		"$INTEGRITY" -d "$DEV" -g "$gid" -p "$PORT" -t "$(tmo "$XFER")" "$@"
	ktap_diag "$name: $(grep -E '^(send|write):' <<<"$LAB_OUT" | tr '\n' ';')"
	for w in $want; do
		grep -q "^${w%%:*}: ok ${w#*:} bytes checked" <<<"$LAB_OUT" ||
			bad+="no \"${w%%:*}: ok ${w#*:} bytes checked\"; "
	done
	[ "$LAB_RC" = 0 ] || bad+="eroce_integrity rc=$LAB_RC; "
	[ -z "$bad" ] || lab_srv_cli_diag
	ktap_result "$name" "$([ -z "$bad" ]; echo $?)" "$bad"
}

# delta COUNTER: its change on eroce0 since SNAP ('?' when unknown)
delta() {
	stat_delta "$DEV/1" "$SNAP" "$1" 2>/dev/null || echo '?'
}

# gt0 COUNTER...: the sum of their deltas is above 0
gt0() {
	local c d s=0
	for c in "$@"; do
		d=$(delta "$c")
		[ "$d" != '?' ] || return 1
		s=$((s + d))
	done
	[ "$s" -gt 0 ]
}

# eq0 COUNTER: its delta is 0
eq0() {
	[ "$(delta "$1")" = 0 ]
}

# recovery MODE: what this guest's counters must show for MODE
recovery() {
	local m=$1 c bad=
	for c in $DROPS retry_exceeded; do
		eq0 "$c" || bad+="$c +$(delta "$c"); "
	done
	if [ "$LAB_I" = 0 ]; then
		for c in seq_err_naks_rcvd retransmits_by_nak retransmitted_packets; do
			gt0 "$c" || bad+="no $c; "
		done
		case "$m" in
		gbn)
			eq0 tlp_probes || bad+="tlp_probes +$(delta tlp_probes) with gbn; "
			eq0 selective_retransmits ||
				bad+="selective_retransmits +$(delta selective_retransmits) with gbn; " ;;
		tlp)
			gt0 tlp_probes || bad+="no tlp_probes; "
			eq0 selective_retransmits ||
				bad+="selective_retransmits +$(delta selective_retransmits) with tlp; " ;;
		sr)
			gt0 selective_retransmits || bad+="no selective_retransmits; " ;;
		esac
	else
		gt0 seq_err_naks_sent || bad+="no seq_err_naks_sent; "
		[ "$m" != sr ] || gt0 ooo_packets_placed || bad+="no ooo_packets_placed; "
	fi
	ktap_diag "$m: guest$LAB_I $(stat_changes "$DEV/1" "$SNAP")"
	ktap_result "${m}_recovery_counted" "$([ -z "$bad" ]; echo $?)" "$bad"
}

# one_mode MODE: both transfers under MODE, then its counters
one_mode() {
	local m=$1
	if ! mode_set "$m"; then
		ktap_fail "${m}_bulk" "loss_recovery $m not set"
		ktap_fail "${m}_tails" "loss_recovery $m not set"
		ktap_fail "${m}_recovery_counted" "loss_recovery $m not set"
		return
	fi
	stat_snap "$DEV/1" "$SNAP"
	lab_signal "$m.set"
	lab_wait "$m.armed" "" "$LAB_SWITCH" >/dev/null ||
		ktap_diag "$m: no word from the switch"
	integrity "${m}_bulk" "send:$BULK write:$BULK" -q 1 -w 16 -o send,write -b "$BULK"
	integrity "${m}_tails" "send:$TAILS" -q 1 -w 1 -o send -S 64 -b "$TAILS" -s 7
	lab_signal "$m.done"
	ktap_diag "$m: switch dropped $(lab_get "$m.dropped" "$LAB_SWITCH" 60 2>/dev/null || echo '?')"
	recovery "$m"
}

host_main() {
	local m
	ktap_plan $((4 + 3 * 3))
	[ "$LAB_N" = 2 ] || ktap_bail "switch_loss.sh needs 2 hosts, has $LAB_N"
	[ -n "$LAB_SWITCH" ] || ktap_bail "switch_loss.sh needs a switch guest"
	lab_setup_ktap
	require setup
	ktap_ok eroce_link
	lab_switch_wait_ktap
	# shellcheck disable=SC2086  # $PING may be "busybox ping"
	if lab_barrier up >/dev/null && $PING -c 3 -W 5 "$(lab_ip "$(lab_peer)")" >/dev/null; then
		ktap_ok peer_reachable
	else
		ktap_bail "peer $(lab_ip "$(lab_peer)") not reachable through the switch"
	fi
	for m in $MODES; do
		one_mode "$m"
	done
	ktap_finish
}

if lab_is_switch; then
	switch_main
else
	host_main
fi
