#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lab_bench.sh [OUTDIR]: the two-host section of `make bench`
# (Documentation/bench.rst).  For each MTU of BENCH_LAB_MTUS (default
# "1500 9000"; BENCH_QUICK=1: 1500) it runs selftests/bench/
# lab_bench_guest.sh on the two guests of the lab (selftests/run_lab.sh
# --mtu MTU: the guests' NICs, the taps and the bridge all at that MTU),
# then writes into OUTDIR (default out/bench/<timestamp>/lab):
#   lab-MTU.log   everything the runner printed (both guests' KTAP)
#   raw.csv       one row per run (the client's "BENCH-ROW:" lines)
#   facts.csv     what each pair's block moved on each guest (counters)
#   info.csv      the path: NIC driver, offloads, CPU, the ICRC's CRC-32
#   summary.csv   medians per configuration with the ratios
#   table.txt     the table (lab_report.py), also printed
# The BENCH_* environment (BENCH_QUICK, BENCH_REPS, BENCH_QPS, ...; see
# lab_bench_guest.sh) reaches the guests through run_lab.sh's --env;
# BENCH_LAB_NIC picks the NIC (run_lab.sh --nic, default virtio).
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
HERE=$ROOT/selftests/bench
OUT=${1:-$ROOT/out/bench/$(date +%Y%m%d-%H%M%S)/lab}
QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then MTUS=${BENCH_LAB_MTUS:-1500}; else MTUS=${BENCH_LAB_MTUS:-1500 9000}; fi
NIC=${BENCH_LAB_NIC:-virtio}

die() { echo "lab_bench: $*" >&2; exit 1; }

[ -f "$ROOT/drivers/infiniband/sw/eroce/eroce.ko" ] || die "no eroce.ko (make modules)"
[ -f "$ROOT/userspace/liberoce-rdmav34.so" ] || die "no provider (make provider)"
for t in ib_write_bw iperf3 python3 qemu-system-x86_64; do
	command -v "$t" >/dev/null || die "$t missing (make deps)"
done
make -s -C "$HERE" >/dev/null || echo "lab_bench: could not build selftests/bench programs; no TCP latency" >&2

mkdir -p "$OUT"
# the guests' time limit: the budget of their measurements plus setup
if [ "$QUICK" = 1 ]; then budget=${BENCH_BUDGET:-600}; else budget=${BENCH_BUDGET:-1800}; fi
vmt=$((budget + 600))
envs=()
while IFS= read -r kv; do
	envs+=(--env "$kv")
done < <(env | grep -E '^BENCH_[A-Z_]+=' | grep -vE '^BENCH_(LAB_MTUS|LAB_NIC|SECTIONS)=')

rc=0
for mtu in $MTUS; do
	echo "lab_bench: MTU $mtu, $NIC, results in ${OUT#"$ROOT"/}"
	"$ROOT/selftests/run_lab.sh" --nic "$NIC" --mtu "$mtu" --timeout "$vmt" \
		${envs[@]+"${envs[@]}"} "$HERE/lab_bench_guest.sh" 2>&1 |
		tee "$OUT/lab-$mtu.log" | grep -vE '^[[:space:]]*BENCH-(ROW|FACT|INFO): ' || rc=1
done

# each guest's lines, without the runner's indentation; one header
extract() {
	cat "$OUT"/lab-*.log | tr -d '\r' | sed -n "s/^[[:space:]]*BENCH-$1: //p"
}
extract ROW | awk '!(NR > 1 && /^rep,/)' >"$OUT/raw.csv"
{ echo "mtu,rep,guest,pair,name,delta"; extract FACT; } >"$OUT/facts.csv"
{ echo "guest,name,value"; extract INFO | sort -u; } >"$OUT/info.csv"
[ "$(wc -l <"$OUT/raw.csv")" -gt 1 ] || die "no rows in the guests' output (see ${OUT#"$ROOT"/}/lab-*.log)"

python3 "$HERE/lab_report.py" "$OUT" | tee "$OUT/table.txt" || rc=1
echo "lab_bench: wrote ${OUT#"$ROOT"/}/{raw.csv,facts.csv,info.csv,summary.csv,table.txt,lab-*.log}"
exit $rc
