#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
# zz_srp.sh: experiment, SRP over eroce / rxe (to be deleted)
set -u -o pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_rdma.sh"

CF=/sys/kernel/config/target
BACKING=/dev/shm/eroce-srp.img
MODE=${SRP_MODE:-eroce}

sh_() { echo "+ $*"; "$@"; echo "  rc=$?"; }

gid0_hex() {
	local g
	g=$(cat /sys/class/infiniband/$1/ports/1/gids/0)
	echo "${g//:/}"
}

srp_disk() {
	local h d
	for h in /sys/class/scsi_host/host*; do
		[ "$(cat "$h/proc_name" 2>/dev/null)" = ib_srp ] || continue
		for d in "$h"/device/target*/*/block/*; do
			[ -e "$d" ] && { echo "${d##*/}"; return 0; }
		done
	done
	return 1
}

ktap_plan 1
echo "# mode $MODE"
sh_ modprobe -a configfs target_core_mod target_core_file ib_srpt ib_srp sd_mod
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
if [ "$MODE" = eroce ]; then
	eroce_routed_setup || echo "setup failed"
	DI=eroce1 DT=eroce2 AI=198.18.4.1 AT=198.18.4.2
else
	rxe_pair_setup || echo "setup failed"
	DI=rxe1 DT=rxe2 AI=198.18.1.1 AT=198.18.1.2
fi
kmsg_mark
rdma link show
for d in $DI $DT; do gid_table $d; done
ls /sys/class/infiniband_srp/
cat /sys/module/ib_srpt/parameters/srpt_service_guid
SG=$(cat /sys/module/ib_srpt/parameters/srpt_service_guid)
SG=${SG#0x}
GT=$(gid0_hex $DT) GI=$(gid0_hex $DI)
echo "# target gid0 $GT initiator gid0 $GI service guid $SG"

# target
sh_ truncate -s 64M "$BACKING"
sh_ mkdir -p "$CF/core/fileio_0/srp0"
echo "fd_dev_name=$BACKING,fd_dev_size=$((64 << 20))" >"$CF/core/fileio_0/srp0/control"
echo 1 >"$CF/core/fileio_0/srp0/enable"
sh_ mkdir "$CF/srpt"
ls -la "$CF/srpt" "$CF/srpt/discovery_auth"
PORTNAME=0x$GT
sh_ mkdir "$CF/srpt/$PORTNAME"
T=$CF/srpt/$PORTNAME/tpgt_1
sh_ mkdir "$T"
ls "$T" "$T/attrib"
sh_ mkdir "$T/lun/lun_0"
sh_ ln -s "$CF/core/fileio_0/srp0" "$T/lun/lun_0/srp0"
ACL=0x0000000000000000${GI:16}
sh_ mkdir "$T/acls/$ACL"
sh_ mkdir "$T/acls/$ACL/lun_0"
sh_ ln -s "$T/lun/lun_0" "$T/acls/$ACL/lun_0/lun_0"
sh_ eval "echo 1 >$T/enable"
sh_ eval "echo 5555 >$CF/srpt/discovery_auth/rdma_cm_port"
cat "$CF/srpt/discovery_auth/rdma_cm_port"
rdma resource show cm_id
dmesg_since_mark

# initiator
OPTS="id_ext=$SG,ioc_guid=$SG,dest=$AT:5555,src=$AI"
echo "# add_target $OPTS"
kmsg_mark
sh_ eval "timeout 120 sh -c 'echo $OPTS > /sys/class/infiniband_srp/srp-$DI-1/add_target'"
dmesg_since_mark
wait_for 30 srp_disk
DISK=$(srp_disk)
echo "# disk ${DISK:-none}"
ls /sys/class/srp_remote_ports/ 2>&1
for h in /sys/class/scsi_host/host*; do echo "$h $(cat $h/proc_name)"; done
ls /sys/class/scsi_host/host*/ 2>/dev/null | head -0
SNAP1=$RDMA_TMP/s1 SNAP2=$RDMA_TMP/s2
stat_snap $DI $SNAP1 ; stat_snap $DT $SNAP2
if [ -n "$DISK" ]; then
	cat /sys/block/$DISK/size
	head -c 16M /dev/urandom >$RDMA_TMP/src
	time timeout 120 dd if=$RDMA_TMP/src of=/dev/$DISK bs=1M oflag=direct conv=fsync status=none; echo "dd w rc=$?"
	time timeout 120 dd if=/dev/$DISK of=$RDMA_TMP/dst bs=1M count=16 iflag=direct status=none; echo "dd r rc=$?"
	sha256sum $RDMA_TMP/src $RDMA_TMP/dst
	head -c 16M $BACKING | sha256sum
	echo "# $DI: $(stat_changes $DI $SNAP1)"
	echo "# $DT: $(stat_changes $DT $SNAP2)"
	for h in /sys/class/scsi_host/host*; do
		[ "$(cat "$h/proc_name")" = ib_srp ] || continue
		for a in ch_count cmd_sg_entries sgid dgid req_lim zero_req_lim local_ib_port local_ib_device; do
			echo "$a=$(cat $h/$a 2>/dev/null)"
		done
	done
	ls $T/acls/$ACL/ 2>&1
	cat $T/acls/$ACL/info 2>&1
fi
kmsg_mark
for p in /sys/class/srp_remote_ports/port-*; do
	sh_ eval "echo 1 >$p/delete"
done
wait_for 30 eval '! srp_disk'
sleep 2
ls /sys/class/srp_remote_ports/ 2>&1
dmesg_since_mark
# teardown
sh_ eval "echo 0 >$CF/srpt/discovery_auth/rdma_cm_port"
sh_ eval "echo 0 >$T/enable"
sh_ rm -f "$T/acls/$ACL/lun_0/lun_0"
sh_ rmdir "$T/acls/$ACL/lun_0" "$T/acls/$ACL"
sh_ rm -f "$T/lun/lun_0/srp0"
sh_ rmdir "$T/lun/lun_0" "$T" "$CF/srpt/$PORTNAME" "$CF/srpt"
sh_ rmdir "$CF/core/fileio_0/srp0" "$CF/core/fileio_0"
rm -f "$BACKING"
sh_ modprobe -r ib_srp ib_srpt
lsmod | grep -E "srp|target|scsi"
dmesg_since_mark
ktap_ok experiment
ktap_finish
