#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 1500
#
# consumers_guest.sh: what the kernel's storage consumers get from eroce,
# next to rdma_rxe, in one guest:
#   selftests/run_vm.sh --show selftests/bench/consumers_guest.sh
# (`make bench-consumers`).  Both run in the initial namespace (where
# nvmet, nvme-rdma and nfsd live) on a policy-routed veth pair, one after
# the other (they cannot share UDP port 4791 there): eroce1/eroce2 on
# nve1/nve2, then rxe1/rxe2 on vr1/vr2.  For each:
#   NVMe-oF   fio on the nvme-rdma block device, O_DIRECT, CONS_SECS
#             (default 10) seconds each: sequential read and write of
#             128 KiB at QD16, random 4 KiB reads at QD16 (MB/s)
#   NFS/RDMA  dd of CONS_NFS_MIB (default 64) MiB through an NFSv3
#             proto=rdma mount, O_DIRECT, 1 MiB blocks, write then read
# Prints "CONS-ROW: transport,test,MB/s" per run and a table with the
# eroce/rdma_rxe ratio.  Single runs under TCG vary by tens of percent:
# compare within one run (Documentation/bench.rst).
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"
# shellcheck source=../lib_consumers.sh
. "$(dirname "$0")/../lib_consumers.sh"

SECS=${CONS_SECS:-10}
NFS_MIB=${CONS_NFS_MIB:-64}
NQN=nqn.2026-12.org.eroce:bench
BACKING=/dev/shm/eroce-bench.img
EXPORT=$RDMA_TMP/bench-export
MNT=$RDMA_TMP/bench-mnt
declare -A MBS

row() {
	MBS[$1,$2]=$3
	echo "CONS-ROW: $1,$2,$3"
}

# fio_mbs DEV RW BS: MB/s of one time-based fio run
fio_mbs() {
	timeout $((SECS + 120)) fio --name=b --filename="/dev/$1" --direct=1 \
		--ioengine=libaio --rw="$2" --bs="$3" --iodepth=16 --size=200M \
		--time_based --runtime="$SECS" --ramp_time=1 --output-format=json 2>/dev/null |
		python3 -c 'import json, sys
j = json.load(sys.stdin)["jobs"][0]
print("%.1f" % ((j["read"]["bw"] + j["write"]["bw"]) / 1000.0))'
}

# dd_mbs ARGS...: MB/s that dd reports
dd_mbs() {
	local out
	out=$(timeout 300 dd "$@" bs=1M 2>&1) || return 1
	awk '/copied/ { v = $(NF - 1); u = $NF
		if (u ~ /^GB/) v *= 1000; else if (u ~ /^kB/) v /= 1000
		printf "%.1f\n", v }' <<<"$out"
}

# bench_nvme TRANSPORT TARGET_IP HOST_IP
bench_nvme() {
	local t=$1 dev
	modprobe -a nvmet nvmet-rdma nvme-rdma &&
		nvmet_export "$NQN" "$BACKING" 256M "$2" &&
		nvme_host_connect "$NQN" "$2" "$3" || { echo "$t: NVMe-oF setup failed"; return 1; }
	dev=$(nvme_dev "$NQN")
	# write it all once: reads then see data, not holes
	dd if=/dev/zero of="/dev/$dev" bs=1M count=256 oflag=direct status=none
	row "$t" nvme_seq_read_128k "$(fio_mbs "$dev" read 128k)"
	row "$t" nvme_seq_write_128k "$(fio_mbs "$dev" write 128k)"
	row "$t" nvme_rand_read_4k "$(fio_mbs "$dev" randread 4k)"
	nvme_host_disconnect "$NQN" >/dev/null
	nvmet_unexport "$NQN" "$BACKING"
}

# bench_nfs TRANSPORT SERVER_IP NET
bench_nfs() {
	local t=$1 src=$RDMA_TMP/bench.src
	modprobe -a nfsd rpcrdma nfs nfsv3 &&
		nfs_server_start "$EXPORT" "$3" &&
		nfs_mount_rdma "$2" "$EXPORT" "$MNT" || { echo "$t: NFS setup failed"; return 1; }
	head -c $((NFS_MIB << 20)) /dev/urandom >"$src"
	row "$t" nfs_write_1m "$(dd_mbs if="$src" of="$MNT/f" oflag=direct conv=fsync)"
	row "$t" nfs_read_1m "$(dd_mbs if="$MNT/f" of=/dev/null iflag=direct)"
	rm -f "$src"
	umount "$MNT"
	nfs_server_stop "$EXPORT"
}

eroce_routed_setup any-src || { echo "eroce setup failed"; exit 1; }
bench_nvme eroce 198.18.4.2 198.18.4.1
bench_nfs eroce 198.18.4.2 198.18.4.0/24
rdma link delete eroce1
rdma link delete eroce2
wait_for 30 rdma_dev_gone eroce1
eroce_unload

rxe_pair_setup any-src || { echo "rdma_rxe setup failed"; exit 1; }
bench_nvme rdma_rxe 198.18.1.2 198.18.1.1
bench_nfs rdma_rxe 198.18.1.2 198.18.1.0/24

printf '%-22s %10s %10s %8s\n' test eroce rdma_rxe ratio
for t in nvme_seq_read_128k nvme_seq_write_128k nvme_rand_read_4k nfs_write_1m nfs_read_1m; do
	printf '%-22s %10s %10s %8s\n' "$t" "${MBS[eroce,$t]:--}" "${MBS[rdma_rxe,$t]:--}" \
		"$(awk -v a="${MBS[eroce,$t]:-0}" -v b="${MBS[rdma_rxe,$t]:-0}" \
			'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }')"
done
echo "consumers_guest: done"
