#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-switch: bash "$TEST" switch-capture </dev/null >"$SHARED/capture.log" 2>&1 &
#
# classes.sh: eroce's traffic between two hosts stays in its VLAN,
# 802.1p priority and DSCP class, and is ECN capable when asked, as the
# switch sees it (the single-host selftests/eroce/classes.sh checks the
# same on a veth; the admin guide's "Traffic class, VLAN and priority").
# Each guest has eroce0 on its NIC and VLAN 10 on top
# (LAB_IF.10: 198.18.11.(1+I)/24, 2001:db8:11::(1+I)/64, no egress map:
# the SL is the PCP without one); guest1's eroce0 has `ecn` on, guest0's
# off.  The switch captures: the "lab-switch" line above starts this
# script on the host, inside the lab's namespace (switch_capture below),
# where dumpcap records tap1, the switch port towards guest1, into the
# shared folder until both guests are through with their traffic; each
# guest then decodes that capture with tshark and checks its own
# frames (UDP 4791, BTH not to QP1):
#   - ib_write_bw over the VLAN's IPv4 GIDs with SL 5 (-S 5) and traffic
#     class 104 (--tclass, DSCP 26): VLAN 10, PCP 5, DSCP 26
#   - ibv_rc_pingpong over the VLAN's IPv6 GIDs with SL 3 and the
#     device's default_tclass 184 (DSCP 46): VLAN 10, PCP 3, DSCP 46
#   - in both, ECN ECT(0) (2) on guest1's frames, Not-ECT (0) on
#     guest0's; and no RoCE frame of the guest's left untagged
# Every check is about classes, none about time or rate.
# Run: selftests/run_lab.sh selftests/lab/classes.sh
set -u -o pipefail

# ---- on the host, in the lab's namespace --------------------------------------

# switch_capture: dumpcap on TAP1 into SHARED/switch.pcap (SHARED, TAP1:
# the runner's switch environment); says "capturing.host" once its
# filter is attached (its value: "ok" or dumpcap's error), stops once
# both guests said "capstop" (or ended their scripts), after the file
# has not grown for 2 s, and then says "capdone.host".  Bounded, so that
# it never keeps the namespace alive: it also stops once guest1's QEMU
# closed the tap (its carrier went after it had been there), once the
# shared folder is gone, and after 10 minutes whatever happens.
switch_capture() {
	local pcap=$SHARED/switch.pcap end=$((SECONDS + 600)) pid i size=-1 same=0 up=0

	say() {
		printf '%s\n' "$2" >"$SHARED/$1.host.tmp" && mv -f "$SHARED/$1.host.tmp" "$SHARED/$1.host"
	}
	dumpcap -q -i "$TAP1" -w "$pcap" </dev/null >/dev/null 2>"$SHARED/dumpcap.err" &
	pid=$!
	for ((i = 0; i < 300; i++)); do
		grep -q "Capturing on" "$SHARED/dumpcap.err" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if grep -q "Capturing on" "$SHARED/dumpcap.err"; then
		say capturing ok
	else
		say capturing "dumpcap: $(tr '\n' ' ' <"$SHARED/dumpcap.err")"
	fi
	while [ -d "$SHARED" ] && [ $SECONDS -lt $end ] && kill -0 "$pid" 2>/dev/null; do
		if [ "$(cat "/sys/class/net/$TAP1/carrier" 2>/dev/null)" = 1 ]; then
			up=1
		elif [ "$up" = 1 ]; then
			break
		fi
		{ [ -e "$SHARED/capstop.0" ] || [ -e "$SHARED/_exit.0" ]; } &&
			{ [ -e "$SHARED/capstop.1" ] || [ -e "$SHARED/_exit.1" ]; } && break
		sleep 0.2
	done
	for ((i = 0; i < 60 && same < 4; i++)); do
		sleep 0.5
		if [ "$(stat -c %s "$pcap" 2>/dev/null)" = "$size" ]; then
			same=$((same + 1))
		else
			size=$(stat -c %s "$pcap" 2>/dev/null)
			same=0
		fi
	done
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	[ ! -d "$SHARED" ] || say capdone ok
}

if [ "${1:-}" = switch-capture ]; then
	switch_capture
	exit 0
fi

# ---- on the guests -----------------------------------------------------------

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"
# shellcheck source=../lib_lab.sh
. "$(dirname "$0")/../lib_lab.sh"

DEV=eroce0
VID=10
DECODED=$RDMA_TMP/classes.txt
PP_ITERS=$(debug_scaled 20)
BW_ITERS=$(perftest_iters 20)
# see basic.sh: a QP timeout a loaded host under TCG does not outlast
QP_TIMEOUT=18
# guest1 sends ECN capable, guest0 not: the ECN field its frames carry
if [ "${EROCE_LAB_INDEX:-0}" = 1 ]; then ECN=1 ECN_FIELD=2; else ECN=0 ECN_FIELD=0; fi

vlan_ip() {
	echo "198.18.11.$(($1 + 1))"
}

vlan_ip6() {
	echo "2001:db8:11::$(($1 + 1))"
}

setup() {
	local v=$LAB_IF.$VID
	eroce_load && provider_install && lab_rdma_link "$DEV" eroce &&
		ip link add link "$LAB_IF" name "$v" type vlan id "$VID" &&
		addr_add "" "$v" "$(vlan_ip "$LAB_I")/24" "$(vlan_ip6 "$LAB_I")/64" &&
		ip link set dev "$v" up &&
		wait_for 30 has_gid "$DEV" "$(ipv4_gid "$(vlan_ip "$LAB_I")")" "$v" &&
		wait_for 30 has_gid "$DEV" "$(ipv6_gid "$(vlan_ip6 "$LAB_I")")" "$v" &&
		echo "$ECN" >"$IBSYS/$DEV/tuning/ecn"
}

# v6_gid_index: the GID index of the guest's IPv6 address on the VLAN
v6_gid_index() {
	local i
	for i in $(gid_indexes "$DEV" "$(ipv6_gid "$(vlan_ip6 "$LAB_I")")"); do
		[ "$(gid_attr "$DEV" "$i" types)" = "RoCE v2" ] && { echo "$i"; return 0; }
	done
	return 1
}

write_bw_v4() {
	local gid
	gid=$(gid_index_of "$DEV" "$(vlan_ip "$LAB_I")")
	if lab_srv_cli write_bw 0 18516 180 \
		ib_write_bw -d "$DEV" -x "$gid" -p 18516 -s 4096 -n "$BW_ITERS" -F \
		-u "$QP_TIMEOUT" -S 5 --tclass 104 ||
		perftest_no_report "$LAB_OUT"; then
		ktap_ok write_bw_vlan_sl5_tclass104
	else
		lab_srv_cli_diag
		ktap_fail write_bw_vlan_sl5_tclass104 "ib_write_bw rc=$LAB_RC"
	fi
}

pingpong_v6() {
	local gid
	gid=$(v6_gid_index)
	echo 184 >"$IBSYS/$DEV/tuning/default_tclass"
	if lab_srv_cli pingpong 0 18515 120 \
		ibv_rc_pingpong -d "$DEV" -g "$gid" -p 18515 -s 1024 -n "$PP_ITERS" -l 3 -c &&
		grep -q "bytes in" <<<"$LAB_OUT"; then
		ktap_ok pingpong6_vlan_sl3_tclass184
	else
		lab_srv_cli_diag
		ktap_fail pingpong6_vlan_sl3_tclass184 "ibv_rc_pingpong rc=$LAB_RC"
	fi
	echo 0 >"$IBSYS/$DEV/tuning/default_tclass"
}

# decode: every RoCEv2 frame of the switch's capture as
# "src|vlan.id|vlan.priority|dscp|ecn|bth.destqp" (the VLAN fields empty
# for an untagged frame)
decode() {
	local pcap=$LAB_SHARED/switch.pcap
	[ -s "$pcap" ] || { echo "no capture $pcap"; return 1; }
	tshark -r "$pcap" -d udp.port==4791,infiniband -Y udp.dstport==4791 \
		-T fields -E separator='|' -E occurrence=f \
		-e ip.src -e ipv6.src -e vlan.id -e vlan.priority \
		-e ip.dsfield.dscp -e ipv6.tclass.dscp -e ip.dsfield.ecn \
		-e ipv6.tclass.ecn -e infiniband.bth.destqp 2>"$RDMA_TMP/tshark.err" |
		awk -F'|' -v OFS='|' '{ print $1 $2, $3, $4, $5 $6, $7 $8, $9 }' >"$DECODED"
	[ -s "$DECODED" ] || { cat "$RDMA_TMP/tshark.err"; return 1; }
}

# classes SRC: the distinct "vlan/pcp/dscp/ecn" of SRC's frames ("-" for
# an absent field), space separated; connection management (to QP1)
# left out
classes() {
	awk -F'|' -v s="$1" '$1 == s && $6 !~ /^(0x0*)?1$/ {
		print ($2 == "" ? "-" : $2) "/" ($3 == "" ? "-" : $3) "/" \
			($4 == "" ? "-" : $4) "/" ($5 == "" ? "-" : $5) }' \
		"$DECODED" | sort -u | tr '\n' ' '
}

# check NAME SRC WANT: SRC's frames are all WANT, and there are some
check() {
	local got n
	got=$(classes "$2")
	n=$(awk -F'|' -v s="$2" '$1 == s' "$DECODED" | wc -l)
	ktap_diag "guest$LAB_I $2: $n frames, ${got:-none} (vlan/pcp/dscp/ecn)"
	if [ "$got" = "$3 " ]; then
		ktap_ok "$1"
	else
		ktap_fail "$1" "want $3 from $2"
	fi
}

ktap_plan 10
[ "$LAB_N" = 2 ] || ktap_bail "classes.sh needs 2 guests, has $LAB_N"
[ "${EROCE_LAB_LINK:-tap}" = tap ] || ktap_bail "no switch to capture on (${EROCE_LAB_LINK:-})"
lab_setup_ktap
require setup
ktap_ok eroce_link_vlan
cap=$(lab_get capturing host 120)
if [ "$cap" = ok ]; then
	ktap_ok switch_capturing
else
	ktap_bail "no capture on the switch: ${cap:-no word from the host}"
fi
# shellcheck disable=SC2086  # $PING may be "busybox ping"
if lab_barrier up >/dev/null &&
	$PING -c 2 -W 5 "$(vlan_ip "$(lab_peer)")" >/dev/null; then
	ktap_ok peer_reachable_vlan
else
	ktap_bail "peer $(vlan_ip "$(lab_peer)") not reachable over VLAN $VID"
fi
write_bw_v4
pingpong_v6
lab_signal capstop
if lab_wait capdone 120 host >"$RDMA_TMP/capdone.out" && run decode; then
	ktap_ok capture_decoded
else
	ktap_diag "$(cat "$RDMA_TMP/capdone.out") ${LAST_OUT:-}"
	ktap_bail "no capture from the switch"
fi
check ipv4_vlan10_pcp5_dscp26 "$(vlan_ip "$LAB_I")" "$VID/5/26/$ECN_FIELD"
check ipv6_vlan10_pcp3_dscp46 "$(vlan_ip6 "$LAB_I")" "$VID/3/46/$ECN_FIELD"
# nothing of this guest's RoCE left the VLAN
got=$(classes "$LAB_IP")$(classes "$LAB_IP6")
ktap_result untagged_none "$([ -z "$got" ]; echo $?)" "untagged RoCE frames: $got"
ktap_finish
