#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# check.sh: tests/doctor's two suites, run side by side, each's output
# shown when both are done:
#   doctor.sh  `eroce doctor` (config/eroce) on fake hosts
#   path.py    eroce-path (config/eroce-path): the wire, the verdicts, the
#              listener's control connection, and, as root, two network
#              namespaces joined by a veth
# The last line sums their closing lines: "N passed, N failed, N skipped";
# a suite without its closing line, or that exits non-zero with nothing
# failed, is one failure more.  Exits non-zero on any failure.
set -u -o pipefail

DIR=$(cd "$(dirname "$0")" && pwd -P)
P=0 F=0 S=0

# suite LOG CMD...: run it into LOG (with its exit status in LOG.rc)
suite() {
	local log=$1 rc=0
	shift
	"$@" >"$log" 2>&1 || rc=$?
	echo "$rc" >"$log.rc"
}

# counted NAME LOG: show LOG, add its closing line's counts
counted() {
	local rc last
	cat "$2"
	rc=$(cat "$2.rc" 2>/dev/null || echo '?')
	last=$(tail -n 1 "$2")
	if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]; then
		P=$((P + BASH_REMATCH[1]))
		F=$((F + BASH_REMATCH[2]))
		S=$((S + ${BASH_REMATCH[4]:-0}))
		if [ "$rc" != 0 ] && [ "${BASH_REMATCH[2]}" = 0 ]; then
			echo "# $1: exit status $rc with nothing failed"
			F=$((F + 1))
		fi
	else
		echo "# $1: no closing line (exit status $rc)"
		F=$((F + 1))
	fi
}

# the two at once: each spends most of its time waiting for processes
# it started
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
suite "$TMP/doctor" "$DIR/doctor.sh" &
suite "$TMP/path" /usr/bin/python3 "$DIR/path.py" &
wait
counted doctor.sh "$TMP/doctor"
counted path.py "$TMP/path"
echo "$P passed, $F failed, $S skipped"
[ "$F" = 0 ]
