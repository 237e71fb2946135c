#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Style and static checks for the kernel module: checkpatch --strict on
# every source file, a sparse (C=2) W=1 build, the module's stack
# frames (scripts/stack-frames.sh) and its object files' call graph,
# which must have no circle (scripts/callgraph.py).  checkpatch.pl comes
# from Debian's linux-source package (unpacked on first use under out/).
set -eu
cd "$(dirname "$0")/.."

KVER=${KVER:-$(scripts/kver.sh)}
KDIR=${KDIR:-/lib/modules/$KVER/build}
CP=out/checkpatch/scripts/checkpatch.pl

if [ ! -x "$CP" ]; then
	tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | tail -n 1)
	if [ -z "$tarball" ]; then
		echo "lint: install linux-source-6.1 for checkpatch.pl" >&2
		exit 1
	fi
	top=$(basename "$tarball" .tar.xz)
	mkdir -p out/checkpatch
	tar -xJf "$tarball" -C out/checkpatch --strip-components=1 \
		"$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" \
		"$top/scripts/const_structs.checkpatch"
fi

status=0
# BIT() does not exist in uapi headers: (1U << n) is the uapi idiom there
perl "$CP" --strict --no-tree --quiet --show-types \
	--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG \
	-f $(ls drivers/infiniband/sw/eroce/*.[ch] | grep -v '\.mod\.c$') ||
	status=1
perl "$CP" --strict --no-tree --quiet --ignore BIT_MACRO \
	-f include/uapi/rdma/eroce-abi.h || status=1

out=$(make -C "$KDIR" M="$PWD" W=1 C=2 modules 2>&1) || status=1
echo "$out" | grep -E 'warning:|error:' && status=1
scripts/stack-frames.sh >/dev/null || { scripts/stack-frames.sh | grep error:; status=1; }
python3 scripts/callgraph.py --check >/dev/null ||
	{ python3 scripts/callgraph.py | sed -n '/^circle/,$p'; status=1; }

[ $status -eq 0 ] && echo "lint: clean"
exit $status
