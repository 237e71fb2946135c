#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# consumers_lab.sh [OUTDIR]: the two-host mode of the consumers bench,
# `make bench-consumers-lab` (Documentation/bench.rst, "Consumers across
# two hosts").  Runs selftests/bench/consumers_lab_guest.sh on the two
# guests of the lab (selftests/run_lab.sh): guest0 the target (nvmet,
# nfsd, LIO), guest1 the initiator (nvme-cli, the NFS client,
# open-iscsi), over eroce, then rdma_rxe, then TCP (NVMe/TCP, NFS over
# TCP, iSCSI over TCP), on the same NICs and bridge; then writes into
# OUTDIR (default out/bench/<timestamp>/consumers-lab; out/bench/latest
# points at its timestamp):
#   lab.log      everything the runner printed (both guests' KTAP)
#   raw.csv      transport,test,mbs,note: one row per measurement
#   facts.csv    guest,transport,name,delta: what each transport's block
#                moved (the RDMA device's counters, UDP errors, NIC drops)
#   info.csv     guest,name,value: the path (NIC driver, MTU, offloads,
#                memory)
#   table.txt    the table (consumers_lab_report.py), also printed
# The CONS_* environment (CONS_SECS, CONS_ONLY, CONS_TRANSPORTS,
# CONS_NFS_MIB, CONS_DISK_MIB) reaches the guests through run_lab.sh's
# --env; CONS_LAB_NIC (default virtio), CONS_LAB_MTU (1500), CONS_LAB_MEM
# (MiB per guest, default 1024) and CONS_LAB_TIMEOUT (seconds, default
# the guest script's "# vm-timeout:") set up the lab.
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
HERE=$ROOT/selftests/bench
STAMP=$(date +%Y%m%d-%H%M%S)
OUT=${1:-$ROOT/out/bench/$STAMP/consumers-lab}
NIC=${CONS_LAB_NIC:-virtio}
MTU=${CONS_LAB_MTU:-1500}
MEM=${CONS_LAB_MEM:-1024}

die() { echo "consumers_lab: $*" >&2; exit 1; }

[ -f "$ROOT/drivers/infiniband/sw/eroce/eroce.ko" ] || die "no eroce.ko (make modules)"
[ -f "$ROOT/userspace/liberoce-rdmav34.so" ] || die "no provider (make provider)"
for t in fio nvme iscsiadm python3 qemu-system-x86_64; do
	command -v "$t" >/dev/null || die "$t missing (make deps)"
done

mkdir -p "$OUT"
[ $# -gt 0 ] || ln -sfn "$STAMP" "$ROOT/out/bench/latest"
args=(--nic "$NIC" --mtu "$MTU" --mem "$MEM")
[ -z "${CONS_LAB_TIMEOUT:-}" ] || args+=(--timeout "$CONS_LAB_TIMEOUT")
while IFS= read -r kv; do
	args+=(--env "$kv")
done < <(env | grep -E '^CONS_[A-Z_]+=' | grep -vE '^CONS_LAB_')

echo "consumers_lab: $NIC, MTU $MTU, $MEM MiB a guest, results in ${OUT#"$ROOT"/}"
rc=0
"$ROOT/selftests/run_lab.sh" "${args[@]}" "$HERE/consumers_lab_guest.sh" 2>&1 |
	tee "$OUT/lab.log" | grep -vE '^[[:space:]]*CONS-(ROW|FACT|INFO): ' || rc=1

# each guest's lines, without the runner's indentation
extract() {
	tr -d '\r' <"$OUT/lab.log" | sed -n "s/^[[:space:]]*CONS-$1: //p"
}
{ echo "transport,test,mbs,note"; extract ROW; } >"$OUT/raw.csv"
{ echo "guest,transport,name,delta"; extract FACT; } >"$OUT/facts.csv"
{ echo "guest,name,value"; extract INFO | sort -u; } >"$OUT/info.csv"
[ "$(wc -l <"$OUT/raw.csv")" -gt 1 ] || die "no rows in the guests' output (see ${OUT#"$ROOT"/}/lab.log)"

python3 "$HERE/consumers_lab_report.py" "$OUT" | tee "$OUT/table.txt" || rc=1
echo "consumers_lab: wrote ${OUT#"$ROOT"/}/{raw.csv,facts.csv,info.csv,table.txt,lab.log}"
exit $rc
