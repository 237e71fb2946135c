#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of the test guest after switch_root (see initramfs-init).  Mounts
# the pseudo filesystems (the rest of the root, /tmp included, is the host
# root under a tmpfs overlay), then runs the test scripts that
# /run/eroce-vm/params names (EROCE_NTESTS of them, EROCE_TEST_N with its
# timeout EROCE_TIMEOUT_N), one after the other, each under `timeout`.
# Between two scripts, and after the last one on the debug kernel, it
# undoes what a script leaves behind (reset_guest): processes,
# namespaces, links, RDMA devices, modules, routing rules, sysctls; what
# it cannot undo fails the script.  For the script numbered N it writes to
# the writable 9p share, in /run/eroce-vm/N/:
#   test        the script's path
#   output      the script's stdout and stderr (its KTAP)
#   time        the seconds it ran
#   dmesg       the kernel log of its run and of the reset after it
#   dmesg.bad   the lines of that log that fail it
#   reports     the kernel bug reports of that log, each whole
#               (selftests/vm/reports.awk), for the KTAP diagnostics
#   rc          its exit status (written last, after the log scan)
# then powers the guest off.  The host runner reads only these files.
#
# On the debug kernel (EROCE_DEBUG_KERNEL=1 in params, run_vm.sh --kernel)
# it first makes the kernel's modules (EROCE_VM_MODDIR, in the kernel's
# cache directory) /lib/modules/$(uname -r), puts the eroce.ko built for
# that kernel (EROCE_VM_MODULE) in its updates/ and over the tree's
# eroce.ko (in the guest's overlay only) and runs depmod, so both insmod of
# the tree's module and modprobe (rdma-link-eroce) load the debug build.
# And it runs kmemleak: a clear before the first script, two scans 5 s
# apart after the last; each object reported is charged to the script
# that was running (or being reset) when it was allocated, and fails it
# (N/kmemleak).  The scans end with /run/eroce-vm/kmemleak.done.

RES=/run/eroce-vm

# kernel log lines that fail a test, whatever the test itself said
SPLAT='WARNING:|BUG:|kernel BUG|Oops|soft lockup|hung task|blocked for more than|'
SPLAT+='refcount_t:|list_add corruption|list_del corruption|general protection|'
SPLAT+='KASAN|UBSAN|Kernel panic|circular locking|recursive locking|'
SPLAT+='detected stall|unreferenced object|stack-protector|double fault|'
SPLAT+='inconsistent lock state|suspicious RCU usage|ODEBUG:|'
SPLAT+='sleeping function called from invalid context|'
# a program of the test that crashed (the kernel's report of its signal)
SPLAT+='segfault at |traps: '
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

# kmemleak_before: forget what was reported so far (boot-time suspects;
# kmemleak_after also leaves out what is older than the first script)
kmemleak_before() {
	[ -w "$KMEMLEAK" ] || return 0
	echo clear >"$KMEMLEAK"
}

# kmemleak_after: what each script leaked, into N/kmemleak.  Two scans
# 5 s apart (an object is reported when older than 5 s and unreferenced).
# An object's allocation time is the time of the scan less its age; it is
# charged to the script whose window (TEST_START[N], up to the next
# script's start) holds that time.  Objects older than the first script
# are the boot's suspects and are left out.
kmemleak_after() {
	local t=$SECONDS now i
	[ -w "$KMEMLEAK" ] || return 0
	echo scan >"$KMEMLEAK"
	sleep 5
	echo scan >"$KMEMLEAK"
	now=$(cut -d' ' -f1 /proc/uptime)
	for ((i = 1; i <= EROCE_NTESTS; i++)); do
		awk -v now="$now" -v from="${TEST_START[i]:-1e9}" \
		    -v to="${TEST_START[i + 1]:-1e9}" '
			/^unreferenced object/ { flush(); rec = $0 "\n"; age = -1; next }
			/^  comm .*\(age [0-9.]+s\)/ {
				a = $0; sub(/.*\(age /, "", a); sub(/s\).*/, "", a); age = a + 0
			}
			rec != "" { rec = rec $0 "\n" }
			function flush(  born) {
				born = now - age
				# a second of slack: uptime and age are rounded
				if (rec != "" && age >= 0 && born >= from - 1 && born < to)
					printf "%s", rec
				rec = ""
			}
			END { flush() }' "$KMEMLEAK" >"$RES/$i/kmemleak"
	done
	echo "kmemleak: $(grep -c '^unreferenced object' "$KMEMLEAK") suspects," \
		"$(cat "$RES"/*/kmemleak | grep -c '^unreferenced object') from the tests;" \
		"scans $((SECONDS - t)) s" >>"$RES/debug-setup"
}

# run_test N: run script N, its output to N/output (and ttyS1 if --show)
run_test() {
	local n=$1 test secs out cmd var

	var=EROCE_TEST_$n
	test=${!var}
	var=EROCE_TIMEOUT_$n
	secs=${!var}
	out=$RES/$n/output
	cmd=("$test")
	[ -x "$test" ] || cmd=(bash "$test")
	cd "$EROCE_ROOT" || return 125
	echo "eroce-vm: running $test (timeout ${secs}s)"
	if [ "${EROCE_SHOW:-0}" = 1 ] && [ -c /dev/ttyS1 ]; then
		timeout -k 10 "$secs" "${cmd[@]}" </dev/null 2>&1 |
			tee "$out" >/dev/ttyS1
		return "${PIPESTATUS[0]}"
	fi
	timeout -k 10 "$secs" "${cmd[@]}" </dev/null >"$out" 2>&1
}

# ---- between scripts ---------------------------------------------------------

BOOT_MODULES=
# modules the kernel itself keeps once they were loaded, whichever script
# loaded them: the crypto layer's default RNG (crypto_get_default_rng(),
# never released) pins drbg and what drbg and jitterentropy need
KERNEL_KEEPS='drbg jitterentropy_rng sha512_generic sha3_generic'
BOOT_SYSCTL=$RES/boot.sysctl

# the sysctls a script may change in the initial namespace
sysctl_state() {
	local f v
	for f in /proc/sys/net/core/* /proc/sys/net/ipv4/* \
		 /proc/sys/net/ipv4/conf/{all,default}/* \
		 /proc/sys/net/ipv6/conf/{all,default}/*; do
		[ -f "$f" ] && [ -w "$f" ] || continue
		{ read -r v <"$f"; } 2>/dev/null && printf '%s\t%s\n' "$f" "$v"
	done
}

# reset_note MSG: a reset step that failed, charged to the last script
reset_note() {
	echo "guest reset: $*" >>"$RESET_BAD"
}

# others_alive: a process other than this one and the kernel's threads
# (children of kthreadd, PID 2) that has not exited yet; no forks
others_alive() {
	local d s pid state ppid

	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		[ "$pid" = 1 ] || [ "$pid" = 2 ] && continue
		{ read -r s <"$d/stat"; } 2>/dev/null || continue
		s=${s##*) }
		state=${s%% *}
		s=${s#* }
		ppid=${s%% *}
		[ "$ppid" = 2 ] || [ "$state" = Z ] || [ "$state" = X ] ||
			return 0
	done
	return 1
}

# loaded_since_boot: the modules loaded since boot that can unload, the
# newest first (as /proc/modules lists them), each after a space
loaded_since_boot() {
	local m list=

	for m in $(awk '$4 !~ /permanent/ { print $1 }' /proc/modules); do
		case " $BOOT_MODULES $KERNEL_KEEPS " in *" $m "*) continue ;; esac
		list+=" $m"
	done
	echo "$list"
}

# reset_guest [between]: what the last script left behind, undone: before
# the next script runs ("between": the routing rules and sysctls of the
# initial namespace too) or, on the debug kernel, before kmemleak's scans
# (teardown paths leak too).  Every RDMA device must be gone within a
# bound and every module the script loaded must unload.
reset_guest() {
	local f v i l left now pass secs=$((10 * ${EROCE_TIMEOUT_MULT:-1}))
	local t=$SECONDS

	RESET_STEPS=
	# every process but this one: their files close, their objects go
	kill -KILL -1 2>/dev/null
	for ((i = 0; i < secs * 10; i++)); do
		others_alive || break
		sleep 0.1
	done
	others_alive && reset_note "processes still running after ${secs}s"
	RESET_STEPS+="processes $((SECONDS - t)) s, "
	t=$SECONDS
	ip -all netns delete 2>/dev/null
	for l in $(rdma link show 2>/dev/null |
		   awk '$1 == "link" { sub(/\/.*/, "", $2); print $2 }'); do
		rdma link delete "$l" 2>/dev/null
	done
	for l in $(ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'); do
		[ "$l" = lo ] || ip link delete "$l" 2>/dev/null
	done
	# namespaces die in a work item: wait for their devices
	for ((i = 0; i < secs * 10; i++)); do
		[ -z "$(ls /sys/class/infiniband 2>/dev/null)" ] && break
		sleep 0.1
	done
	left=$(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ')
	[ -z "$left" ] || reset_note "RDMA devices left after ${secs}s: $left"
	RESET_STEPS+="namespaces and devices $((SECONDS - t)) s, "
	t=$SECONDS
	if [ "${1:-}" = between ]; then
		ip rule flush 2>/dev/null
		ip rule show | grep -q 'lookup local' || ip rule add pref 0 lookup local
		ip rule show | grep -q 'lookup main' || ip rule add pref 32766 lookup main
		ip rule show | grep -q 'lookup default' || ip rule add pref 32767 lookup default
		ip -6 rule flush 2>/dev/null
		ip -6 rule show | grep -q 'lookup local' || ip -6 rule add pref 0 lookup local
		ip -6 rule show | grep -q 'lookup main' || ip -6 rule add pref 32766 lookup main
		while IFS=$'\t' read -r f v; do
			{ read -r l <"$f"; } 2>/dev/null
			[ "$l" = "$v" ] || echo "$v" >"$f" 2>/dev/null
		done <"$BOOT_SYSCTL"
	fi
	RESET_STEPS+="rules and sysctls $((SECONDS - t)) s, "
	t=$SECONDS
	# configfs, which the NVMe-oF and LIO targets mount, holds its module
	umount /sys/kernel/config 2>/dev/null
	# the modules it loaded, users first (/proc/modules lists the newest
	# first), one rmmod for all of them, which goes on past those still
	# in use: passes until the dependencies are gone; a module without
	# an exit function stays ([permanent])
	left=$(loaded_since_boot)
	for ((pass = 0; pass < secs * 5 && ${#left} > 0; pass++)); do
		# shellcheck disable=SC2086  # one argument per module
		rmmod $left 2>/dev/null
		now=$(loaded_since_boot)
		# none went: a user (a dying namespace) still holds them
		[ "$now" = "$left" ] && sleep 0.2
		left=$now
	done
	[ -z "$left" ] || reset_note "modules that would not unload:$left"
	RESET_STEPS+="modules $((SECONDS - t)) s"
}

# ---- main --------------------------------------------------------------------

# check_log N: the kernel log of script N and its reset, scanned
check_log() {
	local dir=$RES/$1

	dmesg >"$dir/dmesg"
	dmesg -C
	grep -E "$SPLAT" "$dir/dmesg" >"$dir/dmesg.bad"
	cat "$RESET_BAD" >>"$dir/dmesg.bad" 2>/dev/null
	awk -f "$EROCE_ROOT/selftests/vm/reports.awk" "$dir/dmesg" >"$dir/reports"
}

# add_kmemleak N: what kmemleak charged to script N fails it
add_kmemleak() {
	local dir=$RES/$1

	[ -s "$dir/kmemleak" ] || return 0
	grep 'unreferenced object' "$dir/kmemleak" |
		sed 's/^/kmemleak: /' >>"$dir/dmesg.bad"
	cat "$dir/kmemleak" >>"$dir/reports"
}

main() {
	local rc i var start secs setup_err='' debug=0
	local -a TEST_START=() RCS=()

	echo "eroce-vm: guest-init started"
	mount_fs
	setup_env
	[ "${EROCE_DEBUG_KERNEL:-0}" = 1 ] && debug=1
	if [ $debug = 1 ]; then
		echo "guest-init started at $(cut -d' ' -f1 /proc/uptime) s" >"$RES/debug-setup"
		debug_modules >>"$RES/debug-setup" 2>&1 ||
			setup_err="debug kernel setup failed: $(tail -n 1 "$RES/debug-setup")"
		kmemleak_before
		echo "first test starts at $(cut -d' ' -f1 /proc/uptime) s" >>"$RES/debug-setup"
	fi
	BOOT_MODULES=$(awk '{ print $1 }' /proc/modules | tr '\n' ' ')
	[ "$EROCE_NTESTS" = 1 ] || sysctl_state >"$BOOT_SYSCTL"
	dmesg >"$RES/boot.dmesg"
	dmesg -C
	RESET_BAD=$RES/reset.bad
	for ((i = 1; i <= EROCE_NTESTS; i++)); do
		mkdir -p "$RES/$i"
		var=EROCE_TEST_$i
		echo "${!var}" >"$RES/$i/test"
		: >"$RESET_BAD"
		[ -z "$setup_err" ] || echo "$setup_err" >"$RESET_BAD"
		TEST_START[i]=$(cut -d' ' -f1 /proc/uptime)
		start=$SECONDS
		run_test "$i"
		rc=$?
		secs=$((SECONDS - start))
		[ $rc = 124 ] && echo "# timed out" >>"$RES/$i/output"
		# the last script's leftovers go with the guest, but on the
		# debug kernel their teardown is checked too
		start=$SECONDS
		if [ $i -lt "$EROCE_NTESTS" ]; then
			reset_guest between
		elif [ $debug = 1 ]; then
			reset_guest
		fi
		check_log "$i"
		[ $debug = 0 ] ||
			echo "test $i: reset and log scan $((SECONDS - start)) s (${RESET_STEPS:-no reset})" >>"$RES/debug-setup"
		# written after the reset: a guest that ends before it died
		# during this script
		echo "$secs" >"$RES/$i/time"
		RCS[i]=$rc
		echo "eroce-vm: test $i exited with $rc"
		# without kmemleak the verdict is complete now
		[ $debug = 1 ] || { echo "$rc" >"$RES/$i/rc.tmp"; mv "$RES/$i/rc.tmp" "$RES/$i/rc"; }
	done
	if [ $debug = 1 ]; then
		kmemleak_after
		for ((i = 1; i <= EROCE_NTESTS; i++)); do
			add_kmemleak "$i"
			echo "${RCS[i]}" >"$RES/$i/rc.tmp"
			mv "$RES/$i/rc.tmp" "$RES/$i/rc"
		done
	fi
	poweroff_now
}

main
