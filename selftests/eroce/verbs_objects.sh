#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# verbs_objects.sh: runs selftests/tools/eroce_objects (verbs object
# create/destroy through the provider: PD, CQ, QP, MR, ...) against an
# eroce device (`eroce_objects -d eroce0`) and forwards its KTAP as a
# nested subtest.  Build it with `make -C selftests/tools` (scripts/check.sh
# does).
#
#   veth0 198.18.0.1/24 2001:db8::1/64 <-> veth1 198.18.0.2/24   (eroce0)
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TOOL="$EROCE_ROOT/selftests/tools/eroce_objects"

setup() {
	modprobe veth &&
		veth_add "" veth0 "" veth1 &&
		addr_add "" veth0 198.18.0.1/24 2001:db8::1/64 &&
		addr_add "" veth1 198.18.0.2/24
}

run_tool() {
	local rc

	echo "    # Subtest: eroce_objects"
	"$TOOL" -d eroce0 2>&1 |
		sed -u 's/^/    /'
	rc=${PIPESTATUS[0]}
	ktap_result eroce_objects "$rc" "eroce_objects exit status $rc"
}

ktap_plan 5
require setup
ktap_check load_module eroce_load
ktap_check provider_installed provider_install
ktap_check link_add eval 'rdma link add eroce0 type eroce netdev veth0 &&
	wait_for 10 port_state_is eroce0 "4: ACTIVE"'
if [ ! -x "$TOOL" ]; then
	ktap_fail eroce_objects "$TOOL not built"
else
	run_tool
fi
ktap_check link_del_and_rmmod eval 'rdma link del eroce0 && eroce_unload'
ktap_finish
