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
# build in the guest.  With the headers of Debian's standard and PREEMPT_RT
# kernels installed (make deps), DKMS builds for each (see dkms_tarball).
#
# The same is made of a previous release for packaging.sh to upgrade
# from: the tree at version VERSION~prev (sorting before VERSION), in
# out/deb/prev/ with its DKMS tarball for the default kernel
# (scripts/kver.sh).  EROCE_DEB_NO_UPGRADE=1 leaves it out.
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

# the tree as it would be released at version $2: VERSION and the top
# debian/changelog entry say $2 (the entry's text stays)
set_version() {
	local dir=$1 version=$2
	echo "$version" >"$dir/VERSION"
	sed -i "1s/^eroce ([^)]*)/eroce ($version)/" "$dir/debian/changelog"
}

# dkms_tarball DEB VERSION DIR KVER...: DKMS builds the source of the
# eroce-dkms package DEB for each KVER in a private tree under DIR, signed
# with a key made for it, and packs DIR/eroce-VERSION.dkms.tar.gz: the
# source and the first KVER's module.  Debian 12's DKMS (3.0.10) packs and
# loads one kernel's module per tarball (mktarball and ldtarball keep the
# first kernel's directory in a `local -r` inside their loops), so each
# further KVER gets a binaries-only tarball of its own,
# DIR/eroce-VERSION-KVER.dkms.tar.gz
dkms_tarball() {
	local deb=$1 version=$2 dk=$3 k tree
	shift 3
	mkdir -p "$dk/tree"
	dpkg-deb -x "$deb" "$dk/root"
	openssl req -new -x509 -nodes -days 36500 -subj "/CN=eroce make deb test key/" \
		-newkey rsa:2048 -keyout "$dk/mok.key" -outform DER -out "$dk/mok.der" \
		>/dev/null 2>&1
	tree=(--dkmstree "$dk/tree" --sourcetree "$dk/root/usr/src")
	for k; do
		mok_signing_key=$dk/mok.key mok_certificate=$dk/mok.der \
			dkms build "eroce/$version" -k "$k" "${tree[@]}"
	done
	dkms mktarball "eroce/$version" -k "$1" "${tree[@]}" \
		--archive "$dk/eroce-$version.dkms.tar.gz" >/dev/null
	ls -1 "$dk/eroce-$version.dkms.tar.gz"
	shift
	for k; do
		dkms mktarball "eroce/$version" -k "$k" --binaries-only "${tree[@]}" \
			--archive "$dk/eroce-$version-$k.dkms.tar.gz" >/dev/null
		ls -1 "$dk/eroce-$version-$k.dkms.tar.gz"
	done
}

# the previous release, for packaging.sh to upgrade from: this tree at
# version VERSION~prev (which sorts before VERSION), its packages in
# out/deb/prev/, not checked by lintian
PREV_VERSION=$VERSION~prev
PREV=$OUT/prev
if [ "${EROCE_DEB_NO_UPGRADE:-0}" != 1 ]; then
	mkdir -p "$PREV"
	cp -a "$SRC" "$PREV/eroce-$PREV_VERSION"
	set_version "$PREV/eroce-$PREV_VERSION" "$PREV_VERSION"
fi

cd "$SRC"
dpkg-buildpackage -b -us -uc --no-sign
cd "$OUT"
changes=$(ls eroce_"$VERSION"_*.changes)
lintian --fail-on error,warning --info --display-info "$changes"
ls -1 "$OUT"/*.deb
if [ -d "$PREV" ]; then
	(cd "$PREV/eroce-$PREV_VERSION" && dpkg-buildpackage -b -us -uc --no-sign)
	ls -1 "$PREV"/*.deb
fi

[ "${EROCE_DEB_NO_PREBUILT:-0}" = 1 ] && exit 0
# the default kernel (the one the guests boot) first, then every other one
# whose headers are here
kver=$("$ROOT/scripts/kver.sh")
[ -e "/lib/modules/$kver/build/Makefile" ] ||
	{ echo "build-deb: no headers of $kver for DKMS" >&2; exit 1; }
kvers=("$kver")
for d in /lib/modules/*/build; do
	k=$(basename "$(dirname "$d")")
	[ "$k" != "$kver" ] && [ -e "$d/Makefile" ] && kvers+=("$k")
done
dkms_tarball "$OUT/eroce-dkms_${VERSION}_all.deb" "$VERSION" "$OUT/dkms" "${kvers[@]}"
# the previous release needs no more than the default kernel
if [ -d "$PREV" ]; then
	dkms_tarball "$PREV/eroce-dkms_${PREV_VERSION}_all.deb" "$PREV_VERSION" \
		"$PREV/dkms" "$kver"
fi
