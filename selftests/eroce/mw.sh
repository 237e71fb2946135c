#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 300
#
# mw.sh: memory windows (ibv_alloc_mw, ibv_bind_mw, IBV_WR_BIND_MW,
# IBV_WR_LOCAL_INV and SEND with Invalidate of a window's rkey).  Driver:
# selftests/tools/eroce_mw (one process, RC QP A on eroce1 reaching memory
# of B on eroce2 through the windows B binds to an MR registered with
# IBV_ACCESS_MW_BIND), each "result:" line one subtest:
#   - caps: eroce2 shows IBV_DEVICE_MEM_WINDOW and _TYPE_2B, max_mw > 0.
#   - type1_bind, type1_data: ibv_bind_mw() of a type 1 window to 8 KiB of
#     the MR completes with IBV_WC_BIND_MW and a new rkey; A's WRITE
#     through it lands there byte for byte and nowhere else, A's READ
#     brings it back.
#   - type1_bounds: WRITEs ending one byte past the window and starting
#     one byte before it: IBV_WC_REM_ACCESS_ERR, memory untouched.
#   - type1_rights: a window bound for REMOTE_READ only serves READs and
#     refuses WRITEs (IBV_WC_REM_ACCESS_ERR).
#   - type1_rebind, type1_unbind: bound again elsewhere, the new rkey
#     lands there and the old one is refused; unbound (no MR), the rkey
#     is refused.
#   - type2_bind: a type 2 window bound by IBV_WR_BIND_MW with
#     ibv_inc_rkey() of its rkey: WRITE and READ through it work.
#   - type2_local_inv, type2_remote_inv: IBV_WR_LOCAL_INV completes as
#     IBV_WC_LOCAL_INV; A's SEND with Invalidate reaches B's receive with
#     IBV_WC_WITH_INV and the rkey; either way the rkey is refused after.
#   - type2_double_bind: binding a window that is still bound completes
#     with IBV_WC_MW_BIND_ERR.
#   - type2_zero_based: IBV_ACCESS_ZERO_BASED, remote addresses 0 and 100
#     land at the window's start and 100 bytes into it.
#   - no_bind_type1, no_bind_type2: a window on an MR without
#     IBV_ACCESS_MW_BIND is not bound, and its rkey opens nothing.
#   - dereg_busy: ibv_dereg_mr() of an MR under a bound window is EBUSY
#     and the MR keeps working; after ibv_dealloc_mw() it goes.
#   - type2_zero_length: a type 2 bind of length 0 is IBV_WC_MW_BIND_ERR.
#   - lw_type1, lw_type1_unbind, lw_type2_local_inv, lw_type2_remote_inv,
#     lw_wr_bind_mw: windows with remote write (and atomic) rights on an MR
#     registered with IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND alone
#     (IBA C10-74: a window's remote write or atomic right needs local
#     write on the MR, not the remote right) are bound by ibv_bind_mw(),
#     IBV_WR_BIND_MW and ibv_wr_bind_mw(), take A's WRITE and FETCH_ADD,
#     and die by a zero-length bind (which lets the MR go), LOCAL_INV,
#     SEND with Invalidate and ibv_dealloc_mw().
#   - no_local_write: on an MR without local write a remote write window
#     is IBV_WC_MW_BIND_ERR, a read-only window is bound and serves READs.
#   - mw_binds_counter: eroce2's mw_binds counter moved by at least the 15
#     binds eroce_mw makes that succeed.
# Run: selftests/run_vm.sh selftests/eroce/mw.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_mw"
MW_BINDS=15	# the binds eroce_mw makes that succeed

# mw_binds_counted: eroce2 counted at least eroce_mw's successful binds
mw_binds_counted() {
	local d
	d=$(stat_delta eroce2 "$SNAP2" mw_binds) || return 1
	[ "$d" -ge "$MW_BINDS" ] ||
		{ echo "mw_binds +$d, not at least $MW_BINDS"; return 1; }
}

ktap_plan 24
require eroce_pair_setup
require pair_gids
pair_gids
require test -x "$TOOL"
SNAP1=$(mktemp "$RDMA_TMP/mw.XXXXXX")
SNAP2=$(mktemp "$RDMA_TMP/mw.XXXXXX")
kmsg_mark

stat_snap eroce1 "$SNAP1"
stat_snap eroce2 "$SNAP2"
ktap_results mw 22 timeout -k 5 150 "$TOOL" eroce1 "$G1" eroce2 "$G2"
ktap_check mw_binds_counter mw_binds_counted
ktap_diag "eroce1: $(stat_changes eroce1 "$SNAP1")"
ktap_diag "eroce2: $(stat_changes eroce2 "$SNAP2")"

ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
rm -f "$SNAP1" "$SNAP2"
ktap_finish
