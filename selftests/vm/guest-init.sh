#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of the test guest after switch_root (see initramfs-init).  Mounts
# the pseudo filesystems (the rest of the root, /tmp included, is the host
# root under a tmpfs overlay), runs one test script under `timeout`, scans the
# kernel log the test produced for splats, and writes the verdict to the
# writable 9p share at /run/eroce-vm:
#   output      the test's stdout and stderr (its KTAP)
#   rc          the test's exit status (written last, after the scan)
#   dmesg       the kernel log since the test started
#   dmesg.bad   the lines of that log that fail the test
# then powers the guest off.  The host runner reads only these files.

RES=/run/eroce-vm

# kernel log lines that fail a test, whatever the test itself said
SPLAT='WARNING:|BUG:|kernel BUG|Oops|soft lockup|hung task|blocked for more than|'
SPLAT+='refcount_t:|list_add corruption|list_del corruption|general protection|'
SPLAT+='KASAN|UBSAN|Kernel panic|circular locking|recursive locking|'
SPLAT+='detected stall|unreferenced object|stack-protector|double fault'

poweroff_now() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 30
	/bin/busybox poweroff -f
}

mount_fs() {
	mount -t proc proc /proc
	mount -t sysfs sys /sys
	mkdir -p /dev/pts /dev/shm /dev/mqueue
	mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
	mount -t tmpfs -o mode=1777 shm /dev/shm
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
	mount -t bpf bpf /sys/fs/bpf 2>/dev/null
	mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
	ln -sfn /proc/self/fd /dev/fd
	mkdir -p /run/netns /var/run 2>/dev/null
}

setup_env() {
	. "$RES/params"
	export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	export HOME=/root TERM=dumb LANG=C.UTF-8 EROCE_ROOT EROCE_VM=1
	hostname eroce-vm
	ip link set lo up
	# boot was quiet; from now on every kernel message reaches console.log
	sysctl -qw kernel.panic_on_oops=1 kernel.printk="7 4 1 7"
}

# run_test: run the test, its output to $RES/output (and ttyS1 if --show)
run_test() {
	local cmd=("$EROCE_TEST")

	[ -x "$EROCE_TEST" ] || cmd=(bash "$EROCE_TEST")
	cd "$EROCE_ROOT" || return 125
	if [ "${EROCE_SHOW:-0}" = 1 ] && [ -c /dev/ttyS1 ]; then
		timeout -k 10 "$EROCE_TIMEOUT" "${cmd[@]}" </dev/null 2>&1 |
			tee "$RES/output" >/dev/ttyS1
		return "${PIPESTATUS[0]}"
	fi
	timeout -k 10 "$EROCE_TIMEOUT" "${cmd[@]}" </dev/null >"$RES/output" 2>&1
}

main() {
	local rc

	mount_fs
	setup_env
	dmesg >"$RES/boot.dmesg"
	dmesg -C
	echo "eroce-vm: running $EROCE_TEST (timeout ${EROCE_TIMEOUT}s)"
	run_test
	rc=$?
	[ $rc = 124 ] && echo "# timed out after ${EROCE_TIMEOUT}s" >>"$RES/output"
	dmesg >"$RES/dmesg"
	grep -E "$SPLAT" "$RES/dmesg" >"$RES/dmesg.bad"
	echo "$rc" >"$RES/rc.tmp"
	mv "$RES/rc.tmp" "$RES/rc"
	echo "eroce-vm: test exited with $rc"
	poweroff_now
}

main
