#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 500
#
# ucx.sh: UCX on eroce (Documentation/admin-guide.rst "Consumers"),
# between ns1 (eroce1) and ns2 (eroce2):
#   - ucx_info -d lists eroce1:1 for rc_verbs and ud_verbs;
#   - ucx_perftest over UCP tag matching, UCX_TLS=ud_verbs: the endpoint
#     runs on ud_verbs/eroce1:1 (UCX's log says which transport it
#     chose), tag_lat and tag_bw end with their "Final:" line, and the
#     devices' tx_packets moved.  UCX's ud_verbs drops every packet whose
#     GRH does not name one of its GIDs, and finds the destination
#     address in the GRH by the RoCE packet type a ConnectX puts in a UD
#     completion's sl; eroce's provider reports it (before it did, the
#     wireup never got through: "UD endpoint ... unhandled timeout");
#   - the same with UCX_TLS=rc_verbs,ud_verbs: the endpoint runs on
#     rc_verbs (ud_verbs carries the wireup).
#   - selftests/tools/eroce_ucp (UCP, as ucx_perftest, between the
#     namespaces) with UCX_TLS=ud_verbs and then rc_verbs,ud_verbs: tagged
#     messages of 1 byte to 1 MiB each way, a 1 MiB put and gets of those
#     sizes, fetch-adds and compare-swaps on a word of the server's
#     memory: every byte and every fetched value checked, one subtest
#     each, on the lane asked for (UCX's log), tx_packets moved.
# ucx_perftest checks no data; eroce_ucp and the MPI test do.
# Run: selftests/run_vm.sh selftests/eroce/ucx.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

# shellcheck disable=SC2034  # read by ktap_srv_cli (lib_rdma.sh)
SC_T=120
# shellcheck disable=SC2034  # read by ktap_srv_cli (lib_rdma.sh)
SC_OPTS=(-p 13337)
N=$(debug_scaled 400 50)
UCP="$EROCE_ROOT/selftests/tools/eroce_ucp"

# ucx_info_lists TL: ucx_info -d in ns1 shows eroce1:1 under transport TL
ucx_info_lists() {
	ns1 ucx_info -d | awk -v tl="$1" '
		/Transport:/ { t = $NF }
		/Device:/ && t == tl && $NF == "eroce1:1" { f = 1 }
		END { exit !f }'
}

# perf NAME TLS TEST LANE ARGS...: ucx_perftest TEST between the
# namespaces with UCX_TLS=TLS; the client's endpoint must use LANE
perf() {
	local name=$1 tls=$2 test=$3 lane=$4; shift 4

	stat_snap eroce1 "$RDMA_TMP/ucx1"
	ktap_srv_cli "$name" "cli_has 'tag\\($lane/eroce1:1' && cli_has '^Final:' && stat_moved eroce1 $RDMA_TMP/ucx1 tx_packets" \
		env UCX_TLS="$tls" UCX_NET_DEVICES=eroce2:1 \
			ucx_perftest -t "$test" "$@" -- \
		env UCX_TLS="$tls" UCX_NET_DEVICES=eroce1:1 UCX_LOG_LEVEL=info \
			ucx_perftest 198.18.0.2 -t "$test" "$@"
}

# ucp_pair TLS: eroce_ucp, server on eroce2 (ns2), client on eroce1 (ns1)
# with UCX_TLS=TLS; prints the client's output (its "result:" lines and
# UCX's log) and the server's as diagnostics; 0 when both exited 0
# shellcheck disable=SC2317  # called through ktap_results
ucp_pair() {
	local rc=0
	srv_cli -p 13400 "$SC_T" "$NS2" "$NS1" \
		env UCX_TLS="$1" UCX_NET_DEVICES=eroce2:1 \
			"$UCP" -p 13400 -t "$(tmo 100)" -- \
		env UCX_TLS="$1" UCX_NET_DEVICES=eroce1:1 UCX_LOG_LEVEL=info \
			"$UCP" -p 13400 -t "$(tmo 100)" 198.18.0.2 || rc=$?
	echo "$CLI_OUT"
	grep -v 'listening' <<<"$SRV_OUT" | while read -r l; do echo "# server: $l"; done
	return "$rc"
}

# ucp NAME TLS LANE: eroce_ucp's four results as subtests NAME_*, then
# NAME_lane: the client's endpoint ran on LANE/eroce1:1 and eroce1 sent
ucp() {
	local name=$1 tls=$2 lane=$3 l
	if [ ! -x "$UCP" ]; then
		for l in tag rma_put rma_get amo lane; do
			ktap_missing "${name}_$l" "$UCP (libucx-dev)"
		done
		return
	fi
	stat_snap eroce1 "$RDMA_TMP/ucp1"
	ktap_results "$name" 4 ucp_pair "$tls"
	grep -E 'ep_cfg|tag\(' <<<"$LAST_OUT" | head -n 3 | while read -r l; do ktap_diag "$l"; done
	ktap_result "${name}_lane" \
		"$(grep -q "tag($lane/eroce1:1" <<<"$LAST_OUT" && stat_moved eroce1 "$RDMA_TMP/ucp1" tx_packets; echo $?)" \
		"the endpoint did not run on $lane/eroce1:1, or eroce1 sent nothing"
}

ktap_plan 17
require eroce_pair_setup
require pair_gids
require command -v ucx_perftest
kmsg_mark

ktap_check ucx_info_rc_verbs ucx_info_lists rc_verbs
ktap_check ucx_info_ud_verbs ucx_info_lists ud_verbs
perf ud_tag_lat ud_verbs tag_lat ud_verbs -n "$N"
perf ud_tag_bw ud_verbs tag_bw ud_verbs -s 65536 -n "$N"
perf rc_tag_lat rc_verbs,ud_verbs tag_lat rc_verbs -n "$N"
perf rc_tag_bw rc_verbs,ud_verbs tag_bw rc_verbs -s 65536 -n "$N"
ucp ucp_ud ud_verbs ud_verbs
ucp ucp_rc rc_verbs,ud_verbs rc_verbs

ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
