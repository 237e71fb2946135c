#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
# lab-switch: ip link set $TAP0 mtu 1000
# lab-switch: ip link set $TAP1 mtu 1000
#
# switch_mtu.sh: a switch whose ports have a smaller MTU (1000) than the
# hosts' NICs (1500), set through the runner's switch hook (the
# "lab-switch" lines above; selftests/run_lab.sh).  The bridge drops every
# frame longer than its port's MTU and says nothing (no ICMP at layer 2),
# so eroce0's 1024-byte path MTU black-holes its full-size packets.  It
# must not do so silently:
#   - frames up to 1000 bytes pass, longer ones not (the switch is set)
#   - ibv_rc_pingpong -c with 512-byte messages (one packet each) passes
#   - with 4 KiB messages (1024-byte packets) the client, guest1, ends in
#     bounded time (60 s) with an error, "retry counter exceeded", instead
#     of hanging, and eroce0 counts retry_exceeded
# Run: selftests/run_lab.sh selftests/lab/switch_mtu.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"
# shellcheck source=../lib_lab.sh
. "$(dirname "$0")/../lib_lab.sh"

DEV=eroce0
SNAP=$RDMA_TMP/switch_mtu.stats
BOUND=60

setup() {
	eroce_load && provider_install && lab_rdma_link "$DEV" eroce
}

# ping_size SIZE: one ping of SIZE bytes of payload to the peer answered
ping_size() {
	# shellcheck disable=SC2086  # $PING may be "busybox ping"
	$PING -c 2 -W 3 -s "$1" "$(lab_ip "$(lab_peer)")" >/dev/null 2>&1
}

switch_set() {
	# 900 + 28 bytes of headers fit in 1000; 1400 + 28 do not
	if ping_size 900 && ! ping_size 1400; then
		ktap_ok switch_drops_long_frames
	else
		ktap_fail switch_drops_long_frames "the switch's MTU is not 1000"
	fi
}

pingpong() {
	local name=$1 size=$2 gid
	gid=$(gid_index_of "$DEV" "$LAB_IP")
	lab_srv_cli "$name" 0 18515 "$3" \
		ibv_rc_pingpong -d "$DEV" -g "$gid" -p 18515 -s "$size" -n 20 -c
}

small() {
	if pingpong small 512 120 && grep -q "bytes in" <<<"$LAB_OUT"; then
		ktap_ok small_messages_pass
	else
		lab_srv_cli_diag
		ktap_fail small_messages_pass "ibv_rc_pingpong -s 512 rc=$LAB_RC"
	fi
}

# large: on the client, an error within BOUND; the server only waits
large() {
	pingpong large 4096 "$BOUND"
	ktap_diag "guest$LAB_I: rc=$LAB_RC after ${LAB_SECS}s: $(grep -iE 'fail|error|exceeded' <<<"$LAB_OUT" | head -n 2 | tr '\n' ' ')"
	if [ "$LAB_I" = 0 ]; then
		ktap_ok large_messages_fail_visibly
	elif [ "$LAB_RC" != 0 ] && [ "$LAB_RC" != 124 ] &&
	     grep -qi 'retry counter exceeded' <<<"$LAB_OUT"; then
		ktap_ok large_messages_fail_visibly
	else
		lab_srv_cli_diag
		ktap_fail large_messages_fail_visibly "no retry error within ${BOUND}s (rc=$LAB_RC)"
	fi
}

counted() {
	local d
	d=$(stat_delta "$DEV/1" "$SNAP" retry_exceeded) || d='?'
	ktap_diag "guest$LAB_I: $(stat_changes "$DEV/1" "$SNAP")"
	if [ "$LAB_I" = 0 ] || { [ "$d" != '?' ] && [ "$d" -gt 0 ]; }; then
		ktap_ok retry_exceeded_counted
	else
		ktap_fail retry_exceeded_counted "retry_exceeded +$d"
	fi
}

ktap_plan 7
[ "$LAB_N" = 2 ] || ktap_bail "switch_mtu.sh needs 2 guests, has $LAB_N"
lab_setup_ktap
require setup
ktap_ok eroce_link
lab_barrier up >/dev/null || ktap_bail "the peer did not come up"
ktap_ok peer_up
switch_set
stat_snap "$DEV/1" "$SNAP"
small
large
counted
ktap_finish
