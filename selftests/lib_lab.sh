# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# lib_lab.sh: helpers for the two-host lab's test scripts (selftests/lab/,
# run on every guest at once by selftests/run_lab.sh); source it after
# lib.sh and lib_rdma.sh (it uses tcp_listening).  The runner tells each
# guest, in its environment: EROCE_LAB_INDEX (0..N-1), EROCE_LAB_N,
# EROCE_LAB_NIC, EROCE_LAB_MTU, EROCE_LAB_LINK (tap or stream) and
# EROCE_LAB_SHARED, where the 9p folder that all the guests of the script
# share is mounted (tag EROCE_LAB_SHARED_TAG).
#   setup       lab_setup (shared folder mounted, NIC up: LAB_I, LAB_N,
#               LAB_IF, LAB_IP, LAB_IP6), lab_setup_ktap (the same as
#               a KTAP test), lab_ip I, lab_ip6 I,
#               lab_rdma_link NAME TYPE (an RDMA device on LAB_IF, port
#               active, IPv4 GID present)
#   waiting     lab_signal NAME [VALUE], lab_wait NAME [SECS] [I...],
#               lab_barrier NAME [SECS], lab_get NAME I [SECS]
#   switch      with a switch guest (# lab-switch-guest: yes): LAB_ROLE
#               (host or switch), LAB_SWITCH (its index, LAB_N: the hosts
#               are 0..LAB_N-1), lab_is_switch, lab_switch_port I,
#               lab_switch_ready, lab_switch_wait [SECS],
#               lab_switch_wait_ktap,
#               lab_qdisc_stat DEV KIND FIELD
# Guest I has 198.18.10.(1+I)/24 and 2001:db8:10::(1+I)/64 on the NIC.
# A wait that times out returns 1 (the script fails that subtest, it
# never hangs); it also returns 1 at once when the guest it waits for has
# ended its script (lab_setup's EXIT trap leaves a note: a script with its
# own EXIT trap calls lab_exit_note from it).

LAB_I=${EROCE_LAB_INDEX:-0}
LAB_N=${EROCE_LAB_N:-1}
LAB_SHARED=${EROCE_LAB_SHARED:-/run/eroce-lab}
# seconds a wait lasts by default: the guests boot at the same time on a
# shared machine, under TCG, and may be far apart
LAB_WAIT=${EROCE_LAB_WAIT:-180}
# with a switch guest: this guest's role, host or switch, and the switch
# guest's index (LAB_N: LAB_N and lab_barrier count the hosts only)
LAB_ROLE=${EROCE_LAB_ROLE:-host}
LAB_SWITCH=${EROCE_LAB_SWITCH:-}
LAB_IF=
LAB_IP=
LAB_IP6=

# lab_ip I, lab_ip6 I: guest I's addresses
lab_ip() {
	echo "198.18.10.$(($1 + 1))"
}

lab_ip6() {
	echo "2001:db8:10::$(($1 + 1))"
}

# lab_peer: the other guest of a pair (0 <-> 1)
lab_peer() {
	echo $((1 - LAB_I))
}

# ---- setup -------------------------------------------------------------------

# lab_mount_shared: the shared folder at LAB_SHARED (no cache: each read
# sees what the other guests wrote)
lab_mount_shared() {
	mountpoint -q "$LAB_SHARED" && return 0
	mkdir -p "$LAB_SHARED" &&
		mount -t 9p -o trans=virtio,version=9p2000.L \
			"${EROCE_LAB_SHARED_TAG:-labshared}" "$LAB_SHARED"
}

# lab_nic_drivers: the drivers of the guest's NICs, PCI (e1000e) or
# virtio (virtio-net: device ID 1) ones; the guest runs no udev, nothing
# loads them by itself
lab_nic_drivers() {
	local d c
	for d in /sys/bus/pci/devices/* /sys/bus/virtio/devices/*; do
		[ -e "$d/modalias" ] || continue
		case "$d" in
		*/pci/*) c=$(read_file "$d/class"); [ "${c#0x02}" != "$c" ] || continue ;;
		*) [ "$(read_file "$d/device")" = 0x0001 ] || continue ;;
		esac
		# bound already: a driver built in (the debug kernel's)
		[ -e "$d/driver" ] && continue
		modprobe -q "$(read_file "$d/modalias")" || return
	done
}

# lab_find_if: the first network interface that is not lo
lab_find_if() {
	local n
	for n in /sys/class/net/*; do
		n=${n##*/}
		[ "$n" = lo ] && continue
		[ -e "/sys/class/net/$n/device" ] || continue
		echo "$n"
		return 0
	done
	return 1
}

# lab_nic_up: the NIC up with the guest's addresses and EROCE_LAB_MTU
lab_nic_up() {
	lab_nic_drivers || return
	wait_for 20 lab_find_if || { echo "no network interface"; return 1; }
	LAB_IF=$(lab_find_if)
	LAB_IP=$(lab_ip "$LAB_I")
	LAB_IP6=$(lab_ip6 "$LAB_I")
	ip link set dev "$LAB_IF" mtu "${EROCE_LAB_MTU:-1500}" &&
		ip link set dev "$LAB_IF" up &&
		addr_add "" "$LAB_IF" "$LAB_IP/24" "$LAB_IP6/64" || return
	# virtio-net with 2 queue pairs: both in use
	[ "${EROCE_LAB_NIC:-}" != virtio-mq ] ||
		ethtool -L "$LAB_IF" combined 2 2>/dev/null || true
	hostname "eroce-lab$LAB_I"
}

# lab_setup: the shared folder, the NIC; the exit note for the peers.
# Run it in the script's shell, not in `require` (a subshell): it sets
# LAB_IF, LAB_IP, LAB_IP6.
lab_setup() {
	lab_mount_shared || { echo "cannot mount the shared folder"; return 1; }
	trap lab_exit_note EXIT
	if lab_is_switch; then
		lab_switch_up
	else
		lab_nic_up
	fi
}

# lab_setup_ktap: lab_setup as the KTAP test nic_up (switch_up on the
# switch guest); its output's end and a bail-out when it fails.  Call it
# in the script's shell, as lab_setup.
lab_setup_ktap() {
	local what=nic_up why="NIC setup failed"
	if lab_is_switch; then
		what=switch_up why="switch setup failed"
	fi
	if lab_setup >"$RDMA_TMP/lab_setup.out" 2>&1; then
		ktap_ok "$what"
	else
		ktap_diag "$(tail -n 5 "$RDMA_TMP/lab_setup.out")"
		ktap_bail "$why"
	fi
}

# lab_exit_note: this guest's script has ended (peers stop waiting on it)
lab_exit_note() {
	lab_signal _exit
}

# lab_rdma_link NAME TYPE: `rdma link add NAME type TYPE netdev LAB_IF`,
# its port active and its IPv4 GID present
lab_rdma_link() {
	rdma link add "$1" type "$2" netdev "$LAB_IF" &&
		wait_for 30 port_state_is "$1" "4: ACTIVE" &&
		wait_for 30 has_gid "$1" "$(ipv4_gid "$LAB_IP")"
}

# ---- the switch guest --------------------------------------------------------
#
# With "# lab-switch-guest: yes" the runner boots one more guest, index
# LAB_N, with one virtio-net NIC per host (MAC 52:54:00:e0:1b:(I+1), its
# link to host I) and the role "switch": lab_setup there bridges the NICs
# (br0, no STP, MTU EROCE_LAB_MTU, no address) instead of bringing up an
# addressed NIC; the script then sets the qdiscs of lab_switch_port I
# (the egress towards host I), tells the hosts (lab_switch_ready) and
# learns when they are done (lab_wait NAME, which waits for the hosts).

# lab_is_switch: this guest is the switch
lab_is_switch() {
	[ "$LAB_ROLE" = switch ]
}

# lab_switch_port I: the switch guest's NIC towards host I
lab_switch_port() {
	local n mac
	mac=52:54:00:e0:1b:$(printf %02x $(($1 + 1)))
	for n in /sys/class/net/*; do
		[ "$(read_file "$n/address")" = "$mac" ] || continue
		echo "${n##*/}"
		return 0
	done
	return 1
}

# lab_switch_ports_found: every host's port is there
lab_switch_ports_found() {
	local i
	for ((i = 0; i < LAB_N; i++)); do
		lab_switch_port "$i" >/dev/null || return
	done
}

# lab_switch_up: the switch guest's NICs, one per host, joined by br0
lab_switch_up() {
	local i p mtu=${EROCE_LAB_MTU:-1500}
	lab_nic_drivers || return
	wait_for 20 lab_switch_ports_found || { echo "not every host's port is there"; return 1; }
	# no STP: a port forwards as soon as it is up
	ip link add br0 type bridge stp_state 0 forward_delay 0 &&
		ip link set br0 mtu "$mtu" up || return
	for ((i = 0; i < LAB_N; i++)); do
		p=$(lab_switch_port "$i")
		ip link set dev "$p" mtu "$mtu" master br0 up || return
	done
	LAB_IF=br0
	hostname eroce-labsw
}

# lab_switch_ready: (the switch) its qdiscs are set, the hosts may start
lab_switch_ready() {
	lab_signal switch.ready
}

# lab_switch_wait [SECS]: (a host) until the switch is ready
lab_switch_wait() {
	lab_wait switch.ready "${1:-$LAB_WAIT}" "$LAB_SWITCH"
}

# lab_switch_wait_ktap: (a host) lab_switch_wait as the KTAP test
# switch_ready, a bail-out when the switch does not come up in 300 s
lab_switch_wait_ktap() {
	lab_switch_wait 300 >/dev/null || ktap_bail "the switch did not come up"
	ktap_ok switch_ready
}

# lab_qdisc_stat DEV KIND FIELD: a counter of the first qdisc KIND (netem,
# red, tbf, htb, fq_codel) on DEV, from tc -s: "sent" and "dropped"
# (packets), "marked" (red's, or fq_codel's ecn_mark), or any other
# "NAME VALUE" of its statistics ("early", "pdrop": red's drops before
# the queue is full, of packets it cannot mark, and when it is full);
# empty when absent
lab_qdisc_stat() {
	tc -s qdisc show dev "$1" | awk -v k="$2" -v f="$3" '
		/^qdisc / { on = ($2 == k); next }
		!on { next }
		f == "sent" && $1 == "Sent" { print $4; exit }
		f == "dropped" && $1 == "Sent" { v = $7; sub(",", "", v); print v; exit }
		f != "sent" && f != "dropped" {
			for (i = 1; i < NF; i++)
				if ($i == f || (f == "marked" && $i == "ecn_mark")) { print $(i + 1); exit }
		}'
}

# ---- waiting -----------------------------------------------------------------

# lab_signal NAME [VALUE]: tell the other guests NAME (with VALUE)
lab_signal() {
	local f=$LAB_SHARED/$1.$LAB_I
	printf '%s\n' "${2-}" >"$f.tmp.$$" && mv -f "$f.tmp.$$" "$f"
}

# lab_wait NAME [SECS] [I...]: until guests I (default: all the others)
# signalled NAME; 1 after SECS (default LAB_WAIT, times the debug
# kernel's multiplier) or when one of them ended its script without
# signalling it
lab_wait() {
	local name=$1 secs=${2:-$LAB_WAIT} i end left; shift; [ $# = 0 ] || shift
	local -a who=("$@")
	if [ ${#who[@]} = 0 ]; then
		for ((i = 0; i < LAB_N; i++)); do
			[ "$i" = "$LAB_I" ] || who+=("$i")
		done
	fi
	end=$((SECONDS + secs * TIMEOUT_MULT))
	while :; do
		left=
		for i in "${who[@]}"; do
			[ -e "$LAB_SHARED/$name.$i" ] && continue
			if [ -e "$LAB_SHARED/_exit.$i" ]; then
				echo "lab_wait $name: guest $i ended its script"
				return 1
			fi
			left+=" $i"
		done
		[ -z "$left" ] && return 0
		if [ $SECONDS -ge $end ]; then
			echo "lab_wait $name: no word from guest$left after ${secs}s"
			return 1
		fi
		sleep 0.2
	done
}

# lab_barrier NAME [SECS]: signal NAME, then wait for every other guest's
lab_barrier() {
	lab_signal "$1" && lab_wait "$@"
}

# lab_get NAME I [SECS]: the VALUE guest I signalled with NAME (waits)
lab_get() {
	lab_wait "$1" "${3:-$LAB_WAIT}" "$2" >&2 || return
	read_file "$LAB_SHARED/$1.$2"
}

# ---- traffic -----------------------------------------------------------------

LAB_OUT=
LAB_RC=
LAB_SECS=

# lab_srv_cli NAME SRV PORT SECS CMD...: a client/server tool across the
# guests.  Guest SRV runs CMD as the server, tells the others once it
# listens on TCP PORT (NAME.ready) and waits for it to end; every other
# guest waits for that and runs CMD with SRV's address appended.  CMD may
# be SRV_CMD... -- CLI_CMD... when the two differ (iperf3 -s -1 -- iperf3
# -c).  Each runs under `timeout SECS`; its output is in LAB_OUT, its
# status in LAB_RC (what a failed wait says, and 1, when it never ran),
# the seconds it ran in LAB_SECS.
# A server still running 10 s after every client ended is stopped (a
# client that failed leaves it waiting).  All the guests meet at
# NAME.done afterwards.  Returns 0 when LAB_RC is 0.
# shellcheck disable=SC2034  # LAB_SECS is for the scripts
lab_srv_cli() {
	local name=$1 srv=$2 port=$3 t=$(($4 * TIMEOUT_MULT)) pid out start
	local -a scmd=() ccmd=()
	shift 4
	while [ $# -gt 0 ] && [ "$1" != -- ]; do scmd+=("$1"); shift; done
	if [ $# -gt 0 ]; then shift; ccmd=("$@"); else ccmd=("${scmd[@]}"); fi
	out=${RDMA_TMP:-/tmp}/lab-$name.out
	LAB_RC=0
	LAB_SECS=0
	if [ "$LAB_I" = "$srv" ]; then
		timeout -k 5 "$t" stdbuf -oL "${scmd[@]}" >"$out" 2>&1 &
		pid=$!
		start=$SECONDS
		if wait_for 60 tcp_listening "" "$port"; then
			lab_signal "$name.ready"
		else
			echo "server not listening on port $port after 60 s" >>"$out"
		fi
		lab_server_reap "$name" "$pid"
		wait "$pid" || LAB_RC=$?
		LAB_SECS=$((SECONDS - start))
		LAB_OUT=$(cat "$out")
	elif LAB_OUT=$(lab_wait "$name.ready" "" "$srv"); then
		start=$SECONDS
		timeout -k 5 "$t" stdbuf -oL "${ccmd[@]}" "$(lab_ip "$srv")" >"$out" 2>&1 || LAB_RC=$?
		LAB_SECS=$((SECONDS - start))
		LAB_OUT=$(cat "$out")
		lab_signal "$name.client"
	else
		LAB_RC=1
	fi
	lab_barrier "$name.done" >/dev/null
	[ "$LAB_RC" = 0 ]
}

# lab_server_reap NAME PID: wait while server PID runs; once every other
# guest's client of NAME ended (or its script did), give it 10 s more,
# then stop it
lab_server_reap() {
	local name=$1 pid=$2 i end=
	while kill -0 "$pid" 2>/dev/null; do
		if [ -z "$end" ]; then
			end=$((SECONDS + 10 * TIMEOUT_MULT))
			for ((i = 0; i < LAB_N; i++)); do
				[ "$i" = "$LAB_I" ] || [ -e "$LAB_SHARED/$name.client.$i" ] ||
					[ -e "$LAB_SHARED/_exit.$i" ] || end=
			done
		elif [ $SECONDS -ge "$end" ]; then
			echo "stopped: the clients ended" >>"${RDMA_TMP:-/tmp}/lab-$name.out"
			kill "$pid" 2>/dev/null
			return
		fi
		sleep 0.2
	done
}

# lab_srv_cli_diag: the end of LAB_OUT and its error lines, as diagnostics
lab_srv_cli_diag() {
	ktap_diag "rc=$LAB_RC$([ "$LAB_RC" = 124 ] && echo ' (timed out)')"
	ktap_diag "$( { grep -iE 'err|fail|couldn|unable|cannot|mismatch|timeout|invalid' <<<"$LAB_OUT" | head -n 8; tail -n 4 <<<"$LAB_OUT"; } | sed 's/^[[:space:]]*//')"
}
