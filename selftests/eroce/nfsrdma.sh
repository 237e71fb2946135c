#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
#
# nfsrdma.sh: NFS over RDMA on eroce.  nfsd listens on RDMA port 20049 on
# eroce2 and exports a tmpfs; the client mounts it with proto=rdma from
# eroce1.  Both live in the initial namespace, on a policy-routed veth
# pair (eroce_routed_setup), and a rule sends the client's traffic to the
# server's address out of nve1 with nve1's address: rdma_cm binds the
# mount to eroce1 and every RPC crosses the link.
#
#   init: nve1 198.18.4.1 (eroce1, client) <-> nve2 198.18.4.2 (eroce2, nfsd)
#
# Files written through the mount and read back with O_DIRECT have the
# checksum of the original, and so has the file nfsd wrote into the
# export; the client's fast registrations and the transport's packets
# are counted.  NFSv3 (no v4 grace period to wait out), mount protocol
# over TCP, data over RDMA.
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"
# shellcheck source=../lib_consumers.sh
. "$(dirname "$0")/../lib_consumers.sh"

EXPORT=$RDMA_TMP/nfs-export
MNT=$RDMA_TMP/nfs-mnt

setup() {
	modprobe -a nfsd rpcrdma nfs nfsv3 && eroce_routed_setup any-src
}

server_setup() {
	nfs_server_start "$EXPORT" 198.18.4.0/24
}

nfs_mount() {
	nfs_mount_rdma 198.18.4.2 "$EXPORT" "$MNT"
}

# copy_check NAME SIZE_MIB: a random file written through the mount; read
# back through it with O_DIRECT, and in the export itself, it must have
# the original's checksum
copy_check() {
	local src=$RDMA_TMP/nfs.src back=$RDMA_TMP/nfs.back a b c
	head -c "$(($2 << 20))" /dev/urandom >"$src" || return
	timeout "$(tmo 120)" dd if="$src" of="$MNT/$1" bs=1M oflag=direct conv=fsync status=none || return
	timeout "$(tmo 120)" dd if="$MNT/$1" of="$back" bs=1M iflag=direct status=none || return
	a=$(sha256sum <"$src") b=$(sha256sum <"$back") c=$(sha256sum <"$EXPORT/$1")
	echo "original ${a%% *}, read back ${b%% *}, in the export ${c%% *}"
	rm -f "$src" "$back"
	[ "$a" = "$b" ] && [ "$a" = "$c" ]
}

# many small files: the metadata RPCs and small writes
small_files() {
	local i
	for i in $(seq 1 "$1"); do
		echo "file $i $(seq 1 $i)" >"$MNT/small.$i" || return
	done
	sync
	for i in $(seq 1 "$1"); do
		[ "$(cat "$EXPORT/small.$i")" = "file $i $(seq 1 $i)" ] || {
			echo "small.$i differs in the export"
			return 1
		}
	done
	[ "$(ls "$MNT" | grep -c '^small\.')" = "$1" ]
}

ktap_plan 9
require setup
require server_setup
B1=$RDMA_TMP/nfs.s1
B2=$RDMA_TMP/nfs.s2
stat_snap eroce1 "$B1"
stat_snap eroce2 "$B2"
ktap_check nfsd_listens_rdma_20049 grep -q "^rdma 20049" /proc/fs/nfsd/portlist
ktap_check mount_proto_rdma nfs_mount
ktap_check mount_is_rdma eval "grep ' $MNT ' /proc/mounts | grep -q 'proto=rdma'"
ktap_check copy_16m_checksums copy_check big "$(debug_scaled 16 4)"
ktap_diag "$LAST_OUT"
ktap_check copy_1m_checksums copy_check small 1
ktap_check small_files small_files "$(debug_scaled 50 5)"
ktap_check client_went_over_eroce1 eval \
	'[ "$(stat_delta eroce1 "$B1" tx_bytes)" -gt $((1 << 20)) ] &&
	 [ "$(stat_delta eroce2 "$B2" rx_bytes)" -gt $((1 << 20)) ]'
ktap_check client_fast_registered stat_moved eroce1 "$B1" fast_reg_mrs
ktap_diag "eroce1: $(stat_changes eroce1 "$B1")"
ktap_diag "eroce2: $(stat_changes eroce2 "$B2")"
ktap_check unmount timeout "$(tmo 60)" umount "$MNT"
nfs_server_stop "$EXPORT"
rm -f "$B1" "$B2"
ktap_finish
