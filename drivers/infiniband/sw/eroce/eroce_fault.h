/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce_fault.h - fault injection points (eroce_fault.c).
 */
#ifndef EROCE_FAULT_H
#define EROCE_FAULT_H

#include <linux/delay.h>
#include <linux/types.h>

/* how long kick_delay holds a kick */
#define EROCE_FAULT_DELAY_MS	10

/* the points, each with its attribute under /sys/kernel/debug/eroce/ */
enum eroce_fault {
	EROCE_FAULT_PKT_ALLOC,		/* a packet's buffer */
	EROCE_FAULT_QP_STATE,		/* a QP's transport state */
	EROCE_FAULT_MR_ALLOC,		/* an MR of any kind */
	EROCE_FAULT_RX_NETDEV,		/* a received packet's netdev, gone */
	EROCE_FAULT_KICK_DELAY,		/* a kick, held between check and queue */
	EROCE_FAULT_MAX
};

#if IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS)
void eroce_fault_init(void);
void eroce_fault_exit(void);
bool eroce_should_fail(enum eroce_fault point);
#else
static inline void eroce_fault_init(void) { }
static inline void eroce_fault_exit(void) { }
static inline bool eroce_should_fail(enum eroce_fault point)
{
	return false;
}
#endif

/* hold the caller for EROCE_FAULT_DELAY_MS when @point fires; any context */
static inline void eroce_fault_delay(enum eroce_fault point)
{
	if (eroce_should_fail(point))
		mdelay(EROCE_FAULT_DELAY_MS);
}

#endif /* EROCE_FAULT_H */
