#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-deb.sh: what `make deb` runs.  Copies the tree's files (those git
# tracks plus new ones it does not ignore: no build products) to
# out/deb/eroce-<VERSION>/, builds the binary packages there with
# dpkg-buildpackage (debian/, debhelper, dh-dkms) and checks them with
# lintian, which must report no error and no warning (overrides, each
# with its reason, are in debian/*.lintian-overrides).  The packages end
# up in out/deb/: eroce-dkms, eroce-tools, ibverbs-provider-eroce.
# Building in a copy keeps debhelper's files out of the working tree.
set -eu -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
OUT=$ROOT/out/deb
VERSION=$(cat "$ROOT/VERSION")
SRC=$OUT/eroce-$VERSION

for t in dpkg-buildpackage dh dh_dkms lintian git; do
	command -v "$t" >/dev/null ||
		{ echo "build-deb: $t missing (make deps)" >&2; exit 1; }
done

rm -rf "$OUT"
mkdir -p "$SRC"
cd "$ROOT"
git ls-files -z -c -o --exclude-standard |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	tar --null -T - -cf - | tar -C "$SRC" -xf -

cd "$SRC"
dpkg-buildpackage -b -us -uc --no-sign
cd "$OUT"
changes=$(ls eroce_"$VERSION"_*.changes)
lintian --fail-on error,warning --info --display-info "$changes"
ls -1 "$OUT"/*.deb
