#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# extract-vmlinux.sh VMLINUZ OUT: write the uncompressed ELF vmlinux found
# inside a bzImage to OUT.  QEMU boots an ELF vmlinux through its PVH entry,
# which skips the in-guest decompression (slow under TCG).  The compressed
# payload is located by its magic bytes; every candidate offset is tried
# until one decompresses to an ELF image.
set -eu

# magic (grep -P escape) and the command that decompresses from stdin
FORMATS=(
	'\xfd\x37\x7a\x58\x5a\x00|xz -dc --single-stream'
	'\x28\xb5\x2f\xfd|zstd -dcq'
	'\x1f\x8b\x08|gzip -dcq'
	'\x02\x21\x4c\x18|lz4 -dcq'
	'\x5d\x00\x00\x00|xz -dc --format=lzma'
	'\x42\x5a\x68|bzip2 -dcq'
)

is_elf() {
	[ "$(head -c 4 "$1" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ]
}

# try_format IN TMP MAGIC CMD: decompress from each offset of MAGIC in IN
try_format() {
	local in=$1 tmp=$2 magic=$3 cmd=$4 off

	command -v "${cmd%% *}" >/dev/null || return 1
	for off in $(LC_ALL=C grep -obUaP "$magic" "$in" | cut -d: -f1); do
		tail -c +$((off + 1)) "$in" | $cmd >"$tmp" 2>/dev/null || true
		is_elf "$tmp" && return 0
	done
	return 1
}

main() {
	local in=$1 out=$2 tmp="$2.tmp.$$" f

	[ -r "$in" ] || { echo "extract-vmlinux: cannot read $in" >&2; exit 1; }
	if is_elf "$in"; then
		cp "$in" "$out"
		return
	fi
	for f in "${FORMATS[@]}"; do
		if try_format "$in" "$tmp" "${f%%|*}" "${f#*|}"; then
			mv "$tmp" "$out"
			return
		fi
	done
	rm -f "$tmp"
	echo "extract-vmlinux: no compressed ELF kernel found in $in" >&2
	exit 1
}

main "$@"
