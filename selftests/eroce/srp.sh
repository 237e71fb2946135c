#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
#
# srp.sh: the SCSI RDMA Protocol on eroce.  A LIO target (ib_srpt,
# configured through configfs) exports a file-backed LUN on eroce2 and
# listens with rdma_cm; the ib_srp initiator logs in from eroce1 through
# RDMA/CM (add_target with dest= and src=; RoCE has no IB CM path
# records).  Both live in the initial namespace, on a policy-routed veth
# pair (eroce_routed_setup): src= binds the channels to eroce1 and every
# information unit and every byte crosses the link.
#
#   init: nve1 198.18.4.1 (eroce1, initiator) <-> nve2 198.18.4.2 (eroce2)
#
# The target port is named after eroce2's GID 0 (0x + 32 hex digits), its
# one ACL after the initiator port ID that ib_srp sends (initiator_ext 0,
# then the interface ID of eroce1's GID 0); id_ext and ioc_guid are
# ib_srpt's srpt_service_guid.  Checks: the target listens, add_target
# logs in, the channels run on eroce1, the SCSI disk appears, random data
# written with O_DIRECT reads back with the same SHA-256 (equal to the
# target's backing file too), the data crossed eroce both ways (tx bytes
# of both devices), ib_srp registered with fast registration and
# invalidated locally, no local operation errors, the rport deleted (the
# disk and the SCSI host go, the target's channels close), the target
# torn down and ib_srp and ib_srpt unloaded.  A kernel without the SRP
# modules (the debug kernel) skips it all.
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"
# shellcheck source=../lib_consumers.sh
. "$(dirname "$0")/../lib_consumers.sh"

BACKING=/dev/shm/eroce-srp.img
CM_PORT=5555
SUBTESTS="target_configured target_listens_rdma_cm add_target_rdma_cm
	channels_on_eroce1 disk_appears write_read_back_checksums
	target_file_matches data_crossed_eroce initiator_fast_registered
	initiator_invalidated_locally no_local_op_errors remove_target
	target_channels_closed target_teardown modules_unload"

setup() {
	modprobe -a configfs target_core_mod target_core_file ib_srpt ib_srp sd_mod &&
		eroce_routed_setup || return
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
}

# channels_on_eroce1: the SCSI host's channels run on eroce1, from its
# GID 0, and ib_srp has an rport for them
channels_on_eroce1() {
	local h
	h=$(srp_scsi_host) || { echo "no ib_srp SCSI host"; return 1; }
	echo "$(read_file "$h/local_ib_device") port $(read_file "$h/local_ib_port")," \
		"$(read_file "$h/ch_count") channels, sgid $(read_file "$h/sgid")," \
		"req_lim $(read_file "$h/req_lim")"
	[ "$(read_file "$h/local_ib_device")" = eroce1 ] &&
		[ "$(read_file "$h/ch_count")" -ge 1 ] &&
		[ -n "$(ls /sys/class/srp_remote_ports/ 2>/dev/null)" ]
}

# data_crossed_eroce MIB: eroce1 sent the written data (the target pulls
# it with RDMA READ) and eroce2 the data read (RDMA WRITE), at least MIB
# MiB each
data_crossed_eroce() {
	local t1 t2
	t1=$(stat_delta eroce1 "$SNAP1" tx_bytes) && t2=$(stat_delta eroce2 "$SNAP2" tx_bytes) || return
	echo "tx bytes: eroce1 $t1, eroce2 $t2"
	[ "$t1" -ge $(($1 << 20)) ] && [ "$t2" -ge $(($1 << 20)) ]
}

no_local_op_errors() {
	[ "$(stat_delta eroce1 "$SNAP1" local_op_errors)" = 0 ] &&
		[ "$(stat_delta eroce2 "$SNAP2" local_op_errors)" = 0 ]
}

# no connected rdma_cm ID is left on either device (the listener stays)
cm_ids_closed() {
	local n
	# grep -c reads everything: no SIGPIPE for pipefail to report
	n=$(rdma resource show cm_id 2>/dev/null | grep -v 'state LISTEN' |
		grep -c '^link eroce')
	[ "$n" = 0 ]
}

modules_unload() {
	modprobe -r ib_srp ib_srpt &&
		! grep -qE '^(ib_srp|ib_srpt) ' /proc/modules
}

ktap_plan 15
if ! modprobe -n -q ib_srpt || ! modprobe -n -q ib_srp; then
	for t in $SUBTESTS; do
		ktap_missing "$t" "ib_srpt or ib_srp"
	done
	ktap_finish
fi
require setup
SNAP1=$RDMA_TMP/srp.s1
SNAP2=$RDMA_TMP/srp.s2
stat_snap eroce1 "$SNAP1"
stat_snap eroce2 "$SNAP2"
# not in a subshell: the names it sets are needed for the teardown
if srp_target_setup eroce2 eroce1 "$BACKING" 64 "$CM_PORT" >"$RDMA_TMP/srp.setup" 2>&1; then
	ktap_diag "$(cat "$RDMA_TMP/srp.setup")"
	ktap_ok target_configured
else
	ktap_diag "$(tail -n 10 "$RDMA_TMP/srp.setup")"
	ktap_fail target_configured "configfs setup failed"
fi
ktap_check target_listens_rdma_cm wait_for 10 cm_listening "$CM_PORT"
kmsg_mark
ktap_check add_target_rdma_cm srp_add_target eroce1 198.18.4.2 198.18.4.1 "$CM_PORT"
ktap_diag "$LAST_OUT"
ktap_check channels_on_eroce1 channels_on_eroce1
ktap_diag "$LAST_OUT"
ktap_check disk_appears wait_for 30 srp_disk
DISK=$(srp_disk)
ktap_diag "disk: ${DISK:-none}"
[ -n "$DISK" ] || ktap_diag "$(dmesg_since_mark | tail -n 15)"
ktap_check write_read_back_checksums disk_write_read_back "$DISK" "$(debug_scaled 16 4)"
ktap_diag "$LAST_OUT"
ktap_check target_file_matches disk_file_matches "$BACKING" "$(debug_scaled 16 4)"
ktap_diag "$LAST_OUT"
ktap_check data_crossed_eroce data_crossed_eroce "$(debug_scaled 16 4)"
ktap_diag "$LAST_OUT"
ktap_check initiator_fast_registered stat_moved eroce1 "$SNAP1" fast_reg_mrs
ktap_check initiator_invalidated_locally stat_moved eroce1 "$SNAP1" local_invalidations
ktap_check no_local_op_errors no_local_op_errors
ktap_diag "eroce1: $(stat_changes eroce1 "$SNAP1")"
ktap_diag "eroce2: $(stat_changes eroce2 "$SNAP2")"
ktap_check remove_target srp_remove_target
ktap_check target_channels_closed wait_for 30 cm_ids_closed
ktap_check target_teardown srp_target_teardown "$BACKING"
ktap_check modules_unload modules_unload
rm -f "$SNAP1" "$SNAP2" "$RDMA_TMP/srp.setup"
ktap_finish
