#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 300
#
# ring_fuzz.sh: hostile userspace.  selftests/tools/eroce_ringfuzz (one
# process, eroce1 in ns1 <-> eroce2 in ns2, the IPv4 GIDs) drives uverbs
# with random sequences of valid and invalid verbs (CQs, QPs, SRQs, MRs,
# MWs, AHs; legal and illegal QP transitions; posts with random opcodes,
# SGEs, keys and inline sizes) and rewrites the shared SQ, RQ, SRQ and CQ
# rings behind the provider's back (indices, WQE fields, CQEs, also while
# the kernel consumes them), then checks a sanity transfer on fresh
# objects, for each of three seeds: 1, 2 and 3 (the same in every run,
# so that make check judges the kernel, not the luck of a seed;
# RING_FUZZ_SEEDS="..." chooses others, with run_vm.sh --env, and
# RING_FUZZ_SECS the seconds per seed: 20, 80 on the debug kernel).  Per seed:
#   - fuzz_seed_S: the tool exits 0: its sanity transfer (SENDs, a WRITE
#     and a READ, every byte checked) passed and it saw nothing a correct
#     kernel cannot produce (a completion it never posted on a queue whose
#     ring it left alone, a verb that had to fail and did not, ...); no
#     action hung (its watchdog), and the run ended within its time;
#   - objects_released_seed_S: the devices hold the objects they held
#     before (`rdma resource`), once the process is gone.
# Then a fresh ibv_rc_pingpong -c between the devices passes, and the
# kernel log holds no warning, BUG or Oops (the runner scans it too:
# KASAN, lockdep and kmemleak on the debug kernel).  The tool's
# statistics (iterations, actions per kind, errnos per verb, completions
# per status, async events) and the counters that moved are diagnostics.
# To replay a seed's iteration K by hand: eroce_ringfuzz -s S -i K -n 1 -v.
#
#   ns1: veth1 198.18.0.1 (eroce1) <-> ns2: veth2 198.18.0.2 (eroce2)
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_ringfuzz"
OUT=/tmp/ring_fuzz
mkdir -p "$OUT"
SECS=${RING_FUZZ_SECS:-20}
[ "$DEBUG_KERNEL" = 1 ] && SECS=${RING_FUZZ_SECS:-80}
read -ra SEEDS <<<"${RING_FUZZ_SEEDS:-1 2 3}"

# why RC, the tool's exit status, is a failure, with its telling line
fuzz_failure() {
	local rc=$1 out=$2
	case "$rc" in
	1) grep -m 1 -E '^(impossible|result: [a-z_]+ FAIL)' "$out" ;;
	2) echo "setup: $(tail -n 1 "$out")" ;;
	3) grep -m 1 '^watchdog:' "$out" ;;
	124 | 137) echo "still running after its time and the margin" ;;
	*) echo "exit status $rc" ;;
	esac
}

# fuzz SEED: one run of the tool, its statistics as diagnostics, and its
# two results
fuzz() {
	local seed=$1 rc=0 base out="$OUT/seed$1.out"

	base=$(objects)
	timeout -k 5 $((SECS + $(tmo 120))) "$TOOL" -s "$seed" -t "$SECS" \
		-w "$(tmo 60)" -d "eroce1:$G1" -d "eroce2:$G2" >"$out" 2>&1 ||
		rc=$?
	ktap_diag "$(grep -E '^(stat|result|impossible|watchdog):|^# ' "$out" |
		head -n 120 | sed "s/^# //; s/^/seed $seed: /")"
	ktap_result "fuzz_seed_$seed" "$rc" "$(fuzz_failure "$rc" "$out")"
	if wait_for 10 objects_are "$base"; then
		ktap_ok "objects_released_seed_$seed"
	else
		ktap_fail "objects_released_seed_$seed" \
			"before: $(tr '\n' ' ' <<<"$base"); now: $(objects | tr '\n' ' ')"
	fi
}

ktap_plan $((2 * ${#SEEDS[@]} + 2))
require eroce_pair_setup
require pair_gids
pair_gids
require test -x "$TOOL"
kmsg_mark
stat_snap eroce1/1 "$OUT/eroce1.stat"
stat_snap eroce2/1 "$OUT/eroce2.stat"
for seed in "${SEEDS[@]}"; do
	fuzz "$seed"
done
ktap_diag "eroce1 counters moved: $(stat_changes eroce1/1 "$OUT/eroce1.stat")"
ktap_diag "eroce2 counters moved: $(stat_changes eroce2/1 "$OUT/eroce2.stat")"
n=$(debug_scaled 100)
ktap_check rc_pingpong_after srv_cli 60 "$NS2" "$NS1" \
	ibv_rc_pingpong -d eroce2 -g "$G2" -n "$n" -c -- \
	ibv_rc_pingpong -d eroce1 -g "$G1" -n "$n" -c 198.18.0.2
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops|general protection|KASAN|UBSAN|soft lockup|hung task"'
ktap_finish
