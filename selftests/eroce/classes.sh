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
#   only with vlan_egress_map on.  The VLAN devices are made after the
#   eroce devices: eroce's own entries (priority 47920 + SL -> PCP SL)
#   come in through the netdev notifier; eroce3, made on veth1.100, adds
#   them at its creation.
#
# One dumpcap capture on veth1 (the parent device: it sees the 802.1Q
# tags), decoded once afterwards; each run is told apart by its time
# window and checked for eroce1's (or eroce3's) packets:
#   - ibv_rc_pingpong over the VLAN GID with SL 5: VLAN 100, PCP 5 (the
#     SL, as on RoCE NICs); with vlan_egress_map on, PCP 6 (veth1.100's
#     map applied to the SL).  The first run (eroce1 with tx_batch 0:
#     one skb per frame) must also have gone through veth1.100's own
#     transmit: its tx_packets and a pfifo qdisc put on it count at
#     least as many packets as the capture has eroce1 frames in VLAN 100
#     (the old eroce_vlan.c handed them to veth1 directly: neither moved)
#   - veth1.100's map: eroce's entries 47921:1 ... 47927:7 next to $MAP1,
#     unchanged; after eroce3 (on veth1.100) is deleted they stay (eroce1
#     needs them), after eroce1 and eroce2 are deleted they are gone
#     from `ip -d link show` on both VLAN devices, $MAP1 still there
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
# The VLAN device and map checks came with the move of PCP = SL into the
# VLAN devices' maps and have not run in a guest yet.
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

# map_of NS DEV: the egress-qos-map that `ip -d link show` lists, as
# "from:to" words
map_of() {
	ip -n "$1" -d link show dev "$2" |
		sed -n 's/.*egress-qos-map { \([^}]*\)}.*/\1/p'
}

# eroce_entries NS DEV: eroce's entries (priority 47921 to 47927) listed
eroce_entries() {
	map_of "$1" "$2" | tr ' ' '\n' | grep -E '^4792[0-7]:' | sort | tr '\n' ' '
}

EROCE_ENTRIES="47921:1 47922:2 47923:3 47924:4 47925:5 47926:6 47927:7 "

# has_entries NS DEV: eroce's entries are all there, the administrator's
# ($MAP1 or $IDMAP, those to a nonzero PCP) too
has_entries() {
	local m
	[ "$(eroce_entries "$1" "$2")" = "$EROCE_ENTRIES" ] || return 1
	for m in $3; do
		[ "${m#*:}" = 0 ] && continue
		[[ " $(map_of "$1" "$2") " == *" $m "* ]] || return 1
	done
}

# no_entries NS DEV ADMIN_MAP: eroce's entries gone, the administrator's
# still there
no_entries() {
	local m
	[ -z "$(eroce_entries "$1" "$2")" ] || return 1
	for m in $3; do
		[ "${m#*:}" = 0 ] && continue
		[[ " $(map_of "$1" "$2") " == *" $m "* ]] || return 1
	done
}

# qdisc_pkts NS DEV: packets the root qdisc of DEV sent
qdisc_pkts() {
	tc -n "$1" -s qdisc show dev "$2" |
		awk '$1 == "Sent" { print $4; exit }'
}

# vlan_tx NS DEV: the VLAN device's tx_packets
vlan_tx() {
	ip netns exec "$1" cat "/sys/class/net/$2/statistics/tx_packets"
}

# frames FROM TO SRC VLAN: eroce frames of SRC in VLAN VLAN in the window
frames() {
	awk -F'|' -v a="$1" -v b="$2" -v s="$3" -v v="$4" '$1 >= a && $1 <= b && $2 == s && $3 == v { n++ } END { print n + 0 }' "$DECODED"
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

	# through veth1.100's own transmit: its counters and a qdisc on it
	# (the run's window is RUNS[0]'s; checked after decoding)
	echo 0 >"$IBSYS/eroce1/tuning/tx_batch"
	QDISC_OK=0
	ns1 tc qdisc add dev veth1.100 root pfifo limit 1000 2>"$RDMA_TMP/tc.err" &&
		QDISC_OK=1
	VLAN_TX0=$(vlan_tx "$NS1" veth1.100)
	QDISC0=$(qdisc_pkts "$NS1" veth1.100)
	cls_run vlan100_sl5_is_pcp5 198.18.100.1 100/5/0 100/5/0 \
		ibv_rc_pingpong -d eroce2 -g "$gv2" -l 5 -n "$PP_ITERS" -- \
		ibv_rc_pingpong -d eroce1 -g "$gv1" -l 5 -n "$PP_ITERS" 198.18.100.2
	VLAN_TX1=$(vlan_tx "$NS1" veth1.100)
	QDISC1=$(qdisc_pkts "$NS1" veth1.100)
	[ "$QDISC_OK" = 1 ] && ns1 tc qdisc del dev veth1.100 root 2>/dev/null
	echo 1 >"$IBSYS/eroce1/tuning/tx_batch"
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

# the first run went through veth1.100's transmit and qdisc: each of
# eroce1's frames in VLAN 100 (tx_batch 0: one skb each) moved both
check_vlan_dev() {
	local name a b f
	read -r name a b _ <<<"${RUNS[0]}"
	if [ -z "$a" ]; then
		ktap_skip vlan_dev_tx_counted "$name not run"
		ktap_skip vlan_qdisc_counted "$name not run"
		return
	fi
	f=$(frames "$a" "$b" 198.18.100.1 100)
	ktap_diag "veth1.100: $f eroce frames, tx_packets +$((VLAN_TX1 - VLAN_TX0)), qdisc +$((${QDISC1:-0} - ${QDISC0:-0}))"
	ktap_result vlan_dev_tx_counted \
		"$([ "$f" -gt 0 ] && [ $((VLAN_TX1 - VLAN_TX0)) -ge "$f" ]; echo $?)" \
		"veth1.100 tx_packets moved by $((VLAN_TX1 - VLAN_TX0)), want at least $f"
	if [ "$QDISC_OK" != 1 ]; then
		ktap_missing vlan_qdisc_counted "pfifo on veth1.100: $(cat "$RDMA_TMP/tc.err")"
	else
		ktap_result vlan_qdisc_counted \
			"$([ "$f" -gt 0 ] && [ $((QDISC1 - QDISC0)) -ge "$f" ]; echo $?)" \
			"veth1.100's pfifo sent $((QDISC1 - QDISC0)) packets, want at least $f"
	fi
}

# map_check NAME CMD...: ktap_check, with both VLAN devices' maps shown
map_check() {
	ktap_diag "veth1.100: $(map_of "$NS1" veth1.100); veth2.100: $(map_of "$NS2" veth2.100)"
	ktap_check "$@"
}

ktap_plan 15
require eroce_pair_setup
require vlan_setup
# eroce's entries in, next to the administrator's
# shellcheck disable=SC2016  # eval expands them
map_check vlan_map_entries_added eval 'has_entries "$NS1" veth1.100 "$MAP1" &&
	has_entries "$NS2" veth2.100 "$IDMAP"'
kmsg_mark
# not through ktap_check: its command substitution would lose CAP_PID
cap_start "$NS1" veth1 "$PCAP"
ktap_result capture_started $? "dumpcap did not start: $(cat "$RDMA_TMP/dumpcap.err")"
traffic
ktap_check capture_decoded cap_stop_decode
check
check_vlan_dev
rdma link del eroce3 2>/dev/null
# eroce1 still sends through veth1.100: its entries stay
map_check vlan_map_kept_for_eroce1 has_entries "$NS1" veth1.100 "$MAP1"
ktap_check link_del eval 'rdma link del eroce1 && rdma link del eroce2'
# no eroce device left: the entries are out of the maps, the
# administrator's are not
# shellcheck disable=SC2016  # eval expands them
map_check vlan_map_entries_cleared eval 'no_entries "$NS1" veth1.100 "$MAP1" &&
	no_entries "$NS2" veth2.100 "$IDMAP"'
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
