/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * eroce: per-device tunables, /sys/class/infiniband/<dev>/tuning/.
 *
 * Every field is read by the engines with READ_ONCE() and written under
 * eroce_tuning.lock by the sysfs store handlers, each value validated
 * first: a bad value returns -EINVAL and changes nothing.
 */
#ifndef EROCE_TUNING_H
#define EROCE_TUNING_H

#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/types.h>

struct eroce_dev;

enum eroce_profile {
	EROCE_PROFILE_DEFAULT,		/* IBTA behaviour, any peer */
	EROCE_PROFILE_LOSSY_EDGE,	/* switches without PFC, some loss */
	EROCE_PROFILE_LOSSLESS,		/* PFC networks */
	EROCE_PROFILE_CUSTOM,		/* a knob was changed by hand */
};

struct eroce_tuning {
	struct mutex lock;		/* serialises the stores */
	struct kobject *kobj;		/* the tuning/ directory */

	u32 min_rto_us;			/* floor of the retransmit timeout */
	u32 max_rto_us;			/* ceiling, 0: none */
	u32 rto_backoff;		/* 1: constant, 2: doubling */
	u32 max_inflight_pkts;		/* unacknowledged packets per QP */
	u32 default_tclass;		/* traffic class when the AV has 0 */
	bool ecn;			/* mark packets ECN capable, ECT(0) */
	enum eroce_profile profile;
};

void eroce_tuning_init(struct eroce_tuning *t);
int eroce_tuning_sysfs_add(struct eroce_dev *edev);
void eroce_tuning_sysfs_del(struct eroce_dev *edev);

#endif /* EROCE_TUNING_H */
