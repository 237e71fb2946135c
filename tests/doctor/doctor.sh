#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# doctor.sh: `eroce doctor` (config/eroce) on fake hosts, no VM needed.
# Each case builds a host in a temporary directory: /sys, /proc, /boot and
# /etc/eroce.conf trees (EROCE_SYS, EROCE_PROC, EROCE_BOOT, EROCE_CONF),
# and stubs of ip, rdma, ethtool, dcb, tc, nft, iptables-save, conntrack,
# modinfo, ibv_devinfo and uname first on PATH that answer from files of
# the case.  The healthy host has eroce0 on eth0 (MTU 9000, IPv4, IPv6 and
# VLAN 100 addresses, profile lossy-edge); each case changes one thing
# and checks the verdicts, that --json is valid JSON with the same
# checks, and the exit status.  Prints "ok N name" / "not ok N name #
# why" per check and "N passed, N failed" last; exits 1 on a failure.
# shellcheck disable=SC2016,SC2034  # check NAME eval '...' expands when it runs
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
EROCE=$ROOT/config/eroce
WORK=$(mktemp -d "${TMPDIR:-/tmp}/eroce-doctor.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
N=0 PASS=0 FAIL=0
T='' OUT='' JOUT='' RC=0 JRC=0

ok() {
	N=$((N + 1)) PASS=$((PASS + 1))
	echo "ok $N $1"
}

not_ok() {
	N=$((N + 1)) FAIL=$((FAIL + 1))
	echo "not ok $N $1 # $2"
}

# check NAME CMD...: ok when CMD succeeds
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name" "failed: $*"; fi
}

# stub NAME: a command of the fake host, its body on stdin
stub() {
	{
		echo '#!/bin/bash'
		echo "S=$T/state"
		cat
	} >"$T/bin/$1"
	chmod +x "$T/bin/$1"
}

put() {
	mkdir -p "$(dirname "$1")"
	printf '%s\n' "$2" >"$1"
}

# gid DEV N GID NDEV: entry N of DEV's GID table
gid() {
	local p=$T/sys/class/infiniband/$1/ports/1
	put "$p/gids/$2" "$3"
	put "$p/gid_attrs/ndevs/$2" "$4"
	put "$p/gid_attrs/types/$2" "RoCE v2"
}

# netdev NAME MTU
netdev() {
	local d=$T/sys/class/net/$1
	put "$d/mtu" "$2"
	put "$d/operstate" up
	put "$d/carrier" 1
	put "$T/proc/sys/net/ipv4/conf/$1/rp_filter" 2
}

stubs() {
	stub ip <<'EOF'
# ip -o addr show [dev X] and ip -d -o link show dev X
case "$*" in
"-o addr show") cat "$S"/addr.* 2>/dev/null ;;
"-o addr show dev "*) cat "$S/addr.${5}" 2>/dev/null ;;
"-d -o link show dev "*) cat "$S/link.${6}" 2>/dev/null ;;
*) exit 1 ;;
esac
EOF
	stub rdma <<'EOF'
[ "$*" = "link show" ] && cat "$S/rdma_links" 2>/dev/null
EOF
	stub ethtool <<'EOF'
case "$1" in
-i) echo "driver: e1000e"; echo "version: 6.1.0" ;;
-k) cat "$S/features" ;;
-l) printf 'Channel parameters for %s:\nCurrent hardware settings:\nRX:\t\tn/a\nTX:\t\tn/a\nCombined:\t2\n' "$2" ;;
-a) printf 'Pause parameters for %s:\nAutonegotiate:\ton\nRX:\t\ton\nTX:\t\ton\n' "$2" ;;
*) exit 1 ;;
esac
EOF
	stub dcb <<'EOF'
echo "Attribute read: Operation not supported" >&2
exit 1
EOF
	stub tc <<'EOF'
echo "qdisc mq 0: root"
echo "qdisc fq_codel 0: parent :2 limit 10240p"
EOF
	stub nft <<'EOF'
[ "$*" = "list ruleset" ] && cat "$S/nft" 2>/dev/null
EOF
	stub iptables-save <<'EOF'
exit 0
EOF
	cp "$T/bin/iptables-save" "$T/bin/ip6tables-save"
	stub conntrack <<'EOF'
exit 0
EOF
	stub ibv_devinfo <<'EOF'
exit 1
EOF
	stub modinfo <<'EOF'
[ -e "$S/no_module" ] && exit 1
case "$*" in
"-n eroce") echo /lib/modules/6.1.0-test/updates/dkms/eroce.ko ;;
"-F version eroce") echo 0.1.0 ;;
"-F vermagic eroce") echo "6.1.0-test SMP preempt mod_unload modversions " ;;
"-F signer "*) echo "eroce test key" ;;
*) exit 1 ;;
esac
EOF
	stub uname <<'EOF'
case "$1" in
-r) echo 6.1.0-test ;;
-v) echo "#1 SMP PREEMPT_DYNAMIC Debian 6.1.0-test" ;;
*) echo Linux ;;
esac
EOF
}

# healthy: a host where every check is ok
healthy() {
	local ib k

	T=$WORK/$1
	rm -rf "$T"
	mkdir -p "$T/bin" "$T/state" "$T/boot" "$T/etc"
	stubs
	put "$T/sys/module/eroce/version" 0.1.0
	put "$T/boot/config-6.1.0-test" CONFIG_HIGH_RES_TIMERS=y
	netdev eth0 9000
	netdev eth0.100 9000
	ln -s ../eth0.100 "$T/sys/class/net/eth0/upper_eth0.100"
	ln -s ../eth0 "$T/sys/class/net/eth0.100/lower_eth0"
	put "$T/proc/sys/net/ipv4/conf/all/rp_filter" 0
	mkdir -p "$T/sys/class/net/eth0/device/msi_irqs"
	: >"$T/sys/class/net/eth0/device/msi_irqs/30"
	: >"$T/sys/class/net/eth0/device/msi_irqs/31"
	printf '            CPU0       CPU1\n' >"$T/proc/interrupts"
	printf '  30:       1200          3  PCI-MSI 1  eth0-rx-0\n' >>"$T/proc/interrupts"
	printf '  31:          5       1300  PCI-MSI 2  eth0-tx-0\n' >>"$T/proc/interrupts"
	put "$T/proc/irq/30/smp_affinity_list" 0
	put "$T/proc/irq/31/smp_affinity_list" 1
	cat >"$T/state/addr.eth0" <<'EOF'
4: eth0    inet 198.18.0.1/24 brd 198.18.0.255 scope global eth0\       valid_lft forever preferred_lft forever
4: eth0    inet6 2001:db8::1/64 scope global \       valid_lft forever preferred_lft forever
4: eth0    inet6 fe80::200:ff:fe00:1/64 scope link \       valid_lft forever preferred_lft forever
EOF
	cat >"$T/state/addr.eth0.100" <<'EOF'
5: eth0.100    inet 198.18.100.1/24 brd 198.18.100.255 scope global eth0.100\       valid_lft forever preferred_lft forever
EOF
	echo "5: eth0.100@eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc noqueue state UP \    link/ether 02:00:00:00:00:01 brd ff:ff:ff:ff:ff:ff promiscuity 0 \    vlan protocol 802.1Q id 100 <REORDER_HDR> egress-qos-map { 47921:1 47922:2 47923:3 47924:4 47925:5 47926:6 47927:7 } addrgenmode eui64" \
		>"$T/state/link.eth0.100"
	cat >"$T/state/features" <<'EOF'
Features for eth0:
rx-checksumming: on
tx-checksumming: on
tcp-segmentation-offload: on
generic-segmentation-offload: on
generic-receive-offload: on
rx-gro-list: off
rx-udp-gro-forwarding: off
tx-udp-segmentation: off [fixed]
EOF
	echo "link eroce0/1 state ACTIVE physical_state LINK_UP netdev eth0" >"$T/state/rdma_links"
	ib=$T/sys/class/infiniband/eroce0
	put "$ib/ports/1/state" "4: ACTIVE"
	put "$ib/ports/1/phys_state" "5: LinkUp"
	gid eroce0 0 fe80:0000:0000:0000:0200:00ff:fe00:0001 eth0
	gid eroce0 1 0000:0000:0000:0000:0000:ffff:c612:0001 eth0
	gid eroce0 2 2001:0db8:0000:0000:0000:0000:0000:0001 eth0
	gid eroce0 3 0000:0000:0000:0000:0000:ffff:c612:6401 eth0.100
	for k in "profile lossy-edge" "min_rto_us 1000" "max_rto_us 1000000" \
		"rto_backoff 2" "adaptive_rto 1" "loss_recovery tlp" \
		"max_inflight_pkts 32" "ecn 1" "cc dcqcn" "default_tclass 104" \
		"priority_tag 0" "vlan_egress_map 0" "tx_batch 1"; do
		# shellcheck disable=SC2086  # name and value
		put "$ib/tuning/"$k
	done
	echo "eth0 eroce0 profile=lossy-edge default_tclass=104" >"$T/etc/eroce.conf"
}

# doctor ARGS...: run it on the fake host, text into OUT (RC), JSON into
# JOUT (JRC)
doctor() {
	local env=(PATH="$T/bin:/usr/bin:/bin" EROCE_SYS="$T/sys"
		EROCE_PROC="$T/proc" EROCE_BOOT="$T/boot"
		EROCE_CONF="$T/etc/eroce.conf" EROCE_CONFIG="$ROOT/config/eroce-config"
		EROCE_PATH_TOOL="$T/bin/eroce-path")
	local text json
	RC=0 JRC=0
	# the two at once: each waits for its own subprocesses most of the time
	env "${env[@]}" "$EROCE" doctor "$@" >"$T/text.out" 2>&1 &
	text=$!
	env "${env[@]}" "$EROCE" doctor --json "$@" >"$T/json.out" 2>"$T/json.err" &
	json=$!
	wait "$text" || RC=$?
	wait "$json" || JRC=$?
	OUT=$(cat "$T/text.out")
	JOUT=$(cat "$T/json.out")
}

# verdict ID: the verdict of check ID in JOUT
verdict() {
	python3 -c 'import json, sys
for c in json.load(sys.stdin):
    if c["id"] == sys.argv[1]:
        print(c["verdict"])' "$1" <<<"$JOUT"
}

# is ID VERDICT
is() {
	local got
	got=$(verdict "$1")
	[ "$got" = "$2" ] || { echo "# $1: '$got', want '$2'"; return 1; }
}

json_ok() {
	python3 -m json.tool <<<"$JOUT" >/dev/null && [ ! -s "$T/json.err" ] &&
		python3 -c 'import json, sys
d = json.load(sys.stdin)
assert isinstance(d, list) and d
for c in d:
    assert set(c) == {"id", "verdict", "summary", "evidence", "fix"}, c
    assert c["verdict"] in ("ok", "warn", "fail", "skip"), c
    assert isinstance(c["evidence"], list) and isinstance(c["fix"], str), c
' <<<"$JOUT"
}

# same_checks: text and JSON report the same checks in the same order
same_checks() {
	local t j
	t=$(grep -E '^(FAIL|WARN|OK  ) ' <<<"$OUT" | sed -E 's/^[A-Z]+ +([^:]+:?[^:]*): .*/\1/' | cut -d' ' -f1)
	j=$(python3 -c 'import json, sys
for c in json.load(sys.stdin): print(c["id"])' <<<"$JOUT")
	[ "$t" = "$j" ] || { echo "# text: $t"; echo "# json: $j"; return 1; }
}

rc_is() {
	if [ "$RC" != "$1" ] || [ "$JRC" != "$1" ]; then
		echo "# exit $RC/$JRC, want $1"
		return 1
	fi
}

none_but_ok() {
	! python3 -c 'import json, sys
bad = [c["id"] + " " + c["verdict"] for c in json.load(sys.stdin) if c["verdict"] != "ok"]
print("\n".join("# " + b for b in bad))
sys.exit(0 if bad else 1)' <<<"$JOUT"
}

# tree_sum: what the fake host's files hold
tree_sum() {
	(cd "$T" && find sys proc etc boot -type f -exec md5sum {} + | sort)
}

# ---- the cases --------------------------------------------------------------

healthy healthy
BEFORE=$(tree_sum)
doctor
check healthy_exit_0 rc_is 0
check healthy_json_valid json_ok
check healthy_all_ok none_but_ok
check healthy_text_json_same same_checks
for id in module module.signature conf kernel firewall conntrack device:eth0 \
	rxe:eth0 mtu:eth0 rp_filter:eth0 nic:eth0 port:eroce0 gids:eroce0 \
	tclass:eroce0 profile:eroce0; do
	check "healthy_has_$id" is "$id" ok
done
check healthy_last_line eval '[[ "$(tail -n 1 <<<"$OUT")" =~ ^0\ failed,\ 0\ warnings,\ [0-9]+\ ok$ ]]'
check healthy_mtu_4096 eval 'grep -q "MTU 9000 gives RoCE path MTU 4096" <<<"$OUT"'
check read_only eval '[ "$(tree_sum)" = "$BEFORE" ]'

healthy no_module
rm -rf "$T/sys/module/eroce" "$T/sys/class/infiniband/eroce0"
: >"$T/state/rdma_links"
doctor
check no_module_exit_1 rc_is 1
check no_module_json_valid json_ok
check no_module_warns is module warn
check no_module_device_fails is device:eth0 fail
check no_module_says_so eval 'grep -q "module is not loaded" <<<"$OUT"'
check no_module_other_checks_run eval 'is mtu:eth0 ok && is nic:eth0 ok && is rp_filter:eth0 ok'
check no_module_fix_named eval 'grep -q "fix: eroce-config netdev eth0" <<<"$OUT"'
check no_module_failed_first eval '[[ "$(head -n 1 <<<"$OUT")" == "FAIL "* ]]'

healthy not_installed
rm -rf "$T/sys/module/eroce" "$T/sys/class/infiniband/eroce0"
: >"$T/state/rdma_links"
touch "$T/state/no_module"
doctor
check not_installed_fails is module fail
check not_installed_json_valid json_ok

healthy conf_no_device
netdev eth1 1500
echo "eth1 eroce1 profile=lossless" >>"$T/etc/eroce.conf"
doctor
check conf_no_device_exit_1 rc_is 1
check conf_no_device_fails is device:eth1 fail
check conf_no_device_eth0_ok is device:eth0 ok
check conf_no_device_json_valid json_ok
doctor --device eroce0
check limit_device_exit_0 rc_is 0
check limit_device_leaves_eth1 eval '[ -z "$(verdict device:eth1)" ] && is device:eth0 ok'

healthy conf_bad_line
echo "eth9" >>"$T/etc/eroce.conf"
doctor
check conf_bad_line_warns is conf warn
check conf_bad_line_named eval 'grep -q "eroce.conf:2: .eth9. has no device name" <<<"$OUT"'

healthy conf_untuned
put "$T/sys/class/infiniband/eroce0/tuning/default_tclass" 0
doctor
check conf_untuned_warns is device:eth0 warn

healthy mtu_1500
put "$T/sys/class/net/eth0/mtu" 1500
doctor
check mtu_1500_warns is mtu:eth0 warn
check mtu_1500_gives_1024 eval 'grep -q "MTU 1500 gives RoCE path MTU 1024: 68.3% of the MTU is payload" <<<"$OUT"'
check mtu_1500_unused eval 'grep -q "28.8% of the MTU stays unused" <<<"$OUT"'
check mtu_1500_exit_0 rc_is 0
check mtu_1500_json_valid json_ok

healthy rp_filter_strict
# the larger of all and the interface's counts: 2 on eth0 would win
put "$T/proc/sys/net/ipv4/conf/all/rp_filter" 1
put "$T/proc/sys/net/ipv4/conf/eth0/rp_filter" 0
doctor
check rp_filter_strict_multihomed_warns is rp_filter:eth0 warn
check rp_filter_strict_fix eval 'grep -q "fix: sysctl -w net.ipv4.conf.all.rp_filter=2" <<<"$OUT"'
rm "$T/state/addr.eth0.100"
doctor
check rp_filter_strict_single_homed_ok is rp_filter:eth0 ok

healthy nft_drop
cat >"$T/state/nft" <<'EOF'
table inet filter {
	chain input {
		type filter hook input priority filter; policy accept;
		udp dport 4791 drop
	}
}
EOF
doctor
check nft_drop_fails is firewall fail
check nft_drop_exit_1 rc_is 1
check nft_drop_json_valid json_ok
sed -i 's/policy accept/policy drop/; s/udp dport 4791 drop/tcp dport 22 accept/' "$T/state/nft"
doctor
check nft_policy_drop_fails is firewall fail
sed -i 's/tcp dport 22 accept/udp dport 4791 accept/' "$T/state/nft"
doctor
check nft_policy_drop_accepted_ok is firewall ok

healthy rxe
echo "link rxe0/1 state ACTIVE physical_state LINK_UP netdev eth0" >>"$T/state/rdma_links"
mkdir -p "$T/sys/module/rdma_rxe" "$T/sys/class/infiniband/rxe0"
doctor
check rxe_same_netdev_fails is rxe:eth0 fail
check rxe_exit_1 rc_is 1
check rxe_json_valid json_ok

healthy gid_missing
rm "$T/sys/class/infiniband/eroce0/ports/1/gids/3"
doctor
check gid_missing_fails is gids:eroce0 fail
check gid_missing_names_vlan eval 'grep -q "eth0.100 inet 198.18.100.1: no GID" <<<"$OUT"'

# a VLAN device's IPv6 link-local address gives the same GID as its real
# device's; the table holds it once for each netdev
healthy vlan_link_local
echo "5: eth0.100    inet6 fe80::200:ff:fe00:1/64 scope link \       valid_lft forever preferred_lft forever" >>"$T/state/addr.eth0.100"
gid eroce0 4 fe80:0000:0000:0000:0200:00ff:fe00:0001 eth0.100
doctor
check vlan_link_local_gid_ok is gids:eroce0 ok
rm "$T/sys/class/infiniband/eroce0/ports/1/gids/4"
doctor
check vlan_link_local_gid_missing_warns is gids:eroce0 warn

healthy port_down
put "$T/sys/class/infiniband/eroce0/ports/1/state" "1: DOWN"
doctor
check port_down_fails is port:eroce0 fail

healthy vlan_map
sed -i 's/ 47925:5//' "$T/state/link.eth0.100"
doctor
check vlan_map_missing_sl_warns is tclass:eroce0 warn

healthy lossless
put "$T/sys/class/infiniband/eroce0/tuning/profile" lossless
echo "eth0 eroce0 profile=lossless default_tclass=104" >"$T/etc/eroce.conf"
doctor
check lossless_without_pfc_warns is profile:eroce0 warn

healthy gro_off
sed -i 's/^generic-receive-offload: on/generic-receive-offload: off/' "$T/state/features"
doctor
check gro_off_warns is nic:eth0 warn
check gro_off_fix eval 'grep -q "fix: ethtool -K eth0 gro on" <<<"$OUT"'
check gro_off_exit_0 rc_is 0
check gro_off_json_valid json_ok

healthy xdp_generic
echo "4: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 xdpgeneric qdisc mq state UP \    link/ether 02:00:00:00:00:01 brd ff:ff:ff:ff:ff:ff promiscuity 0 \    prog/xdp id 42 tag 0123456789abcdef jited addrgenmode eui64" \
	>"$T/state/link.eth0"
doctor
check xdp_generic_warns is nic:eth0 warn
check xdp_generic_named eval 'grep -q "generic XDP program on eth0" <<<"$OUT"'
check xdp_generic_json_valid json_ok

healthy conntrack
mkdir -p "$T/sys/module/nf_conntrack"
put "$T/proc/net/nf_conntrack" "ipv4     2 udp      17 29 src=198.18.0.2 dst=198.18.0.1 sport=49152 dport=4791 src=198.18.0.1 dst=198.18.0.2 sport=4791 dport=49152 mark=0 zone=0 use=2"
doctor
check conntrack_flow_warns is conntrack warn

healthy usage
doctor 198.18.0.2
check usage_peer_no_route_exit_2 rc_is 2
check usage_peer_no_route_said eval 'grep -q "no route to 198.18.0.2" <<<"$OUT"'
doctor --listen
check usage_listen_exit_2 rc_is 2
check usage_listen_needs_peer eval 'grep -q "needs --peer" <<<"$OUT"'
doctor --rate 100
check usage_path_option_without_peer_exit_2 rc_is 2
doctor --rate fast 198.18.0.2
check usage_path_option_not_a_number_exit_2 rc_is 2
doctor 198.18.0.2 198.18.0.3
check usage_two_peers_exit_2 rc_is 2

# the path to a peer: eroce-path (a stub here; tests/doctor/path.py tests
# the real one) gets the peer and the options, its records join the
# report, the checked netdev is the one the route takes
healthy path
stub ip <<'EOF2'
case "$*" in
"-o route get 198.18.0.2") echo "198.18.0.2 dev eth0.100 src 198.18.0.1 uid 0" ;;
"-o addr show") cat "$S"/addr.* 2>/dev/null ;;
"-o addr show dev "*) cat "$S/addr.${5}" 2>/dev/null ;;
"-d -o link show dev "*) cat "$S/link.${6}" 2>/dev/null ;;
*) exit 1 ;;
esac
EOF2
stub eroce-path <<'EOF2'
echo "$*" >"$S/path_args"
printf 'R\tpath.pcp\tfail\tsent with 802.1p priority 3, arrived untagged\n'
printf 'E\tsent: SL 3 out of VLAN device eth0.100\n'
printf 'E\tarrived (of 2000 packets): PCP untagged: 2000\n'
printf 'F\ttrust the incoming 802.1p priority\n'
printf 'R\tpath.dscp\tok\tDSCP 26 arrives unchanged\n'
printf 'R\tpath.pcp6\tskip\tnot checked\n'
EOF2
doctor --rate 200 --sl 3 198.18.0.2
check path_fail_exit_1 rc_is 1
check path_args_passed eval '[ "$(cat "$T/state/path_args")" = "probe 198.18.0.2 --rate 200 --sl 3" ]'
check path_pcp_fails is path.pcp fail
check path_dscp_ok is path.dscp ok
check path_skip_kept is path.pcp6 skip
check path_evidence_kept eval 'python3 -c "import json, sys
c = [c for c in json.load(sys.stdin) if c[\"id\"] == \"path.pcp\"][0]
assert c[\"evidence\"] == [\"sent: SL 3 out of VLAN device eth0.100\", \"arrived (of 2000 packets): PCP untagged: 2000\"], c
assert c[\"fix\"] == \"trust the incoming 802.1p priority\", c" <<<"$JOUT"'
check path_json_valid json_ok
check path_netdev_of_route is device:eth0 ok
check path_failed_first eval '[[ "$(head -n 1 <<<"$OUT")" == "FAIL path.pcp:"* ]]'
check path_not_checked_counted eval '[[ "$(tail -n 1 <<<"$OUT")" =~ ^1\ failed,\ 0\ warnings,\ 1\ not\ checked,\ [0-9]+\ ok$ ]]'
stub eroce-path <<'EOF2'
echo "eroce doctor: the listener refused: bad run" >&2
exit 2
EOF2
doctor 198.18.0.2
check path_tool_error_fails is path fail
check path_tool_error_said eval 'grep -q "the listener refused" <<<"$OUT"'
rm "$T/bin/eroce-path"
doctor 198.18.0.2
check path_tool_missing_fails is path fail

healthy listen
stub eroce-path <<'EOF2'
echo "$*" >"$S/path_args"
EOF2
doctor --listen --peer 198.18.0.1 --once --port 5000
check listen_execs_tool eval '[ "$(cat "$T/state/path_args")" = "listen --peer 198.18.0.1 --once --port 5000" ]'
check listen_exit_0 rc_is 0
doctor --bogus
check usage_option_exit_2 rc_is 2
doctor --netdev nosuch
check usage_no_netdev_exit_2 rc_is 2
RC=0
env PATH="$T/bin:/usr/bin:/bin" "$EROCE" >/dev/null 2>&1 || RC=$?
JRC=$RC
check usage_no_command_exit_2 rc_is 2

check shellcheck_clean eval '! command -v shellcheck >/dev/null ||
	shellcheck -x "$EROCE" "$ROOT/config/eroce-config" "$0"'

echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
