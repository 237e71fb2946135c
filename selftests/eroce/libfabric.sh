#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 400
#
# libfabric.sh: libfabric's verbs provider on eroce (Documentation/
# admin-guide.rst "Consumers"), between ns1 (eroce1) and ns2 (eroce2):
#   - fi_info -p verbs in ns1 lists the eroce1 domain;
#   - fi_pingpong -c (every buffer checked) over "verbs;ofi_rxm" (RDM
#     endpoints, the default stack of MPI and friends) and over verbs
#     MSG endpoints, all message sizes from 64 B to 1 MiB, both ends
#     exiting 0 with their table, and eroce1's tx_packets moved.
# FI_VERBS_IFACE names each side's netdev: libfabric 1.17 otherwise also
# offers the GIDs as AF_IB addresses, which rdma_cm cannot resolve on
# RoCE, and may pick one (fi_domain: "rdma_resolve_addr: Invalid
# argument").  ofi_rxm sizes its completion queue for 256 peers
# (~100k entries): max_cqe is 1M for it.
# Run: selftests/run_vm.sh selftests/eroce/libfabric.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

# shellcheck disable=SC2034  # read by ktap_srv_cli (lib_rdma.sh)
SC_T=180
# shellcheck disable=SC2034  # read by ktap_srv_cli (lib_rdma.sh)
SC_OPTS=(-p 47592)
N=$(debug_scaled 100 10)

# pingpong NAME PROVIDER EP_TYPE: fi_pingpong -c between the namespaces
pingpong() {
	stat_snap eroce1 "$RDMA_TMP/fi1"
	ktap_srv_cli "$1" "out_has '^1m +$N +=$N ' && stat_moved eroce1 $RDMA_TMP/fi1 tx_packets" \
		env FI_VERBS_IFACE=veth2 fi_pingpong -p "$2" -e "$3" -I "$N" -c -- \
		env FI_VERBS_IFACE=veth1 fi_pingpong -p "$2" -e "$3" -I "$N" -c 198.18.0.2
}

ktap_plan 4
require eroce_pair_setup
require command -v fi_pingpong
kmsg_mark

# fi_info_lists DOMAIN: fi_info -p verbs in ns1 lists DOMAIN (grep reads
# all of it: with pipefail, an early exit would fail fi_info on SIGPIPE)
fi_info_lists() {
	[ "$(ns1 fi_info -p verbs | grep -c "domain: $1\$")" -gt 0 ]
}

ktap_check fi_info_lists_domain fi_info_lists eroce1
pingpong rxm_rdm_pingpong "verbs;ofi_rxm" rdm
pingpong verbs_msg_pingpong verbs msg

ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
