#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh: host-side driver of `make bench`.  Boots one QEMU guest
# (selftests/run_vm.sh) that runs selftests/bench/bench_guest.sh, extracts
# the CSV rows the guest prints ("BENCH-ROW: ..."), and writes under
# out/bench/<timestamp>/ (out/bench/latest points at the newest run):
#   vm.log        everything the runner printed (KTAP, diagnostics)
#   raw.csv       one row per guest run
#   summary.csv   medians per configuration, eroce next to rdma_rxe and TCP
#   table.txt     the table printed at the end
#   scale.txt     output of the QP scale check (eroce_qp_scale)
#   bench.png     plot (only when gnuplot is installed: Debian gnuplot-nox)
# Configuration is the BENCH_* environment of bench_guest.sh (BENCH_QUICK=1
# for a fast subset); it reaches the guest through a generated wrapper
# script, since the guest does not inherit this environment.
# See Documentation/bench.rst.
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
HERE=$ROOT/selftests/bench
OUTROOT=$ROOT/out/bench
STAMP=$(date +%Y%m%d-%H%M%S)
OUT=$OUTROOT/$STAMP

die() { echo "bench: $*" >&2; exit 1; }

[ -f "$ROOT/drivers/infiniband/sw/eroce/eroce.ko" ] || die "no eroce.ko (make modules)"
[ -f "$ROOT/userspace/liberoce-rdmav34.so" ] || die "no provider (make provider)"
for t in ib_write_bw iperf3 python3 qemu-system-x86_64; do
	command -v "$t" >/dev/null || die "$t missing (make deps)"
done
make -s -C "$HERE" >/dev/null || echo "bench: could not build selftests/bench programs; scale check / TCP ping-pong skipped" >&2

mkdir -p "$OUT"
ln -sfn "$STAMP" "$OUTROOT/latest"

# guest time limit: the full bench stays under ~25 min of guest time
if [ "${BENCH_QUICK:-0}" = 1 ]; then VMT=${BENCH_VM_TIMEOUT:-900}; else VMT=${BENCH_VM_TIMEOUT:-2400}; fi

# the wrapper the guest runs: the BENCH_* settings, then the real script
{
	echo "#!/bin/bash"
	echo "# vm-timeout: $VMT"
	env | grep -E '^BENCH_[A-Z_]+=' | while IFS= read -r kv; do
		printf 'export %s=%q\n' "${kv%%=*}" "${kv#*=}"
	done
	echo "exec bash $(printf %q "$HERE/bench_guest.sh")"
} >"$OUT/guest.sh"
chmod +x "$OUT/guest.sh"

echo "bench: results go to ${OUT#"$ROOT"/}"
rc=0
"$ROOT/selftests/run_vm.sh" --show "$OUT/guest.sh" 2>&1 | tee "$OUT/vm.log" || rc=$?

tr -d '\r' <"$OUT/vm.log" | sed -n 's/^[[:space:]]*BENCH-ROW: //p' | awk '!(NR > 1 && /^rep,/)' >"$OUT/raw.csv"
tr -d '\r' <"$OUT/vm.log" | sed -e 's/^[[:space:]]*//' |
	sed -n '/^BENCH-SCALE-BEGIN$/,/^BENCH-SCALE-END$/p' | sed '1d;$d' >"$OUT/scale.txt"
[ -s "$OUT/raw.csv" ] || die "no CSV in the guest output (see ${OUT#"$ROOT"/}/vm.log)"

python3 "$HERE/bench_report.py" "$OUT" | tee "$OUT/table.txt"

if command -v gnuplot >/dev/null; then
	gnuplot -e "outdir='$OUT'" "$HERE/bench.gp" 2>"$OUT/gnuplot.log" &&
		echo "bench: plot ${OUT#"$ROOT"/}/bench.png" ||
		echo "bench: gnuplot failed (see ${OUT#"$ROOT"/}/gnuplot.log)"
else
	echo "bench: gnuplot not installed, no plot (Debian package gnuplot-nox)"
fi
echo "bench: wrote ${OUT#"$ROOT"/}/{raw.csv,summary.csv,table.txt,scale.txt,vm.log}"
exit $rc
