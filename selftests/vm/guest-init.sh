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
#   reports     the kernel bug reports of that log, each whole
#               (selftests/vm/reports.awk), for the KTAP diagnostics
# then powers the guest off.  The host runner reads only these files.
#
# On the debug kernel (EROCE_DEBUG_KERNEL=1 in params, run_vm.sh --kernel)
# it first makes the kernel's modules (EROCE_VM_MODDIR, in the kernel's
# cache directory) /lib/modules/$(uname -r), puts the eroce.ko built for
# that kernel (EROCE_VM_MODULE) in its updates/ and over the tree's
# eroce.ko (in the guest's overlay only) and runs depmod, so both insmod of
# the tree's module and modprobe (rdma-link-eroce) load the debug build.
# Around the test it runs kmemleak: a scan and a clear before (boot-time
# suspects are forgotten), two scans 5 s apart after; every object it then
# reports fails the test and is kept in "kmemleak".

RES=/run/eroce-vm

# kernel log lines that fail a test, whatever the test itself said
SPLAT='WARNING:|BUG:|kernel BUG|Oops|soft lockup|hung task|blocked for more than|'
SPLAT+='refcount_t:|list_add corruption|list_del corruption|general protection|'
SPLAT+='KASAN|UBSAN|Kernel panic|circular locking|recursive locking|'
SPLAT+='detected stall|unreferenced object|stack-protector|double fault|'
SPLAT+='inconsistent lock state|suspicious RCU usage|ODEBUG:|'
SPLAT+='sleeping function called from invalid context'
KMEMLEAK=/sys/kernel/debug/kmemleak

poweroff_now() {
	sync
	# without ACPI (the debug kernel) there is no power-off, but a reset
	# ends QEMU too (-no-reboot)
	[ -d /sys/firmware/acpi ] || echo b >/proc/sysrq-trigger
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
	if [ "${EROCE_DEBUG_KERNEL:-0}" = 1 ]; then
		export EROCE_DEBUG_KERNEL EROCE_TIMEOUT_MULT
		[ -n "${EROCE_KMOD_DIR:-}" ] && export EROCE_KMOD_DIR
	fi
	hostname eroce-vm
	ip link set lo up
	# boot was quiet; from now on every kernel message reaches console.log
	sysctl -qw kernel.panic_on_oops=1 kernel.printk="7 4 1 7"
}

# debug_modules: the debug kernel's modules and eroce.ko where both insmod
# of the tree's module and modprobe find them
debug_modules() {
	local kver dst ko=$EROCE_ROOT/drivers/infiniband/sw/eroce/eroce.ko

	kver=$(uname -r)
	dst=/lib/modules/$kver
	[ -d "$EROCE_VM_MODDIR" ] || { echo "no modules in $EROCE_VM_MODDIR"; return 1; }
	rm -rf "$dst"
	mkdir -p /lib/modules
	cp -a "$EROCE_VM_MODDIR" "$dst" || return
	mkdir -p "$dst/updates"
	cp "$EROCE_VM_MODULE" "$dst/updates/eroce.ko" || return
	mkdir -p "${ko%/*}"
	[ "$EROCE_VM_MODULE" -ef "$ko" ] || cp "$EROCE_VM_MODULE" "$ko" || return
	depmod -a "$kver"
}

uptime_s() {
	local up rest
	read -r up rest </proc/uptime
	echo "${up%.*}"
}

# kmemleak_before: forget what was reported so far; note when the test
# starts (objects allocated before it are the boot's, see kmemleak_after)
kmemleak_before() {
	[ -w "$KMEMLEAK" ] || return 0
	echo clear >"$KMEMLEAK"
	KMEMLEAK_START=$(uptime_s)
}

# kmemleak_after: what the test leaked, into $RES/kmemleak.  Two scans 5 s
# apart (an object is reported when older than 5 s and unreferenced);
# objects older than the test are left out: boot-time suspects, told apart
# by age instead of by a scan before the test (a scan takes ~15 s here)
kmemleak_after() {
	local t=$SECONDS window
	[ -w "$KMEMLEAK" ] || return 0
	echo scan >"$KMEMLEAK"
	sleep 5
	echo scan >"$KMEMLEAK"
	window=$(( $(uptime_s) - KMEMLEAK_START + 2 ))
	awk -v max="$window" '
		/^unreferenced object/ { flush(); rec = $0 "\n"; age = -1; next }
		/^  comm .*\(age [0-9.]+s\)/ {
			a = $0; sub(/.*\(age /, "", a); sub(/s\).*/, "", a); age = a + 0
		}
		rec != "" { rec = rec $0 "\n" }
		function flush() { if (rec != "" && age >= 0 && age <= max) printf "%s", rec; rec = "" }
		END { flush() }' "$KMEMLEAK" >"$RES/kmemleak"
	echo "kmemleak: $(grep -c '^unreferenced object' "$KMEMLEAK") suspects," \
		"$(grep -c '^unreferenced object' "$RES/kmemleak") from the test;" \
		"scans $((SECONDS - t)) s" >>"$RES/debug-setup"
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
	local rc setup_err= KMEMLEAK_START=0

	mount_fs
	setup_env
	if [ "${EROCE_DEBUG_KERNEL:-0}" = 1 ]; then
		echo "guest-init started at $(cut -d' ' -f1 /proc/uptime) s" >"$RES/debug-setup"
		debug_modules >>"$RES/debug-setup" 2>&1 ||
			setup_err="debug kernel setup failed: $(tail -n 1 "$RES/debug-setup")"
		kmemleak_before
		echo "test starts at $(cut -d' ' -f1 /proc/uptime) s" >>"$RES/debug-setup"
	fi
	dmesg >"$RES/boot.dmesg"
	dmesg -C
	echo "eroce-vm: running $EROCE_TEST (timeout ${EROCE_TIMEOUT}s)"
	run_test
	rc=$?
	[ $rc = 124 ] && echo "# timed out after ${EROCE_TIMEOUT}s" >>"$RES/output"
	[ "${EROCE_DEBUG_KERNEL:-0}" = 1 ] && kmemleak_after
	dmesg >"$RES/dmesg"
	grep -E "$SPLAT" "$RES/dmesg" >"$RES/dmesg.bad"
	[ -z "$setup_err" ] || echo "$setup_err" >>"$RES/dmesg.bad"
	awk -f "$EROCE_ROOT/selftests/vm/reports.awk" "$RES/dmesg" >"$RES/reports"
	if [ -s "$RES/kmemleak" ]; then
		grep 'unreferenced object' "$RES/kmemleak" |
			sed 's/^/kmemleak: /' >>"$RES/dmesg.bad"
		cat "$RES/kmemleak" >>"$RES/reports"
	fi
	echo "$rc" >"$RES/rc.tmp"
	mv "$RES/rc.tmp" "$RES/rc"
	echo "eroce-vm: test exited with $rc"
	poweroff_now
}

main
