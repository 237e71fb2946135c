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

CF=/sys/kernel/config/target
BACKING=/dev/shm/eroce-srp.img
CM_PORT=5555
SRP_HOST=/sys/class/infiniband_srp/srp-eroce1-1
PORTNAME=
ACL=
TPG=
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

# gid0_hex DEV: GID 0 of DEV's port 1 (the default GID), 32 hex digits
gid0_hex() {
	local g
	g=$(read_file "$IBSYS/$1/ports/1/gids/0")
	g=${g//:/}
	[ ${#g} = 32 ] && [ "$g" != 00000000000000000000000000000000 ] && echo "$g"
}

# service_guid: ib_srpt's srpt_service_guid (the node GUID of the first
# device it saw), 16 hex digits: the target port ID it accepts is
# id_ext = ioc_guid = this
service_guid() {
	local g
	g=$(read_file /sys/module/ib_srpt/parameters/srpt_service_guid)
	g=${g#0x}
	[ ${#g} = 16 ] && echo "$g"
}

# the target, through LIO's configfs: a fileio backstore; the srpt port
# of eroce2 named by its GID 0, a TPG with one LUN, mapped to one ACL,
# the initiator port ID of eroce1; the rdma_cm listener on CM_PORT
target_setup() {
	local gt gi
	if ! gt=$(gid0_hex eroce2) || ! gi=$(gid0_hex eroce1); then
		echo "no GID 0"
		return 1
	fi
	PORTNAME=0x$gt
	ACL=0x0000000000000000${gi:16}
	TPG=$CF/srpt/$PORTNAME/tpgt_1
	echo "target port $PORTNAME, ACL $ACL"
	truncate -s 64M "$BACKING" &&
		mkdir -p "$CF/core/fileio_0/eroce0" &&
		echo "fd_dev_name=$BACKING,fd_dev_size=$((64 << 20))" >"$CF/core/fileio_0/eroce0/control" &&
		echo 1 >"$CF/core/fileio_0/eroce0/enable" || return
	mkdir -p "$CF/srpt" &&
		mkdir "$CF/srpt/$PORTNAME" "$TPG" "$TPG/lun/lun_0" &&
		ln -s "$CF/core/fileio_0/eroce0" "$TPG/lun/lun_0/eroce0" &&
		mkdir "$TPG/acls/$ACL" "$TPG/acls/$ACL/lun_0" &&
		ln -s "$TPG/lun/lun_0" "$TPG/acls/$ACL/lun_0/lun_0" &&
		echo 1 >"$TPG/enable" &&
		echo "$CM_PORT" >"$CF/srpt/discovery_auth/rdma_cm_port" &&
		[ "$(cat "$CF/srpt/discovery_auth/rdma_cm_port")" = "$CM_PORT" ]
}

# target_teardown: undo target_setup, and unmount configfs if this script
# mounted it; every step must succeed (a fabric directory left behind
# keeps ib_srpt loaded, a mounted configfs its module)
target_teardown() {
	local rc=0
	if [ -d "$CF/srpt" ]; then
		echo 0 >"$CF/srpt/discovery_auth/rdma_cm_port" || rc=1
	fi
	if [ -n "$TPG" ] && [ -d "$TPG" ]; then
		echo 0 >"$TPG/enable" || rc=1
		rm -f "$TPG/acls/$ACL/lun_0/lun_0" "$TPG/lun/lun_0/eroce0" || rc=1
		rmdir "$TPG/acls/$ACL/lun_0" "$TPG/acls/$ACL" "$TPG/lun/lun_0" \
			"$TPG" "$CF/srpt/$PORTNAME" || rc=1
	fi
	if [ -d "$CF/srpt" ]; then rmdir "$CF/srpt" || rc=1; fi
	if [ -d "$CF/core/fileio_0" ]; then
		rmdir "$CF/core/fileio_0/eroce0" "$CF/core/fileio_0" || rc=1
	fi
	rm -f "$BACKING"
	# a mounted configfs keeps its module loaded
	if [ "$CF_WAS_MOUNTED" = 0 ] && mountpoint -q /sys/kernel/config; then
		umount /sys/kernel/config || rc=1
	fi
	return "$rc"
}

# add_target: log in from eroce1 through RDMA/CM
add_target() {
	local sg opts
	sg=$(service_guid) || { echo "no srpt_service_guid"; return 1; }
	opts="id_ext=$sg,ioc_guid=$sg,dest=198.18.4.2:$CM_PORT,src=198.18.4.1"
	echo "add_target $opts"
	timeout "$(tmo 120)" sh -c "echo '$opts' >'$SRP_HOST/add_target'"
}

# srp_scsi_host: the SCSI host ib_srp made (its sysfs directory)
srp_scsi_host() {
	local h
	for h in /sys/class/scsi_host/host*; do
		[ "$(read_file "$h/proc_name")" = ib_srp ] && { echo "$h"; return 0; }
	done
	return 1
}

# srp_disk: the SCSI disk of the SRP target
srp_disk() {
	local h d
	h=$(srp_scsi_host) || return 1
	for d in "$h"/device/target*/*/block/*; do
		[ -e "$d" ] && { echo "${d##*/}"; return 0; }
	done
	return 1
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

write_read_back() {
	local src=$RDMA_TMP/srp.src dst=$RDMA_TMP/srp.dst a b
	head -c "$(($1 << 20))" /dev/urandom >"$src" || return
	timeout "$(tmo 120)" dd if="$src" of="/dev/$DISK" bs=1M oflag=direct conv=fsync status=none || return
	timeout "$(tmo 120)" dd if="/dev/$DISK" of="$dst" bs=1M count="$1" iflag=direct status=none || return
	a=$(sha256sum <"$src") b=$(sha256sum <"$dst")
	echo "written ${a%% *}, read ${b%% *}"
	cp "$src" "$RDMA_TMP/srp.last"
	rm -f "$src" "$dst"
	[ "$a" = "$b" ]
}

target_file_matches() {
	local a b
	[ -f "$RDMA_TMP/srp.last" ] || return 1
	a=$(sha256sum <"$RDMA_TMP/srp.last")
	b=$(head -c "$(($1 << 20))" "$BACKING" | sha256sum)
	rm -f "$RDMA_TMP/srp.last"
	echo "in the backing file ${b%% *}"
	[ "$a" = "$b" ]
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

# remove_target: delete the rport; the disk and ib_srp's SCSI host go
remove_target() {
	local p n=0
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p/delete" ] || continue
		echo 1 >"$p/delete" || return
		n=$((n + 1))
	done
	[ "$n" -ge 1 ] || { echo "no rport to delete"; return 1; }
	wait_for 60 eval '! srp_scsi_host'
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
		ktap_skip "$t" "no SRP here (ib_srpt, ib_srp)"
	done
	ktap_finish
fi
CF_WAS_MOUNTED=0
mountpoint -q /sys/kernel/config 2>/dev/null && CF_WAS_MOUNTED=1
require setup
SNAP1=$RDMA_TMP/srp.s1
SNAP2=$RDMA_TMP/srp.s2
stat_snap eroce1 "$SNAP1"
stat_snap eroce2 "$SNAP2"
# not in a subshell: TPG and the names are needed for the teardown
if target_setup >"$RDMA_TMP/srp.setup" 2>&1; then
	ktap_diag "$(cat "$RDMA_TMP/srp.setup")"
	ktap_ok target_configured
else
	ktap_diag "$(tail -n 10 "$RDMA_TMP/srp.setup")"
	ktap_fail target_configured "configfs setup failed"
fi
ktap_check target_listens_rdma_cm wait_for 10 cm_listening "$CM_PORT"
kmsg_mark
ktap_check add_target_rdma_cm add_target
ktap_diag "$LAST_OUT"
ktap_check channels_on_eroce1 channels_on_eroce1
ktap_diag "$LAST_OUT"
ktap_check disk_appears wait_for 30 srp_disk
DISK=$(srp_disk)
ktap_diag "disk: ${DISK:-none}"
[ -n "$DISK" ] || ktap_diag "$(dmesg_since_mark | tail -n 15)"
ktap_check write_read_back_checksums write_read_back "$(debug_scaled 16 4)"
ktap_diag "$LAST_OUT"
ktap_check target_file_matches target_file_matches "$(debug_scaled 16 4)"
ktap_diag "$LAST_OUT"
ktap_check data_crossed_eroce data_crossed_eroce "$(debug_scaled 16 4)"
ktap_diag "$LAST_OUT"
ktap_check initiator_fast_registered stat_moved eroce1 "$SNAP1" fast_reg_mrs
ktap_check initiator_invalidated_locally stat_moved eroce1 "$SNAP1" local_invalidations
ktap_check no_local_op_errors no_local_op_errors
ktap_diag "eroce1: $(stat_changes eroce1 "$SNAP1")"
ktap_diag "eroce2: $(stat_changes eroce2 "$SNAP2")"
ktap_check remove_target remove_target
ktap_check target_channels_closed wait_for 30 cm_ids_closed
ktap_check target_teardown target_teardown
ktap_check modules_unload modules_unload
rm -f "$SNAP1" "$SNAP2" "$RDMA_TMP/srp.setup"
ktap_finish
