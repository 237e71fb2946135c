#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kver.sh: the kernel release the tree builds for, and the guests boot,
# when KVER is not given: the newest in /lib/modules, the standard flavour
# before the PREEMPT_RT one (Debian's 6.1.0-N-rt-amd64 sorts after
# 6.1.0-N-amd64, and its headers alone create its /lib/modules entry).
# Give KVER=6.1.0-N-rt-amd64 to build for the RT kernel.
ls /lib/modules 2>/dev/null | sort -V |
	awk '!/-rt-/ { std = $0 } { any = $0 } END { print std ? std : any }'
