#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 900
#
# incast.sh: a cabinet's incast (issue 12 item 4): INCAST_SENDERS eroce
# senders (default 8), each in its namespace, through one bridge into
# one receiver behind an ECN-marking bottleneck, as cameras into an
# aggregation box.
#
#   nsS1: s1 198.18.40.11 (eroceS1) --+
#   ...                               +-- nsW (bridge br0) --- nsD: d 198.18.40.2 (eroceD)
#   nsS8: s8 198.18.40.18 ----------- +        bottleneck on wd, the port to nsD
#
# The bridge's port towards nsD is the bottleneck: tbf 20 Mb/s with a
# RED child that marks ECN-capable packets CE above 15 KB of average
# queue and drops past 60 KB (as in bottleneck.sh, whose DCQCN settings
# for this network's round trip are used here too, but for the floor of
# the rate: 1 Mb/s, so that the senders at the floor fit through the
# bottleneck), with selective repeat and a retransmit timer that backs
# off.  Every sender runs eroce_integrity against its own server
# on eroceD: INCAST_BYTES (default 2M) of RDMA WRITE, every byte checked;
# all connect first, then start together.  Once with cc none
# everywhere, once with cc dcqcn.  Required: no wrong byte in either
# run, the bottleneck marked packets, and with dcqcn every transfer
# finished, CNPs were sent and handled, and the bottleneck dropped at
# most half as many packets per packet it passed as it did with cc none
# (one-sided, a ratio of two runs on the same machine: measured 0.11-0.12
# drops per packet passed with dcqcn, 0.56-0.59 with cc none; cc none in
# both runs fails it).  A bound (ktap_bound): on the debug kernel the
# senders may be too slow to congest the bottleneck.  Fairness does not
# tell the two apart (Jain's index up to 0.99 with cc none) and is only
# reported.  With cc none a transfer may run out of retries (congestion
# collapse, reported).  Reported per run: drops and marks at the
# bottleneck, CNPs, each sender's throughput and Jain's index over them,
# (sum x)^2 / (n * sum x^2), 1 when all are equal.
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_integrity"
N=${INCAST_SENDERS:-8}
BYTES=${INCAST_BYTES:-$(debug_scaled 2M 4)}
NSW=eroce-nsw
NSD=eroce-nsd
OUT=/tmp/incast
mkdir -p "$OUT"

sender_ns() { echo "eroce-nss$1"; }

# shellcheck disable=SC2015  # each failing step says which it was
setup() {
	local i ns

	modprobe -a veth bridge sch_tbf sch_red || return
	eroce_load && provider_install || return
	netns_add "$NSW" && netns_add "$NSD" || return
	ip -n "$NSW" link add br0 type bridge && ip -n "$NSW" link set br0 up &&
		veth_add "$NSD" d "$NSW" wd && ip -n "$NSW" link set wd master br0 &&
		addr_add "$NSD" d 198.18.40.2/24 &&
		ip netns exec "$NSD" rdma link add eroceD type eroce netdev d || {
		echo "the receiver's link"
		return 1
	}
	for ((i = 1; i <= N; i++)); do
		ns=$(sender_ns "$i")
		netns_add "$ns" && veth_add "$ns" "s$i" "$NSW" "ws$i" &&
			ip -n "$NSW" link set "ws$i" master br0 &&
			addr_add "$ns" "s$i" "198.18.40.$((10 + i))/24" &&
			ip netns exec "$ns" rdma link add "eroceS$i" type eroce netdev "s$i" || {
			echo "sender $i's link"
			return 1
		}
	done
	wait_for 60 has_gid eroceD "$(ipv4_gid 198.18.40.2)" ||
		{ echo "no GID on eroceD"; return 1; }
	for ((i = 1; i <= N; i++)); do
		wait_for 60 has_gid "eroceS$i" "$(ipv4_gid "198.18.40.$((10 + i))")" ||
			{ echo "no GID on eroceS$i"; return 1; }
		# shellcheck disable=SC2086  # $PING may be "busybox ping"
		ip netns exec "$(sender_ns "$i")" $PING -c 1 -W 2 198.18.40.2 >/dev/null 2>&1
	done
	# the bottleneck: the bridge's egress towards the receiver
	tc -n "$NSW" qdisc add dev wd root handle 1: tbf rate 20mbit burst 16kb \
		latency 100ms &&
		tc -n "$NSW" qdisc add dev wd parent 1:1 handle 10: red limit 60000 \
			min 15000 max 45000 avpkt 1100 burst 20 bandwidth 20mbit \
			probability 0.2 ecn || {
		echo "the bottleneck's qdiscs"
		return 1
	}
}

# knobs CC: every device ECN capable with cc CC, selective repeat, and a
# retransmit timer that backs off (rto_backoff 2): with the QP's 67 ms
# alone, a host that leaves one of N flows unscheduled for half a second
# runs it out of its 7 retries, congestion control or not (seen on a
# loaded build machine); backing off, the 7 span 8.5 s
knobs() {
	local i d devs=eroceD

	for ((i = 1; i <= N; i++)); do
		devs+=" eroceS$i"
	done
	# shellcheck disable=SC2086  # one word per device
	dcqcn_knobs "$1" $devs || return
	for d in $devs; do
		# N senders at the floor must fit through the bottleneck, or
		# no rate DCQCN may choose ends the drops: 1 Mb/s each
		echo 1 >"$IBSYS/$d/tuning/dcqcn/min_rate_mbps" || return
		echo sr >"$IBSYS/$d/tuning/loss_recovery" || return
		echo 2 >"$IBSYS/$d/tuning/rto_backoff" || return
	done
}

# handled_sum: cnp_handled over every sender
handled_sum() {
	local i n=0

	for ((i = 1; i <= N; i++)); do
		n=$((n + $(stat_get "eroceS$i/1" cnp_handled)))
	done
	echo "$n"
}

# first_errors FILE: an eroce_integrity's first two error lines (the
# cause; wc_error prints what followed too) and its last two, on one line
first_errors() {
	{ grep -m 2 -i 'error' "$1"; tail -n 2 "$1"; } | tr '\n' ' '
}

# incast CC: every sender at once; sets FINISHED, CORRUPT, DROPS, MARKS,
# CNPS, HANDLED, RATES (MiB/s per sender) and JAIN
incast() {
	local cc=$1 i gd gs port pids=() rc d0 m0 p0 c0 h0 start

	knobs "$cc" || return 1
	gd=$(gid_index_of eroceD 198.18.40.2)
	d0=$(red_stat "$NSW" wd dropped) m0=$(red_stat "$NSW" wd marked) p0=$(red_stat "$NSW" wd sent)
	c0=$(stat_get eroceD/1 cnp_sent) h0=$(handled_sum)
	for ((i = 1; i <= N; i++)); do
		ip netns exec "$NSD" timeout -k 5 "$(tmo 300)" "$TOOL" -d eroceD -g "$gd" \
			-p $((18700 + i)) -t "$(tmo 240)" >"$OUT/$cc.server$i" 2>&1 &
	done
	for ((i = 1; i <= N; i++)); do
		wait_for 30 tcp_listening "$NSD" $((18700 + i))
	done
	# the senders connect, then start their transfers together when the
	# file "go" appears (each rate is then one of N at once, not of a
	# sender that started while the others still connected)
	rm -f "$OUT/go"
	for ((i = 1; i <= N; i++)); do
		gs=$(gid_index_of "eroceS$i" "198.18.40.$((10 + i))")
		port=$((18700 + i))
		ip netns exec "$(sender_ns "$i")" timeout -k 5 "$(tmo 300)" "$TOOL" \
			-d "eroceS$i" -g "$gs" -p "$port" -t "$(tmo 240)" -q 1 \
			-o write -b "$BYTES" -s "$i" -G "$OUT/go" 198.18.40.2 \
			>"$OUT/$cc.client$i" 2>&1 &
		pids+=($!)
	done
	for ((i = 1; i <= N; i++)); do
		wait_for "$(tmo 60)" grep -q "^client: active" "$OUT/$cc.client$i"
	done
	start=$SECONDS
	touch "$OUT/go"
	FINISHED=0
	CORRUPT=
	for ((i = 1; i <= N; i++)); do
		rc=0
		wait "${pids[$((i - 1))]}" || rc=$?
		case "$rc" in
		0) FINISHED=$((FINISHED + 1)) ;;
		1) CORRUPT+="S$i " ;;
		*) ktap_diag "cc $cc: sender $i exit $rc: $(first_errors "$OUT/$cc.client$i")"
		   ktap_diag "cc $cc: its server: $(first_errors "$OUT/$cc.server$i")" ;;
		esac
	done
	wait
	DROPS=$(($(red_stat "$NSW" wd dropped) - d0))
	MARKS=$(($(red_stat "$NSW" wd marked) - m0))
	PASSED=$(($(red_stat "$NSW" wd sent) - p0))
	CNPS=$(($(stat_get eroceD/1 cnp_sent) - c0))
	HANDLED=$(($(handled_sum) - h0))
	# each sender's rate: what it moved over the time it took
	RATES=$(for ((i = 1; i <= N; i++)); do
		awk '$1 == "write:" && $2 == "ok" { print $(NF - 1); f = 1 } END { if (!f) print 0 }' \
			"$OUT/$cc.client$i"
	done | tr '\n' ' ')
	JAIN=$(awk -v r="$RATES" 'BEGIN { n = split(r, x, " "); for (i = 1; i <= n; i++) { s += x[i]; q += x[i] * x[i] }
		if (q > 0) printf "%.3f", s * s / (n * q); else print "-" }')
	ktap_diag "cc $cc: $((SECONDS - start)) s, $FINISHED of $N finished; bottleneck passed $PASSED, dropped $DROPS, marked $MARKS; CNPs sent $CNPS, handled $HANDLED"
	ktap_diag "cc $cc: MiB/s per sender: $RATES; Jain's index $JAIN"
}

# del_links: every device of the test, deleted
del_links() {
	local i

	rdma link del eroceD || return
	for ((i = 1; i <= N; i++)); do
		rdma link del "eroceS$i" || return
	done
}

ktap_plan 8
[ -x "$TOOL" ] || ktap_bail "$TOOL not built (make -C selftests/tools)"
require setup
kmsg_mark
incast none
NONE_DROPS=$DROPS NONE_PASSED=$PASSED
ktap_result cc_none_no_corruption "$([ -z "$CORRUPT" ]; echo $?)" "wrong bytes at $CORRUPT"
ktap_result cc_none_bottleneck_marked "$([ "$MARKS" -gt 0 ]; echo $?)" \
	"nothing marked at the bottleneck: no congestion to react to"
incast dcqcn
ktap_result dcqcn_no_corruption "$([ -z "$CORRUPT" ]; echo $?)" "wrong bytes at $CORRUPT"
ktap_result dcqcn_all_finished "$([ "$FINISHED" = "$N" ]; echo $?)" \
	"$FINISHED of $N transfers finished"
ktap_result dcqcn_cnps_sent_and_handled "$([ "$CNPS" -gt 0 ] && [ "$HANDLED" -gt 0 ]; echo $?)" \
	"CNPs sent $CNPS, handled $HANDLED"
# drops per packet passed: with dcqcn at most half of cc none's
ktap_bound dcqcn_halves_drops "$(awk -v d="$DROPS" -v p="$PASSED" \
	-v nd="$NONE_DROPS" -v np="$NONE_PASSED" \
	'BEGIN { exit !(p > 0 && np > 0 && nd > 0 && 2 * d / p <= nd / np) }'; echo $?)" \
	"drops per packet passed: cc dcqcn $DROPS/$PASSED, cc none $NONE_DROPS/$NONE_PASSED; want dcqcn's at most half"
ktap_check link_del del_links
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
