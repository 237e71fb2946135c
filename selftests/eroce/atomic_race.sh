#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 300
# vm-cpus: 2
#
# atomic_race.sh: remote atomics are atomic against the CPUs' atomics on
# the same memory (Documentation/design.rst, "Memory access").  Driver:
# selftests/tools/eroce_atomic_race (one process, RC QP A on eroce1, B's
# MR on eroce2), each "result:" line one subtest:
#   - fetch_add: 20,000 FETCH_ADDs from A into a word of B's MR while a
#     thread adds to the same word with the CPU's atomic instruction:
#     the word holds both counts, and each FETCH_ADD returned the remote
#     adds before it.
#   - cmp_swap: 1,000 increments by COMPARE_SWAP beside the thread's
#     compare-and-swap loop, for at most 60 s: both counts, and at least
#     a tenth of the increments took.
#   - raced: the thread really ran beside the remote atomics (it needs
#     the guest's second CPU).
# With the atomics under one lock of eroce's (read, compute, write) the
# thread's increments that fell between the read and the write were lost.
# The debug kernel runs an eighth of the operations.
# Run: selftests/run_vm.sh selftests/eroce/atomic_race.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_atomic_race"
ADDS=$(debug_scaled 20000)
SWAPS=$(debug_scaled 1000)

ktap_plan 5
require eroce_pair_setup
require pair_gids
pair_gids
require test -x "$TOOL"
ktap_check two_cpus test "$(nproc)" -ge 2
kmsg_mark
ktap_results race 3 timeout -k 5 "$(tmo 200)" "$TOOL" eroce1 "$G1" eroce2 "$G2" \
	"$ADDS" "$SWAPS"
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
