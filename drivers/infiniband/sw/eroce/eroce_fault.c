// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * eroce_fault.c - fault injection points, for kernels built with
 * CONFIG_FAULT_INJECTION_DEBUG_FS (the debug lane's; Debian's kernel has
 * none and this file is not built there).
 *
 * Each point of enum eroce_fault has a fault attribute of the kernel's
 * fault injection framework in /sys/kernel/debug/eroce/fail_POINT/
 * (probability, interval, times, space, verbose, task-filter; see the
 * kernel's Documentation/fault-injection/fault-injection.rst).  Where a
 * point fails, the code takes the same path as when the allocation or
 * lookup it guards fails, unwinding included; kick_delay instead holds a
 * kick for EROCE_FAULT_DELAY_MS between its check of the engine's death
 * and the queueing of the work item, the window a teardown must close.  These are the points
 * inside a function, which the kernel's fail_function cannot reach: a
 * failure counted where it happens, or one after a count was taken or
 * memory allocated that must be given back.  Functions that may fail as
 * a whole are marked ALLOW_ERROR_INJECTION where they are defined
 * (eroce_ring_init(), eroce_ring_publish(), eroce_qp_engine_init(),
 * eroce_route4(), eroce_route6()) and fail through fail_function.
 * Documentation/testing.rst ("Fault injection") lists both and what the
 * lane checks.
 *
 * Context: eroce_should_fail() in any context; init and exit in module
 * init and exit.  Locks: none of its own (the attributes are atomics).
 */
#include <linux/debugfs.h>
#include <linux/fault-inject.h>

#include "eroce_fault.h"

static DECLARE_FAULT_ATTR(eroce_fail_pkt_alloc);
static DECLARE_FAULT_ATTR(eroce_fail_qp_state);
static DECLARE_FAULT_ATTR(eroce_fail_mr_alloc);
static DECLARE_FAULT_ATTR(eroce_fail_rx_netdev);
static DECLARE_FAULT_ATTR(eroce_fail_kick_delay);

static const struct {
	const char *name;
	struct fault_attr *attr;
} eroce_faults[EROCE_FAULT_MAX] = {
	[EROCE_FAULT_PKT_ALLOC] = { "fail_pkt_alloc", &eroce_fail_pkt_alloc },
	[EROCE_FAULT_QP_STATE] = { "fail_qp_state", &eroce_fail_qp_state },
	[EROCE_FAULT_MR_ALLOC] = { "fail_mr_alloc", &eroce_fail_mr_alloc },
	[EROCE_FAULT_RX_NETDEV] = { "fail_rx_netdev", &eroce_fail_rx_netdev },
	[EROCE_FAULT_KICK_DELAY] = { "fail_kick_delay", &eroce_fail_kick_delay },
};

static struct dentry *eroce_fault_dir;

/* the attributes, off (probability 0), in /sys/kernel/debug/eroce/ */
void eroce_fault_init(void)
{
	int i;

	eroce_fault_dir = debugfs_create_dir("eroce", NULL);
	/* without debugfs a point stays off: nothing to undo */
	for (i = 0; i < EROCE_FAULT_MAX; i++)
		fault_create_debugfs_attr(eroce_faults[i].name,
					  eroce_fault_dir, eroce_faults[i].attr);
}

void eroce_fault_exit(void)
{
	debugfs_remove_recursive(eroce_fault_dir);
}

/* should @point fail this time?  Context: any. */
bool eroce_should_fail(enum eroce_fault point)
{
	return should_fail(eroce_faults[point].attr, 1);
}
