#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run_vm.sh [--show] [--timeout SECS] [--kver KVER] TEST.sh...
#
# Runs each test script in its own QEMU guest (TCG, no network device) that
# boots the Debian kernel installed on this machine and sees the host root
# read-only under a writable tmpfs overlay, the project at the same path.
# The verdict comes back through a writable 9p share (files written by
# selftests/vm/guest-init.sh), never from the console: a test passes when
# it exited 0 and the kernel log it produced has no splat.  The guest runs
# with mitigations=off (CPU-bug mitigations only slow TCG down).  Output is KTAP,
# each script's own KTAP nested as a subtest; the last line is
# "N passed, N failed".  Guest logs of failed tests stay in out/vm/runs/.
# A script may ask for a longer test timeout than the default 300 s with a
# "# vm-timeout: SECS" line among its first 20 lines; --timeout overrides.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
VMDIR="$ROOT/selftests/vm"
OUT="$ROOT/out/vm"
# seconds on top of the test timeout for boot, log scan and poweroff
BOOT_MARGIN=${EROCE_VM_BOOT_MARGIN:-120}
# kernel messages worth showing when the guest died without a verdict
SPLAT='WARNING:|BUG:|kernel BUG|Oops|panic|general protection|Call Trace'

SHOW=0
TIMEOUT=300
TIMEOUT_SET=0
T=300			# timeout of the test being run
KVER=
PASSED=0
FAILED=0

usage() {
	echo "usage: $0 [--show] [--timeout SECS] [--kver KVER] TEST.sh..." >&2
	exit 2
}

parse_args() {
	while [ $# -gt 0 ]; do
		case "$1" in
		--show) SHOW=1 ;;
		--timeout) [ $# -ge 2 ] || usage; TIMEOUT=$2; TIMEOUT_SET=1; shift ;;
		--kver) [ $# -ge 2 ] || usage; KVER=$2; shift ;;
		-h|--help) usage ;;
		--) shift; break ;;
		-*) usage ;;
		*) break ;;
		esac
		shift
	done
	[ $# -gt 0 ] || usage
	case "$TIMEOUT" in ''|*[!0-9]*) usage ;; esac
	TESTS=("$@")
	[ -n "$KVER" ] || KVER=$(ls /lib/modules 2>/dev/null | sort -V | tail -n 1)
}

check_host() {
	local t
	for t in qemu-system-x86_64 timeout cpio gzip; do
		command -v "$t" >/dev/null || { echo "run_vm: $t missing (make deps)" >&2; exit 1; }
	done
	[ -r "/boot/vmlinuz-$KVER" ] || { echo "run_vm: no /boot/vmlinuz-$KVER" >&2; exit 1; }
	[ -d "/lib/modules/$KVER/kernel" ] || { echo "run_vm: no /lib/modules/$KVER" >&2; exit 1; }
}

# prepare_images: cached vmlinux (PVH-bootable) and initramfs in out/vm
prepare_images() {
	mkdir -p "$OUT/runs"
	find "$OUT/runs" -mindepth 1 -maxdepth 1 -mtime +2 -exec rm -rf {} + 2>/dev/null || true
	VMLINUX="$OUT/vmlinux-$KVER"
	INITRD="$OUT/initramfs-$KVER.cpio.gz"
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

write_params() {
	local dir=$1 test=$2
	{
		echo "EROCE_ROOT=$(squote "$ROOT")"
		echo "EROCE_TEST=$(squote "$test")"
		echo "EROCE_TIMEOUT=$T"
		echo "EROCE_SHOW=$SHOW"
	} >"$dir/params"
}

# run_qemu DIR: boot the guest for the test in DIR; returns QEMU's status
run_qemu() {
	local dir=$1 limit=$((T + BOOT_MARGIN)) show=()
	local p9="security_model=none,multidevs=remap"

	[ $SHOW = 1 ] && show=(-serial "file:$dir/stream.log")
	timeout -k 5 "$limit" qemu-system-x86_64 \
		-accel tcg -cpu qemu64 -smp 2 -m 2G \
		-nodefaults -no-user-config -nic none -display none -no-reboot \
		-serial "file:$dir/console.log" "${show[@]}" \
		-kernel "$VMLINUX" -initrd "$INITRD" \
		-append "console=ttyS0 panic=-1 quiet rdinit=/init tsc=reliable no_timer_check mitigations=off i8042.noaux i8042.nokbd" \
		-fsdev "local,id=hostroot,path=/,readonly=on,$p9" \
		-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
		-fsdev "local,id=result,path=$dir,$p9" \
		-device virtio-9p-pci,fsdev=result,mount_tag=result \
		</dev/null >"$dir/qemu.log" 2>&1
}

# run_guest DIR: run QEMU, in --show mode streaming the test output live
run_guest() {
	local dir=$1 qpid rc=0

	if [ $SHOW = 0 ]; then
		run_qemu "$dir" || rc=$?
		return $rc
	fi
	: >"$dir/stream.log"
	run_qemu "$dir" &
	qpid=$!
	tail -n +1 -F -s 0.2 --pid=$qpid "$dir/stream.log" 2>/dev/null | indent
	wait $qpid || rc=$?
	return $rc
}

indent() {
	sed -u 's/^/    /'
}

# verdict DIR QEMU_RC: print the reason the test failed; empty when passed
verdict() {
	local dir=$1 qrc=$2 rc

	if [ ! -f "$dir/rc" ]; then
		if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
			echo "QEMU killed: wall-clock limit $((T + BOOT_MARGIN))s exceeded"
		elif [ -s "$dir/initramfs-error" ]; then
			echo "guest init failed: $(head -n 1 "$dir/initramfs-error")"
		else
			echo "no verdict from the guest (QEMU exit $qrc; crash or panic?)"
		fi
		return
	fi
	rc=$(cat "$dir/rc")
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "test timed out after ${T}s"
	elif [ "$rc" != 0 ]; then
		echo "exit status $rc"
	elif [ -s "$dir/dmesg.bad" ]; then
		echo "kernel log: $(head -n 1 "$dir/dmesg.bad")"
	fi
}

# diagnostics DIR: kernel splats and, without a verdict, the console tail
diagnostics() {
	local dir=$1
	if [ -s "$dir/dmesg.bad" ]; then
		sed 's/^/# dmesg: /' "$dir/dmesg.bad" | head -n 40
	fi
	if [ ! -f "$dir/rc" ]; then
		grep -E "$SPLAT" "$dir/console.log" 2>/dev/null | head -n 20 |
			sed 's/^/# console splat: /'
		tail -n 40 "$dir/console.log" 2>/dev/null | sed 's/^/# console: /'
		tail -n 5 "$dir/qemu.log" 2>/dev/null | sed 's/^/# qemu: /'
	fi
	echo "# logs: ${dir#"$ROOT"/}"
}

test_name() {
	local t=${1#"$ROOT"/}
	t=${t#selftests/}
	echo "${t%.sh}"
}

# test_timeout TEST: the script's "# vm-timeout: SECS", else the default
test_timeout() {
	local t=''
	[ "$TIMEOUT_SET" = 1 ] ||
		t=$(sed -n '1,20s/^# vm-timeout: *\([0-9][0-9]*\) *$/\1/p' "$1" | head -n 1)
	echo "${t:-$TIMEOUT}"
}

# run_one N TEST: one guest, one KTAP subtest, one result line
run_one() {
	local n=$1 test=$2 name dir qrc=0 reason start

	name=$(test_name "$test")
	T=$(test_timeout "$test")
	dir=$(mktemp -d "$OUT/runs/$(echo "$name" | tr / _).XXXXXX")
	write_params "$dir" "$test"
	echo "    # Subtest: $name"
	start=$SECONDS
	run_guest "$dir" || qrc=$?
	[ $SHOW = 1 ] || [ ! -f "$dir/output" ] || indent <"$dir/output"
	reason=$(verdict "$dir" "$qrc")
	echo "# $name: $((SECONDS - start)) s"
	if [ -z "$reason" ]; then
		echo "ok $n $name"
		PASSED=$((PASSED + 1))
		rm -rf "$dir"
	else
		diagnostics "$dir"
		echo "not ok $n $name # $reason"
		FAILED=$((FAILED + 1))
	fi
}

main() {
	local n=0 t abs

	parse_args "$@"
	check_host
	prepare_images
	echo "KTAP version 1"
	echo "1..${#TESTS[@]}"
	for t in "${TESTS[@]}"; do
		n=$((n + 1))
		abs=$(readlink -f "$t" 2>/dev/null || echo "$t")
		if [ ! -f "$abs" ]; then
			echo "not ok $n $t # no such test script"
			FAILED=$((FAILED + 1))
			continue
		fi
		run_one $n "$abs"
	done
	echo "$PASSED passed, $FAILED failed"
	[ $FAILED = 0 ]
}

main "$@"
