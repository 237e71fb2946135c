#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kunit.sh: the KUnit suite eroce_pure (tests/kunit/eroce_kunit.ko: the
# userspace unit tests of tests/unit on the module's pure-logic files) in
# the debug kernel's guest.  Loads the module, which runs the suite, reads
# the suite's KTAP back from the kernel log and reports one subtest per
# KUnit case, then one for the suite's own result and one for unloading.
# Run by scripts/check-debug.sh through selftests/run_vm.sh --kernel; the
# module is the one it built in out/debug/kunit (EROCE_KUNIT_KO overrides).
set -u -o pipefail
. "$(dirname "$0")/../../selftests/lib.sh"

KO=${EROCE_KUNIT_KO:-$EROCE_ROOT/out/debug/kunit/tests/kunit/eroce_kunit.ko}
SUITE=eroce_pure

[ -f "$KO" ] || { ktap_plan 1; ktap_fail load "no $KO (scripts/check-debug.sh)"; ktap_finish; }
[ -d /sys/kernel/debug/kunit ] || [ -e /sys/module/kunit ] ||
	{ ktap_plan 1; ktap_fail load "this kernel has no KUnit"; ktap_finish; }

kmsg_mark
if ! run insmod "$KO"; then
	ktap_plan 1
	ktap_fail load "insmod: $LAST_OUT"
	ktap_finish
fi
# the suite runs inside insmod; its KTAP is in the log once insmod returns
LOG=$(dmesg_since_mark | sed 's/^\[[ 0-9.]*\] //')

# the suite's cases: "ok N eroce_kunit_psn" lines indented under its
# "# Subtest: eroce_pure"; the suite's own line is not indented
CASES=$(awk -v s="$SUITE" '
	$0 ~ "# Subtest: " s "$" { on = 1; next }
	on && /^[ \t]+(ok|not ok) [0-9]+ / { print; next }
	on && /^(ok|not ok) [0-9]+ / { exit }' <<<"$LOG")
SUITE_LINE=$(grep -E "^(ok|not ok) [0-9]+ (- )?$SUITE\$" <<<"$LOG" | tail -n 1)

ktap_plan $(($(grep -c . <<<"$CASES") + 2))
while read -r status rest; do
	[ -n "$status" ] || continue
	if [ "$status" = ok ]; then
		set -- $rest
		ktap_ok "${2#eroce_kunit_}"
	else
		set -- ${rest#ok }
		# the case's failure messages, as KUnit logged them
		ktap_diag "$(awk -v c="$2" '$0 ~ "# " c ": " { print }' <<<"$LOG" |
			grep -v ' ok  ' | head -n 20)"
		ktap_fail "${2#eroce_kunit_}" "KUnit case failed"
	fi
done <<<"$CASES"
if [[ "$SUITE_LINE" == ok* ]]; then
	ktap_ok suite
else
	ktap_diag "$(grep -v '^eroce-selftest-mark' <<<"$LOG" | tail -n 30)"
	ktap_fail suite "no passing '$SUITE' result in the kernel log: '${SUITE_LINE}'"
fi
ktap_check unload rmmod eroce_kunit
ktap_finish
