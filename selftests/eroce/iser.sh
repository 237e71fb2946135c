#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
#
# iser.sh: iSCSI Extensions for RDMA on eroce.  A LIO target (targetcli)
# exports a file-backed LUN through an iSER portal on eroce2; open-iscsi
# logs in from eroce1 with the iser transport.  Both live in the initial
# namespace, on a policy-routed veth pair (eroce_routed_setup), and a rule
# sends the initiator's traffic to the portal out of nve1 with nve1's
# address, so rdma_cm binds the session to eroce1 and every PDU crosses
# the link.
#
#   init: nve1 198.18.4.1 (eroce1, initiator) <-> nve2 198.18.4.2 (eroce2)
#
# Discovery (over TCP), login with iface.transport_name iser, the SCSI
# disk written with random data and read back with O_DIRECT (checksums
# equal, and equal to the target's backing file), logout.  A kernel
# without the iSER modules (the debug kernel) skips it all.
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"
# shellcheck source=../lib_consumers.sh
. "$(dirname "$0")/../lib_consumers.sh"

IQN=iqn.2026-12.org.eroce:iser-test
PORTAL=198.18.4.2:3260
BACKING=/dev/shm/eroce-iser.img
SUBTESTS="target_iser_portal discovery login_iser session_is_iser
	disk_appears write_read_back_checksums target_file_matches
	initiator_fast_registered logout"

setup() {
	modprobe -a ib_isert ib_iser sd_mod && eroce_routed_setup any-src
}

ktap_plan 9
if ! modprobe -n -q ib_isert || ! modprobe -n -q ib_iser ||
	! command -v iscsiadm >/dev/null; then
	for t in $SUBTESTS; do
		ktap_missing "$t" "ib_isert, ib_iser or iscsiadm (open-iscsi)"
	done
	ktap_finish
fi
require setup
SNAP=$RDMA_TMP/iser.s1
stat_snap eroce1 "$SNAP"
ktap_check target_iser_portal iser_target_setup "$IQN" "$PORTAL" "$BACKING" 64
iscsid_start "$RDMA_TMP/iscsid.log"
ktap_check discovery iser_discovered "$IQN" "$PORTAL"
ktap_check login_iser iser_login "$IQN" "$PORTAL"
ktap_check session_is_iser eval "iscsiadm -m session | grep -q '^iser:'"
ktap_check disk_appears wait_for 30 iser_disk
DISK=$(iser_disk)
ktap_diag "disk: ${DISK:-none}"
[ -n "$DISK" ] || ktap_diag "$(iscsiadm -m session -P 3 2>&1 | tail -n 15)"
ktap_check write_read_back_checksums disk_write_read_back "$DISK" "$(debug_scaled 16 4)"
ktap_diag "$LAST_OUT"
ktap_check target_file_matches disk_file_matches "$BACKING" "$(debug_scaled 16 4)"
ktap_check initiator_fast_registered stat_moved eroce1 "$SNAP" fast_reg_mrs
ktap_diag "eroce1: $(stat_changes eroce1 "$SNAP")"
ktap_check logout iser_logout "$IQN" "$PORTAL"
iscsid_stop
iser_target_teardown "$IQN" "$PORTAL" "$BACKING"
rm -f "$SNAP"
ktap_finish
