#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 300
#
# smc.sh: SMC-R (AF_SMC sockets over RDMA) on eroce
# (Documentation/admin-guide.rst "Consumers").  eroce1 (ns1) and eroce2
# (ns2) of eroce_pair_setup; SMC-R v2, the version that runs over RoCE
# v2, once a user defined EID is in place (selftests/tools/eroce_smc
# ueid).  One AF_SMC connection from ns1 to ns2 carries BYTES each way,
# compared byte for byte on both sides; SMC-R must have carried it (the
# kernel logs a link on an eroce device, and both devices sent more than
# BYTES through fast-registered buffers), not a fallback to TCP.
# Unloading smc then takes its QPs off the devices.  A kernel without
# SMC (the debug kernel) skips it all.
# Run: selftests/run_vm.sh selftests/eroce/smc.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_smc"
BYTES=$((4 << 20))
PORT=7790
CHECKS="smc_ueid smc_data_verified smc_link_on_eroce smc_over_eroce"
CHECKS+=" smc_unload_frees_qps dmesg_clean"

# smc_link_on_eroce: SMC-R logged a link on an eroce device
smc_link_on_eroce() {
	[ "$(dmesg_since_mark | grep -c 'SMC-R lg .* link added: .* ibdev eroce')" -gt 0 ]
}

# smc_over_eroce: both devices sent more than BYTES and registered
# buffers with IB_WR_REG_MR
smc_over_eroce() {
	local d
	for d in eroce1 eroce2; do
		[ "$(stat_delta "$d" "$RDMA_TMP/$d" tx_bytes)" -gt "$BYTES" ] &&
			stat_moved "$d" "$RDMA_TMP/$d" fast_reg_mrs || return
	done
}

# smc_qps: how many QPs the smc module holds on eroce devices
smc_qps() {
	rdma resource show qp | grep -c 'comm \[smc\]'
}

# smc_unload_frees_qps: rmmod smc succeeds and its QPs are gone
smc_unload_frees_qps() {
	rmmod smc_diag 2>/dev/null
	rmmod smc && [ "$(smc_qps)" -eq 0 ]
}

# smc_transfer: the server in ns2, the client in ns1, both verified
smc_transfer() {
	srv_cli -p "$PORT" 120 "$NS2" "$NS1" \
		"$TOOL" server 198.18.0.2 "$PORT" "$BYTES" -- \
		"$TOOL" client 198.18.0.2 "$PORT" "$BYTES"
	echo "server (exit $SRV_RC): $SRV_OUT"
	echo "client (exit $CLI_RC): $CLI_OUT"
	[ "$(grep -c "^server: $BYTES bytes verified" <<<"$SRV_OUT")" = 1 ] &&
		[ "$(grep -c "^client: $BYTES bytes verified" <<<"$CLI_OUT")" = 1 ]
}

ktap_plan 6
if ! modprobe -n -q smc; then
	for t in $CHECKS; do
		ktap_missing "$t" "the smc module"
	done
	ktap_finish
fi
require eroce_pair_setup
require modprobe smc
kmsg_mark

ktap_check smc_ueid "$TOOL" ueid EROCE-SELFTEST
ktap_diag "$LAST_OUT"
stat_snap eroce1 "$RDMA_TMP/eroce1"
stat_snap eroce2 "$RDMA_TMP/eroce2"
ktap_check smc_data_verified smc_transfer
ktap_diag "$LAST_OUT"
ktap_check smc_link_on_eroce smc_link_on_eroce
ktap_check smc_over_eroce smc_over_eroce
ktap_diag "eroce1: $(stat_changes eroce1 "$RDMA_TMP/eroce1")"
ktap_diag "eroce2: $(stat_changes eroce2 "$RDMA_TMP/eroce2")"
ktap_diag "smc QPs before unloading: $(smc_qps)"
ktap_check smc_unload_frees_qps smc_unload_frees_qps
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
