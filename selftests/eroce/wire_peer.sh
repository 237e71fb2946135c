#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 300
#
# wire_peer.sh: the sender (requester and matching of responses) against a
# scripted responder.
# eroce1 sits on ns1/veth1; veth2 in ns2 has no eroce device.  There
# selftests/tools/eroce_wire_peer.py answers for a QPN no device holds: it
# takes eroce1's requests from UDP port 4791 and forges, from an AF_PACKET
# socket, exactly the ACKs, NAKs, read responses and atomic ACKs each
# scenario needs, in its order (selftests/tools/eroce_wirereq drives the
# QP).  The scenarios are the transport bugs that tests/unit/fuzz_recv
# found, on the real module:
#
#   - a sequence NAK that arrives again, late, after the READ behind the
#     SEND it names was answered out of order, must be dropped: going
#     back to it sent the READ at the SEND's PSN, answered one packet off
#     (every READ request on the wire must agree with itself, and the
#     data must be right);
#   - a read response or an atomic ACK for a PSN never sent must complete
#     nothing (it completed the SEND before it, unacknowledged);
#   - a 2 GiB READ at MTU 256 (2^23 response PSNs, half the PSN space)
#     completes with IBV_WC_LOC_LEN_ERR and never reaches the wire.
#
# Then the kernel log must be clean.
#
#   ns1: veth1 198.18.0.1 (eroce1) <-> ns2: veth2 198.18.0.2 (no device)
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

TOOLS="$EROCE_ROOT/selftests/tools"
PY=/usr/bin/python3

# eroce1 on veth1 alone: its peer's side is the script's
# shellcheck disable=SC2317  # called through require
eroce_one_link_setup() {
	eroce_load && provider_install && two_ns_setup &&
		ns1 rdma link add eroce1 type eroce netdev veth1 &&
		wait_for 30 port_state_is eroce1 "4: ACTIVE" &&
		wait_for 30 has_gid eroce1 "$(ipv4_gid 198.18.0.1)"
}

test_scripted_peer() {
	local rc

	echo "    # Subtest: eroce_wire_peer"
	ns2 "$PY" "$TOOLS/eroce_wire_peer.py" --iface veth2 \
		--dst-mac "$(ns1 cat /sys/class/net/veth1/address)" \
		--dev eroce1 --gid "$(gid_index_of eroce1 198.18.0.1)" 2>&1 |
		sed -u 's/^/    /'
	rc=${PIPESTATUS[0]}
	ktap_diag "eroce1: $(stat_all eroce1/1 | awk '$2 != 0 { printf "%s %s ", $1, $2 }')"
	ktap_result scripted_peer "$rc" "eroce_wire_peer.py exit status $rc"
}

ktap_plan 2
[ -x "$TOOLS/eroce_wirereq" ] ||
	ktap_bail "$TOOLS/eroce_wirereq not built (make -C selftests/tools)"
require eroce_one_link_setup
kmsg_mark
test_scripted_peer
ktap_kernel_log_clean
ktap_finish
