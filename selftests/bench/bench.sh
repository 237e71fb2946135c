#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh: host-side driver of `make bench` (Documentation/bench.rst).
# Runs the sections of BENCH_SECTIONS (default "lab local"), in that
# order, into out/bench/<timestamp>/ (out/bench/latest points at the
# newest run), and writes table.txt there: each section's table, one
# after the other.
#   lab     the two-host bench: selftests/bench/lab_bench.sh into lab/
#           (two guests joined by emulated NICs through a bridge)
#   local   the same-host bench into local/: one QEMU guest
#           (selftests/run_vm.sh) running selftests/bench/bench_guest.sh;
#           from the CSV rows the guest prints ("BENCH-ROW: ...") it
#           writes
#     vm.log        everything the runner printed (KTAP, diagnostics)
#     raw.csv       one row per guest run
#     summary.csv   medians per configuration, eroce next to rdma_rxe and TCP
#     table.txt     the section's table
#     scale.txt     output of the QP scale check (eroce_qp_scale)
#     bench.png     plot (only when gnuplot is installed: Debian gnuplot-nox)
# Configuration is the BENCH_* environment of lab_bench_guest.sh and
# bench_guest.sh (BENCH_QUICK=1 for a fast subset of both); it reaches the
# same-host guest through a generated wrapper script, since the guest
# does not inherit this environment.
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
HERE=$ROOT/selftests/bench
OUTROOT=$ROOT/out/bench
STAMP=$(date +%Y%m%d-%H%M%S)
TOP=$OUTROOT/$STAMP
SECTIONS=${BENCH_SECTIONS:-lab local}

die() { echo "bench: $*" >&2; exit 1; }

[ -f "$ROOT/drivers/infiniband/sw/eroce/eroce.ko" ] || die "no eroce.ko (make modules)"
[ -f "$ROOT/userspace/liberoce-rdmav34.so" ] || die "no provider (make provider)"
for t in ib_write_bw iperf3 python3 qemu-system-x86_64; do
	command -v "$t" >/dev/null || die "$t missing (make deps)"
done
for s in $SECTIONS; do
	case "$s" in
	lab|local) ;;
	*) die "unknown section '$s' in BENCH_SECTIONS (lab, local)" ;;
	esac
done

# local_section: the same-host bench into $TOP/local
local_section() {
	local OUT=$TOP/local rc=0

	mkdir -p "$OUT"
	make -s -C "$HERE" >/dev/null || echo "bench: could not build selftests/bench programs; scale check / TCP ping-pong skipped" >&2

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

	echo "bench: same-host section, results in ${OUT#"$ROOT"/}"
	"$ROOT/selftests/run_vm.sh" --show "$OUT/guest.sh" 2>&1 | tee "$OUT/vm.log" || rc=$?

	tr -d '\r' <"$OUT/vm.log" | sed -n 's/^[[:space:]]*BENCH-ROW: //p' | awk '!(NR > 1 && /^rep,/)' >"$OUT/raw.csv"
	tr -d '\r' <"$OUT/vm.log" | sed -e 's/^[[:space:]]*//' |
		sed -n '/^BENCH-SCALE-BEGIN$/,/^BENCH-SCALE-END$/p' | sed '1d;$d' >"$OUT/scale.txt"
	[ -s "$OUT/raw.csv" ] || { echo "bench: no CSV in the guest output (see ${OUT#"$ROOT"/}/vm.log)" >&2; return 1; }

	python3 "$HERE/bench_report.py" "$OUT" | tee "$OUT/table.txt"

	if command -v gnuplot >/dev/null; then
		gnuplot -e "outdir='$OUT'" "$HERE/bench.gp" 2>"$OUT/gnuplot.log" &&
			echo "bench: plot ${OUT#"$ROOT"/}/bench.png" ||
			echo "bench: gnuplot failed (see ${OUT#"$ROOT"/}/gnuplot.log)"
	else
		echo "bench: gnuplot not installed, no plot (Debian package gnuplot-nox)"
	fi
	echo "bench: wrote ${OUT#"$ROOT"/}/{raw.csv,summary.csv,table.txt,scale.txt,vm.log}"
	return $rc
}

rc=0
mkdir -p "$TOP"
ln -sfn "$STAMP" "$OUTROOT/latest"
: >"$TOP/table.txt"
for s in $SECTIONS; do
	case "$s" in
	lab)
		"$HERE/lab_bench.sh" "$TOP/lab" || rc=1
		t=$TOP/lab/table.txt
		title="two hosts (selftests/bench/lab_bench.sh)"
		;;
	local)
		local_section || rc=1
		t=$TOP/local/table.txt
		title="one host (selftests/bench/bench_guest.sh)"
		;;
	esac
	{
		echo "######## $title"
		cat "$t" 2>/dev/null || echo "(no table: see the section's logs)"
		echo
	} >>"$TOP/table.txt"
done
echo "bench: sections '$SECTIONS', tables in ${TOP#"$ROOT"/}/table.txt"
exit $rc
