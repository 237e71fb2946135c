#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 400
#
# lifetimes.sh: what a peer or a racing engine must not be able to do to
# local objects (Documentation/design.rst "QP state and the engines",
# "Memory keys").  Driver: selftests/tools/eroce_lifetime (one process, QP
# A on eroce1 <-> QP B on eroce2), each "result:" line one subtest.
#   - dereg-write / dereg-read: ibv_dereg_mr on B while a 4 MiB WRITE
#     into (READ out of) its MR is paced at 400 kb/s, which would take
#     84 s: dereg returns within 5 s (it waited for the whole message
#     before), A's request ends with IBV_WC_REM_ACCESS_ERR, B hears
#     IBV_EVENT_QP_ACCESS_ERR and is in ERR.
#   - reset-ud / reset-rc: a QP moved to RESET while the requester is
#     busy and back to RTS takes a full SQ again and completes it (the
#     requester and the reset once raced over the SQ's consumer index and
#     left the ring looking full for good).
#   - events: COMM_EST, SQ_DRAINED (after the drained WRITE completed),
#     LAST_WQE_REACHED.
#   - solicited-err: a CQ armed for solicited completions only fires for
#     an error completion.
# Run: selftests/run_vm.sh selftests/eroce/lifetimes.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_lifetime"

# lt MODE N: run one mode; its N "result:" lines become subtests, a
# missing one fails
lt() {
	local mode=$1 n=$2 rc=0 got=0 name verdict rest
	run timeout -k 5 150 "$TOOL" "$mode" eroce1 "$G1" eroce2 "$G2" || rc=$?
	grep '^#' <<<"$LAST_OUT" | head -n 20 | while read -r l; do ktap_diag "$mode: ${l#\# }"; done
	while read -r _ name verdict rest; do
		got=$((got + 1))
		if [ "$verdict" = ok ]; then
			ktap_diag "$rest"
			ktap_ok "${mode//-/_}_$name"
		else
			ktap_fail "${mode//-/_}_$name" "$rest"
		fi
	done < <(grep '^result:' <<<"$LAST_OUT")
	if [ "$got" -lt "$n" ]; then
		ktap_diag "$mode: exit status $rc; $(grep -v '^result:' <<<"$LAST_OUT" | tail -n 5)"
		while [ "$got" -lt "$n" ]; do
			got=$((got + 1))
			ktap_fail "${mode//-/_}_missing_$got" "eroce_lifetime $mode gave no result $got (exit status $rc)"
		done
	fi
}

ktap_plan 19
require eroce_pair_setup
require pair_gids
pair_gids
require test -x "$TOOL"
kmsg_mark
lt dereg-write 4
lt dereg-read 4
lt reset-ud 2
lt reset-rc 2
lt events 4
lt solicited-err 2
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
