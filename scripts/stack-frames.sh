#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# stack-frames.sh [KO] [LIMIT]: the stack frame of each function of the
# module (the largest `sub $N,%rsp` in its code, from `objdump -d`), the
# five largest printed; an "error:" line and exit status 1 for each frame
# over LIMIT bytes (default 512) and for each function that grows its
# frame by a register (a variable-length array or alloca()).  Much of
# eroce runs at the bottom of the receive softirq or under a consumer's
# call chain, on a 16 KiB stack.
#
# The kernel's scripts/checkstack.pl is not used: the 6.1 one adds the
# `add $N,%rsp` of every return path to the frame, so a function with
# three returns is reported at three times its size.
set -eu
cd "$(dirname "$0")/.."

KO=${1:-drivers/infiniband/sw/eroce/eroce.ko}
LIMIT=${2:-512}

[ -f "$KO" ] || { echo "stack-frames: error: no $KO (make modules)"; exit 1; }

objdump -d "$KO" | perl -e '
	my $limit = shift;
	my (%frame, %dynamic, $fn, $bad);
	while (<>) {
		if (/^[0-9a-f]+ <(.*)>:$/) {
			$fn = $1;
		} elsif (/\ssub\s+\$0x([0-9a-f]+),%rsp$/) {
			# `sub $-128,%rsp` is the short form of `add $128,%rsp`
			next if length($1) == 16 && $1 =~ /^[89a-f]/;
			my $size = hex($1);
			$frame{$fn} = $size if $size > ($frame{$fn} // 0);
		} elsif (/\sadd\s+\$0xffffffffffffff80,%rsp$/) {
			# and `add $-128,%rsp` the short form of `sub $128,%rsp`
			$frame{$fn} = 128 if 128 > ($frame{$fn} // 0);
		} elsif (/\ssub\s+%\w+,%rsp$/) {
			$dynamic{$fn} = 1;
		}
	}
	my @by_size = sort { $frame{$b} <=> $frame{$a} } keys %frame;
	printf "%6d %s\n", $frame{$_}, $_ for grep { defined } @by_size[0 .. 4];
	for (@by_size) {
		next if $frame{$_} <= $limit;
		print "stack-frames: error: $_ uses $frame{$_} bytes of stack (limit $limit)\n";
		$bad = 1;
	}
	for (sort keys %dynamic) {
		print "stack-frames: error: $_ sizes its stack frame at run time\n";
		$bad = 1;
	}
	exit($bad ? 1 : 0);
' "$LIMIT"
