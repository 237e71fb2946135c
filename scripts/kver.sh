#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kver.sh: the kernel release the tree builds for, and the guests boot.
# KVER when it is set; else the newest in /lib/modules, the standard
# flavour before the PREEMPT_RT one (Debian's 6.1.0-N-rt-amd64 sorts after
# 6.1.0-N-amd64, and its headers alone create its /lib/modules entry);
# with RT=1 the newest PREEMPT_RT one.  `make KVER=...` and `make RT=1`
# pass the variable on in the environment, where this script (called by
# the Makefile, scripts/build-deb.sh and selftests/run_vm.sh) finds it.
if [ -n "${KVER:-}" ]; then
	echo "$KVER"
	exit 0
fi
ls /lib/modules 2>/dev/null | sort -V | awk -v rt="${RT:-0}" '
	rt == 1 { if (/-rt-/) want = $0; next }
	!/-rt-/ { want = $0 } { any = $0 }
	END {
		if (rt == 1 && !want) {
			print "kver: no PREEMPT_RT kernel in /lib/modules" \
				" (make deps RT=1)" >"/dev/stderr"
			exit 1
		}
		print want ? want : any
	}'
