#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
#
# teardown_cycles.sh: the network or the device taken away under traffic,
# again and again.  Each event runs TEARDOWN_CYCLES times (default 2, 1
# on the debug kernel; set it in the guest to run more) while
# eroce_integrity (SEND, WRITE and READ, every byte checked, 4 QPs) and
# ib_write_bw over rdma_cm run between eroce1 and eroce2:
#   mtu        both veths' MTU below the path's packets for 2 s
#   flap       veth1 down for 2 s
#   addr       veth1's addresses flushed, back after 2 s
#   kill       the integrity client killed (SIGKILL) with work posted
#   link_del   `rdma link delete eroce1`, then added again
#   rmmod      `rmmod eroce`, then loaded and both links added again
# Per event: every tool ended by itself within a bound (an error, a flush
# or its own deadline; never stopped by the test, but for ib_write_bw's
# passive server: see tools_end), the integrity tool never found a wrong
# byte (exit status 1), the devices hold the objects they held before the
# traffic once the tools are gone, and a fresh integrity run afterwards
# moves every byte.  (teardown.sh takes the addresses and then the
# namespaces away once, with rping.)
#
#   ns1: veth1 198.18.0.1 (eroce1) <-> ns2: veth2 198.18.0.2 (eroce2)
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_integrity"
CYCLES=${TEARDOWN_CYCLES:-2}
[ "$DEBUG_KERNEL" = 1 ] && CYCLES=${TEARDOWN_CYCLES:-1}
# perftest's -D; integrity's deadline (it then exits 3), counted from its
# start, is twice that (ITMO): the event comes once the traffic flows,
# which takes a while on the debug kernel.  The kill must find the client
# alive, so for it the deadline is much longer: the kill ends the server
# at once ("peer went away"), where after the other events it waits for
# its deadline
RUN=$(tmo 6)
ITMO=$((2 * RUN))
# how long the tools may take to end after the event (beyond their run)
END=$(tmo 60)
PORT=18730
OUT=/tmp/teardown_cycles
mkdir -p "$OUT"
PIDS=()
NAMES=()
KILLED=

# objects: what the eroce devices hold, as `rdma resource` counts it
objects() {
	rdma resource show 2>/dev/null | grep -E '^[0-9]+: eroce[12]:' |
		sed 's/^[0-9]*: //' | sort
}

# objects_are COUNTS: the devices hold COUNTS (as objects prints them)
# shellcheck disable=SC2317  # called through wait_for
objects_are() {
	[ "$(objects)" = "$1" ]
}

# flowing: eroce2 received 500 packets more than at the last call
# shellcheck disable=SC2317  # called through wait_for
flowing() {
	local n
	n=$(stat_get eroce2/1 rx_packets) || return 1
	[ "$n" -gt $((FLOW_MARK + 500)) ]
}

# launch NAME NS CMD...: CMD in NS in the background, under a timeout
# that only a hung tool reaches
launch() {
	local name=$1 ns=$2; shift 2
	# in a subshell whose stderr (bash's notice of a tool killed by a
	# signal) stays out of the KTAP
	(ip netns exec "$ns" timeout -k 5 $((ITMO + END)) "$@" \
		>"$OUT/$name" 2>&1; exit $?) 2>/dev/null &
	PIDS+=($!)
	NAMES+=("$name")
}

# start_traffic: the integrity tool and ib_write_bw (rdma_cm), flowing
start_traffic() {
	local g1 g2

	PIDS=()
	NAMES=()
	g1=$(gid_index_of eroce1 198.18.0.1) && g2=$(gid_index_of eroce2 198.18.0.2) ||
		return 1
	launch integrity_server "$NS2" "$TOOL" -d eroce2 -g "$g2" -p "$PORT" \
		-t "$ITMO"
	wait_for 30 tcp_listening "$NS2" "$PORT" || return 1
	launch integrity_client "$NS1" "$TOOL" -d eroce1 -g "$g1" -p "$PORT" \
		-t "$ITMO" -o send,write,read -b 1G 198.18.0.2
	launch bw_server "$NS2" ib_write_bw -d eroce2 -R -D "$RUN" -p $((PORT + 1))
	wait_for 30 cm_listening $((PORT + 1)) || return 1
	launch bw_client "$NS1" ib_write_bw -d eroce1 -R -D "$RUN" -p $((PORT + 1)) \
		198.18.0.2
	PORT=$((PORT + 2))
	FLOW_MARK=$(stat_get eroce2/1 rx_packets) || return 1
	wait_for 20 flowing
}

# ended PID: the process PID has ended
# shellcheck disable=SC2317  # called through wait_for
ended() {
	! kill -0 "$1" 2>/dev/null
}

# tools_end: wait for every tool.  HUNG lists those the test's timeout
# had to stop, CORRUPT those that found a wrong byte, STATUS every exit
# status.  ib_write_bw's server is passive: when its peer vanished
# without a disconnect reaching it (its address or device gone), it waits
# for the peer's last message, as the verbs let it, and ignores rdma_cm's
# DEVICE_REMOVAL (so `rmmod` and `rdma link delete` wait for it, as
# rdma_cm makes them).  Once the others ended, it gets 5 s, then it is
# stopped and listed in WAITED instead.
tools_end() {
	local i rc

	for i in "${!PIDS[@]}"; do
		[ "${NAMES[$i]}" = bw_server ] && continue
		rc=0
		wait "${PIDS[$i]}" || rc=$?
		# a tool event_kill killed: timeout's 137 says nothing
		case "${NAMES[$i]}:$rc" in
		"$KILLED":137) ;;
		*:124|*:137) HUNG+="${NAMES[$i]} " ;;
		esac
		case "${NAMES[$i]}:$rc" in
		integrity_*:1) CORRUPT+="${NAMES[$i]} " ;;
		esac
		[ "${NAMES[$i]}" != "$KILLED" ] || [ "$rc" = 137 ] ||
			ktap_diag "$KILLED ended ($rc) before the kill: $(tail -n 3 "$OUT/$KILLED")"
		case "${NAMES[$i]}:$rc" in
		"$KILLED":137|integrity_*:[023]|bw_*:[01]) ;;
		*) ktap_diag "${NAMES[$i]} exit $rc: $(tail -n 3 "$OUT/${NAMES[$i]}")" ;;
		esac
		STATUS+="${NAMES[$i]}=$rc "
	done
	for i in "${!PIDS[@]}"; do
		[ "${NAMES[$i]}" = bw_server ] || continue
		if ! wait_for 5 ended "${PIDS[$i]}"; then
			pkill -TERM -P "${PIDS[$i]}"
			WAITED+="bw_server "
		fi
		rc=0
		wait "${PIDS[$i]}" || rc=$?
		STATUS+="bw_server=$rc "
	done
}

# restore: both links back after an event took one or both away
restore() {
	eroce_load || return 1
	rdma_dev_exists eroce1 || ns1 rdma link add eroce1 type eroce netdev veth1 ||
		return 1
	rdma_dev_exists eroce2 || ns2 rdma link add eroce2 type eroce netdev veth2 ||
		return 1
	eroce_links_ready
}

# ---- the events -----------------------------------------------------------------

event_mtu() {
	ns1 ip link set veth1 mtu 1000
	ns2 ip link set veth2 mtu 1000
	sleep 2
	ns1 ip link set veth1 mtu 1500
	ns2 ip link set veth2 mtu 1500
}

event_flap() {
	ns1 ip link set veth1 down
	sleep 2
	ns1 ip link set veth1 up
}

event_addr() {
	ns1 ip addr flush dev veth1
	sleep 2
	addr_add "$NS1" veth1 198.18.0.1/24 2001:db8::1/64
}

event_kill() {
	pkill -KILL -f "eroce_integrity -d eroce1 "
}

event_link_del() {
	rdma link delete eroce1
}

event_rmmod() {
	eroce_unload
}

# cycles EVENT: CYCLES rounds of traffic and EVENT, then the verdicts
cycles() {
	local ev=$1 c start ended_in worst=0 g1 g2 evpid
	EVENT_FAILED=
	HUNG=
	WAITED=
	CORRUPT=
	STATUS=

	# the tool event_kill kills (events run in a subshell)
	KILLED=
	ITMO=$((2 * RUN))
	if [ "$ev" = kill ]; then
		KILLED=integrity_client
		ITMO=$((RUN + END / 2))
	fi
	for ((c = 1; c <= CYCLES; c++)); do
		if ! start_traffic; then
			ktap_diag "$ev: cycle $c: the traffic did not start"
			STATUS+="(no traffic in cycle $c) "
		fi
		# in the background: removing a device waits for rdma_cm's
		# users (see tools_end)
		"event_$ev" &
		evpid=$!
		start=$SECONDS
		tools_end
		ended_in=$((SECONDS - start))
		wait "$evpid" || EVENT_FAILED+="cycle $c "
		[ "$ended_in" -gt "$worst" ] && worst=$ended_in
		restore || ktap_diag "$ev: cycle $c: the links did not come back"
	done
	ktap_diag "$ev: $CYCLES cycles, the tools ended within ${worst}s of the event; exit statuses: $STATUS"
	[ -z "$WAITED" ] || ktap_diag "$ev: stopped waiting for a vanished peer: $WAITED"
	[ -z "$EVENT_FAILED" ] || ktap_diag "$ev: the event itself failed in $EVENT_FAILED"
	ktap_result "${ev}_tools_ended" "$([ -z "$HUNG" ] && [ -z "$EVENT_FAILED" ] &&
		[[ "$STATUS" != *"no traffic"* ]]; echo $?)" \
		"killed by the test's timeout: ${HUNG:-none}; event failed: ${EVENT_FAILED:-no}; $STATUS"
	ktap_result "${ev}_no_corruption" "$([ -z "$CORRUPT" ]; echo $?)" \
		"wrong bytes found by $CORRUPT"
	if wait_for 10 objects_are "$BASE"; then
		ktap_ok "${ev}_objects_released"
	else
		ktap_fail "${ev}_objects_released" \
			"before: $(tr '\n' ' ' <<<"$BASE"); now: $(objects | tr '\n' ' ')"
	fi
	g1=$(gid_index_of eroce1 198.18.0.1)
	g2=$(gid_index_of eroce2 198.18.0.2)
	ns2 timeout "$(tmo 120)" "$TOOL" -d eroce2 -g "$g2" -p "$PORT" \
		-t "$(tmo 100)" >"$OUT/after_server" 2>&1 &
	wait_for 30 tcp_listening "$NS2" "$PORT"
	if ns1 timeout "$(tmo 120)" "$TOOL" -d eroce1 -g "$g1" -p "$PORT" \
		-t "$(tmo 100)" -o send,write,read -b 256k 198.18.0.2 \
		>"$OUT/after_client" 2>&1 && wait $!; then
		ktap_ok "${ev}_recovers"
	else
		wait
		ktap_diag "$(sed 's/^/client: /' "$OUT/after_client"; sed 's/^/server: /' "$OUT/after_server")"
		ktap_fail "${ev}_recovers" "integrity after the event failed"
	fi
	PORT=$((PORT + 1))
}

ktap_plan 24
[ -x "$TOOL" ] || ktap_bail "$TOOL not built (make -C selftests/tools)"
require eroce_pair_setup
BASE=$(objects)
for ev in mtu flap addr kill link_del rmmod; do
	cycles "$ev"
done
ktap_finish
