#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 2400
#
# lab_bench_guest.sh: the in-guest half of the two-host bench
# (selftests/bench/lab_bench.sh, through selftests/run_lab.sh), run on
# both guests of the lab at once: guest0 (198.18.10.1) is the server of
# every measurement, guest1 (198.18.10.2) the client.  In each
# repetition the two guests measure, one after the other, on the same
# NICs and the same bridge:
#   eroce   eroce0 on each guest's NIC (the tree's eroce.ko and provider)
#   rxe     rxe0 (rdma_rxe) on the same NIC; eroce0 is deleted first and
#           rdma_rxe unloaded afterwards, since both want UDP port 4791
#   tcp     iperf3 and the 2-byte ping-pong (tcp_pingpong)
# For RDMA: ib_write_bw, ib_send_bw, ib_read_bw at 64 KiB; the 64 B
# message rate of ib_write_bw and ib_send_bw with one WR per
# ibv_post_send() and with BENCH_POST_LIST; ib_write_lat at 2 B; each
# at every QP count (perftest -q; latency 1 QP); the CPU pass (below).
# TCP: iperf3 -P QPS at 64 KiB and 64 B writes, tcp_pingpong.
#
# Output: KTAP, and lines the host driver collects:
#   BENCH-ROW: CSV   one per run, printed by the client (header first)
#   BENCH-FACT: CSV  mtu,rep,guest,pair,name,delta: what a pair's block of
#                    a repetition moved on that guest (eroce's counters,
#                    rdma_rxe's, UDP, link and qdisc drops)
#   BENCH-INFO: CSV  guest,name,value: the path (NIC driver, offloads,
#                    MTU, CPU, the ICRC's CRC-32 implementation)
# CPU seconds: busy jiffies of /proc/stat (everything but idle and
# iowait) on each guest around its side of the run, summed over both;
# the server tells the client its figure through the shared folder.
#
# Configuration (environment; lab_bench.sh passes it with --env):
#   BENCH_QUICK=1       a fast subset: 3 repetitions, 1 QP, shorter runs,
#                       the message rate of ib_write_bw only, CPU pass
#                       of ib_send_bw only
#   BENCH_REPS          repetitions (default 5)
#   BENCH_QPS           QP counts (default "1 4")
#   BENCH_PAIRS         default "eroce rxe tcp"
#   BENCH_BW_TESTS      default "ib_write_bw ib_send_bw ib_read_bw"
#   BENCH_RATE_TESTS    default "ib_write_bw ib_send_bw"
#   BENCH_POST_LIST     WRs per post of the second message rate (16;
#                       0 or 1: only one WR per post)
#   BENCH_BW_ITERS      iterations of a 64 KiB run, divided among the QPs
#                       (default 200)
#   BENCH_RATE_ITERS    iterations of a 64 B run (default 10000)
#   BENCH_LAT_ITERS     iterations of ib_write_lat and tcp_pingpong (1000)
#   BENCH_TCP_SECS      iperf3 seconds (default 2)
#   BENCH_CPU_TESTS     RDMA tests of the CPU pass (default "ib_send_bw
#                       ib_read_bw": perftest has no completion events
#                       for WRITE); 64 KiB, 1 QP, perftest -e (processes
#                       sleep until a completion: busy polling would
#                       make CPU = wall time), a 50-iteration run and one
#                       BENCH_CPU_ITERS (default 600) longer: the
#                       difference of busy CPU over the difference of
#                       bytes, connection setup cancelled out
#   BENCH_QP_TIMEOUT    perftest -u, the QPs' ACK timeout (default 18,
#                       4.096 us * 2^18 = 1.07 s; empty: perftest's 14,
#                       67 ms, with which a guest that TCG on a loaded
#                       host leaves unscheduled for longer than 67 ms
#                       times 7 retries fails its run)
#   BENCH_TIMEOUT       limit of each run in seconds (default 120)
#   BENCH_BUDGET        seconds of measurements (default 1800): a
#                       repetition is not started when the last one
#                       would not fit any more
set -u -o pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$HERE/../lib_rdma.sh"
# shellcheck source=../lib_lab.sh
. "$HERE/../lib_lab.sh"

if [ "${BENCH_QUICK:-0}" = 1 ]; then
	: "${BENCH_REPS:=3}" "${BENCH_QPS:=1}" "${BENCH_RATE_TESTS:=ib_write_bw}"
	: "${BENCH_BW_ITERS:=100}" "${BENCH_RATE_ITERS:=2000}" "${BENCH_LAT_ITERS:=300}"
	: "${BENCH_TCP_SECS:=1}" "${BENCH_CPU_TESTS=ib_send_bw}" "${BENCH_CPU_ITERS:=200}"
	: "${BENCH_BUDGET:=600}"
fi
REPS=${BENCH_REPS:-5}
QPS=${BENCH_QPS:-1 4}
PAIRS=${BENCH_PAIRS:-eroce rxe tcp}
BW_TESTS=${BENCH_BW_TESTS:-ib_write_bw ib_send_bw ib_read_bw}
RATE_TESTS=${BENCH_RATE_TESTS:-ib_write_bw ib_send_bw}
POST_LIST=${BENCH_POST_LIST:-16}
BW_ITERS=${BENCH_BW_ITERS:-200}
RATE_ITERS=${BENCH_RATE_ITERS:-10000}
LAT_ITERS=${BENCH_LAT_ITERS:-1000}
TCP_SECS=${BENCH_TCP_SECS:-2}
CPU_TESTS=${BENCH_CPU_TESTS-ib_send_bw ib_read_bw}
CPU_N1=50
CPU_ITERS=${BENCH_CPU_ITERS:-600}
QP_TIMEOUT=${BENCH_QP_TIMEOUT-18}
RUN_T=${BENCH_TIMEOUT:-120}
BUDGET=${BENCH_BUDGET:-1800}

BW_SIZE=65536
RATE_SIZE=64
PORT=18515
TCP_PORT=5201
PP_PORT=5202
TCP_PP=$HERE/tcp_pingpong
TMP=$RDMA_TMP/bench
HZ=$(getconf CLK_TCK)
MTU=
DEV=
GID=
FAILS=0
# measurement number: both guests count the same runs in the same order,
# so that NAME.SEQ is one run's name in the shared folder
SEQ=0

CSV_HDR="rep,mtu,pair,kind,test,size,qps,post,iters,bytes,gbps,mpps,lat_us,wall_s,cpu_cli_s,cpu_srv_s,cpu_s_per_gib,ok,note"

say() { echo "# $*"; }

is_client() { [ "$LAB_I" = 1 ]; }

# csv FIELD...: one BENCH-ROW line (client only)
csv() {
	local IFS=,
	echo "BENCH-ROW: $*"
}

fact() {
	local IFS=,
	echo "BENCH-FACT: $MTU,$*"
}

info() {
	echo "BENCH-INFO: $LAB_I,$1,$(tr ',\n' '; ' <<<"$2" | sed 's/[; ]*$//')"
}

# busy: busy jiffies of this guest (/proc/stat without idle and iowait),
# read without forking
busy() {
	local _c u n s _i _w q sq st
	read -r _c u n s _i _w q sq st _ </proc/stat
	echo $((u + n + s + q + sq + st))
}

now_ns() { date +%s%N; }

# ---- one run across the guests -------------------------------------------------

M_RC=0
M_OUT=
M_WALL=0
M_CLI=0
M_SRV=0

# mrun NAME PORT SECS CMD... [-- CLI_CMD...]: guest0 runs CMD as the
# server, guest1, once the server listens on TCP PORT, CMD (or CLI_CMD)
# with guest0's address in place of an argument @SRV@, else appended,
# both under `timeout SECS`.  On the
# client: M_RC (the client's status, else the server's), M_OUT (the
# client's output file), M_WALL (the client's seconds), M_CLI and M_SRV
# (busy CPU seconds of each guest during its side).  A server whose
# client ended is stopped 10 s later.  Returns 0 when M_RC is 0.
mrun() {
	local name=$1 port=$2 t=$3 pid wpid rc=0 b0 b1 n0 n1 v srv_rc srv_busy
	local -a scmd=() ccmd=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do scmd+=("$1"); shift; done
	if [ $# -gt 0 ]; then shift; ccmd=("$@"); else ccmd=("${scmd[@]}"); fi
	if [[ " ${ccmd[*]} " == *" @SRV@ "* ]]; then
		ccmd=("${ccmd[@]/#@SRV@/$(lab_ip 0)}")
	else
		ccmd+=("$(lab_ip 0)")
	fi
	SEQ=$((SEQ + 1))
	name=$name.$SEQ
	M_OUT=$TMP/$name.out
	M_RC=0 M_WALL=0 M_CLI=0 M_SRV=0
	if ! is_client; then
		timeout -k 5 "$t" "${scmd[@]}" >"$M_OUT" 2>&1 &
		pid=$!
		if ! wait_for 60 tcp_listening "" "$port"; then
			lab_signal "$name.ready" fail
			kill "$pid" 2>/dev/null
			wait "$pid"
			lab_signal "$name.srv" "1 0"
			return 1
		fi
		b0=$(busy)
		lab_signal "$name.ready" ok
		# stop a server left waiting by a client that failed: one
		# check a second, not to load the CPU being measured
		(
			while kill -0 "$pid" 2>/dev/null; do
				if [ -e "$LAB_SHARED/$name.client.1" ] || [ -e "$LAB_SHARED/_exit.1" ]; then
					sleep 10
					kill "$pid" 2>/dev/null
					exit 0
				fi
				sleep 1
			done
		) &
		wpid=$!
		wait "$pid" || rc=$?
		b1=$(busy)
		kill "$wpid" 2>/dev/null
		wait "$wpid" 2>/dev/null
		lab_signal "$name.srv" "$rc $((b1 - b0))"
		M_RC=$rc
		return "$rc"
	fi
	v=$(lab_get "$name.ready" 0) || v=fail
	if [ "$v" != ok ]; then
		echo "server not ready: $v" >"$M_OUT"
		M_RC=1
		lab_signal "$name.client"
		lab_get "$name.srv" 0 "$t" >/dev/null
		return 1
	fi
	b0=$(busy)
	n0=$(now_ns)
	timeout -k 5 "$t" "${ccmd[@]}" >"$M_OUT" 2>&1 || rc=$?
	n1=$(now_ns)
	b1=$(busy)
	lab_signal "$name.client"
	read -r srv_rc srv_busy <<<"$(lab_get "$name.srv" 0 $((t + 30)) || echo "1 0")"
	[ "$rc" != 0 ] || rc=${srv_rc:-1}
	M_RC=$rc
	M_WALL=$(awk -v a="$n0" -v b="$n1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
	M_CLI=$(awk -v j="$((b1 - b0))" -v hz="$HZ" 'BEGIN { printf "%.3f", j / hz }')
	M_SRV=$(awk -v j="${srv_busy:-0}" -v hz="$HZ" 'BEGIN { printf "%.3f", j / hz }')
	[ "$rc" = 0 ]
}

# pt_row: the client's perftest result row (the line after "#bytes")
pt_row() {
	awk '/#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { print; exit }' "$M_OUT"
}

# why: what went wrong with the last run, one CSV-safe phrase
why() {
	local w
	if grep -q "Can't produce a report" "$M_OUT" 2>/dev/null; then
		echo "no report (perftest clock calibration)"
		return
	fi
	w=$(grep -iE 'err|fail|couldn|unable|timeout|not ready' "$M_OUT" 2>/dev/null | head -n 1)
	echo "rc=$M_RC ${w//,/;}" | tr -d '\r' | cut -c1-100
}

failed() {
	FAILS=$((FAILS + 1))
	is_client && say "FAIL $*: $(why)"
}

# ---- RDMA ------------------------------------------------------------------------

pt_opts() {
	local o="-d $DEV -x $GID -p $PORT -F --report_gbits"
	[ -z "$QP_TIMEOUT" ] || o+=" -u $QP_TIMEOUT"
	echo "$o"
}

# bw_run REP PAIR KIND TEST SIZE QPS POST ITERS: one perftest bandwidth run
bw_run() {
	local rep=$1 p=$2 kind=$3 t=$4 size=$5 q=$6 post=$7 n=$8 opts row gbps mpps bytes cpu
	n=$((n / q))
	[ "$n" -ge 5 ] || n=5
	opts="$(pt_opts) -s $size -q $q"
	if [ "$post" -gt 1 ]; then
		n=$(( (n + post - 1) / post * post ))
		opts+=" -l $post"
	fi
	# shellcheck disable=SC2086
	mrun "$p-$t" "$PORT" "$RUN_T" $t $opts -n "$n"
	is_client || return 0
	bytes=$((n * q * size))
	row=$(pt_row)
	read -r _ _ _ gbps mpps _ <<<"$row"
	if [ "$M_RC" != 0 ] || [ -z "$row" ] ||
		! awk -v m="${mpps:-0}" 'BEGIN { exit !(m + 0 > 0 && m + 0 < 1e6) }'; then
		failed "$p $t size=$size qps=$q post=$post"
		csv "$rep" "$MTU" "$p" "$kind" "$t" "$size" "$q" "$post" "$n" "$bytes" "" "" "" \
			"$M_WALL" "$M_CLI" "$M_SRV" "" 0 "$(why)"
		return
	fi
	# Gb/s from the message rate (6 decimals; the Gb/s column has 2)
	gbps=$(awk -v m="$mpps" -v s="$size" 'BEGIN { printf "%.6f", m * 1e6 * s * 8 / 1e9 }')
	cpu=$(awk -v c="$M_CLI" -v s="$M_SRV" -v by="$bytes" 'BEGIN { printf "%.3f", (c + s) / (by / 1073741824) }')
	csv "$rep" "$MTU" "$p" "$kind" "$t" "$size" "$q" "$post" "$n" "$bytes" "$gbps" "$mpps" "" \
		"$M_WALL" "$M_CLI" "$M_SRV" "$cpu" 1 busy_poll
}

# lat_run REP PAIR: ib_write_lat at 2 B, t_typical
lat_run() {
	local rep=$1 p=$2 row lat
	# shellcheck disable=SC2046
	mrun "$p-lat" "$PORT" "$RUN_T" ib_write_lat $(pt_opts | sed 's/ --report_gbits//') -s 2 -n "$LAT_ITERS"
	is_client || return 0
	row=$(pt_row)
	# bytes iterations t_min t_max t_typical ...
	read -r _ _ _ _ lat _ <<<"$row"
	if [ "$M_RC" != 0 ] || [ -z "$row" ] ||
		! awk -v l="${lat:-0}" 'BEGIN { exit !(l + 0 > 0 && l + 0 < 1e7) }'; then
		failed "$p ib_write_lat"
		csv "$rep" "$MTU" "$p" lat ib_write_lat 2 1 1 "$LAT_ITERS" "" "" "" "" \
			"$M_WALL" "$M_CLI" "$M_SRV" "" 0 "$(why)"
		return
	fi
	csv "$rep" "$MTU" "$p" lat ib_write_lat 2 1 1 "$LAT_ITERS" "" "" "" "$lat" \
		"$M_WALL" "$M_CLI" "$M_SRV" "" 1 t_typical
}

# cpu_run REP PAIR TEST: the CPU pass (see the head of the file)
cpu_run() {
	local rep=$1 p=$2 t=$3 n ok=1 c1=0 c2=0 cli srv gbps row
	for n in "$CPU_N1" $((CPU_N1 + CPU_ITERS)); do
		# shellcheck disable=SC2046
		mrun "$p-$t-cpu" "$PORT" "$RUN_T" "$t" $(pt_opts) -s "$BW_SIZE" -e -n "$n" || ok=0
		is_client || continue
		row=$(pt_row)
		[ -n "$row" ] || ok=0
		c1=$c2 c2=$(awk -v c="$M_CLI" -v s="$M_SRV" 'BEGIN { print c + s }')
		cli=$M_CLI srv=$M_SRV
	done
	is_client || return 0
	read -r _ _ _ gbps _ <<<"$row"
	if [ $ok = 0 ]; then
		failed "$p $t CPU pass"
		csv "$rep" "$MTU" "$p" cpu "$t" "$BW_SIZE" 1 1 "$CPU_ITERS" "" "" "" "" \
			"$M_WALL" "$cli" "$srv" "" 0 "$(why)"
		return
	fi
	csv "$rep" "$MTU" "$p" cpu "$t" "$BW_SIZE" 1 1 "$CPU_ITERS" "$((CPU_ITERS * BW_SIZE))" \
		"$gbps" "" "" "$M_WALL" "$cli" "$srv" \
		"$(awk -v a="$c1" -v b="$c2" -v by="$((CPU_ITERS * BW_SIZE))" 'BEGIN { d = b - a; if (d > 0) printf "%.3f", d / (by / 1073741824) }')" \
		1 events_long_minus_short
}

rdma_block() {
	local rep=$1 p=$2 q t post
	for q in $QPS; do
		for t in $BW_TESTS; do
			bw_run "$rep" "$p" bw "$t" "$BW_SIZE" "$q" 1 "$BW_ITERS"
		done
		for t in $RATE_TESTS; do
			bw_run "$rep" "$p" rate "$t" "$RATE_SIZE" "$q" 1 "$RATE_ITERS"
			[ "$POST_LIST" -le 1 ] ||
				bw_run "$rep" "$p" rate "$t" "$RATE_SIZE" "$q" "$POST_LIST" "$RATE_ITERS"
		done
	done
	lat_run "$rep" "$p"
	for t in $CPU_TESTS; do
		cpu_run "$rep" "$p" "$t"
	done
}

# ---- TCP -------------------------------------------------------------------------

# tcp_bw REP KIND SIZE QPS: iperf3 -P QPS with SIZE-byte writes
tcp_bw() {
	local rep=$1 kind=$2 size=$3 q=$4 out gbps bytes
	mrun "tcp-$kind" "$TCP_PORT" $((TCP_SECS + 60)) iperf3 -s -1 -p "$TCP_PORT" -- \
		iperf3 -p "$TCP_PORT" -t "$TCP_SECS" -l "$size" -P "$q" -J -c
	is_client || return 0
	out=$(python3 - "$M_OUT" <<-'EOF'
	import json, sys
	try:
	    r = json.load(open(sys.argv[1]))["end"]["sum_received"]
	    print(r["bits_per_second"] / 1e9, int(r["bytes"]))
	except Exception:
	    print("fail 0")
	EOF
	)
	read -r gbps bytes <<<"$out"
	if [ "$M_RC" != 0 ] || [ "$gbps" = fail ] || [ "$bytes" = 0 ]; then
		failed "tcp iperf3 size=$size P=$q"
		csv "$rep" "$MTU" tcp "$kind" iperf3 "$size" "$q" 1 "" "" "" "" "" \
			"$M_WALL" "$M_CLI" "$M_SRV" "" 0 "$(why)"
		return
	fi
	csv "$rep" "$MTU" tcp "$kind" iperf3 "$size" "$q" 1 "" "$bytes" "$(printf %.4f "$gbps")" \
		"$(awk -v g="$gbps" -v s="$size" 'BEGIN { printf "%.6f", g * 1e9 / 8 / s / 1e6 }')" "" \
		"$M_WALL" "$M_CLI" "$M_SRV" \
		"$(awk -v c="$M_CLI" -v s="$M_SRV" -v by="$bytes" 'BEGIN { printf "%.3f", (c + s) / (by / 1073741824) }')" \
		1 iperf3
}

tcp_lat() {
	local rep=$1 lat
	mrun tcp-lat "$PP_PORT" "$RUN_T" "$TCP_PP" -s 0.0.0.0 "$PP_PORT" -- \
		"$TCP_PP" -c @SRV@ "$PP_PORT" "$LAT_ITERS"
	is_client || return 0
	lat=$(awk '/median_half_rtt_us/ { print $2 }' "$M_OUT")
	if [ "$M_RC" != 0 ] || [ -z "$lat" ]; then
		failed "tcp ping-pong"
		csv "$rep" "$MTU" tcp lat tcp_pingpong 2 1 1 "$LAT_ITERS" "" "" "" "" \
			"$M_WALL" "$M_CLI" "$M_SRV" "" 0 "$(why)"
		return
	fi
	csv "$rep" "$MTU" tcp lat tcp_pingpong 2 1 1 "$LAT_ITERS" "" "" "" "$lat" \
		"$M_WALL" "$M_CLI" "$M_SRV" "" 1 half_rtt
}

tcp_block() {
	local rep=$1 q
	for q in $QPS; do
		tcp_bw "$rep" bw "$BW_SIZE" "$q"
		tcp_bw "$rep" rate "$RATE_SIZE" "$q"
	done
	if [ -x "$TCP_PP" ]; then
		tcp_lat "$rep"
	else
		say "no $TCP_PP (make -C selftests/bench): no TCP latency"
	fi
}

# ---- the path's counters ---------------------------------------------------------

# path_snap FILE: "name value" lines of the path's counters on this guest:
# UDP (/proc/net/snmp), the NIC's (ip -s link) and its qdiscs' drops
path_snap() {
	{
		awk '$1 == "Udp:" && $2 !~ /^[0-9]+$/ { for (i = 2; i <= NF; i++) c[i] = $i; next }
			$1 == "Udp:" { for (i = 2; i <= NF; i++) print "udp_" c[i], $i }' /proc/net/snmp
		for c in rx_packets tx_packets rx_dropped tx_dropped rx_errors tx_errors rx_missed_errors rx_over_errors; do
			echo "link_$c $(read_file "/sys/class/net/$LAB_IF/statistics/$c")"
		done
		tc -s qdisc show dev "$LAB_IF" 2>/dev/null |
			awk '/dropped/ { for (i = 1; i < NF; i++) { if ($i == "(dropped") d += $(i + 1); if ($i == "overlimits") o += $(i + 1); if ($i == "requeues") r += $(i + 1) } }
				END { print "qdisc_dropped", d + 0; print "qdisc_overlimits", o + 0; print "qdisc_requeues", r + 0 }' | tr -d ','
		[ -z "$DEV" ] || stat_all "$DEV/1" | sed 's/^/rdma_/'
	} >"$1"
}

# path_facts REP PAIR FILE: what changed since FILE, as BENCH-FACT lines
path_facts() {
	local rep=$1 p=$2 name d
	path_snap "$TMP/snap.now"
	while read -r name d; do
		fact "$rep" "$LAB_I" "$p" "$name" "$d"
	done < <(awk 'NR == FNR { b[$1] = $2; next } ($1 in b) { print $1, $2 - b[$1] }' "$3" "$TMP/snap.now")
}

# ---- the pairs ---------------------------------------------------------------------

# shellcheck disable=SC2317  # called through run
pair_up() {
	case "$1" in
	eroce) eroce_load && provider_install && lab_rdma_link eroce0 eroce ;;
	rxe) rxe_load && lab_rdma_link rxe0 rxe ;;
	esac
}

# shellcheck disable=SC2317  # called through run
pair_down() {
	case "$1" in
	eroce) rdma link del eroce0 ;;
	rxe) rdma link del rxe0 && wait_for 10 rdma_dev_gone rxe0 && modprobe -r rdma_rxe ;;
	esac
}

# block REP PAIR: one pair's measurements of a repetition; false when the
# pair could not be set up on this guest or the other.  pair_up and
# pair_down run in `run`'s subshell: DEV is set here.
block() {
	local rep=$1 p=$2 ok=ok v
	if ! run pair_up "$p"; then
		say "guest$LAB_I: $p setup failed: $(tail -n 3 <<<"$LAST_OUT" | tr '\n' ' ')"
		ok=fail
	fi
	lab_signal "$rep.$p.up" "$ok"
	v=$(lab_get "$rep.$p.up" "$(lab_peer)" 2>/dev/null)
	if [ "$v" != ok ] || [ "$ok" != ok ]; then
		say "rep $rep: $p not measured (this guest: $ok, the other: ${v:-no word})"
		run pair_down "$p"
		return 1
	fi
	DEV=
	[ "$p" = tcp ] || DEV=${p}0
	[ -z "$DEV" ] || GID=$(gid_index_of "$DEV" "$LAB_IP")
	path_snap "$TMP/snap.$p"
	if [ "$p" = tcp ]; then tcp_block "$rep"; else rdma_block "$rep" "$p"; fi
	path_facts "$rep" "$p" "$TMP/snap.$p"
	lab_barrier "$rep.$p.done" >/dev/null
	run pair_down "$p" || say "guest$LAB_I: $p teardown: $(tail -n 2 <<<"$LAST_OUT" | tr '\n' ' ')"
	DEV=
}

# ---- the path ----------------------------------------------------------------------

path_info() {
	local k
	info nic "$LAB_IF"
	info driver "$(ethtool -i "$LAB_IF" 2>/dev/null | awk -F': ' '$1 == "driver" { print $2 }')"
	info mtu "$(read_file "/sys/class/net/$LAB_IF/mtu")"
	info rx_queues "$(find "/sys/class/net/$LAB_IF/queues/" -maxdepth 1 -name "rx-*" | wc -l)"
	info offloads "$(ethtool -k "$LAB_IF" 2>/dev/null | awk -F': ' '
		/^(rx-checksumming|tx-checksumming|tcp-segmentation-offload|generic-segmentation-offload|generic-receive-offload|tx-udp-segmentation|rx-udp-gro-forwarding|rx-gro-list):/ {
			printf "%s %s ", $1, $2 }')"
	info cpus "$(nproc)"
	k=$(grep -o -w -E 'pclmulqdq|sse4_2|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')
	info cpu_flags "${k:-none of pclmulqdq sse4_2 avx2}"
	info kernel "$(uname -r)"
}

# icrc_info: which CRC-32 computes eroce's ICRC (its load-time log line),
# and the crypto API's crc32 drivers (there once eroce asked for one)
icrc_info() {
	info eroce_icrc "$(dmesg | sed -n 's/.*eroce: \(ICRC by .*\|no crc32 in the crypto API.*\)$/\1/p' | tail -n 1)"
	info crc32_drivers "$(awk '/^name/ { n = $3 } /^driver/ { d = $3 } /^priority/ { if (n == "crc32") printf "%s (priority %s) ", d, $3 }' /proc/crypto)"
}

# ---- main --------------------------------------------------------------------------

main() {
	local start=$SECONDS rep p go rlast=0 rt0 ran=0

	mkdir -p "$TMP"
	ktap_plan 4
	[ "$LAB_N" = 2 ] || ktap_bail "the bench needs 2 guests, has $LAB_N"
	if lab_setup >"$TMP/lab_setup.out" 2>&1; then
		ktap_ok nic_up
	else
		ktap_diag "$(tail -n 5 "$TMP/lab_setup.out")"
		ktap_bail "NIC setup failed"
	fi
	MTU=$(read_file "/sys/class/net/$LAB_IF/mtu")
	# shellcheck disable=SC2086  # $PING may be "busybox ping"
	if lab_barrier up >/dev/null && $PING -c 3 -W 5 "$(lab_ip "$(lab_peer)")" >/dev/null; then
		ktap_ok peer_reachable
	else
		ktap_bail "peer $(lab_ip "$(lab_peer)") not reachable"
	fi
	say "config: reps=$REPS qps='$QPS' pairs='$PAIRS' bw='$BW_TESTS' rate='$RATE_TESTS' post_list=$POST_LIST"
	say "config: bw_iters=$BW_ITERS rate_iters=$RATE_ITERS lat_iters=$LAT_ITERS tcp_secs=$TCP_SECS cpu='$CPU_TESTS' cpu_iters=$CPU_ITERS qp_timeout=${QP_TIMEOUT:-perftest} budget=$BUDGET"
	path_info
	is_client && echo "BENCH-ROW: $CSV_HDR"
	for ((rep = 1; rep <= REPS; rep++)); do
		# the client decides whether a repetition still fits the budget
		if is_client; then
			go=1
			[ $((SECONDS - start + rlast)) -le "$BUDGET" ] || go=0
			lab_signal "rep$rep" "$go"
		else
			go=$(lab_get "rep$rep" 1) || go=0
		fi
		if [ "$go" != 1 ]; then
			say "time budget ${BUDGET}s: repetitions $rep..$REPS left out (BENCH_BUDGET)"
			break
		fi
		rt0=$SECONDS
		say "MTU $MTU repetition $rep/$REPS (t=$((SECONDS - start)) s)"
		for p in $PAIRS; do
			block "$rep" "$p" || FAILS=$((FAILS + 1))
			[ "$p" != eroce ] || [ "$rep" != 1 ] || icrc_info
		done
		ran=$rep
		rlast=$((SECONDS - rt0))
	done
	say "guest$LAB_I: $ran repetitions in $((SECONDS - start)) s, $FAILS failed runs or blocks"
	ktap_result repetitions "$([ "$ran" -ge 1 ]; echo $?)" "no repetition ran"
	ktap_result measurements "$([ "$FAILS" = 0 ]; echo $?)" "$FAILS failed runs or blocks"
	ktap_finish
}

main
