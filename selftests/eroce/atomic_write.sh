#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 200
#
# atomic_write.sh: ATOMIC WRITE (IBA 1.5, ibv_wr_atomic_write()) between
# eroce1 and eroce2.  Driver: selftests/tools/eroce_atomic_write (one
# process, RC QP A on eroce1 storing into B's MR on eroce2), each
# "result:" line one subtest:
#   - post_send, wr_atomic_write: 8 bytes stored through ibv_post_send()
#     and through ibv_wr_atomic_write() complete with IBV_WC_ATOMIC_WRITE
#     and land exactly, the bytes around them untouched.
#   - burst: 32 posted at once, more than max_rd_atomic (4) lets out
#     together, all complete in order and land.
#   - misaligned: a remote address not 8-byte aligned is EINVAL at once.
#   - wr_bind_mw: the other ibv_qp_ex work requests eroce adds: A binds
#     a type 2 window on its memory with ibv_wr_bind_mw(), B's WRITE
#     through it lands, ibv_wr_local_inv() kills it and B's next WRITE
#     draws IBV_WC_REM_ACCESS_ERR.
#   - no_write_right: into an MR without remote write:
#     IBV_WC_REM_ACCESS_ERR, memory unchanged.
#   - on_the_wire: on veth1 each went out as RC opcode 0x1d (BTH, RETH and
#     8 bytes) and was answered by a READ RESPONSE ONLY without data
#     (UDP length 28: its header, BTH, AETH, ICRC), as rdma_rxe does
#     from Linux 6.2 on.
# Run: selftests/run_vm.sh selftests/eroce/atomic_write.sh
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_atomic_write"
PCAP="$RDMA_TMP/atomic_write.pcap"

# opcodes OP [AND...]: how many captured frames carry BTH opcode OP
opcodes() {
	tshark -r "$PCAP" -d udp.port==4791,infiniband \
		-Y "infiniband.bth.opcode == $1" 2>/dev/null | wc -l
}

# on_the_wire: the 35 ATOMIC WRITEs the tool sends (the misaligned one
# never leaves) went out as opcode 0x1d, and 34 were answered by a READ
# RESPONSE ONLY (0x10) without data (the refused one by a NAK)
on_the_wire() {
	local aw rsp
	cap_stop
	aw=$(opcodes 0x1d)
	rsp=$(opcodes "0x10 && udp.length == 28")
	echo "ATOMIC WRITE frames $aw, empty READ RESPONSE ONLY frames $rsp"
	[ "$aw" -ge 35 ] && [ "$rsp" -ge 34 ]
}

ktap_plan 9
require eroce_pair_setup
require pair_gids
pair_gids
require test -x "$TOOL"
kmsg_mark
# not through ktap_check: its command substitution would lose CAP_PID
cap_start "$NS1" veth1 "$PCAP"
ktap_result capture_started $? "dumpcap did not start: $(cat "$RDMA_TMP/dumpcap.err")"
ktap_results aw 6 timeout -k 5 150 "$TOOL" eroce1 "$G1" eroce2 "$G2"
ktap_check on_the_wire on_the_wire
ktap_check dmesg_clean eval '! dmesg_since_mark | grep -E "WARNING:|BUG:|Oops"'
ktap_finish
