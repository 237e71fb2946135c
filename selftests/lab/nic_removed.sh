#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nic_removed.sh: one host's NIC removed under traffic.  guest1 serves
# ib_write_bw (4 KiB writes for up to 150 s) to guest0's client, each
# with eroce0 on its NIC; once guest1's eroce0 has received a few hundred
# packets of it, guest1 removes its NIC from the PCI bus (echo 1 >
# /sys/bus/pci/devices/ADDR/remove: the device itself goes, as on a
# hot-unplug, not just the link), which takes the netdev and with it
# eroce0 away.  Then:
#   guest0 (the peer): its QP ends with an error completion (no ACK can
#     come: retry exceeded) and ib_write_bw exits with an error, not at
#     its end nor by its timeout, within 60 s (times the debug kernel's
#     multiplier) of the removal (its QP timeout, 0.54 s here, times 8
#     tries is ~4.5 s); eroce0 counts retry_exceeded; eroce0 itself stays,
#     its port ACTIVE, and no QP of the tool is left behind
#   guest1 (the removing host): the removal returns (within 60 s), the
#     netdev is gone, eroce0 goes (within 60 s) with its server still
#     holding the device open, and the server then ends when told to
#     (the runner's kernel log check catches a splat on either guest)
# A time bound here is an upper one on what the peer sees after the
# removal, never a speed.
# Run: selftests/run_lab.sh selftests/lab/nic_removed.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"
# shellcheck source=../lib_lab.sh
. "$(dirname "$0")/../lib_lab.sh"

DEV=eroce0
SNAP=$RDMA_TMP/nic_removed.stats
BOUND=$((60 * TIMEOUT_MULT))
# the QPs' ACK timeout, 4.096 us * 2^17 = 0.54 s (perftest's default,
# 67 ms, fails QPs spuriously on a loaded host under TCG: basic.sh)
QP_TIMEOUT=17
# packets guest1's eroce0 receives before the NIC goes
BEFORE=300
REMOVED_AT=$RDMA_TMP/removed_at
SRV_OUT=$RDMA_TMP/server.out

setup() {
	eroce_load && provider_install && lab_rdma_link "$DEV" eroce
}

# nic_pci: the sysfs directory of the NIC's PCI device (virtio-net's
# netdev hangs off a virtio device below it)
nic_pci() {
	local d
	d=$(readlink -f "/sys/class/net/$LAB_IF/device") || return
	[ -e "$d/remove" ] || d=${d%/*}
	[ -e "$d/remove" ] && [ "${d%/*}" != "$d" ] && echo "$d"
}

# rx_grew N: eroce0 received N packets since SNAP
rx_grew() {
	local d
	d=$(stat_delta "$DEV/1" "$SNAP" rx_packets 2>/dev/null) && [ "$d" -ge "$1" ]
}

# gone PID: process PID (a child of this shell) has ended
gone() {
	! kill -0 "$1" 2>/dev/null
}

# watch_removed: on guest0, in the background: the time (guest0's clock)
# guest1 said it is removing its NIC
watch_removed() {
	lab_wait removing 400 1 >/dev/null && date +%s >"$REMOVED_AT"
}

# peer_side: guest0, the client whose peer goes
peer_side() {
	local at end el status d wpid
	watch_removed &
	wpid=$!
	lab_srv_cli write_bw 1 18516 240 \
		ib_write_bw -d "$DEV" -x "$(gid_index_of "$DEV" "$LAB_IP")" -p 18516 \
		-s 4096 -D 150 -F -u "$QP_TIMEOUT"
	end=$(date +%s)
	wait_for 10 test -s "$REMOVED_AT"
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
	status=$(grep -ioE 'failed status [0-9]+|retry[a-z ]*exceeded' <<<"$LAB_OUT" | head -n 1)
	ktap_diag "guest0: ib_write_bw rc=$LAB_RC after ${LAB_SECS}s: ${status:-no error status}"
	if [ "$LAB_RC" != 0 ] && [ "$LAB_RC" != 124 ] && [ "$LAB_RC" != 137 ] &&
		grep -qiE 'completion with error|failed status' <<<"$LAB_OUT"; then
		ktap_ok error_completion
	else
		lab_srv_cli_diag
		ktap_fail error_completion "no error completion (rc=$LAB_RC)"
	fi
	at=$(cat "$REMOVED_AT" 2>/dev/null)
	if [ -n "$at" ]; then
		el=$((end - at))
		ktap_diag "guest0: the tool ended ${el}s after guest1 removed its NIC (bound ${BOUND}s)"
		ktap_result ended_in_bound "$([ "$el" -le "$BOUND" ]; echo $?)" \
			"ended ${el}s after the removal"
	else
		ktap_fail ended_in_bound "guest1 never said it removed its NIC"
	fi
	d=$(stat_delta "$DEV/1" "$SNAP" retry_exceeded) || d='?'
	ktap_diag "guest0: $(stat_changes "$DEV/1" "$SNAP")"
	ktap_result retry_exceeded_counted "$([ "$d" != '?' ] && [ "$d" -gt 0 ]; echo $?)" \
		"retry_exceeded +$d"
	# the tool's QPs are gone with it; QP1 (GSI) stays
	if port_state_is "$DEV" "4: ACTIVE" &&
		wait_for 10 eval '[ -z "$(rdma resource show qp link "$DEV/1" 2>/dev/null | grep -v "lqpn 1 ")" ]'; then
		ktap_ok eroce0_stays_clean
	else
		ktap_diag "$(port_state "$DEV"); $(rdma resource show qp link "$DEV/1" 2>&1 | head -n 4)"
		ktap_fail eroce0_stays_clean "eroce0 not ACTIVE, or QPs left behind"
	fi
}

# removing_side: guest1, the server whose NIC goes.  It runs its server
# itself (not through lab_srv_cli, which would keep it 10 s after the
# client ended): once eroce0 received BEFORE packets (at most 120 s), it
# tells guest0 "removing" and removes the NIC, then stops the server,
# which holds the removed device open.
removing_side() {
	local pci spid rpid d t0 t1
	pci=$(nic_pci) || ktap_bail "no PCI device under $LAB_IF"
	ktap_diag "guest1: $LAB_IF is PCI ${pci##*/} ($(basename "$(readlink "$pci/driver")"))"
	timeout -k 5 $((240 * TIMEOUT_MULT)) ib_write_bw -d "$DEV" \
		-x "$(gid_index_of "$DEV" "$LAB_IP")" -p 18516 -s 4096 -D 150 -F \
		-u "$QP_TIMEOUT" >"$SRV_OUT" 2>&1 &
	spid=$!
	if wait_for 60 tcp_listening "" 18516; then
		lab_signal write_bw.ready
	else
		ktap_diag "the server does not listen on port 18516"
	fi
	if wait_for 120 rx_grew "$BEFORE"; then
		ktap_ok traffic_before_removal
	else
		ktap_fail traffic_before_removal "eroce0 received fewer than $BEFORE packets"
	fi
	d=$(stat_delta "$DEV/1" "$SNAP" rx_packets)
	lab_signal removing
	t0=$SECONDS
	echo 1 >"$pci/remove" &
	rpid=$!
	wait_for 60 gone "$rpid"
	t1=$SECONDS
	ktap_diag "guest1: rx_packets +$d, then the NIC removed in $((t1 - t0)) s"
	if gone "$rpid" && wait "$rpid" && [ ! -e "/sys/class/net/$LAB_IF" ]; then
		ktap_ok nic_removed
	else
		ktap_fail nic_removed "the removal did not return in 60 s or failed, or $LAB_IF is still there"
	fi
	if wait_for 60 rdma_dev_gone "$DEV"; then
		ktap_ok eroce0_gone
	else
		ktap_diag "$(rdma link show 2>&1 | head -n 3)"
		ktap_fail eroce0_gone "eroce0 still there 60 s after its NIC went"
	fi
	# the server, its device gone under it, ends when told to: nothing
	# holds it in the kernel
	kill -TERM "$spid" 2>/dev/null
	if wait_for 30 gone "$spid"; then
		ktap_ok server_ended
	else
		ktap_fail server_ended "ib_write_bw still there 30 s after SIGTERM"
	fi
	wait "$spid"
	d=$(tail -n 2 "$SRV_OUT" | tr '\n' ' ')
	ktap_diag "guest1: the server's output: ${d:-none}"
	lab_signal write_bw.done
}

ktap_plan 7
[ "$LAB_N" = 2 ] || ktap_bail "nic_removed.sh needs 2 guests, has $LAB_N"
lab_setup_ktap
require setup
ktap_ok eroce_link
# shellcheck disable=SC2086  # $PING may be "busybox ping"
if lab_barrier up >/dev/null && $PING -c 3 -W 5 "$(lab_ip "$(lab_peer)")" >/dev/null; then
	ktap_ok peer_reachable
else
	ktap_bail "peer $(lab_ip "$(lab_peer)") not reachable"
fi
stat_snap "$DEV/1" "$SNAP"
if [ "$LAB_I" = 0 ]; then
	peer_side
else
	removing_side
fi
ktap_finish
