# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# lib_consumers.sh: the kernel's RDMA storage consumers, set up in the
# test guest (source it after lib.sh and lib_rdma.sh).  They live in the
# initial network namespace: put the RDMA devices on a routed veth pair
# there (lib_rdma.sh: eroce_routed_setup, rxe_pair_setup).
#   NVMe over Fabrics  nvmet_export, nvmet_unexport (target, configfs),
#                      nvme_host_connect, nvme_host_disconnect, nvme_dev,
#                      nvme_connected (host, nvme-cli)
#   NFS over RDMA      nfs_server_start, nfs_server_stop, nfs_mount_rdma,
#                      nfs_mount (RDMA or TCP)
#   LIO (SCSI target)  lio_backstore_add, lio_backstore_del,
#                      lio_configfs_umount
#   iSER               iser_target_setup, iser_target_teardown (LIO),
#                      iscsid_start, iscsid_stop, iser_discovered,
#                      iser_login, iscsi_login (iSER or TCP),
#                      iser_logout, iser_disk (open-iscsi)
#   SRP                gid0_hex, srpt_service_guid, srp_target_setup,
#                      srp_target_teardown (LIO, ib_srpt),
#                      srp_add_target, srp_scsi_host, srp_disk,
#                      srp_remove_target (ib_srp)
#   SCSI disks         disk_write_read_back, disk_file_matches

NVMET_CFG=/sys/kernel/config/nvmet

# nvmet_export NQN FILE SIZE IP [TRTYPE]: subsystem NQN with one namespace
# on FILE (created with SIZE, e.g. 64M; put it on tmpfs: an overlayfs inode
# has no block size for nvmet to use) on port 1, IP:4420, transport
# TRTYPE (default rdma; tcp: NVMe/TCP, nvmet-tcp)
nvmet_export() {
	local nqn=$1 file=$2 s=$NVMET_CFG/subsystems/$1 p=$NVMET_CFG/ports/1
	local tr=${5:-rdma}
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return
	truncate -s "$3" "$file" &&
		mkdir "$s" && echo 1 >"$s/attr_allow_any_host" &&
		mkdir "$s/namespaces/1" &&
		echo "$file" >"$s/namespaces/1/device_path" &&
		echo 1 >"$s/namespaces/1/buffered_io" &&
		echo 1 >"$s/namespaces/1/enable" &&
		mkdir "$p" && echo "$tr" >"$p/addr_trtype" &&
		echo ipv4 >"$p/addr_adrfam" && echo "$4" >"$p/addr_traddr" &&
		echo 4420 >"$p/addr_trsvcid" &&
		ln -s "$s" "$p/subsystems/$nqn"
}

# nvmet_unexport NQN FILE: undo nvmet_export
nvmet_unexport() {
	local s=$NVMET_CFG/subsystems/$1 p=$NVMET_CFG/ports/1
	rm -f "$p/subsystems/$1"
	rmdir "$p" 2>/dev/null
	[ -d "$s/namespaces/1" ] && echo 0 >"$s/namespaces/1/enable"
	rmdir "$s/namespaces/1" "$s" 2>/dev/null
	rm -f "$2"
}

# nvme_dev NQN: the block device of the connected subsystem (with native
# multipath the controller's own is a hidden nvmeXcYnZ; the subsystem has
# the real one)
nvme_dev() {
	local s n
	for s in /sys/class/nvme-subsystem/nvme-subsys* /sys/class/nvme/nvme*; do
		[ "$(cat "$s/subsysnqn" 2>/dev/null)" = "$1" ] || continue
		for n in "$s"/nvme*n1; do
			n=${n##*/}
			[ -b "/dev/$n" ] && { echo "$n"; return 0; }
		done
	done
	return 1
}

# nvme_connected NQN: the namespace's block device is there, with its size
# (it shows up before the size is known)
nvme_connected() {
	local d
	d=$(nvme_dev "$1") && [ -b "/dev/$d" ] &&
		[ "$(cat "/sys/block/$d/size" 2>/dev/null || echo 0)" -gt 0 ]
}

# nvme_host_connect NQN TARGET_IP HOST_IP [TRTYPE]: connect from HOST_IP
# (which picks the host's RDMA device), 2 I/O queues of 32, transport
# TRTYPE (default rdma; tcp: NVMe/TCP)
nvme_host_connect() {
	timeout "$(tmo 60)" nvme connect -t "${4:-rdma}" -n "$1" -a "$2" -s 4420 \
		-w "$3" -Q 32 -i 2 && wait_for 30 nvme_connected "$1"
}

nvme_host_disconnect() {
	timeout "$(tmo 60)" nvme disconnect -n "$1"
}

# nfs_server_start EXPORT NET [PROTO]: nfsd (NFSv3) exporting a fresh tmpfs
# at EXPORT to NET, listening on TCP (and UDP) port 2049 and, unless PROTO
# is tcp, on RDMA port 20049
nfs_server_start() {
	mkdir -p "$1" && mount -t tmpfs -o size=256m eroce-nfs "$1" || return
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return
	mkdir -p /var/lib/nfs/rpc_pipefs /run/rpcbind
	pgrep -x rpcbind >/dev/null || rpcbind || return
	exportfs -o rw,sync,fsid=77,no_root_squash,insecure,no_subtree_check \
		"$2:$1" || return
	rpc.mountd && rpc.nfsd -N 4 4 || return
	[ "${3:-rdma}" = tcp ] || echo "rdma 20049" >/proc/fs/nfsd/portlist
}

# nfs_server_stop EXPORT: undo nfs_server_start
nfs_server_stop() {
	rpc.nfsd 0
	exportfs -ua
	pkill -x rpc.mountd
	pkill -x rpcbind
	umount "$1" 2>/dev/null
	# the mounted nfsd filesystem keeps nfsd (and lockd, sunrpc) loaded
	umount /proc/fs/nfsd 2>/dev/null
}

# nfs_mount_rdma SERVER_IP EXPORT MNT: NFSv3 over RDMA, mount protocol
# over TCP
nfs_mount_rdma() {
	mkdir -p "$3" &&
		timeout "$(tmo 60)" mount -t nfs -o vers=3,proto=rdma,port=20049,mountproto=tcp \
			"$1:$2" "$3"
}

# nfs_mount PROTO SERVER_IP EXPORT MNT: NFSv3 over PROTO (rdma: port
# 20049, tcp: 2049), mount protocol over TCP, without the lock protocol
# (a client on another host would need its own rpcbind and rpc.statd)
nfs_mount() {
	local port=2049
	[ "$1" != rdma ] || port=20049
	mkdir -p "$4" &&
		timeout "$(tmo 60)" mount -t nfs \
			-o "vers=3,proto=$1,port=$port,mountproto=tcp,nolock" "$2:$3" "$4"
}

# ---- LIO, the kernel's SCSI target -------------------------------------------

LIO_CF=/sys/kernel/config/target
# whether configfs was mounted when this file was sourced: the teardowns
# unmount it only if it was not (a mounted configfs keeps its module
# loaded, which the next script in the same guest would inherit).  The
# setups may run in a subshell (ktap_check), so they cannot record it.
LIO_CF_WAS_MOUNTED=0
mountpoint -q /sys/kernel/config 2>/dev/null && LIO_CF_WAS_MOUNTED=1

# lio_backstore_add FILE MIB: LIO's core modules and a fileio backstore
# fileio_0/eroce0 on FILE (created with MIB MiB if smaller; put it on
# tmpfs)
lio_backstore_add() {
	local b=$LIO_CF/core/fileio_0/eroce0
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return
	modprobe -a target_core_mod target_core_file || return
	truncate -s ">$2M" "$1" &&
		mkdir -p "$b" &&
		echo "fd_dev_name=$1,fd_dev_size=$(($2 << 20))" >"$b/control" &&
		echo 1 >"$b/enable"
}

# lio_backstore_del FILE: undo lio_backstore_add (once nothing links to
# the backstore); fails when a directory stays
lio_backstore_del() {
	local rc=0
	if [ -d "$LIO_CF/core/fileio_0" ]; then
		rmdir "$LIO_CF/core/fileio_0/eroce0" "$LIO_CF/core/fileio_0" || rc=1
	fi
	rm -f "$1"
	return "$rc"
}

# lio_configfs_umount: unmount configfs if it was not mounted when this
# file was sourced
lio_configfs_umount() {
	if [ "$LIO_CF_WAS_MOUNTED" = 0 ] && mountpoint -q /sys/kernel/config; then
		umount /sys/kernel/config
	fi
}

# ---- iSER --------------------------------------------------------------------

# iser_target_setup IQN PORTAL FILE MIB [TRANSPORT]: a LIO iSCSI target
# IQN with one LUN on lio_backstore_add FILE MIB, open to any initiator,
# and a portal PORTAL (IP:PORT) with iSER on (TRANSPORT tcp: iSCSI over
# TCP only)
iser_target_setup() {
	local t=$LIO_CF/iscsi/$1/tpgt_1 p=$2 iser=1
	[ "${5:-iser}" != tcp ] || iser=0
	lio_backstore_add "$3" "$4" && modprobe iscsi_target_mod || return
	mkdir -p "$t/lun/lun_0" &&
		ln -s "$LIO_CF/core/fileio_0/eroce0" "$t/lun/lun_0/eroce0" &&
		mkdir "$t/np/$p" &&
		{ [ "$iser" = 0 ] || echo 1 >"$t/np/$p/iser"; } &&
		echo 0 >"$t/attrib/authentication" &&
		echo 1 >"$t/attrib/generate_node_acls" &&
		echo 0 >"$t/attrib/demo_mode_write_protect" &&
		echo 1 >"$t/attrib/cache_dynamic_acls" &&
		echo 1 >"$t/enable" &&
		[ "$(cat "$t/np/$p/iser")" = "$iser" ]
}

# iser_target_teardown IQN PORTAL FILE: undo iser_target_setup, then
# lio_configfs_umount
iser_target_teardown() {
	local t=$LIO_CF/iscsi/$1/tpgt_1 p=$2
	echo 0 >"$t/enable" 2>/dev/null
	echo 0 >"$t/np/$p/iser" 2>/dev/null
	rmdir "$t/np/$p" 2>/dev/null
	rm -f "$t/lun/lun_0/eroce0"
	rmdir "$t/lun/lun_0" "$t" "$LIO_CF/iscsi/$1" 2>/dev/null
	lio_backstore_del "$3" 2>/dev/null
	# LIO's iscsi directory keeps iscsi_target_mod loaded
	rmdir "$LIO_CF/iscsi" 2>/dev/null
	lio_configfs_umount
}

# iscsid_start LOG: open-iscsi's daemon, its output in LOG, its PID in
# ISCSID; in its own session (iscsid signals its process group when it
# stops)
iscsid_start() {
	mkdir -p /run/lock/iscsi
	setsid iscsid -f >"$1" 2>&1 &
	ISCSID=$!
	wait_for 10 test -S /run/iscsid.sock -o -e "/proc/$ISCSID"
	sleep 1
}

# iscsid_stop: stop iscsid_start's daemon
iscsid_stop() {
	kill "$ISCSID" 2>/dev/null
	wait "$ISCSID" 2>/dev/null
}

# iser_discovered IQN PORTAL: SendTargets discovery (over TCP) at PORTAL
# lists IQN (grep -c reads it all: no SIGPIPE for pipefail to report)
iser_discovered() {
	[ "$(timeout "$(tmo 60)" iscsiadm -m discovery -t st -p "$2" | grep -c "$1")" -gt 0 ]
}

# iser_login IQN PORTAL: log in to the discovered node with the iser
# transport
iser_login() {
	iscsi_login "$1" "$2" iser
}

# iscsi_login IQN PORTAL TRANSPORT: log in to the discovered node with
# open-iscsi's TRANSPORT (iser, tcp)
iscsi_login() {
	iscsiadm -m node -T "$1" -p "$2" -o update -n iface.transport_name -v "$3" >/dev/null 2>&1
	timeout "$(tmo 90)" iscsiadm -m node -T "$1" -p "$2" --login
}

# iser_logout IQN PORTAL: log out, and forget the node
iser_logout() {
	local rc=0
	timeout "$(tmo 60)" iscsiadm -m node -T "$1" -p "$2" --logout || rc=$?
	iscsiadm -m node -T "$1" -p "$2" -o delete >/dev/null 2>&1
	return "$rc"
}

# iser_disk: the SCSI disk of the session
iser_disk() {
	iscsiadm -m session -P 3 2>/dev/null |
		awk '/Attached scsi disk/ { print $4; found = 1; exit } END { exit !found }'
}

# ---- SRP ---------------------------------------------------------------------

# gid0_hex DEV: GID 0 of DEV's port 1 (the default GID), 32 hex digits
gid0_hex() {
	local g
	g=$(read_file "$IBSYS/$1/ports/1/gids/0")
	g=${g//:/}
	[ ${#g} = 32 ] && [ "$g" != 00000000000000000000000000000000 ] && echo "$g"
}

# srpt_service_guid: ib_srpt's srpt_service_guid (the node GUID of the
# first device it saw), 16 hex digits: the target port ID it accepts is
# id_ext = ioc_guid = this
srpt_service_guid() {
	local g
	g=$(read_file /sys/module/ib_srpt/parameters/srpt_service_guid)
	g=${g#0x}
	[ ${#g} = 16 ] && echo "$g"
}

# srp_target_setup TARGET_DEV INITIATOR_DEV FILE MIB CM_PORT: through
# LIO's configfs, lio_backstore_add FILE MIB; the srpt port of
# TARGET_DEV named by its GID 0, a TPG with one LUN, mapped to one ACL,
# the initiator port ID of INITIATOR_DEV (initiator_ext 0, then the
# interface ID of its GID 0: what ib_srp sends); the rdma_cm listener on
# CM_PORT.  Sets SRP_PORTNAME, SRP_ACL and SRP_TPG, which
# srp_target_teardown needs: do not call it in a subshell.
srp_target_setup() {
	local gt gi cf=$LIO_CF
	if ! gt=$(gid0_hex "$1") || ! gi=$(gid0_hex "$2"); then
		echo "no GID 0"
		return 1
	fi
	SRP_PORTNAME=0x$gt
	SRP_ACL=0x0000000000000000${gi:16}
	SRP_TPG=$cf/srpt/$SRP_PORTNAME/tpgt_1
	echo "target port $SRP_PORTNAME, ACL $SRP_ACL"
	lio_backstore_add "$3" "$4" || return
	mkdir -p "$cf/srpt" &&
		mkdir "$cf/srpt/$SRP_PORTNAME" "$SRP_TPG" "$SRP_TPG/lun/lun_0" &&
		ln -s "$cf/core/fileio_0/eroce0" "$SRP_TPG/lun/lun_0/eroce0" &&
		mkdir "$SRP_TPG/acls/$SRP_ACL" "$SRP_TPG/acls/$SRP_ACL/lun_0" &&
		ln -s "$SRP_TPG/lun/lun_0" "$SRP_TPG/acls/$SRP_ACL/lun_0/lun_0" &&
		echo 1 >"$SRP_TPG/enable" &&
		echo "$5" >"$cf/srpt/discovery_auth/rdma_cm_port" &&
		[ "$(cat "$cf/srpt/discovery_auth/rdma_cm_port")" = "$5" ]
}

# srp_target_teardown FILE: undo srp_target_setup, then
# lio_configfs_umount; every step must succeed (a fabric directory left
# behind keeps ib_srpt loaded)
srp_target_teardown() {
	local rc=0 cf=$LIO_CF tpg=${SRP_TPG-} acl=${SRP_ACL-}
	if [ -d "$cf/srpt" ]; then
		echo 0 >"$cf/srpt/discovery_auth/rdma_cm_port" || rc=1
	fi
	if [ -n "$tpg" ] && [ -d "$tpg" ]; then
		echo 0 >"$tpg/enable" || rc=1
		rm -f "$tpg/acls/$acl/lun_0/lun_0" "$tpg/lun/lun_0/eroce0" || rc=1
		rmdir "$tpg/acls/$acl/lun_0" "$tpg/acls/$acl" "$tpg/lun/lun_0" \
			"$tpg" "$cf/srpt/$SRP_PORTNAME" || rc=1
	fi
	if [ -d "$cf/srpt" ]; then rmdir "$cf/srpt" || rc=1; fi
	lio_backstore_del "$1" || rc=1
	lio_configfs_umount || rc=1
	return "$rc"
}

# srp_add_target INITIATOR_DEV DEST_IP SRC_IP CM_PORT: ib_srp logs in from
# INITIATOR_DEV port 1 to DEST_IP:CM_PORT through RDMA/CM (RoCE has no IB
# CM path records); SRC_IP binds the channels to INITIATOR_DEV
srp_add_target() {
	local sg opts
	sg=$(srpt_service_guid) || { echo "no srpt_service_guid"; return 1; }
	opts="id_ext=$sg,ioc_guid=$sg,dest=$2:$4,src=$3"
	echo "add_target $opts"
	timeout "$(tmo 120)" sh -c "echo '$opts' >'/sys/class/infiniband_srp/srp-$1-1/add_target'"
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

# srp_remove_target: delete the rport; the disk and ib_srp's SCSI host go
srp_remove_target() {
	local p n=0
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p/delete" ] || continue
		echo 1 >"$p/delete" || return
		n=$((n + 1))
	done
	[ "$n" -ge 1 ] || { echo "no rport to delete"; return 1; }
	wait_for 60 eval '! srp_scsi_host'
}

# ---- SCSI disks --------------------------------------------------------------

# disk_write_read_back DISK MIB: MIB MiB of random data written to
# /dev/DISK with O_DIRECT and read back; prints both SHA-256s and keeps
# what was written for disk_file_matches
disk_write_read_back() {
	local src=$RDMA_TMP/disk.src dst=$RDMA_TMP/disk.dst a b
	head -c "$(($2 << 20))" /dev/urandom >"$src" || return
	timeout "$(tmo 120)" dd if="$src" of="/dev/$1" bs=1M oflag=direct conv=fsync status=none || return
	timeout "$(tmo 120)" dd if="/dev/$1" of="$dst" bs=1M count="$2" iflag=direct status=none || return
	a=$(sha256sum <"$src") b=$(sha256sum <"$dst")
	echo "written ${a%% *}, read ${b%% *}"
	cp "$src" "$RDMA_TMP/disk.last"
	rm -f "$src" "$dst"
	[ "$a" = "$b" ]
}

# disk_file_matches FILE MIB: the first MIB MiB of FILE (the target's
# backing file) are what disk_write_read_back wrote last
disk_file_matches() {
	local a b
	[ -f "$RDMA_TMP/disk.last" ] || return 1
	a=$(sha256sum <"$RDMA_TMP/disk.last")
	b=$(head -c "$(($2 << 20))" "$1" | sha256sum)
	rm -f "$RDMA_TMP/disk.last"
	echo "in the backing file ${b%% *}"
	[ "$a" = "$b" ]
}
