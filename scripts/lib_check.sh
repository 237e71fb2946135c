# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# lib_check.sh: the bookkeeping check.sh and check-debug.sh share, sourced
# by both.  The caller sets CHECK_NAME (the prefix of its "# NAME: ..."
# lines) and may set CHECK_TEE=1 to show build steps' output as they run.
#   say MSG            one "# NAME: MSG" line
#   count P F [S]      add P passed, F failed and S skipped to PASSED,
#                      FAILED and SKIPPED
#   one_step NAME LOG CMD...
#                      a build step, 1 passed or 1 failed: a non-zero exit
#                      status or a "warning:" line in its output fails it
#   summed STAGE LOG RC
#                      add the closing "N passed, N failed[, N skipped]"
#                      line of a stage's LOG; exit status RC with no
#                      failure counted, or no such line, is a failure
#   failures           the failed steps and "not ok" lines gathered so
#                      far, one "# NAME: failed: ..." line each, for the
#                      end of the output where CI's excerpt shows them

PASSED=0
FAILED=0
SKIPPED=0
FAILURES=()

say() { echo "# $CHECK_NAME: $*"; }

count() {
	PASSED=$((PASSED + $1))
	FAILED=$((FAILED + $2))
	SKIPPED=$((SKIPPED + ${3:-0}))
}

one_step() {
	local name=$1 log=$2; shift 2
	local rc=0 start=$SECONDS

	if [ "${CHECK_TEE:-0}" = 1 ]; then
		"$@" 2>&1 | tee "$log" || rc=$?
	else
		"$@" >"$log" 2>&1 || rc=$?
	fi
	if [ $rc != 0 ]; then
		say "$name: FAILED (exit status $rc, log ${log#"$ROOT"/}):"
		FAILURES+=("$name (exit status $rc)")
		grep -E 'error:|Error [0-9]|build-debug-kernel:' "$log" | head -n 10 | sed 's/^/#   /'
		count 0 1
		return 1
	elif grep -Eiq '(^|[^a-z])warning:' "$log"; then
		say "$name: FAILED (warnings):"
		FAILURES+=("$name (warnings)")
		grep -Ei '(^|[^a-z])warning:' "$log" | sed 's/^/#   /'
		count 0 1
		return 1
	fi
	say "$name: ok ($((SECONDS - start)) s)"
	count 1 0
}

summed() {
	local stage=$1 log=$2 rc=$3 last p f s

	last=$(tail -n 1 "$log")
	if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]; then
		p=${BASH_REMATCH[1]}
		f=${BASH_REMATCH[2]}
		s=${BASH_REMATCH[4]:-0}
		if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
			say "$stage: exit status $rc with no failed test: counted as a failure"
			f=1
		fi
		count "$p" "$f" "$s"
		say "$stage: $p passed, $f failed, $s skipped"
		[ "$f" = 0 ] || not_ok_lines "$stage" "$log"
	else
		say "$stage: FAILED (exit status $rc, no 'N passed, N failed[, N skipped]' line)"
		FAILURES+=("$stage: no summary line (exit status $rc)")
		count 0 1
	fi
}

# not_ok_lines STAGE LOG: the KTAP "not ok" lines of LOG, innermost
# first as they appear, at most 20, into FAILURES
not_ok_lines() {
	local line n=0

	while IFS= read -r line; do
		FAILURES+=("$1: ${line#"${line%%[! ]*}"}")
		n=$((n + 1))
		[ $n -lt 20 ] || break
	done < <(grep -E '^ *not ok ' "$2")
	[ $n != 0 ] || FAILURES+=("$1: a failure without a 'not ok' line, see ${2#"$ROOT"/}")
}

failures() {
	local f

	for f in "${FAILURES[@]}"; do
		say "failed: $f"
	done
}
