#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317  # event_* and restore: called by cycles (lib_teardown.sh)
# vm-timeout: 600
#
# teardown_cycles.sh: the network or the device taken away under traffic,
# again and again.  Each event runs TEARDOWN_CYCLES times (default 1;
# `make soak` runs ten; set it in the guest to run more) while
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
# Then idle_poller: a process whose only QP waits for the ACK of a SEND
# that no one will answer (a QPN eroce2 does not hold; the ACK timeout
# is 67 s, so its retries would take minutes) and polls its CQ, while
# its device is deleted.  Its poll must fail (EIO, the CQ's ring marked
# dead) within a bound, and so must its next post, instead of the CQ
# looking empty for good.
#
#   ns1: veth1 198.18.0.1 (eroce1) <-> ns2: veth2 198.18.0.2 (eroce2)
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"
# shellcheck source=../lib_teardown.sh
. "$(dirname "$0")/../lib_teardown.sh"

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

# ---- a device deleted under a process that only polls ---------------------------

# poller_say LINE: send LINE to the poller; its answer in $POLLER_LINE
poller_say() {
	echo "$1" >&"${POLLER[1]}" &&
		read -r -t "$(tmo 60)" -u "${POLLER[0]}" POLLER_LINE
}

test_idle_poller() {
	local gi start secs del_pid del_rc post_rc=1 poll_rc=1 bound
	local dgid=00000000000000000000ffffc6120002

	bound=$(tmo 10)
	gi=$(gid_index_of eroce1 "$RDMA_A1")
	coproc POLLER { ns1 "$EROCE_ROOT/selftests/tools/eroce_wirereq" \
		-d eroce1 -g "$gi"; }
	read -r -t "$(tmo 60)" -u "${POLLER[0]}" POLLER_LINE &&
		poller_say "connect 77 $dgid 256 1024 24" &&
		poller_say "send 1 64 1" && poller_say "post" &&
		[ "$POLLER_LINE" = ok ] && poller_say "poll 1" &&
		[ "$POLLER_LINE" = none ] || {
		ktap_diag "poller: no SEND outstanding (last answer '$POLLER_LINE')"
		poll_rc=2
	}
	rdma link delete eroce1 &
	del_pid=$!
	start=$SECONDS
	poller_say "poll $((2 * bound))"
	secs=$((SECONDS - start))
	ktap_diag "poll after the deletion: '$POLLER_LINE' after $secs s"
	[ "$poll_rc" = 1 ] && [ "$POLLER_LINE" = "error 5" ] &&
		[ "$secs" -le "$bound" ] && poll_rc=0
	poller_say "send 2 64 1" && poller_say "post"
	ktap_diag "post after it: '$POLLER_LINE'"
	[ "$POLLER_LINE" = "error 5" ] && post_rc=0
	eval "exec ${POLLER[1]}>&-"
	wait "$POLLER_PID"
	wait "$del_pid"
	del_rc=$?
	ktap_result idle_poller_poll_fails $poll_rc \
		"the poll of a process whose device went did not fail within $bound s"
	ktap_result idle_poller_post_fails $post_rc \
		"a post on a QP whose device went did not fail with EIO"
	ktap_result idle_poller_device_gone \
		"$([ $del_rc = 0 ] && rdma_dev_gone eroce1; echo $?)" \
		"rdma link delete eroce1: exit status $del_rc"
}

ktap_plan 27
[ -x "$TOOL" ] || ktap_bail "$TOOL not built (make -C selftests/tools)"
require eroce_pair_setup
BASE=$(objects)
for ev in mtu flap addr link_del rmmod; do
	cycles "$ev"
done
# the kill ends the server at once; the client must still be running
KILLED=integrity_client ITMO=$((RUN + END / 2)) cycles kill
test_idle_poller
ktap_finish
