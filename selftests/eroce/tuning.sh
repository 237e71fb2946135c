#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tuning.sh: the per-device tunables under /sys/class/infiniband/<dev>/tuning/
# (drivers/infiniband/sw/eroce/eroce_tuning.c, Documentation/admin-guide.rst
# "Tuning").
#
# sysfs: every file exists and reads its default; out-of-range and malformed
#   values fail with EINVAL and change nothing (not even the profile);
#   min_rto_us > a nonzero max_rto_us is refused from either side; the
#   profiles set their knobs, a manual change reads `custom`, `custom`
#   cannot be written, `default` brings the defaults back.  A user other
#   than root cannot write them, nor can root without CAP_NET_ADMIN (EPERM,
#   nothing changed), and `rdma link add/delete` needs CAP_NET_ADMIN too.
# wire: one dumpcap capture in ns1 on veth1 (filter udp port 4791), decoded
#   once by tshark afterwards; every run is told apart by its time window.
#   - IPv4 TOS of eroce1's packets: default_tclass 104 -> 0x68, with ecn
#     0x6a; ecn alone 0x02; ECT(1) in the class is kept; perftest --tclass
#     184 overrides the default (0xb8, with ecn 0xba); eroce2 unaffected.
#   - retransmit timing: eroce_retry connects QP A (eroce1) to QP B
#     (eroce2), then its hook drops every UDP 4791 packet at veth2's
#     ingress (the requests are lost after the capture point: a netem loss
#     on veth1's egress would drop them before the capture tap sees them)
#     and posts one RDMA WRITE.  The send times of the retransmitted PSN
#     give the RTOs, which must follow eroce_req_rto_ns(): QP timeout
#     raised to min_rto_us, doubled per timeout with rto_backoff 2, capped
#     at max_rto_us; the IBV_WC_RETRY_EXC_ERR must come after the sum of
#     the retry_cnt + 1 RTOs.  A timer never fires early, but a loaded
#     machine runs it late, by any amount: each gap at least 0.9x-1ms of
#     its expected value E, no gap below min_rto_us (2% slack), exactly
#     retry_cnt + 1 sends.  Late is bounded only against a mistake that
#     lies above: a doubling where a constant RTO is due (rto_backoff 1),
#     a ceiling not applied (max_rto_us set).  The gaps together, and the
#     time to the error, must be nearer the sum of the expected RTOs than
#     the sum of the mistaken ones: halfway between them, 0.27-1 s of
#     lateness over a run (a run without such a mistake has no upper
#     bound).
#   - max_inflight_pkts 4: a 64 KiB WRITE (64 packets) into the void puts
#     exactly 4 distinct PSNs on the wire, fails with retry exceeded, and a
#     WR posted afterwards is flushed; without loss, 64 KiB pingpong
#     messages go through with no retransmit timeout (the window reopens
#     on ACKs; min_rto_us 1 s keeps a late ACK from timing out, a window
#     that reopened only on timeouts would take 75 s).
# Guest time about 80 s.
# On the debug kernel the traffic runs are shorter (pingpongs 1 message,
# ib_send_bw 5), eroce_retry's deadlines TIMEOUT_MULT times longer, and a
# retransmit gap or a time to retry exceeded outside its window is a skip
# (ktap_bound); the number of sends and the completion stay strict.  The
# sysfs checks all run there, the traffic only in part (DEBUG_KEEP
# below).
# Run: selftests/run_vm.sh selftests/eroce/tuning.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_retry"
T1=$IBSYS/eroce1/tuning
T2=$IBSYS/eroce2/tuning
SRV=198.18.0.2
# iterations of the traffic-class runs (pingpong, ib_send_bw) and of the
# 64 KiB pingpong of no_stall: an eighth on the debug kernel, at least 1
# (perftest wants at least 5)
TOS_PP_N=$(debug_scaled 3)
TOS_BW_N=$(perftest_iters 20)
STALL_N=$(debug_scaled 5)
PCAP=$RDMA_TMP/tuning.pcap
DECODED=$RDMA_TMP/tuning.txt
KNOBS="min_rto_us max_rto_us rto_backoff adaptive_rto loss_recovery max_inflight_pkts default_tclass priority_tag vlan_egress_map max_rate_mbps cc cnp_interval_us ecn tx_batch gro_batch profile"
# the values of the profiles, in the order knobs() reads them
# (eroce_tuning.c: eroce_tuning_profile()); the knobs no profile sets
# (default_tclass, priority_tag, vlan_egress_map, max_rate_mbps,
# cnp_interval_us, tx_batch, gro_batch) have their
# defaults in test_defaults
DEFAULTS="0 0 1 0 gbn 64 0 none default"
LOSSY_EDGE="1000 1000000 2 1 tlp 32 1 dcqcn lossy-edge"
LOSSLESS="0 0 1 0 gbn 256 1 dcqcn lossless"
# the runs the debug kernel's subset keeps (lib.sh debug_subset): a
# default_tclass, a perftest class over it with ecn; RTOs doubling from
# the floor, set on a live QP; max_inflight_pkts (check_inflight needs
# its run).  The other TOS values and RTO shapes (the same arithmetic)
# are skips.
DEBUG_KEEP="tos_default_tclass_104_is_0x68 tos_perftest_tclass_184_ecn_is_0xba
rto_doubling_set_on_live_qp max_inflight"

build_tool() {
	[ -x "$TOOL" ] && [ "$TOOL" -nt "$TOOL.c" ] && return 0
	make -s -C "$EROCE_ROOT/selftests/tools" eroce_retry
}

# ---- sysfs -------------------------------------------------------------------

# kw DIR KNOB VALUE: write VALUE (and a newline) as `echo` does; 0 on success
kw() {
	(printf '%s\n' "$3" >"$1/$2") 2>/dev/null
}

# kr DIR KNOB: the knob's value
kr() {
	read_file "$1/$2"
}

# knobs DIR: the values of the profile knobs, as in $DEFAULTS
knobs() {
	echo "$(kr "$1" min_rto_us) $(kr "$1" max_rto_us) $(kr "$1" rto_backoff)" \
		"$(kr "$1" adaptive_rto) $(kr "$1" loss_recovery)" \
		"$(kr "$1" max_inflight_pkts) $(kr "$1" ecn) $(kr "$1" cc)" \
		"$(kr "$1" profile)"
}

# with VALUES FIELD VALUE: profile VALUES after a manual write of field
# FIELD (1-based, as in $DEFAULTS): that field changed, the profile custom
with() {
	awk -v f="$2" -v v="$3" '{ $f = v; $NF = "custom"; print }' <<<"$1"
}

# knobs_are NAME DIR WANT: one subtest, the profile knobs read WANT
knobs_are() {
	local got
	got=$(knobs "$2")
	if [ "$got" = "$3" ]; then
		ktap_ok "$1"
	else
		ktap_fail "$1" "read '$got', want '$3'"
	fi
}

test_defaults() {
	local k want got fails='' i=0
	local -a v
	declare -A def=([default_tclass]=0 [priority_tag]=0 [vlan_egress_map]=0 [max_rate_mbps]=0 [cnp_interval_us]=50 [tx_batch]=1 [gro_batch]=64)

	read -ra v <<<"$DEFAULTS"
	for k in min_rto_us max_rto_us rto_backoff adaptive_rto loss_recovery max_inflight_pkts ecn cc profile; do
		def[$k]=${v[$i]}
		i=$((i + 1))
	done

	for k in $KNOBS; do
		want=${def[$k]}
		if [ ! -f "$T1/$k" ]; then
			ktap_fail "default_$k" "no $T1/$k"
			continue
		fi
		got=$(kr "$T1" "$k")
		if [ "$got" = "$want" ]; then
			ktap_ok "default_$k"
		else
			ktap_fail "default_$k" "reads '$got', want '$want'"
		fi
	done
	for k in $KNOBS; do
		got=$(kr "$T2" "$k")
		[ "$got" = "${def[$k]}" ] || fails+=" $k=$got"
	done
	ktap_result defaults_on_second_device "$([ -z "$fails" ]; echo $?)" \
		"eroce2:$fails"
	# exactly these files, owner-writable
	got=$(cd "$T1" && stat -c '%n %a' -- * | sort | tr '\n' ' ')
	want="adaptive_rto 644 cc 644 cnp_interval_us 644 dcqcn 755 default_tclass 644 ecn 644 gro_batch 644 loss_recovery 644 max_inflight_pkts 644 max_rate_mbps 644 max_rto_us 644 min_rto_us 644 priority_tag 644 profile 644 rto_backoff 644 tx_batch 644 vlan_egress_map 644 "
	ktap_result tuning_files_and_modes "$([ "$got" = "$want" ]; echo $?)" \
		"got '$got'"
}

# rejects KNOB BAD...: every BAD write fails and leaves the knob and the
# profile as they were
rejects() {
	local k=$1 v before prof bad=''; shift
	before=$(kr "$T1" "$k")
	prof=$(kr "$T1" profile)
	for v in "$@"; do
		kw "$T1" "$k" "$v" && bad+=" '$v' accepted;"
		[ "$(kr "$T1" "$k")" = "$before" ] || {
			bad+=" '$v' changed it to $(kr "$T1" "$k");"
			kw "$T1" "$k" "$before"
		}
		[ "$(kr "$T1" profile)" = "$prof" ] || bad+=" '$v' changed profile;"
	done
	ktap_result "rejects_bad_$k" "$([ -z "$bad" ]; echo $?)" "${bad# }"
}

# accepts KNOB GOOD...: every GOOD write succeeds and reads back
accepts() {
	local k=$1 v bad=''; shift
	for v in "$@"; do
		kw "$T1" "$k" "$v" || { bad+=" '$v' refused;"; continue; }
		[ "$(kr "$T1" "$k")" = "$v" ] || bad+=" '$v' reads $(kr "$T1" "$k");"
	done
	ktap_result "accepts_$k" "$([ -z "$bad" ]; echo $?)" "${bad# }"
}

test_validation() {
	# a profile with non-default values: a rejected write must keep them,
	# and keep the profile name too (no spurious `custom`)
	require kw "$T1" profile lossy-edge
	rejects min_rto_us 1073741825 4294967295 4294967296 -1 abc 12abc 1.5 ""
	rejects max_rto_us 1073741825 4294967296 -1 abc 0x ""
	rejects rto_backoff 0 3 4 -1 abc 1.0 ""
	rejects max_inflight_pkts 0 65537 4294967296 -1 abc ""
	rejects default_tclass 256 1000 -1 abc 0x1g ""
	rejects ecn 2 -1 abc ""
	rejects priority_tag 2 -1 abc ""
	rejects vlan_egress_map 2 -1 abc ""
	rejects tx_batch 2 -1 abc ""
	rejects gro_batch 65 -1 abc ""
	rejects adaptive_rto 2 -1 abc ""
	rejects loss_recovery SR GBN gb "" tlp2 none
	rejects max_rate_mbps 400001 -1 abc ""
	rejects cc dcqc DCQCN "" tlp 1
	rejects cnp_interval_us 1000001 -1 abc ""
	rejects profile custom foo LOSSY-EDGE lossy_edge "lossy edge" defaults ""
	knobs_are rejected_writes_keep_lossy_edge "$T1" "$LOSSY_EDGE"

	require kw "$T1" profile default
	accepts max_rto_us 1073741824 0
	accepts min_rto_us 1073741824 0
	accepts max_inflight_pkts 1 65536 256
	accepts default_tclass 255 0
	accepts rto_backoff 2 1
	accepts ecn 1 0
	accepts priority_tag 1 0
	accepts vlan_egress_map 1 0
	accepts tx_batch 0 1
	accepts gro_batch 0 1 2 64
	accepts adaptive_rto 1 0
	accepts loss_recovery tlp sr gbn
	accepts max_rate_mbps 400000 100 0
	accepts cc dcqcn none
	accepts cnp_interval_us 0 1000000 50

	# min_rto_us must not exceed a nonzero max_rto_us, from either side
	local bad=''
	require kw "$T1" profile default
	kw "$T1" max_rto_us 1000 || bad+=" max=1000 refused;"
	kw "$T1" min_rto_us 2000 && bad+=" min=2000 > max accepted;"
	[ "$(kr "$T1" min_rto_us)" = 0 ] || bad+=" min now $(kr "$T1" min_rto_us);"
	kw "$T1" min_rto_us 1000 || bad+=" min=max refused;"
	kw "$T1" max_rto_us 999 && bad+=" max=999 < min accepted;"
	[ "$(kr "$T1" max_rto_us)" = 1000 ] || bad+=" max now $(kr "$T1" max_rto_us);"
	kw "$T1" max_rto_us 0 || bad+=" max=0 (none) refused with min 1000;"
	kw "$T1" min_rto_us 5000 || bad+=" min=5000 refused with max 0;"
	kw "$T1" max_rto_us 4999 && bad+=" max=4999 < min 5000 accepted;"
	ktap_result min_rto_above_max_rto_rejected "$([ -z "$bad" ]; echo $?)" "${bad# }"
	require kw "$T1" profile default
}

# dcqcn/: every DCQCN parameter exists with its documented default and is
# validated like the other knobs
test_dcqcn_files() {
	local d=$T1/dcqcn k want got bad=''
	declare -A def=([g_shift]=8 [alpha_update_us]=55 [rate_increase_us]=55
		[byte_counter_kb]=10240 [fast_recovery_steps]=5 [rate_ai_mbps]=40
		[rate_hai_mbps]=400 [min_rate_mbps]=10)

	for k in "${!def[@]}"; do
		got=$(kr "$d" "$k")
		[ "$got" = "${def[$k]}" ] || bad+=" $k=$got (want ${def[$k]});"
	done
	want=$(printf '%s\n' "${!def[@]}" | sort | tr '\n' ' ')
	got=$(cd "$d" && ls | sort | tr '\n' ' ')
	[ "$got" = "$want" ] || bad+=" files '$got';"
	ktap_result dcqcn_defaults "$([ -z "$bad" ]; echo $?)" "${bad# }"

	bad=''
	kw "$d" g_shift 0 && bad+=" g_shift 0 accepted;"
	kw "$d" g_shift 17 && bad+=" g_shift 17 accepted;"
	kw "$d" fast_recovery_steps 0 && bad+=" fast_recovery_steps 0 accepted;"
	kw "$d" min_rate_mbps abc && bad+=" min_rate_mbps abc accepted;"
	[ "$(kr "$d" g_shift)" = 8 ] || bad+=" g_shift now $(kr "$d" g_shift);"
	kw "$d" g_shift 4 || bad+=" g_shift 4 refused;"
	[ "$(kr "$d" g_shift)" = 4 ] || bad+=" g_shift reads $(kr "$d" g_shift);"
	kw "$d" g_shift 8
	ktap_result dcqcn_validated "$([ -z "$bad" ]; echo $?)" "${bad# }"
	kw "$T1" profile default
}

test_profiles() {
	local bad

	require kw "$T1" profile default
	ktap_check write_profile_lossy_edge kw "$T1" profile lossy-edge
	knobs_are profile_lossy_edge_values "$T1" "$LOSSY_EDGE"
	ktap_check write_profile_lossless kw "$T1" profile lossless
	knobs_are profile_lossless_values "$T1" "$LOSSLESS"
	kw "$T1" min_rto_us 500
	knobs_are manual_change_reads_custom "$T1" "$(with "$LOSSLESS" 1 500)"
	ktap_check_fails custom_not_writable kw "$T1" profile custom
	knobs_are custom_write_changes_nothing "$T1" "$(with "$LOSSLESS" 1 500)"
	kw "$T1" profile lossy-edge
	kw "$T1" ecn 0
	knobs_are ecn_change_reads_custom "$T1" "$(with "$LOSSY_EDGE" 7 0)"
	ktap_check write_profile_default kw "$T1" profile default
	knobs_are profile_default_restores_defaults "$T1" "$DEFAULTS"

	# a profile leaves default_tclass alone; a manual write of it is custom
	bad=''
	kw "$T1" default_tclass 104 || bad+=" default_tclass=104 refused;"
	[ "$(kr "$T1" profile)" = custom ] || bad+=" profile $(kr "$T1" profile) after default_tclass, want custom;"
	kw "$T1" profile lossy-edge || bad+=" lossy-edge refused;"
	[ "$(kr "$T1" default_tclass)" = 104 ] || bad+=" default_tclass $(kr "$T1" default_tclass) after lossy-edge;"
	[ "$(kr "$T1" profile)" = lossy-edge ] || bad+=" profile $(kr "$T1" profile);"
	ktap_result profile_keeps_default_tclass "$([ -z "$bad" ]; echo $?)" "${bad# }"
	kw "$T1" profile default
	kw "$T1" default_tclass 0

	knobs_are other_device_untouched "$T2" "$DEFAULTS"
	require kw "$T1" profile default
}

# ---- privileges --------------------------------------------------------------

# as_nobody CMD...: CMD as user and group nobody, no supplementary groups
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
}

# no_net_admin CMD...: CMD as root without CAP_NET_ADMIN (out of the
# bounding set: root's exec cannot get it back)
no_net_admin() {
	setpriv --bounding-set=-net_admin --inh-caps=-net_admin -- "$@"
}

# refused_as WRAPPER ERRNO_TEXT DIR KNOB VALUE: writing VALUE fails with
# ERRNO_TEXT and leaves the knob and the profile as they were; prints
# what went wrong
refused_as() {
	local before prof out
	before=$(kr "$3" "$4")
	prof=$(kr "$T1" profile)
	out=$("$1" bash -c 'printf "%s\n" "$1" >"$2"' bash "$5" "$3/$4" 2>&1) &&
		echo "$4=$5 accepted;"
	[ "$(grep -c "$2" <<<"$out")" -gt 0 ] || echo "$4=$5: '$out', not '$2';"
	[ "$(kr "$3" "$4")" = "$before" ] || echo "$4 changed to $(kr "$3" "$4");"
	[ "$(kr "$T1" profile)" = "$prof" ] || echo "profile changed;"
}

# The tunables are root's and need CAP_NET_ADMIN; RDMA links likewise
test_privileges() {
	local bad

	require kw "$T1" profile default
	bad=$(refused_as as_nobody "Permission denied" "$T1" min_rto_us 5000
		refused_as as_nobody "Permission denied" "$T1" profile lossy-edge)
	ktap_result tuning_refused_to_users "$([ -z "$bad" ]; echo $?)" "$bad"
	bad=$(refused_as no_net_admin "Operation not permitted" "$T1" min_rto_us 5000
		refused_as no_net_admin "Operation not permitted" "$T1" loss_recovery gbn
		refused_as no_net_admin "Operation not permitted" "$T1" profile lossy-edge
		refused_as no_net_admin "Operation not permitted" "$T1/dcqcn" g_shift 4)
	ktap_result tuning_needs_net_admin "$([ -z "$bad" ]; echo $?)" "$bad"
	ktap_check tuning_root_may_write kw "$T1" max_inflight_pkts 128
	kw "$T1" profile default

	require veth_add "" tpv0 "" tpv1
	bad=''
	no_net_admin rdma link add eroce9 type eroce netdev tpv0 2>/dev/null &&
		bad+=" link add accepted;"
	rdma_dev_exists eroce9 && bad+=" eroce9 exists;"
	no_net_admin rdma link delete eroce1 2>/dev/null && bad+=" link delete accepted;"
	rdma_dev_exists eroce1 || bad+=" eroce1 is gone;"
	ktap_result links_need_net_admin "$([ -z "$bad" ]; echo $?)" "${bad# }"
	ip link del tpv0
}

# ---- capture -----------------------------------------------------------------

# cap_stop_decode: stop dumpcap, decode every frame into $DECODED:
# epoch src dsfield bth.opcode bth.psn bth.destqp frame.protocols
cap_stop_decode() {
	cap_stop
	tshark -r "$PCAP" -d udp.port==4791,infiniband -T fields \
		-e frame.time_epoch -e ip.src -e ip.dsfield -e infiniband.bth.opcode \
		-e infiniband.bth.psn -e infiniband.bth.destqp -e frame.protocols \
		>"$DECODED" 2>"$RDMA_TMP/tshark.err"
	[ -s "$DECODED" ]
}

# window FROM TO SRC: decoded frames from SRC sent between FROM and TO
window() {
	awk -v a="$1" -v b="$2" -v s="$3" \
		'$1 >= a && $1 <= b && $2 == s' "$DECODED"
}

# ---- traffic class -----------------------------------------------------------

# TOS runs: name, start, end and expected TOS of eroce1's packets (eroce2's
# must stay 0x00), checked after the capture is decoded
TOS_RUNS=()

# tos_run NAME TOS KIND [ARGS...]: set nothing, run traffic (pingpong or
# perftest send_bw with ARGS on the client) and remember the window (a
# run the debug subset leaves out: only its name)
tos_run() {
	local name=$1 tos=$2 kind=$3 a b; shift 3
	debug_leaves_out "$name" && { TOS_RUNS+=("$name"); return; }
	stat_snap eroce1/1 "$RDMA_TMP/b1"
	stat_snap eroce2/1 "$RDMA_TMP/b2"
	a=$(now)
	if [ "$kind" = pingpong ]; then
		srv_cli 60 "$NS2" "$NS1" ibv_rc_pingpong -d eroce2 -g "$G2" -n "$TOS_PP_N" -s 64 -- \
			ibv_rc_pingpong -d eroce1 -g "$G1" -n "$TOS_PP_N" -s 64 "$@" "$SRV"
	else
		srv_cli 60 "$NS2" "$NS1" ib_send_bw -d eroce2 -x "$G2" -n "$TOS_BW_N" -s 64 -- \
			ib_send_bw -d eroce1 -x "$G1" -n "$TOS_BW_N" -s 64 "$@" "$SRV"
	fi
	local rc=$?
	b=$(now)
	if [ $rc != 0 ]; then
		srv_cli_diag
		ktap_diag "$name: eroce1 $(stat_changes eroce1/1 "$RDMA_TMP/b1")"
		ktap_diag "$name: eroce2 $(stat_changes eroce2/1 "$RDMA_TMP/b2")"
		tos="traffic-failed"
	fi
	TOS_RUNS+=("$name $a $b $tos")
}

traffic_tclass() {
	kw "$T1" profile default && kw "$T1" default_tclass 0 && kw "$T2" profile default
	tos_run tos_default_is_0x00 0x00 pingpong
	kw "$T1" default_tclass 104
	tos_run tos_default_tclass_104_is_0x68 0x68 pingpong
	kw "$T1" ecn 1
	tos_run tos_default_tclass_104_ecn_is_0x6a 0x6a pingpong
	kw "$T1" default_tclass 0
	tos_run tos_ecn_only_is_0x02 0x02 pingpong
	kw "$T1" default_tclass 105
	tos_run tos_ecn_keeps_ect1_0x69 0x69 pingpong
	kw "$T1" default_tclass 104
	kw "$T1" ecn 0
	tos_run tos_perftest_tclass_184_overrides_is_0xb8 0xb8 perftest --tclass=184
	kw "$T1" ecn 1
	tos_run tos_perftest_tclass_184_ecn_is_0xba 0xba perftest --tclass=184
	kw "$T1" profile default
	kw "$T1" default_tclass 0
}

check_tclass() {
	local r name a b tos got other
	for r in "${TOS_RUNS[@]}"; do
		read -r name a b tos <<<"$r"
		[ -n "$a" ] || { debug_subset "$name"; continue; }
		got=$(window "$a" "$b" 198.18.0.1 | awk '{ print tolower($3) }' | sort -u | tr '\n' ' ')
		if [ "$got" = "$tos " ]; then
			ktap_ok "$name"
		else
			ktap_fail "$name" "eroce1 TOS seen: '${got% }', want $tos"
		fi
		# eroce2 keeps its own default: 0 (ACKs and pingpong's replies)
		other=$(window "$a" "$b" 198.18.0.2 | awk '{ print tolower($3) }' | sort -u | tr '\n' ' ')
		[ "$other" = "0x00 " ] ||
			ktap_diag "$name: eroce2 TOS seen '${other% }' (eroce2 knobs at default)"
		[ "$name" = tos_default_tclass_104_is_0x68 ] &&
			ktap_result tos_other_device_unaffected "$([ "$other" = "0x00 " ]; echo $?)" \
				"eroce2 TOS '${other% }', want 0x00"
	done
}

check_decode() {
	local total notib
	total=$(wc -l <"$DECODED")
	# every frame is RoCEv2: an IB BTH inside UDP 4791
	notib=$(awk -F'\t' '$4 == "" || $7 !~ /:infiniband/' "$DECODED" | wc -l)
	ktap_result frames_decode_as_rocev2 "$([ "$total" -gt 0 ] && [ "$notib" = 0 ]; echo $?)" \
		"$notib of $total frames without a BTH"
	ktap_diag "captured $total frames, e.g. $(head -n 1 "$DECODED" | cut -f 7)"
}

# ---- retransmit timing -------------------------------------------------------

RTO_RUNS=()
DROP_ON="tc -n $NS2 qdisc add dev veth2 clsact && tc -n $NS2 filter add dev veth2 ingress protocol ip flower ip_proto udp dst_port 4791 action drop"

drop_off() {
	tc -n "$NS2" qdisc del dev veth2 clsact 2>/dev/null
	return 0
}

# rto_run NAME TIMEOUT RETRY_CNT MIN MAX BACKOFF [HOW [SIZE]]: drop
# everything towards eroce2, post one WRITE of SIZE (64) bytes from eroce1
# and remember the run for check_rto.  HOW sets eroce1's knobs: `knobs`
# (default: MIN, MAX, BACKOFF before the QPs exist), `hook` (the same,
# written after the QPs connected), a profile name (MIN, MAX, BACKOFF are
# then that profile's values, for the expectations), `inflightN` (default
# profile, max_inflight_pkts N; checked by check_inflight).  A run the
# debug subset leaves out is remembered by its name only.
rto_run() {
	local name=$1 to=$2 rc=$3 min=$4 max=$5 bo=$6 how=${7:-knobs} size=${8:-64}
	local set hook rcode=0 a b ms
	debug_leaves_out "$name" && { RTO_RUNS+=("$name"); return; }
	set="echo $max > $T1/max_rto_us && echo $min > $T1/min_rto_us && echo $bo > $T1/rto_backoff"
	hook="date +%s.%N > $RDMA_TMP/hook_ts && $DROP_ON"
	kw "$T1" profile default
	case "$how" in
	knobs) eval "$set" ;;
	hook) hook="$set && $hook" ;;
	inflight*) kw "$T1" max_inflight_pkts "${how#inflight}" ;;
	# a tail-loss probe would add a send of the timed PSN: gaps only
	*) kw "$T1" profile "$how" && kw "$T1" loss_recovery gbn ;;
	esac
	stat_snap eroce1/1 "$RDMA_TMP/b1"
	rm -f "$RDMA_TMP/hook_ts"
	run timeout -k 5 "$(tmo 60)" "$TOOL" --mode retry --op write --size "$size" \
		--timeout "$to" --retry-cnt "$rc" --limit "$(tmo 30)" --hook "$hook" \
		eroce1 "$G1" eroce2 "$G2" || rcode=$?
	b=$(now)
	drop_off
	kw "$T1" profile default
	ktap_diag "$name: eroce1 $(stat_changes eroce1/1 "$RDMA_TMP/b1")"
	a=$(cat "$RDMA_TMP/hook_ts" 2>/dev/null || echo 0)
	ms=$(awk '$1 == "elapsed_ms" { print $2 }' <<<"$LAST_OUT")
	if [ $rcode != 0 ] || [ -z "$ms" ]; then
		ktap_diag "$name: eroce_retry rc=$rcode: $LAST_OUT"
		ms=none
	fi
	case "$how" in
	inflight*) INFLIGHT_RUN="$a $b ${how#inflight} $rcode" ;;
	*) RTO_RUNS+=("$name $a $b $ms $to $rc $min $max $bo") ;;
	esac
}

# rto_expect TIMEOUT RETRY_CNT MIN_US MAX_US BACKOFF: the retry_cnt + 1
# RTOs in ms, as eroce_req_rto_ns() computes them
rto_expect() {
	awk -v t="$1" -v n="$2" -v mn="$3" -v mx="$4" -v bo="$5" 'BEGIN {
		for (k = 0; k <= n; k++) {
			r = 0.004096 * 2 ^ t
			if (r < mn / 1000) r = mn / 1000
			if (bo == 2) r *= 2 ^ (k < 16 ? k : 16)
			cap = mx / 1000; if (cap < mn / 1000) cap = mn / 1000
			if (mx > 0 && r > cap) r = cap
			printf "%.3f ", r
		}
	}'
}

# lost_tx FROM TO: send times (ms, relative to the first) of eroce1's most
# often sent PSN between FROM and TO
lost_tx() {
	window "$1" "$2" 198.18.0.1 | awk '$4 != 17 { n[$5]++; t[$5] = t[$5] " " $1 }
		END { for (p in n) if (n[p] > best) { best = n[p]; bp = p }
		      split(t[bp], a, " "); for (i = 1; i <= best; i++)
		      printf "%.3f ", (a[i] - a[1]) * 1000 }'
}

# RTO_UPPER: an awk function, rto_upper(E, ALT, K): halfway between the
# sum of the first K expected RTOs (the string E) and the smallest sum of
# the first K of a mistake's (ALT: comma-separated strings) that is
# larger; no bound (1e9) when no mistake is larger
RTO_UPPER='
function rto_upper(e, alt, k,    E, A, V, na, i, j, se, sa, best) {
	split(e, E, " ")
	for (i = 1; i <= k; i++) se += E[i]
	best = -1
	na = split(alt, A, ",")
	for (j = 1; j <= na; j++) {
		if (split(A[j], V, " ") < k) continue
		sa = 0
		for (i = 1; i <= k; i++) sa += V[i]
		if (sa > se + 0.5 && (best < 0 || sa < best)) best = sa
	}
	return best < 0 ? 1e9 : (se + best) / 2
}'

check_rto() {
	local r name a b ms to rc min max bo exp alt tx verdict sum
	for r in "${RTO_RUNS[@]}"; do
		read -r name a b ms to rc min max bo <<<"$r"
		[ -n "$a" ] || {
			debug_subset "${name}_gaps" "${name}_retry_exceeded_after_sum"
			continue
		}
		exp=$(rto_expect "$to" "$rc" "$min" "$max" "$bo")
		# the mistakes above: a doubling where a constant is due, a
		# ceiling not applied (the same as exp where they change nothing)
		alt=
		[ "$bo" = 1 ] && alt+="$(rto_expect "$to" "$rc" "$min" "$max" 2),"
		[ "$max" != 0 ] && alt+="$(rto_expect "$to" "$rc" "$min" 0 "$bo"),"
		tx=$(lost_tx "$a" "$b")
		ktap_diag "$name: timeout $to retry_cnt $rc min_rto_us $min max_rto_us $max rto_backoff $bo"
		ktap_diag "  expected RTOs ms: $exp"
		ktap_diag "  sends at ms:      $tx  error after ${ms} ms"
		# gaps, each no shorter than its expected RTO; the floor; the
		# sum of the gaps below halfway to the mistakes' (rto_upper)
		verdict=$(awk -v e="$exp" -v x="$tx" -v n="$rc" -v mn="$min" -v alt="$alt" "$RTO_UPPER"'
		BEGIN {
			ne = split(e, E, " "); nx = split(x, X, " ")
			if (nx != n + 1) { printf "%d sends, want %d", nx, n + 1; exit }
			lo = 1e9
			for (i = 1; i < nx; i++) {
				g = X[i + 1] - X[i]
				if (g < lo) lo = g
				if (g < 0.9 * E[i] - 1) {
					printf "gap %d is %.1f ms, want at least %.1f", i, g, 0.9 * E[i] - 1; exit
				}
			}
			if (mn > 0 && lo < 0.98 * mn / 1000 - 0.5) {
				printf "gap %.1f ms below min_rto_us", lo; exit
			}
			hi = rto_upper(e, alt, n)
			if (X[nx] > hi) {
				printf "gaps sum to %.1f ms, want at most %.1f (halfway to a mistake)", X[nx], hi; exit
			}
			print "ok"
		}')
		# the number of sends is strict (retry_cnt honoured), a gap a bound
		case "$verdict" in
		ok) ktap_ok "${name}_gaps" ;;
		*" sends, want "*) ktap_fail "${name}_gaps" "$verdict" ;;
		*) ktap_bound "${name}_gaps" 1 "$verdict" ;;
		esac
		# the error after the sum of the retry_cnt + 1 RTOs
		sum=$(awk -v e="$exp" 'BEGIN { n = split(e, E, " "); for (i = 1; i <= n; i++) s += E[i]; printf "%.0f", s }')
		verdict=$(awk -v m="$ms" -v s="$sum" -v e="$exp" -v alt="$alt" -v n="$rc" "$RTO_UPPER"'
		BEGIN {
			if (m !~ /^[0-9]+$/) { print "no retry-exceeded completion"; exit }
			hi = rto_upper(e, alt, n + 1)
			if (m < 0.9 * s - 2 || m > hi) { printf "after %d ms, want %d..%d", m, 0.9 * s - 2, hi; exit }
			print "ok" }')
		# no retry-exceeded completion is a failure, a late or early one a
		# missed bound
		case "$verdict" in
		ok) ktap_ok "${name}_retry_exceeded_after_sum" ;;
		"after "*) ktap_bound "${name}_retry_exceeded_after_sum" 1 "$verdict" ;;
		*) ktap_fail "${name}_retry_exceeded_after_sum" "$verdict" ;;
		esac
	done
}

INFLIGHT_RUN=
traffic_rto() {
	# floor: QP timeout 10 (4.2 ms) raised to 200 ms, constant
	rto_run rto_constant_min_floor 10 3 200000 0 1
	# doubling from the floor; knobs written after the QPs connected
	rto_run rto_doubling_set_on_live_qp 10 3 100000 0 2 hook
	# doubling capped: 50, 100, 150, 150, 150 (+150)
	rto_run rto_doubling_max_ceiling 10 5 50000 150000 2
	# the ceiling cuts the QP's own timeout (18 = 1.07 s) to 100 ms
	rto_run rto_max_caps_qp_timeout 18 2 0 100000 1
	# a QP timeout above the floor wins (15 = 134 ms)
	rto_run rto_qp_timeout_above_min 15 4 20000 0 1
	# lossy-edge: timeout 5 (131 us) floored at 1 ms, doubling: 1..128 ms
	rto_run rto_profile_lossy_edge 5 7 1000 1000000 2 lossy-edge
	# max_inflight_pkts 4: a 64-packet WRITE puts 4 PSNs on the wire
	rto_run max_inflight 14 1 0 0 1 inflight4 65536
}

check_inflight() {
	local a b n rc psns
	read -r a b n rc <<<"$INFLIGHT_RUN"
	# the WRITE failed with retry exceeded, and a WR posted afterwards
	# was flushed (eroce_retry's ERR-state check)
	ktap_result "max_inflight_pkts_${n}_retry_exceeded_then_flush" "$rc" \
		"eroce_retry exit $rc (see its output above)"
	psns=$(window "$a" "$b" 198.18.0.1 | awk '$4 != 17 { print $5 }' | sort -un | wc -l)
	ktap_result "max_inflight_pkts_${n}_bounds_window" "$([ "$psns" = "$n" ]; echo $?)" \
		"$psns distinct PSNs sent into the void, want $n"
}

# no_stall N: 64 KiB messages (64 packets) with max_inflight_pkts N and
# no loss: the window must reopen on acknowledgments, not on timeouts.
# min_rto_us 1 s: an ACK that a loaded machine delivers late (past the
# QP's 67 ms) is no timeout, a window that waits for the timer is 1 s.
# STALL_N messages (5; 1 on the debug kernel: still 16 windows)
no_stall() {
	local n=$1 b1=$RDMA_TMP/b1 to
	kw "$T1" profile default
	kw "$T1" max_inflight_pkts "$n"
	kw "$T1" min_rto_us 1000000
	stat_snap eroce1/1 "$b1"
	srv_cli 60 "$NS2" "$NS1" ibv_rc_pingpong -d eroce2 -g "$G2" -n "$STALL_N" -s 65536 -- \
		ibv_rc_pingpong -d eroce1 -g "$G1" -n "$STALL_N" -s 65536 "$SRV"
	local rc=$?
	to=$(stat_delta eroce1/1 "$b1" retransmit_timeouts)
	ktap_diag "max_inflight_pkts $n: $(grep iters <<<"$CLI_OUT"); eroce1 $(stat_changes eroce1/1 "$b1")"
	kw "$T1" profile default
	[ $rc = 0 ] || srv_cli_diag
	ktap_result "max_inflight_pkts_${n}_no_timeouts_without_loss" \
		"$([ $rc = 0 ] && [ "$to" = 0 ]; echo $?)" \
		"pingpong rc=$rc, $to retransmit timeouts without any loss"
}

# ---- main ----------------------------------------------------------------------

ktap_plan 94
require eroce_pair_setup
require pair_gids
pair_gids
require build_tool
require command -v dumpcap tshark
kmsg_mark

test_defaults		# 17
test_validation		# 27
test_dcqcn_files	# 2
test_profiles		# 12
test_privileges		# 4

# not through `require`: its command substitution would wait for dumpcap
cap_start "$NS1" veth1 "$PCAP" || { ktap_diag "$(cat "$RDMA_TMP/dumpcap.err")"; ktap_bail "dumpcap did not start"; }
traffic_tclass
traffic_rto
cap_stop_decode || { ktap_diag "$(tail -n 5 "$RDMA_TMP/tshark.err")"; ktap_bail "nothing captured or decoded"; }
check_decode		# 1
check_tclass		# 8
check_rto		# 12
check_inflight		# 2
no_stall 4		# 1
kw "$T1" profile default
ktap_diag "eroce1: $(stat_nonzero eroce1/1)"
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -iE "eroce.*(bug|warn)"'
ktap_finish
