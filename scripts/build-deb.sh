#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-deb.sh: what `make deb` runs.  Copies the tree's files (those git
# tracks plus new ones it does not ignore: no build products; outside a
# git work tree, everything but out/ and build products) to
# out/deb/eroce-<VERSION>/, builds the binary packages there with
# dpkg-buildpackage (debian/, debhelper, dh-dkms) and checks them with
# lintian, which must report no error and no warning (overrides, each
# with its reason, are in debian/*.lintian-overrides).  The packages end
# up in out/deb/: eroce-dkms, eroce-tools, ibverbs-provider-eroce.
# Building in a copy keeps debhelper's files out of the working tree.
#
# Then DKMS builds the module from the source eroce-dkms ships, for every
# kernel here whose headers are installed, in a private DKMS tree
# (out/deb/dkms/, nothing under /var/lib/dkms or /lib/modules), signed
# with a key made for it, and packs the result as a DKMS tarball,
# out/deb/dkms/eroce-<VERSION>.dkms.tar.gz.  selftests/eroce/packaging.sh
# hands it to the package's postinst (its "load a DKMS tarball" path),
# because DKMS building the module inside the TCG guest takes over 15
# minutes.  EROCE_DEB_NO_PREBUILT=1 skips it: the test then lets DKMS
# build in the guest.
set -eu -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
OUT=$ROOT/out/deb
VERSION=$(cat "$ROOT/VERSION")
SRC=$OUT/eroce-$VERSION

for t in dpkg-buildpackage dh dh_dkms lintian; do
	command -v "$t" >/dev/null ||
		{ echo "build-deb: $t missing (make deps)" >&2; exit 1; }
done

rm -rf "$OUT"
mkdir -p "$SRC"
cd "$ROOT"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z -c -o --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -T - -cf - | tar -C "$SRC" -xf -
else
	tar --exclude=./out --exclude-vcs --exclude='*.o' --exclude='*.ko' \
		--exclude='*.so' --exclude='*.cmd' --exclude='*.mod' \
		--exclude='*.mod.c' -cf - . | tar -C "$SRC" -xf -
fi

cd "$SRC"
dpkg-buildpackage -b -us -uc --no-sign
cd "$OUT"
changes=$(ls eroce_"$VERSION"_*.changes)
lintian --fail-on error,warning --info --display-info "$changes"
ls -1 "$OUT"/*.deb

[ "${EROCE_DEB_NO_PREBUILT:-0}" = 1 ] && exit 0
DK=$OUT/dkms
kvers=()
for d in /lib/modules/*/build; do
	[ -e "$d/Makefile" ] && kvers+=(-k "$(basename "$(dirname "$d")")")
done
[ ${#kvers[@]} -gt 0 ] || { echo "build-deb: no kernel headers for DKMS" >&2; exit 1; }
mkdir -p "$DK/tree"
dpkg-deb -x "$OUT/eroce-dkms_${VERSION}_all.deb" "$DK/root"
openssl req -new -x509 -nodes -days 36500 -subj "/CN=eroce make deb test key/" \
	-newkey rsa:2048 -keyout "$DK/mok.key" -outform DER -out "$DK/mok.der" \
	>/dev/null 2>&1
dk=(--dkmstree "$DK/tree" --sourcetree "$DK/root/usr/src")
for ((i = 1; i < ${#kvers[@]}; i += 2)); do
	mok_signing_key=$DK/mok.key mok_certificate=$DK/mok.der \
		dkms build "eroce/$VERSION" -k "${kvers[i]}" "${dk[@]}"
done
dkms mktarball "eroce/$VERSION" "${kvers[@]}" "${dk[@]}" \
	--archive "$DK/eroce-$VERSION.dkms.tar.gz" >/dev/null
ls -1 "$DK/eroce-$VERSION.dkms.tar.gz"
