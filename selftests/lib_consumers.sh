# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# lib_consumers.sh: the kernel's RDMA storage consumers, set up in the
# test guest (source it after lib.sh).  They live in the initial network
# namespace: put the RDMA devices on a routed veth pair there
# (lib_rdma.sh: eroce_routed_setup, rxe_pair_setup).
#   NVMe over Fabrics  nvmet_export, nvmet_unexport (target, configfs),
#                      nvme_host_connect, nvme_host_disconnect, nvme_dev,
#                      nvme_connected (host, nvme-cli)
#   NFS over RDMA      nfs_server_start, nfs_server_stop, nfs_mount_rdma

NVMET_CFG=/sys/kernel/config/nvmet

# nvmet_export NQN FILE SIZE IP: subsystem NQN with one namespace on FILE
# (created with SIZE, e.g. 64M; put it on tmpfs: an overlayfs inode has no
# block size for nvmet to use) on RDMA port 1, IP:4420
nvmet_export() {
	local nqn=$1 file=$2 s=$NVMET_CFG/subsystems/$1 p=$NVMET_CFG/ports/1
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return
	truncate -s "$3" "$file" &&
		mkdir "$s" && echo 1 >"$s/attr_allow_any_host" &&
		mkdir "$s/namespaces/1" &&
		echo "$file" >"$s/namespaces/1/device_path" &&
		echo 1 >"$s/namespaces/1/buffered_io" &&
		echo 1 >"$s/namespaces/1/enable" &&
		mkdir "$p" && echo rdma >"$p/addr_trtype" &&
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

# nvme_host_connect NQN TARGET_IP HOST_IP: connect from HOST_IP (which
# picks the host's RDMA device), 2 I/O queues of 32
nvme_host_connect() {
	timeout "$(tmo 60)" nvme connect -t rdma -n "$1" -a "$2" -s 4420 \
		-w "$3" -Q 32 -i 2 && wait_for 30 nvme_connected "$1"
}

nvme_host_disconnect() {
	timeout "$(tmo 60)" nvme disconnect -n "$1"
}

# nfs_server_start EXPORT NET: nfsd (NFSv3) exporting a fresh tmpfs at
# EXPORT to NET, listening on RDMA port 20049
nfs_server_start() {
	mkdir -p "$1" && mount -t tmpfs -o size=256m eroce-nfs "$1" || return
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return
	mkdir -p /var/lib/nfs/rpc_pipefs /run/rpcbind
	pgrep -x rpcbind >/dev/null || rpcbind || return
	exportfs -o rw,sync,fsid=77,no_root_squash,insecure,no_subtree_check \
		"$2:$1" || return
	rpc.mountd && rpc.nfsd -N 4 4 && echo "rdma 20049" >/proc/fs/nfsd/portlist
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
