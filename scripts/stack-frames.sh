#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# stack-frames.sh [KO] [LIMIT]: the stack frames of the module's functions
# (the kernel's scripts/checkstack.pl over `objdump -d`), the largest
# first; an "error:" line and exit status 1 for each frame over LIMIT
# bytes (default 512).  Much of eroce runs at the bottom of the receive
# softirq and under a consumer's call chain, on a 16 KiB stack.
set -eu
cd "$(dirname "$0")/.."

KO=${1:-drivers/infiniband/sw/eroce/eroce.ko}
LIMIT=${2:-512}
KVER=${KVER:-$(scripts/kver.sh)}
KDIR=${KDIR:-/lib/modules/$KVER/build}
CHECKSTACK=$KDIR/scripts/checkstack.pl

[ -f "$KO" ] || { echo "stack-frames: error: no $KO (make modules)"; exit 1; }
[ -f "$CHECKSTACK" ] || { echo "stack-frames: error: no $CHECKSTACK"; exit 1; }

frames=$(objdump -d "$KO" | perl "$CHECKSTACK" x86_64)
echo "$frames" | head -n 5
echo "$frames" | awk -v limit="$LIMIT" '
	{ size = $NF }
	size + 0 > limit + 0 {
		printf "stack-frames: error: %s uses %d bytes of stack (limit %d)\n", $2, size, limit
		bad = 1
	}
	END { exit bad }'
