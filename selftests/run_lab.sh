#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run_lab.sh [--guests N] [--nic virtio|e1000e|virtio-mq] [--mtu MTU]
#            [--switch CMD]... [--timeout SECS] [--mem MiB] [--cpu MODEL]
#            [--stream] [--env NAME=VALUE]... TEST.sh...
#
# The two-host lab (Documentation/testing.rst "Two-host lab"): runs each
# test script on N QEMU guests at once (default 2, up to 4), joined by
# emulated NICs through a Linux bridge that plays the switch.  The guests
# are run_vm.sh's (the same cached vmlinux and initramfs in out/vm, the
# same selftests/vm/guest-init.sh, TCG, mitigations=off), 1 vCPU each,
# CPU qemu64 with PCLMULQDQ and SSE4.2 (what an edge x86 CPU has at
# least), each with one NIC:
#   virtio     virtio-net (default): checksum offload, TSO, GRO; no USO
#   e1000e     an emulated Intel 82574
#   virtio-mq  virtio-net with 2 queue pairs, on a 2-vCPU guest
# The NIC's backend is a tap with vnet_hdr (TAP0..TAP3) in a network
# namespace of the host that the run creates for each script
# (eroce-lab-PID-K) and deletes when the script is done, also on failure
# or a signal; in it a bridge (BR) joins the taps.  QEMU runs inside that
# namespace (ip netns exec), so nothing touches the host's interfaces.
# Where taps cannot be made (or with --stream), two guests are joined
# back to back by a QEMU stream socket instead: no offloads, no switch;
# a KTAP diagnostic says so, and a script that asks for switch controls
# is skipped.
#
# The switch, controlled from the host: each "# lab-switch: CMD" line
# among a script's first 20 lines, then each --switch CMD, is run by sh
# inside the namespace once the bridge and the taps are up, before the
# guests boot, with TAP0..TAP3, BR, NS, EROCE_LAB_N, SHARED (the host's
# path of the guests' shared folder) and TEST (the script's path) in its
# environment, e.g.
#   # lab-switch: tc qdisc add dev $TAP1 root netem loss 1%
#   # lab-switch: ip link set $BR type bridge vlan_filtering 1
# A command that fails fails the script (not run).  The host's kernel
# lacks netem, red, fq_codel and more: for those a script asks for a
# switch guest instead.
#
# The switch guest: a script with "# lab-switch-guest: yes" among its
# first 20 lines gets one more guest, index N after the N hosts (1 vCPU,
# 512 MiB, the same vmlinux and initramfs), with one virtio-net NIC per
# host (swtapI, MAC 52:54:00:e0:1b:(I+1)); in the namespace a bridge brI
# joins only tapI and swtapI (no br0; BR is empty for "# lab-switch:"
# lines), and inside the switch guest lib_lab.sh's lab_setup bridges its
# NICs.  The same script runs there with EROCE_LAB_ROLE=switch and
# EROCE_LAB_INDEX=EROCE_LAB_SWITCH=N (the hosts get EROCE_LAB_ROLE=host
# and EROCE_LAB_SWITCH=N): it sets the switch's qdiscs and talks to the
# hosts through the shared folder.  Its KTAP is one more subtest,
# "switch", and its verdict counts as a guest's.  With --stream, or
# without taps, such a script is skipped and says so.
#
# --mtu MTU sets the
# MTU of the taps and the bridge and, through EROCE_LAB_MTU, of the
# guests' NICs (default 1500).
#
# Each guest has its own result directory (out/vm/runs/lab-NAME.*/gI)
# with run_vm.sh's params file, whose exported lines tell the script
# EROCE_LAB_INDEX (0..N-1), EROCE_LAB_N, EROCE_LAB_NIC, EROCE_LAB_MTU and
# EROCE_LAB_SHARED, where selftests/lib_lab.sh mounts a writable 9p
# folder (tag EROCE_LAB_SHARED_TAG) that all the script's guests share:
# lib_lab.sh brings up the NIC (198.18.10.(1+I)/24, 2001:db8:10::(1+I)/64)
# and waits for the peers and passes values through that folder.
# A script passes when it passed on every guest (exit status 0 and a
# kernel log without splat, as run_vm.sh decides); output is KTAP, one
# result per script with one subtest per guest, each guest's KTAP nested
# in it, and the last line is "N passed, N failed, N skipped" (a script
# skipped is no pass).  A script may ask for
# a longer timeout than the default 300 s ("# vm-timeout: SECS" among its
# first 20 lines); --timeout overrides.  The logs of failed scripts stay
# in out/vm/runs/.  A script runs on the number of guests its "#
# lab-guests: N" line (first 20 lines) asks for, else on --guests's, with
# the NIC its "# lab-nic: NIC" line asks for, else --nic's.
# --env NAME=VALUE (repeatable) sets NAME in the
# scripts' environment on every guest; --cpu MODEL replaces the CPU
# model; --mem the memory of each guest (default 1024 MiB).
# --kernel DIR [--module KO] boots every guest on the debug kernel, as
# run_vm.sh's options of that name do (its modules, the eroce.ko built
# against it, panic_on_warn, kmemleak around the script, timeouts and
# the boot margin times EROCE_VM_TIMEOUT_MULT, default 3); each guest
# then has at least 2048 MiB (KASAN's shadow).
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
VMDIR="$ROOT/selftests/vm"
OUT="$ROOT/out/vm"
# seconds on top of the test timeout for boot, log scan and poweroff
BOOT_MARGIN=${EROCE_VM_BOOT_MARGIN:-180}
# where a guest mounts the shared folder (lib_lab.sh) and its 9p tag
LAB_SHARED=/run/eroce-lab
LAB_TAG=labshared

GUESTS=2
GUESTS_SET=0
# the script's switch is a guest of its own (# lab-switch-guest: yes)
SWG=0
# the switch guest's memory, MiB: it runs a bridge, tc and the script
SW_MEM=512
NIC=virtio
NIC_SET=0
MTU=1500
CPU="qemu64,+ssse3,+sse4.1,+sse4.2,+popcnt,+pclmulqdq"
MEM=1024
STREAM=0
SWITCH_ARGS=()
GUEST_ENV=()
KERNEL_DIR=
MODULE=
DEBUG=0
MULT=1
TIMEOUT=300
TIMEOUT_SET=0
PASSED=0
FAILED=0
SKIPPED=0
# the namespace of the script being run, the QEMU processes (timeout's PIDs)
NS=
QPIDS=()
NSK=0

usage() {
	echo "usage: $0 [--guests N] [--nic virtio|e1000e|virtio-mq] [--mtu MTU] [--switch CMD]... [--timeout SECS] [--mem MiB] [--cpu MODEL] [--stream] [--kernel DIR [--module KO]] [--env NAME=VALUE]... TEST.sh..." >&2
	exit 2
}

parse_args() {
	while [ $# -gt 0 ]; do
		case "$1" in
		--guests) [ $# -ge 2 ] || usage; GUESTS=$2; GUESTS_SET=1; shift ;;
		--nic) [ $# -ge 2 ] || usage; NIC=$2; NIC_SET=1; shift ;;
		--mtu) [ $# -ge 2 ] || usage; MTU=$2; shift ;;
		--switch) [ $# -ge 2 ] || usage; SWITCH_ARGS+=("$2"); shift ;;
		--timeout) [ $# -ge 2 ] || usage; TIMEOUT=$2; TIMEOUT_SET=1; shift ;;
		--mem) [ $# -ge 2 ] || usage; MEM=$2; shift ;;
		--cpu) [ $# -ge 2 ] || usage; CPU=$2; shift ;;
		--stream) STREAM=1 ;;
		--kernel) [ $# -ge 2 ] || usage; KERNEL_DIR=$2; shift ;;
		--module) [ $# -ge 2 ] || usage; MODULE=$2; shift ;;
		--env)
			if [ $# -lt 2 ] || ! [[ "$2" =~ ^[A-Z_][A-Z0-9_]*= ]]; then usage; fi
			GUEST_ENV+=("$2"); shift ;;
		-h|--help) usage ;;
		--) shift; break ;;
		-*) usage ;;
		*) break ;;
		esac
		shift
	done
	[ $# -gt 0 ] || usage
	case "$GUESTS" in [1-4]) ;; *) usage ;; esac
	case "$NIC" in virtio-net) NIC=virtio ;; virtio|e1000e|virtio-mq) ;; *) usage ;; esac
	for v in "$TIMEOUT" "$MTU" "$MEM"; do
		case "$v" in ''|*[!0-9]*) usage ;; esac
	done
	TESTS=("$@")
	if [ -n "$MODULE" ] && [ -z "$KERNEL_DIR" ]; then
		echo "run_lab: --module goes with --kernel (the distribution kernel loads the tree's eroce.ko)" >&2
		exit 2
	fi
	if [ -n "$KERNEL_DIR" ]; then
		debug_kernel
		return
	fi
	KVER=${KVER:-$("$ROOT/scripts/kver.sh")}
}

# debug_kernel: boot the kernel built in KERNEL_DIR, in debug mode (as
# run_vm.sh's function of that name)
debug_kernel() {
	KERNEL_DIR=$(cd "$KERNEL_DIR" 2>/dev/null && pwd -P) ||
		{ echo "run_lab: no kernel directory $KERNEL_DIR" >&2; exit 1; }
	if [ ! -f "$KERNEL_DIR/done" ] || [ ! -s "$KERNEL_DIR/bzImage" ]; then
		echo "run_lab: $KERNEL_DIR: no built kernel (selftests/vm/build-debug-kernel.sh)" >&2
		exit 1
	fi
	KVER=$(cat "$KERNEL_DIR/kver")
	MODROOT=$KERNEL_DIR/modules/lib/modules
	[ -n "$MODULE" ] || MODULE=$ROOT/out/debug/eroce/drivers/infiniband/sw/eroce/eroce.ko
	MODULE=$(readlink -f "$MODULE")
	case "$(modinfo -F vermagic "$MODULE" 2>/dev/null)" in
	"$KVER "*) ;;
	*) echo "run_lab: $MODULE is not eroce.ko built for $KVER (scripts/check-debug.sh)" >&2; exit 1 ;;
	esac
	DEBUG=1
	MULT=${EROCE_VM_TIMEOUT_MULT:-3}
	case "$MULT" in ''|*[!0-9]*|0) usage ;; esac
	BOOT_MARGIN=$((BOOT_MARGIN * MULT))
	[ "$MEM" -ge 2048 ] || MEM=2048
	[ "$SW_MEM" -ge 2048 ] || SW_MEM=2048
}

check_host() {
	local t
	for t in qemu-system-x86_64 timeout cpio gzip ip; do
		command -v "$t" >/dev/null || { echo "run_lab: $t missing (make deps)" >&2; exit 1; }
	done
	[ $DEBUG = 0 ] || return 0
	[ -r "/boot/vmlinuz-$KVER" ] || { echo "run_lab: no /boot/vmlinuz-$KVER" >&2; exit 1; }
	[ -f "$ROOT/drivers/infiniband/sw/eroce/eroce.ko" ] ||
		echo "run_lab: no eroce.ko yet (make all tools)" >&2
}

# prepare_images: run_vm.sh's cached vmlinux and initramfs in out/vm;
# the debug kernel boots from its bzImage
prepare_images() {
	mkdir -p "$OUT/runs"
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

# ---- the switch --------------------------------------------------------------

nsdo() {
	ip netns exec "$NS" "$@"
}

# switch_up: namespace, bridge BR and taps TAP0..TAP(N-1) for one script;
# false (and nothing left) when taps cannot be made here
switch_up() {
	NSK=$((NSK + 1))
	NS=eroce-lab-$$-$NSK
	ip netns add "$NS" 2>"$RUN/switch.err" || { NS=; return 1; }
	switch_build 2>>"$RUN/switch.err" || { switch_down; return 1; }
}

# bridge_add BR: a bridge in the namespace, up at the lab's MTU; no STP: a
# port forwards as soon as it is up
bridge_add() {
	ip -n "$NS" link add "$1" type bridge stp_state 0 forward_delay 0 &&
		ip -n "$NS" link set "$1" mtu "$MTU" up
}

# tap_add TAP BR [multi_queue]: a tap with vnet_hdr in the namespace, a
# port of BR, up at the lab's MTU
tap_add() {
	ip -n "$NS" tuntap add dev "$1" mode tap vnet_hdr "${@:3}" &&
		ip -n "$NS" link set "$1" mtu "$MTU" master "$2" up
}

# switch_build: br0 joining the guests' taps; with a switch guest, one
# bridge brI per host guest I instead, joining only tapI (guest I's NIC)
# and swtapI (the switch guest's NIC I): the switch guest bridges its NICs
switch_build() {
	local i mq=()

	[ "$NIC" != virtio-mq ] || mq=(multi_queue)
	ip -n "$NS" link set lo up || return
	if [ "$SWG" = 1 ]; then
		for ((i = 0; i < GUESTS; i++)); do
			bridge_add "br$i" && tap_add "tap$i" "br$i" "${mq[@]}" &&
				tap_add "swtap$i" "br$i" || return
		done
		return
	fi
	bridge_add br0 || return
	for ((i = 0; i < GUESTS; i++)); do
		tap_add "tap$i" br0 "${mq[@]}" || return
	done
}

switch_down() {
	[ -z "$NS" ] || ip netns delete "$NS" 2>/dev/null || true
	NS=
}

# switch_cmds TEST: the script's "# lab-switch:" lines, then --switch's
switch_cmds() {
	sed -n '1,20s/^# lab-switch: *//p' "$1"
	[ ${#SWITCH_ARGS[@]} = 0 ] || printf '%s\n' "${SWITCH_ARGS[@]}"
}

# switch_run CMD: one switch command inside the namespace; its output to
# the run's switch.log (t: run_test's script)
switch_run() {
	echo "+ $1" >>"$RUN/switch.log"
	nsdo env NS="$NS" BR="$([ "$SWG" = 1 ] || echo br0)" TAP0=tap0 TAP1=tap1 TAP2=tap2 TAP3=tap3 \
		EROCE_LAB_N="$GUESTS" SHARED="$RUN/shared" TEST="$t" \
		sh -c "$1" >>"$RUN/switch.log" 2>&1
}

# ---- the guests --------------------------------------------------------------

# shell-quote for the params file (sourced by busybox sh and bash)
squote() {
	printf "'%s'" "$(printf %s "$1" | sed "s/'/'\\\\''/g")"
}

# write_params DIR INDEX TEST: guest INDEX's parameters (guest-init.sh);
# INDEX GUESTS is the switch guest
write_params() {
	local dir=$1 i=$2 t nic=$NIC
	[ "$i" != "$GUESTS" ] || nic=virtio
	{
		echo "EROCE_ROOT=$(squote "$ROOT")"
		echo "EROCE_NTESTS=1"
		echo "EROCE_TEST_1=$(squote "$3")"
		echo "EROCE_TIMEOUT_1=$T"
		echo "EROCE_SHOW=0"
		echo "export EROCE_LAB_INDEX=$i"
		echo "export EROCE_LAB_N=$GUESTS"
		echo "export EROCE_LAB_NIC=$nic"
		echo "export EROCE_LAB_MTU=$MTU"
		echo "export EROCE_LAB_LINK=$LINK"
		echo "export EROCE_LAB_SHARED=$LAB_SHARED"
		echo "export EROCE_LAB_SHARED_TAG=$LAB_TAG"
		if [ "$SWG" = 1 ]; then
			echo "export EROCE_LAB_SWITCH=$GUESTS"
			echo "export EROCE_LAB_ROLE=$([ "$i" = "$GUESTS" ] && echo switch || echo host)"
		fi
		for t in ${GUEST_ENV[@]+"${GUEST_ENV[@]}"}; do
			echo "export ${t%%=*}=$(squote "${t#*=}")"
		done
		if [ $DEBUG = 1 ]; then
			echo "EROCE_DEBUG_KERNEL=1"
			echo "EROCE_TIMEOUT_MULT=$MULT"
			echo "EROCE_VM_MODDIR=$(squote "$MODROOT/$KVER")"
			echo "EROCE_VM_MODULE=$(squote "$MODULE")"
		fi
	} >"$dir/params"
}

# nic_args I: QEMU's NIC options for guest I (NETDEV array, SMP)
nic_args() {
	local i=$1 mac dev=virtio-net-pci,netdev=n0 sock=$RUN/stream.sock

	mac=52:54:00:e0:1a:$(printf %02x $((i + 1)))
	SMP=1
	case "$NIC" in
	e1000e) dev=e1000e,netdev=n0 ;;
	virtio-mq) dev+=",mq=on,vectors=6"; SMP=2 ;;
	esac
	if [ "$LINK" = tap ]; then
		NETDEV=(-netdev "tap,id=n0,ifname=tap$i,script=no,downscript=no,vhost=off,vnet_hdr=on$([ "$NIC" != virtio-mq ] || echo ,queues=2)")
	elif [ "$i" = 0 ]; then
		NETDEV=(-netdev "stream,id=n0,server=on,addr.type=unix,addr.path=$sock")
	else
		NETDEV=(-netdev "stream,id=n0,server=off,addr.type=unix,addr.path=$sock")
	fi
	NETDEV+=(-device "$dev,mac=$mac")
}

# switch_nic_args: the switch guest's NICs, one virtio-net on swtapI per
# host guest I (NETDEV array, SMP)
switch_nic_args() {
	local i
	SMP=1
	NETDEV=()
	for ((i = 0; i < GUESTS; i++)); do
		NETDEV+=(-netdev "tap,id=s$i,ifname=swtap$i,script=no,downscript=no,vhost=off,vnet_hdr=on"
			-device "virtio-net-pci,netdev=s$i,mac=52:54:00:e0:1b:$(printf %02x $((i + 1)))")
	done
}

# start_guest I: QEMU for guest I in the background (QPIDS); I = GUESTS
# is the switch guest
start_guest() {
	local i=$1 dir=$RUN/g$1 p9="security_model=none,multidevs=remap"
	local pfx=() mem=$MEM debug=

	if [ "$i" = "$GUESTS" ]; then
		switch_nic_args
		mem=$SW_MEM
	else
		nic_args "$i"
	fi
	[ "$LINK" != tap ] || pfx=(ip netns exec "$NS")
	# run_vm.sh says why the debug kernel needs acpi=noirq
	[ $DEBUG = 0 ] || debug=" panic_on_warn=1 acpi=noirq"
	timeout -k 5 $((T + BOOT_MARGIN)) "${pfx[@]}" qemu-system-x86_64 \
		-accel tcg -cpu "$CPU" -smp "$SMP" -m "$mem" \
		-nodefaults -no-user-config -display none -no-reboot \
		-serial "file:$dir/console.log" \
		-pidfile "$dir/qemu.pid" \
		-kernel "$VMLINUX" -initrd "$INITRD" \
		-append "console=ttyS0 panic=-1 quiet rdinit=/init tsc=reliable no_timer_check mitigations=off i8042.noaux i8042.nokbd$debug" \
		-fsdev "local,id=hostroot,path=/,readonly=on,$p9" \
		-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
		-fsdev "local,id=result,path=$dir,$p9" \
		-device virtio-9p-pci,fsdev=result,mount_tag=result \
		-fsdev "local,id=shared,path=$RUN/shared,$p9" \
		-device "virtio-9p-pci,fsdev=shared,mount_tag=$LAB_TAG" \
		"${NETDEV[@]}" \
		</dev/null >"$dir/qemu.log" 2>&1 &
	QPIDS+=($!)
}

# run_guests TEST: every guest of the script; QRC[I] is QEMU's status
run_guests() {
	local i n

	QPIDS=()
	QRC=()
	for ((i = 0; i < GUESTS + SWG; i++)); do
		mkdir -p "$RUN/g$i"
		write_params "$RUN/g$i" "$i" "$1"
		start_guest "$i"
		# the stream client connects at start: the server must listen
		if [ "$LINK" = stream ] && [ "$i" = 0 ]; then
			for ((n = 0; n < 100; n++)); do
				[ -S "$RUN/stream.sock" ] && break
				sleep 0.1
			done
		fi
	done
	for ((i = 0; i < GUESTS + SWG; i++)); do
		QRC[i]=0
		wait "${QPIDS[i]}" || QRC[i]=$?
	done
	QPIDS=()
}

stop_guests() {
	local p
	for p in ${QPIDS[@]+"${QPIDS[@]}"}; do
		kill "$p" 2>/dev/null || true
	done
	for p in ${QPIDS[@]+"${QPIDS[@]}"}; do
		wait "$p" 2>/dev/null || true
	done
	QPIDS=()
}

cleanup() {
	stop_guests
	switch_down
}

# ---- verdicts ----------------------------------------------------------------

# guest_verdict I: why guest I failed the script; empty when it passed
guest_verdict() {
	local td=$RUN/g$1/1 qrc=${QRC[$1]} rc first

	if [ ! -f "$td/rc" ]; then
		if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
			echo "QEMU killed: wall-clock limit $((T + BOOT_MARGIN))s exceeded"
		elif [ -s "$RUN/g$1/initramfs-error" ]; then
			echo "guest init failed: $(head -n 1 "$RUN/g$1/initramfs-error")"
		elif [ -f "$td/time" ]; then
			echo "no kmemleak verdict: the guest ended during its checks"
		elif first=$(awk -f "$VMDIR/reports.awk" "$RUN/g$1/console.log" 2>/dev/null |
			head -n 1 | sed 's/^\[[ 0-9.]*\] //') && [ -n "$first" ]; then
			echo "guest died after a kernel report: $first"
		else
			echo "no verdict from the guest (QEMU exit $qrc)"
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

# guest_diag I: the kernel's splats and, without a verdict, the console
guest_diag() {
	local dir=$RUN/g$1

	[ ! -s "$dir/1/dmesg.bad" ] || sed 's/^/# dmesg: /' "$dir/1/dmesg.bad" | head -n 40
	# the debug kernel's reports, whole (kmemleak's among them)
	if [ $DEBUG = 1 ] && [ -s "$dir/1/reports" ]; then
		sed 's/^/# report: /' "$dir/1/reports" | head -n 300
	fi
	if [ ! -f "$dir/1/rc" ]; then
		[ $DEBUG = 0 ] ||
			awk -f "$VMDIR/reports.awk" "$dir/console.log" 2>/dev/null |
			head -n 300 | sed 's/^/# console report: /'
		tail -n 30 "$dir/console.log" 2>/dev/null | sed 's/^/# console: /'
		tail -n 5 "$dir/qemu.log" 2>/dev/null | sed 's/^/# qemu: /'
	fi
	echo "# logs: ${dir#"$ROOT"/}"
}

indent() {
	sed 's/^/    /'
}

test_name() {
	local t=${1#"$ROOT"/}
	t=${t#selftests/}
	echo "${t%.sh}"
}

# test_guests TEST: the script's "# lab-guests: N", else the default
test_guests() {
	local n=''
	[ "$GUESTS_SET" = 1 ] ||
		n=$(sed -n '1,20s/^# lab-guests: *\([1-4]\) *$/\1/p' "$1" | head -n 1)
	echo "${n:-$GUESTS}"
}

# test_nic TEST: the script's "# lab-nic: NIC" unless --nic was given,
# else --nic's (or the default)
test_nic() {
	local n=''
	[ "$NIC_SET" = 1 ] ||
		n=$(sed -n '1,20s/^# lab-nic: *\(virtio\|e1000e\|virtio-mq\) *$/\1/p' "$1" | head -n 1)
	echo "${n:-$NIC_ARG}"
}

# test_switch_guest TEST: 1 when the script asks for a switch guest ("#
# lab-switch-guest: yes" among its first 20 lines), else 0
test_switch_guest() {
	if sed -n '1,20p' "$1" | grep -q '^# lab-switch-guest: *yes *$'; then
		echo 1
	else
		echo 0
	fi
}

# test_timeout TEST: the script's "# vm-timeout: SECS", else the default;
# times the debug kernel's multiplier unless --timeout gave it
test_timeout() {
	local t=''
	[ "$TIMEOUT_SET" = 1 ] ||
		t=$(sed -n '1,20s/^# vm-timeout: *\([0-9][0-9]*\) *$/\1/p' "$1" | head -n 1)
	[ "$TIMEOUT_SET" = 1 ] || t=$(( ${t:-$TIMEOUT} * MULT ))
	echo "${t:-$TIMEOUT}"
}

# result N TEST VERDICT [DIRECTIVE]: the script's result line
result() {
	if [ -z "$3" ]; then
		echo "ok $1 $2${4:+ # $4}"
		if [ -n "${4:-}" ]; then
			SKIPPED=$((SKIPPED + 1))
		else
			PASSED=$((PASSED + 1))
		fi
	else
		echo "not ok $1 $2 # $3"
		FAILED=$((FAILED + 1))
	fi
}

# describe: one line on how the guests are joined
describe() {
	if [ "$LINK" = tap ] && [ "$SWG" = 1 ]; then
		echo "# lab: $GUESTS guests, $NIC on taps in namespace $NS, each linked by a bridge brI to the switch guest (guest$GUESTS, virtio-net, ${SW_MEM} MiB), MTU $MTU, CPU $CPU"
	elif [ "$LINK" = tap ]; then
		echo "# lab: $GUESTS guests, $NIC on taps in namespace $NS, bridge br0, MTU $MTU, CPU $CPU"
	else
		echo "# lab: $WHY: $GUESTS guests joined by a QEMU stream socket, $NIC, no switch controls, MTU $MTU"
	fi
}

# run_test N TEST: one script on every guest; a KTAP result for it
run_test() {
	local n=$1 t=$2 name i reason bad='' start=$SECONDS cmd skip='' gname

	name=$(test_name "$t")
	GUESTS=$(test_guests "$t")
	NIC=$(test_nic "$t")
	SWG=$(test_switch_guest "$t")
	T=$(test_timeout "$t")
	RUN=$(mktemp -d "$OUT/runs/lab-$(echo "$name" | tr / _).XXXXXX")
	mkdir -p "$RUN/shared"
	echo "    # Subtest: $name"
	LINK=tap
	if [ "$STREAM" = 1 ] || ! switch_up; then
		LINK=stream
		WHY="--stream"
		[ "$STREAM" = 1 ] || WHY="no taps here$([ ! -s "$RUN/switch.err" ] || echo " ($(head -n 1 "$RUN/switch.err"))")"
		[ "$GUESTS" = 2 ] || bad="no taps here, and a stream socket joins only 2 guests"
		[ -z "$(switch_cmds "$t")" ] || skip="switch controls need taps"
		[ "$SWG" = 0 ] || skip="a switch guest needs taps"
	fi
	describe | indent
	if [ -z "$bad" ] && [ -z "$skip" ] && [ "$LINK" = tap ]; then
		while IFS= read -r cmd; do
			[ -n "$cmd" ] || continue
			switch_run "$cmd" && continue
			bad="switch command failed: $cmd"
			sed 's/^/# switch: /' "$RUN/switch.log" | tail -n 10 | indent
			break
		done < <(switch_cmds "$t")
	fi
	if [ -n "$bad" ] || [ -n "$skip" ]; then
		switch_down
		echo "# $name: not run"
		result "$n" "$name" "$bad" "${skip:+SKIP $skip}"
		rm -rf "$RUN"
		return
	fi
	run_guests "$t"
	switch_down
	{
		echo "KTAP version 1"
		echo "1..$((GUESTS + SWG))"
	} | indent
	for ((i = 0; i < GUESTS + SWG; i++)); do
		reason=$(guest_verdict "$i")
		gname=guest$i
		[ "$i" != "$GUESTS" ] || gname=switch
		{
			echo "    # Subtest: $gname"
			[ ! -f "$RUN/g$i/1/output" ] || indent <"$RUN/g$i/1/output"
			if [ -z "$reason" ]; then
				echo "ok $((i + 1)) $gname"
			else
				guest_diag "$i"
				echo "not ok $((i + 1)) $gname # $reason"
			fi
		} | indent
		[ -z "$reason" ] || bad+="${bad:+; }$gname: $reason"
	done
	echo "# $name: $((SECONDS - start)) s"
	result "$n" "$name" "$bad"
	[ -n "$bad" ] || rm -rf "$RUN"
}

main() {
	local n=0 t abs

	parse_args "$@"
	NIC_ARG=$NIC
	check_host
	prepare_images
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
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
		run_test "$n" "$abs"
	done
	echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	[ $FAILED = 0 ]
}

main "$@"
