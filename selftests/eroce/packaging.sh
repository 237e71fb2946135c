#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 1200
# vm-guest: own
#
# packaging.sh: the Debian packages of `make deb` (out/deb/*.deb) on the
# guest's root, as an administrator would use them.
#   install   dpkg -i of eroce-dkms, eroce-tools, ibverbs-provider-eroce;
#             DKMS installs eroce.ko for the running kernel (uname -r) into
#             updates/dkms, with the tree's version and a signature: the
#             DKMS build `make deb` made of the packaged source on the host
#             (out/deb/dkms/eroce-<VERSION>.dkms.tar.gz, signed with its
#             test key), which the package's postinst loads from
#             /usr/share/eroce-dkms/ (DKMS's tarball path); without that
#             tarball (EROCE_DEB_NO_PREBUILT=1 make deb) DKMS builds the
#             module in the guest (over 15 minutes under TCG; run with
#             --timeout 2400), signed with a key configured here in
#             /etc/dkms/framework.conf.d
#   use       modprobe loads that module; eroce1 (ns1/veth1 198.18.0.1) <->
#             eroce2 (ns2/veth2 198.18.0.2) through the packaged provider,
#             ibv_rc_pingpong; the installed man pages pass man -l and
#             lexgrog, and eroce(4) and eroce.conf(5) name every tuning/
#             file a device has; /usr/sbin/eroce is the package's, and
#             `eroce doctor --json` prints valid JSON that finds the
#             module loaded; /usr/libexec/eroce/eroce-path is the
#             package's, and `eroce doctor 198.18.0.2` from ns1, with
#             `eroce doctor --listen` in ns2, finds every path check ok
#   persist   systemd-udevd runs the packaged udev rule: /etc/eroce.conf
#             with good and bad lines; creating the netdevs creates and
#             tunes their devices, bad lines are reported (stderr, syslog)
#             and skipped, deleting and re-creating the netdev brings the
#             device back with its tuning
#   remove    dpkg --purge leaves none of the packages' files, no DKMS
#             module or state, nothing modprobe can find
#   upgrade   before all this, the previous release make deb builds
#             (out/deb/prev/, version VERSION~prev) is installed and its
#             /etc/eroce.conf edited; installing this version's packages
#             over it is then an upgrade: DKMS keeps only the new version,
#             the administrator's edit stays.  EROCE_PKG_UPGRADE=0 (make
#             check, whose make deb builds no previous release) installs
#             this version alone: the previous release's install and
#             removal cost some 150 s of dpkg and DKMS under TCG
#   RT        with Debian's PREEMPT_RT kernel headers installed (make deps),
#             make deb has DKMS build the packaged source for that kernel
#             too; its binaries-only DKMS tarball is loaded (dkms
#             ldtarball --force, which then complains that the source is
#             there already) and DKMS's kernel hook (what
#             linux-headers-*-rt-amd64 runs when it is installed) installs
#             the module, built for RT and signed.  The guest runs the
#             standard kernel, so it is not loaded (running the suite on
#             RT is a lane of its own).  EROCE_PKG_RT=0 (make check, whose
#             make deb still builds for RT on the host) leaves this out:
#             DKMS's hook and status cost some 30 s under TCG
# The .debs are built on the host (make deb; make check does it in its
# build stage); without them every subtest is skipped, saying so.  The
# guest writes only to its tmpfs overlay: the host's dpkg database and
# /lib/modules stay as they are.
# shellcheck disable=SC2317  # the checks run through ktap_check and require
set -u -o pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lib_rdma.sh
. "$(dirname "$0")/../lib_rdma.sh"

DEBS=$EROCE_ROOT/out/deb
VERSION=$(cat "$EROCE_ROOT/VERSION")
KVER=$(uname -r)
PKGS="eroce-dkms eroce-tools ibverbs-provider-eroce"
# the key the guest's DKMS signs with; MOK_CN becomes TARBALL_CN when the
# host's build is installed
GUEST_MOK_CN="eroce packaging test MOK"
MOK_CN=$GUEST_MOK_CN
MOK_DIR=/var/lib/eroce-test-mok
# the host's DKMS build (scripts/build-deb.sh) and where postinst looks
TARBALL=$DEBS/dkms/eroce-$VERSION.dkms.tar.gz
TARBALL_DIR=/usr/share/eroce-dkms
TARBALL_CN="eroce make deb test key"
CONF=/etc/eroce.conf
SYSLOG=/tmp/eroce-syslog
PREV_VERSION=$VERSION~prev
PREV_DEBS=$DEBS/prev
PREV_TARBALL=$PREV_DEBS/dkms/eroce-$PREV_VERSION.dkms.tar.gz
CONF_EDIT="# edited by the administrator of release $PREV_VERSION"
# Debian's PREEMPT_RT flavour of the running kernel's release, if its
# headers are here
RT_KVER=${KVER%-amd64}-rt-amd64
[ -e "/lib/modules/$RT_KVER/build/Makefile" ] || RT_KVER=
UPGRADE=${EROCE_PKG_UPGRADE:-1}
RT=${EROCE_PKG_RT:-1}
PLAN=46
[ "$UPGRADE" = 1 ] || PLAN=$((PLAN - 4))
[ "$RT" = 1 ] || PLAN=$((PLAN - 3))
UDEVD_PID=
SYSLOGD_PID=

# first PATTERN: the first file the glob PATTERN matches, if any
first() {
	[ -e "$1" ] && echo "$1"
}

# debs [DIR VERSION]: the package files of VERSION in DIR (this tree's)
debs() {
	local dir=${1:-$DEBS} version=${2:-$VERSION} p
	for p in $PKGS; do
		first "$dir/${p}_${version}_"*.deb
	done
}

not_installed() {
	local p
	for p in $PKGS; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' &&
			{ echo "$p is installed already"; return 1; }
	done
	return 0
}

# ---- install -------------------------------------------------------------

# the signing key DKMS is told to use, as an administrator would configure
# an enrolled MOK (Documentation/admin-guide.rst, "Secure Boot")
mok_setup() {
	mkdir -p "$MOK_DIR" /etc/dkms/framework.conf.d &&
		openssl req -new -x509 -nodes -days 1 -subj "/CN=$GUEST_MOK_CN/" \
			-newkey rsa:2048 -keyout "$MOK_DIR/mok.key" \
			-outform DER -out "$MOK_DIR/mok.der" >/dev/null 2>&1 &&
		printf 'mok_signing_key=%s\nmok_certificate=%s\n' \
			"$MOK_DIR/mok.key" "$MOK_DIR/mok.der" \
			>/etc/dkms/framework.conf.d/eroce-test.conf
}

# install_debs [DIR VERSION TARBALL]: dpkg -i this tree's packages (or
# VERSION's in DIR, with its DKMS tarball TARBALL)
install_debs() {
	local dir=${1:-$DEBS} version=${2:-$VERSION} tarball=${3:-$TARBALL}
	local start=$SECONDS rc=0 limit=900
	if [ -f "$tarball" ]; then
		mkdir -p "$TARBALL_DIR" &&
			cp "$tarball" "$TARBALL_DIR/eroce-$version.dkms.tar.gz" || return
		MOK_CN=$TARBALL_CN
		ktap_diag "DKMS tarball of the host's build: $tarball"
	else
		ktap_diag "no $tarball: DKMS builds in the guest"
		limit=2000
	fi
	# unpack and configure apart, to show where the time goes
	# shellcheck disable=SC2046  # one argument per package file
	LAST_OUT=$(DEBIAN_FRONTEND=noninteractive timeout 300 dpkg --unpack $(debs "$dir" "$version") 2>&1) || rc=$?
	ktap_diag "dpkg --unpack: $((SECONDS - start)) s"
	[ "$rc" = 0 ] || return "$rc"
	start=$SECONDS
	LAST_OUT=$(DEBIAN_FRONTEND=noninteractive timeout "$limit" dpkg --configure --pending 2>&1) || rc=$?
	ktap_diag "dpkg --configure (postinst: DKMS, depmod): $((SECONDS - start)) s"
	return "$rc"
}

dkms_module() {
	first /lib/modules/"$KVER"/updates/dkms/eroce.ko*
}

# the file modprobe loads is the DKMS one, and it is what is loaded
loaded_is_dkms() {
	local f
	f=$(modinfo -n eroce) || return
	echo "modprobe resolves eroce to $f"
	[ "$f" = "$(dkms_module)" ] &&
		[ "$(cat /sys/module/eroce/version)" = "$VERSION" ] &&
		[ "$(cat /sys/module/eroce/srcversion)" = "$(modinfo -F srcversion "$f")" ]
}

# ---- upgrade ---------------------------------------------------------------

# the previous release, installed and configured as an administrator would
test_install_prev() {
	local ko

	install_debs "$PREV_DEBS" "$PREV_VERSION" "$PREV_TARBALL"
	ktap_result prev_dpkg_install $? "dpkg -i of $PREV_VERSION failed: $(tail -n 5 <<<"$LAST_OUT")"
	ko=$(dkms_module)
	ktap_check prev_module_installed \
		test "$(modinfo -F version "${ko:-/nonexistent}" 2>&1)" = "$PREV_VERSION"
	echo "$CONF_EDIT" >>"$CONF"
	rm -rf "$TARBALL_DIR"
}

# what the upgrade to this version left of the previous one
prev_gone() {
	local st
	st=$(dkms status eroce) || return
	echo "dkms status: $st"
	! grep -qF "$PREV_VERSION" <<<"$st" && grep -qF "eroce/$VERSION" <<<"$st" &&
		[ ! -e "/usr/src/eroce-$PREV_VERSION" ] &&
		[ ! -e "/var/lib/dkms/eroce/$PREV_VERSION" ] &&
		[ "$(dpkg-query -W -f='${Version}' eroce-dkms)" = "$VERSION" ]
}

# ---- install -------------------------------------------------------------

test_install() {
	local ko signer

	install_debs
	ktap_result dpkg_install $? "dpkg -i failed"
	if [ "$KTAP_FAIL" != 0 ]; then
		ktap_diag "$(tail -n 20 <<<"$LAST_OUT")"
		ktap_diag "$(tail -n 20 /var/lib/dkms/eroce/"$VERSION"/build/make.log 2>&1)"
	fi
	ktap_check dkms_status_installed \
		eval "dkms status eroce/$VERSION -k $KVER | grep -q ': installed'"
	ko=$(dkms_module)
	ktap_result dkms_module_in_updates_dkms "$([ -n "$ko" ]; echo $?)" \
		"no /lib/modules/$KVER/updates/dkms/eroce.ko*"
	ktap_check module_version_from_tree \
		test "$(modinfo -F version "${ko:-/nonexistent}" 2>&1)" = "$VERSION"
	signer=$(modinfo -F signer "${ko:-/nonexistent}" 2>/dev/null)
	ktap_result module_signed_with_configured_key \
		"$([ "$signer" = "$MOK_CN" ]; echo $?)" "signer '$signer', want '$MOK_CN'"
	ktap_check only_one_eroce_module \
		test "$(find /lib/modules/"$KVER" -name 'eroce.ko*' | wc -l)" = 1
	ktap_check modprobe_loads_dkms_module \
		eval 'modprobe eroce && loaded_is_dkms'
	if [ "$UPGRADE" = 1 ]; then
		ktap_check upgrade_leaves_nothing_of_prev prev_gone
		ktap_check upgrade_keeps_conf_edit grep -qxF "$CONF_EDIT" "$CONF"
	fi
	ktap_check provider_from_package \
		eval 'dpkg -S /etc/libibverbs.d/eroce.driver | grep -q ^ibverbs-provider-eroce: &&
			grep -qx "driver eroce" /etc/libibverbs.d/eroce.driver &&
			dpkg -L ibverbs-provider-eroce | grep -q "/libibverbs/liberoce-rdmav34.so$"'
}

# ---- RT --------------------------------------------------------------------

# rt_module_ok: DKMS installed eroce.ko for the PREEMPT_RT kernel, built
# for it and signed.  With the RT kernel's image installed on the host, it
# is the newest kernel and the packages' postinst has DKMS build for it in
# the guest already (signed with the guest's key, some minutes more);
# with its headers alone, the host's build from the RT tarball is used
rt_module_ok() {
	local ko magic signer
	ko=$(first /lib/modules/"$RT_KVER"/updates/dkms/eroce.ko*) ||
		{ echo "no /lib/modules/$RT_KVER/updates/dkms/eroce.ko*"; return 1; }
	magic=$(modinfo -F vermagic "$ko") && signer=$(modinfo -F signer "$ko") || return
	echo "$ko: vermagic '$magic', signer '$signer'"
	[[ "$magic" == "$RT_KVER "*" preempt_rt "* ]] &&
		{ [ "$signer" = "$MOK_CN" ] || [ "$signer" = "$GUEST_MOK_CN" ]; } &&
		[ "$(modinfo -F version "$ko")" = "$VERSION" ]
}

test_rt() {
	local hook=/etc/kernel/header_postinst.d/dkms
	local tarball=$DEBS/dkms/eroce-$VERSION-$RT_KVER.dkms.tar.gz

	if [ -z "$RT_KVER" ]; then
		ktap_missing rt_kernel_hook_installs "headers of ${KVER%-amd64}-rt-amd64"
		ktap_missing rt_module_built_for_rt "headers of ${KVER%-amd64}-rt-amd64"
		ktap_missing rt_status_installed "headers of ${KVER%-amd64}-rt-amd64"
		return
	fi
	# DKMS 3.0.10 loads the module, then fails on adding the source again
	# (it is the package's): what counts is the module it loaded
	dkms ldtarball --force --archive "$tarball" >/dev/null 2>&1
	ktap_check rt_kernel_hook_installs eval \
		"first /var/lib/dkms/eroce/$VERSION/$RT_KVER/*/module/eroce.ko* &&
			timeout 600 $hook $RT_KVER"
	ktap_check rt_module_built_for_rt rt_module_ok
	ktap_check rt_status_installed \
		eval "dkms status eroce/$VERSION -k $RT_KVER | grep -q ': installed'"
}

# ---- use -----------------------------------------------------------------

# man_ok PAGE: the installed page formats without warnings and has a NAME
man_ok() {
	local f warn
	f=$(dpkg -L eroce-dkms eroce-tools | grep "/man/.*/$1\.gz$") || return
	warn=$(MANWIDTH=80 man -l --warnings -E UTF-8 "$f" 2>&1 >/dev/null)
	[ -z "$warn" ] || { echo "$warn"; return 1; }
	lexgrog "$f" | grep -q ": \"${1%.*} - "
}

# knobs_documented: every file under tuning/ (and tuning/dcqcn/) of eroce1
# is named in eroce(4) and in eroce.conf(5)
knobs_documented() {
	local t=$IBSYS/eroce1/tuning k man4 man5 bad=0
	# the sources: a formatted page may hyphenate a name
	man4=$(zcat "$(dpkg -L eroce-dkms | grep '/eroce\.4\.gz$')") &&
		man5=$(zcat "$(dpkg -L eroce-tools | grep '/eroce\.conf\.5\.gz$')") ||
		return
	for k in $(cd "$t" && find . -type f | sed 's|^\./||'); do
		grep -qw -- "${k#dcqcn/}" <<<"$man4" || { echo "eroce(4) lacks $k"; bad=1; }
		grep -qF -- "$k" <<<"$man5" || { echo "eroce.conf(5) lacks $k"; bad=1; }
	done
	[ -n "${k:-}" ] && [ "$bad" = 0 ]
}

# doctor_json: eroce doctor --json exits 0 or 1 (not a usage error),
# prints a JSON array of checks, and its module check is ok
doctor_json() {
	local out rc=0
	out=$(eroce doctor --json 2>&1) || rc=$?
	echo "exit $rc"
	[ "$rc" = 0 ] || [ "$rc" = 1 ] || { echo "$out"; return 1; }
	python3 -c 'import json, sys
checks = json.load(sys.stdin)
for c in checks:
    if c["verdict"] != "ok":
        print(c["verdict"], c["id"], c["summary"])
assert all(set(c) == {"id", "verdict", "summary", "evidence", "fix"} for c in checks)
assert [c["verdict"] for c in checks if c["id"] == "module"] == ["ok"]' <<<"$out"
}

# doctor_path: the packaged eroce doctor checks the path from ns1 to ns2,
# where it listens: exit 0, every path check ok, eroce2 counted the
# probes (path.udp4791 says "and its eroce")
doctor_path() {
	local out rc=0 pid lrc=0
	ns2 timeout 120 eroce doctor --listen --peer 198.18.0.1 --once \
		--timeout 90 >"$RDMA_TMP/doctor_listen.out" 2>&1 &
	pid=$!
	wait_for 30 tcp_listening "$NS2" 4792 || echo "no listener on TCP 4792"
	out=$(ns1 eroce doctor --json --rate 200 --seconds 1 198.18.0.2 2>&1) || rc=$?
	wait "$pid" || lrc=$?
	echo "exit $rc, listener exit $lrc: $(tr '\n' ' ' <"$RDMA_TMP/doctor_listen.out")"
	if [ "$rc" != 0 ] || [ "$lrc" != 0 ]; then
		echo "$out" | head -c 2000
		return 1
	fi
	python3 -c 'import json, sys
checks = [c for c in json.load(sys.stdin) if c["id"].startswith("path.")]
bad = [c for c in checks if c["verdict"] != "ok"]
for c in bad:
    print(c["verdict"], c["id"], c["summary"], c["evidence"][:3])
assert len(checks) == 11 and not bad, len(checks)
u = [c for c in checks if c["id"] == "path.udp4791"][0]
assert "and its eroce" in u["summary"], u' <<<"$out"
}

test_use() {
	require eroce_links_setup
	pair_gids
	ktap_check ibv_devices_through_package \
		eval 'ibv_devices | grep -Eq "^[[:space:]]+eroce1[[:space:]]"'
	ktap_srv_cli rc_pingpong 'out_has "iters in"' \
		ibv_rc_pingpong -d eroce2 -g "$G2" -n 100 -- \
		ibv_rc_pingpong -d eroce1 -g "$G1" -n 100 198.18.0.2
	ktap_check man_eroce_4 man_ok eroce.4
	ktap_check man_eroce_conf_5 man_ok eroce.conf.5
	ktap_check man_eroce_config_8 man_ok eroce-config.8
	ktap_check man_eroce_8 man_ok eroce.8
	ktap_check eroce_from_package \
		eval 'dpkg -S /usr/sbin/eroce | grep -q "^eroce-tools: /usr/sbin/eroce$" &&
			test -x /usr/sbin/eroce'
	ktap_check doctor_json_module_loaded doctor_json
	ktap_check eroce_path_from_package \
		eval 'dpkg -S /usr/libexec/eroce/eroce-path | grep -q "^eroce-tools: " &&
			test -x /usr/libexec/eroce/eroce-path'
	ktap_check doctor_path_to_listener doctor_path
	ktap_check man_pages_name_every_knob knobs_documented
	rdma link del eroce1
	rdma link del eroce2
	ip netns del "$NS1"
	ip netns del "$NS2"
}

# ---- persist ---------------------------------------------------------------

daemons_start() {
	busybox syslogd -n -O "$SYSLOG" >/tmp/eroce-syslogd.log 2>&1 &
	SYSLOGD_PID=$!
	/lib/systemd/systemd-udevd >/tmp/eroce-udevd.log 2>&1 &
	UDEVD_PID=$!
	wait_for 10 test -S /dev/log && wait_for 10 udevadm control --ping
}

daemons_stop() {
	[ -z "$UDEVD_PID" ] || { udevadm control --exit; wait "$UDEVD_PID"; } 2>/dev/null
	[ -z "$SYSLOGD_PID" ] || { kill "$SYSLOGD_PID"; wait "$SYSLOGD_PID"; } 2>/dev/null
	UDEVD_PID='' SYSLOGD_PID=''
}

write_conf() {
	cat >"$CONF" <<'EOF'
# written by selftests/eroce/packaging.sh
pveth0  peroce0  profile=lossy-edge default_tclass=104 dcqcn/g_shift=4
pvbad                                     # line 3: no device name
pveth2  peroce2  bogus=1                  # line 4: unknown knob
pveth1  peroce1  max_inflight_pkts=128 profile=lossless
pveth3  peroce3  max_inflight_pkts=999999 ecn=1   # a value the kernel refuses
EOF
}

# tuned DEV KNOB VALUE...: tuning/KNOB of DEV reads VALUE, for each pair
tuned() {
	local dev=$1 k v got
	shift
	while [ $# -ge 2 ]; do
		k=$1 v=$2
		shift 2
		got=$(cat "$IBSYS/$dev/tuning/$k" 2>&1)
		[ "$got" = "$v" ] || { echo "$dev $k: '$got', want '$v'"; return 1; }
	done
}

# on_netdev DEV NETDEV: DEV exists, bound to NETDEV
on_netdev() {
	rdma link show | grep -Eq "^link $1/1 .*netdev $2( |$)"
}

# netdev_add A B: a veth pair in the initial namespace, events settled
netdev_add() {
	ip link add "$1" type veth peer name "$2" && ip link set "$1" up &&
		ip link set "$2" up && udevadm settle -t 60
}

check_pveth0_pair() {
	local what=$1
	ktap_check "${what}_device" wait_for 30 on_netdev peroce0 pveth0
	ktap_check "${what}_tuning" wait_for 10 tuned peroce0 profile lossy-edge \
		default_tclass 104 dcqcn/g_shift 4 min_rto_us 1000 loss_recovery tlp
	# a knob a profile sets, after the profile: custom
	ktap_check "${what}_knob_after_profile" wait_for 10 tuned peroce1 \
		profile custom max_inflight_pkts 128 ecn 1 cc dcqcn
}

test_persist() {
	local out rc=0

	require daemons_start
	write_conf
	out=$(eroce-config check 2>&1) || rc=$?
	ktap_result check_reports_bad_lines "$([ $rc = 1 ] &&
		grep -q "$CONF:3: 'pvbad' has no device name" <<<"$out" &&
		grep -q "$CONF:4: unknown knob 'bogus'" <<<"$out" &&
		[ "$(grep -c "$CONF" <<<"$out")" = 2 ]; echo $?)" "rc $rc: $out"

	netdev_add pveth0 pveth1
	check_pveth0_pair netdev_add
	netdev_add pveth2 pveth9
	ktap_check bad_line_no_device eval '! rdma_dev_exists peroce2'
	ktap_check unnamed_netdev_no_device eval '! rdma link show | grep -q "netdev pveth9"'
	ip link add pveth3 type veth peer name pveth8 && udevadm settle -t 60
	ktap_check refused_value_device_created wait_for 30 on_netdev peroce3 pveth3
	ktap_check refused_value_other_knobs_applied wait_for 10 tuned peroce3 \
		ecn 1 max_inflight_pkts 64
	ktap_check syslog_bad_line wait_for 10 \
		grep -q "eroce-config: $CONF:4: unknown knob 'bogus'" "$SYSLOG"
	ktap_check syslog_refused_value wait_for 10 \
		grep -q "eroce-config: $CONF:6: peroce3: max_inflight_pkts=999999 refused" "$SYSLOG"

	ip link del pveth0
	ktap_check netdev_del_removes_devices eval \
		'wait_for 20 rdma_dev_gone peroce0 && wait_for 20 rdma_dev_gone peroce1'
	netdev_add pveth0 pveth1
	check_pveth0_pair netdev_readd
	ktap_diag "$(grep eroce-config "$SYSLOG" | tail -n 12 | cut -c1-200)"
	ip link del pveth0
	ip link del pveth2
	ip link del pveth3
	daemons_stop
}

# ---- remove ----------------------------------------------------------------

purge() {
	# shellcheck disable=SC2086  # one argument per package
	dpkg -L $PKGS >/tmp/eroce-pkg-files || return
	modprobe -r eroce || return
	# shellcheck disable=SC2086  # one argument per package
	timeout 600 dpkg --purge $PKGS || return
	# the tarball the test put there for postinst
	rm -rf "$TARBALL_DIR"
}

# files_gone: no file or link of the packages' lists is left (directories
# may stay when other packages own them)
files_gone() {
	local f left=0
	while IFS= read -r f; do
		if [ -e "$f" ] || [ -L "$f" ]; then
			# /lib is a link to usr/lib: -d follows links
			[ -d "$f" ] && continue
			echo "left: $f"
			left=1
		fi
	done </tmp/eroce-pkg-files
	[ -s /tmp/eroce-pkg-files ] && [ "$left" = 0 ]
}

nothing_of_dkms_left() {
	local left
	left=$(ls -d /lib/modules/*/updates/dkms/eroce.ko* /var/lib/dkms/eroce \
		/usr/src/eroce-* 2>/dev/null)
	[ -z "$left" ] || { echo "left: $left"; return 1; }
}

test_remove() {
	local start=$SECONDS
	ktap_check dpkg_purge purge
	ktap_diag "modprobe -r, dpkg --purge (prerm: dkms remove, depmod): $((SECONDS - start)) s"
	ktap_check package_files_gone files_gone
	ktap_check no_dkms_module_or_state nothing_of_dkms_left
	ktap_check config_files_gone \
		eval "[ ! -e $CONF ] && [ ! -e /etc/libibverbs.d/eroce.driver ]"
	ktap_check modprobe_finds_nothing eval '! modprobe -n eroce'
	ktap_check packages_not_installed not_installed
}

# no_packages WHY: without the packages nothing here can run: each
# subtest fails (make check builds them first; make vmtest does not)
no_packages() {
	ktap_diag "$1"
	ktap_bail "$1"
}

# stale: a source file of a package newer than the packages built from it
stale() {
	find "$EROCE_ROOT/drivers/infiniband/sw/eroce" "$EROCE_ROOT/userspace" \
		"$EROCE_ROOT/include" -type f -name '*.[ch]' ! -name '*.mod.c' \
		-newer "$(debs | head -n 1)" 2>/dev/null | head -n 1
}

ktap_plan $PLAN
trap daemons_stop EXIT
[ "$(debs | wc -l)" = 3 ] ||
	no_packages "no $DEBS/{${PKGS// /,}}_${VERSION}_*.deb: run make deb"
[ "$UPGRADE" = 0 ] || [ "$(debs "$PREV_DEBS" "$PREV_VERSION" | wc -l)" = 3 ] ||
	no_packages "no $PREV_DEBS/*_${PREV_VERSION}_*.deb to upgrade from: run make deb (EROCE_PKG_UPGRADE=0 installs without it)"
[ -z "$(stale)" ] ||
	no_packages "$(stale) is newer than $(debs | head -n 1): run make deb"
require not_installed
# an earlier script of this guest (run_vm.sh --group) pointed libibverbs
# at the tree's provider (provider_install) or wrote an eroce.conf: files
# no package owns, where the packages put conffiles, on which dpkg would
# stop to ask
for f in /etc/libibverbs.d/eroce.driver /etc/eroce.conf; do
	dpkg -S "$f" >/dev/null 2>&1 || rm -f "$f"
done
# the man-db trigger would rebuild the whole man index under TCG
rm -f /var/lib/man-db/auto-update
require mok_setup
require modprobe -a ib_core ib_uverbs udp_tunnel ip6_udp_tunnel veth
[ "$UPGRADE" = 0 ] || test_install_prev
test_install
[ "$RT" = 0 ] || test_rt
test_use
test_persist
test_remove
ktap_finish
