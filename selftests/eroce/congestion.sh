#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 400
#
# congestion.sh: rate limits and ECN-driven rate control
# (Documentation/admin-guide.rst "Rate limits" and "Congestion control").
# Machines differ, and a loaded one more: the caps are chosen from the
# unpaced rate measured in the same guest (a quarter of it, at most
# 40 Mb/s), so that the machine can always send faster than the cap.
#   - max_rate_mbps CAP on eroce1: ib_write_bw (64 KiB) runs at most 10%
#     above CAP (the pacer counts every byte of the frame: 94% of it is
#     payload) and at least a quarter of it.
#   - ibv_modify_qp_rate_limit CAP on one QP (eroce_integrity -L): its
#     WRITEs likewise; rdma -dd shows rate_limit_kbps.  Stopped 2 s by
#     its flow-control window once its WRITEs flow at the cap, it sends no
#     burst for the time it waited.
#   - ECN: a tc pedit action at veth2's ingress marks every RoCE packet
#     CE (ECN bits 11; the IPv4 checksum fixed by act_csum; the ICRC does
#     not cover the TOS byte).  With cc dcqcn on both devices: eroce2
#     counts ecn_marked_packets_rcvd and answers with CNPs (cnp_sent),
#     which tshark decodes as opcode 0x81 with BECN set; eroce1 counts
#     cnp_rcvd, cnp_handled and rate_decreases, and the transfer
#     completes.  With cc none on eroce1, its cnp_rcvd moves but it
#     handles none.
#   - CNP spacing: eroce2 sends at most one CNP per cnp_interval_us per
#     QP (4 ms or more: 16 marked packets or more per interval, and more
#     than the few ms by which a capture timestamp can come late).  From
#     the capture timestamps, per destination QP over each run, any k
#     successive intervals between CNPs span at least k - 1 intervals;
#     in the cc none run (eroce1 unpaced) the limiter must have held back
#     at least half of the marked packets' CNPs.
# On the debug kernel (lib.sh) every run moves about an eighth of its
# messages (perftest at least 5), the per-QP rate limit tests run at an
# eighth of CAP for the same seconds (an eighth of the bytes, and the
# stall still falls inside the transfer), timeouts are stretched, and
# the rate and spacing bounds are skips when missed; counters, transfers
# and the wire format stay required.  The rate limit after a stall is
# left out there (lib.sh debug_subset): the per-QP cap runs in
# test_qp_rate_limit, the flow-control window in tuning.sh, and what it
# adds is a rate bound.
# Run: selftests/run_vm.sh selftests/eroce/congestion.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

T1=$IBSYS/eroce1/tuning
T2=$IBSYS/eroce2/tuning
SRV=198.18.0.2
B1=$RDMA_TMP/b1
B2=$RDMA_TMP/b2
INTEGRITY="$EROCE_ROOT/selftests/tools/eroce_integrity"
PCAP=$RDMA_TMP/cnp.pcap
# the pacer counts a packet's frame (Ethernet header and FCS, IPv4, UDP,
# BTH, payload, ICRC, and the RETH of a WRITE's first packet): of a
# 64 KiB WRITE at MTU 1024 (64 packets, 69520 bytes) 94.27% is payload
PAYLOAD_SHARE=0.9427
MARK="tc -n $NS2 filter add dev veth2 ingress protocol ip flower ip_proto udp dst_port 4791 action pedit ex munge ip tos set 3 retain 3 pipe action csum ip4h"
FREE=			# unpaced ib_write_bw, MiB/s (perftest's MB is 2^20)
CAP=			# the cap under test, Mb/s

# bw_avg: perftest's "BW average[MB/sec]" of the last run (client side)
bw_avg() {
	awk '/#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ { print $4; exit }' <<<"$CLI_OUT"
}

write_bw() {
	srv_cli 120 "$NS2" "$NS1" ib_write_bw -d eroce2 -x "$G2" -s 65536 -n "$1" -- \
		ib_write_bw -d eroce1 -x "$G1" -s 65536 -n "$1" "$SRV"
}

# calc NAME=VALUE... EXPR: print the awk expression EXPR of the variables
calc() {
	local -a v=()
	while [ $# -gt 1 ]; do v+=(-v "$1"); shift; done
	awk "${v[@]}" "BEGIN { print ($1) }"
}

# cap_check NAME MIBS [LOW [MBPS]]: one subtest, MIBS (payload MiB/s)
# paced at MBPS (default CAP) Mb/s: at most 10% above the cap's payload
# rate (the pacer never sends faster than the cap, but for 4 ms of
# credit at the start) and at least LOW (default a quarter) of it.  The
# upper bound is the cap's promise; the lower one only catches a pacer
# that holds back several times too long (the machine sent four times
# the cap unpaced moments before, so it would have to run sixteen times
# slower now to miss it on its own).  A rate bound (ktap_bound); no rate
# at all (the transfer failed) fails everywhere.
cap_check() {
	local name=$1 m=${2:-0} low=${3:-0.25} cap=${4:-$CAP} lim lo hi report=ktap_bound
	[ -n "${2:-}" ] || report=ktap_result
	lim=$(calc c="$cap" s="$PAYLOAD_SHARE" 'c * 1e6 / 8 / 1048576 * s')
	lo=$(calc l="$lim" f="$low" 'l * f')
	hi=$(calc l="$lim" 'l * 1.1')
	$report "$name" "$(calc m="$m" lo="$lo" hi="$hi" '(m >= lo && m <= hi) ? 0 : 1')" \
		"${2:-no rate} MiB/s at $cap Mb/s, want $(printf '%.2f..%.2f' "$lo" "$hi") (payload at the cap: $(printf '%.2f' "$lim"))"
}

test_max_rate() {
	local capped n

	echo default >"$T1/profile"
	if write_bw "$(perftest_iters 100)" && perftest_ok; then
		FREE=$(bw_avg)
	else
		srv_cli_diag
	fi
	# a quarter of the unpaced wire rate, 1..40 Mb/s; about 2.5 s of
	# transfer at the cap
	CAP=$(calc f="${FREE:-0}" 'int(f * 1048576 * 8 / 1e6 / 4)')
	[ "$CAP" -ge 1 ] || CAP=1
	[ "$CAP" -le 40 ] || CAP=40
	n=$(calc c="$CAP" s="$PAYLOAD_SHARE" 'int(c * 1e6 / 8 * s * 2.5 / 65536)')
	[ "$n" -ge 10 ] || n=10
	n=$(perftest_iters "$n")
	echo "$CAP" >"$T1/max_rate_mbps"
	if write_bw "$n" && perftest_ok; then
		capped=$(bw_avg)
	else
		srv_cli_diag
	fi
	echo 0 >"$T1/max_rate_mbps"
	ktap_diag "ib_write_bw 64 KiB: unpaced ${FREE:-failed} MiB/s; max_rate_mbps $CAP, $n messages: ${capped:-failed} MiB/s"
	cap_check max_rate_mbps_caps_write_bw "${capped:-}"
}

# per QP: eroce_integrity's client sets ibv_modify_qp_rate_limit CAP on
# its one QP; its WRITE rate stays under the cap while rdma -dd resource
# show qp shows rate_limit_kbps (uverbs' QUERY_QP cannot report it to
# userspace)
test_qp_rate_limit() {
	local rc=0 spid cpid mib dump=$RDMA_TMP/qp_rate kb kbps

	echo default >"$T1/profile"
	# about 2.5 s at the cap, in one round; on the debug kernel an eighth
	# of the bytes at an eighth of the cap: the QP still lives long
	# enough for rdma -dd to see it
	kbps=$(debug_scaled $((CAP * 1000)))
	kb=$(calc c="$CAP" 'int(c * 1e6 / 8 * 2.5 / 1024)')
	[ "$kb" -ge 256 ] || kb=256
	kb=$(debug_scaled "$kb")
	ns2 "$INTEGRITY" -d eroce2 -g "$G2" -p 18700 -t "$(tmo 120)" >"$RDMA_TMP/srv.out" 2>&1 &
	spid=$!
	wait_for 60 tcp_listening "$NS2" 18700
	: >"$dump"
	ns1 "$INTEGRITY" -d eroce1 -g "$G1" -p 18700 -t "$(tmo 120)" -q 1 -o write \
		-b "${kb}k" -r "${kb}k" -L "$kbps" "$SRV" >"$RDMA_TMP/cli.out" 2>&1 &
	cpid=$!
	while kill -0 "$cpid" 2>/dev/null; do
		rdma -dd resource show qp link eroce1/1 >>"$dump" 2>/dev/null
		sleep 0.2
	done
	wait "$cpid" || rc=1
	wait "$spid" || rc=1
	mib=$(awk '/^write: ok/ { for (i = 1; i < NF; i++) if ($(i + 1) == "MiB/s") print $i }' \
		"$RDMA_TMP/cli.out")
	ktap_diag "rate limit $kbps kb/s: WRITE ${mib:-failed} MiB/s; $(grep -o 'drv_rate_limit_kbps [0-9]*' "$dump" | sort -u | tr '\n' ' ')"
	[ $rc = 0 ] || ktap_diag "$(tail -n 3 "$RDMA_TMP/cli.out" "$RDMA_TMP/srv.out")"
	[ $rc = 0 ] || mib=
	# eroce_integrity's WRITEs wait for a TCP handshake per round, which
	# ib_write_bw's CAP does not know: a quarter of the cap at least
	cap_check qp_rate_limit_caps_write "$mib" 0.25 "$(calc k="$kbps" 'k / 1000')"
	ktap_result qp_rate_limit_shown "$(grep -q "drv_rate_limit_kbps $kbps\b" "$dump"; echo $?)" \
		"no QP with drv_rate_limit_kbps $kbps in $(grep -c . "$dump") lines of rdma -dd resource show qp"
}

# on_schedule KBPS: over half a second or more eroce1 sent between 0.4
# and 1.15 times KBPS (tx_bytes, a little less than the frames the pacer
# counts): flowing, and not paying back a backlog; the ratio in
# SCHEDULE_RATE.  The time is each reading's own (reading the counters
# takes a while under TCG)
SCHEDULE_RATE=
SCHEDULE_SEEN=
on_schedule() {
	local a b ta tb
	a=$(stat_get eroce1/1 tx_bytes)
	ta=$(now)
	sleep 0.5
	b=$(stat_get eroce1/1 tx_bytes)
	tb=$(now)
	SCHEDULE_RATE=$(calc a="${a:-0}" b="${b:-0}" ta="$ta" tb="$tb" k="$1" \
		'(b - a) * 8 / (tb - ta) / (k * 1000)')
	SCHEDULE_SEEN+=" $SCHEDULE_RATE"
	[ "$(calc r="$SCHEDULE_RATE" '(r >= 0.4 && r <= 1.15) ? 1 : 0')" = 1 ]
}

# after a stall: eroce_integrity's QP, capped at CAP by its rate limit,
# is stopped for 2 s by its flow-control window (max_inflight_pkts 8,
# ACKs delayed 400 ms at veth2, min_rto_us 2 s so that no timeout
# fires); then the delay goes (the ACKs already delayed keep their time)
# and the window opens.  The QP kept the debt it had when it stopped but
# earned nothing while it waited: in any second that starts within a
# second after the delay went it sends at most 1.3 times its cap (a
# pacer that counts the wait as owed bursts a second's worth: measured
# 1.94 times the cap).  The bytes are the IP
# lengths of eroce1's RoCE frames on veth1 by their capture timestamps
# (less than the frame the pacer counts); the time the delay went is
# taken just before, so the window can only start early.  In the second
# before it the QP must have sent less than half its cap (it stalled).
test_qp_rate_limit_after_stall() {
	local spid cpid kb t rate_before rate_after kbps
	local pcap=$RDMA_TMP/stall.pcap

	echo default >"$T1/profile"
	# about 12 s at the cap; on the debug kernel an eighth of the bytes at
	# an eighth of the cap, so that the stall 2 s in still hits the
	# transfer
	kbps=$(debug_scaled $((CAP * 1000)))
	kb=$(calc c="$CAP" 'int(c * 1e6 / 8 * 12 / 1024)')
	kb=$(debug_scaled "$kb")
	cap_start "$NS1" veth1 "$pcap" "src host 198.18.0.1 and udp dst port 4791" ||
		ktap_diag "dumpcap did not start: $(cat "$RDMA_TMP/dumpcap.err")"
	ns2 "$INTEGRITY" -d eroce2 -g "$G2" -p 18701 -t "$(tmo 180)" >"$RDMA_TMP/stall_srv.out" 2>&1 &
	spid=$!
	wait_for 60 tcp_listening "$NS2" 18701
	ns1 "$INTEGRITY" -d eroce1 -g "$G1" -p 18701 -t "$(tmo 180)" -q 1 -o write \
		-b "${kb}k" -r "${kb}k" -L "$kbps" "$SRV" >"$RDMA_TMP/stall_cli.out" 2>&1 &
	cpid=$!
	# the stall comes once the WRITEs flow at the cap, however long the
	# connection took: a QP that fell behind its schedule (TCG translates
	# the first packets' code slowly, a loaded host deschedules the
	# guest) is owed up to a second and pays it back faster than the cap,
	# stall or not; that is not the burst this looks for
	wait_for 60 on_schedule "$kbps" ||
		ktap_diag "eroce1 was not sending at its cap after 60 s (times the cap:$SCHEDULE_SEEN)"
	echo 2000000 >"$T1/min_rto_us"
	echo 8 >"$T1/max_inflight_pkts"
	netem_set "$NS2" veth2 delay 400ms
	sleep 2
	t=$(now)
	netem_set "$NS2" veth2 delay 0ms
	echo default >"$T1/profile"
	wait "$cpid"
	ktap_result qp_rate_limit_after_stall_transfer_ok $? \
		"$(tail -n 2 "$RDMA_TMP/stall_cli.out" "$RDMA_TMP/stall_srv.out" | tr '\n' ' ')"
	wait "$spid"
	netem_clear "$NS2" veth2
	cap_stop
	# bytes per second at the cap, in the second before and after t (the
	# capture decoded once: tshark takes some 20 s to start under TCG)
	tshark -r "$pcap" -T fields -e frame.time_epoch -e ip.len \
		>"$pcap.txt" 2>/dev/null
	read -r rate_before rate_after < <(awk -v t="$t" -v c="$((kbps * 1000 / 8))" '
			$1 >= t - 1 && $1 < t { b += $2 }
			# 50 ms bins from t on
			$1 >= t && $1 < t + 2 { a[int(($1 - t) * 20)] += $2 }
			$1 >= t + 2 { late = 1 }
			END {
				for (k = 0; k <= 20; k++) {
					s = 0
					for (i = k; i < k + 20; i++)
						s += a[i]
					if (s > m)
						m = s
				}
				printf "%.3f %.3f\n", b / c, late ? m / c : -1
			}' "$pcap.txt")
	ktap_diag "rate limit $kbps kb/s, 2 s window stall: ${rate_before:-?} times the cap in the second before the ACKs came back, at most ${rate_after:-?} in a second after (times the cap before the stall, per half second:$SCHEDULE_SEEN)"
	ktap_diag "times the cap per 250 ms from 1 s before: $(awk -v t="$t" \
		-v c="$((kbps * 1000 / 8))" '
			$1 >= t - 1 && $1 < t + 2 { b[int(($1 - t + 1) * 4)] += $2 }
			END { for (i = 0; i < 12; i++) printf "%.2f ", b[i] * 4 / c }' "$pcap.txt")"
	# rate bounds (no capture to measure from fails everywhere)
	local report=ktap_bound
	[ -n "${rate_before:-}" ] && [ -n "${rate_after:-}" ] || report=ktap_result
	$report qp_rate_limit_after_stall_stalled \
		"$(calc r="${rate_before:-1}" '(r < 0.5) ? 0 : 1')" \
		"${rate_before:-no capture} times the cap while stalled, want < 0.5"
	$report qp_rate_limit_after_stall_no_burst \
		"$(calc r="${rate_after:--1}" '(r > 0 && r <= 1.3) ? 0 : 1')" \
		"${rate_after:-no capture} times the cap in a second after the stall, want 0..1.3 (-1: the transfer ended within 2 s)"
}

# cnp_frames FROM TO: "epoch destqp opcode becn" of every CNP eroce2 sent
# between FROM and TO (BECN is bit 6 of the BTH's fifth byte; tshark has
# no field for it)
cnp_frames() {
	awk -v a="$1" -v b="$2" '$1 >= a && $1 <= b' "$PCAP.txt" |
		while read -r t q op p; do
			p=${p//:/}
			echo "$t $q $op $(( (0x${p:8:2} & 0x40) != 0 ))"
		done
}

# marked_run CC1 N: ib_write_bw of N messages with every packet into
# eroce2 marked CE, cc dcqcn on eroce2 and cc CC1 on eroce1; the run's
# time window in RUN_FROM/RUN_TO
marked_run() {
	echo dcqcn >"$T2/cc"
	echo "$1" >"$T1/cc"
	stat_snap eroce1/1 "$B1"
	stat_snap eroce2/1 "$B2"
	tc -n "$NS2" qdisc add dev veth2 clsact && eval "$MARK"
	RUN_FROM=$(now)
	write_bw "$2"
	local rc=$?
	RUN_TO=$(now)
	tc -n "$NS2" qdisc del dev veth2 clsact
	ktap_diag "cc $1, $2 messages: eroce1 $(stat_changes eroce1/1 "$B1")"
	ktap_diag "cc $1: eroce2 $(stat_changes eroce2/1 "$B2")"
	[ $rc = 0 ] && perftest_ok || { srv_cli_diag; return 1; }
}

# spacing FRAMES GAP_US: per destination QP, any k successive intervals
# between the CNPs in FRAMES must span at least k - 1 times GAP_US.  Not
# every pair at least GAP_US apart: a CNP's capture timestamp comes after
# the driver's clock read, later by the time between them (seen: up to
# 0.8 ms at 1 ms intervals, the first CNP of a run going through code TCG
# has not translated yet, or a vCPU descheduled there), which can bring
# one pair closer than the interval but cannot accumulate: t_j - t_i >=
# (j - i) * GAP_US in the driver's clock, the capture adds d_j - d_i >=
# -d_i, and d_i stays below one interval.  A limiter that does not limit,
# or sends at 80% of the interval, fails after a few CNPs.  Prints the
# verdict ("ok" or what failed), "|", and per QP the CNPs, their span, the
# closest pair and the largest shortfall (in intervals).
spacing() {
	sort -k2,2 -k1,1n <<<"$1" | awk -v g="$2" '{ t = $1 * 1e6; q = $2
		if (q in n) {
			d = t - last[q]
			if (d < min[q]) min[q] = d
		} else {
			min[q] = 1e18; top[q] = -1e18; drop[q] = 0; first[q] = t
		}
		s = t - n[q] * g
		if (s > top[q]) top[q] = s
		if (top[q] - s > drop[q]) drop[q] = top[q] - s
		last[q] = t; n[q]++ }
	END {
		bad = ""; info = ""
		for (q in n) {
			info = info sprintf(" qp %s: %d CNPs over %.0f us, closest %.0f us, short by %.2f intervals at most;",
				q, n[q], last[q] - first[q], min[q], drop[q] / g)
			if (drop[q] > g)
				bad = bad sprintf(" qp %s: CNPs short of their intervals by %.2f, want <= 1;", q, drop[q] / g)
		}
		if (info == "") { print "no CNPs"; exit }
		print (bad == "" ? "ok" : bad) "|" info
	}'
}

test_ecn_dcqcn() {
	local frames n bad gap msgs v1 v2 marked sent a1 b1

	# 16 marked packets or more per interval, even on a slow machine
	# (FREE MiB/s of 1 KiB packets is about FREE packets per ms)
	gap=$(calc f="${FREE:-0}" 'f > 0 ? int(16000 / f) : 50000')
	[ "$gap" -ge 4000 ] || gap=4000
	[ "$gap" -le 50000 ] || gap=50000
	echo "$gap" >"$T2/cnp_interval_us"
	# about half a second unpaced in the cc none run: 100 intervals
	msgs=$(calc f="${FREE:-0}" 'int(f * 8)')
	[ "$msgs" -ge 30 ] || msgs=30
	[ "$msgs" -le 1000 ] || msgs=1000
	msgs=$(perftest_iters "$msgs")

	# not through `require`: its subshell would lose CAP_PID; CNPs only
	cap_start "$NS2" veth2 "$PCAP" "udp port 4791 and udp[8] == 0x81" ||
		ktap_bail "dumpcap did not start"
	marked_run dcqcn "$(perftest_iters 30)"
	ktap_result dcqcn_transfer_under_marking $? "ib_write_bw failed"
	a1=$RUN_FROM b1=$RUN_TO
	for c in ecn_marked_packets_rcvd cnp_sent; do
		ktap_result "receiver_$c" "$([ "$(stat_delta eroce2/1 "$B2" $c)" -gt 0 ]; echo $?)" \
			"eroce2 $c did not move"
	done
	for c in cnp_rcvd cnp_handled rate_decreases; do
		ktap_result "sender_$c" "$([ "$(stat_delta eroce1/1 "$B1" $c)" -gt 0 ]; echo $?)" \
			"eroce1 $c did not move"
	done

	marked_run none "$msgs"
	ktap_result cc_none_transfer_under_marking $? "ib_write_bw failed"
	ktap_result cc_none_ignores_cnps "$([ "$(stat_delta eroce1/1 "$B1" cnp_rcvd)" -gt 0 ] &&
		[ "$(stat_delta eroce1/1 "$B1" cnp_handled)" = 0 ]; echo $?)" \
		"eroce1 with cc none: cnp_rcvd +$(stat_delta eroce1/1 "$B1" cnp_rcvd), cnp_handled +$(stat_delta eroce1/1 "$B1" cnp_handled)"
	marked=$(stat_delta eroce2/1 "$B2" ecn_marked_packets_rcvd)
	sent=$(stat_delta eroce2/1 "$B2" cnp_sent)

	cap_stop
	tshark -r "$PCAP" -d udp.port==4791,infiniband -Y "ip.src == $SRV && infiniband.bth.opcode == 129" \
		-T fields -e frame.time_epoch -e infiniband.bth.destqp -e infiniband.bth.opcode \
		-e udp.payload >"$PCAP.txt" 2>/dev/null

	frames=$(cnp_frames "$a1" "$b1")
	n=$(grep -c . <<<"$frames")
	bad=$(awk '$3 != 129 || $4 != 1' <<<"$frames" | head -n 3)
	ktap_diag "cc dcqcn: $n CNP frames from eroce2, e.g. $(head -n 1 <<<"$frames")"
	ktap_result cnp_on_the_wire "$([ "$n" -gt 0 ] && [ -z "$bad" ]; echo $?)" \
		"$n CNPs decoded; not opcode 0x81 with BECN: $bad"

	v1=$(spacing "$frames" "$gap")
	v2=$(spacing "$(cnp_frames "$RUN_FROM" "$RUN_TO")" "$gap")
	ktap_diag "cnp_interval_us $gap; cc dcqcn:${v1#*|}"
	ktap_diag "cc none: $marked marked packets, $sent CNPs:${v2#*|}"
	# a timing bound (that CNPs went out at all is receiver_cnp_sent's)
	ktap_bound cnp_spacing "$([ "${v1%%|*}" = ok ] && [ "${v2%%|*}" = ok ] &&
		[ "${sent:-0}" -ge 5 ] && [ "${marked:-0}" -ge $((2 * ${sent:-0})) ]; echo $?)" \
		"dcqcn: ${v1%%|*}; none: ${v2%%|*}; $sent CNPs for $marked marked packets (want >= 5, at most half)"
	echo 50 >"$T2/cnp_interval_us"
	echo default >"$T1/profile"
	echo default >"$T2/profile"
}

ktap_plan 17
require eroce_pair_setup
require pair_gids
pair_gids
require command -v dumpcap tshark
kmsg_mark
test_max_rate
test_qp_rate_limit
debug_subset qp_rate_limit_after_stall_transfer_ok qp_rate_limit_after_stall_stalled \
	qp_rate_limit_after_stall_no_burst || test_qp_rate_limit_after_stall
test_ecn_dcqcn
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
