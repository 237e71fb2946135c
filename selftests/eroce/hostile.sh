#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
#
# hostile.sh: malformed and hostile RoCEv2 packets from the network.
# selftests/tools/eroce_hostile.py (scapy, AF_PACKET on veth1 in ns1) aims
# forged packets at live QPs of eroce2 (held by selftests/tools/eroce_victim):
# bad ICRC, unknown opcodes, truncated headers, bad pad, unknown QPN, bad
# P_Key, spoofed source, wrong QP type, PSNs far outside the window, an ACK
# for a PSN never sent, a UD packet with a wrong Q_Key, and RDMA WRITE/READ
# access violations (rkey of another PD, random rkey, address/length past
# the MR, a length that overflows).  Each must move its `rdma statistic`
# counter; the victim connection survives everything but the access
# violations, which must put the victim QP in error with an error
# completion while new connections work.  Then a flood of such packets at
# random QPNs while eroce_integrity runs must leave that traffic intact,
# a fresh ibv_rc_pingpong -c must pass and the kernel log must be clean.
#
#   ns1: veth1 198.18.0.1 (eroce1) <-> ns2: veth2 198.18.0.2 (eroce2)
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TOOLS="$EROCE_ROOT/selftests/tools"
PY=/usr/bin/python3
OUT=/tmp/hostile
mkdir -p "$OUT"

setup() {
	two_ns_setup &&
		eroce_load && provider_install &&
		ns1 rdma link add eroce1 type eroce netdev veth1 &&
		ns2 rdma link add eroce2 type eroce netdev veth2 &&
		wait_for 10 port_state_is eroce1 "4: ACTIVE" &&
		wait_for 10 port_state_is eroce2 "4: ACTIVE" &&
		wait_for 10 has_gid eroce1 "$(ipv4_gid 198.18.0.1)" &&
		wait_for 10 has_gid eroce2 "$(ipv4_gid 198.18.0.2)" &&
		ns1 $PING -c 1 -W 5 198.18.0.2 >/dev/null
}

counters() {
	rdma statistic show link "$1/1" 2>/dev/null |
		awk '{ for (i = 3; i < NF; i += 2) if ($(i + 1) != 0) printf "%s %s ", $i, $(i + 1) } END { print "" }'
}

GID1=1
GID2=1
DST_MAC=

test_barrage() {
	local rc

	echo "    # Subtest: eroce_hostile"
	ns1 "$PY" "$TOOLS/eroce_hostile.py" --iface veth1 --dst-mac "$DST_MAC" \
		--gid "$GID1" --victim "$TOOLS/eroce_victim" 2>&1 | sed -u 's/^/    /'
	rc=${PIPESTATUS[0]}
	ktap_diag "eroce1: $(counters eroce1)"
	ktap_diag "eroce2: $(counters eroce2)"
	ktap_result hostile_packets "$rc" "eroce_hostile.py exit status $rc"
}

# eroce_integrity between the namespaces while forged packets fly
test_flood_under_traffic() {
	local spid fpid rc_s rc_c rc_f

	# the flood tool builds its packet pool first (a few seconds)
	ns1 "$PY" "$TOOLS/eroce_hostile.py" --iface veth1 --dst-mac "$DST_MAC" \
		--flood 12 >"$OUT/flood.py" 2>&1 &
	fpid=$!
	sleep 4
	ns2 "$TOOLS/eroce_integrity" -d eroce2 -g "$GID2" -p 18600 -t 150 \
		>"$OUT/flood.server" 2>&1 &
	spid=$!
	ns1 "$TOOLS/eroce_integrity" -d eroce1 -g "$GID1" -p 18600 -t 150 \
		-o send,write -b 48M -s 77 198.18.0.2 >"$OUT/flood.client" 2>&1
	rc_c=$?
	wait "$spid"; rc_s=$?
	wait "$fpid"; rc_f=$?
	ktap_diag "$(cat "$OUT/flood.py")"
	ktap_result flood_sent "$rc_f" "$(tail -n 3 "$OUT/flood.py")"
	ktap_diag "$(sed 's/^/client: /' "$OUT/flood.client"; sed 's/^/server: /' "$OUT/flood.server")"
	ktap_diag "eroce2: $(counters eroce2)"
	ktap_result traffic_intact_during_flood \
		"$([ "$rc_c" = 0 ] && [ "$rc_s" = 0 ]; echo $?)" \
		"eroce_integrity client exit $rc_c, server exit $rc_s"
}

test_pingpong_after() {
	local spid rc

	ns2 timeout 60 ibv_rc_pingpong -d eroce2 -g "$GID2" -c -n 100 >"$OUT/pp.server" 2>&1 &
	spid=$!
	sleep 1
	ns1 timeout 60 ibv_rc_pingpong -d eroce1 -g "$GID1" -c -n 100 198.18.0.2 \
		>"$OUT/pp.client" 2>&1
	rc=$?
	wait "$spid"
	[ "$rc" = 0 ] && rc=$?
	ktap_diag "$(tail -n 3 "$OUT/pp.client")"
	ktap_result rc_pingpong_after_barrage "$rc" "ibv_rc_pingpong exit $rc"
}

test_kernel_log() {
	local splat
	splat=$(dmesg_since_mark | grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace')
	[ -n "$splat" ] && ktap_diag "$splat"
	ktap_result no_kernel_splat "$([ -z "$splat" ]; echo $?)" "splat in dmesg"
}

ktap_plan 6
for t in eroce_victim eroce_integrity; do
	[ -x "$TOOLS/$t" ] || ktap_bail "$TOOLS/$t not built (make -C selftests/tools)"
done
require setup
GID1=$(gid_indexes eroce1 "$(ipv4_gid 198.18.0.1)" | head -n 1)
GID2=$(gid_indexes eroce2 "$(ipv4_gid 198.18.0.2)" | head -n 1)
DST_MAC=$(ns2 cat /sys/class/net/veth2/address)
kmsg_mark
ktap_check icrc_matches_scapy "$PY" "$TOOLS/eroce_hostile.py" --selftest
test_barrage
test_flood_under_traffic
test_pingpong_after
test_kernel_log
ktap_finish
