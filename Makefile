# SPDX-License-Identifier: GPL-2.0
#
# eroce top-level build.  `make` builds the kernel module and the rdma-core
# provider; `make check` is the whole test suite (what CI runs); `make demo`
# boots a guest and shows two eroce devices talking.

KVER ?= $(shell RT=$(RT) $(CURDIR)/scripts/kver.sh)
KDIR ?= /lib/modules/$(KVER)/build
DESTDIR ?=
SRCDIR := $(CURDIR)
MODDIR := drivers/infiniband/sw/eroce
# the one version of the tree: module (MODULE_VERSION), DKMS, packages
VERSION := $(shell cat $(SRCDIR)/VERSION)

# packages that building, testing and the demo need (Debian 12)
DEB_PKGS := build-essential gcc make kmod cpio bc flex bison xz-utils \
	linux-image-amd64 linux-headers-amd64 linux-headers-rt-amd64 \
	rdma-core ibverbs-utils ibverbs-providers libibverbs-dev librdmacm-dev \
	perftest rdmacm-utils iproute2 iperf3 ethtool nvme-cli fio ucx-utils libucx-dev \
	libfabric-bin openmpi-bin libopenmpi-dev \
	nfs-kernel-server open-iscsi \
	qemu-system-x86 busybox-static tshark python3 python3-scapy nftables \
	sparse strace gnuplot-nox clang-14 libclang-rt-14-dev \
	dkms dh-dkms debhelper dpkg-dev fakeroot lintian man-db openssl udev
# RT=1 (make, make check, make bench): build for the PREEMPT_RT kernel and
# boot the guests on it (scripts/kver.sh)
ifeq ($(RT),1)
DEB_PKGS += linux-image-rt-amd64
endif

.PHONY: all modules provider tools install deps check check-packaging unit vmtest lab demo bench bench-lab bench-local bench-loss bench-topo bench-consumers bench-consumers-lab soak lint clean
.PHONY: dkms-src dkms-install dkms-remove deb

all: modules provider tools

modules:
	$(MAKE) -C $(KDIR) M=$(SRCDIR) W=1 modules

provider:
	$(MAKE) -C userspace

# test programs run inside the guest (selftests/tools, selftests/kmod)
tools: provider
	$(MAKE) -C selftests/tools
	$(MAKE) -C selftests/bench
	$(MAKE) -C $(KDIR) M=$(SRCDIR)/selftests/kmod W=1 modules

install: all
	$(MAKE) -C $(KDIR) M=$(SRCDIR) INSTALL_MOD_PATH=$(DESTDIR) \
		INSTALL_MOD_DIR=updates modules_install
	$(MAKE) -C userspace install DESTDIR=$(DESTDIR)
	install -D -m 0755 config/eroce $(DESTDIR)/usr/sbin/eroce
	install -D -m 0755 config/eroce-config $(DESTDIR)/usr/sbin/eroce-config
	install -D -m 0755 config/eroce-path $(DESTDIR)/usr/libexec/eroce/eroce-path
	for m in man/*.[0-9]; do \
		install -D -m 0644 $$m $(DESTDIR)/usr/share/man/man$${m##*.}/$${m##*/} || exit; \
	done
	if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); \
	else depmod -a -b $(DESTDIR) $(KVER) || true; fi

# DKMS (dkms.conf): the source set DKMS builds eroce.ko from, staged in
# $(DESTDIR)/usr/src/eroce-$(VERSION) by dkms-src (debian/rules uses it too)
DKMS_SRC := VERSION Kbuild $(MODDIR)/Kbuild include/uapi/rdma/eroce-abi.h \
	$(sort $(filter-out %.mod.c,$(wildcard $(MODDIR)/*.[ch])))
DKMS_DIR = $(DESTDIR)/usr/src/eroce-$(VERSION)

dkms-src:
	rm -rf $(DKMS_DIR)
	for f in $(DKMS_SRC); do install -D -m 0644 $$f $(DKMS_DIR)/$$f || exit; done
	sed 's/#MODULE_VERSION#/$(VERSION)/' dkms.conf >$(DKMS_DIR)/dkms.conf

# from the tree, for the kernel KVER (and every later one: AUTOINSTALL)
dkms-install: dkms-remove
	$(MAKE) dkms-src DESTDIR=
	dkms add eroce/$(VERSION)
	dkms build eroce/$(VERSION) -k $(KVER)
	dkms install eroce/$(VERSION) -k $(KVER)

dkms-remove:
	if dkms status eroce/$(VERSION) | grep -q .; then \
		dkms remove eroce/$(VERSION) --all; fi
	rm -rf /usr/src/eroce-$(VERSION)

# Debian packages in out/deb/ (scripts/build-deb.sh): eroce-dkms,
# eroce-tools, ibverbs-provider-eroce
deb:
	scripts/build-deb.sh

# apt_install PACKAGES, WHAT: install those of PACKAGES that are missing
define apt_install
	@missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends $$missing; \
	else echo "all $(2) packages are installed"; fi
endef

deps:
	$(call apt_install,$(DEB_PKGS),build and test)

# the debug-kernel lane (Documentation/testing.rst "Debug kernel"): a
# KASAN/lockdep/kmemleak/UBSAN kernel built from linux-source-6.1 once,
# cached in ${EROCE_CACHE:-/var/cache/eroce}; not part of check or CI
DEB_PKGS_DEBUG := linux-source-6.1 build-essential libelf-dev libssl-dev \
	bc flex bison rsync xz-utils kmod cpio

.PHONY: deps-debug check-debug

deps-debug:
	$(call apt_install,$(DEB_PKGS_DEBUG),debug-kernel)

check-debug: deps deps-debug
	scripts/check-debug.sh

unit:
	$(MAKE) -C tests/unit run

vmtest: all
	selftests/run_vm.sh selftests/eroce/*.sh

# the packages as make check tests them, and the upgrade from a previous
# release, which make check leaves out for time
check-packaging: deps all
	scripts/build-deb.sh
	selftests/run_vm.sh selftests/eroce/packaging.sh

# the two-host tests alone: guests joined through a bridge in a namespace
# of the run (Documentation/testing.rst "Two-host lab"); make check runs
# them too, as its lab stage
lab: deps all
	selftests/run_lab.sh selftests/lab/*.sh

check: deps
	scripts/check.sh

demo: deps all
	selftests/run_vm.sh --show selftests/demo.sh

# eroce vs rdma_rxe vs TCP (Documentation/bench.rst): first between two
# guests of the lab (bench-lab), then in one guest (bench-local);
# BENCH_QUICK=1 for a subset of each (~10 and ~3 min)
bench: deps all
	$(MAKE) -C selftests/bench
	selftests/bench/bench.sh

bench-lab: deps all
	$(MAKE) -C selftests/bench
	BENCH_SECTIONS=lab selftests/bench/bench.sh

bench-local: deps all
	$(MAKE) -C selftests/bench
	BENCH_SECTIONS=local selftests/bench/bench.sh

# throughput under loss and reordering per loss_recovery mode, vs rdma_rxe
bench-loss: deps all
	selftests/run_vm.sh --show selftests/bench/loss_guest.sh

# perftest between eroce and rdma_rxe in every combination, one guest
bench-topo: deps all
	selftests/run_vm.sh --show selftests/bench/topo_guest.sh

# NVMe-oF and NFS over RDMA on eroce and on rdma_rxe, one guest
bench-consumers: deps all
	selftests/run_vm.sh --show selftests/bench/consumers_guest.sh

# NVMe-oF, NFS and iSCSI between two guests of the lab (target, initiator)
# over eroce, rdma_rxe and TCP (Documentation/bench.rst)
bench-consumers-lab: deps all
	selftests/bench/consumers_lab.sh

# scale.sh at full size (10 waves of 1,000 rdma_cm connections, 100,000
# MR registrations), then SOAK_MINUTES (default 30) of mixed traffic
# under changing impairments, every byte checked, objects, memory and
# error counters flat, then every teardown event of teardown_cycles.sh
# and teardown_netdev.sh SOAK_TEARDOWN_CYCLES times (default 10) under
# traffic (Documentation/testing.rst "Soak"); not part of check or CI.
# The timeout is per test: the longer of the soak's and the teardowns'.
SOAK_MINUTES ?= 30
SOAK_TEARDOWN_CYCLES ?= 10
SOAK_TIMEOUT = $$(( $(SOAK_MINUTES) * 60 + 900 > $(SOAK_TEARDOWN_CYCLES) * 300 ? \
	$(SOAK_MINUTES) * 60 + 900 : $(SOAK_TEARDOWN_CYCLES) * 300 ))
soak: deps all
	selftests/run_vm.sh --show --timeout $(SOAK_TIMEOUT) \
		--env SCALE_WAVES=10 --env SCALE_CONNS=1000 \
		--env SCALE_MRS=100000 --env EROCE_SOAK_MINUTES=$(SOAK_MINUTES) \
		--env TEARDOWN_CYCLES=$(SOAK_TEARDOWN_CYCLES) \
		selftests/eroce/scale.sh selftests/soak/soak.sh \
		selftests/eroce/teardown_cycles.sh \
		selftests/eroce/teardown_netdev.sh

# style checks need the kernel source (checkpatch.pl)
lint:
	scripts/lint.sh

clean:
	$(MAKE) -C $(KDIR) M=$(SRCDIR) clean
	$(MAKE) -C userspace clean
	$(MAKE) -C tests/unit clean
	$(MAKE) -C selftests/tools clean
	$(MAKE) -C $(KDIR) M=$(SRCDIR)/selftests/kmod clean
	$(MAKE) -C selftests/bench clean
