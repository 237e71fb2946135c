#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# classes.sh: eroce's traffic stays in its VLAN, 802.1p priority and DSCP
# class (Documentation/admin-guide.rst "Traffic class, VLAN and priority").
#
#   ns1: veth1 198.18.0.1, veth1.100 198.18.100.1 (eroce1 on veth1; eroce3
#        on veth1.100 for the "device on a VLAN netdev" case)
#   ns2: veth2 198.18.0.2, veth2.100 198.18.100.2 (eroce2 on veth2)
#   veth2.100 has the identity egress-qos-map (priority n -> PCP n),
#   veth1.100 another one ($MAP1: 2 -> 5, 5 -> 6), which eroce1 follows
#   only with vlan_egress_map on.
#
# One dumpcap capture on veth1 (the parent device: it sees the 802.1Q
# tags), decoded once afterwards; each run is told apart by its time
# window and checked for eroce1's (or eroce3's) packets:
#   - ibv_rc_pingpong over the VLAN GID with SL 5: VLAN 100, PCP 5 (the
#     SL, as on RoCE NICs); with vlan_egress_map on, PCP 6 (veth1.100's
#     map applied to the SL)
#   - over the untagged GID with SL 3: no tag; with priority_tag on, a
#     priority tag (VLAN 0, PCP 3); the peer (priority_tag off) untagged
#   - perftest -R (rdma_cm) to the VLAN address with --tos 104: rdma_cm
#     picked the VLAN GID (VLAN 100 on the wire), DSCP 26, and the SL it
#     derived through the map (priority 2 -> 5) is the PCP, not mapped a
#     second time (5 -> 6)
#   - eroce3 created on veth1.100 registers, goes active, has its default
#     GID (traffic over it is not checked: see the comment there)
# Every check is about classes, none about time or rate: on the debug
# kernel (lib.sh) they all stay required; only the runs are shorter
# (1 ping-pong instead of 3, 5 perftest messages instead of 20), and two
# ping-pong runs are left out (debug_subset): the rdma_cm run also goes
# over VLAN 100 with an SL (from the TOS) as its PCP, and the
# priority-tag run's peer checks an untagged SL 3.
# Run: selftests/run_vm.sh selftests/eroce/classes.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

PCAP=$RDMA_TMP/classes.pcap
DECODED=$RDMA_TMP/classes.txt
IDMAP="0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7"
MAP1="0:0 1:1 2:5 3:3 4:4 5:6 6:6 7:7"
RUNS=()
CLS_OPTS=()		# srv_cli options of the next run
# messages per run, fewer on the debug kernel: a few frames each way
# suffice (perftest refuses fewer than 5)
PP_ITERS=$(debug_scaled 3)
BW_ITERS=$(perftest_iters 20)
# the runs the debug kernel's subset keeps (lib.sh debug_subset)
DEBUG_KEEP="priority_tag_sl3_is_vlan0_pcp3 rdma_cm_tos104_vlan_dscp26"

vlan_setup() {
	# shellcheck disable=SC2086  # $MAP1 and $IDMAP are lists of arguments
	ns1 ip link add link veth1 name veth1.100 type vlan id 100 \
		egress-qos-map $MAP1 &&
		ns2 ip link add link veth2 name veth2.100 type vlan id 100 \
			egress-qos-map $IDMAP &&
		ns1 ip addr add 198.18.100.1/24 dev veth1.100 &&
		ns2 ip addr add 198.18.100.2/24 dev veth2.100 &&
		ns1 ip link set veth1.100 up && ns2 ip link set veth2.100 up &&
		wait_for 10 has_gid eroce1 "$(ipv4_gid 198.18.100.1)" &&
		wait_for 10 has_gid eroce2 "$(ipv4_gid 198.18.100.2)" || return
	# shellcheck disable=SC2086  # $PING may be "busybox ping"
	ns1 $PING -c 1 -W 2 198.18.100.2 >/dev/null 2>&1
	return 0
}

# cap_stop_decode: every frame as
# "epoch|ip.src|vlan.id|vlan.priority|dscp|bth.destqp" (the VLAN fields
# empty for an untagged frame)
cap_stop_decode() {
	cap_stop
	tshark -r "$PCAP" -d udp.port==4791,infiniband -T fields -E separator='|' \
		-E occurrence=f -e frame.time_epoch -e ip.src -e ipv6.src \
		-e vlan.id -e vlan.priority -e ip.dsfield.dscp \
		-e ipv6.tclass.dscp -e infiniband.bth.destqp \
		2>"$RDMA_TMP/tshark.err" |
		awk -F'|' -v OFS='|' '{ print $1, $2 $3, $4, $5, $6 $7, $8, $9 }' >"$DECODED"
	[ -s "$DECODED" ]
}

# tags FROM TO SRC: the distinct "vlan/pcp/dscp" of SRC's frames in the
# window ("-/-/dscp" for untagged ones), space separated; the connection
# management MADs (to QP1) travel with the GSI QP's own class and are left
# out
tags() {
	awk -F'|' -v a="$1" -v b="$2" -v s="$3" '$1 >= a && $1 <= b && $2 == s && $6 !~ /^(0x0*)?1$/ {
		print ($3 == "" ? "-" : $3) "/" ($4 == "" ? "-" : $4) "/" $5 }' \
		"$DECODED" | sort -u | tr '\n' ' '
}

# cls_run NAME SRC WANT [PEER_WANT] -- SRV_CMD -- CLI_CMD: run the traffic,
# remember the window; SRC's frames must all be WANT ("vlan/pcp/dscp"),
# the peer's (198.18.*.2) PEER_WANT when given.  A run the debug subset
# leaves out is remembered by its name only (check reports the skip).
cls_run() {
	local name=$1 src=$2 want=$3 peer=${4:-} a b; shift 4
	debug_leaves_out "$name" && { RUNS+=("$name"); return; }
	a=$(now)
	if ! srv_cli "${CLS_OPTS[@]}" 60 "$NS2" "$NS1" "$@"; then
		srv_cli_diag
		want=traffic-failed
	fi
	b=$(now)
	RUNS+=("$name $a $b $src $want ${peer:--}")
}

traffic() {
	local gv1 gv2 gu1 gu2
	gv1=$(gid_index_of eroce1 198.18.100.1)
	gv2=$(gid_index_of eroce2 198.18.100.2)
	gu1=$(gid_index_of eroce1 198.18.0.1)
	gu2=$(gid_index_of eroce2 198.18.0.2)

	cls_run vlan100_sl5_is_pcp5 198.18.100.1 100/5/0 100/5/0 \
		ibv_rc_pingpong -d eroce2 -g "$gv2" -l 5 -n "$PP_ITERS" -- \
		ibv_rc_pingpong -d eroce1 -g "$gv1" -l 5 -n "$PP_ITERS" 198.18.100.2
	echo 1 >"$IBSYS/eroce1/tuning/vlan_egress_map"
	cls_run vlan_egress_map_sl5_is_pcp6 198.18.100.1 100/6/0 100/5/0 \
		ibv_rc_pingpong -d eroce2 -g "$gv2" -l 5 -n "$PP_ITERS" -- \
		ibv_rc_pingpong -d eroce1 -g "$gv1" -l 5 -n "$PP_ITERS" 198.18.100.2
	echo 0 >"$IBSYS/eroce1/tuning/vlan_egress_map"
	cls_run untagged_sl3_no_tag 198.18.0.1 -/-/0 -/-/0 \
		ibv_rc_pingpong -d eroce2 -g "$gu2" -l 3 -n "$PP_ITERS" -- \
		ibv_rc_pingpong -d eroce1 -g "$gu1" -l 3 -n "$PP_ITERS" 198.18.0.2
	echo 1 >"$IBSYS/eroce1/tuning/priority_tag"
	cls_run priority_tag_sl3_is_vlan0_pcp3 198.18.0.1 0/3/0 -/-/0 \
		ibv_rc_pingpong -d eroce2 -g "$gu2" -l 3 -n "$PP_ITERS" -- \
		ibv_rc_pingpong -d eroce1 -g "$gu1" -l 3 -n "$PP_ITERS" 198.18.0.2
	echo 0 >"$IBSYS/eroce1/tuning/priority_tag"
	# rdma_cm: SL from the TOS through the VLAN device's egress map
	# (rt_tos2priority(104) = 2, $MAP1: SL 5), and that SL is the PCP
	CLS_OPTS=(-c 18515)	# the server's rdma_cm ID listens
	# (perftest's own parameter-exchange connection sets no TOS: its
	# frames are DSCP 0, hence "+")
	cls_run rdma_cm_tos104_vlan_dscp26 198.18.100.1 +100/5/26 "" \
		ib_send_bw -d eroce2 -R -n "$BW_ITERS" -s 64 -- \
		ib_send_bw -d eroce1 -R -n "$BW_ITERS" -s 64 --tos=104 198.18.100.2
	CLS_OPTS=()

	# a device created on the VLAN netdev itself: it registers and goes
	# active, with ib_core's default GID (the VLAN device's IPv6
	# link-local address) only: ib_core fills IP GIDs from a device's
	# real netdev and its uppers, not from a VLAN netdev below an RDMA
	# device (admin guide, "Traffic class, VLAN and priority")
	local ll1
	ll1=$(ns1 ip -6 -o addr show dev veth1.100 scope link | awk '{ print $4 }')
	ll1=${ll1%/*}
	if run ns1 rdma link add eroce3 type eroce netdev veth1.100 &&
		wait_for 10 port_state_is eroce3 "4: ACTIVE" &&
		wait_for 10 has_gid eroce3 "$(ipv6_gid "$ll1")" veth1.100; then
		ktap_ok device_on_vlan_netdev
	else
		ktap_diag "eroce3: $LAST_OUT; $(gid_table eroce3 2>&1 | head -n 5)"
		ktap_fail device_on_vlan_netdev "rdma link add on veth1.100"
	fi
}

# tags_match GOT WANT: GOT (from tags) is exactly WANT; or, for a WANT of
# "+V/P/D", includes V/P/D and every frame is in VLAN V
tags_match() {
	local t
	case "$2" in
	+*)
		[[ " $1" == *" ${2#+} "* ]] || return 1
		for t in $1; do
			[ "${t%%/*}" = "${2%%/*}" ] || [ "+${t%%/*}" = "${2%%/*}" ] || return 1
		done
		;;
	*) [ "$1" = "$2 " ] ;;
	esac
}

check() {
	local r name a b src want peer got pgot psrc
	for r in "${RUNS[@]}"; do
		read -r name a b src want peer <<<"$r"
		[ -n "$a" ] || { debug_subset "$name"; continue; }
		got=$(tags "$a" "$b" "$src")
		psrc=${src%.1}.2
		pgot=$(tags "$a" "$b" "$psrc")
		ktap_diag "$name: $src ${got:-none}, $psrc ${pgot:-none}"
		if tags_match "$got" "$want" && { [ "$peer" = - ] || [ "$pgot" = "$peer " ]; }; then
			ktap_ok "$name"
		else
			ktap_diag "$(awk -F'|' -v a="$a" -v b="$b" '$1 >= a && $1 <= b' "$DECODED" | head -n 8)"
			ktap_fail "$name" "want $src $want${peer:+, $psrc $peer} (vlan/pcp/dscp)"
		fi
	done
}

ktap_plan 10
require eroce_pair_setup
require vlan_setup
kmsg_mark
# not through ktap_check: its command substitution would lose CAP_PID
cap_start "$NS1" veth1 "$PCAP"
ktap_result capture_started $? "dumpcap did not start: $(cat "$RDMA_TMP/dumpcap.err")"
traffic
ktap_check capture_decoded cap_stop_decode
check
ktap_check link_del eval 'rdma link del eroce3; rdma link del eroce1 && rdma link del eroce2'
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
