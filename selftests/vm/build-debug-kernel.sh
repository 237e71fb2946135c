#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-debug-kernel.sh [--force]: build the debug kernel of `make
# check-debug` once and print its directory (the last line of stdout).
#
# The kernel is Debian's linux-source-6.1 (/usr/src/linux-source-6.1.tar.xz)
# configured as x86_64 allnoconfig plus selftests/vm/debug.config (KASAN,
# lockdep, kmemleak, UBSAN, debugobjects, fault injection, KUnit and what
# the test guest needs, nearly all built in).  Every option of the fragment
# must survive olddefconfig: a dropped or changed one stops the build.
#
# The result is cached outside the tree, in
#   ${EROCE_CACHE:-/var/cache/eroce}/debug-kernel/KEY/
# KEY is a hash of the fragment, the linux-source package version, the
# compiler and this script, so changing any of them builds a new kernel and
# a second run finds the first one's.  The directory holds:
#   src/        the configured, built tree (objects removed), the KDIR
#               eroce.ko is built against
#   bzImage     the kernel QEMU boots, through the usual 64-bit entry
#   vmlinux     its symbols, for reading a report's addresses
#   kver        its release string, e.g. 6.1.192-eroce-debug
#   modules/    lib/modules/KVER/ from modules_install (rdma_rxe, ...)
#   build.log   the build's output; build.time its duration in seconds
#   done        written last: the directory is complete
# --force (or EROCE_DEBUG_REBUILD=1) removes this key's directory first.
# The build runs under `nice -n 10` with EROCE_DEBUG_JOBS (default 2) jobs.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd -P)
FRAGMENT="$HERE/debug.config"
PKG=linux-source-6.1
TARBALL=/usr/src/linux-source-6.1.tar.xz
CACHE=${EROCE_CACHE:-/var/cache/eroce}/debug-kernel
JOBS=${EROCE_DEBUG_JOBS:-2}
FORCE=${EROCE_DEBUG_REBUILD:-0}

say() { echo "build-debug-kernel: $*" >&2; }
die() { say "$*"; exit 1; }

cache_key() {
	local ver

	ver=$(dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null) ||
		die "$PKG is not installed (make deps-debug)"
	{
		echo "$PKG $ver"
		gcc --version | head -n 1
		cat "$FRAGMENT" "$0"
	} | sha256sum | cut -c1-16
}

# check_config DIR: every line of the fragment is in DIR/.config as given
check_config() {
	local cfg=$1/.config line sym bad=0

	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			grep -qxF "$line" "$cfg" && continue
			sym=${line%%=*}
			;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }
			sym=${sym%% *}
			grep -q "^$sym=" "$cfg" || continue
			;;
		*) continue ;;
		esac
		say "config: asked for '$line', got '$(grep -E "^(# )?$sym[= ]" "$cfg" || echo "$sym unset")'"
		bad=1
	done <"$FRAGMENT"
	[ $bad = 0 ] || die "debug.config options were dropped (unmet dependencies?)"
}

# build DIR: extract, configure, build, install modules into DIR
build() {
	local dir=$1 src=$1/src kver start=$SECONDS
	local mk=(nice -n 10 make -C "$1/src" ARCH=x86_64 -j"$JOBS")

	[ -r "$TARBALL" ] || die "no $TARBALL (make deps-debug)"
	rm -rf "$dir"
	mkdir -p "$src"
	say "extracting $TARBALL into $dir"
	tar -xf "$TARBALL" -C "$src" --strip-components=1
	# QEMU boots the bzImage, not the vmlinux at its PVH entry: that
	# entry runs C code (xen_prepare_pvh() and the instrumented memcmp()
	# of hypervisor_cpuid_base()) before KASAN has its early shadow, and
	# the guest triple faults at once; the usual entry sets the shadow
	# up first (kasan_early_init())
	"${mk[@]}" KCONFIG_ALLCONFIG="$FRAGMENT" allnoconfig
	"${mk[@]}" olddefconfig
	check_config "$src"
	say "building (make -j$JOBS, log in $dir/build.log)"
	"${mk[@]}" bzImage modules
	kver=$("${mk[@]}" -s kernelrelease)
	"${mk[@]}" INSTALL_MOD_PATH="$dir/modules" modules_install
	# the tree stays as the KDIR of external modules; objects are not needed
	find "$src" -name '*.o' ! -path '*/tools/*' -delete
	cp "$src/arch/x86/boot/bzImage" "$dir/bzImage"
	cp "$src/vmlinux" "$dir/vmlinux"
	rm -f "$src/vmlinux" "$src/vmlinux.o"
	echo "$kver" >"$dir/kver"
	echo $((SECONDS - start)) >"$dir/build.time"
	touch "$dir/done"
	say "built $kver in $((SECONDS - start)) s"
}

main() {
	local key dir

	case "${1:-}" in
	--force) FORCE=1 ;;
	'') ;;
	*) echo "usage: $0 [--force]" >&2; exit 2 ;;
	esac
	[ -r "$FRAGMENT" ] || die "no $FRAGMENT"
	key=$(cache_key)
	dir=$CACHE/$key
	mkdir -p "$CACHE"
	# one build per key at a time; a second caller waits for the first
	exec 9>"$CACHE/$key.lock"
	flock 9
	[ "$FORCE" = 1 ] && rm -rf "$dir"
	if [ ! -f "$dir/done" ]; then
		build "$dir" > >(tee "$dir.log" >&2) 2>&1
		mv "$dir.log" "$dir/build.log"
	fi
	echo "$dir"
}

main "$@"
