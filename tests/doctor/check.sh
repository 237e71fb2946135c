#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# check.sh: tests/doctor's two suites, each shown as it runs:
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

# suite CMD...: run it, add its closing line's counts
suite() {
	local out rc=0 last
	out=$("$@" 2>&1 | tee /dev/stderr) || rc=$?
	last=$(tail -n 1 <<<"$out")
	if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]; then
		P=$((P + BASH_REMATCH[1]))
		F=$((F + BASH_REMATCH[2]))
		S=$((S + ${BASH_REMATCH[4]:-0}))
		if [ $rc != 0 ] && [ "${BASH_REMATCH[2]}" = 0 ]; then
			echo "# $*: exit status $rc with nothing failed" >&2
			F=$((F + 1))
		fi
	else
		echo "# $*: no closing line (exit status $rc)" >&2
		F=$((F + 1))
	fi
}

suite "$DIR/doctor.sh"
suite /usr/bin/python3 "$DIR/path.py"
echo "$P passed, $F failed, $S skipped"
[ "$F" = 0 ]
