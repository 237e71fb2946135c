#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-debug.sh [TEST.sh...]: the debug-kernel lane, what `make
# check-debug` runs (after `make deps deps-debug`).  Not part of `make
# check` or CI.
#   kernel  selftests/vm/build-debug-kernel.sh: the debug kernel (KASAN,
#           lockdep, kmemleak, UBSAN, debugobjects, fault injection,
#           KUnit), built once and cached outside the tree
#   module  eroce.ko built with W=1 against that kernel, from a copy of
#           the sources in out/debug/eroce (Kbuild writes its objects next
#           to the sources: the tree's own build is left alone), the
#           KUnit module of tests/kunit likewise in out/debug/kunit, and
#           the test modules of selftests/kmod in out/debug/kmod
#   tools   the provider and the selftest programs (`make provider tools`)
#   vm      selftests/run_vm.sh --kernel on selftests/eroce/*.sh but
#           packaging.sh (or the TEST.sh given), tests/kunit/kunit.sh and
#           selftests/debug/*.sh (fault injection),
#           EROCE_VM_GROUP of them (default 6) per guest: a boot and
#           kmemleak's scans cost about two minutes on this kernel.
#           What is missing is a skip here (EROCE_ALLOW_MISSING=1), a
#           failure in make check: the kernel had no iSER, SRP, SMC or
#           RDS until debug.config built them, and the allowance stays
#           until their scripts have passed on it
#   lab     selftests/run_lab.sh --kernel on selftests/lab/ordered_rx.sh:
#           two hosts of two CPUs and two NIC queues each, receiving
#           in order on both (the TEST.sh given under selftests/lab/
#           instead)
# Each build step is one test (a non-zero exit or a warning fails it); the
# vm stage adds its "N passed, N failed, N skipped".  The last line is the
# sum, and the exit status is non-zero on any failure.  Logs in out/check-debug/.
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
LOG="$ROOT/out/check-debug"
SCRATCH="$ROOT/out/debug"
KDIR=
CHECK_NAME=check-debug
# shellcheck source=lib_check.sh
. "$ROOT/scripts/lib_check.sh"

# kernel: the cached debug kernel; KDIR is its cache directory
stage_kernel() {
	local out=$LOG/kernel.out

	local rc=0 start=$SECONDS

	# the kernel's own warnings are not this project's: only the status
	"$ROOT/selftests/vm/build-debug-kernel.sh" >"$out" 2>"$LOG/kernel.log" || rc=$?
	if [ $rc != 0 ]; then
		say "debug kernel: FAILED (exit status $rc, log ${LOG#"$ROOT"/}/kernel.log):"
		grep -E 'error:|Error [0-9]|build-debug-kernel:' "$LOG/kernel.log" |
			tail -n 20 | sed 's/^/#   /'
		count 0 1
		return 1
	fi
	count 1 0
	KDIR=$(tail -n 1 "$out")
	say "debug kernel: ok ($((SECONDS - start)) s)"
	say "debug kernel $(cat "$KDIR/kver") in $KDIR (built in $(cat "$KDIR/build.time") s)"
}

# build_ext DEST SUBDIR SRC...: copy SRC (paths relative to the tree) to
# DEST and build DEST/SUBDIR there as an external module of the debug
# kernel (objects of earlier runs are kept: the build is incremental)
build_ext() {
	local dest=$1 sub=$2; shift 2

	mkdir -p "$dest"
	(cd "$ROOT" && rsync -aR --delete --exclude='*.o' --exclude='*.ko' \
		--exclude='*.mod' --exclude='*.mod.c' --exclude='.*.cmd' \
		--exclude='modules.order' --exclude='Module.symvers' \
		--exclude='build/' "$@" "$dest/") &&
		nice -n 10 make -C "$KDIR/src" M="$dest${sub:+/$sub}" W=1 -j2 modules
}

stage_module() {
	one_step "eroce.ko (debug kernel, W=1)" "$LOG/module.log" \
		build_ext "$SCRATCH/eroce" "" Kbuild drivers include
	if [ -f "$ROOT/tests/kunit/Kbuild" ]; then
		one_step "KUnit module (debug kernel, W=1)" "$LOG/kunit.log" \
			build_ext "$SCRATCH/kunit" tests/kunit tests/kunit \
			tests/unit drivers/infiniband/sw/eroce include
	fi
	# the kernel consumer of lifetimes.sh loads only into its own kernel
	one_step "test modules (debug kernel, W=1)" "$LOG/kmod.log" \
		build_kmod
}

# build_kmod: selftests/kmod against the debug kernel, in out/debug/kmod
build_kmod() {
	build_ext "$SCRATCH/kmod" selftests/kmod selftests/kmod \
		drivers/infiniband/sw/eroce include
}

stage_tools() {
	one_step "provider and selftest tools" "$LOG/tools.log" \
		make -C "$ROOT" provider tools
}

# the lab scripts the lane runs when no TEST.sh is given
LAB_TESTS=(selftests/lab/ordered_rx.sh)

stage_vm() {
	local rc=0 tests=("$@") start=$SECONDS

	[ "$ALL" = 1 ] || [ $# != 0 ] || return 0
	if [ ${#tests[@]} = 0 ]; then
		# packaging.sh installs the DKMS build made for Debian's
		# kernel; on this one DKMS would compile in the guest
		for t in "$ROOT"/selftests/eroce/*.sh; do
			[ "${t##*/}" = packaging.sh ] || tests+=("$t")
		done
		say "vm: packaging.sh left out (its DKMS build is for Debian's kernel)"
		[ -f "$ROOT/tests/kunit/kunit.sh" ] && tests+=("$ROOT/tests/kunit/kunit.sh")
		# the tests that need the debug kernel's instruments
		for t in "$ROOT"/selftests/debug/*.sh; do
			[ -f "$t" ] && tests+=("$t")
		done
	fi
	EROCE_KMOD_DIR="$SCRATCH/kmod/selftests/kmod" \
		"$ROOT/selftests/run_vm.sh" --kernel "$KDIR" \
		--group "${EROCE_VM_GROUP:-6}" \
		--module "$SCRATCH/eroce/drivers/infiniband/sw/eroce/eroce.ko" \
		--env EROCE_ALLOW_MISSING=1 \
		"${tests[@]}" 2>&1 | tee "$LOG/vm.log" || rc=$?
	summed vm "$LOG/vm.log" $rc
	say "vm: $((SECONDS - start)) s"
}

stage_lab() {
	local rc=0 tests=("$@") start=$SECONDS t

	if [ "$ALL" = 1 ]; then
		for t in "${LAB_TESTS[@]}"; do
			tests+=("$ROOT/$t")
		done
	fi
	[ ${#tests[@]} != 0 ] || return 0
	"$ROOT/selftests/run_lab.sh" --kernel "$KDIR" \
		--module "$SCRATCH/eroce/drivers/infiniband/sw/eroce/eroce.ko" \
		--env EROCE_ALLOW_MISSING=1 \
		"${tests[@]}" 2>&1 | tee "$LOG/lab.log" || rc=$?
	summed lab "$LOG/lab.log" $rc
	say "lab: $((SECONDS - start)) s"
}

main() {
	local start=$SECONDS t vm_tests=() lab_tests=()

	# no TEST.sh: every stage whole; else each TEST.sh to its runner
	ALL=$(($# == 0))
	for t in "$@"; do
		case "$(cd "$(dirname "$t")" && pwd -P)" in
		"$ROOT/selftests/lab") lab_tests+=("$t") ;;
		*) vm_tests+=("$t") ;;
		esac
	done

	mkdir -p "$LOG" "$SCRATCH"
	say "debug kernel"
	if stage_kernel; then
		say "modules"
		stage_module
		say "tools"
		stage_tools
		if [ "$FAILED" = 0 ]; then
			say "VM tests on the debug kernel"
			stage_vm ${vm_tests[@]+"${vm_tests[@]}"}
			say "two-host lab on the debug kernel"
			stage_lab ${lab_tests[@]+"${lab_tests[@]}"}
		else
			say "vm, lab: FAILED (not run: a build step failed)"
			count 0 1
		fi
	else
		say "modules, tools, vm: not run (no debug kernel)"
	fi
	say "$((SECONDS - start)) s in all"
	failures
	echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	[ "$FAILED" = 0 ]
}

main "$@"
