#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 2400
#
# consumers_guest.sh: what RDMA's consumers, the kernel's and
# userspace's, get from eroce, next to rdma_rxe, in one guest:
#   selftests/run_vm.sh --show selftests/bench/consumers_guest.sh
# (`make bench-consumers`).  Both run in the initial namespace (where
# nvmet, nvme-rdma, nfsd, LIO, the initiators and RDS live; rdma_rxe's
# socket lives only there) on a policy-routed veth pair, one after the
# other (they cannot share UDP port 4791 there): eroce1/eroce2 on
# nve1/nve2, then rxe1/rxe2 on vr1/vr2; the userspace consumers pick
# their devices by name.  For each, CONS_SECS (default 10) seconds a
# measurement, or for the tools without a time mode a count that takes
# about that long at the speeds seen here:
#   NVMe-oF    fio on the nvme-rdma block device, O_DIRECT: sequential
#              read and write of 128 KiB at QD16, random 4 KiB reads at
#              QD16 (MB/s)
#   NFS/RDMA   dd of CONS_NFS_MIB (default 64) MiB through an NFSv3
#              proto=rdma mount, O_DIRECT, 1 MiB blocks, write then read
#   iSER       LIO iSCSI target with an iSER portal, open-iscsi with the
#              iser transport; fio as for NVMe-oF, 128 KiB sequential
#   SRP        LIO with ib_srpt, ib_srp logged in through RDMA/CM; fio
#              the same
#   UCX        ucx_perftest tag_bw, 1 MiB over rc_verbs (ud_verbs for
#              the wireup), 64 KiB over ud_verbs (ucx_perftest's MB/s,
#              which are MiB/s)
#   libfabric  fi_pingpong over verbs;ofi_rxm RDM endpoints, 256 KiB
#   Open MPI   eroce_mpi's bandwidth run over UCX (rc_verbs, ud_verbs):
#              1 MiB ping-pong, both directions counted
#   RDS        eroce_rds.py --bw: RDS/IB, 64 KiB messages streamed, each
#              checked
# UCX's RDMA READs are capped at 256 KiB and libfabric's messages are
# 256 KiB, for both: a 1 MiB RDMA READ took rdma_rxe about a second (with
# sequence errors and requester retries), UCX's rendezvous ran at
# 0.9 MB/s and ofi_rxm's QP was flushed with an error
# (Documentation/bench.rst).
# CONS_ONLY (default "nvme nfs iser srp ucx fi mpi rds") names the
# consumers to run, in a wrapper script (the guest does not inherit the
# host's environment).
# Prints "CONS-ROW: transport,test,MB/s" per measurement ("-" when it
# failed; the reason is printed above it) and a table with the
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
IQN=iqn.2026-12.org.eroce:bench
BACKING=/dev/shm/eroce-bench.img
EXPORT=$RDMA_TMP/bench-export
MNT=$RDMA_TMP/bench-mnt
CM_PORT=5555
TOOLS=$EROCE_ROOT/selftests/tools
TESTS="nvme_seq_read_128k nvme_seq_write_128k nvme_rand_read_4k
	nfs_write_1m nfs_read_1m iser_seq_read_128k iser_seq_write_128k
	srp_seq_read_128k srp_seq_write_128k ucx_rc_tag_bw_1m
	ucx_ud_tag_bw_64k fi_rxm_pingpong_256k mpi_pingpong_1m rds_stream_64k"
# what UCX and Open MPI get on both pairs: ud_verbs without its DGID
# check (rdma_rxe leaves sl 0 in UD completions, where UCX looks for the
# RoCE packet type: it would drop every packet), RDMA READs of at most
# 256 KiB (see the top)
UCX_ENV=(UCX_UD_ETH_DGID_CHECK=n UCX_RC_MAX_GET_ZCOPY=256kb)
# the pair being measured: transport, RDMA devices, their netdevs and
# addresses (set_pair)
T='' D1='' D2='' N1='' N2='' A1='' A2='' NET=''
declare -A MBS

# set_pair TRANSPORT DEV1 DEV2 NETDEV1 NETDEV2 IP1 IP2: the pair the
# bench_* functions measure (device 1 is the client, initiator, host)
set_pair() {
	T=$1 D1=$2 D2=$3 N1=$4 N2=$5 A1=$6 A2=$7 NET=${7%.*}.0/24
}

# row TEST MBS: one measurement of the pair; "-" when MBS is empty
row() {
	MBS[$T,$1]=${2:--}
	echo "CONS-ROW: $T,$1,${2:--}"
}

# timed NAME CMD...: CMD, then how long it took
timed() {
	local t0=$SECONDS
	"$@"
	echo "consumers_guest: $T ${1#bench_} took $((SECONDS - t0)) s"
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

# scsi_backing: a 256 MiB backing file for the LIO targets, written (reads
# see data, not holes, as on NVMe-oF)
scsi_backing() {
	dd if=/dev/zero of="$BACKING" bs=1M count=256 status=none
}

# bench_nvme: NVMe-oF, the target on A2
bench_nvme() {
	local dev
	if ! modprobe -a nvmet nvmet-rdma nvme-rdma ||
		! nvmet_export "$NQN" "$BACKING" 256M "$A2" ||
		! nvme_host_connect "$NQN" "$A2" "$A1"; then
		echo "$T: NVMe-oF setup failed"
		return 1
	fi
	dev=$(nvme_dev "$NQN")
	# write it all once: reads then see data, not holes
	dd if=/dev/zero of="/dev/$dev" bs=1M count=256 oflag=direct status=none
	row nvme_seq_read_128k "$(fio_mbs "$dev" read 128k)"
	row nvme_seq_write_128k "$(fio_mbs "$dev" write 128k)"
	row nvme_rand_read_4k "$(fio_mbs "$dev" randread 4k)"
	nvme_host_disconnect "$NQN" >/dev/null
	nvmet_unexport "$NQN" "$BACKING"
}

# bench_nfs: NFS over RDMA, the server on A2
bench_nfs() {
	local src=$RDMA_TMP/bench.src
	if ! modprobe -a nfsd rpcrdma nfs nfsv3 ||
		! nfs_server_start "$EXPORT" "$NET" ||
		! nfs_mount_rdma "$A2" "$EXPORT" "$MNT"; then
		echo "$T: NFS setup failed"
		return 1
	fi
	head -c $((NFS_MIB << 20)) /dev/urandom >"$src"
	row nfs_write_1m "$(dd_mbs if="$src" of="$MNT/f" oflag=direct conv=fsync)"
	row nfs_read_1m "$(dd_mbs if="$MNT/f" of=/dev/null iflag=direct)"
	rm -f "$src"
	umount "$MNT"
	nfs_server_stop "$EXPORT"
}

# bench_iser: iSER, the LIO target's portal on A2; open-iscsi connects
# from whatever source routes to it (any-src: N1, so D1)
bench_iser() {
	local portal=$A2:3260 dev
	if ! modprobe -a ib_isert ib_iser sd_mod || ! command -v iscsiadm >/dev/null; then
		echo "$T: no iSER here (ib_isert, ib_iser, iscsiadm)"
		return 1
	fi
	scsi_backing
	if ! iser_target_setup "$IQN" "$portal" "$BACKING" 256; then
		echo "$T: iSER target setup failed"
	else
		iscsid_start "$RDMA_TMP/iscsid.log"
		if iser_discovered "$IQN" "$portal" && iser_login "$IQN" "$portal" >/dev/null &&
			wait_for 30 iser_disk; then
			dev=$(iser_disk)
			row iser_seq_read_128k "$(fio_mbs "$dev" read 128k)"
			row iser_seq_write_128k "$(fio_mbs "$dev" write 128k)"
			iser_logout "$IQN" "$portal" >/dev/null
		else
			echo "$T: iSER discovery or login failed"
			tail -n 5 "$RDMA_TMP/iscsid.log"
		fi
		iscsid_stop
	fi
	iser_target_teardown "$IQN" "$portal" "$BACKING"
	modprobe -r ib_isert ib_iser
}

# bench_srp: SRP, ib_srpt on D2 (listening with rdma_cm on CM_PORT), ib_srp
# logging in from D1
bench_srp() {
	local dev
	if ! modprobe -a target_core_mod target_core_file ib_srpt ib_srp sd_mod; then
		echo "$T: no SRP here (ib_srpt, ib_srp)"
		return 1
	fi
	scsi_backing
	# not in a subshell: srp_target_teardown needs the names it sets
	if srp_target_setup "$D2" "$D1" "$BACKING" 256 "$CM_PORT" >"$RDMA_TMP/srp.setup" 2>&1 &&
		wait_for 10 cm_listening "$CM_PORT" &&
		srp_add_target "$D1" "$A2" "$A1" "$CM_PORT" >>"$RDMA_TMP/srp.setup" 2>&1 &&
		wait_for 30 srp_disk; then
		dev=$(srp_disk)
		row srp_seq_read_128k "$(fio_mbs "$dev" read 128k)"
		row srp_seq_write_128k "$(fio_mbs "$dev" write 128k)"
		srp_remove_target >/dev/null || echo "$T: SRP rport not removed"
	else
		echo "$T: SRP setup or login failed:"
		cat "$RDMA_TMP/srp.setup"
	fi
	srp_target_teardown "$BACKING" || echo "$T: SRP target teardown incomplete"
	modprobe -r ib_srp ib_srpt
}

# ucx_mbs TLS LANE SIZE ITERS: ucx_perftest tag_bw of ITERS messages of
# SIZE bytes from D1 to D2 with UCX_TLS=TLS; the client's endpoint must
# run on LANE (UCX's log says); prints the overall bandwidth of its
# "Final:" line.  UCX_ENV on both sides.
ucx_mbs() {
	local tls=$1 lane=$2; shift 2
	local args=(-t tag_bw -s "$1" -n "$2" -w 3)
	if ! srv_cli -p 13337 $((SECS * 12 + 60)) "" "" \
		env "${UCX_ENV[@]}" UCX_TLS="$tls" UCX_NET_DEVICES="$D2:1" \
			ucx_perftest "${args[@]}" -- \
		env "${UCX_ENV[@]}" UCX_TLS="$tls" UCX_NET_DEVICES="$D1:1" \
			UCX_LOG_LEVEL=info ucx_perftest "$A2" "${args[@]}" ||
		! cli_has "tag\\($lane/$D1:1"; then
		echo "$T: ucx_perftest over $lane failed (server rc $SRV_RC, client rc $CLI_RC):" >&2
		tail -n 5 <<<"$CLI_OUT" >&2
		return 1
	fi
	awk '/^Final:/ { print $7; f = 1 } END { exit !f }' <<<"$CLI_OUT"
}

# bench_ucx: UCX between D1 and D2
bench_ucx() {
	row ucx_rc_tag_bw_1m "$(ucx_mbs rc_verbs,ud_verbs rc_verbs 1048576 $((SECS * 30)))"
	row ucx_ud_tag_bw_64k "$(ucx_mbs ud_verbs ud_verbs 65536 $((SECS * 400)))"
}

# bench_fi: libfabric, fi_pingpong over verbs;ofi_rxm, 256 KiB, from N1's
# address to N2's; prints fi_pingpong's MB/sec.  FI_VERBS_IFACE names
# each side's netdev (libfabric.sh says why); FI_UNIVERSE_SIZE=16 keeps
# ofi_rxm's completion queue (sized for that many peers) under rdma_rxe's
# max_cqe of 32767; set for both.
bench_fi() {
	local n=$((SECS * 60)) mbs
	if srv_cli -p 47592 $((SECS * 12 + 60)) "" "" \
		env FI_VERBS_IFACE="$N2" FI_UNIVERSE_SIZE=16 \
			fi_pingpong -p "verbs;ofi_rxm" -e rdm -S 262144 -I "$n" -- \
		env FI_VERBS_IFACE="$N1" FI_UNIVERSE_SIZE=16 \
			fi_pingpong -p "verbs;ofi_rxm" -e rdm -S 262144 -I "$n" "$A2" &&
		mbs=$(awk -v n="$n" '$1 == "256k" && $2 == n && $3 == "=" n { print $6; f = 1 }
			END { exit !f }' <<<"$CLI_OUT"); then
		row fi_rxm_pingpong_256k "$mbs"
	else
		echo "$T: fi_pingpong failed (server rc $SRV_RC, client rc $CLI_RC):"
		tail -n 5 <<<"$CLI_OUT"
		row fi_rxm_pingpong_256k ""
	fi
}

# bench_mpi: Open MPI over UCX (rc_verbs, ud_verbs), rank 0 on D1, rank 1
# on D2 (mpi.sh), eroce_mpi's data check at 2 iterations a size, then its
# bandwidth run of SECS seconds.  On rdma_rxe it fails: UCX's ud_verbs
# endpoint (rc_verbs needs it for the wireup) times out and UCX aborts
# the ranks ("UD endpoint ... unhandled timeout error"), with put_zcopy
# rendezvous too, though ucx_perftest runs over ud_verbs there
bench_mpi() {
	local out mbs tool=$TOOLS/eroce_mpi
	[ -x "$tool" ] || { echo "$T: no $tool (make -C selftests/tools)"; row mpi_pingpong_1m ""; return 1; }
	out=$(timeout -k 5 $((SECS * 3 + 240)) mpirun --allow-run-as-root --oversubscribe \
		--mca pml ucx --mca osc ucx --mca btl self \
		-x UCX_TLS=rc_verbs,ud_verbs -x "${UCX_ENV[0]}" -x "${UCX_ENV[1]}" \
		-np 1 -x UCX_NET_DEVICES="$D1:1" "$tool" 2 "$SECS" : \
		-np 1 -x UCX_NET_DEVICES="$D2:1" "$tool" 2 "$SECS" 2>&1)
	if [ "$(grep -c '^mpi: 44 messages verified, 0 bad' <<<"$out")" = 1 ] &&
		mbs=$(awk '/^mpi: bandwidth / { print $(NF - 1); f = 1 } END { exit !f }' <<<"$out"); then
		row mpi_pingpong_1m "$mbs"
	else
		echo "$T: mpirun or its data check failed:"
		grep -m 4 -E 'Fatal|rror' <<<"$out"
		tail -n 4 <<<"$out"
		row mpi_pingpong_1m ""
	fi
}

# bench_rds: RDS over RDMA from A1 to A2 (it must connect over RDS/IB)
bench_rds() {
	local out mbs n
	modprobe rds_rdma || { echo "$T: no rds_rdma here"; row rds_stream_64k ""; return 1; }
	kmsg_mark
	out=$(timeout -k 5 $((SECS * 3 + 120)) python3 "$TOOLS/eroce_rds.py" --bw "$SECS" "$A1" "$A2" 2>&1)
	n=$(dmesg_since_mark | grep -c 'RDS/IB: Active conn connected')
	if [ "$n" -gt 0 ] &&
		mbs=$(awk '/^rds: bandwidth .* all verified$/ { print $(NF - 3); f = 1 }
			END { exit !f }' <<<"$out"); then
		row rds_stream_64k "$mbs"
	else
		echo "$T: RDS over RDMA failed ($n RDS/IB connections):"
		tail -n 5 <<<"$out"
		row rds_stream_64k ""
	fi
	rmmod rds_rdma rds
}

# bench_all: the consumers of CONS_ONLY on the pair set_pair chose
bench_all() {
	local c
	for c in ${CONS_ONLY:-nvme nfs iser srp ucx fi mpi rds}; do
		timed "bench_$c"
	done
}

if ! eroce_routed_setup any-src || ! provider_install; then
	echo "eroce setup failed"
	exit 1
fi
set_pair eroce eroce1 eroce2 nve1 nve2 198.18.4.1 198.18.4.2
bench_all
rdma link delete eroce1
rdma link delete eroce2
wait_for 30 rdma_dev_gone eroce1
eroce_unload

rxe_pair_setup any-src || { echo "rdma_rxe setup failed"; exit 1; }
set_pair rdma_rxe rxe1 rxe2 vr1 vr2 198.18.1.1 198.18.1.2
bench_all

printf '%-22s %10s %10s %8s\n' test eroce rdma_rxe ratio
for t in $TESTS; do
	printf '%-22s %10s %10s %8s\n' "$t" "${MBS[eroce,$t]:--}" "${MBS[rdma_rxe,$t]:--}" \
		"$(awk -v a="${MBS[eroce,$t]:-0}" -v b="${MBS[rdma_rxe,$t]:-0}" \
			'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }')"
done
echo "consumers_guest: done"
