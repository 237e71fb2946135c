# SPDX-License-Identifier: GPL-2.0
#
# reports.awk: print the kernel bug reports found in a kernel log (dmesg or
# the guest console), each whole: from its opening line (KASAN, UBSAN,
# lockdep, RCU, sleeping-in-atomic, list or debugobjects corruption, WARN,
# BUG, Oops) to its closing line ("---[ end trace", KASAN's and UBSAN's
# "====" rule, "Kernel panic") or at most MAX lines (default 120), a blank
# line between reports.  Used by guest-init.sh (the "reports" verdict file)
# and by run_vm.sh (the console of a guest that panicked) to copy the
# reports into the KTAP diagnostics.

BEGIN {
	if (MAX == "")
		MAX = 120
	open_re = "BUG: |WARNING: |UBSAN: |kernel BUG|Oops|general protection|"
	open_re = open_re "possible circular locking|inconsistent lock state|"
	open_re = open_re "suspicious RCU usage|list_add corruption|"
	open_re = open_re "list_del corruption|ODEBUG: |refcount_t: |"
	open_re = open_re "stack-protector|double fault|soft lockup|blocked for more than"
	n = 0
}

{ sub(/\r$/, "") }

in_report {
	print
	n++
	if ($0 ~ /---\[ end trace|^(\[[ 0-9.]+\] )?====================*$|Kernel panic - not syncing/ || n >= MAX) {
		in_report = 0
		print ""
	}
	next
}

$0 ~ open_re {
	in_report = 1
	n = 1
	print
}
