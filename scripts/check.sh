#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh: the whole test suite, what `make check` runs (after `make deps`).
#   build   `make all` (module with W=1, provider), no function of the
#           module with a stack frame over 512 bytes (scripts/
#           stack-frames.sh), the selftest tools and
#           `make deb` (the Debian packages selftests/eroce/packaging.sh
#           installs, without the previous release its upgrade starts
#           from: that is `make check-packaging`; lintian must be
#           clean); any compiler, modpost or
#           packaging warning fails the stage
#   unit    `make unit` (tests/unit, closing "N passed, N failed" line),
#           the provider's ring tests, and tests/doctor: eroce doctor on
#           fake hosts and its path checks in two network namespaces
#   vm      selftests/run_vm.sh selftests/eroce/*.sh (closing line likewise),
#           EROCE_VM_GROUP of them (default 5) per guest, EROCE_VM_JOBS
#           guests (default 2) at once, each with EROCE_VM_CPUS virtual
#           CPUs (default 1; a script may ask for more), packaging.sh
#           first, in a guest of its own
#   lab     selftests/run_lab.sh selftests/lab/*.sh (two guests joined by
#           virtio-net on taps through a bridge; closing line likewise)
# The counts of all stages are summed; the last line of the output is
# "N passed, N failed, N skipped" and the exit status is non-zero on any
# failure.  The VM stage counts the scripts' subtests, a skip among them
# is counted as a skip, never as a pass.
# A stage that cannot run (missing, no summary line) counts as a failure.
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
LOG="$ROOT/out/check"
CHECK_NAME=check
CHECK_TEE=1
# shellcheck source=lib_check.sh
. "$ROOT/scripts/lib_check.sh"

stage_build() {
	local before=$FAILED

	one_step "make all" "$LOG/build.log" make -C "$ROOT" all
	one_step "stack frames" "$LOG/stack.log" "$ROOT/scripts/stack-frames.sh"
	one_step "call graph" "$LOG/callgraph.log" \
		env -C "$ROOT" python3 scripts/callgraph.py --check
	if [ -f "$ROOT/selftests/tools/Makefile" ]; then
		one_step "selftests/tools" "$LOG/tools.log" make -C "$ROOT/selftests/tools"
	fi
	# no previous release: packaging.sh's upgrade is make check-packaging's
	one_step "make deb" "$LOG/deb.log" env EROCE_DEB_NO_UPGRADE=1 make -C "$ROOT" deb
	BUILD_OK=1
	[ "$FAILED" = "$before" ] || BUILD_OK=0
}

stage_unit() {
	local rc=0

	if [ ! -f "$ROOT/tests/unit/Makefile" ]; then
		say "unit: FAILED (tests/unit/Makefile does not exist yet)"
		count 0 1
		return
	fi
	make -s -C "$ROOT" unit 2>&1 | tee "$LOG/unit.log" || rc=$?
	summed unit "$LOG/unit.log" $rc

	# the provider's ring code against a simulated kernel side
	rc=0
	make -s -C "$ROOT/userspace" check 2>&1 | tee "$LOG/rings.log" || rc=$?
	summed rings "$LOG/rings.log" $rc

	# eroce doctor on fake hosts, its path checks in two namespaces
	rc=0
	make -s -C "$ROOT/tests/doctor" check 2>&1 | tee "$LOG/doctor.log" || rc=$?
	summed doctor "$LOG/doctor.log" $rc
}

stage_vm() {
	local rc=0 t tests=()

	# packaging.sh, the longest, first: it has a guest of its own
	# ("vm-guest: own": what it installs stays there), beside which the
	# others' guests run
	[ ! -f "$ROOT/selftests/eroce/packaging.sh" ] ||
		tests+=("$ROOT/selftests/eroce/packaging.sh")
	for t in "$ROOT"/selftests/eroce/*.sh; do
		[ "${t##*/}" = packaging.sh ] || tests+=("$t")
	done

	if [ "$BUILD_OK" != 1 ]; then
		say "vm: FAILED (not run: the build failed, the module may be stale)"
		count 0 1
		return
	fi
	if [ ${#tests[@]} = 0 ]; then
		say "vm: FAILED (no selftests/eroce/*.sh)"
		count 0 1
		return
	fi
	"$ROOT/selftests/run_vm.sh" --group "${EROCE_VM_GROUP:-5}" \
		--jobs "${EROCE_VM_JOBS:-2}" --cpus "${EROCE_VM_CPUS:-1}" \
		--env EROCE_PKG_UPGRADE=0 --env EROCE_PKG_RT=0 \
		"${tests[@]}" 2>&1 |
		tee "$LOG/vm.log" || rc=$?
	summed vm "$LOG/vm.log" $rc
}

# the two-host lab: guests joined through a bridge (selftests/run_lab.sh)
stage_lab() {
	local rc=0

	if [ "$BUILD_OK" != 1 ]; then
		say "lab: FAILED (not run: the build failed, the module may be stale)"
		count 0 1
		return
	fi
	"$ROOT/selftests/run_lab.sh" "$ROOT"/selftests/lab/*.sh 2>&1 |
		tee "$LOG/lab.log" || rc=$?
	summed lab "$LOG/lab.log" $rc
}

# timed TITLE STAGE: run STAGE between two lines that say its time
timed() {
	local start=$SECONDS

	say "$1"
	"$2"
	say "$1: $((SECONDS - start)) s"
}

main() {
	mkdir -p "$LOG"
	say "kernel $(RT=${RT:-} "$ROOT/scripts/kver.sh")"
	timed build stage_build
	timed "unit tests" stage_unit
	timed "VM tests" stage_vm
	timed "two-host lab" stage_lab
	say "all stages: $SECONDS s"
	failures
	echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	[ "$FAILED" = 0 ]
}

main "$@"
