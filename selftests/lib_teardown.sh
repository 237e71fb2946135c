# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# lib_teardown.sh: events under traffic, cycle after cycle, for
# teardown_cycles.sh and teardown_netdev.sh; source it after lib.sh and
# lib_rdma.sh.  The script defines event_NAME for each event and
# restore() (both links back after an event took them away), then calls
# `cycles NAME` per event: TEARDOWN_CYCLES rounds (default 1: `make
# soak` runs ten per event, selftests/soak/soak.sh) of
#   - eroce_integrity (SEND, WRITE and READ, every byte checked, 4 QPs)
#     and ib_write_bw over rdma_cm, flowing from eroce1 (ns1) to eroce2
#     (ns2): RDMA on the GIDs of $RDMA_A1 and $RDMA_A2, the integrity
#     tool's TCP control connection to $CTL_A2;
#   - event_NAME, in the background (removing a device waits for rdma_cm's
#     users, see tools_end);
#   - every tool ended, then restore;
# and four results: NAME_tools_ended (every tool ended by itself within
# a bound: an error, a flush or its own deadline; never stopped by the
# test, but for ib_write_bw's passive server), NAME_no_corruption (the
# integrity tool never found a wrong byte: exit status 1),
# NAME_objects_released (the devices hold the objects they held before,
# $BASE) and NAME_recovers (a fresh integrity run moves every byte).
# An event that kills tools names them in $KILLED (their SIGKILL status is
# then what they must end with).

TOOL="$EROCE_ROOT/selftests/tools/eroce_integrity"
CYCLES=${TEARDOWN_CYCLES:-1}
# perftest's -D; integrity's deadline (it then exits 3), counted from its
# start, is twice that (ITMO): the event comes once the traffic flows,
# which takes a while on the debug kernel.  An event that kills the
# integrity client must find it alive, so for it the deadline is much
# longer: the kill ends the server at once ("peer went away"), where
# after the other events it waits for its deadline
RUN=$(tmo 6)
ITMO=$((2 * RUN))
# how long the tools may take to end after the event (beyond their run)
END=$(tmo 60)
PORT=18730
OUT=/tmp/teardown_cycles
mkdir -p "$OUT"
RDMA_A1=198.18.0.1
RDMA_A2=198.18.0.2
CTL_A2=198.18.0.2
PIDS=()
NAMES=()
KILLED=

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

# bw_connected: ib_write_bw's client QP on eroce1 is connected (RTS) and
# has taken work from its send queue (drv_sq_head above 0), which
# perftest posts only once rdma_cm's ESTABLISHED event reached it.  The
# events strike traffic, not perftest's connection setup: perftest 4.5
# retries a failed rdma_cm connection on the cm_ids it has just
# destroyed, and dies of that in librdmacm (rdma_resolve_addr on a freed
# id, a SIGSEGV whose kernel "traps:" line the log check reports).  A QP
# in RTS alone left a window: one of `make soak`'s ten addr cycles struck
# between the QP's RTS and the ESTABLISHED event.
# shellcheck disable=SC2317  # called through wait_for
bw_connected() {
	rdma -dd resource show qp 2>/dev/null |
		awk '$1 == "link" && $2 ~ /^eroce1\// && / state RTS / &&
			/ comm ib_write_bw / {
				for (i = 1; i < NF; i++)
					if ($i == "drv_sq_head" && $(i + 1) > 0)
						ok = 1
			}
			END { exit !ok }'
}

# start_traffic: the integrity tool and ib_write_bw (rdma_cm), flowing,
# and ib_write_bw connected
start_traffic() {
	local g1 g2

	PIDS=()
	NAMES=()
	g1=$(gid_index_of eroce1 "$RDMA_A1") && g2=$(gid_index_of eroce2 "$RDMA_A2") ||
		return 1
	launch integrity_server "$NS2" "$TOOL" -d eroce2 -g "$g2" -p "$PORT" \
		-t "$ITMO"
	wait_for 30 tcp_listening "$NS2" "$PORT" || return 1
	launch integrity_client "$NS1" "$TOOL" -d eroce1 -g "$g1" -p "$PORT" \
		-t "$ITMO" -o send,write,read -b 1G "$CTL_A2"
	launch bw_server "$NS2" ib_write_bw -d eroce2 -R -D "$RUN" -p $((PORT + 1))
	wait_for 30 cm_listening $((PORT + 1)) || return 1
	launch bw_client "$NS1" ib_write_bw -d eroce1 -R -D "$RUN" -p $((PORT + 1)) \
		"$RDMA_A2"
	PORT=$((PORT + 2))
	wait_for "$(tmo 30)" bw_connected || return 1
	FLOW_MARK=$(stat_get eroce2/1 rx_packets) || return 1
	wait_for 20 flowing
}

# ended PID: the process PID has ended
# shellcheck disable=SC2317  # called through wait_for
ended() {
	! kill -0 "$1" 2>/dev/null
}

# killed NAME: the event kills the tool NAME
killed() {
	[[ " $KILLED " == *" $1 "* ]]
}

# tools_end: wait for every tool.  HUNG lists those the test's timeout
# had to stop, CRASHED those a fault signal ended (SIGSEGV, SIGABRT, SIGBUS,
# SIGFPE, SIGILL), CORRUPT those that found a wrong byte, STATUS every exit
# status.  ib_write_bw's server is passive: when its peer vanished
# without a disconnect reaching it (its address or device gone), it waits
# for the peer's last message, as the verbs let it, and ignores rdma_cm's
# DEVICE_REMOVAL (so `rmmod` and `rdma link delete` wait for it, as
# rdma_cm makes them).  Once the others ended, it gets 5 s, then it is
# stopped and listed in WAITED instead.
tools_end() {
	local i rc name

	for i in "${!PIDS[@]}"; do
		name=${NAMES[$i]}
		[ "$name" = bw_server ] && continue
		rc=0
		wait "${PIDS[$i]}" || rc=$?
		if killed "$name"; then
			# timeout's 137 says nothing about a tool the event killed
			[ "$rc" = 137 ] ||
				ktap_diag "$name ended ($rc) before the kill: $(tail -n 3 "$OUT/$name")"
		else
			case "$rc" in
			124|137) HUNG+="$name " ;;
			# a signal of its own fault: a crash, never an outcome
			132|134|135|136|139) CRASHED+="$name " ;;
			esac
			case "$name:$rc" in
			integrity_*:1) CORRUPT+="$name " ;;
			esac
			case "$name:$rc" in
			integrity_*:[023]|bw_*:[01]) ;;
			*) ktap_diag "$name exit $rc: $(tail -n 3 "$OUT/$name")" ;;
			esac
		fi
		STATUS+="$name=$rc "
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

# after_run: a fresh integrity run between the pair moves every byte
after_run() {
	local g1 g2

	g1=$(gid_index_of eroce1 198.18.0.1)
	g2=$(gid_index_of eroce2 198.18.0.2)
	ns2 timeout "$(tmo 120)" "$TOOL" -d eroce2 -g "$g2" -p "$PORT" \
		-t "$(tmo 100)" >"$OUT/after_server" 2>&1 &
	wait_for 30 tcp_listening "$NS2" "$PORT"
	if ns1 timeout "$(tmo 120)" "$TOOL" -d eroce1 -g "$g1" -p "$PORT" \
		-t "$(tmo 100)" -o send,write,read -b 256k 198.18.0.2 \
		>"$OUT/after_client" 2>&1 && wait $!; then
		PORT=$((PORT + 1))
		return 0
	fi
	wait
	ktap_diag "$(sed 's/^/client: /' "$OUT/after_client"; sed 's/^/server: /' "$OUT/after_server")"
	PORT=$((PORT + 1))
	return 1
}

# cycles EVENT: CYCLES rounds of traffic and EVENT, then the verdicts.
# $KILLED and $ITMO may be set for the event by the caller
cycles() {
	local ev=$1 c start ended_in worst=0 evpid
	EVENT_FAILED=
	HUNG=
	CRASHED=
	WAITED=
	CORRUPT=
	STATUS=

	for ((c = 1; c <= CYCLES; c++)); do
		if ! start_traffic; then
			ktap_diag "$ev: cycle $c: the traffic did not start"
			STATUS+="(no traffic in cycle $c) "
		fi
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
	ktap_result "${ev}_tools_ended" "$([ -z "$HUNG" ] && [ -z "$CRASHED" ] &&
		[ -z "$EVENT_FAILED" ] && [[ "$STATUS" != *"no traffic"* ]]; echo $?)" \
		"killed by the test's timeout: ${HUNG:-none}; crashed: ${CRASHED:-none}; event failed: ${EVENT_FAILED:-no}; $STATUS"
	ktap_result "${ev}_no_corruption" "$([ -z "$CORRUPT" ]; echo $?)" \
		"wrong bytes found by $CORRUPT"
	if wait_for 10 objects_are "$BASE"; then
		ktap_ok "${ev}_objects_released"
	else
		ktap_fail "${ev}_objects_released" \
			"before: $(tr '\n' ' ' <<<"$BASE"); now: $(objects | tr '\n' ' ')"
	fi
	if after_run; then
		ktap_ok "${ev}_recovers"
	else
		ktap_fail "${ev}_recovers" "integrity after the event failed"
	fi
}
