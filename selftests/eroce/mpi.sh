#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 400
#
# mpi.sh: Open MPI over UCX on eroce (Documentation/admin-guide.rst
# "Consumers"): mpirun starts two ranks of selftests/tools/eroce_mpi,
# rank 0 on eroce1 and rank 1 on eroce2, with the UCX PML only and UCX
# on the verbs transports only (UCX_TLS=rc_verbs,ud_verbs: no shared
# memory, no TCP).  The ranks live in the initial namespace (PMIx reaches
# them over TCP on the loopback, which another namespace would not
# share), so the devices sit on a routed veth pair there
# (eroce_routed_setup): the traffic still crosses the veth.
# The ranks ping-pong 1 B to 1 MiB, every byte checked on both sides,
# then agree on the count with MPI_Allreduce: "0 bad" and the full count,
# and eroce1/eroce2 carried it (tx_packets moved on both).
# Run: selftests/run_vm.sh selftests/eroce/mpi.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_mpi"
ITERS=$(debug_scaled 20 4)
MPI_T=$((240 * TIMEOUT_MULT))

# mpi_pingpong: both ranks' data checked, the sum agreed on
mpi_pingpong() {
	timeout -k 5 "$MPI_T" mpirun --allow-run-as-root --oversubscribe \
		--mca pml ucx --mca osc ucx --mca btl self \
		-x UCX_TLS=rc_verbs,ud_verbs \
		-np 1 -x UCX_NET_DEVICES=eroce1:1 "$TOOL" "$ITERS" : \
		-np 1 -x UCX_NET_DEVICES=eroce2:1 "$TOOL" "$ITERS"
}

ktap_plan 3
require eroce_routed_setup
require provider_install
require test -x "$TOOL"
kmsg_mark

stat_snap eroce1 "$RDMA_TMP/mpi1"
stat_snap eroce2 "$RDMA_TMP/mpi2"
if run mpi_pingpong && grep -q "^mpi: $((22 * ITERS)) messages verified, 0 bad" <<<"$LAST_OUT"; then
	ktap_diag "$(grep '^mpi: ' <<<"$LAST_OUT" | tail -n 3 | tr '\n' ';')"
	ktap_ok mpi_pingpong_verified
else
	ktap_diag "$(tail -n 15 <<<"$LAST_OUT")"
	ktap_fail mpi_pingpong_verified "mpirun or the data check failed"
fi
ktap_check mpi_over_eroce eval "stat_moved eroce1 $RDMA_TMP/mpi1 tx_packets && stat_moved eroce2 $RDMA_TMP/mpi2 tx_packets"

ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
