#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 3600
#
# consumers_lab_guest.sh: the in-guest half of the two-host consumers
# bench (selftests/bench/consumers_lab.sh, `make bench-consumers-lab`,
# through selftests/run_lab.sh), run on both guests of the lab at once:
# guest0 (198.18.10.1) is the target, guest1 (198.18.10.2) the
# initiator.  One transport after the other, on the same NICs and the
# same bridge:
#   eroce   eroce0 on each guest's NIC (the tree's eroce.ko and provider)
#   rxe     rxe0 (rdma_rxe) on the same NIC, in the initial namespace;
#           eroce0 is deleted and eroce unloaded first, rdma_rxe
#           unloaded afterwards (both want UDP port 4791)
#   tcp     the same consumers over TCP where Linux has them
# and, on each, the consumers of CONS_ONLY (default "nvme nfs iser"):
#   nvme    nvmet on guest0 (a CONS_DISK_MIB file on tmpfs, written
#           once, port trtype rdma, or tcp: nvmet-tcp), `nvme connect -t
#           rdma|tcp` on guest1; fio O_DIRECT: 128 KiB sequential read
#           and write at QD16, 4 KiB random reads at QD16
#   nfs     nfsd (NFSv3) on guest0 exporting a tmpfs, with the RDMA
#           listener ("rdma 20049" in /proc/fs/nfsd/portlist) or TCP
#           only; guest1 mounts it proto=rdma or proto=tcp; dd of
#           CONS_NFS_MIB MiB, O_DIRECT, 1 MiB blocks, write then read
#   iser    LIO on guest0 (the same kind of LUN) with an iSER portal, or
#           a plain iSCSI one for tcp; open-iscsi on guest1 with the
#           iser transport (or tcp); fio 128 KiB sequential read and write
# Each fio run lasts CONS_SECS (default 10) seconds.
#
# For each transport and consumer the guests meet through the lab's
# shared folder: the target sets up and says so (T.C.tgt: "ok" or why
# not), the initiator connects, measures, disconnects and says so
# (T.C.ini), then the target tears down (T.C.gone): the initiator's side
# always goes first.  Every wait is bounded.  A failed measurement prints
# its reason and gives a "-" row; the others still run.
#
# Output: KTAP, and lines the host driver collects:
#   CONS-ROW: transport,test,MB/s,note   printed by the initiator, one
#                                        per measurement (note: why it
#                                        failed)
#   CONS-INFO: guest,name,value          the path (NIC, MTU, memory ...)
#   CONS-FACT: guest,transport,name,delta   what a transport's block
#                                        moved: the RDMA device's
#                                        counters that changed, UDP's
#                                        errors and the NIC's drops
# Configuration (environment; consumers_lab.sh passes it with --env):
# CONS_SECS, CONS_NFS_MIB (64), CONS_DISK_MIB (256), CONS_ONLY,
# CONS_TRANSPORTS (default "eroce rxe tcp").
set -u -o pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$HERE/../lib_rdma.sh"
# shellcheck source=../lib_lab.sh
. "$HERE/../lib_lab.sh"
# shellcheck source=../lib_consumers.sh
. "$HERE/../lib_consumers.sh"

SECS=${CONS_SECS:-10}
NFS_MIB=${CONS_NFS_MIB:-64}
DISK_MIB=${CONS_DISK_MIB:-256}
ONLY=${CONS_ONLY:-nvme nfs iser}
TRANSPORTS=${CONS_TRANSPORTS:-eroce rxe tcp}
NQN=nqn.2026-12.org.eroce:lab
IQN=iqn.2026-12.org.eroce:lab
BACKING=/dev/shm/eroce-cons.img
TMP=$RDMA_TMP/cons
EXPORT=$TMP/export
MNT=$TMP/mnt
# seconds the initiator waits for the target's setup, and the target for
# the initiator's measurements of one consumer (connect, up to three
# measurements, disconnect), before giving up (times the debug
# multiplier, in lab_wait)
SETUP_T=300
INI_T=$((3 * (SECS + 120) + 2 * 300 + 300))
TGT_IP=
INI_IP=
# the transport being measured and its RDMA device (none for tcp)
T=
DEV=
FAILS=0

say() { echo "# $*"; }

is_target() { [ "$LAB_I" = 0 ]; }

# tests C: the measurements of consumer C
tests() {
	case "$1" in
	nvme) echo nvme_seq_read_128k nvme_seq_write_128k nvme_rand_read_4k ;;
	nfs) echo nfs_write_1m nfs_read_1m ;;
	iser) echo iser_seq_read_128k iser_seq_write_128k ;;
	esac
}

# row TEST MBS [NOTE]: one measurement of transport T (initiator)
row() {
	local note=${3:-}
	[ -n "$2" ] || note=${note:-failed}
	[ -n "$2" ] || FAILS=$((FAILS + 1))
	echo "CONS-ROW: $T,$1,${2:--},$(tr ',\n' '; ' <<<"$note" | sed 's/[; ]*$//' | cut -c1-160)"
}

# rows_failed C WHY: a "-" row for each measurement of consumer C
rows_failed() {
	local t
	say "$T $1 not measured: $2"
	for t in $(tests "$1"); do
		row "$t" "" "$2"
	done
}

info() {
	echo "CONS-INFO: $LAB_I,$1,$(tr ',\n' '; ' <<<"$2" | sed 's/[; ]*$//')"
}

mem_avail_mib() {
	awk '$1 == "MemAvailable:" { print int($2 / 1024) }' /proc/meminfo
}

# ---- measurements (initiator) -------------------------------------------------

# fio_mbs DEV RW BS: MB/s of one time-based fio run on /dev/DEV; on
# failure the reason on stderr
# shellcheck disable=SC2317  # called through measure
fio_mbs() {
	local out=$TMP/fio.json rc=0
	timeout -k 5 $((SECS + 120)) fio --name=b --filename="/dev/$1" --direct=1 \
		--ioengine=libaio --rw="$2" --bs="$3" --iodepth=16 --size=200M \
		--time_based --runtime="$SECS" --ramp_time=1 --output-format=json \
		>"$out" 2>"$TMP/fio.err" || rc=$?
	if [ "$rc" != 0 ]; then
		echo "fio rc=$rc$([ "$rc" != 124 ] || echo ' (timed out)'): $(grep -m 1 -iE 'err|fail' "$TMP/fio.err")" >&2
		return 1
	fi
	python3 - "$out" <<-'EOF'
	import json, sys
	try:
	    j = json.load(open(sys.argv[1]))["jobs"][0]
	except Exception as e:
	    sys.exit("fio output unreadable: %s" % e)
	if j.get("error"):
	    sys.exit("fio error %d" % j["error"])
	print("%.1f" % ((j["read"]["bw"] + j["write"]["bw"]) / 1000.0))
	EOF
}

# dd_mbs ARGS...: MB/s that dd reports; on failure the reason on stderr
# shellcheck disable=SC2317  # called through measure
dd_mbs() {
	local out rc=0
	out=$(timeout -k 5 300 dd "$@" bs=1M 2>&1) || rc=$?
	if [ "$rc" != 0 ]; then
		echo "dd rc=$rc$([ "$rc" != 124 ] || echo ' (timed out)'): $(tail -n 1 <<<"$out")" >&2
		return 1
	fi
	awk '/copied/ { v = $(NF - 1); u = $NF
		if (u ~ /^GB/) v *= 1000; else if (u ~ /^kB/) v /= 1000
		printf "%.1f\n", v }' <<<"$out"
}

# measure TEST CMD...: CMD prints MB/s; a row either way, with the reason
# when it failed
measure() {
	local t=$1 v t0=$SECONDS why; shift
	if v=$("$@" 2>"$TMP/measure.err") && [ -n "$v" ]; then
		row "$t" "$v"
	else
		why=$(tail -n 1 "$TMP/measure.err")
		say "$T $t failed: ${why:-no figure}"
		row "$t" "" "${why:-no figure}"
	fi
	say "$T $t took $((SECONDS - t0)) s"
}

# ini_nvme: NVMe-oF (or NVMe/TCP) from the initiator
ini_nvme() {
	local tr=rdma dev
	[ "$T" != tcp ] || tr=tcp
	if ! modprobe -a "nvme-$tr"; then
		rows_failed nvme "no nvme-$tr module"
		return
	fi
	if ! run nvme_host_connect "$NQN" "$TGT_IP" "$INI_IP" "$tr"; then
		rows_failed nvme "nvme connect -t $tr failed: $(tail -n 1 <<<"$LAST_OUT")"
		# connected but without its namespace: let go of it
		nvme_host_disconnect "$NQN" >/dev/null 2>&1
		return
	fi
	dev=$(nvme_dev "$NQN")
	measure nvme_seq_read_128k fio_mbs "$dev" read 128k
	measure nvme_seq_write_128k fio_mbs "$dev" write 128k
	measure nvme_rand_read_4k fio_mbs "$dev" randread 4k
	run nvme_host_disconnect "$NQN" || say "$T nvme disconnect failed: $(tail -n 1 <<<"$LAST_OUT")"
}

# ini_nfs: NFSv3 over RDMA (or TCP) from the initiator
ini_nfs() {
	local proto=rdma src=$TMP/nfs.src
	[ "$T" != tcp ] || proto=tcp
	if ! modprobe -a nfs nfsv3 || { [ "$proto" = rdma ] && ! modprobe rpcrdma; }; then
		rows_failed nfs "no NFS client modules for $proto"
		return
	fi
	if ! run nfs_mount "$proto" "$TGT_IP" "$EXPORT" "$MNT"; then
		rows_failed nfs "mount proto=$proto failed: $(tail -n 1 <<<"$LAST_OUT")"
		return
	fi
	head -c $((NFS_MIB << 20)) /dev/urandom >"$src"
	measure nfs_write_1m dd_mbs if="$src" of="$MNT/f" oflag=direct conv=fsync
	measure nfs_read_1m dd_mbs if="$MNT/f" of=/dev/null iflag=direct
	rm -f "$src" "$MNT/f"
	timeout -k 5 "$(tmo 120)" umount "$MNT" || say "$T nfs umount failed"
}

# ini_iser: iSER (or iSCSI over TCP) from the initiator
ini_iser() {
	local tr=iser portal=$TGT_IP:3260 dev
	[ "$T" != tcp ] || tr=tcp
	if ! modprobe -a "$([ "$tr" = iser ] && echo ib_iser || echo iscsi_tcp)" sd_mod ||
		! command -v iscsiadm >/dev/null; then
		rows_failed iser "no $tr initiator here (ib_iser or iscsi_tcp, iscsiadm)"
		return
	fi
	iscsid_start "$TMP/iscsid.log"
	if ! iser_discovered "$IQN" "$portal"; then
		rows_failed iser "SendTargets discovery at $portal found no $IQN"
	elif ! run iscsi_login "$IQN" "$portal" "$tr" || ! wait_for 30 iser_disk; then
		rows_failed iser "login with transport $tr failed: $(tail -n 1 <<<"$LAST_OUT") $(tail -n 1 "$TMP/iscsid.log")"
		iser_logout "$IQN" "$portal" >/dev/null 2>&1
	else
		dev=$(iser_disk)
		measure iser_seq_read_128k fio_mbs "$dev" read 128k
		measure iser_seq_write_128k fio_mbs "$dev" write 128k
		run iser_logout "$IQN" "$portal" || say "$T iscsi logout failed: $(tail -n 1 <<<"$LAST_OUT")"
	fi
	iscsid_stop
}

# ---- targets (guest0) ------------------------------------------------------------

# backing: a DISK_MIB file on tmpfs, written (reads see data, not holes),
# when the memory allows it (with 128 MiB to spare)
# shellcheck disable=SC2317  # called through run
backing() {
	local avail
	avail=$(mem_avail_mib)
	if [ "$avail" -lt $((DISK_MIB + 128)) ]; then
		echo "MemAvailable $avail MiB: no room for a $DISK_MIB MiB LUN (CONS_LAB_MEM, CONS_DISK_MIB)"
		return 1
	fi
	dd if=/dev/zero of="$BACKING" bs=1M count="$DISK_MIB" status=none
}

# shellcheck disable=SC2317  # called through run
tgt_nvme() {
	local tr=rdma
	[ "$T" != tcp ] || tr=tcp
	modprobe -a nvmet "nvmet-$tr" && backing &&
		nvmet_export "$NQN" "$BACKING" "${DISK_MIB}M" "$TGT_IP" "$tr"
}

# shellcheck disable=SC2317  # called through run
tgt_nvme_down() {
	nvmet_unexport "$NQN" "$BACKING"
}

# shellcheck disable=SC2317  # called through run
tgt_nfs() {
	local proto=rdma
	[ "$T" != tcp ] || proto=tcp
	modprobe -a nfsd && { [ "$proto" = tcp ] || modprobe rpcrdma; } &&
		nfs_server_start "$EXPORT" "${TGT_IP%.*}.0/24" "$proto"
}

# shellcheck disable=SC2317  # called through run
tgt_nfs_down() {
	nfs_server_stop "$EXPORT"
}

# shellcheck disable=SC2317  # called through run
tgt_iser() {
	local tr=iser
	[ "$T" != tcp ] || tr=tcp
	{ [ "$tr" = tcp ] || modprobe ib_isert; } && backing &&
		iser_target_setup "$IQN" "$TGT_IP:3260" "$BACKING" "$DISK_MIB" "$tr"
}

# shellcheck disable=SC2317  # called through run
tgt_iser_down() {
	iser_target_teardown "$IQN" "$TGT_IP:3260" "$BACKING"
	[ "$T" = tcp ] || modprobe -r ib_isert
}

# tgt_up C, tgt_down C: set consumer C's target up, tear it down
# shellcheck disable=SC2317  # called through run
tgt_up() {
	case "$1" in
	nvme) tgt_nvme ;;
	nfs) tgt_nfs ;;
	iser) tgt_iser ;;
	esac
}

# shellcheck disable=SC2317  # called through run
tgt_down() {
	case "$1" in
	nvme) tgt_nvme_down ;;
	nfs) tgt_nfs_down ;;
	iser) tgt_iser_down ;;
	esac
}

# ---- one consumer on one transport ------------------------------------------------

# consumer C: the target sets C up, the initiator measures, the initiator
# tears down its side, then the target its own
consumer() {
	local c=$1 v t0=$SECONDS
	if is_target; then
		if run tgt_up "$c"; then
			lab_signal "$T.$c.tgt" ok
			info "mem_avail_mib_${T}_$c" "$(mem_avail_mib)"
		else
			v="target setup failed: $(tail -n 2 <<<"$LAST_OUT" | tr '\n' ' ')"
			say "$T $c: $v"
			lab_signal "$T.$c.tgt" "$v"
		fi
		lab_wait "$T.$c.ini" "$INI_T" 1 || say "$T $c: the initiator did not finish; tearing down anyway"
		run tgt_down "$c" || say "$T $c: target teardown: $(tail -n 2 <<<"$LAST_OUT" | tr '\n' ' ')"
		lab_signal "$T.$c.gone"
	else
		v=$(lab_get "$T.$c.tgt" 0 "$SETUP_T" 2>&1) || v="no word from the target: $v"
		if [ "$v" != ok ]; then
			rows_failed "$c" "$v"
		else
			case "$c" in
			nvme) ini_nvme ;;
			nfs) ini_nfs ;;
			iser) ini_iser ;;
			esac
		fi
		lab_signal "$T.$c.ini"
		lab_wait "$T.$c.gone" 300 0 || say "$T $c: the target did not tear down"
	fi
	say "$T $c took $((SECONDS - t0)) s"
}

# ---- transports --------------------------------------------------------------------

# shellcheck disable=SC2317  # called through run
link_up() {
	case "$1" in
	eroce) eroce_load && provider_install && lab_rdma_link eroce0 eroce ;;
	rxe) rxe_load && lab_rdma_link rxe0 rxe ;;
	esac
}

# shellcheck disable=SC2317  # called through run
link_down() {
	case "$1" in
	eroce) rdma link del eroce0 && wait_for 30 rdma_dev_gone eroce0 && eroce_unload ;;
	rxe) rdma link del rxe0 && wait_for 30 rdma_dev_gone rxe0 && modprobe -r rdma_rxe ;;
	esac
}

# snap FILE: the counters of this block: the RDMA device's, UDP's, the NIC's
snap() {
	{
		[ -z "$DEV" ] || stat_all "$DEV/1" | sed 's/^/rdma_/'
		awk '$1 == "Udp:" && $2 !~ /^[0-9]+$/ { for (i = 2; i <= NF; i++) c[i] = $i; next }
			$1 == "Udp:" { for (i = 2; i <= NF; i++) if (c[i] ~ /Errors|NoPorts/) print "udp_" c[i], $i }' /proc/net/snmp
		for c in rx_dropped tx_dropped rx_errors tx_errors; do
			echo "link_$c $(read_file "/sys/class/net/$LAB_IF/statistics/$c")"
		done
	} >"$1"
}

# facts FILE: what moved since FILE, as CONS-FACT lines
facts() {
	local name d
	snap "$TMP/snap.now"
	while read -r name d; do
		echo "CONS-FACT: $LAB_I,$T,$name,$d"
	done < <(awk 'NR == FNR { b[$1] = $2; next } ($1 in b) && $2 != b[$1] { print $1, $2 - b[$1] }' \
		"$1" "$TMP/snap.now")
}

# block TRANSPORT: every consumer of ONLY over TRANSPORT
block() {
	local ok=ok v c t0=$SECONDS
	T=$1 DEV=
	if ! run link_up "$T"; then
		ok="$T setup failed on guest$LAB_I: $(tail -n 2 <<<"$LAST_OUT" | tr '\n' ' ')"
		say "$ok"
	fi
	lab_signal "$T.up" "$ok"
	v=$(lab_get "$T.up" "$(lab_peer)" "$SETUP_T" 2>&1) || v="no word from guest$(lab_peer): $v"
	if [ "$ok" = ok ] && [ "$v" = ok ]; then
		[ "$T" = tcp ] || DEV=${T}0
		snap "$TMP/snap.$T"
		for c in $ONLY; do
			consumer "$c"
		done
		facts "$TMP/snap.$T"
	else
		[ "$ok" = ok ] && ok=$v
		if ! is_target; then
			for c in $ONLY; do
				rows_failed "$c" "$ok"
			done
		fi
	fi
	lab_barrier "$T.done" "$SETUP_T" >/dev/null || say "$T: guest$(lab_peer) did not finish its block"
	run link_down "$T" || say "guest$LAB_I: $T teardown: $(tail -n 2 <<<"$LAST_OUT" | tr '\n' ' ')"
	say "$T block took $((SECONDS - t0)) s"
	DEV=
}

path_info() {
	info driver "$(ethtool -i "$LAB_IF" 2>/dev/null | awk -F': ' '$1 == "driver" { print $2 }')"
	info mtu "$(read_file "/sys/class/net/$LAB_IF/mtu")"
	info offloads "$(ethtool -k "$LAB_IF" 2>/dev/null | awk -F': ' '
		/^(rx-checksumming|tx-checksumming|tcp-segmentation-offload|generic-receive-offload|tx-udp-segmentation):/ {
			printf "%s %s ", $1, $2 }')"
	info cpus "$(nproc)"
	info mem_total_mib "$(awk '$1 == "MemTotal:" { print int($2 / 1024) }' /proc/meminfo)"
	info mem_avail_mib "$(mem_avail_mib)"
	info kernel "$(uname -r)"
}

main() {
	local start=$SECONDS t

	mkdir -p "$TMP"
	ktap_plan 3
	[ "$LAB_N" = 2 ] || ktap_bail "the bench needs 2 guests, has $LAB_N"
	if lab_setup >"$TMP/lab_setup.out" 2>&1; then
		ktap_ok nic_up
	else
		ktap_diag "$(tail -n 5 "$TMP/lab_setup.out")"
		ktap_bail "NIC setup failed"
	fi
	TGT_IP=$(lab_ip 0)
	INI_IP=$(lab_ip 1)
	# shellcheck disable=SC2086  # $PING may be "busybox ping"
	if lab_barrier up >/dev/null && $PING -c 3 -W 5 "$(lab_ip "$(lab_peer)")" >/dev/null; then
		ktap_ok peer_reachable
	else
		ktap_bail "peer $(lab_ip "$(lab_peer)") not reachable"
	fi
	say "guest$LAB_I: $(is_target && echo target || echo initiator); transports '$TRANSPORTS', consumers '$ONLY', secs=$SECS nfs_mib=$NFS_MIB disk_mib=$DISK_MIB"
	path_info
	for t in $TRANSPORTS; do
		block "$t"
	done
	say "guest$LAB_I: done in $((SECONDS - start)) s"
	if is_target; then
		ktap_ok measurements
	else
		ktap_result measurements "$([ "$FAILS" = 0 ]; echo $?)" "$FAILS measurements failed"
	fi
	ktap_finish
}

main
