# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# lib_rdma.sh: traffic helpers for the eroce transport tests; source it after
# lib.sh.
#   setup           eroce_pair_setup (ns1/eroce1 <-> ns2/eroce2 over veth),
#                   rxe_pair_setup (rxe1 <-> rxe2, policy-routed veth),
#                   routed_veth_pair (two devices in the initial namespace
#                   over a veth), eroce_routed_setup (eroce1 <-> eroce2
#                   on it), eroce_links_ready (the pair's ports active and
#                   GIDs present again, after a test took them away),
#                   gid_index_of DEV ADDR, objects and objects_are (what
#                   eroce1 and eroce2 hold, as `rdma resource` counts it)
#   traffic         srv_cli (server in one namespace, client in another,
#                   both must exit 0, output kept), tcp_listening,
#                   cm_listening
#   expectations    out_has, perftest_ok
#   counters        stat_get, stat_snap, stat_delta, stat_moved,
#                   stat_nonzero, stat_changes (to stat_delta and
#                   stat_moved a missing counter is an error, never 0)
#   netem           netem_set, netem_clear
#   chosen loss     drop_once, drop_first, drop_count, drop_clear (tc
#                   filters that drop chosen PSNs once)
#   capture         cap_start, cap_stop (dumpcap of RoCEv2 frames), now
# Every command runs under `timeout`: a hang fails one subtest, not the VM.

: "${RDMA_TMP:=/tmp/eroce-rdma}"
mkdir -p "$RDMA_TMP"

SRV_OUT=
CLI_OUT=
SRV_RC=
CLI_RC=

# ---- setup -----------------------------------------------------------------

# objects: what the eroce devices hold, as `rdma resource` counts it
objects() {
	rdma resource show 2>/dev/null | grep -E '^[0-9]+: eroce[12]:' |
		sed 's/^[0-9]*: //' | sort
}

# objects_are COUNTS: the devices hold COUNTS (as objects prints them)
# shellcheck disable=SC2317  # called through wait_for
objects_are() {
	[ "$(objects)" = "$1" ]
}


# gid_index_of DEV ADDR: the lowest RoCE v2 GID index holding ADDR (IPv4)
gid_index_of() {
	local i
	for i in $(gid_indexes "$1" "$(ipv4_gid "$2")"); do
		[ "$(gid_attr "$1" "$i" types)" = "RoCE v2" ] && { echo "$i"; return 0; }
	done
	return 1
}

# eroce_pair_setup: eroce.ko and the provider from the tree, then
# eroce_links_setup.  `require` runs it in a subshell: call pair_gids
# afterwards for G1/G2.
eroce_pair_setup() {
	eroce_load && provider_install && eroce_links_setup
}

# eroce_links_setup: with eroce and its provider already in place (from
# the tree or from packages), eroce1 on ns1/veth1 (198.18.0.1) and eroce2
# on ns2/veth2 (198.18.0.2), ports active, IPv4 GIDs present
eroce_links_setup() {
	two_ns_setup &&
		ns1 rdma link add eroce1 type eroce netdev veth1 &&
		ns2 rdma link add eroce2 type eroce netdev veth2 &&
		eroce_links_ready
}

# eroce_links_ready: the devices of eroce_links_setup have their ports
# active and their IPv4 GIDs within 30 s; one ping resolves the
# neighbours before the first connection attempt
eroce_links_ready() {
	wait_for 30 port_state_is eroce1 "4: ACTIVE" &&
		wait_for 30 port_state_is eroce2 "4: ACTIVE" &&
		wait_for 30 has_gid eroce1 "$(ipv4_gid 198.18.0.1)" &&
		wait_for 30 has_gid eroce2 "$(ipv4_gid 198.18.0.2)" || return
	# shellcheck disable=SC2086  # $PING may be "busybox ping"
	ns1 $PING -c 1 -W 2 198.18.0.2 >/dev/null 2>&1
	return 0
}

# routed_veth_pair DEV1 IP1 DEV2 IP2 TABLE [any-src]: a veth pair DEV1
# (IP1/24) <-> DEV2 (IP2/24), both ends in the initial namespace.
# Locally generated packets from one end's address to the other's are
# routed out of the veth (rules at pref TABLE and TABLE+1, looking up
# tables of the same numbers, before the local table, which moves to
# pref 1000); arriving packets are then local (accept_local, no
# rp_filter).  Two devices in the initial namespace, where the kernel's
# consumers (nvmet, nfsd) live, then talk over a real link.  any-src:
# packets to IP2 from a source not chosen yet go out of DEV1 too (pref
# TABLE-1), for consumers that connect without binding one (the NFS
# client, open-iscsi).
routed_veth_pair() {
	local d1=$1 a1=$2 d2=$3 a2=$4 t=$5 any=${6-} d
	veth_add "" "$d1" "" "$d2" &&
		addr_add "" "$d1" "$a1/24" && addr_add "" "$d2" "$a2/24" || return
	for d in all default "$d1" "$d2"; do
		sysctl -qw "net.ipv4.conf.$d.rp_filter=0" "net.ipv4.conf.$d.accept_local=1" || return
	done
	ip route add "$a2/32" dev "$d1" src "$a1" table "$t" &&
		ip route add "$a1/32" dev "$d2" src "$a2" table $((t + 1)) &&
		ip rule add pref "$t" iif lo from "$a1" to "$a2" lookup "$t" &&
		ip rule add pref $((t + 1)) iif lo from "$a2" to "$a1" lookup $((t + 1)) || return
	if [ "$any" = any-src ]; then
		ip rule add pref $((t - 1)) iif lo to "$a2" lookup "$t" || return
	fi
	if ip rule show pref 0 | grep -q 'lookup local'; then
		ip rule add pref 1000 lookup local && ip rule del pref 0 lookup local || return
	fi
}

# routed_links_ready SECS DEV1 IP1 DEV2 IP2: the RDMA devices of a
# routed_veth_pair have their ports active and their IPv4 GIDs within
# SECS; one ping from IP1 to IP2 resolves the neighbours before the first
# connection attempt
routed_links_ready() {
	local s=$1 d1=$2 a1=$3 d2=$4 a2=$5
	wait_for "$s" port_state_is "$d1" "4: ACTIVE" &&
		wait_for "$s" port_state_is "$d2" "4: ACTIVE" &&
		wait_for "$s" has_gid "$d1" "$(ipv4_gid "$a1")" &&
		wait_for "$s" has_gid "$d2" "$(ipv4_gid "$a2")" || return
	# shellcheck disable=SC2086
	$PING -c 1 -W 2 -I "$a1" "$a2" >/dev/null 2>&1
	return 0
}

# eroce_routed_setup [any-src]: eroce.ko from the tree, eroce1 (nve1
# 198.18.4.1) and eroce2 (nve2 198.18.4.2) in the initial namespace on
# routed_veth_pair (any-src passed on), routed_links_ready
eroce_routed_setup() {
	eroce_load &&
		routed_veth_pair nve1 198.18.4.1 nve2 198.18.4.2 110 "${1-}" &&
		rdma link add eroce1 type eroce netdev nve1 &&
		rdma link add eroce2 type eroce netdev nve2 &&
		routed_links_ready 30 eroce1 198.18.4.1 eroce2 198.18.4.2
}

# rxe_pair_setup [any-src]: rxe1 (vr1 198.18.1.1) <-> rxe2 (vr2
# 198.18.1.2) on routed_veth_pair (any-src passed on),
# routed_links_ready
rxe_pair_setup() {
	rxe_load &&
		routed_veth_pair vr1 198.18.1.1 vr2 198.18.1.2 100 "${1-}" &&
		rxe_add rxe1 vr1 && rxe_add rxe2 vr2 &&
		routed_links_ready 10 rxe1 198.18.1.1 rxe2 198.18.1.2
}

# vlan_pair_add VID SECS: VLAN VID on veth1 (ns1, 198.18.VID.1/24) and on
# veth2 (ns2, 198.18.VID.2/24), both up, and their IPv4 GIDs on
# eroce1/eroce2 within SECS seconds
vlan_pair_add() {
	local vid=$1 secs=$2
	ns1 ip link add link veth1 name "veth1.$vid" type vlan id "$vid" &&
		ns2 ip link add link veth2 name "veth2.$vid" type vlan id "$vid" &&
		ns1 ip addr add "198.18.$vid.1/24" dev "veth1.$vid" &&
		ns2 ip addr add "198.18.$vid.2/24" dev "veth2.$vid" &&
		ns1 ip link set "veth1.$vid" up && ns2 ip link set "veth2.$vid" up &&
		wait_for "$secs" has_gid eroce1 "$(ipv4_gid "198.18.$vid.1")" &&
		wait_for "$secs" has_gid eroce2 "$(ipv4_gid "198.18.$vid.2")"
}

# pair_gids: G1/G2, the IPv4-mapped GID indexes of eroce1/eroce2
pair_gids() {
	# shellcheck disable=SC2034  # used by the test scripts
	G1=$(gid_index_of eroce1 198.18.0.1) && G2=$(gid_index_of eroce2 198.18.0.2)
}

# ---- traffic -----------------------------------------------------------------

# tcp_listening NS PORT: something in NS ("" = initial) listens on TCP PORT
tcp_listening() {
	local pfx=()
	[ -n "$1" ] && pfx=(ip netns exec "$1")
	"${pfx[@]}" ss -Hltn "sport = :$2" 2>/dev/null | grep -q .
}

# cm_listening PORT [DEV]: an rdma_cm ID listens on PORT (any namespace:
# `rdma resource` lists them all), on DEV if given.  A wildcard listener
# shows as one ID per device, made one after the other: a client may only
# connect once the one on its server's device is there (before it, the
# server's CM rejects the request, "invalid service ID", and perftest's
# retry of a rejected connection crashes in librdmacm)
cm_listening() {
	rdma resource show cm_id 2>/dev/null |
		grep -E "state LISTEN .*src-addr [^ ]*:$1( |\$)" |
		grep -qE "^link ${2:-[^ ]+}/"
}

# cmd_device ARG...: the value of the command's -d option (perftest's
# device), or nothing
cmd_device() {
	while [ $# -gt 1 ]; do
		[ "$1" = -d ] && { echo "$2"; return; }
		shift
	done
}

# srv_cli [-p PORT] [-c PORT] [-r REGEX] [-w SECS] SECS SRV_NS CLI_NS SRV_CMD -- CLI_CMD
# Starts SRV_CMD in SRV_NS ("" = initial namespace) in the background, waits
# until it listens on TCP PORT (default 18515), or with -c on rdma_cm PORT
# (rping, perftest -R), or with -r until its output matches the extended
# REGEX, or without a port (-p 0) SECS_WAIT seconds (-w,
# default 2), runs CLI_CMD in CLI_NS, then waits for the server.  The
# client runs under `timeout SECS` (times TIMEOUT_MULT: see lib.sh), the
# server 60 s (the longest wait for it to listen) longer.  SC_CLI holds
# CLI_CMD, SC_MOVED the bytes its device moved (eroce devices only).  Outputs in SRV_OUT/CLI_OUT, statuses in
# SRV_RC/CLI_RC; returns 0 when both exited 0.  Output is line
# buffered (stdbuf) so that a killed side still shows how far it got.  A
# run that perftest's clock calibration spoiled (see
# perftest_calibration_failed) is repeated once.
srv_cli() {
	srv_cli_once "$@" && return 0
	perftest_calibration_failed || return 1
	srv_cli_once "$@"
}

srv_cli_once() {
	local port=18515 cmport="" ready="" wsecs=2 t sns cns spid b0 b1
	local -a srv=() cli=() spfx=() cpfx=()
	while :; do
		case "$1" in
		-p) port=$2; shift 2 ;;
		-c) cmport=$2; port=0; shift 2 ;;
		-r) ready=$2; port=0; shift 2 ;;
		-w) wsecs=$2; shift 2 ;;
		*) break ;;
		esac
	done
	t=$(($1 * TIMEOUT_MULT)) sns=$2 cns=$3; shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	[ -n "$sns" ] && spfx=(ip netns exec "$sns")
	[ -n "$cns" ] && cpfx=(ip netns exec "$cns")
	SC_CLI=("${cli[@]}")
	b0=$(dev_bytes "$(cmd_device "${cli[@]}")")

	# the server's limit counts the wait for it to listen too: it serves
	# the client's whole limit after that
	"${spfx[@]}" timeout -k 5 $((t + 60 * TIMEOUT_MULT)) stdbuf -oL "${srv[@]}" \
		>"$RDMA_TMP/srv.out" 2>&1 &
	spid=$!
	if [ -n "$cmport" ]; then
		wait_for 60 cm_listening "$cmport" "$(cmd_device "${srv[@]}")"
	elif [ -n "$ready" ]; then
		wait_for 60 grep -Eq "$ready" "$RDMA_TMP/srv.out"
	elif [ "$port" != 0 ]; then
		wait_for 60 tcp_listening "$sns" "$port"
	else
		sleep "$wsecs"
	fi
	CLI_RC=0
	"${cpfx[@]}" timeout -k 5 "$t" stdbuf -oL "${cli[@]}" >"$RDMA_TMP/cli.out" 2>&1 || CLI_RC=$?
	SRV_RC=0
	wait "$spid" || SRV_RC=$?
	SRV_OUT=$(cat "$RDMA_TMP/srv.out")
	CLI_OUT=$(cat "$RDMA_TMP/cli.out")
	SC_MOVED=
	b1=$(dev_bytes "$(cmd_device "${cli[@]}")")
	[ -n "$b0" ] && [ -n "$b1" ] && SC_MOVED=$((b1 - b0))
	[ "$SRV_RC" = 0 ] && [ "$CLI_RC" = 0 ]
}

# srv_cli_diag: what went wrong on each side, as KTAP diagnostics: the
# error lines (perftest prints them to unbuffered stderr, so they may sit
# anywhere in the output), the frames of a backtrace a crash handler
# printed ("lib.so(func+0x1f)[0x7f...]": libpsm2 and libinfinipath, which
# libfabric loads, install one) and the last lines
srv_cli_diag() {
	local side out rc
	for side in server client; do
		if [ $side = server ]; then out=$SRV_OUT rc=$SRV_RC; else out=$CLI_OUT rc=$CLI_RC; fi
		ktap_diag "$side rc=$rc$([ "$rc" = 124 ] && echo ' (timed out)'):"
		ktap_diag "$( { grep -iE 'err|fail|couldn|unable|cannot|mismatch|timeout|invalid|not |signal|segment|abort' <<<"$out" | grep -v 'Device not recognized to implement inline' | head -n 8
			grep -E '\(.*\+0x[0-9a-f]+\) ?\[0x[0-9a-f]+\]' <<<"$out" | head -n 16
			tail -n 3 <<<"$out"; } | sed 's/^[[:space:]]*//' | awk '!seen[$0]++')"
	done
}

# out_has REGEX: both SRV_OUT and CLI_OUT match the extended REGEX
out_has() {
	grep -Eq "$1" <<<"$SRV_OUT" && grep -Eq "$1" <<<"$CLI_OUT"
}

# cli_has REGEX: CLI_OUT matches the extended REGEX
cli_has() {
	grep -Eq "$1" <<<"$CLI_OUT"
}

# perftest_iters N: N perftest iterations, an eighth on the debug kernel
# (lib.sh's debug_scaled), but at least 5 (perftest refuses fewer)
perftest_iters() {
	local n
	n=$(debug_scaled "$1")
	[ "$n" -ge 5 ] || n=5
	echo "$n"
}

# cli_opt OPT: the value of the last srv_cli client's option OPT ("-n"),
# or nothing
cli_opt() {
	local i
	for ((i = 0; i + 1 < ${#SC_CLI[@]}; i++)); do
		[ "${SC_CLI[i]}" = "$1" ] && echo "${SC_CLI[i + 1]}"
	done | tail -n 1
}

# perftest_ok: both perftest sides exited 0, the client printed a result
# row (the line after the "#bytes" header: bytes, iterations, ...) with
# the message size (-s) and the iterations (-n) it was given, and the
# client's device (-d, an eroce device: its tx_bytes and rx_bytes)
# moved at least that many bytes.  Rates are not checked: under TCG the
# clock calibration may print 0.
perftest_ok() {
	local row s n
	[ "$SRV_RC" = 0 ] && [ "$CLI_RC" = 0 ] || return 1
	row=$(awk '/#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { print $1, $2; exit }' <<<"$CLI_OUT")
	[ -n "$row" ] || return 1
	s=$(cli_opt -s) n=$(cli_opt -n)
	if [ -n "$s" ] && [ "${row% *}" != "$s" ]; then
		ktap_diag "perftest_ok: a row of ${row% *} bytes, -s $s"
		return 1
	fi
	if [ -n "$n" ] && [ "${row#* }" != "$n" ]; then
		ktap_diag "perftest_ok: a row of ${row#* } iterations, -n $n"
		return 1
	fi
	if [ -n "$SC_MOVED" ] && [ "$SC_MOVED" -lt $(( ${row% *} * ${row#* } )) ]; then
		ktap_diag "perftest_ok: $(cmd_device "${SC_CLI[@]}") moved $SC_MOVED bytes, less than $row (bytes, iterations)"
		return 1
	fi
}

# dev_bytes DEV: tx_bytes plus rx_bytes of the eroce device DEV's port
# 1, or nothing (another device, or none)
dev_bytes() {
	[[ "$1" == eroce* ]] || return 0
	stat_all "$1/1" | awk '$1 == "tx_bytes" || $1 == "rx_bytes" { n += $2; f++ }
		END { if (f == 2) print n }'
}

# perftest_no_report TEXT: perftest measured its CPU clock after the
# transfer and, the samples too noisy under TCG ("Correlation coefficient
# r^2 ... < 0.9"), refused to print a report (and exited 1): a
# measurement artifact, not a transfer failure
perftest_no_report() {
	grep -q "Can't produce a report" <<<"$1"
}

# perftest_calibration_failed: srv_cli's pair failed only that way
perftest_calibration_failed() {
	[ "$SRV_RC" = 1 ] || [ "$CLI_RC" = 1 ] || return 1
	perftest_no_report "$SRV_OUT$CLI_OUT"
}

# ktap_srv_cli NAME CHECK SRV_CMD... -- CLI_CMD...: srv_cli with the default
# namespaces (server ns2, client ns1) and a 60 s limit, then CHECK (a
# function or command, run after both exited 0) decides the verdict
# Set SC_OPTS (array) for srv_cli options, SC_T for the time limit.
ktap_srv_cli() {
	local name=$1 check=$2; shift 2
	if srv_cli "${SC_OPTS[@]}" "${SC_T:-60}" "${SC_SNS-$NS2}" "${SC_CNS-$NS1}" "$@" &&
		eval "$check"; then
		ktap_ok "$name"
	else
		srv_cli_diag
		ktap_fail "$name" "server rc=$SRV_RC client rc=$CLI_RC check: $check"
	fi
}
SC_OPTS=()
SC_CLI=()
SC_MOVED=

# ---- counters ----------------------------------------------------------------

# stat_all LINK: "name value" lines of `rdma statistic show link LINK`
stat_all() {
	rdma statistic show link "$1" 2>/dev/null |
		sed -e 's/^link [^ ]* //' | tr ' ' '\n' | sed '/^$/d' | paste -d ' ' - -
}

# udp_stat NS FIELD: the namespace NS's UDP statistic FIELD of
# /proc/net/snmp (InDatagrams, InErrors, ...); empty when unknown
udp_stat() {
	ip netns exec "$1" awk -v f="$2" '
		$1 == "Udp:" && $2 !~ /^[0-9]+$/ { for (i = 2; i <= NF; i++) col[$i] = i; next }
		$1 == "Udp:" && (f in col) { print $col[f] }' /proc/net/snmp
}

# stat_get LINK COUNTER: one counter's value (empty when unknown)
stat_get() {
	stat_all "$1" | awk -v c="$2" '$1 == c { print $2; exit }'
}

# stat_snap LINK FILE: save all counters of LINK
stat_snap() {
	stat_all "$1" >"$2"
}

# stat_delta LINK FILE COUNTER: counter now minus its value in FILE.  A
# counter the link does not have (now or in FILE) is an error, not 0: it
# prints nothing (so that any comparison with the result fails), says so
# on stderr and returns 1
stat_delta() {
	local now before
	now=$(stat_get "$1" "$3")
	before=$(awk -v c="$3" '$1 == c { print $2; exit }' "$2")
	if [ -z "$now" ] || [ -z "$before" ]; then
		echo "stat_delta: $1 has no counter $3" >&2
		return 1
	fi
	echo $((now - before))
}

# stat_moved LINK FILE COUNTER...: at least one COUNTER grew since FILE;
# every COUNTER must exist
stat_moved() {
	local l=$1 f=$2 c d moved=1; shift 2
	for c in "$@"; do
		d=$(stat_delta "$l" "$f" "$c") || return 1
		[ "$d" -gt 0 ] && moved=0
	done
	return $moved
}

# counter_sum LINK NAME...: the sum of the counters; nothing (and false)
# when one is missing, so that a comparison with it fails instead of
# reading 0
counter_sum() {
	local link=$1 s=0 c v; shift
	for c in "$@"; do
		v=$(stat_get "$link" "$c")
		[ -n "$v" ] || return 1
		s=$((s + v))
	done
	echo "$s"
}

# softnet_processed: each CPU's count of packets its softirq processed
# (/proc/net/softnet_stat), one line per CPU
softnet_processed() {
	local p rest
	while read -r p rest; do echo $((16#$p)); done </proc/net/softnet_stat
}

# softnet_spread FILE MIN [WHO]: every CPU processed at least MIN packets
# since `softnet_processed >FILE`; one diagnostic per CPU (WHO: its prefix)
softnet_spread() {
	local i=0 before now moved rc=0
	while read -r before <&3 && read -r now <&4; do
		moved=$((now - before))
		ktap_diag "${3:+$3: }CPU $i processed $moved packets"
		[ "$moved" -ge "$2" ] || rc=1
		i=$((i + 1))
	done 3<"$1" 4< <(softnet_processed)
	[ "$i" -gt 0 ] && return $rc
}

# stat_nonzero LINK: the counters that are not 0, on one line
stat_nonzero() {
	stat_all "$1" | awk '$2 != 0 { printf "%s=%s ", $1, $2 } END { print "" }'
}

# stat_changes LINK FILE: counters that changed since FILE, on one line
stat_changes() {
	stat_all "$1" | awk 'NR == FNR { b[$1] = $2; next }
		$2 != b[$1] { printf "%s+%d ", $1, $2 - b[$1] } END { print "" }' "$2" -
}

# kernel_kb: the kernel memory a leak of eroce's objects shows in,
# unreclaimable slab plus vmalloc (the queues' rings), kB
kernel_kb() {
	awk '$1 == "SUnreclaim:" || $1 == "VmallocUsed:" { n += $2 } END { print n }' \
		/proc/meminfo
}

# ---- an ECN-marking bottleneck ------------------------------------------------

# dcqcn_knobs CC DEV...: each device ECN capable with cc CC, its rate
# capped at 400 Mb/s, and DCQCN's timers and steps set for the bottleneck
# tests' networks (a 20 Mb/s RED qdisc and a round trip of a few ms)
dcqcn_knobs() {
	local cc=$1 d t; shift
	for d in "$@"; do
		t=$IBSYS/$d/tuning
		echo default >"$t/profile" && echo 1 >"$t/ecn" && echo "$cc" >"$t/cc" &&
			echo 400 >"$t/max_rate_mbps" &&
			echo 25000 >"$t/dcqcn/alpha_update_us" &&
			echo 25000 >"$t/dcqcn/rate_increase_us" &&
			echo 1 >"$t/dcqcn/rate_ai_mbps" &&
			echo 5 >"$t/dcqcn/rate_hai_mbps" &&
			echo 2 >"$t/dcqcn/min_rate_mbps" || return
	done
}

# red_stat NS DEV FIELD: "dropped", "sent" (packets) or "marked" of the
# RED qdisc on DEV in NS
red_stat() {
	tc -n "$1" -s qdisc show dev "$2" | awk -v f="$3" '
		/^qdisc red/ { red = 1 }
		red && f == "dropped" && /dropped/ { sub(",", "", $7); print $7; exit }
		red && f == "sent" && /Sent/ { print $4; exit }
		red && f == "marked" && /marked/ { for (i = 1; i < NF; i++) if ($i == "marked") { print $(i + 1); exit } }'
}

# ---- netem -------------------------------------------------------------------

# netem_set NS DEV ARGS...: replace DEV's root qdisc with netem ARGS
netem_set() {
	local ns=$1 dev=$2; shift 2
	tc ${ns:+-n "$ns"} qdisc replace dev "$dev" root netem "$@"
}

# netem_data_set NS DEV ARGS...: netem ARGS for DEV's IPv4 packets of 128
# bytes or more only; the shorter ones (ACKs, NAKs, CNPs: 48-byte IP
# packets) pass untouched.  A prio root with every priority in band 1:1
# (netem) and a u32 filter sending IP total lengths below 128 to band 1:2.
netem_data_set() {
	local ns=$1 dev=$2; shift 2

	tc ${ns:+-n "$ns"} qdisc replace dev "$dev" root handle 1: prio bands 2 \
		priomap 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 &&
	tc ${ns:+-n "$ns"} qdisc add dev "$dev" parent 1:1 handle 10: netem "$@" &&
	tc ${ns:+-n "$ns"} filter add dev "$dev" parent 1: protocol ip pref 10 \
		u32 match u16 0 0xff80 at 2 flowid 1:2
}

# netem_band_stats NS DEV: what netem_data_set's netem saw ("Sent ... pkt
# (dropped N, ...)"), for the test's diagnostics
netem_band_stats() {
	tc ${1:+-n "$1"} -s qdisc show dev "$2" parent 1:1 |
		sed -n 's/^ *\(Sent .*\)$/\1/p'
}

# netem_clear NS DEV: back to the default qdisc
netem_clear() {
	tc ${1:+-n "$1"} qdisc del dev "$2" root 2>/dev/null
	return 0
}

# ---- chosen loss -------------------------------------------------------------
#
# Random loss (netem) is right for showing that traffic survives, wrong for
# comparing two runs: each run loses other packets, and a different number.
# These filters lose chosen packets instead, each exactly once, whatever
# the machine's speed: the retransmission passes.

# drop_once NS DEV DIR OPCODE/MASK PSN_MASK PSN...: at DEV's DIR hook
# (ingress or egress; a clsact qdisc is added if missing), one tc u32
# filter per PSN that drops the first RoCEv2 packet (IPv4 without options,
# UDP port 4791) whose BTH opcode & MASK is OPCODE and whose BTH PSN &
# PSN_MASK is PSN, and passes every later one.  Offsets from the IP
# header: UDP destination port at 22, BTH at 28 (opcode), PSN in the low
# 24 bits of the word at 36.
# "Once" is a police action run backwards (conform-exceed pass/drop: the
# packets it would let through are the ones dropped) with room for one
# packet: mpu 1600 counts every packet (at most 1514 bytes here) as 1600
# bytes, burst 1700 bytes holds one of them, and at 56 bit/s the tokens
# for a second take 214 s to come back, longer than a test runs.
# A tc filter sees an eroce batch (UDP GSO, the tx_batch tunable) as one
# packet, with the first packet's BTH: until drop_clear every eroce
# device sends its packets one by one, so each can be chosen.
drop_once() {
	local ns=$1 dev=$2 dir=$3 op=${4%/*} opmask=${4#*/} mask=$5 psn; shift 5
	eroce_tx_batch_all 0 || return
	tc ${ns:+-n "$ns"} qdisc show dev "$dev" | grep -q clsact ||
		tc ${ns:+-n "$ns"} qdisc add dev "$dev" clsact || return
	for psn in "$@"; do
		drop_first "$ns" "$dev" "$dir" match u8 "$op" "$opmask" at 28 \
			match u32 "$psn" "$mask" at 36 || return
	done
}

# drop_first NS DEV DIR MATCH...: the filter of drop_once, matching the
# tc u32 MATCH arguments (offsets from the IP header) besides UDP port
# 4791; DEV's clsact qdisc exists already (drop_once added it)
drop_first() {
	local ns=$1 dev=$2 dir=$3; shift 3
	tc ${ns:+-n "$ns"} filter add dev "$dev" "$dir" protocol ip pref 20 u32 \
		match u8 17 0xff at 9 match u16 4791 0xffff at 22 "$@" \
		action police rate 56bit burst 1700 mpu 1600 \
		conform-exceed pass/drop
}

# drop_count NS DEV: packets the filters at DEV's two hooks dropped (each
# filter counted once: tc 6.1 lists a clsact qdisc's ingress and egress
# filters together under either)
drop_count() {
	local h
	for h in ingress egress; do
		tc ${1:+-n "$1"} -s filter show dev "$2" "$h" 2>/dev/null
	done | awk 'match($0, /fh [0-9a-f]+::[0-9a-f]+/) { f = substr($0, RSTART, RLENGTH) }
		match($0, /dropped [0-9]+/) { d[f] = substr($0, RSTART + 8, RLENGTH - 8) }
		END { for (f in d) s += d[f]; print s + 0 }'
}

# drop_clear NS DEV: remove DEV's clsact qdisc and with it every filter
drop_clear() {
	tc ${1:+-n "$1"} qdisc del dev "$2" clsact 2>/dev/null
	eroce_tx_batch_all 1
	return 0
}

# eroce_tx_batch_all 0|1: the tx_batch tunable of every eroce device
eroce_tx_batch_all() {
	local f
	for f in /sys/class/infiniband/eroce*/tuning/tx_batch; do
		[ -e "$f" ] || continue
		echo "$1" >"$f" || return
	done
}

# ---- capture ---------------------------------------------------------------

CAP_PID=
CAP_FILE=

# cap_start NS DEV FILE [FILTER]: capture RoCEv2 frames (capture filter
# FILTER, default "udp port 4791") on DEV in namespace NS into FILE with
# dumpcap, in the background; returns once the filter is attached (a
# loaded guest may take a minute to start dumpcap).  Not from a subshell
# (`require`, `$(...)`): CAP_PID would be lost.  DEV's UDP segmentation
# offload is off until cap_stop: eroce's batches (UDP GSO) are cut into
# packets before the capture sees them, as for a NIC without the offload,
# so the capture shows what goes on the wire.
cap_start() {
	CAP_FILE=$3 CAP_NS=$1 CAP_DEV=$2
	ip netns exec "$1" ethtool -K "$2" tx-udp-segmentation off >/dev/null ||
		return
	ip netns exec "$1" dumpcap -q -i "$2" -f "${4:-udp port 4791}" -w "$3" \
		</dev/null >/dev/null 2>"$RDMA_TMP/dumpcap.err" &
	CAP_PID=$!
	# dumpcap says so once its filter is attached
	wait_for 180 grep -q "Capturing on" "$RDMA_TMP/dumpcap.err"
}

# now: the time as capture timestamps give it (epoch seconds, fraction)
now() {
	date +%s.%N
}

# cap_size: the capture file's size in bytes
cap_size() {
	stat -c %s "$CAP_FILE" 2>/dev/null || echo 0
}

# cap_stop: let the last frames in, stop the capture, flush the file.  A
# frame reaches the file late (the kernel hands frames to dumpcap in
# blocks retired after a timeout, dumpcap writes its file in batches), and
# later on a slow machine, where a fixed pause could stop dumpcap before
# the last frames are in: wait until the file has not grown for 2 s (at
# most a minute), then stop it.
cap_stop() {
	local size=-1 same=0 i
	for ((i = 0; i < 120 && same < 4; i++)); do
		sleep 0.5
		if [ "$(cap_size)" = "$size" ]; then
			same=$((same + 1))
		else
			size=$(cap_size)
			same=0
		fi
	done
	kill -TERM "$CAP_PID" 2>/dev/null
	wait "$CAP_PID" 2>/dev/null
	ip netns exec "$CAP_NS" ethtool -K "$CAP_DEV" tx-udp-segmentation on \
		>/dev/null 2>&1
	return 0
}
