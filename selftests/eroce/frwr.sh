#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# frwr.sh: fast registration for kernel consumers.  The test module
# selftests/kmod/eroce_kfrwr.ko (see its header) registers memory on
# eroce2 with ib_alloc_mr(), ib_map_mr_sg() and IB_WR_REG_MR, reads and
# writes it from eroce1 through the rkey (data compared byte for byte),
# and kills the key with IB_WR_LOCAL_INV and with SEND with Invalidate;
# every access through a dead, stale, foreign or read-only key, a second
# REG_MR of a valid MR, an unknown key to invalidate and the verbs'
# limits must fail as the verbs say, memory untouched.  Each of its
# checks is a subtest here; the device counters must have seen it all.
#
#   init: nve1 198.18.4.1 (eroce1, initiator) <-> nve2 198.18.4.2 (eroce2)
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

KFRWR="${EROCE_KMOD_DIR:-$EROCE_ROOT/selftests/kmod}/eroce_kfrwr.ko"

CHECKS="setup reg_mr_completes reg_mr_sets_iova_length
	read_through_fast_reg_key write_through_fast_reg_key
	write_past_registration_fails reg_of_valid_mr_fails
	local_inv_wrong_key_fails local_inv_completes
	write_after_local_inv_fails reg_after_inv_new_key stale_key_fails
	reg_read_only write_to_read_only_fails reg_for_remote_inv
	send_with_inv_completes recv_with_invalidate
	read_after_remote_inv_fails send_with_inv_bad_key_fails
	recv_of_bad_inv_fails caps_mem_mgt_extensions
	alloc_mr_sg_gaps_unsupported alloc_mr_too_many_pages
	map_beyond_page_list reg_other_pd_fails"

# counter NAME: at least MIN more on LINK since the snapshot
counter_at_least() {
	local d
	d=$(stat_delta "$1" "$SNAP_DIR/$1" "$2") || return 1
	[ "$d" -ge "$3" ] || { echo "$1 $2 +$d, want at least $3"; return 1; }
}

ktap_plan 32
require eroce_routed_setup
require test -f "$KFRWR"
SNAP_DIR=$(mktemp -d "$RDMA_TMP/frwr.XXXXXX")
stat_snap eroce1 "$SNAP_DIR/eroce1"
stat_snap eroce2 "$SNAP_DIR/eroce2"
kmsg_mark
ktap_check kfrwr_loads timeout "$(tmo 150)" insmod "$KFRWR" dev_a=eroce1 \
	gid_a="$(gid_index_of eroce1 198.18.4.1)" dev_b=eroce2 \
	gid_b="$(gid_index_of eroce2 198.18.4.2)"
rmmod eroce_kfrwr 2>/dev/null
LOG=$(dmesg_since_mark | grep -o 'eroce_kfrwr: .*')
for c in $CHECKS; do
	if grep -qx "eroce_kfrwr: ok $c" <<<"$LOG"; then
		ktap_ok "$c"
	elif line=$(grep -m1 "^eroce_kfrwr: not ok $c:" <<<"$LOG"); then
		ktap_fail "$c" "${line#eroce_kfrwr: not ok }"
	else
		ktap_fail "$c" "not run"
	fi
done
ktap_check counted_fast_regs counter_at_least eroce2 fast_reg_mrs 4
ktap_check counted_local_invalidations counter_at_least eroce2 local_invalidations 3
ktap_check counted_remote_invalidations counter_at_least eroce2 remote_invalidations 1
ktap_check counted_local_op_errors counter_at_least eroce2 local_op_errors 3
ktap_check counted_remote_inv_errors counter_at_least eroce2 remote_invalidate_errors 1
ktap_check counted_access_naks counter_at_least eroce2 remote_access_naks_sent 5
ktap_diag "eroce1: $(stat_changes eroce1 "$SNAP_DIR/eroce1")"
ktap_diag "eroce2: $(stat_changes eroce2 "$SNAP_DIR/eroce2")"
rm -rf "$SNAP_DIR"
ktap_finish
