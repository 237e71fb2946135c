#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkinitramfs.sh KVER OUT [MODROOT]: build the test guest's initramfs (a
# gzipped newc cpio) at OUT.  It holds busybox-static, selftests/vm/initramfs-init as
# /init, and the modules needed to mount the host root over virtio-9p under
# an overlay (virtio_pci, 9pnet_virtio, 9p, overlay and their dependencies),
# numbered in modules.dep order so /init can insmod them in sequence.
# The modules come from MODROOT/KVER (MODROOT defaults to /lib/modules; the
# debug kernel's are in its cache directory); those built in, listed in
# modules.builtin, are left out, so a kernel with all four built in gets an
# initramfs without modules.
# The image is rebuilt only when one of its inputs changed (OUT.key).
set -eu

HERE=$(cd "$(dirname "$0")" && pwd -P)
WANTED="virtio_pci 9pnet_virtio 9p overlay"

find_busybox() {
	local b
	for b in /bin/busybox /usr/bin/busybox; do
		if [ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1; then
			echo "$b"
			return
		fi
	done
	echo "mkinitramfs: no static busybox (install busybox-static)" >&2
	exit 1
}

# module path (relative to /lib/modules/KVER) of module NAME
mod_path() {
	local name=$1 dep=$2
	grep -E "(^|/)${name}\.ko(\.[a-z]+)?:" "$dep" | head -n 1 | cut -d: -f1
}

# mod_order MODDIR PATH...: print PATHs and their deps, deps first, once each
mod_order() {
	local dir=$1; shift
	local -A seen=()
	visit() {
		local p=$1 d
		[ -n "${seen[$p]:-}" ] && return
		seen[$p]=1
		for d in $(grep -E "^${p//./\\.}:" "$dir/modules.dep" | cut -d: -f2-); do
			visit "$d"
		done
		echo "$p"
	}
	for p in "$@"; do visit "$p"; done
}

# copy_module SRC DST: copy a module, decompressing .xz/.zst/.gz
copy_module() {
	case "$1" in
	*.ko.xz) xz -dc "$1" >"$2" ;;
	*.ko.zst) zstd -dcq "$1" >"$2" ;;
	*.ko.gz) gzip -dc "$1" >"$2" ;;
	*) cp "$1" "$2" ;;
	esac
}

input_key() {
	local dir=$1 bb=$2 paths=$3
	{
		echo "$dir $bb $WANTED"
		cat "$HERE/initramfs-init" "$0"
		sha256sum "$bb"
		echo "$paths"
		stat -c '%Y %s' "$dir/modules.dep"
	} | sha256sum | cut -d' ' -f1
}

build() {
	local dir=$1 out=$2 bb=$3 paths=$4 i=0 p

	STAGE=$(mktemp -d "${out}.stage.XXXXXX")
	trap 'rm -rf "$STAGE"' EXIT
	local stage=$STAGE
	mkdir -p "$stage"/{bin,dev,proc,sys,mod,newroot,lower,upper,result}
	cp "$bb" "$stage/bin/busybox"
	ln -s busybox "$stage/bin/sh"
	cp "$HERE/initramfs-init" "$stage/init"
	chmod 755 "$stage/init"
	for p in $paths; do
		i=$((i + 1))
		copy_module "$dir/$p" \
			"$stage/mod/$(printf %02d $i)-$(basename "${p%%.ko*}").ko"
	done
	(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
		gzip -1 >"$out.tmp.$$"
	mv "$out.tmp.$$" "$out"
}

main() {
	local out=$2 dir="${3:-/lib/modules}/$1" bb paths key m p list=()

	bb=$(find_busybox)
	for m in $WANTED; do
		p=$(mod_path "$m" "$dir/modules.dep")
		if [ -z "$p" ]; then
			grep -qE "/${m}\.ko$" "$dir/modules.builtin" && continue
			echo "mkinitramfs: $m not in $dir" >&2
			exit 1
		fi
		list+=("$p")
	done
	paths=$(mod_order "$dir" ${list[@]+"${list[@]}"})
	key=$(input_key "$dir" "$bb" "$paths")
	if [ -s "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then
		return
	fi
	build "$dir" "$out" "$bb" "$paths"
	echo "$key" >"$out.key"
}

main "$@"
