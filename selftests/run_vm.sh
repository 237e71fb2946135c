#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run_vm.sh [--show] [--timeout SECS] [--group N] [--jobs N] [--cpus N] [--kver KVER]
#           [--kernel DIR [--module KO]] [--env NAME=VALUE]... TEST.sh...
#
# Runs each test script in its own QEMU guest (TCG, no network device) that
# boots the Debian kernel installed on this machine and sees the host root
# read-only under a writable tmpfs overlay, the project at the same path.
# The verdict comes back through a writable 9p share (files written by
# selftests/vm/guest-init.sh), never from the console: a test passes when
# it exited 0 and the kernel log it produced has no splat (the guest's
# kernel log holds 16 MiB, log_buf_len: the log of a chatty script is not
# overwritten before it is read).  The guest runs with mitigations=off (CPU-bug mitigations only slow TCG down).  Output is KTAP,
# each script's own KTAP nested as a subtest; the last line is
# "N passed, N failed, N skipped", counting the scripts' subtests (a script
# whose verdict failed where none of its subtests did counts one failure,
# one without a closing count line one subtest).  Guest logs of failed
# tests stay in out/vm/runs/.
# A script may ask for a longer test timeout than the default 300 s with a
# "# vm-timeout: SECS" line among its first 20 lines; --timeout overrides.
# --group N (or EROCE_VM_GROUP=N) runs up to N scripts, in the order given,
# in one guest instead: guest-init.sh resets the guest between them
# (processes, namespaces, devices, modules, rules, sysctls), and a script
# that leaves something it cannot undo fails.  A guest that dies takes the
# rest of its group with it: those scripts fail as "not run".
# --jobs N (or EROCE_VM_JOBS=N) runs up to N guests at once (default 1;
# not with --show); the results are printed in the order of the scripts
# all the same, each guest's once it and those before it have ended.
# --cpus N (or EROCE_VM_CPUS=N) gives each guest N virtual CPUs (default
# 2); a script that needs more says so with a "# vm-cpus: N" line among
# its first 20 lines, and its guest gets the most any of its scripts asks.
# With --jobs, such a script gets a guest of its own that runs alone.
# A script whose guest no other script may share (it leaves what it
# installed there) says "# vm-guest: own": it is never grouped.
#
# --kernel DIR (or EROCE_VM_KERNEL=DIR) boots instead the debug kernel that
# selftests/vm/build-debug-kernel.sh built in DIR, with its own modules, and
# the eroce.ko built against it (--module KO or EROCE_VM_MODULE, default
# out/debug/eroce/.../eroce.ko, see scripts/check-debug.sh).  Then the
# kernel command line has acpi=noirq (see run_qemu) and panic_on_warn=1
# (a WARN, KASAN or UBSAN report ends the guest, and the test fails), the
# guest runs kmemleak around each test, every bug report found is copied
# whole into the KTAP diagnostics, and the test timeouts and the boot margin are multiplied by
# EROCE_VM_TIMEOUT_MULT (default 3: KASAN and lockdep slow TCG down); the
# test sees EROCE_DEBUG_KERNEL=1 and EROCE_TIMEOUT_MULT, and
# EROCE_KMOD_DIR when it is set (where the test modules of selftests/kmod
# built against that kernel are).
#
# --kver KVER (or KVER=, as `make check KVER=...` passes it) boots another
# installed Debian kernel, such as the PREEMPT_RT flavour; eroce.ko and
# the test modules must have been built for it (scripts/kver.sh says
# which kernel is the default).
#
# --env NAME=VALUE (repeatable) sets NAME in the tests' environment (the
# host's environment does not reach the guest), such as
# EROCE_SOAK_MINUTES for selftests/soak/soak.sh.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
VMDIR="$ROOT/selftests/vm"
OUT="$ROOT/out/vm"
# seconds on top of the test timeout for boot, log scan and poweroff
BOOT_MARGIN=${EROCE_VM_BOOT_MARGIN:-120}
# seconds for a guest to start its first test; a guest that has not is
# stopped and booted again, once (a boot that hangs is no test's verdict)
BOOT_LIMIT=${EROCE_VM_BOOT_LIMIT:-120}
# kernel messages worth showing when the guest died without a verdict
SPLAT='WARNING:|BUG:|kernel BUG|Oops|panic|general protection|Call Trace|UBSAN:'

SHOW=0
GUEST_ENV=()
TIMEOUT=300
TIMEOUT_SET=0
T=300			# timeout of the guest being run (its tests' sum)
GROUP=${EROCE_VM_GROUP:-1}
CPUS=${EROCE_VM_CPUS:-2}
GUEST_CPUS=2		# virtual CPUs of the guest being run
JOBS=${EROCE_VM_JOBS:-1}
KVER=${KVER:-}
KERNEL_DIR=${EROCE_VM_KERNEL:-}
MODULE=${EROCE_VM_MODULE:-}
DEBUG=0
MULT=1
PASSED=0
FAILED=0
SKIPPED=0

usage() {
	echo "usage: $0 [--show] [--timeout SECS] [--group N] [--jobs N] [--cpus N] [--kver KVER] [--kernel DIR [--module KO]] [--env NAME=VALUE]... TEST.sh..." >&2
	exit 2
}

parse_args() {
	while [ $# -gt 0 ]; do
		case "$1" in
		--show) SHOW=1 ;;
		--timeout) [ $# -ge 2 ] || usage; TIMEOUT=$2; TIMEOUT_SET=1; shift ;;
		--group) [ $# -ge 2 ] || usage; GROUP=$2; shift ;;
		--jobs) [ $# -ge 2 ] || usage; JOBS=$2; shift ;;
		--cpus) [ $# -ge 2 ] || usage; CPUS=$2; shift ;;
		--kver) [ $# -ge 2 ] || usage; KVER=$2; shift ;;
		--kernel) [ $# -ge 2 ] || usage; KERNEL_DIR=$2; shift ;;
		--module) [ $# -ge 2 ] || usage; MODULE=$2; MODULE_ARG=1; shift ;;
		--env)
			[ $# -ge 2 ] && [[ "$2" =~ ^[A-Z_][A-Z0-9_]*= ]] || usage
			GUEST_ENV+=("$2"); shift ;;
		-h|--help) usage ;;
		--) shift; break ;;
		-*) usage ;;
		*) break ;;
		esac
		shift
	done
	[ $# -gt 0 ] || usage
	case "$TIMEOUT" in ''|*[!0-9]*) usage ;; esac
	case "$GROUP" in ''|*[!0-9]*|0) usage ;; esac
	case "$JOBS" in ''|*[!0-9]*|0) usage ;; esac
	case "$CPUS" in ''|*[!0-9]*|0) usage ;; esac
	# live output of several guests at once would interleave
	[ $SHOW = 0 ] || JOBS=1
	TESTS=("$@")
	if [ -n "${MODULE_ARG:-}" ] && [ -z "$KERNEL_DIR" ]; then
		echo "run_vm: --module goes with --kernel (the distribution kernel loads the tree's eroce.ko)" >&2
		exit 2
	fi
	if [ -n "$KERNEL_DIR" ]; then
		debug_kernel
		return
	fi
	[ -n "$KVER" ] || KVER=$("$ROOT/scripts/kver.sh")
}

# debug_kernel: boot the kernel built in KERNEL_DIR, in debug mode
debug_kernel() {
	KERNEL_DIR=$(cd "$KERNEL_DIR" 2>/dev/null && pwd -P) ||
		{ echo "run_vm: no kernel directory $KERNEL_DIR" >&2; exit 1; }
	[ -f "$KERNEL_DIR/done" ] && [ -s "$KERNEL_DIR/bzImage" ] ||
		{ echo "run_vm: $KERNEL_DIR: no built kernel (selftests/vm/build-debug-kernel.sh)" >&2; exit 1; }
	KVER=$(cat "$KERNEL_DIR/kver")
	MODROOT=$KERNEL_DIR/modules/lib/modules
	[ -n "$MODULE" ] || MODULE=$ROOT/out/debug/eroce/drivers/infiniband/sw/eroce/eroce.ko
	MODULE=$(readlink -f "$MODULE")
	[ -f "$MODULE" ] ||
		{ echo "run_vm: no $MODULE (eroce.ko for $KVER: scripts/check-debug.sh)" >&2; exit 1; }
	case "$(modinfo -F vermagic "$MODULE" 2>/dev/null)" in
	"$KVER "*) ;;
	*) echo "run_vm: $MODULE is not built for $KVER" >&2; exit 1 ;;
	esac
	DEBUG=1
	MULT=${EROCE_VM_TIMEOUT_MULT:-3}
	case "$MULT" in ''|*[!0-9]*|0) usage ;; esac
	BOOT_MARGIN=$((BOOT_MARGIN * MULT))
	BOOT_LIMIT=$((BOOT_LIMIT * MULT))
}

check_host() {
	local t
	for t in qemu-system-x86_64 timeout cpio gzip; do
		command -v "$t" >/dev/null || { echo "run_vm: $t missing (make deps)" >&2; exit 1; }
	done
	[ $DEBUG = 0 ] || return 0
	[ -r "/boot/vmlinuz-$KVER" ] || { echo "run_vm: no /boot/vmlinuz-$KVER" >&2; exit 1; }
	[ -d "/lib/modules/$KVER/kernel" ] || { echo "run_vm: no /lib/modules/$KVER" >&2; exit 1; }
}

# prepare_images: cached vmlinux (PVH-bootable) and initramfs in out/vm;
# the debug kernel boots from its bzImage (build-debug-kernel.sh says why)
prepare_images() {
	mkdir -p "$OUT/runs"
	find "$OUT/runs" -mindepth 1 -maxdepth 1 -mtime +2 -exec rm -rf {} + 2>/dev/null || true
	INITRD="$OUT/initramfs-$KVER.cpio.gz"
	if [ $DEBUG = 1 ]; then
		VMLINUX=$KERNEL_DIR/bzImage
		"$VMDIR/mkinitramfs.sh" "$KVER" "$INITRD" "$MODROOT"
		return
	fi
	VMLINUX="$OUT/vmlinux-$KVER"
	if [ ! -s "$VMLINUX" ] || [ "/boot/vmlinuz-$KVER" -nt "$VMLINUX" ]; then
		"$VMDIR/extract-vmlinux.sh" "/boot/vmlinuz-$KVER" "$VMLINUX.$$"
		mv "$VMLINUX.$$" "$VMLINUX"
	fi
	"$VMDIR/mkinitramfs.sh" "$KVER" "$INITRD"
}

# shell-quote for the params file (sourced by busybox sh and bash)
squote() {
	printf "'%s'" "$(printf %s "$1" | sed "s/'/'\\\\''/g")"
}

# write_params DIR TEST...: the guest's parameters (guest-init.sh)
write_params() {
	local dir=$1 n=0 t; shift
	{
		echo "EROCE_ROOT=$(squote "$ROOT")"
		echo "EROCE_NTESTS=$#"
		for t in "$@"; do
			n=$((n + 1))
			echo "EROCE_TEST_$n=$(squote "$t")"
			echo "EROCE_TIMEOUT_$n=$(test_timeout "$t")"
		done
		echo "EROCE_SHOW=$SHOW"
		for t in "${GUEST_ENV[@]}"; do
			echo "export ${t%%=*}=$(squote "${t#*=}")"
		done
		if [ $DEBUG = 1 ]; then
			echo "EROCE_DEBUG_KERNEL=1"
			echo "EROCE_TIMEOUT_MULT=$MULT"
			echo "EROCE_VM_MODDIR=$(squote "$MODROOT/$KVER")"
			echo "EROCE_VM_MODULE=$(squote "$MODULE")"
			if [ -n "${EROCE_KMOD_DIR:-}" ]; then
				echo "EROCE_KMOD_DIR=$(squote "$EROCE_KMOD_DIR")"
			fi
		fi
	} >"$dir/params"
}

# run_qemu DIR: boot the guest for the test in DIR; returns QEMU's status
run_qemu() {
	local dir=$1 limit=$((T + BOOT_MARGIN)) show=()
	local p9="security_model=none,multidevs=remap" debug=

	[ $SHOW = 1 ] && show=(-serial "file:$dir/stream.log")
	# acpi=noirq: under KASAN and lockdep the AML of QEMU's PCI interrupt
	# routing (_PRT) runs past ACPICA's loop timeout and virtio-pci gets
	# no interrupt; the BIOS's PIRQ table routes them instead
	[ $DEBUG = 1 ] && debug=" panic_on_warn=1 acpi=noirq"
	timeout -k 5 "$limit" qemu-system-x86_64 \
		-accel tcg -cpu qemu64 -smp "$GUEST_CPUS" -m 2G \
		-nodefaults -no-user-config -nic none -display none -no-reboot \
		-serial "file:$dir/console.log" "${show[@]}" \
		-pidfile "$dir/qemu.pid" \
		-kernel "$VMLINUX" -initrd "$INITRD" \
		-append "console=ttyS0 panic=-1 quiet rdinit=/init tsc=reliable no_timer_check mitigations=off i8042.noaux i8042.nokbd log_buf_len=16M$debug" \
		-fsdev "local,id=hostroot,path=/,readonly=on,$p9" \
		-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
		-fsdev "local,id=result,path=$dir,$p9" \
		-device virtio-9p-pci,fsdev=result,mount_tag=result \
		</dev/null >"$dir/qemu.log" 2>&1
}

# start_guest DIR: QEMU for the guest in DIR in the background (QPID),
# in --show mode its test output streamed live (STREAM_PID)
start_guest() {
	local dir=$1

	rm -f "$dir/qemu.pid"
	run_qemu "$dir" &
	QPID=$!
	STREAM_PID=
	if [ $SHOW = 1 ]; then
		: >"$dir/stream.log"
		tail -n +1 -F -s 0.2 --pid=$QPID "$dir/stream.log" 2>/dev/null |
			indent &
		STREAM_PID=$!
	fi
}

# booted DIR: wait until the guest in DIR starts its first test (or ends);
# false if BOOT_LIMIT passed first, QEMU then stopped
booted() {
	local dir=$1 start=$SECONDS

	while [ ! -e "$dir/1/test" ] && kill -0 $QPID 2>/dev/null; do
		if [ $((SECONDS - start)) -ge "$BOOT_LIMIT" ]; then
			kill "$(cat "$dir/qemu.pid" 2>/dev/null)" 2>/dev/null ||
				kill $QPID
			wait $QPID || true
			[ -z "$STREAM_PID" ] || wait $STREAM_PID || true
			return 1
		fi
		sleep 1
	done
}

# run_guest DIR: run the guest for DIR; one that does not start its first
# test within BOOT_LIMIT is booted once more, its console kept as
# console.first-boot.log and the fact noted in DIR/reboot
run_guest() {
	local dir=$1 rc=0

	start_guest "$dir"
	if ! booted "$dir"; then
		mv "$dir/console.log" "$dir/console.first-boot.log"
		rm -rf "$dir"/[0-9]*
		echo "the guest had not started its first test after ${BOOT_LIMIT}s (its console: ${dir#"$ROOT"/}/console.first-boot.log); booted a new one" >"$dir/reboot"
		start_guest "$dir"
	fi
	wait $QPID || rc=$?
	[ -z "$STREAM_PID" ] || wait $STREAM_PID || true
	return $rc
}

indent() {
	sed -u 's/^/    /'
}

# guest_death DIR QEMU_RC: why the guest in DIR ended without a verdict
guest_death() {
	local dir=$1 qrc=$2 first

	if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
		echo "QEMU killed: wall-clock limit $((T + BOOT_MARGIN))s exceeded"
	elif [ -s "$dir/initramfs-error" ]; then
		echo "guest init failed: $(head -n 1 "$dir/initramfs-error")"
	elif first=$(awk -f "$VMDIR/reports.awk" "$dir/console.log" 2>/dev/null |
		head -n 1 | sed 's/^\[[ 0-9.]*\] //') && [ -n "$first" ]; then
		echo "guest died after a kernel report: $first"
	else
		echo "no verdict from the guest (QEMU exit $qrc; crash or panic?)"
	fi
}

# verdict DIR N QEMU_RC: the reason test N of the guest in DIR failed;
# empty when it passed.  Without its rc, the test that was running when
# the guest ended (output, no time), or each of them if none had started,
# gets the guest's end; those before it lost their kmemleak verdict, those
# after it never ran.
verdict() {
	local dir=$1 td=$1/$2 qrc=$3 rc running

	if [ ! -f "$td/rc" ]; then
		running=$(running_test "$dir")
		if [ -f "$td/time" ]; then
			echo "no kmemleak verdict: the guest ended during ${running:-its checks}"
		elif [ -f "$td/output" ] || [ -z "$running" ]; then
			guest_death "$dir" "$qrc"
		else
			echo "not run: the guest ended during $running"
		fi
		return
	fi
	rc=$(cat "$td/rc")
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "test timed out after $(cat "$td/time" 2>/dev/null)s"
	elif [ "$rc" != 0 ]; then
		echo "exit status $rc"
	elif [ -s "$td/dmesg.bad" ]; then
		echo "kernel log: $(head -n 1 "$td/dmesg.bad")"
	fi
}

# running_test DIR: the name of the test the guest in DIR was running
running_test() {
	local td

	for td in "$1"/[0-9]*; do
		[ -f "$td/output" ] && [ ! -f "$td/time" ] || continue
		test_name "$(cat "$td/test" 2>/dev/null)"
		return
	done
}

# diagnostics DIR N: kernel splats of test N and, if the guest ended
# during it, the console tail
diagnostics() {
	local dir=$1 td=$1/$2
	if [ -s "$td/dmesg.bad" ]; then
		sed 's/^/# dmesg: /' "$td/dmesg.bad" | head -n 40
	fi
	# the debug kernel's reports, whole (kmemleak's among them)
	if [ $DEBUG = 1 ] && [ -s "$td/reports" ]; then
		sed 's/^/# report: /' "$td/reports" | head -n 300
	fi
	if [ ! -f "$td/rc" ] && [ ! -f "$td/time" ] &&
	   { [ -f "$td/output" ] || [ -z "$(running_test "$dir")" ]; }; then
		grep -E "$SPLAT" "$dir/console.log" 2>/dev/null | head -n 20 |
			sed 's/^/# console splat: /'
		[ $DEBUG = 0 ] ||
			awk -f "$VMDIR/reports.awk" "$dir/console.log" 2>/dev/null |
			head -n 300 | sed 's/^/# console report: /'
		tail -n 40 "$dir/console.log" 2>/dev/null | sed 's/^/# console: /'
		tail -n 5 "$dir/qemu.log" 2>/dev/null | sed 's/^/# qemu: /'
	fi
	echo "# logs: ${td#"$ROOT"/}"
}

# subtests OUTPUT: SUB_P, SUB_F and SUB_S from the closing "# N passed,
# N failed, N skipped" line of a script's KTAP (selftests/lib.sh
# ktap_finish); without one, SUB_P is -1
subtests() {
	local line

	SUB_P=-1 SUB_F=0 SUB_S=0
	line=$(grep -E '^# [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$1" 2>/dev/null |
		tail -n 1)
	[ -n "$line" ] || return 0
	read -r _ SUB_P _ SUB_F _ SUB_S _ <<<"${line//,/}"
}

test_name() {
	local t=${1#"$ROOT"/}
	t=${t#selftests/}
	echo "${t%.sh}"
}

# vm_header TEST NAME VALUE: the script's "# vm-NAME: VALUE" line among
# its first 20 lines, VALUE a sed pattern; prints the value found, if any
vm_header() {
	sed -n "1,20s/^# vm-$2: *\($3\) *\$/\1/p" "$1" | head -n 1
}

# test_timeout TEST: the script's "# vm-timeout: SECS", else the default
test_timeout() {
	local t=''
	[ "$TIMEOUT_SET" = 1 ] || t=$(vm_header "$1" timeout '[0-9][0-9]*')
	# the multiplier of the debug kernel applies to all but --timeout
	[ "$TIMEOUT_SET" = 1 ] || t=$(( ${t:-$TIMEOUT} * MULT ))
	echo "${t:-$TIMEOUT}"
}

# test_cpus TEST: the script's "# vm-cpus: N", else the default
test_cpus() {
	local c
	c=$(vm_header "$1" cpus '[0-9][0-9]*')
	echo "${c:-$CPUS}"
}

# more_cpus TEST: the script asks for more virtual CPUs than --cpus
more_cpus() {
	[ "$(test_cpus "$1")" -gt "$CPUS" ]
}

# own_guest TEST: the script asks for a guest of its own ("# vm-guest: own")
own_guest() {
	[ -n "$(vm_header "$1" guest own)" ]
}

# run_group N TEST...: one guest for the tests, numbered from N; a KTAP
# subtest and a result line for each
run_group() {
	local n=$1 dir qrc=0 reason start i=0 t name bad=0 secs c; shift

	T=0
	GUEST_CPUS=$CPUS
	for t in "$@"; do
		T=$((T + $(test_timeout "$t")))
		c=$(test_cpus "$t")
		[ "$c" -le "$GUEST_CPUS" ] || GUEST_CPUS=$c
	done
	name=$(test_name "$1")
	[ $# = 1 ] || name+="+$(($# - 1))"
	dir=$(mktemp -d "$OUT/runs/$(echo "$name" | tr / _).XXXXXX")
	write_params "$dir" "$@"
	start=$SECONDS
	run_guest "$dir" || qrc=$?
	for t in "$@"; do
		i=$((i + 1))
		name=$(test_name "$t")
		echo "    # Subtest: $name"
		[ $i != 1 ] || [ ! -s "$dir/reboot" ] || sed 's/^/    # /' "$dir/reboot"
		[ $SHOW = 1 ] || [ ! -f "$dir/$i/output" ] || indent <"$dir/$i/output"
		reason=$(verdict "$dir" $i "$qrc")
		secs=$(cat "$dir/$i/time" 2>/dev/null) || secs="?"
		# one guest: its whole time (boot and checks) on its first line
		if [ $# = 1 ]; then
			echo "# $name: $((SECONDS - start)) s"
		elif [ $i = 1 ]; then
			echo "# $name: $secs s (guest of $# tests: $((SECONDS - start)) s)"
		else
			echo "# $name: $secs s"
		fi
		# the debug guest's own timings and kmemleak's count, pass or fail
		[ $DEBUG = 0 ] || [ $i != $# ] || [ ! -s "$dir/debug-setup" ] ||
			sed 's/^/# debug: /' "$dir/debug-setup"
		subtests "$dir/$i/output"
		# no count of its own: the script is one subtest
		if [ "$SUB_P" = -1 ]; then
			SUB_P=0
			[ -n "$reason" ] || SUB_P=1
		fi
		if [ -z "$reason" ] && [ "$SUB_F" != 0 ]; then
			reason="$SUB_F subtests failed, exit status 0"
		fi
		if [ -z "$reason" ] && [ "$SUB_P" = 0 ] && [ "$SUB_S" != 0 ]; then
			echo "ok $((n + i - 1)) $name # SKIP every subtest skipped"
		elif [ -z "$reason" ]; then
			echo "ok $((n + i - 1)) $name"
		else
			diagnostics "$dir" $i
			echo "not ok $((n + i - 1)) $name # $reason"
			# the script's verdict failed where no subtest did
			[ "$SUB_F" != 0 ] || SUB_F=1
			bad=1
		fi
		PASSED=$((PASSED + SUB_P))
		FAILED=$((FAILED + SUB_F))
		SKIPPED=$((SKIPPED + SUB_S))
	done
	[ $bad = 1 ] || [ -s "$dir/reboot" ] || rm -rf "$dir"
}

# The guests that run at once (--jobs): each group's KTAP and counts go
# to files under JOBDIR, named by its first test's number; flush prints
# them in order, as far as the groups before have ended.
JOBDIR=
PENDING=()	# first test numbers of the groups started, not yet printed
SLOTS=()	# "PID SLOTS" of each group running in the background

# slots_used: the job slots of the groups still running
slots_used() {
	local e used=0 running

	running=" $(jobs -pr | tr '\n' ' ') "
	for e in "${SLOTS[@]}"; do
		[[ "$running" != *" ${e% *} "* ]] || used=$((used + ${e#* }))
	done
	echo "$used"
}

# start_group N TEST...: run_group in the background.  A guest with more
# virtual CPUs than --cpus (a script's "vm-cpus") takes every job slot:
# it runs alone, as its timing needs the CPUs it asked for
start_group() {
	local n=$1 t need=1

	for t in "${@:2}"; do
		! more_cpus "$t" || need=$JOBS
	done
	while [ $(($(slots_used) + need)) -gt "$JOBS" ]; do
		wait -n || true
		flush
	done
	# shellcheck disable=SC2030  # the group's own counts, in a file
	(
		PASSED=0 FAILED=0 SKIPPED=0
		run_group "$@" >"$JOBDIR/$n.ktap" 2>&1
		echo "$PASSED $FAILED $SKIPPED" >"$JOBDIR/$n.counts.tmp"
		mv "$JOBDIR/$n.counts.tmp" "$JOBDIR/$n.counts"
	) &
	PENDING+=("$n")
	SLOTS+=("$! $need")
}

# flush: print the groups that ended, in order, up to the first still
# running; a group whose subshell died without counts is one failure
# shellcheck disable=SC2031  # the parent's counts, not the groups'
flush() {
	local n p f s

	while [ ${#PENDING[@]} != 0 ]; do
		n=${PENDING[0]}
		if [ ! -f "$JOBDIR/$n.counts" ]; then
			[ "${1:-}" = all ] || return 0
			cat "$JOBDIR/$n.ktap" 2>/dev/null
			echo "not ok $n (group from test $n) # its runner ended without a result"
			FAILED=$((FAILED + 1))
		else
			cat "$JOBDIR/$n.ktap"
			read -r p f s <"$JOBDIR/$n.counts"
			PASSED=$((PASSED + p))
			FAILED=$((FAILED + f))
			SKIPPED=$((SKIPPED + s))
		fi
		PENDING=("${PENDING[@]:1}")
	done
}

# missing N TEST: test N does not exist, a failure in its place
missing() {
	if [ "$JOBS" = 1 ]; then
		echo "not ok $1 $2 # no such test script"
		FAILED=$((FAILED + 1))
		return
	fi
	echo "not ok $1 $2 # no such test script" >"$JOBDIR/$1.ktap"
	echo "0 1 0" >"$JOBDIR/$1.counts"
	PENDING+=("$1")
	flush
}

# run_or_start N TEST...: the group now (one job) or in the background
run_or_start() {
	if [ "$JOBS" = 1 ]; then
		run_group "$@"
	else
		start_group "$@"
	fi
}

# end_jobs: at exit, stop the groups still running and remove JOBDIR.
# Under set -e a failing command here would become the script's exit
# status ("kill" with no PID fails), so nothing in it may fail.
end_jobs() {
	local pids

	pids=$(jobs -p)
	[ -z "$pids" ] || kill $pids 2>/dev/null || true
	wait || true
	rm -rf "$JOBDIR"
}

main() {
	local n=0 t abs first=1 group=()

	parse_args "$@"
	check_host
	prepare_images
	if [ "$JOBS" != 1 ]; then
		JOBDIR=$(mktemp -d "$OUT/runs/jobs.XXXXXX")
		trap end_jobs EXIT
	fi
	echo "KTAP version 1"
	echo "1..${#TESTS[@]}"
	[ $DEBUG = 0 ] ||
		echo "# debug kernel $KVER ($KERNEL_DIR), timeouts x$MULT, module $MODULE"
	for t in "${TESTS[@]}"; do
		n=$((n + 1))
		abs=$(readlink -f "$t" 2>/dev/null || echo "$t")
		if [ ! -f "$abs" ]; then
			[ ${#group[@]} = 0 ] || run_or_start "$first" "${group[@]}"
			group=()
			missing "$n" "$t"
			continue
		fi
		# a script that needs more CPUs than the others gets its own
		# guest, which runs alone (start_group); so does one that asks
		# for a guest of its own
		if { [ "$JOBS" != 1 ] && more_cpus "$abs"; } || own_guest "$abs"; then
			[ ${#group[@]} = 0 ] || run_or_start "$first" "${group[@]}"
			group=()
			run_or_start "$n" "$abs"
			continue
		fi
		[ ${#group[@]} != 0 ] || first=$n
		group+=("$abs")
		if [ ${#group[@]} = "$GROUP" ]; then
			run_or_start "$first" "${group[@]}"
			group=()
		fi
	done
	[ ${#group[@]} = 0 ] || run_or_start "$first" "${group[@]}"
	if [ "$JOBS" != 1 ]; then
		wait
		flush all
	fi
	echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	[ $FAILED = 0 ]
}

main "$@"
