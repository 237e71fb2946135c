#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 900
# lab-switch-guest: yes
#
# doctor.sh: `eroce doctor PEER` against a switch set up wrong in each way
# (Documentation/admin-guide.rst "Checking a path").  guest0 (the prober)
# checks the path to guest1 (the listener, `eroce doctor --listen`) over
# VLAN 100 (198.18.100.0/24, eroce0 on the NIC: default_tclass 104, DSCP
# 26, ecn 1, SL 3, which eroce's egress-qos-map entry makes PCP 3).  The
# switch guest sets one fault at a time on its port towards guest1, the
# direction the probes take, or guest1 sets one on itself; for each case
# the path checks (path.*) that are not ok must be exactly those the case
# names, with that verdict:
#   clean      nothing
#   pcp        tc act_vlan rewrites the 802.1p priority to 0: path.pcp fail
#   dscp       tc pedit rewrites the DSCP of UDP 4791 to 0 (ECN kept):
#              path.dscp fail
#   ect        tc pedit clears their ECN bits: path.ecn fail
#   red        tbf 1 Mb/s with a RED child without ecn, a small queue: the
#              burst overflows it, nothing is marked: path.ecn warn
#   mtu        the port's MTU 1000: full 1024-byte packets are lost,
#              512-byte ones pass: path.mtu fail (the load then uses 512)
#   drop4791   tc flower drops UDP port 4791: path.udp4791 fail
#   loss       netem loses 1%: path.loss warn
#   reorder    netem delays 100 ms and lets a quarter jump ahead (of the
#              packets of their flow, 40 ms apart): path.reorder warn
#   firewall   guest1's nftables drops UDP 4791 on input: path.udp4791
#              fail (the packets reach its NIC, not eroce); guest1's own
#              `eroce doctor` names the rule (firewall fail)
#   host       guest1 multi-homed (a dummy netdev with an address) with
#              strict rp_filter, and GRO off on its NIC: the path is clean;
#              guest1's own `eroce doctor` warns rp_filter:NIC and nic:NIC
#   clean6     the clean path over IPv6 (2001:db8:100::/64)
# EROCE_DOCTOR_CASES picks cases (default: all of them).
# Run: selftests/run_lab.sh selftests/lab/doctor.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"
# shellcheck source=../lib_lab.sh
. "$(dirname "$0")/../lib_lab.sh"

DEV=eroce0
EROCE_CMD=$EROCE_ROOT/config/eroce
CASES=${EROCE_DOCTOR_CASES:-clean pcp dscp ect red mtu drop4791 loss reorder firewall host clean6}
VID=100
# the listeners' TCP ports: 4792 for IPv4, 4793 for IPv6
CTRL=4792
OUT=$RDMA_TMP/doctor

# expect CASE: "ID:VERDICT ..." the path checks that are not ok
expect() {
	case "$1" in
	clean|clean6|host) echo "" ;;
	pcp) echo "path.pcp:fail" ;;
	dscp) echo "path.dscp:fail" ;;
	ect) echo "path.ecn:fail" ;;
	red) echo "path.ecn:warn" ;;
	mtu) echo "path.mtu:fail" ;;
	drop4791|firewall) echo "path.udp4791:fail" ;;
	loss) echo "path.loss:warn" ;;
	reorder) echo "path.reorder:warn" ;;
	esac
}

# probe_args CASE: eroce doctor's options for it.  A clean lab path
# (guests under TCG, the switch one of them) carries 400 packets of 1 KiB
# a second, not 1600: the defaults (500 and a burst at 2000) are for real
# NICs.  Here the load is 200/s and the burst 100 at 400/s; red's load
# (80/s, 0.7 Mb/s) stays under its bottleneck (1 Mb/s, about 117/s), its
# burst (320/s) does not.  loss: 2000 packets, 20 lost of 1% and 8 needed.
probe_args() {
	case "$1" in
	loss) echo "--rate 250 --seconds 8 --burst 100 --burst-rate 400" ;;
	red) echo "--rate 80 --seconds 2 --burst 150 --burst-rate 320" ;;
	*) echo "--rate 200 --seconds 2 --burst 100 --burst-rate 400" ;;
	esac
}

vlan_ip() {
	if [ "$2" = 6 ]; then echo "2001:db8:100::$(($1 + 1))"; else echo "198.18.100.$(($1 + 1))"; fi
}

# ---- the switch --------------------------------------------------------------

# tos_zero BITS: on PORT1, the BITS of the IPv4 TOS byte of UDP 4791
# zeroed (0xfc the DSCP, 0x3 the ECN field), the header checksum redone
# shellcheck disable=SC2317  # run by fault_set, run by run
tos_zero() {
	tc qdisc add dev "$PORT1" clsact &&
		tc filter add dev "$PORT1" egress protocol 802.1Q flower \
			vlan_ethtype ipv4 ip_proto udp dst_port 4791 \
			action pedit ex munge ip tos set 0 retain "$1" pipe \
			action csum ip
}

# fault_set CASE: the switch's fault for CASE on PORT1 (towards guest1)
# shellcheck disable=SC2317  # run by run
fault_set() {
	case "$1" in
	pcp)
		tc qdisc add dev "$PORT1" clsact &&
			tc filter add dev "$PORT1" egress matchall \
				action vlan modify id "$VID" priority 0 ;;
	dscp) tos_zero 0xfc ;;
	ect) tos_zero 0x3 ;;
	red)
		tc qdisc add dev "$PORT1" root handle 1: tbf rate 1mbit burst 8kb latency 200ms &&
			tc qdisc add dev "$PORT1" parent 1:1 handle 10: red limit 40000 \
				min 5000 max 15000 avpkt 1100 burst 6 bandwidth 1mbit probability 0.5 ;;
	mtu) ip link set dev "$PORT1" mtu 1000 ;;
	drop4791)
		tc qdisc add dev "$PORT1" clsact &&
			tc filter add dev "$PORT1" egress protocol 802.1Q flower \
				vlan_ethtype ipv4 ip_proto udp dst_port 4791 action drop &&
			tc filter add dev "$PORT1" egress protocol 802.1Q flower \
				vlan_ethtype ipv6 ip_proto udp dst_port 4791 action drop ;;
	loss) tc qdisc add dev "$PORT1" root netem loss 1% ;;
	reorder) tc qdisc add dev "$PORT1" root netem delay 100ms reorder 25% 50% ;;
	*) return 0 ;;
	esac
}

fault_clear() {
	tc qdisc del dev "$PORT1" clsact 2>/dev/null
	tc qdisc del dev "$PORT1" root 2>/dev/null
	ip link set dev "$PORT1" mtu "${EROCE_LAB_MTU:-1500}"
	return 0
}

switch_main() {
	local c
	ktap_plan $((1 + $(wc -w <<<"$CASES")))
	lab_setup_ktap
	PORT1=$(lab_switch_port 1)
	modprobe -q -a sch_tbf sch_red sch_netem sch_ingress act_vlan act_pedit \
		act_csum act_gact cls_flower cls_matchall 2>/dev/null
	lab_switch_ready
	for c in $CASES; do
		fault_clear
		if run fault_set "$c"; then
			ktap_diag "switch, $c: $(ip -o link show dev "$PORT1" | grep -o 'mtu [0-9]*'); $(tc qdisc show dev "$PORT1" | tr '\n' ';') $(tc filter show dev "$PORT1" egress 2>/dev/null | grep -E 'action|vlan|munge|drop' | tr -s ' \n' ' ')"
			lab_signal "$c.set"
			ktap_ok "switch_$c"
		else
			ktap_diag "$LAST_OUT"
			lab_signal "$c.set" failed
			ktap_fail "switch_$c" "the fault could not be set"
		fi
		lab_wait "$c.done" 300 0 >/dev/null || ktap_diag "$c: no word from guest0"
	done
	fault_clear
	ktap_finish
}

# ---- the hosts ---------------------------------------------------------------

# shellcheck disable=SC2317  # run by require
setup() {
	eroce_load && provider_install && lab_rdma_link "$DEV" eroce &&
		echo 104 >"$IBSYS/$DEV/tuning/default_tclass" &&
		echo 1 >"$IBSYS/$DEV/tuning/ecn" &&
		ip link add link "$LAB_IF" name "$LAB_IF.$VID" type vlan id "$VID" &&
		ip link set dev "$LAB_IF.$VID" up &&
		addr_add "" "$LAB_IF.$VID" "$(vlan_ip "$LAB_I" 4)/24" "$(vlan_ip "$LAB_I" 6)/64" &&
		wait_for 30 has_gid "$DEV" "$(ipv4_gid "$(vlan_ip "$LAB_I" 4)")"
}

# host_fault_set CASE / host_fault_clear CASE: guest1's own faults
# shellcheck disable=SC2317  # run by run
host_fault_set() {
	case "$1" in
	firewall)
		nft add table inet eroce_lab &&
			nft add chain inet eroce_lab input '{ type filter hook input priority 0; }' &&
			nft add rule inet eroce_lab input udp dport 4791 drop ;;
	host)
		ip link add eroce_lab0 type dummy && ip link set eroce_lab0 up &&
			ip addr add 198.18.99.1/24 dev eroce_lab0 &&
			sysctl -qw net.ipv4.conf.all.rp_filter=1 &&
			ethtool -K "$LAB_IF" gro off ;;
	*) return 0 ;;
	esac
}

host_fault_clear() {
	case "$1" in
	firewall) nft delete table inet eroce_lab ;;
	host)
		ip link del eroce_lab0
		sysctl -qw net.ipv4.conf.all.rp_filter=0
		ethtool -K "$LAB_IF" gro on ;;
	esac
	return 0
}

# host_expect CASE: what guest1's own eroce doctor must say, "ID:VERDICT ..."
host_expect() {
	case "$1" in
	firewall) echo "firewall:fail" ;;
	host) echo "rp_filter:$LAB_IF:warn nic:$LAB_IF:warn" ;;
	esac
}

# prober_cmd CASE: what the prober runs: `eroce doctor PEER` (the host's
# checks and the path's) as people read it for clean (the whole report in
# the KTAP log), with --json for clean6, eroce-path alone for the others
# (the same path checks, without the host's, which take TCG 10 to 20 s)
prober_cmd() {
	case "$1" in
	clean) echo "$EROCE_CMD doctor" ;;
	clean6) echo "$EROCE_CMD doctor --json" ;;
	*) echo "$EROCE_ROOT/config/eroce-path probe" ;;
	esac
}

# verdicts FILE PREFIX: "ID:VERDICT" of each check not ok in report FILE
# (eroce doctor's JSON, or eroce-path's records) whose id starts with PREFIX
verdicts() {
	python3 - "$1" "$2" <<'EOF2' 2>/dev/null | sort | tr '\n' ' '
import json, re, sys
text = open(sys.argv[1]).read()
try:
    checks = [(c["id"], c["verdict"]) for c in json.loads(text)]
except ValueError:
    checks = [tuple(l.split("\t")[1:3]) for l in text.splitlines()
              if l.startswith("R\t")]
    for l in text.splitlines():
        m = re.match(r"(FAIL|WARN|SKIP|OK) +(\S+): ", l)
        if m:
            checks.append((m.group(2), m.group(1).lower()))
for i, v in checks:
    if i.startswith(sys.argv[2]) and v != "ok":
        print("%s:%s" % (i, v))
EOF2
}

# summaries FILE PREFIX: the checks not ok and their evidence, as
# diagnostics
summaries() {
	python3 - "$1" "$2" <<'EOF2' 2>/dev/null
import json, sys
text = open(sys.argv[1]).read()
try:
    checks = [(c["id"], c["verdict"], c["summary"], c["evidence"])
              for c in json.loads(text)]
except ValueError:
    checks = []
    for l in text.splitlines():
        f = l.split("\t")
        if f[0] == "R":
            checks.append((f[1], f[2], f[3], []))
        elif f[0] == "E" and checks:
            checks[-1][3].append(f[1])
for i, v, summary, evidence in checks:
    if i.startswith(sys.argv[2]) and v != "ok":
        print("%s %s: %s" % (v.upper(), i, summary))
        for e in evidence[:4]:
            print("    " + e)
EOF2
}

# same_set "A B" "B A": the same words
same_set() {
	[ "$(tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort | tr '\n' ' ')" = \
	  "$(tr ' ' '\n' <<<"$2" | sed '/^$/d' | sort | tr '\n' ' ')" ]
}

# prober CASE: the path checks to guest1, as expected
prober() {
	local c=$1 fam=4 peer rc=0 got want f=$OUT.$1.report start=$SECONDS
	local -a cmd
	[ "$c" != clean6 ] || fam=6
	peer=$(vlan_ip 1 $fam)
	read -r -a cmd <<<"$(prober_cmd "$c")"
	if [ "$(lab_get "$c.set" "$LAB_SWITCH" 300 2>/dev/null)" = failed ]; then
		ktap_fail "path_$c" "the switch could not set the fault"
		return
	fi
	if ! lab_wait "$c.ready" 300 1 >/dev/null; then
		ktap_fail "path_$c" "guest1 is not ready"
		return
	fi
	# shellcheck disable=SC2046  # the options are words
	timeout $((120 * TIMEOUT_MULT)) "${cmd[@]}" $(probe_args "$c") \
		--port "$(ctrl_port $fam)" "$peer" \
		>"$f" 2>"$f.err" || rc=$?
	got=$(verdicts "$f" path)
	want=$(expect "$c")
	ktap_diag "$c: ${cmd[*]##*/} exit $rc after $((SECONDS - start)) s; not ok: ${got:-none}"
	if [ "${cmd[*]: -1}" = doctor ]; then
		sed 's/^/  /' "$f" | while IFS= read -r l; do ktap_diag "$l"; done
	else
		summaries "$f" path | head -n 20 | while IFS= read -r l; do ktap_diag "  $l"; done
	fi
	if ! grep -q 'path\.udp4791' "$f"; then
		ktap_diag "$(head -c 600 "$f") $(head -c 400 "$f.err")"
		ktap_fail "path_$c" "no report (exit $rc)"
	elif same_set "$got" "$want"; then
		ktap_ok "path_$c"
	else
		ktap_fail "path_$c" "not ok: '${got% }', want '$want'"
	fi
}

# ctrl_port FAMILY: the listener's TCP port for guest0's address of
# FAMILY (one listener each, for the whole script)
ctrl_port() {
	echo $((CTRL + ($1 == 6)))
}

# listener_start FAMILY: `eroce doctor --listen` for guest0's address of
# FAMILY, in the background, its PID in LISTENER_FAMILY
listener_start() {
	"$EROCE_CMD" doctor --listen --peer "$(vlan_ip 0 "$1")" --port "$(ctrl_port "$1")" \
		--timeout $((900 * TIMEOUT_MULT)) >"$OUT.listen$1" 2>&1 &
	eval "LISTENER_$1=\$!"
	wait_for 30 tcp_listening "" "$(ctrl_port "$1")"
}

# listener_stop FAMILY SESSIONS: stop it; it served SESSIONS path checks
listener_stop() {
	local n pid
	eval "pid=\$LISTENER_$1"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	n=$(grep -c 'checked the path' "$OUT.listen$1")
	ktap_diag "the listener for IPv$1: $(tr '\n' ' ' <"$OUT.listen$1")"
	ktap_result "listener_ipv$1" "$([ "$n" = "$2" ]; echo $?)" \
		"it served $n path checks, not $2"
}

# listener CASE: guest1's side of a case: its own fault while guest0
# checks the path, then its own eroce doctor
listener() {
	local c=$1 got want
	lab_wait "$c.set" 300 "$LAB_SWITCH" >/dev/null
	run host_fault_set "$c" || ktap_diag "$c: $LAST_OUT"
	lab_signal "$c.ready"
	lab_wait "$c.done" 300 0 >/dev/null || ktap_diag "$c: no word from guest0"
	want=$(host_expect "$c")
	if [ -n "$want" ]; then
		"$EROCE_CMD" doctor --json --netdev "$LAB_IF" >"$OUT.$c.self.json" 2>&1
		got=$(verdicts "$OUT.$c.self.json" "")
		# what a lab guest has anyway: MTU 1500
		got=$(tr ' ' '\n' <<<"$got" | grep -vE "^(mtu:|module)" | tr '\n' ' ')
		summaries "$OUT.$c.self.json" "" | head -n 12 | while IFS= read -r l; do ktap_diag "  $l"; done
		if same_set "$got" "$want"; then
			ktap_ok "self_$c"
		else
			ktap_fail "self_$c" "not ok: '${got% }', want '$want'"
		fi
	fi
	host_fault_clear "$c"
}

host_main() {
	local c n=0 n4=0 n6=0
	for c in $CASES; do
		if [ "$LAB_I" = 0 ]; then
			n=$((n + 1))
		elif [ -n "$(host_expect "$c")" ]; then
			n=$((n + 1))
		fi
		if [ "$c" = clean6 ]; then n6=$((n6 + 1)); else n4=$((n4 + 1)); fi
	done
	if [ "$LAB_I" = 1 ]; then
		[ "$n4" = 0 ] || n=$((n + 1))
		[ "$n6" = 0 ] || n=$((n + 1))
	fi
	ktap_plan $((4 + n))
	[ "$LAB_N" = 2 ] || ktap_bail "doctor.sh needs 2 hosts, has $LAB_N"
	[ -n "$LAB_SWITCH" ] || ktap_bail "doctor.sh needs a switch guest"
	lab_setup_ktap
	require setup
	ktap_ok eroce_vlan_up
	lab_switch_wait_ktap
	# shellcheck disable=SC2086  # $PING may be "busybox ping"
	if lab_barrier up >/dev/null && $PING -c 3 -W 5 "$(vlan_ip "$(lab_peer)" 4)" >/dev/null; then
		ktap_ok peer_reachable
	else
		ktap_bail "peer $(vlan_ip "$(lab_peer)" 4) not reachable over VLAN $VID"
	fi
	if [ "$LAB_I" = 1 ]; then
		[ "$n4" = 0 ] || listener_start 4 || ktap_diag "no listener for IPv4"
		[ "$n6" = 0 ] || listener_start 6 || ktap_diag "no listener for IPv6"
	fi
	for c in $CASES; do
		if [ "$LAB_I" = 0 ]; then
			prober "$c"
			lab_signal "$c.done"
		else
			listener "$c"
		fi
		lab_barrier "$c.next" 300 >/dev/null
	done
	if [ "$LAB_I" = 1 ]; then
		[ "$n4" = 0 ] || listener_stop 4 "$n4"
		[ "$n6" = 0 ] || listener_stop 6 "$n6"
	fi
	ktap_finish
}

if lab_is_switch; then
	switch_main
else
	host_main
fi
