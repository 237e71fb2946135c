#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 400
#
# congestion.sh: rate limits and ECN-driven rate control
# (Documentation/admin-guide.rst "Rate limits" and "Congestion control").
#   - max_rate_mbps 40 on eroce1: ib_write_bw (64 KiB) runs within 10% of
#     the cap (PAYLOAD_LO below), while the same run unpaced is faster.
#   - ibv_modify_qp_rate_limit 40 Mb/s on one QP (eroce_integrity -L):
#     its WRITEs run within 10% of it; rdma -dd shows rate_limit_kbps.
#   - ECN: a tc pedit action at veth2's ingress marks every RoCE packet
#     CE (ECN bits 11; the IPv4 checksum fixed by act_csum; the ICRC does
#     not cover the TOS byte).  With cc dcqcn on both devices: eroce2
#     counts ecn_marked_packets_rcvd and answers with CNPs (cnp_sent; at
#     most one per cnp_interval_us per QP), which tshark decodes as
#     opcode 0x81 with BECN set; eroce1 counts cnp_rcvd, cnp_handled and
#     rate_decreases, and the transfer completes.  With cc none on
#     eroce1, its cnp_rcvd moves but it handles none.
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
# 40 Mb/s on the wire is 4.77 MiB/s; with 1024-byte packets (BTH, RETH on
# the first, ICRC, Ethernet/IP/UDP headers) about 94% of it is payload:
# within 10% means payload >= 0.9 * 0.94 * 4.77, and the wire rate (above
# the payload rate) <= 1.1 * 4.77
PAYLOAD_LO=4.03
WIRE_HI=5.25
MARK="tc -n $NS2 filter add dev veth2 ingress protocol ip flower ip_proto udp dst_port 4791 action pedit ex munge ip tos set 3 retain 3 pipe action csum ip4h"

# bw_avg: perftest's "BW average[MB/sec]" of the last run (client side)
bw_avg() {
	awk '/#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ { print $4; exit }' <<<"$CLI_OUT"
}

write_bw() {
	srv_cli 120 "$NS2" "$NS1" ib_write_bw -d eroce2 -x "$G2" -s 65536 -n "$1" -- \
		ib_write_bw -d eroce1 -x "$G1" -s 65536 -n "$1" "$SRV"
}

test_max_rate() {
	local free capped ok

	echo default >"$T1/profile"
	if write_bw 100 && perftest_ok; then
		free=$(bw_avg)
	else
		srv_cli_diag
	fi
	echo 40 >"$T1/max_rate_mbps"
	if write_bw 100 && perftest_ok; then
		capped=$(bw_avg)
	else
		srv_cli_diag
	fi
	echo 0 >"$T1/max_rate_mbps"
	ktap_diag "ib_write_bw 64 KiB: unpaced ${free:-failed} MB/s, max_rate_mbps 40: ${capped:-failed} MB/s"
	ok=$(awk -v c="${capped:-0}" -v f="${free:-0}" -v lo="$PAYLOAD_LO" -v hi="$WIRE_HI" \
		'BEGIN { print (c >= lo && c <= hi && f > c) ? 0 : 1 }')
	ktap_result max_rate_mbps_caps_write_bw "$ok" \
		"capped ${capped:-none} MB/s (want $PAYLOAD_LO..$WIRE_HI and below unpaced ${free:-none})"
}

# per QP: eroce_integrity's client sets ibv_modify_qp_rate_limit 40000
# kb/s on its one QP; its WRITE rate stays under the cap while rdma -dd
# resource show qp shows rate_limit_kbps (uverbs' QUERY_QP cannot report
# it to userspace)
test_qp_rate_limit() {
	local rc=0 spid cpid mib dump=$RDMA_TMP/qp_rate

	echo default >"$T1/profile"
	ns2 "$INTEGRITY" -d eroce2 -g "$G2" -p 18700 -t 120 >"$RDMA_TMP/srv.out" 2>&1 &
	spid=$!
	wait_for 15 tcp_listening "$NS2" 18700
	: >"$dump"
	ns1 "$INTEGRITY" -d eroce1 -g "$G1" -p 18700 -t 120 -q 1 -o write \
		-b 8M -r 8M -L 40000 "$SRV" >"$RDMA_TMP/cli.out" 2>&1 &
	cpid=$!
	while kill -0 "$cpid" 2>/dev/null; do
		rdma -dd resource show qp link eroce1/1 >>"$dump" 2>/dev/null
		sleep 0.2
	done
	wait "$cpid" || rc=1
	wait "$spid" || rc=1
	mib=$(awk '/^write: ok/ { for (i = 1; i < NF; i++) if ($(i + 1) == "MiB/s") print $i }' \
		"$RDMA_TMP/cli.out")
	ktap_diag "rate limit 40000 kb/s: WRITE ${mib:-failed} MiB/s; $(grep -o 'drv_rate_limit_kbps [0-9]*' "$dump" | head -n 1)"
	[ $rc = 0 ] || ktap_diag "$(tail -n 3 "$RDMA_TMP/cli.out" "$RDMA_TMP/srv.out")"
	ktap_result qp_rate_limit_caps_write "$(awk -v m="${mib:-0}" -v r=$rc -v lo="$PAYLOAD_LO" -v hi="$WIRE_HI" \
		'BEGIN { print (r == 0 && m >= lo && m <= hi) ? 0 : 1 }')" \
		"WRITE ${mib:-none} MiB/s, want $PAYLOAD_LO..$WIRE_HI"
	ktap_result qp_rate_limit_shown "$(grep -q 'drv_rate_limit_kbps 40000' "$dump"; echo $?)" \
		"no QP with drv_rate_limit_kbps 40000"
}

# cnp_frames: "opcode becn" of every CNP eroce2 sent, one per line (BECN
# is bit 6 of the BTH's fifth byte; tshark has no field for it)
cnp_frames() {
	cap_stop
	tshark -r "$PCAP" -d udp.port==4791,infiniband -Y "ip.src == $SRV && infiniband.bth.opcode == 129" \
		-T fields -e infiniband.bth.opcode -e udp.payload 2>/dev/null |
		while read -r op p; do
			p=${p//:/}
			echo "$op $(( (0x${p:8:2} & 0x40) != 0 ))"
		done
}

# marked_run CC1: ib_write_bw with every packet into eroce2 marked CE,
# cc dcqcn on eroce2 and cc CC1 on eroce1
marked_run() {
	echo dcqcn >"$T2/cc"
	echo "$1" >"$T1/cc"
	stat_snap eroce1/1 "$B1"
	stat_snap eroce2/1 "$B2"
	tc -n "$NS2" qdisc add dev veth2 clsact && eval "$MARK"
	write_bw 30
	local rc=$?
	tc -n "$NS2" qdisc del dev veth2 clsact
	ktap_diag "cc $1: eroce1 $(stat_changes eroce1/1 "$B1")"
	ktap_diag "cc $1: eroce2 $(stat_changes eroce2/1 "$B2")"
	[ $rc = 0 ] && perftest_ok || { srv_cli_diag; return 1; }
}

test_ecn_dcqcn() {
	local frames n bad

	# not through `require`: its subshell would lose CAP_PID
	cap_start "$NS2" veth2 "$PCAP" || ktap_bail "dumpcap did not start"
	marked_run dcqcn
	ktap_result dcqcn_transfer_under_marking $? "ib_write_bw failed"
	frames=$(cnp_frames)
	for c in ecn_marked_packets_rcvd cnp_sent; do
		ktap_result "receiver_$c" "$([ "$(stat_delta eroce2/1 "$B2" $c)" -gt 0 ]; echo $?)" \
			"eroce2 $c did not move"
	done
	for c in cnp_rcvd cnp_handled rate_decreases; do
		ktap_result "sender_$c" "$([ "$(stat_delta eroce1/1 "$B1" $c)" -gt 0 ]; echo $?)" \
			"eroce1 $c did not move"
	done
	n=$(grep -c . <<<"$frames")
	bad=$(awk '$1 != 129 || $2 != 1' <<<"$frames" | head -n 3)
	ktap_diag "$n CNP frames from eroce2, e.g. $(head -n 1 <<<"$frames")"
	ktap_result cnp_on_the_wire "$([ "$n" -gt 0 ] && [ -z "$bad" ]; echo $?)" \
		"$n CNPs decoded; not opcode 0x81 with BECN: $bad"
	# at most one CNP per 50 us per QP: never more CNPs than marked packets
	ktap_result cnp_rate_limited "$([ "$(stat_delta eroce2/1 "$B2" cnp_sent)" -le \
		"$(stat_delta eroce2/1 "$B2" ecn_marked_packets_rcvd)" ]; echo $?)" \
		"more CNPs than marked packets"

	marked_run none
	ktap_result cc_none_transfer_under_marking $? "ib_write_bw failed"
	ktap_result cc_none_ignores_cnps "$([ "$(stat_delta eroce1/1 "$B1" cnp_rcvd)" -gt 0 ] &&
		[ "$(stat_delta eroce1/1 "$B1" cnp_handled)" = 0 ]; echo $?)" \
		"eroce1 with cc none: cnp_rcvd +$(stat_delta eroce1/1 "$B1" cnp_rcvd), cnp_handled +$(stat_delta eroce1/1 "$B1" cnp_handled)"
	echo default >"$T1/profile"
	echo default >"$T2/profile"
}

ktap_plan 14
require eroce_pair_setup
require pair_gids
pair_gids
require command -v dumpcap tshark
kmsg_mark
test_max_rate
test_qp_rate_limit
test_ecn_dcqcn
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
