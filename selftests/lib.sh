# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# lib.sh: helpers sourced by the eroce test scripts (run inside the test
# guest by selftests/run_vm.sh, as root, EROCE_ROOT = project root).
#   KTAP output     ktap_plan, ktap_ok, ktap_fail, ktap_skip, ktap_missing,
#                   ktap_result,
#                   ktap_check, ktap_check_fails, ktap_diag, ktap_finish,
#                   ktap_bail, require, run (output kept in LAST_OUT),
#                   ktap_results (one subtest per "result:" line)
#   polling         wait_for SECS CMD...
#   debug kernel    DEBUG_KERNEL, tmo, debug_scaled, ktap_bound,
#                   debug_subset, debug_leaves_out (DEBUG_KEEP)
#   namespaces      ns1/ns2 CMD..., netns_add, veth_add, addr_add,
#                   two_ns_setup, $PING
#   modules         eroce_load, eroce_unload, provider_install, rxe_load,
#                   rxe_add
#   RDMA queries    rdma_dev_exists, rdma_dev_gone, port_state(_is),
#                   gid_indexes, first_gid, has_gid, no_gid, gid_attr,
#                   gid_table, active_mtu(_is), ipv4_gid, ipv6_gid,
#                   read_file
#   kernel log      kmsg_mark, dmesg_since_mark (never clear the log: the
#                   runner scans what the test left in it)
# Test scripts run with `set -u`, not `set -e`: a failing check is reported
# and the script goes on.  Test addresses: 198.18.0.0/15, 2001:db8::/32.

: "${EROCE_ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)}"
EROCE_KO="$EROCE_ROOT/drivers/infiniband/sw/eroce/eroce.ko"
EROCE_PROVIDER="$EROCE_ROOT/userspace/liberoce"
NS1=eroce-ns1
NS2=eroce-ns2
IBSYS=/sys/class/infiniband

KTAP_PLANNED=0
KTAP_N=0
KTAP_PASS=0
KTAP_FAIL=0
KTAP_SKIP=0
LAST_OUT=

# ---- KTAP ------------------------------------------------------------------

ktap_plan() {
	KTAP_PLANNED=$1
	echo "KTAP version 1"
	echo "1..$1"
}

ktap_diag() {
	local l
	while IFS= read -r l; do echo "# $l"; done <<<"$*"
}

# ktap_elapsed: a diagnostic line with the seconds since the last result,
# where the suite's time goes: on the debug kernel always, elsewhere when
# they are 5 or more
KTAP_LAST=$SECONDS
ktap_elapsed() {
	local secs=$((SECONDS - KTAP_LAST))

	KTAP_LAST=$SECONDS
	[ "${EROCE_DEBUG_KERNEL:-0}" = 1 ] || [ "$secs" -ge 5 ] || return 0
	echo "# $secs s"
}

ktap_ok() {
	KTAP_N=$((KTAP_N + 1))
	KTAP_PASS=$((KTAP_PASS + 1))
	ktap_elapsed
	echo "ok $KTAP_N $1"
}

# ktap_fail NAME REASON: one failed subtest; REASON is one line
ktap_fail() {
	KTAP_N=$((KTAP_N + 1))
	KTAP_FAIL=$((KTAP_FAIL + 1))
	ktap_elapsed
	echo "not ok $KTAP_N $1 # ${2:-failed}"
}

ktap_skip() {
	KTAP_N=$((KTAP_N + 1))
	KTAP_SKIP=$((KTAP_SKIP + 1))
	echo "ok $KTAP_N $1 # SKIP ${2:-}"
}

# ktap_missing NAME WHAT: NAME cannot run because WHAT is missing, which
# `make deps` installs (a package, a module of Debian's kernel) or the
# runner provides: a failure, unless EROCE_ALLOW_MISSING=1 (a machine
# set up by hand, a kernel without it), where it is a skip
ktap_missing() {
	if [ "${EROCE_ALLOW_MISSING:-0}" = 1 ]; then
		ktap_skip "$1" "missing: $2"
	else
		ktap_fail "$1" "missing: $2 (make deps installs it; EROCE_ALLOW_MISSING=1 makes this a skip)"
	fi
}

# ktap_result NAME STATUS [REASON]: ok when STATUS is 0
ktap_result() {
	if [ "$2" = 0 ]; then ktap_ok "$1"; else ktap_fail "$1" "${3:-failed}"; fi
}

# run CMD...: run a command, keep its output in LAST_OUT, return its status
run() {
	local rc=0
	LAST_OUT=$("$@" 2>&1) || rc=$?
	return $rc
}

# ktap_results PREFIX N CMD...: run a test program that prints one
# "result: NAME ok|FAIL DETAILS" line per expectation and "# ..." lines of
# its own; each result is a subtest PREFIX_NAME, its "#" lines are
# diagnostics, and results missing from the first N (the program died)
# fail one subtest each
#
# A program that exits non-zero (crashed, killed by its timeout, or
# failed in its cleanup) although every result it printed was ok fails
# its last result: results printed before a crash prove nothing about it.
ktap_results() {
	local prefix=$1 n=$2 rc=0 got=0 bad=0 name verdict rest l i
	local -a names=() verdicts=() rests=()
	shift 2
	run "$@" || rc=$?
	grep '^#' <<<"$LAST_OUT" | head -n 20 | while read -r l; do ktap_diag "$prefix: ${l#\# }"; done
	while read -r _ name verdict rest; do
		names+=("$name")
		verdicts+=("$verdict")
		rests+=("$rest")
		[ "$verdict" = ok ] || bad=1
	done < <(grep '^result:' <<<"$LAST_OUT")
	for i in "${!names[@]}"; do
		got=$((got + 1))
		if [ "${verdicts[i]}" != ok ]; then
			ktap_fail "${prefix}_${names[i]}" "${rests[i]}"
		elif [ "$rc" != 0 ] && [ $bad = 0 ] && [ "$got" = "${#names[@]}" ]; then
			ktap_diag "$prefix: $(grep -v '^result:' <<<"$LAST_OUT" | tail -n 5)"
			ktap_fail "${prefix}_${names[i]}" \
				"every result ok, but the program exited with status $rc"
		else
			ktap_diag "${rests[i]}"
			ktap_ok "${prefix}_${names[i]}"
		fi
	done
	if [ "$got" -lt "$n" ]; then
		ktap_diag "$prefix: exit status $rc; $(grep -v '^result:' <<<"$LAST_OUT" | tail -n 5)"
		while [ "$got" -lt "$n" ]; do
			got=$((got + 1))
			ktap_fail "${prefix}_missing_$got" "no result $got (exit status $rc)"
		done
	fi
}

# ktap_check NAME CMD...: ok when CMD succeeds; otherwise show its output
ktap_check() {
	local name=$1; shift
	if run "$@"; then
		ktap_ok "$name"
	else
		[ -n "$LAST_OUT" ] && ktap_diag "$(tail -n 10 <<<"$LAST_OUT")"
		ktap_fail "$name" "failed: $*"
	fi
}

# ktap_check_fails NAME CMD...: ok when CMD fails (bad input rejected)
ktap_check_fails() {
	local name=$1; shift
	if run "$@"; then
		ktap_fail "$name" "unexpectedly succeeded: $*"
	else
		ktap_ok "$name"
	fi
}

# ktap_finish: close the plan; exit non-zero on any failure or plan mismatch
ktap_finish() {
	if [ "$KTAP_N" != "$KTAP_PLANNED" ]; then
		echo "# plan mismatch: planned $KTAP_PLANNED, ran $KTAP_N"
		KTAP_FAIL=$((KTAP_FAIL + 1))
	fi
	echo "# $KTAP_PASS passed, $KTAP_FAIL failed, $KTAP_SKIP skipped"
	[ "$KTAP_FAIL" = 0 ] && exit 0
	exit 1
}

# ktap_bail REASON: fail every remaining planned subtest and finish
ktap_bail() {
	while [ "$KTAP_N" -lt "$KTAP_PLANNED" ]; do
		ktap_fail "not_run" "$1"
	done
	ktap_finish
}

# require CMD...: run a setup step; on error bail out (see ktap_bail)
require() {
	run "$@" && return 0
	ktap_diag "setup failed: $*"
	ktap_diag "$(tail -n 10 <<<"$LAST_OUT")"
	ktap_bail "setup failed: $*"
}

# ---- the debug kernel -----------------------------------------------------------
#
# On the debug kernel (run_vm.sh --kernel sets EROCE_DEBUG_KERNEL=1 and
# EROCE_TIMEOUT_MULT) KASAN, lockdep and kmemleak make everything several
# times slower.  The lane is there for memory, locking and lifetime
# errors, not throughput, so a script runs a representative subset there
# (debug_subset): every code path (operation, QP type, transport feature,
# teardown) at least once, not every message size, post flavour,
# repetition or parameter sweep; what it leaves out is reported as a skip
# ("debug subset") and the plan stays the same.  What it runs keeps its
# functional checks but moves less (debug_scaled), waits longer (tmo;
# wait_for and srv_cli stretch their waits by themselves) and reports a
# timing or rate bound it misses as a skip (ktap_bound): those bounds are
# checked on Debian's kernel, in make check.
DEBUG_KERNEL=${EROCE_DEBUG_KERNEL:-0}
TIMEOUT_MULT=${EROCE_TIMEOUT_MULT:-1}
# the variants a script's debug subset keeps, of those it hands to
# debug_subset (names separated by white space)
DEBUG_KEEP=

# tmo SECS: SECS, times the debug kernel's timeout multiplier
tmo() {
	echo $(($1 * TIMEOUT_MULT))
}

# debug_scaled N [DIV]: N, or on the debug kernel N/DIV (DIV default 8,
# at least 1).  A size N with a k, M or G suffix is divided in KiB
# (4M/8 is 512k) and keeps a k suffix.
debug_scaled() {
	local n=$1 div=${2:-8} sfx=
	[ "$DEBUG_KERNEL" = 1 ] || { echo "$n"; return; }
	case "$n" in
	*G) n=$((${n%G} * 1048576)) sfx=k ;;
	*M) n=$((${n%M} * 1024)) sfx=k ;;
	*k) n=${n%k} sfx=k ;;
	esac
	n=$((n / div))
	[ "$n" -ge 1 ] || n=1
	echo "$n$sfx"
}

# ktap_bound NAME STATUS [REASON]: ktap_result for a bound on time or rate;
# on the debug kernel a missed bound is a skip that says so
ktap_bound() {
	if [ "$2" != 0 ] && [ "$DEBUG_KERNEL" = 1 ]; then
		ktap_skip "$1" "timing bound missed on the debug kernel: ${3:-failed}"
	else
		ktap_result "$@"
	fi
}

# debug_leaves_out NAME: true on the debug kernel unless NAME is in
# DEBUG_KEEP; prints nothing (for a script that reports the variant's
# subtests later, with debug_subset)
debug_leaves_out() {
	[ "$DEBUG_KERNEL" = 1 ] || return 1
	case " ${DEBUG_KEEP//[[:space:]]/ } " in
	*" $1 "*) return 1 ;;
	esac
	return 0
}

# debug_subset NAME [SUBTEST...]: when debug_leaves_out NAME, report NAME
# and the SUBTESTs as skips ("debug subset") and return 0: the caller
# leaves the variant out.  Elsewhere return 1 and print nothing:
#   debug_subset NAME || run_variant NAME ...
debug_subset() {
	debug_leaves_out "$1" || return 1
	local n
	for n in "$@"; do
		ktap_skip "$n" "debug subset"
	done
	return 0
}

# ---- polling -----------------------------------------------------------------

# wait_for SECS CMD...: poll CMD every 0.1 s until it succeeds or SECS pass
# (times TIMEOUT_MULT)
wait_for() {
	local secs=$(($1 * TIMEOUT_MULT)) end; shift
	end=$((SECONDS + secs))
	while ! "$@" >/dev/null 2>&1; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}

# ---- namespaces and links ----------------------------------------------------

ns1() { ip netns exec "$NS1" "$@"; }
ns2() { ip netns exec "$NS2" "$@"; }

# netns_add NAME: a namespace with lo up
netns_add() {
	ip netns add "$1" && ip -n "$1" link set dev lo up
}

# veth_add NS_A DEV_A NS_B DEV_B: a veth pair, each end in a namespace
# ("" means the initial namespace), both ends up
veth_add() {
	local na=$1 a=$2 nb=$3 b=$4
	ip link add name "$a" type veth peer name "$b" || return
	[ -z "$na" ] || ip link set dev "$a" netns "$na" || return
	[ -z "$nb" ] || ip link set dev "$b" netns "$nb" || return
	ip ${na:+-n "$na"} link set dev "$a" up &&
		ip ${nb:+-n "$nb"} link set dev "$b" up
}

# addr_add NS DEV IPV4/LEN [IPV6/LEN]: addresses (IPv6 without DAD)
addr_add() {
	local ns=$1 dev=$2
	ip ${ns:+-n "$ns"} addr add "$3" dev "$dev" || return
	[ -z "${4:-}" ] || ip ${ns:+-n "$ns"} addr add "$4" dev "$dev" nodad
}

# $PING: iputils ping when installed, else busybox's (usable with ns1/ns2)
export PING=ping
command -v ping >/dev/null 2>&1 || PING="busybox ping"

# two_ns_setup: ns1/veth1 (198.18.0.1, 2001:db8::1) <-> ns2/veth2 (.2, ::2)
two_ns_setup() {
	modprobe veth || return
	netns_add "$NS1" && netns_add "$NS2" &&
		veth_add "$NS1" veth1 "$NS2" veth2 &&
		addr_add "$NS1" veth1 198.18.0.1/24 2001:db8::1/64 &&
		addr_add "$NS2" veth2 198.18.0.2/24 2001:db8::2/64
}

# ---- modules -----------------------------------------------------------------

eroce_load() {
	modprobe -a ib_core ib_uverbs udp_tunnel ip6_udp_tunnel || return
	[ -f "$EROCE_KO" ] || { echo "no $EROCE_KO (make modules)"; return 1; }
	grep -q '^eroce ' /proc/modules && return 0
	insmod "$EROCE_KO"
}

eroce_unload() {
	rmmod eroce
}

# provider_install: point libibverbs at the provider built in the tree
provider_install() {
	[ -f "$EROCE_PROVIDER-rdmav34.so" ] ||
		{ echo "no $EROCE_PROVIDER-rdmav34.so (make provider)"; return 1; }
	mkdir -p /etc/libibverbs.d
	echo "driver $EROCE_PROVIDER" >/etc/libibverbs.d/eroce.driver
}

rxe_load() {
	modprobe rdma_rxe
}

# rxe_add NAME NETDEV
rxe_add() {
	rdma link add "$1" type rxe netdev "$2"
}

# ---- RDMA queries ------------------------------------------------------------

rdma_dev_exists() {
	[ -e "$IBSYS/$1" ]
}

rdma_dev_gone() {
	! [ -e "$IBSYS/$1" ] && ! rdma link show 2>/dev/null | grep -q "link $1/"
}

# port_state DEV: "4: ACTIVE", "1: DOWN", ...
port_state() {
	read_file "$IBSYS/$1/ports/1/state"
}

port_state_is() {
	[ "$(port_state "$1")" = "$2" ]
}

# ipv4_gid A.B.C.D: the IPv4-mapped GID as sysfs prints it
ipv4_gid() {
	local IFS=. a b c d
	read -r a b c d <<<"$1"
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "$a" "$b" "$c" "$d"
}

# ipv6_gid ADDR: the address fully expanded, as sysfs prints GIDs
ipv6_gid() {
	local a=$1 head tail g out='' n i
	case "$a" in
	*::*) head=${a%%::*}; tail=${a#*::} ;;
	*) head=$a; tail= ;;
	esac
	local -a h=() t=()
	[ -n "$head" ] && IFS=: read -ra h <<<"$head"
	[ -n "$tail" ] && IFS=: read -ra t <<<"$tail"
	n=$((8 - ${#h[@]} - ${#t[@]}))
	for g in "${h[@]}"; do out+=$(printf '%04x:' "0x$g"); done
	for ((i = 0; i < n; i++)); do out+="0000:"; done
	for g in "${t[@]}"; do out+=$(printf '%04x:' "0x$g"); done
	echo "${out%:}"
}

# read_file FILE: print the first line of FILE without forking
read_file() {
	local l=''
	{ read -r l <"$1"; } 2>/dev/null
	printf '%s\n' "$l"
}

# gid_indexes DEV GID: every GID table index holding GID
gid_indexes() {
	local f g
	for f in "$IBSYS/$1/ports/1/gids/"*; do
		{ read -r g <"$f"; } 2>/dev/null || continue
		[ "$g" = "$2" ] && echo "${f##*/}"
	done
	return 0
}

# first_gid DEV GID: the first GID table index holding GID
first_gid() {
	gid_indexes "$1" "$2" | head -n 1
}

# gid_attr DEV INDEX types|ndevs
gid_attr() {
	read_file "$IBSYS/$1/ports/1/gid_attrs/$3/$2"
}

# has_gid DEV GID [NDEV]: GID present as a RoCE v2 entry (on NDEV)
has_gid() {
	local i
	for i in $(gid_indexes "$1" "$2"); do
		[ "$(gid_attr "$1" "$i" types)" = "RoCE v2" ] || continue
		[ -z "${3:-}" ] || [ "$(gid_attr "$1" "$i" ndevs)" = "$3" ] || continue
		return 0
	done
	return 1
}

no_gid() {
	[ -z "$(gid_indexes "$1" "$2")" ]
}

# gid_table DEV: the non-zero GID entries, for diagnostics
gid_table() {
	local f i g z=0000:0000:0000:0000:0000:0000:0000:0000
	for f in "$IBSYS/$1/ports/1/gids/"*; do
		{ read -r g <"$f"; } 2>/dev/null || continue
		[ "$g" = "$z" ] && continue
		i=${f##*/}
		echo "gid[$i] $g $(gid_attr "$1" "$i" types) $(gid_attr "$1" "$i" ndevs)"
	done
}

# active_mtu DEV: active_mtu as ibv_devinfo reports it (through the provider)
active_mtu() {
	ibv_devinfo -d "$1" 2>/dev/null | awk '$1 == "active_mtu:" { print $2; exit }'
}

active_mtu_is() {
	[ "$(active_mtu "$1")" = "$2" ]
}

# ---- kernel log --------------------------------------------------------------

KMSG_MARK=

# kmsg_mark: write a unique marker into the kernel log
kmsg_mark() {
	KMSG_MARK="eroce-selftest-mark-$$-$RANDOM-$SECONDS"
	echo "$KMSG_MARK" >/dev/kmsg
}

# dmesg_since_mark: kernel log lines after the last kmsg_mark
dmesg_since_mark() {
	dmesg | sed -n "/$KMSG_MARK/,\$p" | tail -n +2
}

# ktap_kernel_log_clean: the result no_kernel_splat: no warning, bug,
# oops or call trace in the kernel log since the last kmsg_mark
ktap_kernel_log_clean() {
	local splat
	splat=$(dmesg_since_mark | grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace')
	[ -n "$splat" ] && ktap_diag "$splat"
	ktap_result no_kernel_splat "$([ -z "$splat" ]; echo $?)" "splat in dmesg"
}
