#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 300
# vm-cpus: 2
#
# qp_cpu.sh: a QP starts on the CPU its send CQ's completion vector names
# (Documentation/admin-guide.rst, "CPUs and completion vectors").  On a
# guest with two CPUs, eroce_integrity connects 4 RC QPs between eroce1
# and eroce2 and holds them, connected, until the script lets it go on
# (-G), while `rdma -dd resource show qp` reads each QP's "cpu":
#   - vector1_cpu: CQs of vector 1 on both sides: all 4 of eroce1's QPs
#     on CPU 1
#   - vector0_spread: vector 0 (every API's default) leaves the choice to
#     eroce: the 4 QPs on both CPUs (spread by QP number)
#   - vector1_data, vector0_data: then 1 MiB of SEND, WRITE and READ,
#     every byte checked
#   - bad_vector: a vector the device does not have (2 of 2):
#     ibv_create_cq fails with EINVAL, the tool says so and exits 2
# Run: selftests/run_vm.sh selftests/eroce/qp_cpu.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_integrity"
OUT=$RDMA_TMP/qp_cpu
PORT=18700

# qp_cpus LINK: the "cpu" of each RC QP of LINK, one per line
qp_cpus() {
	rdma -j -dd resource show qp link "$1" 2>/dev/null | python3 -c '
import json, sys
for qp in json.load(sys.stdin):
    if qp.get("type") == "RC" and "drv_cpu" in qp:
        print(qp["drv_cpu"])'
}

# four_qps LINK: LINK has 4 RC QPs with a cpu
four_qps() {
	[ "$(qp_cpus "$1" | wc -l)" = 4 ]
}

# run_vector NAME VECTOR: 4 QPs with CQs of VECTOR on both sides; their
# CPUs on eroce1 in $OUT/NAME.cpus, then the data checked
run_vector() {
	local name=$1 vec=$2 gate=$OUT/$1.gate spid cpid rc_s rc_c

	ns2 "$TOOL" -d eroce2 -g "$G2" -p "$PORT" -t "$(tmo 120)" -V "$vec" \
		>"$OUT/$name.server" 2>&1 &
	spid=$!
	wait_for 60 tcp_listening "$NS2" "$PORT"
	ns1 "$TOOL" -d eroce1 -g "$G1" -p "$PORT" -t "$(tmo 120)" -V "$vec" \
		-q 4 -b 1M -G "$gate" 198.18.0.2 >"$OUT/$name.client" 2>&1 &
	cpid=$!
	wait_for 60 four_qps eroce1/1
	qp_cpus eroce1/1 >"$OUT/$name.cpus"
	touch "$gate"
	rc_c=0
	wait "$cpid" || rc_c=$?
	rc_s=0
	wait "$spid" || rc_s=$?
	PORT=$((PORT + 1))
	ktap_diag "vector $vec: eroce1's QPs on CPUs $(tr '\n' ' ' <"$OUT/$name.cpus")"
	if [ "$rc_c" = 0 ] && [ "$rc_s" = 0 ]; then
		ktap_ok "${name}_data"
	else
		ktap_diag "$(tail -n 5 "$OUT/$name.client" "$OUT/$name.server")"
		ktap_fail "${name}_data" "client exit $rc_c, server exit $rc_s"
	fi
}

# bad_vector: a vector past num_comp_vectors (one per possible CPU); the
# client sets its verbs up once it reached the server
bad_vector() {
	local vec spid rc=0
	vec=$(ibv_devinfo -v -d eroce1 | awk '/num_comp_vectors/ { print $2 }')
	ns2 "$TOOL" -d eroce2 -g "$G2" -p "$PORT" -t "$(tmo 30)" \
		>"$OUT/bad.server" 2>&1 &
	spid=$!
	wait_for 60 tcp_listening "$NS2" "$PORT"
	ns1 "$TOOL" -d eroce1 -g "$G1" -p "$PORT" -t "$(tmo 30)" -V "$vec" \
		198.18.0.2 >"$OUT/bad.client" 2>&1 || rc=$?
	wait "$spid"
	PORT=$((PORT + 1))
	ktap_diag "vector $vec of $vec: exit $rc, $(head -n 1 "$OUT/bad.client")"
	[ "$rc" = 2 ] && grep -q "ibv_create_cq failed: Invalid argument (vector $vec of $vec)" \
		"$OUT/bad.client"
}

ktap_plan 6
require eroce_pair_setup
require pair_gids
pair_gids
require test -x "$TOOL"
mkdir -p "$OUT"
kmsg_mark
run_vector vector1 1
ktap_result vector1_cpu "$(sort "$OUT/vector1.cpus" | tr '\n' ' ' | grep -qx '1 1 1 1 '; echo $?)" \
	"eroce1's QPs on CPUs $(tr '\n' ' ' <"$OUT/vector1.cpus"), want 1 1 1 1"
run_vector vector0 0
ktap_result vector0_spread "$(sort "$OUT/vector0.cpus" | uniq | tr '\n' ' ' | grep -qx '0 1 '; echo $?)" \
	"eroce1's QPs on CPUs $(tr '\n' ' ' <"$OUT/vector0.cpus"), want both 0 and 1"
ktap_check bad_vector bad_vector
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
