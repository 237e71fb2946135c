#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
#
# iser.sh: iSCSI Extensions for RDMA on eroce.  A LIO target (targetcli)
# exports a file-backed LUN through an iSER portal on eroce2; open-iscsi
# logs in from eroce1 with the iser transport.  Both live in the initial
# namespace, on a policy-routed veth pair (eroce_routed_setup), and a rule
# sends the initiator's traffic to the portal out of nve1 with nve1's
# address, so rdma_cm binds the session to eroce1 and every PDU crosses
# the link.
#
#   init: nve1 198.18.4.1 (eroce1, initiator) <-> nve2 198.18.4.2 (eroce2)
#
# Discovery (over TCP), login with iface.transport_name iser, the SCSI
# disk written with random data and read back with O_DIRECT (checksums
# equal, and equal to the target's backing file), logout.  A kernel
# without the iSER modules (the debug kernel) skips it all.
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

IQN=iqn.2026-12.org.eroce:iser-test
PORTAL=198.18.4.2:3260
BACKING=/dev/shm/eroce-iser.img
# whether configfs was mounted before (target_setup runs in a subshell)
CF_WAS_MOUNTED=0
mountpoint -q /sys/kernel/config 2>/dev/null && CF_WAS_MOUNTED=1
SUBTESTS="target_iser_portal discovery login_iser session_is_iser
	disk_appears write_read_back_checksums target_file_matches
	initiator_fast_registered logout"

setup() {
	modprobe -a ib_isert ib_iser sd_mod && eroce_routed_setup any-src
}

# the target, through LIO's configfs: a fileio backstore, a TPG with one
# LUN, open to any initiator, and a portal with iSER on
target_setup() {
	local cf=/sys/kernel/config/target t
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return
	modprobe -a target_core_mod target_core_file iscsi_target_mod || return
	truncate -s 64M "$BACKING" &&
		mkdir -p "$cf/core/fileio_0/eroce0" &&
		echo "fd_dev_name=$BACKING,fd_dev_size=$((64 << 20))" >"$cf/core/fileio_0/eroce0/control" &&
		echo 1 >"$cf/core/fileio_0/eroce0/enable" || return
	t=$cf/iscsi/$IQN/tpgt_1
	mkdir -p "$t/lun/lun_0" &&
		ln -s "$cf/core/fileio_0/eroce0" "$t/lun/lun_0/eroce0" &&
		mkdir "$t/np/$PORTAL" &&
		echo 1 >"$t/np/$PORTAL/iser" &&
		echo 0 >"$t/attrib/authentication" &&
		echo 1 >"$t/attrib/generate_node_acls" &&
		echo 0 >"$t/attrib/demo_mode_write_protect" &&
		echo 1 >"$t/attrib/cache_dynamic_acls" &&
		echo 1 >"$t/enable" &&
		[ "$(cat "$t/np/$PORTAL/iser")" = 1 ]
}

target_teardown() {
	local cf=/sys/kernel/config/target t=/sys/kernel/config/target/iscsi/$IQN/tpgt_1
	echo 0 >"$t/enable" 2>/dev/null
	echo 0 >"$t/np/$PORTAL/iser" 2>/dev/null
	rmdir "$t/np/$PORTAL" 2>/dev/null
	rm -f "$t/lun/lun_0/eroce0"
	rmdir "$t/lun/lun_0" "$t" "$cf/iscsi/$IQN" 2>/dev/null
	rmdir "$cf/core/fileio_0/eroce0" "$cf/core/fileio_0" 2>/dev/null
	# LIO's iscsi directory and a mounted configfs keep their modules
	# loaded, which the next script in the same guest would inherit
	rmdir "$cf/iscsi" 2>/dev/null
	if [ "$CF_WAS_MOUNTED" = 0 ] && mountpoint -q /sys/kernel/config; then
		umount /sys/kernel/config
	fi
	rm -f "$BACKING"
}

# the SCSI disk of the session
iser_disk() {
	iscsiadm -m session -P 3 2>/dev/null |
		awk '/Attached scsi disk/ { print $4; found = 1; exit } END { exit !found }'
}

write_read_back() {
	local src=$RDMA_TMP/iser.src dst=$RDMA_TMP/iser.dst a b
	head -c "$(($1 << 20))" /dev/urandom >"$src" || return
	timeout "$(tmo 120)" dd if="$src" of="/dev/$DISK" bs=1M oflag=direct conv=fsync status=none || return
	timeout "$(tmo 120)" dd if="/dev/$DISK" of="$dst" bs=1M count="$1" iflag=direct status=none || return
	a=$(sha256sum <"$src") b=$(sha256sum <"$dst")
	echo "written ${a%% *}, read ${b%% *}"
	cp "$src" "$RDMA_TMP/iser.last"
	rm -f "$src" "$dst"
	[ "$a" = "$b" ]
}

target_file_matches() {
	local a b
	a=$(sha256sum <"$RDMA_TMP/iser.last")
	b=$(head -c "$(($1 << 20))" "$BACKING" | sha256sum)
	rm -f "$RDMA_TMP/iser.last"
	[ "$a" = "$b" ]
}

ktap_plan 9
if ! modprobe -n -q ib_isert || ! modprobe -n -q ib_iser ||
	! command -v iscsiadm >/dev/null; then
	for t in $SUBTESTS; do
		ktap_skip "$t" "no iSER here (ib_isert, ib_iser, iscsiadm)"
	done
	ktap_finish
fi
require setup
SNAP=$RDMA_TMP/iser.s1
stat_snap eroce1 "$SNAP"
ktap_check target_iser_portal target_setup
mkdir -p /run/lock/iscsi
# its own session: iscsid signals its process group when it stops
setsid iscsid -f >"$RDMA_TMP/iscsid.log" 2>&1 &
ISCSID=$!
wait_for 10 test -S /run/iscsid.sock -o -e /proc/$ISCSID
sleep 1
ktap_check discovery eval "timeout $(tmo 60) iscsiadm -m discovery -t st -p $PORTAL | grep -q '$IQN'"
iscsiadm -m node -T "$IQN" -p "$PORTAL" -o update -n iface.transport_name -v iser >/dev/null 2>&1
ktap_check login_iser timeout "$(tmo 90)" iscsiadm -m node -T "$IQN" -p "$PORTAL" --login
ktap_check session_is_iser eval "iscsiadm -m session | grep -q '^iser:'"
ktap_check disk_appears wait_for 30 iser_disk
DISK=$(iser_disk)
ktap_diag "disk: ${DISK:-none}"
[ -n "$DISK" ] || ktap_diag "$(iscsiadm -m session -P 3 2>&1 | tail -n 15)"
ktap_check write_read_back_checksums write_read_back "$(debug_scaled 16 4)"
ktap_diag "$LAST_OUT"
ktap_check target_file_matches target_file_matches "$(debug_scaled 16 4)"
ktap_check initiator_fast_registered stat_moved eroce1 "$SNAP" fast_reg_mrs
ktap_diag "eroce1: $(stat_changes eroce1 "$SNAP")"
ktap_check logout timeout "$(tmo 60)" iscsiadm -m node -T "$IQN" -p "$PORTAL" --logout
iscsiadm -m node -T "$IQN" -p "$PORTAL" -o delete >/dev/null 2>&1
kill "$ISCSID" 2>/dev/null
wait "$ISCSID" 2>/dev/null
target_teardown
rm -f "$SNAP"
ktap_finish
