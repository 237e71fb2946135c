#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 1800
#
# bench_guest.sh: the in-guest half of `make bench` (run by
# selftests/bench/bench.sh through selftests/run_vm.sh).  Measures, in one
# guest, interleaved so that load noise hits every transport alike:
#   eroce   eroce1 (ns1/veth1 198.18.0.1) <-> eroce2 (ns2/veth2 198.18.0.2)
#   rxe     rxe1 (vr1 198.18.1.1) <-> rxe2 (vr2 198.18.1.2), both ends in
#           the initial namespace, policy routing forcing the traffic over
#           the vr1/vr2 veth (checked by the veth packet counters)
#   tcp     iperf3 over each of the two veth pairs (tcp_ns: the eroce veth,
#           tcp_init: the rxe veth) and a 2-byte TCP ping-pong
# Output: KTAP (progress and sanity checks) and, between the lines
# "BENCH-CSV-BEGIN" and "BENCH-CSV-END", one CSV row per run (raw, not
# aggregated: the host driver takes medians).  See Documentation/bench.rst.
#
# Configuration (environment; bench.sh passes it through a wrapper):
#   BENCH_QUICK=1       fast subset (MTU 1500, 64 B and 64 KiB, 1 QP, 1 rep)
#   BENCH_REPS          repetitions of each measurement (default 3)
#   BENCH_MTUS          veth MTUs (default "1500 9000")
#   BENCH_SIZES         bw message sizes (default "64 4096 65536")
#   BENCH_QPS           QP counts for the bw tests (default "1 4")
#   BENCH_BW_TESTS      default "ib_write_bw ib_read_bw ib_send_bw"
#   BENCH_LAT_TESTS     default "ib_send_lat ib_write_lat ib_read_lat"
#   BENCH_PAIRS         default "eroce rxe tcp"
#   BENCH_BYTES         bytes per bw run (default 8 MiB); the iteration
#                       count is BYTES/size, clamped to [BENCH_MIN_ITERS,
#                       BENCH_MAX_ITERS] (200, 2000), divided among the QPs
#   BENCH_LAT_ITERS     iterations of the latency tests (default 1000)
#   BENCH_TCP_SECS      iperf3 duration (default 1)
#   BENCH_CPU_TESTS     bw tests of the CPU pass (default "ib_send_bw
#                       ib_read_bw"; empty skips it; perftest has no events
#                       for WRITE): 64 KiB, 1 QP, with
#                       completion events, CPU per GiB from the difference
#                       between a 100-iteration run and one
#                       BENCH_CPU_ITERS (default 1500) iterations longer
#   BENCH_SCALE_QPS     QPs per device of the scale check (default 4096,
#                       0 = skip); eroce1's QPs connect to as many on eroce2,
#                       rxe1's to each other (rxe loopback)
#   BENCH_POST_LIST     WRs per ibv_post_send() of the post-list message
#                       rate (default 16; 0 skips it): BENCH_LIST_TESTS
#                       (default "ib_write_bw ib_send_bw") at 64 B, 1 QP,
#                       perftest -l, BENCH_LIST_ITERS (default 16000)
#                       iterations
#   BENCH_TIMEOUT       limit of each single run in seconds (default 90)
#   BENCH_BUDGET        seconds of measurements (default 1380): a round (all
#                       measurements at one MTU) is not started when the
#                       previous one would not fit any more
set -u -o pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$HERE/../lib_rdma.sh"

QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then
	: "${BENCH_REPS:=1}" "${BENCH_MTUS:=1500}" "${BENCH_SIZES:=64 65536}"
	: "${BENCH_QPS:=1}" "${BENCH_SCALE_QPS:=1024}" "${BENCH_LAT_ITERS:=500}"
fi
REPS=${BENCH_REPS:-3}
MTUS=${BENCH_MTUS:-1500 9000}
SIZES=${BENCH_SIZES:-64 4096 65536}
QPS=${BENCH_QPS:-1 4}
BW_TESTS=${BENCH_BW_TESTS:-ib_write_bw ib_read_bw ib_send_bw}
LAT_TESTS=${BENCH_LAT_TESTS:-ib_send_lat ib_write_lat ib_read_lat}
PAIRS=${BENCH_PAIRS:-eroce rxe tcp}
BYTES=${BENCH_BYTES:-8388608}
MIN_ITERS=${BENCH_MIN_ITERS:-200}
MAX_ITERS=${BENCH_MAX_ITERS:-2000}
LAT_ITERS=${BENCH_LAT_ITERS:-1000}
TCP_SECS=${BENCH_TCP_SECS:-1}
CPU_TESTS=${BENCH_CPU_TESTS-ib_send_bw ib_read_bw}
CPU_N1=100
CPU_ITERS=${BENCH_CPU_ITERS:-1500}
SCALE_QPS=${BENCH_SCALE_QPS:-4096}
POST_LIST=${BENCH_POST_LIST:-16}
LIST_TESTS=${BENCH_LIST_TESTS-ib_write_bw ib_send_bw}
LIST_ITERS=${BENCH_LIST_ITERS:-16000}
RUN_T=${BENCH_TIMEOUT:-90}
BUDGET=${BENCH_BUDGET:-1380}

TMP=/tmp/eroce-bench
mkdir -p "$TMP"
CSV=$TMP/results.csv
PORT=18515
HZ=$(getconf CLK_TCK)
RXE_OK=0
ERO_OK=0

# addresses and devices of each pair (read through eval)
# shellcheck disable=SC2034
A_eroce=198.18.0.1 B_eroce=198.18.0.2 NSA_eroce=$NS1 NSB_eroce=$NS2
# shellcheck disable=SC2034
DEVA_eroce=eroce1 DEVB_eroce=eroce2 VETH_eroce=veth1
# shellcheck disable=SC2034
A_rxe=198.18.1.1 B_rxe=198.18.1.2 NSA_rxe='' NSB_rxe=
# shellcheck disable=SC2034
DEVA_rxe=rxe1 DEVB_rxe=rxe2 VETH_rxe=vr1

say() { echo "# $*"; }

# ---- setup ---------------------------------------------------------------------

eroce_setup() {
	eroce_load && provider_install && two_ns_setup &&
		ns1 rdma link add eroce1 type eroce netdev veth1 &&
		ns2 rdma link add eroce2 type eroce netdev veth2 &&
		wait_for 10 port_state_is eroce1 "4: ACTIVE" &&
		wait_for 10 port_state_is eroce2 "4: ACTIVE" &&
		wait_for 10 has_gid eroce1 "$(ipv4_gid 198.18.0.1)" &&
		wait_for 10 has_gid eroce2 "$(ipv4_gid 198.18.0.2)" || return
	# shellcheck disable=SC2086
	ns1 $PING -c 1 -W 2 198.18.0.2 >/dev/null 2>&1
	return 0
}

set_mtu() {
	ip -n "$NS1" link set dev veth1 mtu "$1" && ip -n "$NS2" link set dev veth2 mtu "$1" &&
		ip link set dev vr1 mtu "$1" && ip link set dev vr2 mtu "$1" || return
	# the ports follow the netdev MTU; give the notifiers a moment
	sleep 1
}

# ---- measurement helpers -----------------------------------------------------------

pfx() { [ -n "$1" ] && echo "ip netns exec $1"; }

listening() {
	# shellcheck disable=SC2046
	$(pfx "$1") ss -Hltn "sport = :$2" 2>/dev/null | grep -q .
}

# cpu_jiffies: busy and total jiffies of all CPUs from /proc/stat
cpu_jiffies() {
	awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i
		print t - $5 - $6, t; exit }' /proc/stat
}

now_ns() { date +%s%N; }

# veth_tx NETDEV: "tx_packets rx_packets" of NETDEV (initial namespace)
veth_pk() {
	echo "$(cat /sys/class/net/"$1"/statistics/tx_packets) $(cat /sys/class/net/"$1"/statistics/rx_packets)"
}
lo_pk() { cat /sys/class/net/lo/statistics/tx_packets; }

# run_pair T SNS CLIENT_NS "SRV CMD" "CLI CMD" PORT: server in SNS, wait
# until it listens on PORT, time the client.  Sets R_WALL (seconds, float),
# R_BUSY (CPU seconds, all CPUs), R_RC, output in $TMP/cli.out/srv.out.
run_pair() {
	local sns=$1 cns=$2 scmd=$3 ccmd=$4 port=$5 spid b0 b1 n0 n1 src=0
	# shellcheck disable=SC2046,SC2086
	$(pfx "$sns") timeout -k 5 "$RUN_T" $scmd >"$TMP/srv.out" 2>&1 &
	spid=$!
	wait_for 20 listening "$sns" "$port"
	read -r b0 _ < <(cpu_jiffies)
	n0=$(now_ns)
	# shellcheck disable=SC2046,SC2086
	$(pfx "$cns") timeout -k 5 "$RUN_T" $ccmd >"$TMP/cli.out" 2>&1 || src=$?
	n1=$(now_ns)
	read -r b1 _ < <(cpu_jiffies)
	wait "$spid" || [ $src != 0 ] || src=100
	R_RC=$src
	R_WALL=$(awk -v a="$n0" -v b="$n1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }')
	R_BUSY=$(awk -v a="$b0" -v b="$b1" -v hz="$HZ" 'BEGIN { printf "%.4f", (b - a) / hz }')
}

# perftest result row: the first line after the "#bytes" header
pt_row() {
	awk '/#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { print; exit }' "$TMP/cli.out"
}

# csv FIELD...: one CSV row, kept in $CSV and streamed to the output at once
# (prefixed "BENCH-ROW: "), so that a guest killed by its time limit still
# leaves its rows to the host driver
csv() {
	local IFS=,
	echo "$*" >>"$CSV"
	echo "BENCH-ROW: $*"
}

# CSV columns (one row per run):
#   rep,mtu,pair,test,size,qps,iters,bytes,gbps,mpps,lat_us,src,wall_s,cpu_s,cpu_s_per_gib,ok
# src: perftest (rates as perftest printed them), wall (derived from the
# iteration count and the client's wall time minus the wall time of the
# same command with 5 iterations), iperf3, pingpong.  cpu_s: busy CPU
# seconds of the whole guest (/proc/stat) during the client's run;
# cpu_s_per_gib subtracts the busy time of the 5-iteration run first.
CSV_HDR="rep,mtu,pair,test,size,qps,iters,bytes,gbps,mpps,lat_us,src,wall_s,cpu_s,cpu_s_per_gib,ok"

declare -A SETUP_WALL=() SETUP_BUSY=()

# setup_cost KEY SNS CNS SCMD CCMD: wall time and CPU time of a 5-iteration
# run (once per KEY): what connection setup and teardown cost.  Sets
# S_WALL and S_BUSY; clobbers R_*.
setup_cost() {
	local key=$1
	if [ -z "${SETUP_WALL[$key]:-}" ]; then
		run_pair "$2" "$3" "$4" "$5" "$PORT"
		SETUP_WALL[$key]=$R_WALL SETUP_BUSY[$key]=$R_BUSY
		[ "$R_RC" = 0 ] || SETUP_WALL[$key]=0 SETUP_BUSY[$key]=0
	fi
	S_WALL=${SETUP_WALL[$key]} S_BUSY=${SETUP_BUSY[$key]}
}

iters_for() {
	local n=$((BYTES / $1))
	[ $n -lt "$MIN_ITERS" ] && n=$MIN_ITERS
	[ "$n" -gt "$MAX_ITERS" ] && n=$MAX_ITERS
	echo "$n"
}

FAILS=0
VETH_BAD=0

# pair_load PAIR: the caller's nsa nsb deva devb a b (namespaces, devices
# and addresses of PAIR's client and server side) and ga gb (their GID
# indexes); the caller declares them local
pair_load() {
	eval "nsa=\$NSA_$1 nsb=\$NSB_$1 deva=\$DEVA_$1 devb=\$DEVB_$1 a=\$A_$1 b=\$B_$1"
	ga=$(gid_index_of "$deva" "$a") gb=$(gid_index_of "$devb" "$b")
}

# bw_run REP MTU PAIR TEST SIZE QPS [LIST]: LIST WRs per post (perftest
# -l), recorded as test TEST:lLIST
bw_run() {
	local rep=$1 mtu=$2 p=$3 t=$4 size=$5 q=$6 list=${7:-}
	local nsa nsb deva devb a b ga gb n ccmd scmd row gbps mpps src bytes sw eff ok=1 base
	local vp0 vp1 lo0 lo1 short=5
	pair_load "$p"
	n=$(( $(iters_for "$size") / q ))
	[ $n -lt 5 ] && n=5
	base="$t -p $PORT -s $size -q $q -F --report_gbits"
	if [ -n "$list" ]; then
		# perftest posts whole lists: iterations in multiples of one
		n=$(( (LIST_ITERS + list - 1) / list * list )) short=$list
		base+=" -l $list"
		t=$t:l$list
	fi
	scmd="$base -d $devb -x $gb -n $n"
	ccmd="$base -d $deva -x $ga -n $n $b"
	[ "$p" = rxe ] && { vp0=$(veth_pk vr1); lo0=$(lo_pk); }
	run_pair "$nsb" "$nsa" "$scmd" "$ccmd" "$PORT"
	[ "$p" = rxe ] && { vp1=$(veth_pk vr1); lo1=$(lo_pk); }
	bytes=$((n * q * size))
	row=$(pt_row)
	if [ "$R_RC" != 0 ] || [ -z "$row" ]; then
		ok=0 FAILS=$((FAILS + 1))
		say "FAIL $p $t size=$size qps=$q mtu=$mtu rc=$R_RC: $(grep -iE 'err|fail|couldn|unable' "$TMP/cli.out" "$TMP/srv.out" | head -n 3 | tr '\n' ' ')"
		csv "$rep" "$mtu" "$p" "$t" "$size" "$q" "$n" "$bytes" "" "" "" fail "$R_WALL" "$R_BUSY" "" 0
		return
	fi
	# bytes iters peak avg msgrate: Gb/s from MsgRate (6 decimals; the
	# Gb/s column has only 2)
	read -r _ _ _ gbps mpps _ <<<"$row"
	local wall=$R_WALL busy=$R_BUSY rc=$R_RC cpu
	setup_cost "$p:$t:$q:$mtu" "$nsb" "$nsa" \
		"$base -d $devb -x $gb -n $short" "$base -d $deva -x $ga -n $short $b"
	R_WALL=$wall R_BUSY=$busy R_RC=$rc
	eff=$(awk -v w="$wall" -v s="$S_WALL" 'BEGIN { e = w - s; if (e < w * 0.1) e = w * 0.1; printf "%.6f", e }')
	src=perftest
	if awk -v m="$mpps" 'BEGIN { exit !(m + 0 > 0 && m + 0 < 1e6) }'; then
		gbps=$(awk -v m="$mpps" -v s="$size" 'BEGIN { printf "%.6f", m * 1e6 * s * 8 / 1e9 }')
	else
		gbps=$(awk -v by="$bytes" -v e="$eff" 'BEGIN { printf "%.6f", by * 8 / e / 1e9 }')
		mpps=$(awk -v m="$((n * q))" -v e="$eff" 'BEGIN { printf "%.6f", m / e / 1e6 }')
		src=wall
	fi
	# CPU of the whole guest during the run minus that of a 5-iteration run
	cpu=$(awk -v c="$busy" -v s="$S_BUSY" -v by="$bytes" 'BEGIN { d = c - s; if (d > 0) printf "%.3f", d / (by / 1073741824) }')
	if [ "$p" = rxe ]; then
		# the data must have crossed vr1: at least one packet per MTU
		# worth of payload, in one direction or the other
		local tx rx need
		read -r tx rx <<<"$(awk -v x="$vp0" -v y="$vp1" 'BEGIN { split(x, a); split(y, b); print b[1] - a[1], b[2] - a[2] }')"
		need=$(( (bytes / (mtu + 100)) < (n * q) ? bytes / (mtu + 100) : n * q ))
		need=$((need * 9 / 10))
		if [ $((tx + rx)) -lt $need ]; then
			VETH_BAD=$((VETH_BAD + 1))
			say "WARN rxe $t size=$size: vr1 moved only tx=$tx rx=$rx packets (expected >= $need), lo +$((lo1 - lo0))"
		fi
	fi
	csv "$rep" "$mtu" "$p" "$t" "$size" "$q" "$n" "$bytes" "$gbps" "$mpps" "" "$src" "$R_WALL" "$R_BUSY" "$cpu" "$ok"
}

# lat_run REP MTU PAIR TEST
lat_run() {
	local rep=$1 mtu=$2 p=$3 t=$4
	local nsa nsb deva devb a b ga gb n=$LAT_ITERS base row lat src sw half=2 eff
	pair_load "$p"
	base="$t -p $PORT -s 2 -F"
	run_pair "$nsb" "$nsa" "$base -d $devb -x $gb -n $n" "$base -d $deva -x $ga -n $n $b" "$PORT"
	row=$(pt_row)
	if [ "$R_RC" != 0 ] || [ -z "$row" ]; then
		FAILS=$((FAILS + 1))
		say "FAIL $p $t mtu=$mtu rc=$R_RC: $(grep -iE 'err|fail|couldn|unable' "$TMP/cli.out" "$TMP/srv.out" | head -n 3 | tr '\n' ' ')"
		csv "$rep" "$mtu" "$p" "$t" 2 1 "$n" "" "" "" "" fail "$R_WALL" "$R_BUSY" "" 0
		return
	fi
	# bytes iters t_min t_max t_typical t_avg ...: report t_typical (median)
	read -r _ _ _ _ lat _ <<<"$row"
	src=perftest
	if ! awk -v l="$lat" 'BEGIN { exit !(l + 0 > 0 && l + 0 < 1e7) }'; then
		local wall=$R_WALL busy=$R_BUSY
		setup_cost "$p:$t:lat:$mtu" "$nsb" "$nsa" \
			"$base -d $devb -x $gb -n 5" "$base -d $deva -x $ga -n 5 $b"
		R_WALL=$wall R_BUSY=$busy sw=$S_WALL
		# perftest reports half the round trip for send/write ping-pong,
		# the whole read round trip for ib_read_lat
		[ "$t" = ib_read_lat ] && half=1
		eff=$(awk -v w="$wall" -v s="$sw" 'BEGIN { e = w - s; if (e < w * 0.1) e = w * 0.1; print e }')
		lat=$(awk -v e="$eff" -v n="$((n - 5))" -v h="$half" 'BEGIN { printf "%.2f", e / n / h * 1e6 }')
		src=wall
	fi
	csv "$rep" "$mtu" "$p" "$t" 2 1 "$n" "" "" "" "$lat" "$src" "$R_WALL" "$R_BUSY" "" 1
}

# cpu_run REP MTU PAIR TEST: CPU per GiB of TEST at 64 KiB, 1 QP, without
# busy polling and without connection setup: two runs with completion
# events (perftest -e: the processes sleep until a completion), of
# CPU_N1 and CPU_N1 + CPU_ITERS iterations; the difference of their busy
# CPU time (whole guest, /proc/stat) over the difference of the bytes
# moved is what the transfer costs both ends, setup cancelled out.  A
# row with test "TEST:cpu".  (Busy-polling runs keep the CPUs busy
# whatever the transport costs, and perftest's --cpu_util printed 0.99%
# for a polling ib_write_bw client.)
cpu_run() {
	local rep=$1 mtu=$2 p=$3 t=$4
	local nsa nsb deva devb a b ga gb base n b1 b2 w2 gbps size=65536 ok=1
	pair_load "$p"
	for n in "$CPU_N1" $((CPU_N1 + CPU_ITERS)); do
		base="$t -p $PORT -s $size -e -n $n -F --report_gbits"
		run_pair "$nsb" "$nsa" "$base -d $devb -x $gb" "$base -d $deva -x $ga $b" "$PORT"
		[ "$R_RC" = 0 ] && [ -n "$(pt_row)" ] || ok=0
		b2=$R_BUSY w2=$R_WALL
		[ "$n" = "$CPU_N1" ] && b1=$b2
	done
	if [ $ok = 0 ]; then
		FAILS=$((FAILS + 1))
		say "FAIL $p $t CPU pass mtu=$mtu rc=$R_RC: $(tail -n 2 "$TMP/cli.out" | tr '\n' ' ')"
		csv "$rep" "$mtu" "$p" "$t:cpu" "$size" 1 "" "" "" "" "" fail "$w2" "$b2" "" 0
		return
	fi
	# bytes iters peak avg ...: the long run's average
	read -r _ _ _ gbps _ <<<"$(pt_row)"
	csv "$rep" "$mtu" "$p" "$t:cpu" "$size" 1 "$CPU_ITERS" "$((CPU_ITERS * size))" "$gbps" \
		"" "" events_diff "$w2" "$(awk -v x="$b1" -v y="$b2" 'BEGIN { printf "%.2f", y - x }')" \
		"$(awk -v x="$b1" -v y="$b2" -v by="$((CPU_ITERS * size))" 'BEGIN { d = y - x; if (d > 0) printf "%.3f", d / (by / 1073741824) }')" 1
}

# tcp_bw REP MTU PAIR(eroce|rxe) SIZE QPS: iperf3 over that pair's veth
tcp_bw() {
	local rep=$1 mtu=$2 p=$3 size=$4 q=$5 nsa nsb a b gbps bytes out
	eval "nsa=\$NSA_$p nsb=\$NSB_$p a=\$A_$p b=\$B_$p"
	run_pair "$nsb" "$nsa" "iperf3 -s -1 -B $b -p 5201" \
		"iperf3 -c $b -B $a -p 5201 -t $TCP_SECS -l $size -P $q -J" 5201
	out=$(python3 - "$TMP/cli.out" <<-'EOF'
	import json, sys
	try:
	    j = json.load(open(sys.argv[1]))
	    e = j["end"]
	    r = e["sum_received"]
	    print(r["bits_per_second"] / 1e9, int(r["bytes"]))
	except Exception as x:
	    print("fail", 0)
	EOF
	)
	read -r gbps bytes <<<"$out"
	if [ "$R_RC" != 0 ] || [ "$gbps" = fail ]; then
		FAILS=$((FAILS + 1))
		say "FAIL tcp over $p veth size=$size P=$q rc=$R_RC: $(tail -n 3 "$TMP/cli.out" | tr '\n' ' ')"
		csv "$rep" "$mtu" "tcp_$p" iperf3 "$size" "$q" "" "" "" "" "" fail "$R_WALL" "$R_BUSY" "" 0
		return
	fi
	# CPU per GiB over the whole client run (iperf3's own duration)
	csv "$rep" "$mtu" "tcp_$p" iperf3 "$size" "$q" "" "$bytes" "$(printf %.4f "$gbps")" \
		"$(awk -v g="$gbps" -v s="$size" 'BEGIN { printf "%.6f", g * 1e9 / 8 / s / 1e6 }')" "" iperf3 \
		"$R_WALL" "$R_BUSY" \
		"$(awk -v c="$R_BUSY" -v by="$bytes" 'BEGIN { if (by > 0) printf "%.3f", c / (by / 1073741824) }')" 1
}

# tcp_lat REP MTU PAIR: 2-byte TCP ping-pong (TCP_NODELAY), half round trip
TCP_PP=$HERE/tcp_pingpong

tcp_lat() {
	local rep=$1 mtu=$2 p=$3 nsa nsb a b lat
	eval "nsa=\$NSA_$p nsb=\$NSB_$p a=\$A_$p b=\$B_$p"
	run_pair "$nsb" "$nsa" "$TCP_PP -s $b 5202" "$TCP_PP -c $b 5202 $LAT_ITERS $a" 5202
	lat=$(awk '/median_half_rtt_us/ { print $2 }' "$TMP/cli.out")
	if [ "$R_RC" != 0 ] || [ -z "$lat" ]; then
		FAILS=$((FAILS + 1))
		say "FAIL tcp ping-pong over $p veth rc=$R_RC"
		csv "$rep" "$mtu" "tcp_$p" tcp_lat 2 1 "$LAT_ITERS" "" "" "" "" fail "$R_WALL" "$R_BUSY" "" 0
		return
	fi
	csv "$rep" "$mtu" "tcp_$p" tcp_lat 2 1 "$LAT_ITERS" "" "" "" "$lat" pingpong "$R_WALL" "$R_BUSY" "" 1
}

has_pair() { [[ " $PAIRS " == *" $1 "* ]]; }

# one_round REP MTU: every measurement once, transports interleaved
one_round() {
	local rep=$1 mtu=$2 t s q p
	for s in $SIZES; do
		for q in $QPS; do
			for t in $BW_TESTS; do
				[ $ERO_OK = 1 ] && has_pair eroce && bw_run "$rep" "$mtu" eroce "$t" "$s" "$q"
				[ $RXE_OK = 1 ] && has_pair rxe && bw_run "$rep" "$mtu" rxe "$t" "$s" "$q"
			done
			if has_pair tcp; then
				for p in eroce rxe; do
					tcp_bw "$rep" "$mtu" "$p" "$s" "$q"
				done
			fi
		done
	done
	if [ "$POST_LIST" -gt 1 ]; then
		for t in $LIST_TESTS; do
			[ $ERO_OK = 1 ] && has_pair eroce && bw_run "$rep" "$mtu" eroce "$t" 64 1 "$POST_LIST"
			[ $RXE_OK = 1 ] && has_pair rxe && bw_run "$rep" "$mtu" rxe "$t" 64 1 "$POST_LIST"
		done
	fi
	for t in $LAT_TESTS; do
		[ $ERO_OK = 1 ] && has_pair eroce && lat_run "$rep" "$mtu" eroce "$t"
		[ $RXE_OK = 1 ] && has_pair rxe && lat_run "$rep" "$mtu" rxe "$t"
	done
	if has_pair tcp && [ -x "$TCP_PP" ]; then
		for p in eroce rxe; do tcp_lat "$rep" "$mtu" "$p"; done
	fi
	for t in $CPU_TESTS; do
		[ $ERO_OK = 1 ] && has_pair eroce && cpu_run "$rep" "$mtu" eroce "$t"
		[ $RXE_OK = 1 ] && has_pair rxe && cpu_run "$rep" "$mtu" rxe "$t"
	done
}

# ---- scale check -------------------------------------------------------------------

SCALE_BIN=$HERE/eroce_qp_scale
SCALE_OUT=

# scale_check DEV NS ADDR [PEER_DEV PEER_ADDR]
scale_check() {
	local dev=$1 ns=$2 addr=$3 g g2 out rc=0 peer=()
	g=$(gid_index_of "$dev" "$addr") || return 1
	if [ -n "${4:-}" ]; then
		g2=$(gid_index_of "$4" "$5") || return 1
		peer=(-D "$4" -G "$g2")
	fi
	sync
	echo 3 >/proc/sys/vm/drop_caches
	# shellcheck disable=SC2046
	out=$($(pfx "$ns") timeout -k 5 900 "$SCALE_BIN" -d "$dev" -g "$g" "${peer[@]}" -n "$SCALE_QPS" 2>&1) || rc=$?
	SCALE_OUT+=$(sed "s/^/$dev /" <<<"$out")$'\n'
	sed "s/^/# $dev: /" <<<"$out"
	return $rc
}

# ---- main ---------------------------------------------------------------------

main() {
	local start=$SECONDS mtu rep nplan=5

	ktap_plan $nplan
	say "config: quick=$QUICK reps=$REPS mtus='$MTUS' sizes='$SIZES' qps='$QPS' pairs='$PAIRS'"
	say "config: bytes/run=$BYTES iters=[$MIN_ITERS,$MAX_ITERS] lat_iters=$LAT_ITERS tcp_secs=$TCP_SECS scale_qps=$SCALE_QPS"
	say "config: cpu_tests='$CPU_TESTS' cpu_iters=$CPU_ITERS"
	if run eroce_setup; then ERO_OK=1; ktap_ok eroce_setup
	else ktap_diag "$LAST_OUT"; ktap_fail eroce_setup; fi
	if run rxe_pair_setup; then RXE_OK=1; ktap_ok rxe_setup
	else ktap_diag "$LAST_OUT"; ktap_fail rxe_setup; fi
	say "eroce GIDs: eroce1 $(gid_index_of eroce1 198.18.0.1) eroce2 $(gid_index_of eroce2 198.18.0.2);" \
		"rxe GIDs: rxe1 $(gid_index_of rxe1 198.18.1.1) rxe2 $(gid_index_of rxe2 198.18.1.2)"
	ip rule show | sed 's/^/# rule: /'

	echo "BENCH-ROW: $CSV_HDR"
	echo "$CSV_HDR" >"$CSV"
	stat_snap eroce1 "$TMP/ero.1"; stat_snap eroce2 "$TMP/ero.2"
	# rounds: every MTU once per repetition, so that the time budget
	# trims repetitions, not an MTU
	local rt0 rlast=0 skipped=0
	for ((rep = 1; rep <= REPS; rep++)); do
		for mtu in $MTUS; do
			if [ $((SECONDS - start + rlast)) -gt "$BUDGET" ]; then
				skipped=$((skipped + 1))
				continue
			fi
			rt0=$SECONDS
			set_mtu "$mtu" || say "WARN: setting MTU $mtu failed"
			say "MTU $mtu round $rep/$REPS (t=$((SECONDS - start)) s): eroce1 active_mtu" \
				"$(active_mtu eroce1), rxe1 active_mtu $(active_mtu rxe1)"
			one_round "$rep" "$mtu"
			rlast=$((SECONDS - rt0))
		done
	done
	[ $skipped = 0 ] ||
		say "WARN: time budget ${BUDGET}s: $skipped of $((REPS * $(wc -w <<<"$MTUS"))) rounds skipped (BENCH_BUDGET)"
	say "measurements took $((SECONDS - start)) s; $FAILS failed runs"
	say "eroce1 counters changed by the measurements: $(stat_changes eroce1 "$TMP/ero.1")"
	say "eroce2 counters changed by the measurements: $(stat_changes eroce2 "$TMP/ero.2")"
	ktap_result measurements $((FAILS > 0))
	ktap_result rxe_traffic_on_veth $((VETH_BAD > 0)) "$VETH_BAD rxe runs did not cross vr1"
	ip -s link show dev vr1 | sed 's/^/# /'
	ip -s link show dev lo | sed 's/^/# /'

	if [ "$SCALE_QPS" -gt 0 ] && [ -x "$SCALE_BIN" ]; then
		set_mtu 1500
		local src=0
		stat_snap eroce1 "$TMP/ero.scale"
		[ $ERO_OK = 1 ] && { scale_check eroce1 "$NS1" 198.18.0.1 eroce2 198.18.0.2 || src=1; }
		say "eroce1 counters changed by the scale check: $(stat_changes eroce1 "$TMP/ero.scale")"
		[ $RXE_OK = 1 ] && { scale_check rxe1 "" 198.18.1.1 || src=1; }
		ktap_result "scale_${SCALE_QPS}_qps" $src
	else
		ktap_skip scale "BENCH_SCALE_QPS=0 or $SCALE_BIN not built (make -C selftests/bench)"
	fi

	say "eroce counters: $(rdma statistic show link eroce1/1 2>&1 | tr -s ' \n' ' ')"
	say "eroce2 counters: $(rdma statistic show link eroce2/1 2>&1 | tr -s ' \n' ' ')"
	say "rxe counters: $(rdma statistic show link rxe1/1 2>&1 | tr -s ' \n' ' ')"
	dmesg | grep -iE 'eroce|rxe' | grep -iE 'err|warn|fail|drop|timeout' | tail -n 20 | sed 's/^/# dmesg: /'

	echo "BENCH-SCALE-BEGIN"
	printf '%s' "$SCALE_OUT"
	echo "BENCH-SCALE-END"
	say "bench total $((SECONDS - start)) s"
	ktap_finish
}

main
