#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 300
#
# rds.sh: RDS over RDMA (rds_rdma) on eroce (Documentation/admin-guide.rst
# "Consumers").  RDS/IB lives in the initial namespace, so eroce1 and
# eroce2 sit on the routed veth pair of eroce_routed_setup there.
# selftests/tools/eroce_rds.py sends 200 messages of 100 B to 64 KiB
# from 198.18.4.1 to 198.18.4.2 over RDS sockets and compares each one;
# the kernel must say it connected over RDS/IB (not RDS/TCP) and eroce1
# must have carried the messages (tx_bytes grew by more than they hold).
# A kernel without rds_rdma fails it all (skips with EROCE_ALLOW_MISSING=1).
# The debug kernel leaves it out: Debian 6.1's RDS draws a lockdep report
# as soon as a connection is accepted (rds_trans_sem, held by rds_bind()
# while rds_ib_laddr_check() destroys its rdma_cm ID, against rdma_cm's
# handler_mutex, held by cma_ib_req_handler() while rds_conn_create()
# takes rds_trans_sem: RDS and rdma_cm alone), which turns lockdep off
# for the rest of the guest.
# Run: selftests/run_vm.sh selftests/eroce/rds.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_rds.py"
N=$(debug_scaled 200 8)

# rds_over_eroce: eroce1 sent more than the payload of the N messages
# (at least 100 B each)
rds_over_eroce() {
	local d
	d=$(stat_delta eroce1 "$RDMA_TMP/rds1" tx_bytes) && [ "$d" -gt $((N * 100)) ]
}

# rds_ib_connected: the kernel connected over RDS/IB (grep -c reads all:
# with pipefail, grep -q's early exit could fail the pipe)
rds_ib_connected() {
	[ "$(dmesg_since_mark | grep -c 'RDS/IB: Active conn connected')" -gt 0 ]
}

ktap_plan 4
if ! modprobe -n -q rds_rdma; then
	for t in rds_messages_verified rds_ib_connected rds_over_eroce dmesg_clean; do
		ktap_missing "$t" "the rds_rdma module"
	done
	ktap_finish
fi
if [ "$DEBUG_KERNEL" = 1 ]; then
	for t in rds_messages_verified rds_ib_connected rds_over_eroce dmesg_clean; do
		ktap_skip "$t" "RDS's lockdep report on connect (6.1, not eroce)"
	done
	ktap_finish
fi
require eroce_routed_setup
require modprobe rds_rdma
kmsg_mark

stat_snap eroce1 "$RDMA_TMP/rds1"
ktap_check rds_messages_verified timeout -k 5 $((120 * TIMEOUT_MULT)) \
	python3 "$TOOL" 198.18.4.1 198.18.4.2 "$N"
ktap_diag "$LAST_OUT"
ktap_check rds_ib_connected rds_ib_connected
ktap_check rds_over_eroce rds_over_eroce
ktap_diag "eroce1: $(stat_changes eroce1 "$RDMA_TMP/rds1")"
rmmod rds_rdma rds 2>/dev/null
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
